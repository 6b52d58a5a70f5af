//===- ElementwiseToNVVM.cpp - arith/math on tiles to per-thread code -----===//
//
// Elementwise ops keep their meaning when every tile becomes the vector of
// elements one thread owns, so most ops are simply recreated with converted
// types. Constants become vector splats. `exp` and `log` go to the GPU's
// fast base-2 units (ex2.approx / lg2.approx, as Triton and CUDA's
// __expf/__logf do), because LLVM's NVPTX backend has no lowering for the
// natural-base intrinsics and we do not link libdevice.
//
//===----------------------------------------------------------------------===//

#include "PatternsNVVM.h"

#include "tilec/Dialect/Tile/IR/TileDialect.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "llvm/ADT/APFloat.h"

#include <cmath>

using namespace mlir;
using namespace tilec;

namespace {

/// Recreates an arith/math op on tiles with per-thread vector types.
struct ElementwiseLowering : ConversionPattern {
  ElementwiseLowering(const TypeConverter &tc, MLIRContext *ctx)
      : ConversionPattern(tc, MatchAnyOpTypeTag(), /*benefit=*/1, ctx) {}

  LogicalResult
  matchAndRewrite(Operation *op, ArrayRef<Value> operands,
                  ConversionPatternRewriter &rewriter) const override {
    if (!isa<arith::ArithDialect, math::MathDialect>(op->getDialect()))
      return rewriter.notifyMatchFailure(op, "not an elementwise arith/math op");
    if (isa<arith::ConstantOp, math::ExpOp, math::LogOp>(op))
      return rewriter.notifyMatchFailure(op, "has a dedicated pattern");
    SmallVector<Type> resultTypes;
    if (failed(getTypeConverter()->convertTypes(op->getResultTypes(), resultTypes)))
      return rewriter.notifyMatchFailure(op, "result type not convertible");
    OperationState state(op->getLoc(), op->getName(), operands, resultTypes,
                         op->getAttrs());
    Operation *newOp = rewriter.create(state);
    rewriter.replaceOp(op, newOp->getResults());
    return success();
  }
};

struct ConstantLowering : OpConversionPattern<arith::ConstantOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(arith::ConstantOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto dense = dyn_cast<DenseElementsAttr>(op.getValue());
    if (!dense || !dense.isSplat())
      return rewriter.notifyMatchFailure(op, "only splat tile constants");
    auto ty = cast<VectorType>(getTypeConverter()->convertType(op.getType()));
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(
        op, ty, DenseElementsAttr::get(ty, dense.getSplatValue<Attribute>()));
    return success();
  }
};

static Value floatConst(OpBuilder &b, Location loc, Type ty, double v) {
  Type elem = getElementTypeOrSelf(ty);
  TypedAttr attr = b.getFloatAttr(elem, v);
  if (auto vt = dyn_cast<VectorType>(ty))
    return arith::ConstantOp::create(b, loc, vt, DenseElementsAttr::get(vt, attr));
  return arith::ConstantOp::create(b, loc, attr);
}

/// Applies `fn` in f32 to a value of f16/bf16/f32 (scalar or vector).
template <typename Fn>
static Value inF32(OpBuilder &b, Location loc, Value x, Fn fn) {
  Type ty = x.getType();
  Type elem = getElementTypeOrSelf(ty);
  if (elem.isF32())
    return fn(x);
  Type f32 = b.getF32Type();
  Type wideTy = f32;
  if (auto vt = dyn_cast<VectorType>(ty))
    wideTy = VectorType::get(vt.getShape(), f32);
  Value wide = arith::ExtFOp::create(b, loc, wideTy, x);
  return arith::TruncFOp::create(b, loc, ty, fn(wide));
}

/// exp(x) = exp2(x * log2(e)); llvm.exp2.f32 becomes ex2.approx.f32.
struct ExpLowering : OpConversionPattern<math::ExpOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(math::ExpOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    if (getElementTypeOrSelf(op.getType()).isF64())
      return op.emitError("exp of f64 is not supported yet");
    Value r = inF32(rewriter, loc, adaptor.getOperand(), [&](Value x) -> Value {
      Value s = floatConst(rewriter, loc, x.getType(), M_LOG2E);
      Value y = arith::MulFOp::create(rewriter, loc, x, s);
      return math::Exp2Op::create(rewriter, loc, y);
    });
    rewriter.replaceOp(op, r);
    return success();
  }
};

/// log(x) = lg2.approx(x) * ln(2), one element at a time.
struct LogLowering : OpConversionPattern<math::LogOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(math::LogOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    if (getElementTypeOrSelf(op.getType()).isF64())
      return op.emitError("log of f64 is not supported yet");
    Value r = inF32(rewriter, loc, adaptor.getOperand(), [&](Value x) -> Value {
      Type f32 = rewriter.getF32Type();
      auto lg2 = [&](Value s) -> Value {
        auto call = LLVM::CallIntrinsicOp::create(
            rewriter, loc, f32, rewriter.getStringAttr("llvm.nvvm.lg2.approx.f"),
            ValueRange{s});
        return call.getResult(0);
      };
      Value y;
      if (auto vt = dyn_cast<VectorType>(x.getType())) {
        y = floatConst(rewriter, loc, vt, 0.0);
        for (int64_t i = 0; i < vt.getNumElements(); ++i) {
          Value e = vector::ExtractOp::create(rewriter, loc, x, ArrayRef<int64_t>{i});
          y = vector::InsertOp::create(rewriter, loc, lg2(e), y, ArrayRef<int64_t>{i});
        }
      } else {
        y = lg2(x);
      }
      Value ln2 = floatConst(rewriter, loc, x.getType(), M_LN2);
      return arith::MulFOp::create(rewriter, loc, y, ln2);
    });
    rewriter.replaceOp(op, r);
    return success();
  }
};

} // namespace

void tilec::populateElementwiseToNVVMPatterns(const TypeConverter &converter,
                                              RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<ElementwiseLowering>(converter, ctx);
  patterns.add<ConstantLowering, ExpLowering, LogLowering>(converter, ctx);
}
