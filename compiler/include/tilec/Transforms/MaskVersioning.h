//===- MaskVersioning.h - masks applied only where they mask -*- C++ -*-===//
//
// A mask in an mma loop, `s = where(cols < sk && cols <= rows, s, -inf)`
// with the columns `j * BN + range(BN)` of iteration j, masks nothing in
// most iterations (every key block below the causal diagonal and before
// the last). versionMasks puts each such `where` under a uniform branch:
//
//   s = if (!all(cond)) { where(cond, s, x) } else { s }
//
// with all(cond) computed from the bounds of the index arithmetic (the
// largest column against the smallest row), so the mask's index
// arithmetic, compares and selects run only in the iterations where some
// element is masked: the diagonal blocks and the ragged last one. That is
// what a FlashAttention kernel writes by hand; here the compiler does it
// for the obvious form.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_TRANSFORMS_MASKVERSIONING_H
#define TILEC_TRANSFORMS_MASKVERSIONING_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace tilec {

/// Versions every `arith.select` on tiles at the top level of an mma loop's
/// body whose condition depends on the loop's index and whose "every
/// element true" can be computed from bounds (compares of index arithmetic:
/// ranges, splats, constants, +, -, * by a constant, sign extension,
/// reshapes and broadcasts, combined by and / or). Index arithmetic is taken
/// not to wrap, as the language's tile indices do not.
void versionMasks(mlir::func::FuncOp func);

} // namespace tilec

#endif // TILEC_TRANSFORMS_MASKVERSIONING_H
