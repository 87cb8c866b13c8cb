/* dist.h - partitioned execution: where nodes run (placement.c), one graph
 * per task with _Send/_Recv between them (partition.c), and the in-process
 * rendezvous that connects partitions run as threads of one process
 * (local_rdv.c). The MPI transport (mpi_rdv.c) is built when MPI is found.
 *
 * Tasks are numbered 0..n_tasks-1 and named like TensorFlow's devices,
 * "/job:worker/replica:0/task:K/device:CPU:0". Only the task index of a
 * `device` field matters: job, replica and device type are accepted and
 * ignored (dfexec has one job of CPU tasks). */
#ifndef DFX_DIST_H
#define DFX_DIST_H

#include <stdbool.h>
#include <stddef.h>

#include "graph.h"
#include "rendezvous.h"

/* The canonical device name of task k, written into buf. */
const char *dfx__dist_device_name(int task, char *buf, size_t n);
/* The task a device string names: *task = K for "/job:worker/task:K...",
 * "/task:K", "/replica:0/task:K/device:CPU:0"; -1 when it names none ("",
 * "/device:CPU:0", "/cpu:0"). DFX_EINVAL for a string that is not a device
 * name, with the reason in st. */
dfx_code dfx__dist_device_task(const char *device, int *task, dfx_status *st);

/* ---- placement.c ----
 * Places every node of the final graph g on one of n_tasks tasks (task[i]
 * per node id). The rule, in order:
 *   1. A node's `device` names its task; a task >= n_tasks fails here,
 *      naming the node and its device.
 *   2. Nodes that must share a task are grouped: `_class` colocation
 *      ("loc:@other"), and both ends of an edge carrying a resource handle
 *      or a reference (a variable and the ops that take its ref). A group
 *      whose nodes ask for two different tasks fails, naming both.
 *   3. A group no node of which names a task goes where its first input's
 *      producer went (data inputs first, then control inputs), in
 *      topological order; a node without inputs goes to task 0.
 *   4. TensorFlow's control-flow colocation (graph_partition.cc,
 *      OptimizeControlFlowColocation) then moves a Switch to its data
 *      input's task, an Exit to its input's task, and an Enter or a
 *      NextIteration to its first data consumer's task, so every loop
 *      variable's Enter/Merge/Switch/NextIteration/Exit stays together and
 *      a partition never waits on a NextIteration from another task.
 * `random_seed` != 0 ignores rules 1 and 3 and places each group at random
 * (a test device: any placement must compute the same values). */
dfx_code dfx__dist_place(const dfx_graph *g, int n_tasks, unsigned random_seed, int *task, dfx_status *st);

/* ---- partition.c ----
 * Splits the final graph g, placed by task[], into n_tasks new final graphs
 * parts[k] (TensorFlow's Partition, graph_partition.cc):
 *   - Every data edge between two tasks becomes a _Send on the producer's
 *     task and a _Recv on the consumer's, one pair per (tensor, receiving
 *     task), with TF's attrs (tensor_name "edge_<id>_<producer>",
 *     send_device, send_device_incarnation, recv_device, client_terminated).
 *   - A control edge between two tasks becomes a dummy Const on the
 *     producer's task (a control input from the producer), sent like data;
 *     the consumer takes a control input from the _Recv.
 *   - Every loop frame present on several tasks gets, on each task, a
 *     control loop (AddControlLoop: Enter, Merge, Switch, NextIteration of a
 *     dummy value) driven by the frame's LoopCond, received from the task
 *     that computes it; nested frames stack their control loops (the inner
 *     Enter reads the outer Merge). Every _Recv inside a frame takes a
 *     control input from its task's control-loop Merge, so it runs once per
 *     iteration of that frame instance. Unlike TF, a control loop is added
 *     on every task the frame is present on (not only tasks with an incoming
 *     edge): a task whose frame nodes read only loop invariants still needs
 *     the frame's iterations.
 * A frame present on several tasks without a LoopCond fails (DFX_EINVAL).
 * On failure every parts[k] is NULL. `incarnation` goes into
 * send_device_incarnation (and so into every rendezvous key). */
dfx_code dfx__dist_partition(const dfx_graph *g, const int *task, int n_tasks, int64_t incarnation, dfx_graph **parts,
                             dfx_status *st);

/* A 64-bit hash of a graph's nodes (names, ops, inputs, devices, attrs):
 * what ranks compare at start-up to check that they run the same graph. */
uint64_t dfx__dist_graph_hash(const dfx_graph *g);

/* ---- prepare.c ----
 * A new final copy of g for one run signature: pruned to what the fetches
 * and targets need, with each fed node that has inputs turned into a
 * Placeholder of its dtype (names and devices kept). Errors name unknown
 * ports. */
dfx_code dfx__dist_prepare(const dfx_graph *g, const dfx_port *feeds, int n_feeds, const dfx_port *fetches,
                           int n_fetches, const char *const *targets, int n_targets, dfx_graph **out,
                           dfx_status *st);

/* ---- local_rdv.c: the in-process rendezvous ---- */
/* A new rendezvous for partitions run as threads of one process, or NULL
 * when out of memory. Values wait in a table until their receive comes, or
 * receives wait for their value; both are keyed by (step, key). */
dfx_rendezvous *dfx__local_rdv_new(void);
void dfx__local_rdv_free(dfx_rendezvous *r);
/* Drops whatever step left behind (values nobody received); call when
 * every task of the step has finished. */
void dfx__local_rdv_end_step(dfx_rendezvous *r, int64_t step);
/* The first abort of step (code and message), or DFX_OK when none. */
dfx_code dfx__local_rdv_abort_status(dfx_rendezvous *r, int64_t step, dfx_status *st);

#endif
