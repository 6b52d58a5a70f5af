//===- AST.h - Syntax tree of the tile language ------------------*- C++ -*-===//
//
// The parser builds this tree; Sema annotates every expression with its type
// (and its value, when it is a compile-time constant); MLIRGen reads it.
// Nodes are deliberately plain structs with a kind tag: the language is small
// and a single Expr node keeps the passes over it short.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_FRONTEND_AST_H
#define TILEC_FRONTEND_AST_H

#include "tilec/Runtime/Signature.h"

#include "llvm/Support/SMLoc.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tilec {

class DiagEngine;

/// A type as written in source.
struct TypeExpr {
  enum class Kind { Scalar, Named, Tensor };
  Kind kind = Kind::Scalar;
  llvm::SMLoc loc;
  ScalarType scalar = ScalarType::F32; ///< Kind::Scalar
  std::string name;                    ///< Kind::Named (a type parameter)
  std::unique_ptr<TypeExpr> element;   ///< Kind::Tensor
  unsigned rank = 0;                   ///< Kind::Tensor
};

/// The type of a value, as Sema computes it.
struct SemaType {
  enum class Kind { Invalid, Void, Scalar, Tile, View, List };
  Kind kind = Kind::Invalid;
  ScalarType elem = ScalarType::F32;
  std::vector<int64_t> shape; ///< Tile
  unsigned rank = 0;          ///< View
  /// An untyped literal (or constant expression of literals): it takes the
  /// type of the other operand, as `2 * x` does for any float x.
  bool weak = false;

  static SemaType scalar(ScalarType t, bool weak = false) {
    SemaType s;
    s.kind = Kind::Scalar;
    s.elem = t;
    s.weak = weak;
    return s;
  }
  static SemaType tile(ScalarType t, std::vector<int64_t> shape) {
    SemaType s;
    s.kind = Kind::Tile;
    s.elem = t;
    s.shape = std::move(shape);
    return s;
  }
  bool isScalar() const { return kind == Kind::Scalar; }
  bool isTile() const { return kind == Kind::Tile; }
  bool isValue() const { return isScalar() || isTile(); }
  /// "f32", "tile<f32>[128, 64]", "tensor<f32, 2>".
  std::string str() const;
};

/// The tallest expression tree the parser accepts (see Expr::height).
constexpr unsigned kMaxExprHeight = 4096;

struct FnDecl;
struct Expr;
using ExprPtr = std::unique_ptr<Expr>;
struct Stmt;

struct Expr {
  enum class Kind {
    IntLit, FloatLit, BoolLit, StringLit, Name, Unary, Binary, Call, ViewField, List,
    Inline, ///< a call of an `fn` helper, expanded by Sema: `body`, then `args[0]`
    Lambda  ///< `fn(a, b) { ... }`: a combiner of reduce/scan (`lambda`)
  };
  enum class Op {
    None, Neg, Not, Add, Sub, Mul, Div, Rem, Lt, Le, Gt, Ge, Eq, Ne, And, Or,
    BitNot, BitAnd, BitOr, BitXor, Shl, Shr
  };
  Kind kind;
  llvm::SMLoc loc;
  Op op = Op::None;
  int64_t intValue = 0;
  double floatValue = 0;
  std::string name; ///< Name, Call callee, ViewField field ("shape"/"stride")
  std::unique_ptr<TypeExpr> typeArg; ///< Call: `cast<T>(...)`
  std::vector<ExprPtr> args;         ///< operands, call arguments, list items
  std::string argName;               ///< a named call argument (`axis = 1`)
  /// The height of this tree as parsed (1 for a leaf; a chain a + b + c is
  /// one level per operator; a combiner counts its body). The parser keeps
  /// it at most kMaxExprHeight, which bounds every recursive walk of it.
  unsigned height = 1;

  // Filled in by Sema.
  SemaType type;
  std::optional<int64_t> constInt; ///< compile-time integer value
  std::vector<int64_t> permutation; ///< transpose/permute: result dim d is operand dim [d]
  std::optional<int64_t> axis;      ///< a reduction over one axis (`axis = d`)
  bool tf32 = false;                ///< mma: `tf32 = true`, f32 operands on the tensor cores
  /// gather/scatter/atomics/print/assert: the shape its tile operands
  /// broadcast to (empty when they are all scalars).
  std::vector<int64_t> elementShape;
  /// Inline: the helper's statements (argument bindings first); they run in
  /// a scope of their own.
  std::vector<std::unique_ptr<Stmt>> body;
  /// Lambda: the anonymous helper (shared by clones).
  std::shared_ptr<const FnDecl> lambda;

  Expr(Kind kind, llvm::SMLoc loc) : kind(kind), loc(loc) {}
};

struct Stmt;
using StmtPtr = std::unique_ptr<Stmt>;

struct Stmt {
  enum class Kind { Let, Assign, ExprStmt, For, If, While, Return };
  Kind kind;
  llvm::SMLoc loc;
  bool isVar = false; ///< Let: `var` (reassignable) rather than `let`
  std::string name;   ///< Let/Assign target; For: the induction variable
  llvm::SMLoc nameLoc;
  ExprPtr value;      ///< Let/Assign/ExprStmt value; If/While condition
  ExprPtr lower, upper, step;       ///< For: `lower .. upper step step`
  std::vector<StmtPtr> body;        ///< For/While body, If then-branch
  std::vector<StmtPtr> elseBody;    ///< If else-branch (may be empty)
  SemaType inductionType;           ///< For: set by Sema
  Stmt(Kind kind, llvm::SMLoc loc) : kind(kind), loc(loc) {}
};

/// `<NAME: int = 1024>` or `<T: type = f32>`.
struct ConstParam {
  enum class Kind { Int, Type };
  Kind kind = Kind::Int;
  std::string name;
  llvm::SMLoc loc;
  ExprPtr defaultInt;                  ///< Kind::Int
  std::unique_ptr<TypeExpr> defaultType; ///< Kind::Type
};

struct Param {
  std::string name;
  llvm::SMLoc loc;
  std::unique_ptr<TypeExpr> type;
};

/// One `NAME in [v1, v2, ...]` of a `@tune(...)` attribute.
struct TuneParam {
  std::string name;
  llvm::SMLoc loc;
  std::vector<ExprPtr> values;
};

/// One `name = value` of an attribute:
///  - of `@launch(...)` (LaunchParam): how the kernel is launched
///    (num_warps, min_blocks_per_sm), a default that command-line options
///    override;
///  - of `@heuristic(...)` (HeuristicDecl): a compile-time parameter chosen
///    at launch from the arguments (shapes, strides, integer scalars), unless
///    the program fixes it (-D).
struct NamedExpr {
  std::string name;
  llvm::SMLoc loc;
  ExprPtr value;
};
using LaunchParam = NamedExpr;
using HeuristicDecl = NamedExpr;

/// `@require(cond, "message")`: a condition on the launch arguments (an
/// expression over integer parameters, shapes, strides and compile-time
/// parameters) checked before every launch.
struct RequireDecl {
  llvm::SMLoc loc;
  ExprPtr cond;
  std::string message;
};

/// One row of `@tuned(...)`: the key's values (compile-time: a type name or
/// an integer constant each) and the parameters it sets.
struct TunedRow {
  llvm::SMLoc loc;
  std::vector<ExprPtr> key;
  std::vector<NamedExpr> values;
};

/// `@tuned(key = (e, ...), (v, ...) -> (NAME = c, ...), ...)`: a tuning
/// table (what `tilec tune --table` prints). Where a launch's key
/// expressions equal a row's values, the row's parameters take its values
/// instead of their @heuristic (or default) ones; Sema folds the table into
/// the heuristics, so every launch path reads it.
struct TunedTable {
  llvm::SMLoc loc;
  std::vector<ExprPtr> key;
  std::vector<TunedRow> rows;
};

struct KernelDecl {
  std::string name;
  llvm::SMLoc loc;
  std::vector<RequireDecl> requires_; ///< `@require(...)` before the kernel
  std::vector<HeuristicDecl> heuristics; ///< `@heuristic(...)` before the kernel
  std::vector<TunedTable> tuned; ///< `@tuned(...)` before the kernel (at most one)
  std::vector<TuneParam> tune; ///< `@tune(...)` before the kernel
  std::vector<LaunchParam> launch; ///< `@launch(...)` before the kernel
  std::vector<ConstParam> constParams;
  std::vector<Param> params;
  std::vector<ExprPtr> grid;
  llvm::SMLoc gridLoc;
  std::vector<StmtPtr> body;
  /// The helpers of the file (set by the parser).
  const std::vector<std::unique_ptr<FnDecl>> *fns = nullptr;
};

/// `fn name<K: int = 1>(a, b) { ...; return expr; }`: a helper that calls
/// inline, with untyped parameters checked at each call.
struct FnDecl {
  std::string name;
  llvm::SMLoc loc;
  std::vector<ConstParam> constParams; ///< int only
  std::vector<std::pair<std::string, llvm::SMLoc>> params;
  std::vector<StmtPtr> body; ///< ends with a `return`
};

struct ModuleDecl {
  std::vector<std::unique_ptr<KernelDecl>> kernels;
  std::vector<std::unique_ptr<FnDecl>> fns;
};

/// Deep copies of parsed trees (without Sema's annotations).
ExprPtr cloneExpr(const Expr &e);
StmtPtr cloneStmt(const Stmt &s);

/// Prints the tree with `line:col` locations (`tilec -emit=ast`).
void dumpAST(const ModuleDecl &module, DiagEngine &diags, llvm::raw_ostream &os);

} // namespace tilec

#endif // TILEC_FRONTEND_AST_H
