/* builder_attr.c - attrs of builder nodes: the dfx_bnode_attr_* setters,
 * tensors and shapes encoded as TensorProto / TensorShapeProto, and the
 * inference of missing type and list-length attrs at finalisation.
 * Invariant: attrs stay sorted by key and every value lives in the arena. */
#include <string.h>

#include "alloc.h"
#include "builder.h"
#include "op_registry.h"
#include "tensor.h"
#include "tensor_proto.h"

#define OOM(b, st) dfx__builder_fail(b, st, DFX_ENOMEM, "builder: out of memory")

/* ---- attrs ---- */

static const Tensorflow__AttrValue *attr_get(const dfx_bnode *n, const char *name) {
  for (size_t i = 0; i < n->nd.n_attr; i++)
    if (strcmp(n->nd.attr[i]->key, name) == 0) return n->nd.attr[i]->value;
  return NULL;
}

/* A fresh AttrValue stored under `name` (replacing any), or NULL. */
static Tensorflow__AttrValue *attr_put(dfx_bnode *n, const char *name) {
  dfx_builder *b = n->b;
  if (!name || !*name) {
    dfx__builder_fail(b, NULL, DFX_EINVAL, "builder: node '%s': NULL or empty attr name", n->nd.name);
    return NULL;
  }
  Tensorflow__AttrValue *v = dfx__arena_alloc(&b->arena, sizeof *v);
  if (!v) goto oom;
  tensorflow__attr_value__init(v); /* its INIT macro trips -Wmissing-braces */
  Tensorflow__NodeDef *nd = &n->nd;
  size_t at = 0;
  while (at < nd->n_attr && strcmp(nd->attr[at]->key, name) < 0) at++;
  if (at < nd->n_attr && strcmp(nd->attr[at]->key, name) == 0) {
    nd->attr[at]->value = v;
    return v;
  }
  if (nd->n_attr == n->cap_attr) {
    size_t cap = n->cap_attr ? n->cap_attr * 2 : 4;
    Tensorflow__NodeDef__AttrEntry **arr = dfx__arena_alloc(&b->arena, cap * sizeof *arr);
    if (!arr) goto oom;
    if (nd->n_attr) memcpy(arr, nd->attr, nd->n_attr * sizeof *arr);
    nd->attr = arr;
    n->cap_attr = cap;
  }
  Tensorflow__NodeDef__AttrEntry *e = dfx__arena_alloc(&b->arena, sizeof *e);
  if (!e) goto oom;
  *e = (Tensorflow__NodeDef__AttrEntry)TENSORFLOW__NODE_DEF__ATTR_ENTRY__INIT;
  if (!(e->key = dfx__arena_strdup(&b->arena, name))) goto oom;
  e->value = v;
  memmove(nd->attr + at + 1, nd->attr + at, (nd->n_attr - at) * sizeof *nd->attr);
  nd->attr[at] = e;
  nd->n_attr++;
  return v;
oom:
  OOM(b, NULL);
  return NULL;
}

static dfx_code bad_attr(dfx_bnode *n, const char *name, const char *why) {
  return dfx__builder_fail(n->b, NULL, DFX_EINVAL, "builder: node '%s': attr '%s': %s", n->nd.name, name ? name : "",
                           why);
}

static bool dtype_ok(dfx_dtype t) { return dfx_dtype_name(t) && strcmp(dfx_dtype_name(t), "invalid") != 0; }

dfx_code dfx_bnode_attr_int(dfx_bnode *n, const char *name, int64_t v) {
  if (!n) return DFX_EINVAL;
  Tensorflow__AttrValue *a = attr_put(n, name);
  if (!a) return n->b->err.code;
  a->value_case = TENSORFLOW__ATTR_VALUE__VALUE_I;
  a->i = v;
  return DFX_OK;
}

dfx_code dfx_bnode_attr_float(dfx_bnode *n, const char *name, float v) {
  if (!n) return DFX_EINVAL;
  Tensorflow__AttrValue *a = attr_put(n, name);
  if (!a) return n->b->err.code;
  a->value_case = TENSORFLOW__ATTR_VALUE__VALUE_F;
  a->f = v;
  return DFX_OK;
}

dfx_code dfx_bnode_attr_bool(dfx_bnode *n, const char *name, int v) {
  if (!n) return DFX_EINVAL;
  Tensorflow__AttrValue *a = attr_put(n, name);
  if (!a) return n->b->err.code;
  a->value_case = TENSORFLOW__ATTR_VALUE__VALUE_B;
  a->b = v != 0;
  return DFX_OK;
}

dfx_code dfx_bnode_attr_bytes(dfx_bnode *n, const char *name, const void *v, size_t len) {
  if (!n) return DFX_EINVAL;
  if (!v && len) return bad_attr(n, name, "NULL value");
  Tensorflow__AttrValue *a = attr_put(n, name);
  if (!a) return n->b->err.code;
  uint8_t *d = dfx__arena_alloc(&n->b->arena, len + 1);
  if (!d) return OOM(n->b, NULL);
  if (len) memcpy(d, v, len);
  a->value_case = TENSORFLOW__ATTR_VALUE__VALUE_S;
  a->s.data = d;
  a->s.len = len;
  return DFX_OK;
}

dfx_code dfx_bnode_attr_string(dfx_bnode *n, const char *name, const char *v) {
  if (!n) return DFX_EINVAL;
  if (!v) return bad_attr(n, name, "NULL string");
  return dfx_bnode_attr_bytes(n, name, v, strlen(v));
}

dfx_code dfx__bnode_attr_s(dfx_bnode *n, const char *name, const char *v) { return dfx_bnode_attr_string(n, name, v); }

dfx_code dfx_bnode_attr_type(dfx_bnode *n, const char *name, dfx_dtype v) {
  if (!n) return DFX_EINVAL;
  if (!dtype_ok(v)) return bad_attr(n, name, "invalid dtype");
  Tensorflow__AttrValue *a = attr_put(n, name);
  if (!a) return n->b->err.code;
  a->value_case = TENSORFLOW__ATTR_VALUE__VALUE_TYPE;
  a->type = (Tensorflow__DataType)v;
  return DFX_OK;
}

/* A TensorShapeProto in the arena; NULL after recording an error. */
static Tensorflow__TensorShapeProto *shape_proto(dfx_bnode *n, const char *name, const int64_t *dims, int rank) {
  if (rank < -1 || (rank > 0 && !dims)) {
    bad_attr(n, name, "invalid rank or NULL dims");
    return NULL;
  }
  for (int i = 0; i < rank; i++)
    if (dims[i] < -1) {
      bad_attr(n, name, "shape has a dimension below -1");
      return NULL;
    }
  Tensorflow__TensorShapeProto *sp = dfx__shape_to_proto(&n->b->arena, rank, dims);
  if (!sp) OOM(n->b, NULL);
  return sp;
}

dfx_code dfx_bnode_attr_shape(dfx_bnode *n, const char *name, const int64_t *dims, int rank) {
  if (!n) return DFX_EINVAL;
  Tensorflow__TensorShapeProto *sp = shape_proto(n, name, dims, rank);
  if (!sp) return n->b->err.code;
  Tensorflow__AttrValue *a = attr_put(n, name);
  if (!a) return n->b->err.code;
  a->value_case = TENSORFLOW__ATTR_VALUE__VALUE_SHAPE;
  a->shape = sp;
  return DFX_OK;
}

dfx_code dfx_bnode_attr_tensor(dfx_bnode *n, const char *name, const dfx_tensor *v) {
  if (!n) return DFX_EINVAL;
  if (!v) return bad_attr(n, name, "NULL tensor");
  Tensorflow__TensorProto *p = dfx__tensor_to_proto(&n->b->arena, v);
  if (!p) return OOM(n->b, NULL);
  Tensorflow__AttrValue *a = attr_put(n, name);
  if (!a) return n->b->err.code;
  a->value_case = TENSORFLOW__ATTR_VALUE__VALUE_TENSOR;
  a->tensor = p;
  return DFX_OK;
}

/* A list attr value with nothing set yet; NULL after recording an error. */
static Tensorflow__AttrValue__ListValue *list_put(dfx_bnode *n, const char *name, const void *v, int count) {
  if (count < 0 || (count > 0 && !v)) {
    bad_attr(n, name, "negative count or NULL values");
    return NULL;
  }
  Tensorflow__AttrValue__ListValue *l = dfx__arena_alloc(&n->b->arena, sizeof *l);
  if (!l) {
    OOM(n->b, NULL);
    return NULL;
  }
  *l = (Tensorflow__AttrValue__ListValue)TENSORFLOW__ATTR_VALUE__LIST_VALUE__INIT;
  Tensorflow__AttrValue *a = attr_put(n, name);
  if (!a) return NULL;
  a->value_case = TENSORFLOW__ATTR_VALUE__VALUE_LIST;
  a->list = l;
  return l;
}

dfx_code dfx_bnode_attr_ints(dfx_bnode *n, const char *name, const int64_t *v, int count) {
  if (!n) return DFX_EINVAL;
  Tensorflow__AttrValue__ListValue *l = list_put(n, name, v, count);
  if (!l) return n->b->err.code;
  if (!(l->i = dfx__arena_memdup(&n->b->arena, v, (size_t)count * sizeof *v))) return OOM(n->b, NULL);
  l->n_i = (size_t)count;
  return DFX_OK;
}

dfx_code dfx_bnode_attr_floats(dfx_bnode *n, const char *name, const float *v, int count) {
  if (!n) return DFX_EINVAL;
  Tensorflow__AttrValue__ListValue *l = list_put(n, name, v, count);
  if (!l) return n->b->err.code;
  if (!(l->f = dfx__arena_memdup(&n->b->arena, v, (size_t)count * sizeof *v))) return OOM(n->b, NULL);
  l->n_f = (size_t)count;
  return DFX_OK;
}

dfx_code dfx_bnode_attr_types(dfx_bnode *n, const char *name, const dfx_dtype *v, int count) {
  if (!n) return DFX_EINVAL;
  for (int i = 0; i < count && v; i++)
    if (!dtype_ok(v[i])) return bad_attr(n, name, "invalid dtype in list");
  Tensorflow__AttrValue__ListValue *l = list_put(n, name, v, count);
  if (!l) return n->b->err.code;
  if (!(l->type = dfx__arena_alloc(&n->b->arena, (size_t)count * sizeof *l->type))) return OOM(n->b, NULL);
  for (int i = 0; i < count; i++) l->type[i] = (Tensorflow__DataType)v[i];
  l->n_type = (size_t)count;
  return DFX_OK;
}

/* ---- type inference ---- */

static int64_t attr_int_or(const dfx_bnode *n, const dfx_op_def *def, const char *name) {
  const Tensorflow__AttrValue *v = attr_get(n, name);
  if (v && v->value_case == TENSORFLOW__ATTR_VALUE__VALUE_I) return v->i;
  const dfx_op_attr *a = dfx__op_def_attr(def, name);
  return a && a->has_default && a->def.kind == DFX_ATTR_I ? a->def.v.i : -1;
}

static int n_data_inputs(const dfx_bnode *n) { return (int)n->nd.n_input - n->n_ctrl; }

/* Element count of input or output arg `a`, or -1 when it is not known yet.
 * A missing number attr of an input arg is derived from the input count
 * when it is the only variable-length arg. */
static int arg_count(const dfx_bnode *n, const dfx_op_def *def, const dfx_op_arg *a, bool input) {
  if (a->type_list_attr) {
    const Tensorflow__AttrValue *v = attr_get(n, a->type_list_attr);
    return v && v->value_case == TENSORFLOW__ATTR_VALUE__VALUE_LIST ? (int)v->list->n_type : -1;
  }
  if (!a->number_attr) return 1;
  int64_t k = attr_int_or(n, def, a->number_attr);
  if (k >= 0 || !input) return (int)k;
  int fixed = 0;
  for (int i = 0; i < def->n_in; i++) {
    if (&def->in[i] == a) continue;
    if (def->in[i].number_attr || def->in[i].type_list_attr) return -1;
    fixed++;
  }
  int r = n_data_inputs(n) - fixed;
  return r >= 0 ? r : -1;
}

static dfx_dtype type_attr_of(dfx_builder *b, dfx_bnode *n, const char *name, int depth);

static dfx_dtype out_dtype(dfx_builder *b, dfx_bnode *n, int slot, int depth) {
  const dfx_op_def *def = dfx__op_get(n->nd.op);
  if (!def || slot < 0) return DFX_INVALID;
  int base = 0;
  for (int i = 0; i < def->n_out; i++) {
    const dfx_op_arg *a = &def->out[i];
    int cnt = arg_count(n, def, a, false);
    if (cnt < 0) return DFX_INVALID;
    if (slot < base + cnt) {
      if (a->type_list_attr) return (dfx_dtype)attr_get(n, a->type_list_attr)->list->type[slot - base];
      if (a->type != DFX_INVALID) return a->type;
      return type_attr_of(b, n, a->type_attr, depth + 1);
    }
    base += cnt;
  }
  return DFX_INVALID;
}

/* The value of type attr `name`: set, defaulted, or inferred from the
 * producer of the first input whose arg uses it (then stored). */
static dfx_dtype type_attr_of(dfx_builder *b, dfx_bnode *n, const char *name, int depth) {
  const Tensorflow__AttrValue *v = attr_get(n, name);
  if (v) return v->value_case == TENSORFLOW__ATTR_VALUE__VALUE_TYPE ? (dfx_dtype)v->type : DFX_INVALID;
  const dfx_op_def *def = dfx__op_get(n->nd.op);
  if (!def) return DFX_INVALID;
  const dfx_op_attr *oa = dfx__op_def_attr(def, name);
  if (oa && oa->has_default && oa->def.kind == DFX_ATTR_TYPE) return oa->def.v.type;
  if (n->visiting || depth > 10000) return DFX_INVALID;
  n->visiting = true;
  dfx_dtype t = DFX_INVALID;
  int k = 0, n_data = n_data_inputs(n);
  for (int i = 0; i < def->n_in && k < n_data && t == DFX_INVALID; i++) {
    const dfx_op_arg *a = &def->in[i];
    int cnt = arg_count(n, def, a, true);
    if (cnt < 0) break;
    if (cnt > 0 && a->type_attr && strcmp(a->type_attr, name) == 0) {
      int slot, p = dfx__builder_producer(b, n->nd.input[k], &slot);
      if (p >= 0) t = out_dtype(b, b->nodes[p], slot, depth + 1);
    }
    k += cnt;
  }
  n->visiting = false;
  if (t != DFX_INVALID) dfx_bnode_attr_type(n, name, t);
  return t;
}

/* Fills missing type attrs and input-list lengths of every node whose op
 * dfexec knows; the importer reports whatever is still missing. */
dfx_code dfx__builder_infer_attrs(dfx_builder *b, dfx_status *st) {
  for (int i = 0; i < b->n_nodes; i++) {
    dfx_bnode *n = b->nodes[i];
    const dfx_op_def *def = dfx__op_get(n->nd.op);
    if (!def) continue;
    for (int k = 0; k < def->n_in; k++) {
      const dfx_op_arg *a = &def->in[k];
      if (a->number_attr && !attr_get(n, a->number_attr)) {
        int cnt = arg_count(n, def, a, true);
        if (cnt >= 0) dfx_bnode_attr_int(n, a->number_attr, cnt);
      }
    }
    for (int k = 0; k < def->n_attrs; k++)
      if (strcmp(def->attrs[k].type, "type") == 0 && !attr_get(n, def->attrs[k].name))
        type_attr_of(b, n, def->attrs[k].name, 0);
  }
  if (b->err.code != DFX_OK) return dfx__status_copy(st, &b->err);
  return DFX_OK;
}

