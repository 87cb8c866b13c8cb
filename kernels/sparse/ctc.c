/* ctc.c - CTCGreedyDecoder and CTCBeamSearchDecoder (TensorFlow's CTC
 * decoders without a language model). inputs are time-major logits
 * [max_time, batch, num_classes]; element b decodes its first
 * sequence_length[b] steps. The decoded paths come out as one SparseTensor
 * per path (indices [n, 2] = (batch, position), values, dense shape
 * [batch, longest]) plus log_probability [batch, top_paths]. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sutil.h"

#define CTC_T float
#define CTC_F f32
#include "ctc_beam_impl.h"
#undef CTC_T
#undef CTC_F
#define CTC_T double
#define CTC_F f64
#include "ctc_beam_impl.h"
#undef CTC_T
#undef CTC_F

/* TF's CTCDecodeHelper::ValidateInputsGenerateOutputs, minus the outputs. */
static dfx_code validate(dfx_kctx *ctx, int64_t *max_time, int64_t *batch, int32_t *classes) {
  const dfx_tensor *in = ctx->in[0], *seq = ctx->in[1];
  if (in->ndims != 3) return dfx__kctx_fail(ctx, DFX_EINVAL, "inputs is not a 3-Tensor");
  if (in->count == 0) return dfx__kctx_fail(ctx, DFX_EINVAL, "inputs must not be empty");
  *max_time = in->dims[0];
  *batch = in->dims[1];
  if (seq->ndims != 1) return dfx__kctx_fail(ctx, DFX_EINVAL, "sequence_length is not a vector");
  if (seq->dims[0] != *batch)
    return dfx__kctx_fail(ctx, DFX_EPRECOND, "len(sequence_length) != batch_size.  len(sequence_length):  %lld batch_size: %lld",
                          (long long)seq->dims[0], (long long)*batch);
  const int32_t *sl = seq->data;
  for (int64_t b = 0; b < *batch; b++)
    if (!(sl[b] <= *max_time))
      return dfx__kctx_fail(ctx, DFX_EPRECOND, "sequence_length(%lld) <= %lld", (long long)b, (long long)*max_time);
  if (in->dims[2] > INT32_MAX) return dfx__kctx_fail(ctx, DFX_EINVAL, "num_classes cannot exceed max int");
  *classes = (int32_t)in->dims[2];
  return DFX_OK;
}

/* Writes path p's SparseTensor: outputs p, top + p and 2 * top + p. */
static dfx_code store_path(dfx_kctx *ctx, int top, int p, int64_t batch, const svec *vals, const int64_t *lens) {
  int64_t n = vals->n, idims[2] = {n, 2}, sdims[1] = {2};
  dfx_tensor *ind = dfx__kctx_alloc(ctx, p, DFX_I64, 2, idims);
  dfx_tensor *val = ind ? dfx__kctx_alloc(ctx, top + p, DFX_I64, 1, &n) : NULL;
  dfx_tensor *shp = val ? dfx__kctx_alloc(ctx, 2 * top + p, DFX_I64, 1, sdims) : NULL;
  if (!shp) return ctx->st->code;
  int64_t *iv = ind->data, off = 0, longest = 0;
  if (n) memcpy(val->data, vals->v, (size_t)n * sizeof(int64_t));
  for (int64_t b = 0; b < batch; b++) {
    int64_t k = lens[b * top + p];
    if (k > longest) longest = k;
    for (int64_t t = 0; t < k; t++, off++) {
      iv[2 * off] = b;
      iv[2 * off + 1] = t;
    }
  }
  ((int64_t *)shp->data)[0] = batch;
  ((int64_t *)shp->data)[1] = longest;
  return DFX_OK;
}

static dfx_code greedy_kernel(dfx_kctx *ctx) {
  int64_t max_time = 0, batch = 0; /* set by validate; zeroed for -O3 -Werror's flow analysis */
  int32_t classes = 0;
  dfx_code code = validate(ctx, &max_time, &batch, &classes);
  if (code) return code;
  dfx_dtype dt = (dfx_dtype)ctx->in[0]->dtype;
  int64_t ldims[2] = {batch, 1};
  dfx_tensor *lp = dfx__kctx_alloc(ctx, 3, dt, 2, ldims);
  if (!lp) return ctx->st->code;
  int64_t attr_blank = dfx__attr_int(ctx->node, "blank_index", -1);
  int64_t blank = attr_blank < 0 ? classes + attr_blank : attr_blank;
  if (blank < 0 || blank >= classes)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "blank_index expected to be between %d and %d but was %lld", -classes,
                          classes - 1, (long long)attr_blank);
  bool merge = dfx__attr_bool(ctx->node, "merge_repeated", false);
  const int32_t *seq = ctx->in[1]->data;
  svec vals = {0};
  int64_t *lens = dfx__calloc((size_t)batch, sizeof(int64_t)), left = DFX_S_POLL_EVERY;
  if (!lens) return dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory");
  for (int64_t b = 0; b < batch && !code; b++) {
    int64_t before = vals.n;
    if (dt == DFX_F32)
      code = greedy_f32(ctx, ctx->in[0]->data, batch, classes, b, seq[b], blank, merge, &vals, (float *)lp->data + b);
    else
      code = greedy_f64(ctx, ctx->in[0]->data, batch, classes, b, seq[b], blank, merge, &vals, (double *)lp->data + b);
    lens[b] = vals.n - before;
    if (!code) code = stick(ctx, &left, (seq[b] > 0 ? seq[b] : 0) * (int64_t)classes + 1);
  }
  if (!code) code = store_path(ctx, 1, 0, batch, &vals, lens);
  svec_free(&vals);
  dfx__free(lens);
  return code;
}

static dfx_code beam_kernel(dfx_kctx *ctx) {
  int64_t max_time = 0, batch = 0; /* set by validate; zeroed for -O3 -Werror's flow analysis */
  int32_t classes = 0;
  dfx_code code = validate(ctx, &max_time, &batch, &classes);
  if (code) return code;
  dfx_dtype dt = (dfx_dtype)ctx->in[0]->dtype;
  int64_t width = dfx__attr_int(ctx->node, "beam_width", 1), top = dfx__attr_int(ctx->node, "top_paths", 1);
  if (width < 1 || width > INT32_MAX || top < 1 || top > INT32_MAX || 3 * top + 1 != ctx->n_out)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "beam_width and top_paths must be in [1, 2^31)");
  bool merge = dfx__attr_bool(ctx->node, "merge_repeated", true);
  int64_t ldims[2] = {batch, top};
  if (dfx__s_check_count(ctx, "log_probability", batch * top, dt)) return ctx->st->code;
  dfx_tensor *lp = dfx__kctx_alloc(ctx, 3 * (int)top, dt, 2, ldims);
  if (!lp) return ctx->st->code;
  svec *paths = dfx__calloc((size_t)top, sizeof(svec));
  int64_t *lens = dfx__calloc((size_t)(batch * top), sizeof(int64_t));
  if (!paths || !lens) {
    code = dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory");
    goto done;
  }
  if (dt == DFX_F32)
    code = beam_all_f32(ctx, ctx->in[0]->data, batch, classes, ctx->in[1]->data, (int32_t)width, (int32_t)top, merge,
                        paths, lens, lp->data);
  else
    code = beam_all_f64(ctx, ctx->in[0]->data, batch, classes, ctx->in[1]->data, (int32_t)width, (int32_t)top, merge,
                        paths, lens, lp->data);
  for (int p = 0; p < top && !code; p++) code = store_path(ctx, (int)top, p, batch, &paths[p], lens);
done:
  for (int64_t p = 0; paths && p < top; p++) svec_free(&paths[p]);
  dfx__free(paths);
  dfx__free(lens);
  return code;
}

static const dfx_kernel_def kernels[] = {
    {"CTCGreedyDecoder", "T: {float, double}", greedy_kernel, 0, NULL, NULL},
    {"CTCBeamSearchDecoder", "T: {float, double}", beam_kernel, 0, NULL, NULL},
    {NULL}};

void dfx__kernels_sparse_ctc(dfx_registry *r);
void dfx__kernels_sparse_ctc(dfx_registry *r) { dfx__kernels_add(r, kernels); }
