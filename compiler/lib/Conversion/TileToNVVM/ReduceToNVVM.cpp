//===- ReduceToNVVM.cpp - whole-tile reductions across the block ----------===//
//
// `tile.reduce` combines every element of a tile into one scalar that every
// thread receives:
//   1. each thread combines the elements it owns (tile padding masked with
//      the identity) with a vector reduction;
//   2. a butterfly of warp shuffles combines the 32 lanes of each warp;
//   3. lane 0 of each warp writes its value to shared memory, a barrier, and
//      every thread combines the per-warp values. Each reduction op has its
//      own slots, so only one inside a loop (which may run again before a
//      slow thread has read its slots) needs a second barrier after reading.
// f16/bf16 tiles are reduced in f32 (shuffles move 32-bit values).
//
//===----------------------------------------------------------------------===//

#include "PatternsNVVM.h"

#include "tilec/Dialect/Tile/IR/TileDialect.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/LoopLikeInterface.h"

#include <limits>

using namespace mlir;
using namespace tilec;

std::string tilec::reduceScratchName(StringRef kernel) {
  return ("__tile_reduce_scratch_" + kernel).str();
}

TypedAttr tilec::reductionIdentity(Builder &b, StringRef kind, bool isFloat) {
  bool maxLike = kind == "max" || kind == "argmax";
  if (isFloat) {
    float v = kind == "sum"    ? 0.0f
              : kind == "prod" ? 1.0f
              : maxLike        ? -std::numeric_limits<float>::infinity()
                               : std::numeric_limits<float>::infinity();
    return b.getF32FloatAttr(v);
  }
  int32_t v = kind == "sum"    ? 0
              : kind == "prod" ? 1
              : maxLike        ? std::numeric_limits<int32_t>::min()
                               : std::numeric_limits<int32_t>::max();
  return b.getI32IntegerAttr(v);
}

Value tilec::combineReduction(OpBuilder &b, Location loc, StringRef kind, bool isFloat,
                              Value x, Value y) {
  if (kind == "sum")
    return isFloat ? Value(arith::AddFOp::create(b, loc, x, y))
                   : Value(arith::AddIOp::create(b, loc, x, y));
  if (kind == "prod")
    return isFloat ? Value(arith::MulFOp::create(b, loc, x, y))
                   : Value(arith::MulIOp::create(b, loc, x, y));
  if (kind == "max")
    return isFloat ? Value(arith::MaximumFOp::create(b, loc, x, y))
                   : Value(arith::MaxSIOp::create(b, loc, x, y));
  return isFloat ? Value(arith::MinimumFOp::create(b, loc, x, y))
                 : Value(arith::MinSIOp::create(b, loc, x, y));
}

namespace {

struct ReduceLowering : LayoutPattern<tile::ReduceOp> {
  using LayoutPattern::LayoutPattern;

  LogicalResult
  matchAndRewrite(tile::ReduceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (op.getAxis())
      return rewriter.notifyMatchFailure(op, "a reduction over one axis");
    Location loc = op.getLoc();
    auto tileTy = op.getTile().getType();
    Type elem = tileTy.getElementType();
    bool isFloat = isa<FloatType>(elem);
    Type work = isFloat ? Type(rewriter.getF32Type()) : elem; // f32 or i32
    StringRef kind = op.getKind();
    bool arg = kind == "argmax" || kind == "argmin";
    bool maxLike = kind == "max" || kind == "argmax";
    Type i32 = rewriter.getI32Type();
    auto c32 = [&](int32_t v) -> Value {
      return arith::ConstantOp::create(rewriter, loc, rewriter.getI32IntegerAttr(v));
    };

    TypedAttr identity = reductionIdentity(rewriter, kind, isFloat);

    // The running state: {value}, or {value, flat index} for argmax/argmin.
    using State = SmallVector<Value, 2>;
    auto combine = [&](const State &a, const State &b) -> State {
      if (!arg)
        return {combineReduction(rewriter, loc, kind, isFloat, a[0], b[0])};
      // b wins when it is strictly more extreme, or equal with a smaller
      // index; a NaN counts as the most extreme value.
      Value earlier = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::slt, b[1], a[1]);
      Value takeB;
      if (isFloat) {
        auto cmpf = [&](arith::CmpFPredicate p, Value x, Value y) -> Value {
          return arith::CmpFOp::create(rewriter, loc, p, x, y);
        };
        Value aNaN = cmpf(arith::CmpFPredicate::UNO, a[0], a[0]);
        Value bNaN = cmpf(arith::CmpFPredicate::UNO, b[0], b[0]);
        Value strict = cmpf(maxLike ? arith::CmpFPredicate::OGT : arith::CmpFPredicate::OLT,
                            b[0], a[0]);
        Value same = arith::OrIOp::create(rewriter, loc, cmpf(arith::CmpFPredicate::OEQ, b[0], a[0]),
                                          arith::AndIOp::create(rewriter, loc, aNaN, bNaN));
        Value one = arith::ConstantOp::create(rewriter, loc, rewriter.getBoolAttr(true));
        Value aNum = arith::XOrIOp::create(rewriter, loc, aNaN, one);
        takeB = arith::OrIOp::create(
            rewriter, loc,
            arith::AndIOp::create(rewriter, loc, aNum,
                                  arith::OrIOp::create(rewriter, loc, bNaN, strict)),
            arith::AndIOp::create(rewriter, loc, same, earlier));
      } else {
        Value strict = arith::CmpIOp::create(
            rewriter, loc, maxLike ? arith::CmpIPredicate::sgt : arith::CmpIPredicate::slt, b[0], a[0]);
        Value same = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq, b[0], a[0]);
        takeB = arith::OrIOp::create(rewriter, loc, strict,
                                     arith::AndIOp::create(rewriter, loc, same, earlier));
      }
      return {arith::SelectOp::create(rewriter, loc, takeB, b[0], a[0]),
              arith::SelectOp::create(rewriter, loc, takeB, b[1], a[1])};
    };

    // 1. This thread's elements; slots past the tile end hold the identity
    //    (and, for argmax/argmin, an index that never wins a tie).
    Value v = adaptor.getTile();
    auto vecTy = cast<VectorType>(v.getType());
    auto workVecTy = VectorType::get(vecTy.getShape(), work);
    auto idxTy = VectorType::get(vecTy.getShape(), i32);
    if (work != elem)
      v = arith::ExtFOp::create(rewriter, loc, workVecTy, v);
    int64_t numel = tileTy.getNumElements();
    int64_t chunk = int64_t(layout.threads) * layout.vec;
    Value idx;
    if (arg || numel % chunk != 0)
      idx = threadFlatIndices(rewriter, loc, layout, tileTy);
    if (numel % chunk != 0) {
      Value limit = vector::BroadcastOp::create(rewriter, loc, idxTy, c32(int32_t(numel)));
      Value valid = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::slt, idx, limit);
      Value ident = arith::ConstantOp::create(rewriter, loc, workVecTy,
                                              DenseElementsAttr::get(workVecTy, identity));
      v = arith::SelectOp::create(rewriter, loc, valid, v, ident);
      if (arg)
        idx = arith::SelectOp::create(
            rewriter, loc, valid, idx,
            vector::BroadcastOp::create(rewriter, loc, idxTy,
                                        c32(std::numeric_limits<int32_t>::max())));
    }
    auto slotState = [&](int64_t i) -> State {
      State st{vector::ExtractOp::create(rewriter, loc, v, ArrayRef<int64_t>{i})};
      if (arg)
        st.push_back(vector::ExtractOp::create(rewriter, loc, idx, ArrayRef<int64_t>{i}));
      return st;
    };
    State acc = slotState(0);
    for (int64_t i = 1; i < vecTy.getNumElements(); ++i)
      acc = combine(acc, slotState(i));
    SmallVector<Type, 2> types{work};
    if (arg)
      types.push_back(i32);

    // 2. Across the lanes of a warp.
    auto shflKind = NVVM::ShflKindAttr::get(rewriter.getContext(), NVVM::ShflKind::bfly);
    for (int32_t offset = 16; offset >= 1; offset /= 2) {
      State other;
      for (size_t c = 0; c < acc.size(); ++c)
        other.push_back(NVVM::ShflOp::create(rewriter, loc, types[c], c32(-1), acc[c],
                                             c32(offset), c32(0x1f), shflKind, UnitAttr()));
      acc = combine(acc, other);
    }

    // 3. Across the warps, through shared memory: component c of warp w
    //    lives in slot c * 32 + w.
    unsigned warps = layout.threads / 32;
    if (warps > 1) {
      auto func = op->getParentOfType<LLVM::LLVMFuncOp>();
      auto funcOp = op->getParentOfType<FunctionOpInterface>();
      StringRef kernelName = func ? func.getName() : funcOp.getName();
      auto module = op->getParentOfType<ModuleOp>();
      auto global = module.lookupSymbol<LLVM::GlobalOp>(reduceScratchName(kernelName));
      if (!global)
        return rewriter.notifyMatchFailure(op, "no reduction scratch buffer");
      auto ptr3 = LLVM::LLVMPointerType::get(rewriter.getContext(), 3);
      auto slotAttr = op->getAttrOfType<IntegerAttr>(kReduceSlotAttrName);
      if (!slotAttr)
        return rewriter.notifyMatchFailure(op, "no reduction slot assigned");
      Value base = LLVM::AddressOfOp::create(rewriter, loc, ptr3, global.getSymName());
      base = LLVM::GEPOp::create(
          rewriter, loc, ptr3, i32, base,
          ArrayRef<LLVM::GEPArg>{int32_t(slotAttr.getInt() * kReduceSlotsPerOp)});
      Value tid = NVVM::ThreadIdXOp::create(rewriter, loc, i32);
      Value warp = arith::DivUIOp::create(rewriter, loc, tid, c32(32));
      Value lane = arith::RemUIOp::create(rewriter, loc, tid, c32(32));
      Value isLane0 = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq, lane, c32(0));
      auto ifOp = scf::IfOp::create(rewriter, loc, TypeRange{}, isLane0, false);
      {
        OpBuilder::InsertionGuard g(rewriter);
        rewriter.setInsertionPointToStart(&ifOp.getThenRegion().front());
        for (size_t c = 0; c < acc.size(); ++c) {
          Value at = arith::AddIOp::create(rewriter, loc, warp, c32(int32_t(c * 32)));
          Value slot = LLVM::GEPOp::create(rewriter, loc, ptr3, types[c], base, ValueRange{at});
          LLVM::StoreOp::create(rewriter, loc, acc[c], slot, 4);
        }
      }
      NVVM::Barrier0Op::create(rewriter, loc);
      State total;
      for (unsigned w = 0; w < warps; ++w) {
        State x;
        for (size_t c = 0; c < acc.size(); ++c) {
          Value p = LLVM::GEPOp::create(rewriter, loc, ptr3, types[c], base,
                                        ArrayRef<LLVM::GEPArg>{int32_t(c * 32 + w)});
          x.push_back(LLVM::LoadOp::create(rewriter, loc, types[c], p, 4));
        }
        total = w == 0 ? x : combine(total, x);
      }
      if (op->getParentOfType<LoopLikeOpInterface>())
        NVVM::Barrier0Op::create(rewriter, loc);
      acc = total;
    }
    Value result = arg ? acc[1] : acc[0];
    if (!arg && work != elem)
      result = arith::TruncFOp::create(rewriter, loc, elem, result);
    rewriter.replaceOp(op, result);
    return success();
  }

};

} // namespace

void tilec::populateReduceToNVVMPatterns(const TypeConverter &converter,
                                         const ThreadLayout &layout,
                                         RewritePatternSet &patterns) {
  patterns.add<ReduceLowering>(converter, patterns.getContext(), layout);
}
