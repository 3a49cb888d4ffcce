"""gputrace: read .gtrace files from Python as pandas DataFrames, through libgputrace.so.

A thin ctypes binding (docs/library.md, docs/scale.md): gt_reader_next_batch copies the next N
records of the chosen types into a numpy buffer as the record structs of record.h, which numpy
views with structured dtypes built from gt_record_desc; no record is looped over in Python.
One trace is read chunk by chunk (`rows` records at a time), so it never has to fit in memory.

    import gputrace
    with gputrace.open("run.gtrace") as t:
        for k in t.chunks("kernels"):            # DataFrames of at most `rows` rows
            print(k[["start_ns", "end_ns", "name"]])
        for part in t.read(["kernels", "nvtx"]):   # several tables in one pass
            ...

Times are on the trace clock, as in the SQLite export and the CSV files; `Trace.zero_ns` is
the trace's zero (docs/cli.md "Time"), and `relative=True` gives them since that zero.
The library is found through $GPUTRACE_LIB, else where meson installed it, else by name.
"""
import ctypes
import os

import numpy as np
import pandas as pd

try:
    from . import _config

    _INSTALLED_LIB = _config.LIBGPUTRACE
except ImportError:  # the source tree, not installed
    _INSTALLED_LIB = None

__all__ = ["open", "Trace", "TABLES", "GputraceError", "load_library"]

# table name -> record type name (gt_record_name): the ones docs/scale.md lists, then any
# other record type by its own name
TABLES = {
    "kernels": "kernel",
    "memcpy": "memcpy",
    "memset": "memset",
    "api": "api",
    "nvtx": "nvtx",
    "sync": "sync",
    "memory": "memory",
    "processes": "process",
    "devices": "device",
    "threads": "thread",
    "contexts": "context",
    "streams": "stream",
    "graphs": "graph",
    "memory_pools": "memory_pool",
    "overhead": "overhead",
    "losses": "loss",
    "notices": "notice",
    "process_ends": "process_end",
}

GT_FIELD_SIGNED = 1 << 1
GT_FIELD_STRING = 1 << 2
GT_FIELD_TIME = 1 << 3


class GputraceError(OSError):
    """A libgputrace call failed: errno and the library's message."""


class _Field(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("offset", ctypes.c_uint16),
                ("width", ctypes.c_uint8), ("flags", ctypes.c_uint8)]


class _Desc(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("size", ctypes.c_uint16),
                ("nfields", ctypes.c_uint16), ("fields", ctypes.POINTER(_Field))]


class _Times(ctypes.Structure):
    _fields_ = [("zero_ns", ctypes.c_uint64), ("first_ns", ctypes.c_uint64),
                ("last_ns", ctypes.c_uint64), ("span_ns", ctypes.c_uint64),
                ("zero_realtime_ns", ctypes.c_uint64)]


class _Info(ctypes.Structure):
    _fields_ = [("clock_id", ctypes.c_uint32), ("start_realtime_ns", ctypes.c_uint64),
                ("start_trace_ns", ctypes.c_uint64), ("hostname", ctypes.c_char_p),
                ("cmdline", ctypes.c_char_p), ("tool_version", ctypes.c_char_p),
                ("cuda_version", ctypes.c_char_p), ("cupti_version", ctypes.c_char_p),
                ("driver_version", ctypes.c_char_p)]


class _Header(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("info", _Info)]


_lib = None


def load_library(path=None):
    """libgputrace.so.0: path, else $GPUTRACE_LIB, else the installed one, else by name."""
    global _lib
    if _lib is not None and path is None:
        return _lib
    cands = [path, os.environ.get("GPUTRACE_LIB"), _INSTALLED_LIB, "libgputrace.so.0"]
    err = None
    for c in cands:
        if not c or (os.sep in c and not os.path.exists(c)):
            continue
        try:
            lib = ctypes.CDLL(c)
            break
        except OSError as e:
            err = e
    else:
        raise GputraceError(f"libgputrace.so.0 not found (set GPUTRACE_LIB): {err}")
    vp = ctypes.c_void_p
    lib.gt_reader_open.argtypes = [ctypes.c_char_p, ctypes.POINTER(vp),
                                   ctypes.POINTER(ctypes.c_char_p)]
    lib.gt_reader_open.restype = ctypes.c_int
    lib.gt_reader_next_batch.argtypes = [vp, ctypes.c_uint64, vp, ctypes.c_size_t,
                                         ctypes.c_size_t]
    lib.gt_reader_next_batch.restype = ctypes.c_int
    lib.gt_reader_string.argtypes = [vp, ctypes.c_uint32, ctypes.POINTER(ctypes.c_size_t)]
    lib.gt_reader_string.restype = ctypes.c_void_p
    lib.gt_reader_times.argtypes = [vp, ctypes.POINTER(_Times)]
    lib.gt_reader_times.restype = ctypes.c_int
    lib.gt_reader_header.argtypes = [vp]
    lib.gt_reader_header.restype = ctypes.POINTER(_Header)
    lib.gt_reader_rewind.argtypes = [vp]
    lib.gt_reader_rewind.restype = ctypes.c_int
    lib.gt_reader_close.argtypes = [vp]
    lib.gt_reader_close.restype = None
    lib.gt_record_desc.argtypes = [ctypes.c_uint]
    lib.gt_record_desc.restype = ctypes.POINTER(_Desc)
    lib.gt_record_name.argtypes = [ctypes.c_uint]
    lib.gt_record_name.restype = ctypes.c_char_p
    if path is None:
        _lib = lib
    return lib


class _Type:
    """One record type: its number, numpy dtype (at a given stride) and string fields."""

    def __init__(self, lib, t):
        d = lib.gt_record_desc(t).contents
        self.type, self.name, self.size = t, d.name.decode(), d.size
        self.names, self.formats, self.offsets = ["pid"], ["<u4"], [4]
        self.strings, self.times = [], []
        for i in range(d.nfields):
            f = d.fields[i]
            name = f.name.decode()
            kind = "i" if f.flags & GT_FIELD_SIGNED else "u"
            self.names.append(name)
            self.formats.append(f"<{kind}{f.width}")
            self.offsets.append(f.offset)
            if f.flags & GT_FIELD_STRING:
                self.strings.append(name)
            if f.flags & GT_FIELD_TIME:
                self.times.append(name)

    def dtype(self, stride):
        return np.dtype({"names": self.names, "formats": self.formats,
                         "offsets": self.offsets, "itemsize": stride})


def _types(lib):
    out = {}
    for t in range(1, 64):
        if not lib.gt_record_desc(t):
            if t > 1:
                break
            continue
        name = lib.gt_record_name(t).decode()
        if name != "string":
            out[name] = _Type(lib, t)
    return out


def _uuid_text(lo, hi):
    b = int(lo).to_bytes(8, "little") + int(hi).to_bytes(8, "little")
    h = b.hex()
    return f"GPU-{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


class Trace:
    """An open .gtrace file (gt_reader_open). Close it, or use it in a with block."""

    def __init__(self, path, lib=None):
        self._lib = lib or load_library()
        self.path = os.fspath(path)
        self._r = ctypes.c_void_p()
        msg = ctypes.c_char_p()
        ret = self._lib.gt_reader_open(self.path.encode(), ctypes.byref(self._r),
                                       ctypes.byref(msg))
        if ret < 0:
            text = msg.value.decode() if msg.value else os.strerror(-ret)
            raise GputraceError(-ret, f"{self.path}: {text}")
        self._types = _types(self._lib)
        self._strings = {0: None}
        h = self._lib.gt_reader_header(self._r).contents.info

        def s(v):
            return v.decode(errors="replace") if v else ""
        self.header = {"clock_id": h.clock_id, "start_realtime_ns": h.start_realtime_ns,
                       "start_trace_ns": h.start_trace_ns, "hostname": s(h.hostname),
                       "cmdline": s(h.cmdline), "tool_version": s(h.tool_version),
                       "cuda_version": s(h.cuda_version), "cupti_version": s(h.cupti_version),
                       "driver_version": s(h.driver_version)}
        t = _Times()
        ret = self._lib.gt_reader_times(self._r, ctypes.byref(t))
        if ret < 0:
            self.close()
            raise GputraceError(-ret, f"{self.path}: cannot read the trace's times")
        self.times = {k: getattr(t, k) for k, _ in _Times._fields_}
        self.zero_ns = t.zero_ns
        self.span_ns = t.span_ns

    def close(self):
        if self._r:
            self._lib.gt_reader_close(self._r)
            self._r = ctypes.c_void_p()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def string(self, sid):
        """The text of string id sid (None for 0 or an id not seen yet)."""
        sid = int(sid)
        v = self._strings.get(sid)
        if v is None and sid:
            n = ctypes.c_size_t()
            p = self._lib.gt_reader_string(self._r, sid, ctypes.byref(n))
            if p:
                v = ctypes.string_at(p, n.value).decode(errors="replace")
                self._strings[sid] = v
        return v

    def _texts(self, ids, categorical):
        uniq, inv = np.unique(ids, return_inverse=True)
        texts = [self.string(u) for u in uniq]
        if not categorical:
            return np.array(texts, dtype=object)[inv]
        cats = sorted({x for x in texts if x is not None})
        pos = {c: i for i, c in enumerate(cats)}
        codes = np.array([pos.get(x, -1) if x is not None else -1 for x in texts],
                         dtype=np.int32)
        return pd.Categorical.from_codes(codes[inv], categories=cats)

    def _table_type(self, table):
        name = TABLES.get(table, table)
        if name not in self._types:
            raise ValueError(f"unknown table {table!r}: one of {', '.join(TABLES)}")
        return self._types[name]

    def read(self, tables, rows=1 << 18, strings="category", relative=False):
        """One pass over the trace (from its start): yields, per batch of at most `rows`
        records of the tables named, a dict table -> DataFrame (empty ones left out).
        strings: "category" (pandas categorical), "text" (object) or "ids" (the string id
        columns only). relative: time columns (GT_FIELD_TIME) since the trace's zero, int64."""
        if isinstance(tables, str):
            tables = [tables]
        ts = [(tb, self._table_type(tb)) for tb in tables]
        mask = 0
        for _, ty in ts:
            mask |= 1 << ty.type
        stride = max(ty.size for _, ty in ts)
        buf = np.empty(rows * stride, dtype=np.uint8)
        ret = self._lib.gt_reader_rewind(self._r)
        if ret < 0:
            raise GputraceError(-ret, f"{self.path}: cannot rewind")
        while True:
            n = self._lib.gt_reader_next_batch(self._r, mask, buf.ctypes.data, stride, rows)
            if n < 0:
                raise GputraceError(-n, f"{self.path}: the trace could not be read to the end")
            if n == 0:
                return
            raw = buf[:n * stride]
            types = raw.view(np.dtype({"names": ["t"], "formats": ["<u2"], "offsets": [0],
                                       "itemsize": stride}))["t"]
            out = {}
            for tb, ty in ts:
                arr = raw.view(ty.dtype(stride))
                if len(ts) > 1:
                    arr = arr[types == ty.type]
                if len(arr):
                    out[tb] = self._frame(ty, arr, strings, relative)
            if out:
                yield out
            if n < rows:
                return

    def chunks(self, table, rows=1 << 18, strings="category", relative=False):
        """Yields DataFrames of at most `rows` rows of one table, in file order."""
        for part in self.read([table], rows, strings, relative):
            yield part[table]

    def table(self, table, strings="category", relative=False):
        """A whole table as one DataFrame (for small tables; chunks() for large ones)."""
        parts = list(self.chunks(table, strings=strings, relative=relative))
        if parts:
            return pd.concat(parts, ignore_index=True)
        ty = self._table_type(table)
        return self._frame(ty, np.zeros(0, dtype=ty.dtype(ty.size)), strings, relative)

    def _frame(self, ty, arr, strings, relative):
        cols = {}
        for name in ty.names:
            col = np.ascontiguousarray(arr[name])
            if relative and name in ty.times:
                col = col.astype(np.int64) - np.int64(self.zero_ns)
            cols[name] = col
        if strings != "ids":
            for name in ty.strings:
                text = name[:-3] if name.endswith("_id") else name + "_text"
                cols[text] = self._texts(cols[name], strings == "category")
        if ty.name == "device":
            cols["uuid"] = np.array([_uuid_text(lo, hi) for lo, hi in
                                     zip(cols["uuid_lo"], cols["uuid_hi"])], dtype=object)
        return pd.DataFrame(cols)


def open(path, lib=None):  # noqa: A001 - the module's verb, as gt_reader_open
    """Open a trace: gputrace.open("run.gtrace") -> Trace."""
    return Trace(path, lib)
