#!/usr/bin/env python3
"""The Python module (python/gputrace): tables read in chunks equal the whole and the CLI's
figures; the recipes equal `gputrace stats --by rank` on the DDP traces of tests/data and on
synthetic per-rank traces (tests/mktrace), read whole and in chunks of a few hundred records
(the mapper's streaming union); one recipe end to end through `python3 -m gputrace` on a
LocalCluster, whose workers run without Dask's profiler. Exit 77 (skip) without numpy, pandas
or Dask's distributed.
Usage: python-gputrace.py GPUTRACE MKTRACE SOURCE_DIR (GPUTRACE_LIB and PYTHONPATH set)."""
import csv
import io
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import pandas as pd
    import distributed  # noqa: F401
except ImportError as e:
    print(f"python-gputrace: skipped, {e}")
    sys.exit(77)

import gputrace
from gputrace import recipes

gt, mktrace, src = sys.argv[1:4]
data = os.path.join(src, "tests", "data")
ddp = [os.path.join(data, f"ddp-rank{r}.gtrace") for r in (0, 1)]
failures = 0


def check(cond, what):
    global failures
    if not cond:
        failures += 1
        print(f"FAIL: {what}")


def sections(args):
    """`gputrace stats ... -f csv` as {section: list of rows (lists of strings)}."""
    out = subprocess.run([gt, "stats", *args, "-f", "csv"], check=True, capture_output=True,
                         text=True).stdout
    res, name, lines = {}, None, []
    for line in out.splitlines() + [""]:
        if line.startswith("# "):
            name, lines = line[2:], []
        elif not line and name:
            res[name] = list(csv.reader(io.StringIO("\n".join(lines))))
            name = None
        elif name:
            lines.append(line)
    return res


def rows_of(df):
    """A recipe's table as the CSV it writes, read back as strings."""
    return list(csv.reader(io.StringIO(df.to_csv(index=False))))


def same(cli, df, what, drop=()):
    """The CLI's section cli and the recipe's df agree on every column they share, except
    those in drop; the columns shared are at least the CLI's minus drop."""
    head, body = cli[0], cli[1:]
    mine = rows_of(df)
    cols = [c for c in head if c not in drop]
    missing = [c for c in cols if c not in mine[0]]
    check(not missing, f"{what}: columns missing {missing}")
    if missing:
        return
    a = [[r[head.index(c)] for c in cols] for r in body]
    b = [[r[mine[0].index(c)] for c in cols] for r in mine[1:]]
    check(len(a) == len(b), f"{what}: {len(b)} rows, the CLI has {len(a)}")
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            check(False, f"{what} row {i}: {dict(zip(cols, y))} != CLI {dict(zip(cols, x))}")
            break


# ---- the reader ----
with gputrace.open(os.path.join(data, "example.gtrace")) as t:
    k = t.table("kernels")
    check(len(k) == 80, f"example: {len(k)} kernels, not 80")
    check(int((k["end_ns"] - k["start_ns"]).sum()) == 375364, "example: kernel time 375364 ns")
    parts = list(t.chunks("kernels", rows=7))
    check([len(p) for p in parts] == [7] * 11 + [3], f"chunks of 7: {[len(p) for p in parts]}")
    whole = pd.concat(parts, ignore_index=True)
    check(whole["start_ns"].equals(k["start_ns"]) and
          list(whole["name"].astype(str)) == list(k["name"].astype(str)),
          "chunks of 7 concatenated equal the whole table")
    # every kernel's duration and name as the CSV export has them, in file order
    ref = os.path.join(tempfile.mkdtemp(), "ref")
    subprocess.run([gt, "export", os.path.join(data, "example.gtrace"), "-f", "csv",
                    "--mangled", "-q", "-o", ref], check=True, capture_output=True)
    rows = list(csv.reader(open(ref + "-kernel.csv")))[1:]
    check([(int(r[2]) - int(r[1]), r[8]) for r in rows] ==
          [(int(e) - int(b), str(n)) for b, e, n in zip(k["start_ns"], k["end_ns"], k["name"])],
          "example: kernels as the CSV export has them")
    rel = t.table("kernels", relative=True, strings="text")
    check(int(rel["start_ns"].iloc[0]) == int(k["start_ns"].iloc[0]) - t.zero_ns,
          "relative times count from the trace's zero")
    check(rel["name"].iloc[0] == k["name"].astype(str).iloc[0], "text strings")
    ids = t.table("kernels", strings="ids")
    check("name" not in ids.columns and "name_id" in ids.columns, "strings='ids'")
with gputrace.open(ddp[1]) as t:
    p = t.table("processes")
    check(list(p["pid"]) == [624] and list(p["rank"]) == [1] and list(p["world_size"]) == [2],
          f"ddp-rank1 processes: {p[['pid', 'rank', 'world_size']].values.tolist()}")
    check(t.span_ns == 9281453818, f"ddp-rank1 span {t.span_ns}")
    d = t.table("devices")
    check(len(d) == 1 and d["name"].iloc[0] == "NVIDIA H200" and
          d["uuid"].iloc[0].startswith("GPU-"), f"ddp-rank1 devices: {d[['name', 'uuid']]}")
    n = {tb: sum(len(x) for x in (part.get(tb) for part in t.read(["kernels", "api", "nvtx"],
                                                                  rows=100)) if x is not None)
         for tb in ["kernels", "api", "nvtx"]}
    info = subprocess.run([gt, "info", ddp[1]], check=True, capture_output=True,
                          text=True).stdout
    for tb, rec in (("kernels", "kernel"), ("api", "api"), ("nvtx", "nvtx")):
        want = [ln.split()[1] for ln in info.splitlines() if ln.split()[:1] == [rec]]
        check(want and str(n[tb]) == want[0], f"ddp-rank1 {tb}: {n[tb]}, info says {want}")
try:
    gputrace.open(os.path.join(data, "no-such.gtrace"))
    check(False, "a missing trace opens")
except gputrace.GputraceError as e:
    check(e.errno == 2, f"missing trace: errno {e.errno}")

# ---- the recipes against stats --by rank ----


def compare(paths, rows, what):
    res = [recipes.map_trace(p, rows=rows) for p in paths]
    cli = sections(paths + ["--by", "rank", "--mangled"])
    same(cli["breakdown"], recipes.reduce_breakdown(res), f"{what} breakdown",
         drop=("lost_records",))
    s, r, g = recipes.reduce_steps(res)
    same(cli["steps"], s, f"{what} steps")
    same(cli["step_ranks"], r, f"{what} step_ranks")
    same(cli["stragglers"], g, f"{what} stragglers")
    same(cli["kernels"], recipes.reduce_kernels(res), f"{what} kernels")
    return res, cli


res, cli = compare(ddp, 1 << 18, "ddp")
b = recipes.reduce_breakdown(res)
check(list(b["idle_ns"]) == [7014136110, 7015813680], f"ddp idle {list(b['idle_ns'])}")
s, r, g = recipes.reduce_steps(res)
check(list(s[s["straggler"] == "true"]["step"]) == [4, 8], "ddp stragglers at steps 4 and 8")
compare(ddp, 50, "ddp in chunks of 50")

tmp = tempfile.mkdtemp()
syn = []
for rank, extra in ((0, ["--straggler", "0:3,5,9"]), (1, ["--seed", "2"]), (2, ["--seed", "3"])):
    path = os.path.join(tmp, f"rank-{rank}.gtrace")
    subprocess.run([mktrace, "-o", path, "--kernels", "6000", "--steps", "--nccl", "--memcpy",
                    "--api", "--rank", str(rank), "--world", "3", "--pid", str(100 + rank)] +
                   extra, check=True, capture_output=True)
    syn.append(path)
res, cli = compare(syn, 1 << 18, "synthetic")
b = recipes.reduce_breakdown(res)
check(all(x > 0 for x in b["comm_all_ns"]), f"synthetic NCCL time {list(b['comm_all_ns'])}")
check(list(b["kernels"]) == [6000, 6000, 6000], f"synthetic kernels {list(b['kernels'])}")
compare(syn, 300, "synthetic in chunks of 300")
# few pieces of the union kept open: most of it is summed chunk by chunk, still exactly
# (the synthetic traces are in time order)
keep, recipes.KEEP = recipes.KEEP, 64
compare(syn, 300, "synthetic in chunks of 300, 64 pieces open")
recipes.KEEP = keep

# one rank: a step compared with no other has no lag
compare(syn[1:2], 1 << 18, "one synthetic rank")

# ---- GPU time per NVTX range, per trace, against stats -r nvtx-gpu ----
for path in [os.path.join(data, f) for f in ("ddp-rank0.gtrace", "ddp-rank1.gtrace",
                                             "ddp-2rank.gtrace", "pytorch-train.gtrace",
                                             "example.gtrace")] + syn[:1]:
    for rows in (1 << 18, 100):
        res = recipes.map_nvtx_gpu(path, rows=rows)
        ncli = sections([path, "-r", "nvtx-gpu"])
        got = recipes.reduce_nvtx_gpu([res])
        same(ncli["nvtx_gpu"], got, f"nvtx-gpu {os.path.basename(path)} in chunks of {rows}")
        if rows == 100:
            import json
            out = subprocess.run([gt, "stats", path, "-r", "nvtx-gpu", "-f", "json"],
                                 check=True, capture_output=True, text=True).stdout
            want = json.loads(out)["nvtx_gpu_totals"]
            want = {k: want[k] for k in res["totals"]}
            check(res["totals"] == want, f"nvtx-gpu {path}: {res['totals']} != CLI {want}")
res = recipes.map_nvtx_gpu(ddp[1], rows=100)
check(res["totals"] == {"ranges": 24, "cross_thread_ranges": 0, "gpu_ops": 561,
                        "unmatched_ops": 0, "projected_ranges": 24},
      f"nvtx-gpu ddp-rank1 totals {res['totals']}")
top = recipes.reduce_nvtx_gpu([res]).iloc[0]
check((top["range"], top["proj_total_ns"], top["instances"], top["gpu_ops"]) ==
      ("ProfilerStep#0", 246956628, 1, 11), f"nvtx-gpu ddp-rank1 first row {dict(top)}")

# ---- end to end, on a LocalCluster ----
out = os.path.join(tmp, "out")
run = subprocess.run([sys.executable, "-m", "gputrace", "recipe", "gpu-idle", tmp, "-o", out,
                      "--workers", "1"], capture_output=True, text=True)
check(run.returncode == 0, f"recipe gpu-idle: exit {run.returncode}: {run.stderr[-2000:]}")
if run.returncode == 0:
    lines = run.stdout.strip().splitlines()
    check(len(lines) == 1 and lines[0].startswith("gpu-idle: 3 ranks; the most idle: rank "),
          f"summary: {lines}")
    got = list(csv.reader(open(os.path.join(out, "gpu_idle.csv"))))
    head = cli["breakdown"][0]
    want = [[r[head.index(c)] for c in got[0]] for r in cli["breakdown"][1:]]
    check(got[1:] == want, f"gpu_idle.csv {got[1:]} != {want}")
# the recipe's own workers run without Dask's statistical profiler, whose hour of one-second
# profiles made a worker's memory grow with the traces it mapped (python/gputrace/__main__.py)
probe = ("from distributed import Client\n"
         "from gputrace.__main__ import local_cluster\n"
         "c = local_cluster(2)\n"
         "with Client(c) as cl:\n"
         "    print(sorted(cl.run(lambda dask_worker: sorted(k for k in\n"
         "          dask_worker.periodic_callbacks if k.startswith('profile'))).values()))\n"
         "c.close()\n")
run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
check(run.returncode == 0 and run.stdout == "[[], []]\n",
      f"local_cluster's profilers: exit {run.returncode}, {run.stdout!r} {run.stderr[-2000:]}")
run = subprocess.run([sys.executable, "-m", "gputrace", "recipe", "no-such", tmp],
                     capture_output=True, text=True)
check(run.returncode == 64 and "unknown recipe 'no-such'" in run.stderr,
      f"unknown recipe: {run.returncode} {run.stderr}")
run = subprocess.run([sys.executable, "-m", "gputrace", "recipe", "gpu-idle",
                      os.path.join(tmp, "none.gtrace")], capture_output=True, text=True)
check(run.returncode == 66 and "none.gtrace: No such file or directory" in run.stderr,
      f"missing input: {run.returncode} {run.stderr}")

print(f"python-gputrace: {failures} failures")
sys.exit(1 if failures else 0)
