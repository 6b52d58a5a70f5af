//===- Interpreter.h - Reference execution of kernels on the CPU -*- C++ -*-===//
//
// Runs a kernel with the language's semantics on host memory, one program of
// the grid after another: the reference that CI checks numerics with (no GPU
// needed) and that GPU runs are compared against. It interprets the checked
// AST directly, rounding every operation to its element type (f16/bf16/f32
// rounding, integer wrap-around), so results match the GPU up to the order of
// reductions and the GPU's fast exp/log.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_INTERPRETER_H
#define TILEC_INTERPRETER_H

#include "tilec/Compiler.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace tilec {

/// One launch argument for the interpreter: a tensor in host memory (element
/// bytes in the parameter's dtype, strides in elements) or a scalar.
struct HostArg {
  bool isTensor = false;
  void *data = nullptr;
  std::vector<int64_t> sizes, strides;
  double f = 0;  ///< float scalar
  int64_t i = 0; ///< integer scalar

  static HostArg tensor(void *data, std::vector<int64_t> sizes,
                        std::vector<int64_t> strides) {
    HostArg a;
    a.isTensor = true;
    a.data = data;
    a.sizes = std::move(sizes);
    a.strides = std::move(strides);
    return a;
  }
  static HostArg scalarFloat(double v) {
    HostArg a;
    a.f = v;
    return a;
  }
  static HostArg scalarInt(int64_t v) {
    HostArg a;
    a.i = v;
    a.f = double(v);
    return a;
  }
};

/// The device the interpreter stands for in a grid's `num_sms()` and
/// `resident_programs()`: 4 multiprocessors that each hold 2 programs. (A
/// correct kernel computes the same for any values; small ones keep the
/// programs of a persistent kernel few but more than one.)
inline constexpr int64_t kInterpreterSMs = 4;
inline constexpr int64_t kInterpreterProgramsPerSM = 2;

/// The most programs (grid x * y * z) the interpreter runs in one call.
inline constexpr uint64_t kInterpreterMaxPrograms = uint64_t(1) << 24;

/// Why interpretKernel failed.
enum class InterpretFailure {
  Compile,  ///< the source: `error` is the diagnostic
  Argument, ///< no such kernel, arguments that do not match, a grid too large
  Run,      ///< while running: an assertion, an out-of-range access
};

/// Runs kernel `kernel` of `source` (compiled with `options`' defines) on
/// the CPU over its whole grid. Returns false with the reason in `error`
/// (a compile error, a bad argument list, a tensor with NULL data and a
/// nonzero size, a grid of more than kInterpreterMaxPrograms programs) and
/// its kind in `*failure` (if not NULL).
bool interpretKernel(std::string_view source, const CompileOptions &options,
                     const std::string &kernel, const std::vector<HostArg> &args,
                     std::string &error, InterpretFailure *failure = nullptr);

/// Where `print` in an interpreted kernel writes its lines (each ends in a
/// newline); empty: the process's stdout (the default). Process-wide; calls
/// of the sink are serialized.
using PrintSink = std::function<void(std::string_view text)>;
void setInterpreterPrintSink(PrintSink sink);
/// Writes `text` to the sink (or stdout).
void interpreterPrint(std::string_view text);

/// `x` rounded to TF32 (10 mantissa bits, to nearest, ties away from zero),
/// as cvt.rna.tf32.f32 rounds the operands of an `mma(..., tf32 = true)`.
float roundToTf32(float x);

} // namespace tilec

#endif // TILEC_INTERPRETER_H
