/* xmm.c - work-dtype conversion, axis permutation and batch gemm for
 * BatchMatMulV3 and Einsum (see xmm.h). */
#include <cblas.h>
#include <complex.h>
#include <limits.h>
#include <string.h>

#include "alloc.h"
#include "kdispatch.h"
#include "xmm.h"

dfx_dtype dfx__x_work_type(dfx_dtype t) {
  switch (t) {
    case DFX_F16:
    case DFX_BF16:
    case DFX_F32: return DFX_F32;
    case DFX_F64: return DFX_F64;
    case DFX_C64: return DFX_C64;
    case DFX_C128: return DFX_C128;
    default: return dfx__dtype_is_int(t) ? DFX_I64 : (dfx_dtype)0;
  }
}

/* Element i of t as a complex double (real dtypes: imaginary part 0). */
static double complex cload(const dfx_tensor *t, int64_t i) {
  switch (t->dtype) {
    case DFX_C64: {
      const dfx_c64 *c = (const dfx_c64 *)t->data + i;
      return c->re + c->im * I;
    }
    case DFX_C128: {
      const dfx_c128 *c = (const dfx_c128 *)t->data + i;
      return c->re + c->im * I;
    }
    default: return dfx__tensor_get_f64(t, i);
  }
}

dfx_tensor *dfx__x_to_work(dfx_kctx *ctx, dfx_tensor *t, dfx_dtype w) {
  if (t->dtype == w) return dfx__tensor_ref(t);
  dfx_code code;
  dfx_tensor *o = dfx__tensor_alloc(w, t->ndims, t->dims, &code);
  if (!o) {
    dfx__kctx_fail(ctx, code, "out of memory for a %s intermediate", dfx_dtype_name(w));
    return NULL;
  }
  for (int64_t i = 0; i < t->count; i++) {
    switch (w) {
      case DFX_F32: ((float *)o->data)[i] = (float)dfx__tensor_get_f64(t, i); break;
      case DFX_F64: ((double *)o->data)[i] = dfx__tensor_get_f64(t, i); break;
      case DFX_I64: ((int64_t *)o->data)[i] = dfx__tensor_get_i64(t, i); break;
      case DFX_C64: {
        double complex c = cload(t, i);
        ((dfx_c64 *)o->data)[i] = (dfx_c64){(float)creal(c), (float)cimag(c)};
        break;
      }
      default: {
        double complex c = cload(t, i);
        ((dfx_c128 *)o->data)[i] = (dfx_c128){creal(c), cimag(c)};
        break;
      }
    }
  }
  return o;
}

void dfx__x_from_work(const void *src, dfx_dtype w, void *dst, dfx_dtype t, int64_t n) {
  if (w == t) {
    memcpy(dst, src, (size_t)n * dfx__dtype_storage(t));
    return;
  }
  for (int64_t i = 0; i < n; i++) {
    double re = 0, im = 0;
    int64_t iv = 0;
    switch (w) {
      case DFX_F32: re = ((const float *)src)[i]; break;
      case DFX_F64: re = ((const double *)src)[i]; break;
      case DFX_C64: re = ((const dfx_c64 *)src)[i].re, im = ((const dfx_c64 *)src)[i].im; break;
      case DFX_C128: re = ((const dfx_c128 *)src)[i].re, im = ((const dfx_c128 *)src)[i].im; break;
      default: iv = ((const int64_t *)src)[i], re = (double)iv; break;
    }
    switch (t) {
#define INT(DT, T) \
  case DT: ((T *)dst)[i] = w == DFX_I64 ? (T)(uint64_t)iv : (T)re; break;
      DFX_INT_TYPES(INT)
#undef INT
      case DFX_F32: ((float *)dst)[i] = (float)re; break;
      case DFX_F64: ((double *)dst)[i] = re; break;
      case DFX_F16: ((uint16_t *)dst)[i] = dfx__f32_to_f16((float)re); break;
      case DFX_BF16: ((uint16_t *)dst)[i] = dfx__f32_to_bf16((float)re); break;
      case DFX_C64: ((dfx_c64 *)dst)[i] = (dfx_c64){(float)re, (float)im}; break;
      case DFX_C128: ((dfx_c128 *)dst)[i] = (dfx_c128){re, im}; break;
      default: break;
    }
  }
}

dfx_tensor *dfx__x_permute(dfx_kctx *ctx, dfx_tensor *t, const int *perm) {
  int nd = t->ndims;
  bool ident = true;
  for (int i = 0; i < nd; i++) ident = ident && perm[i] == i;
  if (ident) return dfx__tensor_ref(t);
  int64_t od[DFX_MAX_DIMS], str[DFX_MAX_DIMS], ostr[DFX_MAX_DIMS], idx[DFX_MAX_DIMS] = {0};
  int64_t s = 1;
  for (int i = nd - 1; i >= 0; i--) {
    str[i] = s;
    s *= t->dims[i];
  }
  for (int i = 0; i < nd; i++) {
    od[i] = t->dims[perm[i]];
    ostr[i] = str[perm[i]];
  }
  dfx_code code;
  dfx_tensor *o = dfx__tensor_alloc((dfx_dtype)t->dtype, nd, od, &code);
  if (!o) {
    dfx__kctx_fail(ctx, code, "out of memory for a transposed intermediate");
    return NULL;
  }
  size_t es = dfx__dtype_storage((dfx_dtype)t->dtype);
  const char *src = t->data;
  char *dst = o->data;
  int64_t off = 0;
  for (int64_t i = 0; i < o->count; i++) {
    memcpy(dst + (size_t)i * es, src + (size_t)off * es, es);
    for (int d = nd - 1; d >= 0; d--) {
      off += ostr[d];
      if (++idx[d] < od[d]) break;
      off -= ostr[d] * od[d];
      idx[d] = 0;
    }
    if ((i & 0xfffff) == 0xfffff && dfx__kctx_poll(ctx)) {
      dfx__tensor_unref(o);
      return NULL;
    }
  }
  return o;
}

dfx_code dfx__x_bcast(dfx_kctx *ctx, int na, const int64_t *ad, int nbd, const int64_t *bd, dfx_xmm *p) {
  int nx = na - 2, ny = nbd - 2, nb = nx > ny ? nx : ny;
  int64_t as = 1, bs = 1;
  p->nb = nb;
  for (int i = nb - 1; i >= 0; i--) {
    int ia = i - (nb - nx), ib = i - (nb - ny);
    int64_t x = ia >= 0 ? ad[ia] : 1, y = ib >= 0 ? bd[ib] : 1;
    if (x != y && x != 1 && y != 1) {
      char b1[128], b2[128];
      return dfx__kctx_fail(ctx, DFX_EINVAL, "In[0] and In[1] must have compatible batch dimensions: %s vs. %s",
                            dfx__shape_str(na, ad, b1, sizeof b1), dfx__shape_str(nbd, bd, b2, sizeof b2));
    }
    p->bdims[i] = x == 1 ? y : x;
    p->astr[i] = x == 1 ? 0 : as;
    p->bstr[i] = y == 1 ? 0 : bs;
    as *= x;
    bs *= y;
  }
  return DFX_OK;
}

#define NAIVE(NAME, T, CONJ)                                                                            \
  static void NAME(const T *a, const T *b, T *c, int64_t m, int64_t n, int64_t k, bool ta, bool tb,      \
                   bool cj) {                                                                           \
    for (int64_t i = 0; i < m; i++)                                                                     \
      for (int64_t j = 0; j < n; j++) {                                                                 \
        T s = 0;                                                                                        \
        for (int64_t q = 0; q < k; q++) {                                                               \
          T x = ta ? a[q * m + i] : a[i * k + q], y = tb ? b[j * k + q] : b[q * n + j];                 \
          if (cj && ta) x = CONJ(x);                                                                    \
          if (cj && tb) y = CONJ(y);                                                                    \
          s += x * y;                                                                                   \
        }                                                                                               \
        c[i * n + j] = s;                                                                               \
      }                                                                                                 \
  }
#define NOCONJ(x) (x)
NAIVE(naive_f32, float, NOCONJ)
NAIVE(naive_f64, double, NOCONJ)
NAIVE(naive_c64, float complex, conjf)
NAIVE(naive_c128, double complex, conj)
#undef NAIVE

static void naive_i64(const int64_t *a, const int64_t *b, int64_t *c, int64_t m, int64_t n, int64_t k, bool ta,
                      bool tb) {
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) {
      uint64_t s = 0;
      for (int64_t q = 0; q < k; q++)
        s += (uint64_t)(ta ? a[q * m + i] : a[i * k + q]) * (uint64_t)(tb ? b[j * k + q] : b[q * n + j]);
      c[i * n + j] = (int64_t)s;
    }
}

static void gemm(const dfx_xmm *p, dfx_dtype w, const void *a, const void *b, void *c) {
  int64_t m = p->m, n = p->n, k = p->k;
  size_t es = dfx__dtype_storage(w);
  if (m == 0 || n == 0) return;
  if (k == 0) {
    memset(c, 0, (size_t)(m * n) * es);
    return;
  }
  bool blas = m <= INT_MAX && n <= INT_MAX && k <= INT_MAX && w != DFX_I64;
  enum CBLAS_TRANSPOSE tr = p->conj ? CblasConjTrans : CblasTrans;
  enum CBLAS_TRANSPOSE tra = p->ta ? tr : CblasNoTrans, trb = p->tb ? tr : CblasNoTrans;
  int lda = (int)(p->ta ? m : k), ldb = (int)(p->tb ? k : n);
  static const double one[2] = {1, 0}, zero[2] = {0, 0};
  static const float onef[2] = {1, 0}, zerof[2] = {0, 0};
  switch (w) {
    case DFX_F32:
      if (blas) cblas_sgemm(CblasRowMajor, tra, trb, (int)m, (int)n, (int)k, 1.0f, a, lda, b, ldb, 0.0f, c, (int)n);
      else naive_f32(a, b, c, m, n, k, p->ta, p->tb, false);
      break;
    case DFX_F64:
      if (blas) cblas_dgemm(CblasRowMajor, tra, trb, (int)m, (int)n, (int)k, 1.0, a, lda, b, ldb, 0.0, c, (int)n);
      else naive_f64(a, b, c, m, n, k, p->ta, p->tb, false);
      break;
    case DFX_C64:
      if (blas) cblas_cgemm(CblasRowMajor, tra, trb, (int)m, (int)n, (int)k, onef, a, lda, b, ldb, zerof, c, (int)n);
      else naive_c64(a, b, c, m, n, k, p->ta, p->tb, p->conj);
      break;
    case DFX_C128:
      if (blas) cblas_zgemm(CblasRowMajor, tra, trb, (int)m, (int)n, (int)k, one, a, lda, b, ldb, zero, c, (int)n);
      else naive_c128(a, b, c, m, n, k, p->ta, p->tb, p->conj);
      break;
    default: naive_i64(a, b, c, m, n, k, p->ta, p->tb); break;
  }
}

dfx_code dfx__x_bmm(dfx_kctx *ctx, const dfx_xmm *p, dfx_dtype w, const void *a, const void *b, void *c) {
  int64_t batches = p->nb ? dfx__shape_count(p->nb, p->bdims) : 1, idx[DFX_MAX_DIMS] = {0};
  size_t es = dfx__dtype_storage(w);
  int64_t asz = p->m * p->k, bsz = p->k * p->n, csz = p->m * p->n, work = 0;
  for (int64_t bi = 0; bi < batches; bi++) {
    int64_t ao = 0, bo = 0;
    for (int d = 0; d < p->nb; d++) {
      ao += idx[d] * p->astr[d];
      bo += idx[d] * p->bstr[d];
    }
    gemm(p, w, (const char *)a + (size_t)(ao * asz) * es, (const char *)b + (size_t)(bo * bsz) * es,
         (char *)c + (size_t)(bi * csz) * es);
    for (int d = p->nb - 1; d >= 0 && ++idx[d] == p->bdims[d]; d--) idx[d] = 0;
    int64_t step = csz > 0 && p->k > INT64_MAX / csz ? INT64_MAX : csz * (p->k + 1);
    work = work > INT64_MAX - step ? INT64_MAX : work + step;
    if (work >= ((int64_t)1 << 24)) {
      work = 0;
      if (dfx__kctx_poll(ctx)) return ctx->st->code;
    }
  }
  return DFX_OK;
}
