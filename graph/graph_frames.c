/* graph_frames.c - static frames and cycle checks (tf-semantics §2.5, §1.11).
 * Assigns every node to a frame by a BFS from the root nodes, the way TF's
 * BuildControlFlowInfo does (first visit wins), then verifies that every edge
 * agrees with that assignment, so mismatches are reported at load time with
 * both frames named instead of hanging at run time. */
#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "graph_import.h"

/* Frames are identified by frame_name alone, as in TF (one FrameInfo per
 * distinct name, tf-semantics §2.5): two loops sharing a name share a frame. */
static int find_frame(const dfx_graph *g, const char *name) {
  for (int i = 0; i < g->n_frames; i++)
    if (strcmp(g->frames[i].name, name) == 0) return i;
  return -1;
}

static int add_frame(dfx_graph *g, const char *name, int parent) {
  dfx_frame_info *nf = dfx__realloc(g->frames, sizeof *nf * (size_t)(g->n_frames + 1));
  if (!nf) return -1;
  g->frames = nf;
  dfx_frame_info *f = &nf[g->n_frames];
  memset(f, 0, sizeof *f);
  if (!(f->name = dfx__strdup(name))) return -1;
  f->parent = parent;
  /* -1 until the first Enter of the frame is met (dfx__graph_frames). */
  f->parallel_iterations = -1;
  return g->n_frames++;
}

static const char *fname(const dfx_graph *g, int f) { return f == 0 ? "(root)" : g->frames[f].name; }

/* The frame a successor of `u` belongs to, given u's frame; -2 on error. */
static int successor_frame(dfx_graph *g, dfx_node *u, dfx_status *st) {
  int f = u->frame;
  if (u->ctrl == DFX_CTRL_ENTER) {
    const char *name = dfx__attr_str(u, "frame_name", "");
    if (!*name) {
      dfx__status_set(st, DFX_EINVAL, "Node '%s' (%s): missing or empty frame_name attr", u->name, u->op);
      return -2;
    }
    /* check_edges asks again for every Enter; the cached child_frame answers
     * without a name lookup and cannot disagree with the BFS. */
    int c = u->child_frame >= 0 ? u->child_frame : find_frame(g, name);
    if (c < 0) {
      c = add_frame(g, name, f);
      if (c < 0) {
        dfx__status_set(st, DFX_ENOMEM, "out of memory");
        return -2;
      }
    /* A frame name has one parent frame (the check of TF's control_flow.cc):
     * its Exits lead into that parent (below), so a second one is ambiguous. */
    } else if (g->frames[c].parent != f) {
      dfx__status_set(st, DFX_EINVAL,
                      "Invalid loop structure: Mismatched parent frames for '%s': Enter '%s' is in frame '%s' but "
                      "the frame was first entered from frame '%s'",
                      name, u->name, fname(g, f), fname(g, g->frames[c].parent));
      return -2;
    }
    u->child_frame = c;
    return c;
  }
  if (u->ctrl == DFX_CTRL_EXIT) {
    if (f == 0) {
      dfx__status_set(st, DFX_EINVAL, "Node '%s' (%s): Invalid Exit op: Cannot find a corresponding Enter op.",
                      u->name, u->op);
      return -2;
    }
    /* TF: an Exit's successors belong to the frame enclosing the Enter that
     * opened the Exit's frame, i.e. the parent. */
    return g->frames[f].parent;
  }
  return f;
}

static dfx_code assign(dfx_graph *g, dfx_status *st) {
  /* A node is queued only when its frame is first set, so n slots suffice
   * (+1 keeps the request non-zero for an empty graph). */
  int *queue = dfx__malloc(sizeof(int) * ((size_t)g->n_nodes + 1));
  if (!queue) return dfx__status_set(st, DFX_ENOMEM, "out of memory");
  int head = 0, tail = 0;
  for (int i = 0; i < g->n_nodes; i++) {
    g->nodes[i].frame = -1;
    g->nodes[i].child_frame = -1;
    /* TF's roots hang off _SOURCE; "no inputs at all starts in the root frame"
     * is the same thing (tf-semantics §1.11). */
    if (g->nodes[i].n_in + g->nodes[i].n_ctrl == 0) {
      g->nodes[i].frame = 0;
      queue[tail++] = i;
    }
  }
  while (head < tail) {
    dfx_node *u = &g->nodes[queue[head++]];
    int tf = successor_frame(g, u, st);
    if (tf == -2) {
      dfx__free(queue);
      return st ? st->code : DFX_EINVAL;
    }
    for (int e = 0; e < u->n_edges; e++) {
      dfx_node *v = &g->nodes[u->edges[e].dst];
      /* First visit wins, TF's rule; check_edges then rejects any edge that
       * disagrees instead of letting the run hang. */
      if (v->frame >= 0) continue;
      v->frame = tf;
      queue[tail++] = v->id;
    }
  }
  dfx__free(queue);
  for (int i = 0; i < g->n_nodes; i++)
    if (g->nodes[i].frame < 0)
      return dfx__status_set(st, DFX_EINVAL,
                             "Node '%s' (%s) cannot be reached from any node without inputs: it sits on a cycle "
                             "that is not a while loop (cycles must pass through NextIteration into Merge)",
                             g->nodes[i].name, g->nodes[i].op);
  return DFX_OK;
}

/* Every edge must lead into the frame its source implies. */
static dfx_code check_edges(dfx_graph *g, dfx_status *st) {
  for (int i = 0; i < g->n_nodes; i++) {
    dfx_node *u = &g->nodes[i];
    int tf = successor_frame(g, u, st);
    if (tf == -2) return st ? st->code : DFX_EINVAL;
    for (int e = 0; e < u->n_edges; e++) {
      dfx_node *v = &g->nodes[u->edges[e].dst];
      if (v->frame == tf) continue;
      return dfx__status_set(st, DFX_EINVAL,
                             "Node '%s' (%s) has inputs from different frames: input '%s' (%s) leads into frame '%s' "
                             "but '%s' is in frame '%s'",
                             v->name, v->op, u->name, u->op, fname(g, tf), v->name, fname(g, v->frame));
    }
  }
  return DFX_OK;
}

/* Kahn's algorithm with NextIteration -> Merge edges left out: whatever
 * remains is a cycle that no loop closes. */
static dfx_code check_cycles(dfx_graph *g, dfx_status *st) {
  int n = g->n_nodes;
  int *indeg = dfx__calloc((size_t)n + 1, sizeof(int));
  int *queue = dfx__malloc(sizeof(int) * ((size_t)n + 1));
  if (!indeg || !queue) {
    dfx__free(indeg);
    dfx__free(queue);
    return dfx__status_set(st, DFX_ENOMEM, "out of memory");
  }
  for (int i = 0; i < n; i++) {
    const dfx_node *u = &g->nodes[i];
    for (int e = 0; e < u->n_edges; e++) {
      const dfx_node *v = &g->nodes[u->edges[e].dst];
      /* The back edge of a while loop is the only cycle TF allows (§1.11). */
      if (!(u->ctrl == DFX_CTRL_NEXT_ITERATION && v->ctrl == DFX_CTRL_MERGE)) indeg[v->id]++;
    }
  }
  int head = 0, tail = 0;
  for (int i = 0; i < n; i++)
    if (!indeg[i]) queue[tail++] = i;
  while (head < tail) {
    const dfx_node *u = &g->nodes[queue[head++]];
    for (int e = 0; e < u->n_edges; e++) {
      const dfx_node *v = &g->nodes[u->edges[e].dst];
      if (u->ctrl == DFX_CTRL_NEXT_ITERATION && v->ctrl == DFX_CTRL_MERGE) continue;
      if (--indeg[v->id] == 0) queue[tail++] = v->id;
    }
  }
  dfx_code c = DFX_OK;
  if (tail < n) {
    char names[512] = "";
    int shown = 0;
    for (int i = 0; i < n && shown < 6; i++) {
      if (!indeg[i]) continue;
      size_t o = strlen(names);
      snprintf(names + o, sizeof names - o, "%s'%s' (%s)", shown ? ", " : "", g->nodes[i].name, g->nodes[i].op);
      shown++;
    }
    c = dfx__status_set(st, DFX_EINVAL,
                        "graph has a cycle not closed by NextIteration -> Merge (%d nodes involved, e.g. %s)",
                        n - tail, names);
  }
  dfx__free(indeg);
  dfx__free(queue);
  return c;
}

dfx_code dfx__graph_frames(dfx_graph *g, dfx_status *st) {
  if (add_frame(g, "", -1) != 0) return dfx__status_set(st, DFX_ENOMEM, "out of memory");
  g->frames[0].parallel_iterations = 1;
  dfx_code c;
  if ((c = check_cycles(g, st)) != DFX_OK || (c = assign(g, st)) != DFX_OK || (c = check_edges(g, st)) != DFX_OK)
    return c;
  /* Per-frame facts: Enter count, node count, parallel_iterations from the
   * first Enter in node order (TF's rule; later mismatches are ignored). */
  for (int i = 0; i < g->n_nodes; i++) {
    dfx_node *n = &g->nodes[i];
    g->frames[n->frame].n_nodes++;
    if (n->ctrl != DFX_CTRL_ENTER) continue;
    dfx_frame_info *f = &g->frames[n->child_frame];
    f->n_enters++;
    if (f->parallel_iterations < 0) {
      int64_t pi = dfx__attr_int(n, "parallel_iterations", 10);
      /* Each frame instance of a run allocates a ring of parallel_iterations + 1
       * iteration slots (frames/frame.c): the bound keeps a hostile attr from
       * sizing a huge one. */
      if (pi <= 0 || pi > (1 << 20))
        return dfx__status_set(st, DFX_EINVAL,
                               "Node '%s' (%s): parallel_iterations must be in [1, %d], got %lld", n->name, n->op,
                               1 << 20, (long long)pi);
      f->parallel_iterations = (int)pi;
    }
  }
  return DFX_OK;
}
