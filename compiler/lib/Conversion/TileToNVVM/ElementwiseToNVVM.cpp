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
    if (isa<arith::ConstantOp, math::Exp2Op>(op) || hasApproxLowering(op))
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

/// Applies the f32 NVVM intrinsic `name` to every element of `x` (f32).
static Value perElementIntrinsic(OpBuilder &b, Location loc, Value x, StringRef name) {
  Type f32 = b.getF32Type();
  auto one = [&](Value s) -> Value {
    return LLVM::CallIntrinsicOp::create(b, loc, f32, b.getStringAttr(name), ValueRange{s})
        .getResult(0);
  };
  auto vt = dyn_cast<VectorType>(x.getType());
  if (!vt)
    return one(x);
  Value y = floatConst(b, loc, vt, 0.0);
  for (int64_t i = 0; i < vt.getNumElements(); ++i) {
    Value e = vector::ExtractOp::create(b, loc, x, ArrayRef<int64_t>{i});
    y = vector::InsertOp::create(b, loc, one(e), y, ArrayRef<int64_t>{i});
  }
  return y;
}

// The f32 bodies of the functions that run on the GPU's approximate units.
// exp(x) = exp2(x * log2(e)), and llvm.exp2.f32 becomes ex2.approx.f32.
static Value expF32(OpBuilder &b, Location loc, Value x) {
  Value y = arith::MulFOp::create(b, loc, x, floatConst(b, loc, x.getType(), M_LOG2E));
  return math::Exp2Op::create(b, loc, y);
}
static Value exp2F32(OpBuilder &b, Location loc, Value x) {
  return math::Exp2Op::create(b, loc, x);
}
static Value log2F32(OpBuilder &b, Location loc, Value x) {
  return perElementIntrinsic(b, loc, x, "llvm.nvvm.lg2.approx.f");
}
// log(x) = lg2.approx(x) * ln(2).
static Value logF32(OpBuilder &b, Location loc, Value x) {
  return arith::MulFOp::create(b, loc, log2F32(b, loc, x),
                               floatConst(b, loc, x.getType(), M_LN2));
}
// sin.approx.f32 / cos.approx.f32 (absolute error about 1e-6 in [-pi, pi],
// growing with |x|, as CUDA's __sinf / __cosf).
static Value sinF32(OpBuilder &b, Location loc, Value x) {
  return perElementIntrinsic(b, loc, x, "llvm.nvvm.sin.approx.f");
}
static Value cosF32(OpBuilder &b, Location loc, Value x) {
  return perElementIntrinsic(b, loc, x, "llvm.nvvm.cos.approx.f");
}
// llvm.tanh with `afn` becomes tanh.approx.f32 (sm_75+).
static Value tanhF32(OpBuilder &b, Location loc, Value x) {
  auto afn = LLVM::FastmathFlagsAttr::get(b.getContext(), LLVM::FastmathFlags::afn);
  return LLVM::TanhOp::create(b, loc, x, afn);
}

/// A unary function computed in f32 (f16/bf16 widened first, f64 rejected)
/// by `body`.
template <typename OpTy>
struct ApproxUnaryLowering : OpConversionPattern<OpTy> {
  using Body = Value (*)(OpBuilder &, Location, Value);
  ApproxUnaryLowering(const TypeConverter &tc, MLIRContext *ctx, StringRef name, Body body)
      : OpConversionPattern<OpTy>(tc, ctx), name(name), body(body) {}

  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    if (getElementTypeOrSelf(op.getType()).isF64())
      return op.emitError() << name << " of f64 is not supported yet";
    rewriter.replaceOp(op, inF32(rewriter, loc, adaptor.getOperand(), [&](Value x) {
                         return body(rewriter, loc, x);
                       }));
    return success();
  }

  StringRef name;
  Body body;
};

} // namespace

void tilec::populateElementwiseToNVVMPatterns(const TypeConverter &converter,
                                              RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<ElementwiseLowering>(converter, ctx);
  patterns.add<ConstantLowering>(converter, ctx);
  patterns.add<ApproxUnaryLowering<math::ExpOp>>(converter, ctx, "exp", expF32);
  patterns.add<ApproxUnaryLowering<math::Exp2Op>>(converter, ctx, "exp2", exp2F32);
  patterns.add<ApproxUnaryLowering<math::LogOp>>(converter, ctx, "log", logF32);
  patterns.add<ApproxUnaryLowering<math::Log2Op>>(converter, ctx, "log2", log2F32);
  patterns.add<ApproxUnaryLowering<math::TanhOp>>(converter, ctx, "tanh", tanhF32);
  patterns.add<ApproxUnaryLowering<math::SinOp>>(converter, ctx, "sin", sinF32);
  patterns.add<ApproxUnaryLowering<math::CosOp>>(converter, ctx, "cos", cosF32);
}
