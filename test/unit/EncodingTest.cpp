//===- EncodingTest.cpp - the distributed encodings hold every element once -===//
//
// For each distributed encoding: over all threads, groups and registers,
// every element of the tile is held by exactly one consumer thread (padding
// registers lie past the end and are marked as such), a producer thread
// mirrors consumer 0, and the IR built by emitGroupBase folds to the same
// index as getGroupBase.
//
//===----------------------------------------------------------------------===//

#include "tilec/Dialect/Tile/IR/TileDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

#include <vector>

using namespace mlir;
using namespace tilec::tile;

namespace {

class EncodingTest : public ::testing::Test {
protected:
  EncodingTest() { ctx.loadDialect<TileDialect, arith::ArithDialect>(); }

  /// Checks that of threads [first, first + count), every element of
  /// `shape` is held by exactly one owner (isOwner).
  void expectEachElementOnce(DistributedEncodingAttr enc, ArrayRef<int64_t> shape,
                             unsigned first, unsigned count) {
    int64_t numel = ShapedType::getNumElements(shape);
    std::vector<int> held(numel, 0);
    for (unsigned t = first; t < first + count; ++t)
      for (int64_t g = 0; g < enc.getGroups(shape); ++g)
        for (unsigned v = 0; v < enc.getGroupWidth(); ++v) {
          int64_t e = enc.getGroupBase(shape, t, g) + v;
          if (e >= numel) {
            EXPECT_TRUE(enc.groupMayPad(shape, g)) << "thread " << t << " group " << g;
            continue;
          }
          ASSERT_GE(e, 0);
          ASSERT_LT(e, numel) << "thread " << t << " group " << g;
          if (enc.isOwner(t))
            ++held[e];
        }
    for (int64_t e = 0; e < numel; ++e)
      ASSERT_EQ(held[e], 1) << "element " << e;
  }

  /// emitGroupBase with a constant thread id folds to getGroupBase.
  void expectIRMatches(DistributedEncodingAttr enc, ArrayRef<int64_t> shape) {
    OpBuilder b(&ctx);
    Location loc = b.getUnknownLoc();
    auto module = ModuleOp::create(loc);
    b.setInsertionPointToStart(module.getBody());
    for (unsigned t : {0u, 1u, 5u, 31u, 37u, 127u, 128u, 131u, 200u, 255u})
      for (int64_t g = 0; g < std::min<int64_t>(enc.getGroups(shape), 6); ++g) {
        if (t >= enc.getThreadsPerBlock())
          continue;
        Value tid = arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(t));
        Value base = enc.emitGroupBase(b, loc, tid, shape, g);
        EXPECT_EQ(fold(base), enc.getGroupBase(shape, t, g)) << "thread " << t << " group " << g;
      }
    module->erase();
  }

  /// Evaluates an i64 value built only from constants and arith ops.
  int64_t fold(Value v) {
    Operation *op = v.getDefiningOp();
    SmallVector<Attribute> operands;
    for (Value o : op->getOperands())
      operands.push_back(IntegerAttr::get(o.getType(), fold(o)));
    if (auto c = dyn_cast<arith::ConstantOp>(op))
      return cast<IntegerAttr>(c.getValue()).getInt();
    SmallVector<OpFoldResult> results;
    if (failed(op->fold(operands, results)) || results.size() != 1)
      ADD_FAILURE() << "cannot fold " << op->getName().getStringRef().str();
    if (results.empty())
      return -1;
    if (auto attr = dyn_cast<Attribute>(results[0]))
      return cast<IntegerAttr>(attr).getInt();
    return fold(cast<Value>(results[0]));
  }

  MLIRContext ctx;
};

TEST_F(EncodingTest, BlockedHoldsEachElementOnceWithPadding) {
  auto enc = BlockedEncodingAttr::get(&ctx, /*vec=*/4, /*warps=*/4);
  EXPECT_EQ(enc.getThreadsPerBlock(), 128u);
  // 240 elements in one group of 512 slots: the last group pads.
  expectEachElementOnce(enc, {10, 24}, 0, 128);
  EXPECT_TRUE(DistributedEncodingAttr(enc).mayPad({10, 24}));
  // 4096 elements: 8 groups, no padding.
  expectEachElementOnce(enc, {64, 64}, 0, 128);
  EXPECT_EQ(enc.getGroups({64, 64}), 8);
  EXPECT_FALSE(DistributedEncodingAttr(enc).mayPad({64, 64}));
  expectIRMatches(enc, {64, 64});
}

TEST_F(EncodingTest, WgmmaHoldsEachElementOnceInItsConsumers) {
  auto enc = MmaEncodingAttr::get(&ctx, MmaKind::wgmma, 2);
  EXPECT_EQ(enc.getThreadsPerBlock(), 384u);
  EXPECT_EQ(enc.getLeaderThread(), 128u);
  expectEachElementOnce(enc, {128, 256}, 128, 256);
  expectEachElementOnce(enc, {1, 128, 96}, 128, 256);
  // The producer warpgroup takes consumer 0's positions.
  for (unsigned t = 0; t < 128; ++t)
    EXPECT_EQ(enc.getGroupBase({128, 256}, t, 3), enc.getGroupBase({128, 256}, t + 128, 3));
  // Row r of a 64-row block lives in the 4 lanes of one quad.
  EXPECT_EQ(enc.getGroupBase({128, 256}, 128 + 4, 0) / 256,
            enc.getGroupBase({128, 256}, 128 + 7, 0) / 256);
  expectIRMatches(enc, {128, 256});
}

TEST_F(EncodingTest, AlternatingWgmmaHoldsTheWholeTileInEachConsumer) {
  // Ping-pong over tiles: each of the two consumer warpgroups holds every
  // element of its own tile, at the places consumer 0 of a one-consumer
  // encoding has them.
  auto enc = MmaEncodingAttr::get(&ctx, MmaKind::wgmma, 2, /*swapped=*/false,
                                  /*alternate=*/true);
  auto one = MmaEncodingAttr::get(&ctx, MmaKind::wgmma, 1);
  EXPECT_EQ(enc.getThreadsPerBlock(), 384u);
  EXPECT_EQ(enc.getShare(), 1u);
  EXPECT_EQ(enc.getGroups({128, 128}), one.getGroups({128, 128}));
  for (unsigned t = 128; t < 256; t += 7)
    for (int64_t g = 0; g < enc.getGroups({128, 128}); g += 5) {
      EXPECT_EQ(enc.getGroupBase({128, 128}, t, g), one.getGroupBase({128, 128}, t, g));
      EXPECT_EQ(enc.getGroupBase({128, 128}, t + 128, g), one.getGroupBase({128, 128}, t, g));
    }
  expectEachElementOnce(enc, {128, 128}, 128, 128);
  expectEachElementOnce(enc, {64, 256}, 256, 128);
  expectIRMatches(enc, {128, 128});
}

TEST_F(EncodingTest, SwappedWgmmaHoldsEachElementOnceInItsConsumers) {
  auto enc = MmaEncodingAttr::get(&ctx, MmaKind::wgmma, 2, /*swapped=*/true);
  EXPECT_EQ(enc.getGroupWidth(), 1u);
  expectEachElementOnce(enc, {16, 128}, 128, 256);
  expectEachElementOnce(enc, {8, 256}, 128, 256);
  expectEachElementOnce(enc, {1, 32, 128}, 128, 256);
  // Register 0 of consumer 0's thread 0 is element (0, 0); register 1 is
  // the next row of the same column (wgmma's pair of N positions); lane 4
  // holds the next column.
  EXPECT_EQ(enc.getGroupBase({16, 128}, 128, 0), 0);
  EXPECT_EQ(enc.getGroupBase({16, 128}, 128, 1), 128);
  EXPECT_EQ(enc.getGroupBase({16, 128}, 128 + 4, 0), 1);
  // Consumer 1 holds columns 64 .. 127.
  EXPECT_EQ(enc.getGroupBase({16, 128}, 256, 0), 64);
  expectIRMatches(enc, {16, 128});
  expectIRMatches(enc, {32, 64 * 2});
}

TEST_F(EncodingTest, MmaSyncHoldsEachElementOnce) {
  auto enc = MmaEncodingAttr::get(&ctx, MmaKind::mma_sync, 2);
  EXPECT_EQ(enc.getThreadsPerBlock(), 256u);
  EXPECT_EQ(enc.getLeaderThread(), 0u);
  expectEachElementOnce(enc, {128, 64}, 0, 256);
  expectIRMatches(enc, {128, 64});
}

TEST_F(EncodingTest, FmaHoldsEachElementOnceInItsConsumers) {
  auto enc = MmaEncodingAttr::get(&ctx, MmaKind::fma, 2);
  EXPECT_EQ(enc.getGroupWidth(), 4u);
  expectEachElementOnce(enc, {128, 128}, 128, 256);
  expectIRMatches(enc, {128, 128});
}

TEST_F(EncodingTest, SliceOfWgmmaHoldsEachRowInOneQuad) {
  auto mma = MmaEncodingAttr::get(&ctx, MmaKind::wgmma, 2);
  auto enc = SliceEncodingAttr::get(&ctx, 1, mma);
  DistributedEncodingAttr slice = enc;
  EXPECT_EQ(slice.getThreadsPerBlock(), 384u);
  expectEachElementOnce(slice, {128}, 128, 256);
  expectEachElementOnce(slice, {256, 1}, 128, 256);
  // Each thread holds the rows its accumulator fragments cover.
  for (unsigned t : {128u, 133u, 200u, 383u})
    for (int64_t g = 0; g < slice.getGroups({128}); ++g)
      EXPECT_EQ(slice.getGroupBase({128}, t, g),
                DistributedEncodingAttr(mma).getGroupBase({128, 64}, t, 2 * (g / 2) * 8 + g % 2) / 64)
          << "thread " << t << " group " << g;
  expectIRMatches(slice, {128});
}

TEST_F(EncodingTest, SliceOfMmaSyncHoldsEachRowInOneQuad) {
  auto enc = SliceEncodingAttr::get(&ctx, 1, MmaEncodingAttr::get(&ctx, MmaKind::mma_sync, 2));
  expectEachElementOnce(enc, {128}, 0, 256);
  expectIRMatches(enc, {128});
}

TEST_F(EncodingTest, ColumnSliceOfWgmmaHoldsEachColumnWhereItsFragmentsAre) {
  auto mma = MmaEncodingAttr::get(&ctx, MmaKind::wgmma, 2);
  auto enc = SliceEncodingAttr::get(&ctx, 0, mma);
  DistributedEncodingAttr slice = enc;
  EXPECT_EQ(slice.getGroupWidth(), 2u);
  EXPECT_EQ(slice.getGroups({256}), 32);
  // Lanes 0-3 of the first consumer warp own the columns, once each.
  expectEachElementOnce(slice, {256}, 128, 256);
  expectEachElementOnce(slice, {1, 136}, 128, 256);
  // Every consumer thread holds the columns of its accumulator fragments:
  // group j of the slice is chunk j of the parent's groups (any row).
  for (unsigned t : {128u, 133u, 200u, 255u, 300u, 383u})
    for (int64_t g = 0; g < slice.getGroups({256}); ++g)
      for (int64_t mb : {0, 1})
        for (int64_t h : {0, 1})
          EXPECT_EQ(slice.getGroupBase({256}, t, g),
                    DistributedEncodingAttr(mma).getGroupBase(
                        {256, 256}, t, MmaEncodingAttr::fragmentGroup(mb, g, h, 32)) % 256)
              << "thread " << t << " group " << g;
  expectIRMatches(slice, {256});
}

TEST_F(EncodingTest, ColumnSliceOfMmaSyncIsOwnedByTheFirstWarp) {
  auto enc = SliceEncodingAttr::get(&ctx, 0, MmaEncodingAttr::get(&ctx, MmaKind::mma_sync, 2));
  expectEachElementOnce(enc, {64}, 0, 256);
  expectIRMatches(enc, {64});
}

TEST_F(EncodingTest, RowSliceOfBlockedHoldsEachRowWhereItsElementsAre) {
  // [R, N] blocked tiles with rows of 1, 8, 64 (two warps), 256 (the whole
  // block) and 1024 vectors (four groups of every thread); R with and
  // without padding.
  for (int64_t n : {4, 32, 256, 1024, 4096})
    for (int64_t r : {3, 4, 8, 17}) {
      auto blocked = BlockedEncodingAttr::get(&ctx, /*vec=*/4, /*warps=*/8);
      auto enc = SliceEncodingAttr::get(&ctx, 1, blocked, n);
      DistributedEncodingAttr slice = enc, parent = blocked;
      SCOPED_TRACE("N = " + std::to_string(n) + ", R = " + std::to_string(r));
      expectEachElementOnce(slice, {r}, 0, 256);
      expectEachElementOnce(slice, {r, 1}, 0, 256);
      // Parent group g of a thread lies in the row of the slice's group
      // g / repeat: a broadcast back over the rows moves nothing.
      int64_t repeat = enc.getRowRepeat();
      EXPECT_EQ(parent.getGroups({r, n}), slice.getGroups({r}) * repeat);
      for (unsigned t : {0u, 1u, 7u, 8u, 31u, 32u, 100u, 255u})
        for (int64_t g = 0; g < parent.getGroups({r, n}); ++g) {
          int64_t flat = parent.getGroupBase({r, n}, t, g);
          if (flat >= r * n)
            continue;
          EXPECT_EQ(slice.getGroupBase({r}, t, g / repeat), flat / n)
              << "thread " << t << " group " << g;
        }
      expectIRMatches(slice, {r});
    }
}


enum class Moves { registers, shuffles, shared };

/// Checks how warpRelayout runs `op` against `expected` and, where it runs
/// in registers, that result register i of every thread reads (from the lane
/// and register the plan names) the source element that `sourceOf` names
/// for the result element there.
static void expectWarpRelayout(Operation *op, Moves expected,
                               llvm::function_ref<int64_t(ArrayRef<int64_t>)> sourceOf) {
  std::optional<WarpRelayout> plan = warpRelayout(op);
  Moves got = !plan ? Moves::shared
              : plan->isRegisterLocal() ? Moves::registers
                                        : Moves::shuffles;
  ASSERT_EQ(int(got), int(expected));
  if (!plan)
    return;
  auto fromTy = cast<RankedTensorType>(op->getOperand(0).getType());
  auto toTy = cast<RankedTensorType>(op->getResult(0).getType());
  auto src = cast<DistributedEncodingAttr>(fromTy.getEncoding());
  auto dst = cast<DistributedEncodingAttr>(toTy.getEncoding());
  ArrayRef<int64_t> to = toTy.getShape();
  unsigned sw = src.getGroupWidth(), dw = dst.getGroupWidth();
  int64_t srcRegs = src.getGroups(fromTy.getShape()) * sw;
  ASSERT_EQ(int64_t(plan->reg.size()), dst.getGroups(to) * dw);
  for (unsigned t = 0; t < dst.getThreadsPerBlock(); ++t)
    for (int64_t i = 0; i < int64_t(plan->reg.size()); ++i) {
      int64_t e = dst.getGroupBase(to, t, i / dw) + i % dw;
      if (e >= toTy.getNumElements())
        continue;
      SmallVector<int64_t> c(to.size());
      int64_t f = e;
      for (int64_t d = int64_t(to.size()) - 1; d >= 0; --d) {
        c[d] = f % to[d];
        f /= to[d];
      }
      unsigned lane = plan->lane[i];
      int64_t m = plan->reg[i];
      for (int bit = 0; bit < 5; ++bit)
        if (t >> bit & 1) {
          lane ^= plan->laneCols[bit];
          m ^= plan->regCols[bit];
        }
      ASSERT_TRUE(m >= 0 && m < srcRegs) << "thread " << t << " register " << i;
      ASSERT_EQ(src.getGroupBase(fromTy.getShape(), t / 32 * 32 + lane, m / sw) + m % sw,
                sourceOf(c))
          << "thread " << t << " register " << i;
    }
}

TEST_F(EncodingTest, RelayoutsWithinWarpsRunInRegisters) {
  // A slice of all rows and whole 8-column chunks of an accumulator keeps
  // every element in its thread (offsets off the chunks move elements to
  // the next chunk's registers in some lanes: no map of the lanes' bits,
  // so shared memory); so does a [BN] row broadcast over a blocked [R, BN]
  // tile, whose threads hold the row's columns in every group (a row of
  // half the block's width is in other warps); a transpose moves elements
  // between warps.
  OpBuilder b(&ctx);
  Location loc = b.getUnknownLoc();
  auto module = ModuleOp::create(loc);
  b.setInsertionPointToStart(module.getBody());
  auto constant = [&](RankedTensorType t) -> Value {
    return arith::ConstantOp::create(
        b, loc, t,
        DenseElementsAttr::get(RankedTensorType::get(t.getShape(), b.getF32Type()), 0.0f)
            .reshape(t));
  };
  struct Case {
    MmaKind kind;
    unsigned consumers;
    int64_t rows, cols, offset, width;
    Moves moves;
  };
  for (Case c : {Case{MmaKind::wgmma, 1, 64, 256, 128, 128, Moves::registers},
                 Case{MmaKind::wgmma, 2, 128, 128, 64, 64, Moves::registers},
                 Case{MmaKind::wgmma, 3, 192, 64, 8, 24, Moves::registers},
                 Case{MmaKind::mma_sync, 1, 128, 128, 16, 32, Moves::registers},
                 Case{MmaKind::mma_sync, 2, 128, 64, 0, 32, Moves::registers},
                 Case{MmaKind::wgmma, 2, 128, 128, 4, 64, Moves::shared},
                 Case{MmaKind::mma_sync, 2, 128, 64, 2, 32, Moves::shared}}) {
    SCOPED_TRACE("kind " + std::to_string(int(c.kind)) + ", " + std::to_string(c.rows) + " x " +
                 std::to_string(c.cols) + " from " + std::to_string(c.offset) + ", " +
                 std::to_string(c.width) + " wide");
    auto mma = MmaEncodingAttr::get(&ctx, c.kind, c.consumers);
    auto from = RankedTensorType::get({c.rows, c.cols}, b.getF32Type(), mma);
    auto to = RankedTensorType::get({c.rows, c.width}, b.getF32Type(), mma);
    auto slice = SliceOp::create(b, loc, to, constant(from), b.getDenseI64ArrayAttr({0, c.offset}));
    expectWarpRelayout(slice, c.moves, [&](ArrayRef<int64_t> rc) {
      return rc[0] * c.cols + rc[1] + c.offset;
    });
  }
  auto blocked = BlockedEncodingAttr::get(&ctx, /*vec=*/4, /*warps=*/8);
  for (auto [rows, n, moves] : {std::tuple<int64_t, int64_t, Moves>{4, 1024, Moves::registers},
                                {16, 1024, Moves::registers},
                                {4, 512, Moves::shared}}) {
    SCOPED_TRACE(std::to_string(n) + " broadcast over " + std::to_string(rows) + " rows");
    auto row = RankedTensorType::get({n}, b.getF32Type(), blocked);
    auto tile = RankedTensorType::get({rows, n}, b.getF32Type(), blocked);
    auto broadcast = BroadcastOp::create(b, loc, tile, constant(row));
    expectWarpRelayout(broadcast, moves, [&](ArrayRef<int64_t> rc) { return rc[1]; });
  }
  // examples/fold.tile: the halves of a [4, 64] tile of one warp (a row is
  // 16 lanes; a half's row is 8 lanes) come from lanes whose register
  // depends on the lane.
  auto oneWarp = BlockedEncodingAttr::get(&ctx, /*vec=*/4, /*warps=*/1);
  for (int64_t offset : {0, 32}) {
    SCOPED_TRACE("half from column " + std::to_string(offset));
    auto whole = RankedTensorType::get({4, 64}, b.getF32Type(), oneWarp);
    auto half = RankedTensorType::get({4, 32}, b.getF32Type(), oneWarp);
    auto slice =
        SliceOp::create(b, loc, half, constant(whole), b.getDenseI64ArrayAttr({0, offset}));
    expectWarpRelayout(slice, Moves::shuffles,
                       [&](ArrayRef<int64_t> rc) { return rc[0] * 64 + rc[1] + offset; });
  }
  // Between vector widths: 4 to 2 over 64 elements takes 2 shuffles per
  // result register; 4 to 1 over 1024 would take 4 (more than the stores
  // and loads through shared memory).
  for (auto [n, from, to, moves] : {std::tuple<int64_t, unsigned, unsigned, Moves>{
                                        64, 4, 2, Moves::shuffles},
                                    {1024, 4, 1, Moves::shared}}) {
    SCOPED_TRACE(std::to_string(n) + " from vec " + std::to_string(from) + " to " +
                 std::to_string(to));
    auto fromTy = RankedTensorType::get({n}, b.getF32Type(),
                                        BlockedEncodingAttr::get(&ctx, from, /*warps=*/1));
    auto toTy =
        RankedTensorType::get({n}, b.getF32Type(), BlockedEncodingAttr::get(&ctx, to, 1));
    auto convert = ConvertLayoutOp::create(b, loc, toTy, constant(fromTy));
    expectWarpRelayout(convert, moves, [&](ArrayRef<int64_t> c) { return c[0]; });
  }
  auto square = RankedTensorType::get({64, 64}, b.getF32Type(), blocked);
  auto transpose =
      PermuteOp::create(b, loc, square, constant(square), b.getDenseI64ArrayAttr({1, 0}));
  expectWarpRelayout(transpose, Moves::shared, [](ArrayRef<int64_t>) { return 0; });
  module->erase();
}

} // namespace
