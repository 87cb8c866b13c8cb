/* kernel_ctx.c - helpers kernels call from their bodies: output allocation,
 * errors, cancellation, scalar and vector reads, per-run resources. */
#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "kernel.h"
#include "step.h"

/* The precise code (DFX_EINVAL, DFX_ELIMIT, DFX_ENOMEM) goes into the status.
 * Kernels usually just return DFX_ENOMEM after a NULL; the executor then takes
 * the status's code instead (exec/process.c), so both stay correct. */
dfx_tensor *dfx__kctx_alloc(dfx_kctx *ctx, int k, dfx_dtype dtype, int ndims, const int64_t *dims) {
  dfx_code code;
  dfx_tensor *t = dfx__tensor_alloc(dtype, ndims, dims, &code);
  if (!t) {
    char buf[256];
    if (ndims < 0 || ndims > DFX_MAX_DIMS)
      dfx__kctx_fail(ctx, DFX_EINVAL, "output %d has rank %d (at most %d supported)", k, ndims, DFX_MAX_DIMS);
    else if (code == DFX_ENOMEM)
      dfx__kctx_fail(ctx, code, "out of memory allocating output %d of shape %s", k,
                     dfx__shape_str(ndims, dims, buf, sizeof buf));
    else
      dfx__kctx_fail(ctx, code, "cannot allocate output %d with shape %s and dtype %s (invalid or too large)", k,
                     dfx__shape_str(ndims, dims, buf, sizeof buf), dfx_dtype_name(dtype));
    return NULL;
  }
  /* A kernel may allocate output k again (say, once it knows the real size);
   * the earlier tensor is released here instead of leaking. */
  dfx__tensor_unref(ctx->out[k]);
  ctx->out[k] = t;
  return t;
}

/* Overwrites: within one kernel call the last failure is the one reported.
 * Which node's error wins the step is the executor's business, and it adds
 * the node, op, frame and iteration to this message. */
dfx_code dfx__kctx_fail(dfx_kctx *ctx, dfx_code code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  dfx__status_vset(ctx->st, code, fmt, ap);
  va_end(ap);
  return code;
}

bool dfx__kctx_cancelled(const dfx_kctx *ctx) { return dfx__step_is_cancelled(ctx->step); }

dfx_code dfx__kctx_poll(dfx_kctx *ctx) {
  const dfx_step *s = ctx->step;
  /* No step: the kernel is called outside a run and cannot be cancelled. */
  if (!s) return DFX_OK;
  if (dfx__step_is_cancelled(s)) return dfx__kctx_fail(ctx, DFX_ECANCELED, "the run was cancelled");
  /* Only runs with a timeout read the clock; uv_hrtime is monotonic, so a
   * wall-clock change cannot expire or extend a run. */
  if (s->deadline_ns) {
    uint64_t now = uv_hrtime();
    if (now > s->deadline_ns)
      return dfx__kctx_fail(ctx, DFX_EDEADLINE, "run timed out after %.3f s", (double)(now - s->t0_ns) / 1e9);
  }
  return DFX_OK;
}

/* Any shape with one element passes (a [1] as well as a []); a kernel that
 * needs a true scalar checks the rank itself. */
dfx_code dfx__kctx_scalar_i64(dfx_kctx *ctx, int i, const char *what, int64_t *out) {
  const dfx_tensor *t = ctx->in[i];
  if (!dfx__dtype_is_int((dfx_dtype)t->dtype) || t->count != 1) {
    char buf[128];
    return dfx__kctx_fail(ctx, DFX_EINVAL, "%s must be an integer scalar, got %s %s", what,
                          dfx_dtype_name((dfx_dtype)t->dtype), DFX_SHAPE_STR(t, buf));
  }
  *out = dfx__tensor_get_i64(t, 0);
  return DFX_OK;
}

/* A scalar reads as one value. `max` is the capacity of the caller's out
 * buffer: an input longer than that is an error, never an overrun. */
dfx_code dfx__kctx_vector_i64(dfx_kctx *ctx, int i, const char *what, int64_t *out, int max, int *n) {
  const dfx_tensor *t = ctx->in[i];
  if (!dfx__dtype_is_int((dfx_dtype)t->dtype) || t->ndims > 1) {
    char buf[128];
    return dfx__kctx_fail(ctx, DFX_EINVAL, "%s must be an integer vector, got %s %s", what,
                          dfx_dtype_name((dfx_dtype)t->dtype), DFX_SHAPE_STR(t, buf));
  }
  if (t->count > max) return dfx__kctx_fail(ctx, DFX_EINVAL, "%s has %lld elements, at most %d allowed", what,
                                            (long long)t->count, max);
  for (int64_t k = 0; k < t->count; k++) out[k] = dfx__tensor_get_i64(t, k);
  *n = (int)t->count;
  return DFX_OK;
}

/* Takes obj whatever happens: on any failure it is freed before returning,
 * so the caller must not touch it again after an error. The mutex is needed
 * because kernels of one run execute on several pool threads at once. */
dfx_code dfx__kctx_step_own(dfx_kctx *ctx, void *obj, void (*free_fn)(void *obj)) {
  dfx_step *s = ctx->step;
  if (!s) { /* no run (direct kernel call): free now is wrong, so refuse */
    free_fn(obj);
    return dfx__kctx_fail(ctx, DFX_EINTERNAL, "per-run resource created outside a run");
  }
  uv_mutex_lock(&s->mu);
  if (s->n_res == s->cap_res) {
    int ncap = s->cap_res ? s->cap_res * 2 : 8;
    dfx_step_res *nr = dfx__realloc(s->res, sizeof *nr * (size_t)ncap);
    if (!nr) {
      uv_mutex_unlock(&s->mu);
      free_fn(obj);
      return dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory registering a per-run resource");
    }
    s->res = nr;
    s->cap_res = ncap;
  }
  s->res[s->n_res++] = (dfx_step_res){obj, free_fn};
  uv_mutex_unlock(&s->mu);
  return DFX_OK;
}
