/* import_options.c - dfx_graph_import_ex: import, then remap inputs and
 * prefix names as edits on the graph (edit.c) before it is checked, so the
 * options see the graph exactly as written and the result passes the same
 * checks as any import (finalize.c). */
#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "graph.h"
#include "graph_import.h"

/* One remapping resolved in the graph: (node, slot) read as (to, to_slot);
 * slot -1 for control inputs. */
typedef struct remap {
  dfx_graph_port from, to;
} remap;

/* Resolves a tensor name; `replacing` names the remapping's `from` when s
 * is its `to`, for the message. */
static dfx_code resolve_port(const dfx_graph *g, const char *s, const char *replacing, dfx_graph_port *out,
                             dfx_status *st) {
  const char *name;
  size_t len;
  dfx__tensor_name_parse(s, &name, &len, &out->slot);
  out->node = dfx__graph_find(g, name, len);
  if (out->node >= 0) return DFX_OK;
  if (replacing)
    return dfx__status_set(st, DFX_ENOTFOUND, "input_map: '%s' (replacing '%s') is not in the imported graph", s,
                           replacing);
  return dfx__status_set(st, DFX_ENOTFOUND, "input_map: '%s' is not in the imported graph", s);
}

static dfx_code check_map(const dfx_graph *g, const dfx_import_options *o, remap *r, dfx_status *st) {
  if (o->n_input_map < 0 || (o->n_input_map > 0 && !o->input_map))
    return dfx__status_set(st, DFX_EINVAL, "dfx_graph_import_ex: bad input_map");
  for (int i = 0; i < o->n_input_map; i++) {
    const dfx_input_map *m = &o->input_map[i];
    if (!m->from || !m->to || !*m->from || !*m->to)
      return dfx__status_set(st, DFX_EINVAL, "dfx_graph_import_ex: input_map[%d] has a NULL or empty name", i);
    dfx_code c;
    if ((c = resolve_port(g, m->from, NULL, &r[i].from, st)) != DFX_OK ||
        (c = resolve_port(g, m->to, m->from, &r[i].to, st)) != DFX_OK)
      return c;
    if ((r[i].from.slot < 0) != (r[i].to.slot < 0))
      return dfx__status_set(st, DFX_EINVAL, "input_map: '%s' -> '%s' mixes a data tensor and a control input", m->from,
                             m->to);
    for (int k = 0; k < i; k++)
      if (r[k].from.node == r[i].from.node && r[k].from.slot == r[i].from.slot)
        return dfx__status_set(st, DFX_EINVAL, "input_map: '%s' is mapped twice", m->from);
  }
  return DFX_OK;
}

/* "prefix/name" for every node and for every Enter's frame_name, so two
 * imports of one loop stay apart. */
static dfx_code add_prefix(dfx_graph *g, const char *prefix, dfx_status *st) {
  size_t pl = strlen(prefix);
  for (int i = 0; i < g->n_nodes; i++) {
    dfx_node *n = &g->nodes[i];
    size_t len = pl + strlen(n->name) + 2;
    char *name = dfx__malloc(len);
    if (!name) return dfx__status_set(st, DFX_ENOMEM, "out of memory");
    snprintf(name, len, "%s/%s", prefix, n->name);
    if (!dfx__node_name_valid(name)) {
      dfx_code c = dfx__status_set(st, DFX_EINVAL, "prefix '%s' makes an invalid node name '%s'", prefix, name);
      dfx__free(name);
      return c;
    }
    dfx__free(n->name);
    n->name = name;
    const dfx_attr *fr = n->ctrl == DFX_CTRL_ENTER ? dfx__node_attr(n, "frame_name") : NULL;
    if (fr && fr->kind == DFX_ATTR_S) {
      char *v = dfx__malloc(pl + fr->v.s.len + 2);
      if (!v) return dfx__status_set(st, DFX_ENOMEM, "out of memory");
      snprintf(v, pl + fr->v.s.len + 2, "%s/%.*s", prefix, (int)fr->v.s.len, fr->v.s.ptr);
      dfx_attr na = {.name = "frame_name", .kind = DFX_ATTR_S, .v.s = {v, strlen(v)}};
      dfx_code c = dfx__graph_set_attr(g, i, &na, st);
      dfx__free(v);
      if (c != DFX_OK) return c;
    }
  }
  return dfx__graph_index_rebuild(g, st);
}

static dfx_code apply(dfx_graph *g, const dfx_import_options *o, dfx_status *st) {
  remap *r = dfx__calloc((size_t)(o->n_input_map > 0 ? o->n_input_map : 0) + 1, sizeof *r);
  if (!r) return dfx__status_set(st, DFX_ENOMEM, "out of memory");
  dfx_code c = check_map(g, o, r, st);
  /* Remappings use the graph's own names, so they come before the prefix.
   * The replacement's own inputs stay (it may wrap what it replaces). */
  for (int i = 0; c == DFX_OK && i < o->n_input_map; i++)
    dfx__graph_replace_uses(g, r[i].from.node, r[i].from.slot, r[i].to.node, r[i].to.slot);
  dfx__free(r);
  if (c == DFX_OK && o->prefix && *o->prefix) c = add_prefix(g, o->prefix, st);
  return c == DFX_OK ? dfx__graph_finalize(g, st) : c;
}

dfx_code dfx_graph_import_ex(const void *buf, size_t len, const dfx_import_options *opts, dfx_graph **out,
                             dfx_status *st) {
  dfx__status_clear(st);
  if (out) *out = NULL;
  if (!out || (!buf && len)) return dfx__status_set(st, DFX_EINVAL, "dfx_graph_import_ex: NULL argument");
  if (!opts) return dfx__graph_import_ex(buf, len, DFX_FORMAT_AUTO, out, st);
  dfx_graph *g;
  dfx_code c = dfx__graph_import_unfinalized(buf, len, DFX_FORMAT_AUTO, &g, st);
  if (c != DFX_OK) return c;
  if ((c = apply(g, opts, st)) != DFX_OK) {
    dfx_graph_free(g);
    return c;
  }
  *out = g;
  return DFX_OK;
}
