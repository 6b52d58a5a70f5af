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

/// An f8 constant's bits as the i8 its registers hold.
static TypedAttr registerAttr(Attribute value) {
  auto f = dyn_cast<FloatAttr>(value);
  if (!f || !tile::isFloat8(f.getType()))
    return cast<TypedAttr>(value);
  return IntegerAttr::get(IntegerType::get(f.getContext(), 8), f.getValue().bitcastToAPInt());
}

struct ConstantLowering : OpConversionPattern<arith::ConstantOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(arith::ConstantOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Type ty = getTypeConverter()->convertType(op.getType());
    if (!isa<VectorType>(ty)) { // a scalar f8
      if (ty == op.getType())
        return rewriter.notifyMatchFailure(op, "a scalar constant stays");
      rewriter.replaceOpWithNewOp<arith::ConstantOp>(op, registerAttr(op.getValue()));
      return success();
    }
    auto dense = dyn_cast<DenseElementsAttr>(op.getValue());
    if (!dense || !dense.isSplat())
      return rewriter.notifyMatchFailure(op, "only splat tile constants");
    auto vt = cast<VectorType>(ty);
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(
        op, vt, DenseElementsAttr::get(vt, registerAttr(dense.getSplatValue<Attribute>())));
    return success();
  }
};

/// "e4m3" or "e5m2" for an f8 type, else "".
static StringRef float8Name(Type t) {
  t = getElementTypeOrSelf(t);
  return isa<Float8E4M3FNType>(t) ? "e4m3" : isa<Float8E5M2Type>(t) ? "e5m2" : "";
}

/// `v` (a vector, or a scalar as one element) as a vector of an even number
/// of elements, and the count it had.
static std::pair<Value, int64_t> evenVector(OpBuilder &b, Location loc, Value v) {
  auto vt = dyn_cast<VectorType>(v.getType());
  if (!vt)
    return {vector::BroadcastOp::create(b, loc, VectorType::get({2}, v.getType()), v), 1};
  int64_t n = vt.getNumElements();
  if (n % 2 == 0)
    return {v, n};
  SmallVector<int64_t> mask;
  for (int64_t i = 0; i <= n; ++i)
    mask.push_back(i < n ? i : 0);
  return {vector::ShuffleOp::create(b, loc, v, v, mask), n};
}
/// The first `n` elements of `v` (n == 1 and `scalar`: element 0 alone).
static Value firstElements(OpBuilder &b, Location loc, Value v, int64_t n, bool scalar) {
  if (scalar)
    return vector::ExtractOp::create(b, loc, v, ArrayRef<int64_t>{0});
  if (cast<VectorType>(v.getType()).getNumElements() == n)
    return v;
  SmallVector<int64_t> mask;
  for (int64_t i = 0; i < n; ++i)
    mask.push_back(i);
  return vector::ShuffleOp::create(b, loc, v, v, mask);
}

/// f8 -> f32: the bytes in pairs through cvt.rn.f16x2.{e4m3,e5m2}x2 (sm_89+),
/// then f16 -> f32.
struct Float8ExtLowering : OpConversionPattern<arith::ExtFOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(arith::ExtFOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    StringRef kind = float8Name(op.getIn().getType());
    if (kind.empty())
      return rewriter.notifyMatchFailure(op, "not from f8");
    Location loc = op.getLoc();
    bool scalar = !isa<VectorType>(adaptor.getIn().getType());
    auto [bytes, n] = evenVector(rewriter, loc, adaptor.getIn());
    int64_t pairs = cast<VectorType>(bytes.getType()).getNumElements() / 2;
    Type i16 = rewriter.getI16Type(), i32 = rewriter.getI32Type();
    Value packed = vector::BitCastOp::create(rewriter, loc, VectorType::get({pairs}, i16), bytes);
    Value halves = LLVM::UndefOp::create(rewriter, loc, VectorType::get({pairs}, i32));
    std::string text = ("cvt.rn.f16x2." + kind + "x2 $0, $1;").str();
    for (int64_t i = 0; i < pairs; ++i) {
      Value pair = vector::ExtractOp::create(rewriter, loc, packed, ArrayRef<int64_t>{i});
      Value h = inlineAsm(rewriter, loc, i32, pair, text, "=r,h");
      halves = vector::InsertOp::create(rewriter, loc, h, halves, ArrayRef<int64_t>{i});
    }
    Value f16s = vector::BitCastOp::create(
        rewriter, loc, VectorType::get({2 * pairs}, rewriter.getF16Type()), halves);
    Value wide = arith::ExtFOp::create(
        rewriter, loc, VectorType::get({2 * pairs}, rewriter.getF32Type()), f16s);
    rewriter.replaceOp(op, firstElements(rewriter, loc, wide, n, scalar));
    return success();
  }
};

/// f32 -> f8: pairs through cvt.rn.satfinite.{e4m3,e5m2}x2.f32 (sm_89+;
/// rounds to nearest even, saturates to the largest finite value).
struct Float8TruncLowering : OpConversionPattern<arith::TruncFOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(arith::TruncFOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    StringRef kind = float8Name(op.getType());
    if (kind.empty())
      return rewriter.notifyMatchFailure(op, "not to f8");
    Location loc = op.getLoc();
    bool scalar = !isa<VectorType>(adaptor.getIn().getType());
    auto [floats, n] = evenVector(rewriter, loc, adaptor.getIn());
    int64_t pairs = cast<VectorType>(floats.getType()).getNumElements() / 2;
    Type i16 = rewriter.getI16Type();
    Value packed = LLVM::UndefOp::create(rewriter, loc, VectorType::get({pairs}, i16));
    // The first operand goes to the upper byte.
    std::string text = ("cvt.rn.satfinite." + kind + "x2.f32 $0, $1, $2;").str();
    for (int64_t i = 0; i < pairs; ++i) {
      Value lo = vector::ExtractOp::create(rewriter, loc, floats, ArrayRef<int64_t>{2 * i});
      Value hi = vector::ExtractOp::create(rewriter, loc, floats, ArrayRef<int64_t>{2 * i + 1});
      Value h = inlineAsm(rewriter, loc, i16, ValueRange{hi, lo}, text, "=h,f,f");
      packed = vector::InsertOp::create(rewriter, loc, h, packed, ArrayRef<int64_t>{i});
    }
    Value bytes = vector::BitCastOp::create(
        rewriter, loc, VectorType::get({2 * pairs}, rewriter.getI8Type()), packed);
    rewriter.replaceOp(op, firstElements(rewriter, loc, bytes, n, scalar));
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
static Value exp2F32(OpBuilder &b, Location loc, Value x) {
  return math::Exp2Op::create(b, loc, x);
}
// In a kernel with @launch(ftz = 1) (tile.ftz): the same units with
// subnormal inputs and results flushed to zero. ex2.approx.f32 handles
// them with a compare and two predicated multiplies around MUFU.EX2 (the
// attention kernel at D = 64: 3656 SASS instructions, 3264 with .ftz).
static Value exp2F32Ftz(OpBuilder &b, Location loc, Value x) {
  return perElementIntrinsic(b, loc, x, "llvm.nvvm.ex2.approx.ftz.f");
}
using UnaryBody = Value (*)(OpBuilder &, Location, Value);
/// exp(x) = exp2(x * log2(e)), through either exp2.
template <UnaryBody Exp2> static Value expVia(OpBuilder &b, Location loc, Value x) {
  Value y = arith::MulFOp::create(b, loc, x, floatConst(b, loc, x.getType(), M_LOG2E));
  return Exp2(b, loc, y);
}
static Value log2F32(OpBuilder &b, Location loc, Value x) {
  return perElementIntrinsic(b, loc, x, "llvm.nvvm.lg2.approx.f");
}
static Value log2F32Ftz(OpBuilder &b, Location loc, Value x) {
  return perElementIntrinsic(b, loc, x, "llvm.nvvm.lg2.approx.ftz.f");
}
// log(x) = lg2.approx(x) * ln(2), through either log2.
template <UnaryBody Log2> static Value logVia(OpBuilder &b, Location loc, Value x) {
  return arith::MulFOp::create(b, loc, Log2(b, loc, x), floatConst(b, loc, x.getType(), M_LN2));
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
  ApproxUnaryLowering(const TypeConverter &tc, MLIRContext *ctx, StringRef name, Body body,
                      Body ftzBody = nullptr)
      : OpConversionPattern<OpTy>(tc, ctx), name(name), body(body), ftzBody(ftzBody) {}

  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    if (getElementTypeOrSelf(op.getType()).isF64())
      return op.emitError() << name << " of f64 is not supported yet";
    Body fn = ftzBody && flushesSubnormals(op) ? ftzBody : body;
    rewriter.replaceOp(op, inF32(rewriter, loc, adaptor.getOperand(), [&](Value x) {
                         return fn(rewriter, loc, x);
                       }));
    return success();
  }

  StringRef name;
  Body body, ftzBody;
};

} // namespace

void tilec::populateElementwiseToNVVMPatterns(const TypeConverter &converter,
                                              RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<ElementwiseLowering>(converter, ctx);
  patterns.add<ConstantLowering>(converter, ctx);
  patterns.add<Float8ExtLowering, Float8TruncLowering>(converter, ctx, /*benefit=*/2);
  patterns.add<ApproxUnaryLowering<math::ExpOp>>(converter, ctx, "exp", expVia<exp2F32>,
                                                 expVia<exp2F32Ftz>);
  patterns.add<ApproxUnaryLowering<math::Exp2Op>>(converter, ctx, "exp2", exp2F32, exp2F32Ftz);
  patterns.add<ApproxUnaryLowering<math::LogOp>>(converter, ctx, "log", logVia<log2F32>,
                                                logVia<log2F32Ftz>);
  patterns.add<ApproxUnaryLowering<math::Log2Op>>(converter, ctx, "log2", log2F32, log2F32Ftz);
  patterns.add<ApproxUnaryLowering<math::TanhOp>>(converter, ctx, "tanh", tanhF32);
  patterns.add<ApproxUnaryLowering<math::SinOp>>(converter, ctx, "sin", sinF32);
  patterns.add<ApproxUnaryLowering<math::CosOp>>(converter, ctx, "cos", cosF32);
}
