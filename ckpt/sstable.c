/* sstable.c - LevelDB table reading and writing (sstable.h). Layout facts:
 * a block entry is varint shared, varint non_shared, varint value_len, the
 * key's non-shared bytes and the value; a block ends with its restart
 * offsets (uint32 each) and their count; a block handle is varint offset,
 * varint size; the footer is the metaindex and index handles padded to 40
 * bytes, then the 64-bit magic 0xdb4775248b80fb57, little-endian. */
#include "sstable.h"

#include <string.h>

#include "alloc.h"
#include "crc32c.h"

#define FOOTER_LEN 48
#define TABLE_MAGIC 0xdb4775248b80fb57ull
#define BLOCK_SIZE 4096
#define RESTART_INTERVAL 16

/* ---- bytes ---- */

void dfx__bytes_put(dfx_bytes *b, const void *data, size_t n) {
  if (b->oom || n == 0) return;
  if (b->n + n > b->cap) {
    size_t nc = b->cap ? b->cap : 256;
    while (nc < b->n + n) nc *= 2;
    unsigned char *np = dfx__realloc(b->p, nc);
    if (!np) {
      b->oom = true;
      return;
    }
    b->p = np;
    b->cap = nc;
  }
  memcpy(b->p + b->n, data, n);
  b->n += n;
}

void dfx__bytes_put_varint(dfx_bytes *b, uint64_t v) {
  unsigned char tmp[10];
  int k = 0;
  while (v >= 0x80) {
    tmp[k++] = (unsigned char)(v | 0x80);
    v >>= 7;
  }
  tmp[k++] = (unsigned char)v;
  dfx__bytes_put(b, tmp, (size_t)k);
}

void dfx__bytes_put_u32(dfx_bytes *b, uint32_t v) {
  unsigned char tmp[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
                          (unsigned char)(v >> 24)};
  dfx__bytes_put(b, tmp, 4);
}

void dfx__bytes_free(dfx_bytes *b) {
  dfx__free(b->p);
  memset(b, 0, sizeof *b);
}

bool dfx__varint_get(const unsigned char **p, const unsigned char *end, uint64_t *v) {
  uint64_t r = 0;
  for (int shift = 0; shift < 70 && *p < end; shift += 7) {
    unsigned char c = *(*p)++;
    r |= (uint64_t)(c & 0x7f) << shift;
    if (!(c & 0x80)) {
      *v = r;
      return true;
    }
  }
  return false;
}

static uint32_t get_u32(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* ---- reading ---- */

typedef struct kv_list {
  dfx_sst_kv *v;
  int n, cap;
} kv_list;

void dfx__sst_free(dfx_sst_kv *kv, int n) {
  for (int i = 0; i < n; i++) {
    dfx__free(kv[i].key);
    dfx__free(kv[i].val);
  }
  dfx__free(kv);
}

/* The contents of the block at handle (off, size) after checking its
 * trailer; NULL with the reason in st. */
static const unsigned char *block_at(const unsigned char *buf, size_t len, uint64_t off, uint64_t size,
                                     const char *file, const char *what, dfx_status *st) {
  if (off > len || size > len - off || len - off - size < 5) {
    dfx__status_set(st, DFX_EINVAL, "%s: %s block [%llu, +%llu) lies outside the %zu-byte file (truncated?)", file,
                    what, (unsigned long long)off, (unsigned long long)size, len);
    return NULL;
  }
  const unsigned char *b = buf + off;
  unsigned char type = b[size];
  uint32_t want = dfx__crc32c_unmask(get_u32(b + size + 1));
  uint32_t got = dfx__crc32c_extend(dfx__crc32c(b, size), &type, 1);
  if (got != want) {
    dfx__status_set(st, DFX_EINVAL, "%s: checksum mismatch in %s block at offset %llu (corrupt file)", file, what,
                    (unsigned long long)off);
    return NULL;
  }
  if (type != 0) {
    dfx__status_set(st, DFX_EUNIMPL, "%s: %s block at offset %llu is compressed (type %d); only uncompressed "
                    "tables are supported", file, what, (unsigned long long)off, type);
    return NULL;
  }
  return b;
}

/* Appends every entry of a block to list. */
static dfx_code parse_block(const unsigned char *b, size_t size, const char *file, kv_list *list, dfx_status *st) {
  if (size < 4) return dfx__status_set(st, DFX_EINVAL, "%s: block of %zu bytes has no restart count", file, size);
  uint32_t nr = get_u32(b + size - 4);
  if ((uint64_t)nr * 4 + 4 > size)
    return dfx__status_set(st, DFX_EINVAL, "%s: block restart count %u does not fit its %zu bytes", file, nr, size);
  const unsigned char *p = b, *end = b + size - 4 - (size_t)nr * 4;
  dfx_bytes key = {0};
  dfx_code c = DFX_OK;
  while (p < end) {
    uint64_t shared, non_shared, vlen;
    if (!dfx__varint_get(&p, end, &shared) || !dfx__varint_get(&p, end, &non_shared) ||
        !dfx__varint_get(&p, end, &vlen) || shared > key.n || non_shared > (uint64_t)(end - p) ||
        vlen > (uint64_t)(end - p) - non_shared) {
      c = dfx__status_set(st, DFX_EINVAL, "%s: bad entry in block at byte %td", file, p - b);
      goto done;
    }
    key.n = (size_t)shared;
    dfx__bytes_put(&key, p, (size_t)non_shared);
    p += non_shared;
    if (list->n == list->cap) {
      int nc = list->cap ? list->cap * 2 : 16;
      dfx_sst_kv *nv = dfx__realloc(list->v, sizeof *nv * (size_t)nc);
      if (!nv) key.oom = true;
      else {
        list->v = nv;
        list->cap = nc;
      }
    }
    dfx_sst_kv kv = {dfx__malloc(key.n + 1), key.n, dfx__malloc(vlen ? vlen : 1), (size_t)vlen};
    if (key.oom || !kv.key || !kv.val) {
      dfx__free(kv.key);
      dfx__free(kv.val);
      c = dfx__status_set(st, DFX_ENOMEM, "out of memory reading %s", file);
      goto done;
    }
    if (key.n) memcpy(kv.key, key.p, key.n);
    kv.key[key.n] = 0;
    if (vlen) memcpy(kv.val, p, (size_t)vlen);
    p += vlen;
    list->v[list->n++] = kv;
  }
done:
  dfx__bytes_free(&key);
  return c;
}

dfx_code dfx__sst_read_all(const unsigned char *buf, size_t len, const char *file, dfx_sst_kv **out, int *n,
                           dfx_status *st) {
  *out = NULL;
  *n = 0;
  if (len < FOOTER_LEN)
    return dfx__status_set(st, DFX_EINVAL, "%s: %zu bytes is too short for a table footer (truncated?)", file, len);
  const unsigned char *f = buf + len - FOOTER_LEN;
  uint64_t magic = (uint64_t)get_u32(f + 40) | (uint64_t)get_u32(f + 44) << 32;
  if (magic != TABLE_MAGIC)
    return dfx__status_set(st, DFX_EINVAL, "%s: not a checkpoint index (bad table magic; truncated or another file?)",
                           file);
  const unsigned char *p = f, *fend = f + 40;
  uint64_t moff, msize, ioff, isize;
  if (!dfx__varint_get(&p, fend, &moff) || !dfx__varint_get(&p, fend, &msize) || !dfx__varint_get(&p, fend, &ioff) ||
      !dfx__varint_get(&p, fend, &isize))
    return dfx__status_set(st, DFX_EINVAL, "%s: bad block handles in the table footer", file);
  const unsigned char *ib = block_at(buf, len, ioff, isize, file, "index", st);
  if (!ib) return st ? st->code : DFX_EINVAL;
  kv_list index = {0}, all = {0};
  dfx_code c = parse_block(ib, (size_t)isize, file, &index, st);
  for (int i = 0; c == DFX_OK && i < index.n; i++) {
    const unsigned char *hp = index.v[i].val, *he = hp + index.v[i].vlen;
    uint64_t off, size;
    if (!dfx__varint_get(&hp, he, &off) || !dfx__varint_get(&hp, he, &size)) {
      c = dfx__status_set(st, DFX_EINVAL, "%s: bad block handle in the index block", file);
      break;
    }
    const unsigned char *db = block_at(buf, len, off, size, file, "data", st);
    c = db ? parse_block(db, (size_t)size, file, &all, st) : (st ? st->code : DFX_EINVAL);
  }
  dfx__sst_free(index.v, index.n);
  if (c != DFX_OK) {
    dfx__sst_free(all.v, all.n);
    return c;
  }
  *out = all.v;
  *n = all.n;
  return DFX_OK;
}

/* ---- writing ---- */

void dfx__sst_writer_init(dfx_sst_writer *w) { memset(w, 0, sizeof *w); }

void dfx__sst_writer_free(dfx_sst_writer *w) {
  dfx__bytes_free(&w->out);
  dfx__bytes_free(&w->block);
  dfx__bytes_free(&w->index);
  dfx__bytes_free(&w->restarts);
  dfx__bytes_free(&w->irestarts);
  dfx__bytes_free(&w->last);
  dfx__bytes_free(&w->ilast);
}

/* One prefix-compressed entry into a block. */
static void block_add(dfx_bytes *blk, dfx_bytes *restarts, dfx_bytes *last, int *since, const void *key, size_t klen,
                      const void *val, size_t vlen) {
  size_t shared = 0;
  if (blk->n == 0 || *since == RESTART_INTERVAL) {
    dfx__bytes_put_u32(restarts, (uint32_t)blk->n);
    *since = 0;
  } else {
    while (shared < klen && shared < last->n && last->p[shared] == ((const unsigned char *)key)[shared]) shared++;
  }
  dfx__bytes_put_varint(blk, shared);
  dfx__bytes_put_varint(blk, klen - shared);
  dfx__bytes_put_varint(blk, vlen);
  dfx__bytes_put(blk, (const unsigned char *)key + shared, klen - shared);
  dfx__bytes_put(blk, val, vlen);
  last->n = 0;
  dfx__bytes_put(last, key, klen);
  (*since)++;
}

/* Appends a finished block (restarts, count, trailer) to the table and
 * encodes its handle into h. */
static void block_emit(dfx_sst_writer *w, dfx_bytes *blk, dfx_bytes *restarts, dfx_bytes *h) {
  if (restarts->n == 0) dfx__bytes_put_u32(restarts, 0);
  dfx__bytes_put(blk, restarts->p, restarts->n);
  dfx__bytes_put_u32(blk, (uint32_t)(restarts->n / 4));
  uint64_t off = w->out.n, size = blk->n;
  dfx__bytes_put(&w->out, blk->p, blk->n);
  unsigned char type = 0;
  uint32_t crc = dfx__crc32c_extend(dfx__crc32c(blk->p, blk->n), &type, 1);
  dfx__bytes_put(&w->out, &type, 1);
  dfx__bytes_put_u32(&w->out, dfx__crc32c_mask(crc));
  w->out.oom |= blk->oom || restarts->oom;
  blk->n = 0;
  restarts->n = 0;
  dfx__bytes_put_varint(h, off);
  dfx__bytes_put_varint(h, size);
}

/* Ends the data block in progress; its index key is its last key, which
 * is >= every key in it and < every key after it, as LevelDB requires. */
static void flush_data(dfx_sst_writer *w) {
  if (w->n_block == 0) return;
  dfx_bytes h = {0};
  block_emit(w, &w->block, &w->restarts, &h);
  block_add(&w->index, &w->irestarts, &w->ilast, &w->isince_restart, w->last.p, w->last.n, h.p, h.n);
  w->out.oom |= h.oom;
  dfx__bytes_free(&h);
  w->n_block = 0;
  w->since_restart = 0;
}

void dfx__sst_writer_add(dfx_sst_writer *w, const void *key, size_t klen, const void *val, size_t vlen) {
  block_add(&w->block, &w->restarts, &w->last, &w->since_restart, key, klen, val, vlen);
  w->n_block++;
  if (w->block.n >= BLOCK_SIZE) flush_data(w);
}

dfx_code dfx__sst_writer_finish(dfx_sst_writer *w, unsigned char **out, size_t *len, dfx_status *st) {
  *out = NULL;
  *len = 0;
  flush_data(w);
  dfx_bytes meta = {0}, mrestarts = {0}, mh = {0}, ih = {0};
  block_emit(w, &meta, &mrestarts, &mh);
  block_emit(w, &w->index, &w->irestarts, &ih);
  unsigned char footer[FOOTER_LEN] = {0};
  size_t fl = 0;
  if (!mh.oom && !ih.oom) {
    memcpy(footer, mh.p, mh.n);
    memcpy(footer + mh.n, ih.p, ih.n);
    fl = mh.n + ih.n;
  }
  (void)fl;
  uint64_t magic = TABLE_MAGIC;
  for (int i = 0; i < 8; i++) footer[40 + i] = (unsigned char)(magic >> (8 * i));
  dfx__bytes_put(&w->out, footer, sizeof footer);
  bool oom = w->out.oom || meta.oom || mrestarts.oom || mh.oom || ih.oom;
  dfx__bytes_free(&meta);
  dfx__bytes_free(&mrestarts);
  dfx__bytes_free(&mh);
  dfx__bytes_free(&ih);
  if (oom) {
    dfx__sst_writer_free(w);
    return dfx__status_set(st, DFX_ENOMEM, "out of memory writing a checkpoint index");
  }
  *out = w->out.p;
  *len = w->out.n;
  w->out.p = NULL;
  dfx__sst_writer_free(w);
  return DFX_OK;
}
