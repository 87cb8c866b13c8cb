/* fuzz_import_bin.c - libFuzzer target: binary GraphDef import.
 * Any byte string must import cleanly or fail with a code and a message;
 * a graph that imports is walked through every public accessor. */
#include <stdint.h>

#include "fuzz_common.h"
#include "graph_import.h"

int FZ_ENTRY(const uint8_t *data, size_t size) {
  fz_limits();
  dfx_status *st = dfx_status_new();
  dfx_graph *g = NULL;
  if (dfx__graph_import_ex(data, size, DFX_FORMAT_BINARY, &g, st) == DFX_OK) fz_walk_graph(g);
  else fz_check_status(st);
  dfx_graph_free(g);
  dfx_status_free(st);
  return 0;
}
