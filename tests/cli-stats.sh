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
out_has_line "Usage: gputrace stats [options] FILE"
expect_rc 64 "$gputrace" stats
expect_err "gputrace: stats: which trace? usage: gputrace stats [options] FILE"
expect_rc 64 "$gputrace" stats --bogus x.gtrace
expect_err "gputrace: stats: unknown option '--bogus'; see 'gputrace stats --help'"
expect_rc 64 "$gputrace" stats --report kernel x.gtrace
expect_err "gputrace: stats: unknown report 'kernel'; choose from kernels, api, memcpy, memset, nvtx, memory, errors, losses, all"
expect_rc 64 "$gputrace" stats -r kernels, x.gtrace
expect_err "gputrace: stats: unknown report 'kernels,'; choose from kernels, api, memcpy, memset, nvtx, memory, errors, losses, all"
expect_rc 64 "$gputrace" stats --format xml x.gtrace
expect_err "gputrace: stats: unknown format 'xml'; choose table, csv or json"
expect_rc 64 "$gputrace" stats --limit ten x.gtrace
expect_err "gputrace: stats: --limit takes a number of rows, not 'ten'"
expect_rc 64 "$gputrace" stats a.gtrace b.gtrace
expect_err "gputrace: stats: unexpected argument 'b.gtrace'; it takes one trace file"
expect_rc 64 "$gputrace" stats x.gtrace --format
expect_err "gputrace: stats: option '--format' needs a value; see 'gputrace stats --help'"
expect_empty_out

# Missing and unreadable traces.
expect_rc 66 "$gputrace" stats "$tmp/none.gtrace"
grep -q "^gputrace: stats: cannot read $tmp/none.gtrace: " "$tmp/err" ||
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
assert [l["records"] for l in d["losses"]] == [7, 5, 0, 0, 0, 0, 0, 0], "losses"
assert d["reader"]["recovered"] is False, "reader"' <"$tmp/out" 2>"$tmp/err" ||
			fail "stats -f json: $(cat "$tmp/err")"
	fi
fi

# The example program's trace recorded on an H200 (tests/data/example.gtrace).
data=$(dirname "$0")/data
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

cli_done cli-stats
