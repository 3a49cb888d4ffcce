#!/usr/bin/env python3
"""Pools the rounds of several benchmark logs (one per machine) into one verdict, by the means
over all rounds that ran every configuration compared, with a 95 % interval from a bootstrap
that resamples rounds within each log (fixed seed).
- bench/overhead/run.sh logs: the launch cost each configuration adds, as a multiple of the
  floor's. Three measures, as run.sh prints them: the whole launch loop, the median chunk and
  the median burst.
- bench/overhead/torch_run.sh logs: the time per step each tracer adds to each PyTorch
  workload (the mean per step over the whole timed run), in per cent of bare and as a
  multiple of what the CUPTI floor (floor) and Nsight Systems (nsys) add.
Usage: pool.py LOG [LOG ...]"""
import random
import statistics
import sys

MEASURES = ((0, "all chunks"), (6, "median chunk"), (7, "burst"))


def read(path):
    """Rounds of one log: {round: {config: [figures]}}, from run.sh's per-run lines."""
    rounds = {}
    for line in open(path):
        f = line.split()
        if len(f) == 11 and f[1].isdigit():
            try:
                rounds.setdefault(f[1], {})[f[0]] = [float(x) for x in f[2:]]
            except ValueError:
                continue
    return list(rounds.values())


def read_torch(path):
    """Rounds of one torch_run.sh log: {workload: {round: {config: µs per step}}}. Lines
    "round R: CONFIG WORKLOAD MEAN MEDIAN us/step" give the mean per step over the whole timed
    run (what a user waits for); the older "round R: CONFIG V us/step" lines, from logs of
    the loop timed by its median window, count as workload "loop-median"."""
    out = {}
    for line in open(path):
        f = line.split()
        if len(f) == 7 and f[0] == "round" and f[6] == "us/step":
            out.setdefault(f[3], {}).setdefault(f[1].rstrip(":"), {})[f[2]] = float(f[4])
        elif len(f) == 5 and f[0] == "round" and f[4] == "us/step":
            out.setdefault("loop-median", {}).setdefault(f[1].rstrip(":"), {})[f[2]] = float(f[3])
    return {w: list(r.values()) for w, r in out.items()}


def torch_main(logs):
    """Each tracer's added time per step by the means over the rounds: per cent of bare, and
    as a multiple of what the CUPTI floor and Nsight Systems add, per workload."""
    for w in sorted({w for log in logs for w in log}):
        wl = [log.get(w, []) for log in logs]
        print("== %s" % w)
        configs = sorted({c for log in wl for r in log for c in r} - {"bare"})
        for c in configs:
            for base in ("bare", "floor", "nsys"):
                if c == base:
                    continue
                need = ("bare", c) if base == "bare" else ("bare", base, c)
                per_log = [[r for r in log if all(k in r for k in need)] for log in wl]
                per_log = [rs for rs in per_log if len(rs) > 1]
                if not per_log:
                    continue

                def fig(rounds):
                    b, g = (statistics.mean(r[k] for r in rounds) for k in ("bare", c))
                    if base == "bare":
                        return 100 * (g - b) / b
                    return (g - b) / (statistics.mean(r[base] for r in rounds) - b)

                pooled = [r for rs in per_log for r in rs]
                rng = random.Random(1)
                boot = sorted(fig([r for rs in per_log for r in rng.choices(rs, k=len(rs))])
                              for _ in range(2000))
                unit = "% added" if base == "bare" else "x %s's added time" % base
                added = statistics.mean(r[c] - r["bare"] for r in pooled)
                print("%-18s %s %.2f, 95%% interval %.2f-%.2f; %d rounds from %d logs;"
                      " added %.1f us/step (mean); per log %s" %
                      (c, unit, fig(pooled), boot[50], boot[1949], len(pooled),
                       len(per_log), added, " ".join("%.2f" % fig(rs) for rs in per_log)))


def ratio(rounds, config, i):
    b, f, g = (statistics.mean(r[k][i] for r in rounds) for k in ("bare", "floor", config))
    return (g - b) / (f - b)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    if any(read_torch(p) for p in sys.argv[1:]):
        torch_main([read_torch(p) for p in sys.argv[1:]])
        return
    logs = [read(p) for p in sys.argv[1:]]
    configs = sorted({c for log in logs for r in log for c in r} - {"bare", "floor"})
    for i, what in MEASURES:
        for c in configs:
            per_log = [[r for r in log if all(k in r for k in ("bare", "floor", c))]
                       for log in logs]
            per_log = [rs for rs in per_log if len(rs) > 1]
            if not per_log:
                continue
            pooled = [r for rs in per_log for r in rs]
            rng = random.Random(1)
            boot = sorted(ratio([r for rs in per_log for r in rng.choices(rs, k=len(rs))], c, i)
                          for _ in range(2000))
            print("%-18s %-12s x floor %.2f, 95%% interval %.2f-%.2f; %d rounds from %d logs;"
                  " per log %s" % (c, what, ratio(pooled, c, i), boot[50], boot[1949],
                                   len(pooled), len(per_log),
                                   " ".join("%.2f" % ratio(rs, c, i) for rs in per_log)))


if __name__ == "__main__":
    main()
