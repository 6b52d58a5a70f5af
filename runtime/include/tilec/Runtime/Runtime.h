//===- Runtime.h - Thin CUDA driver runtime for compiled kernels -*- C++ -*-===//
//
// Devices, buffers, streams, events, modules and typed kernel launch over the
// CUDA driver API. The driver is loaded with dlopen when first needed, so this
// library builds and its non-GPU parts run on machines without a GPU; a
// missing driver is a RuntimeError, never a crash. Every failure throws a
// RuntimeError whose message names the failing call, the CUDA error and the
// kernel where one is involved. Grid evaluation and argument packing are
// plain functions so that they can be tested without a driver.
//
// Objects that need a context (Buffer, Stream, Event, Module) use the one made
// current on the calling thread by Context::get, or device 0's when none is.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_RUNTIME_RUNTIME_H
#define TILEC_RUNTIME_RUNTIME_H

#include "tilec/Runtime/Signature.h"

#include <array>
#include <cstddef>
#include <memory>
#include <stdexcept>

namespace tilec {

/// The one exception type of the runtime.
class RuntimeError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// Arguments that do not match a kernel's signature (count, kind, rank,
/// element type, sizes), found before the driver is used, or tensors in
/// memory the kernel's device cannot read (a host pointer, another
/// device's memory), found by asking the driver.
class ArgumentError : public RuntimeError {
public:
  using RuntimeError::RuntimeError;
};

/// True when the CUDA driver library can be loaded. Never throws.
bool driverAvailable() noexcept;
/// The number of CUDA devices (0 when the driver reports none).
int deviceCount();

/// A device's primary context. It is retained once and never released: it
/// lives until the process exits, so objects destroyed at exit stay valid.
class Context {
public:
  /// Retains the primary context of `device` and makes it current on the
  /// calling thread (initialising the driver on first use).
  static Context &get(int device = 0);

  int device() const { return ordinal; }
  std::string deviceName() const;
  /// Major * 10 + minor, e.g. 90 for an H100/H200.
  int computeCapability() const;
  int multiprocessorCount() const;
  /// Whether kernels can read pageable host memory (HMM or ATS): then a
  /// host pointer is a valid tensor argument.
  bool pageableMemoryAccess() const;
  /// Makes this context current on the calling thread.
  void makeCurrent();
  /// Waits for all work in this context.
  void synchronize();

  Context(const Context &) = delete;
  Context &operator=(const Context &) = delete;

private:
  friend class Kernel;
  Context(int ordinal, int cuDevice, void *handle)
      : ordinal(ordinal), cuDevice(cuDevice), handle(handle) {}
  int ordinal;
  int cuDevice;
  void *handle;
};

/// A stream of device work; RAII over CUstream. Move-only.
class Graph;

class Stream {
public:
  /// Creates a new stream (ordered with the default stream, like CUDA's
  /// default stream flags, so synchronous copies stay safe to mix with it).
  Stream();
  Stream(Stream &&other) noexcept;
  Stream &operator=(Stream &&other) noexcept;
  ~Stream();

  /// A stream that does not synchronize with the legacy default stream
  /// (cheaper launches; order it against synchronous copies yourself).
  static Stream nonBlocking();
  /// The legacy default (null) stream.
  static Stream &defaultStream();
  /// Wraps a CUstream owned by someone else (not destroyed with the wrapper).
  static Stream borrow(void *cuStream) {
    Stream s(nullptr);
    s.stream = cuStream;
    return s;
  }
  void synchronize();
  /// The CUstream (null for the default stream).
  void *handle() const { return stream; }

  /// Starts recording: launches and copies on this stream are captured into
  /// a graph instead of running. Not allowed on the default stream.
  void beginCapture();
  /// Stops recording and returns the captured work as a replayable graph.
  Graph endCapture();

private:
  explicit Stream(std::nullptr_t) {}
  void *stream = nullptr;
  bool owned = false;
};

/// A device allocation; RAII over cuMemAlloc/cuMemFree. Move-only. Copies
/// without a stream are synchronous.
class Buffer {
public:
  Buffer() = default;
  explicit Buffer(size_t bytes);
  Buffer(Buffer &&other) noexcept;
  Buffer &operator=(Buffer &&other) noexcept;
  ~Buffer();

  uint64_t ptr() const { return devicePtr; }
  size_t size() const { return numBytes; }
  void copyFromHost(const void *src, size_t bytes);
  void copyToHost(void *dst, size_t bytes) const;
  /// Copies `bytes` from the start of `src`; asynchronous on `stream` when
  /// given, otherwise ordered on the default stream.
  void copyFrom(const Buffer &src, size_t bytes, Stream *stream = nullptr);
  void memsetZero();

private:
  uint64_t devicePtr = 0;
  size_t numBytes = 0;
};

/// A CUDA event for ordering and timing; RAII over CUevent. Move-only.
/// An instantiated CUDA graph: a captured sequence of launches replayed with
/// one call (much less CPU time per kernel than launching one by one).
class Graph {
public:
  Graph(Graph &&other) noexcept;
  Graph &operator=(Graph &&other) noexcept;
  ~Graph();
  /// Replays the whole graph on `stream`.
  void launch(Stream &stream);

private:
  friend class Stream;
  Graph(void *graph, void *exec) : graph(graph), exec(exec) {}
  void *graph = nullptr;
  void *exec = nullptr;
};

/// Copies between host memory and any device pointer (synchronous).
void copyHostToDevice(uint64_t dst, const void *src, size_t bytes);
void copyDeviceToHost(void *dst, uint64_t src, size_t bytes);

class Event {
public:
  Event();
  Event(Event &&other) noexcept;
  Event &operator=(Event &&other) noexcept;
  ~Event();

  void record(Stream &stream = Stream::defaultStream());
  void synchronize();
  /// Milliseconds between two recorded, completed events.
  static float elapsedMs(const Event &start, const Event &end);

private:
  void *event = nullptr;
};

/// A tensor launch argument: device pointer, sizes and strides (in elements).
struct TensorArg {
  uint64_t ptr = 0;
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;
  /// The element type of the memory, when the caller knows it: a launch
  /// checks it against the parameter's (an f16 buffer passed for a
  /// tensor<f32, 1> is an error naming the parameter). Unset: not checked.
  std::optional<ScalarType> dtype;

  /// A row-major contiguous tensor of the given sizes.
  static TensorArg contiguous(uint64_t ptr, std::vector<int64_t> sizes);
  /// The same, of element type `dtype`.
  static TensorArg contiguous(uint64_t ptr, std::vector<int64_t> sizes, ScalarType dtype) {
    TensorArg t = contiguous(ptr, std::move(sizes));
    t.dtype = dtype;
    return t;
  }
};

/// One launch argument: a tensor, or a scalar with its type and raw bytes.
/// The scalar constructors are implicit so that argument lists read naturally:
/// `kernel.launch({2.0f, TensorArg::contiguous(x.ptr(), {n}), ...})`.
class ArgValue {
public:
  ArgValue(TensorArg tensor);
  ArgValue(int32_t v);
  ArgValue(int64_t v);
  ArgValue(uint32_t v);
  ArgValue(float v);
  ArgValue(double v);
  /// A scalar of type `type` holding `value` converted to it: floats round to
  /// nearest even (f16 and bf16 included); integers must be in range, and a
  /// float becomes an integer only when it is integral.
  static ArgValue scalar(ScalarType type, double value);
  static ArgValue scalar(ScalarType type, int64_t value);
  static ArgValue scalar(ScalarType type, int value) {
    return scalar(type, static_cast<int64_t>(value));
  }

  bool isTensor() const { return tensorValue.has_value(); }
  const TensorArg &tensor() const { return *tensorValue; }
  /// The scalar's type (meaningless for tensors).
  ScalarType type() const { return scalarType; }
  /// The scalar's bytes in memory order; scalarTypeSize(type()) of them.
  const uint8_t *bytes() const { return raw.data(); }
  /// The scalar's value when its type is an integer type.
  std::optional<int64_t> intValue() const;
  /// The scalar's value as a double (exact for floats; ints may round).
  double doubleValue() const;
  /// This scalar converted to `target` under the rules of `scalar`.
  ArgValue convertTo(ScalarType target) const;

private:
  ArgValue() = default;
  std::optional<TensorArg> tensorValue;
  ScalarType scalarType = ScalarType::I32;
  std::array<uint8_t, 8> raw{};
};

/// IEEE binary16 bits of `v`, rounded to nearest even.
uint16_t floatToHalfBits(double v);
/// bfloat16 bits of `v`, rounded to nearest even.
uint16_t floatToBFloat16Bits(double v);
/// The value of f16 / bf16 bits.
double halfBitsToDouble(uint16_t bits);
double bfloat16BitsToDouble(uint16_t bits);
/// f8e4m3 / f8e5m2 bits of `v` (round to nearest even, saturated to the
/// largest finite value as PTX's cvt.rn.satfinite), and their value.
uint8_t floatToFloat8Bits(ScalarType t, double v);
double float8BitsToDouble(ScalarType t, uint8_t bits);
/// `v` rounded to float type `t` (f8, f16, bf16, f32; f64 unchanged).
double roundToFloatType(ScalarType t, double v);
/// Reads / writes one float element of type `t` at `p` (host memory).
double loadFloatElement(ScalarType t, const void *p);
void storeFloatElement(ScalarType t, void *p, double v);

/// Launch parameters laid out per the ABI of Signature.h.
struct PackedArgs {
  std::vector<uint64_t> storage; ///< 8-byte aligned backing store.
  std::vector<size_t> offsets;   ///< Byte offset of each ABI parameter.
  size_t size = 0;               ///< Bytes of storage in use.

  const uint8_t *bytes() const {
    return reinterpret_cast<const uint8_t *>(storage.data());
  }
  /// One pointer per ABI parameter, as cuLaunchKernel's kernelParams wants.
  std::vector<void *> kernelParams();
};

/// Checks `args` against `sig` (count, tensor/scalar kinds, tensor ranks,
/// scalar conversions); throws a RuntimeError naming the kernel and argument.
void checkArguments(const KernelSignature &sig,
                    const std::vector<ArgValue> &args);
/// What `num_sms()` and `resident_programs()` stand for in a grid: the
/// device's multiprocessors, and that times the blocks of the kernel that fit
/// on one at once (registers, shared memory, threads). 0: not known (no
/// device), and a grid that uses it cannot be evaluated.
struct GridLimits {
  int64_t numSMs = 0;
  int64_t residentPrograms = 0;
};
/// Evaluates `sig.grid` over `args` (missing dimensions are 1). A dimension
/// may be 0 (nothing to launch); a negative or too large one, or a division
/// by zero, is a RuntimeError quoting the expression.
std::array<uint32_t, 3> evaluateGrid(const KernelSignature &sig,
                                     const std::vector<ArgValue> &args,
                                     const GridLimits &limits = {});
/// The values `sig`'s @heuristic expressions give for `args` (parameter
/// name, value), in declaration order; a launch path compiles the kernel
/// with them set (-D) and launches that. Empty when every such parameter
/// was fixed. Arguments that do not match, or an expression that fails
/// (division by zero), are an ArgumentError.
std::vector<std::pair<std::string, int64_t>>
evaluateHeuristics(const KernelSignature &sig, const std::vector<ArgValue> &args,
                   const GridLimits &limits = {});
/// Packs `args` per the launch ABI: scalars converted to the parameter's type
/// and aligned to their size; tensors as ptr, sizes..., strides... (i64 each).
PackedArgs packArguments(const KernelSignature &sig,
                         const std::vector<ArgValue> &args);
/// The L2 promotion a TMA descriptor of `t` asks for: 256 bytes
/// (CU_TENSOR_MAP_L2_PROMOTION_L2_256B, 3) where its base and row pitches
/// are multiples of 256 bytes, 128 (2) otherwise.
int tmaL2Promotion(const TensorArg &t, size_t elemBytes);

/// Everything cuLaunchKernel needs, packed without heap allocation. The
/// `params` pointers point into `storage`, so a config is filled in place
/// and must not be copied before the launch.
struct LaunchConfig {
  LaunchConfig() = default;
  LaunchConfig(const LaunchConfig &) = delete;
  LaunchConfig &operator=(const LaunchConfig &) = delete;
  static constexpr size_t kMaxParams = 96;
  /// Room for the values: a kernel with five 3-D tensors and three TMA
  /// descriptors (128 bytes each, 64-byte aligned) takes about 800 bytes.
  static constexpr size_t kStorageWords = 256;
  std::array<uint32_t, 3> grid{};
  alignas(64) uint64_t storage[kStorageWords];
  void *params[kMaxParams];
  size_t numParams = 0;
};
/// Checks the arguments, evaluates the grid and packs the parameters into
/// `config`.
void prepareLaunch(const KernelSignature &sig, const std::vector<ArgValue> &args,
                   LaunchConfig &config, const GridLimits &limits = {});

struct CheckedRanges;

/// A kernel of a loaded module. Valid while its Module lives.
///
/// Besides the signature checks of prepareLaunch, launch(args) and prepare()
/// ask the driver where each tensor's memory is (cuPointerGetAttributes):
/// memory CUDA does not know (a host pointer; allowed where the device reads
/// pageable host memory), another device's memory or another context's is
/// an ArgumentError naming the kernel and the parameter. Pinned host memory
/// and managed memory are accepted. The answer is kept for the allocation
/// (the last 8 checked allocations per kernel), so a launch whose tensors lie
/// in recently checked allocations makes no driver call for them; a launch
/// of a prepared LaunchConfig checks nothing (it was checked when prepared).
class Kernel {
public:
  const KernelSignature &signature() const { return sig; }
  const std::string &name() const { return sig.name; }
  void *handle() const { return function; }
  /// The device's limits for this kernel (see GridLimits).
  const GridLimits &gridLimits() const { return limits; }
  std::array<uint32_t, 3> gridFor(const std::vector<ArgValue> &args) const {
    return evaluateGrid(sig, args, limits);
  }
  /// Launches with block (numThreads, 1, 1) and sharedBytes of dynamic shared
  /// memory on `stream` (the default stream when null). Asynchronous.
  void launch(const std::vector<ArgValue> &args,
              Stream *stream = nullptr) const;
  /// The two halves of launch(): check the arguments, evaluate the grid and
  /// pack the parameters once (prepare), then launch that as often as
  /// wanted (the tensors must stay where they were).
  void prepare(const std::vector<ArgValue> &args, LaunchConfig &config) const;
  void launch(const LaunchConfig &config, Stream *stream = nullptr) const;
  /// The tensors' memory check of launch(args) and prepare() (see above).
  void checkTensorMemory(const std::vector<ArgValue> &args) const;

private:
  friend class Module;
  Kernel(void *function, KernelSignature sig, GridLimits limits, const Context *context);
  void *function;
  KernelSignature sig;
  GridLimits limits;
  /// The context the module was loaded in (contexts live until exit).
  const Context *context;
  /// Allocations whose memory this kernel's device can read (shared by
  /// copies of the kernel).
  std::shared_ptr<CheckedRanges> checked;
  /// The name, interned for the process (a sticky fault's message names the
  /// last kernel launched, which may since have been destroyed).
  const char *launchName;
};

/// A loaded module; RAII over CUmodule. Move-only.
class Module {
public:
  /// JIT-compiles and loads PTX text; a failure quotes the JIT error log.
  static Module loadPTX(const std::string &ptx);
  /// Loads a cubin (or fatbin) image.
  static Module loadCubin(const std::string &image);
  Module(Module &&other) noexcept;
  Module &operator=(Module &&other) noexcept;
  ~Module();

  /// Looks up `sig.name`, raising its dynamic shared memory limit if needed.
  Kernel getKernel(const KernelSignature &sig) const;
  /// The JIT's info log from loading (may be empty).
  const std::string &infoLog() const { return jitInfoLog; }

private:
  Module() = default;
  static Module load(const void *image, const char *what);
  void *module = nullptr;
  Context *context = nullptr; ///< the one it was loaded in
  std::string jitInfoLog;
};

} // namespace tilec

#endif // TILEC_RUNTIME_RUNTIME_H
