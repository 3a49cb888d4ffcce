# GPU check helper (tests/gpu/pystack.sh): runs tests/gpu/torch_train.py under the PyTorch
# profiler with with_stack=True and prints, per line of torch_train.py, how many kernels were
# launched from there ("LINE COUNT", sorted; "None" for kernels whose operator has no frame of
# torch_train.py, such as the backward pass's, launched by autograd's own thread). A kernel
# belongs to the innermost operator that launched it; its line is the innermost frame of
# torch_train.py in the stack of that operator or, where it has none, of the nearest operator
# around it. The program's own output goes to stderr.
import collections
import contextlib
import re
import runpy
import sys

import torch
from torch.profiler import ProfilerActivity, profile

script = sys.argv[1]
with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], with_stack=True) as prof:
    with contextlib.redirect_stdout(sys.stderr):
        try:
            runpy.run_path(script, run_name="__main__")
        except SystemExit:
            pass
    torch.cuda.synchronize()


def line_of(e):
    while e is not None:
        for fr in e.stack or []:
            if "torch_train.py" in fr:
                m = re.search(r"\((\d+)\)", fr)
                if m:
                    return int(m.group(1))
        e = e.cpu_parent
    return None


lines = collections.Counter()
nk = 0
for e in prof.events():
    # kernels hang on the operators; the runtime's own events (cudaLaunchKernel) are left out
    if not e.kernels or e.name.startswith(("cuda", "cu")):
        continue
    lines[line_of(e)] += len(e.kernels)
    nk += len(e.kernels)
for k in sorted(lines, key=lambda x: (x is None, x or 0)):
    print(k, lines[k])
print("kernels", nk, file=sys.stderr)
