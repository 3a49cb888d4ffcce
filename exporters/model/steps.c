/* Training steps found among a trace's NVTX ranges: the name rules, the ranges of the chosen
 * family per process, their numbers. Runs in the CLI; memory grows with the number of
 * distinct NVTX messages and of step-like ranges, never with the rest of the trace. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "steps.h"

/* Message id -> what its text is. Open addressing; id 0 marks an empty slot (NVTX messages
 * with no string are never steps). */
struct msg_slot {
	uint32_t id;
	uint8_t family; /* enum gt_steps_family; NONE after finish unless the chosen one */
	int64_t number; /* -1: the text carries none */
};

/* The steps of one process: steps[first .. first + n) */
struct proc_steps {
	uint32_t pid;
	size_t first, n;
};

struct gt_steps {
	char *name; /* owned; NULL: detect */
	bool finished;
	enum gt_steps_family family;

	struct msg_slot *msgs;
	size_t msgs_cap, msgs_used; /* cap: a power of two */

	struct gt_step *steps; /* candidates while feeding; the chosen steps after finish */
	uint8_t *fam;          /* while feeding: each candidate's family */
	size_t n, cap;

	struct proc_steps *procs; /* after finish: sorted by pid */
	size_t nprocs;
};

/* ------------------------------------------------------------------------------------ */
/* Names                                                                                  */

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static char lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

/* What follows a family's word: nothing, or an optional separator and 1 to 18 digits. */
static bool number_suffix(const char *s, size_t len, int64_t *number)
{
	int64_t v = 0;

	*number = -1;
	if (len == 0)
		return true;
	if (*s && strchr(" #_-:=", *s) && len > 1) {
		s++;
		len--;
	}
	if (len > 18)
		return false;
	for (size_t i = 0; i < len; i++) {
		if (!is_digit(s[i]))
			return false;
		v = v * 10 + (s[i] - '0');
	}
	*number = v;
	return true;
}

/* s starts with `word` (case-insensitively when fold) and the rest is a number suffix. */
static bool word_match(const char *s, size_t len, const char *word, bool fold, int64_t *number)
{
	size_t wl = strlen(word);

	if (len < wl)
		return false;
	for (size_t i = 0; i < wl; i++)
		if (fold ? lower(s[i]) != word[i] : s[i] != word[i])
			return false;
	return number_suffix(s + wl, len - wl, number);
}

enum gt_steps_family gt_steps_match(const char *name, const char *s, size_t len, int64_t *number)
{
	/* longer words first where one is a prefix of another */
	static const struct {
		const char *word;
		enum gt_steps_family family;
	} words[] = {
	        {"step", GT_STEPS_STEP},
	        {"train_step", GT_STEPS_TRAIN_STEP},
	        {"training_step", GT_STEPS_TRAIN_STEP},
	        {"train step", GT_STEPS_TRAIN_STEP},
	        {"training step", GT_STEPS_TRAIN_STEP},
	        {"iteration", GT_STEPS_ITERATION},
	        {"iter", GT_STEPS_ITERATION},
	};
	static const char ps[] = "ProfilerStep#";

	*number = -1;
	if (!s)
		return GT_STEPS_NONE;
	if (name)
		return word_match(s, len, name, false, number) ? GT_STEPS_NAMED : GT_STEPS_NONE;
	if (len > sizeof(ps) - 1 && memcmp(s, ps, sizeof(ps) - 1) == 0) {
		/* exactly ProfilerStep#N: the name HTA and TensorBoard look for */
		if (is_digit(s[sizeof(ps) - 1]) &&
		    number_suffix(s + sizeof(ps) - 1, len - (sizeof(ps) - 1), number))
			return GT_STEPS_PROFILER_STEP;
		*number = -1;
		return GT_STEPS_NONE;
	}
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (word_match(s, len, words[i].word, true, number))
			return words[i].family;
	*number = -1;
	return GT_STEPS_NONE;
}

const char *gt_steps_family_name(enum gt_steps_family f)
{
	static const char *const names[GT_STEPS_FAMILY_MAX] = {
	        "none", "named", "ProfilerStep", "step", "train_step", "iteration",
	};

	return (unsigned)f < GT_STEPS_FAMILY_MAX ? names[f] : "none";
}

/* ------------------------------------------------------------------------------------ */
/* The message cache                                                                      */

static size_t msg_hash(uint32_t id, size_t mask)
{
	return (size_t)(((uint64_t)id * 0x9e3779b97f4a7c15ull) >> 17) & mask;
}

static struct msg_slot *msg_find(const struct gt_steps *s, uint32_t id)
{
	size_t mask = s->msgs_cap - 1;

	if (!s->msgs_cap)
		return NULL;
	for (size_t i = msg_hash(id, mask);; i = (i + 1) & mask) {
		if (s->msgs[i].id == id)
			return &s->msgs[i];
		if (s->msgs[i].id == 0)
			return NULL;
	}
}

static int msg_grow(struct gt_steps *s)
{
	size_t cap = s->msgs_cap ? s->msgs_cap * 2 : 64;
	struct msg_slot *old = s->msgs, *m = calloc(cap, sizeof(*m));

	if (!m)
		return -ENOMEM;
	for (size_t j = 0; j < s->msgs_cap; j++) {
		size_t i;

		if (!old[j].id)
			continue;
		for (i = msg_hash(old[j].id, cap - 1); m[i].id; i = (i + 1) & (cap - 1))
			;
		m[i] = old[j];
	}
	free(old);
	s->msgs = m;
	s->msgs_cap = cap;
	return 0;
}

/* The slot of message id, classified on first sight. NULL only on -ENOMEM. */
static struct msg_slot *msg_get(struct gt_steps *s, const struct gt_reader *r, uint32_t id)
{
	struct msg_slot *m = msg_find(s, id);
	size_t len = 0, i;
	const char *text;

	if (m)
		return m;
	if ((s->msgs_used + 1) * 2 > s->msgs_cap && msg_grow(s) < 0)
		return NULL;
	for (i = msg_hash(id, s->msgs_cap - 1); s->msgs[i].id; i = (i + 1) & (s->msgs_cap - 1))
		;
	m = &s->msgs[i];
	m->id = id;
	text = r ? gt_reader_string(r, id, &len) : NULL;
	m->family = (uint8_t)gt_steps_match(s->name, text, len, &m->number);
	s->msgs_used++;
	return m;
}

/* ------------------------------------------------------------------------------------ */

int gt_steps_new(const char *name, struct gt_steps **ret)
{
	struct gt_steps *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	if (name) {
		s->name = strdup(name);
		if (!s->name) {
			free(s);
			return -ENOMEM;
		}
	}
	*ret = s;
	return 0;
}

void gt_steps_free(struct gt_steps *s)
{
	if (!s)
		return;
	free(s->name);
	free(s->msgs);
	free(s->steps);
	free(s->fam);
	free(s->procs);
	free(s);
}

int gt_steps_feed(struct gt_steps *s, const struct gt_reader *r, const union gt_record *rec)
{
	const struct gt_rec_nvtx *n = &rec->nvtx;
	struct msg_slot *m;
	struct gt_step *st;

	if (rec->hdr.type != GT_REC_NVTX || n->kind == GT_NVTX_MARK || !n->message_id ||
	    s->finished || n->end_ns < n->start_ns)
		return 0;
	m = msg_get(s, r, n->message_id);
	if (!m)
		return -ENOMEM;
	if (m->family == GT_STEPS_NONE)
		return 0;
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 256;
		struct gt_step *a = realloc(s->steps, cap * sizeof(*a));
		uint8_t *f;

		if (!a)
			return -ENOMEM;
		s->steps = a;
		f = realloc(s->fam, cap);
		if (!f)
			return -ENOMEM;
		s->fam = f;
		s->cap = cap;
	}
	st = &s->steps[s->n];
	memset(st, 0, sizeof(*st));
	st->start_ns = n->start_ns;
	st->end_ns = n->end_ns;
	st->number = m->number;
	st->pid = n->hdr.pid;
	st->tid = n->tid;
	st->message_id = n->message_id;
	s->fam[s->n++] = m->family;
	return 0;
}

static int step_cmp(const void *a, const void *b)
{
	const struct gt_step *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	if (x->end_ns != y->end_ns)
		return x->end_ns > y->end_ns ? -1 : 1; /* the outer of two ranges first */
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* Number the steps [a, b) of one process (sorted by start). */
static void number_process(struct gt_step *st, size_t n)
{
	bool own = true;

	for (size_t i = 0; i < n && own; i++)
		if (st[i].number < 0 || (i > 0 && st[i].number <= st[i - 1].number))
			own = false;
	for (size_t i = 0; !own && i < n; i++)
		st[i].number = (int64_t)i;
}

int gt_steps_finish(struct gt_steps *s)
{
	size_t k = 0, i;

	if (s->finished)
		return 0;
	s->family = GT_STEPS_NONE;
	for (i = 0; i < s->n; i++)
		if (s->family == GT_STEPS_NONE || s->fam[i] < s->family)
			s->family = s->fam[i];
	/* keep the chosen family's ranges */
	for (i = 0; i < s->n; i++)
		if (s->fam[i] == s->family)
			s->steps[k++] = s->steps[i];
	s->n = k;
	free(s->fam);
	s->fam = NULL;
	for (i = 0; i < s->msgs_cap; i++)
		if (s->msgs[i].family != s->family)
			s->msgs[i].family = GT_STEPS_NONE;
	if (s->n)
		qsort(s->steps, s->n, sizeof(*s->steps), step_cmp);
	/* one entry per process, and its numbers */
	for (i = 0; i < s->n; i++)
		if (i == 0 || s->steps[i].pid != s->steps[i - 1].pid)
			s->nprocs++;
	if (s->nprocs) {
		s->procs = calloc(s->nprocs, sizeof(*s->procs));
		if (!s->procs)
			return -ENOMEM;
	}
	k = 0;
	for (i = 0; i < s->n; i++) {
		if (i == 0 || s->steps[i].pid != s->steps[i - 1].pid) {
			s->procs[k].pid = s->steps[i].pid;
			s->procs[k++].first = i;
		}
		s->procs[k - 1].n++;
	}
	for (i = 0; i < s->nprocs; i++)
		number_process(s->steps + s->procs[i].first, s->procs[i].n);
	s->finished = true;
	return 0;
}

int gt_steps_scan(struct gt_reader *r, const char *name, struct gt_steps **ret)
{
	const union gt_record *rec;
	struct gt_steps *s = NULL;
	int ret2;

	ret2 = gt_reader_rewind(r);
	if (ret2 < 0)
		return ret2;
	ret2 = gt_steps_new(name, &s);
	if (ret2 < 0)
		return ret2;
	while ((ret2 = gt_reader_next(r, &rec)) > 0) {
		ret2 = gt_steps_feed(s, r, rec);
		if (ret2 < 0)
			goto out;
	}
	if (ret2 < 0)
		goto out;
	ret2 = gt_steps_finish(s);
	if (ret2 < 0)
		goto out;
	ret2 = gt_reader_rewind(r);
out:
	if (ret2 < 0) {
		gt_steps_free(s);
		return ret2;
	}
	*ret = s;
	return 0;
}

enum gt_steps_family gt_steps_family(const struct gt_steps *s)
{
	return s->family;
}

size_t gt_steps_count(const struct gt_steps *s)
{
	return s->finished ? s->n : 0;
}

size_t gt_steps_processes(const struct gt_steps *s)
{
	return s->nprocs;
}

const struct gt_step *gt_steps_at(const struct gt_steps *s, size_t i, uint32_t *pid, size_t *n)
{
	if (i >= s->nprocs) {
		*n = 0;
		return NULL;
	}
	*pid = s->procs[i].pid;
	*n = s->procs[i].n;
	return s->steps + s->procs[i].first;
}

const struct gt_step *gt_steps_of(const struct gt_steps *s, uint32_t pid, size_t *n)
{
	size_t lo = 0, hi = s->nprocs;

	*n = 0;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->procs[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == s->nprocs || s->procs[lo].pid != pid)
		return NULL;
	*n = s->procs[lo].n;
	return s->steps + s->procs[lo].first;
}

const struct gt_step *gt_steps_find(const struct gt_steps *s, uint32_t pid, uint32_t message_id,
                                    uint64_t start_ns, uint64_t end_ns)
{
	const struct msg_slot *m = msg_find(s, message_id);
	const struct gt_step *st;
	size_t n, lo = 0, hi;

	if (!m || m->family == GT_STEPS_NONE || !s->finished)
		return NULL;
	st = gt_steps_of(s, pid, &n);
	hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (st[mid].start_ns < start_ns)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < n && st[i].start_ns == start_ns; i++)
		if (st[i].end_ns == end_ns && st[i].message_id == message_id)
			return &st[i];
	/* a range cut at a window's edges lies inside its step: the last step that starts
	 * before it, when that one also ends after it */
	if (lo > 0 && st[lo - 1].message_id == message_id && st[lo - 1].end_ns >= end_ns)
		return &st[lo - 1];
	if (lo < n && st[lo].start_ns == start_ns && st[lo].message_id == message_id &&
	    st[lo].end_ns >= end_ns)
		return &st[lo];
	return NULL;
}
