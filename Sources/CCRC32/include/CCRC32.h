#ifndef CCRC32_H
#define CCRC32_H

#include <stddef.h>
#include <stdint.h>

/// The CRC-32 (IEEE 802.3, as zlib's `crc32` and gzip compute it) of `count` bytes, continuing
/// from `crc` (0 to start). The same value as zlib's `crc32_z`, computed with carry-less
/// multiplication where the processor has it.
uint32_t kindling_crc32(uint32_t crc, const uint8_t *bytes, size_t count);

#endif
