/* op_registry.h - the signature of every op dfexec knows: TensorFlow's
 * whole registry (op_table_tf.c, generated from TF's OpList) and the
 * internal ops that list lacks (op_table_internal.c). Nothing here knows
 * about kernels: import checks graphs against these definitions, and a run
 * looks its kernels up separately (kernel.h). */
#ifndef DFX_OP_REGISTRY_H
#define DFX_OP_REGISTRY_H

#include "op_def.h"
#include "status.h"

/* The definition of op (borrowed; lives as long as the process), or *out
 * NULL for an op no table knows. A row is parsed on its op's first lookup,
 * so this can fail: DFX_ENOMEM, or DFX_EINTERNAL for a malformed row (a bug).
 * Thread-safe and lock-free: racing first lookups each parse, one
 * compare-and-swap publishes, the others free their copy. */
dfx_code dfx__op_find(const char *op, const dfx_op_def **out, dfx_status *st);
/* The same for callers with no error path: NULL also when parsing failed. */
const dfx_op_def *dfx__op_get(const char *op);
/* Parses every row not parsed yet. Tests that count allocations call it
 * before installing their allocator, so no lazily parsed def (process
 * lifetime) is counted as their leak. */
dfx_code dfx__op_parse_all(dfx_status *st);
/* Every known op name, internal ones first, then TF's sorted; i in
 * [0, dfx__op_count()). For listings. */
int dfx__op_count(void);
const char *dfx__op_name(int i);

/* op_table_internal.c: ops TensorFlow's OpList does not list (names
 * starting with '_', and the odd public op missing there), sorted by name,
 * ending with a {NULL} row. */
extern const dfx_op_src dfx__op_table_internal[];
extern const int dfx__op_table_internal_count;

#endif
