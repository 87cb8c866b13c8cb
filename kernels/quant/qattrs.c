/* qattrs.c - attribute and layout checks QuantizeV2 and Dequantize share
 * (TF's messages: axis below the rank, one range per slice). */
#include <string.h>

#include "alloc.h"
#include "qutil.h"

dfx_code dfx__quant_attrs(const dfx_node *n, int quantize, void **state, dfx_status *st) {
  qattrs a = {0};
  const char *mode = dfx__attr_str(n, "mode", "MIN_COMBINED");
  if (!strcmp(mode, "MIN_COMBINED")) a.mode = QMODE_MIN_COMBINED;
  else if (!strcmp(mode, "MIN_FIRST")) a.mode = QMODE_MIN_FIRST;
  else if (!strcmp(mode, "SCALED")) a.mode = QMODE_SCALED;
  else
    return dfx__status_set(st, DFX_EINVAL, "Mode string must be 'MIN_COMBINED', 'MIN_FIRST', or 'SCALED', is '%s'",
                           mode);
  if (quantize) {
    const char *rm = dfx__attr_str(n, "round_mode", "HALF_AWAY_FROM_ZERO");
    if (!strcmp(rm, "HALF_TO_EVEN")) {
      if (a.mode != QMODE_SCALED)
        return dfx__status_set(st, DFX_EINVAL, "Round mode 'HALF_TO_EVEN' only supported for mode 'SCALED', but mode is '%s'",
                               mode);
      a.half_to_even = 1;
    } else if (strcmp(rm, "HALF_AWAY_FROM_ZERO") != 0) {
      return dfx__status_set(st, DFX_EINVAL, "Round mode string must be 'HALF_AWAY_FROM_ZERO' or 'HALF_TO_EVEN', is '%s'",
                             rm);
    }
    a.ensure_min = dfx__attr_float(n, "ensure_minimum_range", 0.01f);
  }
  a.narrow_range = dfx__attr_bool(n, "narrow_range", false);
  a.axis = dfx__attr_int(n, "axis", -1);
  qattrs *p = dfx__malloc(sizeof *p);
  if (!p) return dfx__status_set(st, DFX_ENOMEM, "out of memory");
  *p = a;
  *state = p;
  return DFX_OK;
}

void dfx__quant_attrs_free(void *state) { dfx__free(state); }

dfx_code dfx__quant_layout(dfx_kctx *ctx, const qattrs *a, const char *min_name, const char *max_name,
                           int64_t *slices, int64_t *outer, int64_t *inner) {
  const dfx_tensor *x = ctx->in[0], *mn = ctx->in[1], *mx = ctx->in[2];
  if (a->axis >= x->ndims)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Axis must be less than input dimension(%d), got %lld", x->ndims,
                          (long long)a->axis);
  int64_t n = 1, o = 1, in = 1;
  if (a->axis > -1) {
    n = x->dims[a->axis];
    for (int i = 0; i < a->axis; i++) o *= x->dims[i];
    for (int i = (int)a->axis + 1; i < x->ndims; i++) in *= x->dims[i];
  } else {
    in = x->count;
  }
  if (mn->count != n)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "%s must have as many elements as input on the quantization axis (%lld), got %lld, expected %lld",
                          min_name, (long long)a->axis, (long long)mn->count, (long long)n);
  if (mx->count != n)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "%s must have as many elements as input on the quantization axis (%lld), got %lld, expected %lld",
                          max_name, (long long)a->axis, (long long)mx->count, (long long)n);
  if (n != 1 && a->mode == QMODE_MIN_FIRST)
    return dfx__kctx_fail(ctx, DFX_EUNIMPL, "MIN_FIRST mode is not implemented for %s with axis != -1",
                          ctx->n_out == 3 ? "Quantize" : "Dequantize");
  if (n == 1) o = 1, in = x->count; /* one slice: the whole tensor */
  *slices = n, *outer = o, *inner = in;
  return DFX_OK;
}
