# Python stack capture cost without CUDA: NVTX push+pop pairs made through ctypes (PyDLL, so
# the GIL is held, or with "nogil" CDLL, which lets it go as PyTorch's operators do, so the
# frames are read from memory) from a Python call chain of a given depth, through whatever
# NVTX_INJECTION64_PATH names. Run it with GPUTRACE_BACKTRACE=python and with none: the
# difference per pair is what recording the Python stack costs (its frames read through the
# C API and a lookup in the table of distinct stacks; the stack is new only on the first
# pair). docs/performance.md, "Stacks".
#   python3 bench-pystack.py LIBPYSTACK [depth] [pairs] [gil|nogil]
#       prints "py_stack_pair_ns depth=D N" (best of 5 runs; "nogil" after D with it);
#       LIBPYSTACK is the build's
#       tests/libpystack-lib.so
import ctypes
import sys
import time

depth = int(sys.argv[2]) if len(sys.argv) > 2 else 30
pairs = int(sys.argv[3]) if len(sys.argv) > 3 else 200000
nogil = len(sys.argv) > 4 and sys.argv[4] == "nogil"
lib = (ctypes.CDLL if nogil else ctypes.PyDLL)(sys.argv[1])
push, pop = lib.pyst_push, lib.pyst_pop


def chain(d):
    # `d` frames of itself above the loop; <module> and main make two more
    if d > 1:
        return chain(d - 1)
    msg = b"bench"
    t0 = time.perf_counter_ns()
    for _ in range(pairs):
        push(msg)
        pop()
    return (time.perf_counter_ns() - t0) / pairs


def main():
    best = 1e30
    for _ in range(5):
        best = min(best, chain(depth - 2))
    print(f"py_stack_pair_ns depth={depth}{' nogil' if nogil else ''} {best:.1f}")


main()
