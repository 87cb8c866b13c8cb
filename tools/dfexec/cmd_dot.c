/* cmd_dot.c - `dfexec dot GRAPH`: Graphviz DOT output. Loop frames become
 * nested clusters, control edges are dashed, NextIteration back edges are
 * blue and do not constrain the layout, and the control-flow ops each get
 * their own shape so the loop structure stands out. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "graph_import.h"

static const char dot_help[] =
    "usage: dfexec dot GRAPH > graph.dot\n"
    "\n"
    "Prints the graph in Graphviz DOT (render with: dot -Tsvg graph.dot -o g.svg).\n"
    "Nodes are labelled \"name\\nop\"; while-loop frames are nested clusters;\n"
    "control edges are dashed; NextIteration back edges are blue, labelled\n"
    "\"next\" and ignored for ranking; Switch, Merge, Enter, Exit and LoopCond\n"
    "have distinct shapes and colours.\n";

/* Writes s as a DOT quoted string body. */
static void dot_str(const char *s) {
  for (; *s; s++) {
    if (*s == '"' || *s == '\\') putchar('\\');
    putchar(*s);
  }
}

static const char *node_style(const dfx_node *n) {
  if (strcmp(n->op, "_SwitchN") == 0) return "shape=diamond, style=filled, fillcolor=\"#ffd27f\"";
  switch (n->ctrl) {
  case DFX_CTRL_SWITCH: return "shape=diamond, style=filled, fillcolor=\"#ffd27f\"";
  case DFX_CTRL_MERGE: return "shape=invtriangle, style=filled, fillcolor=\"#9fd7ff\"";
  case DFX_CTRL_ENTER: return "shape=house, style=filled, fillcolor=\"#c8f0c8\"";
  case DFX_CTRL_EXIT: return "shape=invhouse, style=filled, fillcolor=\"#f0c8c8\"";
  case DFX_CTRL_NEXT_ITERATION: return "shape=box, style=\"rounded,filled\", fillcolor=\"#c8c8ff\", color=blue";
  case DFX_CTRL_LOOP_COND: return "shape=octagon, style=filled, fillcolor=\"#ffe0f0\"";
  default: break;
  }
  if (strncmp(n->op, "Placeholder", 11) == 0) return "shape=ellipse, style=filled, fillcolor=\"#eeeeee\"";
  if (strcmp(n->op, "Const") == 0) return "shape=box, style=rounded, color=gray40";
  return "shape=box";
}

/* The cluster a node is drawn in: an Enter belongs with the frame it enters. */
static int draw_frame(const dfx_graph *g, const dfx_node *n) {
  if (n->ctrl != DFX_CTRL_ENTER) return n->frame;
  const char *name = dfx__attr_str(n, "frame_name", "");
  for (int f = 1; f < g->n_frames; f++)
    if (strcmp(g->frames[f].name, name) == 0) return f;
  return n->frame;
}

static void emit_frame(const dfx_graph *g, int f, int depth) {
  int ind = 2 * depth;
  if (f > 0) {
    printf("%*ssubgraph cluster_%d {\n%*s  label=\"", ind, "", f, ind, "");
    dot_str(g->frames[f].name);
    printf("\";\n%*s  style=\"rounded,filled\"; fillcolor=\"#%s\"; color=gray50;\n", ind, "",
           depth % 2 ? "f7f7ff" : "eef0ff");
  }
  for (int i = 0; i < g->n_nodes; i++) {
    const dfx_node *n = &g->nodes[i];
    if (draw_frame(g, n) != f) continue;
    printf("%*s  n%d [label=\"", ind, "", i);
    dot_str(n->name);
    printf("\\n");
    dot_str(n->op);
    printf("\", %s];\n", node_style(n));
  }
  for (int c = 1; c < g->n_frames; c++)
    if (g->frames[c].parent == f) emit_frame(g, c, depth + 1);
  if (f > 0) printf("%*s}\n", ind, "");
}

static void emit_edges(const dfx_graph *g) {
  for (int i = 0; i < g->n_nodes; i++) {
    const dfx_node *n = &g->nodes[i];
    for (int e = 0; e < n->n_edges; e++) {
      const dfx_edge *ed = &n->edges[e];
      printf("  n%d -> n%d", i, ed->dst);
      if (ed->dst_slot < 0) {
        printf(" [style=dashed, color=gray40]");
      } else if (n->ctrl == DFX_CTRL_NEXT_ITERATION) {
        printf(" [constraint=false, color=blue, fontcolor=blue, label=\"next\"]");
      } else if (n->ctrl == DFX_CTRL_SWITCH) {
        printf(" [label=\"%s\"]", ed->src_slot ? "T" : "F");
      } else if (ed->src_slot > 0) {
        printf(" [label=\":%d\"]", ed->src_slot);
      }
      printf(";\n");
    }
  }
}

int dfx__cmd_dot(int argc, char **argv) {
  if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
    fputs(dot_help, stdout);
    return DFX_EXIT_OK;
  }
  if (argc != 2 || argv[1][0] == '-')
    return dfx__cli_usage("dot", argc < 2 ? "missing GRAPH" : "expected exactly one GRAPH argument");
  int rc = DFX_EXIT_ERROR;
  dfx_status *st = dfx_status_new();
  dfx_graph *g = NULL;
  if (!st) {
    dfx__cli_error("out of memory");
    goto fail;
  }
  if (dfx__graph_load_ex(argv[1], &g, st) != DFX_OK) {
    dfx__cli_error("%s", dfx_status_message(st));
    goto fail;
  }
  printf("digraph \"");
  dot_str(argv[1]);
  printf("\" {\n  compound=true;\n  node [fontname=\"Helvetica\", fontsize=10];\n"
         "  edge [fontname=\"Helvetica\", fontsize=9];\n");
  emit_frame(g, 0, 0);
  emit_edges(g);
  printf("}\n");
  rc = fflush(stdout) == 0 ? DFX_EXIT_OK : DFX_EXIT_ERROR;
  if (rc) dfx__cli_error("error writing standard output");
fail:
  dfx_graph_free(g);
  dfx_status_free(st);
  return rc;
}
