/* Check suite for the perfetto exporter (exporters/formats/perfetto.c,
 * exporters/formats/protobuf.c): a test decoder walks every TracePacket and checks the sequence,
 * the interning, the track descriptors, that BEGIN/END pairs rebuild the intended slices on every
 * track when sorted by timestamp as Perfetto does, exact counts per category and paired flows, on
 * the synthetic fixture and on the traces recorded on an H200 in tests/data. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "protobuf.h"
#include "timeline.h"
#define FX_TEST_TAG "perfetto"
#include "export-test.h"
#include "exporter.h"
#include "flow-shapes.h"

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long n;

	ck_assert_ptr_nonnull(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc((size_t)n + 1);
	ck_assert_uint_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return buf;
}

/* ------------------------------------------------------------------------------------ */
/* The decoder                                                                            */

#define MAX_IIDS   16384
#define MAX_TRACKS 256
#define MAX_ANN    64

struct track {
	uint64_t uuid, parent;
	bool process, thread, counter;
	int64_t pid, tid;
	char name[1200];
};

struct event {
	uint64_t ts;
	uint64_t uuid;
	unsigned type;
	unsigned cat;     /* category iid */
	const char *name; /* points into the decoder's tables */
	int64_t counter;
	size_t order;      /* position in the file */
	uint64_t flow_out; /* flow_ids, 0 if none (the exporter writes at most one) */
	uint64_t flow_in;  /* terminating_flow_ids, 0 if none */
	int64_t corr;      /* the "correlation" annotation, -1 if none */
};

struct decoded {
	char *names[MAX_IIDS]; /* event names by iid */
	char *cats[MAX_IIDS];  /* categories by iid */
	char *anns[MAX_IIDS];  /* debug annotation names by iid */
	char *vals[MAX_IIDS];  /* interned annotation string values by iid */
	struct track tracks[MAX_TRACKS];
	size_t ntracks;
	struct event *ev;
	size_t nev, cap;
	uint64_t *flow_out, *flow_in;
	size_t nout, nin, cap_out, cap_in;
	char literal[64][128]; /* non-interned names, deduplicated */
	size_t nliteral;
	size_t packets;
	uint64_t rel_base; /* BOOTTIME of the relative clock's 0 */
	uint64_t snap_boot, snap_mono, snap_real; /* the snapshot's other clocks (0: absent) */
	bool have_snapshot;
	uint64_t default_clock;
	/* the losses' metadata (ChromeEventBundle.metadata): name, and a string or an integer */
	char meta_name[16][64], meta_str[16][512];
	uint64_t meta_int[16];
	size_t nmeta, bundles;
};

static char *dup_bytes(const uint8_t *p, size_t n)
{
	char *s = malloc(n + 1);

	memcpy(s, p, n);
	s[n] = '\0';
	return s;
}

static struct track *find_track(struct decoded *d, uint64_t uuid)
{
	for (size_t i = 0; i < d->ntracks; i++)
		if (d->tracks[i].uuid == uuid)
			return &d->tracks[i];
	return NULL;
}

static void decode_interned(struct decoded *d, const uint8_t *p, const uint8_t *end)
{
	struct gt_pb_field f, g;

	while (gt_pb_next(&p, end, &f) > 0) {
		const uint8_t *q = f.data, *qe = f.data + f.len;
		uint64_t iid = 0;
		char *name = NULL;
		char **table;

		ck_assert_int_eq(f.wire, GT_PB_LEN);
		ck_assert((f.field >= 1 && f.field <= 3) || f.field == 29);
		table = f.field == 1   ? d->cats
		        : f.field == 2 ? d->names
		        : f.field == 3 ? d->anns
		                       : d->vals;
		while (gt_pb_next(&q, qe, &g) > 0) {
			if (g.field == 1)
				iid = g.value;
			else if (g.field == 2)
				name = dup_bytes(g.data, g.len);
		}
		ck_assert(q == qe);
		ck_assert_uint_gt(iid, 0);
		ck_assert_uint_lt(iid, MAX_IIDS);
		ck_assert_ptr_nonnull(name);
		ck_assert_msg(table[iid] == NULL, "iid %llu interned twice",
		              (unsigned long long)iid);
		table[iid] = name;
	}
}

static void decode_descriptor(struct decoded *d, const uint8_t *p, const uint8_t *end)
{
	struct gt_pb_field f, g;
	struct track t = {0}, *old;

	while (gt_pb_next(&p, end, &f) > 0) {
		const uint8_t *q = f.data, *qe = f.data + f.len;

		switch (f.field) {
		case 1:
			t.uuid = f.value;
			break;
		case 2:
			ck_assert_uint_lt(f.len, sizeof(t.name));
			memcpy(t.name, f.data, f.len);
			break;
		case 3: /* ProcessDescriptor */
			t.process = true;
			while (gt_pb_next(&q, qe, &g) > 0) {
				if (g.field == 1)
					t.pid = (int64_t)g.value;
				else if (g.field == 6)
					memcpy(t.name, g.data, g.len < 1199 ? g.len : 1199);
			}
			break;
		case 4: /* ThreadDescriptor */
			t.thread = true;
			while (gt_pb_next(&q, qe, &g) > 0) {
				if (g.field == 1)
					t.pid = (int64_t)g.value;
				else if (g.field == 2)
					t.tid = (int64_t)g.value;
				else if (g.field == 5)
					memcpy(t.name, g.data, g.len < 1199 ? g.len : 1199);
			}
			break;
		case 5:
			t.parent = f.value;
			break;
		case 8:
			t.counter = true;
			break;
		default:
			ck_abort_msg("unexpected TrackDescriptor field %u", f.field);
		}
	}
	ck_assert_uint_gt(t.uuid, 0);
	if (t.parent)
		ck_assert_msg(find_track(d, t.parent) != NULL, "parent %llu described later",
		              (unsigned long long)t.parent);
	old = find_track(d, t.uuid);
	if (old) {
		/* described again (a name arrived later): same kind of track */
		ck_assert(old->thread == t.thread && old->process == t.process &&
		          old->parent == t.parent);
		*old = t;
		return;
	}
	ck_assert_uint_lt(d->ntracks, MAX_TRACKS);
	d->tracks[d->ntracks++] = t;
}

static void push_flow(uint64_t **arr, size_t *n, size_t *cap, uint64_t v)
{
	if (*n == *cap) {
		*cap = *cap ? *cap * 2 : 1024;
		*arr = realloc(*arr, *cap * sizeof(**arr));
	}
	(*arr)[(*n)++] = v;
}

static void decode_event(struct decoded *d, uint64_t ts, const uint8_t *p, const uint8_t *end)
{
	struct gt_pb_field f, g;
	struct event e = {.ts = ts, .order = d->nev, .corr = -1};

	while (gt_pb_next(&p, end, &f) > 0) {
		switch (f.field) {
		case 9:
			e.type = (unsigned)f.value;
			break;
		case 11:
			e.uuid = f.value;
			break;
		case 3:
			ck_assert_ptr_nonnull(d->cats[f.value]);
			e.cat = (unsigned)f.value;
			break;
		case 10:
			ck_assert_uint_lt(f.value, MAX_IIDS);
			ck_assert_msg(d->names[f.value] != NULL,
			              "name iid %llu used before interned",
			              (unsigned long long)f.value);
			e.name = d->names[f.value];
			break;
		case 23: {
			size_t k;

			for (k = 0; k < d->nliteral; k++)
				if (strlen(d->literal[k]) == f.len &&
				    memcmp(d->literal[k], f.data, f.len) == 0)
					break;
			if (k == d->nliteral) {
				ck_assert_uint_lt(d->nliteral, 64);
				ck_assert_uint_lt(f.len, 128);
				memcpy(d->literal[k], f.data, f.len);
				d->literal[k][f.len] = '\0';
				d->nliteral++;
			}
			e.name = d->literal[k];
			break;
		}
		case 30:
			e.counter = (int64_t)f.value;
			break;
		case 47:
			ck_assert_int_eq(f.wire, GT_PB_I64);
			ck_assert_uint_eq(e.flow_out, 0);
			ck_assert_uint_ne(f.value, 0);
			e.flow_out = f.value;
			push_flow(&d->flow_out, &d->nout, &d->cap_out, f.value);
			break;
		case 48:
			ck_assert_int_eq(f.wire, GT_PB_I64);
			ck_assert_uint_eq(e.flow_in, 0);
			ck_assert_uint_ne(f.value, 0);
			e.flow_in = f.value;
			push_flow(&d->flow_in, &d->nin, &d->cap_in, f.value);
			break;
		case 4: {
			const uint8_t *q = f.data, *qe = f.data + f.len;
			int values = 0;
			bool corr = false;

			while (gt_pb_next(&q, qe, &g) > 0) {
				if (g.field == 1) {
					ck_assert_msg(g.value < MAX_IIDS && d->anns[g.value],
					              "annotation name iid %llu not interned",
					              (unsigned long long)g.value);
					corr = strcmp(d->anns[g.value], "correlation") == 0;
				} else if (g.field == 3 && corr) {
					e.corr = (int64_t)g.value;
					values++;
				} else if (g.field >= 2 && g.field <= 6)
					values++;
				else if (g.field == 17) {
					ck_assert_msg(g.value < MAX_IIDS && d->vals[g.value],
					              "annotation value iid %llu not interned",
					              (unsigned long long)g.value);
					values++;
				}
			}
			ck_assert(q == qe);
			ck_assert_int_eq(values, 1);
			break;
		}
		default:
			ck_abort_msg("unexpected TrackEvent field %u", f.field);
		}
	}
	ck_assert_msg(find_track(d, e.uuid) != NULL, "event on undescribed track %llu",
	              (unsigned long long)e.uuid);
	ck_assert(e.type >= 1 && e.type <= 4);
	if (e.type == 1 || e.type == 3)
		ck_assert_ptr_nonnull(e.name);
	if (d->nev == d->cap) {
		d->cap = d->cap ? d->cap * 2 : 4096;
		d->ev = realloc(d->ev, d->cap * sizeof(*d->ev));
	}
	d->ev[d->nev++] = e;
}

static void decode_metadata(struct decoded *d, const uint8_t *p, const uint8_t *end)
{
	struct gt_pb_field f, g;

	d->bundles++;
	while (gt_pb_next(&p, end, &f) > 0) {
		const uint8_t *q = f.data, *qe = f.data + f.len;
		size_t i = d->nmeta++;

		ck_assert_uint_eq(f.field, 2);
		ck_assert_uint_lt(i, 16);
		while (gt_pb_next(&q, qe, &g) > 0) {
			if (g.field == 1) {
				ck_assert_uint_lt(g.len, 64);
				memcpy(d->meta_name[i], g.data, g.len);
			} else if (g.field == 2) {
				ck_assert_uint_lt(g.len, 512);
				memcpy(d->meta_str[i], g.data, g.len);
			} else {
				ck_assert_uint_eq(g.field, 4);
				d->meta_int[i] = g.value;
			}
		}
	}
}

/* The metadata entry `name`: its string, and its integer into *v. */
static const char *meta(const struct decoded *d, const char *name, uint64_t *v)
{
	for (size_t i = 0; i < d->nmeta; i++) {
		if (strcmp(d->meta_name[i], name) != 0)
			continue;
		if (v)
			*v = d->meta_int[i];
		return d->meta_str[i];
	}
	ck_abort_msg("no metadata %s", name);
	return NULL;
}

static void decode(struct decoded *d, const uint8_t *buf, size_t len)
{
	const uint8_t *p = buf, *end = buf + len;
	struct gt_pb_field pkt, f;
	int ret;

	memset(d, 0, sizeof(*d));
	while ((ret = gt_pb_next(&p, end, &pkt)) > 0) {
		const uint8_t *q = pkt.data, *qe = pkt.data + pkt.len;
		const uint8_t *te = NULL, *td = NULL;
		size_t te_len = 0, td_len = 0;
		uint64_t ts = 0, seq = 0, flags = 0, clock = 0;
		bool has_ts = false;

		ck_assert_uint_eq(pkt.field, 1);
		ck_assert_int_eq(pkt.wire, GT_PB_LEN);
		while ((ret = gt_pb_next(&q, qe, &f)) > 0) {
			switch (f.field) {
			case 8:
				ts = f.value;
				has_ts = true;
				break;
			case 58:
				clock = f.value;
				break;
			case 59: { /* TracePacketDefaults: only the clock */
				const uint8_t *r = f.data, *re = f.data + f.len;
				struct gt_pb_field g;

				while (gt_pb_next(&r, re, &g) > 0) {
					ck_assert_uint_eq(g.field, 58);
					d->default_clock = g.value;
				}
				break;
			}
			case 6: { /* ClockSnapshot: relative clock 64 at t <-> BOOTTIME at b */
				const uint8_t *r = f.data, *re = f.data + f.len;
				struct gt_pb_field g, h;
				uint64_t rel = 0, boot = 0;

				while (gt_pb_next(&r, re, &g) > 0) {
					const uint8_t *c = g.data, *ce = g.data + g.len;
					uint64_t id = 0, v = 0;

					ck_assert_uint_eq(g.field, 1);
					while (gt_pb_next(&c, ce, &h) > 0) {
						if (h.field == 1)
							id = h.value;
						else if (h.field == 2)
							v = h.value;
					}
					if (id == 64)
						rel = v;
					else if (id == 6)
						boot = v;
					else if (id == 3)
						d->snap_mono = v;
					else if (id == 1)
						d->snap_real = v;
					else
						ck_abort_msg(
						        "unexpected clock %llu in the snapshot",
						        (unsigned long long)id);
				}
				d->snap_boot = boot;
				d->rel_base = boot - rel;
				d->have_snapshot = true;
				break;
			}
			case 10:
				seq = f.value;
				break;
			case 13:
				flags = f.value;
				break;
			case 12:
				/* interned data comes with the packet that first uses it */
				decode_interned(d, f.data, f.data + f.len);
				break;
			case 11:
				te = f.data;
				te_len = f.len;
				break;
			case 60:
				td = f.data;
				td_len = f.len;
				break;
			case 5: /* ChromeEventBundle: only metadata */
				decode_metadata(d, f.data, f.data + f.len);
				break;
			default:
				ck_abort_msg("unexpected TracePacket field %u", f.field);
			}
		}
		ck_assert_int_eq(ret, 0);
		ck_assert_uint_eq(seq, 1);
		if (d->packets == 0)
			ck_assert_uint_eq(flags, 1); /* SEQ_INCREMENTAL_STATE_CLEARED */
		else
			ck_assert(flags == 0 || flags == 2);
		if (td)
			decode_descriptor(d, td, td + td_len);
		if (te) {
			ck_assert(has_ts);
			if (clock == 0) {
				/* the sequence default: our relative clock */
				ck_assert_uint_eq(d->default_clock, 64);
				ck_assert(d->have_snapshot);
				ts += d->rel_base;
			} else {
				ck_assert_uint_eq(clock, 6);
			}
			decode_event(d, ts, te, te + te_len);
		}
		d->packets++;
	}
	ck_assert_int_eq(ret, 0);
}

static void decoded_free(struct decoded *d)
{
	for (size_t i = 0; i < MAX_IIDS; i++) {
		free(d->names[i]);
		free(d->cats[i]);
		free(d->anns[i]);
		free(d->vals[i]);
	}
	free(d->ev);
	free(d->flow_out);
	free(d->flow_in);
}

/* Every flow end has exactly one start with its id, and no other end shares it. */
static void check_flow_pairs(const struct decoded *d)
{
	for (size_t i = 0; i < d->nin; i++) {
		size_t origins = 0, ends = 0;

		for (size_t k = 0; k < d->nout; k++)
			origins += d->flow_out[k] == d->flow_in[i];
		for (size_t k = 0; k < d->nin; k++)
			ends += d->flow_in[k] == d->flow_in[i];
		ck_assert_uint_eq(origins, 1);
		ck_assert_uint_eq(ends, 1);
	}
}

/* An arrow as Perfetto's importer draws it. */
struct arrow {
	const struct event *from, *to;
};

static int ev_ts_cmp(const void *a, const void *b)
{
	const struct event *x = *(const struct event *const *)a;
	const struct event *y = *(const struct event *const *)b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->order < y->order ? -1 : 1;
}

/* Link flows the way trace_processor does (it sorts by timestamp first, keeping file order
 * at equal times): an id in flow_ids begins a flow at the first event carrying it and steps
 * it at each later one; terminating_flow_ids ends an active flow and is ignored otherwise.
 * Returns the arrows (the caller frees *out) and their number. Call before replay(), which
 * reorders d->ev. */
static size_t link_flows(const struct decoded *d, struct arrow **out)
{
	const struct event **ev = malloc((d->nev + 1) * sizeof(*ev));
	size_t cap = 1024, nev = 0, n = 0;
	struct arrow *a = malloc((d->nev + 1) * sizeof(*a));
	struct {
		uint64_t id; /* 0: empty */
		const struct event *at;
		bool gone;
	} * active;

	while (cap < 4 * d->nev)
		cap *= 2;
	active = calloc(cap, sizeof(*active));
	for (size_t i = 0; i < d->nev; i++)
		if (d->ev[i].flow_out || d->ev[i].flow_in)
			ev[nev++] = &d->ev[i];
	qsort(ev, nev, sizeof(*ev), ev_ts_cmp);
	for (size_t i = 0; i < nev; i++) {
		const struct event *e = ev[i];
		size_t k;

		if (e->flow_out) {
			for (k = (e->flow_out * 0x9e3779b97f4a7c15ull) & (cap - 1);
			     active[k].id && active[k].id != e->flow_out; k = (k + 1) & (cap - 1))
				;
			if (active[k].id && !active[k].gone) {
				a[n].from = active[k].at;
				a[n++].to = e;
			}
			active[k].id = e->flow_out;
			active[k].at = e;
			active[k].gone = false;
		}
		if (e->flow_in) {
			for (k = (e->flow_in * 0x9e3779b97f4a7c15ull) & (cap - 1);
			     active[k].id && active[k].id != e->flow_in; k = (k + 1) & (cap - 1))
				;
			if (active[k].id && !active[k].gone) {
				a[n].from = active[k].at;
				a[n++].to = e;
				active[k].gone = true; /* ended; a later flow_ids begins it anew */
			}
		}
	}
	free(ev);
	free(active);
	*out = a;
	return n;
}

static int ev_cmp(const void *a, const void *b)
{
	const struct event *x = a, *y = b;

	if (x->uuid != y->uuid)
		return x->uuid < y->uuid ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->order < y->order ? -1 : 1; /* Perfetto keeps file order at equal times */
}

/* Intended durations of the fixture's slices, by name (0: not checked). */
static uint64_t expected_dur(const char *name)
{
	static const struct {
		const char *name;
		uint64_t dur;
	} tab[] = {
	        {"cudaLaunchKernel", 6000 / 3 - 10},
	        {"cuLaunchKernel", 3000 / 3 - 1500 / 3},
	        {"cudaMemcpyAsync", 2000},
	        {"cudaMemsetAsync", 400},
	        {"cudaStreamSynchronize", 10000},
	        {"Stream Synchronize", 10000},
	        {"step", 90000},
	        {"load", 50000},
	        {"prefetch", 55000},
	        {"Memcpy HtoD (Pageable -> Device)", 10000},
	        {"Memset (Device)", 1000},
	};

	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++)
		if (strcmp(tab[i].name, name) == 0)
			return tab[i].dur;
	if (strncmp(name, "ProfilerStep#", 13) == 0)
		return 90000; /* the "step" ranges, named as steps */
	return 20000 / 3; /* kernels */
}

/* Replay BEGIN/END per track as Perfetto does; check each slice got its own END and, with
 * check_dur, the fixture's intended duration. Returns the number of slices per category
 * iid in counts[]. */
static void replay(struct decoded *d, uint64_t *counts, bool check_dur)
{
	qsort(d->ev, d->nev, sizeof(*d->ev), ev_cmp);
	for (size_t i = 0; i < d->nev;) {
		const struct event *stack[64];
		int depth = 0;
		size_t k = i;

		for (; k < d->nev && d->ev[k].uuid == d->ev[i].uuid; k++) {
			const struct event *e = &d->ev[k];

			if (e->type == 1) {
				ck_assert_int_lt(depth, 64);
				stack[depth++] = e;
			} else if (e->type == 2) {
				const struct event *b;

				ck_assert_msg(depth > 0, "END without BEGIN on track %llu",
				              (unsigned long long)e->uuid);
				b = stack[--depth];
				ck_assert_msg(!check_dur || e->ts - b->ts == expected_dur(b->name),
				              "slice %.40s got %llu ns, not %llu", b->name,
				              (unsigned long long)(e->ts - b->ts),
				              (unsigned long long)expected_dur(b->name));
				counts[b->cat]++;
			} else {
				counts[e->cat]++;
			}
		}
		ck_assert_msg(depth == 0, "unfinished slice on track %llu",
		              (unsigned long long)d->ev[i].uuid);
		i = k;
	}
}

static unsigned cat_iid(const struct decoded *d, const char *name)
{
	for (unsigned i = 1; i < MAX_IIDS; i++)
		if (d->cats[i] && strcmp(d->cats[i], name) == 0)
			return i;
	ck_abort_msg("category %s not interned", name);
	return 0;
}

/* ------------------------------------------------------------------------------------ */

START_TEST(test_structure_and_counts)
{
	char out[160];
	struct gt_export_result res;
	struct decoded d;
	uint64_t counts[MAX_IIDS] = {0}, marks = 0, counters = 0;
	uint8_t *buf;
	size_t len;

	snprintf(out, sizeof(out), "%s/out.pftrace", dir);
	ck_assert_int_eq(export("perfetto", out, 0, 1, &res), 0);
	ck_assert_uint_eq(res.events, fxe.events);
	ck_assert_uint_eq(res.files, 1);
	buf = slurp(out, &len);
	ck_assert_uint_eq(len, res.bytes);
	decode(&d, buf, len);
	for (size_t i = 0; i < d.nev; i++) {
		marks += d.ev[i].type == 3 && d.ev[i].cat == cat_iid(&d, "user_annotation");
		counters += d.ev[i].type == 4;
	}
	{
		/* the first NVTX range of pid 1000 starts at T0 + 7000 on the trace clock; a
		 * training step ("step"), named as the chrome export names it */
		bool found = false;

		for (size_t i = 0; i < d.nev; i++)
			found |= d.ev[i].type == 1 && d.ev[i].ts == FX_T0 + 7000 &&
			         strcmp(d.ev[i].name, "ProfilerStep#0") == 0;
		ck_assert(found);
	}
	replay(&d, counts, true);
	ck_assert_uint_eq(counts[cat_iid(&d, "kernel")], fxe.kernels);
	ck_assert_uint_eq(counts[cat_iid(&d, "gpu_memcpy")], fxe.memcpys);
	ck_assert_uint_eq(counts[cat_iid(&d, "gpu_memset")], fxe.memsets);
	ck_assert_uint_eq(counts[cat_iid(&d, "cuda_sync")], fxe.syncs);
	ck_assert_uint_eq(counts[cat_iid(&d, "cuda_runtime")], fxe.runtime);
	ck_assert_uint_eq(counts[cat_iid(&d, "cuda_driver")], fxe.driver);
	ck_assert_uint_eq(counts[cat_iid(&d, "user_annotation")], fxe.nvtx_ranges + fxe.nvtx_marks);
	ck_assert_uint_eq(marks, fxe.nvtx_marks);
	ck_assert_uint_eq(counts[cat_iid(&d, "loss")], fxe.losses);
	ck_assert_uint_eq(counts[cat_iid(&d, "notice")], fxe.notices);
	ck_assert_uint_eq(counts[cat_iid(&d, "process")], fxe.ends);
	ck_assert_uint_eq(counters, fxe.memory);
	{
		/* the losses, once, as metadata: each process lost 5 API calls to a full ring */
		char want[64];
		uint64_t v = 1;

		snprintf(want, sizeof(want), "%llu records lost (ring_full %llu)",
		         (unsigned long long)fxe.losses * 5, (unsigned long long)fxe.losses * 5);
		ck_assert_uint_eq(d.bundles, 1);
		ck_assert_uint_eq(d.nmeta, 8);
		ck_assert_str_eq(meta(&d, "gputrace.losses", NULL), want);
		meta(&d, "gputrace.lost_records", &v);
		ck_assert_uint_eq(v, fxe.losses * 5);
		ck_assert_str_eq(meta(&d, "gputrace.damaged_file", NULL), "none");
		meta(&d, "gputrace.damaged_chunks", &v);
		ck_assert_uint_eq(v, 0);
		meta(&d, "gputrace.recovered", &v);
		ck_assert_uint_eq(v, 0);
	}
	decoded_free(&d);
	free(buf);
}
END_TEST

/* Processes and threads as in the JSON: the traced processes and a pseudo-process per GPU;
 * every lane a thread with the JSON's pid and tid (docs/exporters.md). */
START_TEST(test_tracks)
{
	char out[160];
	struct gt_export_result res;
	struct decoded d;
	uint8_t *buf;
	size_t len;
	unsigned procs = 0, gpus = 0, mains = 0, syncs = 0, streams = 0, counters = 0, nvtx = 0;
	unsigned zero_tracks = 0;

	snprintf(out, sizeof(out), "%s/tracks.pftrace", dir);
	ck_assert_int_eq(export("perfetto", out, 0, 1, &res), 0);
	buf = slurp(out, &len);
	decode(&d, buf, len);
	for (size_t i = 0; i < d.ntracks; i++) {
		const struct track *t = &d.tracks[i];
		const struct track *parent = t->parent ? find_track(&d, t->parent) : NULL;

		if (t->process && t->pid >= GT_GPU_PID_BASE) {
			gpus++;
			ck_assert_ptr_null(parent);
			ck_assert(t->pid == GT_GPU_PID_BASE || t->pid == GT_GPU_PID_BASE + 1);
			ck_assert_str_eq(t->name, t->pid == GT_GPU_PID_BASE ? "GPU 0" : "GPU 1");
		} else if (t->process) {
			procs++;
			ck_assert_ptr_null(parent);
			ck_assert_str_eq(t->name, t->pid == FX_PID0 ? "python3 (rank 0)"
			                                            : "python3 (rank 1)");
		} else if (t->counter) {
			counters++;
			ck_assert_str_eq(t->name, "memory in use");
			ck_assert(parent && parent->process && parent->pid >= GT_GPU_PID_BASE);
		} else if (!t->thread) {
			/* the track of the instant at the trace's zero, on its own */
			zero_tracks++;
			ck_assert_ptr_null(parent);
			ck_assert_str_eq(t->name, "trace");
		} else {
			/* a lane: a thread of the process its parent track describes */
			ck_assert(t->thread);
			ck_assert(parent && parent->process && parent->pid == t->pid);
			if (strcmp(t->name, "main \"loop\"") == 0) {
				mains++;
				ck_assert_int_eq(t->tid, t->pid);
			} else if (strcmp(t->name, "main \"loop\" sync") == 0) {
				syncs++;
				ck_assert_int_eq(t->tid, t->pid | 16 << GT_LANE_SHIFT);
			} else if (strcmp(t->name, "stream 7") == 0) {
				streams++;
				ck_assert_int_ge(t->pid, GT_GPU_PID_BASE);
				ck_assert_int_eq(t->tid, 7);
			} else if (strcmp(t->name, "NVTX ranges") == 0) {
				nvtx++;
				ck_assert_int_eq(t->tid, GT_LANE_NVTX_TID);
			} else {
				nvtx++;
				ck_assert_str_eq(t->name, "NVTX ranges (overlap 1)");
				ck_assert_int_eq(t->tid, GT_LANE_NVTX_TID + 1);
			}
		}
	}
	ck_assert_uint_eq(procs, fxo.procs);
	ck_assert_uint_eq(gpus, fxo.procs);
	ck_assert_uint_eq(mains, fxo.procs);
	ck_assert_uint_eq(syncs, fxo.procs);
	ck_assert_uint_eq(streams, fxo.procs);
	ck_assert_uint_eq(counters, fxo.procs);
	ck_assert_uint_eq(nvtx, 2 * fxo.procs); /* load and prefetch cross: two lanes */
	ck_assert_uint_eq(zero_tracks, 1);
	ck_assert_uint_eq(res.lanes, mains + syncs + streams + nvtx);
	decoded_free(&d);
	free(buf);
}
END_TEST

/* The time base (docs/cli.md, "Time"): the fixture's zero is its header's start, FX_T0, at
 * 1,700,000,000 s on the wall clock. The first event is the instant "trace start" there, on
 * a track of its own, and the clock snapshot ties the trace clock (MONOTONIC, shown as
 * BOOTTIME) to REALTIME at that moment; a window starts its file at the same zero. */
START_TEST(test_zero)
{
	char out[160];
	struct gt_export_result res;
	struct decoded d;
	uint8_t *buf;
	size_t len;

	for (int windowed = 0; windowed < 2; windowed++) {
		snprintf(out, sizeof(out), "%s/zero-%d.pftrace", dir, windowed);
		if (windowed)
			ck_assert_int_eq(export_window("perfetto", out, FX_T0 + 2000000,
			                               FX_T0 + 3000000, &res),
			                 0);
		else
			ck_assert_int_eq(export("perfetto", out, 0, 1, &res), 0);
		buf = slurp(out, &len);
		decode(&d, buf, len);
		ck_assert_uint_eq(d.snap_boot, FX_T0);
		ck_assert_uint_eq(d.snap_mono, FX_T0);
		ck_assert_uint_eq(d.snap_real, 1700000000000000000ull);
		ck_assert_uint_ge(d.nev, 2);
		ck_assert_uint_eq(d.ev[0].type, 3); /* TYPE_INSTANT */
		ck_assert_str_eq(d.ev[0].name, "trace start");
		ck_assert_str_eq(d.cats[d.ev[0].cat], "trace");
		ck_assert_uint_eq(d.ev[0].ts, FX_T0);
		ck_assert_str_eq(find_track(&d, d.ev[0].uuid)->name, "trace");
		for (size_t i = 1; i < d.nev; i++)
			ck_assert_uint_ge(d.ev[i].ts, windowed ? FX_T0 + 2000000 : FX_T0);
		decoded_free(&d);
		free(buf);
	}
}
END_TEST

START_TEST(test_flows)
{
	char out[160];
	struct gt_export_result res;
	struct decoded d;
	uint8_t *buf;
	size_t len;

	snprintf(out, sizeof(out), "%s/flows.pftrace", dir);
	ck_assert_int_eq(export("perfetto", out, 0, 1, &res), 0);
	buf = slurp(out, &len);
	decode(&d, buf, len);
	/* every API call with a correlation id opens a flow; the GPU work ends one each */
	ck_assert_uint_eq(d.nout, fxe.runtime + fxe.driver);
	ck_assert_uint_eq(d.nin, fxe.flows);
	check_flow_pairs(&d);
	decoded_free(&d);
	free(buf);
}
END_TEST

START_TEST(test_names)
{
	char out[160];
	struct gt_export_result res;
	struct decoded d;
	uint8_t *buf;
	size_t len;
	bool quote = false, bad = false, longname = false, dem = false;

	snprintf(out, sizeof(out), "%s/names.pftrace", dir);
	ck_assert_int_eq(export("perfetto", out, 0, 1, &res), 0);
	buf = slurp(out, &len);
	decode(&d, buf, len);
	for (unsigned i = 1; i < MAX_IIDS; i++) {
		const char *n = d.names[i];

		if (!n)
			continue;
		quote |= strcmp(n, "quote\"kernel") == 0;
		bad |= strcmp(n, "bad\xef\xbf\xbd\xef\xbf\xbd utf8 \xef\xbf\xbd\xef\xbf\xbd") == 0;
		dem |= strcmp(n, "kernel(float*)") == 0;
		longname |= strncmp(n, "void f<VeryLong", 15) == 0 && strlen(n) > 12000;
	}
	ck_assert(quote && bad && dem && longname);
	decoded_free(&d);
	free(buf);
}
END_TEST

START_TEST(test_protoc_decode_raw)
{
	char out[160], cmd[400];
	struct gt_export_result res;

	if (system("command -v protoc >/dev/null 2>&1") != 0) {
		fprintf(stderr, "protoc not installed: decode_raw check skipped\n");
		return;
	}
	snprintf(out, sizeof(out), "%s/raw.pftrace", dir);
	ck_assert_int_eq(export("perfetto", out, 0, 1, &res), 0);
	snprintf(cmd, sizeof(cmd), "protoc --decode_raw < %s > %s/raw.txt 2>&1", out, dir);
	ck_assert_int_eq(system(cmd), 0);
	snprintf(cmd, sizeof(cmd), "grep -q 'quote\\\\\"kernel' %s/raw.txt", dir);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

START_TEST(test_smaller_than_json)
{
	char out[160];
	struct gt_export_result pf, js;

	snprintf(out, sizeof(out), "%s/size.pftrace", dir);
	ck_assert_int_eq(export("perfetto", out, 0, 1, &pf), 0);
	snprintf(out, sizeof(out), "%s/size.json", dir);
	ck_assert_int_eq(export("chrome", out, 0, 1, &js), 0);
	ck_assert_uint_eq(pf.events, js.events);
	ck_assert_msg(pf.bytes * 3 < js.bytes, "perfetto %llu bytes, json %llu",
	              (unsigned long long)pf.bytes, (unsigned long long)js.bytes);
}
END_TEST

/* ------------------------------------------------------------------------------------ */
/* Flows whatever the order of a launch's records (tests/flow-shapes.h)                  */

/* Export the trace at path with fmt to out. */
static void export_path(const char *path, const char *fmt, const char *out,
                        struct gt_export_result *res)
{
	struct gt_reader *r;
	const char *err = NULL;
	struct gt_export_options o = {.output = out, .demangle = 1};

	memset(res, 0, sizeof(*res));
	ck_assert_msg(gt_reader_open(path, &r, &err) == 0, "%s: %s", path, err);
	ck_assert_msg(gt_export_run(gt_exporter_find(fmt), r, &o, res, &err) == 0, "%s", err);
	gt_reader_close(r);
}

static bool gpu_cat(const struct decoded *d, unsigned cat)
{
	const char *c = d->cats[cat];

	return c && (strcmp(c, "kernel") == 0 || strcmp(c, "gpu_memcpy") == 0 ||
	             strcmp(c, "gpu_memset") == 0 || strcmp(c, "cuda_graph") == 0);
}

/* For a trace too large for the decoder's per-field checks (each Check assert writes a mark
 * point to a pipe): only the TrackEvents' timestamps and flow ids, for link_flows(). */
static void scan_flows(struct decoded *d, const uint8_t *buf, size_t len)
{
	const uint8_t *p = buf, *end = buf + len;
	struct gt_pb_field pkt, f, g;

	memset(d, 0, sizeof(*d));
	while (gt_pb_next(&p, end, &pkt) > 0) {
		const uint8_t *q = pkt.data, *qe = pkt.data + pkt.len;
		struct event e = {.corr = -1};
		bool te = false;

		while (gt_pb_next(&q, qe, &f) > 0) {
			const uint8_t *r = f.data, *re = f.data + f.len;

			if (f.field == 8)
				e.ts = f.value; /* all on the relative clock: the shape starts at
				                   the base */
			if (f.field != 11)
				continue;
			te = true;
			while (gt_pb_next(&r, re, &g) > 0) {
				if (g.field == 9)
					e.type = (unsigned)g.value;
				else if (g.field == 47)
					e.flow_out = g.value;
				else if (g.field == 48)
					e.flow_in = g.value;
			}
		}
		if (!te)
			continue;
		if (d->nev == d->cap) {
			d->cap = d->cap ? d->cap * 2 : 4096;
			d->ev = realloc(d->ev, d->cap * sizeof(*d->ev));
		}
		e.order = d->nev;
		d->ev[d->nev++] = e;
	}
	ck_assert(p == end);
}

/* Each shape: exactly its arrows, as Perfetto links them; each from a runtime call of a
 * traced process to the GPU work of that process written first for its launch. */
START_TEST(test_shape_flows)
{
	const struct shp_shape *sh = &shp_shapes[_i];
	char in[160], out[160];
	struct gt_export_result res;
	struct decoded d;
	struct arrow *arrows;
	uint64_t want, counts[MAX_IIDS] = {0};
	size_t n, cap = 1024, len;
	struct {
		uint64_t key; /* (GPU pid << 32 | correlation) + 1; 0: empty */
		size_t order;
	} * first;
	uint8_t *buf;

	snprintf(in, sizeof(in), "%s/shape-%s.gtrace", dir, sh->name);
	snprintf(out, sizeof(out), "%s/shape-%s.pftrace", dir, sh->name);
	ck_assert_int_eq(shp_write(sh, in, &want), 0);
	export_path(in, "perfetto", out, &res);
	ck_assert_uint_eq(res.flows, want);
	buf = slurp(out, &len);
	if (sh->large) {
		scan_flows(&d, buf, len);
		n = link_flows(&d, &arrows);
		ck_assert_uint_eq(n, want);
		for (size_t i = 0; i < n; i++)
			if (!arrows[i].from->flow_out || arrows[i].to->flow_in == 0 ||
			    arrows[i].from->ts >= arrows[i].to->ts)
				ck_abort_msg("arrow %zu does not go from a call to later GPU work",
				             i);
		free(arrows);
		decoded_free(&d);
		free(buf);
		return;
	}
	decode(&d, buf, len);

	/* the first GPU work of each launch in the file */
	while (cap < 4 * d.nev)
		cap *= 2;
	first = calloc(cap, sizeof(*first));
	for (size_t i = 0; i < d.nev; i++) {
		const struct event *e = &d.ev[i];
		uint64_t key;
		size_t k;

		if (e->type != 1 || !gpu_cat(&d, e->cat) || e->corr <= 0)
			continue;
		key = ((uint64_t)find_track(&d, e->uuid)->pid << 32 | (uint64_t)e->corr) + 1;
		for (k = (key * 0x9e3779b97f4a7c15ull) & (cap - 1);
		     first[k].key && first[k].key != key; k = (k + 1) & (cap - 1))
			;
		if (!first[k].key) {
			first[k].key = key;
			first[k].order = e->order;
		}
	}

	n = link_flows(&d, &arrows);
	ck_assert_uint_eq(n, want);
	for (size_t i = 0; i < n; i++) {
		const struct event *from = arrows[i].from, *to = arrows[i].to;
		const struct track *ft = find_track(&d, from->uuid), *tt = find_track(&d, to->uuid);
		uint64_t key = ((uint64_t)tt->pid << 32 | (uint64_t)to->corr) + 1;
		size_t k;

		ck_assert_uint_eq(from->type, 1);
		ck_assert_str_eq(d.cats[from->cat], "cuda_runtime");
		ck_assert_uint_eq(to->type, 1);
		ck_assert(gpu_cat(&d, to->cat));
		ck_assert_uint_lt(from->ts, to->ts);
		/* process p's calls launch on GPU p (its own GPU, pid 5000000 + p) */
		ck_assert_int_eq(ft->pid - SHP_PID, tt->pid - GT_GPU_PID_BASE);
		for (k = (key * 0x9e3779b97f4a7c15ull) & (cap - 1); first[k].key != key;
		     k = (k + 1) & (cap - 1))
			ck_assert_uint_ne(first[k].key, 0);
		ck_assert_msg(first[k].order == to->order,
		              "arrow to the GPU work of correlation %lld written after the first",
		              (long long)to->corr);
	}
	/* every slice still has its END on its track */
	replay(&d, counts, false);
	free(first);
	free(arrows);
	decoded_free(&d);
	free(buf);
}
END_TEST

START_TEST(test_encoder)
{
	char buf[512], *m, *p;
	const uint8_t *q;
	struct gt_pb_field f;
	char big[300];

	p = gt_pb_uint(buf, 1, 300);
	p = gt_pb_int(p, 2, -1);
	p = gt_pb_fixed64(p, 47, 0x0102030405060708ull);
	memset(big, 'x', sizeof(big));
	p = gt_pb_open(p, 3, &m);
	p = gt_pb_bytes(p, 1, big, sizeof(big));
	p = gt_pb_close(p, m); /* 303-byte body: the length needs two bytes */
	q = (const uint8_t *)buf;
	ck_assert_int_eq(gt_pb_next(&q, (const uint8_t *)p, &f), 1);
	ck_assert_uint_eq(f.field, 1);
	ck_assert_uint_eq(f.value, 300);
	ck_assert_int_eq(gt_pb_next(&q, (const uint8_t *)p, &f), 1);
	ck_assert_uint_eq(f.value, UINT64_MAX);
	ck_assert_int_eq(gt_pb_next(&q, (const uint8_t *)p, &f), 1);
	ck_assert_uint_eq(f.field, 47);
	ck_assert_int_eq(f.wire, GT_PB_I64);
	ck_assert_uint_eq(f.value, 0x0102030405060708ull);
	ck_assert_int_eq(gt_pb_next(&q, (const uint8_t *)p, &f), 1);
	ck_assert_uint_eq(f.field, 3);
	ck_assert_uint_eq(f.len, 303);
	ck_assert_int_eq(gt_pb_next(&q, (const uint8_t *)p, &f), 0);
	/* truncated input is an error, not a crash */
	q = (const uint8_t *)buf;
	ck_assert_int_eq(gt_pb_next(&q, (const uint8_t *)buf + 1, &f), -EBADMSG);
}
END_TEST

/* ------------------------------------------------------------------------------------ */
/* The traces recorded on an H200 (tests/data)                                           */

/* What each recorded trace's protobuf must hold besides real_traces: threads are the
 * distinct tids of api and nvtx rows, streams the distinct stream_id of kernel, memcpy and
 * memset rows (from `gputrace export -f csv`). */
static const struct perfetto_real {
	unsigned threads, streams;
} perfetto_real[REAL_TRACES] = {{.threads = 1, .streams = 3}, {.threads = 9, .streams = 9}};

/* Slices of a category; 0 when the category was never interned. */
static uint64_t cat_count(const struct decoded *d, const uint64_t *counts, const char *name)
{
	for (unsigned i = 1; i < MAX_IIDS; i++)
		if (d->cats[i] && strcmp(d->cats[i], name) == 0)
			return counts[i];
	return 0;
}

/* The decoder already checked, packet by packet, that every track was described before
 * an event used it and every name and annotation was interned before use. */
START_TEST(test_real_trace)
{
	const struct real_trace *x = &real_traces[_i];
	const struct perfetto_real *xp = &perfetto_real[_i];
	char out[160], cmd[400];
	struct gt_export_result res;
	struct decoded d;
	uint64_t counts[MAX_IIDS] = {0}, counters = 0, pool_values = 0, slices = 0;
	uint64_t uuid_memory = 0, uuid_pool = 0;
	int64_t pool_first = -1, pool_last = -1;
	unsigned procs = 0, threads = 0, gpus = 0, streams = 0, memory = 0, pools = 0, syncs = 0;
	unsigned zero_tracks = 0;
	uint8_t *buf;
	size_t len;

	snprintf(out, sizeof(out), "%s/real-%d.pftrace", dir, _i);
	ck_assert_int_eq(export_real(x->file, "perfetto", out, &res), 0);
	ck_assert_uint_eq(res.files, 1);
	ck_assert_uint_eq(res.events, x->events);
	buf = slurp(out, &len);
	ck_assert_uint_eq(len, res.bytes);
	decode(&d, buf, len);

	/* tracks: the process and its threads, the sync lane CUPTI's sync records share (they
	 * carry no thread), GPU 0 as a process with a thread per stream, its memory counter
	 * and, where the trace has memory pools, their counter */
	for (size_t i = 0; i < d.ntracks; i++) {
		const struct track *t = &d.tracks[i];
		const struct track *parent = t->parent ? find_track(&d, t->parent) : NULL;

		if (t->process && t->pid == GT_GPU_PID_BASE) {
			gpus++;
			ck_assert_str_eq(t->name, "GPU 0");
			ck_assert_ptr_null(parent);
		} else if (t->process) {
			procs++;
			ck_assert_int_eq(t->pid, x->pid);
			ck_assert_str_eq(t->name, x->process);
		} else if (t->counter) {
			ck_assert(parent && parent->process && parent->pid == GT_GPU_PID_BASE);
			if (strcmp(t->name, "memory pool reserved") == 0) {
				pools++;
				uuid_pool = t->uuid;
				continue;
			}
			ck_assert_str_eq(t->name, "memory in use");
			memory++;
			uuid_memory = t->uuid;
		} else if (t->pid == GT_GPU_PID_BASE) {
			char name[32];

			ck_assert(t->thread);
			streams++;
			snprintf(name, sizeof(name), "stream %lld", (long long)t->tid);
			ck_assert_str_eq(t->name, name);
			ck_assert(parent && parent->process && parent->pid == GT_GPU_PID_BASE);
		} else if (!t->thread) {
			zero_tracks++;
			ck_assert_str_eq(t->name, "trace");
			ck_assert_ptr_null(parent);
		} else if (strcmp(t->name, "thread 0 sync") == 0) {
			syncs++;
			ck_assert(t->thread);
			ck_assert_int_eq(t->tid, 16 << GT_LANE_SHIFT);
			ck_assert(parent && parent->process && parent->pid == x->pid);
		} else {
			threads++;
			ck_assert(t->thread);
			ck_assert(parent && parent->process && parent->pid == x->pid);
			ck_assert_int_eq(t->pid, x->pid);
		}
	}
	ck_assert_uint_eq(procs, 1);
	ck_assert_uint_eq(threads, xp->threads);
	ck_assert_uint_eq(gpus, 1);
	ck_assert_uint_eq(streams, xp->streams);
	ck_assert_uint_eq(memory, 1);
	ck_assert_uint_eq(pools, x->pools ? 1 : 0);
	ck_assert_uint_eq(syncs, 1);
	ck_assert_uint_eq(zero_tracks, 1);
	ck_assert_uint_eq(res.lanes, threads + streams + syncs);

	/* counter values: on the memory track, and a value per pool record on the pools' */
	for (size_t i = 0; i < d.nev; i++) {
		if (d.ev[i].type != 4)
			continue;
		if (d.ev[i].uuid == uuid_pool) {
			pool_first = pool_values++ ? pool_first : d.ev[i].counter;
			pool_last = d.ev[i].counter;
			continue;
		}
		ck_assert_uint_eq(d.ev[i].uuid, uuid_memory);
		counters++;
	}
	ck_assert_uint_eq(pool_values, x->pools);
	if (x->pools) {
		ck_assert_int_eq(pool_first, x->pool_first);
		ck_assert_int_eq(pool_last, x->pool_last);
	}

	/* every BEGIN has its END on its track; exact slices per category */
	replay(&d, counts, false);
	for (unsigned i = 1; i < MAX_IIDS; i++)
		slices += counts[i];
	ck_assert_uint_eq(cat_count(&d, counts, "kernel"), x->kernel);
	ck_assert_uint_eq(cat_count(&d, counts, "gpu_memcpy"), x->memcpy);
	ck_assert_uint_eq(cat_count(&d, counts, "gpu_memset"), x->memset);
	ck_assert_uint_eq(cat_count(&d, counts, "cuda_runtime"), x->runtime);
	ck_assert_uint_eq(cat_count(&d, counts, "cuda_driver"), 0);
	ck_assert_uint_eq(cat_count(&d, counts, "cuda_sync"), x->sync);
	ck_assert_uint_eq(cat_count(&d, counts, "user_annotation"), x->nvtx);
	ck_assert_uint_eq(cat_count(&d, counts, "process"), 1);
	ck_assert_uint_eq(cat_count(&d, counts, "memory_pool"), x->pools);
	ck_assert_uint_eq(counters, x->counters);
	/* and the instant at the trace's zero, which is not among the events */
	ck_assert_uint_eq(cat_count(&d, counts, "trace"), 1);
	ck_assert_uint_eq(slices - 1 + counters + pool_values, x->events);

	/* flows: every API call with a correlation id opens one; every GPU activity ends
	 * exactly one that some API call opened */
	ck_assert_uint_eq(d.nout, x->runtime);
	ck_assert_uint_eq(d.nin, x->flows);
	check_flow_pairs(&d);
	decoded_free(&d);
	free(buf);

	if (system("command -v protoc >/dev/null 2>&1") != 0) {
		fprintf(stderr, "protoc not installed: decode_raw check skipped\n");
		return;
	}
	snprintf(cmd, sizeof(cmd), "protoc --decode_raw < %s > %s/real-%d.txt", out, dir, _i);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* Kernels whose names and grids are each new: every event interns two fresh names, and the
 * name cache's arena grows (and moves) while the second is cached. Each interned name must
 * still be the kernel's own: before the fix the packet copied the first from where the
 * arena had been (AddressSanitizer: heap-use-after-free; in a plain build, garbage once the
 * freed block is reused or perturbed, as meson's MALLOC_PERTURB_ does). */
START_TEST(test_names_survive_cache_growth)
{
	struct gt_trace_info info = {.clock_id = GT_CLOCK_MONOTONIC, .tool_version = "test"};
	static const char digits[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
	const unsigned n = 4400;
	struct gt_export_result res;
	struct gt_writer *w;
	char in[160], out[160], want[8];
	struct decoded *d = calloc(1, sizeof(*d));
	unsigned seen = 0;
	uint8_t *buf;
	size_t len;

	snprintf(in, sizeof(in), "%s/growth.gtrace", dir);
	snprintf(out, sizeof(out), "%s/growth.pftrace", dir);
	ck_assert_int_eq(gt_writer_open(in, &info, NULL, &w), 0);
	for (unsigned k = 0; k < n; k++) {
		struct gt_rec_kernel r;
		char name[3] = {digits[k % 52], digits[k / 52 % 52], 0};

		ck_assert_int_eq(gt_writer_string(w, 1, k + 1, name, 2), 0);
		memset(&r, 0, sizeof(r));
		r.hdr.type = GT_REC_KERNEL;
		r.hdr.size = sizeof(r);
		r.hdr.pid = 100;
		r.span.start_ns = 1000 + k * 100ull;
		r.span.end_ns = r.span.start_ns + 50;
		r.span.stream_id = 7;
		r.name_id = k + 1;
		/* "(1000000, 1000000, 1000000)": 27 bytes, new each time */
		r.grid_x = r.grid_y = r.grid_z = 1000000 + k;
		r.block_x = r.block_y = r.block_z = 1;
		ck_assert_int_eq(gt_writer_write(w, &r.hdr), 0);
	}
	ck_assert_int_eq(gt_writer_close(w), 0);
	export_path(in, "perfetto", out, &res);
	ck_assert_uint_eq(res.events, n);
	buf = slurp(out, &len);
	decode(d, buf, len);
	for (size_t i = 0; i < d->nev; i++) {
		unsigned k = (unsigned)((d->ev[i].ts - 1000) / 100);

		if (d->ev[i].type != 1) /* TYPE_SLICE_BEGIN */
			continue;
		snprintf(want, sizeof(want), "%c%c", digits[k % 52], digits[k / 52 % 52]);
		ck_assert_msg(d->ev[i].name && strcmp(d->ev[i].name, want) == 0,
		              "kernel %u is named '%s', not '%s'", k,
		              d->ev[i].name ? d->ev[i].name : "(none)", want);
		seen++;
	}
	ck_assert_uint_eq(seen, n);
	decoded_free(d);
	free(d);
	free(buf);
}
END_TEST

static Suite *perfetto_suite(void)
{
	Suite *s = suite_create("perfetto");
	TCase *tc = tcase_create("export");

	tcase_add_unchecked_fixture(tc, setup_once, teardown_once);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_structure_and_counts);
	tcase_add_test(tc, test_tracks);
	tcase_add_test(tc, test_zero);
	tcase_add_test(tc, test_flows);
	tcase_add_test(tc, test_names);
	tcase_add_test(tc, test_protoc_decode_raw);
	tcase_add_test(tc, test_smaller_than_json);
	tcase_add_test(tc, test_names_survive_cache_growth);
	suite_add_tcase(s, tc);
	tc = tcase_create("shapes");
	tcase_add_unchecked_fixture(tc, setup_dir, teardown_once);
	tcase_set_timeout(tc, 300);
	tcase_add_loop_test(tc, test_shape_flows, 0, (int)SHP_SHAPES);
	suite_add_tcase(s, tc);
	tc = tcase_create("encoder");
	tcase_add_test(tc, test_encoder);
	suite_add_tcase(s, tc);
	tc = tcase_create("recorded");
	tcase_add_unchecked_fixture(tc, setup_dir, teardown_once);
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, test_real_trace, 0, (int)REAL_TRACES);
	suite_add_tcase(s, tc);
	return s;
}

/* argv[1]: tests/data, where the traces recorded on a GPU live. */
int main(int argc, char **argv)
{
	SRunner *sr;
	int failed;

	data_dir = argc > 1 ? argv[1] : NULL;
	sr = srunner_create(perfetto_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
