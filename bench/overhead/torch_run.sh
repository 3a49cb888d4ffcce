#!/bin/bash
# PyTorch small-op loop (bench/overhead/torch_loop.py) bare, under gputrace run (default
# settings), under Nsight Systems (-t cuda,nvtx) and under PyTorch's profiler (CUDA activities),
# in interleaved rounds; prints each configuration's median µs per step with its spread, then
# (bench/overhead/pool.py) each tracer's added time by the means over the rounds, with a 95 %
# bootstrap interval, in per cent of bare and as a multiple of Nsight Systems'. NSYS_TIMEOUT
# (seconds, default 90) bounds an Nsight Systems run, whose post-processing outlasts the loop.
# BENCH_CONFIGS picks configurations; besides those four: floor (the CUPTI floor library of
# bench/overhead), gputrace-kms (-t kernel,memcpy,memset), gputrace-noapi (--api none),
# gputrace-nosync (default kinds but sync), gputrace-nomem (default kinds but memory),
# gputrace-nonvtx (default kinds but nvtx), gputrace-cb (API records through callbacks).
# Usage: torch_run.sh BUILD_DIR [ROUNDS]   (GPU machine; exits 77 without torch or a GPU)
set -u
build=$(cd "${1:?usage: torch_run.sh BUILD_DIR [ROUNDS]}" && pwd)
rounds=${2:-5}
src=$(cd "$(dirname "$0")" && pwd)
py=${PYTHON:-python3}
nsys=${NSYS:-/opt/nvidia/nsight-compute/2025.3.1/host/target-linux-x64/nsys}
work=$(mktemp -d "${TMPDIR:-/tmp}/gputrace-torch.XXXXXX")
"$py" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 77)' 2>/dev/null ||
	{ echo "no torch or no GPU: skipping"; exit 77; }

configs="bare gputrace nsys torch-profiler"
[ -x "$nsys" ] || configs="bare gputrace torch-profiler"
configs=${BENCH_CONFIGS:-$configs}
: >"$work/results"
for r in $(seq 1 "$rounds"); do
	for c in $configs; do
		out="$work/$c-$r.out"
		case $c in
		bare) "$py" "$src/torch_loop.py" >"$out" 2>&1 ;;
		floor) CUDA_INJECTION64_PATH="$build/bench/overhead/libgt-overhead-floor.so" \
			"$py" "$src/torch_loop.py" >"$out" 2>&1 ;;
		gputrace) "$build/cli/gputrace" run -q -f -o "$work/t.gtrace" -- \
			"$py" "$src/torch_loop.py" >"$out" 2>&1 ;;
		gputrace-*)
			opts=()
			case $c in
			gputrace-kms) opts=(-t kernel,memcpy,memset) ;;
			gputrace-noapi) opts=(--api none) ;;
			gputrace-nosync) opts=(-t kernel,memcpy,memset,memory,api,nvtx,graph) ;;
			gputrace-nomem) opts=(-t kernel,memcpy,memset,api,nvtx,sync,graph) ;;
			gputrace-nonvtx) opts=(-t kernel,memcpy,memset,memory,api,sync,graph) ;;
			esac
			if [ "$c" = gputrace-cb ]; then export GPUTRACE_API_SOURCE=callback; fi
			"$build/cli/gputrace" run -q -f -o "$work/$c.gtrace" "${opts[@]}" -- \
				"$py" "$src/torch_loop.py" >"$out" 2>&1
			unset GPUTRACE_API_SOURCE ;;
		# the loop prints its figure before Nsight Systems post-processes; bound that part
		nsys) timeout "${NSYS_TIMEOUT:-90}" "$nsys" profile -t cuda,nvtx -o "$work/nsys-$r" \
			--force-overwrite=true "$py" "$src/torch_loop.py" >"$out" 2>&1 ;;
		torch-profiler) "$py" "$src/torch_loop.py" --torch-profiler >"$out" 2>&1 ;;
		esac
		v=$(awk '/^step_us/{print $2}' "$out")
		if [ -n "$v" ]; then
			echo "$c $v $r" >>"$work/results"
			echo "round $r: $c $v us/step" | tee -a "$work/runs"
		else
			echo "$c round $r failed:"
			tail -n 5 "$out"
		fi
	done
	echo "round $r of $rounds done" >&2
done
[ -f "$work/t.gtrace" ] && "$build/cli/gputrace" info "$work/t.gtrace" | grep -E '^(records|losses|  kernel|  api)'
python3 - "$work/results" <<'PY'
import statistics, sys
d = {}
for line in open(sys.argv[1]):
    c, v, r = line.split()
    d.setdefault(c, []).append(float(v))
bare = statistics.median(d["bare"]) if "bare" in d else None
print("%-16s %10s %20s %10s %8s" % ("config", "us/step", "min-max", "added us", "added %"))
for c, v in d.items():
    m = statistics.median(v)
    add = m - bare if bare else float("nan")
    print("%-16s %10.1f %9.1f-%-10.1f %10.1f %7.1f%%" % (c, m, min(v), max(v), add, 100 * add / bare if bare else float("nan")))
PY
# each tracer's added time by the means over the rounds, with a 95 % bootstrap interval, in
# per cent of bare and as a multiple of Nsight Systems' (pool.py pools several such logs)
python3 "$src/pool.py" "$work/runs"
