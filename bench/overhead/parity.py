#!/usr/bin/env python3
"""Compares the kernels PyTorch's profiler recorded over some steps (torch_bench.py --parity
FILE --torch-profiler) with those gputrace recorded over the same steps of a second run
(gputrace run --capture-range cudaProfilerApi -- torch_bench.py WORKLOAD --parity X; then
gputrace stats -r kernels -f csv). Names are compared demangled, as both tools print them.
Prints each name whose count differs and a verdict line; exits 1 on any difference.
Usage: parity.py PROFILER.json WORKLOAD STATS.csv"""
import csv
import json
import sys


def gputrace_counts(path):
    counts = {}
    with open(path) as f:
        rows = [l for l in f if l.strip() and not l.startswith("#")]
    for row in csv.DictReader(rows):
        if "instances" in row and row.get("name") is not None:
            counts[row["name"]] = counts.get(row["name"], 0) + int(row["instances"])
    return counts


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    prof = json.load(open(sys.argv[1]))[sys.argv[2]]
    ours = gputrace_counts(sys.argv[3])
    diff = 0
    for name in sorted(set(prof) | set(ours)):
        a, b = prof.get(name, 0), ours.get(name, 0)
        if a != b:
            diff += 1
            print("differs: %-60.60s profiler %d gputrace %d" % (name, a, b))
    print("%s: %d kernel names, %d kernels (profiler), %d kernels (gputrace), %d names differ"
          % (sys.argv[2], len(prof), sum(prof.values()), sum(ours.values()), diff))
    sys.exit(1 if diff else 0)


if __name__ == "__main__":
    main()
