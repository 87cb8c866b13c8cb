/* builder_loop.c - control-flow contexts of the graph builder and the
 * tf.while_loop / tf.cond lowerings (tf-semantics §2.5-2.6).
 * Invariant: a node's context is where its outputs live, so an Enter
 * belongs to its loop and an Exit to the loop's parent. A data input is
 * legal when its producer's context encloses the consumer's; entering each
 * enclosing loop (constant Enter) or cond branch (Switch on pred_id) on the
 * way is done here, once per tensor and context. */
#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "builder.h"

#define OOM(b, st) DFX_BUILDER_OOM(b, st)

/* ---- contexts and scopes ---- */

/* Adds a context; returns its index or -1 (out of memory, recorded). */
static int ctx_new(dfx_builder *b, int kind, int parent, const char *scope, dfx_status *st) {
  if (b->n_ctx == b->cap_ctx) {
    int cap = b->cap_ctx * 2;
    dfx_bctx *nc = dfx__realloc(b->ctxs, (size_t)cap * sizeof *nc);
    if (!nc) {
      OOM(b, st);
      return -1;
    }
    b->ctxs = nc;
    b->cap_ctx = cap;
  }
  b->ctxs[b->n_ctx] = (dfx_bctx){.kind = kind, .parent = parent, .scope = scope};
  return b->n_ctx++;
}

int dfx__builder_frame_of(const dfx_builder *b, int ctx) {
  while (ctx > 0 && b->ctxs[ctx].kind != DFX_BCTX_LOOP) ctx = b->ctxs[ctx].parent;
  return ctx;
}

static dfx_code scope_push(dfx_builder *b, const char *part, bool helper, dfx_status *st) {
  size_t add = strlen(part) + 1;
  if (b->scope_len + add + 1 > b->scope_cap) {
    size_t cap = (b->scope_len + add + 1) * 2;
    char *ns = dfx__realloc(b->scope, cap);
    if (!ns) return OOM(b, st);
    b->scope = ns;
    b->scope_cap = cap;
  }
  if (b->n_scopes == b->cap_scopes) {
    int cap = b->cap_scopes ? b->cap_scopes * 2 : 8;
    dfx_bscope *nsc = dfx__realloc(b->scopes, (size_t)cap * sizeof *nsc);
    if (!nsc) return OOM(b, st);
    b->scopes = nsc;
    b->cap_scopes = cap;
  }
  b->scopes[b->n_scopes++] = (dfx_bscope){b->scope_len, helper};
  memcpy(b->scope + b->scope_len, part, add - 1);
  b->scope_len += add;
  b->scope[b->scope_len - 1] = '/';
  b->scope[b->scope_len] = 0;
  return DFX_OK;
}

/* A helper's scope is a full name: the scope is replaced, not extended. */
static dfx_code scope_enter(dfx_builder *b, const char *full, dfx_status *st) {
  size_t keep = b->scope_len;
  b->scope_len = 0;
  dfx_code c = scope_push(b, full, true, st);
  if (c != DFX_OK) {
    b->scope_len = keep;
    return c;
  }
  b->scopes[b->n_scopes - 1].prev_len = keep;
  return DFX_OK;
}

/* Restores the scope string of before the helper: it was a prefix of the
 * helper's full name, so truncating the new one brings it back. */
static void scope_leave(dfx_builder *b) {
  b->scope_len = b->scopes[--b->n_scopes].prev_len;
  b->scope[b->scope_len] = 0;
}

dfx_code dfx_builder_scope_push(dfx_builder *b, const char *name, dfx_status *st) {
  dfx__status_clear(st);
  if (!b || !name || !*name || strpbrk(name, "/:^"))
    return dfx__builder_fail(b, st, DFX_EINVAL, "dfx_builder_scope_push: invalid scope name '%s'", name ? name : "(null)");
  return scope_push(b, name, false, st);
}

dfx_code dfx_builder_scope_pop(dfx_builder *b, dfx_status *st) {
  dfx__status_clear(st);
  if (!b || !b->n_scopes || b->scopes[b->n_scopes - 1].helper)
    return dfx__builder_fail(b, st, DFX_EINVAL, "dfx_builder_scope_pop: no scope opened by dfx_builder_scope_push");
  scope_leave(b);
  return DFX_OK;
}

const char *dfx_builder_scope(const dfx_builder *b) { return b ? b->scope : ""; }

const char *dfx_builder_pivot(const dfx_builder *b) { return b ? b->ctxs[b->cur].pivot : NULL; }

/* ---- moving tensors into contexts ---- */

static bool encloses(const dfx_builder *b, int outer, int inner) {
  for (int c = inner; c >= 0; c = b->ctxs[c].parent)
    if (c == outer) return true;
  return false;
}

const char *dfx__builder_ctx_name(const dfx_builder *b, int ctx, char *buf, size_t n) {
  const dfx_bctx *c = &b->ctxs[ctx];
  int sl = (int)strlen(c->scope);
  if (c->kind == DFX_BCTX_LOOP) snprintf(buf, n, "loop '%.*s'", sl ? sl - 1 : 0, c->scope);
  else if (c->kind == DFX_BCTX_COND)
    snprintf(buf, n, "the %s branch of cond '%.*s'", c->branch ? "true" : "false", sl ? sl - 1 : 0, c->scope);
  else snprintf(buf, n, "the root context");
  return buf;
}

static dfx_code cache_add(dfx_builder *b, dfx_bctx *c, const char *from, const char *to, dfx_status *st) {
  if (c->n_imports == c->cap_imports) {
    int cap = c->cap_imports ? c->cap_imports * 2 : 8;
    dfx_bimport *ni = dfx__arena_alloc(&b->arena, (size_t)cap * sizeof *ni);
    if (!ni) return OOM(b, st);
    if (c->n_imports) memcpy(ni, c->imports, (size_t)c->n_imports * sizeof *ni);
    c->imports = ni;
    c->cap_imports = cap;
  }
  c->imports[c->n_imports++] = (dfx_bimport){from, to};
  return DFX_OK;
}

dfx_code dfx__builder_import(dfx_builder *b, int ctx, const char *tensor, const char **out, dfx_status *st) {
  *out = tensor;
  int slot, p = dfx__builder_producer(b, tensor, &slot);
  if (p < 0 || slot < 0) return DFX_OK; /* not made yet: checked at finalisation */
  int pc = b->nodes[p]->ctx;
  if (pc == ctx) return DFX_OK;
  if (!encloses(b, pc, ctx)) {
    char d1[160], d2[160];
    return dfx__builder_fail(b, st, DFX_EINVAL, "builder: tensor '%s' lives in %s and cannot be used in %s%s", tensor,
                             dfx__builder_ctx_name(b, pc, d1, sizeof d1), dfx__builder_ctx_name(b, ctx, d2, sizeof d2),
                             b->ctxs[pc].kind == DFX_BCTX_LOOP ? " (use the loop's Exit outputs)" : "");
  }
  const char *pname = dfx_bnode_name(b->nodes[p]);
  const char *key = slot ? dfx__arena_printf(&b->arena, "%s:%d", pname, slot) : pname;
  if (!key) return OOM(b, st);
  for (int i = 0; i < b->ctxs[ctx].n_imports; i++)
    if (strcmp(b->ctxs[ctx].imports[i].from, key) == 0) {
      *out = b->ctxs[ctx].imports[i].to;
      return DFX_OK;
    }
  const char *outer;
  dfx_code c = dfx__builder_import(b, b->ctxs[ctx].parent, key, &outer, st);
  if (c != DFX_OK) return c;
  dfx_bctx *cx = &b->ctxs[ctx];
  dfx_bnode *n;
  const char *to;
  if (cx->kind == DFX_BCTX_LOOP) {
    /* A loop invariant: constant Enter, visible in every iteration. */
    char base[1024];
    snprintf(base, sizeof base, "%sEnter", cx->scope);
    const char *name = dfx__builder_unique(b, base, st);
    if (!name) return OOM(b, st);
    if ((c = dfx__builder_raw(b, "Enter", name, &outer, 1, ctx, &n, st)) != DFX_OK) return c;
    if (dfx_bnode_attr_string(n, "frame_name", cx->frame) != DFX_OK ||
        dfx_bnode_attr_bool(n, "is_constant", 1) != DFX_OK ||
        dfx_bnode_attr_int(n, "parallel_iterations", cx->parallel_iterations) != DFX_OK)
      return dfx__status_copy(st, &b->err);
    to = name;
  } else {
    /* A value entering a cond branch: Switch on pred_id, this branch's port. */
    char base[1024];
    snprintf(base, sizeof base, "%sSwitch", cx->scope);
    const char *name = dfx__builder_unique(b, base, st);
    if (!name) return OOM(b, st);
    const char *ins[2] = {outer, cx->pred_id};
    if ((c = dfx__builder_raw(b, "Switch", name, ins, 2, ctx, &n, st)) != DFX_OK) return c;
    to = cx->branch ? dfx_bnode_output(n, 1) : name;
    if (!to) return OOM(b, st);
  }
  if ((c = cache_add(b, &b->ctxs[ctx], key, to, st)) != DFX_OK) return c;
  *out = to;
  return DFX_OK;
}

/* ---- shared helper plumbing ---- */

/* A node `<scope><op>` (made unique) with the given inputs, in ctx. */
static dfx_code helper_node(dfx_builder *b, const char *scope, const char *op, const char *const *ins, int n, int ctx,
                            dfx_bnode **out, dfx_status *st) {
  char base[1024];
  snprintf(base, sizeof base, "%s%s", scope, op);
  const char *name = dfx__builder_unique(b, base, st);
  if (!name) return OOM(b, st);
  return dfx__builder_raw(b, op, name, ins, n, ctx, out, st);
}

/* Opens the helper's scope: `name` (default `def`) under the current scope,
 * made unique against node names and earlier helpers. */
static const char *helper_scope(dfx_builder *b, const char *name, const char *def, dfx_status *st) {
  if (name && (!*name || strpbrk(name, "/:^"))) {
    dfx__builder_fail(b, st, DFX_EINVAL, "builder: invalid helper name '%s'", name);
    return NULL;
  }
  char base[1024];
  snprintf(base, sizeof base, "%s%s", b->scope, name ? name : def);
  const char *full = dfx__builder_unique(b, base, st);
  if (!full) return NULL;
  const char *scope = dfx__arena_printf(&b->arena, "%s/", full);
  if (!scope) {
    OOM(b, st);
    return NULL;
  }
  return scope_enter(b, full, st) == DFX_OK ? scope : NULL;
}

/* Reports a callback's failure; keeps a message it already left. */
static dfx_code callback_failed(dfx_builder *b, dfx_status *st, dfx_code c, const char *what, const char *scope) {
  if (b->err.code != DFX_OK) {
    dfx__status_copy(st, &b->err);
    return c;
  }
  return dfx__builder_fail(b, st, c, "builder: %s callback of '%.*s' failed with %s", what,
                           (int)strlen(scope) - 1, scope, dfx_code_name(c));
}

/* ---- tf.while_loop ---- */

dfx_code dfx_builder_while(dfx_builder *b, const char *name, const char *const *loop_vars, int n,
                           int parallel_iterations, dfx_while_cond_fn cond, dfx_while_body_fn body, void *ud,
                           const char **exits, dfx_status *st) {
  dfx__status_clear(st);
  if (!b || !loop_vars || n < 1 || !cond || !body || !exits)
    return dfx__builder_fail(b, st, DFX_EINVAL, "dfx_builder_while: NULL argument or no loop variables");
  for (int i = 0; i < n; i++) {
    exits[i] = NULL;
    if (!loop_vars[i] || !loop_vars[i][0] || loop_vars[i][0] == '^')
      return dfx__builder_fail(b, st, DFX_EINVAL, "dfx_builder_while: loop variable %d is not a tensor name", i);
  }
  if (parallel_iterations <= 0) parallel_iterations = 10;
  int outer = b->cur;
  const char **vars = dfx__calloc((size_t)n * 4, sizeof *vars);
  if (!vars) return OOM(b, st);
  const char **merges = vars + n, **idents = vars + 2 * n, **nexts = vars + 3 * n;
  dfx_bnode **sw = NULL;
  dfx_code c = DFX_OK;
  for (int i = 0; i < n && c == DFX_OK; i++) c = dfx__builder_import(b, outer, loop_vars[i], &vars[i], st);
  if (c != DFX_OK) goto done;
  const char *scope = helper_scope(b, name, "while", st);
  if (!scope) {
    c = b->err.code;
    goto done;
  }
  int L = ctx_new(b, DFX_BCTX_LOOP, outer, scope, st);
  if (L < 0) {
    c = DFX_ENOMEM;
    goto leave;
  }
  const char *frame = dfx__arena_printf(&b->arena, "%swhile_context", scope);
  if (!frame || !(sw = dfx__calloc((size_t)n, sizeof *sw))) {
    c = OOM(b, st);
    goto leave;
  }
  b->ctxs[L].frame = frame;
  b->ctxs[L].parallel_iterations = parallel_iterations;

  /* Enter -> Merge(Enter, NextIteration): the NextIteration names are
   * reserved now and the nodes made after the body. */
  for (int i = 0; i < n && c == DFX_OK; i++) {
    dfx_bnode *en, *mg;
    char base[1024];
    snprintf(base, sizeof base, "%sNextIteration", scope);
    if (!(nexts[i] = dfx__builder_unique(b, base, st))) c = DFX_ENOMEM;
    else if ((c = helper_node(b, scope, "Enter", &vars[i], 1, L, &en, st)) == DFX_OK) {
      if (dfx_bnode_attr_string(en, "frame_name", frame) || dfx_bnode_attr_bool(en, "is_constant", 0) ||
          dfx_bnode_attr_int(en, "parallel_iterations", parallel_iterations))
        c = dfx__status_copy(st, &b->err);
      const char *ins[2] = {dfx_bnode_name(en), nexts[i]};
      if (c == DFX_OK && (c = helper_node(b, scope, "Merge", ins, 2, L, &mg, st)) == DFX_OK)
        merges[i] = dfx_bnode_name(mg);
    }
  }
  if (c != DFX_OK) goto leave;

  /* The condition sees the Merge outputs; its constants hang off Merge. */
  b->cur = L;
  b->ctxs[L].pivot = merges[0];
  const char *pred = NULL;
  dfx_code before = b->err.code; /* only errors made by the callback count */
  c = cond(b, merges, n, ud, &pred);
  if (c == DFX_OK && before == DFX_OK && b->err.code != DFX_OK) c = b->err.code;
  if (c != DFX_OK) {
    c = callback_failed(b, st, c, "cond", scope);
    goto leave;
  }
  if (!pred || !*pred) {
    c = dfx__builder_fail(b, st, DFX_EINVAL, "builder: cond callback of '%s' stored no predicate", frame);
    goto leave;
  }
  const char *pred_in;
  dfx_bnode *lc;
  if ((c = dfx__builder_import(b, L, pred, &pred_in, st)) != DFX_OK ||
      (c = helper_node(b, scope, "LoopCond", &pred_in, 1, L, &lc, st)) != DFX_OK)
    goto leave;
  for (int i = 0; i < n && c == DFX_OK; i++) {
    const char *ins[2] = {merges[i], dfx_bnode_name(lc)};
    dfx_bnode *id;
    if ((c = helper_node(b, scope, "Switch", ins, 2, L, &sw[i], st)) != DFX_OK) break;
    const char *t = dfx_bnode_output(sw[i], 1);
    if (!t) c = OOM(b, st);
    else if ((c = helper_node(b, scope, "Identity", &t, 1, L, &id, st)) == DFX_OK) idents[i] = dfx_bnode_name(id);
  }
  if (c != DFX_OK) goto leave;

  /* The body sees the Identity outputs; its constants hang off Identity. */
  b->ctxs[L].pivot = idents[0];
  const char **next = dfx__calloc((size_t)n, sizeof *next);
  if (!next) {
    c = OOM(b, st);
    goto leave;
  }
  before = b->err.code;
  c = body(b, idents, n, ud, next);
  if (c == DFX_OK && before == DFX_OK && b->err.code != DFX_OK) c = b->err.code;
  if (c != DFX_OK) c = callback_failed(b, st, c, "body", scope);
  for (int i = 0; i < n && c == DFX_OK; i++) {
    const char *v;
    if (!next[i] || !*next[i])
      c = dfx__builder_fail(b, st, DFX_EINVAL, "builder: body callback of '%s' stored no value for variable %d", frame, i);
    else if ((c = dfx__builder_import(b, L, next[i], &v, st)) == DFX_OK)
      c = dfx__builder_raw(b, "NextIteration", nexts[i], &v, 1, L, NULL, st);
  }
  dfx__free(next);
  if (c != DFX_OK) goto leave;

  /* Exits live in the enclosing context. */
  for (int i = 0; i < n && c == DFX_OK; i++) {
    const char *s = dfx_bnode_name(sw[i]);
    dfx_bnode *ex;
    if ((c = helper_node(b, scope, "Exit", &s, 1, outer, &ex, st)) == DFX_OK) exits[i] = dfx_bnode_name(ex);
  }
leave:
  b->cur = outer;
  scope_leave(b);
done:
  if (c != DFX_OK)
    for (int i = 0; i < n; i++) exits[i] = NULL;
  dfx__free(sw);
  dfx__free(vars);
  return c;
}

/* ---- tf.cond ---- */

/* Runs one branch in a fresh COND context and returns its results as seen
 * inside the branch (outside tensors switched in). */
static dfx_code run_branch(dfx_builder *b, int parent, const char *scope, int branch, const char *pivot,
                           const char *pred_id, int n_out, dfx_cond_branch_fn fn, void *ud, const char **res,
                           dfx_status *st) {
  int C = ctx_new(b, DFX_BCTX_COND, parent, scope, st);
  if (C < 0) return DFX_ENOMEM;
  b->ctxs[C].branch = branch;
  b->ctxs[C].pivot = pivot;
  b->ctxs[C].pred_id = pred_id;
  b->cur = C;
  for (int i = 0; i < n_out; i++) res[i] = NULL;
  dfx_code before = b->err.code; /* only errors made by the callback count */
  dfx_code c = fn(b, ud, res);
  if (c == DFX_OK && before == DFX_OK && b->err.code != DFX_OK) c = b->err.code;
  if (c != DFX_OK) c = callback_failed(b, st, c, branch ? "true-branch" : "false-branch", scope);
  for (int i = 0; i < n_out && c == DFX_OK; i++) {
    if (!res[i] || !*res[i] || res[i][0] == '^')
      c = dfx__builder_fail(b, st, DFX_EINVAL, "builder: %s branch of cond '%.*s' stored no tensor for result %d",
                            branch ? "true" : "false", (int)strlen(scope) - 1, scope, i);
    else c = dfx__builder_import(b, C, res[i], &res[i], st);
  }
  b->cur = parent;
  return c;
}

dfx_code dfx_builder_cond(dfx_builder *b, const char *name, const char *pred, int n_out, dfx_cond_branch_fn then_fn,
                          dfx_cond_branch_fn else_fn, void *ud, const char **outs, dfx_status *st) {
  dfx__status_clear(st);
  if (!b || !pred || !*pred || pred[0] == '^' || n_out < 1 || !then_fn || !else_fn || !outs)
    return dfx__builder_fail(b, st, DFX_EINVAL, "dfx_builder_cond: NULL argument or no results");
  for (int i = 0; i < n_out; i++) outs[i] = NULL;
  int outer = b->cur;
  const char **res = dfx__calloc((size_t)n_out * 2, sizeof *res);
  if (!res) return OOM(b, st);
  const char *p;
  dfx_code c = dfx__builder_import(b, outer, pred, &p, st);
  const char *scope = c == DFX_OK ? helper_scope(b, name, "cond", st) : NULL;
  if (!scope) {
    if (c == DFX_OK) c = b->err.code;
    dfx__free(res);
    return c;
  }
  /* Switch(pred, pred) gives the pivots; pred_id feeds the branch Switches. */
  dfx_bnode *sw, *st_, *sf, *pid;
  const char *ins[2] = {p, p};
  if ((c = helper_node(b, scope, "Switch", ins, 2, outer, &sw, st)) != DFX_OK) goto leave;
  const char *t1 = dfx_bnode_output(sw, 1), *t0 = dfx_bnode_name(sw);
  if (!t1) {
    c = OOM(b, st);
    goto leave;
  }
  char nm[1024];
  snprintf(nm, sizeof nm, "%sswitch_t", scope);
  if ((c = dfx__builder_raw(b, "Identity", nm, &t1, 1, outer, &st_, st)) != DFX_OK) goto leave;
  snprintf(nm, sizeof nm, "%sswitch_f", scope);
  if ((c = dfx__builder_raw(b, "Identity", nm, &t0, 1, outer, &sf, st)) != DFX_OK) goto leave;
  snprintf(nm, sizeof nm, "%spred_id", scope);
  if ((c = dfx__builder_raw(b, "Identity", nm, &p, 1, outer, &pid, st)) != DFX_OK) goto leave;
  if ((c = run_branch(b, outer, scope, 1, dfx_bnode_name(st_), dfx_bnode_name(pid), n_out, then_fn, ud, res, st)) !=
          DFX_OK ||
      (c = run_branch(b, outer, scope, 0, dfx_bnode_name(sf), dfx_bnode_name(pid), n_out, else_fn, ud, res + n_out,
                      st)) != DFX_OK)
    goto leave;
  for (int i = 0; i < n_out && c == DFX_OK; i++) {
    const char *mi[2] = {res[n_out + i], res[i]}; /* Merge(false, true), as tf.cond */
    dfx_bnode *mg;
    if ((c = helper_node(b, scope, "Merge", mi, 2, outer, &mg, st)) == DFX_OK) outs[i] = dfx_bnode_name(mg);
  }
leave:
  b->cur = outer;
  scope_leave(b);
  if (c != DFX_OK)
    for (int i = 0; i < n_out; i++) outs[i] = NULL;
  dfx__free(res);
  return c;
}
