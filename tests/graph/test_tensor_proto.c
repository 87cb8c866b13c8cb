/* test_tensor_proto.c - TensorProto decoding and encoding
 * (graph/tensor_proto.c), held to TensorFlow's Tensor::FromProto
 * (tf-semantics §1.5-1.7): tensor_content with its exact length, the typed
 * field of every dtype with its last value repeated, zeros when nothing is
 * given, strings as a varint length list or in string_val, shapes that a
 * Const may not have, ref and invalid dtypes, ENOMEM at every allocation,
 * and the encoders round-tripping every dtype through the decoder (directly
 * and through protobuf's wire form). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "../eutil.h"
#include "alloc.h"
#include "arena.h"
#include "pballoc.h"
#include "tensor.h"
#include "tensor_proto.h"

TestSuite(tensor_proto, .init = eu_setup, .fini = eu_teardown);

static long long live(void) {
  dfx__tensor_cache_flush();
  return eu_alloc.live_blocks;
}

/* ---- building protos on the stack ---- */

#define MAXD 300

typedef struct {
  Tensorflow__TensorProto p;
  Tensorflow__TensorShapeProto sh;
  Tensorflow__TensorShapeProto__Dim d[MAXD];
  Tensorflow__TensorShapeProto__Dim *dp[MAXD];
} pfx;

/* ndims -1: no tensor_shape at all; -2: unknown_rank. */
static Tensorflow__TensorProto *proto(pfx *f, int dtype, int ndims, const int64_t *dims) {
  f->p = (Tensorflow__TensorProto)TENSORFLOW__TENSOR_PROTO__INIT;
  f->sh = (Tensorflow__TensorShapeProto)TENSORFLOW__TENSOR_SHAPE_PROTO__INIT;
  f->p.dtype = (Tensorflow__DataType)dtype;
  if (ndims == -1) return &f->p;
  f->p.tensor_shape = &f->sh;
  if (ndims == -2) {
    f->sh.unknown_rank = 1;
    return &f->p;
  }
  for (int i = 0; i < ndims; i++) {
    f->d[i] = (Tensorflow__TensorShapeProto__Dim)TENSORFLOW__TENSOR_SHAPE_PROTO__DIM__INIT;
    f->d[i].size = dims[i];
    f->dp[i] = &f->d[i];
  }
  f->sh.n_dim = (size_t)ndims;
  f->sh.dim = f->dp;
  return &f->p;
}

static dfx_tensor *decode_ok(const Tensorflow__TensorProto *p, const char *what) {
  dfx_status st;
  dfx__status_clear(&st);
  dfx_tensor *t = (dfx_tensor *)1;
  dfx_code c = dfx__tensor_from_proto(p, &t, &st);
  cr_assert_eq(c, DFX_OK, "%s: %s (%s)", what, dfx_code_name(c), st.msg);
  cr_assert_not_null(t);
  cr_expect_eq(t->refs, 1, "%s: the caller owns the one reference", what);
  cr_expect_not(t->immortal);
  return t;
}

/* Decoding must fail: *out NULL, a message, and nothing left allocated. */
static dfx_code decode_err(const Tensorflow__TensorProto *p, const char *what, char *msg, size_t n) {
  long long base = live();
  dfx_status st;
  dfx__status_clear(&st);
  dfx_tensor *t = (dfx_tensor *)1;
  dfx_code c = dfx__tensor_from_proto(p, &t, &st);
  cr_expect_neq(c, DFX_OK, "%s: must be refused", what);
  cr_expect_null(t, "%s: out is NULL on failure", what);
  if (c == DFX_OK) dfx__tensor_unref(t);
  cr_expect_eq(st.code, c, "%s: the status holds the code", what);
  cr_expect_neq(st.msg[0], 0, "%s: and says why", what);
  cr_expect_eq(live(), base, "%s: leaked", what);
  if (msg) snprintf(msg, n, "%s", st.msg);
  return c;
}

/* ---- dtypes on the wire (§1.7) ---- */

Test(tensor_proto, wire_dtypes_map_refs_to_their_base_and_refuse_the_rest) {
  for (int v = 1; v <= 23; v++) {
    cr_expect_eq(dfx__dtype_from_wire(v), v, "DataType %d", v);
    cr_expect_eq(dfx__dtype_from_wire(v + 100), v, "DataType %d is %d's ref", v + 100, v);
  }
  const int bad[] = {0, 24, 25, 28, 29, 30, 31, 33, 99, 100, 124, 129, 133, 200, 201, 223, -1, -101, 1 << 30};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    cr_expect_eq(dfx__dtype_from_wire(bad[i]), DFX_INVALID, "DataType %d", bad[i]);
}

Test(tensor_proto, invalid_and_unsupported_dtypes_are_refused) {
  const int bad[] = {0, 21 /* variant */, 121 /* variant ref */, 24 /* float8 */, 29 /* int4 */, 99, 100, 124, -3};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    pfx f;
    int64_t d[1] = {2};
    Tensorflow__TensorProto *p = proto(&f, bad[i], 1, d);
    char what[32];
    snprintf(what, sizeof what, "DataType %d", bad[i]);
    decode_err(p, what, NULL, 0);
    proto(&f, bad[i], 1, (int64_t[]){0}); /* an empty tensor's dtype is checked too */
    decode_err(&f.p, what, NULL, 0);
  }
}

Test(tensor_proto, ref_dtypes_decode_as_their_base_type) {
  pfx f;
  int64_t d[1] = {2};
  proto(&f, 101, 1, d); /* DT_FLOAT_REF */
  f.p.n_float_val = 1;
  f.p.float_val = (float[]){2.5f};
  dfx_tensor *t = decode_ok(&f.p, "float ref");
  cr_expect_eq(t->dtype, DFX_F32);
  cr_expect_eq(((float *)t->data)[1], 2.5f);
  dfx__tensor_unref(t);

  proto(&f, 110, 0, NULL); /* DT_BOOL_REF */
  f.p.n_bool_val = 1;
  f.p.bool_val = (protobuf_c_boolean[]){1};
  t = decode_ok(&f.p, "bool ref");
  cr_expect_eq(t->dtype, DFX_BOOL);
  cr_expect_eq(*(uint8_t *)t->data, 1);
  dfx__tensor_unref(t);

  proto(&f, 107, 0, NULL); /* DT_STRING_REF */
  f.p.n_string_val = 1;
  f.p.string_val = (ProtobufCBinaryData[]){{2, (uint8_t *)"hi"}};
  t = decode_ok(&f.p, "string ref");
  cr_expect_eq(t->dtype, DFX_STRING);
  size_t len;
  cr_expect_eq(memcmp(dfx_tensor_string(t, 0, &len), "hi", 2), 0);
  dfx__tensor_unref(t);
}

/* ---- typed fields (§1.5 step 3) ---- */

/* One row per dtype: its typed field holds up to 7 distinct values, read
 * back through int64 or double. */
typedef enum { F_FLOAT, F_DOUBLE, F_INT, F_INT64, F_UINT32, F_UINT64, F_BOOL, F_HALF } field;

static const struct {
  dfx_dtype dt;
  field fld;
  bool as_float; /* compare via dfx__tensor_get_f64, else get_i64 */
  double v[7];   /* the wire values (int fields: exact integers) */
  double want[7]; /* the decoded element values */
} rows[] = {
    {DFX_F32, F_FLOAT, true, {1.5, -2.25, 16777216, 0.125, -0.0, 7, 8}, {1.5, -2.25, 16777216, 0.125, -0.0, 7, 8}},
    {DFX_F64, F_DOUBLE, true, {1e300, -0.5, 7, 1e-300, 2, 3, 4}, {1e300, -0.5, 7, 1e-300, 2, 3, 4}},
    {DFX_I32, F_INT, false, {-7, 2147483647, -2147483648.0, 1, 2, 3, 4}, {-7, 2147483647, -2147483648.0, 1, 2, 3, 4}},
    {DFX_QI32, F_INT, false, {-7, 2147483647, 0, 1, 2, 3, 4}, {-7, 2147483647, 0, 1, 2, 3, 4}},
    {DFX_I16, F_INT, false, {-32768, 32767, 5, 6, 7, 8, 9}, {-32768, 32767, 5, 6, 7, 8, 9}},
    {DFX_QI16, F_INT, false, {-32768, 32767, 5, 6, 7, 8, 9}, {-32768, 32767, 5, 6, 7, 8, 9}},
    {DFX_U16, F_INT, false, {65535, 1, 2, 3, 4, 5, 6}, {65535, 1, 2, 3, 4, 5, 6}},
    {DFX_QU16, F_INT, false, {65535, 1, 2, 3, 4, 5, 6}, {65535, 1, 2, 3, 4, 5, 6}},
    {DFX_I8, F_INT, false, {-128, 127, 3, 4, 5, 6, 7}, {-128, 127, 3, 4, 5, 6, 7}},
    {DFX_QI8, F_INT, false, {-128, 127, 3, 4, 5, 6, 7}, {-128, 127, 3, 4, 5, 6, 7}},
    {DFX_U8, F_INT, false, {255, 0, 9, 10, 11, 12, 13}, {255, 0, 9, 10, 11, 12, 13}},
    {DFX_QU8, F_INT, false, {255, 0, 9, 10, 11, 12, 13}, {255, 0, 9, 10, 11, 12, 13}},
    {DFX_I64, F_INT64, false, {-9007199254740992.0, 9007199254740992.0, 3, 4, 5, 6, 7},
     {-9007199254740992.0, 9007199254740992.0, 3, 4, 5, 6, 7}},
    {DFX_U32, F_UINT32, false, {4294967295.0, 1, 2, 3, 4, 5, 6}, {4294967295.0, 1, 2, 3, 4, 5, 6}},
    {DFX_U64, F_UINT64, false, {9007199254740992.0, 1, 2, 3, 4, 5, 6}, {9007199254740992.0, 1, 2, 3, 4, 5, 6}},
    {DFX_BOOL, F_BOOL, false, {1, 0, 1, 0, 0, 1, 1}, {1, 0, 1, 0, 0, 1, 1}},
    /* half and bfloat16: the 16-bit pattern in half_val (§1.5 field 13). */
    {DFX_F16, F_HALF, true, {0x3c00, 0xc500, 0x7bff, 0x3800, 0, 0x4000, 0x4200}, {1, -5, 65504, 0.5, 0, 2, 3}},
    {DFX_BF16, F_HALF, true, {0x3f80, 0x4120, 0xc000, 0x3f00, 0, 0x4000, 0x4040}, {1, 10, -2, 0.5, 0, 2, 3}},
};
#define N_ROWS (sizeof rows / sizeof rows[0])

/* Storage for one row's typed field, owned by the caller's frame. */
typedef struct {
  float f[7];
  double d[7];
  int32_t i[7];
  int64_t l[7];
  uint32_t u[7];
  uint64_t ul[7];
  protobuf_c_boolean b[7];
} vals;

static void set_field(Tensorflow__TensorProto *p, vals *s, field fld, const double *v, size_t k) {
  /* Convert only to the field's own type: every value is in its range. */
  for (size_t j = 0; j < k; j++) {
    switch (fld) {
      case F_FLOAT: s->f[j] = (float)v[j]; break;
      case F_DOUBLE: s->d[j] = v[j]; break;
      case F_INT:
      case F_HALF: s->i[j] = (int32_t)v[j]; break;
      case F_INT64: s->l[j] = (int64_t)v[j]; break;
      case F_UINT32: s->u[j] = (uint32_t)v[j]; break;
      case F_UINT64: s->ul[j] = (uint64_t)v[j]; break;
      case F_BOOL: s->b[j] = v[j] != 0; break;
    }
  }
  switch (fld) {
    case F_FLOAT: p->n_float_val = k, p->float_val = s->f; break;
    case F_DOUBLE: p->n_double_val = k, p->double_val = s->d; break;
    case F_INT: p->n_int_val = k, p->int_val = s->i; break;
    case F_INT64: p->n_int64_val = k, p->int64_val = s->l; break;
    case F_UINT32: p->n_uint32_val = k, p->uint32_val = s->u; break;
    case F_UINT64: p->n_uint64_val = k, p->uint64_val = s->ul; break;
    case F_BOOL: p->n_bool_val = k, p->bool_val = s->b; break;
    case F_HALF: p->n_half_val = k, p->half_val = s->i; break;
  }
}

static double elem(const dfx_tensor *t, int64_t i, bool as_float) {
  if (as_float) return dfx__tensor_get_f64(t, i);
  if (t->dtype == DFX_U64) return (double)((const uint64_t *)t->data)[i];
  return (double)dfx__tensor_get_i64(t, i);
}

Test(tensor_proto, typed_fields_repeat_their_last_value_for_every_dtype) {
  const size_t ks[] = {1, 2, 3, 5, 7}; /* fewer, as many as, and more values than the 5 elements */
  int64_t d[2] = {5, 1};
  for (size_t r = 0; r < N_ROWS; r++) {
    for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++) {
      size_t k = ks[ki];
      pfx f;
      vals s;
      proto(&f, rows[r].dt, 2, d);
      set_field(&f.p, &s, rows[r].fld, rows[r].v, k);
      char what[64];
      snprintf(what, sizeof what, "%s with %zu values", dfx_dtype_name(rows[r].dt), k);
      dfx_tensor *t = decode_ok(&f.p, what);
      cr_expect_eq(t->dtype, rows[r].dt, "%s", what);
      cr_expect_eq(t->ndims, 2);
      cr_expect_eq(t->count, 5);
      for (int64_t i = 0; i < 5; i++) {
        double want = rows[r].want[(size_t)i < k ? (size_t)i : k - 1];
        cr_expect_eq(elem(t, i, rows[r].as_float), want, "%s: element %lld", what, (long long)i);
      }
      dfx__tensor_unref(t);
    }
  }
}

Test(tensor_proto, no_values_at_all_means_zeros_for_every_dtype) {
  int64_t d[1] = {40}; /* more than fits in the struct: a recycled buffer must be zeroed */
  for (size_t r = 0; r < N_ROWS; r++) {
    /* Dirty a buffer of the same size first. */
    dfx_tensor *dirty = dfx__tensor_alloc(rows[r].dt, 1, d, NULL);
    memset(dirty->data, 0xa7, dirty->nbytes);
    dfx__tensor_unref(dirty);
    pfx f;
    dfx_tensor *t = decode_ok(proto(&f, rows[r].dt, 1, d), dfx_dtype_name(rows[r].dt));
    const unsigned char *b = t->data;
    for (size_t i = 0; i < t->nbytes; i++) cr_assert_eq(b[i], 0, "%s byte %zu", dfx_dtype_name(rows[r].dt), i);
    dfx__tensor_unref(t);
  }
  /* Complex types too. */
  dfx_dtype cx[2] = {DFX_C64, DFX_C128};
  for (int k = 0; k < 2; k++) {
    pfx f;
    dfx_tensor *t = decode_ok(proto(&f, cx[k], 1, d), dfx_dtype_name(cx[k]));
    for (size_t i = 0; i < t->nbytes; i++) cr_assert_eq(((unsigned char *)t->data)[i], 0);
    dfx__tensor_unref(t);
  }
}

Test(tensor_proto, int_val_narrows_like_a_cast) {
  /* TF copies int32 values into the narrower element type. */
  static const struct {
    dfx_dtype dt;
    int32_t in;
    int64_t want;
  } cases[] = {
      {DFX_U8, 300, 44}, {DFX_U8, -1, 255},      {DFX_I8, 200, -56},     {DFX_I8, -129, 127},
      {DFX_I16, 70000, 4464}, {DFX_U16, -1, 65535}, {DFX_QU8, 256, 0}, {DFX_QI16, 32768, -32768},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    pfx f;
    proto(&f, cases[c].dt, 0, NULL);
    f.p.n_int_val = 1;
    f.p.int_val = (int32_t[]){cases[c].in};
    dfx_tensor *t = decode_ok(&f.p, dfx_dtype_name(cases[c].dt));
    cr_expect_eq(dfx__tensor_get_i64(t, 0), cases[c].want, "%s from %d", dfx_dtype_name(cases[c].dt), cases[c].in);
    dfx__tensor_unref(t);
  }
}

Test(tensor_proto, complex_fields_hold_pairs) {
  int64_t d[1] = {3};
  pfx f;
  proto(&f, DFX_C64, 1, d);
  f.p.n_scomplex_val = 4;
  f.p.scomplex_val = (float[]){1, 2, 3, 4};
  dfx_tensor *t = decode_ok(&f.p, "complex64");
  const dfx_c64 *c = t->data;
  cr_expect(c[0].re == 1 && c[0].im == 2);
  cr_expect(c[1].re == 3 && c[1].im == 4);
  cr_expect(c[2].re == 3 && c[2].im == 4, "the last pair repeats");
  dfx__tensor_unref(t);

  /* An odd value count: the unpaired last value is not an element. */
  f.p.n_scomplex_val = 3;
  f.p.scomplex_val = (float[]){5, 6, 7};
  t = decode_ok(&f.p, "complex64, odd");
  c = t->data;
  for (int i = 0; i < 3; i++) cr_expect(c[i].re == 5 && c[i].im == 6, "element %d", i);
  dfx__tensor_unref(t);

  /* A single value makes no pair: zeros. */
  f.p.n_scomplex_val = 1;
  f.p.scomplex_val = (float[]){9};
  t = decode_ok(&f.p, "complex64, one value");
  c = t->data;
  for (int i = 0; i < 3; i++) cr_expect(c[i].re == 0 && c[i].im == 0);
  dfx__tensor_unref(t);

  proto(&f, DFX_C128, 1, d);
  f.p.n_dcomplex_val = 2;
  f.p.dcomplex_val = (double[]){-1.5, 1e200};
  t = decode_ok(&f.p, "complex128");
  const dfx_c128 *z = t->data;
  for (int i = 0; i < 3; i++) cr_expect(z[i].re == -1.5 && z[i].im == 1e200, "element %d", i);
  dfx__tensor_unref(t);
}

Test(tensor_proto, values_in_another_dtypes_field_are_ignored) {
  static const struct {
    dfx_dtype dt;
    field fld;
  } cases[] = {
      {DFX_F32, F_INT},   {DFX_F32, F_DOUBLE}, {DFX_F64, F_FLOAT}, {DFX_I32, F_FLOAT},  {DFX_I32, F_INT64},
      {DFX_I64, F_INT},   {DFX_U32, F_INT},    {DFX_U64, F_INT64}, {DFX_BOOL, F_INT},   {DFX_F16, F_FLOAT},
      {DFX_BF16, F_FLOAT}, {DFX_F16, F_INT},   {DFX_U8, F_BOOL},   {DFX_C64, F_FLOAT},  {DFX_C128, F_DOUBLE},
  };
  const double v[1] = {5};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    pfx f;
    vals s;
    int64_t d[1] = {2};
    proto(&f, cases[c].dt, 1, d);
    set_field(&f.p, &s, cases[c].fld, v, 1);
    dfx_tensor *t = decode_ok(&f.p, dfx_dtype_name(cases[c].dt));
    for (size_t i = 0; i < t->nbytes; i++)
      cr_expect_eq(((unsigned char *)t->data)[i], 0, "case %zu (%s): zeros", c, dfx_dtype_name(cases[c].dt));
    dfx__tensor_unref(t);
  }
}

/* ---- tensor_content (§1.5 step 2) ---- */

static const struct {
  dfx_dtype dt;
  size_t size;
} sizes[] = {
    {DFX_F32, 4}, {DFX_F64, 8},  {DFX_I32, 4},  {DFX_U8, 1},   {DFX_I16, 2},  {DFX_I8, 1},    {DFX_C64, 8},
    {DFX_I64, 8}, {DFX_BOOL, 1}, {DFX_QI8, 1},  {DFX_QU8, 1},  {DFX_QI32, 4}, {DFX_BF16, 2},  {DFX_QI16, 2},
    {DFX_QU16, 2}, {DFX_U16, 2}, {DFX_C128, 16}, {DFX_F16, 2}, {DFX_U32, 4},  {DFX_U64, 8},
};
#define N_SIZES (sizeof sizes / sizeof sizes[0])

static void pattern(unsigned char *b, size_t n, dfx_dtype dt) {
  for (size_t i = 0; i < n; i++) b[i] = dt == DFX_BOOL ? (unsigned char)(i % 3 == 1) : (unsigned char)(i * 37 + 11);
}

Test(tensor_proto, tensor_content_holds_the_raw_elements_of_every_dtype) {
  int64_t d[2] = {2, 3};
  for (size_t k = 0; k < N_SIZES; k++) {
    unsigned char bytes[6 * 16];
    size_t n = 6 * sizes[k].size;
    pattern(bytes, n, sizes[k].dt);
    pfx f;
    vals s;
    proto(&f, sizes[k].dt, 2, d);
    f.p.tensor_content = (ProtobufCBinaryData){n, bytes};
    /* A typed field alongside is ignored: tensor_content wins. */
    set_field(&f.p, &s, F_INT, (double[]){99}, 1);
    set_field(&f.p, &s, F_FLOAT, (double[]){99}, 1);
    dfx_tensor *t = decode_ok(&f.p, dfx_dtype_name(sizes[k].dt));
    cr_expect_eq(t->nbytes, n);
    cr_expect_eq(memcmp(t->data, bytes, n), 0, "%s: bytes as given", dfx_dtype_name(sizes[k].dt));
    dfx__tensor_unref(t);
  }
}

Test(tensor_proto, tensor_content_of_the_wrong_length_is_refused) {
  int64_t d[2] = {2, 3};
  for (size_t k = 0; k < N_SIZES; k++) {
    unsigned char bytes[6 * 16 + 1];
    memset(bytes, 1, sizeof bytes);
    size_t n = 6 * sizes[k].size;
    const size_t lens[] = {1, n - 1, n + 1, 5 * sizes[k].size, 7 * sizes[k].size};
    for (size_t j = 0; j < sizeof lens / sizeof lens[0]; j++) {
      if (lens[j] == n || lens[j] == 0) continue;
      pfx f;
      proto(&f, sizes[k].dt, 2, d);
      f.p.tensor_content = (ProtobufCBinaryData){lens[j], bytes};
      char what[64], msg[256], want[128];
      snprintf(what, sizeof what, "%s with %zu bytes", dfx_dtype_name(sizes[k].dt), lens[j]);
      cr_expect_eq(decode_err(&f.p, what, msg, sizeof msg), DFX_EINVAL, "%s", what);
      snprintf(want, sizeof want, "Input size was %zu and expected %zu", lens[j], n);
      cr_expect(strstr(msg, want), "%s: '%s' should say '%s'", what, msg, want);
    }
  }
}

/* TF: "If n = 0 there is no buffer, but the dtype is still checked"
 * (Tensor::FromProto decodes tensor_content only when N > 0). */
Test(tensor_proto, tensor_content_of_an_empty_tensor_is_ignored) {
  /* Regression: this failed before the fix it names above. */
  int64_t d[2] = {0, 3};
  for (size_t k = 0; k < N_SIZES; k++) {
    unsigned char bytes[4] = {1, 2, 3, 4};
    pfx f;
    proto(&f, sizes[k].dt, 2, d);
    f.p.tensor_content = (ProtobufCBinaryData){sizeof bytes, bytes};
    dfx_tensor *t = decode_ok(&f.p, dfx_dtype_name(sizes[k].dt));
    cr_expect_eq(t->count, 0);
    dfx__tensor_unref(t);
  }
}

/* TF's newer decoders refuse a bool byte other than 0 or 1; dfexec may
 * refuse it too, or read it as true, but must not keep a non-canonical bool
 * that kernels would compare unequal to true. */
Test(tensor_proto, bool_tensor_content_is_refused_or_canonical) {
  unsigned char bytes[4] = {0, 1, 2, 255};
  pfx f;
  proto(&f, DFX_BOOL, 1, (int64_t[]){4});
  f.p.tensor_content = (ProtobufCBinaryData){4, bytes};
  dfx_tensor *t = NULL;
  dfx_status st;
  dfx__status_clear(&st);
  if (dfx__tensor_from_proto(&f.p, &t, &st) != DFX_OK) {
    cr_expect_null(t);
    return;
  }
  const uint8_t *b = t->data;
  cr_expect(b[0] == 0 && b[1] == 1 && b[2] == 1 && b[3] == 1, "got %d %d %d %d", b[0], b[1], b[2], b[3]);
  dfx__tensor_unref(t);
}

/* ---- strings ---- */

static void expect_strings(const dfx_tensor *t, const char *const *want, const size_t *lens, int n, const char *what) {
  cr_assert_eq(t->dtype, DFX_STRING, "%s", what);
  cr_assert_eq(t->count, n, "%s", what);
  for (int i = 0; i < n; i++) {
    size_t len = 999;
    const char *s = dfx_tensor_string(t, i, &len);
    cr_expect_eq(len, lens[i], "%s: element %d length", what, i);
    if (len == lens[i]) cr_expect_eq(memcmp(s, want[i], len), 0, "%s: element %d", what, i);
  }
}

Test(tensor_proto, string_val_repeats_its_last_value) {
  ProtobufCBinaryData sv[3] = {{1, (uint8_t *)"a"}, {0, NULL}, {3, (uint8_t *)"c\0d"}};
  pfx f;
  proto(&f, DFX_STRING, 1, (int64_t[]){5});
  f.p.n_string_val = 3;
  f.p.string_val = sv;
  dfx_tensor *t = decode_ok(&f.p, "3 of 5");
  expect_strings(t, (const char *[]){"a", "", "c\0d", "c\0d", "c\0d"}, (size_t[]){1, 0, 3, 3, 3}, 5, "3 of 5");
  dfx__tensor_unref(t);

  proto(&f, DFX_STRING, 1, (int64_t[]){2});
  f.p.n_string_val = 3; /* more than needed: the rest is ignored */
  f.p.string_val = sv;
  t = decode_ok(&f.p, "3 for 2");
  expect_strings(t, (const char *[]){"a", ""}, (size_t[]){1, 0}, 2, "3 for 2");
  dfx__tensor_unref(t);

  proto(&f, DFX_STRING, 1, (int64_t[]){3}); /* none: empty strings */
  t = decode_ok(&f.p, "none");
  expect_strings(t, (const char *[]){"", "", ""}, (size_t[]){0, 0, 0}, 3, "none");
  dfx__tensor_unref(t);
}

Test(tensor_proto, string_tensor_content_is_a_varint_length_list) {
  /* EncodeStringList: the n lengths as varint32, then the bytes. */
  unsigned char buf[4 + 2 + 200];
  size_t o = 0;
  buf[o++] = 2, buf[o++] = 0, buf[o++] = 0xc8, buf[o++] = 0x01; /* 2, 0, 200 */
  memcpy(buf + o, "ab", 2), o += 2;
  char x200[200];
  memset(x200, 'x', sizeof x200);
  x200[7] = 0; /* bytes, not C strings */
  memcpy(buf + o, x200, 200), o += 200;
  pfx f;
  proto(&f, DFX_STRING, 1, (int64_t[]){3});
  f.p.tensor_content = (ProtobufCBinaryData){o, buf};
  f.p.n_string_val = 1; /* tensor_content wins over string_val */
  f.p.string_val = (ProtobufCBinaryData[]){{1, (uint8_t *)"z"}};
  dfx_tensor *t = decode_ok(&f.p, "list");
  expect_strings(t, (const char *[]){"ab", "", x200}, (size_t[]){2, 0, 200}, 3, "list");
  dfx__tensor_unref(t);

  /* A scalar whose one string is empty: a single zero length. */
  proto(&f, DFX_STRING, 0, NULL);
  f.p.tensor_content = (ProtobufCBinaryData){1, (uint8_t[]){0}};
  t = decode_ok(&f.p, "empty scalar");
  expect_strings(t, (const char *[]){""}, (size_t[]){0}, 1, "empty scalar");
  dfx__tensor_unref(t);

  /* No elements: tensor_content is not read at all (N == 0 in TF). */
  proto(&f, DFX_STRING, 1, (int64_t[]){0});
  f.p.tensor_content = (ProtobufCBinaryData){3, (uint8_t *)"\x05zz"};
  t = decode_ok(&f.p, "no elements");
  cr_expect_eq(t->count, 0);
  dfx__tensor_unref(t);
}

Test(tensor_proto, string_tensor_content_that_runs_short_is_refused) {
  static const struct {
    const char *what;
    int64_t n;
    size_t len;
    const char *bytes;
  } cases[] = {
      {"a length past the end", 1, 3, "\x05" "ab"},
      {"the second length past the end", 2, 4, "\x01\x02" "ab"},
      {"fewer lengths than elements", 3, 2, "\x00\x00"},
      {"a varint cut in the middle", 1, 1, "\x80"},
      {"a varint cut after two bytes", 2, 3, "\x00\x81\x80"},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    pfx f;
    proto(&f, DFX_STRING, 1, (int64_t[]){cases[c].n});
    f.p.tensor_content = (ProtobufCBinaryData){cases[c].len, (uint8_t *)cases[c].bytes};
    cr_expect_eq(decode_err(&f.p, cases[c].what, NULL, 0), DFX_EINVAL, "%s", cases[c].what);
  }
}

/* TF's DecodeStringList requires the lengths to add up to exactly the bytes
 * that follow them ("if (tot != reader.size()) return false"). */
Test(tensor_proto, string_tensor_content_with_bytes_left_over_is_refused) {
  /* Regression: this failed before the fix it names above. */
  static const struct {
    int64_t n;
    size_t len;
    const char *bytes;
  } cases[] = {{1, 3, "\x01" "ab"}, {2, 5, "\x00\x00" "xyz"}, {1, 2, "\x00" "q"}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    pfx f;
    proto(&f, DFX_STRING, 1, (int64_t[]){cases[c].n});
    f.p.tensor_content = (ProtobufCBinaryData){cases[c].len, (uint8_t *)cases[c].bytes};
    cr_expect_eq(decode_err(&f.p, "bytes left over", NULL, 0), DFX_EINVAL, "case %zu", c);
  }
}

/* The lengths are varint32s (core::GetVarint32): at most 5 bytes. */
Test(tensor_proto, an_overlong_varint_length_is_refused) {
  /* Regression: this failed before the fix it names above. */
  pfx f;
  proto(&f, DFX_STRING, 1, (int64_t[]){1});
  f.p.tensor_content = (ProtobufCBinaryData){6, (uint8_t *)"\x80\x80\x80\x80\x80\x00"};
  cr_expect_eq(decode_err(&f.p, "a 6-byte varint", NULL, 0), DFX_EINVAL);
}

/* ---- shapes (§1.6) ---- */

Test(tensor_proto, no_shape_or_no_dims_is_a_scalar) {
  pfx f;
  proto(&f, DFX_F32, -1, NULL);
  f.p.n_float_val = 1;
  f.p.float_val = (float[]){4.5f};
  dfx_tensor *t = decode_ok(&f.p, "no tensor_shape");
  cr_expect_eq(t->ndims, 0);
  cr_expect_eq(t->count, 1);
  cr_expect_eq(*(float *)t->data, 4.5f);
  dfx__tensor_unref(t);
  proto(&f, DFX_I64, 0, NULL);
  t = decode_ok(&f.p, "tensor_shape {}");
  cr_expect_eq(t->ndims, 0);
  cr_expect_eq(t->count, 1);
  dfx__tensor_unref(t);
}

Test(tensor_proto, every_rank_up_to_the_maximum_decodes) {
  for (int r = 0; r <= DFX_MAX_DIMS; r++) {
    int64_t d[DFX_MAX_DIMS];
    for (int i = 0; i < r; i++) d[i] = 1 + (i % 2);
    pfx f;
    proto(&f, DFX_I8, r, d);
    char what[16];
    snprintf(what, sizeof what, "rank %d", r);
    dfx_tensor *t = decode_ok(&f.p, what);
    cr_expect_eq(t->ndims, r);
    for (int i = 0; i < r; i++) cr_expect_eq(t->dims[i], d[i]);
    dfx__tensor_unref(t);
  }
}

Test(tensor_proto, a_tensor_value_cannot_have_unknown_rank_or_dims) {
  pfx f;
  char msg[256];
  proto(&f, DFX_F32, -2, NULL);
  cr_expect_eq(decode_err(&f.p, "unknown rank", msg, sizeof msg), DFX_EINVAL);
  static const int64_t bad[][3] = {{-1}, {2, -1}, {3, 4, -1}, {-2}, {5, INT64_MIN}};
  static const int nd[] = {1, 2, 3, 1, 2};
  for (size_t i = 0; i < sizeof nd / sizeof nd[0]; i++) {
    proto(&f, DFX_F32, nd[i], bad[i]);
    f.p.n_float_val = 1;
    f.p.float_val = (float[]){1};
    cr_expect_eq(decode_err(&f.p, "negative dim", msg, sizeof msg), DFX_EINVAL, "case %zu: %s", i, msg);
  }
}

Test(tensor_proto, ranks_past_the_maximum_are_refused) {
  int64_t ones[MAXD];
  for (int i = 0; i < MAXD; i++) ones[i] = 1;
  const int ranks[] = {DFX_MAX_DIMS + 1, 254, 255, MAXD};
  for (size_t i = 0; i < sizeof ranks / sizeof ranks[0]; i++) {
    pfx *f = dfx__malloc(sizeof *f); /* too big for the stack */
    proto(f, DFX_F32, ranks[i], ones);
    char what[32];
    snprintf(what, sizeof what, "rank %d", ranks[i]);
    decode_err(&f->p, what, NULL, 0);
    dfx__free(f);
  }
}

Test(tensor_proto, huge_shapes_fail_before_allocating) {
  static const struct {
    int ndims;
    int64_t dims[3];
  } cases[] = {
      {1, {INT64_C(1) << 40}},
      {2, {INT64_MAX, 2}},
      {3, {INT64_C(1) << 31, INT64_C(1) << 31, 4}},
      {2, {INT64_C(1) << 62, 1}},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    pfx f;
    proto(&f, DFX_F32, cases[c].ndims, cases[c].dims);
    f.p.n_float_val = 1;
    f.p.float_val = (float[]){1};
    long long before = eu_alloc.n_allocs;
    dfx_code code = decode_err(&f.p, "huge", NULL, 0);
    cr_expect(code == DFX_ELIMIT || code == DFX_EINVAL, "case %zu: %s", c, dfx_code_name(code));
    cr_expect_leq(eu_alloc.n_allocs - before, 1, "case %zu: at most the shape's own dims are allocated", c);
  }
  /* The byte limit applies to decoded tensors. */
  dfx_set_max_tensor_bytes(64);
  pfx f;
  proto(&f, DFX_F32, 1, (int64_t[]){16});
  dfx__tensor_unref(decode_ok(&f.p, "64 bytes"));
  proto(&f, DFX_F32, 1, (int64_t[]){17});
  cr_expect_eq(decode_err(&f.p, "68 bytes", NULL, 0), DFX_ELIMIT);
  dfx_set_max_tensor_bytes(0);
}

Test(tensor_proto, shape_attrs_allow_unknown_dims_and_rank) {
  pfx f;
  dfx_shape s = {.rank = 77};
  cr_assert_eq(dfx__shape_from_proto(NULL, &s, NULL), DFX_OK);
  cr_expect_eq(s.rank, 0, "no shape: a scalar");
  cr_expect_null(s.dims);
  proto(&f, 0, -2, NULL);
  cr_assert_eq(dfx__shape_from_proto(&f.sh, &s, NULL), DFX_OK);
  cr_expect_eq(s.rank, -1, "unknown rank");
  cr_expect_null(s.dims);
  proto(&f, 0, 3, (int64_t[]){3, -1, 0});
  cr_assert_eq(dfx__shape_from_proto(&f.sh, &s, NULL), DFX_OK);
  cr_expect_eq(s.rank, 3);
  cr_expect(s.dims[0] == 3 && s.dims[1] == -1 && s.dims[2] == 0);
  dfx__free(s.dims);

  dfx_status st;
  dfx__status_clear(&st);
  proto(&f, 0, 2, (int64_t[]){4, -2});
  cr_expect_eq(dfx__shape_from_proto(&f.sh, &s, &st), DFX_EINVAL, "-1 is the only negative size");
  cr_expect_null(s.dims);
  cr_expect(strstr(st.msg, "-2"), "%s", st.msg);

  proto(&f, 0, 1, (int64_t[]){2});
  eu_alloc.fail_at = eu_alloc.n_allocs + 1;
  cr_expect_eq(dfx__shape_from_proto(&f.sh, &s, &st), DFX_ENOMEM);
  eu_alloc.fail_at = 0;
  cr_expect_null(s.dims);
}

/* ---- other dtypes ---- */

Test(tensor_proto, resource_tensors_hold_empty_handles) {
  pfx f;
  proto(&f, DFX_RESOURCE, 1, (int64_t[]){2});
  dfx_tensor *t = decode_ok(&f.p, "resource");
  cr_expect_eq(t->dtype, DFX_RESOURCE);
  cr_expect_eq(t->count, 2);
  cr_expect_null(((void **)t->data)[0]);
  cr_expect_null(((void **)t->data)[1]);
  dfx__tensor_unref(t);
}

/* ---- out of memory ---- */

Test(tensor_proto, decoding_fails_cleanly_at_every_allocation) {
  unsigned char list[] = {3, 0, 2, 'a', 'b', 'c', 'd', 'e'};
  static float big[1000];
  ProtobufCBinaryData sv[2] = {{2, (uint8_t *)"hi"}, {3, (uint8_t *)"you"}};
  pfx fx[5];
  proto(&fx[0], DFX_F32, 2, (int64_t[]){2, 3});
  fx[0].p.n_float_val = 1, fx[0].p.float_val = (float[]){1};
  proto(&fx[1], DFX_F32, 1, (int64_t[]){1000});
  fx[1].p.tensor_content = (ProtobufCBinaryData){sizeof big, (uint8_t *)big};
  proto(&fx[2], DFX_STRING, 1, (int64_t[]){4});
  fx[2].p.n_string_val = 2, fx[2].p.string_val = sv;
  proto(&fx[3], DFX_STRING, 1, (int64_t[]){3});
  fx[3].p.tensor_content = (ProtobufCBinaryData){sizeof list, list};
  proto(&fx[4], DFX_I32, 0, NULL);
  for (int k = 0; k < 5; k++) {
    int failures = 0;
    for (long long n = 1;; n++) {
      long long base = live();
      eu_alloc.fail_at = eu_alloc.n_allocs + n;
      dfx_tensor *t = (dfx_tensor *)1;
      dfx_status st;
      dfx__status_clear(&st);
      dfx_code c = dfx__tensor_from_proto(&fx[k].p, &t, &st);
      eu_alloc.fail_at = 0;
      if (c == DFX_OK) {
        dfx__tensor_unref(t);
        break;
      }
      cr_expect_eq(c, DFX_ENOMEM, "proto %d allocation %lld: %s (%s)", k, n, dfx_code_name(c), st.msg);
      cr_expect_null(t);
      cr_expect_eq(live(), base, "proto %d allocation %lld leaked", k, n);
      failures++;
      cr_assert_lt(n, 20);
    }
    cr_expect_geq(failures, 1, "proto %d allocates", k);
  }
}

/* ---- encoding: every dtype round-trips ---- */

static bool tensor_eq(const dfx_tensor *a, const dfx_tensor *b) {
  if (a->dtype != b->dtype || !dfx__tensor_same_shape(a, b) || a->count != b->count) return false;
  if (a->dtype != DFX_STRING) return a->nbytes == b->nbytes && memcmp(a->data, b->data, a->nbytes) == 0;
  for (int64_t i = 0; i < a->count; i++) {
    size_t la, lb;
    const char *x = dfx_tensor_string(a, i, &la), *y = dfx_tensor_string(b, i, &lb);
    if (la != lb || memcmp(x, y, la) != 0) return false;
  }
  return true;
}

/* A tensor of dtype dt filled with a pattern every element of which
 * survives any form (bools 0/1, all bit patterns elsewhere). */
static dfx_tensor *patterned(dfx_dtype dt, int ndims, const int64_t *dims) {
  dfx_tensor *t = dfx__tensor_alloc(dt, ndims, dims, NULL);
  cr_assert_not_null(t);
  if (dt != DFX_STRING) {
    pattern(t->data, t->nbytes, dt);
    return t;
  }
  for (int64_t i = 0; i < t->count; i++) {
    char s[40];
    int n = i % 3 == 1 ? 0 : snprintf(s, sizeof s, "s%lld\n\x01", (long long)i * 7919);
    if (i % 5 == 4) s[1] = 0; /* a NUL inside */
    cr_assert_eq(dfx_tensor_set_string(t, i, s, (size_t)n), DFX_OK);
  }
  return t;
}

static bool one_form(const Tensorflow__TensorProto *p) {
  size_t typed = p->n_float_val + p->n_double_val + p->n_int_val + p->n_int64_val + p->n_bool_val +
                 p->n_string_val + p->n_half_val + p->n_scomplex_val + p->n_dcomplex_val + p->n_uint32_val +
                 p->n_uint64_val;
  return !(typed && p->tensor_content.len);
}

Test(tensor_proto, every_dtype_round_trips_through_the_encoder) {
  static const struct {
    int ndims;
    int64_t dims[3];
  } shp[] = {{0, {0}}, {1, {0}}, {2, {2, 3}}, {3, {4, 5, 3}}};
  for (size_t k = 0; k < N_SIZES + 1; k++) {
    dfx_dtype dt = k < N_SIZES ? sizes[k].dt : DFX_STRING;
    for (size_t s = 0; s < sizeof shp / sizeof shp[0]; s++) {
      char what[64];
      snprintf(what, sizeof what, "%s shape #%zu", dfx_dtype_name(dt), s);
      dfx_tensor *t = patterned(dt, shp[s].ndims, shp[s].dims);
      dfx_arena a = {0};
      Tensorflow__TensorProto *p = dfx__tensor_to_proto(&a, t);
      cr_assert_not_null(p, "%s", what);
      cr_expect_eq((int)p->dtype, (int)dt, "%s", what);
      cr_expect(one_form(p), "%s: typed values or tensor_content, not both", what);

      /* Straight back through the decoder. */
      dfx_tensor *back = decode_ok(p, what);
      cr_expect(tensor_eq(t, back), "%s: decoded equals the original", what);
      dfx__tensor_unref(back);

      /* Through the wire: pack, unpack, decode. */
      size_t len = tensorflow__tensor_proto__get_packed_size(p);
      uint8_t *buf = dfx__malloc(len ? len : 1);
      cr_assert_eq(tensorflow__tensor_proto__pack(p, buf), len);
      Tensorflow__TensorProto *u = tensorflow__tensor_proto__unpack(&dfx__pb_allocator, len, buf);
      cr_assert_not_null(u, "%s: the encoder's proto packs to valid bytes", what);
      back = decode_ok(u, what);
      cr_expect(tensor_eq(t, back), "%s: decoded from the wire equals the original", what);
      dfx__tensor_unref(back);
      tensorflow__tensor_proto__free_unpacked(u, &dfx__pb_allocator);
      dfx__free(buf);
      dfx__arena_free(&a);
      dfx__tensor_unref(t);
    }
  }
}

Test(tensor_proto, float_values_round_trip_bit_exactly) {
  /* NaN payloads, signed zero, infinities and subnormals survive. */
  const uint32_t f32[] = {0x7fc00001u, 0xffc12345u, 0x80000000u, 0x7f800000u, 0xff800000u, 0x00000001u};
  const uint64_t f64[] = {0x7ff8000000000001ull, 0x8000000000000000ull, 0x0000000000000001ull};
  dfx_tensor *a = dfx_tensor_new_copy(DFX_F32, (int64_t[]){6}, 1, f32, sizeof f32);
  dfx_tensor *b = dfx_tensor_new_copy(DFX_F64, (int64_t[]){3}, 1, f64, sizeof f64);
  dfx_tensor *ts[2] = {a, b};
  for (int k = 0; k < 2; k++) {
    dfx_arena ar = {0};
    Tensorflow__TensorProto *p = dfx__tensor_to_proto(&ar, ts[k]);
    cr_assert_not_null(p);
    size_t len = tensorflow__tensor_proto__get_packed_size(p);
    uint8_t *buf = dfx__malloc(len);
    tensorflow__tensor_proto__pack(p, buf);
    Tensorflow__TensorProto *u = tensorflow__tensor_proto__unpack(&dfx__pb_allocator, len, buf);
    cr_assert_not_null(u);
    dfx_tensor *back = decode_ok(u, "floats");
    cr_expect_eq(memcmp(back->data, ts[k]->data, ts[k]->nbytes), 0, "bits kept (%d)", k);
    dfx__tensor_unref(back);
    tensorflow__tensor_proto__free_unpacked(u, &dfx__pb_allocator);
    dfx__free(buf);
    dfx__arena_free(&ar);
    dfx__tensor_unref(ts[k]);
  }
}

Test(tensor_proto, shapes_round_trip_through_the_encoder) {
  static const struct {
    int rank;
    int64_t dims[DFX_MAX_DIMS];
  } cases[] = {
      {-1, {0}}, {0, {0}}, {1, {5}}, {3, {2, -1, 0}}, {DFX_MAX_DIMS, {1, 2, 3, 4, 5, 6, 7, INT64_C(1) << 40}},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    dfx_arena a = {0};
    Tensorflow__TensorShapeProto *sp = dfx__shape_to_proto(&a, cases[c].rank, cases[c].dims);
    cr_assert_not_null(sp);
    cr_expect_eq(sp->unknown_rank, cases[c].rank < 0, "case %zu", c);
    dfx_shape s;
    cr_assert_eq(dfx__shape_from_proto(sp, &s, NULL), DFX_OK);
    cr_expect_eq(s.rank, cases[c].rank, "case %zu", c);
    for (int i = 0; i < s.rank; i++) cr_expect_eq(s.dims[i], cases[c].dims[i], "case %zu dim %d", c, i);
    dfx__free(s.dims);
    dfx__arena_free(&a);
  }
}

Test(tensor_proto, encoders_return_null_when_memory_runs_out) {
  dfx_tensor *ts[3] = {patterned(DFX_STRING, 1, (int64_t[]){40}), patterned(DFX_F32, 1, (int64_t[]){3000}),
                       patterned(DFX_C64, 2, (int64_t[]){2, 2})};
  for (int k = 0; k < 3; k++) {
    for (long long n = 1;; n++) {
      long long base = live();
      dfx_arena a = {0};
      eu_alloc.fail_at = eu_alloc.n_allocs + n;
      Tensorflow__TensorProto *p = dfx__tensor_to_proto(&a, ts[k]);
      eu_alloc.fail_at = 0;
      if (p) {
        dfx_tensor *back = decode_ok(p, "after failures");
        cr_expect(tensor_eq(ts[k], back));
        dfx__tensor_unref(back);
        dfx__arena_free(&a);
        break;
      }
      dfx__arena_free(&a);
      cr_expect_eq(live(), base, "tensor %d allocation %lld leaked", k, n);
      cr_assert_lt(n, 50);
    }
    dfx__tensor_unref(ts[k]);
  }
  for (long long n = 1;; n++) {
    dfx_arena a = {0};
    eu_alloc.fail_at = eu_alloc.n_allocs + n;
    Tensorflow__TensorShapeProto *sp = dfx__shape_to_proto(&a, 3, (int64_t[]){1, 2, 3});
    eu_alloc.fail_at = 0;
    dfx__arena_free(&a);
    if (sp) break;
    cr_assert_lt(n, 20);
  }
}

/* ---- through import: what a Const's value may be ---- */

#define CONST_F32(shape, vals)                                                                        \
  "node { name: \"c\" op: \"Const\" attr { key: \"dtype\" value { type: DT_FLOAT } }"                  \
  " attr { key: \"value\" value { tensor { dtype: DT_FLOAT tensor_shape { " shape " } " vals " } } } }\n"

Test(tensor_proto, a_const_runs_with_its_last_value_repeated) {
  dfx_graph *g = eu_graph(CONST_F32("dim { size: 2 } dim { size: 2 }", "float_val: 1.5"));
  dfx_tensor *out[1] = {NULL};
  char msg[256];
  cr_assert_eq(eu_run(g, 1, "c:0", out, NULL, NULL, msg, sizeof msg), DFX_OK, "%s", msg);
  cr_assert_eq(dfx_tensor_count(out[0]), 4);
  for (int i = 0; i < 4; i++) cr_expect_eq(((float *)dfx_tensor_data(out[0]))[i], 1.5f, "frozen graphs rely on this");
  dfx_tensor_free(out[0]);
  dfx_graph_free(g);
}

Test(tensor_proto, a_const_with_an_unknown_dim_does_not_import) {
  char msg[256];
  cr_expect_neq(eu_import(CONST_F32("dim { size: -1 }", "float_val: 1"), msg, sizeof msg), DFX_OK);
  cr_expect(strstr(msg, "unknown dimension"), "%s", msg);
  cr_expect_neq(eu_import(CONST_F32("unknown_rank: true", "float_val: 1"), msg, sizeof msg), DFX_OK);
  cr_expect(strstr(msg, "unknown rank"), "%s", msg);
  cr_expect_neq(eu_import(CONST_F32("dim { size: 2 }", "tensor_content: \"\\001\\002\""), msg, sizeof msg),
                DFX_OK);
  cr_expect(strstr(msg, "Input size was 2 and expected 8"), "%s", msg);
}
