/* tensor_proto.c - decoding TensorProto exactly as TensorFlow does (tf-semantics §1.5). */
#include "tensor_proto.h"

#include <string.h>

#include "alloc.h"
#include "dtype.h"

dfx_dtype dfx__dtype_from_wire(int v) {
  if (v > 100) v -= 100; /* ref types carry the base type's value + 100 */
  return dfx__dtype_valid(v) ? (dfx_dtype)v : DFX_INVALID;
}

dfx_code dfx__shape_from_proto(const Tensorflow__TensorShapeProto *p, dfx_shape *out, dfx_status *st) {
  out->rank = 0;
  out->dims = NULL;
  if (!p) return DFX_OK;
  if (p->unknown_rank) {
    out->rank = -1;
    return DFX_OK;
  }
  /* TF's TensorShape::kMaxDimensions; checked before the count sizes a block. */
  if (p->n_dim > 254) return dfx__status_set(st, DFX_EINVAL, "shape has %zu dimensions (TensorFlow allows 254)", p->n_dim);
  out->rank = (int)p->n_dim;
  if (!p->n_dim) return DFX_OK;
  out->dims = dfx__malloc(sizeof(int64_t) * p->n_dim);
  if (!out->dims) return dfx__status_set(st, DFX_ENOMEM, "out of memory");
  for (size_t i = 0; i < p->n_dim; i++) {
    int64_t d = p->dim[i]->size;
    /* -1 is an unknown dim, legal in attrs and placeholders (tf-semantics §1.6);
     * a tensor value rejects it later. */
    if (d < -1) {
      dfx__free(out->dims);
      out->dims = NULL;
      return dfx__status_set(st, DFX_EINVAL, "shape has dimension %lld (must be >= -1)", (long long)d);
    }
    out->dims[i] = d;
  }
  return DFX_OK;
}

/* Fills n elements from a typed repeated field with TF's rule: the last given
 * value repeats; an empty field leaves the (zeroed) tensor as is. */
#define FILL(CT, field, conv)                                    \
  do {                                                           \
    CT *d = t->data;                                             \
    size_t m = p->n_##field;                                     \
    for (int64_t i = 0; i < n && m; i++)                         \
      d[i] = conv(p->field[(size_t)i < m ? (size_t)i : m - 1]);  \
  } while (0)
#define AS_IS(x) (x)
#define HALF_BITS(x) ((uint16_t)(x))
#define BOOL01(x) ((uint8_t)((x) != 0))

static dfx_code decode_strings(const Tensorflow__TensorProto *p, dfx_tensor *t, dfx_status *st) {
  dfx_str *d = t->data;
  int64_t n = t->count;
  if (p->tensor_content.len > 0 && n > 0) { /* as TF: an empty tensor ignores its content */
    /* n varint32 lengths, then the bytes back to back (EncodeStringList). */
    const uint8_t *b = p->tensor_content.data, *e = b + p->tensor_content.len;
    /* All n lengths come before the first string's bytes, so they are read
     * into a side array first. */
    uint64_t *lens = dfx__calloc(n ? (size_t)n : 1, sizeof *lens);
    if (!lens) return dfx__status_set(st, DFX_ENOMEM, "out of memory");
    for (int64_t i = 0; i < n; i++) {
      uint64_t v = 0;
      int shift = 0;
      /* A varint32 (TF's GetVarint32): at most 5 bytes, at most 2^32 - 1. */
      while (b < e && (*b & 0x80) && shift < 28) v |= (uint64_t)(*b++ & 0x7f) << shift, shift += 7;
      if (b >= e) {
        dfx__free(lens);
        return dfx__status_set(st, DFX_EINVAL, "string tensor_content is truncated");
      }
      /* The fifth byte may carry bits up to 2^35: those past 32 make it no
       * varint32, and a continuation bit there makes it too long. */
      if ((*b & 0x80) || (v |= (uint64_t)(*b++) << shift) > UINT32_MAX) {
        dfx__free(lens);
        return dfx__status_set(st, DFX_EINVAL, "string tensor_content has a length that is not a varint32");
      }
      lens[i] = v;
    }
    for (int64_t i = 0; i < n; i++) {
      /* Each length is checked against the bytes left before it is used, so a
       * hostile length cannot read past the buffer. Strings already copied are
       * freed by the caller's unref (the elements started zeroed). */
      if (lens[i] > (uint64_t)(e - b)) {
        dfx__free(lens);
        return dfx__status_set(st, DFX_EINVAL, "string tensor_content is truncated");
      }
      if (lens[i] && !(d[i].ptr = dfx__strndup((const char *)b, lens[i]))) {
        dfx__free(lens);
        return dfx__status_set(st, DFX_ENOMEM, "out of memory");
      }
      d[i].len = lens[i];
      b += lens[i];
    }
    dfx__free(lens);
    if (b != e) return dfx__status_set(st, DFX_EINVAL, "string tensor_content has bytes left over after its strings");
    return DFX_OK;
  }
  /* string_val follows the same last-value-repeats rule as the typed fields. */
  size_t m = p->n_string_val;
  for (int64_t i = 0; i < n && m; i++) {
    const ProtobufCBinaryData *s = &p->string_val[(size_t)i < m ? (size_t)i : m - 1];
    if (s->len && !(d[i].ptr = dfx__strndup((const char *)s->data, s->len)))
      return dfx__status_set(st, DFX_ENOMEM, "out of memory");
    d[i].len = s->len;
  }
  return DFX_OK;
}

dfx_code dfx__tensor_from_proto(const Tensorflow__TensorProto *p, dfx_tensor **out, dfx_status *st) {
  *out = NULL;
  dfx_dtype dt = dfx__dtype_from_wire(p->dtype);
  /* Ref dtypes arrive as their base type (dfx__dtype_from_wire). */
  if (dt == DFX_INVALID || dt == DFX_VARIANT)
    return dfx__status_set(st, DFX_EUNIMPL, "tensor dtype %d is not supported", (int)p->dtype);
  dfx_shape sh;
  dfx_code c = dfx__shape_from_proto(p->tensor_shape, &sh, st);
  if (c != DFX_OK) return c;
  /* TF's Tensor::FromProto needs a fully defined shape: unknown rank or dims
   * are legal in shape attrs, never in a value. */
  if (sh.rank < 0) return dfx__status_set(st, DFX_EINVAL, "a tensor value cannot have unknown rank");
  if (sh.rank > DFX_MAX_DIMS) {
    dfx__free(sh.dims);
    return dfx__status_set(st, DFX_EUNIMPL, "tensor rank %d exceeds dfexec's maximum of %d", sh.rank, DFX_MAX_DIMS);
  }
  for (int i = 0; i < sh.rank; i++)
    if (sh.dims[i] < 0) {
      dfx__free(sh.dims);
      return dfx__status_set(st, DFX_EINVAL, "a tensor value cannot have an unknown dimension");
    }
  dfx_code ac;
  /* Zeroed: an empty typed field means all zeros (tf-semantics §1.5), and
   * the size limit applies here, before any content is looked at. */
  dfx_tensor *t = dfx__tensor_zeros(dt, sh.rank, sh.dims, &ac);
  dfx__free(sh.dims);
  if (!t) {
    if (ac == DFX_ENOMEM) return dfx__status_set(st, ac, "out of memory decoding a tensor");
    return dfx__status_set(st, ac, "tensor shape is invalid or exceeds the size limit");
  }
  int64_t n = t->count;
  if (dt == DFX_STRING) {
    c = decode_strings(p, t, st);
  } else if (dt == DFX_RESOURCE) {
    c = DFX_OK; /* handles are opaque and start empty */
  } else if (p->tensor_content.len > 0 && n > 0) { /* as TF: an empty tensor ignores its content */
    /* TF's rule and TF's wording: the raw bytes must be exactly n elements. */
    if (p->tensor_content.len != t->nbytes) {
      c = dfx__status_set(st, DFX_EINVAL, "tensor_content: Input size was %zu and expected %zu",
                          p->tensor_content.len, t->nbytes);
    } else {
      memcpy(t->data, p->tensor_content.data, t->nbytes);
      if (dt == DFX_BOOL)
        /* Newer TF rejects bool bytes other than 0 and 1; dfexec maps any non-zero
         * byte to 1, so kernels only ever see 0 or 1. */
        for (int64_t i = 0; i < n; i++) ((uint8_t *)t->data)[i] = ((uint8_t *)t->data)[i] != 0;
    }
  } else {
    switch (dt) {
      case DFX_F32: FILL(float, float_val, AS_IS); break;
      case DFX_F64: FILL(double, double_val, AS_IS); break;
      case DFX_I32: case DFX_QI32: FILL(int32_t, int_val, AS_IS); break;
      /* int_val carries every narrow integer type as int32 (tf-semantics §1.5);
       * the cast keeps the low bits. half_val holds a 16-bit pattern likewise. */
      case DFX_I16: case DFX_QI16: FILL(int16_t, int_val, (int16_t)); break;
      case DFX_U16: case DFX_QU16: FILL(uint16_t, int_val, (uint16_t)); break;
      case DFX_I8: case DFX_QI8: FILL(int8_t, int_val, (int8_t)); break;
      case DFX_U8: case DFX_QU8: FILL(uint8_t, int_val, (uint8_t)); break;
      case DFX_I64: FILL(int64_t, int64_val, AS_IS); break;
      case DFX_U32: FILL(uint32_t, uint32_val, AS_IS); break;
      case DFX_U64: FILL(uint64_t, uint64_val, AS_IS); break;
      case DFX_BOOL: FILL(uint8_t, bool_val, BOOL01); break;
      case DFX_F16: case DFX_BF16: FILL(uint16_t, half_val, HALF_BITS); break;
      case DFX_C64: {
        dfx_c64 *d = t->data;
        /* Values come as (re, im) pairs: m counts whole pairs, the last pair
         * repeats, and an odd trailing float is ignored. */
        size_t m = p->n_scomplex_val / 2;
        for (int64_t i = 0; i < n && m; i++) {
          size_t k = (size_t)i < m ? (size_t)i : m - 1;
          d[i].re = p->scomplex_val[2 * k];
          d[i].im = p->scomplex_val[2 * k + 1];
        }
        break;
      }
      case DFX_C128: {
        dfx_c128 *d = t->data;
        size_t m = p->n_dcomplex_val / 2;
        for (int64_t i = 0; i < n && m; i++) {
          size_t k = (size_t)i < m ? (size_t)i : m - 1;
          d[i].re = p->dcomplex_val[2 * k];
          d[i].im = p->dcomplex_val[2 * k + 1];
        }
        break;
      }
      default: c = dfx__status_set(st, DFX_EUNIMPL, "tensor dtype %s is not supported", dfx_dtype_name(dt));
    }
  }
  if (c != DFX_OK) {
    dfx__tensor_unref(t);
    return c;
  }
  t->cached = 0; /* lives as long as the graph: never recycle into a thread cache */
  *out = t;
  return DFX_OK;
}

/* ---- encoding (export and the builder) ---- */

Tensorflow__TensorShapeProto *dfx__shape_to_proto(dfx_arena *a, int rank, const int64_t *dims) {
  Tensorflow__TensorShapeProto *sp = dfx__arena_alloc(a, sizeof *sp);
  if (!sp) return NULL;
  *sp = (Tensorflow__TensorShapeProto)TENSORFLOW__TENSOR_SHAPE_PROTO__INIT;
  if (rank < 0) {
    sp->unknown_rank = 1;
    return sp;
  }
  if (rank > 0 && !(sp->dim = dfx__arena_alloc(a, (size_t)rank * sizeof *sp->dim))) return NULL;
  for (int i = 0; i < rank; i++) {
    Tensorflow__TensorShapeProto__Dim *d = dfx__arena_alloc(a, sizeof *d);
    if (!d) return NULL;
    *d = (Tensorflow__TensorShapeProto__Dim)TENSORFLOW__TENSOR_SHAPE_PROTO__DIM__INIT;
    d->size = dims[i];
    sp->dim[sp->n_dim++] = d;
  }
  return sp;
}

Tensorflow__TensorProto *dfx__tensor_to_proto(dfx_arena *a, const dfx_tensor *t) {
  dfx_dtype dt = (dfx_dtype)t->dtype;
  Tensorflow__TensorProto *p = dfx__arena_alloc(a, sizeof *p);
  if (!p) return NULL;
  *p = (Tensorflow__TensorProto)TENSORFLOW__TENSOR_PROTO__INIT;
  p->dtype = (Tensorflow__DataType)dt;
  if (!(p->tensor_shape = dfx__shape_to_proto(a, t->ndims, t->dims))) return NULL;
  size_t cnt = (size_t)t->count;
  switch (dt) {
    case DFX_F32:
      if (!(p->float_val = dfx__arena_memdup(a, t->data, cnt * 4))) return NULL;
      p->n_float_val = cnt;
      break;
    case DFX_F64:
      if (!(p->double_val = dfx__arena_memdup(a, t->data, cnt * 8))) return NULL;
      p->n_double_val = cnt;
      break;
    case DFX_I32:
      if (!(p->int_val = dfx__arena_memdup(a, t->data, cnt * 4))) return NULL;
      p->n_int_val = cnt;
      break;
    case DFX_I64:
      if (!(p->int64_val = dfx__arena_memdup(a, t->data, cnt * 8))) return NULL;
      p->n_int64_val = cnt;
      break;
    /* protobuf-c stores each bool as an int, so no memdup here. */
    case DFX_BOOL:
      if (!(p->bool_val = dfx__arena_alloc(a, cnt * sizeof *p->bool_val))) return NULL;
      for (size_t i = 0; i < cnt; i++) p->bool_val[i] = ((const uint8_t *)t->data)[i] != 0;
      p->n_bool_val = cnt;
      break;
    case DFX_STRING:
      if (!(p->string_val = dfx__arena_alloc(a, cnt * sizeof *p->string_val))) return NULL;
      for (size_t i = 0; i < cnt; i++) {
        const dfx_str *s = &((const dfx_str *)t->data)[i];
        if (!(p->string_val[i].data = dfx__arena_memdup(a, s->ptr, s->len))) return NULL;
        p->string_val[i].len = s->len;
      }
      p->n_string_val = cnt;
      break;
    /* Every other dtype as raw bytes, which tensor_content accepts for any
     * dtype; the typed fields above print as readable numbers in text form. */
    default:
      if (!(p->tensor_content.data = dfx__arena_memdup(a, t->data, t->nbytes))) return NULL;
      p->tensor_content.len = t->nbytes;
      break;
  }
  return p;
}
