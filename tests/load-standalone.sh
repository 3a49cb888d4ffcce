#!/usr/bin/env bash
# Standalone mode under full CPU load (issue 15's acceptance): RUNS standalone runs (default
# 200) of `nvtx-app exitrace` (32 threads writing NVTX marks with new strings while main calls
# exit()) while every core is busy (tests/cpu-load.sh: stress-ng or busy loops, bounded in
# time and stopped by pid). Each run must exit 0, leave the complete trace under its final name
# (no temporary file, `gputrace info` reads it whole) and print nothing. Prints the counts and
# fails if any run missed. Suite 'load' (`meson test -C build --setup load --suite load`).
# Usage: load-standalone.sh PATH/TO/gputrace PATH/TO/nvtx-app PATH/TO/libgputrace-inject.so [RUNS]
set -u
gputrace=$(realpath "$1")
nvtx_app=$(realpath "$2")
inject_lib=$(realpath "$3")
runs=${4:-${GT_LOAD_RUNS:-200}}
here=$(dirname "$(realpath "$0")")
tmp=$(mktemp -d)
# shellcheck source=cpu-load.sh
. "$here/cpu-load.sh"
trap 'cpu_load_stop; rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
unset GPUTRACE_SESSION GPUTRACE_WRITE_QUEUE GPUTRACE_WRITE_TIMEOUT GPUTRACE_DEBUG

cpu_load_start 7200
missing=0 failed=0 printed=0 total_s=0 max_s=0
echo "load-standalone: $runs runs on $(nproc) cores under $(command -v stress-ng >/dev/null && echo "stress-ng --cpu $(nproc)" || echo "$(nproc) busy loops"), load average $(cut -d' ' -f1 /proc/loadavg)"
for i in $(seq "$runs"); do
	t0=$(date +%s%N)
	NVTX_INJECTION64_PATH=$inject_lib GPUTRACE_OUTPUT=s.gtrace "$nvtx_app" exitrace \
		>out 2>err
	rc=$?
	t=$((($(date +%s%N) - t0) / 1000000))
	total_s=$((total_s + t))
	[ "$t" -gt "$max_s" ] && max_s=$t
	if [ "$rc" -ne 0 ]; then
		failed=$((failed + 1))
		echo "run $i: exit $rc: $(cat err)"
	fi
	if [ -s err ]; then
		printed=$((printed + 1))
		echo "run $i printed: $(cat err)"
	fi
	if [ ! -f s.gtrace ] || ls s.gtrace.tmp-* >/dev/null 2>&1 ||
		! "$gputrace" info s.gtrace >info 2>&1 || ! grep -qx 'recovered:   no' info; then
		missing=$((missing + 1))
		echo "run $i: no complete trace: $(ls) $(head -c 300 info 2>/dev/null)"
	fi
	rm -f s.gtrace s.gtrace.tmp-*
done
echo "load-standalone: $runs runs, $missing missing, $failed failed, $printed printed; mean $((total_s / runs)) ms, longest $max_s ms per run; load average $(cut -d' ' -f1 /proc/loadavg)"
[ "$missing" -eq 0 ] && [ "$failed" -eq 0 ] && [ "$printed" -eq 0 ]
