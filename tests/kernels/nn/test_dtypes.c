/* test_dtypes.c - the dtypes the nn kernel rows declare (their `types`
 * strings): every declared dtype of every row runs on a small input and
 * matches a naive reference, declared dtypes are ones TensorFlow allows, and
 * every TF-allowed dtype left out is refused at kernel lookup, naming the
 * attr and the dtype. MatMul, the axis reductions and linalg sweep their
 * declared dtypes in test_matmul.c, test_reduce.c and test_linalg.c. */
#include "nn_test.h"

/* Runs n on in[0..nin) and asserts success; out receives the outputs. */
static void run_ok(dfx_node *n, dfx_tensor **in, int nin, dfx_tensor **out, const char *what) {
  char err[512];
  cr_assert_eq(run1(n, in, nin, out, err), DFX_OK, "%s: %s", what, err);
}

static dfx_node *node_t(const char *op, dfx_dtype t) {
  dfx_node *n = kh_node_new(op);
  kh_attr_type(n, "T", t);
  return n;
}

/* ---- ArgMax / ArgMin over T x Tidx x output_type ---- */

static void sweep_arg(const char *op) {
  dfx_dtype ts[DFX_DTYPE_END_], ix[DFX_DTYPE_END_], ot[DFX_DTYPE_END_];
  int nt = nn_declared(op, "T", ts), ni = nn_declared(op, "Tidx", ix), no = nn_declared(op, "output_type", ot);
  bool mx = !strcmp(op, "ArgMax");
  int64_t d[] = {3, 4};
  for (int a = 0; a < nt; a++)
    for (int b = 0; b < ni; b++)
      for (int c = 0; c < no; c++) {
        dfx_tensor *x = nn_rand(ts[a], 2, d, a + 1), *ax = nn_iscalar(ix[b], -1), *y;
        dfx_node *n = node_t(op, ts[a]);
        kh_attr_type(n, "Tidx", ix[b]);
        kh_attr_type(n, "output_type", ot[c]);
        dfx_tensor *in[] = {x, ax};
        char what[96];
        snprintf(what, sizeof what, "%s T=%s Tidx=%s out=%s", op, dfx_dtype_name(ts[a]), dfx_dtype_name(ix[b]),
                 dfx_dtype_name(ot[c]));
        run_ok(n, in, 2, &y, what);
        cr_assert_eq(y->dtype, ot[c], "%s", what);
        double want[3];
        for (int r = 0; r < 3; r++) {
          int best = 0;
          for (int k = 1; k < 4; k++) {
            double v = tget(x, r * 4 + k), bv = tget(x, r * 4 + best);
            if (mx ? v > bv : v < bv) best = k;
          }
          want[r] = best;
        }
        nn_expect(y, want, 3, 0, what);
        dfx__tensor_unref(y);
        dfx__tensor_unref(x);
        dfx__tensor_unref(ax);
        kh_node_free(n);
      }
}

/* ---- Cumsum / Cumprod over T x Tidx (reverse, axis 1 of [2,3]) ---- */

static void sweep_scan(const char *op) {
  dfx_dtype ts[DFX_DTYPE_END_], ix[DFX_DTYPE_END_];
  int nt = nn_declared(op, "T", ts), ni = nn_declared(op, "Tidx", ix);
  bool prod = !strcmp(op, "Cumprod");
  int64_t d[] = {2, 3};
  for (int a = 0; a < nt; a++)
    for (int b = 0; b < ni; b++) {
      dfx_tensor *x = nn_rand(ts[a], 2, d, a + 3), *ax = nn_iscalar(ix[b], 1), *y;
      dfx_node *n = node_t(op, ts[a]);
      kh_attr_type(n, "Tidx", ix[b]);
      kh_attr_bool(n, "reverse", 1);
      dfx_tensor *in[] = {x, ax};
      char what[64];
      snprintf(what, sizeof what, "%s T=%s Tidx=%s", op, dfx_dtype_name(ts[a]), dfx_dtype_name(ix[b]));
      run_ok(n, in, 2, &y, what);
      double want[6];
      for (int r = 0; r < 2; r++) {
        double acc = prod;
        for (int j = 2; j >= 0; j--) {
          acc = prod ? acc * tget(x, r * 3 + j) : acc + tget(x, r * 3 + j);
          want[r * 3 + j] = acc;
        }
      }
      nn_expect(y, want, 6, ttol(ts[a]), what);
      dfx__tensor_unref(y);
      dfx__tensor_unref(x);
      dfx__tensor_unref(ax);
      kh_node_free(n);
    }
}

/* ---- BiasAdd / BiasAddV1, L2Loss, LRN ---- */

static void sweep_bias(const char *op) {
  dfx_dtype ts[DFX_DTYPE_END_];
  int nt = nn_declared(op, "T", ts);
  int64_t d[] = {2, 3}, c = 3;
  for (int a = 0; a < nt; a++) {
    dfx_tensor *x = nn_rand(ts[a], 2, d, a + 5), *b = nn_rand(ts[a], 1, &c, a + 6), *y;
    dfx_node *n = node_t(op, ts[a]);
    dfx_tensor *in[] = {x, b};
    run_ok(n, in, 2, &y, dfx_dtype_name(ts[a]));
    double want[6];
    for (int i = 0; i < 6; i++) want[i] = tget(x, i) + tget(b, i % 3);
    nn_expect(y, want, 6, ttol(ts[a]), dfx_dtype_name(ts[a]));
    dfx_tensor *all[] = {x, b, y};
    unref_all(all, 3);
    kh_node_free(n);
  }
}

static void sweep_l2loss(const char *op) {
  dfx_dtype ts[DFX_DTYPE_END_];
  int nt = nn_declared(op, "T", ts);
  int64_t d[] = {2, 3};
  for (int a = 0; a < nt; a++) {
    dfx_tensor *x = nn_rand(ts[a], 2, d, a + 7), *y;
    dfx_node *n = node_t(op, ts[a]);
    run_ok(n, &x, 1, &y, dfx_dtype_name(ts[a]));
    double want = 0;
    for (int i = 0; i < 6; i++) want += tget(x, i) * tget(x, i) / 2;
    nn_expect(y, &want, 1, ttol(ts[a]), dfx_dtype_name(ts[a]));
    dfx__tensor_unref(x);
    dfx__tensor_unref(y);
    kh_node_free(n);
  }
}

static void sweep_lrn(const char *op) {
  dfx_dtype ts[DFX_DTYPE_END_];
  int nt = nn_declared(op, "T", ts);
  int64_t d[] = {1, 1, 2, 5};
  for (int a = 0; a < nt; a++) {
    dfx_tensor *x = nn_rand(ts[a], 4, d, a + 8), *y;
    dfx_node *n = node_t(op, ts[a]);
    kh_attr_int(n, "depth_radius", 1);
    kh_attr_float(n, "alpha", 0.25f);
    run_ok(n, &x, 1, &y, dfx_dtype_name(ts[a]));
    double want[10];
    for (int r = 0; r < 2; r++)
      for (int c = 0; c < 5; c++) {
        double s = 0;
        for (int k = c - 1; k <= c + 1; k++)
          if (k >= 0 && k < 5) s += tget(x, r * 5 + k) * tget(x, r * 5 + k);
        want[r * 5 + c] = tget(x, r * 5 + c) / pow(1 + 0.25 * s, 0.5);
      }
    nn_expect(y, want, 10, ttol(ts[a]), dfx_dtype_name(ts[a]));
    dfx__tensor_unref(x);
    dfx__tensor_unref(y);
    kh_node_free(n);
  }
}

/* ---- softmax family ---- */

/* log softmax of row x[0..n) into out. */
static void ref_logsoftmax(const dfx_tensor *x, int64_t off, int n, double *out) {
  double mx = -INFINITY, s = 0;
  for (int j = 0; j < n; j++) mx = fmax(mx, tget(x, off + j));
  for (int j = 0; j < n; j++) s += exp(tget(x, off + j) - mx);
  for (int j = 0; j < n; j++) out[j] = tget(x, off + j) - mx - log(s);
}

static void sweep_softmax(const char *op) {
  dfx_dtype ts[DFX_DTYPE_END_];
  int nt = nn_declared(op, "T", ts);
  bool lg = !strcmp(op, "LogSoftmax");
  int64_t d[] = {2, 4};
  for (int a = 0; a < nt; a++) {
    dfx_tensor *x = nn_rand(ts[a], 2, d, a + 9), *y;
    dfx_node *n = node_t(op, ts[a]);
    run_ok(n, &x, 1, &y, dfx_dtype_name(ts[a]));
    double want[8];
    for (int r = 0; r < 2; r++) ref_logsoftmax(x, r * 4, 4, want + r * 4);
    for (int i = 0; i < 8 && !lg; i++) want[i] = exp(want[i]);
    nn_expect(y, want, 8, ttol(ts[a]), dfx_dtype_name(ts[a]));
    dfx__tensor_unref(x);
    dfx__tensor_unref(y);
    kh_node_free(n);
  }
}

/* Dense labels are probabilities; sparse ones class ids of Tlabels. */
static void sweep_xent(const char *op) {
  dfx_dtype ts[DFX_DTYPE_END_], ls[DFX_DTYPE_END_];
  bool sparse = !strcmp(op, "SparseSoftmaxCrossEntropyWithLogits");
  int nt = nn_declared(op, "T", ts), nl = sparse ? nn_declared(op, "Tlabels", ls) : 1;
  int64_t d[] = {2, 3}, b = 2;
  double prob[] = {0.25, 0.25, 0.5, 1, 0, 0}, ids[] = {2, 0};
  for (int a = 0; a < nt; a++)
    for (int c = 0; c < nl; c++) {
      dfx_tensor *x = nn_rand(ts[a], 2, d, a + 10), *out[2];
      dfx_tensor *lab = sparse ? tfrom(ls[c], 1, &b, ids) : tfrom(ts[a], 2, d, prob);
      dfx_node *n = node_t(op, ts[a]);
      if (sparse) kh_attr_type(n, "Tlabels", ls[c]);
      dfx_tensor *in[] = {x, lab};
      char what[64];
      snprintf(what, sizeof what, "%s T=%s labels=%s", op, dfx_dtype_name(ts[a]), dfx_dtype_name((dfx_dtype)lab->dtype));
      run_ok(n, in, 2, out, what);
      double loss[2] = {0, 0}, bp[6];
      for (int r = 0; r < 2; r++) {
        double ls_[3];
        ref_logsoftmax(x, r * 3, 3, ls_);
        for (int j = 0; j < 3; j++) {
          double p = sparse ? (ids[r] == j) : prob[r * 3 + j];
          loss[r] -= p * ls_[j];
          bp[r * 3 + j] = exp(ls_[j]) - p;
        }
      }
      nn_expect(out[0], loss, 2, ttol(ts[a]), what);
      nn_expect(out[1], bp, 6, ttol(ts[a]), what);
      unref_all(out, 2);
      dfx__tensor_unref(x);
      dfx__tensor_unref(lab);
      kh_node_free(n);
    }
}

/* ---- FusedBatchNorm V1/V2/V3 over T x U (inference, NHWC) ---- */

static void sweep_fbn(const char *op) {
  dfx_dtype ts[DFX_DTYPE_END_], us[DFX_DTYPE_END_];
  int nt = nn_declared(op, "T", ts), nu = nn_declared_or(op, "U", DFX_F32, us);
  int64_t d[] = {1, 2, 2, 2}, c = 2;
  double sc[] = {1, 2}, of[] = {0.5, -1}, mu[] = {0.25, -0.5}, va[] = {1, 0.5};
  for (int a = 0; a < nt; a++)
    for (int k = 0; k < nu; k++) {
      dfx_tensor *x = nn_rand(ts[a], 4, d, a + 11), *out[6];
      dfx_tensor *in[] = {x, tfrom(us[k], 1, &c, sc), tfrom(us[k], 1, &c, of), tfrom(us[k], 1, &c, mu),
                          tfrom(us[k], 1, &c, va)};
      dfx_node *n = node_t(op, ts[a]);
      if (strcmp(op, "FusedBatchNorm")) kh_attr_type(n, "U", us[k]);
      kh_attr_bool(n, "is_training", 0);
      char what[64];
      snprintf(what, sizeof what, "%s T=%s U=%s", op, dfx_dtype_name(ts[a]), dfx_dtype_name(us[k]));
      run_ok(n, in, 5, out, what);
      double want[8];
      for (int i = 0; i < 8; i++) {
        int j = i % 2;
        want[i] = (tget(x, i) - mu[j]) * sc[j] / sqrt(va[j] + 1e-4) + of[j];
      }
      nn_expect(out[0], want, 8, ttol(ts[a]) + ttol(us[k]), what);
      cr_expect_eq(out[1]->dtype, us[k], "%s", what);
      nn_expect(out[1], mu, 2, 0, what);
      unref_all(out, strcmp(op, "FusedBatchNormV3") ? 5 : 6);
      unref_all(in, 5);
      kh_node_free(n);
    }
}

/* ---- TopKV2 over T x Tk x index_type, NthElement, InTopKV2 ---- */

/* Stable descending order of row x[off..off+n): ties keep the lower index. */
static void ref_order(const dfx_tensor *x, int64_t off, int n, int *idx) {
  for (int i = 0; i < n; i++) idx[i] = i;
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && tget(x, off + idx[j]) > tget(x, off + idx[j - 1]); j--) {
      int t = idx[j];
      idx[j] = idx[j - 1];
      idx[j - 1] = t;
    }
}

static void sweep_topk(const char *op) {
  dfx_dtype ts[DFX_DTYPE_END_], ks[DFX_DTYPE_END_], is[DFX_DTYPE_END_];
  int nt = nn_declared(op, "T", ts), nk = nn_declared(op, "Tk", ks), ni = nn_declared(op, "index_type", is);
  int64_t d[] = {2, 5};
  for (int a = 0; a < nt; a++)
    for (int b = 0; b < nk; b++)
      for (int c = 0; c < ni; c++) {
        dfx_tensor *x = nn_rand(ts[a], 2, d, a + 12), *k = nn_iscalar(ks[b], 3), *out[2];
        dfx_node *n = node_t(op, ts[a]);
        kh_attr_type(n, "Tk", ks[b]);
        kh_attr_type(n, "index_type", is[c]);
        dfx_tensor *in[] = {x, k};
        char what[80];
        snprintf(what, sizeof what, "%s T=%s Tk=%s index=%s", op, dfx_dtype_name(ts[a]), dfx_dtype_name(ks[b]),
                 dfx_dtype_name(is[c]));
        run_ok(n, in, 2, out, what);
        cr_assert_eq(out[1]->dtype, is[c], "%s", what);
        double wv[6], wi[6];
        for (int r = 0; r < 2; r++) {
          int idx[5];
          ref_order(x, r * 5, 5, idx);
          for (int j = 0; j < 3; j++) {
            wv[r * 3 + j] = tget(x, r * 5 + idx[j]);
            wi[r * 3 + j] = idx[j];
          }
        }
        nn_expect(out[0], wv, 6, 0, what);
        nn_expect(out[1], wi, 6, 0, what);
        unref_all(out, 2);
        dfx__tensor_unref(x);
        dfx__tensor_unref(k);
        kh_node_free(n);
      }
}

static void sweep_nth(const char *op) {
  dfx_dtype ts[DFX_DTYPE_END_];
  int nt = nn_declared(op, "T", ts);
  int64_t d[] = {2, 5};
  for (int a = 0; a < nt; a++) {
    dfx_tensor *x = nn_rand(ts[a], 2, d, a + 13), *nth = kh_scalar_i32(1), *y;
    dfx_node *n = node_t(op, ts[a]);
    dfx_tensor *in[] = {x, nth};
    run_ok(n, in, 2, &y, dfx_dtype_name(ts[a]));
    double want[2];
    for (int r = 0; r < 2; r++) {
      int idx[5];
      ref_order(x, r * 5, 5, idx);
      want[r] = tget(x, r * 5 + idx[3]); /* second smallest = fourth largest */
    }
    nn_expect(y, want, 2, 0, dfx_dtype_name(ts[a]));
    dfx_tensor *all[] = {x, nth, y};
    unref_all(all, 3);
    kh_node_free(n);
  }
}

static void sweep_in_topk(const char *op) {
  dfx_dtype ts[DFX_DTYPE_END_];
  int nt = nn_declared(op, "T", ts);
  int64_t d[] = {3, 4}, b = 3;
  double tg[] = {0, 3, 2};
  for (int a = 0; a < nt; a++) {
    dfx_tensor *p = nn_rand(DFX_F32, 2, d, a + 14), *t = tfrom(ts[a], 1, &b, tg), *k = nn_iscalar(ts[a], 2), *y;
    dfx_node *n = node_t(op, ts[a]);
    dfx_tensor *in[] = {p, t, k};
    run_ok(n, in, 3, &y, dfx_dtype_name(ts[a]));
    double want[3];
    for (int r = 0; r < 3; r++) {
      int more = 0;
      for (int j = 0; j < 4; j++) more += tget(p, r * 4 + j) > tget(p, r * 4 + (int)tg[r]);
      want[r] = more < 2;
    }
    nn_expect(y, want, 3, 0, dfx_dtype_name(ts[a]));
    dfx_tensor *all[] = {p, t, k, y};
    unref_all(all, 4);
    kh_node_free(n);
  }
}

/* ---- the tables ---- */

static const struct sweep {
  const char *op;
  void (*run)(const char *op);
} sweeps[] = {
    {"ArgMax", sweep_arg},
    {"ArgMin", sweep_arg},
    {"Cumsum", sweep_scan},
    {"Cumprod", sweep_scan},
    {"BiasAdd", sweep_bias},
    {"BiasAddV1", sweep_bias},
    {"L2Loss", sweep_l2loss},
    {"LRN", sweep_lrn},
    {"Softmax", sweep_softmax},
    {"LogSoftmax", sweep_softmax},
    {"SoftmaxCrossEntropyWithLogits", sweep_xent},
    {"SparseSoftmaxCrossEntropyWithLogits", sweep_xent},
    {"FusedBatchNorm", sweep_fbn},
    {"FusedBatchNormV2", sweep_fbn},
    {"FusedBatchNormV3", sweep_fbn},
    {"TopKV2", sweep_topk},
    {"NthElement", sweep_nth},
    {"InTopKV2", sweep_in_topk},
};

/* The family's other ops, swept in test_matmul.c, test_reduce.c and
 * test_linalg.c. */
static const char *const family[] = {
    "MatMul", "BatchMatMul", "BatchMatMulV2", "Sum", "Mean", "Prod", "Max", "Min", "EuclideanNorm", "All", "Any",
    "MatrixInverse", "MatrixDeterminant", "LogMatrixDeterminant", "Cholesky", "MatrixSolve", "MatrixTriangularSolve",
    "Svd", "Lu", "Qr", "MatrixSolveLs"};

Test(nn_dtypes, every_declared_dtype_matches_reference, .timeout = 60) {
  for (unsigned i = 0; i < sizeof sweeps / sizeof *sweeps; i++) sweeps[i].run(sweeps[i].op);
}

/* For one op: each type attr's declared set is within TF's, and each
 * TF-allowed dtype outside it is refused naming "attr=dtype". */
static void check_declared_vs_tf(const char *op) {
  const dfx_op_def *def = dfx__op_get(op);
  cr_assert(def, "%s has no signature", op);
  cr_assert(dfx__registry_has_kernel(nn_reg(), op), "%s has no kernel", op);
  for (int a = 0; a < def->n_attrs; a++) {
    const dfx_op_attr *at = &def->attrs[a];
    if (at->kind != DFX_ATTR_TYPE) continue;
    uint64_t have = dfx__registry_kernel_types(nn_reg(), op, at->name);
    cr_assert_neq(have, ~(uint64_t)0, "%s: %s is not constrained by a types string", op, at->name);
    cr_expect_eq(have & ~(uint64_t)at->allowed, 0, "%s: %s declares dtypes TF does not allow", op, at->name);
    for (int t = 1; t < DFX_DTYPE_END_; t++) {
      if (!(at->allowed >> t & 1) || have >> t & 1) continue;
      dfx_node *n = kh_node_new(op);
      kh_attr_type(n, at->name, (dfx_dtype)t);
      dfx_status st;
      dfx__status_clear(&st);
      char want[64];
      snprintf(want, sizeof want, "%s=%s", at->name, dfx_dtype_name((dfx_dtype)t));
      cr_expect_null(dfx__registry_kernel_for(nn_reg(), n, &st), "%s: %s has a kernel", op, want);
      cr_expect_eq(st.code, DFX_EUNIMPL, "%s %s", op, want);
      cr_expect(strstr(st.msg, want), "%s: message \"%s\" does not name %s", op, st.msg, want);
      kh_node_free(n);
    }
  }
}

Test(nn_dtypes, declared_within_tf_and_the_rest_refused) {
  for (unsigned i = 0; i < sizeof sweeps / sizeof *sweeps; i++) check_declared_vs_tf(sweeps[i].op);
  for (unsigned i = 0; i < sizeof family / sizeof *family; i++) check_declared_vs_tf(family[i]);
}

/* The refusals the brief's examples name, spelled out. */
Test(nn_dtypes, complex_and_quantized_are_refused) {
  struct {
    const char *op;
    dfx_dtype t;
  } cases[] = {{"Mean", DFX_C128}, {"Prod", DFX_QU8}, {"Sum", DFX_C64}, {"Max", DFX_QI8},
               {"ArgMax", DFX_QU8}, {"Cumsum", DFX_C128}, {"BiasAdd", DFX_QI32}, {"Svd", DFX_C64}};
  for (unsigned i = 0; i < sizeof cases / sizeof *cases; i++) {
    dfx_node *n = kh_node_new(cases[i].op);
    kh_attr_type(n, "T", cases[i].t);
    dfx_status st;
    dfx__status_clear(&st);
    cr_expect_null(dfx__registry_kernel_for(nn_reg(), n, &st));
    char want[64];
    snprintf(want, sizeof want, "kernel for T=%s", dfx_dtype_name(cases[i].t));
    cr_expect(strstr(st.msg, want), "%s: %s", cases[i].op, st.msg);
    kh_node_free(n);
  }
}
