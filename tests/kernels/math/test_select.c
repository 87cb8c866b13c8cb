/* test_select.c - Select/SelectV2, AddN/AccumulateNV2, ClipByValue,
 * ZerosLike/OnesLike and CheckNumerics. */
#include "dtype.h"
#include "mt.h"

static dfx_code run3(const char *op, dfx_dtype t, dfx_tensor *a, dfx_tensor *b, dfx_tensor *c, dfx_tensor **o,
                     char *err) {
  dfx_tensor *in[3] = {a, b, c};
  return mt_run(op, t, in, 3, o, err, 256);
}

Test(select, same_shape_vector_and_scalar_condition) {
  int64_t d[2] = {3, 2}, dv[1] = {3};
  const double cv[] = {1, 0, 0, 1, 1, 0}, tv[] = {1, 2, 3, 4, 5, 6}, ev[] = {-1, -2, -3, -4, -5, -6};
  dfx_tensor *t = mt_tensor(DFX_F32, 2, d, tv), *e = mt_tensor(DFX_F32, 2, d, ev), *o;
  dfx_tensor *c = mt_tensor(DFX_BOOL, 2, d, cv);
  char err[256];
  const char *opsl[] = {"Select", "SelectV2"};
  for (int k = 0; k < 2; k++) {
    cr_assert_eq(run3(opsl[k], DFX_F32, c, t, e, &o, err), DFX_OK, "%s", err);
    const double w[] = {1, -2, -3, 4, 5, -6};
    mt_expect_shape(o, 2, d);
    mt_expect_vals(o, w, 0, "Select same");
    dfx__tensor_unref(o);
  }
  dfx__tensor_unref(c);
  /* Select: a vector condition picks rows. */
  const double cv2[] = {1, 0, 1};
  c = mt_tensor(DFX_BOOL, 1, dv, cv2);
  cr_assert_eq(run3("Select", DFX_F32, c, t, e, &o, err), DFX_OK, "%s", err);
  const double w2[] = {1, 2, -3, -4, 5, 6};
  mt_expect_vals(o, w2, 0, "Select rows");
  mt_expect_shape(o, 2, d);
  dfx__tensor_unref(o);
  /* SelectV2 broadcasts [3] against [3,2]: incompatible. */
  cr_expect_eq(run3("SelectV2", DFX_F32, c, t, e, &o, err), DFX_EINVAL);
  dfx__tensor_unref(c);
  /* scalar condition forwards a whole input */
  const double one[] = {0};
  c = mt_tensor(DFX_BOOL, 0, NULL, one);
  for (int k = 0; k < 2; k++) {
    cr_assert_eq(run3(opsl[k], DFX_F32, c, t, e, &o, err), DFX_OK, "%s", err);
    cr_expect_eq(o, e);
    dfx__tensor_unref(o);
  }
  dfx__tensor_unref(c);
  /* errors */
  int64_t d2[1] = {2};
  c = mt_tensor(DFX_BOOL, 1, d2, cv);
  cr_expect_eq(run3("Select", DFX_F32, c, t, e, &o, err), DFX_EINVAL);
  cr_expect(strstr(err, "Number of batches of 'then' must match size of 'condition', but saw: 3 vs. 2"), "%s", err);
  dfx__tensor_unref(c);
  dfx_tensor *e2 = mt_tensor(DFX_F32, 1, dv, NULL);
  c = mt_tensor(DFX_BOOL, 2, d, cv);
  cr_expect_eq(run3("Select", DFX_F32, c, t, e2, &o, err), DFX_EINVAL);
  cr_expect(strstr(err, "'then' and 'else' must have the same size.  but received: [3,2] vs. [3]"), "%s", err);
  dfx__tensor_unref(c);
  dfx__tensor_unref(e2);
  dfx__tensor_unref(t);
  dfx__tensor_unref(e);
}

Test(select, strings_deep_copied) {
  int64_t d[1] = {2};
  dfx_tensor *c = mt_tensor(DFX_BOOL, 1, d, (const double[]){0, 1});
  dfx_tensor *t = dfx__tensor_alloc(DFX_STRING, 1, d, NULL), *e = dfx__tensor_alloc(DFX_STRING, 1, d, NULL), *o;
  dfx_tensor_set_string(t, 0, "t0", 2);
  dfx_tensor_set_string(t, 1, "t1", 2);
  dfx_tensor_set_string(e, 0, "e0", 2);
  char err[256];
  cr_assert_eq(run3("Select", DFX_STRING, c, t, e, &o, err), DFX_OK, "%s", err);
  size_t len;
  cr_expect_eq(memcmp(dfx_tensor_string(o, 0, &len), "e0", 2), 0);
  cr_expect_eq(memcmp(dfx_tensor_string(o, 1, &len), "t1", 2), 0);
  cr_expect_neq(((dfx_str *)o->data)[1].ptr, ((dfx_str *)t->data)[1].ptr);
  dfx__tensor_unref(o);
  dfx__tensor_unref(c);
  dfx__tensor_unref(t);
  dfx__tensor_unref(e);
}

static dfx_code run_addn(const char *op, dfx_dtype t, dfx_tensor **in, int n, dfx_tensor **o, char *err) {
  dfx_node *nd = kh_node_new(op);
  kh_attr_type(nd, "T", t);
  kh_attr_int(nd, "N", n);
  if (op[0] == 'A' && op[1] == 'c') kh_attr_shape(nd, "shape", -1, NULL);
  dfx_tensor *outs[1] = {0};
  int nout;
  dfx_code c = kh_run(nd, in, n, outs, &nout, err, 256);
  kh_node_free(nd);
  *o = outs[0];
  return c;
}

Test(addn, half_rounds_in_order_and_one_input_forwards) {
  /* half rounds after every addition: 2048 + 1 + 1 stays 2048 */
  int64_t d1[1] = {1};
  dfx_tensor *in[3] = {mt_tensor(DFX_F16, 1, d1, (const double[]){2048}), mt_tensor(DFX_F16, 1, d1, (const double[]){1}),
                       mt_tensor(DFX_F16, 1, d1, (const double[]){1})}, *o;
  char err[256];
  cr_assert_eq(run_addn("AddN", DFX_F16, in, 3, &o, err), DFX_OK);
  cr_expect_eq(dfx__tensor_get_f64(o, 0), 2048);
  dfx__tensor_unref(o);
  /* single input forwards */
  cr_assert_eq(run_addn("AddN", DFX_F16, in, 1, &o, err), DFX_OK);
  cr_expect_eq(o, in[0]);
  dfx__tensor_unref(o);
  for (int i = 0; i < 3; i++) dfx__tensor_unref(in[i]);
}

Test(addn, shape_mismatch) {
  int64_t d1[1] = {2}, d2[1] = {3};
  dfx_tensor *in[2] = {mt_tensor(DFX_F32, 1, d1, NULL), mt_tensor(DFX_F32, 1, d2, NULL)}, *o;
  char err[256];
  cr_expect_eq(run_addn("AddN", DFX_F32, in, 2, &o, err), DFX_EINVAL);
  cr_expect(strstr(err, "must have the same size and shape.  Input 0: [2] != input 1: [3]"), "%s", err);
  dfx__tensor_unref(in[0]);
  dfx__tensor_unref(in[1]);
}

/* AccumulateNV2's shape attr must agree with its inputs (-1 matches any
 * size); a dim below -1 is refused when the node is planned. */
Test(addn, accumulate_shape_attr) {
  int64_t d[2] = {2, 2};
  dfx_tensor *in[2] = {mt_tensor(DFX_F32, 2, d, NULL), mt_tensor(DFX_F32, 2, d, NULL)};
  static const struct {
    int rank;
    int64_t dims[2];
    dfx_code want;
    const char *msg;
  } cases[] = {
      {-1, {0}, DFX_OK, NULL},
      {2, {2, 2}, DFX_OK, NULL},
      {2, {-1, 2}, DFX_OK, NULL},
      {2, {3, 2}, DFX_EINVAL, "inputs have shape [2,2] but attr shape is [3,2]"},
      {1, {4}, DFX_EINVAL, "inputs have shape [2,2] but attr shape is [4]"},
      {2, {2, -5}, DFX_EINVAL, "attr shape has dim 1 = -5"},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    dfx_node *n = kh_node_new("AccumulateNV2");
    kh_attr_type(n, "T", DFX_F32);
    kh_attr_int(n, "N", 2);
    kh_attr_shape(n, "shape", cases[k].rank, cases[k].dims);
    dfx_tensor *outs[1] = {0};
    int nout;
    char err[256];
    dfx_code c = kh_run(n, in, 2, outs, &nout, err, sizeof err);
    cr_expect_eq(c, cases[k].want, "case %zu: %s", k, err);
    if (cases[k].msg) cr_expect(strstr(err, cases[k].msg), "case %zu: %s", k, err);
    dfx__tensor_unref(outs[0]);
    kh_node_free(n);
  }
  dfx__tensor_unref(in[0]);
  dfx__tensor_unref(in[1]);
}

Test(clip, scalar_and_tensor_bounds) {
  int64_t d[1] = {5};
  const double x[] = {-3, 0.5, 2, 9, NAN}, lo[] = {0}, hi[] = {1};
  const dfx_dtype ts[] = {DFX_F32, DFX_F64, DFX_F16, DFX_BF16};
  for (int k = 0; k < 4; k++) {
    dfx_tensor *tx = mt_tensor(ts[k], 1, d, x), *tl = mt_tensor(ts[k], 0, NULL, lo), *th = mt_tensor(ts[k], 0, NULL, hi), *o;
    char err[256];
    cr_assert_eq(run3("ClipByValue", ts[k], tx, tl, th, &o, err), DFX_OK, "%s", err);
    const double w[] = {0, 0.5, 1, 1, NAN};
    mt_expect_vals(o, w, 0, "ClipByValue");
    dfx__tensor_unref(o);
    dfx__tensor_unref(tx);
    dfx__tensor_unref(tl);
    dfx__tensor_unref(th);
  }
  const double xi[] = {-3, 1, 2, 9, 4}, lv[] = {0, 2, 0, 0, 5}, hv[] = {1, 3, 1, 10, 3};
  dfx_tensor *tx = mt_tensor(DFX_I32, 1, d, xi), *tl = mt_tensor(DFX_I32, 1, d, lv), *th = mt_tensor(DFX_I32, 1, d, hv), *o;
  char err[256];
  cr_assert_eq(run3("ClipByValue", DFX_I32, tx, tl, th, &o, err), DFX_OK, "%s", err);
  const double w[] = {0, 2, 1, 9, 5}; /* lo > hi gives lo */
  mt_expect_vals(o, w, 0, "ClipByValue i32");
  dfx__tensor_unref(o);
  dfx__tensor_unref(tl);
  int64_t d2[1] = {2};
  tl = mt_tensor(DFX_I32, 1, d2, NULL);
  cr_expect_eq(run3("ClipByValue", DFX_I32, tx, tl, th, &o, err), DFX_EINVAL);
  dfx__tensor_unref(tx);
  dfx__tensor_unref(tl);
  dfx__tensor_unref(th);
}

Test(check_numerics, messages) {
  int64_t d[1] = {3};
  dfx_node *n = kh_node_new("CheckNumerics");
  kh_attr_type(n, "T", DFX_F32);
  kh_attr_str(n, "message", "bad tensor");
  const double ok[] = {1, 2, 3}, nan[] = {1, NAN, 3}, inf[] = {INFINITY, 2, 3}, both[] = {NAN, -INFINITY, 0};
  const double *vals[] = {ok, nan, inf, both};
  const char *msgs[] = {NULL, "bad tensor : Tensor had NaN values", "bad tensor : Tensor had Inf values",
                        "bad tensor : Tensor had Inf and NaN values"};
  for (int k = 0; k < 4; k++) {
    dfx_tensor *x = mt_tensor(DFX_F32, 1, d, vals[k]), *in[1] = {x}, *outs[1] = {0};
    char err[256];
    int nout;
    dfx_code c = kh_run(n, in, 1, outs, &nout, err, sizeof err);
    if (!msgs[k]) {
      cr_assert_eq(c, DFX_OK, "%s", err);
      cr_expect_eq(outs[0], x);
      dfx__tensor_unref(outs[0]);
    } else {
      cr_expect_eq(c, DFX_EINVAL);
      cr_expect_str_eq(err, msgs[k]);
    }
    dfx__tensor_unref(x);
  }
  kh_node_free(n);
}

/* ---- every declared dtype ---- */

/* A tensor of dtype t whose element bytes are seed, seed + 1, ... (any
 * fixed-size dtype; bool bytes stay 0 or 1). */
static dfx_tensor *byte_tensor(dfx_dtype t, int ndims, const int64_t *dims, unsigned seed) {
  dfx_tensor *x = dfx__tensor_alloc(t, ndims, dims, NULL);
  cr_assert(x);
  unsigned char *p = x->data;
  for (size_t i = 0; i < x->nbytes; i++) p[i] = t == DFX_BOOL ? (seed + i) & 1 : (unsigned char)(seed + i * 7);
  return x;
}

Test(select, every_declared_dtype) {
  int64_t dc[2] = {2, 1}, dt[2] = {1, 3}, de[1] = {3}, wd[2] = {2, 3};
  const double cv[] = {1, 0};
  for (int v2 = 0; v2 < 2; v2++)
    MT_FOR_DTYPES(t, mt_declared(v2 ? "SelectV2" : "Select", "T")) {
      if (t == DFX_STRING) continue; /* strings_deep_copied */
      /* Select: same shapes; SelectV2: [2,1] ? [1,3] : [3]. */
      dfx_tensor *c = mt_tensor(DFX_BOOL, 2, v2 ? dc : wd, v2 ? cv : (const double[]){1, 0, 1, 0, 0, 1});
      dfx_tensor *tt = byte_tensor(t, 2, v2 ? dt : wd, 1), *e = byte_tensor(t, v2 ? 1 : 2, v2 ? de : wd, 100), *o;
      char err[256];
      cr_assert_eq(run3(v2 ? "SelectV2" : "Select", t, c, tt, e, &o, err), DFX_OK, "%s", err);
      mt_expect_shape(o, 2, wd);
      const size_t es = dfx_dtype_size(t);
      for (int i = 0; i < 6; i++) {
        const int row = i / 3, col = i % 3;
        const bool pick = v2 ? cv[row] != 0 : ((const uint8_t *)c->data)[i];
        const unsigned char *want = pick ? (const unsigned char *)tt->data + (v2 ? col : i) * es
                                         : (const unsigned char *)e->data + (v2 ? col : i) * es;
        cr_expect_eq(memcmp((const unsigned char *)o->data + i * es, want, es), 0, "%s %s [%d]",
                     v2 ? "SelectV2" : "Select", dfx_dtype_name(t), i);
      }
      dfx__tensor_unref(o);
      dfx__tensor_unref(c);
      dfx__tensor_unref(tt);
      dfx__tensor_unref(e);
    }
}

Test(like, every_declared_dtype) {
  int64_t d[2] = {2, 3};
  MT_FOR_DTYPES(t, mt_declared("ZerosLike", "T")) {
    dfx_tensor *x = t == DFX_STRING ? dfx__tensor_alloc(t, 2, d, NULL) : byte_tensor(t, 2, d, 3), *o, *in[1] = {x};
    if (t == DFX_STRING) dfx_tensor_set_string(x, 1, "ab", 2);
    char err[256];
    cr_assert_eq(mt_run("ZerosLike", t, in, 1, &o, err, sizeof err), DFX_OK, "%s", err);
    mt_expect_shape(o, 2, d);
    cr_expect_eq(o->dtype, t);
    for (size_t i = 0; i < o->nbytes; i++) cr_expect_eq(((unsigned char *)o->data)[i], 0, "%s", dfx_dtype_name(t));
    dfx__tensor_unref(o);
    dfx__tensor_unref(x);
  }
  MT_FOR_DTYPES(t, mt_declared("OnesLike", "T")) {
    dfx_tensor *x = byte_tensor(t, 2, d, 3), *o, *in[1] = {x};
    char err[256];
    cr_assert_eq(mt_run("OnesLike", t, in, 1, &o, err, sizeof err), DFX_OK, "%s", err);
    mt_expect_shape(o, 2, d);
    cr_expect_eq(o->dtype, t);
    for (int i = 0; i < 6; i++) {
      double re = 0, im = 0;
      if (mt_is_complex(t))
        mt_cget(o, i, &re, &im);
      else
        re = dfx__tensor_get_f64(o, i);
      cr_expect(re == 1 && im == 0, "OnesLike %s [%d]: %g%+gi", dfx_dtype_name(t), i, re, im);
    }
    dfx__tensor_unref(o);
    dfx__tensor_unref(x);
  }
}

Test(addn, every_declared_dtype) {
  int64_t d[2] = {2, 2};
  const double a[] = {1, 2, 3, 4}, b[] = {10, 20, 30, 40}, c[] = {5, 5, 5, 5}, w[] = {16, 27, 38, 49};
  double wim[4];
  for (int i = 0; i < 4; i++) wim[i] = -w[i] / 2; /* mt_tensor's complex parts are v and -v/2 */
  for (int op = 0; op < 2; op++)
    MT_FOR_DTYPES(t, mt_declared(op ? "AccumulateNV2" : "AddN", "T")) {
      dfx_tensor *in[3] = {mt_tensor(t, 2, d, a), mt_tensor(t, 2, d, b), mt_tensor(t, 2, d, c)}, *o;
      char err[256];
      cr_assert_eq(run_addn(op ? "AccumulateNV2" : "AddN", t, in, 3, &o, err), DFX_OK, "%s", err);
      mt_expect_shape(o, 2, d);
      cr_expect_eq(o->dtype, t);
      if (mt_is_complex(t))
        mt_expect_cvals(o, w, wim, 0, "AddN complex");
      else
        mt_expect_vals(o, w, 0, "AddN");
      dfx__tensor_unref(o);
      for (int i = 0; i < 3; i++) dfx__tensor_unref(in[i]);
    }
}

Test(clip, every_declared_dtype) {
  int64_t d[1] = {5};
  const double x[] = {0, 1, 5, 9, 3}, lo[] = {2}, hi[] = {6}, w[] = {2, 2, 5, 6, 3};
  MT_FOR_DTYPES(t, mt_declared("ClipByValue", "T")) {
    dfx_tensor *tx = mt_tensor(t, 1, d, x), *tl = mt_tensor(t, 0, NULL, lo), *th = mt_tensor(t, 0, NULL, hi), *o;
    char err[256];
    cr_assert_eq(run3("ClipByValue", t, tx, tl, th, &o, err), DFX_OK, "%s", err);
    cr_expect_eq(o->dtype, t);
    mt_expect_vals(o, w, 0, dfx_dtype_name(t));
    dfx__tensor_unref(o);
    dfx__tensor_unref(tx);
    dfx__tensor_unref(tl);
    dfx__tensor_unref(th);
  }
}

Test(check_numerics, every_declared_dtype_and_stateful) {
  int64_t d[1] = {3};
  const double ok[] = {1, -2, 3}, inf[] = {1, INFINITY, 3};
  MT_FOR_DTYPES(t, mt_declared("CheckNumerics", "T")) {
    dfx_node *n = kh_node_new("CheckNumerics");
    kh_attr_type(n, "T", t);
    kh_attr_str(n, "message", "m");
    dfx_tensor *x = mt_tensor(t, 1, d, ok), *in[1] = {x}, *outs[1];
    char err[256];
    int nout;
    cr_assert_eq(kh_run(n, in, 1, outs, &nout, err, sizeof err), DFX_OK, "%s", err);
    cr_expect_eq(outs[0], x);
    dfx__tensor_unref(outs[0]);
    dfx__tensor_unref(x);
    x = mt_tensor(t, 1, d, inf);
    in[0] = x;
    cr_expect_eq(kh_run(n, in, 1, outs, &nout, err, sizeof err), DFX_EINVAL);
    cr_expect_str_eq(err, "m : Tensor had Inf values");
    dfx__tensor_unref(x);
    kh_node_free(n);
  }
  /* Stateful, as its OpDef: never folded away as a constant. */
  const dfx_kernel_def *k = dfx__registry_kernel_any(mt_registry(), "CheckNumerics");
  cr_expect(k->flags & DFX_KERNEL_STATEFUL);
}
