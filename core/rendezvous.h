/* rendezvous.h - where a _Send meets its _Recv (TensorFlow's Rendezvous).
 *
 * A partitioned graph replaces every edge between two tasks by a _Send on
 * the producer's task and a _Recv on the consumer's (dist/partition.c). The
 * two meet here under a key that names the edge and the loop iteration:
 *
 *     send_device;incarnation;recv_device;tensor_name;frame_id:iter
 *
 * (TF's CreateKey: frame_id is a hash of the frame instance, the chain of
 * frame names and parent iterations, so that the same edge in iteration 3 of
 * one loop and iteration 3 of another never meet). Runs are kept apart by a
 * step id: concurrent steps of one partitioned session use distinct ids, and
 * every task of one step uses the same id.
 *
 * The interface lives in core/ because the _Send/_Recv kernels call it;
 * implementations live in dist/ (in-process: local_rdv.c, MPI: mpi_rdv.c).
 * A dead tensor travels like a live one, with is_dead set and no value: that
 * is what makes a cond whose branch runs on another task work. */
#ifndef DFX_RENDEZVOUS_H
#define DFX_RENDEZVOUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dfexec.h"
#include "status.h"
#include "tensor.h"

typedef struct dfx_rendezvous dfx_rendezvous;

/* A receive's completion, called exactly once from any thread (possibly
 * inside the recv call itself). `value` is a new reference the callee
 * takes (NULL when dead or failed); `msg` is borrowed for the call. */
typedef void (*dfx_rdv_done_fn)(void *ud, dfx_code code, const char *msg, dfx_tensor *value, bool is_dead);

typedef struct dfx_rendezvous_vt {
  /* Delivers value (borrowed: the rendezvous takes its own reference or
   * copies it) to task dst_task under key; never blocks. Fails only when
   * the step was aborted or memory runs out. */
  dfx_code (*send)(dfx_rendezvous *r, int64_t step, int dst_task, const char *key, dfx_tensor *value, bool is_dead,
                   dfx_status *st);
  /* Asks for the value under key from task src_task; `done` runs when it
   * is there, or when the step is aborted. */
  void (*recv)(dfx_rendezvous *r, int64_t step, int src_task, const char *key, dfx_rdv_done_fn done, void *ud);
  /* Fails every pending and later receive of `step` with (code, msg); the
   * first abort's message is kept. Safe from any thread. */
  void (*abort)(dfx_rendezvous *r, int64_t step, dfx_code code, const char *msg);
} dfx_rendezvous_vt;

struct dfx_rendezvous {
  const dfx_rendezvous_vt *vt;
};

/* The frame-instance id of a key: FNV-1a over (parent id, parent
 * iteration, frame name). The root frame's id is 0. */
static inline uint64_t dfx__rdv_frame_id(uint64_t parent_id, int64_t parent_iter, const char *name) {
  uint64_t h = 1469598103934665603ull ^ parent_id;
  for (int i = 0; i < 8; i++) {
    h ^= (uint64_t)(parent_iter >> (8 * i)) & 0xff;
    h *= 1099511628211ull;
  }
  for (const char *p = name; *p; p++) {
    h ^= (unsigned char)*p;
    h *= 1099511628211ull;
  }
  return h ? h : 1;
}

#endif
