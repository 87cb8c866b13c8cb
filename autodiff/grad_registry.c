/* grad_registry.c - finding an op's gradient function in the family tables
 * (grad.h). A linear scan: it runs once per differentiated node, never in a
 * step. */
#include <string.h>

#include "grad.h"

static const dfx_grad_def *const tables[] = {dfx__grad_math, dfx__grad_nn, dfx__grad_array, dfx__grad_ta, dfx__grad_extra};

const dfx_grad_def *dfx__grad_find(const char *op) {
  for (size_t t = 0; t < sizeof tables / sizeof *tables; t++)
    for (const dfx_grad_def *d = tables[t]; d->op; d++)
      if (strcmp(d->op, op) == 0) return d;
  return NULL;
}
