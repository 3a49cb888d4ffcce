#!/usr/bin/env bash
# perfetto-ruler: a time read off Perfetto's ruler, given to --from/--to, selects what Perfetto
# showed there (docs/cli.md, "Time"). For both timeline formats: the whole trace is exported
# and imported with Perfetto's own importer; two windows are read off its slices as times
# since trace_bounds.start_ts (the ruler's 0): from the start of one step to the end of another,
# and from the middle of one step to the middle of another (so that slices are cut); each is
# exported with --from/--to in seconds, and must hold exactly the slices of the whole export
# that meet it, cut at its edges, at the same ruler times, with trace_bounds starting at the
# same zero; and --nvtx prints the steps at those ruler times. Exit 77 (skipped) without the
# importer.
# Usage: perfetto-ruler.sh PATH/TO/gputrace PATH/TO/trace_processor_shell TRACE
set -u
gputrace=$(realpath "$1")
tp=${GPUTRACE_PERFETTO_TP:-$2}
trace=$(realpath "$3")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=cli-common.sh
. "$(dirname "$0")/cli-common.sh"
cd "$tmp" || exit 1

if [ ! -x "$tp" ] || ! "$tp" --version >/dev/null 2>&1; then
	echo "trace_processor_shell cannot run at '$tp': skipped"
	exit 77
fi

# q FILE SQL: the rows, without the header line
q() {
	"$tp" query "$1" "$2" 2>/dev/null | tail -n +2
}

# seconds NS: "S.NNNNNNNNN", as --from takes it
seconds() {
	printf '%d.%09d' $(($1 / 1000000000)) $(($1 % 1000000000))
}

# the slices drawn from records: every one but the instant at the trace's zero
slices="coalesce(category, '') != 'trace'"

for fmt in perfetto chrome; do
	ext=pftrace
	[ "$fmt" = chrome ] && ext=json
	expect_rc 0 "$gputrace" export "$trace" -f "$fmt" -o "whole.$ext" -q
	zero=$(q "whole.$ext" "select start_ts from trace_bounds")
	[ -n "$zero" ] || fail "$fmt: no trace_bounds"
	if [ "$fmt" = perfetto ]; then
		# the export's identity, its first and last packet (a trace_uuid twice), imports
		# as one uuid and no error (view reuses only such a whole export: docs/cli.md)
		errors=$(q whole.pftrace "select name from stats where value > 0 and severity = 'error'")
		[ -z "$errors" ] || fail "perfetto: import errors: $errors"
		[ "$(q whole.pftrace "select count(*) from metadata where name = 'trace_uuid'")" = 1 ] ||
			fail "perfetto: trace_uuid: $(q whole.pftrace "select * from metadata where name = 'trace_uuid'")"
	fi
	# the zero on the trace clock: the protobuf's ruler is that clock, the JSON's starts at 0
	[ "$fmt" = perfetto ] && zero0=$zero
	for pick in edges middles; do
		if [ "$pick" = edges ]; then
			a=$(q "whole.$ext" "select min(ts) from slice where name = 'ProfilerStep#10'")
			b=$(q "whole.$ext" "select max(ts + dur) from slice where name = 'ProfilerStep#12'")
		else
			a=$(q "whole.$ext" "select min(ts + dur / 2) from slice where name = 'ProfilerStep#5'")
			b=$(q "whole.$ext" "select max(ts + dur / 2) from slice where name = 'ProfilerStep#15'")
		fi
		[ -n "$a" ] && [ -n "$b" ] || fail "$fmt: no steps to read a window off"
		from=$(seconds $((a - zero)))
		to=$(seconds $((b - zero)))
		expect_rc 0 "$gputrace" export "$trace" -f "$fmt" -o "$pick.$ext" --from "$from" \
			--to "$to"
		err_has_line "gputrace: window: $(printf '%.3f' "$from") s to $(printf '%.3f' "$to") s"
		if [ "$pick" = edges ]; then
			# --nvtx prints the same steps at the same ruler times
			expect_rc 0 "$gputrace" export "$trace" -f "$fmt" -o nvtx.$ext --nvtx step:10..12
			err_has_line "gputrace: window: step 10..12 (3 ranges in 1 process), $(printf '%.3f' "$from") s to $(printf '%.3f' "$to") s (--from @$((a + zero0 - zero)) --to @$((b + zero0 - zero)))"
		fi
		# what the whole export shows in [a, b), cut at a and b, on the ruler
		q "whole.$ext" "select category, name, max(ts, $a) - $zero, min(ts + dur, $b) - $zero
			from slice where $slices and ((dur > 0 and ts < $b and ts + dur > $a)
			or (dur = 0 and ts >= $a and ts < $b)) order by 3, 4, 1, 2" >"want-$pick"
		wzero=$(q "$pick.$ext" "select start_ts from trace_bounds")
		[ "$wzero" = "$zero" ] ||
			fail "$fmt $pick: the window's ruler starts at $wzero, the whole trace's at $zero"
		q "$pick.$ext" "select category, name, ts - $wzero, ts + dur - $wzero from slice
			where $slices order by 3, 4, 1, 2" >"got-$pick"
		n=$(wc -l <"want-$pick")
		[ "$n" -ge 100 ] || fail "$fmt $pick: only $n slices in [$from, $to) s"
		if cmp -s "want-$pick" "got-$pick"; then
			echo "ok: $fmt: --from $from --to $to holds the $n slices Perfetto showed there"
		else
			fail "$fmt $pick: --from $from --to $to: $(diff "want-$pick" "got-$pick" | head -20)"
		fi
	done
done

cli_done perfetto-ruler
