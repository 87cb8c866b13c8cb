/* status.h - dfx_status internals and the message helpers used across the library.
 * A status is a code plus a bounded message buffer; setting it never allocates,
 * so error paths work when memory is exhausted. */
#ifndef DFX_STATUS_H
#define DFX_STATUS_H

#include <stdarg.h>

#include "dfexec.h"

#define DFX_STATUS_MSG_MAX 2048

struct dfx_status {
  dfx_code code;
  char msg[DFX_STATUS_MSG_MAX];
};

/* Sets code and a printf-formatted message (st may be NULL); returns code. */
dfx_code dfx__status_set(dfx_status *st, dfx_code code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Like dfx__status_set, but keeps an error already recorded in st: for code
 * that meets several errors in one pass and must report the first. */
dfx_code dfx__status_set_first(dfx_status *st, dfx_code code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
dfx_code dfx__status_vset(dfx_status *st, dfx_code code, const char *fmt, va_list ap);
/* Appends formatted text to the message (truncating at the buffer end). */
void dfx__status_append(dfx_status *st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void dfx__status_clear(dfx_status *st);
/* Copies src into dst (either may be NULL); returns src's code. */
dfx_code dfx__status_copy(dfx_status *dst, const dfx_status *src);

#endif
