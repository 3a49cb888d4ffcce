/* CRC-32C (Castagnoli) for the trace file's chunk, header and footer checksums.
 * Runs in the writer and reader (CLI, standalone drainer thread). Uses the SSE4.2 crc32
 * instruction when the CPU has it, else a slicing-by-8 table. */
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "codec.h"

#define POLY 0x82f63b78u /* reflected Castagnoli polynomial */

static uint32_t table[8][256];
static pthread_once_t table_once = PTHREAD_ONCE_INIT;
static bool use_hw;

static void table_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ POLY : c >> 1;
		table[0][i] = c;
	}
	for (uint32_t i = 0; i < 256; i++)
		for (int t = 1; t < 8; t++)
			table[t][i] = (table[t - 1][i] >> 8) ^ table[0][table[t - 1][i] & 0xff];
#if defined(__x86_64__) && defined(__GNUC__)
	__builtin_cpu_init();
	use_hw = __builtin_cpu_supports("sse4.2");
#endif
}

static uint32_t crc_sw(uint32_t crc, const uint8_t *p, size_t len)
{
	while (len >= 8) {
		uint32_t lo = gt_get_le32(p) ^ crc;
		uint32_t hi = gt_get_le32(p + 4);

		crc = table[7][lo & 0xff] ^ table[6][(lo >> 8) & 0xff] ^
		      table[5][(lo >> 16) & 0xff] ^ table[4][lo >> 24] ^ table[3][hi & 0xff] ^
		      table[2][(hi >> 8) & 0xff] ^ table[1][(hi >> 16) & 0xff] ^ table[0][hi >> 24];
		p += 8;
		len -= 8;
	}
	while (len--)
		crc = (crc >> 8) ^ table[0][(crc ^ *p++) & 0xff];
	return crc;
}

#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("sse4.2"))) static uint32_t crc_hw(uint32_t crc, const uint8_t *p, size_t len)
{
	uint64_t c = crc;

	while (len >= 8) {
		uint64_t w;

		memcpy(&w, p, 8); /* x86 is little-endian, as the checksum defines */
		c = __builtin_ia32_crc32di(c, w);
		p += 8;
		len -= 8;
	}
	while (len--)
		c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
	return (uint32_t)c;
}
#endif

uint32_t gt_crc32c(uint32_t crc, const void *buf, size_t len)
{
	pthread_once(&table_once, table_init);
	crc = ~crc;
#if defined(__x86_64__) && defined(__GNUC__)
	if (use_hw)
		return ~crc_hw(crc, buf, len);
#endif
	return ~crc_sw(crc, buf, len);
}

uint32_t gt_crc32c_sw(uint32_t crc, const void *buf, size_t len)
{
	pthread_once(&table_once, table_init);
	return ~crc_sw(~crc, buf, len);
}
