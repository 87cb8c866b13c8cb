/* ckpt_kernels.c - the checkpoint ops on the tensor bundle (bundle.h):
 * SaveV2 writes its tensors under their names at a prefix, RestoreV2 reads
 * named tensors back (checking their dtypes), MergeV2Checkpoints merges
 * bundles into one and removes the sources; ShardedFilename and
 * ShardedFilespec name the shards of TF1's sharded Saver. Only whole tensors: a non-empty
 * shape_and_slices entry (a partitioned variable) is DFX_EUNIMPL. These
 * kernels live here, not in kernels/, because they need the format code
 * and protobuf; api/lib.c adds this table to the library's registry. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "alloc.h"
#include "bundle.h"
#include "ckpt.h"
#include "var.h"

/* Element i of a string tensor as a NUL-terminated copy in buf; false
 * (after failing ctx) when it does not fit or holds a NUL. */
static bool str_at(dfx_kctx *ctx, const dfx_tensor *t, int64_t i, const char *what, char *buf, size_t n) {
  const dfx_str *s = &((const dfx_str *)t->data)[i];
  if (s->len >= n || (s->len && memchr(s->ptr, 0, s->len))) {
    dfx__kctx_fail(ctx, DFX_EINVAL, "%s[%lld] is too long or holds a NUL byte", what, (long long)i);
    return false;
  }
  if (s->len) memcpy(buf, s->ptr, s->len);
  buf[s->len] = 0;
  return true;
}

/* Checks prefix (scalar), names and slices ([n] each); returns n or -1. */
static int64_t check_names(dfx_kctx *ctx, int64_t n_expected) {
  char b1[64], b2[64];
  const dfx_tensor *p = ctx->in[0], *nm = ctx->in[1], *sl = ctx->in[2];
  if (p->count != 1)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Input prefix should have a single element, got %s", DFX_SHAPE_STR(p, b1)),
           -1;
  if (nm->ndims != 1 || sl->ndims != 1 || nm->count != sl->count || (n_expected >= 0 && nm->count != n_expected))
    return dfx__kctx_fail(ctx, DFX_EINVAL,
                          "tensor_names %s and shape_and_slices %s must be vectors of one entry per tensor (%lld)",
                          DFX_SHAPE_STR(nm, b1), DFX_SHAPE_STR(sl, b2), (long long)n_expected),
           -1;
  for (int64_t i = 0; i < sl->count; i++)
    if (((const dfx_str *)sl->data)[i].len)
      return dfx__kctx_fail(ctx, DFX_EUNIMPL,
                            "shape_and_slices[%lld] is not empty: partitioned (sliced) variables are not supported",
                            (long long)i),
             -1;
  return nm->count;
}

static dfx_code save_v2(dfx_kctx *ctx) {
  int64_t n = check_names(ctx, ctx->n_in - 3);
  if (n < 0) return ctx->st->code;
  char prefix[4096], name[1024];
  if (!str_at(ctx, ctx->in[0], 0, "prefix", prefix, sizeof prefix)) return ctx->st->code;
  for (int64_t i = 0; i < n; i++) {
    const char *uninit = dfx__var_uninit_name(ctx->in[3 + i]);
    if (uninit) return dfx__kctx_fail(ctx, DFX_EPRECOND, "Attempting to use uninitialized value %s", uninit);
  }
  dfx_bundle_writer *w = NULL;
  if (dfx__bundle_writer_new(prefix, &w, ctx->st) != DFX_OK) return ctx->st->code;
  for (int64_t i = 0; i < n; i++) {
    if (!str_at(ctx, ctx->in[1], i, "tensor_names", name, sizeof name) ||
        dfx__bundle_writer_add(w, name, ctx->in[3 + i], ctx->st) != DFX_OK) {
      dfx__bundle_writer_abort(w);
      return ctx->st->code;
    }
  }
  return dfx__bundle_writer_finish(w, ctx->st);
}

static dfx_code restore_v2(dfx_kctx *ctx) {
  int64_t n = check_names(ctx, ctx->n_out);
  if (n < 0) return ctx->st->code;
  char prefix[4096], name[1024];
  if (!str_at(ctx, ctx->in[0], 0, "prefix", prefix, sizeof prefix)) return ctx->st->code;
  dfx_bundle *b = NULL;
  if (dfx__bundle_open(prefix, &b, ctx->st) != DFX_OK) return ctx->st->code;
  dfx_code c = DFX_OK;
  for (int64_t i = 0; i < n && c == DFX_OK; i++) {
    if (!str_at(ctx, ctx->in[1], i, "tensor_names", name, sizeof name)) {
      c = ctx->st->code;
      break;
    }
    const dfx_bundle_entry *e = dfx__bundle_find(b, name);
    dfx_dtype want = ctx->node->out_types[i];
    if (!e)
      c = dfx__kctx_fail(ctx, DFX_ENOTFOUND, "Key %s not found in checkpoint %s", name, prefix);
    else if (e->dtype != want)
      c = dfx__kctx_fail(ctx, DFX_EINVAL, "tensor_name = %s; expected dtype %s does not equal original dtype %s",
                         name, dfx_dtype_name(want), dfx_dtype_name(e->dtype));
    else
      c = dfx__bundle_read(b, e, &ctx->out[i], ctx->st);
  }
  dfx__bundle_close(b);
  return c;
}

/* Removes a bundle's files (and, when asked, its directory if empty). */
static void remove_bundle(const dfx_bundle *b, bool dirs) {
  char path[4096];
  snprintf(path, sizeof path, "%s.index", b->prefix);
  remove(path);
  for (int s = 0; s < b->num_shards; s++) {
    dfx__bundle_shard_path(b->prefix, s, b->num_shards, path, sizeof path);
    remove(path);
  }
  if (dirs) {
    snprintf(path, sizeof path, "%s", b->prefix);
    char *slash = strrchr(path, '/');
    if (slash && slash != path) {
      *slash = 0;
      rmdir(path); /* fails harmlessly when not empty */
    }
  }
}

static dfx_code merge_v2(dfx_kctx *ctx) {
  const dfx_tensor *srcs = ctx->in[0];
  char dest[4096], src[4096];
  char b1[64];
  if (srcs->ndims > 1)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "checkpoint_prefixes must be a scalar or vector, got %s",
                          DFX_SHAPE_STR(srcs, b1));
  if (ctx->in[1]->count != 1) return dfx__kctx_fail(ctx, DFX_EINVAL, "destination_prefix must be a scalar");
  if (!str_at(ctx, ctx->in[1], 0, "destination_prefix", dest, sizeof dest)) return ctx->st->code;
  bool allow_missing = dfx__attr_bool(ctx->node, "allow_missing_files", false);
  int64_t n = srcs->count;
  dfx_bundle **bs = dfx__calloc((size_t)(n ? n : 1), sizeof *bs);
  if (!bs) return dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory");
  dfx_bundle_writer *w = NULL;
  dfx_code c = DFX_OK;
  for (int64_t i = 0; i < n && c == DFX_OK; i++) {
    if (!str_at(ctx, srcs, i, "checkpoint_prefixes", src, sizeof src)) c = ctx->st->code;
    else if ((c = dfx__bundle_open(src, &bs[i], ctx->st)) == DFX_ENOTFOUND && allow_missing) {
      c = DFX_OK;
      dfx__status_clear(ctx->st);
    }
  }
  if (c == DFX_OK) c = dfx__bundle_writer_new(dest, &w, ctx->st);
  for (int64_t i = 0; i < n && c == DFX_OK; i++)
    for (int k = 0; bs[i] && k < bs[i]->n && c == DFX_OK; k++) {
      dfx_tensor *t = NULL;
      if ((c = dfx__bundle_read(bs[i], &bs[i]->e[k], &t, ctx->st)) == DFX_OK)
        c = dfx__bundle_writer_add(w, bs[i]->e[k].name, t, ctx->st);
      dfx__tensor_unref(t);
    }
  if (c == DFX_OK) {
    c = dfx__bundle_writer_finish(w, ctx->st);
    w = NULL;
  }
  dfx__bundle_writer_abort(w);
  bool dirs = dfx__attr_bool(ctx->node, "delete_old_dirs", true);
  for (int64_t i = 0; i < n; i++) {
    /* The sources go only once the merged bundle is safely in place, and
     * never when one of them is the destination itself. */
    if (c == DFX_OK && bs[i] && strcmp(bs[i]->prefix, dest) != 0) remove_bundle(bs[i], dirs);
    dfx__bundle_close(bs[i]);
  }
  dfx__free(bs);
  return c;
}

/* ---- checkpoint file names (TF1's sharded Saver) ---- */

/* A string scalar output holding text. */
static dfx_code str_out(dfx_kctx *ctx, const char *text) {
  dfx_tensor *o = dfx__kctx_alloc(ctx, 0, DFX_STRING, 0, NULL);
  if (!o) return ctx->st->code;
  dfx_str *s = o->data;
  s->len = strlen(text);
  if (s->len && !(s->ptr = dfx__strdup(text))) {
    s->len = 0;
    return dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory");
  }
  return DFX_OK;
}

/* "BASENAME-00001-of-00004" (ShardedFilename) or "BASENAME-?????-of-00004"
 * (ShardedFilespec), TF's names for the shards of a sharded save. */
static dfx_code sharded_name(dfx_kctx *ctx, bool spec) {
  char base[4096], name[4200];
  int64_t shard = 0, n = 0;
  if (ctx->in[0]->count != 1) return dfx__kctx_fail(ctx, DFX_EINVAL, "basename must be a scalar");
  if (!str_at(ctx, ctx->in[0], 0, "basename", base, sizeof base)) return ctx->st->code;
  if ((!spec && dfx__kctx_scalar_i64(ctx, 1, "shard", &shard)) ||
      dfx__kctx_scalar_i64(ctx, spec ? 1 : 2, "num_shards", &n))
    return ctx->st->code;
  if (spec) snprintf(name, sizeof name, "%s-?\?\?\?\?-of-%05lld", base, (long long)n);
  else snprintf(name, sizeof name, "%s-%05lld-of-%05lld", base, (long long)shard, (long long)n);
  return str_out(ctx, name);
}
static dfx_code sharded_filename(dfx_kctx *ctx) { return sharded_name(ctx, false); }
static dfx_code sharded_filespec(dfx_kctx *ctx) { return sharded_name(ctx, true); }

#define ST DFX_KERNEL_STATEFUL
static const dfx_kernel_def kernels[] = {
    {"SaveV2", NULL, save_v2, ST, NULL, NULL},
    {"RestoreV2", NULL, restore_v2, ST, NULL, NULL},
    {"MergeV2Checkpoints", NULL, merge_v2, ST, NULL, NULL},
    {"ShardedFilename", NULL, sharded_filename, DFX_KERNEL_CHEAP, NULL, NULL},
    {"ShardedFilespec", NULL, sharded_filespec, DFX_KERNEL_CHEAP, NULL, NULL},
    {NULL}};

void dfx__ckpt_kernels(dfx_registry *r) { dfx__kernels_add(r, kernels); }
