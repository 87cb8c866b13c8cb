/* ragged.c - RaggedTensorToSparse, RaggedGather and RaggedTensorToTensor.
 * A ragged tensor is nested row partitions over flat values whose dim 0
 * is the innermost ragged dimension: ROW_SPLITS (row i is
 * [splits[i], splits[i+1])), VALUE_ROWIDS (the row of each element, sorted)
 * or FIRST_DIM_SIZE (the outermost row count). Values' inner dims are
 * uniform and copied whole. */
#include <stdio.h>
#include <string.h>

#include "gather/gutil.h"
#include "sutil.h"

/* Copies n rows of `inner` elements (strings deep-copied). */
static dfx_code copy_rows(dfx_kctx *ctx, dfx_dtype dt, void *dst, int64_t drow, const void *src, int64_t srow,
                          int64_t n, int64_t inner) {
  size_t es = dfx__dtype_storage(dt);
  if (n <= 0 || inner == 0) return DFX_OK;
  char *d = (char *)dst + (size_t)(drow * inner) * es;
  const char *s = (const char *)src + (size_t)(srow * inner) * es;
  if (dt == DFX_STRING) return dfx__g_copy(ctx, dt, d, s, n * inner);
  memcpy(d, s, (size_t)(n * inner) * es);
  return DFX_OK;
}

/* ---- RaggedTensorToSparse ---- */

static dfx_code validate_splits(dfx_kctx *ctx, int k, const dfx_tensor *const *splits, const dfx_tensor *values) {
  for (int i = 0; i < k; i++) {
    const dfx_tensor *s = splits[i];
    if (s->ndims != 1) return dfx__kctx_fail(ctx, DFX_EINVAL, "ragged splits must be a vector.");
    if (s->count == 0) return dfx__kctx_fail(ctx, DFX_EINVAL, "ragged splits may not be empty.");
    if (sidx(s, 0) != 0) return dfx__kctx_fail(ctx, DFX_EINVAL, "First value of ragged splits must be 0.");
    for (int64_t j = 1; j < s->count; j++)
      if (sidx(s, j) < sidx(s, j - 1)) return dfx__kctx_fail(ctx, DFX_EINVAL, "Ragged splits should be non decreasing.");
    if (i > 0 && s->count != sidx(splits[i - 1], splits[i - 1]->count - 1) + 1)
      return dfx__kctx_fail(ctx, DFX_EINVAL,
                            "Final value of ragged splits must match the length the corresponding ragged values.");
  }
  if (values->ndims < 1) return dfx__kctx_fail(ctx, DFX_EINVAL, "rt_dense_values must have rank >= 1");
  if (values->dims[0] != sidx(splits[k - 1], splits[k - 1]->count - 1))
    return dfx__kctx_fail(ctx, DFX_EINVAL,
                          "Final value of ragged splits must match the length the corresponding ragged values.");
  return DFX_OK;
}

static dfx_code to_sparse(dfx_kctx *ctx) {
  int k = ctx->n_in - 1;
  const dfx_tensor *values = ctx->in[k];
  if (k < 1) return dfx__kctx_fail(ctx, DFX_EINVAL, "rt_nested_splits must be non empty");
  if (validate_splits(ctx, k, (const dfx_tensor *const *)ctx->in, values)) return ctx->st->code;
  int64_t rows = values->dims[0], inner = values->ndims > 1 ? dfx__shape_count(values->ndims - 1, values->dims + 1) : 1;
  int64_t width = k + values->ndims, nvals = rows * inner;
  if (dfx__s_check_count(ctx, "sparse_indices", inner && nvals / inner != rows ? -1 : nvals * width, DFX_I64))
    return ctx->st->code;
  int64_t idims[2] = {nvals, width}, sd[1] = {width};
  dfx_tensor *ind = dfx__kctx_alloc(ctx, 0, DFX_I64, 2, idims);
  if (!ind) return ctx->st->code;
  if (values->ndims == 1) {
    dfx__kctx_forward(ctx, k, 1);
  } else {
    dfx_tensor *v = dfx__tensor_reshaped(ctx->in[k], 1, &nvals);
    if (!v) return dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory");
    ctx->out[1] = v;
  }
  dfx_tensor *shape = dfx__kctx_alloc(ctx, 2, DFX_I64, 1, sd);
  if (!shape) return ctx->st->code;
  int64_t *sh = shape->data;
  sh[0] = ctx->in[0]->count - 1;
  for (int d = 0; d < k; d++) {
    int64_t mw = 0;
    for (int64_t i = 1; i < ctx->in[d]->count; i++) {
      int64_t w = sidx(ctx->in[d], i) - sidx(ctx->in[d], i - 1);
      if (w > mw) mw = w;
    }
    sh[d + 1] = mw;
  }
  for (int d = 1; d < values->ndims; d++) sh[d + k] = values->dims[d];
  /* For each value row, walk up the partitions: its position in its row at
   * every level, the row number at the top. pos[] caches the current row
   * per level (values come in order, rows only advance). */
  int64_t row[16] = {0}, *iv = ind->data, left = DFX_S_POLL_EVERY;
  if (k > 16) return dfx__kctx_fail(ctx, DFX_EINVAL, "RaggedTensorToSparse supports up to 16 ragged dims");
  int64_t sfx[DFX_MAX_DIMS] = {0};
  for (int64_t r = 0; r < rows; r++) {
    /* Level k-1 (innermost): the row containing element r. */
    int64_t child = r, prefix[17];
    for (int d = k - 1; d >= 0; d--) {
      const dfx_tensor *s = ctx->in[d];
      while (sidx(s, row[d] + 1) <= child) row[d]++;
      prefix[d + 1] = child - sidx(s, row[d]);
      child = row[d];
    }
    prefix[0] = child;
    memset(sfx, 0, sizeof sfx);
    for (int64_t e = 0; e < inner; e++) {
      int64_t *o = iv + (r * inner + e) * width;
      for (int d = 0; d <= k; d++) o[d] = prefix[d];
      for (int d = 1; d < values->ndims; d++) o[k + d] = sfx[d];
      for (int d = values->ndims - 1; d >= 1 && ++sfx[d] == values->dims[d]; d--) sfx[d] = 0;
    }
    if (stick(ctx, &left, inner * width + k)) return ctx->st->code;
  }
  return DFX_OK;
}

/* ---- RaggedGather ---- */

static dfx_code ragged_gather(dfx_kctx *ctx) {
  int pk = (int)dfx__attr_int(ctx->node, "PARAMS_RAGGED_RANK", 1), ok = (int)dfx__attr_int(ctx->node, "OUTPUT_RAGGED_RANK", 0);
  const dfx_tensor *values = ctx->in[pk], *idx = ctx->in[pk + 1];
  dfx_dtype st = (dfx_dtype)ctx->in[0]->dtype, dt = (dfx_dtype)values->dtype;
  if (ok != pk + idx->ndims - 1)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "OUTPUT_RAGGED_RANK (%d) must be PARAMS_RAGGED_RANK + indices.rank - 1 = %d",
                          ok, pk + idx->ndims - 1);
  for (int d = 0; d < pk; d++)
    if (ctx->in[d]->ndims != 1) return dfx__kctx_fail(ctx, DFX_EINVAL, "params_nested_splits must be vectors");
  int64_t nparams = ctx->in[0]->count - 1;
  for (int64_t i = 0; i < idx->count; i++) {
    int64_t v = sidx(idx, i);
    if (v < 0 || v >= nparams)
      return dfx__kctx_fail(ctx, DFX_EINVAL, "indices[%lld] = %lld is not in [0, %lld)", (long long)i, (long long)v,
                            (long long)nparams);
  }
  if (values->ndims < 1) return dfx__kctx_fail(ctx, DFX_EINVAL, "params.rank must be nonzero");
  int64_t nvals_in = values->dims[0];
  for (int d = 0; d < pk; d++) {
    const dfx_tensor *s = ctx->in[d];
    int64_t last = d == pk - 1 ? nvals_in : ctx->in[d + 1]->count - 1;
    if (s->count == 0) return dfx__kctx_fail(ctx, DFX_EINVAL, "Ragged splits may not be empty");
    if (sidx(s, 0) < 0) return dfx__kctx_fail(ctx, DFX_EINVAL, "Ragged splits must be non-negative");
    if (sidx(s, s->count - 1) > last) return dfx__kctx_fail(ctx, DFX_EINVAL, "Ragged splits must not point past values");
    for (int64_t i = 1; i < s->count; i++)
      if (sidx(s, i - 1) > sidx(s, i)) return dfx__kctx_fail(ctx, DFX_EINVAL, "Ragged splits must be sorted");
  }
  /* Output splits: uniform ones for the leading index dims, then the
   * gathered ragged ones; value slices [start, limit) to copy. */
  svec *splits = dfx__calloc((size_t)(ok > 0 ? ok : 1), sizeof(svec));
  svec slices = {0};
  dfx_code code = DFX_OK;
  int64_t nvals = 0, left = DFX_S_POLL_EVERY;
  if (!splits) return dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory");
  for (int d = 0; d < ok && !code; d++) code = dfx__svec_push(ctx, &splits[d], 0);
  int64_t entries = 1;
  for (int d = 0; d + 1 < idx->ndims && !code; d++) {
    entries *= idx->dims[d];
    for (int64_t i = 1; i <= entries && !code; i++) code = dfx__svec_push(ctx, &splits[d], i * idx->dims[d + 1]);
  }
  for (int64_t i = 0; i < idx->count && !code; i++) {
    int64_t start = sidx(idx, i), limit = start + 1;
    for (int d = 0; d < pk && !code; d++) {
      const dfx_tensor *s = ctx->in[d];
      int od = d + idx->ndims - 1;
      if (od >= 0) {
        int64_t off = splits[od].v[splits[od].n - 1] - sidx(s, start);
        for (int64_t j = start; j < limit && !code; j++) code = dfx__svec_push(ctx, &splits[od], sidx(s, j + 1) + off);
      }
      int64_t ns = sidx(s, start), nl = sidx(s, limit);
      start = ns, limit = nl;
    }
    if (!code && limit != start) {
      if (!(code = dfx__svec_push(ctx, &slices, start))) code = dfx__svec_push(ctx, &slices, limit);
      nvals += limit - start;
    }
    if (!code) code = stick(ctx, &left, pk + 1);
  }
  if (code) goto done;
  for (int d = 0; d < ok; d++) {
    dfx_tensor *t = dfx__kctx_alloc(ctx, d, st, 1, &splits[d].n);
    if (!t) {
      code = ctx->st->code;
      goto done;
    }
    for (int64_t i = 0; i < splits[d].n; i++) gset_idx(t, i, splits[d].v[i]);
  }
  int64_t od[DFX_MAX_DIMS], inner = values->ndims > 1 ? dfx__shape_count(values->ndims - 1, values->dims + 1) : 1;
  memcpy(od, values->dims, sizeof(int64_t) * values->ndims);
  od[0] = nvals;
  dfx_tensor *ov = dfx__kctx_alloc(ctx, ok, dt, values->ndims, od);
  if (!ov) {
    code = ctx->st->code;
    goto done;
  }
  for (int64_t i = 0, at = 0; i < slices.n && !code; i += 2) {
    int64_t a = slices.v[i], b = slices.v[i + 1];
    code = copy_rows(ctx, dt, ov->data, at, values->data, a, b - a, inner);
    at += b - a;
  }
done:
  for (int d = 0; d < ok; d++) svec_free(&splits[d]);
  dfx__free(splits);
  svec_free(&slices);
  return code;
}

/* ---- RaggedTensorToTensor ---- */

typedef enum { RP_FIRST_DIM_SIZE, RP_VALUE_ROWIDS, RP_ROW_SPLITS } rp_type;

typedef struct rt_state {
  int n;
  rp_type t[DFX_MAX_DIMS + 1];
} rt_state;

static dfx_code rt_init(const dfx_node *node, void **state, dfx_status *st) {
  const dfx_attr *a = dfx__node_attr(node, "row_partition_types");
  rt_state *s = dfx__calloc(1, sizeof *s);
  if (!s) return dfx__status_set(st, DFX_ENOMEM, "out of memory");
  int n = a && a->kind == DFX_ATTR_LIST ? a->v.list.n : 0;
  if (n == 0 || n > DFX_MAX_DIMS + 1) {
    dfx__free(s);
    return dfx__status_set(st, DFX_EINVAL, "row_partition_types must have 1 to %d entries", DFX_MAX_DIMS + 1);
  }
  for (int i = 0; i < n; i++) {
    const dfx_str *v = &a->v.list.v.s[i];
    if (v->len == 14 && memcmp(v->ptr, "FIRST_DIM_SIZE", 14) == 0) s->t[i] = RP_FIRST_DIM_SIZE;
    else if (v->len == 12 && memcmp(v->ptr, "VALUE_ROWIDS", 12) == 0) s->t[i] = RP_VALUE_ROWIDS;
    else if (v->len == 10 && memcmp(v->ptr, "ROW_SPLITS", 10) == 0) s->t[i] = RP_ROW_SPLITS;
    else {
      dfx__free(s);
      return dfx__status_set(st, DFX_EINVAL, "Unknown string for partition info type: %.*s", (int)v->len, v->ptr ? v->ptr : "");
    }
  }
  s->n = n;
  *state = s;
  return DFX_OK;
}

static void rt_fini(void *state) { dfx__free(state); }

static const char *rp_name(rp_type t) {
  return t == RP_FIRST_DIM_SIZE ? "FIRST_DIM_SIZE" : t == RP_VALUE_ROWIDS ? "VALUE_ROWIDS" : "ROW_SPLITS";
}

static dfx_code to_tensor(dfx_kctx *ctx) {
  const rt_state *s = ctx->state;
  const dfx_tensor *shape = ctx->in[0], *values = ctx->in[1], *def = ctx->in[2];
  dfx_dtype dt = (dfx_dtype)values->dtype;
  char b1[128], b2[128];
  if (ctx->n_in - 3 != s->n)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "row_partition_types has %d entries but %d row_partition_tensors were given",
                          s->n, ctx->n_in - 3);
  bool first_size = s->t[0] == RP_FIRST_DIM_SIZE;
  int rr = s->n - (first_size ? 1 : 0), base = first_size ? 4 : 3;
  if (rr < 1) return dfx__kctx_fail(ctx, DFX_EINVAL, "ragged_rank must be at least 1");
  if (values->ndims < 1) return dfx__kctx_fail(ctx, DFX_EINVAL, "values must have rank >= 1");
  const dfx_tensor *fp = ctx->in[3];
  if (fp->count == 0)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Invalid first partition input. Tensor requires at least one element.");
  int64_t first;
  if (s->t[0] == RP_FIRST_DIM_SIZE) first = sidx(fp, 0);
  else if (s->t[0] == RP_VALUE_ROWIDS) return dfx__kctx_fail(ctx, DFX_EINVAL, "Cannot handle VALUE_ROWIDS in first dimension.");
  else first = fp->dims[0] - 1;
  if (first < 0) return dfx__kctx_fail(ctx, DFX_EINVAL, "Invalid first dimension size: %lld", (long long)first);
  for (int d = 0; d < rr; d++) {
    rp_type t = s->t[d + (first_size ? 1 : 0)];
    if (t == RP_FIRST_DIM_SIZE) return dfx__kctx_fail(ctx, DFX_EINVAL, "Unsupported partition type:%s", rp_name(t));
    if (ctx->in[base + d]->ndims != 1)
      return dfx__kctx_fail(ctx, DFX_EINVAL, "row partition %d must be a vector", d);
  }
  /* Default value: broadcastable to the value element shape values[1:]. */
  int vr = values->ndims - 1;
  if (def->ndims > vr)
    return dfx__kctx_fail(ctx, DFX_EINVAL,
                          "default_value.shape=%s and rt_input.flat_values.shape=%s are incompatible: "
                          "default_value.rank = %d must be less than rt_input.flat_values.rank = %d",
                          DFX_SHAPE_STR(def, b1), DFX_SHAPE_STR(values, b2), def->ndims, values->ndims);
  for (int i = 0; i < def->ndims; i++) {
    int64_t dd = def->dims[def->ndims - 1 - i], vd = values->dims[values->ndims - 1 - i];
    if (dd != 1 && dd != vd)
      return dfx__kctx_fail(ctx, DFX_EINVAL,
                            "default_value.shape=%s and rt_input.flat_values.shape=%s are incompatible: "
                            "default_value.shape[%d] = %lld but rt_input.flat_values.shape[%d] = %lld",
                            DFX_SHAPE_STR(def, b1), DFX_SHAPE_STR(values, b2), def->ndims - 1 - i, (long long)dd,
                            values->ndims - 1 - i, (long long)vd);
  }
  /* Output shape: the shape input (scalar -1 = unknown rank) combined with
   * the ragged tensor's: rank rr + values.rank. */
  int orank = rr + values->ndims;
  if (orank > DFX_MAX_DIMS) return dfx__kctx_fail(ctx, DFX_EINVAL, "output rank %d exceeds %d", orank, DFX_MAX_DIMS);
  int64_t od[DFX_MAX_DIMS];
  for (int i = 0; i < orank; i++) od[i] = -1;
  if (shape->ndims == 1) {
    size_t k = 0;
    b1[k++] = '[';
    for (int64_t i = 0; i < shape->count && k + 24 < sizeof b1; i++)
      k += (size_t)snprintf(b1 + k, sizeof b1 - k, "%s%lld", i ? "," : "", (long long)sidx(shape, i));
    snprintf(b1 + k, sizeof b1 - k, "]");
    if (shape->count != orank)
      return dfx__kctx_fail(ctx, DFX_EINVAL,
                            "rt_input.shape and shape=%s are incompatible: rt_input.rank = %d but shape.rank = %lld",
                            b1, orank, (long long)shape->count);
    for (int i = 0; i < orank; i++) {
      od[i] = sidx(shape, i);
      if (od[i] < -1) return dfx__kctx_fail(ctx, DFX_EINVAL, "Invalid dimension size: %lld", (long long)od[i]);
    }
  } else if (shape->ndims != 0 || (shape->count == 1 && sidx(shape, 0) != -1)) {
    return dfx__kctx_fail(ctx, DFX_EINVAL, "shape must be a vector, or the scalar -1 for an unknown shape; got %s",
                          DFX_SHAPE_STR(shape, b1));
  }
  for (int i = 1; i < values->ndims; i++) {
    int o = rr + i;
    if (od[o] == -1) od[o] = values->dims[i];
    else if (od[o] != values->dims[i])
      return dfx__kctx_fail(ctx, DFX_EINVAL,
                            "rt_input.shape and shape=%s are incompatible: rt_input.flat_values.shape[%d] = %lld but "
                            "shape[%d] = %lld",
                            shape->ndims ? b1 : "None", i, (long long)values->dims[i], o, (long long)od[o]);
  }
  if (od[0] == -1) od[0] = first;
  for (int d = 1; d <= rr; d++) {
    if (od[d] != -1) continue;
    const dfx_tensor *p = ctx->in[base + d - 1];
    int64_t mw = 0;
    if (s->t[d - 1 + (first_size ? 1 : 0)] == RP_ROW_SPLITS) {
      for (int64_t i = 0; i + 1 < p->count; i++)
        if (sidx(p, i + 1) - sidx(p, i) > mw) mw = sidx(p, i + 1) - sidx(p, i);
    } else {
      for (int64_t i = 0, run = 0; i < p->count; i++) {
        run = i > 0 && sidx(p, i) == sidx(p, i - 1) ? run + 1 : 1;
        if (run > mw) mw = run;
      }
    }
    od[d] = mw;
  }
  int64_t total = dfx__shape_count(orank, od);
  if (total < 0) return dfx__kctx_fail(ctx, DFX_EINVAL, "output shape %s overflows", dfx__shape_str(orank, od, b1, sizeof b1));
  if (dfx__s_check_count(ctx, "RaggedTensorToTensor", total, dt)) return ctx->st->code;
  dfx_tensor *out = dfx__kctx_alloc(ctx, 0, dt, orank, od);
  if (!out) return ctx->st->code;
  if (total == 0) return DFX_OK;
  int64_t elem = dfx__shape_count(orank - rr - 1, od + rr + 1), mult[DFX_MAX_DIMS + 1];
  mult[rr] = 1;
  for (int i = rr - 1; i >= 0; i--) mult[i] = mult[i + 1] * od[i + 1];
  /* Default fill: the first element slot gets default_value broadcast over
   * the element shape, every other slot a copy of it. */
  size_t es = dfx__dtype_storage(dt);
  dfx_code code = DFX_OK;
  for (int64_t e = 0; e < elem && !code; e++) {
    int64_t src = 0, rem = e, dstr = 1;
    for (int i = 0; i < def->ndims; i++) {
      int64_t vd = od[orank - 1 - i], dd = def->dims[def->ndims - 1 - i], c = rem % vd;
      rem /= vd;
      src += (dd == 1 ? 0 : c) * dstr;
      dstr *= dd;
    }
    code = dfx__g_copy(ctx, dt, (char *)out->data + (size_t)e * es, (const char *)def->data + (size_t)src * es, 1);
  }
  for (int64_t q = 1; q < total / elem && !code; q++) {
    code = dfx__g_copy(ctx, dt, (char *)out->data + (size_t)(q * elem) * es, out->data, elem);
    if ((q & 0xffff) == 0xffff && !code) code = dfx__kctx_poll(ctx);
  }
  if (code) return code;
  /* Output positions level by level (-1: dropped), as TF computes them. */
  svec cur = {0}, next = {0};
  int64_t left = DFX_S_POLL_EVERY;
  for (int64_t i = 0; i < first && !code; i++) code = dfx__svec_push(ctx, &cur, i < od[0] ? i * mult[0] : -1);
  for (int d = 1; d <= rr && !code; d++) {
    const dfx_tensor *p = ctx->in[base + d - 1];
    int64_t size = od[d], m = mult[d];
    next.n = 0;
    if (s->t[d - 1 + (first_size ? 1 : 0)] == RP_ROW_SPLITS) {
      if (p->count - 1 > cur.n) {
        code = dfx__kctx_fail(ctx, DFX_EINVAL, "Row partition size is greater than output size: %lld > %lld",
                              (long long)(p->count - 1), (long long)cur.n);
        break;
      }
      for (int64_t i = 0; i + 1 < p->count && !code; i++) {
        int64_t len = sidx(p, i + 1) - sidx(p, i), real = len < size ? len : size, at = cur.v[i];
        if (at == -1) real = 0;
        for (int64_t j = 0; j < real && !code; j++, at += m) code = dfx__svec_push(ctx, &next, at);
        for (int64_t j = 0; j < len - real && !code; j++) code = dfx__svec_push(ctx, &next, -1);
        if (!code) code = stick(ctx, &left, len > 0 ? len : 1);
      }
      if (!code && p->count > 0 && next.n != sidx(p, p->count - 1))
        code = dfx__kctx_fail(ctx, DFX_EINVAL, "Invalid row split size.");
    } else {
      int64_t col = 0, at = -1, rid = -1;
      for (int64_t i = 0; i < p->count && !code; i++) {
        int64_t r = sidx(p, i);
        if (i > 0 && r == rid) {
          if (at >= 0) at = ++col < size ? at + m : -1;
        } else {
          if (r < 0 || r >= cur.n || (i > 0 && r < rid)) {
            code = dfx__kctx_fail(ctx, DFX_EINVAL, "Got value_rowid=%lld which is not in [0, %lld) or not sorted",
                                  (long long)r, (long long)cur.n);
            break;
          }
          col = 0;
          rid = r;
          at = cur.v[r];
        }
        code = dfx__svec_push(ctx, &next, at);
      }
    }
    svec t = cur;
    cur = next;
    next = t;
  }
  if (!code && cur.n != values->dims[0])
    code = dfx__kctx_fail(ctx, DFX_EINVAL, "The ragged partitions describe %lld values but values has %lld",
                          (long long)cur.n, (long long)values->dims[0]);
  for (int64_t j = 0; j < cur.n && !code; j++) {
    if (cur.v[j] < 0) continue;
    code = copy_rows(ctx, dt, out->data, cur.v[j], values->data, j, 1, elem);
    if (!code) code = stick(ctx, &left, elem);
  }
  svec_free(&cur);
  svec_free(&next);
  return code;
}

static const dfx_kernel_def kernels[] = {
    {"RaggedTensorToSparse", "T: " DFX_G_COPY, to_sparse, DFX_KERNEL_CHEAP, NULL, NULL},
    {"RaggedGather", "Tvalues: " DFX_G_COPY, ragged_gather, DFX_KERNEL_CHEAP, NULL, NULL},
    {"RaggedTensorToTensor", "T: " DFX_G_COPY, to_tensor, DFX_KERNEL_CHEAP, rt_init, rt_fini},
    {NULL}};

void dfx__kernels_sparse_ragged(dfx_registry *r);
void dfx__kernels_sparse_ragged(dfx_registry *r) { dfx__kernels_add(r, kernels); }
