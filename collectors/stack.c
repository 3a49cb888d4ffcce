/* Call stacks (GPUTRACE_BACKTRACE=native, python or all): unwinds the calling thread with
 * libunwind's unw_backtrace (or, in a build without libunwind, libgcc's _Unwind_Backtrace;
 * both read the DWARF call frame information, so code built without frame pointers unwinds
 * too) and reads its Python frames (pystack.c), finds or adds the stack in a lock-free table
 * of the process's distinct stacks, and writes a new stack once as GT_REC_STACK records, after
 * GT_REC_MODULE records for the executable segments its native frames lie in and the Python
 * code objects and lines it refers to. Symbols are found when exporting, never here.
 * Runs inside the traced application, on the threads that call CUDA and NVTX. */
#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "emit.h"
#include "gt-config.h"
#include "pystack.h"
#include "stack.h"

#if GT_HAVE_LIBUNWIND
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#else
#include <unwind.h>
#endif

#define GT_STACK_SLOTS   16384 /* distinct stacks a process may have, power of two */
#define GT_STACK_PROBES  64    /* slots tried before a stack is given up (id 0) */
#define GT_MODULES_MAX   1024  /* executable segments remembered */
#define GT_BUILD_ID_MAX  64    /* bytes of a build id kept */

bool gt_stack_on;
static bool want_native, want_python;

/* Our own library's code: frames in it are the unwinder's and the handler's, not the caller's. */
static uintptr_t self_lo, self_hi;

/* Hash of each stack seen (never 0); a stack's id is its slot + 1. A slot goes from 0 to a
 * hash once, by compare-exchange; the thread that wins writes the stack's records. */
static _Atomic uint64_t slots[GT_STACK_SLOTS];

/* Executable segments already written as MODULE records: [lo, hi). Entries below nmods are
 * complete: the writer fills one under mods_lock, then publishes it with a release store of
 * nmods that pairs with the acquire load in module_known. */
static struct {
	uintptr_t lo, hi;
} mods[GT_MODULES_MAX];
static _Atomic unsigned nmods;
static pthread_mutex_t mods_lock = PTHREAD_MUTEX_INITIALIZER;

static _Thread_local bool in_capture;

struct unwind_walk {
	uint64_t *pcs;
	unsigned n, max;
	bool truncated;
};

#if !GT_HAVE_LIBUNWIND
static _Unwind_Reason_Code unwind_frame(struct _Unwind_Context *ctx, void *arg)
{
	struct unwind_walk *w = arg;
	int before = 0;
	uintptr_t pc = _Unwind_GetIPInfo(ctx, &before);

	if (!pc)
		return _URC_END_OF_STACK;
	if (w->n == 0 && pc >= self_lo && pc < self_hi)
		return _URC_NO_REASON; /* still inside this library */
	if (w->n == w->max) {
		w->truncated = true;
		return _URC_END_OF_STACK;
	}
	w->pcs[w->n++] = pc;
	return _URC_NO_REASON;
}
#endif

/* The caller's return addresses into w, above this library's frames. */
static void unwind(struct unwind_walk *w)
{
#if GT_HAVE_LIBUNWIND
	/* unw_backtrace caches each frame's unwind rule per thread (its fast trace path): about
	 * 8 ns a frame against libgcc's 170 (docs/performance.md, "Stacks") */
	void *ips[GT_STACK_DEPTH_MAX + 16];
	int n = unw_backtrace(ips, (int)(sizeof(ips) / sizeof(ips[0])));
	int i = 0;

	while (i < n && (uintptr_t)ips[i] >= self_lo && (uintptr_t)ips[i] < self_hi)
		i++;
	for (; i < n; i++) {
		if (w->n == w->max) {
			w->truncated = true;
			break;
		}
		w->pcs[w->n++] = (uintptr_t)ips[i];
	}
	/* a full buffer may have cut a deeper stack */
	if (n == (int)(sizeof(ips) / sizeof(ips[0])))
		w->truncated = true;
#else
	_Unwind_Backtrace(unwind_frame, w);
#endif
}

static int find_self(struct dl_phdr_info *info, size_t size, void *arg)
{
	uintptr_t me = (uintptr_t)arg;

	(void)size;
	for (unsigned i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && me >= lo &&
		    me < lo + ph->p_memsz) {
			self_lo = lo;
			self_hi = lo + ph->p_memsz;
			return 1;
		}
	}
	return 0;
}

void gt_stack_init(void)
{
	unsigned mode = gt_inj.cfg.backtrace;

	want_native = mode == GT_BACKTRACE_NATIVE || mode == GT_BACKTRACE_ALL;
	want_python = mode == GT_BACKTRACE_PYTHON || mode == GT_BACKTRACE_ALL;
	gt_stack_on = want_native || want_python;
	if (want_native)
		dl_iterate_phdr(find_self, (void *)(uintptr_t)gt_stack_capture);
}

static bool module_known(uintptr_t pc)
{
	/* acquire: pairs with the release in add_module */
	unsigned n = atomic_load_explicit(&nmods, memory_order_acquire);

	for (unsigned i = 0; i < n; i++)
		if (pc >= mods[i].lo && pc < mods[i].hi)
			return true;
	return false;
}

/* The GNU build id in the object's notes, as hex into out (bytes > 2 * GT_BUILD_ID_MAX). */
static bool build_id_hex(const struct dl_phdr_info *info, char *out)
{
	static const char hex[] = "0123456789abcdef";

	for (unsigned i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const uint8_t *p, *end;

		if (ph->p_type != PT_NOTE)
			continue;
		p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
		end = p + ph->p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
			const uint8_t *name = p + sizeof(*nh);
			const uint8_t *desc = name + ((nh->n_namesz + 3u) & ~3u);

			if (desc + nh->n_descsz > end)
				break;
			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
			    memcmp(name, "GNU", 4) == 0 && nh->n_descsz &&
			    nh->n_descsz <= GT_BUILD_ID_MAX) {
				for (unsigned k = 0; k < nh->n_descsz; k++) {
					out[2 * k] = hex[desc[k] >> 4];
					out[2 * k + 1] = hex[desc[k] & 15];
				}
				out[2 * nh->n_descsz] = '\0';
				return true;
			}
			p = desc + ((nh->n_descsz + 3u) & ~3u);
		}
	}
	return false;
}

/* dl_iterate_phdr callback, mods_lock held: a MODULE record for every executable segment not
 * yet written. The main program comes first, with an empty name. */
static int add_modules(struct dl_phdr_info *info, size_t size, void *arg)
{
	unsigned *index = arg;
	char exe[4096], bid[2 * GT_BUILD_ID_MAX + 1];
	const char *path = info->dlpi_name;
	bool have_bid = false, named = false;

	(void)size;
	for (unsigned i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
		unsigned n = atomic_load_explicit(&nmods, memory_order_relaxed);
		struct gt_rec_module r;

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X) || module_known(lo))
			continue;
		if (n == GT_MODULES_MAX)
			break;
		if (!named) {
			if ((!path || !*path) && *index == 0) {
				ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

				exe[len > 0 ? len : 0] = '\0';
				path = exe;
			}
			have_bid = build_id_hex(info, bid);
			named = true;
		}
		gt_hdr(&r.hdr, GT_REC_MODULE, sizeof(r));
		r.start = lo;
		r.end = lo + ph->p_memsz;
		r.file_offset = ph->p_offset;
		r.bias = info->dlpi_addr;
		r.path_id = path && *path ? gt_intern(path) : GT_STRING_NONE;
		r.build_id = have_bid ? gt_intern(bid) : GT_STRING_NONE;
		gt_emit_nowait(&r.hdr);
		mods[n].lo = r.start;
		mods[n].hi = r.end;
		/* release: pairs with the acquire in module_known */
		atomic_store_explicit(&nmods, n + 1, memory_order_release);
	}
	(*index)++;
	return 0;
}

static void write_stack(uint32_t id, const struct gt_stack_frame *f, unsigned n,
                        bool truncated)
{
	struct gt_rec_stack r;
	bool fresh = false;

	for (unsigned i = 0; i < n && !fresh; i++)
		fresh = f[i].kind == GT_FRAME_NATIVE && !module_known(f[i].pc);
	if (fresh) {
		unsigned index = 0;

		pthread_mutex_lock(&mods_lock);
		dl_iterate_phdr(add_modules, &index);
		pthread_mutex_unlock(&mods_lock);
	}
	for (unsigned first = 0; first < n || first == 0; first += GT_STACK_FRAMES_PER_REC) {
		memset(&r, 0, sizeof(r));
		gt_hdr(&r.hdr, GT_REC_STACK, sizeof(r));
		r.stack_id = id;
		r.depth = n;
		r.first = first;
		r.flags = truncated ? GT_STACK_TRUNCATED : 0;
		for (unsigned k = 0; k < GT_STACK_FRAMES_PER_REC && first + k < n; k++)
			r.frames[k] = f[first + k];
		gt_emit_nowait(&r.hdr);
		if (n == 0)
			break;
	}
}

static uint64_t hash_frames(const struct gt_stack_frame *f, unsigned n)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ n;

	for (unsigned i = 0; i < n; i++) {
		h ^= f[i].pc ^ (uint64_t)f[i].arg << 48;
		h *= 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	return h | 1u; /* 0 marks a free slot */
}

/* The stack into f: with `all`, the native frames up to the first one in the interpreter,
 * then the Python frames in place of the interpreter's (all native frames when the thread
 * shows no Python frames). Returns the frames. */
static unsigned collect(struct gt_stack_frame *f, bool *truncated)
{
	uint64_t pcs[GT_STACK_DEPTH_MAX];
	struct gt_stack_frame py[GT_STACK_DEPTH_MAX];
	struct unwind_walk w = {pcs, 0, GT_STACK_DEPTH_MAX, false};
	unsigned n = 0, npy = 0;
	bool py_truncated = false;

	if (want_python)
		npy = gt_pystack_capture(py, GT_STACK_DEPTH_MAX, &py_truncated);
	if (want_native) {
		unwind(&w);
		*truncated = w.truncated;
		for (unsigned i = 0; i < w.n; i++) {
			if (npy && gt_pystack_in_interpreter(pcs[i])) {
				*truncated = false;
				break;
			}
			f[n].pc = pcs[i];
			f[n].kind = GT_FRAME_NATIVE;
			f[n].arg = 0;
			n++;
		}
	}
	for (unsigned i = 0; i < npy; i++) {
		if (n == GT_STACK_DEPTH_MAX) {
			py_truncated = true;
			break;
		}
		f[n++] = py[i];
	}
	*truncated = *truncated || py_truncated;
	return n;
}

uint32_t gt_stack_capture(void)
{
	struct gt_stack_frame f[GT_STACK_DEPTH_MAX];
	bool truncated = false;
	unsigned n;
	uint64_t h;
	uint32_t id = 0;

	if (!gt_stack_on || in_capture)
		return 0;
	in_capture = true;
	n = collect(f, &truncated);
	if (!n && !want_native)
		goto out; /* python: a thread outside Python gets no stack */
	h = hash_frames(f, n);
	for (unsigned i = 0; i < GT_STACK_PROBES; i++) {
		unsigned s = (unsigned)(h + i) & (GT_STACK_SLOTS - 1);
		uint64_t v = atomic_load_explicit(&slots[s], memory_order_relaxed);

		if (v == 0 && atomic_compare_exchange_strong_explicit(
		                      &slots[s], &v, h, memory_order_relaxed, memory_order_relaxed)) {
			id = s + 1;
			if (want_python)
				gt_pystack_describe(f, n);
			write_stack(id, f, n, truncated);
			break;
		}
		if (v == h) {
			id = s + 1;
			break;
		}
	}
out:
	in_capture = false;
	return id;
}
