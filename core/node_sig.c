/* node_sig.c - attr defaults, dtype resolution and attr validation from op
 * signatures. Validation follows TF's ValidateNodeDef, so a graph TF would
 * refuse is refused at import with the node, op and attr named. */
#include "node_sig.h"

#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "dtype.h"
#include "status.h"

/* TF's AddDefaultsToNodeDef (tf-semantics §1.3): an attr the GraphDef omits
 * takes the OpDef default, so kernels and validation always find it. An
 * attr the GraphDef does carry is never replaced, even by an equal value. */
dfx_code dfx__node_fill_defaults(dfx_node *n, const dfx_op_def *def, dfx_status *st) {
  for (int i = 0; i < def->n_attrs; i++) {
    const dfx_op_attr *a = &def->attrs[i];
    if (!a->has_default || dfx__node_attr(n, a->name)) continue;
    dfx_attr *na = dfx__realloc(n->attrs, sizeof *na * (size_t)(n->n_attrs + 1));
    if (!na) return dfx__status_set(st, DFX_ENOMEM, "out of memory");
    /* n->attrs is updated before the copy can fail, and n_attrs only after it
     * succeeds: on any error the node stays consistent for its owner to free. */
    n->attrs = na;
    if (dfx__attr_copy(&na[n->n_attrs], &a->def) != DFX_OK) return dfx__status_set(st, DFX_ENOMEM, "out of memory");
    /* The OpDef's default value is parsed bare, without a name (op_def.c); the
     * node's attr takes the OpDef attr's name. */
    dfx__free(na[n->n_attrs].name);
    if (!(na[n->n_attrs].name = dfx__strdup(a->name))) {
      dfx__attr_clear(&na[n->n_attrs]);
      return dfx__status_set(st, DFX_ENOMEM, "out of memory");
    }
    n->n_attrs++;
  }
  return DFX_OK;
}

/* Counts how many tensors an argument expands to, and writes their dtypes
 * into types (if not NULL). Returns -1 after filling st on a bad attr. */
static int expand_arg(const dfx_node *n, const dfx_op_arg *a, dfx_dtype *types, dfx_status *st) {
  /* The three ArgDef forms, as in TF: a list(type) attr gives one tensor per
   * listed type; otherwise an optional number attr repeats one type, which a
   * type attr or the fixed type supplies. */
  if (a->type_list_attr) {
    const dfx_attr_list *l = dfx__attr_list(n, a->type_list_attr);
    if (!l) {
      const dfx_attr *at = dfx__node_attr(n, a->type_list_attr);
      if (!at) {
        dfx__status_set(st, DFX_EINVAL, "missing attr '%s' (list(type))", a->type_list_attr);
        return -1;
      }
      dfx__status_set(st, DFX_EINVAL, "attr '%s' must be a list of types", a->type_list_attr);
      return -1;
    }
    if (l->n > 0 && l->kind != DFX_ATTR_TYPE) {
      dfx__status_set(st, DFX_EINVAL, "attr '%s' must be a list of types", a->type_list_attr);
      return -1;
    }
    if (types)
      for (int k = 0; k < l->n; k++) types[k] = l->v.type[k];
    return l->n;
  }
  int count = 1;
  if (a->number_attr) {
    const dfx_attr *na = dfx__node_attr(n, a->number_attr);
    if (!na || na->kind != DFX_ATTR_I) {
      dfx__status_set(st, DFX_EINVAL, "missing or non-int attr '%s'", a->number_attr);
      return -1;
    }
    /* N comes from the GraphDef: the bound keeps a hostile value from sizing a
     * huge dtype array or overflowing the int totals below. */
    if (na->v.i < 0 || na->v.i > 1000000) {
      dfx__status_set(st, DFX_EINVAL, "attr '%s' = %lld is out of range", a->number_attr, (long long)na->v.i);
      return -1;
    }
    count = (int)na->v.i;
  }
  dfx_dtype t = a->type;
  if (a->type_attr) {
    const dfx_attr *ta = dfx__node_attr(n, a->type_attr);
    if (!ta || ta->kind != DFX_ATTR_TYPE) {
      dfx__status_set(st, DFX_EINVAL, "missing or non-type attr '%s'", a->type_attr);
      return -1;
    }
    t = ta->v.type;
  }
  if (types)
    for (int k = 0; k < count; k++) types[k] = t;
  return count;
}

/* Two passes: the first counts and validates (messages go to st), the second
 * fills the array and cannot fail, since it reads the same attrs. */
static dfx_code expand_list(const dfx_node *n, const dfx_op_arg *args, int n_args, dfx_dtype **out, int *count,
                            dfx_status *st) {
  int total = 0;
  for (int i = 0; i < n_args; i++) {
    int c = expand_arg(n, &args[i], NULL, st);
    if (c < 0) return st ? st->code : DFX_EINVAL;
    total += c;
  }
  /* At least one element, so NULL always means out of memory. */
  dfx_dtype *types = dfx__calloc(total ? (size_t)total : 1, sizeof *types);
  if (!types) return dfx__status_set(st, DFX_ENOMEM, "out of memory");
  for (int i = 0, k = 0; i < n_args; i++) k += expand_arg(n, &args[i], types + k, NULL);
  *out = types;
  *count = total;
  return DFX_OK;
}

dfx_code dfx__node_resolve_types(dfx_node *n, const dfx_op_def *def, int *n_in_expected, dfx_status *st) {
  /* Finalisation runs again after every edit and pass, so a node may already
   * have dtypes: they are recomputed from the current attrs, never reused. */
  dfx__free(n->in_types);
  dfx__free(n->out_types);
  n->in_types = n->out_types = NULL;
  dfx_code c = expand_list(n, def->in, def->n_in, &n->in_types, n_in_expected, st);
  if (c != DFX_OK) return c;
  c = expand_list(n, def->out, def->n_out, &n->out_types, &n->n_out, st);
  if (c != DFX_OK) return c;
  return DFX_OK;
}

/* ---- attr validation (TF's ValidateNodeDef and ValidateAttrValue) ---- */

/* Writes "float32, int32" (the dtypes in mask) into buf. */
/* snprintf returns the untruncated length, so o may pass cap; the loop test
 * stops before cap - o could wrap. The same holds in str_set. */
static const char *type_set(uint32_t mask, char *buf, size_t cap) {
  size_t o = 0;
  buf[0] = 0;
  for (int t = 1; t < DFX_DTYPE_END_ && o < cap; t++)
    if (mask & (1u << t)) o += (size_t)snprintf(buf + o, cap - o, "%s%s", o ? ", " : "", dfx_dtype_name((dfx_dtype)t));
  return buf;
}

/* Writes "'NHWC', 'NCHW'" (the strings of l) into buf. */
static const char *str_set(const dfx_attr_list *l, char *buf, size_t cap) {
  size_t o = 0;
  buf[0] = 0;
  for (int k = 0; k < l->n && o < cap; k++)
    o += (size_t)snprintf(buf + o, cap - o, "%s'%.*s'", k ? ", " : "", (int)l->v.s[k].len, l->v.s[k].ptr);
  return buf;
}

static bool str_allowed(const dfx_attr_list *allowed, const dfx_str *s) {
  if (allowed->n == 0) return true;
  for (int k = 0; k < allowed->n; k++)
    if (allowed->v.s[k].len == s->len && memcmp(allowed->v.s[k].ptr, s->ptr, s->len) == 0) return true;
  return false;
}

/* The value's own kind in TF's spelling, "list(int)" for a list. */
static const char *value_kind(const dfx_attr *v, char *buf, size_t cap) {
  if (v->kind != DFX_ATTR_LIST) return dfx__attr_kind_name(v->kind);
  snprintf(buf, cap, "list(%s)", v->v.list.n ? dfx__attr_kind_name(v->v.list.kind) : "");
  return buf;
}

/* Element k of a list value (k < 0: the scalar value) against the allowed sets. */
static dfx_code check_allowed(const dfx_node *n, const dfx_op_attr *a, const dfx_attr *v, int k, dfx_status *st) {
  char idx[24] = "", set[1024];
  if (k >= 0) snprintf(idx, sizeof idx, "[%d]", k);
  if (a->kind == DFX_ATTR_TYPE || a->elem == DFX_ATTR_TYPE) {
    dfx_dtype t = k < 0 ? v->v.type : v->v.list.v.type[k];
    if (a->allowed && !(a->allowed & (1u << t)))
      return dfx__status_set(st, DFX_EINVAL, "Node '%s' (%s): attr '%s'%s = %s is not one of %s", n->name, n->op,
                             a->name, idx, dfx_dtype_name(t), type_set(a->allowed, set, sizeof set));
    return DFX_OK;
  }
  const dfx_attr_list *ok = &a->allowed_s.v.list;
  const dfx_str *s = k < 0 ? &v->v.s : &v->v.list.v.s[k];
  if (!str_allowed(ok, s))
    return dfx__status_set(st, DFX_EINVAL, "Node '%s' (%s): attr '%s'%s = \"%.*s\" is not one of %s", n->name, n->op,
                           a->name, idx, (int)s->len, s->ptr ? s->ptr : "", str_set(ok, set, sizeof set));
  return DFX_OK;
}

static dfx_code check_attr(const dfx_node *n, const dfx_op_attr *a, dfx_status *st) {
  const dfx_attr *v = dfx__node_attr(n, a->name);
  if (!v) return dfx__status_set(st, DFX_EINVAL, "Node '%s' (%s): missing attr '%s' (%s)", n->name, n->op, a->name, a->type);
  if (v->kind == DFX_ATTR_NONE) /* an AttrValue with no member set */
    return dfx__status_set(st, DFX_EINVAL, "Node '%s' (%s): attr '%s' has no value (the op declares %s)", n->name,
                           n->op, a->name, a->type);
  /* An empty list carries no element kind, and fits every list attr. */
  bool list = v->kind == DFX_ATTR_LIST;
  if (v->kind != a->kind || (list && v->v.list.n && v->v.list.kind != a->elem)) {
    char buf[32];
    return dfx__status_set(st, DFX_EINVAL, "Node '%s' (%s): attr '%s' is a %s value but the op declares %s", n->name,
                           n->op, a->name, value_kind(v, buf, sizeof buf), a->type);
  }
  /* TF's ValidateAttrValue: a type attr never holds a ref dtype; refs only
   * appear on inputs and outputs (Ref(T) in the signature). */
  if (v->ref_dtype)
    return dfx__status_set(st, DFX_EINVAL, "Node '%s' (%s): attr '%s' must not have a reference type value", n->name,
                           n->op, a->name);
  /* ">= k" is an int attr's minimum value, or a list's minimum length. */
  if (a->has_min && !list && v->v.i < a->min)
    return dfx__status_set(st, DFX_EINVAL, "Node '%s' (%s): attr '%s' = %lld is below the minimum %lld", n->name,
                           n->op, a->name, (long long)v->v.i, (long long)a->min);
  if (a->has_min && list && v->v.list.n < a->min)
    return dfx__status_set(st, DFX_EINVAL, "Node '%s' (%s): attr '%s' has %d elements, below the minimum length %lld",
                           n->name, n->op, a->name, v->v.list.n, (long long)a->min);
  /* An empty allowed set means any value. */
  if (!a->allowed && !a->allowed_s.v.list.n) return DFX_OK;
  if (!list) return check_allowed(n, a, v, -1, st);
  for (int k = 0; k < v->v.list.n; k++) {
    dfx_code c = check_allowed(n, a, v, k, st);
    if (c != DFX_OK) return c;
  }
  return DFX_OK;
}

/* Attrs the op does not list are accepted, where TF's ValidateNodeDef
 * rejects them ("NodeDef mentions attr 'x' not in Op"): graphs written by a
 * newer TF carry attrs an older registry lacks, and kernels only read the
 * attrs they know. */
dfx_code dfx__node_check_attrs(const dfx_node *n, const dfx_op_def *def, dfx_status *st) {
  for (int i = 0; i < def->n_attrs; i++) {
    dfx_code c = check_attr(n, &def->attrs[i], st);
    if (c != DFX_OK) return c;
  }
  return DFX_OK;
}
