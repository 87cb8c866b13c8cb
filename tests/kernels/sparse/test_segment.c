/* test_segment.c - SparseSegment{Sum,Mean,SqrtN}[WithNumSegments] over
 * every declared dtype and index type against a naive reference, with gaps,
 * repeated indices, empty inputs and TF's errors. */
#include <math.h>

#include "stest.h"

static dfx_node *seg_node(const char *op, dfx_dtype t, dfx_dtype ti, dfx_dtype ts) {
  dfx_node *n = kh_node_new(op);
  kh_attr_type(n, "T", t);
  kh_attr_type(n, "Tidx", ti);
  kh_attr_type(n, "Tsegmentids", ts);
  if (strstr(op, "WithNumSegments")) kh_attr_type(n, "Tnumsegments", ti);
  return n;
}

static dfx_tensor *ivec(dfx_dtype t, int64_t n, const int64_t *v) {
  double d[32] = {0};
  for (int64_t i = 0; i < n; i++) d[i] = (double)v[i];
  const int64_t dims[1] = {n};
  return s_from_doubles(t, 1, dims, d);
}

Test(sparse_segment, reference_sweep) {
  const char *ops[6] = {"SparseSegmentSum", "SparseSegmentMean", "SparseSegmentSqrtN",
                        "SparseSegmentSumWithNumSegments", "SparseSegmentMeanWithNumSegments",
                        "SparseSegmentSqrtNWithNumSegments"};
  const dfx_dtype sum_t[] = {DFX_F32, DFX_F64, DFX_I32, DFX_U8, DFX_I16, DFX_I8, DFX_I64, DFX_BF16, DFX_U16, DFX_F16,
                             DFX_U32, DFX_U64};
  const dfx_dtype mean_t[] = {DFX_BF16, DFX_F16, DFX_F32, DFX_F64};
  /* data [5, 2, 2]; indices repeat rows; segments 0, 0, 2, 2, 2, 4 (gaps at 1
   * and 3; with num_segments 6, a trailing empty row). */
  const int64_t ind[6] = {4, 0, 1, 1, 3, 2}, ids[6] = {0, 0, 2, 2, 2, 4};
  double data[20];
  for (int i = 0; i < 20; i++) data[i] = (double)((i * 7) % 11) + 1;
  for (int o = 0; o < 6; o++) {
    int mode = o % 3;
    bool ns = o >= 3;
    const dfx_dtype *ts = mode ? mean_t : sum_t;
    int nt = mode ? 4 : 12;
    for (int t = 0; t < nt; t++)
      for (int ti = 0; ti < 2; ti++)
        for (int si = 0; si < 2; si++) {
          dfx_dtype it = ti ? DFX_I64 : DFX_I32, st = si ? DFX_I64 : DFX_I32;
          int64_t rows = ns ? 6 : 5;
          double want[6 * 4] = {0};
          int64_t cnt[6] = {0};
          for (int k = 0; k < 6; k++) {
            cnt[ids[k]]++;
            for (int j = 0; j < 4; j++) want[ids[k] * 4 + j] += data[ind[k] * 4 + j];
          }
          for (int r = 0; r < rows; r++)
            for (int j = 0; j < 4 && cnt[r]; j++)
              want[r * 4 + j] /= mode == 1 ? (double)cnt[r] : mode == 2 ? sqrt((double)cnt[r]) : 1;
          const int64_t dd[3] = {5, 2, 2};
          const int64_t nsv = 6;
          dfx_tensor *in[4] = {s_from_doubles(ts[t], 3, dd, data), ivec(it, 6, ind), ivec(st, 6, ids),
                               ns ? ivec(it, 1, &nsv) : NULL},
                     *out[1] = {0};
          if (ns) {
            dfx__tensor_unref(in[3]);
            double d = 6;
            in[3] = s_from_doubles(it, 0, NULL, &d);
          }
          dfx_node *n = seg_node(ops[o], ts[t], it, st);
          char err[512];
          cr_assert_eq(s_run(n, in, ns ? 4 : 3, out, err), DFX_OK, "%s %s: %s", ops[o], dfx_dtype_name(ts[t]), err);
          const int64_t od[3] = {rows, 2, 2};
          s_expect_shape(out[0], 3, od);
          cr_assert_eq(out[0]->dtype, ts[t]);
          double tol = ts[t] == DFX_BF16 ? 1e-2 : ts[t] == DFX_F16 ? 1e-3 : 1e-6;
          for (int i = 0; i < rows * 4; i++) {
            double g = dfx__tensor_get_f64(out[0], i);
            cr_expect(fabs(g - want[i]) <= tol * (1 + fabs(want[i])), "%s %s [%d] %g want %g", ops[o],
                      dfx_dtype_name(ts[t]), i, g, want[i]);
          }
          s_unref_all(out, 1);
          s_unref_all(in, ns ? 4 : 3);
          kh_node_free(n);
        }
  }
}

/* Integer sums wrap as TF's fixed-width adds do. */
Test(sparse_segment, integer_wrap) {
  const int64_t d[1] = {2}, ind[2] = {0, 1}, ids[2] = {0, 0};
  const double v[2] = {100, 100};
  dfx_tensor *in[3] = {s_from_doubles(DFX_I8, 1, d, v), ivec(DFX_I32, 2, ind), ivec(DFX_I32, 2, ids)}, *out[1] = {0};
  dfx_node *n = seg_node("SparseSegmentSum", DFX_I8, DFX_I32, DFX_I32);
  char err[512];
  cr_assert_eq(s_run(n, in, 3, out, err), DFX_OK, "%s", err);
  cr_expect_eq(((int8_t *)out[0]->data)[0], (int8_t)-56);
  s_unref_all(out, 1);
  s_unref_all(in, 3);
  kh_node_free(n);
}

Test(sparse_segment, empty_and_errors) {
  const int64_t dd[2] = {3, 2}, z = 0;
  const double data[6] = {1, 2, 3, 4, 5, 6};
  char err[512];
  /* No indices: [0, 2] without num_segments, zeros with it. */
  dfx_node *n = seg_node("SparseSegmentMean", DFX_F32, DFX_I32, DFX_I32);
  dfx_tensor *in[4] = {s_from_doubles(DFX_F32, 2, dd, data), ivec(DFX_I32, 0, &z), ivec(DFX_I32, 0, &z), NULL},
             *out[1] = {0};
  cr_assert_eq(s_run(n, in, 3, out, err), DFX_OK, "%s", err);
  const int64_t e[2] = {0, 2};
  s_expect_shape(out[0], 2, e);
  s_unref_all(out, 1);
  kh_node_free(n);
  n = seg_node("SparseSegmentSumWithNumSegments", DFX_F32, DFX_I32, DFX_I32);
  double three = 3;
  in[3] = s_from_doubles(DFX_I32, 0, NULL, &three);
  cr_assert_eq(s_run(n, in, 4, out, err), DFX_OK, "%s", err);
  const double zeros[6] = {0};
  s_expect_f64v(out[0], zeros, 6, 0);
  s_unref_all(out, 1);
  s_unref_all(in, 4);
  /* Errors, in TF's words. */
  const int64_t i2[2] = {0, 1}, bad_i[2] = {0, 3}, unsorted[2] = {1, 0}, neg[2] = {-2, -1}, big[2] = {0, 5},
                s2[2] = {0, 0};
  struct {
    const int64_t *ind, *ids;
    double ns;
    const char *msg;
  } cases[] = {
      {bad_i, s2, 4, "Bad: indices[1] == 3 out of range [0, 3)"},
      {i2, unsorted, 4, "segment ids are not increasing"},
      {i2, neg, 4, "Segment id -2 out of range [0, 4), possibly because 'segment_ids' input is not sorted."},
      {i2, big, 4, "segment ids must be < num_segments"},
      {i2, s2, -1, "segment ids must be < num_segments"},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    in[0] = s_from_doubles(DFX_F32, 2, dd, data);
    in[1] = ivec(DFX_I64, 2, cases[c].ind);
    in[2] = ivec(DFX_I64, 2, cases[c].ids);
    in[3] = s_from_doubles(DFX_I32, 0, NULL, &cases[c].ns);
    s_expect_err(n, in, 4, cases[c].msg);
    s_unref_all(in, 4);
  }
  kh_node_free(n);
  n = seg_node("SparseSegmentSum", DFX_F32, DFX_I32, DFX_I32);
  in[0] = s_from_doubles(DFX_F32, 2, dd, data);
  in[1] = ivec(DFX_I32, 2, i2);
  in[2] = ivec(DFX_I32, 1, i2);
  s_expect_err(n, in, 3, "segment_ids and indices should have same size.");
  dfx__tensor_unref(in[2]);
  in[2] = kh_i32(2, (int64_t[]){1, 2}, (int32_t[]){0, 0});
  s_expect_err(n, in, 3, "segment_ids should be a vector.");
  dfx__tensor_unref(in[2]);
  in[2] = ivec(DFX_I32, 2, neg);
  s_expect_err(n, in, 3, "segment ids must be >= 0");
  s_unref_all(in, 3);
  kh_node_free(n);
  /* A huge num_segments is refused before allocating. */
  n = seg_node("SparseSegmentSumWithNumSegments", DFX_F32, DFX_I64, DFX_I32);
  double huge = 1e15;
  in[0] = s_from_doubles(DFX_F32, 2, dd, data);
  in[1] = ivec(DFX_I64, 2, i2);
  in[2] = ivec(DFX_I32, 2, s2);
  in[3] = s_from_doubles(DFX_I64, 0, NULL, &huge);
  s_expect_err(n, in, 4, "exceeds the tensor size limit");
  s_unref_all(in, 4);
  kh_node_free(n);
}
