/* NVTX collector: our own handlers for NVTX's callback tables, installed through
 * InitializeInjectionNvtx2 (NVTX_INJECTION64_PATH names this library; gputrace run and
 * InitializeInjection set it). Push/pop, start/end, marks, domains, registered strings, colors,
 * categories, thread names -> GT_REC_NVTX / GT_REC_THREAD. A push+pop costs two clock reads, a
 * per-thread message cache lookup and one record staged in the thread's own buffer, published
 * to the ring in batches: no locks, no locked instruction per record, no allocation after a
 * thread's first call.
 * Runs inside the traced application, on the threads calling NVTX. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <wchar.h>

#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>

#include "clock.h"
#include "collector.h"
#include "emit.h"
#include "inject.h"
#include "stack.h"
#include "tsc.h"

#define GT_EXPORT __attribute__((visibility("default")))
/* The push/pop path is inlined into each NVTX entry point: calls between its parts would save
 * and restore registers for as long as the work itself takes. */
#define GT_HOT inline __attribute__((always_inline))

#define GT_NVTX_DEPTH_MAX  128  /* deeper ranges: counted as unrecorded losses */
#define GT_NVTX_CACHE      64   /* per-thread message cache entries, power of two */
#define GT_NVTX_CACHE_TEXT 48   /* strings shorter than this are cached */
#define GT_NVTX_RANGES     4096 /* open start/end ranges tracked at once, power of two */
#define GT_NVTX_STAGE      32   /* records a thread stages before it publishes them */
#define GT_NVTX_THREADS    1024 /* threads whose stages the flush thread can reach */

struct nvtx_frame {
	uint64_t start_ns;   /* trace clock */
	uint32_t message_id; /* string */
	uint32_t domain_id;  /* string; 0 default domain */
	uint32_t color;      /* ARGB */
	uint32_t category;
	uint32_t depth;    /* within its domain */
	uint32_t capture;  /* 1 if this range opened the NVTX capture range */
	uint32_t stack_id; /* GT_REC_STACK where it was pushed; 0 none */
};

struct nvtx_cache_entry {
	const char
	        *ptr; /* the caller's pointer; the text is compared too, since buffers get reused */
	uint32_t id;
	uint32_t len; /* bytes in text before its terminator */
	char text[GT_NVTX_CACHE_TEXT];
};

/*
 * A thread's staged records. Writing a record to the shared ring takes a locked instruction on
 * its head, which costs 20-25 ns on some server processors; staged, a record costs a copy to
 * memory the thread owns. The thread publishes its stage with one ring reservation when it is
 * full, and the flush thread publishes whatever an idle thread holds every flush interval, so
 * a record waits in a stage no longer than a CUPTI record waits in CUPTI's buffers.
 * Records are published exactly once: a publisher first takes `busy` (compare-exchange), then
 * copies [taken, count) and advances `taken`. The owner writes only at `count`, and only while
 * count - taken < GT_NVTX_STAGE, so it never overwrites a record not yet copied out.
 */
struct nvtx_stage {
	_Atomic uint32_t busy;  /* 1 while a publisher (the owner or the flush thread) copies */
	_Atomic uint32_t count; /* records staged so far; stored by the owner only */
	_Atomic uint32_t taken; /* records published so far; stored by the holder of busy only */
	struct gt_rec_nvtx rec[GT_NVTX_STAGE]; /* record i at rec[i % GT_NVTX_STAGE] */
};

/* Per-thread: the push/pop stack, the message cache and the stage. Lives as long as the
 * thread (freed by the TLS key's destructor after the stage is published). */
struct nvtx_thread {
	uint32_t tid;
	uint32_t depth;   /* frames pushed, including those past GT_NVTX_DEPTH_MAX */
	uint32_t ndomain; /* frames of `stack` in a domain other than the default one */
	int slot;         /* index in `registry`, or -1: records go to the ring one by one */
	/* 1 while the thread fills and commits a stage entry: an NVTX call from a signal handler
	 * that interrupts it must not take the same entry, and writes to the ring instead */
	_Atomic uint32_t staging;
	struct nvtx_frame stack[GT_NVTX_DEPTH_MAX];
	struct nvtx_cache_entry cache[GT_NVTX_CACHE];
	struct nvtx_stage stage;
};
/* Only a pointer is thread-local, in the initial-exec model (a few bytes of static TLS, read
 * with one instruction); the state itself is made on a thread's first NVTX call and freed
 * when the thread exits. A large _Thread_local here would cost a __tls_get_addr call on every
 * access, since this library is loaded with dlopen. */
static __thread struct nvtx_thread *nt_self __attribute__((tls_model("initial-exec")));
/* 1 while this thread makes its state: an NVTX call from a signal handler that interrupts it
 * is not recorded (it would make a second state for the thread) */
static __thread bool nt_making __attribute__((tls_model("initial-exec")));
static pthread_key_t nt_key;
static pthread_once_t nt_key_once = PTHREAD_ONCE_INIT;
static bool nt_key_ok;

/* Threads with a stage, for the flush thread and the exit flush. A thread takes a slot at its
 * first NVTX call without a lock (compare-exchange: that call may be in a signal handler), and
 * gives it up at its end under registry_lock, which the publishers hold while they copy. */
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic(struct nvtx_thread *) registry[GT_NVTX_THREADS];
static _Atomic bool stage_off; /* set for the last flush: records go to the ring directly */
/* ranges not recorded since the last publish_all: a push on a thread without a state (see
 * nt_new) or nested past GT_NVTX_DEPTH_MAX; emitted as one LOSS record by publish_all */
static _Atomic uint64_t unrecorded;

static void stage_publish(struct nvtx_stage *st);
static inline bool tracing(void);

/* n ranges that will not be recorded, counted while tracing. */
static void count_unrecorded(uint64_t n)
{
	if (n && tracing())
		atomic_fetch_add_explicit(&unrecorded, n, memory_order_relaxed);
}

/* A thread's state, from mmap rather than malloc: a thread's first NVTX call may be in a
 * signal handler, and the call it interrupted may hold malloc's lock. */
static size_t nt_bytes(void)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t p = page > 0 ? (size_t)page : 4096u;

	return (sizeof(struct nvtx_thread) + p - 1) / p * p;
}

/* A thread ends: publish its stage, leave the registry, free its state. */
static void nt_free(void *p)
{
	struct nvtx_thread *t = p;

	nt_self = NULL; /* a later destructor's NVTX call on this thread starts afresh */
	if (t->slot >= 0)
		pthread_mutex_lock(&registry_lock);
	/* pushes this thread never popped: not recorded, and counted (under the lock, so that
	 * the end's count of open ranges, open_at_end, sees either this or the thread) */
	count_unrecorded(t->depth);
	if (t->slot >= 0) {
		/* the flush thread, holding the lock, may be publishing this stage: wait */
		stage_publish(&t->stage);
		atomic_store_explicit(&registry[t->slot], NULL, memory_order_relaxed);
		pthread_mutex_unlock(&registry_lock);
	}
	munmap(t, nt_bytes());
}

/* fork(): the lock must not be held by a thread that does not exist in the child */
static void registry_prepare(void)
{
	pthread_mutex_lock(&registry_lock);
}

static void registry_release(void)
{
	pthread_mutex_unlock(&registry_lock);
}

static void nt_key_create(void)
{
	nt_key_ok = pthread_key_create(&nt_key, nt_free) == 0 &&
	            pthread_atfork(registry_prepare, registry_release, registry_release) == 0;
}

/* The key as early as the library loads, while the process has made few: glibc keeps a
 * thread's values for keys 0-31 in its descriptor, and allocates on a thread's first use of a
 * higher one, which nt_new, possibly in a signal handler, must not do. */
__attribute__((constructor)) static void nt_key_early(void)
{
	pthread_once(&nt_key_once, nt_key_create);
}

/*
 * First NVTX call on this thread: makes its state. NULL when memory or a TLS key is lacking;
 * the thread's NVTX calls are then not recorded. Safe in a signal handler: the key is made
 * when the library loads (nt_key_early), the state comes from mmap and the registry slot
 * from a compare-exchange.
 */
static struct nvtx_thread *nt_new(void)
{
	struct nvtx_thread *t;

	pthread_once(&nt_key_once, nt_key_create);
	if (!nt_key_ok || nt_making)
		return NULL;
	nt_making = true;
	atomic_signal_fence(memory_order_seq_cst);
	/* a handler that ran between the check and the flag made the state: use it */
	if (nt_self) {
		t = nt_self;
		goto out;
	}
	t = mmap(NULL, nt_bytes(), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (t == MAP_FAILED) {
		t = NULL;
		goto out;
	}
	t->slot = -1;
	t->tid = gt_thread_id();
	if (pthread_setspecific(nt_key, t) != 0) {
		munmap(t, nt_bytes());
		t = NULL;
		goto out;
	}
	/* the state is whole before a publisher can see it (release) */
	for (int i = 0; i < GT_NVTX_THREADS; i++) {
		struct nvtx_thread *none = NULL;

		if (atomic_compare_exchange_strong_explicit(
		            &registry[i], &none, t, memory_order_release, memory_order_relaxed)) {
			t->slot = i;
			break;
		}
	}
	nt_self = t;
out:
	atomic_signal_fence(memory_order_seq_cst);
	nt_making = false;
	return t;
}

static inline struct nvtx_thread *nt_get(void)
{
	struct nvtx_thread *t = nt_self;

	return __builtin_expect(t != NULL, 1) ? t : nt_new();
}

/* Open start/end ranges. A start claims a free slot in a bitmap (compare-exchange on one of
 * its 64 words, found with a count of trailing zeros: a few instructions however many ranges
 * stay open), and its id names the slot in its low bits: id = sequence <<
 * GT_NVTX_RANGE_BITS | slot, never 0. The id is stored last (release) and checked first
 * (acquire); range_end reads the fields, then clears the id by compare-exchange and records
 * the range only if that succeeds, and only then frees the slot: a range is ended once, and
 * never from a slot half rewritten by another. */
#define GT_NVTX_RANGE_BITS 12
_Static_assert(GT_NVTX_RANGES == 1u << GT_NVTX_RANGE_BITS, "range id bits name a slot");
struct nvtx_range_start {
	uint64_t start_ns;
	uint32_t tid, message_id, domain_id, color, category, capture, stack_id;
};
struct nvtx_open_range {
	_Atomic uint64_t id; /* 0: no range */
	struct nvtx_range_start s;
};
static struct nvtx_open_range ranges[GT_NVTX_RANGES];
static _Atomic uint64_t ranges_used[GT_NVTX_RANGES / 64]; /* bit set: slot taken */
static _Atomic uint64_t next_range_seq = 1;

/* A free slot of `ranges`, taken, searched from the bitmap word `from` names (threads that
 * start ranges at once mostly touch different words); -1 when all are taken. */
static int range_slot_take(uint64_t from)
{
	for (uint32_t i = 0; i < GT_NVTX_RANGES / 64; i++) {
		uint32_t w = (uint32_t)(from + i) % (GT_NVTX_RANGES / 64);
		uint64_t v = atomic_load_explicit(&ranges_used[w], memory_order_relaxed);

		/* acquire: the slot's last end (its release below) is done with it */
		while (~v)
			if (atomic_compare_exchange_weak_explicit(&ranges_used[w], &v, v | (v + 1),
			                                          memory_order_acquire,
			                                          memory_order_relaxed))
				return (int)(w * 64 + (uint32_t)__builtin_ctzll(~v));
	}
	return -1;
}

static void range_slot_give(uint32_t slot)
{
	/* release: pairs with the acquire in range_slot_take */
	atomic_fetch_and_explicit(&ranges_used[slot / 64], ~(1ull << (slot % 64)),
	                          memory_order_release);
}

static inline bool tracing(void)
{
	return atomic_load_explicit(&gt_inj.active, memory_order_relaxed) &&
	       atomic_load_explicit(&gt_inj.capturing, memory_order_relaxed);
}

/* Messages are needed while tracing, and also outside a capture range to find its start. */
static inline bool want_text(void)
{
	return tracing() || gt_inj.cfg.capture == GT_CAPTURE_NVTX;
}

/* The calling thread's id, from its state `nt` when it has one. */
static inline uint32_t tid(const struct nvtx_thread *nt)
{
	return nt ? nt->tid : gt_thread_id();
}

/*
 * `s` is the text cached in `e`. Compared inline, since a library call would cost more than
 * these short strings: eight bytes at a time when every byte read lies on the page that holds
 * s (a page is mapped whole, so reading past s's terminator there cannot fault; the sanitizer
 * is told so), else byte by byte, stopping at s's terminator.
 */
__attribute__((no_sanitize_address)) static inline bool
cached_text_is(const struct nvtx_cache_entry *e, const char *s)
{
	size_t n = (size_t)e->len + 1, words = (n + 7) / 8, i;

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	if (((uintptr_t)s & 4095u) + words * 8 <= 4096u) {
		uint64_t a, b, diff = 0;

		for (i = 0; i + 1 < words; i++) {
			memcpy(&a, e->text + 8 * i, 8);
			memcpy(&b, s + 8 * i, 8);
			diff |= a ^ b;
		}
		memcpy(&a, e->text + 8 * i, 8);
		memcpy(&b, s + 8 * i, 8);
		/* the last word's bytes past the terminator are not the string's */
		diff |= (a ^ b) & (~(uint64_t)0 >> (8 * (words * 8 - n)));
		return diff == 0;
	}
#endif
	for (i = 0; i < n; i++)
		if (e->text[i] != s[i])
			return false;
	return true;
}

static inline struct nvtx_cache_entry *cache_entry(struct nvtx_thread *nt, const char *s)
{
	return &nt->cache[((uintptr_t)s >> 3) & (GT_NVTX_CACHE - 1)];
}

/* s's interned id if cache entry e holds it (e is cache_entry(nt, s)), else 0. */
static inline uint32_t cached_id(const struct nvtx_cache_entry *e, const char *s)
{
	return e->ptr == s && e->id && cached_text_is(e, s) ? e->id : 0;
}

/* Intern `s` and remember it in cache entry `e` when it is short enough. */
static uint32_t message_miss(struct nvtx_cache_entry *e, const char *s)
{
	size_t len = strnlen(s, GT_STRING_MAX);
	uint32_t id = gt_intern_len(s, len);

	if (e && id && len < GT_NVTX_CACHE_TEXT) {
		e->ptr = s;
		e->id = id;
		e->len = (uint32_t)len;
		memcpy(e->text, s, len + 1);
	}
	return id;
}

/* Interned id of an ASCII message, through the thread's cache; inline, since it is on every
 * push of a named range. */
static GT_HOT uint32_t message_a(const char *s)
{
	struct nvtx_thread *nt = nt_get();
	struct nvtx_cache_entry *e;

	if (!s)
		return GT_STRING_NONE;
	if (!nt)
		return message_miss(NULL, s);
	e = cache_entry(nt, s);
	return cached_id(e, s) ? cached_id(e, s) : message_miss(e, s);
}

/* Wide strings: converted to UTF-8 on the stack, not cached (rare in practice). */
static size_t utf8_from_wide(const wchar_t *w, char *out, size_t bytes)
{
	size_t n = 0;

	for (; w && *w && n + 4 < bytes; w++) {
		uint32_t c = (uint32_t)*w;

		if (c < 0x80) {
			out[n++] = (char)c;
		} else if (c < 0x800) {
			out[n++] = (char)(0xc0 | (c >> 6));
			out[n++] = (char)(0x80 | (c & 0x3f));
		} else if (c < 0x10000) {
			out[n++] = (char)(0xe0 | (c >> 12));
			out[n++] = (char)(0x80 | ((c >> 6) & 0x3f));
			out[n++] = (char)(0x80 | (c & 0x3f));
		} else if (c < 0x110000) {
			out[n++] = (char)(0xf0 | (c >> 18));
			out[n++] = (char)(0x80 | ((c >> 12) & 0x3f));
			out[n++] = (char)(0x80 | ((c >> 6) & 0x3f));
			out[n++] = (char)(0x80 | (c & 0x3f));
		}
	}
	out[n] = '\0';
	return n;
}

static uint32_t message_w(const wchar_t *w, char *buf, size_t bytes)
{
	size_t n;

	if (!w)
		return GT_STRING_NONE;
	n = utf8_from_wide(w, buf, bytes);
	return gt_intern_len(buf, n);
}

/* What an event-attributes structure says. `text` gets the message when it is a string, for
 * the NVTX capture range. */
struct nvtx_attr {
	uint32_t message_id, color, category;
	const char *text;
};

/* The handle of the registered string that names the NVTX capture range (0: none yet): a
 * range whose message is that handle opens the capture, as one with the text does. */
static _Atomic uint32_t capture_handle;

static void parse_attr(const nvtxEventAttributes_t *a, struct nvtx_attr *out, char *wbuf,
                       size_t wbytes)
{
	memset(out, 0, sizeof(*out));
	if (!a)
		return;
	out->category = a->category;
	if (a->colorType == NVTX_COLOR_ARGB)
		out->color = a->color;
	switch (a->messageType) {
	case NVTX_MESSAGE_TYPE_ASCII:
		out->message_id = message_a(a->message.ascii);
		out->text = a->message.ascii;
		break;
	case NVTX_MESSAGE_TYPE_UNICODE:
		out->message_id = message_w(a->message.unicode, wbuf, wbytes);
		out->text = wbuf;
		break;
	case NVTX_MESSAGE_TYPE_REGISTERED:
		/* our registered-string handles are the interned ids */
		out->message_id = (uint32_t)(uintptr_t)a->message.registered;
		if (out->message_id &&
		    out->message_id == atomic_load_explicit(&capture_handle, memory_order_relaxed))
			out->text = gt_inj.cfg.capture_name;
		break;
	default:
		break;
	}
}

/* The attributes of a plain ASCII or wide message, for the entry points without an
 * attributes structure; the message is interned only when `intern` (see want_text). */
static GT_HOT void attr_a(struct nvtx_attr *a, const char *message, bool intern)
{
	memset(a, 0, sizeof(*a));
	a->text = message;
	if (intern)
		a->message_id = message_a(message);
}

static void attr_w(struct nvtx_attr *a, const wchar_t *message, bool intern, char *buf,
                   size_t bytes)
{
	memset(a, 0, sizeof(*a));
	if (intern) {
		a->message_id = message_w(message, buf, bytes);
		a->text = buf;
	}
}

static inline uint32_t domain_id(nvtxDomainHandle_t d)
{
	return (uint32_t)(uintptr_t)d;
}

/* Publish [taken, count) of a stage in one ring reservation (two when the records wrap around
 * the stage). Returns without doing anything while another publisher holds it.
 * Context: the owner thread, the flush thread, or a thread flushing at exit. */
static void stage_publish(struct nvtx_stage *st)
{
	uint32_t zero = 0, t, c, i0, n, first;

	/* Acquire pairs with the release of busy below, by the previous publisher. */
	if (!atomic_compare_exchange_strong_explicit(&st->busy, &zero, 1, memory_order_acquire,
	                                             memory_order_relaxed))
		return;
	t = atomic_load_explicit(&st->taken, memory_order_relaxed);
	/* Acquire pairs with the owner's release store of count: the records are written. */
	c = atomic_load_explicit(&st->count, memory_order_acquire);
	n = c - t;
	if (n) {
		i0 = t % GT_NVTX_STAGE;
		first = n < GT_NVTX_STAGE - i0 ? n : GT_NVTX_STAGE - i0;
		gt_emit_batch(&st->rec[i0].hdr, sizeof(st->rec[0]), first);
		if (n > first)
			gt_emit_batch(&st->rec[0].hdr, sizeof(st->rec[0]), n - first);
		/* Release pairs with the owner's acquire load of taken: the copies are done
		 * before the owner reuses those entries. */
		atomic_store_explicit(&st->taken, c, memory_order_release);
	}
	atomic_store_explicit(&st->busy, 0, memory_order_release);
}

/*
 * The next entry of the calling thread's stage, marked busy, or NULL when its records go to
 * the ring directly: no stage, the last flush has run, the stage is full while the flush
 * thread copies it out, or this call interrupted the thread's own use of its stage (NVTX from
 * a signal handler). The caller fills the entry in place, field by field, then calls
 * stage_put with *count and stage_release. A record built on the stack and then copied into
 * the stage would be read back with wide loads while its narrow stores are still in flight:
 * the processor cannot forward those, and each such load waits 10-20 cycles.
 */
static GT_HOT struct gt_rec_nvtx *stage_take(struct nvtx_thread *nt, uint32_t *count)
{
	struct nvtx_stage *st;
	uint32_t c, t;

	if (!nt || nt->slot < 0 || atomic_load_explicit(&stage_off, memory_order_relaxed) ||
	    atomic_load_explicit(&nt->staging, memory_order_relaxed))
		return NULL;
	/* Relaxed, then a signal fence: only a handler on this thread reads it, and it must
	 * see the flag before any write to the entry. */
	atomic_store_explicit(&nt->staging, 1, memory_order_relaxed);
	atomic_signal_fence(memory_order_seq_cst);
	st = &nt->stage;
	c = atomic_load_explicit(&st->count, memory_order_relaxed);
	*count = c;
	/* Acquire pairs with the publisher's release store of taken: its copy of this entry
	 * is done before the entry is overwritten. */
	t = atomic_load_explicit(&st->taken, memory_order_acquire);
	if (c - t >= GT_NVTX_STAGE) {
		atomic_signal_fence(memory_order_seq_cst);
		atomic_store_explicit(&nt->staging, 0, memory_order_relaxed);
		return NULL;
	}
	return &st->rec[c % GT_NVTX_STAGE];
}

/* Make the entry stage_take gave out (entry `count`) visible. True when the stage is now full:
 * the caller publishes it before stage_release. */
static GT_HOT bool stage_put(struct nvtx_thread *nt, uint32_t count)
{
	struct nvtx_stage *st = &nt->stage;

	/* Release pairs with the publisher's acquire load of count. */
	atomic_store_explicit(&st->count, count + 1, memory_order_release);
	return count + 1 - atomic_load_explicit(&st->taken, memory_order_relaxed) >= GT_NVTX_STAGE;
}

/* The stage is no longer busy: a signal handler on this thread may take its next entry. */
static GT_HOT void stage_release(struct nvtx_thread *nt)
{
	atomic_signal_fence(memory_order_seq_cst);
	atomic_store_explicit(&nt->staging, 0, memory_order_relaxed);
}

/* Ranges still open at the end: pushes not popped on the threads that are still running,
 * and started ranges not ended. They are not recorded, and counted. Read from another thread
 * while those threads may still run: a count, not a snapshot. */
static uint64_t open_at_end(void)
{
	uint64_t n = 0;

	pthread_mutex_lock(&registry_lock);
	for (int i = 0; i < GT_NVTX_THREADS; i++) {
		struct nvtx_thread *t = atomic_load_explicit(&registry[i], memory_order_acquire);

		if (t)
			n += __atomic_load_n(&t->depth, __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&registry_lock);
	for (uint32_t i = 0; i < GT_NVTX_RANGES; i++)
		n += atomic_load_explicit(&ranges[i].id, memory_order_relaxed) != 0;
	return n;
}

/* Publish every thread's staged records (with `last`: ranges still open then are counted
 * as unrecorded). Takes a mutex; never on a record's path. */
static void publish_all(bool last)
{
	uint64_t lost;

	if (last)
		count_unrecorded(open_at_end());
	lost = atomic_exchange_explicit(&unrecorded, 0, memory_order_relaxed);

	/* may wait for ring space: the flush thread or the final flush, never the application */
	if (lost)
		gt_emit_loss_wait(GT_LOSS_NVTX, lost, GT_REC_NVTX);
	pthread_mutex_lock(&registry_lock);
	for (int i = 0; i < GT_NVTX_THREADS; i++) {
		struct nvtx_thread *t = atomic_load_explicit(&registry[i], memory_order_acquire);

		if (t)
			stage_publish(&t->stage);
	}
	pthread_mutex_unlock(&registry_lock);
}

/* Each period: publish what idle threads hold. Last: from now on records go to the ring one by
 * one, not through the stages; a thread that took a stage entry just before finishes it within
 * the pause (unless preempted for longer), so the last publish finds it. */
static void nvtx_flush(enum gt_flush_why why)
{
	struct timespec pause = {0, 1000000};

	if (why == GT_FLUSH_LAST) {
		atomic_store(&stage_off, true);
		nanosleep(&pause, NULL);
	}
	publish_all(why == GT_FLUSH_LAST);
}

/* Fill NVTX record r in place, field by field (see stage_take). */
static GT_HOT void fill_nvtx(struct gt_rec_nvtx *r, uint32_t kind, uint64_t start, uint64_t end,
                             uint64_t range_id, uint32_t open_tid, uint32_t end_tid, uint32_t dom,
                             uint32_t msg, uint32_t color, uint32_t cat, uint32_t depth,
                             uint32_t stack_id)
{
	gt_hdr(&r->hdr, GT_REC_NVTX, sizeof(*r));
	r->start_ns = start;
	r->end_ns = end;
	r->range_id = range_id;
	r->tid = open_tid;
	r->end_tid = end_tid;
	r->domain_id = dom;
	r->message_id = msg;
	r->category = cat;
	r->color = color;
	r->kind = kind;
	r->depth = depth;
	r->stack_id = stack_id;
	r->_pad = 0;
}

/* One NVTX record from the calling thread `nt` (NULL if its state could not be allocated):
 * into its stage, or to the ring directly. The caller has checked that tracing is on. */
static GT_HOT void emit_nvtx(struct nvtx_thread *nt, uint32_t kind, uint64_t start, uint64_t end,
                             uint64_t range_id, uint32_t open_tid, uint32_t dom, uint32_t msg,
                             uint32_t color, uint32_t cat, uint32_t depth, uint32_t stack_id)
{
	struct gt_rec_nvtx spare, *r;
	uint32_t count = 0;

	r = stage_take(nt, &count);
	fill_nvtx(r ? r : &spare, kind, start, end, range_id, open_tid, tid(nt), dom, msg, color,
	          cat, depth, stack_id);
	if (!r) {
		gt_emit_nowait(&spare.hdr);
		return;
	}
	if (stage_put(nt, count))
		stage_publish(&nt->stage);
	stage_release(nt);
}

/* ---- push/pop ---- */

static GT_HOT int push(uint32_t dom, const struct nvtx_attr *a)
{
	struct nvtx_thread *nt = nt_get();
	uint32_t d;
	uint32_t depth_in_domain = 0;
	struct nvtx_frame *f;
	uint32_t i;

	if (!nt) {
		count_unrecorded(1);
		return -1;
	}
	d = nt->depth;
	if (d >= GT_NVTX_DEPTH_MAX) {
		nt->depth = d + 1;
		return (int)d;
	}
	/* counted before the frame is: a signal handler's push or pop on this thread that sees
	 * no other domain's frame takes the fast path, which assumes the top frame is its own */
	nt->ndomain += dom != 0;
	atomic_signal_fence(memory_order_seq_cst);
	nt->depth = d + 1;
	/* the new depth before the frame: a signal handler's push on this thread takes the
	 * next frame, not this one (a compiler barrier only) */
	atomic_signal_fence(memory_order_seq_cst);
	for (i = 0; i < d; i++)
		depth_in_domain += nt->stack[i].domain_id == dom;
	f = &nt->stack[d];
	f->capture = gt_inj.cfg.capture == GT_CAPTURE_NVTX && gt_capture_nvtx(a->text, true);
	f->message_id = a->message_id;
	f->domain_id = dom;
	f->color = a->color;
	f->category = a->category;
	f->depth = depth_in_domain;
	f->stack_id = gt_stack_on ? gt_stack_capture() : 0;
	f->start_ns = gt_fast_ns();
	return (int)depth_in_domain;
}

/* The pop of a range that ended at `end`. */
static GT_HOT int pop(uint32_t dom, uint64_t end)
{
	struct nvtx_thread *nt = nt_self; /* NULL: nothing was pushed on this thread */
	struct nvtx_frame f;
	uint32_t top, i;

	if (!nt || nt->depth == 0)
		return -1;
	if (nt->depth > GT_NVTX_DEPTH_MAX) {
		count_unrecorded(1);
		nt->depth--;
		return (int)nt->depth;
	}
	/* the innermost frame of this domain; frames of other domains above it stay open */
	top = nt->depth - 1;
	for (i = top + 1; i-- > 0;)
		if (nt->stack[i].domain_id == dom)
			break;
	if (i > top)
		return -1; /* nothing open in this domain */
	f = nt->stack[i];
	if (i != top)
		memmove(&nt->stack[i], &nt->stack[i + 1], (top - i) * sizeof(nt->stack[0]));
	/* the frame is read before it is given up: a signal handler's push may reuse it */
	atomic_signal_fence(memory_order_seq_cst);
	nt->depth--;
	/* uncounted after the frame is given up (see push) */
	atomic_signal_fence(memory_order_seq_cst);
	nt->ndomain -= f.domain_id != 0;
	if (tracing())
		emit_nvtx(nt, GT_NVTX_PUSH_POP, f.start_ns, end, 0, nt->tid, f.domain_id,
		          f.message_id, f.color, f.category, f.depth, f.stack_id);
	if (f.capture)
		gt_capture_nvtx(gt_inj.cfg.capture_name, false);
	return (int)f.depth;
}

/*
 * nvtxRangePushA and nvtxRangePop, the calls programs make most, have a fast path for the
 * common case: tracing without an NVTX capture range, the TSC clock on, the thread's state
 * made, only default-domain frames on its stack, the message in its cache and room in its
 * stage. Anything else leaves by a tail call, before the fast path has changed anything, to
 * the general path below. The fast paths are leaves: they save no registers and build no
 * stack frame, which on the H200 machines' Xeons is a good part of what a call costs beyond
 * its two TSC reads.
 */
static GT_HOT bool fast_path_on(const struct nvtx_thread *nt)
{
	return nt && !nt->ndomain && tracing() && gt_inj.cfg.capture != GT_CAPTURE_NVTX &&
	       !gt_stack_on &&
	       atomic_load_explicit(&gt_tsc_enabled, memory_order_relaxed);
}

static __attribute__((noinline)) int push_a_slow(const char *message)
{
	struct nvtx_attr a;

	attr_a(&a, message, want_text());
	return push(0, &a);
}

static int NVTX_API range_push_a(const char *message)
{
	struct nvtx_thread *nt = nt_self;
	struct nvtx_frame *f;
	uint32_t d, id;

	if (__builtin_expect(!fast_path_on(nt) || !message, 0))
		return push_a_slow(message);
	d = nt->depth;
	if (__builtin_expect(d >= GT_NVTX_DEPTH_MAX ||
	                             !(id = cached_id(cache_entry(nt, message), message)),
	                     0))
		return push_a_slow(message);
	nt->depth = d + 1;
	/* as in push: the depth before the frame */
	atomic_signal_fence(memory_order_seq_cst);
	f = &nt->stack[d];
	f->message_id = id;
	f->domain_id = 0;
	f->color = 0;
	f->category = 0;
	f->depth = d;
	f->capture = 0;
	f->stack_id = 0;
	f->start_ns = gt_tsc_ns();
	return (int)d;
}

static __attribute__((noinline)) int pop_slow(uint64_t end)
{
	return pop(0, end);
}

/* The fast pop's record filled the last free entry of the stage: publish it. */
static __attribute__((noinline)) int pop_publish(struct nvtx_thread *nt, uint32_t depth)
{
	stage_publish(&nt->stage);
	stage_release(nt);
	return (int)depth;
}

static int NVTX_API range_pop(void)
{
	struct nvtx_thread *nt;
	const struct nvtx_frame *f;
	struct gt_rec_nvtx *r;
	uint64_t end;
	uint32_t d, count = 0;

	if (__builtin_expect(!atomic_load_explicit(&gt_tsc_enabled, memory_order_relaxed), 0))
		return pop_slow(gt_now_ns());
	end = gt_tsc_ns();
	nt = nt_self;
	/* d - 1 wraps for an empty stack */
	if (__builtin_expect(!fast_path_on(nt) || (d = nt->depth) - 1 >= GT_NVTX_DEPTH_MAX, 0))
		return pop_slow(end);
	r = stage_take(nt, &count);
	if (__builtin_expect(!r, 0))
		return pop_slow(end);
	/* Field by field from the frame, not through fill_nvtx: its arguments would load every
	 * field before the first store, and the registers that takes cost this leaf a frame. */
	f = &nt->stack[d - 1];
	gt_hdr(&r->hdr, GT_REC_NVTX, sizeof(*r));
	r->start_ns = f->start_ns;
	r->end_ns = end;
	r->range_id = 0;
	r->tid = nt->tid;
	r->end_tid = nt->tid;
	r->domain_id = 0;
	r->message_id = f->message_id;
	r->category = f->category;
	r->color = f->color;
	r->kind = GT_NVTX_PUSH_POP;
	r->depth = f->depth;
	r->stack_id = f->stack_id;
	r->_pad = 0;
	/* as in pop: the frame is read before it is given up */
	atomic_signal_fence(memory_order_seq_cst);
	nt->depth = d - 1;
	if (__builtin_expect(stage_put(nt, count), 0))
		return pop_publish(nt, d - 1);
	stage_release(nt);
	return (int)(d - 1);
}

static int NVTX_API range_push_w(const wchar_t *message)
{
	char buf[1024];
	struct nvtx_attr a;

	attr_w(&a, message, want_text(), buf, sizeof(buf));
	return push(0, &a);
}

static int NVTX_API range_push_ex(const nvtxEventAttributes_t *attr)
{
	char buf[1024];
	struct nvtx_attr a = {0, 0, 0, NULL};

	if (want_text())
		parse_attr(attr, &a, buf, sizeof(buf));
	return push(0, &a);
}

static int NVTX_API domain_range_push_ex(nvtxDomainHandle_t domain,
                                         const nvtxEventAttributes_t *attr)
{
	char buf[1024];
	struct nvtx_attr a = {0, 0, 0, NULL};

	if (want_text())
		parse_attr(attr, &a, buf, sizeof(buf));
	return push(domain_id(domain), &a);
}

static int NVTX_API domain_range_pop(nvtxDomainHandle_t domain)
{
	return pop(domain_id(domain), gt_fast_ns());
}

/* ---- start/end ---- */

static nvtxRangeId_t range_start(uint32_t dom, const struct nvtx_attr *a)
{
	uint64_t seq = atomic_fetch_add_explicit(&next_range_seq, 1, memory_order_relaxed), id;
	int slot = range_slot_take(seq);
	struct nvtx_open_range *r;

	if (slot < 0) {
		/* GT_NVTX_RANGES ranges open at once: this one cannot be kept; its end finds
		 * no range (id 0) */
		count_unrecorded(1);
		return 0;
	}
	r = &ranges[slot];
	id = seq << GT_NVTX_RANGE_BITS | (uint64_t)slot;
	r->s.capture = gt_inj.cfg.capture == GT_CAPTURE_NVTX && gt_capture_nvtx(a->text, true);
	r->s.tid = tid(nt_get());
	r->s.message_id = a->message_id;
	r->s.domain_id = dom;
	r->s.color = a->color;
	r->s.category = a->category;
	r->s.stack_id = gt_stack_on ? gt_stack_capture() : 0;
	r->s.start_ns = gt_fast_ns();
	/* release: pairs with the acquire in range_end, publishing the fields above */
	atomic_store_explicit(&r->id, id, memory_order_release);
	return id;
}

static void NVTX_API range_end(nvtxRangeId_t id)
{
	uint64_t end = gt_fast_ns();
	uint32_t slot = (uint32_t)(id & (GT_NVTX_RANGES - 1));
	struct nvtx_open_range *r = &ranges[slot];
	struct nvtx_range_start f;
	uint64_t expected = id;

	/* acquire: pairs with the release in range_start */
	if (id == 0 || atomic_load_explicit(&r->id, memory_order_acquire) != id)
		return; /* not a range of ours, or already ended */
	f = r->s;
	/* the copy is whole only if the slot still holds this range: a concurrent end of the
	 * same id clears it first, and only then can a new range take the slot */
	if (!atomic_compare_exchange_strong_explicit(&r->id, &expected, 0, memory_order_acq_rel,
	                                             memory_order_relaxed))
		return;
	range_slot_give(slot);
	if (tracing())
		emit_nvtx(nt_get(), GT_NVTX_START_END, f.start_ns, end, id, f.tid, f.domain_id,
		          f.message_id, f.color, f.category, 0, f.stack_id);
	if (f.capture)
		gt_capture_nvtx(gt_inj.cfg.capture_name, false);
}

static nvtxRangeId_t NVTX_API range_start_a(const char *message)
{
	struct nvtx_attr a;

	attr_a(&a, message, want_text());
	return range_start(0, &a);
}

static nvtxRangeId_t NVTX_API range_start_w(const wchar_t *message)
{
	char buf[1024];
	struct nvtx_attr a;

	attr_w(&a, message, want_text(), buf, sizeof(buf));
	return range_start(0, &a);
}

static nvtxRangeId_t NVTX_API range_start_ex(const nvtxEventAttributes_t *attr)
{
	char buf[1024];
	struct nvtx_attr a = {0, 0, 0, NULL};

	if (want_text())
		parse_attr(attr, &a, buf, sizeof(buf));
	return range_start(0, &a);
}

static nvtxRangeId_t NVTX_API domain_range_start_ex(nvtxDomainHandle_t domain,
                                                    const nvtxEventAttributes_t *attr)
{
	char buf[1024];
	struct nvtx_attr a = {0, 0, 0, NULL};

	if (want_text())
		parse_attr(attr, &a, buf, sizeof(buf));
	return range_start(domain_id(domain), &a);
}

static void NVTX_API domain_range_end(nvtxDomainHandle_t domain, nvtxRangeId_t id)
{
	(void)domain;
	range_end(id);
}

/* ---- marks ---- */

static void mark(uint32_t dom, const struct nvtx_attr *a)
{
	struct nvtx_thread *nt = nt_get();
	uint64_t now = gt_fast_ns();

	emit_nvtx(nt, GT_NVTX_MARK, now, now, 0, tid(nt), dom, a->message_id, a->color, a->category,
	          0, gt_stack_on ? gt_stack_capture() : 0);
}

static void NVTX_API mark_a(const char *message)
{
	struct nvtx_attr a;

	if (!tracing())
		return;
	attr_a(&a, message, true);
	mark(0, &a);
}

static void NVTX_API mark_w(const wchar_t *message)
{
	char buf[1024];
	struct nvtx_attr a;

	if (!tracing())
		return;
	attr_w(&a, message, true, buf, sizeof(buf));
	mark(0, &a);
}

static void NVTX_API mark_ex(const nvtxEventAttributes_t *attr)
{
	char buf[1024];
	struct nvtx_attr a;

	if (!tracing())
		return;
	parse_attr(attr, &a, buf, sizeof(buf));
	mark(0, &a);
}

static void NVTX_API domain_mark_ex(nvtxDomainHandle_t domain, const nvtxEventAttributes_t *attr)
{
	char buf[1024];
	struct nvtx_attr a;

	if (!tracing())
		return;
	parse_attr(attr, &a, buf, sizeof(buf));
	mark(domain_id(domain), &a);
}

/* ---- domains, registered strings, names ---- */

/* Handles are the interned ids (never dereferenced by NVTX); 0 would read as the default
 * domain, so a failed intern maps to an id no string has. */
static void *handle_of(uint32_t id)
{
	return (void *)(uintptr_t)(id ? id : UINT32_MAX);
}

static nvtxDomainHandle_t NVTX_API domain_create_a(const char *name)
{
	return handle_of(gt_intern(name));
}

static nvtxDomainHandle_t NVTX_API domain_create_w(const wchar_t *name)
{
	char buf[1024];

	return handle_of(message_w(name, buf, sizeof(buf)));
}

static void NVTX_API domain_destroy(nvtxDomainHandle_t domain)
{
	(void)domain;
}

/* The handle for registered string `text`, interned as `id`. The capture range's name gets
 * a handle of its own when it could not be interned, so that it still opens the range. */
static nvtxStringHandle_t registered(const char *text, uint32_t id)
{
	uint32_t h = (uint32_t)(uintptr_t)handle_of(id);

	if (gt_inj.cfg.capture == GT_CAPTURE_NVTX && text &&
	    strcmp(text, gt_inj.cfg.capture_name) == 0) {
		h = id ? id : UINT32_MAX - 1;
		atomic_store_explicit(&capture_handle, h, memory_order_relaxed);
	}
	return (nvtxStringHandle_t)(uintptr_t)h;
}

static nvtxStringHandle_t NVTX_API register_string_a(nvtxDomainHandle_t domain, const char *s)
{
	(void)domain;
	return registered(s, gt_intern(s));
}

static nvtxStringHandle_t NVTX_API register_string_w(nvtxDomainHandle_t domain, const wchar_t *s)
{
	char buf[1024];
	uint32_t id;

	(void)domain;
	buf[0] = '\0';
	id = message_w(s, buf, sizeof(buf));
	return registered(buf, id);
}

static void thread_name(uint32_t thread, uint32_t name_id)
{
	struct gt_rec_thread r;

	if (!name_id)
		return;
	gt_hdr(&r.hdr, GT_REC_THREAD, sizeof(r));
	r.tid = thread;
	r.name_id = name_id;
	gt_emit_nowait(&r.hdr);
}

static void NVTX_API name_os_thread_a(uint32_t thread, const char *name)
{
	thread_name(thread, gt_intern(name));
}

static void NVTX_API name_os_thread_w(uint32_t thread, const wchar_t *name)
{
	char buf[1024];

	thread_name(thread, message_w(name, buf, sizeof(buf)));
}

/* Category names have no record of their own; the string is interned so that exporters that
 * learn the mapping later find it. */
static void NVTX_API name_category_a(uint32_t category, const char *name)
{
	(void)category;
	gt_intern(name);
}

static void NVTX_API name_category_w(uint32_t category, const wchar_t *name)
{
	char buf[1024];

	(void)category;
	message_w(name, buf, sizeof(buf));
}

static void NVTX_API domain_name_category_a(nvtxDomainHandle_t d, uint32_t category,
                                            const char *name)
{
	(void)d;
	name_category_a(category, name);
}

static void NVTX_API domain_name_category_w(nvtxDomainHandle_t d, uint32_t category,
                                            const wchar_t *name)
{
	(void)d;
	name_category_w(category, name);
}

static int resource_dummy;

static nvtxResourceHandle_t NVTX_API domain_resource_create(nvtxDomainHandle_t d,
                                                            nvtxResourceAttributes_t *attr)
{
	(void)d;
	(void)attr;
	return (nvtxResourceHandle_t)&resource_dummy;
}

static void NVTX_API domain_resource_destroy(nvtxResourceHandle_t r)
{
	(void)r;
}

static void NVTX_API nvtx_initialize(const void *reserved)
{
	(void)reserved;
}

/* ---- installation ---- */

#define FN(f) ((NvtxFunctionPointer)(void (*)(void))(f))

static int install(const NvtxExportTableCallbacks *etbl, NvtxCallbackModule module,
                   const NvtxFunctionPointer *fns, unsigned n)
{
	NvtxFunctionTable table = NULL;
	unsigned size = 0, i;

	if (!etbl->GetModuleFunctionTable(module, &table, &size) || !table)
		return -1;
	for (i = 1; i < n && i < size; i++) {
		if (fns[i] && table[i])
			*table[i] = fns[i];
	}
	return 0;
}

/* Called by NVTX at the process's first NVTX call when NVTX_INJECTION64_PATH names us. */
GT_EXPORT int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_export_table);
int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_export_table)
{
	NvtxFunctionPointer core[NVTX_CBID_CORE_SIZE] = {0};
	NvtxFunctionPointer core2[NVTX_CBID_CORE2_SIZE] = {0};
	const NvtxExportTableCallbacks *etbl;
	const NvtxExportTableVersionInfo *ver;

	if (gt_inject_start() < 0 || !(gt_inj.cfg.trace & GT_TRACE_NVTX))
		return 0; /* NVTX keeps its no-op handlers */
	etbl = get_export_table(NVTX_ETID_CALLBACKS);
	if (!etbl || etbl->struct_size < sizeof(*etbl))
		return 0;
	ver = get_export_table(NVTX_ETID_VERSIONINFO);
	if (ver && ver->struct_size >= sizeof(*ver) && ver->SetInjectionNvtxVersion)
		ver->SetInjectionNvtxVersion(NVTX_VERSION);

	core[NVTX_CBID_CORE_MarkEx] = FN(mark_ex);
	core[NVTX_CBID_CORE_MarkA] = FN(mark_a);
	core[NVTX_CBID_CORE_MarkW] = FN(mark_w);
	core[NVTX_CBID_CORE_RangeStartEx] = FN(range_start_ex);
	core[NVTX_CBID_CORE_RangeStartA] = FN(range_start_a);
	core[NVTX_CBID_CORE_RangeStartW] = FN(range_start_w);
	core[NVTX_CBID_CORE_RangeEnd] = FN(range_end);
	core[NVTX_CBID_CORE_RangePushEx] = FN(range_push_ex);
	core[NVTX_CBID_CORE_RangePushA] = FN(range_push_a);
	core[NVTX_CBID_CORE_RangePushW] = FN(range_push_w);
	core[NVTX_CBID_CORE_RangePop] = FN(range_pop);
	core[NVTX_CBID_CORE_NameCategoryA] = FN(name_category_a);
	core[NVTX_CBID_CORE_NameCategoryW] = FN(name_category_w);
	core[NVTX_CBID_CORE_NameOsThreadA] = FN(name_os_thread_a);
	core[NVTX_CBID_CORE_NameOsThreadW] = FN(name_os_thread_w);

	core2[NVTX_CBID_CORE2_DomainMarkEx] = FN(domain_mark_ex);
	core2[NVTX_CBID_CORE2_DomainRangeStartEx] = FN(domain_range_start_ex);
	core2[NVTX_CBID_CORE2_DomainRangeEnd] = FN(domain_range_end);
	core2[NVTX_CBID_CORE2_DomainRangePushEx] = FN(domain_range_push_ex);
	core2[NVTX_CBID_CORE2_DomainRangePop] = FN(domain_range_pop);
	core2[NVTX_CBID_CORE2_DomainResourceCreate] = FN(domain_resource_create);
	core2[NVTX_CBID_CORE2_DomainResourceDestroy] = FN(domain_resource_destroy);
	core2[NVTX_CBID_CORE2_DomainNameCategoryA] = FN(domain_name_category_a);
	core2[NVTX_CBID_CORE2_DomainNameCategoryW] = FN(domain_name_category_w);
	core2[NVTX_CBID_CORE2_DomainRegisterStringA] = FN(register_string_a);
	core2[NVTX_CBID_CORE2_DomainRegisterStringW] = FN(register_string_w);
	core2[NVTX_CBID_CORE2_DomainCreateA] = FN(domain_create_a);
	core2[NVTX_CBID_CORE2_DomainCreateW] = FN(domain_create_w);
	core2[NVTX_CBID_CORE2_DomainDestroy] = FN(domain_destroy);
	core2[NVTX_CBID_CORE2_Initialize] = FN(nvtx_initialize);

	if (install(etbl, NVTX_CB_MODULE_CORE, core, NVTX_CBID_CORE_SIZE) < 0 ||
	    install(etbl, NVTX_CB_MODULE_CORE2, core2, NVTX_CBID_CORE2_SIZE) < 0)
		return 0;
	gt_debug("NVTX handlers installed");
	return 1;
}

/* Installed by InitializeInjectionNvtx2, not through CUPTI: only the flush hook is the
 * table's. */
const struct gt_collector gt_collector_nvtx = {
        .name = "nvtx",
        .trace_bit = GT_TRACE_NVTX,
        .flush = nvtx_flush,
};
