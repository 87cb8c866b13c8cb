/* base.c - signatures of the control-flow ops (run by frames/propagate.c, never
 * through a kernel) and the kernels of the engine's own plain ops: Const,
 * Placeholder, Identity and friends. */
#include <string.h>

#include "array/autil.h"
#include "kernel.h"


/* Identity-like ops forward their input tensors unchanged (shared, not copied). */
static dfx_code forward_all(dfx_kctx *ctx) {
  for (int i = 0; i < ctx->n_out && i < ctx->n_in; i++) dfx__kctx_forward(ctx, i, i);
  return DFX_OK;
}

static dfx_code noop(dfx_kctx *ctx) {
  (void)ctx;
  return DFX_OK;
}

/* The state is an immortal view of the value tensor (core/tensor.h), so a
 * Const in a loop body or with many consumers costs no atomic reference
 * counts at all. */
static dfx_code const_kernel(dfx_kctx *ctx) {
  ctx->out[0] = dfx__tensor_ref(ctx->state);
  return DFX_OK;
}

static void const_fini(void *state) { dfx__tensor_free_immortal(state); }

static dfx_code const_init(const dfx_node *n, void **state, dfx_status *st) {
  const dfx_tensor *v = dfx__attr_tensor(n, "value");
  if (!v) return dfx__status_set(st, DFX_EINVAL, "Const has no 'value' tensor attr");
  dfx_dtype want = dfx__attr_type(n, "dtype", (dfx_dtype)v->dtype);
  if (want != v->dtype)
    return dfx__status_set(st, DFX_EINVAL, "Const 'value' is %s but attr dtype is %s",
                           dfx_dtype_name((dfx_dtype)v->dtype), dfx_dtype_name(want));
  dfx_tensor *view = dfx__tensor_reshaped((dfx_tensor *)v, v->ndims, v->dims);
  if (!view) return dfx__status_set(st, DFX_ENOMEM, "out of memory");
  dfx__tensor_set_immortal(view);
  *state = view;
  return DFX_OK;
}

/* A Placeholder that runs was not fed (fed ones are replaced by their feed). */
static dfx_code placeholder_kernel(dfx_kctx *ctx) {
  dfx_dtype t = dfx__attr_type(ctx->node, "dtype", dfx__attr_type(ctx->node, "T", DFX_INVALID));
  return dfx__kctx_fail(ctx, DFX_EINVAL, "You must feed a value for placeholder tensor '%s' with dtype %s",
                        ctx->node->name, dfx_dtype_name(t));
}

/* Forwarding and feeding never look at elements: every dtype. A Const value
 * can be any dtype a TensorProto decodes to (graph/tensor_proto.c has no
 * variant values). */
#define ALL DFX_ARR_ALL_TYPES
#define NO_VARIANT                                                                                      \
  "{float, double, int32, uint8, int16, int8, string, complex64, int64, bool, qint8, quint8, qint32, " \
  "bfloat16, qint16, quint16, uint16, complex128, half, resource, uint32, uint64}"
#define FWD DFX_KERNEL_CHEAP | DFX_KERNEL_FORWARD

static const dfx_kernel_def kernels[] = {
    {"Const", "dtype: " NO_VARIANT, const_kernel, DFX_KERNEL_CHEAP | DFX_KERNEL_STATE_VALUE, const_init, const_fini},
    {"Placeholder", "dtype: " ALL, placeholder_kernel, DFX_KERNEL_CHEAP, NULL, NULL},
    {"PlaceholderV2", "dtype: " ALL, placeholder_kernel, DFX_KERNEL_CHEAP, NULL, NULL},
    {"PlaceholderWithDefault", "dtype: " ALL, forward_all, FWD, NULL, NULL},
    {"Identity", "T: " ALL, forward_all, FWD, NULL, NULL},
    {"IdentityN", "T: " ALL, forward_all, FWD, NULL, NULL},
    {"StopGradient", "T: " ALL, forward_all, FWD, NULL, NULL},
    {"PreventGradient", "T: " ALL, forward_all, FWD, NULL, NULL},
    {"Snapshot", "T: " ALL, forward_all, FWD, NULL, NULL},
    {"NoOp", NULL, noop, DFX_KERNEL_CHEAP, NULL, NULL}, /* no type attrs */
    {"_Retval", "T: " ALL, noop, DFX_KERNEL_CHEAP, NULL, NULL}, /* function return: fetching its input is how to read it */
    {"_Arg", "T: " ALL, placeholder_kernel, DFX_KERNEL_CHEAP, NULL, NULL}, /* function argument: fed like a placeholder */
    {NULL}};

void dfx__kernels_base(dfx_registry *r);
void dfx__kernels_base(dfx_registry *r) { dfx__kernels_add(r, kernels); }
