#!/bin/sh
# The Parquet export's speed on one core: a synthetic training-loop trace of RECORDS records
# (bench-sqlite's, tests/trace-synth.h, kept with --keep; its SQLite figures printed too),
# exported with `gputrace export -f parquet` under /usr/bin/time -v: rows, CPU seconds,
# rows per CPU second and peak RSS (docs/performance.md, "Parquet export").
# Usage: bench/parquet.sh BUILD_DIR [RECORDS]   (default 10000000)
set -eu
b=$1
n=${2:-10000000}
d=$(mktemp -d /tmp/bench-parquet-XXXXXX)
trap 'rm -rf "$d"' EXIT
echo "== SQLite export (bench-sqlite $n)"
"$b/bench/bench-sqlite" "$n" --keep "$d"
echo "== Parquet export"
/usr/bin/time -v taskset -c 0 "$b/cli/gputrace" export -f parquet -o "$d/bench.parquet" \
	"$d/bench.gtrace" 2>"$d/time" >/dev/null || { cat "$d/time"; exit 1; }
rows=$(sed -n 's/.*wrote [0-9]* files (\([0-9,]*\) events.*/\1/p' "$d/time" | tr -d ,)
user=$(sed -n 's/.*User time (seconds): //p' "$d/time")
sys=$(sed -n 's/.*System time (seconds): //p' "$d/time")
rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$d/time")
du=$(du -sk "$d/bench.parquet" | cut -f1)
awk -v r="$rows" -v u="$user" -v s="$sys" -v m="$rss" -v k="$du" 'BEGIN {
	printf "rows %d, %.1f MB on disk\n", r, k / 1024
	printf "CPU %.2f s (user %.2f, sys %.2f): %.2f M rows/s\n", u + s, u, s, r / (u + s) / 1e6
	printf "peak RSS %.1f MiB\n", m / 1024 }'
