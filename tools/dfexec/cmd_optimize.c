/* cmd_optimize.c - `dfexec optimize IN -o OUT`: runs the graph
 * optimisation passes (dfx_graph_optimize) and writes the result, and the
 * per-pass report that `run --stats` prints too. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char optimize_help[] =
    "usage: dfexec optimize IN -o OUT [options]\n"
    "\n"
    "Optimises a GraphDef and writes it to OUT (.pbtxt or .txt: text, otherwise\n"
    "binary). With --fetch or --target the graph is pruned to what those need and\n"
    "optimised for them; without, every placeholder and every output (root-frame\n"
    "node nobody consumes) is kept with its name, and nothing is pruned.\n"
    "\n"
    "  -o, --output OUT            where to write the optimised graph\n"
    "  --passes LIST               default (the default pipeline), none, or a\n"
    "                              comma-separated list of passes, run in order\n"
    "  --fetch NAME[:K]            a tensor runs will fetch (repeatable)\n"
    "  --feed NAME[:K]             a tensor runs will feed: never folded (repeatable)\n"
    "  --target NODE               a node runs will run (repeatable)\n"
    "  --list                      list the passes and exit\n"
    "  --quiet                     no report\n"
    "  --help                      this help\n"
    "\n"
    "The report (per pass and round: nodes removed, added, rewritten, time) goes\n"
    "to stderr. Exit status: 0 success, 1 graph error, 2 usage error.\n";

void dfx__cli_print_optimize_report(FILE *f, const dfx_optimize_report *r) {
  double ms = 0;
  for (int i = 0; i < r->n_stats; i++) ms += r->stats[i].ms;
  fprintf(f, "optimisation: %d -> %d nodes in %.3f ms\n", r->nodes_before, r->nodes_after, ms);
  if (r->n_stats == 0) return;
  fprintf(f, "  %-16s %5s %8s %8s %10s %10s\n", "pass", "round", "removed", "added", "rewritten", "ms");
  for (int i = 0; i < r->n_stats; i++) {
    const dfx_optimize_stat *s = &r->stats[i];
    fprintf(f, "  %-16s %5d %8d %8d %10d %10.3f\n", s->pass, s->round, s->removed, s->added, s->rewritten, s->ms);
  }
}

bool dfx__cli_passes_valid(const char *list, char *bad, size_t n) {
  if (strcmp(list, "default") == 0 || strcmp(list, "none") == 0) return true;
  const char *p = list;
  do {
    size_t len = strcspn(p, ",");
    bool found = false;
    for (int i = 0; !found && dfx_optimize_pass(i, NULL, NULL); i++) {
      const char *name = dfx_optimize_pass(i, NULL, NULL);
      found = strlen(name) == len && strncmp(name, p, len) == 0;
    }
    if (!found) {
      snprintf(bad, n, "%.*s", (int)len, p);
      return false;
    }
    p += len;
  } while (*p++ == ',');
  return true;
}

int dfx__cli_bad_passes(const char *cmd, const char *opt, const char *bad) {
  char known[512] = "";
  size_t o = 0;
  for (int i = 0; dfx_optimize_pass(i, NULL, NULL) && o < sizeof known; i++)
    o += (size_t)snprintf(known + o, sizeof known - o, ", %s", dfx_optimize_pass(i, NULL, NULL));
  return dfx__cli_usage(cmd, "%s: unknown pass '%s'; the passes are: default, none%s", opt, bad, known);
}

static void list_passes(void) {
  printf("%-16s %-8s %s\n", "pass", "default", "purpose");
  const char *purpose;
  int def;
  for (int i = 0; dfx_optimize_pass(i, &purpose, &def); i++)
    printf("%-16s %-8s %s\n", dfx_optimize_pass(i, NULL, NULL), def ? "yes" : "no", purpose);
}

enum { OPT_PASSES = 256, OPT_FETCH, OPT_FEED, OPT_TARGET, OPT_LIST, OPT_QUIET, OPT_HELP };

static const struct option optimize_opts[] = {
    {"output", required_argument, NULL, 'o'},        {"passes", required_argument, NULL, OPT_PASSES},
    {"fetch", required_argument, NULL, OPT_FETCH},   {"feed", required_argument, NULL, OPT_FEED},
    {"target", required_argument, NULL, OPT_TARGET}, {"list", no_argument, NULL, OPT_LIST},
    {"quiet", no_argument, NULL, OPT_QUIET},         {"help", no_argument, NULL, OPT_HELP},
    {NULL, 0, NULL, 0}};

int dfx__cmd_optimize(int argc, char **argv) {
  const char *out_path = NULL, *passes = NULL;
  bool quiet = false;
  int rc = DFX_EXIT_ERROR, n_fetches = 0, n_feeds = 0, n_targets = 0;
  /* Each list holds at most argc entries. */
  dfx_cli_port *fetches = calloc((size_t)argc, sizeof *fetches), *feeds = calloc((size_t)argc, sizeof *feeds);
  dfx_port *fetch_ports = calloc((size_t)argc, sizeof *fetch_ports), *feed_ports = calloc((size_t)argc, sizeof *feed_ports);
  const char **targets = calloc((size_t)argc, sizeof *targets);
  dfx_status *st = dfx_status_new();
  dfx_graph *g = NULL, *og = NULL;
  dfx_optimize_report report = {0};
  if (!fetches || !feeds || !fetch_ports || !feed_ports || !targets || !st) {
    dfx__cli_error("out of memory");
    goto done;
  }
  opterr = 0;
  optind = 1;
  int c;
  while ((c = getopt_long(argc, argv, ":ho:", optimize_opts, NULL)) != -1) {
    dfx_cli_port *p = c == OPT_FETCH ? &fetches[n_fetches] : &feeds[n_feeds];
    switch (c) {
    case 'o': out_path = optarg; break;
    case OPT_PASSES: {
      char bad[64];
      if (!dfx__cli_passes_valid(optarg, bad, sizeof bad)) {
        rc = dfx__cli_bad_passes("optimize", "--passes", bad);
        goto done;
      }
      passes = optarg;
      break;
    }
    case OPT_FETCH:
    case OPT_FEED:
      if (!dfx__port_parse(optarg, strlen(optarg), p)) {
        rc = dfx__cli_usage("optimize", "--%s '%s': expected NAME[:K]", c == OPT_FETCH ? "fetch" : "feed", optarg);
        goto done;
      }
      if (c == OPT_FETCH) fetch_ports[n_fetches++] = (dfx_port){p->node, p->index};
      else feed_ports[n_feeds++] = (dfx_port){p->node, p->index};
      break;
    case OPT_TARGET: targets[n_targets++] = optarg; break;
    case OPT_LIST: list_passes(); rc = DFX_EXIT_OK; goto done;
    case OPT_QUIET: quiet = true; break;
    case 'h':
    case OPT_HELP: fputs(optimize_help, stdout); rc = DFX_EXIT_OK; goto done;
    case ':': rc = dfx__cli_usage("optimize", "option '%s' needs a value", argv[optind - 1]); goto done;
    default: rc = dfx__cli_usage("optimize", "unknown option '%s'", argv[optind - 1]); goto done;
    }
  }
  if (optind >= argc) {
    rc = dfx__cli_usage("optimize", "missing IN");
    goto done;
  }
  if (optind + 1 < argc) {
    rc = dfx__cli_usage("optimize", "unexpected argument '%s'", argv[optind + 1]);
    goto done;
  }
  if (!out_path) {
    rc = dfx__cli_usage("optimize", "missing -o OUT");
    goto done;
  }
  if (dfx_graph_load(argv[optind], &g, st) != DFX_OK) {
    dfx__cli_error("%s", dfx_status_message(st));
    goto done;
  }
  dfx_optimize_options oo = {.passes = passes, .feeds = feed_ports, .n_feeds = n_feeds, .fetches = fetch_ports,
                             .n_fetches = n_fetches, .targets = targets, .n_targets = n_targets};
  if (dfx_graph_optimize(g, &oo, &og, &report, st) != DFX_OK || dfx_graph_save(og, out_path, st) != DFX_OK) {
    dfx__cli_error("%s", dfx_status_message(st));
    goto done;
  }
  if (!quiet) dfx__cli_print_optimize_report(stderr, &report);
  rc = DFX_EXIT_OK;
done:
  dfx_optimize_report_free(&report);
  dfx_graph_free(og);
  dfx_graph_free(g);
  dfx_status_free(st);
  dfx__ports_free(fetches, n_fetches);
  dfx__ports_free(feeds, n_feeds);
  free(fetch_ports);
  free(feed_ports);
  free(targets);
  return rc;
}
