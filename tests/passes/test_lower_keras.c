/* test_lower_keras.c - the two Keras SavedModels in ../shared/savedmodels
 * lowered and run end to end, with made-up weights: every variable
 * (VarHandleOp) becomes a resource Const and every ReadVariableOp a Const
 * of deterministic values for that variable, waiting on what the read
 * waited on (so reads inside loop bodies stay in their frames). The MLP
 * (StatefulPartitionedCall chains) and the four stacked relu LSTMs
 * (functional While loops over TensorLists, with weights read inside the
 * loop bodies) must then match the Dense and Keras LSTM formulas written
 * here in plain C with the same weights. Restoring the real weights is the
 * variables' work, not the lowering's. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eutil.h"
#include "graph.h"
#include "graph_import.h"
#include "savedmodel.h"

TestSuite(lower_keras, .init = eu_setup, .fini = eu_teardown, .timeout = 300);

/* A variable's made-up element i: in [-0.1, 0.1], fixed by name and index. */
static float weight(const char *name, int64_t i) {
  uint32_t h = 2166136261u;
  for (const char *p = name; *p; p++) h = (h ^ (uint8_t)*p) * 16777619u;
  h ^= (uint32_t)i * 2654435761u;
  h ^= h >> 13;
  h *= 0x5bd1e995u;
  h ^= h >> 15;
  return (float)((int)(h % 2001u) - 1000) / 10000.0f;
}

/* The lowered graph of a model, its variables replaced as described above. */
static dfx_graph *frozen(const char *model) {
  const char *root = getenv("DFX_SOURCE_ROOT");
  char path[1024];
  snprintf(path, sizeof path, "%s/../shared/savedmodels/%s/saved_model.pb", root ? root : "..", model);
  char *data = NULL;
  size_t len;
  dfx_status st;
  if (dfx__read_file(path, &data, &len, &st) != DFX_OK) return NULL;
  dfx_graph *g = NULL, *low = NULL;
  cr_assert_eq(dfx__savedmodel_import(data, len, NULL, &g, &st), DFX_OK, "%s", st.msg);
  dfx__free(data);
  dfx_optimize_options o = {.passes = "lower"};
  cr_assert_eq(dfx_graph_optimize(g, &o, &low, NULL, &st), DFX_OK, "%s", st.msg);
  dfx_graph_free(g);
  int n = low->n_nodes;
  int *var = calloc((size_t)n, sizeof(int));
  /* Each read's variable, traced back through the moves lowering made. */
  for (int i = 0; i < n; i++) {
    var[i] = -1;
    if (strcmp(low->nodes[i].op, "ReadVariableOp") != 0) continue;
    dfx_input in = low->nodes[i].in[0];
    for (int hops = 0; hops < 64 && strcmp(low->nodes[in.node].op, "VarHandleOp") != 0; hops++) {
      const dfx_node *p = &low->nodes[in.node];
      in = p->in[strcmp(p->op, "IdentityN") == 0 ? in.slot : 0];
    }
    cr_assert_str_eq(low->nodes[in.node].op, "VarHandleOp", "read %s", low->nodes[i].name);
    var[i] = in.node;
  }
  dfx_tensor *handle = dfx__tensor_zeros(DFX_RESOURCE, 0, NULL, NULL);
  /* Reads first: they need their variables' attrs, which the second round drops. */
  for (int round = 0; round < 2; round++)
  for (int i = 0; i < n; i++) {
    dfx_node *nd = &low->nodes[i];
    bool is_var = strcmp(nd->op, "VarHandleOp") == 0;
    if (round == 0 ? var[i] < 0 : !is_var) continue;
    dfx_tensor *value = handle;
    if (!is_var) {
      const dfx_node *v = &low->nodes[var[i]];
      const dfx_shape *s = dfx__attr_shape(v, "shape");
      dfx_dtype t = dfx__attr_type(v, "dtype", DFX_INVALID);
      /* Counters (the optimizer's, metrics') are not on the serving path:
       * zeros, scalars when their shape is not given. */
      bool known = s && s->rank >= 0;
      value = dfx__tensor_zeros(t, known ? s->rank : 0, known ? s->dims : NULL, NULL);
      cr_assert(value, "%s", v->name);
      for (int64_t k = 0; t == DFX_F32 && k < value->count; k++) ((float *)value->data)[k] = weight(v->name, k);
      int src = nd->in[0].node;
      dfx__graph_remove_input(low, i, 0);
      cr_assert_eq(dfx__graph_add_input(low, i, src, -1, &st), DFX_OK);
    }
    while (low->nodes[i].n_attrs) {
      char *name = strdup(low->nodes[i].attrs[0].name);
      dfx__graph_remove_attr(low, i, name);
      free(name);
    }
    dfx_attr dt = {.name = "dtype", .kind = DFX_ATTR_TYPE, .v.type = (dfx_dtype)value->dtype};
    dfx_attr val = {.name = "value", .kind = DFX_ATTR_TENSOR, .v.tensor = value};
    cr_assert_eq(dfx__graph_set_op(low, i, "Const", &st), DFX_OK);
    cr_assert_eq(dfx__graph_set_attr(low, i, &dt, &st), DFX_OK);
    cr_assert_eq(dfx__graph_set_attr(low, i, &val, &st), DFX_OK);
    if (value != handle) dfx__tensor_unref(value);
  }
  dfx__tensor_unref(handle);
  free(var);
  cr_assert_eq(dfx__graph_finalize(low, &st), DFX_OK, "%s", st.msg);
  return low;
}

/* Runs the model on x ([dims]) and returns the fetched float output (new). */
static dfx_tensor *run(const dfx_graph *g, const char *feed, const char *fetch, const int64_t *dims, int nd,
                       const float *x) {
  dfx_tensor *in = dfx_tensor_new(DFX_F32, dims, nd), *out = NULL;
  memcpy(dfx_tensor_data(in), x, dfx_tensor_nbytes(in));
  char msg[2048];
  dfx_code c = eu_run(g, 2, fetch, &out, feed, in, msg, sizeof msg);
  dfx_tensor_free(in);
  cr_assert_eq(c, DFX_OK, "%s", msg);
  return out;
}

/* y[n] = x[m] W[m, n] + b[n], W and b the made-up weights of layer `name`. */
static void dense(const char *name, const float *x, int m, float *y, int n, bool relu) {
  char kn[128], bn[128];
  snprintf(kn, sizeof kn, "%s/kernel", name);
  snprintf(bn, sizeof bn, "%s/bias", name);
  for (int j = 0; j < n; j++) {
    double s = weight(bn, j);
    for (int i = 0; i < m; i++) s += (double)x[i] * weight(kn, (int64_t)i * n + j);
    y[j] = relu && s < 0 ? 0 : (float)s;
  }
}

Test(lower_keras, mlp_matches_dense_layers) {
  dfx_graph *g = frozen("tf2_keras_mlp");
  if (!g) cr_skip_test("no ../shared/savedmodels");
  float x[2][4] = {{0.5f, -1, 2, 0.25f}, {-0.3f, 0.8f, 0.1f, -2}};
  dfx_tensor *out = run(g, "serving_default_dense_input", "StatefulPartitionedCall", (int64_t[]){2, 4}, 2, &x[0][0]);
  int n_act = (int)dfx_tensor_dim(out, 1);
  cr_assert(n_act > 0 && n_act <= 64);
  for (int b = 0; b < 2; b++) {
    float h1[32], h2[64], y[64];
    dense("dense", x[b], 4, h1, 32, true);
    dense("dense_1", h1, 32, h2, 64, true);
    dense("dense_2", h2, 64, y, n_act, false);
    for (int j = 0; j < n_act; j++)
      cr_expect_float_eq(((float *)dfx_tensor_data(out))[b * n_act + j], y[j], 1e-5, "batch %d action %d", b, j);
  }
  dfx_tensor_free(out);
  dfx_graph_free(g);
}

static float sigmoid(float v) { return 1.0f / (1.0f + expf(-v)); }
static float relu(float v) { return v > 0 ? v : 0; }

/* One Keras LSTM layer (relu activation, sigmoid recurrent activation, gates
 * i, f, c, o) over T steps: in [T, m] -> out [T, u]. */
static void lstm(const char *layer, const char *cell, const float *in, int T, int m, float *out, int u) {
  char kn[128], rn[128], bn[128];
  snprintf(kn, sizeof kn, "%s/%s/kernel", layer, cell);
  snprintf(rn, sizeof rn, "%s/%s/recurrent_kernel", layer, cell);
  snprintf(bn, sizeof bn, "%s/%s/bias", layer, cell);
  float *h = calloc((size_t)u, sizeof(float)), *c = calloc((size_t)u, sizeof(float));
  float *z = malloc(sizeof(float) * 4 * (size_t)u);
  for (int t = 0; t < T; t++) {
    for (int j = 0; j < 4 * u; j++) {
      double s = weight(bn, j);
      for (int i = 0; i < m; i++) s += (double)in[t * m + i] * weight(kn, (int64_t)i * 4 * u + j);
      for (int i = 0; i < u; i++) s += (double)h[i] * weight(rn, (int64_t)i * 4 * u + j);
      z[j] = (float)s;
    }
    for (int j = 0; j < u; j++) {
      float ig = sigmoid(z[j]), fg = sigmoid(z[u + j]), cc = relu(z[2 * u + j]), og = sigmoid(z[3 * u + j]);
      c[j] = fg * c[j] + ig * cc;
      h[j] = og * relu(c[j]);
      out[t * u + j] = h[j];
    }
  }
  free(h);
  free(c);
  free(z);
}

Test(lower_keras, lstm_stack_matches_keras_formulas) {
  dfx_graph *g = frozen("tf2_keras_lstm");
  if (!g) cr_skip_test("no ../shared/savedmodels");
  enum { T = 100 };
  float x[T];
  for (int t = 0; t < T; t++) x[t] = sinf(0.13f * (float)t) + 0.1f;
  dfx_tensor *out = run(g, "serving_default_lstm_input", "StatefulPartitionedCall", (int64_t[]){1, T, 1}, 3, x);
  cr_assert_eq(dfx_tensor_ndims(out), 3);
  cr_assert_eq(dfx_tensor_dim(out, 1), T);
  static float a[T * 50], b[T * 60], c[T * 80], d[T * 120];
  lstm("lstm", "lstm_cell", x, T, 1, a, 50);
  lstm("lstm_1", "lstm_cell_1", a, T, 50, b, 60);
  lstm("lstm_2", "lstm_cell_2", b, T, 60, c, 80);
  lstm("lstm_3", "lstm_cell_3", c, T, 80, d, 120);
  const float *y = dfx_tensor_data(out);
  for (int t = 0; t < T; t++) {
    float want;
    dense("dense", d + t * 120, 120, &want, 1, false);
    cr_expect_float_eq(y[t], want, 1e-5 + 1e-4 * fabsf(want), "step %d", t);
  }
  dfx_tensor_free(out);
  dfx_graph_free(g);
}
