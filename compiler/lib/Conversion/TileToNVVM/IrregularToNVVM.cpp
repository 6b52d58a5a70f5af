//===- IrregularToNVVM.cpp - gather, scatter and atomics ------------------===//
//
// Irregular accesses address every element on its own: each thread takes
// the index tiles' elements it holds (in the kernel's layout), checks them
// against the view's sizes (and the mask), and loads, stores or performs an
// atomic read-modify-write (relaxed, device scope) for the elements that
// pass. Skipped elements read the fill value (gather) or zero (atomics).
// A gather's load and a scatter's store are one predicated instruction
// each; an atomic runs under a branch.
//
//===----------------------------------------------------------------------===//

#include "PatternsNVVM.h"

#include "tilec/Dialect/Tile/IR/TileDialect.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace tilec;

namespace {

/// Bytes of an element in memory (i1 is kept as a byte).
unsigned bytesOf(Type t) { return std::max(1u, t.getIntOrFloatBitWidth() / 8); }

/// Visits this thread's elements of an irregular access: `body(slot, addr,
/// guard, other)` returns the element's value (or a null Value for
/// stores); the returned vector holds those values. With `branch` the body
/// runs under the element's guard (an atomic) and the element is `other`
/// where the guard fails; without, the body is given the guard and the
/// `other` value to predicate its one access on (a gather's load, a
/// scatter's store: one predicated instruction each instead of a branch).
template <typename Body>
Value forEachElement(ConversionPatternRewriter &rewriter, Location loc,
                     ThreadLayout layout, tile::MakeViewOp view,
                     RankedTensorType shape, ValueRange indices, Value mask,
                     Type elem, TypedAttr other, bool branch, Body body) {
  bool produces = bool(other);
  VectorType outTy = perThreadType(RankedTensorType::get(shape.getShape(), elem, shape.getEncoding()));
  Value result = produces ? arith::ConstantOp::create(rewriter, loc, outTy,
                                                      DenseElementsAttr::get(outTy, other))
                                .getResult()
                          : Value();
  Value otherScalar =
      produces ? arith::ConstantOp::create(rewriter, loc, other).getResult() : Value();
  Value ptr = view.getPtr();
  // Strides in bytes, once per access: an element's address is then one
  // multiply-add per index (not a multiply, a shift and an add).
  unsigned bytes = bytesOf(elem);
  SmallVector<Value> byteStrides;
  for (Value stride : view.getStrides()) // one index per dimension (verified)
    byteStrides.push_back(bytes == 1 ? stride
                                     : Value(arith::MulIOp::create(
                                           rewriter, loc, stride, constI64(rewriter, loc, bytes))));
  forEachThreadElement(rewriter, loc, shape, [&](int64_t slot, Value e, bool mayPad) {
    Value cond, offset;
    auto andI = [&](Value c) {
      cond = cond ? Value(arith::AndIOp::create(rewriter, loc, cond, c)) : c;
    };
    if (mayPad)
      andI(insideTile(rewriter, loc, e, shape));
    for (auto [d, idx] : llvm::enumerate(indices)) {
      Value i = vector::ExtractOp::create(rewriter, loc, idx, ArrayRef<int64_t>{slot});
      // Unsigned: a negative index is out of range too.
      andI(arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::ult, i,
                                 view.getSizes()[d]));
      Value term = arith::MulIOp::create(rewriter, loc, i, byteStrides[d]);
      offset = offset ? Value(arith::AddIOp::create(rewriter, loc, offset, term)) : term;
    }
    if (mask)
      andI(vector::ExtractOp::create(rewriter, loc, mask, ArrayRef<int64_t>{slot}));
    if (!branch) {
      Value addr = LLVM::GEPOp::create(rewriter, loc, ptr.getType(), rewriter.getI8Type(), ptr,
                                       ValueRange{offset});
      Value x = body(slot, addr, cond, otherScalar);
      if (produces)
        result = vector::InsertOp::create(rewriter, loc, x, result, ArrayRef<int64_t>{slot});
      return;
    }
    auto ifOp = scf::IfOp::create(rewriter, loc, produces ? TypeRange{elem} : TypeRange{}, cond,
                                  /*withElseRegion=*/produces);
    {
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPointToStart(&ifOp.getThenRegion().front());
      Value addr = LLVM::GEPOp::create(rewriter, loc, ptr.getType(), rewriter.getI8Type(), ptr,
                                       ValueRange{offset});
      Value x = body(slot, addr, Value(), Value());
      if (produces) {
        scf::YieldOp::create(rewriter, loc, x);
        rewriter.setInsertionPointToStart(&ifOp.getElseRegion().front());
        scf::YieldOp::create(rewriter, loc, otherScalar);
      }
    }
    if (produces)
      result = vector::InsertOp::create(rewriter, loc, ifOp.getResult(0), result,
                                        ArrayRef<int64_t>{slot});
  });
  return result;
}

struct GatherLowering : LayoutPattern<tile::GatherOp> {
  using LayoutPattern::LayoutPattern;
  LogicalResult matchAndRewrite(tile::GatherOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    auto view = op.getView().getDefiningOp<tile::MakeViewOp>();
    if (!view)
      return rewriter.notifyMatchFailure(op, "view is not made by tile.make_view");
    Type elem = registerType(op.getType().getElementType());
    TypedAttr fill = op.getFillAttr() ? op.getFillAttr() : rewriter.getZeroAttr(elem);
    Location loc = op.getLoc();
    Value r = forEachElement(rewriter, loc, layout, view, op.getType(), adaptor.getIndices(),
                             adaptor.getMask(), elem, fill, /*branch=*/false,
                             [&](int64_t, Value addr, Value guard, Value fillValue) -> Value {
                               return predicatedLoad(rewriter, loc, guard, addr, fillValue,
                                                     elem);
                             });
    rewriter.replaceOp(op, r);
    return success();
  }
};

struct ScatterLowering : LayoutPattern<tile::ScatterOp> {
  using LayoutPattern::LayoutPattern;
  LogicalResult matchAndRewrite(tile::ScatterOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    auto view = op.getView().getDefiningOp<tile::MakeViewOp>();
    if (!view)
      return rewriter.notifyMatchFailure(op, "view is not made by tile.make_view");
    auto shape = op.getValues().getType();
    Type elem = registerType(shape.getElementType());
    Location loc = op.getLoc();
    Value values = adaptor.getValues();
    forEachElement(rewriter, loc, layout, view, shape, adaptor.getIndices(), adaptor.getMask(),
                   elem, TypedAttr(), /*branch=*/false,
                   [&](int64_t slot, Value addr, Value guard, Value) -> Value {
                     Value x = vector::ExtractOp::create(rewriter, loc, values,
                                                         ArrayRef<int64_t>{slot});
                     predicatedStore(rewriter, loc, guard, x, addr);
                     return Value();
                   });
    rewriter.eraseOp(op);
    return success();
  }
};

struct AtomicLowering : LayoutPattern<tile::AtomicOp> {
  using LayoutPattern::LayoutPattern;
  LogicalResult matchAndRewrite(tile::AtomicOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    auto view = op.getView().getDefiningOp<tile::MakeViewOp>();
    if (!view)
      return rewriter.notifyMatchFailure(op, "view is not made by tile.make_view");
    Type elem = registerType(op.getType().getElementType());
    Location loc = op.getLoc();
    StringRef kind = op.getKind();
    bool isFloat = isa<FloatType>(elem);
    LLVM::AtomicBinOp bin =
        kind == "add"    ? (isFloat ? LLVM::AtomicBinOp::fadd : LLVM::AtomicBinOp::add)
        : kind == "min"  ? LLVM::AtomicBinOp::min
        : kind == "max"  ? LLVM::AtomicBinOp::max
        : kind == "umin" ? LLVM::AtomicBinOp::umin
        : kind == "umax" ? LLVM::AtomicBinOp::umax
                         : LLVM::AtomicBinOp::xchg;
    Value values = adaptor.getValues(), cmp = adaptor.getCmp();
    Value r = forEachElement(
        rewriter, loc, layout, view, op.getType(), adaptor.getIndices(), adaptor.getMask(),
        elem, rewriter.getZeroAttr(elem), /*branch=*/true,
        [&](int64_t slot, Value addr, Value, Value) -> Value {
          Value x = vector::ExtractOp::create(rewriter, loc, values, ArrayRef<int64_t>{slot});
          if (kind == "cas") {
            Value c = vector::ExtractOp::create(rewriter, loc, cmp, ArrayRef<int64_t>{slot});
            Value pair = LLVM::AtomicCmpXchgOp::create(
                rewriter, loc, addr, c, x, LLVM::AtomicOrdering::monotonic,
                LLVM::AtomicOrdering::monotonic, "device", bytesOf(elem));
            return LLVM::ExtractValueOp::create(rewriter, loc, pair, ArrayRef<int64_t>{0});
          }
          return LLVM::AtomicRMWOp::create(rewriter, loc, bin, addr, x,
                                           LLVM::AtomicOrdering::monotonic, "device",
                                           bytesOf(elem));
        });
    rewriter.replaceOp(op, r);
    return success();
  }
};

} // namespace

void tilec::populateIrregularToNVVMPatterns(const TypeConverter &converter,
                                            ThreadLayout layout,
                                            RewritePatternSet &patterns) {
  patterns.add<GatherLowering, ScatterLowering, AtomicLowering>(converter,
                                                                patterns.getContext(), layout);
}
