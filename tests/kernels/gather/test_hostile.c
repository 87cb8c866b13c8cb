/* test_hostile.c - regressions for hostile inputs to the gather family:
 * output sizes taken from input values stop at the tensor limit with an
 * error naming the value; shapes whose products overflow int64 (dims beside
 * a zero) and extreme indices neither overflow nor loop for long; attrs are
 * checked at init; long kernels stop when the run is cancelled or late. */
#include <math.h>

#include "gtest.h"
#include "lib.h"
#include "node_sig.h"
#include "step.h"

#define BIG ((int64_t)1 << 40)

/* The node's kernel row, its attrs completed as a session would. */
static const dfx_kernel_def *kernel_of(dfx_node *n) {
  dfx_status st;
  dfx__status_clear(&st);
  int expected = 0;
  cr_assert_eq(dfx__node_fill_defaults(n, n->def, &st), DFX_OK, "%s", st.msg);
  cr_assert_eq(dfx__node_resolve_types(n, n->def, &expected, &st), DFX_OK, "%s", st.msg);
  const dfx_registry *r = dfx__lib_registry(&st);
  cr_assert(r, "%s", st.msg);
  const dfx_kernel_def *k = dfx__registry_kernel_for(r, n, &st);
  cr_assert(k, "%s: %s", n->op, st.msg);
  return k;
}

/* Runs n on a step that is already cancelled or past its deadline;
 * returns the kernel's code. */
static dfx_code run_late(dfx_node *n, dfx_tensor **in, int n_in, bool cancel, char *err) {
  dfx_step step;
  cr_assert_eq(dfx__step_init(&step), DFX_OK);
  if (cancel) dfx__step_cancel(&step);
  else step.deadline_ns = 1; /* long past */
  dfx_tensor *out[4] = {0};
  dfx_code c = kh_run_step(n, in, n_in, out, NULL, &step, err, 512);
  g_unref_all(out, 4);
  dfx__step_destroy(&step);
  return c;
}

static dfx_node *node2(const char *op, const char *a0, dfx_dtype t0, const char *a1, dfx_dtype t1) {
  dfx_node *n = kh_node_new(op);
  kh_attr_type(n, a0, t0);
  if (a1) kh_attr_type(n, a1, t1);
  return n;
}

static dfx_tensor *scalar_i64(int64_t v) { return kh_i64(0, NULL, &v); }

/* ---- sizes from values ---- */

typedef struct sized_case {
  const char *what;  /* expected in the message */
  dfx_node *(*node)(void);
  void (*inputs)(dfx_tensor **in, int *n);
} sized_case;

static dfx_node *n_unsorted(void) {
  dfx_node *n = node2("UnsortedSegmentSum", "T", DFX_F32, "Tindices", DFX_I32);
  kh_attr_type(n, "Tnumsegments", DFX_I64);
  return n;
}
static void in_unsorted(dfx_tensor **in, int *n) {
  const int64_t d[] = {2, 1024};
  const int32_t ids[] = {0, 1};
  in[0] = kh_f32(2, d, NULL);
  in[1] = kh_i32(1, d, ids);
  in[2] = scalar_i64(BIG);
  *n = 3;
}
static dfx_node *n_sorted(void) { return node2("SegmentSum", "T", DFX_F64, "Tindices", DFX_I64); }
static void in_sorted(dfx_tensor **in, int *n) {
  const int64_t d[] = {2}, ids[] = {0, INT64_MAX};
  in[0] = kh_tensor(DFX_F64, 1, d, NULL);
  in[1] = kh_i64(1, d, ids);
  *n = 2;
}
static void in_sorted_big(dfx_tensor **in, int *n) {
  const int64_t d[] = {2}, ids[] = {0, BIG};
  in[0] = kh_tensor(DFX_F64, 1, d, NULL);
  in[1] = kh_i64(1, d, ids);
  *n = 2;
}
static dfx_node *n_stitch(void) {
  dfx_node *n = node2("DynamicStitch", "T", DFX_F32, NULL, DFX_INVALID);
  kh_attr_int(n, "N", 1);
  return n;
}
static void in_stitch(dfx_tensor **in, int *n) {
  const int64_t d[] = {1}, dd[] = {1, 1024};
  const int32_t ix[] = {INT32_MAX};
  in[0] = kh_i32(1, d, ix);
  in[1] = kh_f32(2, dd, NULL);
  *n = 2;
}
static dfx_node *n_bincount(void) { return node2("Bincount", "T", DFX_F64, NULL, DFX_INVALID); }
static void in_bincount(dfx_tensor **in, int *n) {
  const int64_t d[] = {1};
  const int32_t a[] = {3};
  in[0] = kh_i32(1, d, a);
  in[1] = kh_scalar_i32(INT32_MAX);
  in[2] = kh_tensor(DFX_F64, 1, (const int64_t[]){0}, NULL);
  *n = 3;
}
static dfx_node *n_hist(void) { return node2("HistogramFixedWidth", "T", DFX_F32, "dtype", DFX_I64); }
static void in_hist(dfx_tensor **in, int *n) {
  const int64_t d[] = {2};
  const float r[] = {0, 1};
  in[0] = kh_f32(1, d, r);
  in[1] = kh_f32(1, d, r);
  in[2] = kh_scalar_i32(INT32_MAX);
  *n = 3;
}
static dfx_node *n_scatter_nd(void) { return node2("ScatterNd", "T", DFX_F32, "Tindices", DFX_I64); }
static void in_scatter_nd(dfx_tensor **in, int *n) {
  const int64_t id[] = {1, 2}, iv[] = {0, 0}, ud[] = {1}, sd[] = {2}, sv[] = {BIG, BIG};
  in[0] = kh_i64(2, id, iv);
  in[1] = kh_f32(1, ud, (const float[]){1});
  in[2] = kh_i64(1, sd, sv);
  *n = 3;
}
static void in_scatter_nd_limit(dfx_tensor **in, int *n) {
  const int64_t id[] = {1, 2}, iv[] = {0, 0}, ud[] = {1}, sd[] = {2}, sv[] = {1 << 20, 1 << 20};
  in[0] = kh_i64(2, id, iv);
  in[1] = kh_f32(1, ud, (const float[]){1});
  in[2] = kh_i64(1, sd, sv);
  *n = 3;
}
static dfx_node *n_ragged(void) { return node2("RaggedRange", "T", DFX_I64, "Tsplits", DFX_I64); }
static void in_ragged(dfx_tensor **in, int *n) {
  in[0] = scalar_i64(0);
  in[1] = scalar_i64(INT64_MAX);
  in[2] = scalar_i64(1);
  *n = 3;
}

Test(hostile, sizes_from_values_stop_at_the_limit_naming_the_value) {
  const sized_case cases[] = {
      {"num_segments = 1099511627776 is too large", n_unsorted, in_unsorted},
      {"the largest segment id = 9223372036854775807 is too large", n_sorted, in_sorted},
      {"the largest segment id = 1099511627776 is too large", n_sorted, in_sorted_big},
      {"the largest index = 2147483647 is too large", n_stitch, in_stitch},
      {"size = 2147483647 is too large", n_bincount, in_bincount},
      {"nbins = 2147483647 is too large", n_hist, in_hist},
      {"shape = [1099511627776,1099511627776] is too large", n_scatter_nd, in_scatter_nd},
      {"shape = [1048576,1048576] is too large", n_scatter_nd, in_scatter_nd_limit},
      {"the total range size = 9223372036854775807 is too large", n_ragged, in_ragged},
  };
  dfx_set_max_tensor_bytes((size_t)1 << 30); /* the same verdict on any machine */
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    dfx_tensor *in[4] = {0}, *out[4] = {0};
    int nin = 0;
    cases[i].inputs(in, &nin);
    dfx_node *n = cases[i].node();
    char err[512];
    cr_expect_eq(g_run(n, in, nin, out, err), DFX_ELIMIT, "case %zu: %s", i, err);
    cr_expect(strstr(err, cases[i].what) != NULL, "case %zu: '%s' lacks '%s'", i, err, cases[i].what);
    g_unref_all(in, nin);
    kh_node_free(n);
  }
}

/* ---- overflow and unbounded loops ---- */

Test(hostile, extreme_indices_and_ranges_do_not_overflow) {
  /* GatherNd: an index of INT64_MAX in the first position, then a second
   * coordinate: the flat offset used to overflow before the check. */
  const int64_t pd[] = {2, 3}, id[] = {1, 2}, iv[] = {INT64_MAX, 2};
  dfx_tensor *in[2] = {kh_f32(2, pd, NULL), kh_i64(2, id, iv)};
  dfx_node *n = node2("GatherNd", "Tparams", DFX_F32, "Tindices", DFX_I64);
  g_expect_err(n, in, 2, "indices[0] = [9223372036854775807, 2] does not index into param shape [2,3]");
  g_unref_all(in, 2);
  kh_node_free(n);
  /* ScatterNdAdd: the same for the scatter side. */
  const int64_t ud[] = {1};
  dfx_tensor *sin[3] = {kh_f32(2, pd, NULL), kh_i64(2, id, iv), kh_f32(1, ud, (const float[]){1})};
  dfx_node *sn = node2("ScatterNdAdd", "T", DFX_F32, "Tindices", DFX_I64);
  g_expect_err(sn, sin, 3, "does not index into shape [2,3]");
  g_unref_all(sin, 3);
  kh_node_free(sn);
  /* RaggedRange over the whole int64 range: its size does not fit in int64
   * (it used to wrap to a wrong, small size). */
  dfx_tensor *rin[3] = {scalar_i64(INT64_MIN), scalar_i64(INT64_MAX), scalar_i64(2)};
  dfx_node *rn = node2("RaggedRange", "T", DFX_I64, "Tsplits", DFX_I64);
  g_expect_err(rn, rin, 3, "Requires ((limit - start) / delta) <= 9223372036854775807");
  g_unref_all(rin, 3);
  kh_node_free(rn);
}

/* Kernels given tensors with no elements whose other dims multiply past
 * int64 succeed with the right (empty) shape. */
Test(hostile, empty_tensors_with_huge_dims) {
  const int64_t huge[] = {0, BIG, BIG}, one[] = {1}, zero[] = {0};
  char err[512];
  dfx_tensor *out[2] = {0};
  /* SegmentSum: data [0, 2^40, 2^40], no ids. */
  dfx_tensor *s_in[2] = {kh_f32(3, huge, NULL), kh_i32(1, zero, NULL)};
  dfx_node *s = node2("SegmentSum", "T", DFX_F32, "Tindices", DFX_I32);
  cr_assert_eq(g_run(s, s_in, 2, out, err), DFX_OK, "%s", err);
  g_expect_shape(out[0], 3, huge);
  g_unref_all(out, 1);
  g_unref_all(s_in, 2);
  kh_node_free(s);
  /* UnsortedSegmentSum: the same data, no segments. */
  dfx_tensor *u_in[3] = {kh_f32(3, huge, NULL), kh_i32(1, zero, NULL), kh_scalar_i32(0)};
  dfx_node *u = node2("UnsortedSegmentSum", "T", DFX_F32, "Tindices", DFX_I32);
  cr_assert_eq(g_run(u, u_in, 3, out, err), DFX_OK, "%s", err);
  g_expect_shape(out[0], 3, huge);
  g_unref_all(out, 1);
  g_unref_all(u_in, 3);
  kh_node_free(u);
  /* DynamicPartition and DynamicStitch. */
  dfx_tensor *p_in[2] = {kh_f32(3, huge, NULL), kh_i32(1, zero, NULL)};
  dfx_node *p = node2("DynamicPartition", "T", DFX_F32, NULL, DFX_INVALID);
  kh_attr_int(p, "num_partitions", 2);
  cr_assert_eq(g_run(p, p_in, 2, out, err), DFX_OK, "%s", err);
  g_expect_shape(out[1], 3, huge);
  g_unref_all(out, 2);
  g_unref_all(p_in, 2);
  kh_node_free(p);
  dfx_tensor *st_in[2] = {kh_i32(1, zero, NULL), kh_f32(3, huge, NULL)};
  dfx_node *st = node2("DynamicStitch", "T", DFX_F32, NULL, DFX_INVALID);
  kh_attr_int(st, "N", 1);
  cr_assert_eq(g_run(st, st_in, 2, out, err), DFX_OK, "%s", err);
  g_expect_shape(out[0], 3, huge);
  g_unref_all(out, 1);
  g_unref_all(st_in, 2);
  kh_node_free(st);
  /* GatherV2 along axis 1 of [1, 0, 2^40, 2^40]. */
  const int64_t gp[] = {1, 0, BIG, BIG};
  dfx_tensor *g_in[3] = {kh_f32(4, gp, NULL), kh_i32(1, one, (const int32_t[]){0}), kh_scalar_i32(0)};
  dfx_node *g = node2("GatherV2", "Tparams", DFX_F32, "Tindices", DFX_I32);
  kh_attr_type(g, "Taxis", DFX_I32);
  cr_assert_eq(g_run(g, g_in, 3, out, err), DFX_OK, "%s", err);
  g_expect_shape(out[0], 4, gp);
  g_unref_all(out, 1);
  g_unref_all(g_in, 3);
  kh_node_free(g);
}

/* Scalar partitions, indices or segment ids over rank-8 data ask for rank-9
 * outputs: an error, where the output shape used to be written one past its
 * buffer. */
Test(hostile, outputs_one_rank_past_the_limit) {
  const int64_t d8[DFX_MAX_DIMS] = {1, 1, 1, 1, 1, 1, 1, 1};
  const float one = 1;
  dfx_tensor *p_in[2] = {kh_f32(DFX_MAX_DIMS, d8, &one), kh_scalar_i32(0)};
  dfx_node *p = node2("DynamicPartition", "T", DFX_F32, NULL, DFX_INVALID);
  kh_attr_int(p, "num_partitions", 1);
  g_expect_err(p, p_in, 2, "rank 9");
  g_unref_all(p_in, 2);
  kh_node_free(p);
  dfx_tensor *s_in[2] = {kh_scalar_i32(0), kh_f32(DFX_MAX_DIMS, d8, &one)};
  dfx_node *s = node2("DynamicStitch", "T", DFX_F32, NULL, DFX_INVALID);
  kh_attr_int(s, "N", 1);
  g_expect_err(s, s_in, 2, "rank 9");
  g_unref_all(s_in, 2);
  kh_node_free(s);
  dfx_tensor *u_in[3] = {kh_f32(DFX_MAX_DIMS, d8, &one), kh_scalar_i32(0), kh_scalar_i32(1)};
  dfx_node *u = node2("UnsortedSegmentSum", "T", DFX_F32, "Tindices", DFX_I32);
  g_expect_err(u, u_in, 3, "output rank exceeds 8");
  g_unref_all(u_in, 3);
  kh_node_free(u);
}

/* Indices shaped [2^40, 0] hold nothing, yet their leading dim used to
 * drive a 2^40-step loop (GatherNd, the ScatterNd family). */
Test(hostile, index_shapes_do_not_drive_loops, .timeout = 10) {
  const int64_t id[] = {BIG, 0}, pd[] = {0}, ud[] = {BIG, 0}, sd[] = {1};
  char err[512];
  dfx_tensor *out[1] = {0};
  dfx_tensor *g_in[2] = {kh_f32(1, pd, NULL), kh_i32(2, id, NULL)};
  dfx_node *g = node2("GatherNd", "Tparams", DFX_F32, "Tindices", DFX_I32);
  cr_assert_eq(g_run(g, g_in, 2, out, err), DFX_OK, "%s", err);
  const int64_t od[] = {BIG, 0};
  g_expect_shape(out[0], 2, od);
  g_unref_all(out, 1);
  g_unref_all(g_in, 2);
  kh_node_free(g);
  dfx_tensor *s_in[3] = {kh_i32(2, id, NULL), kh_f32(2, ud, NULL), kh_i32(1, sd, (const int32_t[]){0})};
  dfx_node *s = node2("ScatterNd", "T", DFX_F32, "Tindices", DFX_I32);
  cr_assert_eq(g_run(s, s_in, 3, out, err), DFX_OK, "%s", err);
  cr_expect_eq(out[0]->count, 0);
  g_unref_all(out, 1);
  g_unref_all(s_in, 3);
  kh_node_free(s);
  dfx_tensor *t_in[3] = {kh_f32(1, pd, NULL), kh_i32(2, id, NULL), kh_f32(2, ud, NULL)};
  dfx_node *t = node2("TensorScatterUpdate", "T", DFX_F32, "Tindices", DFX_I32);
  cr_assert_eq(g_run(t, t_in, 3, out, err), DFX_OK, "%s", err);
  g_unref_all(out, 1);
  g_unref_all(t_in, 3);
  kh_node_free(t);
}

/* Unique over many NaNs: each is distinct, and they used to share one
 * probe chain (quadratic time). */
Test(hostile, unique_of_many_nans_is_linear, .timeout = 10) {
  const int64_t d[] = {300000};
  dfx_tensor *in[1] = {kh_f32(1, d, NULL)}, *out[2] = {0};
  for (int64_t i = 0; i < d[0]; i++) ((float *)in[0]->data)[i] = i % 2 ? NAN : 1.0f;
  dfx_node *n = node2("Unique", "T", DFX_F32, NULL, DFX_INVALID);
  char err[512];
  cr_assert_eq(g_run(n, in, 1, out, err), DFX_OK, "%s", err);
  cr_expect_eq(out[0]->count, d[0] / 2 + 1);
  g_unref_all(out, 2);
  g_unref_all(in, 1);
  kh_node_free(n);
}

/* ---- attrs at init ---- */

Test(hostile, bad_indices_policy_checked_at_init) {
  const char *ops[] = {"GatherNd", "ScatterNd", "ScatterNdUpdate", "TensorScatterAdd"};
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
    dfx_node *n = node2(ops[i], i ? "T" : "Tparams", DFX_F32, "Tindices", DFX_I32);
    kh_attr_str(n, "bad_indices_policy", "SKIP");
    const dfx_kernel_def *k = kernel_of(n);
    cr_assert(k->init, "%s has no init", ops[i]);
    dfx_status st;
    dfx__status_clear(&st);
    void *state = NULL;
    cr_expect_eq(k->init(n, &state, &st), DFX_EINVAL, "%s", ops[i]);
    cr_expect(strstr(st.msg, "bad_indices_policy = 'SKIP'") != NULL, "%s: %s", ops[i], st.msg);
    kh_attr_str(n, "bad_indices_policy", "ERROR");
    cr_expect_eq(k->init(n, &state, &st), DFX_OK, "%s", ops[i]);
    cr_expect_null(state);
    kh_node_free(n);
  }
}

Test(hostile, ignore_policy_skips_bad_indices) {
  const int64_t pd[] = {3, 2}, id[] = {2, 1};
  const float pv[] = {1, 2, 3, 4, 5, 6};
  const int32_t iv[] = {5, 1};
  char err[512];
  dfx_tensor *in[2] = {kh_f32(2, pd, pv), kh_i32(2, id, iv)}, *out[1] = {0};
  dfx_node *n = node2("GatherNd", "Tparams", DFX_F32, "Tindices", DFX_I32);
  kh_attr_str(n, "bad_indices_policy", "IGNORE");
  cr_assert_eq(g_run(n, in, 2, out, err), DFX_OK, "%s", err);
  const float want[] = {0, 0, 3, 4};
  g_expect_f32(out[0], want, 4);
  g_unref_all(out, 1);
  kh_node_free(n);
  const float uv[] = {10, 20, 30, 40};
  dfx_tensor *sin[3] = {kh_f32(2, pd, pv), dfx__tensor_ref(in[1]), kh_f32(2, (const int64_t[]){2, 2}, uv)};
  dfx_node *s = node2("TensorScatterUpdate", "T", DFX_F32, "Tindices", DFX_I32);
  kh_attr_str(s, "bad_indices_policy", "IGNORE");
  cr_assert_eq(g_run(s, sin, 3, out, err), DFX_OK, "%s", err);
  const float want2[] = {1, 2, 30, 40, 5, 6}; /* index 5 skipped */
  g_expect_f32(out[0], want2, 6);
  g_unref_all(out, 1);
  g_unref_all(sin, 3);
  g_unref_all(in, 2);
  kh_node_free(s);
}

/* ---- cancellation ---- */

/* Each kernel gets inputs big enough to cross a poll (~1 M elements of
 * work) and must return the run's stop code instead of finishing. */
Test(hostile, long_kernels_stop_on_cancel_and_deadline, .timeout = 30) {
  const int64_t n = 3 << 20, d[] = {n}, d2[] = {n, 1};
  dfx_tensor *vals = kh_f32(1, d, NULL), *ids = kh_i32(1, d, NULL), *ix2 = kh_i32(2, d2, NULL);
  for (int64_t i = 0; i < n; i++) {
    ((float *)vals->data)[i] = (float)i;
    ((int32_t *)ids->data)[i] = (int32_t)(i % 7);
  }
  memcpy(ix2->data, ids->data, ids->nbytes);
  dfx_tensor *range = kh_f32(1, (const int64_t[]){2}, (const float[]){0, (float)n});
  for (int late = 0; late < 2; late++) {
    char err[512];
    struct {
      dfx_node *n;
      dfx_tensor *in[3];
      int nin;
    } runs[] = {
        {node2("UnsortedSegmentSum", "T", DFX_F32, "Tindices", DFX_I32), {vals, ids, kh_scalar_i32(7)}, 3},
        {node2("GatherV2", "Tparams", DFX_F32, "Tindices", DFX_I32), {vals, ids, kh_scalar_i32(0)}, 3},
        {node2("GatherNd", "Tparams", DFX_F32, "Tindices", DFX_I32), {vals, ix2, NULL}, 2},
        {node2("ScatterNdAdd", "T", DFX_F32, "Tindices", DFX_I32), {vals, ix2, vals}, 3},
        {node2("Unique", "T", DFX_F32, NULL, DFX_INVALID), {vals, NULL, NULL}, 1},
        {node2("Bincount", "T", DFX_F32, NULL, DFX_INVALID), {ids, kh_scalar_i32(7), vals}, 3},
        {node2("HistogramFixedWidth", "T", DFX_F32, NULL, DFX_INVALID), {vals, range, kh_scalar_i32(8)}, 3},
    };
    kh_attr_type(runs[1].n, "Taxis", DFX_I32);
    for (size_t r = 0; r < sizeof runs / sizeof runs[0]; r++) {
      dfx_code c = run_late(runs[r].n, runs[r].in, runs[r].nin, !late, err);
      cr_expect_eq(c, late ? DFX_EDEADLINE : DFX_ECANCELED, "%s: %s", runs[r].n->op, err);
      kh_node_free(runs[r].n);
    }
    dfx__tensor_unref(runs[0].in[2]);
    dfx__tensor_unref(runs[1].in[2]);
    dfx__tensor_unref(runs[5].in[1]);
    dfx__tensor_unref(runs[6].in[2]);
  }
  dfx__tensor_unref(range);
  dfx__tensor_unref(vals);
  dfx__tensor_unref(ids);
  dfx__tensor_unref(ix2);
}
