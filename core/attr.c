/* attr.c - releasing and copying dfx_attr values. */
#include "attr.h"

#include <string.h>

#include "alloc.h"

static void list_clear(dfx_attr_list *l) {
  for (int k = 0; k < l->n; k++) {
    switch (l->kind) {
      case DFX_ATTR_S: dfx__free(l->v.s[k].ptr); break;
      case DFX_ATTR_SHAPE: dfx__free(l->v.shape[k].dims); break;
      case DFX_ATTR_TENSOR: dfx__tensor_unref(l->v.tensor[k]); break;
      case DFX_ATTR_FUNC: dfx__free(l->v.func[k]); break;
      default: break;
    }
  }
  dfx__free(l->v.i); /* every member of the union is one block */
  memset(l, 0, sizeof *l);
}

void dfx__attr_clear(dfx_attr *a) {
  if (!a) return;
  switch (a->kind) {
    case DFX_ATTR_S:
    case DFX_ATTR_PLACEHOLDER: dfx__free(a->v.s.ptr); break;
    case DFX_ATTR_SHAPE: dfx__free(a->v.shape.dims); break;
    case DFX_ATTR_TENSOR: dfx__tensor_unref(a->v.tensor); break;
    case DFX_ATTR_FUNC: dfx__free(a->v.func); break;
    case DFX_ATTR_LIST: list_clear(&a->v.list); break;
    default: break;
  }
  dfx__free(a->name);
  memset(a, 0, sizeof *a);
}

const char *dfx__attr_kind_name(dfx_attr_kind k) {
  static const char *const names[] = {[DFX_ATTR_NONE] = "none",     [DFX_ATTR_S] = "string",
                                      [DFX_ATTR_I] = "int",         [DFX_ATTR_F] = "float",
                                      [DFX_ATTR_B] = "bool",        [DFX_ATTR_TYPE] = "type",
                                      [DFX_ATTR_SHAPE] = "shape",   [DFX_ATTR_TENSOR] = "tensor",
                                      [DFX_ATTR_FUNC] = "func",     [DFX_ATTR_PLACEHOLDER] = "placeholder",
                                      [DFX_ATTR_LIST] = "list"};
  return (unsigned)k < sizeof names / sizeof names[0] ? names[k] : "none";
}

static int dup_str(dfx_str *d, const dfx_str *s) {
  d->len = s->len;
  d->ptr = NULL;
  if (!s->ptr) return 0;
  d->ptr = dfx__strndup(s->ptr, s->len);
  return d->ptr ? 0 : -1;
}

static int dup_shape(dfx_shape *d, const dfx_shape *s) {
  d->rank = s->rank;
  d->dims = NULL;
  if (s->rank <= 0) return 0;
  d->dims = dfx__malloc(sizeof(int64_t) * (size_t)s->rank);
  if (!d->dims) return -1;
  memcpy(d->dims, s->dims, sizeof(int64_t) * (size_t)s->rank);
  return 0;
}

size_t dfx__attr_elem_size(dfx_attr_kind k) {
  switch (k) {
    case DFX_ATTR_S: return sizeof(dfx_str);
    case DFX_ATTR_I: return sizeof(int64_t);
    case DFX_ATTR_F: return sizeof(float);
    case DFX_ATTR_B: return sizeof(bool);
    case DFX_ATTR_TYPE: return sizeof(dfx_dtype);
    case DFX_ATTR_SHAPE: return sizeof(dfx_shape);
    case DFX_ATTR_TENSOR: return sizeof(dfx_tensor *);
    case DFX_ATTR_FUNC: return sizeof(char *);
    default: return 1;
  }
}

dfx_code dfx__attr_copy(dfx_attr *dst, const dfx_attr *src) {
  memset(dst, 0, sizeof *dst);
  dst->kind = src->kind;
  dst->ref_dtype = src->ref_dtype;
  if (src->name && !(dst->name = dfx__strdup(src->name))) goto fail;
  switch (src->kind) {
    case DFX_ATTR_S:
    case DFX_ATTR_PLACEHOLDER:
      if (dup_str(&dst->v.s, &src->v.s)) goto fail;
      break;
    case DFX_ATTR_SHAPE:
      if (dup_shape(&dst->v.shape, &src->v.shape)) goto fail;
      break;
    case DFX_ATTR_TENSOR: dst->v.tensor = dfx__tensor_ref(src->v.tensor); break;
    case DFX_ATTR_FUNC:
      if (src->v.func && !(dst->v.func = dfx__strdup(src->v.func))) goto fail;
      break;
    case DFX_ATTR_LIST: {
      const dfx_attr_list *sl = &src->v.list;
      dfx_attr_list *dl = &dst->v.list;
      dl->kind = sl->kind;
      if (sl->n == 0) break;
      dl->v.i = dfx__calloc((size_t)sl->n, dfx__attr_elem_size(sl->kind));
      if (!dl->v.i) goto fail;
      for (int k = 0; k < sl->n; k++, dl->n++) {
        switch (sl->kind) {
          case DFX_ATTR_S:
            if (dup_str(&dl->v.s[k], &sl->v.s[k])) goto fail;
            break;
          case DFX_ATTR_SHAPE:
            if (dup_shape(&dl->v.shape[k], &sl->v.shape[k])) goto fail;
            break;
          case DFX_ATTR_TENSOR: dl->v.tensor[k] = dfx__tensor_ref(sl->v.tensor[k]); break;
          case DFX_ATTR_FUNC:
            if (!(dl->v.func[k] = dfx__strdup(sl->v.func[k]))) goto fail;
            break;
          default: memcpy((char *)dl->v.i + k * dfx__attr_elem_size(sl->kind),
                          (const char *)sl->v.i + k * dfx__attr_elem_size(sl->kind), dfx__attr_elem_size(sl->kind));
        }
      }
      break;
    }
    default: dst->v = src->v; break;
  }
  return DFX_OK;
fail:
  dfx__attr_clear(dst);
  return DFX_ENOMEM;
}
