/* kernel_registry.c - the process-wide table of op signatures and kernels.
 * Built once (uv_once) from the tables that kernels/all.c lists and from the
 * names of TensorFlow's OpDefs (op_table_tf.c). An op's signature is the
 * kernel file's when it has one, else TF's (meson option tf_opdefs_first
 * reverses that, to test TF's defs alone). Kernel-file signatures are parsed
 * at build; a TF row only on its op's first lookup, since parsing all 1563
 * would cost every process ~4 ms and ~3 MB (tools/gen_ops/README.md) for the
 * few dozen ops a graph uses. That first lookup is the only write after the
 * build: an atomic publish (tf_def), so lookups take no lock. Lookups happen
 * at import and session creation only; the per-iteration path calls kernels
 * by pointer. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "alloc.h"
#include "dtype.h"
#include "kernel.h"

/* One dtype constraint of a kernel row: attr `name` must be in `mask`. */
typedef struct type_rule {
  char name[32];
  uint64_t mask;             /* bit per dtype */
} type_rule;

#define MAX_RULES 4          /* type attrs one row may constrain */

/* A kernel row with its parsed dtype constraints. */
typedef struct krow {
  const dfx_kernel_def *def;
  int n_rules;
  type_rule rules[MAX_RULES];
  struct krow *next;         /* the op's other rows */
} krow;

typedef struct entry {
  const char *name;          /* key: op name (points into def or kernel table) */
  dfx_op_def *def;           /* signature from a kernel file, or NULL */
  const dfx_op_src *tf_src;  /* TensorFlow's OpDef row, or NULL */
  dfx_op_def *tf_def;        /* tf_src parsed (atomic; NULL until the first lookup) */
  krow *kernels;             /* rows serving this op, in registration order */
} entry;

struct dfx_registry {
  entry *slots;              /* open addressing, cap a power of two */
  uint32_t cap, n;
  entry **order;             /* entries sorted by name, after building */
  dfx_status err;            /* first problem met while building */
};

void dfx__kernels_register_all(dfx_registry *r); /* kernels/all.c */

static uint32_t hash_str(const char *s) {
  uint32_t h = 2166136261u;
  while (*s) h = (h ^ (unsigned char)*s++) * 16777619u;
  return h;
}

static entry *lookup(const dfx_registry *r, const char *name, int insert) {
  if (!r->slots) return NULL;
  for (uint32_t i = hash_str(name) & (r->cap - 1);; i = (i + 1) & (r->cap - 1)) {
    entry *e = &r->slots[i];
    if (!e->name) return insert ? e : NULL;
    if (strcmp(e->name, name) == 0) return e;
  }
}

static int grow(dfx_registry *r) {
  if ((r->n + 1) * 2 <= r->cap) return 0;
  uint32_t ncap = r->cap ? r->cap * 2 : 512;
  entry *old = r->slots;
  uint32_t ocap = r->cap;
  r->slots = dfx__calloc(ncap, sizeof(entry));
  entry **nord = dfx__realloc(r->order, sizeof(entry *) * ncap);
  if (!r->slots || !nord) {
    dfx__free(r->slots);
    r->slots = old;
    if (nord) r->order = nord;
    return -1;
  }
  r->order = nord;
  r->cap = ncap;
  r->n = 0;
  for (uint32_t i = 0; i < ocap; i++) {
    if (!old[i].name) continue;
    entry *e = lookup(r, old[i].name, 1);
    *e = old[i];
    r->n++;
  }
  dfx__free(old);
  return 0;
}

static void reg_error(dfx_registry *r, dfx_code code, const char *fmt, ...) {
  if (r->err.code != DFX_OK) return;
  va_list ap;
  va_start(ap, fmt);
  dfx__status_vset(&r->err, code, fmt, ap);
  va_end(ap);
}

static entry *get_entry(dfx_registry *r, const char *name) {
  entry *e = lookup(r, name, 0);
  if (e) return e;
  if (grow(r)) {
    reg_error(r, DFX_ENOMEM, "out of memory building the op registry");
    return NULL;
  }
  e = lookup(r, name, 1);
  e->name = name;
  r->n++;
  return e;
}

/* ---- kernel rows and their dtypes ---- */

/* Parses a row's "T: {float, int32}; Tidx: {int32, int64}". A bad string
 * is a bug in a kernel file: DFX_EINTERNAL at registry build. */
static int parse_types(dfx_registry *r, const dfx_kernel_def *k, krow *row) {
  const char *p = k->types;
  if (!p) return 0;
  while (*p) {
    while (*p == ' ' || *p == ';') p++;
    if (!*p) break;
    if (row->n_rules == MAX_RULES) goto bad;
    type_rule *rule = &row->rules[row->n_rules++];
    size_t n = strcspn(p, ":");
    if (!p[n] || n == 0 || n >= sizeof rule->name) goto bad;
    memcpy(rule->name, p, n);
    rule->name[n] = 0;
    p += n + 1;
    while (*p == ' ') p++;
    if (*p++ != '{') goto bad;
    for (;;) {
      while (*p == ' ' || *p == ',') p++;
      if (*p == '}') {
        p++;
        break;
      }
      char word[32];
      size_t w = strcspn(p, ",} ");
      if (!p[w] || w == 0 || w >= sizeof word) goto bad;
      memcpy(word, p, w);
      word[w] = 0;
      dfx_dtype t = dfx__dtype_parse(word);
      if (t == DFX_INVALID) goto bad;
      rule->mask |= (uint64_t)1 << t;
      p += w;
    }
  }
  return 0;
bad:
  reg_error(r, DFX_EINTERNAL, "kernel of op %s: bad types string \"%s\"", k->op, k->types);
  return -1;
}

static const type_rule *rule_for(const krow *row, const char *attr) {
  for (int i = 0; i < row->n_rules; i++)
    if (strcmp(row->rules[i].name, attr) == 0) return &row->rules[i];
  return NULL;
}

/* Two rows of one op overlap unless some attr both constrain has disjoint
 * dtype sets: then a node could match both and the choice would be
 * arbitrary. */
static bool rows_overlap(const krow *a, const krow *b) {
  for (int i = 0; i < a->n_rules; i++) {
    const type_rule *o = rule_for(b, a->rules[i].name);
    if (o && !(o->mask & a->rules[i].mask)) return false;
  }
  return true;
}

/* Whether the node's value of a constrained type attr is allowed: a type
 * attr, or every element of a list(type) attr. Attrs the node lacks or that
 * are not types are left to the op signature's checks. On a mismatch *bad
 * receives the offending dtype. */
static bool row_accepts(const krow *row, const dfx_node *n, const type_rule **why, dfx_dtype *bad) {
  for (int i = 0; i < row->n_rules; i++) {
    const type_rule *rule = &row->rules[i];
    const dfx_attr *a = dfx__node_attr(n, rule->name);
    if (!a) continue;
    if (a->kind == DFX_ATTR_TYPE && !(rule->mask >> a->v.type & 1)) {
      *why = rule;
      *bad = a->v.type;
      return false;
    }
    if (a->kind == DFX_ATTR_LIST && a->v.list.kind == DFX_ATTR_TYPE)
      for (int k = 0; k < a->v.list.n; k++)
        if (!(rule->mask >> a->v.list.v.type[k] & 1)) {
          *why = rule;
          *bad = a->v.list.v.type[k];
          return false;
        }
  }
  return true;
}

void dfx__registry_add(dfx_registry *r, const dfx_op_src *ops, const dfx_kernel_def *kernels) {
  for (const dfx_op_src *o = ops; o && o->name; o++) {
    entry *e = get_entry(r, o->name);
    if (!e) return;
    if (e->def) {
      reg_error(r, DFX_EINTERNAL, "op %s has two signatures", o->name);
      return;
    }
    dfx_status st;
    dfx__status_clear(&st);
    if (dfx__op_def_parse(o, &e->def, &st) != DFX_OK) {
      reg_error(r, st.code, "%s", st.msg);
      return;
    }
    e->name = e->def->name;
  }
  for (const dfx_kernel_def *k = kernels; k && k->op; k++) {
    entry *e = get_entry(r, k->op);
    if (!e) return;
    krow *row = calloc(1, sizeof *row);
    if (!row) {
      reg_error(r, DFX_ENOMEM, "out of memory building the kernel registry");
      return;
    }
    row->def = k;
    if (parse_types(r, k, row)) {
      free(row);
      return;
    }
    krow **tail = &e->kernels;
    for (; *tail; tail = &(*tail)->next)
      if (rows_overlap(*tail, row)) {
        reg_error(r, DFX_EINTERNAL, "op %s has two kernels for the same dtypes", k->op);
        free(row);
        return;
      }
    *tail = row;
  }
}

static void add_tf_rows(dfx_registry *r) {
  for (const dfx_op_src *o = dfx__op_table_tf; o->name; o++) {
    entry *e = get_entry(r, o->name);
    if (!e) return;
    e->tf_src = o;
  }
}

static dfx_registry *g_registry;
static uv_once_t g_once = UV_ONCE_INIT;

static int cmp_entry(const void *a, const void *b) {
  return strcmp((*(entry *const *)a)->name, (*(entry *const *)b)->name);
}

static void build(void) {
  /* The registry lives for the whole process. Tests that count allocations
   * build it (dfx__registry_get) before installing their allocator. */
  dfx_registry *r = calloc(1, sizeof *r);
  if (!r) return;
  dfx__kernels_register_all(r);
  add_tf_rows(r);
  /* A sorted list of entries gives `dfexec info` and tests a stable order. */
  uint32_t k = 0;
  for (uint32_t i = 0; i < r->cap; i++)
    if (r->slots[i].name) r->order[k++] = &r->slots[i];
  qsort(r->order, k, sizeof(entry *), cmp_entry);
  for (uint32_t i = 0; i < k && r->err.code == DFX_OK; i++)
    if (r->order[i]->kernels && !r->order[i]->def && !r->order[i]->tf_src)
      reg_error(r, DFX_EINTERNAL, "op %s has a kernel but no signature", r->order[i]->name);
  g_registry = r;
}

const dfx_registry *dfx__registry_get(dfx_status *st) {
  uv_once(&g_once, build);
  if (!g_registry) {
    dfx__status_set(st, DFX_ENOMEM, "out of memory building the op registry");
    return NULL;
  }
  if (g_registry->err.code != DFX_OK) {
    dfx__status_copy(st, &g_registry->err);
    return NULL;
  }
  return g_registry;
}

#ifndef DFX_TF_OPDEFS_FIRST
#define DFX_TF_OPDEFS_FIRST 0
#endif

/* TF's def of e (NULL if TF has none), parsing its row on first use. Threads
 * may race here: each parses, one compare-and-swap publishes, and the others
 * free their copy, so tf_def changes once and readers need no lock. The def
 * lives as long as the process, in memory from the allocator of that moment. */
static dfx_code tf_def(entry *e, const dfx_op_def **out, dfx_status *st) {
  *out = NULL;
  if (!e->tf_src) return DFX_OK;
  dfx_op_def *d = __atomic_load_n(&e->tf_def, __ATOMIC_ACQUIRE);
  if (!d) {
    dfx_code c = dfx__op_def_parse(e->tf_src, &d, st);
    if (c != DFX_OK) return c;
    dfx_op_def *seen = NULL;
    if (!__atomic_compare_exchange_n(&e->tf_def, &seen, d, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
      dfx__op_def_free(d); /* another thread published first */
      d = seen;
    }
  }
  *out = d;
  return DFX_OK;
}

static dfx_code entry_def(entry *e, const dfx_op_def **out, dfx_status *st) {
  *out = e->def;
  if (e->def && !(DFX_TF_OPDEFS_FIRST && e->tf_src)) return DFX_OK;
  return tf_def(e, out, st);
}

dfx_code dfx__registry_find_op(const dfx_registry *r, const char *op, const dfx_op_def **out, dfx_status *st) {
  entry *e = lookup(r, op, 0);
  *out = NULL;
  return e ? entry_def(e, out, st) : DFX_OK;
}

const dfx_op_def *dfx__registry_op(const dfx_registry *r, const char *op) {
  const dfx_op_def *d;
  return dfx__registry_find_op(r, op, &d, NULL) == DFX_OK ? d : NULL;
}

const dfx_op_def *dfx__registry_op_tf(const dfx_registry *r, const char *op) {
  entry *e = lookup(r, op, 0);
  const dfx_op_def *d = NULL;
  return e && tf_def(e, &d, NULL) == DFX_OK ? d : NULL;
}

const dfx_op_def *dfx__registry_op_kernel_file(const dfx_registry *r, const char *op) {
  entry *e = lookup(r, op, 0);
  return e ? e->def : NULL;
}

dfx_code dfx__registry_parse_all(const dfx_registry *r, dfx_status *st) {
  for (uint32_t i = 0; i < r->n; i++) {
    const dfx_op_def *d;
    dfx_code c = tf_def(r->order[i], &d, st);
    if (c != DFX_OK) return c;
  }
  return DFX_OK;
}


const dfx_kernel_def *dfx__registry_kernel_for(const dfx_registry *r, const dfx_node *node, dfx_status *st) {
  entry *e = lookup(r, node->op, 0);
  if (!e || !e->kernels) {
    dfx__status_set(st, DFX_EUNIMPL, "no kernel for this op");
    return NULL;
  }
  const type_rule *why = NULL;
  dfx_dtype bad = DFX_INVALID;
  for (const krow *row = e->kernels; row; row = row->next)
    if (row_accepts(row, node, &why, &bad)) return row->def;
  /* Name what would have worked: the union over rows for that attr. */
  uint64_t mask = dfx__registry_kernel_types(r, node->op, why->name);
  dfx__status_set(st, DFX_EUNIMPL, "no %s kernel for %s=%s (dfexec has %s kernels for %s in {", node->op, why->name,
                  dfx_dtype_name(bad), node->op, why->name);
  const char *sep = "";
  for (int t = 1; t < 64; t++)
    if (mask >> t & 1 && dfx__dtype_valid(t)) {
      dfx__status_append(st, "%s%s", sep, dfx_dtype_name((dfx_dtype)t));
      sep = ", ";
    }
  dfx__status_append(st, "})");
  return NULL;
}

bool dfx__registry_has_kernel(const dfx_registry *r, const char *op) { return dfx__registry_kernel_any(r, op) != NULL; }

const dfx_kernel_def *dfx__registry_kernel_any(const dfx_registry *r, const char *op) {
  entry *e = lookup(r, op, 0);
  return e && e->kernels ? e->kernels->def : NULL;
}

uint64_t dfx__registry_kernel_types(const dfx_registry *r, const char *op, const char *attr) {
  entry *e = lookup(r, op, 0);
  uint64_t mask = 0;
  for (const krow *row = e ? e->kernels : NULL; row; row = row->next) {
    const type_rule *rule = rule_for(row, attr);
    mask |= rule ? rule->mask : ~(uint64_t)0;
  }
  return mask;
}

int dfx__registry_op_count(const dfx_registry *r) { return (int)r->n; }

const dfx_op_def *dfx__registry_op_at(const dfx_registry *r, int i) {
  const dfx_op_def *d = NULL;
  if (i >= 0 && (uint32_t)i < r->n && entry_def(r->order[i], &d, NULL) != DFX_OK) d = NULL;
  return d;
}
