/* The overhead benchmark's floor: the least a CUPTI tracer can do. An injection library that
 * enables only CONCURRENT_KERNEL, MEMCPY and MEMSET activity and discards every record.
 * With FLOOR_MARKERS=1 it also enables CUPTI's NVTX marker path (set NVTX_INJECTION64_PATH to
 * libcupti), to time CUPTI's own push/pop. Runs inside the benchmarked program. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cupti.h>

#define FLOOR_BUF_BYTES (8u << 20)

static void CUPTIAPI floor_request(uint8_t **buffer, size_t *size, size_t *max_records)
{
	*buffer = aligned_alloc(8, FLOOR_BUF_BYTES);
	*size = *buffer ? FLOOR_BUF_BYTES : 0;
	*max_records = 0;
}

static void CUPTIAPI floor_complete(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
                                    size_t valid)
{
	CUpti_Activity *rec = NULL;
	volatile size_t n = 0;

	(void)ctx;
	(void)stream;
	(void)size;
	/* walk the records as any consumer must, then drop them */
	while (cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS)
		n++;
	free(buffer);
}

static void floor_exit(void)
{
	cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
}

__attribute__((visibility("default"))) int InitializeInjection(void);
int InitializeInjection(void)
{
	const char *markers = getenv("FLOOR_MARKERS");

	cuptiActivityRegisterCallbacks(floor_request, floor_complete);
	cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
	cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY);
	cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMSET);
	if (markers && *markers == '1')
		cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MARKER);
	atexit(floor_exit);
	return 1;
}
