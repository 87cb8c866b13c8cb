/* cmd_info.c - `dfexec info GRAPH`: a summary of a graph for people: node
 * and per-op counts, ops without a kernel, loop frames, placeholders and
 * outputs; with --shapes, every node output's inferred shape
 * (info_shapes.c). Graphs with unknown ops load too (they just cannot run). */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "lib.h"
#include "graph_import.h"
#include "kernel.h"

static const char info_help[] =
    "usage: dfexec info GRAPH [options]\n"
    "\n"
    "Prints node and per-op counts, ops that have no kernel in this build,\n"
    "while-loop frames (name, parent, parallel_iterations, node count),\n"
    "placeholders (name, dtype, shape; ? for an unknown dim) and the graph's\n"
    "default outputs (see dfexec run --help).\n"
    "\n"
    "  --shapes                    also infer every node output's shape statically\n"
    "                              (TensorFlow's shape functions) and print them, one\n"
    "                              node a line: name, op, then per output its dtype\n"
    "                              and shape (? unknown), and {values} for small\n"
    "                              integer tensors whose value is known\n"
    "  --feed-shape NAME[:K]=[d0,d1]  the shape a run feeds NAME:K with (? or -1 for\n"
    "                              an unknown dim); implies --shapes (repeatable)\n"
    "  --no-hints                  ignore the _output_shapes attrs TensorFlow wrote\n"
    "                              (show only what inference proves)\n"
    "  --format text|json          output format (default text); json is one object:\n"
    "                              {\"graph\", \"nodes\", \"ops\": [{\"op\", \"count\", \"kernel\"}],\n"
    "                              \"frames\": [{\"name\", \"parent\", \"parallel_iterations\",\n"
    "                              \"nodes\"}], \"placeholders\": [{\"name\", \"dtype\", \"shape\",\n"
    "                              \"has_default\"}], \"outputs\": [{\"name\", \"dtype\", \"shape\"}]}\n"
    "                              (a shape is a list with -1 for an unknown dim, or null\n"
    "                              for an unknown rank; not with --shapes)\n"
    "  --help                      this help\n"
    "\n"
    "Exit status: 0 success, 1 graph error, 2 usage error.\n";

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

/* ---- --format json ---- */

static void json_shape(FILE *f, const dfx_shape *sh) {
  if (!sh || sh->rank < 0) {
    fputs("null", f);
    return;
  }
  fputc('[', f);
  for (int d = 0; d < sh->rank; d++) fprintf(f, "%s%lld", d ? ", " : "", (long long)(sh->dims[d] < 0 ? -1 : sh->dims[d]));
  fputc(']', f);
}

static void json_str(FILE *f, const char *s) { dfx__json_string(f, s, strlen(s)); }

static void print_json(FILE *f, const char *path, const dfx_graph *g, const op_count *ops, int n_ops) {
  fputs("{\"graph\": ", f);
  json_str(f, path);
  fprintf(f, ", \"nodes\": %d, \"ops\": [", g->n_nodes);
  for (int k = 0; k < n_ops; k++) {
    fputs(k ? ", {\"op\": " : "{\"op\": ", f);
    json_str(f, ops[k].op);
    fprintf(f, ", \"count\": %d, \"kernel\": %s}", ops[k].count, ops[k].no_kernel ? "false" : "true");
  }
  fputs("], \"frames\": [", f);
  for (int i = 1; i < g->n_frames; i++) {
    const dfx_frame_info *fr = &g->frames[i];
    fputs(i > 1 ? ", {\"name\": " : "{\"name\": ", f);
    json_str(f, fr->name);
    fputs(", \"parent\": ", f);
    if (fr->parent <= 0) fputs("null", f);
    else json_str(f, g->frames[fr->parent].name);
    fprintf(f, ", \"parallel_iterations\": %d, \"nodes\": %d}", fr->parallel_iterations, fr->n_nodes);
  }
  fputs("], \"placeholders\": [", f);
  int shown = 0;
  for (int i = 0; i < g->n_nodes; i++) {
    const dfx_node *n = &g->nodes[i];
    if (strncmp(n->op, "Placeholder", 11) != 0) continue;
    fputs(shown++ ? ", {\"name\": " : "{\"name\": ", f);
    json_str(f, n->name);
    fprintf(f, ", \"dtype\": \"%s\", \"shape\": ", dfx_dtype_name(dfx__attr_type(n, "dtype", DFX_INVALID)));
    json_shape(f, dfx__attr_shape(n, "shape"));
    fprintf(f, ", \"has_default\": %s}", dfx__node_is_placeholder(n) ? "false" : "true");
  }
  fputs("], \"outputs\": [", f);
  int n_out = dfx_graph_outputs(g, NULL, 0);
  dfx_port *outs = n_out > 0 ? calloc((size_t)n_out, sizeof *outs) : NULL;
  if (outs) dfx_graph_outputs(g, outs, n_out);
  for (int i = 0; outs && i < n_out; i++) {
    const dfx_node *n = &g->nodes[dfx__graph_find(g, outs[i].node, (size_t)-1)];
    char name[600];
    snprintf(name, sizeof name, "%s:%d", outs[i].node, outs[i].index);
    fputs(i ? ", {\"name\": " : "{\"name\": ", f);
    json_str(f, name);
    dfx_shape tmp;
    int64_t dims[DFX_MAX_DIMS];
    fprintf(f, ", \"dtype\": \"%s\", \"shape\": ",
            dfx_dtype_name(outs[i].index < n->n_out ? n->out_types[outs[i].index] : DFX_INVALID));
    json_shape(f, dfx__output_shape(n, outs[i].index, &tmp, dims));
    fputc('}', f);
  }
  free(outs);
  fputs("]}\n", f);
}

enum { OPT_SHAPES = 256, OPT_FEED_SHAPE, OPT_NO_HINTS, OPT_FORMAT, OPT_HELP };

static const struct option info_opts[] = {{"shapes", no_argument, NULL, OPT_SHAPES},
                                          {"feed-shape", required_argument, NULL, OPT_FEED_SHAPE},
                                          {"no-hints", no_argument, NULL, OPT_NO_HINTS},
                                          {"format", required_argument, NULL, OPT_FORMAT},
                                          {"help", no_argument, NULL, OPT_HELP},
                                          {NULL, 0, NULL, 0}};

/* Infers and prints the shapes, the named feeds seeding their nodes. */
static int print_shapes(const dfx_graph *g, const dfx_cli_port *ports, const dfx_pshape *shapes, int n, bool hints) {
  dfx_shape_feed *feeds = calloc((size_t)n + 1, sizeof *feeds);
  dfx_shapes *s = NULL;
  if (!feeds) {
    dfx__cli_error("out of memory");
    return DFX_EXIT_ERROR;
  }
  for (int i = 0; i < n; i++) {
    int id = dfx__graph_find(g, ports[i].node, (size_t)-1);
    if (id < 0 || ports[i].index >= g->nodes[id].n_out) {
      char sug[DFX_SUGGEST_MAX];
      dfx__cli_error("--feed-shape: the graph has no tensor '%s:%d'%s", ports[i].node, ports[i].index,
                     id < 0 ? dfx__graph_suggest(g, ports[i].node, sug, sizeof sug) : "");
      free(feeds);
      return DFX_EXIT_ERROR;
    }
    feeds[i] = (dfx_shape_feed){ports[i].node, ports[i].index, shapes[i]};
  }
  dfx_shapes_opts o = {.feeds = feeds, .n_feeds = n, .use_hints = hints};
  int rc = DFX_EXIT_ERROR;
  if (dfx__shapes_infer(g, &o, &s, NULL) == DFX_OK) {
    dfx__info_print_shapes(g, s);
    rc = DFX_EXIT_OK;
  } else {
    dfx__cli_error("out of memory inferring shapes");
  }
  dfx__shapes_free(s);
  free(feeds);
  return rc;
}

int dfx__cmd_info(int argc, char **argv) {
  bool shapes = false, hints = true, json = false;
  int n_feeds = 0;
  dfx_cli_port *ports = calloc((size_t)argc, sizeof *ports);
  dfx_pshape *feed_shapes = calloc((size_t)argc, sizeof *feed_shapes);
  if (!ports || !feed_shapes) {
    free(ports);
    free(feed_shapes);
    dfx__cli_error("out of memory");
    return DFX_EXIT_ERROR;
  }
  opterr = 0;
  optind = 1;
  int c, usage = -1;
  while (usage < 0 && (c = getopt_long(argc, argv, ":h", info_opts, NULL)) != -1) {
    switch (c) {
    case OPT_SHAPES: shapes = true; break;
    case OPT_NO_HINTS: hints = false; break;
    case OPT_FORMAT:
      if (strcmp(optarg, "json") == 0) json = true;
      else if (strcmp(optarg, "text") == 0) json = false;
      else usage = dfx__cli_usage("info", "--format must be 'text' or 'json', not '%s'", optarg);
      break;
    case OPT_FEED_SHAPE:
      if (!dfx__feed_shape_parse(optarg, &ports[n_feeds], &feed_shapes[n_feeds]))
        usage = dfx__cli_usage("info", "--feed-shape '%s': expected NAME[:K]=[d0,d1,...]", optarg);
      else n_feeds++, shapes = true;
      break;
    case 'h':
    case OPT_HELP:
      fputs(info_help, stdout);
      usage = DFX_EXIT_OK;
      break;
    case ':': usage = dfx__cli_usage("info", "option '%s' needs a value", argv[optind - 1]); break;
    default: usage = dfx__cli_usage("info", "unknown option '%s'", argv[optind - 1]); break;
    }
  }
  if (usage < 0 && json && shapes) usage = dfx__cli_usage("info", "--format json does not take --shapes");
  if (usage < 0 && optind != argc - 1)
    usage = dfx__cli_usage("info", optind >= argc ? "missing GRAPH" : "expected exactly one GRAPH argument");
  if (usage >= 0) {
    dfx__ports_free(ports, n_feeds);
    free(feed_shapes);
    return usage;
  }
  const char *path = argv[optind];
  int rc = DFX_EXIT_ERROR;
  dfx_status *st = dfx_status_new();
  dfx_graph *g = NULL;
  op_count *ops = NULL;
  if (!st) goto fail;
  if (dfx__graph_load_ex(path, &g, st) != DFX_OK) {
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
  if (json) {
    print_json(stdout, path, g, ops, n_ops);
    rc = fflush(stdout) == 0 ? DFX_EXIT_OK : DFX_EXIT_ERROR;
    goto fail;
  }
  printf("graph: %s\n", path);
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
  if (shapes && print_shapes(g, ports, feed_shapes, n_feeds, hints) != DFX_EXIT_OK) goto reported;
  rc = fflush(stdout) == 0 ? DFX_EXIT_OK : DFX_EXIT_ERROR;
fail:
  if (rc != DFX_EXIT_OK && (!st || dfx_status_code(st) == DFX_OK)) dfx__cli_error("out of memory or write error");
reported:
  free(ops);
  dfx_graph_free(g);
  dfx_status_free(st);
  dfx__ports_free(ports, n_feeds);
  free(feed_shapes);
  return rc;
}
