/* kernel_registry.c - kernels by op and dtype (kernel.h). A registry is
 * filled once from kernel tables (api/lib.c passes it to kernels/all.c),
 * sealed, and then only read, so lookups need no lock. Lookups happen when a
 * session plans a run; the per-iteration path calls kernels by pointer. Op
 * signatures are not here: they come from core/op_registry.c, which knows
 * nothing about kernels. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "alloc.h"
#include "dtype.h"
#include "invariant.h"
#include "kernel.h"
#include "op_registry.h"

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
  const char *name;          /* key: op name (points into the kernel table) */
  krow *kernels;             /* rows serving this op, in registration order */
} entry;

struct dfx_registry {
  entry *slots;              /* open addressing, cap a power of two */
  uint32_t cap, n;
  entry **order;             /* entries sorted by name, once sealed */
  bool sealed;
  dfx_status err;            /* first problem met while filling it */
};

/* 32-bit FNV-1a. */
static uint32_t hash_str(const char *s) {
  uint32_t h = 2166136261u;
  while (*s) h = (h ^ (unsigned char)*s++) * 16777619u;
  return h;
}

static entry *lookup(const dfx_registry *r, const char *name, int insert) {
  /* grow keeps the table at most half full, so the probe always reaches an
   * empty slot and the loop ends. */
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
  /* `order` grows with the table, so sealing needs no allocation. If either
   * allocation fails the old table stays in place, still valid. */
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
    reg_error(r, DFX_ENOMEM, "out of memory building the kernel registry");
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
    /* The row is dropped on error, so a half-filled rule does not matter. */
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
      /* dfx__dtype_parse returns dtype values below 64, so the shift is defined. */
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

/* The first dtype of node attr `attr` (a type or a list of types) outside
 * `mask`, or DFX_INVALID. */
static dfx_dtype outside(const dfx_node *n, const char *attr, uint64_t mask) {
  const dfx_attr *a = dfx__node_attr(n, attr);
  if (a && a->kind == DFX_ATTR_TYPE && !(mask >> a->v.type & 1)) return a->v.type;
  if (a && a->kind == DFX_ATTR_LIST && a->v.list.kind == DFX_ATTR_TYPE)
    for (int k = 0; k < a->v.list.n; k++)
      if (!(mask >> a->v.list.v.type[k] & 1)) return a->v.list.v.type[k];
  return DFX_INVALID;
}

void dfx__kernels_add(dfx_registry *r, const dfx_kernel_def *kernels) {
  DFX_ASSERT(!r->sealed);
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

/* A row may only constrain the op's type attrs, and only to dtypes the op
 * allows: a kernel declaring more than TensorFlow's OpDef would never see
 * those nodes (import rejects them), so the declaration would be a lie. */
static dfx_code check_rules(const dfx_op_def *d, const krow *row, dfx_status *st) {
  for (int i = 0; i < row->n_rules; i++) {
    const type_rule *rule = &row->rules[i];
    const dfx_op_attr *a = dfx__op_def_attr(d, rule->name);
    bool is_type = a && (a->kind == DFX_ATTR_TYPE || (a->kind == DFX_ATTR_LIST && a->elem == DFX_ATTR_TYPE));
    if (!is_type)
      return dfx__status_set(st, DFX_EINTERNAL, "kernel of op %s constrains '%s', which is not a type attr of the op",
                             d->name, rule->name);
    /* allowed == 0: the op takes any dtype, so no declaration is too wide. */
    uint64_t extra = a->allowed ? rule->mask & ~(uint64_t)a->allowed : 0;
    for (int t = 1; t < 64; t++)
      if (extra >> t & 1)
        return dfx__status_set(st, DFX_EINTERNAL, "kernel of op %s declares %s=%s, which TensorFlow's OpDef does not allow",
                               d->name, rule->name, dfx_dtype_name((dfx_dtype)t));
  }
  return DFX_OK;
}

dfx_registry *dfx__registry_new(void) { return calloc(1, sizeof(dfx_registry)); }

static int cmp_entry(const void *a, const void *b) {
  return strcmp((*(entry *const *)a)->name, (*(entry *const *)b)->name);
}

dfx_code dfx__registry_seal(dfx_registry *r, dfx_status *st) {
  if (r->err.code != DFX_OK) return dfx__status_copy(st, &r->err);
  /* A sorted list of entries gives `dfexec ops` and tests a stable order. */
  uint32_t k = 0;
  for (uint32_t i = 0; i < r->cap; i++)
    if (r->slots[i].name) r->order[k++] = &r->slots[i];
  if (k) qsort(r->order, k, sizeof(entry *), cmp_entry);
  for (uint32_t i = 0; i < k; i++) {
    const dfx_op_def *d;
    dfx_code c = dfx__op_find(r->order[i]->name, &d, st);
    if (c != DFX_OK) return c;
    if (!d) return dfx__status_set(st, DFX_EINTERNAL, "op %s has a kernel but no signature", r->order[i]->name);
    for (const krow *row = r->order[i]->kernels; row; row = row->next)
      if ((c = check_rules(d, row, st)) != DFX_OK) return c;
  }
  r->sealed = true;
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
  /* Rows of one op never overlap (dfx__kernels_add): a node whose type
   * attrs are all set matches one row at most, whatever the order. */
  for (const krow *row = e->kernels; row; row = row->next)
    if (row_accepts(row, node, &why, &bad)) return row->def;
  /* Name an attr whose value no row takes at all, with what would have
   * worked (the union over rows); the last row's complaint could name an
   * attr another row would have accepted. */
  for (const krow *row = e->kernels; row; row = row->next)
    for (int i = 0; i < row->n_rules; i++) {
      const char *attr = row->rules[i].name;
      uint64_t mask = dfx__registry_kernel_types(r, node->op, attr);
      dfx_dtype t = outside(node, attr, mask);
      if (t == DFX_INVALID) continue;
      dfx__status_set(st, DFX_EUNIMPL, "no %s kernel for %s=%s (dfexec has %s kernels for %s in {", node->op, attr,
                      dfx_dtype_name(t), node->op, attr);
      const char *sep = "";
      for (int d = 1; d < 64; d++)
        if (mask >> d & 1 && dfx__dtype_valid(d)) {
          dfx__status_append(st, "%s%s", sep, dfx_dtype_name((dfx_dtype)d));
          sep = ", ";
        }
      dfx__status_append(st, "})");
      return NULL;
    }
  /* Every value is taken by some row, but no row takes them together. */
  dfx__status_set(st, DFX_EUNIMPL, "no %s kernel for the combination", node->op);
  const char *sep = " ";
  for (int i = 0; i < e->kernels->n_rules; i++) {
    const dfx_attr *a = dfx__node_attr(node, e->kernels->rules[i].name);
    if (a && a->kind == DFX_ATTR_TYPE) {
      dfx__status_append(st, "%s%s=%s", sep, a->name, dfx_dtype_name(a->v.type));
      sep = ", ";
    }
  }
  (void)why;
  (void)bad;
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
    /* A row that does not constrain attr takes every dtype for it. */
    mask |= rule ? rule->mask : ~(uint64_t)0;
  }
  return mask;
}

int dfx__registry_count(const dfx_registry *r) { return r->sealed ? (int)r->n : 0; }

const char *dfx__registry_op_name(const dfx_registry *r, int i) {
  return r->sealed && i >= 0 && (uint32_t)i < r->n ? r->order[i]->name : NULL;
}
