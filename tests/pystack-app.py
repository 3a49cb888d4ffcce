# Test program for tests/cli-pystack.sh: NVTX ranges and marks from known functions and lines via
# tests/pystack-lib.c, from the main thread, a threading.Thread, a thread started in C, with the
# GIL let go (frames read without it from 3.11), and (with "exit") while the interpreter exits.
# Usage: pystack-app.py libpystack-lib.so [exit]
import ctypes
import sys
import threading

lib = ctypes.PyDLL(sys.argv[1])  # keeps the GIL during the call
nogil = ctypes.CDLL(sys.argv[1])  # lets it go
CALLBACK = ctypes.CFUNCTYPE(None)


def inner():
    lib.pyst_push(b"inner")
    lib.pyst_pop()


class Model:
    def forward(self):
        inner()
        lib.pyst_mark(b"mark")


def worker():
    lib.pyst_push(b"thread")
    lib.pyst_pop()


def from_c():
    lib.pyst_push(b"fromc")
    lib.pyst_pop()


def spin_with_gil():
    while True:
        lib.pyst_push(b"gilspin")
        lib.pyst_pop()


def 𠀀σ():  # a name of 4-byte code points
    nogil.pyst_mark(b"raw4")


def grüße():  # a Latin-1 name; both code objects first seen without the GIL
    nogil.pyst_mark(b"raw")
    𠀀σ()


def main():
    m = Model()
    for _ in range(3):
        m.forward()
    t = threading.Thread(target=worker)
    t.start()
    t.join()
    cb = CALLBACK(from_c)
    nogil.pyst_run_thread(cb)
    nogil.pyst_mark(b"nogil"); grüße()  # noqa: E702
    if len(sys.argv) > 2 and sys.argv[2] == "exit":
        threading.Thread(target=nogil.pyst_spin, daemon=True).start()
        threading.Thread(target=spin_with_gil, daemon=True).start()
        while nogil.pyst_spins() < 1000:
            pass
        sys.exit(3)


main()
