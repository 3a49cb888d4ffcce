"""Recipes over many traces on Dask (docs/scale.md): a mapper per trace returns a small result,
a reducer combines them. The figures are those of `gputrace stats --by rank` (docs/stats.md,
"Across ranks"), computed as exporters/analysis/rankstats*.c and busy.c compute them: the
same groups, steps, GPU busy time and stragglers. A mapper reads its trace in chunks of
`rows` records, so its memory is bounded by a chunk (plus the groups, steps and names).
Runs in the worker processes (mappers) and the client (reducers)."""
import math
import os
import resource

import numpy as np
import pandas as pd

import gputrace

C, N, M = 1, 2, 4  # busy kinds: compute, communication (NCCL), memory (copies, memsets)
GT_NVTX_MARK = 2
MIN_LAG_PCT = 5.0
STEP_LIST = 10

# ---- steps (exporters/model/steps.c) ----

FAMILIES = ["none", "named", "ProfilerStep", "step", "train_step", "iteration"]
_WORDS = [("step", 3), ("train_step", 4), ("training_step", 4), ("train step", 4),
          ("training step", 4), ("iteration", 5), ("iter", 5)]


def _number_suffix(s):
    if not s:
        return True, -1
    if s[0] in " #_-:=" and len(s) > 1:
        s = s[1:]
    if len(s) > 18 or not all("0" <= ch <= "9" for ch in s):
        return False, -1
    return True, int(s)


def step_match(msg, name=None):
    """(family index, number) of an NVTX message, as gt_steps_match."""
    if msg is None:
        return 0, -1
    if name is not None:
        if not msg.startswith(name):
            return 0, -1
        ok, n = _number_suffix(msg[len(name):])
        return (1, n) if ok else (0, -1)
    ps = "ProfilerStep#"
    if len(msg) > len(ps) and msg.startswith(ps):
        rest = msg[len(ps):]
        ok, n = _number_suffix(rest)
        return (2, n) if "0" <= rest[0] <= "9" and ok else (0, -1)
    low = "".join(ch.lower() if "A" <= ch <= "Z" else ch for ch in msg)
    for word, fam in _WORDS:
        if low.startswith(word):
            ok, n = _number_suffix(msg[len(word):])
            if ok:
                return fam, n
    return 0, -1


def nccl_kernel(name):
    """Whether a kernel is NCCL's, as gt_ranks_nccl_kernel."""
    if name is None:
        return False
    i = 0
    if len(name) > 2 and name.startswith("_Z"):
        i = 2
        while i < len(name) and "0" <= name[i] <= "9":
            i += 1
        if i == 2:
            i = 0
    return name.startswith("nccl", i) or "ncclKernel" in name or "ncclDevKernel" in name


# ---- GPU busy time (exporters/analysis/busy.c), a chunk at a time ----

# pieces of the union (stretches between two interval ends) kept open after each merge: more
# than busy.c's GT_BUSY_KEEP segments, so that what busy.c sums exactly is summed exactly here
KEEP = 8192


class Busy:
    """The union of one GPU's intervals by kind. Intervals are merged a batch at a time; all
    but the newest KEEP pieces of the union are summed and dropped (below the floor), so
    memory stays about a batch and KEEP pieces. An interval that starts below the floor is
    late: its time there is counted in late_ns and left out, as busy.c does."""

    def __init__(self, windows):
        self.by_mask = [0] * 8
        self.first, self.last = None, 0
        self.late_ns = self.late_spans = 0
        self.floor = 0
        self.pend = (np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.uint8))
        self.win = windows  # ndarray (start, end) int64, or None; sums in self.wsum
        self.wsum = np.zeros((0 if windows is None else len(windows), 4), np.int64)

    def add(self, s, e, kind):
        keep = e > s
        s, e, kind = s[keep], e[keep], kind[keep]
        if not len(s):
            return
        lo = int(s.min())
        self.first = lo if self.first is None else min(self.first, lo)
        self.last = max(self.last, int(e.max()))
        late = s < self.floor
        if late.any():
            self.late_spans += int(late.sum())
            self.late_ns += int((np.minimum(e[late], self.floor) - s[late]).sum())
            s = np.where(late, self.floor, s)
            keep = e > s
            s, e, kind = s[keep], e[keep], kind[keep]
        ps, pe, pk = self.pend
        self.pend = (np.concatenate([ps, s]), np.concatenate([pe, e]),
                     np.concatenate([pk, kind]))

    def merge(self, keep=0):
        """Sum everything but the newest `keep` pieces of the union."""
        s, e, k = self.pend
        if not len(s):
            return
        t = np.concatenate([s, e])
        d = np.concatenate([np.ones(len(s), np.int64), -np.ones(len(e), np.int64)])
        kk = np.concatenate([k, k])
        order = np.argsort(t, kind="stable")
        t, d, kk = t[order], d[order], kk[order]
        mask = np.zeros(len(t), np.uint8)
        for bit in (C, N, M):
            cnt = np.cumsum(np.where(kk == bit, d, 0))
            mask |= np.where(cnt > 0, bit, 0).astype(np.uint8)
        ts, te = t[:-1], t[1:]
        live = te > ts
        ts, te, mk = ts[live], te[live], mask[:-1][live]
        if keep:
            if len(ts) <= keep:
                return
            upto = int(ts[len(ts) - keep])
            live = ts < upto
            ts, te, mk = ts[live], te[live], mk[live]
        else:
            upto = int(e.max())
        lens = te - ts
        for m in range(1, 8):
            sel = mk == m
            if sel.any():
                self.by_mask[m] += int(lens[sel].sum())
        if self.win is not None and len(self.win) and len(ts):
            self._windows(ts, te, mk)
        self.floor = upto
        keep = e > upto
        self.pend = (np.maximum(s[keep], upto), e[keep], k[keep])

    def _windows(self, ts, te, mk):
        a, b = self.win[:, 0], self.win[:, 1]
        lens = te - ts
        for col, sel in enumerate(((mk & C) != 0, (mk & N) != 0,
                                   (mk & (C | N)) == (C | N), (mk & M) != 0)):
            cum = np.concatenate([[0], np.cumsum(np.where(sel, lens, 0))])

            def F(x):
                j = np.searchsorted(ts, x, side="right") - 1
                jc = np.clip(j, 0, len(ts) - 1)
                part = np.where(sel[jc], np.clip(x - ts[jc], 0, lens[jc]), 0)
                return np.where(j < 0, 0, cum[jc] + part)
            self.wsum[:, col] += F(b) - F(a)

    def totals(self):
        self.merge()
        first = self.first if self.first is not None else 0
        return {"by_mask": self.by_mask, "span_ns": self.last - first if self.first is not None
                else 0, "late_ns": self.late_ns}


# ---- the mapper ----

# The histogram of gputrace stats (exporters/analysis/stats-int.h, gt_hist): a duration v below
# 128 ns counts in its own bucket; above, each power of two is split into 128 equal buckets.
# A kernel's median and p99 are read from the merged counts as gt_stats_series_rank does, so
# that they equal the CLI's to the nanosecond; the mappers send the counts (a few hundred
# buckets per kernel name), which add up exactly across chunks, traces and ranks.
HIST_SUB_BITS = 7
HIST_SUB = 1 << HIST_SUB_BITS


def hist_keys(v):
    """Each duration's bucket, block * 128 + sub, as hist_index in stats-collect.c."""
    v = np.asarray(v, dtype=np.int64)
    e = np.zeros(len(v), dtype=np.int64)
    big = v >= HIST_SUB
    # the exponent of the highest bit set, exact for any int64 (frexp is not past 2^53)
    x = v[big].copy()
    eb = np.zeros(len(x), dtype=np.int64)
    for shift in (32, 16, 8, 4, 2, 1):
        hi = x >= (np.int64(1) << shift)
        eb[hi] += shift
        x[hi] >>= shift
    e[big] = eb
    keys = v.copy()
    block = e[big] - HIST_SUB_BITS + 1
    sub = (v[big] >> (e[big] - HIST_SUB_BITS)) - HIST_SUB
    keys[big] = block * HIST_SUB + sub
    return keys


def hist_add(h, keys):
    """Add the bucket keys (an array) to the counts h (a dict), exactly."""
    u, c = np.unique(keys, return_counts=True)
    for k, n in zip(u.tolist(), c.tolist()):
        h[k] = h.get(k, 0) + n


def hist_merge(a, b):
    """The counts of a and b added (a new dict), as gt_stats_series_merge adds blocks."""
    out = dict(a)
    for k, n in b.items():
        out[k] = out.get(k, 0) + n
    return out


def _hist_value(key):
    block, sub = divmod(key, HIST_SUB)
    if block == 0:
        return sub
    shift = block - 1
    return ((HIST_SUB + sub) << shift) + ((1 << shift) - 1) // 2


def hist_rank(h, count, lo, hi, k):
    """The k-th smallest value (1-based) as gt_stats_series_rank: exact at the extremes,
    else its bucket's middle, kept within [lo, hi]."""
    if count == 0:
        return 0
    if k <= 1:
        return lo
    if k >= count:
        return hi
    seen = 0
    for key in sorted(h):
        seen += h[key]
        if seen >= k:
            return min(max(_hist_value(key), lo), hi)
    return hi


def hist_median(h, count, lo, hi):
    if count == 0:
        return 0.0
    if count % 2:
        return float(hist_rank(h, count, lo, hi, (count + 1) // 2))
    return (float(hist_rank(h, count, lo, hi, count // 2)) +
            float(hist_rank(h, count, lo, hi, count // 2 + 1))) / 2.0


def hist_p99(h, count, lo, hi):
    """Nearest rank: the smallest value with at least 99 % of the values at or below it."""
    return hist_rank(h, count, lo, hi, (count * 99 + 99) // 100)


def _names_merge(c, v):
    """A kernel name's [total, count, min, max, sum of squares, histogram] of two parts."""
    return [c[0] + v[0], c[1] + v[1], min(c[2], v[2]), max(c[3], v[3]), c[4] + v[4],
            hist_merge(c[5], v[5])]


def _group_key(rank, host, pid):
    return ("rank", int(rank)) if rank >= 0 else ("pid", host, int(pid))


def map_trace(path, rows=1 << 18, step_name=None, lib=None):
    """Everything the reducers need of one trace, small: per group its busy totals, kernel
    names, steps and their GPU time."""
    with gputrace.open(path, lib) as t:
        host0 = t.header["hostname"]
        procs = {}  # pid -> (rank, host)
        steps = []  # (pid, start, end, tid, family, number)
        fam_of = {}
        for part in t.read(["processes", "nvtx"], rows=rows, strings="ids"):
            p = part.get("processes")
            if p is not None:
                for pid, rank, hid in zip(p["pid"], p["rank"], p["host_id"]):
                    if int(pid) not in procs:
                        procs[int(pid)] = (int(rank), t.string(hid) or host0)
            n = part.get("nvtx")
            if n is None:
                continue
            n = n[(n["kind"] != GT_NVTX_MARK) & (n["message_id"] != 0) &
                  (n["end_ns"] >= n["start_ns"])]
            for mid in np.unique(n["message_id"]):
                if int(mid) not in fam_of:
                    fam_of[int(mid)] = step_match(t.string(mid), step_name)
            fam = np.array([fam_of[int(m)][0] for m in n["message_id"]], dtype=np.int64)
            num = np.array([fam_of[int(m)][1] for m in n["message_id"]], dtype=np.int64)
            sel = fam > 0
            if sel.any():
                steps.append(np.stack([n["pid"].to_numpy()[sel].astype(np.int64),
                                       n["start_ns"].to_numpy()[sel].astype(np.int64),
                                       n["end_ns"].to_numpy()[sel].astype(np.int64),
                                       n["tid"].to_numpy()[sel].astype(np.int64),
                                       fam[sel], num[sel]], axis=1))
        fam = 0
        by_pid = {}
        if steps:
            st = np.concatenate(steps)
            fam = int(st[:, 4].min())
            st = st[st[:, 4] == fam]
            # pid, start, the outer of two ranges first, tid
            st = st[np.lexsort((st[:, 3], -st[:, 2], st[:, 1], st[:, 0]))]
            for pid in np.unique(st[:, 0]):
                mine = st[st[:, 0] == pid]
                nums = mine[:, 5]
                own = (nums >= 0).all() and (np.diff(nums) > 0).all()
                if not own:
                    nums = np.arange(len(mine), dtype=np.int64)
                by_pid[int(pid)] = (mine[:, 1:3].copy(), nums.copy())

        def group_of(pid):
            rank, host = procs.get(pid, (-1, host0))
            return _group_key(rank, host, pid)

        groups = {}  # key -> dict

        def group(pid):
            key = group_of(pid)
            g = groups.get(key)
            if g is None:
                rank, host = procs.get(pid, (-1, host0))
                g = groups[key] = {"rank": rank, "pid": pid, "host": host, "kernels": 0,
                                   "names": {}, "active": False, "steps": None,
                                   "step_numbers": None, "sets": {}}
            if g["steps"] is None and pid in by_pid:
                g["steps"], g["step_numbers"] = by_pid[pid]
            return g

        gpu_of = {}
        for d in t.table("devices", strings="ids").itertuples():
            gpu_of.setdefault((int(d.pid), int(d.device_id)), d.uuid)
        nccl = {}
        for part in t.read(["kernels", "memcpy", "memset", "graphs"], rows=rows,
                           strings="ids"):
            sub = []
            for table, df in part.items():
                if table == "kernels":
                    for nid in np.unique(df["name_id"]):
                        if int(nid) not in nccl:
                            nccl[int(nid)] = nccl_kernel(t.string(nid))
                    kind = np.where(df["name_id"].map(nccl).to_numpy(bool), N, C)
                elif table == "graphs":
                    kind = np.full(len(df), C)
                else:
                    kind = np.full(len(df), M)
                sub.append(pd.DataFrame({"pid": df["pid"], "device_id": df["device_id"],
                                         "s": df["start_ns"].astype(np.int64),
                                         "e": df["end_ns"].astype(np.int64),
                                         "k": kind.astype(np.uint8),
                                         "kernel": table == "kernels",
                                         "name_id": df["name_id"] if table == "kernels"
                                         else 0}))
            ops = pd.concat(sub, ignore_index=True)
            for (pid, dev), o in ops.groupby(["pid", "device_id"], sort=False):
                g = group(int(pid))
                g["active"] = True
                gpu = gpu_of.get((int(pid), int(dev)), f"{path}:{pid}:{dev}")
                b = g["sets"].get(gpu)
                if b is None:
                    b = g["sets"][gpu] = Busy(g["steps"])
                s, e, k = o["s"].to_numpy(), o["e"].to_numpy(), o["k"].to_numpy()
                b.add(s, e, k)
                b.merge(KEEP)
                ko = o[o["kernel"].to_numpy()]
                if len(ko):
                    g["kernels"] += len(ko)
                    dur = np.maximum(ko["e"].to_numpy() - ko["s"].to_numpy(), 0)
                    agg = pd.DataFrame({"n": ko["name_id"].to_numpy(), "d": dur}).groupby(
                        "n")["d"].agg(["sum", "count", "min", "max"])
                    sq = pd.Series(dur.astype(object) ** 2, index=ko["name_id"].to_numpy())
                    sq = sq.groupby(level=0).sum()
                    hk = pd.DataFrame({"n": ko["name_id"].to_numpy(), "k": hist_keys(dur)})
                    hists = {}
                    for (nid, key), cnt in hk.groupby(["n", "k"]).size().items():
                        hists.setdefault(nid, {})[int(key)] = int(cnt)
                    for nid, r in agg.iterrows():
                        name = t.string(nid)
                        cur = g["names"].get(name)
                        v = [int(r["sum"]), int(r["count"]), int(r["min"]), int(r["max"]),
                             int(sq[nid]), hists[nid]]
                        g["names"][name] = v if cur is None else _names_merge(cur, v)
        for part in t.read(["api", "nvtx"], rows=rows, strings="ids"):
            for df in part.values():
                for pid in np.unique(df["pid"]):
                    group(int(pid))["active"] = True
        # the worker's peak memory so far (Linux: KiB), for bench/scale.sh
        out = {"path": path, "span_ns": t.span_ns, "family": fam, "groups": {},
               "worker": os.getpid(),
               "peak_rss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}
        for key, g in groups.items():
            if not g["active"]:
                continue
            sets = [b.totals() for b in g["sets"].values()]
            wsum = None
            for b in g["sets"].values():
                wsum = b.wsum if wsum is None else wsum + b.wsum
            steps_out = None
            if g["steps"] is not None:
                steps_out = {"numbers": g["step_numbers"], "windows": g["steps"],
                             "work": wsum if wsum is not None else
                             np.zeros((len(g["steps"]), 4), np.int64)}
            out["groups"][key] = {"rank": g["rank"], "pid": g["pid"], "host": g["host"],
                                  "kernels": g["kernels"], "names": g["names"],
                                  "sets": sets, "steps": steps_out}
        return out


# ---- reducers ----

def _pct(part, whole):
    return "" if not whole else f"{100.0 * part / whole:.2f}"


def _combine(results):
    """Groups across traces, in the CLI's order: by rank, then by host and pid."""
    groups = {}
    for res in results:
        for key, g in res["groups"].items():
            cur = groups.get(key)
            if cur is None:
                cur = groups[key] = {"rank": g["rank"], "pid": g["pid"], "host": g["host"],
                                     "kernels": 0, "names": {}, "gpus": 0,
                                     "by_mask": [0] * 8, "span_ns": 0, "late_ns": 0,
                                     "steps": None}
            cur["kernels"] += g["kernels"]
            for name, v in g["names"].items():
                c = cur["names"].get(name)
                cur["names"][name] = v if c is None else _names_merge(c, v)
            for s in g["sets"]:
                cur["gpus"] += 1
                cur["span_ns"] += s["span_ns"]
                cur["late_ns"] += s["late_ns"]
                cur["by_mask"] = [a + b for a, b in zip(cur["by_mask"], s["by_mask"])]
            if cur["steps"] is None and g["steps"] is not None:
                cur["steps"] = g["steps"]

    def order(item):
        g = item[1]
        return (0 if g["rank"] >= 0 else 1, g["rank"] if g["rank"] >= 0 else 0, g["host"],
                g["pid"])
    return [g for _, g in sorted(groups.items(), key=order)]


def _gcols(g):
    return {"rank": g["rank"] if g["rank"] >= 0 else "", "pid": g["pid"], "host": g["host"]}


def _busy(g):
    bm = g["by_mask"]
    compute = sum(bm[m] for m in range(1, 8) if m & C)
    comm = sum(bm[m] for m in range(1, 8) if m & N and not m & C)
    comm_all = sum(bm[m] for m in range(1, 8) if m & N)
    overlap = sum(bm[m] for m in range(1, 8) if m & C and m & N)
    anyt = sum(bm[1:])
    idle = g["span_ns"] - anyt if g["span_ns"] > anyt else 0
    return compute, comm, bm[M], idle, overlap, comm_all


def reduce_breakdown(results):
    rows = []
    for g in _combine(results):
        compute, comm, memory, idle, overlap, comm_all = _busy(g)
        span = g["span_ns"]
        rows.append({**_gcols(g), "gpus": g["gpus"], "active_ns": span,
                     "compute_ns": compute, "compute_pct": _pct(compute, span),
                     "comm_ns": comm, "comm_pct": _pct(comm, span),
                     "memory_ns": memory, "memory_pct": _pct(memory, span),
                     "idle_ns": idle, "idle_pct": _pct(idle, span),
                     "comm_overlap_pct": _pct(overlap, comm_all), "comm_all_ns": comm_all,
                     "kernels": g["kernels"], "late_ns": g["late_ns"]})
    return pd.DataFrame(rows)


def reduce_kernels(results):
    rows = []
    for g in _combine(results):
        total = sum(v[0] for v in g["names"].values())
        for name, (tot, n, lo, hi, sq, h) in sorted(g["names"].items(),
                                                     key=lambda kv: (-kv[1][0], kv[0] or "")):
            var = (sq - tot * tot / n) / (n - 1) if n > 1 else 0.0
            rows.append({**_gcols(g), "time_pct": _pct(tot, total), "total_ns": tot,
                         "instances": n, "avg_ns": f"{tot / n:.1f}",
                         "median_ns": f"{hist_median(h, n, lo, hi):.1f}", "min_ns": lo,
                         "max_ns": hi, "stddev_ns": f"{math.sqrt(max(var, 0.0)):.1f}",
                         "p99_ns": hist_p99(h, n, lo, hi),
                         "name": name if name is not None else ""})
    return pd.DataFrame(rows)


def _median_without(v, skip):
    m = len(v) - 1
    lo, hi = (m - 1) // 2, m // 2
    a = v[lo + 1 if lo >= skip else lo]
    b = v[hi + 1 if hi >= skip else hi]
    return a // 2 + b // 2 + (a % 2 + b % 2) // 2


def reduce_steps(results, min_lag_pct=MIN_LAG_PCT):
    """(steps, step_ranks, stragglers) as rankstats-steps.c compares them."""
    groups = _combine(results)
    entries = []
    for gi, g in enumerate(groups):
        st = g["steps"]
        if st is None:
            continue
        seen = set()
        for j in np.argsort(st["numbers"], kind="stable"):
            num = int(st["numbers"][j])
            if num in seen:
                continue
            seen.add(num)
            w = st["windows"][j]
            entries.append((num, gi, int(st["work"][j][0]), int(w[1] - w[0]), j))
    entries.sort(key=lambda x: (x[0], x[1]))
    srow = {}
    for num, gi, work, dur, _ in entries:
        s = srow.setdefault(gi, {"group": gi, "slowest": 0, "most": 0, "compared": 0,
                                 "lag_ns": 0, "max_lag_ns": 0, "worst_step": -1,
                                 "steps": [], "compute": 0, "dur": 0, "n": 0})
        s["compute"] += work
        s["dur"] += dur
        s["n"] += 1
    steps, ranks = [], []
    i = 0
    while i < len(entries):
        j = i
        while j < len(entries) and entries[j][0] == entries[i][0]:
            j += 1
        run = entries[i:j]
        hi = lo = 0
        for x in range(len(run)):
            if run[x][2] > run[hi][2]:
                hi = x
            if run[x][2] < run[lo][2]:
                lo = x
        durs = [e[3] for e in run]
        row = {"step": run[0][0], "ranks": len(run), "slowest": run[hi][1],
               "slowest_compute_ns": run[hi][2], "fastest": run[lo][1],
               "fastest_compute_ns": run[lo][2], "spread_ns": run[hi][2] - run[lo][2],
               "lag_ns": 0, "lag_pct": None, "straggler": False,
               "min_duration_ns": min(durs), "max_duration_ns": max(durs)}
        if len(run) >= 2:
            works = sorted(e[2] for e in run)
            skip = 0
            while skip + 1 < len(works) and works[skip] != run[hi][2]:
                skip += 1
            median = _median_without(works, skip)
            lag = run[hi][2] - median
            row["lag_ns"] = lag
            row["lag_pct"] = 100.0 * lag / median if median else (math.inf if lag else 0.0)
            row["straggler"] = lag > 0 and row["lag_pct"] >= min_lag_pct
            s = srow[run[hi][1]]
            if lag > 0:
                s["most"] += 1
            if row["straggler"]:
                s["steps"].append(row["step"])
                s["slowest"] += 1
                s["lag_ns"] += lag
                if s["worst_step"] < 0 or lag > s["max_lag_ns"]:
                    s["max_lag_ns"], s["worst_step"] = lag, row["step"]
            for e in run:
                srow[e[1]]["compared"] += 1
        steps.append(row)
        i = j

    def gc(gi, prefix):
        g = groups[gi]
        return {f"{prefix}rank": g["rank"] if g["rank"] >= 0 else "",
                f"{prefix}pid": g["pid"]}
    step_rows = []
    for r in steps:
        lag_pct = "" if r["lag_pct"] is None or math.isinf(r["lag_pct"]) else \
            f"{r['lag_pct']:.2f}"
        step_rows.append({"step": r["step"], "ranks": r["ranks"], **gc(r["slowest"], "slowest_"),
                          "slowest_compute_ns": r["slowest_compute_ns"],
                          **gc(r["fastest"], "fastest_"),
                          "fastest_compute_ns": r["fastest_compute_ns"],
                          "spread_ns": r["spread_ns"],
                          "lag_ns": r["lag_ns"] if r["ranks"] >= 2 else "",
                          "lag_pct": lag_pct, "straggler": str(r["straggler"]).lower(),
                          "min_duration_ns": r["min_duration_ns"],
                          "max_duration_ns": r["max_duration_ns"]})
    strag = {(r["step"], r["slowest"]) for r in steps if r["straggler"]}
    for num, gi, work, dur, j in entries:
        g = groups[gi]
        w = g["steps"]["work"][j]
        rank_rows = {"step": num, **_gcols(g), "duration_ns": dur, "compute_ns": int(w[0]),
                     "memory_ns": int(w[3]), "comm_ns": int(w[1]), "overlap_ns": int(w[2]),
                     "comm_overlap_pct": _pct(int(w[2]), int(w[1])),
                     "straggler": str((num, gi) in strag).lower()}
        ranks.append(rank_rows)
    srows = sorted(srow.values(), key=lambda s: (-s["slowest"], -s["lag_ns"], -s["most"],
                                                   s["group"]))
    strag_rows = []
    for s in srows:
        g = groups[s["group"]]
        first = s["steps"][:STEP_LIST]
        text = ", ".join(str(x) for x in first)
        if s["slowest"] > len(first):
            text += f" and {s['slowest'] - len(first)} more"
        compute, comm, memory, idle, overlap, comm_all = _busy(g)
        strag_rows.append({**_gcols(g), "straggler_steps": s["slowest"], "steps": text,
                           "compared_steps": s["compared"], "lag_ns": s["lag_ns"],
                           "max_lag_ns": s["max_lag_ns"],
                           "worst_step": s["worst_step"] if s["worst_step"] >= 0 else "",
                           "most_compute_steps": s["most"],
                           "mean_compute_ns": s["compute"] // s["n"],
                           "mean_duration_ns": s["dur"] // s["n"],
                           "comm_overlap_pct": _pct(overlap, comm_all)})
    return pd.DataFrame(step_rows), pd.DataFrame(ranks), pd.DataFrame(strag_rows)


# recipe name -> (what it is, reducer returning {output name: DataFrame}, summary line)
def _r_kernels(res):
    k = reduce_kernels(res)
    ranks = k.drop_duplicates(["rank", "pid", "host"]) if len(k) else k
    return {"kernels": k}, (f"kernel-summary: {len(ranks)} ranks, {len(k)} (rank, kernel) rows, "
                            f"{int(k['instances'].sum()) if len(k) else 0} kernels")


def _r_steps(res):
    s, r, g = reduce_steps(res)
    n = int((s["straggler"] == "true").sum()) if len(s) else 0
    worst = g.iloc[0] if len(g) and g.iloc[0]["straggler_steps"] else None
    tail = (f"; rank {worst['rank']} most often the straggler ({worst['straggler_steps']} steps)"
            if worst is not None else "")
    return {"steps": s, "step_ranks": r, "stragglers": g}, \
        f"step-time: {len(s)} steps compared, {n} with a straggler{tail}"


def _r_nccl(res):
    b = reduce_breakdown(res)
    cols = ["rank", "pid", "host", "gpus", "active_ns", "comm_all_ns", "comm_ns", "comm_pct",
            "comm_overlap_pct"]
    b = b[cols] if len(b) else pd.DataFrame(columns=cols)
    tot = int(b["comm_all_ns"].sum()) if len(b) else 0
    return {"nccl": b}, f"nccl-time: {len(b)} ranks, {tot} ns of NCCL kernel time in all"


def _r_idle(res):
    b = reduce_breakdown(res)
    cols = ["rank", "pid", "host", "gpus", "active_ns", "compute_ns", "comm_ns", "memory_ns",
            "idle_ns", "idle_pct", "late_ns"]
    b = b[cols] if len(b) else pd.DataFrame(columns=cols)
    if len(b):
        w = b.loc[b["idle_ns"].idxmax()]
        return {"gpu_idle": b}, (f"gpu-idle: {len(b)} ranks; the most idle: rank {w['rank']}, "
                                 f"{w['idle_ns']} ns ({w['idle_pct']} %)")
    return {"gpu_idle": b}, "gpu-idle: no GPU activity"


RECIPES = {
    "kernel-summary": ("GPU kernels per rank: total, count, mean, median, min, max, stddev, "
                       "p99", _r_kernels),
    "step-time": ("steps per rank, slowest and fastest rank, stragglers", _r_steps),
    "nccl-time": ("NCCL kernel time per rank, exposed and overlapped", _r_nccl),
    "gpu-idle": ("GPU time per rank: compute, communication, copies, idle", _r_idle),
}


# ---- GPU time per NVTX range (exporters/analysis/nvtx-gpu.c) ----

CALLS_KEPT = 1 << 16  # launching calls kept for pairing, as GT_NVTX_GPU_CALLS
WAITING_KEPT = 1 << 16  # GPU work kept waiting for its call, as GT_NVTX_GPU_WAITING
STYLES = {0: "PushPop", 1: "StartEnd"}


def _series(v):
    """(total, avg, median, min, max, stddev) as series_of in nvtx-gpu.c, in its order of
    double arithmetic."""
    v = sorted(int(x) for x in v)
    n = len(v)
    total = sum(v)
    avg = total / n
    median = float(v[n // 2]) if n % 2 else (float(v[n // 2 - 1]) + float(v[n // 2])) / 2
    s = sq = 0.0
    for x in v:
        d = float(x) - avg
        s += d
        sq += d * d
    std = math.sqrt((sq - s * s / n) / (n - 1)) if n > 1 else 0.0
    return total, avg, median, v[0], v[-1], std


def map_nvtx_gpu(path, rows=1 << 18, lib=None):
    """The ranges of one trace projected onto the GPU: per name, the statistics of `stats -r
    nvtx-gpu`. Keeps every push/pop and same-thread start/end range (as nvtx-gpu.c does), up
    to CALLS_KEPT calls and WAITING_KEPT pieces of work, and 24 bytes per (range, operation
    it contains)."""
    with gputrace.open(path, lib) as t:
        procs = t.table("processes", strings="ids")
        ranks = sorted({int(r) for r in procs["rank"]}) if len(procs) else []
        parts = []
        totals = {"ranges": 0, "cross_thread_ranges": 0, "gpu_ops": 0, "unmatched_ops": 0}
        for part in t.read(["nvtx"], rows=rows, strings="ids"):
            n = part["nvtx"]
            n = n[(n["kind"] == 0) | (n["kind"] == 1)]
            totals["ranges"] += len(n)
            cross = (n["kind"] == 1) & (n["tid"] != n["end_tid"])
            totals["cross_thread_ranges"] += int(cross.sum())
            n = n[~cross]
            parts.append(pd.DataFrame({
                "pid": n["pid"].to_numpy(np.int64), "tid": n["tid"].to_numpy(np.int64),
                "start": n["start_ns"].to_numpy(np.int64), "end": n["end_ns"].to_numpy(np.int64),
                "kind": n["kind"].to_numpy(np.int64),
                "domain_id": n["domain_id"].to_numpy(np.int64),
                "message_id": n["message_id"].to_numpy(np.int64)}))
        ranges = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(
            columns=["pid", "tid", "start", "end", "kind", "domain_id", "message_id"])
        by_thread = {}
        for (pid, tid), rg in ranges.groupby(["pid", "tid"], sort=False):
            by_thread[(int(pid), int(tid))] = (rg.index.to_numpy(), rg["start"].to_numpy(),
                                               rg["end"].to_numpy())
        calls = pd.DataFrame({"key": np.zeros(0, np.int64), "tid": np.zeros(0, np.int64),
                              "cs": np.zeros(0, np.int64), "ce": np.zeros(0, np.int64)})
        waiting = pd.DataFrame({"key": np.zeros(0, np.int64), "s": np.zeros(0, np.int64),
                                "e": np.zeros(0, np.int64)})
        pairs = []
        for part in t.read(["api", "kernels", "memcpy", "memset", "graphs"], rows=rows,
                           strings="ids"):
            a = part.get("api")
            if a is not None:
                st = a["start_ns"].to_numpy(np.int64)
                calls = pd.concat([calls, pd.DataFrame({
                    "key": a["pid"].to_numpy(np.int64) << 32 |
                    a["correlation_id"].to_numpy(np.int64),
                    "tid": a["tid"].to_numpy(np.int64), "cs": st,
                    "ce": np.maximum(a["end_ns"].to_numpy(np.int64), st)})], ignore_index=True)
                calls = calls.drop_duplicates("key", keep="last").iloc[-CALLS_KEPT:]
            ops = [waiting]
            for tb in ("kernels", "memcpy", "memset", "graphs"):
                df = part.get(tb)
                if df is None:
                    continue
                totals["gpu_ops"] += len(df)
                corr = df["correlation_id"].to_numpy(np.int64)
                totals["unmatched_ops"] += int((corr == 0).sum())
                df = df[corr != 0]
                ops.append(pd.DataFrame({
                    "key": df["pid"].to_numpy(np.int64) << 32 |
                    df["correlation_id"].to_numpy(np.int64),
                    "s": df["start_ns"].to_numpy(np.int64),
                    "e": df["end_ns"].to_numpy(np.int64)}))
            ops = pd.concat(ops, ignore_index=True)
            m = ops.merge(calls, on="key", how="left")
            found = m["tid"].notna().to_numpy()
            waiting = ops[~found].iloc[-WAITING_KEPT:]
            totals["unmatched_ops"] += int((~found).sum()) - len(waiting)
            m = m[found]
            m = m.assign(pid=m["key"].to_numpy(np.int64) >> 32, tid=m["tid"].astype(np.int64))
            for (pid, tid), g in m.groupby(["pid", "tid"], sort=False):
                rt = by_thread.get((int(pid), int(tid)))
                if rt is None:
                    continue
                g = g.sort_values("cs", kind="stable")
                cs, ce = g["cs"].to_numpy(np.int64), g["ce"].to_numpy(np.int64)
                s, e = g["s"].to_numpy(np.int64), g["e"].to_numpy(np.int64)
                idx, rs, re_ = rt
                lo = np.searchsorted(cs, rs, side="left")
                hi = np.searchsorted(cs, re_, side="right")
                cnt = np.maximum(hi - lo, 0)
                if not cnt.sum():
                    continue
                rr = np.repeat(np.arange(len(idx)), cnt)
                off = np.arange(cnt.sum()) - np.repeat(np.cumsum(cnt) - cnt, cnt)
                oi = np.repeat(lo, cnt) + off
                ok = ce[oi] <= re_[rr]
                pairs.append(np.stack([idx[rr[ok]], s[oi[ok]], e[oi[ok]]], axis=1))
        totals["unmatched_ops"] += len(waiting)
        rows_out = []
        if pairs:
            p = pd.DataFrame(np.concatenate(pairs), columns=["i", "s", "e"])
            p = p.sort_values(["i", "s"], kind="stable")
            per = p.groupby("i").agg(ops=("s", "size"), s=("s", "min"), e=("e", "max"))
            # the union of each instance's intervals
            cm = p.groupby("i")["e"].cummax()
            prev = cm.groupby(p["i"]).shift(1)
            new = (prev.isna() | (p["s"] > prev)).to_numpy()
            seg = np.cumsum(new)
            segs = pd.DataFrame({"i": p["i"].to_numpy(), "seg": seg, "s": p["s"].to_numpy(),
                                 "e": cm.to_numpy()}).groupby("seg").agg(
                i=("i", "first"), s=("s", "first"), e=("e", "max"))
            busy = (segs["e"] - segs["s"]).clip(lower=0).groupby(segs["i"]).sum()
            per["busy"] = busy
            per = per.join(ranges, how="left")
            totals["projected_ranges"] = len(per)
            names = {}
            for r in per.itertuples():
                key = (int(r.kind), t.string(r.domain_id) if r.domain_id else None,
                       t.string(r.message_id) or "")
                x = names.setdefault(key, [[], [], 0, 0])
                x[0].append(max(int(r.e) - int(r.s), 0))
                x[1].append(int(r.busy))
                x[2] += max(int(r.end) - int(r.start), 0)
                x[3] += int(r.ops)
            for (kind, dom, msg), (proj, busy_v, rng, nops) in names.items():
                ps, bs = _series(proj), _series(busy_v)
                rows_out.append({"proj_total_ns": ps[0], "instances": len(proj),
                                 "proj_avg_ns": f"{ps[1]:.1f}", "proj_median_ns": f"{ps[2]:.1f}",
                                 "proj_min_ns": ps[3], "proj_max_ns": ps[4],
                                 "proj_stddev_ns": f"{ps[5]:.1f}", "busy_total_ns": bs[0],
                                 "busy_avg_ns": f"{bs[1]:.1f}", "busy_median_ns": f"{bs[2]:.1f}",
                                 "busy_min_ns": bs[3], "busy_max_ns": bs[4],
                                 "busy_stddev_ns": f"{bs[5]:.1f}", "range_total_ns": rng,
                                 "gpu_ops": nops, "style": STYLES[kind], "domain": dom or "",
                                 "range": msg, "_kind": kind, "_dom": dom})
        # most projected time first; then style, the default domain first, domain, message
        rows_out.sort(key=lambda r: (-r["proj_total_ns"], r["_kind"], r["_dom"] is not None,
                                     (r["_dom"] or "").encode(), r["range"].encode()))
        for r in rows_out:
            del r["_kind"], r["_dom"]
        return {"path": path, "rank": ranks[0] if len(ranks) == 1 else None,
                "rows": rows_out, "totals": totals, "worker": os.getpid(),
                "peak_rss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}


def reduce_nvtx_gpu(results):
    rows = []
    for res in sorted(results, key=lambda r: (r["rank"] is None, r["rank"] or 0, r["path"])):
        for r in res["rows"]:
            rows.append({"trace": res["path"], "rank": "" if res["rank"] is None else
                         res["rank"], **r})
    return pd.DataFrame(rows)


def _r_nvtx_gpu(res):
    d = reduce_nvtx_gpu(res)
    ops = sum(r["totals"]["gpu_ops"] for r in res)
    un = sum(r["totals"]["unmatched_ops"] for r in res)
    return {"nvtx_gpu": d}, (f"nvtx-gpu: {len(d)} (trace, range name) rows over "
                             f"{len(res)} traces; {ops} GPU operations, {un} unmatched")


RECIPES["nvtx-gpu"] = ("GPU time per NVTX range, per trace (stats -r nvtx-gpu)", _r_nvtx_gpu)
MAPPERS = {"nvtx-gpu": map_nvtx_gpu}
