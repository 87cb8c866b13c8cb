/* graphinfo.c - read-only questions about an imported graph that several
 * commands ask: tensor names in "node:k" notation, which tensors are the
 * graph's outputs, which nodes a run needs, and known static shapes. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

bool dfx__port_parse(const char *s, size_t len, dfx_cli_port *out) {
  out->node = NULL;
  out->index = 0;
  /* The library's parser, on a copy (the CLI passes "NAME[:K]=VALUE" parts). */
  char *text = malloc(len + 1), *name = malloc(len + 1);
  dfx_port p;
  bool ok = text && name;
  if (ok) {
    memcpy(text, s, len);
    text[len] = 0;
    ok = dfx_port_parse(text, name, len + 1, &p, NULL) == DFX_OK;
  }
  free(text);
  if (!ok) {
    free(name);
    return false;
  }
  out->node = name;
  out->index = p.index;
  return true;
}

const char *dfx__port_str(const dfx_cli_port *p, char *buf, size_t n) {
  snprintf(buf, n, "%s:%d", p->node, p->index);
  return buf;
}

void dfx__ports_free(dfx_cli_port *p, int n) {
  if (!p) return;
  for (int i = 0; i < n; i++) free(p[i].node);
  free(p);
}

bool dfx__node_is_placeholder(const dfx_node *n) {
  return strcmp(n->op, "Placeholder") == 0 || strcmp(n->op, "PlaceholderV2") == 0;
}

const char *dfx__shape_attr_str(const dfx_shape *sh, char *buf, size_t n) {
  if (!sh || sh->rank < 0) {
    snprintf(buf, n, "?");
    return buf;
  }
  size_t o = 0;
  o += (size_t)snprintf(buf + o, n - o, "[");
  for (int d = 0; d < sh->rank && o < n; d++) {
    if (sh->dims[d] < 0) o += (size_t)snprintf(buf + o, n - o, "%s?", d ? "," : "");
    else o += (size_t)snprintf(buf + o, n - o, "%s%lld", d ? "," : "", (long long)sh->dims[d]);
  }
  if (o < n) snprintf(buf + o, n - o, "]");
  return buf;
}

const dfx_shape *dfx__output_shape(const dfx_node *n, int k, dfx_shape *tmp, int64_t *tmp_dims) {
  if (strcmp(n->op, "Const") == 0 && k == 0) {
    const dfx_tensor *v = dfx__attr_tensor(n, "value");
    if (v) {
      tmp->rank = v->ndims;
      memcpy(tmp_dims, v->dims, sizeof(int64_t) * v->ndims);
      tmp->dims = tmp_dims;
      return tmp;
    }
  }
  if (strncmp(n->op, "Placeholder", 11) == 0 && k == 0) {
    const dfx_shape *sh = dfx__attr_shape(n, "shape");
    if (sh) return sh;
  }
  const dfx_attr_list *l = dfx__attr_list(n, "_output_shapes");
  if (l && l->kind == DFX_ATTR_SHAPE && k < l->n) return &l->v.shape[k];
  return NULL;
}

dfx_cli_port *dfx__graph_outputs(const dfx_graph *g, int *n_out) {
  int n = dfx_graph_outputs(g, NULL, 0);
  dfx_port *ports = n >= 0 ? malloc(sizeof *ports * ((size_t)n + 1)) : NULL;
  dfx_cli_port *v = ports ? calloc((size_t)n + 1, sizeof *v) : NULL;
  if (!v || dfx_graph_outputs(g, ports, n) != n) goto fail;
  for (int i = 0; i < n; i++) {
    if (!(v[i].node = strdup(ports[i].node))) goto fail;
    v[i].index = ports[i].index;
  }
  free(ports);
  *n_out = n;
  return v;
fail:
  free(ports);
  dfx__ports_free(v, n > 0 ? n : 0);
  return NULL;
}

bool dfx__cli_roots(const dfx_graph *g, const dfx_cli_port *fetches, int n_fetches, char *const *targets,
                    int n_targets, int *roots) {
  char hint[DFX_SUGGEST_MAX];
  for (int i = 0; i < n_fetches; i++) {
    int id = dfx__graph_find(g, fetches[i].node, (size_t)-1);
    if (id < 0) {
      dfx__cli_error("--fetch: no node named '%s' in the graph%s", fetches[i].node,
                     dfx__graph_suggest(g, fetches[i].node, hint, sizeof hint));
      return false;
    }
    if (fetches[i].index >= g->nodes[id].n_out) {
      dfx__cli_error("--fetch: node '%s' (%s) has %d output%s; '%s:%d' does not exist", fetches[i].node,
                     g->nodes[id].op, g->nodes[id].n_out, g->nodes[id].n_out == 1 ? "" : "s", fetches[i].node,
                     fetches[i].index);
      return false;
    }
    roots[i] = id;
  }
  for (int i = 0; i < n_targets; i++)
    if ((roots[n_fetches + i] = dfx__graph_find(g, targets[i], (size_t)-1)) < 0) {
      dfx__cli_error("--target: no node named '%s' in the graph%s", targets[i],
                     dfx__graph_suggest(g, targets[i], hint, sizeof hint));
      return false;
    }
  return true;
}

bool dfx__cli_apply_seed(dfx_graph **g, bool has_seed, long long seed, dfx_status *st) {
  if (!has_seed) return true;
  dfx_graph *seeded;
  if (dfx_graph_seed(*g, seed, &seeded, NULL, st) != DFX_OK) {
    dfx__cli_error("--seed: %s", dfx_status_message(st));
    return false;
  }
  dfx_graph_free(*g);
  *g = seeded;
  return true;
}

void dfx__graph_needed(const dfx_graph *g, const int *roots, int n_roots, const bool *fed, bool *needed) {
  int *stack = malloc(sizeof(int) * ((size_t)g->n_nodes + 1));
  int top = 0;
  memset(needed, 0, (size_t)g->n_nodes);
  for (int i = 0; i < n_roots; i++)
    if (roots[i] >= 0 && !needed[roots[i]]) {
      needed[roots[i]] = true;
      if (stack) stack[top++] = roots[i];
    }
  /* Without the stack (out of memory) only the roots are marked, which
   * at worst skips the CLI's missing-feed report; the engine still checks. */
  while (stack && top > 0) {
    const dfx_node *n = &g->nodes[stack[--top]];
    if (fed[n->id]) continue;
    for (int i = 0; i < n->n_in + n->n_ctrl; i++) {
      int p = n->in[i].node;
      if (needed[p]) continue;
      needed[p] = true;
      stack[top++] = p;
    }
  }
  free(stack);
}
