/* bundle_read.c - opening a tensor bundle and reading its tensors
 * (bundle.h). The index is read whole and decoded once; each tensor read
 * opens its shard, checks the stored size against the file, and verifies
 * the CRC32C before anything is returned. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "alloc.h"
#include "bundle.h"
#include "crc32c.h"
#include "graph_import.h"
#include "pballoc.h"
#include "sstable.h"
#include "tensor_bundle.pb-c.h"

void dfx__bundle_shard_path(const char *prefix, int i, int n, char *buf, size_t len) {
  snprintf(buf, len, "%s.data-%05d-of-%05d", prefix, i, n);
}

void dfx__bundle_close(dfx_bundle *b) {
  if (!b) return;
  for (int i = 0; i < b->n; i++) dfx__free(b->e[i].name);
  dfx__free(b->e);
  dfx__free(b->prefix);
  dfx__free(b);
}

const dfx_bundle_entry *dfx__bundle_find(const dfx_bundle *b, const char *name) {
  int lo = 0, hi = b->n - 1;
  while (lo <= hi) {
    int mid = (lo + hi) / 2, c = strcmp(b->e[mid].name, name);
    if (c == 0) return &b->e[mid];
    if (c < 0) lo = mid + 1;
    else hi = mid - 1;
  }
  return NULL;
}

static dfx_code decode_header(dfx_bundle *b, const dfx_sst_kv *kv, const char *file, dfx_status *st) {
  Tensorflow__BundleHeaderProto *h = tensorflow__bundle_header_proto__unpack(&dfx__pb_allocator, kv->vlen, kv->val);
  if (!h) return dfx__status_set(st, DFX_EINVAL, "%s: the bundle header does not parse", file);
  dfx_code c = DFX_OK;
  if (h->endianness != TENSORFLOW__BUNDLE_HEADER_PROTO__ENDIANNESS__LITTLE)
    c = dfx__status_set(st, DFX_EUNIMPL, "%s: big-endian checkpoints are not supported", file);
  else if (h->num_shards < 1 || h->num_shards > 99999)
    c = dfx__status_set(st, DFX_EINVAL, "%s: bad shard count %d in the bundle header", file, h->num_shards);
  b->num_shards = h->num_shards;
  tensorflow__bundle_header_proto__free_unpacked(h, &dfx__pb_allocator);
  return c;
}

static dfx_code decode_entry(dfx_bundle *b, dfx_bundle_entry *e, const dfx_sst_kv *kv, const char *file,
                             dfx_status *st) {
  Tensorflow__BundleEntryProto *p = tensorflow__bundle_entry_proto__unpack(&dfx__pb_allocator, kv->vlen, kv->val);
  if (!p) return dfx__status_set(st, DFX_EINVAL, "%s: the entry of tensor '%s' does not parse", file, kv->key);
  dfx_code c = DFX_OK;
  e->dtype = (dfx_dtype)p->dtype;
  e->shard = p->shard_id;
  e->offset = p->offset;
  e->size = p->size;
  e->crc = dfx__crc32c_unmask(p->crc32c);
  e->sliced = p->n_slices > 0;
  int dt = (int)p->dtype;
  if (!dfx__dtype_valid(dt) || dt == DFX_RESOURCE || dt == DFX_VARIANT)
    c = dfx__status_set(st, dt == DFX_RESOURCE || dt == DFX_VARIANT ? DFX_EUNIMPL : DFX_EINVAL,
                        "%s: tensor '%s' has dtype %d, which is not supported", file, kv->key, (int)p->dtype);
  else if (p->shard_id < 0 || p->shard_id >= b->num_shards || p->offset < 0 || p->size < 0)
    c = dfx__status_set(st, DFX_EINVAL, "%s: tensor '%s' points at shard %d [%lld, +%lld) of %d shards", file,
                        kv->key, p->shard_id, (long long)p->offset, (long long)p->size, b->num_shards);
  else if (p->shape && p->shape->n_dim > DFX_MAX_DIMS)
    c = dfx__status_set(st, DFX_EUNIMPL, "%s: tensor '%s' has rank %zu, more than %d", file, kv->key,
                        p->shape->n_dim, DFX_MAX_DIMS);
  e->ndims = p->shape ? (int)p->shape->n_dim : 0;
  for (int i = 0; c == DFX_OK && i < e->ndims; i++) {
    e->dims[i] = p->shape->dim[i]->size;
    if (e->dims[i] < 0)
      c = dfx__status_set(st, DFX_EINVAL, "%s: tensor '%s' has a negative dimension", file, kv->key);
  }
  if (c == DFX_OK && dfx__shape_count(e->ndims, e->dims) < 0)
    c = dfx__status_set(st, DFX_EINVAL, "%s: tensor '%s' has too many elements", file, kv->key);
  tensorflow__bundle_entry_proto__free_unpacked(p, &dfx__pb_allocator);
  return c;
}

dfx_code dfx__bundle_open(const char *prefix, dfx_bundle **out, dfx_status *st) {
  *out = NULL;
  char path[4096];
  snprintf(path, sizeof path, "%s.index", prefix);
  struct stat sb;
  if (stat(path, &sb) != 0)
    return dfx__status_set(st, DFX_ENOTFOUND, "no checkpoint at '%s': cannot open '%s' (%s)", prefix, path,
                           strerror(errno));
  char *data = NULL;
  size_t len = 0;
  dfx_code c = dfx__read_file(path, &data, &len, st);
  if (c != DFX_OK) return c;
  dfx_sst_kv *kv = NULL;
  int n = 0;
  c = dfx__sst_read_all((const unsigned char *)data, len, path, &kv, &n, st);
  dfx__free(data);
  if (c != DFX_OK) return c;
  dfx_bundle *b = dfx__calloc(1, sizeof *b);
  if (!b || !(b->prefix = dfx__strdup(prefix)) || !(b->e = dfx__calloc((size_t)(n ? n : 1), sizeof *b->e))) {
    c = dfx__status_set(st, DFX_ENOMEM, "out of memory opening checkpoint '%s'", prefix);
    goto fail;
  }
  if (n == 0 || kv[0].klen != 0) {
    c = dfx__status_set(st, DFX_EINVAL, "%s: no bundle header (the table's first key must be \"\")", path);
    goto fail;
  }
  if ((c = decode_header(b, &kv[0], path, st)) != DFX_OK) goto fail;
  for (int i = 1; i < n; i++) {
    dfx_bundle_entry *e = &b->e[b->n];
    if (b->n > 0 && strcmp(b->e[b->n - 1].name, kv[i].key) >= 0) {
      c = dfx__status_set(st, DFX_EINVAL, "%s: keys out of order at '%s' (corrupt index)", path, kv[i].key);
      goto fail;
    }
    if (strlen(kv[i].key) != kv[i].klen) {
      c = dfx__status_set(st, DFX_EUNIMPL, "%s: a tensor name holds a NUL byte", path);
      goto fail;
    }
    if ((c = decode_entry(b, e, &kv[i], path, st)) != DFX_OK) goto fail;
    /* The key is moved, not copied. */
    e->name = kv[i].key;
    kv[i].key = NULL;
    b->n++;
  }
  for (int s = 0; s < b->num_shards; s++) {
    dfx__bundle_shard_path(prefix, s, b->num_shards, path, sizeof path);
    if (stat(path, &sb) != 0) {
      c = dfx__status_set(st, DFX_ENOTFOUND, "checkpoint '%s': data shard %d of %d is missing: '%s' (%s)", prefix, s,
                          b->num_shards, path, strerror(errno));
      goto fail;
    }
  }
  dfx__sst_free(kv, n);
  *out = b;
  return DFX_OK;
fail:
  dfx__sst_free(kv, n);
  dfx__bundle_close(b);
  return c;
}

uint32_t dfx__bundle_crc_len(uint32_t crc, uint64_t len) {
  unsigned char b[8];
  int n = len <= UINT32_MAX ? 4 : 8;
  for (int i = 0; i < n; i++) b[i] = (unsigned char)(len >> (8 * i));
  return dfx__crc32c_extend(crc, b, (size_t)n);
}

/* Decodes a string tensor's stored layout into t's elements, checking both
 * of its checksums (bundle.h). */
static dfx_code decode_strings(const unsigned char *buf, size_t size, uint32_t want_crc, dfx_tensor *t,
                               const char *file, const char *name, dfx_status *st) {
  const unsigned char *p = buf, *end = buf + size;
  dfx_str *s = t->data;
  uint64_t total = 0;
  uint32_t lcrc = 0;
  if (size == 0 && t->count == 0) return DFX_OK; /* TF skips an empty entry's checks */
  for (int64_t i = 0; i < t->count; i++) {
    uint64_t l;
    if (!dfx__varint_get(&p, end, &l) || l > size)
      return dfx__status_set(st, DFX_EINVAL, "%s: tensor '%s': bad length of string element %lld", file, name,
                             (long long)i);
    s[i].len = (size_t)l;
    total += l;
    lcrc = dfx__bundle_crc_len(lcrc, l);
  }
  if ((size_t)(end - p) < 4)
    return dfx__status_set(st, DFX_EINVAL, "%s: tensor '%s': string lengths run past its data", file, name);
  uint32_t stored = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
  if (dfx__crc32c_unmask(stored) != lcrc)
    return dfx__status_set(st, DFX_EINVAL, "%s: tensor '%s': checksum mismatch in its string lengths", file, name);
  uint32_t crc = dfx__crc32c_extend(lcrc, p, 4);
  p += 4;
  if (total != (uint64_t)(end - p))
    return dfx__status_set(st, DFX_EINVAL, "%s: tensor '%s': string bytes (%llu) do not match its size", file, name,
                           (unsigned long long)total);
  if (dfx__crc32c_extend(crc, p, (size_t)total) != want_crc)
    return dfx__status_set(st, DFX_EINVAL, "%s: checksum mismatch for tensor '%s' (corrupt data)", file, name);
  for (int64_t i = 0; i < t->count; i++) {
    s[i].ptr = NULL;
    if (s[i].len && !(s[i].ptr = dfx__malloc(s[i].len))) {
      for (int64_t j = i; j < t->count; j++) s[j].len = 0;
      return dfx__status_set(st, DFX_ENOMEM, "out of memory reading tensor '%s'", name);
    }
    if (s[i].len) memcpy(s[i].ptr, p, s[i].len);
    p += s[i].len;
  }
  return DFX_OK;
}

dfx_code dfx__bundle_read(const dfx_bundle *b, const dfx_bundle_entry *e, dfx_tensor **out, dfx_status *st) {
  *out = NULL;
  char path[4096];
  dfx__bundle_shard_path(b->prefix, e->shard, b->num_shards, path, sizeof path);
  if (e->sliced)
    return dfx__status_set(st, DFX_EUNIMPL, "checkpoint '%s': tensor '%s' is partitioned (saved in slices), which is "
                           "not supported", b->prefix, e->name);
  dfx_code c = DFX_OK;
  dfx_tensor *t = dfx__tensor_alloc(e->dtype, e->ndims, e->dims, &c);
  if (!t) return dfx__status_set(st, c, "cannot allocate tensor '%s' (%s) from checkpoint '%s'", e->name,
                                 dfx_code_name(c), b->prefix);
  if (e->dtype != DFX_STRING && (uint64_t)e->size != t->nbytes) {
    dfx__tensor_unref(t);
    return dfx__status_set(st, DFX_EINVAL, "%s: tensor '%s' is stored in %lld bytes, but %s %s needs %zu", path,
                           e->name, (long long)e->size, dfx_dtype_name(e->dtype), "of its shape", t->nbytes);
  }
  unsigned char *buf = dfx__malloc(e->size ? (size_t)e->size : 1);
  FILE *f = fopen(path, "rb");
  if (!buf || !f) {
    c = !buf ? dfx__status_set(st, DFX_ENOMEM, "out of memory reading tensor '%s'", e->name)
             : dfx__status_set(st, DFX_ENOTFOUND, "cannot open '%s' for tensor '%s' (%s)", path, e->name,
                               strerror(errno));
    goto done;
  }
  if (fseeko(f, (off_t)e->offset, SEEK_SET) != 0 || fread(buf, 1, (size_t)e->size, f) != (size_t)e->size) {
    c = dfx__status_set(st, DFX_EINVAL, "%s: tensor '%s' [%lld, +%lld) runs past the end of the file (truncated?)",
                        path, e->name, (long long)e->offset, (long long)e->size);
    goto done;
  }
  if (e->dtype != DFX_STRING && dfx__crc32c(buf, (size_t)e->size) != e->crc) {
    c = dfx__status_set(st, DFX_EINVAL, "%s: checksum mismatch for tensor '%s' (corrupt data)", path, e->name);
    goto done;
  }
  if (e->dtype == DFX_STRING) c = decode_strings(buf, (size_t)e->size, e->crc, t, path, e->name, st);
  else if (e->size) memcpy(t->data, buf, (size_t)e->size);
done:
  if (f) fclose(f);
  dfx__free(buf);
  if (c != DFX_OK) {
    dfx__tensor_unref(t);
    return c;
  }
  *out = t;
  return DFX_OK;
}
