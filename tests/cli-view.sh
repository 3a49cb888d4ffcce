#!/usr/bin/env bash
# CLI test for `gputrace view` and `gputrace run --view` (cli/cmd-view.c), with curl as the
# browser: usage errors and exit codes, the export next to the trace and its reuse, the exact
# CORS headers, 404 for another path, 405, 431 for an oversized request, exit 0 after one
# full fetch, 69 on a port in use, 75 after --timeout, 143 on SIGTERM, $BROWSER, the ssh -L
# line, a file too large for the UI. Skips (77) without curl.
# Usage: cli-view.sh gputrace mktrace session-child
set -u
gputrace=$(realpath "$1")
mktrace=$(realpath "$2")
session_child=$(realpath "$3")
command -v curl >/dev/null || { echo "SKIP: no curl (apt-get install curl)"; exit 77; }
tmp=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT
# shellcheck source=cli-common.sh
. "$(dirname "$0")/cli-common.sh"
cd "$tmp" || exit 1
# No real browser, whatever the machine running the tests has.
unset BROWSER DISPLAY WAYLAND_DISPLAY SSH_CONNECTION

"$mktrace" -o run.gtrace --kernels 1000 --api --memcpy >/dev/null ||
	{ echo "FAIL: mktrace could not write run.gtrace" >&2; exit 1; }

# start_view LOG ARGS...: `gputrace view ARGS` in the background, stderr in LOG; sets $pid,
# and $url, $base (http://127.0.0.1:PORT) and $port once it waits for the browser.
start_view() {
	local log=$1
	shift
	: >"$log"
	"$gputrace" view "$@" >"$log.out" 2>"$log" &
	pid=$!
	pids+=("$pid")
	wait_serving "$log"
}

# wait_serving LOG: wait (up to 10 s) until LOG says it waits for the browser.
wait_serving() {
	for _ in $(seq 100); do
		grep -q '^gputrace: waiting for the browser' "$1" && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	url=$(sed -n 's/^gputrace: serving .* once at \(http:[^ ]*\)$/\1/p' "$1")
	base=${url%/*}
	port=${base##*:}
	[ -n "$url" ] || fail "no URL in: $(cat "$1")"
}

# 1234567 -> 1,234,567, as gputrace prints counts.
commas() {
	sed ':a;s/\B[0-9]\{3\}\>/,&/;ta' <<<"$1"
}

# finish PID WANT: wait for it and check its exit status.
finish() {
	local rc
	wait "$1"
	rc=$?
	[ "$rc" -eq "$2" ] || fail "gputrace view exited $rc, expected $2"
}

# ---- usage errors: exit 64, one line ----
expect_rc 0 "$gputrace" view --help
[ "$(head -n 1 "$tmp/out")" = "Usage: gputrace view TRACE [options]" ] ||
	fail "view --help: $(head -n 1 "$tmp/out")"
expect_rc 64 "$gputrace" view
expect_err "gputrace: view: no trace file; usage: gputrace view TRACE [--port N] [--no-open]"
expect_rc 64 "$gputrace" view run.gtrace other.gtrace
expect_err "gputrace: view: one trace file at a time ('other.gtrace' is extra)"
expect_rc 64 "$gputrace" view run.gtrace --port 65536
expect_err "gputrace: view: --port: '65536' is not valid; use a port from 0 (any free one) to 65535"
expect_rc 64 "$gputrace" view run.gtrace --port http
expect_err "gputrace: view: --port: 'http' is not valid; use a port from 0 (any free one) to 65535"
expect_rc 64 "$gputrace" view run.gtrace --timeout soon
expect_err "gputrace: view: --timeout: 'soon' is not valid; use seconds, e.g. 90, 2.5, 5m, 1h (0: wait until fetched)"
expect_rc 64 "$gputrace" view run.gtrace --open
expect_err "gputrace: view: unknown option '--open'; see 'gputrace view --help'"
expect_rc 64 "$gputrace" view run.gtrace --port
expect_err "gputrace: view: option '--port' needs a value; see 'gputrace view --help'"

# ---- input errors: 66 missing, 65 not a trace (and no export left behind) ----
expect_rc 66 "$gputrace" view missing.gtrace
expect_err "gputrace: view: missing.gtrace: No such file or directory"
echo "not a trace" >bogus.gtrace
expect_rc 65 "$gputrace" view bogus.gtrace
expect_err "gputrace: view: cannot read bogus.gtrace: not a gputrace file (bad magic)"
[ -z "$(ls bogus.pftrace* 2>/dev/null)" ] || fail "an export was left for an unreadable trace"

# ---- the export, the headers, the one fetch ----
start_view v1.err run.gtrace --port 0 --no-open -v
[ -s run.pftrace ] || fail "no run.pftrace next to the trace"
size=$(stat -c %s run.pftrace)
grep -qE '^gputrace: exported run\.pftrace \([0-9,]+ events, [0-9.]+ KiB\)$' v1.err ||
	fail "no export line: $(cat v1.err)"
grep -qxF "gputrace: open https://ui.perfetto.dev/#!/?url=http://127.0.0.1:$port/run.pftrace" v1.err ||
	fail "no UI URL: $(cat v1.err)"
[ "$url" = "http://127.0.0.1:$port/run.pftrace" ] || fail "served at $url"
grep -q 'ssh -L' v1.err && fail "an ssh line without SSH_CONNECTION"
grep -q 'opened it with' v1.err && fail "a browser was started with --no-open"

# HEAD: the exact headers, CORS for the UI's origin only.
curl -sS -I -H 'Origin: https://ui.perfetto.dev' "$url" | tr -d '\r' >head.txt
printf '%s\n' "HTTP/1.1 200 OK" "Access-Control-Allow-Origin: https://ui.perfetto.dev" \
	"X-Content-Type-Options: nosniff" "Cache-Control: no-cache" "Connection: close" \
	"Content-Type: application/octet-stream" "Content-Length: $size" "" >head.want
cmp -s head.txt head.want || fail "HEAD: [$(cat head.txt)], expected [$(cat head.want)]"
# The CORS preflight.
curl -sS -X OPTIONS -D - -o /dev/null -H 'Origin: https://ui.perfetto.dev' \
	-H 'Access-Control-Request-Method: GET' "$url" | tr -d '\r' >options.txt
grep -qx 'HTTP/1.1 204 No Content' options.txt || fail "OPTIONS: $(cat options.txt)"
grep -qx 'Access-Control-Allow-Origin: https://ui.perfetto.dev' options.txt ||
	fail "OPTIONS: $(cat options.txt)"
grep -qx 'Access-Control-Allow-Methods: GET, HEAD, OPTIONS' options.txt ||
	fail "OPTIONS: $(cat options.txt)"
# Nothing looser anywhere: one Access-Control-Allow-Origin, never '*', never echoed.
curl -sS -D - -o /dev/null -H 'Origin: http://evil.example' "$base/nothing" | tr -d '\r' >evil.txt
[ "$(grep -c '^Access-Control-Allow-Origin:' evil.txt)" -eq 1 ] &&
	grep -qx 'Access-Control-Allow-Origin: https://ui.perfetto.dev' evil.txt ||
	fail "another origin got: $(cat evil.txt)"
# Another path, another method, an oversized request.
[ "$(curl -s -o /dev/null -w '%{http_code}' "$base/etc/passwd")" = 404 ] || fail "not 404 elsewhere"
[ "$(curl -s -o /dev/null -w '%{http_code}' --path-as-is "$base/../run.gtrace")" = 404 ] ||
	fail "not 404 for ../run.gtrace"
[ "$(curl -s -o /dev/null -w '%{http_code}' -X POST -d x "$url")" = 405 ] || fail "POST not 405"
big=$(head -c 9000 /dev/zero | tr '\0' a)
[ "$(curl -s -o /dev/null -w '%{http_code}' -H "X-Big: $big" "$url")" = 431 ] ||
	fail "an oversized request was not refused with 431"
# A fetch from another origin is answered (the browser refuses it to the page) but does not
# end the serving.
curl -sS -o other.bin -H 'Origin: http://127.0.0.1:8000' "$url"
cmp -s other.bin run.pftrace || fail "the other origin's GET did not get the file"
kill -0 "$pid" 2>/dev/null || fail "gputrace view exited before the real fetch"
# The fetch: the whole file, then gputrace exits 0.
curl -sS -o got.bin -H 'Origin: https://ui.perfetto.dev' "$url"
cmp -s got.bin run.pftrace || fail "the file fetched differs from run.pftrace"
finish "$pid" 0
[ "$(tail -n 1 v1.err)" = "gputrace: the browser fetched run.pftrace; done" ] ||
	fail "last line: $(tail -n 1 v1.err)"
grep -qxF "gputrace: GET /run.pftrace from http://127.0.0.1:8000: 200, $(commas "$size") body bytes (not the fetch: not from https://ui.perfetto.dev)" v1.err ||
	fail "no verbose line for the other origin: $(cat v1.err)"
grep -qxF "gputrace: POST /run.pftrace from no origin: 405, 0 body bytes" v1.err ||
	fail "no verbose line for the POST: $(cat v1.err)"
[ ! -s v1.err.out ] || fail "view wrote on stdout: $(cat v1.err.out)"

# ---- the export is reused while it records that it is the export of this very trace,
# whole; redone when the trace changed or when it is a window's ----
before=$(stat -c '%i %Y.%y' run.pftrace)
start_view v2.err run.gtrace --port 0 --no-open
grep -qxF "gputrace: run.pftrace is the export of run.gtrace: serving it as it is" v2.err ||
	fail "not reused: $(cat v2.err)"
curl -sS -o /dev/null "$url"
finish "$pid" 0
[ "$(stat -c '%i %Y.%y' run.pftrace)" = "$before" ] || fail "the reused export was rewritten"
touch run.gtrace
start_view v3.err run.gtrace --port 0 --no-open
grep -qE '^gputrace: exported run\.pftrace ' v3.err || fail "not exported again: $(cat v3.err)"
curl -sS -o /dev/null "$url"
finish "$pid" 0
[ -z "$(ls run.pftrace.* .run.pftrace.* 2>/dev/null)" ] ||
	fail "temporary files left: $(ls run.pftrace.* .run.pftrace.* 2>/dev/null)"
# a window's export under the name view uses is not the whole trace: exported again
expect_rc 0 "$gputrace" export run.gtrace -f perfetto --from 0 --to 1ms -o run.pftrace -q
window_size=$(stat -c %s run.pftrace)
start_view v3w.err run.gtrace --port 0 --no-open
grep -qE '^gputrace: exported run\.pftrace ' v3w.err || fail "a window's export was served: $(cat v3w.err)"
curl -sS -o /dev/null "$url"
finish "$pid" 0
[ "$(stat -c %s run.pftrace)" != "$window_size" ] || fail "run.pftrace is still the window's"
# the whole trace's own export cut short (its last byte gone) is no export of it: exported again
whole_size=$(stat -c %s run.pftrace)
truncate -s -1 run.pftrace
start_view v3c.err run.gtrace --port 0 --no-open
grep -qE '^gputrace: exported run\.pftrace ' v3c.err || fail "a cut-short export was served: $(cat v3c.err)"
curl -sS -o /dev/null "$url"
finish "$pid" 0
[ "$(stat -c %s run.pftrace)" = "$whole_size" ] || fail "run.pftrace: $(stat -c %s run.pftrace) bytes, not $whole_size"
# A .pftrace is served as it is.
start_view v4.err run.pftrace --port 0 --no-open
grep -q 'exported' v4.err && fail "a .pftrace was exported: $(cat v4.err)"
curl -sS -o got4.bin "$url"
cmp -s got4.bin run.pftrace || fail "the .pftrace served differs"
finish "$pid" 0

# ---- a port in use (69), naming --port; SIGTERM (143) ----
start_view v5.err run.pftrace --port 0 --no-open
busy=$port
first=$pid
expect_rc 69 "$gputrace" view run.pftrace --port "$busy" --no-open
expect_err "gputrace: view: port $busy on 127.0.0.1 is in use (another gputrace view, or a trace_processor --httpd?); choose another with --port N (0: any free port)"
kill -TERM "$first"
finish "$first" 143
[ "$(tail -n 1 v5.err)" = "gputrace: view: stopped (Terminated) before the browser fetched run.pftrace" ] ||
	fail "last line after SIGTERM: $(tail -n 1 v5.err)"

# ---- Ctrl-C (SIGINT; background jobs start with it ignored, so restore it) ----
: >v5i.err
env --default-signal=INT "$gputrace" view run.pftrace --port 0 --no-open >/dev/null 2>v5i.err &
pid=$!
pids+=("$pid")
wait_serving v5i.err
kill -INT "$pid"
finish "$pid" 130
[ "$(tail -n 1 v5i.err)" = "gputrace: view: stopped (Interrupt) before the browser fetched run.pftrace" ] ||
	fail "last line after SIGINT: $(tail -n 1 v5i.err)"

# ---- stopped during the export: the temporary file goes, no export is left to be reused ----
"$mktrace" -o slow.gtrace --kernels 400000 --api >/dev/null || fail "mktrace slow.gtrace"
env --default-signal=INT "$gputrace" view slow.gtrace --port 0 --no-open >/dev/null 2>slow.err &
pid=$!
pids+=("$pid")
for _ in $(seq 1000); do
	compgen -G 'slow.pftrace.??????' >/dev/null && break
	[ -e slow.pftrace ] && break
	sleep 0.01
done
kill -STOP "$pid"
if [ -e slow.pftrace ]; then
	# The export outran us; what this part checks cannot be seen on this run.
	echo "note: the export of slow.gtrace finished before it could be stopped"
	kill -CONT "$pid"
	kill -TERM "$pid"
	wait "$pid"
else
	compgen -G 'slow.pftrace.??????' >/dev/null || fail "no temporary export seen"
	kill -INT "$pid"
	kill -CONT "$pid"
	finish "$pid" 130
	[ -z "$(compgen -G 'slow.pftrace*')" ] || fail "left behind: $(compgen -G 'slow.pftrace*')"
fi
rm -f slow.gtrace slow.pftrace

# ---- --timeout: 75 when nobody fetched it ----
expect_rc 75 "$gputrace" view run.pftrace --port 0 --no-open --timeout 0.2
[ "$(tail -n 1 "$tmp/err")" = "gputrace: view: nobody fetched run.pftrace within --timeout; stopped" ] ||
	fail "after --timeout: $(tail -n 1 "$tmp/err")"

# ---- $BROWSER gets the UI's URL; a browser that cannot start is not fatal ----
cat >fake-browser <<EOF
#!/bin/sh
printf '%s\n' "\$@" >"$tmp/browser-args"
EOF
chmod +x fake-browser
BROWSER="/nonexistent-browser:$tmp/fake-browser --new-tab %s" start_view v6.err run.pftrace --port 0
for _ in $(seq 100); do [ -s browser-args ] && break; sleep 0.1; done
printf '%s\n' --new-tab "https://ui.perfetto.dev/#!/?url=http://127.0.0.1:$port/run.pftrace" >args.want
cmp -s browser-args args.want || fail "the browser got [$(cat browser-args)]"
grep -qxF "gputrace: opened it with $tmp/fake-browser" v6.err || fail "no 'opened' line: $(cat v6.err)"
curl -sS -o /dev/null "$url"
finish "$pid" 0
BROWSER=/nonexistent-browser start_view v7.err run.pftrace --port 0
grep -qxF "gputrace: warning: could not start the browser (/nonexistent-browser: No such file or directory); open the URL above yourself" v7.err ||
	fail "no warning for a missing browser: $(cat v7.err)"
curl -sS -o /dev/null "$url"
finish "$pid" 0

# ---- over SSH: the ssh -L line, with the server address of SSH_CONNECTION ----
SSH_CONNECTION="192.0.2.7 50000 198.51.100.3 22" start_view v8.err run.pftrace --port 0 --no-open
grep -qxF "gputrace: over SSH: on your laptop, forward the port first: ssh -L $port:127.0.0.1:$port 198.51.100.3" v8.err ||
	fail "no ssh line: $(cat v8.err)"
curl -sS -o /dev/null "$url"
finish "$pid" 0

# ---- too large for the UI: says so with the numbers, serves nothing (69) ----
truncate -s 3G huge.pftrace
expect_rc 69 "$gputrace" view huge.pftrace --port 0 --no-open
expect_err "gputrace: view: huge.pftrace is 3.00 GiB, more than the Perfetto UI can hold in a browser (about 2.00 GiB); open it with Perfetto's trace_processor --httpd instead (https://perfetto.dev/docs/visualization/large-traces)"

# ---- a trace estimated too large for the UI (GPUTRACE_UI_LIMIT stands for the 2 GB): no
# export, the windows that fit as view commands, 69; --first-steps and a window are served ----
"$mktrace" -o steps.gtrace --kernels 20000 --api --processes 2 --names 50 --steps \
	--chunk-bytes 16384 >/dev/null || fail "mktrace could not write steps.gtrace"
GPUTRACE_UI_LIMIT=400K expect_rc 69 "$gputrace" view steps.gtrace --port 0 --no-open
err_has_line "gputrace: warning: steps.gtrace as protobuf: about 2.34 MiB (40,264 records at about 61 bytes each), more than the Perfetto UI holds (about 400.00 KiB); it would open only in trace_processor"
err_has_line "gputrace:   the first 10 steps: gputrace view steps.gtrace --first-steps 10  (about 109.55 KiB)"
err_has_line "gputrace:   the first 13ms: gputrace view steps.gtrace --from 0 --to +13ms  (about 281.29 KiB)"
err_has_line "gputrace:   all of it, in pieces that each open: gputrace export steps.gtrace -f perfetto --max-size 1M, then view each piece"
err_has_line "gputrace: view: steps.gtrace is too large to view whole; view a window of it (above), or open it with Perfetto's trace_processor --httpd"
[ ! -e steps.pftrace ] || fail "a trace too large was exported"
GPUTRACE_UI_LIMIT=400K start_view v9.err steps.gtrace --first-steps 10 --port 0 --no-open
grep -qxF "gputrace: window: the first 10 steps (step 0..9: 20 ranges in 2 processes), 0.000 s to 0.005 s (--from @1000000000000 --to @1000005496824)" v9.err ||
	fail "--first-steps: $(cat v9.err)"
[ "$url" = "$base/steps.window.pftrace" ] || fail "--first-steps served $url"
curl -sS -o steps.bin "$url"
cmp -s steps.bin steps.window.pftrace || fail "--first-steps: the file fetched differs"
finish "$pid" 0
GPUTRACE_UI_LIMIT=400K start_view v10.err steps.gtrace --from 5ms --to +2ms --rank 1 --port 0 --no-open
grep -qxF "gputrace: window: 0.005 s to 0.007 s" v10.err || fail "window: $(cat v10.err)"
curl -sS -o /dev/null "$url"
finish "$pid" 0
# a window after the trace's end selects nothing: 64, and where the trace lies (cli.md, "Time")
rm -f steps.window.pftrace
expect_rc 64 "$gputrace" view steps.gtrace --from 1s --port 0 --no-open
expect_err "gputrace: view: --from 1s selects nothing: it is after steps.gtrace, which runs from 2024-05-01T12:00:00.000000000Z (0.000 s) to 2024-05-01T12:00:00.662858760Z (0.663 s)"
[ ! -e steps.window.pftrace ] || fail "a window that selects nothing was exported"
expect_rc 64 "$gputrace" view steps.gtrace --first-steps 0
expect_err "gputrace: view: --first-steps: '0' is not valid; use a number of steps, e.g. 10"
expect_rc 64 "$gputrace" view steps.gtrace --first-steps 3 --from 1
expect_err "gputrace: view: --first-steps and --from/--to/--nvtx both choose the time; give one of them"
expect_rc 64 "$gputrace" view run.gtrace --first-steps 3 --port 0 --no-open
expect_err "gputrace: view: --first-steps: run.gtrace has no steps (NVTX ranges named ProfilerStep#N, step, train_step or iteration, as docs/exporters.md says); choose a window with --from and --to"
expect_rc 64 "$gputrace" view run.pftrace --from 1
expect_err "gputrace: view: run.pftrace is an export already; a window needs the .gtrace"

# ---- gputrace run --view: the same after the run ----
touch libgputrace-inject.so
expect_rc 64 "$gputrace" run --view=x -- "$session_child" 1
expect_err "gputrace: run: --view: 'x' is not valid; use a port from 0 (any free one) to 65535"
: >run.err
GPUTRACE_INJECT_LIB=$tmp/libgputrace-inject.so "$gputrace" run -q -o traced --view=0 -- \
	"$session_child" 0 >run.out 2>run.err &
pid=$!
pids+=("$pid")
wait_serving run.err
[ "$url" = "http://127.0.0.1:$port/traced.pftrace" ] || fail "run --view served $url"
curl -sS -o traced.bin "$url"
cmp -s traced.bin traced.pftrace || fail "run --view: the file fetched differs"
finish "$pid" 0
# A port in use is 69 when the program succeeded, and names `gputrace view --port`; a
# failing program's own status wins.
start_view v9.err run.pftrace --port 0 --no-open
GPUTRACE_INJECT_LIB=$tmp/libgputrace-inject.so expect_rc 1 "$gputrace" run -q -f -o traced \
	--view="$port" -- "$session_child" 1
GPUTRACE_INJECT_LIB=$tmp/libgputrace-inject.so expect_rc 69 "$gputrace" run -q -f -o traced \
	--view="$port" -- "$session_child" 0
err_has_line "gputrace: run: port $port on 127.0.0.1 is in use (another gputrace view, or a trace_processor --httpd?); serve the trace on another with 'gputrace view traced.gtrace --port N'"
curl -sS -o /dev/null "$url"
finish "$pid" 0

# ---- run --view: the port in one word; nothing recorded, nothing served ----
expect_rc 64 "$gputrace" run --view 9001
expect_err "gputrace: run: --view takes its port as --view=9001 (one word); '9001' would be run as the program"
expect_rc 69 "$gputrace" run --view=0 -q -f -o nothing -- /bin/true
expect_err "gputrace: run: nothing to view: nothing.gtrace holds no GPU work, API call or NVTX range ('gputrace info nothing.gtrace' shows what it holds; 'gputrace doctor' why tracing may not work here)"

# ---- --first-steps beyond the steps there are: said, and the window holds them all ----
cp "$(dirname "$0")/data/pytorch-train.gtrace" steps20.gtrace
expect_rc 75 "$gputrace" view steps20.gtrace --first-steps 500 --port 0 --no-open --timeout 0.05
err_has_line "gputrace: warning: view: --first-steps 500: steps20.gtrace has 20 steps; the window holds them all"
err_matches "^gputrace: window: the first 20 steps \(step 0\.\.19: 20 ranges in 1 process\)"

cli_done cli-view
