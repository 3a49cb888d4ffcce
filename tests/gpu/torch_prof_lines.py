# GPU check helper (tests/gpu/pystack.sh): runs tests/gpu/torch_train.py under the PyTorch
# profiler with with_stack=True and prints, per innermost line of torch_train.py, how many
# kernels were launched from there ("LINE COUNT", sorted; "None" for kernels no op line holds).
import collections
import re
import runpy
import sys

import torch
from torch.profiler import ProfilerActivity, profile

script = sys.argv[1]
with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], with_stack=True) as prof:
    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit:
        pass
    torch.cuda.synchronize()
lines = collections.Counter()
nk = 0
for e in prof.events():
    if not e.kernels:
        continue
    line = None
    for fr in e.stack or []:
        if "torch_train.py" in fr:
            m = re.search(r"\((\d+)\)", fr)
            if m:
                line = int(m.group(1))
                break
    lines[line] += len(e.kernels)
    nk += len(e.kernels)
for k in sorted(lines, key=lambda x: (x is None, x or 0)):
    print(k, lines[k])
print("kernels", nk, file=sys.stderr)
