/* apply.c - the optimizer update ops, ref (Apply*) and resource
 * (ResourceApply*) forms: GradientDescent, Momentum (use_nesterov), Adam
 * (use_nesterov) and RMSProp, with TensorFlow's update formulas
 * (training_ops), computed in the variable's dtype, float or double. The
 * variable and its slots (accum, m, v, ms, mom) are locked together in
 * address order and updated in place (copy-on-write when a reader holds a
 * value, core/var.h). Elementwise; var, slots and grad share one shape and
 * the hyper-parameters are scalars. A ref form returns var's new value. */
#include <math.h>
#include <string.h>

#include "step.h"
#include "vref.h"

typedef enum opt_kind { OPT_GD, OPT_MOMENTUM, OPT_ADAM, OPT_RMSPROP } opt_kind;

/* Where each op keeps its inputs: n_vars variables first, then scalars
 * (in the order their formulas read them), then the gradient. */
typedef struct opt_layout {
  int n_vars;
  int n_scalars;
  int scalar[6];
  int grad;
} opt_layout;

static const opt_layout layouts[] = {
    [OPT_GD] = {1, 1, {1}, 2},                       /* var, alpha, delta */
    [OPT_MOMENTUM] = {2, 2, {2, 4}, 3},              /* var, accum, lr, grad, momentum */
    [OPT_ADAM] = {3, 6, {3, 4, 5, 6, 7, 8}, 9},      /* var, m, v, b1p, b2p, lr, b1, b2, eps, grad */
    [OPT_RMSPROP] = {3, 4, {3, 4, 5, 6}, 7},         /* var, ms, mom, lr, rho, momentum, eps, grad */
};

/* The update of n elements, in T. s[] are the scalars in layout order. */
#define DEFINE_UPDATE(T, SQRT)                                                                               \
  static void update_##T(opt_kind k, bool nesterov, T *var, T *a, T *b, const T *g, const T *s, int64_t n) { \
    switch (k) {                                                                                             \
      case OPT_GD:                                                                                           \
        for (int64_t i = 0; i < n; i++) var[i] -= s[0] * g[i];                                               \
        break;                                                                                               \
      case OPT_MOMENTUM: {                                                                                   \
        T lr = s[0], mom = s[1];                                                                             \
        for (int64_t i = 0; i < n; i++) {                                                                    \
          a[i] = a[i] * mom + g[i];                                                                          \
          var[i] -= nesterov ? g[i] * lr + a[i] * mom * lr : a[i] * lr;                                      \
        }                                                                                                    \
        break;                                                                                               \
      }                                                                                                      \
      case OPT_ADAM: {                                                                                       \
        T b1p = s[0], b2p = s[1], lr = s[2], b1 = s[3], b2 = s[4], eps = s[5];                               \
        T alpha = lr * SQRT((T)1 - b2p) / ((T)1 - b1p);                                                      \
        for (int64_t i = 0; i < n; i++) {                                                                    \
          a[i] += (g[i] - a[i]) * ((T)1 - b1);                                                               \
          b[i] += (g[i] * g[i] - b[i]) * ((T)1 - b2);                                                        \
          T num = nesterov ? (g[i] * ((T)1 - b1) + b1 * a[i]) : a[i];                                        \
          var[i] -= num * alpha / (SQRT(b[i]) + eps);                                                        \
        }                                                                                                    \
        break;                                                                                               \
      }                                                                                                      \
      case OPT_RMSPROP: {                                                                                    \
        T lr = s[0], rho = s[1], momentum = s[2], eps = s[3];                                                \
        for (int64_t i = 0; i < n; i++) {                                                                    \
          a[i] += (g[i] * g[i] - a[i]) * ((T)1 - rho);                                                       \
          b[i] = b[i] * momentum + lr * g[i] / SQRT(a[i] + eps);                                             \
          var[i] -= b[i];                                                                                    \
        }                                                                                                    \
        break;                                                                                               \
      }                                                                                                      \
    }                                                                                                        \
  }
DEFINE_UPDATE(float, sqrtf)
DEFINE_UPDATE(double, sqrt)

static const char *const var_names[4][3] = {
    [OPT_GD] = {"var"}, [OPT_MOMENTUM] = {"var", "accum"}, [OPT_ADAM] = {"var", "m", "v"},
    [OPT_RMSPROP] = {"var", "ms", "mom"}};

static dfx_code apply(dfx_kctx *ctx, opt_kind k, bool resource) {
  const opt_layout *L = &layouts[k];
  dfx_var *v[3] = {NULL, NULL, NULL};
  for (int i = 0; i < L->n_vars; i++)
    if (!(v[i] = resource ? dfx__vref_handle(ctx, i) : dfx__vref_var(ctx, i, true))) return ctx->st->code;
  const dfx_tensor *g = ctx->in[L->grad];
  dfx_dtype dt = (dfx_dtype)g->dtype;
  char b1[128], b2[128];
  union {
    float f[6];
    double d[6];
  } s;
  for (int j = 0; j < L->n_scalars; j++) {
    const dfx_tensor *t = ctx->in[L->scalar[j]];
    const char *arg = ctx->node->def->in[L->scalar[j]].name;
    if (t->ndims != 0)
      return dfx__kctx_fail(ctx, DFX_EINVAL, "%s is not a scalar: %s", arg, DFX_SHAPE_STR(t, b1));
    if (dt == DFX_F32) s.f[j] = *(const float *)t->data;
    else s.d[j] = *(const double *)t->data;
  }
  bool nesterov = dfx__attr_bool(ctx->node, "use_nesterov", false);
  dfx_code c = DFX_OK;
  dfx_tensor *w[3] = {NULL, NULL, NULL};
  dfx__var_lock_many(v, L->n_vars);
  for (int i = 0; i < L->n_vars && c == DFX_OK; i++) {
    const dfx_tensor *cur = v[i]->value;
    if (!cur) c = dfx__vref_uninit(ctx, v[i]);
    else if (cur->dtype != dt)
      c = dfx__kctx_fail(ctx, DFX_EINVAL, "%s (variable %s) holds %s, but grad is %s", var_names[k][i], v[i]->name,
                         dfx_dtype_name((dfx_dtype)cur->dtype), dfx_dtype_name(dt));
    else if (!dfx__tensor_same_shape(cur, g))
      c = dfx__kctx_fail(ctx, DFX_EINVAL, "%s and grad do not have the same shape%s %s", var_names[k][i],
                         DFX_SHAPE_STR(cur, b1), DFX_SHAPE_STR(g, b2));
  }
  /* Two inputs may name one variable (a slot aliasing var); TF then
   * updates one buffer through both names, and so does this. */
  for (int i = 0; i < L->n_vars && c == DFX_OK; i++) {
    for (int j = 0; j < i && !w[i]; j++)
      if (v[j] == v[i]) w[i] = w[j];
    if (!w[i] && !(w[i] = dfx__var_mut(v[i])))
      c = dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory updating variable %s", v[i]->name);
  }
  if (c == DFX_OK) {
    void *a = L->n_vars > 1 ? w[1]->data : NULL, *bb = L->n_vars > 2 ? w[2]->data : NULL;
    if (dt == DFX_F32) update_float(k, nesterov, w[0]->data, a, bb, g->data, s.f, g->count);
    else update_double(k, nesterov, w[0]->data, a, bb, g->data, s.d, g->count);
    if (!resource) ctx->out[0] = dfx__tensor_ref(w[0]);
  }
  dfx__var_unlock_many(v, L->n_vars);
  return c;
}

static dfx_code apply_gd(dfx_kctx *ctx) { return apply(ctx, OPT_GD, false); }
static dfx_code apply_momentum(dfx_kctx *ctx) { return apply(ctx, OPT_MOMENTUM, false); }
static dfx_code apply_adam(dfx_kctx *ctx) { return apply(ctx, OPT_ADAM, false); }
static dfx_code apply_rmsprop(dfx_kctx *ctx) { return apply(ctx, OPT_RMSPROP, false); }
static dfx_code res_apply_gd(dfx_kctx *ctx) { return apply(ctx, OPT_GD, true); }
static dfx_code res_apply_momentum(dfx_kctx *ctx) { return apply(ctx, OPT_MOMENTUM, true); }
static dfx_code res_apply_adam(dfx_kctx *ctx) { return apply(ctx, OPT_ADAM, true); }
static dfx_code res_apply_rmsprop(dfx_kctx *ctx) { return apply(ctx, OPT_RMSPROP, true); }

#define FT "T: {float, double}"
#define F DFX_KERNEL_STATEFUL
#define VI dfx__vref_init, dfx__vref_fini
static const dfx_kernel_def kernels[] = {
    {"ApplyGradientDescent", FT, apply_gd, F, VI},
    {"ApplyMomentum", FT, apply_momentum, F, VI},
    {"ApplyAdam", FT, apply_adam, F, VI},
    {"ApplyRMSProp", FT, apply_rmsprop, F, VI},
    {"ResourceApplyGradientDescent", FT, res_apply_gd, F, NULL, NULL},
    {"ResourceApplyMomentum", FT, res_apply_momentum, F, NULL, NULL},
    {"ResourceApplyAdam", FT, res_apply_adam, F, NULL, NULL},
    {"ResourceApplyRMSProp", FT, res_apply_rmsprop, F, NULL, NULL},
    {NULL}};

void dfx__kernels_var_apply(dfx_registry *r);
void dfx__kernels_var_apply(dfx_registry *r) { dfx__kernels_add(r, kernels); }
