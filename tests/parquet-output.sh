#!/bin/bash
# The Parquet export's output folder (src/output, docs/cli.md "What every command keeps to"):
# refused over the input, a file, standard output, or a folder holding other files, which
# is left as it was; an export killed mid-way (SIGXFSZ: a file-size limit below a table's
# size) leaves neither the final name nor a temporary; a second export replaces the first.
# Usage: parquet-output.sh GPUTRACE TRACE
set -u
G=$(realpath "$1")
T=$(realpath "$2")
d=$(mktemp -d /tmp/gt-pqout-XXXXXX)
trap 'rm -rf "$d"' EXIT
mkdir "$d/w"
cp "$T" "$d/w/in.gtrace"
cd "$d/w" || exit 1
fail=0
expect() { # expect WANT_RC WANT_STDERR_PART ("": nothing) -- command...
	local want=$1 msg=$2 rc
	shift 3
	"$@" 2>"$d/err" >/dev/null
	rc=$?
	if [ "$rc" != "$want" ] || { [ -n "$msg" ] && ! grep -qF -- "$msg" "$d/err"; } ||
		{ [ -z "$msg" ] && [ -s "$d/err" ]; }; then
		echo "FAIL: $* -> rc $rc (want $want): $(cat "$d/err")"
		fail=1
	fi
}
mkdir user && echo notes >user/notes.txt
expect 73 "user exists and holds other files than an export's (notes.txt)" -- \
	"$G" export -q -f parquet -o user in.gtrace
[ "$(ls user)" = notes.txt ] && [ "$(cat user/notes.txt)" = notes ] || { echo "FAIL: user/ changed"; fail=1; }
expect 73 "in.gtrace exists and is a file, not a folder" -- "$G" export -q -f parquet -o in.gtrace in.gtrace
cmp -s in.gtrace "$T" || { echo "FAIL: the input changed"; fail=1; }
echo x >file
expect 73 "file exists and is a file, not a folder" -- "$G" export -q -f parquet -o file in.gtrace
expect 64 "a Parquet export is a folder: give it a name with -o" -- \
	"$G" export -q -f parquet -o - in.gtrace
# killed by SIGXFSZ (128 + 25) while writing: 8 blocks are less than the kernels' table
(ulimit -f 8; exec "$G" export -q -f parquet -o cut.parquet in.gtrace) 2>/dev/null
rc=$?
[ "$rc" = 153 ] || { echo "FAIL: killed export: rc $rc, want 153"; fail=1; }
left=$(ls -A | tr '\n' ' ')
[ "$left" = "file in.gtrace user " ] || { echo "FAIL: left behind: $left"; fail=1; }
expect 0 "" -- "$G" export -q -f parquet -o ok.parquet in.gtrace
expect 0 "" -- "$G" export -q -f parquet -o ok.parquet in.gtrace
n=$(ls ok.parquet | grep -c '\.parquet$')
[ "$n" = 46 ] || { echo "FAIL: ok.parquet holds $n tables, want 46"; fail=1; }
left=$(ls -A | tr '\n' ' ')
[ "$left" = "file in.gtrace ok.parquet user " ] || { echo "FAIL: after two exports: $left"; fail=1; }
exit $fail
