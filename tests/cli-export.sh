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
expect_err "gputrace: export: no trace file; usage: gputrace export FILE... -f FORMAT [-o OUT]"
expect_rc 64 "$gputrace" export run.gtrace
expect_err "gputrace: export: which format? add -f with one of: $formats"
expect_rc 64 "$gputrace" export run.gtrace -f svg
expect_err "gputrace: export: -f: 'svg' is not valid; use one of: $formats"
expect_rc 64 "$gputrace" export run.gtrace other.gtrace -f chrome
expect_err "gputrace: export: several traces are exported together only with -f parquet (a folder of partitions); export -f chrome one trace at a time"
expect_rc 64 "$gputrace" export run.gtrace -f chrome --max-size 10K
expect_err "gputrace: export: --max-size: '10K' is not valid; use a size of at least 1M, e.g. 500M"
expect_rc 64 "$gputrace" export run.gtrace -f chrome --bogus
expect_err "gputrace: export: unknown option '--bogus'; see 'gputrace export --help'"
expect_rc 64 "$gputrace" export run.gtrace -f
expect_err "gputrace: export: option '-f' needs a value; see 'gputrace export --help'"
expect_rc 64 "$gputrace" export run.gtrace -f chrome -o run.gtrace
expect_err "gputrace: export: the output run.gtrace is the input run.gtrace (the same file): choose another output name"

# ---- input errors: 66 missing, 65 not a trace ----
expect_rc 66 "$gputrace" export missing.gtrace -f chrome
expect_err "gputrace: export: missing.gtrace: No such file or directory"
echo "not a trace" >bogus.gtrace
expect_rc 65 "$gputrace" export bogus.gtrace -f chrome
err_matches '^gputrace: export: cannot read bogus\.gtrace: .+$'
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
# csv writes several files: standard output cannot hold them (64, a usage error)
expect_rc 64 "$gputrace" export run.gtrace -f csv -o -
expect_err "gputrace: export: csv writes one file per record kind: give -o NAME.csv (it writes NAME-kernel.csv, NAME-api.csv, ...)"
# an output that cannot be created is 73, whatever the format
expect_rc 73 "$gputrace" export run.gtrace -f perfetto -o /proc/no-such.pftrace -q
expect_err "gputrace: export to /proc/no-such.pftrace failed: cannot create /proc/no-such.pftrace: No such file or directory"
expect_rc 73 "$gputrace" export run.gtrace -f chrome -o no-such-dir/x.json -q
expect_err "gputrace: export: cannot create no-such-dir/x.json: its folder does not exist"

# ---- a trace whose writer was killed (no footer) still exports, with a warning ----
size=$(stat -c %s run.gtrace)
head -c $((size - 40)) run.gtrace >cut.gtrace
expect_rc 0 "$gputrace" export cut.gtrace -f chrome
valid_json cut.json
# (cut inside its footer: no chunk is lost, so no damage line)
err_matches '^gputrace: warning: export: cut\.gtrace has no index \(its writer was interrupted\): [0-9]+ chunks? recovered$'
grep -q 'is damaged' "$tmp/err" && fail "a cut footer is no damage: $(cat "$tmp/err")"

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
	err_matches '^gputrace: warning: export: cut2\.gtrace has no index \(its writer was interrupted\): [0-9]+ chunks recovered$'
	[ "$(tail -n +2 cut2-kernel.csv | wc -l)" -eq 20000 ] ||
		fail "recovered csv: $(tail -n +2 cut2-kernel.csv | wc -l) kernel rows, expected 20000"
fi

# ---- windows (docs/cli.md, "Windows") ----
if [ -n "$mktrace" ]; then
	"$mktrace" -o w.gtrace --kernels 20000 --api --processes 2 --names 50 --steps \
		--chunk-bytes 16384 >/dev/null || fail "mktrace could not write w.gtrace"
	expect_rc 0 "$gputrace" export w.gtrace -f csv -o all.csv -q
	start=$(tail -n +2 all-process.csv | cut -d, -f2 | sort -n | head -n 1)
	# 20 ms to 35 ms after the start: rows of the whole export that meet the window, counted
	# here with awk, against the window's own export (slices cut at the edges)
	from=$((start + 20000000)) to=$((start + 35000000))
	expect_rc 0 "$gputrace" export w.gtrace -f csv -o win.csv --from 20ms --to +15ms
	err_has_line "gputrace: window: 0.020 s to 0.035 s"
	err_matches '^gputrace: wrote [0-9]+ files \([0-9,]+ events, [0-9.]+ KiB; read [0-9]+ of [0-9]+ chunks\):$'
	err_has_line "gputrace:   win-kernel.csv"
	chunks=$(sed -n 's/.*; read \([0-9]*\) of \([0-9]*\) chunks):$/\1 \2/p' "$tmp/err")
	[ "${chunks% *}" -lt "${chunks#* }" ] || fail "the window read every chunk: $chunks"
	for kind in kernel api nvtx; do
		want=$(awk -F, -v f="$from" -v t="$to" 'NR > 1 && $2 < t && $3 > f' "all-$kind.csv" | wc -l)
		got=$(tail -n +2 "win-$kind.csv" | wc -l)
		[ "$want" -gt 0 ] && [ "$got" -eq "$want" ] ||
			fail "window: $got $kind rows, expected $want"
		outside=$(awk -F, -v f="$from" -v t="$to" 'NR > 1 && ($2 < f || $3 > t)' "win-$kind.csv" | wc -l)
		[ "$outside" -eq 0 ] || fail "window: $outside $kind rows reach outside it"
	done
	# sqlite: the same window, the same kernels and calls
	if grep -q sqlite <<<"$formats"; then
		expect_rc 0 "$gputrace" export w.gtrace -f sqlite -o win.sqlite --from 20ms --to +15ms -q
		for t in KERNEL:kernel RUNTIME:api; do
			expect_rc 0 "$gputrace" sql win.sqlite -q -f csv \
				"SELECT count(*) AS n FROM CUPTI_ACTIVITY_KIND_${t%:*}"
			n=$(tail -n 1 "$tmp/out" | tr -d '\r')
			[ "$n" = "$(tail -n +2 "win-${t#*:}.csv" | wc -l)" ] ||
				fail "sqlite window: $n ${t%:*} rows, csv has $(tail -n +2 "win-${t#*:}.csv" | wc -l)"
		done
	fi
	# metadata stays: both processes, their threads
	[ "$(tail -n +2 win-process.csv | wc -l)" -eq 2 ] || fail "window: processes: $(cat win-process.csv)"
	# the same window read by a scan (the footer cut off) gives the same rows
	size=$(stat -c %s w.gtrace)
	head -c $((size - 40)) w.gtrace >wcut.gtrace
	expect_rc 0 "$gputrace" export wcut.gtrace -f csv -o wcut.csv --from 20ms --to +15ms -q
	for kind in kernel api nvtx; do
		cmp -s "win-$kind.csv" "wcut-$kind.csv" || fail "window by scan: $kind rows differ"
	done

	# --nvtx: the steps by number, in each process; --rank, --pid
	# (mktrace's steps are ranges named "step": numbered by their place in their process)
	expect_rc 0 "$gputrace" export w.gtrace -f csv -o steps.csv --nvtx step:3..4
	err_has_line "gputrace: window: step 3..4 (4 ranges in 2 processes), 0.001 s to 0.003 s (--from @1000001390001 --to @1000003278049)"
	for pid in 4100 4107; do
		# the 4th and 5th step of the process, from the whole export, whole in the window
		grep "^$pid,.*,step," all-nvtx.csv | sort -t, -k2,2n | sed -n '4,5p' >"$tmp/want"
		[ "$(wc -l <"$tmp/want")" -eq 2 ] || fail "--nvtx: the whole export has no steps 3, 4 of $pid"
		while read -r row; do
			grep -qxF "$row" steps-nvtx.csv || fail "--nvtx step:3..4: no row [$row]"
		done <"$tmp/want"
	done
	expect_rc 0 "$gputrace" export w.gtrace -f csv -o r1.csv --nvtx step:3 --rank 1 -q
	[ "$(tail -n +2 r1-process.csv | wc -l)" -eq 1 ] || fail "--rank 1: $(cat r1-process.csv)"
	grep "^4107,.*,step," all-nvtx.csv | sort -t, -k2,2n | sed -n '4p' >"$tmp/want"
	grep -qxF "$(cat "$tmp/want")" r1-nvtx.csv || fail "--rank 1: $(cat r1-nvtx.csv)"
	[ "$(cut -d, -f1 r1-kernel.csv | sort -u | grep -vc pid)" -eq 1 ] || fail "--rank 1: kernels of other processes"
	expect_rc 0 "$gputrace" export w.gtrace -f csv -o p.csv --pid 4100 --stream 13 -q
	[ "$(cut -d, -f1,7 p-kernel.csv | tail -n +2 | sort -u)" = "4100,13" ] ||
		fail "--pid 4100 --stream 13: $(cut -d, -f1,7 p-kernel.csv | sort -u | head)"

	# usage errors
	expect_rc 64 "$gputrace" export w.gtrace -f csv --from 1x
	expect_err "gputrace: export: --from: '1x' is not a time; use seconds from the trace's zero (2.5, 90s, 1m30s, 250ms), @NS on the trace clock, or a date (2024-05-01T12:00:03Z)"
	expect_rc 64 "$gputrace" export w.gtrace -f csv --from 2 --to 1
	expect_err "gputrace: export: --to 1 is not after --from 2"
	expect_rc 64 "$gputrace" export w.gtrace -f csv --from 2 --nvtx step
	expect_err "gputrace: export: --nvtx and --from/--to both choose the time; give one of them"
	expect_rc 64 "$gputrace" export w.gtrace -f csv --nvtx :3
	expect_err "gputrace: export: --nvtx: ':3' is not valid; use NAME, NAME:N or NAME:N..M (e.g. ProfilerStep:100..105)"
	expect_rc 64 "$gputrace" export w.gtrace -f csv --nvtx Profiler
	expect_err "gputrace: export: --nvtx: no NVTX range named 'Profiler' in w.gtrace; its ranges: step (262); its steps are those of the step family (262 of them; gputrace view --first-steps N finds them)"
	expect_rc 64 "$gputrace" export w.gtrace -f csv --nvtx step:900..901
	expect_err "gputrace: export: --nvtx: w.gtrace has 262 ranges named 'step', numbered 0 to 130; none in step:900..901"
	expect_rc 64 "$gputrace" export w.gtrace -f csv --pid x
	expect_err "gputrace: export: --pid: 'x' is not valid; use a number or a comma-separated list (e.g. 0,2)"

	# too big for the viewer (GPUTRACE_UI_LIMIT stands for the 2 GB a test cannot write):
	# the estimate, windows that fit, and the export is written anyway
	GPUTRACE_UI_LIMIT=400K expect_rc 0 "$gputrace" export w.gtrace -f perfetto -o big.pftrace
	err_has_line "gputrace: warning: w.gtrace as protobuf: about 2.34 MiB (40,264 records at about 61 bytes each), more than the Perfetto UI holds (about 400.00 KiB); it would open only in trace_processor"
	err_has_line "gputrace: windows that fit:"
	err_has_line "gputrace:   the first 10 steps: gputrace export w.gtrace -f perfetto --from @1000000000000 --to @1000005496824  (about 109.55 KiB)"
	err_matches '^gputrace:   the first [0-9]+ms: gputrace export w\.gtrace -f perfetto --from 0 --to \+[0-9]+ms  \(about [0-9.]+ KiB\)$'
	err_has_line "gputrace:   all of it, in pieces that each open: gputrace export w.gtrace -f perfetto --max-size 1M"
	[ -s big.pftrace ] || fail "no big.pftrace"
	# what the warning offers fits
	cmd=$(sed -n 's/^gputrace:   the first [0-9]*ms: \(.*\)  (about .*/\1/p' "$tmp/err")
	GPUTRACE_UI_LIMIT=400K expect_rc 0 "$gputrace" ${cmd#gputrace } -o first.pftrace
	[ "$(stat -c %s first.pftrace)" -le 409600 ] || fail "the window offered is $(stat -c %s first.pftrace) bytes"
	grep -q "warning" "$tmp/err" && fail "the window offered is too big: $(cat "$tmp/err")"
	GPUTRACE_UI_LIMIT=400K expect_rc 0 "$gputrace" export w.gtrace -f chrome -o big.json -q
	[ ! -s "$tmp/err" ] || fail "-q printed: $(cat "$tmp/err")"

	# a real trace with PyTorch's ProfilerStep#N: the steps offered as --nvtx, and that fits
	cp "$(dirname "$0")/data/ddp-2rank.gtrace" ddp.gtrace
	GPUTRACE_UI_LIMIT=250K expect_rc 0 "$gputrace" export ddp.gtrace -f perfetto -o ddp.pftrace
	err_has_line "gputrace:   the first 5 steps: gputrace export ddp.gtrace -f perfetto --nvtx ProfilerStep:0..4  (about 181.69 KiB)"
	GPUTRACE_UI_LIMIT=250K expect_rc 0 "$gputrace" export ddp.gtrace -f perfetto -o ddp5.pftrace --nvtx ProfilerStep:0..4
	err_has_line "gputrace: window: ProfilerStep 0..4 (10 ranges in 2 processes), 15.323 s to 15.974 s (--from @53766366943 --to @54417115796)"
	grep -q "warning" "$tmp/err" && fail "the steps offered are too big: $(cat "$tmp/err")"

	# perfetto cut by time: files of at most --max-size, each with its time range
	"$mktrace" -o w2.gtrace --kernels 60000 --api --steps >/dev/null || fail "mktrace w2"
	expect_rc 0 "$gputrace" export w2.gtrace -f perfetto -o cut.pftrace --max-size 1M
	err_matches '^gputrace: wrote cut\.pftrace \([0-9,]+ events, [0-9.]+ MiB in [0-9]+ files\)$'
	err_has_line "gputrace:   cut.pftrace: 0.000 s to $(sed -n 's/^gputrace:   cut\.pftrace: 0\.000 s to \([0-9.]*\) s$/\1/p' "$tmp/err") s"
	n=$(ls cut*.pftrace | wc -l)
	[ "$n" -ge 3 ] || fail "--max-size 1M: $n files"
	for f in cut*.pftrace; do
		[ "$(stat -c %s "$f")" -le 1048576 ] || fail "$f is $(stat -c %s "$f") bytes"
		grep -qxF "gputrace:   $f: $(sed -n "s/^gputrace:   ${f//./\\.}: \(.*\)$/\1/p" "$tmp/err")" "$tmp/err" ||
			fail "no time range for $f"
	done
	expect_rc 64 "$gputrace" export w2.gtrace -f perfetto -o - --max-size 1M
	expect_err "gputrace: export: --max-size cuts perfetto output into files; give -o, not -o -"
fi

# ---- times outside the trace (docs/cli.md, "Time") ----
# pytorch-train runs from 2026-12-01T14:30:09.701000799Z (its zero) for 11.554 s: a window
# wholly before or after it selects nothing, an error that says where the trace is, and
# nothing is written; one that reaches past an edge is cut there, and says so; a date inside
# is on the same ruler as seconds.
cp "$(dirname "$0")/data/pytorch-train.gtrace" pt.gtrace
where="pt.gtrace, which runs from 2026-12-01T14:30:09.701000799Z (0.000 s) to 2026-12-01T14:30:21.254886001Z (11.554 s)"
expect_rc 64 "$gputrace" export pt.gtrace -f perfetto -o d.pftrace --from 2026-12-01T10:00:00Z --to 2026-12-01T11:00:00Z
expect_err "gputrace: export: --from 2026-12-01T10:00:00Z --to 2026-12-01T11:00:00Z selects nothing: it is before $where"
expect_rc 64 "$gputrace" export pt.gtrace -f perfetto -o d.pftrace --from 2026-12-02T00:00:00Z
expect_err "gputrace: export: --from 2026-12-02T00:00:00Z selects nothing: it is after $where"
expect_rc 64 "$gputrace" export pt.gtrace -f chrome -o d.json --from 12
expect_err "gputrace: export: --from 12 selects nothing: it is after $where"
[ ! -e d.pftrace ] && [ ! -e d.json ] || fail "a window that selects nothing was written"
expect_rc 0 "$gputrace" export pt.gtrace -f perfetto -o d.pftrace --from 2026-12-01T10:00:00Z --to 12
err_has_line "gputrace: warning: export: --from 2026-12-01T10:00:00Z is before pt.gtrace starts; the window starts with it (0.000 s, 2026-12-01T14:30:09.701000799Z)"
err_has_line "gputrace: warning: export: --to 12 is after pt.gtrace ends; the window ends with it (11.554 s)"
err_has_line "gputrace: window: 0.000 s to 11.554 s"
err_matches '^gputrace: wrote d\.pftrace \(1,692 events, '
[ "$(wc -l <"$tmp/err")" -eq 4 ] || fail "more than the window's lines: $(cat "$tmp/err")"
expect_rc 0 "$gputrace" export pt.gtrace -f perfetto -o d.pftrace --from 2026-12-01T14:30:19.701000799Z --to +500ms -q
expect_rc 0 "$gputrace" export pt.gtrace -f perfetto -o s.pftrace --from 10 --to 10.5
err_has_line "gputrace: window: 10.000 s to 10.500 s"
cmp -s d.pftrace s.pftrace || fail "a date and the seconds of the same moment gave other windows"

# ---- --split ranks (one file per rank, for HTA and TensorBoard), --step, --no-steps ----
expect_rc 64 "$gputrace" export run.gtrace -f chrome --split procs
expect_err "gputrace: export: --split: 'procs' is not valid; use --split ranks"
expect_rc 64 "$gputrace" export run.gtrace -f perfetto --split ranks
expect_err "gputrace: export: --split is for -f chrome only"
expect_rc 64 "$gputrace" export run.gtrace -f csv --step step
expect_err "gputrace: export: --step is for -f chrome and -f perfetto only"
expect_rc 64 "$gputrace" export run.gtrace -f sqlite --no-steps
expect_err "gputrace: export: --no-steps is for -f chrome and -f perfetto only"
expect_rc 64 "$gputrace" export run.gtrace -f chrome --step step --no-steps
expect_err "gputrace: export: --step and --no-steps contradict each other; choose one"
expect_rc 64 "$gputrace" export run.gtrace -f chrome --step ''
expect_err "gputrace: export: --step takes the name of an NVTX range, e.g. --step train_step"
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
# the first event is the instant at the trace's zero (docs/cli.md, "Time"), on no process
assert j["traceEvents"][0]["name"] == "trace start" and j["traceEvents"][0]["ts"] == 0
pids = sorted({e["pid"] for e in j["traceEvents"][1:]})
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
	expect_err "gputrace: export: plain exists and is a file, not a folder; choose another output name"
	# a folder that holds other files than an earlier export's is never replaced (HTA would
	# read other .json files as ranks too, and they are the user's)
	echo '{}' >hta/old.json
	expect_rc 73 "$gputrace" export job.gtrace -f chrome --split ranks -o hta -q
	expect_err "gputrace: export: hta exists and holds other files than an export's (old.json): choose another output name, or empty it"
	[ -f hta/old.json ] && [ -f hta/rank-1.pt.trace.json ] || fail "hta was changed: $(ls hta)"
	# an earlier export's folder is replaced whole: a rank it had and this one has not goes
	rm hta/old.json
	cp hta/rank-1.pt.trace.json hta/rank-7.pt.trace.json
	expect_rc 0 "$gputrace" export job.gtrace -f chrome --split ranks -o hta -q
	[ ! -e hta/rank-7.pt.trace.json ] || fail "a stale rank-7.pt.trace.json was kept"
	[ "$(ls hta | grep -c .)" -eq "$(ls hta | grep -c '^rank-[0-9]*\.pt\.trace\.json$')" ] ||
		fail "hta holds other files: $(ls -a hta)"
fi

# ---- steps: one name in every export, numbered as in the whole trace (a window too) ----
data=$(cd "$(dirname "$0")/data" && pwd)
cp "$data/pytorch-train.gtrace" train.gtrace
for f in chrome perfetto; do
	expect_rc 0 "$gputrace" export train.gtrace -f "$f" --nvtx step:10..15 -o "win-steps.$f" -q
	got=$(grep -ao 'ProfilerStep#[0-9]*' "win-steps.$f" | sort -u -t'#' -k2n | tr '\n' ' ')
	[ "$got" = "ProfilerStep#10 ProfilerStep#11 ProfilerStep#12 ProfilerStep#13 ProfilerStep#14 ProfilerStep#15 " ] ||
		fail "$f window step:10..15: steps named [$got]"
	expect_rc 0 "$gputrace" export train.gtrace -f "$f" --no-steps --nvtx step:10..15 -o "raw.$f" -q
	! grep -aq 'ProfilerStep#' "raw.$f" || fail "$f --no-steps wrote ProfilerStep#N"
done

# ---- a window's NVTX range: clamping is said, an unknown name lists the names there are ----
expect_rc 0 "$gputrace" export train.gtrace -f perfetto --nvtx step:15..60 -o clamp.pftrace -q
err_has_line "gputrace: warning: export: --nvtx step:15..60: train.gtrace has ranges 'step' numbered 0 to 19 only: the window holds 15..19"
expect_rc 64 "$gputrace" export train.gtrace -f perfetto --nvtx Step -o clamp.pftrace -q
expect_err "gputrace: export: --nvtx: no NVTX range named 'Step' in train.gtrace; its ranges: step (20), graph-step (10); its steps are those of the step family (20 of them; gputrace view --first-steps N finds them)"

cli_done cli-export
