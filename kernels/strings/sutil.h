/* sutil.h - what the strings family's kernel files share: string element
 * helpers, a growable byte buffer held to the tensor byte limit, TF's dtype
 * names for messages, int32 attr reads, polling, and Fingerprint64.
 *
 * Output strings are built by the kernels from input values (splits,
 * n-grams, formatting), so their total size is checked against
 * dfx__tensor_limit() as they grow: a hostile input fails with DFX_ELIMIT
 * instead of exhausting memory. */
#ifndef DFX_STRINGS_SUTIL_H
#define DFX_STRINGS_SUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel.h"

/* Long loops call dfx__kctx_poll once per this many elements of work. */
#define STR_POLL_MASK (((int64_t)1 << 20) - 1)
static inline dfx_code str_poll(dfx_kctx *ctx, int64_t done) {
  return (done & STR_POLL_MASK) == 0 ? dfx__kctx_poll(ctx) : DFX_OK;
}

/* Sets *s to a copy of p[0..n) (freeing what it held). False when out of
 * memory (s is then empty). */
bool dfx__s_set(dfx_str *s, const char *p, size_t n);

/* A byte buffer that grows, kept under the tensor byte limit. */
typedef struct dfx_sbuf {
  char *p;
  size_t len, cap;
} dfx_sbuf;
/* Appends p[0..n); on failure records DFX_ENOMEM or DFX_ELIMIT in ctx and
 * returns that code. */
dfx_code dfx__sbuf_add(dfx_kctx *ctx, dfx_sbuf *b, const char *p, size_t n);
void dfx__sbuf_free(dfx_sbuf *b);

/* Counts `add` more output bytes against the tensor byte limit; fails ctx
 * with DFX_ELIMIT (naming `what`) when the total passes it. */
dfx_code dfx__s_budget(dfx_kctx *ctx, size_t *total, size_t add, const char *what);

/* TensorFlow's DataTypeString: "float", "int64", "string", "resource". */
const char *dfx__s_tf_type(dfx_dtype t);

/* An int attr read into int32 as TF's kernels do: out of range fails
 * ("Attr width has value 4294967296 out of range for an int32"). */
dfx_code dfx__s_attr_i32(const dfx_node *n, const char *name, int32_t *out, dfx_status *st);
/* A string attr's bytes (embedded NULs kept); {NULL, 0} when absent. */
dfx_str dfx__s_attr_bytes(const dfx_node *n, const char *name);

/* farmhash's Fingerprint64 (farmhashna::Hash64), which TensorFlow's
 * Fingerprint64 and StringToHashBucketFast use. Little-endian loads. */
uint64_t dfx__s_fingerprint64(const char *s, size_t len);

#endif
