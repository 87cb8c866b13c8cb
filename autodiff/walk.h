/* walk.h - the state of one gradient walk (gradients.c), shared with the
 * while-loop machinery (grad_while.c) that needs the same node sides and
 * frames. Private to autodiff/. */
#ifndef DFX_AD_WALK_H
#define DFX_AD_WALK_H

#include "emit.h"

typedef struct glist {
  gp *v;
  int n, cap;
} glist;

/* A forward tensor and what the backward frame reads for it. */
typedef struct gmap {
  gp from, to;
} gmap;

/* One forward while loop (static frame) being differentiated: the counter
 * added to it, and its backward loop. */
typedef struct loopst {
  int frame;                 /* forward static frame */
  char *fname;               /* forward frame_name */
  char *bname;               /* backward frame_name */
  int pi;                    /* parallel_iterations of both */
  int lc;                    /* forward LoopCond */
  int c_zero, c_ident, c_add, c_exit; /* forward counter: c_zero in the parent frame */
  int fsync;                 /* ControlTrigger after the pushes of an iteration, -1 until the first push */
  int b_ident, b_sub, b_lc;  /* backward counter: pivot, decrement, loop condition */
  int bsync;                 /* ControlTrigger after the pops of an iteration, -1 until the first pop */
  gmap *hist;                /* forward tensor -> popped value in the backward frame */
  int n_hist, cap_hist;
  gmap *ent;                 /* outer tensor -> its constant Enter into the backward frame */
  int n_ent, cap_ent;
} loopst;

typedef struct walk {
  dfx_graph *g;
  int n_fwd;                 /* nodes of the forward graph; the walk visits only these */
  char *reached, *between;
  int *pending;              /* loop Switch: edges from output 0 only */
  int *pending1;             /* loop Switch: edges from output 1 (the body) */
  int *bmerge;               /* loop Switch: its backward Merge, waiting for the back edge; -1 */
  glist **grads;             /* per forward node: n_out lists, allocated on first use */
  dfx_emit e;
  const char *prefix;
  char scope[600];           /* e.scope points here */
  int *side;                 /* forward frame of each forward-side node; -2 gradient side */
  int side_cap;
  loopst **loops;            /* per forward static frame, created on first use */
  int n_frames;
  int cur_frame;             /* forward frame of the node being differentiated */
  int cur_live;              /* node whose liveness a pop inherits (-1: none) */
} walk;

/* ---- grad_while.c ---- */

/* Frame of a node on the forward side, or -2 for a gradient node. */
int dfx__walk_side(const walk *w, int id);
/* The loop state of forward frame f (creating the counter and backward
 * loop on first use); NULL after an error (in w->e). */
loopst *dfx__loop_get(walk *w, int f);
/* emit.h remap hook: what the backward frame of w->cur_frame reads for p. */
gp dfx__loop_remap(void *ud, gp p);
/* Gradients of the loop control nodes (grad.h contract). */
void dfx__grad_loop_exit(walk *w, int v, const gp *dy, gp *dx);
void dfx__grad_loop_switch1(walk *w, int v, const gp *dy, gp *dx);
void dfx__grad_loop_switch2(walk *w, int v, gp dy1);
void dfx__grad_loop_merge(walk *w, int v, const gp *dy, gp *dx);
void dfx__grad_loop_enter(walk *w, int v, const gp *dy, gp *dx);
/* Closes the back edge of every backward Merge whose Switch got no
 * gradient from the body (zeros then flow around). */
void dfx__grad_loop_finish(walk *w);
void dfx__walk_loops_free(walk *w);

#endif
