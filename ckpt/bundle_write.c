/* bundle_write.c - writing a one-shard tensor bundle (bundle.h). Tensors
 * are appended to a temporary data file as they come; finish sorts the
 * entries by name, writes the index to a temporary file and renames both
 * into place, data first, so PREFIX.index never names missing data. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "alloc.h"
#include "bundle.h"
#include "crc32c.h"
#include "pballoc.h"
#include "sstable.h"
#include "tensor_bundle.pb-c.h"

typedef struct wentry {
  char *name;
  unsigned char *val;  /* packed BundleEntryProto */
  size_t vlen;
} wentry;

struct dfx_bundle_writer {
  char *prefix;
  char data_tmp[4096], index_tmp[4096];
  FILE *data;
  int64_t off;
  wentry *e;
  int n, cap;
};

static void writer_free(dfx_bundle_writer *w) {
  if (w->data) fclose(w->data);
  for (int i = 0; i < w->n; i++) {
    dfx__free(w->e[i].name);
    dfx__free(w->e[i].val);
  }
  dfx__free(w->e);
  dfx__free(w->prefix);
  dfx__free(w);
}

void dfx__bundle_writer_abort(dfx_bundle_writer *w) {
  if (!w) return;
  if (w->data) {
    fclose(w->data);
    w->data = NULL;
  }
  remove(w->data_tmp);
  remove(w->index_tmp);
  writer_free(w);
}

dfx_code dfx__bundle_writer_new(const char *prefix, dfx_bundle_writer **out, dfx_status *st) {
  *out = NULL;
  dfx_bundle_writer *w = dfx__calloc(1, sizeof *w);
  if (!w || !(w->prefix = dfx__strdup(prefix))) {
    if (w) dfx__free(w);
    return dfx__status_set(st, DFX_ENOMEM, "out of memory starting checkpoint '%s'", prefix);
  }
  /* Like TF, make the prefix's directory (one level) if it is missing. */
  char dir[4096];
  snprintf(dir, sizeof dir, "%s", prefix);
  char *slash = strrchr(dir, '/');
  if (slash && slash != dir) {
    *slash = 0;
    mkdir(dir, 0777); /* an existing directory is fine; other failures show at fopen */
  }
  snprintf(w->data_tmp, sizeof w->data_tmp, "%s.data-00000-of-00001.tempstate", prefix);
  snprintf(w->index_tmp, sizeof w->index_tmp, "%s.index.tempstate", prefix);
  if (!(w->data = fopen(w->data_tmp, "wb"))) {
    dfx_code c = dfx__status_set(st, DFX_EIO, "cannot create checkpoint data file '%s' (does its directory exist?)",
                                 w->data_tmp);
    writer_free(w);
    return c;
  }
  *out = w;
  return DFX_OK;
}

/* The bytes to store for t and their CRC: raw elements, or TF's string
 * layout. Writes them to the data file. */
static dfx_code write_data(dfx_bundle_writer *w, const dfx_tensor *t, int64_t *size, uint32_t *crc, dfx_status *st) {
  bool ok = true;
  if (t->dtype != DFX_STRING) {
    *size = (int64_t)t->nbytes;
    *crc = dfx__crc32c(t->data, t->nbytes);
    ok = t->nbytes == 0 || fwrite(t->data, 1, t->nbytes, w->data) == t->nbytes;
  } else {
    const dfx_str *s = t->data;
    dfx_bytes lens = {0};
    uint32_t c = 0;
    for (int64_t i = 0; i < t->count; i++) {
      dfx__bytes_put_varint(&lens, s[i].len);
      c = dfx__bundle_crc_len(c, s[i].len);
    }
    uint32_t masked = dfx__crc32c_mask(c);
    unsigned char m4[4] = {(unsigned char)masked, (unsigned char)(masked >> 8), (unsigned char)(masked >> 16),
                           (unsigned char)(masked >> 24)};
    c = dfx__crc32c_extend(c, m4, 4);
    if (lens.oom) {
      dfx__bytes_free(&lens);
      return dfx__status_set(st, DFX_ENOMEM, "out of memory saving a string tensor");
    }
    ok = (lens.n == 0 || fwrite(lens.p, 1, lens.n, w->data) == lens.n) && fwrite(m4, 1, 4, w->data) == 4;
    *size = (int64_t)lens.n + 4;
    dfx__bytes_free(&lens);
    for (int64_t i = 0; ok && i < t->count; i++) {
      if (!s[i].len) continue;
      c = dfx__crc32c_extend(c, s[i].ptr, s[i].len);
      ok = fwrite(s[i].ptr, 1, s[i].len, w->data) == s[i].len;
      *size += (int64_t)s[i].len;
    }
    *crc = c;
  }
  if (!ok) return dfx__status_set(st, DFX_EIO, "error writing checkpoint data file '%s'", w->data_tmp);
  return DFX_OK;
}

dfx_code dfx__bundle_writer_add(dfx_bundle_writer *w, const char *name, const dfx_tensor *t, dfx_status *st) {
  if (!*name) return dfx__status_set(st, DFX_EINVAL, "cannot save a tensor with an empty name");
  for (int i = 0; i < w->n; i++)
    if (strcmp(w->e[i].name, name) == 0)
      return dfx__status_set(st, DFX_EINVAL, "tensor '%s' is saved twice in checkpoint '%s'", name, w->prefix);
  if (t->dtype == DFX_RESOURCE || t->dtype == DFX_VARIANT)
    return dfx__status_set(st, DFX_EUNIMPL, "tensor '%s' is a %s tensor, which checkpoints cannot hold", name,
                           dfx_dtype_name((dfx_dtype)t->dtype));
  int64_t size = 0;
  uint32_t crc = 0;
  dfx_code c = write_data(w, t, &size, &crc, st);
  if (c != DFX_OK) return c;
  Tensorflow__TensorShapeProto shape = TENSORFLOW__TENSOR_SHAPE_PROTO__INIT;
  Tensorflow__TensorShapeProto__Dim dims[DFX_MAX_DIMS], *dp[DFX_MAX_DIMS];
  for (int i = 0; i < t->ndims; i++) {
    tensorflow__tensor_shape_proto__dim__init(&dims[i]);
    dims[i].size = t->dims[i];
    dp[i] = &dims[i];
  }
  shape.n_dim = t->ndims;
  shape.dim = dp;
  Tensorflow__BundleEntryProto e = TENSORFLOW__BUNDLE_ENTRY_PROTO__INIT;
  e.dtype = (Tensorflow__DataType)t->dtype;
  e.shape = &shape;
  e.offset = w->off;
  e.size = size;
  e.crc32c = dfx__crc32c_mask(crc);
  if (w->n == w->cap) {
    int nc = w->cap ? w->cap * 2 : 16;
    wentry *ne = dfx__realloc(w->e, sizeof *ne * (size_t)nc);
    if (!ne) return dfx__status_set(st, DFX_ENOMEM, "out of memory saving tensor '%s'", name);
    w->e = ne;
    w->cap = nc;
  }
  wentry we = {dfx__strdup(name), dfx__malloc(tensorflow__bundle_entry_proto__get_packed_size(&e) + 1), 0};
  if (!we.name || !we.val) {
    dfx__free(we.name);
    dfx__free(we.val);
    return dfx__status_set(st, DFX_ENOMEM, "out of memory saving tensor '%s'", name);
  }
  we.vlen = tensorflow__bundle_entry_proto__pack(&e, we.val);
  w->e[w->n++] = we;
  w->off += size;
  return DFX_OK;
}

static int by_name(const void *a, const void *b) { return strcmp(((const wentry *)a)->name, ((const wentry *)b)->name); }

dfx_code dfx__bundle_writer_finish(dfx_bundle_writer *w, dfx_status *st) {
  dfx_code c = DFX_OK;
  unsigned char *table = NULL;
  size_t tlen = 0;
  int fc = fclose(w->data);
  w->data = NULL;
  if (fc != 0) {
    c = dfx__status_set(st, DFX_EIO, "error closing checkpoint data file '%s'", w->data_tmp);
    goto fail;
  }
  if (w->n > 1) qsort(w->e, (size_t)w->n, sizeof *w->e, by_name);
  /* The header: one shard, little-endian, version {producer: 1} as TF writes. */
  Tensorflow__VersionDef ver = TENSORFLOW__VERSION_DEF__INIT;
  ver.producer = 1;
  Tensorflow__BundleHeaderProto h = TENSORFLOW__BUNDLE_HEADER_PROTO__INIT;
  h.num_shards = 1;
  h.version = &ver;
  unsigned char hbuf[64];
  size_t hlen = tensorflow__bundle_header_proto__pack(&h, hbuf);
  dfx_sst_writer sw;
  dfx__sst_writer_init(&sw);
  dfx__sst_writer_add(&sw, "", 0, hbuf, hlen);
  for (int i = 0; i < w->n; i++) dfx__sst_writer_add(&sw, w->e[i].name, strlen(w->e[i].name), w->e[i].val, w->e[i].vlen);
  if ((c = dfx__sst_writer_finish(&sw, &table, &tlen, st)) != DFX_OK) goto fail;
  FILE *f = fopen(w->index_tmp, "wb");
  bool ok = f && fwrite(table, 1, tlen, f) == tlen;
  if (f && fclose(f) != 0) ok = false;
  if (!ok) {
    c = dfx__status_set(st, DFX_EIO, "cannot write checkpoint index '%s'", w->index_tmp);
    goto fail;
  }
  char data[4096], index[4096];
  dfx__bundle_shard_path(w->prefix, 0, 1, data, sizeof data);
  snprintf(index, sizeof index, "%s.index", w->prefix);
  if (rename(w->data_tmp, data) != 0 || rename(w->index_tmp, index) != 0) {
    c = dfx__status_set(st, DFX_EIO, "cannot move checkpoint files into place at '%s'", w->prefix);
    goto fail;
  }
  dfx__free(table);
  writer_free(w);
  return DFX_OK;
fail:
  dfx__free(table);
  dfx__bundle_writer_abort(w);
  return c;
}
