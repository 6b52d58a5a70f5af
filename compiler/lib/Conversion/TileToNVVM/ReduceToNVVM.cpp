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

#include "MmaCommon.h"
#include "PatternsNVVM.h"

#include "tilec/Dialect/Tile/IR/TileDialect.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
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

Value tilec::inlineCombiner(OpBuilder &b, Region &combiner, Value x, Value y) {
  Block &block = combiner.front();
  IRMapping map;
  map.map(block.getArgument(0), x);
  map.map(block.getArgument(1), y);
  for (Operation &op : block.without_terminator())
    b.clone(op, map);
  return map.lookup(cast<tile::YieldOp>(block.getTerminator()).getValue());
}

SmallVector<Value, 2> tilec::combineArgExtreme(OpBuilder &b, Location loc, bool maxLike,
                                                ValueRange x, ValueRange y) {
  // y wins when it is strictly more extreme, or equal with a smaller index;
  // a NaN counts as the most extreme value.
  Value earlier = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, y[1], x[1]);
  Value takeY;
  if (isa<FloatType>(x[0].getType())) {
    auto cmpf = [&](arith::CmpFPredicate p, Value u, Value v) -> Value {
      return arith::CmpFOp::create(b, loc, p, u, v);
    };
    Value xNaN = cmpf(arith::CmpFPredicate::UNO, x[0], x[0]);
    Value yNaN = cmpf(arith::CmpFPredicate::UNO, y[0], y[0]);
    Value strict =
        cmpf(maxLike ? arith::CmpFPredicate::OGT : arith::CmpFPredicate::OLT, y[0], x[0]);
    Value same = arith::OrIOp::create(b, loc, cmpf(arith::CmpFPredicate::OEQ, y[0], x[0]),
                                      arith::AndIOp::create(b, loc, xNaN, yNaN));
    Value one = arith::ConstantOp::create(b, loc, b.getBoolAttr(true));
    Value xNum = arith::XOrIOp::create(b, loc, xNaN, one);
    takeY = arith::OrIOp::create(
        b, loc, arith::AndIOp::create(b, loc, xNum, arith::OrIOp::create(b, loc, yNaN, strict)),
        arith::AndIOp::create(b, loc, same, earlier));
  } else {
    Value strict = arith::CmpIOp::create(
        b, loc, maxLike ? arith::CmpIPredicate::sgt : arith::CmpIPredicate::slt, y[0], x[0]);
    Value same = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, y[0], x[0]);
    takeY = arith::OrIOp::create(b, loc, strict, arith::AndIOp::create(b, loc, same, earlier));
  }
  return {arith::SelectOp::create(b, loc, takeY, y[0], x[0]),
          arith::SelectOp::create(b, loc, takeY, y[1], x[1])};
}

unsigned tilec::wordCount(Type t) { return t.getIntOrFloatBitWidth() > 32 ? 2 : 1; }

SmallVector<Value, 2> tilec::toWords(OpBuilder &b, Location loc, Value v) {
  Type t = v.getType();
  Type i32 = b.getI32Type();
  unsigned bits = t.getIntOrFloatBitWidth();
  if (isa<FloatType>(t))
    v = arith::BitcastOp::create(b, loc, b.getIntegerType(bits), v);
  if (bits == 32)
    return {v};
  if (bits < 32)
    return {arith::ExtUIOp::create(b, loc, i32, v)};
  Value hi = arith::ShRUIOp::create(
      b, loc, v, arith::ConstantOp::create(b, loc, b.getIntegerAttr(v.getType(), 32)));
  return {arith::TruncIOp::create(b, loc, i32, v), arith::TruncIOp::create(b, loc, i32, hi)};
}

Value tilec::fromWords(OpBuilder &b, Location loc, Type t, ValueRange words) {
  unsigned bits = t.getIntOrFloatBitWidth();
  Type it = b.getIntegerType(bits);
  Value v = words[0];
  if (bits < 32)
    v = arith::TruncIOp::create(b, loc, it, v);
  if (bits > 32) {
    Value lo = arith::ExtUIOp::create(b, loc, it, words[0]);
    Value hi = arith::ExtUIOp::create(b, loc, it, words[1]);
    hi = arith::ShLIOp::create(b, loc, hi,
                               arith::ConstantOp::create(b, loc, b.getIntegerAttr(it, 32)));
    v = arith::OrIOp::create(b, loc, lo, hi);
  }
  if (isa<FloatType>(t))
    v = arith::BitcastOp::create(b, loc, t, v);
  return v;
}

Value tilec::shuffleValue(OpBuilder &b, Location loc, Value v, Value offset,
                          NVVM::ShflKind kind) {
  Type i32 = b.getI32Type();
  auto c32 = [&](int32_t x) -> Value {
    return constI32(b, loc, x);
  };
  auto kindAttr = NVVM::ShflKindAttr::get(b.getContext(), kind);
  // The clamp operand: 0x1f for bfly/down/idx, 0 for up (lane 0 is the end).
  Value clamp = c32(kind == NVVM::ShflKind::up ? 0 : 0x1f);
  SmallVector<Value> words;
  for (Value w : toWords(b, loc, v))
    words.push_back(NVVM::ShflOp::create(b, loc, i32, c32(-1), w, offset, clamp, kindAttr,
                                         UnitAttr()));
  return fromWords(b, loc, v.getType(), words);
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
    StringRef kind = op.getKind();
    bool user = kind == "fn";
    // f16/bf16 are reduced in f32 by the built-in kinds; a user combiner
    // works in the element type.
    Type work = isFloat && !user ? Type(rewriter.getF32Type()) : elem;
    bool arg = kind == "argmax" || kind == "argmin";
    bool maxLike = kind == "max" || kind == "argmax";
    Type i32 = rewriter.getI32Type();
    Type i1 = rewriter.getI1Type();
    auto c32 = [&](int32_t v) -> Value {
      return constI32(rewriter, loc, v);
    };
    int64_t numel = tileTy.getNumElements();
    bool padded = encodingOf(tileTy).mayPad(tileTy.getShape());
    // A user combiner has no identity: padding slots carry a validity flag
    // instead.
    bool withValid = user && padded;

    // The running state: {value}, {value, flat index} for argmax/argmin,
    // or {value, valid} for a user combiner over a padded tile.
    using State = SmallVector<Value, 2>;
    auto combine = [&](const State &a, const State &b) -> State {
      if (arg)
        return combineArgExtreme(rewriter, loc, maxLike, a, b);
      if (!user)
        return {combineReduction(rewriter, loc, kind, isFloat, a[0], b[0])};
      Value f = inlineCombiner(rewriter, op.getCombiner(), a[0], b[0]);
      if (!withValid)
        return {f};
      Value both = arith::AndIOp::create(rewriter, loc, a[1], b[1]);
      Value one = arith::SelectOp::create(rewriter, loc, a[1], a[0], b[0]);
      return {arith::SelectOp::create(rewriter, loc, both, f, one),
              arith::OrIOp::create(rewriter, loc, a[1], b[1])};
    };

    // 1. This thread's elements; slots past the tile end hold the identity
    //    (argmax/argmin: an index that never wins a tie; a user combiner: an
    //    invalid flag).
    Value v = adaptor.getTile();
    auto vecTy = cast<VectorType>(v.getType());
    auto workVecTy = VectorType::get(vecTy.getShape(), work);
    auto idxTy = VectorType::get(vecTy.getShape(), i32);
    if (work != elem)
      v = arith::ExtFOp::create(rewriter, loc, workVecTy, v);
    Value idx, valid;
    if (arg || padded)
      idx = threadFlatIndices(rewriter, loc, tileTy);
    if (padded) {
      Value limit = vector::BroadcastOp::create(rewriter, loc, idxTy, c32(int32_t(numel)));
      valid = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::slt, idx, limit);
      if (!user) {
        TypedAttr identity = reductionIdentity(rewriter, kind, isFloat);
        Value ident = arith::ConstantOp::create(rewriter, loc, workVecTy,
                                                DenseElementsAttr::get(workVecTy, identity));
        v = arith::SelectOp::create(rewriter, loc, valid, v, ident);
      }
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
      if (withValid)
        st.push_back(vector::ExtractOp::create(rewriter, loc, valid, ArrayRef<int64_t>{i}));
      return st;
    };
    State acc = slotState(0);
    for (int64_t i = 1; i < vecTy.getNumElements(); ++i)
      acc = combine(acc, slotState(i));
    SmallVector<Type, 2> types{work};
    if (arg)
      types.push_back(i32);
    if (withValid)
      types.push_back(i1);

    // 2. Across the lanes of a warp.
    for (int32_t offset = 16; offset >= 1; offset /= 2) {
      State other;
      for (Value x : acc)
        other.push_back(shuffleValue(rewriter, loc, x, c32(offset), NVVM::ShflKind::bfly));
      acc = combine(acc, other);
    }

    // 3. Across the warps, through shared memory: 32-bit word j of the state
    //    of warp w lives in slot j * 32 + w.
    unsigned warps = layout.getThreadsPerBlock() / 32;
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
      SmallVector<Value> words;
      for (Value x : acc)
        llvm::append_range(words, toWords(rewriter, loc, x));
      assert(words.size() * 32 <= kReduceSlotsPerOp && "reduction state too large");
      auto ifOp = scf::IfOp::create(rewriter, loc, TypeRange{}, isLane0, false);
      {
        OpBuilder::InsertionGuard g(rewriter);
        rewriter.setInsertionPointToStart(&ifOp.getThenRegion().front());
        for (auto [j, w] : llvm::enumerate(words)) {
          Value at = arith::AddIOp::create(rewriter, loc, warp, c32(int32_t(j * 32)));
          Value slot = LLVM::GEPOp::create(rewriter, loc, ptr3, i32, base, ValueRange{at});
          LLVM::StoreOp::create(rewriter, loc, w, slot, 4);
        }
      }
      NVVM::Barrier0Op::create(rewriter, loc);
      State total;
      for (unsigned w = 0; w < warps; ++w) {
        State x;
        size_t j = 0;
        for (Type t : types) {
          size_t n = wordCount(t);
          SmallVector<Value, 2> ws;
          for (size_t k = 0; k < n; ++k, ++j) {
            Value p = LLVM::GEPOp::create(rewriter, loc, ptr3, i32, base,
                                          ArrayRef<LLVM::GEPArg>{int32_t(j * 32 + w)});
            ws.push_back(LLVM::LoadOp::create(rewriter, loc, i32, p, 4));
          }
          x.push_back(fromWords(rewriter, loc, t, ws));
        }
        total = w == 0 ? x : combine(total, x);
      }
      if (op->hasAttr(kReduceBarrierAttrName))
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

/// The slice encoding of a reduction of an mma accumulator over dimension
/// `dim`'s other one (1: into its rows, 0: into its columns), or null.
static tile::SliceEncodingAttr accumulatorSlice(tile::ReduceOp op, unsigned dim) {
  auto resTy = dyn_cast<RankedTensorType>(op.getType());
  auto slice = resTy ? dyn_cast_or_null<tile::SliceEncodingAttr>(resTy.getEncoding())
                     : tile::SliceEncodingAttr();
  return slice && slice.getDim() == dim && isa<tile::MmaEncodingAttr>(slice.getParent())
             ? slice
             : tile::SliceEncodingAttr();
}

/// The row slice of the blocked layout a reduction over axis 1 leaves its
/// rows in (tile-layout's choice), or null.
static tile::SliceEncodingAttr blockedRowSlice(tile::ReduceOp op) {
  auto resTy = dyn_cast<RankedTensorType>(op.getType());
  auto slice = resTy ? dyn_cast_or_null<tile::SliceEncodingAttr>(resTy.getEncoding())
                     : tile::SliceEncodingAttr();
  return slice && isa<tile::BlockedEncodingAttr>(slice.getParent()) ? slice
                                                                    : tile::SliceEncodingAttr();
}

/// The state of a row reduction: a value, and its column for argmax /
/// argmin.
static unsigned rowStateWords(tile::ReduceOp op);

} // namespace

int64_t tilec::rowReduceScratchBytes(tile::ReduceOp op) {
  tile::SliceEncodingAttr slice = blockedRowSlice(op);
  if (!slice || slice.getRowLanes() <= 32)
    return 0;
  auto resTy = cast<RankedTensorType>(op.getType());
  int64_t groups = slice.getGroups(resTy.getShape());
  return 4 * int64_t(rowStateWords(op)) * groups * (slice.getThreadsPerBlock() / 32);
}

namespace {

/// How a reduction of an accumulator combines two values: in `work` (f32
/// for f16 / bf16 elements and every float kind but a user combiner's,
/// else the element type), widened from and narrowed back to `elem`.
struct AccumulatorCombine {
  AccumulatorCombine(OpBuilder &b, tile::ReduceOp op)
      : b(b), op(op), elem(op.getTile().getType().getElementType()),
        isFloat(isa<FloatType>(elem)), user(op.getKind() == "fn"), work(workType(op)) {}
  static Type workType(tile::ReduceOp op) {
    Type elem = op.getTile().getType().getElementType();
    return isa<FloatType>(elem) && op.getKind() != "fn" ? Float32Type::get(op.getContext())
                                                        : elem;
  }
  Value operator()(Value x, Value y) const {
    return user ? inlineCombiner(b, op.getCombiner(), x, y)
                : combineReduction(b, op.getLoc(), op.getKind(), isFloat, x, y);
  }
  Value widen(Value v) const {
    return work == elem ? v : Value(arith::ExtFOp::create(b, op.getLoc(), work, v));
  }
  Value narrow(Value v) const {
    return work == elem ? v : Value(arith::TruncFOp::create(b, op.getLoc(), elem, v));
  }
  /// `acc` (null: nothing yet) combined with register `slot` of `vec`.
  Value accumulate(Value acc, Value vec, int64_t slot) const {
    Value x = widen(vector::ExtractOp::create(b, op.getLoc(), vec, ArrayRef<int64_t>{slot}));
    return acc ? (*this)(acc, x) : x;
  }
  OpBuilder &b;
  mutable tile::ReduceOp op;
  Type elem;
  bool isFloat, user;
  Type work;
};

static unsigned rowStateWords(tile::ReduceOp op) {
  bool arg = op.getKind() == "argmax" || op.getKind() == "argmin";
  return wordCount(AccumulatorCombine::workType(op)) + (arg ? 1 : 0);
}

/// A reduction over the columns of an mma accumulator (axis = 1) into its
/// row slice, in registers: in the wgmma / mma.sync fragments a thread holds,
/// for each 64-row block mb and half h, 2 columns of each 8-column chunk j
/// of one row, and the 4 lanes of a quad hold the rest of the row. Each
/// thread combines its 2 * chunks values of the row, then two butterfly
/// shuffles (lane ^ 1, lane ^ 2) combine the quad; every lane of the quad
/// ends with the row's value (#tile.slice holds it in all four). argmax and
/// argmin carry each value's column (the first of equal values wins).
struct AccRowReduceLowering : OpConversionPattern<tile::ReduceOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(tile::ReduceOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    if (!accumulatorSlice(op, 1))
      return rewriter.notifyMatchFailure(op, "not a reduction into an accumulator's rows");
    Location loc = op.getLoc();
    auto resTy = cast<RankedTensorType>(op.getType());
    RankedTensorType srcTy = op.getTile().getType();
    AccumulatorCombine combine(rewriter, op);
    int64_t chunks = srcTy.getShape().back() / 8;
    ThreadLayout rows = encodingOf(resTy);
    VectorType outTy = perThreadType(resTy);
    Value result = arith::ConstantOp::create(rewriter, loc, outTy, rewriter.getZeroAttr(outTy));
    Value src = adaptor.getTile();
    // The state of a row: its value, and for argmax / argmin the value's
    // column (group j's columns are 8j + 2 (lane % 4) + v).
    StringRef kind = op.getKind();
    bool arg = kind == "argmax" || kind == "argmin";
    auto c32 = [&](int32_t v) { return constI32(rewriter, loc, v); };
    Value quadColumn;
    if (arg)
      quadColumn = arith::ShLIOp::create(
          rewriter, loc,
          arith::AndIOp::create(
              rewriter, loc, NVVM::ThreadIdXOp::create(rewriter, loc, rewriter.getI32Type()),
              c32(3)),
          c32(1));
    auto combineStates = [&](ArrayRef<Value> x, ArrayRef<Value> y) -> SmallVector<Value, 2> {
      if (arg)
        return combineArgExtreme(rewriter, loc, kind == "argmax", x, y);
      return {combine(x[0], y[0])};
    };
    for (int64_t r = 0; r < rows.getGroups(resTy.getShape()); ++r) {
      int64_t mb = r / 2, h = r % 2;
      SmallVector<Value, 2> acc;
      for (int64_t j = 0; j < chunks; ++j)
        for (int64_t v = 0; v < 2; ++v) {
          SmallVector<Value, 2> x{combine.accumulate(
              Value(), src, tile::MmaEncodingAttr::fragmentGroup(mb, j, h, chunks) * 2 + v)};
          if (arg)
            x.push_back(arith::AddIOp::create(rewriter, loc, quadColumn, c32(int32_t(8 * j + v))));
          acc = acc.empty() ? x : combineStates(acc, x);
        }
      for (int32_t offset : {1, 2}) {
        SmallVector<Value, 2> other;
        for (Value x : acc)
          other.push_back(shuffleValue(rewriter, loc, x, c32(offset), NVVM::ShflKind::bfly));
        acc = combineStates(acc, other);
      }
      Value row = arg ? acc[1] : combine.narrow(acc[0]);
      result = vector::InsertOp::create(rewriter, loc, row, result, ArrayRef<int64_t>{r});
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};


/// A reduction over the rows' elements (axis = 1) of an [R, N] tile in the
/// blocked layout into the rows' slice (#tile.slice of the blocked layout,
/// see TileAttrs.td): a row is L = N / vec consecutive vectors, so it lies
/// in L consecutive threads (L a power of two, chosen so by tile-layout),
/// or, when L is more than the block's threads, in L / threads consecutive
/// groups of every thread. For each row group of the result, each thread
/// combines its elements of the row (its `repeat` parent groups of `vec`),
/// then butterfly shuffles over min(L, 32) lanes combine the warp's part;
/// a row wider than a warp then goes through shared memory once: lane 0 of
/// each warp writes the warp's value of every row group (the kernel's
/// relayout buffer), and after a barrier every thread combines the values
/// of the warps that hold its rows, in warp order, and a second barrier
/// lets the buffer be reused. Every thread that holds a row ends with its
/// value, so broadcasting it back over the row moves nothing. f16 / bf16
/// are combined in f32 by the built-in kinds; argmax / argmin carry the
/// column (the smaller one on ties, as the whole-tile form).
struct BlockedRowReduceLowering : LayoutPattern<tile::ReduceOp> {
  using LayoutPattern::LayoutPattern;
  LogicalResult matchAndRewrite(tile::ReduceOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    tile::SliceEncodingAttr slice = blockedRowSlice(op);
    if (!slice)
      return rewriter.notifyMatchFailure(op, "not a reduction into a blocked tile's rows");
    Location loc = op.getLoc();
    auto resTy = cast<RankedTensorType>(op.getType());
    auto blocked = cast<tile::BlockedEncodingAttr>(slice.getParent());
    int64_t vec = blocked.getVec(), threads = blocked.getThreadsPerBlock();
    int64_t lanes = slice.getRowLanes(), repeat = slice.getRowRepeat(), n = slice.getSize();
    int64_t groups = slice.getGroups(resTy.getShape());
    StringRef kind = op.getKind();
    bool arg = kind == "argmax" || kind == "argmin";
    AccumulatorCombine combine(rewriter, op);
    Type i32 = rewriter.getI32Type();
    auto c32 = [&](int64_t v) { return constI32(rewriter, loc, int32_t(v)); };
    using State = SmallVector<Value, 2>;
    auto merge = [&](const State &a, const State &b) -> State {
      if (arg)
        return combineArgExtreme(rewriter, loc, kind == "argmax", a, b);
      return {combine(a[0], b[0])};
    };
    Value src = adaptor.getTile();
    Value tid = NVVM::ThreadIdXOp::create(rewriter, loc, i32);
    // The column of slot v of parent group g: ((g * threads + tid) * vec +
    // v) mod N, N being a power of two.
    Value tidCol;
    if (arg)
      tidCol = arith::MulIOp::create(rewriter, loc, tid, c32(vec));
    SmallVector<State> rows;
    for (int64_t s = 0; s < groups; ++s) {
      State acc;
      for (int64_t g = s * repeat; g < (s + 1) * repeat; ++g)
        for (int64_t v = 0; v < vec; ++v) {
          State x{combine.widen(vector::ExtractOp::create(rewriter, loc, src,
                                                          ArrayRef<int64_t>{g * vec + v}))};
          if (arg)
            x.push_back(arith::AndIOp::create(
                rewriter, loc, arith::AddIOp::create(rewriter, loc, tidCol, c32(g * threads * vec + v)),
                c32(n - 1)));
          acc = acc.empty() ? x : merge(acc, x);
        }
      for (int64_t offset = std::min<int64_t>(lanes, 32) / 2; offset >= 1; offset /= 2) {
        State other;
        for (Value x : acc)
          other.push_back(shuffleValue(rewriter, loc, x, c32(offset), NVVM::ShflKind::bfly));
        acc = merge(acc, other);
      }
      rows.push_back(acc);
    }
    if (lanes > 32) {
      // Word j of the value of row group s from warp w: slot
      // (s * warps + w) * words + j.
      LLVM::GlobalOp global = relayoutGlobal(op);
      if (!global)
        return rewriter.notifyMatchFailure(op, "no relayout buffer");
      auto ptr3 = LLVM::LLVMPointerType::get(rewriter.getContext(), 3);
      Value base = LLVM::AddressOfOp::create(rewriter, loc, ptr3, global.getSymName());
      int64_t warps = threads / 32, words = rowStateWords(op), rowWarps = lanes / 32;
      Value warp = arith::DivUIOp::create(rewriter, loc, tid, c32(32));
      Value lane = arith::RemUIOp::create(rewriter, loc, tid, c32(32));
      auto slotOf = [&](int64_t s, Value w, int64_t j) -> Value {
        Value at = arith::AddIOp::create(
            rewriter, loc, arith::MulIOp::create(rewriter, loc, w, c32(words)),
            c32((s * warps) * words + j));
        return LLVM::GEPOp::create(rewriter, loc, ptr3, i32, base, ValueRange{at});
      };
      Value isLane0 = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq, lane, c32(0));
      ifThen(rewriter, loc, isLane0, [&] {
        for (int64_t s = 0; s < groups; ++s) {
          int64_t j = 0;
          for (Value x : rows[s])
            for (Value w : toWords(rewriter, loc, x))
              LLVM::StoreOp::create(rewriter, loc, w, slotOf(s, warp, j++), 4);
        }
      });
      NVVM::Barrier0Op::create(rewriter, loc);
      // The first of the warps that hold this thread's rows.
      Value first = arith::MulIOp::create(
          rewriter, loc, arith::DivUIOp::create(rewriter, loc, warp, c32(rowWarps)), c32(rowWarps));
      for (int64_t s = 0; s < groups; ++s) {
        State total;
        for (int64_t k = 0; k < rowWarps; ++k) {
          Value w = arith::AddIOp::create(rewriter, loc, first, c32(k));
          State x;
          int64_t j = 0;
          for (Value part : rows[s]) {
            SmallVector<Value, 2> ws;
            for (unsigned i = 0; i < wordCount(part.getType()); ++i)
              ws.push_back(LLVM::LoadOp::create(rewriter, loc, i32, slotOf(s, w, j++), 4));
            x.push_back(fromWords(rewriter, loc, part.getType(), ws));
          }
          total = k == 0 ? x : merge(total, x);
        }
        rows[s] = total;
      }
      NVVM::Barrier0Op::create(rewriter, loc);
    }
    VectorType outTy = perThreadType(resTy);
    Value result = arith::ConstantOp::create(rewriter, loc, outTy, rewriter.getZeroAttr(outTy));
    for (int64_t s = 0; s < groups; ++s) {
      Value r = arg ? rows[s][1] : combine.narrow(rows[s][0]);
      result = vector::InsertOp::create(rewriter, loc, r, result, ArrayRef<int64_t>{s});
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// A reduction over the rows of an mma accumulator (axis = 0) into its
/// column slice. A thread holds, for each 8-column chunk j, 2 columns of
/// each of its rows (64-row block mb, half h); the 8 lanes with the same
/// lane % 4 hold the warp's other rows of those columns, and each consumer
/// warp holds 16 of each 64 rows. So: each thread combines its rows of each
/// column; the 8 lanes combine the warp's by a reduce-scatter of three
/// butterfly steps (lane ^ 16, ^ 8, ^ 4), each lane ending with an eighth
/// of the columns, which it writes to shared memory (the buffer
/// tile-stage-shared planned, tile.column_smem). After a barrier of the
/// consumer threads, consumer thread t combines the warps' values of
/// columns t, t + threads, ... in warp order and writes the totals; after a
/// second barrier every thread reads its columns' totals. The two barriers
/// also order reductions one after another (the kernel's share one buffer,
/// and one in a loop runs again): the partial values are last read before
/// the second barrier, which every thread passes before it writes the next
/// ones, and the totals are last read before the next reduction's first
/// barrier, which comes before its totals are written.
struct AccColumnReduceLowering : OpConversionPattern<tile::ReduceOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(tile::ReduceOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    tile::SliceEncodingAttr slice = accumulatorSlice(op, 0);
    if (!slice)
      return rewriter.notifyMatchFailure(op, "not a reduction into an accumulator's columns");
    auto resTy = cast<RankedTensorType>(op.getType());
    auto offsetAttr = op->getAttrOfType<IntegerAttr>(tile::kColumnSmemAttrName);
    if (!offsetAttr)
      return op.emitError("internal: no shared memory planned for this reduction over the "
                          "accumulator's rows (tile-stage-shared)");
    auto mma = cast<tile::MmaEncodingAttr>(slice.getParent());
    Location loc = op.getLoc();
    mma::Emit e{rewriter, loc};
    RankedTensorType srcTy = op.getTile().getType();
    AccumulatorCombine combine(rewriter, op);
    int64_t cols = srcTy.getShape().back(), chunks = cols / 8;
    int64_t blocks = srcTy.getShape().end()[-2] / (64 * int64_t(mma.getShare()));
    int64_t warps = 4 * int64_t(mma.getConsumers()), threads = 32 * warps;
    unsigned words = wordCount(combine.work);
    auto func = op->getParentOfType<func::FuncOp>();
    Value base = e.gep(mma::alignedSharedMemory(e, func).ptr, e.i64(offsetAttr.getInt()));
    Value tid = NVVM::ThreadIdXOp::create(rewriter, loc, rewriter.getI32Type());
    Value local = e.sub(tid, e.i32(int64_t(mma.getLeaderThread())));
    Value warp = e.divu(local, e.i32(32));
    Value pair = e.mul(e.remu(tid, e.i32(4)), e.i32(2));
    auto ptr3 = LLVM::LLVMPointerType::get(rewriter.getContext(), 3);
    auto i32 = rewriter.getI32Type();
    // Word k of warp w's partial value of column c: (k * warps + w) * cols
    // + c; word k of column c's total: (words * warps + k) * cols + c. Each
    // access is a base (a thread's first column) and a constant.
    auto partialIndex = [&](int64_t k, int64_t w, int64_t col) {
      return (k * warps + w) * cols + col;
    };
    auto totalIndex = [&](int64_t k, int64_t col) {
      return (int64_t(words) * warps + k) * cols + col;
    };
    auto elementAt = [&](Value from, int64_t index) {
      return LLVM::GEPOp::create(rewriter, loc, ptr3, i32, from,
                                 ArrayRef<LLVM::GEPArg>{int32_t(index)});
    };
    auto elementsFrom = [&](Value index) {
      return LLVM::GEPOp::create(rewriter, loc, ptr3, i32, base, ValueRange{index});
    };
    Value ownTotals = elementsFrom(pair);
    auto store = [&](Value value, function_ref<Value(int64_t)> at) {
      SmallVector<Value, 2> ws = toWords(rewriter, loc, value);
      for (unsigned k = 0; k < words; ++k)
        LLVM::StoreOp::create(rewriter, loc, ws[k], at(k), 4);
    };
    auto load = [&](function_ref<Value(int64_t)> at) {
      SmallVector<Value, 2> ws;
      for (unsigned k = 0; k < words; ++k)
        ws.push_back(LLVM::LoadOp::create(rewriter, loc, i32, at(k), 4));
      return fromWords(rewriter, loc, combine.work, ws);
    };
    auto consumersBarrier = [&] { mma::namedBarrier(e, e.i32(mma::kAllConsumersBarrier), threads); };

    // 1. The thread's rows of each of its columns (value i: column
    //    8 * (i / 2) + 2 * (lane % 4) + i % 2).
    Value src = adaptor.getTile();
    SmallVector<Value> values;
    for (int64_t j = 0; j < chunks; ++j)
      for (int64_t v = 0; v < 2; ++v) {
        Value acc;
        for (int64_t mb = 0; mb < blocks; ++mb)
          for (int64_t h = 0; h < 2; ++h)
            acc = combine.accumulate(
                acc, src, tile::MmaEncodingAttr::fragmentGroup(mb, j, h, chunks) * 2 + v);
        values.push_back(acc);
      }
    Value first;
    if (values.size() % 8 == 0) {
      // The warp's rows, as a reduce-scatter over the 8 lanes that hold
      // the same columns: at lane bit 16, 8, then 4 a lane keeps one half of
      // its values (the upper where its bit is set) and adds the other
      // lane's same half, which it receives for the half it sends. After
      // the three steps lane l holds values 8 * (l / 4) .. + 7 complete,
      // 1/8 of the shuffles and stores of a shuffle per value and step.
      first = e.i32(0);
      for (int32_t mask : {16, 8, 4}) {
        size_t half = values.size() / 2;
        Value upper = e.ne(e.band(tid, e.i32(mask)), e.i32(0));
        SmallVector<Value> kept;
        for (size_t k = 0; k < half; ++k) {
          Value keep = arith::SelectOp::create(rewriter, loc, upper, values[k + half], values[k]);
          Value send = arith::SelectOp::create(rewriter, loc, upper, values[k], values[k + half]);
          kept.push_back(
              combine(keep, shuffleValue(rewriter, loc, send, e.i32(mask), NVVM::ShflKind::bfly)));
        }
        first = e.add(first, arith::SelectOp::create(rewriter, loc, upper,
                                                     e.i32(int64_t(half)), e.i32(0)));
        values = kept;
      }
    } else {
      // Each column by three butterfly shuffles; the 8 lanes that hold it
      // write the same value.
      for (Value &value : values)
        for (int32_t offset : {4, 8, 16})
          value = combine(value, shuffleValue(rewriter, loc, value, e.i32(offset),
                                              NVVM::ShflKind::bfly));
    }
    // Value k is value first + k of the thread's (first a multiple of 8, or
    // none): column 4 * first + 2 * (lane % 4) + 8 * (k / 2) + k % 2.
    Value own = elementsFrom(e.add(e.mul(warp, e.i32(cols)),
                                   first ? e.add(e.mul(first, e.i32(4)), pair) : pair));
    for (auto [k, value] : llvm::enumerate(values)) {
      int64_t col = 8 * int64_t(k / 2) + int64_t(k % 2);
      store(value, [&](int64_t word) { return elementAt(own, partialIndex(word, 0, col)); });
    }
    consumersBarrier();
    // 2. The warps' values of columns local, local + threads, ...
    Value column = elementsFrom(local);
    for (int64_t c0 = 0; c0 < cols; c0 += threads) {
      Value col = e.add(local, e.i32(c0));
      auto total = [&] {
        Value sum;
        for (int64_t w = 0; w < warps; ++w) {
          Value x = load([&](int64_t k) { return elementAt(column, partialIndex(k, w, c0)); });
          sum = sum ? combine(sum, x) : x;
        }
        store(sum, [&](int64_t k) { return elementAt(column, totalIndex(k, c0)); });
      };
      if (c0 + threads <= cols)
        total();
      else
        e.ifThen(e.ult(col, e.i32(cols)), total);
    }
    consumersBarrier();
    // 3. The thread's columns.
    VectorType outTy = perThreadType(resTy);
    Value result = arith::ConstantOp::create(rewriter, loc, outTy, rewriter.getZeroAttr(outTy));
    for (int64_t j = 0; j < chunks; ++j)
      for (int64_t v = 0; v < 2; ++v) {
        Value x = combine.narrow(
            load([&](int64_t k) { return elementAt(ownTotals, totalIndex(k, 8 * j + v)); }));
        result = vector::InsertOp::create(rewriter, loc, x, result, ArrayRef<int64_t>{2 * j + v});
      }
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void tilec::populateReduceToNVVMPatterns(const TypeConverter &converter,
                                         ThreadLayout layout,
                                         RewritePatternSet &patterns) {
  patterns.add<ReduceLowering, BlockedRowReduceLowering>(converter, patterns.getContext(), layout);
  patterns.add<AccRowReduceLowering, AccColumnReduceLowering>(converter, patterns.getContext());
}
