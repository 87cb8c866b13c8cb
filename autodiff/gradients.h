/* gradients.h - reverse-mode differentiation as a graph transformation
 * (tf.gradients semantics): adds to a graph the nodes that compute
 * d(sum of ys)/d(xs). The public entry point is dfx_graph_gradients
 * (api/gradients_api.c); this is the layer that walks the graph. */
#ifndef DFX_AD_GRADIENTS_H
#define DFX_AD_GRADIENTS_H

#include "graph.h"

/* Adds the gradient subgraph to g, which must be final (consumer edges are
 * read) and is left final on success. ys and xs are tensors of g; grad_ys
 * (NULL, or n_ys ports with node -1 for "ones") are the initial gradients
 * of the ys. New nodes are named under `prefix` ("gradients/..."). dx
 * receives, for each x, its gradient tensor, or node -1 when x does not
 * reach any y through differentiable tensors. Errors: DFX_EINVAL (a
 * PreventGradient on the path, naming the node and its message), DFX_EUNIMPL
 * (an op on the path without a gradient function, naming the node and op),
 * DFX_ENOMEM. On error g is in the editing state and must be discarded. */
dfx_code dfx__gradients(dfx_graph *g, const dfx_graph_port *ys, int n_ys, const dfx_graph_port *xs, int n_xs,
                        const dfx_graph_port *grad_ys, const char *prefix, dfx_graph_port *dx, dfx_status *st);

#endif
