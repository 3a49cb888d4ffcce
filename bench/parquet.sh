#!/bin/sh
# The Parquet export's speed on one core: a synthetic training-loop trace of RECORDS records
# (bench-sqlite's, tests/trace-synth.h, kept with --keep; its SQLite figures printed too),
# exported with `gputrace export -f parquet` pinned to one core: rows, CPU seconds (user +
# system), rows per CPU second and peak RSS per round, then the mean over the rounds
# (docs/performance.md, "Parquet export").
# Usage: bench/parquet.sh BUILD_DIR [RECORDS [ROUNDS [OTHER_BUILD_DIR]]]
#   RECORDS  default 10000000; ROUNDS default 1
#   OTHER_BUILD_DIR  a second build (another commit's) exported in the same rounds,
#                    alternated with the first: an A/B on the same trace and the same load
#   PARQUET_TRACE    export this trace instead of writing one (RECORDS then unused)
#   PARQUET_CPU      the core to pin to, default 0
set -eu
b=$1
n=${2:-10000000}
rounds=${3:-1}
other=${4:-}
cpu=${PARQUET_CPU:-0}
d=$(mktemp -d /tmp/bench-parquet-XXXXXX)
trap 'rm -rf "$d"' EXIT
if [ -n "${PARQUET_TRACE:-}" ]; then
	trace=$PARQUET_TRACE
else
	echo "== SQLite export (bench-sqlite $n)"
	"$b/bench/bench-sqlite" "$n" --keep "$d"
	rm -f "$d/bench.sqlite"
	trace=$d/bench.gtrace
fi
echo "== Parquet export of $trace, core $cpu, $rounds round(s)"
one() { # one() NAME BUILD: one export, one line of figures
	rm -rf "$d/bench.parquet"
	/usr/bin/time -v taskset -c "$cpu" "$2/cli/gputrace" export -f parquet \
		-o "$d/bench.parquet" "$trace" 2>"$d/time" >/dev/null || { cat "$d/time"; exit 1; }
	rows=$(sed -n 's/.*wrote [0-9]* files (\([0-9,]*\) events.*/\1/p' "$d/time" | tr -d ,)
	user=$(sed -n 's/.*User time (seconds): //p' "$d/time")
	sys=$(sed -n 's/.*System time (seconds): //p' "$d/time")
	rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$d/time")
	du=$(du -sk "$d/bench.parquet" | cut -f1)
	awk -v t="$1" -v r="$rows" -v u="$user" -v s="$sys" -v m="$rss" -v k="$du" 'BEGIN {
		printf "%s rows %d, %.1f MB on disk, CPU %.2f s (user %.2f, sys %.2f): %.2f M rows/s, peak RSS %.1f MiB\n",
			t, r, k / 1024, u + s, u, s, r / (u + s) / 1e6, m / 1024 }' | tee -a "$d/rounds"
}
i=0
while [ "$i" -lt "$rounds" ]; do
	one A "$b"
	[ -z "$other" ] || one B "$other"
	i=$((i + 1))
done
# the mean over the rounds: rows over the mean CPU time (what a user waits for)
awk '{ r[$1] = $3 + 0; n[$1]++
	for (j = 1; j <= NF; j++) if ($j == "CPU") c[$1] += $(j + 1) }
	END { for (t in n) printf "%s: mean %.3f s CPU over %d rounds: %.2f M rows/s\n", t,
		c[t] / n[t], n[t], r[t] / (c[t] / n[t]) / 1e6 }' "$d/rounds" | sort
