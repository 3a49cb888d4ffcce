/* Perfetto exporter: native protobuf TrackEvent (a Trace message: repeated TracePacket),
 * one packet sequence with interned names, track descriptors for processes, threads, GPUs
 * and streams, flows and memory counters. Streams with flat memory. Runs in the CLI.
 * Layout: docs/exporters.md. Field numbers are those of Perfetto's public protos. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stacks.h"
#include "torchops.h"
#include "exporter.h"
#include "labels.h"
#include "outbuf.h"
#include "hash.h"
#include "protobuf.h"
#include "steps.h"
#include "text.h"
#include "timeline.h"

/* Perfetto proto field numbers (protos/perfetto/trace/...). */
enum {
	TRACE_PACKET = 1, /* Trace.packet */

	PKT_TIMESTAMP = 8,
	PKT_SEQ_ID = 10, /* trusted_packet_sequence_id */
	PKT_TRACK_EVENT = 11,
	PKT_INTERNED = 12,
	PKT_SEQ_FLAGS = 13,
	PKT_TRACK_DESC = 60,
	PKT_CLOCK_SNAPSHOT = 6,
	PKT_TIMESTAMP_CLOCK_ID = 58,
	PKT_DEFAULTS = 59,
	PKT_TRACE_UUID = 89, /* TraceUuid: trace_processor's metadata.trace_uuid */
	PKT_CHROME_EVENTS = 5, /* ChromeEventBundle: its metadata, trace_processor's metadata */

	CEB_METADATA = 2, /* ChromeEventBundle.metadata: ChromeMetadata */
	CM_NAME = 1,
	CM_STRING_VALUE = 2,
	CM_INT_VALUE = 4,
	UUID_MSB = 1,
	UUID_LSB = 2,

	DEFAULTS_TIMESTAMP_CLOCK_ID = 58, /* TracePacketDefaults */
	SNAPSHOT_CLOCKS = 1,              /* ClockSnapshot */
	CLOCK_ID = 1,                     /* ClockSnapshot.Clock */
	CLOCK_TIMESTAMP = 2,
	BUILTIN_CLOCK_REALTIME = 1,
	BUILTIN_CLOCK_MONOTONIC = 3,
	BUILTIN_CLOCK_MONOTONIC_RAW = 5,
	BUILTIN_CLOCK_BOOTTIME = 6,
	/* Our sequence-scoped clock (ids 64..127 are): trace time minus the base, so
	 * timestamps take 4-5 bytes instead of 7-8. */
	CLOCK_RELATIVE = 64,

	SEQ_INCREMENTAL_STATE_CLEARED = 1,
	SEQ_NEEDS_INCREMENTAL_STATE = 2,

	TE_CATEGORY_IIDS = 3,
	TE_DEBUG_ANNOTATIONS = 4,
	TE_TYPE = 9,
	TE_NAME_IID = 10,
	TE_TRACK_UUID = 11,
	TE_NAME = 23,
	TE_COUNTER_VALUE = 30,
	TE_DOUBLE_COUNTER_VALUE = 44,
	TE_FLOW_IDS = 47,             /* fixed64 */
	TE_TERMINATING_FLOW_IDS = 48, /* fixed64 */

	TYPE_SLICE_BEGIN = 1,
	TYPE_SLICE_END = 2,
	TYPE_INSTANT = 3,
	TYPE_COUNTER = 4,

	TD_UUID = 1,
	TD_NAME = 2,
	TD_PROCESS = 3,
	TD_THREAD = 4,
	TD_PARENT_UUID = 5,
	TD_COUNTER = 8,

	PD_PID = 1,
	PD_CMDLINE = 2,
	PD_PROCESS_NAME = 6,
	PD_PROCESS_LABELS = 8,

	THD_PID = 1,
	THD_TID = 2,
	THD_THREAD_NAME = 5,

	CD_UNIT = 3,
	UNIT_SIZE_BYTES = 3,

	ID_EVENT_CATEGORIES = 1,
	ID_EVENT_NAMES = 2,
	ID_DEBUG_ANNOTATION_NAMES = 3,
	ID_DEBUG_ANNOTATION_STRING_VALUES = 29,
	INTERNED_IID = 1,
	INTERNED_NAME = 2,

	DA_NAME_IID = 1,
	DA_UINT = 3,
	DA_INT = 4,
	DA_DOUBLE = 5,
	DA_STRING = 6,
	DA_STRING_IID = 17,
};

#define SEQ_ID 1u

/* Interned categories (iid = index + 1). */
enum cat {
	CAT_RUNTIME = 1,
	CAT_DRIVER,
	CAT_KERNEL,
	CAT_MEMCPY,
	CAT_MEMSET,
	CAT_ANNOTATION,
	CAT_SYNC,
	CAT_GRAPH,
	CAT_OVERHEAD,
	CAT_LOSS,
	CAT_NOTICE,
	CAT_PROCESS,
	CAT_MEMORY_POOL,
	CAT_TRACE,
	CAT_PYTHON,
	CAT_CPU_OP,
};
static const char *const cat_names[] = {
        "cuda_runtime",    "cuda_driver", "kernel",      "gpu_memcpy", "gpu_memset",
        "user_annotation", "cuda_sync",   "cuda_graph",  "overhead",   "loss",
        "notice",          "process",     "memory_pool", "trace",      "python_function",
        "cpu_op",
};

/* Interned debug annotation names (iid = index + 1), the same keys as the chrome args. */
enum ann {
	A_DEVICE = 1,
	A_CONTEXT,
	A_STREAM,
	A_CORRELATION,
	A_GRID,
	A_BLOCK,
	A_REGISTERS,
	A_SMEM,
	A_STATIC_SMEM,
	A_DYNAMIC_SMEM,
	A_LOCAL_MEM,
	A_BYTES,
	A_KIND,
	A_BANDWIDTH,
	A_VALUE,
	A_CBID,
	A_RETURN_CODE,
	A_DOMAIN,
	A_COLOR,
	A_CATEGORY,
	A_EVENT,
	A_GRAPH_ID,
	A_GRAPH_NODE_ID,
	A_COUNT,
	A_SOURCE,
	A_CODE,
	A_DETAIL,
	A_SEVERITY,
	A_START_TID,
	A_END_TID,
	A_SRC_DEVICE,
	A_DST_DEVICE,
	A_CLUSTER,
	A_HOW,
	A_ADDRESS,
	A_RESERVED,
	A_RELEASE_THRESHOLD,
	A_POOL_TYPE,
	A_NVTX_MESSAGE,
	A_DATE,
	A_TRACE_CLOCK,
	A_RECORDS,
	A_MALFORMED,
	A_STACK,
	A_INPUT_DIMS,
	A_SEQUENCE,
	A_OP_ID,
};
static const char *const ann_names[] = {
        "device",
        "context",
        "stream",
        "correlation",
        "grid",
        "block",
        "registers per thread",
        "shared memory",
        "static shared memory",
        "dynamic shared memory",
        "local memory per thread",
        "bytes",
        "kind",
        "memory bandwidth (GB/s)",
        "value",
        "cbid",
        "return code",
        "domain",
        "color",
        "category",
        "event",
        "graph id",
        "graph node id",
        "count",
        "source",
        "code",
        "detail",
        "severity",
        "start tid",
        "end tid",
        "src device",
        "dst device",
        "cluster",
        "how",
        "address",
        "reserved bytes",
        "release threshold bytes",
        "pool type",
        "nvtx message",
        "date",
        "trace clock ns",
        "records",
        "malformed records",
        "stack",
        "input dims",
        "sequence number",
        "record function id",
};

/* Keys of exporter-made names in the model's name cache (string ids are below 2^32). */
#define KEY_MEMCPY   (1ull << 40)
#define KEY_MEMSET   (2ull << 40)
#define KEY_SYNC     (3ull << 40)
#define KEY_OVERHEAD (4ull << 40)
#define KEY_GRAPH    (5ull << 40)
#define KEY_END      (6ull << 40)
#define KEY_STEP     (7ull << 40) /* with gt_names_key2: a step's number, then this */
#define KEY_OP       (8ull << 40) /* | an operator's NVTX message id: its name */
/* Arrows from an operator to its launches' GPU work, at most this many per operator (each
 * is a flow id on the operator's slice) */
#define OP_FLOWS_MAX 8192u

struct pf {
	struct gt_timeline m;
	struct gt_outbuf out;
	struct gt_reader *r;
	uint64_t base_ns; /* trace time of CLOCK_RELATIVE's zero: the trace's zero */
	/* the whole trace's zero, span and wall clock (gt_reader_times) */
	struct gt_trace_times times;
	/* the header's clock as Perfetto's builtin id; 0: none to name */
	uint32_t trace_clock;
	uint64_t next_uuid;
	uint64_t events;
	uint64_t counters; /* of the events, counter values */
	const struct gt_steps *steps; /* NVTX ranges to name ProfilerStep#N; NULL: none */
	uint64_t trace_track;         /* the track of "trace start" (and of the damage) */
	uint64_t steps_written;
	struct gt_stacks *stacks; /* the trace's call stacks; NULL when it has none */
	struct gt_torchops *ops;  /* the trace's PyTorch operators; NULL when it has none */
	char stack_text[8192];    /* the text of the stack being written (stack_text()) */
	const char *errmsg;
	struct {
		uint32_t x, y, z, iid;
	} dim_cache[16];
};

static char errbuf[512];

/* ------------------------------------------------------------------------------------ */
/* Packets                                                                                */

/* Reserve room and open a TracePacket; every packet is on our one sequence. */
static char *pkt_open(struct pf *f, size_t need, char **mark)
{
	char *p = gt_outbuf_space(&f->out, need + 64);

	p = gt_pb_open(p, TRACE_PACKET, mark);
	return gt_pb_uint(p, PKT_SEQ_ID, SEQ_ID);
}

static void pkt_close(struct pf *f, char *p, char *mark)
{
	gt_outbuf_commit(&f->out, gt_pb_close(p, mark));
}

/* A debug annotation with an unsigned value: always shorter than 128 bytes. */
static char *ann_u64(char *p, enum ann a, uint64_t v)
{
	char *m;

	p = gt_pb_open(p, TE_DEBUG_ANNOTATIONS, &m);
	p = gt_pb_uint(p, DA_NAME_IID, a);
	p = gt_pb_uint(p, DA_UINT, v);
	*m = (char)(p - m - 1);
	return p;
}

static char *ann_i64(char *p, enum ann a, int64_t v)
{
	char *m;

	p = gt_pb_open(p, TE_DEBUG_ANNOTATIONS, &m);
	p = gt_pb_uint(p, DA_NAME_IID, a);
	p = gt_pb_int(p, DA_INT, v);
	*m = (char)(p - m - 1);
	return p;
}

static char *ann_double(char *p, enum ann a, double v)
{
	char *m;

	p = gt_pb_open(p, TE_DEBUG_ANNOTATIONS, &m);
	p = gt_pb_uint(p, DA_NAME_IID, a);
	p = gt_pb_double(p, DA_DOUBLE, v);
	*m = (char)(p - m - 1);
	return p;
}

static char *ann_str(char *p, enum ann a, const char *s, size_t len)
{
	char *m;

	p = gt_pb_open(p, TE_DEBUG_ANNOTATIONS, &m);
	p = gt_pb_uint(p, DA_NAME_IID, a);
	p = gt_pb_bytes(p, DA_STRING, s, len);
	return gt_pb_close(p, m);
}

/* An annotation whose string value is interned (iid from intern_val). */
static char *ann_str_iid(char *p, enum ann a, uint32_t iid)
{
	char *m;

	p = gt_pb_open(p, TE_DEBUG_ANNOTATIONS, &m);
	p = gt_pb_uint(p, DA_NAME_IID, a);
	p = gt_pb_uint(p, DA_STRING_IID, iid);
	*m = (char)(p - m - 1);
	return p;
}

/* A packet's timestamp: relative to the base, or absolute on the default clock for the
 * rare record older than the base (a file without footer). */
static char *put_ts(const struct pf *f, char *p, uint64_t ts)
{
	if (ts >= f->base_ns)
		return gt_pb_uint(p, PKT_TIMESTAMP, ts - f->base_ns + 1);
	p = gt_pb_uint(p, PKT_TIMESTAMP_CLOCK_ID, BUILTIN_CLOCK_BOOTTIME);
	return gt_pb_uint(p, PKT_TIMESTAMP, ts);
}

/* The trace's uuid from what the export is of (opts->identity): the first packet of the file
 * and, written again once everything else is, its last; gt_perfetto_is_export_of looks for
 * both, so a file cut short is no export of anything. Perfetto's importer takes the second as
 * the same trace_uuid (trace_processor_shell: no error, the same slices). */
static void uuid_of(const char *identity, uint64_t *msb, uint64_t *lsb)
{
	size_t len = strlen(identity);

	*msb = gt_hash_fmix64(gt_hash_fnv1a(GT_HASH_FNV_OFFSET, identity, len));
	*lsb = gt_hash_fmix64(gt_hash_fnv1a(*msb, identity, len));
}

static void write_uuid_packet(struct pf *f, const char *identity)
{
	uint64_t msb, lsb;
	char *p, *pm, *um;

	uuid_of(identity, &msb, &lsb);
	p = gt_outbuf_space(&f->out, 64);
	p = gt_pb_open(p, TRACE_PACKET, &pm);
	p = gt_pb_open(p, PKT_TRACE_UUID, &um);
	p = gt_pb_uint(p, UUID_MSB, msb);
	p = gt_pb_uint(p, UUID_LSB, lsb);
	p = gt_pb_close(p, um);
	gt_outbuf_commit(&f->out, gt_pb_close(p, pm));
}

/* A varint at p (at most end); NULL when it does not fit. */
static const unsigned char *get_varint(const unsigned char *p, const unsigned char *end,
                                       uint64_t *v)
{
	*v = 0;
	for (unsigned shift = 0; p < end && shift < 64; shift += 7, p++) {
		*v |= (uint64_t)(*p & 0x7f) << shift;
		if (!(*p & 0x80))
			return p + 1;
	}
	return NULL;
}

/* Whether the file at path, longer than twice its first packet (head[0..n)), ends with that
 * packet again: it was written to its end. */
static bool ends_with_packet(const char *path, const unsigned char *head, size_t n)
{
	unsigned char tail[64];
	FILE *fp = fopen(path, "rb");
	bool same;

	if (!fp)
		return false;
	same = n <= sizeof(tail) && fseeko(fp, 0, SEEK_END) == 0 && ftello(fp) > (off_t)(2 * n) &&
	       fseeko(fp, -(off_t)n, SEEK_END) == 0 && fread(tail, 1, n, fp) == n &&
	       memcmp(tail, head, n) == 0;
	fclose(fp);
	return same;
}

bool gt_perfetto_is_export_of(const char *path, const char *identity)
{
	unsigned char buf[64];
	const unsigned char *p = buf, *end;
	uint64_t v, len, msb = 0, lsb = 0, want_msb, want_lsb;
	FILE *fp = fopen(path, "rb");
	size_t n;

	if (!fp)
		return false;
	n = fread(buf, 1, sizeof(buf), fp);
	fclose(fp);
	end = buf + n;
	/* Trace.packet { trace_uuid { msb, lsb } }, exactly as write_uuid_packet writes it */
	if (!(p = get_varint(p, end, &v)) || v != ((uint64_t)TRACE_PACKET << 3 | 2) ||
	    !(p = get_varint(p, end, &len)) || len > (uint64_t)(end - p))
		return false;
	end = p + len;
	if (!(p = get_varint(p, end, &v)) || v != ((uint64_t)PKT_TRACE_UUID << 3 | 2) ||
	    !(p = get_varint(p, end, &len)) || len != (uint64_t)(end - p))
		return false;
	while (p < end) {
		if (!(p = get_varint(p, end, &v)))
			return false;
		if (v == (UUID_MSB << 3 | 0) && (p = get_varint(p, end, &msb)))
			continue;
		if (v == (UUID_LSB << 3 | 0) && (p = get_varint(p, end, &lsb)))
			continue;
		return false;
	}
	uuid_of(identity, &want_msb, &want_lsb);
	return msb == want_msb && lsb == want_lsb &&
	       ends_with_packet(path, buf, (size_t)(end - buf));
}

static void write_first_packet(struct pf *f)
{
	char *pm, *im, *em;
	char *p = pkt_open(f, 4096, &pm);

	p = gt_pb_uint(p, PKT_SEQ_FLAGS, SEQ_INCREMENTAL_STATE_CLEARED);
	p = gt_pb_open(p, PKT_DEFAULTS, &em);
	p = gt_pb_uint(p, DEFAULTS_TIMESTAMP_CLOCK_ID, CLOCK_RELATIVE);
	p = gt_pb_close(p, em);
	p = gt_pb_open(p, PKT_INTERNED, &im);
	for (unsigned i = 0; i < sizeof(cat_names) / sizeof(cat_names[0]); i++) {
		p = gt_pb_open(p, ID_EVENT_CATEGORIES, &em);
		p = gt_pb_uint(p, INTERNED_IID, i + 1);
		p = gt_pb_bytes(p, INTERNED_NAME, cat_names[i], strlen(cat_names[i]));
		p = gt_pb_close(p, em);
	}
	for (unsigned i = 0; i < sizeof(ann_names) / sizeof(ann_names[0]); i++) {
		p = gt_pb_open(p, ID_DEBUG_ANNOTATION_NAMES, &em);
		p = gt_pb_uint(p, INTERNED_IID, i + 1);
		p = gt_pb_bytes(p, INTERNED_NAME, ann_names[i], strlen(ann_names[i]));
		p = gt_pb_close(p, em);
	}
	p = gt_pb_close(p, im);
	pkt_close(f, p, pm);

	/* CLOCK_RELATIVE at 1 is the base on the trace clock, shown as Perfetto's trace time
	 * (BOOTTIME), and as the clock the header names; and the wall clock then, through the
	 * header's anchor, so that the importer converts times to dates (to_realtime) */
	p = pkt_open(f, 128, &pm);
	p = gt_pb_open(p, PKT_CLOCK_SNAPSHOT, &im);
	p = gt_pb_open(p, SNAPSHOT_CLOCKS, &em);
	p = gt_pb_uint(p, CLOCK_ID, CLOCK_RELATIVE);
	p = gt_pb_uint(p, CLOCK_TIMESTAMP, 1);
	p = gt_pb_close(p, em);
	p = gt_pb_open(p, SNAPSHOT_CLOCKS, &em);
	p = gt_pb_uint(p, CLOCK_ID, BUILTIN_CLOCK_BOOTTIME);
	p = gt_pb_uint(p, CLOCK_TIMESTAMP, f->base_ns);
	p = gt_pb_close(p, em);
	if (f->trace_clock) {
		p = gt_pb_open(p, SNAPSHOT_CLOCKS, &em);
		p = gt_pb_uint(p, CLOCK_ID, f->trace_clock);
		p = gt_pb_uint(p, CLOCK_TIMESTAMP, f->base_ns);
		p = gt_pb_close(p, em);
	}
	if (f->times.zero_realtime_ns) {
		p = gt_pb_open(p, SNAPSHOT_CLOCKS, &em);
		p = gt_pb_uint(p, CLOCK_ID, BUILTIN_CLOCK_REALTIME);
		p = gt_pb_uint(p, CLOCK_TIMESTAMP, f->times.zero_realtime_ns);
		p = gt_pb_close(p, em);
	}
	p = gt_pb_close(p, im);
	pkt_close(f, p, pm);
}

/* ------------------------------------------------------------------------------------ */
/* Track descriptors, written before a track's first event (again when its name changes) */

static char *desc_open(struct pf *f, size_t need, uint64_t uuid, uint64_t parent, char **pm,
                       char **dm)
{
	char *p = pkt_open(f, need + 64, pm);

	p = gt_pb_open(p, PKT_TRACK_DESC, dm);
	p = gt_pb_uint(p, TD_UUID, uuid);
	if (parent)
		p = gt_pb_uint(p, TD_PARENT_UUID, parent);
	return p;
}

static void desc_close(struct pf *f, char *p, char *pm, char *dm)
{
	p = gt_pb_close(p, dm);
	pkt_close(f, p, pm);
}

/* The instant "trace start" at the trace's zero, on a track of its own: Perfetto's ruler
 * starts at the earliest event, so every export of the trace, whole, windowed or in pieces,
 * then counts from the same zero (docs/cli.md, "Time"). Not counted among the events. */
static void write_zero_marker(struct pf *f)
{
	static const char track[] = "trace", name[] = "trace start";
	char date[48];
	char *p, *pm, *dm, *tm;
	uint64_t uuid = f->next_uuid++;

	f->trace_track = uuid;
	p = desc_open(f, 64, uuid, 0, &pm, &dm);
	p = gt_pb_bytes(p, TD_NAME, track, sizeof(track) - 1);
	desc_close(f, p, pm, dm);

	gt_fmt_date(f->times.zero_realtime_ns, date, sizeof(date));
	p = pkt_open(f, 160, &pm);
	p = put_ts(f, p, f->base_ns);
	p = gt_pb_open(p, PKT_TRACK_EVENT, &tm);
	p = gt_pb_uint(p, TE_TYPE, TYPE_INSTANT);
	p = gt_pb_uint(p, TE_TRACK_UUID, uuid);
	p = gt_pb_uint(p, TE_CATEGORY_IIDS, CAT_TRACE);
	p = gt_pb_bytes(p, TE_NAME, name, sizeof(name) - 1);
	p = ann_str(p, A_DATE, date, strlen(date));
	p = ann_u64(p, A_TRACE_CLOCK, f->base_ns);
	p = gt_pb_close(p, tm);
	pkt_close(f, p, pm);
}

/* One entry of the losses' metadata: a string, or (s NULL) an integer. */
static char *meta_entry(char *p, const char *name, const char *s, uint64_t v)
{
	char *m;

	p = gt_pb_open(p, CEB_METADATA, &m);
	p = gt_pb_bytes(p, CM_NAME, name, strlen(name));
	if (s)
		p = gt_pb_bytes(p, CM_STRING_VALUE, s, strlen(s));
	else
		p = gt_pb_uint(p, CM_INT_VALUE, v);
	return gt_pb_close(p, m);
}

/* What the trace lost, said in the export once it was read (docs/exporters.md): as metadata
 * that trace_processor keeps in its `metadata` table (a ChromeEventBundle's metadata, rows
 * named cr-gputrace.*; the UI lists them on its trace info page), and, when this read
 * skipped damage, as an instant on the "trace" track at the zero, next to "trace start"
 * (damage the trace records has its LOSS record's instant already). */
static void write_losses(struct pf *f)
{
	const struct gt_catalog *c = &f->m.cat;
	struct gt_catalog_damage d;
	char words[GT_CATALOG_LOSSES_TEXT], dt[GT_CATALOG_DAMAGE_TEXT];
	char name[GT_CATALOG_DAMAGE_TEXT + 32], *n, *p, *pm, *tm;

	gt_catalog_damage(c, &d);
	gt_catalog_damage_text(&d, dt, sizeof(dt));
	gt_catalog_losses_text(c, words, sizeof(words));
	p = pkt_open(f, sizeof(words) + sizeof(dt) + 16 * 48, &pm);
	p = gt_pb_open(p, PKT_CHROME_EVENTS, &tm);
	p = meta_entry(p, "gputrace.losses", words, 0);
	p = meta_entry(p, "gputrace.lost_records", NULL, gt_catalog_lost_records(c));
	p = meta_entry(p, "gputrace.damaged_file", gt_catalog_damaged(&d) ? dt : "none", 0);
	p = meta_entry(p, "gputrace.damaged_chunks", NULL, d.chunks);
	p = meta_entry(p, "gputrace.damaged_bytes", NULL, d.bytes);
	p = meta_entry(p, "gputrace.damaged_records", NULL, d.records);
	p = meta_entry(p, "gputrace.malformed_records", NULL, d.malformed);
	p = meta_entry(p, "gputrace.recovered", NULL, c->recovered);
	p = gt_pb_close(p, tm);
	pkt_close(f, p, pm);
	d = c->damage_read;
	if (!gt_catalog_damaged(&d))
		return;
	n = stpcpy(name, "trace file damaged: ");
	n = stpcpy(n, gt_catalog_damage_text(&d, dt, sizeof(dt)));
	p = pkt_open(f, sizeof(name) + 160, &pm);
	p = put_ts(f, p, f->base_ns);
	p = gt_pb_open(p, PKT_TRACK_EVENT, &tm);
	p = gt_pb_uint(p, TE_TYPE, TYPE_INSTANT);
	p = gt_pb_uint(p, TE_TRACK_UUID, f->trace_track);
	p = gt_pb_uint(p, TE_CATEGORY_IIDS, CAT_LOSS);
	p = gt_pb_bytes(p, TE_NAME, name, (size_t)(n - name));
	p = ann_str(p, A_SOURCE, "damaged_file", 12);
	p = ann_u64(p, A_COUNT, d.chunks);
	p = ann_u64(p, A_BYTES, d.bytes);
	p = ann_u64(p, A_RECORDS, d.records);
	p = ann_u64(p, A_MALFORMED, d.malformed);
	p = gt_pb_close(p, tm);
	pkt_close(f, p, pm);
}

static const char *text(struct pf *f, uint32_t id, size_t *len)
{
	const char *s = gt_names_get(&f->m.names, id, false, len, NULL, NULL);

	if (!s) {
		*len = 0;
		return "";
	}
	return s;
}

static void announce_proc(struct pf *f, struct gt_timeline_proc *pr)
{
	char name[GT_LABELS_PROCESS_MAX];
	char *n, *p, *pm, *dm, *sm;
	size_t clen = 0;
	const char *cmd = NULL;

	if (pr->announced && !pr->info_changed)
		return;
	if (!pr->uuid)
		pr->uuid = f->next_uuid++;
	n = gt_labels_process(&f->m, pr, name, false);
	if (pr->cat->cmdline_id)
		cmd = text(f, pr->cat->cmdline_id, &clen);
	p = desc_open(f, (size_t)(n - name) + clen + 64, pr->uuid, 0, &pm, &dm);
	p = gt_pb_open(p, TD_PROCESS, &sm);
	p = gt_pb_uint(p, PD_PID, pr->pid);
	if (cmd)
		p = gt_pb_bytes(p, PD_CMDLINE, cmd, clen);
	p = gt_pb_bytes(p, PD_PROCESS_NAME, name, (size_t)(n - name));
	p = gt_pb_close(p, sm);
	desc_close(f, p, pm, dm);
	pr->announced = true;
	pr->info_changed = false;
}

/* A GPU is a process, "GPU n" with pid GT_GPU_PID_BASE + n and its device name as a label,
 * as in the JSON (docs/exporters.md, "Processes and threads"). */
static void announce_gpu(struct pf *f, struct gt_timeline_gpu *g)
{
	char name[32];
	char *n = name, *p, *pm, *dm, *sm;
	const char *dn = NULL;
	size_t dlen = 0;

	if (g->announced && !g->info_changed)
		return;
	if (!g->uuid_track)
		g->uuid_track = f->next_uuid++;
	n = gt_labels_gpu(n, g);
	if (g->cat->name_id) {
		dn = text(f, g->cat->name_id, &dlen);
		dlen = gt_text_cut(dn, dlen, 256, false);
	}
	p = desc_open(f, (size_t)(n - name) + dlen + 32, g->uuid_track, 0, &pm, &dm);
	p = gt_pb_open(p, TD_PROCESS, &sm);
	p = gt_pb_uint(p, PD_PID, GT_GPU_PID_BASE + g->cat->number);
	p = gt_pb_bytes(p, PD_PROCESS_NAME, name, (size_t)(n - name));
	if (dn)
		p = gt_pb_bytes(p, PD_PROCESS_LABELS, dn, dlen);
	p = gt_pb_close(p, sm);
	desc_close(f, p, pm, dm);
	g->announced = true;
	g->info_changed = false;
}

/* A byte counter track under GPU g's track, named `name`, once: *uuid set, *announced. */
static void announce_counter(struct pf *f, struct gt_timeline_gpu *g, const char *name,
                             uint64_t *uuid, bool *announced)
{
	char *p, *pm, *dm, *cm;

	announce_gpu(f, g);
	if (*announced)
		return;
	*uuid = f->next_uuid++;
	p = desc_open(f, 64, *uuid, g->uuid_track, &pm, &dm);
	p = gt_pb_bytes(p, TD_NAME, name, strlen(name));
	p = gt_pb_open(p, TD_COUNTER, &cm);
	p = gt_pb_uint(p, CD_UNIT, UNIT_SIZE_BYTES);
	p = gt_pb_close(p, cm);
	desc_close(f, p, pm, dm);
	*announced = true;
}

/* Every lane is a thread, with the pid and tid the JSON gives it (gt_lanes_ids): the real
 * thread for lane 0 of a CPU thread, synthetic ones for the rest, stream lanes threads of
 * their GPU's process. */
static void announce_lane(struct pf *f, struct gt_track *t, unsigned lane)
{
	struct gt_lane *l = &t->lanes[lane];
	char name[GT_LANE_NAME_MAX];
	char *n, *p, *pm, *dm, *sm;
	uint64_t parent;
	uint32_t pid, tid;

	if (l->announced && !t->name_changed)
		return;
	if (!l->uuid)
		l->uuid = f->next_uuid++;
	if (t->kind == GT_TRACK_STREAM) {
		struct gt_timeline_gpu *g = f->m.gpus[t->gpu];

		announce_gpu(f, g);
		parent = g->uuid_track;
	} else {
		struct gt_timeline_proc *pr = f->m.procs[t->proc];

		announce_proc(f, pr);
		parent = pr->uuid;
	}
	n = gt_lanes_name(&f->m, t, lane, name, false);
	gt_lanes_ids(&f->m, t, lane, &pid, &tid);
	p = desc_open(f, (size_t)(n - name) + 64, l->uuid, parent, &pm, &dm);
	p = gt_pb_open(p, TD_THREAD, &sm);
	p = gt_pb_uint(p, THD_PID, pid);
	p = gt_pb_uint(p, THD_TID, tid);
	p = gt_pb_bytes(p, THD_THREAD_NAME, name, (size_t)(n - name));
	p = gt_pb_close(p, sm);
	desc_close(f, p, pm, dm);
	l->announced = true;
	if (t->name_changed) {
		t->name_changed = false;
		for (unsigned k = 0; k < t->nlanes; k++)
			if (k != lane && t->lanes[k].announced) {
				t->lanes[k].announced = false;
				announce_lane(f, t, k);
			}
	}
}

/* ------------------------------------------------------------------------------------ */
/* Events                                                                                 */

struct ev {
	uint64_t ts_ns;
	uint64_t uuid;
	unsigned type;
	enum cat cat;
	uint32_t name_iid;
	const char *fresh; /* name to intern in this packet, or NULL */
	size_t fresh_len;
	const char *literal; /* non-interned name, or NULL */
	size_t literal_len;
	/* annotation string values to intern in this packet */
	unsigned nvals;
	uint32_t val_iid[3];
	const char *val[3];
	size_t val_len[3];
	uint64_t flow_out; /* 0 = none */
	uint64_t flow_in;  /* terminating flow id, 0 = none */
	uint64_t flow_op;  /* terminating flow id of the arrow from its operator, 0 = none */
};

/* Interned annotation value: returns its iid; queued on e the first time. */
static uint32_t intern_val(struct pf *f, struct ev *e, uint64_t a, uint64_t b, const char *s,
                           size_t slen)
{
	uint32_t iid = 0;
	bool fresh = false;
	size_t len;
	const char *v = gt_names_key2(&f->m.names, a, b, s, slen, &len, &iid, &fresh);

	if (v && fresh && e->nvals < 3) {
		e->val_iid[e->nvals] = iid;
		e->val[e->nvals] = v;
		e->val_len[e->nvals] = len;
		e->nvals++;
	}
	return iid;
}

/* "(128, 2, 1)", interned by value; the last few are remembered, as launches repeat */
static uint32_t intern_dim3(struct pf *f, struct ev *e, uint32_t x, uint32_t y, uint32_t z)
{
	char buf[72];
	char *b = buf;
	unsigned slot = (x * 31u + y * 7u + z) & 15u;
	uint32_t iid;

	if (f->dim_cache[slot].iid && f->dim_cache[slot].x == x && f->dim_cache[slot].y == y &&
	    f->dim_cache[slot].z == z)
		return f->dim_cache[slot].iid;

	*b++ = '(';
	b = gt_fmt_u64(b, x);
	*b++ = ',';
	*b++ = ' ';
	b = gt_fmt_u64(b, y);
	*b++ = ',';
	*b++ = ' ';
	b = gt_fmt_u64(b, z);
	*b++ = ')';
	iid = intern_val(f, e, ((uint64_t)x << 32) | y, (3ull << 32) | z, buf, (size_t)(b - buf));
	f->dim_cache[slot].x = x;
	f->dim_cache[slot].y = y;
	f->dim_cache[slot].z = z;
	f->dim_cache[slot].iid = iid;
	return iid;
}

/* Open a packet with one TrackEvent; returns where its annotations go. *tm: the
 * TrackEvent's mark for ev_close. */
static char *ev_open(struct pf *f, const struct ev *e, size_t extra, char **pm, char **tm)
{
	char *p = pkt_open(f, 160 + extra + e->fresh_len + e->literal_len, pm);

	/* No SEQ_NEEDS_INCREMENTAL_STATE: the state is never lost in a file, and two bytes
	 * per event add up. */
	p = put_ts(f, p, e->ts_ns);
	if (e->fresh || e->nvals) {
		char *im, *nm;
		const char *s;
		size_t len;

		p = gt_pb_open(p, PKT_INTERNED, &im);
		/* the names where the cache holds them now: caching the others since (a grid,
		 * a lane's name) may have moved it */
		if (e->fresh && (s = gt_names_text(&f->m.names, e->name_iid, &len)) != NULL) {
			p = gt_pb_open(p, ID_EVENT_NAMES, &nm);
			p = gt_pb_uint(p, INTERNED_IID, e->name_iid);
			p = gt_pb_bytes(p, INTERNED_NAME, s, len);
			p = gt_pb_close(p, nm);
		}
		for (unsigned i = 0; i < e->nvals; i++) {
			s = gt_names_text(&f->m.names, e->val_iid[i], &len);
			if (!s)
				continue;
			p = gt_pb_open(p, ID_DEBUG_ANNOTATION_STRING_VALUES, &nm);
			p = gt_pb_uint(p, INTERNED_IID, e->val_iid[i]);
			p = gt_pb_bytes(p, INTERNED_NAME, s, len);
			p = gt_pb_close(p, nm);
		}
		p = gt_pb_close(p, im);
	}
	p = gt_pb_open(p, PKT_TRACK_EVENT, tm);
	p = gt_pb_uint(p, TE_TYPE, e->type);
	p = gt_pb_uint(p, TE_TRACK_UUID, e->uuid);
	if (e->cat)
		p = gt_pb_uint(p, TE_CATEGORY_IIDS, e->cat);
	if (e->literal)
		p = gt_pb_bytes(p, TE_NAME, e->literal, e->literal_len);
	else if (e->name_iid)
		p = gt_pb_uint(p, TE_NAME_IID, e->name_iid);
	if (e->flow_out)
		p = gt_pb_fixed64(p, TE_FLOW_IDS, e->flow_out);
	if (e->flow_in)
		p = gt_pb_fixed64(p, TE_TERMINATING_FLOW_IDS, e->flow_in);
	if (e->flow_op)
		p = gt_pb_fixed64(p, TE_TERMINATING_FLOW_IDS, e->flow_op);
	return p;
}

static void ev_close(struct pf *f, char *p, char *pm, char *tm)
{
	p = gt_pb_close(p, tm);
	pkt_close(f, p, pm);
	f->events++;
}

/* The END of a slice. */
static void slice_end(struct pf *f, uint64_t uuid, uint64_t ts)
{
	char *pm, *tm;
	char *p = pkt_open(f, 48, &pm);

	p = put_ts(f, p, ts);
	p = gt_pb_open(p, PKT_TRACK_EVENT, &tm);
	p = gt_pb_uint(p, TE_TYPE, TYPE_SLICE_END);
	p = gt_pb_uint(p, TE_TRACK_UUID, uuid);
	p = gt_pb_close(p, tm);
	pkt_close(f, p, pm);
}

/* Name of a string id, interned: fills e->name_iid and e->fresh. */
static int name_id(struct pf *f, struct ev *e, uint32_t id, bool kernel)
{
	bool fresh;
	size_t len;
	const char *s = gt_names_get(&f->m.names, id, kernel, &len, &e->name_iid, &fresh);

	if (!s)
		return -ENOMEM;
	e->fresh = fresh ? s : NULL;
	e->fresh_len = fresh ? len : 0;
	return 0;
}

static int name_key(struct pf *f, struct ev *e, uint64_t key, const char *s, size_t slen)
{
	bool fresh;
	size_t len;
	const char *n = gt_names_key(&f->m.names, key, s, slen, &len, &e->name_iid, &fresh);

	if (!n)
		return -ENOMEM;
	e->fresh = fresh ? n : NULL;
	e->fresh_len = fresh ? len : 0;
	return 0;
}

static struct gt_track *stream_track(struct pf *f, uint32_t pid, const struct gt_gpu_span *s)
{
	struct gt_track *t = gt_timeline_track(&f->m, GT_TRACK_STREAM, pid, s->stream_id);
	struct gt_timeline_gpu *g;

	if (!t)
		return NULL;
	if (t->nlanes == 0) {
		g = gt_timeline_gpu(&f->m, pid, s->device_id);
		if (!g)
			return NULL;
		for (uint32_t i = 0; i < f->m.ngpus; i++)
			if (f->m.gpus[i] == g)
				t->gpu = i;
	}
	return t;
}

/* Place a GPU span on its stream and fill the common parts of its BEGIN event. */
static struct gt_track *gpu_begin(struct pf *f, uint32_t pid, const struct gt_gpu_span *s,
                                  struct ev *e, enum cat cat)
{
	struct gt_track *t = stream_track(f, pid, s);
	unsigned lane;

	if (!t)
		return NULL;
	lane = gt_lanes_place(&f->m, t, s->start_ns, s->end_ns);
	announce_lane(f, t, lane);
	e->ts_ns = s->start_ns;
	e->uuid = t->lanes[lane].uuid;
	e->type = TYPE_SLICE_BEGIN;
	e->cat = cat;
	/* The GPU end of the launch's arrow: terminating_flow_ids, the id the model gave it
	 * (the launch's, or a pending one its API call starts when it comes later). Perfetto
	 * sorts by timestamp before it links flows, so either file order gives the arrow. */
	if (s->correlation_id)
		gt_flows_gpu(&f->m, pid, s->correlation_id, s->start_ns, t->index, lane,
		             &e->flow_in);
	/* the end of the arrow from the operator that launched it: the first GPU work of the
	 * launch, as for the launch's own arrow */
	if (e->flow_in && gt_torchops_of_launch(f->ops, pid, s->correlation_id))
		e->flow_op = GT_TORCHOP_FLOW | (uint64_t)pid << 32 | s->correlation_id;
	return t;
}

/* Device and stream are the track ("stream N" under "GPU n"), so a GPU slice carries only
 * its correlation id; the JSON repeats them all, where bytes matter less. */
static char *span_anns(char *p, const struct gt_gpu_span *s)
{
	return ann_u64(p, A_CORRELATION, s->correlation_id);
}

static int emit_kernel(void *ctx, const struct gt_rec_kernel *k)
{
	struct pf *f = ctx;
	struct ev e = {0};
	uint32_t grid, block, cluster = 0;
	char *p, *pm, *tm;

	if (name_id(f, &e, k->name_id, true) < 0 ||
	    !gpu_begin(f, k->hdr.pid, &k->span, &e, CAT_KERNEL))
		return -ENOMEM;
	grid = intern_dim3(f, &e, k->grid_x, k->grid_y, k->grid_z);
	block = intern_dim3(f, &e, k->block_x, k->block_y, k->block_z);
	if (k->cluster_x)
		cluster = intern_dim3(f, &e, k->cluster_x, k->cluster_y, k->cluster_z);
	p = ev_open(f, &e, 400, &pm, &tm);
	/* The launch configuration; the split of shared memory and zero local memory are
	 * left to the JSON, where bytes matter less. */
	p = span_anns(p, &k->span);
	p = ann_str_iid(p, A_GRID, grid);
	p = ann_str_iid(p, A_BLOCK, block);
	p = ann_u64(p, A_REGISTERS, k->registers);
	p = ann_u64(p, A_SMEM, (uint64_t)k->static_smem_bytes + k->dynamic_smem_bytes);
	if (k->local_mem_bytes)
		p = ann_u64(p, A_LOCAL_MEM, k->local_mem_bytes);
	if (cluster)
		p = ann_str_iid(p, A_CLUSTER, cluster);
	if (k->graph_id) {
		p = ann_u64(p, A_GRAPH_ID, k->graph_id);
		p = ann_u64(p, A_GRAPH_NODE_ID, k->graph_node_id);
	}
	ev_close(f, p, pm, tm);
	slice_end(f, e.uuid, k->span.end_ns > k->span.start_ns ? k->span.end_ns : k->span.start_ns);
	return 0;
}

static uint64_t span_end(const struct gt_gpu_span *s)
{
	return s->end_ns > s->start_ns ? s->end_ns : s->start_ns;
}

static int emit_memcpy(void *ctx, const struct gt_rec_memcpy *r)
{
	struct pf *f = ctx;
	uint64_t key = KEY_MEMCPY | (uint64_t)(r->copy_kind & 0xff) << 16 |
	               (uint64_t)(r->src_kind & 0xff) << 8 | (r->dst_kind & 0xff);
	struct ev e = {0};
	char name[GT_LABELS_COPY_MAX];
	char *n, *p, *pm, *tm;
	const char *kind = gt_memcpy_kind_name(r->copy_kind);
	uint64_t dur = span_end(&r->span) - r->span.start_ns;

	n = gt_labels_memcpy(name, r->copy_kind, r->src_kind, r->dst_kind);
	uint32_t kind_iid;

	if (name_key(f, &e, key, name, (size_t)(n - name)) < 0 ||
	    !gpu_begin(f, r->hdr.pid, &r->span, &e, CAT_MEMCPY))
		return -ENOMEM;
	kind_iid = intern_val(f, &e, r->copy_kind, 4ull << 32, kind, strlen(kind));
	p = ev_open(f, &e, 300, &pm, &tm);
	p = span_anns(p, &r->span);
	p = ann_u64(p, A_BYTES, r->bytes);
	p = ann_str_iid(p, A_KIND, kind_iid);
	if (dur)
		p = ann_double(p, A_BANDWIDTH, (double)r->bytes / (double)dur);
	if (r->copy_kind == GT_MEMCPY_PTOP) {
		p = ann_u64(p, A_SRC_DEVICE, r->src_device);
		p = ann_u64(p, A_DST_DEVICE, r->dst_device);
	}
	ev_close(f, p, pm, tm);
	slice_end(f, e.uuid, span_end(&r->span));
	return 0;
}

static int emit_memset(void *ctx, const struct gt_rec_memset *r)
{
	struct pf *f = ctx;
	struct ev e = {0};
	char name[GT_LABELS_COPY_MAX];
	char *n, *p, *pm, *tm;
	uint64_t dur = span_end(&r->span) - r->span.start_ns;

	n = gt_labels_memset(name, r->mem_kind);
	if (name_key(f, &e, KEY_MEMSET | (r->mem_kind & 0xff), name, (size_t)(n - name)) < 0 ||
	    !gpu_begin(f, r->hdr.pid, &r->span, &e, CAT_MEMSET))
		return -ENOMEM;
	p = ev_open(f, &e, 200, &pm, &tm);
	p = span_anns(p, &r->span);
	p = ann_u64(p, A_BYTES, r->bytes);
	p = ann_u64(p, A_VALUE, r->value);
	if (dur)
		p = ann_double(p, A_BANDWIDTH, (double)r->bytes / (double)dur);
	ev_close(f, p, pm, tm);
	slice_end(f, e.uuid, span_end(&r->span));
	return 0;
}

static int emit_graph(void *ctx, const struct gt_rec_graph *r)
{
	struct pf *f = ctx;
	struct ev e = {0};
	char name[48];
	char *n = name, *p, *pm, *tm;

	n = stpcpy(n, "CUDA graph ");
	n = gt_fmt_u64(n, r->graph_id);
	if (name_key(f, &e, KEY_GRAPH | r->graph_id, name, (size_t)(n - name)) < 0 ||
	    !gpu_begin(f, r->hdr.pid, &r->span, &e, CAT_GRAPH))
		return -ENOMEM;
	p = ev_open(f, &e, 100, &pm, &tm);
	p = span_anns(p, &r->span);
	p = ann_u64(p, A_GRAPH_ID, r->graph_id);
	ev_close(f, p, pm, tm);
	slice_end(f, e.uuid, span_end(&r->span));
	return 0;
}

/* Place a CPU-side slice and fill the common parts of its BEGIN event. */
static struct gt_track *cpu_begin(struct pf *f, enum gt_track_kind kind, uint32_t pid, uint32_t id,
                                  uint64_t start, uint64_t end, struct ev *e, enum cat cat,
                                  unsigned *lane_out)
{
	struct gt_track *t = gt_timeline_track(&f->m, kind, pid, id);
	unsigned lane;

	if (!t)
		return NULL;
	lane = gt_lanes_place(&f->m, t, start, end);
	announce_lane(f, t, lane);
	e->ts_ns = start;
	e->uuid = t->lanes[lane].uuid;
	e->type = TYPE_SLICE_BEGIN;
	e->cat = cat;
	if (lane_out)
		*lane_out = lane;
	return t;
}

/* Stack `id` of process pid as text, a frame a line, innermost first ("inner (app)"); NULL
 * when there is none. *len its bytes. */
static const char *stack_text(struct pf *f, uint32_t pid, uint32_t id, size_t *len)
{
	const struct gt_stack_sym *s;
	unsigned n = 0;
	size_t at = 0;

	*len = 0;
	if (!f->stacks || !id || !(s = gt_stacks_get(f->stacks, pid, id, &n)))
		return NULL;
	for (unsigned i = 0; i < n && at < sizeof(f->stack_text); i++) {
		const char *base = strrchr(s[i].module, '/');
		int w = snprintf(f->stack_text + at, sizeof(f->stack_text) - at, "%s%s (%s)",
		                 i ? "\n" : "", s[i].symbol, base ? base + 1 : s[i].module);

		if (w < 0)
			break;
		at += (size_t)w;
	}
	*len = at < sizeof(f->stack_text) ? at : sizeof(f->stack_text) - 1;
	return f->stack_text;
}

/* The Python frames of stack `id` of process pid as slices opened at ts on the lane `uuid`,
 * outermost first, named as PyTorch's profiler names its python_function events
 * ("FILE(LINE): FUNCTION"); the event they stand above comes next on the same lane, so they
 * enclose it. Returns how many were opened, for py_close. */
static unsigned py_open(struct pf *f, uint32_t pid, uint32_t id, uint64_t uuid, uint64_t ts)
{
	const struct gt_stack_sym *s;
	unsigned n = 0, k = 0;
	char name[1024];

	if (!f->stacks || !id || !(s = gt_stacks_get(f->stacks, pid, id, &n)))
		return 0;
	for (unsigned i = n; i-- > 0;) {
		struct ev e = {0};
		char *p, *pm, *tm;
		int w;

		if (!s[i].python)
			continue;
		w = snprintf(name, sizeof(name), "%s(%d): %s", s[i].module, (int)s[i].line,
		             s[i].symbol);
		e.ts_ns = ts;
		e.uuid = uuid;
		e.type = TYPE_SLICE_BEGIN;
		e.cat = CAT_PYTHON;
		e.literal = name;
		e.literal_len = w < 0 ? 0 : (size_t)w < sizeof(name) ? (size_t)w : sizeof(name) - 1;
		p = ev_open(f, &e, 0, &pm, &tm);
		ev_close(f, p, pm, tm);
		k++;
	}
	return k;
}

/* End the k slices py_open opened on `uuid`, at ts (the end of the event they enclose). */
static void py_close(struct pf *f, uint64_t uuid, uint64_t ts, unsigned k)
{
	while (k--)
		slice_end(f, uuid, ts);
}

/* The trace's stacks, read ahead of the export (a record may come before its stack's own
 * records); *ret NULL when the trace has none. */
static int load_stacks(struct gt_reader *r, struct gt_stacks **ret, const char **errmsg)
{
	const struct gt_trace_counts *c = gt_reader_footer_counts(r);
	int err;

	*ret = NULL;
	if (c && !c->records[GT_REC_STACK])
		return 0;
	err = gt_stacks_new(ret);
	if (err == 0)
		err = gt_stacks_load(*ret, r);
	if (err < 0) {
		snprintf(errbuf, sizeof(errbuf), "reading the trace's stacks: %s", strerror(-err));
		*errmsg = errbuf;
	}
	return err;
}

static int emit_api(void *ctx, const struct gt_rec_api *r)
{
	struct pf *f = ctx;
	struct ev e = {0};
	struct gt_track *t;
	unsigned lane;
	char *p, *pm, *tm;
	const char *stack;
	size_t slen;
	unsigned npy;

	if (name_id(f, &e, r->name_id, false) < 0)
		return -ENOMEM;
	t = cpu_begin(f, GT_TRACK_THREAD, r->hdr.pid, r->tid, r->start_ns, r->end_ns, &e,
	              r->domain == GT_API_DRIVER ? CAT_DRIVER : CAT_RUNTIME, &lane);
	if (!t)
		return -ENOMEM;
	/* The flow starts here (flow_ids); the GPU work the model pairs with it ends it, drawn
	 * before or after. Perfetto ignores a flow id nothing else uses. */
	if (r->correlation_id)
		gt_flows_api(&f->m, r->hdr.pid, r->correlation_id, r->start_ns, t->index, lane,
		             &e.flow_out);
	stack = stack_text(f, r->hdr.pid, r->stack_id, &slen);
	npy = py_open(f, r->hdr.pid, r->stack_id, e.uuid, e.ts_ns);
	p = ev_open(f, &e, 64 + slen, &pm, &tm);
	/* The correlation id is the low half of the flow id and the callback id is what the
	 * name says: both stay in the JSON only; a failed call shows its code. */
	if (r->return_code)
		p = ann_i64(p, A_RETURN_CODE, r->return_code);
	if (stack)
		p = ann_str(p, A_STACK, stack, slen);
	ev_close(f, p, pm, tm);
	slice_end(f, e.uuid, r->end_ns > r->start_ns ? r->end_ns : r->start_ns);
	py_close(f, e.uuid, r->end_ns > r->start_ns ? r->end_ns : r->start_ns, npy);
	return 0;
}

/* A PyTorch operator (torchops.h): a slice named after the operator on its thread, its
 * input dims, sequence number and record function id as args, and an arrow to the GPU work
 * of each call made in it. */
static int emit_op(struct pf *f, const struct gt_rec_nvtx *r, uint64_t op)
{
	struct gt_torchop_fields fl;
	struct ev e = {0};
	const uint32_t *corrs;
	const char *msg, *stack;
	size_t mlen, slen, n;
	char *p, *pm, *tm;

	msg = text(f, r->message_id, &mlen);
	if (!msg || !gt_torchop_parse(msg, mlen, &fl))
		return -EINVAL; /* the model parsed the same message */
	if (name_key(f, &e, KEY_OP | r->message_id, fl.name, fl.name_len) < 0)
		return -ENOMEM;
	/* the message again: caching the name may have moved it */
	msg = text(f, r->message_id, &mlen);
	if (!msg || !gt_torchop_parse(msg, mlen, &fl))
		return -EINVAL;
	if (!cpu_begin(f, GT_TRACK_THREAD, r->hdr.pid, r->tid, r->start_ns, r->end_ns, &e,
	               CAT_CPU_OP, NULL))
		return -ENOMEM;
	msg = text(f, r->message_id, &mlen);
	if (!msg || !gt_torchop_parse(msg, mlen, &fl))
		return -EINVAL;
	corrs = gt_torchops_launches(f->ops, op, &n);
	if (n > OP_FLOWS_MAX)
		n = OP_FLOWS_MAX;
	stack = stack_text(f, r->hdr.pid, r->stack_id, &slen);
	p = ev_open(f, &e, 128 + fl.sizes_len + slen + 10 * n, &pm, &tm);
	for (size_t i = 0; i < n; i++)
		p = gt_pb_fixed64(p, TE_FLOW_IDS,
		                  GT_TORCHOP_FLOW | (uint64_t)r->hdr.pid << 32 | corrs[i]);
	if (fl.sizes)
		p = ann_str(p, A_INPUT_DIMS, fl.sizes, fl.sizes_len);
	if (fl.seq >= 0)
		p = ann_i64(p, A_SEQUENCE, fl.seq);
	if (fl.op_id)
		p = ann_i64(p, A_OP_ID, fl.op_id);
	if (stack)
		p = ann_str(p, A_STACK, stack, slen);
	ev_close(f, p, pm, tm);
	slice_end(f, e.uuid, r->end_ns > r->start_ns ? r->end_ns : r->start_ns);
	return 0;
}

static int emit_nvtx(void *ctx, const struct gt_rec_nvtx *r)
{
	struct pf *f = ctx;
	struct ev e = {0};
	struct gt_track *t;
	size_t dlen = 0, msglen = 0, slen;
	const char *dom = NULL, *msg = NULL, *stack;
	const struct gt_step *step = NULL;
	char *p, *pm, *tm, step_name[48];
	uint64_t op;
	bool fresh;
	unsigned npy;

	if (f->ops && (op = gt_torchops_of_range(f->ops, r)) != 0)
		return emit_op(f, r, op);
	if (r->kind != GT_NVTX_MARK && f->steps)
		step = gt_steps_find(f->steps, r->hdr.pid, r->message_id, r->start_ns, r->end_ns);
	if (step) {
		/* a training step, named as the chrome export and PyTorch's profiler name it; the
		 * NVTX message stays in the args when it was another */
		char *sn = stpcpy(step_name, "ProfilerStep#");
		size_t mlen;

		sn = gt_fmt_i64(sn, step->number);
		msg = text(f, r->message_id, &mlen);
		if (msg && mlen == (size_t)(sn - step_name) && memcmp(msg, step_name, mlen) == 0)
			msg = NULL;
		if (gt_names_key2(&f->m.names, (uint64_t)step->number, KEY_STEP, step_name,
		                  (size_t)(sn - step_name), &e.fresh_len, &e.name_iid, &fresh) == NULL)
			return -ENOMEM;
		e.fresh = fresh ? gt_names_text(&f->m.names, e.name_iid, &e.fresh_len) : NULL;
		if (!fresh)
			e.fresh_len = 0;
		f->steps_written++;
	} else if (name_id(f, &e, r->message_id, false) < 0) {
		return -ENOMEM;
	}
	if (r->domain_id)
		dom = text(f, r->domain_id, &dlen);
	if (r->kind == GT_NVTX_MARK) {
		t = gt_timeline_track(&f->m, GT_TRACK_THREAD, r->hdr.pid, r->tid);
		if (!t)
			return -ENOMEM;
		if (t->nlanes == 0)
			t->nlanes = 1; /* instants need no lane of their own */
		announce_lane(f, t, 0);
		e.ts_ns = r->start_ns;
		e.uuid = t->lanes[0].uuid;
		e.type = TYPE_INSTANT;
		e.cat = CAT_ANNOTATION;
	} else {
		t = cpu_begin(f, r->kind == GT_NVTX_START_END ? GT_TRACK_NVTX : GT_TRACK_THREAD,
		              r->hdr.pid, r->kind == GT_NVTX_START_END ? 0 : r->tid, r->start_ns,
		              r->end_ns, &e, CAT_ANNOTATION, NULL);
		if (!t)
			return -ENOMEM;
	}
	if (msg)
		msg = text(f, r->message_id, &msglen);
	stack = stack_text(f, r->hdr.pid, r->stack_id, &slen);
	npy = py_open(f, r->hdr.pid, r->stack_id, e.uuid, e.ts_ns);
	p = ev_open(f, &e, 96 + dlen + msglen + slen, &pm, &tm);
	if (msg)
		p = ann_str(p, A_NVTX_MESSAGE, msg, msglen);
	if (stack)
		p = ann_str(p, A_STACK, stack, slen);
	if (dom)
		p = ann_str(p, A_DOMAIN, dom, dlen);
	if (r->color)
		p = ann_u64(p, A_COLOR, r->color);
	if (r->category)
		p = ann_u64(p, A_CATEGORY, r->category);
	if (r->kind == GT_NVTX_START_END) {
		p = ann_u64(p, A_START_TID, r->tid);
		p = ann_u64(p, A_END_TID, r->end_tid);
	}
	ev_close(f, p, pm, tm);
	if (r->kind != GT_NVTX_MARK)
		slice_end(f, e.uuid, r->end_ns > r->start_ns ? r->end_ns : r->start_ns);
	py_close(f, e.uuid, r->kind != GT_NVTX_MARK && r->end_ns > r->start_ns ? r->end_ns
	                                                                        : r->start_ns,
	         npy);
	return 0;
}

static int emit_sync(void *ctx, const struct gt_rec_sync *r)
{
	struct pf *f = ctx;
	unsigned kind = r->kind < GT_SYNC_KIND_MAX ? r->kind : 0;
	const char *label = gt_labels_sync(kind);
	struct ev e = {0};
	char *p, *pm, *tm;

	if (name_key(f, &e, KEY_SYNC | kind, label, strlen(label)) < 0 ||
	    !cpu_begin(f, GT_TRACK_SYNC, r->hdr.pid, r->tid, r->span.start_ns, r->span.end_ns, &e,
	               CAT_SYNC, NULL))
		return -ENOMEM;
	p = ev_open(f, &e, 100, &pm, &tm);
	p = ann_u64(p, A_STREAM, r->span.stream_id);
	p = span_anns(p, &r->span);
	if (r->kind == GT_SYNC_EVENT || r->kind == GT_SYNC_STREAM_WAIT)
		p = ann_u64(p, A_EVENT, r->event_id);
	ev_close(f, p, pm, tm);
	slice_end(f, e.uuid, span_end(&r->span));
	return 0;
}

static int emit_overhead(void *ctx, const struct gt_rec_overhead *r)
{
	struct pf *f = ctx;
	unsigned kind = r->kind < GT_OVERHEAD_KIND_MAX ? r->kind : 0;
	const char *label = gt_labels_overhead(kind);
	struct ev e = {0};
	char *p, *pm, *tm;

	if (name_key(f, &e, KEY_OVERHEAD | kind, label, strlen(label)) < 0 ||
	    !cpu_begin(f, GT_TRACK_OVERHEAD, r->hdr.pid, 0, r->start_ns, r->end_ns, &e,
	               CAT_OVERHEAD, NULL))
		return -ENOMEM;
	p = ev_open(f, &e, 32, &pm, &tm);
	p = ann_u64(p, r->object_kind == 2 ? A_DEVICE : A_START_TID, r->object_id);
	ev_close(f, p, pm, tm);
	slice_end(f, e.uuid, r->end_ns > r->start_ns ? r->end_ns : r->start_ns);
	return 0;
}

/* A value on counter track `uuid`. */
static void counter_value(struct pf *f, uint64_t uuid, uint64_t ts, int64_t value)
{
	char *p, *pm, *tm;

	p = pkt_open(f, 48, &pm);
	p = put_ts(f, p, ts);
	p = gt_pb_open(p, PKT_TRACK_EVENT, &tm);
	p = gt_pb_uint(p, TE_TYPE, TYPE_COUNTER);
	p = gt_pb_uint(p, TE_TRACK_UUID, uuid);
	p = gt_pb_int(p, TE_COUNTER_VALUE, value);
	ev_close(f, p, pm, tm);
	f->counters++;
}

static int emit_memory(void *ctx, const struct gt_rec_memory *r)
{
	struct pf *f = ctx;
	struct gt_timeline_gpu *g = gt_timeline_gpu(&f->m, r->hdr.pid, r->device_id);

	if (!g)
		return -ENOMEM;
	announce_counter(f, g, "memory in use", &g->uuid_memory, &g->memory_announced);
	counter_value(f, g->uuid_memory, r->ts_ns, g->cat->mem_in_use);
	return 0;
}

/* A memory pool created, trimmed or destroyed: an instant on its GPU's track, and the bytes
 * its GPU's pools now reserve on their counter track. */
static int emit_memory_pool(void *ctx, const struct gt_rec_memory_pool *r)
{
	struct pf *f = ctx;
	struct gt_timeline_gpu *g = gt_timeline_gpu(&f->m, r->hdr.pid, r->device_id);
	const char *type = gt_pool_type_name(r->pool_type);
	struct ev e = {0};
	char name[48], addr[24];
	char *n, *a, *p, *pm, *tm;

	if (!g)
		return -ENOMEM;
	announce_gpu(f, g);
	n = stpcpy(name, "memory pool ");
	n = stpcpy(n, gt_pool_op_name(r->op));
	e.literal = name;
	e.literal_len = (size_t)(n - name);
	e.ts_ns = r->ts_ns;
	e.uuid = g->uuid_track;
	e.type = TYPE_INSTANT;
	e.cat = CAT_MEMORY_POOL;
	p = ev_open(f, &e, 160, &pm, &tm);
	a = gt_fmt_hex(addr, r->address);
	p = ann_str(p, A_ADDRESS, addr, (size_t)(a - addr));
	p = ann_u64(p, A_RESERVED, r->reserved_bytes);
	p = ann_u64(p, A_RELEASE_THRESHOLD, r->release_threshold_bytes);
	p = ann_str(p, A_POOL_TYPE, type, strlen(type));
	p = ann_u64(p, A_CORRELATION, r->correlation_id);
	ev_close(f, p, pm, tm);
	announce_counter(f, g, "memory pool reserved", &g->uuid_pool, &g->pool_announced);
	counter_value(f, g->uuid_pool, r->ts_ns, g->pool_reserved);
	return 0;
}

/* A GPU metrics sample: one value on each of its GPU's metric counter tracks ("SMs Active
 * (%)" under "GPU n"), announced at the metric's first value. */
static int emit_gpu_sample(void *ctx, const struct gt_rec_gpu_sample *r)
{
	struct pf *f = ctx;
	struct gt_gm_gpu *gm = gt_gm_gpu(&f->m.gm, &f->m.cat, r->hdr.pid, r->device_id, NULL);
	struct gt_timeline_gpu *g;

	if (!gm)
		return 0; /* no GPU_METRIC record said what its values are */
	g = gt_timeline_gpu(&f->m, r->hdr.pid, r->device_id);
	if (!g)
		return -ENOMEM;
	for (unsigned i = 0; i < gm->nmetrics; i++) {
		char name[160], *n, *p, *pm, *dm, *tm;
		const char *s;
		size_t len = 0;
		double v;

		if (!gt_gm_value(gm, r, i, &v))
			continue;
		if (!g->uuid_metric[i]) {
			announce_gpu(f, g);
			g->uuid_metric[i] = f->next_uuid++;
			s = text(f, gm->m[i].name_id, &len);
			n = name;
			if (len) {
				len = len < 96 ? len : 96;
				memcpy(n, s, len);
				n += len;
			}
			s = text(f, gm->m[i].unit_id, &len);
			if (len) {
				len = len < 32 ? len : 32;
				n = stpcpy(n, " (");
				memcpy(n, s, len);
				n = stpcpy(n + len, ")");
			}
			p = desc_open(f, 200, g->uuid_metric[i], g->uuid_track, &pm, &dm);
			p = gt_pb_bytes(p, TD_NAME, name, (size_t)(n - name));
			p = gt_pb_open(p, TD_COUNTER, &tm);
			p = gt_pb_close(p, tm);
			desc_close(f, p, pm, dm);
		}
		p = pkt_open(f, 48, &pm);
		p = put_ts(f, p, r->ts_ns);
		p = gt_pb_open(p, PKT_TRACK_EVENT, &tm);
		p = gt_pb_uint(p, TE_TYPE, TYPE_COUNTER);
		p = gt_pb_uint(p, TE_TRACK_UUID, g->uuid_metric[i]);
		p = gt_pb_double(p, TE_DOUBLE_COUNTER_VALUE, v);
		ev_close(f, p, pm, tm);
		f->counters++;
	}
	return 0;
}

/* An instant on a process track. */
static char *proc_instant(struct pf *f, uint32_t pid, struct ev *e, enum cat cat, uint64_t ts,
                          size_t extra, char **pm, char **tm)
{
	struct gt_timeline_proc *pr = gt_timeline_proc(&f->m, pid);

	if (!pr)
		return NULL;
	announce_proc(f, pr);
	e->ts_ns = ts;
	e->uuid = pr->uuid;
	e->type = TYPE_INSTANT;
	e->cat = cat;
	return ev_open(f, e, extra, pm, tm);
}

static int emit_loss(void *ctx, const struct gt_rec_loss *r)
{
	struct pf *f = ctx;
	const char *src = gt_loss_source_name(r->source);
	const char *kind = gt_record_name(r->kind);
	struct ev e = {0};
	char name[GT_CATALOG_DAMAGE_TEXT + 32];
	char *n = name, *p, *pm, *tm;

	if (r->source == GT_LOSS_FILE) {
		/* what merge or --reindex could not read, in the one wording */
		struct gt_catalog_damage d;

		gt_catalog_damage_of_loss(r, &d);
		n = stpcpy(n, "damaged file: ");
		gt_catalog_damage_text(&d, n, sizeof(name) - (size_t)(n - name));
		n += strlen(n);
	} else {
		n = stpcpy(n, "lost ");
		n = gt_fmt_u64(n, r->count);
		n = stpcpy(n, " records (");
		n = stpcpy(n, src);
		*n++ = ')';
	}
	e.literal = name;
	e.literal_len = (size_t)(n - name);
	p = proc_instant(f, r->hdr.pid, &e, CAT_LOSS, r->ts_ns, 128 + sizeof(name), &pm, &tm);
	if (!p)
		return -ENOMEM;
	p = ann_u64(p, A_COUNT, r->count);
	p = ann_str(p, A_SOURCE, src, strlen(src));
	p = ann_str(p, A_KIND, kind, strlen(kind));
	if (r->source == GT_LOSS_FILE) {
		p = ann_u64(p, A_BYTES, r->bytes);
		p = ann_u64(p, A_RECORDS, r->records);
		p = ann_u64(p, A_MALFORMED, r->malformed);
	}
	ev_close(f, p, pm, tm);
	return 0;
}

static int emit_notice(void *ctx, const struct gt_rec_notice *r)
{
	struct pf *f = ctx;
	const char *s = gt_labels_severity(r->severity);
	struct ev e = {0};
	char *p, *pm, *tm;

	if (name_id(f, &e, r->message_id, false) < 0)
		return -ENOMEM;
	p = proc_instant(f, r->hdr.pid, &e, CAT_NOTICE, r->ts_ns, 96, &pm, &tm);
	if (!p)
		return -ENOMEM;
	p = ann_str(p, A_SEVERITY, s, strlen(s));
	p = ann_u64(p, A_CODE, r->code);
	p = ann_i64(p, A_DETAIL, r->detail);
	ev_close(f, p, pm, tm);
	return 0;
}

static int emit_process_end(void *ctx, const struct gt_rec_process_end *r)
{
	struct pf *f = ctx;
	const char *how = gt_process_end_name(r->how);
	struct ev e = {0};
	char name[96];
	char *n = name, *p, *pm, *tm;

	n = stpcpy(n, "process ");
	n = stpcpy(n, how);
	if (r->how == GT_END_EXIT || r->how == GT_END_SIGNAL) {
		*n++ = ' ';
		n = gt_fmt_i64(n, r->code);
	}
	e.literal = name;
	e.literal_len = (size_t)(n - name);
	p = proc_instant(f, r->hdr.pid, &e, CAT_PROCESS, r->ts_ns, 64, &pm, &tm);
	if (!p)
		return -ENOMEM;
	p = ann_str(p, A_HOW, how, strlen(how));
	p = ann_i64(p, A_CODE, r->code);
	ev_close(f, p, pm, tm);
	return 0;
}

static void pf_process_info(void *ctx, uint32_t pid)
{
	struct pf *f = ctx;
	struct gt_timeline_proc *p = gt_timeline_proc(&f->m, pid);

	/* described as soon as its details arrive */
	if (p && p->info_changed)
		announce_proc(f, p);
}

static void pf_announce_lane(void *ctx, struct gt_track *t, unsigned lane)
{
	announce_lane(ctx, t, lane);
}

static void pf_announce_gpu(void *ctx, struct gt_timeline_gpu *g)
{
	announce_gpu(ctx, g);
}

static const struct gt_timeline_sink pf_sink = {
        .kernel = emit_kernel,
        .memcpy = emit_memcpy,
        .memset = emit_memset,
        .api = emit_api,
        .nvtx = emit_nvtx,
        .sync = emit_sync,
        .graph = emit_graph,
        .overhead = emit_overhead,
        .memory = emit_memory,
        .memory_pool = emit_memory_pool,
        .loss = emit_loss,
        .notice = emit_notice,
        .process_end = emit_process_end,
        .gpu_sample = emit_gpu_sample,
        .process_info = pf_process_info,
        .announce_lane = pf_announce_lane,
        .announce_gpu = pf_announce_gpu,
};

static int perfetto_run(struct gt_reader *r, const struct gt_export_options *opts,
                        struct gt_export_result *res, const char **errmsg)
{
	struct pf f = {0};
	struct gt_steps *own_steps = NULL;
	const union gt_record *rec;
	uint64_t n = 0;
	int ret;

	f.r = r;
	f.next_uuid = 1;
	f.out.fd = -1;
	f.errmsg = "out of memory";
	ret = gt_timeline_init(&f.m, r, opts->demangle != 0, gt_text_utf8_sanitize, 3);
	if (ret < 0)
		goto out;
	f.m.strict_ties = true;
	ret = gt_reader_times(r, &f.times);
	if (ret < 0) {
		snprintf(errbuf, sizeof(errbuf), "reading the trace: %s", strerror(-ret));
		f.errmsg = errbuf;
		goto out;
	}
	f.base_ns = f.times.zero_ns;
	switch (gt_reader_header(r)->info.clock_id) {
	case GT_CLOCK_MONOTONIC:
		f.trace_clock = BUILTIN_CLOCK_MONOTONIC;
		break;
	case GT_CLOCK_MONOTONIC_RAW:
		f.trace_clock = BUILTIN_CLOCK_MONOTONIC_RAW;
		break;
	default:
		f.trace_clock = 0; /* REALTIME: the wall clock is given anyway */
		break;
	}
	ret = gt_export_prescan(r, opts, &f.steps, &own_steps, &f.ops, &f.errmsg);
	if (ret < 0)
		goto out;
	ret = load_stacks(r, &f.stacks, &f.errmsg);
	if (ret < 0)
		goto out;
	ret = gt_outbuf_open(&f.out, opts->out, opts->output, &f.errmsg);
	if (ret < 0)
		goto out;
	if (opts->identity)
		write_uuid_packet(&f, opts->identity);
	write_first_packet(&f);
	write_zero_marker(&f);
	while ((ret = gt_reader_next(r, &rec)) > 0) {
		ret = gt_timeline_observe(&f.m, rec);
		if (ret < 0)
			goto out;
		ret = gt_timeline_dispatch(&f.m, &pf_sink, &f, rec);
		if (ret < 0)
			goto out;
		if (f.out.err) {
			ret = f.out.err;
			break;
		}
		if (opts->progress && (++n & 0xffff) == 0) {
			uint64_t done, total;

			gt_reader_progress(r, &done, &total);
			opts->progress(opts->progress_ctx, done, total);
		}
	}
	if (ret < 0 && !f.out.err) {
		snprintf(errbuf, sizeof(errbuf), "reading the trace: %s", strerror(-ret));
		f.errmsg = errbuf;
		goto out;
	}
	{
		/* the losses, this read's damage with them, as every output says them */
		gt_catalog_read_done(&f.m.cat, gt_reader_status(r));
		write_losses(&f);
	}
	if (opts->identity)
		write_uuid_packet(&f, opts->identity); /* the last packet: the file is whole */
	res->bytes = f.out.bytes;
	ret = gt_outbuf_close(&f.out);
	if (ret < 0) {
		snprintf(errbuf, sizeof(errbuf), "writing %s: %s", opts->output, strerror(-ret));
		f.errmsg = errbuf;
		goto out;
	}
	res->events = f.events;
	res->counters = f.counters;
	res->steps = f.steps_written;
	res->flows = f.m.flows;
	res->lanes = gt_lanes_count(&f.m);
	res->files = 1;
	res->warning = NULL;
out:
	if (ret < 0) {
		gt_outbuf_abort(&f.out);
		*errmsg = f.errmsg;
	}
	gt_timeline_fini(&f.m);
	gt_steps_free(own_steps);
	gt_stacks_free(f.stacks);
	gt_torchops_free(f.ops);
	return ret < 0 ? ret : 0;
}

const struct gt_exporter_ops gt_exporter_perfetto = {
        .name = "perfetto",
        .extension = ".pftrace",
        .help = "Perfetto native protobuf (ui.perfetto.dev), smaller and faster to load",
        .write = perfetto_run,
        .stale = gt_export_stale_pieces,
};
