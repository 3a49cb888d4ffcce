/* Shared exporter plumbing: buffered output, number formatting, text clean-up, and the
 * streaming state model (processes, GPUs, tracks and their lanes, names, flows).
 * Runs in the CLI. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gputrace/demangle.h"
#include "model.h"

/* ------------------------------------------------------------------------------------ */
/* Output                                                                                */

int gt_xout_open(struct gt_xout *o, const char *path)
{
	memset(o, 0, sizeof(*o));
	o->fd = -1;
	o->buf = malloc(GT_XOUT_BUF_BYTES);
	if (!o->buf)
		return -ENOMEM;
	if (strcmp(path, "-") == 0) {
		o->fd = STDOUT_FILENO;
		return 0;
	}
	o->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (o->fd < 0) {
		int ret = -errno;

		free(o->buf);
		o->buf = NULL;
		return ret;
	}
	o->owns_fd = true;
	return 0;
}

static void write_all(struct gt_xout *o, const char *p, size_t n)
{
	while (n > 0 && !o->err) {
		ssize_t w = write(o->fd, p, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			o->err = -errno;
			break;
		}
		p += w;
		n -= (size_t)w;
	}
}

int gt_xout_flush(struct gt_xout *o)
{
	if (o->len && o->fd >= 0)
		write_all(o, o->buf, o->len);
	o->len = 0;
	return o->err;
}

void gt_xout_write(struct gt_xout *o, const void *p, size_t n)
{
	if (n <= GT_XOUT_BUF_BYTES - o->len) {
		memcpy(o->buf + o->len, p, n);
		o->len += n;
		o->bytes += n;
		return;
	}
	gt_xout_flush(o);
	if (n <= GT_XOUT_BUF_BYTES / 2) {
		memcpy(o->buf, p, n);
		o->len = n;
	} else {
		write_all(o, p, n);
	}
	o->bytes += n;
}

int gt_xout_close(struct gt_xout *o)
{
	int ret;

	if (!o->buf && o->fd < 0)
		return o->err;
	gt_xout_flush(o);
	ret = o->err;
	if (o->owns_fd && o->fd >= 0 && close(o->fd) < 0 && !ret)
		ret = -errno;
	o->fd = -1;
	o->owns_fd = false;
	free(o->buf);
	o->buf = NULL;
	o->err = ret;
	return ret;
}

/* ------------------------------------------------------------------------------------ */
/* Numbers, by hand: printf per event would cost more than everything else together.     */

static const char digits2[201] = "00010203040506070809101112131415161718192021222324"
                                 "25262728293031323334353637383940414243444546474849"
                                 "50515253545556575859606162636465666768697071727374"
                                 "75767778798081828384858687888990919293949596979899";

char *gt_fmt_hex(char *p, uint64_t v)
{
	static const char hex[] = "0123456789abcdef";
	int shift = 60;

	*p++ = '0';
	*p++ = 'x';
	while (shift > 0 && !(v >> shift))
		shift -= 4;
	for (; shift >= 0; shift -= 4)
		*p++ = hex[(v >> shift) & 0xf];
	return p;
}

char *gt_fmt_u64(char *p, uint64_t v)
{
	char tmp[20];
	char *t = tmp + sizeof(tmp);
	size_t n;

	while (v >= 100) {
		unsigned d = (unsigned)(v % 100) * 2;

		v /= 100;
		*--t = digits2[d + 1];
		*--t = digits2[d];
	}
	if (v >= 10) {
		*--t = digits2[v * 2 + 1];
		*--t = digits2[v * 2];
	} else {
		*--t = (char)('0' + v);
	}
	n = (size_t)(tmp + sizeof(tmp) - t);
	memcpy(p, t, n);
	return p + n;
}

char *gt_fmt_i64(char *p, int64_t v)
{
	if (v < 0) {
		*p++ = '-';
		return gt_fmt_u64(p, (uint64_t)0 - (uint64_t)v);
	}
	return gt_fmt_u64(p, (uint64_t)v);
}

char *gt_fmt_milli(char *p, uint64_t v)
{
	unsigned f = (unsigned)(v % 1000);

	p = gt_fmt_u64(p, v / 1000);
	p[0] = '.';
	p[1] = (char)('0' + f / 100);
	p[2] = digits2[(f % 100) * 2];
	p[3] = digits2[(f % 100) * 2 + 1];
	return p + 4;
}

char *gt_fmt_us3(char *p, int64_t ns)
{
	uint64_t u = (uint64_t)ns;

	if (ns < 0) {
		*p++ = '-';
		u = (uint64_t)0 - u;
	}
	return gt_fmt_milli(p, u);
}

/* ------------------------------------------------------------------------------------ */
/* Text                                                                                  */

/* Length of the valid UTF-8 sequence at s (at most avail bytes), or 0 if invalid. */
static size_t utf8_seq(const unsigned char *s, size_t avail)
{
	unsigned c = s[0];
	unsigned lo = 0x80, hi = 0xbf;
	size_t n;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4;
	else
		return 0;
	if (avail < n)
		return 0;
	/* the second byte's range excludes overlong forms, surrogates and > U+10FFFF */
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return n;
}

static char *put_fffd(char *d)
{
	d[0] = (char)0xef;
	d[1] = (char)0xbf;
	d[2] = (char)0xbd;
	return d + 3;
}

char *gt_json_escape(char *d, const char *src, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = (const unsigned char *)src;
	size_t i = 0;

	while (i < len) {
		unsigned c = s[i];

		if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
			*d++ = (char)c;
			i++;
		} else if (c == '"' || c == '\\') {
			*d++ = '\\';
			*d++ = (char)c;
			i++;
		} else if (c < 0x20) {
			memcpy(d, "\\u00", 4);
			d[4] = hex[c >> 4];
			d[5] = hex[c & 15];
			d += 6;
			i++;
		} else {
			size_t n = utf8_seq(s + i, len - i);

			if (n == 0) {
				d = put_fffd(d);
				i++;
			} else {
				memcpy(d, s + i, n);
				d += n;
				i += n;
			}
		}
	}
	return d;
}

char *gt_utf8_sanitize(char *d, const char *src, size_t len)
{
	const unsigned char *s = (const unsigned char *)src;
	size_t i = 0;

	while (i < len) {
		if (s[i] >= 0x01 && s[i] < 0x80) {
			*d++ = (char)s[i++];
			continue;
		}
		size_t n = s[i] ? utf8_seq(s + i, len - i) : 0;

		if (n == 0) {
			d = put_fffd(d);
			i++;
		} else {
			memcpy(d, s + i, n);
			d += n;
			i += n;
		}
	}
	return d;
}

char *gt_csv_field(char *d, const char *s, size_t len)
{
	bool quote = false;
	char *start = d;
	char *end;

	for (size_t i = 0; i < len; i++)
		if (s[i] == ',' || s[i] == '"' || s[i] == '\r' || s[i] == '\n') {
			quote = true;
			break;
		}
	if (!quote)
		return gt_utf8_sanitize(d, s, len);
	/* sanitize after the opening quote, then double the quotes in place from the back */
	*d++ = '"';
	end = gt_utf8_sanitize(d, s, len);
	{
		size_t quotes = 0;

		for (char *q = d; q < end; q++)
			quotes += *q == '"';
		char *w = end + quotes;
		char *r = end;

		end = w;
		while (r > d) {
			char c = *--r;

			*--w = c;
			if (c == '"')
				*--w = '"';
		}
	}
	*end++ = '"';
	(void)start;
	return end;
}

size_t gt_xcut(const char *s, size_t len, size_t max, bool json)
{
	size_t i = 0;

	if (len <= max)
		return len;
	while (i < len) {
		unsigned char b = (unsigned char)s[i];
		size_t step = 1;

		if (json && b == '\\')
			step = i + 1 < len && s[i + 1] == 'u' ? 6 : 2;
		else if (b >= 0xf0)
			step = 4;
		else if (b >= 0xe0)
			step = 3;
		else if (b >= 0xc0)
			step = 2;
		if (i + step > max)
			break;
		i += step;
	}
	return i;
}

const char *gt_xbasename(const char *path)
{
	const char *slash = path ? strrchr(path, '/') : NULL;

	if (!path)
		return "";
	return slash && slash[1] ? slash + 1 : path;
}

/* ------------------------------------------------------------------------------------ */
/* Hash map: (a, b) -> index, open addressing, linear probing.                           */

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	x ^= x >> 31;
	return x;
}

static uint32_t map_hash(uint64_t a, uint64_t b)
{
	return (uint32_t)mix64(a * 0x9e3779b97f4a7c15ull + b);
}

static int map_init(struct gt_xmap *m, uint32_t slots)
{
	m->e = calloc(slots, sizeof(*m->e));
	if (!m->e)
		return -ENOMEM;
	m->mask = slots - 1;
	m->used = 0;
	return 0;
}

static uint32_t map_get(const struct gt_xmap *m, uint64_t a, uint64_t b)
{
	for (uint32_t i = map_hash(a, b) & m->mask;; i = (i + 1) & m->mask) {
		const struct gt_xmap_entry *e = &m->e[i];

		if (e->v == 0)
			return 0;
		if (e->a == a && e->b == b)
			return e->v;
	}
}

static int map_put(struct gt_xmap *m, uint64_t a, uint64_t b, uint32_t v)
{
	if ((m->used + 1) * 2 > m->mask + 1) {
		struct gt_xmap bigger;

		if (map_init(&bigger, (m->mask + 1) * 2) < 0)
			return -ENOMEM;
		for (uint32_t i = 0; i <= m->mask; i++)
			if (m->e[i].v)
				map_put(&bigger, m->e[i].a, m->e[i].b, m->e[i].v);
		free(m->e);
		*m = bigger;
	}
	for (uint32_t i = map_hash(a, b) & m->mask;; i = (i + 1) & m->mask) {
		struct gt_xmap_entry *e = &m->e[i];

		if (e->v == 0) {
			e->a = a;
			e->b = b;
			e->v = v;
			m->used++;
			return 0;
		}
		if (e->a == a && e->b == b) {
			e->v = v;
			return 0;
		}
	}
}

/* ------------------------------------------------------------------------------------ */
/* Model                                                                                 */

#define SCRATCH_DEMANGLE (64u * 1024u)

static int flow_cache_init(struct gt_xflow_cache *c)
{
	c->key = calloc(GT_XFLOW_SLOTS, sizeof(*c->key));
	c->slot = calloc(GT_XFLOW_SLOTS, sizeof(*c->slot));
	c->next = calloc(GT_XFLOW_SLOTS / GT_XFLOW_WAYS, sizeof(*c->next));
	return c->key && c->slot && c->next ? 0 : -ENOMEM;
}

static void flow_cache_fini(struct gt_xflow_cache *c)
{
	free(c->key);
	free(c->slot);
	free(c->next);
}

int gt_xmodel_init(struct gt_xmodel *m, struct gt_reader *reader, bool demangle,
                   gt_xname_fn name_fn, size_t name_expand)
{
	memset(m, 0, sizeof(*m));
	m->reader = reader;
	m->demangle = demangle;
	m->name_fn = name_fn;
	m->name_expand = name_expand ? name_expand : 1;
	if (map_init(&m->proc_map, 64) < 0 || map_init(&m->gpu_map, 64) < 0 ||
	    map_init(&m->track_map, 256) < 0 || map_init(&m->ctx_map, 64) < 0 ||
	    map_init(&m->pool_map, 16) < 0 || map_init(&m->name_map, 1024) < 0)
		goto fail;
	m->scratch_cap = SCRATCH_DEMANGLE * (1 + m->name_expand) + GT_STRING_MAX + 64;
	m->scratch = malloc(m->scratch_cap);
	if (!m->scratch || flow_cache_init(&m->api_flows) < 0 || flow_cache_init(&m->gpu_flows) < 0)
		goto fail;
	return 0;
fail:
	gt_xmodel_fini(m);
	return -ENOMEM;
}

void gt_xmodel_fini(struct gt_xmodel *m)
{
	for (uint32_t i = 0; i < m->nprocs; i++)
		free(m->procs[i]);
	for (uint32_t i = 0; i < m->ngpus; i++)
		free(m->gpus[i]);
	for (uint32_t i = 0; i < m->ntracks; i++) {
		for (unsigned k = 0; k < m->tracks[i]->nlanes; k++)
			free(m->tracks[i]->lanes[k].blk);
		free(m->tracks[i]);
	}
	free(m->procs);
	free(m->gpus);
	free(m->tracks);
	free(m->proc_map.e);
	free(m->gpu_map.e);
	free(m->track_map.e);
	free(m->ctx_map.e);
	free(m->pool_map.e);
	free(m->pool_bytes);
	free(m->name_map.e);
	free(m->name_direct);
	free(m->names);
	free(m->name_off);
	free(m->name_len);
	free(m->scratch);
	flow_cache_fini(&m->api_flows);
	flow_cache_fini(&m->gpu_flows);
	memset(m, 0, sizeof(*m));
}

/* Append p to a growable pointer array. */
static int push_ptr(void ***arr, uint32_t *n, uint32_t *cap, void *p)
{
	if (*n == *cap) {
		uint32_t ncap = *cap ? *cap * 2 : 16;
		void **a = realloc(*arr, ncap * sizeof(**arr));

		if (!a)
			return -ENOMEM;
		*arr = a;
		*cap = ncap;
	}
	(*arr)[(*n)++] = p;
	return 0;
}

struct gt_xproc *gt_xmodel_proc(struct gt_xmodel *m, uint32_t pid)
{
	uint32_t v = map_get(&m->proc_map, pid, 0);
	struct gt_xproc *p;

	if (v)
		return m->procs[v - 1];
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid;
	p->index = m->nprocs + 1;
	p->rank = p->local_rank = p->world_size = -1;
	if (push_ptr((void ***)&m->procs, &m->nprocs, &m->cap_procs, p) < 0 ||
	    map_put(&m->proc_map, pid, 0, m->nprocs) < 0) {
		free(p);
		return NULL;
	}
	return p;
}

static uint32_t gpu_free_number(const struct gt_xmodel *m, uint32_t want)
{
	uint32_t max = 0;
	bool taken = false;

	for (uint32_t i = 0; i < m->ngpus; i++) {
		if (m->gpus[i]->number == want)
			taken = true;
		if (m->gpus[i]->number + 1 > max)
			max = m->gpus[i]->number + 1;
	}
	return taken ? max : want;
}

static struct gt_xgpu *gpu_new(struct gt_xmodel *m, uint32_t pid, uint32_t device_id)
{
	struct gt_xgpu *g = calloc(1, sizeof(*g));

	if (!g)
		return NULL;
	g->number = gpu_free_number(m, device_id);
	g->device_id = device_id;
	g->first_pid = pid;
	if (push_ptr((void ***)&m->gpus, &m->ngpus, &m->cap_gpus, g) < 0) {
		free(g);
		return NULL;
	}
	return g;
}

static uint32_t gpu_index(const struct gt_xmodel *m, const struct gt_xgpu *g)
{
	for (uint32_t i = 0; i < m->ngpus; i++)
		if (m->gpus[i] == g)
			return i;
	return 0;
}

struct gt_xgpu *gt_xmodel_gpu(struct gt_xmodel *m, uint32_t pid, uint32_t device_id)
{
	uint32_t v = map_get(&m->gpu_map, pid, device_id);
	struct gt_xgpu *g = NULL;

	if (v)
		return m->gpus[v - 1];
	/* No DEVICE record from this process (yet): share the GPU another process reported
	 * with the same ordinal, the best guess without a uuid. */
	for (uint32_t i = 0; i < m->ngpus && !g; i++)
		if (m->gpus[i]->device_id == device_id)
			g = m->gpus[i];
	if (!g)
		g = gpu_new(m, pid, device_id);
	if (!g || map_put(&m->gpu_map, pid, device_id, gpu_index(m, g) + 1) < 0)
		return NULL;
	return g;
}

/* A memory pool's reserved bytes as this record gives them (none once destroyed), into its
 * GPU's total. Pools are keyed by process, GPU and address. */
static int observe_pool(struct gt_xmodel *m, const struct gt_rec_memory_pool *r)
{
	struct gt_xgpu *g;
	uint64_t key, now;
	uint32_t i;

	g = gt_xmodel_gpu(m, r->hdr.pid, r->device_id);
	if (!g)
		return -ENOMEM;
	key = (uint64_t)r->hdr.pid << 32 | g->number;
	i = map_get(&m->pool_map, key, r->address);
	if (!i) {
		if (m->npools == m->cap_pools) {
			uint32_t cap = m->cap_pools ? m->cap_pools * 2 : 8;
			uint64_t *b = realloc(m->pool_bytes, cap * sizeof(*b));

			if (!b)
				return -ENOMEM;
			m->pool_bytes = b;
			m->cap_pools = cap;
		}
		m->pool_bytes[m->npools++] = 0;
		i = m->npools;
		if (map_put(&m->pool_map, key, r->address, i) < 0)
			return -ENOMEM;
	}
	now = r->op == GT_POOL_DESTROYED ? 0 : r->reserved_bytes;
	/* Unsigned: sizes from a damaged trace must wrap, not overflow (undefined). */
	g->pool_reserved = (int64_t)((uint64_t)g->pool_reserved - m->pool_bytes[i - 1] + now);
	m->pool_bytes[i - 1] = now;
	return 0;
}

static int observe_device(struct gt_xmodel *m, const struct gt_rec_device *d)
{
	static const uint8_t zero[16];
	bool have_uuid = memcmp(d->uuid, zero, 16) != 0;
	uint32_t v = map_get(&m->gpu_map, d->hdr.pid, d->device_id);
	struct gt_xgpu *g = v ? m->gpus[v - 1] : NULL;

	if (!g && have_uuid)
		for (uint32_t i = 0; i < m->ngpus && !g; i++)
			if (m->gpus[i]->have_uuid && memcmp(m->gpus[i]->uuid, d->uuid, 16) == 0)
				g = m->gpus[i];
	if (!g)
		g = gpu_new(m, d->hdr.pid, d->device_id);
	if (!g || map_put(&m->gpu_map, d->hdr.pid, d->device_id, gpu_index(m, g) + 1) < 0)
		return -ENOMEM;
	if (have_uuid && !g->have_uuid) {
		memcpy(g->uuid, d->uuid, 16);
		g->have_uuid = true;
	}
	g->name_id = d->name_id;
	g->sm_count = d->sm_count;
	g->cc_major = d->cc_major;
	g->cc_minor = d->cc_minor;
	g->global_mem_bytes = d->global_mem_bytes;
	if (g->announced)
		g->info_changed = true;
	return 0;
}

struct gt_xtrack *gt_xmodel_track(struct gt_xmodel *m, enum gt_xtrack_kind kind, uint32_t pid,
                                  uint32_t id)
{
	uint64_t a = ((uint64_t)kind << 32) | pid;
	struct gt_xtrack *t = m->last_track[kind];
	uint32_t v;
	struct gt_xproc *p;

	if (t && t->pid == pid && t->id == id)
		return t;
	v = map_get(&m->track_map, a, id);
	if (v)
		return m->last_track[kind] = m->tracks[v - 1];
	p = gt_xmodel_proc(m, pid);
	if (!p)
		return NULL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->kind = (uint8_t)kind;
	t->pid = pid;
	t->id = id;
	t->proc = p->index - 1;
	t->index = m->ntracks;
	if (push_ptr((void ***)&m->tracks, &m->ntracks, &m->cap_tracks, t) < 0 ||
	    map_put(&m->track_map, a, id, m->ntracks) < 0) {
		free(t);
		return NULL;
	}
	return t;
}

uint32_t gt_xmodel_track_index(const struct gt_xmodel *m, const struct gt_xtrack *t)
{
	(void)m;
	return t->index;
}

uint32_t gt_xmodel_context_device(const struct gt_xmodel *m, uint32_t pid, uint32_t ctx)
{
	uint32_t v = map_get(&m->ctx_map, pid, ctx);

	return v ? v - 1 : UINT32_MAX;
}

int gt_xmodel_observe(struct gt_xmodel *m, const union gt_record *rec)
{
	switch (rec->hdr.type) {
	case GT_REC_PROCESS: {
		const struct gt_rec_process *r = &rec->process;
		struct gt_xproc *p = gt_xmodel_proc(m, r->hdr.pid);

		if (!p)
			return -ENOMEM;
		p->ppid = r->ppid;
		p->exe_id = r->exe_id;
		p->cmdline_id = r->cmdline_id;
		p->host_id = r->host_id;
		p->rank = r->rank;
		p->local_rank = r->local_rank;
		p->world_size = r->world_size;
		p->have_info = true;
		if (p->announced)
			p->info_changed = true;
		return 0;
	}
	case GT_REC_THREAD: {
		struct gt_xtrack *t =
		        gt_xmodel_track(m, GT_XT_THREAD, rec->hdr.pid, rec->thread.tid);

		if (!t)
			return -ENOMEM;
		t->name_id = rec->thread.name_id;
		for (unsigned k = 0; k < t->nlanes; k++)
			if (t->lanes[k].announced)
				t->name_changed = true;
		return 0;
	}
	case GT_REC_DEVICE:
		return observe_device(m, &rec->device);
	case GT_REC_CONTEXT:
		return map_put(&m->ctx_map, rec->hdr.pid, rec->context.context_id,
		               rec->context.device_id + 1);
	case GT_REC_MEMORY: {
		const struct gt_rec_memory *r = &rec->memory;
		struct gt_xgpu *g;

		if (!gt_xmodel_drawn(rec))
			return 0;
		g = gt_xmodel_gpu(m, r->hdr.pid, r->device_id);
		if (!g)
			return -ENOMEM;
		/* Unsigned: sizes from a damaged trace must wrap, not overflow (undefined). */
		if (r->op == GT_MEMORY_ALLOC)
			g->mem_in_use = (int64_t)((uint64_t)g->mem_in_use + r->bytes);
		else if (r->op == GT_MEMORY_FREE)
			g->mem_in_use = (int64_t)((uint64_t)g->mem_in_use - r->bytes);
		return 0;
	}
	case GT_REC_MEMORY_POOL:
		return gt_xmodel_drawn(rec) ? observe_pool(m, &rec->memory_pool) : 0;
	case GT_REC_LOSS:
		m->loss_records++;
		m->losses[rec->loss.source < GT_LOSS_SOURCE_MAX ? rec->loss.source
		                                                : GT_LOSS_CORRUPT] +=
		        rec->loss.count;
		return 0;
	default:
		return 0;
	}
}

/* ------------------------------------------------------------------------------------ */
/* Lanes                                                                                 */

/* Would [s, e] nest on lane l? On success *pi, *pj: the blocks [i, j) it contains. */
static bool lane_fits(const struct gt_xlane *l, uint64_t s, uint64_t e, bool strict, uint32_t *pi,
                      uint32_t *pj)
{
	const struct gt_xblock *b = l->blk;
	uint32_t n = l->n, i, j;

	if (l->folded && s < l->floor_end_ns) {
		/* only a slice containing everything folded can reach back past the floor;
		 * with strict ties it must not start where a folded block started */
		if (s > l->floor_start_ns || e < l->floor_end_ns)
			return false;
		if (strict && s == l->floor_start_ns)
			return false;
	}
	if (n == 0 || s >= b[n - 1].end_ns) {
		*pi = *pj = n;
		return true;
	}
	/* records mostly arrive in end order: the blocks this one contains are at the tail */
	i = n;
	while (i > 0 && b[i - 1].end_ns > s)
		i--;
	if (i < n && b[i].start_ns < s)
		return false; /* starts strictly inside a block */
	j = i;
	while (j < n && b[j].start_ns < e)
		j++;
	if (j > i && b[j - 1].end_ns > e)
		return false; /* a block sticks out past the end */
	if (strict) {
		/* at equal timestamps Perfetto keeps file order, and this slice is written
		 * after the blocks already there */
		if (j > i && b[i].start_ns == s && b[i].end_ns > s)
			return false;
		for (uint32_t k = j; s < e && k < n && b[k].start_ns == e; k++)
			if (b[k].end_ns > e)
				return false;
	}
	*pi = i;
	*pj = j;
	return true;
}

/* Fold the oldest half of a full lane into its floor. */
static void lane_fold(struct gt_xlane *l)
{
	uint32_t half = l->n / 2;
	uint64_t fs = l->blk[0].start_ns, fe = l->blk[half - 1].end_ns;

	if (l->folded) {
		if (l->floor_start_ns < fs)
			fs = l->floor_start_ns;
		if (l->floor_end_ns > fe)
			fe = l->floor_end_ns;
	}
	l->floor_start_ns = fs;
	l->floor_end_ns = fe;
	l->folded = true;
	memmove(l->blk, l->blk + half, (l->n - half) * sizeof(*l->blk));
	l->n -= half;
}

static int lane_insert(struct gt_xlane *l, uint64_t s, uint64_t e, uint32_t i, uint32_t j)
{
	if (l->folded && s <= l->floor_start_ns && e >= l->floor_end_ns)
		l->folded = false; /* the new block stands for everything folded */
	if (i == j) {
		if (l->n == l->cap) {
			uint32_t ncap = l->cap ? l->cap * 2 : 16;
			struct gt_xblock *nb = realloc(l->blk, ncap * sizeof(*nb));

			if (!nb)
				return -ENOMEM;
			l->blk = nb;
			l->cap = ncap;
		}
		memmove(l->blk + i + 1, l->blk + i, (l->n - i) * sizeof(*l->blk));
		l->n++;
	} else if (j > i + 1) {
		memmove(l->blk + i + 1, l->blk + j, (l->n - j) * sizeof(*l->blk));
		l->n -= j - i - 1;
	}
	l->blk[i].start_ns = s;
	l->blk[i].end_ns = e;
	return 0;
}

unsigned gt_xtrack_place(struct gt_xmodel *m, struct gt_xtrack *t, uint64_t s, uint64_t e)
{
	uint32_t i, j;

	if (e < s)
		e = s;
	for (unsigned k = 0; k < t->nlanes; k++) {
		struct gt_xlane *l = &t->lanes[k];

		if (l->n >= GT_XLANE_BLOCKS)
			lane_fold(l);
		if (lane_fits(l, s, e, m->strict_ties, &i, &j) && lane_insert(l, s, e, i, j) == 0)
			return k;
	}
	if (t->nlanes < GT_XLANES_MAX) {
		unsigned k = t->nlanes++;

		lane_fits(&t->lanes[k], s, e, m->strict_ties, &i, &j);
		lane_insert(&t->lanes[k], s, e, i, j);
		return k;
	}
	/* Every lane is taken: pathological input (thousands of overlapping slices). Put it
	 * on the last lane and count it; the documentation says these may overlap. */
	t->forced++;
	m->lanes_forced++;
	return GT_XLANES_MAX - 1;
}

/* ------------------------------------------------------------------------------------ */
/* Names                                                                                 */

/* Store out[0..len) as cached name number nnames + 1 under (a, b). */
static const char *name_store(struct gt_xmodel *m, uint64_t a, uint64_t b, const char *out,
                              size_t need, size_t *len, uint32_t *iid, bool *fresh)
{
	if (m->nnames == m->cap_names) {
		uint32_t ncap = m->cap_names ? m->cap_names * 2 : 256;
		uint32_t *no = realloc(m->name_off, ncap * sizeof(*no));

		if (!no)
			return NULL;
		m->name_off = no;
		uint32_t *nl = realloc(m->name_len, ncap * sizeof(*nl));

		if (!nl)
			return NULL;
		m->name_len = nl;
		m->cap_names = ncap;
	}
	if (m->names_len + need + 1 > m->names_cap) {
		size_t ncap = m->names_cap ? m->names_cap * 2 : 64 * 1024;
		char *nn;

		while (ncap < m->names_len + need + 1)
			ncap *= 2;
		nn = realloc(m->names, ncap);
		if (!nn)
			return NULL;
		m->names = nn;
		m->names_cap = ncap;
	}
	memcpy(m->names + m->names_len, out, need);
	m->names[m->names_len + need] = '\0';
	m->name_off[m->nnames] = (uint32_t)m->names_len;
	m->name_len[m->nnames] = (uint32_t)need;
	m->names_len += need + 1;
	m->nnames++;
	if (map_put(&m->name_map, a, b, m->nnames) < 0)
		return NULL;
	*len = need;
	if (iid)
		*iid = m->nnames;
	if (fresh)
		*fresh = true;
	return m->names + m->name_off[m->nnames - 1];
}

static const char *name_cached(struct gt_xmodel *m, uint32_t v, size_t *len, uint32_t *iid,
                               bool *fresh)
{
	*len = m->name_len[v - 1];
	if (iid)
		*iid = v;
	if (fresh)
		*fresh = false;
	return m->names + m->name_off[v - 1];
}

/* Remember name v under (id, dm) in the direct table when the id is small. */
static void name_direct_put(struct gt_xmodel *m, uint32_t id, bool dm, uint32_t v)
{
	uint32_t k = id * 2 + dm;

	if (id >= GT_XNAME_DIRECT)
		return;
	if (k >= m->name_direct_cap) {
		uint32_t ncap = m->name_direct_cap ? m->name_direct_cap : 1024;
		uint32_t *nd;

		while (ncap <= k)
			ncap *= 2;
		nd = realloc(m->name_direct, ncap * sizeof(*nd));
		if (!nd)
			return; /* the hash map still has it */
		memset(nd + m->name_direct_cap, 0, (ncap - m->name_direct_cap) * sizeof(*nd));
		m->name_direct = nd;
		m->name_direct_cap = ncap;
	}
	m->name_direct[k] = v;
}

const char *gt_xmodel_name(struct gt_xmodel *m, uint32_t id, bool kernel, size_t *len,
                           uint32_t *iid, bool *fresh)
{
	bool dm = kernel && m->demangle;
	uint32_t k = id * 2 + dm;
	uint32_t v = id < GT_XNAME_DIRECT && k < m->name_direct_cap ? m->name_direct[k] : 0;
	const char *src = NULL, *ret;
	size_t slen = 0;
	char *in, *out, *end;

	if (v)
		return name_cached(m, v, len, iid, fresh);
	v = map_get(&m->name_map, id, dm);
	if (v) {
		name_direct_put(m, id, dm, v);
		return name_cached(m, v, len, iid, fresh);
	}
	in = m->scratch;
	if (m->reader)
		src = gt_reader_string(m->reader, id, &slen);
	if (!src) {
		char *p = in;

		memcpy(p, "<unknown string ", 16);
		p = gt_fmt_u64(p + 16, id);
		*p++ = '>';
		slen = (size_t)(p - in);
	} else {
		if (slen > GT_STRING_MAX)
			slen = GT_STRING_MAX;
		memcpy(in, src, slen);
	}
	in[slen] = '\0';
	src = in;
	if (dm && slen > 2 && in[0] == '_' && in[1] == 'Z' && strlen(in) == slen) {
		char *dbuf = in + GT_STRING_MAX + 1;

		src = gt_demangle(in, dbuf, SCRATCH_DEMANGLE);
		slen = strlen(src);
	}
	out = m->scratch + GT_STRING_MAX + 1 + SCRATCH_DEMANGLE;
	end = m->name_fn ? m->name_fn(out, src, slen) : (memcpy(out, src, slen), out + slen);
	ret = name_store(m, id, dm, out, (size_t)(end - out), len, iid, fresh);
	if (ret)
		name_direct_put(m, id, dm, m->nnames);
	return ret;
}

const char *gt_xmodel_name_key2(struct gt_xmodel *m, uint64_t a, uint64_t b, const char *s,
                                size_t slen, size_t *len, uint32_t *iid, bool *fresh)
{
	uint32_t v = map_get(&m->name_map, a, b);
	char *out, *end;

	if (v)
		return name_cached(m, v, len, iid, fresh);
	if (slen > GT_STRING_MAX)
		slen = GT_STRING_MAX;
	out = m->scratch + GT_STRING_MAX + 1 + SCRATCH_DEMANGLE;
	end = m->name_fn ? m->name_fn(out, s, slen) : (memcpy(out, s, slen), out + slen);
	return name_store(m, a, b, out, (size_t)(end - out), len, iid, fresh);
}

const char *gt_xmodel_name_key(struct gt_xmodel *m, uint64_t key, const char *s, size_t slen,
                               size_t *len, uint32_t *iid, bool *fresh)
{
	return gt_xmodel_name_key2(m, key, 2, s, slen, len, iid, fresh);
}

/* ------------------------------------------------------------------------------------ */
/* Flows                                                                                 */

/* First entry of the set a launch may occupy, and its key (never 0: corr is not). */
static uint32_t flow_set(uint32_t pid, uint32_t corr)
{
	return ((corr ^ (pid * 0x9e3779b1u)) & (GT_XFLOW_SLOTS / GT_XFLOW_WAYS - 1)) *
	       GT_XFLOW_WAYS;
}

/* The launch's entry in a cache, or NULL. The keys of a set share a cache line. */
static struct gt_xflow_slot *flow_find(struct gt_xflow_cache *c, uint32_t pid, uint32_t corr)
{
	uint32_t base = flow_set(pid, corr);
	uint64_t key = (uint64_t)pid << 32 | corr;

	for (unsigned k = 0; k < GT_XFLOW_WAYS; k++)
		if (c->key[base + k] == key)
			return &c->slot[base + k];
	return NULL;
}

/* Where to remember a launch: its own entry, else an empty one, else the one its set took
 * first. */
static struct gt_xflow_slot *flow_put(struct gt_xflow_cache *c, uint32_t pid, uint32_t corr)
{
	uint32_t base = flow_set(pid, corr), way = GT_XFLOW_WAYS;
	uint64_t key = (uint64_t)pid << 32 | corr;

	for (unsigned k = 0; k < GT_XFLOW_WAYS; k++) {
		if (c->key[base + k] == key)
			return &c->slot[base + k];
		if (c->key[base + k] == 0 && way == GT_XFLOW_WAYS)
			way = k;
	}
	if (way == GT_XFLOW_WAYS) {
		uint8_t *next = &c->next[base / GT_XFLOW_WAYS];

		way = *next;
		*next = (uint8_t)((way + 1) % GT_XFLOW_WAYS);
	}
	c->key[base + way] = key;
	return &c->slot[base + way];
}

static void flow_fill(struct gt_xflow_slot *s, uint32_t pid, uint32_t corr, uint64_t ts_ns,
                      uint32_t track, unsigned lane)
{
	s->pid = pid;
	s->corr = corr;
	s->ts_ns = ts_ns;
	s->track = track;
	s->lane = (uint8_t)lane;
	s->state = 1;
}

/* The launch's flow id, from the process of the track its slice is on. */
static uint64_t flow_id(const struct gt_xmodel *m, uint32_t track, uint32_t corr)
{
	return gt_xflow_id(m->procs[m->tracks[track]->proc], corr);
}

const struct gt_xflow_slot *gt_xflow_api(struct gt_xmodel *m, uint32_t pid, uint32_t corr,
                                         uint64_t ts_ns, uint32_t track, unsigned lane,
                                         uint64_t *id)
{
	struct gt_xflow_slot *g = flow_find(&m->gpu_flows, pid, corr);
	struct gt_xflow_slot *a = flow_put(&m->api_flows, pid, corr);

	if (g && g->state == 1) {
		/* its GPU work came first and started a pending flow: this call starts it too */
		g->state = 2;
		flow_fill(a, pid, corr, ts_ns, track, lane);
		a->state = 2;
		*id = flow_id(m, g->track, corr) | GT_XFLOW_PENDING;
		m->flows++;
		return g;
	}
	flow_fill(a, pid, corr, ts_ns, track, lane);
	*id = flow_id(m, track, corr);
	return NULL;
}

const struct gt_xflow_slot *gt_xflow_gpu(struct gt_xmodel *m, uint32_t pid, uint32_t corr,
                                         uint64_t ts_ns, uint32_t track, unsigned lane,
                                         uint64_t *id)
{
	struct gt_xflow_slot *a = flow_find(&m->api_flows, pid, corr);
	struct gt_xflow_slot *g;

	*id = 0;
	if (a) {
		if (a->state == 2)
			return NULL; /* a later activity of a launch already drawn: one arrow */
		a->state = 2;
		*id = flow_id(m, a->track, corr);
		m->flows++;
		return a;
	}
	if (flow_find(&m->gpu_flows, pid, corr))
		return NULL; /* its first activity already waits for the call, or got it */
	g = flow_put(&m->gpu_flows, pid, corr);
	flow_fill(g, pid, corr, ts_ns, track, lane);
	*id = flow_id(m, track, corr) | GT_XFLOW_PENDING;
	return NULL;
}

uint64_t gt_xmodel_lanes(const struct gt_xmodel *m)
{
	uint64_t n = 0;

	for (uint32_t i = 0; i < m->ntracks; i++)
		n += m->tracks[i]->nlanes;
	return n;
}

void gt_xlane_ids(const struct gt_xmodel *m, const struct gt_xtrack *t, unsigned lane,
                  uint32_t *pid, uint32_t *tid)
{
	const uint32_t low = (1u << GT_XLANE_SHIFT) - 1;

	switch (t->kind) {
	case GT_XT_THREAD:
		*pid = t->pid;
		*tid = (t->id & low) | (uint32_t)lane << GT_XLANE_SHIFT;
		return;
	case GT_XT_SYNC:
		*pid = t->pid;
		*tid = (t->id & low) | (uint32_t)(GT_XLANES_MAX + lane) << GT_XLANE_SHIFT;
		return;
	case GT_XT_STREAM: {
		const struct gt_xgpu *g = m->gpus[t->gpu];
		uint32_t base = t->id & 0xfffffu;

		/* a second process's streams on the same GPU: its index above the stream id */
		if (t->pid != g->first_pid)
			base |= (m->procs[t->proc]->index & 0x1fu) << 20;
		*pid = gt_xgpu_pid(m, g);
		*tid = base | (uint32_t)lane << GT_XLANE_SHIFT;
		return;
	}
	case GT_XT_NVTX:
		*pid = t->pid;
		*tid = GT_XNVTX_TID + lane;
		return;
	default:
		*pid = t->pid;
		*tid = GT_XOVERHEAD_TID + lane;
		return;
	}
}

uint32_t gt_xgpu_pid(const struct gt_xmodel *m, const struct gt_xgpu *g)
{
	if (m->small_gpu_pids && g->number < GT_XGPU_SMALL_MAX)
		return g->number;
	return GT_XGPU_PID_BASE + g->number;
}

char *gt_xlane_name(struct gt_xmodel *m, const struct gt_xtrack *t, unsigned lane, char *n,
                    bool json)
{
	switch (t->kind) {
	case GT_XT_THREAD:
	case GT_XT_SYNC: {
		const struct gt_xtrack *th = t;

		if (t->kind == GT_XT_SYNC)
			th = gt_xmodel_track(m, GT_XT_THREAD, t->pid, t->id);
		if (th && th->name_id) {
			size_t len = 0;
			const char *tn = gt_xmodel_name(m, th->name_id, false, &len, NULL, NULL);

			if (tn) {
				len = gt_xcut(tn, len, 1024, json);
				memcpy(n, tn, len);
				n += len;
			}
		} else {
			n = stpcpy(n, "thread ");
			n = gt_fmt_u64(n, t->id);
		}
		if (t->kind == GT_XT_SYNC)
			n = stpcpy(n, " sync");
		break;
	}
	case GT_XT_STREAM:
		n = stpcpy(n, "stream ");
		n = gt_fmt_u64(n, t->id);
		if (t->pid != m->gpus[t->gpu]->first_pid) {
			n = stpcpy(n, " (pid ");
			n = gt_fmt_u64(n, t->pid);
			*n++ = ')';
		}
		break;
	case GT_XT_NVTX:
		n = stpcpy(n, "NVTX ranges");
		break;
	default:
		n = stpcpy(n, "CUPTI overhead");
		break;
	}
	if (lane > 0) {
		n = stpcpy(n, " (overlap ");
		n = gt_fmt_u64(n, lane);
		*n++ = ')';
	}
	return n;
}

bool gt_xmodel_drawn(const union gt_record *rec)
{
	switch (rec->hdr.type) {
	case GT_REC_KERNEL:
		return rec->kernel.span.start_ns != 0;
	case GT_REC_MEMCPY:
		return rec->memcpy.span.start_ns != 0;
	case GT_REC_MEMSET:
		return rec->memset.span.start_ns != 0;
	case GT_REC_MEMORY:
		return rec->memory.mem_kind != GT_MEM_PINNED &&
		       rec->memory.mem_kind != GT_MEM_PAGEABLE;
	case GT_REC_MEMORY_POOL:
		return rec->memory_pool.ts_ns != 0;
	default:
		return true;
	}
}
