/* What the timeline formats call things, written once for both: copies and memsets
 * ("Memcpy HtoD (Pageable -> Device)", "Memset (Device)"), synchronization waits, CUPTI
 * overhead, notice severities, processes ("python3 (rank 1)") and GPUs ("GPU 0"). Lanes are
 * named in lanes.h. Runs in the CLI. */
#ifndef GPUTRACE_EXPORTERS_LABELS_H
#define GPUTRACE_EXPORTERS_LABELS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct gt_timeline;
struct gt_timeline_proc;
struct gt_timeline_gpu;

/* Bytes a copy or memset label needs at most. */
#define GT_LABELS_COPY_MAX 128u

/* "Memcpy HtoD (Pageable -> Device)", as Kineto names copies, at p; returns the end. */
char *gt_labels_memcpy(char *p, unsigned copy_kind, unsigned src_kind, unsigned dst_kind);

/* "Memset (Device)" at p; returns the end. */
char *gt_labels_memset(char *p, unsigned mem_kind);

/* "Stream Synchronize", ...; an unknown kind is "Synchronize". */
const char *gt_labels_sync(unsigned kind);

/* "CUPTI overhead: buffer flush", ...; an unknown kind is "CUPTI overhead". */
const char *gt_labels_overhead(unsigned kind);

/* "info", "warning", "error", or "unknown". */
const char *gt_labels_severity(unsigned severity);

/* Bytes a process name needs at most (gt_labels_process), and of it a merged process's host. */
#define GT_LABELS_PROCESS_MAX 1200u
#define GT_LABELS_HOST_MAX    64u

/* A traced process's name: the base name of its executable ("process" while unknown), with
 * " (rank R)" when its rank is known and, for a merged trace's process, " on HOST" and its
 * pid in its input when the merge gave it another (", pid P"), as the timeline's name cache
 * holds names (JSON-escaped
 * for chrome: json then cuts only between escapes). Writes at most GT_LABELS_PROCESS_MAX
 * bytes at buf; returns the end. */
char *gt_labels_process(struct gt_timeline *m, const struct gt_timeline_proc *p, char *buf,
                        bool json);

/* "GPU n" at p (at most 24 bytes); returns the end. */
char *gt_labels_gpu(char *p, const struct gt_timeline_gpu *g);

#endif /* GPUTRACE_EXPORTERS_LABELS_H */
