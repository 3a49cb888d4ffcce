#!/usr/bin/env bash
# gputrace merge (cli/cmd-merge.c): its report, its messages and exit codes (docs/cli.md), the
# open-file limit, and the merged traces judged by Perfetto's importer when it is there.
# Usage: cli-merge.sh GPUTRACE MKTRACE DATA_DIR PERFETTO_IMPORT TRACE_PROCESSOR
set -u
gputrace=$1
mktrace=$2
data=$3
pimport=$4
tp=$5
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/cli-common.sh"

mk() {
	"$mktrace" "$@" >/dev/null || fail "mktrace $*"
}

# ---- usage ----
expect_rc 0 "$gputrace" merge --help
grep -q -- '--align HOW' "$tmp/out" || fail "merge --help does not list --align"
expect_rc 64 "$gputrace" merge a.gtrace
expect_err "gputrace: merge: where to? add -o OUT; usage: gputrace merge -o OUT IN..."
expect_rc 64 "$gputrace" merge -o "$tmp/m.gtrace"
expect_err "gputrace: merge: no input; usage: gputrace merge -o OUT IN..."
expect_rc 64 "$gputrace" merge -o "$tmp/m.gtrace" --align ptp a.gtrace
expect_err "gputrace: merge: --align: 'ptp' is not valid; use wall or nccl"
expect_rc 64 "$gputrace" merge -o "$tmp/m.gtrace" -j 0 a.gtrace
expect_err "gputrace: merge: --threads: '0' is not a number from 1 to 64"
expect_rc 64 "$gputrace" merge -o "$tmp/m.gtrace" --threads many a.gtrace
expect_err "gputrace: merge: --threads: 'many' is not a number from 1 to 64"
expect_rc 64 "$gputrace" merge -o "$tmp/m.gtrace" --frobnicate a.gtrace
expect_err "gputrace: merge: unknown option '--frobnicate'; see 'gputrace merge --help'"

# ---- inputs that cannot be merged ----
mk -o "$tmp/a.gtrace" --host node-a --rank 0 --world 2 --kernels 1000 --api --nccl-every 10
mk -o "$tmp/b.gtrace" --host node-b --rank 1 --world 2 --kernels 1000 --api --nccl-every 10 \
	--seed 2 --clock-offset 123456789 --wall-error 2500000
expect_rc 66 "$gputrace" merge -o "$tmp/m.gtrace" "$tmp/a.gtrace" "$tmp/missing.gtrace"
expect_err "gputrace: merge: $tmp/missing.gtrace: No such file or directory"
echo "not a trace" >"$tmp/junk"
expect_rc 65 "$gputrace" merge -o "$tmp/m.gtrace" "$tmp/a.gtrace" "$tmp/junk"
expect_err "gputrace: merge: $tmp/junk: not a gputrace file (bad magic)"
expect_rc 64 "$gputrace" merge -o "$tmp/m.gtrace" "$tmp/a.gtrace" "$tmp/b.gtrace" "$tmp/a.gtrace"
expect_err "gputrace: merge: $tmp/a.gtrace (input 3) is $tmp/a.gtrace (input 1) again: the same file; give each trace once"
cp "$tmp/b.gtrace" "$tmp/b-copy.gtrace"
expect_rc 64 "$gputrace" merge -o "$tmp/m.gtrace" "$tmp/a.gtrace" "$tmp/b.gtrace" "$tmp/b-copy.gtrace"
expect_err "gputrace: merge: $tmp/b-copy.gtrace (input 3) is $tmp/b.gtrace (input 2) again: a copy of it (the same header and size); give each trace once"
expect_rc 64 "$gputrace" merge -o "$tmp/b.gtrace" "$tmp/a.gtrace" "$tmp/b.gtrace"
expect_err "gputrace: merge: the output $tmp/b.gtrace is the input $tmp/b.gtrace (the same file): choose another output name"
expect_rc 73 "$gputrace" merge -o "$tmp/no/such/dir/m.gtrace" "$tmp/a.gtrace" "$tmp/b.gtrace"
err_matches "^gputrace: merge: cannot create $tmp/no/such/dir/m.gtrace: its folder does not exist$"
[ ! -e "$tmp/m.gtrace" ] || fail "a refused merge left $tmp/m.gtrace"

# ---- two hosts, the same pid; their clocks by the wall clock, then by NCCL ----
expect_rc 0 "$gputrace" merge -o "$tmp/m.gtrace" "$tmp/a.gtrace" "$tmp/b.gtrace"
err_matches "^gputrace: merged 2 traces into $tmp/m.gtrace \\([0-9,]+ records, 2,000 kernels, 2 processes, 1 with a new pid\\):$"
err_has_line "  1 $tmp/a.gtrace: host node-a, 1 process; offset +0 ns (wall clock)"
err_has_line "  2 $tmp/b.gtrace: host node-b, 1 process (1 with a new pid); offset -120956789 ns (wall clock)"
expect_rc 0 "$gputrace" info "$tmp/m.gtrace"
out_has_line "host:        node-a,node-b"
out_has_line "inputs:      2 (merged)"
out_has_line "  1 $tmp/a.gtrace: host node-a, format 1, 2116 records, offset +0 ns (wall clock)"
out_has_line "  2 $tmp/b.gtrace: host node-b, format 1, 2116 records, offset -120956789 ns (wall clock)"
out_has_line "processes:   2"
out_has_line "  pid 4100: /usr/bin/python3.11, ppid 1, host node-a, rank 0, exited with status 0"
out_has_line "  pid 268435456: /usr/bin/python3.11, ppid 1, host node-b, pid 4100 in input 2, rank 1, exited with status 0"
out_has_line "  kernel       2000"
out_has_line "  input        2"
out_has_line "  origin       2"
expect_rc 0 "$gputrace" merge -o "$tmp/n.gtrace" --align nccl "$tmp/a.gtrace" "$tmp/b.gtrace"
err_has_line "  1 $tmp/a.gtrace: host node-a, 1 process; offset +0 ns (wall clock; the NCCL reference, 100 collectives)"
err_has_line "  2 $tmp/b.gtrace: host node-b, 1 process (1 with a new pid); offset -123456789 ns = wall clock -120956789 ns, NCCL correction -2500000 ns from 100 collectives (spread +0 ns .. +0 ns)"
expect_rc 0 "$gputrace" merge -q -o "$tmp/n.gtrace" --align nccl "$tmp/a.gtrace" "$tmp/b.gtrace"
expect_err ""
# an input without collectives keeps its wall clock, and the report says why
mk -o "$tmp/e.gtrace" --host node-e --pid 7000 --kernels 100 --wall-error 5000
expect_rc 0 "$gputrace" merge -o "$tmp/ne.gtrace" --align nccl "$tmp/e.gtrace" "$tmp/a.gtrace" "$tmp/b.gtrace"
err_has_line "  1 $tmp/e.gtrace: host node-e, 1 process; offset +0 ns (wall clock; no NCCL collective)"
err_has_line "  2 $tmp/a.gtrace: host node-a, 1 process; offset -5000 ns (wall clock; the NCCL reference, 100 collectives)"
err_has_line "  3 $tmp/b.gtrace: host node-b, 1 process (1 with a new pid); offset -123461789 ns = wall clock -120961789 ns, NCCL correction -2500000 ns from 100 collectives (spread +0 ns .. +0 ns)"

# the H200 rank files: one host, one clock; gloo, so no collective to align by
expect_rc 0 "$gputrace" merge -o "$tmp/ddp.gtrace" "$data/ddp-rank0.gtrace" "$data/ddp-rank1.gtrace"
err_has_line "  2 $data/ddp-rank1.gtrace: host vm, 1 process; offset +20 ns (wall clock)"
# the same kernels, by name and count, as the one-trace recording of the same job: stats'
# instances (3rd column) and names (the 10th on, which may hold quoted commas)
"$gputrace" stats -r kernels -f csv "$tmp/ddp.gtrace" | cut -d, -f3,10- | sort >"$tmp/k-merged"
"$gputrace" stats -r kernels -f csv "$data/ddp-2rank.gtrace" | cut -d, -f3,10- | sort >"$tmp/k-one"
[ "$(wc -l <"$tmp/k-merged")" -gt 10 ] || fail "stats of the merged ranks: $(cat "$tmp/k-merged")"
cmp -s "$tmp/k-merged" "$tmp/k-one" ||
	fail "kernels of the merged ranks differ from ddp-2rank's: $(diff "$tmp/k-merged" "$tmp/k-one")"
expect_rc 65 "$gputrace" merge -o "$tmp/x.gtrace" --align nccl "$data/ddp-rank0.gtrace" "$data/ddp-rank1.gtrace"
expect_err "gputrace: merge: --align nccl: no input holds an NCCL collective kernel (a name starting with nccl); without --align nccl the wall clocks align them"
[ ! -e "$tmp/x.gtrace" ] || fail "a refused merge left $tmp/x.gtrace"

# ---- losses: summed per source, and which input lost what ----
mk -o "$tmp/l1.gtrace" --host node-l1 --kernels 200 --losses 5
mk -o "$tmp/l2.gtrace" --host node-l2 --kernels 200 --losses 9 --seed 2
expect_rc 0 "$gputrace" merge -q -o "$tmp/l.gtrace" "$tmp/l1.gtrace" "$tmp/l2.gtrace"
expect_rc 0 "$gputrace" info "$tmp/l.gtrace"
out_has_line "  1 $tmp/l1.gtrace: host node-l1, format 1, 316 records, offset +0 ns (wall clock), 12 records lost"
out_has_line "  2 $tmp/l2.gtrace: host node-l2, format 1, 316 records, offset +0 ns (wall clock), 16 records lost"
out_has_line "  cupti_dropped    14"
out_has_line "  ring_full        14"

# ---- a damaged input: merged as far as it reads, the loss counted and said ----
mk -o "$tmp/c.gtrace" --host node-c --pid 9000 --kernels 20000 --api --chunk-bytes 65536
size=$(stat -c %s "$tmp/c.gtrace")
head -c $((size * 2 / 3)) "$tmp/c.gtrace" >"$tmp/c-cut.gtrace"
# (the rest is merged, the merged trace records the loss; 65, as every command that read damage)
expect_rc 65 "$gputrace" merge -o "$tmp/d.gtrace" "$tmp/a.gtrace" "$tmp/c-cut.gtrace"
err_matches "^gputrace: warning: merge: $tmp/c-cut.gtrace is damaged: 1 chunk \\([0-9]+ bytes\\) and 0 malformed records skipped$"
expect_rc 0 "$gputrace" info "$tmp/d.gtrace"
out_has_line "  damaged file     1 chunk left out, recorded in the trace (merge, --reindex)"
grep -qE "^  2 $tmp/c-cut.gtrace: host node-c, format 1, [0-9]+ records, offset \\+0 ns \\(wall clock\\), 1 chunk and 0 records unreadable$" "$tmp/out" || fail "info of the merge with a cut input: $(cat "$tmp/out")"

# ---- threads: the same file, byte for byte, after the header (its command line differs) ----
for j in 1 2 3 8; do
	expect_rc 65 "$gputrace" merge -q -j $j -o "$tmp/j$j.gtrace" "$tmp/a.gtrace" "$tmp/b.gtrace" \
		"$tmp/c-cut.gtrace" "$tmp/c.gtrace"
done
hlen=$(od -An -tu4 -j12 -N4 "$tmp/j1.gtrace" | tr -d ' ')
for j in 2 3 8; do
	[ "$(od -An -tu4 -j12 -N4 "$tmp/j$j.gtrace" | tr -d ' ')" = "$hlen" ] || fail "-j $j: another header length"
	cmp -s -i "$hlen" "$tmp/j1.gtrace" "$tmp/j$j.gtrace" || fail "-j $j: not the file -j 1 writes"
done

# ---- the open-file limit: raised to the hard limit; past it, a clear refusal ----
for i in $(seq 1 20); do
	mk -o "$tmp/r$i.gtrace" --host "node-$i" --kernels 10 --names 2
done
inputs=$(for i in $(seq 1 20); do echo "$tmp/r$i.gtrace"; done)
# shellcheck disable=SC2086
(ulimit -Sn 24 && "$gputrace" merge -q -o "$tmp/r.gtrace" $inputs) >"$tmp/out" 2>"$tmp/err"
[ $? -eq 0 ] || fail "20 inputs under a soft limit of 24 (hard above): $(cat "$tmp/err")"
# shellcheck disable=SC2086
(ulimit -n 30 && "$gputrace" merge -q -o "$tmp/over.gtrace" $inputs) >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 71 ] || fail "20 inputs under a hard limit of 30 exited $rc, expected 71"
expect_err "gputrace: merge: 20 inputs need 36 open files at once, but this process may open 30 (ulimit -n; the hard limit is 30): raise the hard limit, or merge in groups (one merge per host, say) and merge the results"
[ ! -e "$tmp/over.gtrace" ] || fail "a refused merge left $tmp/over.gtrace"

# ---- Perfetto's importer on merged traces (skipped without it) ----
for t in m n ddp d; do
	"$pimport" "$tp" --trace "$tmp/$t.gtrace" >"$tmp/pi.out" 2>&1
	rc=$?
	if [ $rc -eq 77 ]; then
		echo "cli-merge: Perfetto's importer is not here; the merged traces were not imported"
		break
	fi
	[ $rc -eq 0 ] || fail "perfetto-import of the merged $t.gtrace: $(grep FAIL "$tmp/pi.out")"
done

cli_done cli-merge
