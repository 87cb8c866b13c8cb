/* partition.c - one graph per task (dist.h says what it does). The work is
 * in two steps over copies of the graph: first the control loops of frames
 * that span tasks are added to one augmented copy (every new node placed),
 * then each task's partition is cut from a copy of that: its cross-task
 * inputs read _Recv nodes, its cross-task consumers are fed by _Send nodes,
 * and the other tasks' nodes go. */
#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "dist.h"
#include "rewrite.h"

typedef struct pctx {
  dfx_graph *a;       /* the augmented copy */
  int *task;          /* per node of a */
  int cap_task;
  int n_tasks;
  const dfx_graph *g; /* the input: frames are g's indices */
  char *present;      /* [frame * n_tasks + task] */
  int *cl_merge;      /* control-loop Merge per (frame, task), -1 */
  int *loopcond;      /* per frame of g */
  int64_t incarnation;
  dfx_status *st;
} pctx;

static int add_node(pctx *c, dfx_graph *g, const char *base, const char *op, int task) {
  char *name = dfx__graph_unique_name(g, base);
  int id = name ? dfx__graph_add_node(g, name, op, c->st) : -1;
  if (!name) dfx__status_set(c->st, DFX_ENOMEM, "out of memory");
  dfx__free(name);
  if (id < 0) return -1;
  char dev[96];
  if (dfx__graph_set_device(g, id, dfx__dist_device_name(task, dev, sizeof dev), c->st) != DFX_OK) return -1;
  if (c->task && g == c->a) {
    if (id >= c->cap_task) {
      int nc = c->cap_task * 2 + 16;
      int *nt = dfx__realloc(c->task, sizeof *nt * (size_t)nc);
      if (!nt) {
        dfx__status_set(c->st, DFX_ENOMEM, "out of memory");
        return -1;
      }
      c->task = nt;
      c->cap_task = nc;
    }
    c->task[id] = task;
  }
  return id;
}

static dfx_code set_bool(dfx_graph *g, int id, const char *name, bool v, dfx_status *st) {
  dfx_attr a = {.name = (char *)name, .kind = DFX_ATTR_B, .v.b = v};
  return dfx__graph_set_attr(g, id, &a, st);
}

/* A float Const of shape [0] (TF's dummy value), with control input ctl
 * (-1: none): what drives a control loop from the root and what a control
 * edge between tasks sends. */
static int add_dummy(pctx *c, dfx_graph *g, const char *base, int task, int ctl) {
  int64_t dims[1] = {0};
  dfx_code code;
  dfx_tensor *t = dfx__tensor_alloc(DFX_F32, 1, dims, &code);
  if (!t) {
    dfx__status_set(c->st, DFX_ENOMEM, "out of memory");
    return -1;
  }
  int id = add_node(c, g, base, "Const", task);
  dfx_attr value = {.name = "value", .kind = DFX_ATTR_TENSOR, .v.tensor = t};
  dfx_code rc = id < 0 ? DFX_ENOMEM : dfx__graph_set_attr(g, id, &value, c->st);
  dfx__tensor_unref(t);
  if (rc == DFX_OK) rc = dfx__rewrite_set_type(g, id, "dtype", DFX_F32, c->st);
  if (rc == DFX_OK && ctl >= 0) rc = dfx__graph_add_input(g, id, ctl, -1, c->st);
  return rc == DFX_OK ? id : -1;
}

/* Node-name-safe copy of a frame name for the control loop's node names. */
static void safe_name(const char *s, char *out, size_t n) {
  size_t k = 0;
  for (; *s && k + 1 < n; s++) {
    char ch = *s;
    bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_' ||
              ch == '.' || ch == '/' || ch == '-';
    out[k++] = ok ? ch : '_';
  }
  out[k] = 0;
}

/* The control loop of frame f on task t (AddControlLoop), built once; its
 * Merge's id, or -1 after an error. */
static int control_loop(pctx *c, int f, int t) {
  int *slot = &c->cl_merge[f * c->n_tasks + t];
  if (*slot >= 0) return *slot;
  const dfx_frame_info *fi = &c->g->frames[f];
  if (c->loopcond[f] < 0) {
    dfx__status_set(c->st, DFX_EINVAL,
                    "frame '%s' has nodes on several tasks but no LoopCond: a loop that spans tasks needs the "
                    "predicate the other tasks follow",
                    fi->name);
    return -1;
  }
  int src = fi->parent > 0 ? control_loop(c, fi->parent, t) : -2;
  if (src == -1) return -1;
  char fname[160], base[224];
  safe_name(fi->name, fname, sizeof fname);
  snprintf(base, sizeof base, "_cloop/task%d/%s/dummy", t, fname);
  if (src == -2 && (src = add_dummy(c, c->a, base, t, -1)) < 0) return -1;
  dfx_graph *a = c->a;
  snprintf(base, sizeof base, "_cloop/task%d/%s/Enter", t, fname);
  int enter = add_node(c, a, base, "Enter", t);
  snprintf(base, sizeof base, "_cloop/task%d/%s/Merge", t, fname);
  int merge = enter < 0 ? -1 : add_node(c, a, base, "Merge", t);
  snprintf(base, sizeof base, "_cloop/task%d/%s/Switch", t, fname);
  int sw = merge < 0 ? -1 : add_node(c, a, base, "Switch", t);
  snprintf(base, sizeof base, "_cloop/task%d/%s/NextIteration", t, fname);
  int next = sw < 0 ? -1 : add_node(c, a, base, "NextIteration", t);
  if (next < 0) return -1;
  dfx_status *st = c->st;
  dfx_code rc = dfx__graph_add_input(a, enter, src, 0, st);
  if (rc == DFX_OK) rc = dfx__rewrite_set_type(a, enter, "T", DFX_F32, st);
  if (rc == DFX_OK) rc = dfx__rewrite_set_str(a, enter, "frame_name", fi->name, st);
  if (rc == DFX_OK) rc = set_bool(a, enter, "is_constant", false, st);
  if (rc == DFX_OK) rc = dfx__rewrite_set_int(a, enter, "parallel_iterations", fi->parallel_iterations, st);
  if (rc == DFX_OK) rc = dfx__graph_add_input(a, merge, enter, 0, st);
  if (rc == DFX_OK) rc = dfx__graph_add_input(a, merge, next, 0, st);
  if (rc == DFX_OK) rc = dfx__rewrite_set_type(a, merge, "T", DFX_F32, st);
  if (rc == DFX_OK) rc = dfx__rewrite_set_int(a, merge, "N", 2, st);
  if (rc == DFX_OK) rc = dfx__graph_add_input(a, sw, merge, 0, st);
  if (rc == DFX_OK) rc = dfx__graph_add_input(a, sw, c->loopcond[f], 0, st);
  if (rc == DFX_OK) rc = dfx__rewrite_set_type(a, sw, "T", DFX_F32, st);
  if (rc == DFX_OK) rc = dfx__graph_add_input(a, next, sw, 1, st);
  if (rc == DFX_OK) rc = dfx__rewrite_set_type(a, next, "T", DFX_F32, st);
  if (rc != DFX_OK) return -1;
  return *slot = merge;
}

/* Marks where each frame is present (a node runs in it, or an Enter feeds
 * it, on that task) and spreads presence to enclosing frames. */
static void mark_presence(pctx *c) {
  const dfx_graph *g = c->g;
  int T = c->n_tasks;
  for (int i = 0; i < g->n_nodes; i++) {
    const dfx_node *n = &g->nodes[i];
    c->present[n->frame * T + c->task[i]] = 1;
    if (n->ctrl == DFX_CTRL_ENTER && n->child_frame >= 0) c->present[n->child_frame * T + c->task[i]] = 1;
    if (n->ctrl == DFX_CTRL_LOOP_COND) c->loopcond[n->frame] = i;
  }
  /* A child's presence makes its parent present; children come after their
   * parents in g->frames, so one backward sweep reaches the root. */
  for (int f = g->n_frames - 1; f > 0; f--)
    for (int t = 0; t < T; t++)
      if (c->present[f * T + t] && g->frames[f].parent >= 0) c->present[g->frames[f].parent * T + t] = 1;
}

static int spans(const pctx *c, int f) {
  int k = 0;
  for (int t = 0; t < c->n_tasks; t++) k += c->present[f * c->n_tasks + t];
  return k > 1;
}

/* g's frame index of frame `af` of the augmented graph (same names). */
static int g_frame(const pctx *c, int af) {
  const char *name = c->a->frames[af].name;
  for (int f = 0; f < c->g->n_frames; f++)
    if (strcmp(c->g->frames[f].name, name) == 0) return f;
  return 0;
}

/* ---- cutting one task's partition ---- */

typedef struct cut {
  int *base;     /* per node of a: offset of its memo slots (control, then each output) */
  int *recv;     /* memo: _Recv per (src, slot) in this partition */
  int *send;     /* memo: _Send per (src, slot, task) */
} cut;

static void edge_name(const pctx *c, int s, int slot, char *buf, size_t n) {
  if (slot < 0) snprintf(buf, n, "edge_%d_ctrl_%s", s, c->a->nodes[s].name);
  else snprintf(buf, n, "edge_%d_%d_%s", s, slot, c->a->nodes[s].name);
}

static dfx_code transfer_attrs(pctx *c, dfx_graph *p, int id, int s, int slot, int from, int to) {
  char name[320], dev[96];
  edge_name(c, s, slot, name, sizeof name);
  dfx_status *st = c->st;
  dfx_code rc = dfx__rewrite_set_str(p, id, "tensor_name", name, st);
  if (rc == DFX_OK) rc = dfx__rewrite_set_str(p, id, "send_device", dfx__dist_device_name(from, dev, sizeof dev), st);
  if (rc == DFX_OK) rc = dfx__rewrite_set_int(p, id, "send_device_incarnation", c->incarnation, st);
  if (rc == DFX_OK) rc = dfx__rewrite_set_str(p, id, "recv_device", dfx__dist_device_name(to, dev, sizeof dev), st);
  if (rc == DFX_OK) rc = set_bool(p, id, "client_terminated", false, st);
  return rc;
}

static int make_recv(pctx *c, cut *x, dfx_graph *p, int t, int s, int slot, int dst) {
  int *memo = &x->recv[x->base[s] + slot + 1];
  if (*memo >= 0) return *memo;
  const dfx_node *src = &c->a->nodes[s];
  dfx_dtype dt = slot < 0 ? DFX_F32 : src->out_types[slot];
  char base[320];
  snprintf(base, sizeof base, "_recv/%s/%s", src->name, slot < 0 ? "ctrl" : "0");
  if (slot > 0) snprintf(base, sizeof base, "_recv/%s/%d", src->name, slot);
  int r = add_node(c, p, base, "_Recv", t);
  if (r < 0) return -1;
  dfx_code rc = dfx__rewrite_set_type(p, r, "tensor_type", dt, c->st);
  if (rc == DFX_OK) rc = transfer_attrs(c, p, r, s, slot, c->task[s], t);
  int f = g_frame(c, c->a->nodes[dst].frame);
  if (rc == DFX_OK && f > 0) {
    int m = c->cl_merge[f * c->n_tasks + t];
    if (m < 0) {
      dfx__status_set(c->st, DFX_EINTERNAL, "no control loop for frame '%s' on task %d", c->g->frames[f].name, t);
      return -1;
    }
    rc = dfx__graph_add_input(p, r, m, -1, c->st);
  }
  return rc == DFX_OK ? (*memo = r) : -1;
}

static int make_send(pctx *c, cut *x, dfx_graph *p, int t, int s, int slot, int to) {
  int *memo = &x->send[(x->base[s] + slot + 1) * c->n_tasks + to];
  if (*memo >= 0) return *memo;
  const dfx_node *src = &c->a->nodes[s];
  char base[320];
  snprintf(base, sizeof base, "_send/%s/%s/task%d", src->name, slot < 0 ? "ctrl" : "0", to);
  if (slot > 0) snprintf(base, sizeof base, "_send/%s/%d/task%d", src->name, slot, to);
  int in = s, in_slot = slot;
  dfx_dtype dt = slot < 0 ? DFX_F32 : src->out_types[slot];
  if (slot < 0) {
    char dbase[320];
    snprintf(dbase, sizeof dbase, "_send/%s/ctrl/dummy", src->name);
    if ((in = add_dummy(c, p, dbase, t, s)) < 0) return -1;
    in_slot = 0;
  }
  int id = add_node(c, p, base, "_Send", t);
  if (id < 0) return -1;
  dfx_code rc = dfx__graph_add_input(p, id, in, in_slot, c->st);
  if (rc == DFX_OK) rc = dfx__rewrite_set_type(p, id, "T", dt, c->st);
  if (rc == DFX_OK) rc = transfer_attrs(c, p, id, s, slot, t, to);
  return rc == DFX_OK ? (*memo = id) : -1;
}

static dfx_code cut_partition(pctx *c, cut *x, int t, dfx_graph **out) {
  dfx_graph *p = NULL;
  dfx_code rc = dfx__graph_clone(c->a, &p, c->st);
  if (rc != DFX_OK) return rc;
  int n = c->a->n_nodes, total = x->base[n];
  for (int i = 0; i < total; i++) x->recv[i] = -1;
  for (int i = 0; i < total * c->n_tasks; i++) x->send[i] = -1;
  for (int i = 0; i < n && rc == DFX_OK; i++) {
    if (c->task[i] != t) continue;
    int n_inputs = p->nodes[i].n_in + p->nodes[i].n_ctrl;
    for (int k = 0; k < n_inputs; k++) {
      dfx_input in = p->nodes[i].in[k];
      if (c->task[in.node] == t) continue;
      int r = make_recv(c, x, p, t, in.node, in.slot < 0 ? -1 : in.slot, i);
      if (r < 0) {
        rc = c->st && c->st->code ? c->st->code : DFX_ENOMEM;
        break;
      }
      dfx__graph_set_input(p, i, k, r, in.slot < 0 ? -1 : 0);
    }
    const dfx_node *an = &c->a->nodes[i];
    for (int e = 0; e < an->n_edges && rc == DFX_OK; e++) {
      const dfx_edge *ed = &an->edges[e];
      int u = c->task[ed->dst];
      if (u == t) continue;
      if (make_send(c, x, p, t, i, ed->dst_slot < 0 ? -1 : ed->src_slot, u) < 0)
        rc = c->st && c->st->code ? c->st->code : DFX_ENOMEM;
    }
  }
  /* Every kept node names its task in full (TF's assigned device). */
  char dev[96];
  dfx__dist_device_name(t, dev, sizeof dev);
  for (int i = 0; i < n && rc == DFX_OK; i++)
    if (c->task[i] != t) dfx__graph_remove_node(p, i);
    else rc = dfx__graph_set_device(p, i, dev, c->st);
  if (rc == DFX_OK) rc = dfx__graph_finalize(p, c->st);
  if (rc != DFX_OK) {
    dfx_graph_free(p);
    return rc;
  }
  *out = p;
  return DFX_OK;
}

dfx_code dfx__dist_partition(const dfx_graph *g, const int *task, int n_tasks, int64_t incarnation, dfx_graph **parts,
                             dfx_status *st) {
  for (int k = 0; k < n_tasks; k++) parts[k] = NULL;
  if (!g->final) return dfx__status_set(st, DFX_EPRECOND, "partition: the graph is not final");
  pctx c = {.g = g, .n_tasks = n_tasks, .incarnation = incarnation, .st = st};
  cut x = {0};
  dfx_code rc = DFX_OK;
  int F = g->n_frames > 0 ? g->n_frames : 1;
  c.cap_task = g->n_nodes + 16;
  c.task = dfx__malloc(sizeof *c.task * (size_t)c.cap_task);
  c.present = dfx__calloc((size_t)F * (size_t)n_tasks, 1);
  c.cl_merge = dfx__malloc(sizeof *c.cl_merge * (size_t)F * (size_t)n_tasks);
  c.loopcond = dfx__malloc(sizeof *c.loopcond * (size_t)F);
  if (!c.task || !c.present || !c.cl_merge || !c.loopcond) {
    rc = dfx__status_set(st, DFX_ENOMEM, "out of memory");
    goto done;
  }
  for (int i = 0; i < g->n_nodes; i++) {
    if (task[i] < 0 || task[i] >= n_tasks) {
      rc = dfx__status_set(st, DFX_EINVAL, "partition: node '%s' has no task in 0..%d", g->nodes[i].name, n_tasks - 1);
      goto done;
    }
    c.task[i] = task[i];
  }
  for (int i = 0; i < F * n_tasks; i++) c.cl_merge[i] = -1;
  for (int f = 0; f < F; f++) c.loopcond[f] = -1;
  mark_presence(&c);
  if ((rc = dfx__graph_clone(g, &c.a, st)) != DFX_OK) goto done;
  /* Step 1: control loops for every spanning frame, on every task it is on. */
  for (int f = 1; f < g->n_frames; f++) {
    if (!spans(&c, f)) continue;
    for (int t = 0; t < n_tasks; t++)
      if (c.present[f * n_tasks + t] && control_loop(&c, f, t) < 0) {
        rc = st && st->code ? st->code : DFX_ENOMEM;
        goto done;
      }
  }
  if ((rc = dfx__graph_finalize(c.a, st)) != DFX_OK) goto done;
  /* Step 2: cut each task's partition. */
  int n = c.a->n_nodes;
  x.base = dfx__malloc(sizeof *x.base * ((size_t)n + 1));
  if (!x.base) {
    rc = dfx__status_set(st, DFX_ENOMEM, "out of memory");
    goto done;
  }
  x.base[0] = 0;
  for (int i = 0; i < n; i++) x.base[i + 1] = x.base[i] + c.a->nodes[i].n_out + 1;
  x.recv = dfx__malloc(sizeof *x.recv * ((size_t)x.base[n] + 1));
  x.send = dfx__malloc(sizeof *x.send * ((size_t)x.base[n] * (size_t)n_tasks + 1));
  if (!x.recv || !x.send) {
    rc = dfx__status_set(st, DFX_ENOMEM, "out of memory");
    goto done;
  }
  for (int t = 0; t < n_tasks && rc == DFX_OK; t++) rc = cut_partition(&c, &x, t, &parts[t]);
done:
  if (rc != DFX_OK)
    for (int k = 0; k < n_tasks; k++) {
      dfx_graph_free(parts[k]);
      parts[k] = NULL;
    }
  dfx_graph_free(c.a);
  dfx__free(c.task);
  dfx__free(c.present);
  dfx__free(c.cl_merge);
  dfx__free(c.loopcond);
  dfx__free(x.base);
  dfx__free(x.recv);
  dfx__free(x.send);
  return rc;
}
