/* capi_graph.c - the public graph calls that graph.c and graph_import.c do
 * not own: import with options (prefix and input remapping), placeholder
 * listing and typed attr reads.
 * Import options are applied to a shallow copy of the unpacked GraphDef:
 * renamed strings and the copied NodeDefs live in an arena, everything else
 * is shared with the unpacked message, which is freed as protobuf-c made it. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "builder.h"
#include "graph.h"
#include "graph.pb-c.h"
#include "graph_import.h"
#include "pbtext.h"

/* ---- import with options ---- */

static void *pb_alloc(void *ud, size_t n) {
  (void)ud;
  return dfx__malloc(n);
}
static void pb_free(void *ud, void *p) {
  (void)ud;
  dfx__free(p);
}
static ProtobufCAllocator pb_allocator = {pb_alloc, pb_free, NULL};

/* Same rule as graph_import.c: text starts with a letter or '#' and has no
 * control bytes in its first 4 KiB. */
static bool looks_like_text(const unsigned char *b, size_t len) {
  size_t i = 0;
  while (i < len && isspace(b[i])) i++;
  if (i == len) return len > 0;
  if (!(isalpha(b[i]) || b[i] == '#')) return false;
  size_t lim = len < 4096 ? len : 4096;
  for (size_t k = 0; k < lim; k++)
    if (b[k] < 0x20 && !isspace(b[k])) return false;
  return true;
}

/* A tensor reference split into node name, output (-1: control). */
typedef struct tref {
  const char *node;
  size_t len;
  int slot;
} tref;

static tref parse_ref(const char *s) {
  tref r = {s, strlen(s), 0};
  if (s[0] == '^') {
    r.node++;
    r.len--;
    r.slot = -1;
    return r;
  }
  size_t i = r.len;
  while (i > 0 && isdigit((unsigned char)s[i - 1])) i--;
  if (i < r.len && i > 0 && s[i - 1] == ':') {
    long k = 0;
    for (size_t j = i; j < r.len && k < 1000000000; j++) k = k * 10 + (s[j] - '0');
    r.slot = (int)k;
    r.len = i - 1;
  }
  return r;
}

static bool ref_eq(tref a, tref b) { return a.slot == b.slot && a.len == b.len && memcmp(a.node, b.node, a.len) == 0; }

static int find_node(const Tensorflow__GraphDef *gd, const char *name, size_t len) {
  for (size_t i = 0; i < gd->n_node; i++) {
    const char *n = gd->node[i]->name ? gd->node[i]->name : "";
    if (strncmp(n, name, len) == 0 && n[len] == 0) return (int)i;
  }
  return -1;
}

static dfx_code check_map(const Tensorflow__GraphDef *gd, const dfx_import_options *o, dfx_status *st) {
  if (o->n_input_map < 0 || (o->n_input_map > 0 && !o->input_map))
    return dfx__status_set(st, DFX_EINVAL, "dfx_graph_import_ex: bad input_map");
  for (int i = 0; i < o->n_input_map; i++) {
    const dfx_input_map *m = &o->input_map[i];
    if (!m->from || !m->to || !*m->from || !*m->to)
      return dfx__status_set(st, DFX_EINVAL, "dfx_graph_import_ex: input_map[%d] has a NULL or empty name", i);
    tref f = parse_ref(m->from), t = parse_ref(m->to);
    if ((f.slot < 0) != (t.slot < 0))
      return dfx__status_set(st, DFX_EINVAL, "input_map: '%s' -> '%s' mixes a data tensor and a control input", m->from,
                             m->to);
    if (find_node(gd, f.node, f.len) < 0)
      return dfx__status_set(st, DFX_ENOTFOUND, "input_map: '%s' is not in the imported graph", m->from);
    if (find_node(gd, t.node, t.len) < 0)
      return dfx__status_set(st, DFX_ENOTFOUND, "input_map: '%s' (replacing '%s') is not in the imported graph", m->to,
                             m->from);
    for (int k = 0; k < i; k++)
      if (ref_eq(f, parse_ref(o->input_map[k].from)))
        return dfx__status_set(st, DFX_EINVAL, "input_map: '%s' is mapped twice", m->from);
  }
  return DFX_OK;
}

/* "prefix/name" with the '^' or ":k" of `s` kept; NULL when out of memory. */
static char *prefixed(dfx_arena *a, const char *prefix, const char *s) {
  if (!*prefix) return (char *)s;
  return s[0] == '^' ? dfx__arena_printf(a, "^%s/%s", prefix, s + 1) : dfx__arena_printf(a, "%s/%s", prefix, s);
}

/* Shallow copy of one NodeDef with its inputs remapped and everything
 * prefixed. */
static dfx_code rewrite_node(dfx_arena *a, const Tensorflow__NodeDef *src, const dfx_import_options *o,
                             Tensorflow__NodeDef **out, dfx_status *st) {
  const char *prefix = o->prefix ? o->prefix : "";
  Tensorflow__NodeDef *nd = dfx__arena_alloc(a, sizeof *nd);
  if (!nd) goto oom;
  *nd = *src;
  const char *name = src->name ? src->name : "";
  if (!(nd->name = prefixed(a, prefix, name))) goto oom;
  if (src->n_input && !(nd->input = dfx__arena_alloc(a, src->n_input * sizeof *nd->input))) goto oom;
  for (size_t k = 0; k < src->n_input; k++) {
    const char *in = src->input[k] ? src->input[k] : "";
    tref r = parse_ref(in);
    for (int m = 0; m < o->n_input_map; m++) {
      tref t = parse_ref(o->input_map[m].to);
      /* The replacement node keeps its own inputs (it may wrap `from`). */
      if (ref_eq(r, parse_ref(o->input_map[m].from)) && !(t.len == strlen(name) && memcmp(t.node, name, t.len) == 0)) {
        in = o->input_map[m].to;
        break;
      }
    }
    if (!(nd->input[k] = prefixed(a, prefix, in))) goto oom;
  }
  /* Frame names follow the prefix, so two imports of one loop stay apart. */
  bool enter = nd->op && (strcmp(nd->op, "Enter") == 0 || strcmp(nd->op, "RefEnter") == 0);
  if (*prefix && enter && src->n_attr) {
    if (!(nd->attr = dfx__arena_alloc(a, src->n_attr * sizeof *nd->attr))) goto oom;
    for (size_t k = 0; k < src->n_attr; k++) {
      Tensorflow__NodeDef__AttrEntry *e = src->attr[k];
      nd->attr[k] = e;
      if (!e->key || strcmp(e->key, "frame_name") != 0 || !e->value ||
          e->value->value_case != TENSORFLOW__ATTR_VALUE__VALUE_S)
        continue;
      Tensorflow__NodeDef__AttrEntry *ne = dfx__arena_alloc(a, sizeof *ne);
      Tensorflow__AttrValue *nv = dfx__arena_alloc(a, sizeof *nv);
      char *fr = dfx__arena_printf(a, "%s/%.*s", prefix, (int)e->value->s.len, (const char *)e->value->s.data);
      if (!ne || !nv || !fr) goto oom;
      *ne = *e;
      *nv = *e->value;
      nv->s.data = (uint8_t *)fr;
      nv->s.len = strlen(fr);
      ne->value = nv;
      nd->attr[k] = ne;
    }
  }
  *out = nd;
  return DFX_OK;
oom:
  return dfx__status_set(st, DFX_ENOMEM, "out of memory");
}

static dfx_code import_with(const Tensorflow__GraphDef *gd, const dfx_import_options *o, dfx_graph **out,
                            dfx_status *st) {
  dfx_code c = check_map(gd, o, st);
  if (c != DFX_OK) return c;
  dfx_arena a = {0};
  Tensorflow__GraphDef copy = *gd;
  if (gd->n_node && !(copy.node = dfx__arena_alloc(&a, gd->n_node * sizeof *copy.node)))
    c = dfx__status_set(st, DFX_ENOMEM, "out of memory");
  for (size_t i = 0; i < gd->n_node && c == DFX_OK; i++) c = rewrite_node(&a, gd->node[i], o, &copy.node[i], st);
  if (c == DFX_OK) c = dfx__graph_from_proto(&copy, out, st);
  dfx__arena_free(&a);
  return c;
}

dfx_code dfx_graph_import_ex(const void *buf, size_t len, const dfx_import_options *opts, dfx_graph **out,
                             dfx_status *st) {
  dfx__status_clear(st);
  if (out) *out = NULL;
  if (!out || (!buf && len)) return dfx__status_set(st, DFX_EINVAL, "dfx_graph_import_ex: NULL argument");
  if (!opts) return dfx_graph_import(buf, len, out, st);
  Tensorflow__GraphDef *gd;
  if (looks_like_text(buf, len)) {
    ProtobufCMessage *m = NULL;
    dfx_code c = dfx__pbtext_parse(&tensorflow__graph_def__descriptor, buf, len, &pb_allocator, &m, st);
    if (c != DFX_OK) return c;
    gd = (Tensorflow__GraphDef *)m;
  } else if (!(gd = tensorflow__graph_def__unpack(&pb_allocator, len, buf))) {
    return dfx__status_set(st, DFX_EINVAL, "not a valid binary GraphDef (protobuf parse failed on %zu bytes)", len);
  }
  dfx_code c = import_with(gd, opts, out, st);
  tensorflow__graph_def__free_unpacked(gd, &pb_allocator);
  return c;
}

/* ---- placeholders ---- */

int dfx_graph_placeholders(const dfx_graph *g, dfx_placeholder *out, int cap) {
  if (!g || cap < 0 || (cap > 0 && !out)) return DFX_EINVAL;
  int count = 0;
  for (int i = 0; i < g->n_nodes; i++) {
    const dfx_node *n = &g->nodes[i];
    bool with_default = strcmp(n->op, "PlaceholderWithDefault") == 0;
    if (!with_default && strcmp(n->op, "Placeholder") != 0 && strcmp(n->op, "PlaceholderV2") != 0) continue;
    if (count < cap) {
      const dfx_shape *sh = dfx__attr_shape(n, "shape");
      out[count] = (dfx_placeholder){
          .name = n->name,
          .node = i,
          .dtype = dfx__attr_type(n, "dtype", DFX_INVALID),
          .rank = sh ? sh->rank : -1,
          .dims = sh && sh->rank > 0 ? sh->dims : NULL,
          .has_default = with_default,
      };
    }
    count++;
  }
  return count;
}

/* ---- attrs ---- */

int dfx_graph_node_num_attrs(const dfx_graph *g, int i) {
  return g && i >= 0 && i < g->n_nodes ? g->nodes[i].n_attrs : 0;
}

const char *dfx_graph_node_attr_name(const dfx_graph *g, int i, int k) {
  if (!g || i < 0 || i >= g->n_nodes || k < 0 || k >= g->nodes[i].n_attrs) return NULL;
  return g->nodes[i].attrs[k].name;
}

static const char *kind_name(dfx_attr_kind k) {
  switch (k) {
    case DFX_ATTR_S: return "string";
    case DFX_ATTR_I: return "int";
    case DFX_ATTR_F: return "float";
    case DFX_ATTR_B: return "bool";
    case DFX_ATTR_TYPE: return "type";
    case DFX_ATTR_SHAPE: return "shape";
    case DFX_ATTR_TENSOR: return "tensor";
    case DFX_ATTR_FUNC: return "func";
    case DFX_ATTR_PLACEHOLDER: return "placeholder";
    default: return "";
  }
}

const char *dfx_graph_node_attr_kind(const dfx_graph *g, int i, const char *name) {
  if (!g || !name || i < 0 || i >= g->n_nodes) return NULL;
  const dfx_attr *a = dfx__node_attr(&g->nodes[i], name);
  if (!a) return NULL;
  if (a->kind != DFX_ATTR_LIST) return *kind_name(a->kind) ? kind_name(a->kind) : "none";
  switch (a->v.list.kind) {
    case DFX_ATTR_S: return "list(string)";
    case DFX_ATTR_I: return "list(int)";
    case DFX_ATTR_F: return "list(float)";
    case DFX_ATTR_B: return "list(bool)";
    case DFX_ATTR_TYPE: return "list(type)";
    case DFX_ATTR_SHAPE: return "list(shape)";
    case DFX_ATTR_TENSOR: return "list(tensor)";
    case DFX_ATTR_FUNC: return "list(func)";
    default: return "list()";
  }
}

/* The attr if it exists and has kind `want` (a list kind for lists). */
static const dfx_attr *get_attr(const dfx_graph *g, int i, const char *name, dfx_attr_kind want, bool list,
                                const void *out, dfx_status *st) {
  dfx__status_clear(st);
  if (!g || !name || !out || i < 0 || i >= g->n_nodes) {
    dfx__status_set(st, DFX_EINVAL, "dfx_graph_node_attr: NULL argument or node %d out of range", i);
    return NULL;
  }
  const dfx_node *n = &g->nodes[i];
  const dfx_attr *a = dfx__node_attr(n, name);
  if (!a) {
    dfx__status_set(st, DFX_ENOTFOUND, "node '%s' (%s) has no attr '%s'", n->name, n->op, name);
    return NULL;
  }
  bool ok = list ? a->kind == DFX_ATTR_LIST && (a->v.list.kind == want || a->v.list.n == 0) : a->kind == want;
  if (!ok) {
    dfx__status_set(st, DFX_EINVAL, "attr '%s' of node '%s' is %s, not %s%s%s", name, n->name,
                    dfx_graph_node_attr_kind(g, i, name), list ? "list(" : "", kind_name(want), list ? ")" : "");
    return NULL;
  }
  return a;
}

/* Code for a failed get_attr: the status holds it, or recompute when NULL. */
static dfx_code attr_fail(const dfx_graph *g, int i, const char *name, const void *out) {
  if (!g || !name || !out || i < 0 || i >= g->n_nodes) return DFX_EINVAL;
  return dfx__node_attr(&g->nodes[i], name) ? DFX_EINVAL : DFX_ENOTFOUND;
}

dfx_code dfx_graph_node_attr_int(const dfx_graph *g, int i, const char *name, int64_t *out, dfx_status *st) {
  const dfx_attr *a = get_attr(g, i, name, DFX_ATTR_I, false, out, st);
  if (!a) return attr_fail(g, i, name, out);
  *out = a->v.i;
  return DFX_OK;
}

dfx_code dfx_graph_node_attr_float(const dfx_graph *g, int i, const char *name, float *out, dfx_status *st) {
  const dfx_attr *a = get_attr(g, i, name, DFX_ATTR_F, false, out, st);
  if (!a) return attr_fail(g, i, name, out);
  *out = a->v.f;
  return DFX_OK;
}

dfx_code dfx_graph_node_attr_bool(const dfx_graph *g, int i, const char *name, int *out, dfx_status *st) {
  const dfx_attr *a = get_attr(g, i, name, DFX_ATTR_B, false, out, st);
  if (!a) return attr_fail(g, i, name, out);
  *out = a->v.b ? 1 : 0;
  return DFX_OK;
}

dfx_code dfx_graph_node_attr_type(const dfx_graph *g, int i, const char *name, dfx_dtype *out, dfx_status *st) {
  const dfx_attr *a = get_attr(g, i, name, DFX_ATTR_TYPE, false, out, st);
  if (!a) return attr_fail(g, i, name, out);
  *out = a->v.type;
  return DFX_OK;
}

dfx_code dfx_graph_node_attr_string(const dfx_graph *g, int i, const char *name, const char **out, size_t *len,
                                    dfx_status *st) {
  const dfx_attr *a = get_attr(g, i, name, DFX_ATTR_S, false, out, st);
  if (!a) return attr_fail(g, i, name, out);
  *out = a->v.s.ptr ? a->v.s.ptr : "";
  if (len) *len = a->v.s.len;
  return DFX_OK;
}

dfx_code dfx_graph_node_attr_shape(const dfx_graph *g, int i, const char *name, int *rank, const int64_t **dims,
                                   dfx_status *st) {
  const dfx_attr *a = get_attr(g, i, name, DFX_ATTR_SHAPE, false, rank, st);
  if (!a) return attr_fail(g, i, name, rank);
  if (!dims) return dfx__status_set(st, DFX_EINVAL, "dfx_graph_node_attr_shape: NULL dims");
  *rank = a->v.shape.rank;
  *dims = a->v.shape.rank > 0 ? a->v.shape.dims : NULL;
  return DFX_OK;
}

dfx_code dfx_graph_node_attr_tensor(const dfx_graph *g, int i, const char *name, dfx_tensor **out, dfx_status *st) {
  if (out) *out = NULL;
  const dfx_attr *a = get_attr(g, i, name, DFX_ATTR_TENSOR, false, out, st);
  if (!a) return attr_fail(g, i, name, out);
  *out = dfx__tensor_ref(a->v.tensor);
  return DFX_OK;
}

dfx_code dfx_graph_node_attr_ints(const dfx_graph *g, int i, const char *name, const int64_t **vals, int *n,
                                  dfx_status *st) {
  const dfx_attr *a = get_attr(g, i, name, DFX_ATTR_I, true, vals, st);
  if (!a) return attr_fail(g, i, name, vals);
  if (!n) return dfx__status_set(st, DFX_EINVAL, "dfx_graph_node_attr_ints: NULL count");
  *vals = a->v.list.n ? a->v.list.v.i : NULL;
  *n = a->v.list.n;
  return DFX_OK;
}

dfx_code dfx_graph_node_attr_types(const dfx_graph *g, int i, const char *name, const dfx_dtype **vals, int *n,
                                   dfx_status *st) {
  const dfx_attr *a = get_attr(g, i, name, DFX_ATTR_TYPE, true, vals, st);
  if (!a) return attr_fail(g, i, name, vals);
  if (!n) return dfx__status_set(st, DFX_EINVAL, "dfx_graph_node_attr_types: NULL count");
  *vals = a->v.list.n ? a->v.list.v.type : NULL;
  *n = a->v.list.n;
  return DFX_OK;
}
