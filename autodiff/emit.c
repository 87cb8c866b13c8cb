/* emit.c - the node-writing helpers gradient functions use (emit.h). Each
 * new node gets its signature applied right away (defaults, dtypes), so the
 * next node can ask for its output types before the graph is finalised. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "emit.h"
#include "node_sig.h"
#include "op_registry.h"

dfx_code em_fail(dfx_emit *e, dfx_code code, const char *fmt, ...) {
  if (e->err != DFX_OK) return e->err;
  e->err = code;
  if (e->st) {
    va_list ap;
    va_start(ap, fmt);
    char msg[DFX_STATUS_MSG_MAX];
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    dfx__status_set(e->st, code, "%s", msg);
  }
  return code;
}

/* Applies the op signature to new node id, as finalising will. */
static dfx_code resolve(dfx_emit *e, int id) {
  dfx_node *n = &e->g->nodes[id];
  const dfx_op_def *def = NULL;
  dfx_code c = dfx__op_find(n->op, &def, e->st);
  if (c != DFX_OK) return em_fail(e, c, "gradients: %s", e->st ? e->st->msg : "op lookup failed");
  if (!def) return em_fail(e, DFX_EINTERNAL, "gradients: op %s has no signature", n->op);
  int expected = 0;
  dfx__free(n->in_types);
  dfx__free(n->out_types);
  n->in_types = n->out_types = NULL;
  n->def = def;
  if ((c = dfx__node_fill_defaults(n, def, e->st)) != DFX_OK ||
      (c = dfx__node_resolve_types(n, def, &expected, e->st)) != DFX_OK) {
    char msg[DFX_STATUS_MSG_MAX];
    snprintf(msg, sizeof msg, "%s", e->st ? e->st->msg : "");
    return em_fail(e, c, "gradient node '%s' (%s): %s", n->name, n->op, msg);
  }
  return DFX_OK;
}

int em_node(dfx_emit *e, const char *op, const char *base, const gp *in, int n, const em_attr *attrs, int n_attrs) {
  if (e->err != DFX_OK) return -1;
  for (int k = 0; k < n; k++)
    if (!gp_ok(in[k])) {
      em_fail(e, DFX_EINTERNAL, "gradients: %s in scope '%s' got no input %d", op, e->scope, k);
      return -1;
    }
  gp mapped[n + 1];
  for (int k = 0; k < n; k++) {
    mapped[k] = in[k];
    if (e->remap) {
      gp (*remap)(void *, gp) = e->remap;
      e->remap = NULL;
      mapped[k] = remap(e->remap_ud, in[k]);
      e->remap = remap;
      if (!gp_ok(mapped[k])) return -1;
    }
  }
  char full[512];
  snprintf(full, sizeof full, "%s%s", e->scope, base ? base : op);
  char *name = dfx__graph_unique_name(e->g, full);
  if (!name) {
    em_fail(e, DFX_ENOMEM, "out of memory adding gradient nodes");
    return -1;
  }
  int id = dfx__graph_add_node(e->g, name, op, e->st);
  dfx__free(name);
  if (id < 0) {
    em_fail(e, e->st ? e->st->code : DFX_ENOMEM, "gradients: cannot add %s node", op);
    return -1;
  }
  for (int k = 0; k < n; k++)
    if (dfx__graph_add_input(e->g, id, mapped[k].node, mapped[k].slot, e->st) != DFX_OK) {
      em_fail(e, DFX_ENOMEM, "out of memory adding gradient nodes");
      return -1;
    }
  if (n == 0 && e->ctrl >= 0 && dfx__graph_add_input(e->g, id, e->ctrl, -1, e->st) != DFX_OK) {
    em_fail(e, DFX_ENOMEM, "out of memory adding gradient nodes");
    return -1;
  }
  for (int k = 0; k < n_attrs; k++)
    if (dfx__graph_set_attr(e->g, id, &attrs[k], e->st) != DFX_OK) {
      em_fail(e, DFX_ENOMEM, "out of memory adding gradient nodes");
      return -1;
    }
  return resolve(e, id) == DFX_OK ? id : -1;
}

gp em_op(dfx_emit *e, const char *op, const gp *in, int n, const em_attr *attrs, int n_attrs) {
  int id = em_node(e, op, NULL, in, n, attrs, n_attrs);
  return id < 0 ? GP_NONE : (gp){id, 0};
}

dfx_dtype em_dtype(const dfx_emit *e, gp p) {
  if (!gp_ok(p)) return DFX_INVALID;
  const dfx_node *n = &e->g->nodes[p.node];
  return p.slot < n->n_out && n->out_types ? n->out_types[p.slot] : DFX_INVALID;
}

void em_copy_attr(dfx_emit *e, int to, int from, const char *name) {
  if (e->err != DFX_OK || to < 0) return;
  const dfx_attr *a = dfx__node_attr(&e->g->nodes[from], name);
  if (!a) return;
  dfx_attr copy = *a; /* set_attr deep-copies; the source may move while the array grows */
  if (dfx__graph_set_attr(e->g, to, &copy, e->st) != DFX_OK) em_fail(e, DFX_ENOMEM, "out of memory");
}

gp em_unary(dfx_emit *e, const char *op, gp x) {
  em_attr t = EA_TYPE("T", em_dtype(e, x));
  return em_op(e, op, &x, 1, &t, 1);
}

gp em_binary(dfx_emit *e, const char *op, gp a, gp b) {
  gp in[2] = {a, b};
  em_attr t = EA_TYPE("T", em_dtype(e, a));
  return em_op(e, op, in, 2, &t, 1);
}

gp em_ident(dfx_emit *e, gp x) { return em_unary(e, "Identity", x); }

static gp const_tensor(dfx_emit *e, dfx_tensor *t) {
  if (!t) {
    em_fail(e, DFX_ENOMEM, "out of memory making a gradient constant");
    return GP_NONE;
  }
  em_attr a[2] = {EA_TYPE("dtype", (dfx_dtype)t->dtype), {.name = "value", .kind = DFX_ATTR_TENSOR, .v.tensor = t}};
  gp p = em_op(e, "Const", NULL, 0, a, 2);
  dfx__tensor_unref(t);
  return p;
}

gp em_scalar(dfx_emit *e, dfx_dtype t, double v) {
  if (e->err != DFX_OK) return GP_NONE;
  dfx_code c;
  dfx_tensor *x = dfx__tensor_alloc(t, 0, NULL, &c);
  if (x) switch (t) {
      case DFX_F32: *(float *)x->data = (float)v; break;
      case DFX_F64: *(double *)x->data = v; break;
      case DFX_I32: *(int32_t *)x->data = (int32_t)v; break;
      case DFX_I64: *(int64_t *)x->data = (int64_t)v; break;
      default:
        dfx__tensor_unref(x);
        em_fail(e, DFX_EUNIMPL, "gradients: no constant of dtype %s", dfx_dtype_name(t));
        return GP_NONE;
    }
  return const_tensor(e, x);
}

gp em_ivec(dfx_emit *e, dfx_dtype t, const int64_t *v, int n) {
  if (e->err != DFX_OK) return GP_NONE;
  dfx_code c;
  int64_t dim = n;
  dfx_tensor *x = dfx__tensor_alloc(t, 1, &dim, &c);
  for (int i = 0; x && i < n; i++) {
    if (t == DFX_I64)
      ((int64_t *)x->data)[i] = v[i];
    else
      ((int32_t *)x->data)[i] = (int32_t)v[i];
  }
  return const_tensor(e, x);
}

gp em_shape(dfx_emit *e, gp x, dfx_dtype out_type) {
  em_attr a[2] = {EA_TYPE("T", em_dtype(e, x)), EA_TYPE("out_type", out_type)};
  return em_op(e, "Shape", &x, 1, a, 2);
}

gp em_size(dfx_emit *e, gp x) {
  em_attr a[2] = {EA_TYPE("T", em_dtype(e, x)), EA_TYPE("out_type", DFX_I32)};
  return em_op(e, "Size", &x, 1, a, 2);
}

gp em_rank(dfx_emit *e, gp x) { return em_unary(e, "Rank", x); }

gp em_reshape(dfx_emit *e, gp x, gp shape) {
  gp in[2] = {x, shape};
  em_attr a[2] = {EA_TYPE("T", em_dtype(e, x)), EA_TYPE("Tshape", em_dtype(e, shape))};
  return em_op(e, "Reshape", in, 2, a, 2);
}

gp em_sum(dfx_emit *e, gp x, gp axes, bool keep) {
  gp in[2] = {x, axes};
  em_attr a[3] = {EA_TYPE("T", em_dtype(e, x)), EA_TYPE("Tidx", em_dtype(e, axes)), EA_BOOL("keep_dims", keep)};
  return em_op(e, "Sum", in, 2, a, 3);
}

gp em_cast(dfx_emit *e, gp x, dfx_dtype to) {
  dfx_dtype from = em_dtype(e, x);
  if (from == to || !gp_ok(x)) return x;
  em_attr a[2] = {EA_TYPE("SrcT", from), EA_TYPE("DstT", to)};
  return em_op(e, "Cast", &x, 1, a, 2);
}

gp em_zeros_like(dfx_emit *e, gp x) { return em_unary(e, "ZerosLike", x); }
gp em_ones_like(dfx_emit *e, gp x) { return em_unary(e, "OnesLike", x); }

gp em_select(dfx_emit *e, gp c, gp t, gp f) {
  gp in[3] = {c, t, f};
  em_attr a = EA_TYPE("T", em_dtype(e, t));
  return em_op(e, "Select", in, 3, &a, 1);
}

gp em_range(dfx_emit *e, gp start, gp limit, gp delta) {
  gp in[3] = {start, limit, delta};
  em_attr a = EA_TYPE("Tidx", em_dtype(e, start));
  return em_op(e, "Range", in, 3, &a, 1);
}

gp em_concat(dfx_emit *e, const gp *xs, int n, gp axis) {
  gp in[n + 1];
  memcpy(in, xs, sizeof(gp) * (size_t)n);
  in[n] = axis;
  em_attr a[3] = {EA_TYPE("T", em_dtype(e, xs[0])), EA_INT("N", n), EA_TYPE("Tidx", em_dtype(e, axis))};
  return em_op(e, "ConcatV2", in, n + 1, a, 3);
}

gp em_pack(dfx_emit *e, const gp *xs, int n, int axis) {
  em_attr a[3] = {EA_TYPE("T", em_dtype(e, xs[0])), EA_INT("N", n), EA_INT("axis", axis)};
  return em_op(e, "Pack", xs, n, a, 3);
}

gp em_matmul(dfx_emit *e, const char *op, gp a, gp b, const char *ta_name, bool ta, const char *tb_name, bool tb) {
  gp in[2] = {a, b};
  em_attr at[3] = {EA_TYPE("T", em_dtype(e, a)), EA_BOOL(ta_name, ta), EA_BOOL(tb_name, tb)};
  return em_op(e, op, in, 2, at, 3);
}

gp em_addn(dfx_emit *e, const gp *xs, int n) {
  if (n == 1) return xs[0];
  em_attr a[2] = {EA_TYPE("T", em_dtype(e, xs[0])), EA_INT("N", n)};
  return em_op(e, "AddN", xs, n, a, 2);
}

void em_unbroadcast(dfx_emit *e, gp x, gp y, gp gx, gp gy, gp *dx, gp *dy) {
  gp sx = em_shape(e, x, DFX_I32), sy = em_shape(e, y, DFX_I32);
  gp in[2] = {sx, sy};
  em_attr a = EA_TYPE("T", DFX_I32);
  int r = em_node(e, "BroadcastGradientArgs", NULL, in, 2, &a, 1);
  *dx = *dy = GP_NONE;
  if (r < 0) return;
  if (gp_ok(gx)) *dx = em_reshape(e, em_sum(e, gx, (gp){r, 0}, false), sx);
  if (gp_ok(gy)) *dy = em_reshape(e, em_sum(e, gy, (gp){r, 1}, false), sy);
}
