#!/usr/bin/env bash
# Damage is always told (docs/cli.md, "Damage"). A copy of a real trace with eight bytes flipped
# inside its largest chunk (found through the footer's index, which stays intact) goes through every
# command that reads a trace - info, stats, advise, report, diff, export in each format, sql, view's
# export, merge: each gives the same warning line, with the chunk's exact bytes, and exits 65 after
# its output (view: its own status); each shows the loss (info's losses, stats' damaged_file row
# with the records the index says the chunk held, report's header, diff's incomplete side); and the
# outputs carry it: the Chrome JSON's metadata, the Perfetto export's metadata as trace_processor
# imports it and its instant, the csv's loss row, SQLite's GPUTRACE_LOSSES, the merged trace's LOSS
# record. Then `info --reindex` of a trace cut short keeps the loss on record: info, stats, diff and
# the exports of the reindexed trace still say it, exit 0.
# Usage: cli-damage.sh GPUTRACE [TRACE_PROCESSOR_SHELL]
set -u
gputrace=$(realpath "$1")
tp=${GPUTRACE_PERFETTO_TP:-${2:-}}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=cli-common.sh
. "$(dirname "$0")/cli-common.sh"
data=$(cd "$(dirname "$0")/data" && pwd)
cd "$tmp" || exit 1
have_sqlite=0
"$gputrace" export --help | grep -q '^  sqlite ' && have_sqlite=1
have_tp=0
if [ -n "$tp" ] && [ -x "$tp" ] && "$tp" --version >/dev/null 2>&1; then
	have_tp=1
else
	echo "trace_processor_shell cannot run at '$tp': the Perfetto export is checked by its bytes"
fi

u32() { od -An -tu4 -j"$2" -N4 "$1" | tr -d ' '; }
u64() { od -An -tu8 -j"$2" -N8 "$1" | tr -d ' '; }
# q FILE SQL: trace_processor's rows, without the header line
q() { "$tp" query "$1" "$2" 2>/dev/null | tail -n +2; }
# json FILE EXPR: a Python expression over the Chrome JSON's gputrace.losses, as L
json() { python3 -c "import json,sys; L=json.load(open(sys.argv[1]))['gputrace']['losses']; print($2)" "$1"; }

cp "$data/pytorch-train.gtrace" whole.gtrace
size=$(stat -c %s whole.gtrace)
# the footer's index (docs/format.md, "Footer"): the chunk with the most records
footer=$(u64 whole.gtrace $((size - 32 + 8)))
entry_bytes=$(u32 whole.gtrace $((footer + 4)))
nchunks=$(u64 whole.gtrace $((footer + 8)))
best=-1 records=0 last=0
for ((k = 0; k < nchunks; k++)); do
	e=$((footer + 16 + k * entry_bytes))
	n=$(u32 whole.gtrace $((e + 16)))
	last=$e
	if [ "$n" -gt "$records" ]; then
		best=$e records=$n
	fi
done
[ "$best" -ge 0 ] || fail "no chunk in the index of pytorch-train.gtrace"
off=$(u64 whole.gtrace "$best")
comp=$(u32 whole.gtrace $((best + 8)))
bytes=$((40 + comp)) # its header and its frame
cp whole.gtrace flip.gtrace
printf '\377\377\377\377\377\377\377\377' |
	dd of=flip.gtrace bs=1 seek=$((off + 40 + comp / 2)) conv=notrunc status=none
[ "$(stat -c %s flip.gtrace)" = "$size" ] || fail "the flip changed the size"
words="1 chunk ($bytes bytes) and 0 malformed records skipped"
line() { # CMD: the line every reading command gives flip.gtrace, exactly
	echo "gputrace: warning: $1: flip.gtrace is damaged: $words"
}
has_err_line() {
	grep -qxF -- "$1" "$tmp/err" || fail "no line [$1] in stderr: $(cat "$tmp/err")"
}

# ---- info ----
expect_rc 65 "$gputrace" info flip.gtrace
has_err_line "$(line info)"
out_has_line "  damaged file     1 chunk, $bytes bytes unreadable"
out_has_line "recovered:   no"

# ---- stats: the row, the records the index says the chunk held, and the summary ----
expect_rc 65 "$gputrace" stats flip.gtrace -r losses -f csv
has_err_line "$(line stats)"
out_has_line "$(printf 'damaged_file,%s,%s' "$records" "$words")"
expect_rc 65 "$gputrace" stats flip.gtrace
has_err_line "$(line stats)"
grep -qxE "damaged_file +[0-9,]+  ${words//[()]/.}" "$tmp/out" ||
	fail "stats: no damaged_file row in the table: $(grep -A10 '^Lost records' "$tmp/out")"

# ---- advise: the findings of what could be read ----
expect_rc 65 "$gputrace" advise flip.gtrace -f json
has_err_line "$(line advise)"
grep -q '^{"inputs":\[{"name":"flip.gtrace"' "$tmp/out" ||
	fail "advise: no findings of the damaged trace: $(head -c 300 "$tmp/out")"

# ---- report: the page of what could be read, its damage said in the header ----
expect_rc 65 "$gputrace" report flip.gtrace -o flip.html
has_err_line "$(line report)"
grep -qF "<tr><td colspan=\"8\" class=\"damage\">Damaged: $words. " flip.html ||
	fail "report: the page does not say the damage: $(grep -F 'damage' flip.html | head -3)"

# ---- diff: incomplete, the damaged side named with what it lost ----
expect_rc 65 "$gputrace" diff whole.gtrace flip.gtrace
has_err_line "$(line diff)"
[ "$(head -n 1 "$tmp/out")" = "WARNING: incomplete traces, the comparison may be off by what they lost: NEW (flip.gtrace) is damaged: $words; see \`gputrace stats -r losses\`." ] ||
	fail "diff: first line [$(head -n 1 "$tmp/out")]"
expect_rc 65 "$gputrace" diff whole.gtrace flip.gtrace -f csv
grep -q '^true,0,0,' "$tmp/out" || fail "diff: not incomplete: $(head -n 3 "$tmp/out")"
grep -F "NEW,flip.gtrace," "$tmp/out" | grep -qF ",1,$words,false," ||
	fail "diff: the NEW side does not say its damage: $(grep -F 'NEW,' "$tmp/out")"

# ---- export, every format: the line, the file written, the damage in it ----
formats=(chrome perfetto csv)
[ "$have_sqlite" = 1 ] && formats+=(sqlite)
for f in "${formats[@]}"; do
	expect_rc 65 "$gputrace" export flip.gtrace -f "$f" -o "out.$f"
	has_err_line "$(line export)"
	err_matches "^gputrace: wrote "
done
[ "$(json out.chrome "L['summary']")" = "damaged file: $words" ] ||
	fail "chrome: losses.summary is [$(json out.chrome "L['summary']")]"
[ "$(json out.chrome "(L['damaged_file']['chunks'], L['damaged_file']['bytes'], L['damaged_file']['records'], L['chunks_skipped'], L['total'])")" = "(1, $bytes, $records, 1, 0)" ] ||
	fail "chrome: losses [$(json out.chrome "L")]"
pf_has_damage() { # FILE WORDS: the Perfetto export's metadata and instant say WORDS
	if [ "$have_tp" = 1 ]; then
		[ "$(q "$1" "select str_value from metadata where name = 'cr-gputrace.damaged_file'")" = "\"$2\"" ] ||
			fail "perfetto $1: cr-gputrace.damaged_file is [$(q "$1" "select str_value from metadata where name = 'cr-gputrace.damaged_file'")]"
		[ "$(q "$1" "select int_value from metadata where name = 'cr-gputrace.damaged_bytes'")" = "$3" ] ||
			fail "perfetto $1: cr-gputrace.damaged_bytes is not $3"
		[ "$(q "$1" "select count(*) from slice where name = '$4$2'")" = 1 ] ||
			fail "perfetto $1: no instant '$4$2'"
	else
		grep -aqF "$2" "$1" || fail "perfetto $1: no [$2]"
	fi
}
pf_has_damage out.perfetto "$words" "$bytes" "trace file damaged: "
[ "$(tail -n 1 out-loss.csv)" = "$(printf '0,0,1,6,0,%s,%s,0\r' "$bytes" "$records")" ] ||
	fail "csv: the loss row is [$(tail -n 1 out-loss.csv)]"
if [ "$have_sqlite" = 1 ]; then
	expect_rc 0 "$gputrace" sql out.sqlite -f csv \
		"SELECT unit, count FROM GPUTRACE_LOSSES WHERE sourceName = 'damaged_file' ORDER BY unit"
	[ "$(tr -d '\r' <"$tmp/out" | tr '\n' ' ')" = "unit,count bytes,$bytes chunks,1 records,$records " ] ||
		fail "sqlite: GPUTRACE_LOSSES [$(cat "$tmp/out")]"
	# ---- sql on the trace: the line, the query run on what was read ----
	expect_rc 65 "$gputrace" sql flip.gtrace -f csv \
		"SELECT count FROM GPUTRACE_LOSSES WHERE unit = 'bytes'"
	has_err_line "$(line sql)"
	out_has_line "$(printf '%s\r' "$bytes")"
fi

# ---- view: the same line, then its own status (75: nobody fetched it within --timeout);
# the export it serves says the damage too ----
expect_rc 75 "$gputrace" view flip.gtrace --port 0 --no-open --timeout 0.05
has_err_line "$(line view)"
pf_has_damage flip.pftrace "$words" "$bytes" "trace file damaged: "

# ---- merge: the line; the merged trace records the loss, which every command then says ----
expect_rc 65 "$gputrace" merge -q -o merged.gtrace flip.gtrace "$data/ddp-rank0.gtrace"
has_err_line "$(line merge)"
expect_rc 0 "$gputrace" info merged.gtrace
out_has_line "  damaged file     1 chunk left out, recorded in the trace (merge, --reindex)"
expect_rc 0 "$gputrace" stats merged.gtrace -r losses -f csv
out_has_line "damaged_file,$records,$words (recorded in the trace by merge or --reindex)"

# ---- info --reindex of a trace cut short inside its last chunk keeps the loss ----
cut=$((size - 2000))
last_off=$(u64 whole.gtrace "$last")
[ "$cut" -gt "$((last_off + 40))" ] || fail "the cut is not inside the last chunk"
cut_bytes=$((cut - last_off))
cut_records=$(u32 whole.gtrace $((last + 16)))
cut_words="1 chunk ($cut_bytes bytes) and 0 malformed records skipped"
head -c "$cut" whole.gtrace >cut.gtrace
expect_rc 65 "$gputrace" info cut.gtrace
has_err_line "gputrace: warning: info: cut.gtrace is damaged: $cut_words"
expect_rc 0 "$gputrace" info --reindex cut.gtrace
out_has_line "cut.gtrace: 1 damaged chunk could not be read and is left out"
# reading the new file skips nothing: no line, exit 0; the loss is on record
expect_rc 0 "$gputrace" info cut.gtrace
[ ! -s "$tmp/err" ] || fail "info after --reindex warned: $(cat "$tmp/err")"
out_has_line "  damaged file     1 chunk left out, recorded in the trace (merge, --reindex)"
expect_rc 0 "$gputrace" stats cut.gtrace -r losses -f csv
out_has_line "damaged_file,$cut_records,$cut_words (recorded in the trace by merge or --reindex)"
expect_rc 0 "$gputrace" diff whole.gtrace cut.gtrace -f csv
grep -q '^true,0,0,' "$tmp/out" || fail "diff after --reindex: not incomplete: $(head -n 3 "$tmp/out")"
grep -F "NEW,cut.gtrace," "$tmp/out" | grep -qF ",1,$cut_words,false," ||
	fail "diff after --reindex: NEW does not say its damage: $(grep -F 'NEW,' "$tmp/out")"
for f in "${formats[@]}"; do
	expect_rc 0 "$gputrace" export cut.gtrace -f "$f" -o "cut.$f" -q
done
[ "$(json cut.chrome "(L['summary'], L['damaged_file']['recorded_chunks'], L['damaged_file']['bytes'], L['chunks_skipped'])")" = "('damaged file: $cut_words', 1, $cut_bytes, 0)" ] ||
	fail "chrome after --reindex: losses [$(json cut.chrome "L")]"
pf_has_damage cut.perfetto "$cut_words" "$cut_bytes" "damaged file: "
grep -qE "^[0-9]+,[0-9]+,1,6,0,$cut_bytes,$cut_records,0"$'\r'"\$" cut-loss.csv ||
	fail "csv after --reindex: no loss row: $(cat cut-loss.csv)"
if [ "$have_sqlite" = 1 ]; then
	expect_rc 0 "$gputrace" sql cut.sqlite -f csv \
		"SELECT unit, count, pid IS NOT NULL FROM GPUTRACE_LOSSES WHERE sourceName = 'damaged_file' ORDER BY unit"
	[ "$(tr -d '\r' <"$tmp/out" | tr '\n' ' ')" = "unit,count,pid IS NOT NULL bytes,$cut_bytes,1 chunks,1,1 records,$cut_records,1 " ] ||
		fail "sqlite after --reindex: GPUTRACE_LOSSES [$(cat "$tmp/out")]"
fi

cli_done cli-damage
