#!/bin/bash
# Several traces exported to one folder of hive partitions (docs/sql.md, "A job in one
# folder"): DIR/rank=N/ for ranked traces, DIR/host=H/pid=P/ for traces without a rank, the
# folder through the one output path (refused over an input, over a file, over a folder
# holding other files; nothing left by an export killed mid-way; replaced by a second
# export), and the refusals of inputs that do not make one table, with their exact messages
# and exit statuses.
# Usage: parquet-hive.sh GPUTRACE DATA_DIR
set -u
G=$(realpath "$1")
D=$(realpath "$2")
d=$(mktemp -d /tmp/gt-pqhive-XXXXXX)
trap 'rm -rf "$d"' EXIT
cd "$d" || exit 1
cp "$D/ddp-rank0.gtrace" r0.gtrace
cp "$D/ddp-rank1.gtrace" r1.gtrace
cp "$D/ddp-rank0.gtrace" copy0.gtrace
fail=0
expect() { # expect WANT_RC WANT_STDERR ("": nothing) -- command...
	local want=$1 msg=$2 rc
	shift 3
	"$@" 2>"$d/err" >/dev/null
	rc=$?
	if [ "$rc" != "$want" ] || [ "$(cat "$d/err")" != "$msg" ]; then
		echo "FAIL: $* -> rc $rc (want $want): $(cat "$d/err") (want: $msg)"
		fail=1
	fi
}
listing() { (cd "$1" && find . -mindepth 1 | LC_ALL=C sort | tr '\n' ' '); }

expect 0 "" -- "$G" export -q r0.gtrace r1.gtrace -f parquet -o job/
n0=$(ls job/rank=0 | grep -c '\.parquet$')
n1=$(ls job/rank=1 | grep -c '\.parquet$')
[ "$n0" = 46 ] && [ "$n1" = 46 ] || { echo "FAIL: rank=0 holds $n0 tables, rank=1 $n1, want 46"; fail=1; }
[ "$(ls -A job | tr '\n' ' ')" = "rank=0 rank=1 " ] || { echo "FAIL: job holds $(ls -A job)"; fail=1; }
# each partition is the single-trace export of its trace, file for file
"$G" export -q r1.gtrace -f parquet -o one.parquet
for f in one.parquet/*.parquet; do
	b=$(basename "$f")
	[ "$b" = META_DATA_EXPORT.parquet ] && continue # records the export's identity
	cmp -s "$f" "job/rank=1/$b" || { echo "FAIL: job/rank=1/$b differs from one trace's"; fail=1; }
done
# the closing line
"$G" export r0.gtrace r1.gtrace -f parquet -o job 2>err >/dev/null
grep -qx 'gputrace: wrote job/ (2 partitions, rank=N/TABLE.parquet: 5,065 rows, [0-9.]* KiB)' err ||
	{ echo "FAIL: closing line: $(cat err)"; fail=1; }
# a second export replaced the first: the same listing, no temporary beside it
[ "$(ls -A | tr '\n' ' ')" = "copy0.gtrace err job one.parquet r0.gtrace r1.gtrace " ] ||
	{ echo "FAIL: after two exports: $(ls -A)"; fail=1; }
before=$(listing job)

# traces without a rank: host=H/pid=P
cp "$D/example.gtrace" ex.gtrace
cp "$D/multistream.gtrace" ms.gtrace
expect 0 "" -- "$G" export -q ex.gtrace ms.gtrace -f parquet -o hp
[ "$(cd hp && ls -d */*/ | tr '\n' ' ')" = "host=vm/pid=508/ host=vm/pid=660/ " ] ||
	{ echo "FAIL: hp holds $(cd hp && find . -maxdepth 2)"; fail=1; }

# inputs that do not make one table (64), a trace of several ranks (65)
expect 64 "gputrace: export: r0.gtrace and copy0.gtrace are both rank=0: one folder holds one trace per rank" -- \
	"$G" export -q r0.gtrace copy0.gtrace -f parquet -o j2
expect 64 "gputrace: export: ./r0.gtrace is given twice (as r0.gtrace and ./r0.gtrace)" -- \
	"$G" export -q r0.gtrace ./r0.gtrace -f parquet -o j2
expect 64 "gputrace: export: r0.gtrace has rank 0 and ex.gtrace has none: the partitions of one folder are all rank=N or all host=H/pid=P; export them to two folders" -- \
	"$G" export -q r0.gtrace ex.gtrace -f parquet -o j2
cp ex.gtrace ex2.gtrace
expect 64 "gputrace: export: ex.gtrace and ex2.gtrace are both host=vm/pid=660: one folder holds one trace per host and process" -- \
	"$G" export -q ex.gtrace ex2.gtrace -f parquet -o j2
cp "$D/ddp-2rank.gtrace" two.gtrace
expect 65 "gputrace: export: two.gtrace holds several ranks (0 to 1); a partition is one rank's trace: trace each rank to a file of its own" -- \
	"$G" export -q r0.gtrace two.gtrace -f parquet -o j2
expect 64 "gputrace: export: several traces are exported together only with -f parquet (a folder of partitions); export -f sqlite one trace at a time" -- \
	"$G" export -q r0.gtrace r1.gtrace -f sqlite -o j2
expect 64 "gputrace: export: several traces need -o DIR, the folder of their partitions" -- \
	"$G" export -q r0.gtrace r1.gtrace -f parquet
expect 66 "gputrace: export: nope.gtrace: No such file or directory" -- \
	"$G" export -q r0.gtrace nope.gtrace -f parquet -o j2
[ ! -e j2 ] || { echo "FAIL: a refused export left j2"; fail=1; }

# the output: never over an input, a file, standard output, or a folder of other files
mkdir in && cp r0.gtrace in/r0.gtrace
expect 64 "gputrace: export: the output folder in holds the input in/r0.gtrace, which replacing it would remove: choose another output name" -- \
	"$G" export -q in/r0.gtrace r1.gtrace -f parquet -o in
expect 73 "gputrace: export: r1.gtrace exists and is a file, not a folder; choose another output name" -- \
	"$G" export -q r0.gtrace r1.gtrace -f parquet -o r1.gtrace
cmp -s r1.gtrace "$D/ddp-rank1.gtrace" || { echo "FAIL: the input changed"; fail=1; }
expect 64 "gputrace: export: a Parquet export is a folder: give it a name with -o" -- \
	"$G" export -q r0.gtrace r1.gtrace -f parquet -o -
echo notes >job/rank=0/notes.txt
expect 73 "gputrace: export: job exists and holds other files than an export's (rank=0/notes.txt): choose another output name, or empty it" -- \
	"$G" export -q r0.gtrace r1.gtrace -f parquet -o job
rm job/rank=0/notes.txt
mkdir job/mine
expect 73 "gputrace: export: job exists and holds other files than an export's (mine): choose another output name, or empty it" -- \
	"$G" export -q r0.gtrace r1.gtrace -f parquet -o job
rmdir job/mine
[ "$(listing job)" = "$before" ] || { echo "FAIL: a refused export changed job/"; fail=1; }

# killed by SIGXFSZ (128 + 25) while writing: neither the folder nor a temporary is left
{ (ulimit -f 8; exec "$G" export -q r0.gtrace r1.gtrace -f parquet -o cut) 2>/dev/null; } 2>/dev/null
rc=$?
[ "$rc" = 153 ] || { echo "FAIL: killed export: rc $rc, want 153"; fail=1; }
[ ! -e cut ] && [ -z "$(ls -A | grep '^\.')" ] || { echo "FAIL: left behind: $(ls -A)"; fail=1; }
exit $fail
