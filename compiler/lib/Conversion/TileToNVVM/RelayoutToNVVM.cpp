//===- RelayoutToNVVM.cpp - tile shape changes that move data -------------===//
//
// A broadcast of a computed tile (a loaded one is fused into
// tile.broadcast_load by tile-fuse) or a transpose/permute needs elements
// that other threads hold. Where they are in the reading thread's warp
// (tile::warpRelayout) it reads them by shuffles (WarpRelayoutLowering);
// otherwise every thread writes its source elements to a
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
#include "mlir/Dialect/Math/IR/Math.h"
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

std::string tilec::scanScratchName(StringRef kernel) {
  return ("__tile_scan_" + kernel).str();
}

int64_t tilec::mmaOperandOffset(RankedTensorType a) {
  return (relayoutScratchBytes(a) + 15) / 16 * 16;
}

int64_t tilec::scanScratchBytes(RankedTensorType src) {
  ThreadLayout layout = encodingOf(src);
  // The scan's work type (f32 for f16/bf16) takes as many words as the
  // element type: with more than one group, a value per (group, thread);
  // then one per warp.
  int64_t groups = layout.getGroups(src.getShape());
  int64_t values = (groups > 1 ? groups * int64_t(layout.getThreadsPerBlock()) : 0) + layout.getThreadsPerBlock() / 32;
  return 4 * int64_t(wordCount(src.getElementType())) * values;
}

int64_t tilec::relayoutScratchBytes(RankedTensorType src) {
  unsigned bits = src.getElementType().getIntOrFloatBitWidth();
  int64_t inner = src.getShape().back();
  int64_t rows = src.getNumElements() / inner;
  return rows * (inner + rowPad(src.getElementType())) * std::max<unsigned>(1, bits / 8);
}

LLVM::GlobalOp tilec::relayoutGlobal(Operation *op) {
  auto func = op->getParentOfType<func::FuncOp>();
  auto module = op->getParentOfType<ModuleOp>();
  return module.lookupSymbol<LLVM::GlobalOp>(relayoutScratchName(func.getName()));
}

namespace {

/// The relayout buffer of one op: the source tile stored row by row with
/// padding; `write` stores every element this thread holds, `read` loads
/// one element by its row-major flat index.
class RelayoutBuffer {
public:
  /// `byteOffset`: where in the kernel's buffer this tile starts (an mma
  /// keeps both operands there).
  RelayoutBuffer(ConversionPatternRewriter &rewriter, Location loc, LLVM::GlobalOp global,
                 RankedTensorType srcTy, int64_t byteOffset = 0)
      : b(rewriter), loc(loc), srcTy(srcTy) {
    elem = registerType(srcTy.getElementType());
    stored = memoryType(elem);
    bytes = stored.getIntOrFloatBitWidth() / 8;
    inner = srcTy.getShape().back();
    pitch = inner + rowPad(stored);
    auto ptr3 = LLVM::LLVMPointerType::get(b.getContext(), 3);
    base = LLVM::AddressOfOp::create(b, loc, ptr3, global.getSymName());
    if (byteOffset)
      base = LLVM::GEPOp::create(b, loc, ptr3, b.getI8Type(), base,
                                 ArrayRef<LLVM::GEPArg>{int32_t(byteOffset)});
  }

  Value c64(int64_t v) {
    return constI64(b, loc, v);
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
    forEachThreadElement(b, loc, srcTy, [&](int64_t slotIndex, Value e, bool mayPad) {
      Value x = toMemory(b, loc, vector::ExtractOp::create(b, loc, src,
                                                           ArrayRef<int64_t>{slotIndex}));
      if (!mayPad)
        return store(e, x);
      ifThen(b, loc, insideTile(b, loc, e, srcTy), [&] { store(e, x); });
    });
    NVVM::Barrier0Op::create(b, loc);
  }

  void store(Value flat, Value x) { LLVM::StoreOp::create(b, loc, x, slot(flat), bytes); }

  Value read(Value flat) {
    return fromMemory(b, loc, LLVM::LoadOp::create(b, loc, stored, slot(flat), bytes), elem);
  }

  /// Calls `fn(slot, coords)` for every element this thread holds of a
  /// result tile `resTy` (coordinates outermost first, i64; padding slots
  /// get the coordinates of element 0) and gathers the returned values.
  template <typename Fn> Value forEachResult(RankedTensorType resTy, Fn fn) {
    VectorType outTy = perThreadType(resTy);
    Value result = arith::ConstantOp::create(b, loc, outTy, b.getZeroAttr(outTy));
    forEachThreadElement(b, loc, resTy, [&](int64_t slotIndex, Value e, bool mayPad) {
      if (mayPad)
        e = arith::SelectOp::create(b, loc, insideTile(b, loc, e, resTy), e, c64(0));
      result = vector::InsertOp::create(b, loc, fn(tileCoords(b, loc, e, resTy.getShape())),
                                        result, ArrayRef<int64_t>{slotIndex});
    });
    // The buffer may be reused by the next relayout.
    NVVM::Barrier0Op::create(b, loc);
    return result;
  }

  ConversionPatternRewriter &b;
  Location loc;
  RankedTensorType srcTy;
  Type elem, stored;
  int64_t bytes, inner, pitch;
  Value base;
};


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
    // Both sides need a distributed encoding (the register form of an mma
    // operand is reached only by AccToDotOperandLowering's relabelling).
    for (Type t : {op.getTile().getType(), op.getType()})
      if (!isa_and_nonnull<ThreadLayout>(cast<RankedTensorType>(t).getEncoding()))
        return rewriter.notifyMatchFailure(op, "not between distributed encodings");
    LLVM::GlobalOp global = relayoutGlobal(op);
    if (!global)
      return rewriter.notifyMatchFailure(op, "no relayout buffer");
    Location loc = op.getLoc();
    RelayoutBuffer buf(rewriter, loc, global,
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


/// An accumulator-layout tile of 16-bit elements to the register form of
/// the A operand of an mma of the same accumulator layout
/// (#tile.dot_operand<opIdx = 0, parent = that layout, kWidth = 2>): the
/// fragments of columns 16kk .. 16kk+15 are already the A registers of step
/// kk, two elements each, on wgmma and mma.sync alike, so the conversion
/// relabels the thread's vector and moves nothing.
struct AccToDotOperandLowering : OpConversionPattern<tile::ConvertLayoutOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(tile::ConvertLayoutOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    if (!tile::isRelabelling(op))
      return rewriter.notifyMatchFailure(op, "not a relabelling");
    rewriter.replaceOp(op, adaptor.getTile());
    return success();
  }
};

/// A broadcast, conversion, permute or slice that stays within warps
/// (tile::warpRelayout), with no shared memory and no barrier. Where every
/// thread holds its result's elements at the same registers in every thread
/// (row or column values of a #tile.slice broadcast back over its parent;
/// whole columns of an accumulator-layout tile; a [BN] row broadcast over
/// the rows of a blocked tile whose rows are one pass of its vectors) it is
/// a selection of the thread's registers; otherwise each result register
/// is a shfl.sync.idx from the lane the plan names, one per source register
/// it may come from, chosen by the lane's bits.
template <typename OpTy> struct WarpRelayoutLowering : OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  LogicalResult matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    std::optional<tile::WarpRelayout> plan = tile::warpRelayout(op);
    if (!plan)
      return rewriter.notifyMatchFailure(op, "some thread needs an element of another warp");
    Location loc = op.getLoc();
    Value src = adaptor.getTile();
    if (plan->isRegisterLocal()) {
      SmallVector<int64_t> mask(plan->reg);
      for (int64_t &m : mask)
        m = std::max<int64_t>(m, 0);
      rewriter.replaceOp(op, vector::ShuffleOp::create(rewriter, loc, src, src, mask));
      return success();
    }
    auto c32 = [&](int32_t v) { return constI32(rewriter, loc, v); };
    Value lane = arith::AndIOp::create(
        rewriter, loc, NVVM::ThreadIdXOp::create(rewriter, loc, rewriter.getI32Type()), c32(31));
    // XOR of cols[i] over the set bits i of the lane.
    auto overLaneBits = [&](ArrayRef<int32_t> cols) {
      Value x = c32(0);
      for (auto [i, col] : llvm::enumerate(cols))
        if (col) {
          Value bit = arith::AndIOp::create(
              rewriter, loc, arith::ShRUIOp::create(rewriter, loc, lane, c32(int32_t(i))), c32(1));
          x = arith::XOrIOp::create(rewriter, loc, x,
                                    arith::MulIOp::create(rewriter, loc, bit, c32(col)));
        }
      return x;
    };
    Value fromLane = overLaneBits(plan->laneCols);
    SmallVector<int32_t> choices = plan->regChoices();
    Value choice = choices.size() > 1 ? overLaneBits(plan->regCols) : Value();
    auto srcTy = cast<VectorType>(src.getType());
    auto outTy = cast<VectorType>(this->getTypeConverter()->convertType(op.getType()));
    Value result = arith::ConstantOp::create(rewriter, loc, outTy, rewriter.getZeroAttr(outTy));
    for (auto [m, reg] : llvm::enumerate(plan->reg)) {
      if (reg < 0)
        continue;
      Value from = arith::XOrIOp::create(rewriter, loc, fromLane, c32(plan->lane[m]));
      Value x;
      for (int32_t k : choices) {
        int64_t r = reg ^ k;
        if (r >= srcTy.getNumElements())
          continue;
        Value y = shuffleValue(rewriter, loc,
                               vector::ExtractOp::create(rewriter, loc, src, ArrayRef<int64_t>{r}),
                               from, NVVM::ShflKind::idx);
        x = x ? arith::SelectOp::create(
                    rewriter, loc,
                    arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq, choice, c32(k)),
                    y, x)
              : y;
      }
      result = vector::InsertOp::create(rewriter, loc, x, result, ArrayRef<int64_t>{int64_t(m)});
    }
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

/// A layout conversion through shared memory: the same coordinates.
struct ConvertLayoutLowering : RelayoutLowering<tile::ConvertLayoutOp> {
  using RelayoutLowering::RelayoutLowering;
  Value srcFlatOf(tile::ConvertLayoutOp op, OpBuilder &b, Location loc,
                  ArrayRef<Value> coords) const override {
    return tileFlat(b, loc, coords, op.getType().getShape());
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
                            b, loc, c, constI64(b, loc, o)))
                      : c);
    return tileFlat(b, loc, src, op.getTile().getType().getShape());
  }
};

/// A reduction over one axis: each thread combines, for every result
/// element it holds, the source elements along the axis, read from the
/// buffer (f16/bf16 in f32 for the built-in kinds), starting from the first
/// (so a user combiner needs no identity); argmax/argmin carry the index.
struct AxisReduceLowering : LayoutPattern<tile::ReduceOp> {
  using LayoutPattern::LayoutPattern;
  LogicalResult matchAndRewrite(tile::ReduceOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    if (!op.getAxis())
      return rewriter.notifyMatchFailure(op, "a whole-tile reduction");
    if (isa<tile::SliceEncodingAttr>(cast<RankedTensorType>(op.getType()).getEncoding()))
      return rewriter.notifyMatchFailure(op, "a reduction into an accumulator's rows");
    LLVM::GlobalOp global = relayoutGlobal(op);
    if (!global)
      return rewriter.notifyMatchFailure(op, "no relayout buffer");
    Location loc = op.getLoc();
    auto srcTy = op.getTile().getType();
    auto resTy = cast<RankedTensorType>(op.getType());
    int64_t axis = *op.getAxis();
    Type elem = registerType(srcTy.getElementType());
    bool isFloat = isa<FloatType>(elem);
    StringRef kind = op.getKind();
    bool user = kind == "fn";
    bool arg = kind == "argmax" || kind == "argmin";
    Type work = isFloat && !user ? Type(rewriter.getF32Type()) : elem;
    RelayoutBuffer buf(rewriter, loc, global, srcTy);
    buf.write(adaptor.getTile());
    Value result = buf.forEachResult(resTy, [&](ArrayRef<Value> coords) -> Value {
      auto element = [&](Value k) -> Value {
        SmallVector<Value> src(coords.begin(), coords.end());
        src.insert(src.begin() + axis, k);
        Value x = buf.read(tileFlat(rewriter, loc, src, srcTy.getShape()));
        if (work != elem)
          x = arith::ExtFOp::create(rewriter, loc, work, x);
        return x;
      };
      SmallVector<Value, 2> init{element(buf.c64(0))};
      if (arg)
        init.push_back(constI32(rewriter, loc, 0));
      auto loop = scf::ForOp::create(rewriter, loc, buf.c64(1), buf.c64(srcTy.getDimSize(axis)),
                                     buf.c64(1), init);
      {
        OpBuilder::InsertionGuard g(rewriter);
        rewriter.setInsertionPointToStart(loop.getBody());
        Value k = loop.getInductionVar();
        Value x = element(k);
        ValueRange acc = loop.getRegionIterArgs();
        SmallVector<Value, 2> next;
        if (arg) {
          Value k32 = arith::TruncIOp::create(rewriter, loc, rewriter.getI32Type(), k);
          next = combineArgExtreme(rewriter, loc, kind == "argmax", acc, ValueRange{x, k32});
        } else if (user) {
          next.push_back(inlineCombiner(rewriter, op.getCombiner(), acc[0], x));
        } else {
          next.push_back(combineReduction(rewriter, loc, kind, isFloat, acc[0], x));
        }
        scf::YieldOp::create(rewriter, loc, next);
      }
      Value r = loop.getResult(arg ? 1 : 0);
      if (!arg && work != elem)
        r = arith::TruncFOp::create(rewriter, loc, elem, r);
      return r;
    });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// A scan of a 1-D tile in the blocked layout. Group g of thread t holds
/// `vec` consecutive elements, and the groups follow each other in the
/// order (g, t): element (g * threads + t) * vec + v. So the scan needs, for
/// every (g, t), the combination of the group totals before it.
///
///   1. Each thread scans its groups' elements in registers.
///   2. With more than one group, the G group totals go through shared
///      memory so that thread t holds the totals G*t .. G*t + G - 1, which
///      follow each other: it scans them in registers.
///   3. One warp scan (shuffles up) of the thread totals.
///   4. Lane 31 leaves its warp's total in shared memory; with more than one
///      group, every thread writes the combination of the totals before
///      each of its G (within its warp) back in place. One barrier.
///   5. Every thread reads the prefix of each of its groups (with more than
///      one group) and adds the totals of the warps before the one that
///      produced it; a barrier before the buffer is reused.
///
/// That is one warp scan for the whole tile (not one per group) and two or
/// three barriers. Elements past the end come last, so they change no
/// element inside the tile. cumsum works in f32 (f16/bf16) or i32, a user
/// combiner in the element type; it has no identity, so a part that may be
/// absent (the first element's prefix) carries a flag.
struct ScanLowering : LayoutPattern<tile::ScanOp> {
  using LayoutPattern::LayoutPattern;
  LogicalResult matchAndRewrite(tile::ScanOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    if (isPipelined(layout))
      return op.emitError("a scan in a kernel with an mma loop is not supported");
    auto func = op->getParentOfType<func::FuncOp>();
    auto global = op->getParentOfType<ModuleOp>().lookupSymbol<LLVM::GlobalOp>(
        scanScratchName(func.getName()));
    if (!global)
      return rewriter.notifyMatchFailure(op, "no scan buffer");
    Location loc = op.getLoc();
    auto tileTy = op.getType();
    Type elem = registerType(tileTy.getElementType());
    bool isFloat = isa<FloatType>(elem);
    bool user = !op.getCombiner().empty();
    Type work = isFloat && !user ? Type(rewriter.getF32Type()) : elem;
    Type i32 = rewriter.getI32Type();
    auto c32 = [&](int32_t v) -> Value {
      return constI32(rewriter, loc, v);
    };
    auto cmp = [&](arith::CmpIPredicate p, Value a, Value b) -> Value {
      return arith::CmpIOp::create(rewriter, loc, p, a, b);
    };
    // f(x, y) with x the earlier part.
    auto f = [&](Value x, Value y) -> Value {
      if (user)
        return inlineCombiner(rewriter, op.getCombiner(), x, y);
      return combineReduction(rewriter, loc, "sum", isFloat, x, y);
    };
    // A part that may be absent: `has` is null when it is always present.
    // cumsum has an identity (0), so its absent parts become 0 at once.
    struct Part {
      Value v, has;
    };
    Value zero =
        user ? Value()
             : arith::ConstantOp::create(rewriter, loc, reductionIdentity(rewriter, "sum", isFloat));
    auto part = [&](Value v, Value has) -> Part {
      if (!has || user)
        return {v, has};
      return {arith::SelectOp::create(rewriter, loc, has, v, zero), Value()};
    };
    auto join = [&](Part a, Part b) -> Part { // a is the earlier part
      Value both = f(a.v, b.v);
      if (!a.has && !b.has)
        return {both, Value()};
      if (!a.has)
        return {arith::SelectOp::create(rewriter, loc, b.has, both, a.v), Value()};
      if (!b.has)
        return {arith::SelectOp::create(rewriter, loc, a.has, both, b.v), Value()};
      Value v = arith::SelectOp::create(
          rewriter, loc, a.has, arith::SelectOp::create(rewriter, loc, b.has, both, a.v), b.v);
      return {v, arith::OrIOp::create(rewriter, loc, a.has, b.has)};
    };
    auto always = [&]() -> Value {
      return arith::ConstantOp::create(rewriter, loc, rewriter.getBoolAttr(true));
    };
    auto choose = [&](Value cond, Part a, Part b) -> Part {
      Value v = arith::SelectOp::create(rewriter, loc, cond, a.v, b.v);
      if (!a.has && !b.has)
        return {v, Value()};
      return {v, arith::SelectOp::create(rewriter, loc, cond, a.has ? a.has : always(),
                                         b.has ? b.has : always())};
    };

    Value src = adaptor.getTile();
    ThreadLayout encoding = encodingOf(tileTy);
    const int64_t G = encoding.getGroups(tileTy.getShape());
    const unsigned vec = encoding.getGroupWidth();
    const unsigned threads = encoding.getThreadsPerBlock();
    const unsigned warps = threads / 32;
    const int32_t words = int32_t(wordCount(work));
    SmallVector<Value> x;
    for (int64_t i = 0; i < G * vec; ++i) {
      Value e = vector::ExtractOp::create(rewriter, loc, src, ArrayRef<int64_t>{i});
      if (work != elem)
        e = arith::ExtFOp::create(rewriter, loc, work, e);
      x.push_back(e);
    }
    Value tid = NVVM::ThreadIdXOp::create(rewriter, loc, i32);
    Value lane = arith::RemUIOp::create(rewriter, loc, tid, c32(32));
    Value warp = arith::DivUIOp::create(rewriter, loc, tid, c32(32));
    auto ptr3 = LLVM::LLVMPointerType::get(rewriter.getContext(), 3);
    Value base = LLVM::AddressOfOp::create(rewriter, loc, ptr3, global.getSymName());
    // Shared memory in 32-bit words: the G * threads totals (value i at
    // words i * words ..), then one total per warp.
    auto wordPtr = [&](Value wordIndex) -> Value {
      return LLVM::GEPOp::create(rewriter, loc, ptr3, i32, base, ValueRange{wordIndex});
    };
    // Values `index` .. as runs of 4 (or 2, or 1) words: a run is aligned
    // when the run length is (each value starts at index * words).
    auto forEachRun = [&](Value index, size_t n, auto fn) {
      Value at = arith::MulIOp::create(rewriter, loc, index, c32(words));
      unsigned width = n % 4 == 0 ? 4 : n % 2 == 0 ? 2 : 1;
      Type ty = width == 1 ? i32 : Type(VectorType::get({int64_t(width)}, i32));
      for (size_t k = 0; k < n; k += width)
        fn(k, width, ty, wordPtr(arith::AddIOp::create(rewriter, loc, at, c32(int32_t(k)))));
    };
    auto storeValues = [&](Value index, ArrayRef<Value> values) {
      SmallVector<Value> ws;
      for (Value v : values)
        llvm::append_range(ws, toWords(rewriter, loc, v));
      forEachRun(index, ws.size(), [&](size_t k, unsigned width, Type ty, Value p) {
        Value v = ws[k];
        if (width > 1) {
          v = LLVM::PoisonOp::create(rewriter, loc, ty);
          for (unsigned j = 0; j < width; ++j)
            v = vector::InsertOp::create(rewriter, loc, ws[k + j], v, ArrayRef<int64_t>{j});
        }
        LLVM::StoreOp::create(rewriter, loc, v, p, 4 * width);
      });
    };
    auto loadValues = [&](Value index, int64_t count) -> SmallVector<Value> {
      SmallVector<Value> ws;
      forEachRun(index, size_t(count * words), [&](size_t, unsigned width, Type ty, Value p) {
        Value v = LLVM::LoadOp::create(rewriter, loc, ty, p, 4 * width);
        if (width == 1)
          return ws.push_back(v);
        for (unsigned j = 0; j < width; ++j)
          ws.push_back(vector::ExtractOp::create(rewriter, loc, v, ArrayRef<int64_t>{j}));
      });
      SmallVector<Value> out;
      for (int64_t i = 0; i < count; ++i)
        out.push_back(fromWords(rewriter, loc, work,
                                ArrayRef<Value>(ws).slice(size_t(i * words), size_t(words))));
      return out;
    };

    // 1. Within the thread.
    SmallVector<Value> total(G);
    for (int64_t g = 0; g < G; ++g) {
      for (unsigned v = 1; v < vec; ++v)
        x[g * vec + v] = f(x[g * vec + v - 1], x[g * vec + v]);
      total[g] = x[g * vec + vec - 1];
    }
    // 2. Thread t scans the totals G*t .. G*t + G - 1.
    SmallVector<Value> run = total; // G = 1: its own total
    if (G > 1) {
      for (int64_t g = 0; g < G; ++g)
        storeValues(arith::AddIOp::create(rewriter, loc, c32(int32_t(g * threads)), tid),
                    total[g]);
      NVVM::Barrier0Op::create(rewriter, loc);
      Value mine = arith::MulIOp::create(rewriter, loc, tid, c32(int32_t(G)));
      run = loadValues(mine, G);
      for (int64_t j = 1; j < G; ++j)
        run[j] = f(run[j - 1], run[j]);
    }
    // 3. Across the warp: an inclusive scan of the thread totals.
    Value incl = run[G - 1];
    for (int32_t off = 1; off < 32; off *= 2) {
      Value other = shuffleValue(rewriter, loc, incl, c32(off), NVVM::ShflKind::up);
      Value has = cmp(arith::CmpIPredicate::uge, lane, c32(off));
      incl = arith::SelectOp::create(rewriter, loc, has, f(other, incl), incl);
    }
    // The earlier lanes' combination (absent in lane 0).
    Part lanes = part(shuffleValue(rewriter, loc, incl, c32(1), NVVM::ShflKind::up),
                      cmp(arith::CmpIPredicate::ne, lane, c32(0)));
    // 4. The warps' totals, and each value's prefix within its warp.
    Value warpBase = c32(G > 1 ? int32_t(G * threads) : 0);
    if (warps > 1) {
      Value isLane31 = cmp(arith::CmpIPredicate::eq, lane, c32(31));
      auto ifOp = scf::IfOp::create(rewriter, loc, TypeRange{}, isLane31, false);
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPointToStart(&ifOp.getThenRegion().front());
      storeValues(arith::AddIOp::create(rewriter, loc, warpBase, warp), incl);
    }
    SmallVector<Part> prefix(G); // of each of this thread's groups, in its warp
    SmallVector<Value> producer(G); // the warp that computed it
    if (G > 1) {
      // Value G*t + j: the earlier lanes' combination (+) this thread's
      // totals before j. An absent one (lane 0, j = 0) is stored as it is
      // (0 for cumsum); its reader knows.
      SmallVector<Value> out{lanes.v};
      for (int64_t j = 1; j < G; ++j)
        out.push_back(join(lanes, Part{run[j - 1], Value()}).v);
      storeValues(arith::MulIOp::create(rewriter, loc, tid, c32(int32_t(G))), out);
    }
    if (G > 1 || warps > 1)
      NVVM::Barrier0Op::create(rewriter, loc);
    if (G > 1) {
      for (int64_t g = 0; g < G; ++g) {
        Value i = arith::AddIOp::create(rewriter, loc, c32(int32_t(g * threads)), tid);
        Value v = loadValues(i, 1)[0];
        // Value i came from thread i / G: absent for the first of a warp.
        Value owner = arith::DivUIOp::create(rewriter, loc, i, c32(int32_t(G)));
        producer[g] = arith::DivUIOp::create(rewriter, loc, owner, c32(32));
        Value first = cmp(arith::CmpIPredicate::eq,
                          arith::RemUIOp::create(rewriter, loc, i, c32(int32_t(32 * G))), c32(0));
        prefix[g] = user ? Part{v, arith::XOrIOp::create(rewriter, loc, first, always())}
                         : Part{v, Value()};
      }
    } else {
      prefix[0] = lanes;
      producer[0] = warp;
    }
    // 5. Add the totals of the warps before the producer.
    if (warps > 1) {
      SmallVector<Value> w = loadValues(warpBase, warps);
      SmallVector<Part> before(warps); // before[k]: warps 0 .. k-1
      before[0] = part(w[0], arith::ConstantOp::create(rewriter, loc, rewriter.getBoolAttr(false)));
      for (unsigned k = 1; k < warps; ++k)
        before[k] = k == 1 ? Part{w[0], Value()} : join(before[k - 1], Part{w[k - 1], Value()});
      for (int64_t g = 0; g < G; ++g) {
        Part b = before[0];
        for (unsigned k = 1; k < warps; ++k)
          b = choose(cmp(arith::CmpIPredicate::eq, producer[g], c32(int32_t(k))), before[k], b);
        prefix[g] = join(b, prefix[g]);
      }
    }
    // Before the next scan writes the buffer (tile-elide-barriers drops this
    // one when none can come before another barrier).
    if (G > 1 || warps > 1)
      NVVM::Barrier0Op::create(rewriter, loc);
    // 6. result = prefix (+) element.
    VectorType outTy = perThreadType(tileTy);
    Value result = arith::ConstantOp::create(rewriter, loc, outTy, rewriter.getZeroAttr(outTy));
    for (int64_t g = 0; g < G; ++g) {
      for (unsigned v = 0; v < vec; ++v) {
        Value r = join(prefix[g], Part{x[g * vec + v], Value()}).v;
        if (work != elem)
          r = arith::TruncFOp::create(rewriter, loc, elem, r);
        result = vector::InsertOp::create(rewriter, loc, r, result,
                                          ArrayRef<int64_t>{int64_t(g * vec + v)});
      }
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// mma of f32 tiles on the CUDA cores (blocked layout): both operands go
/// to the buffer (a, then b at a 16-byte aligned offset), and each thread
/// accumulates the elements of the product it holds with one fma per k,
/// reading a[m, k] and b[k, n] from shared memory. A barrier after the loop
/// lets the next mma overwrite the operands.
struct MmaBlockedLowering : LayoutPattern<tile::MmaOp> {
  using LayoutPattern::LayoutPattern;
  LogicalResult matchAndRewrite(tile::MmaOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    if (isPipelined(layout))
      return rewriter.notifyMatchFailure(op, "lowered by the mma pipeline");
    auto aTy = op.getA().getType(), bTy = op.getB().getType();
    auto accTy = cast<RankedTensorType>(op.getType());
    if (!aTy.getElementType().isF32())
      return op.emitError("this mma needs the sm_90a tensor-core pipeline (f16/bf16 operands)");
    LLVM::GlobalOp global = relayoutGlobal(op);
    if (!global)
      return rewriter.notifyMatchFailure(op, "no relayout buffer");
    Location loc = op.getLoc();
    int64_t K = aTy.getDimSize(1);
    RelayoutBuffer bufA(rewriter, loc, global, aTy);
    RelayoutBuffer bufB(rewriter, loc, global, bTy, mmaOperandOffset(aTy));
    bufA.write(adaptor.getA());
    bufB.write(adaptor.getB());
    // This thread's (m, n) per slot (padding slots read row 0).
    SmallVector<Value> rows, cols;
    forEachThreadElement(rewriter, loc, accTy, [&](int64_t, Value e, bool mayPad) {
      if (mayPad)
        e = arith::SelectOp::create(rewriter, loc, insideTile(rewriter, loc, e, accTy), e,
                                    bufA.c64(0));
      SmallVector<Value> mn = tileCoords(rewriter, loc, e, accTy.getShape());
      rows.push_back(mn[0]);
      cols.push_back(mn[1]);
    });
    auto loop = scf::ForOp::create(rewriter, loc, bufA.c64(0), bufA.c64(K), bufA.c64(1),
                                   ValueRange{adaptor.getAcc()});
    {
      OpBuilder::InsertionGuard g(rewriter);
      rewriter.setInsertionPointToStart(loop.getBody());
      Value k = loop.getInductionVar();
      Value acc = loop.getRegionIterArgs()[0];
      for (size_t slot = 0; slot < rows.size(); ++slot) {
        Value a = bufA.read(tileFlat(rewriter, loc, {rows[slot], k}, aTy.getShape()));
        Value bv = bufB.read(tileFlat(rewriter, loc, {k, cols[slot]}, bTy.getShape()));
        Value c = vector::ExtractOp::create(rewriter, loc, acc, ArrayRef<int64_t>{int64_t(slot)});
        acc = vector::InsertOp::create(rewriter, loc, math::FmaOp::create(rewriter, loc, a, bv, c),
                                       acc, ArrayRef<int64_t>{int64_t(slot)});
      }
      scf::YieldOp::create(rewriter, loc, acc);
    }
    NVVM::Barrier0Op::create(rewriter, loc);
    rewriter.replaceOp(op, loop.getResult(0));
    return success();
  }
};

/// take: every thread writes its elements of the source to the buffer and
/// reads the element at each index it holds (0 outside the source). Takes
/// from one tile in a row (see markSharedTakes) write it once.
struct TakeLowering : LayoutPattern<tile::TakeOp> {
  using LayoutPattern::LayoutPattern;
  LogicalResult matchAndRewrite(tile::TakeOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    LLVM::GlobalOp global = relayoutGlobal(op);
    if (!global)
      return rewriter.notifyMatchFailure(op, "no relayout buffer");
    Location loc = op.getLoc();
    auto srcTy = op.getTile().getType();
    auto resTy = cast<RankedTensorType>(op.getType());
    Type elem = registerType(srcTy.getElementType());
    RelayoutBuffer buf(rewriter, loc, global, srcTy);
    if (!op->hasAttr(kTakeReuseAttrName))
      buf.write(adaptor.getTile());
    Value index = adaptor.getIndex();
    VectorType outTy = perThreadType(resTy);
    Value result = arith::ConstantOp::create(rewriter, loc, outTy, rewriter.getZeroAttr(outTy));
    Type i64 = rewriter.getI64Type();
    // A 32-bit index (signed or unsigned: either way a value outside the
    // tile is at least 2^31 as u32) is checked in 32 bits, then widened.
    bool narrow = op.getIndex().getType().getElementType().getIntOrFloatBitWidth() == 32;
    forEachThreadElement(rewriter, loc, resTy, [&](int64_t slotIndex, Value, bool) {
      Value i = vector::ExtractOp::create(rewriter, loc, index, ArrayRef<int64_t>{slotIndex});
      Value inside;
      if (narrow) {
        inside = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::ult, i,
                                       constI32(rewriter, loc, srcTy.getNumElements()));
        i = arith::ExtUIOp::create(rewriter, loc, i64, i);
      } else {
        if (i.getType().getIntOrFloatBitWidth() < 64)
          i = arith::ExtSIOp::create(rewriter, loc, i64, i);
        inside = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::ult, i,
                                       buf.c64(srcTy.getNumElements()));
      }
      auto ifOp = scf::IfOp::create(rewriter, loc, TypeRange{elem}, inside, true, true);
      {
        OpBuilder::InsertionGuard g(rewriter);
        rewriter.setInsertionPointToStart(&ifOp.getThenRegion().front());
        scf::YieldOp::create(rewriter, loc, buf.read(i));
        rewriter.setInsertionPointToStart(&ifOp.getElseRegion().front());
        scf::YieldOp::create(rewriter, loc,
                             Value(arith::ConstantOp::create(rewriter, loc,
                                                             rewriter.getZeroAttr(elem))));
      }
      result = vector::InsertOp::create(rewriter, loc, ifOp.getResult(0), result,
                                        ArrayRef<int64_t>{slotIndex});
    });
    // The buffer may be reused by the next relayout.
    if (!op->hasAttr(kTakeKeepAttrName))
      NVVM::Barrier0Op::create(rewriter, loc);
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void tilec::populateRelayoutToNVVMPatterns(const TypeConverter &converter,
                                           ThreadLayout layout,
                                           RewritePatternSet &patterns) {
  patterns.add<AccToDotOperandLowering>(converter, patterns.getContext(), /*benefit=*/2);
  patterns.add<WarpRelayoutLowering<tile::SliceOp>, WarpRelayoutLowering<tile::BroadcastOp>,
               WarpRelayoutLowering<tile::PermuteOp>,
               WarpRelayoutLowering<tile::ConvertLayoutOp>>(converter, patterns.getContext(),
                                                            /*benefit=*/2);
  patterns.add<BroadcastLowering, ConvertLayoutLowering, PermuteLowering, SliceLowering,
               AxisReduceLowering,
               ScanLowering, TakeLowering, MmaBlockedLowering>(
      converter, patterns.getContext(), layout);
}
