#!/usr/bin/env bash
# CLI test for `gputrace export`: usage errors and exit codes, default and explicit output
# names, standard output, a trace whose footer is missing. The trace comes from a real
# `gputrace run` of session-child (a process that registers with the session; no GPU needed).
# With tests/mktrace, also a larger synthetic trace: every record exported, --max-size splits,
# a trace without footer. Usage: cli-export.sh gputrace session-child [mktrace]
set -u
gputrace=$(realpath "$1")
session_child=$(realpath "$2")
mktrace=${3:+$(realpath "$3")}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=cli-common.sh
. "$(dirname "$0")/cli-common.sh"
cd "$tmp" || exit 1

valid_json() {
	python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$1" 2>/dev/null ||
		fail "$1 is not valid JSON"
}

touch libgputrace-inject.so
GPUTRACE_INJECT_LIB=$tmp/libgputrace-inject.so "$gputrace" run -q -o run -- "$session_child" 1 \
	>/dev/null 2>&1
[ -f run.gtrace ] || { echo "FAIL: could not make a trace to export" >&2; exit 1; }
formats=$("$gputrace" export --help | sed -n 's/^  \([a-z]*\) .*(\..*)$/\1/p' | paste -sd, - |
	sed 's/,/, /g')
[ -n "$formats" ] || fail "export --help lists no format"

# ---- usage errors: exit 64, one line ----
expect_rc 0 "$gputrace" export --help
[ "$(head -n 1 "$tmp/out")" = "Usage: gputrace export FILE -f FORMAT [options]" ] ||
	fail "export --help: $(head -n 1 "$tmp/out")"
expect_rc 64 "$gputrace" export
expect_err "gputrace: export: no trace file; usage: gputrace export FILE -f FORMAT [-o OUT]"
expect_rc 64 "$gputrace" export run.gtrace
expect_err "gputrace: export: which format? add -f with one of: $formats"
expect_rc 64 "$gputrace" export run.gtrace -f svg
expect_err "gputrace: export: -f: 'svg' is not valid; use one of: $formats"
expect_rc 64 "$gputrace" export run.gtrace other.gtrace -f chrome
expect_err "gputrace: export: one trace file at a time ('other.gtrace' is extra)"
expect_rc 64 "$gputrace" export run.gtrace -f chrome --max-size 10K
expect_err "gputrace: export: --max-size: '10K' is not valid; use a size of at least 1M, e.g. 500M"
expect_rc 64 "$gputrace" export run.gtrace -f chrome --bogus
expect_err "gputrace: export: unknown option '--bogus'; see 'gputrace export --help'"
expect_rc 64 "$gputrace" export run.gtrace -f
expect_err "gputrace: export: option '-f' needs a value; see 'gputrace export --help'"
expect_rc 64 "$gputrace" export run.gtrace -f chrome -o run.gtrace
expect_err "gputrace: export: the output would replace the trace itself; choose another with -o"

# ---- input errors: 66 missing, 65 not a trace ----
expect_rc 66 "$gputrace" export missing.gtrace -f chrome
expect_err "gputrace: missing.gtrace: No such file or directory"
echo "not a trace" >bogus.gtrace
expect_rc 65 "$gputrace" export bogus.gtrace -f chrome
err_matches '^gputrace: bogus\.gtrace: .+$'
[ ! -e bogus.json ] || fail "an output was left for an unreadable trace"

# ---- default name: FILE with the format's extension; a closing line on stderr ----
expect_rc 0 "$gputrace" export run.gtrace -f chrome
[ -s run.json ] || fail "no run.json"
valid_json run.json
err_matches '^gputrace: wrote run\.json \([0-9,]+ events, [0-9.]+ (B|KiB)\)$'
# An existing output is replaced.
expect_rc 0 "$gputrace" export run.gtrace -f chrome -q
[ ! -s "$tmp/err" ] || fail "-q printed: $(cat "$tmp/err")"

# ---- explicit output, other formats ----
expect_rc 0 "$gputrace" export run.gtrace -f perfetto -o sub.pftrace
[ -s sub.pftrace ] || fail "no sub.pftrace"
expect_rc 0 "$gputrace" export run.gtrace -f csv -q
[ "$(tail -n +2 run-process.csv | wc -l)" -eq 2 ] || fail "csv: $(cat run-process.csv)"

# ---- standard output ----
expect_rc 0 "$gputrace" export run.gtrace -f chrome -o -
cp "$tmp/out" stdout.json
valid_json stdout.json
[ ! -s "$tmp/err" ] || fail "-o - printed on stderr: $(cat "$tmp/err")"

# ---- a trace whose writer was killed (no footer) still exports, with a warning ----
size=$(stat -c %s run.gtrace)
head -c $((size - 40)) run.gtrace >cut.gtrace
expect_rc 0 "$gputrace" export cut.gtrace -f chrome
valid_json cut.json
err_matches '^gputrace: warning: cut\.gtrace has no index \(its writer was interrupted\): [0-9]+ chunks? recovered, [0-9]+ damaged ones? skipped$'

# ---- a larger synthetic trace: nothing lost on the way, splitting, recovery ----
if [ -n "$mktrace" ]; then
	"$mktrace" -o big.gtrace --kernels 20000 --api --memcpy >/dev/null ||
		fail "mktrace could not write big.gtrace"
	expect_rc 0 "$gputrace" export big.gtrace -f csv -q
	[ "$(tail -n +2 big-kernel.csv | wc -l)" -eq 20000 ] ||
		fail "csv: $(tail -n +2 big-kernel.csv | wc -l) kernel rows, expected 20000"
	[ "$(tail -n +2 big-api.csv | wc -l)" -eq 20000 ] ||
		fail "csv: $(tail -n +2 big-api.csv | wc -l) API rows, expected 20000"
	expect_rc 0 "$gputrace" export big.gtrace -f chrome --max-size 1M
	err_matches '^gputrace: wrote big\.json \([0-9,]+ events, [0-9.]+ MiB in [0-9]+ files\)$'
	valid_json big.json
	valid_json big.1.json
	# Written as a killed writer leaves it: every chunk is still read.
	"$mktrace" -o cut2.gtrace --kernels 20000 --api --no-footer --chunk-bytes 65536 >/dev/null ||
		fail "mktrace could not write cut2.gtrace"
	expect_rc 0 "$gputrace" export cut2.gtrace -f csv
	err_matches '^gputrace: warning: cut2\.gtrace has no index \(its writer was interrupted\): [0-9]+ chunks recovered, 0 damaged ones skipped$'
	[ "$(tail -n +2 cut2-kernel.csv | wc -l)" -eq 20000 ] ||
		fail "recovered csv: $(tail -n +2 cut2-kernel.csv | wc -l) kernel rows, expected 20000"
fi

# ---- --split ranks (one file per rank, for HTA and TensorBoard), --step, --no-steps ----
expect_rc 64 "$gputrace" export run.gtrace -f chrome --split procs
expect_err "gputrace: export: --split: 'procs' is not valid; use --split ranks"
expect_rc 64 "$gputrace" export run.gtrace -f perfetto --split ranks
expect_err "gputrace: export: --split is for -f chrome only"
expect_rc 64 "$gputrace" export run.gtrace -f csv --step step
expect_err "gputrace: export: --step is for -f chrome only"
expect_rc 64 "$gputrace" export run.gtrace -f perfetto --no-steps
expect_err "gputrace: export: --no-steps is for -f chrome only"
expect_rc 64 "$gputrace" export run.gtrace -f chrome --step step --no-steps
expect_err "gputrace: export: --step and --no-steps contradict each other; choose one"
expect_rc 64 "$gputrace" export run.gtrace -f chrome --step ''
expect_err "gputrace: export: --step: give the NVTX range's name, e.g. --step train_step"
expect_rc 64 "$gputrace" export run.gtrace -f chrome --split ranks --max-size 1M
expect_err "gputrace: export: --split ranks and --max-size do not go together: HTA would read the pieces of one rank as several files of that rank"
expect_rc 64 "$gputrace" export run.gtrace -f chrome --split ranks -o -
expect_err "gputrace: export: --split ranks writes a directory; -o - (standard output) cannot hold it"
# session-child's process has no rank: nothing to split by, and no directory is made
expect_rc 65 "$gputrace" export run.gtrace -f chrome --split ranks
expect_err "gputrace: export to run-ranks failed: no process of the trace has a rank (its launcher set none of RANK, OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK, SLURM_PROCID): nothing to split by"
[ ! -e run-ranks ] || fail "a directory was made for a trace without ranks"
if [ -n "$mktrace" ]; then
	# 1,000 launches per rank, 31 per step (20 names): 32 NVTX "step" ranges each
	"$mktrace" -o job.gtrace --processes 2 --api --kernels 2000 --names 20 --nccl --steps \
		>/dev/null ||
		fail "mktrace could not write job.gtrace"
	# a whole-trace export of two ranks says how HTA wants them
	expect_rc 0 "$gputrace" export job.gtrace -f chrome
	err_has_line "gputrace: the trace holds 2 ranks; Holistic Trace Analysis reads one rank per file: add --split ranks"
	expect_rc 0 "$gputrace" export job.gtrace -f chrome --split ranks
	err_matches '^gputrace: wrote job-ranks/ \(2 ranks: rank-N\.pt\.trace\.json, [0-9,]+ events, [0-9.]+ [KM]iB\)$'
	[ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "split: more than the closing line: $(cat "$tmp/err")"
	[ "$(ls job-ranks | paste -sd' ' -)" = "rank-0.pt.trace.json rank-1.pt.trace.json" ] ||
		fail "job-ranks/ holds: $(ls job-ranks)"
	# each file: its rank first, in the form HTA's regular expression finds; NCCL's kernels
	# ran, so the backend is nccl; only its own process and GPU
	for r in 0 1; do
		f=job-ranks/rank-$r.pt.trace.json
		[ "$(head -n 1 "$f")" = "{\"distributedInfo\": {\"backend\": \"nccl\", \"rank\": $r, \"world_size\": 2, \"local_rank\": $r}," ] ||
			fail "$f starts with: $(head -n 1 "$f")"
		python3 - "$f" "$r" <<'PY' || fail "$f: wrong processes or distributedInfo"
import json, sys
j = json.load(open(sys.argv[1]))
r = int(sys.argv[2])
pids = sorted({e["pid"] for e in j["traceEvents"]})
assert j["distributedInfo"] == {"backend": "nccl", "rank": r, "world_size": 2, "local_rank": r}, j["distributedInfo"]
assert pids == [r, 4100 + 7 * r], pids  # its GPU (device r) as pid r, as Kineto writes it
assert j["gputrace"]["rank_file"] == r and j["gputrace"]["split"] == "ranks"
steps = [e["name"] for e in j["traceEvents"] if e["name"].startswith("ProfilerStep#")]
assert steps == ["ProfilerStep#%d" % i for i in range(32)], steps
assert j["gputrace"]["profiler_steps"] == 32 and j["gputrace"]["steps_from"] == "step"
PY
	done
	# -o names the directory; an existing file there cannot be one
	expect_rc 0 "$gputrace" export job.gtrace -f chrome --split ranks -o hta -q --no-steps
	expect_err ""
	[ -f hta/rank-1.pt.trace.json ] || fail "-o hta: no hta/rank-1.pt.trace.json"
	! grep -q ProfilerStep hta/rank-1.pt.trace.json || fail "--no-steps wrote ProfilerStep"
	expect_rc 0 "$gputrace" export job.gtrace -f chrome --step nothing -o named.json -q
	! grep -q ProfilerStep named.json || fail "--step nothing wrote ProfilerStep"
	touch plain
	expect_rc 73 "$gputrace" export job.gtrace -f chrome --split ranks -o plain
	expect_err "gputrace: export to plain failed: plain exists and is not a directory: --split ranks writes a directory"
	# other trace files in the directory would be read by HTA as ranks too
	echo '{}' >hta/old.json
	expect_rc 0 "$gputrace" export job.gtrace -f chrome --split ranks -o hta -q
	expect_err "gputrace: warning: hta also holds 1 other .json or .gz file, which HTA would read as ranks of this job too: remove it or export to an empty directory"
fi

cli_done cli-export
