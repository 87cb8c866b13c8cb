/* lower.c - the `lower` pass: TensorFlow 2 functional ops and function
 * calls become native v1 control flow with the bodies inlined (lower.h).
 * It runs before every other pass, whatever pipeline was asked for (even
 * "none"), as soon as a graph has functional ops or calls: nothing else can
 * run such a graph (manager.c). When nothing refers to the function library
 * any more it is dropped, so the result is a plain v1 GraphDef. */
#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "lower.h"

/* ---- helpers ---- */

static dfx_code grow_depth(dfx_lower_ctx *lc, int id) {
  if (id < lc->cap_depth) return DFX_OK;
  int cap = lc->cap_depth ? lc->cap_depth : 64;
  while (cap <= id) cap *= 2;
  int *d = dfx__realloc(lc->depth, sizeof *d * (size_t)cap);
  if (!d) return dfx__status_set(lc->st, DFX_ENOMEM, "out of memory");
  memset(d + lc->cap_depth, 0, sizeof *d * (size_t)(cap - lc->cap_depth));
  lc->depth = d;
  lc->cap_depth = cap;
  return DFX_OK;
}

int dfx__lower_add(dfx_lower_ctx *lc, const char *base, const char *op, int depth) {
  char *name = dfx__graph_unique_name(lc->g, base);
  if (!name) {
    dfx__status_set(lc->st, DFX_ENOMEM, "out of memory");
    return -1;
  }
  int id = dfx__graph_add_node(lc->g, name, op, lc->st);
  dfx__free(name);
  if (id < 0) return -1;
  if (grow_depth(lc, id) != DFX_OK) return -1;
  lc->depth[id] = depth;
  lc->counts->added++;
  return id;
}

static dfx_code set_attr(dfx_lower_ctx *lc, int id, dfx_attr *a) {
  return dfx__graph_set_attr(lc->g, id, a, lc->st);
}

dfx_code dfx__lower_attr_type(dfx_lower_ctx *lc, int id, const char *name, dfx_dtype t) {
  dfx_attr a = {.name = (char *)name, .kind = DFX_ATTR_TYPE, .v.type = t};
  return set_attr(lc, id, &a);
}

dfx_code dfx__lower_attr_int(dfx_lower_ctx *lc, int id, const char *name, int64_t v) {
  dfx_attr a = {.name = (char *)name, .kind = DFX_ATTR_I, .v.i = v};
  return set_attr(lc, id, &a);
}

dfx_code dfx__lower_attr_bool(dfx_lower_ctx *lc, int id, const char *name, bool v) {
  dfx_attr a = {.name = (char *)name, .kind = DFX_ATTR_B, .v.b = v};
  return set_attr(lc, id, &a);
}

dfx_code dfx__lower_attr_str(dfx_lower_ctx *lc, int id, const char *name, const char *v) {
  dfx_attr a = {.name = (char *)name, .kind = DFX_ATTR_S, .v.s = {(char *)v, strlen(v)}};
  return set_attr(lc, id, &a);
}

dfx_code dfx__lower_attr_types(dfx_lower_ctx *lc, int id, const char *name, const dfx_dtype *t, int n) {
  dfx_attr a = {.name = (char *)name, .kind = DFX_ATTR_LIST};
  a.v.list.kind = n ? DFX_ATTR_TYPE : DFX_ATTR_NONE;
  a.v.list.n = n;
  a.v.list.v.type = (dfx_dtype *)t;
  return set_attr(lc, id, &a);
}

dfx_code dfx__lower_types(dfx_lower_ctx *lc, int id, const char *name, dfx_dtype **out, int *n) {
  *out = NULL;
  *n = 0;
  const dfx_node *nd = &lc->g->nodes[id];
  const dfx_attr_list *l = dfx__attr_list(nd, name);
  if (!l) return dfx__status_set(lc->st, DFX_EINVAL, "Node '%s' (%s): has no list(type) attr '%s'", nd->name, nd->op, name);
  if (l->n == 0) return DFX_OK;
  if (l->kind != DFX_ATTR_TYPE)
    return dfx__status_set(lc->st, DFX_EINVAL, "Node '%s' (%s): attr '%s' is not a list of types", nd->name, nd->op, name);
  if (!(*out = dfx__malloc(sizeof **out * (size_t)l->n))) return dfx__status_set(lc->st, DFX_ENOMEM, "out of memory");
  memcpy(*out, l->v.type, sizeof **out * (size_t)l->n);
  *n = l->n;
  return DFX_OK;
}

dfx_code dfx__lower_func(dfx_lower_ctx *lc, int id, const char *name, const dfx_function **out) {
  const dfx_node *nd = &lc->g->nodes[id];
  const dfx_attr *a = dfx__node_attr(nd, name);
  if (!a || a->kind != DFX_ATTR_FUNC)
    return dfx__status_set(lc->st, DFX_EINVAL, "Node '%s' (%s): has no function attr '%s'", nd->name, nd->op, name);
  if (!(*out = dfx__fn_lib_find(lc->lib, a->v.func)))
    return dfx__status_set(lc->st, DFX_EINVAL, "Node '%s' (%s): %s '%s' is not in the graph's function library",
                           nd->name, nd->op, name, a->v.func);
  return DFX_OK;
}

dfx_code dfx__lower_replace(dfx_lower_ctx *lc, int id, const dfx_graph_port *outs, const dfx_dtype *types, int n_out,
                            const int *ctrl, int n_ctrl) {
  dfx_graph *g = lc->g;
  for (int k = 0; k < n_out; k++) dfx__graph_replace_uses(g, id, k, outs[k].node, outs[k].slot);
  while (g->nodes[id].n_in + g->nodes[id].n_ctrl > 0) dfx__graph_remove_input(g, id, 0);
  while (g->nodes[id].n_attrs > 0) {
    /* Underscore attrs (_class, _output_shapes...) describe the old op. */
    char *name = dfx__strdup(g->nodes[id].attrs[0].name);
    if (!name) return dfx__status_set(lc->st, DFX_ENOMEM, "out of memory");
    dfx__graph_remove_attr(g, id, name);
    dfx__free(name);
  }
  dfx_code c = dfx__graph_set_op(g, id, n_out ? "IdentityN" : "NoOp", lc->st);
  if (c == DFX_OK && n_out) c = dfx__lower_attr_types(lc, id, "T", types, n_out);
  for (int k = 0; c == DFX_OK && k < n_out; k++) c = dfx__graph_add_input(g, id, outs[k].node, outs[k].slot, lc->st);
  for (int k = 0; c == DFX_OK && k < n_ctrl; k++) c = dfx__graph_add_input(g, id, ctrl[k], -1, lc->st);
  lc->counts->rewritten++;
  return c;
}

/* ---- the pass ---- */

typedef enum { KIND_NONE, KIND_CALL, KIND_COND, KIND_WHILE } kind;

static kind classify(const dfx_lower_ctx *lc, const char *op, const dfx_function **fn) {
  *fn = NULL;
  if (!strcmp(op, "If") || !strcmp(op, "StatelessIf") || !strcmp(op, "Case") || !strcmp(op, "StatelessCase"))
    return KIND_COND;
  if (!strcmp(op, "While") || !strcmp(op, "StatelessWhile")) return KIND_WHILE;
  if (!strcmp(op, "PartitionedCall") || !strcmp(op, "StatefulPartitionedCall")) return KIND_CALL;
  if ((*fn = dfx__fn_lib_find(lc->lib, op))) return KIND_CALL;
  return KIND_NONE;
}

bool dfx__lower_op(const char *op) {
  return !strcmp(op, "If") || !strcmp(op, "StatelessIf") || !strcmp(op, "Case") || !strcmp(op, "StatelessCase") ||
         !strcmp(op, "While") || !strcmp(op, "StatelessWhile") || !strcmp(op, "PartitionedCall") ||
         !strcmp(op, "StatefulPartitionedCall");
}

static bool has_functional(const dfx_graph *g) {
  for (int i = 0; i < g->n_nodes; i++) {
    const char *op = g->nodes[i].op;
    if (g->nodes[i].removed) continue;
    if (dfx__lower_op(op)) return true;
    if (!g->nodes[i].def && dfx__graph_has_functions(g)) return true; /* maybe a direct call */
  }
  return false;
}

bool dfx__lower_needed(const dfx_graph *g) { return has_functional(g); }

/* Whether any node still names a function (a func attr): then the library stays. */
static bool library_used(const dfx_graph *g) {
  for (int i = 0; i < g->n_nodes; i++) {
    const dfx_node *n = &g->nodes[i];
    if (n->removed) continue;
    for (int k = 0; k < n->n_attrs; k++) {
      const dfx_attr *a = &n->attrs[k];
      if (a->kind == DFX_ATTR_FUNC || (a->kind == DFX_ATTR_LIST && a->v.list.kind == DFX_ATTR_FUNC)) return true;
    }
  }
  return false;
}

static dfx_code lower_run(dfx_pass_ctx *ctx) {
  dfx_graph *g = ctx->g;
  if (!has_functional(g)) return DFX_OK;
  /* The helpers report through lc.st and read the code back from it, so
   * it is never NULL. */
  dfx_status local;
  dfx__status_clear(&local);
  dfx_lower_ctx lc = {.g = g, .counts = &ctx->counts, .st = ctx->st ? ctx->st : &local};
  dfx_fn_lib *lib = NULL;
  dfx_code c = dfx__fn_lib_from_graph(g, &lib, lc.st);
  if (c != DFX_OK) return c;
  lc.lib = lib;
  if ((c = grow_depth(&lc, g->n_nodes)) != DFX_OK) goto done;
  /* New nodes get higher ids, so the sweep reaches what inlining adds. */
  for (int i = 0; i < g->n_nodes; i++) {
    if (g->nodes[i].removed) continue;
    const dfx_function *fn;
    kind k = classify(&lc, g->nodes[i].op, &fn);
    if (k == KIND_NONE) continue;
    if (lc.depth[i] >= DFX_LOWER_MAX_DEPTH) {
      c = dfx__status_set(lc.st, DFX_EINVAL,
                          "Node '%s' (%s): function calls nest more than %d deep (a function that calls itself?)",
                          g->nodes[i].name, g->nodes[i].op, DFX_LOWER_MAX_DEPTH);
      goto done;
    }
    if (k == KIND_CALL) c = dfx__lower_call(&lc, i, fn);
    else if (k == KIND_COND) c = dfx__lower_cond(&lc, i);
    else c = dfx__lower_while(&lc, i);
    if (c != DFX_OK) goto done;
  }
  if (!library_used(g)) dfx__graph_drop_library(g);
done:
  dfx__free(lc.depth);
  dfx__fn_lib_free(lib);
  return c;
}

const dfx_pass dfx__pass_lower = {
    "lower",
    "inline function calls and lower If/Case/While to Switch/Merge/Enter/Exit frames (always runs first)",
    lower_run,
    true,
};
