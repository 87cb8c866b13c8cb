/* opdef_report.c - reports on the op signatures, for people porting them.
 *   dfx-opdef-report time [REPS]   parse time of every row of op_table_tf.c
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
#include "op_registry.h"
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

static void fmt_types(char *buf, size_t cap, uint32_t mask) {
  size_t o = 0;
  buf[0] = 0;
  if (!mask) snprintf(buf, cap, "any");
  for (int t = 1; t < DFX_DTYPE_END_ && o < cap; t++)
    if (mask & (1u << t)) o += (size_t)snprintf(buf + o, cap - o, "%s%s", o ? " " : "", dfx_dtype_name((dfx_dtype)t));
}

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
    if (dfx__graph_load_ex(argv[gi], &g, &st) != DFX_OK) {
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
  if (argc >= 2 && strcmp(argv[1], "time") == 0) return cmd_time(argc > 2 ? atoi(argv[2]) : 20);
  if (argc >= 2 && strcmp(argv[1], "attrs") == 0) return cmd_attrs(argc - 2, argv + 2);
  if (argc == 2 && strcmp(argv[1], "dump") == 0) return cmd_dump();
  fprintf(stderr, "usage: dfx-opdef-report time [REPS] | attrs GRAPH... | dump\n");
  return 2;
}
