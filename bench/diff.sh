#!/usr/bin/env bash
# Benchmark of `gputrace diff` and of `gputrace stats` across ranks on large synthetic traces
# (docs/performance.md, "Diff and stats across ranks"): two traces of about 10 M records
# each (tests/mktrace: 5 M kernels with a launch API record each, 8 ranks with NCCL kernels
# and steps; NEW has one kernel name twice as slow and one renamed), then ROUNDS interleaved
# rounds of diff, and of stats --by rank over BASE, each under /usr/bin/time: wall seconds,
# CPU seconds (user + system) and peak RSS. Prints one line per run and the medians.
# Usage: bench/diff.sh BUILD_DIR [ROUNDS] [KERNELS]
set -eu
build=${1:?usage: bench/diff.sh BUILD_DIR [ROUNDS] [KERNELS]}
rounds=${2:-5}
kernels=${3:-5000000}
gputrace=$build/cli/gputrace
mktrace=$build/tests/mktrace
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

common="--kernels $kernels --names 300 --processes 8 --api --memcpy --nccl --steps --seed 1"
# shellcheck disable=SC2086
"$mktrace" -o "$tmp/base.gtrace" $common
# shellcheck disable=SC2086
"$mktrace" -o "$tmp/new.gtrace" $common --slow-name 3 --rename 5
ls -l "$tmp/base.gtrace" "$tmp/new.gtrace" | awk '{print $5, $9}'

# run NAME CMD...: one timed run, appended to $tmp/NAME
run() {
	local name=$1
	shift
	/usr/bin/time -f "%e %U %S %M" -o "$tmp/time" "$@" >/dev/null
	read -r wall user sys rss <"$tmp/time"
	cpu=$(awk "BEGIN { print $user + $sys }")
	echo "$name: wall $wall s, cpu $cpu s, peak RSS $((rss / 1024)) MiB"
	echo "$wall $cpu $rss" >>"$tmp/$name"
}

for i in $(seq "$rounds"); do
	run diff "$gputrace" diff -f csv "$tmp/base.gtrace" "$tmp/new.gtrace"
	run stats-ranks "$gputrace" stats -f csv --by rank "$tmp/base.gtrace"
	run stats "$gputrace" stats -f csv "$tmp/base.gtrace"
done

median() {
	sort -n | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'
}
for name in diff stats-ranks stats; do
	echo "$name, median of $rounds: wall $(cut -d' ' -f1 "$tmp/$name" | median) s," \
		"cpu $(cut -d' ' -f2 "$tmp/$name" | median) s," \
		"peak RSS $(($(cut -d' ' -f3 "$tmp/$name" | median | cut -d. -f1) / 1024)) MiB"
done
