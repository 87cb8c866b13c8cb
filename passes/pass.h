/* pass.h - the graph-transformation layer: optimisation passes over the
 * mutable graph (graph/graph.h) and the manager that runs them.
 *
 * A pass is one file with a name, a one-line purpose and a run function.
 * It receives a final graph, edits it (graph/edit.c) and counts what it
 * did; the manager then finalises the graph (graph/finalize.c re-derives
 * dtypes, edges and frames and re-applies TensorFlow's import checks), so
 * a pass that breaks the graph fails loudly at once, naming the pass. In
 * debug builds the manager also checks after every pass that the graph
 * still holds every node it must keep, with its outputs.
 *
 * What a pass must keep: the nodes named in dfx_pass_ctx.keep (the fetched,
 * fed and target nodes of the run being optimised, or the graph's outputs
 * and inputs when there is no run) keep their names, their outputs and,
 * for fed ones, their dtypes. Everything else may be removed, merged,
 * folded or rewritten, as long as every kept output keeps its value and
 * deadness for any feed values. Stateful ops (DFX_OP_STATEFUL in TF's
 * OpDef, or a stateful kernel) are never folded, merged or moved.
 *
 * This layer sits above exec/ because constant folding runs the kernels
 * themselves (on a small session over the constant subgraph), and below
 * api/, which hands it the kernel registry. */
#ifndef DFX_PASS_H
#define DFX_PASS_H

#include <stdbool.h>
#include <stdint.h>

#include "graph.h"
#include "kernel.h"

/* What one run of one pass did. */
typedef struct dfx_pass_counts {
  int removed;    /* nodes deleted */
  int added;      /* nodes created */
  int rewritten;  /* nodes changed in place (inputs, attrs, op) */
} dfx_pass_counts;

typedef struct dfx_pass_ctx {
  dfx_graph *g;               /* final on entry; the pass edits it */
  const dfx_registry *reg;    /* kernels (constant folding); may be NULL: no folding */
  char **keep;                /* names of nodes to keep (see top), sorted for bsearch */
  int n_keep;
  char **fed;                 /* names of nodes whose outputs a run may feed: never constants */
  int n_fed;
  bool ports_known;           /* keep came from a run's fetches/feeds/targets: pruning may apply */
  dfx_pass_counts counts;     /* filled by the pass */
  dfx_status *st;
} dfx_pass_ctx;

typedef struct dfx_pass {
  const char *name;           /* as written in pass lists: "prune", "cse", ... */
  const char *purpose;        /* one line, for `dfexec optimize --list` */
  dfx_code (*run)(dfx_pass_ctx *ctx);
  bool in_default;            /* part of the default pipeline */
} dfx_pass;

/* Whether node `name` must be kept (binary search in ctx->keep), and
 * whether a run may feed it. */
bool dfx__pass_keeps(const dfx_pass_ctx *ctx, const char *name);
bool dfx__pass_fed(const dfx_pass_ctx *ctx, const char *name);
/* Whether node n may be folded, merged, moved or removed as a pure
 * function of its inputs: not stateful by TF's OpDef or by its kernel. */
bool dfx__pass_pure(const dfx_pass_ctx *ctx, const dfx_node *n);

/* ---- the passes (one file each) ---- */
extern const dfx_pass dfx__pass_lower;      /* lower.c, lower_call.c, lower_cond.c, lower_while.c */
extern const dfx_pass dfx__pass_prune;      /* prune.c */
extern const dfx_pass dfx__pass_constfold;  /* constfold.c */
extern const dfx_pass dfx__pass_cse;        /* cse.c */
extern const dfx_pass dfx__pass_identity;   /* identity.c */
extern const dfx_pass dfx__pass_shapefold;  /* shapefold.c */
extern const dfx_pass dfx__pass_arith;      /* arith.c, arith_math.c, arith_shape.c */
extern const dfx_pass dfx__pass_deadbranch; /* deadbranch.c */
extern const dfx_pass dfx__pass_licm;       /* licm.c */
extern const dfx_pass dfx__pass_fold_batchnorm; /* fold_batchnorm.c */
extern const dfx_pass dfx__pass_fold_pad;   /* fold_pad.c */
extern const dfx_pass dfx__pass_remap;      /* remap.c */
extern const dfx_pass dfx__pass_ewfuse;     /* ewfuse.c */

/* Whether g (final) holds functional ops (If, Case, While, function
 * calls) that the `lower` pass must rewrite before anything can run it. */
bool dfx__lower_needed(const dfx_graph *g);
/* Whether `op` is a functional op the lower pass rewrites into v1 control
 * flow (If, Case, While and their Stateless forms, the call ops). */
bool dfx__lower_op(const char *op);

/* ---- manager.c ---- */

/* One entry of an optimisation report: a pass run and what it did. */
typedef struct dfx_pass_report_row {
  const char *pass;           /* static */
  int round;                  /* 1-based pass over the pipeline */
  dfx_pass_counts counts;
  int64_t ns;                 /* time spent */
} dfx_pass_report_row;

typedef struct dfx_pass_report {
  int nodes_before, nodes_after;
  int n_rows, cap_rows;
  dfx_pass_report_row *rows;
} dfx_pass_report;

/* The ports a run keeps (graph-level names; NULL arrays with zero counts
 * are allowed). With no ports at all the manager keeps the graph's inputs
 * (placeholders) and outputs (nodes nobody consumes) and never prunes. */
typedef struct dfx_pass_ports {
  const dfx_port *feeds, *fetches;
  int n_feeds, n_fetches;
  const char *const *targets;
  int n_targets;
} dfx_pass_ports;

/* Runs `list` over g (final; edited in place, final again on success):
 * NULL or "default" for the default pipeline, "none" for nothing, or a
 * comma-separated list of pass names. The pipeline runs to a fixed point
 * (at most 3 rounds). `report` (may be NULL) receives one row per pass
 * run; free it with dfx__pass_report_free. Errors: DFX_EINVAL for an
 * unknown pass name (naming the known ones), a pass's error naming the
 * pass, DFX_ENOMEM. On error g may be partly optimised but is final and
 * valid, or freed by the caller. */
dfx_code dfx__passes_run(dfx_graph *g, const char *list, const dfx_pass_ports *ports, const dfx_registry *reg,
                         dfx_pass_report *report, dfx_status *st);
void dfx__pass_report_free(dfx_pass_report *r);
/* Whether `list` names a pipeline (as above); DFX_EINVAL naming the known
 * passes if not. */
dfx_code dfx__passes_check(const char *list, dfx_status *st);
/* The pass called `name`, or NULL; and every pass, in pipeline order. */
const dfx_pass *dfx__pass_find(const char *name);
const dfx_pass *const *dfx__passes_all(int *n);

/* ---- optimize.c ---- */

/* A new final graph: a copy of g (final, only read) with `list` run over
 * it for `ports` (as dfx__passes_run). On error *out is NULL and the report
 * empty. */
dfx_code dfx__passes_optimized_copy(const dfx_graph *g, const char *list, const dfx_pass_ports *ports,
                                    const dfx_registry *reg, dfx_graph **out, dfx_pass_report *report,
                                    dfx_status *st);

#endif
