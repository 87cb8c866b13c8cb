/* builder_attr.c - attrs of builder nodes: the dfx_bnode_attr_* setters,
 * which check their arguments and store dfx_attr values with the edit API
 * (so a node holds exactly what import would make of its NodeDef), and the
 * Placeholder / Const shorthands built on them. */
#include <string.h>

#include "alloc.h"
#include "builder.h"
#include "tensor.h"

#define OOM(b, st) DFX_BUILDER_OOM(b, st)

/* ---- setters ---- */

static dfx_code bad_attr(dfx_bnode *n, const char *name, const char *why) {
  return dfx__builder_fail(n->b, NULL, DFX_EINVAL, "builder: node '%s': attr '%s': %s", dfx_bnode_name(n),
                           name ? name : "", why);
}

/* Stores a copy of `a` under `name` on the node, replacing any. The value
 * is borrowed: dfx__graph_set_attr copies it. */
static dfx_code put(dfx_bnode *n, const char *name, dfx_attr a) {
  if (!name || !*name)
    return dfx__builder_fail(n->b, NULL, DFX_EINVAL, "builder: node '%s': NULL or empty attr name", dfx_bnode_name(n));
  a.name = (char *)name;
  return dfx__graph_set_attr(n->b->g, n->id, &a, NULL) == DFX_OK ? DFX_OK : OOM(n->b, NULL);
}

static bool dtype_ok(dfx_dtype t) { return dfx_dtype_name(t) && strcmp(dfx_dtype_name(t), "invalid") != 0; }

dfx_code dfx_bnode_attr_int(dfx_bnode *n, const char *name, int64_t v) {
  return n ? put(n, name, (dfx_attr){.kind = DFX_ATTR_I, .v.i = v}) : DFX_EINVAL;
}

dfx_code dfx_bnode_attr_float(dfx_bnode *n, const char *name, float v) {
  return n ? put(n, name, (dfx_attr){.kind = DFX_ATTR_F, .v.f = v}) : DFX_EINVAL;
}

dfx_code dfx_bnode_attr_bool(dfx_bnode *n, const char *name, int v) {
  return n ? put(n, name, (dfx_attr){.kind = DFX_ATTR_B, .v.b = v != 0}) : DFX_EINVAL;
}

dfx_code dfx_bnode_attr_bytes(dfx_bnode *n, const char *name, const void *v, size_t len) {
  if (!n) return DFX_EINVAL;
  if (!v && len) return bad_attr(n, name, "NULL value");
  /* Never a NULL pointer: import always gives a string attr one. */
  return put(n, name, (dfx_attr){.kind = DFX_ATTR_S, .v.s = {v ? (char *)v : "", len}});
}

dfx_code dfx_bnode_attr_string(dfx_bnode *n, const char *name, const char *v) {
  if (!n) return DFX_EINVAL;
  if (!v) return bad_attr(n, name, "NULL string");
  return dfx_bnode_attr_bytes(n, name, v, strlen(v));
}

dfx_code dfx_bnode_attr_type(dfx_bnode *n, const char *name, dfx_dtype v) {
  if (!n) return DFX_EINVAL;
  if (!dtype_ok(v)) return bad_attr(n, name, "invalid dtype");
  return put(n, name, (dfx_attr){.kind = DFX_ATTR_TYPE, .v.type = v});
}

dfx_code dfx_bnode_attr_shape(dfx_bnode *n, const char *name, const int64_t *dims, int rank) {
  if (!n) return DFX_EINVAL;
  if (rank < -1 || (rank > 0 && !dims)) return bad_attr(n, name, "invalid rank or NULL dims");
  for (int i = 0; i < rank; i++)
    if (dims[i] < -1) return bad_attr(n, name, "shape has a dimension below -1");
  return put(n, name, (dfx_attr){.kind = DFX_ATTR_SHAPE, .v.shape = {rank, rank > 0 ? (int64_t *)dims : NULL}});
}

/* The caller keeps its tensor and may write to it later, so the attr gets
 * a copy of its own (which the graph then shares by reference). */
dfx_code dfx_bnode_attr_tensor(dfx_bnode *n, const char *name, const dfx_tensor *v) {
  if (!n) return DFX_EINVAL;
  if (!v) return bad_attr(n, name, "NULL tensor");
  dfx_tensor *copy = dfx__tensor_copy(v);
  if (!copy) return OOM(n->b, NULL);
  dfx_code c = put(n, name, (dfx_attr){.kind = DFX_ATTR_TENSOR, .v.tensor = copy});
  dfx__tensor_unref(copy);
  return c;
}

/* A list of `count` elements of `kind` at v. An empty list has no element
 * kind, as import makes it. */
static dfx_code put_list(dfx_bnode *n, const char *name, dfx_attr_kind kind, const void *v, int count) {
  if (count < 0 || (count > 0 && !v)) return bad_attr(n, name, "negative count or NULL values");
  dfx_attr a = {.kind = DFX_ATTR_LIST, .v.list = {count ? kind : DFX_ATTR_NONE, count, {.i = (int64_t *)v}}};
  return put(n, name, a);
}

dfx_code dfx_bnode_attr_ints(dfx_bnode *n, const char *name, const int64_t *v, int count) {
  return n ? put_list(n, name, DFX_ATTR_I, v, count) : DFX_EINVAL;
}

dfx_code dfx_bnode_attr_floats(dfx_bnode *n, const char *name, const float *v, int count) {
  return n ? put_list(n, name, DFX_ATTR_F, v, count) : DFX_EINVAL;
}

dfx_code dfx_bnode_attr_types(dfx_bnode *n, const char *name, const dfx_dtype *v, int count) {
  if (!n) return DFX_EINVAL;
  for (int i = 0; i < count && v; i++)
    if (!dtype_ok(v[i])) return bad_attr(n, name, "invalid dtype in list");
  return put_list(n, name, DFX_ATTR_TYPE, v, count);
}

/* ---- shorthand nodes ---- */

dfx_code dfx_builder_placeholder(dfx_builder *b, const char *name, dfx_dtype dtype, const int64_t *dims, int rank,
                                 dfx_bnode **out, dfx_status *st) {
  if (out) *out = NULL;
  dfx_bnode *n;
  dfx_code c = dfx_builder_node(b, "Placeholder", name, NULL, 0, &n, st);
  if (c != DFX_OK) return c;
  /* Attr setters report through the sticky error only; pass it on. */
  if ((c = dfx_bnode_attr_type(n, "dtype", dtype)) != DFX_OK || (c = dfx_bnode_attr_shape(n, "shape", dims, rank)) != DFX_OK)
    return dfx__status_copy(st, &b->err);
  if (out) *out = n;
  return DFX_OK;
}

dfx_code dfx_builder_const(dfx_builder *b, const char *name, const dfx_tensor *value, dfx_bnode **out,
                           dfx_status *st) {
  if (out) *out = NULL;
  if (b && !value) return dfx__builder_fail(b, st, DFX_EINVAL, "dfx_builder_const: NULL value");
  dfx_bnode *n;
  dfx_code c = dfx_builder_node(b, "Const", name, NULL, 0, &n, st);
  if (c != DFX_OK) return c;
  if ((c = dfx_bnode_attr_type(n, "dtype", dfx_tensor_dtype(value))) != DFX_OK ||
      (c = dfx_bnode_attr_tensor(n, "value", value)) != DFX_OK)
    return dfx__status_copy(st, &b->err);
  if (out) *out = n;
  return DFX_OK;
}

static dfx_code const_scalar(dfx_builder *b, const char *name, dfx_dtype dt, const void *v, dfx_bnode **out,
                             dfx_status *st) {
  if (out) *out = NULL;
  if (!b) return dfx__status_set(st, DFX_EINVAL, "dfx_builder_const: NULL builder");
  dfx_tensor *t = dfx_tensor_new_copy(dt, NULL, 0, v, dfx_dtype_size(dt));
  if (!t) return OOM(b, st);
  dfx_code c = dfx_builder_const(b, name, t, out, st);
  dfx_tensor_free(t);
  return c;
}

dfx_code dfx_builder_const_i32(dfx_builder *b, const char *name, int32_t v, dfx_bnode **out, dfx_status *st) {
  return const_scalar(b, name, DFX_I32, &v, out, st);
}
dfx_code dfx_builder_const_i64(dfx_builder *b, const char *name, int64_t v, dfx_bnode **out, dfx_status *st) {
  return const_scalar(b, name, DFX_I64, &v, out, st);
}
dfx_code dfx_builder_const_f32(dfx_builder *b, const char *name, float v, dfx_bnode **out, dfx_status *st) {
  return const_scalar(b, name, DFX_F32, &v, out, st);
}
dfx_code dfx_builder_const_f64(dfx_builder *b, const char *name, double v, dfx_bnode **out, dfx_status *st) {
  return const_scalar(b, name, DFX_F64, &v, out, st);
}
dfx_code dfx_builder_const_bool(dfx_builder *b, const char *name, int v, dfx_bnode **out, dfx_status *st) {
  uint8_t u = v != 0;
  return const_scalar(b, name, DFX_BOOL, &u, out, st);
}
