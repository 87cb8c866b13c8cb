/* cmd_grad.c - `dfexec grad IN --y LOSS --x W,b -o OUT`: adds the gradient
 * subgraph (dfx_graph_gradients), writes the graph, and prints one line per
 * --x tensor, in order: its gradient's tensor name "node:k", or "None" when
 * the x does not reach any y (as tf.gradients returns None). */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char grad_help[] =
    "usage: dfexec grad IN --y NAME[:K][,...] --x NAME[:K][,...] -o OUT [options]\n"
    "\n"
    "Differentiates the sum of the --y tensors with respect to each --x tensor\n"
    "(reverse mode, tf.gradients semantics) and writes the graph with the\n"
    "gradient nodes to OUT (.pbtxt or .txt: text, otherwise binary). Prints the\n"
    "gradient tensor of each --x, one per line in --x order, or None for an x\n"
    "that does not reach any y.\n"
    "\n"
    "  --y LIST                    tensors to differentiate (comma list, repeatable)\n"
    "  --x LIST                    tensors to differentiate with respect to\n"
    "  --grad-y LIST               initial gradients of the ys (default: ones)\n"
    "  --prefix NAME               name scope of the new nodes (default gradients)\n"
    "  -o, --output OUT            where to write the graph\n"
    "  --help                      this help\n"
    "\n"
    "Exit status: 0 success, 1 graph error, 2 usage error.\n";

enum { OPT_Y = 256, OPT_X, OPT_GY, OPT_PREFIX, OPT_HELP };

static const struct option grad_opts[] = {
    {"output", required_argument, NULL, 'o'}, {"y", required_argument, NULL, OPT_Y},
    {"x", required_argument, NULL, OPT_X},    {"grad-y", required_argument, NULL, OPT_GY},
    {"prefix", required_argument, NULL, OPT_PREFIX}, {"help", no_argument, NULL, OPT_HELP},
    {NULL, 0, NULL, 0}};

typedef struct plist {
  dfx_cli_port *p;
  dfx_port *ports;
  int n, cap;
} plist;

/* Appends the comma-separated tensors of s; false on a malformed one. */
static bool plist_add(plist *l, const char *s) {
  for (;;) {
    size_t len = strcspn(s, ",");
    if (l->n == l->cap) {
      int cap = l->cap ? 2 * l->cap : 8;
      dfx_cli_port *p = realloc(l->p, sizeof *p * (size_t)cap);
      if (!p) return false;
      l->p = p;
      dfx_port *q = realloc(l->ports, sizeof *q * (size_t)cap);
      if (!q) return false;
      l->ports = q;
      l->cap = cap;
    }
    if (!dfx__port_parse(s, len, &l->p[l->n])) return false;
    l->ports[l->n] = (dfx_port){l->p[l->n].node, l->p[l->n].index};
    l->n++;
    if (!s[len]) return true;
    s += len + 1;
  }
}

static void plist_free(plist *l) {
  dfx__ports_free(l->p, l->n);
  free(l->ports);
}

int dfx__cmd_grad(int argc, char **argv) {
  const char *out_path = NULL, *prefix = NULL;
  int rc = DFX_EXIT_ERROR;
  plist ys = {0}, xs = {0}, gys = {0};
  dfx_status *st = dfx_status_new();
  dfx_graph *g = NULL, *og = NULL;
  char **dx = NULL;
  if (!st) {
    dfx__cli_error("out of memory");
    goto done;
  }
  opterr = 0;
  optind = 1;
  int c;
  while ((c = getopt_long(argc, argv, ":ho:", grad_opts, NULL)) != -1) {
    switch (c) {
    case 'o': out_path = optarg; break;
    case OPT_Y:
    case OPT_X:
    case OPT_GY: {
      plist *l = c == OPT_Y ? &ys : c == OPT_X ? &xs : &gys;
      if (!plist_add(l, optarg)) {
        rc = dfx__cli_usage("grad", "--%s '%s': expected NAME[:K][,NAME[:K]...]",
                            c == OPT_Y ? "y" : c == OPT_X ? "x" : "grad-y", optarg);
        goto done;
      }
      break;
    }
    case OPT_PREFIX: prefix = optarg; break;
    case 'h':
    case OPT_HELP: fputs(grad_help, stdout); rc = DFX_EXIT_OK; goto done;
    case ':': rc = dfx__cli_usage("grad", "option '%s' needs a value", argv[optind - 1]); goto done;
    default: rc = dfx__cli_usage("grad", "unknown option '%s'", argv[optind - 1]); goto done;
    }
  }
  if (optind >= argc) {
    rc = dfx__cli_usage("grad", "missing IN");
    goto done;
  }
  if (optind + 1 < argc) {
    rc = dfx__cli_usage("grad", "unexpected argument '%s'", argv[optind + 1]);
    goto done;
  }
  if (!out_path || !ys.n || !xs.n) {
    rc = dfx__cli_usage("grad", "missing %s", !ys.n ? "--y" : !xs.n ? "--x" : "-o OUT");
    goto done;
  }
  if (gys.n && gys.n != ys.n) {
    rc = dfx__cli_usage("grad", "--grad-y gives %d tensors for %d --y tensors", gys.n, ys.n);
    goto done;
  }
  if (!(dx = calloc((size_t)xs.n, sizeof *dx))) {
    dfx__cli_error("out of memory");
    goto done;
  }
  if (dfx_graph_load(argv[optind], &g, st) != DFX_OK ||
      dfx_graph_gradients(g, ys.ports, ys.n, xs.ports, xs.n, gys.n ? gys.ports : NULL, prefix, &og, dx, st) !=
          DFX_OK ||
      dfx_graph_save(og, out_path, st) != DFX_OK) {
    dfx__cli_error("%s", dfx_status_message(st));
    goto done;
  }
  for (int i = 0; i < xs.n; i++) printf("%s\n", dx[i] ? dx[i] : "None");
  rc = DFX_EXIT_OK;
done:
  for (int i = 0; dx && i < xs.n; i++) dfx_free(dx[i]);
  free(dx);
  dfx_graph_free(og);
  dfx_graph_free(g);
  dfx_status_free(st);
  plist_free(&ys);
  plist_free(&xs);
  plist_free(&gys);
  return rc;
}
