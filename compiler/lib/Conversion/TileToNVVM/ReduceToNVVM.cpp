//===- ReduceToNVVM.cpp - whole-tile reductions across the block ----------===//
//
// `tile.reduce` combines every element of a tile into one scalar that every
// thread receives:
//   1. each thread combines the elements it owns (tile padding masked with
//      the identity) with a vector reduction;
//   2. a butterfly of warp shuffles combines the 32 lanes of each warp;
//   3. lane 0 of each warp writes its value to shared memory, a barrier, and
//      every thread combines the per-warp values; a second barrier makes the
//      buffer reusable by the next reduction.
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

#include <limits>

using namespace mlir;
using namespace tilec;

std::string tilec::reduceScratchName(StringRef kernel) {
  return ("__tile_reduce_scratch_" + kernel).str();
}

namespace {

struct ReduceLowering : OpConversionPattern<tile::ReduceOp> {
  ReduceLowering(const TypeConverter &tc, MLIRContext *ctx, const ThreadLayout &layout)
      : OpConversionPattern(tc, ctx), layout(layout) {}

  LogicalResult
  matchAndRewrite(tile::ReduceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto tileTy = op.getTile().getType();
    Type elem = tileTy.getElementType();
    bool isFloat = isa<FloatType>(elem);
    Type work = isFloat ? Type(rewriter.getF32Type()) : elem; // f32 or i32
    StringRef kind = op.getKind();
    Type i32 = rewriter.getI32Type();
    auto c32 = [&](int32_t v) -> Value {
      return arith::ConstantOp::create(rewriter, loc, rewriter.getI32IntegerAttr(v));
    };

    // Identity of the combination.
    TypedAttr identity;
    if (isFloat) {
      float v = kind == "sum" ? 0.0f
                : kind == "max" ? -std::numeric_limits<float>::infinity()
                                : std::numeric_limits<float>::infinity();
      identity = rewriter.getF32FloatAttr(v);
    } else {
      int32_t v = kind == "sum" ? 0
                  : kind == "max" ? std::numeric_limits<int32_t>::min()
                                  : std::numeric_limits<int32_t>::max();
      identity = rewriter.getI32IntegerAttr(v);
    }
    auto combine = [&](Value a, Value b) -> Value {
      if (kind == "sum")
        return isFloat ? Value(arith::AddFOp::create(rewriter, loc, a, b))
                       : Value(arith::AddIOp::create(rewriter, loc, a, b));
      if (kind == "max")
        return isFloat ? Value(arith::MaximumFOp::create(rewriter, loc, a, b))
                       : Value(arith::MaxSIOp::create(rewriter, loc, a, b));
      return isFloat ? Value(arith::MinimumFOp::create(rewriter, loc, a, b))
                     : Value(arith::MinSIOp::create(rewriter, loc, a, b));
    };

    // 1. This thread's elements; slots past the tile end hold the identity.
    Value v = adaptor.getTile();
    auto vecTy = cast<VectorType>(v.getType());
    auto workVecTy = VectorType::get(vecTy.getShape(), work);
    if (work != elem)
      v = arith::ExtFOp::create(rewriter, loc, workVecTy, v);
    int64_t numel = tileTy.getNumElements();
    int64_t chunk = int64_t(layout.threads) * layout.vec;
    if (numel % chunk != 0) {
      auto idxTy = VectorType::get(vecTy.getShape(), i32);
      Value idx = threadFlatIndices(rewriter, loc, layout, tileTy);
      Value limit = vector::BroadcastOp::create(rewriter, loc, idxTy, c32(int32_t(numel)));
      Value valid = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::slt, idx, limit);
      Value ident = arith::ConstantOp::create(rewriter, loc, workVecTy,
                                              DenseElementsAttr::get(workVecTy, identity));
      v = arith::SelectOp::create(rewriter, loc, valid, v, ident);
    }
    Value acc = vector::ExtractOp::create(rewriter, loc, v, ArrayRef<int64_t>{0});
    for (int64_t i = 1; i < vecTy.getNumElements(); ++i)
      acc = combine(acc, vector::ExtractOp::create(rewriter, loc, v, ArrayRef<int64_t>{i}));

    // 2. Across the lanes of a warp.
    auto shflKind = NVVM::ShflKindAttr::get(rewriter.getContext(), NVVM::ShflKind::bfly);
    for (int32_t offset = 16; offset >= 1; offset /= 2) {
      Value other = NVVM::ShflOp::create(rewriter, loc, work, c32(-1), acc, c32(offset),
                                         c32(0x1f), shflKind, UnitAttr());
      acc = combine(acc, other);
    }

    // 3. Across the warps, through shared memory.
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
      Value base = LLVM::AddressOfOp::create(rewriter, loc, ptr3, global.getSymName());
      Value tid = NVVM::ThreadIdXOp::create(rewriter, loc, i32);
      Value warp = arith::DivUIOp::create(rewriter, loc, tid, c32(32));
      Value lane = arith::RemUIOp::create(rewriter, loc, tid, c32(32));
      Value slot = LLVM::GEPOp::create(rewriter, loc, ptr3, work, base, ValueRange{warp});
      Value isLane0 = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq, lane, c32(0));
      auto ifOp = scf::IfOp::create(rewriter, loc, TypeRange{}, isLane0, false);
      {
        OpBuilder::InsertionGuard g(rewriter);
        rewriter.setInsertionPointToStart(&ifOp.getThenRegion().front());
        LLVM::StoreOp::create(rewriter, loc, acc, slot, 4);
      }
      NVVM::Barrier0Op::create(rewriter, loc);
      Value total;
      for (unsigned w = 0; w < warps; ++w) {
        Value p = LLVM::GEPOp::create(rewriter, loc, ptr3, work, base,
                                      ArrayRef<LLVM::GEPArg>{int32_t(w)});
        Value x = LLVM::LoadOp::create(rewriter, loc, work, p, 4);
        total = total ? combine(total, x) : x;
      }
      NVVM::Barrier0Op::create(rewriter, loc);
      acc = total;
    }
    if (work != elem)
      acc = arith::TruncFOp::create(rewriter, loc, elem, acc);
    rewriter.replaceOp(op, acc);
    return success();
  }

  const ThreadLayout &layout;
};

} // namespace

void tilec::populateReduceToNVVMPatterns(const TypeConverter &converter,
                                         const ThreadLayout &layout,
                                         RewritePatternSet &patterns) {
  patterns.add<ReduceLowering>(converter, patterns.getContext(), layout);
}
