/* test_hostile.c - the misc family against hostile attrs and inputs: attr
 * checks at init, checked shape arithmetic, sizes from input values held to
 * the tensor byte limit, work bounded by the data (not by dims of empty
 * tensors), bounded log text, and long kernels stopping on a cancelled or
 * timed-out run. */
#include <criterion/criterion.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

#include "mtest.h"

static char err[2048];
static dfx_step step;

static void setup(void) { dfx__step_init(&step); }
static void teardown(void) {
  dfx__step_destroy(&step);
  dfx__tensor_cache_flush();
}
TestSuite(hostile, .init = setup, .fini = teardown, .timeout = 30);

#define BIG ((int64_t)1 << 62)

/* ---- attrs checked when a session plans the node ---- */

/* What planning the node gives: its kernel's init (and fini) run. */
static dfx_code plan(dfx_node *n) {
  dfx_status st;
  dfx__status_clear(&st);
  int expected;
  dfx_code c = dfx__node_fill_defaults(n, n->def, &st);
  if (c == DFX_OK) c = dfx__node_resolve_types(n, n->def, &expected, &st);
  const dfx_kernel_def *k = c == DFX_OK ? dfx__registry_kernel_for(dfx__lib_registry(&st), n, &st) : NULL;
  if (c == DFX_OK && !k) c = st.code;
  void *state = NULL;
  if (c == DFX_OK && k->init) c = k->init(n, &state, &st);
  if (c == DFX_OK && k->fini) k->fini(state);
  snprintf(err, sizeof err, "%s", c == DFX_OK ? "" : st.msg);
  return c;
}

static void num_bits_1(dfx_node *n) { kh_attr_int(n, "num_bits", 1); }
static void num_bits_17(dfx_node *n) { kh_attr_int(n, "num_bits", 17); }
static void min_over_max(dfx_node *n) {
  kh_attr_float(n, "min", 2);
  kh_attr_float(n, "max", 1);
}
static void stream_debug(dfx_node *n) { kh_attr_str(n, "output_stream", "log(debug)"); }
static void stream_file(dfx_node *n) { kh_attr_str(n, "output_stream", "file:///tmp/x"); }
static void stream_stdout(dfx_node *n) { kh_attr_str(n, "output_stream", "stdout"); }
static void shape_neg(dfx_node *n) {
  kh_attr_type(n, "dtype", DFX_F32);
  kh_attr_shape(n, "element_shape", 2, (int64_t[]){2, -5});
}
static void shape_huge(dfx_node *n) {
  kh_attr_type(n, "dtype", DFX_F32);
  kh_attr_shape(n, "element_shape", 2, (int64_t[]){(int64_t)1 << 40, (int64_t)1 << 40});
}
static void shape_except0_huge(dfx_node *n) {
  kh_attr_type(n, "dtype", DFX_F32);
  kh_attr_shape(n, "element_shape_except0", 1, (int64_t[]){(int64_t)1 << 50});
}

Test(hostile, attrs_are_checked_at_init) {
  static const struct {
    const char *op;
    void (*set)(dfx_node *);
    dfx_code code;
    const char *msg;
  } cases[] = {
      {"FakeQuantWithMinMaxVars", num_bits_1, DFX_EINVAL, "num_bits must be between 2 and 16, inclusive, was 1"},
      {"FakeQuantWithMinMaxVarsPerChannel", num_bits_17, DFX_EINVAL, "inclusive, was 17"},
      {"FakeQuantWithMinMaxArgs", num_bits_17, DFX_EINVAL, "inclusive, was 17"},
      {"FakeQuantWithMinMaxArgs", min_over_max, DFX_EINVAL, "min has to be smaller than max, was: 2 >= 1"},
      {"PrintV2", stream_debug, DFX_EINVAL, "output_stream 'log(debug)' is not a valid output stream"},
      {"PrintV2", stream_file, DFX_EUNIMPL, "output_stream 'file:///tmp/x': printing to files is not supported"},
      {"PrintV2", stream_stdout, DFX_OK, ""},
      {"TensorArrayV3", shape_neg, DFX_EINVAL, "element_shape [2,-5] has dimension 1 = -5"},
      {"TensorArrayV2", shape_huge, DFX_ELIMIT, "element_shape [1099511627776,1099511627776] is over the tensor"},
      {"TensorArrayGatherV3", shape_neg, DFX_EINVAL, "has dimension 1 = -5"},
      /* Concat only ever makes an empty tensor from it. */
      {"TensorArrayConcatV3", shape_except0_huge, DFX_OK, ""},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    dfx_node *n = kh_node_new(cases[i].op);
    cases[i].set(n);
    cr_expect_eq(plan(n), cases[i].code, "%s: %s", cases[i].op, err);
    cr_expect(strstr(err, cases[i].msg), "%s: %s", cases[i].op, err);
    kh_node_free(n);
  }
}

/* ---- checked shape arithmetic ---- */

static dfx_tensor *empty(int nd, const int64_t *d) { return kh_tensor(DFX_F32, nd, d, NULL); }

Test(hostile, rnn_cell_sizes_that_overflow_fail_cleanly) {
  /* An empty batch lets cs_prev carry a cell size near 2^62: 4 * cell overflows. */
  int64_t dx[2] = {0, 1}, dc[2] = {0, BIG}, dw[2] = {1, 4}, dv = 1, db = 4;
  dfx_tensor *in[8] = {empty(2, dx), empty(2, dc), empty(2, dc), empty(2, dw),
                       empty(1, &dv), empty(1, &dv), empty(1, &dv), empty(1, &db)}, *out[7];
  dfx_node *n = kh_node_new("LSTMBlockCell");
  kh_attr_type(n, "T", DFX_F32);
  cr_expect_eq(kh_run(n, in, 8, out, NULL, err, sizeof err), DFX_EINVAL);
  cr_expect(strstr(err, "input_size 1 and cell_size 4611686018427387904 are too large"), "%s", err);
  kh_node_free(n);
  n = kh_node_new("GRUBlockCell");
  kh_attr_type(n, "T", DFX_F32);
  cr_expect_eq(kh_run(n, in, 6, out, NULL, err, sizeof err), DFX_EINVAL);
  cr_expect(strstr(err, "are too large"), "%s", err);
  kh_node_free(n);
  for (int i = 0; i < 8; i++) dfx__tensor_unref(in[i]);
}

/* A TensorArrayV3 handle (dtype float32, keep after read). */
static dfx_tensor *ta_make(int size, bool dynamic, int es_rank, const int64_t *es) {
  dfx_node *n = kh_node_new("TensorArrayV3");
  kh_attr_type(n, "dtype", DFX_F32);
  kh_attr_bool(n, "dynamic_size", dynamic);
  if (es_rank >= 0) kh_attr_shape(n, "element_shape", es_rank, es);
  dfx_tensor *sz = kh_scalar_i32(size), *out[2] = {NULL, NULL};
  dfx_code c = kh_run_step(n, &sz, 1, out, NULL, &step, err, sizeof err);
  dfx__tensor_unref(sz);
  dfx__tensor_unref(out[1]);
  kh_node_free(n);
  return c == DFX_OK ? out[0] : NULL;
}

static dfx_code ta_write(dfx_tensor *h, int32_t idx, dfx_tensor *v) {
  dfx_node *n = kh_node_new("TensorArrayWriteV3");
  kh_attr_type(n, "T", DFX_F32);
  dfx_tensor *i = kh_scalar_i32(idx), *flow = kh_scalar_f32(0), *in[4] = {h, i, v, flow}, *o = NULL;
  dfx_code c = kh_run_step(n, in, 4, &o, NULL, &step, err, sizeof err);
  dfx__tensor_unref(o);
  dfx__tensor_unref(i);
  dfx__tensor_unref(flow);
  kh_node_free(n);
  return c;
}

Test(hostile, tensor_array_concat_of_huge_empty_elements) {
  dfx_tensor *h = ta_make(2, false, -1, NULL), *v = empty(2, (int64_t[]){BIG, 0}), *out[2];
  cr_assert_eq(ta_write(h, 0, v), DFX_OK, "%s", err);
  cr_assert_eq(ta_write(h, 1, v), DFX_OK, "%s", err);
  dfx_node *n = kh_node_new("TensorArrayConcatV3");
  kh_attr_type(n, "dtype", DFX_F32);
  dfx_tensor *flow = kh_scalar_f32(0), *in[2] = {h, flow};
  cr_expect_eq(kh_run_step(n, in, 2, out, NULL, &step, err, sizeof err), DFX_EINVAL);
  cr_expect(strstr(err, "dimension 0 sizes overflow int64 at index 1"), "%s", err);
  kh_node_free(n);
  dfx__tensor_unref(flow);
  dfx__tensor_unref(v);
  dfx__tensor_unref(h);
}

/* ---- sizes from input values against the tensor byte limit ---- */

Test(hostile, tensor_array_sizes_are_held_to_the_limit) {
  dfx_set_max_tensor_bytes((size_t)1 << 20);
  cr_expect_null(ta_make(1 << 30, false, -1, NULL));
  cr_expect(strstr(err, "TensorArray size 1073741824 needs"), "%s", err);
  cr_expect(strstr(err, "over the tensor byte limit"), "%s", err);
  /* A dynamic array written at a huge index fails before allocating its slots. */
  dfx_tensor *h = ta_make(0, true, -1, NULL), *v = kh_scalar_f32(1);
  cr_expect_eq(ta_write(h, INT32_MAX, v), DFX_ELIMIT);
  cr_expect(strstr(err, "growing to 2147483648 elements needs"), "%s", err);
  cr_expect_eq(ta_write(h, 3, v), DFX_OK, "%s", err); /* and the array is still usable */
  dfx__tensor_unref(h);
  dfx__tensor_unref(v);
}

Test(hostile, tensor_array_gather_stops_reading_at_the_limit) {
  dfx_set_max_tensor_bytes(8192);
  int64_t es = 32; /* unwritten slots read as 128-byte zeros */
  dfx_tensor *h = ta_make(100, false, 1, &es), *g;
  cr_assert(h, "%s", err);
  int32_t idx[100];
  for (int i = 0; i < 100; i++) idx[i] = i;
  int64_t d = 100;
  dfx_tensor *ii = kh_i32(1, &d, idx), *flow = kh_scalar_f32(0), *in[3] = {h, ii, flow};
  dfx_node *n = kh_node_new("TensorArrayGatherV3");
  kh_attr_type(n, "dtype", DFX_F32);
  cr_expect_eq(kh_run_step(n, in, 3, &g, NULL, &step, err, sizeof err), DFX_ELIMIT);
  cr_expect(strstr(err, "reading 100 elements needs over 8320 bytes"), "%s", err);
  kh_node_free(n);
  dfx__tensor_unref(ii);
  dfx__tensor_unref(flow);
  dfx__tensor_unref(h);
}

static dfx_code stack_op(const char *op, dfx_tensor **in, int n_in, dfx_tensor **out) {
  dfx_node *n = kh_node_new(op);
  if (strcmp(op, "StackV2") == 0 || strcmp(op, "StackPopV2") == 0) kh_attr_type(n, "elem_type", DFX_F32);
  if (strcmp(op, "StackPushV2") == 0) kh_attr_type(n, "T", DFX_F32);
  dfx_code c = kh_run_step(n, in, n_in, out, NULL, &step, err, sizeof err);
  kh_node_free(n);
  return c;
}

Test(hostile, unbounded_stack_fails_cleanly_at_the_limit) {
  dfx_set_max_tensor_bytes(1024); /* 128 slots of 8 bytes */
  dfx_tensor *sz = kh_scalar_i32(-1), *h, *o;
  cr_assert_eq(stack_op("StackV2", &sz, 1, &h), DFX_OK, "%s", err);
  int pushed = 0;
  dfx_code c = DFX_OK;
  while (c == DFX_OK && pushed < 1000) {
    dfx_tensor *v = kh_scalar_f32((float)pushed), *in[2] = {h, v};
    c = stack_op("StackPushV2", in, 2, &o);
    if (c == DFX_OK) {
      dfx__tensor_unref(o);
      pushed++;
    }
    dfx__tensor_unref(v);
  }
  cr_expect_eq(c, DFX_ELIMIT);
  cr_expect_eq(pushed, 128);
  cr_expect(strstr(err, "with 128 elements cannot grow: 2048 bytes of slots exceed the tensor byte limit"), "%s", err);
  cr_assert_eq(stack_op("StackPopV2", &h, 1, &o), DFX_OK, "%s", err);
  cr_expect_eq(((float *)o->data)[0], 127.0f, "the stack is intact");
  dfx__tensor_unref(o);
  dfx__tensor_unref(sz);
  dfx__tensor_unref(h);
}

/* ---- work bounded by the data ---- */

Test(hostile, empty_tensors_with_huge_dims_do_no_work, .timeout = 10) {
  uint64_t t0 = uv_hrtime();
  int64_t d[2] = {(int64_t)1 << 40, 0};
  dfx_tensor *x = kh_tensor(DFX_I32, 2, d, NULL), *o;
  dfx_node *n = kh_node_new("RandomShuffle");
  kh_attr_type(n, "T", DFX_I32);
  cr_assert_eq(kh_run_step(n, &x, 1, &o, NULL, &step, err, sizeof err), DFX_OK, "%s", err);
  cr_expect(o->dims[0] == d[0] && o->count == 0);
  dfx__tensor_unref(o);
  dfx__tensor_unref(x);
  kh_node_free(n);
  /* A 2^40-step sequence over an empty batch. */
  int64_t T = (int64_t)1 << 40, dx[3] = {T, 0, 3}, dc[2] = {0, 2}, dw[2] = {5, 8}, dv = 2, db = 8;
  dfx_tensor *in[9] = {kh_i64(0, NULL, &T), empty(3, dx), empty(2, dc), empty(2, dc), empty(2, dw),
                       empty(1, &dv), empty(1, &dv), empty(1, &dv), empty(1, &db)}, *out[7];
  n = kh_node_new("BlockLSTM");
  kh_attr_type(n, "T", DFX_F32);
  cr_assert_eq(kh_run_step(n, in, 9, out, NULL, &step, err, sizeof err), DFX_OK, "%s", err);
  for (int k = 0; k < 7; k++) {
    cr_expect(out[k]->dims[0] == T && out[k]->count == 0);
    dfx__tensor_unref(out[k]);
  }
  for (int k = 0; k < 9; k++) dfx__tensor_unref(in[k]);
  kh_node_free(n);
  cr_expect_lt(uv_hrtime() - t0, 2000000000ull, "took %.3f s", (double)(uv_hrtime() - t0) / 1e9);
}

/* ---- bounded log text ---- */

Test(hostile, summarize_all_of_a_huge_tensor_is_cut) {
  int64_t d = (int64_t)1 << 21;
  dfx_tensor *x = kh_tensor(DFX_I32, 1, &d, NULL);
  for (int64_t i = 0; i < d; i++) ((int32_t *)x->data)[i] = 1000000 + (int32_t)i;
  /* Assert: the error message stops at the status size, marked "...". */
  uint8_t no = 0;
  dfx_tensor *in[2] = {kh_bool(0, NULL, &no), x}, *o;
  dfx_node *n = kh_node_new("Assert");
  kh_attr_types(n, "T", (dfx_dtype[]){DFX_I32}, 1);
  kh_attr_int(n, "summarize", -1);
  cr_expect_eq(kh_run_step(n, in, 2, NULL, NULL, &step, err, sizeof err), DFX_EINVAL);
  size_t len = strlen(err);
  cr_expect(len > 1500 && len < DFX_STATUS_MSG_MAX && strcmp(err + len - 3, "...") == 0, "%zu: %s", len,
            err + len - 20);
  cr_expect(strncmp(err, "assertion failed: [1000000 1000001 ", 35) == 0, "%.40s", err);
  kh_node_free(n);
  /* Print: at most LOG_MAX_BYTES (1 MiB) of text, marked "...". */
  char path[] = "/tmp/test_hostile_XXXXXX";
  int fd = mkstemp(path), saved = dup(2);
  cr_assert(fd >= 0 && saved >= 0);
  fflush(stderr);
  dup2(fd, 2);
  n = kh_node_new("Print");
  kh_attr_type(n, "T", DFX_I32);
  kh_attr_types(n, "U", (dfx_dtype[]){DFX_I32}, 1);
  kh_attr_int(n, "summarize", -1);
  in[0] = x;
  dfx_code c = kh_run_step(n, in, 2, &o, NULL, &step, err, sizeof err);
  fflush(stderr);
  dup2(saved, 2);
  cr_assert_eq(c, DFX_OK, "%s", err);
  dfx__tensor_unref(o);
  off_t size = lseek(fd, 0, SEEK_END);
  char tail[8] = "";
  cr_assert_eq(pread(fd, tail, 4, size - 4), 4);
  cr_expect(size > (1 << 20) - 16 && size <= (1 << 20) + 4, "printed %lld bytes", (long long)size);
  cr_expect_str_eq(tail, "...\n");
  close(fd);
  close(saved);
  unlink(path);
  kh_node_free(n);
  dfx__tensor_unref(in[1]);
  dfx__tensor_unref(x);
}

/* ---- long kernels stop on the run's cancellation or timeout ---- */

/* A long-running node of `op` and its inputs (at least 2^20 elements of work). */
static dfx_node *long_node(const char *op, dfx_tensor **in, int *n_in) {
  dfx_node *n = kh_node_new(op);
  int64_t big = (int64_t)1 << 21, one = 1, d2[2] = {2, 3}, d3[3] = {64, 64, 64}, dc[2] = {64, 64},
          dw[2] = {128, 256}, dv = 64, db = 256;
  int32_t b32 = (int32_t)big;
  *n_in = 1;
  if (strcmp(op, "RandomUniform") == 0 || strcmp(op, "RandomUniformInt") == 0 || strcmp(op, "RandomGamma") == 0) {
    kh_attr_type(n, strcmp(op, "RandomGamma") ? "T" : "S", DFX_I32);
    in[0] = kh_i32(1, &one, &b32);
    if (strcmp(op, "RandomUniformInt") == 0) {
      kh_attr_type(n, "Tout", DFX_I32);
      in[1] = kh_scalar_i32(0);
      in[2] = kh_scalar_i32(10);
      *n_in = 3;
    } else if (strcmp(op, "RandomGamma") == 0) {
      kh_attr_type(n, "T", DFX_F32);
      in[1] = kh_scalar_f32(2);
      *n_in = 2;
    } else {
      kh_attr_type(n, "dtype", DFX_F32);
    }
  } else if (strcmp(op, "RandomShuffle") == 0) {
    kh_attr_type(n, "T", DFX_I32);
    in[0] = dfx__tensor_zeros(DFX_I32, 1, &big, NULL);
  } else if (strcmp(op, "Multinomial") == 0) {
    kh_attr_type(n, "T", DFX_F32);
    in[0] = kh_tensor(DFX_F32, 2, d2, (float[]){0, 1, 2, 0, 1, 2});
    in[1] = kh_scalar_i32(b32);
    *n_in = 2;
  } else if (strncmp(op, "FakeQuant", 9) == 0) {
    in[0] = dfx__tensor_zeros(DFX_F32, 1, &big, NULL);
    if (strcmp(op, "FakeQuantWithMinMaxVarsPerChannel") == 0) {
      int64_t dch[2] = {big / 4, 4};
      dfx__tensor_unref(in[0]);
      in[0] = dfx__tensor_zeros(DFX_F32, 2, dch, NULL);
      in[1] = kh_tensor(DFX_F32, 1, &dch[1], (float[]){-1, -1, -1, -1});
      in[2] = kh_tensor(DFX_F32, 1, &dch[1], (float[]){1, 1, 1, 1});
      *n_in = 3;
    }
  } else { /* BlockLSTM: 64 steps of a 64 x 64 cell */
    kh_attr_type(n, "T", DFX_F32);
    int64_t T = 64;
    in[0] = kh_i64(0, NULL, &T);
    in[1] = dfx__tensor_zeros(DFX_F32, 3, d3, NULL);
    in[2] = dfx__tensor_zeros(DFX_F32, 2, dc, NULL);
    in[3] = dfx__tensor_zeros(DFX_F32, 2, dc, NULL);
    in[4] = dfx__tensor_zeros(DFX_F32, 2, dw, NULL);
    for (int k = 5; k < 8; k++) in[k] = dfx__tensor_zeros(DFX_F32, 1, &dv, NULL);
    in[8] = dfx__tensor_zeros(DFX_F32, 1, &db, NULL);
    *n_in = 9;
  }
  return n;
}

Test(hostile, long_kernels_poll_cancellation_and_deadline) {
  static const char *const ops[] = {"RandomUniform", "RandomUniformInt", "RandomShuffle", "RandomGamma",
                                    "Multinomial", "FakeQuantWithMinMaxArgs", "FakeQuantWithMinMaxVarsPerChannel",
                                    "BlockLSTM"};
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
    for (int how = 0; how < 2; how++) {
      dfx_step s;
      dfx__step_init(&s);
      if (how)
        s.deadline_ns = 1; /* long past */
      else
        dfx__step_cancel(&s);
      dfx_tensor *in[9], *out[7] = {NULL};
      int n_in;
      dfx_node *n = long_node(ops[i], in, &n_in);
      dfx_code c = kh_run_step(n, in, n_in, out, NULL, &s, err, sizeof err);
      cr_expect_eq(c, how ? DFX_EDEADLINE : DFX_ECANCELED, "%s: %s", ops[i], err);
      cr_expect(strstr(err, how ? "run timed out" : "the run was cancelled"), "%s: %s", ops[i], err);
      cr_expect_null(out[0]);
      for (int k = 0; k < n_in; k++) dfx__tensor_unref(in[k]);
      kh_node_free(n);
      dfx__step_destroy(&s);
    }
}
