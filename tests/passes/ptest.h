/* ptest.h - harness for the pass tests: a text graph optimised by a pass
 * list for given ports, questions about the result (is a node there, what
 * op, how many nodes), and runs of the graph before and after with the
 * same feeds, which must give the same values (and the same errors). */
#ifndef PTEST_H
#define PTEST_H

#include <stdbool.h>

#include "dfexec.h"
#include "graph.h"

typedef struct pt_case {
  dfx_graph *before, *after;
  char fetch_buf[256], feed_buf[256], target_buf[256];
  dfx_port fetches[8], feeds[8];
  const char *targets[8];
  int n_fetches, n_feeds, n_targets;
  int removed, added, rewritten; /* summed over the report */
} pt_case;

/* Imports `text` and optimises it with `passes` for the comma lists of
 * fetches ("a:1,b"), feeds and targets (any may be NULL: no ports, so
 * nothing is pruned). The test fails if either step fails. */
void pt_optimize(pt_case *t, const char *text, const char *passes, const char *fetches, const char *feeds,
                 const char *targets);
void pt_free(pt_case *t);

bool pt_has(const dfx_graph *g, const char *name);
/* The op of node `name`, or "" when it is not there. */
const char *pt_op(const dfx_graph *g, const char *name);
/* Live nodes (the graph is final, so all of them). */
int pt_count(const dfx_graph *g);

/* Runs t->fetches on both graphs (sessions without optimisation) with the
 * float32 scalars `feed_vals` for t->feeds, and asserts equal dtypes,
 * shapes and bytes, or the same error code on both. Returns the code. */
dfx_code pt_same_outputs(const pt_case *t, const float *feed_vals);

#endif
