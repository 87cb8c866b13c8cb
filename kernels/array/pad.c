/* pad.c - Pad, PadV2, MirrorPad, Roll, ReverseSequence.
 * Pad fills the output and copies the input box into its interior; MirrorPad
 * and Roll map each output index per dim to a source index and copy the
 * innermost dim in maximal contiguous runs. */
#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "autil.h"


/* Reads paddings [rank, 2] into pad[2*i], pad[2*i+1]. */
static dfx_code read_paddings(dfx_kctx *ctx, int64_t *pad) {
  const dfx_tensor *x = ctx->in[0], *p = ctx->in[1];
  char b1[64], b2[64];
  if (p->ndims != 2 || p->dims[1] != 2)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "paddings must be a matrix with 2 columns: %s", DFX_SHAPE_STR(p, b1));
  /* Also what keeps pad[] (2 * DFX_MAX_DIMS slots) from overflowing. */
  if (p->dims[0] != x->ndims)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "The first dimension of paddings must be the rank of inputs%s %s",
                          DFX_SHAPE_STR(p, b1), DFX_SHAPE_STR(x, b2));
  for (int i = 0; i < 2 * x->ndims; i++) pad[i] = dfx__tensor_get_i64(p, i);
  return DFX_OK;
}

static dfx_code pad_kernel(dfx_kctx *ctx) {
  const dfx_tensor *x = ctx->in[0];
  int r = x->ndims;
  int64_t pad[2 * DFX_MAX_DIMS], od[DFX_MAX_DIMS], ys[DFX_MAX_DIMS], xs[DFX_MAX_DIMS], doff = 0;
  if (read_paddings(ctx, pad)) return DFX_EINVAL;
  const dfx_tensor *cv = ctx->n_in > 2 ? ctx->in[2] : NULL;
  if (cv && cv->ndims != 0) {
    char b[64];
    return dfx__kctx_fail(ctx, DFX_EINVAL, "constant_values must be a scalar. Found: %s", DFX_SHAPE_STR(cv, b));
  }
  for (int i = 0; i < r; i++) {
    if (pad[2 * i] < 0 || pad[2 * i + 1] < 0)
      return dfx__kctx_fail(ctx, DFX_EINVAL, "Paddings must be non-negative: %lld %lld", (long long)pad[2 * i],
                            (long long)pad[2 * i + 1]);
    if (__builtin_add_overflow(pad[2 * i], x->dims[i], &od[i]) || __builtin_add_overflow(od[i], pad[2 * i + 1], &od[i]))
      return dfx__kctx_fail(ctx, DFX_EINVAL, "Padded dimension %d overflows int64", i);
  }
  /* A string output holds the input's bytes plus a copy of the constant per padded element. */
  int64_t count = dfx__shape_count(r, od);
  if (x->dtype == DFX_STRING && cv &&
      dfx__arr_str_budget(ctx, "paddings", dfx__arr_str_bytes(x), count < 0 ? -1 : count - x->count,
                          dfx__arr_str_len(cv, 0)))
    return ctx->st->code;
  dfx_tensor *y = dfx__arr_alloc(ctx, 0, (dfx_dtype)x->dtype, r, od, "paddings");
  if (!y) return ctx->st->code;
  if (cv) {
    dfx_code c = dfx__arr_fill(ctx, y, 0, y->count, cv, 0);
    if (c) return c;
  /* Pad without a constant pads with zeros; a string output came zeroed
   * (empty strings) from allocation. */
  } else if (y->dtype != DFX_STRING) {
    memset(y->data, 0, y->nbytes);
  }
  dfx__arr_strides(r, od, ys);
  dfx__arr_strides(r, x->dims, xs);
  /* The input is the interior box, starting pad_before into each output dim,
   * walked with the output's strides. */
  for (int i = 0; i < r; i++) doff += pad[2 * i] * ys[i];
  return x->count ? dfx__arr_strided(ctx, y, doff, ys, x, 0, xs, r, x->dims) : DFX_OK;
}

/* Output element c (of shape od) reads input element sum(map[k][c_k] * xs[k]);
 * the innermost dim is copied in runs where the map increases by one. With
 * y NULL nothing is copied: *bytes receives the string bytes y would hold. */
static dfx_code mapped_copy(dfx_kctx *ctx, dfx_tensor *y, const int64_t *od, const dfx_tensor *x,
                            int64_t *const *map, uint64_t *bytes) {
  int r = x->ndims;
  if (dfx__shape_count(r, od) == 0) return DFX_OK;
  /* A scalar has no dims to map: its one element is copied (or counted). */
  if (r == 0) return y ? dfx__arr_copy(ctx, y, 0, x, 0, 1) : (*bytes = dfx__arr_str_bytes(x), DFX_OK);
  int64_t xs[DFX_MAX_DIMS], idx[DFX_MAX_DIMS] = {0}, n = od[r - 1], e = 0, work = 0;
  dfx__arr_strides(r, x->dims, xs);
  const int64_t *m = map[r - 1];
  for (;;) {
    int64_t base = 0;
    for (int k = 0; k < r - 1; k++) base += map[k][idx[k]] * xs[k];
    for (int64_t i = 0; i < n;) {
      int64_t j = i + 1;
      while (j < n && m[j] == m[j - 1] + 1) j++;
      if (y) {
        dfx_code c = dfx__arr_copy(ctx, y, e + i, x, base + m[i], j - i);
        if (c) return c;
      } else {
        for (int64_t q = i; q < j; q++) *bytes += dfx__arr_str_len(x, base + m[q]);
      }
      i = j;
    }
    e += n;
    dfx_code c = dfx__arr_tick(ctx, &work, n);
    if (c) return c;
    int k = r - 2;
    while (k >= 0 && ++idx[k] == od[k]) idx[k--] = 0;
    if (k < 0) return DFX_OK;
  }
}

static void free_maps(int64_t **map, int r) {
  for (int i = 0; i < r; i++) dfx__free(map[i]);
}

static dfx_code mirror_pad_kernel(dfx_kctx *ctx) {
  const dfx_tensor *x = ctx->in[0];
  int r = x->ndims;
  const char *mode = dfx__attr_str(ctx->node, "mode", "");
  int off;
  /* REFLECT mirrors around the edge element (excluding it), SYMMETRIC
   * repeats it; hence TF's bounds: pad < dim for REFLECT, pad <= dim else. */
  if (strcmp(mode, "REFLECT") == 0) off = 1;
  else if (strcmp(mode, "SYMMETRIC") == 0) off = 0;
  else return dfx__kctx_fail(ctx, DFX_EINVAL, "mode must be either REFLECT or SYMMETRIC, got '%s'", mode);
  int64_t pad[2 * DFX_MAX_DIMS], od[DFX_MAX_DIMS];
  if (read_paddings(ctx, pad)) return DFX_EINVAL;
  for (int i = 0; i < r; i++) {
    int64_t a = pad[2 * i], b = pad[2 * i + 1], d = x->dims[i];
    if (a < 0 || b < 0)
      return dfx__kctx_fail(ctx, DFX_EINVAL, "Paddings must be non-negative: %lld %lld", (long long)a, (long long)b);
    /* Beyond these bounds one reflection could not bring an index back in. */
    if (off && (a >= d || b >= d))
      return dfx__kctx_fail(ctx, DFX_EINVAL, "paddings must be less than the dimension size: %lld, %lld not less than %lld",
                            (long long)a, (long long)b, (long long)d);
    if (!off && (a > d || b > d))
      return dfx__kctx_fail(ctx, DFX_EINVAL,
                            "paddings must be no greater than the dimension size: %lld, %lld greater than %lld",
                            (long long)a, (long long)b, (long long)d);
    od[i] = a + d + b;
  }
  /* Each output dim is at most three times its input dim, so the maps are
   * bounded by the input; the output itself is checked before allocating. */
  int64_t *map[DFX_MAX_DIMS] = {NULL};
  dfx_code c = DFX_OK;
  for (int i = 0; i < r && !c; i++) {
    map[i] = dfx__malloc(sizeof(int64_t) * (size_t)(od[i] ? od[i] : 1));
    if (!map[i]) {
      c = dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory");
      break;
    }
    int64_t d = x->dims[i];
    for (int64_t k = 0; k < od[i]; k++) {
      int64_t j = k - pad[2 * i];
      /* Mirror the index back into [0, d); the bounds checked above keep it
       * there after a single reflection. */
      if (j < 0) j = -j - 1 + off;
      else if (j >= d) j = 2 * d - j - 1 - off;
      map[i][k] = j;
    }
  }
  uint64_t bytes = 0;
  /* Strings: a dry run counts the bytes the output would hold, checked
   * against the limit before anything is allocated. */
  if (!c && x->dtype == DFX_STRING && !(c = mapped_copy(ctx, NULL, od, x, map, &bytes)))
    c = dfx__arr_str_limit(ctx, true, bytes, "MirrorPad paddings");
  if (!c) {
    dfx_tensor *y = dfx__arr_alloc(ctx, 0, (dfx_dtype)x->dtype, r, od, "MirrorPad paddings");
    c = y ? mapped_copy(ctx, y, od, x, map, NULL) : ctx->st->code;
  }
  free_maps(map, r);
  return c;
}

static dfx_code roll_kernel(dfx_kctx *ctx) {
  const dfx_tensor *x = ctx->in[0], *ts = ctx->in[1], *ta = ctx->in[2];
  int r = x->ndims;
  char b[64];
  if (ts->ndims > 1)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "shift must be a scalar or a 1-D vector. Found: %s", DFX_SHAPE_STR(ts, b));
  if (ta->ndims > 1)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "axis must be a scalar or a 1-D vector. Found: %s", DFX_SHAPE_STR(ta, b));
  if (ts->count != ta->count)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "shift and axis must have the same size");
  if (r == 0 && ta->count) return dfx__kctx_fail(ctx, DFX_EINVAL, "input must be 1-D or higher");
  int64_t shift[DFX_MAX_DIMS] = {0};
  for (int64_t i = 0; i < ts->count; i++) {
    int64_t a = dfx__tensor_get_i64(ta, i), c = a < 0 ? a + r : a;
    if (c < 0 || c >= r) return dfx__kctx_fail(ctx, DFX_EINVAL, "axis %lld is out of range", (long long)a);
    int64_t d = x->dims[c], s = dfx__tensor_get_i64(ts, i);
    /* Normalised into [0, d) with C's signed %, so negative shifts work; an
     * axis named twice has its shifts added, as in TF. */
    if (d) shift[c] = ((shift[c] + s % d) % d + d) % d;
  }
  dfx_tensor *y = dfx__kctx_alloc(ctx, 0, (dfx_dtype)x->dtype, r, x->dims);
  if (!y) return DFX_ENOMEM;
  int64_t *map[DFX_MAX_DIMS] = {NULL};
  for (int i = 0; i < r; i++) {
    int64_t d = x->dims[i];
    map[i] = dfx__malloc(sizeof(int64_t) * (size_t)(d ? d : 1));
    if (!map[i]) return free_maps(map, r), dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory");
    /* Output k reads input k - shift, cyclically. */
    for (int64_t k = 0; k < d; k++) map[i][k] = (k - shift[i] + d) % d;
  }
  dfx_code c = mapped_copy(ctx, y, x->dims, x, map, NULL);
  free_maps(map, r);
  return c;
}

/* seq_dim and batch_dim index the input's dims. */
static dfx_code reverse_sequence_init(const dfx_node *n, void **state, dfx_status *st) {
  (void)state;
  /* Checked at init only against DFX_MAX_DIMS; the kernel checks the actual
   * rank once it has the input. */
  dfx_code c = dfx__arr_attr_range(n, "seq_dim", -DFX_MAX_DIMS, DFX_MAX_DIMS - 1, st);
  return c ? c : dfx__arr_attr_range(n, "batch_dim", -DFX_MAX_DIMS, DFX_MAX_DIMS - 1, st);
}

static dfx_code reverse_sequence_kernel(dfx_kctx *ctx) {
  const dfx_tensor *x = ctx->in[0], *tl = ctx->in[1];
  int r = x->ndims;
  int64_t sd = dfx__attr_int(ctx->node, "seq_dim", 0), bd = dfx__attr_int(ctx->node, "batch_dim", 0);
  if (sd < 0) sd += r;
  if (bd < 0) bd += r;
  if (bd == sd) return dfx__kctx_fail(ctx, DFX_EINVAL, "batch_dim == seq_dim == %lld", (long long)sd);
  if (sd < 0 || sd >= r)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "seq_dim must be < input rank ( %lld vs. %d)", (long long)sd, r);
  if (bd < 0 || bd >= r)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "batch_dim must be < input rank ( %lld vs. %d)", (long long)bd, r);
  if (tl->ndims != 1) {
    char b[64];
    return dfx__kctx_fail(ctx, DFX_EINVAL, "seq_lengths must be 1-dim, not %s", DFX_SHAPE_STR(tl, b));
  }
  if (tl->count != x->dims[bd])
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Length of seq_lengths != input.dims(%lld), (%lld vs. %lld)", (long long)bd,
                          (long long)tl->count, (long long)x->dims[bd]);
  for (int64_t i = 0; i < tl->count; i++) {
    int64_t l = dfx__tensor_get_i64(tl, i);
    if (l < 0) return dfx__kctx_fail(ctx, DFX_EINVAL, "seq_lens(%lld) < 0", (long long)i);
    if (l > x->dims[sd])
      return dfx__kctx_fail(ctx, DFX_EINVAL, "seq_lens(%lld) > input.dims(%lld)", (long long)i, (long long)sd);
  }
  dfx_tensor *y = dfx__kctx_alloc(ctx, 0, (dfx_dtype)x->dtype, r, x->dims);
  if (!y) return DFX_ENOMEM;
  dfx_code c = dfx__arr_copy(ctx, y, 0, x, 0, x->count);
  if (c) return c;
  /* Reverse the prefix of each (batch, seq) line: one strided copy per batch
   * entry over the box with seq extent len, reading with a negative stride. */
  int64_t xs[DFX_MAX_DIMS], box[DFX_MAX_DIMS], ss[DFX_MAX_DIMS];
  dfx__arr_strides(r, x->dims, xs);
  for (int64_t b = 0; b < x->dims[bd]; b++) {
    int64_t l = dfx__tensor_get_i64(tl, b);
    /* Lines of length 0 or 1 are their own reverse: the copy above did them. */
    if (l <= 1) continue;
    memcpy(box, x->dims, sizeof(int64_t) * (size_t)r);
    memcpy(ss, xs, sizeof(int64_t) * (size_t)r);
    box[bd] = 1;
    box[sd] = l;
    ss[sd] = -xs[sd];
    int64_t off = b * xs[bd];
    if ((c = dfx__arr_strided(ctx, y, off, xs, x, off + (l - 1) * xs[sd], ss, r, box))) return c;
  }
  return DFX_OK;
}

static const dfx_kernel_def kernels[] = {
    {"Pad", DFX_ARR_T_COPY "; Tpaddings: " DFX_ARR_I32_64, pad_kernel, DFX_KERNEL_CHEAP, NULL, NULL},
    {"PadV2", DFX_ARR_T_COPY "; Tpaddings: " DFX_ARR_I32_64, pad_kernel, DFX_KERNEL_CHEAP, NULL, NULL},
    {"MirrorPad", DFX_ARR_T_COPY "; Tpaddings: " DFX_ARR_I32_64, mirror_pad_kernel, DFX_KERNEL_CHEAP, NULL, NULL},
    {"Roll", DFX_ARR_T_COPY "; Tshift: " DFX_ARR_I32_64 "; Taxis: " DFX_ARR_I32_64, roll_kernel, DFX_KERNEL_CHEAP, NULL, NULL},
    {"ReverseSequence", DFX_ARR_T_COPY "; Tlen: " DFX_ARR_I32_64, reverse_sequence_kernel, DFX_KERNEL_CHEAP, reverse_sequence_init,
     NULL},
    {NULL}};

void dfx__kernels_array_pad(dfx_registry *r);
void dfx__kernels_array_pad(dfx_registry *r) { dfx__kernels_add(r, kernels); }
