#!/usr/bin/env bash
# The one output path, command by command (src/output/output.c under each): export in every
# format, stats -o, diff -o, advise -o, report -o, sql --db, merge -o, view's export, run -o
# and run --export.
# An output that is an input - the trace itself, ./T, its absolute path, a hard link, a
# symlink - is refused with 64 and the input left byte-identical; a FIFO and a device node are
# refused (73) and left as they were; a symlink is written through and stays a link; SIGTERM
# in the middle of every writing command, and a file-size limit with SIGXFSZ at its default
# and ignored, leave nothing under the final name and no temporary. Tests wait for the
# temporary to exist (and hold bytes, where the command writes while it reads) before the
# signal, never for a time.
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
# run traces /bin/sh programs that never initialize CUDA: the injection library is a
# placeholder file the driver never opens (as in cli-run.sh)
unset CUDA_INJECTION64_PATH NVTX_INJECTION64_PATH GPUTRACE_SESSION GPUTRACE_TRACE GPUTRACE_API \
	GPUTRACE_BUFFER_SIZE GPUTRACE_FLUSH_MS GPUTRACE_CAPTURE_RANGE GPUTRACE_GRAPH \
	GPUTRACE_WRITE_QUEUE GPUTRACE_WRITE_TIMEOUT
mkdir lib
: >lib/libgputrace-inject.so
export GPUTRACE_INJECT_LIB="$tmp/lib/libgputrace-inject.so"
# view VIEWARGS...: view without a browser; it exits 75 once it serves (nobody fetches)
view() { "$gputrace" view "$@" --no-open --port 0 --timeout 0.01; }

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
	expect_rc 64 "$gputrace" advise U.gtrace T.gtrace -o "$name"
	err_matches "^gputrace: advise: the output .* is the input T\.gtrace \(the same file\)"
	expect_rc 64 "$gputrace" report U.gtrace T.gtrace -o "$name"
	err_matches "^gputrace: report: the output .* is the input T\.gtrace \(the same file\)"
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

# view's export is named from the trace: TRACE.pftrace (a window's TRACE.window.pftrace) that
# is the trace by a hard link or a symlink, whichever way the trace is named
what="the output T.pftrace is the input T.gtrace (the same file): choose another output name"
ln T.gtrace T.pftrace
expect_rc 64 view T.gtrace
expect_err "gputrace: view: cannot write T.pftrace next to the trace ($what); export it elsewhere with 'gputrace export T.gtrace -f perfetto -o DIR/NAME.pftrace' and view that file"
rm T.pftrace
ln -s T.gtrace T.pftrace
for name in T.gtrace ./T.gtrace "$tmp/T.gtrace"; do
	expect_rc 64 view "$name"
	err_matches "^gputrace: view: cannot write .*T\.pftrace next to the trace \(the output .*T\.pftrace is the input .*T\.gtrace \(the same file\)"
done
rm T.pftrace
ln -s T.gtrace T.window.pftrace
expect_rc 64 view T.gtrace --first-steps 1
err_matches "^gputrace: view: cannot write T\.window\.pftrace next to the trace \(the output T\.window\.pftrace is the input T\.gtrace \(the same file\)"
rm T.window.pftrace
cmp -s T.gtrace T.orig || fail "the trace changed under view's refused exports"
# run --export: TRACE with the format's extension, a symlink to the trace run just wrote
for name in R ./R2 "$tmp/R3"; do
	ln -s "$(basename "$name").gtrace" "$name.json"
	expect_rc 64 "$gputrace" run -q -o "$name" --export chrome -- true
	err_has_line "gputrace: run: --export: the output $name.json is the input $name.gtrace (the same file): choose another output name"
	[ -L "$name.json" ] || fail "run --export replaced the symlink $name.json"
	expect_rc 0 "$gputrace" info "$name.gtrace"
done
rm -f R.* R2.* R3.*

# ---- a FIFO and a device node are refused and left as they were, by every command ----
# make_node KIND NAME: a FIFO, or the character device 1:3 (/dev/null's numbers)
make_node() {
	rm -f "$2"
	if [ "$1" = fifo ]; then mkfifo "$2"; else mknod "$2" c 1 3; fi
}
# is_node KIND NAME...: each is still that node
is_node() {
	local k=$1 n
	shift
	for n in "$@"; do
		if [ "$k" = fifo ]; then
			[ -p "$n" ] || fail "the FIFO $n was replaced: $(ls -l "$n")"
		else
			[ -c "$n" ] || fail "the device node $n was replaced: $(ls -l "$n")"
		fi
	done
}
kinds=(fifo)
if mknod probe c 1 3 2>/dev/null; then
	rm probe
	kinds+=(dev)
else
	echo "device nodes: mknod refused (not root): checked with FIFOs and /dev/null only"
fi
only="an output is written only as a regular file (or - for standard output)"
cp T.gtrace V.gtrace
for kind in "${kinds[@]}"; do
	is="a FIFO"
	[ "$kind" = dev ] && is="a character device"
	make_node "$kind" node
	formats=(chrome perfetto csv)
	[ "$have_sqlite" = 1 ] && formats+=(sqlite)
	for f in "${formats[@]}"; do
		expect_rc 73 "$gputrace" export T.gtrace -f "$f" -o node -q
		expect_err "gputrace: export: node is $is; $only"
	done
	expect_rc 73 "$gputrace" stats T.gtrace -o node
	expect_err "gputrace: stats: node is $is; $only"
	expect_rc 73 "$gputrace" diff U.gtrace T.gtrace -o node
	expect_err "gputrace: diff: node is $is; $only"
	expect_rc 73 "$gputrace" advise T.gtrace -o node
	expect_err "gputrace: advise: node is $is; $only"
	expect_rc 73 "$gputrace" report T.gtrace -o node
	expect_err "gputrace: report: node is $is; $only"
	if [ "$have_sqlite" = 1 ]; then
		# refused before SQLite opens it (a FIFO would block that open)
		expect_rc 73 "$gputrace" sql T.gtrace --db node "SELECT 1"
		expect_err "gputrace: sql: node is $is; $only"
	fi
	expect_rc 73 "$gputrace" merge -q -o node U.gtrace T.gtrace
	expect_err "gputrace: merge: node is $is; $only"
	make_node "$kind" V.pftrace
	expect_rc 73 view V.gtrace
	expect_err "gputrace: view: cannot write V.pftrace next to the trace (V.pftrace is $is; $only); export it elsewhere with 'gputrace export V.gtrace -f perfetto -o DIR/NAME.pftrace' and view that file"
	make_node "$kind" RN.gtrace
	expect_rc 73 "$gputrace" run -q -f -o RN -- true
	expect_err "gputrace: run: RN.gtrace is $is; $only"
	make_node "$kind" RX.json
	expect_rc 73 "$gputrace" run -q -o RX --export chrome -- true
	expect_err "gputrace: run: --export: RX.json is $is; $only"
	is_node "$kind" node V.pftrace RN.gtrace RX.json
	rm -f node V.pftrace RN.gtrace RX.json RX.gtrace
done
expect_rc 73 "$gputrace" export T.gtrace -f chrome -o /dev/null -q
expect_rc 73 "$gputrace" stats T.gtrace -o /dev/null
[ -c /dev/null ] || fail "/dev/null is no longer a character device"

# ---- a symlink is written through to its target, by every command; the link stays ----
mkdir real
# through LINK TARGET: LINK is still a link and TARGET has bytes
through() {
	[ -L "$1" ] || fail "$1 is no longer a link: $(ls -l "$1")"
	[ -s "$2" ] || fail "$2 (the target of $1) was not written"
}
for f in chrome perfetto sqlite; do
	[ "$f" = sqlite ] && [ "$have_sqlite" = 0 ] && continue
	: >"real/t.$f"
	ln -s "real/t.$f" "link.$f"
	expect_rc 0 "$gputrace" export T.gtrace -f "$f" -o "link.$f" -q
	through "link.$f" "real/t.$f"
done
for c in stats diff advise report; do
	: >"real/$c.txt"
	ln -s "real/$c.txt" "link-$c.txt"
done
expect_rc 0 "$gputrace" stats T.gtrace -o link-stats.txt
through link-stats.txt real/stats.txt
expect_rc 0 "$gputrace" diff U.gtrace T.gtrace -o link-diff.txt
through link-diff.txt real/diff.txt
expect_rc 0 "$gputrace" advise T.gtrace -o link-advise.txt
through link-advise.txt real/advise.txt
expect_rc 0 "$gputrace" report T.gtrace -o link-report.txt
through link-report.txt real/report.txt
if [ "$have_sqlite" = 1 ]; then
	: >real/db.sqlite
	ln -s real/db.sqlite link-db.sqlite
	expect_rc 0 "$gputrace" sql T.gtrace --db link-db.sqlite -q "SELECT count(*) FROM TARGET_INFO_GPU"
	through link-db.sqlite real/db.sqlite
fi
: >real/m.gtrace
ln -s real/m.gtrace link-m.gtrace
expect_rc 0 "$gputrace" merge -q -o link-m.gtrace U.gtrace T.gtrace
through link-m.gtrace real/m.gtrace
expect_rc 0 "$gputrace" info real/m.gtrace
: >real/w.pftrace
ln -s real/w.pftrace V.pftrace
expect_rc 75 view V.gtrace
through V.pftrace real/w.pftrace
: >real/rl.json
ln -s real/rl.json RL.json
expect_rc 0 "$gputrace" run -q -o RL --export chrome -- true
through RL.json real/rl.json
left=$(ls -a . real | grep -E '\.gt-|\.tmp-' || true)
[ -z "$left" ] || fail "temporaries left beside the links or their targets: $left"
rm -f V.pftrace

# ---- interrupted: SIGTERM while the command writes, for every one that writes ----
"$mktrace" -o big.gtrace --kernels 3000000 --api --memcpy >/dev/null ||
	fail "mktrace could not write big.gtrace"
cp big.gtrace big2.gtrace
cp big.gtrace intv.gtrace
# first_match GLOB: the first file that matches, hidden ones too
first_match() {
	local f
	for f in $1; do
		[ -e "$f" ] && { echo "$f"; return 0; }
	done
	return 1
}
# interrupt LABEL FINAL TEMPORARY BYTES CMD...: run CMD, wait until its temporary (a glob)
# exists, and with BYTES=1 holds bytes, then SIGTERM it: it dies of it (143), leaving nothing
# under FINAL and no temporary
interrupt() {
	local label=$1 final=$2 glob=$3 bytes=$4 pid rc t left
	shift 4
	env --default-signal=TERM "$@" >/dev/null 2>"$tmp/err" &
	pid=$!
	while ! { t=$(first_match "$glob") && { [ "$bytes" = 0 ] || [ -s "$t" ]; }; }; do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.01
	done
	kill -TERM "$pid" 2>/dev/null
	wait "$pid"
	rc=$?
	[ "$rc" = 143 ] || fail "$label: SIGTERM: exit $rc, expected 143 (it ended first?): $(cat "$tmp/err")"
	[ ! -e "$final" ] || fail "$label: SIGTERM left $final"
	left=$(first_match "$glob") && fail "$label: SIGTERM left the temporary $left"
}
formats=(chrome perfetto csv)
[ "$have_sqlite" = 1 ] && formats+=(sqlite)
for f in "${formats[@]}"; do
	out=int.$f final=int.$f
	[ "$f" = csv ] && out=int.csv final=int-kernel.csv
	interrupt "export -f $f" "$final" ".$final.gt-*" 1 \
		"$gputrace" export big.gtrace -f "$f" -o "$out" -q
done
[ "$have_sqlite" = 1 ] &&
	interrupt "sql --db" int-sql.sqlite ".int-sql.sqlite.gt-*" 1 \
		"$gputrace" sql big.gtrace --db int-sql.sqlite -q "SELECT 1"
# stats and diff write their report once the traces are read; the temporary is there while
# they are read
interrupt "stats -o" int-stats.txt ".int-stats.txt.gt-*" 0 \
	"$gputrace" stats big.gtrace big2.gtrace -o int-stats.txt
interrupt "diff -o" int-diff.txt ".int-diff.txt.gt-*" 0 \
	"$gputrace" diff big.gtrace big2.gtrace -o int-diff.txt
interrupt "advise -o" int-advise.txt ".int-advise.txt.gt-*" 0 \
	"$gputrace" advise big.gtrace -o int-advise.txt
interrupt "report -o" int-report.html ".int-report.html.gt-*" 0 \
	"$gputrace" report big.gtrace -o int-report.html
# merge: the trace writer's own temporary, OUT.tmp-PID
interrupt "merge -o" int-merge.gtrace "int-merge.gtrace.tmp-*" 1 \
	"$gputrace" merge -q -o int-merge.gtrace big.gtrace T.gtrace
interrupt "view" intv.pftrace ".intv.pftrace.gt-*" 1 \
	"$gputrace" view intv.gtrace --no-open --port 0
left=$(ls -a | grep -E '^\.int|^int' | grep -v '^intv\.gtrace$' || true)
[ -z "$left" ] || fail "SIGTERM left: $left"

# ---- a file-size limit: SIGXFSZ at its default (the CLI dies of it, its temporaries
# removed first: 153) and ignored (the write fails: 74, with why) ----
# limited LABEL FINAL BLOCKS MESSAGE CMD...: CMD under ulimit -f BLOCKS, both ways; MESSAGE
# (an extended regular expression) is a line of its standard error when SIGXFSZ is ignored
limited() {
	local label=$1 final=$2 blocks=$3 msg=$4 rc left how
	shift 4
	for how in default ignore; do
		(ulimit -f "$blocks"; exec env --$how-signal=XFSZ "$@") >/dev/null 2>"$tmp/err"
		rc=$?
		if [ "$how" = default ]; then
			[ "$rc" = 153 ] || fail "$label: file-size limit: exit $rc, expected 153 (SIGXFSZ): $(cat "$tmp/err")"
		else
			[ "$rc" = 74 ] || fail "$label: file-size limit, SIGXFSZ ignored: exit $rc, expected 74: $(cat "$tmp/err")"
			err_matches "$msg"
		fi
		[ ! -e "$final" ] || fail "$label: SIGXFSZ $how left $final"
		left=$(ls -a | grep -E '^\.?lim' | grep -v '^lim.*\.gtrace$' || true)
		[ -z "$left" ] || fail "$label: SIGXFSZ $how left: $left"
	done
}
for f in chrome perfetto csv; do
	out=lim.$f final=lim.$f
	[ "$f" = csv ] && out=lim.csv final=lim-kernel.csv
	limited "export -f $f" "$final" 1000 "^gputrace: export to $out failed: .*File too large$" \
		"$gputrace" export big.gtrace -f "$f" -o "$out" -q
done
if [ "$have_sqlite" = 1 ]; then
	limited "export -f sqlite" lim.sqlite 1000 \
		'^gputrace: export to lim\.sqlite failed: .*disk I/O error$' \
		"$gputrace" export big.gtrace -f sqlite -o lim.sqlite -q
	limited "sql --db" lim-sql.sqlite 1000 \
		'^gputrace: sql: export to lim-sql\.sqlite failed: .*disk I/O error$' \
		"$gputrace" sql big.gtrace --db lim-sql.sqlite -q "SELECT 1"
fi
limited "stats -o" lim-stats.txt 1 '^gputrace: stats: lim-stats\.txt: could not write the report$' \
	"$gputrace" stats big.gtrace -o lim-stats.txt
limited "diff -o" lim-diff.txt 1 \
	'^gputrace: diff: lim-diff\.txt: could not write the comparison$' \
	"$gputrace" diff big.gtrace T.gtrace -o lim-diff.txt
limited "advise -o" lim-advise.txt 1 \
	'^gputrace: advise: lim-advise\.txt: could not write the findings$' \
	"$gputrace" advise T.gtrace -o lim-advise.txt
limited "report -o" lim-report.html 1 \
	'^gputrace: report: lim-report\.html: could not write the page$' \
	"$gputrace" report T.gtrace -o lim-report.html
limited "merge -o" lim-merge.gtrace 1000 '^gputrace: merge: lim-merge\.gtrace: File too large$' \
	"$gputrace" merge -q -o lim-merge.gtrace big.gtrace T.gtrace
cp big.gtrace limv.gtrace
limited "view" limv.pftrace 1000 \
	'^gputrace: export to limv\.pftrace failed: writing limv\.pftrace: File too large$' \
	"$gputrace" view limv.gtrace --no-open --port 0
rm -f limv.gtrace

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
