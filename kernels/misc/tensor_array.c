/* tensor_array.c - TensorArray V3/V2 objects: create, write, read, size, close
 * and gradient arrays (tf-semantics §5.2). Arrays live for one run: they are
 * handed to the step, and gradient arrays are registered with the step too
 * (the forward array only keeps borrowed pointers to them). Slot arrays
 * sized from input values (size, write indices) are held to the tensor byte
 * limit. */
#include "tensor_array.h"

#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "kdispatch.h"
#include "resource.h"

static int64_t ta_counter; /* uniquifies names, like TF's global counter */

/* ---- object ---- */

static void elem_clear(ta_elem *e) {
  dfx__tensor_unref(e->t);
  e->t = NULL;
}

void dfx__ta_free(void *obj) {
  dfx_tarray *ta = obj;
  for (int64_t i = 0; ta->elems && i < ta->size; i++) elem_clear(&ta->elems[i]);
  for (int g = 0; g < ta->n_grads; g++) dfx__free(ta->grad_src[g]);
  dfx__free(ta->grad_src);
  dfx__free(ta->grads);
  dfx__free(ta->elems);
  dfx__free(ta->eshape.dims);
  dfx__free(ta->name);
  uv_mutex_destroy(&ta->mu);
  dfx__free(ta);
}

static dfx_tarray *ta_new(const char *name, dfx_dtype dtype, const dfx_shape *es, int64_t size) {
  dfx_tarray *ta = dfx__calloc(1, sizeof *ta);
  if (!ta) return NULL;
  if (uv_mutex_init(&ta->mu)) {
    dfx__free(ta);
    return NULL;
  }
  ta->name = dfx__strdup(name);
  ta->dtype = dtype;
  ta->eshape.rank = es ? es->rank : -1;
  if (ta->eshape.rank > 0) {
    ta->eshape.dims = dfx__malloc(sizeof(int64_t) * (size_t)es->rank);
    if (ta->eshape.dims) memcpy(ta->eshape.dims, es->dims, sizeof(int64_t) * (size_t)es->rank);
  }
  ta->size = ta->cap = size;
  /* At least one slot, so NULL means out of memory even for size 0. */
  ta->elems = dfx__calloc(size ? (size_t)size : 1, sizeof *ta->elems);
  if (!ta->name || !ta->elems || (ta->eshape.rank > 0 && !ta->eshape.dims)) {
    dfx__ta_free(ta);
    return NULL;
  }
  return ta;
}

dfx_tarray *dfx__ta_get(dfx_kctx *ctx, int i) { return dfx__misc_handle_in(ctx, i, dfx__ta_free, "TensorArray"); }

/* ---- shapes ---- */

const char *dfx__ta_pshape_str(const dfx_shape *s, char *buf, size_t n) {
  if (s->rank < 0) {
    snprintf(buf, n, "<unknown>");
    return buf;
  }
  size_t o = 0;
  o += (size_t)snprintf(buf + o, n - o, "[");
  for (int d = 0; d < s->rank && o < n; d++) {
    if (s->dims[d] < 0)
      o += (size_t)snprintf(buf + o, n - o, "%s?", d ? "," : "");
    else
      o += (size_t)snprintf(buf + o, n - o, "%s%lld", d ? "," : "", (long long)s->dims[d]);
  }
  if (o < n) snprintf(buf + o, n - o, "]");
  return buf;
}

bool dfx__ta_compatible(const dfx_shape *s, int rank, const int64_t *dims) {
  /* Unknown rank or unknown (-1) dims accept anything, as TF's partial
   * shapes do. */
  if (s->rank < 0) return true;
  if (s->rank != rank) return false;
  for (int d = 0; d < rank; d++)
    if (s->dims[d] >= 0 && s->dims[d] != dims[d]) return false;
  return true;
}

bool dfx__ta_fully_defined(const dfx_shape *s) {
  if (s->rank < 0) return false;
  for (int d = 0; d < s->rank; d++)
    if (s->dims[d] < 0) return false;
  return true;
}

dfx_code dfx__ta_flow_out(dfx_kctx *ctx, int k) {
  dfx_tensor *f = dfx__kctx_alloc(ctx, k, DFX_F32, 0, NULL);
  if (!f) return ctx->st->code;
  /* The flow is a dummy 0.0 scalar whose only job is to order ops. */
  ((float *)f->data)[0] = 0.0f;
  return DFX_OK;
}

/* ---- locked element access ---- */

dfx_code dfx__ta_check_open(dfx_kctx *ctx, dfx_tarray *ta) {
  if (ta->closed) return dfx__kctx_fail(ctx, DFX_EINVAL, "TensorArray %s has already been closed.", ta->name);
  return DFX_OK;
}

/* Elementwise a + b into a new tensor (gradient arrays aggregate writes). */
static dfx_tensor *add_tensors(const dfx_tensor *a, const dfx_tensor *b) {
  dfx_tensor *r = dfx__tensor_alloc((dfx_dtype)a->dtype, a->ndims, a->dims, NULL);
  if (!r) return NULL;
  int64_t n = a->count;
  switch ((dfx_dtype)a->dtype) {
#define ADD_CASE(DT, T)                                                                       \
  case DT:                                                                                    \
    for (int64_t i = 0; i < n; i++) ((T *)r->data)[i] = (T)(((const T *)a->data)[i] + ((const T *)b->data)[i]); \
    break;
    DFX_REAL_TYPES(ADD_CASE)
#undef ADD_CASE
    case DFX_F16:
      for (int64_t i = 0; i < n; i++)
        ((uint16_t *)r->data)[i] = dfx__f32_to_f16(dfx__f16_to_f32(((const uint16_t *)a->data)[i]) +
                                                   dfx__f16_to_f32(((const uint16_t *)b->data)[i]));
      break;
    case DFX_BF16:
      for (int64_t i = 0; i < n; i++)
        ((uint16_t *)r->data)[i] = dfx__f32_to_bf16(dfx__bf16_to_f32(((const uint16_t *)a->data)[i]) +
                                                    dfx__bf16_to_f32(((const uint16_t *)b->data)[i]));
      break;
    case DFX_C64:
      for (int64_t i = 0; i < n; i++) {
        dfx_c64 x = ((const dfx_c64 *)a->data)[i], y = ((const dfx_c64 *)b->data)[i];
        ((dfx_c64 *)r->data)[i] = (dfx_c64){x.re + y.re, x.im + y.im};
      }
      break;
    case DFX_C128:
      for (int64_t i = 0; i < n; i++) {
        dfx_c128 x = ((const dfx_c128 *)a->data)[i], y = ((const dfx_c128 *)b->data)[i];
        ((dfx_c128 *)r->data)[i] = (dfx_c128){x.re + y.re, x.im + y.im};
      }
      break;
    default:
      dfx__tensor_unref(r);
      return NULL;
  }
  return r;
}

/* Grows a dynamic array to `need` slots (need <= INT32_MAX + 1). */
static dfx_code grow(dfx_kctx *ctx, dfx_tarray *ta, int64_t need) {
  if (need <= ta->size) return DFX_OK;
  if (need > ta->cap) {
    size_t limit = dfx__tensor_limit(), bytes = dfx__mul_size((size_t)need, sizeof(ta_elem));
    if (bytes > limit)
      return dfx__kctx_fail(ctx, DFX_ELIMIT, "TensorArray %s: growing to %lld elements needs %zu bytes, over the tensor "
                            "byte limit", ta->name, (long long)need, bytes);
    /* Doubles while that stays within the limit, so a write loop appending one
     * element at a time costs amortised O(1); new slots start unwritten. */
    int64_t nc = bytes <= limit / 2 ? 2 * need : need;
    ta_elem *ne = dfx__realloc(ta->elems, sizeof *ne * (size_t)nc);
    if (!ne) return dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory growing TensorArray %s", ta->name);
    ta->elems = ne;
    ta->cap = nc;
  }
  memset(ta->elems + ta->size, 0, sizeof *ta->elems * (size_t)(need - ta->size));
  ta->size = need;
  return DFX_OK;
}

/* TF's TensorArray::LockedWriteOrAggregate; takes a new reference to value. */
dfx_code dfx__ta_write(dfx_kctx *ctx, dfx_tarray *ta, int64_t index, dfx_tensor *value) {
  char b1[256], b2[256];
  dfx_code c = dfx__ta_check_open(ctx, ta);
  if (c != DFX_OK) return c;
  if (index < 0 || (!ta->dynamic_size && index >= ta->size))
    return dfx__kctx_fail(ctx, DFX_EINVAL,
                          "TensorArray %s: Tried to write to index %lld but array is not resizeable and size is: %lld",
                          ta->name, (long long)index, (long long)ta->size);
  /* TF's sizes and indices are int32; a dynamic array never grows past that. */
  if (index > INT32_MAX) return dfx__kctx_fail(ctx, DFX_EINVAL, "TensorArray %s: index %lld too large", ta->name,
                                               (long long)index);
  if ((c = grow(ctx, ta, index + 1)) != DFX_OK) return c;
  ta_elem *e = &ta->elems[index];
  if (value->dtype != ta->dtype)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "TensorArray %s: Could not write tensor of type %s to TensorArray with dtype %s",
                          ta->name, dfx__dtype_tf_name((dfx_dtype)value->dtype), dfx__dtype_tf_name(ta->dtype));
  if (!dfx__ta_compatible(&ta->eshape, value->ndims, value->dims))
    return dfx__kctx_fail(ctx, DFX_EINVAL,
                          "TensorArray %s: Could not write to TensorArray index %lld because the value shape is %s "
                          "which is incompatible with the TensorArray's inferred element shape: %s "
                          "(consider setting infer_shape=False).",
                          ta->name, (long long)index, DFX_SHAPE_STR(value, b1),
                          dfx__ta_pshape_str(&ta->eshape, b2, sizeof b2));
  /* identical_element_shapes: the first write fixes the element shape that
   * every later write must match. */
  if (ta->identical_shapes && !dfx__ta_fully_defined(&ta->eshape)) {
    int64_t *nd = value->ndims ? dfx__malloc(sizeof(int64_t) * value->ndims) : NULL;
    if (value->ndims && !nd) return dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory");
    if (nd) memcpy(nd, value->dims, sizeof(int64_t) * value->ndims);
    dfx__free(ta->eshape.dims);
    ta->eshape.dims = nd;
    ta->eshape.rank = value->ndims;
  }
  /* TF forbids writing an element after it was read: the reader may already
   * have used the old value. */
  if (e->read)
    return dfx__kctx_fail(ctx, DFX_EINVAL,
                          "TensorArray %s: Could not write to TensorArray index %lld because it has already been read.",
                          ta->name, (long long)index);
  if (!ta->aggregate && e->written)
    return dfx__kctx_fail(ctx, DFX_EINVAL,
                          "TensorArray %s: Could not write to TensorArray index %lld because it has already been "
                          "written to.",
                          ta->name, (long long)index);
  if (e->written) {
    if (e->rank != value->ndims || memcmp(e->dims, value->dims, sizeof(int64_t) * (size_t)e->rank) != 0)
      return dfx__kctx_fail(ctx, DFX_EINVAL,
                            "TensorArray %s: Could not aggregate to TensorArray index %lld because the existing shape "
                            "is %s but the new input shape is %s",
                            ta->name, (long long)index, dfx__shape_str(e->rank, e->dims, b1, sizeof b1),
                            DFX_SHAPE_STR(value, b2));
    if (!e->t || e->t->count == 0) { /* only a shape was stored: it stands for zeros */
      dfx__tensor_unref(e->t);
      e->t = dfx__tensor_ref(value);
      return DFX_OK;
    }
    /* Gradient arrays sum their writes (TF's multiple_writes_aggregate). */
    dfx_tensor *sum = add_tensors(e->t, value);
    if (!sum)
      return dfx__kctx_fail(ctx, DFX_EINVAL, "TensorArray %s: cannot aggregate writes of dtype %s", ta->name,
                            dfx_dtype_name(ta->dtype));
    dfx__tensor_unref(e->t);
    e->t = sum;
    return DFX_OK;
  }
  e->t = dfx__tensor_ref(value);
  e->rank = value->ndims;
  memcpy(e->dims, value->dims, sizeof(int64_t) * value->ndims);
  e->written = true;
  return DFX_OK;
}

/* TF's TensorArray::LockedRead (unwritten slots read as zeros when a shape is known). */
dfx_code dfx__ta_read(dfx_kctx *ctx, dfx_tarray *ta, int64_t index, dfx_tensor **out) {
  char b1[256];
  dfx_code c = dfx__ta_check_open(ctx, ta);
  if (c != DFX_OK) return c;
  if (index < 0 || (!ta->is_grad && index >= ta->size))
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Tried to read from index %lld but array size is: %lld", (long long)index,
                          (long long)ta->size);
  ta_elem *e = index < ta->size ? &ta->elems[index] : NULL;
  if (!e || !e->written) {
    int rank;
    const int64_t *dims;
    /* Zeros of a known shape: a gradient slot's own, if it has one, else the
     * element shape, which must then be fully defined. */
    if (ta->is_grad && e && e->rank > 0) {
      rank = e->rank;
      dims = e->dims;
    } else if (!dfx__ta_fully_defined(&ta->eshape)) {
      return dfx__kctx_fail(ctx, DFX_EINVAL,
                            "TensorArray %s: Could not read from TensorArray index %lld because it has not yet been "
                            "written to.  Furthermore, the element shape is not fully defined: %s.",
                            ta->name, (long long)index, dfx__ta_pshape_str(&ta->eshape, b1, sizeof b1));
    } else {
      rank = ta->eshape.rank;
      dims = ta->eshape.dims;
    }
    dfx_code code;
    *out = dfx__tensor_zeros(ta->dtype, rank, dims, &code);
    return *out ? DFX_OK : dfx__kctx_fail(ctx, code, "cannot allocate TensorArray zeros");
  }
  if (e->cleared)
    return dfx__kctx_fail(ctx, DFX_EINVAL,
                          "TensorArray %s: Could not read index %lld twice because it was cleared after a previous "
                          "read (perhaps try setting clear_after_read = false?).",
                          ta->name, (long long)index);
  /* A stored shape without data (a gradient slot) reads as zeros. */
  if (!e->t || (e->t->count == 0 && dfx__shape_count(e->rank, e->dims) != 0)) {
    dfx_code code;
    *out = dfx__tensor_zeros(ta->dtype, e->rank, e->dims, &code);
    if (!*out) return dfx__kctx_fail(ctx, code, "cannot allocate TensorArray zeros");
  } else {
    *out = dfx__tensor_ref(e->t);
  }
  /* The array drops its reference, so the element lives only as long as
   * its reader holds it; a second read is then TF's "cleared" error. */
  if (ta->clear_after_read) {
    elem_clear(e);
    e->cleared = true;
  }
  e->read = true;
  return DFX_OK;
}

/* ---- kernels ---- */

static dfx_code ta_create(dfx_kctx *ctx, bool v2) {
  const dfx_tensor *sz = ctx->in[0];
  char b[64];
  if (sz->ndims != 0 || sz->dtype != DFX_I32)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "TensorArray size must be scalar, but had shape: %s", DFX_SHAPE_STR(sz, b));
  int32_t size = ((const int32_t *)sz->data)[0];
  if (size < 0) return dfx__kctx_fail(ctx, DFX_EINVAL, "Size should be >= 0.");
  /* size comes from a tensor's value: the slot array is checked against the
   * limit before it is allocated. */
  if (dfx__mul_size((size_t)size, sizeof(ta_elem)) > dfx__tensor_limit())
    return dfx__kctx_fail(ctx, DFX_ELIMIT, "TensorArray size %d needs %zu bytes, over the tensor byte limit", (int)size,
                          dfx__mul_size((size_t)size, sizeof(ta_elem)));
  const char *base = dfx__attr_str(ctx->node, "tensor_array_name", "");
  char name[512];
  snprintf(name, sizeof name, "%s_%lld", base, (long long)__atomic_add_fetch(&ta_counter, 1, __ATOMIC_RELAXED));
  dfx_tarray *ta = ta_new(name, dfx__attr_type(ctx->node, "dtype", DFX_INVALID),
                          dfx__attr_shape(ctx->node, "element_shape"), size);
  if (!ta) return dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory creating TensorArray");
  ta->dynamic_size = dfx__attr_bool(ctx->node, "dynamic_size", false);
  ta->clear_after_read = dfx__attr_bool(ctx->node, "clear_after_read", true);
  ta->identical_shapes = dfx__attr_bool(ctx->node, "identical_element_shapes", false);
  /* V2 returns a string handle and no flow; V3 a resource handle and flow. */
  dfx_code c = dfx__misc_handle_out(ctx, 0, ta, dfx__ta_free, v2, "_tensor_arrays", name);
  if (c != DFX_OK || v2) return c;
  return dfx__ta_flow_out(ctx, 1);
}
static dfx_code ta_v3(dfx_kctx *ctx) { return ta_create(ctx, false); }
static dfx_code ta_v2(dfx_kctx *ctx) { return ta_create(ctx, true); }

static dfx_code index_arg(dfx_kctx *ctx, int i, int64_t *index) {
  const dfx_tensor *t = ctx->in[i];
  char b[64];
  if (t->ndims != 0 || t->dtype != DFX_I32)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "TensorArray index must be scalar, but had shape: %s", DFX_SHAPE_STR(t, b));
  *index = ((const int32_t *)t->data)[0];
  return DFX_OK;
}

static dfx_code ta_write_kernel(dfx_kctx *ctx) {
  dfx_tarray *ta = dfx__ta_get(ctx, 0);
  int64_t index = 0;
  if (!ta) return ctx->st->code;
  dfx_code c = index_arg(ctx, 1, &index);
  if (c != DFX_OK) return c;
  dfx_tensor *v = ctx->in[2];
  uv_mutex_lock(&ta->mu);
  if (v->dtype != ta->dtype)
    c = dfx__kctx_fail(ctx, DFX_EINVAL, "TensorArray dtype is %s but Op is trying to write dtype %s.",
                       dfx_dtype_name(ta->dtype), dfx_dtype_name((dfx_dtype)v->dtype));
  else
    c = dfx__ta_write(ctx, ta, index, v);
  uv_mutex_unlock(&ta->mu);
  if (c != DFX_OK) return c;
  /* flow_out is flow_in: the flow only orders ops (tf-semantics §5.2). */
  dfx__kctx_forward(ctx, 3, 0);
  return DFX_OK;
}

static dfx_code ta_read_kernel(dfx_kctx *ctx) {
  dfx_tarray *ta = dfx__ta_get(ctx, 0);
  int64_t index = 0;
  if (!ta) return ctx->st->code;
  dfx_code c = index_arg(ctx, 1, &index);
  if (c != DFX_OK) return c;
  dfx_dtype want = dfx__attr_type(ctx->node, "dtype", DFX_INVALID);
  dfx_tensor *v = NULL;
  uv_mutex_lock(&ta->mu);
  if (want != ta->dtype)
    c = dfx__kctx_fail(ctx, DFX_EINVAL, "TensorArray dtype is %s but Op requested dtype %s.",
                       dfx_dtype_name(ta->dtype), dfx_dtype_name(want));
  else
    c = dfx__ta_read(ctx, ta, index, &v);
  uv_mutex_unlock(&ta->mu);
  if (c != DFX_OK) return c;
  ctx->out[0] = v;
  return DFX_OK;
}

static dfx_code ta_size_kernel(dfx_kctx *ctx) {
  dfx_tarray *ta = dfx__ta_get(ctx, 0);
  if (!ta) return ctx->st->code;
  uv_mutex_lock(&ta->mu);
  dfx_code c = dfx__ta_check_open(ctx, ta);
  int32_t n = (int32_t)ta->size;
  uv_mutex_unlock(&ta->mu);
  if (c != DFX_OK) return c;
  dfx_tensor *t = dfx__kctx_alloc(ctx, 0, DFX_I32, 0, NULL);
  if (!t) return ctx->st->code;
  ((int32_t *)t->data)[0] = n;
  return DFX_OK;
}

static dfx_code ta_close_kernel(dfx_kctx *ctx) {
  dfx_tarray *ta = dfx__ta_get(ctx, 0);
  if (!ta) return ctx->st->code;
  uv_mutex_lock(&ta->mu);
  dfx_code c = dfx__ta_check_open(ctx, ta);
  if (c == DFX_OK) {
    /* The elements go now; the object stays until the step ends, so a later
     * use through a stale handle is an "already closed" error, not a dangling
     * pointer. */
    for (int64_t i = 0; ta->elems && i < ta->size; i++) elem_clear(&ta->elems[i]);
    ta->closed = true;
  }
  uv_mutex_unlock(&ta->mu);
  return c;
}

/* Builds the gradient array of ta (locked): the forward size, element shape
 * and written shapes, each prefixed by pre[0..npre), with aggregating writes. */
static dfx_tarray *grad_new(dfx_kctx *ctx, dfx_tarray *ta, const char *source, const int64_t *pre, int npre) {
  char name[768];
  snprintf(name, sizeof name, "%s@%s", ta->name, source);
  dfx_shape es = ta->eshape;
  int64_t edims[DFX_MAX_DIMS];
  bool deep = false;
  for (int64_t i = 0; i < ta->size; i++)
    if (ta->elems[i].written && ta->elems[i].rank + npre > DFX_MAX_DIMS) deep = true;
  if ((es.rank >= 0 && es.rank + npre > DFX_MAX_DIMS) || deep) {
    dfx__kctx_fail(ctx, DFX_EINVAL, "TensorArray %s: gradient element shape has too many dimensions", ta->name);
    return NULL;
  }
  if (es.rank >= 0) {
    memcpy(edims, pre, sizeof(int64_t) * (size_t)npre);
    if (es.rank) memcpy(edims + npre, es.dims, sizeof(int64_t) * (size_t)es.rank);
    es.rank += npre;
    es.dims = edims;
  }
  dfx_tarray *g = ta_new(name, ta->dtype, &es, ta->size);
  if (!g) {
    dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory creating a TensorArray gradient");
    return NULL;
  }
  g->identical_shapes = ta->identical_shapes;
  g->aggregate = g->is_grad = g->clear_after_read = true;
  for (int64_t i = 0; i < ta->size; i++) {
    /* Written forward elements give the gradient shape-only slots (shape
     * prefixed, no data): they read as zeros until a gradient is written. */
    const ta_elem *fe = &ta->elems[i];
    if (!fe->written) continue;
    ta_elem *ge = &g->elems[i];
    memcpy(ge->dims, pre, sizeof(int64_t) * (size_t)npre);
    memcpy(ge->dims + npre, fe->dims, sizeof(int64_t) * (size_t)fe->rank);
    ge->rank = npre + fe->rank;
    ge->written = true;
  }
  return g;
}

/* TensorArrayGrad{V2,V3,WithShape}: finds or creates the companion array for
 * `source` and disables the forward array's dynamic growth. The step takes
 * the new array while ta->mu is held, so a concurrent Grad for the same source
 * never sees an array the step does not know yet (lock order: ta, step). */
static dfx_code ta_grad(dfx_kctx *ctx, bool v2, bool with_shape) {
  dfx_tarray *ta = dfx__ta_get(ctx, 0);
  if (!ta) return ctx->st->code;
  int64_t pre[DFX_MAX_DIMS];
  int npre = 0;
  if (with_shape) {
    dfx_code c = dfx__kctx_vector_i64(ctx, 2, "shape_to_prepend", pre, DFX_MAX_DIMS, &npre);
    if (c != DFX_OK) return c;
    for (int k = 0; k < npre; k++)
      if (pre[k] < 0)
        return dfx__kctx_fail(ctx, DFX_EINVAL, "shape_to_prepend[%d] = %lld must be >= 0", k, (long long)pre[k]);
  }
  const char *source = dfx__attr_str(ctx->node, "source", "");
  uv_mutex_lock(&ta->mu);
  dfx_code c = dfx__ta_check_open(ctx, ta);
  dfx_tarray *g = NULL;
  for (int k = 0; c == DFX_OK && k < ta->n_grads; k++)
    if (strcmp(ta->grad_src[k], source) == 0) g = ta->grads[k];
  if (c == DFX_OK && !g) {
    /* TF: once a gradient exists, the forward array may not grow any more,
     * since the gradient was sized from it. */
    ta->dynamic_size = false;
    char **ns = dfx__realloc(ta->grad_src, sizeof *ns * (size_t)(ta->n_grads + 1));
    if (ns) ta->grad_src = ns;
    dfx_tarray **ng = ns ? dfx__realloc(ta->grads, sizeof *ng * (size_t)(ta->n_grads + 1)) : NULL;
    if (ng) ta->grads = ng;
    char *src = ng ? dfx__strdup(source) : NULL;
    if (!src) c = dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory creating a TensorArray gradient");
    if (c == DFX_OK) g = grad_new(ctx, ta, source, pre, npre);
    if (c == DFX_OK && !g) c = ctx->st->code;
    if (c == DFX_OK) c = dfx__kctx_step_own(ctx, g, dfx__ta_free); /* frees g on failure */
    if (c == DFX_OK) {
      ta->grad_src[ta->n_grads] = src;
      ta->grads[ta->n_grads++] = g;
    } else {
      dfx__free(src);
      g = NULL;
    }
  }
  uv_mutex_unlock(&ta->mu);
  if (c != DFX_OK) return c;
  c = dfx__misc_handle_encode(ctx, 0, g, v2, "_tensor_array_grads", g->name);
  if (c != DFX_OK || v2) return c;
  dfx__kctx_forward(ctx, 1, 1);
  return DFX_OK;
}
static dfx_code ta_grad_v3(dfx_kctx *ctx) { return ta_grad(ctx, false, false); }
static dfx_code ta_grad_v2(dfx_kctx *ctx) { return ta_grad(ctx, true, false); }
static dfx_code ta_grad_ws(dfx_kctx *ctx) { return ta_grad(ctx, false, true); }

/* Shape attrs checked once per node: dims are -1 (unknown) or sizes. An
 * array's fully defined element shape must also fit the tensor byte limit,
 * as the zeros read from an unwritten slot have that shape (Gather and
 * Concat only make empty tensors from theirs). */
dfx_code dfx__ta_init(const dfx_node *n, void **state, dfx_status *st) {
  static const char *const attrs[] = {"element_shape", "element_shape_except0"};
  bool creates = strncmp(n->op, "TensorArrayV", 12) == 0;
  (void)state;
  for (int a = 0; a < 2; a++) {
    const dfx_shape *s = dfx__attr_shape(n, attrs[a]);
    if (!s || s->rank < 0) continue;
    char b[256];
    if (s->rank > DFX_MAX_DIMS)
      return dfx__status_set(st, DFX_EINVAL, "%s %s has rank %d, at most %d supported", attrs[a],
                             dfx__ta_pshape_str(s, b, sizeof b), s->rank, DFX_MAX_DIMS);
    for (int d = 0; d < s->rank; d++)
      if (s->dims[d] < -1)
        return dfx__status_set(st, DFX_EINVAL, "%s %s has dimension %d = %lld", attrs[a],
                               dfx__shape_str(s->rank, s->dims, b, sizeof b), d, (long long)s->dims[d]);
    if (!creates || !dfx__ta_fully_defined(s)) continue;
    int64_t count = dfx__shape_count(s->rank, s->dims);
    size_t es = dfx__dtype_storage(dfx__attr_type(n, "dtype", DFX_F32));
    if (count < 0 || dfx__mul_size((size_t)count, es) > dfx__tensor_limit())
      return dfx__status_set(st, DFX_ELIMIT, "%s %s is over the tensor byte limit", attrs[a],
                             dfx__ta_pshape_str(s, b, sizeof b));
  }
  return DFX_OK;
}

/* Handles, sizes and flows have no type attr. V2 rows stay stateful (TF's
 * OpDef says otherwise): they change the array. */
#define TA_FLAGS (DFX_KERNEL_CHEAP | DFX_KERNEL_STATEFUL)

static const dfx_kernel_def kernels[] = {
    {"TensorArrayV3", TA_DTYPE, ta_v3, TA_FLAGS, dfx__ta_init, NULL},
    {"TensorArrayV2", TA_DTYPE, ta_v2, TA_FLAGS, dfx__ta_init, NULL},
    {"TensorArrayGradV3", NULL, ta_grad_v3, TA_FLAGS, NULL, NULL},
    {"TensorArrayGradWithShape", NULL, ta_grad_ws, TA_FLAGS, NULL, NULL},
    {"TensorArrayGradV2", NULL, ta_grad_v2, TA_FLAGS, NULL, NULL},
    {"TensorArrayWriteV3", TA_T, ta_write_kernel, TA_FLAGS, NULL, NULL},
    {"TensorArrayWriteV2", TA_T, ta_write_kernel, TA_FLAGS, NULL, NULL},
    {"TensorArrayReadV3", TA_DTYPE, ta_read_kernel, TA_FLAGS, NULL, NULL},
    {"TensorArrayReadV2", TA_DTYPE, ta_read_kernel, TA_FLAGS, NULL, NULL},
    {"TensorArraySizeV3", NULL, ta_size_kernel, TA_FLAGS, NULL, NULL},
    {"TensorArraySizeV2", NULL, ta_size_kernel, TA_FLAGS, NULL, NULL},
    {"TensorArrayCloseV3", NULL, ta_close_kernel, TA_FLAGS, NULL, NULL},
    {"TensorArrayCloseV2", NULL, ta_close_kernel, TA_FLAGS, NULL, NULL},
    {NULL}};

void dfx__kernels_misc_tensor_array(dfx_registry *r);
void dfx__kernels_misc_tensor_array(dfx_registry *r) { dfx__kernels_add(r, kernels); }
