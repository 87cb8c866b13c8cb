/* fuzz_import_text.c - libFuzzer target: text-format GraphDef import.
 * Exercises the pbtext parser (every message in proto/ through the GraphDef
 * descriptor), then the same graph checks as the binary target. */
#include <stdint.h>

#include "fuzz_common.h"
#include "graph_import.h"

int FZ_ENTRY(const uint8_t *data, size_t size) {
  fz_limits();
  dfx_status *st = dfx_status_new();
  dfx_graph *g = NULL;
  if (dfx__graph_import_ex(data, size, DFX_FORMAT_TEXT, &g, st) == DFX_OK) fz_walk_graph(g);
  else fz_check_status(st);
  dfx_graph_free(g);
  dfx_status_free(st);
  return 0;
}
