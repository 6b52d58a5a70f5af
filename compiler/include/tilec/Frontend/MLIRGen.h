//===- MLIRGen.h - AST to tile dialect ----------------------------*- C++ -*-===//
//
// Emits one `func.func` per checked kernel instance into a module, in the
// tile dialect plus arith/math on tensors. Every operation carries the
// FileLineColLoc of the source construct it came from.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_FRONTEND_MLIRGEN_H
#define TILEC_FRONTEND_MLIRGEN_H

#include "tilec/Frontend/Sema.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"

namespace tilec {

/// Appends the kernel to `module`. Sema must have accepted `inst`.
void genKernel(mlir::ModuleOp module, const KernelInstance &inst,
               DiagEngine &diags);

/// The MLIR type of a scalar type (u32 -> i32: signedness lives in the ops).
mlir::Type toMLIRType(mlir::MLIRContext *ctx, ScalarType t);

} // namespace tilec

#endif // TILEC_FRONTEND_MLIRGEN_H
