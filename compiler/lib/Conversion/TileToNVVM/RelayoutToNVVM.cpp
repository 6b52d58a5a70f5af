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

/// The relayout buffer of one op: the source tile stored row by row with
/// padding; `write` stores every element this thread holds, `read` loads
/// one element by its row-major flat index.
class RelayoutBuffer {
public:
  RelayoutBuffer(ConversionPatternRewriter &rewriter, Location loc, const ThreadLayout &layout,
                 LLVM::GlobalOp global, RankedTensorType srcTy)
      : b(rewriter), loc(loc), layout(layout), srcTy(srcTy) {
    elem = srcTy.getElementType();
    // Booleans are stored as bytes.
    stored = elem.isInteger(1) ? b.getI8Type() : elem;
    bytes = stored.getIntOrFloatBitWidth() / 8;
    inner = srcTy.getShape().back();
    pitch = inner + rowPad(stored);
    auto ptr3 = LLVM::LLVMPointerType::get(b.getContext(), 3);
    base = LLVM::AddressOfOp::create(b, loc, ptr3, global.getSymName());
  }

  Value c64(int64_t v) {
    return arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(v)).getResult();
  }

  /// The padded position of source flat index f: (f / C) * pitch + f % C.
  Value slot(Value flat) {
    Value padded = flat;
    if (inner > 1 || pitch != inner) {
      Value row = arith::DivUIOp::create(b, loc, flat, c64(inner));
      Value col = arith::RemUIOp::create(b, loc, flat, c64(inner));
      padded = arith::AddIOp::create(b, loc, arith::MulIOp::create(b, loc, row, c64(pitch)), col);
    }
    return LLVM::GEPOp::create(b, loc, base.getType(), stored, base, ValueRange{padded});
  }

  /// Stores this thread's elements of `src` (a per-thread vector), then
  /// synchronizes the block.
  void write(Value src) {
    forEachThreadElement(b, loc, layout, srcTy, [&](int64_t slotIndex, Value e, bool mayPad) {
      Value x = vector::ExtractOp::create(b, loc, src, ArrayRef<int64_t>{slotIndex});
      if (stored != elem)
        x = arith::ExtUIOp::create(b, loc, stored, x);
      if (!mayPad) {
        store(e, x);
        return;
      }
      auto ifOp = scf::IfOp::create(b, loc, TypeRange{},
                                    arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, e,
                                                          c64(srcTy.getNumElements())),
                                    false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&ifOp.getThenRegion().front());
      store(e, x);
    });
    NVVM::Barrier0Op::create(b, loc);
  }

  void store(Value flat, Value x) { LLVM::StoreOp::create(b, loc, x, slot(flat), bytes); }

  /// The i-th scratch slot after the tile (room for layout.threads values).
  Value scratch(Value i) {
    int64_t rows = srcTy.getNumElements() / inner;
    Value index = arith::AddIOp::create(b, loc, c64(rows * pitch), i);
    return LLVM::GEPOp::create(b, loc, base.getType(), stored, base, ValueRange{index});
  }

  Value read(Value flat) {
    Value x = LLVM::LoadOp::create(b, loc, stored, slot(flat), bytes);
    if (stored != elem)
      x = arith::TruncIOp::create(b, loc, elem, x);
    return x;
  }

  /// Calls `fn(slot, coords)` for every element this thread holds of a
  /// result tile `resTy` (coordinates outermost first, i64; padding slots
  /// get the coordinates of element 0) and gathers the returned values.
  template <typename Fn> Value forEachResult(RankedTensorType resTy, Fn fn) {
    VectorType outTy = layout.perThreadType(resTy);
    Value result = arith::ConstantOp::create(b, loc, outTy, b.getZeroAttr(outTy));
    forEachThreadElement(b, loc, layout, resTy, [&](int64_t slotIndex, Value e, bool mayPad) {
      if (mayPad)
        e = arith::SelectOp::create(b, loc,
                                    arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, e,
                                                          c64(resTy.getNumElements())),
                                    e, c64(0));
      result = vector::InsertOp::create(b, loc, fn(tileCoords(b, loc, e, resTy.getShape())),
                                        result, ArrayRef<int64_t>{slotIndex});
    });
    // The buffer may be reused by the next relayout.
    NVVM::Barrier0Op::create(b, loc);
    return result;
  }

  ConversionPatternRewriter &b;
  Location loc;
  const ThreadLayout &layout;
  RankedTensorType srcTy;
  Type elem, stored;
  int64_t bytes, inner, pitch;
  Value base;
};

static LLVM::GlobalOp relayoutGlobal(Operation *op) {
  auto func = op->getParentOfType<func::FuncOp>();
  auto module = op->getParentOfType<ModuleOp>();
  return module.lookupSymbol<LLVM::GlobalOp>(relayoutScratchName(func.getName()));
}

/// A shape change that moves data: `srcFlatOf` maps the result's
/// coordinates (i64 values, outermost first) to the source's row-major flat
/// index.
template <typename OpTy>
struct RelayoutLowering : LayoutPattern<OpTy> {
  using LayoutPattern<OpTy>::LayoutPattern;
  using OpAdaptor = typename OpTy::Adaptor;
  using LayoutPattern<OpTy>::layout;

  virtual Value srcFlatOf(OpTy op, OpBuilder &b, Location loc, ArrayRef<Value> coords) const = 0;

  LogicalResult
  matchAndRewrite(OpTy op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    LLVM::GlobalOp global = relayoutGlobal(op);
    if (!global)
      return rewriter.notifyMatchFailure(op, "no relayout buffer");
    Location loc = op.getLoc();
    RelayoutBuffer buf(rewriter, loc, layout, global,
                       cast<RankedTensorType>(op.getTile().getType()));
    buf.write(adaptor.getTile());
    Value result = buf.forEachResult(cast<RankedTensorType>(op.getType()),
                                     [&](ArrayRef<Value> coords) {
                                       return buf.read(srcFlatOf(op, rewriter, loc, coords));
                                     });
    rewriter.replaceOp(op, result);
    return success();
  }
};


/// Broadcast: source dimension d (aligned at the innermost) takes the
/// result's coordinate, or 0 where the source has size 1.
struct BroadcastLowering : RelayoutLowering<tile::BroadcastOp> {
  using RelayoutLowering::RelayoutLowering;
  Value srcFlatOf(tile::BroadcastOp op, OpBuilder &b, Location loc,
                  ArrayRef<Value> coords) const override {
    ArrayRef<int64_t> from = op.getTile().getType().getShape();
    return tileFlat(b, loc, broadcastSource(coords, from), from);
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
    return tileFlat(b, loc, src, op.getTile().getType().getShape());
  }
};

/// Slice: source coordinate d is the result's plus offsets[d].
struct SliceLowering : RelayoutLowering<tile::SliceOp> {
  using RelayoutLowering::RelayoutLowering;
  Value srcFlatOf(tile::SliceOp op, OpBuilder &b, Location loc,
                  ArrayRef<Value> coords) const override {
    SmallVector<Value> src;
    for (auto [c, o] : llvm::zip(coords, op.getOffsets()))
      src.push_back(o ? Value(arith::AddIOp::create(
                            b, loc, c, arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(o))))
                      : c);
    return tileFlat(b, loc, src, op.getTile().getType().getShape());
  }
};

/// A reduction over one axis: each thread combines, for every result
/// element it holds, the source elements along the axis, read from the
/// buffer (f16/bf16 in f32).
struct AxisReduceLowering : LayoutPattern<tile::ReduceOp> {
  using LayoutPattern::LayoutPattern;
  LogicalResult matchAndRewrite(tile::ReduceOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    if (!op.getAxis())
      return rewriter.notifyMatchFailure(op, "a whole-tile reduction");
    LLVM::GlobalOp global = relayoutGlobal(op);
    if (!global)
      return rewriter.notifyMatchFailure(op, "no relayout buffer");
    Location loc = op.getLoc();
    auto srcTy = op.getTile().getType();
    auto resTy = cast<RankedTensorType>(op.getType());
    int64_t axis = *op.getAxis();
    Type elem = srcTy.getElementType();
    bool isFloat = isa<FloatType>(elem);
    Type work = isFloat ? Type(rewriter.getF32Type()) : elem;
    StringRef kind = op.getKind();
    RelayoutBuffer buf(rewriter, loc, layout, global, srcTy);
    buf.write(adaptor.getTile());
    Value result = buf.forEachResult(resTy, [&](ArrayRef<Value> coords) -> Value {
      Value init = arith::ConstantOp::create(rewriter, loc,
                                             reductionIdentity(rewriter, kind, isFloat));
      auto loop = scf::ForOp::create(rewriter, loc, buf.c64(0), buf.c64(srcTy.getDimSize(axis)),
                                     buf.c64(1), ValueRange{init});
      {
        OpBuilder::InsertionGuard g(rewriter);
        rewriter.setInsertionPointToStart(loop.getBody());
        SmallVector<Value> src(coords.begin(), coords.end());
        src.insert(src.begin() + axis, loop.getInductionVar());
        Value x = buf.read(tileFlat(rewriter, loc, src, srcTy.getShape()));
        if (isFloat && !elem.isF32())
          x = arith::ExtFOp::create(rewriter, loc, work, x);
        scf::YieldOp::create(rewriter, loc,
                             combineReduction(rewriter, loc, kind, isFloat,
                                              loop.getRegionIterArgs()[0], x));
      }
      Value r = loop.getResult(0);
      if (isFloat && !elem.isF32())
        r = arith::TruncFOp::create(rewriter, loc, elem, r);
      return r;
    });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// cumsum of a 1-D tile, in three phases over the buffer (in f32 or i32):
/// each thread scans a contiguous chunk of N / threads elements and leaves
/// its total in a scratch slot; after a barrier each thread adds the totals
/// of the chunks before its own; after another barrier every thread reads
/// the elements it holds.
struct ScanLowering : LayoutPattern<tile::ScanOp> {
  using LayoutPattern::LayoutPattern;
  LogicalResult matchAndRewrite(tile::ScanOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    LLVM::GlobalOp global = relayoutGlobal(op);
    if (!global)
      return rewriter.notifyMatchFailure(op, "no relayout buffer");
    Location loc = op.getLoc();
    auto tileTy = op.getType();
    Type elem = tileTy.getElementType();
    bool isFloat = isa<FloatType>(elem);
    Type work = isFloat ? Type(rewriter.getF32Type()) : elem;
    auto workTy = RankedTensorType::get(tileTy.getShape(), work);
    Value src = adaptor.getTile();
    if (work != elem)
      src = arith::ExtFOp::create(rewriter, loc, layout.perThreadType(workTy), src);
    RelayoutBuffer buf(rewriter, loc, layout, global, workTy);
    buf.write(src);
    auto add = [&](Value x, Value y) -> Value {
      return combineReduction(rewriter, loc, "sum", isFloat, x, y);
    };
    int64_t n = tileTy.getNumElements();
    int64_t threads = layout.threads;
    int64_t chunk = (n + threads - 1) / threads;
    Value tid = arith::ExtUIOp::create(rewriter, loc, rewriter.getI64Type(),
                                       NVVM::ThreadIdXOp::create(rewriter, loc,
                                                                 rewriter.getI32Type()));
    Value first = arith::MulIOp::create(rewriter, loc, tid, buf.c64(chunk));
    Value zero = arith::ConstantOp::create(rewriter, loc, reductionIdentity(rewriter, "sum", isFloat));
    // Runs fn(index) for the chunk's indices below n; `carry` threads a value.
    auto overChunk = [&](Value init, auto fn) -> Value {
      auto loop = scf::ForOp::create(rewriter, loc, buf.c64(0), buf.c64(chunk), buf.c64(1),
                                     ValueRange{init});
      OpBuilder::InsertionGuard g(rewriter);
      rewriter.setInsertionPointToStart(loop.getBody());
      Value idx = arith::AddIOp::create(rewriter, loc, first, loop.getInductionVar());
      Value inside = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::ult, idx,
                                           buf.c64(n));
      Value carry = loop.getRegionIterArgs()[0];
      auto ifOp = scf::IfOp::create(rewriter, loc, TypeRange{work}, inside, true, true);
      {
        OpBuilder::InsertionGuard g2(rewriter);
        rewriter.setInsertionPointToStart(&ifOp.getThenRegion().front());
        scf::YieldOp::create(rewriter, loc, fn(idx, carry));
        rewriter.setInsertionPointToStart(&ifOp.getElseRegion().front());
        scf::YieldOp::create(rewriter, loc, carry);
      }
      scf::YieldOp::create(rewriter, loc, ifOp.getResult(0));
      return loop.getResult(0);
    };
    // 1. Scan this thread's chunk in place; its total goes to scratch[tid].
    Value total = overChunk(zero, [&](Value idx, Value carry) {
      Value s = add(carry, buf.read(idx));
      buf.store(idx, s);
      return s;
    });
    LLVM::StoreOp::create(rewriter, loc, total, buf.scratch(tid), buf.bytes);
    NVVM::Barrier0Op::create(rewriter, loc);
    // 2. The totals of the chunks before this one.
    auto prior = scf::ForOp::create(rewriter, loc, buf.c64(0), tid, buf.c64(1), ValueRange{zero});
    {
      OpBuilder::InsertionGuard g(rewriter);
      rewriter.setInsertionPointToStart(prior.getBody());
      Value t = LLVM::LoadOp::create(rewriter, loc, work, buf.scratch(prior.getInductionVar()),
                                     buf.bytes);
      scf::YieldOp::create(rewriter, loc, add(prior.getRegionIterArgs()[0], t));
    }
    Value offset = prior.getResult(0);
    // 3. Add them to the chunk.
    overChunk(zero, [&](Value idx, Value carry) {
      buf.store(idx, add(buf.read(idx), offset));
      return carry;
    });
    NVVM::Barrier0Op::create(rewriter, loc);
    Value result = buf.forEachResult(tileTy, [&](ArrayRef<Value> coords) -> Value {
      Value x = buf.read(coords[0]);
      if (work != elem)
        x = arith::TruncFOp::create(rewriter, loc, elem, x);
      return x;
    });
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void tilec::populateRelayoutToNVVMPatterns(const TypeConverter &converter,
                                           const ThreadLayout &layout,
                                           RewritePatternSet &patterns) {
  patterns.add<BroadcastLowering, PermuteLowering, SliceLowering, AxisReduceLowering,
               ScanLowering>(
      converter, patterns.getContext(), layout);
}
