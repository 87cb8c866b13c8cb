/* graph_import.c - GraphDef bytes to a graph: the conversion from
 * protobuf-c messages (binary or text) into dfexec's own nodes and attrs,
 * with input strings resolved to node ids. Everything derived from that
 * (signatures, dtypes, consumer edges, frames) and TensorFlow's import
 * checks are finalize.c's, which edited graphs go through as well. The
 * unpacked message never outlives the import call. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "alloc.h"
#include "graph.h"
#include "graph.pb-c.h"
#include "graph_import.h"
#include "op_registry.h"
#include "node_sig.h"
#include "pballoc.h"
#include "pbtext.h"
#include "savedmodel.h"
#include "tensor_proto.h"

/* ---- attrs ---- */

static dfx_code convert_attr_value(const Tensorflow__AttrValue *v, dfx_attr *a, dfx_status *st);

/* *ref is raised when an element is a *_REF dtype (see dfx_attr.ref_dtype). */
static dfx_code convert_list(const Tensorflow__AttrValue__ListValue *l, dfx_attr_list *out, bool *ref,
                             dfx_status *st) {
  memset(out, 0, sizeof *out);
  if (!l) return DFX_OK;
  /* TF lists hold one kind; take the first non-empty member. */
  size_t n;
  if ((n = l->n_s)) {
    out->kind = DFX_ATTR_S;
    if (!(out->v.s = dfx__calloc(n, sizeof(dfx_str)))) goto oom;
    /* Lists count their elements as they fill them (out->n), so on an error
     * dfx__attr_clear frees exactly what was built; the same below. */
    for (size_t k = 0; k < n; k++, out->n++) {
      out->v.s[k].len = l->s[k].len;
      if (!(out->v.s[k].ptr = dfx__strndup((const char *)l->s[k].data, l->s[k].len))) goto oom;
    }
  } else if ((n = l->n_i)) {
    out->kind = DFX_ATTR_I;
    if (!(out->v.i = dfx__malloc(n * sizeof(int64_t)))) goto oom;
    memcpy(out->v.i, l->i, n * sizeof(int64_t));
    out->n = (int)n;
  } else if ((n = l->n_f)) {
    out->kind = DFX_ATTR_F;
    if (!(out->v.f = dfx__malloc(n * sizeof(float)))) goto oom;
    memcpy(out->v.f, l->f, n * sizeof(float));
    out->n = (int)n;
  } else if ((n = l->n_b)) {
    out->kind = DFX_ATTR_B;
    if (!(out->v.b = dfx__malloc(n * sizeof(bool)))) goto oom;
    for (size_t k = 0; k < n; k++) out->v.b[k] = l->b[k] != 0;
    out->n = (int)n;
  } else if ((n = l->n_type)) {
    out->kind = DFX_ATTR_TYPE;
    if (!(out->v.type = dfx__malloc(n * sizeof(dfx_dtype)))) goto oom;
    for (size_t k = 0; k < n; k++) {
      out->v.type[k] = dfx__dtype_from_wire(l->type[k]);
      out->n++;
      /* DT_*_REF is base + 100; the element keeps the base type and the attr
       * carries the flag, for validation to reject. */
      *ref |= l->type[k] > 100;
      if (out->v.type[k] == DFX_INVALID) return dfx__status_set(st, DFX_EUNIMPL, "unsupported dtype %d in list", (int)l->type[k]);
    }
  } else if ((n = l->n_shape)) {
    out->kind = DFX_ATTR_SHAPE;
    if (!(out->v.shape = dfx__calloc(n, sizeof(dfx_shape)))) goto oom;
    for (size_t k = 0; k < n; k++, out->n++) {
      dfx_code c = dfx__shape_from_proto(l->shape[k], &out->v.shape[k], st);
      if (c != DFX_OK) return c;
    }
  } else if ((n = l->n_tensor)) {
    out->kind = DFX_ATTR_TENSOR;
    if (!(out->v.tensor = dfx__calloc(n, sizeof(dfx_tensor *)))) goto oom;
    for (size_t k = 0; k < n; k++, out->n++) {
      dfx_code c = dfx__tensor_from_proto(l->tensor[k], &out->v.tensor[k], st);
      if (c != DFX_OK) return c;
    }
  } else if ((n = l->n_func)) {
    out->kind = DFX_ATTR_FUNC;
    if (!(out->v.func = dfx__calloc(n, sizeof(char *)))) goto oom;
    for (size_t k = 0; k < n; k++, out->n++)
      /* Only the function's name is kept; a NameAttrList's own attrs are dropped. */
      if (!(out->v.func[k] = dfx__strdup(l->func[k]->name ? l->func[k]->name : ""))) goto oom;
  }
  if (n > (size_t)INT32_MAX) return dfx__status_set(st, DFX_ELIMIT, "attr list too long");
  return DFX_OK;
oom:
  return dfx__status_set(st, DFX_ENOMEM, "out of memory");
}

static dfx_code convert_attr_value(const Tensorflow__AttrValue *v, dfx_attr *a, dfx_status *st) {
  switch (v->value_case) {
    case TENSORFLOW__ATTR_VALUE__VALUE_S:
    case TENSORFLOW__ATTR_VALUE__VALUE_PLACEHOLDER: {
      const char *p;
      size_t len;
      if (v->value_case == TENSORFLOW__ATTR_VALUE__VALUE_S) {
        a->kind = DFX_ATTR_S;
        p = (const char *)v->s.data;
        len = v->s.len;
      } else {
        a->kind = DFX_ATTR_PLACEHOLDER;
        /* `placeholder` is a proto string (char *, NUL-terminated), `s` is bytes. */
        p = v->placeholder ? v->placeholder : "";
        len = strlen(p);
      }
      a->v.s.len = len;
      /* Always NUL-terminated so kernels can use it as a C string. */
      if (!(a->v.s.ptr = dfx__strndup(p ? p : "", len))) return dfx__status_set(st, DFX_ENOMEM, "out of memory");
      return DFX_OK;
    }
    case TENSORFLOW__ATTR_VALUE__VALUE_I: a->kind = DFX_ATTR_I; a->v.i = v->i; return DFX_OK;
    case TENSORFLOW__ATTR_VALUE__VALUE_F: a->kind = DFX_ATTR_F; a->v.f = v->f; return DFX_OK;
    case TENSORFLOW__ATTR_VALUE__VALUE_B: a->kind = DFX_ATTR_B; a->v.b = v->b != 0; return DFX_OK;
    case TENSORFLOW__ATTR_VALUE__VALUE_TYPE:
      a->kind = DFX_ATTR_TYPE;
      a->v.type = dfx__dtype_from_wire(v->type);
      a->ref_dtype = v->type > 100;
      if (a->v.type == DFX_INVALID) return dfx__status_set(st, DFX_EUNIMPL, "unsupported dtype %d", (int)v->type);
      return DFX_OK;
    case TENSORFLOW__ATTR_VALUE__VALUE_SHAPE:
      a->kind = DFX_ATTR_SHAPE;
      return dfx__shape_from_proto(v->shape, &a->v.shape, st);
    case TENSORFLOW__ATTR_VALUE__VALUE_TENSOR:
      a->kind = DFX_ATTR_TENSOR;
      if (!v->tensor) return dfx__status_set(st, DFX_EINVAL, "empty tensor attr");
      return dfx__tensor_from_proto(v->tensor, &a->v.tensor, st);
    case TENSORFLOW__ATTR_VALUE__VALUE_LIST:
      a->kind = DFX_ATTR_LIST;
      return convert_list(v->list, &a->v.list, &a->ref_dtype, st);
    case TENSORFLOW__ATTR_VALUE__VALUE_FUNC:
      a->kind = DFX_ATTR_FUNC;
      a->v.func = dfx__strdup(v->func && v->func->name ? v->func->name : "");
      return a->v.func ? DFX_OK : dfx__status_set(st, DFX_ENOMEM, "out of memory");
    default:
      /* An AttrValue with no member set is kept as such: validation then names
       * the node and attr (node_sig.c) instead of import failing here. */
      a->kind = DFX_ATTR_NONE;
      return DFX_OK;
  }
}

/* ---- names and input strings ---- */

/* ---- conversion of one NodeDef ---- */

static dfx_code convert_node(const Tensorflow__NodeDef *nd, dfx_node *n, dfx_status *st) {
  const char *name = nd->name ? nd->name : "";
  if (!dfx__node_name_valid(name))
    return dfx__status_set(st, DFX_EINVAL, "Node '%s': node name is not valid (must match [A-Za-z0-9._][A-Za-z0-9_./>-]*)", name);
  if (!nd->op || !*nd->op) return dfx__status_set(st, DFX_EINVAL, "Node '%s': has no op", name);
  if (!(n->name = dfx__strdup(name)) || !(n->op = dfx__strdup(nd->op)) ||
      !(n->device = dfx__strdup(nd->device ? nd->device : "")))
    return dfx__status_set(st, DFX_ENOMEM, "out of memory");
  n->ctrl = dfx__ctrl_class(n->op);
  if (nd->n_attr) {
    if (!(n->attrs = dfx__calloc(nd->n_attr, sizeof(dfx_attr)))) return dfx__status_set(st, DFX_ENOMEM, "out of memory");
    for (size_t i = 0; i < nd->n_attr; i++) {
      const Tensorflow__NodeDef__AttrEntry *e = nd->attr[i];
      const char *key = e->key ? e->key : "";
      /* A repeated map key: the last entry wins, as in protobuf maps. */
      dfx_attr *a = NULL;
      for (int k = 0; k < n->n_attrs; k++)
        if (strcmp(n->attrs[k].name, key) == 0) {
          a = &n->attrs[k];
          dfx__attr_clear(a);
        }
      /* Duplicates reuse their slot, so n_attr entries always suffice. */
      if (!a) a = &n->attrs[n->n_attrs++];
      if (!(a->name = dfx__strdup(key))) return dfx__status_set(st, DFX_ENOMEM, "out of memory");
      if (!e->value) continue;
      dfx_code c = convert_attr_value(e->value, a, st);
      if (c != DFX_OK) {
        char msg[DFX_STATUS_MSG_MAX];
        /* Copied out first: the status is both the source of the detail and the
         * destination of the new message. */
        snprintf(msg, sizeof msg, "%s", st ? st->msg : "");
        return dfx__status_set(st, c, "Node '%s' (%s): attr '%s': %s", name, n->op, key, msg);
      }
    }
  }
  return DFX_OK;
}

/* For function bodies (function.c): the same conversion as for a graph's
 * nodes. */
dfx_code dfx__node_from_proto(const void *nodedef, dfx_node *n, dfx_status *st) { return convert_node(nodedef, n, st); }
dfx_code dfx__attr_from_proto(const void *attr_value, dfx_attr *a, dfx_status *st) {
  return convert_attr_value(attr_value, a, st);
}

/* ---- whole-graph conversion ---- */

/* A NodeDef may name a producer that comes later in the GraphDef, so inputs
 * are resolved only once every node exists and the name index is built. */
static dfx_code resolve_inputs(dfx_graph *g, const Tensorflow__GraphDef *gd, dfx_status *st) {
  for (int i = 0; i < g->n_nodes; i++) {
    const Tensorflow__NodeDef *nd = gd->node[i];
    dfx_node *n = &g->nodes[i];
    if (!nd->n_input) continue;
    if (!(n->in = dfx__calloc(nd->n_input, sizeof(dfx_input)))) return dfx__status_set(st, DFX_ENOMEM, "out of memory");
    for (size_t k = 0; k < nd->n_input; k++) {
      const char *nm;
      size_t len;
      int slot;
      /* TF's ParseTensorName: "node", "node:k" or "^node" (slot -1). */
      dfx__tensor_name_parse(nd->input[k] ? nd->input[k] : "", &nm, &len, &slot);
      /* TF's importer rejects a data input after a control input, with this
       * message (tf-semantics §1.3); node.h relies on data inputs coming first. */
      if (slot >= 0 && n->n_ctrl > 0)
        return dfx__status_set(st, DFX_EINVAL, "Node '%s': Control dependencies must come after regular dependencies",
                               n->name);
      int src = dfx__graph_find(g, nm, len);
      if (src < 0)
        return dfx__status_set(st, DFX_EINVAL, "Node '%s' (%s): Unknown input node '%s'", n->name, n->op, nd->input[k]);
      n->in[k] = (dfx_input){src, slot};
      if (slot < 0) n->n_ctrl++;
      else n->n_in++;
    }
  }
  return DFX_OK;
}

/* ---- entry points ---- */

static bool looks_like_text(const unsigned char *b, size_t len);

/* Text starts with a field name or a comment and has no control bytes in
 * its first 4 KiB; a binary GraphDef starts with a field tag (node = 0x0a,
 * versions = 0x22, library = 0x12). */
int dfx__format_detect(const void *buf, size_t len) {
  const unsigned char *b = buf;
  return looks_like_text(b, len) ? DFX_FORMAT_TEXT : DFX_FORMAT_BINARY;
}

static bool looks_like_text(const unsigned char *b, size_t len) {
  size_t i = 0;
  while (i < len && isspace(b[i])) i++;
  if (i == len) return len > 0; /* only whitespace: an empty text graph */
  if (!(isalpha(b[i]) || b[i] == '#')) return false;
  /* A binary GraphDef starts with 0x0a, which isspace skips, and its length
   * byte may well be a letter, so the test above is not enough. But a
   * NodeDef's op tag (0x12) comes right after its name, and control bytes
   * never appear in text. */
  size_t lim = len < 4096 ? len : 4096;
  for (size_t k = 0; k < lim; k++)
    if (b[k] < 0x20 && !isspace(b[k])) return false;
  return true;
}

/* The graph keeps the function library as it came, for export (functions
 * are not imported yet): a copy through the wire format, so it owns it. */
static dfx_code copy_library(dfx_graph *g, const Tensorflow__FunctionDefLibrary *lib, dfx_status *st) {
  g->meta.library = dfx__graph_library_copy(lib);
  return g->meta.library ? DFX_OK : dfx__status_set(st, DFX_ENOMEM, "out of memory copying the function library");
}

/* The nodes, attrs, resolved inputs, versions and library of a GraphDef,
 * in a graph still in the editing state. */
static dfx_code convert(const Tensorflow__GraphDef *gd, dfx_graph **out, dfx_status *st) {
  *out = NULL;
  if (gd->n_node > (size_t)INT32_MAX / 4) return dfx__status_set(st, DFX_ELIMIT, "graph has too many nodes");
  dfx_graph *g = dfx__graph_new();
  if (!g) return dfx__status_set(st, DFX_ENOMEM, "out of memory");
  dfx_code c = DFX_OK;
  if (gd->n_node && !(g->nodes = dfx__calloc(gd->n_node, sizeof(dfx_node)))) {
    c = dfx__status_set(st, DFX_ENOMEM, "out of memory");
    goto fail;
  }
  g->cap_nodes = (int)gd->n_node;
  for (size_t i = 0; i < gd->n_node; i++, g->n_nodes++) {
    /* n_nodes covers the node being converted, even when it fails halfway, so
     * dfx_graph_free releases what it holds. */
    g->nodes[i].id = (int)i;
    if ((c = convert_node(gd->node[i], &g->nodes[i], st)) != DFX_OK) {
      g->n_nodes++;
      goto fail;
    }
  }
  if (gd->versions) {
    g->meta.has_versions = true;
    g->meta.producer = gd->versions->producer;
    g->meta.min_consumer = gd->versions->min_consumer;
    if (gd->versions->n_bad_consumers &&
        !(g->meta.bad_consumers = dfx__malloc(gd->versions->n_bad_consumers * sizeof(int32_t)))) {
      c = dfx__status_set(st, DFX_ENOMEM, "out of memory");
      goto fail;
    }
    if (gd->versions->n_bad_consumers)
      memcpy(g->meta.bad_consumers, gd->versions->bad_consumers, gd->versions->n_bad_consumers * sizeof(int32_t));
    g->meta.n_bad_consumers = (int)gd->versions->n_bad_consumers;
  }
  if (gd->library && (c = copy_library(g, gd->library, st)) != DFX_OK) goto fail;
  /* The index first: resolve_inputs finds producers by name through it. */
  if ((c = dfx__graph_index_rebuild(g, st)) != DFX_OK || (c = resolve_inputs(g, gd, st)) != DFX_OK) goto fail;
  *out = g;
  return DFX_OK;
fail:
  dfx_graph_free(g);
  return c;
}

dfx_code dfx__graph_from_proto(const void *msg, dfx_graph **out, dfx_status *st) {
  dfx_code c = convert(msg, out, st);
  if (c == DFX_OK && (c = dfx__graph_finalize(*out, st)) != DFX_OK) {
    dfx_graph_free(*out);
    *out = NULL;
  }
  return c;
}

dfx_code dfx__graph_import_unfinalized(const void *buf, size_t len, int format, dfx_graph **out, dfx_status *st) {
  if (out) *out = NULL;
  if (!out || (!buf && len)) return dfx__status_set(st, DFX_EINVAL, "dfx_graph_import: NULL argument");
  if (format == DFX_FORMAT_AUTO) format = dfx__format_detect(buf, len);
  Tensorflow__GraphDef *gd = NULL;
  if (format == DFX_FORMAT_TEXT) {
    ProtobufCMessage *m = NULL;
    dfx_code c = dfx__pbtext_parse(&tensorflow__graph_def__descriptor, buf, len, &dfx__pb_allocator, &m, st);
    if (c != DFX_OK) return c;
    gd = (Tensorflow__GraphDef *)m;
  } else {
    int oom = 0;
    /* protobuf-c returns NULL alike for bad bytes and for no memory; the flag
     * tells them apart (pballoc.h). */
    ProtobufCAllocator flagged = dfx__pb_allocator_flagged(&oom);
    gd = tensorflow__graph_def__unpack(&flagged, len, buf);
    if (!gd && oom) return dfx__status_set(st, DFX_ENOMEM, "out of memory unpacking a %zu-byte GraphDef", len);
    if (!gd) {
      char what[DFX_STATUS_MSG_MAX];
      if (dfx__savedmodel_describe(buf, len, what, sizeof what)) return dfx__status_set(st, DFX_EINVAL, "%s", what);
      return dfx__status_set(st, DFX_EINVAL, "not a valid binary GraphDef (protobuf parse failed on %zu bytes)", len);
    }
  }
  dfx_code c = convert(gd, out, st);
  tensorflow__graph_def__free_unpacked(gd, &dfx__pb_allocator);
  /* A MetaGraphDef may pass for a GraphDef on the wire and then fail here. */
  char what[DFX_STATUS_MSG_MAX];
  if (c == DFX_EINVAL && format != DFX_FORMAT_TEXT && dfx__savedmodel_describe(buf, len, what, sizeof what))
    c = dfx__status_set(st, DFX_EINVAL, "%s", what);
  return c;
}

dfx_code dfx__graph_import_ex(const void *buf, size_t len, int format, dfx_graph **out, dfx_status *st) {
  dfx_code c = dfx__graph_import_unfinalized(buf, len, format, out, st);
  if (c == DFX_OK && (c = dfx__graph_finalize(*out, st)) != DFX_OK) {
    dfx_graph_free(*out);
    *out = NULL;
  }
  return c;
}

dfx_code dfx_graph_import(const void *buf, size_t len, dfx_graph **out, dfx_status *st) {
  dfx__status_clear(st);
  return dfx__graph_import_ex(buf, len, DFX_FORMAT_AUTO, out, st);
}

dfx_code dfx__read_file(const char *path, char **data, size_t *len, dfx_status *st) {
  *data = NULL;
  *len = 0;
  FILE *f = fopen(path, "rb");
  if (!f) return dfx__status_set(st, DFX_EIO, "cannot open '%s'", path);
  /* Grows by doubling until fread comes back short: no file size is needed,
   * so pipes and /dev/stdin load too. */
  size_t cap = 1 << 16, n = 0;
  char *buf = dfx__malloc(cap);
  while (buf) {
    size_t got = fread(buf + n, 1, cap - n, f);
    n += got;
    if (n < cap) break;
    char *nb = dfx__realloc(buf, cap * 2);
    if (!nb) {
      dfx__free(buf);
      buf = NULL;
      break;
    }
    buf = nb;
    cap *= 2;
  }
  int err = ferror(f);
  fclose(f);
  if (!buf) return dfx__status_set(st, DFX_ENOMEM, "out of memory reading '%s'", path);
  if (err) {
    dfx__free(buf);
    return dfx__status_set(st, DFX_EIO, "error reading '%s'", path);
  }
  *data = buf;
  *len = n;
  return DFX_OK;
}

int dfx__format_from_path(const char *path) {
  size_t n = strlen(path);
  if ((n >= 6 && strcmp(path + n - 6, ".pbtxt") == 0) || (n >= 4 && strcmp(path + n - 4, ".txt") == 0))
    return DFX_FORMAT_TEXT;
  if (n >= 3 && strcmp(path + n - 3, ".pb") == 0) return DFX_FORMAT_BINARY;
  return DFX_FORMAT_AUTO;
}

dfx_code dfx__graph_load_ex(const char *path, dfx_graph **out, dfx_status *st) {
  if (out) *out = NULL;
  if (!path || !out) return dfx__status_set(st, DFX_EINVAL, "dfx_graph_load: NULL argument");
  char *data;
  size_t len;
  struct stat sb;
  if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
    /* A SavedModel directory: say so, from its saved_model.pb. */
    char pb[4096], what[DFX_STATUS_MSG_MAX];
    snprintf(pb, sizeof pb, "%s/saved_model.pb", path);
    if (dfx__read_file(pb, &data, &len, NULL) != DFX_OK)
      return dfx__status_set(st, DFX_EIO, "'%s' is a directory, not a GraphDef file", path);
    bool sm = dfx__savedmodel_describe(data, len, what, sizeof what);
    dfx__free(data);
    if (sm) return dfx__status_set(st, DFX_EINVAL, "%s is a SavedModel directory; its saved_model.pb: %s", path, what);
    return dfx__status_set(st, DFX_EINVAL, "'%s' is a directory, and its saved_model.pb is not a SavedModel", path);
  }
  dfx_code c = dfx__read_file(path, &data, &len, st);
  if (c != DFX_OK) return c;
  int fmt = dfx__format_from_path(path);
  c = dfx__graph_import_ex(data, len, fmt, out, st);
  dfx__free(data);
  if (c != DFX_OK && st) {
    char msg[DFX_STATUS_MSG_MAX];
    /* Copied out first, for the same aliasing reason as in convert_node. */
    snprintf(msg, sizeof msg, "%s", st->msg);
    dfx__status_set(st, c, "%s: %s", path, msg);
  }
  return c;
}

dfx_code dfx_graph_load(const char *path, dfx_graph **out, dfx_status *st) {
  dfx__status_clear(st);
  return dfx__graph_load_ex(path, out, st);
}
