/* resource.c - handle tensors for per-run resources (see resource.h). The step
 * lookup takes the step's mutex; resources are few per run, so a linear scan
 * is cheaper than any index. */
#include "resource.h"

#include <string.h>

#include "alloc.h"
#include "step.h"

/* Marks a string element as one of our encoded pointers; without it, any
 * string of the right length would be read as a pointer candidate. */
static const char magic[4] = {'D', 'F', 'X', 1};

dfx_code dfx__misc_handle_out(dfx_kctx *ctx, int k, void *obj, void (*free_fn)(void *), bool as_string,
                              const char *container, const char *name) {
  dfx_code c = dfx__kctx_step_own(ctx, obj, free_fn);
  if (c != DFX_OK) return c;
  return dfx__misc_handle_encode(ctx, k, obj, as_string, container, name);
}

dfx_code dfx__misc_handle_encode(dfx_kctx *ctx, int k, void *obj, bool as_string, const char *container,
                                 const char *name) {
  if (!as_string) {
    dfx_tensor *h = dfx__kctx_alloc(ctx, k, DFX_RESOURCE, 0, NULL);
    if (!h) return ctx->st->code;
    ((void **)h->data)[0] = obj;
    return DFX_OK;
  }
  int64_t two = 2;
  dfx_tensor *h = dfx__kctx_alloc(ctx, k, DFX_STRING, 1, &two);
  if (!h) return ctx->st->code;
  dfx_str *s = h->data;
  size_t nl = strlen(name);
  /* Element 0 is the container, as in TF's ["_tensor_arrays", name] handle;
   * element 1 is the magic, the pointer's bytes and the name. On failure the
   * tensor is already output k: the executor releases it, and whatever
   * string it got, with the other outputs. */
  s[0].ptr = dfx__strdup(container);
  s[1].ptr = dfx__malloc(sizeof magic + sizeof obj + nl + 1);
  if (!s[0].ptr || !s[1].ptr) return dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory creating a handle");
  s[0].len = strlen(container);
  memcpy(s[1].ptr, magic, sizeof magic);
  memcpy(s[1].ptr + sizeof magic, &obj, sizeof obj);
  memcpy(s[1].ptr + sizeof magic + sizeof obj, name, nl + 1);
  s[1].len = sizeof magic + sizeof obj + nl;
  return DFX_OK;
}

void *dfx__misc_handle_in(dfx_kctx *ctx, int i, void (*free_fn)(void *), const char *what) {
  const dfx_tensor *h = ctx->in[i];
  void *obj = NULL;
  if (h->dtype == DFX_RESOURCE && h->count == 1) {
    obj = ((void *const *)h->data)[0];
  } else if (h->dtype == DFX_STRING && h->count >= 1) {
    /* The last element carries the pointer, whatever came before it. */
    const dfx_str *s = &((const dfx_str *)h->data)[h->count - 1];
    if (s->len >= sizeof magic + sizeof obj && memcmp(s->ptr, magic, sizeof magic) == 0)
      memcpy(&obj, s->ptr + sizeof magic, sizeof obj);
  } else {
    char buf[64];
    dfx__kctx_fail(ctx, DFX_EINVAL, "%s handle must be a resource scalar or string vector, got %s %s", what,
                   dfx_dtype_name((dfx_dtype)h->dtype), DFX_SHAPE_STR(h, buf));
    return NULL;
  }
  bool found = false;
  dfx_step *s = ctx->step;
  if (obj && s) {
    uv_mutex_lock(&s->mu);
    /* The free function is compared too, so a handle to another kind of
     * resource (a stack passed to a TensorArray op) is rejected. */
    for (int r = s->n_res - 1; r >= 0 && !found; r--)
      found = s->res[r].obj == obj && s->res[r].free_fn == free_fn;
    uv_mutex_unlock(&s->mu);
  }
  if (!found) {
    dfx__kctx_fail(ctx, DFX_ENOTFOUND, "Resource %s does not exist in this run (handle from another run or op?)",
                   what);
    return NULL;
  }
  return obj;
}

bool dfx__misc_copy_elems(dfx_tensor *dst, int64_t do_, const dfx_tensor *src, int64_t so, int64_t n) {
  if (n <= 0) return true;
  if (src->dtype != DFX_STRING) {
    size_t es = dfx__dtype_storage((dfx_dtype)src->dtype);
    /* Resource elements have no storage size of their own: they are pointers. */
    if (es == 0) es = sizeof(void *);
    memcpy((char *)dst->data + (size_t)do_ * es, (const char *)src->data + (size_t)so * es, (size_t)n * es);
    return true;
  }
  dfx_str *d = (dfx_str *)dst->data + do_;
  const dfx_str *sv = (const dfx_str *)src->data + so;
  for (int64_t k = 0; k < n; k++) {
    dfx__free(d[k].ptr);
    d[k].ptr = NULL;
    d[k].len = 0;
    if (sv[k].len) {
      d[k].ptr = dfx__malloc(sv[k].len);
      if (!d[k].ptr) return false;
      memcpy(d[k].ptr, sv[k].ptr, sv[k].len);
      d[k].len = sv[k].len;
    }
  }
  return true;
}
