//===- GeneralPipeline.h - pieces of the general mma pipeline ---*- C++ -*-===//
//
// What GeneralPipelineToNVVM.cpp (the pipeline, WgmmaLowering) and
// GeneralPipelineOverlap.cpp (the intra-warpgroup overlap's rotated loop)
// share: the attributes the pipeline puts on the mmas for WgmmaLowering,
// the ping-pong barriers, and the hooks into the ring.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_CONVERSION_TILETONVVM_GENERALPIPELINE_H
#define TILEC_CONVERSION_TILETONVVM_GENERALPIPELINE_H

#include "MmaCommon.h"

#include "tilec/Transforms/MmaOverlap.h"

#include <functional>

namespace tilec::mma {

/// On a tile.mma of a general pipeline: how many of the warpgroup's most
/// recent wgmma groups may still run after its commit (wgmma.wait_group N;
/// absent: 0, the result is ready where it is used). 1 on a pure
/// accumulation (acc = mma(.., acc)), whose group the next iteration waits
/// for; -1 (no wait) on the overlap's mmas, whose results go through
/// tile.wgmma_wait.
inline constexpr llvm::StringLiteral kWgmmaWaitAttrName = "tile.wgmma_wait";

/// On an mma of a loop of products (loopOfProducts) after the first: its
/// (unread) zero accumulator takes the registers of the product before it
/// where nothing reads that one any more, so that ptxas keeps the products
/// in one range of registers (FP8 block scales over two halves: 552 bytes
/// of spills at 200 registers, 408 at 216, without it; none at 216 with it).
inline constexpr llvm::StringLiteral kSharedProductAttrName = "tile.shared_product";

/// Ping-pong of two consumer warpgroups (FlashAttention-3's scheduler
/// barriers): on the mma that opens a warpgroup's turn at the tensor cores,
/// wait for the turn (`sync`); on the one that closes it, hand the turn to
/// the other warpgroup once its wgmmas are issued (`arrive`). Consumer
/// warpgroup w (1 or 2) waits on named barrier w + 1 and arrives on the
/// other's, 256 threads each (lowerGeneralPipeline places the turns).
inline constexpr llvm::StringLiteral kPingPongAttrName = "tile.pingpong";
inline constexpr int32_t kPingPongSync = 1, kPingPongArrive = 2;

inline Value pingPongBarrier(Emit &e, Value wg, bool own) {
  return own ? e.add(wg, e.i32(1)) : e.sub(e.i32(4), wg);
}
/// `after` (optional, i32): a value the wait must follow. ptxas moves a
/// bar.sync up among the arithmetic before it; the barrier's id computed
/// from `after` (as min(id, id + (after >> 31)), which is id whatever the
/// value) keeps the wait after the work that computes it.
inline void pingPongSync(Emit &e, Value wg, Value after = {}) {
  Value id = pingPongBarrier(e, wg, true);
  if (after)
    id = arith::MinUIOp::create(e.b, e.loc, id, e.add(id, e.shr(after, e.i32(31))));
  namedBarrier(e, id, 256);
}
inline void pingPongArrive(Emit &e, Value wg) {
  NVVM::BarrierArriveOp::create(e.b, e.loc, pingPongBarrier(e, wg, false), e.i32(256));
}

/// What the overlap's rotated loop needs from the pipeline around it.
struct OverlapRing {
  Value trips;                               // i32 trip count of the loop
  std::function<Value(Value)> ivAt;          // iteration index (i32) -> induction variable
  std::function<Value(Value)> waitStage;     // wait until stage i % S is full; its base
  std::function<Value(Value)> stageBase;     // the base of stage i % S (already waited for)
  std::function<void(Value)> release;        // this warp is done with stage i % S
  /// Each staged operand chain of the loop: its ops, and where in a stage
  /// its tile lies (the last op's result becomes a tile.shared_tile there).
  struct Chain {
    SmallVector<Operation *> ops;
    int64_t offset;
  };
  SmallVector<Chain> chains;
  /// Consumer warpgroup index (1 or 2) when the two take turns (ping-pong).
  Value pingPongWarpgroup;
};

/// Replaces `loop` (a general pipeline's loop, its staged operands still
/// loads) by the rotated form of `plan` (MmaOverlap.h): prologue, the loop
/// over iterations 1 .. trips - 1, epilogue.
void buildOverlappedLoop(OpBuilder &b, scf::ForOp loop, const MmaOverlap &plan,
                         const OverlapRing &ring);

} // namespace tilec::mma

#endif
