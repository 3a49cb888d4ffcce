#!/bin/sh
# Two ranks' traces exported to one folder of hive partitions and read by DuckDB
# (tests/parquet-hive.mjs) as one table with a rank column: per rank the kernels and their GPU
# time equal `gputrace stats --by rank` (292 and 412 kernels on tests/data's ddp-rank0 and
# ddp-rank1). Skips (77) without node or without @duckdb/node-api in the folder
# GPUTRACE_DUCKDB_NODE names (.ci/run installs it).
# Usage: parquet-hive-duckdb.sh GPUTRACE DATA_DIR
set -eu
G=$1
D=$2
here=$(dirname "$0")
if [ -z "${GPUTRACE_DUCKDB_NODE:-}" ] || [ ! -d "$GPUTRACE_DUCKDB_NODE/@duckdb/node-api" ]; then
	echo "SKIP: @duckdb/node-api not found (GPUTRACE_DUCKDB_NODE=${GPUTRACE_DUCKDB_NODE:-})"
	exit 77
fi
command -v node >/dev/null || { echo "SKIP: no node"; exit 77; }
d=$(mktemp -d /tmp/gt-pqhived-XXXXXX)
trap 'rm -rf "$d"' EXIT
"$G" export -q "$D/ddp-rank0.gtrace" "$D/ddp-rank1.gtrace" -f parquet -o "$d/job"
node "$here/parquet-hive.mjs" "$d/job" >"$d/got"
# stats' kernels section: per rank the instances and total_ns summed over kernel names
"$G" stats --by rank -r kernels -f csv "$D/ddp-rank0.gtrace" "$D/ddp-rank1.gtrace" |
	tr -d '\r' | awk -F, '/^# /{s=$0; next}
		s=="# kernels" && $6 ~ /^[0-9]+$/ {n[$1]+=$6; t[$1]+=$5}
		END{for (r in n) printf "kernels,%s,%d,%d\n", r, n[r], t[r]}' | sort >"$d/want"
printf 'rank-type,BIGINT\ntotal,704\n' >>"$d/want"
if ! diff "$d/want" "$d/got"; then
	echo "FAIL: DuckDB over the partitions (>) differs from stats --by rank (<)"
	exit 1
fi
grep -qx 'kernels,0,292,.*' "$d/got" && grep -qx 'kernels,1,412,.*' "$d/got" ||
	{ echo "FAIL: not 292 and 412 kernels"; exit 1; }
echo "ok: $(grep -c '^kernels' "$d/got") ranks, 704 kernels"
