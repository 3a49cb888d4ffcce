#!/usr/bin/env bash
# GPU check of `gputrace run --pytorch` with real PyTorch (not in the GPU suite's list yet):
# tests/gpu/torch_train.py traced with --pytorch=shapes; then
#  1. the program's output is the same as without --pytorch, and `import torch` under the
#     hook leaves CUDA uninitialized (torch.cuda.is_initialized() is False) while the NVTX
#     profiler is on (torch.autograd._profiler_enabled()) in the main thread and a new one;
#  2. the trace holds operator ranges (NVTX messages with ", op_id = "), with input sizes;
#  3. stats -r operators: aten::addmm (forward) and AddmmBackward0 or its aten::mm (backward)
#     have kernels; the operators' kernels are most of the eager steps' kernels;
#  4. the chrome export: cpu_op events; every kernel with an External id has a cpu_op of that
#     id in the same process; the share of kernels that have one;
#  5. the Perfetto export imports without errors and has operator arrows (with TP given);
#  6. wall time of the run with and without --pytorch, 3 interleaved rounds (a rough figure,
#     not a benchmark).
# Usage: bash tests/gpu/pytorch-ops.sh BUILD_DIR [OUT_DIR] [trace_processor_shell]
# Prints one line per check, then "N passed, M failed"; exit 1 if any failed, 77 without torch
# or a GPU.
tp=${3:-}
# shellcheck source=torch-check.sh
. "$(dirname "$0")/torch-check.sh"

# 1. unchanged output; CUDA not initialized by the hook
"$py" "$src/torch_train.py" >"$out/plain.out" 2>"$out/plain.err"
"$gt" run -q -f --pytorch=shapes -o "$out/ops" -- "$py" "$src/torch_train.py" \
	>"$out/ops.out" 2>"$out/ops.err"
rc=$?
[ $rc -eq 0 ] && ok "run --pytorch=shapes exit 0" || bad "run --pytorch=shapes exit $rc: $(tail -3 "$out/ops.err")"
cmp -s "$out/plain.out" "$out/ops.out" && ok "program output unchanged: $(cat "$out/ops.out")" ||
	bad "program output differs: [$(cat "$out/plain.out")] vs [$(cat "$out/ops.out")]"
grep -q "gputrace: --pytorch" "$out/ops.err" && bad "hook warned: $(grep gputrace "$out/ops.err")"
init=$("$gt" run -q -f --pytorch -o "$out/init" -- "$py" -c \
	'import torch; print(torch.cuda.is_initialized())' 2>"$out/init.err")
[ "$init" = "False" ] && ok "import torch under the hook: CUDA not initialized" ||
	bad "import torch under the hook: is_initialized() = [$init] $(cat "$out/init.err")"

on=$(GPUTRACE_PYTORCH=shapes PYTHONPATH="$build/python/pytorch" "$py" -c '
import threading, torch
r = [torch.autograd._profiler_enabled()]
t = threading.Thread(target=lambda: r.append(torch.autograd._profiler_enabled()))
t.start(); t.join()
print(r, torch.cuda.is_initialized())' 2>"$out/on.err")
[ "$on" = "[True, True] False" ] && ok "hook alone: NVTX profiler on in main and a new thread, CUDA not initialized" ||
	bad "hook alone: [$on] $(cat "$out/on.err")"

# 2. operator ranges
"$gt" sql "$out/ops.gtrace" -f csv "SELECT count(*), sum(text LIKE '%, sizes = [%') FROM
	NVTX_EVENTS WHERE eventType = 59 AND text LIKE '%, op_id = %'" >"$out/nvtx.csv" 2>/dev/null
read -r nops nsizes < <(tail -1 "$out/nvtx.csv" | tr -d '\r' | tr ',' ' ')
[ "${nops:-0}" -gt 100 ] && ok "operator ranges: $nops ($nsizes with sizes)" ||
	bad "operator ranges: ${nops:-none}"
[ "${nsizes:-0}" -gt 0 ] && ok "input sizes recorded" || bad "no input sizes"

# 3. stats -r operators
"$gt" stats "$out/ops.gtrace" -r operators -f csv >"$out/operators.csv" 2>"$out/stats.err" ||
	bad "stats -r operators: $(cat "$out/stats.err")"
kern() { awk -F, -v n="$1" '$8 == n { print $3; exit }' "$out/operators.csv"; }
k=$(kern aten::addmm)
[ "${k:-0}" -gt 0 ] && ok "aten::addmm: $k kernels" || bad "aten::addmm: no kernels"
kb=$(kern AddmmBackward0)
km=$(kern aten::mm)
[ "${kb:-0}" -gt 0 ] || [ "${km:-0}" -gt 0 ] && ok "backward: AddmmBackward0 ${kb:-0}, aten::mm ${km:-0} kernels" ||
	bad "no backward operator with kernels"
head -12 "$out/operators.csv"

# 4. chrome
"$gt" export "$out/ops.gtrace" -f chrome -o "$out/ops.json" 2>/dev/null
"$py" - "$out/ops.json" >"$out/chrome.txt" 2>"$out/orphans.txt" <<'PYEOF'
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
ops = {(e["pid"], e["args"]["External id"]) for e in ev if e.get("cat") == "cpu_op"}
ks = [e for e in ev if e.get("cat") == "kernel"]
# the launching call: a runtime call, or a driver call made by the program (cuBLAS, Triton)
rt = {e["args"]["correlation"]: e["pid"] for e in ev
      if e.get("cat") in ("cuda_runtime", "cuda_driver")}
with_id = [k for k in ks if "External id" in k["args"]]
orphans = [k for k in with_id
           if (rt.get(k["args"]["correlation"]), k["args"]["External id"]) not in ops]
print(len(ops), len(ks), len(with_id), len(orphans))
for k in orphans[:5]:
    print("orphan:", k["name"][:60], k["args"]["correlation"], k["args"]["External id"],
          rt.get(k["args"]["correlation"]), file=sys.stderr)
PYEOF
read -r nop nk nkid norph <"$out/chrome.txt"
[ "${nop:-0}" -gt 0 ] && ok "chrome: $nop cpu_op events" || bad "chrome: no cpu_op"
[ "${norph:-1}" -eq 0 ] && ok "chrome: $nkid of $nk kernels carry their operator's External id" ||
	bad "chrome: ${norph:-?} kernels with an External id no cpu_op has: $(cat "$out/orphans.txt")"

# 5. perfetto
if [ -n "$tp" ]; then
	"$gt" export "$out/ops.gtrace" -f perfetto -o "$out/ops.pftrace" 2>/dev/null
	"$tp" -Q "select (select count(*) from flow f join slice o on o.id = f.slice_out where
		o.category = 'cpu_op'), (select count(*) from stats where value > 0 and severity in
		('error', 'data_loss'))" "$out/ops.pftrace" 2>/dev/null | tail -1 | tr -d '"' >"$out/tp.txt"
	IFS=, read -r nflows nerr <"$out/tp.txt"
	[ "${nflows:-0}" -gt 0 ] && [ "${nerr:-1}" -eq 0 ] && ok "perfetto: $nflows operator arrows, no import error" ||
		bad "perfetto: operator arrows ${nflows:-?}, import errors ${nerr:-?}"
fi

# 6. wall time, 3 interleaved rounds
for i in 1 2 3; do
	for mode in plain pytorch; do
		args=()
		[ $mode = pytorch ] && args=(--pytorch=shapes)
		s=$(date +%s.%N)
		"$gt" run -q -f "${args[@]}" -o "$out/t-$mode" -- "$py" "$src/torch_train.py" >/dev/null 2>&1
		e=$(date +%s.%N)
		echo "round $i $mode $("$py" -c "print(round($e - $s, 3))") s"
	done
done | tee "$out/times.txt"
finish
