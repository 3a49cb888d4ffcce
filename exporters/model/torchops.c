/* PyTorch operators from emit_nvtx's NVTX ranges, and the calls made inside them
 * (torchops.h). Two passes over a reader; runs in the CLI. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "idmap.h"
#include "torchops.h"

struct op {
	uint64_t start_ns, end_ns;
	uint32_t pid, tid;
	uint32_t message_id;
	uint32_t parent; /* index + 1 of the operator it is nested in on its thread; 0: none */
	uint32_t first;  /* its calls: launches[first .. first + n) */
	uint32_t n;
};

struct thr {
	uint32_t lo, hi; /* its operators in ops[], by start */
};

struct launch {
	uint32_t op; /* index */
	uint32_t corr;
};

struct gt_torchops {
	struct op *ops;
	size_t nops, capops;
	struct thr *thrs;
	uint32_t nthrs;
	struct gt_idmap thr_map;    /* (pid, tid) -> thr + 1 */
	struct gt_idmap launch_map; /* (pid, corr) -> op + 1 */
	uint32_t *corrs;            /* the calls' correlation ids, by operator */
	size_t ncorrs;
};

/* ---- the message ------------------------------------------------------------------- */

static bool take(const char **p, const char *end, const char *lit)
{
	size_t n = strlen(lit);

	if ((size_t)(end - *p) < n || memcmp(*p, lit, n) != 0)
		return false;
	*p += n;
	return true;
}

static bool take_int(const char **p, const char *end, int64_t *v)
{
	const char *s = *p;
	bool neg = false;
	uint64_t x = 0;

	if (s < end && *s == '-') {
		neg = true;
		s++;
	}
	if (s >= end || *s < '0' || *s > '9')
		return false;
	while (s < end && *s >= '0' && *s <= '9') {
		if (x > (UINT64_MAX - 9) / 10)
			return false;
		x = x * 10 + (uint64_t)(*s++ - '0');
	}
	if (x > INT64_MAX)
		return false;
	*v = neg ? -(int64_t)x : (int64_t)x;
	*p = s;
	return true;
}

/* A bracketed list "[...]" with balanced brackets; *p moves past it. */
static bool take_list(const char **p, const char *end, const char **out, size_t *len)
{
	const char *s = *p;
	int depth = 0;

	if (s >= end || *s != '[')
		return false;
	for (; s < end; s++) {
		if (*s == '[')
			depth++;
		else if (*s == ']' && --depth == 0)
			break;
	}
	if (s >= end)
		return false;
	*out = *p;
	*len = (size_t)(s + 1 - *p);
	*p = s + 1;
	return true;
}

static const char *find(const char *s, const char *end, const char *lit)
{
	size_t n = strlen(lit);

	for (; (size_t)(end - s) >= n; s++)
		if (*s == lit[0] && memcmp(s, lit, n) == 0)
			return s;
	return NULL;
}

bool gt_torchop_parse(const char *s, size_t len, struct gt_torchop_fields *f)
{
	static const char *const keys[] = {", seq = ", ", op_id = ", ", sizes = ["};
	const char *end = s + len, *name_end = NULL, *p;
	bool any = false;

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		const char *k = find(s, end, keys[i]);

		if (k && (!name_end || k < name_end))
			name_end = k;
	}
	if (!name_end || name_end == s)
		return false;
	memset(f, 0, sizeof(*f));
	f->name = s;
	f->name_len = (size_t)(name_end - s);
	f->seq = -1;
	p = name_end;
	if (take(&p, end, ", seq = ")) {
		if (!take_int(&p, end, &f->seq))
			return false;
		any = true;
	}
	if (take(&p, end, ", op_id = ")) {
		if (!take_int(&p, end, &f->op_id))
			return false;
		any = true;
	}
	if (take(&p, end, ", sizes = ")) {
		if (!take_list(&p, end, &f->sizes, &f->sizes_len))
			return false;
		any = true;
	}
	if (take(&p, end, ", input_op_ids = ") && !take_list(&p, end, &f->inputs, &f->inputs_len))
		return false;
	return any && p == end;
}

/* ---- loading ----------------------------------------------------------------------- */

static int cmp_op(const void *pa, const void *pb)
{
	const struct op *a = pa, *b = pb;

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	if (a->start_ns != b->start_ns)
		return a->start_ns < b->start_ns ? -1 : 1;
	/* the outer of two that start together first */
	if (a->end_ns != b->end_ns)
		return a->end_ns > b->end_ns ? -1 : 1;
	return 0;
}

static int add_op(struct gt_torchops *o, const struct gt_rec_nvtx *n)
{
	struct op *x;

	if (o->nops == o->capops) {
		size_t cap = o->capops ? o->capops * 2 : 256;
		struct op *no = realloc(o->ops, cap * sizeof(*no));

		if (!no)
			return -ENOMEM;
		o->ops = no;
		o->capops = cap;
	}
	x = &o->ops[o->nops++];
	memset(x, 0, sizeof(*x));
	x->start_ns = n->start_ns;
	x->end_ns = n->end_ns;
	x->pid = n->hdr.pid;
	x->tid = n->tid;
	x->message_id = n->message_id;
	return 0;
}

/* Sort the operators, find each one's parent, index the threads. */
static int index_ops(struct gt_torchops *o)
{
	uint32_t *stack = NULL;
	size_t depth = 0;
	int ret = 0;

	qsort(o->ops, o->nops, sizeof(*o->ops), cmp_op);
	stack = malloc((o->nops + 1) * sizeof(*stack));
	o->thrs = malloc((o->nops + 1) * sizeof(*o->thrs));
	if (!stack || !o->thrs || (ret = gt_idmap_init(&o->thr_map, 64)) < 0) {
		ret = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < o->nops; i++) {
		struct op *x = &o->ops[i];

		if (i == 0 || x->pid != o->ops[i - 1].pid || x->tid != o->ops[i - 1].tid) {
			if (o->nthrs)
				o->thrs[o->nthrs - 1].hi = (uint32_t)i;
			o->thrs[o->nthrs].lo = (uint32_t)i;
			o->nthrs++;
			ret = gt_idmap_put(&o->thr_map, x->pid, x->tid, o->nthrs);
			if (ret < 0)
				goto out;
			depth = 0;
		}
		while (depth && o->ops[stack[depth - 1]].end_ns < x->end_ns)
			depth--;
		x->parent = depth ? stack[depth - 1] + 1 : 0;
		stack[depth++] = (uint32_t)i;
	}
	if (o->nthrs)
		o->thrs[o->nthrs - 1].hi = (uint32_t)o->nops;
out:
	free(stack);
	return ret;
}

/* The innermost operator of thread (pid, tid) whose range holds ts: index + 1, 0 none. */
static uint32_t op_at(const struct gt_torchops *o, uint32_t pid, uint32_t tid, uint64_t ts)
{
	uint32_t t = gt_idmap_get(&o->thr_map, pid, tid), lo, hi, i;

	if (!t)
		return 0;
	lo = o->thrs[t - 1].lo;
	hi = o->thrs[t - 1].hi;
	/* the last operator that starts at or before ts */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (o->ops[mid].start_ns <= ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == o->thrs[t - 1].lo)
		return 0;
	/* one that ended before ts: the operator holding ts, if any, holds it too */
	for (i = lo; i && o->ops[i - 1].end_ns < ts; i = o->ops[i - 1].parent)
		;
	return i;
}

int gt_torchops_new(struct gt_torchops **ret)
{
	*ret = calloc(1, sizeof(**ret));
	return *ret ? 0 : -ENOMEM;
}

int gt_torchops_feed(struct gt_torchops *o, const struct gt_reader *r,
                     const union gt_record *rec)
{
	const struct gt_rec_nvtx *n = &rec->nvtx;
	struct gt_torchop_fields f;
	const char *s;
	size_t len;

	if (rec->hdr.type != GT_REC_NVTX || n->kind != GT_NVTX_PUSH_POP)
		return 0;
	s = gt_reader_string(r, n->message_id, &len);
	if (s && gt_torchop_parse(s, len, &f))
		return add_op(o, n);
	return 0;
}

static int pass_calls(struct gt_torchops *o, struct gt_reader *r)
{
	const union gt_record *rec;
	struct launch *l = NULL;
	size_t n = 0, cap = 0;
	int ret;

	ret = gt_idmap_init(&o->launch_map, 1024);
	if (ret < 0)
		return ret;
	while ((ret = gt_reader_next(r, &rec)) > 0) {
		const struct gt_rec_api *a = &rec->api;
		uint32_t op;

		if (rec->hdr.type != GT_REC_API || !a->correlation_id)
			continue;
		op = op_at(o, a->hdr.pid, a->tid, a->start_ns);
		if (!op)
			continue;
		if (n == cap) {
			size_t c = cap ? cap * 2 : 1024;
			struct launch *nl = realloc(l, c * sizeof(*nl));

			if (!nl) {
				ret = -ENOMEM;
				goto out;
			}
			l = nl;
			cap = c;
		}
		l[n].op = op - 1;
		l[n].corr = a->correlation_id;
		n++;
		ret = gt_idmap_put(&o->launch_map, a->hdr.pid, a->correlation_id, op);
		if (ret < 0)
			goto out;
	}
	if (ret < 0)
		goto out;
	{
		/* by operator, a counting sort: file order within each */
		o->corrs = malloc((n + 1) * sizeof(*o->corrs));
		if (!o->corrs) {
			ret = -ENOMEM;
			goto out;
		}
		for (size_t i = 0; i < n; i++)
			o->ops[l[i].op].n++;
		for (size_t i = 0, at = 0; i < o->nops; i++) {
			o->ops[i].first = (uint32_t)at;
			at += o->ops[i].n;
			o->ops[i].n = 0;
		}
		for (size_t i = 0; i < n; i++) {
			struct op *x = &o->ops[l[i].op];

			o->corrs[x->first + x->n++] = l[i].corr;
		}
		o->ncorrs = n;
	}
	ret = 0;
out:
	free(l);
	return ret;
}

int gt_torchops_finish(struct gt_torchops *o, struct gt_reader *r)
{
	int err;

	if (!o->nops)
		return 0;
	err = index_ops(o);
	if (err == 0)
		err = gt_reader_rewind(r);
	if (err == 0)
		err = pass_calls(o, r);
	if (err == 0)
		err = gt_reader_rewind(r);
	return err;
}

int gt_torchops_load(struct gt_reader *r, struct gt_torchops **ret)
{
	const struct gt_trace_counts *fc = gt_reader_footer_counts(r);
	const union gt_record *rec;
	struct gt_torchops *o;
	int err;

	*ret = NULL;
	if (fc && !fc->records[GT_REC_NVTX])
		return 0;
	err = gt_torchops_new(&o);
	if (err < 0)
		return err;
	err = gt_reader_rewind(r);
	while (err == 0 && (err = gt_reader_next(r, &rec)) > 0)
		err = gt_torchops_feed(o, r, rec);
	if (err == 0)
		err = gt_torchops_finish(o, r);
	if (err < 0 || !o->nops) {
		gt_torchops_free(o);
		return err;
	}
	*ret = o;
	return 0;
}

void gt_torchops_free(struct gt_torchops *o)
{
	if (!o)
		return;
	free(o->ops);
	free(o->thrs);
	free(o->corrs);
	if (o->thr_map.e)
		gt_idmap_fini(&o->thr_map);
	if (o->launch_map.e)
		gt_idmap_fini(&o->launch_map);
	free(o);
}

size_t gt_torchops_count(const struct gt_torchops *o)
{
	return o ? o->nops : 0;
}

uint64_t gt_torchops_of_range(const struct gt_torchops *o, const struct gt_rec_nvtx *n)
{
	uint32_t t, lo, hi;

	if (!o || n->kind != GT_NVTX_PUSH_POP)
		return 0;
	t = gt_idmap_get(&o->thr_map, n->hdr.pid, n->tid);
	if (!t)
		return 0;
	lo = o->thrs[t - 1].lo;
	hi = o->thrs[t - 1].hi;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (o->ops[mid].start_ns < n->start_ns)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < o->thrs[t - 1].hi && o->ops[lo].start_ns == n->start_ns; lo++)
		if (o->ops[lo].end_ns == n->end_ns && o->ops[lo].message_id == n->message_id)
			return (uint64_t)lo + 1;
	return 0;
}

uint64_t gt_torchops_of_launch(const struct gt_torchops *o, uint32_t pid, uint32_t corr)
{
	if (!o || !corr)
		return 0;
	return gt_idmap_get(&o->launch_map, pid, corr);
}

const uint32_t *gt_torchops_launches(const struct gt_torchops *o, uint64_t id, size_t *n)
{
	*n = 0;
	if (!o || id == 0 || id > o->nops || !o->ops[id - 1].n)
		return NULL;
	*n = o->ops[id - 1].n;
	return o->corrs + o->ops[id - 1].first;
}

uint32_t gt_torchops_message(const struct gt_torchops *o, uint64_t id)
{
	return o && id && id <= o->nops ? o->ops[id - 1].message_id : 0;
}
