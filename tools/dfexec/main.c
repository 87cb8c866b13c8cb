/* main.c - entry point of the dfexec command: picks the subcommand and owns
 * the shared error and usage reporting. `dfexec GRAPH ...` is `dfexec run
 * GRAPH ...`. Exit status: 0 success, 1 graph or run error, 2 usage error. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char main_help[] =
    "usage: dfexec [run] GRAPH [options]   run a TensorFlow 1.x GraphDef\n"
    "       dfexec info GRAPH              summarise nodes, ops, frames, inputs and outputs\n"
    "       dfexec dot GRAPH               print the graph in Graphviz DOT\n"
    "       dfexec convert IN OUT          convert between .pb and .pbtxt\n"
    "       dfexec optimize IN -o OUT      run the graph optimisation passes, write the result\n"
    "       dfexec ops                     every op with a kernel and its dtypes\n"
    "       dfexec bench GRAPH             time runs: latency percentiles, throughput\n"
    "       dfexec ckpt PREFIX             list a TensorFlow checkpoint's tensors\n"
    "       dfexec grad IN --y L --x W -o OUT  add gradient nodes, print their names\n"
    "       dfexec partition GRAPH --tasks N --out DIR   one GraphDef per task (_Send/_Recv)\n"
    "       dfexec COMMAND --help          help for one command\n"
    "       dfexec --version               the library's version\n"
    "\n"
    "GRAPH is a binary (.pb) or text (.pbtxt) GraphDef. Exit status: 0 on success,\n"
    "1 on a graph or run error, 2 on a usage error.\n";

void dfx__cli_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("dfexec: error: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

int dfx__cli_usage(const char *cmd, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("dfexec: error: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  fprintf(stderr, "Try 'dfexec %s%s--help'.\n", cmd ? cmd : "", cmd ? " " : "");
  return DFX_EXIT_USAGE;
}

bool dfx__cli_parse_int(const char *s, long long *out) {
  char *end;
  if (!s || !*s || *s == '-' || *s == '+') return false;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (errno || *end) return false;
  *out = v;
  return true;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fputs(main_help, stderr);
    return DFX_EXIT_USAGE;
  }
  const char *cmd = argv[1];
  if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
    fputs(main_help, stdout);
    return DFX_EXIT_OK;
  }
  if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0) {
    /* The library's version, not the header's: what actually runs. */
    printf("dfexec %s\n", dfx_version());
    return DFX_EXIT_OK;
  }
  /* Subcommands see argv[0] = their own name, as getopt expects. */
  if (strcmp(cmd, "run") == 0) return dfx__cmd_run(argc - 1, argv + 1);
  if (strcmp(cmd, "info") == 0) return dfx__cmd_info(argc - 1, argv + 1);
  if (strcmp(cmd, "dot") == 0) return dfx__cmd_dot(argc - 1, argv + 1);
  if (strcmp(cmd, "convert") == 0) return dfx__cmd_convert(argc - 1, argv + 1);
  if (strcmp(cmd, "optimize") == 0) return dfx__cmd_optimize(argc - 1, argv + 1);
  if (strcmp(cmd, "ops") == 0) return dfx__cmd_ops(argc - 1, argv + 1);
  if (strcmp(cmd, "bench") == 0) return dfx__cmd_bench(argc - 1, argv + 1);
  if (strcmp(cmd, "ckpt") == 0) return dfx__cmd_ckpt(argc - 1, argv + 1);
  if (strcmp(cmd, "grad") == 0) return dfx__cmd_grad(argc - 1, argv + 1);
  if (strcmp(cmd, "partition") == 0) return dfx__cmd_partition(argc - 1, argv + 1);
  /* Anything else (a graph path, or options first) is the implicit run. */
  return dfx__cmd_run(argc, argv);
}
