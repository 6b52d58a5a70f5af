//===- Signature.h - Kernel launch signature shared by compiler and runtime ===//
//
// A compiled kernel is described to the runtime by its signature: the
// parameters in source order, the launch ABI they imply, the number of threads
// per block, and the `grid(...)` clause as a small expression tree that the
// runtime evaluates from the launch arguments. This header has no LLVM/MLIR
// dependency so that the runtime stays tiny.
//
// Launch ABI (what the generated PTX entry expects, in order, per parameter):
//   scalar of type T      -> one parameter of T's size (f16/bf16: 2 bytes)
//   tensor<T, R>          -> a 64-bit device pointer, then R x i64 sizes, then
//                            R x i64 strides (in elements)
// then, for each entry of `tma` (operands an mma kernel stages with TMA):
//   a 128-byte CUtensorMap by value (64-byte aligned) describing the tensor
//   with the entry's box, 128-byte swizzle and zero fill, then an i32 that is
//   1 when the map is valid and 0 when the tensor cannot be described (the
//   kernel then copies that operand with ordinary loads).
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_RUNTIME_SIGNATURE_H
#define TILEC_RUNTIME_SIGNATURE_H

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tilec {

/// Element and scalar types of the language. F8E4M3 (torch's
/// float8_e4m3fn: no infinities, largest finite 448) and F8E5M2 are storage
/// types: loaded, stored, cast and multiplied by mma, never computed with.
enum class ScalarType : uint8_t {
  I1, I8, I16, I32, I64, U8, U16, U32, U64, F16, BF16, F32, F64, F8E4M3, F8E5M2
};

/// Size in bytes of one value of `t` as stored in memory (i1 is one byte).
size_t scalarTypeSize(ScalarType t);
/// The language spelling: "f32", "bf16", ...
const char *scalarTypeName(ScalarType t);
/// Parses the language spelling; nullopt when `name` is not a scalar type.
std::optional<ScalarType> parseScalarType(std::string_view name);
bool isFloatType(ScalarType t);
/// f8e4m3 or f8e5m2 (isFloatType holds for them too).
bool isFloat8Type(ScalarType t);
bool isSignedIntType(ScalarType t);
bool isUnsignedIntType(ScalarType t);

/// One kernel parameter.
struct ParamInfo {
  std::string name;
  bool isTensor = false;
  ScalarType dtype = ScalarType::F32;
  unsigned rank = 0; ///< Tensor rank; 0 for scalars.
};

/// An integer expression over the launch arguments, as written in `grid(...)`.
struct GridExpr {
  enum class Kind : uint8_t {
    Const,  ///< `value`
    Scalar, ///< integer scalar parameter `param`
    Shape,  ///< `params[param].shape[dim]`
    Stride, ///< `params[param].stride[dim]`
    Add, Sub, Mul, Div, Rem, CDiv, Min, Max,
    NumSMs,          ///< `num_sms()`: the device's multiprocessors
    ResidentPrograms, ///< `resident_programs()`: SMs x blocks of this kernel per SM
    /// Comparisons, `&&` and `||`, 1 or 0: the conditions of `@require(...)`.
    Lt, Le, Gt, Ge, Eq, Ne, And, Or,
    /// `where(c, a, b)`: a where c is not 0, else b (three operands).
    Where
  };
  Kind kind = Kind::Const;
  int64_t value = 0;
  unsigned param = 0;
  unsigned dim = 0;
  std::vector<GridExpr> operands;

  static GridExpr constant(int64_t v) {
    GridExpr e;
    e.value = v;
    return e;
  }
  /// Human-readable form, e.g. "cdiv(x.shape[0], 1024)".
  std::string str(const std::vector<ParamInfo> &params) const;
};

/// `@require(cond, "message")`: a condition on the launch arguments that the
/// runtime (and the interpreter) checks before every launch; a launch where
/// it does not hold is an error naming the kernel, the condition with the
/// values it saw, and the message.
struct Requirement {
  GridExpr cond;
  std::string message;
};

/// `@heuristic(NAME = expr)`: a compile-time parameter the launch paths
/// choose from the arguments (the kernel is compiled again with NAME set to
/// expr's value), present only where the program did not fix NAME.
struct Heuristic {
  std::string param;
  GridExpr value;
};

/// The value of `e` when it reads no launch argument and no device property
/// (only constants and operators), as the runtime would compute it at a
/// launch; nullopt otherwise or when it fails (division by zero, overflow).
std::optional<int64_t> evaluateConstant(const GridExpr &e);

/// A TMA descriptor the runtime builds at launch for a 2-D tensor parameter
/// (row-major tiles of `boxRows` x `boxCols` elements, 128-byte swizzle), or
/// a 3-D one whose leading dimension is a batch (one matrix per box).
struct TmaOperand {
  unsigned param = 0;
  unsigned boxCols = 64;
  unsigned boxRows = 64;
};

/// Everything the runtime needs to launch one compiled kernel.
struct KernelSignature {
  std::string name;
  std::vector<ParamInfo> params;
  std::vector<GridExpr> grid; ///< 1 to 3 dimensions (x, y, z).
  unsigned numThreads = 128;  ///< Threads per block.
  unsigned sharedBytes = 0;   ///< Static shared memory is in the PTX; dynamic here.
  /// `@tune(NAME in [...])`: the candidate values of compile-time parameters
  /// that an autotuner may choose from (empty when the kernel is not tuned or
  /// every tuned parameter was fixed with -D).
  std::vector<std::pair<std::string, std::vector<int64_t>>> tuneSpace;
  std::vector<TmaOperand> tma;
  /// Programs launched in clusters of this many along grid dimension 0 when
  /// the grid's x is a multiple of it (else one by one; the kernel reads its
  /// cluster's size and works either way): 2 where the mma pipeline shares
  /// one operand's tiles between the pair by TMA multicast.
  unsigned cluster = 1;
  std::vector<Requirement> requirements;
  std::vector<Heuristic> heuristics;
};

/// A stable text form of signatures, used by the compile cache and by
/// generated AOT headers:
///   kernel saxpy threads 128 shared 0
///   param a scalar f32 0
///   param x tensor f32 1
///   grid (cdiv (shape 1 0) 1024)
///   tune BLOCK 512 1024 2048
///   tma 0 64 128
///   cluster 2
///   require (le (shape 1 1) (const 1024)) the message, to the end of the line
///   end
std::string serializeSignatures(const std::vector<KernelSignature> &sigs);
/// Parses serializeSignatures' output; nullopt when `text` is malformed.
std::optional<std::vector<KernelSignature>>
parseSignatures(std::string_view text);

} // namespace tilec

#endif // TILEC_RUNTIME_SIGNATURE_H
