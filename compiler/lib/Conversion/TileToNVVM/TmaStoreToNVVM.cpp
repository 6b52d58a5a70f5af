//===- TmaStoreToNVVM.cpp - an mma result stored through shared memory by TMA ===//
//
// A store that tile-stage-shared marked tile.tma_store (an mma pipeline's
// [BM, N] result to a whole tensor parameter) goes to global memory by TMA
// instead of one 4- or 8-byte store per fragment and thread. Each consumer
// warpgroup writes its rows box by box (64 rows x 128 bytes, 128-byte
// swizzled as the descriptor reads them) into shared memory, and its first
// thread issues the box's bulk store, which runs on while the warpgroup
// goes on (in a persistent kernel: into the next tile's loop):
//
//   thread 0 of the warpgroup: wait until earlier stores have read their
//     boxes; bar.sync (the warpgroup, or every consumer when the store
//     reuses the matmul pipeline's ring, which the other warpgroup may still
//     be reading)
//   for each box i of the warpgroup's rows:
//     (i >= buffers: thread 0 waits until box i - buffers, in the same
//      buffer, was read; bar.sync)
//     the thread's fragments into the box (stmatrix for 16-bit elements,
//     st.shared otherwise); fence.proxy.async;
//     bar.sync; thread 0: cp.async.bulk.tensor store of the box, commit
//
// TMA clips each box at the tensor's bounds, so an edge tile needs no
// guards. Before the kernel returns, its threads wait until their stores
// have read shared memory (drainTmaStores). When the runtime could not
// describe the tensor (its valid flag is 0: a row pitch or base that is
// not 16-byte aligned, an inner stride other than 1), the warpgroup's
// threads copy each box from shared memory instead, one element each per
// step of a loop, checking the tensor's bounds (where every box has a
// buffer of its own, once after the last box, in a loop over the boxes):
// the slow path stays small
// (the per-thread store it replaces, kept beside the TMA path, made the
// matmul's compile 40% slower).
//
// Named barriers: 4 + consumer (128 threads) and 7 (every consumer); 1 is
// the producer's, 2 and 3 the ping-pong's (GeneralPipeline.h).
//
//===----------------------------------------------------------------------===//

#include "MmaCommon.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace tilec;
using namespace tilec::mma;

namespace {
constexpr int64_t kBoxBytes = tile::kTmaStoreBoxRows * 128;
} // namespace

FragmentBoxes::FragmentBoxes(tile::MmaEncodingAttr mma, RankedTensorType tileTy, bool stmatrix)
    : mma(mma), tileTy(tileTy) {
  ArrayRef<int64_t> shape = tileTy.getShape();
  size_t rank = shape.size();
  int64_t BM = shape[rank - 2];
  N = shape[rank - 1];
  // Alternating consumers each hold a whole tile.
  int64_t rowsPerWG = BM / mma.getShare();
  elemBytes = tileTy.getElementType().getIntOrFloatBitWidth() / 8;
  boxCols = 128 / elemBytes;
  colBoxes = N / boxCols;
  boxes = rowsPerWG / tile::kTmaStoreBoxRows * colBoxes;
  width = mma.getGroupWidth();
  // Which box of its warpgroup's rows each of a thread's fragment groups
  // falls in: the same for every thread (a group spans 2 columns of one
  // row), read from the encoding for the first consumer thread.
  groupsOfBox.resize(boxes);
  for (int64_t g = 0; g < mma.getGroups(shape); ++g) {
    int64_t flat = mma.getGroupBase(shape, mma.getLeaderThread(), g);
    int64_t row = flat / N, col = flat % N;
    groupsOfBox[(row / tile::kTmaStoreBoxRows) * colBoxes + col / boxCols].push_back(g);
  }

  // stmatrix (16-bit elements in the wgmma accumulator's fragments): in
  // each box, thread t of the warpgroup (warp w, lane l) holds for every 8
  // columns 8j..8j+7 the pair at row 16w + l / 4 (+ 8), columns 8j +
  // 2(l % 4): the register of one 8 x 8 matrix of stmatrix. One
  // stmatrix.x4 stores 16 rows x 16 columns (matrices: rows 0-7 and 8-15
  // of columns 8j.., then of 8(j+1)..), in place of four st.shared and their
  // address arithmetic. pairs[i][j][h]: the group of row half h, columns
  // 8j.. of box i. Checked for every thread of the warpgroup against the
  // encoding; another layout keeps the st.shared path.
  if (stmatrix && elemBytes == 2 && width == 2 && boxCols % 16 == 0) {
    int64_t leaderThread = mma.getLeaderThread();
    bool fits = true;
    pairs.assign(boxes, SmallVector<std::array<int64_t, 2>>(boxCols / 8, {-1, -1}));
    for (int64_t i = 0; i < boxes && fits; ++i) {
      fits = int64_t(groupsOfBox[i].size()) == 2 * (boxCols / 8);
      for (int64_t g : groupsOfBox[i]) {
        int64_t flat = mma.getGroupBase(shape, leaderThread, g);
        int64_t r = (flat / N) % tile::kTmaStoreBoxRows, c = (flat % N) % boxCols;
        if (!fits || (r != 0 && r != 8) || c % 8 != 0 || pairs[i][c / 8][r / 8] != -1) {
          fits = false;
          break;
        }
        pairs[i][c / 8][r / 8] = g;
      }
      for (int64_t t = 0; t < 128 && fits; ++t)
        for (int64_t j = 0; j < boxCols / 8 && fits; ++j)
          for (int64_t h = 0; h < 2 && fits; ++h) {
            int64_t g = pairs[i][j][h];
            int64_t flat = mma.getGroupBase(shape, leaderThread + t, g);
            int64_t lead = mma.getGroupBase(shape, leaderThread, g);
            int64_t r = (flat / N) % tile::kTmaStoreBoxRows, c = (flat % N) % boxCols;
            fits = flat / N / tile::kTmaStoreBoxRows == lead / N / tile::kTmaStoreBoxRows &&
                   (flat % N) / boxCols == (lead % N) / boxCols &&
                   r == 16 * (t / 32) + 8 * h + (t % 32) / 4 && c == 8 * j + 2 * (t % 4);
          }
    }
    if (!fits)
      pairs.clear();
  }
}

void FragmentBoxes::write(Emit &e, Value values, Value tid, Value tid64, int64_t i,
                          Value box) const {
  OpBuilder &b = e.b;
  Location loc = e.loc;
  MLIRContext *ctx = b.getContext();
  VectorType groupTy = VectorType::get({width}, registerType(tileTy.getElementType()));
  // Group g's elements as one vector (from the elements: an
  // extract_strided_slice of the whole vector became a shuffle of one of
  // the partial vectors that build it, a 128-element value live into
  // every box's block, which made instruction selection 5x slower).
  auto group = [&](int64_t g) -> Value {
    SmallVector<Value> elements;
    for (int64_t x = 0; x < width; ++x)
      elements.push_back(vector::ExtractOp::create(b, loc, values, ArrayRef<int64_t>{g * width + x}));
    return vector::FromElementsOp::create(b, loc, groupTy, elements);
  };
  auto pair = [&](int64_t g) {
    return LLVM::BitcastOp::create(b, loc, b.getI32Type(), group(g)).getResult();
  };
  if (!pairs.empty()) {
    MatrixLane ml = matrixLane(e, tid);
    for (int64_t j = 0; j + 1 < boxCols / 8; j += 2) {
      Value at = swizzledOffset(e, ml.row, e.add(ml.half, e.i64(j * 16)));
      SmallVector<Value> sources = {pair(pairs[i][j][0]), pair(pairs[i][j][1]),
                                    pair(pairs[i][j + 1][0]), pair(pairs[i][j + 1][1])};
      NVVM::StMatrixOp::create(b, loc, e.gep(box, at), sources, NVVM::MMALayout::row,
                               NVVM::LdStMatrixShapeAttr::get(ctx, 8, 8),
                               NVVM::LdStMatrixEltType::B16);
    }
  }
  for (int64_t g : pairs.empty() ? ArrayRef<int64_t>(groupsOfBox[i]) : ArrayRef<int64_t>()) {
    Value at = groupOffset(e, tid64, g);
    LLVM::StoreOp::create(b, loc, group(g), e.gep(box, at), unsigned(width * elemBytes));
  }
}

FragmentBoxes::MatrixLane FragmentBoxes::matrixLane(Emit &e, Value tid) {
  // Lane l gives the address of row l % 8 of matrix l / 8.
  Value t = e.zext64(e.remu(tid, e.i32(128)));
  Value lane = e.remu(t, e.i64(32));
  Value row = e.add(e.add(e.mul(e.divu(t, e.i64(32)), e.i64(16)),
                          e.mul(e.band(e.shr(lane, e.i64(3)), e.i64(1)), e.i64(8))),
                    e.band(lane, e.i64(7)));
  return {row, e.mul(e.shr(lane, e.i64(4)), e.i64(16))};
}

Value FragmentBoxes::groupOffset(Emit &e, Value tid64, int64_t g) const {
  // Row r of the box, the group's first byte in it.
  Value flat = mma.emitGroupBase(e.b, e.loc, tid64, tileTy.getShape(), g);
  Value r = e.remu(e.divu(flat, e.i64(N)), e.i64(tile::kTmaStoreBoxRows));
  Value byte = e.mul(e.remu(e.remu(flat, e.i64(N)), e.i64(boxCols)), e.i64(elemBytes));
  return swizzledOffset(e, r, byte);
}

void FragmentBoxes::read(Emit &e, Value tid, Value tid64, int64_t i, Value box,
                         MutableArrayRef<Value> groups) const {
  OpBuilder &b = e.b;
  Location loc = e.loc;
  MLIRContext *ctx = b.getContext();
  VectorType groupTy = VectorType::get({width}, registerType(tileTy.getElementType()));
  if (!pairs.empty()) {
    // As write's stmatrix: register m of the x4 is the group of matrix m.
    MatrixLane ml = matrixLane(e, tid);
    Type i32 = b.getI32Type();
    auto x4Ty = LLVM::LLVMStructType::getLiteral(ctx, {i32, i32, i32, i32});
    for (int64_t j = 0; j + 1 < boxCols / 8; j += 2) {
      Value at = swizzledOffset(e, ml.row, e.add(ml.half, e.i64(j * 16)));
      Value m = NVVM::LdMatrixOp::create(
          b, loc, x4Ty, e.gep(box, at), b.getI32IntegerAttr(4),
          NVVM::MMALayoutAttr::get(ctx, NVVM::MMALayout::row),
          NVVM::LdStMatrixShapeAttr::get(ctx, 8, 8),
          NVVM::LdStMatrixEltTypeAttr::get(ctx, NVVM::LdStMatrixEltType::B16));
      for (int64_t k = 0; k < 4; ++k) {
        Value word = LLVM::ExtractValueOp::create(b, loc, m, k);
        groups[pairs[i][j + k / 2][k % 2]] = LLVM::BitcastOp::create(b, loc, groupTy, word);
      }
    }
    return;
  }
  for (int64_t g : groupsOfBox[i]) {
    Value at = groupOffset(e, tid64, g);
    groups[g] = LLVM::LoadOp::create(b, loc, groupTy, e.gep(box, at), unsigned(width * elemBytes));
  }
}

void tilec::mma::lowerTmaStore(OpBuilder &b, tile::StoreOp op, Value values,
                               ValueRange indices) {
  Location loc = op.getLoc();
  Emit e{b, loc};
  MLIRContext *ctx = b.getContext();
  auto plan = op->getAttrOfType<DictionaryAttr>(tile::kTmaStoreAttrName);
  int64_t t = cast<IntegerAttr>(plan.get("tma")).getInt();
  int64_t offset = cast<IntegerAttr>(plan.get("offset")).getInt();
  int64_t buffers = cast<IntegerAttr>(plan.get("buffers")).getInt();
  bool ring = buffers == 0;
  auto func = op->getParentOfType<func::FuncOp>();
  auto [tmapArg, validArg] = tmaArguments(func, t);
  Value tmap = tmapArg, valid = validArg;

  RankedTensorType tileTy = op.getValue().getType();
  auto mma = cast<tile::MmaEncodingAttr>(tileTy.getEncoding());
  ArrayRef<int64_t> shape = tileTy.getShape();
  size_t rank = shape.size();
  int64_t BM = shape[rank - 2], N = shape[rank - 1];
  // Alternating consumers each store a whole tile from boxes of their own.
  int64_t C = mma.getConsumers(), rowsPerWG = BM / mma.getShare();
  int64_t elemBytes = tileTy.getElementType().getIntOrFloatBitWidth() / 8;
  int64_t boxCols = 128 / elemBytes, colBoxes = N / boxCols;
  int64_t boxes = rowsPerWG / tile::kTmaStoreBoxRows * colBoxes;
  if (ring)
    buffers = boxes;

  FragmentBoxes fragments(mma, tileTy, /*stmatrix=*/true);
  auto view = op.getView().getDefiningOp<tile::MakeViewOp>();
  Value viaTma = e.ne(valid, e.i32(0));
  Value tid = NVVM::ThreadIdXOp::create(b, loc, b.getI32Type());
  Value wg = warpgroupIndex(e, tid);
  Value consumer = e.sub(wg, e.i32(1));
  Value leader = e.eq(e.remu(tid, e.i32(128)), e.i32(0));
  Value tid64 = e.zext64(tid);
  // Each consumer's boxes: its rows of the tile in the ring, or the
  // kTmaStoreBuffers boxes every store of the kernel shares.
  int64_t stride = ring ? boxes : tile::kTmaStoreBuffers;
  Value region = e.gep(alignedSharedMemory(e, func).ptr,
                       e.add(e.i64(offset), e.mul(e.zext64(consumer), e.i64(stride * kBoxBytes))));
  auto sync = [&](bool everyConsumer) {
    Value id = everyConsumer ? e.i32(kAllConsumersBarrier)
                             : e.add(consumer, e.i32(kFirstEpilogueBarrier));
    namedBarrier(e, id, everyConsumer ? 128 * C : 128);
  };
  auto waitRead = [&](int64_t pending) {
    e.ifThen(leader, [&] {
      NVVM::CpAsyncBulkWaitGroupOp::create(b, loc, b.getI32IntegerAttr(int32_t(pending)),
                                           b.getUnitAttr());
    });
  };
  Value rowOrigin = e.add(e.mul(e.sext64(indices[rank - 2]), e.i64(BM)),
                          e.mul(e.zext64(rowShareOf(e, mma, wg)), e.i64(rowsPerWG)));
  Value colOrigin = e.mul(e.sext64(indices[rank - 1]), e.i64(N));

  for (int64_t i = 0; i < boxes; ++i) {
    int64_t buffer = i % buffers;
    if (i == 0) {
      waitRead(0);
      sync(ring);
    } else if (i >= buffers) {
      // Box i - buffers, the last in this buffer, was committed buffers
      // groups ago.
      waitRead(buffers - 1);
      sync(false);
    }
    Value box = e.gep(region, e.i64(buffer * kBoxBytes));
    fragments.write(e, values, tid, tid64, i, box);
    NVVM::FenceProxyOp::create(b, loc, NVVM::ProxyKindAttr::get(ctx, NVVM::ProxyKind::async_shared),
                               NVVM::SharedSpaceAttr::get(ctx, NVVM::SharedSpace::shared_cta));
    sync(false);
    int64_t mb = i / colBoxes, q = i % colBoxes;
    Value row0 = e.add(rowOrigin, e.i64(mb * tile::kTmaStoreBoxRows));
    Value col0 = e.add(colOrigin, e.i64(q * boxCols));
    auto issue = [&] {
      e.ifThen(leader, [&] {
        SmallVector<Value> coords = {e.trunc32(col0), e.trunc32(row0)};
        if (rank == 3)
          coords.push_back(e.trunc32(e.sext64(indices[0])));
        NVVM::CpAsyncBulkTensorSharedCTAToGlobalOp::create(b, loc, tmap, box, coords, Value(),
                                                           NVVM::TMAStoreMode::TILE, Value());
        NVVM::CpAsyncBulkCommitGroupOp::create(b, loc);
      });
    };
    if (ring) {
      e.ifThen(viaTma, issue);
      continue;
    }
    auto ifOp = scf::IfOp::create(b, loc, TypeRange{}, viaTma, /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    issue();
    b.setInsertionPointToStart(&ifOp.getElseRegion().front());
    copyBoxByThreads(e, view, rank == 3 ? e.sext64(indices[0]) : Value(), row0, col0, box,
                     e.zext64(e.remu(tid, e.i32(128))), elemBytes);
  }
  // In the ring every box has a buffer of its own, so where TMA cannot
  // store, the threads copy the boxes after the last one is written, in
  // one loop over the boxes: one copy loop in the kernel instead of one
  // per box (a third of the matmul's PTX).
  if (ring) {
    e.ifThen(e.bnot(viaTma), [&] {
      auto loop = scf::ForOp::create(b, loc, e.i64(0), e.i64(boxes), e.i64(1));
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      Value i = loop.getInductionVar();
      Value row0 = e.add(rowOrigin, e.mul(e.divu(i, e.i64(colBoxes)),
                                          e.i64(tile::kTmaStoreBoxRows)));
      Value col0 = e.add(colOrigin, e.mul(e.remu(i, e.i64(colBoxes)), e.i64(boxCols)));
      copyBoxByThreads(e, view, rank == 3 ? e.sext64(indices[0]) : Value(), row0, col0,
                       e.gep(region, e.mul(i, e.i64(kBoxBytes))),
                       e.zext64(e.remu(tid, e.i32(128))), elemBytes);
    });
  }
}

namespace {
/// tile.shared_copy, in the consumer warps of a general pipeline (wgmma or
/// mma.sync layout; every consumer runs it, in the same iteration):
///   sm_90a: wgmma.wait_group 0 (this warpgroup's wgmmas that may still
///           read the buffer: a pure accumulation leaves one group running)
///   bar.sync of every consumer warp (none still reads the buffer)
///   the thread's fragments into the buffer: column box q of the tile
///     holds its BM rows, 128 bytes each, so the consumer's box (mb, q)
///     starts at row share * rowsPerWG + 64 mb of box q (stmatrix on
///     sm_90a, st.shared on sm_80)
///   sm_90a: fence.proxy.async (wgmma reads through the async proxy)
///   bar.sync of every consumer warp (the whole tile is there)
/// The result is the buffer's address, which the mma reads.
struct SharedCopyLowering : OpConversionPattern<tile::SharedCopyOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(tile::SharedCopyOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RankedTensorType from = op.getTile().getType();
    auto mma = dyn_cast_or_null<tile::MmaEncodingAttr>(from.getEncoding());
    if (!mma || mma.getKind() == tile::MmaKind::fma || mma.getSwapped() || mma.getAlternate())
      return rewriter.notifyMatchFailure(op, "not a tile in a wgmma or mma.sync layout");
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    Emit e{rewriter, loc};
    bool wgmma = mma.getKind() == tile::MmaKind::wgmma;
    auto func = op->getParentOfType<func::FuncOp>();
    int64_t BM = from.getDimSize(0), C = mma.getConsumers(), rowsPerWG = BM / C;
    FragmentBoxes fragments(mma, from, /*stmatrix=*/wgmma);
    Value base = e.gep(alignedSharedMemory(e, func).ptr, e.i64(op.getOffset()));
    Value tid = NVVM::ThreadIdXOp::create(rewriter, loc, rewriter.getI32Type());
    Value tid64 = e.zext64(tid);
    Value wg = warpgroupIndex(e, tid);
    // The consumer's share of the rows (sm_80 has no producer warpgroup).
    Value share = wgmma ? rowShareOf(e, mma, wg) : wg;
    auto sync = [&] { namedBarrier(e, e.i32(kAllConsumersBarrier), 128 * C); };
    if (wgmma)
      NVVM::WgmmaWaitGroupSyncOp::create(rewriter, loc, rewriter.getI64IntegerAttr(0));
    sync();
    Value rows = e.mul(e.zext64(share), e.i64(rowsPerWG * 128));
    for (int64_t i = 0; i < fragments.boxes; ++i) {
      int64_t mb = i / fragments.colBoxes, q = i % fragments.colBoxes;
      Value box = e.gep(base, e.add(rows, e.i64((q * BM + mb * tile::kTmaStoreBoxRows) * 128)));
      fragments.write(e, adaptor.getTile(), tid, tid64, i, box);
    }
    if (wgmma)
      NVVM::FenceProxyOp::create(rewriter, loc,
                                 NVVM::ProxyKindAttr::get(ctx, NVVM::ProxyKind::async_shared),
                                 NVVM::SharedSpaceAttr::get(ctx, NVVM::SharedSpace::shared_cta));
    sync();
    rewriter.replaceOp(op, base);
    return success();
  }
};

/// A staged tile read into registers (tile.convert_layout from the
/// #tile.shared tile of a stage to the accumulator layout, which tile-layout
/// puts in front of the other work a load of the mma loop feeds): each
/// thread reads its fragments from the stage, where the copy put them
/// (column box q of the tile holds its rows, 128 bytes each; 16-byte chunk
/// c of row r at c ^ (r % 8)), as tile.shared_copy writes them: by ldmatrix
/// for 16-bit elements, one ld.shared per group otherwise (or where the
/// rows are not whole 128-byte boxes). The pipeline's wait for the stage
/// (its full barrier; on sm_80 cp.async's wait and bar.sync) has made the
/// copy visible, and the stage is released after the iteration's reads.
struct StageReadLowering : OpConversionPattern<tile::ConvertLayoutOp> {
  StageReadLowering(const TypeConverter &tc, MLIRContext *ctx)
      : OpConversionPattern<tile::ConvertLayoutOp>(tc, ctx, /*benefit=*/5) {}

  LogicalResult
  matchAndRewrite(tile::ConvertLayoutOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto shared = dyn_cast_or_null<tile::SharedEncodingAttr>(op.getTile().getType().getEncoding());
    RankedTensorType to = op.getType();
    auto mma = dyn_cast_or_null<tile::MmaEncodingAttr>(to.getEncoding());
    if (!shared || shared.getOrder()[0] != 1 || to.getRank() != 2 || !mma ||
        mma.getKind() == tile::MmaKind::fma || mma.getSwapped())
      return rewriter.notifyMatchFailure(op, "not a stage read into an accumulator layout");
    Location loc = op.getLoc();
    Emit e{rewriter, loc};
    ArrayRef<int64_t> shape = to.getShape();
    int64_t rows = shape[0], N = shape[1];
    Type elem = registerType(to.getElementType());
    int64_t elemBytes = to.getElementTypeBitWidth() / 8, boxCols = 128 / elemBytes;
    int64_t width = mma.getGroupWidth();
    Value tid = NVVM::ThreadIdXOp::create(rewriter, loc, rewriter.getI32Type());
    Value tid64 = e.zext64(tid);
    SmallVector<Value> groups(mma.getGroups(shape));
    if (N % boxCols == 0) {
      FragmentBoxes fragments(mma, to, /*stmatrix=*/true);
      Value wg = warpgroupIndex(e, tid);
      Value share = mma.getKind() == tile::MmaKind::wgmma ? rowShareOf(e, mma, wg) : wg;
      Value first = e.mul(e.zext64(share), e.i64(rows / mma.getShare() * 128));
      for (int64_t i = 0; i < fragments.boxes; ++i) {
        int64_t mb = i / fragments.colBoxes, q = i % fragments.colBoxes;
        Value box = e.gep(adaptor.getTile(),
                          e.add(first, e.i64((q * rows + mb * tile::kTmaStoreBoxRows) * 128)));
        fragments.read(e, tid, tid64, i, box, groups);
      }
    } else {
      // Rows that end inside a box: group by group.
      VectorType groupTy = VectorType::get({width}, elem);
      for (auto [g, value] : llvm::enumerate(groups)) {
        Value flat = mma.emitGroupBase(rewriter, loc, tid64, shape, int64_t(g));
        Value r = e.divu(flat, e.i64(N)), c = e.remu(flat, e.i64(N));
        Value at = e.add(e.mul(e.divu(c, e.i64(boxCols)), e.i64(rows * 128)),
                         swizzledOffset(e, r, e.mul(e.remu(c, e.i64(boxCols)), e.i64(elemBytes))));
        value = LLVM::LoadOp::create(rewriter, loc, groupTy, e.gep(adaptor.getTile(), at),
                                     unsigned(width * elemBytes));
      }
    }
    SmallVector<Value> elements;
    for (Value group : groups)
      for (int64_t x = 0; x < width; ++x)
        elements.push_back(vector::ExtractOp::create(rewriter, loc, group, ArrayRef<int64_t>{x}));
    rewriter.replaceOp(op, vector::FromElementsOp::create(rewriter, loc, perThreadType(to),
                                                          elements));
    return success();
  }
};
} // namespace

void tilec::mma::populateSharedCopyPatterns(const TypeConverter &converter,
                                            RewritePatternSet &patterns) {
  patterns.add<SharedCopyLowering, StageReadLowering>(converter, patterns.getContext());
}

/// The 128 threads of a warpgroup (`t`: 0..127) copy one box (64 rows x 128
/// bytes, 128-byte swizzled at `box`) to the tensor `view` at row `row0`,
/// column `col0` (and `batch`), element by element in a loop: thread t
/// takes elements t, t + 128, ... of the box in row-major order, so a
/// warp writes consecutive columns; elements past the tensor's bounds are
/// skipped.
void tilec::mma::copyBoxByThreads(Emit &e, tile::MakeViewOp view, Value batch, Value row0,
                                  Value col0, Value box, Value t, int64_t elemBytes) {
  OpBuilder &b = e.b;
  Location loc = e.loc;
  int64_t boxCols = 128 / elemBytes;
  int64_t steps = tile::kTmaStoreBoxRows * boxCols / 128;
  ValueRange sizes = view.getSizes(), strides = view.getStrides();
  size_t rank = sizes.size();
  Type bits = b.getIntegerType(unsigned(elemBytes * 8));
  auto loop = scf::ForOp::create(b, loc, e.i64(0), e.i64(steps), e.i64(1));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  Value idx = e.add(e.mul(loop.getInductionVar(), e.i64(128)), t);
  Value r = e.divu(idx, e.i64(boxCols)), c = e.remu(idx, e.i64(boxCols));
  Value at = swizzledOffset(e, r, e.mul(c, e.i64(elemBytes)));
  Value row = e.add(row0, r), col = e.add(col0, c);
  Value inside = e.band(e.ult(row, sizes[rank - 2]), e.ult(col, sizes[rank - 1]));
  Value offset = e.add(e.mul(row, strides[rank - 2]), e.mul(col, strides[rank - 1]));
  if (batch) {
    inside = e.band(inside, e.ult(batch, sizes[0]));
    offset = e.add(offset, e.mul(batch, strides[0]));
  }
  e.ifThen(inside, [&] {
    Value x = LLVM::LoadOp::create(b, loc, bits, e.gep(box, at), unsigned(elemBytes));
    Value dst = LLVM::GEPOp::create(b, loc, view.getPtr().getType(), bits, view.getPtr(),
                                    ValueRange{offset});
    LLVM::StoreOp::create(b, loc, x, dst, unsigned(elemBytes));
  });
}

void tilec::mma::drainTmaStores(func::FuncOp func) {
  bool any = false;
  func.walk([&](tile::StoreOp op) { any |= op->hasAttr(tile::kTmaStoreAttrName); });
  if (!any)
    return;
  func.walk([&](func::ReturnOp ret) {
    OpBuilder b(ret);
    NVVM::CpAsyncBulkWaitGroupOp::create(b, ret.getLoc(), b.getI32IntegerAttr(0), b.getUnitAttr());
  });
}
