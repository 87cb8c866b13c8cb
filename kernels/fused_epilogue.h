/* fused_epilogue.h - what _FusedConv2D and _FusedMatMul do after their
 * contraction (TF's fused_eigen_output_kernels): `fused_ops` parsed once
 * per node into a pattern, and per run an epilogue over blocks of output
 * rows, channels last (a row is one output position's channels), applied
 * while the GEMM's result is still in cache.
 *
 * The arithmetic is the unfused kernels': BiasAdd adds in T,
 * FusedBatchNorm computes y = x * k + b in double with k = scale /
 * sqrt(variance + epsilon) and b = offset - mean * k (nn/batchnorm.c), and
 * the activations are kernels/math/unary.c's. A fused node therefore gives
 * the same bits as the nodes it replaces, which the remap pass relies on.
 * (TF computes the batch norm in T, (x - mean) * k + offset: within float
 * rounding of this.) The patterns are TF's CPU ones. */
#ifndef DFX_FUSED_EPILOGUE_H
#define DFX_FUSED_EPILOGUE_H

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "kernel.h"

typedef enum { FE_BIAS_ADD, FE_BATCH_NORM } fe_kind;
typedef enum { FE_NONE, FE_RELU, FE_RELU6, FE_ELU, FE_LEAKY_RELU } fe_act;

/* A node's fusion, from its attrs. */
typedef struct fe_spec {
  fe_kind kind;
  fe_act act;
  int n_args;  /* 1 (bias) or 4 (scale, offset, mean, variance) */
  float alpha; /* leakyrelu_alpha */
  float eps;   /* epsilon */
} fe_spec;

/* Parses fused_ops, num_args and num_host_args as TF's
 * InitializeFusedComputation: `what` names the op in messages ("Conv2D");
 * allow_bn admits the FusedBatchNorm patterns. */
static inline dfx_code fe_parse(const dfx_node *n, const char *what, int allow_bn, fe_spec *s, dfx_status *st) {
  static const struct {
    const char *name;
    fe_act act;
  } acts[] = {{"Relu", FE_RELU}, {"Relu6", FE_RELU6}, {"Elu", FE_ELU}, {"LeakyRelu", FE_LEAKY_RELU}};
  const dfx_attr_list *ops = dfx__attr_list(n, "fused_ops");
  int n_ops = ops && ops->kind == DFX_ATTR_S ? ops->n : 0;
  if (n_ops == 0) return dfx__status_set(st, DFX_EINVAL, "Fused %s must have at least one fused op.", what);
  int64_t num_args = dfx__attr_int(n, "num_args", 0), num_host = dfx__attr_int(n, "num_host_args", 0);
  /* The signature's input count: _FusedConv2D's args are typed by TArgs, a
   * list that need not be num_args long. */
  const dfx_attr_list *targs = dfx__attr_list(n, "TArgs");
  int64_t n_in = 2 + (targs ? targs->n : num_args) + num_host;
  if (n_in != 2 + num_args + num_host)
    return dfx__status_set(st, DFX_EINVAL,
                           "Fused %s must have the number of inputs equal to 2 + num_args + num_host_args but in fact "
                           "the number of inputs is %d and num_args is %lld and num_host_args is %lld",
                           what, (int)n_in, (long long)num_args, (long long)num_host);
  memset(s, 0, sizeof *s);
  const char *first = ops->v.s[0].ptr ? ops->v.s[0].ptr : "";
  bool ok = n_ops <= 2;
  if (!strcmp(first, "BiasAdd")) s->kind = FE_BIAS_ADD;
  else if (allow_bn && !strcmp(first, "FusedBatchNorm")) s->kind = FE_BATCH_NORM;
  else ok = false;
  if (ok && n_ops == 2) {
    const char *a = ops->v.s[1].ptr ? ops->v.s[1].ptr : "";
    ok = false;
    for (size_t i = 0; i < sizeof acts / sizeof acts[0] && !ok; i++)
      if (!strcmp(a, acts[i].name)) s->act = acts[i].act, ok = true;
  }
  if (!ok) {
    char list[256] = "";
    size_t used = 0;
    for (int i = 0; i < n_ops && used < sizeof list; i++)
      used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", i ? "," : "", ops->v.s[i].ptr ? ops->v.s[i].ptr : "");
    return dfx__status_set(st, DFX_EUNIMPL, "Fusion is not implemented: [%s]", list);
  }
  if (num_host != 0)
    return dfx__status_set(st, DFX_EUNIMPL, "Fused %s with host_args (the int8 kernel's scales) is not implemented",
                           what);
  s->n_args = s->kind == FE_BIAS_ADD ? 1 : 4;
  if (num_args != s->n_args)
    return dfx__status_set(st, DFX_EINVAL,
                           s->kind == FE_BIAS_ADD
                               ? "Fused %s with BiasAdd must have one extra argument: bias."
                               : "Fused %s with FusedBatchNorm must have four extra arguments: scale, offset, mean, "
                                 "variance.",
                           what);
  s->alpha = dfx__attr_float(n, "leakyrelu_alpha", 0.2f);
  s->eps = dfx__attr_float(n, "epsilon", 1e-4f);
  return DFX_OK;
}

/* One run's epilogue: the pattern and its argument values for `oc`
 * output channels. */
typedef struct fe_args {
  const fe_spec *s;
  const void *bias; /* BiasAdd: the bias tensor's elements (T) */
  double *k, *b;    /* FusedBatchNorm: per-channel factor and offset (owned) */
} fe_args;

/* Checks the argument inputs ctx->in[first ...] against oc channels and
 * fills *a (free with fe_args_free). */
static inline dfx_code fe_args_init(dfx_kctx *ctx, const fe_spec *s, int first, int64_t oc, fe_args *a) {
  static const char *const names[] = {"scale", "offset", "estimated_mean", "estimated_variance"};
  char b1[96];
  memset(a, 0, sizeof *a);
  a->s = s;
  for (int i = 0; i < s->n_args; i++) {
    const dfx_tensor *t = ctx->in[first + i];
    const char *name = s->kind == FE_BIAS_ADD ? "bias" : names[i];
    if (t->dtype != ctx->in[0]->dtype)
      return dfx__kctx_fail(ctx, DFX_EINVAL, "%s must have the input's dtype", name);
    if (s->kind == FE_BIAS_ADD) {
      for (int d = 0; d + 1 < t->ndims; d++)
        if (t->dims[d] != 1)
          return dfx__kctx_fail(ctx, DFX_EINVAL, "all dimension sizes of bias must be 1 except the last dimension: %s",
                                DFX_SHAPE_STR(t, b1));
    } else if (t->ndims != 1) {
      return dfx__kctx_fail(ctx, DFX_EINVAL, "%s must be 1-dimensional: %s", name, DFX_SHAPE_STR(t, b1));
    }
    if (t->count != oc)
      return dfx__kctx_fail(ctx, DFX_EINVAL, "%s must have one value per output channel: %lld values for %lld channels",
                            name, (long long)t->count, (long long)oc);
  }
  if (s->kind == FE_BIAS_ADD) {
    a->bias = ctx->in[first]->data;
    return DFX_OK;
  }
  a->k = dfx__malloc(sizeof(double) * 2 * (size_t)(oc ? oc : 1));
  if (!a->k) return dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory");
  a->b = a->k + oc;
  const dfx_tensor *scale = ctx->in[first], *offset = ctx->in[first + 1], *mean = ctx->in[first + 2],
                   *var = ctx->in[first + 3];
  for (int64_t j = 0; j < oc; j++) {
    double sc = dfx__tensor_get_f64(scale, j), m = dfx__tensor_get_f64(mean, j);
    double v = dfx__tensor_get_f64(var, j), o = dfx__tensor_get_f64(offset, j);
    a->k[j] = sc / sqrt(v + (double)s->eps);
    a->b[j] = o - m * a->k[j];
  }
  return DFX_OK;
}

static inline void fe_args_free(fe_args *a) { dfx__free(a->k); }

/* The activations, on a value v of type T (unary.c's formulas). */
#define FE_ACT_RELU(T, v) ((v) < 0 ? (T)0 : (v))
#define FE_ACT_RELU6(T, v) ((v) < 0 ? (T)0 : (v) > 6 ? (T)6 : (v))
#define FE_ACT_ELU_float(v) ((v) < 0 ? expm1f(v) : (v))
#define FE_ACT_ELU_double(v) ((v) < 0 ? expm1(v) : (v))

/* Rows of oc values: add the bias (T) or apply the batch norm (double),
 * then the activation; one loop per activation so each vectorises. */
#define FE_DEFINE(T)                                                                                          \
  static inline void fe_rows_##T(const fe_args *a, T *y, int64_t rows, int64_t oc) {                        \
    const fe_spec *s = a->s;                                                                                 \
    const T *bias = a->bias;                                                                                 \
    const T alpha = (T)s->alpha;                                                                             \
    for (int64_t r = 0; r < rows; r++, y += oc) {                                                            \
      if (s->kind == FE_BIAS_ADD)                                                                            \
        for (int64_t j = 0; j < oc; j++) y[j] = y[j] + bias[j];                                              \
      else                                                                                                   \
        for (int64_t j = 0; j < oc; j++) y[j] = (T)((double)y[j] * a->k[j] + a->b[j]);                       \
      switch (s->act) {                                                                                      \
      case FE_NONE: break;                                                                                   \
      case FE_RELU:                                                                                          \
        for (int64_t j = 0; j < oc; j++) y[j] = FE_ACT_RELU(T, y[j]);                                        \
        break;                                                                                               \
      case FE_RELU6:                                                                                         \
        for (int64_t j = 0; j < oc; j++) y[j] = FE_ACT_RELU6(T, y[j]);                                       \
        break;                                                                                               \
      case FE_ELU:                                                                                           \
        for (int64_t j = 0; j < oc; j++) y[j] = FE_ACT_ELU_##T(y[j]);                                        \
        break;                                                                                               \
      case FE_LEAKY_RELU:                                                                                    \
        for (int64_t j = 0; j < oc; j++) y[j] = y[j] > 0 ? y[j] : y[j] * alpha;                              \
        break;                                                                                               \
      }                                                                                                      \
    }                                                                                                        \
  }
FE_DEFINE(float)
FE_DEFINE(double)
#undef FE_DEFINE

/* float32 with a bias (what fold_batchnorm leaves): the same arithmetic in
 * 16-wide vectors, branch-free (the scalar form's compares are branches
 * that mispredict on data of both signs), with the scalar form for the
 * tail. Compares give all-ones lanes, so an activation is a select by
 * mask: NaN fails every compare and passes through, as in the scalar form,
 * and -0 is kept by Relu as there. Compiled for AVX-512F, AVX2 and the
 * baseline, chosen at load by the CPU's features. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__has_attribute)
/* Not under TSan: its runtime is not up when the loader runs ifunc resolvers. */
#if __has_attribute(target_clones) && !defined(__SANITIZE_THREAD__)
#define FE_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#endif
#endif
#ifndef FE_CLONES
#define FE_CLONES
#endif

typedef float fe_v16 __attribute__((vector_size(64)));
typedef int32_t fe_m16 __attribute__((vector_size(64)));

#define FE_SELECT(m, a, b) ((fe_v16)(((fe_m16)(a) & (m)) | ((fe_m16)(b) & ~(m))))

FE_CLONES static void fe_bias_rows_f32(const fe_args *a, float *y, int64_t rows, int64_t oc) {
  const float *bias = a->bias;
  const fe_act act = a->s->act;
  const float alpha = a->s->alpha;
  const fe_v16 zero = {0}, six = zero + 6, va = zero + alpha;
  for (int64_t r = 0; r < rows; r++, y += oc) {
    int64_t j = 0;
    if (act != FE_ELU)
      for (; j + 16 <= oc; j += 16) {
        fe_v16 v, b;
        memcpy(&v, y + j, sizeof v);
        memcpy(&b, bias + j, sizeof b);
        v = v + b;
        if (act == FE_RELU || act == FE_RELU6) v = FE_SELECT(v < zero, zero, v);
        if (act == FE_RELU6) v = FE_SELECT(v > six, six, v);
        if (act == FE_LEAKY_RELU) v = FE_SELECT(v > zero, v, v * va);
        memcpy(y + j, &v, sizeof v);
      }
    for (; j < oc; j++) {
      float v = y[j] + bias[j];
      switch (act) {
      case FE_NONE: break;
      case FE_RELU: v = FE_ACT_RELU(float, v); break;
      case FE_RELU6: v = FE_ACT_RELU6(float, v); break;
      case FE_ELU: v = FE_ACT_ELU_float(v); break;
      case FE_LEAKY_RELU: v = v > 0 ? v : v * alpha; break;
      }
      y[j] = v;
    }
  }
}
#undef FE_SELECT

/* The epilogue as conv.h's callback shape: ud is a const fe_args *. */
static inline void fe_apply(const void *ud, void *y, int64_t rows, int64_t oc, int dbl) {
  const fe_args *a = ud;
  if (dbl)
    fe_rows_double(ud, y, rows, oc);
  else if (a->s->kind == FE_BIAS_ADD)
    fe_bias_rows_f32(a, y, rows, oc);
  else
    fe_rows_float(ud, y, rows, oc);
}

#endif
