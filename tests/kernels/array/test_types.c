/* test_types.c - the dtypes the array and base kernel rows declare: every
 * declared dtype is one TensorFlow allows and runs against a naive reference,
 * and every TF-allowed dtype a row leaves out is refused at kernel lookup
 * with a message naming the attr and the dtype. Copy-op sweeps over T live
 * with each op's tests (test_pack.c, test_slice.c, ...), which take their
 * dtype lists from the registry too (adtypes). */
#include "atest.h"

/* ---- declared dtypes against TensorFlow's, and refusals ---- */

/* Every type attr of every op with a kernel row in kernels/array/ and base.c. */
static const struct {
  const char *op, *attr;
} type_attrs[] = {
    {"Const", "dtype"}, {"Placeholder", "dtype"}, {"PlaceholderV2", "dtype"}, {"PlaceholderWithDefault", "dtype"},
    {"Identity", "T"}, {"IdentityN", "T"}, {"StopGradient", "T"}, {"PreventGradient", "T"}, {"Snapshot", "T"},
    {"_Retval", "T"}, {"_Arg", "T"}, {"Reshape", "T"}, {"Reshape", "Tshape"}, {"ExpandDims", "T"},
    {"ExpandDims", "Tdim"}, {"Squeeze", "T"}, {"Shape", "T"}, {"Shape", "out_type"}, {"ShapeN", "T"},
    {"ShapeN", "out_type"}, {"Size", "T"}, {"Size", "out_type"}, {"Rank", "T"}, {"EnsureShape", "T"},
    {"BroadcastArgs", "T"}, {"BroadcastGradientArgs", "T"}, {"Fill", "T"}, {"Fill", "index_type"},
    {"Empty", "dtype"}, {"DeepCopy", "T"}, {"Pack", "T"}, {"Unpack", "T"}, {"ConcatV2", "T"}, {"ConcatV2", "Tidx"},
    {"Concat", "T"}, {"ParallelConcat", "T"}, {"Split", "T"}, {"SplitV", "T"}, {"SplitV", "Tlen"}, {"Range", "Tidx"},
    {"LinSpace", "T"}, {"LinSpace", "Tidx"}, {"StridedSlice", "T"}, {"StridedSlice", "Index"}, {"Slice", "T"},
    {"Slice", "Index"}, {"Transpose", "T"}, {"Transpose", "Tperm"}, {"ReverseV2", "T"}, {"ReverseV2", "Tidx"},
    {"Tile", "T"}, {"Tile", "Tmultiples"}, {"BroadcastTo", "T"}, {"BroadcastTo", "Tidx"}, {"Pad", "T"},
    {"Pad", "Tpaddings"}, {"PadV2", "T"}, {"PadV2", "Tpaddings"}, {"MirrorPad", "T"}, {"MirrorPad", "Tpaddings"},
    {"Roll", "T"}, {"Roll", "Tshift"}, {"Roll", "Taxis"}, {"ReverseSequence", "T"}, {"ReverseSequence", "Tlen"},
    {"Diag", "T"}, {"DiagPart", "T"}, {"MatrixDiag", "T"}, {"MatrixDiagV2", "T"}, {"MatrixDiagV3", "T"},
    {"MatrixDiagPart", "T"}, {"MatrixDiagPartV2", "T"}, {"MatrixDiagPartV3", "T"}, {"MatrixSetDiag", "T"},
    {"MatrixSetDiagV2", "T"}, {"MatrixSetDiagV3", "T"}, {"MatrixBandPart", "T"}, {"MatrixBandPart", "Tindex"},
    {"Where", "T"}, {"OneHot", "T"}, {"OneHot", "TI"},
};
#define N_TYPE_ATTRS ((int)(sizeof type_attrs / sizeof type_attrs[0]))

static bool listed(const char *op, const char *attr) {
  for (int i = 0; i < N_TYPE_ATTRS; i++)
    if (strcmp(type_attrs[i].op, op) == 0 && strcmp(type_attrs[i].attr, attr) == 0) return true;
  return false;
}

ATEST(types, declared_within_tf_and_the_rest_refused) {
  const dfx_registry *reg = dfx__lib_registry(NULL);
  int refused = 0;
  for (int i = 0; i < N_TYPE_ATTRS; i++) {
    const char *op = type_attrs[i].op, *attr = type_attrs[i].attr;
    const dfx_op_def *def = dfx__op_get(op);
    cr_assert(def, "%s has no signature", op);
    /* The table must name every type attr of the op. */
    for (int k = 0; k < def->n_attrs; k++) {
      const dfx_op_attr *a = &def->attrs[k];
      bool is_type = a->kind == DFX_ATTR_TYPE || (a->kind == DFX_ATTR_LIST && a->elem == DFX_ATTR_TYPE);
      cr_assert(!is_type || listed(op, a->name), "%s: type attr %s is not in the table", op, a->name);
    }
    const dfx_op_attr *a = dfx__op_def_attr(def, attr);
    cr_assert(a, "%s has no attr %s", op, attr);
    uint64_t allowed = 0;
    for (int t = 1; t < DFX_DTYPE_END_; t++)
      if (dfx__dtype_valid(t) && (!a->allowed || (a->allowed >> t & 1))) allowed |= (uint64_t)1 << t;
    uint64_t declared = dfx__registry_kernel_types(reg, op, attr);
    cr_assert_neq(declared, ~(uint64_t)0, "%s: some row leaves %s unconstrained", op, attr);
    cr_assert_eq(declared & ~allowed, 0, "%s declares %s dtypes TensorFlow does not allow (mask %llx)", op, attr,
                 (unsigned long long)(declared & ~allowed));
    for (int t = 1; t < DFX_DTYPE_END_; t++) {
      if (!(allowed >> t & 1) || (declared >> t & 1)) continue;
      dfx_node *n = kh_node_new(op);
      dfx_dtype dt = (dfx_dtype)t;
      if (a->kind == DFX_ATTR_LIST) kh_attr_types(n, attr, &dt, 1);
      else kh_attr_type(n, attr, dt);
      dfx_status st;
      dfx__status_clear(&st);
      cr_assert_null(dfx__registry_kernel_for(reg, n, &st), "%s accepted %s=%s", op, attr, dfx_dtype_name(dt));
      char want[64];
      snprintf(want, sizeof want, "%s=%s", attr, dfx_dtype_name(dt));
      cr_assert_eq(st.code, DFX_EUNIMPL);
      cr_assert(strstr(st.msg, want), "%s: message '%s' lacks '%s'", op, st.msg, want);
      kh_node_free(n);
      refused++;
    }
  }
  cr_assert_gt(refused, 50, "only %d undeclared dtypes were refused", refused);
}

/* ---- ops that only forward, describe or feed a tensor: every dtype ---- */

static const int64_t xd[2] = {2, 3};

static void check_seq(const dfx_tensor *y, dfx_dtype dt, int nd, const int64_t *dims) {
  acheck(y, dt, nd, dims, NULL);
  for (int64_t e = 0; e < y->count; e++) cr_assert_eq(aget(y, e), aval(dt, e), "%s element %lld", dfx_dtype_name(dt), (long long)e);
}

ATEST(types, forwards_every_declared_dtype) {
  static const struct {
    const char *op, *attr;
    int nin;
  } fwd[] = {{"Identity", "T", 1},      {"StopGradient", "T", 1}, {"PreventGradient", "T", 1},
             {"Snapshot", "T", 1},      {"EnsureShape", "T", 1},  {"PlaceholderWithDefault", "dtype", 1},
             {"IdentityN", "T", 2},     {"_Retval", "T", 1}};
  for (size_t f = 0; f < sizeof fwd / sizeof fwd[0]; f++) {
    dfx_dtype dts[DFX_DTYPE_END_];
    int ndt = adtypes(fwd[f].op, fwd[f].attr, dts);
    cr_assert_eq(ndt, 23, "%s should forward every dtype", fwd[f].op);
    for (int di = 0; di < ndt; di++) {
      dfx_dtype dt = dts[di];
      dfx_node *n = kh_node_new(fwd[f].op);
      if (fwd[f].nin == 2) kh_attr_types(n, "T", (dfx_dtype[]){dt, dt}, 2);
      else kh_attr_type(n, fwd[f].attr, dt);
      kh_attr_shape(n, "shape", 2, (int64_t[]){2, -1});
      kh_attr_int(n, "index", 0);
      dfx_tensor *x = aseq(dt, 2, xd), *in[2] = {x, x}, *out[2];
      int nout = arun(n, in, fwd[f].nin, out);
      cr_assert_eq(nout, strcmp(fwd[f].op, "_Retval") ? fwd[f].nin : 0);
      for (int k = 0; k < nout; k++) check_seq(out[k], dt, 2, xd);
      afree(out, nout);
      dfx__tensor_unref(x);
      kh_node_free(n);
    }
  }
}

ATEST(types, const_and_placeholders_every_declared_dtype) {
  dfx_dtype dts[DFX_DTYPE_END_];
  int ndt = adtypes("Const", "dtype", dts);
  for (int di = 0; di < ndt; di++) {
    dfx_node *n = kh_node_new("Const");
    kh_attr_type(n, "dtype", dts[di]);
    kh_attr_tensor(n, "value", aseq(dts[di], 2, xd));
    /* kh_run exports the output, so it outlives the immortal value fini frees. */
    dfx_tensor *out[1];
    cr_assert_eq(arun(n, NULL, 0, out), 1);
    check_seq(out[0], dts[di], 2, xd);
    dfx__tensor_unref(out[0]);
    kh_node_free(n);
  }
  dfx_node *n = kh_node_new("Const");
  kh_attr_type(n, "dtype", DFX_I32);
  kh_attr_tensor(n, "value", aseq(DFX_F32, 1, xd));
  aerr(n, NULL, 0, "Const 'value' is float32 but attr dtype is int32");
  kh_node_free(n);
  /* A placeholder that runs was not fed: the message names its dtype. */
  static const struct {
    const char *op, *attr;
  } ph[] = {{"Placeholder", "dtype"}, {"PlaceholderV2", "dtype"}, {"_Arg", "T"}};
  for (size_t p = 0; p < sizeof ph / sizeof ph[0]; p++) {
    ndt = adtypes(ph[p].op, ph[p].attr, dts);
    cr_assert_eq(ndt, 23);
    for (int di = 0; di < ndt; di++) {
      n = kh_node_new(ph[p].op);
      kh_attr_type(n, ph[p].attr, dts[di]);
      kh_attr_shape(n, "shape", -1, NULL);
      kh_attr_int(n, "index", 0);
      char want[96];
      snprintf(want, sizeof want, "You must feed a value for placeholder tensor 'kh_node' with dtype %s",
               dfx_dtype_name(dts[di]));
      aerr(n, NULL, 0, want);
      kh_node_free(n);
    }
  }
}

ATEST(types, shape_ops_every_declared_dtype) {
  const int64_t d3[3] = {2, 1, 3};
  dfx_dtype dts[DFX_DTYPE_END_], its[DFX_DTYPE_END_];
  static const char *const ops[] = {"Shape", "Size", "Rank", "ShapeN", "ExpandDims", "Squeeze"};
  for (int o = 0; o < 6; o++) {
    int ndt = adtypes(ops[o], "T", dts);
    cr_assert_eq(ndt, 23, "%s should take every dtype", ops[o]);
    for (int di = 0; di < ndt; di++) {
      dfx_dtype dt = dts[di];
      dfx_tensor *x = aseq(dt, 3, d3), *out[2];
      dfx_node *n = kh_node_new(ops[o]);
      kh_attr_type(n, "T", dt);
      if (o == 0 || o == 1 || o == 3) { /* out_type swept too */
        int nit = adtypes(ops[o], "out_type", its);
        for (int ii = 0; ii < nit; ii++) {
          kh_attr_type(n, "out_type", its[ii]);
          kh_attr_int(n, "N", 2);
          dfx_tensor *in[2] = {x, x};
          int nout = arun(n, in, o == 3 ? 2 : 1, out);
          for (int k = 0; k < nout; k++) {
            if (o == 1) acheck(out[k], its[ii], 0, NULL, (double[]){6});
            else acheck(out[k], its[ii], 1, (int64_t[]){3}, (double[]){2, 1, 3});
          }
          afree(out, nout);
        }
      } else if (o == 2) {
        arun(n, &x, 1, out);
        acheck(out[0], DFX_I32, 0, NULL, (double[]){3});
        afree(out, 1);
      } else if (o == 4) {
        int nit = adtypes("ExpandDims", "Tdim", its);
        for (int ii = 0; ii < nit; ii++) {
          kh_attr_type(n, "Tdim", its[ii]);
          dfx_tensor *in[2] = {x, aint(its[ii], -1, (int64_t[]){-1})};
          arun(n, in, 2, out);
          check_seq(out[0], dt, 4, (int64_t[]){2, 1, 3, 1});
          afree(out, 1);
          dfx__tensor_unref(in[1]);
        }
      } else {
        arun(n, &x, 1, out);
        check_seq(out[0], dt, 2, xd);
        afree(out, 1);
      }
      dfx__tensor_unref(x);
      kh_node_free(n);
    }
  }
}

/* ---- copy ops without a dtype sweep of their own, against naive loops ---- */

ATEST(types, empty_deep_copy_parallel_concat) {
  dfx_dtype dts[DFX_DTYPE_END_];
  int ndt = adtypes("Empty", "dtype", dts);
  for (int di = 0; di < ndt; di++) {
    dfx_node *n = kh_node_new("Empty");
    kh_attr_type(n, "dtype", dts[di]);
    dfx_tensor *s = ai32v(2, (int32_t[]){2, 3}), *out[1];
    arun(n, &s, 1, out);
    acheck(out[0], dts[di], 2, xd, (double[]){0, 0, 0, 0, 0, 0});
    afree(out, 1);
    dfx__tensor_unref(s);
    kh_node_free(n);
  }
  ndt = adtypes("DeepCopy", "T", dts);
  for (int di = 0; di < ndt; di++) {
    dfx_node *n = kh_node_new("DeepCopy");
    kh_attr_type(n, "T", dts[di]);
    dfx_tensor *x = aseq(dts[di], 2, xd), *out[1];
    arun(n, &x, 1, out);
    check_seq(out[0], dts[di], 2, xd);
    cr_assert_neq(out[0]->data, x->data);
    afree(out, 1);
    dfx__tensor_unref(x);
    kh_node_free(n);
  }
  ndt = adtypes("ParallelConcat", "T", dts);
  for (int di = 0; di < ndt; di++) {
    dfx_dtype dt = dts[di];
    dfx_node *n = kh_node_new("ParallelConcat");
    kh_attr_type(n, "T", dt);
    kh_attr_int(n, "N", 2);
    kh_attr_shape(n, "shape", 2, xd);
    dfx_tensor *in[2] = {dfx__tensor_zeros(dt, 2, (int64_t[]){1, 3}, NULL), dfx__tensor_zeros(dt, 2, (int64_t[]){1, 3}, NULL)},
               *out[1];
    for (int e = 0; e < 6; e++) aset(in[e / 3], e % 3, aval(dt, e));
    arun(n, in, 2, out);
    check_seq(out[0], dt, 2, xd);
    afree(out, 1);
    afree(in, 2);
    kh_node_free(n);
  }
}

/* MirrorPad [2,3] by [[1,1],[2,2]], Roll by (1, -2), ReverseSequence with
 * lengths (3, 1) on [2,4]: each output element's source, computed naively. */
static int64_t mirror(int64_t i, int64_t before, int64_t d, bool reflect) {
  int64_t j = i - before;
  if (j < 0) return reflect ? -j : -j - 1;
  if (j >= d) return reflect ? 2 * d - j - 2 : 2 * d - j - 1;
  return j;
}

ATEST(types, mirror_pad_roll_reverse_sequence) {
  dfx_dtype dts[DFX_DTYPE_END_], its[DFX_DTYPE_END_];
  int ndt = adtypes("MirrorPad", "T", dts), nit = adtypes("MirrorPad", "Tpaddings", its);
  for (int di = 0; di < ndt; di++)
    for (int ii = 0; ii < nit; ii++)
      for (int reflect = 0; reflect < 2; reflect++) {
        dfx_dtype dt = dts[di];
        dfx_node *n = kh_node_new("MirrorPad");
        kh_attr_type(n, "T", dt);
        kh_attr_type(n, "Tpaddings", its[ii]);
        kh_attr_str(n, "mode", reflect ? "REFLECT" : "SYMMETRIC");
        dfx_tensor *in[2] = {aseq(dt, 2, xd), aint(its[ii], 4, (int64_t[]){1, 1, 2, 2})}, *out[1];
        in[1]->ndims = 2, in[1]->dims[0] = 2, in[1]->dims[1] = 2;
        arun(n, in, 2, out);
        acheck(out[0], dt, 2, (int64_t[]){4, 7}, NULL);
        for (int64_t e = 0; e < 28; e++)
          cr_assert_eq(aget(out[0], e), aval(dt, mirror(e / 7, 1, 2, reflect) * 3 + mirror(e % 7, 2, 3, reflect)));
        afree(out, 1);
        afree(in, 2);
        kh_node_free(n);
      }
  dfx_dtype sts[DFX_DTYPE_END_];
  ndt = adtypes("Roll", "T", dts);
  int nst = adtypes("Roll", "Tshift", sts);
  nit = adtypes("Roll", "Taxis", its);
  for (int di = 0; di < ndt; di++)
    for (int si = 0; si < nst; si++)
      for (int ii = 0; ii < nit; ii++) {
        dfx_dtype dt = dts[di];
        dfx_node *n = kh_node_new("Roll");
        kh_attr_type(n, "T", dt);
        kh_attr_type(n, "Tshift", sts[si]);
        kh_attr_type(n, "Taxis", its[ii]);
        dfx_tensor *in[3] = {aseq(dt, 2, xd), aint(sts[si], 2, (int64_t[]){1, -2}), aint(its[ii], 2, (int64_t[]){0, 1})},
                   *out[1];
        arun(n, in, 3, out);
        acheck(out[0], dt, 2, xd, NULL);
        for (int64_t e = 0; e < 6; e++) {
          int64_t i = e / 3, j = e % 3, si0 = ((i - 1) % 2 + 2) % 2, sj = ((j + 2) % 3 + 3) % 3;
          cr_assert_eq(aget(out[0], e), aval(dt, si0 * 3 + sj));
        }
        afree(out, 1);
        afree(in, 3);
        kh_node_free(n);
      }
  ndt = adtypes("ReverseSequence", "T", dts);
  nit = adtypes("ReverseSequence", "Tlen", its);
  for (int di = 0; di < ndt; di++)
    for (int ii = 0; ii < nit; ii++) {
      dfx_dtype dt = dts[di];
      const int64_t d[2] = {2, 4}, len[2] = {3, 1};
      dfx_node *n = kh_node_new("ReverseSequence");
      kh_attr_type(n, "T", dt);
      kh_attr_type(n, "Tlen", its[ii]);
      kh_attr_int(n, "seq_dim", 1);
      dfx_tensor *in[2] = {aseq(dt, 2, d), aint(its[ii], 2, len)}, *out[1];
      arun(n, in, 2, out);
      acheck(out[0], dt, 2, d, NULL);
      for (int64_t e = 0; e < 8; e++) {
        int64_t b = e / 4, j = e % 4, src = j < len[b] ? len[b] - 1 - j : j;
        cr_assert_eq(aget(out[0], e), aval(dt, b * 4 + src));
      }
      afree(out, 1);
      afree(in, 2);
      kh_node_free(n);
    }
}

ATEST(types, diag_family) {
  dfx_dtype dts[DFX_DTYPE_END_];
  int ndt = adtypes("Diag", "T", dts);
  dfx_dtype pts[DFX_DTYPE_END_];
  cr_assert_eq(adtypes("DiagPart", "T", pts), ndt);
  for (int di = 0; di < ndt; di++) {
    dfx_dtype dt = dts[di];
    dfx_node *n = kh_node_new("Diag");
    kh_attr_type(n, "T", dt);
    dfx_tensor *x = aseq(dt, 1, (int64_t[]){3}), *out[1], *back[1];
    arun(n, &x, 1, out);
    acheck(out[0], dt, 2, (int64_t[]){3, 3}, NULL);
    for (int64_t e = 0; e < 9; e++) cr_assert_eq(aget(out[0], e), e / 3 == e % 3 ? aval(dt, e / 3) : 0);
    kh_node_free(n);
    n = kh_node_new("DiagPart");
    kh_attr_type(n, "T", dt);
    arun(n, out, 1, back);
    check_seq(back[0], dt, 1, (int64_t[]){3});
    afree(back, 1);
    afree(out, 1);
    dfx__tensor_unref(x);
    kh_node_free(n);
  }
  /* Batched ops on [2,3,3] / diagonal [2,3], k = 0 (v1) or 1 (v2, v3). */
  static const char *const ops[] = {"MatrixDiag", "MatrixDiagV2", "MatrixDiagV3", "MatrixDiagPart", "MatrixDiagPartV2",
                                    "MatrixDiagPartV3", "MatrixSetDiag", "MatrixSetDiagV2", "MatrixSetDiagV3"};
  for (int o = 0; o < 9; o++) {
    ndt = adtypes(ops[o], "T", dts);
    int kind = o / 3, version = o % 3 + 1;
    int64_t k = version == 1 ? 0 : 1;
    for (int di = 0; di < ndt; di++) {
      dfx_dtype dt = dts[di];
      double padv = dt == DFX_BOOL ? 1 : 77;
      dfx_node *n = kh_node_new(ops[o]);
      kh_attr_type(n, "T", dt);
      kh_attr_str(n, "align", "LEFT_LEFT");
      dfx_tensor *in[5] = {NULL}, *out[1];
      int nin = 1;
      int64_t rows = kind == 0 ? 3 + k : 3, cols = kind == 0 ? 3 + k : 4, dl = 3;
      if (kind == 0) {
        in[0] = aseq(dt, 2, (int64_t[]){2, dl});
        if (version > 1) {
          in[1] = kh_scalar_i32((int32_t)k), in[2] = kh_scalar_i32(-1), in[3] = kh_scalar_i32(-1);
          in[4] = avals(dt, 0, NULL, &padv);
          nin = 5;
        }
      } else {
        if (version == 1) cols = 3;
        in[0] = aseq(dt, 3, (int64_t[]){2, rows, cols});
        if (kind == 2) {
          in[1] = dfx__tensor_zeros(dt, 2, (int64_t[]){2, dl}, NULL);
          for (int e = 0; e < 6; e++) aset(in[1], e, aval(dt, 50 + e));
          nin = 2;
        }
        if (version > 1) {
          in[nin++] = kh_scalar_i32((int32_t)k);
          if (kind == 1) in[nin++] = avals(dt, 0, NULL, &padv);
        }
      }
      arun(n, in, nin, out);
      if (kind == 1) {
        acheck(out[0], dt, 2, (int64_t[]){2, dl}, NULL);
        for (int64_t e = 0; e < 6; e++) {
          int64_t b = e / 3, i = e % 3;
          cr_assert_eq(aget(out[0], e), aval(dt, b * rows * cols + i * cols + i + k), "%s", ops[o]);
        }
      } else {
        acheck(out[0], dt, 3, (int64_t[]){2, rows, cols}, NULL);
        for (int64_t e = 0; e < out[0]->count; e++) {
          int64_t b = e / (rows * cols), i = e % (rows * cols) / cols, j = e % cols;
          bool on = j - i == k && i < dl;
          double want = kind == 0 ? (on ? aval(dt, b * dl + i) : version > 1 ? padv : 0)
                                  : (on ? aval(dt, 50 + b * dl + i) : aval(dt, e));
          cr_assert_eq(aget(out[0], e), want, "%s %s element %lld", ops[o], dfx_dtype_name(dt), (long long)e);
        }
      }
      afree(out, 1);
      afree(in, nin);
      kh_node_free(n);
    }
  }
  /* MatrixBandPart: keep 0 <= j - i <= 1 of a [2,3,3] batch. */
  dfx_dtype its[DFX_DTYPE_END_];
  ndt = adtypes("MatrixBandPart", "T", dts);
  int nit = adtypes("MatrixBandPart", "Tindex", its);
  for (int di = 0; di < ndt; di++)
    for (int ii = 0; ii < nit; ii++) {
      dfx_dtype dt = dts[di];
      dfx_node *n = kh_node_new("MatrixBandPart");
      kh_attr_type(n, "T", dt);
      kh_attr_type(n, "Tindex", its[ii]);
      dfx_tensor *in[3] = {aseq(dt, 3, (int64_t[]){2, 3, 3}), aint(its[ii], -1, (int64_t[]){0}),
                           aint(its[ii], -1, (int64_t[]){1})},
                 *out[1];
      arun(n, in, 3, out);
      for (int64_t e = 0; e < 18; e++) {
        int64_t i = e % 9 / 3, j = e % 3;
        cr_assert_eq(aget(out[0], e), j - i >= 0 && j - i <= 1 ? aval(dt, e) : 0);
      }
      afree(out, 1);
      afree(in, 3);
      kh_node_free(n);
    }
}

ATEST(types, where_and_one_hot) {
  dfx_dtype dts[DFX_DTYPE_END_], its[DFX_DTYPE_END_];
  int ndt = adtypes("Where", "T", dts);
  for (int di = 0; di < ndt; di++) {
    dfx_dtype dt = dts[di];
    dfx_node *n = kh_node_new("Where");
    kh_attr_type(n, "T", dt);
    dfx_tensor *x = aseq(dt, 2, xd), *out[1];
    arun(n, &x, 1, out);
    int64_t want[12], nw = 0;
    for (int64_t e = 0; e < 6; e++)
      if (aval(dt, e) != 0) want[2 * nw] = e / 3, want[2 * nw + 1] = e % 3, nw++;
    acheck(out[0], DFX_I64, 2, (int64_t[]){nw, 2}, NULL);
    for (int64_t e = 0; e < 2 * nw; e++) cr_assert_eq(((int64_t *)out[0]->data)[e], want[e]);
    afree(out, 1);
    dfx__tensor_unref(x);
    kh_node_free(n);
  }
  ndt = adtypes("OneHot", "T", dts);
  int nit = adtypes("OneHot", "TI", its);
  for (int di = 0; di < ndt; di++)
    for (int ii = 0; ii < nit; ii++) {
      dfx_dtype dt = dts[di];
      bool u = its[ii] == DFX_U8;
      const int64_t ix[3] = {0, 2, u ? 3 : -1};
      double onv = dt == DFX_BOOL ? 1 : 5, offv = dt == DFX_BOOL ? 0 : 7;
      dfx_node *n = kh_node_new("OneHot");
      kh_attr_type(n, "T", dt);
      kh_attr_type(n, "TI", its[ii]);
      dfx_tensor *in[4] = {aint(its[ii], 3, ix), kh_scalar_i32(3), avals(dt, 0, NULL, &onv), avals(dt, 0, NULL, &offv)},
                 *out[1];
      arun(n, in, 4, out);
      acheck(out[0], dt, 2, (int64_t[]){3, 3}, NULL);
      for (int64_t e = 0; e < 9; e++) cr_assert_eq(aget(out[0], e), ix[e / 3] == e % 3 ? onv : offv);
      afree(out, 1);
      afree(in, 4);
      kh_node_free(n);
    }
}

ATEST(types, range_linspace_bcast_args) {
  dfx_dtype dts[DFX_DTYPE_END_], its[DFX_DTYPE_END_];
  int ndt = adtypes("Range", "Tidx", dts);
  for (int di = 0; di < ndt; di++) {
    dfx_dtype dt = dts[di];
    bool fl = dfx__dtype_is_float(dt), sg = fl || dfx__dtype_is_signed(dt);
    /* (start, limit, delta); negative deltas only where the dtype has them. */
    const double cases[3][3] = {{1, 10, 3}, {10, 1, -3}, {0, 2, 0.5}};
    for (int c = 0; c < 3; c++) {
      if ((c == 1 && !sg) || (c == 2 && !fl)) continue;
      dfx_node *n = kh_node_new("Range");
      kh_attr_type(n, "Tidx", dt);
      dfx_tensor *in[3], *out[1];
      for (int k = 0; k < 3; k++) in[k] = avals(dt, 0, NULL, &cases[c][k]);
      arun(n, in, 3, out);
      double want[8];
      int64_t m = 0;
      for (double v = cases[c][0]; cases[c][2] > 0 ? v < cases[c][1] : v > cases[c][1]; v += cases[c][2]) want[m++] = v;
      acheck(out[0], dt, 1, &m, want);
      afree(out, 1);
      afree(in, 3);
      kh_node_free(n);
    }
  }
  ndt = adtypes("LinSpace", "T", dts);
  int nit = adtypes("LinSpace", "Tidx", its);
  for (int di = 0; di < ndt; di++)
    for (int ii = 0; ii < nit; ii++) {
      dfx_node *n = kh_node_new("LinSpace");
      kh_attr_type(n, "T", dts[di]);
      kh_attr_type(n, "Tidx", its[ii]);
      dfx_tensor *in[3] = {avals(dts[di], 0, NULL, (double[]){-1}), avals(dts[di], 0, NULL, (double[]){3}),
                           aint(its[ii], -1, (int64_t[]){5})},
                 *out[1];
      arun(n, in, 3, out);
      acheck(out[0], dts[di], 1, (int64_t[]){5}, (double[]){-1, 0, 1, 2, 3});
      afree(out, 1);
      afree(in, 3);
      kh_node_free(n);
    }
  static const char *const bops[] = {"BroadcastArgs", "BroadcastGradientArgs"};
  for (int o = 0; o < 2; o++) {
    ndt = adtypes(bops[o], "T", dts);
    for (int di = 0; di < ndt; di++) {
      dfx_node *n = kh_node_new(bops[o]);
      kh_attr_type(n, "T", dts[di]);
      dfx_tensor *in[2] = {aint(dts[di], 3, (int64_t[]){2, 1, 3}), aint(dts[di], 2, (int64_t[]){4, 1})}, *out[2];
      int nout = arun(n, in, 2, out);
      if (o == 0) {
        acheck(out[0], dts[di], 1, (int64_t[]){3}, (double[]){2, 4, 3});
      } else {
        acheck(out[0], dts[di], 1, (int64_t[]){1}, (double[]){1});
        acheck(out[1], dts[di], 1, (int64_t[]){2}, (double[]){0, 2});
      }
      afree(out, nout);
      afree(in, 2);
      kh_node_free(n);
    }
  }
}

/* ---- index dtypes (Tshape, Index, Tperm, ...) on x = 0..5 as float [2,3] ---- */

typedef struct {
  const char *op, *attr, *attr2; /* the swept index attr; attr2 (if any) is int32 */
  int xpos, nidx;                /* x's input position; index inputs after it */
  int idx_n[3];                  /* elements per index input: -1 scalar, 4 a [2,2] matrix */
  int64_t idx_v[3][4];
  const char *iattr, *sattr, *sval; /* an int attr set to 1 and a string attr */
  bool xscalar, cv;              /* x is the scalar 7; a trailing constant 9 input */
  int on;
  int64_t od[3];
  double v[12];
} idx_case;

static const idx_case idx_cases[] = {
    {"Reshape", "Tshape", NULL, 0, 1, {2}, {{3, -1}}, NULL, NULL, NULL, 0, 0, 2, {3, 2}, {0, 1, 2, 3, 4, 5}},
    {"StridedSlice", "Index", NULL, 0, 3, {2, 2, 2}, {{0, 2}, {2, 0}, {1, -1}}, NULL, NULL, NULL, 0, 0, 2, {2, 2},
     {2, 1, 5, 4}},
    {"Slice", "Index", NULL, 0, 2, {2, 2}, {{1, 1}, {1, -1}}, NULL, NULL, NULL, 0, 0, 2, {1, 2}, {4, 5}},
    {"Transpose", "Tperm", NULL, 0, 1, {2}, {{1, 0}}, NULL, NULL, NULL, 0, 0, 2, {3, 2}, {0, 3, 1, 4, 2, 5}},
    {"ReverseV2", "Tidx", NULL, 0, 1, {1}, {{1}}, NULL, NULL, NULL, 0, 0, 2, {2, 3}, {2, 1, 0, 5, 4, 3}},
    {"Tile", "Tmultiples", NULL, 0, 1, {2}, {{1, 2}}, NULL, NULL, NULL, 0, 0, 2, {2, 6},
     {0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5}},
    {"BroadcastTo", "Tidx", NULL, 0, 1, {3}, {{2, 2, 3}}, NULL, NULL, NULL, 0, 0, 3, {2, 2, 3},
     {0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5}},
    {"Pad", "Tpaddings", NULL, 0, 1, {4}, {{0, 1, 1, 0}}, NULL, NULL, NULL, 0, 0, 2, {3, 4},
     {0, 0, 1, 2, 0, 3, 4, 5, 0, 0, 0, 0}},
    {"PadV2", "Tpaddings", NULL, 0, 1, {4}, {{0, 1, 1, 0}}, NULL, NULL, NULL, 0, 1, 2, {3, 4},
     {9, 0, 1, 2, 9, 3, 4, 5, 9, 9, 9, 9}},
    {"Roll", "Tshift", "Taxis", 0, 2, {1, 1}, {{1}, {1}}, NULL, NULL, NULL, 0, 0, 2, {2, 3}, {2, 0, 1, 5, 3, 4}},
    {"Roll", "Taxis", "Tshift", 0, 2, {1, 1}, {{1}, {1}}, NULL, NULL, NULL, 0, 0, 2, {2, 3}, {2, 0, 1, 5, 3, 4}},
    {"MatrixBandPart", "Tindex", NULL, 0, 2, {-1, -1}, {{0}, {0}}, NULL, NULL, NULL, 0, 0, 2, {2, 3},
     {0, 0, 0, 0, 4, 0}},
    {"ReverseSequence", "Tlen", NULL, 0, 1, {2}, {{2, 3}}, "seq_dim", NULL, NULL, 0, 0, 2, {2, 3}, {1, 0, 2, 5, 4, 3}},
    {"MirrorPad", "Tpaddings", NULL, 0, 1, {4}, {{1, 0, 0, 1}}, NULL, "mode", "SYMMETRIC", 0, 0, 2, {3, 4},
     {0, 1, 2, 2, 0, 1, 2, 2, 3, 4, 5, 5}},
    {"Fill", "index_type", NULL, 1, 1, {2}, {{2, 2}}, NULL, NULL, NULL, 1, 0, 2, {2, 2}, {7, 7, 7, 7}},
    {"ExpandDims", "Tdim", NULL, 0, 1, {-1}, {{1}}, NULL, NULL, NULL, 0, 0, 3, {2, 1, 3}, {0, 1, 2, 3, 4, 5}},
};

ATEST(types, index_dtypes) {
  for (size_t c = 0; c < sizeof idx_cases / sizeof idx_cases[0]; c++) {
    const idx_case *k = &idx_cases[c];
    dfx_dtype its[DFX_DTYPE_END_];
    int nit = adtypes(k->op, k->attr, its);
    for (int ii = 0; ii < nit; ii++) {
      dfx_node *n = kh_node_new(k->op);
      kh_attr_type(n, "T", DFX_F32);
      kh_attr_type(n, k->attr, its[ii]);
      if (k->attr2) kh_attr_type(n, k->attr2, DFX_I32);
      if (k->iattr) kh_attr_int(n, k->iattr, 1);
      if (k->sattr) kh_attr_str(n, k->sattr, k->sval);
      dfx_tensor *in[5], *out[1];
      int nin = 0;
      for (int i = 0; i < k->nidx + 1; i++) {
        if (i == k->xpos) {
          in[nin++] = k->xscalar ? kh_scalar_f32(7) : avals(DFX_F32, 2, xd, NULL);
          continue;
        }
        int j = i - (i > k->xpos), m = k->idx_n[j];
        dfx_tensor *t = aint(its[ii], m, k->idx_v[j]);
        if (m == 4) t->ndims = 2, t->dims[0] = 2, t->dims[1] = 2;
        in[nin++] = t;
      }
      if (k->cv) in[nin++] = kh_scalar_f32(9);
      arun(n, in, nin, out);
      acheck(out[0], DFX_F32, k->on, k->od, k->v);
      afree(out, 1);
      afree(in, nin);
      kh_node_free(n);
    }
  }
}

ATEST(types, split_v_tlen) {
  dfx_dtype its[DFX_DTYPE_END_];
  int nit = adtypes("SplitV", "Tlen", its);
  for (int ii = 0; ii < nit; ii++) {
    dfx_node *n = kh_node_new("SplitV");
    kh_attr_type(n, "T", DFX_F32);
    kh_attr_type(n, "Tlen", its[ii]);
    kh_attr_int(n, "num_split", 2);
    dfx_tensor *in[3] = {avals(DFX_F32, 2, xd, NULL), aint(its[ii], 2, (int64_t[]){-1, 2}), kh_scalar_i32(1)}, *out[2];
    arun(n, in, 3, out);
    acheck(out[0], DFX_F32, 2, (int64_t[]){2, 1}, (double[]){0, 3});
    acheck(out[1], DFX_F32, 2, (int64_t[]){2, 2}, (double[]){1, 2, 4, 5});
    afree(out, 2);
    afree(in, 3);
    kh_node_free(n);
  }
}
