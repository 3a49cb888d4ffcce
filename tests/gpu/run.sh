#!/bin/bash
# GPU suite runner: runs each workload of tests/gpu/workload.cu under libgputrace-inject.so
# (standalone mode: CUDA_INJECTION64_PATH + GPUTRACE_OUTPUT) and checks its trace with
# gt-gpu-check. Works from a copied build directory (no meson needed on the GPU machine).
# Usage: run.sh BUILD_DIR [TEST...]   (no TEST: all of them)
# Prints one line per test and "N passed, M failed, K skipped"; exits 0, 1 on a failure, or
# 77 when every test was skipped (no GPU).
set -u

build=${1:?usage: run.sh BUILD_DIR [TEST...]}
shift
build=$(cd "$build" && pwd)
lib="$build/collectors/libgputrace-inject.so"
wl="$build/tests/gpu/gt-gpu-workload"
check="$build/tests/gpu/gt-gpu-check"
cli="$build/cli/gputrace"
src=$(cd "$(dirname "$0")" && pwd)
work=${GT_GPU_WORK:-$(mktemp -d "${TMPDIR:-/tmp}/gputrace-gpu.XXXXXX")}
mkdir -p "$work"

all_tests="kernels memcpy memset alloc nvtx streams8 graph graph-nodes apierror cuptifirst launches example fork pytorch
sync overhead capture-profiler capture-profiler-activity capture-nvtx p2p ddp-nccl merge-nccl
crash-abort crash-segv crash-kill crash-exit crash-illegal overload-gpu gpu-metrics"
tests=${*:-$all_tests}
passed=0 failed=0 skipped=0

have_gpu() {
	# the driver library and at least one device; the workloads also exit 77 on their own
	{ command -v nvidia-smi >/dev/null && nvidia-smi -L 2>/dev/null | grep -q '^GPU'; } ||
		ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1'
}

result() { # name status detail
	case $2 in
	pass) passed=$((passed + 1)); echo "PASS $1 $3" ;;
	skip) skipped=$((skipped + 1)); echo "SKIP $1 $3" ;;
	*) failed=$((failed + 1)); echo "FAIL $1 $3" ;;
	esac
}

# ddp_stragglers TRACE: stats across ranks on the two-rank NCCL job of ddp-nccl: rank 1's
# extra matmuls (torch_ddp.py) make it the straggler of steps 4 and 8, NCCL's kernels are
# communication and their overlap with compute is a number (docs/stats.md, "Across ranks").
# Prints every straggler step it finds.
ddp_stragglers() {
	local json="$work/ddp-stragglers.json"
	if ! "$cli" stats "$1" --by rank -f json -o "$json" >"$work/ddp-stragglers.log" 2>&1; then
		result ddp-stragglers fail "(gputrace stats exit $?)"; sed 's/^/    /' "$work/ddp-stragglers.log"; return
	fi
	if "${PYTHON:-python3}" - "$json" >"$work/ddp-stragglers.check" 2>&1 <<'PY'; then
import json, sys
d = json.load(open(sys.argv[1]))
s = d["stragglers"]
assert s[0]["rank"] == 1, s
steps = [r["step"] for r in d["steps"] if r["straggler"]]
by = {r["step"]: r["slowest_rank"] for r in d["steps"] if r["straggler"]}
assert by.get(4) == 1 and by.get(8) == 1, d["steps"]
b = {r["rank"]: r for r in d["breakdown"]}
for r in (0, 1):
    assert b[r]["comm_ns"] is not None and b[r]["comm_overlap_pct"] is not None, b[r]
print("straggler steps %s; comm overlapped compute: rank 0 %.2f %%, rank 1 %.2f %%" % (
    ", ".join("%d (rank %d)" % (k, by[k]) for k in steps),
    b[0]["comm_overlap_pct"], b[1]["comm_overlap_pct"]))
PY
		result ddp-stragglers pass "($(tail -n 1 "$work/ddp-stragglers.check"))"
	else
		result ddp-stragglers fail ""; sed 's/^/    /' "$work/ddp-stragglers.check" | head -n 20
	fi
}

# run_standalone NAME CHECKMODE CHECKARG -- ENV... -- WORKLOAD ARGS...
run_standalone() {
	local name=$1 mode=$2 carg=$3
	shift 4
	local envs=()
	while [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	local out="$work/$name.gtrace" log="$work/$name.log" rc
	rm -f "$out"
	if [ -n "${CUDA_INJECTION64_PATH_UNSET:-}" ]; then
		env -u CUDA_INJECTION64_PATH GPUTRACE_OUTPUT="$out" "${envs[@]}" \
			timeout 300 "$wl" "$@" >"$log" 2>&1
	else
		env CUDA_INJECTION64_PATH="$lib" GPUTRACE_OUTPUT="$out" "${envs[@]}" \
			timeout 300 "$wl" "$@" >"$log" 2>&1
	fi
	rc=$?
	if [ $rc -eq 77 ]; then result "$name" skip "(no GPU)"; return; fi
	if [ $rc -ne 0 ]; then result "$name" fail "(workload exit $rc)"; sed 's/^/    /' "$log"; return; fi
	if [ ! -s "$out" ]; then result "$name" fail "(no trace at $out)"; sed 's/^/    /' "$log"; return; fi
	if "$check" "$mode" "$out" $carg >"$log.check" 2>&1; then
		result "$name" pass "$(tail -n 1 "$log.check")"
	else
		result "$name" fail ""
		sed 's/^/    /' "$log.check" "$log" | head -n 40
	fi
}

# run_cli NAME WANT_RC LIMIT_S ARG [RUN OPTION...] -- : `gputrace run [OPTION...] WORKLOAD NAME ARG`
# for a workload that ends badly. Only under the CLI do its records outlive it (the ring is
# mapped by the CLI; standalone, the drainer thread dies with the process). Wants exit status
# WANT_RC within LIMIT_S seconds, `gputrace info` to read the trace, then checks the trace with
# what the run printed (its summary) and what info printed. No core files: the workload also
# makes itself undumpable before it crashes.
run_cli() {
	local name=$1 want=$2 limit=$3 arg=$4
	shift 4
	local opts=()
	while [ "$1" != -- ]; do opts+=("$1"); shift; done
	local out="$work/$name.gtrace" log="$work/$name.log" text="$work/$name.text" rc t0 ms secs
	if [ ! -x "$cli" ]; then result "$name" skip "(no gputrace CLI)"; return; fi
	rm -f "$out"
	t0=$(date +%s%N)
	(ulimit -c 0; GPUTRACE_INJECT_LIB="$lib" exec timeout "$limit" "$cli" run -f -o "$out" \
		"${opts[@]}" -- "$wl" "$name" "$arg") >"$log" 2>&1
	rc=$?
	ms=$((($(date +%s%N) - t0) / 1000000))
	secs=$((ms / 1000)).$(printf %03d $((ms % 1000)))
	if [ $rc -eq 77 ]; then result "$name" skip "(no GPU)"; return; fi
	if [ $rc -ne "$want" ] || [ ! -s "$out" ]; then
		result "$name" fail "(gputrace run exit $rc, want $want, after ${secs} s)"
		sed 's/^/    /' "$log" | tail -n 40; return
	fi
	cp "$log" "$text"
	if ! "$cli" info "$out" >>"$text" 2>&1; then
		result "$name" fail "(gputrace info cannot read the trace)"; sed 's/^/    /' "$text"; return
	fi
	if "$check" "$name" "$out" "$arg" "$text" >"$log.check" 2>&1; then
		result "$name" pass "(exit $rc, ${secs} s) $(tail -n 1 "$log.check")"
	else
		result "$name" fail ""
		sed 's/^/    /' "$log.check" "$text" | head -n 60
	fi
}

run_test() {
	case $1 in
	kernels | memcpy | memset | alloc | nvtx | streams8 | graph | apierror)
		run_standalone "$1" "$1" "" -- -- "$1" ;;
	graph-nodes)
		run_standalone graph-nodes graph-nodes "" -- GPUTRACE_GRAPH=node -- graph ;;
	sync)
		run_standalone sync sync "" -- GPUTRACE_TRACE=default,sync -- sync ;;
	overhead)
		run_standalone overhead overhead "" -- \
			GPUTRACE_TRACE=default,overhead -- launches 20000 ;;
	capture-profiler)
		run_standalone capture-profiler capture-profiler "" -- \
			GPUTRACE_CAPTURE_RANGE=cudaProfilerApi -- capture-profiler ;;
	capture-profiler-activity)
		# API records from activity records, switched with the range as the kinds are
		run_standalone capture-profiler-activity capture-profiler "" -- \
			GPUTRACE_CAPTURE_RANGE=cudaProfilerApi GPUTRACE_API_SOURCE=activity -- \
			capture-profiler ;;
	capture-nvtx)
		run_standalone capture-nvtx capture-nvtx "" -- GPUTRACE_CAPTURE_RANGE=nvtx:train -- \
			capture-nvtx ;;
	p2p)
		run_standalone p2p p2p "" -- -- p2p ;;
	launches)
		run_standalone launches launches 1000000 -- -- launches 1000000 ;;
	cuptifirst)
		# CUDA_INJECTION64_PATH unset (CUPTI would refuse the program itself); the workload
		# loads the library from GT_CUPTIFIRST_LIB after subscribing
		CUDA_INJECTION64_PATH_UNSET=1 run_standalone cuptifirst cuptifirst "" -- \
			GT_CUPTIFIRST_LIB="$lib" -- cuptifirst
		# the one line on stderr, and the program's own output unchanged
		if [ -s "$work/cuptifirst.log" ]; then
			local lines
			lines=$(grep -c '^gputrace: another profiler (e.g. Nsight Systems) already uses CUPTI in this process; run without it$' "$work/cuptifirst.log")
			if [ "$lines" != 1 ] || ! grep -qx 'cuptifirst done' "$work/cuptifirst.log"; then
				result cuptifirst-stderr fail "(want the refusal line once and the program's output)"
				sed 's/^/    /' "$work/cuptifirst.log"
			else
				result cuptifirst-stderr pass "(one line on stderr)"
			fi
		fi ;;
	example)
		# the bundled example under `gputrace run`, as the README's first command runs it:
		# 20 steps of 2 matmul, 1 relu and 1 reduce_sum kernels (examples/example.cu)
		local out="$work/example.gtrace" rc got
		if [ ! -x "$cli" ]; then result example skip "(no gputrace CLI)"; return; fi
		if [ ! -x "$build/examples/gputrace-example" ]; then
			result example skip "(example not built)"; return
		fi
		rm -f "$out"
		GPUTRACE_INJECT_LIB="$lib" timeout 300 "$cli" run -f -o "$out" --export perfetto -- \
			"$build/examples/gputrace-example" >"$work/example.log" 2>&1
		rc=$?
		if [ $rc -ne 0 ] || [ ! -s "$out" ] || [ ! -s "${out%.gtrace}.pftrace" ]; then
			result example fail "(gputrace run exit $rc)"; sed 's/^/    /' "$work/example.log"; return
		fi
		got=$("$cli" stats "$out" --report kernels -f csv | tail -n +2 | awk -F, '{print $3}' |
			sort -n | tr '\n' ' ')
		if [ "$got" = "20 20 40 " ] && grep -q '^losses: *none$' <("$cli" info "$out"); then
			result example pass "(kernel instances: $got)"
		else
			result example fail "(kernel instances '$got', want '20 20 40 ')"
			"$cli" info "$out" | sed 's/^/    /'
		fi ;;
	fork)
		# a fork+exec child traced in the same session: needs `gputrace run`
		local out="$work/fork.gtrace" rc
		if [ ! -x "$cli" ]; then result fork skip "(no gputrace CLI)"; return; fi
		rm -f "$out"
		GPUTRACE_INJECT_LIB="$lib" timeout 300 "$cli" run -f -o "$out" -- "$wl" fork \
			>"$work/fork.log" 2>&1
		rc=$?
		if [ $rc -eq 77 ]; then result fork skip "(no GPU)"; return; fi
		if [ $rc -ne 0 ] || [ ! -s "$out" ]; then
			result fork fail "(gputrace run exit $rc)"; sed 's/^/    /' "$work/fork.log"; return
		fi
		if "$check" fork "$out" >"$work/fork.check" 2>&1; then
			result fork pass "$(tail -n 1 "$work/fork.check")"
		else
			result fork fail ""; sed 's/^/    /' "$work/fork.check" | head -n 40
		fi ;;
	pytorch)
		# a real application: PyTorch training with a CUDA graph, under the library
		local out="$work/pytorch.gtrace" rc
		rm -f "$out"
		env CUDA_INJECTION64_PATH="$lib" GPUTRACE_OUTPUT="$out" \
			timeout 300 "${PYTHON:-python3}" "$src/torch_train.py" >"$work/pytorch.log" 2>&1
		rc=$?
		if [ $rc -eq 77 ]; then result pytorch skip "($(tail -n 1 "$work/pytorch.log"))"; return; fi
		if [ $rc -ne 0 ] || [ ! -s "$out" ]; then
			result pytorch fail "(python exit $rc)"; tail -n 20 "$work/pytorch.log" | sed 's/^/    /'; return
		fi
		if "$check" pytorch "$out" >"$work/pytorch.check" 2>&1; then
			result pytorch pass "$(tail -n 1 "$work/pytorch.check")"
		else
			result pytorch fail ""; sed 's/^/    /' "$work/pytorch.check" | head -n 40
		fi ;;
	ddp-nccl)
		# two ranks of a DDP job under `gputrace run`, one GPU each so that torch_ddp.py
		# picks NCCL; split by ranks, each file must say so (docs/exporters.md, "Ranks")
		local out="$work/ddp-nccl.gtrace" rc ngpu
		ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
		if [ ! -x "$cli" ]; then result ddp-nccl skip "(no gputrace CLI)"; return; fi
		if [ "$ngpu" -lt 2 ]; then result ddp-nccl skip "(NCCL needs 2 GPUs, $ngpu here)"; return; fi
		rm -rf "$out" "$work/ddp-nccl-ranks"
		GPUTRACE_INJECT_LIB="$lib" timeout 300 "$cli" run -f -o "$out" -- \
			"${PYTHON:-python3}" -m torch.distributed.run --nproc-per-node 2 \
			"$src/torch_ddp.py" >"$work/ddp-nccl.log" 2>&1
		rc=$?
		if grep -q '^no torch: skipping' "$work/ddp-nccl.log"; then
			result ddp-nccl skip "(no torch)"; return
		fi
		if [ $rc -ne 0 ] || [ ! -s "$out" ]; then
			result ddp-nccl fail "(gputrace run exit $rc)"; tail -n 20 "$work/ddp-nccl.log" | sed 's/^/    /'; return
		fi
		if ! "$cli" export "$out" -f chrome --split ranks -o "$work/ddp-nccl-ranks" -q \
			>>"$work/ddp-nccl.log" 2>&1; then
			result ddp-nccl fail "(export --split ranks failed)"; tail -n 5 "$work/ddp-nccl.log" | sed 's/^/    /'; return
		fi
		if "${PYTHON:-python3}" - "$work/ddp-nccl-ranks" >"$work/ddp-nccl.check" 2>&1 <<'PY'; then
import json, sys
for r in (0, 1):
    f = "%s/rank-%d.pt.trace.json" % (sys.argv[1], r)
    j = json.load(open(f))
    d = j["distributedInfo"]
    assert d == {"backend": "nccl", "rank": r, "world_size": 2, "local_rank": r}, (f, d)
    steps = [e["name"] for e in j["traceEvents"] if e["name"].startswith("ProfilerStep#")]
    assert steps == ["ProfilerStep#%d" % i for i in range(12)], (f, steps)
    nccl = [e for e in j["traceEvents"] if e.get("cat") == "kernel" and "nccl" in e["name"]]
    assert nccl, (f, "no NCCL kernel")
    kpids = {e["pid"] for e in j["traceEvents"] if e.get("cat") == "kernel"}
    # its own GPU (device r), as pid r; 5000000 + r when the rank's pid is below 256
    assert kpids in ({r}, {5000000 + r}), (f, kpids)
print("2 ranks, nccl, 12 steps each, %d NCCL kernels in rank 1" % len(nccl))
PY
			result ddp-nccl pass "($(tail -n 1 "$work/ddp-nccl.check"))"
			ddp_stragglers "$out"
		else
			result ddp-nccl fail ""; sed 's/^/    /' "$work/ddp-nccl.check" | head -n 20
		fi ;;
	merge-nccl)
		# two NCCL ranks (2 GPUs) traced without the CLI, one file each as a multi-host
		# job writes them, merged with --align nccl (docs/merge.md): one host and clock, so
		# the wall clocks agree to the anchors' skew and the NCCL correction is the
		# estimator's own error; it must pair every collective and stay within 50 us
		local dir="$work/merge-nccl" ngpu
		ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
		if [ ! -x "$cli" ]; then result merge-nccl skip "(no gputrace CLI)"; return; fi
		if [ "$ngpu" -lt 2 ]; then result merge-nccl skip "(NCCL needs 2 GPUs, $ngpu here)"; return; fi
		rm -rf "$dir" && mkdir -p "$dir"
		(cd "$dir" && CUDA_INJECTION64_PATH="$lib" GPUTRACE_OUTPUT='rank-%q{RANK}' timeout 300 \
			"${PYTHON:-python3}" -m torch.distributed.run --nproc-per-node 2 \
			"$src/torch_ddp.py") >"$dir/run.log" 2>&1
		if grep -q '^no torch: skipping' "$dir/run.log"; then
			result merge-nccl skip "(no torch)"; return
		fi
		if [ ! -s "$dir/rank-0.gtrace" ] || [ ! -s "$dir/rank-1.gtrace" ]; then
			result merge-nccl fail "(no rank files)"; tail -n 20 "$dir/run.log" | sed 's/^/    /'; return
		fi
		if ! "$cli" merge -o "$dir/merged.gtrace" --align nccl "$dir/rank-0.gtrace" \
			"$dir/rank-1.gtrace" >"$dir/merge.log" 2>&1; then
			result merge-nccl fail "(merge failed)"; sed 's/^/    /' "$dir/merge.log"; return
		fi
		# "  2 PATH: host H, 1 process; offset O ns = wall clock W ns, NCCL correction C ns
		# from N collectives (spread L ns .. H ns)"
		if awk '/^  2 .*NCCL correction/ {
				for (i = 1; i <= NF; i++) {
					if ($i == "correction") c = $(i + 1)
					if ($i == "from") n = $(i + 1)
					if ($i == "unpaired") u = 1
				}
				c = c < 0 ? -c : c
				ok = n > 0 && c <= 50000 && !u
			}
			END { exit ok ? 0 : 1 }' "$dir/merge.log"; then
			result merge-nccl pass "($(grep '^  2 ' "$dir/merge.log" | sed 's/^  2 [^:]*: //'))"
		else
			result merge-nccl fail ""; sed 's/^/    /' "$dir/merge.log"
		fi ;;
	# K=50 gt_add kernels, synchronized and flushed (flush every 50 ms, then 300 ms of
	# sleep), then the end named; the exit status is the shell's: 128 + the signal
	crash-abort) run_cli crash-abort 134 120 50 --flush-interval 50 -- ;;
	crash-segv) run_cli crash-segv 139 120 50 --flush-interval 50 -- ;;
	crash-kill) run_cli crash-kill 137 120 50 --flush-interval 50 -- ;;
	crash-exit) run_cli crash-exit 5 120 50 --flush-interval 50 -- ;;
	crash-illegal) run_cli crash-illegal 3 120 50 --flush-interval 50 -- ;;
	# 200,000 launches through a 64 KiB ring: completes (exit 0, no hang), losses counted
	overload-gpu) run_cli overload-gpu 0 120 200000 --buffer-size 64K -- ;;
	gpu-metrics)
		# 300,000 launches, a longer run than the kernels workload (0.4 s, first on a fresh
		# machine, ended before the first sample) under run --gpu-metrics
		# (docs/gpu-metrics.md): samples with
		# their metrics in the trace, then stats' report; else the trace's notices (from
		# gputrace info), which say why not. A pass names the metrics the GPU refused
		# ("sampled without ..."), if any.
		local out="$work/gm.gtrace" log="$work/gm.log" info="$work/gm-info.log" rc n notes
		if [ ! -x "$cli" ]; then result gpu-metrics skip "(no gputrace CLI)"; return; fi
		rm -f "$out"
		GPUTRACE_INJECT_LIB="$lib" timeout 300 "$cli" run -f -o "$out" --gpu-metrics -- \
			"$wl" launches 300000 >"$log" 2>&1
		rc=$?
		if [ $rc -eq 77 ]; then result gpu-metrics skip "(no GPU)"; return; fi
		if [ $rc -ne 0 ] || [ ! -s "$out" ]; then
			result gpu-metrics fail "(gputrace run exit $rc)"; sed 's/^/    /' "$log"; return
		fi
		"$cli" info "$out" >"$info" 2>&1
		# info's notices: the indented lines under "notices:"
		notes=$(awk '/^notices:/ {on = 1; next} on && /^  / {print; next} {on = 0}' "$info")
		n=$(awk '$1 == "gpu_sample" {print $2}' "$info")
		if [ -n "$n" ] && [ "$n" -gt 0 ] &&
			"$cli" stats "$out" -r gpu-metrics >>"$log" 2>&1 &&
			grep -q 'SMs Active' "$log"; then
			result gpu-metrics pass "($n samples; $(grep -m1 'sampled by pid' "$log" |
				sed 's/^ *//'))"
			printf '%s\n' "$notes" | grep 'sampled without' | sed 's/^ */    /'
		else
			if [ -n "$n" ] && [ "$n" -gt 0 ]; then
				result gpu-metrics fail "($n samples, not in stats -r gpu-metrics)"
			else
				result gpu-metrics fail "(no samples; the trace's notices follow)"
			fi
			if [ -n "$notes" ]; then
				printf '%s\n' "$notes" | sed 's/^ */    /'
			else
				echo "    (none: no notice in the trace)"
			fi
			cat "$info" "$log" | sed 's/^/    /' | tail -n 60
		fi ;;
	*) result "$1" fail "(unknown test)" ;;
	esac
}

if ! have_gpu; then
	for t in $tests; do result "$t" skip "(no GPU: no nvidia-smi device, no libcuda.so.1)"; done
else
	for t in $tests; do run_test "$t"; done
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ -z "${GT_GPU_WORK:-}" ] && rm -rf "$work"
[ $failed -gt 0 ] && exit 1
[ $passed -eq 0 ] && exit 77
exit 0
