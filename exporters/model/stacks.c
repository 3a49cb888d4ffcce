/* A trace's call stacks: STACK records joined per (process, stack id), MODULE, PYCODE and
 * PYLINE records kept per process, and each stack's frames resolved on first use: native ones
 * symbolized (symbolize.c), Python ones named from their code object and line. Runs in the
 * CLI. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "idmap.h"
#include "stacks.h"
#include "symbolize.h"

struct mod {
	uint32_t pid;
	uint64_t start, end, bias;
	char *path, *build_id; /* owned */
};

struct pycode {
	char *file, *name; /* owned */
	uint32_t first_line;
};

struct stk {
	uint32_t pid, id, depth;
	bool resolved;
	uint64_t pc[GT_STACK_DEPTH_MAX];
	uint32_t kind[GT_STACK_DEPTH_MAX], arg[GT_STACK_DEPTH_MAX];
	struct gt_stack_sym sym[GT_STACK_DEPTH_MAX];
	char *text[GT_STACK_DEPTH_MAX]; /* owned symbol strings */
};

struct gt_stacks {
	struct gt_idmap map; /* (pid, id) -> index + 1 */
	struct stk **stk;
	uint32_t n, cap;
	struct mod *mods;
	size_t nmods, capmods;
	struct gt_symbolizer *sym;
	struct gt_idmap codes; /* (pid, code) -> index + 1 in pycodes */
	struct pycode **pycodes;
	uint32_t npy, cappy;
	struct gt_idmap lines; /* (pid << 32 | offset, code) -> line + 2 */
};

int gt_stacks_new(struct gt_stacks **ret)
{
	struct gt_stacks *s = calloc(1, sizeof(*s));

	if (!s || gt_idmap_init(&s->map, 64) < 0 || gt_idmap_init(&s->codes, 64) < 0 ||
	    gt_idmap_init(&s->lines, 64) < 0 || gt_symbolizer_new(&s->sym) < 0) {
		if (s) {
			gt_idmap_fini(&s->map);
			gt_idmap_fini(&s->codes);
			gt_idmap_fini(&s->lines);
		}
		free(s);
		return -ENOMEM;
	}
	*ret = s;
	return 0;
}

void gt_stacks_free(struct gt_stacks *s)
{
	if (!s)
		return;
	for (uint32_t i = 0; i < s->n; i++) {
		for (unsigned k = 0; k < GT_STACK_DEPTH_MAX; k++)
			free(s->stk[i]->text[k]);
		free(s->stk[i]);
	}
	free(s->stk);
	for (size_t i = 0; i < s->nmods; i++) {
		free(s->mods[i].path);
		free(s->mods[i].build_id);
	}
	free(s->mods);
	for (uint32_t i = 0; i < s->npy; i++) {
		free(s->pycodes[i]->file);
		free(s->pycodes[i]->name);
		free(s->pycodes[i]);
	}
	free(s->pycodes);
	gt_idmap_fini(&s->codes);
	gt_idmap_fini(&s->lines);
	gt_idmap_fini(&s->map);
	gt_symbolizer_free(s->sym);
	free(s);
}

static char *dup_string(const struct gt_reader *r, uint32_t id)
{
	const char *t = id ? gt_reader_string(r, id, NULL) : NULL;

	return strdup(t ? t : "");
}

static int add_module(struct gt_stacks *s, const struct gt_reader *r,
                      const struct gt_rec_module *m)
{
	struct mod *x;

	if (s->nmods == s->capmods) {
		size_t cap = s->capmods ? 2 * s->capmods : 16;
		struct mod *n = realloc(s->mods, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		s->mods = n;
		s->capmods = cap;
	}
	x = &s->mods[s->nmods];
	*x = (struct mod){m->hdr.pid, m->start, m->end, m->bias, dup_string(r, m->path_id),
	                  dup_string(r, m->build_id)};
	if (!x->path || !x->build_id) {
		free(x->path);
		free(x->build_id);
		return -ENOMEM;
	}
	s->nmods++;
	return 0;
}

static int add_stack(struct gt_stacks *s, const struct gt_rec_stack *st)
{
	uint32_t v = gt_idmap_get(&s->map, st->hdr.pid, st->stack_id);
	struct stk *k;

	if (!st->stack_id || st->depth > GT_STACK_DEPTH_MAX || st->first >= GT_STACK_DEPTH_MAX)
		return 0; /* not one this reader can hold */
	if (v) {
		k = s->stk[v - 1];
	} else {
		k = calloc(1, sizeof(*k));
		if (!k || gt_idmap_append((void ***)&s->stk, &s->n, &s->cap, k) < 0 ||
		    gt_idmap_put(&s->map, st->hdr.pid, st->stack_id, s->n) < 0) {
			free(k);
			return -ENOMEM;
		}
		k->pid = st->hdr.pid;
		k->id = st->stack_id;
		k->depth = st->depth;
	}
	for (unsigned i = 0; i < GT_STACK_FRAMES_PER_REC && st->first + i < k->depth; i++) {
		k->pc[st->first + i] = st->frames[i].pc;
		k->kind[st->first + i] = st->frames[i].kind;
		k->arg[st->first + i] = st->frames[i].arg;
	}
	return 0;
}

static int add_pycode(struct gt_stacks *s, const struct gt_reader *r,
                      const struct gt_rec_pycode *c)
{
	struct pycode *x;

	if (gt_idmap_get(&s->codes, c->hdr.pid, c->code))
		return 0; /* the first one holds */
	x = calloc(1, sizeof(*x));
	if (!x)
		return -ENOMEM;
	x->file = dup_string(r, c->file_id);
	x->name = dup_string(r, c->name_id);
	x->first_line = c->first_line;
	if (!x->file || !x->name || gt_idmap_append((void ***)&s->pycodes, &s->npy, &s->cappy, x) < 0)
		goto nomem;
	if (gt_idmap_put(&s->codes, c->hdr.pid, c->code, s->npy) < 0) {
		s->npy--;
		goto nomem;
	}
	return 0;
nomem:
	free(x->file);
	free(x->name);
	free(x);
	return -ENOMEM;
}

static int add_pyline(struct gt_stacks *s, const struct gt_rec_pyline *l)
{
	if (l->line < -1)
		return 0; /* not one the interpreter gives */
	return gt_idmap_put(&s->lines, (uint64_t)l->hdr.pid << 32 | l->offset, l->code,
	                    (uint32_t)(l->line + 2));
}

int gt_stacks_add(struct gt_stacks *s, const struct gt_reader *r, const union gt_record *rec)
{
	if (rec->hdr.type == GT_REC_MODULE)
		return add_module(s, r, &rec->module);
	if (rec->hdr.type == GT_REC_STACK)
		return add_stack(s, &rec->stack);
	if (rec->hdr.type == GT_REC_PYCODE)
		return add_pycode(s, r, &rec->pycode);
	if (rec->hdr.type == GT_REC_PYLINE)
		return add_pyline(s, &rec->pyline);
	return 0;
}

int gt_stacks_load(struct gt_stacks *s, struct gt_reader *r)
{
	const struct gt_trace_counts *c = gt_reader_footer_counts(r);
	const union gt_record *rec;
	int ret;

	if (c && !c->records[GT_REC_STACK])
		return 0;
	while ((ret = gt_reader_next(r, &rec)) > 0) {
		ret = gt_stacks_add(s, r, rec);
		if (ret < 0)
			return ret;
	}
	if (ret < 0)
		return ret;
	return gt_reader_rewind(r);
}

static const struct mod *module_of(const struct gt_stacks *s, uint32_t pid, uint64_t pc)
{
	/* the latest first: a range unmapped and mapped again holds its newest file */
	for (size_t i = s->nmods; i-- > 0;)
		if (s->mods[i].pid == pid && pc >= s->mods[i].start && pc < s->mods[i].end)
			return &s->mods[i];
	return NULL;
}

/* Python frame i of k: its code object's name and file, the line of its instruction. */
static void resolve_python(struct gt_stacks *s, struct stk *k, unsigned i)
{
	uint32_t c = gt_idmap_get(&s->codes, k->pid, k->pc[i]);
	uint32_t l = gt_idmap_get(&s->lines, (uint64_t)k->pid << 32 | k->arg[i], k->pc[i]);
	const struct pycode *x = c ? s->pycodes[c - 1] : NULL;
	char buf[32];

	if (!x)
		snprintf(buf, sizeof(buf), "0x%" PRIx64, k->pc[i]);
	k->text[i] = strdup(x ? x->name : buf);
	k->sym[i] = (struct gt_stack_sym){k->pc[i], k->text[i] ? k->text[i] : "",
	                                  x ? x->file : "", !x, true, l > 2 ? (int32_t)l - 2 : 0,
	                                  k->arg[i]};
}

static void resolve(struct gt_stacks *s, struct stk *k)
{
	char buf[4096];

	for (unsigned i = 0; i < k->depth; i++) {
		const struct mod *m;

		if (k->kind[i] == GT_FRAME_PYTHON) {
			resolve_python(s, k, i);
			continue;
		}
		m = module_of(s, k->pid, k->pc[i]);
		const char *name = NULL;
		bool unresolved;

		/* a return address: the call is the instruction before it */
		if (m && k->pc[i])
			name = gt_symbolize(s->sym, m->path, m->build_id, k->pc[i] - 1 - m->bias,
			                    buf, sizeof(buf));
		unresolved = !name;
		if (!name) {
			snprintf(buf, sizeof(buf), "0x%" PRIx64, k->pc[i]);
			name = buf;
		}
		k->text[i] = strdup(name);
		k->sym[i] = (struct gt_stack_sym){k->pc[i], k->text[i] ? k->text[i] : "",
		                                  m ? m->path : "", unresolved, false, 0, 0};
	}
	k->resolved = true;
}

const struct gt_stack_sym *gt_stacks_get(struct gt_stacks *s, uint32_t pid, uint32_t id,
                                         unsigned *n)
{
	uint32_t v = id ? gt_idmap_get(&s->map, pid, id) : 0;
	struct stk *k;

	if (!v)
		return NULL;
	k = s->stk[v - 1];
	if (!k->resolved)
		resolve(s, k);
	*n = k->depth;
	return k->sym;
}

uint32_t gt_stacks_count(const struct gt_stacks *s)
{
	return s->n;
}

/* ---- the user's frame ---- */

/* Libraries and programs a user does not write, by the start of a file's name. */
static const char *const native_lib[] = {
        "libcuda.",  "libcudart",  "libcupti",   "libnvrtc",   "libnvJitLink", "libcublas",
        "libcudnn",  "libnccl",    "libcufft",   "libcurand",  "libcusparse",  "libcusolver",
        "libtorch",  "libc10",     "libpython",  "python",     "libgputrace",  "libc.so",
        "libc-",     "libstdc++",  "ld-linux",   "libpthread", "libnvToolsExt", "_C.",
        "libgomp",   "libm.so",
};

static bool native_user(const char *module)
{
	const char *base = strrchr(module, '/');

	base = base ? base + 1 : module;
	if (!module[0])
		return false;
	for (size_t i = 0; i < sizeof(native_lib) / sizeof(native_lib[0]); i++)
		if (strncmp(base, native_lib[i], strlen(native_lib[i])) == 0)
			return false;
	return true;
}

/* A .py file of an installed package, the standard library or a frozen module. */
static bool python_lib(const char *file)
{
	const char *p;

	if (file[0] == '<' || strstr(file, "/site-packages/") || strstr(file, "/dist-packages/"))
		return true;
	/* the standard library: .../lib/python3.N/x.py or .../lib/python3/x.py */
	for (p = strstr(file, "/lib/python3"); p; p = strstr(p + 1, "/lib/python3")) {
		const char *q = p + strlen("/lib/python3");

		if (*q == '.')
			for (q++; *q >= '0' && *q <= '9'; q++)
				;
		if (*q == '/')
			return true;
	}
	return false;
}

unsigned gt_stacks_user_frame(const struct gt_stack_sym *f, unsigned n)
{
	unsigned first_py = n;

	for (unsigned i = 0; i < n; i++) {
		if (!f[i].python)
			continue;
		if (first_py == n)
			first_py = i;
		if (!python_lib(f[i].module))
			return i;
	}
	if (first_py < n)
		return first_py;
	for (unsigned i = 0; i < n; i++)
		if (native_user(f[i].module))
			return i;
	return 0;
}
