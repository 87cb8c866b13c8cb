/* step.c - per-run state kernels can reach (step.h): the resources handed
 * to the run, freed in reverse order when it ends. */
#include "step.h"

#include <string.h>

#include "alloc.h"

dfx_code dfx__step_init(dfx_step *s) {
  memset(s, 0, sizeof *s);
  return uv_mutex_init(&s->mu) ? DFX_EINTERNAL : DFX_OK;
}

void dfx__step_destroy(dfx_step *s) {
  for (int i = s->n_res - 1; i >= 0; i--) s->res[i].free_fn(s->res[i].obj);
  dfx__free(s->res);
  uv_mutex_destroy(&s->mu);
  memset(s, 0, sizeof *s);
}

