/* case.h - one conformance case: its case.json and how to run it.
 * case_load reads the description; case_run does the whole job for one case
 * (load graph, session, feeds, run, compare) and is what each forked child
 * calls. Neither ever aborts on bad input: problems become an outcome. */
#ifndef CONF_CASE_H
#define CONF_CASE_H

#include <stddef.h>
#include <stdint.h>

#include "dfexec.h"
#include "outcome.h"

/* A feed or fetch entry of case.json. */
typedef struct case_tensor {
  char *name;                   /* node name */
  int index;                    /* output index */
  dfx_dtype dtype;              /* DFX_INVALID when case.json says null */
  int ndims;
  int64_t dims[DFX_MAX_DIMS];
  char *values;                 /* values file, relative to the case dir */
} case_tensor;

typedef struct case_def {
  char *graph;                  /* graph file, relative to the case dir */
  int random;                   /* 1: check dtype and shape only */
  int n_feeds, n_fetches, n_inters;
  case_tensor *feeds, *fetches;
  case_tensor *inters;          /* inner tensors TensorFlow saw, for tracing */
} case_def;

/* How each case runs. */
typedef struct case_cfg {
  int threads;                  /* session worker threads; 0: engine default */
  double timeout;               /* seconds per run (dfx_run_options.timeout_sec) */
  const char *optimize;         /* the session's optimisation (NULL: default pipeline) */
  int via_graphdef;             /* 1: optimise for the case's ports with dfx_graph_optimize, write the result
                                 * as a GraphDef, import that and run it unoptimised (what `dfexec optimize`
                                 * then `dfexec run --optimize none` does) */
  int tasks;                    /* > 0: a partitioned run over this many in-process tasks (dist/) */
  int random_seed;              /* with tasks: random placement of every node */
} case_cfg;

/* Parses case.json text (borrowed) into *out. Returns 0, or -1 with a
 * message in err; *out is then empty. */
int case_parse(const char *text, size_t len, case_def *out, char *err, size_t errlen);
/* Reads dir/case.json and parses it. */
int case_load(const char *dir, case_def *out, char *err, size_t errlen);
void case_free(case_def *c);

/* The case's feed ports and tensors (vals[i] new; ports borrow c's names);
 * on error adds the reason to o and returns -1. */
int case_make_feeds(const char *dir, const case_def *c, const dfx_graph *g, dfx_port *ports, dfx_tensor **vals,
                    outcome *o);

/* Runs the case in directory `dir` in this process and fills *o. */
void case_run(const char *dir, const case_cfg *cfg, outcome *o);

/* After a value mismatch: fetches the case's intermediates with the same
 * feeds and adds "first divergence: '<node>' (<Op>)" to the detail, naming
 * a differing intermediate none of whose inputs differ. Borrows all. */
void case_trace(const char *dir, const case_def *c, const dfx_graph *g, dfx_session *s, const case_cfg *cfg,
                const dfx_port *feeds, dfx_tensor *const *feed_vals, outcome *o);

#endif
