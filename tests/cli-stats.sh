#!/usr/bin/env bash
# CLI test for `gputrace stats`: option errors (exit 64 with their message), a missing (66)
# and an unreadable (65) trace, and, given tests/mktrace, the reports on a synthetic trace.
# Usage: cli-stats.sh PATH/TO/gputrace [PATH/TO/mktrace]
set -u
gputrace=$1
mktrace=${2:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/cli-common.sh"

expect_empty_out() {
	[ ! -s "$tmp/out" ] || fail "unexpected output: $(head -c 500 "$tmp/out")"
}

# Help and usage errors.
expect_rc 0 "$gputrace" stats --help
out_has_line "Usage: gputrace stats [options] FILE..."
expect_rc 64 "$gputrace" stats
expect_err "gputrace: stats: no trace; usage: gputrace stats [options] FILE..."
expect_rc 64 "$gputrace" stats --bogus x.gtrace
expect_err "gputrace: stats: unknown option '--bogus'; see 'gputrace stats --help'"
expect_rc 64 "$gputrace" stats --report kernel x.gtrace
expect_err "gputrace: stats: unknown report 'kernel'; choose from kernels, api, memcpy, memset, nvtx, memory, errors, losses, nvtx-gpu, gpu-metrics, operators, breakdown, steps, stragglers, all"
expect_rc 64 "$gputrace" stats -r kernels, x.gtrace
expect_err "gputrace: stats: unknown report 'kernels,'; choose from kernels, api, memcpy, memset, nvtx, memory, errors, losses, nvtx-gpu, gpu-metrics, operators, breakdown, steps, stragglers, all"
expect_rc 64 "$gputrace" stats --format xml x.gtrace
expect_err "gputrace: stats: unknown format 'xml'; choose table, csv or json"
expect_rc 64 "$gputrace" stats --limit ten x.gtrace
expect_err "gputrace: stats: --limit takes a number of rows, not 'ten'"
expect_rc 64 "$gputrace" stats --by rack x.gtrace
expect_err "gputrace: stats: --by takes rank, process, device, host or source, not 'rack'"
expect_rc 64 "$gputrace" stats --min-lag -1 x.gtrace
expect_err "gputrace: stats: --min-lag takes a percentage (0 or more), not '-1'"
expect_rc 64 "$gputrace" stats --step '' x.gtrace
expect_err "gputrace: stats: --step takes the name of an NVTX range, e.g. --step train_step"
expect_rc 64 "$gputrace" stats -r memory,steps x.gtrace
expect_err "gputrace: stats: unknown report 'memory,steps'; choose from kernels, api, memcpy, memset, nvtx, memory, errors, losses, nvtx-gpu, gpu-metrics, operators, breakdown, steps, stragglers, all"
expect_rc 64 "$gputrace" stats -r memory a.gtrace b.gtrace
expect_err "gputrace: stats: 'memory': across ranks the reports are breakdown, steps, stragglers, kernels, api, memcpy, memset, nvtx and all; memory, errors, losses, nvtx-gpu, gpu-metrics and operators are of one trace"
expect_rc 64 "$gputrace" stats --by device -r steps a.gtrace
expect_err "gputrace: stats: steps and stragglers are per rank or process, not --by device"
expect_rc 64 "$gputrace" stats --by device -r kernels,nvtx a.gtrace
expect_err "gputrace: stats: API calls and NVTX ranges belong to no GPU: not --by device"
expect_rc 64 "$gputrace" stats x.gtrace --format
expect_err "gputrace: stats: option '--format' needs a value; see 'gputrace stats --help'"
expect_empty_out

# Missing and unreadable traces.
expect_rc 66 "$gputrace" stats "$tmp/none.gtrace"
grep -q "^gputrace: stats: $tmp/none.gtrace: No such file or directory$" "$tmp/err" ||
	fail "missing file: stderr was [$(cat "$tmp/err")]"
printf 'this is not a trace, just text long enough to hold a header and more...\n%.0s' \
	$(seq 20) >"$tmp/text.gtrace"
expect_rc 65 "$gputrace" stats "$tmp/text.gtrace"
grep -q "^gputrace: stats: cannot read $tmp/text.gtrace: " "$tmp/err" ||
	fail "text file: stderr was [$(cat "$tmp/err")]"
: >"$tmp/empty.gtrace"
expect_rc 65 "$gputrace" stats "$tmp/empty.gtrace"
expect_empty_out

# A synthetic trace (tests/mktrace): 3000 kernels of 12 names in 2 processes, a launch API
# record per kernel, a 4 MiB copy every 64 kernels, 7 CUPTI drops and 5 ring-full losses.
if [ -n "$mktrace" ]; then
	"$mktrace" -o "$tmp/t.gtrace" --kernels 3000 --names 12 --processes 2 --api \
		--memcpy --losses 5 --seed 7 >/dev/null 2>"$tmp/err" ||
		fail "mktrace failed: $(cat "$tmp/err")"
	"$mktrace" -o "$tmp/nf.gtrace" --kernels 3000 --names 12 --processes 2 --api \
		--memcpy --losses 5 --seed 7 --chunk-bytes 65536 --no-footer >/dev/null 2>"$tmp/err" ||
		fail "mktrace --no-footer failed: $(cat "$tmp/err")"

	api_head="time_pct,total_ns,calls,avg_ns,median_ns,min_ns,max_ns,stddev_ns,p99_ns,name"
	api_row="100.00,12772477,3000,4257.5,4239.0,2502,5999,999.7,5967,cudaLaunchKernel"
	expect_rc 0 "$gputrace" stats -f csv -r api "$tmp/t.gtrace"
	expect_out "$api_head
$api_row"
	# options after the file name, and the same numbers from a file without its footer
	expect_rc 0 "$gputrace" stats "$tmp/nf.gtrace" --report api --format csv
	expect_out "$api_head
$api_row"

	expect_rc 0 "$gputrace" stats -f csv -r memcpy "$tmp/t.gtrace"
	out_has_line "100.00,1968000,47,41872.3,41855.0,40118,43630,1191.7,43630,197132288,4194304.0,4194304,4194304,100.169,HtoD"

	expect_rc 0 "$gputrace" stats -f csv -r kernels "$tmp/t.gtrace"
	[ "$(wc -l <"$tmp/out")" -eq 13 ] || fail "kernels csv: $(wc -l <"$tmp/out") lines, expected 13"
	out_has_line "time_pct,total_ns,instances,avg_ns,median_ns,min_ns,max_ns,stddev_ns,p99_ns,name"
	out_has_line '13.96,20605108,159,129591.9,130303.0,122830,135614,3895.4,135614,"void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps<float, float, float, float>, unsigned int, float, 4> >_v0"'
	out_has_line "0.33,486648,158,3080.1,3079.0,2930,3236,88.8,3236,ampere_sgemm_128x64_tn_v11"

	expect_rc 0 "$gputrace" stats -r kernels -n 2 "$tmp/t.gtrace"
	out_has_line "GPU kernels"
	out_has_line "  ... 10 more not shown"
	[ "$(wc -l <"$tmp/out")" -eq 5 ] || fail "kernels -n 2: $(wc -l <"$tmp/out") lines, expected 5"

	expect_rc 0 "$gputrace" stats -r losses "$tmp/t.gtrace"
	out_has_line "Source           Records lost  Of which"
	out_has_line "cupti_dropped               7  kernel 7"
	out_has_line "ring_full                   5  api 5"
	out_has_line "damaged_file                0  -"
	out_has_line "nvtx_unrecorded             0  -"
	out_has_line "                   no            2               0            0 B                0"
	expect_rc 0 "$gputrace" stats -r losses -f csv "$tmp/nf.gtrace"
	out_has_line "true,4,0,0,0"

	expect_rc 0 "$gputrace" stats -r errors,memory "$tmp/t.gtrace"
	out_has_line "  no API call returned an error"
	out_has_line "  no allocations in this trace"

	expect_rc 0 "$gputrace" stats -f json "$tmp/t.gtrace"
	if command -v python3 >/dev/null; then
		python3 -c 'import json, sys
d = json.load(sys.stdin)
assert sum(k["instances"] for k in d["kernels"]) == 3000, "kernel instances"
assert len(d["kernels"]) == 12, "kernel names"
assert d["api"][0]["total_ns"] == 12772477, "api total"
assert d["trace"]["host"] == "gpu-node-17", "host"
assert [l["records"] for l in d["losses"]] == [7, 5, 0, 0, 0, 0, 0, 0, 0, 0], "losses"
assert d["reader"]["recovered"] is False, "reader"' <"$tmp/out" 2>"$tmp/err" ||
			fail "stats -f json: $(cat "$tmp/err")"
	fi
fi

# Across ranks: a four-rank job (tests/mktrace) whose rank 2 runs its kernels three times as
# long in steps 3, 7 and 9, each step waiting for its GPU work; NCCL's all-reduce in each.
if [ -n "$mktrace" ]; then
	"$mktrace" -o "$tmp/job.gtrace" --kernels 4000 --names 12 --processes 4 --api --nccl \
		--steps --sync-steps --device-zero --straggler 2:3,7,9 >/dev/null 2>"$tmp/err" ||
		fail "mktrace --straggler failed: $(cat "$tmp/err")"
	expect_rc 0 "$gputrace" stats -f csv -r stragglers,breakdown "$tmp/job.gtrace"
	out_has_line "rank,1,4,step,53,false"
	out_has_line "rank,pid,host,straggler_steps,steps,compared_steps,lag_ns,max_lag_ns,worst_step,most_compute_steps,mean_compute_ns,mean_duration_ns,comm_overlap_pct"
	out_has_line '2,4114,gpu-node-17,3,"3, 7, 9",52,4822251,1663224,3,16,895787,1083669,0.00'
	out_has_line "0,4100,gpu-node-17,0,,52,0,0,,18,804987,977669,0.00"
	out_has_line "1,4107,gpu-node-17,0,,52,0,0,,7,802757,975110,0.00"
	out_has_line "0,4100,gpu-node-17,1,52743506,43425202,82.33,6977924,13.23,0,0.00,2340380,4.44,0.00,1024,0,0"
	# the straggler table's order: rank 2 first, then by how often each had the most compute
	grep -A5 '^# stragglers' "$tmp/out" | cut -d, -f1 | tr '\n' ' ' >"$tmp/order"
	[ "$(cat "$tmp/order")" = "# stragglers rank 2 0 3 1 " ] || fail "straggler order: $(cat "$tmp/order")"
	# a higher threshold leaves no straggler; none at all counts every step's slowest
	expect_rc 0 "$gputrace" stats -f csv -r stragglers --min-lag 250 "$tmp/job.gtrace"
	out_has_line "2,4114,gpu-node-17,0,,52,0,0,,16,895787,1083669,0.00"
	expect_rc 0 "$gputrace" stats -f csv -r steps --min-lag 0 "$tmp/job.gtrace"
	[ "$(grep -c ',true' "$tmp/out")" -eq $((52 + 52)) ] ||
		fail "--min-lag 0: $(grep -c ',true' "$tmp/out") straggler rows, expected 104"
	# the table: every step, rank 2 a straggler in 3, 7, 9 only
	expect_rc 0 "$gputrace" stats -r steps "$tmp/job.gtrace"
	[ "$(grep -cE '^ +[0-9]+ +4 +2 .* yes ' "$tmp/out")" -eq 3 ] ||
		fail "steps table: $(grep -E ' yes ' "$tmp/out")"
	# by process, device and host
	expect_rc 0 "$gputrace" stats -f csv -r breakdown --by device "$tmp/job.gtrace"
	out_has_line "gpu,uuid,host,gpus,active_ns,compute_ns,compute_pct,comm_ns,comm_pct,memory_ns,memory_pct,idle_ns,idle_pct,comm_overlap_pct,kernels,lost_records,late_ns"
	[ "$(grep -c ',GPU-a' "$tmp/out")" -eq 4 ] || fail "--by device: $(cat "$tmp/out")"
	expect_rc 0 "$gputrace" stats -f csv -r breakdown --by host "$tmp/job.gtrace"
	out_has_line "gpu-node-17,4,211371273,173865591,82.26,28313630,13.40,0,0.00,9192052,4.35,0.00,4000,0,0"
	expect_rc 0 "$gputrace" stats -r kernels --by process -n 1 "$tmp/job.gtrace"
	[ "$(grep -c '^GPU kernels: pid ' "$tmp/out")" -eq 4 ] || fail "--by process: $(cat "$tmp/out")"
	# a file given twice, a missing one
	expect_rc 64 "$gputrace" stats "$tmp/job.gtrace" "$tmp/job.gtrace"
	expect_err "gputrace: stats: $tmp/job.gtrace is given twice (as $tmp/job.gtrace and $tmp/job.gtrace)"
	expect_rc 66 "$gputrace" stats "$tmp/job.gtrace" "$tmp/none.gtrace"
	err_matches "^gputrace: stats: $tmp/none.gtrace: No such file or directory$"
	# JSON is one valid document
	expect_rc 0 "$gputrace" stats -o "$tmp/job.json" --by rank "$tmp/job.gtrace"
	if command -v python3 >/dev/null; then
		python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
assert d["analysis"]["by"] == "rank" and d["analysis"]["steps"] == 53, "analysis"
assert [s["rank"] for s in d["stragglers"]] == [2, 0, 3, 1], "stragglers"
assert d["stragglers"][0]["steps"] == "3, 7, 9", "steps"
assert sum(k["instances"] for k in d["kernels"]) == 4000, "kernels"
assert len(d["step_ranks"]) == 4 * 52 + 1, "step_ranks"' "$tmp/job.json" 2>"$tmp/err" ||
			fail "stats --by rank -o json: $(cat "$tmp/err")"
	fi
fi

# The DDP job recorded on two ranks sharing an H200 (tests/data): rank 1 does 20 extra
# matmuls in steps 4 and 8 (tests/gpu/torch_ddp.py).
data=$(dirname "$0")/data
expect_rc 0 "$gputrace" stats -f csv -r stragglers "$data/ddp-rank0.gtrace" "$data/ddp-rank1.gtrace"
out_has_line '1,624,vm,2,"4, 8",12,2626490,1313280,8,12,284061,40114356,'
out_has_line "0,623,vm,0,,12,0,0,,0,64253,40764381,"
# the two ranks share the H200: by device that one GPU's time is in two traces, added (and
# said); merged into one trace (gputrace merge), the same table, and one union for the GPU
expect_rc 0 "$gputrace" stats -f csv -r breakdown --by device "$data/ddp-rank0.gtrace" "$data/ddp-rank1.gtrace"
out_has_line "device,2,1,ProfilerStep,0,true"
err_has_line "gputrace: warning: stats: a GPU's activity is in several of these traces; its busy and idle time are each trace's, added up (merge the traces for one union)"
expect_rc 0 "$gputrace" merge -o "$tmp/ddp.gtrace" "$data/ddp-rank0.gtrace" "$data/ddp-rank1.gtrace"
expect_rc 0 "$gputrace" stats -f csv -r stragglers,breakdown "$tmp/ddp.gtrace" --by rank
out_has_line '1,624,vm,2,"4, 8",12,2626490,1313280,8,12,284061,40114356,'
out_has_line "0,623,vm,0,,12,0,0,,0,64253,40764381,"
out_has_line "0,623,vm,1,7015486740,781120,0.01,0,0.00,569510,0.01,7014136110,99.98,,292,0,0"
expect_rc 0 "$gputrace" stats -f csv -r breakdown --by device "$tmp/ddp.gtrace"
out_has_line "device,1,1,ProfilerStep,0,false"
[ -z "$(cat "$tmp/err")" ] || fail "merged trace by device: stderr [$(cat "$tmp/err")]"
grep -q '^0,GPU-235d247a-6f02-b0d7-2711-5675cff2c3d4,vm,1,7019781042,4199870,0.06,0,0.00,1118122,0.02,7014463050,99.92,,704,0,0$' "$tmp/out" ||
	fail "merged trace by device: $(cat "$tmp/out")"

# One time base and one span (docs/cli.md, "Time"). The span is the trace's, from its zero
# to the end of its last record, as `gputrace info` prints it (tests/test-info.sh), the same
# by rank and by device (7.017 s and 7.015 s before: each counted other records); the GPUs'
# own first-to-last time is "Active". An "At" counts from the zero: pytorch-train's largest
# block is allocated at 36735378865 ns on the trace clock, 26369932036 + 10365446829.
for by in rank device; do
	expect_rc 0 "$gputrace" stats -f csv -r breakdown --by $by "$data/ddp-2rank.gtrace"
	out_has_line "$data/ddp-2rank.gtrace,vm,python3 -m torch.distributed.run --nproc-per-node 2 /work/main/tests/gpu/torch_ddp.py,0.1.0,17482918430,0,0,false"
done
expect_rc 0 "$gputrace" stats -f json -r memory "$data/pytorch-train.gtrace"
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["trace"]["span_ns"] == 11553885202, d["trace"]
big = d["memory_largest"][0]
assert (big["address"], big["at_ns"]) == ("0x7f7258000000", 10365446829), big' "$tmp/out" \
	2>"$tmp/err" || fail "stats -f json on pytorch-train: $(cat "$tmp/err")"

# The example program's trace recorded on an H200 (tests/data/example.gtrace).
expect_rc 0 "$gputrace" stats -r kernels,errors "$data/example.gtrace"
expect_out "GPU kernels
Time %       Total  Instances       Avg       Med       Min       Max    StdDev       P99  Name
 85.57  321.187 us         40  8.030 us  7.903 us  7.648 us  9.792 us  386.7 ns  9.792 us  matmul(float const*, float const*, float*, int)
  8.62   32.353 us         20  1.618 us  1.603 us  1.600 us  1.760 us   36.7 ns  1.760 us  reduce_sum(float const*, float*, int)
  5.81   21.824 us         20  1.091 us  1.091 us  1.055 us  1.344 us   64.0 ns  1.344 us  relu(float*, int)

Failed API calls
  no API call returned an error"
expect_rc 0 "$gputrace" stats -f csv -r memory "$data/example.gtrace"
out_has_line "0,1572868,0,26,26,6553604,NVIDIA H200,GPU-83881cc9-28e3-dc2b-4018-291d9fb13ed9"
out_has_line ",262144,0,1,1,262144,host (pinned and pageable),"

# Output file: the format follows the extension, and a bad directory is exit 73.
if [ -f "$tmp/t.gtrace" ]; then
	expect_rc 0 "$gputrace" stats -r losses -o "$tmp/l.csv" "$tmp/t.gtrace"
	expect_empty_out
	head -n 2 "$tmp/l.csv" >"$tmp/out"
	out_has_line "# losses"
	out_has_line "source,records,detail"
	expect_rc 73 "$gputrace" stats -o "$tmp/no/such/dir/x.csv" "$tmp/t.gtrace"
fi

# The output contract: never the trace itself; a name's extension in any case picks the format
expect_rc 64 "$gputrace" stats "$data/example.gtrace" -o "$data/example.gtrace"
expect_err "gputrace: stats: the output $data/example.gtrace is the input $data/example.gtrace (the same file): choose another output name"
expect_rc 0 "$gputrace" stats -q -r losses "$data/example.gtrace" -o "$tmp/x.JSON"
grep -q '^{' "$tmp/x.JSON" || fail "-o x.JSON did not write JSON: $(head -c 80 "$tmp/x.JSON")"

# --base-names: the instantiations of one function as one row; a window, as export takes it
expect_rc 0 "$gputrace" stats -r kernels -f csv --base-names "$data/pytorch-train.gtrace"
grep -q ',vectorized_elementwise_kernel$' "$tmp/out" ||
	fail "--base-names: no vectorized_elementwise_kernel row: $(cat "$tmp/out")"
[ "$(grep -c ',vectorized_elementwise_kernel$' "$tmp/out")" -eq 1 ] ||
	fail "--base-names: several vectorized_elementwise_kernel rows"
expect_rc 0 "$gputrace" stats -r kernels -f csv --nvtx step:10..15 "$data/pytorch-train.gtrace"
err_has_line "gputrace: window: step 10..15 (6 ranges in 1 process), 10.801 s to 10.808 s (--from @37171025755 --to @37177450936)"
cp "$tmp/out" "$tmp/win-stats.csv"
expect_rc 0 "$gputrace" export "$data/pytorch-train.gtrace" -f csv --nvtx step:10..15 -o "$tmp/w.csv" -q
want=$(tail -n +2 "$tmp/w-kernel.csv" | wc -l)
got=$(tail -n +2 "$tmp/win-stats.csv" | awk -F, '{ n += $3 } END { print n }')
[ "$got" = "$want" ] || fail "stats in a window counts $got kernels, the window's export $want"
expect_rc 64 "$gputrace" stats --pid 1234 "$data/example.gtrace"
err_matches "^gputrace: stats: --pid 1234: .*example.gtrace has no such one; its processes: [0-9]+$"
expect_rc 64 "$gputrace" stats --step nosuch "$data/pytorch-train.gtrace"
err_matches "^gputrace: stats: --step nosuch: no NVTX range of .*pytorch-train.gtrace has that name; its ranges: step \(20\)"
# the names as --nvtx and --step take them: PyTorch's ProfilerStep#K as one name
expect_rc 64 "$gputrace" stats --step nosuch "$data/ddp-2rank.gtrace"
err_matches "^gputrace: stats: --step nosuch: no NVTX range of .*ddp-2rank.gtrace has that name; its ranges: ProfilerStep#0\.\.11 \(24\), forward \(24\)$"
expect_rc 64 "$gputrace" stats --from 100 "$data/pytorch-train.gtrace"
err_matches "^gputrace: stats: --from 100 selects nothing: it is after .*pytorch-train.gtrace, which runs from 2026-12-01T14:30:09.701000799Z \(0.000 s\) to 2026-12-01T14:30:21.254886001Z \(11.554 s\)$"
expect_rc 64 "$gputrace" stats --nvtx step:48..60 "$data/pytorch-train.gtrace"
err_matches "^gputrace: stats: --nvtx: .*pytorch-train.gtrace has 20 ranges named 'step', numbered 0 to 19; none in step:48..60$"

# -r nvtx-gpu: GPU time per NVTX range, only when named; --instances with it alone
expect_rc 64 "$gputrace" stats --instances "$data/pytorch-train.gtrace"
expect_err "gputrace: stats: --instances lists the range instances of the nvtx-gpu report: add -r nvtx-gpu"
expect_rc 64 "$gputrace" stats -r nvtx-gpu "$data/ddp-rank0.gtrace" "$data/ddp-rank1.gtrace"
expect_err "gputrace: stats: 'nvtx-gpu': across ranks the reports are breakdown, steps, stragglers, kernels, api, memcpy, memset, nvtx and all; memory, errors, losses, nvtx-gpu, gpu-metrics and operators are of one trace"
expect_rc 64 "$gputrace" stats --by rank --instances "$data/ddp-2rank.gtrace"
expect_err "gputrace: stats: --instances is for the reports of one trace"
expect_rc 0 "$gputrace" stats "$data/pytorch-train.gtrace"
grep -q "projected" "$tmp/out" && fail "the default reports hold nvtx-gpu"
expect_rc 0 "$gputrace" stats -r nvtx-gpu --instances -f csv "$data/pytorch-train.gtrace"
out_has_line "# nvtx_gpu_totals"
out_has_line "30,30,0,473,240,0,0"
# 20 step instances of 11 operations each, and 10 graph-step ones of 2
[ "$(grep -c ',0,517,517,PushPop,,step$' "$tmp/out")" -eq 20 ] || fail "nvtx-gpu: not 20 step instances"
grep -q '^[0-9]*,20,.*,220,PushPop,,step$' "$tmp/out" || fail "nvtx-gpu: no step row of 20 instances and 220 ops"
grep -q '^[0-9]*,10,.*,20,PushPop,,graph-step$' "$tmp/out" || fail "nvtx-gpu: no graph-step row"
# a window: its one range, and the work in the window (the backward pass's 10 kernels are
# launched by PyTorch's autograd thread, not the step's: 11 of 21 in the range)
expect_rc 0 "$gputrace" stats -r nvtx-gpu -f csv --nvtx step:3 -q "$data/pytorch-train.gtrace"
out_has_line "1,1,0,21,11,0,0"

cli_done cli-stats
