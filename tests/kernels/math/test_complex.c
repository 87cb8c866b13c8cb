/* test_complex.c - Complex, Real, Imag, Angle, ComplexAbs and Conj on each
 * (complex, real) pairing their kernels declare, against libm on the parts. */
#include "dtype.h"
#include "mt.h"

/* Runs op with T=t and Tout=tout on n inputs. */
static dfx_code run_tt(const char *op, dfx_dtype t, dfx_dtype tout, dfx_tensor **in, int n, dfx_tensor **o,
                       char *err) {
  dfx_node *nd = kh_node_new(op);
  kh_attr_type(nd, "T", t);
  if (tout != DFX_INVALID) kh_attr_type(nd, "Tout", tout);
  dfx_tensor *outs[1] = {0};
  int nout;
  dfx_code c = kh_run(nd, in, n, outs, &nout, err, 256);
  kh_node_free(nd);
  *o = outs[0];
  return c;
}

Test(complex, parts_every_declared_dtype) {
  static const char *const OPS[] = {"Real", "Imag", "Angle", "ComplexAbs", "Conj"};
  const double v[] = {3, -1.5, 0, 0.25, -4};
  int64_t d[2] = {5, 1};
  for (int k = 0; k < 5; k++)
    MT_FOR_DTYPES(t, mt_declared(OPS[k], "T")) {
      const dfx_dtype tout = k == 4 ? DFX_INVALID : t == DFX_C64 ? DFX_F32 : DFX_F64;
      dfx_tensor *x = mt_tensor(t, 2, d, v), *o, *in[1] = {x};
      char err[256];
      cr_assert_eq(run_tt(OPS[k], t, tout, in, 1, &o, err), DFX_OK, "%s %s: %s", OPS[k], dfx_dtype_name(t), err);
      mt_expect_shape(o, 2, d);
      cr_assert_eq(o->dtype, k == 4 ? t : tout);
      double w[5], wi[5];
      for (int i = 0; i < 5; i++) {
        double re, im;
        mt_cget(x, i, &re, &im);
        w[i] = k == 0 ? re : k == 1 ? im : k == 2 ? atan2(im, re) : k == 3 ? sqrt(re * re + im * im) : re;
        wi[i] = -im;
      }
      if (k == 4)
        mt_expect_cvals(o, w, wi, 0, "Conj");
      else
        mt_expect_vals(o, w, mt_tol(tout), OPS[k]);
      dfx__tensor_unref(o);
      dfx__tensor_unref(x);
    }
}

Test(complex, complex_broadcasts) {
  int64_t dr[2] = {2, 1}, di[1] = {3}, dout[2] = {2, 3};
  const double re[] = {1, -2}, im[] = {0.5, 0, -3};
  MT_FOR_DTYPES(t, mt_declared("Complex", "T")) {
    const dfx_dtype tout = t == DFX_F32 ? DFX_C64 : DFX_C128;
    dfx_tensor *in[2] = {mt_tensor(t, 2, dr, re), mt_tensor(t, 1, di, im)}, *o;
    char err[256];
    cr_assert_eq(run_tt("Complex", t, tout, in, 2, &o, err), DFX_OK, "%s", err);
    mt_expect_shape(o, 2, dout);
    cr_assert_eq(o->dtype, tout);
    double wr[6], wi[6];
    for (int i = 0; i < 6; i++) {
      wr[i] = re[i / 3];
      wi[i] = im[i % 3];
    }
    mt_expect_cvals(o, wr, wi, 0, "Complex");
    dfx__tensor_unref(o);
    dfx__tensor_unref(in[0]);
    dfx__tensor_unref(in[1]);
  }
}
