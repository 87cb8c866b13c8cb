/* test_types.c - the dtypes of every gather-family kernel row. The sets are
 * read back from the registry, so the sweep follows the kernel tables: each
 * declared dtype of each type attr runs on a small input and is checked
 * against a naive reference, and each dtype TensorFlow allows but the row
 * leaves out is refused at lookup with a message naming the attr and dtype. */
#include <complex.h>
#include <float.h>
#include <math.h>

#include "gtest.h"
#include "lib.h"
#include "op_registry.h"

typedef struct tcase tcase;
typedef void (*run_fn)(const tcase *c, const dfx_dtype *t);
struct tcase {
  const char *op;
  const char *attrs[3]; /* the op's type attrs, swept one at a time */
  dfx_dtype def[3];     /* each attr's value while another is swept */
  run_fn run;
};

static const dfx_registry *registry(void) {
  dfx_status st;
  const dfx_registry *r = dfx__lib_registry(&st);
  cr_assert(r, "%s", st.msg);
  return r;
}

/* ---- tensors of any dtype ---- */

/* Test values are complex so that one reference serves every dtype; real
 * dtypes keep the real part. */
typedef double complex cv;

static bool is_complex(dfx_dtype dt) { return dt == DFX_C64 || dt == DFX_C128; }

/* The value x stands for in dt: x + (x + d)i for complex dtypes. */
static cv cval(dfx_dtype dt, double x, double d) { return is_complex(dt) ? x + (x + d) * I : x; }

/* Stores v (small integers; 0/1 for bool) as element i. Integers wrap like
 * the kernels' unsigned arithmetic. */
static void tset(dfx_tensor *t, int64_t i, cv cvalue) {
  void *p = t->data;
  double v = creal(cvalue);
  switch (t->dtype) {
#define CASE(DT, T) \
  case DT: ((T *)p)[i] = (T)(int64_t)v; break;
    CASE(DFX_I8, int8_t) CASE(DFX_I16, int16_t) CASE(DFX_I32, int32_t) CASE(DFX_I64, int64_t)
    CASE(DFX_U8, uint8_t) CASE(DFX_U16, uint16_t) CASE(DFX_U32, uint32_t) CASE(DFX_U64, uint64_t)
#undef CASE
    case DFX_F32: ((float *)p)[i] = (float)v; break;
    case DFX_F64: ((double *)p)[i] = v; break;
    case DFX_F16: ((uint16_t *)p)[i] = dfx__f32_to_f16((float)v); break;
    case DFX_BF16: ((uint16_t *)p)[i] = dfx__f32_to_bf16((float)v); break;
    case DFX_BOOL: ((uint8_t *)p)[i] = v != 0; break;
    case DFX_C64: ((float complex *)p)[i] = (float complex)cvalue; break;
    case DFX_C128: ((double complex *)p)[i] = cvalue; break;
    default: cr_assert_fail("tset: dtype %s", dfx_dtype_name((dfx_dtype)t->dtype));
  }
}

static cv tget(const dfx_tensor *t, int64_t i) {
  if (t->dtype == DFX_C64) return ((const float complex *)t->data)[i];
  if (t->dtype == DFX_C128) return ((const double complex *)t->data)[i];
  return dfx__tensor_get_f64(t, i);
}

/* v rounded to dt as a kernel computing in dt would store it. */
static cv in_dtype(dfx_dtype dt, cv v) {
  const int64_t one[] = {1};
  dfx_tensor *t = dfx__tensor_alloc(dt, 1, one, NULL);
  tset(t, 0, v);
  cv r = tget(t, 0);
  dfx__tensor_unref(t);
  return r;
}

/* Elements cval(dt, v[i], d). */
static dfx_tensor *tvals_im(dfx_dtype dt, int nd, const int64_t *dims, const double *v, double d) {
  dfx_tensor *t = dfx__tensor_alloc(dt, nd, dims, NULL);
  cr_assert(t);
  for (int64_t i = 0; i < t->count; i++) tset(t, i, cval(dt, v[i], d));
  return t;
}

static dfx_tensor *tvals(dfx_dtype dt, int nd, const int64_t *dims, const double *v) {
  return tvals_im(dt, nd, dims, v, 1);
}

/* Distinct-looking elements for copy kernels: strings, bools, or bytes. */
static dfx_tensor *tpattern(dfx_dtype dt, int nd, const int64_t *dims, int seed) {
  dfx_tensor *t = dfx__tensor_alloc(dt, nd, dims, NULL);
  cr_assert(t);
  size_t es = dfx__dtype_storage(dt);
  for (int64_t i = 0; i < t->count; i++) {
    if (dt == DFX_STRING) {
      char s[32];
      snprintf(s, sizeof s, "s%d_%lld", seed, (long long)i);
      dfx_tensor_set_string(t, i, s, strlen(s));
    } else if (dt == DFX_BOOL) {
      ((uint8_t *)t->data)[i] = (uint8_t)((i + seed) & 1);
    } else {
      for (size_t b = 0; b < es; b++) ((uint8_t *)t->data)[(size_t)i * es + b] = (uint8_t)(seed * 31 + i * 7 + b);
    }
  }
  return t;
}

static bool elem_eq(const dfx_tensor *a, int64_t i, const dfx_tensor *b, int64_t j) {
  if (a->dtype != b->dtype) return false;
  if (a->dtype == DFX_STRING) {
    size_t la, lb;
    const char *sa = dfx_tensor_string(a, i, &la), *sb = dfx_tensor_string(b, j, &lb);
    return la == lb && (la == 0 || memcmp(sa, sb, la) == 0);
  }
  size_t es = dfx__dtype_storage((dfx_dtype)a->dtype);
  return memcmp((const char *)a->data + (size_t)i * es, (const char *)b->data + (size_t)j * es, es) == 0;
}

/* ---- running a case ---- */

static dfx_node *tnode(const tcase *c, const dfx_dtype *t) {
  dfx_node *n = kh_node_new(c->op);
  for (int k = 0; k < 3 && c->attrs[k]; k++) kh_attr_type(n, c->attrs[k], t[k]);
  return n;
}

static const char *label(const tcase *c, const dfx_dtype *t) {
  static char buf[160];
  int len = snprintf(buf, sizeof buf, "%s", c->op);
  for (int k = 0; k < 3 && c->attrs[k]; k++)
    len += snprintf(buf + len, sizeof buf - (size_t)len, " %s=%s", c->attrs[k], dfx_dtype_name(t[k]));
  return buf;
}

/* Runs n on in (taken), asserting success; outputs in out. */
static void trun(const tcase *c, const dfx_dtype *t, dfx_node *n, dfx_tensor **in, int nin, dfx_tensor **out) {
  char err[512];
  cr_assert_eq(g_run(n, in, nin, out, err), DFX_OK, "%s: %s", label(c, t), err);
  g_unref_all(in, nin);
  kh_node_free(n);
}

static void expect_vals(const tcase *c, const dfx_dtype *t, const dfx_tensor *o, dfx_dtype dt, const cv *want,
                        int64_t n) {
  cr_assert_eq(o->dtype, dt, "%s: output dtype %s", label(c, t), dfx_dtype_name((dfx_dtype)o->dtype));
  /* want[] holds values already in dt (exact small integers, or rounded). */
  cr_assert_eq(o->count, n, "%s: %lld elements, want %lld", label(c, t), (long long)o->count, (long long)n);
  for (int64_t i = 0; i < n; i++)
    cr_expect(tget(o, i) == want[i], "%s: [%lld] %g%+gi want %g%+gi", label(c, t), (long long)i, creal(tget(o, i)),
              cimag(tget(o, i)), creal(want[i]), cimag(want[i]));
}

/* out[i] equals src[from[i]] for every i. */
static void expect_moved(const tcase *c, const dfx_dtype *t, const dfx_tensor *o, const dfx_tensor *src,
                         const int64_t *from, int64_t n) {
  cr_assert_eq(o->count, n, "%s: %lld elements, want %lld", label(c, t), (long long)o->count, (long long)n);
  for (int64_t i = 0; i < n; i++) cr_expect(elem_eq(o, i, src, from[i]), "%s: element %lld", label(c, t), (long long)i);
}

/* ---- gather and copy kernels ---- */

static void run_gather(const tcase *c, const dfx_dtype *t) {
  const int64_t pd[] = {3, 2}, id1[] = {3}, id2[] = {3, 1};
  const double iv[] = {2, 0, 2};
  bool nd = strcmp(c->op, "GatherNd") == 0, v2 = strcmp(c->op, "GatherV2") == 0;
  dfx_tensor *p = tpattern(t[0], 2, pd, 1);
  dfx_tensor *in[3] = {dfx__tensor_ref(p), tvals(t[1], nd ? 2 : 1, nd ? id2 : id1, iv), NULL}, *out[1] = {0};
  if (v2) in[2] = tvals(t[2], 0, NULL, (const double[]){0});
  trun(c, t, tnode(c, t), in, v2 ? 3 : 2, out);
  const int64_t from[] = {4, 5, 0, 1, 4, 5};
  expect_moved(c, t, out[0], p, from, 6);
  g_unref_all(out, 1);
  dfx__tensor_unref(p);
}

static void run_assign(const tcase *c, const dfx_dtype *t) {
  const int64_t d[] = {2};
  dfx_tensor *in[2] = {dfx__tensor_alloc(t[0], 1, d, NULL), dfx__tensor_alloc(t[0], 1, d, NULL)}, *out[1] = {0};
  dfx_tensor *value = dfx__tensor_ref(in[1]);
  trun(c, t, tnode(c, t), in, 2, out);
  cr_expect_eq(out[0], value, "%s: the value is forwarded", label(c, t));
  g_unref_all(out, 1);
  dfx__tensor_unref(value);
}

/* ScatterUpdate, ScatterNdUpdate, TensorScatterUpdate: rows 2 and 0 replaced. */
static void run_update(const tcase *c, const dfx_dtype *t) {
  const int64_t rd[] = {3, 2}, id1[] = {2}, id2[] = {2, 1}, ud[] = {2, 2};
  const double iv[] = {2, 0};
  bool nd = strstr(c->op, "Nd") || strncmp(c->op, "Tensor", 6) == 0;
  dfx_tensor *ref = tpattern(t[0], 2, rd, 1), *up = tpattern(t[0], 2, ud, 2);
  dfx_tensor *in[3] = {dfx__tensor_ref(ref), tvals(t[1], nd ? 2 : 1, nd ? id2 : id1, iv), dfx__tensor_ref(up)},
             *out[1] = {0};
  trun(c, t, tnode(c, t), in, 3, out);
  /* Expected rows: updates row 1, ref row 1, updates row 0. */
  const int64_t from_up[] = {2, 3, -1, -1, 0, 1}, from_ref[] = {0, 0, 2, 3, 0, 0};
  for (int i = 0; i < 6; i++) {
    const dfx_tensor *s = from_up[i] >= 0 ? up : ref;
    int64_t j = from_up[i] >= 0 ? from_up[i] : from_ref[i];
    cr_expect(elem_eq(out[0], i, s, j), "%s: element %d", label(c, t), i);
  }
  g_unref_all(out, 1);
  dfx__tensor_unref(ref);
  dfx__tensor_unref(up);
}

static void run_partition(const tcase *c, const dfx_dtype *t) {
  const int64_t dd[] = {4, 2}, pd[] = {4};
  const int32_t pv[] = {1, 0, 1, 1};
  dfx_tensor *data = tpattern(t[0], 2, dd, 3);
  dfx_tensor *in[2] = {dfx__tensor_ref(data), kh_i32(1, pd, pv)}, *out[2] = {0};
  dfx_node *n = tnode(c, t);
  kh_attr_int(n, "num_partitions", 2);
  trun(c, t, n, in, 2, out);
  const int64_t from0[] = {2, 3}, from1[] = {0, 1, 4, 5, 6, 7};
  expect_moved(c, t, out[0], data, from0, 2);
  expect_moved(c, t, out[1], data, from1, 6);
  g_unref_all(out, 2);
  dfx__tensor_unref(data);
}

static void run_stitch(const tcase *c, const dfx_dtype *t) {
  const int64_t i0d[] = {2}, i1d[] = {1}, d0d[] = {2, 2}, d1d[] = {1, 2};
  const int32_t i0[] = {2, 0}, i1[] = {1};
  dfx_tensor *a = tpattern(t[0], 2, d0d, 4), *b = tpattern(t[0], 2, d1d, 5);
  dfx_tensor *in[4] = {kh_i32(1, i0d, i0), kh_i32(1, i1d, i1), dfx__tensor_ref(a), dfx__tensor_ref(b)},
             *out[1] = {0};
  dfx_node *n = tnode(c, t);
  kh_attr_int(n, "N", 2);
  trun(c, t, n, in, 4, out);
  cr_assert_eq(out[0]->count, 6, "%s", label(c, t));
  /* Row 0 = a row 1, row 1 = b row 0, row 2 = a row 0. */
  cr_expect(elem_eq(out[0], 0, a, 2) && elem_eq(out[0], 1, a, 3), "%s", label(c, t));
  cr_expect(elem_eq(out[0], 2, b, 0) && elem_eq(out[0], 3, b, 1), "%s", label(c, t));
  cr_expect(elem_eq(out[0], 4, a, 0) && elem_eq(out[0], 5, a, 1), "%s", label(c, t));
  g_unref_all(out, 1);
  dfx__tensor_unref(a);
  dfx__tensor_unref(b);
}

/* Small vectors with repeats for the hashing kernels. */
static dfx_tensor *tkeys(dfx_dtype dt, int n, const double *v, const char *const *s) {
  const int64_t d[] = {n};
  if (dt == DFX_STRING) return g_str(1, d, s);
  double b[8];
  for (int i = 0; i < n; i++) b[i] = dt == DFX_BOOL ? (double)((int)v[i] & 1) : v[i];
  return tvals(dt, 1, d, b);
}

static void run_unique(const tcase *c, const dfx_dtype *t) {
  const double xv[] = {3, 1, 3, 2, 1, 6}, yv[] = {1, 5};
  const char *xs[] = {"c", "a", "c", "b", "a", "f"}, *ys[] = {"a", "e"};
  bool diff = strcmp(c->op, "ListDiff") == 0, counts = strcmp(c->op, "UniqueWithCounts") == 0;
  dfx_tensor *x = tkeys(t[0], 6, xv, xs), *y = tkeys(t[0], 2, yv, ys);
  dfx_tensor *in[2] = {dfx__tensor_ref(x), diff ? dfx__tensor_ref(y) : NULL}, *out[3] = {0};
  trun(c, t, tnode(c, t), in, diff ? 2 : 1, out);
  /* Naive reference: first occurrences in order (Unique), or the elements
   * of x found nowhere in y (ListDiff). */
  int64_t want_from[6], want_idx[6], want_cnt[6] = {0}, nw = 0, nidx = 0;
  for (int64_t i = 0; i < 6; i++) {
    if (diff) {
      bool found = false;
      for (int64_t j = 0; j < 2; j++) found = found || elem_eq(x, i, y, j);
      if (!found) want_from[nw] = i, want_idx[nw++] = i;
      continue;
    }
    int64_t u = 0;
    while (u < nw && !elem_eq(x, i, x, want_from[u])) u++;
    if (u == nw) want_from[nw++] = i;
    want_idx[nidx++] = u;
    want_cnt[u]++;
  }
  expect_moved(c, t, out[0], x, want_from, nw);
  cr_expect_eq(out[1]->dtype, t[1], "%s", label(c, t));
  g_expect_i64v(out[1], want_idx, diff ? nw : 6);
  if (counts) {
    cr_expect_eq(out[2]->dtype, t[1], "%s", label(c, t));
    g_expect_i64v(out[2], want_cnt, nw);
  }
  g_unref_all(out, diff || !counts ? 2 : 3);
  dfx__tensor_unref(x);
  dfx__tensor_unref(y);
}

/* ---- arithmetic kernels ---- */

/* The combine step of op on a and b, rounded to dt. Test values keep
 * complex quotients exact: divisors are u + ui, so |b|^2 is a power of 2. */
static cv apply(const char *op, cv a, cv b, dfx_dtype dt) {
  cv r;
  if (strstr(op, "Add") || strstr(op, "Sum") || strstr(op, "Mean")) r = dt == DFX_BOOL ? (a != 0 || b != 0) : a + b;
  else if (strstr(op, "Sub")) r = a - b;
  else if (strstr(op, "Mul") || strstr(op, "Prod")) r = a * b;
  else if (strstr(op, "Div")) r = dfx__dtype_is_int(dt) ? trunc(creal(a) / creal(b)) : a / b;
  else if (strstr(op, "Max")) r = creal(a) > creal(b) ? a : b;
  else if (strstr(op, "Min")) r = creal(a) < creal(b) ? a : b;
  else r = b;
  return in_dtype(dt, r);
}

/* Scatter{Add,...}, ScatterNd{Add,...}, TensorScatter{Add,...}, AssignAdd/Sub:
 * rows 2, 0, 2 of a [3,2] tensor combined with three update rows, applied in
 * order and rounded to the dtype after each step as the kernels do. */
static void run_arith(const tcase *c, const dfx_dtype *t) {
  const int64_t rd[] = {3, 2}, id1[] = {3}, id2[] = {3, 1};
  const double rv[] = {8, 6, 4, 2, 6, 8}, uv[] = {2, 1, 1, 2, 2, 1}, iv[] = {2, 0, 2};
  const double rb[] = {1, 0, 0, 1, 0, 0}, ub[] = {0, 1, 1, 0, 0, 0};
  bool assign = strncmp(c->op, "Assign", 6) == 0, nd = strstr(c->op, "Nd") || strncmp(c->op, "Tensor", 6) == 0;
  dfx_dtype dt = t[0];
  const double *r = dt == DFX_BOOL ? rb : rv, *u = dt == DFX_BOOL ? ub : uv;
  dfx_tensor *in[3] = {tvals(dt, 2, rd, r), NULL, NULL}, *out[1] = {0};
  cv want[6];
  for (int i = 0; i < 6; i++) want[i] = in_dtype(dt, cval(dt, r[i], 1));
  if (assign) {
    in[1] = tvals_im(dt, 2, rd, u, 0);
    for (int i = 0; i < 6; i++) want[i] = apply(c->op, want[i], cval(dt, u[i], 0), dt);
  } else {
    in[1] = tvals(t[1], nd ? 2 : 1, nd ? id2 : id1, iv);
    in[2] = tvals_im(dt, 2, rd, u, 0);
    for (int k = 0; k < 3; k++)
      for (int j = 0; j < 2; j++) {
        cv *w = &want[(int)iv[k] * 2 + j];
        *w = apply(c->op, *w, cval(dt, u[k * 2 + j], 0), dt);
      }
  }
  trun(c, t, tnode(c, t), in, assign ? 2 : 3, out);
  expect_vals(c, t, out[0], dt, want, 6);
  g_unref_all(out, 1);
}

/* ScatterNd: zeros, then duplicates add (strings concatenate, bools or). */
static void run_scatter_nd(const tcase *c, const dfx_dtype *t) {
  const int64_t id[] = {3, 1}, ud[] = {3, 2}, sd[] = {2};
  const double iv[] = {2, 0, 2}, uv[] = {2, 1, 1, 2, 3, 1}, ub[] = {0, 1, 1, 0, 0, 0}, sv[] = {3, 2};
  dfx_dtype dt = t[0];
  const char *us[] = {"a", "b", "c", "d", "e", "f"};
  dfx_tensor *in[3] = {tvals(t[1], 2, id, iv),
                       dt == DFX_STRING ? g_str(2, ud, us) : tvals(dt, 2, ud, dt == DFX_BOOL ? ub : uv),
                       tvals(t[1], 1, sd, sv)},
             *out[1] = {0};
  trun(c, t, tnode(c, t), in, 3, out);
  if (dt == DFX_STRING) {
    const char *want[] = {"c", "d", "", "", "ae", "bf"};
    g_expect_str(out[0], want, 6);
  } else {
    const double *u = dt == DFX_BOOL ? ub : uv;
    cv want[6] = {0};
    for (int k = 0; k < 3; k++)
      for (int j = 0; j < 2; j++) {
        cv *w = &want[(int)iv[k] * 2 + j];
        *w = apply("Add", *w, cval(dt, u[k * 2 + j], 1), dt);
      }
    expect_vals(c, t, out[0], dt, want, 6);
  }
  g_unref_all(out, 1);
}

static double limit_of(dfx_dtype dt, bool hi) {
  switch (dt) {
    case DFX_I8: return hi ? INT8_MAX : INT8_MIN;
    case DFX_I16: return hi ? INT16_MAX : INT16_MIN;
    case DFX_I32: return hi ? INT32_MAX : INT32_MIN;
    case DFX_I64: return hi ? (double)INT64_MAX : (double)INT64_MIN;
    case DFX_U8: return hi ? UINT8_MAX : 0;
    case DFX_U16: return hi ? UINT16_MAX : 0;
    case DFX_U32: return hi ? UINT32_MAX : 0;
    case DFX_U64: return hi ? (double)UINT64_MAX : 0;
    case DFX_F16: return hi ? 65504 : -65504;
    case DFX_BF16: return hi ? 3.3895313892515355e38 : -3.3895313892515355e38;
    case DFX_F32: return hi ? FLT_MAX : -FLT_MAX;
    default: return hi ? DBL_MAX : -DBL_MAX;
  }
}

/* Segment* (ids 0,0,2,2: segment 1 is a gap) and UnsortedSegment* (ids
 * 2,0,-1,2 of 4 segments: 1 and 3 empty, row 2 dropped). */
static void run_segment(const tcase *c, const dfx_dtype *t) {
  const int64_t dd[] = {4, 2}, id[] = {4};
  const double dv[] = {2, 4, 6, 8, 4, 2, 2, 6};
  bool uns = strncmp(c->op, "Unsorted", 8) == 0, mean = strstr(c->op, "Mean") != NULL;
  const double sorted_ids[] = {0, 0, 2, 2}, unsorted_ids[] = {2, 0, -1, 2}, *ids = uns ? unsorted_ids : sorted_ids;
  dfx_dtype dt = t[0];
  int nseg = uns ? 4 : 3;
  dfx_tensor *in[3] = {tvals(dt, 2, dd, dv), tvals(t[1], 1, id, ids), uns ? tvals(t[2], 0, NULL, (double[]){4}) : NULL},
             *out[1] = {0};
  /* Empty segments: 0, 1 for Prod, lowest/highest for unsorted Max/Min. */
  cv want[8];
  double cnt[4] = {0};
  bool mx = strstr(c->op, "Max") != NULL, mn = strstr(c->op, "Min") != NULL, prod = strstr(c->op, "Prod") != NULL;
  for (int i = 0; i < nseg * 2; i++) want[i] = prod ? 1 : uns && (mx || mn) ? limit_of(dt, mn) : 0;
  bool seen[4] = {0};
  for (int k = 0; k < 4; k++) {
    int s = (int)ids[k];
    if (s < 0) continue;
    for (int j = 0; j < 2; j++) {
      cv *w = &want[s * 2 + j], v = cval(dt, dv[k * 2 + j], 1);
      *w = !uns && !seen[s] ? v : apply(c->op, *w, v, dt);
    }
    seen[s] = true;
    cnt[s]++;
  }
  if (mean)
    for (int i = 0; i < nseg * 2; i++)
      if (cnt[i / 2] > 0) want[i] = apply("Div", want[i], cnt[i / 2], dt);
  trun(c, t, tnode(c, t), in, uns ? 3 : 2, out);
  expect_vals(c, t, out[0], dt, want, nseg * 2);
  g_unref_all(out, 1);
}

static void run_invperm(const tcase *c, const dfx_dtype *t) {
  const int64_t d[] = {4};
  const double xv[] = {2, 0, 3, 1};
  cv want[4];
  for (int i = 0; i < 4; i++) want[(int)xv[i]] = i;
  dfx_tensor *in[1] = {tvals(t[0], 1, d, xv)}, *out[1] = {0};
  trun(c, t, tnode(c, t), in, 1, out);
  expect_vals(c, t, out[0], t[0], want, 4);
  g_unref_all(out, 1);
}

static void run_bincount(const tcase *c, const dfx_dtype *t) {
  const int64_t d[] = {5};
  const int32_t av[] = {1, 1, 3, 0, 5};
  const double wv[] = {1, 2, 3, 4, 5};
  cv want[4] = {0};
  for (int i = 0; i < 5; i++)
    if (av[i] < 4) want[av[i]] += wv[i];
  dfx_tensor *in[3] = {kh_i32(1, d, av), kh_scalar_i32(4), tvals(t[0], 1, d, wv)}, *out[1] = {0};
  trun(c, t, tnode(c, t), in, 3, out);
  expect_vals(c, t, out[0], t[0], want, 4);
  g_unref_all(out, 1);
}

static void run_histogram(const tcase *c, const dfx_dtype *t) {
  const int64_t d[] = {7}, rd[] = {2};
  const double vv[] = {0, 1, 2, 5, 9, 10, -3}, rv[] = {0, 10};
  cv want[5] = {0};
  for (int i = 0; i < 7; i++) {
    double b = floor((vv[i] - rv[0]) / (rv[1] - rv[0]) * 5);
    want[b < 0 ? 0 : b > 4 ? 4 : (int)b]++;
  }
  dfx_tensor *in[3] = {tvals(t[0], 1, d, vv), tvals(t[0], 1, rd, rv), kh_scalar_i32(5)}, *out[1] = {0};
  trun(c, t, tnode(c, t), in, 3, out);
  expect_vals(c, t, out[0], t[1], want, 5);
  g_unref_all(out, 1);
}

static void run_sparse_add(const tcase *c, const dfx_dtype *t) {
  const int64_t id[] = {2, 2}, vd[] = {2}, sd[] = {2}, bd[] = {3, 2};
  const double iv[] = {0, 1, 2, 0}, vv[] = {3, 4}, sv[] = {3, 2}, bv[] = {1, 2, 3, 4, 5, 6};
  cv want[6];
  for (int i = 0; i < 6; i++) want[i] = cval(t[0], bv[i], 1);
  want[1] += cval(t[0], vv[0], 1);
  want[4] += cval(t[0], vv[1], 1);
  dfx_tensor *in[4] = {tvals(t[1], 2, id, iv), tvals(t[0], 1, vd, vv), tvals(t[1], 1, sd, sv), tvals(t[0], 2, bd, bv)},
             *out[1] = {0};
  trun(c, t, tnode(c, t), in, 4, out);
  expect_vals(c, t, out[0], t[0], want, 6);
  g_unref_all(out, 1);
}

static void run_ragged(const tcase *c, const dfx_dtype *t) {
  const int64_t d[] = {2};
  const double sv[] = {0, 5}, lv[] = {4, 1}, dv[] = {2, -2};
  cv want[8], splits[3] = {0};
  int n = 0;
  for (int r = 0; r < 2; r++) {
    for (double v = sv[r]; dv[r] > 0 ? v < lv[r] : v > lv[r]; v += dv[r]) want[n++] = v;
    splits[r + 1] = n;
  }
  dfx_tensor *in[3] = {tvals(t[0], 1, d, sv), tvals(t[0], 1, d, lv), tvals(t[0], 1, d, dv)}, *out[2] = {0};
  trun(c, t, tnode(c, t), in, 3, out);
  expect_vals(c, t, out[0], t[1], splits, 3);
  expect_vals(c, t, out[1], t[0], want, n);
  g_unref_all(out, 2);
}

static void run_bitpack(const tcase *c, const dfx_dtype *t) {
  const int64_t d[] = {2, 8};
  const double xv[] = {0, 3, 1, 5, 2, 2, 7, 0, 4, 4, 4, 4, 0, 0, 0, 1};
  const double th = t[0] == DFX_BOOL ? 1 : 2;
  double bits[16];
  cv want[2] = {0};
  for (int i = 0; i < 16; i++) bits[i] = t[0] == DFX_BOOL ? (double)((int)xv[i] & 1) : xv[i];
  for (int i = 0; i < 16; i++)
    want[i / 8] = want[i / 8] * 2 + (t[0] == DFX_BOOL ? bits[i] != 0 : bits[i] > th);
  dfx_tensor *in[2] = {tvals(t[0], 2, d, bits), tvals(t[0], 0, NULL, &th)}, *out[1] = {0};
  trun(c, t, tnode(c, t), in, 2, out);
  expect_vals(c, t, out[0], DFX_U8, want, 2);
  g_unref_all(out, 1);
}

static void run_cross(const tcase *c, const dfx_dtype *t) {
  const int64_t d[] = {2, 3};
  const double av[] = {2, 1, 0, 1, 2, 3}, bv[] = {0, 3, 1, 3, 2, 1};
  cv want[6];
  for (int r = 0; r < 2; r++) {
    const double *a = av + 3 * r, *b = bv + 3 * r;
    want[3 * r] = a[1] * b[2] - a[2] * b[1];
    want[3 * r + 1] = a[2] * b[0] - a[0] * b[2];
    want[3 * r + 2] = a[0] * b[1] - a[1] * b[0];
  }
  for (int i = 0; i < 6; i++) want[i] = in_dtype(t[0], want[i]); /* unsigned types wrap */
  dfx_tensor *in[2] = {tvals(t[0], 2, d, av), tvals(t[0], 2, d, bv)}, *out[1] = {0};
  trun(c, t, tnode(c, t), in, 2, out);
  expect_vals(c, t, out[0], t[0], want, 6);
  g_unref_all(out, 1);
}

/* ---- the table: every row of the family's kernel tables ---- */

#define A1(a) {a, NULL, NULL}
#define I32 DFX_I32
static const tcase cases[] = {
    {"GatherV2", {"Tparams", "Tindices", "Taxis"}, {DFX_F32, I32, I32}, run_gather},
    {"Gather", {"Tparams", "Tindices"}, {DFX_F32, I32}, run_gather},
    {"GatherNd", {"Tparams", "Tindices"}, {DFX_F32, I32}, run_gather},
    {"Assign", A1("T"), {DFX_F32}, run_assign},
    {"AssignAdd", A1("T"), {DFX_F32}, run_arith},
    {"AssignSub", A1("T"), {DFX_F32}, run_arith},
    {"ScatterUpdate", {"T", "Tindices"}, {DFX_F32, I32}, run_update},
    {"ScatterAdd", {"T", "Tindices"}, {DFX_F32, I32}, run_arith},
    {"ScatterSub", {"T", "Tindices"}, {DFX_F32, I32}, run_arith},
    {"ScatterMul", {"T", "Tindices"}, {DFX_F32, I32}, run_arith},
    {"ScatterDiv", {"T", "Tindices"}, {DFX_F32, I32}, run_arith},
    {"ScatterMax", {"T", "Tindices"}, {DFX_F32, I32}, run_arith},
    {"ScatterMin", {"T", "Tindices"}, {DFX_F32, I32}, run_arith},
    {"ScatterNd", {"T", "Tindices"}, {DFX_F32, I32}, run_scatter_nd},
    {"ScatterNdUpdate", {"T", "Tindices"}, {DFX_F32, I32}, run_update},
    {"ScatterNdAdd", {"T", "Tindices"}, {DFX_F32, I32}, run_arith},
    {"ScatterNdSub", {"T", "Tindices"}, {DFX_F32, I32}, run_arith},
    {"ScatterNdMax", {"T", "Tindices"}, {DFX_F32, I32}, run_arith},
    {"ScatterNdMin", {"T", "Tindices"}, {DFX_F32, I32}, run_arith},
    {"ScatterNdNonAliasingAdd", {"T", "Tindices"}, {DFX_F32, I32}, run_arith},
    {"TensorScatterUpdate", {"T", "Tindices"}, {DFX_F32, I32}, run_update},
    {"TensorScatterAdd", {"T", "Tindices"}, {DFX_F32, I32}, run_arith},
    {"TensorScatterSub", {"T", "Tindices"}, {DFX_F32, I32}, run_arith},
    {"TensorScatterMax", {"T", "Tindices"}, {DFX_F32, I32}, run_arith},
    {"TensorScatterMin", {"T", "Tindices"}, {DFX_F32, I32}, run_arith},
    {"UnsortedSegmentSum", {"T", "Tindices", "Tnumsegments"}, {DFX_F32, I32, I32}, run_segment},
    {"UnsortedSegmentProd", {"T", "Tindices", "Tnumsegments"}, {DFX_F32, I32, I32}, run_segment},
    {"UnsortedSegmentMax", {"T", "Tindices", "Tnumsegments"}, {DFX_F32, I32, I32}, run_segment},
    {"UnsortedSegmentMin", {"T", "Tindices", "Tnumsegments"}, {DFX_F32, I32, I32}, run_segment},
    {"SegmentSum", {"T", "Tindices"}, {DFX_F32, I32}, run_segment},
    {"SegmentMean", {"T", "Tindices"}, {DFX_F32, I32}, run_segment},
    {"SegmentProd", {"T", "Tindices"}, {DFX_F32, I32}, run_segment},
    {"SegmentMax", {"T", "Tindices"}, {DFX_F32, I32}, run_segment},
    {"SegmentMin", {"T", "Tindices"}, {DFX_F32, I32}, run_segment},
    {"DynamicPartition", A1("T"), {DFX_F32}, run_partition},
    {"DynamicStitch", A1("T"), {DFX_F32}, run_stitch},
    {"ParallelDynamicStitch", A1("T"), {DFX_F32}, run_stitch},
    {"Unique", {"T", "out_idx"}, {DFX_F32, I32}, run_unique},
    {"UniqueWithCounts", {"T", "out_idx"}, {DFX_F32, I32}, run_unique},
    {"ListDiff", {"T", "out_idx"}, {DFX_F32, I32}, run_unique},
    {"InvertPermutation", A1("T"), {I32}, run_invperm},
    {"Bincount", A1("T"), {DFX_F32}, run_bincount},
    {"HistogramFixedWidth", {"T", "dtype"}, {DFX_F32, I32}, run_histogram},
    {"SparseTensorDenseAdd", {"T", "Tindices"}, {DFX_F32, I32}, run_sparse_add},
    {"RaggedRange", {"T", "Tsplits"}, {DFX_F32, DFX_I64}, run_ragged},
    {"CompareAndBitpack", A1("T"), {DFX_F32}, run_bitpack},
    {"Cross", A1("T"), {DFX_F32}, run_cross},
};
#define N_CASES (int)(sizeof cases / sizeof cases[0])

Test(types, every_declared_dtype_matches_the_reference, .timeout = 60) {
  const dfx_registry *r = registry();
  int runs = 0;
  for (int i = 0; i < N_CASES; i++) {
    const tcase *c = &cases[i];
    /* Every type attr of the op is swept (its signature lists them). */
    const dfx_op_def *d = dfx__op_get(c->op);
    cr_assert(d, "%s has no signature", c->op);
    for (int a = 0; a < d->n_attrs; a++) {
      bool typed = d->attrs[a].kind == DFX_ATTR_TYPE ||
                   (d->attrs[a].kind == DFX_ATTR_LIST && d->attrs[a].elem == DFX_ATTR_TYPE);
      bool listed = false;
      for (int k = 0; k < 3 && c->attrs[k]; k++) listed = listed || strcmp(c->attrs[k], d->attrs[a].name) == 0;
      cr_expect(!typed || listed, "%s: type attr %s is not swept", c->op, d->attrs[a].name);
    }
    for (int k = 0; k < 3 && c->attrs[k]; k++) {
      uint64_t mask = dfx__registry_kernel_types(r, c->op, c->attrs[k]);
      cr_assert_neq(mask, ~(uint64_t)0, "%s: attr %s has no declared dtypes", c->op, c->attrs[k]);
      cr_assert(mask >> c->def[k] & 1, "%s: default %s not declared", c->op, dfx_dtype_name(c->def[k]));
      for (int dt = 1; dt < 64; dt++) {
        if (!(mask >> dt & 1)) continue;
        dfx_dtype t[3] = {c->def[0], c->def[1], c->def[2]};
        t[k] = (dfx_dtype)dt;
        c->run(c, t);
        runs++;
      }
    }
  }
  cr_expect_gt(runs, 300, "only %d runs", runs);
}

Test(types, allowed_but_undeclared_dtypes_are_refused) {
  const dfx_registry *r = registry();
  int refused = 0;
  for (int i = 0; i < N_CASES; i++) {
    const tcase *c = &cases[i];
    const dfx_op_def *d = dfx__op_get(c->op);
    for (int k = 0; k < 3 && c->attrs[k]; k++) {
      const dfx_op_attr *a = dfx__op_def_attr(d, c->attrs[k]);
      cr_assert(a, "%s has no attr %s", c->op, c->attrs[k]);
      uint64_t mask = dfx__registry_kernel_types(r, c->op, c->attrs[k]);
      for (int dt = 1; dt < 32; dt++) {
        if (!dfx__dtype_valid(dt) || (a->allowed && !(a->allowed >> dt & 1)) || mask >> dt & 1) continue;
        dfx_dtype t[3] = {c->def[0], c->def[1], c->def[2]};
        t[k] = (dfx_dtype)dt;
        dfx_node *n = tnode(c, t);
        dfx_status st;
        dfx__status_clear(&st);
        cr_expect_null(dfx__registry_kernel_for(r, n, &st), "%s: %s=%s has a kernel", c->op, c->attrs[k],
                       dfx_dtype_name((dfx_dtype)dt));
        char want[96];
        snprintf(want, sizeof want, "%s=%s", c->attrs[k], dfx_dtype_name((dfx_dtype)dt));
        cr_expect_eq(st.code, DFX_EUNIMPL);
        cr_expect(strstr(st.msg, want) != NULL, "%s: message '%s' lacks '%s'", c->op, st.msg, want);
        kh_node_free(n);
        refused++;
      }
    }
  }
  cr_expect_gt(refused, 50, "only %d refusals", refused);
}
