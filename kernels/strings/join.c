/* join.c - StringJoin: element-wise concatenation of N string tensors with
 * a separator (TF1's sharded Saver builds its temporary file names with
 * it). Inputs are all the same shape or scalars, which broadcast. */
#include <string.h>

#include "alloc.h"
#include "sutil.h"

static dfx_code string_join(dfx_kctx *ctx) {
  const dfx_tensor *shape_of = NULL;
  char b1[128], b2[128];
  for (int i = 0; i < ctx->n_in; i++) {
    const dfx_tensor *t = ctx->in[i];
    if (t->ndims == 0) continue;
    if (shape_of && !dfx__tensor_same_shape(shape_of, t))
      return dfx__kctx_fail(ctx, DFX_EINVAL, "Input shapes do not match: %s vs. %s", DFX_SHAPE_STR(shape_of, b1),
                            DFX_SHAPE_STR(t, b2));
    if (!shape_of) shape_of = t;
  }
  dfx_tensor *out = dfx__kctx_alloc(ctx, 0, DFX_STRING, shape_of ? shape_of->ndims : 0,
                                    shape_of ? shape_of->dims : NULL);
  if (!out) return ctx->st->code;
  const char *sep = dfx__attr_str(ctx->node, "separator", "");
  size_t sl = strlen(sep);
  dfx_str *o = out->data;
  for (int64_t k = 0; k < out->count; k++) {
    size_t len = 0;
    for (int i = 0; i < ctx->n_in; i++) {
      const dfx_tensor *t = ctx->in[i];
      len += ((const dfx_str *)t->data)[t->ndims ? k : 0].len + (i ? sl : 0);
    }
    if (len && !(o[k].ptr = dfx__malloc(len))) return dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory joining strings");
    o[k].len = len;
    size_t at = 0;
    for (int i = 0; i < ctx->n_in; i++) {
      const dfx_tensor *t = ctx->in[i];
      const dfx_str *s = &((const dfx_str *)t->data)[t->ndims ? k : 0];
      if (i && sl) memcpy(o[k].ptr + at, sep, sl), at += sl;
      if (s->len) memcpy(o[k].ptr + at, s->ptr, s->len), at += s->len;
    }
  }
  return DFX_OK;
}

static const dfx_kernel_def kernels[] = {{"StringJoin", NULL, string_join, DFX_KERNEL_CHEAP, NULL, NULL}, {NULL}};

void dfx__kernels_strings_join(dfx_registry *r);
void dfx__kernels_strings_join(dfx_registry *r) { dfx__kernels_add(r, kernels); }
