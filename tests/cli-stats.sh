#!/usr/bin/env bash
# CLI test for `gputrace stats`: option errors (exit 64 with their message), a missing (66)
# and an unreadable (65) trace, and, given tests/mktrace, the reports on a synthetic trace.
# Usage: cli-stats.sh PATH/TO/gputrace [PATH/TO/mktrace]
set -u
gputrace=$1
mktrace=${2:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/cli-common.sh"

expect_empty_out() {
	[ ! -s "$tmp/out" ] || fail "unexpected output: $(head -c 500 "$tmp/out")"
}

# Help and usage errors.
expect_rc 0 "$gputrace" stats --help
out_has_line "Usage: gputrace stats [options] FILE"
expect_rc 64 "$gputrace" stats
expect_err "gputrace: stats: which trace? usage: gputrace stats [options] FILE"
expect_rc 64 "$gputrace" stats --bogus x.gtrace
expect_err "gputrace: stats: unknown option '--bogus'; see 'gputrace stats --help'"
expect_rc 64 "$gputrace" stats --report kernel x.gtrace
expect_err "gputrace: stats: unknown report 'kernel'; choose from kernels, api, memcpy, memset, nvtx, memory, errors, losses, all"
expect_rc 64 "$gputrace" stats -r kernels, x.gtrace
expect_err "gputrace: stats: unknown report 'kernels,'; choose from kernels, api, memcpy, memset, nvtx, memory, errors, losses, all"
expect_rc 64 "$gputrace" stats --format xml x.gtrace
expect_err "gputrace: stats: unknown format 'xml'; choose table, csv or json"
expect_rc 64 "$gputrace" stats --limit ten x.gtrace
expect_err "gputrace: stats: --limit takes a number of rows, not 'ten'"
expect_rc 64 "$gputrace" stats a.gtrace b.gtrace
expect_err "gputrace: stats: unexpected argument 'b.gtrace'; it takes one trace file"
expect_rc 64 "$gputrace" stats x.gtrace --format
expect_err "gputrace: stats: option '--format' needs a value; see 'gputrace stats --help'"
expect_empty_out

# Missing and unreadable traces.
expect_rc 66 "$gputrace" stats "$tmp/none.gtrace"
grep -q "^gputrace: stats: cannot read $tmp/none.gtrace: " "$tmp/err" ||
	fail "missing file: stderr was [$(cat "$tmp/err")]"
printf 'this is not a trace, just text long enough to hold a header and more...\n%.0s' \
	$(seq 20) >"$tmp/text.gtrace"
expect_rc 65 "$gputrace" stats "$tmp/text.gtrace"
grep -q "^gputrace: stats: cannot read $tmp/text.gtrace: " "$tmp/err" ||
	fail "text file: stderr was [$(cat "$tmp/err")]"
: >"$tmp/empty.gtrace"
expect_rc 65 "$gputrace" stats "$tmp/empty.gtrace"
expect_empty_out

# A synthetic trace: 3000 kernels of 12 names in 2 processes, API records, copies, losses.
if [ -n "$mktrace" ]; then
	"$mktrace" -o "$tmp/t.gtrace" --kernels 3000 --names 12 --processes 2 --api \
		--memcpy --losses 5 --seed 7 >/dev/null 2>"$tmp/err" ||
		fail "mktrace failed: $(cat "$tmp/err")"
fi

# Output file: the format follows the extension, and a bad directory is exit 73.
if [ -f "$tmp/t.gtrace" ]; then
	expect_rc 0 "$gputrace" stats -r losses -o "$tmp/l.csv" "$tmp/t.gtrace"
	expect_empty_out
	head -n 2 "$tmp/l.csv" >"$tmp/out"
	out_has_line "# losses"
	out_has_line "source,records,detail"
	expect_rc 73 "$gputrace" stats -o "$tmp/no/such/dir/x.csv" "$tmp/t.gtrace"
fi

cli_done cli-stats
