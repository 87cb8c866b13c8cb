/* sutil.c - growable vectors and size checks for the sparse family. */
#include "sutil.h"

dfx_code dfx__svec_push(dfx_kctx *ctx, svec *s, int64_t x) {
  if (s->n == s->cap) {
    int64_t cap = s->cap ? s->cap * 2 : 16;
    size_t bytes = dfx__mul_size((size_t)cap, sizeof(int64_t));
    if (cap < 0 || bytes > dfx__tensor_limit())
      return dfx__kctx_fail(ctx, DFX_ELIMIT, "output would exceed the tensor size limit");
    int64_t *v = dfx__realloc(s->v, bytes);
    if (!v) return dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory");
    s->v = v;
    s->cap = cap;
  }
  s->v[s->n++] = x;
  return DFX_OK;
}

dfx_code dfx__s_check_count(dfx_kctx *ctx, const char *what, int64_t n, dfx_dtype dt) {
  size_t bytes = n < 0 ? SIZE_MAX : dfx__mul_size((size_t)n, dfx__dtype_storage(dt));
  if (bytes > dfx__tensor_limit())
    return dfx__kctx_fail(ctx, DFX_ELIMIT, "%s: output of %lld elements exceeds the tensor size limit", what,
                          (long long)n);
  return DFX_OK;
}
