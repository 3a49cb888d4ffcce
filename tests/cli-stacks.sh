#!/usr/bin/env bash
# CLI test for native stacks (collectors/stack.c, exporters/model/stacks.c): tests/stack-app,
# a PIE program and a shared library built without frame pointers, traced through the real
# injection library with `gputrace run --backtrace native` and with GPUTRACE_BACKTRACE alone;
# the exact frames of each stack, each distinct stack stored once, NVTX_EVENTS' callchainId,
# CUDA_CALLCHAINS, the Perfetto and Chrome exports, and a stripped copy of the program whose
# symbols come from its separate debug information (by build id).
# Usage: cli-stacks.sh gputrace stack-app libgputrace-inject.so [trace_processor_shell]
set -u
gputrace=$(realpath "$1")
app=$(realpath "$2")
inject=$(realpath "$3")
tp=${4:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=cli-common.sh
. "$(dirname "$0")/cli-common.sh"
cd "$tmp" || exit 1
export GPUTRACE_INJECT_LIB="$inject"

# sql TRACE QUERY: the rows, CSV without its header, into $tmp/out
sql() {
	expect_rc 0 "$gputrace" sql "$1" -f csv "$2"
	sed -i '1d; s/\r$//' "$tmp/out"
}

# the frames of each stack in the program and its library (libc's depend on the system),
# innermost first, as "message,frame > frame > ..."
frames_query="SELECT n.text AS t, (SELECT group_concat(v, ' > ') FROM (SELECT s.value AS v
	FROM CUDA_CALLCHAINS c JOIN StringIds s ON s.id = c.symbol JOIN StringIds m ON m.id =
	c.module WHERE c.id = n.callchainId AND (m.value LIKE '%/stack-app' OR m.value LIKE
	'%/libstack-lib.so') ORDER BY c.stackDepth)) AS f FROM NVTX_EVENTS n GROUP BY
	n.callchainId ORDER BY t, f"
frames_want="inner,inner > middle > outer > main > _start
lib,nvtxMarkA_impl_init_v3 > stacklib_mark > middle > outer > main > _start
lib,stacklib_mark > middle > outer > main > _start
outer,outer > main > _start
start,nvtxMarkA_impl_init_v3 > main > _start"

check_trace() { # TRACE what
	expect_rc 0 "$gputrace" info "$1"
	out_has_line "  nvtx         11"
	out_has_line "  stack        5"
	sql "$1" "$frames_query"
	expect_out "$frames_want"
	# every range and mark has a stack; the 6 "inner" ranges share one
	sql "$1" "SELECT text AS t, count(*) AS n, count(callchainId) AS c, count(DISTINCT
		callchainId) AS d FROM NVTX_EVENTS GROUP BY text ORDER BY text"
	expect_out "inner,6,6,1
lib,2,2,2
outer,2,2,1
start,1,1,1"
	sql "$1" "SELECT count(*) AS n, count(DISTINCT id) AS d FROM CUDA_CALLCHAINS"
	expect_out "32,5"
	sql "$1" "SELECT count(*) AS n, sum(unresolved) AS u FROM CUDA_CALLCHAINS c JOIN StringIds
		m ON m.id = c.module WHERE m.value LIKE '%/stack-app' OR m.value LIKE
		'%/libstack-lib.so'"
	expect_out "22,0"
	# the module of frames: the program, the library
	sql "$1" "SELECT DISTINCT s.value AS f, replace(m.value, rtrim(m.value, replace(m.value,
		'/', '')), '') AS m FROM CUDA_CALLCHAINS c JOIN StringIds s ON s.id = c.symbol JOIN
		StringIds m ON m.id = c.module WHERE s.value IN ('inner', 'stacklib_mark', '_start')
		ORDER BY 1"
	expect_out "_start,$2
inner,$2
stacklib_mark,libstack-lib.so"
	sql "$1" "SELECT value AS v FROM META_DATA_EXPORT WHERE name = 'GPUTRACE_SCHEMA_VERSION'"
	expect_out "6"
}

# ---- gputrace run --backtrace native ----
expect_rc 0 "$gputrace" run -q --backtrace native -o r -- "$app"
check_trace r.gtrace stack-app

# ---- GPUTRACE_BACKTRACE in attach mode (no CLI) ----
expect_rc 0 env NVTX_INJECTION64_PATH="$inject" GPUTRACE_BACKTRACE=native \
	GPUTRACE_OUTPUT=s.gtrace "$app"
check_trace s.gtrace stack-app

# ---- off by default: no stacks, no callchainId ----
expect_rc 0 "$gputrace" run -q -o off -- "$app"
expect_rc 0 "$gputrace" info off.gtrace
grep -q "^  stack " "$tmp/out" && fail "stacks recorded without --backtrace"
sql off.gtrace "SELECT count(*) AS n, count(callchainId) AS c FROM NVTX_EVENTS"
expect_out "11,0"

# ---- bad values ----
expect_rc 64 "$gputrace" run --backtrace perl -- "$app"
expect_err "gputrace: run: --backtrace: 'perl' is not valid; use none or MODE[:KINDS[:NS]], MODE native, python or all, KINDS from kernel, memory, sync, other, all; e.g. python:kernel,sync:10000"
expect_rc 64 "$gputrace" run --backtrace native:kernels -- "$app"
expect_rc 64 "$gputrace" run --backtrace native:kernel:x -- "$app"

# ---- Perfetto: the stack on the slices, through Perfetto's own importer ----
expect_rc 0 "$gputrace" export r.gtrace -f perfetto -o r.pftrace
if [ -n "$tp" ] && [ -x "$tp" ] && "$tp" --version >/dev/null 2>&1; then
	expect_rc 0 "$tp" query r.pftrace "SELECT s.name, a.display_value FROM slice s JOIN args a
		USING (arg_set_id) WHERE a.key = 'debug.stack' AND s.name IN ('inner', 'outer')
		GROUP BY s.name ORDER BY s.name"
	grep -q '"inner","inner (stack-app)' "$tmp/out" || fail "perfetto: no stack on inner"
	grep -q '"outer","outer (stack-app)' "$tmp/out" || fail "perfetto: no stack on outer"
	expect_rc 0 "$tp" query r.pftrace "SELECT count(*) FROM slice s JOIN args a USING
		(arg_set_id) WHERE a.key = 'debug.stack'"
	grep -qx '11' "$tmp/out" || fail "perfetto: stacks on $(tail -n 1 "$tmp/out") slices, not 11"
fi

# ---- Chrome JSON: a "stack" arg ----
expect_rc 0 "$gputrace" export r.gtrace -f chrome -o r.json
grep -q '"stack":\["inner (stack-app)","middle (stack-app)","outer (stack-app)","main (stack-app)",' r.json ||
	fail "chrome: no stack on inner"
[ "$(grep -o '"stack":\[' r.json | wc -l)" = 11 ] || fail "chrome: not 11 stacks"

# ---- a stripped program with its debug information found by build id ----
if command -v objcopy >/dev/null && command -v readelf >/dev/null; then
	mkdir -p bin dbg
	cp "$app" bin/stack-app
	objcopy --only-keep-debug bin/stack-app bin/stack-app.debug
	objcopy --strip-all bin/stack-app
	bid=$(readelf -n bin/stack-app | sed -n 's/^ *Build ID: *//p')
	[ -n "$bid" ] || fail "stripped: no build id"
	mkdir -p "dbg/.build-id/${bid:0:2}"
	mv bin/stack-app.debug "dbg/.build-id/${bid:0:2}/${bid:2}.debug"
	expect_rc 0 env LD_LIBRARY_PATH="$(dirname "$app")" "$gputrace" run -q --backtrace native \
		-o x -- bin/stack-app
	# without the debug information: the program's own frames are unresolved addresses
	sql x.gtrace "SELECT count(*) AS n FROM CUDA_CALLCHAINS c JOIN StringIds s ON s.id =
		c.symbol WHERE s.value = 'inner'"
	expect_out "0"
	rm -f x.sqlite
	expect_rc 0 env GPUTRACE_DEBUGINFO_PATH="$tmp/dbg" "$gputrace" export x.gtrace -f sqlite \
		-o x.sqlite
	sql x.sqlite "$frames_query"
	expect_out "$frames_want"
fi

cli_done cli-stacks
