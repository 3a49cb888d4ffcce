#!/usr/bin/env bash
# Damage is always told: a copy of a real trace with eight bytes flipped inside a chunk (the
# footer intact) through every command that reads a trace - info, stats, advise, diff, export
# in each format, sql, view's export, merge - each gives the same warning line and exits 65
# after its output (view: its own status, the line the same); the outputs carry the record
# (Perfetto: an instant on the "trace" track, the Chrome JSON's metadata, SQLite's
# GPUTRACE_LOSSES, the merged trace's LOSS record); and `info --reindex` of a trace cut short
# keeps the loss on record for every later command.
# Usage: cli-damage.sh GPUTRACE
set -u
gputrace=$(realpath "$1")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=cli-common.sh
. "$(dirname "$0")/cli-common.sh"
data=$(cd "$(dirname "$0")/data" && pwd)
cd "$tmp" || exit 1
have_sqlite=0
"$gputrace" export --help | grep -q '^  sqlite ' && have_sqlite=1

cp "$data/pytorch-train.gtrace" whole.gtrace
cp whole.gtrace flip.gtrace
hlen=$(od -An -tu4 -j12 -N4 flip.gtrace | tr -d ' ')
# eight bytes in the first chunk after the header: its checksum no longer holds
printf '\377\377\377\377\377\377\377\377' |
	dd of=flip.gtrace bs=1 seek=$((hlen + 200)) conv=notrunc status=none
size=$(stat -c %s flip.gtrace)
[ "$size" = "$(stat -c %s whole.gtrace)" ] || fail "the flip changed the size"

line() { # CMD: the warning every reading command gives this trace
	echo "gputrace: warning: $1: flip\\.gtrace is damaged: 1 chunk \\([0-9]+ bytes\\) and 0 malformed records skipped"
}

expect_rc 65 "$gputrace" info flip.gtrace
err_matches "^$(line info)$"
out_has_line "recovered:   no"
grep -qE '^  damaged file     1 chunk, [0-9]+ bytes unreadable$' "$tmp/out" ||
	fail "info: no damaged file line: $(cat "$tmp/out")"

expect_rc 65 "$gputrace" stats flip.gtrace -r losses -f csv
err_matches "^$(line stats)$"
grep -qE '^damaged_file,,"1 chunk unreadable: 0 recorded in the trace \(merge, --reindex\), 1 skipped reading it \([0-9]+ bytes\)"' "$tmp/out" ||
	fail "stats: no damaged_file row: $(cat "$tmp/out")"

expect_rc 65 "$gputrace" advise flip.gtrace -f json
err_matches "^$(line advise)$"
grep -q '^{"inputs":\[{"name":"flip.gtrace"' "$tmp/out" || fail "advise: no findings of the damaged trace: $(head -c 300 "$tmp/out")"

expect_rc 65 "$gputrace" diff whole.gtrace flip.gtrace -f csv
err_matches "^$(line diff)$"
grep -q '^true,' "$tmp/out" || fail "diff: the comparison is not marked incomplete: $(head -n 3 "$tmp/out")"

formats=(chrome perfetto csv)
[ "$have_sqlite" = 1 ] && formats+=(sqlite)
for f in "${formats[@]}"; do
	expect_rc 65 "$gputrace" export flip.gtrace -f "$f" -o "out.$f"
	err_matches "^$(line export)$"
	err_matches "^gputrace: wrote "
done
grep -q '"chunks_skipped":1,"bytes_skipped":[0-9]' out.chrome ||
	fail "chrome: the metadata does not carry the damage: $(tail -c 300 out.chrome)"
grep -aq 'trace file damaged: 1 chunk (' out.perfetto ||
	fail "perfetto: no 'trace file damaged' instant"
if [ "$have_sqlite" = 1 ]; then
	expect_rc 0 "$gputrace" sql out.sqlite -f csv \
		"SELECT count, unit FROM GPUTRACE_LOSSES WHERE sourceName = 'damaged_file' AND unit = 'chunks'"
	out_has_line "$(printf '1,chunks\r')"
	expect_rc 65 "$gputrace" sql flip.gtrace -f csv "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL"
	err_matches "^$(line sql)$"
fi

# view: the same line, then its own status (75: nobody fetched it within --timeout)
expect_rc 75 "$gputrace" view flip.gtrace --port 0 --no-open --timeout 0.05
err_matches "^$(line view)$"

# merge: the same line; the merged trace records the loss
expect_rc 65 "$gputrace" merge -q -o merged.gtrace flip.gtrace "$data/ddp-rank0.gtrace"
err_matches "^gputrace: warning: merge: flip.gtrace is damaged: 1 chunk \([0-9]+ bytes\) and 0 malformed records skipped$"
expect_rc 0 "$gputrace" info merged.gtrace
out_has_line "  damaged file     1 chunk left out, recorded in the trace (merge, --reindex)"

# --reindex of a trace cut short keeps the loss: info, stats, diff and the exports say it
head -c $((size - 2000)) whole.gtrace >cut.gtrace
expect_rc 0 "$gputrace" info --reindex cut.gtrace
out_has_line "cut.gtrace: 1 damaged chunk could not be read and is left out"
expect_rc 0 "$gputrace" info cut.gtrace
out_has_line "  damaged file     1 chunk left out, recorded in the trace (merge, --reindex)"
expect_rc 0 "$gputrace" diff whole.gtrace cut.gtrace -f csv
grep -q '^true,' "$tmp/out" || fail "diff after --reindex: not incomplete: $(head -n 3 "$tmp/out")"
expect_rc 0 "$gputrace" export cut.gtrace -f perfetto -o cut.pftrace -q
grep -aq 'lost 1 chunks (damaged_file)' cut.pftrace || fail "perfetto after --reindex: no loss"

cli_done cli-damage
