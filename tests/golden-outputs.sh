#!/usr/bin/env bash
# Every reading command's output on the traces of tests/data, written to OUTDIR, for a byte
# comparison of two builds: a change that must not alter any output (a move, a refactoring)
# runs this with the build before and after it and checks that `diff -r` of the two folders
# is empty (CONTRIBUTING.md). Not a meson test: the outputs change whenever a format does.
# Usage: tests/golden-outputs.sh PATH/TO/gputrace OUTDIR
set -u
G=$(realpath $1); O=$2; D=$(realpath "$(dirname "$0")/data")
# the inputs linked, not copied: the SQLite and Perfetto exports name their input's inode and
# mtime, which a copy would change from one run to the next
rm -rf "$O"; mkdir -p "$O/in"; ln -s "$D"/*.gtrace "$O/in/"; cd "$O"
for t in in/*.gtrace; do
	b=$(basename $t .gtrace)
	$G info $t >$b.info 2>&1; echo "rc $?" >>$b.info
	$G stats $t >$b.stats 2>&1; echo "rc $?" >>$b.stats
	$G stats $t -f json >$b.stats.json 2>&1
	$G stats $t -f csv >$b.stats.csv 2>&1
	$G stats $t --by rank >$b.stats.rank 2>&1
	$G stats $t --by device -f json >$b.stats.dev 2>&1
	$G advise $t >$b.advise 2>&1; echo "rc $?" >>$b.advise
	$G advise $t -f json >$b.advise.json 2>&1
	$G report $t -o $b.report.html >$b.report.err 2>&1; echo "rc $?" >>$b.report.err
	$G export $t -q -f chrome -o $b.json 2>$b.json.err
	$G export $t -q -f perfetto -o $b.pftrace 2>$b.pf.err
	mkdir -p $b-csv; $G export $t -q -f csv -o $b-csv/$b.csv 2>$b.csv.err
	$G export $t -q -f sqlite -o $b.sqlite 2>$b.sq.err && sqlite3 $b.sqlite .dump | sort > $b.sqldump; rm -f $b.sqlite
	$G sql $t "select count(*), sum(end-start) from CUPTI_ACTIVITY_KIND_KERNEL" >$b.sql 2>&1
	$G export $t -q -f perfetto --from 0.5 --to 1.5 -o $b.win.pftrace 2>$b.win.err
	$G export $t -q -f chrome --split ranks -o $b-ranks 2>$b.split.err
done
$G diff in/ddp-rank0.gtrace in/ddp-rank1.gtrace >diff 2>&1
$G diff in/ddp-rank0.gtrace in/ddp-rank1.gtrace -f json >diff.json 2>&1
$G stats in/ddp-rank0.gtrace in/ddp-rank1.gtrace >rankstats 2>&1
$G advise in/ddp-rank0.gtrace in/ddp-rank1.gtrace >advise-ranks 2>&1
$G report in/ddp-rank0.gtrace in/ddp-rank1.gtrace -o report-ranks.html >report-ranks.err 2>&1
$G merge -o merged.gtrace in/ddp-rank0.gtrace in/ddp-rank1.gtrace >merge.out 2>&1
$G export merged.gtrace -q -f chrome -o merged.json 2>&1
rm -f merged.gtrace in/*.sqlite
