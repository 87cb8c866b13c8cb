/* optimize_api.c - the graph-transformation layer's public face:
 * dfx_graph_optimize, the pass listing, and the optimizer a session runs
 * before planning each run signature (session option `optimize`). */
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "dfexec.h"
#include "lib.h"
#include "pass.h"
#include "plan.h"
#include "session.h"
#include "status.h"

const char *dfx_optimize_pass(int i, const char **purpose, int *in_default) {
  int n;
  const dfx_pass *const *all = dfx__passes_all(&n);
  if (i < 0 || i >= n) return NULL;
  if (purpose) *purpose = all[i]->purpose;
  if (in_default) *in_default = all[i]->in_default;
  return all[i]->name;
}

void dfx_optimize_report_free(dfx_optimize_report *r) {
  if (!r) return;
  dfx__free(r->stats);
  memset(r, 0, sizeof *r);
}

static dfx_code report_out(const dfx_pass_report *in, dfx_optimize_report *out, dfx_status *st) {
  memset(out, 0, sizeof *out);
  out->nodes_before = in->nodes_before;
  out->nodes_after = in->nodes_after;
  if (in->n_rows == 0) return DFX_OK;
  if (!(out->stats = dfx__calloc((size_t)in->n_rows, sizeof *out->stats)))
    return dfx__status_set(st, DFX_ENOMEM, "out of memory");
  out->n_stats = in->n_rows;
  for (int i = 0; i < in->n_rows; i++) {
    const dfx_pass_report_row *r = &in->rows[i];
    out->stats[i] = (dfx_optimize_stat){r->pass, r->round, r->counts.removed, r->counts.added, r->counts.rewritten,
                                        (double)r->ns / 1e6};
  }
  return DFX_OK;
}

dfx_code dfx_graph_optimize(const dfx_graph *g, const dfx_optimize_options *opts, dfx_graph **out,
                            dfx_optimize_report *report, dfx_status *st) {
  dfx__status_clear(st);
  if (out) *out = NULL;
  if (report) memset(report, 0, sizeof *report);
  if (!g || !out) return dfx__status_set(st, DFX_EINVAL, "dfx_graph_optimize: NULL argument");
  if (!g->final) return dfx__status_set(st, DFX_EPRECOND, "dfx_graph_optimize: the graph is being edited");
  dfx_optimize_options o = opts ? *opts : (dfx_optimize_options){0};
  if (o.n_feeds < 0 || o.n_fetches < 0 || o.n_targets < 0 || (o.n_feeds && !o.feeds) ||
      (o.n_fetches && !o.fetches) || (o.n_targets && !o.targets))
    return dfx__status_set(st, DFX_EINVAL, "dfx_graph_optimize: bad port counts or NULL port arrays");
  const dfx_registry *reg = dfx__lib_registry(st);
  if (!reg) return st ? st->code : DFX_EINTERNAL;
  /* The ports get the checks a run would make (names, indices, frames), with
   * the same messages. */
  if (o.n_feeds || o.n_fetches || o.n_targets) {
    dfx_plan_sel sel;
    dfx_code c = dfx__plan_select(g, o.feeds, o.n_feeds, o.fetches, o.n_fetches, o.targets, o.n_targets, &sel, st);
    if (c != DFX_OK) return c;
    dfx__plan_select_free(&sel);
  }
  dfx_pass_ports ports = {o.feeds, o.fetches, o.n_feeds, o.n_fetches, o.targets, o.n_targets};
  dfx_pass_report rep;
  dfx_code c = dfx__passes_optimized_copy(g, o.passes, &ports, reg, out, report ? &rep : NULL, st);
  if (c != DFX_OK || !report) return c;
  c = report_out(&rep, report, st);
  dfx__pass_report_free(&rep);
  if (c != DFX_OK) {
    dfx_graph_free(*out);
    *out = NULL;
  }
  return c;
}

/* ---- the session's optimizer ---- */

typedef struct session_opt {
  char *passes;
  const dfx_registry *reg;
} session_opt;

static void session_opt_free(void *ud) {
  session_opt *o = ud;
  dfx__free(o->passes);
  dfx__free(o);
}

static dfx_code session_opt_run(void *ud, const dfx_graph *g, const dfx_port *feeds, int n_feeds,
                                const dfx_port *fetches, int n_fetches, const char *const *targets, int n_targets,
                                dfx_graph **out, dfx_status *st) {
  const session_opt *o = ud;
  dfx_pass_ports ports = {feeds, fetches, n_feeds, n_fetches, targets, n_targets};
  return dfx__passes_optimized_copy(g, o->passes, &ports, o->reg, out, NULL, st);
}

dfx_code dfx_session_new(const dfx_graph *g, const dfx_session_options *opts, dfx_session **out, dfx_status *st) {
  dfx__status_clear(st);
  if (out) *out = NULL;
  const dfx_registry *r = dfx__lib_registry(st);
  if (!r) return st ? st->code : DFX_EINTERNAL;
  const char *list = opts && opts->optimize ? opts->optimize : getenv("DFX_OPTIMIZE");
  dfx_code c = dfx__passes_check(list, st);
  if (c != DFX_OK) return c;
  /* "none" still lowers TensorFlow 2 functional ops: nothing runs them as they are. */
  if (list && (strcmp(list, "none") == 0 || !*list) && !(g && g->final && dfx__lower_needed(g)))
    return dfx__session_new(g, r, NULL, opts, out, st);
  session_opt *o = dfx__calloc(1, sizeof *o);
  if (!o || (list && !(o->passes = dfx__strdup(list)))) {
    dfx__free(o);
    return dfx__status_set(st, DFX_ENOMEM, "out of memory");
  }
  o->reg = r;
  dfx_optimizer opt = {session_opt_run, o, session_opt_free};
  return dfx__session_new(g, r, &opt, opts, out, st);
}
