# Helpers shared by the CLI test scripts (sourced, not run): each check that fails prints one
# line and is counted; cli_done ends the script with the verdict.
# The caller sets $tmp (a scratch directory) before using them.
failures=0

fail() {
	echo "FAIL: $*" >&2
	failures=$((failures + 1))
}

# expect_rc WANT CMD...: run CMD with stdout and stderr in $tmp/out and $tmp/err.
expect_rc() {
	local want=$1 rc
	shift
	"$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ "$rc" -eq "$want" ] || fail "$* exited $rc, expected $want; stderr: $(cat "$tmp/err")"
}

# The whole of stderr / stdout of the last expect_rc, exactly.
expect_err() {
	local got
	got=$(cat "$tmp/err")
	[ "$got" = "$1" ] || fail "stderr was [$got], expected [$1]"
}

expect_out() {
	local got
	got=$(cat "$tmp/out")
	[ "$got" = "$1" ] || fail "stdout was [$got], expected [$1]"
}

# One whole line of stderr / stdout.
err_has_line() {
	grep -qxF -- "$1" "$tmp/err" || fail "no line [$1] in stderr: $(cat "$tmp/err")"
}

out_has_line() {
	grep -qxF -- "$1" "$tmp/out" || fail "no line [$1] in stdout: $(cat "$tmp/out")"
}

# An extended regular expression that some line of stderr matches.
err_matches() {
	grep -qE -- "$1" "$tmp/err" || fail "stderr [$(cat "$tmp/err")] does not match [$1]"
}

# Wait for a file to appear, however long that takes on a loaded machine; with a pid, fail
# as soon as that process has ended without making it. (A hang is the test's timeout.)
wait_for() {
	while [ ! -e "$1" ]; do
		if [ -n "${2:-}" ] && ! kill -0 "$2" 2>/dev/null; then
			[ -e "$1" ] && return 0
			fail "$1 never appeared (process $2 ended)"
			return 1
		fi
		sleep 0.05
	done
}

# Exit with the verdict: 1 if any check failed.
cli_done() {
	if [ "$failures" -ne 0 ]; then
		echo "$failures check(s) failed" >&2
		exit 1
	fi
	echo "$1: all checks passed"
	exit 0
}
