#!/bin/bash
# Everything to run on a GPU machine in one go, from a build directory made elsewhere:
# environment facts, the GPU suite (API records through activity records, the default, and
# through callbacks), the PyTorch workload bare, the launch/NVTX overhead benchmark and the PyTorch
# small-op loop benchmark. Logs go to OUT_DIR (at most 8 files).
# record: real traces for tests/data (PyTorch training under `gputrace run`, a two-rank torchrun
# job as one trace and as per-rank standalone files); torchbench: bench/overhead/torch_run.sh on
# the three PyTorch workloads; parity: PyTorch's profiler and gputrace's capture range over the
# same steps, kernel names and counts compared (bench/overhead/parity.py); live: gputrace run
# --live on PyTorch training, screens captured as text next to `gputrace stats`, and the step
# time with and without the view (bench/live-gpu.sh); shape: the eltwise loop under `gputrace
# run --api all` (every runtime and driver call a step makes, by name) and the GPU's description
# as TARGET_INFO_GPU gives it, beside nvidia-smi's clocks.
# Usage: bench/gpu-session.sh BUILD_DIR OUT_DIR [STEPS]   STEPS: default "env suite torch overhead torchloop"
set -u
build=$(cd "${1:?usage: gpu-session.sh BUILD_DIR OUT_DIR [STEPS]}" && pwd)
out=${2:?usage: gpu-session.sh BUILD_DIR OUT_DIR [STEPS]}
steps=${3:-env suite torch overhead torchloop}
src=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
export PYTHONUNBUFFERED=1
stamp() { echo "== $(date -u +%H:%M:%S) $*"; }

for s in $steps; do
	case $s in
	env)
		{
			stamp env
			date -u
			nvidia-smi -L
			nvidia-smi --query-gpu=driver_version,clocks.sm,clocks.mem,clocks.max.sm,clocks.max.mem --format=csv
			echo "clocksource: $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
			grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -x -E 'constant_tsc|nonstop_tsc|tsc_known_freq' | tr '\n' ' '
			echo
			nproc
			grep -m1 "model name" /proc/cpuinfo
			grep -E "^(MemTotal|Hugepagesize)" /proc/meminfo
			"$build/cli/gputrace" doctor
		} >"$out/env.log" 2>&1
		;;
	suite)
		stamp suite >"$out/suite.log"
		bash "$src/tests/gpu/run.sh" "$build" >>"$out/suite.log" 2>&1
		stamp "suite, API through callbacks" >>"$out/suite.log"
		GPUTRACE_API_SOURCE=callback bash "$src/tests/gpu/run.sh" "$build" \
			${CALLBACK_TESTS:-} >>"$out/suite.log" 2>&1
		;;
	torch)
		{
			stamp "torch_train.py bare"
			python3 "$src/tests/gpu/torch_train.py"
			echo "exit $?"
			stamp "torch_train.py under gputrace run"
			"$build/cli/gputrace" run -f -o /tmp/torch.gtrace -- python3 "$src/tests/gpu/torch_train.py"
			echo "exit $?"
			stamp "torch_train.py under gputrace run --api none"
			"$build/cli/gputrace" run -q -f -o /tmp/torch-noapi.gtrace --api none -- python3 "$src/tests/gpu/torch_train.py"
			echo "exit $?"
			stamp "torch_train.py under gputrace run -t kernel,memcpy,memset"
			"$build/cli/gputrace" run -q -f -o /tmp/torch-k.gtrace -t kernel,memcpy,memset -- python3 "$src/tests/gpu/torch_train.py"
			echo "exit $?"
		} >"$out/torch.log" 2>&1
		cp /tmp/torch.gtrace "$out/torch.gtrace" 2>/dev/null
		;;
	nvtxcpu)
		# NVTX handlers alone (no CUDA): tells the handler's cost from CUPTI's presence, and
		# shows what the machine's clock reads cost
		{
			stamp "bench-nvtx, no injection"
			"$build/bench/bench-nvtx"
			for i in 1 2 3; do
				stamp "bench-nvtx under gputrace (standalone), run $i"
				NVTX_INJECTION64_PATH="$build/collectors/libgputrace-inject.so" \
					GPUTRACE_OUTPUT=/tmp/nvtx-cpu.gtrace "$build/bench/bench-nvtx"
			done
			"$build/cli/gputrace" info /tmp/nvtx-cpu.gtrace | grep -E 'nvtx|loss|  '
			stamp "bench-ring, 1 producer, 20 M records, 32 MiB"
			"$build/bench/bench-ring" 1 20000000 32
		} >"$out/nvtxcpu.log" 2>&1
		;;
	overhead)
		BENCH_CONFIGS=${OVERHEAD_CONFIGS:-"bare floor gputrace gputrace-activity nsys"} \
			bash "$src/bench/overhead/run.sh" "$build" "${OVERHEAD_ROUNDS:-7}" >"$out/overhead.log" 2>&1
		;;
	shape)
		{
			stamp "eltwise under gputrace run --api all"
			"$build/cli/gputrace" run -q -f -o /tmp/shape.gtrace --api all -- \
				python3 "$src/bench/overhead/torch_bench.py" eltwise --steps 500
			echo "exit $?"
			"$build/cli/gputrace" stats -r kernels,api -n 40 /tmp/shape.gtrace
			"$build/cli/gputrace" info /tmp/shape.gtrace
			stamp "eltwise under gputrace run (defaults): what recording cost the process"
			"$build/cli/gputrace" run -q -f -o /tmp/shape-default.gtrace -- \
				python3 "$src/bench/overhead/torch_bench.py" eltwise --steps 2000
			"$build/cli/gputrace" info /tmp/shape-default.gtrace | sed -n '/^records/,$p'
			stamp "TARGET_INFO_GPU"
			"$build/cli/gputrace" sql /tmp/shape.gtrace "SELECT id, name, clockRate, \
				memoryBandwidth, smCount, computeMajor, computeMinor FROM TARGET_INFO_GPU"
			nvidia-smi --query-gpu=clocks.max.sm,clocks.max.mem --format=csv
		} >"$out/shape.log" 2>&1
		;;
	torchloop | torchbench)
		TORCH_RUNS_OUT=${TORCH_RUNS_OUT:-$out/$s.runs} \
			bash "$src/bench/overhead/torch_run.sh" "$build" "${TORCH_ROUNDS:-5}" >"$out/$s.log" 2>&1
		;;
	record)
		rec=/tmp/gt-record
		rm -rf "$rec"
		mkdir -p "$rec"
		{
			stamp "torch_train.py under gputrace run (defaults)"
			"$build/cli/gputrace" run -f -o "$rec/pytorch-train.gtrace" -- \
				python3 "$src/tests/gpu/torch_train.py"
			echo "exit $?"
			stamp "torchrun, 2 ranks, under gputrace run"
			"$build/cli/gputrace" run -f -o "$rec/ddp-2rank.gtrace" -- python3 -m \
				torch.distributed.run --nproc-per-node 2 "$src/tests/gpu/torch_ddp.py"
			echo "exit $?"
			stamp "torchrun, 2 ranks, standalone, one file per rank"
			(cd "$rec" && CUDA_INJECTION64_PATH="$build/collectors/libgputrace-inject.so" \
				GPUTRACE_OUTPUT='rank-%q{RANK}' python3 -m torch.distributed.run \
				--nproc-per-node 2 "$src/tests/gpu/torch_ddp.py")
			echo "exit $?"
			ls -la "$rec"
			for f in "$rec"/*.gtrace; do
				stamp "info $f"
				"$build/cli/gputrace" info "$f"
			done
		} >"$out/record.log" 2>&1
		tar -C "$rec" -czf "$out/record.tgz" .
		;;
	live)
		# gputrace run --live on PyTorch training: screen captures (tmux; without it the raw
		# output of script(1), which the log says), the last screen's counts against
		# `gputrace stats` of the same trace, and the step time bare, under run and under
		# run --live (bench/live-gpu.sh)
		bash "$src/bench/live-gpu.sh" "$build" "${LIVE_ROUNDS:-3}" "${LIVE_STEPS:-600}" \
			>"$out/live.log" 2>&1
		;;
	parity)
		{
			for w in ${PARITY_WORKLOADS:-loop xfmr}; do
				stamp "parity $w: PyTorch's profiler"
				python3 "$src/bench/overhead/torch_bench.py" "$w" --steps 100 \
					--torch-profiler --parity /tmp/parity-$w.json
				stamp "parity $w: gputrace run --capture-range cudaProfilerApi"
				"$build/cli/gputrace" run -q -f -o /tmp/parity-$w.gtrace \
					--capture-range cudaProfilerApi -- python3 \
					"$src/bench/overhead/torch_bench.py" "$w" --steps 100 --parity x
				"$build/cli/gputrace" stats -r kernels -f csv /tmp/parity-$w.gtrace \
					>/tmp/parity-$w.csv
				python3 "$src/bench/overhead/parity.py" /tmp/parity-$w.json "$w" \
					/tmp/parity-$w.csv
				echo "parity exit $?"
			done
		} >"$out/parity.log" 2>&1
		;;
	esac
done
tail -n 3 "$out"/*.log
