#!/usr/bin/env bash
# CLI test for `gputrace advise` (cli/cmd-advise.c) on the real traces of tests/data: option
# errors (64), a missing trace (66), the exit status of --fail-on (3, after the findings), the
# JSON, -o, and a window.
# Usage: cli-advise.sh PATH/TO/gputrace DATA_DIR
set -u
gputrace=$1
data=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/cli-common.sh"
pt=$data/pytorch-train.gtrace

# Help and usage errors.
expect_rc 0 "$gputrace" advise --help
out_has_line "Usage: gputrace advise [options] FILE..."
out_has_line "Exit status: 0 ok, 3 a finding matched --fail-on (the findings are written first),"
expect_rc 64 "$gputrace" advise
expect_err "gputrace: advise: no trace; usage: gputrace advise [options] FILE..."
expect_rc 64 "$gputrace" advise --fail-on sync "$pt"
expect_err "gputrace: advise: --fail-on takes a rule (pageable-memcpy, sync-memcpy, sync-memset, sync-api, steady-malloc, idle-host, idle-event, idle-other, short-kernels, copy-exposed, serialized, slow-steps, memory-full, memory-growth, straggler, nccl-exposed), a cost (10ms) or a share of the span (5%), not 'sync'"
expect_rc 64 "$gputrace" advise --top 6 "$pt"
expect_err "gputrace: advise: --top takes a number from 1 to 5, not '6'"
expect_rc 64 "$gputrace" advise -f csv "$pt"
expect_err "gputrace: advise: findings are written as a table or JSON, not CSV"
expect_rc 64 "$gputrace" advise "$pt" "$pt"
expect_rc 64 "$gputrace" advise -o "$pt" "$pt"
expect_rc 66 "$gputrace" advise "$tmp/none.gtrace"
expect_rc 64 "$gputrace" advise --step train "$pt"
expect_err "gputrace: advise: --step train: no NVTX range of $pt has that name; its ranges: step (20), graph-step (10)"

# The table: the findings in order of cost, each with its time ranges.
expect_rc 0 "$gputrace" advise "$pt"
out_has_line "Advice for $pt: span 11.554 s, 20 steps (19 in the steady state: each process's first warms up)"
grep -qE '^ 1  idle-host +19\.553 ms +0\.17 +1\.029 ms +381  GPU idle: waiting for the host to launch work$' "$tmp/out" ||
	fail "no idle-host row first: $(head -5 "$tmp/out")"
grep -qE '^ 7  pageable-memcpy +15\.968 us .* 4  copies from or to pageable host memory$' "$tmp/out" ||
	fail "no pageable-memcpy row: $(cat "$tmp/out")"
out_has_line "    5.000390165          5.000402485             12.320 us  GPU 0 stream 7 pid 517  HtoD 512.00 KiB, pageable host memory"

# --fail-on: 3 after the findings, with the finding named; 0 when nothing matches.
expect_rc 3 "$gputrace" advise --fail-on pageable-memcpy "$pt"
expect_err "gputrace: advise: --fail-on pageable-memcpy: pageable-memcpy, 15.968 us in all (4 times)"
grep -q '^7. pageable-memcpy' "$tmp/out" || fail "--fail-on did not write the findings first"
expect_rc 0 "$gputrace" advise --fail-on sync-api "$pt"
expect_rc 3 "$gputrace" advise --fail-on 10ms "$pt"
expect_err "gputrace: advise: --fail-on 10ms: idle-host, 19.553 ms in all (381 times)"
expect_rc 0 "$gputrace" advise --fail-on 20ms "$pt"
expect_rc 3 "$gputrace" advise --fail-on 0.1% "$pt"
expect_rc 0 "$gputrace" advise --fail-on 0.2% "$pt"

# JSON, through -o (the extension picks it), and a window that holds the steady steps only.
expect_rc 0 "$gputrace" advise -o "$tmp/a.json" "$pt"
python3 - "$tmp/a.json" <<'PY' || fail "advise JSON"
import json, sys
d = json.load(open(sys.argv[1]))
f = {x["rule"]: x for x in d["findings"]}
assert d["steps"] == 20 and d["steady_steps"] == 19, d
assert f["pageable-memcpy"]["count"] == 4 and f["pageable-memcpy"]["cost_ns"] == 15968
assert f["pageable-memcpy"]["instances"][0]["from"] == "5.000390165"
assert [x["rule"] for x in d["findings"]][0] == "idle-host"
PY
expect_rc 0 "$gputrace" advise -q -f json --from 10.79 --to 11 "$pt"
python3 - "$tmp/out" <<'PY' || fail "advise JSON of a window: $(head -c 300 "$tmp/out")"
import json, sys
d = json.load(open(sys.argv[1]))
assert "pageable-memcpy" not in [x["rule"] for x in d["findings"]], d["findings"]
PY

# A window of steps: its first step is not the run's, all of them count.
expect_rc 0 "$gputrace" advise -q --nvtx step:3..5 "$pt"
out_has_line "Advice for $pt: span 11.554 s, 3 steps (all in the steady state: a window cut the run)"

# Across ranks: the per-rank files of one job name the straggler.
expect_rc 3 "$gputrace" advise --fail-on straggler "$data/ddp-rank0.gtrace" "$data/ddp-rank1.gtrace"
expect_err "gputrace: advise: --fail-on straggler: straggler, 2.626 ms in all (2 times)"
cli_done cli-advise
