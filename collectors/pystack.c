/* Python frames of call stacks (GPUTRACE_BACKTRACE=python or all): finds CPython's C API with
 * dlsym(RTLD_DEFAULT) once. A thread holding the GIL has its frames read through that API (code
 * object and instruction offset each), which serves CPython 3.10 to 3.13 unchanged. A thread
 * inside a call that let the GIL go (PyTorch's operators launch their kernels so) has its
 * frames read from the interpreter's memory without taking anything: its frame chain cannot
 * change until it takes the GIL back, which it cannot do while it is in here; that needs the
 * layout of CPython's thread state, frames, code objects and strings, known here for 3.11 to
 * 3.13. Code objects and the lines of their instructions are written once, when a new stack
 * first refers to them. Runs inside the traced application, on the threads that call CUDA and
 * NVTX. */
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "emit.h"
#include "pystack.h"

#define GT_PY_CODES  65536  /* code objects remembered as written, power of two */
#define GT_PY_LINES  131072 /* (code, offset) pairs remembered as written, power of two */
#define GT_PY_PROBES 32     /* slots tried before a table counts as full */

/* A PyObject *, never looked into. */
typedef void py_obj;

/* The C API functions used: all are in the stable set of 3.10-3.13 but for the frame and
 * code accessors of cpython/ (PyFrame_GetLasti from 3.11, PyCode_Addr2Line). */
static struct {
	int (*is_initialized)(void);
	int (*is_finalizing)(void);            /* _Py_IsFinalizing, Py_IsFinalizing from 3.13 */
	void *(*this_thread_state)(void);      /* PyGILState_GetThisThreadState */
	int (*gil_check)(void);                /* PyGILState_Check */
	py_obj *(*thread_frame)(void *tstate); /* PyThreadState_GetFrame: new reference */
	py_obj *(*frame_back)(py_obj *);       /* PyFrame_GetBack: new reference */
	py_obj *(*frame_code)(py_obj *);       /* PyFrame_GetCode: new reference */
	int (*frame_lasti)(py_obj *);          /* PyFrame_GetLasti (3.11+), bytes; else NULL */
	int (*frame_line)(py_obj *);           /* PyFrame_GetLineNumber */
	int (*addr2line)(py_obj *, int);       /* PyCode_Addr2Line */
	void (*incref)(py_obj *);
	void (*decref)(py_obj *);
	py_obj *(*getattr)(py_obj *, const char *); /* PyObject_GetAttrString */
	const char *(*utf8)(py_obj *);              /* PyUnicode_AsUTF8 */
	long (*as_long)(py_obj *);                  /* PyLong_AsLong */
	void (*err_fetch)(py_obj **, py_obj **, py_obj **);
	void (*err_restore)(py_obj *, py_obj *, py_obj *);
	void (*err_clear)(void);
} py;

/*
 * Where a thread's frames are when it does not hold the GIL: offsets into CPython's own
 * structs, from the interpreter's headers of each version (Include/internal/pycore_frame.h,
 * Include/cpython/pystate.h, code.h, unicodeobject.h); the same on x86-64 and aarch64. Within a
 * minor version they do not change. The thread state leads to the innermost frame (through
 * its _PyCFrame until 3.12); each _PyInterpreterFrame names its code object, the frame it was
 * called from, the instruction it is at (3.11 and 3.12: the last one begun; 3.13: the one
 * executing) and its owner (3.12+: frames owned by the C stack are the interpreter's shims).
 */
struct py_layout {
	unsigned version;  /* major << 8 | minor */
	int tstate_cframe; /* PyThreadState.cframe; -1: the thread state holds the frame */
	int frame_at;      /* _PyCFrame.current_frame, or PyThreadState.current_frame */
	int frame_code, frame_previous, frame_instr, frame_owner;
	int owner_cstack; /* FRAME_OWNED_BY_CSTACK, -1 where there is none */
	int code_units, code_filename, code_name, code_qualname, code_firstlineno;
	int code_firsttraceable;
	int str_ascii_size, str_compact_size; /* sizeof PyASCIIObject, PyCompactUnicodeObject */
};

static const struct py_layout py_layouts[] = {
	{0x030b, 56, 8, 32, 48, 56, 69, -1, 184, 112, 120, 128, 72, 168, 48, 72},
	{0x030c, 56, 0, 0, 8, 56, 70, 3, 192, 112, 120, 128, 68, 176, 40, 56},
	{0x030d, -1, 72, 0, 8, 56, 70, 3, 200, 112, 120, 128, 68, 184, 40, 56},
};

/* The same in every version above */
#define PY_OB_TYPE        8  /* PyObject.ob_type */
#define PY_OB_SIZE        16 /* PyVarObject.ob_size: a code object's instructions, in units */
#define PY_STR_LENGTH     16 /* PyASCIIObject.length, in code points */
#define PY_STR_STATE      32 /* PyASCIIObject.state: kind in bits 2-4, compact, ascii */
#define PY_STR_KIND(s)    (((s) >> 2) & 7)
#define PY_STR_COMPACT    0x20u
#define PY_STR_ASCII      0x40u
#define PY_OWNED_BY_GEN   1 /* FRAME_OWNED_BY_GENERATOR */
#define PY_CODE_UNIT      2 /* sizeof(_Py_CODEUNIT) */

/* this process's layout when its CPython is one of py_layouts; NULL: no frames without the
 * GIL */
static const struct py_layout *lay;
static const void *code_type, *str_type; /* &PyCode_Type, &PyUnicode_Type */

static pthread_once_t py_once = PTHREAD_ONCE_INIT;
/* true once every function above was found; written by find_python under py_once, whose
 * return orders it before the reads of every thread that passed pthread_once */
static bool py_found;
/* the interpreter's executable segment: [interp_lo, interp_hi) */
static uintptr_t interp_lo, interp_hi;

/* Written code objects (with CODE_PINNED) and (code, offset) pairs; only under table_lock. */
static uint64_t codes[GT_PY_CODES];
static struct {
	uint64_t code;
	uint32_t offset;
	bool used;
} lines[GT_PY_LINES];
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;

static int find_segment(struct dl_phdr_info *info, size_t size, void *arg)
{
	uintptr_t at = (uintptr_t)arg;

	(void)size;
	for (unsigned i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && at >= lo &&
		    at < lo + ph->p_memsz) {
			interp_lo = lo;
			interp_hi = lo + ph->p_memsz;
			return 1;
		}
	}
	return 0;
}

/* The layout of this process's CPython, when it is one of py_layouts (Py_Version: 3.11+). */
static void find_layout(void)
{
	const unsigned long *version = dlsym(RTLD_DEFAULT, "Py_Version");

	code_type = dlsym(RTLD_DEFAULT, "PyCode_Type");
	str_type = dlsym(RTLD_DEFAULT, "PyUnicode_Type");
	if (!version || !code_type || !str_type)
		return;
	for (size_t i = 0; i < sizeof(py_layouts) / sizeof(py_layouts[0]); i++)
		if (py_layouts[i].version == (unsigned)(*version >> 16))
			lay = &py_layouts[i];
	if (!lay)
		gt_debug("python: version %#lx has no known frame layout; frames only of threads "
		         "holding the GIL",
		         *version);
}

static void find_python(void)
{
	void *eval;

	/* the one lookup a process without Python pays */
	if (!(*(void **)&py.is_initialized = dlsym(RTLD_DEFAULT, "Py_IsInitialized")))
		return;
#define SYM(member, name) (*(void **)&py.member = dlsym(RTLD_DEFAULT, name))
	if (!SYM(is_finalizing, "Py_IsFinalizing"))
		SYM(is_finalizing, "_Py_IsFinalizing");
	SYM(frame_lasti, "PyFrame_GetLasti");
	if (!SYM(this_thread_state, "PyGILState_GetThisThreadState") ||
	    !SYM(gil_check, "PyGILState_Check") || !SYM(thread_frame, "PyThreadState_GetFrame") ||
	    !SYM(frame_back, "PyFrame_GetBack") || !SYM(frame_code, "PyFrame_GetCode") ||
	    !SYM(frame_line, "PyFrame_GetLineNumber") || !SYM(addr2line, "PyCode_Addr2Line") ||
	    !SYM(incref, "Py_IncRef") || !SYM(decref, "Py_DecRef") ||
	    !SYM(getattr, "PyObject_GetAttrString") || !SYM(utf8, "PyUnicode_AsUTF8") ||
	    !SYM(as_long, "PyLong_AsLong") || !SYM(err_fetch, "PyErr_Fetch") ||
	    !SYM(err_restore, "PyErr_Restore") || !SYM(err_clear, "PyErr_Clear") ||
	    !py.is_finalizing) {
		gt_debug("python: the C API of the Python in this process lacks a function; no "
		         "Python frames");
		return;
	}
#undef SYM
	eval = dlsym(RTLD_DEFAULT, "PyEval_EvalCode");
	if (eval)
		dl_iterate_phdr(find_segment, eval);
	find_layout();
	py_found = true;
}

#define AT(base, off, type) (*(type const *)((const char *)(base) + (off)))

/* Has the interpreter begun finalizing? Read after the loads it vouches for: once it has begun,
 * the thread states of other threads are freed, so a load made before it began (the acquire
 * fence keeps them in that order) read live memory. */
static bool finalizing_after_loads(void)
{
	atomic_thread_fence(memory_order_acquire);
	return py.is_finalizing();
}

/* The frames of a thread that does not hold the GIL, read from memory (lay). Only its own
 * thread state is read before its frames: the frames sit in the thread's data stack, which
 * stays mapped, and hold their code objects; a thread state is freed only by a finalizing
 * interpreter, so each load from it is vouched for by finalizing_after_loads. Frames not yet
 * begun and the interpreter's shims are passed over, as PyFrame_GetBack does. */
static unsigned capture_raw(const char *tstate, struct gt_stack_frame *f, unsigned max,
                            bool *truncated)
{
	const char *frame, *at = tstate;
	unsigned n = 0;

	if (lay->tstate_cframe >= 0) {
		at = AT(tstate, lay->tstate_cframe, const char *);
		if (finalizing_after_loads() || !at)
			return 0;
	}
	frame = AT(at, lay->frame_at, const char *);
	if (finalizing_after_loads())
		return 0;
	for (; frame; frame = AT(frame, lay->frame_previous, const char *)) {
		const char *code = AT(frame, lay->frame_code, const char *);
		const char *units = code + lay->code_units;
		const char *instr = AT(frame, lay->frame_instr, const char *);
		char owner = AT(frame, lay->frame_owner, char);
		long lasti;

		if (owner == lay->owner_cstack)
			continue;
		/* anything but a code object: a layout this file misreads; stop there */
		if (!code || AT(code, PY_OB_TYPE, const void *) != code_type)
			break;
		if (owner != PY_OWNED_BY_GEN &&
		    instr < units + PY_CODE_UNIT * AT(code, lay->code_firsttraceable, int))
			continue;
		lasti = (long)(instr - units) / PY_CODE_UNIT;
		if (lasti >= AT(code, PY_OB_SIZE, long))
			break;
		if (n == max) {
			*truncated = true;
			break;
		}
		f[n].pc = (uintptr_t)code;
		f[n].kind = GT_FRAME_PYTHON;
		/* as PyFrame_GetLasti: bytes, -1 before the first instruction */
		f[n].arg = (uint32_t)(lasti < 0 ? -1 : lasti * PY_CODE_UNIT);
		n++;
	}
	return n;
}

unsigned gt_pystack_capture(struct gt_stack_frame *f, unsigned max, bool *truncated)
{
	void *tstate;
	py_obj *frame;
	unsigned n = 0;

	pthread_once(&py_once, find_python);
	/* initialized first: before it, the GIL state's thread-local key does not exist */
	if (!py_found || !py.is_initialized() || py.is_finalizing())
		return 0;
	tstate = py.this_thread_state();
	if (!tstate)
		return 0;
	/* read from memory wherever the layout is known: with the GIL too, at half the cost of
	 * the frame accessors, which make frame objects */
	if (lay)
		return capture_raw(tstate, f, max, truncated);
	if (!py.gil_check())
		return 0;
	frame = py.thread_frame(tstate);
	while (frame) {
		py_obj *code, *back;

		if (n == max) {
			*truncated = true;
			py.decref(frame);
			break;
		}
		code = py.frame_code(frame);
		f[n].pc = (uintptr_t)code;
		f[n].kind = GT_FRAME_PYTHON;
		f[n].arg =
		        (uint32_t)(py.frame_lasti ? py.frame_lasti(frame) : py.frame_line(frame));
		n++;
		/* the frame still holds the code: its address stays valid while we run */
		py.decref(code);
		back = py.frame_back(frame);
		py.decref(frame);
		frame = back;
	}
	return n;
}

bool gt_pystack_in_interpreter(uint64_t pc)
{
	return pc >= interp_lo && pc < interp_hi;
}

#define CODE_PINNED 1ull /* in a codes slot: a reference is kept (code objects are aligned) */

/* The slot of `code` in codes, *added set when it was not there (it has to be written); NULL
 * when the table is full (then every stack writes it again). */
static uint64_t *code_slot(uint64_t code, bool *added)
{
	uint64_t h = (code >> 4) * 0x9e3779b97f4a7c15ull;

	*added = false;
	for (unsigned i = 0; i < GT_PY_PROBES; i++) {
		unsigned s = (unsigned)((h >> 40) + i) & (GT_PY_CODES - 1);

		if ((codes[s] & ~CODE_PINNED) == code)
			return &codes[s];
		if (!codes[s]) {
			codes[s] = code;
			*added = true;
			return &codes[s];
		}
	}
	return NULL;
}

static bool line_seen(uint64_t code, uint32_t offset)
{
	uint64_t h = ((code >> 4) ^ ((uint64_t)offset << 40)) * 0x9e3779b97f4a7c15ull;

	for (unsigned i = 0; i < GT_PY_PROBES; i++) {
		unsigned s = (unsigned)((h >> 40) + i) & (GT_PY_LINES - 1);

		if (lines[s].used && lines[s].code == code && lines[s].offset == offset)
			return true;
		if (!lines[s].used) {
			lines[s].code = code;
			lines[s].offset = offset;
			lines[s].used = true;
			return false;
		}
	}
	return false;
}

/* A string attribute of a code object, interned; GT_STRING_NONE when it has none. */
static uint32_t code_string(py_obj *code, const char *name)
{
	py_obj *v = py.getattr(code, name);
	const char *s = v ? py.utf8(v) : NULL;
	uint32_t id = s ? gt_intern(s) : GT_STRING_NONE;

	if (!s)
		py.err_clear();
	if (v)
		py.decref(v);
	return id;
}

static void write_code(py_obj *code)
{
	struct gt_rec_pycode r;
	py_obj *v;

	memset(&r, 0, sizeof(r));
	gt_hdr(&r.hdr, GT_REC_PYCODE, sizeof(r));
	r.code = (uintptr_t)code;
	r.file_id = code_string(code, "co_filename");
	r.name_id = code_string(code, "co_qualname"); /* 3.11+ */
	if (r.name_id == GT_STRING_NONE)
		r.name_id = code_string(code, "co_name");
	v = py.getattr(code, "co_firstlineno");
	if (v) {
		long line = py.as_long(v);

		r.first_line = line > 0 ? (uint32_t)line : 0;
		py.decref(v);
	}
	py.err_clear();
	gt_emit_nowait(&r.hdr);
}

/* A str object's text as UTF-8 into buf (cut to fit), read from memory: compact strings only
 * (every str of a code object is); false for anything else. */
static bool str_raw(const char *str, char *buf, size_t size)
{
	uint32_t state;
	long len;
	size_t o = 0;

	if (!str || AT(str, PY_OB_TYPE, const void *) != str_type)
		return false;
	state = AT(str, PY_STR_STATE, uint32_t);
	len = AT(str, PY_STR_LENGTH, long);
	if (!(state & PY_STR_COMPACT) || len < 0)
		return false;
	for (long i = 0; i < len; i++) {
		const char *data = str + ((state & PY_STR_ASCII) ? lay->str_ascii_size
		                                                   : lay->str_compact_size);
		uint32_t c;
		char u[4];
		size_t k;

		switch (PY_STR_KIND(state)) {
		case 1:
			c = ((const uint8_t *)data)[i];
			break;
		case 2:
			c = ((const uint16_t *)(const void *)data)[i];
			break;
		case 4:
			c = ((const uint32_t *)(const void *)data)[i];
			break;
		default:
			return false;
		}
		if (c < 0x80) {
			u[0] = (char)c;
			k = 1;
		} else if (c < 0x800) {
			u[0] = (char)(0xc0 | c >> 6);
			u[1] = (char)(0x80 | (c & 0x3f));
			k = 2;
		} else if (c < 0x10000) {
			u[0] = (char)(0xe0 | c >> 12);
			u[1] = (char)(0x80 | (c >> 6 & 0x3f));
			u[2] = (char)(0x80 | (c & 0x3f));
			k = 3;
		} else {
			u[0] = (char)(0xf0 | c >> 18);
			u[1] = (char)(0x80 | (c >> 12 & 0x3f));
			u[2] = (char)(0x80 | (c >> 6 & 0x3f));
			u[3] = (char)(0x80 | (c & 0x3f));
			k = 4;
		}
		if (o + k >= size)
			break;
		memcpy(buf + o, u, k);
		o += k;
	}
	buf[o] = '\0';
	return true;
}

static uint32_t code_string_raw(const char *code, int off)
{
	char buf[1024];

	return str_raw(AT(code, off, const char *), buf, sizeof(buf)) ? gt_intern(buf)
	                                                               : GT_STRING_NONE;
}

/* write_code without the GIL: the same fields read from memory (lay), no reference taken */
static void write_code_raw(const char *code)
{
	struct gt_rec_pycode r;
	int first = AT(code, lay->code_firstlineno, int);

	memset(&r, 0, sizeof(r));
	gt_hdr(&r.hdr, GT_REC_PYCODE, sizeof(r));
	r.code = (uintptr_t)code;
	r.file_id = code_string_raw(code, lay->code_filename);
	r.name_id = code_string_raw(code, lay->code_qualname);
	r.first_line = first > 0 ? (uint32_t)first : 0;
	gt_emit_nowait(&r.hdr);
}

void gt_pystack_describe(const struct gt_stack_frame *f, unsigned n)
{
	py_obj *type = NULL, *value = NULL, *tb = NULL;
	bool saved = false, gil;

	if (!py_found)
		return;
	gil = py.gil_check();
	pthread_mutex_lock(&table_lock);
	for (unsigned i = 0; i < n; i++) {
		py_obj *code = (py_obj *)(uintptr_t)f[i].pc;
		struct gt_rec_pyline r;
		uint64_t *slot;
		bool added;

		if (f[i].kind != GT_FRAME_PYTHON)
			continue;
		slot = code_slot(f[i].pc, &added);
		if ((added || !slot) && !gil) {
			/* its frame holds it while the thread is in here */
			write_code_raw(code);
		} else if (added || !slot) {
			/* an exception being raised must survive the attribute lookups */
			if (!saved)
				py.err_fetch(&type, &value, &tb);
			saved = true;
			write_code(code);
		}
		/* a reference kept until the process exits, so that no other code object takes its
		 * address: only with the GIL, so a code object first seen without it gets one the
		 * first time a new stack holds it on a thread with the GIL */
		if (gil && (!slot || !(*slot & CODE_PINNED))) {
			py.incref(code);
			if (slot)
				*slot |= CODE_PINNED;
		}
		if (line_seen(f[i].pc, f[i].arg))
			continue;
		memset(&r, 0, sizeof(r));
		gt_hdr(&r.hdr, GT_REC_PYLINE, sizeof(r));
		r.code = f[i].pc;
		r.offset = f[i].arg;
		/* PyCode_Addr2Line only reads the code object's line table */
		r.line = py.frame_lasti ? py.addr2line(code, (int)f[i].arg) : (int32_t)f[i].arg;
		gt_emit_nowait(&r.hdr);
	}
	if (saved)
		py.err_restore(type, value, tb);
	pthread_mutex_unlock(&table_lock);
}
