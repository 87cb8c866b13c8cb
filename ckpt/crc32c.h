/* crc32c.h - CRC-32C (Castagnoli), the checksum of LevelDB tables and of
 * TensorFlow's checkpoint data, and the "mask" both store it under (a
 * rotation plus a constant, so that a CRC of bytes that themselves hold a
 * CRC does not degenerate). */
#ifndef DFX_CKPT_CRC32C_H
#define DFX_CKPT_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* The CRC of data[0..n) continuing from `crc` (0 to start). */
uint32_t dfx__crc32c_extend(uint32_t crc, const void *data, size_t n);
static inline uint32_t dfx__crc32c(const void *data, size_t n) { return dfx__crc32c_extend(0, data, n); }

#define DFX_CRC_MASK_DELTA 0xa282ead8u
static inline uint32_t dfx__crc32c_mask(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + DFX_CRC_MASK_DELTA; }
static inline uint32_t dfx__crc32c_unmask(uint32_t m) {
  uint32_t r = m - DFX_CRC_MASK_DELTA;
  return (r >> 17) | (r << 15);
}

#endif
