/* placement.c - which task runs each node (the rule is in dist.h), and the
 * device-name syntax. Placement reads the final graph only. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "dist.h"

const char *dfx__dist_device_name(int task, char *buf, size_t n) {
  snprintf(buf, n, "/job:worker/replica:0/task:%d/device:CPU:0", task);
  return buf;
}

/* Reads a decimal index at *p (advancing it); -1 when there is none. */
static long read_index(const char **p) {
  const char *s = *p;
  if (*s < '0' || *s > '9') return -1;
  long v = 0;
  while (*s >= '0' && *s <= '9' && v < 1000000) v = v * 10 + (*s++ - '0');
  *p = s;
  return v;
}

dfx_code dfx__dist_device_task(const char *device, int *task, dfx_status *st) {
  *task = -1;
  if (!device || !*device) return DFX_OK;
  const char *p = device;
  /* TF's ParseFullName: "/"-separated "key:value" parts, in any order;
   * the legacy forms "/cpu:0", "/gpu:0" and a bare "CPU:0" also occur. */
  while (*p) {
    if (*p == '/') {
      p++;
      continue;
    }
    const char *end = strchr(p, '/');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    if (len > 5 && strncmp(p, "task:", 5) == 0) {
      const char *q = p + 5;
      long v = read_index(&q);
      if (v < 0 || q != p + len)
        return dfx__status_set(st, DFX_EINVAL, "device '%s': task index is not a number", device);
      *task = (int)v;
    } else if (!((len > 4 && strncmp(p, "job:", 4) == 0) || (len > 8 && strncmp(p, "replica:", 8) == 0) ||
                 (len > 7 && strncmp(p, "device:", 7) == 0) || strncasecmp(p, "cpu:", 4) == 0 ||
                 strncasecmp(p, "gpu:", 4) == 0 || strncasecmp(p, "xla_", 4) == 0)) {
      return dfx__status_set(st, DFX_EINVAL, "device '%s': '%.*s' is not a device name part (job:, replica:, task:, device:)",
                             device, (int)len, p);
    }
    p += len;
  }
  return DFX_OK;
}

/* ---- groups of nodes that must share a task (union-find) ---- */

static int find(int *up, int i) {
  while (up[i] != i) {
    up[i] = up[up[i]];
    i = up[i];
  }
  return i;
}
static void unite(int *up, int a, int b) {
  a = find(up, a);
  b = find(up, b);
  if (a != b) up[a < b ? b : a] = a < b ? a : b;
}

static bool has_ref_arg(const dfx_op_arg *args, int n) {
  for (int i = 0; i < n; i++)
    if (args[i].is_ref) return true;
  return false;
}

/* Colocation groups: _class "loc:@x", resource handles and ref edges. */
static void build_groups(const dfx_graph *g, int *up) {
  for (int i = 0; i < g->n_nodes; i++) up[i] = i;
  for (int i = 0; i < g->n_nodes; i++) {
    const dfx_node *n = &g->nodes[i];
    const dfx_attr_list *cls = dfx__attr_list(n, "_class");
    for (int k = 0; cls && cls->kind == DFX_ATTR_S && k < cls->n; k++) {
      const dfx_str *s = &cls->v.s[k];
      if (s->len > 5 && strncmp(s->ptr, "loc:@", 5) == 0) {
        int j = dfx__graph_find(g, s->ptr + 5, s->len - 5);
        if (j >= 0) unite(up, i, j);
      }
    }
    bool ref_out = n->def && has_ref_arg(n->def->out, n->def->n_out);
    for (int e = 0; e < n->n_edges; e++) {
      const dfx_edge *ed = &n->edges[e];
      if (ed->dst_slot < 0) continue;
      const dfx_node *d = &g->nodes[ed->dst];
      bool resource = n->out_types && n->out_types[ed->src_slot] == DFX_RESOURCE;
      bool ref = ref_out && d->def && has_ref_arg(d->def->in, d->def->n_in);
      if (resource || ref) unite(up, i, ed->dst);
    }
  }
}

/* Nodes in topological order over data and control edges, leaving out
 * the NextIteration -> Merge back edges (the only cycles a final graph has). */
static int *topo_order(const dfx_graph *g) {
  int n = g->n_nodes;
  int *indeg = dfx__calloc((size_t)n + 1, sizeof *indeg), *order = dfx__malloc(sizeof *order * ((size_t)n + 1));
  if (!indeg || !order) {
    dfx__free(indeg);
    dfx__free(order);
    return NULL;
  }
  for (int i = 0; i < n; i++) {
    if (g->nodes[i].ctrl == DFX_CTRL_NEXT_ITERATION) continue;
    for (int e = 0; e < g->nodes[i].n_edges; e++) indeg[g->nodes[i].edges[e].dst]++;
  }
  int head = 0, tail = 0;
  for (int i = 0; i < n; i++)
    if (indeg[i] == 0) order[tail++] = i;
  while (head < tail) {
    const dfx_node *u = &g->nodes[order[head++]];
    if (u->ctrl == DFX_CTRL_NEXT_ITERATION) continue;
    for (int e = 0; e < u->n_edges; e++)
      if (--indeg[u->edges[e].dst] == 0) order[tail++] = u->edges[e].dst;
  }
  /* Anything left (an ill-formed cycle finalise let through) comes last. */
  for (int i = 0; i < n && tail < n; i++)
    if (indeg[i] > 0) order[tail++] = i;
  dfx__free(indeg);
  return order;
}

static unsigned next_rand(unsigned *s) {
  *s ^= *s << 13;
  *s ^= *s >> 17;
  *s ^= *s << 5;
  return *s;
}

dfx_code dfx__dist_place(const dfx_graph *g, int n_tasks, unsigned random_seed, int *task, dfx_status *st) {
  int n = g->n_nodes;
  if (n_tasks < 1) return dfx__status_set(st, DFX_EINVAL, "placement: the number of tasks must be >= 1, got %d", n_tasks);
  int *up = dfx__malloc(sizeof *up * ((size_t)n + 1)), *gtask = dfx__malloc(sizeof *gtask * ((size_t)n + 1));
  int *who = dfx__malloc(sizeof *who * ((size_t)n + 1));
  int *order = NULL;
  dfx_code c = DFX_OK;
  if (!up || !gtask || !who || !(order = topo_order(g))) {
    c = dfx__status_set(st, DFX_ENOMEM, "out of memory");
    goto done;
  }
  build_groups(g, up);
  for (int i = 0; i < n; i++) gtask[i] = who[i] = -1;
  /* Rule 1 and 2: requested devices, checked, one task per group. */
  for (int i = 0; i < n; i++) {
    const dfx_node *nd = &g->nodes[i];
    int t;
    dfx_status why;
    dfx__status_clear(&why);
    if ((c = dfx__dist_device_task(nd->device, &t, &why)) != DFX_OK) {
      dfx__status_set(st, c, "node '%s' (%s): %s", nd->name, nd->op, why.msg);
      goto done;
    }
    if (t < 0) continue;
    if (t >= n_tasks) {
      c = dfx__status_set(st, DFX_EINVAL,
                          "node '%s' (%s) is placed on device '%s', task %d, but the run has %d task%s (0..%d)",
                          nd->name, nd->op, nd->device, t, n_tasks, n_tasks == 1 ? "" : "s", n_tasks - 1);
      goto done;
    }
    if (random_seed) continue;
    int r = find(up, i);
    if (gtask[r] >= 0 && gtask[r] != t) {
      const dfx_node *o = &g->nodes[who[r]];
      c = dfx__status_set(st, DFX_EINVAL,
                          "nodes '%s' (device '%s') and '%s' (device '%s') must share a task (colocation or a "
                          "reference/resource edge) but name different tasks",
                          o->name, o->device, nd->name, nd->device);
      goto done;
    }
    gtask[r] = t;
    who[r] = i;
  }
  /* Rule 3: the rest follow their first placed input, in topological order. */
  unsigned rng = random_seed;
  for (int k = 0; k < n; k++) {
    int i = order[k], r = find(up, i);
    if (gtask[r] < 0) {
      if (random_seed) {
        gtask[r] = (int)(next_rand(&rng) % (unsigned)n_tasks);
      } else {
        const dfx_node *nd = &g->nodes[i];
        int t = 0;
        for (int j = 0; j < nd->n_in + nd->n_ctrl; j++) {
          int pt = gtask[find(up, nd->in[j].node)];
          if (pt >= 0) {
            t = pt;
            break;
          }
        }
        gtask[r] = t;
      }
    }
    task[i] = gtask[r];
  }
  /* Rule 4: control-flow colocation. Switch and Exit follow their input (in
   * topological order, so a chain settles), then Enter and NextIteration
   * follow their first data consumer. */
  for (int k = 0; k < n; k++) {
    const dfx_node *nd = &g->nodes[order[k]];
    if ((nd->ctrl == DFX_CTRL_SWITCH || nd->ctrl == DFX_CTRL_EXIT) && nd->n_in > 0) task[nd->id] = task[nd->in[0].node];
  }
  for (int k = n - 1; k >= 0; k--) {
    const dfx_node *nd = &g->nodes[order[k]];
    if (nd->ctrl != DFX_CTRL_ENTER && nd->ctrl != DFX_CTRL_NEXT_ITERATION) continue;
    for (int e = 0; e < nd->n_edges; e++)
      if (nd->edges[e].dst_slot >= 0) {
        task[nd->id] = task[nd->edges[e].dst];
        break;
      }
  }
done:
  dfx__free(up);
  dfx__free(gtask);
  dfx__free(who);
  dfx__free(order);
  return c;
}

uint64_t dfx__dist_graph_hash(const dfx_graph *g) {
  uint64_t h = 1469598103934665603ull;
#define MIX_STR(s)                                  \
  for (const char *p_ = (s) ? (s) : ""; ; p_++) {   \
    h ^= (unsigned char)*p_;                        \
    h *= 1099511628211ull;                          \
    if (!*p_) break;                                \
  }
  for (int i = 0; i < g->n_nodes; i++) {
    const dfx_node *n = &g->nodes[i];
    MIX_STR(n->name);
    MIX_STR(n->op);
    MIX_STR(n->device);
    for (int k = 0; k < n->n_in + n->n_ctrl; k++) {
      h ^= (uint64_t)(unsigned)n->in[k].node * 31u + (uint64_t)(unsigned)(n->in[k].slot + 1);
      h *= 1099511628211ull;
    }
    for (int k = 0; k < n->n_attrs; k++) {
      MIX_STR(n->attrs[k].name);
      h = dfx__attr_hash(&n->attrs[k], h);
    }
  }
#undef MIX_STR
  return h;
}
