#!/bin/bash
# PyTorch workloads (bench/overhead/torch_bench.py: the small-op loop, the same loop as a CUDA
# graph, a transformer training step) bare, under the CUPTI floor, under gputrace run (default
# settings), under Nsight Systems (-t cuda,nvtx) and under PyTorch's profiler (CUDA
# activities), in interleaved rounds. Each run times every workload of TORCH_WORKLOADS in one
# process, by the mean per step over its whole timed run (what a user waits for) and by the
# median of 50-step windows. Prints each configuration's medians over the rounds, then
# (bench/overhead/pool.py) each tracer's added time by the means over the rounds with a 95 %
# bootstrap interval: in per cent of bare, and as a multiple of the floor's and of Nsight
# Systems' added time. NSYS_TIMEOUT (seconds, default 90) bounds an Nsight Systems run, whose
# post-processing outlasts the workloads.
# BENCH_CONFIGS picks configurations; besides bare, floor, gputrace, nsys and torch-profiler:
# gputrace-kms (-t kernel,memcpy,memset), gputrace-noapi (--api none), gputrace-nomem
# (default kinds but memory), gputrace-nonvtx (default kinds but nvtx), gputrace-cb (API
# records through callbacks), gputrace-solo (standalone: CUDA_INJECTION64_PATH, no CLI),
# gputrace-gm10k and gputrace-gm1k (the defaults plus GPU metrics sampled at 10 kHz and 1 kHz,
# run --gpu-metrics: their cost is theirs against gputrace; docs/gpu-metrics.md). To measure
# them: BENCH_CONFIGS="bare gputrace gputrace-gm10k gputrace-gm1k" torch_run.sh BUILD 10
# Stacks (docs/performance.md, "Stacks"): gputrace-bt, gputrace-pybt and gputrace-allbt (the
# defaults plus --backtrace native, python, all) against torch-profiler-stack (the PyTorch
# profiler with CPU and CUDA activities and with_stack=True) and nsys-pybt (Nsight Systems
# with --cudabacktrace=all --python-backtrace=cuda).
# The accounting ladder (docs/performance.md), each adding one piece: floor-clock (the floor
# with gputrace's timestamp callback), floor-api-launch (+ API records of the launch calls),
# floor-api-default (+ API records of every call gputrace's default filter keeps),
# floor-api-all (+ the RUNTIME and DRIVER kinds whole: every call's record; the only API
# records that TORCH_AB's blocks can switch), floor-mem (+ memory records), floor-flush (+ a
# 100 ms flush thread), floor-flush-pool (the same with buffers reused, as gputrace's pool
# does); gputrace-k0 (gputrace with kernel, memcpy and memset only, no API records, no flush
# thread: its clock, parsing, ring writes and the session's drain), gputrace-k0-solo (the same drained by a thread of the program),
# gputrace-k (+ the flush thread, its NVTX publish and thread rescans), gputrace-kf1000 (the
# same with a 1 s flush period), gputrace-f1000 (the defaults with a 1 s period), gputrace-ka
# (+ the API records of the default filter), gputrace-kaall (+ every call's API record, --api
# all), gputrace-kam (+ memory records; the default is this with NVTX and graphs too).
# Usage: torch_run.sh BUILD_DIR [ROUNDS]   (GPU machine; exits 77 without torch or a GPU)
#   TORCH_WORKLOADS  comma list, default loop,loop-graph,xfmr; TORCH_STEPS: timed steps of each
#   BENCH_CPUS       pin this script, so every run and tracer, to these cores (taskset -c list)
#   BENCH_SECONDS    start no round after this many seconds (the rounds done are reported)
#   TORCH_RUNS_OUT   write the per-run figures there as they come (pool.py, ab.py pool several)
#   TORCH_AB=BLOCK   the in-process comparison (torch_bench.py --ab BLOCK, with --nvtx): every
#                    tracer records only inside cudaProfilerStart/Stop (gputrace
#                    --capture-range cudaProfilerApi with API records from activity records
#                    as by default, gputrace-cb from callbacks; the floor FLOOR_CAPTURE=1),
#                    and each run compares blocks with the tracer recording against blocks
#                    with it idle; ab.py reports what each configuration and each rung of the
#                    ladder adds (Nsight Systems and PyTorch's profiler are left out)
set -u
build=$(cd "${1:?usage: torch_run.sh BUILD_DIR [ROUNDS]}" && pwd)
rounds=${2:-5}
src=$(cd "$(dirname "$0")" && pwd)
py=${PYTHON:-python3}
nsys=${NSYS:-/opt/nvidia/nsight-compute/2025.3.1/host/target-linux-x64/nsys}
workloads=${TORCH_WORKLOADS:-loop,loop-graph,xfmr}
work=$(mktemp -d "${TMPDIR:-/tmp}/gputrace-torch.XXXXXX")
bench=("$py" "$src/torch_bench.py" "$workloads" ${TORCH_STEPS:+--steps "$TORCH_STEPS"})
# the in-process comparison: what each tracer records is switched by the profiler API
cap=() capenv=() fcap=()
if [ -n "${TORCH_AB:-}" ]; then
	bench+=(--ab "$TORCH_AB" --nvtx)
	cap=(--capture-range cudaProfilerApi)
	capenv=(GPUTRACE_CAPTURE_RANGE=cudaProfilerApi GPUTRACE_API_SOURCE=activity)
	fcap=(FLOOR_CAPTURE=1)
fi
# every process of every configuration (tracer, its helpers, the program) inherits this
[ -n "${BENCH_CPUS:-}" ] && { taskset -cp "$BENCH_CPUS" $$ >/dev/null || exit 1; }
start=$SECONDS
# the per-run figures, written as each run ends (a run cut short leaves the rounds before it)
runs=${TORCH_RUNS_OUT:-$work/runs}
: >"$runs" || exit 1
"$py" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 77)' 2>/dev/null ||
	{ echo "no torch or no GPU: skipping"; exit 77; }

configs="bare floor gputrace nsys torch-profiler"
[ -x "$nsys" ] || configs="bare floor gputrace torch-profiler"
configs=${BENCH_CONFIGS:-$configs}
for r in $(seq 1 "$rounds"); do
	if [ -n "${BENCH_SECONDS:-}" ] && [ $((SECONDS - start)) -ge "$BENCH_SECONDS" ]; then
		echo "BENCH_SECONDS=$BENCH_SECONDS reached: $((r - 1)) rounds done" >&2
		break
	fi
	for c in $configs; do
		out="$work/$c-$r.out"
		case $c in
		bare) "${bench[@]}" >"$out" 2>&1 ;;
		floor | floor-*)
			fenv=()
			case $c in
			floor-clock) fenv=(FLOOR_CLOCK=1) ;;
			floor-api-launch) fenv=(FLOOR_CLOCK=1 FLOOR_API=launch) ;;
			floor-api-default) fenv=(FLOOR_CLOCK=1 FLOOR_API=default) ;;
			floor-api-all) fenv=(FLOOR_CLOCK=1 FLOOR_API=all) ;;
			floor-mem) fenv=(FLOOR_CLOCK=1 FLOOR_MEMORY=1) ;;
			floor-flush) fenv=(FLOOR_CLOCK=1 FLOOR_FLUSH_MS=100) ;;
			floor-flush-pool) fenv=(FLOOR_CLOCK=1 FLOOR_FLUSH_MS=100 FLOOR_POOL=1) ;;
			esac
			env "${fenv[@]}" "${fcap[@]}" CUDA_INJECTION64_PATH="$build/bench/overhead/libgt-overhead-floor.so" \
				"${bench[@]}" >"$out" 2>&1 ;;
		gputrace-k0-solo) env "${capenv[@]}" \
			CUDA_INJECTION64_PATH="$build/collectors/libgputrace-inject.so" GPUTRACE_OUTPUT="$work/t.gtrace" GPUTRACE_TRACE=kernel,memcpy,memset \
			GPUTRACE_API=none GPUTRACE_FLUSH_MS=0 "${bench[@]}" >"$out" 2>&1 ;;
		gputrace) env "${capenv[@]:1}" "$build/cli/gputrace" run -q -f -o "$work/t.gtrace" \
			"${cap[@]}" -- "${bench[@]}" >"$out" 2>&1 ;;
		gputrace-solo) env "${capenv[@]}" \
			CUDA_INJECTION64_PATH="$build/collectors/libgputrace-inject.so" \
			GPUTRACE_OUTPUT="$work/t.gtrace" "${bench[@]}" >"$out" 2>&1 ;;
		gputrace-*)
			opts=()
			case $c in
			gputrace-kms) opts=(-t kernel,memcpy,memset) ;;
			gputrace-noapi) opts=(--api none) ;;
			gputrace-nomem) opts=(-t kernel,memcpy,memset,api,nvtx,graph) ;;
			gputrace-nonvtx) opts=(-t kernel,memcpy,memset,memory,api,graph) ;;
			gputrace-k0) opts=(-t kernel,memcpy,memset --api none --flush-interval 0) ;;
			gputrace-k) opts=(-t kernel,memcpy,memset --api none) ;;
			gputrace-kf1000) opts=(-t kernel,memcpy,memset --api none --flush-interval 1000) ;;
			gputrace-f1000) opts=(--flush-interval 1000) ;;
			gputrace-ka) opts=(-t kernel,memcpy,memset,api) ;;
			gputrace-kaall) opts=(-t kernel,memcpy,memset,api --api all) ;;
			gputrace-kam) opts=(-t kernel,memcpy,memset,api,memory) ;;
			gputrace-gm10k) opts=(--gpu-metrics=all:10000) ;;
			gputrace-gm1k) opts=(--gpu-metrics=all:1000) ;;
			gputrace-bt) opts=(--backtrace native) ;;
			gputrace-pybt) opts=(--backtrace python) ;;
			gputrace-allbt) opts=(--backtrace all) ;;
			esac
			src_env=("${capenv[@]:1}")
			[ "$c" = gputrace-cb ] && src_env=(GPUTRACE_API_SOURCE=callback)
			env "${src_env[@]}" "$build/cli/gputrace" run -q -f -o "$work/$c.gtrace" \
				"${opts[@]}" "${cap[@]}" -- "${bench[@]}" >"$out" 2>&1 ;;
		# the workloads print their figures before Nsight Systems post-processes; bound that
		nsys) timeout "${NSYS_TIMEOUT:-90}" "$nsys" profile -t cuda,nvtx -o "$work/nsys-$r" \
			--force-overwrite=true "${bench[@]}" >"$out" 2>&1 ;;
		# Nsight Systems with CUDA backtraces and Python frames on them (issue #30's comparison)
		nsys-pybt) timeout "${NSYS_TIMEOUT:-90}" "$nsys" profile -t cuda,nvtx --cudabacktrace=all \
			--python-backtrace=cuda -o "$work/nsys-$r" --force-overwrite=true "${bench[@]}" \
			>"$out" 2>&1 ;;
		torch-profiler) "${bench[@]}" --torch-profiler >"$out" 2>&1 ;;
		torch-profiler-stack) "${bench[@]}" --torch-profiler-stack >"$out" 2>&1 ;;
		esac
		if grep -q ' ab_off_us ' "$out"; then
			awk -v c="$c" -v r="$r" '$2 == "ab_off_us" {
				printf "round %s: %s %s %s %s ab us/step\n", r, c, $1, $3, $5
				printf "round %s: %s %s %s %s abcpu us/step\n", r, c, $1, $9, $11 }' "$out" |
				tee -a "$runs"
		elif grep -q ' step_mean_us ' "$out"; then
			awk -v c="$c" -v r="$r" '$2 == "step_mean_us" {
				printf "round %s: %s %s %s %s us/step\n", r, c, $1, $3, $5 }' "$out" |
				tee -a "$runs"
		else
			echo "$c round $r failed:"
			tail -n 5 "$out"
		fi
	done
	echo "round $r of $rounds done" >&2
done
if [ -n "${TORCH_AB:-}" ]; then
	python3 "$src/ab.py" "$runs"
	# what the last round's gputrace configurations recorded (API records per recorded step)
	for t in "$work"/gputrace-*.gtrace; do
		[ -f "$t" ] || continue
		echo "== $(basename "$t" .gtrace)"
		"$build/cli/gputrace" info "$t" | grep -E '^(records|losses|  kernel|  api|  nvtx|recording cost|  pid [0-9]+: gputrace.s own)'
	done
	exit
fi
[ -f "$work/t.gtrace" ] && "$build/cli/gputrace" info "$work/t.gtrace" | grep -E '^(records|losses|  kernel|  api|recording cost|  pid [0-9]+: gputrace.s own)'
python3 - "$runs" <<'PY'
import statistics, sys
d = {}
for line in open(sys.argv[1]):
    f = line.split()
    d.setdefault((f[3], f[2]), []).append((float(f[4]), float(f[5])))
print("%-12s %-16s %12s %20s %12s %10s" % ("workload", "config", "mean us/step", "min-max",
      "median-win", "added %"))
for (w, c), v in sorted(d.items()):
    m = statistics.median(x[0] for x in v)
    b = statistics.median(x[0] for x in d[(w, "bare")]) if (w, "bare") in d else None
    print("%-12s %-16s %12.1f %9.1f-%-10.1f %12.1f %9.1f%%" % (w, c, m, min(x[0] for x in v),
          max(x[0] for x in v), statistics.median(x[1] for x in v),
          100 * (m - b) / b if b else float("nan")))
PY
python3 "$src/pool.py" "$runs"
