#!/bin/bash
# Overhead benchmark: runs bench/overhead/app.cu bare, under the CUPTI floor (floor.c: kernel,
# memcpy and memset activity only, records discarded), under gputrace with default settings
# (and variants that isolate the API collector), under CUPTI's own NVTX marker path and, when
# present, under Nsight Systems, in interleaved rounds. Prints medians with min-max spread, and
# the launch cost added as a multiple of the floor's by the means over the rounds, with a 95 %
# bootstrap interval (bench/overhead/pool.py pools several runs' logs). BENCH_CONFIGS may also
# name floor-clock, floor-api and floor-api-rt (the floor plus one piece of what gputrace
# adds: see floor.c), gputrace-kernel (kernel, memcpy and memset only) and gputrace-noflush.
# BENCH_PIN_CPU=N pins the program's launching thread; BENCH_SHOW_CPUS=1 prints its CPUs.
# Usage: run.sh BUILD_DIR [ROUNDS]     (GPU machine; exits 77 without a GPU)
set -u
build=$(cd "${1:?usage: run.sh BUILD_DIR [ROUNDS]}" && pwd)
rounds=${2:-5}
app="$build/bench/overhead/gt-overhead-app"
floor="$build/bench/overhead/libgt-overhead-floor.so"
lib="$build/collectors/libgputrace-inject.so"
nsys=${NSYS:-/opt/nvidia/nsight-compute/2025.3.1/host/target-linux-x64/nsys}
work=$(mktemp -d "${TMPDIR:-/tmp}/gputrace-overhead.XXXXXX")
results="$work/results"
# launches, 64-byte copies, NVTX push+pop pairs of the flood (the paced and after-flood batches,
# 100 x 2,000 each, come on top); BENCH_SIZES="200000 2000 2000" times launches with little else
sizes=${BENCH_SIZES:-"200000 20000 2000000"}

cupti=""
for d in "${CUDA_HOME:-/usr/local/cuda}"/lib64 /usr/local/cuda*/targets/x86_64-linux/lib \
	/usr/local/cuda*/extras/CUPTI/lib64; do
	if [ -e "$d/libcupti.so.13" ]; then cupti="$d/libcupti.so.13"; break; fi
done

configs="bare floor gputrace gputrace-activity gputrace-noapi"
[ -n "$cupti" ] && configs="$configs cupti-markers"
[ -x "$nsys" ] && configs="$configs nsys"
# BENCH_LIB_B=path/to/libgputrace-inject.so adds config gputrace-b: another build of the
# library, run like gputrace, for A/B comparisons of two builds in the same rounds
[ -n "${BENCH_LIB_B:-}" ] && configs="$configs gputrace-b"
configs=${BENCH_CONFIGS:-$configs} # e.g. BENCH_CONFIGS="bare floor gputrace"
# gputrace runs with its defaults, the 32 MiB ring included: the paced NVTX batches are all
# kept, and the 2,000,000-pair flood is not (the drainer falls behind; a dropped record costs
# less than a written one). Each gputrace run's losses are printed: they come from the flood.

run_one() { # config round
	local c=$1 out="$work/$1-$2.out" rc
	case $c in
	bare) "$app" $sizes >"$out" 2>&1 ;;
	floor) FLOOR_VERBOSE=1 CUDA_INJECTION64_PATH="$floor" "$app" $sizes >"$out" 2>&1 ;;
	gputrace) CUDA_INJECTION64_PATH="$lib" GPUTRACE_OUTPUT="$work/t.gtrace" \
		"$app" $sizes >"$out" 2>&1 ;;
	gputrace-b) CUDA_INJECTION64_PATH="$BENCH_LIB_B" GPUTRACE_OUTPUT="$work/t.gtrace" \
		"$app" $sizes >"$out" 2>&1 ;;
	gputrace-activity) CUDA_INJECTION64_PATH="$lib" GPUTRACE_OUTPUT="$work/t.gtrace" \
		GPUTRACE_API_SOURCE=activity "$app" $sizes >"$out" 2>&1 ;;
	gputrace-noapi) CUDA_INJECTION64_PATH="$lib" GPUTRACE_OUTPUT="$work/t.gtrace" \
		GPUTRACE_API=none "$app" $sizes >"$out" 2>&1 ;;
	# what gputrace adds to the floor, one piece at a time: its timestamp callback, API
	# records of the launch calls, and gputrace itself with kernel, memcpy and memset only
	floor-clock) CUDA_INJECTION64_PATH="$floor" FLOOR_CLOCK=1 "$app" $sizes >"$out" 2>&1 ;;
	floor-api) CUDA_INJECTION64_PATH="$floor" FLOOR_API=launch "$app" $sizes >"$out" 2>&1 ;;
	gputrace-noflush) CUDA_INJECTION64_PATH="$lib" GPUTRACE_OUTPUT="$work/t.gtrace" \
		GPUTRACE_FLUSH_MS=0 "$app" $sizes >"$out" 2>&1 ;;
	floor-api-rt) CUDA_INJECTION64_PATH="$floor" FLOOR_API=runtime "$app" $sizes >"$out" 2>&1 ;;
	gputrace-kernel) CUDA_INJECTION64_PATH="$lib" GPUTRACE_OUTPUT="$work/t.gtrace" \
		GPUTRACE_TRACE=kernel,memcpy,memset GPUTRACE_API=none "$app" $sizes >"$out" 2>&1 ;;
	cupti-markers) CUDA_INJECTION64_PATH="$floor" FLOOR_MARKERS=1 NVTX_INJECTION64_PATH="$cupti" \
		"$app" $sizes >"$out" 2>&1 ;;
	# the program prints its figures before Nsight Systems post-processes; bound that part
	nsys) timeout "${NSYS_TIMEOUT:-120}" "$nsys" profile -t cuda,nvtx -o "$work/nsys-$2" \
		--force-overwrite=true "$app" $sizes >"$out" 2>&1 ;;
	esac
	rc=$?
	if [ $rc -eq 77 ]; then echo "no GPU: skipping the benchmark"; exit 77; fi
	awk -v c="$c" -v r="$2" '/^launch_us/{l=$2} /^memcpy_us/{m=$2} /^nvtx_ns/{n=$2}
		/^nvtx_best_ns/{b=$2} /^nvtx_paced_ns/{pm=$2} /^nvtx_paced_best_ns/{pb=$2}
		/^launch_med_us/{lm=$2} /^launch_burst_us/{lb=$2} /^launch_cpu_us/{lc=$2}
		END{ if (l != "") print c, r, l, m, n, b, pm, pb, lm, lb, lc }' "$out" >>"$results"
	[ "$c" = floor ] && grep '^floor:' "$out" | sed "s/^/round $2 /"
	[ -n "${BENCH_SHOW_CPUS:-}" ] && echo "$c round $2 $(grep '^launch_cpus' "$out")"
	grep -q '^nvtx_ns' "$out" || { echo "$c round $2 failed (exit $rc):"; tail -n 5 "$out"; }
	if [ "${c#gputrace}" != "$c" ]; then
		echo "$c round $2 records lost: $("$build/cli/gputrace" info "$work/t.gtrace" 2>&1 |
			awk '/^losses:/ { seen = on = 1; next }
			     on && /^  [a-z_]+ +[0-9]+$/ { n += $2 } on && !/^  / { on = 0 }
			     END { print seen ? n + 0 : "? (no trace)" }')"
		rm -f "$work/t.gtrace"
	fi
}

: >"$results"
for r in $(seq 1 "$rounds"); do
	for c in $configs; do run_one "$c" "$r" && tail -n 1 "$results"; done
	echo "round $r of $rounds done" >&2
done

python3 - "$results" "$sizes" <<'PY'
import random, statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
data = {}
for row in rows:
    data.setdefault(row[0], []).append(tuple(float(x) for x in row[2:]))
def med(c, i):
    return statistics.median(v[i] for v in data[c])
def spread(c, i):
    vals = [v[i] for v in data[c]]
    return min(vals), max(vals)
print("launches, copies, NVTX pairs per run: %s; rounds: %d" % (sys.argv[2], max(len(v) for v in data.values())))
print("%-18s %22s %9s %8s %14s %22s %10s %22s %10s" % ("config", "launch us (min-max)", "added us",
      "x floor", "64B memcpy us", "NVTX flood ns", "best", "NVTX paced ns", "best"))
bare_l = med("bare", 0) if "bare" in data else None
floor_add = med("floor", 0) - bare_l if "floor" in data and bare_l is not None else None
for c in data:
    l, m, n = med(c, 0), med(c, 1), med(c, 2)
    lo, hi = spread(c, 0)
    nlo, nhi = spread(c, 2)
    added = l - bare_l if bare_l is not None else float("nan")
    ratio = added / floor_add if floor_add and c not in ("bare", "floor") else float("nan")
    plo, phi = spread(c, 4)
    print("%-18s %8.3f (%.3f-%.3f) %9.3f %8.2f %14.3f %10.1f (%.1f-%.1f) %10.1f %10.1f (%.1f-%.1f) %10.1f" %
          (c, l, lo, hi, added, ratio, m, n, nlo, nhi, med(c, 3), med(c, 4), plo, phi, med(c, 5)))
# Launch cost added, x the floor's, three ways: by each run's whole launch loop ("all
# chunks"), by its median chunk (leaves out a run's odd chunks) and by its median burst (the
# launch call alone: a burst is too short to fill the queue). Each process lands somewhere in
# a spread of about +-20 % that moves bare, floor and gputrace alike, so a verdict needs many
# rounds: the headline is the ratio of the means over the rounds that ran every config, with
# a 95 % bootstrap interval (rounds resampled, fixed seed); the per-round ratio's median, whose
# denominator is one noisy difference, is printed for comparison.
print("launching thread's CPU time per launch, us: " +
      ", ".join("%s %.3f" % (c, med(c, 8)) for c in data))
def mean_ratio(rounds, c, i):
    b, f, g = (statistics.mean(r[k][i] for r in rounds) for k in ("bare", "floor", c))
    return (g - b) / (f - b) if f > b else float("nan")
by_round = {}
for row in rows:
    by_round.setdefault(row[1], {})[row[0]] = [float(x) for x in row[2:]]
for i, what in ((0, "all chunks"), (6, "median chunk"), (7, "burst")):
    if "bare" not in data or "floor" not in data:
        break
    print("%s: bare %.3f us, floor added %.3f us (medians)" %
          (what, med("bare", i), med("floor", i) - med("bare", i)))
    for c in data:
        if c in ("bare", "floor"):
            continue
        full = [v for v in by_round.values() if all(k in v for k in ("bare", "floor", c))]
        if len(full) < 2:
            continue
        rng = random.Random(1)
        boot = sorted(mean_ratio(rng.choices(full, k=len(full)), c, i) for _ in range(2000))
        per = [(v[c][i] - v["bare"][i]) / (v["floor"][i] - v["bare"][i]) for v in full
               if v["floor"][i] > v["bare"][i]]
        print("%-18s %s: added %.3f us; x floor: %.2f by the means, 95%% interval %.2f-%.2f;"
              " per round median %.2f (%.2f-%.2f); %d rounds" %
              (c, what, statistics.mean(v[c][i] - v["bare"][i] for v in full),
               mean_ratio(full, c, i), boot[50], boot[1949], statistics.median(per), min(per),
               max(per), len(full)))
PY
rm -rf "$work"
