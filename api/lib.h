/* lib.h - library-wide state the public API sets up on first use: the
 * kernel registry, filled from kernels/all.c. It lives here, at the top,
 * because it is the one place that sees both the kernels and the layers
 * that run them (docs/architecture.md). */
#ifndef DFX_LIB_H
#define DFX_LIB_H

#include "kernel.h"

/* The process-wide kernel registry, built on first use (thread-safe), or
 * NULL with the reason in st (a bad kernel table, no memory). */
const dfx_registry *dfx__lib_registry(dfx_status *st);

#endif
