/* ref_vars.c - TF1 ref variables: VariableV2 (and Variable,
 * TemporaryVariable) output their variable's current value; Assign,
 * AssignAdd, AssignSub and IsVariableInitialized act on the variable their
 * ref input leads to (vref.h), so values persist across runs of a session.
 * Each update returns the variable's new value (TF's output_ref read right
 * after the update). An Assign-family node whose ref input does not come
 * from a variable (a frozen graph's Assign on a Const) keeps dfexec's old
 * value semantics: the output is the updated value, nothing persists. */
#include <string.h>

#include "gather/gutil.h"
#include "step.h"
#include "vref.h"

/* ---- VariableV2 / Variable / TemporaryVariable ---- */

static dfx_code variable(dfx_kctx *ctx) {
  const char *c, *nm;
  dfx__vref_var_node_name(ctx->node, &c, &nm);
  dfx_dtype dt = dfx__attr_type(ctx->node, "dtype", DFX_INVALID);
  dfx_var *v = NULL;
  if (dfx__var_lookup(ctx->step ? ctx->step->store : NULL, c, nm, dt, true, &v, ctx->st)) return ctx->st->code;
  dfx_tensor *t = dfx__var_read(v);
  /* Uninitialised: the initialiser (an Assign) still needs an output. */
  if (!t && !(t = dfx__var_uninit_marker(v, dt))) return dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory");
  ctx->out[0] = t;
  return DFX_OK;
}

/* ---- Assign ---- */

/* The value-semantics forms, for refs that are not variables. */
static dfx_code assign_value(dfx_kctx *ctx) {
  const dfx_tensor *lhs = ctx->in[0], *rhs = ctx->in[1];
  char b1[128], b2[128];
  if (dfx__attr_bool(ctx->node, "validate_shape", true) && !dfx__var_uninit_name(lhs) &&
      !dfx__tensor_same_shape(lhs, rhs))
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Assign requires shapes of both tensors to match. lhs shape= %s rhs shape= %s",
                          DFX_SHAPE_STR(lhs, b1), DFX_SHAPE_STR(rhs, b2));
  dfx__kctx_forward(ctx, 1, 0);
  return DFX_OK;
}

static dfx_code assign(dfx_kctx *ctx) {
  dfx_var *v = dfx__vref_var(ctx, 0, false);
  if (!v) return ctx->st->code ? ctx->st->code : assign_value(ctx);
  const dfx_tensor *rhs = ctx->in[1];
  char b1[128], b2[128];
  if (dfx__attr_bool(ctx->node, "validate_shape", true)) {
    dfx_tensor *old = dfx__var_read(v);
    bool same = !old || dfx__tensor_same_shape(old, rhs);
    if (!same)
      dfx__kctx_fail(ctx, DFX_EINVAL, "Assign requires shapes of both tensors to match. lhs shape= %s rhs shape= %s",
                     DFX_SHAPE_STR(old, b1), DFX_SHAPE_STR(rhs, b2));
    dfx__tensor_unref(old);
    if (!same) return ctx->st->code;
  }
  dfx_tensor *t = dfx__vref_take_value(ctx, 1);
  if (!t) return ctx->st->code;
  ctx->out[0] = dfx__tensor_ref(t);
  dfx__var_set(v, t);
  return DFX_OK;
}

/* ---- AssignAdd / AssignSub ---- */

static dfx_code update_value(dfx_kctx *ctx, dfx_gop op) {
  const dfx_tensor *lhs = ctx->in[0], *rhs = ctx->in[1];
  char b1[128], b2[128];
  if (!dfx__tensor_same_shape(lhs, rhs))
    return dfx__kctx_fail(ctx, DFX_EINVAL,
                          "Cannot update variable with shape %s using a Tensor with shape %s, shapes must be equal.",
                          DFX_SHAPE_STR(lhs, b1), DFX_SHAPE_STR(rhs, b2));
  dfx_tensor *out = dfx__tensor_copy(lhs);
  if (!out) return dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory copying the input");
  ctx->out[0] = out;
  return dfx__g_apply(ctx, (dfx_dtype)out->dtype, op, out->data, rhs->data, out->count, 1);
}

static dfx_code update(dfx_kctx *ctx, dfx_gop op) {
  dfx_var *v = dfx__vref_var(ctx, 0, false);
  if (!v) return ctx->st->code ? ctx->st->code : update_value(ctx, op);
  const dfx_tensor *rhs = ctx->in[1];
  char b1[128], b2[128];
  dfx_code c = DFX_OK;
  dfx__var_lock(v);
  if (!v->value) {
    c = dfx__vref_uninit(ctx, v);
  } else if (!dfx__tensor_same_shape(v->value, rhs)) {
    c = dfx__kctx_fail(ctx, DFX_EINVAL,
                       "Cannot update variable with shape %s using a Tensor with shape %s, shapes must be equal.",
                       DFX_SHAPE_STR(v->value, b1), DFX_SHAPE_STR(rhs, b2));
  } else {
    dfx_tensor *t = dfx__var_mut(v);
    if (!t) c = dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory updating variable %s", v->name);
    else if ((c = dfx__g_apply(ctx, (dfx_dtype)t->dtype, op, t->data, rhs->data, t->count, 1)) == DFX_OK)
      ctx->out[0] = dfx__tensor_ref(t);
  }
  dfx__var_unlock(v);
  return c;
}
static dfx_code assign_add(dfx_kctx *ctx) { return update(ctx, DFX_GOP_ADD); }
static dfx_code assign_sub(dfx_kctx *ctx) { return update(ctx, DFX_GOP_SUB); }

/* ---- IsVariableInitialized ---- */

static dfx_code is_initialized(dfx_kctx *ctx) {
  dfx_var *v = dfx__vref_var(ctx, 0, false);
  if (!v && ctx->st->code) return ctx->st->code;
  dfx_tensor *o = dfx__kctx_alloc(ctx, 0, DFX_BOOL, 0, NULL);
  if (!o) return ctx->st->code;
  /* Not a variable's ref: a plain tensor is a value, so "initialised"
   * unless it is an uninitialised marker. */
  *(uint8_t *)o->data = v ? dfx__var_initialized(v) : !dfx__var_uninit_name(ctx->in[0]);
  return DFX_OK;
}

#define ANY_T "T: {" DFX_G_NUM_LIST ", bool, " DFX_G_QUANT_LIST ", string, resource, variant}"
#define NUM_T "T: " DFX_G_NUM
#define ST DFX_KERNEL_STATEFUL
#define VI dfx__vref_init, dfx__vref_fini
static const dfx_kernel_def kernels[] = {
    {"VariableV2", NULL, variable, DFX_KERNEL_CHEAP | ST, NULL, NULL},
    {"Variable", NULL, variable, DFX_KERNEL_CHEAP | ST, NULL, NULL},
    {"TemporaryVariable", NULL, variable, DFX_KERNEL_CHEAP | ST, NULL, NULL},
    {"Assign", ANY_T, assign, DFX_KERNEL_CHEAP | ST, VI},
    {"AssignAdd", NUM_T, assign_add, DFX_KERNEL_CHEAP | ST, VI},
    {"AssignSub", NUM_T, assign_sub, DFX_KERNEL_CHEAP | ST, VI},
    {"IsVariableInitialized", NULL, is_initialized, DFX_KERNEL_CHEAP | ST, VI},
    {NULL}};

void dfx__kernels_var_ref(dfx_registry *r);
void dfx__kernels_var_ref(dfx_registry *r) { dfx__kernels_add(r, kernels); }
