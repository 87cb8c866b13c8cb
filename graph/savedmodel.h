/* savedmodel.h - the containers TensorFlow wraps graphs in: a SavedModel
 * (saved_model.pb: MetaGraphDefs by tag set) or one MetaGraphDef. Here: tell
 * one from a GraphDef and say what it holds (the plain-GraphDef readers use
 * that for their error message), and take the GraphDef out of it (with its
 * function library; variables stay in the variables/ bundle beside it,
 * which this does not read). */
#ifndef DFX_SAVEDMODEL_H
#define DFX_SAVEDMODEL_H

#include <stdbool.h>
#include <stddef.h>

#include "graph.h"

/* If buf is a binary SavedModel or MetaGraphDef, writes one paragraph
 * saying which, with its tag sets and signatures (inputs -> outputs), into
 * msg and returns true; false (msg untouched) otherwise. */
bool dfx__savedmodel_describe(const void *buf, size_t len, char *msg, size_t n);
/* The graph of the MetaGraphDef whose tags are exactly `tags` (comma list;
 * NULL or "": the only one, else the one tagged "serve"), as a final graph
 * (*out new). DFX_EINVAL when buf is neither container or no tag set
 * matches (naming the ones there), import errors as dfx_graph_import. */
dfx_code dfx__savedmodel_import(const void *buf, size_t len, const char *tags, dfx_graph **out, dfx_status *st);
/* The same, returning the packed GraphDef bytes (a new dfx__malloc block)
 * instead: for `dfexec convert`. */
dfx_code dfx__savedmodel_graphdef(const void *buf, size_t len, const char *tags, void **bytes, size_t *n,
                                  dfx_status *st);

#endif
