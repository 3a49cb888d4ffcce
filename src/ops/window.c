/* Windows of a trace: which chunks and records a time range and the process, rank, device
 * and stream filters keep, put on a gt_reader as its filter; times as users type them; NVTX
 * ranges and training steps found by name; sizes estimated from the chunk index. Runs in the
 * CLI. The rules: docs/cli.md, "Windows". */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "window.h"

#define NS_PER_S 1000000000ull

/* Types that can only be read in a chunk the index marks: whatever is not an event type of
 * this reader (state, unclassified bit 0, and types of a newer writer). */
#define EVENT_TYPES                                                                                \
	(((1ull << GT_REC_MAX) - 2) & ~GT_TRACE_STATE_TYPES) /* bits 1 .. MAX-1, less state */

/* A set of pids: open addressing on pid + 1 (0 marks a free slot). */
struct pidset {
	uint64_t *k;
	size_t cap, n;
};

static int pidset_add(struct pidset *s, uint32_t pid)
{
	uint64_t key = (uint64_t)pid + 1;
	size_t i;

	if ((s->n + 1) * 2 > s->cap) {
		struct pidset b = {calloc(s->cap ? s->cap * 2 : 64, sizeof(uint64_t)),
		                   s->cap ? s->cap * 2 : 64, 0};

		if (!b.k)
			return -ENOMEM;
		for (size_t j = 0; j < s->cap; j++)
			if (s->k[j])
				pidset_add(&b,
				           (uint32_t)(s->k[j] - 1)); /* fits: b is large enough */
		free(s->k);
		*s = b;
	}
	for (i = (key * 0x9e3779b97f4a7c15ull >> 40) & (s->cap - 1); s->k[i];
	     i = (i + 1) & (s->cap - 1))
		if (s->k[i] == key)
			return 0;
	s->k[i] = key;
	s->n++;
	return 0;
}

static bool pidset_has(const struct pidset *s, uint32_t pid)
{
	uint64_t key = (uint64_t)pid + 1;

	if (!s->cap)
		return false;
	for (size_t i = (key * 0x9e3779b97f4a7c15ull >> 40) & (s->cap - 1); s->k[i];
	     i = (i + 1) & (s->cap - 1))
		if (s->k[i] == key)
			return true;
	return false;
}

struct gt_window_filter {
	struct gt_reader *r; /* borrowed */
	struct gt_window w;
	uint64_t from, to;     /* [from, to): the time range, to = UINT64_MAX when open */
	bool timed;            /* a time range was asked for */
	bool by_pid;           /* only the processes in pids */
	struct pidset pids;    /* --pid, and the processes of --rank */
	union gt_record *copy; /* a record cut at an edge, handed out until the next one; owned */
	struct gt_window_stats st;
};

bool gt_window_any(const struct gt_window *w)
{
	return gt_window_timed(w) || w->npids || w->nranks || w->ndevices || w->nstreams;
}

/* ---- the filter ----------------------------------------------------------------------- */

bool gt_window_chunk(struct gt_window_filter *f, const struct gt_chunk_info *c)
{
	if (!c->have_types || (c->types & ~EVENT_TYPES))
		return true; /* state, or a chunk the index says nothing certain about */
	if (!f->timed)
		return true;
	if (!c->first_ts_ns && !c->last_ts_ns)
		return false; /* nothing in it has a time: a time window keeps none of it */
	return c->first_ts_ns < f->to && c->last_ts_ns >= f->from;
}

static bool has_id(const uint32_t *ids, unsigned n, uint32_t id)
{
	for (unsigned i = 0; i < n; i++)
		if (ids[i] == id)
			return true;
	return false;
}

/* GPU work (and memory) on a device and stream the window keeps. stream: UINT32_MAX when
 * the record has none to match. */
static bool on_gpu(const struct gt_window_filter *f, uint32_t device, uint32_t stream)
{
	if (f->w.ndevices && !has_id(f->w.devices, f->w.ndevices, device))
		return false;
	if (stream != UINT32_MAX && f->w.nstreams && !has_id(f->w.streams, f->w.nstreams, stream))
		return false;
	return true;
}

/* Keep, and cut at the edges, a record whose [start, end] are the two u64 after its header
 * (every slice type: API, NVTX, kernel, copies, memsets, syncs, graphs, overhead). */
static const union gt_record *keep_span(struct gt_window_filter *f, const union gt_record *rec)
{
	uint64_t s, e;

	if (!f->timed)
		return rec;
	memcpy(&s, (const uint8_t *)rec + sizeof(struct gt_rec_hdr), 8);
	memcpy(&e, (const uint8_t *)rec + sizeof(struct gt_rec_hdr) + 8, 8);
	if (!s)
		return NULL; /* no time (CUPTI gave none): in no window */
	if (e <= s) {
		/* an instant, or a range whose end never came */
		return s >= f->from && s < f->to ? rec : NULL;
	}
	if (s >= f->to || e <= f->from)
		return NULL;
	if (s >= f->from && e <= f->to)
		return rec;
	memcpy(f->copy, rec, rec->hdr.size);
	if (s < f->from)
		s = f->from;
	if (e > f->to)
		e = f->to;
	memcpy((uint8_t *)f->copy + sizeof(struct gt_rec_hdr), &s, 8);
	memcpy((uint8_t *)f->copy + sizeof(struct gt_rec_hdr) + 8, &e, 8);
	f->st.clipped++;
	return f->copy;
}

/* Keep an instant whose time is the u64 after its header. */
static const union gt_record *keep_instant(const struct gt_window_filter *f,
                                           const union gt_record *rec)
{
	uint64_t t;

	if (!f->timed)
		return rec;
	memcpy(&t, (const uint8_t *)rec + sizeof(struct gt_rec_hdr), 8);
	return t && t >= f->from && t < f->to ? rec : NULL;
}

/* Memory and pools: what happened before the window is moved to its start, so that memory
 * in use starts there at its level; what happens after is left out. */
static const union gt_record *keep_state(struct gt_window_filter *f, const union gt_record *rec)
{
	uint64_t t;

	if (!f->timed)
		return rec;
	memcpy(&t, (const uint8_t *)rec + sizeof(struct gt_rec_hdr), 8);
	if (!t || t >= f->to)
		return NULL;
	if (t >= f->from)
		return rec;
	memcpy(f->copy, rec, rec->hdr.size);
	memcpy((uint8_t *)f->copy + sizeof(struct gt_rec_hdr), &f->from, 8);
	f->st.carried++;
	return f->copy;
}

static const union gt_record *decide(struct gt_window_filter *f, const union gt_record *rec)
{
	if (rec->hdr.type == GT_REC_STRING || rec->hdr.type == GT_REC_INPUT)
		return rec; /* ids are the whole trace's; a merged trace's inputs too */
	if (f->by_pid && !pidset_has(&f->pids, rec->hdr.pid))
		return NULL;
	switch (rec->hdr.type) {
	case GT_REC_PROCESS:
	case GT_REC_THREAD:
	case GT_REC_DEVICE:
	case GT_REC_CONTEXT:
	case GT_REC_STREAM:
	case GT_REC_CLOCK:
	case GT_REC_ORIGIN:
	case GT_REC_GPU_METRIC:
		return rec; /* metadata: always kept */
	case GT_REC_GPU_SAMPLE: /* an instant: the end of its interval */
		return on_gpu(f, rec->gpu_sample.device_id, UINT32_MAX) ? keep_instant(f, rec)
		                                                        : NULL;
	case GT_REC_MEMORY:
		return on_gpu(f, rec->memory.device_id, UINT32_MAX) ? keep_state(f, rec) : NULL;
	case GT_REC_MEMORY_POOL:
		return on_gpu(f, rec->memory_pool.device_id, UINT32_MAX) ? keep_state(f, rec)
		                                                         : NULL;
	case GT_REC_KERNEL:
	case GT_REC_MEMCPY:
	case GT_REC_MEMSET:
	case GT_REC_SYNC:
	case GT_REC_GRAPH: {
		/* every one of these starts with a gt_gpu_span */
		const struct gt_gpu_span *sp =
		        (const struct gt_gpu_span *)((const uint8_t *)rec + sizeof(rec->hdr));

		return on_gpu(f, sp->device_id, sp->stream_id) ? keep_span(f, rec) : NULL;
	}
	case GT_REC_API:
	case GT_REC_NVTX:
	case GT_REC_OVERHEAD:
		return keep_span(f, rec);
	case GT_REC_PROCESS_END:
	case GT_REC_LOSS:
	case GT_REC_NOTICE:
		return keep_instant(f, rec);
	default:
		return rec;
	}
}

const union gt_record *gt_window_record(struct gt_window_filter *f, const union gt_record *rec)
{
	const union gt_record *out = decide(f, rec);

	if (out)
		f->st.kept++;
	else
		f->st.dropped++;
	return out;
}

static bool chunk_cb(void *ctx, const struct gt_chunk_info *c)
{
	return gt_window_chunk(ctx, c);
}

static const union gt_record *record_cb(void *ctx, const union gt_record *rec)
{
	return gt_window_record(ctx, rec);
}

/* ---- ranks ---------------------------------------------------------------------------- */

static bool state_chunk_cb(void *ctx, const struct gt_chunk_info *c)
{
	(void)ctx;
	return !c->have_types || (c->types & ~EVENT_TYPES);
}

static bool rank_wanted(const struct gt_window *w, int32_t rank)
{
	for (unsigned i = 0; i < w->nranks; i++)
		if (w->ranks[i] == rank)
			return true;
	return false;
}

/* Add the pids of the processes whose rank w lists (a pass over the state chunks), and
 * those it lists itself. *nrank: processes the ranks matched. Rewinds r. */
static int resolve_pids(struct gt_reader *r, const struct gt_window *w, struct pidset *pids,
                        unsigned *nrank)
{
	struct gt_reader_filter only_state = {.chunk = state_chunk_cb};
	const union gt_record *rec;
	int ret = 0;

	*nrank = 0;
	for (unsigned i = 0; i < w->npids; i++) {
		ret = pidset_add(pids, w->pids[i]);
		if (ret < 0)
			return ret;
	}
	if (!w->nranks)
		return 0;
	ret = gt_reader_set_filter(r, &only_state);
	if (ret == 0)
		ret = gt_reader_rewind(r);
	while (ret == 0 && (ret = gt_reader_next(r, &rec)) > 0) {
		ret = 0;
		if (rec->hdr.type != GT_REC_PROCESS || !rank_wanted(w, rec->process.rank))
			continue;
		if (!pidset_has(pids, rec->hdr.pid))
			(*nrank)++;
		ret = pidset_add(pids, rec->hdr.pid);
	}
	gt_reader_set_filter(r, NULL);
	if (ret < 0)
		return ret;
	return gt_reader_rewind(r);
}

int gt_window_open(struct gt_reader *r, const struct gt_window *w, struct gt_window_filter **ret)
{
	struct gt_window_filter *f;
	struct gt_reader_filter rf;
	int err;

	if (!r || !w || !ret)
		return -EINVAL;
	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->copy = malloc(sizeof(*f->copy));
	if (!f->copy) {
		free(f);
		return -ENOMEM;
	}
	f->r = r;
	f->w = *w;
	f->timed = gt_window_timed(w);
	f->from = w->from_ns;
	f->to = w->to_ns ? w->to_ns : UINT64_MAX;
	f->by_pid = w->npids || w->nranks;
	err = resolve_pids(r, w, &f->pids, &f->st.rank_pids);
	if (err < 0)
		goto out;
	rf = (struct gt_reader_filter){.chunk = chunk_cb, .record = record_cb, .ctx = f};
	err = gt_reader_set_filter(r, &rf);
	if (err == 0)
		err = gt_reader_rewind(r);
	if (err < 0)
		goto out;
	*ret = f;
	return 0;
out:
	gt_reader_set_filter(r, NULL);
	free(f->pids.k);
	free(f->copy);
	free(f);
	return err;
}

void gt_window_stats(const struct gt_window_filter *f, struct gt_window_stats *st)
{
	const struct gt_reader_status *rs = gt_reader_status(f->r);

	*st = f->st;
	st->chunks_read = rs->chunks_read;
	st->chunks_passed = rs->chunks_passed;
}

void gt_window_close(struct gt_window_filter *f)
{
	if (!f)
		return;
	gt_reader_set_filter(f->r, NULL);
	free(f->pids.k);
	free(f->copy);
	free(f);
}

/* ---- times ---------------------------------------------------------------------------- */

/* "1m30s", "2.5", "250ms": nanoseconds. Returns 0, -EINVAL, -ERANGE. */
static int parse_duration(const char *s, uint64_t *ret_ns)
{
	static const struct {
		const char *unit;
		uint64_t ns;
	} units[] = {{"ns", 1},       {"us", 1000},         {"ms", 1000000},
	             {"s", NS_PER_S}, {"m", 60 * NS_PER_S}, {"h", 3600 * NS_PER_S}};
	long double total = 0;
	bool any = false;

	while (*s) {
		long double v = 0, scale = 1;
		bool digits = false;
		uint64_t mult = 0;
		size_t len = 0;

		while (isdigit((unsigned char)*s)) {
			v = v * 10 + (*s++ - '0');
			digits = true;
		}
		if (*s == '.') {
			s++;
			while (isdigit((unsigned char)*s)) {
				scale /= 10;
				v += (*s++ - '0') * scale;
				digits = true;
			}
		}
		if (!digits)
			return -EINVAL;
		for (size_t u = 0; u < sizeof(units) / sizeof(units[0]); u++) {
			size_t n = strlen(units[u].unit);

			/* the longest unit that matches: "ms" before "m" */
			if (strncmp(s, units[u].unit, n) == 0 && n > len) {
				len = n;
				mult = units[u].ns;
			}
		}
		if (!len) {
			if (*s || any)
				return -EINVAL; /* a bare number only alone: "90" is seconds */
			mult = NS_PER_S;
		}
		s += len;
		total += v * (long double)mult;
		any = true;
	}
	if (!any)
		return -EINVAL;
	if (total > (long double)(UINT64_MAX / 2))
		return -ERANGE;
	*ret_ns = (uint64_t)(total + 0.5L);
	return 0;
}

/* Days from 1970-01-01 to y-m-d (proleptic Gregorian). */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
	int64_t era;
	unsigned yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = (unsigned)(y - era * 400);
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (int64_t)doe - 719468;
}

/* "YYYY-MM-DD[T ]HH:MM:SS[.frac][Z|+HH:MM|-HHMM]": ns since the Unix epoch. */
static int parse_wallclock(const char *s, int64_t *ret_ns)
{
	int y, mo, d, h, mi, sec, n = 0;
	int64_t ns = 0, secs;
	long double frac = 0, scale = 1;

	if (sscanf(s, "%4d-%2d-%2d%*[T ]%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &sec, &n) != 6 || !n)
		return -EINVAL;
	if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60 || y < 1970)
		return -EINVAL;
	s += n;
	if (*s == '.' || *s == ',') {
		s++;
		if (!isdigit((unsigned char)*s))
			return -EINVAL;
		while (isdigit((unsigned char)*s)) {
			scale /= 10;
			frac += (*s++ - '0') * scale;
		}
	}
	ns = (int64_t)(frac * NS_PER_S + 0.5L);
	if (*s == 'Z' && !s[1]) {
		secs = days_from_civil(y, (unsigned)mo, (unsigned)d) * 86400 + h * 3600 + mi * 60 +
		       sec;
	} else if ((*s == '+' || *s == '-') && s[1]) {
		int oh = 0, om = 0, sign = *s == '-' ? -1 : 1;

		if (!(sscanf(s + 1, "%2d:%2d%n", &oh, &om, &n) == 2 && !s[1 + n]) &&
		    !(strlen(s + 1) == 4 && sscanf(s + 1, "%2d%2d", &oh, &om) == 2) &&
		    !(strlen(s + 1) == 2 && sscanf(s + 1, "%2d", &oh) == 1))
			return -EINVAL;
		if (oh > 23 || om > 59)
			return -EINVAL;
		secs = days_from_civil(y, (unsigned)mo, (unsigned)d) * 86400 + h * 3600 + mi * 60 +
		       sec - sign * (oh * 3600 + om * 60);
	} else if (!*s) {
		/* local time, as the user's clock shows it */
		struct tm tm = {.tm_year = y - 1900,
		                .tm_mon = mo - 1,
		                .tm_mday = d,
		                .tm_hour = h,
		                .tm_min = mi,
		                .tm_sec = sec,
		                .tm_isdst = -1};
		time_t t = mktime(&tm);

		if (t == (time_t)-1)
			return -EINVAL;
		secs = (int64_t)t;
	} else {
		return -EINVAL;
	}
	if (secs < 0 || secs > INT64_MAX / (int64_t)NS_PER_S - 1)
		return -ERANGE;
	*ret_ns = secs * (int64_t)NS_PER_S + ns;
	return 0;
}

int gt_window_parse_time(const char *s, const struct gt_trace_header *h, uint64_t zero_ns,
                         uint64_t base_ns, uint64_t *ret_ns)
{
	uint64_t v;
	int ret;

	if (!s || !*s || !ret_ns)
		return -EINVAL;
	if (*s == '@') {
		char *end;

		if (!isdigit((unsigned char)s[1]))
			return -EINVAL;
		errno = 0;
		v = strtoull(s + 1, &end, 10);
		if (errno == ERANGE)
			return -ERANGE;
		if (*end)
			return -EINVAL;
		*ret_ns = v;
		return 0;
	}
	if (strlen(s) >= 19 && s[4] == '-' && s[7] == '-') {
		int64_t wall, t;

		ret = parse_wallclock(s, &wall);
		if (ret < 0)
			return ret;
		if (!h)
			return -EINVAL;
		/* through the header's anchor: the same moment on both clocks */
		t = (int64_t)h->info.start_trace_ns + (wall - (int64_t)h->info.start_realtime_ns);
		*ret_ns = t > 0 ? (uint64_t)t : 0;
		return 0;
	}
	if (*s == '+') {
		ret = parse_duration(s + 1, &v);
		if (ret < 0)
			return ret;
		base_ns = base_ns ? base_ns : zero_ns;
		if (v > UINT64_MAX - base_ns)
			return -ERANGE;
		*ret_ns = base_ns + v;
		return 0;
	}
	ret = parse_duration(s, &v);
	if (ret < 0)
		return ret;
	if (v > UINT64_MAX - zero_ns)
		return -ERANGE;
	*ret_ns = zero_ns + v;
	return 0;
}

int gt_window_parse_ids(const char *s, bool is_signed, void *ids, unsigned *n)
{
	const char *p = s;

	if (!s || !*s)
		return -EINVAL;
	for (;;) {
		char *end;
		long long v;

		if (!isdigit((unsigned char)*p) && !(is_signed && *p == '-'))
			return -EINVAL;
		errno = 0;
		v = strtoll(p, &end, 10);
		if (errno || end == p || (*end && *end != ',') ||
		    (is_signed ? (v < INT32_MIN || v > INT32_MAX) : (v < 0 || v > UINT32_MAX)))
			return -EINVAL;
		if (*n >= GT_WINDOW_MAX_IDS)
			return -E2BIG;
		if (is_signed)
			((int32_t *)ids)[(*n)++] = (int32_t)v;
		else
			((uint32_t *)ids)[(*n)++] = (uint32_t)v;
		if (!*end)
			return 0;
		p = end + 1;
	}
}

/* ---- NVTX ranges ---------------------------------------------------------------------- */

int gt_window_parse_nvtx(const char *s, struct gt_nvtx_spec *spec)
{
	const char *colon;
	size_t len;

	if (!s || !spec)
		return -EINVAL;
	memset(spec, 0, sizeof(*spec));
	spec->last = UINT64_MAX;
	colon = strrchr(s, ':');
	/* "NAME:N..M": the part after the last ':' is a range only when it is digits */
	if (colon && (isdigit((unsigned char)colon[1]))) {
		char *end;

		errno = 0;
		spec->first = strtoull(colon + 1, &end, 10);
		if (errno)
			return -EINVAL;
		if (*end == '\0') {
			spec->last = spec->first;
		} else if (strncmp(end, "..", 2) == 0) {
			const char *m = end + 2;

			if (*m == '\0') {
				spec->last = UINT64_MAX;
			} else {
				if (!isdigit((unsigned char)*m))
					return -EINVAL;
				spec->last = strtoull(m, &end, 10);
				if (errno || *end || spec->last < spec->first)
					return -EINVAL;
			}
		} else {
			return -EINVAL;
		}
		len = (size_t)(colon - s);
	} else {
		len = strlen(s);
	}
	if (!len || len >= sizeof(spec->name))
		return -EINVAL;
	memcpy(spec->name, s, len);
	spec->name[len] = '\0';
	return 0;
}

/* What one process holds of the ranges searched for. */
struct nvtx_proc {
	uint32_t pid;
	int32_t rank;
	bool have_rank;
	uint64_t occurrences; /* ranges named NAME exactly, so far: the next one's ordinal */
	uint64_t selected;
	uint64_t from, to;    /* of the selected ranges */
	uint64_t first, last; /* their ordinals */
	uint64_t named, named_first, named_last;
};

struct nvtx_search {
	struct nvtx_proc *procs;
	size_t n, cap;
	size_t last; /* the process looked up last: the next record is usually its */
};

static struct nvtx_proc *search_proc(struct nvtx_search *s, uint32_t pid)
{
	if (s->n && s->procs[s->last].pid == pid)
		return &s->procs[s->last];
	for (size_t i = 0; i < s->n; i++)
		if (s->procs[i].pid == pid) {
			s->last = i;
			return &s->procs[i];
		}
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 16;
		struct nvtx_proc *p = realloc(s->procs, cap * sizeof(*p));

		if (!p)
			return NULL;
		s->procs = p;
		s->cap = cap;
	}
	s->procs[s->n] = (struct nvtx_proc){
	        .pid = pid, .from = UINT64_MAX, .first = UINT64_MAX, .named_first = UINT64_MAX};
	s->last = s->n;
	return &s->procs[s->n++];
}

/* msg (len bytes) is NAME or NAME#K: true, and *ordinal = K, or UINT64_MAX for NAME. */
static bool name_matches(const char *name, size_t nlen, const char *msg, size_t len,
                         uint64_t *ordinal)
{
	uint64_t k = 0;

	if (len < nlen || memcmp(msg, name, nlen) != 0)
		return false;
	if (len == nlen) {
		*ordinal = UINT64_MAX;
		return true;
	}
	if (msg[nlen] != '#' || len == nlen + 1 || len > nlen + 1 + 19)
		return false;
	for (size_t i = nlen + 1; i < len; i++) {
		if (!isdigit((unsigned char)msg[i]))
			return false;
		k = k * 10 + (uint64_t)(msg[i] - '0');
	}
	*ordinal = k;
	return true;
}

static bool nvtx_chunk_cb(void *ctx, const struct gt_chunk_info *c)
{
	(void)ctx;
	return !c->have_types || (c->types & (~EVENT_TYPES | (1ull << GT_REC_NVTX)));
}

/* Whether scope keeps process p (ranks as its PROCESS record says). */
static bool in_scope(const struct gt_window *scope, const struct nvtx_proc *p)
{
	if (!scope || (!scope->npids && !scope->nranks))
		return true;
	if (has_id(scope->pids, scope->npids, p->pid))
		return true;
	return p->have_rank && rank_wanted(scope, p->rank);
}

/* One pass over NVTX ranges and processes, calling fn for each range (not marks). */
static int walk_nvtx(struct gt_reader *r, struct nvtx_search *s,
                     int (*fn)(void *ctx, struct nvtx_proc *p, const struct gt_rec_nvtx *n,
                               const char *msg, size_t len),
                     void *ctx)
{
	struct gt_reader_filter only = {.chunk = nvtx_chunk_cb};
	const union gt_record *rec;
	int ret;

	ret = gt_reader_set_filter(r, &only);
	if (ret == 0)
		ret = gt_reader_rewind(r);
	while (ret == 0 && (ret = gt_reader_next(r, &rec)) > 0) {
		struct nvtx_proc *p;
		const char *msg;
		size_t len = 0;

		ret = 0;
		if (rec->hdr.type == GT_REC_PROCESS) {
			p = search_proc(s, rec->hdr.pid);
			if (!p) {
				ret = -ENOMEM;
				break;
			}
			p->rank = rec->process.rank;
			p->have_rank = true;
			continue;
		}
		if (rec->hdr.type != GT_REC_NVTX || rec->nvtx.kind == GT_NVTX_MARK ||
		    !rec->nvtx.start_ns)
			continue;
		msg = gt_reader_string(r, rec->nvtx.message_id, &len);
		if (!msg)
			continue;
		p = search_proc(s, rec->hdr.pid);
		if (!p) {
			ret = -ENOMEM;
			break;
		}
		ret = fn(ctx, p, &rec->nvtx, msg, len);
		if (ret < 0)
			break;
	}
	gt_reader_set_filter(r, NULL);
	if (ret < 0)
		return ret;
	return gt_reader_rewind(r);
}

static int select_range(void *ctx, struct nvtx_proc *p, const struct gt_rec_nvtx *n,
                        const char *msg, size_t len)
{
	const struct gt_nvtx_spec *spec = ctx;
	uint64_t k, end = n->end_ns > n->start_ns ? n->end_ns : n->start_ns;

	if (!name_matches(spec->name, strlen(spec->name), msg, len, &k))
		return 0;
	if (k == UINT64_MAX)
		k = p->occurrences++;
	p->named++;
	if (k < p->named_first)
		p->named_first = k;
	if (k > p->named_last)
		p->named_last = k;
	if (k < spec->first || k > spec->last)
		return 0;
	p->selected++;
	if (n->start_ns < p->from)
		p->from = n->start_ns;
	if (end > p->to)
		p->to = end;
	if (k < p->first)
		p->first = k;
	if (k > p->last)
		p->last = k;
	return 0;
}

int gt_window_find_nvtx(struct gt_reader *r, const struct gt_window *scope,
                        const struct gt_nvtx_spec *spec, struct gt_nvtx_found *found)
{
	struct nvtx_search s = {0};
	int ret;

	if (!r || !spec || !found)
		return -EINVAL;
	memset(found, 0, sizeof(*found));
	found->from_ns = UINT64_MAX;
	found->first = found->named_first = UINT64_MAX;
	ret = walk_nvtx(r, &s, select_range, (void *)spec);
	for (size_t i = 0; ret == 0 && i < s.n; i++) {
		const struct nvtx_proc *p = &s.procs[i];

		if (!in_scope(scope, p) || !p->named)
			continue;
		found->named += p->named;
		if (p->named_first < found->named_first)
			found->named_first = p->named_first;
		if (p->named_last > found->named_last)
			found->named_last = p->named_last;
		if (!p->selected)
			continue;
		found->ranges += p->selected;
		found->processes++;
		if (p->from < found->from_ns)
			found->from_ns = p->from;
		if (p->to > found->to_ns)
			found->to_ns = p->to;
		if (p->first < found->first)
			found->first = p->first;
		if (p->last > found->last)
			found->last = p->last;
	}
	if (!found->ranges) {
		found->from_ns = found->to_ns = 0;
		found->first = found->last = 0;
	}
	if (!found->named)
		found->named_first = 0;
	free(s.procs);
	return ret;
}

static const union gt_record *nvtx_record_cb(void *ctx, const union gt_record *rec)
{
	(void)ctx;
	return rec->hdr.type == GT_REC_NVTX || rec->hdr.type == GT_REC_STRING ||
	                       rec->hdr.type == GT_REC_PROCESS || rec->hdr.type == GT_REC_ORIGIN
	               ? rec
	               : NULL;
}

int gt_window_nvtx_only(struct gt_reader *r)
{
	struct gt_reader_filter f = {.chunk = nvtx_chunk_cb, .record = nvtx_record_cb};
	int ret = gt_reader_set_filter(r, &f);

	return ret < 0 ? ret : gt_reader_rewind(r);
}

/* ---- sizes ---------------------------------------------------------------------------- */

/* Records of chunk c inside [from, to), spreading them evenly over its time range. */
static long double chunk_share(const struct gt_chunk_info *c, uint64_t from, uint64_t to)
{
	uint64_t a = c->first_ts_ns, b = c->last_ts_ns, lo, hi;

	if (!a && !b)
		return 0;
	if (b <= a)
		return a >= from && a < to ? (long double)c->records : 0;
	lo = a > from ? a : from;
	hi = b < to ? b : to;
	if (hi <= lo)
		return 0;
	return (long double)c->records * (long double)(hi - lo) / (long double)(b - a);
}

/* Sum of chunk_share over the event chunks, or over all chunks when the index has no
 * types. -ENODATA without an index. */
static int estimate_range(struct gt_reader *r, uint64_t from, uint64_t to, long double *out)
{
	struct gt_chunk_info c;
	long double sum = 0;
	uint64_t k;
	int ret;

	if (!gt_reader_footer_counts(r))
		return -ENODATA;
	for (k = 0; (ret = gt_reader_chunk_info(r, k, &c)) == 1; k++) {
		if (c.have_types && (c.types & ~EVENT_TYPES))
			continue; /* state: strings, metadata and memory, not slices */
		sum += chunk_share(&c, from, to);
	}
	if (ret < 0)
		return ret;
	*out = sum;
	return 0;
}

int gt_window_estimate(struct gt_reader *r, const struct gt_window *w, uint64_t *records)
{
	long double v;
	int ret = estimate_range(r, w ? w->from_ns : 0, w && w->to_ns ? w->to_ns : UINT64_MAX, &v);

	if (ret < 0)
		return ret;
	*records = (uint64_t)(v + 0.5L);
	return 0;
}

int gt_window_cut(struct gt_reader *r, const struct gt_window *w, uint64_t records,
                  uint64_t *bounds, unsigned max)
{
	const struct gt_trace_counts *fc = gt_reader_footer_counts(r);
	uint64_t from = w ? w->from_ns : 0, to = w && w->to_ns ? w->to_ns : UINT64_MAX;
	long double total, per;
	unsigned n, i;
	int ret;

	if (!fc)
		return -ENODATA;
	if (max < 1 || !records)
		return -EINVAL;
	/* a window open at either end ends where the trace does */
	if (from < fc->first_ts_ns && fc->first_ts_ns != UINT64_MAX)
		from = fc->first_ts_ns;
	if (fc->last_ts_ns && fc->last_ts_ns < UINT64_MAX && to > fc->last_ts_ns + 1)
		to = fc->last_ts_ns + 1;
	if (to <= from) {
		bounds[0] = from;
		bounds[1] = from + 1;
		return 1;
	}
	ret = estimate_range(r, from, to, &total);
	if (ret < 0)
		return ret;
	n = (unsigned)((total + (long double)records - 1) / (long double)records);
	if (n < 1)
		n = 1;
	if (n > max)
		return -E2BIG;
	per = total / n;
	bounds[0] = from;
	for (i = 1; i < n; i++) {
		/* the time at which the records since bounds[0] reach i pieces: bisection */
		uint64_t lo = bounds[i - 1], hi = to;

		while (hi - lo > 1) {
			uint64_t mid = lo + (hi - lo) / 2;
			long double got;

			ret = estimate_range(r, from, mid, &got);
			if (ret < 0)
				return ret;
			if (got < per * i)
				lo = mid;
			else
				hi = mid;
		}
		bounds[i] = hi;
	}
	bounds[n] = to;
	return (int)n;
}

int gt_window_count(struct gt_reader *r, const struct gt_window *w, uint64_t limit,
                    uint64_t *records)
{
	const uint64_t meta =
	        (1ull << GT_REC_STRING) | (1ull << GT_REC_PROCESS) | (1ull << GT_REC_THREAD) |
	        (1ull << GT_REC_DEVICE) | (1ull << GT_REC_CONTEXT) | (1ull << GT_REC_STREAM) |
	        (1ull << GT_REC_CLOCK) | (1ull << GT_REC_INPUT) | (1ull << GT_REC_ORIGIN);
	struct gt_window_filter *f = NULL;
	const union gt_record *rec;
	uint64_t n = 0;
	int ret;

	ret = gt_window_open(r, w, &f); /* closed below */
	if (ret < 0)
		return ret;
	while (n <= limit && (ret = gt_reader_next(r, &rec)) > 0)
		n += !(meta >> rec->hdr.type & 1);
	gt_window_close(f);
	if (ret < 0)
		return ret;
	*records = n;
	return gt_reader_rewind(r);
}
