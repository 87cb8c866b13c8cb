/* session.h - the executor's side of dfx_session_new: a session over a
 * given kernel registry. The public call (api/session_api.c) passes the
 * library's registry; tests may pass one of their own. */
#ifndef DFX_SESSION_H
#define DFX_SESSION_H

#include "graph.h"
#include "kernel.h"

/* dfx_session_new with the kernels of `reg` (borrowed, sealed, must outlive
 * the session). Same contract otherwise. */
dfx_code dfx__session_new(const dfx_graph *g, const dfx_registry *reg, const dfx_session_options *opts,
                          dfx_session **out, dfx_status *st);

#endif
