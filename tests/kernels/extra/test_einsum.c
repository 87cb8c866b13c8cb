/* test_einsum.c - BatchMatMulV3 and Einsum against a naive sum over every
 * label assignment (size-1 dims broadcast), over their dtypes, adjoints,
 * broadcast batches, ellipses, diagonals, implicit outputs and errors. */
#include <complex.h>
#include <math.h>

#include "sparse/stest.h"

/* ---- naive einsum: explicit letters only; an operand's size-1 dim
 * broadcasts against the label's size elsewhere ---- */

typedef struct ref_op {
  const char *labels;
  int nd;
  int64_t dims[8];
  const double complex *v;
} ref_op;

static void ref_einsum(const ref_op *ops, int nops, const char *outl, double complex *out, int64_t *outn) {
  int64_t size[128] = {0};
  char all[32];
  int na = 0;
  for (int k = 0; k < nops; k++)
    for (int a = 0; ops[k].labels[a]; a++) {
      unsigned char c = (unsigned char)ops[k].labels[a];
      if (!size[c]) all[na++] = (char)c;
      if (ops[k].dims[a] > size[c]) size[c] = ops[k].dims[a];
    }
  int64_t on = 1;
  for (int j = 0; outl[j]; j++) on *= size[(unsigned char)outl[j]];
  for (int64_t i = 0; i < on; i++) out[i] = 0;
  *outn = on;
  int64_t idx[128] = {0}, total = 1;
  for (int i = 0; i < na; i++) total *= size[(unsigned char)all[i]];
  for (int64_t it = 0; it < total; it++) {
    int64_t rest = it;
    for (int i = na - 1; i >= 0; i--) {
      idx[(unsigned char)all[i]] = rest % size[(unsigned char)all[i]];
      rest /= size[(unsigned char)all[i]];
    }
    double complex p = 1;
    for (int k = 0; k < nops; k++) {
      int64_t off = 0;
      for (int a = 0; a < ops[k].nd; a++)
        off = off * ops[k].dims[a] + (ops[k].dims[a] == 1 ? 0 : idx[(unsigned char)ops[k].labels[a]]);
      p *= ops[k].v[off];
    }
    int64_t o = 0;
    for (int j = 0; outl[j]; j++) o = o * size[(unsigned char)outl[j]] + idx[(unsigned char)outl[j]];
    out[o] += p;
  }
}

static dfx_tensor *tensor_of(dfx_dtype dt, int nd, const int64_t *dims, const double complex *v) {
  int64_t n = dfx__shape_count(nd, dims);
  if (dt == DFX_C64 || dt == DFX_C128) {
    dfx_tensor *t = dfx__tensor_alloc(dt, nd, dims, NULL);
    for (int64_t i = 0; i < n; i++) {
      if (dt == DFX_C64) ((dfx_c64 *)t->data)[i] = (dfx_c64){(float)creal(v[i]), (float)cimag(v[i])};
      else ((dfx_c128 *)t->data)[i] = (dfx_c128){creal(v[i]), cimag(v[i])};
    }
    return t;
  }
  double *d = malloc(sizeof(double) * (size_t)(n ? n : 1));
  for (int64_t i = 0; i < n; i++) d[i] = creal(v[i]);
  dfx_tensor *t = s_from_doubles(dt, nd, dims, d);
  free(d);
  return t;
}

static double complex elem(const dfx_tensor *t, int64_t i) {
  if (t->dtype == DFX_C64) return ((dfx_c64 *)t->data)[i].re + ((dfx_c64 *)t->data)[i].im * I;
  if (t->dtype == DFX_C128) return ((dfx_c128 *)t->data)[i].re + ((dfx_c128 *)t->data)[i].im * I;
  return dfx__tensor_get_f64(t, i);
}

static void fill_values(double complex *v, int64_t n, uint32_t *seed, bool cplx, bool ints) {
  for (int64_t i = 0; i < n; i++) {
    double re = ints ? (double)((int)(s_rand(seed) % 7) - 3) : s_uniform(seed, -1, 1);
    double im = cplx ? (ints ? (double)((int)(s_rand(seed) % 5) - 2) : s_uniform(seed, -1, 1)) : 0;
    v[i] = re + im * I;
  }
}

static double tol_of(dfx_dtype dt) {
  return dt == DFX_BF16 ? 5e-2 : dt == DFX_F16 ? 1e-2 : dt == DFX_F32 || dt == DFX_C64 ? 1e-5 : 1e-12;
}

/* ---- Einsum ---- */

typedef struct ecase {
  const char *eq, *ref_in[2], *ref_out;
  int nin, nd[2];
  int64_t dims[2][5];
} ecase;

static const ecase ecases[] = {
    {"ij,jk->ik", {"ij", "jk"}, "ik", 2, {2, 2}, {{3, 4}, {4, 5}}},
    {"ij,jk", {"ij", "jk"}, "ik", 2, {2, 2}, {{3, 4}, {4, 5}}},
    {"ij,kj->ik", {"ij", "kj"}, "ik", 2, {2, 2}, {{3, 4}, {5, 4}}},
    {"bij,bjk->bik", {"bij", "bjk"}, "bik", 2, {3, 3}, {{2, 3, 4}, {2, 4, 5}}},
    {"...ij,...jk->...ik", {"bij", "jk"}, "bik", 2, {3, 2}, {{2, 3, 4}, {4, 5}}},
    {"...ij,...jk->...ik", {"abij", "bjk"}, "abik", 2, {4, 3}, {{2, 1, 3, 4}, {5, 4, 2}}},
    {"...i,...i->i", {"ai", "ai"}, "i", 2, {2, 2}, {{1, 3}, {4, 3}}},
    {"ii->i", {"ii"}, "i", 1, {2}, {{3, 3}}},
    {"ii", {"ii"}, "", 1, {2}, {{4, 4}}},
    {"ij->ji", {"ij"}, "ji", 1, {2}, {{3, 5}}},
    {"ij->", {"ij"}, "", 1, {2}, {{3, 5}}},
    {"ijk->kj", {"ijk"}, "kj", 1, {3}, {{2, 3, 4}}},
    {"...->...", {"ab"}, "ab", 1, {2}, {{2, 3}}},
    {"i,j->ij", {"i", "j"}, "ij", 2, {1, 1}, {{3}, {4}}},
    {"bi,bi->b", {"bi", "bi"}, "b", 2, {2, 2}, {{3, 4}, {3, 4}}},
    {"i,i->", {"i", "i"}, "", 2, {1, 1}, {{5}, {5}}},
    {"abc,cd->abd", {"abc", "cd"}, "abd", 2, {3, 2}, {{2, 3, 4}, {4, 2}}},
    {"iij,jk->ik", {"iij", "jk"}, "ik", 2, {3, 2}, {{3, 3, 4}, {4, 2}}},
    {"ij,ij->ij", {"ij", "ij"}, "ij", 2, {2, 2}, {{3, 4}, {3, 4}}},
    {"bxy,zy->bzx", {"bxy", "zy"}, "bzx", 2, {3, 2}, {{2, 3, 4}, {5, 4}}},
    {"ab,cd->", {"ab", "cd"}, "", 2, {2, 2}, {{2, 3}, {2, 2}}},
    {"a b , b c -> a c", {"ab", "bc"}, "ac", 2, {2, 2}, {{2, 3}, {3, 2}}},
    {"Ab,bC->CA", {"Ab", "bC"}, "CA", 2, {2, 2}, {{2, 3}, {3, 4}}},
    {"ij,jk->ik", {"ij", "jk"}, "ik", 2, {2, 2}, {{0, 4}, {4, 5}}},
    {"ij,jk->ik", {"ij", "jk"}, "ik", 2, {2, 2}, {{3, 0}, {0, 5}}},
};

Test(einsum, reference_cases) {
  const dfx_dtype dts[] = {DFX_F64, DFX_F32, DFX_C128, DFX_C64, DFX_I32, DFX_I64, DFX_F16, DFX_BF16};
  uint32_t seed = 9;
  for (size_t ci = 0; ci < sizeof ecases / sizeof ecases[0]; ci++)
    for (size_t t = 0; t < sizeof dts / sizeof dts[0]; t++) {
      const ecase *c = &ecases[ci];
      dfx_dtype dt = dts[t];
      bool cplx = dt == DFX_C64 || dt == DFX_C128, ints = dt == DFX_I32 || dt == DFX_I64;
      double complex v[2][256], want[512];
      ref_op ops[2];
      dfx_tensor *in[2] = {NULL, NULL}, *out[1] = {0};
      for (int k = 0; k < c->nin; k++) {
        int64_t n = dfx__shape_count(c->nd[k], c->dims[k]);
        fill_values(v[k], n, &seed, cplx, ints || dt == DFX_BF16 || dt == DFX_F16);
        ops[k] = (ref_op){c->ref_in[k], c->nd[k], {0}, v[k]};
        memcpy(ops[k].dims, c->dims[k], sizeof(int64_t) * (size_t)c->nd[k]);
        in[k] = tensor_of(dt, c->nd[k], c->dims[k], v[k]);
      }
      int64_t wn;
      ref_einsum(ops, c->nin, c->ref_out, want, &wn);
      dfx_node *n = kh_node_new("Einsum");
      kh_attr_type(n, "T", dt);
      kh_attr_int(n, "N", c->nin);
      kh_attr_str(n, "equation", c->eq);
      char err[512];
      cr_assert_eq(s_run(n, in, c->nin, out, err), DFX_OK, "%s %s: %s", c->eq, dfx_dtype_name(dt), err);
      cr_assert_eq(out[0]->dtype, dt);
      cr_assert_eq(out[0]->ndims, (int)strlen(c->ref_out), "%s: rank %d", c->eq, out[0]->ndims);
      cr_assert_eq(out[0]->count, wn, "%s", c->eq);
      for (int64_t i = 0; i < wn; i++) {
        double complex g = elem(out[0], i);
        cr_expect(cabs(g - want[i]) <= tol_of(dt) * (1 + cabs(want[i])), "%s %s [%lld] (%g,%g) want (%g,%g)", c->eq,
                  dfx_dtype_name(dt), (long long)i, creal(g), cimag(g), creal(want[i]), cimag(want[i]));
      }
      s_unref_all(out, 1);
      s_unref_all(in, c->nin);
      kh_node_free(n);
    }
}

Test(einsum, errors) {
  struct {
    const char *eq;
    int nin;
    int64_t d0[2], d1[2];
    const char *msg;
  } cases[] = {
      {"ij,jk->ik", 2, {3, 4}, {5, 6}, "Expected dimension 4 at axis 0 of the input shaped [5,6] but got dimension 5"},
      {"ij,jk->il", 2, {3, 4}, {4, 6}, "Output subscript contains the label l not present in the input subscripts"},
      {"ij,jk->ii", 2, {3, 4}, {4, 6}, "Output subscript contains repeated label i"},
      {"ijk,jk->ik", 2, {3, 4}, {4, 6}, "Input 0 to einsum has rank 2 but its subscript has 3 labels"},
      {"ij->i->j", 1, {3, 4}, {0, 0}, "Expecting exactly one '->'"},
      {"ij,jk->ik", 1, {3, 4}, {0, 0}, "Expecting 1 input subscripts"},
      {"i1,jk->ik", 2, {3, 4}, {4, 6}, "Invalid character '1'"},
      {"...i...,j->ij", 2, {3, 4}, {4, 6}, "more than one ellipsis"},
      {"..i,j->ij", 2, {3, 4}, {4, 6}, "Expected ellipsis"},
      {"...ij,...jk->...ik", 2, {3, 4}, {4, 6}, NULL},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    dfx_node *n = kh_node_new("Einsum");
    kh_attr_type(n, "T", DFX_F32);
    kh_attr_int(n, "N", cases[c].nin);
    kh_attr_str(n, "equation", cases[c].eq);
    float z[64] = {0};
    dfx_tensor *in[2] = {kh_f32(2, cases[c].d0, z), cases[c].nin > 1 ? kh_f32(2, cases[c].d1, z) : NULL};
    if (cases[c].msg) {
      s_expect_err(n, in, cases[c].nin, cases[c].msg);
    } else {
      dfx_tensor *out[1] = {0};
      char err[512];
      cr_expect_eq(s_run(n, in, cases[c].nin, out, err), DFX_OK, "%s", err);
      s_unref_all(out, 1);
    }
    s_unref_all(in, cases[c].nin);
    kh_node_free(n);
  }
}

/* ---- BatchMatMulV3 ---- */

Test(bmm3, reference_sweep) {
  struct {
    dfx_dtype a, b, o;
  } types[] = {{DFX_F32, DFX_F32, DFX_F32}, {DFX_F64, DFX_F64, DFX_F64},   {DFX_F16, DFX_F16, DFX_F16},
               {DFX_BF16, DFX_BF16, DFX_BF16}, {DFX_I16, DFX_I16, DFX_I16}, {DFX_I32, DFX_I32, DFX_I32},
               {DFX_I64, DFX_I64, DFX_I64},    {DFX_C64, DFX_C64, DFX_C64}, {DFX_C128, DFX_C128, DFX_C128},
               {DFX_I8, DFX_I8, DFX_I32},      {DFX_U8, DFX_I8, DFX_I32},   {DFX_BF16, DFX_F32, DFX_F32},
               {DFX_F32, DFX_F32, DFX_C64}};
  struct {
    int na, nb;
    int64_t ad[4], bd[4];
  } shapes[] = {{2, 2, {3, 4}, {4, 5}}, {3, 3, {2, 3, 4}, {2, 4, 5}}, {4, 3, {2, 1, 3, 4}, {3, 4, 5}},
                {2, 3, {3, 4}, {2, 4, 5}}, {3, 2, {2, 0, 4}, {4, 5}}, {2, 2, {3, 0}, {0, 5}}};
  uint32_t seed = 21;
  for (size_t t = 0; t < sizeof types / sizeof types[0]; t++)
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
      for (int adj = 0; adj < 4; adj++) {
        bool ax = adj & 1, ay = adj & 2;
        bool cplx = types[t].a == DFX_C64 || types[t].a == DFX_C128;
        int na = shapes[s].na, nb = shapes[s].nb;
        int64_t ad[4], bd[4];
        memcpy(ad, shapes[s].ad, sizeof ad);
        memcpy(bd, shapes[s].bd, sizeof bd);
        /* Stored shapes: swap the matrix dims of adjoint operands. */
        if (ax) ad[na - 2] = shapes[s].ad[na - 1], ad[na - 1] = shapes[s].ad[na - 2];
        if (ay) bd[nb - 2] = shapes[s].bd[nb - 1], bd[nb - 1] = shapes[s].bd[nb - 2];
        double complex va[128], vb[128], want[256];
        int64_t nva = dfx__shape_count(na, ad), nvb = dfx__shape_count(nb, bd);
        bool small = !dfx__dtype_is_float(types[t].a) || types[t].a == DFX_F16 || types[t].a == DFX_BF16;
        fill_values(va, nva, &seed, cplx, small);
        fill_values(vb, nvb, &seed, cplx, small);
        if (types[t].a == DFX_U8)
          for (int64_t i = 0; i < nva; i++) va[i] = fabs(creal(va[i]));
        /* Reference operands: conjugated when adjoint. */
        double complex ca[128], cb[128];
        for (int64_t i = 0; i < nva; i++) ca[i] = ax ? conj(va[i]) : va[i];
        for (int64_t i = 0; i < nvb; i++) cb[i] = ay ? conj(vb[i]) : vb[i];
        char la[8] = {0}, lb[8] = {0}, lo[8] = {0};
        const char *batch = "pqrs";
        for (int i = 0; i < na - 2; i++) la[i] = batch[4 - (na - 2) + i];
        for (int i = 0; i < nb - 2; i++) lb[i] = batch[4 - (nb - 2) + i];
        int nbo = na > nb ? na - 2 : nb - 2;
        for (int i = 0; i < nbo; i++) lo[i] = batch[4 - nbo + i];
        strcat(la, ax ? "km" : "mk");
        strcat(lb, ay ? "nk" : "kn");
        strcat(lo, "mn");
        ref_op ops[2] = {{la, na, {0}, ca}, {lb, nb, {0}, cb}};
        memcpy(ops[0].dims, ad, sizeof ad);
        memcpy(ops[1].dims, bd, sizeof bd);
        int64_t wn;
        ref_einsum(ops, 2, lo, want, &wn);
        dfx_node *n = kh_node_new("BatchMatMulV3");
        kh_attr_type(n, "Ta", types[t].a);
        kh_attr_type(n, "Tb", types[t].b);
        kh_attr_type(n, "Tout", types[t].o);
        kh_attr_bool(n, "adj_x", ax);
        kh_attr_bool(n, "adj_y", ay);
        dfx_tensor *in[2] = {tensor_of(types[t].a, na, ad, va), tensor_of(types[t].b, nb, bd, vb)}, *out[1] = {0};
        char err[512];
        cr_assert_eq(s_run(n, in, 2, out, err), DFX_OK, "%s", err);
        cr_assert_eq(out[0]->dtype, types[t].o);
        cr_assert_eq(out[0]->count, wn);
        for (int64_t i = 0; i < wn; i++) {
          double complex g = elem(out[0], i);
          cr_expect(cabs(g - want[i]) <= tol_of(types[t].o == DFX_C64 ? DFX_C64 : types[t].a) * (1 + cabs(want[i])),
                    "types %zu shape %zu adj %d [%lld] (%g,%g) want (%g,%g)", t, s, adj, (long long)i, creal(g),
                    cimag(g), creal(want[i]), cimag(want[i]));
        }
        s_unref_all(out, 1);
        s_unref_all(in, 2);
        kh_node_free(n);
      }
}

Test(bmm3, errors) {
  const int64_t d1[1] = {3}, d2[2] = {3, 4}, d3[2] = {5, 6}, b1[3] = {2, 3, 4}, b2[3] = {3, 4, 5};
  float z[64] = {0};
  dfx_node *n = kh_node_new("BatchMatMulV3");
  kh_attr_type(n, "Ta", DFX_F32);
  kh_attr_type(n, "Tb", DFX_F32);
  kh_attr_type(n, "Tout", DFX_F32);
  dfx_tensor *in[2] = {kh_f32(1, d1, z), kh_f32(2, d2, z)};
  s_expect_err(n, in, 2, "In[0] ndims must be >= 2: 1");
  s_unref_all(in, 2);
  in[0] = kh_f32(2, d2, z), in[1] = kh_f32(2, d3, z);
  s_expect_err(n, in, 2, "In[0] mismatch In[1] shape: 4 vs. 5: [3,4] [5,6] 0 0");
  s_unref_all(in, 2);
  in[0] = kh_f32(3, b1, z), in[1] = kh_f32(3, b2, z);
  s_expect_err(n, in, 2, "In[0] and In[1] must have compatible batch dimensions: [2,3,4] vs. [3,4,5]");
  s_unref_all(in, 2);
  kh_node_free(n);
  /* A combination TF has no kernel for: float inputs, integer output. */
  n = kh_node_new("BatchMatMulV3");
  kh_attr_type(n, "Ta", DFX_F32);
  kh_attr_type(n, "Tb", DFX_F32);
  kh_attr_type(n, "Tout", DFX_I32);
  in[0] = kh_f32(2, d2, z), in[1] = kh_f32(2, (int64_t[]){4, 2}, z);
  s_expect_err(n, in, 2, "BatchMatMulV3 has no kernel for Ta=DT_FLOAT, Tb=DT_FLOAT, Tout=DT_INT32");
  s_unref_all(in, 2);
  kh_node_free(n);
}
