//===- Runtime.cpp - Contexts, buffers, streams, events, modules ----------===//
//
// The driver-facing half of the runtime: thin RAII wrappers over the CUDA
// driver objects and the kernel launch itself. Destructors never throw; they
// ignore errors, since they may run after the driver has begun shutting down.
//
//===----------------------------------------------------------------------===//

#include "tilec/Runtime/Runtime.h"

#include "CudaDriver.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <map>
#include <mutex>
#include <utility>

namespace tilec {

using namespace cuda;

namespace {
/// The context made current on this thread by Context::get.
thread_local Context *currentContext = nullptr;
} // namespace

/// Makes sure some context is current on this thread (device 0 by default).
static void ensureContext() {
  if (!currentContext)
    Context::get(0);
}

/// Calls cuInit once per process; returns its result.
static CUresult initDriver() {
  static const CUresult result = driver().cuInit(0);
  return result;
}

bool driverAvailable() noexcept { return tryLoadDriver() != nullptr; }

int deviceCount() {
  const Driver &d = driver();
  CUresult init = initDriver();
  if (init == CUDA_ERROR_NO_DEVICE)
    return 0;
  check(init, "cuInit");
  int count = 0;
  check(d.cuDeviceGetCount(&count), "cuDeviceGetCount");
  return count;
}

//===----------------------------------------------------------------------===//
// Context
//===----------------------------------------------------------------------===//

Context &Context::get(int device) {
  // The hot path (every launch through the C API): this thread's context is
  // already the device's and still current in the driver.
  if (Context *ctx = currentContext; ctx && ctx->ordinal == device) {
    CUcontext current = nullptr;
    if (driver().cuCtxGetCurrent(&current) == CUDA_SUCCESS && current == ctx->handle)
      return *ctx;
  }
  const Driver &d = driver();
  static std::mutex mutex;
  static std::map<int, Context *> contexts;
  std::lock_guard<std::mutex> lock(mutex);
  Context *&ctx = contexts[device];
  if (!ctx) {
    int count = deviceCount();
    if (device < 0 || device >= count)
      throw RuntimeError("tilec runtime: there is no CUDA device " +
                         std::to_string(device) + " (this machine has " +
                         std::to_string(count) + ")");
    CUdevice dev;
    check(d.cuDeviceGet(&dev, device), "cuDeviceGet");
    CUcontext handle;
    check(d.cuDevicePrimaryCtxRetain(&handle, dev), "cuDevicePrimaryCtxRetain");
    ctx = new Context(device, dev, handle);
  }
  ctx->makeCurrent();
  return *ctx;
}

void Context::makeCurrent() {
  check(driver().cuCtxSetCurrent(static_cast<CUcontext>(handle)),
        "cuCtxSetCurrent");
  currentContext = this;
}

std::string Context::deviceName() const {
  char name[256] = {};
  check(driver().cuDeviceGetName(name, sizeof(name) - 1, cuDevice),
        "cuDeviceGetName");
  return name;
}

static int attribute(int attr, CUdevice dev) {
  int value = 0;
  check(driver().cuDeviceGetAttribute(&value, attr, dev),
        "cuDeviceGetAttribute");
  return value;
}

int Context::computeCapability() const {
  return attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, cuDevice) * 10 +
         attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, cuDevice);
}

int Context::multiprocessorCount() const {
  return attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, cuDevice);
}

bool Context::pageableMemoryAccess() const {
  int value = 0;
  return driver().cuDeviceGetAttribute(&value, CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS,
                                       cuDevice) == CUDA_SUCCESS &&
         value != 0;
}

void Context::synchronize() {
  makeCurrent();
  check(driver().cuCtxSynchronize(), "cuCtxSynchronize");
}

//===----------------------------------------------------------------------===//
// Stream and Event
//===----------------------------------------------------------------------===//

static CUstream toStream(void *handle) { return static_cast<CUstream>(handle); }

static void *createStream(unsigned flags) {
  ensureContext();
  CUstream s;
  check(driver().cuStreamCreate(&s, flags), "cuStreamCreate");
  return s;
}

Stream::Stream() : stream(createStream(CU_STREAM_DEFAULT)), owned(true) {}

Stream Stream::nonBlocking() {
  Stream s(nullptr);
  s.stream = createStream(CU_STREAM_NON_BLOCKING);
  s.owned = true;
  return s;
}

Stream::Stream(Stream &&other) noexcept
    : stream(std::exchange(other.stream, nullptr)),
      owned(std::exchange(other.owned, false)) {}

Stream &Stream::operator=(Stream &&other) noexcept {
  std::swap(stream, other.stream);
  std::swap(owned, other.owned);
  return *this;
}

Stream::~Stream() {
  if (owned && stream)
    tryLoadDriver()->cuStreamDestroy(toStream(stream));
}

Stream &Stream::defaultStream() {
  static Stream nullStream(nullptr);
  return nullStream;
}

void Stream::synchronize() {
  ensureContext();
  check(driver().cuStreamSynchronize(toStream(stream)), "cuStreamSynchronize");
}

void Stream::beginCapture() {
  if (!stream)
    throw RuntimeError("tilec runtime: cannot capture the default stream; "
                       "capture a tilec::Stream you created");
  ensureContext();
  check(driver().cuStreamBeginCapture(toStream(stream),
                                      CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
        "cuStreamBeginCapture_v2");
}

Graph Stream::endCapture() {
  ensureContext();
  CUgraph graph = nullptr;
  check(driver().cuStreamEndCapture(toStream(stream), &graph), "cuStreamEndCapture");
  CUgraphExec exec = nullptr;
  if (CUresult r = driver().cuGraphInstantiateWithFlags(&exec, graph, 0)) {
    driver().cuGraphDestroy(graph);
    check(r, "cuGraphInstantiateWithFlags");
  }
  return Graph(graph, exec);
}

Graph::Graph(Graph &&other) noexcept
    : graph(std::exchange(other.graph, nullptr)),
      exec(std::exchange(other.exec, nullptr)) {}

Graph &Graph::operator=(Graph &&other) noexcept {
  if (this != &other) {
    this->~Graph();
    graph = std::exchange(other.graph, nullptr);
    exec = std::exchange(other.exec, nullptr);
  }
  return *this;
}

Graph::~Graph() {
  if (exec)
    driver().cuGraphExecDestroy(static_cast<CUgraphExec>(exec));
  if (graph)
    driver().cuGraphDestroy(static_cast<CUgraph>(graph));
}

void Graph::launch(Stream &stream) {
  ensureContext();
  check(driver().cuGraphLaunch(static_cast<CUgraphExec>(exec),
                               toStream(stream.handle())),
        "cuGraphLaunch");
}

void copyHostToDevice(uint64_t dst, const void *src, size_t bytes) {
  if (bytes == 0)
    return;
  ensureContext();
  check(driver().cuMemcpyHtoD(dst, src, bytes), "cuMemcpyHtoD_v2");
}

void copyDeviceToHost(void *dst, uint64_t src, size_t bytes) {
  if (bytes == 0)
    return;
  ensureContext();
  check(driver().cuMemcpyDtoH(dst, src, bytes), "cuMemcpyDtoH_v2");
}

Event::Event() {
  ensureContext();
  CUevent e;
  check(driver().cuEventCreate(&e, CU_EVENT_DEFAULT), "cuEventCreate");
  event = e;
}

Event::Event(Event &&other) noexcept
    : event(std::exchange(other.event, nullptr)) {}

Event &Event::operator=(Event &&other) noexcept {
  std::swap(event, other.event);
  return *this;
}

Event::~Event() {
  if (event)
    tryLoadDriver()->cuEventDestroy(static_cast<CUevent>(event));
}

void Event::record(Stream &stream) {
  check(driver().cuEventRecord(static_cast<CUevent>(event),
                               toStream(stream.handle())),
        "cuEventRecord");
}

void Event::synchronize() {
  check(driver().cuEventSynchronize(static_cast<CUevent>(event)),
        "cuEventSynchronize");
}

float Event::elapsedMs(const Event &start, const Event &end) {
  float ms = 0;
  check(driver().cuEventElapsedTime(&ms, static_cast<CUevent>(start.event),
                                    static_cast<CUevent>(end.event)),
        "cuEventElapsedTime");
  return ms;
}

//===----------------------------------------------------------------------===//
// Buffer
//===----------------------------------------------------------------------===//

Buffer::Buffer(size_t bytes) : numBytes(bytes) {
  if (bytes == 0)
    return;
  ensureContext();
  CUdeviceptr p;
  if (CUresult r = driver().cuMemAlloc(&p, bytes))
    throw RuntimeError(describe(r, "cuMemAlloc_v2") + " allocating " +
                       std::to_string(bytes) + " bytes");
  devicePtr = p;
}

Buffer::Buffer(Buffer &&other) noexcept
    : devicePtr(std::exchange(other.devicePtr, 0)),
      numBytes(std::exchange(other.numBytes, 0)) {}

Buffer &Buffer::operator=(Buffer &&other) noexcept {
  std::swap(devicePtr, other.devicePtr);
  std::swap(numBytes, other.numBytes);
  return *this;
}

Buffer::~Buffer() {
  if (devicePtr)
    tryLoadDriver()->cuMemFree(devicePtr);
}

/// Throws unless `bytes` fit in a buffer of `size` bytes.
static void checkBounds(const char *what, size_t bytes, size_t size) {
  if (bytes > size)
    throw RuntimeError(std::string("tilec runtime: ") + what + " of " +
                       std::to_string(bytes) + " bytes exceeds a buffer of " +
                       std::to_string(size) + " bytes");
}

void Buffer::copyFromHost(const void *src, size_t bytes) {
  checkBounds("copyFromHost", bytes, numBytes);
  if (bytes == 0)
    return;
  ensureContext();
  check(driver().cuMemcpyHtoD(devicePtr, src, bytes), "cuMemcpyHtoD_v2");
}

void Buffer::copyToHost(void *dst, size_t bytes) const {
  checkBounds("copyToHost", bytes, numBytes);
  if (bytes == 0)
    return;
  ensureContext();
  check(driver().cuMemcpyDtoH(dst, devicePtr, bytes), "cuMemcpyDtoH_v2");
}

void Buffer::copyFrom(const Buffer &src, size_t bytes, Stream *stream) {
  checkBounds("copyFrom (destination)", bytes, numBytes);
  checkBounds("copyFrom (source)", bytes, src.numBytes);
  if (bytes == 0)
    return;
  ensureContext();
  check(driver().cuMemcpyDtoDAsync(devicePtr, src.devicePtr, bytes,
                                   stream ? toStream(stream->handle())
                                          : nullptr),
        "cuMemcpyDtoDAsync_v2");
}

void Buffer::memsetZero() {
  if (numBytes == 0)
    return;
  ensureContext();
  check(driver().cuMemsetD8(devicePtr, 0, numBytes), "cuMemsetD8_v2");
}

//===----------------------------------------------------------------------===//
// Module and Kernel
//===----------------------------------------------------------------------===//

Module Module::load(const void *image, const char *what) {
  ensureContext();
  const Driver &d = driver();
  std::string errorLog(16384, '\0'), infoLog(16384, '\0');
  int options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                   CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES};
  void *values[] = {errorLog.data(),
                    reinterpret_cast<void *>(uintptr_t(errorLog.size())),
                    infoLog.data(),
                    reinterpret_cast<void *>(uintptr_t(infoLog.size()))};
  CUmodule handle = nullptr;
  CUresult result = d.cuModuleLoadDataEx(&handle, image, 4, options, values);
  errorLog.resize(errorLog.find('\0'));
  infoLog.resize(infoLog.find('\0'));
  if (result != CUDA_SUCCESS) {
    std::string msg = describe(result, "cuModuleLoadDataEx") + " loading " +
                      what;
    if (!errorLog.empty())
      msg += "\nJIT error log:\n" + errorLog;
    throw RuntimeError(msg);
  }
  Module m;
  m.module = handle;
  m.context = currentContext;
  m.jitInfoLog = std::move(infoLog);
  return m;
}

Module Module::loadPTX(const std::string &ptx) {
  return load(ptx.c_str(), "PTX");
}

Module Module::loadCubin(const std::string &image) {
  return load(image.data(), "a cubin");
}

Module::Module(Module &&other) noexcept
    : module(std::exchange(other.module, nullptr)), context(other.context),
      jitInfoLog(std::move(other.jitInfoLog)) {}

Module &Module::operator=(Module &&other) noexcept {
  std::swap(module, other.module);
  std::swap(context, other.context);
  std::swap(jitInfoLog, other.jitInfoLog);
  return *this;
}

Module::~Module() {
  if (module)
    tryLoadDriver()->cuModuleUnload(static_cast<CUmodule>(module));
}

Kernel Module::getKernel(const KernelSignature &sig) const {
  const Driver &d = driver();
  CUfunction function;
  check(d.cuModuleGetFunction(&function, static_cast<CUmodule>(module),
                              sig.name.c_str()),
        "cuModuleGetFunction", sig.name);
  // Beyond 48 KiB of dynamic shared memory a kernel has to opt in.
  if (sig.sharedBytes > 48 * 1024)
    if (CUresult r = d.cuFuncSetAttribute(
            function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
            static_cast<int>(sig.sharedBytes)))
      throw RuntimeError(describe(r, "cuFuncSetAttribute", sig.name) +
                         " setting the dynamic shared memory to " +
                         std::to_string(sig.sharedBytes) + " bytes");
  // What num_sms() and resident_programs() mean in this kernel's grid.
  ensureContext();
  GridLimits limits;
  limits.numSMs = currentContext->multiprocessorCount();
  int perSM = 0;
  check(d.cuOccupancyMaxActiveBlocksPerMultiprocessor(
            &perSM, function, static_cast<int>(sig.numThreads), sig.sharedBytes),
        "cuOccupancyMaxActiveBlocksPerMultiprocessor", sig.name);
  limits.residentPrograms = limits.numSMs * std::max(perSM, 1);
  return Kernel(function, sig, limits, context ? context : currentContext);
}

/// The address ranges of allocations a kernel's device was found to be able
/// to read, replaced round-robin.
struct CheckedRanges {
  static constexpr size_t kSlots = 8;
  std::mutex mutex;
  std::array<std::pair<uint64_t, uint64_t>, kSlots> ranges{}; ///< [begin, end)
  size_t next = 0;

  bool contains(uint64_t ptr) {
    std::lock_guard<std::mutex> lock(mutex);
    for (auto &[begin, end] : ranges)
      if (ptr >= begin && ptr < end)
        return true;
    return false;
  }
  void add(uint64_t begin, uint64_t end) {
    std::lock_guard<std::mutex> lock(mutex);
    ranges[next] = {begin, end};
    next = (next + 1) % kSlots;
  }
};

Kernel::Kernel(void *function, KernelSignature sig, GridLimits limits, const Context *context)
    : function(function), sig(std::move(sig)), limits(limits), context(context),
      checked(std::make_shared<CheckedRanges>()),
      launchName(cuda::internKernelName(this->sig.name)) {}

void Kernel::checkTensorMemory(const std::vector<ArgValue> &args) const {
  const Driver &d = driver();
  if (!d.cuPointerGetAttributes || !context)
    return; // an old driver: not checked
  for (size_t i = 0; i < args.size() && i < sig.params.size(); ++i) {
    if (!args[i].isTensor())
      continue;
    const TensorArg &t = args[i].tensor();
    bool empty = std::any_of(t.sizes.begin(), t.sizes.end(), [](int64_t s) { return s == 0; });
    if (empty || checked->contains(t.ptr))
      continue; // nothing is read, or known good
    // 8 zeroed bytes per answer: the attributes are 1 (bool) to 8 bytes.
    int attrs[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                   CU_POINTER_ATTRIBUTE_IS_MANAGED, CU_POINTER_ATTRIBUTE_CONTEXT,
                   CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, CU_POINTER_ATTRIBUTE_RANGE_SIZE};
    uint64_t values[6] = {};
    void *data[6];
    for (int k = 0; k < 6; ++k)
      data[k] = &values[k];
    if (d.cuPointerGetAttributes(6, attrs, data, t.ptr) != CUDA_SUCCESS)
      continue; // the driver cannot say
    unsigned memoryType = static_cast<unsigned>(values[0]);
    int ordinal = static_cast<int>(static_cast<uint32_t>(values[1]));
    bool managed = values[2] != 0;
    void *owner = reinterpret_cast<void *>(values[3]);
    uint64_t begin = values[4], size = values[5];
    auto where = [&] {
      char hex[32];
      std::snprintf(hex, sizeof(hex), "0x%llx", static_cast<unsigned long long>(t.ptr));
      return "tilec runtime: kernel '" + sig.name + "': argument " + std::to_string(i + 1) +
             " ('" + sig.params[i].name + "') at " + hex;
    };
    if (!managed && memoryType != CU_MEMORYTYPE_HOST && memoryType != CU_MEMORYTYPE_DEVICE) {
      // Not memory CUDA knows: a host pointer (or garbage).
      if (context->pageableMemoryAccess()) {
        checked->add(t.ptr, t.ptr + 1);
        continue;
      }
      throw ArgumentError(where() + " is not device memory (a host pointer?); copy it to "
                                    "the device first (the kernel is on CUDA device " +
                          std::to_string(context->ordinal) + ")");
    }
    if (!managed && memoryType == CU_MEMORYTYPE_DEVICE && ordinal != context->cuDevice)
      throw ArgumentError(where() + " is memory of CUDA device " + std::to_string(ordinal) +
                          ", but the kernel's module is loaded on device " +
                          std::to_string(context->ordinal));
    if (!managed && memoryType == CU_MEMORYTYPE_DEVICE && owner && owner != context->handle)
      throw ArgumentError(where() + " belongs to another CUDA context than the kernel's "
                                    "(device " + std::to_string(context->ordinal) +
                          "'s primary context)");
    if (size && begin <= t.ptr && t.ptr - begin < size)
      checked->add(begin, begin + size);
    else
      checked->add(t.ptr, t.ptr + 1);
  }
}

void Kernel::prepare(const std::vector<ArgValue> &args, LaunchConfig &config) const {
  prepareLaunch(sig, args, config, limits);
  checkTensorMemory(args);
}

void Kernel::launch(const std::vector<ArgValue> &args, Stream *stream) const {
  LaunchConfig config;
  prepare(args, config);
  launch(config, stream);
}

void Kernel::launch(const LaunchConfig &config, Stream *stream) const {
  const std::array<uint32_t, 3> &grid = config.grid;
  if (grid[0] == 0 || grid[1] == 0 || grid[2] == 0)
    return;
  ensureContext();
  const cuda::Driver &d = driver();
  CUstream s = stream ? toStream(stream->handle()) : nullptr;
  // Clusters where the kernel pairs its programs and the grid's x splits
  // into whole clusters (TILEC_CLUSTERS=0 turns them off, for comparisons).
  static const bool clustersOff = [] {
    const char *v = std::getenv("TILEC_CLUSTERS");
    return v && std::string_view(v) == "0";
  }();
  if (sig.cluster > 1 && grid[0] % sig.cluster == 0 && d.cuLaunchKernelEx && !clustersOff) {
    cuda::CUlaunchAttribute attr{};
    attr.id = cuda::CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attr.value.clusterDim = {sig.cluster, 1, 1};
    cuda::CUlaunchConfig lc{grid[0], grid[1], grid[2], sig.numThreads, 1, 1,
                            sig.sharedBytes, s, &attr, 1};
    check(d.cuLaunchKernelEx(&lc, static_cast<CUfunction>(function),
                             const_cast<void **>(config.params), nullptr),
          "cuLaunchKernelEx", sig.name);
  } else {
    check(d.cuLaunchKernel(static_cast<CUfunction>(function), grid[0], grid[1], grid[2],
                           sig.numThreads, 1, 1, sig.sharedBytes, s,
                           const_cast<void **>(config.params), nullptr),
          "cuLaunchKernel", sig.name);
  }
  cuda::noteLaunch(launchName);
}

} // namespace tilec
