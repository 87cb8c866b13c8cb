/* gradients_api.c - dfx_graph_gradients: checks the ports, differentiates
 * a private copy of the graph (autodiff/gradients.c) and hands back the copy
 * with the gradient tensors' names. The user's graph is never edited. */
#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "dfexec.h"
#include "gradients.h"
#include "graph.h"
#include "status.h"

/* Resolves a public port to (node, slot), checking it names an output. */
static dfx_code port_in(const dfx_graph *g, const dfx_port *p, const char *what, int i, dfx_graph_port *out,
                        dfx_status *st) {
  if (!p->node) return dfx__status_set(st, DFX_EINVAL, "dfx_graph_gradients: %s[%d] has no node name", what, i);
  int id = dfx__graph_find(g, p->node, (size_t)-1);
  if (id < 0) {
    char hint[DFX_SUGGEST_MAX];
    return dfx__status_set(st, DFX_ENOTFOUND, "dfx_graph_gradients: %s[%d]: no node named '%s'%s", what, i, p->node,
                           dfx__graph_suggest(g, p->node, hint, sizeof hint));
  }
  if (p->index < 0 || p->index >= g->nodes[id].n_out)
    return dfx__status_set(st, DFX_EINVAL, "dfx_graph_gradients: %s[%d]: '%s:%d' but %s (%s) has %d output%s", what, i,
                           p->node, p->index, p->node, g->nodes[id].op, g->nodes[id].n_out,
                           g->nodes[id].n_out == 1 ? "" : "s");
  *out = (dfx_graph_port){id, p->index};
  return DFX_OK;
}

dfx_code dfx_graph_gradients(const dfx_graph *g, const dfx_port *ys, int n_ys, const dfx_port *xs, int n_xs,
                             const dfx_port *grad_ys, const char *prefix, dfx_graph **out, char **dx,
                             dfx_status *st) {
  dfx__status_clear(st);
  if (out) *out = NULL;
  for (int i = 0; dx && i < n_xs; i++) dx[i] = NULL;
  if (!g || !out || !ys || !xs || !dx || n_ys < 1 || n_xs < 1)
    return dfx__status_set(st, DFX_EINVAL, "dfx_graph_gradients: NULL argument or empty ys/xs");
  if (!g->final) return dfx__status_set(st, DFX_EPRECOND, "dfx_graph_gradients: the graph is being edited");
  if (prefix && *prefix && !dfx__node_name_valid(prefix))
    return dfx__status_set(st, DFX_EINVAL, "dfx_graph_gradients: prefix '%s' is not a valid node name", prefix);
  dfx_code c = DFX_OK;
  dfx_graph *copy = NULL;
  dfx_graph_port *p = dfx__calloc((size_t)(2 * n_ys + 2 * n_xs), sizeof *p);
  if (!p) return dfx__status_set(st, DFX_ENOMEM, "out of memory");
  dfx_graph_port *py = p, *pg = p + n_ys, *px = p + 2 * n_ys, *pdx = p + 2 * n_ys + n_xs;
  for (int i = 0; i < n_ys && c == DFX_OK; i++) {
    c = port_in(g, &ys[i], "ys", i, &py[i], st);
    pg[i] = (dfx_graph_port){-1, 0};
    if (c == DFX_OK && grad_ys && grad_ys[i].node) {
      c = port_in(g, &grad_ys[i], "grad_ys", i, &pg[i], st);
      if (c == DFX_OK && g->nodes[pg[i].node].out_types[pg[i].slot] != g->nodes[py[i].node].out_types[py[i].slot])
        c = dfx__status_set(st, DFX_EINVAL, "dfx_graph_gradients: grad_ys[%d] ('%s:%d') is %s but ys[%d] is %s", i,
                            grad_ys[i].node, grad_ys[i].index,
                            dfx_dtype_name(g->nodes[pg[i].node].out_types[pg[i].slot]), i,
                            dfx_dtype_name(g->nodes[py[i].node].out_types[py[i].slot]));
    }
  }
  for (int i = 0; i < n_xs && c == DFX_OK; i++) c = port_in(g, &xs[i], "xs", i, &px[i], st);
  if (c != DFX_OK) goto fail;
  if ((c = dfx__graph_clone(g, &copy, st)) != DFX_OK || (c = dfx__graph_finalize(copy, st)) != DFX_OK) goto fail;
  if ((c = dfx__gradients(copy, py, n_ys, px, n_xs, grad_ys ? pg : NULL, prefix, pdx, st)) != DFX_OK) goto fail;
  for (int i = 0; i < n_xs; i++) {
    if (pdx[i].node < 0) continue;
    const char *name = copy->nodes[pdx[i].node].name;
    size_t n = strlen(name) + 16;
    if (!(dx[i] = dfx__malloc(n))) {
      c = dfx__status_set(st, DFX_ENOMEM, "out of memory");
      goto fail;
    }
    snprintf(dx[i], n, "%s:%d", name, pdx[i].slot);
  }
  dfx__free(p);
  *out = copy;
  return DFX_OK;
fail:
  for (int i = 0; i < n_xs; i++) dfx__free(dx[i]), dx[i] = NULL;
  dfx_graph_free(copy);
  dfx__free(p);
  return c;
}
