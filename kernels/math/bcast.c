/* bcast.c - numpy/TF broadcasting of two or three dense operands.
 * Dimensions are right-aligned; a dimension of 1 stretches. Output dims of 1
 * are dropped and adjacent dims with the same broadcast pattern are merged, so
 * the general loop walks as few dims as possible. */
#include <stdio.h>
#include <string.h>

#include "ew.h"

const dfx_bcast dfx__bcast_scalars = {.ndims = 0, .count = 1, .kind = DFX_BC_SAME, .nd = 1, .cd = {1}};

/* All operands scalars: the common case in while loops, worth a short cut. */
static bool all_scalars(dfx_bcast *b, int n, const dfx_tensor *const *ts) {
  for (int k = 0; k < n; k++)
    if (ts[k]->ndims != 0) return false;
  b->ndims = 0;
  b->count = 1;
  b->kind = DFX_BC_SAME;
  b->nd = 1;
  b->cd[0] = 1;
  for (int k = 0; k < 3; k++) b->s[k][0] = 0;
  return true;
}

bool dfx__bcast_init(dfx_bcast *b, int n, const dfx_tensor *const *ts) {
  if (all_scalars(b, n, ts)) return true;
  int nd = 0;
  for (int k = 0; k < n; k++)
    if (ts[k]->ndims > nd) nd = ts[k]->ndims;
  b->ndims = nd;
  /* full[k][d]: operand k spans output dim d (rather than broadcasting). */
  bool full[3][DFX_MAX_DIMS];
  int64_t count = 1;
  bool zero = false, overflow = false;
  for (int d = 0; d < nd; d++) {
    int64_t out = 1;
    for (int k = 0; k < n; k++) {
      int off = nd - ts[k]->ndims;
      int64_t dk = d < off ? 1 : ts[k]->dims[d - off];
      if (dk == 1) continue;
      /* TF's BCast rule: every size other than 1 must agree on a dim. */
      if (out != 1 && dk != out) return false;
      out = dk;
    }
    for (int k = 0; k < n; k++) {
      int off = nd - ts[k]->ndims;
      int64_t dk = d < off ? 1 : ts[k]->dims[d - off];
      /* When out is 1 every operand counts as full; the collapse drops such
       * dims anyway. */
      full[k][d] = dk == out;
    }
    b->dims[d] = out;
    if (out == 0)
      zero = true;
    else if (__builtin_mul_overflow(count, out, &count))
      overflow = true;
  }
  /* Empty operands may carry huge dims ([2^62, 1, 0] and [1, 2^62, 0]): the
   * output has no elements, or more than an int64 counts, which allocating
   * it rejects. Either way no loop runs, so skip the collapse, whose
   * products could overflow. */
  if (zero || overflow) {
    b->count = 0;
    b->kind = DFX_BC_GENERAL;
    b->nd = 1;
    b->cd[0] = 0;
    for (int k = 0; k < 3; k++) b->s[k][0] = 0;
    return true;
  }
  b->count = count;
  /* Fast-path kinds for two operands. */
  /* An operand with all `count` elements stretches no dim, so its row-major
   * order is the output's ([6] against [1,6], say): one index serves all. */
  if (ts[0]->count == count && ts[1]->count == count && (n < 3 || ts[2]->count == count))
    b->kind = DFX_BC_SAME;
  else if (n == 2 && ts[0]->count == 1)
    b->kind = DFX_BC_XSCALAR;
  else if (n == 2 && ts[1]->count == 1)
    b->kind = DFX_BC_YSCALAR;
  else
    b->kind = DFX_BC_GENERAL;
  /* Collapse: drop output dims of 1, merge neighbours with equal patterns. */
  int cn = 0;
  bool pat[DFX_MAX_DIMS][3];
  for (int d = 0; d < nd; d++) {
    if (b->dims[d] == 1) continue;
    bool same = cn > 0;
    for (int k = 0; k < n && same; k++) same = pat[cn - 1][k] == full[k][d];
    if (same) {
      /* Neighbours where every operand is full (or every one broadcasts) the
       * same way form one contiguous block, so they walk as one dim. */
      b->cd[cn - 1] *= b->dims[d];
    } else {
      b->cd[cn] = b->dims[d];
      for (int k = 0; k < n; k++) pat[cn][k] = full[k][d];
      cn++;
    }
  }
  if (cn == 0) { /* a single element */
    b->cd[0] = 1;
    for (int k = 0; k < 3; k++) b->s[k][0] = 0;
    b->nd = 1;
    return true;
  }
  b->nd = cn;
  for (int k = 0; k < n; k++) {
    int64_t stride = 1;
    for (int d = cn - 1; d >= 0; d--) {
      /* An operand's stride is the product of its full dims to the right; a
       * broadcast dim has stride 0, so the loop re-reads the same elements. */
      b->s[k][d] = pat[d][k] ? stride : 0;
      if (pat[d][k]) stride *= b->cd[d];
    }
  }
  if (n < 3)
    for (int d = 0; d < cn; d++) b->s[2][d] = 0;
  return true;
}

int64_t dfx__bcast_grain(const dfx_bcast *bc, int64_t want) {
  const int64_t in = bc->cd[bc->nd - 1];
  if (bc->kind != DFX_BC_GENERAL || in == 0) return want; /* in == 0: an empty output */
  /* EW_LOOP2 rebuilds its position from lo / in, so a general-path range
   * must start on a row: round want down to whole rows, at least one. */
  return in >= want ? in : want / in * in;
}

dfx_code dfx__ew_run_bin_chunked(dfx_kctx *ctx, dfx_ew_bin_fn fn, const dfx_bcast *bc, dfx_dtype t, const void *a,
                                 const void *b, void *o, int *bad) {
  const int64_t n = bc->count, grain = dfx__bcast_grain(bc, EW_POLL_GRAIN);
  *bad = 0;
  for (int64_t lo = 0; lo < n; lo += grain) {
    /* No poll before the first chunk: a one-chunk tensor never polls. */
    if (lo > 0) {
      dfx_code c = dfx__kctx_poll(ctx);
      if (c != DFX_OK) return c;
    }
    if (fn(bc, lo, n - lo > grain ? lo + grain : n, t, a, b, o, bad) < 0) return dfx__ew_unsupported(ctx, t);
    /* An element error (integer division by zero, ...) ends the work; the
     * caller turns `bad` into the message. */
    if (*bad) break;
  }
  return DFX_OK;
}

dfx_code dfx__bcast_fail(dfx_kctx *ctx, const dfx_tensor *x, const dfx_tensor *y) {
  char bx[128], by[128];
  return dfx__kctx_fail(ctx, DFX_EINVAL, "Incompatible shapes: %s vs. %s", DFX_SHAPE_STR(x, bx),
                        DFX_SHAPE_STR(y, by));
}

dfx_code dfx__ew_unsupported(dfx_kctx *ctx, dfx_dtype t) {
  return dfx__kctx_fail(ctx, DFX_EUNIMPL, "%s does not support dtype %s", ctx->node ? ctx->node->op : "op",
                        dfx_dtype_name(t));
}
