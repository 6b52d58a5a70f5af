//===- CudaDriver.h - The CUDA driver API, loaded at run time ---*- C++ -*-===//
//
// Private to the runtime. Declares the handful of CUDA driver types,
// constants and entry points the runtime uses (values checked against CUDA
// 13.0's cuda.h) and resolves them with dlopen/dlsym on first use, so that
// nothing links against libcuda and cuda.h is not needed to build. The
// library path is "libcuda.so.1" unless the TILEC_CUDA_DRIVER environment
// variable names another file.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_RUNTIME_LIB_CUDADRIVER_H
#define TILEC_RUNTIME_LIB_CUDADRIVER_H

#include <string>

namespace tilec::cuda {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st *;
using CUmodule = struct CUmod_st *;
using CUfunction = struct CUfunc_st *;
using CUstream = struct CUstream_st *;
using CUevent = struct CUevent_st *;
using CUgraph = struct CUgraph_st *;
using CUgraphExec = struct CUgraphExec_st *;

constexpr CUresult CUDA_SUCCESS = 0;
constexpr CUresult CUDA_ERROR_NO_DEVICE = 100;
constexpr int CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76;
constexpr int CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8;
constexpr int CU_JIT_INFO_LOG_BUFFER = 3;
constexpr int CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4;
constexpr int CU_JIT_ERROR_LOG_BUFFER = 5;
constexpr int CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6;
constexpr unsigned CU_STREAM_DEFAULT = 0;
constexpr unsigned CU_STREAM_NON_BLOCKING = 1;
constexpr unsigned CU_EVENT_DEFAULT = 0;
constexpr int CU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1;
constexpr int CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS = 88;
constexpr int CU_POINTER_ATTRIBUTE_CONTEXT = 1;
constexpr int CU_POINTER_ATTRIBUTE_MEMORY_TYPE = 2;
constexpr int CU_POINTER_ATTRIBUTE_IS_MANAGED = 8;
constexpr int CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL = 9;
constexpr int CU_POINTER_ATTRIBUTE_RANGE_START_ADDR = 11;
constexpr int CU_POINTER_ATTRIBUTE_RANGE_SIZE = 12;
constexpr unsigned CU_MEMORYTYPE_HOST = 1;
constexpr unsigned CU_MEMORYTYPE_DEVICE = 2;

constexpr int CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION = 4;

/// cuLaunchKernelEx's attribute (one 64-byte value union; the cluster
/// dimension is its first three unsigned ints) and configuration.
struct CUlaunchAttribute {
  int id;
  char pad[4];
  union {
    char bytes[64];
    struct {
      unsigned x, y, z;
    } clusterDim;
  } value;
};
static_assert(sizeof(CUlaunchAttribute) == 72, "CUlaunchAttribute as in cuda.h");
struct CUlaunchConfig {
  unsigned gridDimX, gridDimY, gridDimZ;
  unsigned blockDimX, blockDimY, blockDimZ;
  unsigned sharedMemBytes;
  CUstream hStream;
  CUlaunchAttribute *attrs;
  unsigned numAttrs;
};

/// The resolved driver entry points. Member names are the unversioned API
/// names; the symbols looked up are the `_v2` ones where cuda.h maps to them.
struct Driver {
  CUresult (*cuGetErrorName)(CUresult, const char **);
  CUresult (*cuGetErrorString)(CUresult, const char **);
  CUresult (*cuInit)(unsigned);
  CUresult (*cuDeviceGetCount)(int *);
  CUresult (*cuDeviceGet)(CUdevice *, int);
  CUresult (*cuDeviceGetName)(char *, int, CUdevice);
  CUresult (*cuDeviceGetAttribute)(int *, int, CUdevice);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*cuCtxSetCurrent)(CUcontext);
  CUresult (*cuCtxGetCurrent)(CUcontext *);
  CUresult (*cuCtxSynchronize)();
  CUresult (*cuMemAlloc)(CUdeviceptr *, size_t);
  CUresult (*cuMemFree)(CUdeviceptr);
  CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void *, size_t);
  CUresult (*cuMemcpyDtoH)(void *, CUdeviceptr, size_t);
  CUresult (*cuMemcpyDtoDAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
  CUresult (*cuMemsetD8)(CUdeviceptr, unsigned char, size_t);
  CUresult (*cuStreamCreate)(CUstream *, unsigned);
  CUresult (*cuStreamDestroy)(CUstream);
  CUresult (*cuStreamSynchronize)(CUstream);
  CUresult (*cuEventCreate)(CUevent *, unsigned);
  CUresult (*cuEventDestroy)(CUevent);
  CUresult (*cuEventRecord)(CUevent, CUstream);
  CUresult (*cuEventSynchronize)(CUevent);
  CUresult (*cuEventElapsedTime)(float *, CUevent, CUevent);
  CUresult (*cuModuleLoadDataEx)(CUmodule *, const void *, unsigned, int *,
                                 void **);
  CUresult (*cuModuleUnload)(CUmodule);
  CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*cuFuncSetAttribute)(CUfunction, int, int);
  CUresult (*cuOccupancyMaxActiveBlocksPerMultiprocessor)(int *, CUfunction, int,
                                                          size_t);
  CUresult (*cuStreamBeginCapture)(CUstream, int);
  CUresult (*cuStreamEndCapture)(CUstream, CUgraph *);
  CUresult (*cuGraphInstantiateWithFlags)(CUgraphExec *, CUgraph, unsigned long long);
  CUresult (*cuGraphLaunch)(CUgraphExec, CUstream);
  CUresult (*cuGraphDestroy)(CUgraph);
  CUresult (*cuGraphExecDestroy)(CUgraphExec);
  /// Optional (CUDA 12+): null when the driver lacks it.
  CUresult (*cuTensorMapEncodeTiled)(void *map, int dataType, unsigned rank,
                                     void *globalAddress, const unsigned long long *globalDim,
                                     const unsigned long long *globalStrides,
                                     const unsigned *boxDim, const unsigned *elementStrides,
                                     int interleave, int swizzle, int l2Promotion,
                                     int oobFill);
  /// Optional: null when the driver lacks it (then pointers are not checked).
  CUresult (*cuPointerGetAttributes)(unsigned numAttributes, int *attributes, void **data,
                                     CUdeviceptr ptr);
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned,
                             unsigned, unsigned, unsigned, unsigned, CUstream,
                             void **, void **);
  /// Optional (CUDA 11.8+): null when the driver lacks it (then kernels
  /// that could run in clusters run without).
  CUresult (*cuLaunchKernelEx)(const CUlaunchConfig *, CUfunction, void **, void **);
};

/// The driver, loaded on first use (thread-safe); null when it cannot be
/// loaded, with the reason in `*error` when `error` is given.
const Driver *tryLoadDriver(std::string *error = nullptr);

/// The driver; throws RuntimeError with a clear message when it is missing.
const Driver &driver();

/// "tilec runtime: <call> failed[ for kernel '<kernel>']: <CUDA error name>
/// (<description>, code <n>)".
std::string describe(CUresult result, const char *call,
                     const std::string &kernel = {});

/// `name` for the process's lifetime (kernel names are few; never freed).
const char *internKernelName(const std::string &name);
/// Records the last kernel launched (one relaxed atomic store per launch):
/// a sticky fault reported by a later call names it.
void noteLaunch(const char *internedName);

/// Throws RuntimeError(describe(...)) unless `result` is CUDA_SUCCESS.
void check(CUresult result, const char *call, const std::string &kernel = {});

} // namespace tilec::cuda

#endif // TILEC_RUNTIME_LIB_CUDADRIVER_H
