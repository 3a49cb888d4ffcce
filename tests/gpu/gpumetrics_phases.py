# GPU check helper (tests/gpu/gpumetrics-values.sh): four phases of about a second each, inside
# NVTX ranges, with what the program itself measured printed as "PHASE BYTES_PER_S":
#   matmul  fp16 8192x8192 matrix products (tensor cores), one at a time
#   d2d     device-to-device copies of 1 GiB (bytes/s of each direction: read = write)
#   h2d     host-to-device copies of 256 MiB from pinned memory
#   sleep   nothing on the GPU
import sys
import time

import torch

dev = torch.device("cuda")
SECONDS = float(sys.argv[1]) if len(sys.argv) > 1 else 1.0


def phase(name, fn, nbytes=0):
    fn()
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_push(name)
    t0 = time.perf_counter()
    n = 0
    while time.perf_counter() - t0 < SECONDS:
        fn()
        torch.cuda.synchronize()
        n += 1
    dt = time.perf_counter() - t0
    torch.cuda.nvtx.range_pop()
    print(name, int(n * nbytes / dt), flush=True)


a = torch.randn(8192, 8192, device=dev, dtype=torch.float16)
b = torch.randn(8192, 8192, device=dev, dtype=torch.float16)
c = torch.empty_like(a)
phase("matmul", lambda: torch.matmul(a, b, out=c))
del a, b, c
src = torch.empty(1 << 30, dtype=torch.uint8, device=dev)
dst = torch.empty_like(src)
phase("d2d", lambda: dst.copy_(src), 1 << 30)
del src, dst
host = torch.empty(256 << 20, dtype=torch.uint8).pin_memory()
dst = torch.empty(256 << 20, dtype=torch.uint8, device=dev)
phase("h2d", lambda: dst.copy_(host, non_blocking=True), 256 << 20)
phase("sleep", lambda: time.sleep(0.05))
