/* nn_util.c - helpers shared by the nn kernel files (see nn_util.h). */
#include "nn_util.h"

#include <string.h>

#include "kdispatch.h"

dfx_code dfx__nn_axes_mask(dfx_kctx *ctx, int i, int rank, bool *mask) {
  const dfx_tensor *a = ctx->in[i];
  for (int d = 0; d < rank; d++) mask[d] = false;
  if (a->dtype != DFX_I32 && a->dtype != DFX_I64)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "reduction indices must be int32 or int64, got %s",
                          dfx_dtype_name((dfx_dtype)a->dtype));
  for (int64_t k = 0; k < a->count; k++) {
    int64_t v = a->dtype == DFX_I32 ? ((const int32_t *)a->data)[k] : ((const int64_t *)a->data)[k];
    if (v < -rank || v >= rank)
      return dfx__kctx_fail(ctx, DFX_EINVAL, "Invalid reduction dimension (%lld for input with %d dimension(s)",
                            (long long)v, rank);
    int d = (int)(v < 0 ? v + rank : v);
    if (mask[d])
      return dfx__kctx_fail(ctx, DFX_EINVAL,
                            "Invalid reduction arguments: Axes contains duplicate dimension: %d", d);
    mask[d] = true;
  }
  return DFX_OK;
}

void dfx__nn_int_limits(dfx_dtype t, int64_t *lo, int64_t *hi) {
  switch (t) {
  case DFX_I8: *lo = INT8_MIN; *hi = INT8_MAX; break;
  case DFX_I16: *lo = INT16_MIN; *hi = INT16_MAX; break;
  case DFX_I32: *lo = INT32_MIN; *hi = INT32_MAX; break;
  case DFX_U8: *lo = 0; *hi = UINT8_MAX; break;
  case DFX_U16: *lo = 0; *hi = UINT16_MAX; break;
  case DFX_U32: *lo = 0; *hi = UINT32_MAX; break;
  case DFX_U64: *lo = 0; *hi = INT64_MAX; break;
  default: *lo = INT64_MIN; *hi = INT64_MAX; break;
  }
}

double dfx__nn_load(const void *data, dfx_dtype t, int64_t i) {
  switch (t) {
  case DFX_F16: return dfx__f16_to_f32(((const uint16_t *)data)[i]);
  case DFX_BF16: return dfx__bf16_to_f32(((const uint16_t *)data)[i]);
  case DFX_BOOL: return ((const uint8_t *)data)[i];
#define C(DT, T) \
  case DT: return (double)((const T *)data)[i];
    DFX_REAL_TYPES(C)
#undef C
  default: return 0;
  }
}

void dfx__nn_store(void *data, dfx_dtype t, int64_t i, double v) {
  switch (t) {
  case DFX_F16: ((uint16_t *)data)[i] = dfx__f32_to_f16((float)v); break;
  case DFX_BF16: ((uint16_t *)data)[i] = dfx__f32_to_bf16((float)v); break;
  case DFX_F32: ((float *)data)[i] = (float)v; break;
  case DFX_F64: ((double *)data)[i] = v; break;
#define C(DT, T) \
  case DT: ((T *)data)[i] = (T)v; break;
    DFX_INT_TYPES(C)
#undef C
  default: break;
  }
}

void dfx__nn_store_index(void *data, dfx_dtype t, int64_t i, int64_t v) {
  switch (t) {
  case DFX_I16: ((int16_t *)data)[i] = (int16_t)v; break;
  case DFX_U16: ((uint16_t *)data)[i] = (uint16_t)v; break;
  case DFX_I32: ((int32_t *)data)[i] = (int32_t)v; break;
  default: ((int64_t *)data)[i] = v; break;
  }
}
