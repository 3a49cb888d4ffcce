#!/usr/bin/env bash
# CLI test for `gputrace run --live`, on terminals that tmux emulates and reads back
# (capture-pane): the view appears, updates, and shows an NVTX-only program's ranges, stack,
# steps and exact counts; s, p and the arrow keys act; a resize redraws; q gives the status
# line back while the program runs on; the terminal is restored (stty state, alternate screen
# left, cursor shown) after SIGINT, SIGTERM and SIGQUIT, and around Ctrl-Z and fg; a
# synthetic GPU program's kernels, GPU line and failed call are shown; without a terminal or
# with TERM=dumb, the status line; and a run under --live records exactly what the same run
# records without it, losing nothing.
# Every wait is for an event (a screen that changed, a file that appeared), bounded only by
# generous limits. Skips (77) without tmux or without ncurses in this build.
# Usage: cli-live.sh PATH/TO/gputrace PATH/TO/nvtx-app PATH/TO/live-producer
set -u
gputrace=$(realpath "$1")
nvtx_app=$(realpath "$2")
producer=$(realpath "$3")
tmp=$(mktemp -d)
sock=$tmp/tmux.sock
# shellcheck source=cli-common.sh
. "$(dirname "$0")/cli-common.sh"
# our own tmux server, without the user's configuration
tm() { tmux -S "$sock" -f /dev/null "$@"; }
trap 'tm kill-server >/dev/null 2>&1; rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
unset CUDA_INJECTION64_PATH NVTX_INJECTION64_PATH GPUTRACE_SESSION GPUTRACE_INJECT_LIB \
	GPUTRACE_TRACE GPUTRACE_FLUSH_MS

if ! command -v tmux >/dev/null; then
	echo "tmux is not installed: skipping"
	exit 77
fi
"$gputrace" run --live -o probe -- true >"$tmp/out" 2>"$tmp/err"
if [ $? -eq 64 ]; then
	# a build without ncurses: it says so before running anything
	expect_err "gputrace: run: --live: this gputrace was built without ncurses (libncurses-dev); rebuild it with ncurses, or leave --live out"
	[ ! -e probe.gtrace ] || fail "--live without ncurses ran the program"
	[ "$failures" -eq 0 ] || exit 1
	echo "this gputrace has no live view (built without ncurses): skipping"
	exit 77
fi
rm -f probe.gtrace

TRIES=1200 # polls 0.1 s apart: two minutes for anything to show on a loaded machine

# A pane NAME, COLSxLINES, running the shell command CMD in directory $tmp/NAME.
start() {
	mkdir -p "$tmp/$1"
	tm new-session -d -s "$1" -x "$2" -y "$3" "cd '$tmp/$1' && $4; exec sleep 100000"
}

screen() { tm capture-pane -p -t "$1" >"$tmp/$1.screen"; }

# has_scrolled NAME REGEX WHAT: a line of the screen or of what scrolled off it matches.
has_scrolled() {
	tm capture-pane -p -J -S - -t "$1" >"$tmp/$1.all"
	grep -qE -- "$2" "$tmp/$1.all" || fail "$3: no line matches [$2] in:"$'\n'"$(cat "$tmp/$1.all")"
}

# The terminal's settings before and after, but its size (the first line of stty -a).
same_stty() {
	cmp -s <(tail -n +2 "$tmp/$1/stty.before") <(tail -n +2 "$tmp/$1/stty.after") ||
		fail "$1: terminal settings changed: $(diff "$tmp/$1/stty.before" "$tmp/$1/stty.after")"
}

# wait_screen NAME REGEX WHAT: until a line of the screen matches.
wait_screen() {
	local i
	for ((i = 0; i < TRIES; i++)); do
		screen "$1"
		grep -qE -- "$2" "$tmp/$1.screen" && return 0
		sleep 0.1
	done
	fail "$3: no line matches [$2] on the screen:"$'\n'"$(cat "$tmp/$1.screen")"
	return 1
}

# wait_row NAME ROW TEXT WHAT: until row ROW of the screen begins with TEXT. A capture may
# catch the view mid-redraw (after a resize, rows written but not yet the last one).
wait_row() {
	local i
	for ((i = 0; i < TRIES; i++)); do
		screen "$1"
		[ "$(sed -n "${2}p" "$tmp/$1.screen" | cut -c1-${#3})" = "$3" ] && return 0
		sleep 0.1
	done
	fail "$4: row $2 does not begin [$3]:"$'\n'"$(cat "$tmp/$1.screen")"
	return 1
}

# wait_gone NAME REGEX WHAT: until no line matches.
wait_gone() {
	local i
	for ((i = 0; i < TRIES; i++)); do
		screen "$1"
		grep -qE -- "$2" "$tmp/$1.screen" || return 0
		sleep 0.1
	done
	fail "$3: [$2] stays on the screen:"$'\n'"$(cat "$tmp/$1.screen")"
	return 1
}

wait_file() {
	local i
	for ((i = 0; i < TRIES; i++)); do
		[ -e "$1" ] && return 0
		sleep 0.1
	done
	fail "$1 never appeared"
	return 1
}

# wait_line FILE: until FILE ends with a newline. A shell's `echo $? >rc` or `stty -a >f`
# creates the file before it writes it: one that merely exists may still be empty.
wait_line() {
	local i
	for ((i = 0; i < TRIES; i++)); do
		[ -s "$1" ] && [ "$(tail -c 1 "$1" | wc -l)" = 1 ] && return 0
		sleep 0.1
	done
	fail "$1 was never written"
	return 1
}

flag() { tm display -p -t "$1" "#{$2}"; }

# 1234567 -> 1,234,567 (as the view writes counts)
commas() {
	local s=$1 o=""
	while [ ${#s} -gt 3 ]; do
		o=",${s: -3}$o"
		s=${s:0:${#s}-3}
	done
	echo "$s$o"
}

# The "since the start" count of table row NAME on the screen of pane P (0 if absent).
total_of() {
	local n
	n=$(sed -n "s/^$2 .*| *\([0-9,]*\) .*/\1/p" "$tmp/$1.screen" | head -n 1 | tr -d ,)
	echo "${n:-0}"
}

# The pane runs CMD, then records the terminal's state and CMD's status (rc last).
traced() { echo "stty -a >stty.before; $1; st=\$?; stty -a >stty.after; echo \$st >rc.tmp; mv rc.tmp rc"; }

# ---- an NVTX-only program: view, ranges and counts, keys, resize, q ----
start nv 120 40 "$(traced "'$gputrace' run --live -o live -- '$nvtx_app' live '$tmp/nv'")"
wait_screen nv '^ gputrace --live +[0-9.]+ s +refresh 1 s ' "the view"
[ "$(flag nv alternate_on)" = 1 ] || fail "the view is not on the alternate screen"
wait_screen nv '^processes: [0-9]+ nvtx-app running$' "the process"
wait_screen nv '^step +[0-9,]+ ' "the step range"
wait_screen nv '^forward +[0-9,]+ ' "the forward range"
wait_screen nv '^backward +[0-9,]+ ' "the backward range"
# the thread, its steps, and its stack: "..." is a range still open
wait_screen nv '^[0-9]+/[0-9]+ trainer +step +[0-9.,]+ +[0-9.]+ [nums]+ +(step > backward|\.\.\. > forward|\.\.\. > backward)$' \
	"the thread's steps and NVTX stack"
pid=$(sed -n 's/^processes: \([0-9]*\) nvtx-app running$/\1/p' "$tmp/nv.screen")
# it updates: the forward count grows from one capture to a later one
first=$(total_of nv forward)
for ((i = 0; i < TRIES; i++)); do
	screen nv
	[ "$(total_of nv forward)" -gt "$first" ] && break
	sleep 0.1
done
[ "$(total_of nv forward)" -gt "$first" ] || fail "the forward count stayed at $first"
# s cycles the sort; p pauses and resumes
for key in count mean time; do
	tm send-keys -t nv s
	wait_screen nv " s sort: $key " "sort by $key"
done
tm send-keys -t nv p
wait_screen nv '^ gputrace --live .* PAUSED ' "pause"
tm send-keys -t nv p
wait_gone nv 'PAUSED' "resume"
# a resize redraws at the new size: the last row is the key line, rules span the width
tm resize-window -t nv -x 100 -y 30
wait_screen nv '^-{100}$' "a rule 100 wide after the resize"
wait_row nv 30 " q leave the view" "the key line, the last of 30 rows"
tm resize-window -t nv -x 140 -y 45
wait_screen nv '^-{140}$' "a rule 140 wide after the resize"
wait_row nv 45 " q leave the view" "the key line, the last of 45 rows"
# exact counts: the program stops stepping and says how many it made
touch "$tmp/nv/pause"
wait_file "$tmp/nv/paused"
n=$(cat "$tmp/nv/paused")
for r in step forward backward; do
	wait_screen nv "^$r .*\| +$(commas "$n") " "$n $r ranges in all"
done
# q: the view goes, the status line comes back, the program runs on
tm send-keys -t nv q
wait_screen nv '^gputrace: [0-9]+\.[0-9] s, [0-9,]+ records, [0-9.]+ [KMG]?i?B written, 0 dropped' \
	"the status line after q"
[ "$(flag nv alternate_on)" = 0 ] || fail "still on the alternate screen after q"
[ "$(flag nv cursor_flag)" = 1 ] || fail "the cursor is hidden after q"
[ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || fail "the program ($pid) did not run on after q"
[ ! -e "$tmp/nv/rc" ] || fail "gputrace ended at q: $(cat "$tmp/nv/rc")"
touch "$tmp/nv/stop"
wait_line "$tmp/nv/rc"
[ "$(cat "$tmp/nv/rc")" = 0 ] || fail "run --live exited $(cat "$tmp/nv/rc")"
same_stty nv
has_scrolled nv '^gputrace: trace written to live\.gtrace ' "the summary"
# the screen's counts are the trace's
"$gputrace" stats -r nvtx -f csv "$tmp/nv/live.gtrace" >nvtx.csv 2>&1 || fail "stats: $(cat nvtx.csv)"
for r in step forward backward; do
	got=$(awk -F, -v r="$r" '$NF == r { print $3 }' nvtx.csv)
	[ "$got" = "$n" ] || fail "stats: $got $r ranges, the screen said $n"
done

# ---- a synthetic GPU program: the GPU line, kernels demangled, scrolling, a failed call ----
start gpu 150 30 "$(traced "'$gputrace' run --live -o gpu -- '$producer' '$tmp/gpu'")"
wait_screen gpu '^0 +Synthetic GPU +[0-9]+% +[0-9,]+ +[0-9.]+ [MG]B/s +[0-9.]+ [MGK]B/s +0 +0 +[0-9,.]+ +64\.0+ M(i)?B +64\.0+ M(i)?B' \
	"the GPU line"
wait_screen gpu '^void kernel<39>\(float\*, int\) +[0-9,]+ ' "the longest kernel first, demangled"
wait_screen gpu ' lost 0  API calls [0-9,.]+/s  failed 1 \(last: cudaMalloc cudaErrorMemoryAllocation\)$' "no loss and the failed call"
wait_screen gpu ' kernels 1-[0-9]+ of 40 ' "the kernel rows"
rows=$(sed -n 's/.* kernels 1-\([0-9]*\) of 40 .*/\1/p' "$tmp/gpu.screen")
tm send-keys -t gpu Down
wait_screen gpu " kernels 2-$((rows + 1)) of 40 " "one row down"
wait_screen gpu '^void kernel<38>\(float\*, int\) ' "kernel<38> on top after one row down"
tm send-keys -t gpu End
wait_screen gpu " kernels $((41 - rows))-40 of 40 " "the end of the table"
tm send-keys -t gpu Home
wait_screen gpu " kernels 1-$rows of 40 " "the top again"
touch "$tmp/gpu/pause"
wait_file "$tmp/gpu/paused"
n=$(cat "$tmp/gpu/paused")
wait_screen gpu "^void kernel<39>\(float\*, int\) .*\| +$(commas "$n") " "$n kernel<39> in all"
# narrower than the header's second line: cut at the edge, nothing pushed down a row
tm resize-window -t gpu -x 80 -y 30
wait_screen gpu '^-{80}$' "a rule 80 wide"
wait_row gpu 3 "processes:" "80 columns: the processes' line, the third row"
# and the kernel names are shortened to fit: the parameter list and return type go first
wait_screen gpu "^kernel<39> +0 .*\| +$(commas "$n") " "kernel<39> shortened"
touch "$tmp/gpu/stop"
wait_line "$tmp/gpu/rc"
[ "$(cat "$tmp/gpu/rc")" = 0 ] || fail "run --live (GPU) exited $(cat "$tmp/gpu/rc")"
"$gputrace" stats -r kernels -f csv "$tmp/gpu/gpu.gtrace" >kernels.csv 2>&1
grep -q ",$n,.*kernel<39>" kernels.csv || fail "stats: no $n x kernel<39>: $(cat kernels.csv)"

# ---- the terminal is restored however gputrace ends ----
# Ctrl-C: the terminal signals the whole foreground group; the program dies of it
start int 100 30 "$(traced "'$gputrace' run --live -o int -- '$nvtx_app' live '$tmp/int'")"
wait_screen int '^forward +[0-9,]+ ' "the view (SIGINT)"
tm send-keys -t int C-c
wait_line "$tmp/int/rc"
[ "$(cat "$tmp/int/rc")" = 130 ] || fail "after Ctrl-C: exit $(cat "$tmp/int/rc"), expected 130"
# SIGTERM to gputrace: forwarded to the program, which dies of it
start term 100 30 "$(traced "sh -c 'echo \$\$ >pid; exec \"$gputrace\" run --live -o term -- \"$nvtx_app\" live \"$tmp/term\"'")"
wait_screen term '^forward +[0-9,]+ ' "the view (SIGTERM)"
kill -TERM "$(cat "$tmp/term/pid")"
wait_line "$tmp/term/rc"
[ "$(cat "$tmp/term/rc")" = 143 ] || fail "after SIGTERM: exit $(cat "$tmp/term/rc"), expected 143"
# SIGQUIT to gputrace alone: fatal to it (no core file), the terminal restored on the way
start quit 100 30 "ulimit -c 0; $(traced "sh -c 'echo \$\$ >pid; exec \"$gputrace\" run --live -o quit -- \"$nvtx_app\" live \"$tmp/quit\"'")"
wait_screen quit '^forward +[0-9,]+ ' "the view (SIGQUIT)"
kill -QUIT "$(cat "$tmp/quit/pid")"
wait_line "$tmp/quit/rc"
[ "$(cat "$tmp/quit/rc")" = 131 ] || fail "after SIGQUIT: exit $(cat "$tmp/quit/rc"), expected 131"
touch "$tmp/quit/pause" "$tmp/quit/stop" # the orphaned program ends too
for p in int term quit; do
	same_stty "$p"
	[ "$(flag "$p" alternate_on)" = 0 ] || fail "$p: still on the alternate screen"
	[ "$(flag "$p" cursor_flag)" = 1 ] || fail "$p: the cursor is hidden"
done
has_scrolled int 'killed by signal 2 \(SIGINT\)' "the summary after Ctrl-C"
has_scrolled term 'killed by signal 15 \(SIGTERM\)' "the summary after SIGTERM"

# Ctrl-Z in an interactive shell: the terminal goes back to the shell as it was, and fg brings
# the view back
start tz 100 30 "PS1='prompt> ' bash --norc --noprofile -i"
wait_screen tz '^prompt>' "the shell's prompt"
tm send-keys -t tz "stty -a >stty.before" Enter
wait_line "$tmp/tz/stty.before"
tm send-keys -t tz "'$gputrace' run --live -o tz -- '$nvtx_app' live '$tmp/tz'" Enter
wait_screen tz '^forward +[0-9,]+ ' "the view (Ctrl-Z)"
tm send-keys -t tz C-z
wait_screen tz '^\[1\]\+ +Stopped +.*gputrace' "the job stopped by Ctrl-Z"
[ "$(flag tz alternate_on)" = 0 ] || fail "Ctrl-Z: still on the alternate screen"
[ "$(flag tz cursor_flag)" = 1 ] || fail "Ctrl-Z: the cursor is hidden"
tm send-keys -t tz "stty -a >stty.after" Enter
wait_line "$tmp/tz/stty.after"
same_stty tz
tm send-keys -t tz "fg" Enter
wait_screen tz '^ gputrace --live ' "the view after fg"
[ "$(flag tz alternate_on)" = 1 ] || fail "fg: the view is not on the alternate screen"
tm send-keys -t tz q
wait_screen tz '^gputrace: [0-9]+\.[0-9] s, [0-9,]+ records' "the status line after fg and q"
touch "$tmp/tz/pause" "$tmp/tz/stop"
wait_screen tz '^gputrace: trace written to tz\.gtrace ' "the end after fg"
tm send-keys -t tz "echo \$? >rc" Enter
wait_line "$tmp/tz/rc"
[ "$(cat "$tmp/tz/rc")" = 0 ] || fail "Ctrl-Z and fg: exit $(cat "$tmp/tz/rc")"

# ---- no terminal, or a dumb one: the status line as without --live ----
expect_rc 0 "$gputrace" run --live -o pipe -- "$nvtx_app" 3
err_has_line "gputrace: warning: --live: standard error is not a terminal; no live view"
start dumb 100 30 "$(traced "TERM=dumb '$gputrace' run --live -o dumb -- '$nvtx_app' live '$tmp/dumb'")"
wait_screen dumb '^gputrace: warning: --live: TERM is dumb; no live view$' "the warning (TERM=dumb)"
wait_screen dumb '^gputrace: [0-9]+\.[0-9] s, [0-9,]+ records' "the status line (TERM=dumb)"
[ "$(flag dumb alternate_on)" = 0 ] || fail "TERM=dumb: on the alternate screen"
touch "$tmp/dumb/pause" "$tmp/dumb/stop"
wait_line "$tmp/dumb/rc"
[ "$(cat "$tmp/dumb/rc")" = 0 ] || fail "TERM=dumb: exit $(cat "$tmp/dumb/rc")"

# ---- the last screen: a program that ends while the traced tree lives on ----
# The view asks for a snapshot and the drain makes it at the end of a pass; a producer as fast
# as the drain keeps one pass going for its whole run, and once it has ended no pass comes:
# the view stayed on a screen from the middle of the run (seen on the H200). Now the final
# screen says the process exited and counts every record the trace has.
N=300000
cat >"$tmp/end.sh" <<EOF
(while [ ! -e '$tmp/end/drained' ]; do sleep 0.1; done; touch '$tmp/end/stop') &
'$producer' bench $N '$tmp/end'
echo \$? >'$tmp/end/prod.rc'
while [ ! -e '$tmp/end/release' ]; do sleep 0.1; done
EOF
start end 150 30 "$(traced "'$gputrace' run --live -o end -- sh '$tmp/end.sh'")"
wait_line "$tmp/end/prod.rc"
wait_screen end '^processes: [0-9]+ live-producer exited 0' "the process's end on the view"
screen_records=$(sed -n 's/^trace .*: [0-9.]* [KMG]*i*B, \([0-9,]*\) records .*/\1/p' "$tmp/end.screen" | tr -d ,)
touch "$tmp/end/release"
wait_line "$tmp/end/rc"
[ "$(cat "$tmp/end/rc")" = 0 ] || fail "run --live (end): exit $(cat "$tmp/end/rc")"
trace_records=$("$gputrace" info "$tmp/end/end.gtrace" | sed -n 's/^records: *//p')
[ -n "$screen_records" ] && [ "$screen_records" = "$trace_records" ] ||
	fail "the last screen counts ${screen_records:-no} records, the trace $trace_records"

# ---- options ----
expect_rc 64 "$gputrace" run --live-interval 0.05 true
expect_err "gputrace: run: --live-interval: '0.05' is not valid; use seconds from 0.1 to 3600, e.g. 1, 0.5, 250ms"
expect_rc 64 "$gputrace" run --live-interval soon true
expect_err "gputrace: run: --live-interval: 'soon' is not valid; use seconds from 0.1 to 3600, e.g. 1, 0.5, 250ms"
start ivl 100 30 "$(traced "'$gputrace' run --live-interval 250ms -o ivl -- '$nvtx_app' live '$tmp/ivl'")"
wait_screen ivl '^ gputrace --live +[0-9.]+ s +refresh 0\.25 s ' "--live-interval 250ms"
touch "$tmp/ivl/pause" "$tmp/ivl/stop"
wait_line "$tmp/ivl/rc"

# ---- nothing lost to the view: the same program with and without it, the same records ----
N=200000
start loss 100 30 "$(traced "'$gputrace' run --live -o with -- '$nvtx_app' $N")"
wait_line "$tmp/loss/rc"
[ "$(cat "$tmp/loss/rc")" = 0 ] || fail "nvtx-app $N under --live: exit $(cat "$tmp/loss/rc")"
expect_rc 0 "$gputrace" run -q -o "$tmp/loss/without" -- "$nvtx_app" $N
for t in with without; do
	"$gputrace" info "$tmp/loss/$t.gtrace" | sed -n '/^records:/,/^losses:/p' >"$t.info"
done
grep -qE "^  nvtx +$((2 * N + 1))$" with.info || fail "--live: $(cat with.info)"
grep -qxF "losses:      none" with.info || fail "--live lost records: $(cat with.info)"
cmp -s with.info without.info || fail "with and without --live: $(diff with.info without.info)"

cli_done cli-live
