/* control.h - the control-flow rules (control.c) that code outside the
 * propagator needs: the encoding of initial pending counts (flow layout, the
 * stuck report) and what executing a node that only moves tensors does (the
 * executor). Propagation itself is declared in frame.h. */
#ifndef DFX_CONTROL_H
#define DFX_CONTROL_H

#include <stdbool.h>
#include <stdint.h>

#include "flow.h"
#include "status.h"
#include "tensor.h"

/* Initial pending count of a node with `n_data` data and `n_ctrl` control
 * in-edges (tf-semantics §2.4). */
int32_t dfx__ctrl_pending_init(dfx_ctrl_op ctrl, int n_data, int n_ctrl);
/* How many inputs a node is still waiting for, given its pending count;
 * and how many it waits for in all (for a Merge: one live data input plus
 * its control inputs). For messages. */
int dfx__ctrl_waiting(dfx_ctrl_op ctrl, int32_t pending);
int dfx__ctrl_expected(const dfx_fnode *n);

/* What a node that only moves tensors does: Switch, Merge, LoopCond, Enter,
 * Exit, NextIteration, and DFX_MOVE_FORWARD / DFX_MOVE_CONST nodes. Moves
 * its live inputs to out[] and returns true. Returns false, touching
 * nothing, for every other node and for the cases with more to do: a
 * _SwitchN, a Switch predicate that is not a scalar bool, a Merge whose
 * value_index is read, a LoopCond of a cancelled run (dfx__ctrl_execute
 * does those). The executor and the propagator's settling both call it, so
 * they cannot disagree on what these nodes do. */
/* Inline: the executor and the settling in control.c call it for most
 * nodes of a loop body. */
static inline bool dfx__ctrl_move(const dfx_fnode *n, dfx_tensor **in, dfx_tensor **out, bool cancelled) {
  switch (n->ctrl) {
    /* Op: Switch. The untaken port is never set: that is deadness. */
    case DFX_CTRL_SWITCH: {
      const dfx_tensor *pred = in[1];
      if (n->is_switch_n || pred->ndims != 0 || pred->dtype != DFX_BOOL) return false;
      out[*(const uint8_t *)pred->data ? 1 : 0] = in[0];
      in[0] = NULL;
      return true;
    }
    /* Op: Merge. Only the input that fired it is present. */
    case DFX_CTRL_MERGE:
      if (n->merge_index_used) return false;
      for (int i = 0; i < n->n_in; i++)
        if (in[i]) {
          out[0] = in[i];
          in[i] = NULL;
          break;
        }
      return true;
    /* Op: LoopCond. A cancelled run stops its loops here (§2.9). */
    case DFX_CTRL_LOOP_COND:
      if (cancelled) return false;
      /* fall through */
    /* Op: Enter, Exit, NextIteration. Identities: the frame logic is in
     * propagation. */
    case DFX_CTRL_ENTER:
    case DFX_CTRL_EXIT:
    case DFX_CTRL_NEXT_ITERATION:
      out[0] = in[0];
      in[0] = NULL;
      return true;
    case DFX_CTRL_NONE:
      if (n->move == DFX_MOVE_CONST) {
        out[0] = dfx__tensor_ref((dfx_tensor *)n->const_value); /* immortal: no count */
        return true;
      }
      if (n->move != DFX_MOVE_FORWARD) return false;
      for (int i = 0; i < n->n_out && i < n->n_in; i++) {
        out[i] = in[i];
        in[i] = NULL;
      }
      return true;
    default:
      return false;
  }
}

/* Runs a control op in full after dfx__ctrl_move declined it: the errors of
 * Switch and LoopCond, _SwitchN, a Merge that also emits value_index, and
 * ControlTrigger. Input slots are left for the caller to clear. Returns
 * DFX_OK or an error code with the message in st. */
dfx_code dfx__ctrl_execute(const dfx_fnode *n, dfx_tensor **in, dfx_tensor **out, dfx_status *st);

#endif
