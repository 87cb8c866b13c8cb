/* test_scatter.c - Assign*, Scatter* and ScatterNd* against hand-computed
 * TensorFlow values and a naive double reference over dtypes. */
#include <math.h>

#include "gtest.h"

static dfx_node *ref_node(const char *op, dfx_dtype t, dfx_dtype ti) {
  dfx_node *n = kh_node_new(op);
  kh_attr_type(n, "T", t);
  if (ti != DFX_INVALID) kh_attr_type(n, "Tindices", ti);
  return n;
}

Test(scatter, scatter_nd_values) {
  const int64_t id[] = {4, 1}, ud[] = {4}, sd[] = {1};
  const int32_t iv[] = {4, 3, 1, 7}, sv[] = {8};
  const float uv[] = {9, 10, 11, 12};
  dfx_tensor *in[3] = {kh_i32(2, id, iv), kh_f32(1, ud, uv), kh_i32(1, sd, sv)}, *out[1] = {0};
  dfx_node *n = ref_node("ScatterNd", DFX_F32, DFX_I32);
  char err[512];
  cr_assert_eq(g_run(n, in, 3, out, err), DFX_OK, "%s", err);
  const float want[] = {0, 11, 0, 10, 9, 0, 0, 12};
  g_expect_f32(out[0], want, 8);
  g_unref_all(out, 1);
  /* Duplicates add. */
  ((int32_t *)in[0]->data)[2] = 4;
  cr_assert_eq(g_run(n, in, 3, out, err), DFX_OK, "%s", err);
  const float want2[] = {0, 0, 0, 10, 20, 0, 0, 12};
  g_expect_f32(out[0], want2, 8);
  g_unref_all(out, 1);
  ((int32_t *)in[0]->data)[1] = 8;
  g_expect_err(n, in, 3, "indices[1,0] = [8] does not index into shape [8]");
  ((int32_t *)in[0]->data)[1] = 3;
  dfx__tensor_unref(in[1]);
  const int64_t ud3[] = {3};
  in[1] = kh_f32(1, ud3, uv);
  g_expect_err(n, in, 3, "must match dimensions [0,1) of updates");
  g_unref_all(in, 3);
  kh_node_free(n);
}

Test(scatter, scatter_nd_slices_1d_indices_strings_bool) {
  /* shape [3,2], 1-D indices [2,0] (treated as [N,1]) with row updates. */
  const int64_t id[] = {2}, ud[] = {2, 2}, sd[] = {2};
  const int64_t iv[] = {2, 0}, sv[] = {3, 2};
  const char *uv[] = {"a", "b", "c", "d"};
  dfx_tensor *in[3] = {kh_i64(1, id, iv), g_str(2, ud, uv), kh_i64(1, sd, sv)}, *out[1] = {0};
  dfx_node *n = ref_node("ScatterNd", DFX_STRING, DFX_I64);
  char err[512];
  cr_assert_eq(g_run(n, in, 3, out, err), DFX_OK, "%s", err);
  const int64_t od[] = {3, 2};
  g_expect_shape(out[0], 2, od);
  const char *want[] = {"c", "d", "", "", "a", "b"};
  g_expect_str(out[0], want, 6);
  g_unref_all(out, 1);
  ((int64_t *)in[0]->data)[1] = 2; /* duplicate: strings concatenate */
  cr_assert_eq(g_run(n, in, 3, out, err), DFX_OK, "%s", err);
  const char *want2[] = {"", "", "", "", "ac", "bd"};
  g_expect_str(out[0], want2, 6);
  g_unref_all(out, 1);
  g_unref_all(in, 3);
  kh_node_free(n);
  /* bool: duplicates or together. */
  const uint8_t bv[] = {1, 0, 0, 0};
  dfx_tensor *in2[3] = {kh_i64(1, id, iv), kh_bool(2, ud, bv), kh_i64(1, sd, sv)};
  ((int64_t *)in2[0]->data)[1] = 2;
  dfx_node *n2 = ref_node("ScatterNd", DFX_BOOL, DFX_I64);
  cr_assert_eq(g_run(n2, in2, 3, out, err), DFX_OK, "%s", err);
  const uint8_t *g = out[0]->data;
  cr_expect(g[4] == 1 && g[5] == 0 && g[0] == 0);
  g_unref_all(out, 1);
  g_unref_all(in2, 3);
  kh_node_free(n2);
}

Test(scatter, scatter_nd_ref_ops_leave_input_unchanged) {
  const char *opsn[] = {"ScatterNdUpdate", "ScatterNdAdd", "ScatterNdSub", "ScatterNdMax", "ScatterNdMin",
                        "TensorScatterUpdate", "TensorScatterAdd", "ScatterNdNonAliasingAdd"};
  const float want[][8] = {{1, 11, 3, 10, 9, 6, 7, 12},  {1, 13, 3, 14, 14, 6, 7, 20}, {1, -9, 3, -6, -4, 6, 7, -4},
                           {1, 11, 3, 10, 9, 6, 7, 12},  {1, 2, 3, 4, 5, 6, 7, 8},     {1, 11, 3, 10, 9, 6, 7, 12},
                           {1, 13, 3, 14, 14, 6, 7, 20}, {1, 13, 3, 14, 14, 6, 7, 20}};
  for (int k = 0; k < 8; k++) {
    const int64_t rd[] = {8}, id[] = {4, 1}, ud[] = {4};
    const float rv[] = {1, 2, 3, 4, 5, 6, 7, 8}, uv[] = {9, 10, 11, 12};
    const int32_t iv[] = {4, 3, 1, 7};
    dfx_tensor *in[3] = {kh_f32(1, rd, rv), kh_i32(2, id, iv), kh_f32(1, ud, uv)}, *out[1] = {0};
    dfx_node *n = ref_node(opsn[k], DFX_F32, DFX_I32);
    char err[512];
    cr_assert_eq(g_run(n, in, 3, out, err), DFX_OK, "%s: %s", opsn[k], err);
    g_expect_f32(out[0], want[k], 8);
    g_expect_f32(in[0], rv, 8);
    g_unref_all(out, 1);
    g_unref_all(in, 3);
    kh_node_free(n);
  }
}

/* Naive reference for first-dim scatter ops over several dtypes. */
static double ref_op(const char *op, double a, double b) {
  if (!strcmp(op, "ScatterAdd")) return a + b;
  if (!strcmp(op, "ScatterSub")) return a - b;
  if (!strcmp(op, "ScatterMul")) return a * b;
  if (!strcmp(op, "ScatterDiv")) return a / b;
  if (!strcmp(op, "ScatterMax")) return a > b ? a : b;
  if (!strcmp(op, "ScatterMin")) return a < b ? a : b;
  return b;
}

Test(scatter, first_dim_ops_sweep) {
  const char *opsn[] = {"ScatterUpdate", "ScatterAdd", "ScatterSub", "ScatterMul",
                        "ScatterDiv",    "ScatterMax", "ScatterMin"};
  const dfx_dtype dts[] = {DFX_F32, DFX_F64, DFX_I32, DFX_I64, DFX_F16, DFX_BF16, DFX_U8};
  uint32_t seed = 3;
  for (size_t o = 0; o < 7; o++)
    for (size_t t = 0; t < 7; t++) {
      bool uns = dts[t] == DFX_U8;
      if (uns && (o == 2 || o == 4 || o >= 5)) continue; /* exact u8 values; Max/Min lack u8 */
      for (int scalar = 0; scalar < 2; scalar++) {
        const int64_t pd[] = {4, 3}, id[] = {2, 2}, ud[] = {2, 2, 3};
        double pv[12], uv[12], want[12];
        for (int i = 0; i < 12; i++) {
          pv[i] = want[i] = (double)(g_rand(&seed) % 8) + 1;
          uv[i] = (double)(g_rand(&seed) % 4) + 1;
        }
        const int32_t iv[] = {3, 0, 3, 1};
        for (int k = 0; k < 4; k++)
          for (int j = 0; j < 3; j++) {
            double *w = &want[iv[k] * 3 + j];
            *w = ref_op(opsn[o], *w, scalar ? uv[0] : uv[k * 3 + j]);
            if (dts[t] == DFX_I32 || dts[t] == DFX_I64) *w = trunc(*w);
            if (dts[t] == DFX_F32 || dts[t] == DFX_F16 || dts[t] == DFX_BF16) *w = (float)*w;
            if (dts[t] == DFX_F16) *w = dfx__f16_to_f32(dfx__f32_to_f16((float)*w));
            if (dts[t] == DFX_BF16) *w = dfx__bf16_to_f32(dfx__f32_to_bf16((float)*w));
          }
        dfx_tensor *in[3] = {g_from_doubles(dts[t], 2, pd, pv), kh_i32(2, id, iv),
                             g_from_doubles(dts[t], scalar ? 0 : 3, ud, uv)},
                   *out[1] = {0};
        dfx_node *n = ref_node(opsn[o], dts[t], DFX_I32);
        char err[512];
        cr_assert_eq(g_run(n, in, 3, out, err), DFX_OK, "%s %s: %s", opsn[o], dfx_dtype_name(dts[t]), err);
        for (int i = 0; i < 12; i++) {
          cr_expect_eq(dfx__tensor_get_f64(out[0], i), want[i], "%s %s scalar=%d [%d] %g want %g", opsn[o],
                       dfx_dtype_name(dts[t]), scalar, i, dfx__tensor_get_f64(out[0], i), want[i]);
          cr_expect_eq(dfx__tensor_get_f64(in[0], i), pv[i]);
        }
        g_unref_all(out, 1);
        g_unref_all(in, 3);
        kh_node_free(n);
      }
    }
}

Test(scatter, first_dim_errors_and_strings) {
  const int64_t pd[] = {3}, id[] = {2}, ud[] = {2};
  const char *pv[] = {"x", "y", "z"}, *uv[] = {"p", "q"};
  const int64_t iv[] = {2, 0};
  dfx_tensor *in[3] = {g_str(1, pd, pv), kh_i64(1, id, iv), g_str(1, ud, uv)}, *out[1] = {0};
  dfx_node *n = ref_node("ScatterUpdate", DFX_STRING, DFX_I64);
  char err[512];
  cr_assert_eq(g_run(n, in, 3, out, err), DFX_OK, "%s", err);
  const char *want[] = {"q", "y", "p"};
  g_expect_str(out[0], want, 3);
  g_expect_str(in[0], pv, 3);
  g_unref_all(out, 1);
  ((int64_t *)in[1]->data)[1] = 3;
  g_expect_err(n, in, 3, "indices[1] = 3 is not in [0, 3)");
  ((int64_t *)in[1]->data)[1] = 0;
  dfx__tensor_unref(in[2]);
  const int64_t ud3[] = {3};
  in[2] = g_str(1, ud3, pv);
  g_expect_err(n, in, 3, "Must have updates.shape = indices.shape + params.shape[1:] or updates.shape = []");
  g_unref_all(in, 3);
  kh_node_free(n);
  /* Integer division by zero is an error, not a crash. */
  const int32_t a[] = {4, 5, 6}, z[] = {0};
  const int64_t one[] = {1};
  const int32_t i0[] = {1};
  dfx_tensor *in2[3] = {kh_i32(1, pd, a), kh_i32(1, one, i0), kh_i32(1, one, z)};
  dfx_node *n2 = ref_node("ScatterDiv", DFX_I32, DFX_I32);
  g_expect_err(n2, in2, 3, "division by zero");
  g_unref_all(in2, 3);
  kh_node_free(n2);
}

Test(scatter, assign_family) {
  const int64_t d2[] = {2}, d3[] = {3};
  const float a[] = {1, 2}, b[] = {10, 20}, c[] = {1, 2, 3};
  dfx_tensor *in[2] = {kh_f32(1, d2, a), kh_f32(1, d2, b)}, *out[1] = {0};
  dfx_node *n = kh_node_new("Assign");
  kh_attr_type(n, "T", DFX_F32);
  char err[512];
  cr_assert_eq(g_run(n, in, 2, out, err), DFX_OK, "%s", err);
  g_expect_f32(out[0], b, 2);
  g_unref_all(out, 1);
  dfx__tensor_unref(in[1]);
  in[1] = kh_f32(1, d3, c);
  g_expect_err(n, in, 2, "Assign requires shapes of both tensors to match. lhs shape= [2] rhs shape= [3]");
  kh_attr_bool(n, "validate_shape", 0);
  cr_assert_eq(g_run(n, in, 2, out, err), DFX_OK, "%s", err);
  g_expect_f32(out[0], c, 3);
  g_unref_all(out, 1);
  kh_node_free(n);
  dfx_node *n2 = kh_node_new("AssignAdd");
  kh_attr_type(n2, "T", DFX_F32);
  g_expect_err(n2, in, 2, "Cannot update variable with shape [2] using a Tensor with shape [3], shapes must be equal.");
  dfx__tensor_unref(in[1]);
  in[1] = kh_f32(1, d2, b);
  cr_assert_eq(g_run(n2, in, 2, out, err), DFX_OK, "%s", err);
  const float w[] = {11, 22};
  g_expect_f32(out[0], w, 2);
  g_expect_f32(in[0], a, 2);
  g_unref_all(out, 1);
  kh_node_free(n2);
  dfx_node *n3 = kh_node_new("AssignSub");
  kh_attr_type(n3, "T", DFX_F32);
  cr_assert_eq(g_run(n3, in, 2, out, err), DFX_OK, "%s", err);
  const float w3[] = {-9, -18};
  g_expect_f32(out[0], w3, 2);
  g_unref_all(out, 1);
  kh_node_free(n3);
  g_unref_all(in, 2);
}

Test(scatter, update_plain_copy_types) {
  /* Update ops copy elements of any fixed-size type (complex64 here). */
  const int64_t pd[] = {3}, id[] = {1};
  const float pv[] = {1, 2, 3, 4, 5, 6}, uv[] = {7, 8};
  const int32_t iv[] = {1};
  dfx_tensor *in[3] = {kh_tensor(DFX_C64, 1, pd, pv), kh_i32(1, id, iv), kh_tensor(DFX_C64, 1, id, uv)},
             *out[1] = {0};
  dfx_node *n = ref_node("ScatterUpdate", DFX_C64, DFX_I32);
  char err[512];
  cr_assert_eq(g_run(n, in, 3, out, err), DFX_OK, "%s", err);
  const float want[] = {1, 2, 7, 8, 5, 6};
  cr_expect(memcmp(out[0]->data, want, sizeof want) == 0);
  g_unref_all(out, 1);
  kh_node_free(n);
  dfx_node *n2 = ref_node("ScatterNdMax", DFX_C64, DFX_I32); /* complex has no order */
  g_expect_err(n2, in, 3, "no ScatterNdMax kernel for T=complex64");
  kh_node_free(n2);
  g_unref_all(in, 3);
}
