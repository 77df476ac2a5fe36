// CRC-32 by folding with carry-less multiplication (PCLMULQDQ), written by hand for the log's
// record checksums: no kept library offers it, and the system zlib's table-driven crc32 costs
// about 120 ns for a 140-byte record, a few percent of a whole durable write. The method is the
// published one (Gopal et al., "Fast CRC Computation for Generic Polynomials Using PCLMULQDQ
// Instruction", Intel, 2009): the message is folded 16 bytes at a time into a 128-bit remainder
// congruent to it modulo the polynomial, which is then reduced to 32 bits (Barrett). Everything
// is in the bit-reflected domain, as the CRC-32 of zlib is. The constants below were computed for
// this file (x^n mod P, bit-reflected, shifted left by one) and are the paper's.
//
// Buffers under 32 bytes, and every buffer on a processor without the instruction, go through
// zlib's crc32_z.

#include "CCRC32.h"

#include <string.h>
#include <zlib.h>

#if defined(__x86_64__)
#include <emmintrin.h>
#include <wmmintrin.h>

// Folding the remainder forward by 128 bits: x^(128+32) and x^(128-32) mod P.
static const uint64_t fold128[2] = {0x1751997d0ULL, 0x0ccaa009eULL};
// Folding 64 bits forward by 32 more: x^64 mod P.
static const uint64_t fold64 = 0x163cd6124ULL;
// Barrett reduction: the reflected polynomial P' and mu' = floor(x^64 / P), reflected.
static const uint64_t barrett[2] = {0x1db710641ULL, 0x1f7011641ULL};

// The next 128-bit remainder: `remainder` folded forward over the 16 bytes `next`. Its low half
// (the earlier bytes) moves x^(128+32) on, its high half x^(128-32).
__attribute__((target("pclmul,sse2"))) static inline __m128i fold16(__m128i remainder, __m128i constants, __m128i next) {
    const __m128i low = _mm_clmulepi64_si128(remainder, constants, 0x00);
    const __m128i high = _mm_clmulepi64_si128(remainder, constants, 0x11);
    return _mm_xor_si128(_mm_xor_si128(low, high), next);
}

// `state` is the CRC's running register (the complement of zlib's value); `count` is at least
// 32. Leading zero bytes do not change a CRC register that starts at zero, so the message is
// read as if it had as many zeros in front as make it end on a 16-byte boundary, with the
// register's state XORed into its first four bytes: every block is then whole, and no bytes are
// left over for a slower path.
__attribute__((target("pclmul,sse2"))) static uint32_t fold(uint32_t state, const uint8_t *bytes, size_t count) {
    const __m128i constants = _mm_set_epi64x((long long)fold128[1], (long long)fold128[0]);
    const size_t lead = (16 - count % 16) % 16;
    uint8_t head[32] = {0};
    memcpy(head + lead, bytes, 32 - lead);
    for (size_t index = 0; index < 4; index++) head[lead + index] ^= (uint8_t)(state >> (8 * index));
    __m128i remainder = _mm_loadu_si128((const __m128i *)head);
    remainder = fold16(remainder, constants, _mm_loadu_si128((const __m128i *)(head + 16)));
    for (size_t offset = 32 - lead; offset < count; offset += 16) {
        remainder = fold16(remainder, constants, _mm_loadu_si128((const __m128i *)(bytes + offset)));
    }
    const __m128i lowWords = _mm_set_epi32(0, -1, 0, -1);
    // 128 bits to 96: the low 64 folded onto the high 64.
    remainder = _mm_xor_si128(_mm_srli_si128(remainder, 8), _mm_clmulepi64_si128(remainder, constants, 0x10));
    // 96 bits to 64: the low 32 folded onto the rest.
    const __m128i shifted = _mm_srli_si128(remainder, 4);
    remainder = _mm_clmulepi64_si128(_mm_and_si128(remainder, lowWords), _mm_cvtsi64_si128((long long)fold64), 0x00);
    remainder = _mm_xor_si128(remainder, shifted);
    // 64 bits to the 32-bit remainder.
    const __m128i reduction = _mm_set_epi64x((long long)barrett[1], (long long)barrett[0]);
    __m128i quotient = _mm_clmulepi64_si128(_mm_and_si128(remainder, lowWords), reduction, 0x10);
    quotient = _mm_clmulepi64_si128(_mm_and_si128(quotient, lowWords), reduction, 0x00);
    remainder = _mm_xor_si128(remainder, quotient);
    return (uint32_t)_mm_cvtsi128_si32(_mm_srli_si128(remainder, 4));
}

// Read from the processor's features, which the runtime detects once at start.
static int hasCarrylessMultiply(void) { return __builtin_cpu_supports("pclmul"); }
#endif

uint32_t kindling_crc32(uint32_t crc, const uint8_t *bytes, size_t count) {
#if defined(__x86_64__)
    // Below 32 bytes the setup costs about what the table saves.
    if (count >= 32 && hasCarrylessMultiply()) return ~fold(~crc, bytes, count);
#endif
    return (uint32_t)crc32_z(crc, bytes, count);
}
