# GPU check helper (tests/gpu/pystack.sh): runs tests/gpu/torch_train.py under the PyTorch
# profiler with with_stack=True and prints, per function of torch_train.py, how many kernels
# were launched from inside it ("FUNCTION COUNT", sorted; "None" for kernels launched outside
# any, such as the backward pass's, launched by autograd's own thread). From the profiler's
# Chrome trace: a kernel's launch is the runtime or driver call of its correlation id; its
# function is the innermost python_function slice of torch_train.py around that call on the
# call's thread (the profiler names those slices "FILE(LINE): NAME", LINE where NAME begins,
# so it tells functions apart, not lines). The program's own output goes to stderr.
#   python3 torch_prof_lines.py torch_train.py            (profiles it)
#   python3 torch_prof_lines.py --json TRACE.json         (reads a trace the profiler wrote)
import collections
import json
import sys
import tempfile

TARGET = "torch_train.py("


def profile(script):
    import contextlib
    import runpy

    import torch
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                 with_stack=True) as prof:
        with contextlib.redirect_stdout(sys.stderr):
            try:
                runpy.run_path(script, run_name="__main__")
            except SystemExit:
                pass
        torch.cuda.synchronize()
    path = tempfile.mktemp(suffix=".json")
    prof.export_chrome_trace(path)
    return path


def functions(events):
    launch = {}
    spans = collections.defaultdict(list)
    for e in events:
        cat = e.get("cat")
        if cat in ("cuda_runtime", "cuda_driver"):
            launch[e["args"]["correlation"]] = (e["pid"], e["tid"], e["ts"])
        elif cat == "python_function" and TARGET in e["name"]:
            spans[(e["pid"], e["tid"])].append((e["ts"], e["ts"] + e["dur"], e["name"]))
    out = collections.Counter()
    for e in events:
        if e.get("cat") != "kernel":
            continue
        at = launch.get(e["args"].get("correlation"))
        best = None
        if at:
            for s in spans.get(at[:2], ()):
                if s[0] <= at[2] <= s[1] and (best is None or s[0] >= best[0]):
                    best = s
        out[best[2].split("): ", 1)[1] if best else None] += 1
    return out


if sys.argv[1] == "--json":
    path = sys.argv[2]
else:
    path = profile(sys.argv[1])
with open(path) as f:
    counts = functions(json.load(f)["traceEvents"])
for k in sorted(counts, key=lambda x: (x is None, x or "")):
    print(k, counts[k])
print("kernels", sum(counts.values()), file=sys.stderr)
