//===- CudaDriver.cpp - Loading the CUDA driver with dlopen ---------------===//
//
// Opens libcuda.so.1 (or $TILEC_CUDA_DRIVER) once per process, resolves the
// entry points of CudaDriver.h, and turns CUresult failures into
// RuntimeErrors that name the call and the CUDA error. The library is never
// closed: objects destroyed at exit may still call into it.
//
//===----------------------------------------------------------------------===//

#include "CudaDriver.h"

#include <atomic>
#include <mutex>
#include <set>

#include "tilec/Runtime/Runtime.h"

#include <cstdlib>
#include <dlfcn.h>

namespace tilec::cuda {

namespace {
/// The outcome of the one attempt to load the driver.
struct LoadResult {
  Driver driver{};
  bool ok = false;
  std::string error;
};
} // namespace

/// Resolves `name` (or `fallback` when the library lacks it) into `slot`.
template <typename Fn>
static bool resolve(void *lib, Fn &slot, const char *name,
                    std::string &error, const char *fallback = nullptr) {
  void *sym = dlsym(lib, name);
  if (!sym && fallback)
    sym = dlsym(lib, fallback);
  if (!sym) {
    error += error.empty() ? name : std::string(", ") + name;
    return false;
  }
  slot = reinterpret_cast<Fn>(sym);
  return true;
}

static LoadResult load() {
  LoadResult r;
  const char *env = std::getenv("TILEC_CUDA_DRIVER");
  std::string path = env && *env ? env : "libcuda.so.1";
  void *lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *why = dlerror();
    r.error = "tilec runtime: cannot load the CUDA driver (" + path +
              "): " + (why ? why : "unknown error") +
              "; is an NVIDIA driver installed?";
    return r;
  }
  Driver &d = r.driver;
  std::string missing;
  bool ok = true;
  ok &= resolve(lib, d.cuGetErrorName, "cuGetErrorName", missing);
  ok &= resolve(lib, d.cuGetErrorString, "cuGetErrorString", missing);
  ok &= resolve(lib, d.cuInit, "cuInit", missing);
  ok &= resolve(lib, d.cuDeviceGetCount, "cuDeviceGetCount", missing);
  ok &= resolve(lib, d.cuDeviceGet, "cuDeviceGet", missing);
  ok &= resolve(lib, d.cuDeviceGetName, "cuDeviceGetName", missing);
  ok &= resolve(lib, d.cuDeviceGetAttribute, "cuDeviceGetAttribute", missing);
  ok &= resolve(lib, d.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain",
                missing);
  ok &= resolve(lib, d.cuCtxSetCurrent, "cuCtxSetCurrent", missing);
  ok &= resolve(lib, d.cuCtxGetCurrent, "cuCtxGetCurrent", missing);
  ok &= resolve(lib, d.cuCtxSynchronize, "cuCtxSynchronize", missing);
  ok &= resolve(lib, d.cuMemAlloc, "cuMemAlloc_v2", missing);
  ok &= resolve(lib, d.cuMemFree, "cuMemFree_v2", missing);
  ok &= resolve(lib, d.cuMemcpyHtoD, "cuMemcpyHtoD_v2", missing);
  ok &= resolve(lib, d.cuMemcpyDtoH, "cuMemcpyDtoH_v2", missing);
  ok &= resolve(lib, d.cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2", missing);
  ok &= resolve(lib, d.cuMemsetD8, "cuMemsetD8_v2", missing);
  ok &= resolve(lib, d.cuStreamBeginCapture, "cuStreamBeginCapture_v2", missing);
  ok &= resolve(lib, d.cuStreamEndCapture, "cuStreamEndCapture", missing);
  ok &= resolve(lib, d.cuGraphInstantiateWithFlags, "cuGraphInstantiateWithFlags", missing);
  ok &= resolve(lib, d.cuGraphLaunch, "cuGraphLaunch", missing);
  ok &= resolve(lib, d.cuGraphDestroy, "cuGraphDestroy", missing);
  ok &= resolve(lib, d.cuGraphExecDestroy, "cuGraphExecDestroy", missing);
  ok &= resolve(lib, d.cuStreamCreate, "cuStreamCreate", missing);
  ok &= resolve(lib, d.cuStreamDestroy, "cuStreamDestroy_v2", missing);
  ok &= resolve(lib, d.cuStreamSynchronize, "cuStreamSynchronize", missing);
  ok &= resolve(lib, d.cuEventCreate, "cuEventCreate", missing);
  ok &= resolve(lib, d.cuEventDestroy, "cuEventDestroy_v2", missing);
  ok &= resolve(lib, d.cuEventRecord, "cuEventRecord", missing);
  ok &= resolve(lib, d.cuEventSynchronize, "cuEventSynchronize", missing);
  // cuEventElapsedTime_v2 appeared in CUDA 12.8; older drivers have only v1.
  ok &= resolve(lib, d.cuEventElapsedTime, "cuEventElapsedTime_v2", missing,
                "cuEventElapsedTime");
  ok &= resolve(lib, d.cuModuleLoadDataEx, "cuModuleLoadDataEx", missing);
  ok &= resolve(lib, d.cuModuleUnload, "cuModuleUnload", missing);
  ok &= resolve(lib, d.cuModuleGetFunction, "cuModuleGetFunction", missing);
  ok &= resolve(lib, d.cuFuncSetAttribute, "cuFuncSetAttribute", missing);
  ok &= resolve(lib, d.cuOccupancyMaxActiveBlocksPerMultiprocessor,
                "cuOccupancyMaxActiveBlocksPerMultiprocessor", missing);
  ok &= resolve(lib, d.cuLaunchKernel, "cuLaunchKernel", missing);
  d.cuTensorMapEncodeTiled = reinterpret_cast<decltype(d.cuTensorMapEncodeTiled)>(
      dlsym(lib, "cuTensorMapEncodeTiled"));
  d.cuPointerGetAttributes = reinterpret_cast<decltype(d.cuPointerGetAttributes)>(
      dlsym(lib, "cuPointerGetAttributes"));
  d.cuLaunchKernelEx =
      reinterpret_cast<decltype(d.cuLaunchKernelEx)>(dlsym(lib, "cuLaunchKernelEx"));
  if (!ok) {
    r.error = "tilec runtime: the CUDA driver (" + path +
              ") lacks the entry points " + missing +
              "; is the NVIDIA driver too old?";
    return r;
  }
  r.ok = true;
  return r;
}

const Driver *tryLoadDriver(std::string *error) {
  // Leaked on purpose: objects destroyed at exit may still need the driver.
  static const LoadResult *result = new LoadResult(load());
  if (!result->ok && error)
    *error = result->error;
  return result->ok ? &result->driver : nullptr;
}

const Driver &driver() {
  std::string error;
  if (const Driver *d = tryLoadDriver(&error))
    return *d;
  throw RuntimeError(error);
}

static std::atomic<const char *> lastLaunched{nullptr};

const char *internKernelName(const std::string &name) {
  static std::mutex mutex;
  static auto *names = new std::set<std::string>; // leaked: used until exit
  std::lock_guard<std::mutex> lock(mutex);
  return names->insert(name).first->c_str();
}

void noteLaunch(const char *internedName) {
  lastLaunched.store(internedName, std::memory_order_relaxed);
}

/// Errors after which the context cannot be used again: a kernel faulted
/// (assert, illegal address or instruction, ...), and every later call of
/// the process returns the same error.
static bool isSticky(CUresult result) {
  switch (static_cast<int>(result)) {
  case 700: // CUDA_ERROR_ILLEGAL_ADDRESS
  case 702: // CUDA_ERROR_LAUNCH_TIMEOUT
  case 710: // CUDA_ERROR_ASSERT
  case 714: // CUDA_ERROR_HARDWARE_STACK_ERROR
  case 715: // CUDA_ERROR_ILLEGAL_INSTRUCTION
  case 716: // CUDA_ERROR_MISALIGNED_ADDRESS
  case 717: // CUDA_ERROR_INVALID_ADDRESS_SPACE
  case 718: // CUDA_ERROR_INVALID_PC
  case 719: // CUDA_ERROR_LAUNCH_FAILED
  case 214: // CUDA_ERROR_ECC_UNCORRECTABLE
    return true;
  default:
    return false;
  }
}

std::string describe(CUresult result, const char *call,
                     const std::string &kernel) {
  const Driver &d = driver();
  const char *name = nullptr, *text = nullptr;
  if (d.cuGetErrorName(result, &name) != CUDA_SUCCESS || !name)
    name = "unknown CUDA error";
  if (d.cuGetErrorString(result, &text) != CUDA_SUCCESS || !text)
    text = "no description";
  std::string msg = std::string("tilec runtime: ") + call + " failed";
  if (!kernel.empty())
    msg += " for kernel '" + kernel + "'";
  msg += ": " + std::string(name) + " (" + text + ", code " +
         std::to_string(result) + ")";
  if (isSticky(result)) {
    const char *last = lastLaunched.load(std::memory_order_relaxed);
    if (last && kernel == last && std::string(call) == "cuLaunchKernel")
      msg += "; the fault is from an earlier launch of '" + kernel + "'";
    else if (last && kernel == last)
      msg += "; the fault is in kernel '" + kernel + "'";
    else if (last)
      msg += std::string("; the fault is from an earlier launch: the last kernel tilec "
                         "launched before this call was '") + last + "'";
    msg += ". A kernel fault is sticky: the CUDA context is now unusable and every "
           "later CUDA call in this process fails with it (start a new process)";
  }
  return msg;
}

void check(CUresult result, const char *call, const std::string &kernel) {
  if (result != CUDA_SUCCESS)
    throw RuntimeError(describe(result, call, kernel));
}

} // namespace tilec::cuda
