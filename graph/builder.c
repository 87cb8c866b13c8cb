/* builder.c - the graph builder's names, nodes and inputs, and finalisation
 * (see dfx_builder in dfexec.h and builder.h). Nodes go straight into the
 * builder's graph through the edit API; finalising copies that graph,
 * resolves the inputs that named nodes not added yet, infers missing attrs
 * (builder_infer.c) and finalises the copy as import does, so the builder
 * never changes and may be finalised again. */
#include "builder.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "alloc.h"

/* ---- errors ---- */

dfx_code dfx__builder_fail(dfx_builder *b, dfx_status *st, dfx_code code, const char *fmt, ...) {
  char msg[DFX_STATUS_MSG_MAX];
  va_list ap;
  va_start(ap, fmt);
  /* Formatted once and stored twice: the sticky error keeps the builder's first
   * failure, which every later finalisation reports; st gets this one. */
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (b && b->err.code == DFX_OK) dfx__status_set(&b->err, code, "%s", msg);
  return dfx__status_set(st, code, "%s", msg);
}

#define OOM(b, st) DFX_BUILDER_OOM(b, st)

/* ---- lifecycle ---- */

dfx_builder *dfx_builder_new(void) {
  dfx_builder *b = dfx__calloc(1, sizeof *b);
  if (!b) return NULL;
  b->cap_ctx = 4;
  b->scope_cap = 64;
  if (!(b->g = dfx__graph_new()) || !(b->ctxs = dfx__calloc((size_t)b->cap_ctx, sizeof *b->ctxs)) ||
      !(b->scope = dfx__calloc(b->scope_cap, 1))) {
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
  dfx_graph_free(b->g);
  dfx__arena_free(&b->arena);
  dfx__free(b->nodes);
  dfx__free(b->pending);
  dfx__free(b->reserved);
  dfx__free(b->scope);
  dfx__free(b->scopes);
  dfx__free(b->ctxs);
  dfx__free(b);
}

int dfx_builder_node_count(const dfx_builder *b) { return b ? b->g->n_nodes : 0; }

/* ---- names: the graph's nodes plus reserved names ---- */

/* 32-bit FNV-1a, as graph.c's name index. */
static uint32_t hash_name(const char *s, size_t len) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < len; i++) h = (h ^ (unsigned char)s[i]) * 16777619u;
  return h;
}

/* Slot holding `s` (len bytes) in the reserved set, or the empty slot where
 * it would go. */
static uint32_t reserved_slot(const char *const *keys, uint32_t cap, const char *s, size_t len) {
  uint32_t m = cap - 1, i = hash_name(s, len) & m;
  while (keys[i] && !(strncmp(keys[i], s, len) == 0 && keys[i][len] == 0)) i = (i + 1) & m;
  return i;
}

/* Adds `key` (in the arena) to the reserved set, growing it at half full. */
static bool reserve(dfx_builder *b, const char *key) {
  if ((b->rcount + 1) * 2 > b->rcap) {
    uint32_t cap = b->rcap ? b->rcap * 2 : 64;
    /* Keys are arena strings: growing rehashes pointers, never copies names. */
    const char **keys = dfx__calloc(cap, sizeof *keys);
    if (!keys) return false;
    for (uint32_t i = 0; i < b->rcap; i++)
      if (b->reserved[i]) keys[reserved_slot(keys, cap, b->reserved[i], strlen(b->reserved[i]))] = b->reserved[i];
    dfx__free(b->reserved);
    b->reserved = keys;
    b->rcap = cap;
  }
  b->reserved[reserved_slot(b->reserved, b->rcap, key, strlen(key))] = key;
  b->rcount++;
  return true;
}

/* The node id using the name, -1 when it is only reserved, -2 when free. */
static int name_state(const dfx_builder *b, const char *s, size_t len) {
  int id = dfx__graph_find(b->g, s, len);
  if (id >= 0) return id;
  return b->rcap && b->reserved[reserved_slot(b->reserved, b->rcap, s, len)] ? -1 : -2;
}

const char *dfx__builder_unique(dfx_builder *b, const char *base, dfx_status *st) {
  char *name = dfx__arena_strdup(&b->arena, base);
  for (int k = 1; name && name_state(b, name, strlen(name)) != -2; k++)
    name = dfx__arena_printf(&b->arena, "%s_%d", base, k);
  /* Reserved at once: a second request for the same base before the node
   * exists must not get the same name. */
  if (!name || !reserve(b, name)) {
    OOM(b, st);
    return NULL;
  }
  return name;
}

int dfx__builder_producer(const dfx_builder *b, const char *tensor, int *slot) {
  const char *name;
  size_t len;
  dfx__tensor_name_parse(tensor, &name, &len, slot);
  return dfx__graph_find(b->g, name, len);
}

/* ---- nodes and inputs ---- */

static bool valid_name_part(const char *s) { return *s && !strpbrk(s, ":^"); }

/* Appends an input to node `id`: resolved now when its node exists, else
 * held as a dfx_bpending. Everything that can fail comes before the edit. */
static dfx_code push_input(dfx_builder *b, int id, const char *in, dfx_status *st) {
  int slot, src = dfx__builder_producer(b, in, &slot);
  if (src < 0) {
    if (b->n_pending == b->cap_pending) {
      int cap = b->cap_pending ? b->cap_pending * 2 : 8;
      dfx_bpending *np = dfx__realloc(b->pending, (size_t)cap * sizeof *np);
      if (!np) return OOM(b, st);
      b->pending = np;
      b->cap_pending = cap;
    }
    const char *s = dfx__arena_strdup(&b->arena, in);
    if (!s) return OOM(b, st);
    const dfx_node *n = &b->g->nodes[id];
    /* k is where the input lands: the next data or control index. */
    b->pending[b->n_pending] = (dfx_bpending){id, slot < 0 ? n->n_ctrl : n->n_in, slot < 0, s};
  }
  /* A pending input points at the node itself as a placeholder, so counts and
   * order are right; n_pending grows only once the edit has succeeded. */
  if (dfx__graph_add_input(b->g, id, src >= 0 ? src : id, slot, NULL) != DFX_OK) return OOM(b, st);
  if (src < 0) b->n_pending++;
  return DFX_OK;
}

dfx_code dfx__builder_raw(dfx_builder *b, const char *op, const char *full, const char *const *inputs, int n,
                          int ctx, dfx_bnode **out, dfx_status *st) {
  if (out) *out = NULL;
  if (name_state(b, full, strlen(full)) >= 0)
    return dfx__builder_fail(b, st, DFX_EINVAL, "builder: node name '%s' is already used", full);
  dfx_graph *g = b->g;
  if (g->n_nodes == b->cap_nodes) {
    int cap = b->cap_nodes ? b->cap_nodes * 2 : 32;
    dfx_bnode **nn = dfx__realloc(b->nodes, (size_t)cap * sizeof *nn);
    if (!nn) return OOM(b, st);
    b->nodes = nn;
    b->cap_nodes = cap;
  }
  /* Handles live in the arena, never moved: the pointers users hold stay
   * valid when b->nodes grows. */
  dfx_bnode *h = dfx__arena_alloc(&b->arena, sizeof *h);
  if (!h) return OOM(b, st);
  dfx_status es;
  int id = dfx__graph_add_node(g, full, op, &es);
  if (id < 0) return dfx__builder_fail(b, st, es.code, "%s", es.msg);
  *h = (dfx_bnode){b, id, ctx};
  b->nodes[id] = h;
  /* A failure past here leaves the node with some of its inputs; the error
   * is sticky, so no graph is ever made from it. */
  for (int i = 0; i < n; i++) {
    dfx_code c = push_input(b, id, inputs[i], st);
    if (c != DFX_OK) return c;
  }
  if (out) *out = h;
  return DFX_OK;
}

/* Applies the frame rules to one input of a node made in context `ctx`. */
static dfx_code route_input(dfx_builder *b, int ctx, const char *in, const char **out, bool *inner_ctrl,
                            dfx_status *st) {
  *out = in;
  int slot, p = dfx__builder_producer(b, in, &slot);
  /* Data inputs are routed into the context (through Enters or Switches as
   * needed); a control input cannot be, so it must already be in the frame. */
  if (slot >= 0) return dfx__builder_import(b, ctx, in, out, st);
  if (p < 0) return DFX_OK;
  int pc = b->nodes[p]->ctx;
  if (dfx__builder_frame_of(b, pc) != dfx__builder_frame_of(b, ctx)) {
    char d1[160], d2[160];
    return dfx__builder_fail(b, st, DFX_EINVAL,
                             "builder: control input '%s' comes from %s and cannot reach %s; add the dependency "
                             "outside the loop",
                             in, dfx__builder_ctx_name(b, pc, d1, sizeof d1),
                             dfx__builder_ctx_name(b, ctx, d2, sizeof d2));
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
    /* A user's name must be free, not even reserved: reserved names belong to
     * nodes the while/cond helpers are about to add. */
    if (name_state(b, full, strlen(full)) != -2)
      return dfx__builder_fail(b, st, DFX_EINVAL, "dfx_builder_node: node name '%s' is already used", full);
  } else {
    char *base = dfx__arena_printf(&b->arena, "%s%s", b->scope, op);
    if (!base || !(full = dfx__builder_unique(b, base, st))) return OOM(b, st);
  }
  return add_node(b, b->cur, op, full, inputs, n_inputs, out, st);
}

dfx_bnode *dfx_builder_find(const dfx_builder *b, const char *name) {
  if (!b || !name) return NULL;
  int id = dfx__graph_find(b->g, name, (size_t)-1);
  return id >= 0 ? b->nodes[id] : NULL;
}

const char *dfx_bnode_name(const dfx_bnode *n) { return n ? n->b->g->nodes[n->id].name : ""; }

const char *dfx_bnode_output(dfx_bnode *n, int k) {
  if (!n || k < 0) return NULL;
  /* Output 0 is the bare name, the form TF writes. */
  if (k == 0) return dfx_bnode_name(n);
  char *s = dfx__arena_printf(&n->b->arena, "%s:%d", dfx_bnode_name(n), k);
  if (!s) OOM(n->b, NULL);
  return s;
}

dfx_code dfx_bnode_add_input(dfx_bnode *n, const char *input) {
  if (!n) return DFX_EINVAL;
  dfx_builder *b = n->b;
  if (!input || !input[0] || (input[0] == '^' && !input[1]))
    return dfx__builder_fail(b, NULL, DFX_EINVAL, "dfx_bnode_add_input: NULL or empty input for '%s'",
                             dfx_bnode_name(n));
  const char *routed;
  bool inner = false;
  dfx_code c = route_input(b, n->ctx, input, &routed, &inner, NULL);
  return c != DFX_OK ? c : push_input(b, n->id, routed, NULL);
}

dfx_code dfx_bnode_set_device(dfx_bnode *n, const char *device) {
  if (!n) return DFX_EINVAL;
  if (!device) return dfx__builder_fail(n->b, NULL, DFX_EINVAL, "dfx_bnode_set_device: NULL device");
  if (dfx__graph_set_device(n->b->g, n->id, device, NULL) != DFX_OK) return OOM(n->b, NULL);
  return DFX_OK;
}

/* ---- finalisation ---- */

/* Points every pending input of g (a copy of the builder's graph) at its
 * node, or fails with the importer's message for an input never added. */
static dfx_code resolve_pending(const dfx_builder *b, dfx_graph *g, dfx_status *st) {
  for (int i = 0; i < b->n_pending; i++) {
    const dfx_bpending *p = &b->pending[i];
    const dfx_node *n = &g->nodes[p->node];
    int slot, src = dfx__builder_producer(b, p->input, &slot);
    if (src < 0)
      return dfx__status_set(st, DFX_EINVAL, "Node '%s' (%s): Unknown input node '%s'", n->name, n->op, p->input);
    /* Only the copy is fixed up: the builder's graph keeps its placeholders,
     * so a later node may still satisfy an input not added yet. */
    dfx__graph_set_input(g, p->node, p->ctrl ? n->n_in + p->k : p->k, src, slot);
  }
  return DFX_OK;
}

/* The builder's nodes as an independent final graph (*out new). */
static dfx_code make_graph(dfx_builder *b, dfx_graph **out, dfx_status *st) {
  *out = NULL;
  if (!b) return dfx__status_set(st, DFX_EINVAL, "builder: NULL builder");
  if (b->err.code != DFX_OK) return dfx__status_copy(st, &b->err);
  if (b->n_scopes && b->scopes[b->n_scopes - 1].helper)
    return dfx__status_set(st, DFX_EINVAL, "builder: cannot finalise from inside a while/cond callback");
  dfx_graph *g;
  dfx_code c = dfx__graph_clone(b->g, &g, st);
  if (c != DFX_OK) return c;
  /* Inference needs the real producers (resolve_pending) to derive type and
   * length attrs, and finalisation needs those attrs to validate. */
  if ((c = resolve_pending(b, g, st)) != DFX_OK || (c = dfx__builder_infer(g, st)) != DFX_OK ||
      (c = dfx__graph_finalize(g, st)) != DFX_OK) {
    dfx_graph_free(g);
    return c;
  }
  *out = g;
  return DFX_OK;
}

dfx_code dfx_builder_to_graph(dfx_builder *b, dfx_graph **out, dfx_status *st) {
  dfx__status_clear(st);
  if (out) *out = NULL;
  if (!out) return dfx__status_set(st, DFX_EINVAL, "dfx_builder_to_graph: NULL argument");
  return make_graph(b, out, st);
}

dfx_code dfx_builder_serialize(dfx_builder *b, int text, void **buf, size_t *len, dfx_status *st) {
  dfx__status_clear(st);
  if (buf) *buf = NULL;
  if (len) *len = 0;
  if (!buf || !len) return dfx__status_set(st, DFX_EINVAL, "dfx_builder_serialize: NULL argument");
  dfx_graph *g;
  dfx_code c = make_graph(b, &g, st);
  if (c == DFX_OK) c = dfx_graph_serialize(g, text, buf, len, st);
  dfx_graph_free(g);
  return c;
}

dfx_code dfx_builder_save(dfx_builder *b, const char *path, dfx_status *st) {
  dfx__status_clear(st);
  if (!b || !path) return dfx__status_set(st, DFX_EINVAL, "dfx_builder_save: NULL argument");
  dfx_graph *g;
  dfx_code c = make_graph(b, &g, st);
  if (c == DFX_OK) c = dfx_graph_save(g, path, st);
  dfx_graph_free(g);
  return c;
}
