/* The SQLite export's schema: Nsight Systems' tables as its "SQLite Schema Reference"
 * documents them (column names, types and order of the 2026.4 release, schema 3.28.1),
 * the ENUM_ tables' values, and gputrace's own GPUTRACE_ tables. docs/sql.md is the
 * table-by-table description; tests/test-sqlite.c keeps an independent list to check
 * this one against. Runs in the CLI. */
#include <stddef.h>

#include "gputrace/record.h"
#include "sqlite-int.h"

const struct sq_table_def gt_sq_tables[SQ_TABLE_MAX] = {
        [SQ_STRING_IDS] =
                {"StringIds",
                 "CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT "
                 "NULL)",
                 "INSERT INTO StringIds (id, value) VALUES (?,?)"},
        [SQ_THREAD_NAMES] = {"ThreadNames",
                             "CREATE TABLE ThreadNames (nameId INTEGER NOT NULL, priority "
                             "INTEGER, globalTid INTEGER)",
                             "INSERT INTO ThreadNames (nameId, globalTid) VALUES (?,?)"},
        [SQ_PROCESSES] = {"PROCESSES",
                          "CREATE TABLE PROCESSES (globalPid INTEGER, pid INTEGER, name TEXT)",
                          "INSERT INTO PROCESSES (globalPid, pid, name) VALUES (?,?,?)"},
        [SQ_META_DATA_EXPORT] = {"META_DATA_EXPORT",
                                 "CREATE TABLE META_DATA_EXPORT (name TEXT NOT NULL, value TEXT)",
                                 "INSERT INTO META_DATA_EXPORT (name, value) VALUES (?,?)"},
        [SQ_SESSION_START] = {"TARGET_INFO_SESSION_START_TIME",
                              "CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INTEGER, "
                              "utcTime TEXT, localTime TEXT, systemClockNs INTEGER, "
                              "sessionStartCntVctNs INTEGER)",
                              "INSERT INTO TARGET_INFO_SESSION_START_TIME (utcEpochNs, utcTime, "
                              "systemClockNs) VALUES (?,?,?)"},
        [SQ_ANALYSIS_DETAILS] = {"ANALYSIS_DETAILS",
                                 "CREATE TABLE ANALYSIS_DETAILS (globalVid INTEGER NOT NULL, "
                                 "duration INTEGER NOT NULL, startTime INTEGER NOT NULL, "
                                 "stopTime INTEGER NOT NULL)",
                                 "INSERT INTO ANALYSIS_DETAILS (globalVid, duration, startTime, "
                                 "stopTime) VALUES (0,?,?,?)"},
        [SQ_GPU] = {"TARGET_INFO_GPU",
                    "CREATE TABLE TARGET_INFO_GPU (vmId INTEGER NOT NULL, id INTEGER NOT NULL, "
                    "name TEXT, busLocation TEXT, isDiscrete INTEGER, l2CacheSize INTEGER, "
                    "totalMemory INTEGER, memoryBandwidth INTEGER, clockRate INTEGER, smCount "
                    "INTEGER, pwGpuId INTEGER, uuid TEXT, luid INTEGER, chipName TEXT, cuDevice "
                    "INTEGER, ctxswDevPath TEXT, ctrlDevPath TEXT, revision INTEGER, nodeMask "
                    "INTEGER, constantMemory INTEGER, maxIPC INTEGER, maxRegistersPerBlock "
                    "INTEGER, maxShmemPerBlock INTEGER, maxShmemPerBlockOptin INTEGER, "
                    "maxShmemPerSm INTEGER, maxRegistersPerSm INTEGER, threadsPerWarp INTEGER, "
                    "asyncEngines INTEGER, maxWarpsPerSm INTEGER, maxBlocksPerSm INTEGER, "
                    "maxThreadsPerBlock INTEGER, maxBlockDimX INTEGER, maxBlockDimY INTEGER, "
                    "maxBlockDimZ INTEGER, maxGridDimX INTEGER, maxGridDimY INTEGER, "
                    "maxGridDimZ INTEGER, computeMajor INTEGER, computeMinor INTEGER, smMajor "
                    "INTEGER, smMinor INTEGER, numaNodeId INTEGER)",
                    "INSERT INTO TARGET_INFO_GPU (vmId, id, name, totalMemory, memoryBandwidth, "
                    "smCount, uuid, cuDevice, maxShmemPerBlock, maxThreadsPerBlock, "
                    "computeMajor, computeMinor, clockRate) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)"},
        [SQ_CUDA_DEVICE] = {"TARGET_INFO_CUDA_DEVICE",
                            "CREATE TABLE TARGET_INFO_CUDA_DEVICE (gpuId INTEGER, cudaId INTEGER "
                            "NOT NULL, pid INTEGER NOT NULL, uuid TEXT, numMultiprocessors "
                            "INTEGER)",
                            "INSERT INTO TARGET_INFO_CUDA_DEVICE (gpuId, cudaId, pid, uuid, "
                            "numMultiprocessors) VALUES (?,?,?,?,?)"},
        [SQ_CUDA_CONTEXT] = {"TARGET_INFO_CUDA_CONTEXT_INFO",
                             "CREATE TABLE TARGET_INFO_CUDA_CONTEXT_INFO (nullStreamId INTEGER "
                             "NOT NULL, hwId INTEGER NOT NULL, vmId INTEGER NOT NULL, processId "
                             "INTEGER NOT NULL, deviceId INTEGER NOT NULL, contextId INTEGER NOT "
                             "NULL, parentContextId INTEGER, isGreenContext INTEGER, "
                             "numMultiprocessors INTEGER, numTpcs INTEGER, tpcMask TEXT, "
                             "workqueueResourceId INTEGER, workqueueConcurrencyLimit INTEGER, "
                             "workqueueSharingScope INTEGER, workqueueChannelCount INTEGER, "
                             "workqueueChannelIds TEXT)",
                             "INSERT INTO TARGET_INFO_CUDA_CONTEXT_INFO (nullStreamId, hwId, "
                             "vmId, processId, deviceId, contextId, isGreenContext) VALUES "
                             "(?,?,?,?,?,?,0)"},
        [SQ_CUDA_STREAM] = {"TARGET_INFO_CUDA_STREAM",
                            "CREATE TABLE TARGET_INFO_CUDA_STREAM (streamId INTEGER NOT NULL, "
                            "hwId INTEGER NOT NULL, vmId INTEGER NOT NULL, processId INTEGER NOT "
                            "NULL, contextId INTEGER NOT NULL, priority INTEGER NOT NULL, flag "
                            "INTEGER NOT NULL)",
                            "INSERT INTO TARGET_INFO_CUDA_STREAM (streamId, hwId, vmId, "
                            "processId, contextId, priority, flag) VALUES (?,?,?,?,?,?,?)"},
        [SQ_KERNEL] = {"CUPTI_ACTIVITY_KIND_KERNEL",
                       "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end "
                       "INTEGER NOT NULL, deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, "
                       "greenContextId INTEGER, streamId INTEGER NOT NULL, correlationId "
                       "INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL, shortName "
                       "INTEGER NOT NULL, mangledName INTEGER, launchType INTEGER, cacheConfig "
                       "INTEGER, registersPerThread INTEGER NOT NULL, gridX INTEGER NOT NULL, "
                       "gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL, blockX INTEGER NOT NULL, "
                       "blockY INTEGER NOT NULL, blockZ INTEGER NOT NULL, staticSharedMemory "
                       "INTEGER NOT NULL, dynamicSharedMemory INTEGER NOT NULL, "
                       "localMemoryPerThread INTEGER NOT NULL, localMemoryTotal INTEGER NOT "
                       "NULL, gridId INTEGER NOT NULL, sharedMemoryExecuted INTEGER, "
                       "graphNodeId INTEGER, sharedMemoryLimitConfig INTEGER, "
                       "qmdBulkReleaseDone INTEGER, qmdPreexitDone INTEGER, qmdLastCtaDone "
                       "INTEGER, graphId INTEGER, clusterX INTEGER, clusterY INTEGER, clusterZ "
                       "INTEGER, clusterSchedulingPolicy INTEGER, maxPotentialClusterSize "
                       "INTEGER, maxActiveClusters INTEGER, sharedMemoryRequestedPercentage "
                       "INTEGER, tensorSizeMinusOneElements TEXT NOT NULL)",
                       "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, "
                       "streamId, correlationId, globalPid, demangledName, shortName, "
                       "mangledName, launchType, registersPerThread, gridX, gridY, gridZ, blockX, "
                       "blockY, blockZ, staticSharedMemory, dynamicSharedMemory, "
                       "localMemoryPerThread, graphNodeId, graphId, clusterX, clusterY, "
                       "clusterZ, localMemoryTotal, gridId, tensorSizeMinusOneElements) VALUES "
                       "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,0,0,'')"},
        [SQ_MEMCPY] = {"CUPTI_ACTIVITY_KIND_MEMCPY",
                       "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end "
                       "INTEGER NOT NULL, deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, "
                       "greenContextId INTEGER, streamId INTEGER NOT NULL, correlationId "
                       "INTEGER, globalPid INTEGER, bytes INTEGER NOT NULL, copyKind INTEGER NOT "
                       "NULL, deprecatedSrcId INTEGER, srcKind INTEGER, dstKind INTEGER, "
                       "srcDeviceId INTEGER, srcContextId INTEGER, dstDeviceId INTEGER, "
                       "dstContextId INTEGER, migrationCause INTEGER, graphNodeId INTEGER, "
                       "virtualAddress INTEGER, copyCount INTEGER)",
                       "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, "
                       "streamId, correlationId, globalPid, bytes, copyKind, srcKind, dstKind, "
                       "srcDeviceId, dstDeviceId, graphNodeId) VALUES "
                       "(?,?,?,?,?,?,?,?,?,?,?,?,?,?)"},
        [SQ_MEMSET] = {"CUPTI_ACTIVITY_KIND_MEMSET",
                       "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER NOT NULL, end "
                       "INTEGER NOT NULL, deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, "
                       "greenContextId INTEGER, streamId INTEGER NOT NULL, correlationId "
                       "INTEGER, globalPid INTEGER, value INTEGER NOT NULL, bytes INTEGER NOT "
                       "NULL, graphNodeId INTEGER, memKind INTEGER)",
                       "INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET (start, end, deviceId, contextId, "
                       "streamId, correlationId, globalPid, value, bytes, graphNodeId, memKind) "
                       "VALUES (?,?,?,?,?,?,?,?,?,?,?)"},
        [SQ_SYNC] = {"CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
                     "CREATE TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start INTEGER NOT NULL, "
                     "end INTEGER NOT NULL, deviceId INTEGER NOT NULL, contextId INTEGER NOT "
                     "NULL, greenContextId INTEGER, streamId INTEGER NOT NULL, correlationId "
                     "INTEGER, globalPid INTEGER, deprecatedSyncType INTEGER, syncType INTEGER "
                     "NOT NULL, eventId INTEGER NOT NULL, eventSyncId INTEGER)",
                     "INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start, end, deviceId, "
                     "contextId, streamId, correlationId, globalPid, syncType, eventId) VALUES "
                     "(?,?,?,?,?,?,?,?,?)"},
        [SQ_GRAPH_TRACE] = {"CUPTI_ACTIVITY_KIND_GRAPH_TRACE",
                            "CREATE TABLE CUPTI_ACTIVITY_KIND_GRAPH_TRACE (start INTEGER NOT "
                            "NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL, contextId "
                            "INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL, "
                            "correlationId INTEGER, globalPid INTEGER, graphId INTEGER NOT NULL, "
                            "graphExecId INTEGER NOT NULL)",
                            "INSERT INTO CUPTI_ACTIVITY_KIND_GRAPH_TRACE (start, end, deviceId, "
                            "contextId, streamId, correlationId, globalPid, graphId, "
                            "graphExecId) VALUES (?,?,?,?,?,?,?,?,0)"},
        [SQ_RUNTIME] = {"CUPTI_ACTIVITY_KIND_RUNTIME",
                        "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end "
                        "INTEGER NOT NULL, eventClass INTEGER NOT NULL, globalTid INTEGER, "
                        "correlationId INTEGER, nameId INTEGER NOT NULL, returnValue INTEGER NOT "
                        "NULL, callchainId INTEGER)",
                        "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, eventClass, "
                        "globalTid, correlationId, nameId, returnValue, callchainId) VALUES "
                        "(?,?,?,?,?,?,?,?)"},
        [SQ_MEMORY_USAGE] = {"CUDA_GPU_MEMORY_USAGE_EVENTS",
                             "CREATE TABLE CUDA_GPU_MEMORY_USAGE_EVENTS (start INTEGER NOT NULL, "
                             "globalPid INTEGER NOT NULL, deviceId INTEGER NOT NULL, contextId "
                             "INTEGER NOT NULL, address INTEGER NOT NULL, pc INTEGER NOT NULL, "
                             "bytes INTEGER NOT NULL, memKind INTEGER NOT NULL, "
                             "memoryOperationType INTEGER NOT NULL, name TEXT, correlationId "
                             "INTEGER, streamId INTEGER, localMemoryPoolAddress INTEGER, "
                             "localMemoryPoolReleaseThreshold INTEGER, localMemoryPoolSize "
                             "INTEGER, localMemoryPoolUtilizedSize INTEGER, "
                             "importedMemoryPoolAddress INTEGER, importedMemoryPoolProcessId "
                             "INTEGER)",
                             "INSERT INTO CUDA_GPU_MEMORY_USAGE_EVENTS (start, globalPid, "
                             "deviceId, contextId, address, bytes, memKind, memoryOperationType, "
                             "correlationId, streamId, localMemoryPoolAddress, pc) VALUES "
                             "(?,?,?,?,?,?,?,?,?,?,?,0)"},
        [SQ_MEMORY_POOL] = {"CUDA_GPU_MEMORY_POOL_EVENTS",
                            "CREATE TABLE CUDA_GPU_MEMORY_POOL_EVENTS (start INTEGER NOT NULL, "
                            "globalPid INTEGER NOT NULL, deviceId INTEGER NOT NULL, address "
                            "INTEGER NOT NULL, operationType INTEGER NOT NULL, poolType INTEGER "
                            "NOT NULL, correlationId INTEGER, minBytesToKeep INTEGER, "
                            "localMemoryPoolReleaseThreshold INTEGER, localMemoryPoolSize "
                            "INTEGER, localMemoryPoolUtilizedSize INTEGER)",
                            "INSERT INTO CUDA_GPU_MEMORY_POOL_EVENTS (start, globalPid, "
                            "deviceId, address, operationType, poolType, correlationId, "
                            "localMemoryPoolReleaseThreshold, localMemoryPoolSize) VALUES "
                            "(?,?,?,?,?,?,?,?,?)"},
        [SQ_MPI_RANKS] = {"MPI_RANKS",
                          "CREATE TABLE MPI_RANKS (globalTid INTEGER NOT NULL, rank INTEGER NOT "
                          "NULL)",
                          "INSERT INTO MPI_RANKS (globalTid, rank) VALUES (?,?)"},
        [SQ_NVTX] = {"NVTX_EVENTS",
                     "CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType "
                     "INTEGER NOT NULL, rangeId INTEGER, category INTEGER, color INTEGER, text "
                     "TEXT, globalTid INTEGER, endGlobalTid INTEGER, textId INTEGER, domainId "
                     "INTEGER, uint64Value INTEGER, int64Value INTEGER, doubleValue REAL, "
                     "uint32Value INTEGER, int32Value INTEGER, floatValue REAL, jsonTextId "
                     "INTEGER, jsonText TEXT, binaryData TEXT, eventId INTEGER NOT NULL PRIMARY "
                     "KEY, callchainId INTEGER)",
                     "INSERT INTO NVTX_EVENTS (start, end, eventType, rangeId, category, color, "
                     "text, globalTid, endGlobalTid, textId, domainId, eventId, callchainId) "
                     "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)"},
        [SQ_GT_TRACE] = {"GPUTRACE_TRACE",
                         "CREATE TABLE GPUTRACE_TRACE (formatVersion INTEGER NOT NULL, clockId "
                         "INTEGER NOT NULL, clockName TEXT NOT NULL, startRealtimeNs INTEGER NOT "
                         "NULL, startTraceNs INTEGER NOT NULL, hostname TEXT, cmdline TEXT, "
                         "toolVersion TEXT, cudaVersion TEXT, cuptiVersion TEXT, driverVersion "
                         "TEXT, recovered INTEGER NOT NULL, chunksRead INTEGER NOT NULL, "
                         "chunksSkipped INTEGER NOT NULL, bytesSkipped INTEGER NOT NULL, "
                         "recordsSkipped INTEGER NOT NULL, records INTEGER NOT NULL, zeroNs "
                         "INTEGER NOT NULL)",
                         "INSERT INTO GPUTRACE_TRACE VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"},
        [SQ_GT_PROCESSES] = {"GPUTRACE_PROCESSES",
                             "CREATE TABLE GPUTRACE_PROCESSES (globalPid INTEGER NOT NULL, pid "
                             "INTEGER NOT NULL, ppid INTEGER, host TEXT, exe TEXT, cmdline TEXT, "
                             "start INTEGER, end INTEGER, endHow TEXT, endCode INTEGER, "
                             "standalone INTEGER)",
                             "INSERT INTO GPUTRACE_PROCESSES VALUES (?,?,?,?,?,?,?,?,?,?,?)"},
        [SQ_GT_RANKS] = {"GPUTRACE_RANKS",
                         "CREATE TABLE GPUTRACE_RANKS (globalPid INTEGER NOT NULL, pid INTEGER "
                         "NOT NULL, host TEXT, rank INTEGER, localRank INTEGER, worldSize "
                         "INTEGER)",
                         "INSERT INTO GPUTRACE_RANKS VALUES (?,?,?,?,?,?)"},
        [SQ_GT_LOSSES] = {"GPUTRACE_LOSSES",
                          "CREATE TABLE GPUTRACE_LOSSES (timestamp INTEGER, globalPid INTEGER, "
                          "pid INTEGER, source INTEGER NOT NULL, sourceName TEXT NOT NULL, "
                          "recordType INTEGER, recordTypeName TEXT, count INTEGER NOT NULL, unit "
                          "TEXT NOT NULL)",
                          "INSERT INTO GPUTRACE_LOSSES VALUES (?,?,?,?,?,?,?,?,?)"},
        [SQ_GT_NOTICES] = {"GPUTRACE_NOTICES",
                           "CREATE TABLE GPUTRACE_NOTICES (timestamp INTEGER NOT NULL, globalPid "
                           "INTEGER NOT NULL, pid INTEGER NOT NULL, severity INTEGER NOT NULL, "
                           "severityName TEXT NOT NULL, code INTEGER NOT NULL, codeName TEXT NOT "
                           "NULL, message TEXT, detail INTEGER)",
                           "INSERT INTO GPUTRACE_NOTICES VALUES (?,?,?,?,?,?,?,?,?)"},
        [SQ_GT_CAPTURE] = {"GPUTRACE_CAPTURE_RANGES",
                           "CREATE TABLE GPUTRACE_CAPTURE_RANGES (globalPid INTEGER NOT NULL, "
                           "pid INTEGER NOT NULL, start INTEGER NOT NULL, end INTEGER)",
                           "INSERT INTO GPUTRACE_CAPTURE_RANGES VALUES (?,?,?,?)"},
        [SQ_GT_CLOCKS] = {"GPUTRACE_CLOCKS",
                          "CREATE TABLE GPUTRACE_CLOCKS (globalPid INTEGER NOT NULL, pid INTEGER "
                          "NOT NULL, traceNs INTEGER NOT NULL, realtimeNs INTEGER NOT NULL, "
                          "clockId INTEGER NOT NULL, clockName TEXT NOT NULL)",
                          "INSERT INTO GPUTRACE_CLOCKS VALUES (?,?,?,?,?,?)"},
        [SQ_GT_MEMORY_POOLS] = {"GPUTRACE_MEMORY_POOLS",
                                "CREATE TABLE GPUTRACE_MEMORY_POOLS (timestamp INTEGER NOT NULL, "
                                "globalPid INTEGER NOT NULL, pid INTEGER NOT NULL, deviceId "
                                "INTEGER NOT NULL, address INTEGER NOT NULL, operation TEXT NOT "
                                "NULL, poolType TEXT NOT NULL, reservedBytes INTEGER NOT NULL, "
                                "releaseThresholdBytes INTEGER NOT NULL, correlationId INTEGER)",
                                "INSERT INTO GPUTRACE_MEMORY_POOLS VALUES "
                                "(?,?,?,?,?,?,?,?,?,?)"},
        [SQ_GT_OVERHEAD] = {"GPUTRACE_OVERHEAD",
                            "CREATE TABLE GPUTRACE_OVERHEAD (start INTEGER NOT NULL, end INTEGER "
                            "NOT NULL, globalPid INTEGER NOT NULL, kind INTEGER NOT NULL, "
                            "kindName TEXT NOT NULL, objectKind TEXT, objectId INTEGER, "
                            "globalTid INTEGER)",
                            "INSERT INTO GPUTRACE_OVERHEAD VALUES (?,?,?,?,?,?,?,?)"},
        [SQ_GT_DEVICES] = {"GPUTRACE_DEVICES",
                           "CREATE TABLE GPUTRACE_DEVICES (globalPid INTEGER NOT NULL, pid "
                           "INTEGER NOT NULL, cudaId INTEGER NOT NULL, gpuId INTEGER NOT NULL, "
                           "uuid TEXT)",
                           "INSERT INTO GPUTRACE_DEVICES VALUES (?,?,?,?,?)"},
        /* GPU time per NVTX range (exporters/analysis/nvtx-gpu.h): a row per range instance
         * that launched GPU work, eventId its NVTX_EVENTS row */
        [SQ_GT_NVTX_GPU] = {"GPUTRACE_NVTX_GPU_PROJECTION",
                            "CREATE TABLE GPUTRACE_NVTX_GPU_PROJECTION (eventId INTEGER NOT NULL "
                            "PRIMARY KEY, globalTid INTEGER NOT NULL, projStart INTEGER NOT NULL, "
                            "projEnd INTEGER NOT NULL, projDuration INTEGER NOT NULL, busyDuration "
                            "INTEGER NOT NULL, gpuOps INTEGER NOT NULL, level INTEGER)",
                            "INSERT INTO GPUTRACE_NVTX_GPU_PROJECTION VALUES (?,?,?,?,?,?,?,?)"},
        [SQ_CALLCHAINS] = {"CUDA_CALLCHAINS",
                           "CREATE TABLE CUDA_CALLCHAINS (id INTEGER NOT NULL, stackDepth INTEGER "
                           "NOT NULL, symbol INTEGER NOT NULL, module INTEGER NOT NULL, "
                           "originalIP INTEGER, unresolved INTEGER, lineNumber INTEGER, PRIMARY "
                           "KEY (id, stackDepth))",
                           "INSERT INTO CUDA_CALLCHAINS VALUES (?,?,?,?,?,?,?)"},
        /* GPU metrics (PM sampling) as Nsight Systems lays them out: typeId and sourceId
         * are the GPU's number, metricId the metric's index in its samples; value in the
         * unit metricName ends with (an integer where it is one, else a real) */
        [SQ_GPU_METRICS] = {"GPU_METRICS",
                            "CREATE TABLE GPU_METRICS (rawTimestamp INTEGER NOT NULL, timestamp "
                            "INTEGER NOT NULL, typeId INTEGER NOT NULL, metricId INTEGER NOT "
                            "NULL, value REAL NOT NULL)",
                            "INSERT INTO GPU_METRICS VALUES (?,?,?,?,?)"},
        [SQ_TARGET_GPU_METRICS] = {"TARGET_INFO_GPU_METRICS",
                                   "CREATE TABLE TARGET_INFO_GPU_METRICS (typeId INTEGER NOT "
                                   "NULL, sourceId INTEGER NOT NULL, typeName TEXT NOT NULL, "
                                   "metricId INTEGER NOT NULL, metricName TEXT NOT NULL)",
                                   "INSERT INTO TARGET_INFO_GPU_METRICS VALUES (?,?,?,?,?)"},
};

static const struct sq_enum_row event_type[] = {
        {SQ_EVENT_NVTX_MARK, "NvtxMark", "NvtxMark"},
        {SQ_EVENT_NVTX_PUSH_POP, "NvtxPushPopRange", "NvtxPushPopRange"},
        {SQ_EVENT_NVTX_START_END, "NvtxStartEndRange", "NvtxStartEndRange"},
        {SQ_EVENT_NVTX_DOMAIN_CREATE, "NvtxDomainCreate", "NvtxDomainCreate"},
};

static const struct sq_enum_row event_class[] = {
        {SQ_CLASS_CUDA_RUNTIME, "TRACE_PROCESS_EVENT_CUDA_RUNTIME", "CUDA runtime"},
        {SQ_CLASS_CUDA_DRIVER, "TRACE_PROCESS_EVENT_CUDA_DRIVER", "CUDA driver"},
};

/* the same numbers as enum gt_memcpy_kind, and three unified-memory kinds beyond */
static const struct sq_enum_row memcpy_oper[] = {
        {0, "CUDA_MEMCPY_KIND_UNKNOWN", "Unknown"},
        {1, "CUDA_MEMCPY_KIND_HTOD", "Host-to-Device"},
        {2, "CUDA_MEMCPY_KIND_DTOH", "Device-to-Host"},
        {3, "CUDA_MEMCPY_KIND_HTOA", "Host-to-Array"},
        {4, "CUDA_MEMCPY_KIND_ATOH", "Array-to-Host"},
        {5, "CUDA_MEMCPY_KIND_ATOA", "Array-to-Array"},
        {6, "CUDA_MEMCPY_KIND_ATOD", "Array-to-Device"},
        {7, "CUDA_MEMCPY_KIND_DTOA", "Device-to-Array"},
        {8, "CUDA_MEMCPY_KIND_DTOD", "Device-to-Device"},
        {9, "CUDA_MEMCPY_KIND_HTOH", "Host-to-Host"},
        {10, "CUDA_MEMCPY_KIND_PTOP", "Peer-to-Peer"},
        {11, "CUDA_MEMCPY_KIND_UVM_HTOD", "Unified Host-to-Device"},
        {12, "CUDA_MEMCPY_KIND_UVM_DTOH", "Unified Device-to-Host"},
        {13, "CUDA_MEMCPY_KIND_UVM_DTOD", "Unified Device-to-Device"},
};

static const struct sq_enum_row mem_kind[] = {
        {0, "CUDA_MEMOPR_MEMORY_KIND_PAGEABLE", "Pageable"},
        {1, "CUDA_MEMOPR_MEMORY_KIND_PINNED", "Pinned"},
        {2, "CUDA_MEMOPR_MEMORY_KIND_DEVICE", "Device"},
        {3, "CUDA_MEMOPR_MEMORY_KIND_ARRAY", "Array"},
        {4, "CUDA_MEMOPR_MEMORY_KIND_MANAGED", "Managed"},
        {5, "CUDA_MEMOPR_MEMORY_KIND_DEVICE_STATIC", "Device Static"},
        {6, "CUDA_MEMOPR_MEMORY_KIND_MANAGED_STATIC", "Managed Static"},
        {7, "CUDA_MEMOPR_MEMORY_KIND_UNKNOWN", "Unknown"},
};

static const struct sq_enum_row dev_mem_oper[] = {
        {0, "CUDA_DEV_MEM_EVENT_OPR_ALLOCATION", "Allocation"},
        {1, "CUDA_DEV_MEM_EVENT_OPR_DEALLOCATION", "Deallocation"},
};

static const struct sq_enum_row sync_type[] = {
        {0, "CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_UNKNOWN", "Unknown"},
        {1, "CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE", "Event sync"},
        {2, "CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT", "Stream wait sync"},
        {3, "CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE", "Stream sync"},
        {4, "CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE", "Context sync"},
};

static const struct sq_enum_row stream_type[] = {
        {1, "CUPTI_ACTIVITY_STREAM_CREATE_FLAG_DEFAULT", "Default stream"},
        {2, "CUPTI_ACTIVITY_STREAM_CREATE_FLAG_NON_BLOCKING", "Non-blocking stream"},
        {3, "CUPTI_ACTIVITY_STREAM_CREATE_FLAG_NULL", "Null stream"},
};

static const struct sq_enum_row launch_type[] = {
        {0, "CUDA_KERNEL_LAUNCH_TYPE_UNKNOWN", "Unknown"},
        {1, "CUDA_KERNEL_LAUNCH_TYPE_REGULAR", "Regular"},
        {2, "CUDA_KERNEL_LAUNCH_TYPE_COOPERATIVE_SINGLE_DEVICE", "Coop Single Device"},
};

static const struct sq_enum_row cache_config[] = {
        {0, "CU_FUNC_CACHE_PREFER_NONE", "None"},
        {1, "CU_FUNC_CACHE_PREFER_SHARED", "Shared"},
        {2, "CU_FUNC_CACHE_PREFER_L1", "L1"},
        {3, "CU_FUNC_CACHE_PREFER_EQUAL", "Equal"},
};

static const struct sq_enum_row smem_limit[] = {
        {0, "CUDA_SHARED_MEM_LIMIT_DEFAULT", "Default"},
        {1, "CUDA_SHARED_MEM_LIMIT_OPTIN", "Opt in"},
};

/* CUPTI's numbers (enum gt_pool_op + 1 and the record's pool_type); the symbol names are
 * CUPTI's, as Nsight Systems' own are not published in full (docs/sql.md) */
static const struct sq_enum_row mempool_oper[] = {
        {1, "CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_CREATED", "Created"},
        {2, "CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_DESTROYED", "Destroyed"},
        {3, "CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_TRIMMED", "Trimmed"},
};

static const struct sq_enum_row mempool_type[] = {
        {1, "CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL", "Local"},
        {2, "CUPTI_ACTIVITY_MEMORY_POOL_TYPE_IMPORTED", "Imported"},
};

#define ENUM(t, rows)                                                                              \
	{                                                                                          \
		t, rows, sizeof(rows) / sizeof(rows[0])                                            \
	}

const struct sq_enum_def gt_sq_enums[] = {
        ENUM("ENUM_NSYS_EVENT_TYPE", event_type),
        ENUM("ENUM_NSYS_EVENT_CLASS", event_class),
        ENUM("ENUM_CUDA_MEMCPY_OPER", memcpy_oper),
        ENUM("ENUM_CUDA_MEM_KIND", mem_kind),
        ENUM("ENUM_CUDA_DEV_MEM_EVENT_OPER", dev_mem_oper),
        ENUM("ENUM_CUPTI_SYNC_TYPE", sync_type),
        ENUM("ENUM_CUPTI_STREAM_TYPE", stream_type),
        ENUM("ENUM_CUDA_KERNEL_LAUNCH_TYPE", launch_type),
        ENUM("ENUM_CUDA_FUNC_CACHE_CONFIG", cache_config),
        ENUM("ENUM_CUDA_SHARED_MEM_LIMIT_CONFIG", smem_limit),
        ENUM("ENUM_CUDA_MEMPOOL_OPER", mempool_oper),
        ENUM("ENUM_CUDA_MEMPOOL_TYPE", mempool_type),
        {NULL, NULL, 0},
};

/* The columns common queries join and filter on. Nsight Systems creates none. Each index
 * costs about as much CPU as loading its table (docs/performance.md), so the busy tables get
 * only the ones the worked queries of docs/sql.md use. */
const char *const gt_sq_indexes[] = {
        /* runtime <-> kernel by correlationId: SQLite searches the kernels for each call,
         * in either order of the join */
        "CREATE INDEX GPUTRACE_IDX_KERNEL_CORRELATION ON CUPTI_ACTIVITY_KIND_KERNEL "
        "(correlationId)",
        /* the calls inside a time range (an NVTX range's), of one thread when the query
         * names it: the thread is checked in the index, the rows of other threads are not
         * read. start first: the rows arrive nearly in its order and it almost never ties,
         * the cheapest key to sort (globalTid first: 19 % more instructions for the index
         * builds, 6 % for the whole export; docs/sql.md) */
        "CREATE INDEX GPUTRACE_IDX_RUNTIME_START ON CUPTI_ACTIVITY_KIND_RUNTIME "
        "(start, globalTid)",
        /* names: a string's id from its text (kernels, API calls, NVTX ranges by name) */
        "CREATE INDEX GPUTRACE_IDX_STRING_VALUE ON StringIds (value)",
        "CREATE INDEX GPUTRACE_IDX_MEMCPY_CORRELATION ON CUPTI_ACTIVITY_KIND_MEMCPY "
        "(correlationId)",
        "CREATE INDEX GPUTRACE_IDX_MEMSET_CORRELATION ON CUPTI_ACTIVITY_KIND_MEMSET "
        "(correlationId)",
        "CREATE INDEX GPUTRACE_IDX_NVTX_START ON NVTX_EVENTS (start)",
        "CREATE INDEX GPUTRACE_IDX_MEMORY_START ON CUDA_GPU_MEMORY_USAGE_EVENTS (start)",
        NULL,
};

int gt_sq_mem_kind(unsigned gt_kind)
{
	/* gputrace numbers its kinds as CUPTI does (unknown first); Nsight puts unknown last */
	if (gt_kind == GT_MEM_UNKNOWN || gt_kind >= GT_MEM_MAX)
		return 7;
	return (int)gt_kind - 1;
}

const char *gt_sq_notice_code_name(unsigned code)
{
	static const char *const names[GT_NOTICE_CODE_MAX] = {
	        [GT_NOTICE_GENERIC] = "generic",
	        [GT_NOTICE_CUPTI_SUBSCRIBE_FAILED] = "cupti_subscribe_failed",
	        [GT_NOTICE_CUPTI_ERROR] = "cupti_error",
	        [GT_NOTICE_DETACHED] = "detached",
	        [GT_NOTICE_SESSION_LOST] = "session_lost",
	        [GT_NOTICE_CAPTURE_START] = "capture_start",
	        [GT_NOTICE_CAPTURE_STOP] = "capture_stop",
	        [GT_NOTICE_FLUSH_WINDOW] = "flush_window",
	        [GT_NOTICE_CUPTI_LOADED] = "cupti_loaded",
	        [GT_NOTICE_SELF_COST] = "self_cost",
	};

	return code < GT_NOTICE_CODE_MAX && names[code] ? names[code] : "unknown";
}

const char *gt_sq_severity_name(unsigned severity)
{
	static const char *const names[GT_NOTICE_SEVERITY_MAX] = {"info", "warning", "error"};

	return severity < GT_NOTICE_SEVERITY_MAX ? names[severity] : "unknown";
}

const char *gt_sq_clock_name(unsigned clock_id)
{
	static const char *const names[GT_CLOCK_MAX] = {"CLOCK_MONOTONIC", "CLOCK_MONOTONIC_RAW",
	                                                "CLOCK_REALTIME"};

	return clock_id < GT_CLOCK_MAX ? names[clock_id] : "unknown";
}

const char *gt_sq_overhead_name(unsigned kind)
{
	static const char *const names[GT_OVERHEAD_KIND_MAX] = {
	        [GT_OVERHEAD_UNKNOWN] = "unknown",
	        [GT_OVERHEAD_DRIVER_COMPILER] = "driver_compiler",
	        [GT_OVERHEAD_BUFFER_FLUSH] = "buffer_flush",
	        [GT_OVERHEAD_INSTRUMENTATION] = "instrumentation",
	        [GT_OVERHEAD_RESOURCE] = "resource",
	        [GT_OVERHEAD_RUNTIME_TRIGGERED_MODULE_LOADING] = "runtime_triggered_module_loading",
	        [GT_OVERHEAD_LAZY_FUNCTION_LOADING] = "lazy_function_loading",
	        [GT_OVERHEAD_COMMAND_BUFFER_FULL] = "command_buffer_full",
	        [GT_OVERHEAD_ACTIVITY_BUFFER_REQUEST] = "activity_buffer_request",
	};

	return kind < GT_OVERHEAD_KIND_MAX && names[kind] ? names[kind] : "unknown";
}
