/* lower_call.c - function inlining: a call's body copied into the graph
 * under the caller's name, following TensorFlow's inlining rules. Each data
 * input enters through an Identity ("<prefix>/input/_k"); one NoOp
 * ("<prefix>/input_control_node") waits for all of them and for the
 * caller's control inputs, and every body node without inputs waits for it,
 * so a body inlined into a loop frame or a cond branch lives in that frame
 * and is dead with its branch. Attr placeholders (`$T`) take the caller's
 * values. Calls with `_noinline` are inlined too: dfexec has no function
 * runtime to run them separately. Body input strings are resolved here:
 * "arg" / "arg:k" name the function's inputs, "node:out:k" the k-th tensor
 * of output argument `out` of a body node (list outputs expanded by the
 * node's attrs), "^node" a control input. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "lower.h"
#include "op_registry.h"

static dfx_code oom(dfx_lower_ctx *lc) { return dfx__status_set(lc->st, DFX_ENOMEM, "out of memory"); }

static const dfx_attr *find_attr(const dfx_attr *a, int n, const char *name) {
  for (int i = 0; i < n; i++)
    if (strcmp(a[i].name, name) == 0) return &a[i];
  return NULL;
}

/* Size and dtypes of one argument under attrs (a, n): a number_attr repeats
 * its type, a type_list_attr lists them. types may be NULL. -1 when an attr
 * it needs is missing. */
static int arg_size(const dfx_op_arg *arg, const dfx_attr *a, int n, const dfx_op_def *def, dfx_dtype *types, int cap) {
  const dfx_attr *x;
  if (arg->type_list_attr) {
    x = find_attr(a, n, arg->type_list_attr);
    if (!x && def) {
      const dfx_op_attr *d = dfx__op_def_attr(def, arg->type_list_attr);
      x = d && d->has_default ? &d->def : NULL;
    }
    if (!x || x->kind != DFX_ATTR_LIST) return -1;
    for (int i = 0; types && i < x->v.list.n && i < cap; i++) types[i] = x->v.list.v.type[i];
    return x->v.list.n;
  }
  dfx_dtype t = arg->type;
  if (arg->type_attr) {
    x = find_attr(a, n, arg->type_attr);
    t = x && x->kind == DFX_ATTR_TYPE ? x->v.type : DFX_INVALID;
  }
  int count = 1;
  if (arg->number_attr) {
    x = find_attr(a, n, arg->number_attr);
    if (!x && def) {
      const dfx_op_attr *d = dfx__op_def_attr(def, arg->number_attr);
      x = d && d->has_default ? &d->def : NULL;
    }
    if (!x || x->kind != DFX_ATTR_I || x->v.i < 0 || x->v.i > INT32_MAX / 2) return -1;
    count = (int)x->v.i;
  }
  for (int i = 0; types && i < count && i < cap; i++) types[i] = t;
  return count;
}

/* ---- the body's node names ---- */

typedef struct body_name {
  const char *name;
  int body;  /* index in fn->nodes */
  int id;    /* node id in the graph */
} body_name;

static int cmp_name(const void *a, const void *b) {
  return strcmp(((const body_name *)a)->name, ((const body_name *)b)->name);
}

typedef struct inliner {
  dfx_lower_ctx *lc;
  const dfx_inline_call *call;
  const dfx_function *fn;
  body_name *names;      /* sorted */
  int *arg_off;          /* flat offset of each input arg, n_in + 1 entries */
  int *in_ids;           /* the Identity of each flat input */
} inliner;

static const body_name *find_body(const inliner *in, const char *name) {
  body_name key = {.name = name};
  return in->fn->n_nodes ? bsearch(&key, in->names, (size_t)in->fn->n_nodes, sizeof key, cmp_name) : NULL;
}

static int find_arg(const inliner *in, const char *name) {
  for (int i = 0; i < in->fn->sig.n_in; i++)
    if (strcmp(in->fn->sig.in[i].name, name) == 0) return i;
  return -1;
}

/* Flat offset of output argument `out` of body node b (already in the
 * graph, attrs substituted). */
static int out_offset(inliner *in, const body_name *b, const char *out) {
  const dfx_node *n = &in->lc->g->nodes[b->id];
  const dfx_function *callee = dfx__fn_lib_find(in->lc->lib, n->op);
  const dfx_op_def *def = callee ? &callee->sig : dfx__op_get(n->op);
  if (!def) return -1;
  int off = 0;
  for (int i = 0; i < def->n_out; i++) {
    if (strcmp(def->out[i].name, out) == 0) return off;
    int s = arg_size(&def->out[i], n->attrs, n->n_attrs, callee ? NULL : def, NULL, 0);
    if (s < 0) return -1;
    off += s;
  }
  return -1;
}

/* Resolves one body input string (or ret value) to a graph port. */
static dfx_code resolve(inliner *in, const char *s, const char *where, dfx_graph_port *p) {
  dfx_lower_ctx *lc = in->lc;
  bool ctrl = s[0] == '^';
  if (ctrl) s++;
  char buf[512];
  if (strlen(s) >= sizeof buf) goto bad;
  snprintf(buf, sizeof buf, "%s", s);
  char *parts[3] = {buf, NULL, NULL};
  int np = 1;
  for (char *c = buf; *c && np < 3; c++)
    if (*c == ':') {
      *c = 0;
      parts[np++] = c + 1;
    }
  long idx = 0;
  if (np >= 2) {
    char *end;
    idx = strtol(parts[np - 1], &end, 10);
    if (*end || idx < 0 || idx > INT32_MAX / 2) goto bad;
  }
  /* "x" and "x:k" name an argument first, "n:out:k" and "^n" a node first:
   * the two namespaces may share a name. */
  const body_name *b = find_body(in, parts[0]);
  int arg = np <= 2 ? find_arg(in, parts[0]) : -1;
  if (ctrl && b) arg = -1;
  if (arg >= 0) {
    int k = in->arg_off[arg] + (int)idx;
    if (k >= in->arg_off[arg + 1]) goto bad;
    *p = (dfx_graph_port){in->in_ids[k], ctrl ? -1 : 0};
    return DFX_OK;
  }
  if (!b) goto bad;
  if (ctrl) {
    *p = (dfx_graph_port){b->id, -1};
    return DFX_OK;
  }
  int off = 0;
  if (np == 3) {
    off = out_offset(in, b, parts[1]);
    if (off < 0)
      return dfx__status_set(lc->st, DFX_EINVAL, "%s: function '%s': %s reads '%s', but %s (%s) has no output '%s'",
                             in->call->what, in->fn->sig.name, where, s, b->name,
                             lc->g->nodes[b->id].op, parts[1]);
  }
  *p = (dfx_graph_port){b->id, off + (int)idx};
  return DFX_OK;
bad:
  return dfx__status_set(lc->st, DFX_EINVAL, "%s: function '%s': %s reads '%s', which names no argument or node", in->call->what,
                         in->fn->sig.name, where, s);
}

/* ---- steps ---- */

static dfx_code add_inputs(inliner *in, dfx_inline_result *res) {
  dfx_lower_ctx *lc = in->lc;
  const dfx_inline_call *call = in->call;
  const dfx_function *fn = in->fn;
  if (!(in->arg_off = dfx__calloc((size_t)fn->sig.n_in + 1, sizeof(int)))) return oom(lc);
  for (int i = 0; i < fn->sig.n_in; i++) {
    int s = arg_size(&fn->sig.in[i], call->attrs, call->n_attrs, NULL, NULL, 0);
    if (s < 0)
      return dfx__status_set(lc->st, DFX_EINVAL, "%s: function '%s': the call gives no size for argument '%s'", call->what,
                             fn->sig.name, fn->sig.in[i].name);
    in->arg_off[i + 1] = in->arg_off[i] + s;
  }
  int n = in->arg_off[fn->sig.n_in];
  if (n != call->n_in)
    return dfx__status_set(lc->st, DFX_EINVAL, "%s: function '%s' takes %d inputs but the call gives %d", call->what,
                           fn->sig.name, n, call->n_in);
  dfx_dtype *types = dfx__calloc((size_t)n + 1, sizeof *types);
  if (!types || !(in->in_ids = dfx__calloc((size_t)n + 1, sizeof(int)))) {
    dfx__free(types);
    return oom(lc);
  }
  for (int i = 0; i < fn->sig.n_in; i++)
    arg_size(&fn->sig.in[i], call->attrs, call->n_attrs, NULL, types + in->arg_off[i], n - in->arg_off[i]);
  dfx_code c = DFX_OK;
  char name[512];
  for (int k = 0; k < n && c == DFX_OK; k++) {
    dfx_dtype t = call->in_types ? call->in_types[k] : types[k];
    if (t == DFX_INVALID) {
      c = dfx__status_set(lc->st, DFX_EINVAL, "%s: function '%s': the dtype of input %d is unknown", call->what,
                          fn->sig.name, k);
      break;
    }
    snprintf(name, sizeof name, "%s/input/_%d", call->prefix, k);
    int id = dfx__lower_add(lc, name, "Identity", call->depth + 1);
    if (id < 0) c = lc->st ? lc->st->code : DFX_ENOMEM;
    if (c == DFX_OK) c = dfx__lower_attr_type(lc, id, "T", t);
    if (c == DFX_OK) c = dfx__graph_add_input(lc->g, id, call->in[k].node, call->in[k].slot, lc->st);
    in->in_ids[k] = id;
  }
  dfx__free(types);
  if (c != DFX_OK) return c;
  /* The anchor: what every input-less body node waits on. */
  res->anchor = -1;
  if (n + call->n_ctrl > 0) {
    snprintf(name, sizeof name, "%s/input_control_node", call->prefix);
    int id = dfx__lower_add(lc, name, "NoOp", call->depth + 1);
    if (id < 0) return lc->st ? lc->st->code : DFX_ENOMEM;
    for (int k = 0; k < n && c == DFX_OK; k++) c = dfx__graph_add_input(lc->g, id, in->in_ids[k], -1, lc->st);
    for (int k = 0; k < call->n_ctrl && c == DFX_OK; k++) c = dfx__graph_add_input(lc->g, id, call->ctrl[k], -1, lc->st);
    res->anchor = id;
  }
  return c;
}

/* The body's nodes, with placeholders replaced by the caller's attrs. */
static dfx_code add_body(inliner *in) {
  dfx_lower_ctx *lc = in->lc;
  const dfx_function *fn = in->fn;
  if (fn->n_nodes && !(in->names = dfx__calloc((size_t)fn->n_nodes, sizeof *in->names))) return oom(lc);
  char name[512];
  for (int i = 0; i < fn->n_nodes; i++) {
    const dfx_node *bn = &fn->nodes[i].node;
    snprintf(name, sizeof name, "%s/%s", in->call->prefix, bn->name);
    int id = dfx__lower_add(lc, name, bn->op, in->call->depth + 1);
    if (id < 0) return lc->st ? lc->st->code : DFX_ENOMEM;
    dfx_code c = dfx__graph_set_device(lc->g, id, bn->device, lc->st);
    for (int k = 0; k < bn->n_attrs && c == DFX_OK; k++) {
      const dfx_attr *a = &bn->attrs[k];
      if (a->kind == DFX_ATTR_PLACEHOLDER) {
        const dfx_attr *v = find_attr(in->call->attrs, in->call->n_attrs, a->v.s.ptr);
        if (!v)
          return dfx__status_set(lc->st, DFX_EINVAL,
                                 "%s: function '%s': node '%s' attr '%s' is '$%s', which the call does not set",
                                 in->call->what, fn->sig.name, bn->name, a->name, a->v.s.ptr);
        dfx_attr copy = *v;
        copy.name = a->name;
        c = dfx__graph_set_attr(lc->g, id, &copy, lc->st);
      } else {
        c = dfx__graph_set_attr(lc->g, id, a, lc->st);
      }
    }
    if (c != DFX_OK) return c;
    in->names[i] = (body_name){bn->name, i, id};
  }
  if (fn->n_nodes) qsort(in->names, (size_t)fn->n_nodes, sizeof *in->names, cmp_name);
  for (int i = 1; i < fn->n_nodes; i++)
    if (strcmp(in->names[i - 1].name, in->names[i].name) == 0)
      return dfx__status_set(lc->st, DFX_EINVAL, "%s: function '%s' has two nodes named '%s'", in->call->what,
                             fn->sig.name, in->names[i].name);
  return DFX_OK;
}

static dfx_code wire_body(inliner *in, const dfx_inline_result *res) {
  dfx_lower_ctx *lc = in->lc;
  const dfx_function *fn = in->fn;
  for (int i = 0; i < fn->n_nodes; i++) {
    const dfx_fn_node *bn = &fn->nodes[i];
    const body_name *b = find_body(in, bn->node.name);
    char where[300];
    snprintf(where, sizeof where, "node '%s'", bn->node.name);
    for (int k = 0; k < bn->n_inputs; k++) {
      dfx_graph_port p;
      dfx_code c = resolve(in, bn->inputs[k], where, &p);
      if (c == DFX_OK) c = dfx__graph_add_input(lc->g, b->id, p.node, p.slot, lc->st);
      if (c != DFX_OK) return c;
    }
    const dfx_node *n = &lc->g->nodes[b->id];
    if (n->n_in + n->n_ctrl == 0 && res->anchor >= 0) {
      dfx_code c = dfx__graph_add_input(lc->g, b->id, res->anchor, -1, lc->st);
      if (c != DFX_OK) return c;
    }
  }
  return DFX_OK;
}

static dfx_code collect_outputs(inliner *in, dfx_inline_result *res) {
  dfx_lower_ctx *lc = in->lc;
  const dfx_function *fn = in->fn;
  int n = 0;
  for (int i = 0; i < fn->sig.n_out; i++) {
    const dfx_op_arg *a = &fn->sig.out[i];
    if (a->number_attr || a->type_list_attr)
      return dfx__status_set(lc->st, DFX_EUNIMPL, "%s: function '%s': list output '%s' is not supported", in->call->what,
                             fn->sig.name, a->name);
    n++;
  }
  res->n_out = n;
  if (n && (!(res->out = dfx__calloc((size_t)n, sizeof *res->out)) ||
            !(res->out_types = dfx__calloc((size_t)n, sizeof *res->out_types))))
    return oom(lc);
  for (int i = 0; i < n; i++) {
    char where[300];
    snprintf(where, sizeof where, "ret '%s'", fn->sig.out[i].name);
    dfx_code c = resolve(in, fn->ret[i], where, &res->out[i]);
    if (c != DFX_OK) return c;
    if (res->out[i].slot < 0)
      return dfx__status_set(lc->st, DFX_EINVAL, "%s: function '%s': ret '%s' is a control input", in->call->what,
                             fn->sig.name, fn->sig.out[i].name);
    dfx_dtype t = fn->sig.out[i].type;
    if (fn->sig.out[i].type_attr) {
      const dfx_attr *x = find_attr(in->call->attrs, in->call->n_attrs, fn->sig.out[i].type_attr);
      t = x && x->kind == DFX_ATTR_TYPE ? x->v.type : DFX_INVALID;
    }
    res->out_types[i] = t;
  }
  if (fn->n_control_ret && !(res->ctrl_out = dfx__calloc((size_t)fn->n_control_ret, sizeof(int)))) return oom(lc);
  for (int i = 0; i < fn->n_control_ret; i++) {
    const body_name *b = find_body(in, fn->control_ret[i]);
    if (!b)
      return dfx__status_set(lc->st, DFX_EINVAL, "%s: function '%s': control_ret '%s' names no node", in->call->what,
                             fn->sig.name, fn->control_ret[i]);
    res->ctrl_out[res->n_ctrl_out++] = b->id;
  }
  return DFX_OK;
}

void dfx__inline_result_free(dfx_inline_result *r) {
  dfx__free(r->out);
  dfx__free(r->out_types);
  dfx__free(r->ctrl_out);
  memset(r, 0, sizeof *r);
}

dfx_code dfx__inline_function(dfx_lower_ctx *lc, const dfx_inline_call *call, dfx_inline_result *res) {
  memset(res, 0, sizeof *res);
  res->anchor = -1;
  inliner in = {.lc = lc, .call = call, .fn = call->fn};
  dfx_code c = add_inputs(&in, res);
  if (c == DFX_OK) c = add_body(&in);
  if (c == DFX_OK) c = wire_body(&in, res);
  if (c == DFX_OK) c = collect_outputs(&in, res);
  dfx__free(in.names);
  dfx__free(in.arg_off);
  dfx__free(in.in_ids);
  if (c != DFX_OK) dfx__inline_result_free(res);
  return c;
}

/* ---- calls ---- */

dfx_code dfx__lower_call(dfx_lower_ctx *lc, int id, const dfx_function *fn) {
  dfx_graph *g = lc->g;
  dfx_code c = DFX_OK;
  bool partitioned = fn == NULL;
  if (partitioned && (c = dfx__lower_func(lc, id, "f", &fn)) != DFX_OK) return c;
  char what[400];
  snprintf(what, sizeof what, "Node '%s' (%s)", g->nodes[id].name, g->nodes[id].op);
  dfx_dtype *tin = NULL, *tout = NULL;
  int n_tin = 0, n_tout = 0;
  if (partitioned && ((c = dfx__lower_types(lc, id, "Tin", &tin, &n_tin)) != DFX_OK ||
                      (c = dfx__lower_types(lc, id, "Tout", &tout, &n_tout)) != DFX_OK))
    goto done;
  const dfx_node *n = &g->nodes[id];
  if (partitioned && n_tin != n->n_in) {
    c = dfx__status_set(lc->st, DFX_EINVAL, "%s: Tin lists %d types for %d inputs", what, n_tin, n->n_in);
    goto done;
  }
  dfx_graph_port *ins = dfx__calloc((size_t)n->n_in + 1, sizeof *ins);
  int *ctrl = dfx__calloc((size_t)n->n_ctrl + 1, sizeof *ctrl);
  if (!ins || !ctrl) {
    dfx__free(ins);
    dfx__free(ctrl);
    c = oom(lc);
    goto done;
  }
  for (int k = 0; k < n->n_in; k++) ins[k] = (dfx_graph_port){n->in[k].node, n->in[k].slot};
  for (int k = 0; k < n->n_ctrl; k++) ctrl[k] = n->in[n->n_in + k].node;
  /* The caller's attrs stay put while nodes are added (only the node array
   * moves), and are dropped only by dfx__lower_replace below. */
  dfx_inline_call call = {fn, n->name, n->attrs, n->n_attrs, n->n_in, ins, tin, n->n_ctrl, ctrl, lc->depth[id], what};
  dfx_inline_result res;
  c = dfx__inline_function(lc, &call, &res);
  if (c == DFX_OK && partitioned && n_tout != res.n_out)
    c = dfx__status_set(lc->st, DFX_EINVAL, "%s: Tout lists %d types but function '%s' returns %d", what, n_tout,
                        fn->sig.name, res.n_out);
  if (c == DFX_OK) {
    for (int k = 0; partitioned && k < res.n_out; k++) res.out_types[k] = tout[k];
    /* A call with no outputs and no control outputs still completes after
     * its inputs: its NoOp waits on the body's anchor. */
    int anchor = res.anchor;
    bool use_anchor = res.n_out == 0 && res.n_ctrl_out == 0 && anchor >= 0;
    c = dfx__lower_replace(lc, id, res.out, res.out_types, res.n_out, use_anchor ? &anchor : res.ctrl_out,
                           use_anchor ? 1 : res.n_ctrl_out);
  }
  dfx__inline_result_free(&res);
  dfx__free(ins);
  dfx__free(ctrl);
done:
  dfx__free(tin);
  dfx__free(tout);
  return c;
}
