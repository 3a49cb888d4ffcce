#!/usr/bin/env bash
# CLI test of standalone mode (no `gputrace run`: the traced program drains its own ring and
# writes GPUTRACE_OUTPUT) on a slow disk: every fsync() of the program returns 3 s late
# (strace's fault injection, as an NFS or Lustre sync can), and the trace is still completed
# and renamed at exit, whole; when its writing stops moving for longer than
# GPUTRACE_WRITE_TIMEOUT, exactly one line names the partial file, which `gputrace info` reads.
# The same slow disk under `gputrace run`, whose own writer thread syncs the trace: its end
# waits as long as the writing moves and gives up with the same line and exit status 74.
# Skips (77) without strace.
# Usage: cli-standalone.sh PATH/TO/gputrace PATH/TO/nvtx-app PATH/TO/libgputrace-inject.so
set -u
gputrace=$(realpath "$1")
nvtx_app=$(realpath "$2")
inject_lib=$(realpath "$3")
command -v strace >/dev/null || { echo "cli-standalone: no strace; skipped"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=cli-common.sh
. "$(dirname "$0")/cli-common.sh"
cd "$tmp" || exit 1
unset GPUTRACE_SESSION GPUTRACE_WRITE_QUEUE GPUTRACE_WRITE_TIMEOUT GPUTRACE_DEBUG \
	CUDA_INJECTION64_PATH NVTX_INJECTION64_PATH GPUTRACE_TRACE
export GPUTRACE_INJECT_LIB=$inject_lib

# slow_fsync MS ARGS...: run nvtx-app standalone with its fsync() delayed by MS; its stderr
# in app.err (strace's own messages stay out of it), its pid in app.pid.
slow_fsync() {
	local ms=$1
	shift
	# (LeakSanitizer stops the world with ptrace, which a traced process cannot: off under
	# strace in a sanitizer build)
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
		strace -f -qq -o /dev/null -e trace=fsync -e inject=fsync:delay_exit=$((ms * 1000)) \
		sh -c 'echo $$ >app.pid; exec "$@" 2>app.err' sh \
		env NVTX_INJECTION64_PATH="$inject_lib" GPUTRACE_OUTPUT=s.gtrace "$nvtx_app" "$@"
}

# info_counts TRACE: "type count" lines of `gputrace info`, and checks that the file read
# whole: no recovery, and the total is the sum of the types.
info_counts() {
	"$gputrace" info "$1" >info.out 2>&1 || { fail "info $1: $(cat info.out)"; return 1; }
	grep -qx 'recovered:   no' info.out || fail "$1 was recovered: $(cat info.out)"
	awk '/^records:/ {total = $2; on = 1; next} on && /^  [a-z_]+ +[0-9]+$/ {sum += $2; next}
		on {on = 0} END {exit !(total > 0 && total == sum)}' info.out ||
		fail "$1: records do not add up: $(cat info.out)"
}

# ---- a 3 s fsync: the trace is completed, renamed, exact ----
expect_rc 0 slow_fsync 3000 1000
[ -f s.gtrace ] || fail "no s.gtrace after a slow fsync: $(ls)"
ls s.gtrace.tmp-* >/dev/null 2>&1 && fail "temporary file left: $(ls)"
[ ! -s app.err ] || fail "the program printed: $(cat app.err)"
info_counts s.gtrace
grep -qx '  nvtx         2001' info.out || fail "nvtx records: $(cat info.out)"
grep -qx 'losses:      none' info.out || fail "losses: $(cat info.out)"
grep -q 'exited with status 0' info.out || fail "process end: $(cat info.out)"
rm -f s.gtrace

# Threads still writing (and interning strings) while the program exits, 32 of them, on the
# same slow disk: every run ends in a complete file (before: none did).
for i in 1 2 3; do
	expect_rc 0 slow_fsync 3000 exitrace
	[ -f s.gtrace ] || fail "exitrace run $i: no s.gtrace: $(ls)"
	ls s.gtrace.tmp-* >/dev/null 2>&1 && fail "exitrace run $i: temporary file left: $(ls)"
	[ ! -s app.err ] || fail "exitrace run $i: the program printed: $(cat app.err)"
	info_counts s.gtrace
	grep -q 'exited with status 0' info.out || fail "exitrace run $i: $(cat info.out)"
	rm -f s.gtrace
done

# ---- a sync that does not come back in time: one line, the partial file reads ----
expect_rc 0 env GPUTRACE_WRITE_TIMEOUT=1 bash -c "$(declare -f slow_fsync); \
	nvtx_app='$nvtx_app' inject_lib='$inject_lib' slow_fsync 6000 1000"
pid=$(cat app.pid)
[ "$(cat app.err)" = "gputrace: the trace s.gtrace could not be completed (its writing made no progress for 1 s); what was written is in s.gtrace.tmp-$pid, which \`gputrace info\` reads" ] ||
	fail "stalled sync: stderr was [$(cat app.err)]"
[ ! -e s.gtrace ] || fail "a trace that was not completed has the final name"
"$gputrace" info "s.gtrace.tmp-$pid" >info.out 2>&1 || fail "info of the partial file: $(cat info.out)"
grep -qx '  nvtx         2001' info.out || fail "the partial file lacks records: $(cat info.out)"

# ---- gputrace run: its own writer's sync 3 s late ----
# slow_run_fsync MS ARGS...: `gputrace run -q ARGS` with every fsync() of the CLI (its writer
# thread's) delayed by MS; its stderr in run.err, its pid in run.pid.
slow_run_fsync() {
	local ms=$1
	shift
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
		strace -f -qq -o /dev/null -e trace=fsync -e inject=fsync:delay_exit=$((ms * 1000)) \
		sh -c 'echo $$ >run.pid; exec "$@" 2>run.err' sh "$gputrace" run -q "$@"
}

# Within the limit (the default, 60 s): waited for, complete, exact.
expect_rc 0 slow_run_fsync 3000 -o r -- "$nvtx_app" 1000
[ ! -s run.err ] || fail "run with a slow fsync printed: $(cat run.err)"
ls r.gtrace.tmp-* >/dev/null 2>&1 && fail "run: temporary file left: $(ls)"
info_counts r.gtrace
grep -qx '  nvtx         2001' info.out || fail "run: nvtx records: $(cat info.out)"
grep -qx 'losses:      none' info.out || fail "run: losses: $(cat info.out)"

# Past GPUTRACE_WRITE_TIMEOUT (1 s) without progress: the one line, exit 74, and the partial
# file holds every record (the sync was the last call: chunks and footer are written).
expect_rc 74 env GPUTRACE_WRITE_TIMEOUT=1 bash -c "$(declare -f slow_run_fsync); \
	gputrace='$gputrace' slow_run_fsync 3000 -o w -- '$nvtx_app' 1000"
pid=$(cat run.pid)
[ "$(cat run.err)" = "gputrace: the trace w.gtrace could not be completed (its writing made no progress for 1 s); what was written is in w.gtrace.tmp-$pid, which \`gputrace info\` reads" ] ||
	fail "run, stalled sync: stderr was [$(cat run.err)]"
[ ! -e w.gtrace ] || fail "run: a trace that was not completed has the final name"
info_counts "w.gtrace.tmp-$pid"
grep -qx '  nvtx         2001' info.out || fail "run: the partial file lacks records: $(cat info.out)"

cli_done cli-standalone
