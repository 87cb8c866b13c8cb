/* node_sig.h - completing a node from its op signature.
 * Shared by the importer and by tests that build nodes by hand: fill attr
 * defaults, then derive input/output counts and dtypes. */
#ifndef DFX_NODE_SIG_H
#define DFX_NODE_SIG_H

#include "node.h"
#include "op_def.h"

/* Appends missing attrs that have defaults in `def`. */
dfx_code dfx__node_fill_defaults(dfx_node *n, const dfx_op_def *def, dfx_status *st);
/* Computes the expanded input and output dtype lists of `n` (n->in_types,
 * n->out_types, n->n_out; *n_in_expected receives the number of data inputs
 * the signature asks for). Errors name the missing or mistyped attr. */
dfx_code dfx__node_resolve_types(dfx_node *n, const dfx_op_def *def, int *n_in_expected, dfx_status *st);

/* Checks n's attrs against def the way TF's ValidateNodeDef does, after
 * dfx__node_fill_defaults: every attr def lists is present with the declared
 * kind; ints and list lengths respect ">= min"; types, list(type) elements,
 * strings and list(string) elements are in the allowed sets; no type attr
 * holds a reference dtype. Attrs whose names start with '_' are always
 * allowed; attrs def does not list are accepted (see the comment in
 * node_sig.c). Borrows n and def. Returns DFX_EINVAL with a message that
 * names node, op and attr ("Node 'p' (Pack): attr 'N' = 0 is below the
 * minimum 1"). */
dfx_code dfx__node_check_attrs(const dfx_node *n, const dfx_op_def *def, dfx_status *st);

#endif
