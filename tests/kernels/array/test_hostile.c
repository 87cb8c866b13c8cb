/* test_hostile.c - regressions for hostile attrs and input values in the
 * array kernels: checked shape arithmetic (no UB, a clear error), outputs
 * sized from values checked against the tensor limit before allocating,
 * string outputs whose bytes would pass the limit, attrs refused at init,
 * work bounded by the data, and long kernels stopping on the run's deadline. */
#include <uv.h>

#include "atest.h"
#include "step.h"

/* One input: dtype, shape and values (the last value repeats; integers are
 * stored exactly, so int64 extremes survive). */
typedef struct {
  dfx_dtype dt;
  int nd;
  int64_t dims[3];
  int nv;
  int64_t v[4];
} hin;

static dfx_tensor *hin_new(const hin *h) {
  dfx_tensor *t = dfx__tensor_zeros(h->dt, h->nd, h->dims, NULL);
  cr_assert(t, "cannot make a %s input", dfx_dtype_name(h->dt));
  for (int64_t i = 0; i < t->count && h->nv; i++) {
    int64_t v = h->v[i < h->nv ? i : h->nv - 1];
    if (h->dt == DFX_I64 || h->dt == DFX_U64) ((int64_t *)t->data)[i] = v;
    else aset(t, i, (double)v);
  }
  return t;
}

/* A node: op, T (or dtype) and up to two more type attrs and two int attrs. */
typedef struct {
  const char *op;
  const char *tattr[3];
  dfx_dtype tval[3];
  const char *iattr[2];
  int64_t ival[2];
  int nin;
  hin in[5];
} hnode;

static dfx_node *hnode_new(const hnode *h, dfx_tensor **in) {
  dfx_node *n = kh_node_new(h->op);
  for (int i = 0; i < 3 && h->tattr[i]; i++) kh_attr_type(n, h->tattr[i], h->tval[i]);
  for (int i = 0; i < 2 && h->iattr[i]; i++) kh_attr_int(n, h->iattr[i], h->ival[i]);
  for (int i = 0; i < h->nin; i++) in[i] = hin_new(&h->in[i]);
  return n;
}

#define F32 DFX_F32
#define I32 DFX_I32
#define I64 DFX_I64
#define BIG ((int64_t)1 << 40)

/* Each case fails with a message containing `want`. The limit is 1 GiB. */
static const struct {
  hnode n;
  const char *want;
} bad[] = {
    /* shape arithmetic that used to overflow */
    {{"Reshape", {"T", "Tshape"}, {F32, I64}, {0}, {0}, 2, {{F32, 3, {0, BIG, BIG}}, {I64, 1, {2}, 2, {0, -1}}}},
     "the input's nonzero dims overflow int64"},
    {{"ConcatV2", {"T", "Tidx"}, {F32, I32}, {"N"}, {3}, 4,
      {{F32, 2, {0, (int64_t)1 << 62}}, {F32, 2, {0, (int64_t)1 << 62}}, {F32, 2, {0, (int64_t)1 << 62}}, {I32, 0, {0}, 1, {1}}}},
     "the concatenated dimension overflows int64"},
    {{"SplitV", {"T", "Tlen"}, {F32, I64}, {"num_split"}, {2}, 3,
      {{F32, 1, {4}}, {I64, 1, {2}, 1, {INT64_MAX}}, {I32, 0, {0}, 1, {0}}}},
     "size_splits overflow int64 at index 1"},
    {{"Slice", {"T", "Index"}, {F32, I64}, {0}, {0}, 3, {{F32, 1, {2}}, {I64, 1, {1}, 1, {INT64_MIN}}, {I64, 1, {1}, 1, {-1}}}},
     "Expected begin[0] in [0, 2], but got -9223372036854775808"},
    {{"Slice", {"T", "Index"}, {F32, I64}, {0}, {0}, 3, {{F32, 1, {2}}, {I64, 1, {1}, 1, {1}}, {I64, 1, {1}, 1, {INT64_MAX}}}},
     "Expected size[0] in [0, 1], but got 9223372036854775807"},
    {{"Tile", {"T", "Tmultiples"}, {F32, I64}, {0}, {0}, 2, {{F32, 2, {2, 3}}, {I64, 1, {2}, 2, {INT64_MAX, 1}}}},
     "multiples[0] = 9223372036854775807 overflows the output dim"},
    {{"Pad", {"T", "Tpaddings"}, {F32, I64}, {0}, {0}, 2, {{F32, 1, {2}}, {I64, 2, {1, 2}, 2, {INT64_MAX, INT64_MAX}}}},
     "Padded dimension 0 overflows int64"},
    {{"Range", {"Tidx"}, {F32}, {0}, {0}, 3, {{F32, 0, {0}, 1, {0}}, {F32, 0, {0}, 1, {INT64_MAX}}, {F32, 0, {0}, 1, {1}}}},
     "Requires ((limit - start) / delta) <= 9223372036854775807"},
    /* outputs sized from values, refused before allocating */
    {{"Range", {"Tidx"}, {I64}, {0}, {0}, 3, {{I64, 0, {0}, 1, {0}}, {I64, 0, {0}, 1, {INT64_MAX}}, {I64, 0, {0}, 1, {1}}}},
     "Range start 0, limit 9223372036854775807, delta 1 gives an output of shape [9223372036854775807], above the "
     "tensor limit"},
    {{"LinSpace", {"T", "Tidx"}, {F32, I32}, {0}, {0}, 3, {{F32, 0, {0}, 1, {0}}, {F32, 0, {0}, 1, {1}}, {I32, 0, {0}, 1, {INT32_MAX}}}},
     "LinSpace num 2147483647 gives an output"},
    {{"Tile", {"T", "Tmultiples"}, {F32, I64}, {0}, {0}, 2, {{F32, 2, {2, 3}}, {I64, 1, {2}, 2, {BIG, BIG}}}},
     "Tile multiples gives an output of shape [2199023255552,3298534883328]"},
    {{"Fill", {"T", "index_type"}, {F32, I64}, {0}, {0}, 2, {{I64, 1, {2}, 1, {(int64_t)1 << 31}}, {F32, 0, {0}, 1, {1}}}},
     "Fill dims gives an output of shape [2147483648,2147483648]"},
    {{"Empty", {"dtype"}, {F32}, {0}, {0}, 1, {{I32, 1, {2}, 1, {INT32_MAX}}}}, "Empty shape gives an output"},
    {{"BroadcastTo", {"T", "Tidx"}, {F32, I64}, {0}, {0}, 2, {{F32, 1, {1}}, {I64, 1, {2}, 1, {BIG}}}},
     "BroadcastTo shape gives an output"},
    {{"Pad", {"T", "Tpaddings"}, {F32, I64}, {0}, {0}, 2, {{F32, 1, {2}}, {I64, 2, {1, 2}, 2, {BIG, 0}}}},
     "paddings gives an output of shape [1099511627778]"},
    {{"OneHot", {"T", "TI"}, {F32, I32}, {0}, {0}, 4,
      {{I32, 1, {8}, 1, {0}}, {I32, 0, {0}, 1, {INT32_MAX}}, {F32, 0, {0}, 1, {1}}, {F32, 0, {0}, 1, {0}}}},
     "OneHot depth 2147483647 gives an output"},
    {{"MatrixDiagV2", {"T"}, {F32}, {0}, {0}, 5,
      {{F32, 1, {1}, 1, {1}}, {I32, 0, {0}, 1, {0}}, {I32, 0, {0}, 1, {1}}, {I32, 0, {0}, 1, {1 << 30}}, {F32, 0, {0}}}},
     "MatrixDiag num_rows 1, num_cols 1073741824 gives an output"},
    {{"Diag", {"T"}, {F32}, {0}, {0}, 1, {{F32, 1, {1 << 15}}}}, "Diag of the input's shape gives an output"},
    /* attrs checked once, at init */
    {{"StridedSlice", {"T", "Index"}, {F32, I32}, {"begin_mask"}, {BIG}, 4,
      {{F32, 1, {2}}, {I32, 1, {1}}, {I32, 1, {1}}, {I32, 1, {1}, 1, {1}}}},
     "attr begin_mask = 1099511627776 does not fit in int32"},
    {{"StridedSlice", {"T", "Index"}, {F32, I32}, {"ellipsis_mask"}, {INT64_MIN}, 4,
      {{F32, 1, {2}}, {I32, 1, {1}}, {I32, 1, {1}}, {I32, 1, {1}, 1, {1}}}},
     "attr ellipsis_mask = -9223372036854775808 does not fit in int32"},
    {{"Pack", {"T"}, {F32}, {"N", "axis"}, {1, 100}, 1, {{F32, 1, {2}}}}, "attr axis = 100 is out of range [-8, 7]"},
    {{"Unpack", {"T"}, {F32}, {"num", "axis"}, {2, INT64_MIN}, 1, {{F32, 1, {2}}}},
     "attr axis = -9223372036854775808 is out of range"},
    {{"OneHot", {"T", "TI"}, {F32, I32}, {"axis"}, {-2}, 4,
      {{I32, 1, {2}}, {I32, 0, {0}, 1, {2}}, {F32, 0, {0}, 1, {1}}, {F32, 0, {0}, 1, {0}}}},
     "attr axis = -2 is out of range [-1, 7]"},
    {{"ReverseSequence", {"T", "Tlen"}, {F32, I64}, {"seq_dim"}, {INT64_MIN}, 2, {{F32, 2, {2, 2}}, {I64, 1, {2}, 1, {1}}}},
     "attr seq_dim = -9223372036854775808 is out of range"},
};

ATEST(hostile, refused_with_a_clear_error) {
  size_t old = dfx_set_max_tensor_bytes((size_t)1 << 30);
  for (size_t c = 0; c < sizeof bad / sizeof bad[0]; c++) {
    dfx_tensor *in[5];
    dfx_node *n = hnode_new(&bad[c].n, in);
    aerr(n, in, bad[c].n.nin, bad[c].want);
    afree(in, bad[c].n.nin);
    kh_node_free(n);
  }
  dfx_node *n = kh_node_new("Squeeze");
  kh_attr_type(n, "T", F32);
  kh_attr_ints(n, "squeeze_dims", (int64_t[]){0, INT64_MAX}, 2);
  dfx_tensor *x = avals(F32, 1, (int64_t[]){1}, NULL);
  aerr(n, &x, 1, "attr squeeze_dims[1] = 9223372036854775807 is out of range [-8, 8)");
  dfx__tensor_unref(x);
  kh_node_free(n);
  dfx_set_max_tensor_bytes(old);
}

/* Import enforces N >= 1 (2 for concat); called with fewer inputs anyway,
 * the kernels fail instead of reading past them. */
ATEST(hostile, too_few_inputs_never_read_past_them) {
  static const struct {
    const char *op;
    int n_in;
  } few[] = {{"Pack", 0}, {"ConcatV2", 0}, {"ConcatV2", 1}, {"Concat", 0}, {"Concat", 1}, {"ParallelConcat", 0}};
  for (size_t c = 0; c < sizeof few / sizeof few[0]; c++) {
    dfx_node *n = kh_node_new(few[c].op);
    kh_attr_int(n, "axis", 0);
    dfx_tensor *in[1] = {kh_scalar_i32(0)}, *out[1] = {NULL};
    dfx_status st;
    dfx__status_clear(&st);
    dfx_kctx ctx = {.node = n, .n_in = few[c].n_in, .in = in, .n_out = 1, .out = out, .frame = "", .st = &st};
    cr_assert_eq(dfx__registry_kernel_any(dfx__lib_registry(NULL), few[c].op)->fn(&ctx), DFX_EINVAL, "%s", few[c].op);
    cr_assert_null(out[0]);
    afree(in, 1);
    kh_node_free(n);
  }
}

/* Extreme strides, bounds and counts that are valid: the answers TF gives,
 * computed without overflow, in time bounded by the data. */
ATEST(hostile, extreme_values_stay_bounded) {
  uint64_t t0 = uv_hrtime();
  /* x[1:-3:INT64_MIN] and x[0:2:INT64_MAX] of [2,3] take one row each. */
  const int64_t strides[2][3] = {{1, -3, INT64_MIN}, {0, 2, INT64_MAX}};
  for (int k = 0; k < 2; k++) {
    dfx_node *n = kh_node_new("StridedSlice");
    kh_attr_type(n, "T", F32);
    kh_attr_type(n, "Index", I64);
    dfx_tensor *in[4] = {avals(F32, 2, (int64_t[]){2, 3}, NULL), ai64v(1, &strides[k][0]), ai64v(1, &strides[k][1]),
                         ai64v(1, &strides[k][2])},
               *out[1];
    arun(n, in, 4, out);
    acheck(out[0], F32, 2, (int64_t[]){1, 3}, k ? (double[]){0, 1, 2} : (double[]){3, 4, 5});
    afree(out, 1);
    afree(in, 4);
    kh_node_free(n);
  }
  /* Range over all of int64 in three steps, and uint64 values past INT64_MAX. */
  dfx_node *n = kh_node_new("Range");
  kh_attr_type(n, "Tidx", I64);
  dfx_tensor *in[3] = {kh_i64(0, NULL, (int64_t[]){INT64_MIN}), kh_i64(0, NULL, (int64_t[]){INT64_MAX}),
                       kh_i64(0, NULL, (int64_t[]){INT64_MAX})},
             *out[1];
  arun(n, in, 3, out);
  cr_assert_eq(out[0]->count, 3);
  cr_assert_eq(((int64_t *)out[0]->data)[2], INT64_MAX - 1);
  afree(out, 1);
  afree(in, 3);
  kh_attr_type(n, "Tidx", DFX_U64);
  const uint64_t us[3] = {((uint64_t)1 << 63) + 1, ((uint64_t)1 << 63) + 4, 1};
  for (int k = 0; k < 3; k++) in[k] = kh_tensor(DFX_U64, 0, NULL, &us[k]);
  arun(n, in, 3, out);
  cr_assert_eq(out[0]->count, 3);
  for (int k = 0; k < 3; k++) cr_assert_eq(((uint64_t *)out[0]->data)[k], us[0] + (uint64_t)k);
  afree(out, 1);
  afree(in, 3);
  kh_node_free(n);
  /* Huge multiples, shapes and depths around an empty dim make empty outputs. */
  static const hnode empty[] = {
      {"Tile", {"T", "Tmultiples"}, {F32, I64}, {0}, {0}, 2, {{F32, 2, {0, 3}}, {I64, 1, {2}, 2, {(int64_t)1 << 62, 1}}}},
      {"BroadcastTo", {"T", "Tidx"}, {F32, I64}, {0}, {0}, 2, {{F32, 1, {1}}, {I64, 1, {3}, 3, {INT64_MAX, 0, 1}}}},
      {"OneHot", {"T", "TI"}, {F32, I32}, {0}, {0}, 4,
       {{I32, 1, {0}}, {I32, 0, {0}, 1, {INT32_MAX}}, {F32, 0, {0}, 1, {1}}, {F32, 0, {0}, 1, {0}}}},
  };
  for (size_t c = 0; c < sizeof empty / sizeof empty[0]; c++) {
    dfx_tensor *hin_[5];
    dfx_node *m = hnode_new(&empty[c], hin_);
    arun(m, hin_, empty[c].nin, out);
    cr_assert_eq(out[0]->count, 0, "%s", empty[c].op);
    afree(out, 1);
    afree(hin_, empty[c].nin);
    kh_node_free(m);
  }
  cr_assert_lt(uv_hrtime() - t0, 1000000000ull, "hostile-but-valid cases took %.3f s", (uv_hrtime() - t0) / 1e9);
}

/* ---- string outputs: their bytes are checked against the tensor limit ---- */

static dfx_tensor *strs(int nd, const int64_t *dims, size_t len) {
  dfx_tensor *t = dfx__tensor_zeros(DFX_STRING, nd, dims, NULL);
  char *buf = malloc(len);
  memset(buf, 'x', len);
  for (int64_t i = 0; i < t->count; i++) cr_assert_eq(dfx_tensor_set_string(t, i, buf, len), DFX_OK);
  free(buf);
  return t;
}

ATEST(hostile, string_replication_limited) {
  const size_t big = 64 * 1024;
  size_t old = dfx_set_max_tensor_bytes((size_t)1 << 20); /* 16 copies of a 64 KB string */
  const int64_t one = 1, two[2] = {2, 2};
  /* Each op replicates `big` bytes 32 times (2 MiB); `ok` cases 8 times. */
  for (int k = 0; k < 8; k++) {
    for (int reps = 8; reps <= 32; reps *= 4) {
      dfx_tensor *in[5] = {NULL};
      int nin = 2;
      const char *want;
      dfx_node *n;
      int64_t r = reps;
      switch (k) {
        case 0:
          n = kh_node_new("Fill");
          in[0] = ai64v(1, &r), in[1] = strs(0, NULL, big);
          kh_attr_type(n, "index_type", I64);
          want = "Fill dims: the string output would hold 2097152 bytes";
          break;
        case 1:
          n = kh_node_new("Tile");
          in[0] = strs(1, &one, big), in[1] = ai64v(1, &r);
          kh_attr_type(n, "Tmultiples", I64);
          want = "Tile multiples: the string output would hold 2097152 bytes";
          break;
        case 2:
          n = kh_node_new("BroadcastTo");
          in[0] = strs(1, &one, big), in[1] = ai64v(1, &r);
          kh_attr_type(n, "Tidx", I64);
          want = "BroadcastTo shape: the string output";
          break;
        case 3:
          n = kh_node_new("PadV2");
          in[0] = strs(1, &one, big), in[1] = kh_i32(2, (int64_t[]){1, 2}, (int32_t[]){0, reps - 1});
          in[2] = strs(0, NULL, big), nin = 3;
          want = "paddings: the string output would hold 2097152 bytes";
          break;
        case 4: /* [2,2] mirrored to [2+2p, 2+2p]: 36 copies for p = 2, 9 for p = 0 */
          n = kh_node_new("MirrorPad");
          kh_attr_str(n, "mode", "SYMMETRIC");
          in[0] = strs(2, two, big), in[1] = kh_i32(2, two, (int32_t[]){reps / 16, reps / 16, reps / 16, reps / 16});
          want = "MirrorPad paddings: the string output would hold 2359296 bytes";
          break;
        case 5:
          n = kh_node_new("OneHot");
          kh_attr_type(n, "TI", I64);
          in[0] = dfx__tensor_zeros(I64, 1, &r, NULL), in[1] = kh_scalar_i32(1), in[2] = strs(0, NULL, big);
          in[3] = strs(0, NULL, 1), nin = 4;
          want = "OneHot depth 1: the string output";
          break;
        case 6:
          n = kh_node_new("MatrixDiagV2");
          in[0] = strs(1, &one, 1), in[1] = kh_scalar_i32(0), in[2] = kh_scalar_i32(1);
          in[3] = kh_scalar_i32(reps), in[4] = strs(0, NULL, big), nin = 5;
          want = "MatrixDiag num_rows 1, num_cols 32: the string output";
          break;
        default: { /* all 2s-1 diagonals of an s x s matrix: s(s-1) padding elements */
          int32_t sd = reps == 32 ? 8 : 2;
          n = kh_node_new("MatrixDiagPartV2");
          in[0] = strs(2, (int64_t[]){sd, sd}, 1), in[1] = ai32v(2, (int32_t[]){1 - sd, sd - 1});
          in[2] = strs(0, NULL, big), nin = 3;
          want = "MatrixDiagPart k: the string output would hold 3670080 bytes";
          break;
        }
      }
      kh_attr_type(n, "T", DFX_STRING);
      if (reps == 32) {
        aerr(n, in, nin, want);
      } else {
        dfx_tensor *out[1];
        arun(n, in, nin, out);
        afree(out, 1);
      }
      afree(in, nin);
      kh_node_free(n);
    }
  }
  dfx_set_max_tensor_bytes(old);
}

/* ---- long kernels stop when the run's deadline has passed ---- */

/* Runs n in a step whose deadline is already over. */
static dfx_code run_late(dfx_node *n, dfx_tensor **in, int nin, char *err, size_t errlen) {
  dfx_step step;
  cr_assert_eq(dfx__step_init(&step), DFX_OK);
  step.t0_ns = uv_hrtime();
  step.deadline_ns = step.t0_ns - 1;
  dfx_tensor *out[4] = {NULL};
  dfx_code c = kh_run_step(n, in, nin, out, NULL, &step, err, errlen);
  afree(out, n->n_out);
  dfx__step_destroy(&step);
  return c;
}

#define M ((int64_t)3 << 20) /* elements: three poll intervals */
#define S 2048               /* a side of an S x S matrix (4 M elements) */

static const hnode late[] = {
    {"Range", {"Tidx"}, {I32}, {0}, {0}, 3, {{I32, 0, {0}, 1, {0}}, {I32, 0, {0}, 1, {M}}, {I32, 0, {0}, 1, {1}}}},
    {"Range", {"Tidx"}, {F32}, {0}, {0}, 3, {{F32, 0, {0}, 1, {0}}, {F32, 0, {0}, 1, {M}}, {F32, 0, {0}, 1, {1}}}},
    {"LinSpace", {"T", "Tidx"}, {F32, I32}, {0}, {0}, 3, {{F32, 0, {0}, 1, {0}}, {F32, 0, {0}, 1, {1}}, {I32, 0, {0}, 1, {M}}}},
    {"Fill", {"T", "index_type"}, {F32, I64}, {0}, {0}, 2, {{I64, 1, {1}, 1, {M}}, {F32, 0, {0}, 1, {1}}}},
    {"Tile", {"T", "Tmultiples"}, {F32, I64}, {0}, {0}, 2, {{F32, 1, {1}}, {I64, 1, {1}, 1, {M}}}},
    {"PadV2", {"T", "Tpaddings"}, {F32, I64}, {0}, {0}, 3, {{F32, 1, {1}}, {I64, 2, {1, 2}, 2, {0, M}}, {F32, 0, {0}}}},
    {"OneHot", {"T", "TI"}, {F32, I32}, {0}, {0}, 4,
     {{I32, 1, {M}, 1, {0}}, {I32, 0, {0}, 1, {1}}, {F32, 0, {0}, 1, {1}}, {F32, 0, {0}, 1, {0}}}},
    {"Where", {"T"}, {F32}, {0}, {0}, 1, {{F32, 2, {S, S}, 1, {1}}}},
    {"Diag", {"T"}, {F32}, {0}, {0}, 1, {{F32, 1, {S}}}},
    {"ConcatV2", {"T", "Tidx"}, {F32, I32}, {"N"}, {2}, 3, {{F32, 1, {M}}, {F32, 1, {M}}, {I32, 0, {0}}}},
    {"Transpose", {"T", "Tperm"}, {F32, I32}, {0}, {0}, 2, {{F32, 2, {S, S}}, {I32, 1, {2}, 2, {1, 0}}}},
    {"MatrixBandPart", {"T", "Tindex"}, {F32, I64}, {0}, {0}, 3, {{F32, 2, {S, S}}, {I64, 0, {0}, 1, {-1}}, {I64, 0, {0}, 1, {-1}}}},
    {"MirrorPad", {"T", "Tpaddings"}, {F32, I32}, {0}, {0}, 2, {{F32, 2, {S, S}}, {I32, 2, {2, 2}, 1, {1}}}},
    {"Pack", {"T"}, {F32}, {"N"}, {2}, 2, {{F32, 1, {M}}, {F32, 1, {M}}}},
};

ATEST(hostile, long_kernels_stop_at_the_deadline) {
  for (size_t c = 0; c < sizeof late / sizeof late[0]; c++) {
    dfx_tensor *in[5];
    dfx_node *n = hnode_new(&late[c], in);
    if (strcmp(late[c].op, "MirrorPad") == 0) kh_attr_str(n, "mode", "REFLECT");
    char err[256];
    dfx_code code = run_late(n, in, late[c].nin, err, sizeof err);
    cr_assert_eq(code, DFX_EDEADLINE, "%s: code %d (%s)", late[c].op, code, err);
    cr_assert(strstr(err, "timed out"), "%s: %s", late[c].op, err);
    afree(in, late[c].nin);
    kh_node_free(n);
  }
}
