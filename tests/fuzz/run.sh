#!/usr/bin/env bash
# Runs each libFuzzer target for a given time, seeded from tests/fuzz/corpus/<target>/ (see
# docs/reliability.md). Sets up a clang build with the fuzz targets when there is none:
# the core, exporters and CLI instrumented for coverage, with ASan and UBSan.
#
#   tests/fuzz/run.sh [-b BUILD-DIR] [-t SECONDS] [-w WORK-DIR] [--seeds] [TARGET...]
#
# TARGET: reader, export, ring, pattern, options (default: all five). Inputs that once
# crashed (tests/fuzz/crashes/<target>-*) are replayed first and must pass. Inputs the
# fuzzer finds interesting go to WORK-DIR/<target>/ (never into the committed seeds); a
# crashing input is saved as WORK-DIR/crashes/<target>-crash-<sha1>, and the script exits 1.
# An input that ran over 10 s (libFuzzer's timeout, a wall clock) is run again alone: it is
# a hang when it then needs over 10 s of CPU or 300 s in all; otherwise the machine had
# stalled (seen on a shared VM: one unit "took" 21 s), which is said, not failed.
# libFuzzer's slow-unit reports are not crashes.
# --seeds rewrites the committed seed corpus with fuzz-mkseeds first.
# One line per target: "fuzz-reader: N executions in S s, C crashes".
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=$src/build-fuzz
seconds=60
work=
seeds=0
targets=()
while [ $# -gt 0 ]; do
	case $1 in
	-b) build=$(realpath -m "$2"); shift 2 ;;
	-t) seconds=$2; shift 2 ;;
	-w) work=$(realpath -m "$2"); shift 2 ;;
	--seeds) seeds=1; shift ;;
	-h|--help) sed -n "2,17p" "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	reader|export|ring|pattern|options) targets+=("$1"); shift ;;
	*) echo "run.sh: unknown argument '$1'" >&2; exit 2 ;;
	esac
done
[ ${#targets[@]} -gt 0 ] || targets=(reader export ring pattern options)
work=${work:-$build/fuzz-work}

if [ ! -f "$build/build.ninja" ]; then
	CC=clang meson setup "$build" "$src" -Dfuzz=enabled -Dinjection=disabled \
		-Db_sanitize=address,undefined -Db_lundef=false \
		-Dc_args=-fsanitize=fuzzer-no-link >/dev/null
fi
ninja -C "$build" tests/fuzz/fuzz-reader tests/fuzz/fuzz-export tests/fuzz/fuzz-ring \
	tests/fuzz/fuzz-pattern tests/fuzz/fuzz-options tests/fuzz/fuzz-mkseeds >/dev/null
if [ "$seeds" = 1 ]; then
	"$build/tests/fuzz/fuzz-mkseeds" "$src/tests/fuzz/corpus" "$src"/tests/data/*.gtrace
fi

# Longest input per target: traces need room for a few chunks; the rest are short.
declare -A max_len=([reader]=40960 [export]=40960 [ring]=4096 [pattern]=512 [options]=512)
mkdir -p "$work/crashes"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
failed=0

# What libFuzzer saved for target $1 that fails a run: crashes, leaks, out-of-memory and
# timeouts (not its slow-unit reports).
artifacts() {
	find "$work/crashes" \( -name "$1-crash-*" -o -name "$1-leak-*" -o -name "$1-oom-*" \
		-o -name "$1-timeout-*" \) -type f
}

# again_hangs BIN INPUT: the input, alone, needs over 10 CPU seconds or 300 s in all.
# Sets again_s to the seconds it took.
again_s=0
again_hangs() {
	local t0=$SECONDS rc=0

	(ulimit -t 10 && exec timeout 300 "$1" -close_fd_mask=3 "$2") >/dev/null 2>&1 || rc=$?
	again_s=$((SECONDS - t0))
	[ "$rc" != 0 ]
}

for t in "${targets[@]}"; do
	bin=$build/tests/fuzz/fuzz-$t
	mkdir -p "$work/$t"
	log=$work/$t.log
	before=$(artifacts "$t" | wc -l)
	rc=0
	# Inputs that once crashed (tests/fuzz/crashes/<target>-*) must run clean first.
	shopt -s nullglob
	old=("$src/tests/fuzz/crashes/$t-"*)
	shopt -u nullglob
	if [ ${#old[@]} -gt 0 ] && ! "$bin" -close_fd_mask=3 "${old[@]}" >"$log" 2>&1; then
		echo "fuzz-$t: a saved crash input fails again (log: $log)" >&2
		failed=1
		continue
	fi
	# -close_fd_mask=3: the CLI's messages would drown libFuzzer's; -timeout: an input
	# that runs this long is a hang (the consumer and reader must never loop).
	"$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -close_fd_mask=3 \
		-max_len="${max_len[$t]}" -print_final_stats=1 \
		-artifact_prefix="$work/crashes/$t-" \
		"$work/$t" "$src/tests/fuzz/corpus/fuzz-$t" >"$log" 2>&1 || rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	after=$(artifacts "$t" | wc -l)
	crashes=$((after - before))
	# a timeout alone: a hang, or the machine stalled under the unit
	newest=$(artifacts "$t" | xargs -r ls -t | head -n 1) || true
	if [ "$rc" != 0 ] && [ "$crashes" = 1 ] && [[ $newest == */$t-timeout-* ]] &&
		! again_hangs "$bin" "$newest"; then
		echo "fuzz-$t: note: $newest ran over 10 s once and in $again_s s alone: the" \
			"machine stalled; not a hang" >&2
		mv "$newest" "$work/$t-stalled-${newest##*/"$t"-timeout-}"
		rc=0
		crashes=0
	fi
	echo "fuzz-$t: ${execs:-0} executions in $seconds s, $crashes crashes"
	if [ "$rc" != 0 ] || [ "$crashes" != 0 ]; then
		failed=1
		grep -E '^(==[0-9]+==ERROR|SUMMARY|fuzz check failed|.*runtime error)' "$log" | head -n 5 >&2 || true
		if [ "$crashes" != 0 ]; then
			artifacts "$t" | xargs ls -t | head -n "$crashes" | sed 's/^/  input: /' >&2
		fi
		echo "  log: $log" >&2
	fi
done
exit $failed
