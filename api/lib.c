/* lib.c - library-wide public calls (the version string, dfx_free) and the
 * process-wide kernel registry that sessions and passes use. */
#include "lib.h"

#include <uv.h>

#include "alloc.h"
#include "ckpt.h"
#include "dfexec.h"
#include "status.h"

#define DFX_STR_(x) #x
#define DFX_STR(x) DFX_STR_(x)

const char *dfx_version(void) {
  return DFX_STR(DFX_VERSION_MAJOR) "." DFX_STR(DFX_VERSION_MINOR) "." DFX_STR(DFX_VERSION_PATCH);
}

void dfx_free(void *p) { dfx__free(p); }

/* ---- the kernel registry ---- */

static dfx_registry *registry;
static dfx_status registry_err;
static uv_once_t registry_once = UV_ONCE_INIT;

/* The registry lives for the whole process, outside the allocation hook
 * (tests that count allocations build it before installing theirs). */
static void build_registry(void) {
  dfx__status_clear(&registry_err);
  dfx_registry *r = dfx__registry_new();
  if (!r) {
    dfx__status_set(&registry_err, DFX_ENOMEM, "out of memory building the kernel registry");
    return;
  }
  dfx__kernels_register_all(r);
  dfx__ckpt_kernels(r); /* SaveV2, RestoreV2: they need the checkpoint layer */
  if (dfx__registry_seal(r, &registry_err) == DFX_OK) registry = r;
}

const dfx_registry *dfx__lib_registry(dfx_status *st) {
  uv_once(&registry_once, build_registry);
  if (!registry) dfx__status_copy(st, &registry_err);
  return registry;
}
