/* lib.c - library-wide public calls: the version string and dfx_free. */
#include "alloc.h"
#include "dfexec.h"

#define DFX_STR_(x) #x
#define DFX_STR(x) DFX_STR_(x)

const char *dfx_version(void) {
  return DFX_STR(DFX_VERSION_MAJOR) "." DFX_STR(DFX_VERSION_MINOR) "." DFX_STR(DFX_VERSION_PATCH);
}

void dfx_free(void *p) { dfx__free(p); }
