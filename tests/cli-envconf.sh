#!/usr/bin/env bash
# The GPUTRACE_* settings behave the same through `gputrace run`'s options and through the bare
# environment (src/settings/envconf.c is linked into both): a bad value is refused with the same words
# by run and by the injection library, and a good one gives the library the same settings
# (its GPUTRACE_DEBUG line lists them all). No GPU: nvtx-app loads the real library through
# NVTX_INJECTION64_PATH, whose set-up parses the settings as CUDA_INJECTION64_PATH's does.
# Usage: cli-envconf.sh PATH/TO/gputrace PATH/TO/nvtx-app PATH/TO/libgputrace-inject.so
set -u
gputrace=$(realpath "$1")
nvtx_app=$(realpath "$2")
inject_lib=$(realpath "$3")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=cli-common.sh
. "$(dirname "$0")/cli-common.sh"
cd "$tmp" || exit 1

unset CUDA_INJECTION64_PATH NVTX_INJECTION64_PATH GPUTRACE_SESSION GPUTRACE_TRACE GPUTRACE_API \
	GPUTRACE_API_SOURCE GPUTRACE_BUFFER_SIZE GPUTRACE_FLUSH_MS GPUTRACE_CAPTURE_RANGE \
	GPUTRACE_GRAPH GPUTRACE_DEBUG GPUTRACE_OUTPUT GPUTRACE_WRITE_QUEUE GPUTRACE_WRITE_TIMEOUT
export GPUTRACE_INJECT_LIB=$inject_lib

# bare VAR=VALUE...: nvtx-app under the library with these settings and no CLI.
bare() {
	env "$@" NVTX_INJECTION64_PATH="$inject_lib" GPUTRACE_OUTPUT="$tmp/bare.gtrace" \
		"$nvtx_app" 1
}

# ---- refused: the same words from run and from the library ----
# option VAR VALUE, one case a line
bad_cases=(
	"--trace GPUTRACE_TRACE kernel,bogus"
	"--trace GPUTRACE_TRACE ,"
	"--trace GPUTRACE_TRACE kern"
	"--api GPUTRACE_API launches"
	"--buffer-size GPUTRACE_BUFFER_SIZE 2G"
	"--buffer-size GPUTRACE_BUFFER_SIZE 12Q"
	"--buffer-size GPUTRACE_BUFFER_SIZE 1K"
	"--flush-interval GPUTRACE_FLUSH_MS -5"
	"--flush-interval GPUTRACE_FLUSH_MS 3600001"
	"--capture-range GPUTRACE_CAPTURE_RANGE nvtx:"
	"--capture-range GPUTRACE_CAPTURE_RANGE cudaProfiler"
	"--graph GPUTRACE_GRAPH nodes"
	"--write-queue GPUTRACE_WRITE_QUEUE 5G"
	"--write-queue GPUTRACE_WRITE_QUEUE 12Q"
)
for c in "${bad_cases[@]}"; do
	read -r opt var value <<<"$c"
	expect_rc 64 "$gputrace" run -q -o never "$opt=$value" -- true
	cli=$(cat "$tmp/err")
	cli_why=${cli#"gputrace: run: $opt: "}
	[ "$cli_why" != "$cli" ] || fail "run $opt=$value: [$cli]"
	[ ! -e never.gtrace ] || fail "run $opt=$value wrote a trace"
	expect_rc 0 bare "$var=$value"
	lib=$(grep "^gputrace: $var: " "$tmp/err")
	[ "$(grep -c . "$tmp/err")" -eq 1 ] || fail "$var=$value: library said [$(cat "$tmp/err")]"
	lib_why=${lib#"gputrace: $var: "}
	lib_why=${lib_why%"; using the default"}
	[ "$lib_why" = "$cli_why" ] ||
		fail "$var=$value: library [$lib_why], run $opt [$cli_why]"
	case "$cli_why" in
	"'$value' is not valid; use "*) ;;
	*) fail "run $opt=$value: [$cli_why]" ;;
	esac
	# the library went on with the default and traced
	[ -s bare.gtrace ] || fail "$var=$value: no trace from the library"
	rm -f bare.gtrace
done

# ---- accepted: the library gets the same settings either way ----
# option VAR VALUE EXPECTED-SETTINGS (the library's debug line after "tracing: "); nvtx is
# traced in each, or run would not load the library into nvtx-app
writer="write queue 67108864 bytes, write timeout 60000 ms"
default_rest="ring 0 bytes, flush 100 ms, capture 0 '', graph graph, $writer"
good_cases=(
	"--trace|GPUTRACE_TRACE|KERNEL, nvtx|kinds 0x21, api filter 0, api source 1, $default_rest"
	"--trace|GPUTRACE_TRACE|cuda,nvtx,,sync|kinds 0xff, api filter 0, api source 1, $default_rest"
	"--api|GPUTRACE_API|NONE|kinds 0xbf, api filter 2, api source 1, $default_rest"
	"--buffer-size|GPUTRACE_BUFFER_SIZE|64MiB|kinds 0xbf, api filter 0, api source 1, ring 67108864 bytes, flush 100 ms, capture 0 '', graph graph, $writer"
	"--flush-interval|GPUTRACE_FLUSH_MS|0|kinds 0xbf, api filter 0, api source 1, ring 0 bytes, flush 0 ms, capture 0 '', graph graph, $writer"
	"--capture-range|GPUTRACE_CAPTURE_RANGE|cudaprofilerapi|kinds 0xbf, api filter 0, api source 0, ring 0 bytes, flush 100 ms, capture 1 '', graph graph, $writer"
	"--capture-range|GPUTRACE_CAPTURE_RANGE|NVTX:Step 1|kinds 0xbf, api filter 0, api source 0, ring 0 bytes, flush 100 ms, capture 2 'Step 1', graph graph, $writer"
	"--graph|GPUTRACE_GRAPH|Node|kinds 0xbf, api filter 0, api source 1, ring 0 bytes, flush 100 ms, capture 0 '', graph node, $writer"
	"--write-queue|GPUTRACE_WRITE_QUEUE|16MiB|kinds 0xbf, api filter 0, api source 1, ring 0 bytes, flush 100 ms, capture 0 '', graph graph, write queue 16777216 bytes, write timeout 60000 ms"
)
n=0
for c in "${good_cases[@]}"; do
	IFS='|' read -r opt var value want <<<"$c"
	n=$((n + 1))
	expect_rc 0 env GPUTRACE_DEBUG=1 "$gputrace" run -q -o "good$n" "$opt=$value" -- \
		"$nvtx_app" 1
	cli=$(grep -o 'tracing: .*' "$tmp/err")
	expect_rc 0 bare GPUTRACE_DEBUG=1 "$var=$value"
	lib=$(grep -o 'tracing: .*' "$tmp/err")
	[ "$cli" = "tracing: $want" ] || fail "run $opt=$value: [$cli], expected [tracing: $want]"
	[ "$lib" = "tracing: $want" ] || fail "$var=$value: [$lib], expected [tracing: $want]"
	rm -f bare.gtrace
done

# GPUTRACE_WRITE_TIMEOUT (no run option: run reads the variable for its own writer's end) is
# refused and accepted by the same parser; 1e-10 s would be 0 ns, which is no limit at all.
for value in 0 1e-10; do
	expect_rc 64 env GPUTRACE_WRITE_TIMEOUT=$value "$gputrace" run -q -o never -- true
	expect_err "gputrace: run: GPUTRACE_WRITE_TIMEOUT: '$value' is not valid; use seconds above 0 and up to 86400, e.g. 60"
	[ ! -e never.gtrace ] || fail "run with GPUTRACE_WRITE_TIMEOUT=$value wrote a trace"
	expect_rc 0 bare GPUTRACE_WRITE_TIMEOUT=$value
	expect_err "gputrace: GPUTRACE_WRITE_TIMEOUT: '$value' is not valid; use seconds above 0 and up to 86400, e.g. 60; using the default"
	[ -s bare.gtrace ] || fail "GPUTRACE_WRITE_TIMEOUT=$value: no trace from the library"
	rm -f bare.gtrace
done
expect_rc 0 bare GPUTRACE_DEBUG=1 GPUTRACE_WRITE_TIMEOUT=2.5
[ "$(grep -o 'tracing: .*' "$tmp/err")" = "tracing: kinds 0xbf, api filter 0, api source 1, ring 0 bytes, flush 100 ms, capture 0 '', graph graph, write queue 67108864 bytes, write timeout 2500 ms" ] ||
	fail "GPUTRACE_WRITE_TIMEOUT=2.5: $(cat "$tmp/err")"
rm -f bare.gtrace

# An empty variable is an unset one (run refuses an empty option: there is nothing to unset).
expect_rc 0 bare GPUTRACE_DEBUG=1 GPUTRACE_TRACE= GPUTRACE_GRAPH=
[ "$(grep -o 'tracing: .*' "$tmp/err")" = "tracing: kinds 0xbf, api filter 0, api source 1, $default_rest" ] ||
	fail "empty variables: $(cat "$tmp/err")"
expect_rc 64 "$gputrace" run -q -o never --graph= -- true
expect_err "gputrace: run: --graph: '' is not valid; use graph or node"

cli_done cli-envconf
