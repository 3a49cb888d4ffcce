#!/usr/bin/env bash
# Every output says the same thing about the same trace (exporters/model/catalog.c): a two-rank
# trace whose ranks each see their own GPU as device 0 (CUDA_VISIBLE_DEVICES=<rank>, two
# uuids), rank 0 with 256 MiB of device memory at its peak, rank 1 with 512 MiB. `gputrace
# info`, `gputrace stats` in its three formats, and the chrome and perfetto exports as
# Perfetto's own importer reads them all show two GPUs, GPU 0 and GPU 1, with those peaks.
# (Before the catalog, stats added both ranks into one "device 0" of 768 MiB.) The run
# summary's side is test-stats' test_two_ranks_device_zero.
# Usage: cli-catalog.sh PATH/TO/gputrace PATH/TO/mktrace PATH/TO/trace_processor_shell
# Without a runnable trace_processor_shell the importer's checks are skipped (said so), the
# rest still run.
set -u
gputrace=$1
mktrace=$2
tp=${GPUTRACE_PERFETTO_TP:-${3:-}}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/cli-common.sh"

uuid0=GPU-a0a1a2a3-a4a5-a6a7-a8a9-aaabacadaeaf
uuid1=GPU-a1a2a3a4-a5a6-a7a8-a9aa-abacadaeafb0
"$mktrace" -o "$tmp/two.gtrace" --processes 2 --kernels 200 --api --memcpy --device-zero \
	--memory >/dev/null 2>"$tmp/err" || fail "mktrace: $(cat "$tmp/err")"

# info: two GPUs by uuid, each used by one rank as its device 0, with its peak.
expect_rc 0 "$gputrace" info "$tmp/two.gtrace"
out_has_line "GPUs:        2"
out_has_line "  GPU 0: NVIDIA H200, 132 SMs, 140.40 GiB, compute capability 9.0, peak memory in use 256.00 MiB"
out_has_line "    $uuid0: device 0 of pid 4100"
out_has_line "  GPU 1: NVIDIA H200, 132 SMs, 140.40 GiB, compute capability 9.0, peak memory in use 512.00 MiB"
out_has_line "    $uuid1: device 0 of pid 4107"

# stats, CSV: one row per GPU, then the host row would follow (there is none here).
expect_rc 0 "$gputrace" stats -r memory -f csv "$tmp/two.gtrace"
out_has_line "gpu,peak_bytes,end_bytes,allocs,frees,alloc_bytes,name,uuid"
out_has_line "0,268435456,0,1,1,268435456,NVIDIA H200,$uuid0"
out_has_line "1,536870912,0,2,2,536870912,NVIDIA H200,$uuid1"
[ "$(sed -n '/^# memory$/,/^$/p' "$tmp/out" | grep -c ',NVIDIA H200,')" -eq 2 ] ||
	fail "stats csv: not two GPU rows: $(cat "$tmp/out")"

# stats, JSON and table.
expect_rc 0 "$gputrace" stats -r memory -f json "$tmp/two.gtrace"
out_has_line "  {\"gpu\": 0, \"peak_bytes\": 268435456, \"end_bytes\": 0, \"allocs\": 1, \"frees\": 1, \"alloc_bytes\": 268435456, \"name\": \"NVIDIA H200\", \"uuid\": \"$uuid0\"},"
out_has_line "  {\"gpu\": 1, \"peak_bytes\": 536870912, \"end_bytes\": 0, \"allocs\": 2, \"frees\": 2, \"alloc_bytes\": 536870912, \"name\": \"NVIDIA H200\", \"uuid\": \"$uuid1\"}"
expect_rc 0 "$gputrace" stats -r memory "$tmp/two.gtrace"
out_has_line "  0  256.00 MiB     0 B       1      1  256.00 MiB  NVIDIA H200  $uuid0"
out_has_line "  1  512.00 MiB     0 B       2      2  512.00 MiB  NVIDIA H200  $uuid1"

# chrome, as written: two GPU processes, and each one's "memory in use" counter peaks at its
# rank's bytes.
expect_rc 0 "$gputrace" export "$tmp/two.gtrace" -f chrome -o "$tmp/two.json"
expect_rc 0 "$gputrace" export "$tmp/two.gtrace" -f perfetto -o "$tmp/two.pftrace"
gpus=$(grep -o '"name":"process_name","pid":500000[0-9],"tid":0,"args":{"name":"GPU [0-9]"}' \
	"$tmp/two.json" | sort | tr '\n' ' ')
[ "$gpus" = '"name":"process_name","pid":5000000,"tid":0,"args":{"name":"GPU 0"} "name":"process_name","pid":5000001,"tid":0,"args":{"name":"GPU 1"} ' ] ||
	fail "chrome: GPU processes are [$gpus]"
for g in 0 1; do
	peak=$(grep -o "\"name\":\"memory in use\",\"pid\":500000$g,[^}]*{\"bytes\":[0-9]*" \
		"$tmp/two.json" | sed 's/.*"bytes"://' | sort -n | tail -1)
	want=$((268435456 * (g + 1)))
	[ "$peak" = "$want" ] || fail "chrome: GPU $g's memory peaks at [$peak], expected $want"
done

# chrome and perfetto through Perfetto's importer: the same two GPUs and peaks.
if [ -n "$tp" ] && [ -x "$tp" ] && "$tp" --version >/dev/null 2>&1; then
	for f in two.json two.pftrace; do
		got=$("$tp" query "$tmp/$f" "select p.name, cast(max(c.value) as int) from counter c
			join process_counter_track t on c.track_id = t.id join process p using (upid)
			where t.name glob 'memory in use*' group by p.name order by p.name" 2>/dev/null |
			tail -n +2 | tr '\n' ' ')
		[ "$got" = '"GPU 0",268435456 "GPU 1",536870912 ' ] ||
			fail "$f through trace_processor: memory peaks per GPU [$got]"
		got=$("$tp" query "$tmp/$f" "select count(*) from process where name glob 'GPU *'" \
			2>/dev/null | tail -n +2)
		[ "$got" = 2 ] || fail "$f through trace_processor: [$got] GPU processes, expected 2"
	done
else
	echo "cli-catalog: no runnable trace_processor_shell ($tp): the importer's checks skipped"
fi

cli_done cli-catalog
