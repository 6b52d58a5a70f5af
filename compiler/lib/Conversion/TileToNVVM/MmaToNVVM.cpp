//===- MmaToNVVM.cpp - the pipelined mma loop on sm_90a -------------------===//
//
// Lowers an `scf.for` planned by tile-stage-shared (attribute
// `tile.pipeline`) to a warp-specialized TMA + wgmma pipeline:
//
//   warpgroup 0 (producer)         warpgroups 1..C (consumers)
//   for i: wait empty[s]           for i: wait full[s]
//          stage A, B into s              wgmma over BK/16 steps
//          (TMA, or loads when the        commit; wait for batch i-1;
//           view cannot use TMA)          arrive empty[(i-1) % S] (lane 0
//          arrive full[s] (+tx: each      of each warp; on the CUDA cores
//           thread that copied, or        every thread after its reads)
//           thread 0 for all 128)
//   exit                           wait for all; accumulator -> registers
//
// Shared memory (dynamic, 1024-byte aligned): per stage the A tile as BK/64
// boxes of [BM rows x 128 bytes] and the B tile as ceil(BN/64) boxes of [BK rows x
// 128 bytes], both 128-byte swizzled (16-byte chunk c of row r sits at chunk
// c ^ (r % 8)); then the full and empty mbarriers. A is read by wgmma as
// K-major, B (row-major [K, N]) as MN-major ("transposed").
//
//===----------------------------------------------------------------------===//

#include "MmaCommon.h"

#include "tilec/Dialect/Tile/IR/TileDialect.h"
#include "tilec/Transforms/MmaOverlap.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

#include <optional>

using namespace mlir;
using namespace tilec;
using namespace tilec::mma;

std::string tilec::sharedMemoryName(llvm::StringRef kernel) {
  return ("__tile_smem_" + kernel).str();
}


// The staged operand's copies (the matmul pipeline's and, for issueTMA and
// copyByThreads, the general pipeline's too).
Value tilec::mma::asyncCopyable(OpBuilder &b, Location loc, Operand &o) {
  Emit e{b, loc};
  tile::MakeViewOp v = o.view;
  size_t rank = v.getStrides().size();
  Value ok = e.eq(v.getStrides()[rank - 1], e.i64(1));
  Value addr = LLVM::PtrToIntOp::create(b, loc, b.getI64Type(), v.getPtr());
  ok = arith::AndIOp::create(b, loc, ok, e.eq(e.band(addr, e.i64(15)), e.i64(0)));
  for (size_t d = 0; d + 1 < rank; ++d)
    ok = arith::AndIOp::create(
        b, loc, ok,
        e.eq(e.band(e.mul(v.getStrides()[d], e.i64(o.elemBytes)), e.i64(15)), e.i64(0)));
  return ok;
}

namespace {
/// One 16-byte chunk of an operand tile for a copy into a stage: its
/// row of the tile and of the view, its first column of the view, whether
/// the row (and batch) lies inside the view, the batch's element offset
/// (null for a matrix) and its byte offset in the stage's swizzled layout
/// (chunk c of row r at box c/8, chunk (c % 8) ^ (r % 8)).
struct Chunk {
  Value row, grow, gcol, rowOk, batchOffset, dstOffset;
};
} // namespace

/// The byte offset in a stage's swizzled layout of chunk `cc` of tile row
/// `row`: box cc / 8, chunk (cc % 8) ^ (row % 8) of the row's 128 bytes.
static Value swizzledOffset(Emit &e, const Operand &o, Value row, Value cc) {
  Value box = e.divu(cc, e.i64(8));
  Value swizzled = e.bxor(e.remu(cc, e.i64(8)), e.remu(row, e.i64(8)));
  return e.add(e.add(e.mul(box, e.i64(o.rows * 128)), e.mul(row, e.i64(128))),
               e.mul(swizzled, e.i64(16)));
}

/// Runs `fn` for the chunks of an operand tile that thread `tid` of
/// `threads` copies (chunk tid, tid + threads, ...).
template <typename Fn>
static void forEachChunk(OpBuilder &b, Location loc, Operand &o, ArrayRef<Value> origins,
                         Value tid, int64_t threads, Fn fn) {
  Emit e{b, loc};
  size_t rank = origins.size();
  Value batchOk, batchOffset;
  if (rank == 3) {
    batchOk = e.ult(origins[0], o.view.getSizes()[0]);
    batchOffset = e.mul(origins[0], o.stride(0));
  }
  int64_t chunkElems = 16 / o.elemBytes;
  int64_t chunksPerRow = o.cols / chunkElems, chunks = o.rows * chunksPerRow;
  auto loop = scf::ForOp::create(b, loc, e.zext64(tid), e.i64(chunks), e.i64(threads));
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(loop.getBody());
  Value q = loop.getInductionVar();
  Chunk ch;
  ch.row = e.divu(q, e.i64(chunksPerRow));
  Value cc = e.remu(q, e.i64(chunksPerRow));
  ch.grow = e.add(origins[rank - 2], ch.row);
  ch.gcol = e.add(origins[rank - 1], e.mul(cc, e.i64(chunkElems)));
  ch.rowOk = e.ult(ch.grow, o.view.getSizes()[rank - 2]);
  if (batchOk)
    ch.rowOk = arith::AndIOp::create(b, loc, ch.rowOk, batchOk);
  ch.batchOffset = batchOffset;
  ch.dstOffset = swizzledOffset(e, o, ch.row, cc);
  fn(ch);
}

/// copyAsync where every thread copies as many chunks, all of one column
/// of a band (threads a multiple of the band's chunks a row): the tile's
/// whole rows, or where the threads are not a multiple of a row's chunks
/// bands of fewer columns one after another (D = 192: 24 chunks a row on
/// 128 or 256 threads, bands of 8; D = 96: 12, bands of 4). Chunk i of a
/// thread in a band lies i * threads / (the band's chunks) rows below its
/// first. Its column, the column's bounds test, the rows inside the view
/// and (where that step is a multiple of 8 rows) its swizzle are the
/// thread's own, computed once per band, and each chunk's addresses are
/// the first's plus constant steps: a
/// chunk costs a 32-bit row test, two selects, an address add and the
/// cp.async (the general loop recomputed row, column, bounds and swizzle
/// per chunk in 64 bits: about 40 SASS instructions a chunk, 1.5x the
/// instructions of FlashAttention-2 in the sm_80 attention kernel;
/// docs/performance.md, session 46). False where the copy is not regular.
/// Bands narrower than 8 chunks only with `narrowBands`: each band's own
/// values live through the loop where LLVM hoists them (the copy's
/// positions not computed in the loop), and in the sm_80 attention kernels
/// at 255 registers on 8 warps (D = 80, 96, 112) they added 36-216 bytes of
/// spills in ptxas (docs/performance.md, session 59). Boxes of 8 chunks
/// stay allowed everywhere: on 8 warps at D = 192 (239 registers, no
/// spill) they ran 1.17-1.19x the general loop (H100, session 58). What
/// decides is the kernel's register pressure, which ptxas alone knows;
/// the rule keeps each case as it was measured.
static bool copyAsyncRegular(OpBuilder &b, Location loc, Operand &o, ArrayRef<Value> origins,
                             Value dst, Value tid, int64_t threads, bool narrowBands) {
  int64_t chunkElems = 16 / o.elemBytes;
  int64_t chunksPerRow = o.cols / chunkElems;
  // The widest band that divides the row and that the threads cover in
  // whole rows: the whole row where it can (D <= 128, 256), else 8 chunks
  // (D = 192), 4 (D = 96, 160, 224) or 2 (the other multiples of 16).
  int64_t band = chunksPerRow;
  while (band > 0 &&
         (chunksPerRow % band != 0 || threads % band != 0 || (o.rows * band) % threads != 0))
    --band;
  if (band == 0 || (band < chunksPerRow && band < 8 && !narrowBands))
    return false;
  Emit e{b, loc};
  tile::MakeViewOp v = o.view;
  size_t rank = origins.size();
  int64_t rowStep = threads / band;
  Value size0 = v.getSizes()[rank - 2], size1 = v.getSizes()[rank - 1];
  Value t = e.zext64(tid);
  Value row0 = e.divu(t, e.i64(band)), cc0 = e.remu(t, e.i64(band));
  for (int64_t first0 = 0; first0 < chunksPerRow; first0 += band) {
    Value cc = first0 == 0 ? cc0 : e.add(cc0, e.i64(first0));
    Value gcol = e.add(origins[rank - 1], e.mul(cc, e.i64(chunkElems)));
    // Bytes of the thread's chunks inside the view's columns: 0 .. 16 (a
    // chunk is never partly left of column 0: origins are multiples of the
    // tile width), and the tile's rows inside the view, 0 where the column
    // (or the batch) is not: a chunk is copied where its row is below that.
    Value colOk = e.ult(gcol, size1);
    Value offset = e.add(e.mul(e.add(origins[rank - 2], row0), o.stride(rank - 2)), gcol);
    if (rank == 3) {
      colOk = e.band(colOk, e.ult(origins[0], v.getSizes()[0]));
      offset = e.add(offset, e.mul(origins[0], o.stride(0)));
    }
    Value colBytes = e.trunc32(e.mul(arith::MinSIOp::create(b, loc, e.sub(size1, gcol),
                                                             e.i64(chunkElems)),
                                     e.i64(o.elemBytes)));
    Value rowsIn = arith::MaxSIOp::create(
        b, loc, arith::MinSIOp::create(b, loc, e.sub(size0, origins[rank - 2]), e.i64(o.rows)),
        e.i64(0));
    rowsIn = e.trunc32(arith::SelectOp::create(b, loc, colOk, rowsIn, e.i64(0)));
    Value row032 = e.trunc32(row0);
    Type elem = registerType(o.load.getType().getElementType());
    Type ptrTy = v.getPtr().getType();
    Value first = LLVM::GEPOp::create(b, loc, ptrTy, elem, v.getPtr(), ValueRange{offset});
    Value step = e.mul(o.stride(rank - 2), e.i64(rowStep));
    Value dst0 = e.gep(dst, swizzledOffset(e, o, row0, cc));
    Value at = first; // chunk i's address: chunk i - 1's plus the step
    for (int64_t i = 0; i < o.rows * band / threads; ++i) {
      if (i > 0)
        at = LLVM::GEPOp::create(b, loc, ptrTy, elem, at, ValueRange{step});
      Value ok = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                       e.add(row032, e.i32(i * rowStep)), rowsIn);
      Value bytes = arith::SelectOp::create(b, loc, ok, colBytes, e.i32(0));
      // An empty chunk still needs a valid address: the view's base.
      Value src = arith::SelectOp::create(b, loc, ok, at, v.getPtr());
      Value to = rowStep % 8 == 0
                     ? e.gep(dst0, e.i64(i * rowStep * 128))
                     : e.gep(dst, swizzledOffset(e, o, e.add(row0, e.i64(i * rowStep)), cc));
      NVVM::CpAsyncOp::create(b, loc, to, src, 16, NVVM::LoadCacheModifierKind::CG, bytes);
    }
  }
  return true;
}

/// `threads` threads copy one operand tile into the swizzled layout with
/// 16-byte cp.async (the view passed asyncCopyable): a chunk past the
/// view's rows reads nothing and one across its last column reads only
/// the bytes inside (cp.async zero-fills the rest).
static void copyAsync(OpBuilder &b, Location loc, Operand &o, ArrayRef<Value> origins,
                      Value dst, Value tid, int64_t threads, bool narrowBands) {
  if (copyAsyncRegular(b, loc, o, origins, dst, tid, threads, narrowBands))
    return;
  Emit e{b, loc};
  tile::MakeViewOp v = o.view;
  size_t rank = origins.size();
  Value size1 = v.getSizes()[rank - 1], stride0 = o.stride(rank - 2);
  int64_t chunkElems = 16 / o.elemBytes;
  Type elem = registerType(o.load.getType().getElementType());
  forEachChunk(b, loc, o, origins, tid, threads, [&](const Chunk &ch) {
    // Bytes of this chunk inside the view: 0 .. 16 (a chunk is never
    // partly left of column 0: origins are multiples of the tile width).
    Value left = arith::MinSIOp::create(b, loc, arith::SubIOp::create(b, loc, size1, ch.gcol),
                                        e.i64(chunkElems));
    left = arith::SelectOp::create(b, loc, e.ult(ch.gcol, size1), left, e.i64(0));
    Value bytes = arith::SelectOp::create(b, loc, ch.rowOk,
                                          e.mul(left, e.i64(o.elemBytes)), e.i64(0));
    // An empty chunk still needs a valid address: the view's base.
    Value off = e.add(e.mul(ch.grow, stride0), ch.gcol);
    if (ch.batchOffset)
      off = e.add(off, ch.batchOffset);
    off = arith::SelectOp::create(b, loc, e.ne(bytes, e.i64(0)), off, e.i64(0));
    Value src = LLVM::GEPOp::create(b, loc, v.getPtr().getType(), elem, v.getPtr(),
                                    ValueRange{off});
    NVVM::CpAsyncOp::create(b, loc, e.gep(dst, ch.dstOffset), src, 16,
                            NVVM::LoadCacheModifierKind::CG,
                            arith::TruncIOp::create(b, loc, b.getI32Type(), bytes));
  });
}

void tilec::mma::copyStageAsync(OpBuilder &b, Location loc, ArrayRef<Operand *> ops,
                                ArrayRef<SmallVector<Value>> origins, ArrayRef<Value> fast,
                                Value base, Value tid, int64_t threads, bool narrowBands) {
  Emit e{b, loc};
  for (size_t k = 0; k < ops.size(); ++k) {
    Value dst = e.gep(base, e.i64(ops[k]->smemOffset));
    auto ifOp = scf::IfOp::create(b, loc, TypeRange{}, fast[k], true);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    copyAsync(b, loc, *ops[k], origins[k], dst, tid, threads, narrowBands);
    b.setInsertionPointToStart(&ifOp.getElseRegion().front());
    copyByThreads(b, loc, *ops[k], origins[k], dst, tid, threads);
  }
}

/// The four registers of an ldmatrix .x4 result struct `m` as mma.sync
/// operands of `elem` (ldmatrixX4).
static SmallVector<Value, 4> ldmatrixOperands(OpBuilder &b, Location loc, Value m, Type elem) {
  MLIRContext *ctx = b.getContext();
  Type i32 = b.getI32Type(), f32 = b.getF32Type();
  SmallVector<Value, 4> regs;
  for (int64_t x = 0; x < 4; ++x) {
    Value v = LLVM::ExtractValueOp::create(b, loc, m, ArrayRef<int64_t>{x});
    if (elem.isF32())
      v = NVVM::ConvertFloatToTF32Op::create(
          b, loc, i32, LLVM::BitcastOp::create(b, loc, f32, v),
          NVVM::FPRoundingModeAttr::get(ctx, NVVM::FPRoundingMode::RNA));
    else if (elem.isF16()) // f16 operands are passed as f16x2
      v = LLVM::BitcastOp::create(b, loc, VectorType::get({2}, b.getF16Type()), v);
    regs.push_back(v);
  }
  return regs;
}

SmallVector<Value, 4> tilec::mma::ldmatrixX4(OpBuilder &b, Location loc, Value ptr, bool trans,
                                             Type elem) {
  MLIRContext *ctx = b.getContext();
  Type i32 = b.getI32Type();
  auto x4Ty = LLVM::LLVMStructType::getLiteral(ctx, {i32, i32, i32, i32});
  Value m = NVVM::LdMatrixOp::create(
      b, loc, x4Ty, ptr, b.getI32IntegerAttr(4),
      NVVM::MMALayoutAttr::get(ctx, trans ? NVVM::MMALayout::col : NVVM::MMALayout::row),
      NVVM::LdStMatrixShapeAttr::get(ctx, 8, 8),
      NVVM::LdStMatrixEltTypeAttr::get(ctx, NVVM::LdStMatrixEltType::B16));
  return ldmatrixOperands(b, loc, m, elem);
}

SmallVector<Value, 4> tilec::mma::ldmatrixX4At(OpBuilder &b, Location loc, Value addr32,
                                               int64_t offset, bool trans, Type elem) {
  Type i32 = b.getI32Type();
  auto x4Ty = LLVM::LLVMStructType::getLiteral(b.getContext(), {i32, i32, i32, i32});
  Value m = inlineAsm(b, loc, x4Ty, addr32,
                      std::string("ldmatrix.sync.aligned.m8n8.x4") + (trans ? ".trans" : "") +
                          ".shared.b16 {$0, $1, $2, $3}, [$4+" + std::to_string(offset) +
                          "];",
                      "=r,=r,=r,=r,r");
  return ldmatrixOperands(b, loc, m, elem);
}

void tilec::mma::mmaSync(OpBuilder &b, Location loc, ValueRange a, ValueRange bRegs,
                         MutableArrayRef<Value> c, Type elem) {
  Type f32 = b.getF32Type();
  auto accTy = LLVM::LLVMStructType::getLiteral(b.getContext(), {f32, f32, f32, f32});
  bool tf32 = elem.isF32();
  NVVM::MMATypes type = tf32            ? NVVM::MMATypes::tf32
                        : elem.isBF16() ? NVVM::MMATypes::bf16
                                        : NVVM::MMATypes::f16;
  Value d = NVVM::MmaOp::create(b, loc, accTy, a, bRegs, SmallVector<Value>(c.begin(), c.end()),
                                ArrayRef<int64_t>{16, 8, tf32 ? 8 : 16}, std::nullopt,
                                std::nullopt, std::array<NVVM::MMATypes, 2>{type, type},
                                std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                                               NVVM::MMALayout::col});
  for (int64_t x = 0; x < 4; ++x)
    c[x] = LLVM::ExtractValueOp::create(b, loc, d, ArrayRef<int64_t>{x});
}

/// Issues the TMA copies of one operand tile: boxes of 128 bytes' worth
/// of columns; with `pairRank`, only boxes pairRank, pairRank + 2, ...,
/// each multicast to both programs of the pair.
static void issueBoxes(OpBuilder &b, Location loc, Operand &o, ArrayRef<Value> origins,
                       Value dst, Value mbar, Value pairRank) {
  Emit e{b, loc};
  auto clusterPtr = LLVM::LLVMPointerType::get(b.getContext(), 7);
  size_t rank = origins.size();
  // A part of a tensor (narrow) is addressed by its place in the parameter.
  auto coord = [&](size_t d) {
    if (o.view.getOffsets().empty())
      return e.trunc32(origins[d]);
    return e.trunc32(e.add(origins[d], o.view.getOffsets()[d]));
  };
  Value row = coord(rank - 2);
  Value col = coord(rank - 1);
  // Both programs of the pair: 0b11.
  Value mask = pairRank ? arith::ConstantOp::create(b, loc, b.getI16IntegerAttr(3)).getResult()
                        : Value();
  for (int64_t box = 0; box < o.boxes(); ++box) {
    auto issue = [&] {
      Value d = e.gep(dst, e.i64(box * o.rows * 128));
      Value d7 = LLVM::AddrSpaceCastOp::create(b, loc, clusterPtr, d);
      // Coordinates innermost first: column, row (, batch).
      SmallVector<Value> coords = {e.add(col, e.i32(box * o.boxCols())), row};
      if (rank == 3)
        coords.push_back(coord(0));
      NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp::create(
          b, loc, d7, o.tmap, coords, mbar,
          ValueRange{}, mask, Value(),
          NVVM::TMALoadModeAttr::get(b.getContext(), NVVM::TMALoadMode::TILE),
          b.getBoolAttr(false), NVVM::CTAGroupKindAttr(), Value());
    };
    if (pairRank)
      e.ifThen(e.eq(pairRank, e.i32(box % 2)), issue);
    else
      issue();
  }
}

void tilec::mma::issueTMA(OpBuilder &b, Location loc, Operand &o, ArrayRef<Value> origins,
                          Value dst, Value mbar, const Multicast *mc) {
  if (!mc) {
    issueBoxes(b, loc, o, origins, dst, mbar, Value());
    return;
  }
  // Launched one by one (a grid whose x is odd, TILEC_CLUSTERS=0), the
  // program copies the whole tile itself.
  auto ifOp = scf::IfOp::create(b, loc, TypeRange{}, mc->pair, true);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  issueBoxes(b, loc, o, origins, dst, mbar, mc->rank);
  b.setInsertionPointToStart(&ifOp.getElseRegion().front());
  issueBoxes(b, loc, o, origins, dst, mbar, Value());
}

Multicast tilec::mma::clusterPair(OpBuilder &b, Location loc, Operand *shared) {
  Emit e{b, loc};
  Type i32 = b.getI32Type();
  return Multicast{shared, e.eq(NVVM::ClusterDim::create(b, loc, i32), e.i32(2)),
                   NVVM::ClusterId::create(b, loc, i32)};
}

Value tilec::mma::emptyArrivals(OpBuilder &b, Location loc, int64_t warps, const Multicast *mc) {
  Emit e{b, loc};
  Value count = e.i32(warps);
  if (mc)
    count = arith::SelectOp::create(b, loc, mc->pair, e.i32(2 * warps), count);
  return count;
}

void tilec::mma::releaseStage(OpBuilder &b, Location loc, Value bar, const Multicast *mc) {
  Emit e{b, loc};
  NVVM::MBarrierArriveOp::create(b, loc, Type(), bar, Value());
  if (!mc)
    return;
  e.ifThen(mc->pair, [&] {
    auto clusterPtr = LLVM::LLVMPointerType::get(b.getContext(), 7);
    Value remote = NVVM::MapaOp::create(b, loc, clusterPtr, bar, e.bxor(mc->rank, e.i32(1)));
    NVVM::MBarrierArriveOp::create(b, loc, Type(), remote, Value());
  });
}

void tilec::mma::awaitPartnerReleases(OpBuilder &b, Location loc, const Multicast &mc,
                                      Value total, int64_t S,
                                      function_ref<Value(Value)> emptyBarrier) {
  Emit e{b, loc};
  e.ifThen(mc.pair, [&] {
    auto tail = scf::ForOp::create(b, loc, total, e.add(total, e.i32(S)), e.i32(1));
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(tail.getBody());
    Value i = tail.getInductionVar();
    Value parity = e.bxor(e.band(e.divu(i, e.i32(S)), e.i32(1)), e.i32(1));
    NVVM::MBarrierTryWaitParityOp::create(b, loc, emptyBarrier(e.zext64(e.remu(i, e.i32(S)))),
                                          parity, e.i32(10000000));
  });
}

void tilec::mma::copyStage(OpBuilder &b, Location loc, ArrayRef<Operand *> ops,
                           ArrayRef<SmallVector<Value>> origins, Value base,
                           function_ref<Value()> bar, Value tid, const Multicast *mc) {
  Emit e{b, loc};
  MLIRContext *ctx = b.getContext();
  // Whether each tile goes by TMA: its view has a descriptor and, for a
  // part, the tile lies inside the part (a negative origin, before the
  // part, would read the tensor before it) or runs past the part's end
  // where the part ends at the tensor's (the descriptor's bound: TMA fills
  // zeros there, as a copy bounded by the part would).
  SmallVector<Value> tma;
  for (size_t k = 0; k < ops.size(); ++k) {
    Operand *o = ops[k];
    Value viaTma = e.ne(o->tmapValid, e.i32(0));
    ArrayRef<int64_t> shape = o->load.getType().getShape();
    if (!o->view.getOffsets().empty()) {
      tile::MakeViewOp whole = tile::parameterView(o->view);
      for (auto [d, origin] : llvm::enumerate(origins[k])) {
        Value size = o->view.getSizes()[d];
        Value inside = e.cmp(arith::CmpIPredicate::sle, e.add(origin, e.i64(shape[d])), size);
        if (whole)
          inside = e.bor(inside, e.eq(e.add(o->view.getOffsets()[d], size), whole.getSizes()[d]));
        viaTma = e.band(viaTma, e.cmp(arith::CmpIPredicate::sge, origin, e.i64(0)));
        viaTma = e.band(viaTma, inside);
      }
    }
    tma.push_back(viaTma);
    e.ifThen(e.bnot(viaTma), [&] {
      copyByThreads(b, loc, *o, origins[k], e.gep(base, e.i64(o->smemOffset)), tid, 128,
                    /*zeroAddress=*/true);
    });
  }
  // Every producer thread arrives on the full barrier (kProducerArrivals):
  // a thread that stored part of a tile releases its own stores, after its
  // fence for the async proxy (wgmma reads them). One thread arriving for
  // all after a named barrier is ordered the same in the memory model, but
  // compute-sanitizer's racecheck does not follow it and reported the
  // consumers' reads racing with the other threads' stores. Where every
  // tile goes by TMA nobody stores: thread 0 arrives for all at once.
  Value anyByThreads = e.i1(false);
  for (Value viaTma : tma)
    anyByThreads = e.bor(anyByThreads, e.bnot(viaTma));
  Value full = bar();
  e.ifThen(anyByThreads, [&] {
    NVVM::FenceProxyOp::create(b, loc,
                               NVVM::ProxyKindAttr::get(ctx, NVVM::ProxyKind::async_shared),
                               NVVM::SharedSpaceAttr::get(ctx, NVVM::SharedSpace::shared_cta));
    e.ifThen(e.ne(tid, e.i32(0)),
             [&] { NVVM::MBarrierArriveOp::create(b, loc, Type(), full, Value()); });
  });
  e.ifThen(e.eq(tid, e.i32(0)), [&] {
    Value tx = e.i32(0);
    for (size_t k = 0; k < ops.size(); ++k)
      tx = e.add(tx, arith::SelectOp::create(b, loc, tma[k], e.i32(ops[k]->bytes()),
                                             e.i32(0)));
    NVVM::MBarrierExpectTxOp::create(b, loc, full, tx);
    Value count = arith::SelectOp::create(b, loc, anyByThreads, e.i32(1),
                                          e.i32(kProducerArrivals));
    NVVM::MBarrierArriveOp::create(b, loc, Type(), full, count);
    for (size_t k = 0; k < ops.size(); ++k)
      e.ifThen(tma[k], [&] {
        issueTMA(b, loc, *ops[k], origins[k], e.gep(base, e.i64(ops[k]->smemOffset)), full,
                 mc && mc->shared == ops[k] ? mc : nullptr);
      });
  });
}

/// The address of 16 zero bytes in global memory (`__tilec_zeros`, a
/// constant of the kernel's module), as a pointer of type `ptrTy`.
static Value zerosAddress(OpBuilder &b, Location loc, Type ptrTy) {
  constexpr StringLiteral name = "__tilec_zeros";
  auto module = b.getInsertionBlock()->getParentOp()->getParentOfType<ModuleOp>();
  Type i8 = b.getI8Type();
  if (!module.lookupSymbol(name)) {
    OpBuilder mb(b.getContext());
    mb.setInsertionPointToStart(module.getBody());
    LLVM::GlobalOp::create(mb, loc, LLVM::LLVMArrayType::get(i8, 16), /*isConstant=*/true,
                           LLVM::Linkage::Internal, name,
                           DenseElementsAttr::get(RankedTensorType::get({16}, i8),
                                                  b.getI8IntegerAttr(0)),
                           /*alignment=*/16, /*addrSpace=*/1);
  }
  Value g = LLVM::AddressOfOp::create(b, loc, LLVM::LLVMPointerType::get(b.getContext(), 1),
                                      name);
  return g.getType() == ptrTy ? g : LLVM::AddrSpaceCastOp::create(b, loc, ptrTy, g);
}

/// `threads` threads (from `tid`) copy one operand tile into the swizzled
/// layout, one element load at a time (any strides, any alignment), 16
/// bytes of shared memory per thread and step. An element outside the view
/// reads as 0: with `zeroAddress` it is read from `__tilec_zeros` (the
/// address selected, no branch and no predicate; the elements of a chunk
/// along one pointer advanced by the inner stride), else a branch skips
/// its load.
void tilec::mma::copyByThreads(OpBuilder &b, Location loc, Operand &o, ArrayRef<Value> origins,
                               Value dst, Value tid, int64_t threads, bool zeroAddress) {
  Emit e{b, loc};
  Type elem = registerType(o.load.getType().getElementType());
  Value ptr = o.view.getPtr();
  size_t rank = origins.size();
  Value size1 = o.view.getSizes()[rank - 1];
  Value stride0 = o.stride(rank - 2), stride1 = o.stride(rank - 1);
  int64_t chunkElems = 16 / o.elemBytes;
  Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(elem));
  auto vecTy = VectorType::get({chunkElems}, elem);
  // The offset of element (row, column) of the view.
  auto offset = [&](const Chunk &ch, Value gcol) {
    Value off = e.add(e.mul(ch.grow, stride0), e.mul(gcol, stride1));
    return ch.batchOffset ? e.add(off, ch.batchOffset) : off;
  };
  auto gep = [&](Value base, Value off) -> Value {
    return LLVM::GEPOp::create(b, loc, ptr.getType(), elem, base, ValueRange{off});
  };
  Value zeros = zeroAddress ? zerosAddress(b, loc, ptr.getType()) : Value();
  forEachChunk(b, loc, o, origins, tid, threads, [&](const Chunk &ch) {
    Value v = arith::ConstantOp::create(b, loc, vecTy, b.getZeroAttr(vecTy));
    Value p = zeroAddress ? gep(ptr, offset(ch, ch.gcol)) : Value();
    for (int64_t t = 0; t < chunkElems; ++t) {
      Value gcol = e.add(ch.gcol, e.i64(t));
      Value ok = arith::AndIOp::create(b, loc, ch.rowOk, e.ult(gcol, size1));
      Value x;
      if (zeroAddress) {
        // Each element's offset computed on its own gave LLVM a 64-bit
        // product per element to strength-reduce across the producer's
        // loop (16 induction variables for f8), and ptxas spilled them.
        if (t > 0)
          p = gep(p, stride1);
        Value from = arith::SelectOp::create(b, loc, ok, p, zeros);
        x = LLVM::LoadOp::create(b, loc, elem, from, o.elemBytes);
      } else {
        auto ifOp = scf::IfOp::create(b, loc, TypeRange{elem}, ok, true, true);
        OpBuilder::InsertionGuard g2(b);
        b.setInsertionPointToStart(&ifOp.getThenRegion().front());
        scf::YieldOp::create(b, loc, ValueRange{LLVM::LoadOp::create(
                                         b, loc, elem, gep(ptr, offset(ch, gcol)), o.elemBytes)});
        b.setInsertionPointToStart(&ifOp.getElseRegion().front());
        scf::YieldOp::create(b, loc, zero);
        x = ifOp.getResult(0);
      }
      v = vector::InsertOp::create(b, loc, x, v, ArrayRef<int64_t>{t});
    }
    LLVM::StoreOp::create(b, loc, v, e.gep(dst, ch.dstOffset), 16);
  });
}

namespace {

struct MmaLoopLowering : OpConversionPattern<scf::ForOp> {
  MmaLoopLowering(const TypeConverter &tc, MLIRContext *ctx, ThreadLayout layout)
      : OpConversionPattern<scf::ForOp>(tc, ctx, /*benefit=*/10), layout(layout) {}
  ThreadLayout layout;

  LogicalResult
  matchAndRewrite(scf::ForOp forOp, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto plan = forOp->getAttrOfType<DictionaryAttr>(tile::kPipelineAttrName);
    if (!plan)
      return rewriter.notifyMatchFailure(forOp, "not a planned mma loop");
    tile::MmaOp mma;
    forOp.getBody()->walk([&](tile::MmaOp op) { mma = op; });
    auto func = forOp->getParentOfType<func::FuncOp>();
    int64_t S = cast<IntegerAttr>(plan.get("stages")).getInt();
    int64_t C = cast<IntegerAttr>(plan.get("consumers")).getInt();
    Location loc = forOp.getLoc();
    Emit e{rewriter, loc};
    MLIRContext *ctx = rewriter.getContext();

    Operand A, B;
    A.load = tile::getStagedLoad(mma.getA());
    // b as loaded ([BK, BN] rows) or transpose(load) ([BN, BK] rows, K-major
    // for wgmma, as a is).
    tile::SharedOperand bOperand = tile::getSharedOperand(mma.getB());
    bool bKMajor = bool(bOperand.transpose);
    B.load = bOperand.load;
    if (cast<tile::MmaEncodingAttr>(layout).hasProducer()) {
      std::tie(A.tmap, A.tmapValid) = tmaArguments(func, 0);
      std::tie(B.tmap, B.tmapValid) = tmaArguments(func, 1);
    }
    for (Operand *o : {&A, &B}) {
      o->view = o->load.getView().getDefiningOp<tile::MakeViewOp>();
      ArrayRef<int64_t> shape = o->load.getType().getShape();
      o->rows = shape.end()[-2];
      o->cols = shape.end()[-1];
      o->elemBytes = o->load.getType().getElementType().getIntOrFloatBitWidth() / 8;
    }
    int64_t BM = A.rows, BK = A.cols, BN = bKMajor ? B.rows : B.cols;
    B.smemOffset = A.bytes();
    int64_t stageBytes = A.bytes() + B.bytes();
    Type elem = A.load.getType().getElementType();

    // Shared memory: the kernel's dynamic buffer, aligned up to 1024.
    SharedBase shared = alignedSharedMemory(e, func);
    Value smem = shared.ptr;
    Value smemAddr = shared.addr; // shared-window address, i64
    auto barrier = [&](Value which, Value s) { // which: 0 full, 1 empty
      Value off = e.add(e.i64(S * stageBytes),
                        e.mul(e.add(e.mul(which, e.i64(S)), s), e.i64(8)));
      return e.gep(smem, off);
    };

    Value tid = NVVM::ThreadIdXOp::create(rewriter, loc, rewriter.getI32Type());
    Value wg = warpgroupIndex(e, tid);
    Value lane = e.remu(tid, e.i32(32));
    // Trip count of the original loop (i64 bounds), and the load origins
    // (i64) of iteration i (i32), computed by a copy of the loop body's
    // scalar code.
    Value lb = forOp.getLowerBound(), ub = forOp.getUpperBound(), step = forOp.getStep();
    Type ivTy = lb.getType();
    Value lb64 = e.sext64(lb), ub64 = e.sext64(ub), step64 = e.sext64(step);
    Value span = arith::SubIOp::create(rewriter, loc, ub64, lb64);
    Value trips = arith::CeilDivSIOp::create(rewriter, loc, span, step64);
    trips = arith::MaxSIOp::create(rewriter, loc, trips, e.i64(0));
    Value trips32 = arith::TruncIOp::create(rewriter, loc, rewriter.getI32Type(), trips);
    auto originsAt = [&](Value i, SmallVector<Value> (&origins)[2]) {
      Value iv = e.add(lb64, e.mul(e.zext64(i), step64));
      if (!ivTy.isInteger(64))
        iv = arith::TruncIOp::create(rewriter, loc, ivTy, iv);
      IRMapping map;
      map.map(forOp.getInductionVar(), iv);
      for (Operation &op : forOp.getBody()->without_terminator()) {
        if (isa<tile::LoadOp, tile::MmaOp, tile::ReshapeOp, tile::PermuteOp>(op))
          continue;
        rewriter.clone(op, map);
      }
      Operand *ops[2] = {&A, &B};
      for (size_t k = 0; k < 2; ++k) {
        ArrayRef<int64_t> shape = ops[k]->load.getType().getShape();
        for (auto [d, idx] : llvm::enumerate(ops[k]->load.getIndices())) {
          Value v = e.sext64(map.lookupOrDefault(idx));
          origins[k].push_back(e.mul(v, e.i64(shape[d])));
        }
      }
    };
    if (!cast<tile::MmaEncodingAttr>(layout).hasProducer()) {
      Value result = mmaSyncLoop(rewriter, loc, A, B, bKMajor, S, C, adaptor.getInitArgs()[0],
                                 smem, tid, lane, trips32, originsAt);
      rewriter.replaceOp(forOp, result);
      return success();
    }
    // A cluster of two (plan "multicast": the operand both programs load
    // alike): each program copies half of that operand's boxes of a stage
    // into both, so a stage is free only when the consumers of both have
    // released it (empty counts the warps of both, each warp arrives on
    // its own program's barrier and on the other's). The mbarriers are
    // initialized in both before either copies or arrives.
    std::optional<Multicast> mc;
    if (auto shared = plan.getAs<IntegerAttr>("multicast"))
      mc = clusterPair(rewriter, loc, shared.getInt() == 1 ? &B : &A);
    // The releases (stageReleasesPerWarpgroup): the CUDA-core (fma)
    // consumers read the stage themselves, and so do the wgmma consumers
    // of a TF32 product with b as loaded (B^T's fragments, registerA
    // below).
    bool fma = cast<tile::MmaEncodingAttr>(layout).getKind() == tile::MmaKind::fma;
    bool swapped = cast<tile::MmaEncodingAttr>(layout).getSwapped();
    // TF32 with b as loaded (MN-major): wgmma reads tf32 only K-major, so
    // B^T's fragments come from registers (tf32RegisterAStep).
    bool registerA = !fma && swapped && !bKMajor && A.elemBytes == 4;
    // Whether every consumer thread releases the stages it read (the count
    // here and releasesStage below).
    bool threadsRead = fma || registerA;
    Value emptyCount = emptyArrivals(rewriter, loc, stageReleasesPerWarpgroup(threadsRead) * C,
                                     mc ? &*mc : nullptr);
    e.ifThen(e.eq(tid, e.i32(0)), [&] {
      for (int64_t s = 0; s < S; ++s) {
        NVVM::MBarrierInitOp::create(rewriter, loc, barrier(e.i64(0), e.i64(s)),
                                     e.i32(kProducerArrivals), Value());
        NVVM::MBarrierInitOp::create(rewriter, loc, barrier(e.i64(1), e.i64(s)), emptyCount,
                                     Value());
      }
      if (mc)
        NVVM::FenceMbarrierInitOp::create(rewriter, loc);
    });
    NVVM::Barrier0Op::create(rewriter, loc);
    if (mc) {
      NVVM::ClusterArriveOp::create(rewriter, loc, rewriter.getUnitAttr());
      NVVM::ClusterWaitOp::create(rewriter, loc, rewriter.getUnitAttr());
    }
    // A consumer warp's release of stage s64: its own program's empty
    // barrier and, in a pair, the other's (releaseStage).
    auto release = [&](Value s64) {
      releaseStage(rewriter, loc, barrier(e.i64(1), s64), mc ? &*mc : nullptr);
    };

    // Registers: two wgmma consumer warpgroups take most of the producer's
    // (pipelineRegisters; the producer keeps enough for its copy by
    // threads), for a fused epilogue's temporaries beside the accumulator:
    // at the launch's 168, ptxas spilled 744 bytes in matmul_bias_gelu and
    // 240 in matmul_scaled; 260 and 128 with 200.
    // Swapped (a skinny BM, or tf32 with b as loaded): wgmma computes B^T
    // A^T, M over BN (the consumer's columns in 64-column blocks) and N
    // over BM. A skinny tile's few accumulators need no registers moved
    // from the producer (ptxas ignores setmaxnreg in a kernel that small).
    std::optional<PipelineRegisters> regs;
    if (!fma && C >= 2 && (!swapped || BM * BN / (128 * C) >= 64))
      regs = pipelineRegisters(C, /*busyProducer=*/true);

    // ---- producer: warpgroup 0 -------------------------------------------
    e.ifThen(e.eq(wg, e.i32(0)), [&] {
      if (regs)
        setMaxRegisters(rewriter, loc, regs->producer, false);
      auto loop = scf::ForOp::create(rewriter, loc, e.i32(0), trips32, e.i32(1));
      {
        OpBuilder::InsertionGuard g(rewriter);
        rewriter.setInsertionPointToStart(loop.getBody());
        Value i = loop.getInductionVar();
        Value s = e.remu(i, e.i32(S));
        Value s64 = e.zext64(s);
        Value parity = e.bxor(e.band(e.divu(i, e.i32(S)), e.i32(1)), e.i32(1));
        NVVM::MBarrierTryWaitParityOp::create(rewriter, loc, barrier(e.i64(1), s64), parity,
                                              e.i32(10000000));
        Value stage = e.gep(smem, e.mul(s64, e.i64(stageBytes)));
        Value tidInWG = tid; // warpgroup 0: tid < 128
        SmallVector<Value> origins[2];
        originsAt(i, origins);
        copyStage(rewriter, loc, {&A, &B}, {origins[0], origins[1]}, stage,
                  [&] { return barrier(e.i64(0), s64); }, tidInWG, mc ? &*mc : nullptr);
      }
      // In a pair, the other program's consumers arrive on this one's
      // empty barriers: it may exit only after their last arrivals, which
      // the next S waits (stages trips .. trips + S - 1) see.
      if (mc)
        awaitPartnerReleases(rewriter, loc, *mc, trips32, S,
                             [&](Value s64) { return barrier(e.i64(1), s64); });
      LLVM::CallIntrinsicOp::create(rewriter, loc, rewriter.getStringAttr("llvm.nvvm.exit"),
                                    ValueRange{});
    });

    // ---- consumers: warpgroups 1..C ---------------------------------------
    if (regs)
      setMaxRegisters(rewriter, loc, regs->consumer, true);
    Value init = adaptor.getInitArgs()[0];
    Value result = fma ? fmaConsumers(rewriter, loc, A, B, S, C, init, smem, tid, lane, trips32,
                                      barrier)
                       : Value();
    if (!result) {
    Value consumer = e.sub(wg, e.i32(1));
    int64_t wgmmaN = swapped ? BM : BN;
    int64_t rowsPerWG = (swapped ? BN : BM) / C, mBlocks = rowsPerWG / 64;
    SmallVector<int64_t> partCols =
        swapped ? SmallVector<int64_t>{wgmmaN} : wgmmaParts(wgmmaN);
    SmallVector<int64_t> partFields;
    for (int64_t n : partCols)
      partFields.push_back(n / 2);
    int64_t nParts = int64_t(partCols.size());
    auto wgmmaTypeA = wgmmaTypeOf(elem);
    auto wgmmaTypeB = wgmmaTypeOf(B.load.getType().getElementType());
    if (swapped)
      std::swap(wgmmaTypeA, wgmmaTypeB);
    int64_t kStep = wgmmaKStep(elem);
    SmallVector<Value> accs = toWgmmaStructs(rewriter, loc, init, mBlocks, partFields);
    Value consumer64 = e.zext64(consumer);
    auto loop = scf::ForOp::create(rewriter, loc, e.i32(0), trips32, e.i32(1), accs);
    {
      OpBuilder::InsertionGuard g(rewriter);
      rewriter.setInsertionPointToStart(loop.getBody());
      Value i = loop.getInductionVar();
      Value s = e.remu(i, e.i32(S));
      Value s64 = e.zext64(s);
      Value parity = e.band(e.divu(i, e.i32(S)), e.i32(1));
      NVVM::MBarrierTryWaitParityOp::create(rewriter, loc, barrier(e.i64(0), s64), parity,
                                            e.i32(10000000));
      Value stageAddr = e.add(smemAddr, e.mul(s64, e.i64(stageBytes)));
      Value aBase = e.add(stageAddr, e.mul(consumer64, e.i64(rowsPerWG * 128)));
      Value bBase = e.add(stageAddr, e.i64(B.smemOffset));
      SmallVector<Value> cur(loop.getRegionIterArgs().begin(), loop.getRegionIterArgs().end());
      // B^T's fragments of k steps [k0, k1), read from the stage into
      // registers (all written before the fence that precedes their wgmmas:
      // wgmma.fence orders register writes before the wgmmas that read them).
      Value stage = registerA ? e.gep(smem, e.mul(s64, e.i64(stageBytes))) : Value();
      auto loadFragments = [&](int64_t k0, int64_t k1) {
        SmallVector<SmallVector<Value, 4>> fragments;
        for (int64_t kk = k0; kk < k1; ++kk)
          for (int64_t mb = 0; mb < mBlocks; ++mb)
            fragments.push_back(tf32BTFragments(
                e, B, BK, stage, e.add(e.mul(consumer, e.i32(rowsPerWG)), e.i32(mb * 64)),
                lane, kk));
        return fragments;
      };
      // The wgmmas of k steps [k0, k1) (fragments: loadFragments(k0, k1)).
      auto issueSteps = [&](int64_t k0, int64_t k1,
                            ArrayRef<SmallVector<Value, 4>> fragments) {
        for (int64_t kk = k0; kk < k1; ++kk)
        for (int64_t p = 0, nOff = 0; p < nParts; nOff += partCols[p++]) {
          // b K-major: [BN, BK] rows, as a's; MN-major: [BK, BN] rows (part
          // p from box nOff / 64). Swapped, wgmma's B is a's [BM, BK] tile
          // (K-major, all of it).
          Value descB = swapped   ? wgmmaKMajorDescriptor(e, stageAddr, BM, kk)
                        : bKMajor ? wgmmaKMajorDescriptor(e, bBase, BN, kk, nOff * 128)
                                  : wgmmaMNMajorDescriptor(
                                        e, bBase, BK, kk,
                                        nOff ? e.i64(nOff / 64 * BK * 128) : Value());
          Type partTy = wgmmaAccType(ctx, partFields[p]);
          for (int64_t mb = 0; mb < mBlocks; ++mb) {
            Value &acc = cur[mb * nParts + p];
            if (registerA) {
              acc = tf32RegisterAStep(e, acc, partTy, partFields[p], partCols[p], descB,
                                      fragments[(kk - k0) * mBlocks + mb]);
              continue;
            }
            Value descA;
            if (swapped) {
              // wgmma's A: the consumer's 64-column block mb of b (64 rows of
              // the K-major tile, or the 64-column box of the [BK, BN] rows).
              Value block = e.add(e.mul(consumer64, e.i64(rowsPerWG / 64)), e.i64(mb));
              descA = bKMajor ? wgmmaKMajorDescriptor(e, bBase, BN, kk, 0,
                                                      e.mul(block, e.i64(64 * 128)))
                              : wgmmaMNMajorDescriptor(e, bBase, BK, kk,
                                                       e.mul(block, e.i64(BK * 128)));
            } else {
              descA = wgmmaKMajorDescriptor(e, aBase, BM, kk, mb * 64 * 128);
            }
            acc = NVVM::WgmmaMmaAsyncOp::create(
                rewriter, loc, partTy, acc, descA, descB,
                NVVM::MMAShapeAttr::get(ctx, 64, int(partCols[p]), int(kStep)),
                NVVM::WGMMATypesAttr::get(ctx, wgmmaTypeA),
                NVVM::WGMMATypesAttr::get(ctx, wgmmaTypeB),
                NVVM::WGMMATypesAttr::get(ctx, NVVM::WGMMATypes::f32),
                NVVM::WGMMAScaleOutAttr::get(ctx, NVVM::WGMMAScaleOut::one),
                NVVM::WGMMAScaleInAttr::get(ctx, NVVM::WGMMAScaleIn::one),
                NVVM::WGMMAScaleInAttr::get(ctx, NVVM::WGMMAScaleIn::one),
                // a K-major as A: row; b K-major as B: col. Swapped, b is A
                // (row K-major, col MN-major) and a is B (K-major: col).
                NVVM::MMALayoutAttr::get(ctx, swapped && !bKMajor ? NVVM::MMALayout::col
                                                                  : NVVM::MMALayout::row),
                NVVM::MMALayoutAttr::get(ctx, bKMajor || swapped ? NVVM::MMALayout::col
                                                                 : NVVM::MMALayout::row),
                NVVM::MMAIntOverflowAttr());
          }
        }
      };
      auto releasePrevious = [&] {
        // Batch i-1 is done: its stage may be refilled (one arrival per
        // warp, or per thread where the threads read B^T's fragments from
        // the stage: compute-sanitizer's racecheck reported their reads
        // against a producer's stores by threads when only lane 0 arrived).
        e.ifThen(arith::AndIOp::create(rewriter, loc, e.ne(i, e.i32(0)),
                                       releasesStage(e, threadsRead, lane)),
                 [&] { release(e.zext64(e.remu(e.add(i, e.i32(S - 1)), e.i32(S)))); });
      };
      int64_t steps = BK / kStep;
      if (!registerA) {
        NVVM::WgmmaFenceAlignedOp::create(rewriter, loc);
        issueSteps(0, steps, {});
        NVVM::WgmmaGroupSyncAlignedOp::create(rewriter, loc);
        // One batch stays in flight.
        NVVM::WgmmaWaitGroupSyncOp::create(rewriter, loc, rewriter.getI64IntegerAttr(1));
        releasePrevious();
      } else {
        // A from registers: the stage in two batches, each with its own
        // fragments (distinct PTX registers), so that one batch stays in
        // flight while the other's fragments are read: the first half's
        // reads overlap the previous stage's second batch, the second
        // half's this stage's first. A batch's registers are written again
        // (the same half of the next stage) only after the wait that
        // follows the other batch, which leaves at most that one in flight.
        // (The stage's 128-byte swizzle makes BK a multiple of 32 f32: four
        // k8 steps at least.)
        assert(steps >= 2 && "a tf32 stage has at least two k8 steps");
        int64_t half = steps / 2;
        for (auto [k0, k1] : {std::pair<int64_t, int64_t>{0, half}, {half, steps}}) {
          SmallVector<SmallVector<Value, 4>> fragments = loadFragments(k0, k1);
          NVVM::WgmmaFenceAlignedOp::create(rewriter, loc);
          issueSteps(k0, k1, fragments);
          NVVM::WgmmaGroupSyncAlignedOp::create(rewriter, loc);
          NVVM::WgmmaWaitGroupSyncOp::create(rewriter, loc, rewriter.getI64IntegerAttr(1));
          // After the first half's wait the previous stage's second batch
          // is done: the whole previous stage has been read.
          if (k0 == 0)
            releasePrevious();
        }
      }
      scf::YieldOp::create(rewriter, loc, cur);
    }
    NVVM::WgmmaWaitGroupSyncOp::create(rewriter, loc, rewriter.getI64IntegerAttr(0));
    // The last stage: only a pair's producers wait for its release (by
    // the same threads as the others: they count on all of them).
    if (mc)
      e.ifThen(arith::AndIOp::create(rewriter, loc,
                                     e.cmp(arith::CmpIPredicate::sgt, trips32, e.i32(0)),
                                     releasesStage(e, threadsRead, lane)),
               [&] { release(e.zext64(e.remu(e.sub(trips32, e.i32(1)), e.i32(S)))); });
    result = fromWgmmaStructs(rewriter, loc, loop.getResults(),
                              cast<VectorType>(init.getType()), partFields);
    }
    rewriter.replaceOp(forOp, result);
    return success();
  }

  /// The A fragment of wgmma step kk of a swapped tf32 product whose A is
  /// B^T (64 rows from column `col0` of b's stage, 8 of K): thread (warp w,
  /// lane g * 4 + t) reads B[k][n] for n = col0 + 16w + g (+8) and k = 8kk
  /// + t (+4) from the stage's [BK, BN] rows (128-byte swizzled boxes of 32
  /// f32: chunk (n % 32) / 4 ^ k % 8) and rounds them to tf32 (cvt.rna):
  /// a0..a3, mma.sync m16n8k8's A fragment in each warp.
  static SmallVector<Value, 4> tf32BTFragments(Emit &e, Operand &B, int64_t BK, Value stage,
                                               Value col0, Value lane, int64_t kk) {
    OpBuilder &b = e.b;
    Location loc = e.loc;
    Value tid = NVVM::ThreadIdXOp::create(b, loc, b.getI32Type());
    Value warp = e.remu(e.divu(tid, e.i32(32)), e.i32(4));
    Value g = e.divu(lane, e.i32(4)), t = e.remu(lane, e.i32(4));
    SmallVector<Value, 4> regs;
    for (int64_t r = 0; r < 4; ++r) {
      int64_t h = r % 2, q = r / 2;
      Value n = e.add(e.add(col0, e.mul(warp, e.i32(16))), e.add(g, e.i32(8 * h)));
      Value k = e.add(e.i32(kk * 8 + 4 * q), t); // k % 8 = t + 4q
      Value chunk = e.bxor(e.remu(e.divu(n, e.i32(4)), e.i32(8)), e.add(t, e.i32(4 * q)));
      Value off = e.add(e.add(e.i32(int64_t(B.smemOffset)), e.mul(e.divu(n, e.i32(32)),
                                                                 e.i32(BK * 128))),
                        e.add(e.mul(k, e.i32(128)),
                              e.add(e.mul(chunk, e.i32(16)), e.mul(e.remu(n, e.i32(4)),
                                                                   e.i32(4)))));
      Value x = LLVM::LoadOp::create(b, loc, b.getF32Type(), e.gep(stage, e.zext64(off)), 4);
      regs.push_back(NVVM::ConvertFloatToTF32Op::create(
          b, loc, b.getI32Type(), x,
          NVVM::FPRoundingModeAttr::get(b.getContext(), NVVM::FPRoundingMode::RNA)));
    }
    return regs;
  }

  /// One wgmma m64nNk8.tf32 with A from registers (`a`, tf32BTFragments)
  /// and B the descriptor of a's K-major tile.
  static Value tf32RegisterAStep(Emit &e, Value acc, Type structTy, int64_t fields, int64_t N,
                                 Value descB, ArrayRef<Value> a) {
    return wgmmaRegisterA(e.b, e.loc, acc, structTy, fields,
                          ("m64n" + Twine(N) + "k8.f32.tf32.tf32").str(), a, descB, e.i32(1),
                          /*transB=*/std::nullopt);
  }

  /// The fma consumers (f32 operands on the CUDA cores): per stage, each
  /// thread reads, for every 4 k, one 16-byte chunk of a per row it holds
  /// and one 16-byte chunk of b per 64-column block and k, and accumulates
  /// its 4x4 blocks with fma (the "fma" layout: thread (tx, ty) of the
  /// consumers holds rows ty + 8C*i (+ 32C per row block) and columns 4tx
  /// .. 4tx + 3 of each 64-column block). The reads follow the 128-byte
  /// swizzle, which keeps them free of bank conflicts: a warp reads two
  /// rows of a (adjacent, so different chunks) and 16 consecutive chunks of
  /// b. Every row a thread holds is ty modulo 8 and every b row k is k
  /// modulo 8, so the swizzled chunk offsets are 8 per operand and thread,
  /// computed once; each read is a stage base plus one of them plus a
  /// constant. Once every lane of a warp has read the stage, its lane 0
  /// releases it.
  template <typename BarrierFn>
  static Value fmaConsumers(OpBuilder &b, Location loc, Operand &A, Operand &B,
                            int64_t S, int64_t C, Value init, Value smem, Value tid,
                            Value lane, Value trips32, BarrierFn barrier) {
    Emit e{b, loc};
    int64_t BM = A.rows, BK = A.cols, BN = B.cols;
    int64_t stageBytes = A.bytes() + B.bytes();
    int64_t rowBlocks = BM / (32 * C), colBlocks = BN / 64, rowsHeld = rowBlocks * 4;
    Value c = e.sub(tid, e.i32(128));
    Value tx = e.remu(c, e.i32(16)), ty = e.divu(c, e.i32(16));
    // a: row ty + 8C*i + 32C*rb at (ty * 128 + the chunk ((kc % 8) ^ (ty %
    // 8)) * 16) plus a constant; b: row k of box 2cb + tx / 8 at ((tx / 8) *
    // BK * 128 + the chunk ((tx % 8) ^ (k % 8)) * 16) plus a constant.
    Value aKey = e.remu(ty, e.i32(8)), bChunk = e.remu(tx, e.i32(8));
    Value aRow = e.mul(ty, e.i32(128)), bBox = e.mul(e.divu(tx, e.i32(8)), e.i32(BK * 128));
    SmallVector<Value> aOff, bOff;
    for (int64_t x = 0; x < 8; ++x) {
      aOff.push_back(e.zext64(e.add(aRow, e.mul(e.bxor(e.i32(x), aKey), e.i32(16)))));
      bOff.push_back(e.zext64(e.add(bBox, e.mul(e.bxor(bChunk, e.i32(x)), e.i32(16)))));
    }
    Type f32 = b.getF32Type();
    auto v4 = VectorType::get({4}, f32);
    // A read at a per-thread offset plus a constant (an immediate of the load).
    auto loadChunk = [&](Value stage, Value offset, int64_t constant) {
      Value p = e.gep(e.gep(stage, offset), e.i64(constant));
      return LLVM::LoadOp::create(b, loc, v4, p, 16).getResult();
    };
    auto loop = scf::ForOp::create(b, loc, e.i32(0), trips32, e.i32(1), ValueRange{init});
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(loop.getBody());
    Value i = loop.getInductionVar();
    Value s64 = e.zext64(e.remu(i, e.i32(S)));
    Value parity = e.band(e.divu(i, e.i32(S)), e.i32(1));
    NVVM::MBarrierTryWaitParityOp::create(b, loc, barrier(e.i64(0), s64), parity,
                                          e.i32(10000000));
    Value stage = e.gep(smem, e.mul(s64, e.i64(stageBytes)));
    Value accVec = loop.getRegionIterArgs()[0];
    SmallVector<Value> acc = unpackVector(b, loc, accVec);
    for (int64_t kc = 0; kc < BK / 4; ++kc) {
      // a[row, 4kc .. 4kc+3]: box kc/8, chunk (kc % 8) ^ (row % 8).
      SmallVector<Value> a;
      for (int64_t r = 0; r < rowsHeld; ++r) {
        int64_t rb = r / 4, i = r % 4;
        a.push_back(loadChunk(stage, aOff[kc % 8],
                              (kc / 8) * BM * 128 + (8 * C * i + 32 * C * rb) * 128));
      }
      for (int64_t kk = 0; kk < 4; ++kk) {
        int64_t k = kc * 4 + kk;
        // b[k, cb*64 + 4tx ..]: row k of its box, chunk (tx % 8) ^ (k % 8).
        SmallVector<Value> bv;
        for (int64_t cb = 0; cb < colBlocks; ++cb)
          bv.push_back(loadChunk(stage, bOff[k % 8], B.smemOffset + cb * 2 * BK * 128 + k * 128));
        for (int64_t r = 0; r < rowsHeld; ++r) {
          Value ar = vector::ExtractOp::create(b, loc, a[r], ArrayRef<int64_t>{kk});
          for (int64_t cb = 0; cb < colBlocks; ++cb)
            for (int64_t j = 0; j < 4; ++j) {
              Value bj = vector::ExtractOp::create(b, loc, bv[cb], ArrayRef<int64_t>{j});
              Value &slot = acc[(r * colBlocks + cb) * 4 + j];
              slot = math::FmaOp::create(b, loc, ar, bj, slot);
            }
        }
      }
    }
    // The thread has read the stage: it releases it for the producer.
    NVVM::MBarrierArriveOp::create(b, loc, Type(), barrier(e.i64(1), s64), Value());
    scf::YieldOp::create(b, loc, packVector(b, loc, accVec, acc));
    return loop.getResult(0);
  }

  /// The sm_80 pipeline (layout "mma_sync"): every thread copies its share
  /// of a stage with cp.async (copyAsync), STAGES - 1 stages ahead, and every
  /// warp multiplies with ldmatrix + mma.sync m16n8k16:
  ///
  ///   copy stages 0 .. S-2 (one commit group each)
  ///   for i: wait until stage i's group landed; bar.sync (every thread's
  ///          copies visible, and every warp done with stage i-1)
  ///          copy stage i+S-1 into stage (i-1) % S; commit
  ///          for each k16: ldmatrix A (x4) per 16-row block, ldmatrix.trans
  ///          B (x4: two n8 blocks), mma.sync per (16-row block, n8 block)
  ///
  /// Warp w of warpgroup c holds rows c*BM/C + 64*mb + 16w (+lane/4, +8) and
  /// columns 8j + 2*(lane%4), the wgmma layout, so mma.sync's c0..c3 of
  /// (mb, j) are slots mb*BN/2 + 4j + 0..3. The stages use the 128-byte
  /// swizzle of the TMA path (16-byte chunk c of row r at c ^ (r % 8)), which
  /// keeps the ldmatrix row reads free of bank conflicts.
  template <typename OriginsFn>
  static Value mmaSyncLoop(OpBuilder &b, Location loc, Operand &A, Operand &B, bool bKMajor,
                           int64_t S, int64_t C, Value init, Value smem, Value tid, Value lane,
                           Value trips32, OriginsFn originsAt) {
    Emit e{b, loc};
    MLIRContext *ctx = b.getContext();
    // b K-major ([BN, BK] rows, as a's): TF32 only (its scalar reads).
    int64_t BM = A.rows, BK = A.cols, BN = bKMajor ? B.rows : B.cols;
    int64_t stageBytes = A.bytes() + B.bytes();
    int64_t threads = 128 * C;
    Type elem = A.load.getType().getElementType();
    bool tf32 = elem.isF32(); // f32 operands rounded to TF32 (m16n8k8)
    // Whether each operand's view allows 16-byte cp.async (checked once).
    Value fast[2] = {asyncCopyable(b, loc, A), asyncCopyable(b, loc, B)};
    auto copyStage = [&](Value i, Value stageIndex) {
      SmallVector<Value> origins[2];
      originsAt(i, origins);
      Value stage = e.gep(smem, e.mul(e.zext64(stageIndex), e.i64(stageBytes)));
      copyStageAsync(b, loc, {&A, &B}, {origins[0], origins[1]}, fast, stage, tid, threads,
                     /*narrowBands=*/true);
    };
    // Prologue: stages 0 .. S-2.
    for (int64_t s = 0; s + 1 < S; ++s) {
      e.ifThen(e.ult(e.i32(s), trips32), [&] { copyStage(e.i32(s), e.i32(s)); });
      NVVM::CpAsyncCommitGroupOp::create(b, loc);
    }
    Value wg = e.divu(tid, e.i32(128));
    Value warp = e.remu(e.divu(tid, e.i32(32)), e.i32(4));
    int64_t rowsPerWG = BM / C, mBlocks = rowsPerWG / 64, nTiles = BN / 8;
    LdmatrixLanes lanes = ldmatrixLanes(e, lane, wg, warp, rowsPerWG, mBlocks);
    Value r = lanes.r, qLow = lanes.qLow, qHigh = lanes.qHigh;
    ArrayRef<Value> aRowOff = lanes.aRowOff;
    // B (.trans): matrices (k 0-7 | 8-15) x (n chunk 2np | 2np+1): k = 16kk +
    // r + 8*qLow, n chunk 2*np + qHigh. Row r of a matrix is row k with k % 8
    // = r, so the swizzle key is r for both operands.
    Value bRow = e.mul(e.add(r, e.mul(qLow, e.i32(8))), e.i32(128));

    auto i32 = b.getI32Type();
    auto f32 = b.getF32Type();
    auto toTf32 = [&](Value x) -> Value {
      return NVVM::ConvertFloatToTF32Op::create(
          b, loc, i32, x, NVVM::FPRoundingModeAttr::get(ctx, NVVM::FPRoundingMode::RNA));
    };
    auto ldmatrix = [&](Value stage, Value offset, bool trans) {
      return ldmatrixX4(b, loc, e.gep(stage, e.zext64(offset)), trans, elem);
    };

    auto loop = scf::ForOp::create(b, loc, e.i32(0), trips32, e.i32(1), ValueRange{init});
    {
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(loop.getBody());
      Value i = loop.getInductionVar();
      NVVM::CpAsyncWaitGroupOp::create(b, loc, b.getI32IntegerAttr(int32_t(S - 2)));
      NVVM::Barrier0Op::create(b, loc);
      Value next = e.add(i, e.i32(S - 1));
      e.ifThen(e.ult(next, trips32), [&] { copyStage(next, e.remu(next, e.i32(S))); });
      NVVM::CpAsyncCommitGroupOp::create(b, loc);
      Value stage = e.gep(smem, e.mul(e.zext64(e.remu(i, e.i32(S))), e.i64(stageBytes)));
      Value accVec = loop.getRegionIterArgs()[0];
      int64_t fields = BN / 2;
      SmallVector<Value> acc = unpackVector(b, loc, accVec);
      // One step covers 32 bytes of K: k16 of f16/bf16, k8 of tf32.
      int64_t steps = BK * A.elemBytes / 32;
      for (int64_t kk = 0; kk < steps; ++kk) {
        // A box kk/4 (128 bytes of K per box), k chunk 2*(kk%4) + qHigh, swizzled by r.
        Value aChunk = e.mul(e.bxor(e.add(e.i32((kk % 4) * 2), qHigh), r), e.i32(16));
        SmallVector<SmallVector<Value, 4>> a;
        for (int64_t mb = 0; mb < mBlocks; ++mb)
          a.push_back(ldmatrix(stage, e.add(e.add(e.i32((kk / 4) * BM * 128), aRowOff[mb]),
                                            aChunk),
                               false));
        // acc(mb, j) += a(mb) * b(j) for every 16-row block mb, with the B
        // fragment (b0, b1) of n8 block j.
        auto mmaStep = [&](int64_t j, ValueRange bRegs) {
          for (int64_t mb = 0; mb < mBlocks; ++mb)
            mmaSync(b, loc, a[mb], bRegs, MutableArrayRef<Value>(&acc[mb * fields + j * 4], 4),
                    elem);
        };
        if (tf32) {
          // B fragments of m16n8k8.tf32: b0 = B[8kk + lane%4][8j + lane/4],
          // b1 four rows below; scalar reads of the swizzled box of 32
          // columns (chunk (n%32)/4 ^ k%8, element n%4).
          Value t4 = e.remu(lane, e.i32(4)), g = e.divu(lane, e.i32(4));
          for (int64_t j = 0; j < nTiles; ++j) {
            SmallVector<Value, 2> bf;
            for (int64_t h = 0; h < 2; ++h) {
              Value k = e.add(e.i32(kk * 8 + h * 4), t4); // k % 8 = t4 + 4h
              Value n = e.add(e.i32(j * 8), g);
              Value off;
              if (bKMajor) {
                // Row n of box k / 32, chunk (k % 32) / 4 ^ n % 8, element k % 4.
                Value chunk =
                    e.bxor(e.i32(((kk * 8 + h * 4) % 32) / 4), e.remu(g, e.i32(8)));
                off = e.add(e.add(e.i32(int64_t(B.smemOffset) + (kk / 4) * BN * 128),
                                  e.mul(n, e.i32(128))),
                            e.add(e.mul(chunk, e.i32(16)), e.mul(t4, e.i32(4))));
              } else {
                Value chunk =
                    e.bxor(e.remu(e.divu(n, e.i32(4)), e.i32(8)), e.remu(k, e.i32(8)));
                off = e.add(e.add(e.i32(int64_t(B.smemOffset) + (j / 4) * BK * 128),
                                  e.mul(k, e.i32(128))),
                            e.add(e.mul(chunk, e.i32(16)),
                                  e.mul(e.remu(n, e.i32(4)), e.i32(4))));
              }
              Value x = LLVM::LoadOp::create(b, loc, f32, e.gep(stage, e.zext64(off)), 4);
              bf.push_back(toTf32(x));
            }
            mmaStep(j, bf);
          }
          continue;
        }
        for (int64_t np = 0; np < BN / 16; ++np) {
          // B box (2np + qHigh) / 8, chunk (2np + qHigh) % 8 = 2*(np%4) + qHigh;
          // the four matrices are (b0, b1) of n8 blocks 2np and 2np + 1.
          Value box = e.add(e.i32((np / 4) * BK * 128 + int64_t(B.smemOffset)),
                            e.i32(kk * 16 * 128));
          Value chunk = e.mul(e.bxor(e.add(e.i32((np % 4) * 2), qHigh), r), e.i32(16));
          SmallVector<Value, 4> bm = ldmatrix(stage, e.add(e.add(box, bRow), chunk), true);
          mmaStep(2 * np, ValueRange{bm[0], bm[1]});
          mmaStep(2 * np + 1, ValueRange{bm[2], bm[3]});
        }
      }
      scf::YieldOp::create(b, loc, packVector(b, loc, accVec, acc));
    }
    NVVM::CpAsyncWaitGroupOp::create(b, loc, b.getI32IntegerAttr(0));
    return loop.getResult(0);
  }
};

} // namespace



void tilec::populateMmaToNVVMPatterns(const TypeConverter &converter,
                                      ThreadLayout layout,
                                      RewritePatternSet &patterns) {
  patterns.add<MmaLoopLowering>(converter, patterns.getContext(), layout);
  populateGeneralPipelinePatterns(converter, layout, patterns);
}
