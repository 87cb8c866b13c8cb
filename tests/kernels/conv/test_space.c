/* test_space.c - space/batch/depth rearrangements and ExtractImagePatches:
 * TensorFlow's documented examples plus inverse round trips over dtypes. */
#include "ctest.h"

static dfx_tensor *iota(dfx_dtype dt, int nd, const int64_t *dims) {
  int64_t n = 1;
  for (int i = 0; i < nd; i++) n *= dims[i];
  double *v = calloc((size_t)n + 1, 8);
  for (int64_t i = 0; i < n; i++) v[i] = (double)(i + 1);
  dfx_tensor *t = ct_tensor(dt, nd, dims, v);
  free(v);
  return t;
}

static dfx_tensor *run1(const char *op, dfx_dtype dt, dfx_tensor **in, int n_in, int64_t bs) {
  dfx_node *n = kh_node_new(op);
  kh_attr_type(n, "T", dt);
  if (bs) kh_attr_int(n, "block_size", bs);
  dfx_tensor *o[1];
  ct_run(n, in, n_in, o, 1);
  kh_node_free(n);
  return o[0];
}

Test(space, s2b_doc_examples) {
  dfx_tensor *blk = kh_i32(1, (int64_t[]){2}, (int32_t[]){2, 2});
  dfx_tensor *p0 = kh_i32(2, (int64_t[]){2, 2}, (int32_t[]){0, 0, 0, 0});
  dfx_tensor *x = iota(DFX_F32, 4, (int64_t[]){1, 4, 4, 1});
  dfx_tensor *y = run1("SpaceToBatchND", DFX_F32, (dfx_tensor *[]){x, blk, p0}, 3, 0);
  ct_expect(y, DFX_F32, 4, (int64_t[]){4, 2, 2, 1},
            (double[]){1, 3, 9, 11, 2, 4, 10, 12, 5, 7, 13, 15, 6, 8, 14, 16}, 0, "s2b 4x4");
  dfx__tensor_unref(y);
  dfx_tensor *x2 = iota(DFX_I32, 4, (int64_t[]){2, 2, 4, 1});
  dfx_tensor *p2 = kh_i64(2, (int64_t[]){2, 2}, (int64_t[]){0, 0, 2, 0});
  dfx_node *n = kh_node_new("SpaceToBatchND");
  kh_attr_type(n, "T", DFX_I32);
  kh_attr_type(n, "Tpaddings", DFX_I64);
  dfx_tensor *o[1];
  ct_run(n, (dfx_tensor *[]){x2, blk, p2}, 3, o, 1);
  ct_expect(o[0], DFX_I32, 4, (int64_t[]){8, 1, 3, 1},
            (double[]){0, 1, 3, 0, 9, 11, 0, 2, 4, 0, 10, 12, 0, 5, 7, 0, 13, 15, 0, 6, 8, 0, 14, 16}, 0, "s2b pad");
  /* and back: BatchToSpaceND with the paddings as crops */
  dfx_node *b = kh_node_new("BatchToSpaceND");
  kh_attr_type(b, "T", DFX_I32);
  kh_attr_type(b, "Tcrops", DFX_I64);
  dfx_tensor *o2[1];
  ct_run(b, (dfx_tensor *[]){o[0], blk, p2}, 3, o2, 1);
  ct_expect(o2[0], DFX_I32, 4, (int64_t[]){2, 2, 4, 1}, (double[]){1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16},
            0, "b2s");
  /* errors */
  dfx_tensor *bad = kh_i32(1, (int64_t[]){2}, (int32_t[]){3, 2});
  ct_fail(n, (dfx_tensor *[]){x2, bad, p2}, 3, "not divisible");
  dfx_tensor *p3 = kh_i64(2, (int64_t[]){2, 2}, (int64_t[]){0, 0, -1, 0});
  ct_fail(n, (dfx_tensor *[]){x2, blk, p3}, 3, ">= 0");
  ct_fail(b, (dfx_tensor *[]){x2, blk, p2}, 3, "not divisible by product");
  kh_node_free(n);
  kh_node_free(b);
  ct_free((dfx_tensor *[]){blk, p0, x, x2, p2, o[0], o2[0], bad, p3}, 9);
}

/* ---- every declared dtype against a naive index map ----
 * The ops only move elements, so one check serves all dtypes: the input's
 * elements get distinct bytes (strings "s<i>"), a naive scatter or gather
 * computes where each output element comes from (-1: zero padding), and
 * every output element must equal its source. */

static dfx_tensor *pattern(dfx_dtype dt, int nd, const int64_t *dims) {
  dfx_tensor *t = kh_tensor(dt, nd, dims, NULL);
  size_t es = dfx__dtype_storage(dt);
  cr_assert(t->count < 255, "keep the pattern unique for 1-byte dtypes");
  for (int64_t i = 0; i < t->count; i++) {
    unsigned char *e = (unsigned char *)t->data + (size_t)i * es;
    if (dt == DFX_STRING) {
      char b[24];
      int len = snprintf(b, sizeof b, "s%lld", (long long)i);
      dfx_tensor_set_string(t, i, b, (size_t)len);
    } else if (dt == DFX_BOOL) {
      e[0] = (i * 7 + 3) % 5 < 2;
    } else {
      for (size_t b = 0; b < es; b++) e[b] = (unsigned char)((i + 1) ^ (b * 0x5b));
    }
  }
  return t;
}

static void expect_map(const dfx_tensor *y, const dfx_tensor *x, int nd, const int64_t *dims, const int64_t *src,
                       const char *what) {
  cr_assert_eq(y->ndims, nd, "%s: rank", what);
  for (int i = 0; i < nd; i++) cr_assert_eq(y->dims[i], dims[i], "%s: dim %d", what, i);
  size_t es = dfx__dtype_storage((dfx_dtype)x->dtype);
  for (int64_t j = 0; j < y->count; j++) {
    if (x->dtype == DFX_STRING) {
      size_t lg, lw = 0;
      const char *g = dfx_tensor_string(y, j, &lg), *w = src[j] < 0 ? "" : dfx_tensor_string(x, src[j], &lw);
      cr_assert(lg == lw && !memcmp(g, w, lg), "%s: [%lld] from %lld", what, (long long)j, (long long)src[j]);
      continue;
    }
    const unsigned char *g = (const unsigned char *)y->data + (size_t)j * es;
    unsigned char zero[16] = {0};
    const unsigned char *w = src[j] < 0 ? zero : (const unsigned char *)x->data + (size_t)src[j] * es;
    cr_assert(!memcmp(g, w, es), "%s %s: [%lld] from %lld", what, dfx_dtype_name((dfx_dtype)x->dtype),
              (long long)j, (long long)src[j]);
  }
}

static int64_t count(int nd, const int64_t *d) {
  int64_t n = 1;
  for (int i = 0; i < nd; i++) n *= d[i];
  return n;
}

/* Space-to-batch as a scatter over the space side s[] (dims sd): padded
 * coordinate t = s + pad, block offset t % block, batch-side coordinate
 * t / block, batch (offset row-major over the block) * B + b. Fills the
 * batch side's dims bd and, in map, for each batch-side element its space-side
 * source (to_batch) or the reverse (crops: batch side is the input). */
static void space_batch_map(int nd, const int64_t *sd, int m, const int64_t *blk, const int64_t (*pad)[2],
                            int64_t *bd, int64_t *map, int to_batch) {
  int64_t prod = 1;
  for (int i = 0; i < m; i++) prod *= blk[i];
  for (int i = 0; i < nd; i++) bd[i] = sd[i];
  bd[0] = sd[0] * prod;
  for (int i = 0; i < m; i++) bd[1 + i] = (sd[1 + i] + pad[i][0] + pad[i][1]) / blk[i];
  int64_t nbatch = count(nd, bd), nspace = count(nd, sd);
  for (int64_t j = 0; j < (to_batch ? nbatch : nspace); j++) map[j] = -1;
  for (int64_t q = 0; q < nspace; q++) {
    int64_t c[8], r = q, off = 0;
    for (int i = nd - 1; i >= 0; i--) c[i] = r % sd[i], r /= sd[i];
    int64_t bc[8];
    for (int i = 0; i < nd; i++) bc[i] = c[i];
    for (int i = 0; i < m; i++) {
      int64_t t = c[1 + i] + pad[i][0];
      off = off * blk[i] + t % blk[i];
      bc[1 + i] = t / blk[i];
    }
    bc[0] = off * sd[0] + c[0];
    int64_t bi = 0;
    for (int i = 0; i < nd; i++) bi = bi * bd[i] + bc[i];
    if (to_batch)
      map[bi] = q;
    else
      map[q] = bi;
  }
}

typedef struct copy_run {
  dfx_tensor *x, *extra[2];
  int n_extra;
  int64_t yd[5], *map;
  int nd;
} copy_run;

static void finish(dfx_node *n, copy_run *r) {
  dfx_tensor *in[3] = {r->x, r->extra[0], r->extra[1]}, *o[1];
  ct_run(n, in, 1 + r->n_extra, o, 1);
  expect_map(o[0], r->x, r->nd, r->yd, r->map, n->op);
  ct_free(o, 1);
  ct_free(in, 1 + r->n_extra);
  kh_node_free(n);
  free(r->map);
}

static dfx_tensor *ints(dfx_dtype it, int nd, const int64_t *dims, const int64_t *v) {
  double d[8];
  for (int64_t i = 0; i < count(nd, dims); i++) d[i] = (double)v[i];
  return ct_tensor(it, nd, dims, d);
}

/* block {2, 3} and paddings/crops {{1, 0}, {0, 2}} over a [2, 3, 4, 2] space side. */
static const int64_t SD[4] = {2, 3, 4, 2}, BLK[2] = {2, 3}, PADS[2][2] = {{1, 0}, {0, 2}};

static void s2b_nd(dfx_dtype dt, dfx_dtype it) {
  copy_run r = {.nd = 4, .n_extra = 2, .map = malloc(sizeof(int64_t) * 256)};
  space_batch_map(4, SD, 2, BLK, PADS, r.yd, r.map, 1);
  r.x = pattern(dt, 4, SD);
  r.extra[0] = ints(it, 1, (int64_t[]){2}, BLK);
  r.extra[1] = ints(it, 2, (int64_t[]){2, 2}, &PADS[0][0]);
  dfx_node *n = kh_node_new("SpaceToBatchND");
  kh_attr_type(n, "T", dt);
  kh_attr_type(n, "Tblock_shape", it);
  kh_attr_type(n, "Tpaddings", it);
  finish(n, &r);
}

static void b2s_nd(dfx_dtype dt, dfx_dtype it) {
  copy_run r = {.nd = 4, .n_extra = 2, .map = malloc(sizeof(int64_t) * 256)};
  int64_t bd[4];
  space_batch_map(4, SD, 2, BLK, PADS, bd, r.map, 0);
  memcpy(r.yd, SD, sizeof SD);
  r.x = pattern(dt, 4, bd);
  r.extra[0] = ints(it, 1, (int64_t[]){2}, BLK);
  r.extra[1] = ints(it, 2, (int64_t[]){2, 2}, &PADS[0][0]);
  dfx_node *n = kh_node_new("BatchToSpaceND");
  kh_attr_type(n, "T", dt);
  kh_attr_type(n, "Tblock_shape", it);
  kh_attr_type(n, "Tcrops", it);
  finish(n, &r);
}

/* v1 forms: block_size 2 over both spatial dims of a [1, 4, 2, 3] space side. */
static void space_batch_v1(dfx_dtype dt, dfx_dtype it, int to_batch) {
  static const int64_t sd[4] = {1, 4, 2, 3}, blk[2] = {2, 2}, pads[2][2] = {{1, 1}, {0, 2}};
  copy_run r = {.nd = 4, .n_extra = 1, .map = malloc(sizeof(int64_t) * 256)};
  int64_t bd[4];
  space_batch_map(4, sd, 2, blk, pads, to_batch ? r.yd : bd, r.map, to_batch);
  if (!to_batch) memcpy(r.yd, sd, sizeof sd);
  r.x = pattern(dt, 4, to_batch ? sd : bd);
  r.extra[0] = ints(it, 2, (int64_t[]){2, 2}, &pads[0][0]);
  dfx_node *n = kh_node_new(to_batch ? "SpaceToBatch" : "BatchToSpace");
  kh_attr_type(n, "T", dt);
  kh_attr_type(n, to_batch ? "Tpaddings" : "Tidx", it);
  kh_attr_int(n, "block_size", 2);
  finish(n, &r);
}
static void s2b_v1(dfx_dtype dt, dfx_dtype it) { space_batch_v1(dt, it, 1); }
static void b2s_v1(dfx_dtype dt, dfx_dtype it) { space_batch_v1(dt, it, 0); }

/* Offset of (b, h, w, c) in an NHWC or NCHW tensor of H x W x C images. */
static int64_t at(int nchw, int64_t H, int64_t W, int64_t C, int64_t b, int64_t h, int64_t w, int64_t c) {
  return nchw ? ((b * C + c) * H + h) * W + w : ((b * H + h) * W + w) * C + c;
}

/* SpaceToDepth scatters (h, w, c) to (h / bs, w / bs, ((h % bs) * bs + w % bs) * C + c);
 * DepthToSpace is its inverse, checked as the same scatter read backwards. */
static void space_depth(dfx_dtype dt, int to_depth) {
  const int64_t B = 2, H = 4, W = 6, C = 2, bs = 2, oH = H / bs, oW = W / bs, oC = C * bs * bs;
  for (int nchw = 0; nchw < 2; nchw++) {
    int64_t sdims[4] = {B, nchw ? C : H, nchw ? H : W, nchw ? W : C};
    int64_t ddims[4] = {B, nchw ? oC : oH, nchw ? oH : oW, nchw ? oW : oC};
    copy_run r = {.nd = 4, .map = malloc(sizeof(int64_t) * 256)};
    memcpy(r.yd, to_depth ? ddims : sdims, sizeof ddims);
    for (int64_t b = 0; b < B; b++)
      for (int64_t h = 0; h < H; h++)
        for (int64_t w = 0; w < W; w++)
          for (int64_t c = 0; c < C; c++) {
            int64_t si = at(nchw, H, W, C, b, h, w, c);
            int64_t di = at(nchw, oH, oW, oC, b, h / bs, w / bs, ((h % bs) * bs + w % bs) * C + c);
            r.map[to_depth ? di : si] = to_depth ? si : di;
          }
    r.x = pattern(dt, 4, to_depth ? sdims : ddims);
    dfx_node *n = kh_node_new(to_depth ? "SpaceToDepth" : "DepthToSpace");
    kh_attr_type(n, "T", dt);
    kh_attr_int(n, "block_size", bs);
    kh_attr_str(n, "data_format", nchw ? "NCHW" : "NHWC");
    finish(n, &r);
  }
}
static void s2d(dfx_dtype dt, dfx_dtype it) { (void)it, space_depth(dt, 1); }
static void d2s(dfx_dtype dt, dfx_dtype it) { (void)it, space_depth(dt, 0); }

/* Patch (r, c) element (kr, kc, d) reads input (r * st - pad + kr * rate, ...) or is zero. */
static void patches(dfx_dtype dt, dfx_dtype it) {
  (void)it;
  const int64_t H = 5, W = 4, D = 2, k[2] = {2, 3}, st[2] = {2, 1}, rt[2] = {1, 2};
  for (int same = 0; same < 2; same++) {
    int64_t out[2], pb[2], in[2] = {H, W};
    for (int i = 0; i < 2; i++) {
      int64_t ek = (k[i] - 1) * rt[i] + 1;
      out[i] = same ? (in[i] + st[i] - 1) / st[i] : (in[i] - ek) / st[i] + 1;
      int64_t need = (out[i] - 1) * st[i] + ek - in[i];
      pb[i] = same && need > 0 ? need / 2 : 0;
    }
    copy_run r = {.nd = 4, .yd = {1, out[0], out[1], k[0] * k[1] * D}, .map = malloc(sizeof(int64_t) * 256)};
    int64_t j = 0;
    for (int64_t y = 0; y < out[0]; y++)
      for (int64_t x = 0; x < out[1]; x++)
        for (int64_t a = 0; a < k[0]; a++)
          for (int64_t b = 0; b < k[1]; b++)
            for (int64_t d = 0; d < D; d++, j++) {
              int64_t iy = y * st[0] - pb[0] + a * rt[0], ix = x * st[1] - pb[1] + b * rt[1];
              r.map[j] = iy < 0 || iy >= H || ix < 0 || ix >= W ? -1 : (iy * W + ix) * D + d;
            }
    cr_assert(j <= 256);
    r.x = pattern(dt, 4, (int64_t[]){1, H, W, D});
    dfx_node *n = kh_node_new("ExtractImagePatches");
    kh_attr_type(n, "T", dt);
    kh_attr_ints(n, "ksizes", (int64_t[]){1, k[0], k[1], 1}, 4);
    kh_attr_ints(n, "strides", (int64_t[]){1, st[0], st[1], 1}, 4);
    kh_attr_ints(n, "rates", (int64_t[]){1, rt[0], rt[1], 1}, 4);
    kh_attr_str(n, "padding", same ? "SAME" : "VALID");
    finish(n, &r);
  }
}

/* One row per kernel: its op, the check, and its index attr (NULL: none). */
static const struct {
  const char *op, *index_attr;
  void (*check)(dfx_dtype dt, dfx_dtype it);
} copy_ops[] = {
    {"SpaceToBatchND", "Tpaddings", s2b_nd}, {"BatchToSpaceND", "Tcrops", b2s_nd},
    {"SpaceToBatch", "Tpaddings", s2b_v1},   {"BatchToSpace", "Tidx", b2s_v1},
    {"SpaceToDepth", NULL, s2d},             {"DepthToSpace", NULL, d2s},
    {"ExtractImagePatches", NULL, patches},
};

Test(space, every_declared_dtype_vs_index_map) {
  for (size_t i = 0; i < sizeof copy_ops / sizeof copy_ops[0]; i++) {
    dfx_dtype dts[DFX_DTYPE_END_], its[DFX_DTYPE_END_] = {DFX_I32};
    int nd = ct_declared(copy_ops[i].op, "T", dts);
    int ni = copy_ops[i].index_attr ? ct_declared(copy_ops[i].op, copy_ops[i].index_attr, its) : 1;
    if (!strcmp(copy_ops[i].op, "SpaceToBatchND") || !strcmp(copy_ops[i].op, "BatchToSpaceND")) {
      dfx_dtype b[DFX_DTYPE_END_];
      int nb = ct_declared(copy_ops[i].op, "Tblock_shape", b); /* set together with the other index attr */
      cr_assert(nb == ni && !memcmp(b, its, sizeof *b * (size_t)nb));
    }
    for (int d = 0; d < nd; d++) copy_ops[i].check(dts[d], its[0]);
    for (int k = 1; k < ni; k++) copy_ops[i].check(DFX_F32, its[k]);
  }
}

Test(space, v1_forms_and_strings) {
  dfx_tensor *x = kh_tensor(DFX_STRING, 4, (int64_t[]){1, 2, 2, 1}, NULL);
  const char *s[4] = {"a", "bb", "ccc", ""};
  for (int i = 0; i < 4; i++) dfx_tensor_set_string(x, i, s[i], strlen(s[i]));
  dfx_tensor *pads = kh_i32(2, (int64_t[]){2, 2}, (int32_t[]){0, 0, 0, 0});
  dfx_tensor *y = run1("SpaceToBatch", DFX_STRING, (dfx_tensor *[]){x, pads}, 2, 2);
  cr_assert_eq(y->dims[0], 4);
  for (int i = 0; i < 4; i++) {
    size_t len;
    const char *g = dfx_tensor_string(y, i, &len);
    cr_assert(len == strlen(s[i]) && !memcmp(g, s[i], len));
  }
  dfx_tensor *z = run1("BatchToSpace", DFX_STRING, (dfx_tensor *[]){y, pads}, 2, 2);
  cr_assert(dfx__tensor_same_shape(z, x));
  size_t len;
  cr_assert(!memcmp(dfx_tensor_string(z, 2, &len), "ccc", 3));
  ct_free((dfx_tensor *[]){x, pads, y, z}, 4);
}

Test(space, depth_doc_examples) {
  dfx_tensor *x = iota(DFX_F32, 4, (int64_t[]){1, 4, 4, 1});
  dfx_tensor *y = run1("SpaceToDepth", DFX_F32, &x, 1, 2);
  ct_expect(y, DFX_F32, 4, (int64_t[]){1, 2, 2, 4}, (double[]){1, 2, 5, 6, 3, 4, 7, 8, 9, 10, 13, 14, 11, 12, 15, 16},
            0, "s2d");
  dfx_tensor *z = run1("DepthToSpace", DFX_F32, &y, 1, 2);
  cr_assert(!memcmp(z->data, x->data, x->nbytes));
  dfx_tensor *x3 = iota(DFX_I64, 4, (int64_t[]){2, 6, 4, 3});
  dfx_tensor *y3 = run1("SpaceToDepth", DFX_I64, &x3, 1, 2);
  cr_assert_eq(y3->dims[3], 12);
  dfx_tensor *z3 = run1("DepthToSpace", DFX_I64, &y3, 1, 2);
  cr_assert(!memcmp(z3->data, x3->data, x3->nbytes));
  /* NCHW equals NHWC up to a transpose: check one element by hand. */
  dfx_node *n = kh_node_new("SpaceToDepth");
  kh_attr_type(n, "T", DFX_F32);
  kh_attr_int(n, "block_size", 2);
  kh_attr_str(n, "data_format", "NCHW");
  dfx_tensor *xc = iota(DFX_F32, 4, (int64_t[]){1, 1, 4, 4}), *o[1];
  ct_run(n, &xc, 1, o, 1);
  ct_expect(o[0], DFX_F32, 4, (int64_t[]){1, 4, 2, 2}, (double[]){1, 3, 9, 11, 2, 4, 10, 12, 5, 7, 13, 15, 6, 8, 14, 16},
            0, "s2d nchw");
  dfx_tensor *bad = iota(DFX_F32, 4, (int64_t[]){1, 3, 4, 1});
  kh_attr_str(n, "data_format", "NHWC");
  ct_fail(n, &bad, 1, "divisible");
  kh_node_free(n);
  ct_free((dfx_tensor *[]){x, y, z, x3, y3, z3, xc, o[0], bad}, 9);
}

Test(space, extract_image_patches) {
  dfx_tensor *x = iota(DFX_F32, 4, (int64_t[]){1, 10, 10, 1});
  dfx_node *n = kh_node_new("ExtractImagePatches");
  kh_attr_type(n, "T", DFX_F32);
  kh_attr_ints(n, "ksizes", (int64_t[]){1, 3, 3, 1}, 4);
  kh_attr_ints(n, "strides", (int64_t[]){1, 5, 5, 1}, 4);
  kh_attr_ints(n, "rates", (int64_t[]){1, 1, 1, 1}, 4);
  kh_attr_str(n, "padding", "VALID");
  dfx_tensor *o[1];
  ct_run(n, &x, 1, o, 1);
  ct_expect(o[0], DFX_F32, 4, (int64_t[]){1, 2, 2, 9},
            (double[]){1, 2, 3, 11, 12, 13, 21, 22, 23, 6, 7, 8, 16, 17, 18, 26, 27, 28,
                       51, 52, 53, 61, 62, 63, 71, 72, 73, 56, 57, 58, 66, 67, 68, 76, 77, 78},
            0, "patches");
  ct_free(o, 1);
  kh_attr_ints(n, "rates", (int64_t[]){1, 2, 2, 1}, 4);
  ct_run(n, &x, 1, o, 1);
  ct_expect(o[0], DFX_F32, 4, (int64_t[]){1, 2, 2, 9},
            (double[]){1, 3, 5, 21, 23, 25, 41, 43, 45, 6, 8, 10, 26, 28, 30, 46, 48, 50,
                       51, 53, 55, 71, 73, 75, 91, 93, 95, 56, 58, 60, 76, 78, 80, 96, 98, 100},
            0, "patches rates");
  ct_free(o, 1);
  /* SAME: 2x2 windows on a 3x3 image with stride 2 pad after with zeros. */
  dfx_tensor *x3 = iota(DFX_F32, 4, (int64_t[]){1, 3, 3, 1});
  kh_attr_ints(n, "ksizes", (int64_t[]){1, 2, 2, 1}, 4);
  kh_attr_ints(n, "strides", (int64_t[]){1, 2, 2, 1}, 4);
  kh_attr_ints(n, "rates", (int64_t[]){1, 1, 1, 1}, 4);
  kh_attr_str(n, "padding", "SAME");
  ct_run(n, &x3, 1, o, 1);
  ct_expect(o[0], DFX_F32, 4, (int64_t[]){1, 2, 2, 4}, (double[]){1, 2, 4, 5, 3, 0, 6, 0, 7, 8, 0, 0, 9, 0, 0, 0}, 0,
            "patches same");
  ct_free(o, 1);
  kh_attr_ints(n, "ksizes", (int64_t[]){2, 2, 2, 1}, 4);
  ct_fail(n, &x3, 1, "ksizes across space");
  kh_node_free(n);
  ct_free((dfx_tensor *[]){x, x3}, 2);
}
