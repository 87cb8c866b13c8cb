/* fold_batchnorm.c - the `fold_batchnorm` pass: per-channel affine ops
 * after a contraction with a constant filter fold into the filter and one
 * BiasAdd, computed now (TF's fold_batch_norms graph transform, and what
 * Grappler leaves to the remapper's fused batch norm):
 *
 *   Conv2D | DepthwiseConv2dNative | MatMul   (filter a Const)
 *     -> any chain of: FusedBatchNorm[V2|V3] (is_training false, constant
 *        scale, offset, mean, variance), Mul, Add/AddV2, Sub or BiasAdd by a
 *        constant with one value per output channel (or one for all)
 *   becomes the contraction with filter W * s and BiasAdd(b)
 *
 * where the chain computes y = conv(x, W) * s + b channel by channel: a
 * batch norm is s = scale / sqrt(variance + epsilon), b = offset - mean * s
 * (Keras' inference batch norm often appears as that Mul and Add). s and b
 * are composed in double and stored as float. The BiasAdd takes the name
 * (and id) of the chain's last node, so fetches of it keep working; the
 * nodes between go, and so do constants nothing reads any more. Then the
 * remap pass can fuse the BiasAdd and an activation into the contraction.
 *
 * Frames and deadness: every node of the chain but the last has that one
 * consumer and is not kept or fed, all run in one frame on one device, and
 * every constant is a plain Const or a loop invariant (a constant Enter of
 * one). New constants take the control inputs of the constants they come
 * from (a branch pivot), or the constant Enter they were read through
 * (which puts them in the loop, every iteration): constfold's rule. The
 * BiasAdd takes the control inputs of every node it replaces. Only float32.
 *
 * Default: the folded graph computes the same function with fewer passes
 * over memory; the results differ from the unfused ones by float rounding
 * (the products are rounded at another point), well within the corpus'
 * 1e-5 tolerance on every model it has. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "rewrite.h"

#define MAX_CHAIN 8
#define MAX_SRC (MAX_CHAIN * 4 + 1)

enum { CONV, DEPTHWISE, MATMUL };

/* The contraction and its constant filter. */
typedef struct contraction {
  int id, kind;
  int src, via;          /* the filter's Const, and the node input 1 names */
  const dfx_tensor *w;
  int64_t C;             /* output channels */
  int rank, axis;        /* the output's rank and channel axis */
  bool nchw;
} contraction;

/* The chain after it, as y = conv(x, W) * s + b per channel. */
typedef struct chain {
  int nodes[MAX_CHAIN], n;  /* in order; the last is rewritten, the others go */
  int srcs[MAX_SRC], vias[MAX_SRC], n_src; /* the constants it reads */
  bool affine;              /* more than BiasAdds: worth a rewrite */
  double *s, *b;
} chain;

static bool is_op(const dfx_node *n, const char *op) { return strcmp(n->op, op) == 0; }
static bool f32(const dfx_node *n, const char *attr) { return dfx__attr_type(n, attr, DFX_INVALID) == DFX_F32; }

static bool find_contraction(const dfx_pass_ctx *c, int i, contraction *x) {
  const dfx_node *n = &c->g->nodes[i];
  if (n->removed || n->n_in != 2 || !f32(n, "T")) return false;
  if (is_op(n, "Conv2D")) x->kind = CONV;
  else if (is_op(n, "DepthwiseConv2dNative")) x->kind = DEPTHWISE;
  else if (is_op(n, "MatMul")) x->kind = MATMUL;
  else return false;
  x->id = i;
  if ((x->src = dfx__rewrite_const_source(c, n->in[1], &x->via)) < 0) return false;
  x->w = dfx__attr_tensor(&c->g->nodes[x->src], "value");
  if (!x->w || x->w->dtype != DFX_F32 || x->w->count == 0) return false;
  if (x->kind == MATMUL) {
    if (x->w->ndims != 2) return false;
    x->C = x->w->dims[dfx__attr_bool(n, "transpose_b", false) ? 0 : 1];
    x->rank = 2, x->axis = 1, x->nchw = false;
  } else {
    if (x->w->ndims != 4) return false;
    x->C = x->kind == CONV ? x->w->dims[3] : x->w->dims[2] * x->w->dims[3];
    const char *df = dfx__attr_str(n, "data_format", "NHWC");
    if (strcmp(df, "NHWC") && strcmp(df, "NCHW")) return false;
    x->nchw = !strcmp(df, "NCHW");
    x->rank = 4, x->axis = x->nchw ? 1 : 3;
  }
  return x->C > 0;
}

static bool add_src(chain *ch, int src, int via) {
  if (ch->n_src == MAX_SRC) return false;
  ch->srcs[ch->n_src] = src;
  ch->vias[ch->n_src++] = via;
  return true;
}

/* The constant input k of node n with one value per channel (or one for
 * all) for an output of x's rank: *v its values, *per_channel whether they
 * vary by channel. One-dimensional only (BiasAdd, a batch norm) when vec. */
static bool channel_const(const dfx_pass_ctx *c, const contraction *x, chain *ch, const dfx_node *n, int k, bool vec,
                          const float **v, bool *per_channel) {
  int via, src = dfx__rewrite_const_source(c, n->in[k], &via);
  if (src < 0) return false;
  const dfx_tensor *t = dfx__attr_tensor(&c->g->nodes[src], "value");
  if (!t || t->dtype != DFX_F32 || t->ndims > x->rank || t->count == 0) return false;
  if (vec) {
    if (t->ndims != 1 || t->dims[0] != x->C) return false;
    *per_channel = true;
  } else {
    *per_channel = false;
    for (int d = 0; d < t->ndims; d++) {
      int od = x->rank - t->ndims + d;
      if (t->dims[d] == 1) continue;
      if (od != x->axis || t->dims[d] != x->C) return false;
      *per_channel = true;
    }
  }
  *v = t->data;
  return add_src(ch, src, via);
}

#define AT(v, pc, j) ((double)(v)[(pc) ? (j) : 0])

/* Folds node n (reading the chain at input k) into s and b, or says no. */
static bool fold_one(const dfx_pass_ctx *c, const contraction *x, chain *ch, const dfx_node *n, int k) {
  const float *v;
  bool pc;
  int64_t C = x->C;
  double *s = ch->s, *b = ch->b;
  if (!f32(n, "T")) return false;
  if (is_op(n, "BiasAdd")) {
    const char *df = dfx__attr_str(n, "data_format", "NHWC");
    if (k != 0 || strcmp(df, x->nchw ? "NCHW" : "NHWC") != 0 || !channel_const(c, x, ch, n, 1, true, &v, &pc))
      return false;
    for (int64_t j = 0; j < C; j++) b[j] += v[j];
    return true;
  }
  bool add = is_op(n, "Add") || is_op(n, "AddV2"), sub = is_op(n, "Sub"), mul = is_op(n, "Mul");
  if (add || sub || mul) {
    if (n->n_in != 2 || (sub && k != 0) || !channel_const(c, x, ch, n, 1 - k, false, &v, &pc)) return false;
    for (int64_t j = 0; j < C; j++) {
      if (mul) s[j] *= AT(v, pc, j), b[j] *= AT(v, pc, j);
      else b[j] += sub ? -AT(v, pc, j) : AT(v, pc, j);
    }
    ch->affine = true;
    return true;
  }
  if (!is_op(n, "FusedBatchNorm") && !is_op(n, "FusedBatchNormV2") && !is_op(n, "FusedBatchNormV3")) return false;
  if (k != 0 || x->kind == MATMUL || dfx__attr_bool(n, "is_training", true) ||
      strcmp(dfx__attr_str(n, "data_format", "NHWC"), x->nchw ? "NCHW" : "NHWC") != 0 ||
      (n->def && dfx__op_def_attr(n->def, "U") && !f32(n, "U")))
    return false;
  for (int e = 0; e < n->n_edges; e++) /* batch_mean and the others must be unread */
    if (n->edges[e].src_slot != 0) return false;
  const float *p[4];
  for (int q = 0; q < 4; q++)
    if (!channel_const(c, x, ch, n, 1 + q, true, &p[q], &pc)) return false;
  double eps = dfx__attr_float(n, "epsilon", 1e-4f);
  for (int64_t j = 0; j < C; j++) {
    double kj = (double)p[0][j] / sqrt((double)p[3][j] + eps);
    s[j] *= kj;
    b[j] = (b[j] - p[2][j]) * kj + p[1][j];
  }
  ch->affine = true;
  return true;
}

/* Follows the chain from the contraction while nodes fold (see top). */
static void walk(const dfx_pass_ctx *c, const contraction *x, chain *ch) {
  const dfx_graph *g = c->g;
  int cur = x->id, k;
  for (int64_t j = 0; j < x->C; j++) ch->s[j] = 1, ch->b[j] = 0;
  ch->n = 0;
  while (ch->n < MAX_CHAIN) {
    int nx = dfx__rewrite_sole_consumer(c, cur, &k);
    if (nx < 0) break;
    const dfx_node *n = &g->nodes[nx];
    if (!dfx__rewrite_same_place(&g->nodes[x->id], n) || dfx__pass_fed(c, n->name)) break;
    bool bn = strncmp(n->op, "FusedBatchNorm", 14) == 0;
    if (bn && dfx__pass_keeps(c, n->name)) break; /* it may be fetched at an output a BiasAdd lacks */
    /* fold_one changes s and b only when it succeeds; sources it added for
     * a node that then fails are dropped. */
    int n_src = ch->n_src;
    if (!fold_one(c, x, ch, n, k)) {
      ch->n_src = n_src;
      break;
    }
    ch->nodes[ch->n++] = nx;
    cur = nx;
  }
}

/* Whether an edge of node src is still read: its consumer is there and
 * still names src at that input (edges are as of the last finalise). */
static bool edge_live(const dfx_graph *g, int src, const dfx_edge *e) {
  const dfx_node *d = &g->nodes[e->dst];
  if (d->removed) return false;
  if (e->dst_slot < 0) {
    for (int k = d->n_in; k < d->n_in + d->n_ctrl; k++)
      if (d->in[k].node == src) return true;
    return false;
  }
  return e->dst_slot < d->n_in && d->in[e->dst_slot].node == src && d->in[e->dst_slot].slot == e->src_slot;
}

/* Removes the constants (and constant Enters) the rewrite left unread;
 * `used` are the control inputs of the constants it added (an Enter they
 * hang off), which the edges, older than those constants, do not show. */
static void drop_unread(dfx_pass_ctx *c, const int *ids, int n, const dfx_rewrite_ids *used) {
  dfx_graph *g = c->g;
  for (int pass = 0; pass < 2; pass++) /* an Enter goes first, then its Const */
    for (int i = 0; i < n; i++) {
      dfx_node *k = &g->nodes[ids[i]];
      if (k->removed || dfx__pass_keeps(c, k->name) || dfx__pass_fed(c, k->name)) continue;
      bool ctl = false;
      for (int q = 0; q < used[0].n + used[1].n && !ctl; q++)
        ctl = (q < used[0].n ? used[0].ids[q] : used[1].ids[q - used[0].n]) == ids[i];
      if (ctl) continue;
      bool read = false;
      for (int e = 0; e < k->n_edges && !read; e++) read = edge_live(g, ids[i], &k->edges[e]);
      if (read) continue;
      dfx__graph_remove_node(g, ids[i]);
      c->counts.removed++;
    }
}

static dfx_tensor *new_f32(const int64_t *dims, int ndims) {
  dfx_code code;
  return dfx__tensor_alloc(DFX_F32, ndims, dims, &code);
}

static dfx_code rewrite(dfx_pass_ctx *c, const contraction *x, const chain *ch) {
  dfx_graph *g = c->g;
  dfx_status *st = c->st;
  int last = ch->nodes[ch->n - 1];
  bool scaled = false;
  for (int64_t j = 0; j < x->C; j++) {
    if (!isfinite(ch->s[j]) || !isfinite(ch->b[j])) return DFX_OK; /* leave what would be NaN to the run */
    scaled |= ch->s[j] != 1;
  }
  dfx_rewrite_ids wctl = {0}, bctl = {0}, lctl = {0};
  dfx_tensor *w2 = NULL, *b2 = new_f32(&x->C, 1);
  dfx_code rc = b2 ? DFX_OK : DFX_ENOMEM;
  if (rc == DFX_OK && scaled) {
    if (!(w2 = new_f32(x->w->dims, x->w->ndims))) rc = DFX_ENOMEM;
    const float *w = x->w->data;
    float *o = w2 ? w2->data : NULL;
    bool by_row = x->kind == MATMUL && dfx__attr_bool(&g->nodes[x->id], "transpose_b", false);
    int64_t K = by_row ? x->w->dims[1] : 1;
    for (int64_t i = 0; o && i < x->w->count; i++) o[i] = (float)((double)w[i] * ch->s[by_row ? i / K : i % x->C]);
    if (rc == DFX_OK) rc = dfx__rewrite_ids_add_const_place(&wctl, g, x->src, x->via);
  }
  for (int64_t j = 0; b2 && j < x->C; j++) ((float *)b2->data)[j] = (float)ch->b[j];
  for (int i = 0; i < ch->n_src && rc == DFX_OK; i++)
    rc = dfx__rewrite_ids_add_const_place(&bctl, g, ch->srcs[i], ch->vias[i]);
  for (int i = 0; i < ch->n && rc == DFX_OK; i++) rc = dfx__rewrite_ids_add_ctrl(&lctl, g, ch->nodes[i]);
  char base[300];
  if (rc == DFX_OK && w2) {
    snprintf(base, sizeof base, "%.250s/folded_filter", g->nodes[x->id].name);
    int id = dfx__rewrite_add_const(g, base, w2, &wctl, st);
    if (id < 0) rc = DFX_ENOMEM;
    else dfx__graph_set_input(g, x->id, 1, id, 0), c->counts.added++, c->counts.rewritten++;
  }
  int bias = -1;
  if (rc == DFX_OK) {
    snprintf(base, sizeof base, "%.250s/folded_bias", g->nodes[last].name);
    if ((bias = dfx__rewrite_add_const(g, base, b2, &bctl, st)) < 0) rc = DFX_ENOMEM;
    else c->counts.added++;
  }
  if (rc == DFX_OK) rc = dfx__rewrite_reset(g, last, "BiasAdd", st);
  if (rc == DFX_OK) rc = dfx__graph_add_input(g, last, x->id, 0, st);
  if (rc == DFX_OK) rc = dfx__graph_add_input(g, last, bias, 0, st);
  for (int k = 0; k < lctl.n && rc == DFX_OK; k++) rc = dfx__graph_add_input(g, last, lctl.ids[k], -1, st);
  if (rc == DFX_OK) rc = dfx__rewrite_set_type(g, last, "T", DFX_F32, st);
  if (rc == DFX_OK) rc = dfx__rewrite_set_str(g, last, "data_format", x->nchw ? "NCHW" : "NHWC", st);
  if (rc == DFX_OK) {
    c->counts.rewritten++;
    for (int i = 0; i + 1 < ch->n; i++) {
      dfx__graph_remove_node(g, ch->nodes[i]);
      c->counts.removed++;
    }
    int ids[2 * MAX_SRC + 2], n = 0;
    for (int i = 0; i < ch->n_src; i++) ids[n++] = ch->vias[i], ids[n++] = ch->srcs[i];
    if (w2) ids[n++] = x->via, ids[n++] = x->src;
    drop_unread(c, ids, n, (dfx_rewrite_ids[]){wctl, bctl});
  }
  dfx_tensor_free(w2);
  dfx_tensor_free(b2);
  dfx__rewrite_ids_free(&wctl);
  dfx__rewrite_ids_free(&bctl);
  dfx__rewrite_ids_free(&lctl);
  return rc == DFX_ENOMEM ? dfx__status_set(st, DFX_ENOMEM, "out of memory") : rc;
}

static dfx_code fold_run(dfx_pass_ctx *c) {
  int n = c->g->n_nodes; /* the constants added below need no visit */
  double *buf = NULL;
  int64_t cap = 0;
  dfx_code rc = DFX_OK;
  for (int i = 0; i < n && rc == DFX_OK; i++) {
    contraction x;
    if (!find_contraction(c, i, &x)) continue;
    if (x.C > cap) {
      double *nb = dfx__realloc(buf, sizeof *nb * 2 * (size_t)x.C);
      if (!nb) {
        rc = dfx__status_set(c->st, DFX_ENOMEM, "out of memory");
        break;
      }
      buf = nb, cap = x.C;
    }
    chain ch = {.s = buf, .b = buf + x.C};
    walk(c, &x, &ch);
    /* Nothing to fold unless some node scales or shifts (a lone BiasAdd is
     * the remap pass's); BiasAdds in the chain join the one BiasAdd. */
    if (ch.n > 0 && ch.affine) rc = rewrite(c, &x, &ch);
  }
  dfx__free(buf);
  return rc;
}

const dfx_pass dfx__pass_fold_batchnorm = {
    .name = "fold_batchnorm",
    .purpose = "fold inference batch norms and per-channel Mul/Add by constants into a constant filter and a BiasAdd",
    .run = fold_run,
    .in_default = true,
};
