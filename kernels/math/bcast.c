/* bcast.c - numpy/TF broadcasting of two or three dense operands.
 * Dimensions are right-aligned; a dimension of 1 stretches. Output dims of 1
 * are dropped and adjacent dims with the same broadcast pattern are merged, so
 * the general loop walks as few dims as possible. */
#include <stdio.h>
#include <string.h>

#include "ew.h"
#include "simd/simd.h"

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

/* ---- parallel and SIMD paths ---- */

typedef struct bin_job {
  dfx_kctx *ctx;
  dfx_ew_bin_fn fn;
  const dfx_bcast *bc;
  dfx_dtype t;
  const char *a, *b;
  char *o;
  bool in_place;
  int unsupported, bad; /* atomic flags from the blocks */
} bin_job;

/* Output elements [lo, hi), in pieces that stop once the run is cancelled
 * or an element error is seen. */
static void bin_block(void *arg, int64_t lo, int64_t hi) {
  bin_job *j = arg;
  int bad = 0, r = 0;
  if (j->in_place) { /* same shapes: element i of a, b and o line up */
    _Alignas(64) unsigned char tmp[4096];
    const size_t es = dfx__dtype_storage(j->t);
    const int64_t per = (int64_t)(sizeof tmp / es);
    dfx_bcast chunk = *j->bc;
    for (int64_t i = lo; i < hi && r >= 0 && !bad; i += per) {
      chunk.count = hi - i < per ? hi - i : per;
      size_t off = (size_t)i * es;
      r = j->fn(&chunk, 0, chunk.count, j->t, j->a + off, j->b + off, tmp, &bad);
      if (r >= 0 && !bad) memcpy(j->o + off, tmp, (size_t)chunk.count * es);
      if (dfx__kctx_cancelled(j->ctx)) break; /* one relaxed load per 4 KB */
    }
  } else {
    const int64_t grain = dfx__bcast_grain(j->bc, EW_POLL_GRAIN);
    for (int64_t i = lo; i < hi && r >= 0 && !bad; i += grain) {
      r = j->fn(j->bc, i, hi - i > grain ? i + grain : hi, j->t, j->a, j->b, j->o, &bad);
      if (dfx__kctx_cancelled(j->ctx)) break;
    }
  }
  if (r < 0) __atomic_store_n(&j->unsupported, 1, __ATOMIC_RELAXED);
  if (bad) __atomic_store_n(&j->bad, bad, __ATOMIC_RELAXED);
}

dfx_code dfx__ew_run_bin_par(dfx_kctx *ctx, dfx_ew_bin_fn fn, const dfx_bcast *bc, dfx_dtype t, const void *a,
                             const void *b, void *o, bool in_place, int *bad) {
  bin_job j = {.ctx = ctx, .fn = fn, .bc = bc, .t = t, .a = a, .b = b, .o = o, .in_place = in_place};
  /* Blocks start on a row of the general path, and hold at least 16
   * elements: whole cache lines of float output per thread. */
  int64_t grain = dfx__bcast_grain(bc, 16);
  dfx__kctx_parallel_for(ctx, bc->count, &(dfx_par_cost){.unit_ns = EW_BIN_UNIT_NS, .grain = grain}, bin_block, &j);
  *bad = j.bad;
  if (j.unsupported) return dfx__ew_unsupported(ctx, t);
  return *bad ? DFX_OK : dfx__kctx_poll(ctx);
}

bool dfx__ew_simd_bin_f32(int op, const dfx_bcast *bc, int64_t lo, int64_t hi, const float *a, const float *b,
                          float *o) {
  const dfx_simd_table *v = dfx__simd();
  const dfx_simd_op sop = (dfx_simd_op)op;
  switch (bc->kind) {
  case DFX_BC_SAME: v->binary(sop, a + lo, 1, b + lo, 1, o + lo, hi - lo); return true;
  case DFX_BC_XSCALAR: v->binary(sop, a, 0, b + lo, 1, o + lo, hi - lo); return true;
  case DFX_BC_YSCALAR: v->binary(sop, a + lo, 1, b, 0, o + lo, hi - lo); return true;
  default: break;
  }
  const int nd = bc->nd;
  const int64_t in = bc->cd[nd - 1], sa = bc->s[0][nd - 1], sb = bc->s[1][nd - 1];
  if (in < 8 || sa > 1 || sb > 1 || lo % in) return false;
  /* Row by row, as EW_LOOP2's general path walks them. */
  int64_t idx[DFX_MAX_DIMS] = {0}, oa = 0, ob = 0, r = lo / in;
  for (int d = nd - 2; d >= 0 && r; d--) {
    idx[d] = r % bc->cd[d];
    r /= bc->cd[d];
    oa += idx[d] * bc->s[0][d];
    ob += idx[d] * bc->s[1][d];
  }
  for (int64_t o0 = lo; o0 < hi; o0 += in) {
    v->binary(sop, a + oa, (int)sa, b + ob, (int)sb, o + o0, in);
    for (int d = nd - 2; d >= 0; d--) {
      oa += bc->s[0][d];
      ob += bc->s[1][d];
      if (++idx[d] < bc->cd[d]) break;
      oa -= bc->s[0][d] * bc->cd[d];
      ob -= bc->s[1][d] * bc->cd[d];
      idx[d] = 0;
    }
  }
  return true;
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
