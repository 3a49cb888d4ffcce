#!/bin/bash
# NVTX push+pop cost of several handler libraries on one machine, in interleaved rounds, with
# the machine's own floors (no CUDA needed):
#   none          no injection library: NVTX's empty calls;
#   floor-clock   a handler that only reads the TSC, twice per pair (bench/nvtx-floor.c);
#   floor-record  a handler that stamps, stacks and stores a 64-byte record, never published;
#   gputrace      BUILD's injection library (standalone: it drains its own ring);
#   gputrace-iso  the same, with the library's threads kept off the timed thread's core
#                 (BENCH_NVTX_ISOLATE): a drainer busy with the flood cannot share that core;
#   NAME=LIB      any further library, e.g. another gputrace build, for an A/B; a NAME ending
#                 in -iso runs isolated as above.
# gputrace runs with a ring that holds every record of a run (GPUTRACE_BUFFER_SIZE, 512M unless
# set): with the default ring the drainer falls behind this flood, records are dropped (and
# counted), and a dropped record costs less than one written. Each gputrace run's losses, from
# `gputrace info`, are printed; they should be 0.
# Each run prints the mean over 2,000,000 pairs, the best batch of 2,000 and one TSC read. Prints
# each round, then per configuration the median and range of the best batches and the median of
# the means, and per round each configuration's best batch over gputrace's.
# Usage: bench/nvtx-ab.sh BUILD ROUNDS [NAME=LIB ...]
set -eu
build=$(cd "${1:?usage: nvtx-ab.sh BUILD ROUNDS [NAME=LIB ...]}" && pwd)
rounds=${2:?usage: nvtx-ab.sh BUILD ROUNDS [NAME=LIB ...]}
shift 2
bench=$build/bench/bench-nvtx
floor=$build/bench/libgt-nvtx-floor.so
lib=$build/collectors/libgputrace-inject.so
names=(none floor-clock floor-record gputrace gputrace-iso)
libs=("" "$floor" "$floor" "$lib" "$lib")
for a in "$@"; do
	names+=("${a%%=*}")
	libs+=("$(cd "$(dirname "${a#*=}")" && pwd)/$(basename "${a#*=}")")
done
export GPUTRACE_BUFFER_SIZE=${GPUTRACE_BUFFER_SIZE:-512M}
log=$(mktemp)
trap 'rm -f "$log" "$log.run" /tmp/nvtx-ab.gtrace' EXIT

run() { # name lib round
	local mode=record iso=

	[ "$1" = floor-clock ] && mode=clock
	[ "${1%-iso}" != "$1" ] && iso=1
	rm -f /tmp/nvtx-ab.gtrace
	if [ -z "$2" ]; then
		"$bench"
	elif [ -n "$iso" ]; then
		BENCH_NVTX_ISOLATE=1 NVTX_INJECTION64_PATH=$2 GPUTRACE_OUTPUT=/tmp/nvtx-ab.gtrace \
			"$bench"
	else
		NVTX_FLOOR_MODE=$mode NVTX_INJECTION64_PATH=$2 GPUTRACE_OUTPUT=/tmp/nvtx-ab.gtrace \
			"$bench"
	fi >"$log.run"
	# records lost: none without a trace (no tracer), else the trace's loss total
	if [ -e /tmp/nvtx-ab.gtrace ]; then
		"$build/cli/gputrace" info /tmp/nvtx-ab.gtrace |
			awk '/^losses:/ { on = 1; next } on && /^  [a-z_]+ +[0-9]+$/ { n += $2 }
			     on && !/^  / { on = 0 } END { print "lost", n + 0 }' >>"$log.run"
	fi
	awk -v r="$3" -v n="$1" '{ v[$1] = $2; if ($1 == "isolated_cpu") v["core"] = $4 } END {
		printf "%d %s %s %s %s %s %s\n", r, n, v["nvtx_ns"], v["nvtx_best_ns"], v["rdtsc_ns"],
			v["isolated_cpu"] == "" ? "-" : "cpu" v["isolated_cpu"] "/" v["core"],
			v["lost"] == "" ? "-" : v["lost"] }' "$log.run"
}

grep -m1 "model name" /proc/cpuinfo || true
echo "cpus $(nproc), cpu0's core: $(cat /sys/devices/system/cpu/cpu0/topology/thread_siblings_list 2>/dev/null)"
echo "round config mean_ns best_ns rdtsc_ns isolated lost"
for ((r = 1; r <= rounds; r++)); do
	for i in "${!names[@]}"; do
		run "${names[$i]}" "${libs[$i]}" "$r" | tee -a "$log"
	done
done

python3 - "$log" "${names[@]}" <<'EOF'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
names = sys.argv[2:]
by = {n: [r for r in rows if r[1] == n] for n in names}
print("\nconfig: best-batch median (min-max), mean median, TSC read median")
for n in names:
    best = [float(r[3]) for r in by[n]]
    mean = [float(r[2]) for r in by[n]]
    tsc = [float(r[4]) for r in by[n]]
    print(f"{n}: {statistics.median(best):.1f} ({min(best):.1f}-{max(best):.1f}), "
          f"{statistics.median(mean):.1f}, {statistics.median(tsc):.1f}")
g = {r[0]: float(r[3]) for r in by["gputrace"]}
print("\nper round, best batch / gputrace's: median (min-max)")
for n in names:
    if n == "gputrace":
        continue
    q = [float(r[3]) / g[r[0]] for r in by[n]]
    print(f"{n}: {statistics.median(q):.2f} ({min(q):.2f}-{max(q):.2f})")
EOF
