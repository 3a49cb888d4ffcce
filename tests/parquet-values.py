#!/usr/bin/env python3
"""Every value of the Parquet export equal to the SQLite export's (docs/sql.md: one schema, two
containers): each table of TRACE's SQLite export read with Python's sqlite3, each of its Parquet
export read whole by DuckDB (tests/parquet-dump.mjs), the same rows (in any order), integers and
text exactly, reals to the last bit, NULLs where SQLite has them. META_DATA_EXPORT's
GPUTRACE_SOURCE row (the export's identity) is left out. With --mktrace, the trace is
tests/mktrace's, 60,000 kernels of 3 processes with their launches and copies: several row
groups, number columns with a dictionary and without. Skips (77) without node or
@duckdb/node-api. Usage: parquet-values.py GPUTRACE TRACE | GPUTRACE --mktrace MKTRACE"""
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile

g, trace = sys.argv[1], sys.argv[2]
node_dir = os.environ.get("GPUTRACE_DUCKDB_NODE", "")
if not node_dir or not os.path.isdir(os.path.join(node_dir, "@duckdb/node-api")) \
        or not shutil.which("node"):
    print("SKIP: node or @duckdb/node-api not found")
    sys.exit(77)
here = os.path.dirname(os.path.abspath(__file__))
d = tempfile.mkdtemp(prefix="gt-pqval-")
try:
    if trace == "--mktrace":
        trace = f"{d}/mk.gtrace"
        subprocess.run([sys.argv[3], "-o", trace, "--kernels", "60000", "--names", "50",
                        "--processes", "3", "--api", "--memcpy", "--steps"], check=True,
                       stdout=subprocess.DEVNULL)
    subprocess.run([g, "export", "-q", trace, "-f", "parquet", "-o", f"{d}/t.parquet"],
                   check=True)
    subprocess.run([g, "export", "-q", trace, "-f", "sqlite", "-o", f"{d}/t.sqlite"],
                   check=True)
    os.mkdir(f"{d}/json")
    subprocess.run(["node", f"{here}/parquet-dump.mjs", f"{d}/t.parquet", f"{d}/json"],
                   check=True)
    con = sqlite3.connect(f"{d}/t.sqlite")
    tables = [r[0] for r in con.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")]
    bad = values = 0
    for t in tables:
        want = con.execute(f'SELECT * FROM "{t}" ORDER BY rowid').fetchall()
        got = json.load(open(f"{d}/json/{t}.json"))
        if t == "META_DATA_EXPORT":
            want = [w for w in want if w[0] != "GPUTRACE_SOURCE"]
            got = [r for r in got if r[0] != "GPUTRACE_SOURCE"]
        if len(want) != len(got):
            print(f"{t}: SQLite {len(want)} rows, Parquet {len(got)}")
            bad += 1
            continue
        types = [r[2].split()[0].upper() if r[2] else ""
                 for r in con.execute(f'PRAGMA table_info("{t}")')]

        def norm(row):
            out = []
            for ty, v in zip(types, row):
                if v is None:
                    out.append("null")
                elif ty == "REAL":
                    out.append(repr(float(v)))
                elif ty == "INTEGER":
                    out.append(str(int(v)))
                else:
                    out.append("s:" + str(v))
            return out
        # the same rows, in any order: SQLite's batches of rows per process may reorder them
        w = sorted(norm(r) for r in want)
        r = sorted(norm(r) for r in got)
        values += sum(len(x) for x in w)
        if w != r:
            diff = next(i for i, (a, b) in enumerate(zip(w, r)) if a != b)
            print(f"{t}: first difference, sorted row {diff}: SQLite {w[diff]}, Parquet {r[diff]}")
            bad += 1
    print(f"{len(tables)} tables, {values} values compared, {bad} differ")
    sys.exit(1 if bad else 0)
finally:
    shutil.rmtree(d)
