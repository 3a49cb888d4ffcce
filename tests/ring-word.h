/* A ring slot's commit word built by hand, as docs/ring.md specifies it, for the tests that
 * play a producer the library would not be (test-ring.c, fuzz/fuzz-ring.c). The check is
 * computable by design, so a hostile producer can forge words the consumer accepts. */
#ifndef GPUTRACE_TESTS_RING_WORD_H
#define GPUTRACE_TESTS_RING_WORD_H

#include <stdbool.h>
#include <stdint.h>

#define RING_WORD_PENDING (1ull << 47)
#define RING_WORD_PACKED  0x4000u /* in the type field */

/* The check: the high half of splitmix64's finalizer over position, type and units. */
static inline uint32_t ring_word_check(uint64_t pos, unsigned type, unsigned units)
{
	uint64_t x = pos ^ ((uint64_t)((type << 16) | units) * 0x9e3779b97f4a7c15ull);

	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	x ^= x >> 31;
	return (uint32_t)(x >> 32);
}

/* The word of a slot of `units` 8-byte units at absolute position pos; `type` may carry
 * RING_WORD_PACKED. */
static inline uint64_t ring_word(uint64_t pos, unsigned type, unsigned units, bool pending)
{
	return ((uint64_t)units << 48) | ((uint64_t)type << 32) |
	       ring_word_check(pos, type, units) | (pending ? RING_WORD_PENDING : 0);
}

#endif /* GPUTRACE_TESTS_RING_WORD_H */
