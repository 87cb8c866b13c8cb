/* shape_ctx.c - the context a shape function sees (shape_fn.h): reading
 * its inputs' shapes and values, writing its outputs. The setters keep the
 * invariant of dfx_tinfo: a value only on a fully known int32/int64 shape
 * of at most DFX_SHAPE_VALUE_MAX elements, each element within its dtype. */
#include <string.h>

#include "shape_fn.h"

static const dfx_tinfo *info(const dfx_shape_ctx *c, int k) { return k >= 0 && k < c->n_in ? c->in[k] : NULL; }

const dfx_pshape *dfx__sctx_in(const dfx_shape_ctx *c, int k) {
  static const dfx_pshape unknown = {.rank = -1};
  const dfx_tinfo *t = info(c, k);
  return t ? &t->shape : &unknown;
}

bool dfx__sctx_value(const dfx_shape_ctx *c, int k, int64_t *v, int *n) {
  const dfx_tinfo *t = info(c, k);
  if (!t || t->n_val < 0) return false;
  for (int i = 0; i < t->n_val; i++) {
    if (t->val[i] == DFX_VALUE_UNKNOWN) return false;
    v[i] = t->val[i];
  }
  *n = t->n_val;
  return true;
}

bool dfx__sctx_scalar(const dfx_shape_ctx *c, int k, int64_t *v) {
  int64_t buf[DFX_SHAPE_VALUE_MAX];
  int n;
  if (!dfx__sctx_value(c, k, buf, &n) || n != 1 || info(c, k)->shape.rank > 1) return false;
  *v = buf[0];
  return true;
}

const dfx_tensor *dfx__sctx_const(const dfx_shape_ctx *c, int k) {
  const dfx_tinfo *t = info(c, k);
  return t ? t->konst : NULL;
}

bool dfx__sctx_shape_from_value(const dfx_shape_ctx *c, int k, dfx_pshape *out) {
  const dfx_tinfo *t = info(c, k);
  *out = dfx__pshape_unknown();
  if (!t || t->shape.rank < 0) return true;
  if (t->shape.rank == 0) {
    /* TF: a scalar shape tensor must be -1, meaning "any rank". */
    return t->n_val < 0 || t->val[0] == -1 || t->val[0] == DFX_VALUE_UNKNOWN;
  }
  if (t->shape.rank != 1) return false;
  int64_t len = t->shape.dims[0];
  if (len > DFX_MAX_DIMS) return false; /* no tensor has that rank */
  if (len < 0) return true;
  if (t->n_val < 0) {
    *out = dfx__pshape_of_rank((int)len);
    return true;
  }
  dfx_pshape s = {.rank = (int)len};
  for (int i = 0; i < s.rank; i++) {
    int64_t v = t->val[i];
    if (v < -1 && v != DFX_VALUE_UNKNOWN) return false;
    s.dims[i] = v >= 0 ? v : DFX_DIM_UNKNOWN;
  }
  *out = s;
  return true;
}

void dfx__sctx_set(dfx_shape_ctx *c, int k, const dfx_pshape *s) {
  if (k < 0 || k >= c->n_out) return;
  c->out[k].shape = s->rank <= DFX_MAX_DIMS ? *s : dfx__pshape_unknown();
  c->out[k].n_val = -1;
  c->out[k].konst = NULL;
  c->out[k].origin = NULL;
}

void dfx__sctx_set_value(dfx_shape_ctx *c, int k, int r, const int64_t *dims, const int64_t *vals) {
  if (k < 0 || k >= c->n_out) return;
  dfx_pshape s = dfx__pshape_make(r, dims);
  dfx__sctx_set(c, k, &s);
  int64_t n = dfx__pshape_count(&s);
  dfx_dtype t = c->node->out_types ? c->node->out_types[k] : DFX_INVALID;
  if (!dfx__pshape_known(&s) || n < 0 || n > DFX_SHAPE_VALUE_MAX || (t != DFX_I32 && t != DFX_I64)) return;
  dfx_tinfo *o = &c->out[k];
  o->n_val = (int)n;
  for (int i = 0; i < o->n_val; i++) {
    int64_t v = vals[i];
    if (t == DFX_I32 && v != DFX_VALUE_UNKNOWN && (v > INT32_MAX || v < INT32_MIN)) v = DFX_VALUE_UNKNOWN;
    o->val[i] = v;
  }
}

void dfx__sctx_forward(dfx_shape_ctx *c, int k, int j) {
  const dfx_tinfo *t = info(c, j);
  if (!t || k < 0 || k >= c->n_out) return;
  c->out[k] = *t;
}

int dfx__sctx_attr_ints(const dfx_shape_ctx *c, const char *name, int64_t *v, int max) {
  const dfx_attr_list *l = dfx__attr_list(c->node, name);
  if (!l || (l->n > 0 && l->kind != DFX_ATTR_I) || l->n > max) return -1;
  if (l->n > 0) memcpy(v, l->v.i, sizeof(int64_t) * (size_t)l->n);
  return l->n;
}

int dfx__sctx_data_format(const dfx_shape_ctx *c) {
  const char *f = dfx__attr_str(c->node, "data_format", "NHWC");
  if (strcmp(f, "NHWC") == 0 || strcmp(f, "NDHWC") == 0) return 0;
  if (strcmp(f, "NCHW") == 0 || strcmp(f, "NCDHW") == 0) return 1;
  return -1;
}

bool dfx__axis(int64_t axis, int r, int *out) {
  if (r < 0 || axis < -r || axis >= r) return false;
  *out = (int)(axis < 0 ? axis + r : axis);
  return true;
}
