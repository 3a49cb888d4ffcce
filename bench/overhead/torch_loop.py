# Small-op PyTorch training loop for the overhead benchmark: an MLP with small layers, so the
# step is launch-bound (about 100 kernels and several hundred runtime API calls per step).
# Prints "step_us <median of the timed windows>". With --torch-profiler the loop runs under
# torch.profiler with CUDA activities, for comparison with PyTorch's own tracer.
import statistics
import sys
import time

import torch

steps = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 600
use_profiler = "--torch-profiler" in sys.argv
dev = torch.device("cuda")
torch.manual_seed(0)
layers = []
for _ in range(6):
    layers += [torch.nn.Linear(128, 128), torch.nn.LayerNorm(128), torch.nn.GELU()]
model = torch.nn.Sequential(*layers, torch.nn.Linear(128, 10)).to(dev)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
x = torch.randn(32, 128, device=dev)
y = torch.randint(0, 10, (32,), device=dev)
loss_fn = torch.nn.CrossEntropyLoss()


def step():
    opt.zero_grad(set_to_none=True)
    loss = loss_fn(model(x), y)
    loss.backward()
    opt.step()


def run():
    for _ in range(50):  # warm-up: allocator, cuBLAS handles, lazy module loading
        step()
    torch.cuda.synchronize()
    windows = []
    per = 50
    for _ in range(steps // per):
        t0 = time.perf_counter()
        for _ in range(per):
            step()
        torch.cuda.synchronize()
        windows.append((time.perf_counter() - t0) * 1e6 / per)
    print("step_us %.1f" % statistics.median(windows))


if use_profiler:
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        run()
else:
    run()
