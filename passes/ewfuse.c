/* ewfuse.c - the `ewfuse` pass: a tree of elementwise float ops whose
 * intermediate results nobody else reads becomes one _FusedElementwise
 * node (kernels/fused/ew_fused.c), which computes it in one pass over
 * memory instead of writing and re-reading a tensor per op:
 *
 *   y = Tanh(x * a + b) * c    ->   y = _FusedElementwise(x, a, b, c)
 *                                       ops [Mul, AddV2, Tanh, Mul]
 *
 * The fused node takes the name (and id) of the tree's root, so fetching
 * it keeps working, reads every input from outside the tree, and takes the
 * control inputs of every node it replaces: it waits for the same things
 * and, as any non-control op, is dead when any of them is, exactly when
 * the root was (a dead tensor anywhere in the tree reaches the root). Its
 * kernel applies the unfused kernels' formulas in the same type, so the
 * output has the same bits.
 *
 * A node joins its consumer's tree when it is an op the kernel knows
 * (fusable[] below, the same list as the kernel's), T is float or double
 * as the consumer's, static shape inference (shapes.h) gives its output
 * the consumer's shape (a known rank; dims known or not, the same ones),
 * and it is the sole consumer's only input from it
 * (dfx__rewrite_sole_consumer: not kept, not fed, one data edge), in the
 * same frame on the same device. Every input from outside must have that
 * shape too, or be a scalar (rank 0). The shapes decide speed, not
 * correctness: the kernel's fast path wants its inputs of one shape or
 * scalars, and a run where unknown dims turn out to broadcast (a batch of
 * 1 meeting one of n) takes its broadcasting path, with the unfused
 * kernels' results and errors. Trees of one node stay as they are.
 *
 * Not in the default pipeline: _FusedElementwise is dfexec's own op, so a
 * graph `dfexec optimize` wrote with it would not load in TensorFlow; and
 * its gain is not established: bench/ case ewchain (1M floats) gave the
 * fused node 1.6x over the four kernels in one run and the same time
 * within the noise in three others (all measured at load ~20 on 2 cores;
 * the chain is compute-bound at -O2, so the memory traffic it saves
 * matters less), and the corpus' largest graphs and the models ran within
 * the noise (lstm_mnist: 413 -> 188 nodes). Measure on a quiet machine
 * before making it default. Ask for it by naming it in a pass list
 * (--optimize ...,remap,ewfuse). */
#include <string.h>

#include "alloc.h"
#include "rewrite.h"
#include "shapes.h"

/* The ops _FusedElementwise evaluates, with their number of data inputs. */
static const struct {
  const char *op;
  int arity;
} fusable[] = {
    {"Add", 2},        {"AddV2", 2},    {"Sub", 2},      {"Mul", 2},        {"RealDiv", 2},
    {"Div", 2},        {"Maximum", 2},  {"Minimum", 2},  {"SquaredDifference", 2},
    {"Neg", 1},        {"Abs", 1},      {"Square", 1},   {"Reciprocal", 1}, {"Inv", 1},
    {"Sqrt", 1},       {"Rsqrt", 1},    {"Exp", 1},      {"Expm1", 1},      {"Log", 1},
    {"Log1p", 1},      {"Tanh", 1},     {"Sigmoid", 1},  {"Relu", 1},       {"Relu6", 1},
    {"Elu", 1},        {"Selu", 1},     {"Softplus", 1}, {"Softsign", 1},
};

static int arity(const dfx_node *n) {
  for (size_t i = 0; i < sizeof fusable / sizeof fusable[0]; i++)
    if (strcmp(n->op, fusable[i].op) == 0) return fusable[i].arity;
  return 0;
}

typedef struct ewf_ctx {
  dfx_pass_ctx *c;
  const dfx_shapes *s;
  bool *cand;  /* per node: may be part of a tree */
  int *into;   /* per node: the consumer whose tree it joins, or -1 */
} ewf_ctx;

static const dfx_pshape *out_shape(const ewf_ctx *e, dfx_input in) {
  const dfx_tinfo *t = dfx__shapes_output(e->s, in.node, in.slot);
  return t ? &t->shape : NULL;
}

/* Whether node i could be part of a tree (see top). */
static bool candidate(const ewf_ctx *e, int i) {
  const dfx_pass_ctx *c = e->c;
  const dfx_node *n = &c->g->nodes[i];
  int a = arity(n);
  if (n->removed || a == 0 || n->n_in != a || n->n_out != 1 || dfx__pass_fed(c, n->name)) return false;
  dfx_dtype t = dfx__attr_type(n, "T", DFX_INVALID);
  if ((t != DFX_F32 && t != DFX_F64) || n->out_types[0] != t) return false;
  const dfx_pshape *s = out_shape(e, (dfx_input){i, 0});
  if (!s || s->rank < 0) return false;
  for (int k = 0; k < a; k++) {
    const dfx_pshape *x = out_shape(e, n->in[k]);
    if (!x || !(x->rank == 0 || dfx__pshape_equal(x, s))) return false;
  }
  return true;
}

/* The consumer whose tree candidate i joins, or -1. */
static int joins(const ewf_ctx *e, int i) {
  int slot, j = dfx__rewrite_sole_consumer(e->c, i, &slot);
  if (j < 0 || !e->cand[j]) return -1;
  const dfx_node *n = &e->c->g->nodes[i], *m = &e->c->g->nodes[j];
  if (!dfx__rewrite_same_place(n, m) || n->out_types[0] != m->out_types[0]) return -1;
  if (!dfx__pshape_equal(out_shape(e, (dfx_input){i, 0}), out_shape(e, (dfx_input){j, 0}))) return -1;
  return j;
}

/* One tree as the kernel's program: steps in post-order (children first),
 * the inputs from outside (each (node, slot) once) and the operands. */
typedef struct program {
  int n_steps, cap_steps;
  int *steps;       /* node ids; the last is the root */
  int64_t *refs;    /* 2 per step: < n_ext an input, else n_ext + step (fixed up at the end) */
  int n_ext, cap_ext;
  dfx_input *ext;
} program;

static void program_free(program *p) {
  dfx__free(p->steps);
  dfx__free(p->refs);
  dfx__free(p->ext);
  memset(p, 0, sizeof *p);
}

/* Encoded while building: an input is -2 - index, a step its index. */
static int64_t ext_ref(program *p, dfx_input in) {
  for (int k = 0; k < p->n_ext; k++)
    if (p->ext[k].node == in.node && p->ext[k].slot == in.slot) return -2 - k;
  if (p->n_ext == p->cap_ext) {
    int cap = p->cap_ext ? 2 * p->cap_ext : 8;
    dfx_input *v = dfx__realloc(p->ext, sizeof *v * (size_t)cap);
    if (!v) return INT64_MIN;
    p->ext = v;
    p->cap_ext = cap;
  }
  p->ext[p->n_ext] = in;
  return -2 - p->n_ext++;
}

/* Appends step i (its operands in r) to p; its index, or -1 (ENOMEM). */
static int emit(program *p, int i, const int64_t *r) {
  if (p->n_steps == p->cap_steps) {
    int cap = p->cap_steps ? 2 * p->cap_steps : 8;
    int *s = dfx__realloc(p->steps, sizeof *s * (size_t)cap);
    if (s) p->steps = s;
    int64_t *rf = s ? dfx__realloc(p->refs, sizeof *rf * 2 * (size_t)cap) : NULL;
    if (!rf) return -1;
    p->refs = rf;
    p->cap_steps = cap;
  }
  p->steps[p->n_steps] = i;
  p->refs[2 * p->n_steps] = r[0];
  p->refs[2 * p->n_steps + 1] = r[1];
  return p->n_steps++;
}

/* A node being visited: the next input to look at and its operands so far. */
typedef struct visit {
  int node, k;
  int64_t r[2];
} visit;

/* Appends the tree under root to p in post-order, with an explicit stack
 * (`stack` holds a visit per graph node): a chain may be thousands of
 * nodes long. False when out of memory. */
static bool build(const ewf_ctx *e, program *p, int root, visit *stack) {
  int top = 0;
  stack[0] = (visit){root, 0, {-1, -1}};
  while (top >= 0) {
    visit *v = &stack[top];
    const dfx_node *n = &e->c->g->nodes[v->node];
    if (v->k < n->n_in) {
      dfx_input in = n->in[v->k];
      if (in.slot == 0 && e->into[in.node] == v->node) {
        stack[++top] = (visit){in.node, 0, {-1, -1}}; /* its step fills r[k] when done */
        continue;
      }
      if ((v->r[v->k] = ext_ref(p, in)) == INT64_MIN) return false;
      v->k++;
      continue;
    }
    int s = emit(p, v->node, v->r);
    if (s < 0) return false;
    if (--top >= 0) stack[top].r[stack[top].k++] = s;
  }
  return true;
}

/* Rebuilds the root as the fused node and removes the other steps. */
static dfx_code fuse(ewf_ctx *e, program *p) {
  dfx_pass_ctx *c = e->c;
  dfx_graph *g = c->g;
  const int root = p->steps[p->n_steps - 1];
  const dfx_dtype t = g->nodes[root].out_types[0];
  dfx_rewrite_ids ctrl = {0};
  dfx_str *ops = dfx__calloc((size_t)p->n_steps, sizeof *ops);
  dfx_code rc = ops ? DFX_OK : DFX_ENOMEM;
  for (int k = 0; k < p->n_steps && rc == DFX_OK; k++) {
    rc = dfx__rewrite_ids_add_ctrl(&ctrl, g, p->steps[k]);
    /* The op names are static strings of fusable[]: the root's own goes below. */
    for (size_t f = 0; f < sizeof fusable / sizeof fusable[0]; f++)
      if (!strcmp(g->nodes[p->steps[k]].op, fusable[f].op))
        ops[k] = (dfx_str){(char *)fusable[f].op, strlen(fusable[f].op)};
    for (int j = 0; j < 2; j++) {
      int64_t *r = &p->refs[2 * k + j];
      if (*r == -1) continue; /* a unary step's second operand */
      *r = *r <= -2 ? -2 - *r : p->n_ext + *r;
    }
  }
  if (rc == DFX_OK) rc = dfx__rewrite_reset(g, root, "_FusedElementwise", c->st);
  for (int k = 0; k < p->n_ext && rc == DFX_OK; k++) rc = dfx__graph_add_input(g, root, p->ext[k].node, p->ext[k].slot, c->st);
  for (int k = 0; k < ctrl.n && rc == DFX_OK; k++) rc = dfx__graph_add_input(g, root, ctrl.ids[k], -1, c->st);
  if (rc == DFX_OK) rc = dfx__rewrite_set_type(g, root, "T", t, c->st);
  if (rc == DFX_OK) rc = dfx__rewrite_set_int(g, root, "N", p->n_ext, c->st);
  if (rc == DFX_OK) {
    dfx_attr a = {.name = "ops", .kind = DFX_ATTR_LIST, .v.list = {.kind = DFX_ATTR_S, .n = p->n_steps}};
    a.v.list.v.s = ops;
    rc = dfx__graph_set_attr(g, root, &a, c->st);
  }
  if (rc == DFX_OK) {
    dfx_attr a = {.name = "operands", .kind = DFX_ATTR_LIST, .v.list = {.kind = DFX_ATTR_I, .n = 2 * p->n_steps}};
    a.v.list.v.i = p->refs;
    rc = dfx__graph_set_attr(g, root, &a, c->st);
  }
  if (rc == DFX_OK) {
    for (int k = 0; k + 1 < p->n_steps; k++) dfx__graph_remove_node(g, p->steps[k]);
    c->counts.removed += p->n_steps - 1;
    c->counts.rewritten++;
  }
  dfx__free(ops);
  dfx__rewrite_ids_free(&ctrl);
  return rc;
}

static dfx_code ewfuse_run(dfx_pass_ctx *c) {
  /* Without a registry the graph may be meant for TensorFlow, which has no
   * _FusedElementwise; with one, it must have the kernel. */
  if (!c->reg || !(dfx__registry_kernel_types(c->reg, "_FusedElementwise", "T") >> DFX_F32 & 1)) return DFX_OK;
  const int n = c->g->n_nodes; /* what this run adds needs no visit */
  dfx_shapes_opts o = {.fed = (const char *const *)c->fed, .n_fed = c->n_fed};
  dfx_shapes *s = NULL;
  ewf_ctx e = {.c = c};
  visit *stack = NULL;
  dfx_code rc = dfx__shapes_infer(c->g, &o, &s, c->st);
  e.s = s;
  if (rc == DFX_OK) {
    e.cand = dfx__calloc((size_t)n + 1, sizeof *e.cand);
    e.into = dfx__malloc(sizeof *e.into * ((size_t)n + 1));
    stack = dfx__malloc(sizeof *stack * ((size_t)n + 1));
    if (!e.cand || !e.into || !stack) rc = DFX_ENOMEM;
  }
  /* Every tree is decided before any edit: edits change edges. */
  for (int i = 0; i < n && rc == DFX_OK; i++) e.cand[i] = candidate(&e, i);
  for (int i = 0; i < n && rc == DFX_OK; i++) e.into[i] = e.cand[i] ? joins(&e, i) : -1;
  for (int i = 0; i < n && rc == DFX_OK; i++) {
    if (!e.cand[i] || e.into[i] >= 0) continue; /* not a root */
    program p = {0};
    if (!build(&e, &p, i, stack)) rc = DFX_ENOMEM;
    else if (p.n_steps > 1) rc = fuse(&e, &p);
    program_free(&p);
  }
  dfx__free(e.cand);
  dfx__free(e.into);
  dfx__free(stack);
  dfx__shapes_free(s);
  return rc == DFX_ENOMEM ? dfx__status_set(c->st, DFX_ENOMEM, "out of memory") : rc;
}

const dfx_pass dfx__pass_ewfuse = {
    .name = "ewfuse",
    .purpose = "fuse trees of same-shape elementwise float ops into one _FusedElementwise pass over memory",
    .run = ewfuse_run,
    .in_default = false,
};
