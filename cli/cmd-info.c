/* gputrace info: what a trace file holds, read in one streaming pass: its header, the traced
 * processes and how they ended, the devices, record counts per kind, every loss, the time
 * span, and whether the file had to be recovered. Runs in the CLI process. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../exporters/text.h"
#include "cli.h"
#include "gputrace/record.h"
#include "gputrace/trace.h"

/* At most this many processes and devices are listed one per line; the rest are counted. */
#define LIST_MAX  64u
#define NOTES_MAX 16u

struct proc {
	struct gt_rec_process rec;
	struct gt_rec_process_end end;
	bool have_end;
};

struct info {
	struct proc *procs; /* in the order their PROCESS records came; owned */
	size_t nprocs, cap_procs;
	struct gt_rec_device devs[LIST_MAX];
	size_t ndevs, more_devs;
	uint64_t counts[GT_REC_MAX];
	uint64_t records;
	uint64_t losses[GT_LOSS_SOURCE_MAX]; /* sum of LOSS records' counts by source */
	uint64_t losses_other;               /* LOSS records with a source we do not know */
	uint64_t first_ts_ns, last_ts_ns;
	/* the distinct CUPTI versions the processes reported loading (GT_NOTICE_CUPTI_LOADED),
	 * for traces whose header does not name one (gputrace run writes it before any CUDA) */
	int32_t cupti[LIST_MAX];
	size_t ncupti, more_cupti;
	/* warnings and errors from NOTICE records, text copied when read */
	struct {
		uint32_t pid;
		char text[240];
	} notes[NOTES_MAX];
	size_t nnotes, more_notes;
	/* process-end records seen before their process record (ordering is not guaranteed) */
	struct gt_rec_process_end *early_ends;
	size_t nearly, cap_early;
};

/* Whether windows of the trace can seek (docs/format.md, "Footer"). */
static void print_index(struct gt_reader *r)
{
	const struct gt_trace_counts *fc = gt_reader_footer_counts(r);
	struct gt_chunk_info ci;

	if (!fc)
		printf("index:       none (windows read the whole file; "
		       "gputrace info --reindex makes one)\n");
	else if (gt_reader_chunk_info(r, 0, &ci) == 1 && !ci.have_types)
		printf("index:       %" PRIu64 " chunks, without their record types "
		       "(windows read the whole file; gputrace info --reindex adds them)\n",
		       fc->chunks);
	else
		printf("index:       %" PRIu64 " chunk%s, with their record types\n", fc->chunks,
		       fc->chunks == 1 ? "" : "s");
}

/* gputrace info --reindex FILE. */
static int reindex(const char *path)
{
	struct gt_reindex_result res;
	const char *errmsg = NULL;
	int ret = gt_trace_reindex(path, &res, &errmsg);

	if (ret < 0) {
		gt_cli_error("%s: %s", path, errmsg ? errmsg : strerror(-ret));
		if (ret == -ENOENT)
			return GT_EXIT_NO_INPUT;
		return ret == -EINVAL || ret == -EPROTO || ret == -EPROTONOSUPPORT
		               ? GT_EXIT_BAD_TRACE
		               : GT_EXIT_IO;
	}
	printf("%s: reindexed: %" PRIu64 " records in %" PRIu64 " chunks, %" PRIu64 " -> %" PRIu64
	       " bytes (it had %s)\n",
	       path, res.records, res.chunks, res.bytes_before, res.bytes_after,
	       !res.had_index   ? "no index: recovered"
	       : !res.had_types ? "an index without chunk types"
	                        : "an index with chunk types");
	if (res.chunks_skipped)
		printf("%s: %" PRIu64 " damaged chunk%s could not be read and %s left out\n", path,
		       res.chunks_skipped, res.chunks_skipped == 1 ? "" : "s",
		       res.chunks_skipped == 1 ? "is" : "are");
	if (res.records_dropped)
		printf("%s: %" PRIu64 " malformed records left out\n", path, res.records_dropped);
	return fflush(stdout) == 0 ? GT_EXIT_OK : GT_EXIT_IO;
}

static void usage(FILE *out)
{
	fputs("Usage: gputrace info [options] FILE\n"
	      "\n"
	      "Show what a trace holds: its header (format, clock, host, start time, command\n"
	      "line, versions), the traced processes and how they ended, the devices, record\n"
	      "counts per kind, every loss counter, the time span, and whether the file was\n"
	      "recovered (a trace whose writer was killed has no footer; its complete chunks\n"
	      "are still read).\n"
	      "\n"
	      "Options:\n"
	      "      --reindex  write the trace again with a complete index (chunk offsets, "
	      "time\n"
	      "                 ranges and record types), so that windows of it (export "
	      "--from,\n"
	      "                 --nvtx) read only the chunks they need: for traces cut short "
	      "and\n"
	      "                 traces from before chunk types; crash-safe (a new file renamed "
	      "over\n"
	      "                 the old)\n"
	      "  -h, --help     show this help\n"
	      "\n"
	      "Exit status: 0, 64 usage error, 65 unreadable trace, 66 no such file.\n",
	      out);
}

static int grow(void **arr, size_t *cap, size_t n, size_t elem)
{
	void *p;
	size_t c;

	if (n < *cap)
		return 0;
	c = *cap ? *cap * 2 : 16;
	p = realloc(*arr, c * elem);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = c;
	return 0;
}

static struct proc *find_proc(struct info *in, uint32_t pid)
{
	/* newest first: a pid reused later in the trace is a new process */
	for (size_t i = in->nprocs; i-- > 0;)
		if (in->procs[i].rec.hdr.pid == pid)
			return &in->procs[i];
	return NULL;
}

static void track_times(struct info *in, const union gt_record *rec)
{
	const struct gt_record_desc *d = gt_record_desc(rec->hdr.type);

	for (unsigned i = 0; d && i < d->nfields; i++) {
		uint64_t v;

		if (!(d->fields[i].flags & GT_FIELD_TIME))
			continue;
		memcpy(&v, (const uint8_t *)rec + d->fields[i].offset, sizeof(v));
		/* zero means "not set" */
		if (v && v < in->first_ts_ns)
			in->first_ts_ns = v;
		if (v > in->last_ts_ns)
			in->last_ts_ns = v;
	}
}

static int add_record(struct info *in, struct gt_reader *rd, const union gt_record *rec)
{
	struct proc *p;
	int r;

	in->records++;
	in->counts[rec->hdr.type]++;
	track_times(in, rec);
	switch (rec->hdr.type) {
	case GT_REC_PROCESS:
		r = grow((void **)&in->procs, &in->cap_procs, in->nprocs, sizeof(*in->procs));
		if (r < 0)
			return r;
		p = &in->procs[in->nprocs++];
		memset(p, 0, sizeof(*p));
		p->rec = rec->process;
		for (size_t i = 0; i < in->nearly; i++) {
			if (in->early_ends[i].hdr.pid == rec->hdr.pid) {
				p->end = in->early_ends[i];
				p->have_end = true;
				in->early_ends[i] = in->early_ends[--in->nearly];
				break;
			}
		}
		break;
	case GT_REC_PROCESS_END:
		p = find_proc(in, rec->hdr.pid);
		if (p && !p->have_end) {
			p->end = rec->process_end;
			p->have_end = true;
			break;
		}
		r = grow((void **)&in->early_ends, &in->cap_early, in->nearly,
		         sizeof(*in->early_ends));
		if (r < 0)
			return r;
		in->early_ends[in->nearly++] = rec->process_end;
		break;
	case GT_REC_DEVICE:
		/* several processes see the same GPU: one line per uuid */
		for (size_t i = 0; i < in->ndevs; i++)
			if (memcmp(in->devs[i].uuid, rec->device.uuid, 16) == 0)
				return 0;
		if (in->ndevs < LIST_MAX)
			in->devs[in->ndevs++] = rec->device;
		else
			in->more_devs++;
		break;
	case GT_REC_NOTICE:
		if (rec->notice.code == GT_NOTICE_CUPTI_LOADED && rec->notice.detail > 0) {
			size_t i = 0;

			while (i < in->ncupti && in->cupti[i] != rec->notice.detail)
				i++;
			if (i == in->ncupti && in->ncupti < LIST_MAX)
				in->cupti[in->ncupti++] = rec->notice.detail;
			else if (i == in->ncupti)
				in->more_cupti++;
		}
		if (rec->notice.severity < GT_NOTICE_WARNING)
			break;
		if (in->nnotes == NOTES_MAX) {
			in->more_notes++;
			break;
		}
		{
			const char *text = gt_reader_string(rd, rec->notice.message_id, NULL);

			in->notes[in->nnotes].pid = rec->hdr.pid;
			snprintf(in->notes[in->nnotes].text, sizeof(in->notes[0].text), "%s",
			         text ? text : "(message lost)");
			in->nnotes++;
		}
		break;
	case GT_REC_LOSS:
		if (rec->loss.source < GT_LOSS_SOURCE_MAX)
			in->losses[rec->loss.source] += rec->loss.count;
		else
			in->losses_other += rec->loss.count;
		break;
	default:
		break;
	}
	return 0;
}

static const char *str_or(const struct gt_reader *r, uint32_t id, const char *dflt)
{
	const char *s = gt_reader_string(r, id, NULL);

	return s && *s ? s : dflt;
}

static const char *clock_name(uint32_t id)
{
	switch (id) {
	case GT_CLOCK_MONOTONIC:
		return "CLOCK_MONOTONIC";
	case GT_CLOCK_MONOTONIC_RAW:
		return "CLOCK_MONOTONIC_RAW";
	case GT_CLOCK_REALTIME:
		return "CLOCK_REALTIME";
	default:
		return "unknown";
	}
}

/* "2024-05-01T12:00:00.123456789Z", or "unknown" for 0. */
static void iso_time(uint64_t ns, char *buf, size_t size)
{
	time_t sec = (time_t)(ns / 1000000000u);
	struct tm tm;

	if (!ns || !gmtime_r(&sec, &tm)) {
		snprintf(buf, size, "unknown");
		return;
	}
	snprintf(buf, size, "%04d-%02d-%02dT%02d:%02d:%02d.%09uZ", tm.tm_year + 1900, tm.tm_mon + 1,
	         tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (unsigned)(ns % 1000000000u));
}

static const char *or_unknown(const char *s)
{
	return s && *s ? s : "unknown";
}

static void print_end(const struct proc *p)
{
	if (!p->have_end) {
		printf("no end recorded");
		return;
	}
	switch (p->end.how) {
	case GT_END_EXIT:
		printf("exited with status %d", p->end.code);
		break;
	case GT_END_SIGNAL: {
		const char *name =
		        p->end.code > 0 && p->end.code < NSIG ? sigabbrev_np(p->end.code) : NULL;

		if (name)
			printf("killed by signal %d (SIG%s)", p->end.code, name);
		else
			printf("killed by signal %d", p->end.code);
		break;
	}
	case GT_END_DETACHED:
		printf("detached (ran on untraced)");
		break;
	default:
		printf("ended, status unknown");
		break;
	}
}

static void print_info(const char *path, struct gt_reader *r, const struct info *in)
{
	const struct gt_trace_header *h = gt_reader_header(r);
	const struct gt_reader_status *st = gt_reader_status(r);
	char when[64];
	uint64_t total_loss = in->losses_other; /* records the producers reported lost */

	iso_time(h->info.start_realtime_ns, when, sizeof(when));
	printf("file:        %s\n", path);
	printf("format:      %" PRIu32 "\n", h->version);
	printf("clock:       %s\n", clock_name(h->info.clock_id));
	printf("host:        %s\n", or_unknown(h->info.hostname));
	printf("started:     %s\n", when);
	printf("command:     %s\n", or_unknown(h->info.cmdline));
	printf("versions:    gputrace %s, CUDA %s, CUPTI ", or_unknown(h->info.tool_version),
	       or_unknown(h->info.cuda_version));
	if ((!h->info.cupti_version || !h->info.cupti_version[0]) && in->ncupti) {
		/* what the processes loaded, in the order they said so */
		for (size_t i = 0; i < in->ncupti; i++)
			printf("%s%" PRId32, i ? " and " : "", in->cupti[i]);
		if (in->more_cupti)
			printf(" and %zu more", in->more_cupti);
	} else {
		printf("%s", or_unknown(h->info.cupti_version));
	}
	printf(", driver %s\n", or_unknown(h->info.driver_version));

	printf("processes:   %zu\n", in->nprocs);
	for (size_t i = 0; i < in->nprocs && i < LIST_MAX; i++) {
		const struct proc *p = &in->procs[i];

		printf("  pid %" PRIu32 ": %s, ppid %" PRIu32, p->rec.hdr.pid,
		       str_or(r, p->rec.exe_id, "?"), p->rec.ppid);
		if (p->rec.rank >= 0)
			printf(", rank %" PRId32, p->rec.rank);
		printf(", ");
		print_end(p);
		printf("\n");
	}
	if (in->nprocs > LIST_MAX)
		printf("  ... and %zu more\n", in->nprocs - LIST_MAX);

	printf("devices:     %zu\n", in->ndevs + in->more_devs);
	for (size_t i = 0; i < in->ndevs; i++) {
		const struct gt_rec_device *d = &in->devs[i];

		char mem[32];

		printf("  device %" PRIu32 ": %s, %" PRIu32 " SMs, %s, compute capability %" PRIu32
		       ".%" PRIu32 "\n",
		       d->device_id, str_or(r, d->name_id, "?"), d->sm_count,
		       gt_fmt_bytes((double)d->global_mem_bytes, mem, sizeof(mem)), d->cc_major,
		       d->cc_minor);
	}
	if (in->more_devs)
		printf("  ... and %zu more\n", in->more_devs);

	printf("records:     %" PRIu64 "\n", in->records);
	for (unsigned t = 1; t < GT_REC_MAX; t++)
		if (in->counts[t])
			printf("  %-12s %" PRIu64 "\n", gt_record_name(t), in->counts[t]);

	for (unsigned s = 0; s < GT_LOSS_SOURCE_MAX; s++)
		total_loss += in->losses[s];
	if (!total_loss && !st->chunks_skipped && !st->bytes_skipped && !st->records_skipped) {
		printf("losses:      none\n");
	} else {
		printf("losses:\n");
		for (unsigned s = 0; s < GT_LOSS_SOURCE_MAX; s++)
			if (in->losses[s])
				printf("  %-16s %" PRIu64 "\n", gt_loss_source_name(s),
				       in->losses[s]);
		if (in->losses_other)
			printf("  %-16s %" PRIu64 "\n", "other", in->losses_other);
		if (st->chunks_skipped || st->bytes_skipped)
			printf("  %-16s %" PRIu64 " chunk%s, %" PRIu64 " bytes unreadable\n",
			       "damaged file", st->chunks_skipped,
			       st->chunks_skipped == 1 ? "" : "s", st->bytes_skipped);
		if (st->records_skipped)
			printf("  %-16s %" PRIu64 " records of unknown kinds or malformed\n",
			       "skipped", st->records_skipped);
	}

	if (in->nnotes) {
		printf("notices:\n");
		for (size_t i = 0; i < in->nnotes; i++)
			printf("  pid %u: %s\n", in->notes[i].pid, in->notes[i].text);
		if (in->more_notes)
			printf("  ... and %zu more\n", in->more_notes);
	}

	if (in->last_ts_ns) {
		uint64_t span = in->last_ts_ns - in->first_ts_ns;

		printf("time span:   %" PRIu64 ".%09" PRIu64 " s (%" PRIu64 " .. %" PRIu64 " ns)\n",
		       span / 1000000000u, span % 1000000000u, in->first_ts_ns, in->last_ts_ns);
	} else {
		printf("time span:   none (no timestamps)\n");
	}
	if (st->recovered)
		printf("recovered:   yes (%" PRIu64 " chunks read, %" PRIu64 " skipped, %" PRIu64
		       " bytes)\n",
		       st->chunks_read, st->chunks_skipped, st->bytes_skipped);
	else
		printf("recovered:   no\n");
	print_index(r);
}

int cmd_info(int argc, char **argv)
{
	static const struct option longopts[] = {
	        {"help", no_argument, NULL, 'h'},
	        {"reindex", no_argument, NULL, 'R'},
	        {NULL, 0, NULL, 0},
	};
	struct info in = {.first_ts_ns = UINT64_MAX};
	bool do_reindex = false;
	struct gt_reader *r = NULL;
	const union gt_record *rec;
	const char *path, *errmsg = NULL;
	int c, ret, status;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
		switch (c) {
		case 'h':
			usage(stdout);
			return GT_EXIT_OK;
		case 'R':
			do_reindex = true;
			break;
		default:
			gt_cli_error("info: unknown option '%s'; see 'gputrace info --help'",
			             argv[optind - 1]);
			return GT_EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		gt_cli_error("info: which trace? usage: gputrace info FILE");
		return GT_EXIT_USAGE;
	}
	if (optind + 1 < argc) {
		gt_cli_error("info: unexpected argument '%s'; it takes one trace file",
		             argv[optind + 1]);
		return GT_EXIT_USAGE;
	}
	path = argv[optind];
	if (do_reindex)
		return reindex(path);
	ret = gt_reader_open(path, &r, &errmsg);
	if (ret < 0) {
		gt_cli_error("%s: %s", path, errmsg ? errmsg : strerror(-ret));
		return ret == -ENOENT ? GT_EXIT_NO_INPUT : GT_EXIT_BAD_TRACE;
	}
	while ((ret = gt_reader_next(r, &rec)) == 1) {
		ret = add_record(&in, r, rec);
		if (ret < 0)
			break;
	}
	if (ret < 0) {
		gt_cli_error("%s: %s", path, ret == -ENOMEM ? "out of memory" : strerror(-ret));
		status = GT_EXIT_BAD_TRACE;
		goto out;
	}
	print_info(path, r, &in);
	status = fflush(stdout) == 0 ? GT_EXIT_OK : GT_EXIT_IO;
out:
	gt_reader_close(r);
	free(in.procs);
	free(in.early_ends);
	return status;
}
