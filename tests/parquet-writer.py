#!/usr/bin/env python3
"""The Parquet writer's paths read back by DuckDB (docs/sql.md, "Parquet"): tests/pq-write.c
writes 200,000 rows of 15 patterns in row groups of 150,000 rows (constant, set once by pq_const, runs across pages,
runs of nulls, columns turning from runs to plain, dictionaries, DELTA_BINARY_PACKED with
wraps modulo 2^64, doubles, strings; some rows a value at a time); DuckDB
(tests/parquet-writer.mjs) must give back every value exactly, each chunk's encoding, min/max
and null count, and a chunk that ZSTD did not shrink stored UNCOMPRESSED the next time. Skips (77) without node or @duckdb/node-api. Usage: parquet-writer.py PQ_WRITE"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

I64_MIN, I64_MAX = -(1 << 63), (1 << 63) - 1
ROWS, RG = 200000, 150000

node_dir = os.environ.get("GPUTRACE_DUCKDB_NODE", "")
if not node_dir or not os.path.isdir(os.path.join(node_dir, "@duckdb/node-api")) \
        or not shutil.which("node"):
    print("SKIP: node or @duckdb/node-api not found")
    sys.exit(77)


def mix(i):
    """pq-write.c's mix(): splitmix64's finalizer of i + 1."""
    m = (1 << 64) - 1
    z = (i + 1) * 0x9e3779b97f4a7c15 & m
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9 & m
    z = (z ^ (z >> 27)) * 0x94d049bb133111eb & m
    return z ^ (z >> 31)


def row(i):
    """Row i as pq-write.c makes it: ints as decimal strings (DuckDB's JSON), None for NULL."""
    s = str
    return [s(i), "42", s(i // 1000), s(i // 10 * 1000003),
            None if (i // 5000) % 3 == 0 else s(i // 7000),
            None if i % 3 == 0 else s(i % 5),
            s(I64_MAX - i if i % 2 else I64_MIN + i),
            None if i % 100000 < 50 else (i // 3000) * 0.5,
            i * 0.25,
            None if (i // 20000) % 2 else f"name-{i // 9000}",
            f"k{i % 3}",
            s(-(mix(i) >> 1)),
            None if i < 140000 else s(i),
            None, "7"]


COLS = ["id", "one", "runs", "many_runs", "opt_runs", "alt", "big", "d_runs", "d_plain",
        "s_runs", "s_alt", "negs", "late", "c_null", "c_seven"]
# the encoding of each column's values in row group 0
ENC = {"id": "DELTA_BINARY_PACKED", "one": "RLE_DICTIONARY", "runs": "RLE_DICTIONARY",
       "many_runs": "DELTA_BINARY_PACKED", "opt_runs": "RLE_DICTIONARY",
       "alt": "RLE_DICTIONARY", "big": "DELTA_BINARY_PACKED", "d_runs": None,
       "d_plain": None, "s_runs": "RLE_DICTIONARY", "s_alt": "RLE_DICTIONARY",
       "negs": "DELTA_BINARY_PACKED", "late": "DELTA_BINARY_PACKED", "c_null": None,
       "c_seven": "RLE_DICTIONARY"}

d = tempfile.mkdtemp(prefix="gt-pqw-")
fails = 0
try:
    f = f"{d}/w.parquet"
    subprocess.run([sys.argv[1], f], check=True)
    subprocess.run(["node", os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                         "parquet-writer.mjs"), f, f"{d}/rows.json",
                    f"{d}/meta.json"], check=True)
    rows = json.load(open(f"{d}/rows.json"))
    meta = json.load(open(f"{d}/meta.json"))
    if len(rows) != ROWS:
        print(f"FAIL: {len(rows)} rows, want {ROWS}")
        sys.exit(1)
    for i, got in enumerate(rows):
        want = row(i)
        if got != want:
            for c, (g, w) in enumerate(zip(got, want)):
                if g != w and fails < 20:
                    print(f"FAIL: row {i} {COLS[c]}: {g!r}, want {w!r}")
                    fails += 1
    # each chunk of row group 0: its encoding, least and greatest value, nulls
    want_rows = [row(i) for i in range(RG)]
    for m in meta:
        if int(m["row_group_id"]) != 0:
            continue
        c = m["path_in_schema"]
        k = COLS.index(c)
        vals = [r[k] for r in want_rows if r[k] is not None]
        nulls = RG - len(vals)
        enc = ENC[c]
        if enc and enc not in m["encodings"] or not enc and (
                "DELTA" in m["encodings"] or "DICTIONARY" in m["encodings"]):
            print(f"FAIL: {c}: encodings {m['encodings']}, want {enc or 'PLAIN'}")
            fails += 1
        if int(m["stats_null_count"]) != nulls:
            print(f"FAIL: {c}: null count {m['stats_null_count']}, want {nulls}")
            fails += 1
        if not vals:  # nulls only: no min/max
            if m["stats_min_value"] is not None or m["stats_max_value"] is not None:
                print(f"FAIL: {c}: min/max {m['stats_min_value']}/{m['stats_max_value']}, "
                      "want none")
                fails += 1
            continue
        if c.startswith("s_"):
            lo, hi = min(vals), max(vals)
        elif isinstance(vals[0], float):
            lo, hi = min(vals), max(vals)
            m["stats_min_value"] = float(m["stats_min_value"])
            m["stats_max_value"] = float(m["stats_max_value"])
        else:
            lo, hi = str(min(int(v) for v in vals)), str(max(int(v) for v in vals))
        if (m["stats_min_value"], m["stats_max_value"]) != (lo, hi):
            print(f"FAIL: {c}: min/max {m['stats_min_value']}/{m['stats_max_value']}, "
                  f"want {lo}/{hi}")
            fails += 1
    # ZSTD gains nothing on negs' deltas (pseudo-random): its next chunk is stored as it is
    codecs = {(int(m["row_group_id"]), m["path_in_schema"]): m["compression"] for m in meta}
    for key, want in (((0, "negs"), "ZSTD"), ((1, "negs"), "UNCOMPRESSED"),
                      ((1, "runs"), "ZSTD")):
        if codecs.get(key) != want:
            print(f"FAIL: {key[1]} in row group {key[0]}: {codecs.get(key)}, want {want}")
            fails += 1
    n_rg = len({m["row_group_id"] for m in meta})
    if n_rg != 2:
        print(f"FAIL: {n_rg} row groups, want 2")
        fails += 1
finally:
    shutil.rmtree(d)
if fails:
    sys.exit(1)
print(f"PASS: {ROWS} rows of {len(COLS)} columns read back by DuckDB, every value, "
      "encoding, min/max and null count as written")
