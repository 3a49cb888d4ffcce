#!/bin/bash
# Records lost against the latency of each write to the trace file, before and after the
# writer's queue (docs/performance.md, "Slow disks"). A steady NVTX producer
# (bench/bench-stream: RATE push+pop pairs a second for SECONDS s, no CUDA) is traced with
# every write(), writev() and fsync() on a regular file delayed by 0, 10, 50 and 200 ms
# (bench/slow-write.c, preloaded: pipes, sockets and eventfds are not slowed), with
# --write-queue 0 (the drain writes each chunk itself: gputrace before the queue) and with the
# default queue; under `gputrace run` and standalone (GPUTRACE_WRITE_QUEUE). Prints, per
# setting, the records lost in each round (ring_full, from `gputrace info`) and how long the
# run took; the load average at the start and at the end.
# WL_RING sets the ring (--buffer-size, GPUTRACE_BUFFER_SIZE; default 32M, gputrace's default):
# a smaller ring absorbs less of a stalled drain.
# Usage: [WL_RING=SIZE] bench/write-latency.sh BUILD [ROUNDS [RATE [SECONDS]]]
#        (default 3 rounds, 500000 pairs/s, 4 s)
set -eu
build=$(realpath "$1")
rounds=${2:-3}
rate=${3:-500000}
secs=${4:-4}
ring=${WL_RING:-32M}
gputrace=$build/cli/gputrace
lib=$build/collectors/libgputrace-inject.so
slow=$build/bench/libgt-slow-write.so
stream=$build/bench/bench-stream
for f in "$gputrace" "$lib" "$slow" "$stream"; do
	[ -e "$f" ] || { echo "write-latency: $f is missing; build $build first" >&2; exit 1; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

lost() { # TRACE: ring_full losses (0 when none)
	"$gputrace" info "$1" | awk '$1 == "ring_full" {n = $2} END {print n + 0}'
}

echo "# $(date -u +%FT%TZ) $(uname -n), $(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg); $rate pairs/s for $secs s = $(awk "BEGIN {print $rate * $secs}") NVTX records; ring $ring"
printf '%-10s %-8s %-6s %s\n' mode queue "ms" "lost per round (seconds)"
for mode in run standalone; do
	for q in 0 64M; do
		for ms in 0 10 50 200; do
			line=""
			for _ in $(seq "$rounds"); do
				rm -f "$tmp"/t.gtrace*
				t0=$(date +%s.%N)
				if [ "$mode" = run ]; then
					LD_PRELOAD=$slow GT_SLOW_WRITE_MS=$ms "$gputrace" run -q -f \
						-o "$tmp/t" --buffer-size "$ring" --write-queue "$q" -- \
						"$stream" "$rate" "$secs" >/dev/null 2>&1 || true
				else
					LD_PRELOAD=$slow GT_SLOW_WRITE_MS=$ms NVTX_INJECTION64_PATH=$lib \
						GPUTRACE_OUTPUT="$tmp/t.gtrace" GPUTRACE_WRITE_QUEUE=$q \
						GPUTRACE_BUFFER_SIZE=$ring "$stream" "$rate" "$secs" >/dev/null
				fi
				t1=$(date +%s.%N)
				line="$line $(lost "$tmp/t.gtrace") ($(printf '%.1f' "$(echo "$t1 - $t0" | bc)"))"
			done
			printf '%-10s %-8s %-6s%s\n' "$mode" "$q" "$ms" "$line"
		done
	done
done
echo "# done $(date -u +%FT%TZ), load $(cut -d' ' -f1 /proc/loadavg)"
