/* FNV-1a, the one string hash of gputrace's tables: byte by byte, continued from a seed, and
 * over 8-byte words with a final mix for tables indexed by the low bits. Header-only: it runs in
 * both processes, inside the traced application too (client-intern.c, collectors/meta.c), on
 * any thread: no allocation, no lock, no call. */
#ifndef GPUTRACE_HASH_H
#define GPUTRACE_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define GT_HASH_FNV_OFFSET 0xcbf29ce484222325ull /* FNV-1a's 64-bit offset basis */
#define GT_HASH_FNV_PRIME  0x100000001b3ull      /* and its prime */

/* FNV-1a over len bytes at p, continued from h (GT_HASH_FNV_OFFSET to start). */
static inline uint64_t gt_hash_fnv1a(uint64_t h, const void *p, size_t len)
{
	const unsigned char *s = p;

	for (size_t i = 0; i < len; i++)
		h = (h ^ s[i]) * GT_HASH_FNV_PRIME;
	return h;
}

/* murmur3's 64-bit finalizer: every bit of h reaches the low bits. */
static inline uint64_t gt_hash_fmix64(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 33;
	return h;
}

/* A table's hash of len bytes at p: FNV-1a over 8-byte words (each step folded so that a
 * word's high bytes reach the low bits), the last bytes one by one, seeded with len, then
 * gt_hash_fmix64. An eighth of gt_hash_fnv1a's multiplications on long strings (kernel names
 * run to hundreds of bytes). Words are read in host byte order: for tables in memory, never
 * for what is written to a file. */
static inline uint64_t gt_hash_bytes(const void *p, size_t len)
{
	const unsigned char *s = p;
	uint64_t h = GT_HASH_FNV_OFFSET ^ (uint64_t)len;
	size_t i = 0;

	for (; i + 8 <= len; i += 8) {
		uint64_t w;

		memcpy(&w, s + i, 8);
		h = (h ^ w) * GT_HASH_FNV_PRIME;
		h ^= h >> 29;
	}
	for (; i < len; i++)
		h = (h ^ s[i]) * GT_HASH_FNV_PRIME;
	return gt_hash_fmix64(h);
}

#endif /* GPUTRACE_HASH_H */
