/* graph_import.h - internal import and file entry points shared by the CLI
 * and tests. */
#ifndef DFX_GRAPH_IMPORT_H
#define DFX_GRAPH_IMPORT_H

#include <stddef.h>

#include "graph.h"
#include "status.h"

enum { DFX_FORMAT_AUTO = 0, DFX_FORMAT_BINARY = 1, DFX_FORMAT_TEXT = 2 };
/* Imports GraphDef bytes (binary, text, or AUTO: detected from the bytes)
 * into a final graph; on success *out is new. */
dfx_code dfx__graph_import_ex(const void *buf, size_t len, int format, dfx_graph **out, dfx_status *st);
/* The same, stopping before dfx__graph_finalize: the nodes, attrs and
 * resolved inputs in a graph still being edited (import options edit it
 * before it is checked). */
dfx_code dfx__graph_import_unfinalized(const void *buf, size_t len, int format, dfx_graph **out, dfx_status *st);
dfx_code dfx__graph_load_ex(const char *path, dfx_graph **out, dfx_status *st);
/* Builds a graph from an unpacked Tensorflow__GraphDef (passed as void*). */
dfx_code dfx__graph_from_proto(const void *graphdef, dfx_graph **out, dfx_status *st);
/* One NodeDef (a Tensorflow__NodeDef) into n's name, op, device and attrs,
 * and one AttrValue into a (a zeroed attr whose name the caller sets); for
 * function bodies. On error n / a may hold part: dfx__node_clear /
 * dfx__attr_clear frees it. */
dfx_code dfx__node_from_proto(const void *nodedef, dfx_node *n, dfx_status *st);
dfx_code dfx__attr_from_proto(const void *attr_value, dfx_attr *a, dfx_status *st);
/* DFX_FORMAT_TEXT or DFX_FORMAT_BINARY, from the bytes. */
int dfx__format_detect(const void *buf, size_t len);
/* Format by file extension (.pbtxt/.txt text, .pb binary, else AUTO). */
int dfx__format_from_path(const char *path);
/* Writes len bytes to the file `path` (replacing it). DFX_EIO naming it. */
dfx_code dfx__write_file(const char *path, const void *buf, size_t len, dfx_status *st);
/* Reads a whole file into a new dfx__malloc buffer. */
dfx_code dfx__read_file(const char *path, char **data, size_t *len, dfx_status *st);

#endif
