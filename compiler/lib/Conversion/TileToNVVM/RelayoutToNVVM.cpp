//===- RelayoutToNVVM.cpp - tile shape changes that move data -------------===//
//
// A broadcast of a computed tile (a loaded one is fused into
// tile.broadcast_load by tile-fuse) or a transpose/permute needs elements
// that other threads hold: every thread writes its source elements to a
// shared-memory buffer, the block synchronizes, and every thread reads the
// source elements of the result slots it holds, then the block synchronizes
// again so that the buffer can be reused.
//
// The buffer stores the source row by row with one 4-byte word of padding
// after each row (of the innermost dimension): a transpose then reads a
// column whose consecutive elements fall in different banks (row pitch C+1
// words) instead of all in one (pitch C, a multiple of 32).
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

/// Elements of padding after each source row.
static int64_t rowPad(Type elem) {
  unsigned bytes = std::max<unsigned>(1, elem.getIntOrFloatBitWidth() / 8);
  return std::max<int64_t>(1, 4 / bytes);
}

int64_t tilec::relayoutScratchBytes(RankedTensorType src) {
  unsigned bits = src.getElementType().getIntOrFloatBitWidth();
  int64_t inner = src.getShape().back();
  int64_t rows = src.getNumElements() / inner;
  return rows * (inner + rowPad(src.getElementType())) * std::max<unsigned>(1, bits / 8);
}

namespace {

/// The relayout of one op: `srcFlatOf` maps the result's coordinates (i64
/// values, outermost first) to the source's row-major flat index.
template <typename OpTy>
struct RelayoutLowering : LayoutPattern<OpTy> {
  using LayoutPattern<OpTy>::LayoutPattern;
  using OpAdaptor = typename OpTy::Adaptor;
  using LayoutPattern<OpTy>::layout;

  virtual Value srcFlatOf(OpTy op, OpBuilder &b, Location loc, ArrayRef<Value> coords) const = 0;

  LogicalResult
  matchAndRewrite(OpTy op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto srcTy = cast<RankedTensorType>(op.getTile().getType());
    auto resTy = cast<RankedTensorType>(op.getType());
    Type elem = resTy.getElementType();
    // Booleans are stored as bytes.
    Type stored = elem.isInteger(1) ? rewriter.getI8Type() : elem;
    int64_t bytes = stored.getIntOrFloatBitWidth() / 8;
    auto func = op->template getParentOfType<func::FuncOp>();
    auto module = op->template getParentOfType<ModuleOp>();
    auto global = module.template lookupSymbol<LLVM::GlobalOp>(
        relayoutScratchName(func.getName()));
    if (!global)
      return rewriter.notifyMatchFailure(op, "no relayout buffer");
    auto c64 = [&](int64_t v) {
      return arith::ConstantOp::create(rewriter, loc, rewriter.getI64IntegerAttr(v)).getResult();
    };
    auto ptr3 = LLVM::LLVMPointerType::get(rewriter.getContext(), 3);
    Value base = LLVM::AddressOfOp::create(rewriter, loc, ptr3, global.getSymName());
    int64_t inner = srcTy.getShape().back(), pitch = inner + rowPad(stored);
    // The padded position of source flat index f: (f / C) * pitch + f % C.
    auto slot = [&](Value flat) {
      Value padded = flat;
      if (inner > 1 || pitch != inner) {
        Value row = arith::DivUIOp::create(rewriter, loc, flat, c64(inner));
        Value col = arith::RemUIOp::create(rewriter, loc, flat, c64(inner));
        padded = arith::AddIOp::create(
            rewriter, loc, arith::MulIOp::create(rewriter, loc, row, c64(pitch)), col);
      }
      return LLVM::GEPOp::create(rewriter, loc, ptr3, stored, base, ValueRange{padded});
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
    ArrayRef<int64_t> to = resTy.getShape();
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
        SmallVector<Value> coords(to.size());
        int64_t innerSize = 1;
        for (int64_t d = to.size() - 1; d >= 0; --d) {
          Value c = e;
          if (innerSize > 1)
            c = arith::DivUIOp::create(rewriter, loc, c, c64(innerSize));
          if (d > 0)
            c = arith::RemUIOp::create(rewriter, loc, c, c64(to[d]));
          innerSize *= to[d];
          coords[d] = c;
        }
        Value x = LLVM::LoadOp::create(rewriter, loc, stored,
                                       slot(srcFlatOf(op, rewriter, loc, coords)), bytes);
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

static Value flatOf(OpBuilder &b, Location loc, ArrayRef<Value> coords,
                    ArrayRef<int64_t> shape) {
  Value flat;
  for (size_t d = 0; d < coords.size(); ++d) {
    if (!coords[d])
      continue;
    int64_t stride = 1;
    for (size_t k = d + 1; k < shape.size(); ++k)
      stride *= shape[k];
    Value term = stride == 1 ? coords[d]
                             : Value(arith::MulIOp::create(
                                   b, loc, coords[d],
                                   arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(stride))));
    flat = flat ? Value(arith::AddIOp::create(b, loc, flat, term)) : term;
  }
  return flat ? flat : Value(arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(0)));
}

/// Broadcast: source dimension d (aligned at the innermost) takes the
/// result's coordinate, or 0 where the source has size 1.
struct BroadcastLowering : RelayoutLowering<tile::BroadcastOp> {
  using RelayoutLowering::RelayoutLowering;
  Value srcFlatOf(tile::BroadcastOp op, OpBuilder &b, Location loc,
                  ArrayRef<Value> coords) const override {
    ArrayRef<int64_t> from = op.getTile().getType().getShape();
    size_t lead = coords.size() - from.size();
    SmallVector<Value> src;
    for (size_t d = 0; d < from.size(); ++d)
      src.push_back(from[d] == 1 ? Value() : coords[d + lead]);
    return flatOf(b, loc, src, from);
  }
};

/// Permute: source dimension permutation[d] takes result coordinate d.
struct PermuteLowering : RelayoutLowering<tile::PermuteOp> {
  using RelayoutLowering::RelayoutLowering;
  Value srcFlatOf(tile::PermuteOp op, OpBuilder &b, Location loc,
                  ArrayRef<Value> coords) const override {
    ArrayRef<int64_t> perm = op.getPermutation();
    SmallVector<Value> src(coords.size());
    for (size_t d = 0; d < coords.size(); ++d)
      src[size_t(perm[d])] = coords[d];
    return flatOf(b, loc, src, op.getTile().getType().getShape());
  }
};

} // namespace

void tilec::populateRelayoutToNVVMPatterns(const TypeConverter &converter,
                                           const ThreadLayout &layout,
                                           RewritePatternSet &patterns) {
  patterns.add<BroadcastLowering, PermuteLowering>(converter, patterns.getContext(), layout);
}
