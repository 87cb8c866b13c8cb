/* stack.c - per-run stacks: StackV2/PushV2/PopV2/CloseV2 (resource handles)
 * and the v1 Stack/StackPush/StackPop/StackClose (Ref(string) handles)
 * (tf-semantics §5.3). Elements are shared references to immutable
 * tensors; every field after `mu` is guarded by it. A stack without a
 * max_size grows as long as pushes come; its slot array is held to the
 * tensor byte limit, so a runaway loop fails cleanly instead of exhausting
 * memory through one allocation. */
#include <stdio.h>
#include <uv.h>

#include "alloc.h"
#include "misc.h"
#include "resource.h"

typedef struct dfx_stack {
  uv_mutex_t mu;
  char *name;
  dfx_dtype dtype;
  int64_t max_size;
  bool closed;
  int64_t n, cap;
  dfx_tensor **items;
} dfx_stack;

static int64_t stack_counter;

static void stack_clear(dfx_stack *s) {
  for (int64_t i = 0; i < s->n; i++) dfx__tensor_unref(s->items[i]);
  s->n = 0;
}

static void stack_free(void *obj) {
  dfx_stack *s = obj;
  stack_clear(s);
  dfx__free(s->items);
  dfx__free(s->name);
  uv_mutex_destroy(&s->mu);
  dfx__free(s);
}

static dfx_code stack_create(dfx_kctx *ctx, bool v1) {
  /* TF: a negative max_size means unlimited, which it spells INT32_MAX
   * (tf-semantics §5.3); v1 stacks have no size input at all. */
  int64_t max = INT32_MAX;
  if (!v1) {
    const dfx_tensor *t = ctx->in[0];
    char b[64];
    if (t->ndims != 0 || t->dtype != DFX_I32)
      return dfx__kctx_fail(ctx, DFX_EINVAL, "Stack size must be a scalar, but had shape: %s", DFX_SHAPE_STR(t, b));
    int32_t v = ((const int32_t *)t->data)[0];
    if (v >= 0) max = v;
  }
  dfx_stack *s = dfx__calloc(1, sizeof *s);
  char name[512];
  /* TF's uniquified name: stack_name plus a process-wide counter, so two
   * stacks from one node (or two runs) never share a name in messages. */
  snprintf(name, sizeof name, "%s_%lld", dfx__attr_str(ctx->node, "stack_name", ""),
           (long long)__atomic_add_fetch(&stack_counter, 1, __ATOMIC_RELAXED));
  if (s) s->name = dfx__strdup(name);
  if (!s || !s->name || uv_mutex_init(&s->mu)) {
    if (s) dfx__free(s->name);
    dfx__free(s);
    return dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory creating a stack");
  }
  s->dtype = dfx__attr_type(ctx->node, "elem_type", DFX_INVALID);
  s->max_size = max;
  return dfx__misc_handle_out(ctx, 0, s, stack_free, v1, "_stacks", name);
}
static dfx_code stack_v2_kernel(dfx_kctx *ctx) { return stack_create(ctx, false); }
static dfx_code stack_v1_kernel(dfx_kctx *ctx) { return stack_create(ctx, true); }

static dfx_code push_kernel(dfx_kctx *ctx) {
  dfx_stack *s = dfx__misc_handle_in(ctx, 0, stack_free, "Stack");
  if (!s) return ctx->st->code;
  dfx_tensor *v = ctx->in[1];
  dfx_code c = DFX_OK;
  uv_mutex_lock(&s->mu);
  if (v->dtype != s->dtype) {
    c = dfx__kctx_fail(ctx, DFX_EINVAL, "Must have type %s but got %s", dfx_dtype_name(s->dtype),
                       dfx_dtype_name((dfx_dtype)v->dtype));
  } else if (s->closed) {
    c = dfx__kctx_fail(ctx, DFX_EINVAL, "Stack[%s] has already been closed.", s->name);
  } else if (s->n >= s->max_size) {
    c = dfx__kctx_fail(ctx, DFX_EINVAL, "Stack[%s] overflowed its max_size (%lld)", s->name, (long long)s->max_size);
  } else {
    if (s->n == s->cap) {
      int64_t nc = s->cap ? 2 * s->cap : 16;
      size_t bytes = dfx__mul_size((size_t)nc, sizeof *s->items);
      dfx_tensor **ni = NULL;
      if (bytes > dfx__tensor_limit())
        c = dfx__kctx_fail(ctx, DFX_ELIMIT, "Stack[%s] with %lld elements cannot grow: %zu bytes of slots exceed the "
                           "tensor byte limit", s->name, (long long)s->n, bytes);
      else if (!(ni = dfx__realloc(s->items, bytes)))
        c = dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory pushing onto Stack[%s]", s->name);
      if (ni) {
        s->items = ni;
        s->cap = nc;
      }
    }
    /* A reference, not a copy: tensors are immutable once shared, and Push's
     * output is the same tensor. */
    if (c == DFX_OK) s->items[s->n++] = dfx__tensor_ref(v);
  }
  uv_mutex_unlock(&s->mu);
  if (c != DFX_OK) return c;
  dfx__kctx_forward(ctx, 1, 0);
  return DFX_OK;
}

static dfx_code pop_kernel(dfx_kctx *ctx) {
  dfx_stack *s = dfx__misc_handle_in(ctx, 0, stack_free, "Stack");
  if (!s) return ctx->st->code;
  dfx_dtype want = dfx__attr_type(ctx->node, "elem_type", DFX_INVALID);
  dfx_code c = DFX_OK;
  dfx_tensor *v = NULL;
  uv_mutex_lock(&s->mu);
  if (s->closed)
    c = dfx__kctx_fail(ctx, DFX_EINVAL, "Stack[%s] has already been closed.", s->name);
  else if (s->n == 0)
    c = dfx__kctx_fail(ctx, DFX_EINVAL, "Stack[%s] is empty when calling Pop().", s->name);
  else if (want != s->dtype)
    c = dfx__kctx_fail(ctx, DFX_EINVAL, "Must have type %s but got %s", dfx_dtype_name(s->dtype),
                       dfx_dtype_name(want));
  else
    /* The stack's reference moves to the output: no ref/unref pair. */
    v = s->items[--s->n];
  uv_mutex_unlock(&s->mu);
  if (c != DFX_OK) return c;
  ctx->out[0] = v;
  return DFX_OK;
}

static dfx_code close_kernel(dfx_kctx *ctx) {
  dfx_stack *s = dfx__misc_handle_in(ctx, 0, stack_free, "Stack");
  if (!s) return ctx->st->code;
  uv_mutex_lock(&s->mu);
  /* The elements go at once; the object itself stays until the step ends. */
  stack_clear(s);
  s->closed = true;
  uv_mutex_unlock(&s->mu);
  return DFX_OK;
}

/* Elements are held by reference: every dtype. Stateful all through (TF's
 * OpDef says the v1 push/pop/close are not): they change the stack. */
static const dfx_kernel_def kernels[] = {
    {"StackV2", "elem_type: " MISC_ANY_TYPES, stack_v2_kernel, DFX_KERNEL_CHEAP | DFX_KERNEL_STATEFUL, NULL, NULL},
    {"StackPushV2", "T: " MISC_ANY_TYPES, push_kernel, DFX_KERNEL_CHEAP | DFX_KERNEL_STATEFUL, NULL, NULL},
    {"StackPopV2", "elem_type: " MISC_ANY_TYPES, pop_kernel, DFX_KERNEL_CHEAP | DFX_KERNEL_STATEFUL, NULL, NULL},
    {"StackCloseV2", NULL, close_kernel, DFX_KERNEL_CHEAP | DFX_KERNEL_STATEFUL, NULL, NULL},
    {"Stack", "elem_type: " MISC_ANY_TYPES, stack_v1_kernel, DFX_KERNEL_CHEAP | DFX_KERNEL_STATEFUL, NULL, NULL},
    {"StackPush", "T: " MISC_ANY_TYPES, push_kernel, DFX_KERNEL_CHEAP | DFX_KERNEL_STATEFUL, NULL, NULL},
    {"StackPop", "elem_type: " MISC_ANY_TYPES, pop_kernel, DFX_KERNEL_CHEAP | DFX_KERNEL_STATEFUL, NULL, NULL},
    {"StackClose", NULL, close_kernel, DFX_KERNEL_CHEAP | DFX_KERNEL_STATEFUL, NULL, NULL},
    {NULL}};

void dfx__kernels_misc_stack(dfx_registry *r);
void dfx__kernels_misc_stack(dfx_registry *r) { dfx__kernels_add(r, kernels); }
