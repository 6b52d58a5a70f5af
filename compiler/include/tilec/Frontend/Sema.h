//===- Sema.h - Semantic checks of the tile language -------------*- C++ -*-===//
//
// Sema instantiates a kernel with its compile-time parameters (defaults or
// `-D NAME=VALUE`), resolves names, checks types and shapes, folds
// compile-time integers and turns the grid clause into a GridExpr. It
// annotates the AST in place; MLIRGen relies on everything it checked.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_FRONTEND_SEMA_H
#define TILEC_FRONTEND_SEMA_H

#include "tilec/Frontend/AST.h"
#include "tilec/Frontend/Diagnostics.h"

#include <map>
#include <set>
#include <optional>
#include <string>

namespace tilec {

/// `-D NAME=VALUE` overrides, by name.
using Defines = std::map<std::string, std::string>;

/// A kernel with all compile-time parameters bound and its body checked.
struct KernelInstance {
  KernelDecl *kernel = nullptr;
  std::map<std::string, int64_t> intConsts;
  std::map<std::string, ScalarType> typeConsts;
  std::vector<SemaType> paramTypes; ///< resolved, one per kernel parameter
  KernelSignature signature;        ///< params and grid (threads: later)
  /// `@launch(num_warps = ..., min_blocks_per_sm = ...)`; 0 when not given.
  unsigned numWarps = 0;
  unsigned minBlocksPerSM = 0;
  /// `@launch(cluster = 1 or 2)`; 0 when not given (no clusters).
  unsigned cluster = 0;
  /// @launch(pingpong = 0 | 1); -1 when absent (the compiler chooses).
  int pingpong = -1;
  /// @launch(persistent = 0 | 1): the body runs in a loop over the grid's
  /// programs, one program per resident slot (Sema rewrites the kernel).
  bool persistent = false;
  /// @launch(group_rows = G): programs numbered in grouped order, G values
  /// of grid dimension 0 for each of dimension 1 (0, or not given: the launch order).
  unsigned groupRows = 0;
  /// @launch(pair_tiles = 1): a persistent program takes the grid's programs
  /// two consecutive ones at a time (ignored without persistent = 1).
  bool pairTiles = false;
  /// Set by Sema: the grid's x was rounded up to even for clusters of two in
  /// grouped order (group_rows with cluster = 2, not persistent), so with an
  /// odd number of rows of tiles the last pairs' second program runs past
  /// the grid (tile.padded_grid).
  bool paddedGrid = false;
  /// @launch(ftz = 1): approximate exp/exp2/log/log2 flush subnormals.
  bool ftz = false;
  /// @launch(late_turn = 1): a consumer warpgroup waits for its turn at the
  /// tensor cores after computing the turn's register operand (tile.late_turn).
  /// 2: also after rescaling the accumulator that mma adds to (every 8th
  /// element joins the barrier id's computation).
  unsigned lateTurn = 0;
  /// @launch(turns = 0): the consumer warpgroups of an mma loop issue their
  /// wgmmas without the ordered barrier that hands the tensor cores from one
  /// to the other (tile.no_turns).
  bool noTurns = false;
  /// The compile target's SM version (90 for sm_90a, 80 for sm_80): the
  /// value of `arch()`, an input to checkKernel.
  int64_t archVersion = 90;
};

/// The SM version of a target name, the value `arch()` folds to: the
/// digits after "sm_" (sm_90a -> 90, sm_80 -> 80); 90 for any other name.
int64_t archVersion(llvm::StringRef arch);

/// Checks `kernel` with `defines` applied, for the target `arch` (sm_90a,
/// sm_90, sm_80: what `arch()` folds to). Returns false after reporting
/// errors. `usedDefines` collects the names of the defines it consumed.
bool checkKernel(KernelDecl &kernel, const Defines &defines, DiagEngine &diags,
                 KernelInstance &out, std::set<std::string> &usedDefines,
                 const std::string &arch = "sm_90a");

/// The type that two operands of a binary operation are converted to before
/// it is applied, or an error message in the user's terms ("cannot add
/// tile<f32>[128] and tile<f32>[96]").
struct Unified {
  SemaType type;
  std::string error;
};
Unified unifyOperands(const SemaType &a, const SemaType &b, const char *verb);
/// `t` (typed, not weak) at the element shape of a print/assert `call`: a
/// tile of that shape, or `t` itself when the call has only scalars.
SemaType atElementShape(const Expr &call, SemaType t);
/// Numpy broadcasting of two tile shapes (aligned at the innermost
/// dimension); nullopt when a dimension pair is neither equal nor has a 1.
std::optional<std::vector<int64_t>> broadcastShapes(const std::vector<int64_t> &a,
                                                    const std::vector<int64_t> &b);

/// The value of a literal-like expression (a literal, a negated literal, or
/// a compile-time integer) that takes the type of its use. `i` holds the
/// value truncated to an integer (0 when it does not fit).
bool literalValue(const Expr &e, double &f, int64_t &i);

/// The elementwise functions of one argument (exp, log, sqrt, abs, ...),
/// from UnaryMath.def, which Sema, MLIRGen and the interpreter all read.
inline constexpr const char *kUnaryMathNames[] = {
#define TILEC_UNARY_MATH(name, op, f64, host) #name,
#include "tilec/Frontend/UnaryMath.def"
};
bool isUnaryMathFunction(llvm::StringRef name);
/// Whether elementwise function `name` takes an f64 argument (its f64
/// column in UnaryMath.def).
bool unaryMathSupportsF64(llvm::StringRef name);

/// `v` truncated toward zero, or 0 when it is not finite or out of range.
int64_t truncToInt64(double v);

/// "add", "subtract", ... for messages.
const char *opVerb(Expr::Op op);

} // namespace tilec

#endif // TILEC_FRONTEND_SEMA_H
