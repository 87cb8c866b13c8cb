/* res_vars.c - TF2 resource variables: VarHandleOp makes (or finds) the
 * variable in the session's store and outputs its handle; ReadVariableOp,
 * AssignVariableOp, AssignAdd/SubVariableOp, VarIsInitializedOp,
 * DestroyResourceOp and ResourceGather act through the handle (vref.h).
 * Reads take a snapshot under the variable's lock; updates are in place
 * when no reader holds the value, else copy-on-write (core/var.h). */
#include <string.h>

#include "gather/gutil.h"
#include "step.h"
#include "vref.h"

static dfx_code var_handle(dfx_kctx *ctx) {
  const char *c, *nm;
  dfx__vref_var_node_name(ctx->node, &c, &nm);
  dfx_var *v = NULL;
  if (dfx__var_lookup(ctx->step ? ctx->step->store : NULL, c, nm, dfx__attr_type(ctx->node, "dtype", DFX_INVALID),
                      true, &v, ctx->st))
    return ctx->st->code;
  dfx_tensor *h = dfx__kctx_alloc(ctx, 0, DFX_RESOURCE, 0, NULL);
  if (!h) return ctx->st->code;
  ((void **)h->data)[0] = v;
  return DFX_OK;
}

/* The value of the variable behind handle input 0 (a new reference), with
 * TF's checks; NULL after failing ctx. */
static dfx_tensor *read_checked(dfx_kctx *ctx, dfx_var **vp) {
  dfx_var *v = dfx__vref_handle(ctx, 0);
  if (!v) return NULL;
  if (vp) *vp = v;
  dfx_tensor *t = dfx__var_read(v);
  if (!t) {
    dfx__kctx_fail(ctx, DFX_EPRECOND,
                   "Error while reading resource variable %s from Container: %s. This could mean that the variable "
                   "was uninitialized.",
                   v->name, v->container);
    return NULL;
  }
  dfx_dtype want = dfx__attr_type(ctx->node, "dtype", DFX_INVALID);
  if (want != DFX_INVALID && t->dtype != want) {
    dfx__kctx_fail(ctx, DFX_EINVAL, "Trying to read variable %s with wrong dtype. Expected %s got %s", v->name,
                   dfx_dtype_name((dfx_dtype)t->dtype), dfx_dtype_name(want));
    dfx__tensor_unref(t);
    return NULL;
  }
  return t;
}

static dfx_code read_variable(dfx_kctx *ctx) {
  dfx_tensor *t = read_checked(ctx, NULL);
  if (!t) return ctx->st->code;
  ctx->out[0] = t;
  return DFX_OK;
}

static dfx_code assign_variable(dfx_kctx *ctx) {
  dfx_var *v = dfx__vref_handle(ctx, 0);
  if (!v) return ctx->st->code;
  const dfx_tensor *rhs = ctx->in[1];
  dfx_dtype dt = (dfx_dtype)rhs->dtype;
  char b1[128], b2[128];
  dfx__var_lock(v);
  dfx_dtype have = v->dtype;
  bool shape_bad = v->value && dfx__attr_bool(ctx->node, "validate_shape", false) &&
                   !dfx__tensor_same_shape(v->value, rhs);
  if (shape_bad) DFX_SHAPE_STR(v->value, b1);
  dfx__var_unlock(v);
  if (have != DFX_INVALID && have != dt)
    return dfx__kctx_fail(ctx, DFX_EINVAL,
                          "Trying to assign variable with wrong dtype. Expected %s got %s (variable %s)",
                          dfx_dtype_name(have), dfx_dtype_name(dt), v->name);
  if (shape_bad)
    return dfx__kctx_fail(ctx, DFX_EINVAL,
                          "Trying to assign to variable with tensor with wrong shape. Expected %s got %s", b1,
                          DFX_SHAPE_STR(rhs, b2));
  dfx_tensor *t = dfx__vref_take_value(ctx, 1);
  if (!t) return ctx->st->code;
  dfx__var_set(v, t);
  return DFX_OK;
}

static dfx_code update_variable(dfx_kctx *ctx, dfx_gop op) {
  dfx_var *v = dfx__vref_handle(ctx, 0);
  if (!v) return ctx->st->code;
  const dfx_tensor *rhs = ctx->in[1];
  char b1[128], b2[128];
  dfx_code c = DFX_OK;
  dfx__var_lock(v);
  if (!v->value) {
    c = dfx__kctx_fail(ctx, DFX_EPRECOND,
                       "Error while reading resource variable %s from Container: %s. This could mean that the "
                       "variable was uninitialized.",
                       v->name, v->container);
  } else if (v->value->dtype != rhs->dtype) {
    c = dfx__kctx_fail(ctx, DFX_EINVAL, "Trying to update variable %s of %s with a %s value", v->name,
                       dfx_dtype_name((dfx_dtype)v->value->dtype), dfx_dtype_name((dfx_dtype)rhs->dtype));
  } else if (!dfx__tensor_same_shape(v->value, rhs)) {
    c = dfx__kctx_fail(ctx, DFX_EINVAL,
                       "Cannot update variable with shape %s using a Tensor with shape %s, shapes must be equal.",
                       DFX_SHAPE_STR(v->value, b1), DFX_SHAPE_STR(rhs, b2));
  } else {
    dfx_tensor *t = dfx__var_mut(v);
    c = t ? dfx__g_apply(ctx, (dfx_dtype)t->dtype, op, t->data, rhs->data, t->count, 1)
          : dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory updating variable %s", v->name);
  }
  dfx__var_unlock(v);
  return c;
}
static dfx_code assign_add_variable(dfx_kctx *ctx) { return update_variable(ctx, DFX_GOP_ADD); }
static dfx_code assign_sub_variable(dfx_kctx *ctx) { return update_variable(ctx, DFX_GOP_SUB); }

static dfx_code var_is_initialized(dfx_kctx *ctx) {
  dfx_var *v = dfx__vref_handle(ctx, 0);
  if (!v) return ctx->st->code;
  dfx_tensor *o = dfx__kctx_alloc(ctx, 0, DFX_BOOL, 0, NULL);
  if (!o) return ctx->st->code;
  *(uint8_t *)o->data = dfx__var_initialized(v);
  return DFX_OK;
}

/* The store cannot drop an object while runs may hold its pointer, so
 * destroying a variable makes it uninitialised: reads then fail as TF's
 * do after DestroyResourceOp, and a new assignment revives it. */
static dfx_code destroy_resource(dfx_kctx *ctx) {
  const dfx_tensor *h = ctx->in[0];
  void *obj = h->dtype == DFX_RESOURCE && h->count == 1 ? ((void *const *)h->data)[0] : NULL;
  dfx_resmgr *rm = ctx->step ? ctx->step->store : NULL;
  if (obj && rm && dfx__resmgr_contains(rm, &dfx__var_kind, obj)) {
    dfx__var_clear(obj);
    return DFX_OK;
  }
  if (dfx__attr_bool(ctx->node, "ignore_lookup_error", true)) return DFX_OK;
  return dfx__kctx_fail(ctx, DFX_ENOTFOUND, "Resource handle does not name a variable of this session");
}

static dfx_code resource_gather(dfx_kctx *ctx) {
  dfx_tensor *t = read_checked(ctx, NULL);
  if (!t) return ctx->st->code;
  dfx_tensor *h = ctx->in[0];
  ctx->in[0] = t;
  int64_t bd = dfx__attr_int(ctx->node, "batch_dims", 0);
  dfx_code c = dfx__g_gather(ctx, bd, bd);
  ctx->in[0] = h;
  dfx__tensor_unref(t);
  return c;
}

#define ST DFX_KERNEL_STATEFUL
static const dfx_kernel_def kernels[] = {
    {"VarHandleOp", NULL, var_handle, DFX_KERNEL_CHEAP | ST, NULL, NULL},
    {"ReadVariableOp", NULL, read_variable, DFX_KERNEL_CHEAP | ST, NULL, NULL},
    {"AssignVariableOp", NULL, assign_variable, DFX_KERNEL_CHEAP | ST, NULL, NULL},
    {"AssignAddVariableOp", "dtype: " DFX_G_NUM, assign_add_variable, DFX_KERNEL_CHEAP | ST, NULL, NULL},
    {"AssignSubVariableOp", "dtype: " DFX_G_NUM, assign_sub_variable, DFX_KERNEL_CHEAP | ST, NULL, NULL},
    {"VarIsInitializedOp", NULL, var_is_initialized, DFX_KERNEL_CHEAP | ST, NULL, NULL},
    {"DestroyResourceOp", NULL, destroy_resource, DFX_KERNEL_CHEAP | ST, NULL, NULL},
    {"ResourceGather", "dtype: " DFX_G_COPY, resource_gather, DFX_KERNEL_CHEAP | ST, NULL, NULL},
    {NULL}};

void dfx__kernels_var_res(dfx_registry *r);
void dfx__kernels_var_res(dfx_registry *r) { dfx__kernels_add(r, kernels); }
