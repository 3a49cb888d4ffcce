/* The least an NVTX handler that stamps ranges with the TSC can cost: an NVTX injection library
 * for bench-nvtx whose push and pop do nothing but what any such tracer must. Mode from
 * NVTX_FLOOR_MODE:
 *   clock   push and pop each read the TSC into a thread-local variable, nothing else;
 *   record  (default) push keeps the TSC reading and the message pointer on a thread-local
 *           stack; pop reads the TSC and writes a 64-byte record into a thread-local array of
 *           32, overwritten in turn and never published;
 *   store   as record, and pop also copies each record, behind an 8-byte word, into a 512 MiB
 *           buffer mapped and populated at start (72 bytes a record, as in gputrace's ring):
 *           what keeping every record in memory costs, without a ring, a consumer or a file;
 *   store-huge  as store, the buffer in transparent huge pages where the kernel allows
 *           (madvise): tells what of that cost is TLB misses;
 *   store32  as store, copying only the record's first 32 bytes (40 a record): what a record
 *           half as large would save;
 *   store-small  as store, in a 4 MiB buffer, which the caches can hold: what a ring that
 *           stays in cache would save;
 *   store-nt  as store, with non-temporal stores (and a store fence every 32 records, as a
 *           publisher would need before marking them written): tells what of that cost is
 *           reading each line for ownership before writing it.
 * Not a tracer: no message is copied, no record leaves the thread. gputrace's handler minus
 * this floor is what its cache lookup, staging and publishing cost (docs/performance.md). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <x86intrin.h>

#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>

#define EXPORT __attribute__((visibility("default")))
#define DEPTH  128
#define KEEP   32
#define STORE  (512ul << 20)

struct floor_rec {
	uint64_t start, end;
	const char *message;
	uint32_t depth, pad[9];
};
_Static_assert(sizeof(struct floor_rec) == 64, "a record as large as gputrace's");

struct floor_thread {
	uint32_t depth, count;
	uint64_t start[DEPTH];
	const char *message[DEPTH];
	struct floor_rec rec[KEEP];
};

/* a pointer, as in gputrace: a library loaded with dlopen has little static TLS */
static __thread struct floor_thread *self __attribute__((tls_model("initial-exec")));
static __thread uint64_t last __attribute__((tls_model("initial-exec")));
static uint8_t *store;    /* mode store: the buffer */
static uint64_t store_at; /* bytes used; one thread (bench-nvtx) */
static uint64_t store_size = STORE;

static int NVTX_API clock_push(const char *message)
{
	(void)message;
	last = __rdtsc();
	return 0;
}

static int NVTX_API clock_pop(void)
{
	last = __rdtsc();
	return 0;
}

static int NVTX_API record_push(const char *message)
{
	struct floor_thread *t = self;
	uint32_t d;

	if (__builtin_expect(!t, 0) && !(t = self = calloc(1, sizeof(*t))))
		return -1;
	d = t->depth++;

	if (d >= DEPTH)
		return (int)d;
	t->message[d] = message;
	t->start[d] = __rdtsc();
	return (int)d;
}

static int NVTX_API record_pop(void)
{
	uint64_t end = __rdtsc();
	struct floor_thread *t = self;
	struct floor_rec *r;
	uint32_t d;

	if (!t || t->depth == 0)
		return -1;
	d = --t->depth;
	if (d >= DEPTH)
		return (int)d;
	r = &t->rec[t->count++ % KEEP];
	r->start = t->start[d];
	r->end = end;
	r->message = t->message[d];
	r->depth = d;
	return (int)d;
}

/* pop, then copy the record's first n bytes behind an 8-byte word; inlined with n constant,
 * so each copy is as cheap as a fixed-size one */
static inline __attribute__((always_inline)) int store_pop_n(size_t n)
{
	struct floor_thread *t = self;
	int d = record_pop();
	uint64_t word = store_at;

	if (d >= 0 && d < DEPTH) {
		if (store_at + 8 + n > store_size)
			store_at = 0;
		memcpy(store + store_at, &word, 8);
		memcpy(store + store_at + 8, &t->rec[(t->count - 1) % KEEP], n);
		store_at += 8 + n;
	}
	return d;
}

static int NVTX_API store_pop(void)
{
	return store_pop_n(sizeof(struct floor_rec));
}

static int NVTX_API store32_pop(void)
{
	return store_pop_n(32);
}

static int NVTX_API store_nt_pop(void)
{
	struct floor_thread *t = self;
	int d = record_pop();

	if (d >= 0 && d < DEPTH) {
		long long *to, words[8];

		if (store_at + 72 > STORE)
			store_at = 0;
		to = (long long *)(void *)(store + store_at);
		memcpy(words, &t->rec[(t->count - 1) % KEEP], 64);
		_mm_stream_si64(to, (long long)store_at);
		for (int i = 0; i < 8; i++)
			_mm_stream_si64(to + 1 + i, words[i]);
		store_at += 72;
		if (t->count % KEEP == 0)
			_mm_sfence();
	}
	return d;
}

#define FN(f) ((NvtxFunctionPointer)(void (*)(void))(f))

EXPORT int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_export_table);
int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_export_table)
{
	const NvtxExportTableCallbacks *etbl = get_export_table(NVTX_ETID_CALLBACKS);
	const char *mode = getenv("NVTX_FLOOR_MODE");
	int clock_only = mode && strcmp(mode, "clock") == 0;
	int keep = mode && strncmp(mode, "store", 5) == 0;
	int huge = mode && strcmp(mode, "store-huge") == 0;
	int nt = mode && strcmp(mode, "store-nt") == 0;
	int half = mode && strcmp(mode, "store32") == 0;
	NvtxFunctionTable table = NULL;
	unsigned size = 0;

	if (!etbl || etbl->struct_size < sizeof(*etbl) ||
	    !etbl->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &table, &size) || !table ||
	    size <= NVTX_CBID_CORE_RangePop)
		return 0;
	*table[NVTX_CBID_CORE_RangePushA] = clock_only ? FN(clock_push) : FN(record_push);
	if (mode && strcmp(mode, "store-small") == 0)
		store_size = 4ul << 20;
	if (keep) {
		store = mmap(NULL, STORE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		             0);
		if (store == MAP_FAILED)
			return 0;
		if (huge)
			madvise(store, STORE, MADV_HUGEPAGE);
		memset(store, 0, STORE); /* populated before timing */
	}
	if (clock_only)
		*table[NVTX_CBID_CORE_RangePop] = FN(clock_pop);
	else if (nt)
		*table[NVTX_CBID_CORE_RangePop] = FN(store_nt_pop);
	else if (half)
		*table[NVTX_CBID_CORE_RangePop] = FN(store32_pop);
	else if (keep)
		*table[NVTX_CBID_CORE_RangePop] = FN(store_pop);
	else
		*table[NVTX_CBID_CORE_RangePop] = FN(record_pop);
	return 1;
}
