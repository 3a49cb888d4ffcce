/* The CUPTI functions the collectors call, resolved at run time from a dlopen()ed libcupti so
 * that a missing or misplaced CUPTI is a recorded reason, not a loader failure inside the
 * application. Runs inside the traced application. */
#ifndef GT_COLLECTORS_CUPTILIB_H
#define GT_COLLECTORS_CUPTILIB_H

#include <cupti.h>

/* X(name, return type, parameter list): every CUPTI entry point we use. */
#define GT_CUPTI_FUNCS(X)                                                                          \
	X(cuptiGetVersion, CUptiResult, (uint32_t *))                                              \
	X(cuptiGetResultString, CUptiResult, (CUptiResult, const char **))                         \
	X(cuptiSubscribe, CUptiResult, (CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *))     \
	X(cuptiUnsubscribe, CUptiResult, (CUpti_SubscriberHandle))                                 \
	X(cuptiEnableCallback, CUptiResult,                                                        \
	  (uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain, CUpti_CallbackId))              \
	X(cuptiEnableDomain, CUptiResult,                                                          \
	  (uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain))                                \
	X(cuptiGetCallbackName, CUptiResult, (CUpti_CallbackDomain, uint32_t, const char **))      \
	X(cuptiActivityEnable, CUptiResult, (CUpti_ActivityKind))                                  \
	X(cuptiActivityDisable, CUptiResult, (CUpti_ActivityKind))                                 \
	X(cuptiActivityEnableRuntimeApi, CUptiResult, (CUpti_CallbackId, uint8_t))                 \
	X(cuptiActivityEnableDriverApi, CUptiResult, (CUpti_CallbackId, uint8_t))                  \
	X(cuptiActivityRegisterCallbacks, CUptiResult,                                             \
	  (CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc))                   \
	X(cuptiActivityGetNextRecord, CUptiResult, (uint8_t *, size_t, CUpti_Activity **))         \
	X(cuptiActivityGetNumDroppedRecords, CUptiResult, (CUcontext, uint32_t, size_t *))         \
	X(cuptiActivityFlushAll, CUptiResult, (uint32_t))                                          \
	X(cuptiActivityRegisterTimestampCallback, CUptiResult, (CUpti_TimestampCallbackFunc))      \
	X(cuptiActivitySetAttribute, CUptiResult, (CUpti_ActivityAttribute, size_t *, void *))     \
	X(cuptiSetThreadIdType, CUptiResult, (CUpti_ActivityThreadIdType))                         \
	X(cuptiGetDeviceId, CUptiResult, (CUcontext, uint32_t *))                                  \
	X(cuptiGetContextId, CUptiResult, (CUcontext, uint32_t *))

struct gt_cupti_fns {
#define GT_CUPTI_MEMBER(name, ret, args) ret(CUPTIAPI *name) args;
	GT_CUPTI_FUNCS(GT_CUPTI_MEMBER)
#undef GT_CUPTI_MEMBER
};

/* Filled by gt_cupti_load(); all members non-NULL after it returned 0. */
extern struct gt_cupti_fns gt_cupti;

/* The CUDA driver functions meta.c uses for DEVICE records, from the already loaded libcuda
 * (RTLD_NOLOAD: we never load the driver ourselves). Members may be NULL. */
struct gt_cuda_fns {
	CUresult (*device_get)(CUdevice *, int);                        /* cuDeviceGet */
	CUresult (*get_attribute)(int *, CUdevice_attribute, CUdevice); /* cuDeviceGetAttribute */
	CUresult (*get_name)(char *, int, CUdevice);                    /* cuDeviceGetName */
	CUresult (*total_mem)(size_t *, CUdevice);                      /* cuDeviceTotalMem_v2 */
	CUresult (*get_uuid)(CUuuid *, CUdevice);                       /* cuDeviceGetUuid_v2 */
	CUresult (*driver_version)(int *);                              /* cuDriverGetVersion */
};
extern struct gt_cuda_fns gt_cuda;

/* Where libcupti was found ("" before loading). */
extern char gt_cupti_path[512];

#endif /* GT_COLLECTORS_CUPTILIB_H */
