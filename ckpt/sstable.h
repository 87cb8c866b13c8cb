/* sstable.h - LevelDB's table format, as TensorFlow's checkpoint index uses
 * it: data blocks of prefix-compressed keys with restart points, each
 * followed by a trailer (compression byte + masked CRC32C), a metaindex
 * block, an index block of block handles, and a 48-byte footer ending in
 * the table magic. Only uncompressed blocks (TF writes its index so).
 *
 * The reader takes a whole file in memory and returns every entry; the
 * writer builds a whole table in memory from keys given in sorted order.
 * Index files are small (one entry per tensor), so neither streams. */
#ifndef DFX_CKPT_SSTABLE_H
#define DFX_CKPT_SSTABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dfexec.h"
#include "status.h"

/* ---- byte buffers and varints (shared with the bundle code) ---- */

typedef struct dfx_bytes {
  unsigned char *p;
  size_t n, cap;
  bool oom;           /* an append failed; p holds what fitted before */
} dfx_bytes;

void dfx__bytes_put(dfx_bytes *b, const void *data, size_t n);
void dfx__bytes_put_varint(dfx_bytes *b, uint64_t v);
void dfx__bytes_put_u32(dfx_bytes *b, uint32_t v); /* little-endian */
void dfx__bytes_free(dfx_bytes *b);
/* Reads a varint at *p (< end) into *v and advances *p; false when it runs
 * past end or over 10 bytes. */
bool dfx__varint_get(const unsigned char **p, const unsigned char *end, uint64_t *v);

/* ---- reading ---- */

typedef struct dfx_sst_kv {
  char *key;          /* NUL-terminated copy (keys may hold NULs: use klen) */
  size_t klen;
  unsigned char *val;
  size_t vlen;
} dfx_sst_kv;

/* Every entry of the table in buf[0..len), in table order, as a new array
 * (*out, *n; free with dfx__sst_free). `file` names the table in messages.
 * Every block's checksum is verified. DFX_EINVAL for a malformed or corrupt
 * table (naming the file and what is wrong), DFX_EUNIMPL for compressed
 * blocks, DFX_ENOMEM. */
dfx_code dfx__sst_read_all(const unsigned char *buf, size_t len, const char *file, dfx_sst_kv **out, int *n,
                           dfx_status *st);
void dfx__sst_free(dfx_sst_kv *kv, int n);

/* ---- writing ---- */

typedef struct dfx_sst_writer {
  dfx_bytes out;      /* the table so far */
  dfx_bytes block;    /* the data block being built */
  dfx_bytes index;    /* the index block being built */
  dfx_bytes restarts; /* restart offsets of `block` */
  dfx_bytes irestarts;
  dfx_bytes last;     /* the last key added */
  dfx_bytes ilast;
  int since_restart, isince_restart, n_block;
} dfx_sst_writer;

void dfx__sst_writer_init(dfx_sst_writer *w);
/* Adds an entry; keys must come in strictly increasing byte order (the
 * caller sorts). */
void dfx__sst_writer_add(dfx_sst_writer *w, const void *key, size_t klen, const void *val, size_t vlen);
/* Ends the table: on success *out (and *len) are a new dfx__malloc buffer holding
 * the whole file and the writer is emptied; DFX_ENOMEM otherwise. */
dfx_code dfx__sst_writer_finish(dfx_sst_writer *w, unsigned char **out, size_t *len, dfx_status *st);
void dfx__sst_writer_free(dfx_sst_writer *w);

#endif
