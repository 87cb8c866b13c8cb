/* bundle.h - TensorFlow's V2 checkpoint format (the "tensor bundle"):
 * PREFIX.index, a LevelDB table (sstable.h) whose entry "" is a
 * BundleHeaderProto (number of shards, endianness, version) and whose other
 * entries map each tensor name to a BundleEntryProto (dtype, shape, shard,
 * offset, size, masked CRC32C of its bytes); and the data shards
 * PREFIX.data-SSSSS-of-NNNNN holding the tensors' bytes. Fixed-size dtypes
 * are stored raw, little-endian, and their entry's CRC is of those bytes. A
 * string tensor is stored as the varint64 length of every element, a 4-byte
 * little-endian masked CRC32C of the lengths, then the elements' bytes. Its
 * CRCs are not of the stored bytes: the lengths are checksummed as integers
 * (4-byte little-endian, 8 bytes when over UINT32_MAX), and the entry's CRC
 * continues from there over the 4 stored checksum bytes and the elements'
 * bytes (dfx__bundle_crc_len).
 *
 * Reading checks every checksum; any mismatch, truncation or missing shard
 * is an error naming the file and, for data, the tensor. Writing makes one
 * shard, writes to temporary names and renames at the end, so a failed save
 * never leaves a half-written checkpoint under PREFIX. Partitioned (sliced)
 * entries, big-endian bundles and resource/variant tensors are refused
 * with DFX_EUNIMPL. Objects are not shared between threads. */
#ifndef DFX_CKPT_BUNDLE_H
#define DFX_CKPT_BUNDLE_H

#include <stdbool.h>
#include <stdint.h>

#include "dfexec.h"
#include "status.h"
#include "tensor.h"

typedef struct dfx_bundle_entry {
  char *name;
  dfx_dtype dtype;
  int ndims;
  int64_t dims[DFX_MAX_DIMS];
  int shard;
  int64_t offset, size;
  uint32_t crc;          /* unmasked CRC32C of the stored bytes */
  bool sliced;           /* a partitioned variable's entry (not readable here) */
} dfx_bundle_entry;

typedef struct dfx_bundle {
  char *prefix;
  int num_shards;
  int n;                 /* entries, sorted by name (the table's order) */
  dfx_bundle_entry *e;
} dfx_bundle;

/* Opens the checkpoint PREFIX (reads PREFIX.index whole and checks that
 * every data shard exists). On success *out is new (dfx__bundle_close).
 * DFX_ENOTFOUND (no index, or a missing shard, named), DFX_EINVAL (corrupt
 * index), DFX_EUNIMPL, DFX_ENOMEM, DFX_EIO. */
dfx_code dfx__bundle_open(const char *prefix, dfx_bundle **out, dfx_status *st);
void dfx__bundle_close(dfx_bundle *b);
/* The entry called name (borrowed), or NULL. */
const dfx_bundle_entry *dfx__bundle_find(const dfx_bundle *b, const char *name);
/* Reads an entry's tensor (new, owned by the caller) after checking its
 * size and checksum. Errors name the shard file and the tensor. */
dfx_code dfx__bundle_read(const dfx_bundle *b, const dfx_bundle_entry *e, dfx_tensor **out, dfx_status *st);
/* "PREFIX.data-00000-of-00001" for shard i of n into buf. */
void dfx__bundle_shard_path(const char *prefix, int i, int n, char *buf, size_t len);

/* Extends crc with one string length as TF checksums it. */
uint32_t dfx__bundle_crc_len(uint32_t crc, uint64_t len);

typedef struct dfx_bundle_writer dfx_bundle_writer;
/* Starts a checkpoint at PREFIX (one data shard). *out is new. DFX_EIO when
 * the temporary data file cannot be created (naming it). */
dfx_code dfx__bundle_writer_new(const char *prefix, dfx_bundle_writer **out, dfx_status *st);
/* Appends tensor t (borrowed) under name. A repeated name is DFX_EINVAL;
 * resource and variant tensors DFX_EUNIMPL. */
dfx_code dfx__bundle_writer_add(dfx_bundle_writer *w, const char *name, const dfx_tensor *t, dfx_status *st);
/* Writes the index and moves both files into place; frees w whatever
 * happens. */
dfx_code dfx__bundle_writer_finish(dfx_bundle_writer *w, dfx_status *st);
/* Drops a checkpoint in progress (removes its temporary files). NULL ok. */
void dfx__bundle_writer_abort(dfx_bundle_writer *w);

#endif
