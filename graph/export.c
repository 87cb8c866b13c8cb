/* export.c - a graph back to a GraphDef: NodeDefs with TensorFlow's input
 * strings ("node", "node:k", "^node"), every attr (the defaults import
 * filled in included, as TensorFlow's own exporter writes them) sorted by
 * key, the versions and the function library carried through. The message
 * is assembled in an arena and packed or printed from there, so nothing of
 * it outlives the call. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "arena.h"
#include "graph.h"
#include "graph.pb-c.h"
#include "graph_import.h"
#include "pbtext.h"
#include "tensor_proto.h"

static dfx_code oom(dfx_status *st) { return dfx__status_set(st, DFX_ENOMEM, "out of memory exporting the graph"); }

/* A NameAttrList: the function's name (its attrs are not kept yet). */
static Tensorflow__NameAttrList *func_value(dfx_arena *a, const char *name) {
  Tensorflow__NameAttrList *f = dfx__arena_alloc(a, sizeof *f);
  if (!f) return NULL;
  *f = (Tensorflow__NameAttrList)TENSORFLOW__NAME_ATTR_LIST__INIT;
  if (!(f->name = dfx__arena_strdup(a, name ? name : ""))) return NULL;
  return f;
}

static Tensorflow__AttrValue__ListValue *list_value(dfx_arena *a, const dfx_attr_list *l) {
  Tensorflow__AttrValue__ListValue *p = dfx__arena_alloc(a, sizeof *p);
  if (!p) return NULL;
  *p = (Tensorflow__AttrValue__ListValue)TENSORFLOW__ATTR_VALUE__LIST_VALUE__INIT;
  size_t n = (size_t)l->n;
  switch (l->kind) {
    case DFX_ATTR_S:
      if (!(p->s = dfx__arena_alloc(a, n * sizeof *p->s))) return NULL;
      for (size_t k = 0; k < n; k++) {
        if (!(p->s[k].data = dfx__arena_memdup(a, l->v.s[k].ptr, l->v.s[k].len))) return NULL;
        p->s[k].len = l->v.s[k].len;
      }
      p->n_s = n;
      break;
    /* int64 and float lists have the same layout on both sides: one memdup. */
    case DFX_ATTR_I:
      if (!(p->i = dfx__arena_memdup(a, l->v.i, n * sizeof *p->i))) return NULL;
      p->n_i = n;
      break;
    case DFX_ATTR_F:
      if (!(p->f = dfx__arena_memdup(a, l->v.f, n * sizeof *p->f))) return NULL;
      p->n_f = n;
      break;
    /* protobuf-c keeps each bool as an int (protobuf_c_boolean), and the enum
     * below may differ in size from dfx_dtype: both are converted one by one.
     * The dtype values themselves are the proto's (dfexec.h). */
    case DFX_ATTR_B:
      if (!(p->b = dfx__arena_alloc(a, n * sizeof *p->b))) return NULL;
      for (size_t k = 0; k < n; k++) p->b[k] = l->v.b[k];
      p->n_b = n;
      break;
    case DFX_ATTR_TYPE:
      if (!(p->type = dfx__arena_alloc(a, n * sizeof *p->type))) return NULL;
      for (size_t k = 0; k < n; k++) p->type[k] = (Tensorflow__DataType)l->v.type[k];
      p->n_type = n;
      break;
    case DFX_ATTR_SHAPE:
      if (!(p->shape = dfx__arena_alloc(a, n * sizeof *p->shape))) return NULL;
      for (size_t k = 0; k < n; k++)
        if (!(p->shape[k] = dfx__shape_to_proto(a, l->v.shape[k].rank, l->v.shape[k].dims))) return NULL;
      p->n_shape = n;
      break;
    case DFX_ATTR_TENSOR:
      if (!(p->tensor = dfx__arena_alloc(a, n * sizeof *p->tensor))) return NULL;
      for (size_t k = 0; k < n; k++)
        if (!(p->tensor[k] = dfx__tensor_to_proto(a, l->v.tensor[k]))) return NULL;
      p->n_tensor = n;
      break;
    case DFX_ATTR_FUNC:
      if (!(p->func = dfx__arena_alloc(a, n * sizeof *p->func))) return NULL;
      for (size_t k = 0; k < n; k++)
        if (!(p->func[k] = func_value(a, l->v.func[k]))) return NULL;
      p->n_func = n;
      break;
    default: /* an empty list: `list { }`, told apart from a missing attr */
      break;
  }
  return p;
}

static Tensorflow__AttrValue *attr_value(dfx_arena *a, const dfx_attr *at) {
  Tensorflow__AttrValue *v = dfx__arena_alloc(a, sizeof *v);
  if (!v) return NULL;
  tensorflow__attr_value__init(v); /* its INIT macro trips -Wmissing-braces */
  switch (at->kind) {
    case DFX_ATTR_S:
      v->value_case = TENSORFLOW__ATTR_VALUE__VALUE_S;
      if (!(v->s.data = dfx__arena_memdup(a, at->v.s.ptr, at->v.s.len))) return NULL;
      v->s.len = at->v.s.len;
      break;
    case DFX_ATTR_PLACEHOLDER:
      v->value_case = TENSORFLOW__ATTR_VALUE__VALUE_PLACEHOLDER;
      /* The placeholder member is a proto string (char *), not bytes. */
      if (!(v->placeholder = dfx__arena_strndup(a, at->v.s.ptr ? at->v.s.ptr : "", at->v.s.len))) return NULL;
      break;
    case DFX_ATTR_I:
      v->value_case = TENSORFLOW__ATTR_VALUE__VALUE_I;
      v->i = at->v.i;
      break;
    case DFX_ATTR_F:
      v->value_case = TENSORFLOW__ATTR_VALUE__VALUE_F;
      v->f = at->v.f;
      break;
    case DFX_ATTR_B:
      v->value_case = TENSORFLOW__ATTR_VALUE__VALUE_B;
      v->b = at->v.b;
      break;
    case DFX_ATTR_TYPE:
      v->value_case = TENSORFLOW__ATTR_VALUE__VALUE_TYPE;
      /* The ref flag is not written back: a DT_FLOAT_REF attr leaves as
       * DT_FLOAT. Validation rejects it for every attr an op signature declares. */
      v->type = (Tensorflow__DataType)at->v.type;
      break;
    case DFX_ATTR_SHAPE:
      v->value_case = TENSORFLOW__ATTR_VALUE__VALUE_SHAPE;
      if (!(v->shape = dfx__shape_to_proto(a, at->v.shape.rank, at->v.shape.dims))) return NULL;
      break;
    case DFX_ATTR_TENSOR:
      v->value_case = TENSORFLOW__ATTR_VALUE__VALUE_TENSOR;
      if (!(v->tensor = dfx__tensor_to_proto(a, at->v.tensor))) return NULL;
      break;
    case DFX_ATTR_FUNC:
      v->value_case = TENSORFLOW__ATTR_VALUE__VALUE_FUNC;
      if (!(v->func = func_value(a, at->v.func))) return NULL;
      break;
    case DFX_ATTR_LIST:
      v->value_case = TENSORFLOW__ATTR_VALUE__VALUE_LIST;
      if (!(v->list = list_value(a, &at->v.list))) return NULL;
      break;
    default: /* an AttrValue with no member set: written as it came */
      break;
  }
  return v;
}

static int by_key(const void *x, const void *y) {
  return strcmp((*(Tensorflow__NodeDef__AttrEntry *const *)x)->key, (*(Tensorflow__NodeDef__AttrEntry *const *)y)->key);
}

/* "src", "src:k" or "^src" for one input of a node. */
static char *input_string(dfx_arena *a, const dfx_graph *g, dfx_input in) {
  const char *src = g->nodes[in.node].name;
  if (in.slot < 0) return dfx__arena_printf(a, "^%s", src);
  /* Output 0 is written bare, the form TF writes and ParseTensorName reads as
   * output 0 (tf-semantics §1.3). */
  if (in.slot == 0) return dfx__arena_strdup(a, src);
  return dfx__arena_printf(a, "%s:%d", src, in.slot);
}

static Tensorflow__NodeDef *node_def(dfx_arena *a, const dfx_graph *g, const dfx_node *n) {
  Tensorflow__NodeDef *nd = dfx__arena_alloc(a, sizeof *nd);
  if (!nd) return NULL;
  *nd = (Tensorflow__NodeDef)TENSORFLOW__NODE_DEF__INIT;
  if (!(nd->name = dfx__arena_strdup(a, n->name)) || !(nd->op = dfx__arena_strdup(a, n->op)) ||
      !(nd->device = dfx__arena_strdup(a, n->device ? n->device : "")))
    return NULL;
  /* n->in holds the data inputs first, then the control inputs: the order
   * TF's importer insists on. */
  size_t n_in = (size_t)(n->n_in + n->n_ctrl);
  if (n_in && !(nd->input = dfx__arena_alloc(a, n_in * sizeof *nd->input))) return NULL;
  for (size_t k = 0; k < n_in; k++)
    if (!(nd->input[k] = input_string(a, g, n->in[k]))) return NULL;
  nd->n_input = n_in;
  if (n->n_attrs && !(nd->attr = dfx__arena_alloc(a, (size_t)n->n_attrs * sizeof *nd->attr))) return NULL;
  for (int k = 0; k < n->n_attrs; k++) {
    Tensorflow__NodeDef__AttrEntry *e = dfx__arena_alloc(a, sizeof *e);
    if (!e) return NULL;
    *e = (Tensorflow__NodeDef__AttrEntry)TENSORFLOW__NODE_DEF__ATTR_ENTRY__INIT;
    if (!(e->key = dfx__arena_strdup(a, n->attrs[k].name)) || !(e->value = attr_value(a, &n->attrs[k]))) return NULL;
    nd->attr[nd->n_attr++] = e;
  }
  /* TensorFlow prints a map sorted by key; so do we, for stable files. */
  if (nd->n_attr > 1) qsort(nd->attr, nd->n_attr, sizeof *nd->attr, by_key);
  return nd;
}

dfx_code dfx__graph_to_proto(const dfx_graph *g, dfx_arena *a, void **out, dfx_status *st) {
  *out = NULL;
  Tensorflow__GraphDef *gd = dfx__arena_alloc(a, sizeof *gd);
  if (!gd) return oom(st);
  *gd = (Tensorflow__GraphDef)TENSORFLOW__GRAPH_DEF__INIT;
  if (g->n_nodes && !(gd->node = dfx__arena_alloc(a, (size_t)g->n_nodes * sizeof *gd->node))) return oom(st);
  for (int i = 0; i < g->n_nodes; i++) {
    /* Nodes an edit removed are still in the array until the next finalise. */
    if (g->nodes[i].removed) continue;
    if (!(gd->node[gd->n_node++] = node_def(a, g, &g->nodes[i]))) return oom(st);
  }
  if (g->meta.has_versions) {
    Tensorflow__VersionDef *v = dfx__arena_alloc(a, sizeof *v);
    if (!v) return oom(st);
    *v = (Tensorflow__VersionDef)TENSORFLOW__VERSION_DEF__INIT;
    v->producer = g->meta.producer;
    v->min_consumer = g->meta.min_consumer;
    if (g->meta.n_bad_consumers &&
        !(v->bad_consumers = dfx__arena_memdup(a, g->meta.bad_consumers,
                                               (size_t)g->meta.n_bad_consumers * sizeof *v->bad_consumers)))
      return oom(st);
    v->n_bad_consumers = (size_t)g->meta.n_bad_consumers;
    gd->versions = v;
  }
  /* Borrowed from the graph, not copied into the arena: the message dies
   * with this call, and the graph outlives it. */
  gd->library = g->meta.library; /* carried as it came: functions are not imported yet */
  *out = gd;
  return DFX_OK;
}

dfx_code dfx_graph_serialize(const dfx_graph *g, int text, void **buf, size_t *len, dfx_status *st) {
  dfx__status_clear(st);
  if (buf) *buf = NULL;
  if (len) *len = 0;
  if (!g || !buf || !len) return dfx__status_set(st, DFX_EINVAL, "dfx_graph_serialize: NULL argument");
  dfx_arena a = {0};
  void *msg;
  dfx_code c = dfx__graph_to_proto(g, &a, &msg, st);
  Tensorflow__GraphDef *gd = msg;
  if (c == DFX_OK && text) {
    char *s;
    if ((c = dfx__pbtext_print(&gd->base, &s, len, st)) == DFX_OK) *buf = s;
  } else if (c == DFX_OK) {
    size_t n = protobuf_c_message_get_packed_size(&gd->base);
    /* dfx__malloc, since the caller frees it with dfx_free; at least one byte,
     * so NULL means out of memory even for an empty graph. */
    uint8_t *p = dfx__malloc(n ? n : 1);
    if (!p) c = oom(st);
    else {
      *len = protobuf_c_message_pack(&gd->base, p);
      *buf = p;
    }
  }
  dfx__arena_free(&a);
  return c;
}

dfx_code dfx__write_file(const char *path, const void *buf, size_t len, dfx_status *st) {
  FILE *f = fopen(path, "wb");
  if (!f) return dfx__status_set(st, DFX_EIO, "cannot open '%s' for writing", path);
  size_t w = fwrite(buf, 1, len, f);
  /* fclose flushes, so a full disk may only show here: its result counts. */
  if (fclose(f) != 0 || w != len) return dfx__status_set(st, DFX_EIO, "error writing '%s'", path);
  return DFX_OK;
}

dfx_code dfx_graph_save(const dfx_graph *g, const char *path, dfx_status *st) {
  dfx__status_clear(st);
  if (!g || !path) return dfx__status_set(st, DFX_EINVAL, "dfx_graph_save: NULL argument");
  void *buf;
  size_t len;
  dfx_code c = dfx_graph_serialize(g, dfx__format_from_path(path) == DFX_FORMAT_TEXT, &buf, &len, st);
  if (c != DFX_OK) return c;
  c = dfx__write_file(path, buf, len, st);
  dfx__free(buf);
  return c;
}
