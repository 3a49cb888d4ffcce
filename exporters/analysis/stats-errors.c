/* Names of the CUDA error codes users meet most, for the failed-calls report: runtime
 * cudaError_t and driver CUresult values as documented in the CUDA toolkit headers.
 * Runs in the CLI. */
#include <stddef.h>

#include "stats-int.h"

struct code_name {
	int32_t code;
	const char *name;
};

static const struct code_name runtime_codes[] = {
        {1, "cudaErrorInvalidValue"},
        {2, "cudaErrorMemoryAllocation"},
        {3, "cudaErrorInitializationError"},
        {4, "cudaErrorCudartUnloading"},
        {5, "cudaErrorProfilerDisabled"},
        {9, "cudaErrorInvalidConfiguration"},
        {13, "cudaErrorInvalidSymbol"},
        {17, "cudaErrorInvalidDevicePointer"},
        {21, "cudaErrorInvalidMemcpyDirection"},
        {34, "cudaErrorStubLibrary"},
        {35, "cudaErrorInsufficientDriver"},
        {36, "cudaErrorCallRequiresNewerDriver"},
        {46, "cudaErrorDevicesUnavailable"},
        {52, "cudaErrorMissingConfiguration"},
        {98, "cudaErrorInvalidDeviceFunction"},
        {100, "cudaErrorNoDevice"},
        {101, "cudaErrorInvalidDevice"},
        {200, "cudaErrorInvalidKernelImage"},
        {201, "cudaErrorDeviceUninitialized"},
        {209, "cudaErrorNoKernelImageForDevice"},
        {214, "cudaErrorECCUncorrectable"},
        {217, "cudaErrorPeerAccessUnsupported"},
        {218, "cudaErrorInvalidPtx"},
        {222, "cudaErrorUnsupportedPtxVersion"},
        {300, "cudaErrorInvalidSource"},
        {301, "cudaErrorFileNotFound"},
        {400, "cudaErrorInvalidResourceHandle"},
        {401, "cudaErrorIllegalState"},
        {500, "cudaErrorSymbolNotFound"},
        {600, "cudaErrorNotReady"},
        {700, "cudaErrorIllegalAddress"},
        {701, "cudaErrorLaunchOutOfResources"},
        {702, "cudaErrorLaunchTimeout"},
        {704, "cudaErrorPeerAccessAlreadyEnabled"},
        {705, "cudaErrorPeerAccessNotEnabled"},
        {708, "cudaErrorSetOnActiveProcess"},
        {709, "cudaErrorContextIsDestroyed"},
        {710, "cudaErrorAssert"},
        {712, "cudaErrorHostMemoryAlreadyRegistered"},
        {713, "cudaErrorHostMemoryNotRegistered"},
        {714, "cudaErrorHardwareStackError"},
        {715, "cudaErrorIllegalInstruction"},
        {716, "cudaErrorMisalignedAddress"},
        {719, "cudaErrorLaunchFailure"},
        {720, "cudaErrorCooperativeLaunchTooLarge"},
        {800, "cudaErrorNotPermitted"},
        {801, "cudaErrorNotSupported"},
        {802, "cudaErrorSystemNotReady"},
        {803, "cudaErrorSystemDriverMismatch"},
        {804, "cudaErrorCompatNotSupportedOnDevice"},
        {900, "cudaErrorStreamCaptureUnsupported"},
        {901, "cudaErrorStreamCaptureInvalidated"},
        {906, "cudaErrorStreamCaptureImplicit"},
        {909, "cudaErrorTimeout"},
        {910, "cudaErrorGraphExecUpdateFailure"},
        {999, "cudaErrorUnknown"},
};

static const struct code_name driver_codes[] = {
        {1, "CUDA_ERROR_INVALID_VALUE"},
        {2, "CUDA_ERROR_OUT_OF_MEMORY"},
        {3, "CUDA_ERROR_NOT_INITIALIZED"},
        {4, "CUDA_ERROR_DEINITIALIZED"},
        {5, "CUDA_ERROR_PROFILER_DISABLED"},
        {34, "CUDA_ERROR_STUB_LIBRARY"},
        {36, "CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER"},
        {46, "CUDA_ERROR_DEVICE_UNAVAILABLE"},
        {100, "CUDA_ERROR_NO_DEVICE"},
        {101, "CUDA_ERROR_INVALID_DEVICE"},
        {200, "CUDA_ERROR_INVALID_IMAGE"},
        {201, "CUDA_ERROR_INVALID_CONTEXT"},
        {209, "CUDA_ERROR_NO_BINARY_FOR_GPU"},
        {214, "CUDA_ERROR_ECC_UNCORRECTABLE"},
        {218, "CUDA_ERROR_INVALID_PTX"},
        {222, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION"},
        {300, "CUDA_ERROR_INVALID_SOURCE"},
        {301, "CUDA_ERROR_FILE_NOT_FOUND"},
        {400, "CUDA_ERROR_INVALID_HANDLE"},
        {401, "CUDA_ERROR_ILLEGAL_STATE"},
        {500, "CUDA_ERROR_NOT_FOUND"},
        {600, "CUDA_ERROR_NOT_READY"},
        {700, "CUDA_ERROR_ILLEGAL_ADDRESS"},
        {701, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"},
        {702, "CUDA_ERROR_LAUNCH_TIMEOUT"},
        {704, "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED"},
        {705, "CUDA_ERROR_PEER_ACCESS_NOT_ENABLED"},
        {708, "CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE"},
        {709, "CUDA_ERROR_CONTEXT_IS_DESTROYED"},
        {710, "CUDA_ERROR_ASSERT"},
        {714, "CUDA_ERROR_HARDWARE_STACK_ERROR"},
        {715, "CUDA_ERROR_ILLEGAL_INSTRUCTION"},
        {716, "CUDA_ERROR_MISALIGNED_ADDRESS"},
        {719, "CUDA_ERROR_LAUNCH_FAILED"},
        {720, "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE"},
        {800, "CUDA_ERROR_NOT_PERMITTED"},
        {801, "CUDA_ERROR_NOT_SUPPORTED"},
        {802, "CUDA_ERROR_SYSTEM_NOT_READY"},
        {803, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH"},
        {900, "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED"},
        {901, "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED"},
        {909, "CUDA_ERROR_TIMEOUT"},
        {910, "CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE"},
        {999, "CUDA_ERROR_UNKNOWN"},
};

static const char *lookup(const struct code_name *t, size_t n, int32_t code)
{
	/* the tables are sorted by code */
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t[mid].code == code)
			return t[mid].name;
		if (t[mid].code < code)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

const char *gt_stats_error_name(uint32_t domain, int32_t code)
{
	if (domain == GT_API_DRIVER)
		return lookup(driver_codes, sizeof(driver_codes) / sizeof(driver_codes[0]), code);
	if (domain == GT_API_RUNTIME)
		return lookup(runtime_codes, sizeof(runtime_codes) / sizeof(runtime_codes[0]),
		              code);
	return NULL;
}
