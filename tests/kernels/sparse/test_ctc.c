/* test_ctc.c - CTCGreedyDecoder against a naive arg-max reference, and
 * CTCBeamSearchDecoder against exhaustive enumeration of every alignment
 * (with a beam wide enough to hold every prefix, TF's prefix beam search is
 * exact), plus hand-worked narrow beams, merge_repeated and TF's errors. */
#include <math.h>

#include "stest.h"

static dfx_tensor *logits(dfx_dtype dt, int64_t T, int64_t B, int64_t C, const double *v) {
  const int64_t d[3] = {T, B, C};
  return s_from_doubles(dt, 3, d, v);
}

static dfx_tensor *seqlen(int64_t B, const int32_t *v) {
  const int64_t d[1] = {B};
  return kh_i32(1, d, v);
}

static dfx_node *greedy_node(dfx_dtype dt, int merge, int64_t blank) {
  dfx_node *n = kh_node_new("CTCGreedyDecoder");
  kh_attr_type(n, "T", dt);
  kh_attr_bool(n, "merge_repeated", merge);
  kh_attr_int(n, "blank_index", blank);
  return n;
}

static dfx_node *beam_node(dfx_dtype dt, int width, int top, int merge) {
  dfx_node *n = kh_node_new("CTCBeamSearchDecoder");
  kh_attr_type(n, "T", dt);
  kh_attr_int(n, "beam_width", width);
  kh_attr_int(n, "top_paths", top);
  kh_attr_bool(n, "merge_repeated", merge);
  return n;
}

/* Checks one decoded SparseTensor: seqs[b] (lens[b] labels) per batch. */
static void expect_sparse(dfx_tensor *ind, dfx_tensor *val, dfx_tensor *shp, int64_t B, int64_t lens[],
                          int64_t seqs[][16]) {
  int64_t n = 0, longest = 0;
  for (int64_t b = 0; b < B; b++) {
    n += lens[b];
    if (lens[b] > longest) longest = lens[b];
  }
  const int64_t idims[2] = {n, 2};
  s_expect_shape(ind, 2, idims);
  cr_assert_eq(val->count, n);
  cr_assert_eq(ind->dtype, DFX_I64);
  cr_assert_eq(val->dtype, DFX_I64);
  const int64_t *iv = ind->data, *vv = val->data, *sv = shp->data;
  int64_t k = 0;
  for (int64_t b = 0; b < B; b++)
    for (int64_t t = 0; t < lens[b]; t++, k++) {
      cr_expect_eq(iv[2 * k], b);
      cr_expect_eq(iv[2 * k + 1], t);
      cr_expect_eq(vv[k], seqs[b][t], "batch %lld pos %lld: %lld want %lld", (long long)b, (long long)t,
                   (long long)vv[k], (long long)seqs[b][t]);
    }
  cr_assert_eq(shp->count, 2);
  cr_expect_eq(sv[0], B);
  cr_expect_eq(sv[1], longest);
}

Test(ctc, greedy_reference_sweep) {
  const dfx_dtype dts[] = {DFX_F32, DFX_F64};
  uint32_t seed = 5;
  for (int di = 0; di < 2; di++)
    for (int merge = 0; merge < 2; merge++)
      for (int bl = 0; bl < 3; bl++) {
        const int64_t T = 7, B = 3, C = 4, battr = bl == 0 ? -1 : bl == 1 ? 0 : -3;
        const int64_t blank = battr < 0 ? C + battr : battr;
        double v[7 * 3 * 4];
        /* Few distinct values, so repeats and blanks are common. */
        for (int i = 0; i < T * B * C; i++) v[i] = (double)(s_rand(&seed) % 5) * 0.5 - 1;
        const int32_t sl[3] = {7, 0, 4};
        int64_t lens[3] = {0}, seqs[3][16];
        double lp[3] = {0};
        for (int64_t b = 0; b < B; b++) {
          int64_t prev = -1;
          for (int64_t t = 0; t < sl[b]; t++) {
            const double *row = v + (t * B + b) * C;
            int64_t c = 0;
            for (int64_t k = 1; k < C; k++)
              if (row[k] > row[c]) c = k;
            lp[b] -= row[c];
            if (c != blank && !(merge && c == prev)) seqs[b][lens[b]++] = c;
            prev = c;
          }
        }
        dfx_tensor *in[2] = {logits(dts[di], T, B, C, v), seqlen(B, sl)}, *out[4] = {0};
        dfx_node *n = greedy_node(dts[di], merge, battr);
        char err[512];
        cr_assert_eq(s_run(n, in, 2, out, err), DFX_OK, "%s", err);
        expect_sparse(out[0], out[1], out[2], B, lens, seqs);
        const int64_t ld[2] = {B, 1};
        s_expect_shape(out[3], 2, ld);
        cr_assert_eq(out[3]->dtype, dts[di]);
        s_expect_f64v(out[3], lp, B, 1e-6);
        s_unref_all(out, 4);
        s_unref_all(in, 2);
        kh_node_free(n);
      }
}

/* ---- exhaustive CTC reference ---- */

typedef struct labeling {
  int64_t len, lab[8];
  double p;
} labeling;

static int by_p_desc(const void *a, const void *b) {
  double x = ((const labeling *)a)->p, y = ((const labeling *)b)->p;
  return x > y ? -1 : x < y;
}

/* Every labeling of batch element b with its exact probability (softmax
 * per step, summed over all alignments that collapse to it), best first. */
static int enumerate(const double *v, int64_t B, int64_t C, int64_t b, int32_t len, labeling *out) {
  int n = 0;
  int64_t total = 1;
  for (int t = 0; t < len; t++) total *= C;
  for (int64_t a = 0; a < total; a++) {
    int64_t x = a, path[8];
    double p = 1;
    for (int t = 0; t < len; t++) {
      path[t] = x % C;
      x /= C;
      const double *row = v + (t * B + b) * C;
      double z = 0;
      for (int k = 0; k < C; k++) z += exp(row[k]);
      p *= exp(row[path[t]]) / z;
    }
    labeling l = {0};
    for (int t = 0; t < len; t++)
      if (path[t] != C - 1 && (t == 0 || path[t] != path[t - 1])) l.lab[l.len++] = path[t];
    int k = 0;
    while (k < n && !(out[k].len == l.len && memcmp(out[k].lab, l.lab, sizeof(int64_t) * (size_t)l.len) == 0)) k++;
    if (k == n) out[n++] = l;
    out[k].p += p;
  }
  qsort(out, (size_t)n, sizeof *out, by_p_desc);
  return n;
}

Test(ctc, beam_exact_against_enumeration) {
  const dfx_dtype dts[] = {DFX_F32, DFX_F64};
  uint32_t seed = 17;
  static labeling labs[3][1024];
  for (int di = 0; di < 2; di++)
    for (int C = 2; C <= 4; C++) {
      const int64_t T = 4, B = 3, top = C == 2 ? 2 : 3;
      double v[4 * 3 * 4];
      for (int i = 0; i < T * B * C; i++) v[i] = s_uniform(&seed, -2, 2);
      const int32_t sl[3] = {4, 2, 3};
      for (int b = 0; b < B; b++) enumerate(v, B, C, b, sl[b], labs[b]);
      dfx_tensor *in[2] = {logits(dts[di], T, B, C, v), seqlen(B, sl)}, *out[16] = {0};
      dfx_node *n = beam_node(dts[di], 256, (int)top, 0);
      char err[512];
      cr_assert_eq(s_run(n, in, 2, out, err), DFX_OK, "%s", err);
      for (int p = 0; p < top; p++) {
        int64_t lens[3], seqs[3][16];
        for (int b = 0; b < B; b++) {
          lens[b] = labs[b][p].len;
          memcpy(seqs[b], labs[b][p].lab, sizeof(int64_t) * (size_t)lens[b]);
        }
        expect_sparse(out[p], out[top + p], out[2 * top + p], B, lens, seqs);
      }
      const int64_t ld[2] = {B, top};
      s_expect_shape(out[3 * top], 2, ld);
      double want[9];
      for (int b = 0; b < B; b++)
        for (int p = 0; p < top; p++) want[b * top + p] = log(labs[b][p].p);
      s_expect_f64v(out[3 * top], want, B * top, di == 0 ? 1e-5 : 1e-12);
      s_unref_all(out, 16);
      s_unref_all(in, 2);
      kh_node_free(n);
    }
}

/* Graves' example (thesis fig. 7.5): P(a) = 0.58 beats P(blank path) =
 * 0.42, but a beam of one never keeps 'a' (0.3 < 0.7 at t = 0). */
Test(ctc, beam_narrow_hand_worked) {
  const double v[4] = {log(0.3), log(0.7), log(0.4), log(0.6)};
  const int32_t sl[1] = {2};
  for (int width = 1; width <= 2; width++) {
    dfx_tensor *in[2] = {logits(DFX_F64, 2, 1, 2, v), seqlen(1, sl)}, *out[8] = {0};
    dfx_node *n = beam_node(DFX_F64, width, width, 0);
    char err[512];
    cr_assert_eq(s_run(n, in, 2, out, err), DFX_OK, "%s", err);
    int top = width;
    if (width == 1) {
      cr_expect_eq(out[1]->count, 0);
      cr_expect(fabs(((double *)out[3]->data)[0] - log(0.42)) < 1e-12);
    } else {
      const int64_t a[1] = {0};
      s_expect_i64v(out[top + 0], a, 1);
      cr_expect_eq(out[top + 1]->count, 0);
      const double lp[2] = {log(0.58), log(0.42)};
      s_expect_f64v(out[3 * top], lp, 2, 1e-12);
    }
    s_unref_all(out, 8);
    s_unref_all(in, 2);
    kh_node_free(n);
  }
}

/* The best labeling is "a a" (a, blank, a): merge_repeated collapses the
 * decoded path to "a" in the beam decoder (TF's LabelSeq) and greedy. */
Test(ctc, merge_repeated) {
  const double v[9] = {3, -3, 0, -3, -3, 3, 3, -3, 0}; /* classes a, b, blank */
  const int32_t sl[1] = {3};
  for (int merge = 0; merge < 2; merge++) {
    dfx_tensor *in[2] = {logits(DFX_F32, 3, 1, 3, v), seqlen(1, sl)}, *out[4] = {0};
    dfx_node *n = beam_node(DFX_F32, 8, 1, merge);
    char err[512];
    cr_assert_eq(s_run(n, in, 2, out, err), DFX_OK, "%s", err);
    const int64_t aa[2] = {0, 0};
    s_expect_i64v(out[1], aa, merge ? 1 : 2);
    s_unref_all(out, 4);
    kh_node_free(n);
    /* Greedy: a, blank, a is never merged across the blank. */
    n = greedy_node(DFX_F32, merge, -1);
    cr_assert_eq(s_run(n, in, 2, out, err), DFX_OK, "%s", err);
    s_expect_i64v(out[1], aa, 2);
    s_unref_all(out, 4);
    s_unref_all(in, 2);
    kh_node_free(n);
  }
}

Test(ctc, errors) {
  const double v[12] = {0};
  const int32_t sl2[2] = {2, 1}, big[2] = {3, 1}, sl1[1] = {1};
  const int64_t d2[2] = {2, 6}, d0[3] = {2, 0, 3}, dsl[2] = {1, 2};
  dfx_node *g = greedy_node(DFX_F32, 1, -1), *bm = beam_node(DFX_F32, 2, 2, 1), *bm3 = beam_node(DFX_F32, 2, 3, 1);
  dfx_tensor *in[2];
  in[0] = s_from_doubles(DFX_F32, 2, d2, v), in[1] = seqlen(2, sl2);
  s_expect_err(g, in, 2, "inputs is not a 3-Tensor");
  s_unref_all(in, 2);
  in[0] = s_from_doubles(DFX_F32, 3, d0, v), in[1] = seqlen(0, sl2);
  s_expect_err(g, in, 2, "inputs must not be empty");
  s_unref_all(in, 2);
  in[0] = logits(DFX_F32, 2, 2, 3, v), in[1] = kh_i32(2, dsl, sl2);
  s_expect_err(g, in, 2, "sequence_length is not a vector");
  s_unref_all(in, 2);
  in[0] = logits(DFX_F32, 2, 2, 3, v), in[1] = seqlen(1, sl1);
  s_expect_err(bm, in, 2, "len(sequence_length) != batch_size");
  s_unref_all(in, 2);
  in[0] = logits(DFX_F32, 2, 2, 3, v), in[1] = seqlen(2, big);
  s_expect_err(g, in, 2, "sequence_length(0) <= 2");
  s_unref_all(in, 2);
  in[0] = logits(DFX_F32, 2, 2, 3, v), in[1] = seqlen(2, sl2);
  s_expect_err(bm3, in, 2, "requested more paths than the beam width.");
  kh_node_free(g);
  g = greedy_node(DFX_F32, 1, 3);
  s_expect_err(g, in, 2, "blank_index expected to be between -3 and 2 but was 3");
  kh_node_free(g);
  g = greedy_node(DFX_F32, 1, -4);
  s_expect_err(g, in, 2, "blank_index expected to be between -3 and 2 but was -4");
  s_unref_all(in, 2);
  /* No steps: only the root is in the beam, fewer leaves than top_paths. */
  const int32_t zero[2] = {0, 0};
  in[0] = logits(DFX_F32, 2, 2, 3, v), in[1] = seqlen(2, zero);
  s_expect_err(bm, in, 2, "Less leaves in the beam search than requested.");
  s_unref_all(in, 2);
  kh_node_free(g);
  kh_node_free(bm);
  kh_node_free(bm3);
}

/* Negative lengths decode nothing (TF only checks <= max_time); NaN and
 * infinite logits never crash. */
Test(ctc, hostile_values) {
  double v[2 * 2 * 3] = {NAN, 1, 2, -INFINITY, -INFINITY, -INFINITY, INFINITY, NAN, 0, 1, 2, 3};
  const int32_t sl[2] = {2, -5};
  for (int op = 0; op < 2; op++) {
    dfx_tensor *in[2] = {logits(DFX_F32, 2, 2, 3, v), seqlen(2, sl)}, *out[4] = {0};
    dfx_node *n = op ? beam_node(DFX_F32, 3, 1, 1) : greedy_node(DFX_F32, 1, -1);
    char err[512];
    cr_assert_eq(s_run(n, in, 2, out, err), DFX_OK, "%s", err);
    const int64_t sd[1] = {2};
    s_expect_shape(out[2], 1, sd);
    cr_expect_eq(((int64_t *)out[2]->data)[0], 2);
    s_unref_all(out, 4);
    s_unref_all(in, 2);
    kh_node_free(n);
  }
}

/* A long, wide beam search stays fast and bounded (entries are only made
 * for prefixes that enter the beam). */
Test(ctc, beam_large, .timeout = 60) {
  const int64_t T = 60, B = 2, C = 40;
  double *v = malloc(sizeof(double) * (size_t)(T * B * C));
  uint32_t seed = 3;
  for (int64_t i = 0; i < T * B * C; i++) v[i] = s_uniform(&seed, -4, 4);
  const int32_t sl[2] = {60, 31};
  dfx_tensor *in[2] = {logits(DFX_F32, T, B, C, v), seqlen(B, sl)}, *out[32] = {0};
  dfx_node *n = beam_node(DFX_F32, 100, 10, 1);
  char err[512];
  cr_assert_eq(s_run(n, in, 2, out, err), DFX_OK, "%s", err);
  /* Log probabilities come out best first. */
  const float *lp = out[30]->data;
  for (int b = 0; b < B; b++)
    for (int p = 1; p < 10; p++) cr_expect(lp[b * 10 + p] <= lp[b * 10 + p - 1]);
  s_unref_all(out, 32);
  s_unref_all(in, 2);
  kh_node_free(n);
  free(v);
}
