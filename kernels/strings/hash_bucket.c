/* hash_bucket.c - StringToHashBucketFast: Fingerprint64(s) mod num_buckets
 * (unsigned), as TF computes it; same shape as the input, int64. */
#include "sutil.h"

static dfx_code hash_bucket_fast_kernel(dfx_kctx *ctx) {
  const dfx_tensor *x = ctx->in[0];
  int64_t nb = dfx__attr_int(ctx->node, "num_buckets", 1);
  if (nb < 1) return dfx__kctx_fail(ctx, DFX_EINVAL, "num_buckets must be >= 1, got %lld", (long long)nb);
  dfx_tensor *out = dfx__kctx_alloc(ctx, 0, DFX_I64, x->ndims, x->dims);
  if (!out) return ctx->st->code;
  const dfx_str *s = x->data;
  int64_t *o = out->data;
  for (int64_t k = 0; k < x->count; k++) {
    o[k] = (int64_t)(dfx__s_fingerprint64(s[k].ptr ? s[k].ptr : "", s[k].len) % (uint64_t)nb);
    dfx_code c = str_poll(ctx, k + 1);
    if (c) return c;
  }
  return DFX_OK;
}

static const dfx_kernel_def kernels[] = {{"StringToHashBucketFast", NULL, hash_bucket_fast_kernel, 0}, {NULL}};

void dfx__kernels_strings_hash_bucket(dfx_registry *r);
void dfx__kernels_strings_hash_bucket(dfx_registry *r) { dfx__kernels_add(r, kernels); }
