/* convert_api.c - dfx_tensor_convert: the explicit, opt-in dtype conversion
 * for feeds. dfx_session_run never converts (a feed of the wrong dtype is
 * DFX_EINVAL, so a silent narrowing can't hide a caller's bug); a caller who
 * wants the CLI's behaviour asks for it here.
 *
 * Rules, numpy's astype where it is defined: integers and bools convert
 * exactly when the value fits; floats to integers truncate toward zero;
 * anything to bool is "not zero". Where numpy's result is undefined (NaN,
 * an infinity or a value out of range going to an integer type, an
 * integer that does not fit a narrower one) this refuses with DFX_ERANGE
 * naming the element, instead of producing platform garbage. Values pass
 * through int64/uint64 or double, so 64-bit integers keep every bit. */
#include <math.h>
#include <stdio.h>
#include <stdint.h>

#include "dtype.h"
#include "status.h"
#include "tensor.h"

typedef enum { K_INT, K_UINT, K_FLOAT, K_BOOL, K_NONE } kind;

static kind kind_of(dfx_dtype t) {
  switch (t) {
  case DFX_I8: case DFX_I16: case DFX_I32: case DFX_I64: return K_INT;
  case DFX_U8: case DFX_U16: case DFX_U32: case DFX_U64: return K_UINT;
  case DFX_F16: case DFX_BF16: case DFX_F32: case DFX_F64: return K_FLOAT;
  case DFX_BOOL: return K_BOOL;
  default: return K_NONE;
  }
}

/* One source element as (kind, value). */
typedef struct val {
  kind k;
  int64_t i;
  uint64_t u;
  double f;
} val;

static val load(dfx_dtype t, const void *p, int64_t e) {
  switch (t) {
  case DFX_I8: return (val){K_INT, ((const int8_t *)p)[e], 0, 0};
  case DFX_I16: return (val){K_INT, ((const int16_t *)p)[e], 0, 0};
  case DFX_I32: return (val){K_INT, ((const int32_t *)p)[e], 0, 0};
  case DFX_I64: return (val){K_INT, ((const int64_t *)p)[e], 0, 0};
  case DFX_U8: return (val){K_UINT, 0, ((const uint8_t *)p)[e], 0};
  case DFX_U16: return (val){K_UINT, 0, ((const uint16_t *)p)[e], 0};
  case DFX_U32: return (val){K_UINT, 0, ((const uint32_t *)p)[e], 0};
  case DFX_U64: return (val){K_UINT, 0, ((const uint64_t *)p)[e], 0};
  case DFX_F16: return (val){K_FLOAT, 0, 0, dfx__f16_to_f32(((const uint16_t *)p)[e])};
  case DFX_BF16: return (val){K_FLOAT, 0, 0, dfx__bf16_to_f32(((const uint16_t *)p)[e])};
  case DFX_F32: return (val){K_FLOAT, 0, 0, ((const float *)p)[e]};
  case DFX_F64: return (val){K_FLOAT, 0, 0, ((const double *)p)[e]};
  default: return (val){K_BOOL, ((const uint8_t *)p)[e] != 0, 0, 0};
  }
}

/* The value as a signed integer in [lo, hi], or false. */
static bool as_int(val v, int64_t lo, int64_t hi, int64_t *out) {
  if (v.k == K_FLOAT) {
    if (!isfinite(v.f)) return false;
    double tr = trunc(v.f);
    if (tr < (double)lo || tr >= -(double)INT64_MIN || tr > (double)hi) return false;
    *out = (int64_t)tr;
    return *out >= lo && *out <= hi;
  }
  if (v.k == K_UINT) {
    if (v.u > (uint64_t)hi) return false;
    *out = (int64_t)v.u;
    return true;
  }
  if (v.i < lo || v.i > hi) return false;
  *out = v.i;
  return true;
}

static bool as_uint(val v, uint64_t hi, uint64_t *out) {
  if (v.k == K_FLOAT) {
    if (!isfinite(v.f)) return false;
    double tr = trunc(v.f);
    if (tr < 0 || tr >= 18446744073709551616.0 || tr > (double)hi) return false;
    *out = (uint64_t)tr;
    return *out <= hi;
  }
  if (v.k == K_UINT) {
    *out = v.u;
    return v.u <= hi;
  }
  if (v.i < 0 || (uint64_t)v.i > hi) return false;
  *out = (uint64_t)v.i;
  return true;
}

static double as_double(val v) { return v.k == K_FLOAT ? v.f : v.k == K_UINT ? (double)v.u : (double)v.i; }

static bool store(dfx_dtype t, void *p, int64_t e, val v) {
  int64_t i;
  uint64_t u;
  switch (t) {
  case DFX_I8: if (!as_int(v, INT8_MIN, INT8_MAX, &i)) return false; ((int8_t *)p)[e] = (int8_t)i; return true;
  case DFX_I16: if (!as_int(v, INT16_MIN, INT16_MAX, &i)) return false; ((int16_t *)p)[e] = (int16_t)i; return true;
  case DFX_I32: if (!as_int(v, INT32_MIN, INT32_MAX, &i)) return false; ((int32_t *)p)[e] = (int32_t)i; return true;
  case DFX_I64: if (!as_int(v, INT64_MIN, INT64_MAX, &i)) return false; ((int64_t *)p)[e] = i; return true;
  case DFX_U8: if (!as_uint(v, UINT8_MAX, &u)) return false; ((uint8_t *)p)[e] = (uint8_t)u; return true;
  case DFX_U16: if (!as_uint(v, UINT16_MAX, &u)) return false; ((uint16_t *)p)[e] = (uint16_t)u; return true;
  case DFX_U32: if (!as_uint(v, UINT32_MAX, &u)) return false; ((uint32_t *)p)[e] = (uint32_t)u; return true;
  case DFX_U64: if (!as_uint(v, UINT64_MAX, &u)) return false; ((uint64_t *)p)[e] = u; return true;
  case DFX_F16: ((uint16_t *)p)[e] = dfx__f32_to_f16((float)as_double(v)); return true;
  case DFX_BF16: ((uint16_t *)p)[e] = dfx__f32_to_bf16((float)as_double(v)); return true;
  case DFX_F32: ((float *)p)[e] = (float)as_double(v); return true;
  case DFX_F64: ((double *)p)[e] = as_double(v); return true;
  default: ((uint8_t *)p)[e] = v.k == K_FLOAT ? v.f != 0 : v.k == K_UINT ? v.u != 0 : v.i != 0; return true;
  }
}

dfx_code dfx_tensor_convert(const dfx_tensor *t, dfx_dtype to, dfx_tensor **out, dfx_status *st) {
  if (out) *out = NULL;
  if (!t || !out) return dfx__status_set(st, DFX_EINVAL, "dfx_tensor_convert: NULL argument");
  dfx_dtype from = (dfx_dtype)t->dtype;
  if (kind_of(from) == K_NONE || kind_of(to) == K_NONE)
    return dfx__status_set(st, DFX_EINVAL, "dfx_tensor_convert: cannot convert %s to %s (numbers and bools only)",
                           dfx_dtype_name(from), dfx_dtype_name(to));
  dfx_tensor *r = dfx_tensor_new(to, t->dims, t->ndims);
  if (!r) return dfx__status_set(st, DFX_ENOMEM, "out of memory");
  for (int64_t e = 0; e < t->count; e++) {
    val v = load(from, t->data, e);
    if (!store(to, r->data, e, v)) {
      char buf[64];
      if (v.k == K_FLOAT) snprintf(buf, sizeof buf, "%.17g", v.f);
      else if (v.k == K_UINT) snprintf(buf, sizeof buf, "%llu", (unsigned long long)v.u);
      else snprintf(buf, sizeof buf, "%lld", (long long)v.i);
      dfx_tensor_free(r);
      return dfx__status_set(st, DFX_ERANGE, "dfx_tensor_convert: element %lld (%s) does not fit %s", (long long)e,
                             buf, dfx_dtype_name(to));
    }
  }
  *out = r;
  return DFX_OK;
}
