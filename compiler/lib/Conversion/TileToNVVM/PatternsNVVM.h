//===- PatternsNVVM.h - shared pieces of convert-tile-to-nvvm ----*- C++ -*-===//
//
// The thread layout of one kernel and the pattern sets of each op family.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_LIB_CONVERSION_TILETONVVM_PATTERNSNVVM_H
#define TILEC_LIB_CONVERSION_TILETONVVM_PATTERNSNVVM_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/DialectConversion.h"

#include <string>

namespace tilec {

/// The blocked layout chosen by tile-layout for one kernel: thread t owns,
/// for r in [0, reps), the `vec` elements from flat index (r*threads + t)*vec.
struct ThreadLayout {
  unsigned threads = 128;
  unsigned vec = 1;

  int64_t reps(mlir::RankedTensorType t) const {
    int64_t chunk = int64_t(threads) * vec;
    return (t.getNumElements() + chunk - 1) / chunk;
  }
  int64_t perThread(mlir::RankedTensorType t) const { return reps(t) * vec; }
  mlir::VectorType perThreadType(mlir::RankedTensorType t) const {
    return mlir::VectorType::get({perThread(t)}, t.getElementType());
  }
};

/// A conversion pattern that needs the kernel's thread layout.
template <typename OpTy>
struct LayoutPattern : mlir::OpConversionPattern<OpTy> {
  LayoutPattern(const mlir::TypeConverter &tc, mlir::MLIRContext *ctx,
                const ThreadLayout &layout)
      : mlir::OpConversionPattern<OpTy>(tc, ctx), layout(layout) {}
  const ThreadLayout &layout;
};

/// The flat tile index of every element this thread holds, as a vector<P x
/// i32>: slot (r, v) is (r * threads + tid) * vec + v.
mlir::Value threadFlatIndices(mlir::OpBuilder &b, mlir::Location loc,
                              const ThreadLayout &layout,
                              mlir::RankedTensorType tile);

void populateLoadStoreToNVVMPatterns(const mlir::TypeConverter &converter,
                                     const ThreadLayout &layout,
                                     mlir::RewritePatternSet &patterns);
void populateReduceToNVVMPatterns(const mlir::TypeConverter &converter,
                                  const ThreadLayout &layout,
                                  mlir::RewritePatternSet &patterns);
/// The shared-memory buffer (one 32-bit slot per warp) of a kernel's
/// reductions.
std::string reduceScratchName(llvm::StringRef kernel);
void populateElementwiseToNVVMPatterns(const mlir::TypeConverter &converter,
                                       mlir::RewritePatternSet &patterns);

/// True for the ops that convert-tile-to-nvvm must rewrite.
bool needsNVVMLowering(mlir::Operation *op);

} // namespace tilec

#endif
