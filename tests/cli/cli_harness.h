/* cli_harness.h - helpers for the dfexec command tests: running the built
 * executable with captured output, paths to test data, a small JSON parser
 * (used as a validator too) and a strict .npy reader. */
#ifndef DFX_CLI_HARNESS_H
#define DFX_CLI_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Result of one dfexec invocation. Strings are NUL-terminated, malloc'd. */
typedef struct cli_result {
  int status;   /* exit status, 128 + signal, or 99 on a sanitizer report */
  char *out;
  char *err;
} cli_result;

/* Runs $DFEXEC with the NULL-terminated args (not including argv[0]). */
cli_result cli_run(const char *const *args);
void cli_result_free(cli_result *r);

/* Paths (static buffers, one per call site kind). */
const char *cli_conformance(const char *name); /* <corpus>/tf-text/NAME; skips the test without a corpus */
const char *cli_data(const char *name);        /* tests/cli/data/NAME */
/* A path inside a fresh temporary directory of this test process; the
 * returned buffer is reused after 32 calls. */
const char *cli_tmp(const char *name);

/* Reads a whole file (malloc'd, NUL-terminated); NULL if it cannot. */
char *cli_read(const char *path, size_t *len);
bool cli_write(const char *path, const void *data, size_t len);
/* True if `prog` is an executable somewhere on PATH. */
bool cli_have_program(const char *prog);

/* ---- JSON ---- */

typedef enum { JS_NULL, JS_BOOL, JS_NUM, JS_STR, JS_ARR, JS_OBJ } js_kind;

typedef struct js {
  js_kind kind;
  bool b;
  double num;
  char *str;          /* JS_STR (decoded UTF-8) */
  int n;              /* JS_ARR / JS_OBJ element count */
  struct js **items;  /* elements, or object values */
  char **keys;        /* object keys */
} js;

/* Parses strict JSON (RFC 8259: no trailing commas, no NaN); NULL and a
 * message in err when invalid. */
js *js_parse(const char *text, char *err, size_t errn);
void js_free(js *v);
const js *js_get(const js *obj, const char *key); /* NULL if absent */
const js *js_at(const js *arr, int i);            /* NULL if out of range */

/* ---- npy ---- */

typedef struct npy {
  char descr[32];
  int ndims;
  int64_t dims[8];
  const unsigned char *data; /* points into `raw` */
  size_t nbytes;
  char *raw;
} npy;

/* Strict reader for what dfexec must write: version 1.0, header dict with
 * exactly 'descr', 'fortran_order': False and 'shape' in that order, padded
 * with spaces to a multiple of 64 bytes and ending in '\n', and exactly
 * count * itemsize data bytes. false + err on any deviation. */
bool npy_read_strict(const char *path, npy *out, char *err, size_t errn);
void npy_free(npy *n);
/* Writes a v1.0 .npy file with the given header fields and raw data. */
bool npy_write(const char *path, const char *descr, bool fortran, const int64_t *dims, int ndims, const void *data,
               size_t nbytes);

#endif
