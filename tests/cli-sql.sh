#!/usr/bin/env bash
# CLI test for `gputrace sql` and `gputrace export -f sqlite` (cli/cmd-sql.c): the first use
# exports and later ones reuse, --rebuild, formats, a rejected query (exit 65, SQLite's
# message and a caret), no query (the sqlite3 shell, or the table list), kernel totals equal
# `gputrace stats -f csv`, truncated and unreadable traces. Usage: cli-sql.sh gputrace mktrace
set -u
gputrace=$(realpath "$1")
mktrace=$(realpath "$2")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=cli-common.sh
. "$(dirname "$0")/cli-common.sh"
cd "$tmp" || exit 1

"$mktrace" -o run.gtrace --kernels 3000 --names 40 --processes 2 --api --memcpy --losses 5 \
	>/dev/null || { echo "FAIL: mktrace" >&2; exit 1; }

# ---- usage ----
expect_rc 0 "$gputrace" sql --help
[ "$(head -n 1 "$tmp/out")" = "Usage: gputrace sql TRACE [QUERY...]" ] ||
	fail "sql --help: $(head -n 1 "$tmp/out")"
expect_rc 64 "$gputrace" sql
expect_err "gputrace: sql: no trace file; usage: gputrace sql TRACE [QUERY...]"
expect_rc 64 "$gputrace" sql run.gtrace -f xml "SELECT 1"
expect_err "gputrace: sql: -f: 'xml' is not valid; use table, csv or json"
expect_rc 66 "$gputrace" sql missing.gtrace "SELECT 1"
expect_err "gputrace: sql: missing.gtrace: No such file or directory"
echo "not a trace" >bogus.gtrace
expect_rc 65 "$gputrace" sql bogus.gtrace "SELECT 1"
err_matches '^gputrace: sql: cannot read bogus\.gtrace: .+$'
[ ! -e bogus.sqlite ] || fail "a database was left for an unreadable trace"
ls ./*.tmp-* >/dev/null 2>&1 && fail "a temporary file was left: $(ls ./*.tmp-*)"

# ---- first use exports, the next reuses ----
expect_rc 0 "$gputrace" sql run.gtrace -f csv "SELECT count(*) AS n FROM CUPTI_ACTIVITY_KIND_KERNEL"
expect_out "$(printf 'n\r\n3000\r')"
err_matches '^gputrace: wrote run\.sqlite \([0-9,]+ rows, .+\)$'
[ -f run.sqlite ] || fail "no run.sqlite after the first use"
inode=$(stat -c %i run.sqlite)
expect_rc 0 "$gputrace" sql run.gtrace "SELECT count(*) AS n FROM CUPTI_ACTIVITY_KIND_KERNEL"
expect_err ""
expect_out "$(printf '   n\n----\n3000\n(1 row)')"
[ "$(stat -c %i run.sqlite)" = "$inode" ] || fail "an up-to-date database was exported again"
expect_rc 0 "$gputrace" sql run.gtrace --rebuild -q "SELECT 1"
expect_err ""
[ "$(stat -c %i run.sqlite)" != "$inode" ] || fail "--rebuild did not export again"
inode=$(stat -c %i run.sqlite)
touch -d '+1 hour' run.gtrace
expect_rc 0 "$gputrace" sql run.gtrace -q "SELECT 1"
[ "$(stat -c %i run.sqlite)" != "$inode" ] || fail "a trace newer than its database was not exported"
touch -d '-1 hour' run.gtrace
# a database given directly, and --db
expect_rc 0 "$gputrace" sql run.sqlite -f json "SELECT count(*) AS n FROM GPUTRACE_RANKS"
expect_out "$(printf '[\n{"n":2}\n]')"
expect_rc 0 "$gputrace" sql run.gtrace --db other.sqlite -q -f csv "SELECT value FROM META_DATA_EXPORT WHERE name = 'EXPORT_PRODUCT_NAME'"
expect_out "$(printf 'value\r\ngputrace\r')"
expect_rc 64 "$gputrace" sql run.sqlite --rebuild "SELECT 1"

# ---- the issue's query: one row per launched kernel ----
expect_rc 0 "$gputrace" sql run.gtrace -f csv "SELECT count(*) FROM (SELECT r.start, r.globalTid, k.start, k.end - k.start, s.value FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN CUPTI_ACTIVITY_KIND_KERNEL k ON r.correlationId = k.correlationId JOIN StringIds s ON s.id = k.shortName)"
[ "$(sed -n 2p "$tmp/out" | tr -d '\r')" = 3000 ] || fail "the launch join gave $(cat "$tmp/out")"

# ---- kernel totals equal gputrace stats -f csv, to the nanosecond ----
# total_ns, instances and name of each row, through Python's csv module (names hold commas)
csv_cols() {
	python3 -c 'import csv, sys
rows = [r for r in csv.reader(sys.stdin) if len(r) >= 3 and not r[0].startswith("#")]
for r in rows[1:]:
    print(*(r[int(i)] for i in sys.argv[1:]), sep="|")' "$@" | sort
}
"$gputrace" stats run.gtrace -f csv -r kernels --mangled | csv_cols 1 2 9 >stats.txt
"$gputrace" sql run.gtrace -q -f csv "SELECT sum(k.end - k.start), count(*), s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.mangledName GROUP BY k.mangledName" |
	csv_cols 0 1 2 >sql.txt
[ "$(wc -l <stats.txt)" -eq 40 ] || fail "stats listed $(wc -l <stats.txt) kernels, expected 40"
cmp -s stats.txt sql.txt || fail "kernel totals differ: $(diff stats.txt sql.txt | head -5)"

# ---- a query SQLite rejects: 65, its message, where ----
expect_rc 65 "$gputrace" sql run.gtrace "SELECT count(*)
FROM CUPTI_ACTIVITY_KIND_KERNEL WHER x"
expect_err "$(printf '%s\n%s\n%s\n%s' 'gputrace: sql: near "x": syntax error' \
	'gputrace: at line 2, column 38 (byte 53) of the query:' \
	'  FROM CUPTI_ACTIVITY_KIND_KERNEL WHER x' \
	'                                       ^')"
expect_rc 65 "$gputrace" sql run.gtrace "SELECT * FROM nope"
expect_err "gputrace: sql: no such table: nope"

# ---- no query: the sqlite3 shell if there is one, else the tables ----
mkdir bin
printf '#!/bin/sh\necho "fake sqlite3 $*"\n' >bin/sqlite3
chmod +x bin/sqlite3
PATH=$tmp/bin:$PATH expect_rc 0 "$gputrace" sql run.gtrace
expect_out "fake sqlite3 run.sqlite"
PATH=/nonexistent expect_rc 0 "$gputrace" sql run.gtrace -f csv
out_has_line "$(printf 'CUPTI_ACTIVITY_KIND_KERNEL,3000\r')"
out_has_line "$(printf 'GPUTRACE_LOSSES,2\r')"
out_has_line "$(printf 'CUPTI_ACTIVITY_KIND_GRAPH_TRACE,0\r')"

# ---- export -f sqlite; a trace cut short still exports, with a warning ----
expect_rc 0 "$gputrace" export run.gtrace -f sqlite -o exported.sqlite
err_matches '^gputrace: wrote exported\.sqlite \([0-9,]+ events, .+\)$'
expect_rc 64 "$gputrace" export run.gtrace -f sqlite -o -
expect_err "gputrace: export: a SQLite database is a file: give it a name with -o"
"$mktrace" -o cut.gtrace --kernels 20000 --api --chunk-bytes 16384 >/dev/null
truncate -s $(($(stat -c %s cut.gtrace) / 2)) cut.gtrace
# the query runs on what could be read; the exit status says a chunk was lost
expect_rc 65 "$gputrace" sql cut.gtrace -f csv "SELECT count, unit FROM GPUTRACE_LOSSES WHERE sourceName = 'damaged_file'"
err_matches "^gputrace: warning: sql: cut.gtrace is damaged: 1 chunk \([0-9]+ bytes\) and 0 malformed records skipped$"
err_matches "^gputrace: warning: sql: cut.gtrace has no index \(its writer was interrupted\): [0-9]+ chunks recovered$"
out_has_line "$(printf '1,chunks\r')"

# A cached database is reused only when it records that it is an export of this very trace
# and window: an export of one step is not the whole trace's
data=$(cd "$(dirname "$0")/data" && pwd)
cp "$data/pytorch-train.gtrace" pt.gtrace
expect_rc 0 "$gputrace" export pt.gtrace -f sqlite --nvtx step:3 -q
expect_rc 0 "$gputrace" sql pt.gtrace -f csv "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL"
out_has_line "$(printf '424\r')"
# 1,973 rows for its records and tables, and 30 for the ranges it projects
err_matches '^gputrace: wrote pt\.sqlite \(2,003 rows, .+\)$'
expect_rc 0 "$gputrace" sql pt.gtrace -f csv "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL"
out_has_line "$(printf '424\r')"
expect_err "" # reused: nothing exported again
expect_rc 0 "$gputrace" sql pt.gtrace --nvtx step:3 -f csv "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL"
out_has_line "$(printf '20\r')"
# 979 rows, and 1 for the window's one range, projected with its 11 operations
err_matches '^gputrace: wrote pt\.sqlite \(980 rows, .+\)$'
expect_rc 0 "$gputrace" sql pt.gtrace --nvtx step:3 -q -f csv "SELECT gpuOps FROM GPUTRACE_NVTX_GPU_PROJECTION"
out_has_line "$(printf '11\r')"
expect_rc 0 "$gputrace" sql pt.gtrace --nvtx step:3 -q -f csv "SELECT value FROM META_DATA_EXPORT WHERE name = 'GPUTRACE_SOURCE'"
grep -q "; window @[0-9]*\\.\\.@[0-9]*$(printf '\r')\$" "$tmp/out" || fail "GPUTRACE_SOURCE: $(cat "$tmp/out")"
expect_rc 64 "$gputrace" sql pt.gtrace --db pt.gtrace "SELECT 1"
expect_err "gputrace: sql: the output pt.gtrace is the input pt.gtrace (the same file): choose another output name"
expect_rc 64 "$gputrace" sql pt.gtrace --pid 1 "SELECT 1"
err_matches "^gputrace: sql: --pid 1: pt.gtrace has no such one; its processes: [0-9]+$"
expect_rc 64 "$gputrace" sql pt.gtrace --from 100 --db never.sqlite "SELECT 1"
expect_err "gputrace: sql: --from 100 selects nothing: it is after pt.gtrace, which runs from 2026-12-01T14:30:09.701000799Z (0.000 s) to 2026-12-01T14:30:21.254886001Z (11.554 s)"
expect_rc 64 "$gputrace" sql pt.gtrace --nvtx nosuch --db never.sqlite "SELECT 1"
expect_err "gputrace: sql: --nvtx: no NVTX range named 'nosuch' in pt.gtrace; its ranges: step (20), graph-step (10); its steps are those of the step family (20 of them; gputrace view --first-steps N finds them)"
[ ! -e never.sqlite ] || fail "a window that selects nothing made a database"

# ---- the trace's zero (docs/cli.md, "Time"): relative times as Perfetto's ruler shows them ----
# pytorch-train's eleventh step starts 10.801093719 s after the zero, where Perfetto's
# importer puts it on both exports (tests/perfetto-ruler.sh) and `export --from` counts
expect_rc 0 "$gputrace" sql pt.gtrace -q -f csv "SELECT zeroNs, startTraceNs FROM GPUTRACE_TRACE"
out_has_line "$(printf '26369932036,26369932036\r')"
expect_rc 0 "$gputrace" sql pt.gtrace -q -f csv "SELECT start - (SELECT zeroNs FROM GPUTRACE_TRACE) FROM NVTX_EVENTS WHERE text = 'step' ORDER BY start LIMIT 1 OFFSET 10"
out_has_line "$(printf '10801093719\r')"

cli_done cli-sql
