/* cli.h - internal interface shared by the source files of the dfexec command.
 * Each command lives in its own cmd_*.c file; the helpers it needs (feeds,
 * npy files, printing, tracing, graph inspection) each own one file. Every
 * command returns an exit status: DFX_EXIT_OK, DFX_EXIT_ERROR (graph or run
 * error) or DFX_EXIT_USAGE (bad command line). Messages go to stderr as
 * "dfexec: error: <message>". */
#ifndef DFX_CLI_H
#define DFX_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "dfexec.h"
#include "graph.h"
#include "shapes.h"

/* 130: the shell's code for a process ended by SIGINT (128 + 2). */
enum { DFX_EXIT_OK = 0, DFX_EXIT_ERROR = 1, DFX_EXIT_USAGE = 2, DFX_EXIT_INTERRUPTED = 130 };

/* ---- main.c ---- */

/* Prints "dfexec: error: <message>\n" to stderr. */
void dfx__cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Prints the error and a hint to use --help for `cmd`; returns DFX_EXIT_USAGE. */
int dfx__cli_usage(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Parses a non-negative decimal integer (whole string); false on junk. */
bool dfx__cli_parse_int(const char *s, long long *out);

int dfx__cmd_run(int argc, char **argv);
int dfx__cmd_info(int argc, char **argv);
int dfx__cmd_dot(int argc, char **argv);
int dfx__cmd_convert(int argc, char **argv);
int dfx__cmd_optimize(int argc, char **argv);
int dfx__cmd_ops(int argc, char **argv);
int dfx__cmd_bench(int argc, char **argv);
int dfx__cmd_ckpt(int argc, char **argv);
int dfx__cmd_grad(int argc, char **argv);
int dfx__cmd_partition(int argc, char **argv);

/* ---- cmd_optimize.c: shared with run ---- */

/* The per-pass table of an optimisation report. */
void dfx__cli_print_optimize_report(FILE *f, const dfx_optimize_report *r);
/* Whether `list` is default, none or a comma list of known passes; if not,
 * the first unknown name goes to bad. */
bool dfx__cli_passes_valid(const char *list, char *bad, size_t n);
/* Usage error naming an unknown pass and the known ones; DFX_EXIT_USAGE. */
int dfx__cli_bad_passes(const char *cmd, const char *opt, const char *bad);

/* ---- graphinfo.c: graph inspection shared by run and info ---- */

/* A tensor name split in TF notation: "node:k" (k defaults to 0). */
typedef struct dfx_cli_port {
  char *node; /* malloc'd */
  int index;
} dfx_cli_port;

/* Splits "NAME[:K]" (borrowed, `len` bytes) into a new port; false when K
 * is not a number or the name is empty. */
bool dfx__port_parse(const char *s, size_t len, dfx_cli_port *out);
/* Formats "node:k" into buf. */
const char *dfx__port_str(const dfx_cli_port *p, char *buf, size_t n);

/* True for Placeholder and PlaceholderV2, which must be fed to run. */
bool dfx__node_is_placeholder(const dfx_node *n);
/* Writes a shape attr as "[?,2]", "[]" or "?" (unknown rank) into buf. */
const char *dfx__shape_attr_str(const dfx_shape *sh, char *buf, size_t n);
/* The statically known shape of output k of node n when the graph says it
 * (Const value, Placeholder shape, _output_shapes attr), or NULL. */
const dfx_shape *dfx__output_shape(const dfx_node *n, int k, dfx_shape *tmp, int64_t *tmp_dims);

/* The graph's default outputs: tensors of root-frame nodes nobody consumes,
 * plus the inputs of _Retval nodes (see the comment in graphinfo.c for the
 * exact rules). Returns a malloc'd array of *n ports, or NULL on OOM. */
dfx_cli_port *dfx__graph_outputs(const dfx_graph *g, int *n);
void dfx__ports_free(dfx_cli_port *p, int n);

/* Marks in `needed` (g->n_nodes bools) every node the fetches and targets
 * depend on, stopping at fed nodes (`fed` bools). */
/* The node ids of the fetches, then the targets, into roots (n_fetches +
 * n_targets slots); an unknown name (with a "did you mean") or a missing
 * output index is reported and gives false. */
bool dfx__cli_roots(const dfx_graph *g, const dfx_cli_port *fetches, int n_fetches, char *const *targets,
                    int n_targets, int *roots);
/* --seed: replaces *g by dfx_graph_seed's copy when has_seed; false after
 * reporting an error. */
bool dfx__cli_apply_seed(dfx_graph **g, bool has_seed, long long seed, dfx_status *st);
void dfx__graph_needed(const dfx_graph *g, const int *roots, int n_roots, const bool *fed, bool *needed);

/* ---- info_shapes.c: `info --shapes` ---- */

/* Parses "NAME[:K]=[d0,d1]" (a dim ? or -1 is unknown; "=?" an unknown
 * rank) into a new port and a shape; false on junk. */
bool dfx__feed_shape_parse(const char *arg, dfx_cli_port *port, dfx_pshape *shape);
/* Prints the coverage line and every node's outputs: "name op float32[?,2] int32[2]{4,?}". */
void dfx__info_print_shapes(const dfx_graph *g, const dfx_shapes *s);

/* ---- feed.c: --feed values ---- */

/* Parses "NAME[:K]=@FILE.npy" or "NAME[:K]=LITERAL" against graph g and
 * returns a new tensor converted to the dtype the fed port produces (numpy
 * astype rules) and checked against a placeholder's known shape. On failure
 * prints the error and returns DFX_EXIT_USAGE (malformed argument) or
 * DFX_EXIT_ERROR (unknown node, unreadable file, mismatch). */
int dfx__feed_parse(const dfx_graph *g, const char *arg, dfx_cli_port *port, dfx_tensor **val);

/* Converts `count` elements of dtype `src` at `data` (row-major) into a new
 * tensor of dtype `dst` and shape dims. Strings are given as dfx_str.
 * Returns NULL after filling `err` when a value cannot be converted. */
dfx_tensor *dfx__feed_convert(dfx_dtype src, const void *data, dfx_dtype dst, int ndims, const int64_t *dims,
                              char *err, size_t errn);

/* ---- npy.c: numpy .npy files (format version 1.0 written, 1.0-3.0 read) ---- */

/* Reads an .npy file into a new malloc'd buffer of elements in host order
 * and C order, with its dtype and shape. Strings (|S, <U) come back as an
 * array of dfx_str (free with dfx__npy_free_data). false + err on failure. */
bool dfx__npy_read(const char *path, dfx_dtype *dtype, int *ndims, int64_t *dims, void **data, char *err,
                   size_t errn);
void dfx__npy_free_data(dfx_dtype dtype, void *data, int64_t count);
/* Writes `t` (borrowed) to `path`. bfloat16 is written as float32 ('<f4');
 * strings as '<U{n}' when all are UTF-8, otherwise as '|S{n}'. */
bool dfx__npy_write(const char *path, const dfx_tensor *t, char *err, size_t errn);

/* ---- print.c: tensor output ---- */

/* numpy-style text: "name dtype [d0,d1]\n<array>\n". */
void dfx__print_text(FILE *f, const char *name, const dfx_tensor *t);
/* The JSON contract: {"outputs": [{"name":..., "dtype":..., "shape":[...], "values":[...]}]}. */
void dfx__print_json(FILE *f, const char *const *names, dfx_tensor *const *vals, int n);
/* Writes s (len bytes) as a JSON string literal: escapes, invalid UTF-8 as \u00XX. */
void dfx__json_string(FILE *f, const char *s, size_t len);

/* ---- interrupt.c: Ctrl-C cancels the run ---- */
typedef struct dfx_interrupt dfx_interrupt;
/* Installs the SIGINT handler for session s; *out stays NULL when SIGINT is
 * ignored (a background job). false when out of resources. */
bool dfx__interrupt_start(dfx_session *s, dfx_interrupt **out);
/* Starts the watcher thread that cancels the session (NULL: no-op). */
bool dfx__interrupt_watch(dfx_interrupt *it);
/* Whether Ctrl-C was pressed. */
bool dfx__interrupt_fired(const dfx_interrupt *it);
/* Restores SIGINT and stops the watcher; NULL is a no-op. */
void dfx__interrupt_end(dfx_interrupt *it);

/* ---- trace.c: per-node timing from dfx_run_options.trace ---- */

typedef struct dfx_trace dfx_trace;
/* Returns a new, empty recorder bound to graph g (borrowed), or NULL. */
dfx_trace *dfx__trace_new(const dfx_graph *g);
void dfx__trace_free(dfx_trace *tr);
/* Points ro->trace at the recorder and drops events of the previous run. */
void dfx__trace_attach(dfx_trace *tr, dfx_run_options *ro);
/* Adds the last run's events to the per-op and per-frame statistics. */
void dfx__trace_accumulate(dfx_trace *tr);
/* Prints the accumulated statistics over `runs` runs. */
void dfx__trace_print_stats(dfx_trace *tr, FILE *f, int runs);
/* Writes the last run's events as a Chrome trace JSON file. */
bool dfx__trace_write_chrome(dfx_trace *tr, const char *path, char *err, size_t errn);

#endif
