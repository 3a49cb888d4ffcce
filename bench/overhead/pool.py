#!/usr/bin/env python3
"""Pools the launch rounds of several bench/overhead/run.sh logs (one per machine) into one
verdict: the launch cost each configuration adds, as a multiple of the floor's, by the means
over all rounds that ran bare, floor and the configuration, with a 95 % interval from a
bootstrap that resamples rounds within each log (fixed seed). Three measures, as run.sh
prints them: the whole launch loop, the median chunk and the median burst.
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


def ratio(rounds, config, i):
    b, f, g = (statistics.mean(r[k][i] for r in rounds) for k in ("bare", "floor", config))
    return (g - b) / (f - b)


def main():
    logs = [read(p) for p in sys.argv[1:]]
    if not logs:
        sys.exit(__doc__)
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
