/* cli_harness.c - see cli_harness.h. The JSON parser and the .npy reader are
 * written independently of the dfexec sources so the tests check the output
 * format rather than agree with the code that produced it. */
#include <criterion/criterion.h>

#include "cli_harness.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* ---- files and paths ---- */

char *cli_read(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 4096, n = 0;
  char *buf = malloc(cap + 1);
  while (buf) {
    n += fread(buf + n, 1, cap - n, f);
    if (n < cap) break;
    char *nb = realloc(buf, 2 * cap + 1);
    if (!nb) {
      free(buf);
      buf = NULL;
      break;
    }
    buf = nb;
    cap *= 2;
  }
  fclose(f);
  if (buf) buf[n] = 0;
  if (len) *len = n;
  return buf;
}

bool cli_write(const char *path, const void *data, size_t len) {
  FILE *f = fopen(path, "wb");
  if (!f) return false;
  bool ok = fwrite(data, 1, len, f) == len;
  return fclose(f) == 0 && ok;
}

static const char *env_or(const char *name, const char *def) {
  const char *v = getenv(name);
  return v && *v ? v : def;
}

const char *cli_conformance(const char *name) {
  static char buf[4096];
  const char *root = getenv("DFX_CONFORMANCE_DIR");
  if (!root || !*root) cr_skip_test("no conformance corpus (configure with -Dconformance_dir=DIR)");
  snprintf(buf, sizeof buf, "%s/tf-text/%s", root, name);
  return buf;
}

const char *cli_data(const char *name) {
  static char buf[4096];
  snprintf(buf, sizeof buf, "%s/tests/cli/data/%s", env_or("DFX_SOURCE_ROOT", "."), name);
  return buf;
}

static const char *tmp_dir(void) {
  static char dir[256];
  if (!dir[0]) {
    snprintf(dir, sizeof dir, "%s/dfexec-cli-XXXXXX", env_or("TMPDIR", "/tmp"));
    if (!mkdtemp(dir)) abort();
  }
  return dir;
}

/* A ring of buffers: a test may hold up to 32 paths at once. */
const char *cli_tmp(const char *name) {
  static char buf[32][4096];
  static int next;
  char *b = buf[next++ % 32];
  snprintf(b, 4096, "%s/%s", tmp_dir(), name);
  return b;
}

bool cli_have_program(const char *prog) {
  const char *path = getenv("PATH");
  if (!path) return false;
  char *copy = strdup(path), *save = NULL;
  bool found = false;
  for (char *d = strtok_r(copy, ":", &save); d && !found; d = strtok_r(NULL, ":", &save)) {
    char full[4096];
    snprintf(full, sizeof full, "%s/%s", d, prog);
    found = access(full, X_OK) == 0;
  }
  free(copy);
  return found;
}

/* ---- running dfexec ---- */

cli_result cli_run(const char *const *args) {
  cli_result r = {.status = -1};
  const char *exe = env_or("DFEXEC", "dfexec");
  int n = 0;
  while (args[n]) n++;
  char **argv = calloc((size_t)n + 2, sizeof *argv);
  argv[0] = (char *)exe;
  for (int i = 0; i < n; i++) argv[i + 1] = (char *)args[i];
  char out_path[4096], err_path[4096];
  snprintf(out_path, sizeof out_path, "%s/stdout.txt", tmp_dir());
  snprintf(err_path, sizeof err_path, "%s/stderr.txt", tmp_dir());
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 2, err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid;
  if (posix_spawn(&pid, exe, &fa, NULL, argv, environ) == 0) {
    int ws;
    while (waitpid(pid, &ws, 0) < 0 && errno == EINTR) {
    }
    r.status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
  }
  posix_spawn_file_actions_destroy(&fa);
  free(argv);
  r.out = cli_read(out_path, NULL);
  r.err = cli_read(err_path, NULL);
  if (!r.out) r.out = strdup("");
  if (!r.err) r.err = strdup("");
  /* Under the sanitizer build a report must fail the test even where the
   * test expects exit status 1, which is also ASan's. */
  if (strstr(r.err, "Sanitizer") || strstr(r.err, "runtime error:")) {
    fprintf(stderr, "sanitizer report from dfexec:\n%s\n", r.err);
    r.status = 99;
  }
  return r;
}

void cli_result_free(cli_result *r) {
  free(r->out);
  free(r->err);
  r->out = r->err = NULL;
}

/* ---- JSON ---- */

typedef struct jp {
  const char *p;
  char *err;
  size_t errn;
  int depth;
} jp;

static js *jfail(jp *P, const char *msg) {
  if (!P->err[0]) snprintf(P->err, P->errn, "%s at '%.20s'", msg, P->p);
  return NULL;
}

static void jws(jp *P) {
  while (*P->p == ' ' || *P->p == '\t' || *P->p == '\n' || *P->p == '\r') P->p++;
}

static js *jnew(js_kind k) {
  js *v = calloc(1, sizeof *v);
  v->kind = k;
  return v;
}

static void put_utf8(char **o, unsigned c) {
  unsigned char *u = (unsigned char *)*o;
  if (c < 0x80) *u++ = (unsigned char)c;
  else if (c < 0x800) *u++ = (unsigned char)(0xc0 | c >> 6), *u++ = (unsigned char)(0x80 | (c & 0x3f));
  else if (c < 0x10000)
    *u++ = (unsigned char)(0xe0 | c >> 12), *u++ = (unsigned char)(0x80 | ((c >> 6) & 0x3f)),
    *u++ = (unsigned char)(0x80 | (c & 0x3f));
  else
    *u++ = (unsigned char)(0xf0 | c >> 18), *u++ = (unsigned char)(0x80 | ((c >> 12) & 0x3f)),
    *u++ = (unsigned char)(0x80 | ((c >> 6) & 0x3f)), *u++ = (unsigned char)(0x80 | (c & 0x3f));
  *o = (char *)u;
}

static char *jstring(jp *P) {
  P->p++; /* opening quote */
  char *buf = malloc(strlen(P->p) * 2 + 8), *o = buf;
  for (;;) {
    unsigned char c = (unsigned char)*P->p;
    if (c == '"') break;
    if (c == 0 || c < 0x20) {
      free(buf);
      jfail(P, c ? "control character in string" : "unterminated string");
      return NULL;
    }
    P->p++;
    if (c != '\\') {
      *o++ = (char)c;
      continue;
    }
    c = (unsigned char)*P->p++;
    const char *map = strchr("\"\"\\\\//b\bf\fn\nr\rt\t", c);
    if (c && map && (map - "\"\"\\\\//b\bf\fn\nr\rt\t") % 2 == 0) {
      *o++ = map[1];
      continue;
    }
    if (c != 'u') {
      free(buf);
      jfail(P, "bad escape");
      return NULL;
    }
    unsigned cp = 0;
    for (int i = 0; i < 4; i++) {
      char h = *P->p++;
      int d = h >= '0' && h <= '9' ? h - '0' : (h | 32) >= 'a' && (h | 32) <= 'f' ? (h | 32) - 'a' + 10 : -1;
      if (d < 0) {
        free(buf);
        jfail(P, "bad \\u escape");
        return NULL;
      }
      cp = cp * 16 + (unsigned)d;
    }
    put_utf8(&o, cp);
  }
  P->p++;
  *o = 0;
  return buf;
}

static js *jvalue(jp *P);

static js *jcontainer(jp *P, bool obj) {
  js *v = jnew(obj ? JS_OBJ : JS_ARR);
  P->p++;
  jws(P);
  if (*P->p == (obj ? '}' : ']')) {
    P->p++;
    return v;
  }
  for (;;) {
    jws(P);
    char *key = NULL;
    if (obj) {
      if (*P->p != '"' || !(key = jstring(P))) {
        js_free(v);
        return jfail(P, "expected a key");
      }
      jws(P);
      if (*P->p++ != ':') {
        free(key);
        js_free(v);
        return jfail(P, "expected ':'");
      }
    }
    js *item = jvalue(P);
    if (!item) {
      free(key);
      js_free(v);
      return NULL;
    }
    v->items = realloc(v->items, sizeof *v->items * (size_t)(v->n + 1));
    v->keys = realloc(v->keys, sizeof *v->keys * (size_t)(v->n + 1));
    v->items[v->n] = item;
    v->keys[v->n++] = key;
    jws(P);
    if (*P->p == ',') {
      P->p++;
      continue;
    }
    if (*P->p == (obj ? '}' : ']')) {
      P->p++;
      return v;
    }
    js_free(v);
    return jfail(P, obj ? "expected ',' or '}'" : "expected ',' or ']'");
  }
}

static js *jvalue(jp *P) {
  jws(P);
  if (++P->depth > 200) return jfail(P, "too deep");
  js *v = NULL;
  if (*P->p == '{' || *P->p == '[') {
    v = jcontainer(P, *P->p == '{');
  } else if (*P->p == '"') {
    char *s = jstring(P);
    if (s) {
      v = jnew(JS_STR);
      v->str = s;
    }
  } else if (strncmp(P->p, "true", 4) == 0 || strncmp(P->p, "false", 5) == 0) {
    v = jnew(JS_BOOL);
    v->b = *P->p == 't';
    P->p += v->b ? 4 : 5;
  } else if (strncmp(P->p, "null", 4) == 0) {
    v = jnew(JS_NULL);
    P->p += 4;
  } else {
    /* RFC 8259 number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
    const char *s = P->p, *q = s;
    if (*q == '-') q++;
    if (*q == '0') q++;
    else if (*q >= '1' && *q <= '9') while (*q >= '0' && *q <= '9') q++;
    else return jfail(P, "expected a value");
    if (*q == '.') {
      if (!(*++q >= '0' && *q <= '9')) return jfail(P, "bad fraction");
      while (*q >= '0' && *q <= '9') q++;
    }
    if (*q == 'e' || *q == 'E') {
      q++;
      if (*q == '+' || *q == '-') q++;
      if (!(*q >= '0' && *q <= '9')) return jfail(P, "bad exponent");
      while (*q >= '0' && *q <= '9') q++;
    }
    v = jnew(JS_NUM);
    v->num = strtod(s, NULL);
    P->p = q;
  }
  P->depth--;
  return v;
}

js *js_parse(const char *text, char *err, size_t errn) {
  jp P = {.p = text, .err = err, .errn = errn};
  err[0] = 0;
  js *v = jvalue(&P);
  if (!v) return NULL;
  jws(&P);
  if (*P.p) {
    js_free(v);
    return jfail(&P, "trailing text");
  }
  return v;
}

void js_free(js *v) {
  if (!v) return;
  for (int i = 0; i < v->n; i++) {
    js_free(v->items[i]);
    if (v->keys) free(v->keys[i]);
  }
  free(v->items);
  free(v->keys);
  free(v->str);
  free(v);
}

const js *js_get(const js *obj, const char *key) {
  if (!obj || obj->kind != JS_OBJ) return NULL;
  for (int i = 0; i < obj->n; i++)
    if (strcmp(obj->keys[i], key) == 0) return obj->items[i];
  return NULL;
}

const js *js_at(const js *arr, int i) {
  if (!arr || arr->kind != JS_ARR || i < 0 || i >= arr->n) return NULL;
  return arr->items[i];
}

/* ---- npy ---- */

static size_t itemsize(const char *descr) {
  const char *p = descr + 2;
  size_t n = (size_t)strtoul(p, NULL, 10);
  return descr[1] == 'U' ? 4 * n : n;
}

bool npy_read_strict(const char *path, npy *o, char *err, size_t errn) {
  memset(o, 0, sizeof *o);
  size_t len;
  char *raw = cli_read(path, &len);
  const unsigned char *u = (const unsigned char *)raw;
#define NPY_FAIL(...)                   \
  do {                                  \
    snprintf(err, errn, __VA_ARGS__);   \
    free(raw);                          \
    o->raw = NULL;                      \
    return false;                       \
  } while (0)
  if (!raw) NPY_FAIL("cannot read %s", path);
  if (len < 10 || memcmp(raw, "\x93NUMPY", 6) != 0) NPY_FAIL("bad magic");
  if (u[6] != 1 || u[7] != 0) NPY_FAIL("version %d.%d, want 1.0", u[6], u[7]);
  size_t hl = (size_t)u[8] | (size_t)u[9] << 8;
  if (10 + hl > len) NPY_FAIL("header longer than file");
  if ((10 + hl) % 64 != 0) NPY_FAIL("header not padded to 64 bytes (%zu)", 10 + hl);
  if (raw[10 + hl - 1] != '\n') NPY_FAIL("header does not end in newline");
  char hdr[1024];
  if (hl >= sizeof hdr) NPY_FAIL("header too long");
  memcpy(hdr, raw + 10, hl);
  hdr[hl] = 0;
  int pos = 0;
  if (sscanf(hdr, "{'descr': '%31[^']', 'fortran_order': False, 'shape': (%n", o->descr, &pos) != 1 || !pos)
    NPY_FAIL("unexpected header: %s", hdr);
  const char *p = hdr + pos;
  while (*p != ')') {
    char *end;
    long long d = strtoll(p, &end, 10);
    if (end == p || o->ndims >= 8) NPY_FAIL("bad shape in %s", hdr);
    o->dims[o->ndims++] = d;
    p = end;
    if (*p == ',') p++;
    if (*p == ' ') p++;
  }
  /* A 1-d shape must be written "(n,)", as Python does. */
  if (o->ndims == 1 && p[-1] != ',') NPY_FAIL("1-d shape without trailing comma: %s", hdr);
  if (strncmp(p, "), }", 4) != 0) NPY_FAIL("unexpected header end: %s", hdr);
  for (p += 4; *p == ' '; p++) {
  }
  if (*p != '\n' || p[1]) NPY_FAIL("header padding is not spaces then newline");
  if (!strchr("<|", o->descr[0])) NPY_FAIL("descr %s is not little-endian", o->descr);
  size_t count = 1;
  for (int i = 0; i < o->ndims; i++) count *= (size_t)o->dims[i];
  o->data = u + 10 + hl;
  o->nbytes = len - 10 - hl;
  if (o->nbytes != count * itemsize(o->descr)) NPY_FAIL("data is %zu bytes, want %zu", o->nbytes, count * itemsize(o->descr));
  o->raw = raw;
  return true;
#undef NPY_FAIL
}

void npy_free(npy *n) {
  free(n->raw);
  n->raw = NULL;
}

bool npy_write(const char *path, const char *descr, bool fortran, const int64_t *dims, int ndims, const void *data,
               size_t nbytes) {
  char hdr[512];
  int o = snprintf(hdr, sizeof hdr, "{'descr': '%s', 'fortran_order': %s, 'shape': (", descr, fortran ? "True" : "False");
  for (int i = 0; i < ndims; i++) o += snprintf(hdr + o, sizeof hdr - (size_t)o, "%lld,", (long long)dims[i]);
  o += snprintf(hdr + o, sizeof hdr - (size_t)o, "), }");
  while ((10 + o + 1) % 16) hdr[o++] = ' ';
  hdr[o++] = '\n';
  size_t len = 10 + (size_t)o + nbytes;
  unsigned char *buf = malloc(len);
  memcpy(buf, "\x93NUMPY\x01\x00", 8);
  buf[8] = (unsigned char)(o & 0xff);
  buf[9] = (unsigned char)(o >> 8);
  memcpy(buf + 10, hdr, (size_t)o);
  memcpy(buf + 10 + o, data, nbytes);
  bool ok = cli_write(path, buf, len);
  free(buf);
  return ok;
}
