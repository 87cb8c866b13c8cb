/* lower_cond.c - If/StatelessIf and Case/StatelessCase to Switch/Merge
 * conds (TensorFlow's LowerIfOp / LowerCaseOp). For If, the predicate
 * switches every input (Switch: output 0 false, 1 true), so branch b reads
 * output b and else_branch is branch 0; Case does the same with _SwitchN on
 * branch_index, whose out-of-range values select the last branch, as Case
 * runs its default. Each branch is inlined waiting on a pivot, Identity of
 * the predicate's own switch on that side: a branch not taken is dead from
 * its first node, constants included. Output j is Merge of the branches'
 * output j. When a branch has control outputs (or the op has no outputs), a
 * Merge of per-branch "done" Identities says which branch finished, and the
 * op's node (an IdentityN or NoOp of the same name) waits on it. */
#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "lower.h"

#define MAX_BRANCHES 256

static dfx_code code(dfx_lower_ctx *lc) { return lc->st && lc->st->code ? lc->st->code : DFX_ENOMEM; }

/* A node of op with one data input (src) and T = t. */
static int add1(dfx_lower_ctx *lc, const char *name, const char *op, dfx_graph_port src, dfx_dtype t, int depth) {
  int id = dfx__lower_add(lc, name, op, depth);
  if (id < 0) return -1;
  if (dfx__lower_attr_type(lc, id, "T", t) != DFX_OK ||
      dfx__graph_add_input(lc->g, id, src.node, src.slot, lc->st) != DFX_OK)
    return -1;
  return id;
}

/* Switch (n == 2) or _SwitchN of data on pred. */
static int add_switch(dfx_lower_ctx *lc, const char *name, dfx_graph_port data, dfx_dtype t, dfx_graph_port pred,
                      int n, const int *ctrl, int n_ctrl, int depth) {
  int id = add1(lc, name, n == 2 ? "Switch" : "_SwitchN", data, t, depth);
  if (id < 0) return -1;
  if (dfx__graph_add_input(lc->g, id, pred.node, pred.slot, lc->st) != DFX_OK) return -1;
  if (n != 2 && dfx__lower_attr_int(lc, id, "num_outs", n) != DFX_OK) return -1;
  for (int k = 0; k < n_ctrl; k++)
    if (dfx__graph_add_input(lc->g, id, ctrl[k], -1, lc->st) != DFX_OK) return -1;
  return id;
}

static int add_merge(dfx_lower_ctx *lc, const char *name, const dfx_graph_port *ins, int n, dfx_dtype t, int depth) {
  int id = dfx__lower_add(lc, name, "Merge", depth);
  if (id < 0) return -1;
  if (dfx__lower_attr_type(lc, id, "T", t) != DFX_OK || dfx__lower_attr_int(lc, id, "N", n) != DFX_OK) return -1;
  for (int k = 0; k < n; k++)
    if (dfx__graph_add_input(lc->g, id, ins[k].node, ins[k].slot, lc->st) != DFX_OK) return -1;
  return id;
}

typedef struct cond_state {
  int n_br, n_in, n_out, n_ctrl;
  const dfx_function *fns[MAX_BRANCHES];
  dfx_dtype *tin, *tout;
  dfx_graph_port *in;        /* the op's inputs after the predicate */
  int *ctrl;                 /* its control inputs */
  int *switches;             /* per input */
  int pivots[MAX_BRANCHES];
  dfx_inline_result res[MAX_BRANCHES];
  dfx_graph_port *merge_in;  /* n_br */
  dfx_graph_port *outs;      /* per output: its Merge */
} cond_state;

static dfx_code branches(dfx_lower_ctx *lc, int id, cond_state *s, bool is_if) {
  const dfx_node *n = &lc->g->nodes[id];
  dfx_code c;
  if (is_if) {
    s->n_br = 2;
    if ((c = dfx__lower_func(lc, id, "else_branch", &s->fns[0])) != DFX_OK ||
        (c = dfx__lower_func(lc, id, "then_branch", &s->fns[1])) != DFX_OK)
      return c;
    return DFX_OK;
  }
  const dfx_attr_list *l = dfx__attr_list(n, "branches");
  if (!l || l->n < 1 || l->kind != DFX_ATTR_FUNC)
    return dfx__status_set(lc->st, DFX_EINVAL, "Node '%s' (%s): needs a non-empty 'branches' list", n->name, n->op);
  if (l->n > MAX_BRANCHES)
    return dfx__status_set(lc->st, DFX_ELIMIT, "Node '%s' (%s): more than %d branches", n->name, n->op, MAX_BRANCHES);
  s->n_br = l->n;
  for (int b = 0; b < l->n; b++)
    if (!(s->fns[b] = dfx__fn_lib_find(lc->lib, l->v.func[b])))
      return dfx__status_set(lc->st, DFX_EINVAL, "Node '%s' (%s): branch '%s' is not in the graph's function library",
                             n->name, n->op, l->v.func[b]);
  return DFX_OK;
}

static dfx_code lower(dfx_lower_ctx *lc, int id, cond_state *s) {
  dfx_graph *g = lc->g;
  const dfx_node *n = &g->nodes[id];
  bool is_if = strstr(n->op, "If") != NULL;
  char name[600], what[400];
  const char *nm = n->name; /* the string outlives array moves */
  int depth = lc->depth[id];
  dfx_code c;
  if ((c = branches(lc, id, s, is_if)) != DFX_OK) return c;
  if ((c = dfx__lower_types(lc, id, "Tin", &s->tin, &s->n_in)) != DFX_OK ||
      (c = dfx__lower_types(lc, id, "Tout", &s->tout, &s->n_out)) != DFX_OK)
    return c;
  n = &g->nodes[id];
  if (n->n_in != s->n_in + 1)
    return dfx__status_set(lc->st, DFX_EINVAL, "Node '%s' (%s): Tin lists %d types for %d inputs", nm, n->op, s->n_in,
                           n->n_in - 1);
  s->n_ctrl = n->n_ctrl;
  if (!(s->in = dfx__calloc((size_t)s->n_in + 1, sizeof *s->in)) ||
      !(s->ctrl = dfx__calloc((size_t)s->n_ctrl + 1, sizeof *s->ctrl)) ||
      !(s->switches = dfx__calloc((size_t)s->n_in + 1, sizeof *s->switches)) ||
      !(s->merge_in = dfx__calloc((size_t)s->n_br, sizeof *s->merge_in)) ||
      !(s->outs = dfx__calloc((size_t)s->n_out + 1, sizeof *s->outs)))
    return dfx__status_set(lc->st, DFX_ENOMEM, "out of memory");
  for (int k = 0; k < s->n_in; k++) s->in[k] = (dfx_graph_port){n->in[k + 1].node, n->in[k + 1].slot};
  for (int k = 0; k < s->n_ctrl; k++) s->ctrl[k] = n->in[n->n_in + k].node;
  dfx_graph_port pred = {n->in[0].node, n->in[0].slot};
  dfx_dtype pred_t = is_if ? dfx__attr_type(n, "Tcond", DFX_BOOL) : DFX_I32;
  if (is_if && pred_t != DFX_BOOL) {
    /* TF's If takes any scalar: non-zero is true. Cast says the same for numbers. */
    snprintf(name, sizeof name, "%s/cond_to_bool", nm);
    int cast = dfx__lower_add(lc, name, "Cast", depth);
    if (cast < 0 || dfx__lower_attr_type(lc, cast, "SrcT", pred_t) != DFX_OK ||
        dfx__lower_attr_type(lc, cast, "DstT", DFX_BOOL) != DFX_OK ||
        dfx__graph_add_input(g, cast, pred.node, pred.slot, lc->st) != DFX_OK)
      return code(lc);
    pred = (dfx_graph_port){cast, 0};
    pred_t = DFX_BOOL;
  }
  /* The predicate switched on itself: one side live, the other dead. */
  snprintf(name, sizeof name, "%s/switch_pred", nm);
  int sp = add_switch(lc, name, pred, pred_t, pred, s->n_br, s->ctrl, s->n_ctrl, depth);
  if (sp < 0) return code(lc);
  for (int b = 0; b < s->n_br; b++) {
    snprintf(name, sizeof name, "%s/pivot_%d", nm, b);
    if ((s->pivots[b] = add1(lc, name, "Identity", (dfx_graph_port){sp, b}, pred_t, depth)) < 0) return code(lc);
  }
  for (int k = 0; k < s->n_in; k++) {
    snprintf(name, sizeof name, "%s/input_%d", nm, k);
    if ((s->switches[k] = add_switch(lc, name, s->in[k], s->tin[k], pred, s->n_br, s->ctrl, s->n_ctrl, depth)) < 0)
      return code(lc);
  }
  bool need_done = s->n_out == 0;
  for (int b = 0; b < s->n_br; b++) {
    for (int k = 0; k < s->n_in; k++) s->in[k] = (dfx_graph_port){s->switches[k], b};
    snprintf(name, sizeof name, "%s/branch_%d", nm, b);
    snprintf(what, sizeof what, "Node '%s' (%s) branch %d", nm, is_if ? "If" : "Case", b);
    dfx_inline_call call = {s->fns[b], name, NULL, 0, s->n_in, s->in, s->tin, 1, &s->pivots[b], depth, what};
    if ((c = dfx__inline_function(lc, &call, &s->res[b])) != DFX_OK) return c;
    if (s->res[b].n_out != s->n_out)
      return dfx__status_set(lc->st, DFX_EINVAL, "%s: function '%s' returns %d values but Tout lists %d", what,
                             s->fns[b]->sig.name, s->res[b].n_out, s->n_out);
    need_done |= s->res[b].n_ctrl_out > 0;
  }
  for (int j = 0; j < s->n_out; j++) {
    for (int b = 0; b < s->n_br; b++) s->merge_in[b] = s->res[b].out[j];
    snprintf(name, sizeof name, "%s/output_%d", nm, j);
    int m = add_merge(lc, name, s->merge_in, s->n_br, s->tout[j], depth);
    if (m < 0) return code(lc);
    s->outs[j] = (dfx_graph_port){m, 0};
  }
  int done = -1;
  if (need_done) {
    for (int b = 0; b < s->n_br; b++) {
      snprintf(name, sizeof name, "%s/branch_%d_done", nm, b);
      int d = add1(lc, name, "Identity", (dfx_graph_port){s->pivots[b], 0}, pred_t, depth);
      if (d < 0) return code(lc);
      for (int k = 0; k < s->res[b].n_ctrl_out; k++)
        if (dfx__graph_add_input(g, d, s->res[b].ctrl_out[k], -1, lc->st) != DFX_OK) return code(lc);
      s->merge_in[b] = (dfx_graph_port){d, 0};
    }
    snprintf(name, sizeof name, "%s/branch_executed", nm);
    if ((done = add_merge(lc, name, s->merge_in, s->n_br, pred_t, depth)) < 0) return code(lc);
  }
  return dfx__lower_replace(lc, id, s->outs, s->tout, s->n_out, &done, done >= 0 ? 1 : 0);
}

dfx_code dfx__lower_cond(dfx_lower_ctx *lc, int id) {
  cond_state *s = dfx__calloc(1, sizeof *s);
  if (!s) return dfx__status_set(lc->st, DFX_ENOMEM, "out of memory");
  dfx_code c = lower(lc, id, s);
  for (int b = 0; b < s->n_br; b++) dfx__inline_result_free(&s->res[b]);
  dfx__free(s->tin);
  dfx__free(s->tout);
  dfx__free(s->in);
  dfx__free(s->ctrl);
  dfx__free(s->switches);
  dfx__free(s->merge_in);
  dfx__free(s->outs);
  dfx__free(s);
  return c;
}
