#!/bin/bash
# The CPU time of the gputrace CLI with and without --live on a busy run, for
# docs/performance.md ("The live view"). The traced program is tests/live-producer (no GPU
# needed): N kernels, N API calls and N/4 NVTX ranges written as fast as the drain takes them,
# nothing dropped. Both runs are in tmux panes (a terminal: the status line, or the view at
# the default 1 s refresh). The CLI's CPU time is the sum of its threads' run time
# (/proc/PID/task/*/schedstat, nanoseconds) at the moment the producer has seen its last
# record taken from the ring: startup, draining, compression and the view, not the summary.
# Rounds alternate the two modes. Prints one line per run and the medians.
# Usage: bench/live-cpu.sh BUILD_DIR [N] [ROUNDS]    (defaults 4000000, 5)
set -u
build=$(cd "${1:?usage: live-cpu.sh BUILD_DIR [N] [ROUNDS]}" && pwd)
n=${2:-4000000}
rounds=${3:-5}
gputrace=$build/cli/gputrace
producer=$build/tests/live-producer
command -v tmux >/dev/null || { echo "live-cpu: needs tmux" >&2; exit 1; }
tmp=$(mktemp -d)
sock=$tmp/tmux.sock
tm() { tmux -S "$sock" -f /dev/null "$@"; }
trap 'tm kill-server >/dev/null 2>&1; rm -rf "$tmp"' EXIT

cpu_ns() {
	local sum=0 t v
	for t in /proc/"$1"/task/*/schedstat; do
		read -r v _ <"$t" 2>/dev/null && sum=$((sum + v))
	done
	echo "$sum"
}

wait_file() { while [ ! -e "$1" ]; do sleep 0.05; done; }

run_one() { # MODE ROUND
	local d=$tmp/$1-$2 opt="" pid t0 t1 cpu
	mkdir -p "$d"
	[ "$1" = live ] && opt=--live
	t0=$(date +%s.%N)
	tm new-session -d -s "$1$2" -x 200 -y 50 \
		"echo \$\$ >'$d/pid'; exec '$gputrace' run $opt -o '$d/t' -- '$producer' bench $n '$d'"
	wait_file "$d/pid"
	pid=$(cat "$d/pid")
	wait_file "$d/drained"
	cpu=$(cpu_ns "$pid")
	t1=$(date +%s.%N)
	touch "$d/stop"
	while kill -0 "$pid" 2>/dev/null; do sleep 0.05; done
	records=$("$gputrace" info "$d/t.gtrace" | sed -n 's/^records: *//p')
	lost=$("$gputrace" info "$d/t.gtrace" | sed -n 's/^losses: *//p')
	printf '%-5s round %d: CLI CPU %.2f s, wall %.2f s, %s records, losses: %s\n' "$1" "$2" \
		"$(echo "$cpu / 1000000000" | bc -l)" "$(echo "$t1 - $t0" | bc -l)" "$records" "$lost"
	echo "$cpu" >>"$tmp/$1.cpu"
	rm -f "$d/t.gtrace"
}

echo "live-cpu: $(date -u +%FT%TZ) $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)"
echo "live-cpu: N=$n (records: 2N + N/4 + strings and metadata), $rounds rounds"
for ((r = 1; r <= rounds; r++)); do
	if ((r % 2)); then
		run_one plain "$r"
		run_one live "$r"
	else
		run_one live "$r"
		run_one plain "$r"
	fi
done
for m in plain live; do
	sort -n "$tmp/$m.cpu" | awk -v m="$m" '{ v[NR] = $1 } END {
		printf "%-5s median CLI CPU %.2f s (min %.2f, max %.2f)\n", m, v[int((NR + 1) / 2)] / 1e9,
			v[1] / 1e9, v[NR] / 1e9 }'
done
