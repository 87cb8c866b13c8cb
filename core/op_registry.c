/* op_registry.c - lookups in the op tables (op_registry.h), with each row
 * parsed on its op's first lookup: parsing all 1563 of TF's rows would cost
 * every process ~4 ms and ~3 MB (tools/gen_ops/README.md) for the few dozen
 * ops a graph uses. The parsed definitions live as long as the process. */
#include "op_registry.h"

#include <stdlib.h>
#include <string.h>
#include <uv.h>

/* Parsed rows, indexed like the tables: internal rows first, then TF's.
 * Allocated once with the C allocator (not the library hook: it outlives
 * every object a user makes); each slot is written once, atomically. */
static dfx_op_def **parsed;
static uv_once_t parsed_once = UV_ONCE_INIT;

static void make_parsed(void) {
  parsed = calloc((size_t)(dfx__op_table_internal_count + dfx__op_table_tf_count), sizeof *parsed);
}

static int cmp_row(const void *key, const void *row) {
  return strcmp((const char *)key, ((const dfx_op_src *)row)->name);
}

/* The index of op's row (internal first), or -1. */
static int row_index(const char *op) {
  const dfx_op_src *r = bsearch(op, dfx__op_table_internal, (size_t)dfx__op_table_internal_count,
                                sizeof dfx__op_table_internal[0], cmp_row);
  if (r) return (int)(r - dfx__op_table_internal);
  r = dfx__op_table_tf_find(op);
  return r ? dfx__op_table_internal_count + (int)(r - dfx__op_table_tf) : -1;
}

static const dfx_op_src *row_at(int i) {
  return i < dfx__op_table_internal_count ? &dfx__op_table_internal[i]
                                          : &dfx__op_table_tf[i - dfx__op_table_internal_count];
}

static dfx_code def_at(int i, const dfx_op_def **out, dfx_status *st) {
  uv_once(&parsed_once, make_parsed);
  if (!parsed) return dfx__status_set(st, DFX_ENOMEM, "out of memory setting up the op registry");
  dfx_op_def *d = __atomic_load_n(&parsed[i], __ATOMIC_ACQUIRE);
  if (!d) {
    dfx_code c = dfx__op_def_parse(row_at(i), &d, st);
    if (c != DFX_OK) return c;
    dfx_op_def *seen = NULL;
    if (!__atomic_compare_exchange_n(&parsed[i], &seen, d, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
      dfx__op_def_free(d); /* another thread published first */
      d = seen;
    }
  }
  *out = d;
  return DFX_OK;
}

dfx_code dfx__op_find(const char *op, const dfx_op_def **out, dfx_status *st) {
  *out = NULL;
  int i = row_index(op);
  return i < 0 ? DFX_OK : def_at(i, out, st);
}

const dfx_op_def *dfx__op_get(const char *op) {
  const dfx_op_def *d;
  return dfx__op_find(op, &d, NULL) == DFX_OK ? d : NULL;
}

dfx_code dfx__op_parse_all(dfx_status *st) {
  for (int i = 0; i < dfx__op_count(); i++) {
    const dfx_op_def *d;
    dfx_code c = def_at(i, &d, st);
    if (c != DFX_OK) return c;
  }
  return DFX_OK;
}

int dfx__op_count(void) { return dfx__op_table_internal_count + dfx__op_table_tf_count; }

const char *dfx__op_name(int i) { return i >= 0 && i < dfx__op_count() ? row_at(i)->name : NULL; }
