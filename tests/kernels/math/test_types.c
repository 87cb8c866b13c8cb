/* test_types.c - the kernel rows' `types` strings against TensorFlow's
 * OpDefs: every declared dtype is one TF allows, and a dtype TF allows but
 * no row declares is refused when the node is planned, with a message
 * naming the attr and the dtype. (The per-file tests run every declared
 * dtype against a reference.) */
#include "dtype.h"
#include "mt.h"
#include "op_registry.h"

/* Every op with a kernel in kernels/math. */
static const char *const OPS[] = {
    "Abs", "AccumulateNV2", "Acos", "Acosh", "Add", "AddN", "AddV2", "Angle", "Asin", "Asinh", "Atan", "Atan2",
    "Atanh", "Betainc", "Bitcast", "BitwiseAnd", "BitwiseOr", "BitwiseXor", "Cast", "Ceil", "CheckNumerics",
    "ClipByValue", "Complex", "ComplexAbs", "Conj", "Cos", "Cosh", "Digamma", "Div", "DivNoNan", "Elu", "Equal",
    "Erf", "Erfc", "Exp", "Expm1", "Floor", "FloorDiv", "FloorMod", "Greater", "GreaterEqual", "Igamma", "Igammac",
    "Imag", "Inv", "Invert", "IsFinite", "IsInf", "IsNan", "LeakyRelu", "LeftShift", "Less", "LessEqual", "Lgamma",
    "Log", "Log1p", "LogicalAnd", "LogicalNot", "LogicalOr", "Maximum", "Minimum", "Mod", "Mul", "Neg", "NotEqual",
    "OnesLike", "Polygamma", "Pow", "Real", "RealDiv", "Reciprocal", "Relu", "Relu6", "RightShift", "Rint", "Round",
    "Rsqrt", "Select", "SelectV2", "Selu", "Sigmoid", "Sign", "Sin", "Sinh", "Softplus", "Softsign", "Sqrt",
    "Square", "SquaredDifference", "Sub", "Tan", "Tanh", "TruncateDiv", "TruncateMod", "Xdivy", "Xlogy",
    "ZerosLike", "Zeta", "_HostCast"};

/* Every valid dtype TF's attr allows (0 = any). */
static uint64_t tf_allowed(const dfx_op_attr *a) {
  uint64_t m = 0;
  for (int t = 1; t < DFX_DTYPE_END_; t++)
    if (dfx__dtype_valid(t) && (!a->allowed || a->allowed >> t & 1)) m |= (uint64_t)1 << t;
  return m;
}

/* Whether dfx__registry_kernel_for refuses op with the given type attrs,
 * naming want_attr=want_type; the message goes to msg. */
static bool refused(const char *op, int n, const char *const *attrs, const dfx_dtype *types, const char *want_attr,
                    dfx_dtype want_type, char *msg, size_t len) {
  dfx_node *nd = kh_node_new(op);
  for (int i = 0; i < n; i++) kh_attr_type(nd, attrs[i], types[i]);
  dfx_status st;
  dfx__status_clear(&st);
  const dfx_kernel_def *k = dfx__registry_kernel_for(mt_registry(), nd, &st);
  kh_node_free(nd);
  snprintf(msg, len, "%s", st.msg);
  char needle[64];
  snprintf(needle, sizeof needle, "%s=%s", want_attr, dfx_dtype_name(want_type));
  return !k && st.code == DFX_EUNIMPL && strstr(st.msg, needle);
}

Test(types, declared_within_tf_and_undeclared_refused) {
  int n_refusals = 0;
  for (size_t i = 0; i < sizeof OPS / sizeof OPS[0]; i++) {
    const dfx_op_def *def = dfx__op_get(OPS[i]);
    cr_assert(def, "%s", OPS[i]);
    cr_assert(dfx__registry_has_kernel(mt_registry(), OPS[i]), "%s has no kernel", OPS[i]);
    /* The op's type attrs, each set to a declared dtype to begin with. */
    const char *attrs[4];
    const dfx_op_attr *tf[4];
    dfx_dtype ok[4];
    uint64_t declared[4];
    int n = 0;
    for (int a = 0; a < def->n_attrs; a++) {
      if (def->attrs[a].kind != DFX_ATTR_TYPE) continue;
      cr_assert_lt(n, 4);
      attrs[n] = def->attrs[a].name;
      tf[n] = &def->attrs[a];
      declared[n] = dfx__registry_kernel_types(mt_registry(), OPS[i], attrs[n]);
      cr_assert(declared[n] != ~(uint64_t)0, "%s: %s not constrained by some row", OPS[i], attrs[n]);
      uint64_t extra = declared[n] & ~tf_allowed(tf[n]);
      cr_expect_eq(extra, 0, "%s declares %s dtypes TF does not allow (mask %llx)", OPS[i], attrs[n],
                   (unsigned long long)extra);
      ok[n] = DFX_INVALID;
      MT_FOR_DTYPES(t, declared[n]) if (!ok[n]) ok[n] = t;
      n++;
    }
    /* One attr at a time gets a dtype TF allows and no row declares. */
    for (int k = 0; k < n; k++) {
      const uint64_t missing = tf_allowed(tf[k]) & ~declared[k];
      if (!missing) continue;
      dfx_dtype bad = DFX_INVALID, types[4];
      MT_FOR_DTYPES(t, missing) if (!bad) bad = t;
      memcpy(types, ok, sizeof types);
      types[k] = bad;
      char msg[512];
      cr_expect(refused(OPS[i], n, attrs, types, attrs[k], bad, msg, sizeof msg), "%s %s=%s: \"%s\"", OPS[i],
                attrs[k], dfx_dtype_name(bad), msg);
      n_refusals++;
    }
  }
  cr_expect_geq(n_refusals, 20, "only %d ops have a refused dtype", n_refusals);
}

/* Rows of one op that pair dtypes: a pairing TF has no kernel for is
 * refused even though each dtype alone is declared by some row. */
Test(types, unpaired_dtypes_refused) {
  static const struct {
    const char *op, *a1, *a2;
    dfx_dtype t1, t2;
  } cases[] = {
      {"ComplexAbs", "T", "Tout", DFX_C64, DFX_F64},
      {"Real", "T", "Tout", DFX_C128, DFX_F32},
      {"Complex", "T", "Tout", DFX_F32, DFX_C128},
      {"Cast", "SrcT", "DstT", DFX_STRING, DFX_C64},
      {"Cast", "SrcT", "DstT", DFX_C64, DFX_STRING},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const char *attrs[2] = {cases[i].a1, cases[i].a2};
    dfx_dtype types[2] = {cases[i].t1, cases[i].t2};
    char msg[512];
    bool first = refused(cases[i].op, 2, attrs, types, cases[i].a1, cases[i].t1, msg, sizeof msg);
    bool second = refused(cases[i].op, 2, attrs, types, cases[i].a2, cases[i].t2, msg, sizeof msg);
    cr_expect(first || second, "%s %s=%s %s=%s: \"%s\"", cases[i].op, cases[i].a1, dfx_dtype_name(cases[i].t1),
              cases[i].a2, dfx_dtype_name(cases[i].t2), msg);
  }
}
