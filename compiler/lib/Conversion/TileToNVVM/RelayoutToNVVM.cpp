//===- RelayoutToNVVM.cpp - tile shape changes that move data -------------===//
//
// A broadcast of a computed tile (a loaded one is fused into
// tile.broadcast_load by tile-fuse) needs elements that other threads hold:
// every thread writes its source elements to a shared-memory buffer at their
// row-major flat index, the block synchronizes, and every thread reads the
// elements of the result it holds from the source positions they broadcast
// from, then the block synchronizes again so that the buffer can be reused.
//
//===----------------------------------------------------------------------===//

#include "PatternsNVVM.h"

#include "tilec/Dialect/Tile/IR/TileDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace tilec;

std::string tilec::relayoutScratchName(StringRef kernel) {
  return ("__tile_relayout_" + kernel).str();
}

int64_t tilec::relayoutScratchBytes(RankedTensorType src) {
  unsigned bits = src.getElementType().getIntOrFloatBitWidth();
  return src.getNumElements() * std::max<unsigned>(1, bits / 8);
}

namespace {

struct BroadcastLowering : LayoutPattern<tile::BroadcastOp> {
  using LayoutPattern::LayoutPattern;

  LogicalResult
  matchAndRewrite(tile::BroadcastOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto srcTy = op.getTile().getType();
    auto resTy = op.getType();
    Type elem = resTy.getElementType();
    // Booleans are stored as bytes.
    Type stored = elem.isInteger(1) ? rewriter.getI8Type() : elem;
    int64_t bytes = stored.getIntOrFloatBitWidth() / 8;
    auto func = op->getParentOfType<func::FuncOp>();
    auto module = op->getParentOfType<ModuleOp>();
    auto global = module.lookupSymbol<LLVM::GlobalOp>(relayoutScratchName(func.getName()));
    if (!global)
      return rewriter.notifyMatchFailure(op, "no relayout buffer");
    auto c64 = [&](int64_t v) {
      return arith::ConstantOp::create(rewriter, loc, rewriter.getI64IntegerAttr(v)).getResult();
    };
    auto ptr3 = LLVM::LLVMPointerType::get(rewriter.getContext(), 3);
    Value base = LLVM::AddressOfOp::create(rewriter, loc, ptr3, global.getSymName());
    auto slot = [&](Value flat) {
      return LLVM::GEPOp::create(rewriter, loc, ptr3, stored, base, ValueRange{flat});
    };
    auto ifThen = [&](Value cond, auto body) {
      auto ifOp = scf::IfOp::create(rewriter, loc, TypeRange{}, cond, false);
      OpBuilder::InsertionGuard g(rewriter);
      rewriter.setInsertionPointToStart(&ifOp.getThenRegion().front());
      body();
    };
    Value src = adaptor.getTile();
    for (int64_t g = 0; g < layout.groups(srcTy); ++g) {
      Value gb = layout.groupBase(rewriter, loc, srcTy, g);
      for (unsigned v = 0; v < layout.vec; ++v) {
        Value e = v ? Value(arith::AddIOp::create(rewriter, loc, gb, c64(v))) : gb;
        Value x = vector::ExtractOp::create(rewriter, loc, src,
                                            ArrayRef<int64_t>{g * layout.vec + v});
        if (stored != elem)
          x = arith::ExtUIOp::create(rewriter, loc, stored, x);
        auto write = [&] { LLVM::StoreOp::create(rewriter, loc, x, slot(e), bytes); };
        if (layout.groupNeedsGuard(srcTy, g))
          ifThen(arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::ult, e,
                                       c64(srcTy.getNumElements())),
                 write);
        else
          write();
      }
    }
    NVVM::Barrier0Op::create(rewriter, loc);
    ArrayRef<int64_t> to = resTy.getShape(), from = srcTy.getShape();
    int64_t lead = to.size() - from.size();
    VectorType outTy = layout.perThreadType(resTy);
    Value result = arith::ConstantOp::create(rewriter, loc, outTy,
                                             rewriter.getZeroAttr(outTy));
    for (int64_t g = 0; g < layout.groups(resTy); ++g) {
      Value gb = layout.groupBase(rewriter, loc, resTy, g);
      for (unsigned v = 0; v < layout.vec; ++v) {
        Value e = v ? Value(arith::AddIOp::create(rewriter, loc, gb, c64(v))) : gb;
        // Padding slots read element 0, which always exists.
        if (layout.groupNeedsGuard(resTy, g))
          e = arith::SelectOp::create(
              rewriter, loc,
              arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::ult, e,
                                    c64(resTy.getNumElements())),
              e, c64(0));
        Value srcFlat = c64(0);
        int64_t inner = 1, srcInner = 1;
        for (int64_t d = to.size() - 1; d >= 0; --d) {
          Value c = e;
          if (inner > 1)
            c = arith::DivUIOp::create(rewriter, loc, c, c64(inner));
          if (d > 0)
            c = arith::RemUIOp::create(rewriter, loc, c, c64(to[d]));
          inner *= to[d];
          if (d < lead || from[d - lead] == 1)
            continue;
          Value term = srcInner > 1
                           ? Value(arith::MulIOp::create(rewriter, loc, c, c64(srcInner)))
                           : c;
          srcFlat = arith::AddIOp::create(rewriter, loc, srcFlat, term);
          srcInner *= from[d - lead];
        }
        Value x = LLVM::LoadOp::create(rewriter, loc, stored, slot(srcFlat), bytes);
        if (stored != elem)
          x = arith::TruncIOp::create(rewriter, loc, elem, x);
        result = vector::InsertOp::create(rewriter, loc, x, result,
                                          ArrayRef<int64_t>{g * layout.vec + v});
      }
    }
    NVVM::Barrier0Op::create(rewriter, loc);
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void tilec::populateRelayoutToNVVMPatterns(const TypeConverter &converter,
                                           const ThreadLayout &layout,
                                           RewritePatternSet &patterns) {
  patterns.add<BroadcastLowering>(converter, patterns.getContext(), layout);
}
