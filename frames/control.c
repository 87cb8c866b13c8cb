/* control.c - every control-flow rule, op by op (tf-semantics §2.2-2.5):
 * how a node's pending count starts, what executing it does, how its inputs
 * activate it (the Merge and ControlTrigger exceptions) and what happens to
 * its outputs after it finishes (Enter, Exit, NextIteration). The moves
 * (what a Switch, Merge, Enter... hands on) are inline in control.h because
 * the executor runs them for most nodes of a loop body. The iteration and
 * frame lifecycle these rules call into is in iteration.c; the locking rule
 * is in frame.h.
 *
 * The rules, per op (grep "Op: " for the blocks below):
 *   Switch          forwards data to port pred (0 false, 1 true); the other
 *                   port stays unset and arrives dead at its consumers.
 *   _SwitchN        forwards data to port index; out of range: the last.
 *   Merge           pending starts at 1 + 2 x control inputs; fires on its
 *                   first live input, or dead when all inputs are dead (or a
 *                   dead Enter arrives); emits the input and its index.
 *   Enter           delivers into the child frame, iteration 0; a constant
 *                   Enter into every iteration, now and later.
 *   Exit            a live value leaves at once; a dead one waits for the
 *                   frame's deletion and counts only from the newest iteration.
 *   NextIteration   a live value feeds iteration k+1 (creating it, or
 *                   deferred while parallel_iterations are in flight); a
 *                   dead one stops deadness.
 *   LoopCond        forwards its bool; fails once the run is cancelled.
 *   ControlTrigger  never dead once ready.
 *   other nodes     every in-edge counts once; any dead input kills the node. */
#include <stdio.h>
#include <string.h>

#include "control.h"
#include "frame.h"
#include "invariant.h"

/* ---- pending counts (§2.4) ---- */

/* Op: Merge. Bit 0 of the count means "still waiting for a live data
 * input"; each control edge counts 2. A negative count means started. */
int32_t dfx__ctrl_pending_init(dfx_ctrl_op ctrl, int n_data, int n_ctrl) {
  return ctrl == DFX_CTRL_MERGE ? 1 + 2 * n_ctrl : n_data + n_ctrl;
}

int dfx__ctrl_waiting(dfx_ctrl_op ctrl, int32_t pending) {
  if (pending < 0) return 0;
  return ctrl == DFX_CTRL_MERGE ? pending / 2 + (pending & 1) : pending;
}

/* A Merge needs one live data input and all its control inputs, the units
 * dfx__ctrl_waiting counts in. */
int dfx__ctrl_expected(const dfx_fnode *n) {
  return n->ctrl == DFX_CTRL_MERGE ? 1 + n->pending_init / 2 : n->pending_init;
}

/* ---- execution (§2.2) ---- */

dfx_code dfx__ctrl_execute(const dfx_fnode *n, dfx_tensor **in, dfx_tensor **out, dfx_status *st) {
  switch (n->ctrl) {
    case DFX_CTRL_SWITCH: {
      const dfx_tensor *pred = in[1];
      if (!n->is_switch_n)
        return dfx__status_set(st, DFX_EINVAL,
                               "The second input must be a scalar bool, but it has shape with %d dims and dtype %s",
                               pred->ndims, dfx_dtype_name((dfx_dtype)pred->dtype));
      /* Op: _SwitchN. An index out of range selects the last output. */
      if (pred->ndims != 0 || pred->dtype != DFX_I32)
        return dfx__status_set(st, DFX_EINVAL, "output_index must be a scalar int32");
      int32_t k = *(const int32_t *)pred->data;
      out[(k < 0 || k >= n->n_out) ? n->n_out - 1 : k] = in[0];
      in[0] = NULL;
      return DFX_OK;
    }
    case DFX_CTRL_MERGE: /* Op: Merge, with value_index (made only when read, as recent TF does) */
      for (int i = 0; i < n->n_in; i++)
        if (in[i]) {
          int32_t idx = i;
          if (!(out[1] = dfx__tensor_scalar(DFX_I32, &idx))) return dfx__status_set(st, DFX_ENOMEM, "out of memory");
          out[0] = in[i];
          in[i] = NULL;
          break;
        }
      return DFX_OK;
    case DFX_CTRL_LOOP_COND: /* dfx__ctrl_move declines it only when cancelled */
      return dfx__status_set(st, DFX_ECANCELED, "Loop execution was cancelled.");
    case DFX_CTRL_CONTROL_TRIGGER: return DFX_OK;
    default: /* every other control op is a pure move */
      DFX_ASSERT(!"dfx__ctrl_execute on a node dfx__ctrl_move handles");
      return dfx__status_set(st, DFX_EINTERNAL, "node '%s' (%s): no rule to execute it", n->name, n->op);
  }
}

/* ---- activation (§2.4) ---- */

/* How deep trivial nodes are settled inside one another before the rest go
 * through the ready list. A loop body's chain Merge -> ... LoopCond -> Switch
 * -> Identity -> Const is five deep. */
#define SETTLE_DEPTH 8

static int activate_at(dfx_prop *p, const dfx_fnode *src, bool src_dead, int src_dead_src, dfx_frame *f, dfx_iter *it,
                       dfx_tensor **outputs, bool consume, dfx_ready *ready, int depth);

/* Runs a trivial node (dfx__flow_trivial) where it became ready: exactly
 * what executing it and propagating its outputs would do, without a trip
 * through the scheduler. Returns 0 when settled, -1 on error, and 1 when the
 * node must run normally after all: a bad Switch predicate or a cancelled
 * LoopCond, whose errors the executor reports. Caller holds f->mu. */
static int settle_trivial(dfx_prop *p, int node, bool dead, int dead_src, dfx_frame *f, dfx_iter *it,
                          dfx_ready *ready, int depth) {
  const dfx_fnode *n = &p->flow->nodes[node];
  dfx_tensor *out[2] = {NULL, NULL};
  dfx_tensor **in = it->inputs + n->input_start;
  if (!dead && !dfx__ctrl_move(n, in, out, __atomic_load_n(p->cancelled, __ATOMIC_RELAXED))) return 1;
  /* What is left in the input slots is dropped, as when a node runs. */
  for (int i = 0; i < n->n_in; i++)
    if (in[i]) {
      dfx__tensor_unref(in[i]);
      in[i] = NULL;
    }
  int r = activate_at(p, n, dead, dead_src, f, it, out, true, ready, depth) ? -1 : 0;
  dfx__tensor_unref(out[0]);
  dfx__tensor_unref(out[1]);
  return r;
}

/* A consumer got a second value on one input in one iteration. Only an
 * ill-formed loop does that (an Exit that is live in every iteration, say):
 * it is the user's graph, not a broken invariant, so the run fails with a
 * message instead of silently replacing or dropping the value. */
static int second_value(const dfx_prop *p, const dfx_fnode *src, const dfx_fedge *fe, const dfx_iter *it,
                        dfx_ready *ready) {
  const dfx_fnode *dst = &p->flow->nodes[fe->dst];
  dfx__status_set_first(ready->st, DFX_EINVAL,
                        "node '%s' (%s) received a second value for input %d from '%s' (%s) in iteration %lld: the "
                        "graph's loop structure is ill-formed",
                        dst->name, dst->op, fe->dst_slot, src->name, src->op, (long long)it->iter_num);
  return -1;
}

/* Puts outputs[fe->src_slot] into the consumer's input slot: moved on the
 * slot's last edge when the caller gives up its references, else shared. */
static inline int store_input(const dfx_prop *p, const dfx_fnode *src, dfx_iter *it, const dfx_fedge *fe,
                              dfx_tensor **outputs, bool consume, dfx_ready *ready) {
  dfx_tensor **slot = &it->inputs[fe->dst_input];
  if (*slot) return second_value(p, src, fe, it, ready);
  if (fe->is_last && consume) {
    *slot = outputs[fe->src_slot];
    outputs[fe->src_slot] = NULL;
  } else {
    *slot = dfx__tensor_ref(outputs[fe->src_slot]);
  }
  return 0;
}

static int no_memory(dfx_ready *ready) {
  dfx__status_set_first(ready->st, DFX_ENOMEM, "out of memory");
  return -1;
}

/* Delivers `outputs` of node `src` (dead or not) to its consumers in
 * (frame f, iteration it), appending ready nodes. Caller holds f->mu.
 * Consumes each outputs[k] reference on its last edge. This loop runs once
 * per finished node, so everything it needs about a consumer is in the edge.
 * Returns 0, or -1 after an error in ready->st. */
static int activate_at(dfx_prop *p, const dfx_fnode *src, bool src_dead, int src_dead_src, dfx_frame *f, dfx_iter *it,
                       dfx_tensor **outputs, bool consume, dfx_ready *ready, int depth) {
  if (src->n_edges == 0) return 0; /* edges is NULL then: no pointer arithmetic on it */
  /* A dead input remembers which Switch started the deadness. */
  const int why = src_dead ? src_dead_src : (src->ctrl == DFX_CTRL_SWITCH ? (int)(src - p->flow->nodes) + 1 : 0);
  const bool src_enter = src->ctrl == DFX_CTRL_ENTER;
  /* Not restrict: settling a consumer below updates these arrays too. */
  int32_t *pending = it->pending, *dead = it->dead;
  for (const dfx_fedge *fe = src->edges, *end = fe + src->n_edges; fe < end; fe++) {
    const int loc = fe->dst_local;
    const bool ctrl = fe->dst_input < 0;
    dfx_tensor *val = ctrl ? NULL : outputs[fe->src_slot];
    bool dst_dead;
    if (fe->dst_kind != DFX_DST_MERGE) {
      /* Op: other nodes. Every input counts once; any dead one makes the
       * node dead (a control edge carries its source node's deadness). */
      if (val && store_input(p, src, it, fe, outputs, consume, ready)) return -1;
      if (src_dead || (!ctrl && !val)) {
        dead[loc]++;
        if (!it->dead_src[loc]) it->dead_src[loc] = why;
      }
      if (--pending[loc] != 0) {
        /* Below zero: a value came after the node was ready (see second_value). */
        if (pending[loc] < 0 && val) return second_value(p, src, fe, it, ready);
        continue;
      }
      /* Op: ControlTrigger. Never dead once ready. */
      dst_dead = dead[loc] > 0 && fe->dst_kind != DFX_DST_TRIGGER;
    } else {
      /* Op: Merge (the table of §2.4). */
      int32_t count = pending[loc];
      bool dst_ready;
      if (count < 0) continue; /* already started: later inputs are ignored */
      if (ctrl) {
        pending[loc] = count -= 2;
        DFX_ASSERT(count >= 0);
        dst_dead = dead[loc] == fe->dst_n_in;
        dst_ready = count == 0 || (count == 1 && dst_dead);
      } else if (val) {
        /* Only the first live input is kept; it fires the Merge when no
         * control input is outstanding (count == 1). */
        if (count & 1) {
          pending[loc] = count & ~1;
          if (store_input(p, src, it, fe, outputs, consume, ready)) return -1;
        }
        dst_dead = false;
        dst_ready = count == 1;
      } else {
        dead[loc]++;
        if (!it->dead_src[loc]) it->dead_src[loc] = why;
        /* "or X is an Enter": a loop in a dead branch must still finish. */
        dst_dead = dead[loc] == fe->dst_n_in || src_enter;
        dst_ready = count == 1 && dst_dead;
      }
      if (!dst_ready) continue;
      pending[loc] = -1; /* started: late inputs are dropped */
    }
    /* dst is ready. */
    if (dst_dead && fe->dst_kind == DFX_DST_EXIT && p->settle_dead_exits) {
      /* Op: Exit, dead (what running it would do, see dfx__propagate):
       * every non-final iteration of a loop has one per loop variable. */
      if (it->iter_num == f->iteration_count && dfx__held_push(&f->dead_exits, fe->dst, NULL, it->dead_src[loc]))
        return no_memory(ready);
      if (fe->dst_observed) { /* a fetched Exit: record its deadness for the executor */
        int slot = p->flow->nodes[fe->dst].dead_slot, was = 0, why_dead = it->dead_src[loc] ? it->dead_src[loc] : -1;
        __atomic_compare_exchange_n(&p->settled_dead[slot], &was, why_dead, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
      }
      continue;
    }
    if (fe->dst_trivial && p->settle_trivial && depth < SETTLE_DEPTH) {
      int r = settle_trivial(p, fe->dst, dst_dead, dst_dead ? it->dead_src[loc] : 0, f, it, ready, depth + 1);
      if (r < 0) return -1;
      if (r == 0) continue;
    }
    if (dfx__ready_add(ready, fe->dst, dst_dead, dst_dead ? it->dead_src[loc] : 0, f, it)) return no_memory(ready);
    it->outstanding_ops++;
  }
  return 0;
}

int dfx__ctrl_activate(dfx_prop *p, int src, bool src_dead, int src_dead_src, dfx_frame *f, dfx_iter *it,
                       dfx_tensor **outputs, bool consume, dfx_ready *ready) {
  return activate_at(p, &p->flow->nodes[src], src_dead, src_dead_src, f, it, outputs, consume, ready, 0);
}

/* ---- after a node finishes (§2.5 PropagateOutputs) ---- */

dfx_code dfx__propagate(dfx_prop *p, const dfx_tagged *t, dfx_tensor **outputs, dfx_ready *ready) {
  dfx_status *st = ready->st;
  const dfx_fnode *n = &p->flow->nodes[t->node];
  dfx_frame *f = t->frame;
  dfx_iter *it = t->iter;
  bool done = false;
  int err = 0;
  switch (n->ctrl) {
    /* Op: Enter. Deliver into the child frame, iteration 0 (or every
     * iteration for a loop invariant); one fewer pending Enter. */
    case DFX_CTRL_ENTER: {
      dfx_frame *c = dfx__iteration_child(p, f, it, n->child_frame, ready);
      if (!c) {
        err = 1;
        break;
      }
      dfx__frame_lock(p, c);
      if (n->is_constant_enter) {
        dfx_tensor *v = t->dead ? NULL : dfx__tensor_ref(outputs[0]);
        if (dfx__held_push(&c->inv_values, t->node, v, t->dead_src)) {
          dfx__tensor_unref(v);
          dfx__status_set_first(st, DFX_ENOMEM, "out of memory");
          err = 1;
        }
        /* Every iteration from 0 still exists: iteration 0 cannot finish
         * while the frame has pending Enters. */
        for (int64_t k = 0; k <= c->iteration_count && !err; k++) {
          dfx_iter *ci = dfx__frame_iter(c, k);
          if (ci && dfx__ctrl_activate(p, t->node, t->dead, t->dead_src, c, ci, outputs, false, ready)) err = 1;
        }
      } else if (dfx__ctrl_activate(p, t->node, t->dead, t->dead_src, c, dfx__frame_iter(c, 0), outputs, true, ready)) {
        err = 1;
      }
      c->num_pending_inputs--;
      DFX_ASSERT(c->num_pending_inputs >= 0);
      /* TF finishes a child's iteration 0 when the last node readied in it
       * completes. When every node this Enter reached was settled in place
       * (a dead Enter straight into its Exit, say), none was readied, so the
       * check falls to this Enter: with all Enters in, iteration 0 may be
       * finished already, and with it the frame. */
      dfx_iter *c0 = c->num_pending_inputs == 0 ? dfx__frame_iter(c, 0) : NULL;
      bool child_done = c0 && c0->iter_num == 0 && c0->outstanding_ops == 0 && dfx__iteration_cleanup(p, c, c0, ready);
      dfx__frame_unlock(p, c);
      /* Deleting the child before this Enter counts itself out keeps the
       * parent iteration alive until both are accounted for. */
      if (child_done) dfx__iteration_delete_frame(p, c, ready);
      dfx__frame_lock(p, f);
      done = dfx__iteration_node_done(p, f, it, ready);
      dfx__frame_unlock(p, f);
      break;
    }
    /* Op: Exit. A live value leaves at once; a dead one is held until the
     * frame is deleted, and only if it comes from the newest iteration. */
    case DFX_CTRL_EXIT:
      if (t->dead) {
        dfx__frame_lock(p, f);
        if (it->iter_num == f->iteration_count && dfx__held_push(&f->dead_exits, t->node, NULL, t->dead_src)) {
          dfx__status_set_first(st, DFX_ENOMEM, "out of memory");
          err = 1;
        }
        done = dfx__iteration_node_done(p, f, it, ready);
        dfx__frame_unlock(p, f);
      } else {
        dfx__frame_lock(p, f->parent);
        if (dfx__ctrl_activate(p, t->node, false, 0, f->parent, f->parent_iter, outputs, true, ready)) err = 1;
        dfx__frame_unlock(p, f->parent);
        dfx__frame_lock(p, f);
        done = dfx__iteration_node_done(p, f, it, ready);
        dfx__frame_unlock(p, f);
      }
      break;
    /* Op: NextIteration. A dead one stops deadness; a live one feeds
     * iteration k+1, creating it unless parallel_iterations are already in
     * flight (then it waits in next_iter_roots). */
    case DFX_CTRL_NEXT_ITERATION:
      dfx__frame_lock(p, f);
      if (!t->dead) {
        dfx_iter *out_it = NULL;
        if (it->iter_num == f->iteration_count) {
          if (f->num_outstanding_iterations == f->max_parallel) {
            if (dfx__held_push(&f->next_iter_roots, t->node, outputs[0], 0)) {
              dfx__status_set_first(st, DFX_ENOMEM, "out of memory");
              err = 1;
            } else {
              outputs[0] = NULL;
            }
          } else if (dfx__iteration_increment(p, f, ready)) {
            err = 1;
          } else {
            out_it = dfx__frame_iter(f, it->iter_num + 1);
          }
        } else {
          out_it = dfx__frame_iter(f, it->iter_num + 1);
        }
        if (out_it && dfx__ctrl_activate(p, t->node, false, 0, f, out_it, outputs, true, ready)) err = 1;
      }
      done = dfx__iteration_node_done(p, f, it, ready);
      dfx__frame_unlock(p, f);
      break;
    /* Everything else (Switch, Merge, LoopCond, ControlTrigger and compute
     * ops) activates its consumers in the same frame and iteration. */
    default:
      dfx__frame_lock(p, f);
      if (dfx__ctrl_activate(p, t->node, t->dead, t->dead_src, f, it, outputs, true, ready)) err = 1;
      done = dfx__iteration_node_done(p, f, it, ready);
      dfx__frame_unlock(p, f);
      break;
  }
  if (done) dfx__iteration_delete_frame(p, f, ready);
  if (err || st->code != DFX_OK) return st->code != DFX_OK ? st->code : DFX_ENOMEM;
  return DFX_OK;
}

dfx_code dfx__activate_roots(dfx_prop *p, dfx_ready *ready) {
  const dfx_flow *fl = p->flow;
  dfx_iter *it = p->root->ring[0];
  for (int i = 0; i < fl->n_roots; i++) {
    if (dfx__ready_add(ready, fl->roots[i], false, 0, p->root, it)) return DFX_ENOMEM;
    it->outstanding_ops++;
  }
  return DFX_OK;
}
