/* qutil.h - the quantized dtypes as plain integers, and the per-node
 * attributes QuantizeV2 and Dequantize share. TF computes every formula in
 * float (not double), so the kernels do too: results then agree with TF's to
 * the bit wherever TF's own arithmetic is well defined. */
#ifndef DFX_QUTIL_H
#define DFX_QUTIL_H

#include <stdint.h>

#include "kernel.h"

enum { QMODE_MIN_COMBINED, QMODE_MIN_FIRST, QMODE_SCALED };

typedef struct qattrs {
  int mode;           /* QMODE_* */
  int half_to_even;   /* round_mode HALF_TO_EVEN (QuantizeV2, SCALED only) */
  int narrow_range;
  int64_t axis;       /* -1 (or below): one range for the whole tensor */
  float ensure_min;   /* QuantizeV2's ensure_minimum_range */
} qattrs;

/* The integer range of a quantized dtype (qint8 ... qint32). */
typedef struct qlimits {
  int64_t lo, hi;
  int bits;
  int is_signed;
} qlimits;

static inline qlimits q_limits(dfx_dtype t) {
  switch (t) {
  case DFX_QI8: return (qlimits){INT8_MIN, INT8_MAX, 8, 1};
  case DFX_QU8: return (qlimits){0, UINT8_MAX, 8, 0};
  case DFX_QI16: return (qlimits){INT16_MIN, INT16_MAX, 16, 1};
  case DFX_QU16: return (qlimits){0, UINT16_MAX, 16, 0};
  default: return (qlimits){INT32_MIN, INT32_MAX, 32, 1}; /* qint32 */
  }
}

static inline int64_t q_load(dfx_dtype t, const void *p, int64_t i) {
  switch (t) {
  case DFX_QI8: return ((const int8_t *)p)[i];
  case DFX_QU8: return ((const uint8_t *)p)[i];
  case DFX_QI16: return ((const int16_t *)p)[i];
  case DFX_QU16: return ((const uint16_t *)p)[i];
  default: return ((const int32_t *)p)[i];
  }
}

static inline void q_store(dfx_dtype t, void *p, int64_t i, int64_t v) {
  switch (t) {
  case DFX_QI8: ((int8_t *)p)[i] = (int8_t)v; break;
  case DFX_QU8: ((uint8_t *)p)[i] = (uint8_t)v; break;
  case DFX_QI16: ((int16_t *)p)[i] = (int16_t)v; break;
  case DFX_QU16: ((uint16_t *)p)[i] = (uint16_t)v; break;
  default: ((int32_t *)p)[i] = (int32_t)v; break;
  }
}

/* TF casts a float to the quantized type after clamping to the range, but
 * float rounding can still land one past it (qint32's 2^31); saturate
 * there instead of overflowing, and map NaN to 0. */
static inline int64_t q_saturate(double v, qlimits l) {
  if (v != v) return 0;
  if (v <= (double)l.lo) return l.lo;
  if (v >= (double)l.hi) return l.hi;
  return (int64_t)v; /* truncates toward zero, like a C++ cast */
}

/* Reads the attrs (mode, round_mode, narrow_range, axis,
 * ensure_minimum_range) into a new qattrs for the node's state. */
dfx_code dfx__quant_attrs(const dfx_node *n, int quantize, void **state, dfx_status *st);
void dfx__quant_attrs_free(void *state);
/* Checks axis against the input's rank and the range inputs' sizes; sets
 * *slices (1 for the whole tensor) and the outer/inner extents. */
dfx_code dfx__quant_layout(dfx_kctx *ctx, const qattrs *a, const char *min_name, const char *max_name,
                           int64_t *slices, int64_t *outer, int64_t *inner);

#endif
