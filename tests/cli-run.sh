#!/usr/bin/env bash
# CLI test for `gputrace run` without a GPU: option errors with their exact messages and exit
# codes, output names and overwrite refusal, the program's environment, exit-status
# propagation, signal forwarding, waiting for orphaned descendants, a program that never uses
# CUDA, exec failures. Programs are /bin/sh scripts; the injection library is a placeholder
# file (nothing here initializes CUDA, so the driver never opens it).
# Usage: cli-run.sh PATH/TO/gputrace [PATH/TO/session-child [PATH/TO/nvtx-app PATH/TO/lib]]
# (lib: the real libgputrace-inject.so, for the runs without the CLI)
set -u
gputrace=$(realpath "$1")
session_child=${2:+$(realpath "$2")}
nvtx_app=${3:+$(realpath "$3")}
inject_lib=${4:+$(realpath "$4")}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=cli-common.sh
. "$(dirname "$0")/cli-common.sh"
cd "$tmp" || exit 1

unset CUDA_INJECTION64_PATH NVTX_INJECTION64_PATH GPUTRACE_SESSION GPUTRACE_TRACE GPUTRACE_API \
	GPUTRACE_BUFFER_SIZE GPUTRACE_FLUSH_MS GPUTRACE_CAPTURE_RANGE GPUTRACE_GRAPH GPUTRACE_WRITE_QUEUE \
	GPUTRACE_WRITE_TIMEOUT
touch "$tmp/libgputrace-inject.so"
lib=$(realpath "$tmp/libgputrace-inject.so")
export GPUTRACE_INJECT_LIB=$lib
run() { "$gputrace" run "$@"; }

# ---- help and usage errors: one line naming the option and what it accepts, exit 64 ----
expect_rc 0 run --help
[ "$(head -n 1 "$tmp/out")" = "Usage: gputrace run [options] [--] program [args...]" ] ||
	fail "run --help: first line is $(head -n 1 "$tmp/out")"
expect_rc 64 run
expect_err "gputrace: run: no program to trace; usage: gputrace run [options] [--] program [args...]"
expect_rc 64 run -q
expect_err "gputrace: run: no program to trace; usage: gputrace run [options] [--] program [args...]"
expect_rc 64 run --nope true
expect_err "gputrace: run: unknown option '--nope'; see 'gputrace run --help'"
expect_rc 64 run -o
expect_err "gputrace: run: option '-o' needs a value; see 'gputrace run --help'"
expect_rc 64 run --api foo true
expect_err "gputrace: run: --api: 'foo' is not valid; use launch, all or none"
expect_rc 64 run -t kernel,bogus true
expect_err "gputrace: run: --trace: 'kernel,bogus' is not valid; use a comma-separated list of kernel, memcpy, memset, memory, api, nvtx, sync, graph, overhead, or all, cuda, default, none"
expect_rc 64 run --trace= true
expect_err "gputrace: run: --trace: '' is not valid; use a comma-separated list of kernel, memcpy, memset, memory, api, nvtx, sync, graph, overhead, or all, cuda, default, none"
expect_rc 64 run --capture-range nvtx: true
expect_err "gputrace: run: --capture-range: 'nvtx:' is not valid; use none, cudaProfilerApi or nvtx:NAME (NAME up to 127 bytes)"
expect_rc 64 run --capture-range cudaProfiler true
expect_err "gputrace: run: --capture-range: 'cudaProfiler' is not valid; use none, cudaProfilerApi or nvtx:NAME (NAME up to 127 bytes)"
expect_rc 64 run --buffer-size 12Q true
expect_err "gputrace: run: --buffer-size: '12Q' is not valid; use a size from 4K to 1G, e.g. 64M"
expect_rc 64 run --buffer-size 2G true
expect_err "gputrace: run: --buffer-size: '2G' is not valid; use a size from 4K to 1G, e.g. 64M"
expect_rc 64 run --flush-interval -5 true
expect_err "gputrace: run: --flush-interval: '-5' is not valid; use milliseconds from 0 to 3600000"
expect_rc 64 run --graph nodes true
expect_err "gputrace: run: --graph: 'nodes' is not valid; use graph or node"
expect_rc 64 run --delay soon true
expect_err "gputrace: run: --delay: 'soon' is not valid; use seconds, e.g. 2, 0.5, 250ms, 1m"
expect_rc 64 run --duration 0 true
expect_err "gputrace: run: --duration: '0' is not valid; use seconds above 0, e.g. 10, 0.5, 250ms, 1m"
expect_rc 64 run --export svg true
grep -qE "^gputrace: run: --export: 'svg' is not valid; use one of: " "$tmp/err" ||
	fail "--export svg: $(cat "$tmp/err")"
expect_rc 64 run -o 'trace-%x' true
expect_err "gputrace: run: --output: bad pattern 'trace-%x.gtrace' at '%x.gtrace'; use %p %h %q{VAR} %n %%"
expect_rc 64 env -u GT_TEST_UNSET "$gputrace" run -o 'rank%q{GT_TEST_UNSET}' true
expect_err "gputrace: run: --output: 'rank%q{GT_TEST_UNSET}.gtrace' uses an unset environment variable at '%q{GT_TEST_UNSET}.gtrace'; set it or change the pattern"
# Nothing ran and nothing was written for any of them.
[ -z "$(ls "$tmp" | grep -v -e '^libgputrace-inject.so$' -e '^out$' -e '^err$')" ] ||
	fail "usage errors left files: $(ls "$tmp")"

# ---- no injection library: refuse (the program is not run untraced behind the user's back) ----
expect_rc 69 env GPUTRACE_INJECT_LIB="$tmp/missing.so" "$gputrace" run -- sh -c 'touch ran'
expect_err "gputrace: the injection library libgputrace-inject.so was not found (looked at $tmp/missing.so); set GPUTRACE_INJECT_LIB=/path/to/libgputrace-inject.so, or see 'gputrace doctor'"
[ ! -e ran ] || fail "the program ran although tracing could not start"

# ---- exit status propagation ----
expect_rc 0 run -q -o st0 -- /bin/sh -c 'exit 0'
[ -f st0.gtrace ] || fail "st0.gtrace was not written"
expect_rc 3 run -q -o st3 -- /bin/sh -c 'exit 3'
expect_rc 143 run -q -o term -- /bin/sh -c 'kill -TERM $$'
expect_rc 137 run -q -o kill -- /bin/sh -c 'kill -KILL $$'
expect_rc 137 run -o kill2 -- /bin/sh -c 'kill -KILL $$'
err_has_line "gputrace: warning: the program was killed by signal 9 (Killed)"
[ -f kill.gtrace ] || fail "no trace after the program was killed"

# ---- the program's output and arguments pass through untouched ----
expect_rc 0 run -q -o args -- /bin/sh -c 'printf "%s|" "$@"; echo' prog "a b" "" "-o" "--x"
expect_out "a b||-o|--x|"
[ ! -s "$tmp/err" ] || fail "-q printed on stderr: $(cat "$tmp/err")"

# ---- overwrite refusal, -f, %n and %p ----
expect_rc 73 run -q -o st0 -- /bin/sh -c 'touch ran2'
expect_err "gputrace: st0.gtrace exists; use -f to overwrite it, or -o to choose another name (%n picks a new number each run)"
[ ! -e ran2 ] || fail "the program ran although its trace could not be created"
expect_rc 0 run -q -f -o st0 -- true
expect_rc 0 run -q -- true
expect_rc 0 run -q -- true
[ -f gputrace-1.gtrace ] && [ -f gputrace-2.gtrace ] && [ ! -e gputrace-3.gtrace ] ||
	fail "default names: $(ls)"
expect_rc 0 run -q -o 'seq-%n.gtrace' -- true
[ -f seq-1.gtrace ] || fail "seq-%n.gtrace: $(ls)"
expect_rc 0 run -q -o 'pid-%p' -- /bin/sh -c 'echo $$ > pid.txt'
[ -f "pid-$(cat pid.txt).gtrace" ] || fail "%p is not the program's pid: $(ls)"
expect_rc 0 env GT_TEST_RANK=5 "$gputrace" run -q -o 'rank%q{GT_TEST_RANK}' -- true
[ -f rank5.gtrace ] || fail "%q{GT_TEST_RANK}: $(ls)"
expect_rc 73 run -q -o nodir/x -- true
expect_err "gputrace: run: cannot create nodir/x.gtrace: its folder does not exist"
# -o: never a FIFO or a folder; through a symlink to its target, the link kept
mkfifo fifo.gtrace
expect_rc 73 run -q -f -o fifo.gtrace -- true
expect_err "gputrace: run: fifo.gtrace is a FIFO; an output is written only as a regular file (or - for standard output)"
[ -p fifo.gtrace ] || fail "the FIFO was replaced"
mkdir -p real && ln -sf real/target.gtrace link.gtrace && : >real/target.gtrace
expect_rc 0 run -q -f -o link.gtrace -- true
[ -L link.gtrace ] && [ -s real/target.gtrace ] || fail "-o link: $(ls -l link.gtrace real)"

# ---- the environment the program gets ----
show='echo "$CUDA_INJECTION64_PATH|$NVTX_INJECTION64_PATH|$GPUTRACE_TRACE|$GPUTRACE_API|$GPUTRACE_BUFFER_SIZE|$GPUTRACE_FLUSH_MS|$GPUTRACE_CAPTURE_RANGE|$GPUTRACE_GRAPH|${GPUTRACE_CLI_PID:+pid}|${GPUTRACE_SESSION:+session}"'
expect_rc 0 run -q -o env1 -- /bin/sh -c "$show"
expect_out "$lib|$lib|||||||pid|session"
expect_rc 0 run -q -o env2 -t cuda --api all --buffer-size 64M --flush-interval 250 \
	--capture-range nvtx:train --graph node -- /bin/sh -c "$show"
# The settings go to the program as given (the library parses them as run did); an NVTX
# capture range needs the NVTX injection whatever --trace says.
expect_out "$lib|$lib|cuda|all|64M|250|nvtx:train|node|pid|session"
expect_rc 0 run -q -o env3 -t nvtx,kernel,kernel -- /bin/sh -c "$show"
expect_out "$lib|$lib|nvtx,kernel,kernel||||||pid|session"
expect_rc 0 run -q -o env6 -t CUDA --capture-range cudaProfilerApi -- /bin/sh -c "$show"
expect_out "$lib||CUDA||||cudaProfilerApi||pid|session"
expect_rc 0 run -q -o env7 -t none -- /bin/sh -c "$show"
expect_out "$lib||none||||||pid|session"
expect_rc 0 run -q -o env4 -- /bin/sh -c '[ -S "$GPUTRACE_SESSION" ] && echo socket'
expect_out "socket"
# Another tool's injection is replaced, with a warning.
expect_rc 0 env CUDA_INJECTION64_PATH=/opt/other/libinject.so "$gputrace" run -q -o env5 -- \
	/bin/sh -c 'echo "$CUDA_INJECTION64_PATH"'
expect_out "$lib"
expect_err "gputrace: warning: CUDA_INJECTION64_PATH=/opt/other/libinject.so belongs to another tool; it is replaced for the traced program"

# ---- exec failures: like a shell, 127 not found, 126 not executable; no trace left ----
expect_rc 127 run -o nf -- no-such-program-gputrace-test
expect_err "gputrace: no-such-program-gputrace-test: command not found (not in PATH)"
[ ! -e nf.gtrace ] || fail "a trace was left after exec failed"
expect_rc 127 run -o nf -- ./missing-program
expect_err "gputrace: ./missing-program: no such file"
printf '#!/bin/sh\nexit 0\n' >notexec.sh
chmod 644 notexec.sh
expect_rc 126 run -o ne -- ./notexec.sh
expect_err "gputrace: ./notexec.sh: cannot execute: Permission denied"
[ ! -e ne.gtrace ] || fail "a trace was left after exec failed"
ls ./*.tmp-* >/dev/null 2>&1 && fail "temporary files left: $(ls)"

# ---- a program that never uses CUDA: runs normally, the summary says so ----
expect_rc 0 run -o nocuda -- /bin/sh -c 'echo hello'
expect_out "hello"
err_has_line "gputrace: no CUDA activity was seen."
err_has_line "Try \`gputrace doctor\` to check this machine."
grep -qE '^gputrace: trace written to nocuda\.gtrace \([0-9,]+ records, [0-9.]+ (B|KiB)\)$' "$tmp/err" ||
	fail "no 'trace written' line: $(cat "$tmp/err")"

# ---- the live status line: on a terminal only, erased at the end ----
grep -q $'\033' "$tmp/err" && fail "escape sequences on a non-terminal stderr: $(cat -v "$tmp/err")"
if command -v script >/dev/null; then
	# The program runs until the status line has been drawn (an event, not a time).
	script -qec "'$gputrace' run -o tty -- /bin/sh -c 'until grep -q dropped tty.log; do sleep 0.05; done'" \
		/dev/null >tty.log 2>&1
	# Redrawn in place (carriage return, text, erase to end of line), then erased.
	grep -qE $'\rgputrace: [0-9]+\\.[0-9] s, 0 records, [0-9.]+ (B|KiB) written, 0 dropped\033\\[K' tty.log ||
		fail "no status line on a terminal: $(cat -v tty.log)"
	grep -q $'\r\033\\[Kgputrace: trace written to tty.gtrace' tty.log ||
		fail "the status line was not erased before the summary: $(cat -v tty.log)"
	script -qec "'$gputrace' run -q -o tty2 -- /bin/sh -c 'sleep 0.5'" /dev/null >tty2.log 2>&1
	[ ! -s tty2.log ] || fail "-q on a terminal printed: $(cat -v tty2.log)"
fi

# ---- signals sent to gputrace reach the program; its status is ours ----
# Job control on, so background jobs keep SIGINT (a shell ignores it for them otherwise);
# env --default-signal, for a signal ignored since this shell started (under nohup, or as an
# asynchronous command of a shell without job control), which no shell can restore; run as
# a command, not through a function (in the background a function runs in a subshell, and $!
# would be the subshell's pid).
set -m
defaults=(env --default-signal=INT,TERM,HUP)
"${defaults[@]}" "$gputrace" run -q -o sigint -- /bin/sh -c \
	'trap "exit 42" INT; touch ready-int; while :; do sleep 0.05; done' >/dev/null 2>&1 &
pid=$!
wait_for ready-int "$pid" && kill -INT "$pid"
wait "$pid"
rc=$?
[ "$rc" -eq 42 ] || fail "SIGINT forwarding: exit $rc, expected 42"
"${defaults[@]}" "$gputrace" run -q -o sigterm -- /bin/sh -c \
	'trap "exit 7" TERM; touch ready-term; while :; do sleep 0.05; done' >/dev/null 2>&1 &
pid=$!
wait_for ready-term "$pid" && kill -TERM "$pid"
wait "$pid"
rc=$?
[ "$rc" -eq 7 ] || fail "SIGTERM forwarding: exit $rc, expected 7"
"${defaults[@]}" "$gputrace" run -q -o sighup -- /bin/sh -c \
	'touch ready-hup; while :; do sleep 0.05; done' >/dev/null 2>&1 &
pid=$!
wait_for ready-hup "$pid" && kill -HUP "$pid"
wait "$pid"
rc=$?
[ "$rc" -eq 129 ] || fail "SIGHUP forwarding: exit $rc, expected 129"
[ -f sighup.gtrace ] || fail "no trace after the program was hung up"
# under nohup (SIGHUP ignored when gputrace starts) the hang-up stays ignored, for gputrace
# and the program: the SIGTERM sent right after it ends the run (a SIGHUP acted on would
# reach the program first and give 129)
env --ignore-signal=HUP --default-signal=TERM "$gputrace" run -q -o nohup -- /bin/sh -c \
	'touch ready-nohup; while :; do sleep 0.05; done' >/dev/null 2>&1 &
pid=$!
wait_for ready-nohup "$pid" && kill -HUP "$pid" && kill -TERM "$pid"
wait "$pid"
rc=$?
[ "$rc" -eq 143 ] || fail "SIGHUP ignored (nohup), then SIGTERM: exit $rc, expected 143"
[ -f nohup.gtrace ] || fail "no trace after SIGTERM under nohup"
set +m

# ---- the whole tree: an orphaned grandchild is waited for ----
expect_rc 0 run -q -o tree -- /bin/sh -c '(sleep 0.5; touch orphan-done) & exit 0'
[ -e orphan-done ] || fail "gputrace returned before the orphaned grandchild finished"

# ---- --duration stops recording; the program runs on and its status is kept ----
# (the program runs until the trace has been finalized: an event, not a time)
expect_rc 5 run -o dur --duration 0.2 -- /bin/sh -c \
	'until [ -e dur.gtrace ]; do sleep 0.05; done; touch dur-done; exit 5'
[ -e dur-done ] || fail "--duration stopped the program"
err_has_line "gputrace: warning: --duration reached: recording stopped; the program runs on untraced"
[ -f dur.gtrace ] || fail "--duration: no trace"
expect_rc 0 run -q -o delay --delay 0.1 -- /bin/sh -c 'sleep 0.2'
[ -f delay.gtrace ] || fail "--delay: no trace"

# ---- --stats and --export after the run ----
expect_rc 4 run -q -o post --stats --export perfetto -- /bin/sh -c 'exit 4'
err_has_line "GPU kernels"
err_has_line "Lost records"
[ -s post.pftrace ] || fail "--export perfetto: no post.pftrace next to post.gtrace: $(ls)"
expect_rc 0 run -o post2 --export csv -- true
grep -qE '^gputrace: exported post2\.csv \([0-9,]+ events\)$' "$tmp/err" ||
	fail "no 'exported' line: $(cat "$tmp/err")"

# ---- end to end: processes that register with the session land in the trace ----
# session-child registers through gt_client_open (as the injection library does), writes three
# NVTX marks, forks and execs itself one level deeper, and exits with its depth.
if [ -n "$session_child" ] && [ -x "$session_child" ]; then
	set -m
	"$gputrace" run -q -o child -- "$session_child" 2 >/dev/null 2>"$tmp/err" &
	cli_pid=$!
	wait "$cli_pid"
	rc=$?
	set +m
	[ "$rc" -eq 2 ] || fail "session-child 2: exit $rc, expected 2: $(cat "$tmp/err")"
	expect_rc 0 "$gputrace" export child.gtrace -f csv -q
	# Three processes, each the parent of the next, the first a child of gputrace.
	mapfile -t procs < <(tail -n +2 child-process.csv | tr -d '\r' | cut -d, -f1,3 |
		sort -t, -k1n)
	[ "${#procs[@]}" -eq 3 ] || fail "session-child: ${#procs[@]} processes: ${procs[*]}"
	[ "${procs[0]#*,}" = "$cli_pid" ] || fail "first process's parent is not gputrace: ${procs[*]}"
	[ "${procs[1]#*,}" = "${procs[0]%,*}" ] && [ "${procs[2]#*,}" = "${procs[1]%,*}" ] ||
		fail "parent links broken: ${procs[*]}"
	[ "$(tail -n +2 child-nvtx.csv | wc -l)" -eq 9 ] ||
		fail "session-child: $(tail -n +2 child-nvtx.csv | wc -l) NVTX records, expected 9"
	# Each ended by exit (how=1) with its depth as status.
	[ "$(tail -n +2 child-process_end.csv | tr -d '\r' | sort -t, -k1n | cut -d, -f3,4 |
		tr '\n' ' ')" = \
		"1,2 1,1 1,0 " ] || fail "process ends: $(cat child-process_end.csv)"

	# Killed before its goodbye: the trace and `info` say the last flush interval may be lost.
	"$gputrace" run -q -o killed --flush-interval 250 -- "$session_child" kill >/dev/null \
		2>"$tmp/err"
	rc=$?
	[ "$rc" -eq 137 ] || fail "session-child kill: exit $rc, expected 137: $(cat "$tmp/err")"
	"$gputrace" info killed.gtrace >"$tmp/info" 2>&1 || fail "info killed.gtrace: $(cat "$tmp/info")"
	grep -qx "  pid [0-9]*: killed by signal 9 before its final flush: GPU activity, API calls and NVTX ranges of its last 250 ms (the flush interval) may be missing" \
		"$tmp/info" || fail "no flush-window notice in info: $(cat "$tmp/info")"
	[ "$(grep -c '^notices:$' "$tmp/info")" -eq 1 ] || fail "info: notices header: $(cat "$tmp/info")"

	# --delay trims activity that ended before it, keeps the processes.
	expect_rc 0 run -q -o early --delay 1h -- "$session_child" 0
	expect_rc 0 run -q -o late --delay 0.3 -- /bin/sh -c "sleep 0.6; exec '$session_child' 0"
	expect_rc 0 "$gputrace" export early.gtrace -f csv -q
	expect_rc 0 "$gputrace" export late.gtrace -f csv -q
	[ ! -e early-nvtx.csv ] || [ "$(tail -n +2 early-nvtx.csv | wc -l)" -eq 0 ] ||
		fail "--delay kept $(tail -n +2 early-nvtx.csv | wc -l) early NVTX records"
	[ "$(tail -n +2 early-process.csv | wc -l)" -eq 1 ] || fail "--delay dropped the process"
	[ "$(tail -n +2 late-nvtx.csv | wc -l)" -eq 3 ] ||
		fail "--delay dropped records after the delay: $(cat late-nvtx.csv)"
fi

# ---- end to end through the real injection library: NVTX needs no GPU ----
# Without GPUTRACE_INJECT_LIB, the library is found in the build tree next to this gputrace.
if [ -n "$nvtx_app" ] && [ -x "$nvtx_app" ]; then
	expect_rc 0 env -u GPUTRACE_INJECT_LIB "$gputrace" run -q -o nvtx -- "$nvtx_app" 3
	expect_rc 0 "$gputrace" export nvtx.gtrace -f csv -q
	# message,kind,depth of every NVTX record, in a stable order.
	got=$(tail -n +2 nvtx-nvtx.csv | tr -d '\r' | awk -F, '{print $8 "," $11 "," $12}' | sort | uniq -c |
		awk '{print $1 "x" $2}' | paste -sd' ' -)
	[ "$got" = "3xinner,0,1 3xouter,0,0 1xtick,2,0" ] || fail "NVTX through gputrace run: $got"
	# The summary's record count is the file's, as `gputrace info` gives it: the drained
	# records and those the session wrote itself (the process, its end, clock anchors).
	env -u GPUTRACE_INJECT_LIB "$gputrace" run -o nvcount -- "$nvtx_app" 3 >/dev/null 2>nvcount.err ||
		fail "run nvtx-app: $(cat nvcount.err)"
	said=$(sed -n 's/^gputrace: trace written to nvcount\.gtrace (\([0-9,]*\) records.*/\1/p' nvcount.err |
		tr -d ,)
	"$gputrace" info nvcount.gtrace >nvcount.info 2>&1 || fail "info: $(cat nvcount.info)"
	has=$(awk '/^records:/ {print $2}' nvcount.info)
	[ -n "$said" ] && [ "$said" = "$has" ] || fail "run said '$said' records, info says '$has'"
	# Killed after a whole flush period has passed since its last NVTX call (nvtx-app counts
	# the flush thread's sleeps): the records were still in the thread's stage (fewer than it
	# holds), and the flush thread published them within the period.
	expect_rc 137 env -u GPUTRACE_INJECT_LIB "$gputrace" run -q -o nvtxkill -- "$nvtx_app" 3 kill
	expect_rc 0 "$gputrace" export nvtxkill.gtrace -f csv -q
	got=$(tail -n +2 nvtxkill-nvtx.csv | tr -d '\r' | awk -F, '{print $8 "," $11 "," $12}' |
		sort | uniq -c | awk '{print $1 "x" $2}' | paste -sd' ' -)
	[ "$got" = "3xinner,0,1 3xouter,0,0 1xtick,2,0" ] || fail "NVTX of a killed program: $got"
	# Threads interning new strings while the program exits: the library must not unmap the
	# ring or the string table from under them (a crash in about one run of five before).
	for i in $(seq 1 20); do
		expect_rc 0 env -u GPUTRACE_INJECT_LIB "$gputrace" run -q -f -o exitrace -- \
			"$nvtx_app" exitrace
		expect_rc 0 "$gputrace" info exitrace.gtrace
	done
	# Start/end ranges: one left open while 5,000 others start and end is still recorded,
	# once; a second end and an end of id 0 record nothing; of 4,100 ranges open at once,
	# the 4,096 the library tracks are recorded and the other 4 counted.
	expect_rc 0 env -u GPUTRACE_INJECT_LIB "$gputrace" run -q -o ranges -- "$nvtx_app" ranges
	expect_rc 0 "$gputrace" export ranges.gtrace -f csv -q
	got=$(tail -n +2 ranges-nvtx.csv | tr -d '\r' | awk -F, '{print $8 "," $11}' | sort |
		uniq -c | awk '{print $1 "x" $2}' | paste -sd' ' -)
	[ "$got" = "4096xheld,1 5000xinner,1 1xouter,1" ] || fail "start/end ranges: $got"
	"$gputrace" info ranges.gtrace >ranges.info 2>&1
	grep -qx '  nvtx_unrecorded  4' ranges.info || fail "ranges: losses $(cat ranges.info)"
	# A capture range named by a registered string opens as one named by its text.
	expect_rc 0 env -u GPUTRACE_INJECT_LIB "$gputrace" run -q -o regcap \
		--capture-range nvtx:train -- "$nvtx_app" regcap
	expect_rc 0 "$gputrace" export regcap.gtrace -f csv -q
	got=$(tail -n +2 regcap-nvtx.csv | tr -d '\r' | awk -F, '{print $7 ":" $8}' | sort |
		paste -sd' ' -)
	[ "$got" = ":inside app:train" ] || fail "registered capture name: $got"
	# Children forked while another thread opens and closes the capture range: each runs
	# its own NAME range and exits (three in four hung on a lock the fork copied, before).
	expect_rc 0 env -u GPUTRACE_INJECT_LIB "$gputrace" run -q -o forkcap \
		--capture-range nvtx:STEP -- "$nvtx_app" forkcap
	# A signal handler's capture range interrupting its own thread's (hung every run before);
	# bounded, since a hang would be the failure.
	expect_rc 0 timeout 300 env -u GPUTRACE_INJECT_LIB "$gputrace" run -q -o sigcap \
		--capture-range nvtx:CAP -- "$nvtx_app" sigcap
	# Standalone (no session: the drainer is a thread of the program, reading through a
	# mapping of its own): threads still interning strings at exit, as above. (More in
	# cli-standalone.sh, on a slow disk, and 200 runs under full CPU load in
	# load-standalone.sh.)
	for i in $(seq 1 3); do
		expect_rc 0 env NVTX_INJECTION64_PATH="$inject_lib" GPUTRACE_OUTPUT=standalone.gtrace \
			"$nvtx_app" exitrace
		[ ! -s "$tmp/err" ] || fail "standalone exitrace printed: $(cat "$tmp/err")"
		expect_rc 0 "$gputrace" info standalone.gtrace
		ls standalone.gtrace.tmp-* >/dev/null 2>&1 && fail "standalone: temporary file left"
		rm -f standalone.gtrace
	done
	# Ranges left open: 3 pushes on a thread that ended, 2 pushes and a started range on
	# main at exit; not recorded, and counted.
	expect_rc 0 env -u GPUTRACE_INJECT_LIB "$gputrace" run -q -o open -- "$nvtx_app" open
	"$gputrace" info open.gtrace >open.info 2>&1
	grep -qx '  nvtx_unrecorded  6' open.info || fail "open ranges: losses $(cat open.info)"
	grep -qx '  nvtx         1' open.info || fail "open ranges: records $(cat open.info)"
	# Without nvtx in --trace, NVTX_INJECTION64_PATH is not set and nothing is recorded.
	expect_rc 0 env -u GPUTRACE_INJECT_LIB "$gputrace" run -q -o nonvtx -t kernel -- "$nvtx_app" 3
	expect_rc 0 "$gputrace" export nonvtx.gtrace -f csv -q
	[ ! -e nonvtx-nvtx.csv ] || [ "$(tail -n +2 nonvtx-nvtx.csv | wc -l)" -eq 0 ] ||
		fail "-t kernel still recorded NVTX: $(cat nonvtx-nvtx.csv)"
fi

cli_done cli-run
