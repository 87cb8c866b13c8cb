/* einsum.c - Einsum for one or two operands. The equation's labels (a-z,
 * A-Z; "..." for broadcast dimensions, right-aligned across operands) are
 * reduced to: per operand, a diagonal for repeated labels and a sum over
 * labels no one else needs; then, for two operands, a transpose of each to
 * [batch, free, contracted] / [batch, contracted, free] and one batch
 * matmul (xmm.h), and a final transpose to the output's label order.
 * Without "->" the output is the broadcast dims, then the labels seen once,
 * in ASCII order. Work happens in the work dtype of T (xmm.h). */
#include <complex.h>
#include <string.h>

#include "alloc.h"
#include "xmm.h"

#define NLAB 64  /* 52 letters + up to DFX_MAX_DIMS broadcast dims */
#define BCAST 52 /* first broadcast label id */

typedef struct sub {
  int n;
  int lab[DFX_MAX_DIMS * 2];
} sub;

static int label_id(char c) {
  if (c >= 'a' && c <= 'z') return c - 'a';
  if (c >= 'A' && c <= 'Z') return 26 + c - 'A';
  return -1;
}

static char label_char(int id) { return id < 26 ? (char)('a' + id) : (char)('A' + id - 26); }

/* Parses one subscript into labels (-1 marks the ellipsis). */
static dfx_code parse_sub(dfx_kctx *ctx, const char *s, size_t len, int *lab, int *n, bool *ell) {
  *n = 0;
  *ell = false;
  for (size_t i = 0; i < len;) {
    if (s[i] == '.') {
      if (i + 3 > len || s[i + 1] != '.' || s[i + 2] != '.')
        return dfx__kctx_fail(ctx, DFX_EINVAL, "Expected ellipsis '...' in einsum subscript '%.*s'", (int)len, s);
      if (*ell) return dfx__kctx_fail(ctx, DFX_EINVAL, "Found more than one ellipsis in subscript '%.*s'", (int)len, s);
      *ell = true;
      lab[(*n)++] = -1;
      i += 3;
      continue;
    }
    int id = label_id(s[i]);
    if (id < 0) return dfx__kctx_fail(ctx, DFX_EINVAL, "Invalid character '%c' in einsum equation", s[i]);
    if (*n >= DFX_MAX_DIMS * 2) return dfx__kctx_fail(ctx, DFX_EINVAL, "Too many labels in einsum subscript");
    lab[(*n)++] = id;
    i++;
  }
  return DFX_OK;
}

/* dst[o] += src[i] in work dtype w. */
static void add_at(dfx_dtype w, void *dst, int64_t o, const void *src, int64_t i) {
  switch (w) {
    case DFX_F32: ((float *)dst)[o] += ((const float *)src)[i]; break;
    case DFX_F64: ((double *)dst)[o] += ((const double *)src)[i]; break;
    case DFX_C64:
      ((dfx_c64 *)dst)[o].re += ((const dfx_c64 *)src)[i].re;
      ((dfx_c64 *)dst)[o].im += ((const dfx_c64 *)src)[i].im;
      break;
    case DFX_C128:
      ((dfx_c128 *)dst)[o].re += ((const dfx_c128 *)src)[i].re;
      ((dfx_c128 *)dst)[o].im += ((const dfx_c128 *)src)[i].im;
      break;
    default:
      ((int64_t *)dst)[o] = (int64_t)((uint64_t)((int64_t *)dst)[o] + (uint64_t)((const int64_t *)src)[i]);
      break;
  }
}

/* Diagonal of repeated labels and sum over labels not kept: returns a new
 * tensor whose axes are the kept labels of s in first-occurrence order (in
 * *r), or a new reference to t when nothing changes. */
static dfx_tensor *reduce_operand(dfx_kctx *ctx, dfx_tensor *t, const sub *s, const bool *keep, sub *r) {
  int uniq[DFX_MAX_DIMS * 2], nu = 0, pos[NLAB];
  int64_t usize[DFX_MAX_DIMS * 2];
  for (int i = 0; i < NLAB; i++) pos[i] = -1;
  for (int a = 0; a < s->n; a++)
    if (pos[s->lab[a]] < 0) {
      pos[s->lab[a]] = nu;
      usize[nu] = t->dims[a];
      uniq[nu++] = s->lab[a];
    }
  r->n = 0;
  int64_t rd[DFX_MAX_DIMS];
  for (int u = 0; u < nu; u++)
    if (keep[uniq[u]]) {
      rd[r->n] = usize[u];
      r->lab[r->n++] = uniq[u];
    }
  if (nu == s->n && r->n == nu) return dfx__tensor_ref(t);
  dfx_code code;
  dfx_dtype w = (dfx_dtype)t->dtype;
  dfx_tensor *o = dfx__tensor_zeros(w, r->n, rd, &code);
  if (!o) {
    dfx__kctx_fail(ctx, code, "out of memory for an einsum intermediate");
    return NULL;
  }
  /* Walk the unique-label space: source offset from every input axis,
   * destination offset from the kept labels. */
  int64_t sstr[DFX_MAX_DIMS * 2] = {0}, dstr[DFX_MAX_DIMS * 2] = {0}, st = 1, dt = 1, idx[DFX_MAX_DIMS * 2] = {0};
  for (int a = t->ndims - 1; a >= 0; a--) {
    sstr[pos[s->lab[a]]] += st;
    st *= t->dims[a];
  }
  for (int k = r->n - 1; k >= 0; k--) {
    dstr[pos[r->lab[k]]] = dt;
    dt *= rd[k];
  }
  int64_t total = dfx__shape_count(nu, usize), so = 0, doff = 0;
  for (int64_t i = 0; i < total; i++) {
    add_at(w, o->data, doff, t->data, so);
    for (int u = nu - 1; u >= 0; u--) {
      so += sstr[u];
      doff += dstr[u];
      if (++idx[u] < usize[u]) break;
      so -= sstr[u] * usize[u];
      doff -= dstr[u] * usize[u];
      idx[u] = 0;
    }
    if ((i & 0xfffff) == 0xfffff && dfx__kctx_poll(ctx)) {
      dfx__tensor_unref(o);
      return NULL;
    }
  }
  return o;
}

static int find(const sub *s, int id) {
  for (int i = 0; i < s->n; i++)
    if (s->lab[i] == id) return i;
  return -1;
}

static dfx_code einsum(dfx_kctx *ctx) {
  int nin = ctx->n_in;
  const char *eq = dfx__attr_str(ctx->node, "equation", "");
  dfx_dtype T = (dfx_dtype)ctx->in[0]->dtype, w = dfx__x_work_type(T);
  if (nin > 2) return dfx__kctx_fail(ctx, DFX_EUNIMPL, "Einsum supports one or two inputs, got %d", nin);
  char buf[512];
  size_t bl = 0;
  for (const char *p = eq; *p; p++)
    if (*p != ' ' && *p != '\t' && *p != '\n') {
      if (bl + 1 >= sizeof buf) return dfx__kctx_fail(ctx, DFX_EINVAL, "einsum equation too long");
      buf[bl++] = *p;
    }
  buf[bl] = 0;
  char *arrow = strstr(buf, "->");
  if (arrow && strstr(arrow + 2, "->"))
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Expecting exactly one '->' in einsum equation: %s", eq);
  size_t lhs_len = arrow ? (size_t)(arrow - buf) : bl;
  /* ---- input subscripts ---- */
  int raw[2][DFX_MAX_DIMS * 2], nraw[2] = {0, 0}, nparts = 1;
  bool ell[2] = {false, false};
  for (size_t i = 0; i < lhs_len; i++) nparts += buf[i] == ',';
  if (nparts != nin)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Expecting %d input subscripts in equation '%s' but got %d", nin, eq, nparts);
  size_t start = 0;
  for (int k = 0; k < nin; k++) {
    size_t end = start;
    while (end < lhs_len && buf[end] != ',') end++;
    if (parse_sub(ctx, buf + start, end - start, raw[k], &nraw[k], &ell[k])) return ctx->st->code;
    start = end + 1;
  }
  int E = 0, e[2] = {0, 0};
  for (int k = 0; k < nin; k++) {
    int labels = nraw[k] - (ell[k] ? 1 : 0), rank = ctx->in[k]->ndims;
    if (ell[k] ? rank < labels : rank != labels)
      return dfx__kctx_fail(ctx, DFX_EINVAL, "Input %d to einsum has rank %d but its subscript has %d labels%s", k, rank,
                            labels, ell[k] ? " and an ellipsis" : "");
    e[k] = ell[k] ? rank - labels : 0;
    if (e[k] > E) E = e[k];
  }
  sub in[2];
  int64_t size[NLAB];
  int count[NLAB] = {0};
  bool present[2][NLAB] = {{false}};
  for (int i = 0; i < NLAB; i++) size[i] = -1;
  for (int k = 0; k < nin; k++) {
    in[k].n = 0;
    for (int j = 0; j < nraw[k]; j++) {
      if (raw[k][j] >= 0) {
        in[k].lab[in[k].n++] = raw[k][j];
        continue;
      }
      for (int t = 0; t < e[k]; t++) in[k].lab[in[k].n++] = BCAST + (E - e[k]) + t;
    }
    const dfx_tensor *x = ctx->in[k];
    for (int a = 0; a < in[k].n; a++) {
      int id = in[k].lab[a];
      int64_t d = x->dims[a];
      if (id < BCAST) count[id]++;
      present[k][id] = true;
      if (size[id] < 0 || (id >= BCAST && size[id] == 1)) {
        if (size[id] < 0 || d != 1) size[id] = d;
      } else if (d != size[id] && !(id >= BCAST && d == 1)) {
        char b1[128];
        return dfx__kctx_fail(ctx, DFX_EINVAL,
                              "Expected dimension %lld at axis %d of the input shaped %s but got dimension %lld",
                              (long long)size[id], a, DFX_SHAPE_STR(x, b1), (long long)d);
      }
    }
  }
  /* ---- output subscript ---- */
  sub out = {0};
  bool in_out[NLAB] = {false};
  if (arrow) {
    int lab[DFX_MAX_DIMS * 2], n;
    bool oell;
    if (parse_sub(ctx, arrow + 2, strlen(arrow + 2), lab, &n, &oell)) return ctx->st->code;
    for (int j = 0; j < n; j++) {
      if (lab[j] < 0) {
        for (int t = 0; t < E; t++) out.lab[out.n++] = BCAST + t;
        continue;
      }
      if (!present[0][lab[j]] && !(nin > 1 && present[1][lab[j]]))
        return dfx__kctx_fail(ctx, DFX_EINVAL, "Output subscript contains the label %c not present in the input subscripts",
                              label_char(lab[j]));
      if (in_out[lab[j]])
        return dfx__kctx_fail(ctx, DFX_EINVAL, "Output subscript contains repeated label %c", label_char(lab[j]));
      in_out[lab[j]] = true;
      out.lab[out.n++] = lab[j];
    }
  } else {
    for (int t = 0; t < E; t++) out.lab[out.n++] = BCAST + t;
    for (int c = 'A'; c <= 'z'; c++) {
      int id = label_id((char)c);
      if (id >= 0 && count[id] == 1) out.lab[out.n++] = id;
    }
  }
  for (int j = 0; j < out.n; j++) in_out[out.lab[j]] = true;
  if (out.n > DFX_MAX_DIMS) return dfx__kctx_fail(ctx, DFX_EINVAL, "einsum output rank %d exceeds %d", out.n, DFX_MAX_DIMS);
  int64_t od[DFX_MAX_DIMS];
  for (int j = 0; j < out.n; j++) od[j] = size[out.lab[j]];
  dfx_tensor *result = dfx__kctx_alloc(ctx, 0, T, out.n, od);
  if (!result) return ctx->st->code;
  /* ---- per-operand reduction ---- */
  bool keep[2][NLAB];
  for (int k = 0; k < nin; k++)
    for (int id = 0; id < NLAB; id++) {
      /* A broadcast label of size 1 here but larger elsewhere is not shared:
       * each operand sums its own. */
      bool shared = nin > 1 && present[1 - k][id];
      if (shared && id >= BCAST) {
        /* Only a label this operand has can be compared (find gives -1 otherwise). */
        int fa = find(&in[k], id), fb = find(&in[1 - k], id);
        shared = fa >= 0 && fb >= 0 && ctx->in[k]->dims[fa] == ctx->in[1 - k]->dims[fb];
      }
      keep[k][id] = in_out[id] || shared;
    }
  dfx_tensor *op[2] = {NULL, NULL}, *red[2] = {NULL, NULL}, *pa = NULL, *pb = NULL, *c = NULL, *fin = NULL;
  dfx_code code = DFX_OK;
  sub r[2];
  for (int k = 0; k < nin; k++) {
    if (!(op[k] = dfx__x_to_work(ctx, ctx->in[k], w)) || !(red[k] = reduce_operand(ctx, op[k], &in[k], keep[k], &r[k]))) {
      code = ctx->st->code;
      goto done;
    }
  }
  int perm[DFX_MAX_DIMS];
  if (nin == 1) {
    for (int j = 0; j < out.n; j++) perm[j] = find(&r[0], out.lab[j]);
    if (!(fin = dfx__x_permute(ctx, red[0], perm))) {
      code = ctx->st->code;
      goto done;
    }
  } else {
    int bl_[DFX_MAX_DIMS], fa[DFX_MAX_DIMS], fb[DFX_MAX_DIMS], kl[DFX_MAX_DIMS], nb = 0, nfa = 0, nfb = 0, nk = 0;
    for (int j = 0; j < out.n; j++) {
      int id = out.lab[j], ia = find(&r[0], id), ib = find(&r[1], id);
      if (ia >= 0 && ib >= 0) bl_[nb++] = id;
      else if (ia >= 0) fa[nfa++] = id;
      else if (ib >= 0) fb[nfb++] = id;
    }
    for (int j = 0; j < r[0].n; j++)
      if (!in_out[r[0].lab[j]]) kl[nk++] = r[0].lab[j];
    int pA[DFX_MAX_DIMS], pB[DFX_MAX_DIMS], q = 0;
    int64_t ad[DFX_MAX_DIMS + 2], bd[DFX_MAX_DIMS + 2], m = 1, n = 1, kk = 1;
    for (int j = 0; j < nb; j++) ad[j] = red[0]->dims[pA[q++] = find(&r[0], bl_[j])];
    for (int j = 0; j < nfa; j++) m *= red[0]->dims[pA[q++] = find(&r[0], fa[j])];
    for (int j = 0; j < nk; j++) kk *= red[0]->dims[pA[q++] = find(&r[0], kl[j])];
    q = 0;
    for (int j = 0; j < nb; j++) bd[j] = red[1]->dims[pB[q++] = find(&r[1], bl_[j])];
    for (int j = 0; j < nk; j++) pB[q++] = find(&r[1], kl[j]);
    for (int j = 0; j < nfb; j++) n *= red[1]->dims[pB[q++] = find(&r[1], fb[j])];
    if (!(pa = dfx__x_permute(ctx, red[0], pA)) || !(pb = dfx__x_permute(ctx, red[1], pB))) {
      code = ctx->st->code;
      goto done;
    }
    ad[nb] = m, ad[nb + 1] = kk, bd[nb] = kk, bd[nb + 1] = n;
    dfx_xmm p = {.m = m, .n = n, .k = kk};
    if ((code = dfx__x_bcast(ctx, nb + 2, ad, nb + 2, bd, &p))) goto done;
    /* C's axes: batch, free A, free B, with their own sizes. */
    int64_t cd[DFX_MAX_DIMS];
    sub cl = {0};
    for (int j = 0; j < nb; j++) cd[cl.n] = p.bdims[j], cl.lab[cl.n++] = bl_[j];
    for (int j = 0; j < nfa; j++) cd[cl.n] = red[0]->dims[find(&r[0], fa[j])], cl.lab[cl.n++] = fa[j];
    for (int j = 0; j < nfb; j++) cd[cl.n] = red[1]->dims[find(&r[1], fb[j])], cl.lab[cl.n++] = fb[j];
    if (!(c = dfx__tensor_alloc(w, cl.n, cd, &code))) {
      code = dfx__kctx_fail(ctx, code, "out of memory for an einsum intermediate");
      goto done;
    }
    if ((code = dfx__x_bmm(ctx, &p, w, pa->data, pb->data, c->data))) goto done;
    for (int j = 0; j < out.n; j++) perm[j] = find(&cl, out.lab[j]);
    if (!(fin = dfx__x_permute(ctx, c, perm))) {
      code = ctx->st->code;
      goto done;
    }
  }
  dfx__x_from_work(fin->data, w, result->data, T, result->count);
done:
  for (int k = 0; k < 2; k++) {
    dfx__tensor_unref(op[k]);
    dfx__tensor_unref(red[k]);
  }
  dfx__tensor_unref(pa);
  dfx__tensor_unref(pb);
  dfx__tensor_unref(c);
  dfx__tensor_unref(fin);
  return code;
}

static const dfx_kernel_def kernels[] = {
    {"Einsum", "T: {float, double, half, bfloat16, complex64, complex128, int32, int64}", einsum, 0, NULL, NULL},
    {NULL}};

void dfx__kernels_extra_einsum(dfx_registry *r);
void dfx__kernels_extra_einsum(dfx_registry *r) { dfx__kernels_add(r, kernels); }
