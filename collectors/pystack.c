/* Python frames of call stacks (GPUTRACE_BACKTRACE=python or all): finds CPython's C API with
 * dlsym(RTLD_DEFAULT) once, and reads the calling thread's frames through it (code object and
 * instruction offset each) only while that thread holds the GIL; no struct layout of CPython
 * is used, so one build serves CPython 3.10 to 3.13. Code objects and the lines of their
 * instructions are written once, when a new stack first refers to them. Runs inside the
 * traced application, on the threads that call CUDA and NVTX. */
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

static pthread_once_t py_once = PTHREAD_ONCE_INIT;
/* true once every function above was found; written by find_python under py_once, whose
 * return orders it before the reads of every thread that passed pthread_once */
static bool py_found;
/* the interpreter's executable segment: [interp_lo, interp_hi) */
static uintptr_t interp_lo, interp_hi;

/* Written code objects and (code, offset) pairs; only under table_lock. */
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
	py_found = true;
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
	if (!tstate || !py.gil_check())
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

/* Has `code` been written? Adds it if not (false then); a full table says false. */
static bool code_seen(uint64_t code)
{
	uint64_t h = (code >> 4) * 0x9e3779b97f4a7c15ull;

	for (unsigned i = 0; i < GT_PY_PROBES; i++) {
		unsigned s = (unsigned)((h >> 40) + i) & (GT_PY_CODES - 1);

		if (codes[s] == code)
			return true;
		if (!codes[s]) {
			codes[s] = code;
			return false;
		}
	}
	return false;
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

void gt_pystack_describe(const struct gt_stack_frame *f, unsigned n)
{
	py_obj *type = NULL, *value = NULL, *tb = NULL;
	bool saved = false;

	if (!py_found)
		return;
	pthread_mutex_lock(&table_lock);
	for (unsigned i = 0; i < n; i++) {
		py_obj *code = (py_obj *)(uintptr_t)f[i].pc;
		struct gt_rec_pyline r;

		if (f[i].kind != GT_FRAME_PYTHON)
			continue;
		if (!code_seen(f[i].pc)) {
			/* an exception being raised must survive the attribute lookups */
			if (!saved)
				py.err_fetch(&type, &value, &tb);
			saved = true;
			write_code(code);
			/* kept until the process exits, so no other code object takes its address
			 */
			py.incref(code);
		}
		if (line_seen(f[i].pc, f[i].arg))
			continue;
		memset(&r, 0, sizeof(r));
		gt_hdr(&r.hdr, GT_REC_PYLINE, sizeof(r));
		r.code = f[i].pc;
		r.offset = f[i].arg;
		r.line = py.frame_lasti ? py.addr2line(code, (int)f[i].arg) : (int32_t)f[i].arg;
		gt_emit_nowait(&r.hdr);
	}
	if (saved)
		py.err_restore(type, value, tb);
	pthread_mutex_unlock(&table_lock);
}
