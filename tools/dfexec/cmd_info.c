/* cmd_info.c - `dfexec info GRAPH`: a summary of a graph for people: node
 * and per-op counts, ops without a kernel, loop frames, placeholders and
 * outputs. Graphs with unknown ops load too (they just cannot run). */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "lib.h"
#include "graph_import.h"
#include "kernel.h"

static const char info_help[] =
    "usage: dfexec info GRAPH\n"
    "\n"
    "Prints node and per-op counts, ops that have no kernel in this build,\n"
    "while-loop frames (name, parent, parallel_iterations, node count),\n"
    "placeholders (name, dtype, shape; ? for an unknown dim) and the graph's\n"
    "default outputs (see dfexec run --help). Exit status: 0 success, 1 graph\n"
    "error, 2 usage error.\n";

typedef struct op_count {
  const char *op;
  int count;
  bool no_kernel;
} op_count;

static int by_name(const void *a, const void *b) {
  return strcmp(((const op_count *)a)->op, ((const op_count *)b)->op);
}

/* Whether a run could execute this node: control-flow ops are built into
 * the engine; everything else needs a registered kernel. */
static bool has_kernel(const dfx_registry *reg, const dfx_node *n) {
  if (n->ctrl != DFX_CTRL_NONE) return true;
  return reg && n->def && dfx__registry_has_kernel(reg, n->op);
}

static void print_frames(const dfx_graph *g) {
  printf("frames: %d\n", g->n_frames - 1);
  if (g->n_frames <= 1) return;
  printf("  %-32s %-24s %-20s %s\n", "name", "parent", "parallel_iterations", "nodes");
  for (int i = 1; i < g->n_frames; i++) {
    const dfx_frame_info *f = &g->frames[i];
    printf("  %-32s %-24s %-20d %d\n", f->name, f->parent <= 0 ? "(root)" : g->frames[f->parent].name,
           f->parallel_iterations, f->n_nodes);
  }
}

static void print_io(const dfx_graph *g) {
  char sb[256];
  int n_ph = 0;
  for (int i = 0; i < g->n_nodes; i++)
    if (strncmp(g->nodes[i].op, "Placeholder", 11) == 0) n_ph++;
  printf("placeholders: %d\n", n_ph);
  for (int i = 0; i < g->n_nodes; i++) {
    const dfx_node *n = &g->nodes[i];
    if (strncmp(n->op, "Placeholder", 11) != 0) continue;
    printf("  %-32s %-10s %s%s\n", n->name, dfx_dtype_name(dfx__attr_type(n, "dtype", DFX_INVALID)),
           dfx__shape_attr_str(dfx__attr_shape(n, "shape"), sb, sizeof sb),
           dfx__node_is_placeholder(n) ? "" : "  (has a default)");
  }
  int n_out = 0;
  dfx_cli_port *outs = dfx__graph_outputs(g, &n_out);
  printf("outputs: %d\n", n_out);
  for (int i = 0; outs && i < n_out; i++) {
    const dfx_node *n = &g->nodes[dfx__graph_find(g, outs[i].node, (size_t)-1)];
    char name[512];
    dfx_shape tmp;
    int64_t dims[DFX_MAX_DIMS];
    const dfx_shape *sh = dfx__output_shape(n, outs[i].index, &tmp, dims);
    printf("  %-32s %-10s %s\n", dfx__port_str(&outs[i], name, sizeof name),
           dfx_dtype_name(outs[i].index < n->n_out ? n->out_types[outs[i].index] : DFX_INVALID),
           dfx__shape_attr_str(sh, sb, sizeof sb));
  }
  dfx__ports_free(outs, n_out);
}

int dfx__cmd_info(int argc, char **argv) {
  if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
    fputs(info_help, stdout);
    return DFX_EXIT_OK;
  }
  if (argc != 2 || argv[1][0] == '-')
    return dfx__cli_usage("info", argc < 2 ? "missing GRAPH" : "expected exactly one GRAPH argument");
  int rc = DFX_EXIT_ERROR;
  dfx_status *st = dfx_status_new();
  dfx_graph *g = NULL;
  op_count *ops = NULL;
  if (!st) goto fail;
  if (dfx__graph_load_ex(argv[1], &g, st) != DFX_OK) {
    dfx__cli_error("%s", dfx_status_message(st));
    goto fail;
  }
  const dfx_registry *reg = dfx__lib_registry(st);
  if (!(ops = calloc((size_t)g->n_nodes + 1, sizeof *ops))) goto fail;
  int n_ops = 0, n_missing = 0;
  for (int i = 0; i < g->n_nodes; i++) {
    const dfx_node *n = &g->nodes[i];
    int k = 0;
    while (k < n_ops && strcmp(ops[k].op, n->op) != 0) k++;
    if (k == n_ops) {
      ops[n_ops].op = n->op;
      ops[n_ops++].no_kernel = !has_kernel(reg, n);
    }
    ops[k].count++;
  }
  qsort(ops, (size_t)n_ops, sizeof *ops, by_name);
  printf("graph: %s\n", argv[1]);
  printf("nodes: %d\n", g->n_nodes);
  printf("ops: %d\n", n_ops);
  for (int k = 0; k < n_ops; k++) {
    printf("  %-32s %d\n", ops[k].op, ops[k].count);
    if (ops[k].no_kernel) n_missing++;
  }
  printf("ops without a kernel: %d\n", n_missing);
  for (int k = 0; k < n_ops; k++) {
    if (!ops[k].no_kernel) continue;
    printf("  %-32s", ops[k].op);
    int shown = 0;
    for (int i = 0; i < g->n_nodes && shown < 3; i++)
      if (strcmp(g->nodes[i].op, ops[k].op) == 0) printf("%s%s", shown++ ? ", " : " used by ", g->nodes[i].name);
    printf("%s\n", ops[k].count > 3 ? ", ..." : "");
  }
  print_frames(g);
  print_io(g);
  rc = fflush(stdout) == 0 ? DFX_EXIT_OK : DFX_EXIT_ERROR;
fail:
  if (rc != DFX_EXIT_OK && (!st || dfx_status_code(st) == DFX_OK)) dfx__cli_error("out of memory or write error");
  free(ops);
  dfx_graph_free(g);
  dfx_status_free(st);
  return rc;
}
