#!/bin/bash
# NVTX push+pop cost of several handler libraries on one machine, in interleaved rounds, with
# the machine's own floors (no CUDA needed). Configurations (AB_CONFIGS, default
# "none floor-clock floor-record floor-store gputrace"):
#   none          no injection library: NVTX's empty calls;
#   floor-clock   a handler that only reads the TSC, twice per pair (bench/nvtx-floor.c);
#   floor-record  a handler that stamps, stacks and stores a 64-byte record, never published;
#   floor-store   that handler, also copying each record into a 512 MiB buffer (no consumer);
#   floor-store-huge  the same buffer in transparent huge pages (when the kernel allows);
#   floor-store-nt    the same buffer written with non-temporal stores;
#   floor-store32     the same buffer, copying 32 bytes of each record instead of 64;
#   floor-store-small a 4 MiB buffer (one the caches can hold) instead of 512 MiB;
#   gputrace      BUILD's injection library (standalone: it drains its own ring);
#   gputrace-Nm   the same with an N MiB ring (gputrace-4m, gputrace-32m: the default): the
#                 flood's records are mostly dropped, the paced batches' kept (compare the
#                 paced figures only);
#   gputrace-iso  the same, with the library's threads kept off the timed thread's core
#                 (BENCH_NVTX_ISOLATE): a drainer busy with the flood cannot share that core;
#   NAME=LIB      any further library, e.g. another gputrace build, for an A/B; a NAME ending
#                 in -iso runs isolated as above.
# gputrace runs with a ring that holds every record of a run (GPUTRACE_BUFFER_SIZE, 512M unless
# set): with the default ring the drainer falls behind this flood, records are dropped (and
# counted), and a dropped record costs less than one written. Each gputrace run's losses, from
# `gputrace info`, are printed; they should be 0.
# Each run gives (bench/bench-nvtx.c) the mean and best of 100 paced batches of 2,000 pairs
# (1 ms of spinning before each), the mean over a flood of 2,000,000 pairs back to back and the
# best of 100 batches right after it, and one TSC read. Prints each round, then per
# configuration the median and range of each figure over the rounds, and per round each
# configuration's figures over gputrace's.
# Usage: [AB_CONFIGS="..."] bench/nvtx-ab.sh BUILD ROUNDS [NAME=LIB ...]
set -eu
build=$(cd "${1:?usage: nvtx-ab.sh BUILD ROUNDS [NAME=LIB ...]}" && pwd)
rounds=${2:?usage: nvtx-ab.sh BUILD ROUNDS [NAME=LIB ...]}
shift 2
bench=$build/bench/bench-nvtx
floor=$build/bench/libgt-nvtx-floor.so
lib=$build/collectors/libgputrace-inject.so
names=()
libs=()
for c in ${AB_CONFIGS:-none floor-clock floor-record floor-store gputrace}; do
	names+=("$c")
	case $c in
	none) libs+=("") ;;
	floor-*) libs+=("$floor") ;;
	gputrace | gputrace-iso | gputrace-[0-9]*m) libs+=("$lib") ;;
	*) echo "nvtx-ab.sh: unknown configuration $c" >&2 && exit 64 ;;
	esac
done
for a in "$@"; do
	names+=("${a%%=*}")
	libs+=("$(cd "$(dirname "${a#*=}")" && pwd)/$(basename "${a#*=}")")
done
export GPUTRACE_BUFFER_SIZE=${GPUTRACE_BUFFER_SIZE:-512M}
log=$(mktemp)
trap 'rm -f "$log" "$log.run" /tmp/nvtx-ab.gtrace' EXIT

run() { # name lib round
	local mode=record iso= ring=$GPUTRACE_BUFFER_SIZE

	[ "$1" = floor-clock ] && mode=clock
	[ "${1#floor-store}" != "$1" ] && mode=${1#floor-}
	[ "${1%-iso}" != "$1" ] && iso=1
	case $1 in gputrace-[0-9]*m) ring=${1#gputrace-} && ring=${ring%m}M ;; esac
	rm -f /tmp/nvtx-ab.gtrace
	if [ -z "$2" ]; then
		"$bench"
	elif [ -n "$iso" ]; then
		BENCH_NVTX_ISOLATE=1 NVTX_INJECTION64_PATH=$2 GPUTRACE_OUTPUT=/tmp/nvtx-ab.gtrace \
			"$bench"
	else
		NVTX_FLOOR_MODE=$mode NVTX_INJECTION64_PATH=$2 GPUTRACE_OUTPUT=/tmp/nvtx-ab.gtrace \
			GPUTRACE_BUFFER_SIZE=$ring "$bench"
	fi >"$log.run"
	# records lost: none without a trace (no tracer), else the trace's loss total
	if [ -e /tmp/nvtx-ab.gtrace ]; then
		"$build/cli/gputrace" info /tmp/nvtx-ab.gtrace |
			awk '/^losses:/ { seen = on = 1; next } on && /^  [a-z_]+ +[0-9]+$/ { n += $2 }
			     on && !/^  / { on = 0 } END { print "lost", seen ? n + 0 : "?" }' >>"$log.run"
	fi
	awk -v r="$3" -v n="$1" '{ v[$1] = $2; if ($1 == "isolated_cpu") v["core"] = $4 } END {
		printf "%d %s %s %s %s %s %s %s %s\n", r, n, v["nvtx_paced_ns"], v["nvtx_paced_best_ns"],
			v["nvtx_ns"], v["nvtx_best_ns"], v["rdtsc_ns"],
			v["isolated_cpu"] == "" ? "-" : "cpu" v["isolated_cpu"] "/" v["core"],
			v["lost"] == "" ? "-" : v["lost"] }' "$log.run"
}

grep -m1 "model name" /proc/cpuinfo || true
echo "transparent huge pages: $(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null); shmem: $(cat /sys/kernel/mm/transparent_hugepage/shmem_enabled 2>/dev/null)"
echo "cpus $(nproc), cpu0's core: $(cat /sys/devices/system/cpu/cpu0/topology/thread_siblings_list 2>/dev/null)"
echo "round config paced_mean_ns paced_best_ns flood_mean_ns flood_best_ns rdtsc_ns isolated lost"
for ((r = 1; r <= rounds; r++)); do
	for i in "${!names[@]}"; do
		run "${names[$i]}" "${libs[$i]}" "$r" | tee -a "$log"
	done
done

python3 - "$log" "${names[@]}" <<'EOF'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
names = sys.argv[2:]
cols = {"paced mean": 2, "paced best": 3, "flood mean": 4, "flood best": 5, "TSC read": 6}
by = {n: [r for r in rows if r[1] == n] for n in names}
def fig(vals, d=1):
    return f"{statistics.median(vals):.{d}f} ({min(vals):.{d}f}-{max(vals):.{d}f})"
print("\nconfig: median (min-max) over the rounds, ns")
print("config".ljust(18) + "".join(c.ljust(20) for c in cols))
for n in names:
    print(n.ljust(18) + "".join(fig([float(r[i]) for r in by[n]]).ljust(20) for i in cols.values()))
print("\nper round, over gputrace's: median (min-max)")
if "gputrace" not in by:
    sys.exit(0)
g = {r[0]: r for r in by["gputrace"]}
print("config".ljust(18) + "".join(c.ljust(20) for c in list(cols)[:4]))
for n in names:
    if n == "gputrace":
        continue
    print(n.ljust(18) + "".join(fig([float(r[i]) / float(g[r[0]][i]) for r in by[n]], 2).ljust(20)
                                 for i in list(cols.values())[:4]))
EOF
