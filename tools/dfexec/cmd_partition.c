/* cmd_partition.c - `dfexec partition GRAPH --tasks N --out DIR`: places
 * the graph's nodes on N tasks and writes one GraphDef per task
 * (DIR/task-K.pb) with _Send/_Recv pairs between them (dist/dist.h). */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "dist.h"

static const char partition_help[] =
    "usage: dfexec partition GRAPH --tasks N --out DIR [options]\n"
    "\n"
    "Places every node on one of N tasks and writes DIR/task-K.pb (K = 0..N-1),\n"
    "one GraphDef per task, with _Send/_Recv nodes for the edges between tasks\n"
    "and a control loop on each task a while loop spans.\n"
    "\n"
    "Placement: a node's device field names its task (/job:worker/task:1,\n"
    "/task:1); _class colocation (loc:@node) and reference/resource edges keep\n"
    "nodes together; a node without a device goes where its first input's\n"
    "producer went, else task 0; Switch, Exit, Enter and NextIteration follow\n"
    "their data as in TensorFlow.\n"
    "\n"
    "  --tasks N             number of tasks (>= 1)\n"
    "  --out DIR             output directory (created if missing)\n"
    "  --random-placement S  place every node at random with seed S (> 0), for tests\n"
    "  --text                write task-K.pbtxt (text) instead\n"
    "  --list                print each node's task on stdout\n"
    "  --help                this help\n"
    "\n"
    "Exit status: 0 success, 1 graph or placement error, 2 usage error.\n";

enum { OPT_TASKS = 256, OPT_OUT, OPT_RANDOM, OPT_TEXT, OPT_LIST, OPT_HELP };

static const struct option partition_opts[] = {
    {"tasks", required_argument, NULL, OPT_TASKS}, {"out", required_argument, NULL, OPT_OUT},
    {"random-placement", required_argument, NULL, OPT_RANDOM}, {"text", no_argument, NULL, OPT_TEXT},
    {"list", no_argument, NULL, OPT_LIST}, {"help", no_argument, NULL, OPT_HELP}, {NULL, 0, NULL, 0}};

int dfx__cmd_partition(int argc, char **argv) {
  long long n_tasks = 0, seed = 0;
  const char *out_dir = NULL;
  bool text = false, list = false;
  int rc = DFX_EXIT_ERROR;
  opterr = 0;
  optind = 1;
  int c;
  while ((c = getopt_long(argc, argv, ":h", partition_opts, NULL)) != -1) {
    switch (c) {
    case OPT_TASKS:
      if (!dfx__cli_parse_int(optarg, &n_tasks) || n_tasks < 1 || n_tasks > 4096)
        return dfx__cli_usage("partition", "--tasks '%s': expected a number from 1 to 4096", optarg);
      break;
    case OPT_OUT: out_dir = optarg; break;
    case OPT_RANDOM:
      if (!dfx__cli_parse_int(optarg, &seed) || seed < 1 || seed > 0x7fffffff)
        return dfx__cli_usage("partition", "--random-placement '%s': expected a positive seed", optarg);
      break;
    case OPT_TEXT: text = true; break;
    case OPT_LIST: list = true; break;
    case 'h':
    case OPT_HELP: fputs(partition_help, stdout); return DFX_EXIT_OK;
    case ':': return dfx__cli_usage("partition", "option '%s' needs a value", argv[optind - 1]);
    default: return dfx__cli_usage("partition", "unknown option '%s'", argv[optind - 1]);
    }
  }
  if (optind >= argc) return dfx__cli_usage("partition", "missing GRAPH");
  if (optind + 1 < argc) return dfx__cli_usage("partition", "unexpected argument '%s'", argv[optind + 1]);
  if (!n_tasks) return dfx__cli_usage("partition", "missing --tasks N");
  if (!out_dir) return dfx__cli_usage("partition", "missing --out DIR");
  dfx_status *st = dfx_status_new();
  dfx_graph *g = NULL;
  dfx_graph **parts = calloc((size_t)n_tasks, sizeof *parts);
  int *task = NULL;
  if (!st || !parts) {
    dfx__cli_error("out of memory");
    goto done;
  }
  if (dfx_graph_load(argv[optind], &g, st) != DFX_OK) {
    dfx__cli_error("%s", dfx_status_message(st));
    goto done;
  }
  if (!(task = calloc((size_t)g->n_nodes + 1, sizeof *task))) {
    dfx__cli_error("out of memory");
    goto done;
  }
  if (dfx__dist_place(g, (int)n_tasks, (unsigned)seed, task, st) != DFX_OK ||
      dfx__dist_partition(g, task, (int)n_tasks, 1, parts, st) != DFX_OK) {
    dfx__cli_error("%s", dfx_status_message(st));
    goto done;
  }
  if (mkdir(out_dir, 0777) != 0 && errno != EEXIST) {
    dfx__cli_error("cannot create directory '%s': %s", out_dir, strerror(errno));
    goto done;
  }
  for (int k = 0; k < n_tasks; k++) {
    char path[4096];
    snprintf(path, sizeof path, "%s/task-%d.%s", out_dir, k, text ? "pbtxt" : "pb");
    if (dfx_graph_save(parts[k], path, st) != DFX_OK) {
      dfx__cli_error("%s", dfx_status_message(st));
      goto done;
    }
    int sends = 0, recvs = 0;
    for (int i = 0; i < parts[k]->n_nodes; i++) {
      sends += strcmp(parts[k]->nodes[i].op, "_Send") == 0;
      recvs += strcmp(parts[k]->nodes[i].op, "_Recv") == 0;
    }
    fprintf(stderr, "task %d: %d nodes (%d _Send, %d _Recv) -> %s\n", k, parts[k]->n_nodes, sends, recvs, path);
  }
  if (list)
    for (int i = 0; i < g->n_nodes; i++) printf("%s\t%d\n", g->nodes[i].name, task[i]);
  rc = DFX_EXIT_OK;
done:
  for (int k = 0; parts && k < n_tasks; k++) dfx_graph_free(parts[k]);
  free(parts);
  free(task);
  dfx_graph_free(g);
  dfx_status_free(st);
  return rc;
}
