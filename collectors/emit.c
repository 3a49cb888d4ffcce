/* Writing records from inside the traced application: into the process's ring, waiting for
 * space (our threads and CUPTI's) or never (application threads); string interning; the
 * calling thread's id; the callbacks' re-entrancy guard; debug output.
 * Runs inside the traced application, on every thread that records something. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "client.h"
#include "clock.h"
#include "collector.h"
#include "emit.h"
#include "ring.h"

/* Per-thread state of the callbacks. Lives as long as the thread. */
struct gt_thread_state {
	uint32_t tid;    /* kernel tid; 0 until the thread first records something */
	int in_callback; /* re-entrancy guard */
};
static _Thread_local struct gt_thread_state tls;

void gt_debug(const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int n;

	if (!gt_inj.cfg.debug)
		return;
	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	/* one write, so lines from several threads don't interleave */
	dprintf(STDERR_FILENO, "gputrace[%d]: %s\n", (int)getpid(), line);
}

void gt_emit_wait(struct gt_rec_hdr *rec)
{
	if (!atomic_load_explicit(&gt_inj.active, memory_order_relaxed))
		return;
	gt_ring_write(gt_inj.ring, rec, GT_RING_WAIT);
}

void gt_emit_nowait(struct gt_rec_hdr *rec)
{
	if (!atomic_load_explicit(&gt_inj.active, memory_order_relaxed))
		return;
	gt_ring_write(gt_inj.ring, rec, 0);
}

void gt_emit_batch(const struct gt_rec_hdr *first, size_t bytes, unsigned n)
{
	if (!atomic_load_explicit(&gt_inj.active, memory_order_relaxed))
		return;
	gt_ring_write_batch(gt_inj.ring, first, bytes, n, 0);
}

void gt_emit_loss_wait(unsigned source, uint64_t count, unsigned kind)
{
	struct gt_rec_loss r = {0};

	gt_hdr(&r.hdr, GT_REC_LOSS, sizeof(r));
	r.ts_ns = gt_now_ns();
	r.count = count;
	r.source = source;
	r.kind = kind;
	gt_emit_wait(&r.hdr);
}

void gt_notice_fill(struct gt_rec_notice *r, unsigned severity, unsigned code, int detail,
                    const char *message)
{
	memset(r, 0, sizeof(*r));
	gt_hdr(&r->hdr, GT_REC_NOTICE, sizeof(*r));
	r->ts_ns = gt_now_ns();
	r->severity = severity;
	r->code = code;
	r->detail = detail;
	r->message_id = gt_intern(message);
}

uint32_t gt_intern_len(const char *s, size_t len)
{
	if (!s || !atomic_load_explicit(&gt_inj.active, memory_order_relaxed))
		return GT_STRING_NONE;
	if (len > GT_STRING_MAX)
		len = GT_STRING_MAX;
	return gt_client_intern(gt_inj.client, s, len);
}

uint32_t gt_intern(const char *s)
{
	return s ? gt_intern_len(s, strnlen(s, GT_STRING_MAX)) : GT_STRING_NONE;
}

bool gt_guard_enter(void)
{
	if (tls.in_callback)
		return false;
	tls.in_callback = 1;
	return true;
}

void gt_guard_leave(void)
{
	tls.in_callback = 0;
}

uint32_t gt_thread_id(void)
{
	char name[17] = {0};

	if (tls.tid)
		return tls.tid;
	tls.tid = (uint32_t)syscall(SYS_gettid);
	/* once per thread: its name as the application set it (prctl: no /proc access needed);
	 * a name the thread sets later is recorded by the rescan */
	if (prctl(PR_GET_NAME, name, 0, 0, 0) != 0)
		name[0] = '\0';
	gt_meta_thread_named(tls.tid, name);
	return tls.tid;
}
