#!/usr/bin/env bash
# CLI test for `gputrace diff`: option errors (exit 64 with their message), missing (66) and
# unreadable (65) traces, and, given tests/mktrace, two traces with known differences (one
# kernel name twice as slow, one renamed): the rows, the order, the gate's exit codes
# (1 when NEW regressed beyond --fail-above), the incomplete-trace warning, JSON.
# Usage: cli-diff.sh PATH/TO/gputrace [PATH/TO/mktrace]
set -u
gputrace=$1
mktrace=${2:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/cli-common.sh"

# Help and usage errors.
expect_rc 0 "$gputrace" diff --help
out_has_line "Usage: gputrace diff [options] BASE NEW"
expect_rc 0 "$gputrace" --help
out_has_line "  diff     compare two traces: what got slower, what appeared, what vanished"
expect_rc 64 "$gputrace" diff
expect_err "gputrace: diff: which traces? usage: gputrace diff [options] BASE NEW"
expect_rc 64 "$gputrace" diff a.gtrace
expect_err "gputrace: diff: which traces? usage: gputrace diff [options] BASE NEW"
expect_rc 64 "$gputrace" diff a.gtrace b.gtrace c.gtrace
expect_err "gputrace: diff: unexpected argument 'c.gtrace'; it compares two traces"
expect_rc 64 "$gputrace" diff --bogus a.gtrace b.gtrace
expect_err "gputrace: diff: unknown option '--bogus'; see 'gputrace diff --help'"
expect_rc 64 "$gputrace" diff -f xml a.gtrace b.gtrace
expect_err "gputrace: diff: unknown format 'xml'; choose table, csv or json"
expect_rc 64 "$gputrace" diff --fail-above ten a.gtrace b.gtrace
expect_err "gputrace: diff: --fail-above takes a percentage (0 or more), not 'ten'"
expect_rc 64 "$gputrace" diff --fail-above -5 a.gtrace b.gtrace
expect_err "gputrace: diff: --fail-above takes a percentage (0 or more), not '-5'"
expect_rc 64 "$gputrace" diff --metric step-time a.gtrace b.gtrace
expect_err "gputrace: diff: --metric is what --fail-above checks; give --fail-above PCT"
expect_rc 64 "$gputrace" diff a.gtrace b.gtrace --limit
expect_err "gputrace: diff: option '--limit' needs a value; see 'gputrace diff --help'"

# Missing and unreadable traces.
expect_rc 66 "$gputrace" diff "$tmp/none.gtrace" "$tmp/none2.gtrace"
err_matches "^gputrace: diff: $tmp/none.gtrace: No such file or directory$"
printf 'this is not a trace, just text long enough to hold a header and more...\n%.0s' \
	$(seq 20) >"$tmp/text.gtrace"
expect_rc 65 "$gputrace" diff "$tmp/text.gtrace" "$tmp/text.gtrace.2"
err_matches "^gputrace: diff: cannot read $tmp/text.gtrace: "
expect_rc 64 "$gputrace" diff "$tmp/text.gtrace" "$tmp/text.gtrace"
expect_err "gputrace: diff: BASE and NEW are one file ($tmp/text.gtrace and $tmp/text.gtrace)"

if [ -n "$mktrace" ]; then
	common="--kernels 3000 --names 12 --api --memcpy --steps --seed 7"
	# shellcheck disable=SC2086
	"$mktrace" -o "$tmp/base.gtrace" $common >/dev/null &&
		"$mktrace" -o "$tmp/same.gtrace" $common >/dev/null &&
		"$mktrace" -o "$tmp/new.gtrace" $common --slow-name 3 --rename 5 >/dev/null &&
		"$mktrace" -o "$tmp/lossy.gtrace" $common --losses 5 >/dev/null &&
		"$mktrace" -o "$tmp/nosteps.gtrace" --kernels 3000 --names 12 --seed 7 >/dev/null ||
		fail "mktrace failed"

	# name 3 twice as slow: its change is its whole BASE total, first; everything else 0
	expect_rc 0 "$gputrace" diff -f csv "$tmp/base.gtrace" "$tmp/new.gtrace"
	out_has_line "false,0,0,,,,"
	out_has_line "gpu_time_ns,ns,149378780,150420173,1041393,0.70"
	out_has_line "step_time_median_ns,ns,112589,112589,0,0.00"
	out_has_line "kernel_launches,count,3000,3000,0,0.00"
	grep -A2 '^# changed' "$tmp/out" | tail -n 1 >"$tmp/first"
	[ "$(cat "$tmp/first")" = "1041393,100.00,1041393,2082786,316,316,3295.5,6591.1,3303.0,6607.0,100.00,kernel,ampere_sgemm_128x64_tn_v3" ] ||
		fail "first changed row: $(cat "$tmp/first")"
	[ "$(sed -n '/^# changed/,/^$/p' "$tmp/out" | grep -c '^0,0.00,')" -eq 13 ] ||
		fail "unchanged rows: $(sed -n '/^# changed/,/^$/p' "$tmp/out")"
	# name 5 renamed: vanished under its old name, appeared under the new, same numbers
	out_has_line "2596944,158,16436.4,16447.0,kernel,sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas_v5_renamed"
	out_has_line "2596944,158,16436.4,16447.0,kernel,sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas_v5"
	[ "$(grep -c '_v5' "$tmp/out")" -eq 2 ] || fail "renamed kernel: $(grep '_v5' "$tmp/out")"

	# the gate: GPU time +0.70 %
	expect_rc 1 "$gputrace" diff --fail-above 0.5 "$tmp/base.gtrace" "$tmp/new.gtrace"
	expect_err "gputrace: diff: gpu-time regressed: +0.70%, more than the 0.5% allowed"
	expect_rc 0 "$gputrace" diff --fail-above 1 "$tmp/base.gtrace" "$tmp/new.gtrace"
	expect_err "gputrace: diff: gpu-time: +0.70%, within the 1% allowed"
	expect_rc 1 "$gputrace" diff --fail-above 99 --metric ampere_sgemm_128x64_tn_v3 \
		"$tmp/base.gtrace" "$tmp/new.gtrace"
	expect_err "gputrace: diff: ampere_sgemm_128x64_tn_v3 regressed: +100.00%, more than the 99% allowed"
	expect_rc 0 "$gputrace" diff --fail-above 100 --metric ampere_sgemm_128x64_tn_v3 \
		"$tmp/base.gtrace" "$tmp/new.gtrace"
	# appeared: from nothing to something is a regression at any limit
	expect_rc 1 "$gputrace" diff --fail-above 1000 --metric \
		sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas_v5_renamed \
		"$tmp/base.gtrace" "$tmp/new.gtrace"
	err_matches "regressed: from nothing to something, more than the 1000% allowed$"
	expect_rc 0 "$gputrace" diff --fail-above 0 --metric step-time "$tmp/base.gtrace" "$tmp/new.gtrace"
	expect_err "gputrace: diff: step-time: +0.00%, within the 0% allowed"
	expect_rc 0 "$gputrace" diff --fail-above 0 "$tmp/base.gtrace" "$tmp/same.gtrace"
	expect_rc 64 "$gputrace" diff --fail-above 1 --metric no_such_kernel "$tmp/base.gtrace" "$tmp/new.gtrace"
	expect_err "gputrace: diff: --metric no_such_kernel: no kernel, API function, copy or memset kind or NVTX range of either trace has that name"
	expect_empty=$(cat "$tmp/out")
	[ -z "$expect_empty" ] || fail "output despite an unknown metric"
	expect_rc 64 "$gputrace" diff --fail-above 1 --metric step-time "$tmp/base.gtrace" "$tmp/nosteps.gtrace"
	expect_err "gputrace: diff: --metric step-time: NEW has no steps to time"

	# incomplete traces: said first
	expect_rc 0 "$gputrace" diff "$tmp/base.gtrace" "$tmp/lossy.gtrace"
	head -n 1 "$tmp/out" >"$tmp/first"
	[ "$(cat "$tmp/first")" = "WARNING: incomplete traces, the comparison may be off by what they lost: NEW ($tmp/lossy.gtrace) lost 12 records; see \`gputrace stats -r losses\`." ] ||
		fail "incomplete warning: $(cat "$tmp/first")"
	expect_rc 0 "$gputrace" diff -f csv "$tmp/lossy.gtrace" "$tmp/base.gtrace"
	out_has_line "true,12,0,,,,"

	# table limits and JSON
	expect_rc 0 "$gputrace" diff -n 2 "$tmp/base.gtrace" "$tmp/new.gtrace"
	out_has_line "  ... 12 more not shown"
	expect_rc 0 "$gputrace" diff -o "$tmp/d.json" --fail-above 5 "$tmp/base.gtrace" "$tmp/new.gtrace"
	if command -v python3 >/dev/null; then
		python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
c = d["comparison"]
assert c["incomplete"] is False and c["regressed"] is False, c
assert c["gate_metric"] == "gpu-time" and c["gate_limit_pct"] == 5, c
assert d["changed"][0]["change_ns"] == 1041393, d["changed"][0]
assert len(d["appeared"]) == 1 and len(d["vanished"]) == 1, "appeared/vanished"
assert [h["metric"] for h in d["headline"]][0] == "gpu_time_ns", d["headline"]' \
			"$tmp/d.json" 2>"$tmp/err" || fail "diff -o json: $(cat "$tmp/err")"
	fi
	expect_rc 73 "$gputrace" diff -o "$tmp/no/such/dir/x.csv" "$tmp/base.gtrace" "$tmp/new.gtrace"
fi

# The DDP job's two ranks recorded on an H200 (tests/data): rank 1's extra matmuls appear.
data=$(dirname "$0")/data
expect_rc 0 "$gputrace" diff -f csv "$data/ddp-rank0.gtrace" "$data/ddp-rank1.gtrace"
out_has_line "kernel_launches,count,292,412,120,41.10"
[ "$(sed -n '/^# appeared/,/^$/p' "$tmp/out" | grep -c ',40,')" -eq 3 ] ||
	fail "ddp appeared: $(sed -n '/^# appeared/,/^$/p' "$tmp/out")"

# The output contract, a window, a base name
data=$(cd "$(dirname "$0")/data" && pwd)
cp "$data/ddp-rank0.gtrace" "$data/ddp-rank1.gtrace" "$tmp/"
expect_rc 64 "$gputrace" diff "$tmp/ddp-rank0.gtrace" "$tmp/ddp-rank1.gtrace" -o "$tmp/ddp-rank1.gtrace"
expect_err "gputrace: diff: the output $tmp/ddp-rank1.gtrace is the input $tmp/ddp-rank1.gtrace (the same file): choose another output name"
cmp -s "$tmp/ddp-rank1.gtrace" "$data/ddp-rank1.gtrace" || fail "diff -o NEW changed NEW"
expect_rc 0 "$gputrace" diff -q --nvtx ProfilerStep:2..3 "$tmp/ddp-rank0.gtrace" "$tmp/ddp-rank1.gtrace" -f csv
out_has_line "kernel_launches,count,48,48,0,0.00"
out_has_line "steps,count,2,2,0,0.00"
expect_rc 64 "$gputrace" diff --rank 7 "$tmp/ddp-rank0.gtrace" "$tmp/ddp-rank1.gtrace"
err_matches "^gputrace: diff: --rank 7: .*ddp-rank0.gtrace has no such one; its ranks: 0$"
# a window that selects nothing names what there is, in the first trace it does not fit:
# times past the end, an NVTX name the trace lacks (its names as --nvtx takes them)
expect_rc 64 "$gputrace" diff --from 100 "$tmp/ddp-rank0.gtrace" "$tmp/ddp-rank1.gtrace" -o "$tmp/never.txt"
expect_err "gputrace: diff: --from 100 selects nothing: it is after $tmp/ddp-rank0.gtrace, which runs from 2026-12-01T14:30:48.052189474Z (0.000 s) to 2026-12-01T14:30:56.240962021Z (8.189 s)"
expect_rc 64 "$gputrace" diff --nvtx Step "$tmp/ddp-rank0.gtrace" "$tmp/ddp-rank1.gtrace" -o "$tmp/never.txt"
expect_err "gputrace: diff: --nvtx: no NVTX range named 'Step' in $tmp/ddp-rank0.gtrace; its ranges: ProfilerStep#0..11 (12), forward (12); its steps are those of the ProfilerStep family (12 of them; gputrace view --first-steps N finds them)"
[ ! -e "$tmp/never.txt" ] && [ -z "$(ls -a "$tmp" | grep '^\.never')" ] ||
	fail "a refused diff left its output: $(ls -a "$tmp")"
expect_rc 0 "$gputrace" diff "$tmp/ddp-rank0.gtrace" "$tmp/ddp-rank1.gtrace" --metric softmax_warp_forward --fail-above 50
err_matches "^gputrace: diff: softmax_warp_forward: [+-][0-9.]+%, within the 50% allowed$"

cli_done cli-diff
