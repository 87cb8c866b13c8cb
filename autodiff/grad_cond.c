/* grad_cond.c - gradients through tf.cond (TF1 lowering: Switch on the
 * predicate into each branch, Merge of the branch results), by the scheme
 * of Yu et al., EuroSys 2018, §5: the gradient of a cond is a cond on the
 * same predicate with Switch and Merge swapped.
 *
 *  - Merge: its output gradient is switched on the predicate; each Merge
 *    input gets the Switch output of the branch that input came from, so
 *    the branch's gradient ops run only when the branch ran (the other side
 *    is dead).
 *  - Switch: the gradients of its two outputs are merged; the untaken side
 *    is dead, the walk fills a missing side with ZerosLike of that Switch
 *    output, which is itself dead when the branch did not run.
 *
 * A cond's predicate is not recorded in the graph: it is found by walking
 * back from each Merge input to the Switch that guards it (nested conds are
 * stepped over through their own Switches). */
#include <string.h>

#include "alloc.h"
#include "grad.h"
#include "grad_control.h"

bool dfx__is_loop_switch(const dfx_graph *g, int v) {
  const dfx_node *n = &g->nodes[v];
  return n->ctrl == DFX_CTRL_SWITCH && n->n_in >= 2 && g->nodes[n->in[1].node].ctrl == DFX_CTRL_LOOP_COND;
}

bool dfx__is_loop_merge(const dfx_graph *g, int v) {
  const dfx_node *n = &g->nodes[v];
  if (n->ctrl != DFX_CTRL_MERGE) return false;
  for (int k = 0; k < n->n_in; k++) {
    dfx_ctrl_op c = g->nodes[n->in[k].node].ctrl;
    if (c == DFX_CTRL_ENTER || c == DFX_CTRL_NEXT_ITERATION) return true;
  }
  return false;
}

/* The cond Switch guarding tensor (src, slot): breadth-first backwards over
 * data and control inputs; *branch receives the Switch output the path left
 * from. -1 when none is found. */
static int guard_switch(const dfx_graph *g, int src, int slot, int *branch, int depth) {
  if (depth > 64) return -1;
  int n_nodes = g->n_nodes, head = 0, tail = 0, found = -1;
  int *queue = dfx__malloc(sizeof(int) * 2 * ((size_t)n_nodes + 1));
  char *seen = dfx__calloc((size_t)n_nodes + 1, 1);
  if (!queue || !seen) goto done;
  queue[tail++] = src, queue[tail++] = slot;
  seen[src] = 1;
  while (head < tail) {
    int v = queue[head++], s = queue[head++];
    const dfx_node *n = &g->nodes[v];
    if (n->ctrl == DFX_CTRL_SWITCH && !dfx__is_loop_switch(g, v)) {
      found = v;
      *branch = s;
      break;
    }
    if (n->ctrl == DFX_CTRL_MERGE && !dfx__is_loop_merge(g, v) && n->n_in > 0) {
      /* a nested cond: continue from the Switch that guards it */
      int inner_branch, sw = guard_switch(g, n->in[0].node, n->in[0].slot, &inner_branch, depth + 1);
      if (sw >= 0)
        for (int k = 0; k < 2; k++) {
          int p = g->nodes[sw].in[k].node;
          if (!seen[p]) seen[p] = 1, queue[tail++] = p, queue[tail++] = g->nodes[sw].in[k].slot;
        }
      continue;
    }
    if (n->ctrl == DFX_CTRL_ENTER || n->ctrl == DFX_CTRL_MERGE) continue; /* the loop boundary */
    for (int k = 0; k < n->n_in + n->n_ctrl; k++) {
      int p = n->in[k].node;
      if (seen[p]) continue;
      seen[p] = 1;
      queue[tail++] = p;
      queue[tail++] = n->in[k].slot;
    }
  }
done:
  dfx__free(queue);
  dfx__free(seen);
  return found;
}

void dfx__grad_cond_merge(dfx_emit *e, int node, const gp *dy, gp *dx) {
  int n_in = e->g->nodes[node].n_in;
  int sw = -1;
  for (int k = 0; k < n_in; k++) {
    const dfx_input in = e->g->nodes[node].in[k];
    int branch = -1, s = guard_switch(e->g, in.node, in.slot, &branch, 0);
    if (s < 0 || branch < 0) {
      em_fail(e, DFX_EUNIMPL, "Node '%s' (Merge): input %d is not guarded by a cond Switch; cannot find the predicate",
              e->g->nodes[node].name, k);
      return;
    }
    if (sw < 0) {
      gp in2[2] = {dy[0], gin(e, s, 1)};
      em_attr t = EA_TYPE("T", em_dtype(e, dy[0]));
      sw = em_node(e, "Switch", NULL, in2, 2, &t, 1);
      if (sw < 0) return;
    }
    dx[k] = (gp){sw, branch};
  }
}

void dfx__grad_cond_switch(dfx_emit *e, int node, const gp *dy, gp *dx) {
  em_attr a[2] = {EA_TYPE("T", em_dtype(e, dy[0])), EA_INT("N", 2)};
  dx[0] = em_op(e, "Merge", dy, 2, a, 2);
}
