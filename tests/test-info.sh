#!/usr/bin/env bash
# CLI test for `gputrace info`: usage errors (64), a missing (66) and unreadable (65) traces
# with their one-line reasons, the whole report on a synthetic trace, CUPTI versions from the
# processes' notices when the header has none, a recovered trace
# (no footer), a truncated one and one with a damaged chunk.
# Usage: test-info.sh PATH/TO/gputrace PATH/TO/mktrace
set -u
gputrace=$1
mktrace=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/cli-common.sh"

version=$("$gputrace" --version | sed 's/^gputrace //')

# Help and usage errors.
expect_rc 0 "$gputrace" info --help
out_has_line "Usage: gputrace info [options] FILE"
expect_rc 0 "$gputrace" info -h
out_has_line "Usage: gputrace info [options] FILE"
expect_rc 64 "$gputrace" info
expect_err "gputrace: info: which trace? usage: gputrace info FILE"
expect_rc 64 "$gputrace" info --bogus x.gtrace
expect_err "gputrace: info: unknown option '--bogus'; see 'gputrace info --help'"
expect_rc 64 "$gputrace" info a.gtrace b.gtrace
expect_err "gputrace: info: unexpected argument 'b.gtrace'; it takes one trace file"

# Missing and unreadable files: one line each, naming the file and the problem.
expect_rc 66 "$gputrace" info "$tmp/none.gtrace"
expect_err "gputrace: info: $tmp/none.gtrace: No such file or directory"
: >"$tmp/empty.gtrace"
expect_rc 65 "$gputrace" info "$tmp/empty.gtrace"
expect_err "gputrace: info: cannot read $tmp/empty.gtrace: empty file"
echo '{"traceEvents": []}' >"$tmp/json.gtrace"
expect_rc 65 "$gputrace" info "$tmp/json.gtrace"
expect_err "gputrace: info: cannot read $tmp/json.gtrace: not a gputrace file (bad magic)"
expect_rc 65 "$gputrace" info "$tmp"
expect_err "gputrace: info: $tmp is a folder, not a trace"

# The synthetic trace: two ranks, launch API records, copies, losses.
"$mktrace" -o "$tmp/t.gtrace" --kernels 3000 --names 12 --processes 2 --api --memcpy \
	--losses 5 --seed 7 >/dev/null 2>"$tmp/err" || fail "mktrace: $(cat "$tmp/err")"
expect_rc 0 "$gputrace" info "$tmp/t.gtrace"
expect_err ""
expect_out "file:        $tmp/t.gtrace
format:      1
clock:       CLOCK_MONOTONIC
host:        gpu-node-17
started:     2024-05-01T12:00:00.000000000Z
command:     python train.py --epochs 1 --batch-size 64
versions:    gputrace $version, CUDA 13.0, CUPTI 13.0.48, driver 580.65.06
processes:   2
  pid 4100: /usr/bin/python3.11, ppid 1, rank 0, exited with status 0
  pid 4107: /usr/bin/python3.11, ppid 4100, rank 1, killed by signal 9 (SIGKILL)
GPUs:        2
  GPU 0: NVIDIA H200, 132 SMs, 140.40 GiB, compute capability 9.0, peak memory in use 0 B
    GPU-a0a1a2a3-a4a5-a6a7-a8a9-aaabacadaeaf: device 0 of pid 4100
  GPU 1: NVIDIA H200, 132 SMs, 140.40 GiB, compute capability 9.0, peak memory in use 0 B
    GPU-a1a2a3a4-a5a6-a7a8-a9aa-abacadaeafb0: device 1 of pid 4107
records:     6083
  string       18
  process      2
  process_end  2
  thread       2
  device       2
  context      2
  stream       4
  kernel       3000
  memcpy       47
  api          3000
  loss         2
  clock        2
losses:
  cupti_dropped    7
  ring_full        5
time span:   0.079702802 s (1000000000000 .. 1000079702802 ns), records from 0.000000000 s
recovered:   no
index:       2 chunks, with their record types"

# Header problems, from the same file's bytes: a newer format, a header and nothing else.
hlen=$(od -An -tu4 -j12 -N4 "$tmp/t.gtrace" | tr -d ' ')
cp "$tmp/t.gtrace" "$tmp/newer.gtrace"
printf '\003' | dd of="$tmp/newer.gtrace" bs=1 seek=8 conv=notrunc status=none
expect_rc 65 "$gputrace" info "$tmp/newer.gtrace"
expect_err "gputrace: info: cannot read $tmp/newer.gtrace: written by a newer gputrace (format 3, this reader knows 1)"
head -c "$hlen" "$tmp/t.gtrace" >"$tmp/header-only.gtrace"
expect_rc 65 "$gputrace" info "$tmp/header-only.gtrace"
expect_err "gputrace: info: cannot read $tmp/header-only.gtrace: no data: the file ends after its header (the writer stopped early)"
head -c 30 "$tmp/t.gtrace" >"$tmp/short.gtrace"
expect_rc 65 "$gputrace" info "$tmp/short.gtrace"
expect_err "gputrace: info: cannot read $tmp/short.gtrace: truncated header"

# A gputrace run trace: the CLI wrote the header without a CUPTI version, and each process
# named the CUPTI it loaded in an informational notice (not listed under notices).
"$mktrace" -o "$tmp/run.gtrace" --kernels 10 --processes 3 --cupti-notices >/dev/null \
	2>"$tmp/err" || fail "mktrace --cupti-notices: $(cat "$tmp/err")"
expect_rc 0 "$gputrace" info "$tmp/run.gtrace"
out_has_line "versions:    gputrace $version, CUDA 13.0, CUPTI 130001 and 129901, driver 580.65.06"
out_has_line "  notice       3"
grep -q '^notices:' "$tmp/out" && fail "informational notices listed: $(cat "$tmp/out")"
"$mktrace" -o "$tmp/run1.gtrace" --kernels 10 --cupti-notices >/dev/null 2>"$tmp/err" ||
	fail "mktrace --cupti-notices: $(cat "$tmp/err")"
expect_rc 0 "$gputrace" info "$tmp/run1.gtrace"
out_has_line "versions:    gputrace $version, CUDA 13.0, CUPTI 130001, driver 580.65.06"

# A writer killed after its last chunk: no footer, every chunk recovered.
"$mktrace" -o "$tmp/r.gtrace" --kernels 2000 --names 20 --api --chunk-bytes 16384 \
	--no-footer >/dev/null 2>"$tmp/err" || fail "mktrace --no-footer: $(cat "$tmp/err")"
expect_rc 0 "$gputrace" info "$tmp/r.gtrace"
out_has_line "records:     4034"
out_has_line "  kernel       2000"
out_has_line "losses:      none"
out_has_line "recovered:   yes (7 chunks read, 0 skipped, 0 bytes)"
out_has_line "time span:   0.107829190 s (1000000000000 .. 1000107829190 ns), records from 0.000000000 s"

# ... killed in the middle of a chunk: the chunks before it, and the loss, are reported; its
# time span is the whole trace's still, from the header of the chunk cut short.
size=$(stat -c %s "$tmp/r.gtrace")
head -c $((size - 3000)) "$tmp/r.gtrace" >"$tmp/cut.gtrace"
# (what it holds on standard output; the line every reading command gives damage, and 65)
expect_rc 65 "$gputrace" info "$tmp/cut.gtrace"
err_matches "^gputrace: warning: info: $tmp/cut.gtrace is damaged: 1 chunk \(1637 bytes\) and 0 malformed records skipped$"
err_matches "^gputrace: warning: info: $tmp/cut.gtrace has no index \(its writer was interrupted\): 6 chunks recovered$"
out_has_line "time span:   0.107829190 s (1000000000000 .. 1000107829190 ns), records from 0.000000000 s"
out_has_line "losses:"
out_has_line "  damaged file     1 chunk, 1637 bytes unreadable"
out_has_line "recovered:   yes (6 chunks read, 1 skipped, 1637 bytes)"
out_has_line "index:       none (windows read the whole file; gputrace info --reindex makes one)"

# --reindex: the cut file gets a complete index, with what could be read; a second run finds
# it indexed; the traces of tests/data (from before chunk types) get their types.
expect_rc 0 "$gputrace" info --reindex "$tmp/cut.gtrace"
# (the records read, and the loss it keeps on record: a damaged_file LOSS record of 1 chunk)
out_has_line "$tmp/cut.gtrace: reindexed: 3397 records in 2 chunks, $((size - 3000)) -> $(stat -c %s "$tmp/cut.gtrace") bytes (it had no index: recovered)"
out_has_line "$tmp/cut.gtrace: 1 damaged chunk could not be read and is left out"
[ ! -e "$tmp/cut.gtrace.tmp-"* ] 2>/dev/null || fail "a temporary file was left: $(ls "$tmp")"
expect_rc 0 "$gputrace" info "$tmp/cut.gtrace"
out_has_line "records:     3397"
out_has_line "  damaged file     1 chunk left out, recorded in the trace (merge, --reindex)"
out_has_line "recovered:   no"
out_has_line "index:       2 chunks, with their record types"
expect_rc 0 "$gputrace" info --reindex "$tmp/cut.gtrace"
out_has_line "$tmp/cut.gtrace: reindexed: 3397 records in 2 chunks, $(stat -c %s "$tmp/cut.gtrace") -> $(stat -c %s "$tmp/cut.gtrace") bytes (it had an index with chunk types)"
# the loss stays on record through every output
expect_rc 0 "$gputrace" stats -r losses -f csv "$tmp/cut.gtrace"
grep -qE '^damaged_file,[1-9][0-9]*,1 chunk \(1637 bytes\) and 0 malformed records skipped \(recorded in the trace by merge or --reindex\)$' "$tmp/out" ||
	fail "stats after --reindex: no damaged_file row: $(cat "$tmp/out")"
cp "$(dirname "$0")/data/ddp-2rank.gtrace" "$tmp/old.gtrace"
expect_rc 0 "$gputrace" info "$tmp/old.gtrace"
out_has_line "index:       7 chunks, without their record types (windows read the whole file; gputrace info --reindex adds them)"
expect_rc 0 "$gputrace" info --reindex "$tmp/old.gtrace"
out_has_line "$tmp/old.gtrace: reindexed: 4776 records in 2 chunks, 33818 -> $(stat -c %s "$tmp/old.gtrace") bytes (it had an index without chunk types)"
expect_rc 0 "$gputrace" info "$tmp/old.gtrace"
out_has_line "records:     4776"
out_has_line "index:       2 chunks, with their record types"
expect_rc 66 "$gputrace" info --reindex "$tmp/missing.gtrace"
expect_err "gputrace: $tmp/missing.gtrace: No such file or directory"
expect_rc 65 "$gputrace" info --reindex "$tmp/short.gtrace"
expect_err "gputrace: $tmp/short.gtrace: truncated header"

# A bit flipped inside a chunk of a complete file: that chunk is skipped, the footer holds.
"$mktrace" -o "$tmp/flip.gtrace" --kernels 3000 --names 12 --api --losses 5 \
	--chunk-bytes 16384 >/dev/null 2>"$tmp/err" || fail "mktrace: $(cat "$tmp/err")"
printf '\377' | dd of="$tmp/flip.gtrace" bs=1 seek=$((hlen + 100)) conv=notrunc status=none
expect_rc 65 "$gputrace" info "$tmp/flip.gtrace"
err_matches "^gputrace: warning: info: $tmp/flip.gtrace is damaged: 1 chunk \([0-9]+ bytes\) and 0 malformed records skipped$"
out_has_line "losses:"
out_has_line "  cupti_dropped    7"
grep -qE '^  damaged file     1 chunk, [0-9]+ bytes unreadable$' "$tmp/out" ||
	fail "no damaged-file line: $(cat "$tmp/out")"
out_has_line "recovered:   no"

# The time base (docs/cli.md, "Time") of a recorded trace: its zero is the header's start,
# 4.63 s of Python start-up before the first record; the span runs from there to the end of
# the last record, as stats, windows and both exports count it. A copy without its footer (a
# writer killed after its last chunk) counts from the same zero.
data=$(dirname "$0")/data
expect_rc 0 "$gputrace" info "$data/pytorch-train.gtrace"
out_has_line "started:     2026-12-01T14:30:09.701000799Z"
out_has_line "time span:   11.553885202 s (26369932036 .. 37923817238 ns), records from 4.628877628 s"
size=$(stat -c %s "$data/pytorch-train.gtrace")
head -c "$(od -An -tu8 -j $((size - 24)) -N8 "$data/pytorch-train.gtrace" | tr -d ' ')" \
	"$data/pytorch-train.gtrace" >"$tmp/bare.gtrace"
expect_rc 0 "$gputrace" info "$tmp/bare.gtrace"
out_has_line "recovered:   yes (3 chunks read, 0 skipped, 0 bytes)"
out_has_line "started:     2026-12-01T14:30:09.701000799Z"
out_has_line "time span:   11.553885202 s (26369932036 .. 37923817238 ns), records from 4.628877628 s"
# A merged trace counts from its own zero: the earlier start of its inputs (rank 1's, whose
# clock the merge moved by 20 ns), on the same date, and its span ends with rank 1's too.
expect_rc 0 "$gputrace" merge -q -o "$tmp/ddp.gtrace" "$data/ddp-rank0.gtrace" "$data/ddp-rank1.gtrace"
expect_rc 0 "$gputrace" info "$data/ddp-rank1.gtrace"
out_has_line "started:     2026-12-01T14:30:46.964149048Z"
out_has_line "time span:   9.281453818 s (63633080255 .. 72914534073 ns), records from 0.015212951 s"
expect_rc 0 "$gputrace" info "$tmp/ddp.gtrace"
out_has_line "started:     2026-12-01T14:30:46.964149048Z"
out_has_line "time span:   9.281453818 s (63633080275 .. 72914534093 ns), records from 0.015212951 s"

cli_done cli-info
