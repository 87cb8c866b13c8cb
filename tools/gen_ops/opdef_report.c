/* opdef_report.c - reports on the op signatures, for people porting them.
 *   dfx-opdef-report time [REPS]   parse time of every row of op_table_tf.c
 *   dfx-opdef-report compat        every difference between a kernel file's
 *                                  signature and TensorFlow's OpDef of that op
 *   dfx-opdef-report attrs GRAPH... node attrs the op's signature does not list
 *                                  (TF's ValidateNodeDef rejects them), per op
 *   dfx-opdef-report dump          every parsed TF row in a canonical text form
 *                                  that check_table.py compares with ops.pbtxt
 * Not part of the library or its tests; README.md next to it says how its
 * output was used. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dtype.h"
#include "graph_import.h"
#include "kernel.h"
#include "status.h"

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

static int cmd_time(int reps) {
  double best = 1e30;
  for (int r = 0; r < reps; r++) {
    double t0 = now_ms();
    for (const dfx_op_src *o = dfx__op_table_tf; o->name; o++) {
      dfx_op_def *d;
      dfx_status st;
      if (dfx__op_def_parse(o, &d, &st) != DFX_OK) {
        fprintf(stderr, "%s\n", st.msg);
        return 1;
      }
      dfx__op_def_free(d);
    }
    double t = now_ms() - t0;
    if (t < best) best = t;
  }
  printf("parsed and freed %d rows: best of %d runs %.3f ms (%.2f us per row)\n", dfx__op_table_tf_count, reps, best,
         best * 1e3 / dfx__op_table_tf_count);
  return 0;
}

/* ---- attr values as text: one form for people and for check_table.py ---- */

/* Appends printf-style text to buf at *o, never past cap. */
__attribute__((format(printf, 4, 5))) static void put(char *buf, size_t cap, size_t *o, const char *fmt, ...) {
  if (*o >= cap) return;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf + *o, cap - *o, fmt, ap);
  va_end(ap);
  if (n > 0) *o += (size_t)n;
}

/* One value of kind k stored at p (a dfx_attr's union, or a list element):
 * strings quoted with \xHH for anything but printable ASCII, floats to 9
 * digits (exact for float32), dtypes by numpy name. */
static void put_value(char *buf, size_t cap, size_t *o, dfx_attr_kind k, const void *p) {
  switch (k) {
    case DFX_ATTR_S: {
      const dfx_str *s = p;
      put(buf, cap, o, "'");
      for (size_t i = 0; i < s->len; i++) {
        unsigned char ch = (unsigned char)s->ptr[i];
        if (ch >= 32 && ch < 127 && ch != '\\' && ch != '\'') put(buf, cap, o, "%c", ch);
        else put(buf, cap, o, "\\x%02x", ch);
      }
      put(buf, cap, o, "'");
      break;
    }
    case DFX_ATTR_I: put(buf, cap, o, "%lld", (long long)*(const int64_t *)p); break;
    case DFX_ATTR_F: put(buf, cap, o, "%.9g", *(const float *)p); break;
    case DFX_ATTR_B: put(buf, cap, o, "%s", *(const bool *)p ? "true" : "false"); break;
    case DFX_ATTR_TYPE: put(buf, cap, o, "%s", dfx_dtype_name(*(const dfx_dtype *)p)); break;
    case DFX_ATTR_SHAPE: {
      const dfx_shape *sh = p;
      if (sh->rank < 0) {
        put(buf, cap, o, "unknown");
        break;
      }
      put(buf, cap, o, "[");
      for (int i = 0; i < sh->rank; i++) put(buf, cap, o, "%s%lld", i ? ", " : "", (long long)sh->dims[i]);
      put(buf, cap, o, "]");
      break;
    }
    case DFX_ATTR_TENSOR: {
      const dfx_tensor *t = *(dfx_tensor *const *)p;
      put(buf, cap, o, "tensor(%s, [", dfx_dtype_name((dfx_dtype)t->dtype));
      for (int i = 0; i < t->ndims; i++) put(buf, cap, o, "%s%lld", i ? ", " : "", (long long)t->dims[i]);
      put(buf, cap, o, "]");
      for (int64_t i = 0; i < t->count; i++) put(buf, cap, o, ", %.9g", dfx__tensor_get_f64(t, i));
      put(buf, cap, o, ")");
      break;
    }
    default: put(buf, cap, o, "<%s>", dfx__attr_kind_name(k));
  }
}

/* A whole attr value: a scalar, or "[a, b]" for a list. */
static const char *fmt_value(char *buf, size_t cap, const dfx_attr *v) {
  size_t o = 0;
  buf[0] = 0;
  if (v->kind != DFX_ATTR_LIST) {
    put_value(buf, cap, &o, v->kind, &v->v);
    return buf;
  }
  size_t esz = dfx__attr_elem_size(v->v.list.kind);
  put(buf, cap, &o, "[");
  for (int k = 0; k < v->v.list.n; k++) {
    put(buf, cap, &o, "%s", k ? ", " : "");
    put_value(buf, cap, &o, v->v.list.kind, (const char *)v->v.list.v.i + esz * (size_t)k);
  }
  put(buf, cap, &o, "]");
  return buf;
}

static const char *fmt_attr_default(char *buf, size_t cap, const dfx_op_attr *a) {
  if (!a->has_default) snprintf(buf, cap, "(none)");
  else fmt_value(buf, cap, &a->def);
  return buf;
}

/* ---- compat: one line per difference ---- */

static void fmt_arg(char *buf, size_t cap, const dfx_op_arg *a) {
  snprintf(buf, cap, "%s: %s%s%s%s%s%s", a->name, a->number_attr ? a->number_attr : "", a->number_attr ? " * " : "",
           a->is_ref ? "Ref(" : "",
           a->type_attr ? a->type_attr : a->type_list_attr ? a->type_list_attr : dfx_dtype_name(a->type),
           a->type_list_attr ? " (list)" : "", a->is_ref ? ")" : "");
}

static int n_diffs;

static void diff(const char *op, const char *what, const char *ours, const char *tf) {
  printf("%s\t%s\tours: %s\tTF: %s\n", op, what, ours, tf);
  n_diffs++;
}

static void compare_args(const char *op, const char *side, const dfx_op_arg *h, int nh, const dfx_op_arg *t, int nt) {
  char a[256], b[256], what[64];
  for (int i = 0; i < nh || i < nt; i++) {
    if (i < nh) fmt_arg(a, sizeof a, &h[i]);
    else snprintf(a, sizeof a, "(none)");
    if (i < nt) fmt_arg(b, sizeof b, &t[i]);
    else snprintf(b, sizeof b, "(none)");
    if (strcmp(a, b) == 0) continue;
    snprintf(what, sizeof what, "%s %d", side, i);
    diff(op, what, a, b);
  }
}

static void fmt_types(char *buf, size_t cap, uint32_t mask) {
  size_t o = 0;
  buf[0] = 0;
  if (!mask) snprintf(buf, cap, "any");
  for (int t = 1; t < DFX_DTYPE_END_ && o < cap; t++)
    if (mask & (1u << t)) o += (size_t)snprintf(buf + o, cap - o, "%s%s", o ? " " : "", dfx_dtype_name((dfx_dtype)t));
}

static void compare_attr(const char *op, const dfx_op_attr *h, const dfx_op_attr *t) {
  char a[1024], b[1024], what[128];
  if (strcmp(h->type, t->type) != 0) {
    snprintf(what, sizeof what, "attr %s kind", h->name);
    diff(op, what, h->type, t->type);
  }
  fmt_attr_default(a, sizeof a, h);
  fmt_attr_default(b, sizeof b, t);
  if (strcmp(a, b) != 0) {
    snprintf(what, sizeof what, "attr %s default", h->name);
    diff(op, what, a, b);
  }
  if (h->allowed != t->allowed) {
    char only_h[512], only_t[512];
    fmt_types(only_h, sizeof only_h, h->allowed & ~t->allowed);
    fmt_types(only_t, sizeof only_t, t->allowed & ~h->allowed);
    snprintf(what, sizeof what, "attr %s allowed types", h->name);
    if (!h->allowed || !t->allowed) {
      fmt_types(a, sizeof a, h->allowed);
      fmt_types(b, sizeof b, t->allowed);
    } else {
      snprintf(a, sizeof a, "also %s", (h->allowed & ~t->allowed) ? only_h : "-");
      snprintf(b, sizeof b, "also %s", (t->allowed & ~h->allowed) ? only_t : "-");
    }
    diff(op, what, a, b);
  }
  fmt_value(a, sizeof a, &h->allowed_s);
  fmt_value(b, sizeof b, &t->allowed_s);
  if (strcmp(a, b) != 0) {
    snprintf(what, sizeof what, "attr %s allowed values", h->name);
    diff(op, what, h->allowed_s.v.list.n ? a : "any", t->allowed_s.v.list.n ? b : "any");
  }
  if (h->has_min != t->has_min || h->min != t->min) {
    snprintf(a, sizeof a, h->has_min ? ">= %lld" : "none", (long long)h->min);
    snprintf(b, sizeof b, t->has_min ? ">= %lld" : "none", (long long)t->min);
    snprintf(what, sizeof what, "attr %s minimum", h->name);
    diff(op, what, a, b);
  }
}

static void compare_op(const char *op, const dfx_op_def *h, const dfx_op_def *t) {
  compare_args(op, "input", h->in, h->n_in, t->in, t->n_in);
  compare_args(op, "output", h->out, h->n_out, t->out, t->n_out);
  for (int i = 0; i < h->n_attrs; i++) {
    const dfx_op_attr *ta = dfx__op_def_attr(t, h->attrs[i].name);
    if (ta) compare_attr(op, &h->attrs[i], ta);
    else diff(op, "attr", h->attrs[i].name, "(absent)");
  }
  for (int i = 0; i < t->n_attrs; i++) {
    if (dfx__op_def_attr(h, t->attrs[i].name)) continue;
    char b[1200];
    char d[1024];
    fmt_attr_default(d, sizeof d, &t->attrs[i]);
    snprintf(b, sizeof b, "%s: %s = %s", t->attrs[i].name, t->attrs[i].type, d);
    diff(op, "attr", "(absent)", b);
  }
}

static int cmd_compat(const dfx_registry *r) {
  int n_hand = 0, n_same = 0;
  for (int i = 0; i < dfx__registry_op_count(r); i++) {
    const dfx_op_def *any = dfx__registry_op_at(r, i);
    if (!any) continue;
    const dfx_op_def *h = dfx__registry_op_kernel_file(r, any->name), *t = dfx__registry_op_tf(r, any->name);
    if (!h) continue;
    n_hand++;
    if (!t) {
      printf("%s\t(op)\tours: declared\tTF: no such op\n", h->name);
      continue;
    }
    int before = n_diffs;
    compare_op(h->name, h, t);
    /* The kernel's flag is what keeps a node from being treated as a pure function. */
    const dfx_kernel_def *k = dfx__registry_kernel_any(r, h->name);
    bool ks = k && (k->flags & DFX_KERNEL_STATEFUL), ts = t->flags & DFX_OP_STATEFUL;
    if (k && ks != ts) diff(h->name, "stateful", ks ? "kernel flag DFX_KERNEL_STATEFUL" : "no", ts ? "is_stateful" : "no");
    n_same += n_diffs == before;
  }
  printf("# %d ops have a kernel-file signature; %d of them match TF's OpDef in everything compared (args, attrs,"
         " kernel statefulness); %d differences\n",
         n_hand, n_same, n_diffs);
  return 0;
}

/* ---- attrs: attrs a graph's nodes carry that their op's signature lacks ---- */

typedef struct {
  char key[192];
  int nodes, graphs, last_graph;
} tally;

static int cmd_attrs(int argc, char **argv) {
  static tally t[4096];
  int nt = 0, n_graphs = 0, n_nodes = 0, n_failed = 0, n_internal = 0;
  for (int gi = 0; gi < argc; gi++) {
    dfx_graph *g = NULL;
    dfx_status st;
    if (dfx__graph_load_ex(argv[gi], DFX_IMPORT_ALLOW_UNKNOWN_OPS, &g, &st) != DFX_OK) {
      printf("import failed: %s\n", st.msg);
      n_failed++;
      continue;
    }
    n_graphs++;
    for (int i = 0; i < g->n_nodes; i++) {
      const dfx_node *n = &g->nodes[i];
      n_nodes++;
      if (!n->def) continue;
      for (int k = 0; k < n->n_attrs; k++) {
        n_internal += n->attrs[k].name[0] == '_';
        if (n->attrs[k].name[0] == '_' || dfx__op_def_attr(n->def, n->attrs[k].name)) continue;
        char key[192];
        snprintf(key, sizeof key, "%s.%s", n->op, n->attrs[k].name);
        int j = 0;
        while (j < nt && strcmp(t[j].key, key) != 0) j++;
        if (j == nt && nt < 4096) {
          snprintf(t[nt].key, sizeof t[nt].key, "%s", key);
          t[nt++].last_graph = -1;
        }
        if (j == nt) continue;
        t[j].nodes++;
        if (t[j].last_graph != gi) t[j].graphs++, t[j].last_graph = gi;
      }
    }
    dfx_graph_free(g);
  }
  for (int j = 0; j < nt; j++) printf("%s\t%d nodes in %d graphs\n", t[j].key, t[j].nodes, t[j].graphs);
  printf("# %d graphs imported (%d failed), %d nodes, %d distinct op.attr pairs not in the signature"
         " (and %d '_' attrs, always allowed)\n", n_graphs, n_failed, n_nodes, nt, n_internal);
  return 0;
}

/* ---- dump: one line per TF op, every field import and validation use ---- */

static void dump_arg(const char *io, const dfx_op_arg *a) {
  printf(" %s(%s, %s, %s, %s, %s, %d)", io, a->name, a->type ? dfx_dtype_name(a->type) : "-",
         a->type_attr ? a->type_attr : "-", a->number_attr ? a->number_attr : "-",
         a->type_list_attr ? a->type_list_attr : "-", a->is_ref);
}

static int cmd_dump(void) {
  static char buf[1 << 16];
  for (const dfx_op_src *o = dfx__op_table_tf; o->name; o++) {
    dfx_op_def *d;
    dfx_status st;
    if (dfx__op_def_parse(o, &d, &st) != DFX_OK) {
      fprintf(stderr, "%s\n", st.msg);
      return 1;
    }
    printf("%s flags=%u", d->name, d->flags);
    for (int i = 0; i < d->n_in; i++) dump_arg("in", &d->in[i]);
    for (int i = 0; i < d->n_out; i++) dump_arg("out", &d->out[i]);
    for (int i = 0; i < d->n_attrs; i++) {
      const dfx_op_attr *a = &d->attrs[i];
      char types[512];
      fmt_types(types, sizeof types, a->allowed);
      printf(" attr(%s, %s, min=", a->name, a->type);
      if (a->has_min) printf("%lld", (long long)a->min);
      else printf("none");
      printf(", types=%s, strings=%s", types, a->allowed_s.v.list.n ? fmt_value(buf, sizeof buf, &a->allowed_s) : "any");
      printf(", default=%s)", fmt_attr_default(buf, sizeof buf, a));
    }
    printf("\n");
    dfx__op_def_free(d);
  }
  return 0;
}

int main(int argc, char **argv) {
  dfx_status st;
  const dfx_registry *r = dfx__registry_get(&st);
  if (!r) {
    fprintf(stderr, "registry: %s\n", st.msg);
    return 1;
  }
  if (argc >= 2 && strcmp(argv[1], "time") == 0) return cmd_time(argc > 2 ? atoi(argv[2]) : 20);
  if (argc == 2 && strcmp(argv[1], "compat") == 0) return cmd_compat(r);
  if (argc >= 2 && strcmp(argv[1], "attrs") == 0) return cmd_attrs(argc - 2, argv + 2);
  if (argc == 2 && strcmp(argv[1], "dump") == 0) return cmd_dump();
  fprintf(stderr, "usage: dfx-opdef-report time [REPS] | compat | attrs GRAPH... | dump\n");
  return 2;
}
