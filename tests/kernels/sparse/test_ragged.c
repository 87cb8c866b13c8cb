/* test_ragged.c - RaggedTensorToSparse, RaggedGather and RaggedTensorToTensor
 * against naive nested loops over one ragged tensor of ragged rank 2:
 *   rt = [[[1,2],[3]], [], [[4],[],[5,6,7]]]   (values optionally [7, 2])
 * given as row splits, value row ids and a first dim size. */
#include "alloc.h"
#include "stest.h"

static const int64_t S0[4] = {0, 2, 2, 5}, S1[6] = {0, 2, 3, 4, 4, 7};
static const int64_t R0[5] = {0, 0, 2, 2, 2}, R1[7] = {0, 0, 1, 2, 4, 4, 4};

static dfx_tensor *vec(dfx_dtype t, int64_t n, const int64_t *v) {
  double d[64] = {0};
  for (int64_t i = 0; i < n; i++) d[i] = (double)v[i];
  const int64_t dims[1] = {n};
  return s_from_doubles(t, 1, dims, d);
}

/* Values [7] or [7, 2]: element (r, e) is 10 * (r + 1) + e. */
static dfx_tensor *values(dfx_dtype t, int inner) {
  double d[14];
  for (int r = 0; r < 7; r++)
    for (int e = 0; e < inner; e++) d[r * inner + e] = 10.0 * (r + 1) + e;
  const int64_t dims[2] = {7, inner};
  return s_from_doubles(t, inner == 1 ? 1 : 2, dims, d);
}

Test(ragged, to_sparse) {
  const dfx_dtype sts[2] = {DFX_I64, DFX_I32};
  for (int si = 0; si < 2; si++)
    for (int inner = 1; inner <= 2; inner++) {
      dfx_node *n = kh_node_new("RaggedTensorToSparse");
      kh_attr_int(n, "RAGGED_RANK", 2);
      kh_attr_type(n, "T", DFX_F32);
      kh_attr_type(n, "Tsplits", sts[si]);
      dfx_tensor *in[3] = {vec(sts[si], 4, S0), vec(sts[si], 6, S1), values(DFX_F32, inner)}, *out[3] = {0};
      char err[512];
      cr_assert_eq(s_run(n, in, 3, out, err), DFX_OK, "%s", err);
      int w = inner == 1 ? 3 : 4;
      int64_t want[14 * 4], k = 0;
      double wv[14];
      for (int64_t a = 0; a < 3; a++)
        for (int64_t b = S0[a]; b < S0[a + 1]; b++)
          for (int64_t c = S1[b]; c < S1[b + 1]; c++)
            for (int e = 0; e < inner; e++, k++) {
              want[k * w] = a, want[k * w + 1] = b - S0[a], want[k * w + 2] = c - S1[b];
              if (inner == 2) want[k * w + 3] = e;
              wv[k] = 10.0 * (c + 1) + e;
            }
      const int64_t id[2] = {k, w};
      s_expect_shape(out[0], 2, id);
      s_expect_i64v(out[0], want, k * w);
      s_expect_f64v(out[1], wv, k, 0);
      const int64_t sh3[3] = {3, 3, 3}, sh4[4] = {3, 3, 3, 2};
      s_expect_i64v(out[2], inner == 1 ? sh3 : sh4, w);
      s_unref_all(out, 3);
      s_unref_all(in, 3);
      kh_node_free(n);
    }
}

Test(ragged, to_sparse_errors) {
  dfx_node *n = kh_node_new("RaggedTensorToSparse");
  kh_attr_int(n, "RAGGED_RANK", 2);
  kh_attr_type(n, "T", DFX_F32);
  const int64_t bad0[4] = {1, 2, 2, 5}, dec[4] = {0, 3, 2, 5}, short1[5] = {0, 2, 3, 4, 7};
  dfx_tensor *in[3] = {vec(DFX_I64, 4, bad0), vec(DFX_I64, 6, S1), values(DFX_F32, 1)};
  s_expect_err(n, in, 3, "First value of ragged splits must be 0.");
  dfx__tensor_unref(in[0]);
  in[0] = vec(DFX_I64, 4, dec);
  s_expect_err(n, in, 3, "Ragged splits should be non decreasing.");
  dfx__tensor_unref(in[0]);
  in[0] = vec(DFX_I64, 4, S0);
  dfx__tensor_unref(in[1]);
  in[1] = vec(DFX_I64, 5, short1);
  s_expect_err(n, in, 3, "Final value of ragged splits must match the length the corresponding ragged values.");
  dfx__tensor_unref(in[1]);
  in[1] = vec(DFX_I64, 0, S1);
  s_expect_err(n, in, 3, "ragged splits may not be empty.");
  s_unref_all(in, 3);
  kh_node_free(n);
}

/* Naive gather: output rows are params rows; returns splits per level. */
Test(ragged, gather) {
  struct {
    int ind_rank;
    int64_t idims[2], idx[4];
  } cases[] = {{1, {4, 0}, {2, 0, 2, 1}}, {2, {2, 2}, {2, 0, 1, 1}}, {0, {0, 0}, {2}}, {1, {0, 0}, {0}}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
    for (int inner = 1; inner <= 2; inner++) {
      int64_t nidx = cases[c].ind_rank == 0 ? 1 : cases[c].ind_rank == 1 ? cases[c].idims[0] : 4;
      /* Reference: the gathered rows' level-1 and level-2 lists. */
      int64_t o0[16] = {0}, o1[16] = {0}, n0 = 1, n1 = 1, vals[16], nv = 0;
      for (int64_t i = 0; i < nidx; i++) {
        int64_t r = cases[c].idx[i];
        for (int64_t b = S0[r]; b < S0[r + 1]; b++) {
          for (int64_t v = S1[b]; v < S1[b + 1]; v++) vals[nv++] = v;
          o1[n1] = o1[n1 - 1] + (S1[b + 1] - S1[b]);
          n1++;
        }
        o0[n0] = o0[n0 - 1] + (S0[r + 1] - S0[r]);
        n0++;
      }
      int ork = 2 + cases[c].ind_rank - 1;
      dfx_node *n = kh_node_new("RaggedGather");
      kh_attr_int(n, "PARAMS_RAGGED_RANK", 2);
      kh_attr_int(n, "OUTPUT_RAGGED_RANK", ork);
      kh_attr_type(n, "Tvalues", DFX_F64);
      kh_attr_type(n, "Tindices", DFX_I32);
      kh_attr_type(n, "Tsplits", DFX_I64);
      dfx_tensor *in[4] = {vec(DFX_I64, 4, S0), vec(DFX_I64, 6, S1), values(DFX_F64, inner), NULL}, *out[4] = {0};
      double id[4];
      for (int i = 0; i < 4; i++) id[i] = (double)cases[c].idx[i];
      in[3] = s_from_doubles(DFX_I32, cases[c].ind_rank, cases[c].idims, id);
      char err[512];
      cr_assert_eq(s_run(n, in, 4, out, err), DFX_OK, "case %zu: %s", c, err);
      int k = 0;
      if (cases[c].ind_rank == 2) {
        const int64_t u[3] = {0, 2, 4};
        s_expect_i64v(out[k++], u, 3);
      }
      if (cases[c].ind_rank >= 1) s_expect_i64v(out[k++], o0, n0);
      s_expect_i64v(out[k++], o1, n1);
      double wv[32];
      for (int64_t i = 0; i < nv; i++)
        for (int e = 0; e < inner; e++) wv[i * inner + e] = 10.0 * (vals[i] + 1) + e;
      const int64_t vd[2] = {nv, inner};
      s_expect_shape(out[k], inner == 1 ? 1 : 2, vd);
      s_expect_f64v(out[k], wv, nv * inner, 0);
      s_unref_all(out, 4);
      s_unref_all(in, 4);
      kh_node_free(n);
    }
}

Test(ragged, gather_errors) {
  dfx_node *n = kh_node_new("RaggedGather");
  kh_attr_int(n, "PARAMS_RAGGED_RANK", 2);
  kh_attr_int(n, "OUTPUT_RAGGED_RANK", 2);
  kh_attr_type(n, "Tvalues", DFX_F64);
  kh_attr_type(n, "Tindices", DFX_I64);
  const int64_t bad[1] = {3}, past[6] = {0, 2, 3, 4, 4, 9}, unsorted[6] = {0, 2, 1, 4, 4, 7};
  dfx_tensor *in[4] = {vec(DFX_I64, 4, S0), vec(DFX_I64, 6, S1), values(DFX_F64, 1), vec(DFX_I64, 1, bad)};
  s_expect_err(n, in, 4, "indices[0] = 3 is not in [0, 3)");
  dfx__tensor_unref(in[3]);
  in[3] = vec(DFX_I64, 1, S0);
  dfx__tensor_unref(in[1]);
  in[1] = vec(DFX_I64, 6, past);
  s_expect_err(n, in, 4, "Ragged splits must not point past values");
  dfx__tensor_unref(in[1]);
  in[1] = vec(DFX_I64, 6, unsorted);
  s_expect_err(n, in, 4, "Ragged splits must be sorted");
  s_unref_all(in, 4);
  kh_node_free(n);
}

/* ---- RaggedTensorToTensor ---- */

static dfx_node *rt_node(const char *const *types, int np) {
  dfx_node *n = kh_node_new("RaggedTensorToTensor");
  kh_attr_type(n, "T", DFX_F32);
  kh_attr_type(n, "Tindex", DFX_I64);
  kh_attr_type(n, "Tshape", DFX_I32);
  kh_attr_int(n, "num_row_partition_tensors", np);
  kh_attr_str(n, "row_partition_types", "");
  /* kh has no list(string) setter: turn the attr into one by hand. */
  for (int i = 0; i < n->n_attrs; i++)
    if (strcmp(n->attrs[i].name, "row_partition_types") == 0) {
      dfx_attr *at = &n->attrs[i];
      dfx__free(at->v.s.ptr);
      at->kind = DFX_ATTR_LIST;
      at->v.list.kind = DFX_ATTR_S;
      at->v.list.n = np;
      at->v.list.v.s = dfx__calloc((size_t)np, sizeof(dfx_str));
      for (int j = 0; j < np; j++) {
        at->v.list.v.s[j].len = strlen(types[j]);
        at->v.list.v.s[j].ptr = dfx__strdup(types[j]);
      }
    }
  return n;
}

/* Dense reference [d0, d1, d2(, 2)] with default dv (broadcast [inner]). */
static void dense_ref(int64_t d0, int64_t d1, int64_t d2, int inner, const double *dv, double *out) {
  for (int64_t i = 0; i < d0 * d1 * d2; i++)
    for (int e = 0; e < inner; e++) out[i * inner + e] = dv[e];
  for (int64_t a = 0; a < 3 && a < d0; a++)
    for (int64_t b = S0[a]; b < S0[a + 1] && b - S0[a] < d1; b++)
      for (int64_t c = S1[b]; c < S1[b + 1] && c - S1[b] < d2; c++)
        for (int e = 0; e < inner; e++)
          out[((a * d1 + (b - S0[a])) * d2 + (c - S1[b])) * inner + e] = 10.0 * (c + 1) + e;
}

static void to_tensor_case(int mode, int inner, int nshape, const int64_t *shape, int64_t d0, int64_t d1, int64_t d2,
                           int def_rank) {
  /* mode 0: ROW_SPLITS x2; 1: FIRST_DIM_SIZE + VALUE_ROWIDS x2; 2: ROW_SPLITS, VALUE_ROWIDS. */
  const char *types[3][3] = {{"ROW_SPLITS", "ROW_SPLITS"}, {"FIRST_DIM_SIZE", "VALUE_ROWIDS", "VALUE_ROWIDS"},
                             {"ROW_SPLITS", "VALUE_ROWIDS"}};
  int np = mode == 1 ? 3 : 2;
  dfx_node *n = rt_node(types[mode], np);
  double dv[2] = {-1, -2}, one = -1;
  const int64_t dd[1] = {2};
  double sh[8];
  for (int i = 0; i < nshape; i++) sh[i] = (double)shape[i];
  dfx_tensor *in[6] = {nshape < 0 ? s_from_doubles(DFX_I32, 0, NULL, &one) : s_from_doubles(DFX_I32, 1, (int64_t[]){nshape}, sh),
                       values(DFX_F32, inner), def_rank ? s_from_doubles(DFX_F32, 1, dd, dv) : s_from_doubles(DFX_F32, 0, NULL, dv)};
  const int64_t three = 3;
  if (mode == 0) in[3] = vec(DFX_I64, 4, S0), in[4] = vec(DFX_I64, 6, S1);
  if (mode == 1) in[3] = kh_i64(0, NULL, &three), in[4] = vec(DFX_I64, 5, R0), in[5] = vec(DFX_I64, 7, R1);
  if (mode == 2) in[3] = vec(DFX_I64, 4, S0), in[4] = vec(DFX_I64, 7, R1);
  dfx_tensor *out[1] = {0};
  char err[512];
  cr_assert_eq(s_run(n, in, 3 + np, out, err), DFX_OK, "mode %d: %s", mode, err);
  double want[256], dvb[2] = {dv[0], def_rank ? dv[1] : dv[0]};
  dense_ref(d0, d1, d2, inner, dvb, want);
  const int64_t od[4] = {d0, d1, d2, inner};
  s_expect_shape(out[0], inner == 1 ? 3 : 4, od);
  s_expect_f64v(out[0], want, d0 * d1 * d2 * inner, 0);
  s_unref_all(out, 1);
  s_unref_all(in, 3 + np);
  kh_node_free(n);
}

Test(ragged, to_tensor) {
  const int64_t full[3] = {-1, -1, -1}, trunc[3] = {2, 1, 2}, grow[3] = {4, 3, 5}, full4[4] = {-1, -1, -1, 2},
                trunc4[4] = {-1, 1, -1, -1};
  for (int mode = 0; mode < 3; mode++) {
    to_tensor_case(mode, 1, -1, NULL, 3, 3, 3, 0);
    to_tensor_case(mode, 1, 3, full, 3, 3, 3, 0);
    to_tensor_case(mode, 1, 3, trunc, 2, 1, 2, 0);
    to_tensor_case(mode, 1, 3, grow, 4, 3, 5, 0);
    to_tensor_case(mode, 2, 4, full4, 3, 3, 3, 1);
    to_tensor_case(mode, 2, 4, trunc4, 3, 1, 3, 0);
  }
}

Test(ragged, to_tensor_errors) {
  const char *rs2[2] = {"ROW_SPLITS", "ROW_SPLITS"}, *vr[2] = {"VALUE_ROWIDS", "ROW_SPLITS"},
             *rsvr[2] = {"ROW_SPLITS", "VALUE_ROWIDS"}, *bogus[2] = {"ROW_SPLITS", "COLUMNS"};
  double m1 = -1, dv[3] = {0, 0, 0};
  const int64_t bad_rows[7] = {0, 0, 1, 2, 4, 4, 9}, long0[5] = {1, 2, 3, 4, 7}, big_shape[1] = {1};
  struct {
    const char *const *types;
    const int64_t *p1;
    int64_t n1;
    int def_n;
    const char *msg;
  } cases[] = {
      {vr, S1, 6, 0, "Cannot handle VALUE_ROWIDS in first dimension."},
      {rsvr, bad_rows, 7, 0, "Got value_rowid=9 which is not in [0, 5)"},
      {rs2, S1, 6, 3, "default_value.shape=[3] and rt_input.flat_values.shape=[7] are incompatible"},
      {rs2, S1, 6, -1, "rt_input.shape and shape=[4] are incompatible: rt_input.rank = 3 but shape.rank = 1"},
      {rs2, long0, 5, 0, "Invalid row split size."},
      {bogus, S1, 6, 0, "Unknown string for partition info type: COLUMNS"},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    dfx_node *n = rt_node(cases[c].types, 2);
    dfx_tensor *in[5] = {cases[c].def_n < 0 ? kh_i32(1, big_shape, (int32_t[]){4}) : s_from_doubles(DFX_I32, 0, NULL, &m1),
                         values(DFX_F32, 1),
                         cases[c].def_n > 0 ? s_from_doubles(DFX_F32, 1, (int64_t[]){cases[c].def_n}, dv)
                                            : s_from_doubles(DFX_F32, 0, NULL, dv),
                         vec(DFX_I64, 4, S0), vec(DFX_I64, cases[c].n1, cases[c].p1)};
    s_expect_err(n, in, 5, cases[c].msg);
    s_unref_all(in, 5);
    kh_node_free(n);
  }
  /* More splits rows than parent rows. */
  dfx_node *n = rt_node(rs2, 2);
  const int64_t s0[3] = {0, 1, 2}, s1[6] = {0, 1, 2, 3, 4, 7};
  dfx_tensor *in[5] = {s_from_doubles(DFX_I32, 0, NULL, &m1), values(DFX_F32, 1), s_from_doubles(DFX_F32, 0, NULL, dv),
                       vec(DFX_I64, 3, s0), vec(DFX_I64, 6, s1)};
  s_expect_err(n, in, 5, "Row partition size is greater than output size: 5 > 2");
  s_unref_all(in, 5);
  kh_node_free(n);
}
