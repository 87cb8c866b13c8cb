/* cmd_ops.c - `dfexec ops`: every op this build can run, one line each,
 * op name first, then the dtypes its kernels take per type attr. Scripts
 * rely on the format (issue 22's contract): "OP" alone for an op without
 * type attrs, else "OP ATTR=dtype,dtype ATTR2=..." with dtypes in
 * DFX_DTYPE order and TensorFlow's numpy-style names. */
#include <string.h>

#include "cli.h"
#include "pass.h"
#include "kernel.h"
#include "lib.h"
#include "op_registry.h"

static const char ops_help[] =
    "usage: dfexec ops\n"
    "\n"
    "Prints every op that has a kernel (or that the engine runs itself: Switch,\n"
    "Merge, Enter, ...; or that is lowered to those before a run: While, If,\n"
    "Case, calls), one per line: the op name, then for each type attribute\n"
    "ATTR=dtype,dtype,... the dtypes its kernels accept.\n";

/* The dtypes of attr `a` that op's kernels take: the kernels' union, within
 * what TensorFlow's OpDef allows. */
static void print_types(const dfx_registry *r, const char *op, const dfx_op_attr *a) {
  uint64_t mask = dfx__registry_has_kernel(r, op) ? dfx__registry_kernel_types(r, op, a->name) : ~(uint64_t)0;
  if (a->allowed) mask &= a->allowed;
  printf(" %s=", a->name);
  const char *sep = "";
  for (int t = 1; t < 64; t++)
    if (mask >> t & 1 && dfx__dtype_valid(t)) {
      printf("%s%s", sep, dfx_dtype_name((dfx_dtype)t));
      sep = ",";
    }
}

int dfx__cmd_ops(int argc, char **argv) {
  if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
    fputs(ops_help, stdout);
    return DFX_EXIT_OK;
  }
  if (argc != 1) return dfx__cli_usage("ops", "unexpected argument '%s'", argv[1]);
  dfx_status *st = dfx_status_new();
  const dfx_registry *r = st ? dfx__lib_registry(st) : NULL;
  if (!r) {
    dfx__cli_error("%s", st ? dfx_status_message(st) : "out of memory");
    dfx_status_free(st);
    return DFX_EXIT_ERROR;
  }
  for (int i = 0; i < dfx__op_count(); i++) {
    const char *op = dfx__op_name(i);
    const dfx_op_def *d = dfx__op_get(op);
    /* Control-flow ops run in the engine, functional ones (TF2's While,
     * If, calls) are lowered into those before a run: neither needs a kernel. */
    if (!d || !(dfx__registry_has_kernel(r, op) || dfx__ctrl_class(op) != DFX_CTRL_NONE || dfx__lower_op(op)))
      continue;
    printf("%s", op);
    for (int k = 0; k < d->n_attrs; k++)
      if (d->attrs[k].kind == DFX_ATTR_TYPE || (d->attrs[k].kind == DFX_ATTR_LIST && d->attrs[k].elem == DFX_ATTR_TYPE))
        print_types(r, op, &d->attrs[k]);
    putchar('\n');
  }
  dfx_status_free(st);
  return fflush(stdout) == 0 ? DFX_EXIT_OK : DFX_EXIT_ERROR;
}
