#!/usr/bin/env bash
# A reused pid is two processes in every output (exporters/model/catalog.c). The trace is a
# merge of two hosts whose processes both had pid 4100 and kept it (tests/mktrace.c
# --reused-pid): node-a's process (rank 0, GPU 0xaa.., 3 launches, 1 MiB never freed), then
# node-b's (rank 1, GPU 0xbb.., 2 launches with correlation ids 1 and 2 again, 2 MiB at the
# same address, freed). `gputrace info`, `stats`, the chrome, perfetto and csv exports and
# the SQLite export all show two processes, each with its own records: the later one under
# pid 536870913 (2^29 + its index) where a pid is a key, under its own globalPid in SQL.
# Then a merge of two such hosts by gputrace merge itself (which renames the second pid):
# SQL has both under pid 4100, told apart by host.
# Usage: cli-reused-pid.sh PATH/TO/gputrace PATH/TO/mktrace [trace_processor_shell] [nosqlite]
# Without a runnable trace_processor_shell the importer's checks are skipped (said so);
# "nosqlite" (a build without SQLite) skips the SQL checks.
set -u
gputrace=$1
mktrace=$2
tp=${GPUTRACE_PERFETTO_TP:-${3:-}}
sqlite=${4:-sqlite}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/cli-common.sh"

"$mktrace" -o "$tmp/rp.gtrace" --reused-pid >/dev/null 2>"$tmp/err" ||
	fail "mktrace: $(cat "$tmp/err")"

# info: two processes of pid 4100, the second shown as 536870913; two GPUs, each its peak.
expect_rc 0 "$gputrace" info "$tmp/rp.gtrace"
out_has_line "processes:   2"
out_has_line "  pid 4100: /usr/bin/python3, ppid 1, host node-a, rank 0, exited with status 0"
out_has_line "  pid 4100: /usr/bin/python3, ppid 1, host node-b, shown as pid 536870913, rank 1, exited with status 0"
out_has_line "GPUs:        2"
out_has_line "  GPU 0: NVIDIA H200, 132 SMs, 139.80 GiB, compute capability 9.0, peak memory in use 1.00 MiB"
out_has_line "  GPU 1: NVIDIA H200, 132 SMs, 139.80 GiB, compute capability 9.0, peak memory in use 2.00 MiB"

# stats: node-b's block at node-a's address is its own, not node-a's freed (before: GPU 0
# ended at 0 B).
expect_rc 0 "$gputrace" stats -f csv -r kernels,memory "$tmp/rp.gtrace"
out_has_line "100.00,32000,5,6400.0,6000.0,6000,7000,547.7,7000,gemm_kernel"
out_has_line "0,1048576,1048576,1,0,1048576,NVIDIA H200,GPU-aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa"
out_has_line "1,2097152,0,1,1,2097152,NVIDIA H200,GPU-bbbbbbbb-bbbb-bbbb-bbbb-bbbbbbbbbbbb"
out_has_line "1,1048576,0"
out_has_line "1048576,4100,0,device,500,false,0x7f0000000000"
out_has_line "2097152,536870913,1,device,500,true,0x7f0000000000"

# chrome: two processes, two GPUs; each process's launches, kernels and arrows its own.
expect_rc 0 "$gputrace" export "$tmp/rp.gtrace" -q -f chrome -o "$tmp/rp.json"
json=$tmp/rp.json
count() { grep -c -- "$1" "$json"; }
[ "$(count '"name":"process_name","pid":4100,"tid":0,"args":{"name":"python3 (rank 0) on node-a"}')" = 1 ] ||
	fail "chrome: node-a's process is not pid 4100 once"
[ "$(count '"name":"process_name","pid":536870913,"tid":0,"args":{"name":"python3 (rank 1) on node-b, pid 4100"}')" = 1 ] ||
	fail "chrome: node-b's process is not pid 536870913 once"
[ "$(count '"name":"process_name"')" = 4 ] || fail "chrome: not 4 processes (2 + 2 GPUs)"
[ "$(count '"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":4100,"tid":4100,')" = 3 ] ||
	fail "chrome: not 3 launches in pid 4100"
[ "$(count '"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":536870913,"tid":4100,')" = 2 ] ||
	fail "chrome: not 2 launches in pid 536870913"
[ "$(count '"ph":"X","cat":"kernel","name":"gemm_kernel","pid":5000000,')" = 3 ] ||
	fail "chrome: not 3 kernels on GPU 0"
[ "$(count '"ph":"X","cat":"kernel","name":"gemm_kernel","pid":5000001,')" = 2 ] ||
	fail "chrome: not 2 kernels on GPU 1"
# an arrow's two ends share an id: node-a's start in 4100 and end on GPU 0, node-b's in
# 536870913 and on GPU 1
arrows() {
	grep -o "\"ph\":\"$1\",[^{]*\"id\":[0-9]*,\"pid\":[0-9]*" "$json" |
		sed 's/.*"id":\([0-9]*\),"pid":\([0-9]*\)/\1 \2/' | sort
}
arrows s >"$tmp/s"
arrows f >"$tmp/f"
got=$(join "$tmp/s" "$tmp/f" | awk '{print $2 "->" $3}' | sort | uniq -c | tr -s ' ' | tr '\n' ';')
[ "$got" = " 3 4100->5000000; 2 536870913->5000001;" ] || fail "chrome: arrows [$got]"

# csv: the pid column tells the two apart.
expect_rc 0 "$gputrace" export "$tmp/rp.gtrace" -q -f csv -o "$tmp/rp.csv"
got=$(cut -d, -f1 "$tmp/rp-api.csv" | sort | uniq -c | tr -s ' ' | tr '\n' ';')
[ "$got" = " 3 4100; 2 536870913; 1 pid;" ] || fail "csv: api rows by pid [$got]"
got=$(cut -d, -f1,6 "$tmp/rp-process.csv" | tr -d '\r' | tr '\n' ';')
[ "$got" = "pid,host;4100,node-a;536870913,node-b;" ] || fail "csv: processes [$got]"
got=$(cut -d, -f1 "$tmp/rp-kernel.csv" | sort | uniq -c | tr -s ' ' | tr '\n' ';')
[ "$got" = " 3 4100; 2 536870913; 1 pid;" ] || fail "csv: kernel rows by pid [$got]"

# chrome and perfetto through Perfetto's importer: the same processes, slices and arrows.
expect_rc 0 "$gputrace" export "$tmp/rp.gtrace" -q -f perfetto -o "$tmp/rp.pftrace"
if [ -n "$tp" ] && [ -x "$tp" ] && "$tp" --version >/dev/null 2>&1; then
	for f in rp.json rp.pftrace; do
		got=$("$tp" query "$tmp/$f" "select p.pid, p.name, count(s.id) from slice s
			join thread_track tt on s.track_id = tt.id join thread using (utid)
			join process p using (upid) group by p.upid order by p.pid" 2>/dev/null |
			tail -n +2 | tr '\n' ';')
		[ "$got" = '4100,"python3 (rank 0) on node-a",3;5000000,"GPU 0",3;5000001,"GPU 1",2;536870913,"python3 (rank 1) on node-b, pid 4100",2;' ] ||
			fail "$f through trace_processor: slices per process [$got]"
		got=$("$tp" query "$tmp/$f" "select ap.pid, kp.pid, count(*) from flow f
			join slice a on a.id = f.slice_out join thread_track at on a.track_id = at.id
			join thread atd on atd.utid = at.utid join process ap on ap.upid = atd.upid
			join slice k on k.id = f.slice_in join thread_track kt on k.track_id = kt.id
			join thread ktd on ktd.utid = kt.utid join process kp on kp.upid = ktd.upid
			group by 1, 2 order by 1" 2>/dev/null | tail -n +2 | tr '\n' ';')
		[ "$got" = '4100,5000000,3;536870913,5000001,2;' ] ||
			fail "$f through trace_processor: arrows [$got]"
	done
else
	echo "cli-reused-pid: no runnable trace_processor_shell ($tp): the importer's checks skipped"
fi

if [ "$sqlite" = nosqlite ]; then
	echo "cli-reused-pid: built without SQLite: the SQL checks skipped"
	cli_done cli-reused-pid
fi

# SQL: two globalPids (hwId 0 and 1, pid 4100 in both), two rows wherever processes are
# listed, each process's calls, kernels and threads under its own; the runtime-kernel join
# pairs each launch with its own process's kernel (5 rows, not 9).
sql() {
	expect_rc 0 "$gputrace" sql "$tmp/rp.sqlite" -f csv "$1"
	got=$(tail -n +2 "$tmp/out" | tr -d '\r' | tr '\n' ';')
	[ "$got" = "$2" ] || fail "sql [$1]: [$got], expected [$2]"
}
expect_rc 0 "$gputrace" export "$tmp/rp.gtrace" -q -f sqlite -o "$tmp/rp.sqlite"
a=$(((4100 << 24)))
b=$(((1 << 56) | (4100 << 24)))
sql "SELECT globalPid, pid, name FROM PROCESSES ORDER BY globalPid" "$a,4100,python3;$b,4100,python3;"
sql "SELECT globalPid, pid, host, endHow FROM GPUTRACE_PROCESSES ORDER BY globalPid" \
	"$a,4100,node-a,exited;$b,4100,node-b,exited;"
sql "SELECT globalPid, rank FROM GPUTRACE_RANKS ORDER BY globalPid" "$a,0;$b,1;"
sql "SELECT globalTid, rank FROM MPI_RANKS ORDER BY globalTid" "$((a | 4100)),0;$((b | 4100)),1;"
sql "SELECT globalTid, count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME GROUP BY 1 ORDER BY 1" \
	"$((a | 4100)),3;$((b | 4100)),2;"
sql "SELECT globalPid, count(*), sum(end - start) FROM CUPTI_ACTIVITY_KIND_KERNEL GROUP BY 1 ORDER BY 1" \
	"$a,3,18000;$b,2,14000;"
sql "SELECT count(*), sum(r.globalTid / 0x1000000 = k.globalPid / 0x1000000)
	FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN CUPTI_ACTIVITY_KIND_KERNEL k
	ON k.correlationId = r.correlationId" "5,5;"
sql "SELECT t.globalTid, s.value FROM ThreadNames t JOIN StringIds s ON s.id = t.nameId
	ORDER BY 1" "$((a | 4100)),MainThread;$((b | 4100)),MainThread;"
sql "SELECT id, vmId, uuid FROM TARGET_INFO_GPU ORDER BY id" \
	"0,0,GPU-aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa;1,$((1 << 56)),GPU-bbbbbbbb-bbbb-bbbb-bbbb-bbbbbbbbbbbb;"
sql "SELECT globalPid, cudaId, gpuId FROM GPUTRACE_DEVICES ORDER BY globalPid" "$a,0,0;$b,0,1;"
sql "SELECT hwId, vmId, processId, streamId FROM TARGET_INFO_CUDA_STREAM ORDER BY hwId" \
	"0,0,4100,7;1,0,4100,7;"
sql "SELECT d.gpuId, sum(CASE m.memoryOperationType WHEN 0 THEN m.bytes ELSE -m.bytes END)
	FROM CUDA_GPU_MEMORY_USAGE_EVENTS m JOIN GPUTRACE_DEVICES d
	ON d.globalPid = m.globalPid AND d.cudaId = m.deviceId GROUP BY 1 ORDER BY 1" \
	"0,1048576;1,0;"

# gputrace merge gives node-b's 4100 another pid (268435456): SQL shows both as pid 4100,
# on hosts 0 and 1, each with its kernels.
"$mktrace" -o "$tmp/a.gtrace" --host node-a --rank 0 --world 2 --kernels 10 --api >/dev/null ||
	fail "mktrace node-a"
"$mktrace" -o "$tmp/b.gtrace" --host node-b --rank 1 --world 2 --kernels 6 --api --seed 2 \
	>/dev/null || fail "mktrace node-b"
expect_rc 0 "$gputrace" merge -o "$tmp/m.gtrace" "$tmp/a.gtrace" "$tmp/b.gtrace"
expect_rc 0 "$gputrace" export "$tmp/m.gtrace" -q -f sqlite -o "$tmp/rp.sqlite"
sql "SELECT p.globalPid, p.pid, p.host, count(k.rowid) FROM GPUTRACE_PROCESSES p
	LEFT JOIN CUPTI_ACTIVITY_KIND_KERNEL k ON k.globalPid = p.globalPid
	GROUP BY p.globalPid ORDER BY p.globalPid" "$a,4100,node-a,10;$b,4100,node-b,6;"
sql "SELECT count(*) FROM PROCESSES" "2;"

cli_done cli-reused-pid
