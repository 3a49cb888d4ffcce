# PyTorch workloads for the overhead benchmark (bench/overhead/torch_run.sh), each timed by
# what a user waits for: the total wall time of its timed steps, divided by their number (the
# mean per step, stalls included), printed next to the median of 50-step windows for
# comparison with earlier logs.
#   loop        small-op MLP training loop: launch-bound, about 100 kernels and several
#               hundred runtime API calls per step
#   loop-graph  the same training step captured once as a CUDA graph and replayed
#   xfmr        a transformer training step: bf16 autocast, backward, AdamW
#   eltwise     many tiny element-wise ops on 256-element tensors, eager: about 100 kernels,
#               a few runtime API calls each, and two host synchronizations (.item()) per
#               step; the shape of the loop on which gputrace cost 1.4-2.0 times the
#               floor's added time (issue "Small-op PyTorch loops")
# Usage: torch_bench.py [WORKLOAD,...] [--steps N] [--torch-profiler] [--parity FILE] [--nvtx]
#                      [--ab BLOCK]
#   --torch-profiler  run under torch.profiler with CUDA activities only
#   --torch-profiler-stack  run under torch.profiler with CPU and CUDA activities and
#                     with_stack=True: Python stacks on its operators, the PyTorch profiler's
#                     answer to "which line launched this" (issue #30's comparison)
#   --nvtx            mark each step with NVTX ranges as PyTorch's profiler names steps,
#                     "ProfilerStep#N", and (xfmr) "forward", "backward" and "optimizer"
#                     inside it (for gputrace run --live: bench/live-gpu.sh)
#   --parity FILE     call cudaProfilerStart/Stop around the timed steps (for gputrace run
#                     --capture-range cudaProfilerApi); with --torch-profiler, record only
#                     those steps and write the kernels' names and counts to FILE (JSON)
#   --ab BLOCK        the in-process comparison: after the warm-up, blocks of BLOCK steps
#                     alternately outside and inside cudaProfilerStart/Stop, in the order
#                     off on, on off, off on, ... (N steps in all), each timed from a
#                     synchronize to the synchronize after its last step; a tracer that
#                     records only inside (gputrace --capture-range cudaProfilerApi, the floor
#                     with FLOOR_CAPTURE=1) is then compared with itself idle, in one process,
#                     free of the spread between processes. Prints "WORKLOAD ab_off_us A
#                     ab_on_us B blocks K cpu_off_us C cpu_on_us D": the mean wall time per
#                     step over all steps of each kind, and the mean CPU time of the thread
#                     that runs the steps (the launching thread's own cost, without the time
#                     it waited or was descheduled).
# Prints, per workload: "WORKLOAD step_mean_us M step_med_us W steps N". Exits 77 without
# torch or a GPU.
import json
import statistics
import sys
import time

try:
    import torch
except ImportError:
    print("no torch: skipping")
    sys.exit(77)
if not torch.cuda.is_available():
    print("no CUDA device: skipping")
    sys.exit(77)

WINDOW = 50
NVTX = "--nvtx" in sys.argv[1:]


def small_mlp():
    layers = []
    for _ in range(6):
        layers += [torch.nn.Linear(128, 128), torch.nn.LayerNorm(128), torch.nn.GELU()]
    return torch.nn.Sequential(*layers, torch.nn.Linear(128, 10)).cuda()


def loop_step():
    """The small-op loop: eager forward, backward and Adam on a 32 x 128 batch."""
    model = small_mlp()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.randn(32, 128, device="cuda")
    y = torch.randint(0, 10, (32,), device="cuda")
    loss_fn = torch.nn.CrossEntropyLoss()

    def step():
        opt.zero_grad(set_to_none=True)
        loss_fn(model(x), y).backward()
        opt.step()
    return step


def loop_graph_step():
    """The same step captured as one CUDA graph (PyTorch's whole-network capture: warm up on
    a side stream, capture forward, backward and a capturable Adam), replayed per step."""
    model = small_mlp()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, capturable=True)
    x = torch.randn(32, 128, device="cuda")
    y = torch.randint(0, 10, (32,), device="cuda")
    loss_fn = torch.nn.CrossEntropyLoss()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            opt.zero_grad(set_to_none=True)
            loss_fn(model(x), y).backward()
            opt.step()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    opt.zero_grad(set_to_none=True)
    with torch.cuda.graph(graph):
        loss_fn(model(x), y).backward()
        opt.step()
    return graph.replay


def xfmr_step():
    """A small GPT-like model: 4 pre-norm encoder layers (d 512, 8 heads, causal), batch 16 x
    256 tokens, bf16 autocast, cross-entropy, backward, AdamW."""
    d, vocab, seq, batch = 512, 8192, 256, 16
    layer = torch.nn.TransformerEncoderLayer(d, 8, 4 * d, dropout=0.0, batch_first=True,
                                             norm_first=True, activation="gelu")
    body = torch.nn.TransformerEncoder(layer, 4, enable_nested_tensor=False)
    emb = torch.nn.Embedding(vocab, d)
    head = torch.nn.Linear(d, vocab)
    model = torch.nn.ModuleList([emb, body, head]).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1)
    tokens = torch.randint(0, vocab, (batch, seq + 1), device="cuda")
    mask = torch.nn.Transformer.generate_square_subsequent_mask(seq, device="cuda")
    loss_fn = torch.nn.CrossEntropyLoss()

    def step():
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            h = body(emb(tokens[:, :-1]), mask=mask, is_causal=True)
            loss = loss_fn(head(h).flatten(0, 1), tokens[:, 1:].flatten())
        loss.backward()
        opt.step()

    def marked_step():
        rng = torch.cuda.nvtx.range
        opt.zero_grad(set_to_none=True)
        with rng("forward"), torch.autocast("cuda", dtype=torch.bfloat16):
            h = body(emb(tokens[:, :-1]), mask=mask, is_causal=True)
            loss = loss_fn(head(h).flatten(0, 1), tokens[:, 1:].flatten())
        with rng("backward"):
            loss.backward()
        with rng("optimizer"):
            opt.step()
    return marked_step if NVTX else step


def eltwise_step():
    """Many tiny element-wise ops: 24 rounds of five (mul, add, sigmoid, mul, sub) on four
    256-element tensors, then two reductions read back with .item() (a copy to the host and a
    synchronization each): 122 kernels, two device-to-host copies."""
    xs = [torch.randn(256, device="cuda") for _ in range(4)]

    def step():
        a, b, c, d = xs
        for _ in range(24):
            a = a * 1.0001 + b
            c = torch.sigmoid(c) - d * 0.5
        if a.sum().item() > 1e30 or c.sum().item() > 1e30:
            raise RuntimeError("eltwise diverged")
    return step


def with_steps(step):
    """Each call of step inside an NVTX range ProfilerStep#N, N counting from 0."""
    count = [0]

    def marked():
        torch.cuda.nvtx.range_push("ProfilerStep#%d" % count[0])
        count[0] += 1
        step()
        torch.cuda.nvtx.range_pop()
    return marked


WORKLOADS = {"loop": (loop_step, 600), "loop-graph": (loop_graph_step, 600),
             "xfmr": (xfmr_step, 200), "eltwise": (eltwise_step, 2000)}


def timed(name, step, steps, on_start=None, on_stop=None):
    for _ in range(WINDOW):  # warm-up: allocator, cuBLAS handles, lazy module loading
        step()
    torch.cuda.synchronize()
    if on_start:
        on_start()
    windows = []
    t_start = time.perf_counter()
    for _ in range(steps // WINDOW):
        t0 = time.perf_counter()
        for _ in range(WINDOW):
            step()
        torch.cuda.synchronize()
        windows.append((time.perf_counter() - t0) * 1e6 / WINDOW)
    total = time.perf_counter() - t_start
    if on_stop:
        on_stop()
    n = len(windows) * WINDOW
    print("%s step_mean_us %.1f step_med_us %.1f steps %d" %
          (name, total * 1e6 / n, statistics.median(windows), n), flush=True)


def ab(name, step, steps, block, cudart):
    for _ in range(WINDOW):
        step()
    torch.cuda.synchronize()
    total = {False: 0.0, True: 0.0}
    cpu = {False: 0.0, True: 0.0}
    done = {False: 0, True: 0}
    pairs = max(1, steps // (2 * block))
    for i in range(pairs):
        for on in ((False, True) if i % 2 == 0 else (True, False)):
            if on:
                cudart.cudaProfilerStart()
            else:
                cudart.cudaProfilerStop()
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            c0 = time.thread_time()
            for _ in range(block):
                step()
            torch.cuda.synchronize()
            total[on] += time.perf_counter() - t0
            cpu[on] += time.thread_time() - c0
            done[on] += block
    cudart.cudaProfilerStop()
    print("%s ab_off_us %.1f ab_on_us %.1f blocks %d cpu_off_us %.1f cpu_on_us %.1f" %
          (name, total[False] * 1e6 / done[False], total[True] * 1e6 / done[True], 2 * pairs,
           cpu[False] * 1e6 / done[False], cpu[True] * 1e6 / done[True]), flush=True)


def kernel_counts(prof):
    """Kernels the profiler recorded, by name (copies and memsets left out)."""
    counts = {}
    for e in prof.events():
        if e.device_type != torch.autograd.DeviceType.CUDA:
            continue
        if e.name.startswith(("Memcpy", "Memset")):
            continue
        counts[e.name] = counts.get(e.name, 0) + 1
    return counts


def main():
    args = sys.argv[1:]
    names = ["loop"]
    steps = None
    parity = None
    block = None
    stack = "--torch-profiler-stack" in args
    profiler = "--torch-profiler" in args or stack
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--steps":
            steps = int(args[i + 1])
            i += 1
        elif a == "--ab":
            block = int(args[i + 1])
            i += 1
        elif a == "--parity":
            parity = args[i + 1]
            i += 1
        elif not a.startswith("--"):
            names = a.split(",")
        i += 1
    torch.manual_seed(0)
    cudart = torch.cuda.cudart()
    parity_out = {}
    for name in names:
        make, default_steps = WORKLOADS[name]
        step = make()
        if NVTX:
            step = with_steps(step)
        n = steps or default_steps
        if block:
            ab(name, step, n, block, cudart)
            continue
        if not profiler:
            if parity:
                timed(name, step, n, cudart.cudaProfilerStart, cudart.cudaProfilerStop)
            else:
                timed(name, step, n)
            continue
        from torch.profiler import ProfilerActivity, profile

        if stack:
            prof = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                           with_stack=True)
        else:
            prof = profile(activities=[ProfilerActivity.CUDA])
        if parity:
            # only the timed steps, as gputrace's capture range records them
            timed(name, step, n, prof.start, prof.stop)
            parity_out[name] = kernel_counts(prof)
        else:
            with prof:
                timed(name, step, n)
    if parity and profiler:
        with open(parity, "w") as f:
            json.dump(parity_out, f, indent=0, sort_keys=True)

main()
