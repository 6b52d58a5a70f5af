//===- TileFuse.cpp - fuse tile producers into consumers ------------------===//
//
// A broadcast of a loaded tile becomes one tile.broadcast_load: each thread
// then loads exactly the elements it holds in the broadcast result, so the
// small tile never has to be exchanged between threads (the layouts of a
// [BN] tile and a [BM, BN] accumulator differ).
//
//===----------------------------------------------------------------------===//

#include "tilec/Transforms/Passes.h"

#include "tilec/Dialect/Tile/IR/TileDialect.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace tilec {
#define GEN_PASS_DEF_TILEFUSE
#include "tilec/Transforms/Passes.h.inc"
} // namespace tilec

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
    rewriter.replaceOpWithNewOp<tile::BroadcastLoadOp>(
        op, op.getType(), load.getView(), load.getIndices(),
        rewriter.getDenseI64ArrayAttr(load.getType().getShape()));
    if (load->use_empty())
      rewriter.eraseOp(load);
    return success();
  }
};

struct TileFusePass : tilec::impl::TileFuseBase<TileFusePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FuseBroadcastOfLoad>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
