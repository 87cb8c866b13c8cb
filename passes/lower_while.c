/* lower_while.c - While/StatelessWhile to a v1 while-loop frame
 * (TensorFlow's LowerWhileHelper). Per loop variable i:
 *   Enter_i(input_i) -> Merge_i(Enter_i, NextIteration_i) -> Switch_i(Merge_i, LoopCond)
 *   Switch_i:0 -> Exit_i;  Switch_i:1 -> Identity_i -> body -> NextIteration_i
 * with the cond function inlined over the Merges (waiting on Merge_0, so
 * its constants run in the frame every iteration) and the body over the
 * Identities (waiting on Identity_0, so it is dead on the last iteration).
 * The frame is named after the While node (node names are unique, so are
 * frames) and takes its parallel_iterations. Outputs past
 * `_num_original_outputs` are accumulators TensorFlow added for gradients:
 * they stay loop variables (the body reads them) and get Exits like the
 * rest; pruning drops those nobody reads. Data consumers read the Exits;
 * the While's node becomes an IdentityN of them for fetches and control
 * edges. */
#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "lower.h"

static dfx_code code(dfx_lower_ctx *lc) { return lc->st && lc->st->code ? lc->st->code : DFX_ENOMEM; }

typedef struct while_state {
  int n;
  dfx_dtype *t;
  int *enter, *merge, *sw, *ident, *exit;
  dfx_graph_port *ports;
  int *ctrl;
  int n_ctrl;
  dfx_inline_result cond, body;
} while_state;

static int add_node(dfx_lower_ctx *lc, const char *base, int i, const char *op, dfx_graph_port src, dfx_dtype t,
                    int depth) {
  char name[600];
  snprintf(name, sizeof name, "%s_%d", base, i);
  int id = dfx__lower_add(lc, name, op, depth);
  if (id < 0) return -1;
  if (t != DFX_INVALID && dfx__lower_attr_type(lc, id, "T", t) != DFX_OK) return -1;
  if (src.node >= 0 && dfx__graph_add_input(lc->g, id, src.node, src.slot, lc->st) != DFX_OK) return -1;
  return id;
}

static dfx_code lower(dfx_lower_ctx *lc, int id, while_state *s) {
  dfx_graph *g = lc->g;
  const dfx_node *n = &g->nodes[id];
  const char *nm = n->name;
  int depth = lc->depth[id];
  char base[600], what[400];
  const dfx_function *cond_fn, *body_fn;
  dfx_code c;
  if ((c = dfx__lower_func(lc, id, "cond", &cond_fn)) != DFX_OK || (c = dfx__lower_func(lc, id, "body", &body_fn)) != DFX_OK ||
      (c = dfx__lower_types(lc, id, "T", &s->t, &s->n)) != DFX_OK)
    return c;
  n = &g->nodes[id];
  if (s->n != n->n_in)
    return dfx__status_set(lc->st, DFX_EINVAL, "Node '%s' (%s): T lists %d types for %d inputs", nm, n->op, s->n, n->n_in);
  if (s->n == 0)
    return dfx__status_set(lc->st, DFX_EUNIMPL, "Node '%s' (%s): a loop without loop variables cannot be lowered", nm,
                           n->op);
  int64_t orig = dfx__attr_int(n, "_num_original_outputs", s->n);
  if (orig < 1 || orig > s->n)
    return dfx__status_set(lc->st, DFX_EINVAL, "Node '%s' (%s): _num_original_outputs %lld is not in [1, %d]", nm, n->op,
                           (long long)orig, s->n);
  int64_t par = dfx__attr_int(n, "parallel_iterations", 10);
  if (par < 1) return dfx__status_set(lc->st, DFX_EINVAL, "Node '%s' (%s): parallel_iterations must be >= 1", nm, n->op);
  size_t k = (size_t)s->n + 1;
  if (!(s->enter = dfx__calloc(k, sizeof(int))) || !(s->merge = dfx__calloc(k, sizeof(int))) ||
      !(s->sw = dfx__calloc(k, sizeof(int))) || !(s->ident = dfx__calloc(k, sizeof(int))) ||
      !(s->exit = dfx__calloc(k, sizeof(int))) || !(s->ports = dfx__calloc(k, sizeof *s->ports)) ||
      !(s->ctrl = dfx__calloc((size_t)n->n_ctrl + 1, sizeof(int))))
    return dfx__status_set(lc->st, DFX_ENOMEM, "out of memory");
  s->n_ctrl = n->n_ctrl;
  for (int i = 0; i < n->n_ctrl; i++) s->ctrl[i] = n->in[n->n_in + i].node;
  for (int i = 0; i < s->n; i++) s->ports[i] = (dfx_graph_port){n->in[i].node, n->in[i].slot};
  /* Enters and Merges (the Merge's back edge is added once the body exists). */
  snprintf(base, sizeof base, "%s/enter", nm);
  for (int i = 0; i < s->n; i++) {
    int e = add_node(lc, base, i, "Enter", s->ports[i], s->t[i], depth);
    if (e < 0 || dfx__lower_attr_str(lc, e, "frame_name", nm) != DFX_OK ||
        dfx__lower_attr_int(lc, e, "parallel_iterations", par) != DFX_OK ||
        dfx__lower_attr_bool(lc, e, "is_constant", false) != DFX_OK)
      return code(lc);
    for (int j = 0; j < s->n_ctrl; j++)
      if (dfx__graph_add_input(g, e, s->ctrl[j], -1, lc->st) != DFX_OK) return code(lc);
    s->enter[i] = e;
  }
  snprintf(base, sizeof base, "%s/merge", nm);
  for (int i = 0; i < s->n; i++) {
    int m = add_node(lc, base, i, "Merge", (dfx_graph_port){s->enter[i], 0}, s->t[i], depth);
    if (m < 0 || dfx__lower_attr_int(lc, m, "N", 2) != DFX_OK) return code(lc);
    s->merge[i] = m;
    s->ports[i] = (dfx_graph_port){m, 0};
  }
  /* The cond over the Merges, then LoopCond and the Switches. */
  snprintf(base, sizeof base, "%s/cond", nm);
  snprintf(what, sizeof what, "Node '%s' (While) cond", nm);
  dfx_inline_call cc = {cond_fn, base, NULL, 0, s->n, s->ports, s->t, 1, &s->merge[0], depth, what};
  if ((c = dfx__inline_function(lc, &cc, &s->cond)) != DFX_OK) return c;
  if (s->cond.n_out != 1)
    return dfx__status_set(lc->st, DFX_EINVAL, "%s: function '%s' returns %d values; a loop condition returns one", what,
                           cond_fn->sig.name, s->cond.n_out);
  char lcname[620];
  snprintf(lcname, sizeof lcname, "%s/LoopCond", nm);
  int loop_cond = dfx__lower_add(lc, lcname, "LoopCond", depth);
  if (loop_cond < 0 || dfx__graph_add_input(g, loop_cond, s->cond.out[0].node, s->cond.out[0].slot, lc->st) != DFX_OK)
    return code(lc);
  snprintf(base, sizeof base, "%s/switch", nm);
  for (int i = 0; i < s->n; i++) {
    int w = add_node(lc, base, i, "Switch", (dfx_graph_port){s->merge[i], 0}, s->t[i], depth);
    if (w < 0 || dfx__graph_add_input(g, w, loop_cond, 0, lc->st) != DFX_OK) return code(lc);
    s->sw[i] = w;
  }
  snprintf(base, sizeof base, "%s/exit", nm);
  for (int i = 0; i < s->n; i++)
    if ((s->exit[i] = add_node(lc, base, i, "Exit", (dfx_graph_port){s->sw[i], 0}, s->t[i], depth)) < 0) return code(lc);
  snprintf(base, sizeof base, "%s/body_input", nm);
  for (int i = 0; i < s->n; i++) {
    if ((s->ident[i] = add_node(lc, base, i, "Identity", (dfx_graph_port){s->sw[i], 1}, s->t[i], depth)) < 0)
      return code(lc);
    s->ports[i] = (dfx_graph_port){s->ident[i], 0};
  }
  /* The body over the Identities, then NextIterations closing the loop. */
  snprintf(base, sizeof base, "%s/body", nm);
  snprintf(what, sizeof what, "Node '%s' (While) body", nm);
  dfx_inline_call bc = {body_fn, base, NULL, 0, s->n, s->ports, s->t, 1, &s->ident[0], depth, what};
  if ((c = dfx__inline_function(lc, &bc, &s->body)) != DFX_OK) return c;
  if (s->body.n_out != s->n)
    return dfx__status_set(lc->st, DFX_EINVAL, "%s: function '%s' returns %d values for %d loop variables", what,
                           body_fn->sig.name, s->body.n_out, s->n);
  snprintf(base, sizeof base, "%s/next_iteration", nm);
  for (int i = 0; i < s->n; i++) {
    int ni = add_node(lc, base, i, "NextIteration", s->body.out[i], s->t[i], depth);
    if (ni < 0) return code(lc);
    /* The body's control outputs finish within their iteration. */
    for (int j = 0; i == 0 && j < s->body.n_ctrl_out; j++)
      if (dfx__graph_add_input(g, ni, s->body.ctrl_out[j], -1, lc->st) != DFX_OK) return code(lc);
    if (dfx__graph_add_input(g, s->merge[i], ni, 0, lc->st) != DFX_OK) return code(lc);
  }
  for (int i = 0; i < s->n; i++) s->ports[i] = (dfx_graph_port){s->exit[i], 0};
  return dfx__lower_replace(lc, id, s->ports, s->t, s->n, NULL, 0);
}

dfx_code dfx__lower_while(dfx_lower_ctx *lc, int id) {
  while_state s = {0};
  dfx_code c = lower(lc, id, &s);
  dfx__inline_result_free(&s.cond);
  dfx__inline_result_free(&s.body);
  dfx__free(s.t);
  dfx__free(s.enter);
  dfx__free(s.merge);
  dfx__free(s.sw);
  dfx__free(s.ident);
  dfx__free(s.exit);
  dfx__free(s.ports);
  dfx__free(s.ctrl);
  return c;
}
