/* optimize.c - the layer's entry for the layers above: an optimised copy
 * of a graph. The session's optimizer (api/) calls it once per run
 * signature, dfx_graph_optimize once per call; the graph they start from is
 * final and shared, so passes always edit a private copy. */
#include <string.h>

#include "pass.h"

dfx_code dfx__passes_optimized_copy(const dfx_graph *g, const char *list, const dfx_pass_ports *ports,
                                    const dfx_registry *reg, dfx_graph **out, dfx_pass_report *report,
                                    dfx_status *st) {
  *out = NULL;
  if (report) memset(report, 0, sizeof *report);
  dfx_code c = dfx__passes_check(list, st);
  dfx_graph *copy = NULL;
  if (c == DFX_OK) c = dfx__graph_clone(g, &copy, st);
  if (c == DFX_OK) c = dfx__graph_finalize(copy, st);
  if (c == DFX_OK) c = dfx__passes_run(copy, list, ports, reg, report, st);
  if (c != DFX_OK) {
    dfx_graph_free(copy);
    if (report) dfx__pass_report_free(report);
    return c;
  }
  *out = copy;
  return DFX_OK;
}
