/* capi_graph.c - public graph calls for placeholder listing and typed attr
 * reads. Every pointer handed out (names, dims, list values) is borrowed
 * from the graph's own nodes: no copies, valid as long as the graph is. */
#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "graph.h"

/* ---- placeholders ---- */

int dfx_graph_placeholders(const dfx_graph *g, dfx_placeholder *out, int cap) {
  if (!g || cap < 0 || (cap > 0 && !out)) return DFX_EINVAL;
  int count = 0;
  for (int i = 0; i < g->n_nodes; i++) {
    const dfx_node *n = &g->nodes[i];
    bool with_default = strcmp(n->op, "PlaceholderWithDefault") == 0;
    if (!with_default && strcmp(n->op, "Placeholder") != 0 && strcmp(n->op, "PlaceholderV2") != 0) continue;
    /* Counting goes on past cap: the return value sizes the caller's next call. */
    if (count < cap) {
      const dfx_shape *sh = dfx__attr_shape(n, "shape");
      out[count] = (dfx_placeholder){
          .name = n->name,
          .node = i,
          .dtype = dfx__attr_type(n, "dtype", DFX_INVALID),
          .rank = sh ? sh->rank : -1,
          .dims = sh && sh->rank > 0 ? sh->dims : NULL,
          /* A PlaceholderWithDefault runs without a feed; the caller may skip it. */
          .has_default = with_default,
      };
    }
    count++;
  }
  return count;
}

/* ---- attrs ---- */

int dfx_graph_node_num_attrs(const dfx_graph *g, int i) {
  return g && i >= 0 && i < g->n_nodes ? g->nodes[i].n_attrs : 0;
}

const char *dfx_graph_node_attr_name(const dfx_graph *g, int i, int k) {
  if (!g || i < 0 || i >= g->n_nodes || k < 0 || k >= g->nodes[i].n_attrs) return NULL;
  return g->nodes[i].attrs[k].name;
}

static const char *kind_name(dfx_attr_kind k) {
  switch (k) {
    case DFX_ATTR_S: return "string";
    case DFX_ATTR_I: return "int";
    case DFX_ATTR_F: return "float";
    case DFX_ATTR_B: return "bool";
    case DFX_ATTR_TYPE: return "type";
    case DFX_ATTR_SHAPE: return "shape";
    case DFX_ATTR_TENSOR: return "tensor";
    case DFX_ATTR_FUNC: return "func";
    case DFX_ATTR_PLACEHOLDER: return "placeholder";
    default: return "";
  }
}

const char *dfx_graph_node_attr_kind(const dfx_graph *g, int i, const char *name) {
  if (!g || !name || i < 0 || i >= g->n_nodes) return NULL;
  const dfx_attr *a = dfx__node_attr(&g->nodes[i], name);
  if (!a) return NULL;
  if (a->kind != DFX_ATTR_LIST) return *kind_name(a->kind) ? kind_name(a->kind) : "none";
  switch (a->v.list.kind) {
    case DFX_ATTR_S: return "list(string)";
    case DFX_ATTR_I: return "list(int)";
    case DFX_ATTR_F: return "list(float)";
    case DFX_ATTR_B: return "list(bool)";
    case DFX_ATTR_TYPE: return "list(type)";
    case DFX_ATTR_SHAPE: return "list(shape)";
    case DFX_ATTR_TENSOR: return "list(tensor)";
    case DFX_ATTR_FUNC: return "list(func)";
    default: return "list()";
  }
}

/* The attr if it exists and has kind `want` (a list kind for lists). */
static const dfx_attr *get_attr(const dfx_graph *g, int i, const char *name, dfx_attr_kind want, bool list,
                                const void *out, dfx_status *st) {
  /* A successful call leaves st at DFX_OK: a message is only valid until the
   * status is next used (TF's TF_Message rule), so a stale one must not stay. */
  dfx__status_clear(st);
  if (!g || !name || !out || i < 0 || i >= g->n_nodes) {
    dfx__status_set(st, DFX_EINVAL, "dfx_graph_node_attr: NULL argument or node %d out of range", i);
    return NULL;
  }
  const dfx_node *n = &g->nodes[i];
  const dfx_attr *a = dfx__node_attr(n, name);
  if (!a) {
    dfx__status_set(st, DFX_ENOTFOUND, "node '%s' (%s) has no attr '%s'", n->name, n->op, name);
    return NULL;
  }
  /* An empty list has no element kind, so it answers every list getter. */
  bool ok = list ? a->kind == DFX_ATTR_LIST && (a->v.list.kind == want || a->v.list.n == 0) : a->kind == want;
  if (!ok) {
    dfx__status_set(st, DFX_EINVAL, "attr '%s' of node '%s' is %s, not %s%s%s", name, n->name,
                    dfx_graph_node_attr_kind(g, i, name), list ? "list(" : "", kind_name(want), list ? ")" : "");
    return NULL;
  }
  return a;
}

/* Code for a failed get_attr: the status holds it, or recompute when NULL. */
/* st may be NULL, so the code cannot be read back from it; these are the
 * same checks get_attr made, in the same order. */
static dfx_code attr_fail(const dfx_graph *g, int i, const char *name, const void *out) {
  if (!g || !name || !out || i < 0 || i >= g->n_nodes) return DFX_EINVAL;
  return dfx__node_attr(&g->nodes[i], name) ? DFX_EINVAL : DFX_ENOTFOUND;
}

dfx_code dfx_graph_node_attr_int(const dfx_graph *g, int i, const char *name, int64_t *out, dfx_status *st) {
  const dfx_attr *a = get_attr(g, i, name, DFX_ATTR_I, false, out, st);
  if (!a) return attr_fail(g, i, name, out);
  *out = a->v.i;
  return DFX_OK;
}

dfx_code dfx_graph_node_attr_float(const dfx_graph *g, int i, const char *name, float *out, dfx_status *st) {
  const dfx_attr *a = get_attr(g, i, name, DFX_ATTR_F, false, out, st);
  if (!a) return attr_fail(g, i, name, out);
  *out = a->v.f;
  return DFX_OK;
}

dfx_code dfx_graph_node_attr_bool(const dfx_graph *g, int i, const char *name, int *out, dfx_status *st) {
  const dfx_attr *a = get_attr(g, i, name, DFX_ATTR_B, false, out, st);
  if (!a) return attr_fail(g, i, name, out);
  *out = a->v.b ? 1 : 0;
  return DFX_OK;
}

dfx_code dfx_graph_node_attr_type(const dfx_graph *g, int i, const char *name, dfx_dtype *out, dfx_status *st) {
  const dfx_attr *a = get_attr(g, i, name, DFX_ATTR_TYPE, false, out, st);
  if (!a) return attr_fail(g, i, name, out);
  *out = a->v.type;
  return DFX_OK;
}

dfx_code dfx_graph_node_attr_string(const dfx_graph *g, int i, const char *name, const char **out, size_t *len,
                                    dfx_status *st) {
  const dfx_attr *a = get_attr(g, i, name, DFX_ATTR_S, false, out, st);
  if (!a) return attr_fail(g, i, name, out);
  *out = a->v.s.ptr ? a->v.s.ptr : "";
  if (len) *len = a->v.s.len;
  return DFX_OK;
}

dfx_code dfx_graph_node_attr_shape(const dfx_graph *g, int i, const char *name, int *rank, const int64_t **dims,
                                   dfx_status *st) {
  const dfx_attr *a = get_attr(g, i, name, DFX_ATTR_SHAPE, false, rank, st);
  if (!a) return attr_fail(g, i, name, rank);
  if (!dims) return dfx__status_set(st, DFX_EINVAL, "dfx_graph_node_attr_shape: NULL dims");
  *rank = a->v.shape.rank;
  *dims = a->v.shape.rank > 0 ? a->v.shape.dims : NULL;
  return DFX_OK;
}

dfx_code dfx_graph_node_attr_tensor(const dfx_graph *g, int i, const char *name, dfx_tensor **out, dfx_status *st) {
  if (out) *out = NULL;
  const dfx_attr *a = get_attr(g, i, name, DFX_ATTR_TENSOR, false, out, st);
  if (!a) return attr_fail(g, i, name, out);
  /* The attr tensor is never made immortal (sessions make immortal views of
   * it, kernels/base.c), so this reference may outlive the graph. */
  *out = dfx__tensor_ref(a->v.tensor);
  return DFX_OK;
}

dfx_code dfx_graph_node_attr_ints(const dfx_graph *g, int i, const char *name, const int64_t **vals, int *n,
                                  dfx_status *st) {
  const dfx_attr *a = get_attr(g, i, name, DFX_ATTR_I, true, vals, st);
  if (!a) return attr_fail(g, i, name, vals);
  if (!n) return dfx__status_set(st, DFX_EINVAL, "dfx_graph_node_attr_ints: NULL count");
  *vals = a->v.list.n ? a->v.list.v.i : NULL;
  *n = a->v.list.n;
  return DFX_OK;
}

dfx_code dfx_graph_node_attr_types(const dfx_graph *g, int i, const char *name, const dfx_dtype **vals, int *n,
                                   dfx_status *st) {
  const dfx_attr *a = get_attr(g, i, name, DFX_ATTR_TYPE, true, vals, st);
  if (!a) return attr_fail(g, i, name, vals);
  if (!n) return dfx__status_set(st, DFX_EINVAL, "dfx_graph_node_attr_types: NULL count");
  *vals = a->v.list.n ? a->v.list.v.type : NULL;
  *n = a->v.list.n;
  return DFX_OK;
}
