/* bench-sqlite-floor: what SQLite itself charges for the SQLite export's two large tables,
 * with the least work a caller of its public API can give it, next to bench-sqlite's figures
 * for the whole export (docs/performance.md, "SQLite export": "SQLite's own floor").
 *
 * It stores ROWS kernel rows and ROWS API-call rows shaped like those bench-sqlite's export
 * writes (the same columns, no declared types as the export's load has them, values of the
 * same sizes, the same order: 8 processes taking turns in batches of 32, each process's
 * correlation ids and start times rising), through one prepared 32-row INSERT per table
 * written as the export writes its own (the same literals, parameters and DEFAULTs), on a
 * connection set up as the export's (journal and sync off, exclusive lock, 16 KiB pages,
 * secure_delete off, a 16 MiB page cache), in one transaction. The parameters that do not
 * change from row to row are bound once, before the first row; each row binds only its start,
 * end and correlation id (3 bindings a row; the export binds about 4.5). Then, on a second
 * connection set up as the export's for its index builds (sorts in 32 MiB, pages in 4 MiB),
 * it creates the same two indexes. Reading a trace, decoding records and choosing values,
 * which the export also does, are not here: this is SQLite's share alone.
 *   bench-sqlite-floor [ROWS]   (default 5000000 of each: 10 M rows, as bench-sqlite 10000000)
 * Prints CPU seconds (this thread) for the load and the indexes, and rows per CPU second.
 * Runs as a benchmark program. */
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#define BATCH 32u /* rows per INSERT, as the export's */
#define PROCS 8u  /* processes taking turns, as bench-sqlite's trace */

/* a row of names, a row of values */
/* clang-format off */
static const char *const kernel_cols[] = {
        "start", "end", "deviceId", "contextId", "greenContextId", "streamId", "correlationId",
        "globalPid", "demangledName", "shortName", "mangledName", "launchType", "cacheConfig",
        "registersPerThread", "gridX", "gridY", "gridZ", "blockX", "blockY", "blockZ",
        "staticSharedMemory", "dynamicSharedMemory", "localMemoryPerThread",
        "localMemoryTotal", "gridId", "sharedMemoryExecuted", "graphNodeId",
        "sharedMemoryLimitConfig", "qmdBulkReleaseDone", "qmdPreexitDone", "qmdLastCtaDone",
        "graphId", "clusterX", "clusterY", "clusterZ", "clusterSchedulingPolicy",
        "maxPotentialClusterSize", "maxActiveClusters", "sharedMemoryRequestedPercentage",
        "tensorSizeMinusOneElements", NULL};
/* How the export's INSERT gives each column: a value >= 0 bound once (start, end and the
 * correlation id bound per row), or one of these. */
#define LIT_NULL   (-1) /* NULL written in the statement */
#define LIT_EMPTY  (-2) /* '' written in the statement, or its DEFAULT after the last parameter */
#define LIT_ZERO   (-3) /* 0 written in the statement */
#define BOUND_NULL (-4) /* a parameter left NULL */
/* a kernel row of bench-sqlite's trace, as sqlite-schema.c's INSERT gives it */
static const int64_t kernel_vals[] = {
        0,        0,          5,          1,        LIT_NULL, 7,        0,        69373788160,
        92,       92,         92,         1,        LIT_NULL, 40,       16,       16,
        8,        512,        1,          1,        16384,    32768,    0,        LIT_ZERO,
        LIT_ZERO, LIT_NULL,   BOUND_NULL, LIT_NULL, LIT_NULL, LIT_NULL, LIT_NULL, BOUND_NULL,
        0,        0,          0,          LIT_NULL, LIT_NULL, LIT_NULL, LIT_NULL, LIT_EMPTY};
static const char *const runtime_cols[] = {
        "start", "end", "eventClass", "globalTid", "correlationId", "nameId", "returnValue",
        "callchainId", NULL};
static const int64_t runtime_vals[] = {0, 0, 0, 69373792295, 0, 3, 0, LIT_NULL};
/* clang-format on */

struct table {
	const char *name;
	const char *const *cols;
	const int64_t *vals;
	unsigned corr_col; /* the correlation id's column; start and end are 0 and 1 */
	unsigned ncols;    /* columns of the table */
	unsigned nparams;  /* parameters a row of the INSERT has */
	int param[64];     /* a column's parameter within its row, from 1; 0: a literal */
	sqlite3_stmt *st;
};

static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(sqlite3 *db, const char *what)
{
	fprintf(stderr, "bench-sqlite-floor: %s: %s\n", what, db ? sqlite3_errmsg(db) : "?");
	exit(1);
}

static void exec(sqlite3 *db, const char *sql)
{
	if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK)
		die(db, sql);
}

/* CREATE TABLE without types, and its 32-row INSERT as the export builds its own: the
 * columns in the table's order up to the last one that takes a value, NULL and '' written
 * as literals, the trailing '' a DEFAULT; every constant bound once. */
static void table_setup(sqlite3 *db, struct table *t)
{
	size_t cap = 64 * 1024, len;
	char *sql = malloc(cap);
	unsigned last = 0;

	if (!sql)
		die(NULL, "out of memory");
	len = (size_t)snprintf(sql, cap, "CREATE TABLE %s (", t->name);
	for (unsigned c = 0; c < t->ncols; c++) {
		len += (size_t)snprintf(sql + len, cap - len, "%s%s%s", c ? ", " : "", t->cols[c],
		                        t->vals[c] == LIT_EMPTY ? " DEFAULT ''" : "");
		if (t->vals[c] >= 0 || t->vals[c] == BOUND_NULL) {
			last = c;
			t->param[c] = (int)++t->nparams;
		}
	}
	snprintf(sql + len, cap - len, ")");
	exec(db, sql);
	len = (size_t)snprintf(sql, cap, "INSERT INTO %s (", t->name);
	for (unsigned c = 0; c <= last; c++)
		len += (size_t)snprintf(sql + len, cap - len, "%s%s", c ? ", " : "", t->cols[c]);
	len += (size_t)snprintf(sql + len, cap - len, ") VALUES ");
	for (unsigned r = 0; r < BATCH; r++) {
		len += (size_t)snprintf(sql + len, cap - len, "%s(", r ? "," : "");
		for (unsigned c = 0; c <= last; c++)
			len += (size_t)snprintf(sql + len, cap - len, "%s%s", c ? "," : "",
			                        t->param[c]               ? "?"
			                        : t->vals[c] == LIT_NULL  ? "NULL"
			                        : t->vals[c] == LIT_EMPTY ? "''"
			                                                  : "0");
		len += (size_t)snprintf(sql + len, cap - len, ")");
	}
	if (sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, &t->st, NULL) != SQLITE_OK)
		die(db, "prepare");
	free(sql);
	for (unsigned r = 0; r < BATCH; r++)
		for (unsigned c = 0; c <= last; c++)
			if (t->param[c] && t->vals[c] >= 0) /* a parameter starts as NULL */
				sqlite3_bind_int64(t->st, (int)(r * t->nparams) + t->param[c],
				                   t->vals[c]);
}

/* Row r of the batch: its start, end and correlation id. */
static void table_row(struct table *t, unsigned r, int64_t start, int64_t end, int64_t corr)
{
	int base = (int)(r * t->nparams);

	sqlite3_bind_int64(t->st, base + t->param[0], start);
	sqlite3_bind_int64(t->st, base + t->param[1], end);
	sqlite3_bind_int64(t->st, base + t->param[t->corr_col], corr);
}

static void table_flush(sqlite3 *db, struct table *t)
{
	if (sqlite3_step(t->st) != SQLITE_DONE)
		die(db, "insert");
	sqlite3_reset(t->st);
}

int main(int argc, char **argv)
{
	uint64_t rows = argc > 1 ? strtoull(argv[1], NULL, 10) : 5000000;
	uint64_t cpu_ns[PROCS], corr[PROCS];
	struct table k = {.name = "K", .cols = kernel_cols, .vals = kernel_vals, .corr_col = 6};
	struct table a = {.name = "R", .cols = runtime_cols, .vals = runtime_vals, .corr_col = 4};
	char path[] = "/tmp/bench-sqlite-floor-XXXXXX", db_path[64], sql[256];
	double t0, t1, t2;
	sqlite3 *db;

	while (k.cols[k.ncols])
		k.ncols++;
	while (a.cols[a.ncols])
		a.ncols++;
	rows -= rows % BATCH;
	if (!rows || !mkdtemp(path)) {
		fprintf(stderr, "usage: bench-sqlite-floor [ROWS >= %u]\n", BATCH);
		return 2;
	}
	snprintf(db_path, sizeof(db_path), "%s/floor.sqlite", path);
	if (sqlite3_open_v2(db_path, &db,
	                    SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
	                    NULL) != SQLITE_OK)
		die(db, db_path);
	exec(db, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA locking_mode=EXCLUSIVE; "
	         "PRAGMA page_size=16384; PRAGMA secure_delete=OFF; PRAGMA cache_size=-16384");
	table_setup(db, &k);
	table_setup(db, &a);
	for (unsigned p = 0; p < PROCS; p++) {
		cpu_ns[p] = 1000000000000ull + p * 1000003ull;
		corr[p] = ((uint64_t)(p + 1) << 32) + 1;
	}
	t0 = cpu_s();
	exec(db, "BEGIN");
	for (uint64_t b = 0; b < rows / BATCH; b++) {
		unsigned p = (unsigned)(b % PROCS);

		/* a batch: one process's 32 launches and their kernels */
		for (unsigned r = 0; r < BATCH; r++) {
			int64_t s = (int64_t)cpu_ns[p], c = (int64_t)corr[p];

			table_row(&a, r, s, s + 4000 + (s & 1023), c);
			table_row(&k, r, s + 600000, s + 600000 + 2000 + (s & 65535), c);
			cpu_ns[p] += 6000 + (uint64_t)(s & 511);
			corr[p] += 1 + (uint64_t)(s & 3);
		}
		table_flush(db, &a);
		table_flush(db, &k);
	}
	exec(db, "COMMIT");
	sqlite3_finalize(k.st);
	sqlite3_finalize(a.st);
	if (sqlite3_close(db) != SQLITE_OK)
		die(db, "close");
	malloc_trim(0);
	/* the index builds as the export runs them: sorts sized by the empty main database's
	 * cache, the table's database attached with a small one */
	if (sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) !=
	    SQLITE_OK)
		die(db, ":memory:");
	exec(db, "PRAGMA page_size=16384; PRAGMA cache_size=-32768");
	snprintf(sql, sizeof(sql), "ATTACH DATABASE '%s' AS gt", db_path);
	exec(db, sql);
	exec(db, "PRAGMA gt.journal_mode=OFF; PRAGMA gt.synchronous=OFF; "
	         "PRAGMA gt.locking_mode=EXCLUSIVE; PRAGMA gt.secure_delete=OFF; "
	         "PRAGMA gt.cache_size=-4096");
	t1 = cpu_s();
	exec(db, "CREATE INDEX gt.KC ON K (correlationId)");
	exec(db, "CREATE INDEX gt.RS ON R (start, globalTid)");
	t2 = cpu_s();
	if (sqlite3_close(db) != SQLITE_OK)
		die(db, "close");
	printf("rows %llu (%llu kernels, %llu API calls), SQLite %s\n",
	       (unsigned long long)(2 * rows), (unsigned long long)rows, (unsigned long long)rows,
	       sqlite3_libversion());
	printf("load:    %.2f s CPU, %.2f M rows/s\n", t1 - t0,
	       (double)(2 * rows) / (t1 - t0) / 1e6);
	printf("indexes: %.2f s CPU\n", t2 - t1);
	printf("total:   %.2f s CPU, %.2f M rows/s per CPU second\n", t2 - t0,
	       (double)(2 * rows) / (t2 - t0) / 1e6);
	unlink(db_path);
	rmdir(path);
	return 0;
}
