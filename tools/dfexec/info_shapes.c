/* info_shapes.c - `dfexec info --shapes`: the statically inferred shape
 * (and small integer value) of every node output (passes/shapes.h), and
 * the --feed-shape arguments that seed it. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

bool dfx__feed_shape_parse(const char *arg, dfx_cli_port *port, dfx_pshape *shape) {
  const char *eq = strchr(arg, '=');
  port->node = NULL;
  if (!eq || !dfx__port_parse(arg, (size_t)(eq - arg), port)) return false;
  const char *p = eq + 1;
  if (strcmp(p, "?") == 0) {
    *shape = dfx__pshape_unknown();
    return true;
  }
  int64_t dims[DFX_MAX_DIMS];
  int r = 0;
  if (*p++ != '[') goto bad;
  while (*p == ' ') p++;
  if (*p == ']') {
    p++;
  } else {
    for (;;) {
      while (*p == ' ') p++;
      if (r == DFX_MAX_DIMS) goto bad;
      if (*p == '?') {
        dims[r++] = DFX_DIM_UNKNOWN;
        p++;
      } else {
        char *end;
        long long v = strtoll(p, &end, 10);
        if (end == p || v < -1) goto bad;
        dims[r++] = v;
        p = end;
      }
      while (*p == ' ') p++;
      if (*p == ']') {
        p++;
        break;
      }
      if (*p++ != ',') goto bad;
    }
  }
  if (*p) goto bad;
  *shape = dfx__pshape_make(r, dims);
  return true;
bad:
  free(port->node);
  port->node = NULL;
  return false;
}

/* "int32[2]{4,?}": dtype, shape and the value when one is known. */
static void print_output(const dfx_node *n, int k, const dfx_tinfo *t) {
  char sb[160];
  printf(" %s%s", dfx_dtype_name(n->out_types[k]), dfx__pshape_str(&t->shape, sb, sizeof sb));
  if (t->n_val < 0) return;
  printf("{");
  for (int i = 0; i < t->n_val; i++) {
    if (t->val[i] == DFX_VALUE_UNKNOWN) printf("%s?", i ? "," : "");
    else printf("%s%lld", i ? "," : "", (long long)t->val[i]);
  }
  printf("}");
}

void dfx__info_print_shapes(const dfx_graph *g, const dfx_shapes *s) {
  int n_nodes_known = 0;
  for (int i = 0; i < g->n_nodes; i++) {
    bool all = true;
    for (int k = 0; k < g->nodes[i].n_out; k++) all &= dfx__pshape_known(&dfx__shapes_output(s, i, k)->shape);
    n_nodes_known += all;
  }
  printf("shapes: %d of %d outputs fully known (%.1f%%), %d of %d nodes; %d round%s%s\n", s->n_known, s->n_outputs,
         s->n_outputs ? 100.0 * s->n_known / s->n_outputs : 100.0, n_nodes_known, g->n_nodes, s->rounds,
         s->rounds == 1 ? "" : "s", s->widened ? " (loops widened)" : "");
  for (int i = 0; i < g->n_nodes; i++) {
    const dfx_node *n = &g->nodes[i];
    printf("  %-32s %-20s", n->name, n->op);
    for (int k = 0; k < n->n_out; k++) print_output(n, k, dfx__shapes_output(s, i, k));
    printf("%s\n", n->n_out == 0 || dfx__shapes_has_fn(n->op) ? "" : "  (no shape function)");
  }
}
