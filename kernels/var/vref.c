/* vref.c - resolving ref inputs to variables at kernel init, and handles
 * to variables at run time (vref.h). */
#include "vref.h"

#include <string.h>

#include "alloc.h"
#include "resmgr.h"
#include "step.h"

bool dfx__vref_var_node_name(const dfx_node *n, const char **container, const char **name) {
  if (strcmp(n->op, "VariableV2") == 0 || strcmp(n->op, "Variable") == 0 || strcmp(n->op, "VarHandleOp") == 0) {
    const char *shared = dfx__attr_str(n, "shared_name", "");
    *container = dfx__attr_str(n, "container", "");
    *name = *shared ? shared : n->name;
    return true;
  }
  if (strcmp(n->op, "TemporaryVariable") == 0) {
    const char *vn = dfx__attr_str(n, "var_name", "");
    *container = "";
    *name = *vn ? vn : n->name;
    return true;
  }
  return false;
}

/* Whether output 0 of op is input 0 passed on as a ref. */
static bool forwards_ref(const dfx_node *p, int slot) {
  static const char *const fwd[] = {"RefIdentity", "RefEnter", "RefExit", "RefNextIteration", "RefMerge",
                                    "RefSwitch", "Assign", "AssignAdd", "AssignSub", NULL};
  for (int i = 0; fwd[i]; i++)
    if (strcmp(p->op, fwd[i]) == 0) return strcmp(p->op, "RefSwitch") == 0 || slot == 0;
  /* The ref optimizers (Apply*) return their var input as output 0. */
  return strncmp(p->op, "Apply", 5) == 0 && slot == 0;
}

/* Follows input i of n to a variable node; NULL when it ends elsewhere. */
static const dfx_node *ref_source(const dfx_node *n, int i) {
  const dfx_node *p = dfx__node_producer(n, i);
  int slot = n->in && i < n->n_in ? n->in[i].slot : 0;
  for (int depth = 0; p && depth < 256; depth++) {
    const char *c, *nm;
    if (dfx__vref_var_node_name(p, &c, &nm)) return strcmp(p->op, "VarHandleOp") ? p : NULL;
    if (!forwards_ref(p, slot)) return NULL;
    slot = p->in && p->n_in > 0 ? p->in[0].slot : 0;
    p = dfx__node_producer(p, 0);
  }
  return NULL;
}

void dfx__vref_fini(void *state) {
  dfx_vref_state *s = state;
  if (!s) return;
  for (int i = 0; i < s->n; i++) {
    dfx__free(s->ref[i].container);
    dfx__free(s->ref[i].name);
  }
  dfx__free(s->ref);
  dfx__free(s);
}

dfx_code dfx__vref_init(const dfx_node *n, void **state, dfx_status *st) {
  dfx_vref_state *s = dfx__calloc(1, sizeof *s);
  if (!s) return dfx__status_set(st, DFX_ENOMEM, "out of memory");
  s->dtype = dfx__attr_type(n, "T", dfx__attr_type(n, "dtype", DFX_INVALID));
  int n_in = n->def ? n->def->n_in : 0;
  s->ref = dfx__calloc((size_t)(n_in ? n_in : 1), sizeof *s->ref);
  if (!s->ref) goto oom;
  s->n = n_in;
  /* Ref ops take no list arguments, so input i is argument i. */
  for (int i = 0; i < n_in && i < n->n_in; i++) {
    if (!n->def->in[i].is_ref) continue;
    const dfx_node *v = ref_source(n, i);
    const char *c, *nm;
    if (!v || !dfx__vref_var_node_name(v, &c, &nm)) continue;
    s->ref[i].container = dfx__strdup(c);
    s->ref[i].name = dfx__strdup(nm);
    if (!s->ref[i].container || !s->ref[i].name) goto oom;
  }
  *state = s;
  return DFX_OK;
oom:
  dfx__vref_fini(s);
  return dfx__status_set(st, DFX_ENOMEM, "out of memory");
}

dfx_var *dfx__vref_var(dfx_kctx *ctx, int i, bool must) {
  const dfx_vref_state *s = ctx->state;
  if (!s || i >= s->n || !s->ref[i].name) {
    if (must) {
      const char *arg = ctx->node->def && i < ctx->node->def->n_in ? ctx->node->def->in[i].name : "ref";
      dfx__kctx_fail(ctx, DFX_EINVAL,
                     "input '%s' must be a variable's ref: follow it to a VariableV2 node (it comes from another op)",
                     arg);
    }
    return NULL;
  }
  dfx_var *v = NULL;
  if (dfx__var_lookup(ctx->step ? ctx->step->store : NULL, s->ref[i].container, s->ref[i].name, s->dtype, true, &v,
                      ctx->st) != DFX_OK)
    return NULL;
  return v;
}

dfx_var *dfx__vref_handle(dfx_kctx *ctx, int i) {
  const dfx_tensor *h = ctx->in[i];
  dfx_resmgr *rm = ctx->step ? ctx->step->store : NULL;
  char b[64];
  if (h->dtype != DFX_RESOURCE || h->count != 1)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "expected a resource scalar handle, got %s %s",
                          dfx_dtype_name((dfx_dtype)h->dtype), DFX_SHAPE_STR(h, b)),
           NULL;
  void *obj = ((void *const *)h->data)[0];
  if (!rm) return dfx__kctx_fail(ctx, DFX_EPRECOND, "variables live in a session: this run has no resource store"), NULL;
  if (!obj || !dfx__resmgr_contains(rm, &dfx__var_kind, obj))
    return dfx__kctx_fail(ctx, DFX_ENOTFOUND,
                          "Resource handle does not name a variable of this session (from another session, or not a "
                          "variable)"),
           NULL;
  return obj;
}

dfx_code dfx__vref_uninit(dfx_kctx *ctx, const dfx_var *v) {
  return dfx__kctx_fail(ctx, DFX_EPRECOND, "Attempting to use uninitialized value %s", v->name);
}

dfx_tensor *dfx__vref_take_value(dfx_kctx *ctx, int i) {
  dfx_tensor *t = dfx__kctx_take_unique(ctx, i);
  if (t) return t;
  if (!(t = dfx__tensor_copy(ctx->in[i]))) dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory copying a variable's value");
  return t;
}
