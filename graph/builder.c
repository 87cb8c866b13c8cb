/* builder.c - the graph builder: arena, names, nodes and finalisation into
 * a GraphDef (see dfx_builder in dfexec.h); attrs and type inference are in
 * builder_attr.c, control flow in builder_loop.c.
 * Invariants: every string and protobuf struct a node points at lives in the
 * builder's arena; each NodeDef keeps its data inputs ahead of its control
 * inputs and its attrs sorted by key (the order TensorFlow prints them). */
#include "builder.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "graph_import.h"
#include "pbtext.h"
#include "tensor.h"

/* ---- errors ---- */

dfx_code dfx__builder_fail(dfx_builder *b, dfx_status *st, dfx_code code, const char *fmt, ...) {
  char msg[DFX_STATUS_MSG_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (b && b->err.code == DFX_OK) dfx__status_set(&b->err, code, "%s", msg);
  return dfx__status_set(st, code, "%s", msg);
}

#define OOM(b, st) dfx__builder_fail(b, st, DFX_ENOMEM, "builder: out of memory")

/* ---- lifecycle ---- */

dfx_builder *dfx_builder_new(void) {
  dfx_builder *b = dfx__calloc(1, sizeof *b);
  if (!b) return NULL;
  b->cap_ctx = 4;
  b->scope_cap = 64;
  if (!(b->ctxs = dfx__calloc((size_t)b->cap_ctx, sizeof *b->ctxs)) || !(b->scope = dfx__calloc(b->scope_cap, 1))) {
    dfx_builder_free(b);
    return NULL;
  }
  b->n_ctx = 1;
  b->ctxs[0] = (dfx_bctx){.kind = DFX_BCTX_ROOT, .parent = -1, .scope = ""};
  dfx__status_clear(&b->err);
  return b;
}

void dfx_builder_free(dfx_builder *b) {
  if (!b) return;
  dfx__arena_free(&b->arena);
  dfx__free(b->nodes);
  dfx__free(b->hkeys);
  dfx__free(b->hvals);
  dfx__free(b->scope);
  dfx__free(b->scopes);
  dfx__free(b->ctxs);
  dfx__free(b);
}

int dfx_builder_node_count(const dfx_builder *b) { return b ? b->n_nodes : 0; }

/* ---- name table ---- */

static uint32_t hash_name(const char *s, size_t len) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < len; i++) h = (h ^ (unsigned char)s[i]) * 16777619u;
  return h;
}

/* Slot holding `s` (len bytes) or the empty slot where it would go. */
static uint32_t name_slot(const dfx_builder *b, const char *s, size_t len) {
  uint32_t m = b->hcap - 1, i = hash_name(s, len) & m;
  while (b->hkeys[i] && !(strncmp(b->hkeys[i], s, len) == 0 && b->hkeys[i][len] == 0)) i = (i + 1) & m;
  return i;
}

/* Value for the name: node index, -1 reserved, -2 absent. */
static int name_get(const dfx_builder *b, const char *s, size_t len) {
  if (!b->hcap) return -2;
  uint32_t i = name_slot(b, s, len);
  return b->hkeys[i] ? b->hvals[i] : -2;
}

/* Inserts or updates; `key` must live in the arena. */
static bool name_put(dfx_builder *b, const char *key, int val) {
  if ((b->hcount + 1) * 2 > b->hcap) {
    uint32_t cap = b->hcap ? b->hcap * 2 : 64;
    const char **keys = dfx__calloc(cap, sizeof *keys);
    int *vals = dfx__calloc(cap, sizeof *vals);
    if (!keys || !vals) {
      dfx__free(keys);
      dfx__free(vals);
      return false;
    }
    const char **ok = b->hkeys;
    int *ov = b->hvals;
    uint32_t ocap = b->hcap;
    b->hkeys = keys;
    b->hvals = vals;
    b->hcap = cap;
    for (uint32_t i = 0; i < ocap; i++)
      if (ok[i]) {
        uint32_t s = name_slot(b, ok[i], strlen(ok[i]));
        b->hkeys[s] = ok[i];
        b->hvals[s] = ov[i];
      }
    dfx__free(ok);
    dfx__free(ov);
  }
  uint32_t s = name_slot(b, key, strlen(key));
  if (!b->hkeys[s]) b->hcount++;
  b->hkeys[s] = key;
  b->hvals[s] = val;
  return true;
}

const char *dfx__builder_unique(dfx_builder *b, const char *base, dfx_status *st) {
  char *name = dfx__arena_strdup(&b->arena, base);
  for (int k = 1; name && name_get(b, name, strlen(name)) != -2; k++)
    name = dfx__arena_printf(&b->arena, "%s_%d", base, k);
  if (!name || !name_put(b, name, -1)) {
    OOM(b, st);
    return NULL;
  }
  return name;
}

/* ---- tensor names ---- */

/* Splits "node:k" / "^node" / "node": returns the node part's length. */
static size_t split_tensor(const char *s, int *slot) {
  if (s[0] == '^') {
    *slot = -1;
    return strlen(s);
  }
  size_t n = strlen(s), i = n;
  while (i > 0 && s[i - 1] >= '0' && s[i - 1] <= '9') i--;
  if (i < n && i > 0 && s[i - 1] == ':') {
    long k = 0;
    for (size_t j = i; j < n && k < 1000000; j++) k = k * 10 + (s[j] - '0');
    *slot = (int)k;
    return i - 1;
  }
  *slot = 0;
  return n;
}

int dfx__builder_producer(const dfx_builder *b, const char *tensor, int *slot) {
  size_t len = split_tensor(tensor, slot);
  const char *nm = *slot < 0 ? tensor + 1 : tensor;
  if (*slot < 0) len--;
  int v = name_get(b, nm, len);
  return v >= 0 ? v : -1;
}

/* ---- nodes ---- */

static bool valid_name_part(const char *s) { return *s && !strpbrk(s, ":^"); }

/* Appends an input string (arena copy), keeping control inputs last. */
static dfx_code push_input(dfx_bnode *n, const char *in, dfx_status *st) {
  dfx_builder *b = n->b;
  Tensorflow__NodeDef *nd = &n->nd;
  if (nd->n_input == n->cap_input) {
    size_t cap = n->cap_input ? n->cap_input * 2 : 4;
    char **arr = dfx__arena_alloc(&b->arena, cap * sizeof *arr);
    if (!arr) return OOM(b, st);
    if (nd->n_input) memcpy(arr, nd->input, nd->n_input * sizeof *arr);
    nd->input = arr;
    n->cap_input = cap;
  }
  char *s = dfx__arena_strdup(&b->arena, in);
  if (!s) return OOM(b, st);
  if (in[0] == '^') {
    nd->input[nd->n_input++] = s;
    n->n_ctrl++;
  } else {
    size_t at = nd->n_input - (size_t)n->n_ctrl;
    memmove(nd->input + at + 1, nd->input + at, (size_t)n->n_ctrl * sizeof(char *));
    nd->input[at] = s;
    nd->n_input++;
  }
  return DFX_OK;
}

dfx_code dfx__builder_raw(dfx_builder *b, const char *op, const char *full, const char *const *inputs, int n,
                          int ctx, dfx_bnode **out, dfx_status *st) {
  if (out) *out = NULL;
  int have = name_get(b, full, strlen(full));
  if (have >= 0) return dfx__builder_fail(b, st, DFX_EINVAL, "builder: node name '%s' is already used", full);
  if (b->n_nodes == b->cap_nodes) {
    int cap = b->cap_nodes ? b->cap_nodes * 2 : 32;
    dfx_bnode **nn = dfx__realloc(b->nodes, (size_t)cap * sizeof *nn);
    if (!nn) return OOM(b, st);
    b->nodes = nn;
    b->cap_nodes = cap;
  }
  dfx_bnode *node = dfx__arena_alloc(&b->arena, sizeof *node);
  if (!node) return OOM(b, st);
  node->nd = (Tensorflow__NodeDef)TENSORFLOW__NODE_DEF__INIT;
  node->b = b;
  node->ctx = ctx;
  char *key = dfx__arena_strdup(&b->arena, full);
  if (!key || !(node->nd.op = dfx__arena_strdup(&b->arena, op)) || !(node->nd.device = dfx__arena_strdup(&b->arena, "")))
    return OOM(b, st);
  node->nd.name = key;
  for (int i = 0; i < n; i++) {
    dfx_code c = push_input(node, inputs[i], st);
    if (c != DFX_OK) return c;
  }
  if (!name_put(b, key, b->n_nodes)) return OOM(b, st);
  b->nodes[b->n_nodes++] = node;
  if (out) *out = node;
  return DFX_OK;
}

static const char *ctx_desc(const dfx_builder *b, int ctx, char *buf, size_t n) {
  const dfx_bctx *c = &b->ctxs[ctx];
  size_t sl = strlen(c->scope);
  if (c->kind == DFX_BCTX_LOOP) snprintf(buf, n, "loop '%.*s'", (int)(sl ? sl - 1 : 0), c->scope);
  else if (c->kind == DFX_BCTX_COND)
    snprintf(buf, n, "%s branch of cond '%.*s'", c->branch ? "true" : "false", (int)(sl ? sl - 1 : 0), c->scope);
  else snprintf(buf, n, "the root context");
  return buf;
}

/* Applies the frame rules to one input of a node made in context `ctx`. */
static dfx_code route_input(dfx_builder *b, int ctx, const char *in, const char **out, bool *inner_ctrl,
                            dfx_status *st) {
  *out = in;
  if (in[0] != '^') return dfx__builder_import(b, ctx, in, out, st);
  int slot, p = dfx__builder_producer(b, in, &slot);
  if (p < 0) return DFX_OK;
  int pc = b->nodes[p]->ctx;
  if (dfx__builder_frame_of(b, pc) != dfx__builder_frame_of(b, ctx)) {
    char d1[160], d2[160];
    return dfx__builder_fail(b, st, DFX_EINVAL,
                             "builder: control input '%s' comes from %s and cannot reach %s; add the dependency "
                             "outside the loop",
                             in, ctx_desc(b, pc, d1, sizeof d1), ctx_desc(b, ctx, d2, sizeof d2));
  }
  if (pc == ctx) *inner_ctrl = true;
  return DFX_OK;
}

static dfx_code add_node(dfx_builder *b, int ctx, const char *op, const char *full, const char *const *inputs, int n,
                         dfx_bnode **out, dfx_status *st) {
  const char **routed = dfx__calloc((size_t)n + 1, sizeof *routed);
  if (!routed) return OOM(b, st);
  bool inner_ctrl = false;
  int n_data = 0;
  dfx_code c = DFX_OK;
  for (int i = 0; i < n && c == DFX_OK; i++) {
    c = route_input(b, ctx, inputs[i], &routed[i], &inner_ctrl, st);
    if (inputs[i][0] != '^') n_data++;
  }
  /* tf.while_loop / tf.cond rule: an input-less node in a context hangs off
   * its pivot, else it would run in the root frame or in both branches. */
  const char *pivot = b->ctxs[ctx].pivot;
  if (c == DFX_OK && pivot && n_data == 0 && !inner_ctrl) {
    routed[n] = dfx__arena_printf(&b->arena, "^%s", pivot);
    if (!routed[n]) c = OOM(b, st);
    else n++;
  }
  if (c == DFX_OK) c = dfx__builder_raw(b, op, full, routed, n, ctx, out, st);
  dfx__free(routed);
  return c;
}

dfx_code dfx_builder_node(dfx_builder *b, const char *op, const char *name, const char *const *inputs, int n_inputs,
                          dfx_bnode **out, dfx_status *st) {
  dfx__status_clear(st);
  if (out) *out = NULL;
  if (!b || !op || !*op || n_inputs < 0 || (n_inputs > 0 && !inputs))
    return dfx__builder_fail(b, st, DFX_EINVAL, "dfx_builder_node: NULL or empty argument");
  for (int i = 0; i < n_inputs; i++)
    if (!inputs[i] || !inputs[i][0] || (inputs[i][0] == '^' && !inputs[i][1]))
      return dfx__builder_fail(b, st, DFX_EINVAL, "dfx_builder_node: input %d of '%s' is NULL or empty", i,
                               name ? name : op);
  const char *full;
  if (name) {
    if (!valid_name_part(name))
      return dfx__builder_fail(b, st, DFX_EINVAL, "dfx_builder_node: invalid node name '%s'", name);
    full = dfx__arena_printf(&b->arena, "%s%s", b->scope, name);
    if (!full) return OOM(b, st);
    if (name_get(b, full, strlen(full)) != -2)
      return dfx__builder_fail(b, st, DFX_EINVAL, "dfx_builder_node: node name '%s' is already used", full);
  } else {
    char *base = dfx__arena_printf(&b->arena, "%s%s", b->scope, op);
    if (!base || !(full = dfx__builder_unique(b, base, st))) return OOM(b, st);
  }
  return add_node(b, b->cur, op, full, inputs, n_inputs, out, st);
}

dfx_bnode *dfx_builder_find(const dfx_builder *b, const char *name) {
  if (!b || !name) return NULL;
  int v = name_get(b, name, strlen(name));
  return v >= 0 ? b->nodes[v] : NULL;
}

const char *dfx_bnode_name(const dfx_bnode *n) { return n ? n->nd.name : ""; }

const char *dfx_bnode_output(dfx_bnode *n, int k) {
  if (!n || k < 0) return NULL;
  if (k == 0) return n->nd.name;
  char *s = dfx__arena_printf(&n->b->arena, "%s:%d", n->nd.name, k);
  if (!s) OOM(n->b, NULL);
  return s;
}

dfx_code dfx_bnode_add_input(dfx_bnode *n, const char *input) {
  if (!n) return DFX_EINVAL;
  dfx_builder *b = n->b;
  if (!input || !input[0] || (input[0] == '^' && !input[1]))
    return dfx__builder_fail(b, NULL, DFX_EINVAL, "dfx_bnode_add_input: NULL or empty input for '%s'", n->nd.name);
  const char *routed;
  bool inner = false;
  dfx_code c = route_input(b, n->ctx, input, &routed, &inner, NULL);
  return c != DFX_OK ? c : push_input(n, routed, NULL);
}

dfx_code dfx_bnode_set_device(dfx_bnode *n, const char *device) {
  if (!n) return DFX_EINVAL;
  if (!device) return dfx__builder_fail(n->b, NULL, DFX_EINVAL, "dfx_bnode_set_device: NULL device");
  char *d = dfx__arena_strdup(&n->b->arena, device);
  if (!d) return OOM(n->b, NULL);
  n->nd.device = d;
  return DFX_OK;
}

/* ---- shorthand nodes ---- */

dfx_code dfx_builder_placeholder(dfx_builder *b, const char *name, dfx_dtype dtype, const int64_t *dims, int rank,
                                 dfx_bnode **out, dfx_status *st) {
  if (out) *out = NULL;
  dfx_bnode *n;
  dfx_code c = dfx_builder_node(b, "Placeholder", name, NULL, 0, &n, st);
  if (c != DFX_OK) return c;
  /* Attr setters report through the sticky error only; pass it on. */
  if ((c = dfx_bnode_attr_type(n, "dtype", dtype)) != DFX_OK || (c = dfx_bnode_attr_shape(n, "shape", dims, rank)) != DFX_OK)
    return dfx__status_copy(st, &b->err);
  if (out) *out = n;
  return DFX_OK;
}

dfx_code dfx_builder_const(dfx_builder *b, const char *name, const dfx_tensor *value, dfx_bnode **out,
                           dfx_status *st) {
  if (out) *out = NULL;
  if (b && !value) return dfx__builder_fail(b, st, DFX_EINVAL, "dfx_builder_const: NULL value");
  dfx_bnode *n;
  dfx_code c = dfx_builder_node(b, "Const", name, NULL, 0, &n, st);
  if (c != DFX_OK) return c;
  if ((c = dfx_bnode_attr_type(n, "dtype", dfx_tensor_dtype(value))) != DFX_OK ||
      (c = dfx_bnode_attr_tensor(n, "value", value)) != DFX_OK)
    return dfx__status_copy(st, &b->err);
  if (out) *out = n;
  return DFX_OK;
}

static dfx_code const_scalar(dfx_builder *b, const char *name, dfx_dtype dt, const void *v, dfx_bnode **out,
                             dfx_status *st) {
  if (out) *out = NULL;
  if (!b) return dfx__status_set(st, DFX_EINVAL, "dfx_builder_const: NULL builder");
  dfx_tensor *t = dfx_tensor_new_copy(dt, NULL, 0, v, dfx_dtype_size(dt));
  if (!t) return OOM(b, st);
  dfx_code c = dfx_builder_const(b, name, t, out, st);
  dfx_tensor_free(t);
  return c;
}

dfx_code dfx_builder_const_i32(dfx_builder *b, const char *name, int32_t v, dfx_bnode **out, dfx_status *st) {
  return const_scalar(b, name, DFX_I32, &v, out, st);
}
dfx_code dfx_builder_const_i64(dfx_builder *b, const char *name, int64_t v, dfx_bnode **out, dfx_status *st) {
  return const_scalar(b, name, DFX_I64, &v, out, st);
}
dfx_code dfx_builder_const_f32(dfx_builder *b, const char *name, float v, dfx_bnode **out, dfx_status *st) {
  return const_scalar(b, name, DFX_F32, &v, out, st);
}
dfx_code dfx_builder_const_f64(dfx_builder *b, const char *name, double v, dfx_bnode **out, dfx_status *st) {
  return const_scalar(b, name, DFX_F64, &v, out, st);
}
dfx_code dfx_builder_const_bool(dfx_builder *b, const char *name, int v, dfx_bnode **out, dfx_status *st) {
  uint8_t u = v != 0;
  return const_scalar(b, name, DFX_BOOL, &u, out, st);
}

/* ---- finalisation ---- */

/* Points a GraphDef at the nodes (after inference). gd->node is new. */
static dfx_code make_graphdef(dfx_builder *b, Tensorflow__GraphDef *gd, dfx_status *st) {
  *gd = (Tensorflow__GraphDef)TENSORFLOW__GRAPH_DEF__INIT;
  if (!b) return dfx__status_set(st, DFX_EINVAL, "builder: NULL builder");
  if (b->err.code != DFX_OK) return dfx__status_copy(st, &b->err);
  if (b->n_scopes && b->scopes[b->n_scopes - 1].helper)
    return dfx__status_set(st, DFX_EINVAL, "builder: cannot finalise from inside a while/cond callback");
  dfx_code c = dfx__builder_infer_attrs(b, st);
  if (c != DFX_OK) return c;
  if (!(gd->node = dfx__malloc(((size_t)b->n_nodes + 1) * sizeof *gd->node))) return OOM(b, st);
  for (int i = 0; i < b->n_nodes; i++) gd->node[i] = &b->nodes[i]->nd;
  gd->n_node = (size_t)b->n_nodes;
  return DFX_OK;
}

dfx_code dfx_builder_to_graph(dfx_builder *b, dfx_graph **out, dfx_status *st) {
  dfx__status_clear(st);
  if (out) *out = NULL;
  if (!out) return dfx__status_set(st, DFX_EINVAL, "dfx_builder_to_graph: NULL argument");
  Tensorflow__GraphDef gd;
  dfx_code c = make_graphdef(b, &gd, st);
  if (c == DFX_OK) c = dfx__graph_from_proto(&gd, out, st);
  dfx__free(gd.node);
  return c;
}

dfx_code dfx_builder_serialize(dfx_builder *b, int text, void **buf, size_t *len, dfx_status *st) {
  dfx__status_clear(st);
  if (buf) *buf = NULL;
  if (len) *len = 0;
  if (!buf || !len) return dfx__status_set(st, DFX_EINVAL, "dfx_builder_serialize: NULL argument");
  Tensorflow__GraphDef gd;
  dfx_graph *g = NULL;
  dfx_code c = make_graphdef(b, &gd, st);
  if (c == DFX_OK) c = dfx__graph_from_proto(&gd, &g, st);
  dfx_graph_free(g);
  if (c == DFX_OK && text) {
    char *s;
    if ((c = dfx__pbtext_print(&gd.base, &s, len, st)) == DFX_OK) *buf = s;
  } else if (c == DFX_OK) {
    size_t n = protobuf_c_message_get_packed_size(&gd.base);
    uint8_t *p = dfx__malloc(n ? n : 1);
    if (!p) c = OOM(b, st);
    else {
      *len = protobuf_c_message_pack(&gd.base, p);
      *buf = p;
    }
  }
  dfx__free(gd.node);
  return c;
}

dfx_code dfx_builder_save(dfx_builder *b, const char *path, dfx_status *st) {
  dfx__status_clear(st);
  if (!b || !path) return dfx__status_set(st, DFX_EINVAL, "dfx_builder_save: NULL argument");
  void *buf;
  size_t len;
  dfx_code c = dfx_builder_serialize(b, dfx__format_from_path(path) == DFX_FORMAT_TEXT, &buf, &len, st);
  if (c != DFX_OK) return c;
  FILE *f = fopen(path, "wb");
  if (!f) c = dfx__status_set(st, DFX_EIO, "cannot open '%s' for writing", path);
  else {
    size_t w = fwrite(buf, 1, len, f);
    if (fclose(f) != 0 || w != len) c = dfx__status_set(st, DFX_EIO, "error writing '%s'", path);
  }
  dfx__free(buf);
  return c;
}
