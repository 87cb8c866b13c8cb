/* status.c - result code names and dfx_status.
 * Setting a status formats into its fixed buffer and never allocates, so the
 * error paths of an out-of-memory failure can still report it. */
#include "status.h"

#include <stdio.h>
#include <string.h>

#include "alloc.h"

const char *dfx_code_name(dfx_code code) {
  /* Generated from DFX_CODE_MAP, so a new code cannot lack a name. */
  switch (code) {
#define XX(name, value, text) \
  case DFX_##name:            \
    return "DFX_" #name;
    DFX_CODE_MAP(XX)
#undef XX
    default:
      return "DFX_UNKNOWN_CODE";
  }
}

dfx_status *dfx_status_new(void) {
  dfx_status *st = dfx__malloc(sizeof *st);
  if (st) dfx__status_clear(st);
  return st;
}

void dfx_status_free(dfx_status *st) { dfx__free(st); }

/* A NULL status is a caller bug: answering DFX_EINVAL, not DFX_OK, keeps it
 * from reading as success. The message of NULL is "", never NULL, so callers
 * may print it unchecked. */
dfx_code dfx_status_code(const dfx_status *st) { return st ? st->code : DFX_EINVAL; }

const char *dfx_status_message(const dfx_status *st) { return st ? st->msg : ""; }

void dfx__status_clear(dfx_status *st) {
  if (!st) return;
  st->code = DFX_OK;
  st->msg[0] = 0;
}

dfx_code dfx__status_vset(dfx_status *st, dfx_code code, const char *fmt, va_list ap) {
  if (!st) return code;
  st->code = code;
  /* Truncates at DFX_STATUS_MSG_MAX rather than allocate. */
  vsnprintf(st->msg, sizeof st->msg, fmt, ap);
  return code;
}

dfx_code dfx__status_set(dfx_status *st, dfx_code code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  dfx__status_vset(st, code, fmt, ap);
  va_end(ap);
  return code;
}

dfx_code dfx__status_set_first(dfx_status *st, dfx_code code, const char *fmt, ...) {
  /* The first error wins, as in TF's executor: later ones are usually its
   * consequences and would hide the cause. */
  if (!st || st->code != DFX_OK) return code;
  va_list ap;
  va_start(ap, fmt);
  dfx__status_vset(st, code, fmt, ap);
  va_end(ap);
  return code;
}

void dfx__status_append(dfx_status *st, const char *fmt, ...) {
  if (!st) return;
  size_t n = strlen(st->msg);
  /* Full: no room is left but the terminator, and sizeof - n would be 1. */
  if (n + 1 >= sizeof st->msg) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(st->msg + n, sizeof st->msg - n, fmt, ap);
  va_end(ap);
}

dfx_code dfx__status_copy(dfx_status *dst, const dfx_status *src) {
  if (!src) return DFX_OK;
  /* memcpy onto itself is undefined, and copying a status to itself is a
   * no-op callers may rely on. */
  if (dst && dst != src) memcpy(dst, src, sizeof *dst);
  return src->code;
}

/* Only debug builds use DFX_ASSERT (invariant.h); release builds compile the
 * checks out, and with them the need for this function. */
#ifndef NDEBUG
#include <stdlib.h>

#include "invariant.h"

void dfx__assert_fail(const char *cond, const char *file, int line) {
  fprintf(stderr, "dfexec: internal invariant broken at %s:%d: %s\n", file, line, cond);
  abort();
}
#endif
