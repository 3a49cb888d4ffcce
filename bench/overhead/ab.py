#!/usr/bin/env python3
"""The in-process comparison of bench/overhead/torch_run.sh (TORCH_AB=BLOCK): each run of a
configuration timed its blocks of steps with the tracer idle (outside cudaProfilerStart/Stop)
and recording (inside), so what the tracer adds while it records is measured against the
same process: "round R: CONFIG WORKLOAD OFF ON ab us/step" lines, means per step, and
"... abcpu us/step" lines, the CPU time per step of the thread that runs the steps.
Prints, per workload:
- per configuration, the means over the rounds of the idle and recording step times, the
  time added while recording (ON - OFF) with a 95 % interval (bootstrap over rounds, fixed
  seed), in µs per step and in per cent of idle; and that added time as a multiple of the
  floor's, paired by round;
- the accounting ladder: each rung's configuration against the one below it, what the rung
  adds, paired by round;
- what a tracer costs while idle: its idle step time against bare's, across processes (so
  with the spread between processes in it): the subscriber's callbacks, the flush thread's
  wake-ups, the rescans.
CUPTI ignores cuptiActivityEnableRuntimeApi/DriverApi once a context exists
(bench/probe/api-toggle.cu), so API activity records cannot be switched per block: the
floor's FLOOR_API configurations write them in both blocks, and the ladder leaves them out.
Usage: ab.py RUNS [RUNS ...]"""
import random
import statistics
import sys

LADDER = (
    ("floor", "bare", "CUPTI floor: kernel, memcpy, memset activity records, discarded"),
    ("floor-clock", "floor", "gputrace's clock as CUPTI's timestamp callback"),
    ("floor-api-all", "floor-clock",
     "every call's API record (RUNTIME and DRIVER kinds), over the clock"),
    ("floor-mem", "floor", "memory activity records (MEMORY2, MEMORY_POOL), with the clock"),
    ("floor-flush", "floor", "a flush thread every 100 ms, with the clock"),
    ("floor-flush-pool", "floor-flush",
     "buffers reused (a pool, as gputrace's) under the same 100 ms flush thread"),
    ("gputrace-k0", "floor",
     "gputrace's record parsing, ring writes and the session's drain (kernel, memcpy, memset;"
     " no flush thread), with the clock"),
    ("gputrace-k", "gputrace-k0", "gputrace's flush thread (100 ms), NVTX publish, rescans"),
    ("gputrace-kf1000", "gputrace-k0", "the same flush thread every 1000 ms"),
    ("gputrace-f1000", "gputrace", "the defaults with a 1000 ms flush period"),
    ("gputrace-ka", "gputrace-k",
     "gputrace's handling of the API records of the default filter (CUPTI writes them in both"
     " blocks: a call's switch is ignored once a context exists)"),
    ("gputrace-kaall", "gputrace-k", "gputrace's API records of every call (--api all)"),
    ("gputrace-kam", "gputrace-ka", "gputrace's memory records"),
    ("gputrace", "gputrace-kam", "NVTX and graph records: the default"),
    ("gputrace-cb", "gputrace", "API records through callbacks instead of activity records"),
)


def read(paths):
    """{workload: {(log, round): {config: (off, on)}}}"""
    out = {}
    for i, path in enumerate(paths):
        for line in open(path):
            f = line.split()
            if len(f) == 8 and f[0] == "round" and f[6] in ("ab", "abcpu"):
                key = (i, f[1].rstrip(":"))
                w = f[3] if f[6] == "ab" else f[3] + " (launching thread's CPU time)"
                out.setdefault(w, {}).setdefault(key, {})[f[2]] = (float(f[4]), float(f[5]))
    return out


def interval(rounds, stat):
    """stat over the rounds, and its 95 % bootstrap interval (rounds resampled)."""
    rng = random.Random(1)
    boot = sorted(stat([rng.choice(rounds) for _ in rounds]) for _ in range(2000))
    return stat(rounds), boot[50], boot[1949]


def added(c):
    return lambda rs: statistics.mean(r[c][1] - r[c][0] for r in rs)


def main():
    for w, by_round in sorted(read(sys.argv[1:]).items()):
        rounds = list(by_round.values())
        configs = sorted({c for r in rounds for c in r})
        print("== %s: %d rounds" % (w, len(rounds)))
        print("%-18s %6s %10s %10s %26s %8s %22s" % ("config", "rounds", "idle us", "rec us",
              "added us/step (95 %)", "added %", "x floor's (95 %)"))
        for c in configs:
            rs = [r for r in rounds if c in r]
            off = statistics.mean(r[c][0] for r in rs)
            on = statistics.mean(r[c][1] for r in rs)
            m, lo, hi = interval(rs, added(c)) if len(rs) > 1 else (on - off, on - off, on - off)
            fl = ""
            both = [r for r in rs if "floor" in r]
            if c != "floor" and len(both) > 1:
                def ratio(s):
                    den = statistics.mean(r["floor"][1] - r["floor"][0] for r in s)
                    return added(c)(s) / den if den else float("nan")
                x, xlo, xhi = interval(both, ratio)
                fl = "%.2f (%.2f-%.2f)" % (x, xlo, xhi)
            print("%-18s %6d %10.1f %10.1f %8.1f (%7.1f-%7.1f) %7.1f%% %22s" %
                  (c, len(rs), off, on, m, lo, hi, 100 * m / off, fl))
        print("-- the ladder: what each rung adds while recording, paired by round")
        for c, below, what in LADDER:
            rs = [r for r in rounds if c in r and (below == "bare" or below in r)]
            if len(rs) < 2:
                continue
            base = (lambda s: 0.0) if below == "bare" else added(below)
            m, lo, hi = interval(rs, lambda s: added(c)(s) - base(s))
            print("%-18s over %-18s %8.1f us/step (%7.1f-%7.1f)  %s" %
                  (c, "its idle self" if below == "bare" else below, m, lo, hi, what))
        print("-- idle: each tracer's idle step time against bare's (across processes)")
        for c in configs:
            rs = [r for r in rounds if c in r and "bare" in r]
            if c == "bare" or len(rs) < 2:
                continue
            m, lo, hi = interval(rs, lambda s: statistics.mean(r[c][0] - r["bare"][0]
                                                               for r in s))
            print("%-18s %8.1f us/step (%7.1f-%7.1f)" % (c, m, lo, hi))


main()
