/* Check suite for the SQLite export and its queries (exporters/sqlite*.c): the schema
 * against a list kept here, kernel totals against the stats exporter to the nanosecond, the
 * launch-kernel join, NVTX nesting, every query of docs/sql.md (its memory per GPU and GPU
 * time per NVTX range against stats' on tests/data), threads, GPUs and versions on
 * tests/data, damaged and truncated traces, an export killed half-way, query errors and the
 * reuse rule.
 * Usage: test-sqlite DATA_DIR DOCS_SQL_MD. Runs as a test program. */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "demangle.h"
#include "export-fixture.h"
#include "gputrace/trace.h"
#include "sql.h"
#include "stats.h"
#include "trace-build.h"
#include "trace-synth.h"

static const char *data_dir, *docs_md;
static char dir[64];

/* ---- helpers ----------------------------------------------------------------------- */

static void mkdir_tmp(void)
{
	strcpy(dir, "/tmp/gt-sqlite-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void rm_tmp(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
}

static void path_in(char *buf, size_t n, const char *name)
{
	snprintf(buf, n, "%s/%s", dir, name);
}

/* The temporary an export of `final` writes (.NAME.gt-XXXXXX in its folder) into buf.
 * Returns 0, or -1 when there is none (yet). */
static int find_temporary(const char *final, char *buf, size_t n)
{
	const char *base = strrchr(final, '/') + 1;
	char prefix[512];
	struct dirent *e;
	DIR *d = opendir(dir);
	int ret = -1;

	snprintf(prefix, sizeof(prefix), ".%s.gt-", base);
	while (d && ret < 0 && (e = readdir(d)) != NULL) {
		if (strncmp(e->d_name, prefix, strlen(prefix)) == 0 &&
		    (size_t)snprintf(buf, n, "%.64s/%.255s", dir, e->d_name) < n) {
			ret = 0;
		}
	}
	if (d)
		closedir(d);
	return ret;
}

/* Export `trace` to `db`; returns gt_sql_export's value. */
static int export_db(const char *trace, const char *db, struct gt_sql_export_result *res)
{
	struct gt_sql_export_options o = {.demangle = 1};
	struct gt_reader *r;
	const char *msg = NULL;
	int ret;

	ck_assert_int_eq(gt_reader_open(trace, &r, &msg), 0);
	ret = gt_sql_export(r, db, &o, res, &msg);
	if (ret < 0)
		fprintf(stderr, "export failed: %s\n", msg);
	gt_reader_close(r);
	return ret;
}

static sqlite3 *open_db(const char *path)
{
	sqlite3 *db = NULL;

	ck_assert_int_eq(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	return db;
}

/* The first column of the first row of `sql`, as an integer. */
static int64_t q1(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st = NULL;
	int64_t v;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		ck_abort_msg("%s: %s", sql, sqlite3_errmsg(db));
	ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
	v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

/* Records of `type` in a trace, read with the reader (the exporter's independent twin). */
static uint64_t count_records(const char *trace, unsigned type)
{
	struct gt_reader *r;
	const union gt_record *rec;
	const char *msg;
	uint64_t n = 0;

	ck_assert_int_eq(gt_reader_open(trace, &r, &msg), 0);
	while (gt_reader_next(r, &rec) > 0)
		n += rec->hdr.type == type;
	gt_reader_close(r);
	return n;
}

static void write_synth(const char *path, const struct synth_opts *o, size_t chunk_bytes)
{
	struct gt_trace_info info = {.clock_id = GT_CLOCK_MONOTONIC,
	                             .start_trace_ns = SYNTH_START_NS,
	                             .hostname = "gpu-node-17",
	                             .tool_version = "test"};
	struct gt_writer_options wo = {.chunk_bytes = chunk_bytes};
	struct gt_writer *w;
	union synth_buf b;
	struct synth s;

	ck_assert_int_eq(gt_writer_open(path, &info, &wo, &w), 0);
	synth_init(&s, o);
	while (synth_next(&s, &b))
		ck_assert_int_eq(gt_writer_write(w, &b.rec.hdr), 0);
	ck_assert_int_eq(gt_writer_close(w), 0);
}

/* ---- the schema, as a list kept apart from exporters/formats/sqlite/sqlite-schema.c
 * ---------------- */

/* "name type, name type, ..." of each table, in column order (docs/sql.md, and Nsight
 * Systems' SQLite Schema Reference, 2026.4). */
static const struct {
	const char *table;
	const char *columns;
} schema[] = {
        {"StringIds", "id INTEGER,value TEXT"},
        {"ThreadNames", "nameId INTEGER,priority INTEGER,globalTid INTEGER"},
        {"PROCESSES", "globalPid INTEGER,pid INTEGER,name TEXT"},
        {"META_DATA_EXPORT", "name TEXT,value TEXT"},
        {"TARGET_INFO_SESSION_START_TIME", "utcEpochNs INTEGER,utcTime TEXT,localTime TEXT,"
                                           "systemClockNs INTEGER,sessionStartCntVctNs INTEGER"},
        {"ANALYSIS_DETAILS",
         "globalVid INTEGER,duration INTEGER,startTime INTEGER,stopTime INTEGER"},
        {"TARGET_INFO_GPU",
         "vmId INTEGER,id INTEGER,name TEXT,busLocation TEXT,isDiscrete INTEGER,l2CacheSize "
         "INTEGER,totalMemory INTEGER,memoryBandwidth INTEGER,clockRate INTEGER,smCount "
         "INTEGER,pwGpuId INTEGER,uuid TEXT,luid INTEGER,chipName TEXT,cuDevice INTEGER,"
         "ctxswDevPath TEXT,ctrlDevPath TEXT,revision INTEGER,nodeMask INTEGER,constantMemory "
         "INTEGER,maxIPC INTEGER,maxRegistersPerBlock INTEGER,maxShmemPerBlock INTEGER,"
         "maxShmemPerBlockOptin INTEGER,maxShmemPerSm INTEGER,maxRegistersPerSm INTEGER,"
         "threadsPerWarp INTEGER,asyncEngines INTEGER,maxWarpsPerSm INTEGER,maxBlocksPerSm "
         "INTEGER,maxThreadsPerBlock INTEGER,maxBlockDimX INTEGER,maxBlockDimY INTEGER,"
         "maxBlockDimZ INTEGER,maxGridDimX INTEGER,maxGridDimY INTEGER,maxGridDimZ INTEGER,"
         "computeMajor INTEGER,computeMinor INTEGER,smMajor INTEGER,smMinor INTEGER,"
         "numaNodeId INTEGER"},
        {"TARGET_INFO_CUDA_DEVICE",
         "gpuId INTEGER,cudaId INTEGER,pid INTEGER,uuid TEXT,numMultiprocessors INTEGER"},
        {"TARGET_INFO_CUDA_CONTEXT_INFO",
         "nullStreamId INTEGER,hwId INTEGER,vmId INTEGER,processId INTEGER,deviceId INTEGER,"
         "contextId INTEGER,parentContextId INTEGER,isGreenContext INTEGER,numMultiprocessors "
         "INTEGER,numTpcs INTEGER,tpcMask TEXT,workqueueResourceId INTEGER,"
         "workqueueConcurrencyLimit INTEGER,workqueueSharingScope INTEGER,"
         "workqueueChannelCount INTEGER,workqueueChannelIds TEXT"},
        {"TARGET_INFO_CUDA_STREAM", "streamId INTEGER,hwId INTEGER,vmId INTEGER,processId "
                                    "INTEGER,contextId INTEGER,priority INTEGER,flag INTEGER"},
        {"CUPTI_ACTIVITY_KIND_KERNEL",
         "start INTEGER,end INTEGER,deviceId INTEGER,contextId INTEGER,greenContextId INTEGER,"
         "streamId INTEGER,correlationId INTEGER,globalPid INTEGER,demangledName INTEGER,"
         "shortName INTEGER,mangledName INTEGER,launchType INTEGER,cacheConfig INTEGER,"
         "registersPerThread INTEGER,gridX INTEGER,gridY INTEGER,gridZ INTEGER,blockX INTEGER,"
         "blockY INTEGER,blockZ INTEGER,staticSharedMemory INTEGER,dynamicSharedMemory "
         "INTEGER,localMemoryPerThread INTEGER,localMemoryTotal INTEGER,gridId INTEGER,"
         "sharedMemoryExecuted INTEGER,graphNodeId INTEGER,sharedMemoryLimitConfig INTEGER,"
         "qmdBulkReleaseDone INTEGER,qmdPreexitDone INTEGER,qmdLastCtaDone INTEGER,graphId "
         "INTEGER,clusterX INTEGER,clusterY INTEGER,clusterZ INTEGER,clusterSchedulingPolicy "
         "INTEGER,maxPotentialClusterSize INTEGER,maxActiveClusters INTEGER,"
         "sharedMemoryRequestedPercentage INTEGER,tensorSizeMinusOneElements TEXT"},
        {"CUPTI_ACTIVITY_KIND_MEMCPY",
         "start INTEGER,end INTEGER,deviceId INTEGER,contextId INTEGER,greenContextId INTEGER,"
         "streamId INTEGER,correlationId INTEGER,globalPid INTEGER,bytes INTEGER,copyKind "
         "INTEGER,deprecatedSrcId INTEGER,srcKind INTEGER,dstKind INTEGER,srcDeviceId INTEGER,"
         "srcContextId INTEGER,dstDeviceId INTEGER,dstContextId INTEGER,migrationCause "
         "INTEGER,graphNodeId INTEGER,virtualAddress INTEGER,copyCount INTEGER"},
        {"CUPTI_ACTIVITY_KIND_MEMSET",
         "start INTEGER,end INTEGER,deviceId INTEGER,contextId INTEGER,greenContextId INTEGER,"
         "streamId INTEGER,correlationId INTEGER,globalPid INTEGER,value INTEGER,bytes "
         "INTEGER,graphNodeId INTEGER,memKind INTEGER"},
        {"CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
         "start INTEGER,end INTEGER,deviceId INTEGER,contextId INTEGER,greenContextId INTEGER,"
         "streamId INTEGER,correlationId INTEGER,globalPid INTEGER,deprecatedSyncType INTEGER,"
         "syncType INTEGER,eventId INTEGER,eventSyncId INTEGER"},
        {"CUPTI_ACTIVITY_KIND_GRAPH_TRACE",
         "start INTEGER,end INTEGER,deviceId INTEGER,contextId INTEGER,greenContextId INTEGER,"
         "streamId INTEGER,correlationId INTEGER,globalPid INTEGER,graphId INTEGER,graphExecId "
         "INTEGER"},
        {"CUPTI_ACTIVITY_KIND_RUNTIME",
         "start INTEGER,end INTEGER,eventClass INTEGER,globalTid INTEGER,correlationId INTEGER,"
         "nameId INTEGER,returnValue INTEGER,callchainId INTEGER"},
        {"CUDA_GPU_MEMORY_USAGE_EVENTS",
         "start INTEGER,globalPid INTEGER,deviceId INTEGER,contextId INTEGER,address INTEGER,"
         "pc INTEGER,bytes INTEGER,memKind INTEGER,memoryOperationType INTEGER,name TEXT,"
         "correlationId INTEGER,streamId INTEGER,localMemoryPoolAddress INTEGER,"
         "localMemoryPoolReleaseThreshold INTEGER,localMemoryPoolSize INTEGER,"
         "localMemoryPoolUtilizedSize INTEGER,importedMemoryPoolAddress INTEGER,"
         "importedMemoryPoolProcessId INTEGER"},
        {"CUDA_GPU_MEMORY_POOL_EVENTS",
         "start INTEGER,globalPid INTEGER,deviceId INTEGER,address INTEGER,operationType "
         "INTEGER,poolType INTEGER,correlationId INTEGER,minBytesToKeep INTEGER,"
         "localMemoryPoolReleaseThreshold INTEGER,localMemoryPoolSize INTEGER,"
         "localMemoryPoolUtilizedSize INTEGER"},
        {"MPI_RANKS", "globalTid INTEGER,rank INTEGER"},
        {"NVTX_EVENTS",
         "start INTEGER,end INTEGER,eventType INTEGER,rangeId INTEGER,category INTEGER,color "
         "INTEGER,text TEXT,globalTid INTEGER,endGlobalTid INTEGER,textId INTEGER,domainId "
         "INTEGER,uint64Value INTEGER,int64Value INTEGER,doubleValue REAL,uint32Value INTEGER,"
         "int32Value INTEGER,floatValue REAL,jsonTextId INTEGER,jsonText TEXT,binaryData TEXT,"
         "eventId INTEGER,callchainId INTEGER"},
        {"ENUM_NSYS_EVENT_TYPE", "id INTEGER,name TEXT,label TEXT"},
        {"ENUM_NSYS_EVENT_CLASS", "id INTEGER,name TEXT,label TEXT"},
        {"ENUM_CUDA_MEMCPY_OPER", "id INTEGER,name TEXT,label TEXT"},
        {"ENUM_CUDA_MEM_KIND", "id INTEGER,name TEXT,label TEXT"},
        {"ENUM_CUDA_DEV_MEM_EVENT_OPER", "id INTEGER,name TEXT,label TEXT"},
        {"ENUM_CUPTI_SYNC_TYPE", "id INTEGER,name TEXT,label TEXT"},
        {"ENUM_CUPTI_STREAM_TYPE", "id INTEGER,name TEXT,label TEXT"},
        {"ENUM_CUDA_KERNEL_LAUNCH_TYPE", "id INTEGER,name TEXT,label TEXT"},
        {"ENUM_CUDA_FUNC_CACHE_CONFIG", "id INTEGER,name TEXT,label TEXT"},
        {"ENUM_CUDA_SHARED_MEM_LIMIT_CONFIG", "id INTEGER,name TEXT,label TEXT"},
        {"ENUM_CUDA_MEMPOOL_OPER", "id INTEGER,name TEXT,label TEXT"},
        {"ENUM_CUDA_MEMPOOL_TYPE", "id INTEGER,name TEXT,label TEXT"},
        {"GPUTRACE_TRACE",
         "formatVersion INTEGER,clockId INTEGER,clockName TEXT,startRealtimeNs INTEGER,"
         "startTraceNs INTEGER,hostname TEXT,cmdline TEXT,toolVersion TEXT,cudaVersion TEXT,"
         "cuptiVersion TEXT,driverVersion TEXT,recovered INTEGER,chunksRead INTEGER,"
         "chunksSkipped INTEGER,bytesSkipped INTEGER,recordsSkipped INTEGER,records INTEGER,"
         "zeroNs INTEGER"},
        {"GPUTRACE_PROCESSES",
         "globalPid INTEGER,pid INTEGER,ppid INTEGER,host TEXT,exe TEXT,cmdline TEXT,start "
         "INTEGER,end INTEGER,endHow TEXT,endCode INTEGER,standalone INTEGER"},
        {"GPUTRACE_RANKS", "globalPid INTEGER,pid INTEGER,host TEXT,rank INTEGER,localRank "
                           "INTEGER,worldSize INTEGER"},
        {"GPUTRACE_LOSSES",
         "timestamp INTEGER,globalPid INTEGER,pid INTEGER,source INTEGER,sourceName TEXT,"
         "recordType INTEGER,recordTypeName TEXT,count INTEGER,unit TEXT"},
        {"GPUTRACE_NOTICES",
         "timestamp INTEGER,globalPid INTEGER,pid INTEGER,severity INTEGER,severityName TEXT,"
         "code INTEGER,codeName TEXT,message TEXT,detail INTEGER"},
        {"GPUTRACE_CAPTURE_RANGES", "globalPid INTEGER,pid INTEGER,start INTEGER,end INTEGER"},
        {"GPUTRACE_CLOCKS", "globalPid INTEGER,pid INTEGER,traceNs INTEGER,realtimeNs "
                            "INTEGER,clockId INTEGER,clockName TEXT"},
        {"GPUTRACE_MEMORY_POOLS",
         "timestamp INTEGER,globalPid INTEGER,pid INTEGER,deviceId INTEGER,address INTEGER,"
         "operation TEXT,poolType TEXT,reservedBytes INTEGER,releaseThresholdBytes INTEGER,"
         "correlationId INTEGER"},
        {"GPUTRACE_OVERHEAD", "start INTEGER,end INTEGER,globalPid INTEGER,kind INTEGER,"
                              "kindName TEXT,objectKind TEXT,objectId INTEGER,globalTid "
                              "INTEGER"},
        {"GPUTRACE_DEVICES",
         "globalPid INTEGER,pid INTEGER,cudaId INTEGER,gpuId INTEGER,uuid TEXT"},
        {"GPUTRACE_NVTX_GPU_PROJECTION",
         "eventId INTEGER,globalTid INTEGER,projStart INTEGER,projEnd INTEGER,"
         "projDuration INTEGER,busyDuration INTEGER,gpuOps INTEGER,level INTEGER"},
        {"CUDA_CALLCHAINS",
         "id INTEGER,stackDepth INTEGER,symbol INTEGER,module INTEGER,originalIP INTEGER,"
         "unresolved INTEGER,lineNumber INTEGER"},
        {"GPU_METRICS",
         "rawTimestamp INTEGER,timestamp INTEGER,typeId INTEGER,metricId INTEGER,value REAL"},
        {"TARGET_INFO_GPU_METRICS",
         "typeId INTEGER,sourceId INTEGER,typeName TEXT,metricId INTEGER,metricName TEXT"},
};
#define NSCHEMA (sizeof(schema) / sizeof(schema[0]))

static char fx_trace[128], fx_db[128];
static const struct fx_opts fxo = {.procs = 2, .iters = 40, .gpu_batch = 4, .kernels = 3};

static void fixture_setup(void)
{
	struct gt_sql_export_result res;

	mkdir_tmp();
	path_in(fx_trace, sizeof(fx_trace), "fx.gtrace");
	path_in(fx_db, sizeof(fx_db), "fx.sqlite");
	ck_assert_int_eq(fx_write(fx_trace, &fxo), 0);
	ck_assert_int_eq(export_db(fx_trace, fx_db, &res), 0);
}

START_TEST(schema_tables_and_columns)
{
	sqlite3 *db = open_db(fx_db);
	char sql[256];

	/* nothing more, nothing less (indexes and SQLite's own sqlite_stat1 aside) */
	ck_assert_int_eq(q1(db, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND "
	                        "name NOT LIKE 'sqlite\\_%' ESCAPE '\\'"),
	                 NSCHEMA);
	for (size_t t = 0; t < NSCHEMA; t++) {
		sqlite3_stmt *st;
		char got[2048] = "";

		snprintf(sql, sizeof(sql), "PRAGMA table_info(\"%s\")", schema[t].table);
		ck_assert_int_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
		while (sqlite3_step(st) == SQLITE_ROW) {
			size_t len = strlen(got);

			snprintf(got + len, sizeof(got) - len, "%s%s %s", len ? "," : "",
			         (const char *)sqlite3_column_text(st, 1),
			         (const char *)sqlite3_column_text(st, 2));
		}
		sqlite3_finalize(st);
		ck_assert_msg(strcmp(got, schema[t].columns) == 0, "%s:\n got %s\nwant %s",
		              schema[t].table, got, schema[t].columns);
	}
	/* the enum values queries depend on */
	ck_assert_int_eq(q1(db, "SELECT id FROM ENUM_NSYS_EVENT_TYPE WHERE name = "
	                        "'NvtxPushPopRange'"),
	                 59);
	ck_assert_int_eq(q1(db, "SELECT id FROM ENUM_NSYS_EVENT_TYPE WHERE name = "
	                        "'NvtxStartEndRange'"),
	                 60);
	ck_assert_int_eq(q1(db, "SELECT id FROM ENUM_NSYS_EVENT_TYPE WHERE name = 'NvtxMark'"), 34);
	ck_assert_int_eq(q1(db, "SELECT id FROM ENUM_NSYS_EVENT_CLASS WHERE name = "
	                        "'TRACE_PROCESS_EVENT_CUDA_DRIVER'"),
	                 1);
	ck_assert_int_eq(q1(db, "SELECT id FROM ENUM_CUDA_MEM_KIND WHERE label = 'Device'"), 2);
	ck_assert_int_eq(q1(db, "SELECT count(*) FROM ENUM_CUDA_MEMCPY_OPER"), 14);
	/* a table with no data exists, empty */
	ck_assert_int_eq(q1(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_GRAPH_TRACE"), 0);
	sqlite3_close(db);
}
END_TEST

static const char issue_join[] =
        "SELECT r.start, r.globalTid, k.start, k.end - k.start, s.value "
        "FROM CUPTI_ACTIVITY_KIND_RUNTIME r "
        "JOIN CUPTI_ACTIVITY_KIND_KERNEL k ON r.correlationId = k.correlationId "
        "JOIN StringIds s ON s.id = k.shortName";

/* docs/sql.md's "GPU time inside each NVTX range, per step" */
static const char nvtx_join[] =
        "SELECT n.start, count(k.correlationId), coalesce(sum(k.end - k.start), 0) "
        "FROM NVTX_EVENTS AS n "
        "LEFT JOIN CUPTI_ACTIVITY_KIND_RUNTIME AS r ON r.globalTid = n.globalTid "
        "AND r.start BETWEEN n.start AND n.end AND r.end <= n.end "
        "LEFT JOIN CUPTI_ACTIVITY_KIND_KERNEL AS k ON k.correlationId = r.correlationId "
        "WHERE n.eventType = 59 AND n.text = 'step' GROUP BY n.eventId ORDER BY n.start";

/* Whether a line of the query plan of sql starts with `step`. */
static int plan_uses(sqlite3 *db, const char *sql, const char *step)
{
	char eqp[1024];
	sqlite3_stmt *st;
	int found = 0;

	snprintf(eqp, sizeof(eqp), "EXPLAIN QUERY PLAN %s", sql);
	ck_assert_int_eq(sqlite3_prepare_v2(db, eqp, -1, &st, NULL), SQLITE_OK);
	while (sqlite3_step(st) == SQLITE_ROW)
		found |= strstr((const char *)sqlite3_column_text(st, 3), step) != NULL;
	sqlite3_finalize(st);
	return found;
}

/* The planner's statistics make the runtime-kernel join search the kernels' index instead
 * of building an automatic index for each query. */
static void check_join_plan(sqlite3 *db)
{
	ck_assert_int_eq(plan_uses(db, issue_join,
	                           "SEARCH k USING INDEX "
	                           "GPUTRACE_IDX_KERNEL_CORRELATION"),
	                 1);
	ck_assert_int_eq(plan_uses(db, issue_join, "AUTOMATIC"), 0);
}

/* The tables the exporter loads without types and NOT NULL get them back, in the file:
 * a new connection sees them, enforces them, and the rows are what they would have been. */
START_TEST(schema_constraints_after_load)
{
	static const struct {
		const char *table;
		int notnull;
	} nn[] = {
	        {"CUPTI_ACTIVITY_KIND_KERNEL", 20},
	        {"CUPTI_ACTIVITY_KIND_RUNTIME", 5},
	        {"CUPTI_ACTIVITY_KIND_MEMCPY", 7},
	        {"CUPTI_ACTIVITY_KIND_MEMSET", 7},
	        {"CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", 7},
	        {"CUPTI_ACTIVITY_KIND_GRAPH_TRACE", 7},
	        {"NVTX_EVENTS", 3},
	};
	sqlite3 *db = open_db(fx_db);
	sqlite3_stmt *st;
	char sql[256];

	ck_assert_int_eq(sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, NULL),
	                 SQLITE_OK);
	ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
	ck_assert_str_eq((const char *)sqlite3_column_text(st, 0), "ok");
	sqlite3_finalize(st);
	for (size_t i = 0; i < sizeof(nn) / sizeof(nn[0]); i++) {
		snprintf(sql, sizeof(sql),
		         "SELECT count(*) FROM pragma_table_info('%s') WHERE \"notnull\"",
		         nn[i].table);
		ck_assert_msg(q1(db, sql) == nn[i].notnull, "%s: %lld NOT NULL columns",
		              nn[i].table, (long long)q1(db, sql));
	}
	ck_assert_int_gt(q1(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL"), 0);
	check_join_plan(db);
	ck_assert_int_eq(q1(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE "
	                        "typeof(start) != 'integer' OR typeof(gridX) != 'integer' OR "
	                        "typeof(tensorSizeMinusOneElements) != 'text' OR "
	                        "typeof(graphId) != 'null'"),
	                 0);
	sqlite3_close(db);
	ck_assert_int_eq(sqlite3_open(fx_db, &db), SQLITE_OK);
	ck_assert_int_eq(sqlite3_exec(db, "BEGIN", NULL, NULL, NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_exec(db,
	                              "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end) "
	                              "VALUES (NULL, 1)",
	                              NULL, NULL, NULL),
	                 SQLITE_CONSTRAINT);
	ck_assert_str_eq(sqlite3_errmsg(db),
	                 "NOT NULL constraint failed: CUPTI_ACTIVITY_KIND_KERNEL.start");
	ck_assert_int_eq(
	        sqlite3_exec(db,
	                     "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, eventClass, "
	                     "nameId, returnValue, correlationId) VALUES (1, 2, 0, 1, 0, '42')",
	                     NULL, NULL, NULL),
	        SQLITE_OK);
	/* the INTEGER affinity is back: a text that looks like a number is stored as one */
	ck_assert_int_eq(q1(db, "SELECT typeof(correlationId) = 'integer' FROM "
	                        "CUPTI_ACTIVITY_KIND_RUNTIME ORDER BY rowid DESC LIMIT 1"),
	                 1);
	ck_assert_int_eq(sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
}
END_TEST

/* sqlite3_auto_extension's entry point: every new connection in defensive mode, as in a
 * SQLite built with SQLITE_DEFAULT_DEFENSIVE=1, where writable_schema alone does not let
 * sqlite_master be changed. */
static int defensive_on(sqlite3 *db, char **err, const void *api)
{
	(void)err;
	(void)api;
	return sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, (int *)NULL);
}

/* The export writes its tables' exact schema on a SQLite whose connections start defensive
 * too (the loose load's set_schema turns defensive mode off on its own connection). */
START_TEST(schema_on_defensive_sqlite)
{
	struct gt_sql_export_result res;
	char db[160];
	sqlite3 *h;

	path_in(db, sizeof(db), "defensive.sqlite");
	ck_assert_int_eq(sqlite3_auto_extension((void (*)(void))defensive_on), SQLITE_OK);
	ck_assert_int_eq(export_db(fx_trace, db, &res), 0);
	ck_assert_int_eq(sqlite3_cancel_auto_extension((void (*)(void))defensive_on), 1);
	h = open_db(db);
	ck_assert_int_eq(q1(h, "SELECT count(*) FROM pragma_table_info("
	                       "'CUPTI_ACTIVITY_KIND_KERNEL') WHERE \"notnull\""),
	                 20);
	ck_assert_int_eq(q1(h, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL"),
	                 fxo.procs * fxo.iters * fxo.kernels);
	sqlite3_close(h);
}
END_TEST

START_TEST(fixture_counts_and_ids)
{
	struct fx_expect e;
	sqlite3 *db = open_db(fx_db);
	int64_t first_name = 0;

	fx_expect(&fxo, &e);
	/* kernel j of step i has name (i * kernels + j) % 7 in every process */
	for (unsigned i = 0; i < fxo.iters * fxo.kernels; i++)
		first_name += i % FX_NKERNEL_NAMES == 0;
	ck_assert_int_eq(q1(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL"), e.kernels);
	ck_assert_int_eq(q1(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY"), e.memcpys);
	ck_assert_int_eq(q1(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMSET"), e.memsets);
	ck_assert_int_eq(q1(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION"),
	                 e.syncs);
	ck_assert_int_eq(q1(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE "
	                        "eventClass = 0"),
	                 e.runtime);
	ck_assert_int_eq(q1(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE "
	                        "eventClass = 1"),
	                 e.driver);
	ck_assert_int_eq(q1(db, "SELECT count(*) FROM NVTX_EVENTS WHERE eventType IN (59, 60)"),
	                 e.nvtx_ranges);
	ck_assert_int_eq(q1(db, "SELECT count(*) FROM NVTX_EVENTS WHERE eventType = 34"),
	                 e.nvtx_marks);
	/* one NvtxDomainCreate per process for the one named domain */
	ck_assert_int_eq(q1(db, "SELECT count(*) FROM NVTX_EVENTS WHERE eventType = 75 AND text "
	                        "= 'my domain'"),
	                 fxo.procs);
	ck_assert_int_eq(q1(db, "SELECT count(*) FROM CUDA_GPU_MEMORY_USAGE_EVENTS"), e.memory);
	ck_assert_int_eq(q1(db, "SELECT count(*) FROM GPUTRACE_LOSSES"), e.losses);
	ck_assert_int_eq(q1(db, "SELECT sum(count) FROM GPUTRACE_LOSSES"), e.lost);
	ck_assert_int_eq(q1(db, "SELECT count(*) FROM GPUTRACE_NOTICES"), e.notices);
	ck_assert_int_eq(q1(db, "SELECT count(*) FROM GPUTRACE_PROCESSES WHERE end IS NOT NULL"),
	                 e.ends);
	ck_assert_int_eq(q1(db, "SELECT count(*) FROM GPUTRACE_RANKS WHERE worldSize = 2"), 2);
	ck_assert_int_eq(q1(db, "SELECT count(*) FROM MPI_RANKS"), 2);
	/* serialized ids decode to the recorded pids and tids (docs/sql.md, "Identifiers") */
	ck_assert_int_eq(q1(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE "
	                        "globalTid / 0x1000000 % 0x1000000 NOT IN (1000, 1001) OR "
	                        "globalTid % 0x1000000 != globalTid / 0x1000000 % 0x1000000"),
	                 0);
	ck_assert_int_eq(q1(db, "SELECT min(globalPid) FROM CUPTI_ACTIVITY_KIND_KERNEL"),
	                 (int64_t)1000 << 24);
	ck_assert_int_eq(q1(db, "SELECT count(DISTINCT globalPid) FROM PROCESSES"), 2);
	/* correlation ids: the second process's go above 2^32 */
	ck_assert_int_eq(q1(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE "
	                        "correlationId >> 32 != globalPid / 0x1000000 % 0x1000000 - 1000"),
	                 0);
	/* names: mangled, demangled, base */
	ck_assert_int_eq(q1(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds "
	                        "m ON m.id = k.mangledName JOIN StringIds d ON d.id = "
	                        "k.demangledName JOIN StringIds b ON b.id = k.shortName WHERE "
	                        "m.value = '_Z6kernelPf' AND d.value = 'kernel(float*)' AND "
	                        "b.value = 'kernel'"),
	                 first_name * fxo.procs);
	sqlite3_close(db);
}
END_TEST

/* Per-name kernel counts and total ns from SQL equal `gputrace stats -f csv` (the same
 * gt_stats_report), to the nanosecond, keyed by the mangled name. */
static void check_stats(const char *trace, const char *db_path)
{
	struct gt_stats_options so = {
	        .reports = GT_STATS_REPORT_KERNELS, .format = GT_STATS_FORMAT_CSV, .mangled = true};
	struct gt_reader *r;
	const char *msg;
	char *buf = NULL, *line, *save = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	sqlite3 *db = open_db(db_path);
	sqlite3_stmt *st;
	unsigned rows = 0;

	ck_assert_int_eq(gt_reader_open(trace, &r, &msg), 0);
	ck_assert_int_eq(gt_stats_report(r, f, &so, &msg), 0);
	gt_reader_close(r);
	fclose(f);
	ck_assert_int_eq(
	        sqlite3_prepare_v2(db,
	                           "SELECT count(*), sum(max(k.end - k.start, 0)) FROM "
	                           "CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = "
	                           "k.mangledName WHERE s.value = ?",
	                           -1, &st, NULL),
	        SQLITE_OK);
	/* "# kernels", the header, then time_pct,total_ns,instances,...,p99_ns,name */
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char name[8192];
		unsigned long long total, n;
		const char *p = line;
		size_t k = 0;

		if (line[0] == '#' || strncmp(line, "time_pct", 8) == 0 || !line[0])
			continue;
		ck_assert_int_eq(sscanf(line, "%*[^,],%llu,%llu", &total, &n), 2);
		for (int commas = 0; commas < 9; p++)
			commas += *p == ',';
		/* the name: RFC 4180, quoted when it holds a comma or a quote */
		if (*p == '"') {
			for (p++; *p && !(p[0] == '"' && p[1] != '"'); p++) {
				if (p[0] == '"')
					p++;
				name[k++] = *p;
			}
		} else {
			while (*p && *p != '\r')
				name[k++] = *p++;
		}
		name[k] = '\0';
		sqlite3_bind_text(st, 1, name, -1, SQLITE_TRANSIENT);
		ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
		ck_assert_msg((unsigned long long)sqlite3_column_int64(st, 0) == n &&
		                      (unsigned long long)sqlite3_column_int64(st, 1) == total,
		              "%s: stats %llu x %llu ns, sql %lld x %lld ns", name, n, total,
		              (long long)sqlite3_column_int64(st, 0),
		              (long long)sqlite3_column_int64(st, 1));
		sqlite3_reset(st);
		rows++;
	}
	sqlite3_finalize(st);
	/* and SQL has no name stats did not list */
	ck_assert_int_eq(q1(db, "SELECT count(DISTINCT mangledName) FROM "
	                        "CUPTI_ACTIVITY_KIND_KERNEL"),
	                 rows);
	ck_assert_uint_gt(rows, 0);
	sqlite3_close(db);
	free(buf);
}

/* The issue's query returns one row per launched kernel, each kernel once. */
static void check_join(const char *trace, const char *db_path)
{
	sqlite3 *db = open_db(db_path);
	uint64_t kernels = count_records(trace, GT_REC_KERNEL);

	ck_assert_int_eq(q1(db, "SELECT count(*) FROM (SELECT r.start, r.globalTid, k.start, "
	                        "k.end - k.start, s.value FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN "
	                        "CUPTI_ACTIVITY_KIND_KERNEL k ON r.correlationId = k.correlationId "
	                        "JOIN StringIds s ON s.id = k.shortName)"),
	                 kernels);
	ck_assert_int_eq(q1(db, "SELECT count(DISTINCT k.rowid) FROM CUPTI_ACTIVITY_KIND_RUNTIME r "
	                        "JOIN CUPTI_ACTIVITY_KIND_KERNEL k ON r.correlationId = "
	                        "k.correlationId"),
	                 kernels);
	/* and the launch is the same process's */
	ck_assert_int_eq(q1(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN "
	                        "CUPTI_ACTIVITY_KIND_KERNEL k ON r.correlationId = k.correlationId "
	                        "WHERE r.globalTid / 0x1000000 != k.globalPid / 0x1000000"),
	                 0);
	sqlite3_close(db);
}

/* Push/pop ranges nest as recorded: the depth SQL derives (enclosing ranges of the same
 * thread) is each record's own depth, and no two ranges of a thread partly overlap. */
static void check_nesting(const char *trace, const char *db_path)
{
	sqlite3 *db = open_db(db_path);
	sqlite3_stmt *st;
	struct gt_reader *r;
	const union gt_record *rec;
	const char *msg;
	uint64_t n = 0;

	ck_assert_int_eq(q1(db, "SELECT count(*) FROM NVTX_EVENTS a JOIN NVTX_EVENTS b ON "
	                        "a.globalTid = b.globalTid AND a.eventType = 59 AND b.eventType = "
	                        "59 AND a.start < b.start AND b.start < a.end AND a.end < b.end"),
	                 0);
	ck_assert_int_eq(sqlite3_prepare_v2(
	                         db,
	                         "SELECT (SELECT count(*) FROM NVTX_EVENTS o WHERE o.eventType = "
	                         "59 AND o.globalTid = n.globalTid AND o.eventId != n.eventId AND "
	                         "o.start <= n.start AND o.end >= n.end) FROM NVTX_EVENTS n WHERE "
	                         "n.eventType = 59 AND n.start = ? AND n.end = ? AND "
	                         "n.globalTid % 0x1000000 = ? AND n.globalTid / 0x1000000 % "
	                         "0x1000000 = ?",
	                         -1, &st, NULL),
	                 SQLITE_OK);
	ck_assert_int_eq(gt_reader_open(trace, &r, &msg), 0);
	while (gt_reader_next(r, &rec) > 0) {
		if (rec->hdr.type != GT_REC_NVTX || rec->nvtx.kind != GT_NVTX_PUSH_POP)
			continue;
		sqlite3_bind_int64(st, 1, (int64_t)rec->nvtx.start_ns);
		sqlite3_bind_int64(st, 2, (int64_t)rec->nvtx.end_ns);
		sqlite3_bind_int64(st, 3, rec->nvtx.tid);
		sqlite3_bind_int64(st, 4, rec->hdr.pid);
		ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
		ck_assert_int_eq(sqlite3_column_int64(st, 0), rec->nvtx.depth);
		sqlite3_reset(st);
		n++;
	}
	gt_reader_close(r);
	sqlite3_finalize(st);
	ck_assert_int_eq(q1(db, "SELECT count(*) FROM NVTX_EVENTS WHERE eventType = 59"), n);
	sqlite3_close(db);
}

START_TEST(fixture_stats_join_nesting)
{
	check_stats(fx_trace, fx_db);
	check_join(fx_trace, fx_db);
	check_nesting(fx_trace, fx_db);
}
END_TEST

/* The traces recorded on an H200 (tests/data), and synthetic ones of several processes. */
START_TEST(real_and_synthetic_traces)
{
	static const char *const real[] = {"example.gtrace", "multistream.gtrace"};
	/* their zeros (docs/cli.md, "Time"): the headers' starts, 85 and 79 us before the
	 * first records, as `gputrace info` prints them */
	static const int64_t zero[] = {49680517237, 26835747308};
	char trace[512], db[128];
	struct gt_sql_export_result res;

	mkdir_tmp();
	for (unsigned i = 0; i < 2; i++) {
		sqlite3 *h;

		snprintf(trace, sizeof(trace), "%s/%s", data_dir, real[i]);
		path_in(db, sizeof(db), "real.sqlite");
		ck_assert_int_eq(export_db(trace, db, &res), 0);
		check_stats(trace, db);
		check_join(trace, db);
		check_nesting(trace, db);
		h = open_db(db);
		ck_assert_int_eq(q1(h, "SELECT zeroNs FROM GPUTRACE_TRACE"), zero[i]);
		ck_assert_int_eq(q1(h, "SELECT zeroNs = startTraceNs FROM GPUTRACE_TRACE"), 1);
		sqlite3_close(h);
	}
	for (unsigned procs = 1; procs <= 4; procs += 3) {
		struct synth_opts o = {.kernels = 20000,
		                       .names = 50,
		                       .processes = procs,
		                       .seed = procs,
		                       .api = true,
		                       .memcpy = true,
		                       .steps = true,
		                       .losses = 3};
		sqlite3 *h;

		path_in(trace, sizeof(trace), "synth.gtrace");
		path_in(db, sizeof(db), "synth.sqlite");
		write_synth(trace, &o, 0);
		ck_assert_int_eq(export_db(trace, db, &res), 0);
		ck_assert_int_eq(res.records, count_records(trace, GT_REC_KERNEL) * 2 +
		                                      count_records(trace, GT_REC_MEMCPY) +
		                                      count_records(trace, GT_REC_STRING) +
		                                      count_records(trace, GT_REC_LOSS) +
		                                      count_records(trace, GT_REC_NVTX) +
		                                      procs * (SYNTH_META_PER_PROC + 1));
		check_stats(trace, db);
		check_join(trace, db);
		/* the calls inside each step range: a range of the runtime's start index, both
		 * ends bounded, never an automatic index built for the query */
		h = open_db(db);
		ck_assert_int_gt(q1(h, "SELECT count(*) FROM NVTX_EVENTS WHERE eventType = 59"), 0);
		ck_assert_int_eq(plan_uses(h, nvtx_join,
		                           "SEARCH r USING INDEX GPUTRACE_IDX_RUNTIME_START "
		                           "(start>? AND start<?)"),
		                 1);
		ck_assert_int_eq(plan_uses(h, nvtx_join, "AUTOMATIC"), 0);
		check_join_plan(h);
		/* every GPU described: the SM clock in Hz, memory at 2,619 MHz double data rate
		 * on a 6,144-bit bus in bytes per second */
		ck_assert_int_eq(q1(h, "SELECT count(*) FROM TARGET_INFO_GPU WHERE clockRate = "
		                       "1980000000 AND memoryBandwidth = 4022784000000"),
		                 q1(h, "SELECT count(*) FROM TARGET_INFO_GPU"));
		ck_assert_int_ge(q1(h, "SELECT count(*) FROM TARGET_INFO_GPU"), 1);
		sqlite3_close(h);
	}
	rm_tmp();
}
END_TEST

/* Every ```sql block of docs/sql.md runs and returns rows on the fixture. */
START_TEST(doc_queries_run)
{
	FILE *f = fopen(docs_md, "r");
	char line[1024], *sql = NULL;
	size_t len = 0;
	bool in = false;
	unsigned n = 0;

	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f)) {
		if (!in && strncmp(line, "```sql", 6) == 0) {
			in = true;
			len = 0;
			continue;
		}
		if (in && strncmp(line, "```", 3) == 0) {
			struct gt_sql_error err;
			char *out = NULL;
			size_t outlen = 0;
			FILE *o = open_memstream(&out, &outlen);
			int ret;

			in = false;
			ret = gt_sql_query(fx_db, sql, o, GT_SQL_FORMAT_CSV, &err);
			fclose(o);
			ck_assert_msg(ret == 1, "docs/sql.md query failed (%d: %s):\n%s", ret,
			              err.message, sql);
			/* a header line and at least one row; a query of the stacks may return none
			 * only while the fixture has none (it records no --backtrace) */
			if (strstr(sql, "CUDA_CALLCHAINS") &&
			    !(strchr(out, '\n') && strchr(out, '\n')[1] != '\0')) {
				sqlite3 *h = open_db(fx_db);

				ck_assert_int_eq(q1(h, "SELECT count(*) FROM CUDA_CALLCHAINS"), 0);
				sqlite3_close(h);
			} else {
				ck_assert_msg(strchr(out, '\n') && strchr(out, '\n')[1] != '\0',
				              "docs/sql.md query returned no rows:\n%s", sql);
			}
			free(out);
			n++;
			continue;
		}
		if (in) {
			size_t l = strlen(line);
			char *ns = realloc(sql, len + l + 1);

			ck_assert_ptr_nonnull(ns);
			sql = ns;
			memcpy(sql + len, line, l + 1);
			len += l;
		}
	}
	fclose(f);
	free(sql);
	/* the examples the page promises: the issue's join, thirteen worked queries and the
	 * stacks query */
	ck_assert_uint_eq(n, 15);
}
END_TEST

/* The ```sql block of docs/sql.md after the line that starts with `heading`, skipping `skip`
 * blocks; malloc'd. */
static char *doc_query(const char *heading, unsigned skip)
{
	FILE *f = fopen(docs_md, "r");
	char line[1024], *sql = NULL;
	size_t len = 0;
	int state = 0; /* 1: after the heading, 2: inside its block */

	ck_assert_ptr_nonnull(f);
	while (state < 3 && fgets(line, sizeof(line), f)) {
		if (state == 0 && strncmp(line, heading, strlen(heading)) == 0)
			state = 1;
		else if (state == 1 && strncmp(line, "```sql", 6) == 0)
			state = 2;
		else if (state == 2 && strncmp(line, "```", 3) == 0)
			state = skip-- ? 1 : 3;
		else if (state == 2 && skip) {
			continue;
		} else if (state == 2) {
			size_t l = strlen(line);
			char *ns = realloc(sql, len + l + 1);

			ck_assert_ptr_nonnull(ns);
			sql = ns;
			memcpy(sql + len, line, l + 1);
			len += l;
		}
	}
	fclose(f);
	ck_assert_msg(state == 3, "no sql block after [%s] in docs/sql.md", heading);
	return sql;
}

/* `sql`'s rows in CSV without the header, lines joined by ';'; malloc'd. */
static char *query_rows(const char *db_path, const char *sql)
{
	struct gt_sql_error err;
	char *out = NULL, *rows, *p, *q;
	size_t len = 0;
	FILE *o = open_memstream(&out, &len);

	ck_assert_int_eq(gt_sql_query(db_path, sql, o, GT_SQL_FORMAT_CSV, &err), 1);
	fclose(o);
	p = strchr(out, '\n');
	rows = strdup(p ? p + 1 : "");
	for (p = q = rows; *p; p++)
		if (*p != '\r')
			*q++ = *p == '\n' ? ';' : *p;
	*q = '\0';
	free(out);
	return rows;
}

/* The GPU rows of `gputrace stats -r memory -f csv` (gpu, peak, end, allocs, frees, bytes
 * allocated; name and uuid left out), joined by ';'; malloc'd. */
static char *stats_memory_rows(const char *trace)
{
	struct gt_stats_options so = {.reports = GT_STATS_REPORT_MEMORY,
	                              .format = GT_STATS_FORMAT_CSV};
	struct gt_reader *r;
	const char *msg;
	char *buf = NULL, *line, *save = NULL, *rows = calloc(1, 4096);
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	bool in = false;

	ck_assert_ptr_nonnull(rows);
	ck_assert_int_eq(gt_reader_open(trace, &r, &msg), 0);
	ck_assert_int_eq(gt_stats_report(r, f, &so, &msg), 0);
	gt_reader_close(r);
	fclose(f);
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *c = line;

		if (strcmp(line, "# memory") == 0) {
			in = true;
			continue;
		}
		if (!in || strncmp(line, "gpu,", 4) == 0)
			continue;
		if (line[0] == '#' || line[0] == ',')
			break; /* the next report, or the host row */
		for (int commas = 0; *c && commas < 6; c++)
			commas += *c == ',';
		c[-1] = '\0';
		strcat(rows, line);
		strcat(rows, ";");
	}
	free(buf);
	return rows;
}

/* The traces of tests/data: docs/sql.md's memory per GPU is `stats -r memory`'s, exactly
 * (device memory only: the pinned host memory these traces hold stays out); its peak per
 * process and device is the GPU's where one process used it (ddp-2rank: two processes
 * on one GPU, 216.7 MiB each); ThreadNames has a row per
 * thread, so a join of the API calls on it keeps each call once (before: pytorch-train 3
 * rows for 2 threads, 812 rows for 509 calls; ddp-2rank 10 for 8, 2,084 for 1,350); the
 * GPU's memory bandwidth, and the CUPTI version the processes loaded. */
START_TEST(real_traces_memory_threads_versions)
{
	static const struct {
		const char *trace;
		const char *gpus;  /* the per-GPU query's rows, and stats' */
		const char *peaks; /* the per-process peak query's rows */
		int64_t threads;   /* ThreadNames rows */
		int64_t calls;     /* API calls, each on a named thread */
	} want[] = {
	        {"ddp-2rank.gtrace", "0,454412826,454412826,2035,0,454412826;",
	         "572,0,227202094;573,0,227210732;", 8, 1350},
	        {"ddp-rank0.gtrace", "0,227202094,227202094,756,0,227202094;", "623,0,227202094;",
	         4, 599},
	        {"ddp-rank1.gtrace", "0,227210732,227210732,1279,0,227210732;", "624,0,227210732;",
	         4, 751},
	        {"example.gtrace", "0,1572868,0,26,26,6553604;", "660,0,1572868;", 1, 257},
	        {"multistream.gtrace", "0,32,0,1,1,32;", "508,0,32;", 9, 812},
	        {"pytorch-train.gtrace", "0,279630440,279630440,678,0,279630440;",
	         "517,0,279630440;", 2, 509},
	};
	char *gpu_sql = doc_query("**Memory in use per GPU**", 0);
	char *peak_sql = doc_query("**Memory in use over time**", 1);
	char trace[512], db[128];
	struct gt_sql_export_result res;

	mkdir_tmp();
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		char *got, *stats;
		sqlite3 *h;

		snprintf(trace, sizeof(trace), "%s/%s", data_dir, want[i].trace);
		path_in(db, sizeof(db), "real.sqlite");
		ck_assert_int_eq(export_db(trace, db, &res), 0);
		got = query_rows(db, gpu_sql);
		stats = stats_memory_rows(trace);
		ck_assert_msg(strcmp(got, want[i].gpus) == 0, "%s: memory per GPU [%s], want [%s]",
		              want[i].trace, got, want[i].gpus);
		ck_assert_msg(strcmp(stats, want[i].gpus) == 0, "%s: stats [%s], want [%s]",
		              want[i].trace, stats, want[i].gpus);
		free(got);
		free(stats);
		got = query_rows(db, peak_sql);
		ck_assert_msg(strcmp(got, want[i].peaks) == 0, "%s: peaks [%s], want [%s]",
		              want[i].trace, got, want[i].peaks);
		free(got);

		h = open_db(db);
		ck_assert_int_eq(q1(h, "SELECT count(*) FROM ThreadNames"), want[i].threads);
		ck_assert_int_eq(q1(h, "SELECT count(DISTINCT globalTid) FROM ThreadNames"),
		                 want[i].threads);
		ck_assert_int_eq(q1(h, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN "
		                       "ThreadNames t ON t.globalTid = r.globalTid"),
		                 want[i].calls);
		ck_assert_int_eq(q1(h, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME"),
		                 want[i].calls);
		/* H200: its memory at 3,134 MHz, double data rate, on a 6,144-bit bus: bytes per
		 * second; these traces predate the SM clock's field */
		ck_assert_int_eq(q1(h, "SELECT count(*) FROM TARGET_INFO_GPU WHERE memoryBandwidth "
		                       "= 4814304000000 AND clockRate IS NULL"),
		                 1);
		ck_assert_int_eq(q1(h, "SELECT count(*) FROM GPUTRACE_TRACE WHERE cuptiVersion = "
		                       "'130001'"),
		                 1);
		sqlite3_close(h);
	}
	free(gpu_sql);
	free(peak_sql);
	rm_tmp();
}
END_TEST

/* `gputrace stats -r nvtx-gpu -f csv`'s rows per name: style, domain, range, instances, the
 * projected total, minimum and maximum, the busy and range totals, GPU ops; joined by ';'
 * (the names of tests/data hold no comma); malloc'd. */
static char *stats_nvtx_gpu_rows(const char *trace)
{
	struct gt_stats_options so = {.reports = GT_STATS_REPORT_NVTX_GPU,
	                              .format = GT_STATS_FORMAT_CSV};
	struct gt_reader *r;
	const char *msg;
	char *buf = NULL, *line, *save = NULL, *rows = calloc(1, 65536);
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	bool in = false;

	ck_assert_ptr_nonnull(rows);
	ck_assert_int_eq(gt_reader_open(trace, &r, &msg), 0);
	ck_assert_int_eq(gt_stats_report(r, f, &so, &msg), 0);
	gt_reader_close(r);
	fclose(f);
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *c[18], *p = line;
		size_t l = strlen(rows);
		int k = 0;

		if (strcmp(line, "# nvtx_gpu") == 0) {
			in = true;
			continue;
		}
		if (!in || strncmp(line, "proj_total_ns,", 14) == 0)
			continue;
		if (line[0] == '#')
			break;
		while (k < 18 && p) {
			c[k++] = p;
			p = strchr(p, ',');
			if (p)
				*p++ = '\0';
		}
		ck_assert_int_eq(k, 18);
		snprintf(rows + l, 65536 - l, "%s,%s,%s,%s,%s,%s,%s,%s,%s,%s;", c[15], c[16], c[17],
		         c[1], c[0], c[4], c[5], c[7], c[13], c[14]);
	}
	free(buf);
	return rows;
}

/* docs/sql.md's GPU time per NVTX range is `stats -r nvtx-gpu`'s, name by name, on every
 * trace of tests/data; and its recomputation from the export's own rows gives every row of
 * GPUTRACE_NVTX_GPU_PROJECTION (projection, operations, busy time: the union). */
START_TEST(real_traces_nvtx_gpu)
{
	static const char *const traces[] = {"ddp-2rank.gtrace",   "ddp-rank0.gtrace",
	                                     "ddp-rank1.gtrace",   "example.gtrace",
	                                     "multistream.gtrace", "pytorch-train.gtrace"};
	char *per_name = doc_query("**GPU time per NVTX range**", 0);
	char *raw = doc_query("**GPU time per NVTX range**", 1);
	char trace[512], db[128], *sql = malloc(strlen(per_name) + 512);
	struct gt_sql_export_result res;

	ck_assert_ptr_nonnull(sql);
	*strrchr(per_name, ';') = '\0';
	snprintf(sql, strlen(per_name) + 512,
	         "SELECT style, coalesce(domain, ''), range, instances, proj_total_ns, "
	         "proj_min_ns, proj_max_ns, busy_total_ns, range_total_ns, gpu_ops FROM (%s)",
	         per_name);
	mkdir_tmp();
	for (size_t i = 0; i < sizeof(traces) / sizeof(traces[0]); i++) {
		char *got, *want;
		sqlite3 *h;

		snprintf(trace, sizeof(trace), "%s/%s", data_dir, traces[i]);
		path_in(db, sizeof(db), "nvtx.sqlite");
		ck_assert_int_eq(export_db(trace, db, &res), 0);
		got = query_rows(db, sql);
		want = stats_nvtx_gpu_rows(trace);
		ck_assert_msg(strcmp(got, want) == 0, "%s: sql [%s]\nstats [%s]", traces[i], got,
		              want);
		ck_assert_uint_gt(strlen(got), 0);
		free(got);
		free(want);
		got = query_rows(db, raw);
		want = query_rows(db, "SELECT eventId, projStart, projEnd, gpuOps, busyDuration "
		                      "FROM GPUTRACE_NVTX_GPU_PROJECTION ORDER BY eventId");
		ck_assert_msg(strcmp(got, want) == 0, "%s: recomputed [%s]\ntable [%s]", traces[i],
		              got, want);
		free(got);
		free(want);
		/* every row belongs to a range of its own thread */
		h = open_db(db);
		ck_assert_int_eq(q1(h,
		                    "SELECT count(*) FROM GPUTRACE_NVTX_GPU_PROJECTION AS p JOIN "
		                    "NVTX_EVENTS AS n ON n.eventId = p.eventId AND n.globalTid = "
		                    "p.globalTid AND n.eventType IN (59, 60)"),
		                 q1(h, "SELECT count(*) FROM GPUTRACE_NVTX_GPU_PROJECTION"));
		sqlite3_close(h);
	}
	free(sql);
	free(per_name);
	free(raw);
	rm_tmp();
}
END_TEST

START_TEST(query_errors_and_formats)
{
	struct gt_sql_error err;
	char *out = NULL;
	size_t len = 0;
	FILE *o = open_memstream(&out, &len);
	char missing[128];

	ck_assert_int_eq(gt_sql_query(fx_db,
	                              "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL\nWHER x", o,
	                              GT_SQL_FORMAT_TABLE, &err),
	                 -EBADMSG);
	ck_assert_str_eq(err.message, "near \"x\": syntax error");
	ck_assert_int_eq(err.offset, 53);
	/* the statements before a bad one ran */
	ck_assert_int_eq(gt_sql_query(fx_db, "SELECT 1 AS a; SELEC 2", o, GT_SQL_FORMAT_CSV, &err),
	                 -EBADMSG);
	ck_assert_int_eq(err.offset, 15);
	ck_assert_int_eq(gt_sql_query(fx_db, "SELECT * FROM nope", o, GT_SQL_FORMAT_CSV, &err),
	                 -EBADMSG);
	ck_assert_str_eq(err.message, "no such table: nope");
	fclose(o);
	ck_assert_str_eq(out, "a\r\n1\r\n");
	free(out);

	o = open_memstream(&out, &len);
	ck_assert_int_eq(gt_sql_query(fx_db,
	                              "SELECT 1 AS n, 'a\"b' AS s, NULL AS z, 2.5 AS f; SELECT "
	                              "'x,y' AS c",
	                              o, GT_SQL_FORMAT_JSON, &err),
	                 2);
	fclose(o);
	ck_assert_str_eq(out, "[\n{\"n\":1,\"s\":\"a\\\"b\",\"z\":null,\"f\":2.5}\n]\n"
	                      "[\n{\"c\":\"x,y\"}\n]\n");
	free(out);

	o = open_memstream(&out, &len);
	ck_assert_int_eq(
	        gt_sql_query(fx_db, "SELECT 'x,y' AS c, NULL AS z", o, GT_SQL_FORMAT_CSV, &err), 1);
	ck_assert_int_eq(
	        gt_sql_query(fx_db, "SELECT 12 AS num, 'ab' AS text", o, GT_SQL_FORMAT_TABLE, &err),
	        1);
	fclose(o);
	ck_assert_str_eq(out, "c,z\r\n\"x,y\",\r\n"
	                      "num  text\n---  ----\n 12  ab\n(1 row)\n");
	free(out);

	path_in(missing, sizeof(missing), "missing.sqlite");
	o = open_memstream(&out, &len);
	ck_assert_int_eq(gt_sql_query(missing, "SELECT 1", o, GT_SQL_FORMAT_CSV, &err), -ENOENT);
	ck_assert_int_eq(access(missing, F_OK), -1); /* not created by the attempt */
	fclose(o);
	free(out);
}
END_TEST

START_TEST(tables_listing_and_reuse)
{
	char *out = NULL, other[128];
	size_t len = 0;
	FILE *o = open_memstream(&out, &len);
	struct gt_sql_error err;
	struct gt_sql_export_result res;
	struct timespec later[2] = {{0, UTIME_OMIT}, {0, 0}};

	ck_assert_int_eq(gt_sql_tables(fx_db, o, GT_SQL_FORMAT_CSV, &err), 0);
	fclose(o);
	ck_assert_ptr_nonnull(strstr(out, "\r\nCUPTI_ACTIVITY_KIND_GRAPH_TRACE,0\r\n"));
	ck_assert_ptr_nonnull(strstr(out, "\r\nMPI_RANKS,2\r\n"));
	free(out);

	/* reuse: newer than the trace and of this schema version; stale after the trace moves */
	ck_assert(gt_sql_is_database(fx_db));
	ck_assert(!gt_sql_is_database(fx_trace));
	ck_assert_int_eq(gt_sql_db_fresh(fx_trace, fx_db, NULL), 1);
	path_in(other, sizeof(other), "none.sqlite");
	ck_assert_int_eq(gt_sql_db_fresh(fx_trace, other, NULL), 0);
	ck_assert_int_eq(gt_sql_db_fresh(other, fx_db, NULL), -ENOENT);
	clock_gettime(CLOCK_REALTIME, &later[1]);
	later[1].tv_sec += 100;
	ck_assert_int_eq(utimensat(AT_FDCWD, fx_trace, later, 0), 0);
	ck_assert_int_eq(gt_sql_db_fresh(fx_trace, fx_db, NULL), 0);
	ck_assert_int_eq(export_db(fx_trace, fx_db, &res), 0);
	ck_assert_int_eq(gt_sql_db_fresh(fx_trace, fx_db, NULL), 0); /* the trace is in the future */
	later[1].tv_sec -= 200;
	ck_assert_int_eq(utimensat(AT_FDCWD, fx_trace, later, 0), 0);
	ck_assert_int_eq(gt_sql_db_fresh(fx_trace, fx_db, NULL), 1);
	/* a database of another schema version is not reused */
	{
		sqlite3 *db;

		ck_assert_int_eq(sqlite3_open(fx_db, &db), SQLITE_OK);
		ck_assert_int_eq(
		        sqlite3_exec(db,
		                     "UPDATE META_DATA_EXPORT SET value = '0' WHERE name = "
		                     "'GPUTRACE_SCHEMA_VERSION'",
		                     NULL, NULL, NULL),
		        SQLITE_OK);
		sqlite3_close(db);
		ck_assert_int_eq(gt_sql_db_fresh(fx_trace, fx_db, NULL), 0);
		ck_assert_int_eq(export_db(fx_trace, fx_db, &res), 0);
	}
}
END_TEST

/* A trace cut in the middle of a chunk, and one with a damaged chunk: what the reader
 * recovers is exported, and what it skipped is in GPUTRACE_LOSSES. */
START_TEST(truncated_and_corrupt_traces)
{
	struct synth_opts o = {
	        .kernels = 20000, .names = 20, .processes = 2, .seed = 5, .api = true};
	char trace[128], db[128];
	struct gt_sql_export_result res;
	struct stat st;
	sqlite3 *h;
	char sql[256];
	FILE *f;

	mkdir_tmp();
	path_in(trace, sizeof(trace), "cut.gtrace");
	path_in(db, sizeof(db), "cut.sqlite");
	write_synth(trace, &o, 16384);
	ck_assert_int_eq(stat(trace, &st), 0);
	ck_assert_int_eq(truncate(trace, st.st_size / 2), 0);
	ck_assert_int_eq(export_db(trace, db, &res), 0);
	h = open_db(db);
	ck_assert_int_eq(q1(h, "SELECT recovered FROM GPUTRACE_TRACE"), 1);
	ck_assert_int_eq(q1(h, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL"),
	                 count_records(trace, GT_REC_KERNEL));
	ck_assert_int_lt(q1(h, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL"), 20000);
	ck_assert_int_gt(q1(h, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL"), 5000);
	snprintf(sql, sizeof(sql),
	         "SELECT count FROM GPUTRACE_LOSSES WHERE sourceName = 'damaged_file' AND unit = "
	         "'chunks'");
	ck_assert_int_eq(q1(h, sql), 1); /* the chunk the cut went through */
	ck_assert_uint_eq(res.lost_chunks, 1);
	sqlite3_close(h);

	/* damage one chunk in the middle: the chunks around it still export */
	path_in(trace, sizeof(trace), "bad.gtrace");
	path_in(db, sizeof(db), "bad.sqlite");
	write_synth(trace, &o, 16384);
	ck_assert_int_eq(stat(trace, &st), 0);
	f = fopen(trace, "r+");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fseek(f, st.st_size / 2, SEEK_SET), 0);
	for (int i = 0; i < 64; i++)
		fputc(0x5a, f);
	fclose(f);
	ck_assert_int_eq(export_db(trace, db, &res), 0);
	h = open_db(db);
	ck_assert_int_eq(q1(h, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL"),
	                 count_records(trace, GT_REC_KERNEL));
	ck_assert_int_lt(q1(h, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL"), 20000);
	ck_assert_int_gt(q1(h, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL"), 18000);
	ck_assert_int_eq(q1(h, sql), 1);
	ck_assert_int_eq(q1(h, "SELECT chunksSkipped FROM GPUTRACE_TRACE"), 1);
	/* with its bytes, and the records the index says it held: with those read, every record
	 * the footer counts */
	ck_assert_int_eq(q1(h, "SELECT count FROM GPUTRACE_LOSSES WHERE unit = 'bytes'"),
	                 q1(h, "SELECT bytesSkipped FROM GPUTRACE_TRACE"));
	{
		struct gt_reader *r;
		const char *err = NULL;
		int64_t all = 0;

		ck_assert_int_eq(gt_reader_open(trace, &r, &err), 0);
		for (unsigned t = 0; t < GT_REC_MAX; t++)
			all += (int64_t)gt_reader_footer_counts(r)->records[t];
		gt_reader_close(r);
		ck_assert_int_eq(q1(h, "SELECT count FROM GPUTRACE_LOSSES WHERE unit = 'records'") +
		                         q1(h, "SELECT records FROM GPUTRACE_TRACE"),
		                 all);
	}
	ck_assert_int_eq(q1(h, "SELECT count(*) FROM GPUTRACE_LOSSES WHERE unit = 'malformed "
	                       "records'"),
	                 0);
	/* the process of the last chunk still ended: its end record was after the damage */
	ck_assert_int_eq(q1(h, "SELECT count(*) FROM GPUTRACE_PROCESSES WHERE end IS NOT NULL"), 2);
	sqlite3_close(h);
	rm_tmp();
}
END_TEST

/* An export killed half-way leaves the previous database whole under the final name. */
/* shortName comes from the whole name: a kernel whose demangled name is over 4 KiB (cut, as
 * every output cuts it) still has its base name ("k"), not a cut of the cut name */
START_TEST(short_name_of_a_long_kernel)
{
	char mangled[1024], db[160], *p;
	struct gt_sql_export_result res;
	sqlite3_stmt *st;
	struct tb t;
	sqlite3 *h;

	mkdir_tmp();
	p = stpcpy(mangled, "_ZN4mlir6detail1kEN2ns17AVeryLongTypeNameIiEE");
	for (int i = 0; i < 200; i++)
		p = stpcpy(p, "S3_");
	tb_open(&t, "node");
	tb_process(&t, 100, -1, "node", 1);
	tb_kernel(&t, 100, mangled, 7, 2000, 3000);
	tb_close(&t);
	path_in(db, sizeof(db), "long.sqlite");
	ck_assert_int_eq(export_db(t.path, db, &res), 0);
	h = open_db(db);
	ck_assert_int_eq(sqlite3_prepare_v2(h,
	                                    "SELECT s.value, length(d.value), substr(d.value, -3) "
	                                    "FROM CUPTI_ACTIVITY_KIND_KERNEL k "
	                                    "JOIN StringIds s ON s.id = k.shortName "
	                                    "JOIN StringIds d ON d.id = k.demangledName",
	                                    -1, &st, NULL),
	                 SQLITE_OK);
	ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
	if (gt_demangle_available()) {
		ck_assert_str_eq((const char *)sqlite3_column_text(st, 0), "k");
		ck_assert_int_eq(sqlite3_column_int(st, 1), GT_DEMANGLE_BUF_BYTES - 1);
		ck_assert_str_eq((const char *)sqlite3_column_text(st, 2), "...");
	}
	sqlite3_finalize(st);
	sqlite3_close(h);
	tb_remove(&t);
	rm_tmp();
}
END_TEST

START_TEST(interrupted_export)
{
	struct synth_opts o = {
	        .kernels = 400000, .names = 100, .processes = 1, .seed = 9, .api = true};
	char trace[128], db[128], tmp[160], old[128];
	struct gt_sql_export_result res;
	struct stat before, after;
	int status;
	pid_t pid;
	sqlite3 *h;

	mkdir_tmp();
	path_in(trace, sizeof(trace), "big.gtrace");
	path_in(db, sizeof(db), "big.sqlite");
	path_in(old, sizeof(old), "fx.gtrace");
	ck_assert_int_eq(fx_write(old, &fxo), 0);
	/* the database already there: an export of another trace */
	ck_assert_int_eq(export_db(old, db, &res), 0);
	ck_assert_int_eq(stat(db, &before), 0);
	write_synth(trace, &o, 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct gt_reader *r;
		const char *msg;

		if (gt_reader_open(trace, &r, &msg) < 0)
			_exit(2);
		gt_sql_export(r, db, NULL, NULL, &msg);
		_exit(3); /* the parent kills it long before */
	}
	/* wait for the event (the temporary file has rows), not for a time; the temporary is
	 * .NAME.gt-XXXXXX beside the database (src/output/output.c) */
	while (find_temporary(db, tmp, sizeof(tmp)) < 0 || stat(tmp, &after) < 0 ||
	       after.st_size < (1 << 20)) {
		/* a child that ended first would leave this loop waiting forever */
		ck_assert_int_eq(waitpid(pid, &status, WNOHANG), 0);
		usleep(1000);
	}
	ck_assert_int_eq(kill(pid, SIGKILL), 0);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFSIGNALED(status));
	ck_assert_int_eq(stat(db, &after), 0);
	ck_assert_int_eq(after.st_ino, before.st_ino);
	ck_assert_int_eq(after.st_size, before.st_size);
	h = open_db(db);
	ck_assert_int_eq(q1(h, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL"),
	                 fxo.procs * fxo.iters * fxo.kernels);
	sqlite3_close(h);
	ck_assert_int_eq(access(tmp, F_OK), 0); /* what a SIGKILL leaves: the temporary name */

	/* a failing export removes its temporary file and leaves nothing */
	{
		struct gt_reader *r;
		const char *msg;
		char bad[160];

		path_in(bad, sizeof(bad), "no/such/dir.sqlite");
		ck_assert_int_eq(gt_reader_open(trace, &r, &msg), 0);
		ck_assert_int_lt(gt_sql_export(r, bad, NULL, NULL, &msg), 0);
		ck_assert_str_eq(msg + 14 + strlen(dir), "/no/such/dir.sqlite: its folder does not exist");
		ck_assert_int_eq(strncmp(msg, "cannot create ", 14), 0);
		ck_assert_int_eq(gt_sql_export(r, "-", NULL, NULL, &msg), -EINVAL);
		gt_reader_close(r);
	}
	rm_tmp();
}
END_TEST

static Suite *sqlite_suite(void)
{
	Suite *s = suite_create("sqlite");
	TCase *fx = tcase_create("fixture"), *tr = tcase_create("traces");

	tcase_add_unchecked_fixture(fx, fixture_setup, rm_tmp);
	tcase_add_test(fx, schema_tables_and_columns);
	tcase_add_test(fx, schema_constraints_after_load);
	tcase_add_test(fx, schema_on_defensive_sqlite);
	tcase_add_test(fx, fixture_counts_and_ids);
	tcase_add_test(fx, fixture_stats_join_nesting);
	tcase_add_test(fx, doc_queries_run);
	tcase_add_test(fx, query_errors_and_formats);
	tcase_add_test(fx, tables_listing_and_reuse);
	suite_add_tcase(s, fx);
	tcase_set_timeout(tr, 300);
	tcase_add_test(tr, real_and_synthetic_traces);
	tcase_add_test(tr, real_traces_memory_threads_versions);
	tcase_add_test(tr, real_traces_nvtx_gpu);
	tcase_add_test(tr, truncated_and_corrupt_traces);
	tcase_add_test(tr, interrupted_export);
	tcase_add_test(tr, short_name_of_a_long_kernel);
	suite_add_tcase(s, tr);
	return s;
}

int main(int argc, char **argv)
{
	SRunner *sr;
	int failed;

	if (argc < 3) {
		fprintf(stderr, "usage: test-sqlite DATA_DIR DOCS_SQL_MD\n");
		return 2;
	}
	data_dir = argv[1];
	docs_md = argv[2];
	sr = srunner_create(sqlite_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
