/* licm.c - the `licm` pass (loop-invariant code motion): work in a while
 * loop that computes the same value in every iteration moves in front of
 * the loop and enters it once, through a constant Enter (Grappler's
 * LoopInvariantNodeMotion, with deadness kept exact).
 *
 * Invariants of a loop frame F (tf-semantics §2.5):
 *  - the output of an Enter into F with is_constant (TF delivers its one
 *    value to every iteration), unless a run may feed that Enter;
 *  - a pure node of F (dfx__pass_pure), neither kept nor fed, with outputs
 *    and consumers, whose data inputs are all invariants of F and whose
 *    control inputs are invariants of F or *anchors*: nodes of F outside
 *    the invariants (not an Exit or NextIteration), typically the pivot
 *    Identity a body Const hangs off. A Const counts only when its control
 *    inputs are constant Enters or anchors (so its copy outside, below,
 *    never reads a node that stays inside).
 *
 * Why moving is exact. In an iteration a node runs once all its inputs
 * arrived, and is dead if any of them is dead (§2.4; Merge and
 * ControlTrigger are the exceptions).
 *  (1) An invariant without anchors reads only constant Enters, directly
 *      or through other invariants: it gets the same values with the same
 *      deadness in every iteration, including iteration 0 of a loop whose
 *      predicate is false at once (nothing gates it on the pivot). So it
 *      can run once in the parent frame P, on the Enters' own inputs (and
 *      their control inputs), and reach its consumers through one new
 *      constant Enter: every consumer sees the same value and deadness in
 *      every iteration, and a kernel that fails still fails in exactly the
 *      runs where the frame is entered. The one consumer this is not true
 *      for is a Merge, which treats a dead input from an Enter specially
 *      ("or X is an Enter"): a node feeding a Merge stays.
 *  (2) An anchored invariant is dead, or never runs, in the iterations
 *      where an anchor is: the pivot dies in the exiting iteration, a
 *      branch pivot in the untaken branch. Moved out, its value would be
 *      live in every iteration and revive a consumer with no other
 *      loop-variant input (NextIteration(c * W) would start one iteration
 *      too many). So the new Enter is followed by a *guard* in F,
 *      Identity(Enter, ^anchor...), which is dead and waits exactly when
 *      the anchors are: each consumer reads the guard and sees what it saw
 *      before, whatever its kind. The guard is a pure move, far cheaper
 *      than the work it replaces. What remains is that a moved anchored
 *      node runs where it did not: once, even when the loop runs zero
 *      iterations or the branch is never taken. It is therefore moved only
 *      if its kernel cannot fail (total_op: element-wise unary math, and
 *      element-wise binary arithmetic or comparison with a scalar constant
 *      operand, so broadcasting cannot fail, with a kernel for its dtypes).
 *      A Reshape or Transpose of a weight hung off the pivot stays, since
 *      outside it could fail a run that never enters the body, where TF
 *      does not fail. (Grappler moves them and makes the copy of an
 *      anchored Const hang off the parent loop's pivot, which changes
 *      deadness; TF leaves that optimizer off by default.)
 *
 * The rewrite. A moved node keeps its name and id; its inputs are remapped
 * to P: a constant Enter becomes the Enter's input (plus its control
 * inputs), an anchor is dropped (the guards carry it), an invariant Const
 * becomes a copy of it in P ("<name>/licm"; the original stays for
 * consumers left inside, and goes if none are left). Each output read
 * inside gets one Enter ("<name>/licm_enter", frame_name and
 * parallel_iterations of F, is_constant) and, if anchored, one guard
 * ("<name>/licm_guard"). Constant Enters and Consts left without consumers
 * go. A moved node must be worth it: moving only identities would just add
 * an Enter. A node with no input left in P (a Const hung off the pivot
 * only) moves only out of a top-level loop, where P is the root.
 *
 * Nested loops: one level per run. A node of an inner loop moves to the
 * enclosing loop's body; the manager's next round may move it further. An
 * inner node whose constant Enter reads a node that may itself move this
 * run waits for the next round, so one run never moves a chain twice.
 *
 * In the default pipeline, after constant folding (which already folds
 * what reads only constants; licm moves what reads placeholders, such as
 * MatMul(Enter(W), Enter(x)) with fed W and x). */
#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "pass.h"

#define MAX_ANCHORS 4
#define MAX_IO 64 /* inputs or outputs of a node that moves */

typedef struct licm {
  dfx_pass_ctx *c;
  dfx_graph *g;
  int n;               /* nodes analysed (those present at the start) */
  char *inv;           /* an invariant of its frame (see top) */
  char *moved;         /* an invariant that moves out (Consts are copied instead) */
  char *worth;         /* moving it saves work (not only identities) */
  int (*anc)[MAX_ANCHORS];
  unsigned char *n_anc;
  int *stack, *clone;  /* worklist; the copy of an invariant Const in P (-1: none yet) */
} licm;

static bool is_op(const dfx_node *n, const char *op) { return strcmp(n->op, op) == 0; }

/* Whether a run may feed node n or must keep it. */
static bool pinned(const licm *L, const dfx_node *n) {
  return dfx__pass_keeps(L->c, n->name) || dfx__pass_fed(L->c, n->name);
}

/* Whether node y is a constant Enter into frame f whose input a moved node
 * of f may read instead: not fed, and its input will not itself move this
 * run (nested loops: one level per run). `as_control`: the reader takes it
 * as a control input, which carries the input node's deadness rather than
 * its output's, so a Switch (which may leave an output unset) will not do. */
static bool const_enter(const licm *L, int y, int f, bool as_control) {
  const dfx_node *e = &L->g->nodes[y];
  if (e->ctrl != DFX_CTRL_ENTER || e->child_frame != f || e->n_in != 1 || !dfx__attr_bool(e, "is_constant", false))
    return false;
  if (pinned(L, e)) return false;
  int src = e->in[0].node;
  if (L->inv[src] && !is_op(&L->g->nodes[src], "Const")) return false;
  return !(as_control && L->g->nodes[src].ctrl == DFX_CTRL_SWITCH);
}

/* ---- total ops: kernels that cannot fail on inputs of their dtypes ---- */

static bool in_list(const char *op, const char *const *list) {
  for (int i = 0; list[i]; i++)
    if (strcmp(op, list[i]) == 0) return true;
  return false;
}

/* Whether data input k of n is a scalar constant (a Const, or a constant
 * Enter of one, that no run feeds). */
static bool scalar_const(const licm *L, const dfx_node *n, int k) {
  const dfx_node *p = &L->g->nodes[n->in[k].node];
  if (p->ctrl == DFX_CTRL_ENTER && p->n_in == 1) p = &L->g->nodes[p->in[0].node];
  if (!is_op(p, "Const") || dfx__pass_fed(L->c, p->name)) return false;
  const dfx_tensor *t = dfx__attr_tensor(p, "value");
  return t && dfx_tensor_ndims(t) == 0;
}

static bool total_op(const licm *L, const dfx_node *n) {
  static const char *const unary[] = {"Identity", "Snapshot", "StopGradient", "Neg", "Abs", "Sign", "Square",
                                      "Sqrt", "Rsqrt", "Exp", "Expm1", "Log", "Log1p", "Sigmoid", "Tanh", "Relu",
                                      "Relu6", "Elu", "Selu", "Softplus", "Softsign", "Sin", "Cos", "Floor",
                                      "Ceil", "Round", "Rint", "Erf", "ZerosLike", "OnesLike", "LogicalNot",
                                      "IsNan", "IsInf", "IsFinite", NULL};
  static const char *const binary[] = {"Add", "AddV2", "Sub", "Mul", "Maximum", "Minimum", "SquaredDifference",
                                       "LogicalAnd", "LogicalOr", "Greater", "GreaterEqual", "Less",
                                       "LessEqual", "Equal", "NotEqual", NULL};
  if (is_op(n, "Const")) return true;
  if (!L->c->reg || !dfx__registry_kernel_for(L->c->reg, n, NULL)) return false;
  if (n->n_in == 1) return in_list(n->op, unary);
  return n->n_in == 2 && in_list(n->op, binary) && (scalar_const(L, n, 0) || scalar_const(L, n, 1));
}

/* Moving these alone saves nothing (they only pass a tensor on). */
static bool identity_like(const dfx_node *n) {
  return is_op(n, "Identity") || is_op(n, "Snapshot") || is_op(n, "StopGradient");
}

/* ---- analysis ---- */

static bool add_anchor(licm *L, int i, int a) {
  for (int k = 0; k < L->n_anc[i]; k++)
    if (L->anc[i][k] == a) return true;
  if (L->n_anc[i] == MAX_ANCHORS) return false;
  L->anc[i][L->n_anc[i]++] = a;
  return true;
}

/* Whether node a may anchor an invariant of frame f (see top). */
static bool anchor_ok(const dfx_node *a, int f) {
  return a->frame == f && a->ctrl != DFX_CTRL_EXIT && a->ctrl != DFX_CTRL_NEXT_ITERATION;
}

/* Decides inv[i] and the anchors of node i; its producers are decided. */
static bool classify(licm *L, int i) {
  const dfx_node *n = &L->g->nodes[i];
  int f = n->frame;
  if (n->removed || f <= 0 || n->n_edges == 0 || n->n_out == 0 || n->n_out > MAX_IO || n->n_in + n->n_ctrl > MAX_IO ||
      pinned(L, n) || !dfx__pass_pure(L->c, n))
    return false;
  bool is_const = is_op(n, "Const"), has_input_in_p = false;
  L->n_anc[i] = 0;
  for (int k = 0; k < n->n_in; k++) {
    int y = n->in[k].node;
    if (const_enter(L, y, f, false)) {
      has_input_in_p = true;
    } else if (L->inv[y]) {
      has_input_in_p = true;
      for (int a = 0; a < L->n_anc[y]; a++)
        if (!add_anchor(L, i, L->anc[y][a])) return false;
    } else {
      return false;
    }
  }
  for (int k = n->n_in; k < n->n_in + n->n_ctrl; k++) {
    int y = n->in[k].node;
    if (const_enter(L, y, f, true)) {
      has_input_in_p = true;
    } else if (L->inv[y]) {
      if (is_const) return false;
      has_input_in_p = true;
      for (int a = 0; a < L->n_anc[y]; a++)
        if (!add_anchor(L, i, L->anc[y][a])) return false;
    } else if (!anchor_ok(&L->g->nodes[y], f) || !add_anchor(L, i, y)) {
      return false;
    }
  }
  /* With no input left in P the node would land in the root frame. */
  if (!has_input_in_p && L->g->frames[f].parent != 0) return false;
  return L->n_anc[i] == 0 || total_op(L, n);
}

/* Producers before consumers (a NextIteration's edge into its Merge is the
 * only back edge a final graph has). A new array of L->n ids, or NULL. */
static int *topo_order(const dfx_graph *g, int n) {
  int *order = dfx__malloc(sizeof(int) * ((size_t)n + 1)), *pending = dfx__calloc((size_t)n + 1, sizeof(int));
  if (!order || !pending) {
    dfx__free(order);
    dfx__free(pending);
    return NULL;
  }
  int head = 0, tail = 0;
  for (int i = 0; i < n; i++) {
    const dfx_node *x = &g->nodes[i];
    for (int k = 0; k < x->n_in + x->n_ctrl; k++)
      if (!(x->ctrl == DFX_CTRL_MERGE && g->nodes[x->in[k].node].ctrl == DFX_CTRL_NEXT_ITERATION)) pending[i]++;
    if (pending[i] == 0) order[tail++] = i;
  }
  while (head < tail) {
    const dfx_node *x = &g->nodes[order[head++]];
    for (int e = 0; e < x->n_edges; e++) {
      int d = x->edges[e].dst;
      if (x->ctrl == DFX_CTRL_NEXT_ITERATION && g->nodes[d].ctrl == DFX_CTRL_MERGE) continue; /* not counted */
      /* One decrement per edge: an input read twice has two edges. */
      if (pending[d] > 0 && --pending[d] == 0) order[tail++] = d;
    }
  }
  for (int i = 0; i < n; i++) /* anything a cycle hid (finalize rejects those) comes last */
    if (pending[i] > 0) order[tail++] = i;
  dfx__free(pending);
  return order;
}

/* Whether moved node m can go as decided: whatever it feeds that stays
 * inside is not an anchor-free Merge input, and there is something to gain. */
static bool move_ok(const licm *L, int m) {
  const dfx_node *n = &L->g->nodes[m];
  for (int e = 0; e < n->n_edges; e++) {
    const dfx_node *x = &L->g->nodes[n->edges[e].dst];
    if (L->moved[x->id]) continue;
    if (!L->worth[m]) return false;
    if (x->ctrl == DFX_CTRL_MERGE && L->n_anc[m] == 0) return false;
  }
  return true;
}

/* Keeps node m inside, and with it everything moved that reads it; their
 * moved producers are queued for another look. */
static void keep_inside(licm *L, int m, int *n_check, int *check) {
  int top = 0;
  L->stack[top++] = m;
  L->moved[m] = 0;
  while (top > 0) {
    const dfx_node *n = &L->g->nodes[L->stack[--top]];
    for (int k = 0; k < n->n_in + n->n_ctrl; k++)
      if (L->moved[n->in[k].node]) check[(*n_check)++] = n->in[k].node;
    for (int e = 0; e < n->n_edges; e++) {
      int d = n->edges[e].dst;
      if (L->moved[d]) {
        L->moved[d] = 0;
        L->stack[top++] = d;
      }
    }
  }
}

/* The invariants, and of them the nodes to move. Returns how many move. */
static int analyse(licm *L, const int *order) {
  dfx_graph *g = L->g;
  int n_moved = 0;
  for (int o = 0; o < L->n; o++) {
    int i = order[o];
    if (!(L->inv[i] = classify(L, i))) continue;
    const dfx_node *n = &g->nodes[i];
    L->worth[i] = !identity_like(n) && !is_op(n, "Const");
    for (int k = 0; k < n->n_in && !L->worth[i]; k++) L->worth[i] = L->worth[n->in[k].node];
    L->moved[i] = !is_op(n, "Const");
  }
  /* Each check can only keep more nodes inside, so this ends. A node is
   * queued at most once per edge it has plus once at the start. */
  int cap = L->n, n_check = 0;
  for (int i = 0; i < g->n_nodes; i++) cap += g->nodes[i].n_in + g->nodes[i].n_ctrl;
  int *check = dfx__malloc(sizeof(int) * ((size_t)cap + 1));
  if (!check) return -1;
  for (int i = 0; i < L->n; i++)
    if (L->moved[i]) check[n_check++] = i;
  while (n_check > 0) {
    int m = check[--n_check];
    if (L->moved[m] && !move_ok(L, m)) keep_inside(L, m, &n_check, check);
  }
  dfx__free(check);
  for (int i = 0; i < L->n; i++) n_moved += L->moved[i];
  return n_moved;
}

/* ---- the rewrite ---- */

static dfx_code oom(licm *L) { return dfx__status_set(L->c->st, DFX_ENOMEM, "out of memory"); }

/* A new node "<base><suffix>" (made unique) of op; its id, or -1. */
static int new_node(licm *L, int base, const char *suffix, const char *op) {
  char buf[512];
  snprintf(buf, sizeof buf, "%.400s%s", L->g->nodes[base].name, suffix);
  char *name = dfx__graph_unique_name(L->g, buf);
  int id = name ? dfx__graph_add_node(L->g, name, op, L->c->st) : -1;
  dfx__free(name);
  if (id >= 0 && dfx__graph_set_device(L->g, id, L->g->nodes[base].device, L->c->st) != DFX_OK) return -1;
  if (id >= 0) L->c->counts.added++;
  return id;
}

static bool has_ctrl(const dfx_node *n, int src) {
  for (int k = n->n_in; k < n->n_in + n->n_ctrl; k++)
    if (n->in[k].node == src) return true;
  return false;
}

static dfx_code add_ctrl(licm *L, int id, int src) {
  if (has_ctrl(&L->g->nodes[id], src)) return DFX_OK;
  return dfx__graph_add_input(L->g, id, src, -1, L->c->st);
}

static dfx_code add_enter_ctrls(licm *L, int id, int enter) {
  dfx_code rc = DFX_OK;
  const dfx_node *e = &L->g->nodes[enter];
  for (int k = e->n_in; k < e->n_in + e->n_ctrl && rc == DFX_OK; k++) rc = add_ctrl(L, id, L->g->nodes[enter].in[k].node);
  return rc;
}

/* The copy in P of invariant Const i (made on first use): its value, and
 * its control inputs from constant Enters mapped to theirs; anchors go. */
static int const_copy(licm *L, int i) {
  if (L->clone[i] >= 0) return L->clone[i];
  int id = new_node(L, i, "/licm", "Const");
  if (id < 0) return -1;
  for (int k = 0; k < L->g->nodes[i].n_attrs; k++)
    if (dfx__graph_set_attr(L->g, id, &L->g->nodes[i].attrs[k], L->c->st) != DFX_OK) return -1;
  int f = L->g->nodes[i].frame;
  for (int k = 0; k < L->g->nodes[i].n_ctrl; k++) {
    int y = L->g->nodes[i].in[L->g->nodes[i].n_in + k].node;
    if (!const_enter(L, y, f, true)) continue; /* an anchor */
    if (add_ctrl(L, id, L->g->nodes[y].in[0].node) != DFX_OK || add_enter_ctrls(L, id, y) != DFX_OK) return -1;
  }
  return L->clone[i] = id;
}

/* Rewires moved node m to read from P (see top). */
static dfx_code remap_inputs(licm *L, int m) {
  dfx_graph *g = L->g;
  int f = g->nodes[m].frame;
  int n_in = g->nodes[m].n_in, n_all = n_in + g->nodes[m].n_ctrl;
  int enters[MAX_IO], n_enters = 0;
  /* Backwards, so removing an anchor leaves the inputs still to visit in place. */
  for (int k = n_all - 1; k >= 0; k--) {
    int y = g->nodes[m].in[k].node;
    bool ctl = k >= n_in;
    if (L->moved[y]) continue;
    if (const_enter(L, y, f, ctl)) {
      dfx_input src = g->nodes[y].in[0];
      dfx__graph_set_input(g, m, k, src.node, ctl ? -1 : src.slot);
      if (g->nodes[y].n_ctrl > 0) enters[n_enters++] = y;
    } else if (L->inv[y]) { /* an invariant Const */
      int copy = const_copy(L, y);
      if (copy < 0) return oom(L);
      dfx__graph_set_input(g, m, k, copy, ctl ? -1 : 0);
    } else {
      dfx__graph_remove_input(g, m, k); /* an anchor: the guards keep it */
    }
  }
  /* The same control input may now appear twice: drop repeats. */
  for (int k = g->nodes[m].n_in + g->nodes[m].n_ctrl - 1; k > g->nodes[m].n_in; k--)
    for (int j = g->nodes[m].n_in; j < k; j++)
      if (g->nodes[m].in[j].node == g->nodes[m].in[k].node) {
        dfx__graph_remove_input(g, m, k);
        break;
      }
  for (int q = 0; q < n_enters; q++)
    if (add_enter_ctrls(L, m, enters[q]) != DFX_OK) return oom(L);
  L->c->counts.rewritten++;
  return DFX_OK;
}

/* The Enter (and guard, if m is anchored) through which output `slot` of
 * moved node m reaches frame f: the id consumers inside read, or -1. */
static int entry_for(licm *L, int m, int slot, int f) {
  dfx_graph *g = L->g;
  char suffix[48];
  snprintf(suffix, sizeof suffix, slot ? "/licm_enter_%d" : "/licm_enter", slot);
  int e = new_node(L, m, suffix, "Enter");
  if (e < 0) return -1;
  const char *frame = g->frames[f].name;
  dfx_attr attrs[4] = {
      {.name = "T", .kind = DFX_ATTR_TYPE, .v.type = g->nodes[m].out_types[slot]},
      {.name = "frame_name", .kind = DFX_ATTR_S, .v.s = {(char *)frame, strlen(frame)}},
      {.name = "is_constant", .kind = DFX_ATTR_B, .v.b = true},
      {.name = "parallel_iterations", .kind = DFX_ATTR_I, .v.i = g->frames[f].parallel_iterations},
  };
  for (int k = 0; k < 4; k++)
    if (dfx__graph_set_attr(g, e, &attrs[k], L->c->st) != DFX_OK) return -1;
  if (dfx__graph_add_input(g, e, m, slot, L->c->st) != DFX_OK) return -1;
  if (L->n_anc[m] == 0) return e;
  snprintf(suffix, sizeof suffix, slot ? "/licm_guard_%d" : "/licm_guard", slot);
  int guard = new_node(L, m, suffix, "Identity");
  if (guard < 0) return -1;
  dfx_attr t = {.name = "T", .kind = DFX_ATTR_TYPE, .v.type = g->nodes[m].out_types[slot]};
  if (dfx__graph_set_attr(g, guard, &t, L->c->st) != DFX_OK || dfx__graph_add_input(g, guard, e, 0, L->c->st) != DFX_OK)
    return -1;
  for (int a = 0; a < L->n_anc[m]; a++)
    if (dfx__graph_add_input(g, guard, L->anc[m][a], -1, L->c->st) != DFX_OK) return -1;
  return guard;
}

/* Points every consumer of moved node m that stays inside at its entry. */
static dfx_code connect_inside(licm *L, int m) {
  dfx_graph *g = L->g;
  int f = g->nodes[m].frame, n_out = g->nodes[m].n_out;
  int entry[MAX_IO];
  for (int s = 0; s < n_out; s++) entry[s] = -1;
  for (int e = 0; e < g->nodes[m].n_edges; e++) {
    dfx_edge ed = g->nodes[m].edges[e];
    if (L->moved[ed.dst]) continue;
    int s = ed.dst_slot < 0 ? 0 : ed.src_slot;
    if (entry[s] < 0 && (entry[s] = entry_for(L, m, s, f)) < 0) return oom(L);
    dfx_node *x = &g->nodes[ed.dst];
    if (ed.dst_slot >= 0) {
      dfx__graph_set_input(g, ed.dst, ed.dst_slot, entry[s], 0);
    } else {
      for (int k = x->n_in; k < x->n_in + x->n_ctrl; k++)
        if (x->in[k].node == m) dfx__graph_set_input(g, ed.dst, k, entry[s], -1);
    }
    L->c->counts.rewritten++;
  }
  return DFX_OK;
}

/* Removes the invariant Consts and constant Enters this run left without
 * consumers (and then, in turn, those their removal leaves without). */
static dfx_code remove_orphans(licm *L) {
  dfx_graph *g = L->g;
  int *uses = dfx__calloc((size_t)g->n_nodes + 1, sizeof(int));
  if (!uses) return oom(L);
  for (int i = 0; i < g->n_nodes; i++)
    for (int k = 0; !g->nodes[i].removed && k < g->nodes[i].n_in + g->nodes[i].n_ctrl; k++)
      uses[g->nodes[i].in[k].node]++;
  int top = 0;
  for (int i = 0; i < L->n; i++) L->stack[top++] = i;
  while (top > 0) {
    int i = L->stack[--top];
    dfx_node *n = &g->nodes[i];
    bool orphan_kind = (L->inv[i] && is_op(n, "Const")) ||
                       (n->ctrl == DFX_CTRL_ENTER && dfx__attr_bool(n, "is_constant", false));
    if (n->removed || uses[i] > 0 || n->n_edges == 0 || !orphan_kind || pinned(L, n)) continue;
    dfx__graph_remove_node(g, i);
    L->c->counts.removed++;
    for (int k = 0; k < n->n_in + n->n_ctrl; k++) {
      int y = n->in[k].node;
      if (--uses[y] == 0 && y < L->n) L->stack[top++] = y;
    }
  }
  dfx__free(uses);
  return DFX_OK;
}

static dfx_code rewrite(licm *L) {
  dfx_code rc = DFX_OK;
  /* Consumers first, from the edges finalize built: remapping a moved
   * node does not touch the edges, and new nodes have ids beyond L->n. */
  for (int m = 0; m < L->n && rc == DFX_OK; m++)
    if (L->moved[m]) rc = connect_inside(L, m);
  for (int m = 0; m < L->n && rc == DFX_OK; m++)
    if (L->moved[m]) rc = remap_inputs(L, m);
  return rc == DFX_OK ? remove_orphans(L) : rc;
}

static void licm_free(licm *L) {
  dfx__free(L->inv);
  dfx__free(L->moved);
  dfx__free(L->worth);
  dfx__free(L->anc);
  dfx__free(L->n_anc);
  dfx__free(L->stack);
  dfx__free(L->clone);
}

static dfx_code licm_run(dfx_pass_ctx *c) {
  dfx_graph *g = c->g;
  if (g->n_frames <= 1) return DFX_OK; /* no loops */
  licm L = {.c = c, .g = g, .n = g->n_nodes};
  size_t n1 = (size_t)g->n_nodes + 1;
  L.inv = dfx__calloc(n1, 1);
  L.moved = dfx__calloc(n1, 1);
  L.worth = dfx__calloc(n1, 1);
  L.anc = dfx__calloc(n1, sizeof *L.anc);
  L.n_anc = dfx__calloc(n1, 1);
  L.stack = dfx__malloc(sizeof(int) * n1);
  L.clone = dfx__malloc(sizeof(int) * n1);
  int *order = topo_order(g, L.n);
  dfx_code rc = DFX_OK;
  if (!L.inv || !L.moved || !L.worth || !L.anc || !L.n_anc || !L.stack || !L.clone || !order) {
    rc = oom(&L);
    goto done;
  }
  for (int i = 0; i < L.n; i++) L.clone[i] = -1;
  int n_moved = analyse(&L, order);
  if (n_moved < 0) rc = oom(&L);
  else if (n_moved > 0) rc = rewrite(&L);
done:
  dfx__free(order);
  licm_free(&L);
  return rc;
}

const dfx_pass dfx__pass_licm = {
    .name = "licm",
    .purpose = "move loop-invariant work out of while loops, entering it once through a constant Enter",
    .run = licm_run,
    .in_default = true,
};
