/* The drainer: one process's ring -> validated, pid-stamped records with trace-global string
 * ids -> the trace writer; loss accounting and PROCESS_END when the process ends. Runs in
 * the CLI (session) or in the standalone drainer thread of a traced process. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "drain.h"
#include "strtab.h"

enum map_state {
	MAP_UNSEEN = 0,
	MAP_RESOLVED, /* the STRING arrived: gid holds its content */
	MAP_RESERVED, /* referenced before its STRING: gid reserved, content written later */
};

struct map_ent {
	uint32_t gid;   /* trace-global string id */
	uint32_t state; /* enum map_state */
};

struct gt_drain {
	struct gt_writer *w;         /* borrowed */
	struct gt_strtab *strs;      /* content -> global id, for the whole trace */
	struct gt_drain_proc *procs; /* open processes */
	uint64_t serial;             /* processes started; makes reservation keys unique */
	uint32_t unknown_gid;        /* "<unknown>", once needed */
	struct gt_drain_stats stats;
	const struct gt_drain_tap *tap; /* borrowed; NULL: none */
};

struct gt_drain_proc {
	struct gt_drain *d;
	struct gt_drain_proc *next, **pprev;
	struct gt_ring *ring; /* owned; NULL once rejected or given up */
	uint64_t serial;
	struct gt_rec_process rec;
	struct map_ent *map; /* indexed by local id */
	uint32_t map_cap;
	uint32_t reserved; /* MAP_RESERVED entries */
	/* What the ring reported before it was given up (it is freed then). */
	uint64_t lost_dropped[GT_REC_MAX];
	uint64_t lost_torn, lost_corrupt;
	uint64_t bad; /* records rejected by the drainer itself (bad string ids) */
	bool detached;
	bool finishing; /* the final drain: wait for the writer's room instead of stopping */
	bool pending;   /* the last pass stopped for the writer's room (gt_drain_proc_pending) */
	struct gt_rec_process_end detach_end;
	uint64_t buf[sizeof(union gt_record) / 8 + 1]; /* the record being remapped */
};

int gt_drain_new(struct gt_writer *writer, struct gt_drain **ret)
{
	struct gt_drain *d = calloc(1, sizeof(*d));

	if (!d)
		return -ENOMEM;
	if (gt_strtab_new(&d->strs) < 0) {
		free(d);
		return -ENOMEM;
	}
	d->w = writer;
	*ret = d;
	return 0;
}

void gt_drain_free(struct gt_drain *d)
{
	if (!d)
		return;
	while (d->procs)
		gt_drain_proc_finish(d->procs, GT_END_UNKNOWN, 0, 0, true);
	gt_strtab_free(d->strs);
	free(d);
}

void gt_drain_stats(const struct gt_drain *d, struct gt_drain_stats *out)
{
	*out = d->stats;
}

void gt_drain_set_tap(struct gt_drain *d, const struct gt_drain_tap *tap)
{
	d->tap = tap;
}

void gt_drain_idle(struct gt_drain *d)
{
	if (d->tap && d->tap->idle)
		d->tap->idle(d->tap->ctx);
}

/* Every record and string the drainer writes goes through these two, so a tap sees the
 * trace as the file gets it. */
static int write_record(struct gt_drain *d, const struct gt_rec_hdr *rec)
{
	int r = gt_writer_write(d->w, rec);

	if (r == 0 && d->tap)
		d->tap->record(d->tap->ctx, rec);
	return r;
}

static int write_string(struct gt_drain *d, uint32_t pid, uint32_t gid, const char *s, size_t len)
{
	int r = gt_writer_string(d->w, pid, gid, s, len);

	if (r == 0 && d->tap)
		d->tap->string(d->tap->ctx, pid, gid, s, len);
	return r;
}

/* Global id of s, writing its STRING first if the trace has not seen it. */
static int global_string(struct gt_drain *d, uint32_t pid, const char *s, size_t len, uint32_t *gid)
{
	int r;

	if (len > GT_STRING_MAX)
		len = GT_STRING_MAX;
	r = gt_strtab_intern(d->strs, s, len, gid);
	if (r == 1)
		r = write_string(d, pid, *gid, s, len);
	return r < 0 ? r : 0;
}

static int unknown_gid(struct gt_drain *d, uint32_t pid, uint32_t *gid)
{
	int r = 0;

	if (!d->unknown_gid)
		r = global_string(d, pid, GT_DRAIN_UNKNOWN_STRING,
		                  sizeof(GT_DRAIN_UNKNOWN_STRING) - 1, &d->unknown_gid);
	*gid = d->unknown_gid;
	return r;
}

static int map_reserve(struct gt_drain_proc *p, uint32_t local)
{
	uint32_t cap = p->map_cap ? p->map_cap : 256;
	struct map_ent *m;

	if (local < p->map_cap)
		return 0;
	while (cap <= local)
		cap *= 2;
	m = realloc(p->map, (size_t)cap * sizeof(*m));
	if (!m)
		return -ENOMEM;
	memset(m + p->map_cap, 0, (size_t)(cap - p->map_cap) * sizeof(*m));
	p->map = m;
	p->map_cap = cap;
	return 0;
}

/* Global id for a local id found in a record. One whose STRING has not arrived gets a
 * global id now (its content is written when it arrives, or "<unknown>" at the end). */
static int remap(struct gt_drain_proc *p, uint32_t local, uint32_t *gid)
{
	struct gt_drain *d = p->d;
	char key[64];
	int r, n;

	if (local == GT_STRING_NONE) {
		*gid = GT_STRING_NONE;
		return 0;
	}
	if (local > GT_DRAIN_MAX_LOCAL_ID)
		return unknown_gid(d, p->rec.hdr.pid, gid);
	r = map_reserve(p, local);
	if (r < 0)
		return r;
	if (p->map[local].state != MAP_UNSEEN) {
		*gid = p->map[local].gid;
		return 0;
	}
	/* A key no real string has (it starts with a NUL), unique per process and id: the
	 * string table hands out the id, and nothing is written until the content comes. */
	n = snprintf(key + 1, sizeof(key) - 1, "reserved %llu %u", (unsigned long long)p->serial,
	             local);
	key[0] = '\0';
	r = gt_strtab_intern(d->strs, key, (size_t)n + 1, gid);
	if (r < 0)
		return r;
	p->map[local] = (struct map_ent){*gid, MAP_RESERVED};
	p->reserved++;
	return 0;
}

static int on_string(struct gt_drain_proc *p, const struct gt_rec_string *s)
{
	struct gt_drain *d = p->d;
	struct map_ent *e;
	int r;

	if (s->id > GT_DRAIN_MAX_LOCAL_ID) {
		p->bad++;
		return 0;
	}
	r = map_reserve(p, s->id);
	if (r < 0)
		return r;
	e = &p->map[s->id];
	switch (e->state) {
	case MAP_RESOLVED:
		/* Producers racing to intern the same string each write it: keep the first. */
		return 0;
	case MAP_RESERVED:
		r = write_string(d, p->rec.hdr.pid, e->gid, s->str, s->len);
		if (r < 0)
			return r;
		e->state = MAP_RESOLVED;
		p->reserved--;
		break;
	default:
		r = global_string(d, p->rec.hdr.pid, s->str, s->len, &e->gid);
		if (r < 0)
			return r;
		e->state = MAP_RESOLVED;
		break;
	}
	d->stats.records++;
	return 0;
}

static int handle_record(void *ctx, const struct gt_rec_hdr *rec)
{
	struct gt_drain_proc *p = ctx;
	struct gt_drain *d = p->d;
	const struct gt_record_desc *desc;
	uint8_t *bytes = (uint8_t *)&p->buf;
	unsigned i;
	int r;

	switch (rec->type) {
	case GT_REC_STRING:
		return on_string(p, (const struct gt_rec_string *)rec);
	case GT_REC_PROCESS:
		/* written by the drainer from the registration, which the server checked */
		return 0;
	case GT_REC_PROCESS_END:
		/* a process that stops tracing early says so; the connection's end says the
		 * rest */
		if (((const struct gt_rec_process_end *)rec)->how == GT_END_DETACHED) {
			memcpy(&p->detach_end, rec, sizeof(p->detach_end));
			p->detached = true;
		}
		return 0;
	default:
		break;
	}
	/* Validated by the ring: a known fixed-size type of exactly desc->size bytes. */
	desc = gt_record_desc(rec->type);
	if (!desc || rec->size != desc->size || rec->size > sizeof(p->buf)) {
		p->bad++;
		return 0;
	}
	memcpy(bytes, rec, rec->size);
	((struct gt_rec_hdr *)bytes)->pid = p->rec.hdr.pid;
	for (i = 0; i < desc->nfields; i++) {
		const struct gt_field *f = &desc->fields[i];
		uint32_t v;

		if (!(f->flags & GT_FIELD_STRING) || f->width != 4)
			continue;
		memcpy(&v, bytes + f->offset, 4);
		r = remap(p, v, &v);
		if (r < 0)
			return r;
		memcpy(bytes + f->offset, &v, 4);
	}
	r = write_record(d, (struct gt_rec_hdr *)bytes);
	if (r < 0)
		return r;
	d->stats.records++;
	return 0;
}

/* A pass stops (DRAIN_WRITER_FULL) after the record that found the writer's queue full: the
 * rest stays in the ring, read once there is room; drops, if it fills, are counted as
 * always. The final drain of a process waits for room instead. Not an errno value: a real
 * -EAGAIN from the writer (a non-blocking file) is an error like any other. */
#define DRAIN_WRITER_FULL (-0x10000)

static int writer_room(struct gt_drain_proc *p)
{
	if (!gt_writer_full(p->d->w))
		return 0;
	return p->finishing ? gt_writer_wait_space(p->d->w) : DRAIN_WRITER_FULL;
}

static int on_record(void *ctx, const struct gt_rec_hdr *rec)
{
	int r = handle_record(ctx, rec);

	return r < 0 ? r : writer_room(ctx);
}

int gt_drain_proc_notice(struct gt_drain_proc *p, unsigned severity, unsigned code,
                         const char *message)
{
	struct gt_rec_notice n = {0};
	int r;

	n.hdr.type = GT_REC_NOTICE;
	n.hdr.size = sizeof(n);
	n.hdr.pid = p->rec.hdr.pid;
	n.ts_ns = gt_now_ns();
	n.severity = severity;
	n.code = code;
	r = global_string(p->d, p->rec.hdr.pid, message, strlen(message), &n.message_id);
	if (r < 0)
		return r;
	return write_record(p->d, &n.hdr);
}

int gt_drain_proc_new(struct gt_drain *d, const struct gt_process_info *info, uint64_t start_ns,
                      uint32_t flags, struct gt_ring *ring, const char *error,
                      struct gt_drain_proc **ret)
{
	struct gt_drain_proc *p = calloc(1, sizeof(*p));
	struct gt_rec_process *rec;
	int r;

	if (!p)
		return -ENOMEM;
	p->d = d;
	p->serial = ++d->serial;
	rec = &p->rec;
	rec->hdr.type = GT_REC_PROCESS;
	rec->hdr.size = sizeof(*rec);
	rec->hdr.pid = info->pid;
	rec->start_ns = start_ns;
	rec->ppid = info->ppid;
	rec->rank = info->rank;
	rec->local_rank = info->local_rank;
	rec->world_size = info->world_size;
	rec->flags = flags;
	r = global_string(d, info->pid, info->exe ? info->exe : "",
	                  info->exe ? strlen(info->exe) : 0, &rec->exe_id);
	if (r == 0)
		r = global_string(d, info->pid, info->cmdline ? info->cmdline : "",
		                  info->cmdline ? strlen(info->cmdline) : 0, &rec->cmdline_id);
	if (r == 0)
		r = global_string(d, info->pid, info->hostname ? info->hostname : "",
		                  info->hostname ? strlen(info->hostname) : 0, &rec->host_id);
	if (r == 0)
		r = write_record(d, &rec->hdr);
	if (r == 0 && error)
		r = gt_drain_proc_notice(p, GT_NOTICE_ERROR, GT_NOTICE_SESSION_LOST, error);
	if (r < 0) {
		free(p);
		return r;
	}
	p->ring = ring;
	p->next = d->procs;
	if (d->procs)
		d->procs->pprev = &p->next;
	p->pprev = &d->procs;
	d->procs = p;
	d->stats.processes++;
	*ret = p;
	return 0;
}

const struct gt_rec_process *gt_drain_proc_record(const struct gt_drain_proc *p)
{
	return &p->rec;
}

struct gt_ring *gt_drain_proc_ring(struct gt_drain_proc *p)
{
	return p->ring;
}

/* Keep what the ring counted, then let it go. */
static void give_up_ring(struct gt_drain_proc *p)
{
	struct gt_ring_header *h = gt_ring_header(p->ring);
	struct gt_ring_stats st;
	unsigned t;

	gt_ring_stats(p->ring, &st);
	for (t = 0; t < GT_REC_MAX; t++)
		p->lost_dropped[t] += atomic_load_explicit(&h->dropped[t], memory_order_relaxed);
	p->lost_torn += st.torn;
	p->lost_corrupt += st.corrupt;
	gt_ring_free(p->ring);
	p->ring = NULL;
}

/* The tap's end of a pass: the drops the ring counted so far (LOSS records at the end). */
static void tap_pass(struct gt_drain_proc *p)
{
	struct gt_ring_header *h = gt_ring_header(p->ring);
	uint64_t dropped = 0;

	for (unsigned t = 0; t < GT_REC_MAX; t++)
		dropped += atomic_load_explicit(&h->dropped[t], memory_order_relaxed);
	p->d->tap->pass(p->d->tap->ctx, p->rec.hdr.pid, dropped);
}

long gt_drain_proc_run(struct gt_drain_proc *p, uint64_t wait_ns, bool producers_dead)
{
	uint64_t before = p->d->stats.records;
	long r;
	int w;

	p->pending = false;
	if (!p->ring)
		return 0;
	if (!p->finishing && gt_writer_full(p->d->w)) {
		p->pending = true;
		return 0;
	}
	r = gt_ring_consume(p->ring, on_record, p, wait_ns, producers_dead);
	if (r == DRAIN_WRITER_FULL) {
		p->pending = true;
		r = 0;
	}
	if (p->d->tap && r >= 0)
		tap_pass(p);
	if (r == -EBADMSG) {
		/* The shared head index is impossible: nothing more from this ring can be
		 * trusted. Report it for this process only. */
		give_up_ring(p);
		p->lost_corrupt++;
		w = gt_drain_proc_notice(p, GT_NOTICE_ERROR, GT_NOTICE_GENERIC,
		                         "ring corrupt (head index out of range): later records of "
		                         "this process are lost");
		return w < 0 ? w : (long)(p->d->stats.records - before);
	}
	return r < 0 ? r : (long)(p->d->stats.records - before);
}

bool gt_drain_proc_pending(const struct gt_drain_proc *p)
{
	return p->pending;
}

static int write_loss(struct gt_drain_proc *p, unsigned source, unsigned kind, uint64_t count)
{
	struct gt_rec_loss l = {0};

	if (!count)
		return 0;
	l.hdr.type = GT_REC_LOSS;
	l.hdr.size = sizeof(l);
	l.hdr.pid = p->rec.hdr.pid;
	l.ts_ns = gt_now_ns();
	l.count = count;
	l.source = source;
	l.kind = kind;
	return write_record(p->d, &l.hdr);
}

int gt_drain_proc_finish(struct gt_drain_proc *p, unsigned how, int32_t code, uint64_t wait_ns,
                         bool producers_dead)
{
	struct gt_drain *d = p->d;
	struct gt_rec_process_end end = {0};
	uint64_t dropped_total = 0;
	uint32_t i;
	unsigned t;
	long lr = 0;
	int r = 0;

	p->finishing = true;
	if (p->ring)
		lr = gt_drain_proc_run(p, wait_ns, producers_dead);
	if (p->ring)
		give_up_ring(p);
	if (lr < 0)
		r = (int)lr;
	for (t = 0; t < GT_REC_MAX && r == 0; t++) {
		r = write_loss(p, GT_LOSS_RING_FULL, t, p->lost_dropped[t]);
		dropped_total += p->lost_dropped[t];
	}
	if (r == 0)
		r = write_loss(p, GT_LOSS_TORN, GT_REC_NONE, p->lost_torn);
	if (r == 0)
		r = write_loss(p, GT_LOSS_CORRUPT, GT_REC_NONE, p->lost_corrupt + p->bad);
	for (i = 0; i < p->map_cap && p->reserved && r == 0; i++) {
		if (p->map[i].state != MAP_RESERVED)
			continue;
		r = write_string(d, p->rec.hdr.pid, p->map[i].gid, GT_DRAIN_UNKNOWN_STRING,
		                 sizeof(GT_DRAIN_UNKNOWN_STRING) - 1);
		p->map[i].state = MAP_RESOLVED;
		p->reserved--;
	}
	if (r == 0) {
		if (p->detached) {
			end = p->detach_end;
		} else {
			end.hdr.type = GT_REC_PROCESS_END;
			end.hdr.size = sizeof(end);
			end.ts_ns = gt_now_ns();
			end.how = how;
			end.code = code;
		}
		end.hdr.pid = p->rec.hdr.pid;
		r = write_record(d, &end.hdr);
	}
	if (d->tap)
		d->tap->pass(d->tap->ctx, p->rec.hdr.pid, 0);
	d->stats.dropped += dropped_total;
	d->stats.torn += p->lost_torn;
	d->stats.corrupt += p->lost_corrupt + p->bad;

	*p->pprev = p->next;
	if (p->next)
		p->next->pprev = p->pprev;
	free(p->map);
	free(p);
	return r;
}
