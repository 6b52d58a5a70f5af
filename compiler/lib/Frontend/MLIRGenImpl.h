//===- MLIRGenImpl.h - MLIRGen's generator, shared by its files -*- C++ -*-===//
//
// MLIRGen.cpp walks expressions and statements; MLIRGenBuiltins.cpp builds
// the calls of builtins (one function per rule of Builtins.def).
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_FRONTEND_MLIRGENIMPL_H
#define TILEC_FRONTEND_MLIRGENIMPL_H

#include "tilec/Frontend/MLIRGen.h"

#include "tilec/Dialect/Tile/IR/TileDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"

#include <functional>
#include <set>

namespace tilec::mlirgen {
using namespace mlir;
using namespace tilec;
} // namespace tilec::mlirgen

namespace tilec::mlirgen {

struct Binding {
  Value value;
  SemaType type;
};

class Gen {
public:
  Gen(ModuleOp module, const KernelInstance &inst, DiagEngine &diags)
      : ctx(module.getContext()), b(ctx), module(module), inst(inst),
        diags(diags) {}

  void run();

private:
  /// The position of `l` in its buffer: the kernel's file, or for code of
  /// the built-in helpers (silu, gelu, ...) "<prelude>", which
  /// diagnostics skip for a position in the user's file.
  Location loc(llvm::SMLoc l) {
    auto [line, col] = diags.lineCol(l);
    return FileLineColLoc::get(ctx, diags.bufferName(l), line, col);
  }
  Type mlirType(const SemaType &t) {
    Type elem = toMLIRType(ctx, t.elem);
    if (t.isTile())
      return RankedTensorType::get(t.shape, elem);
    return elem;
  }

  Value gen(const Expr &e);
  Value genAs(const Expr &e, const SemaType &target);
  Value genCall(const Expr &e);
  /// The MLIR builders of Builtins.def, one per group of builtins, and of
  /// UnaryMath.def (MLIRGenBuiltins.cpp).
#define TILEC_BUILTIN_RULE(Rule) Value gen##Rule(const Expr &e);
#include "tilec/Frontend/Builtins.def"
  Value genUnaryMath(const Expr &e);
  Value constant(const SemaType &t, double f, int64_t i, Location l);
  Value convert(Value v, const SemaType &from, ScalarType to, Location l);
  Value splatTo(Value v, const SemaType &from, const SemaType &target, Location l);
  void genStmt(const Stmt &s);
  void genBlock(const std::vector<StmtPtr> &body) {
    for (auto &st : body)
      genStmt(*st);
  }
  /// Generates `fn` into `block` (before its terminator, if any) and ends
  /// the block with a yield of the current values of `carried`.
  void genRegion(Block *block, const std::vector<std::string> &carried,
                 const std::function<void()> &fn);

  MLIRContext *ctx;
  OpBuilder b;
  ModuleOp module;
  const KernelInstance &inst;
  DiagEngine &diags;
  std::map<std::string, Binding> scope;
};

} // namespace tilec::mlirgen

#endif // TILEC_FRONTEND_MLIRGENIMPL_H
