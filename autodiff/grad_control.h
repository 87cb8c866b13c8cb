/* grad_control.h - gradients of the control-flow ops (a closed set, so
 * gradients.c dispatches them with a switch rather than the tables):
 * conds in grad_cond.c, while loops in grad_while.c. */
#ifndef DFX_AD_GRAD_CONTROL_H
#define DFX_AD_GRAD_CONTROL_H

#include <stdbool.h>

#include "emit.h"

/* A Switch whose predicate is a LoopCond: the loop's exit test. */
bool dfx__is_loop_switch(const dfx_graph *g, int v);
/* A Merge fed by an Enter or a NextIteration: a loop variable's head. */
bool dfx__is_loop_merge(const dfx_graph *g, int v);

/* Gradient functions (grad.h contract) for cond Merge and Switch nodes. */
void dfx__grad_cond_merge(dfx_emit *e, int node, const gp *dy, gp *dx);
void dfx__grad_cond_switch(dfx_emit *e, int node, const gp *dy, gp *dx);

#endif
