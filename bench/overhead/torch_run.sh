#!/bin/bash
# PyTorch small-op loop (bench/overhead/torch_loop.py) bare, under gputrace run (default
# settings), under Nsight Systems (-t cuda,nvtx) and under PyTorch's profiler (CUDA activities),
# in interleaved rounds; prints each configuration's median µs per step with its spread.
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
		gputrace) "$build/cli/gputrace" run -q -f -o "$work/t.gtrace" -- \
			"$py" "$src/torch_loop.py" >"$out" 2>&1 ;;
		gputrace-activity) GPUTRACE_API_SOURCE=activity "$build/cli/gputrace" run -q -f \
			-o "$work/ta.gtrace" -- "$py" "$src/torch_loop.py" >"$out" 2>&1 ;;
		nsys) "$nsys" profile -t cuda,nvtx -o "$work/nsys-$r" --force-overwrite=true \
			"$py" "$src/torch_loop.py" >"$out" 2>&1 ;;
		torch-profiler) "$py" "$src/torch_loop.py" --torch-profiler >"$out" 2>&1 ;;
		esac
		v=$(awk '/^step_us/{print $2}' "$out")
		if [ -n "$v" ]; then echo "$c $v" >>"$work/results"; else
			echo "$c round $r failed:"; tail -n 5 "$out"; fi
	done
	echo "round $r of $rounds done" >&2
done
[ -f "$work/t.gtrace" ] && "$build/cli/gputrace" info "$work/t.gtrace" | grep -E '^(records|losses|  kernel|  api)'
python3 - "$work/results" <<'PY'
import statistics, sys
d = {}
for line in open(sys.argv[1]):
    c, v = line.split()
    d.setdefault(c, []).append(float(v))
bare = statistics.median(d["bare"]) if "bare" in d else None
print("%-16s %10s %20s %10s %8s" % ("config", "us/step", "min-max", "added us", "added %"))
for c, v in d.items():
    m = statistics.median(v)
    add = m - bare if bare else float("nan")
    print("%-16s %10.1f %9.1f-%-10.1f %10.1f %7.1f%%" % (c, m, min(v), max(v), add, 100 * add / bare if bare else float("nan")))
PY
