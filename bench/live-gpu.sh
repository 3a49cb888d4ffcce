#!/bin/bash
# gputrace run --live on PyTorch training, on a GPU machine (bench/gpu-session.sh step "live").
# 1. The screen: the transformer workload of bench/overhead/torch_bench.py (xfmr, NVTX steps
#    "ProfilerStep#N" around forward, backward, optimizer) under `gputrace run --live` on a
#    200x60 terminal; the screen is captured as text every 3 s, and once more after the
#    program has exited (the view then holds the run's totals: a shell wrapper keeps the
#    traced tree alive until that capture); then `gputrace stats` and `gputrace info` of the
#    same trace, and the NVTX and kernel counts of the last screen set against the trace's.
#    The terminal is tmux's (capture-pane). Without tmux, script(1) provides the terminal
#    (TERM=xterm-256color, 200x60) and the raw screen output is dumped instead (escape
#    sequences made visible with cat -v), which the log says.
# 2. The step time: torch_bench.py xfmr bare, under `gputrace run` and under `gputrace run
#    --live`, ROUNDS interleaved rounds, each in a terminal (so both gputrace runs draw: the
#    status line or the view); prints each run's "xfmr step_mean_us ..." line.
# Usage: bench/live-gpu.sh BUILD_DIR [ROUNDS] [STEPS]   (defaults 3 rounds, 600 steps)
#   LIVE_SCREEN=0 leaves out part 1 (the step time alone)
set -u
build=$(cd "${1:?usage: live-gpu.sh BUILD_DIR [ROUNDS] [STEPS]}" && pwd)
rounds=${2:-3}
steps=${3:-600}
src=$(cd "$(dirname "$0")/.." && pwd)
gputrace=$build/cli/gputrace
bench=$src/bench/overhead/torch_bench.py
work=$(mktemp -d)
sock=$work/tmux.sock
have_tmux=false
command -v tmux >/dev/null && have_tmux=true
tm() { tmux -S "$sock" -f /dev/null "$@"; }
trap 'tm kill-server >/dev/null 2>&1; rm -rf "$work"' EXIT
stamp() { echo "== $(date -u +%H:%M:%S) $*"; }

# wait_for FILE SECONDS: 0 once FILE exists, 1 after SECONDS.
wait_for() {
	local i
	for ((i = 0; i < $2 * 10; i++)); do
		[ -e "$1" ] && return 0
		sleep 0.1
	done
	return 1
}

# in_terminal NAME CMD: run the shell command CMD on a 200x60 terminal and wait for it;
# tmux when installed, else script(1).
in_terminal() {
	if $have_tmux; then
		tm new-session -d -s "$1" -x 200 -y 60 "cd '$work' && $2; echo \$? >'$work/$1.rc'"
		wait_for "$work/$1.rc" 3600
	else
		COLUMNS=200 LINES=60 TERM=xterm-256color script -q -e -c "stty cols 200 rows 60; $2" \
			"$work/$1.typescript" >/dev/null
	fi
}

stamp "live-gpu: $(date -u +%F), $(nvidia-smi -L 2>/dev/null | head -n 2 | tr '\n' ' ')"
python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda)"

# ---- 1. the screen ----
if [ "${LIVE_SCREEN:-1}" != 0 ]; then
stamp "screen: gputrace run --live -- python3 torch_bench.py xfmr --steps $steps --nvtx"
# the traced program: the workload, then a wait that keeps the view up until it was captured
cat >"$work/wrapped.sh" <<EOF
python3 '$bench' xfmr --steps $steps --nvtx
echo \$? >'$work/py.rc'
while [ ! -e '$work/release' ]; do sleep 0.2; done
EOF
live_cmd="'$gputrace' run --live -f -o '$work/live' -- sh '$work/wrapped.sh'"
if $have_tmux; then
	tm new-session -d -s screen -x 200 -y 60 "cd '$work' && $live_cmd; echo \$? >'$work/screen.rc'; sleep 100000"
	n=0
	until [ -e "$work/py.rc" ] || [ -e "$work/screen.rc" ] || ((n > 1200)); do
		sleep 3
		n=$((n + 1))
		stamp "screen capture $n"
		tm capture-pane -p -t screen
	done
	# the program has exited: wait until the view shows it (its totals are final then)
	for ((i = 0; i < 300; i++)); do
		tm capture-pane -p -t screen >"$work/last.screen"
		grep -qE '^processes:.* exited 0' "$work/last.screen" && break
		sleep 0.2
	done
	sleep 2 # one more refresh after the last records
	tm capture-pane -p -t screen >"$work/last.screen"
	stamp "the last screen, after the program exited (python3 exit $(cat "$work/py.rc" 2>/dev/null))"
	cat "$work/last.screen"
	touch "$work/release"
	wait_for "$work/screen.rc" 600
	stamp "gputrace run --live exit $(cat "$work/screen.rc" 2>/dev/null); its summary:"
	tm capture-pane -p -J -S - -t screen | sed -n '/^gputrace: trace written/,$p' | cat -s | head -60
else
	echo "tmux is not installed: script(1) is the terminal; the raw screen output follows"
	echo "(the last 60000 bytes, escape sequences made visible by cat -v)"
	(sleep 1; wait_for "$work/py.rc" 3600; sleep 3; touch "$work/release") &
	COLUMNS=200 LINES=60 TERM=xterm-256color script -q -e -c "stty cols 200 rows 60; $live_cmd" \
		"$work/screen.typescript" >/dev/null
	echo "gputrace run --live exit $?"
	tail -c 60000 "$work/screen.typescript" | cat -v
	echo
fi

stamp "gputrace info of the same trace"
"$gputrace" info "$work/live.gtrace"
stamp "gputrace stats of the same trace"
"$gputrace" stats "$work/live.gtrace"
if [ -e "$work/last.screen" ]; then
	stamp "the last screen's totals against the trace's"
	"$gputrace" stats -r nvtx -f csv "$work/live.gtrace" >"$work/nvtx.csv"
	for r in forward backward optimizer; do
		screen=$(sed -n "s/^$r .*| *\([0-9,]*\) .*/\1/p" "$work/last.screen" | tr -d ,)
		trace=$(awk -F, -v r="$r" '$NF == r { print $3 }' "$work/nvtx.csv")
		echo "NVTX $r: screen ${screen:-none}, trace ${trace:-none}: $([ "$screen" = "$trace" ] && echo MATCH || echo DIFFER)"
	done
	screen=$(sed -n 's/^trace [^:]*: [^,]*, \([0-9,]*\) records .*/\1/p' "$work/last.screen" | tr -d ,)
	trace=$("$gputrace" info "$work/live.gtrace" | sed -n 's/^records: *//p')
	echo "records: screen ${screen:-none}, trace ${trace:-none}"
	"$gputrace" stats -r kernels -f csv "$work/live.gtrace" >"$work/kernels.csv"
	echo "kernels on the last screen (name as shown, count since the start) and the trace's count:"
	sed -n '/^KERNEL /,/^ q leave/p' "$work/last.screen" | sed '1d;$d' | grep -v '^ *$' | head -12 |
		while IFS= read -r line; do
			name=$(echo "$line" | sed 's/ \{2,\}[0-9,]* .*//')
			count=$(echo "$line" | sed -n 's/.*| *\([0-9,]*\) .*/\1/p' | tr -d ,)
			echo "  screen $count  $name"
		done
	echo "  (the trace's kernels by count, for comparison; names as stats prints them)"
	head -n 13 "$work/kernels.csv" | cut -c1-200 | sed 's/^/  /'
fi
fi

# ---- 2. the step time: bare, gputrace run, gputrace run --live ----
for ((r = 1; r <= rounds; r++)); do
	for mode in bare run live; do
		case $mode in
		bare) cmd="python3 '$bench' xfmr --steps $steps" ;;
		run) cmd="'$gputrace' run -f -o '$work/step-run' -- python3 '$bench' xfmr --steps $steps" ;;
		live) cmd="'$gputrace' run --live -f -o '$work/step-live' -- python3 '$bench' xfmr --steps $steps" ;;
		esac
		# only the program's output goes to a file: gputrace's own (the status line, the
		# view) needs the terminal
		in_terminal "$mode$r" "$cmd >'$work/$mode$r.out'"
		printf 'round %d %-4s: %s\n' "$r" "$mode" \
			"$(grep -h step_mean_us "$work/$mode$r.out" || echo "no result: $(tail -n 3 "$work/$mode$r.out")")"
	done
done
