/* status.c - result code names and dfx_status. */
#include "status.h"

#include <stdio.h>
#include <string.h>

#include "alloc.h"

const char *dfx_code_name(dfx_code code) {
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
  if (n + 1 >= sizeof st->msg) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(st->msg + n, sizeof st->msg - n, fmt, ap);
  va_end(ap);
}

dfx_code dfx__status_copy(dfx_status *dst, const dfx_status *src) {
  if (!src) return DFX_OK;
  if (dst && dst != src) memcpy(dst, src, sizeof *dst);
  return src->code;
}

#ifndef NDEBUG
#include <stdlib.h>

#include "invariant.h"

void dfx__assert_fail(const char *cond, const char *file, int line) {
  fprintf(stderr, "dfexec: internal invariant broken at %s:%d: %s\n", file, line, cond);
  abort();
}
#endif
