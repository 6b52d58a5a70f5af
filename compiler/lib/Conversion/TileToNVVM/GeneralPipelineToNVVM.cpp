//===- GeneralPipelineToNVVM.cpp - the general mma pipeline on sm_90a ----===//
//
// Any loop whose staged loads feed mmas (several per loop, operands loaded,
// resident, transposed or computed, persistent outer loops): the pipeline
// tile-stage-shared planned is built as IR before the conversion patterns
// run (lowerGeneralPipelines: mbarriers, the TMA producer warpgroup, the
// consumers' waits and releases, ping-pong), and each mma becomes wgmmas
// (WgmmaLowering). See docs/architecture.md, "The general mma pipeline".
//
//===----------------------------------------------------------------------===//

#include "GeneralPipeline.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace tilec;
using namespace tilec::mma;

/// `v` (i32) as lane 0 of the warp holds it: visibly warp-uniform (a
/// shuffle), so that ptxas does not treat the wgmma code it steers as
/// divergent (wgmma and its fence, commit and wait are .aligned).
static Value fromLane0(Emit &e, Value v) {
  return NVVM::ShflOp::create(e.b, e.loc, e.b.getI32Type(), e.i32(-1), v, e.i32(0), e.i32(0x1f),
                              NVVM::ShflKindAttr::get(e.b.getContext(), NVVM::ShflKind::idx),
                              UnitAttr());
}

/// The warpgroup index of thread `tid`, made visibly warp-uniform.
Value tilec::mma::warpgroupIndex(Emit &e, Value tid) {
  return fromLane0(e, e.divu(tid, e.i32(128)));
}

namespace {

/// The branch of a predicated mma (tile.mma ... if %pred): the product is
/// emitted in its then-block, the accumulator passes through its else.
/// The predicate is taken from lane 0 (fromLane0): ptxas must see every
/// thread of a warp take the branch together, and cannot prove a loaded
/// flag uniform. `begin` returns a null branch for an mma without one.
struct PredicatedBranch {
  scf::IfOp branch;

  static PredicatedBranch begin(ConversionPatternRewriter &rewriter, Location loc,
                                tile::MmaOp op, Value pred, Type resultType) {
    if (!op.getPred())
      return {};
    Emit e{rewriter, loc};
    Value lane0 =
        fromLane0(e, arith::ExtUIOp::create(rewriter, loc, rewriter.getI32Type(), pred));
    auto branch = scf::IfOp::create(rewriter, loc, TypeRange{resultType}, e.ne(lane0, e.i32(0)),
                                    /*addThenBlock=*/true, /*addElseBlock=*/true);
    rewriter.setInsertionPointToStart(branch.thenBlock());
    return {branch};
  }

  /// The mma's value: `product` where it ran, `acc` where it did not
  /// (after `orElse`, when given).
  Value end(ConversionPatternRewriter &rewriter, Location loc, Value product, Value acc,
            llvm::function_ref<void()> orElse = {}) {
    if (!branch)
      return product;
    scf::YieldOp::create(rewriter, loc, product);
    rewriter.setInsertionPointToStart(branch.elseBlock());
    if (orElse)
      orElse();
    scf::YieldOp::create(rewriter, loc, acc);
    rewriter.setInsertionPointAfter(branch);
    return branch.getResult(0);
  }
};

/// Whether an sm_80 general pipeline of C consumer warpgroups is bound by
/// registers: with one warpgroup (4 warps, each holding two 16-row blocks
/// of every result) it is, and two things keep values out of registers
/// that live through its loop: ldmatrix reads 32-bit shared-window
/// addresses with the constant part of each step's offset in the
/// instruction (MmaSyncLowering), and the ring's copies compute each chunk's
/// row and row offset in the loop instead of LLVM hoisting them (about 50
/// 64-bit values in a 4-warp attention kernel, which spilled). Attention on
/// the H200: D = 128 BN = 64 2.25 -> 2.00 ms, D = 64 BN = 128 1.16 -> 1.13;
/// with two warpgroups the same measured 17% slower (D = 128, 8 warps, 2.21
/// -> 2.59 ms), so those keep 64-bit pointers and hoisted offsets.
static bool mmaSyncRegisterBound(int64_t consumers) { return consumers == 1; }

/// What both lowerings of a general pipeline's mma (WgmmaLowering,
/// MmaSyncLowering) read off it: shapes, the rows per consumer warpgroup,
/// the operand forms. `matched` is false for an mma that is not one of
/// `kind` in the general pipeline (b not in shared memory).
struct GeneralMma {
  bool matched = false;
  int64_t BM = 0, K = 0, N = 0, C = 0, rowsPerWG = 0, mBlocks = 0, fields = 0;
  tile::MmaEncodingAttr layout;
  Type elem;
  bool aShared = false, aMNMajor = false, bKMajor = false, zeroAcc = false;
};
static tile::SharedEncodingAttr sharedOf(Value v) {
  return dyn_cast_or_null<tile::SharedEncodingAttr>(
      cast<RankedTensorType>(v.getType()).getEncoding());
}
static GeneralMma generalMma(tile::MmaOp op, ThreadLayout layout, tile::MmaKind kind) {
  GeneralMma g;
  auto bShared = sharedOf(op.getB());
  auto mmaLayout = dyn_cast<tile::MmaEncodingAttr>(layout);
  if (!bShared || !mmaLayout || mmaLayout.getKind() != kind)
    return g;
  g.matched = true;
  auto aTy = op.getA().getType(), bTy = op.getB().getType();
  g.BM = aTy.getDimSize(0), g.K = aTy.getDimSize(1), g.N = bTy.getDimSize(1);
  g.C = mmaLayout.getShare(), g.rowsPerWG = g.BM / g.C, g.mBlocks = g.rowsPerWG / 64;
  g.layout = mmaLayout;
  g.fields = g.N / 2;
  g.elem = aTy.getElementType();
  g.aShared = bool(sharedOf(op.getA()));
  g.aMNMajor = g.aShared && sharedOf(op.getA()).getOrder()[0] == 0; // transpose(load): [K, M] rows
  g.bKMajor = bShared.getOrder()[0] == 0; // transpose(load): [N, K] rows
  g.zeroAcc = matchPattern(op.getAcc(), m_AnyZeroFloat());
  return g;
}

/// An mma of the general pipeline (b in shared memory, a in shared memory or
/// in registers) in consumer warpgroup wg - 1, which holds rows
/// (wg - 1) * BM / C ... of the accumulator: wgmma m64nNk16 per 64-row
/// block and step of 16 along K, then commit and wait (the mma's result is
/// ready where it is used). Operand forms:
///  - a in shared memory: [BM, K] rows of 128-byte boxes, K-major, or as
///    transpose(load) [K, BM] rows of 64-column boxes, MN-major;
///  - a in registers: the [BM, K] tile in the accumulator layout, whose
///    fragments of columns 16kk .. 16kk+15 (slots 8kk .. 8kk+7 of each
///    64-row block) are wgmma's A registers for step kk, two elements per
///    register (FlashAttention-3's P); MLIR's wgmma op takes A only from
///    shared memory, so this one is inline PTX;
///  - b as loaded ([K, N] rows of boxes): MN-major ("transposed" for
///    wgmma); b as transpose(load) ([N, K] rows of boxes): K-major.
struct WgmmaLowering : OpConversionPattern<tile::MmaOp> {
  WgmmaLowering(const TypeConverter &tc, MLIRContext *ctx, ThreadLayout layout)
      : OpConversionPattern<tile::MmaOp>(tc, ctx, /*benefit=*/5), layout(layout) {}
  ThreadLayout layout;

  LogicalResult
  matchAndRewrite(tile::MmaOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    GeneralMma g = generalMma(op, layout, tile::MmaKind::wgmma);
    if (!g.matched)
      return rewriter.notifyMatchFailure(op, "not an mma of the general pipeline");
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    Emit e{rewriter, loc};
    int64_t BM = g.BM, K = g.K, N = g.N, rowsPerWG = g.rowsPerWG, mBlocks = g.mBlocks;
    Type elem = g.elem;
    bool bf16 = elem.isBF16();
    bool aShared = g.aShared, bKMajor = g.bKMajor, zeroAcc = g.zeroAcc;
    int64_t kStep = wgmmaKStep(elem);
    Type i32 = rewriter.getI32Type();
    // One wgmma per part of the columns (wgmmaParts: two above 256).
    SmallVector<int64_t> partCols = wgmmaParts(N), partFields;
    for (int64_t n : partCols)
      partFields.push_back(n / 2);
    int64_t nParts = int64_t(partCols.size());
    Value wg = warpgroupIndex(e, NVVM::ThreadIdXOp::create(e.b, e.loc, e.b.getI32Type()));
    Value consumer64 = e.zext64(rowShareOf(e, g.layout, wg));
    int32_t pingPong = 0;
    if (auto attr = op->getAttrOfType<IntegerAttr>(kPingPongAttrName))
      pingPong = attr.getInt();
    SmallVector<Value> accs =
        toWgmmaStructs(rewriter, loc, adaptor.getAcc(), mBlocks, partFields, zeroAcc);
    // In a loop of products: the registers of the product before this one,
    // which nothing reads from here on, as its (unread) accumulator, so that
    // ptxas keeps both products in one range.
    if (zeroAcc && op->hasAttr(kSharedProductAttrName))
      for (Operation *prev = op->getPrevNode(); prev; prev = prev->getPrevNode()) {
        auto earlier = dyn_cast<tile::MmaOp>(prev);
        if (!earlier || earlier.getType() != op.getType())
          continue;
        bool dead = llvm::all_of(earlier->getUsers(), [&](Operation *u) {
          Operation *at = op->getBlock()->findAncestorOpInBlock(*u);
          return at && at->isBeforeInBlock(op);
        });
        if (dead)
          if (Value v = rewriter.getRemappedValue(earlier.getResult()))
            if (isa<VectorType>(v.getType()))
              accs = toWgmmaStructs(rewriter, loc, v, mBlocks, partFields, false);
        break;
      }
    auto addrOf = [&](Value ptr) {
      return LLVM::PtrToIntOp::create(rewriter, loc, rewriter.getI64Type(), ptr).getResult();
    };
    Value bAddr = addrOf(adaptor.getB());
    Value aAddr = aShared ? addrOf(adaptor.getA()) : Value();
    SmallVector<Value> aElems;
    if (!aShared)
      aElems = unpackVector(rewriter, loc, adaptor.getA());
    auto wgmmaTypeA = wgmmaTypeOf(elem), wgmmaTypeB = wgmmaTypeOf(op.getB().getType().getElementType());
    auto resultTy = cast<VectorType>(getTypeConverter()->convertType(op.getType()));
    PredicatedBranch branch =
        PredicatedBranch::begin(rewriter, loc, op, adaptor.getPred(), resultTy);
    // @launch(late_turn = 1): a turn that starts with a product of
    // registers (attention's P V) waits after all of them are computed.
    // ptxas otherwise may move the wait up among the softmax's
    // exponentials, and the warpgroup idles at the barrier with work left
    // that the other's wgmmas would have hidden (docs/performance.md,
    // sessions 43-44: faster without the causal mask, slower with it).
    auto aPair = [&](int64_t slot) -> Value {
      auto pairTy = VectorType::get({2}, elem);
      Value pair = packVector(rewriter, loc, LLVM::UndefOp::create(rewriter, loc, pairTy),
                              {aElems[slot], aElems[slot + 1]});
      return LLVM::BitcastOp::create(rewriter, loc, i32, pair);
    };
    if (pingPong & kPingPongSync) {
      // (Their unsigned maximum, as a tree: a chain would add its latency
      // before the wait, and LLVM reassociates ors into one.)
      SmallVector<Value> level;
      auto func = op->getParentOfType<func::FuncOp>();
      auto lateTurn = func ? func->getAttrOfType<IntegerAttr>(tile::kLateTurnAttrName) : nullptr;
      if (lateTurn)
        for (int64_t slot = 0; slot + 1 < int64_t(aElems.size()); slot += 2)
          level.push_back(aPair(slot));
      // late_turn = 2: also after the accumulator's input (O * alpha in
      // attention) is computed, so that its rescale runs before the turn;
      // every 8th element suffices to hold the multiplies there (every
      // element measured 4-7% slower, session 45).
      if (lateTurn && lateTurn.getInt() == 2 && !level.empty() && !zeroAcc) {
        SmallVector<Value> accElems = unpackVector(rewriter, loc, adaptor.getAcc());
        for (size_t i = 0; i < accElems.size(); i += 8)
          level.push_back(LLVM::BitcastOp::create(rewriter, loc, i32, accElems[i]));
      }
      while (level.size() > 1) {
        SmallVector<Value> next;
        for (size_t i = 0; i + 1 < level.size(); i += 2)
          next.push_back(arith::MaxUIOp::create(rewriter, loc, level[i], level[i + 1]));
        if (level.size() % 2)
          next.push_back(level.back());
        level = std::move(next);
      }
      pingPongSync(e, wg, level.empty() ? Value() : level.front());
    }
    NVVM::WgmmaFenceAlignedOp::create(rewriter, loc);
    for (int64_t kk = 0; kk < K / kStep; ++kk)
    for (int64_t p = 0, nOff = 0; p < nParts; nOff += partCols[p++]) {
      // b K-major: [N, K] rows; MN-major: [K, N] rows (part p from box
      // nOff / 64).
      Value descB = bKMajor ? wgmmaKMajorDescriptor(e, bAddr, N, kk, nOff * 128)
                            : wgmmaMNMajorDescriptor(e, bAddr, K, kk,
                                                     nOff ? e.i64(nOff / 64 * K * 128) : Value());
      auto structTy = wgmmaAccType(ctx, partFields[p]);
      bool accumulate = !(zeroAcc && kk == 0);
      for (int64_t mb = 0; mb < mBlocks; ++mb) {
        Value &acc = accs[mb * nParts + p];
        if (aShared) {
          // a K-major: [BM, K] rows, the consumer's from row consumer *
          // rowsPerWG; MN-major (transposed): [K, BM] rows in 64-column
          // boxes of K rows, 64-row block mb of the consumer one box.
          Value descA =
              g.aMNMajor
                  ? wgmmaMNMajorDescriptor(
                        e, aAddr, K, kk,
                        e.mul(e.add(e.mul(consumer64, e.i64(mBlocks)), e.i64(mb)),
                              e.i64(K * 128)))
                  : wgmmaKMajorDescriptor(e, e.add(aAddr, e.mul(consumer64,
                                                                e.i64(rowsPerWG * 128))),
                                          BM, kk, mb * 64 * 128);
          acc = NVVM::WgmmaMmaAsyncOp::create(
              rewriter, loc, structTy, acc, descA, descB,
              NVVM::MMAShapeAttr::get(ctx, 64, int(partCols[p]), int(kStep)),
              NVVM::WGMMATypesAttr::get(ctx, wgmmaTypeA), NVVM::WGMMATypesAttr::get(ctx, wgmmaTypeB),
              NVVM::WGMMATypesAttr::get(ctx, NVVM::WGMMATypes::f32),
              NVVM::WGMMAScaleOutAttr::get(ctx, accumulate ? NVVM::WGMMAScaleOut::one
                                                           : NVVM::WGMMAScaleOut::zero),
              NVVM::WGMMAScaleInAttr::get(ctx, NVVM::WGMMAScaleIn::one),
              NVVM::WGMMAScaleInAttr::get(ctx, NVVM::WGMMAScaleIn::one),
              NVVM::MMALayoutAttr::get(ctx, g.aMNMajor ? NVVM::MMALayout::col
                                                       : NVVM::MMALayout::row),
              NVVM::MMALayoutAttr::get(ctx, bKMajor ? NVVM::MMALayout::col
                                                    : NVVM::MMALayout::row),
              NVVM::MMAIntOverflowAttr());
          continue;
        }
        // A from registers: four b32 of two elements each.
        SmallVector<Value> aRegs;
        for (int64_t r = 0; r < 4; ++r)
          aRegs.push_back(aPair(mb * (K / 2) + 8 * kk + 2 * r));
        StringRef t = bf16 ? "bf16" : "f16";
        acc = wgmmaRegisterA(rewriter, loc, acc, structTy, partFields[p],
                             ("m64n" + Twine(partCols[p]) + "k16.f32." + t + "." + t).str(),
                             aRegs, descB, e.i32(accumulate ? 1 : 0), /*transB=*/!bKMajor);
      }
    }
    NVVM::WgmmaGroupSyncAlignedOp::create(rewriter, loc);
    if (pingPong & kPingPongArrive)
      pingPongArrive(e, wg);
    // A pure accumulation keeps this group in flight (the pipeline waits
    // for it after the loop, see lowerGeneralPipeline); the overlap's mmas
    // are waited for by tile.wgmma_wait.
    int64_t pending = 0;
    if (auto attr = op->getAttrOfType<IntegerAttr>(kWgmmaWaitAttrName))
      pending = attr.getInt();
    if (pending >= 0)
      NVVM::WgmmaWaitGroupSyncOp::create(rewriter, loc, rewriter.getI64IntegerAttr(pending));
    // A predicated mma of an accumulating loop that skips its product
    // commits no group: it waits for them all, so that the stage the
    // pipeline releases next (the iteration before's) is read out.
    rewriter.replaceOp(op, branch.end(rewriter, loc,
                                      fromWgmmaStructs(rewriter, loc, accs, resultTy, partFields),
                                      adaptor.getAcc(), [&] {
                                        if (pending > 0)
                                          NVVM::WgmmaWaitGroupSyncOp::create(
                                              rewriter, loc, rewriter.getI64IntegerAttr(0));
                                      }));
    return success();
  }
};

/// An mma of the general pipeline on sm_80 (layout mma_sync): warp w of
/// warpgroup c holds rows c * BM / C + 64 mb + 16 w (+ lane / 4, + 8) of the
/// accumulator and columns 8 j + 2 (lane % 4), the wgmma layout, and
/// multiplies with mma.sync m16n8k16 per 16-row block, n8 block and step
/// of 16 along K. Operand forms as WgmmaLowering's:
///  - a in shared memory ([BM, K] rows of 128-byte swizzled boxes): ldmatrix
///    .x4, matrices (rows 0-7 | 8-15) x (k 0-7 | 8-15); a transposed ([K,
///    BM] rows): ldmatrix.trans of the same four matrices, read from rows k
///    and chunks of m;
///  - a in registers: the accumulator-layout fragments of columns
///    16kk .. 16kk+15 (slots 8kk .. 8kk+7 of each 64-row block) are
///    mma.sync's a0..a3 of step kk, two elements per register
///    (FlashAttention-2's P);
///  - b as loaded ([K, N] rows): ldmatrix.trans, matrices (k 0-7 | 8-15) x
///    (n block 2np | 2np+1); b as transpose(load) ([N, K] rows): ldmatrix,
///    the same four matrices read from rows n and chunks of k.
/// In every swizzled box, 16-byte chunk c of row r sits at c ^ (r % 8), and
/// row r of an 8x8 matrix is a row whose index is r modulo 8.
struct MmaSyncLowering : OpConversionPattern<tile::MmaOp> {
  MmaSyncLowering(const TypeConverter &tc, MLIRContext *ctx, ThreadLayout layout)
      : OpConversionPattern<tile::MmaOp>(tc, ctx, /*benefit=*/5), layout(layout) {}
  ThreadLayout layout;

  LogicalResult
  matchAndRewrite(tile::MmaOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    GeneralMma g = generalMma(op, layout, tile::MmaKind::mma_sync);
    if (!g.matched)
      return rewriter.notifyMatchFailure(op, "not an mma of the sm_80 general pipeline");
    Location loc = op.getLoc();
    Emit e{rewriter, loc};
    int64_t BM = g.BM, K = g.K, N = g.N, C = g.C, rowsPerWG = g.rowsPerWG, mBlocks = g.mBlocks;
    int64_t fields = g.fields;
    Type elem = g.elem;
    bool aShared = g.aShared, bKMajor = g.bKMajor;
    auto accTy = cast<VectorType>(getTypeConverter()->convertType(op.getType()));
    PredicatedBranch branch = PredicatedBranch::begin(rewriter, loc, op, adaptor.getPred(), accTy);
    SmallVector<Value> acc;
    if (g.zeroAcc)
      acc.assign(accTy.getNumElements(),
                 arith::ConstantOp::create(rewriter, loc, rewriter.getF32FloatAttr(0.0f)));
    else
      acc = unpackVector(rewriter, loc, adaptor.getAcc());
    SmallVector<Value> aElems;
    if (!aShared)
      aElems = unpackVector(rewriter, loc, adaptor.getA());
    Value tid = NVVM::ThreadIdXOp::create(rewriter, loc, rewriter.getI32Type());
    Value lane = e.remu(tid, e.i32(32));
    Value wg = e.divu(tid, e.i32(128));
    Value warp = e.remu(e.divu(tid, e.i32(32)), e.i32(4));
    LdmatrixLanes lanes = ldmatrixLanes(e, lane, wg, warp, rowsPerWG, mBlocks);
    Value r = lanes.r, qLow = lanes.qLow, qHigh = lanes.qHigh;
    ArrayRef<Value> aRowOff = lanes.aRowOff;
    // b as loaded: row k = 16 kk + r + 8 qLow, n chunk 2 np + qHigh;
    // transposed: row n = 16 np + 8 qHigh + r, k chunk 2 kk + qLow.
    Value bRow = bKMajor ? e.mul(e.add(r, e.mul(qHigh, e.i32(8))), e.i32(128))
                         : e.mul(e.add(r, e.mul(qLow, e.i32(8))), e.i32(128));
    // 32-bit addresses, the constant part in the instruction, where
    // registers bound the loop (mmaSyncRegisterBound).
    bool compact = mmaSyncRegisterBound(C);
    auto addr32 = [&](Value ptr) {
      return compact ? e.trunc32(LLVM::PtrToIntOp::create(rewriter, loc, rewriter.getI64Type(),
                                                          ptr))
                     : ptr;
    };
    Value aPtr = aShared ? addr32(adaptor.getA()) : Value(), bPtr = addr32(adaptor.getB());
    auto chunk = [&](int64_t pair, Value half) { // 16-byte chunk 2 pair + half of row r
      return e.mul(e.bxor(e.add(e.i32(2 * pair), half), r), e.i32(16));
    };
    // The matrix rows at `row` (a row's byte offset) plus 16-byte chunk
    // `chunkOffset` of each, from `base` + `constant`.
    auto ldmatrixAt = [&](Value base, int64_t constant, Value row, Value chunkOffset,
                          bool trans) {
      if (compact) {
        Value offset = e.add(row, chunkOffset);
        return ldmatrixX4At(rewriter, loc, e.add(base, offset), constant, trans, elem);
      }
      Value offset = e.add(e.add(e.i32(constant), row), chunkOffset);
      return ldmatrixX4(rewriter, loc, e.gep(base, e.zext64(offset)), trans, elem);
    };
    // The row's offset `row` plus the 16-byte chunk (pair, half) of it.
    auto ldmatrix = [&](Value base, int64_t constant, Value row, int64_t pair, Value half,
                        bool trans) {
      return ldmatrixAt(base, constant, row, chunk(pair, half), trans);
    };
    // a transposed ([K, BM] rows in 64-column boxes of K rows): matrix (m
    // half qLow, k half qHigh) of 64-row block mb is rows k = 16 kk + 8
    // qHigh + r of box wg * mBlocks + mb, m chunk 2 warp + qLow (rows of m
    // per warp: 16), read transposed.
    Value aTRow, aTChunk;
    if (aShared && g.aMNMajor) {
      aTRow = e.add(e.mul(wg, e.i32(mBlocks * K * 128)),
                    e.mul(e.add(r, e.mul(qHigh, e.i32(8))), e.i32(128)));
      aTChunk = e.mul(e.bxor(e.add(e.mul(warp, e.i32(2)), qLow), r), e.i32(16));
    }
    auto pairTy = VectorType::get({2}, elem);
    for (int64_t kk = 0; kk < K / 16; ++kk) {
      SmallVector<SmallVector<Value, 4>> a;
      for (int64_t mb = 0; mb < mBlocks; ++mb) {
        if (aShared && g.aMNMajor) {
          a.push_back(ldmatrixAt(aPtr, mb * K * 128 + kk * 16 * 128, aTRow, aTChunk, true));
          continue;
        }
        if (aShared) {
          a.push_back(
              ldmatrix(aPtr, (kk / 4) * BM * 128, aRowOff[mb], kk % 4, qHigh, false));
          continue;
        }
        SmallVector<Value, 4> regs;
        for (int64_t x = 0; x < 4; ++x) {
          int64_t slot = mb * (K / 2) + 8 * kk + 2 * x;
          Value pair = packVector(rewriter, loc, LLVM::UndefOp::create(rewriter, loc, pairTy),
                                  {aElems[slot], aElems[slot + 1]});
          regs.push_back(elem.isBF16() ? LLVM::BitcastOp::create(rewriter, loc,
                                                                 rewriter.getI32Type(), pair)
                                       : pair);
        }
        a.push_back(regs);
      }
      for (int64_t np = 0; np < N / 16; ++np) {
        SmallVector<Value, 4> bm =
            bKMajor ? ldmatrix(bPtr, (kk / 4) * N * 128 + np * 16 * 128, bRow, kk % 4, qLow, false)
                    : ldmatrix(bPtr, (np / 4) * K * 128 + kk * 16 * 128, bRow, np % 4, qHigh,
                               true);
        // (b0, b1) of n8 blocks 2np and 2np + 1.
        for (int64_t h = 0; h < 2; ++h)
          for (int64_t mb = 0; mb < mBlocks; ++mb)
            mmaSync(rewriter, loc, a[mb], ValueRange{bm[2 * h], bm[2 * h + 1]},
                    MutableArrayRef<Value>(&acc[mb * fields + (2 * np + h) * 4], 4), elem);
      }
    }
    rewriter.replaceOp(
        op, branch.end(rewriter, loc,
                       packVector(rewriter, loc, LLVM::UndefOp::create(rewriter, loc, accTy), acc),
                       adaptor.getAcc()));
    return success();
  }
};

/// tile.wgmma_wait: wgmma.wait_group N as inline PTX whose outputs are its
/// operands' registers, tied to its inputs ("+f" in CUDA's terms, as
/// CUTLASS's warpgroup_fence_operand): the waited values are new SSA values
/// defined at the wait, so no read of an accumulator moves above it.
struct WgmmaWaitLowering : OpConversionPattern<tile::WgmmaWaitOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(tile::WgmmaWaitOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    SmallVector<Value> elems;
    SmallVector<int64_t> counts;
    for (Value v : adaptor.getTiles()) {
      auto vt = dyn_cast<VectorType>(v.getType());
      if (!vt || !vt.getElementType().isF32())
        return rewriter.notifyMatchFailure(op, "waits for f32 accumulators only");
      SmallVector<Value> part = unpackVector(rewriter, loc, v);
      counts.push_back(int64_t(part.size()));
      elems.append(part.begin(), part.end());
    }
    std::string constraints;
    for (size_t x = 0; x < elems.size(); ++x)
      constraints += (x ? ",=f" : "=f");
    for (size_t x = 0; x < elems.size(); ++x)
      constraints += "," + std::to_string(x);
    // The named struct the wgmmas use (wgmmaAccType), for as many fields.
    auto structTy = wgmmaAccType(rewriter.getContext(), int64_t(elems.size()));
    Value waited = inlineAsm(rewriter, loc, structTy, elems,
                             "wgmma.wait_group.sync.aligned " +
                                 std::to_string(op.getPendingAttr().getInt()) + ";",
                             constraints);
    SmallVector<Value> results;
    int64_t at = 0;
    for (auto [v, count] : llvm::zip(adaptor.getTiles(), counts)) {
      SmallVector<Value> part;
      for (int64_t x = 0; x < count; ++x)
        part.push_back(LLVM::ExtractValueOp::create(rewriter, loc, waited,
                                                    ArrayRef<int64_t>{at + x}));
      at += count;
      results.push_back(packVector(rewriter, loc, LLVM::UndefOp::create(rewriter, loc, v.getType()), part));
    }
    rewriter.replaceOp(op, results);
    return success();
  }
};

} // namespace

/// Whether the two consumer warpgroups of `loop` take turns at the tensor
/// cores (ping-pong): where its wgmmas take at least as long as its other
/// tile work (`mmaBound`), unless the kernel says @launch(turns = 0).
static bool takesTurns(func::FuncOp func, scf::ForOp loop, int64_t consumers) {
  return consumers == 2 && !func->hasAttr(tile::kNoTurnsAttrName) && mmaBound(loop);
}

/// The f32 tiles in thread layouts that the ops of `body` strictly between
/// `from` and `at` compute and that `at` or an op after it reads.
static SmallVector<Value> f32TilesReadFrom(Block *body, Operation *from, Operation *at) {
  auto fromAt = [&](Operation *user) {
    Operation *op = body->findAncestorOpInBlock(*user);
    return op && (op == at || at->isBeforeInBlock(op));
  };
  SmallVector<Value> tiles;
  for (Operation *op = from->getNextNode(); op && op != at; op = op->getNextNode())
    for (Value r : op->getResults()) {
      auto t = dyn_cast<RankedTensorType>(r.getType());
      if (t && t.getElementType().isF32() && isa<ThreadLayout>(t.getEncoding()) &&
          llvm::any_of(r.getUsers(), fromAt))
        tiles.push_back(r);
    }
  return tiles;
}

/// A `tile.wgmma_wait {pending = 0}` over `tiles`, placed before `at` in
/// `body`: `at` and the ops after it read the wait's results, so that what
/// computes the tiles stays above the wait (LLVM sinks arithmetic to its
/// uses otherwise).
static tile::WgmmaWaitOp waitBefore(OpBuilder &b, Location loc, Block *body, Operation *at,
                                    ArrayRef<Value> tiles) {
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPoint(at);
  auto waited = tile::WgmmaWaitOp::create(b, loc, tiles, /*pending=*/0);
  for (auto [v, w] : llvm::zip(tiles, waited.getResults()))
    Value(v).replaceUsesWithIf(w, [&, waited = waited.getOperation()](OpOperand &use) {
      Operation *op = body->findAncestorOpInBlock(*use.getOwner());
      return use.getOwner() != waited && op && (op == at || at->isBeforeInBlock(op));
    });
  return waited;
}

/// Builds the general pipeline that tile-stage-shared planned for `forOp`
/// (tile.pipeline with `general`), as IR that the conversion then lowers:
///
///   thread 0: init full[s] (1 arrival + bytes), empty[s] (one per consumer
///             warp), resident (1 + bytes); bar.sync
///   warpgroup 0 (producer): TMA the tiles loaded before the loop into
///             their place (resident), then for each iteration i: wait
///             empty[i % S], TMA every tile the iteration loads into stage
///             i % S, arrive full[i % S]; exit
///   consumers: wait resident; the loop itself, which waits full[i % S] at
///             its top, reads each staged operand as a tile.shared_tile of
///             the stage, and releases the stage (arrive empty) at its end.
///
/// A view TMA cannot describe is copied by the producer's 128 threads with
/// ordinary loads into the same swizzled layout.
///
/// `loops` are the kernel's mma loops in program order: one, or several one
/// after the other at the kernel's top level, through which one ring runs
/// (iteration i of loop k is the ring's iteration base_k + i, base_k the
/// trip counts of the loops before it); the producer copies for each loop
/// in turn.
static LogicalResult lowerGeneralPipeline(func::FuncOp func, ArrayRef<scf::ForOp> loops) {
  scf::ForOp forOp = loops.front();
  bool sequence = loops.size() > 1;
  auto plan = forOp->getAttrOfType<DictionaryAttr>(tile::kPipelineAttrName);
  for (scf::ForOp loop : loops)
    loop.walk([&](tile::StoreOp store) {
      store->setAttr(kPositionsInPlaceAttrName, UnitAttr::get(func.getContext()));
    });
  // The mma loop `op` is in (null: none).
  auto loopOf = [&](Operation *op) -> scf::ForOp {
    for (scf::ForOp loop : loops)
      if (loop->isAncestor(op))
        return loop;
    return scf::ForOp();
  };
  int64_t S = cast<IntegerAttr>(plan.get("stages")).getInt();
  int64_t C = cast<IntegerAttr>(plan.get("consumers")).getInt();
  // Persistent kernels may alternate: consumer warpgroup c runs the outer
  // loop's iterations c, c + C, ..., each on the whole tile, so one's
  // epilogue overlaps another's wgmmas; one warpgroup then releases a stage.
  bool alternate = bool(plan.get("alternate"));
  int64_t releasers = alternate ? 1 : C;
  // Who releases a stage (and a resident slot): stageReleasesPerWarpgroup,
  // one count for the ring, which all the loops share.
  bool threadsRead = false;
  func.walk([&](tile::ConvertLayoutOp c) { threadsRead |= tile::readsStage(c); });
  int64_t releasesPerWarpgroup = stageReleasesPerWarpgroup(threadsRead);
  int64_t residentBytes = cast<IntegerAttr>(plan.get("resident_bytes")).getInt();
  // A persistent kernel's tiles loaded before the mma loop (attention's Q)
  // are loaded per outer iteration into `slots` buffers (two where they
  // fit), o % slots, each with a full and an empty barrier (2S + slot,
  // 2S + 2 + slot).
  bool perTile = bool(plan.get("resident_slots"));
  int64_t slots = perTile ? cast<IntegerAttr>(plan.get("resident_slots")).getInt() : 1;
  int64_t slotBytes = residentBytes / slots;
  int64_t stageBytes = cast<IntegerAttr>(plan.get("stage_bytes")).getInt();
  Location loc = forOp.getLoc();
  // A persistent kernel's mma loop sits in an outer loop: the ring's
  // iterations count on across the outer loop, g = outer index * trips +
  // inner index where the mma loop's bounds do not change with it, else
  // (`varying`: a causal attention's key blocks) g = the runs' trip counts
  // so far + inner index, and the producer computes each run's bounds
  // again. With loops one after the other in the outer loop, any of whose
  // bounds change with it, that running total counts every loop's runs.
  auto outer = dyn_cast<scf::ForOp>(forOp->getParentOp());
  auto boundsOf = [](scf::ForOp loop) -> SmallVector<Value> {
    return {loop.getLowerBound(), loop.getUpperBound(), loop.getStep()};
  };
  // (tile-stage-shared decided it: the bounds it could not hoist out of the
  // outer loop.)
  bool varying = bool(plan.get("varying_bounds"));
  OpBuilder b(outer ? outer.getOperation() : forOp.getOperation());
  Emit e{b, loc};

  struct Staged {
    Operand o;
    bool resident;
    bool multicast = false; // shared by the two programs of a cluster
    SmallVector<Operation *> chain; // load, reshape, transpose
    scf::ForOp loop;                // the mma loop it is loaded in (not resident)
    // STAGES = 1 (sm_80): 0 for a tile read first in the loop (K), copied
    // one iteration ahead; 1 for one read from the split point on (V),
    // copied at the top of its own iteration (splitPhases).
    int phase = 0;
  };
  SmallVector<Staged> staged;
  func.walk([&](tile::LoadOp load) {
    auto smem = load->getAttrOfType<DictionaryAttr>(tile::kSmemAttrName);
    if (!smem)
      return;
    Staged st;
    st.resident = bool(smem.get("resident"));
    st.multicast = bool(smem.get("multicast"));
    st.o.load = load;
    st.o.view = load.getView().getDefiningOp<tile::MakeViewOp>();
    if (auto t = smem.getAs<IntegerAttr>("tma"))
      std::tie(st.o.tmap, st.o.tmapValid) = tmaArguments(func, t.getInt());
    ArrayRef<int64_t> shape = load.getType().getShape();
    st.o.rows = shape.end()[-2];
    st.o.cols = shape.end()[-1];
    st.o.elemBytes = load.getType().getElementType().getIntOrFloatBitWidth() / 8;
    st.o.smemOffset = cast<IntegerAttr>(smem.get("offset")).getInt();
    if (!st.resident)
      st.loop = loopOf(load);
    Operation *last = load;
    st.chain.push_back(load);
    while (last->hasOneUse() && isa<tile::ReshapeOp, tile::PermuteOp>(*last->getUsers().begin())) {
      last = *last->getUsers().begin();
      st.chain.push_back(last);
    }
    staged.push_back(st);
  });
  // Whether a tile loaded per outer iteration is read after the mma loop
  // (by a chained mma in the outer loop's body): its buffer is released at
  // the end of the outer iteration instead of after the mma loop.
  bool residentAfterLoop = llvm::any_of(staged, [&](const Staged &st) {
    return st.resident && llvm::any_of(st.chain.back()->getUsers(), [&](Operation *user) {
             return !loopOf(user);
           });
  });

  // Shared memory: resident tiles, the ring, then the mbarriers.
  Value smem = alignedSharedMemory(e, func).ptr;
  int64_t ringOffset = residentBytes, barrierOffset = residentBytes + S * stageBytes;
  auto barrierAt = [&](Value index) { // i64: full s, empty S + s, resident 2S
    return e.gep(smem, e.add(e.i64(barrierOffset), e.mul(index, e.i64(8))));
  };
  Value tid = NVVM::ThreadIdXOp::create(b, loc, b.getI32Type());
  Value wg = warpgroupIndex(e, tid);
  Value lane = e.remu(tid, e.i32(32));
  auto releases = [&] { return releasesStage(e, threadsRead, lane); };
  bool anyResident = llvm::any_of(staged, [](const Staged &st) { return st.resident; });
  // sm_80 (layout mma_sync): no producer, no mbarriers (the cp.async ring
  // below).
  bool async = cast<tile::MmaEncodingAttr>(func->getAttrOfType<ThreadLayout>(
                                               tile::kEncodingAttrName))
                   .getKind() == tile::MmaKind::mma_sync;
  // A cluster of two (tile.smem "multicast" on the operand both programs
  // load alike; a persistent kernel's pairs of tiles): each program copies
  // half of that operand's boxes into both, so a stage is free only when
  // the releasing warps of both have arrived (each on its own program's
  // empty barrier and on the other's), as in the one-loop pipeline
  // (MmaToNVVM.cpp).
  std::optional<Multicast> mc;
  for (Staged &st : staged)
    if (st.multicast)
      mc = clusterPair(b, loc, &st.o);
  if (!async) {
    Value emptyCount =
        emptyArrivals(b, loc, releasesPerWarpgroup * releasers, mc ? &*mc : nullptr);
    e.ifThen(e.eq(tid, e.i32(0)), [&] {
      for (int64_t s = 0; s < S; ++s) {
        NVVM::MBarrierInitOp::create(b, loc, barrierAt(e.i64(s)), e.i32(kProducerArrivals),
                                     Value());
        NVVM::MBarrierInitOp::create(b, loc, barrierAt(e.i64(S + s)), emptyCount, Value());
      }
      if (mc)
        NVVM::FenceMbarrierInitOp::create(b, loc);
      if (anyResident)
        NVVM::MBarrierInitOp::create(b, loc, barrierAt(e.i64(2 * S)), e.i32(kProducerArrivals),
                                     Value());
      if (perTile) {
        if (slots == 2)
          NVVM::MBarrierInitOp::create(b, loc, barrierAt(e.i64(2 * S + 1)),
                                       e.i32(kProducerArrivals), Value());
        for (int64_t slot = 0; slot < slots; ++slot)
          NVVM::MBarrierInitOp::create(b, loc, barrierAt(e.i64(2 * S + 2 + slot)),
                                       e.i32(releasesPerWarpgroup * releasers), Value());
      }
    });
    NVVM::Barrier0Op::create(b, loc);
    // Both programs' barriers are initialized before either copies into
    // the other or arrives on its barriers.
    if (mc) {
      NVVM::ClusterArriveOp::create(b, loc, b.getUnitAttr());
      NVVM::ClusterWaitOp::create(b, loc, b.getUnitAttr());
    }
  }

  // The trip counts and, for the producer, the load origins of iteration i
  // (the loop body's scalar code the staged loads' indices depend on,
  // cloned with the induction variable of iteration i).
  /// A loop's bounds in i64, its trip count in i32, and the conversions
  /// between an iteration's index (i32) and its induction variable.
  struct Counter {
    scf::ForOp loop;
    Value lb64, step64, trips32;
  };
  // (`map`: where the bounds are computed again, the producer's copies.)
  auto counterOf = [&](scf::ForOp loop, const IRMapping *map = nullptr) {
    auto bound = [&](Value v) { return e.sext64(map ? map->lookupOrDefault(v) : v); };
    Counter c{loop, bound(loop.getLowerBound()), bound(loop.getStep()), Value()};
    Value span = arith::SubIOp::create(b, loc, bound(loop.getUpperBound()), c.lb64);
    Value trips = arith::MaxSIOp::create(
        b, loc, arith::CeilDivSIOp::create(b, loc, span, c.step64), e.i64(0));
    c.trips32 = arith::TruncIOp::create(b, loc, b.getI32Type(), trips);
    return c;
  };
  auto ivAt = [&](Counter c, Value index) -> Value {
    Value iv = e.add(c.lb64, e.mul(e.zext64(index), c.step64));
    Type ty = c.loop.getInductionVar().getType();
    if (!ty.isInteger(64))
      iv = arith::TruncIOp::create(b, loc, ty, iv);
    return iv;
  };
  auto indexOf = [&](Counter c) -> Value {
    Value iv = e.sext64(c.loop.getInductionVar());
    return arith::TruncIOp::create(b, loc, b.getI32Type(),
                                   arith::DivSIOp::create(b, loc, e.sub(iv, c.lb64), c.step64));
  };
  // The mma loop's bounds: once here, or where they vary, computed again in
  // each outer iteration (below, in the producer's and the consumers' code).
  Counter innerCount;
  Value trips32;
  if (!varying) {
    innerCount = counterOf(forOp);
    trips32 = innerCount.trips32;
  }
  // Loops one after the other whose bounds are the same in every outer
  // iteration (or with no outer loop): each one's bounds (known before the
  // first), and the ring's iterations before it (`bases`, null for the
  // first). Varying ones count their runs as one loop's (`ringBase`).
  SmallVector<Counter> counts{innerCount};
  SmallVector<Value> bases{Value()};
  for (size_t k = 1; k < loops.size() && !varying; ++k) {
    counts.push_back(counterOf(loops[k]));
    bases.push_back(k == 1 ? counts[0].trips32 : e.add(bases[k - 1], counts[k - 1].trips32));
  }
  // In an outer loop the ring runs all the loops' iterations (`perOuter`)
  // in each of its iterations.
  Value perOuter;
  if (sequence && outer && !varying)
    perOuter = e.add(bases.back(), counts.back().trips32);
  // The ring's iteration of loop k's iteration i (in outer iteration o).
  auto inSequence = [&](size_t k, Value o, Value i) {
    Value at = bases[k] ? e.add(bases[k], i) : i;
    return outer ? e.add(e.mul(o, perOuter), at) : at;
  };
  Counter outerCount;
  if (outer)
    outerCount = counterOf(outer);
  // With varying bounds, each thread's running total of the ring's
  // iterations before this run (a local variable, in registers after
  // LLVM's SROA: the alloca is in the entry block).
  Value ringBase;
  if (varying && !async) {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&func.getBody().front());
    ringBase = LLVM::AllocaOp::create(b, loc, LLVM::LLVMPointerType::get(b.getContext()),
                                      b.getI32Type(), e.i32(1));
  }
  // Makes loop k the current one, where its run starts: innerCount and
  // trips32 are its. With varying bounds they are computed there (by the
  // producer from its copy of the outer body, `map`), and where the ring
  // counts on across the runs (TMA) the run's base, the ring's iterations
  // before it, is read from ringBase and the run's trip count added.
  auto enter = [&](size_t k, IRMapping *map = nullptr) -> Value {
    if (!varying) {
      innerCount = counts[k];
      trips32 = counts[k].trips32;
      return Value();
    }
    innerCount = counterOf(loops[k], map);
    trips32 = innerCount.trips32;
    if (!ringBase)
      return Value();
    Value base = LLVM::LoadOp::create(b, loc, b.getI32Type(), ringBase);
    LLVM::StoreOp::create(b, loc, e.add(base, trips32), ringBase);
    return base;
  };
  // The ops (of the mma loop's body, and of the outer loop's) that the
  // positions of the staged loads, and the parts (narrow) of tensors made
  // in the outer loop that they read, are computed by, which the producer
  // runs again (producerCanReplay: scalar code, a grouped kernel's offsets).
  DenseSet<int64_t> writtenParams = tile::writtenParams(func);
  SetVector<Operation *> slice;
  struct Root {
    SmallVector<Value> work;
    tile::LoadOp at;
    const char *what; // what the values position
  };
  SmallVector<Root> roots;
  for (Staged &st : staged) {
    if (st.resident && !perTile)
      continue;
    SmallVector<Value> work(st.o.load.getIndices());
    if (outer && st.o.view->getBlock() == outer.getBody())
      work.push_back(st.o.view);
    roots.push_back({work, st.o.load, "the position of a tile loaded for an mma"});
  }
  if (varying)
    for (scf::ForOp loop : loops)
      roots.push_back({boundsOf(loop), staged.front().o.load,
                       "the bounds of an mma loop inside an outer loop"});
  // A loop whose staged tiles feed only mmas predicated on one flag (a
  // block-sparse loop, `if c { acc = mma(load(..), load(..), acc); }`): the
  // producer computes the flag too, and where it fails arrives on the
  // stage's full barrier without copying (the consumers skip the products
  // and release the stage unread). With TMA, not in a pair of programs,
  // and where the producer can compute the flag (scalar code over scalar
  // loads of tensors the kernel does not write, the loop variable).
  DenseMap<Operation *, Value> skipFlags;
  // Adds to `into` the ops of the loops' bodies (and the outer loop's) that
  // `work`'s values are computed by; says which value stops the producer
  // from computing them again: one the loops carry, or one it cannot
  // replay (producerCanReplay).
  enum class Replay { ok, carried, unreplayable };
  auto collectSlice = [&](SmallVector<Value> work, SetVector<Operation *> &into) {
    while (!work.empty()) {
      Value v = work.pop_back_val();
      if (auto arg = dyn_cast<BlockArgument>(v)) {
        bool carried = llvm::any_of(loops, [&](scf::ForOp l) {
                         return arg.getOwner() == l.getBody() && arg != l.getInductionVar();
                       }) ||
                       (outer && arg.getOwner() == outer.getBody() &&
                        arg != outer.getInductionVar());
        if (carried)
          return Replay::carried;
        continue;
      }
      Operation *def = v.getDefiningOp();
      bool inside = llvm::any_of(loops, [&](scf::ForOp l) { return def->getBlock() == l.getBody(); }) ||
                    (outer && def->getBlock() == outer.getBody());
      if (!inside || into.contains(def))
        continue;
      if (!producerCanReplay(def, writtenParams))
        return Replay::unreplayable;
      into.insert(def);
      // The values it uses, its regions' too (those made outside them).
      def->walk([&](Operation *inner) {
        for (Value operand : inner->getOperands())
          if (!def->isAncestor(operand.getParentRegion()->getParentOp()))
            work.push_back(operand);
      });
    }
    return Replay::ok;
  };
  if (!async && !mc)
    for (scf::ForOp l : loops) {
      Value flag;
      bool only = true, any = false;
      for (Staged &st : staged) {
        if (st.resident || st.loop != l)
          continue;
        any = true;
        for (OpOperand &use : st.chain.back()->getResult(0).getUses()) {
          tile::MmaOp mma = tile::mmaOfOperand(use);
          only &= mma && mma.getPred() && (!flag || mma.getPred() == flag);
          if (only)
            flag = mma.getPred();
        }
      }
      SetVector<Operation *> flagSlice;
      if (any && only && flag && collectSlice({flag}, flagSlice) == Replay::ok) {
        skipFlags[l] = flag;
        slice.insert(flagSlice.begin(), flagSlice.end());
      }
    }
  for (Root &root : roots) {
    Replay r = collectSlice(root.work, slice);
    if (r == Replay::carried)
      return root.at.emitError() << root.what
                                 << " may depend on the loop variable but not on values the "
                                    "loop carries";
    if (r == Replay::unreplayable)
      return root.at.emitError() << root.what
                                 << " must be computed from scalars (and scalar loads from "
                                    "tensors the kernel does not write)";
  }
  // The outer loop's part of the positions, made once per outer iteration
  // (at the top of the producer's outer loop): it may hold 64-bit
  // divisions (a grouped tile order), too slow to redo per stage.
  IRMapping outerMap;
  auto cloneOuterSlice = [&](Value o) {
    outerMap.map(outer.getInductionVar(), ivAt(outerCount, o));
    for (Operation &op : outer.getBody()->without_terminator())
      if (slice.contains(&op))
        b.clone(op, outerMap);
  };
  auto originsAt = [&](Value o, Value i, Staged &st) {
    SmallVector<Value> origins;
    IRMapping map = outerMap;
    if (!st.resident) {
      map.map(st.loop.getInductionVar(), ivAt(innerCount, i));
      for (Operation &op : st.loop.getBody()->without_terminator())
        if (slice.contains(&op))
          b.clone(op, map);
    }
    ArrayRef<int64_t> shape = st.o.load.getType().getShape();
    for (auto [d, idx] : llvm::enumerate(st.o.load.getIndices()))
      origins.push_back(e.mul(e.sext64(map.lookupOrDefault(idx)), e.i64(shape[d])));
    return origins;
  };
  // Copies the tiles `which` of iteration i (of `loop`: the current one)
  // into `base` (+ their offsets) and arrives on `bar` when they are there.
  auto copyInto = [&](Value o, Value i, Value base, Value bar, bool resident,
                      scf::ForOp loop = {}) {
    SmallVector<SmallVector<Value>> origins;
    SmallVector<Staged *> these;
    for (Staged &st : staged)
      if (st.resident == resident && (resident || !loop || st.loop == loop)) {
        these.push_back(&st);
        origins.push_back(originsAt(o, i, st));
      }
    SmallVector<Operand *> ops;
    for (Staged *st : these)
      ops.push_back(&st->o);
    copyStage(b, loc, ops, origins, base, [&] { return bar; }, tid, mc ? &*mc : nullptr);
  };

  // The loaded (possibly reshaped) tile, or for a transpose the same bytes
  // read transposed, where the copy put it; the chain goes once everything
  // is built (the builder may point at one of its ops).
  // A tile that feeds mmas both as loaded and transposed (its chain ends at
  // the load): each transpose becomes the same bytes read column-major.
  auto replaceChain = [&](Staged &st, Value ptr) {
    Operation *last = st.chain.back();
    auto ty = cast<RankedTensorType>(last->getResult(0).getType());
    Value tileV = tile::SharedTileOp::create(b, loc, ty, ptr);
    last->getResult(0).replaceAllUsesWith(tileV);
    for (Operation *user : llvm::make_early_inc_range(tileV.getUsers()))
      if (auto t = dyn_cast<tile::PermuteOp>(user)) {
        t.replaceAllUsesWith(tile::SharedTileOp::create(b, loc, t.getType(), ptr).getResult());
        t.erase();
      }
  };
  // Stage i % S of the ring (i: the ring's iteration, i32) and its base.
  // Buffer i % n of a ring of n (the S stages; a persistent kernel's Q
  // buffers, `slots`) and the phase of its use i: the consumers wait for
  // the full barrier's phase (i / n) & 1, the producer for the empty
  // barrier's other one (which a fresh barrier passes).
  auto slotOf = [&](Value i, int64_t n) { return e.zext64(e.remu(i, e.i32(n))); };
  auto phaseOf = [&](Value i, int64_t n) { return e.band(e.divu(i, e.i32(n)), e.i32(1)); };
  auto stageIndex = [&](Value i) { return slotOf(i, S); };
  auto stageAt = [&](Value i) {
    return e.gep(smem, e.add(e.i64(ringOffset), e.mul(stageIndex(i), e.i64(stageBytes))));
  };
  auto eraseChains = [&] {
    for (Staged &st : staged)
      for (Operation *op : llvm::reverse(st.chain))
        op->erase();
    for (scf::ForOp loop : loops)
      loop->removeAttr(tile::kPipelineAttrName);
  };

  // STAGES = 1 (sm_80): the phase of each tile `forOp` stages (0: every read
  // before the split point, 1: first read at it) and the split point, the
  // op of the loop's body that holds the first read of the tile read last
  // (attention's P V, where V is first read). An error at the loop's first
  // mma where the tiles are not read in two such turns.
  auto splitPhases = [&](scf::ForOp forOp) -> FailureOr<Operation *> {
    Block *body = forOp.getBody();
    struct Reads {
      Staged *st;
      Operation *first = nullptr, *last = nullptr;
    };
    SmallVector<Reads> reads;
    Operation *split = nullptr;
    for (Staged &st : staged) {
      if (st.resident || st.loop != forOp)
        continue;
      Reads r{&st};
      for (Operation *user : st.chain.back()->getResult(0).getUsers()) {
        Operation *top = body->findAncestorOpInBlock(*user);
        if (!top)
          continue;
        if (!r.first || top->isBeforeInBlock(r.first))
          r.first = top;
        if (!r.last || r.last->isBeforeInBlock(top))
          r.last = top;
      }
      if (!r.first)
        continue;
      reads.push_back(r);
      if (!split || split->isBeforeInBlock(r.first))
        split = r.first;
    }
    bool ok = false;
    for (Reads &r : reads) {
      r.st->phase = r.first == split ? 1 : 0;
      if (r.st->phase == 0)
        ok = true;
    }
    for (Reads &r : reads)
      if (r.st->phase == 0 && !r.last->isBeforeInBlock(split))
        ok = false;
    if (ok)
      return split;
    Operation *at = forOp;
    forOp.getBody()->walk([&](tile::MmaOp mma) {
      if (at == forOp.getOperation())
        at = mma;
    });
    return at->emitError() << "kernel '" << func.getSymName()
                           << "': STAGES = 1 (one buffer per tile, in FlashAttention-2's "
                              "order) needs the tiles the loop loads read in two turns, all "
                              "reads of the first (K) before the first read of the others "
                              "(V); use STAGES = 2";
  };

  // ---- sm_80: every thread copies with cp.async ---------------------------
  // FlashAttention-2's pipeline: the tiles loaded before the loop (one
  // cp.async group), stages 0 .. S-2 before it (a group each), and at the
  // top of iteration i: wait until stage i's group has landed, bar.sync
  // (every thread's copies visible, every warp done with stage i - 1),
  // copy iteration i + S - 1 into stage (i - 1) % S and commit. Each run of
  // the loop (one per iteration of a persistent kernel's outer loop) fills
  // the ring before it and drains it after it.
  if (async) {
    int64_t threads = 128 * C;
    // Per staged tile: whether cp.async can copy its view, asked where the
    // views are (a part made in the outer loop: at the top of the mma loop's
    // run).
    SmallVector<Value> fast;
    auto askFast = [&] {
      for (Staged &st : staged)
        fast.push_back(asyncCopyable(b, loc, st.o));
    };
    bool viewsInOuter = outer && llvm::any_of(staged, [&](Staged &st) {
                          return st.o.view->getBlock() == outer.getBody();
                        });
    if (!viewsInOuter)
      askFast();
    Value copier = tid; // the thread index the copies' positions derive from
    // Where registers bound the loop, the copies' positions are computed in
    // the loop (below), and only there may a copy take bands narrower than 8
    // chunks (copyAsyncRegular).
    const bool inLoopPositions = mmaSyncRegisterBound(C);
    // (Loops one after the other: the current loop's tiles.)
    scf::ForOp current;
    auto copyAsyncInto = [&](Value i, Value base, bool resident, int phase = -1) {
      SmallVector<SmallVector<Value>> origins;
      SmallVector<Operand *> ops;
      SmallVector<Value> fastOps;
      for (auto [st, f] : llvm::zip(staged, fast))
        if (st.resident == resident && (resident || st.loop == current) &&
            (phase < 0 || st.phase == phase)) {
          ops.push_back(&st.o);
          origins.push_back(originsAt(Value(), i, st));
          fastOps.push_back(f);
        }
      copyStageAsync(b, loc, ops, origins, fastOps, base, copier, threads, inLoopPositions);
    };
    // One group per stage, empty where the loop is shorter: the waits count
    // groups.
    auto commit = [&] { NVVM::CpAsyncCommitGroupOp::create(b, loc); };
    auto copyResident = [&] {
      copyAsyncInto(Value(), smem, /*resident=*/true);
      commit();
      for (Staged &st : staged)
        if (st.resident)
          replaceChain(st, e.gep(smem, e.i64(st.o.smemOffset)));
    };
    if (anyResident && !perTile)
      copyResident();
    // Each loop of several in turn: its own fill and drain of the ring.
    for (size_t k = 0; k < loops.size(); ++k) {
      scf::ForOp forOp = loops[k];
      current = forOp;
      copier = tid;
      b.setInsertionPoint(forOp);
      if (viewsInOuter)
        askFast();
      // A persistent kernel's Q: copied again at the top of each outer
      // iteration (before its first loop), after the barrier that ends the
      // run before (every thread's reads of the old one are done); the
      // first iteration's wait covers its group.
      if (perTile && k == 0) {
        // Read after the loop too: every thread is done with the last
        // iteration's before the copy replaces it.
        if (residentAfterLoop)
          NVVM::Barrier0Op::create(b, loc);
        copyResident();
      }
      enter(k);
      // STAGES = 1: FlashAttention-2's order, one buffer per tile. Before
      // the loop, K(0); at the top of iteration i, once K(i) has landed and
      // every warp is done with V(i - 1), V(i); at the split point (the
      // first read of V), once V(i) has landed and every warp is done with
      // K(i), K(i + 1).
      Operation *split = nullptr;
      if (S == 1) {
        FailureOr<Operation *> at = splitPhases(forOp);
        if (failed(at))
          return failure();
        split = *at;
      }
      for (int64_t s = 0; s + 1 < std::max<int64_t>(S, 2); ++s) {
        e.ifThen(e.ult(e.i32(s), trips32), [&] {
          copyAsyncInto(e.i32(s), stageAt(e.i32(s)), /*resident=*/false, split ? 0 : -1);
        });
        commit();
      }
      {
        OpBuilder::InsertionGuard g(b);
        b.setInsertionPointToStart(forOp.getBody());
        Value i = indexOf(innerCount);
        NVVM::CpAsyncWaitGroupOp::create(b, loc,
                                         b.getI32IntegerAttr(int32_t(split ? 0 : S - 2)));
        NVVM::Barrier0Op::create(b, loc);
        Value next = e.add(i, e.i32(split ? 1 : S - 1));
        // Where registers bound the loop (mmaSyncRegisterBound), the copies'
        // strides and the thread index pass through an opaque move in the
        // loop, so that each chunk's row and row offset are computed where
        // they are used instead of hoisted out of the loop.
        if (inLoopPositions)
          copier = opaqueCopy(b, loc, tid);
        for (Staged &st : staged) {
          if (st.resident || !inLoopPositions || st.loop != forOp)
            continue;
          st.o.strides.clear();
          for (Value stride : st.o.view.getStrides())
            st.o.strides.push_back(opaqueCopy(b, loc, stride));
        }
        if (split)
          copyAsyncInto(i, stageAt(i), /*resident=*/false, 1);
        else
          e.ifThen(e.ult(next, trips32),
                   [&] { copyAsyncInto(next, stageAt(next), /*resident=*/false); });
        commit();
        Value stage = stageAt(i);
        for (Staged &st : staged)
          if (!st.resident && st.loop == forOp)
            replaceChain(st, e.gep(stage, e.i64(st.o.smemOffset)));
        if (split) {
          b.setInsertionPoint(split);
          NVVM::CpAsyncWaitGroupOp::create(b, loc, b.getI32IntegerAttr(0));
          NVVM::Barrier0Op::create(b, loc);
          e.ifThen(e.ult(next, trips32),
                   [&] { copyAsyncInto(next, stageAt(next), /*resident=*/false, 0); });
          commit();
        }
      }
      b.setInsertionPointAfter(forOp);
      NVVM::CpAsyncWaitGroupOp::create(b, loc, b.getI32IntegerAttr(0));
      // The next run of the loop (or the next loop) refills stages a slower
      // warp may still read; a tile read after the loop (a chained mma's) is
      // every thread's copy (the loop may have run no iteration, whose
      // barrier would have shown it).
      if (outer || residentAfterLoop || k + 1 < loops.size())
        NVVM::Barrier0Op::create(b, loc);
    }
    eraseChains();
    return success();
  }

  // Registers (setmaxnreg) as pipelineRegisters divides them. A producer
  // that copies more than two tiles per stage (three TMA copies: a and two
  // b's) spilled at 72 registers (236 bytes in ptxas, none at 104); so do
  // most persistent kernels' producers (matmul_persistent at 128 x 128:
  // 124 bytes). Those that load a tile per outer iteration (attention's Q)
  // with at most 4 divisions by values known only at launch in their
  // per-tile positions and at most 4 TMA boxes per stage (attention at D
  // <= 128) do not, and their consumers measured 2-6% faster with the 16
  // registers more; more divisions (LAYOUT = 1: 8) or boxes (D = 256: 8)
  // spilled.
  bool reallocate = C >= 2;
  // (Loops one after the other: the largest stage's.)
  int64_t copiesPerStage = 0;
  for (scf::ForOp loop : loops)
    copiesPerStage = std::max<int64_t>(
        copiesPerStage,
        llvm::count_if(staged, [&](const Staged &st) { return !st.resident && st.loop == loop; }));
  constexpr int64_t kLightDivisions = 4, kLightBoxes = 4;
  int64_t boxesPerStage = 0;
  for (const Staged &st : staged)
    if (!st.resident)
      boxesPerStage += st.o.boxes();
  int64_t outerDivisions = 0;
  for (Operation *op : slice)
    if (outer && op->getBlock() == outer.getBody())
      op->walk([&](Operation *inner) {
        if (isa<arith::DivSIOp, arith::DivUIOp, arith::RemSIOp, arith::RemUIOp,
                arith::CeilDivSIOp, arith::CeilDivUIOp, arith::FloorDivSIOp>(inner) &&
            !matchPattern(inner->getOperand(1), m_Constant()))
          ++outerDivisions;
      });
  // Whether every mma of the loop only accumulates into what the loop
  // carries (the matmul; WgmmaLowering keeps one group in flight below
  // where its operands are loaded tiles too). Such consumers need no more
  // than 200 registers, and their producer spilled at 72 (A^T B at 128 x
  // 128: 116 bytes in ptxas; the plain product with a carried scalar: 92).
  // So did a loop of predicated products waited for in their branch
  // (block_sparse in that form: 84), as one that starts from computed
  // registers still is.
  bool accumulates = llvm::all_of(loops, [](scf::ForOp l) { return onlyAccumulates(l); });
  // A loop of products (FP8 block scales in two halves) needs the 216 for
  // two sums and a product: at 200 its consumers spilled 60-124 bytes, its
  // producer at 72 none in one program per tile and 16-24 bytes when
  // persistent, which ran faster (H100, 4096^3: 875-906 TF/s against the
  // 128-column kernel's 774-791).
  bool busyProducer =
      !llvm::any_of(loops, loopOfProducts) &&
      (copiesPerStage > 2 || (!outer && (accumulates || llvm::any_of(loops, hasPredicatedMma))) ||
       (outer && !(perTile && outerDivisions <= kLightDivisions && boxesPerStage <= kLightBoxes)));
  PipelineRegisters regs = pipelineRegisters(C, busyProducer);
  int32_t producerRegs = regs.producer, consumerRegs = regs.consumer;
  // ---- producer: warpgroup 0 ---------------------------------------------
  e.ifThen(e.eq(wg, e.i32(0)), [&] {
    if (reallocate)
      setMaxRegisters(b, loc, producerRegs, false);
    if (anyResident && !perTile)
      copyInto(Value(), Value(), smem, barrierAt(e.i64(2 * S)), /*resident=*/true);
    if (varying)
      LLVM::StoreOp::create(b, loc, e.i32(0), ringBase);
    Block *exitBlock = b.getInsertionBlock();
    Block::iterator exitPoint = b.getInsertionPoint();
    Value o = e.i32(0);
    scf::ForOp loopO;
    if (outer) {
      loopO = scf::ForOp::create(b, loc, e.i32(0), outerCount.trips32, e.i32(1));
      b.setInsertionPointToStart(loopO.getBody());
      o = loopO.getInductionVar();
      cloneOuterSlice(o);
      // Parts made in the outer loop: the producer's own copies.
      for (Staged &st : staged)
        if (st.o.view->getBlock() == outer.getBody())
          st.o.view = outerMap.lookup(st.o.view.getResult()).getDefiningOp<tile::MakeViewOp>();
      // This tile's Q (the tiles loaded before the mma loop) into buffer
      // o % slots, once the consumers have released its last use.
      if (perTile) {
        Value slot = slotOf(o, slots);
        Value parity = e.bxor(phaseOf(o, slots), e.i32(1));
        NVVM::MBarrierTryWaitParityOp::create(b, loc, barrierAt(e.add(e.i64(2 * S + 2), slot)),
                                              parity, e.i32(10000000));
        copyInto(o, Value(), e.gep(smem, e.mul(slot, e.i64(slotBytes))),
                 barrierAt(e.add(e.i64(2 * S), slot)), /*resident=*/true);
      }
    }
    // Each loop's copies in turn (one, or several one after the other).
    for (size_t k = 0; k < loops.size(); ++k) {
      scf::ForOp mmaLoop = loops[k];
      Value base = enter(k, &outerMap); // the ring's iterations before this run
      auto loop = scf::ForOp::create(b, loc, e.i32(0), trips32, e.i32(1));
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(loop.getBody());
      Value i = loop.getInductionVar();
      // The ring's iteration.
      Value gi = varying    ? e.add(base, i)
                 : sequence ? inSequence(k, o, i)
                            : e.add(e.mul(o, trips32), i);
      Value s64 = stageIndex(gi);
      Value parity = e.bxor(phaseOf(gi, S), e.i32(1));
      NVVM::MBarrierTryWaitParityOp::create(b, loc, barrierAt(e.add(e.i64(S), s64)), parity,
                                            e.i32(10000000));
      Value stage = e.gep(smem, e.add(e.i64(ringOffset), e.mul(s64, e.i64(stageBytes))));
      Value flag = skipFlags.lookup(mmaLoop);
      if (!flag) {
        copyInto(o, i, stage, barrierAt(s64), /*resident=*/false, mmaLoop);
        continue;
      }
      IRMapping map = outerMap;
      map.map(mmaLoop.getInductionVar(), ivAt(innerCount, i));
      for (Operation &op : mmaLoop.getBody()->without_terminator())
        if (slice.contains(&op))
          b.clone(op, map);
      auto branch = scf::IfOp::create(b, loc, TypeRange{}, map.lookupOrDefault(flag),
                                      /*addElseBlock=*/true);
      b.setInsertionPointToStart(branch.thenBlock());
      copyInto(o, i, stage, barrierAt(s64), /*resident=*/false, mmaLoop);
      b.setInsertionPointToStart(branch.elseBlock());
      e.ifThen(e.eq(tid, e.i32(0)), [&] {
        NVVM::MBarrierArriveOp::create(b, loc, Type(), barrierAt(s64),
                                       e.i32(kProducerArrivals));
      });
    }
    b.setInsertionPoint(exitBlock, exitPoint);
    // In a pair: wait for the other program's last releases (the ring ran
    // outer trips x trips iterations; tile-stage-shared pairs no varying
    // bounds).
    if (mc)
      awaitPartnerReleases(b, loc, *mc, outer ? e.mul(outerCount.trips32, trips32) : trips32, S,
                           [&](Value s64) { return barrierAt(e.add(e.i64(S), s64)); });
    LLVM::CallIntrinsicOp::create(b, loc, b.getStringAttr("llvm.nvvm.exit"), ValueRange{});
  });

  // ---- consumers -------------------------------------------------------------
  if (reallocate)
    setMaxRegisters(b, loc, consumerRegs, true);
  if (alternate) {
    // The ring's numbering keeps the original iterations (indexOf uses the
    // bounds read above); only this warpgroup's tiles run. The mainloops
    // take turns (CUTLASS's ordered barrier): a warpgroup starts waiting for
    // its tile's stages only after the other has waited for all of the
    // previous tile's, so every earlier fill of a stage has completed and
    // the phase parity it waits for cannot alias one two fills ahead
    // (skipping the other's fills, it would otherwise take a stale stage
    // for its own). Warpgroup 1 goes first: warpgroup 2 hands it the turn
    // before the loop; after the loop the one with the unmatched hand-over
    // takes it (warpgroup 1 runs ceil(T / 2) tiles, warpgroup 2 floor(T / 2)).
    {
      Value own = e.sub(wg, e.i32(1));
      e.ifThen(e.eq(own, e.i32(1)), [&] { pingPongArrive(e, wg); });
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPoint(forOp);
      pingPongSync(e, wg);
      b.setInsertionPointAfter(outer);
      Value odd = e.eq(e.remu(outerCount.trips32, e.i32(2)), e.i32(1));
      // T even: warpgroup 2's last hand-over is warpgroup 1's; T odd:
      // warpgroup 1's last is warpgroup 2's.
      Value absorbs = arith::SelectOp::create(b, loc, odd, e.eq(own, e.i32(1)),
                                              e.eq(own, e.i32(0)));
      e.ifThen(absorbs, [&] { pingPongSync(e, wg); });
    }
    Type ty = outer.getInductionVar().getType();
    auto toIv = [&](Value v32) -> Value {
      if (ty.isIndex())
        return arith::IndexCastOp::create(b, loc, ty, v32);
      return ty.isInteger(32) ? v32 : Value(arith::ExtUIOp::create(b, loc, ty, v32));
    };
    Value own = toIv(e.sub(wg, e.i32(1)));
    Value step = outer.getStep();
    outer.setLowerBound(arith::AddIOp::create(
        b, loc, outer.getLowerBound(), arith::MulIOp::create(b, loc, own, step)));
    outer.setStep(arith::MulIOp::create(b, loc, step, toIv(e.i32(int32_t(C)))));
  }
  if (anyResident && !perTile) {
    NVVM::MBarrierTryWaitParityOp::create(b, loc, barrierAt(e.i64(2 * S)), e.i32(0),
                                          e.i32(10000000));
    for (Staged &st : staged)
      if (st.resident)
        replaceChain(st, e.gep(smem, e.i64(st.o.smemOffset)));
  }
  // Per outer iteration: this tile's Q in buffer o % slots (per-tile
  // resident tiles), released after the loop, or at the end of the outer
  // iteration where a chained mma reads them (below); with varying bounds,
  // each run's trip count and the ring's iterations before it (below, per
  // loop).
  Value consumerBase, residentSlot;
  if (varying)
    LLVM::StoreOp::create(b, loc, e.i32(0), ringBase);
  // Each loop in turn (one, or several one after the other).
  for (size_t k = 0; k < loops.size(); ++k) {
    scf::ForOp forOp = loops[k];
    {
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPoint(forOp);
      consumerBase = enter(k);
      // This tile's Q, before the first loop (the loops after it read the
      // same buffer).
      if (perTile && k == 0) {
        Value o = indexOf(outerCount);
        residentSlot = slotOf(o, slots);
        NVVM::MBarrierTryWaitParityOp::create(b, loc,
                                              barrierAt(e.add(e.i64(2 * S), residentSlot)),
                                              phaseOf(o, slots), e.i32(10000000));
        for (Staged &st : staged)
          if (st.resident)
            replaceChain(st, e.gep(smem, e.add(e.i64(st.o.smemOffset),
                                               e.mul(residentSlot, e.i64(slotBytes)))));
      }
    }
    bool deferred = onlyAccumulates(forOp) && readsOnlyLoadedOperands(forOp);
    SmallVector<tile::MmaOp> loopMmas(forOp.getBody()->getOps<tile::MmaOp>());
    if (alternate && !deferred)
      return forOp.emitError("internal error: alternating consumers need a loop that only "
                             "accumulates");
    if (deferred)
      for (tile::MmaOp mma : loopMmas)
        mma->setAttr(kWgmmaWaitAttrName, b.getI64IntegerAttr(1));
    // The ring as the consumers see it: the wait until stage i % S is full,
    // this warp's arrival on its empty barrier.
    auto waitFull = [&](Value i) {
      Value s64 = stageIndex(i);
      Value parity = phaseOf(i, S);
      NVVM::MBarrierTryWaitParityOp::create(b, loc, barrierAt(s64), parity, e.i32(10000000));
    };
    auto arriveEmpty = [&](Value i) {
      releaseStage(b, loc, barrierAt(e.add(e.i64(S), stageIndex(i))), mc ? &*mc : nullptr);
    };
    // The intra-warpgroup overlap that tile-stage-shared planned
    // (MmaOverlap.h): the consumers run the rotated loop instead.
    std::optional<MmaOverlap> overlap;
    if (plan.get("overlap") && !outer && !deferred)
      overlap = planMmaOverlap(forOp, 128 * C);
    if (overlap) {
      OverlapRing ring;
      ring.trips = trips32;
      ring.ivAt = [&](Value i) { return ivAt(innerCount, i); };
      ring.stageBase = stageAt;
      ring.waitStage = [&](Value i) {
        waitFull(i);
        return stageAt(i);
      };
      ring.release = [&](Value i) { e.ifThen(releases(), [&] { arriveEmpty(i); }); };
      for (Staged &st : staged)
        if (!st.resident)
          ring.chains.push_back({st.chain, st.o.smemOffset});
      if (takesTurns(func, forOp, C))
        ring.pingPongWarpgroup = wg;
      buildOverlappedLoop(b, forOp, *overlap, ring); // erases the loop and its chains
      for (Staged &st : staged)
        if (st.resident)
          for (Operation *op : llvm::reverse(st.chain))
            op->erase();
      return success();
    }
    // One mma whose result is first read after other work of the iteration
    // (a loop written software-pipelined: block k's product is issued, block
    // k - 1's scaled add runs, then block k's product is carried on, as
    // examples/matmul_fp8.tile's matmul_fp8_block): its wait moves to that
    // first read, so the work before it runs while the tensor cores do.
    bool predicated = hasPredicatedMma(forOp);
    if (!deferred && loopMmas.size() == 1 && !predicated) {
      tile::MmaOp mma = loopMmas.front();
      Block *body = forOp.getBody();
      Operation *firstRead = nullptr;
      for (Operation *user : mma->getUsers()) {
        Operation *at = body->findAncestorOpInBlock(*user);
        if (at && (!firstRead || at->isBeforeInBlock(firstRead)))
          firstRead = at;
      }
      // The f32 tiles that work computes and that are read from the first
      // read on go through the wait too: defined anew by it, they cannot be
      // computed after it.
      SmallVector<Value> work;
      if (firstRead)
        work = f32TilesReadFrom(body, mma, firstRead);
      if (!work.empty()) {
        mma->setAttr(kWgmmaWaitAttrName, b.getI64IntegerAttr(-1));
        SmallVector<Value> tiles{mma.getResult()};
        tiles.append(work.begin(), work.end());
        waitBefore(b, loc, body, firstRead, tiles);
      }
    }
    // Two mmas whose second only feeds the next iteration (attention's
    // O += P V, carried): its group stays in flight into the next iteration,
    // whose first mma (S = Q K^T) is issued behind it and waited for with it
    // (tile.wgmma_wait over S and the carried accumulator, so that no read of
    // either moves above the wait). The two mmas of a turn at the tensor
    // cores then have no wait between them, and the stage of the iteration
    // before is released after that wait, as an accumulating loop's is.
    // Only where the loop's bounds change with the outer loop (causal
    // attention's key blocks per query block): measured on an H100 (session
    // 36, B4 H16 S4096 D128), causal 511-518 -> 546-552 TF/s, without the
    // mask 616-617 -> 605-607.
    Operation *carriedWait = nullptr;
    if (!deferred && loopMmas.size() == 2 && !predicated && varying && !sequence &&
        forOp.getBody()->getOps<tile::SharedCopyOp>().empty()) {
      tile::MmaOp first = loopMmas.front(), last = loopMmas.back();
      Block *body = forOp.getBody();
      auto isF32 = [](Value v) {
        return cast<RankedTensorType>(v.getType()).getElementType().isF32();
      };
      // While both are in flight a thread holds S, the accumulator and the
      // last mma's register operand (P) at once, beside what the loop
      // carries and the addresses: where that leaves less than 32 of the
      // consumers' registers, ptxas serializes the wgmmas (C7511, C7512:
      // attention at D = 64 with BN = 256, 224 of 216; with three consumer
      // warpgroups and BN = 128, 128 of 152).
      int64_t threads = 128 * C;
      bool fits = tileRegisters(first.getResult(), threads) +
                      tileRegisters(last.getResult(), threads) +
                      tileRegisters(last.getA(), threads) + 32 <=
                  consumerRegs;
      if (fits && last->hasOneUse() && isa<scf::YieldOp>(*last->getUsers().begin()) &&
          isF32(first.getResult()) && isF32(last.getResult())) {
        Value carried = forOp.getRegionIterArg(last->getUses().begin()->getOperandNumber());
        auto afterFirst = [&](OpOperand &use) {
          Operation *at = body->findAncestorOpInBlock(*use.getOwner());
          return at && first->isBeforeInBlock(at);
        };
        if (llvm::all_of(carried.getUses(), afterFirst)) {
          first->setAttr(kWgmmaWaitAttrName, b.getI64IntegerAttr(-1));
          last->setAttr(kWgmmaWaitAttrName, b.getI64IntegerAttr(-1));
          carriedWait = waitBefore(b, loc, body, first->getNextNode(),
                                   {first.getResult(), carried});
        }
      }
    }
    // Several mmas from zeros, each waited for where it is issued (the
    // products of FP8 block scales over two 128-column halves: p0 = mma(a,
    // b0, zeros), acc0 += p0 * s0, p1 = mma(a, b1, zeros), acc1 += p1 * s1):
    // the f32 tiles computed between one and the next that are read after
    // the next go through a wait before it (nothing is in flight there, so
    // it waits for nothing). Otherwise LLVM sinks that work below the next
    // mma, both products are live at once, and ptxas spilled (552 bytes in
    // that kernel).
    bool products = !deferred && !carriedWait && loopOfProducts(forOp) &&
                    llvm::none_of(loopMmas, [](tile::MmaOp mma) {
                      return mma->hasAttr(kWgmmaWaitAttrName);
                    });
    if (products) {
      Block *body = forOp.getBody();
      for (size_t i = 1; i < loopMmas.size(); ++i) {
        Operation *prev = loopMmas[i - 1], *next = loopMmas[i];
        next->setAttr(kSharedProductAttrName, b.getUnitAttr());
        SmallVector<Value> work = f32TilesReadFrom(body, prev, next);
        if (!work.empty())
          waitBefore(b, loc, body, next, work);
      }
    }
    bool inFlight = deferred || carriedWait;
    // Two consumer warpgroups with several dependent mmas per iteration
    // (attention: S = QK^T, softmax, O += PV) take turns at the tensor cores,
    // so that one's softmax runs while the other's wgmmas do: a turn runs
    // from the last mma of an iteration to the first of the next (PV(j) and
    // QK^T(j + 1), issued back to back). Warpgroup 1 takes the first turn
    // (warpgroup 2 arrives on its barrier before the loop) and closes its last
    // after the loop, so every arrival meets a wait. With one mma whose result
    // is worked on in the loop (FP8 block scales: p = mma(.., zeros), acc +=
    // p * scales) a turn is that mma: wait, issue, hand over, then the
    // elementwise work runs while the other warpgroup's wgmmas do; warpgroup
    // 1 absorbs warpgroup 2's last hand-over after the loop.
    // (Not where a computed operand is written to shared memory in the
    // loop: that waits for both warpgroups, which the turns would hold apart.)
    bool copiesOperands = !forOp.getBody()->getOps<tile::SharedCopyOp>().empty();
    if (!deferred && !loopMmas.empty() && takesTurns(func, forOp, C) && !copiesOperands &&
        !sequence && !predicated) {
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPoint(forOp);
      Value own = e.sub(wg, e.i32(1)); // 0 or 1
      e.ifThen(e.eq(own, e.i32(1)), [&] { pingPongArrive(e, wg); });
      bool single = loopMmas.size() == 1;
      if (!single)
        pingPongSync(e, wg);
      loopMmas.front()->setAttr(kPingPongAttrName,
                                b.getI32IntegerAttr(single ? kPingPongSync | kPingPongArrive
                                                           : kPingPongArrive));
      if (!single)
        loopMmas.back()->setAttr(kPingPongAttrName, b.getI32IntegerAttr(kPingPongSync));
      b.setInsertionPointAfter(forOp);
      e.ifThen(e.eq(own, e.i32(0)), [&] {
        if (single)
          pingPongSync(e, wg);
        else
          pingPongArrive(e, wg);
      });
    }
    {
      // The ring's iteration of this run's iteration `local`: after the
      // runs before (varying bounds), the outer iterations before, or the
      // loops before.
      auto ringIteration = [&](Value local) {
        if (varying)
          return e.add(consumerBase, local);
        if (sequence)
          return inSequence(k, outer ? indexOf(outerCount) : Value(), local);
        if (outer)
          return e.add(e.mul(indexOf(outerCount), trips32), local);
        return local;
      };
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(forOp.getBody());
      Value inner = indexOf(innerCount);
      Value i = ringIteration(inner);
      waitFull(i);
      Value stage = stageAt(i);
      for (Staged &st : staged)
        if (!st.resident && st.loop == forOp)
          replaceChain(st, e.gep(stage, e.i64(st.o.smemOffset)));
      // Every mma of the iteration has completed (WgmmaLowering waits for
      // each): the releasers (`releases`: lane 0 of each consumer warp, or
      // every consumer thread where the threads read a staged tile) release
      // the stage. When every mma only accumulates (acc = mma(.., acc), the
      // matmul), each keeps its group in flight and the stage of the
      // iteration before is released. With the last mma in flight into the
      // next iteration, the stage before is released right after the wait
      // for both, before the rest of the iteration's work.
      b.setInsertionPoint(forOp.getBody()->getTerminator());
      if (carriedWait)
        b.setInsertionPointAfter(carriedWait);
      if (!inFlight) {
        e.ifThen(releases(), [&] { arriveEmpty(i); });
      } else {
        e.ifThen(arith::AndIOp::create(b, loc, e.ne(inner, e.i32(0)), releases()),
                 [&] { arriveEmpty(e.sub(i, e.i32(1))); });
        // After the loop: the last group, then the last iteration's stage.
        // The wait defines the accumulators anew (tile.wgmma_wait), so no
        // read of them (the epilogue's casts) is moved above it: ptxas would
        // serialize every wgmma of the loop (C7514).
        b.setInsertionPointAfter(forOp);
        SmallVector<Value> accs, inits;
        auto yield = cast<scf::YieldOp>(forOp.getBody()->getTerminator());
        for (auto [pos, v] : llvm::enumerate(yield.getOperands()))
          if (v.getDefiningOp<tile::MmaOp>()) {
            accs.push_back(forOp.getResult(pos));
            inits.push_back(forOp.getInitArgs()[pos]);
          }
        Value ran;
        // In an outer loop of a constant trip count LLVM put the copies of a
        // loop of no iterations (its starting accumulators) before this
        // wait, on their own path into it, and ptxas serialized the loop's
        // wgmmas (C7515). There the wait runs only where the loop did, and
        // that path joins after it with the starting values. (Not
        // elsewhere: in matmul_tn and grouped_mm_persistent the branch made
        // ptxas spill 724 and 72 bytes.)
        auto constant = [](Value v) { return getConstantIntValue(v).has_value(); };
        if (outer && llvm::all_of(outer->getOperands().take_front(3), constant)) {
          ran = e.cmp(arith::CmpIPredicate::sgt, trips32, e.i32(0));
          auto guard = scf::IfOp::create(
              b, loc, ran,
              [&](OpBuilder &tb, Location l) {
                auto waited = tile::WgmmaWaitOp::create(tb, l, accs, /*pending=*/0);
                scf::YieldOp::create(tb, l, waited.getResults());
              },
              [&](OpBuilder &eb, Location l) { scf::YieldOp::create(eb, l, inits); });
          for (auto [acc, w] : llvm::zip(accs, guard.getResults()))
            acc.replaceUsesWithIf(w, [&](OpOperand &use) { return !guard->isAncestor(use.getOwner()); });
        } else {
          auto waited = tile::WgmmaWaitOp::create(b, loc, accs, /*pending=*/0);
          for (auto [acc, w] : llvm::zip(accs, waited.getResults()))
            acc.replaceAllUsesExcept(w, waited);
        }
        Value last = ringIteration(e.sub(trips32, e.i32(1)));
        if (!ran)
          ran = e.cmp(arith::CmpIPredicate::sgt, trips32, e.i32(0));
        e.ifThen(arith::AndIOp::create(b, loc, ran, releases()),
                 [&] { arriveEmpty(last); });
        // Alternating warpgroups: this tile's stages are all waited for; the
        // other warpgroup's turn.
        if (alternate)
          pingPongArrive(e, wg);
      }
      // Every mma reading this tile's Q has completed (after the last
      // loop): its buffer is free (the stages' releasers arrive).
      if (perTile && k + 1 == loops.size()) {
        if (residentAfterLoop)
          b.setInsertionPoint(outer.getBody()->getTerminator());
        else if (!inFlight)
          b.setInsertionPointAfter(forOp);
        e.ifThen(releases(), [&] {
          NVVM::MBarrierArriveOp::create(b, loc, Type(),
                                         barrierAt(e.add(e.i64(2 * S + 2), residentSlot)), Value());
        });
      }
    }
  }
  eraseChains();
  return success();
}

LogicalResult tilec::lowerGeneralPipelines(func::FuncOp func) {
  SmallVector<scf::ForOp> loops;
  func.walk([&](scf::ForOp f) {
    if (auto plan = f->getAttrOfType<DictionaryAttr>(tile::kPipelineAttrName);
        plan && plan.get("general"))
      loops.push_back(f);
  });
  // Loops one after the other in one block share one pipeline.
  for (size_t i = 0; i < loops.size();) {
    size_t j = i + 1;
    while (j < loops.size() && loops[j]->getBlock() == loops[i]->getBlock())
      ++j;
    if (failed(lowerGeneralPipeline(func, ArrayRef<scf::ForOp>(loops).slice(i, j - i))))
      return failure();
    i = j;
  }
  return success();
}

void tilec::mma::populateGeneralPipelinePatterns(const TypeConverter &converter,
                                                 ThreadLayout layout,
                                                 RewritePatternSet &patterns) {
  patterns.add<WgmmaLowering, MmaSyncLowering>(converter, patterns.getContext(), layout);
  patterns.add<WgmmaWaitLowering>(converter, patterns.getContext());
  patterns.add<ForwardOperandLowering<tile::SharedTileOp>>(converter, patterns.getContext());
  populateSharedCopyPatterns(converter, patterns);
}
