//===- SemaChecker.h - The kernel checker of Sema, shared by its files ----===//
//
// Sema is split along its seams: Sema.cpp (the checker's core: expressions,
// statements, the kernel), SemaBuiltins.cpp (calls: the dispatch through
// Builtins.def, irregular accesses, combiners, suggestions),
// SemaBuiltinRules.cpp (the type rule of each group of builtins),
// SemaInline.cpp (fn helpers expanded at their calls) and SemaParams.cpp
// (compile-time parameters, @tune, @launch, the grid). This header
// declares what they share.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_FRONTEND_SEMACHECKER_H
#define TILEC_FRONTEND_SEMACHECKER_H

#include "tilec/Frontend/Sema.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace tilec::sema {


/// What a name refers to inside a kernel.
struct Symbol {
  enum class Kind { Local, Param, IntConst, TypeConst };
  Kind kind = Kind::Local;
  SemaType type;
  bool mutableVar = false;
  unsigned paramIndex = 0;
  int64_t intValue = 0;
  llvm::SMLoc loc;
};

class Checker {
public:
  Checker(KernelDecl &k, DiagEngine &diags, KernelInstance &inst)
      : kernel(k), diags(diags), inst(inst) {}

  bool run(const Defines &defines, std::set<std::string> &used);

private:
  bool error(llvm::SMLoc loc, const llvm::Twine &msg) {
    diags.error(loc, msg);
    return false;
  }
  bool bindConstParams(const Defines &defines, std::set<std::string> &used);
  bool checkTune(const Defines &defines);
  bool checkLaunch();
  /// @launch(persistent, group_rows): rewrites the kernel's grid and body
  /// (SemaTileOrder.cpp). The body's statements before `remapFrom` read the
  /// launch's own block_id / num_blocks; block_id(0/1) (and, for a
  /// persistent kernel, num_blocks(0/1)) in the rest name the rewritten
  /// program's place (`remapIds`, set while they are checked). Without a
  /// rewrite `remapFrom` stays past every statement.
  bool rewriteTileOrder();
  size_t remapFrom = SIZE_MAX;
  bool remapIds = false;
  /// num_blocks(0/1) in the remapped statements name $nb0/$nb1 too (a
  /// persistent kernel, clusters in grouped order).
  bool remapCounts = false;
  bool resolveType(const TypeExpr &t, SemaType &out, bool allowTensor);
  bool check(Expr &e);
  bool checkNode(Expr &e);
  static constexpr int64_t kMaxTileElements = 1 << 16;
  bool checkTileSize(const Expr &e);
  bool checkCall(Expr &e);
  /// `f(t, axis = d)` of a reduction, `a` the named argument at position k
  /// (SemaBuiltinRules.cpp, beside checkReduction).
  bool checkReductionOverAxis(Expr &e, Expr &a, size_t k);
public:
  /// The type rules of Builtins.def (checkIrregular among them), one per
  /// group of builtins, and of UnaryMath.def (SemaBuiltinRules.cpp).
#define TILEC_BUILTIN_RULE(Rule) bool check##Rule(Expr &e);
#include "tilec/Frontend/Builtins.def"
  bool checkUnaryMath(Expr &e);
private:
  bool joinElementShape(Expr &call, Expr &x, const char *others);
  bool requireTileArg(Expr &e, size_t lo, size_t hi);
  /// The first argument of `e` (load, store, gather, ...) must name a
  /// tensor parameter.
  bool requireView(Expr &e);
  /// Set while the value of a `let` is checked: the one place a view
  /// (narrow) may be made.
  bool letValue = false;
  bool inlineCall(Expr &e, const FnDecl &fn);
  bool checkCombiner(ExprPtr &arg, ScalarType elem, const std::string &what);
  std::set<std::string> inlining; ///< helpers being expanded (no recursion)
  /// The calls being expanded, outermost first: the helper and the call.
  std::vector<std::pair<std::string, llvm::SMLoc>> callStack;
  /// Expressions checked in this kernel, helpers' copies included (each
  /// becomes MLIR), at most kMaxCheckedExprs.
  static constexpr uint64_t kMaxCheckedExprs = 100000;
  uint64_t checkedExprs = 0;
  bool tooLarge(llvm::SMLoc loc);
  unsigned inlineCount = 0;        ///< names the result slot of each expansion
  /// The result type of a helper with early returns, by helper, compile-time
  /// arguments and argument types (all its body can see): learning it takes
  /// a scratch check of the body, which nested helpers would otherwise
  /// repeat at every level (2^depth checks).
  std::map<std::string, SemaType> earlyReturnTypes;
  bool checkStmt(Stmt &s);
  bool checkBlock(std::vector<StmtPtr> &body);
  /// Sema, MLIRGen and the interpreter recurse through expressions and
  /// statements, helpers' bodies included; the parser bounds each tree
  /// (kMaxExprHeight) and this bounds them all nested in one another.
  static constexpr unsigned kMaxCheckDepth = 2 * kMaxExprHeight;
  unsigned depth = 0;
  bool tooDeep(llvm::SMLoc loc);
  bool requireValue(Expr &e, const char *what);
  /// checkArgCount, then requireValue on every argument.
  bool requireValues(Expr &e, size_t lo, size_t hi, const char *what);
  bool requireConstInt(Expr &e, const char *what, int64_t &value);
  /// `axis` (given at `loc`) must lie in [0, end) for a tile of type `t`.
  bool checkAxis(llvm::SMLoc loc, int64_t axis, int64_t end, const SemaType &t);
  bool requireIntScalar(Expr &e, const char *what);
  bool checkArgCount(Expr &e, size_t lo, size_t hi);
  bool checkShapeList(Expr &shape, std::vector<int64_t> &dims);
  bool toGridExpr(const Expr &e, GridExpr &out);
  /// An expression evaluated at launch (a grid size, a @require condition, a
  /// @heuristic value): checked (num_sms() allowed), an integer scalar
  /// (`mustBe` says what it must be, "a grid size must be an integer"),
  /// and converted. `conditions`: comparisons, && / || and where(...) are
  /// allowed inside; `boolOk`: the whole may be a comparison (@require).
  bool launchExpr(Expr &e, const char *mustBe, bool conditions, bool boolOk, GridExpr &out);
  bool inGrid = false; ///< checking the grid clause (num_sms() is allowed)
  bool inRequire = false; ///< a @require condition (comparisons, && and || too)
  bool checkRequires();
  bool checkHeuristics(const Defines &defines);
  bool checkTuned(const Defines &defines);
  /// Whether `name` is an int compile-time parameter of the kernel (what
  /// @tune and @heuristic may name).
  bool isIntConstParam(const std::string &name) const;
  std::string suggest(llvm::StringRef name) const;

  KernelDecl &kernel;
  DiagEngine &diags;
  KernelInstance &inst;
  std::map<std::string, Symbol> symbols;
};


/// Every builtin function name but the elementwise ones of UnaryMath.def
/// (for suggestions and helper-name checks, which read both).
inline constexpr const char *kBuiltins[] = {
#define TILEC_BUILTIN(spelling, Rule, accepts) spelling,
#include "tilec/Frontend/Builtins.def"
};

bool assignable(const SemaType &want, const SemaType &got);
/// The element types built-in reductions and scans take (f32, f16, bf16,
/// i32).
inline bool reducibleElem(ScalarType t) {
  return t == ScalarType::F32 || t == ScalarType::F16 || t == ScalarType::BF16 ||
         t == ScalarType::I32;
}
std::string describeOperand(const SemaType &t);
/// The width of a scalar type in bits (1 for i1; `bits<T>()`).
unsigned bitWidth(ScalarType t);
/// What f8 values take part in, for errors on anything else.
std::string float8Rule(ScalarType t);
const Expr *findTileExpr(const Expr &e);
std::string shapeText(const std::vector<int64_t> &dims);

} // namespace tilec::sema

#endif // TILEC_FRONTEND_SEMACHECKER_H
