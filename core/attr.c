/* attr.c - releasing, copying, comparing and hashing dfx_attr values.
 * A dfx_attr owns its name, string bytes, shape dims and func name, and one
 * reference on each tensor it holds; a list owns one block for its elements.
 * A cleared attr is all zeroes (kind NONE), so clearing twice is harmless. */
#include "attr.h"

#include <string.h>

#include "alloc.h"

static void list_clear(dfx_attr_list *l) {
  /* n counts filled elements only (dfx__attr_copy raises it as it copies),
   * so this also releases a list whose copy failed halfway. */
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

/* Strings are bytes with a length (TF's `bytes`, NULs allowed); the copy is
 * NUL-terminated as a convenience. An absent value (NULL) stays NULL. */
static int dup_str(dfx_str *d, const dfx_str *s) {
  d->len = s->len;
  d->ptr = NULL;
  if (!s->ptr) return 0;
  d->ptr = dfx__strndup(s->ptr, s->len);
  return d->ptr ? 0 : -1;
}

/* A scalar (rank 0) and an unknown rank (-1) have no dims to copy. */
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
    /* Shared, not copied: a tensor is immutable once shared (tensor.h). */
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
      /* dl->n counts the elements copied so far, so the fail path frees exactly
       * those; calloc left the rest zero. */
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
    /* Plain values (int, float, bool, type) and NONE copy as they are. */
    default: dst->v = src->v; break;
  }
  return DFX_OK;
fail:
  dfx__attr_clear(dst);
  return DFX_ENOMEM;
}

/* ---- equality and hashing (common-subexpression elimination) ---- */

/* String tensors hold dfx_str pointers, so their bytes are compared through
 * them; every other dtype compares its element bytes directly. */
static bool tensor_equal(const dfx_tensor *a, const dfx_tensor *b) {
  if (a == b) return true;
  if (!a || !b || a->dtype != b->dtype || a->ndims != b->ndims || a->count != b->count) return false;
  for (int i = 0; i < a->ndims; i++)
    if (a->dims[i] != b->dims[i]) return false;
  if (a->dtype != DFX_STRING) return a->nbytes == b->nbytes && memcmp(a->data, b->data, a->nbytes) == 0;
  for (int64_t i = 0; i < a->count; i++) {
    const dfx_str *x = &((const dfx_str *)a->data)[i], *y = &((const dfx_str *)b->data)[i];
    if (x->len != y->len || (x->len && memcmp(x->ptr, y->ptr, x->len) != 0)) return false;
  }
  return true;
}

static bool shape_equal(const dfx_shape *a, const dfx_shape *b) {
  if (a->rank != b->rank) return false;
  for (int i = 0; i < a->rank; i++)
    if (a->dims[i] != b->dims[i]) return false;
  return true;
}

static bool bytes_equal(const dfx_str *a, const dfx_str *b) {
  return a->len == b->len && (a->len == 0 || memcmp(a->ptr, b->ptr, a->len) == 0);
}

static bool list_equal(const dfx_attr_list *a, const dfx_attr_list *b) {
  if (a->n != b->n) return false;
  if (a->n == 0) return true; /* an empty list has no element kind */
  if (a->kind != b->kind) return false;
  for (int k = 0; k < a->n; k++) {
    bool same;
    switch (a->kind) {
      case DFX_ATTR_S: same = bytes_equal(&a->v.s[k], &b->v.s[k]); break;
      case DFX_ATTR_I: same = a->v.i[k] == b->v.i[k]; break;
      case DFX_ATTR_F: same = memcmp(&a->v.f[k], &b->v.f[k], sizeof(float)) == 0; break;
      case DFX_ATTR_B: same = a->v.b[k] == b->v.b[k]; break;
      case DFX_ATTR_TYPE: same = a->v.type[k] == b->v.type[k]; break;
      case DFX_ATTR_SHAPE: same = shape_equal(&a->v.shape[k], &b->v.shape[k]); break;
      case DFX_ATTR_TENSOR: same = tensor_equal(a->v.tensor[k], b->v.tensor[k]); break;
      case DFX_ATTR_FUNC: same = strcmp(a->v.func[k], b->v.func[k]) == 0; break;
      default: same = false;
    }
    if (!same) return false;
  }
  return true;
}

bool dfx__attr_equal(const dfx_attr *a, const dfx_attr *b) {
  if (a->kind != b->kind) return false;
  switch (a->kind) {
    case DFX_ATTR_S:
    case DFX_ATTR_PLACEHOLDER: return bytes_equal(&a->v.s, &b->v.s);
    case DFX_ATTR_I: return a->v.i == b->v.i;
    case DFX_ATTR_F: return memcmp(&a->v.f, &b->v.f, sizeof(float)) == 0; /* bit-exact: -0.0 and NaNs differ */
    case DFX_ATTR_B: return a->v.b == b->v.b;
    /* A ref dtype (DT_FLOAT_REF) and its base type are different values in
     * the GraphDef, though v.type holds the base type for both. */
    case DFX_ATTR_TYPE: return a->v.type == b->v.type && a->ref_dtype == b->ref_dtype;
    case DFX_ATTR_SHAPE: return shape_equal(&a->v.shape, &b->v.shape);
    case DFX_ATTR_TENSOR: return tensor_equal(a->v.tensor, b->v.tensor);
    case DFX_ATTR_FUNC: return strcmp(a->v.func, b->v.func) == 0;
    case DFX_ATTR_LIST: return list_equal(&a->v.list, &b->v.list);
    default: return true;
  }
}

/* FNV-1a over bytes (64-bit prime); the caller's h is the running state. */
static uint64_t mix(uint64_t h, const void *p, size_t n) {
  const unsigned char *b = p;
  for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ull;
  return h;
}

uint64_t dfx__attr_hash(const dfx_attr *a, uint64_t h) {
  h = mix(h, &a->kind, sizeof a->kind);
  switch (a->kind) {
    case DFX_ATTR_S:
    case DFX_ATTR_PLACEHOLDER: return mix(h, a->v.s.ptr, a->v.s.len);
    case DFX_ATTR_I: return mix(h, &a->v.i, sizeof a->v.i);
    /* The float's bits, matching dfx__attr_equal's bit-exact comparison. */
    case DFX_ATTR_F: return mix(h, &a->v.f, sizeof a->v.f);
    case DFX_ATTR_B: return mix(h, &a->v.b, sizeof a->v.b);
    case DFX_ATTR_TYPE: return mix(h, &a->v.type, sizeof a->v.type);
    case DFX_ATTR_SHAPE: return mix(mix(h, &a->v.shape.rank, sizeof(int)), a->v.shape.dims,
                                    a->v.shape.rank > 0 ? sizeof(int64_t) * (size_t)a->v.shape.rank : 0);
    /* Tensors and lists hash by their size only: equal values collide on
     * purpose, and dfx__attr_equal decides. */
    case DFX_ATTR_TENSOR: return a->v.tensor ? mix(h, &a->v.tensor->count, sizeof a->v.tensor->count) : h;
    case DFX_ATTR_FUNC: return mix(h, a->v.func, strlen(a->v.func));
    case DFX_ATTR_LIST: return mix(h, &a->v.list.n, sizeof a->v.list.n);
    default: return h;
  }
}
