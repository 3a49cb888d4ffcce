#!/usr/bin/env bash
# CLI test for Python frames (collectors/pystack.c, exporters/model/stacks.c): tests/pystack-app.py
# calls NVTX through a ctypes library (tests/pystack-lib.c) from known functions and lines, on
# the main thread, a threading.Thread and a thread started in C, traced with `gputrace run
# --backtrace python`; the exact file, function and line of each range in SQL, Chrome,
# Perfetto (through its own importer) and `stats --by source`; calls with the GIL let go (their
# frames read from memory, names of any code points); the interpreter exiting while threads are inside NVTX calls; CPython 3.10 to
# 3.13 where pyenv has them; a program without Python records nothing.
# Usage: cli-pystack.sh gputrace libpystack-lib.so pystack-app.py libgputrace-inject.so
#        trace_processor_shell stack-app perfetto-import
set -u
gputrace=$(realpath "$1")
lib=$(realpath "$2")
app=$(realpath "$3")
inject=$(realpath "$4")
tp=${5:-}
stack_app=$(realpath "$6")
pf_import=${7:-}
[ -n "$pf_import" ] && pf_import=$(realpath "$pf_import")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=cli-common.sh
. "$(dirname "$0")/cli-common.sh"
cd "$tmp" || exit 1
export GPUTRACE_INJECT_LIB="$inject"
py=/usr/bin/python3

sql() {
	expect_rc 0 "$gputrace" sql "$1" -f csv "$2"
	sed -i '1d; s/\r$//' "$tmp/out"
}

# each range or mark: how many, and the frames of the program, innermost first
frames_query="SELECT n.text AS t, count(*) AS k, (SELECT group_concat(v, ' > ') FROM (SELECT
	s.value || ':' || c.lineNumber AS v FROM CUDA_CALLCHAINS c JOIN StringIds s ON s.id =
	c.symbol JOIN StringIds m ON m.id = c.module WHERE c.id = n.callchainId AND m.value =
	'$app' ORDER BY c.stackDepth)) AS f FROM NVTX_EVENTS n GROUP BY n.text, n.callchainId
	ORDER BY t, f"
# calls that let the GIL go: their frames are read from memory (3.11+), the functions of raw
# and raw4 first seen so (their names, of Latin-1 and of 4-byte code points, read as well)
frames_want="fromc,1,from_c:31
inner,3,inner:15 > Model.forward:21 > main:53 > <module>:68
mark,3,Model.forward:22 > main:53 > <module>:68
nogil,1,main:59 > <module>:68
raw,1,grüße:46 > main:59 > <module>:68
raw4,1,𠀀σ:42 > grüße:47 > main:59 > <module>:68
thread,1,worker:26"

check_trace() { # TRACE [3.10: function names without their class, no frames without the GIL]
	local want=$frames_want stacks=7
	if [ "${2:-}" = 3.10 ]; then
		want=${want//Model.forward/forward}
		want=$(sed -E 's/^(nogil|raw|raw4),1,.*/\1,1,/' <<<"$want")
		stacks=4
	fi
	sql "$1" "$frames_query"
	expect_out "$want"
	expect_rc 0 "$gputrace" info "$1"
	out_has_line "  stack        $stacks"
}

# ---- gputrace run --backtrace python ----
expect_rc 0 "$gputrace" run -q --backtrace python -o p -- "$py" "$app" "$lib"
check_trace p.gtrace
# the thread's outer frames are threading.py's; every Python frame resolved, with a line
sql p.gtrace "SELECT count(*), sum(unresolved), count(lineNumber) FROM CUDA_CALLCHAINS"
expect_out "21,0,21"
sql p.gtrace "SELECT s.value FROM CUDA_CALLCHAINS c JOIN StringIds s ON s.id = c.symbol JOIN
	StringIds m ON m.id = c.module WHERE m.value LIKE '%/threading.py' ORDER BY c.stackDepth"
expect_out "Thread.run
Thread._bootstrap_inner
Thread._bootstrap"
expect_rc 0 "$gputrace" info p.gtrace
out_has_line "  pycode       11"
out_has_line "  pyline       15"

# ---- GPUTRACE_BACKTRACE without the CLI ----
expect_rc 0 env NVTX_INJECTION64_PATH="$inject" GPUTRACE_BACKTRACE=python \
	GPUTRACE_OUTPUT=s.gtrace "$py" "$app" "$lib"
check_trace s.gtrace

# ---- other CPython versions, where pyenv has them ----
for v in 3.10 3.11 3.12 3.13; do
	for exe in /root/.pyenv/versions/"$v".*/bin/python3; do
		[ -x "$exe" ] || continue
		rm -f v.gtrace v.sqlite
		expect_rc 0 "$gputrace" run -q --backtrace python -o v -- "$exe" "$app" "$lib"
		check_trace v.gtrace "$v"
	done
done

# ---- all: native frames up to the interpreter, then the Python frames ----
expect_rc 0 "$gputrace" run -q --backtrace all -o a -- "$py" "$app" "$lib"
sql a.gtrace "$frames_query"
expect_out "$frames_want"
# the call with the GIL let go: ctypes' native frames up to the interpreter, then its two
# Python frames
sql a.gtrace "SELECT sum(c.lineNumber IS NULL) > 3, sum(c.lineNumber IS NOT NULL) FROM
	CUDA_CALLCHAINS c JOIN NVTX_EVENTS n ON c.id = n.callchainId WHERE n.text = 'nogil'"
expect_out "1,2"
# no frame of the interpreter's own code between the library and the Python frames
sql a.gtrace "SELECT count(*) FROM CUDA_CALLCHAINS c JOIN NVTX_EVENTS n ON c.id =
	n.callchainId JOIN StringIds s ON s.id = c.symbol WHERE n.text IN ('inner', 'nogil')
	AND s.value LIKE '_PyEval_EvalFrame%'"
expect_out "0"

# ---- the interpreter exits while threads are inside NVTX calls ----
expect_rc 3 "$gputrace" run -q --backtrace python -o e -- "$py" "$app" "$lib" exit
# every range of the thread holding the GIL has its stack; the thread that let it go has its
# frames read from memory until the interpreter begins finalizing (then none: its thread state
# is about to be freed), and the process exits with the program's status
sql e.gtrace "SELECT count(callchainId) = count(*) FROM NVTX_EVENTS WHERE text = 'gilspin'"
expect_out "1"
sql e.gtrace "SELECT count(callchainId) >= 1000 FROM NVTX_EVENTS WHERE text = 'spin'"
expect_out "1"
sql e.gtrace "SELECT DISTINCT s.value FROM NVTX_EVENTS n JOIN CUDA_CALLCHAINS c ON c.id =
	n.callchainId JOIN StringIds s ON s.id = c.symbol WHERE n.text = 'spin' AND
	c.stackDepth = 0"
expect_out "Thread.run"

# ---- a program without Python: no stack, nothing recorded ----
expect_rc 0 "$gputrace" run -q --backtrace python -o c -- "$stack_app"
expect_rc 0 "$gputrace" info c.gtrace
grep -q "^  stack " "$tmp/out" && fail "stacks recorded in a program without Python"
grep -q "^  pycode " "$tmp/out" && fail "code objects recorded in a program without Python"

# ---- stats --by source: each line and function (range times vary: left out, rows sorted) ----
expect_rc 0 "$gputrace" stats --by source -f csv p.gtrace
head -n 2 "$tmp/out" >"$tmp/head"
[ "$(cat "$tmp/head")" = "# source_lines
gpu_ns,kernels,api_calls,api_ns,nvtx,nvtx_ns,file,line,function" ] ||
	fail "stats --by source: header [$(cat "$tmp/head")]"
grep -F "$app" "$tmp/out" | cut -d, -f1-5,7- | sed "s|$app|APP|" | LC_ALL=C sort >"$tmp/rows"
[ "$(cat "$tmp/rows")" = "0,0,0,0,1,APP,26,worker
0,0,0,0,1,APP,31,from_c
0,0,0,0,1,APP,42,𠀀σ
0,0,0,0,1,APP,46,grüße
0,0,0,0,1,APP,59,main
0,0,0,0,1,APP,from_c
0,0,0,0,1,APP,grüße
0,0,0,0,1,APP,main
0,0,0,0,1,APP,worker
0,0,0,0,1,APP,𠀀σ
0,0,0,0,3,APP,15,inner
0,0,0,0,3,APP,22,Model.forward
0,0,0,0,3,APP,Model.forward
0,0,0,0,3,APP,inner" ] || fail "stats --by source: rows [$(cat "$tmp/rows")]"
grep -qx "# source_functions" "$tmp/out" || fail "stats --by source: no function table"

# ---- Perfetto: the frames as python_function slices above each range, by its importer ----
expect_rc 0 "$gputrace" export p.gtrace -f perfetto -o p.pftrace
expect_rc 0 "$gputrace" export p.gtrace -f chrome -o p.json
if [ -n "$tp" ] && [ -x "$tp" ] && "$tp" --version >/dev/null 2>&1; then
	for f in p.pftrace p.json; do
		# each range and mark with the Python slices it stands under, outermost first
		expect_rc 0 "$tp" query "$f" "SELECT r.name AS range, (SELECT group_concat(n, ' > ')
			FROM (SELECT a.name AS n FROM ancestor_slice(r.id) a WHERE a.category =
			'python_function' ORDER BY a.depth)) AS py FROM slice r WHERE r.category =
			'user_annotation' GROUP BY r.name, py ORDER BY r.name"
		sed -i "s|$app|APP|g" "$tmp/out"
		for want in '"fromc","APP(31): from_c"' \
			'"inner","APP(68): <module> > APP(53): main > APP(21): Model.forward > APP(15): inner"' \
			'"mark","APP(68): <module> > APP(53): main > APP(22): Model.forward"' \
			'"nogil","APP(68): <module> > APP(59): main"' \
			'"raw4","APP(68): <module> > APP(59): main > APP(47): grüße > APP(42): 𠀀σ"'; do
			grep -qxF -- "$want" "$tmp/out" || fail "$f: no row [$want] in $(cat "$tmp/out")"
		done
		grep -q '"thread",".*threading.py([0-9]*): Thread._bootstrap > .* > APP(26): worker"' \
			"$tmp/out" || fail "$f: thread's frames: $(cat "$tmp/out")"
		expect_rc 0 "$tp" query "$f" "SELECT count(*) FROM slice WHERE category =
			'python_function'"
		grep -qx '35' "$tmp/out" || fail "$f: $(tail -n 1 "$tmp/out") Python slices, not 35"
	done
	# Kineto's fields: each frame's "Python id", its parent's as "Python parent id"
	grep -q '"name":"'"$app"'(15): inner",.*"args":{"Python id":[0-9]*,"Python parent id":[0-9]*}' \
		p.json || fail "chrome: no Python ids on inner"
	# the importer's own checks of both exports against the trace
	if [ -n "$pf_import" ]; then
		expect_rc 0 "$pf_import" "$tp" --trace p.gtrace
		grep -q "all checks passed" "$tmp/out" "$tmp/err" ||
			fail "perfetto-import: $(cat "$tmp/out" "$tmp/err" | grep FAIL)"
	fi
fi

# ---- a real PyTorch run (tests/data, H100): kernels per line of the user's code ----
# torch_train.py's kernels by the line of its own code that launched them (torch's frames
# passed over); the backward pass's come from autograd's thread, which has no Python frames
real=$(realpath "$(dirname "$0")")/data/pytorch-pystack.gtrace
expect_rc 0 "$gputrace" stats --by source -f csv "$real"
awk -F, '/^# source_lines/ {s = 1; next} /^#/ {s = 0} s && $7 ~ /torch_train\.py$/ && $2 > 0 {
	print $8 ":" $2 }' "$tmp/out" | sort -n | tr '\n' ' ' >"$tmp/lines"
[ "$(cat "$tmp/lines")" = "21:1 22:1 27:160 28:20 29:20 44:1 49:18 52:2 60:1 " ] ||
	fail "real trace: kernels per line [$(cat "$tmp/lines")]"
awk -F, '/^# source_functions/ {s = 1; next} /^#/ {s = 0} s && $7 ~ /torch_train\.py$/ {
	print $8 ":" $2 }' "$tmp/out" | sort | tr '\n' ' ' >"$tmp/funcs"
[ "$(cat "$tmp/funcs")" = "<module>:24 step:200 " ] ||
	fail "real trace: kernels per function [$(cat "$tmp/funcs")]"
sql "$real" "SELECT count(*), count(callchainId) FROM CUPTI_ACTIVITY_KIND_RUNTIME"
expect_out "509,303"
expect_rc 0 "$gputrace" advise "$real"
out_has_line "  Code:  /work/main/tests/gpu/torch_train.py(29): step, 19 times, 6.392 ms; /work/main/tests/gpu/torch_train.py(27): step, 152 times, 4.710 ms; /work/main/tests/gpu/torch_train.py(28): step, 19 times, 830.385 us (190 of 380 with a stack)"

# ---- bad values ----
expect_rc 64 "$gputrace" run --backtrace pyton -- "$py"
expect_err "gputrace: run: --backtrace: 'pyton' is not valid; use none or MODE[:KINDS[:NS]], MODE native, python or all, KINDS from kernel, memory, sync, other, all; e.g. python:kernel,sync:10000"
expect_rc 0 "$gputrace" run -q --backtrace python:kernel:1000 -o k -- "$py" "$app" "$lib"
check_trace k.gtrace

cli_done cli-pystack
