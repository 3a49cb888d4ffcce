#!/usr/bin/env bash
# CLI test for PyTorch operators (gputrace run --pytorch, exporters/model/torchops.c):
# 1. the start-up hook (python/pytorch/sitecustomize.py) on a stand-in torch package
#    (tests/pytorch/fake): emit_nvtx entered once torch is imported, with record_shapes as
#    asked, on the main thread and on a thread the program starts (which leaves it as it
#    ends), never torch.cuda.synchronize; a sitecustomize of the user's still runs; a program that never
#    imports torch is left alone; the program's output and exit status are unchanged; the
#    same through GPUTRACE_PYTORCH without the CLI; bad options;
# 2. tests/torchop-app, which pushes emit_nvtx's ranges through NVTX, traced by gputrace run:
#    its operators in the chrome export and the operators report;
# 3. mktrace --torch-ops, a trace of known operators, calls and GPU work: the operators
#    report, the chrome export's External ids, the Perfetto export through its importer.
# Usage: cli-pytorch.sh gputrace torchop-app libgputrace-inject.so mktrace python3 [tp]
set -u
gputrace=$(realpath "$1")
app=$(realpath "$2")
inject=$(realpath "$3")
mktrace=$(realpath "$4")
py=$5
tp=${6:-}
src=$(realpath "$(dirname "$0")")
hook=$(realpath "$(dirname "$gputrace")/../python/pytorch")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=cli-common.sh
. "$src/cli-common.sh"
cd "$tmp" || exit 1
export GPUTRACE_INJECT_LIB="$inject"
unset GPUTRACE_PYTORCH

# ---- 1. the hook -------------------------------------------------------------------------
export PYTHONPATH="$src/pytorch/fake:$src/pytorch/usersite"
export FAKE_TORCH_LOG="$tmp/log"
model="$src/pytorch/model.py"

log_is() { # WANT: the stand-in's log, exactly
	local got
	got=$(cat "$tmp/log" 2>/dev/null)
	[ "$got" = "$1" ] || fail "the log was [$got], expected [$1]"
	rm -f "$tmp/log"
}

expect_rc 3 "$py" "$model" torch
cp "$tmp/out" "$tmp/plain-torch"
log_is "user sitecustomize ran
torch imported
cuda.synchronize called"
expect_rc 3 "$py" "$model" none
cp "$tmp/out" "$tmp/plain-none"
log_is "user sitecustomize ran"
grep -q "^loader SourceFileLoader SourceFileLoader$" "$tmp/plain-torch" ||
	fail "the stand-in was not imported: $(cat "$tmp/plain-torch")"

expect_rc 3 "$gputrace" run -q --pytorch=shapes -o t1 -- "$py" "$model" torch
cmp -s "$tmp/out" "$tmp/plain-torch" || fail "--pytorch=shapes changed the output: $(cat "$tmp/out")"
expect_err ""
log_is "user sitecustomize ran
torch imported
emit_nvtx entered record_shapes=True thread=MainThread
cuda.synchronize called
emit_nvtx entered record_shapes=True thread=worker
emit_nvtx exited thread=Dummy-1"

expect_rc 3 "$gputrace" run -q --pytorch -o t2 -- "$py" "$model" torch
cmp -s "$tmp/out" "$tmp/plain-torch" || fail "--pytorch changed the output: $(cat "$tmp/out")"
log_is "user sitecustomize ran
torch imported
emit_nvtx entered record_shapes=False thread=MainThread
cuda.synchronize called
emit_nvtx entered record_shapes=False thread=worker
emit_nvtx exited thread=Dummy-1"

# a program that never imports torch
expect_rc 3 "$gputrace" run -q --pytorch=shapes -o t3 -- "$py" "$model" none
cmp -s "$tmp/out" "$tmp/plain-none" || fail "--pytorch changed the output: $(cat "$tmp/out")"
expect_err ""
log_is "user sitecustomize ran"

# without the CLI: the folder on PYTHONPATH and GPUTRACE_PYTORCH
PYTHONPATH="$hook:$PYTHONPATH" GPUTRACE_PYTORCH=on expect_rc 3 "$py" "$model" torch
cmp -s "$tmp/out" "$tmp/plain-torch" || fail "the hook changed the output: $(cat "$tmp/out")"
log_is "user sitecustomize ran
torch imported
emit_nvtx entered record_shapes=False thread=MainThread
cuda.synchronize called
emit_nvtx entered record_shapes=False thread=worker
emit_nvtx exited thread=Dummy-1"
PYTHONPATH="$hook:$PYTHONPATH" expect_rc 3 "$py" "$model" torch
log_is "user sitecustomize ran
torch imported
cuda.synchronize called"
PYTHONPATH="$hook:$PYTHONPATH" GPUTRACE_PYTORCH=bogus expect_rc 3 "$py" "$model" torch
expect_err "gputrace: --pytorch: GPUTRACE_PYTORCH=bogus is not valid; use on or shapes"
rm -f "$tmp/log"

# refused before anything runs
expect_rc 64 "$gputrace" run --pytorch=all -o t4 -- "$py" "$model" torch
expect_err "gputrace: run: --pytorch: 'all' is not valid; use --pytorch, or --pytorch=shapes for input shapes"
expect_rc 64 "$gputrace" run --pytorch shapes
expect_err "gputrace: run: --pytorch takes shapes as --pytorch=shapes (one word); 'shapes' would be run as the program"
expect_rc 64 "$gputrace" run -t cuda --pytorch -o t4 -- "$py" "$model" torch
expect_err "gputrace: run: --pytorch records PyTorch's operators as NVTX ranges: add nvtx to --trace"
[ -e "$tmp/log" ] && fail "a refused run ran the program"
[ -e t4.gtrace ] && fail "a refused run left a trace"
unset PYTHONPATH FAKE_TORCH_LOG

# ---- 2. emit_nvtx's ranges through NVTX -------------------------------------------------
expect_rc 0 "$gputrace" run -q -o app -- "$app"
expect_rc 0 "$gputrace" export app.gtrace -f chrome -o app.json
# the cpu_op events in start order: name, args
cpu_ops() { # JSON
	"$py" - "$1" >"$tmp/out" <<'PYEOF'
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
ops = sorted((e for e in ev if e.get("cat") == "cpu_op"), key=lambda e: (e["ts"], -e["dur"]))
for e in ops:
    a = dict(e["args"])
    print(e["name"], e["tid"] == ops[0]["tid"], json.dumps(a, sort_keys=True))
PYEOF
}
cpu_ops app.json
expect_out 'aten::linear True {"External id": 1, "Input Dims": [[64, 128], [32, 128], [32]], "Record function id": 10, "Sequence number": 3}
aten::t True {"External id": 2, "Input Dims": [[32, 128]], "Record function id": 11}
aten::addmm True {"External id": 3, "Input Dims": [[32], [64, 128], [128, 32], [], []], "Record function id": 12, "Sequence number": 4}
aten::relu True {"External id": 4, "Input Dims": [[64, 32]], "Record function id": 13, "Sequence number": 5}
AddmmBackward0 False {"External id": 5, "Record function id": 20, "Sequence number": 4}'
grep -c '"name":"forward"' app.json >"$tmp/out"
expect_out 1
expect_rc 0 "$gputrace" stats app.gtrace -r operators -f csv
cut -d, -f1-6,8- "$tmp/out" >"$tmp/cut"
got=$(cat "$tmp/cut")
want='# operators
gpu_ns,gpu_ops,kernels,calls,api_ns,instances,operator
0,0,0,0,0,1,aten::linear
0,0,0,0,0,1,aten::addmm
0,0,0,0,0,1,aten::relu
0,0,0,0,0,1,aten::t
0,0,0,0,0,1,AddmmBackward0

# operator_shapes
gpu_ns,gpu_ops,kernels,calls,api_ns,instances,operator,input_dims
0,0,0,0,0,1,aten::linear,"[[64, 128], [32, 128], [32]]"
0,0,0,0,0,1,aten::addmm,"[[32], [64, 128], [128, 32], [], []]"
0,0,0,0,0,1,aten::relu,"[[64, 32]]"
0,0,0,0,0,1,aten::t,"[[32, 128]]"
0,0,0,0,0,1,AddmmBackward0,'
# the rows follow CPU time, which the clock decides: compare them as sets
[ "$(sort <<<"$got")" = "$(sort <<<"$want")" ] || fail "operators of torchop-app: [$got]"

# ---- 3. a trace of known operators and GPU work -------------------------------------------
expect_rc 0 "$mktrace" -o ops.gtrace --torch-ops
expect_rc 0 "$gputrace" stats ops.gtrace -r operators -f csv
expect_out '# operators
gpu_ns,gpu_ops,kernels,calls,api_ns,instances,cpu_ns,operator
5000,4,3,4,1700,2,8000,aten::addmm
2000,1,1,1,300,1,1500,AddmmBackward0
800,1,1,1,500,1,2000,aten::relu
0,0,0,0,0,1,8000,aten::linear
0,0,0,0,0,1,400,aten::t

# operator_shapes
gpu_ns,gpu_ops,kernels,calls,api_ns,instances,cpu_ns,operator,input_dims
2500,2,2,2,1000,1,6000,aten::addmm,"[[32], [64, 128], [128, 32], [], []]"
2500,2,1,2,700,1,2000,aten::addmm,"[[32], [16, 128], [128, 32], [], []]"
2000,1,1,1,300,1,1500,AddmmBackward0,
800,1,1,1,500,1,2000,aten::relu,"[[64, 32]]"
0,0,0,0,0,1,8000,aten::linear,"[[64, 128], [32, 128], [32]]"
0,0,0,0,0,1,400,aten::t,"[[32, 128]]"'
expect_rc 0 "$gputrace" export ops.gtrace -f chrome -o ops.json
# every launch and its GPU work with its operator's External id (none: outside every one)
"$py" - ops.json >"$tmp/out" <<'PYEOF'
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
ops = {e["args"]["External id"]: e["name"] for e in ev if e.get("cat") == "cpu_op"}
for e in sorted((e for e in ev if e.get("cat") in ("cuda_runtime", "kernel", "gpu_memcpy")),
                key=lambda e: (e["args"]["correlation"], e["cat"])):
    x = e["args"].get("External id")
    print(e["args"]["correlation"], e["cat"], e["name"], x, ops.get(x))
PYEOF
expect_out '1 cuda_runtime cudaLaunchKernel 3 aten::addmm
1 kernel sm90_gemm 3 aten::addmm
2 cuda_runtime cudaLaunchKernel 3 aten::addmm
2 kernel bias_add 3 aten::addmm
3 cuda_runtime cudaLaunchKernel 4 aten::relu
3 kernel relu_kernel 4 aten::relu
4 cuda_runtime cudaLaunchKernel None None
4 kernel other_kernel None None
5 cuda_runtime cudaLaunchKernel 5 aten::addmm
5 kernel sm90_gemm 5 aten::addmm
6 cuda_runtime cudaMemcpyAsync 5 aten::addmm
6 gpu_memcpy Memcpy HtoD (Unknown -> Unknown) 5 aten::addmm
7 cuda_runtime cudaLaunchKernel 6 AddmmBackward0
7 kernel sm90_gemm 6 AddmmBackward0'

# the same in rank 0's file of --split ranks
expect_rc 0 "$gputrace" export ops.gtrace -f chrome --split ranks -o split
"$py" - split/rank-0.pt.trace.json >"$tmp/out" <<'PYEOF'
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
ops = {e["args"]["External id"]: e["name"] for e in ev if e.get("cat") == "cpu_op"}
print(len(ops), sorted((e["args"]["correlation"], e["args"].get("External id"))
                       for e in ev if e.get("cat") == "kernel"))
PYEOF
expect_out '6 [(1, 3), (2, 3), (3, 4), (4, None), (5, 5), (7, 6)]'

if [ -n "$tp" ] && [ -x "$tp" ] && "$tp" --version >/dev/null 2>&1; then
	expect_rc 0 "$gputrace" export ops.gtrace -f perfetto -o ops.pftrace
	cat >q.sql <<'SQLEOF'
select s.name, s.ts - (select start_ts from trace_bounds) as at, s.dur,
  extract_arg(s.arg_set_id, 'debug.input dims') as dims,
  extract_arg(s.arg_set_id, 'debug.sequence number') as seq,
  extract_arg(s.arg_set_id, 'debug.record function id') as op_id
from slice s where s.category = 'cpu_op' order by s.ts;
select so.name as op, si.name as gpu, si.ts - (select start_ts from trace_bounds) as at
from flow f join slice so on so.id = f.slice_out join slice si on si.id = f.slice_in
where so.category = 'cpu_op' order by si.ts;
select count(*) as errors from stats where value > 0 and severity in ('error', 'data_loss');
SQLEOF
	"$tp" -q q.sql ops.pftrace >"$tmp/out" 2>"$tmp/err" || fail "trace_processor: $(cat "$tmp/err")"
	expect_out '"name","at","dur","dims","seq","op_id"
"aten::linear",2000,8000,"[[64, 128], [32, 128], [32]]",3,10
"aten::t",2100,400,"[[32, 128]]","[NULL]",11
"aten::addmm",3000,6000,"[[32], [64, 128], [128, 32], [], []]",4,12
"aten::relu",11000,2000,"[[64, 32]]",5,13
"aten::addmm",15000,2000,"[[32], [16, 128], [128, 32], [], []]",6,14
"AddmmBackward0",19000,1500,"[NULL]",4,20

"op","gpu","at"
"aten::addmm","sm90_gemm",5000
"aten::addmm","bias_add",7000
"aten::relu","relu_kernel",12000
"aten::addmm","sm90_gemm",16000
"aten::addmm","Memcpy HtoD (Unknown -> Unknown)",18000
"AddmmBackward0","sm90_gemm",20000

"errors"
0'
else
	echo "cli-pytorch: no trace_processor_shell: the Perfetto checks were skipped"
fi
cli_done cli-pytorch
