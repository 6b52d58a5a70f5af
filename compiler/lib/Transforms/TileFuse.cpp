//===- TileFuse.cpp - fuse tile producers into consumers ------------------===//
//
// A broadcast of index arithmetic (range, splats, elementwise ops) is
// recomputed at the broadcast's shape.
//
// A broadcast of a loaded tile becomes one tile.broadcast_load: each thread
// then loads exactly the elements it holds in the broadcast result, so the
// small tile never has to be exchanged between threads (the layouts of a
// [BN] tile and a [BM, BN] accumulator differ).
//
// Prologue scaling of an mma operand by a per-row (A) or per-column (B)
// factor that does not change along K commutes with the sum over K:
//   sum_k (s_m * A_mk) * B_kn = s_m * sum_k A_mk * B_kn
// so `acc = mma(load(A) * s, load(B), acc)` becomes a plain mma loop (whose
// operands TMA can stage untouched) and one multiply of the accumulator in
// registers after it: the scale is applied once per output element instead
// of once per operand element and K step.
//
// An mma loop that starts from a loaded tile (C = A B + C) accumulates
// from zero and adds the start after the loop (fuseMmaInit).
//
//===----------------------------------------------------------------------===//

#include "tilec/Transforms/Passes.h"
#include "tilec/Transforms/MaskVersioning.h"
#include "tilec/Transforms/MmaOverlap.h"

#include "tilec/Dialect/Tile/IR/TileDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace tilec {
#define GEN_PASS_DEF_TILEFUSE
#include "tilec/Transforms/Passes.h.inc"
} // namespace tilec

#define DEBUG_TYPE "tile-fuse"

using namespace mlir;
using namespace tilec;

namespace {

struct FuseBroadcastOfLoad : OpRewritePattern<tile::BroadcastOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tile::BroadcastOp op,
                                PatternRewriter &rewriter) const override {
    auto load = op.getTile().getDefiningOp<tile::LoadOp>();
    if (!load)
      return rewriter.notifyMatchFailure(op, "not a broadcast of a load");
    if (load.getPaddingAttr())
      return rewriter.notifyMatchFailure(op, "load with a padding value");
    // The broadcast_load reads memory where the broadcast is.
    if (tile::mayWriteBetween(load, op))
      return rewriter.notifyMatchFailure(op, "memory may change between load and broadcast");
    rewriter.replaceOpWithNewOp<tile::BroadcastLoadOp>(
        op, op.getType(), load.getView(), load.getIndices(),
        rewriter.getDenseI64ArrayAttr(load.getType().getShape()));
    if (load->use_empty())
      rewriter.eraseOp(load);
    return success();
  }
};

/// broadcast(cast(x)) -> cast(broadcast(x)): element type conversions
/// commute with broadcasting, and moving the broadcast next to a load lets
/// it fuse into a broadcast_load (e.g. `acc * load(scale, ...)` with an f32
/// accumulator and a bf16 scale).
struct SinkCastBelowBroadcast : OpRewritePattern<tile::BroadcastOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tile::BroadcastOp op,
                                PatternRewriter &rewriter) const override {
    Operation *conv = op.getTile().getDefiningOp();
    // A cast with other users stays for them; each broadcast then gets its
    // own copy, which is worth it only when the copy fuses with a load.
    if (!conv || conv->getNumOperands() != 1 ||
        (!conv->hasOneUse() && !conv->getOperand(0).getDefiningOp<tile::LoadOp>()) ||
        !isa<arith::ExtFOp, arith::TruncFOp, arith::SIToFPOp, arith::UIToFPOp,
             arith::FPToSIOp, arith::FPToUIOp, arith::ExtSIOp, arith::ExtUIOp,
             arith::TruncIOp>(conv))
      return rewriter.notifyMatchFailure(op, "not a broadcast of a cast");
    Value src = conv->getOperand(0);
    auto srcTy = cast<RankedTensorType>(src.getType());
    auto wide = RankedTensorType::get(op.getType().getShape(), srcTy.getElementType());
    Value b = tile::BroadcastOp::create(rewriter, op.getLoc(), wide, src);
    Operation *moved = rewriter.clone(*conv);
    moved->setOperand(0, b);
    moved->getResult(0).setType(op.getType());
    rewriter.replaceOp(op, moved->getResults());
    if (conv->use_empty())
      rewriter.eraseOp(conv);
    return success();
  }
};

/// Whether `v` is index arithmetic: computed from tile.range, splats and
/// splat constants by elementwise ops and reshapes that only add or drop
/// unit dimensions, in at most `budget` ops. `ranges` counts the ranges.
static bool isIndexTree(Value v, int &budget, int &ranges) {
  Operation *op = v.getDefiningOp();
  if (!op || --budget < 0)
    return false;
  if (isa<tile::RangeOp>(op)) {
    ++ranges;
    return true;
  }
  if (isa<tile::SplatOp>(op))
    return true;
  if (auto c = dyn_cast<arith::ConstantOp>(op)) {
    auto dense = dyn_cast<DenseElementsAttr>(c.getValue());
    return dense && dense.isSplat();
  }
  if (auto r = dyn_cast<tile::ReshapeOp>(op)) {
    auto unit = [](ArrayRef<int64_t> s) {
      SmallVector<int64_t> kept;
      for (int64_t d : s)
        if (d != 1)
          kept.push_back(d);
      return kept;
    };
    if (unit(r.getTile().getType().getShape()) != unit(r.getType().getShape()))
      return false;
    return isIndexTree(r.getTile(), budget, ranges);
  }
  if (auto b = dyn_cast<tile::BroadcastOp>(op))
    return isIndexTree(b.getTile(), budget, ranges);
  if (!op->hasTrait<OpTrait::Elementwise>() || op->getNumResults() != 1 ||
      op->getNumRegions() != 0 || !isMemoryEffectFree(op))
    return false;
  for (Value operand : op->getOperands())
    if (!isa<RankedTensorType>(operand.getType()) || !isIndexTree(operand, budget, ranges))
      return false;
  return true;
}

/// Rebuilds the index tree `v` (see isIndexTree) at the shape of `target`;
/// `dims[d]` is the target dimension of v's dimension d (-1 for a unit
/// dimension, which broadcasts).
static Value rematerialize(PatternRewriter &rewriter, Value v, ArrayRef<int64_t> target,
                           ArrayRef<int64_t> dims) {
  Operation *op = v.getDefiningOp();
  Location loc = op->getLoc();
  auto typed = [&](Type elem) { return RankedTensorType::get(target, elem); };
  auto vTy = cast<RankedTensorType>(v.getType());
  if (auto r = dyn_cast<tile::RangeOp>(op)) {
    int64_t d = dims[r.getIndexDim()];
    return tile::RangeOp::create(rewriter, loc, typed(vTy.getElementType()),
                                 rewriter.getI64IntegerAttr(d));
  }
  if (auto sp = dyn_cast<tile::SplatOp>(op))
    return tile::SplatOp::create(rewriter, loc, typed(vTy.getElementType()), sp.getOperand());
  if (auto c = dyn_cast<arith::ConstantOp>(op)) {
    auto dense = cast<DenseElementsAttr>(c.getValue());
    return arith::ConstantOp::create(rewriter, loc,
                                     DenseElementsAttr::get(typed(vTy.getElementType()),
                                                            dense.getSplatValue<Attribute>()));
  }
  // A source dimension's target dimension, through unit-dimension reshapes
  // (non-unit dimensions correspond in order) and broadcasts (aligned at
  // the innermost dimension).
  auto sourceDims = [&](RankedTensorType from, bool aligned) {
    SmallVector<int64_t> out(from.getRank(), -1);
    if (aligned) {
      int64_t lead = vTy.getRank() - from.getRank();
      for (int64_t d = 0; d < from.getRank(); ++d)
        if (from.getDimSize(d) != 1)
          out[d] = dims[d + lead];
      return out;
    }
    int64_t k = 0;
    for (int64_t d = 0; d < from.getRank(); ++d) {
      if (from.getDimSize(d) == 1)
        continue;
      while (vTy.getDimSize(k) == 1)
        ++k;
      out[d] = dims[k++];
    }
    return out;
  };
  if (auto r = dyn_cast<tile::ReshapeOp>(op))
    return rematerialize(rewriter, r.getTile(), target,
                         sourceDims(r.getTile().getType(), /*aligned=*/false));
  if (auto b = dyn_cast<tile::BroadcastOp>(op))
    return rematerialize(rewriter, b.getTile(), target,
                         sourceDims(b.getTile().getType(), /*aligned=*/true));
  IRMapping map;
  for (Value operand : op->getOperands())
    map.map(operand, rematerialize(rewriter, operand, target, dims));
  Operation *copy = rewriter.clone(*op, map);
  Value res = copy->getResult(0);
  res.setType(typed(getElementTypeOrSelf(res.getType())));
  return res;
}

/// broadcast(f(range, splats)) -> f(range'): index arithmetic (the column
/// or row index of each element of a score tile, for a mask) is computed
/// at the broadcast's shape, where each thread evaluates it for the
/// elements it holds, instead of being computed small and exchanged
/// between threads through shared memory (or, in an mma kernel, not at
/// all).
struct RematerializeIndexBroadcast : OpRewritePattern<tile::BroadcastOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tile::BroadcastOp op,
                                PatternRewriter &rewriter) const override {
    int budget = 24, ranges = 0;
    if (!isIndexTree(op.getTile(), budget, ranges) || ranges == 0)
      return rewriter.notifyMatchFailure(op, "not a broadcast of index arithmetic");
    RankedTensorType from = op.getTile().getType(), to = op.getType();
    SmallVector<int64_t> dims(from.getRank(), -1);
    int64_t lead = to.getRank() - from.getRank();
    for (int64_t d = 0; d < from.getRank(); ++d)
      if (from.getDimSize(d) != 1)
        dims[d] = d + lead;
    rewriter.replaceOp(op, rematerialize(rewriter, op.getTile(), to.getShape(), dims));
    return success();
  }
};

/// Clones the computation of `v` in front of `loop` when it does not depend
/// on the loop's induction variable or carried values; null otherwise.
static Value hoistOutOf(scf::ForOp loop, Value v, OpBuilder &b, IRMapping &map) {
  if (map.contains(v))
    return map.lookup(v);
  if (!loop->isAncestor(v.getParentRegion()->getParentOp()))
    return v;
  Operation *def = v.getDefiningOp();
  if (!def || def->getNumRegions() != 0 || !isPure(def))
    return Value();
  for (Value operand : def->getOperands())
    if (!hoistOutOf(loop, operand, b, map))
      return Value();
  Operation *clone = b.clone(*def, map);
  return clone->getResult(cast<OpResult>(v).getResultNumber());
}

/// The scale of `operand = x * s` when `s` is constant along K: for the
/// first operand (MxK) a [M, 1] broadcast, for the second (KxN) a [N] or
/// [1, N] broadcast. Returns the scale op and sets `x`.
static tile::BroadcastLoadOp kScaleOf(Value operand, bool isA, Value &x) {
  auto mul = operand.getDefiningOp<arith::MulFOp>();
  if (!mul || !mul->hasOneUse())
    return {};
  for (int i = 0; i < 2; ++i) {
    auto s = mul->getOperand(i).getDefiningOp<tile::BroadcastLoadOp>();
    if (!s)
      continue;
    ArrayRef<int64_t> src = s.getSrcShape();
    bool constantAlongK = isA ? (src.size() == 2 && src[1] == 1)
                              : (src.size() == 1 || (src.size() == 2 && src[0] == 1));
    if (!constantAlongK)
      continue;
    x = mul->getOperand(1 - i);
    return s;
  }
  return {};
}

/// The mma of a loop that carries one value, the accumulator of that mma
/// (the last in the loop, directly in its body), which nothing else in the
/// loop reads: what moving work on the accumulator across the loop needs.
static tile::MmaOp accumulatingMma(scf::ForOp loop) {
  if (loop.getNumRegionIterArgs() != 1)
    return {};
  tile::MmaOp mma;
  loop.getBody()->walk([&](tile::MmaOp op) { mma = op; });
  Value acc = loop.getRegionIterArgs()[0];
  if (!mma || mma.getAcc() != acc || mma->getParentOp() != loop || !acc.hasOneUse())
    return {};
  return mma;
}

/// Moves per-row / per-column operand scales of an mma loop after the loop.
static void fuseMmaPrologues(scf::ForOp loop) {
  tile::MmaOp mma = accumulatingMma(loop);
  if (!mma)
    return;
  // TF32 rounds the scaled operand; scaling the sum instead would change
  // the result by the rounding of the scale.
  if (mma.getTf32())
    return;
  auto accTy = mma.getAcc().getType();
  for (bool isA : {true, false}) {
    Value operand = isA ? mma.getA() : mma.getB();
    Value x;
    tile::BroadcastLoadOp scale = kScaleOf(operand, isA, x);
    if (!scale || !tile::getStagedLoad(x))
      continue;
    OpBuilder b(loop);
    IRMapping map;
    Value view = hoistOutOf(loop, scale.getView(), b, map);
    SmallVector<Value> indices;
    for (Value i : scale.getIndices())
      indices.push_back(hoistOutOf(loop, i, b, map));
    if (!view || llvm::is_contained(indices, Value()))
      continue;
    // The scale over the accumulator's [M, N], in f32.
    Location loc = scale.getLoc();
    Type elem = scale.getType().getElementType();
    ArrayRef<int64_t> src = scale.getSrcShape();
    Value full = tile::BroadcastLoadOp::create(
        b, loc, RankedTensorType::get(accTy.getShape(), elem), view, indices,
        b.getDenseI64ArrayAttr(src));
    if (!elem.isF32())
      full = arith::ExtFOp::create(b, loc, accTy, full);
    // The loop accumulates the unscaled product from zero.
    Value init = loop.getInitArgs()[0];
    Value zero = arith::ConstantOp::create(
        b, loc, accTy, DenseElementsAttr::get(accTy, b.getF32FloatAttr(0)));
    loop.getInitArgsMutable()[0].assign(zero);
    Operation *mul = operand.getDefiningOp();
    mul->getResult(0).replaceAllUsesWith(x);
    mul->erase();
    if (scale->use_empty())
      scale->erase();
    // result = init + scale * sum.
    b.setInsertionPointAfter(loop);
    Value result = loop.getResult(0);
    Value scaled = arith::MulFOp::create(b, loc, result, full);
    Value total = scaled;
    if (!matchPattern(init, m_AnyZeroFloat()))
      total = arith::AddFOp::create(b, loc, init, scaled);
    result.replaceAllUsesExcept(total, scaled.getDefiningOp());
  }
}

/// An mma loop that starts from a tile other than zeros (`var acc =
/// load(C)`, C = A B + C) accumulates from zero and adds the start after
/// the loop, as cuBLAS applies beta * C in its epilogue (the sum then adds
/// C last instead of first):
///   for k { acc = mma(a, b, acc) }  from zeros;  acc = init + acc
/// wgmma accumulators that loads define before the pipeline make ptxas
/// serialize every wgmma (C7515), and the load of the start moves after the
/// loop, so its registers are not held through it (nor loaded by the
/// producer warps of a pipeline). Only for a start that is a load which can
/// move (nothing writes before the loop ends), read by the mma alone.
static void fuseMmaInit(scf::ForOp loop) {
  // Only the mma reads the carried accumulator (anything else in the loop
  // would see it without the start), and its result is carried on alone.
  tile::MmaOp mma = accumulatingMma(loop);
  auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
  if (!mma || yield.getOperand(0) != mma.getResult() || !mma->hasOneUse())
    return;
  Value init = loop.getInitArgs()[0];
  auto accTy = dyn_cast<RankedTensorType>(init.getType());
  if (!accTy || !accTy.getElementType().isF32() || matchPattern(init, m_AnyZeroFloat()))
    return;
  // Only a load that can move after the loop: a start that stays where it
  // is would be held in registers beside the accumulator through the loop.
  auto load = init.getDefiningOp<tile::LoadOp>();
  if (!load || !load->hasOneUse() || load->getBlock() != loop->getBlock())
    return;
  OpBuilder b(loop);
  Location loc = loop.getLoc();
  b.setInsertionPointAfter(loop);
  Value result = loop.getResult(0);
  auto total = arith::AddFOp::create(b, loc, init, result);
  if (tile::mayWriteBetween(load, total)) {
    total->erase();
    return;
  }
  b.setInsertionPoint(loop);
  Value zero = arith::ConstantOp::create(
      b, loc, accTy, DenseElementsAttr::get(accTy, b.getF32FloatAttr(0)));
  loop.getInitArgsMutable()[0].assign(zero);
  result.replaceAllUsesExcept(total, total);
  load->moveBefore(total);
}

struct TileFusePass : tilec::impl::TileFuseBase<TileFusePass> {
  void runOnOperation() override {
    // `if c { acc = mma(..) }` as a predicated mma first, so that the loop
    // below is seen as the accumulating loop it is.
    getOperation().walk([](func::FuncOp func) {
      if (func->hasAttr(tile::kKernelAttrName)) {
        predicateMmas(func);
        versionMasks(func);
      }
    });
    RewritePatternSet patterns(&getContext());
    patterns.add<FuseBroadcastOfLoad, SinkCastBelowBroadcast, RematerializeIndexBroadcast>(
        &getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    SmallVector<scf::ForOp> loops;
    getOperation().walk([&](scf::ForOp loop) { loops.push_back(loop); });
    for (scf::ForOp loop : loops) {
      fuseMmaPrologues(loop);
      fuseMmaInit(loop);
    }
  }
};

} // namespace
