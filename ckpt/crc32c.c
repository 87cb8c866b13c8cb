/* crc32c.c - table-driven CRC-32C (reflected polynomial 0x82F63B78). The
 * table is built once; checkpoints are read at load time, so bytewise speed
 * is enough. */
#include "crc32c.h"

#include <uv.h>

static uint32_t table[256];
static uv_once_t table_once = UV_ONCE_INIT;

static void build_table(void) {
  for (uint32_t i = 0; i < 256; i++) {
    uint32_t c = i;
    for (int k = 0; k < 8; k++) c = c & 1 ? (c >> 1) ^ 0x82F63B78u : c >> 1;
    table[i] = c;
  }
}

uint32_t dfx__crc32c_extend(uint32_t crc, const void *data, size_t n) {
  uv_once(&table_once, build_table);
  const unsigned char *p = data;
  uint32_t c = ~crc;
  for (size_t i = 0; i < n; i++) c = table[(c ^ p[i]) & 0xff] ^ (c >> 8);
  return ~c;
}
