#!/usr/bin/env python3
"""Reading a trace from Python with libgputrace through ctypes: every kernel's duration and
(mangled) name, in file order, then the count and the total, as examples/kernel-durations.c
prints them.

    python3 kernel_durations.py run.gtrace [path/to/libgputrace.so.0]

The record layouts are those of include/gputrace/record.h (little-endian, natural alignment).
"""
import ctypes
import ctypes.util
import sys

GT_REC_KERNEL = 8  # enum gt_rec_type in record.h


class RecHdr(ctypes.Structure):
    _fields_ = [("type", ctypes.c_uint16), ("size", ctypes.c_uint16), ("pid", ctypes.c_uint32)]


class GpuSpan(ctypes.Structure):
    _fields_ = [("start_ns", ctypes.c_uint64), ("end_ns", ctypes.c_uint64),
                ("correlation_id", ctypes.c_uint32), ("device_id", ctypes.c_uint32),
                ("context_id", ctypes.c_uint32), ("stream_id", ctypes.c_uint32)]


class RecKernel(ctypes.Structure):
    # the fields this example reads, in order; the rest of the record follows
    _fields_ = [("hdr", RecHdr), ("span", GpuSpan), ("graph_node_id", ctypes.c_uint64),
                ("name_id", ctypes.c_uint32)]


def load(path=None):
    lib = ctypes.CDLL(path or ctypes.util.find_library("gputrace") or "libgputrace.so.0")
    lib.gt_reader_open.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p),
                                   ctypes.POINTER(ctypes.c_char_p)]
    lib.gt_reader_open.restype = ctypes.c_int
    lib.gt_reader_next.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.POINTER(RecHdr))]
    lib.gt_reader_next.restype = ctypes.c_int
    lib.gt_reader_string.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_void_p]
    lib.gt_reader_string.restype = ctypes.c_char_p
    lib.gt_reader_close.argtypes = [ctypes.c_void_p]
    lib.gt_reader_close.restype = None
    return lib


def main(argv):
    if len(argv) not in (2, 3):
        print(f"usage: {argv[0]} TRACE.gtrace [libgputrace.so.0]", file=sys.stderr)
        return 2
    lib = load(argv[2] if len(argv) == 3 else None)
    reader, msg = ctypes.c_void_p(), ctypes.c_char_p()
    ret = lib.gt_reader_open(argv[1].encode(), ctypes.byref(reader), ctypes.byref(msg))
    if ret < 0:
        print(f"{argv[1]}: {(msg.value or b'cannot open').decode()}", file=sys.stderr)
        return 1
    rec = ctypes.POINTER(RecHdr)()
    n = total_ns = 0
    while (ret := lib.gt_reader_next(reader, ctypes.byref(rec))) > 0:
        if rec.contents.type != GT_REC_KERNEL:
            continue
        k = ctypes.cast(rec, ctypes.POINTER(RecKernel)).contents
        name = lib.gt_reader_string(reader, k.name_id, None)
        dur_ns = max(k.span.end_ns - k.span.start_ns, 0)
        print(f"{dur_ns} ns {name.decode(errors='replace') if name else '?'}")
        n += 1
        total_ns += dur_ns
    lib.gt_reader_close(reader)
    if ret < 0:
        print(f"{argv[1]}: error {-ret} while reading", file=sys.stderr)
        return 1
    print(f"{n} kernels, {total_ns} ns")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
