#!/usr/bin/env python3
"""Reading a trace with the gputrace module (pandas DataFrames, read in chunks): every
kernel's duration and (mangled) name, in file order, then the count and the total, as
examples/kernel-durations.c prints them.

    python3 kernel_durations_pandas.py run.gtrace

The module is installed by `meson install` (docs/library.md); from a build tree, set
PYTHONPATH=python and GPUTRACE_LIB=build/src/format/libgputrace.so.0.
"""
import sys

import gputrace


def main(argv):
    if len(argv) != 2:
        print(f"usage: {argv[0]} TRACE.gtrace", file=sys.stderr)
        return 2
    try:
        trace = gputrace.open(argv[1])
    except gputrace.GputraceError as e:
        print(e.strerror, file=sys.stderr)
        return 1
    n = total_ns = 0
    with trace:
        for k in trace.chunks("kernels", strings="text"):
            dur = (k["end_ns"].astype("int64") - k["start_ns"].astype("int64")).clip(lower=0)
            names = k["name"].fillna("?")
            sys.stdout.write("".join(f"{d} ns {s}\n" for d, s in zip(dur, names)))
            n += len(k)
            total_ns += int(dur.sum())
    print(f"{n} kernels, {total_ns} ns")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
