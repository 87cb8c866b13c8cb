/* step.h - per-run state that kernels can reach: owned resources and cancellation.
 * One dfx_step exists per dfx_session_run call. Resources handed to it
 * (TensorArrays, stacks) are freed, in reverse order, when the run ends;
 * those that outlive the run (lookup tables) live in the session's store,
 * which the step borrows (`store`, resmgr.h). */
#ifndef DFX_STEP_H
#define DFX_STEP_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "dfexec.h"

typedef struct dfx_step_res {
  void *obj;
  void (*free_fn)(void *obj);
} dfx_step_res;

struct dfx_step {
  uv_mutex_t mu;          /* guards res */
  dfx_step_res *res;
  int n_res, cap_res;
  int cancelled;          /* atomic: set on the first error, timeout or cancel */
  uint64_t t0_ns;         /* uv_hrtime when the run started */
  uint64_t deadline_ns;   /* uv_hrtime past which the run has timed out; 0: none */
  struct dfx_resmgr *store; /* the session's resource store (borrowed); NULL outside a session */
  /* Partitioned runs (rendezvous.h): where _Send and _Recv meet (borrowed;
   * NULL for a plain run, whose transfer kernels then fail), and the step id
   * that keeps concurrent runs apart. */
  struct dfx_rendezvous *rendezvous;
  int64_t step_id;
};

typedef struct dfx_step dfx_step;

dfx_code dfx__step_init(dfx_step *s);
/* Frees every owned resource and the mutex. */
void dfx__step_destroy(dfx_step *s);
static inline bool dfx__step_is_cancelled(const dfx_step *s) {
  return s && __atomic_load_n(&s->cancelled, __ATOMIC_RELAXED);
}
static inline void dfx__step_cancel(dfx_step *s) { __atomic_store_n(&s->cancelled, 1, __ATOMIC_RELAXED); }

#endif
