/* test_op_def.c - the signature parser and TensorFlow's generated op table.
 * The expected facts below were read from ../shared/tf-ops/ops.pbtxt by hand
 * (op, arg and attr by attr), not from op_table_tf.c, so a generator or
 * parser bug shows up as a mismatch. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "../eutil.h"
#include "dtype.h"
#include "op_def.h"
#include "status.h"

TestSuite(op_def, .init = eu_setup, .fini = eu_teardown);

static dfx_op_def *parse_row(const dfx_op_src *src) {
  dfx_op_def *d = NULL;
  dfx_status st;
  dfx__status_clear(&st);
  cr_assert_eq(dfx__op_def_parse(src, &d, &st), DFX_OK, "%s", st.msg);
  return d;
}

static dfx_op_def *tf(const char *op) {
  const dfx_op_src *row = dfx__op_table_tf_find(op);
  cr_assert(row, "%s is not in the TF table", op);
  return parse_row(row);
}

static const dfx_op_attr *attr(const dfx_op_def *d, const char *name) {
  const dfx_op_attr *a = dfx__op_def_attr(d, name);
  cr_assert(a, "%s has no attr %s", d->name, name);
  return a;
}

static uint32_t mask(const dfx_dtype *t, int n) {
  uint32_t m = 0;
  for (int i = 0; i < n; i++) m |= 1u << t[i];
  return m;
}
#define MASK(...) mask((const dfx_dtype[]){__VA_ARGS__}, sizeof((const dfx_dtype[]){__VA_ARGS__}) / sizeof(dfx_dtype))

static void expect_strs(const dfx_attr *l, const char *const *want, int n) {
  cr_assert_eq(l->kind, DFX_ATTR_LIST);
  cr_assert_eq(l->v.list.n, n);
  for (int i = 0; i < n; i++)
    cr_assert(l->v.list.v.s[i].len == strlen(want[i]) && memcmp(l->v.list.v.s[i].ptr, want[i], strlen(want[i])) == 0,
              "element %d is not %s", i, want[i]);
}

static void expect_arg(const dfx_op_arg *a, const char *name, dfx_dtype type, const char *type_attr,
                       const char *number_attr, const char *list_attr, bool ref) {
  cr_assert_str_eq(a->name, name);
  cr_assert_eq(a->type, type, "%s", name);
  cr_assert(type_attr ? a->type_attr && !strcmp(a->type_attr, type_attr) : !a->type_attr, "%s type_attr", name);
  cr_assert(number_attr ? a->number_attr && !strcmp(a->number_attr, number_attr) : !a->number_attr, "%s number", name);
  cr_assert(list_attr ? a->type_list_attr && !strcmp(a->type_list_attr, list_attr) : !a->type_list_attr, "%s list",
            name);
  cr_assert_eq(a->is_ref, ref, "%s is_ref", name);
}

/* ---- (a) every generated row parses, sorted and findable ---- */

Test(op_def, every_tf_row_parses_and_is_found_by_name) {
  int n = 0;
  for (const dfx_op_src *o = dfx__op_table_tf; o->name; o++, n++) {
    dfx_op_def *d = NULL;
    dfx_status st;
    cr_assert_eq(dfx__op_def_parse(o, &d, &st), DFX_OK, "%s", st.msg);
    cr_assert_str_eq(d->name, o->name);
    dfx__op_def_free(d);
    if (n > 0) cr_assert_lt(strcmp(o[-1].name, o->name), 0, "%s before %s", o[-1].name, o->name);
    cr_assert_eq(dfx__op_table_tf_find(o->name), o);
  }
  cr_assert_eq(n, 1563);
  cr_assert_eq(dfx__op_table_tf_count, 1563);
  cr_assert_null(dfx__op_table_tf_find("_Retval")); /* TF-internal ops are not in TF's OpList */
  cr_assert_null(dfx__op_table_tf_find("NoSuchOp"));
}

/* ---- (b) parsed defs match ops.pbtxt ---- */

Test(op_def, conv2d_matches_opdef) {
  dfx_op_def *d = tf("Conv2D");
  cr_assert_eq(d->n_in, 2);
  cr_assert_eq(d->n_out, 1);
  cr_assert_eq(d->n_attrs, 7);
  cr_assert_eq(d->flags, 0);
  expect_arg(&d->in[1], "filter", DFX_INVALID, "T", NULL, NULL, false);
  cr_assert_eq(attr(d, "T")->allowed, MASK(DFX_F16, DFX_BF16, DFX_F32, DFX_F64, DFX_I32));
  const dfx_op_attr *strides = attr(d, "strides");
  cr_assert(strides->kind == DFX_ATTR_LIST && strides->elem == DFX_ATTR_I && !strides->has_default);
  cr_assert_str_eq(strides->type, "list(int)");
  cr_assert(attr(d, "use_cudnn_on_gpu")->has_default && attr(d, "use_cudnn_on_gpu")->def.v.b == true);
  const dfx_op_attr *pad = attr(d, "padding");
  cr_assert(pad->kind == DFX_ATTR_S && !pad->has_default);
  expect_strs(&pad->allowed_s, (const char *const[]){"SAME", "VALID", "EXPLICIT"}, 3);
  const dfx_op_attr *fmt = attr(d, "data_format");
  expect_strs(&fmt->allowed_s, (const char *const[]){"NHWC", "NCHW"}, 2);
  cr_assert(fmt->has_default && fmt->def.kind == DFX_ATTR_S && strcmp(fmt->def.v.s.ptr, "NHWC") == 0);
  const dfx_op_attr *ep = attr(d, "explicit_paddings");
  cr_assert(ep->has_default && ep->def.kind == DFX_ATTR_LIST && ep->def.v.list.n == 0);
  const dfx_attr_list *dil = &attr(d, "dilations")->def.v.list;
  cr_assert(dil->n == 4 && dil->kind == DFX_ATTR_I && dil->v.i[0] == 1 && dil->v.i[3] == 1);
  dfx__op_def_free(d);
}

Test(op_def, arg_forms_match_opdef) {
  dfx_op_def *d = tf("DynamicStitch"); /* N * int32 and N * T */
  cr_assert_eq(d->n_in, 2);
  expect_arg(&d->in[0], "indices", DFX_I32, NULL, "N", NULL, false);
  expect_arg(&d->in[1], "data", DFX_INVALID, "T", "N", NULL, false);
  cr_assert(attr(d, "N")->has_min && attr(d, "N")->min == 1);
  dfx__op_def_free(d);
  d = tf("RefMerge"); /* N * Ref(T), then Ref(T) and a fixed int32 output */
  expect_arg(&d->in[0], "inputs", DFX_INVALID, "T", "N", NULL, true);
  cr_assert_eq(d->n_out, 2);
  expect_arg(&d->out[0], "output", DFX_INVALID, "T", NULL, NULL, true);
  expect_arg(&d->out[1], "value_index", DFX_I32, NULL, NULL, NULL, false);
  dfx__op_def_free(d);
  d = tf("AccumulatorNumAccumulated"); /* Ref(string) */
  expect_arg(&d->in[0], "handle", DFX_STRING, NULL, NULL, NULL, true);
  dfx__op_def_free(d);
  d = tf("DecodeCSV"); /* list(type) attr restricted, >= 1, used by an input and an output */
  expect_arg(&d->in[1], "record_defaults", DFX_INVALID, NULL, NULL, "OUT_TYPE", false);
  expect_arg(&d->out[0], "output", DFX_INVALID, NULL, NULL, "OUT_TYPE", false);
  const dfx_op_attr *ot = attr(d, "OUT_TYPE");
  cr_assert(ot->kind == DFX_ATTR_LIST && ot->elem == DFX_ATTR_TYPE && ot->has_min && ot->min == 1);
  cr_assert_eq(ot->allowed, MASK(DFX_F32, DFX_F64, DFX_I32, DFX_I64, DFX_STRING));
  cr_assert(attr(d, "field_delim")->def.v.s.len == 1 && attr(d, "field_delim")->def.v.s.ptr[0] == ',');
  dfx__op_def_free(d);
  d = tf("Placeholder"); /* no inputs; shape defaults to unknown rank */
  cr_assert_eq(d->n_in, 0);
  cr_assert_eq(d->n_out, 1);
  expect_arg(&d->out[0], "output", DFX_INVALID, "dtype", NULL, NULL, false);
  cr_assert(attr(d, "shape")->has_default && attr(d, "shape")->def.v.shape.rank == -1);
  dfx__op_def_free(d);
}

Test(op_def, flags_match_opdef) {
  static const struct {
    const char *op;
    unsigned flags;
  } cases[] = {{"AccumulateNV2", DFX_OP_COMMUTATIVE | DFX_OP_AGGREGATE},
               {"Assign", DFX_OP_ALLOWS_UNINIT},
               {"ApproximateEqual", DFX_OP_COMMUTATIVE},
               {"While", DFX_OP_STATEFUL},
               {"Pack", 0}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    dfx_op_def *d = tf(cases[i].op);
    cr_assert_eq(d->flags, cases[i].flags, "%s flags %#x", cases[i].op, d->flags);
    dfx__op_def_free(d);
  }
}

Test(op_def, default_kinds_match_opdef) {
  dfx_op_def *d = tf("DebugNumericSummary"); /* floats -inf and inf, an empty list(string) */
  cr_assert(isinf(attr(d, "lower_bound")->def.v.f) && attr(d, "lower_bound")->def.v.f < 0);
  cr_assert(isinf(attr(d, "upper_bound")->def.v.f) && attr(d, "upper_bound")->def.v.f > 0);
  cr_assert_str_eq(attr(d, "debug_urls")->type, "list(string)");
  cr_assert(attr(d, "debug_urls")->has_default && attr(d, "debug_urls")->def.v.list.n == 0);
  dfx__op_def_free(d);
  d = tf("ApproximateEqual"); /* an exponent */
  cr_assert_float_eq(attr(d, "tolerance")->def.v.f, 1e-05f, 1e-12);
  dfx__op_def_free(d);
  d = tf("InitializeTableFromTextFileV2"); /* escape, negative minimums */
  cr_assert(attr(d, "delimiter")->def.v.s.len == 1 && attr(d, "delimiter")->def.v.s.ptr[0] == '\t');
  cr_assert(attr(d, "key_index")->has_min && attr(d, "key_index")->min == -2 && !attr(d, "key_index")->has_default);
  cr_assert(attr(d, "vocab_size")->min == -1 && attr(d, "vocab_size")->def.v.i == -1);
  dfx__op_def_free(d);
  d = tf("MutableDenseHashTableV2"); /* scalar shape, large int, 0.8 */
  cr_assert(attr(d, "value_shape")->has_default && attr(d, "value_shape")->def.v.shape.rank == 0);
  cr_assert_eq(attr(d, "initial_num_buckets")->def.v.i, 131072);
  cr_assert_float_eq(attr(d, "max_load_factor")->def.v.f, 0.8f, 1e-7);
  dfx__op_def_free(d);
  d = tf("ImageSummary"); /* int >= 1 with a default, restricted type default, the tensor default */
  cr_assert(attr(d, "max_images")->has_min && attr(d, "max_images")->min == 1 && attr(d, "max_images")->def.v.i == 3);
  cr_assert_eq(attr(d, "T")->def.v.type, DFX_F32);
  cr_assert_eq(attr(d, "T")->allowed, MASK(DFX_U8, DFX_F32, DFX_F16, DFX_F64));
  const dfx_tensor *bad = attr(d, "bad_color")->def.v.tensor;
  cr_assert(bad && bad->dtype == DFX_U8 && bad->ndims == 1 && bad->dims[0] == 4);
  const uint8_t *px = bad->data;
  cr_assert(px[0] == 255 && px[1] == 0 && px[2] == 0 && px[3] == 255);
  dfx__op_def_free(d);
  d = tf("While"); /* func attrs, list(type) >= 0, list(shape) = [] */
  cr_assert_str_eq(attr(d, "cond")->type, "func");
  cr_assert(attr(d, "T")->has_min && attr(d, "T")->min == 0);
  cr_assert(attr(d, "output_shapes")->def.kind == DFX_ATTR_LIST && attr(d, "output_shapes")->def.v.list.n == 0);
  cr_assert_eq(attr(d, "parallel_iterations")->def.v.i, 10);
  dfx__op_def_free(d);
  d = tf("FIFOQueueV2"); /* list(shape) >= 0 with a default, int default -1 */
  cr_assert(attr(d, "shapes")->has_min && attr(d, "shapes")->min == 0 && attr(d, "shapes")->has_default);
  cr_assert_eq(attr(d, "capacity")->def.v.i, -1);
  cr_assert(attr(d, "component_types")->min == 1 && !attr(d, "component_types")->has_default);
  dfx__op_def_free(d);
}

/* ---- the notation itself, including the hand-written forms ---- */

Test(op_def, notation_values) {
  const dfx_op_src src = {
      "X", "a: T, b: N * int32, c: L -> d: Ref(float)",
      "T: {float, int32} = int32; N: int >= 2; L: list({half, bool}) >= 1 = [half, bool]; "
      "s: string = 'it\\'s\\\\\\x41\\n'; raw: string = 'x\ny'; f: list(float) = [0.5, -1e-3, nan]; "
      "sh: list(shape) = [[2, -1], unknown, []]; modes: list({'a', 'b'}) = ['a']; "
      "t: tensor = tensor(int64, [2, 2], 7, -8); g: func; b: list(bool) = [true, false]",
      DFX_OP_STATEFUL};
  dfx_op_def *d = parse_row(&src);
  cr_assert_eq(d->flags, DFX_OP_STATEFUL);
  expect_arg(&d->in[1], "b", DFX_I32, NULL, "N", NULL, false);
  expect_arg(&d->in[2], "c", DFX_INVALID, NULL, NULL, "L", false);
  expect_arg(&d->out[0], "d", DFX_F32, NULL, NULL, NULL, true);
  cr_assert_eq(attr(d, "T")->def.v.type, DFX_I32);
  cr_assert_eq(attr(d, "L")->allowed, MASK(DFX_F16, DFX_BOOL));
  cr_assert_eq(attr(d, "L")->def.v.list.v.type[1], DFX_BOOL);
  const dfx_str *s = &attr(d, "s")->def.v.s;
  cr_assert(s->len == 7 && memcmp(s->ptr, "it's\\A\n", 7) == 0, "%s", s->ptr);
  cr_assert(attr(d, "raw")->def.v.s.len == 3 && attr(d, "raw")->def.v.s.ptr[1] == '\n');
  const dfx_attr_list *f = &attr(d, "f")->def.v.list;
  cr_assert(f->n == 3 && f->v.f[0] == 0.5f && f->v.f[1] == -1e-3f && isnan(f->v.f[2]));
  const dfx_attr_list *sh = &attr(d, "sh")->def.v.list;
  cr_assert(sh->n == 3 && sh->v.shape[0].rank == 2 && sh->v.shape[0].dims[1] == -1);
  cr_assert(sh->v.shape[1].rank == -1 && sh->v.shape[2].rank == 0);
  expect_strs(&attr(d, "modes")->allowed_s, (const char *const[]){"a", "b"}, 2);
  cr_assert(attr(d, "modes")->kind == DFX_ATTR_LIST && attr(d, "modes")->elem == DFX_ATTR_S);
  const dfx_tensor *t = attr(d, "t")->def.v.tensor;
  const int64_t *tv = t->data;
  cr_assert(t->dtype == DFX_I64 && t->count == 4 && tv[0] == 7 && tv[1] == -8 && tv[3] == -8);
  cr_assert(attr(d, "g")->kind == DFX_ATTR_FUNC && !attr(d, "g")->has_default);
  cr_assert(attr(d, "b")->def.v.list.v.b[0] && !attr(d, "b")->def.v.list.v.b[1]);
  dfx__op_def_free(d);
}

Test(op_def, malformed_rows_fail_naming_the_op) {
  static const dfx_op_src bad[] = {
      {"B1", "x: T", "T: tyep"},                               /* unknown attr kind */
      {"B2", "x: N * T", "N: string; T: type"},                /* number attr that is not an int */
      {"B3", "x: Q", "T: type"},                               /* neither dtype nor attr */
      {"B4", "", "s: string = 'a\\qb'"},                       /* unknown escape */
      {"B5", "", "n: int = 3x"},                               /* trailing junk in a number */
      {"B6", "", "t: tensor = tensor(uint8, [2], 1, 2, 3)"},   /* more values than elements */
      {"B7", "", "s: {'a', 'b'} = 'a'; u: {float, nosuch}"},   /* unknown dtype in a set */
      {"B8", "", "f: func = g"},                               /* no func defaults */
      {"B9", "", "t: tensor = 5"},                             /* a tensor default must be tensor(...) */
      {"B10", "", "i: int = 1 b: bool"},                       /* missing ';' */
      {"B11", "", "t: tensor = tensor(int32, [1], 1.5)"},      /* a fraction for an integer dtype */
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    dfx_op_def *d = (dfx_op_def *)1;
    dfx_status st;
    cr_assert_eq(dfx__op_def_parse(&bad[i], &d, &st), DFX_EINTERNAL, "%s parsed", bad[i].name);
    cr_assert_null(d);
    cr_assert(strstr(st.msg, bad[i].name), "%s", st.msg);
  }
}

/* The parser keeps no state between calls and allocates through the hook:
 * every allocation failure returns DFX_ENOMEM and leaks nothing. */
Test(op_def, every_allocation_failure_is_clean) {
  const dfx_op_src *row = dfx__op_table_tf_find("ImageSummary");
  for (long long k = 1;; k++) {
    eu_alloc.fail_at = eu_alloc.n_allocs + k;
    dfx_op_def *d = NULL;
    dfx_status st;
    dfx_code c = dfx__op_def_parse(row, &d, &st);
    eu_alloc.fail_at = 0;
    if (c == DFX_OK) {
      dfx__op_def_free(d);
      cr_assert_gt(k, 10);
      break;
    }
    cr_assert_eq(c, DFX_ENOMEM, "allocation %lld: %s", k, st.msg);
    cr_assert_null(d);
  }
}
