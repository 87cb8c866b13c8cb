/* kharness.c - direct kernel invocation for kernel unit tests. */
#include "kharness.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "lib.h"
#include "node_sig.h"
#include "op_registry.h"
#include "step.h"

static const dfx_parallel *par_for_tests;
void kh_set_parallel(const dfx_parallel *p) { par_for_tests = p; }

int kh_par_blocks;
static int reverse_idle(void *impl) { return 3; }
static void reverse_run(void *impl, int n_blocks, int helpers, void (*block)(void *ud, int b), void *ud) {
  for (int b = n_blocks - 1; b >= 0; b--) {
    block(ud, b);
    kh_par_blocks++;
  }
}
const dfx_parallel kh_par_reverse = {.idle = reverse_idle, .run = reverse_run};

static const dfx_registry *reg(void) {
  dfx_status st;
  const dfx_registry *r = dfx__lib_registry(&st);
  if (!r) {
    fprintf(stderr, "registry: %s\n", st.msg);
    abort();
  }
  return r;
}

dfx_node *kh_node_new(const char *op) {
  const dfx_op_def *def = dfx__op_get(op);
  if (!def) {
    fprintf(stderr, "kh_node_new: op %s has no signature\n", op);
    abort();
  }
  dfx_node *n = calloc(1, sizeof *n);
  n->name = dfx__strdup("kh_node");
  n->op = dfx__strdup(op);
  n->def = def;
  return n;
}

void kh_node_free(dfx_node *n) {
  if (!n) return;
  for (int i = 0; i < n->n_attrs; i++) dfx__attr_clear(&n->attrs[i]);
  dfx__free(n->attrs);
  dfx__free(n->in_types);
  dfx__free(n->out_types);
  dfx__free(n->name);
  dfx__free(n->op);
  free(n);
}

static dfx_attr *new_attr(dfx_node *n, const char *name, dfx_attr_kind kind) {
  for (int i = 0; i < n->n_attrs; i++)
    if (strcmp(n->attrs[i].name, name) == 0) {
      dfx__attr_clear(&n->attrs[i]);
      n->attrs[i].name = dfx__strdup(name);
      n->attrs[i].kind = kind;
      return &n->attrs[i];
    }
  n->attrs = dfx__realloc(n->attrs, sizeof *n->attrs * (size_t)(n->n_attrs + 1));
  dfx_attr *a = &n->attrs[n->n_attrs++];
  memset(a, 0, sizeof *a);
  a->name = dfx__strdup(name);
  a->kind = kind;
  return a;
}

void kh_attr_type(dfx_node *n, const char *name, dfx_dtype t) { new_attr(n, name, DFX_ATTR_TYPE)->v.type = t; }
void kh_attr_int(dfx_node *n, const char *name, int64_t v) { new_attr(n, name, DFX_ATTR_I)->v.i = v; }
void kh_attr_float(dfx_node *n, const char *name, float v) { new_attr(n, name, DFX_ATTR_F)->v.f = v; }
void kh_attr_bool(dfx_node *n, const char *name, int v) { new_attr(n, name, DFX_ATTR_B)->v.b = v != 0; }
void kh_attr_str(dfx_node *n, const char *name, const char *s) {
  dfx_attr *a = new_attr(n, name, DFX_ATTR_S);
  a->v.s.ptr = dfx__strdup(s);
  a->v.s.len = strlen(s);
}

static void set_list(dfx_node *n, const char *name, dfx_attr_kind kind, const void *v, int count, size_t esz) {
  dfx_attr *a = new_attr(n, name, DFX_ATTR_LIST);
  a->v.list.kind = count ? kind : DFX_ATTR_NONE;
  a->v.list.n = count;
  a->v.list.v.i = dfx__calloc(count ? (size_t)count : 1, esz);
  if (count) memcpy(a->v.list.v.i, v, esz * (size_t)count);
}

void kh_attr_ints(dfx_node *n, const char *name, const int64_t *v, int count) {
  set_list(n, name, DFX_ATTR_I, v, count, sizeof(int64_t));
}
void kh_attr_floats(dfx_node *n, const char *name, const float *v, int count) {
  set_list(n, name, DFX_ATTR_F, v, count, sizeof(float));
}
void kh_attr_types(dfx_node *n, const char *name, const dfx_dtype *v, int count) {
  set_list(n, name, DFX_ATTR_TYPE, v, count, sizeof(dfx_dtype));
}
void kh_attr_strs(dfx_node *n, const char *name, const char *const *v, int count) {
  dfx_str *s = dfx__calloc(count ? (size_t)count : 1, sizeof *s);
  for (int i = 0; i < count; i++) s[i] = (dfx_str){dfx__strdup(v[i]), strlen(v[i])};
  set_list(n, name, DFX_ATTR_S, s, count, sizeof *s);
  dfx__free(s);
}
void kh_attr_shape(dfx_node *n, const char *name, int rank, const int64_t *dims) {
  dfx_attr *a = new_attr(n, name, DFX_ATTR_SHAPE);
  a->v.shape.rank = rank;
  if (rank > 0) {
    a->v.shape.dims = dfx__malloc(sizeof(int64_t) * (size_t)rank);
    memcpy(a->v.shape.dims, dims, sizeof(int64_t) * (size_t)rank);
  }
}
void kh_attr_tensor(dfx_node *n, const char *name, dfx_tensor *t) { new_attr(n, name, DFX_ATTR_TENSOR)->v.tensor = t; }

/* Swaps each output for a reference the caller owns. An output may be the
 * kernel state's own tensor (a Const's immortal value), which fini frees
 * right after the run: hand out a copy instead, as a session's fetch does. */
static dfx_code export_outputs(dfx_node *n, dfx_tensor **out, dfx_status *st) {
  for (int i = 0; i < n->n_out; i++) {
    if (!out[i]) return dfx__status_set(st, DFX_EINTERNAL, "kernel %s left output %d unset", n->op, i);
    dfx_tensor *mine = dfx__tensor_export(out[i]);
    dfx__tensor_unref(out[i]);
    out[i] = mine;
    if (!mine) return dfx__status_set(st, DFX_ENOMEM, "out of memory exporting output %d", i);
  }
  return DFX_OK;
}

dfx_code kh_run(dfx_node *n, dfx_tensor **in, int n_in, dfx_tensor **out, int *n_out, char *err, size_t errlen) {
  return kh_run_step(n, in, n_in, out, n_out, NULL, err, errlen);
}

dfx_code kh_run_step(dfx_node *n, dfx_tensor **in, int n_in, dfx_tensor **out, int *n_out, dfx_step *step, char *err,
                     size_t errlen) {
  dfx_status st;
  dfx__status_clear(&st);
  int expected = 0;
  dfx_code c = dfx__node_fill_defaults(n, n->def, &st);
  if (c == DFX_OK) c = dfx__node_check_attrs(n, n->def, &st);
  if (c == DFX_OK) c = dfx__node_resolve_types(n, n->def, &expected, &st);
  if (c == DFX_OK && expected != n_in)
    c = dfx__status_set(&st, DFX_EINVAL, "op %s expects %d inputs, test gave %d", n->op, expected, n_in);
  const dfx_kernel_def *k = c == DFX_OK ? dfx__registry_kernel_for(reg(), n, &st) : NULL;
  if (c == DFX_OK && !k) c = st.code;
  void *state = NULL;
  if (c == DFX_OK && k->init) c = k->init(n, &state, &st);
  if (c == DFX_OK) {
    dfx_step fresh;
    bool own_step = !step;
    if (own_step) {
      step = &fresh;
      c = dfx__step_init(step);
      if (c != DFX_OK) dfx__status_set(&st, c, "cannot start a step");
    }
    if (c == DFX_OK) {
      for (int i = 0; i < n->n_out; i++) out[i] = NULL;
      dfx_kctx ctx = {.node = n, .n_in = n_in, .in = in, .n_out = n->n_out, .out = out, .state = state,
                      .step = step, .frame = "", .iter = 0, .st = &st, .par = par_for_tests};
      c = k->fn(&ctx);
      if (c == DFX_OK) c = export_outputs(n, out, &st);
      if (c != DFX_OK) {
        for (int i = 0; i < n->n_out; i++) {
          dfx__tensor_unref(out[i]);
          out[i] = NULL;
        }
      }
      if (own_step) dfx__step_destroy(step);
    }
    if (k->fini) k->fini(state);
  }
  if (n_out) *n_out = c == DFX_OK ? n->n_out : 0;
  if (err && errlen) snprintf(err, errlen, "%s", c == DFX_OK ? "" : st.msg);
  return c;
}

dfx_tensor *kh_tensor(dfx_dtype t, int ndims, const int64_t *dims, const void *data) {
  dfx_tensor *x = dfx__tensor_alloc(t, ndims, dims, NULL);
  if (x && data) memcpy(x->data, data, x->nbytes);
  return x;
}
dfx_tensor *kh_f32(int ndims, const int64_t *dims, const float *v) { return kh_tensor(DFX_F32, ndims, dims, v); }
dfx_tensor *kh_i32(int ndims, const int64_t *dims, const int32_t *v) { return kh_tensor(DFX_I32, ndims, dims, v); }
dfx_tensor *kh_i64(int ndims, const int64_t *dims, const int64_t *v) { return kh_tensor(DFX_I64, ndims, dims, v); }
dfx_tensor *kh_bool(int ndims, const int64_t *dims, const uint8_t *v) { return kh_tensor(DFX_BOOL, ndims, dims, v); }
dfx_tensor *kh_scalar_i32(int32_t v) { return kh_tensor(DFX_I32, 0, NULL, &v); }
dfx_tensor *kh_scalar_f32(float v) { return kh_tensor(DFX_F32, 0, NULL, &v); }
