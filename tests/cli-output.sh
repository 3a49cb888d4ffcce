#!/usr/bin/env bash
# The one output path, command by command (src/output/output.c under each): an output that is
# an input - the trace itself, ./T, its absolute path, a hard link, a symlink - is refused
# with 64 and the input left byte-identical; a FIFO and a device node are refused and left as
# they were; a symlink is written through; SIGTERM in the middle of every format's export, and
# a file-size limit with SIGXFSZ at its default and ignored, leave nothing under the final
# name and no temporary. Tests wait for the temporary to hold bytes before the signal, never
# for a time.
# Usage: cli-output.sh GPUTRACE MKTRACE
set -u
gputrace=$(realpath "$1")
mktrace=$(realpath "$2")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=cli-common.sh
. "$(dirname "$0")/cli-common.sh"
data=$(cd "$(dirname "$0")/data" && pwd)
cd "$tmp" || exit 1
have_sqlite=0
"$gputrace" export --help | grep -q '^  sqlite ' && have_sqlite=1

cp "$data/ddp-rank0.gtrace" T.gtrace
cp "$data/ddp-rank1.gtrace" U.gtrace
cp T.gtrace T.orig
ln T.gtrace hard.gtrace
ln -s T.gtrace soft.gtrace
mkdir sub

# ---- the input under every name, for every command that writes ----
names=(T.gtrace ./T.gtrace "$tmp/T.gtrace" hard.gtrace soft.gtrace sub/../T.gtrace)
formats=(chrome perfetto)
[ "$have_sqlite" = 1 ] && formats+=(sqlite)
for name in "${names[@]}"; do
	for f in "${formats[@]}"; do
		expect_rc 64 "$gputrace" export T.gtrace -f "$f" -o "$name" -q
		err_matches "^gputrace: export: the output .* is the input T\.gtrace \(the same file\): choose another output name$"
	done
	expect_rc 64 "$gputrace" stats T.gtrace -o "$name"
	err_matches "^gputrace: stats: the output .* is the input T\.gtrace \(the same file\)"
	expect_rc 64 "$gputrace" diff U.gtrace T.gtrace -o "$name"
	err_matches "^gputrace: diff: the output .* is the input T\.gtrace \(the same file\)"
	expect_rc 64 "$gputrace" merge -q -o "$name" U.gtrace T.gtrace
	err_matches "^gputrace: merge: the output .* is the input T\.gtrace \(the same file\)"
	if [ "$have_sqlite" = 1 ]; then
		expect_rc 64 "$gputrace" sql T.gtrace --db "$name" "SELECT 1"
		err_matches "^gputrace: sql: the output .* is the input T\.gtrace \(the same file\)"
	fi
done
cmp -s T.gtrace T.orig || fail "the trace changed under the refused outputs"
[ -L soft.gtrace ] || fail "the symlink soft.gtrace was replaced"
# csv names its files from OUT: OUT-kernel.csv is the trace's hard link here
ln T.gtrace tab-kernel.csv
expect_rc 64 "$gputrace" export T.gtrace -f csv -o tab.csv -q
err_matches "^gputrace: export to tab\.csv failed: the output tab-kernel\.csv is the input T\.gtrace \(the same file\)"
[ -z "$(ls tab-*.csv .tab-* 2>/dev/null | grep -v '^tab-kernel.csv$')" ] ||
	fail "csv left files beside the refused one: $(ls -a)"
cmp -s T.gtrace T.orig || fail "the trace changed under csv's refused output"

# ---- a FIFO and a device node are refused and left as they were ----
mkfifo fifo
for f in chrome perfetto; do
	expect_rc 73 "$gputrace" export T.gtrace -f "$f" -o fifo -q
	expect_err "gputrace: export: fifo is a FIFO; an output is written only as a regular file (or - for standard output)"
done
expect_rc 73 "$gputrace" stats T.gtrace -o fifo
[ -p fifo ] || fail "the FIFO was replaced"
if mknod null c 1 3 2>/dev/null; then
	expect_rc 73 "$gputrace" export T.gtrace -f perfetto -o null -q
	expect_err "gputrace: export: null is a character device; an output is written only as a regular file (or - for standard output)"
	[ -c null ] || fail "the device node was replaced"
else
	echo "device node: not root, mknod refused; checked with /dev/null only"
fi
expect_rc 73 "$gputrace" export T.gtrace -f chrome -o /dev/null -q
[ -c /dev/null ] || fail "/dev/null is no longer a character device"

# ---- a symlink is written through to its target; the link stays ----
mkdir real
: >real/t.json
ln -s real/t.json link.json
expect_rc 0 "$gputrace" export T.gtrace -f chrome -o link.json -q
[ -L link.json ] && [ -s real/t.json ] || fail "link.json: $(ls -l link.json real)"

# ---- interrupted: SIGTERM while the temporary grows, for every format ----
"$mktrace" -o big.gtrace --kernels 3000000 --api --memcpy >/dev/null ||
	fail "mktrace could not write big.gtrace"
# the temporary of final name $1: .NAME.gt-XXXXXX beside it
temporary() {
	local t
	for t in ."$1".gt-*; do
		[ -e "$t" ] && { echo "$t"; return 0; }
	done
	return 1
}
formats=(chrome perfetto csv)
[ "$have_sqlite" = 1 ] && formats+=(sqlite)
for f in "${formats[@]}"; do
	out=int.$f final=int.$f
	[ "$f" = csv ] && out=int.csv final=int-kernel.csv
	env --default-signal=TERM "$gputrace" export big.gtrace -f "$f" -o "$out" -q &
	pid=$!
	# the event: the file being written has bytes (a temporary, beside the final name)
	while ! { t=$(temporary "$final") && [ -s "$t" ]; }; do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.01
	done
	kill -TERM "$pid" 2>/dev/null
	wait "$pid"
	rc=$?
	[ "$rc" = 143 ] || fail "$f: SIGTERM: exit $rc, expected 143 (the export ended first?)"
	[ ! -e "$final" ] || fail "$f: SIGTERM left $final"
	left=$(ls -a | grep -E "^\.int[.-]" || true)
	[ -z "$left" ] || fail "$f: SIGTERM left temporaries: $left"
done

# ---- a file-size limit: SIGXFSZ at its default (the CLI dies of it, its temporaries
# removed first) and ignored (the write fails: 74) ----
for f in chrome perfetto csv; do
	out=lim.$f final=lim.$f
	[ "$f" = csv ] && out=lim.csv final=lim-kernel.csv
	(ulimit -f 1000; exec env --default-signal=XFSZ "$gputrace" export big.gtrace -f "$f" -o "$out" -q) 2>"$tmp/err"
	rc=$?
	[ "$rc" = 153 ] || fail "$f: file-size limit: exit $rc, expected 153 (SIGXFSZ): $(cat "$tmp/err")"
	[ ! -e "$final" ] || fail "$f: SIGXFSZ left $final"
	left=$(ls -a | grep -E "^\.lim[.-]" || true)
	[ -z "$left" ] || fail "$f: SIGXFSZ left temporaries: $left"
	(ulimit -f 1000; exec env --ignore-signal=XFSZ "$gputrace" export big.gtrace -f "$f" -o "$out" -q) 2>"$tmp/err"
	rc=$?
	[ "$rc" = 74 ] || fail "$f: file-size limit, SIGXFSZ ignored: exit $rc, expected 74: $(cat "$tmp/err")"
	grep -q 'File too large' "$tmp/err" || fail "$f: no 'File too large' in: $(cat "$tmp/err")"
	[ ! -e "$final" ] || fail "$f: EFBIG left $final"
	left=$(ls -a | grep -E "^\.lim[.-]" || true)
	[ -z "$left" ] || fail "$f: EFBIG left temporaries: $left"
done

# ---- several files: a second CSV export keeps none of the first one's ----
"$mktrace" -o small.gtrace --kernels 10 --api >/dev/null
expect_rc 0 "$gputrace" export T.gtrace -f csv -o u.csv -q
[ -f u-kernel.csv ] || fail "u-kernel.csv was not written"
expect_rc 0 "$gputrace" export small.gtrace -f csv -o u.csv
[ "$(tail -n +2 u-kernel.csv | wc -l)" = 10 ] || fail "u-kernel.csv: $(wc -l <u-kernel.csv) lines"
[ ! -e u-memcpy.csv ] || fail "the first export's u-memcpy.csv was kept"
err_matches '^gputrace: wrote [0-9]+ files \([0-9,]+ events, .+\):$'
err_has_line "gputrace:   u-kernel.csv"
grep -q 'wrote u\.csv' "$tmp/err" && fail "the closing line names u.csv, which does not exist"

cli_done cli-output
