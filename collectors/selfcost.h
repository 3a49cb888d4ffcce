/* gputrace's own work inside the traced process: CUPTI's buffers handled, by thread, and the
 * periodic flushes (selfcost.c). Runs inside the traced application. */
#ifndef GPUTRACE_COLLECTORS_SELFCOST_H
#define GPUTRACE_COLLECTORS_SELFCOST_H

#include <stddef.h>
#include <stdint.h>

/* One completed buffer of `records` records handled from start_ns to end_ns (CLOCK_MONOTONIC)
 * on the calling thread. */
void gt_self_buffer(uint64_t start_ns, uint64_t end_ns, uint64_t records);
/* One periodic flush of the flush thread, buffers handled inside it included. */
void gt_self_flush(uint64_t start_ns, uint64_t end_ns);
/* The notice's text into buf (empty when no CUPTI buffer was handled); returns the nanoseconds
 * spent handling buffers. */
uint64_t gt_self_report(char *buf, size_t size);

#endif
