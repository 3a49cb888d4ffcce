#!/usr/bin/env bash
# CLI test for `gputrace report` (cli/cmd-report.c) on the real traces of tests/data: option
# errors (64), a missing trace (66), a window that selects nothing, and the page itself -
# well-formed, nothing that leaves the file, and as many plot series, bars, steps and findings
# as `gputrace stats` and `gputrace advise` give on the same traces (tests/report-html.py).
# Usage: cli-report.sh PATH/TO/gputrace DATA_DIR
set -u
gputrace=$1
data=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/cli-common.sh"
check=$(dirname "$0")/report-html.py
pt=$data/pytorch-train.gtrace
r0=$data/ddp-rank0.gtrace
r1=$data/ddp-rank1.gtrace

# Help and usage errors.
expect_rc 0 "$gputrace" report --help
out_has_line "Usage: gputrace report [options] FILE... -o report.html"
out_has_line "Exit status: 0 ok, 64 bad option (one file given twice, the output one of the"
expect_rc 64 "$gputrace" report
expect_err "gputrace: report: no trace; usage: gputrace report [options] FILE... -o report.html"
expect_rc 64 "$gputrace" report "$pt" "$pt" -o "$tmp/x.html"
expect_err "gputrace: report: $pt is given twice (as $pt and $pt)"
expect_rc 64 "$gputrace" report -f json "$pt"
expect_rc 64 "$gputrace" report -o "$pt" "$pt"
expect_rc 66 "$gputrace" report "$tmp/none.gtrace" -o "$tmp/x.html"
expect_rc 64 "$gputrace" report --step train "$pt" -o "$tmp/x.html"
expect_err "gputrace: report: --step train: no NVTX range of $pt has that name; its ranges: step (20), graph-step (10)"
[ -e "$tmp/x.html" ] && fail "a page was left after an error"

# An empty window is an error, as in every command, and leaves no page.
expect_rc 64 "$gputrace" report --from 100 "$pt" -o "$tmp/x.html"
err_matches "^gputrace: report: --from 100 selects nothing: it is after $pt, which runs from "
expect_rc 64 "$gputrace" report --pid 1 "$pt" -o "$tmp/x.html"
expect_err "gputrace: report: --pid 1: $pt has no such one; its processes: 517"
[ -e "$tmp/x.html" ] && fail "a page was left after an empty window"

# What the page must hold, from stats and advise on the same traces (python3 reads the JSON).
# counts TRACE...: the expected KEY=N arguments of report-html.py.
counts() {
	"$gputrace" advise -f json "$@" >"$tmp/advise.json" || fail "advise $* failed"
	: >"$tmp/stats.json"
	for t in "$@"; do
		"$gputrace" stats -r kernels,memory,nvtx-gpu -f json "$t" >"$tmp/s.json" ||
			fail "stats $t failed"
		python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1]))))' \
			"$tmp/s.json" >>"$tmp/stats.json"
	done
	"$gputrace" stats --by rank -r steps -f json "$@" >"$tmp/steps.json" || fail "stats --by rank $*"
	python3 - "$tmp/advise.json" "$tmp/stats.json" "$tmp/steps.json" "$#" <<'PY'
import json, sys
adv = json.load(open(sys.argv[1]))
stats = [json.loads(l) for l in open(sys.argv[2])]
steps = json.load(open(sys.argv[3]))
gpus = sum(len([m for m in s["memory"] if m["gpu"] is not None]) for s in stats)
rows = sum(r["ranks"] for r in steps["steps"])
print("traces=%s" % sys.argv[4],
      "busy-series=%d" % gpus,
      "memory-series=%d" % gpus,
      "kernel-bars=%d" % sum(min(20, len(s["kernels"])) for s in stats),
      "nvtx-bars=%d" % sum(min(20, len(s["nvtx_gpu"])) for s in stats),
      "step-points=%d" % rows, "step-rows=%d" % rows,
      "findings=%d" % len(adv["findings"]),
      "ranges=%d" % sum(len(f["instances"]) for f in adv["findings"]))
PY
}

# One trace.
expect_rc 0 "$gputrace" report "$pt" -o "$tmp/pt.html"
expect_out ""
expect_err ""
want=$(counts "$pt")
[ "$want" = "traces=1 busy-series=1 memory-series=1 kernel-bars=20 nvtx-bars=2 step-points=20 step-rows=20 findings=7 ranges=30" ] ||
	fail "stats and advise on $pt changed: $want"
# shellcheck disable=SC2086
python3 "$check" "$tmp/pt.html" $want || fail "the page of $pt"
grep -qF '<title>GPU 0 (NVIDIA H200): peak 266.68 MiB</title>' "$tmp/pt.html" ||
	fail "no peak of 266.68 MiB (stats' 279630440 bytes) in the memory plot"
grep -qF '<li class="range"><code>--from 5.000390165 --to 5.000402485</code> GPU 0 stream 7 pid 517 (12.320 us) HtoD 512.00 KiB, pageable host memory</li>' "$tmp/pt.html" ||
	fail "no pageable copy's range to paste"
grep -qF '<tr class="step"><td>pid 517</td><td>'"$pt"'</td><td>1</td><td>10.789712384</td><td>10.791896492</td><td>2.184 ms</td>' "$tmp/pt.html" ||
	fail "no row of step 1"

# The ranks of a job: one page.
expect_rc 0 "$gputrace" report "$r0" "$r1" -o "$tmp/ddp.html"
want=$(counts "$r0" "$r1")
[ "$want" = "traces=2 busy-series=2 memory-series=2 kernel-bars=40 nvtx-bars=26 step-points=24 step-rows=24 findings=10 ranges=46" ] ||
	fail "stats and advise on the ranks changed: $want"
# shellcheck disable=SC2086
python3 "$check" "$tmp/ddp.html" $want || fail "the page of the ranks"
grep -qF '<polyline class="series" fill="none" stroke="#d62728" data-label="rank 1"' "$tmp/ddp.html" ||
	fail "no step series of rank 1"

# A window: the page of what it selects; the steps a window cuts are not the run's first.
expect_rc 0 "$gputrace" report -q --nvtx step:2..4 "$pt" -o "$tmp/w.html"
python3 "$check" "$tmp/w.html" traces=1 busy-series=1 step-rows=3 ||
	fail "the page of a window"

# The page on standard output, byte for byte the file's.
expect_rc 0 "$gputrace" report "$pt"
cmp -s "$tmp/out" "$tmp/pt.html" || fail "standard output differs from -o"

cli_done cli-report
