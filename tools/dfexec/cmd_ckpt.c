/* cmd_ckpt.c - `dfexec ckpt PREFIX`: the tensors of a TensorFlow checkpoint
 * (tensor bundle), one per line as "NAME DTYPE SHAPE" (shape "[4,3]", "[]"
 * for a scalar), sorted by name, like TF's inspect_checkpoint. --verify
 * also reads every tensor, checking its checksum. */
#include <string.h>

#include "cli.h"

static const char ckpt_help[] =
    "usage: dfexec ckpt PREFIX [--verify]\n"
    "\n"
    "Lists the tensors of the TensorFlow checkpoint PREFIX (PREFIX.index and its\n"
    "PREFIX.data-* shards), one per line: name, dtype and shape. --verify also\n"
    "reads every tensor and checks its checksum.\n";

int dfx__cmd_ckpt(int argc, char **argv) {
  const char *prefix = NULL;
  bool verify = false;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      fputs(ckpt_help, stdout);
      return DFX_EXIT_OK;
    }
    if (strcmp(argv[i], "--verify") == 0) verify = true;
    else if (argv[i][0] == '-' && argv[i][1]) return dfx__cli_usage("ckpt", "unknown option '%s'", argv[i]);
    else if (prefix) return dfx__cli_usage("ckpt", "unexpected argument '%s'", argv[i]);
    else prefix = argv[i];
  }
  if (!prefix) return dfx__cli_usage("ckpt", "missing checkpoint PREFIX");
  size_t pl = strlen(prefix);
  /* Accept the index file's name for the prefix, as TF's tools do. */
  char buf[4096];
  snprintf(buf, sizeof buf, "%s", prefix);
  if (pl > 6 && strcmp(buf + pl - 6, ".index") == 0) buf[pl - 6] = 0;
  dfx_status *st = dfx_status_new();
  dfx_checkpoint *c = NULL;
  int rc = DFX_EXIT_OK;
  if (dfx_checkpoint_open(buf, &c, st) != DFX_OK) {
    dfx__cli_error("%s", dfx_status_message(st));
    rc = DFX_EXIT_ERROR;
    goto done;
  }
  for (int i = 0; i < dfx_checkpoint_count(c); i++) {
    int64_t dims[DFX_MAX_DIMS];
    int nd = dfx_checkpoint_shape(c, i, dims);
    const char *name = dfx_checkpoint_name(c, i);
    printf("%s %s [", name, dfx_dtype_name(dfx_checkpoint_dtype(c, i)));
    for (int d = 0; d < nd; d++) printf("%s%lld", d ? "," : "", (long long)dims[d]);
    printf("]\n");
    if (verify) {
      dfx_tensor *t = NULL;
      if (dfx_checkpoint_read(c, name, &t, st) != DFX_OK) {
        dfx__cli_error("%s", dfx_status_message(st));
        rc = DFX_EXIT_ERROR;
      }
      dfx_tensor_free(t);
    }
  }
done:
  dfx_checkpoint_close(c);
  dfx_status_free(st);
  return rc;
}
