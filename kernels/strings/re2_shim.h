/* re2_shim.h - the C face of RE2 for the regex kernels (re2_shim.cc is the
 * only C++ file of the project). Patterns use RE2's syntax with RE2's
 * default options, as TensorFlow constructs them (UTF-8, Perl-like
 * classes, leftmost-first), except that RE2 does not log errors. A
 * compiled dfx_re2 is immutable and may be used from several threads. */
#ifndef DFX_STRINGS_RE2_SHIM_H
#define DFX_STRINGS_RE2_SHIM_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dfx_re2 dfx_re2;

/* Compiles pat[0..len). Returns new, or NULL with RE2's error (or "out of
 * memory") in err. */
dfx_re2 *dfx__re2_new(const char *pat, size_t len, char *err, size_t errlen);
void dfx__re2_free(dfx_re2 *re);
/* RE2::GlobalReplace (global) or RE2::Replace of text[0..len) with
 * rewrite[0..rwlen): 1 and *out (new, dfx__malloc; NULL when *outlen is 0)
 * when something was replaced, 0 when not (nothing stored), -1 when memory
 * ran out. */
int dfx__re2_replace(const dfx_re2 *re, const char *text, size_t len, const char *rewrite, size_t rwlen, int global,
                     char **out, size_t *outlen);

#ifdef __cplusplus
}
#endif

#endif
