#!/bin/sh
# The Parquet export of a trace read by DuckDB (tests/parquet-duckdb.mjs): the same tables
# and row counts as the SQLite export, the kernel count of `gputrace stats`, and queries of
# docs/sql.md answered alike. Skips (77) without node or without @duckdb/node-api in the
# folder GPUTRACE_DUCKDB_NODE names (.ci/run installs it).
# Usage: parquet-duckdb.sh GPUTRACE TRACE
set -eu
G=$1
T=$2
here=$(dirname "$0")
if [ -z "${GPUTRACE_DUCKDB_NODE:-}" ] || [ ! -d "$GPUTRACE_DUCKDB_NODE/@duckdb/node-api" ]; then
	echo "SKIP: @duckdb/node-api not found (GPUTRACE_DUCKDB_NODE=${GPUTRACE_DUCKDB_NODE:-})"
	exit 77
fi
command -v node >/dev/null || { echo "SKIP: no node"; exit 77; }
d=$(mktemp -d /tmp/gt-pqduck-XXXXXX)
trap 'rm -rf "$d"' EXIT
cp "$T" "$d/in.gtrace"
"$G" export -q -f parquet -o "$d/in.parquet" "$d/in.gtrace"
"$G" sql -q --db "$d/in.sqlite" "$d/in.gtrace" "SELECT 1" >/dev/null
mkdir "$d/a"
# every table of the SQLite export with its row count, as JSON
tables=$("$G" sql -q -f csv --db "$d/in.sqlite" "$d/in.gtrace" \
	"SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'" | tr -d "\r" | tail -n +2)
sep='['
{
	for t in $tables; do
		n=$("$G" sql -q -f csv --db "$d/in.sqlite" "$d/in.gtrace" "SELECT count(*) FROM $t" |
			tr -d "\r" | tail -n 1)
		printf '%s{"table":"%s","n":%s}' "$sep" "$t" "$n"
		sep=','
	done
	echo ']'
} >"$d/a/counts.json"
"$G" stats -f csv "$d/in.gtrace" 2>/dev/null | tr -d '\r' |
	awk -F, '/^# /{s=$0; next} s=="# kernels" && $3 ~ /^[0-9]+$/ {n+=$3} END{print n+0}' \
	>"$d/a/stats-kernels"
# the queries: the first worked queries of docs/sql.md that DuckDB's SQL accepts as written
q="$here/parquet-queries.sql"
i=0
awk 'BEGIN{RS="\n;;\n"} {print > sprintf("'"$d"'/q%d.sql", NR-1)}' "$q"
while [ -f "$d/q$i.sql" ]; do
	"$G" sql -q -f json --db "$d/in.sqlite" "$d/in.gtrace" "$(cat "$d/q$i.sql")" >"$d/a/q$i.json"
	i=$((i + 1))
done
node "$here/parquet-duckdb.mjs" "$d/in.parquet" "$d/a" "$q"
