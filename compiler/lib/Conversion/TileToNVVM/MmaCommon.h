//===- MmaCommon.h - shared by the two mma lowerings -----------*- C++ -*-===//
//
// What MmaToNVVM.cpp (the matmul pipeline: one mma loop, producer and
// consumers built by one pattern) and GeneralPipelineToNVVM.cpp (the general
// pipeline: any mma loop, built as IR before the patterns, and WgmmaLowering)
// share: small builders, the wgmma descriptor and accumulator structs, the
// staged operand and its copies.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_CONVERSION_TILETONVVM_MMACOMMON_H
#define TILEC_CONVERSION_TILETONVVM_MMACOMMON_H

#include "PatternsNVVM.h"

#include "tilec/Dialect/Tile/IR/TileDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <numeric>
#include <string>

namespace tilec::mma {
using namespace mlir;

/// Named barriers of the epilogue: one per consumer warpgroup (4, 5, 6:
/// its TMA stores), and one for every consumer thread (7: the TMA stores'
/// shared boxes, the reductions over an accumulator's rows). 0 is the
/// block's, 1 the producer's, 2 and 3 the ping-pong turns.
inline constexpr int32_t kFirstEpilogueBarrier = 4, kAllConsumersBarrier = 7;
/// Arrivals that complete a full barrier of a TMA pipeline (its count):
/// one per producer thread (copyStage).
inline constexpr int32_t kProducerArrivals = 128;
/// Arrivals per consumer warpgroup that release a stage: lane 0 of each
/// warp (4), after the wgmma wait that covers its warp's reads; or, where
/// the consumer threads read the stage themselves (ldmatrix, ld.shared, the
/// CUDA-core consumers), every thread after its own reads (128). Lane 0
/// releasing after the warp met is ordered the same in the PTX memory
/// model, but compute-sanitizer's racecheck takes only a thread's own
/// arrival as ordering its reads.
inline int64_t stageReleasesPerWarpgroup(bool threadsRead) { return threadsRead ? 128 : 4; }

/// Small builders over one OpBuilder and location.
struct Emit {
  OpBuilder &b;
  Location loc;
  Value i32(int64_t v) { return constI32(b, loc, int32_t(v)); }
  Value i64(int64_t v) { return constI64(b, loc, v); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return arith::SubIOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, loc, x, y); }
  Value divu(Value x, Value y) { return arith::DivUIOp::create(b, loc, x, y); }
  Value remu(Value x, Value y) { return arith::RemUIOp::create(b, loc, x, y); }
  Value band(Value x, Value y) { return arith::AndIOp::create(b, loc, x, y); }
  Value bor(Value x, Value y) { return arith::OrIOp::create(b, loc, x, y); }
  Value bxor(Value x, Value y) { return arith::XOrIOp::create(b, loc, x, y); }
  Value i1(bool v) { return arith::ConstantOp::create(b, loc, b.getBoolAttr(v)); }
  Value bnot(Value x) { return bxor(x, i1(true)); }
  Value shl(Value x, Value y) { return arith::ShLIOp::create(b, loc, x, y); }
  Value shr(Value x, Value y) { return arith::ShRUIOp::create(b, loc, x, y); }
  Value cmp(arith::CmpIPredicate p, Value x, Value y) { return arith::CmpIOp::create(b, loc, p, x, y); }
  Value eq(Value x, Value y) { return cmp(arith::CmpIPredicate::eq, x, y); }
  Value ne(Value x, Value y) { return cmp(arith::CmpIPredicate::ne, x, y); }
  Value ult(Value x, Value y) { return cmp(arith::CmpIPredicate::ult, x, y); }
  Value zext64(Value x) { return arith::ExtUIOp::create(b, loc, b.getI64Type(), x); }
  /// A signed integer (a loop bound, a tile index) as i64.
  Value sext64(Value x) {
    return x.getType().isInteger(64) ? x : arith::ExtSIOp::create(b, loc, b.getI64Type(), x);
  }
  Value trunc32(Value x) { return arith::TruncIOp::create(b, loc, b.getI32Type(), x); }
  Value gep(Value p, Value byteOffset) {
    return LLVM::GEPOp::create(b, loc, p.getType(), b.getI8Type(), p, ValueRange{byteOffset});
  }
  void ifThen(Value cond, llvm::function_ref<void()> body) { tilec::ifThen(b, loc, cond, body); }
};

/// Whether this consumer thread arrives when it releases a stage (as
/// stageReleasesPerWarpgroup counts them): every thread where the threads
/// read the stage themselves, else lane 0 of each warp.
inline Value releasesStage(Emit &e, bool threadsRead, Value lane) {
  return threadsRead ? e.i1(true) : e.eq(lane, e.i32(0));
}

/// The elements of a vector value, and a vector of `like`'s type made of
/// `elements`: the accumulator is a vector between loop iterations and
/// scalars inside them.
inline SmallVector<Value> unpackVector(OpBuilder &b, Location loc, Value v) {
  SmallVector<Value> out;
  for (int64_t x = 0; x < cast<VectorType>(v.getType()).getNumElements(); ++x)
    out.push_back(vector::ExtractOp::create(b, loc, v, ArrayRef<int64_t>{x}));
  return out;
}
inline Value packVector(OpBuilder &b, Location loc, Value like, ArrayRef<Value> elements) {
  Value out = like;
  for (auto [x, v] : llvm::enumerate(elements))
    out = vector::InsertOp::create(b, loc, v, out, ArrayRef<int64_t>{int64_t(x)});
  return out;
}

/// bar.sync on named barrier `id` for `threads` threads (a multiple of 32:
/// the warps that meet there).
inline void namedBarrier(Emit &e, Value id, int64_t threads) {
  NVVM::BarrierOp::create(e.b, e.loc, TypeRange{}, id, e.i32(int32_t(threads)),
                          NVVM::BarrierReductionAttr(), Value());
}

/// The byte offset of byte `byte` of row `row` in a box of 128-byte rows
/// with the 128-byte swizzle (TMA's, and wgmma's operand layout): 16-byte
/// chunk c of row r sits at chunk c ^ (r % 8).
inline Value swizzledOffset(Emit &e, Value row, Value byte) {
  Value chunk = e.bxor(e.shr(byte, e.i64(4)), e.remu(row, e.i64(8)));
  return e.add(e.add(e.mul(row, e.i64(128)), e.shl(chunk, e.i64(4))), e.band(byte, e.i64(15)));
}

/// The wgmma shared-memory matrix descriptor of an operand at shared-window
/// address `addr` (i64) in the 128-byte swizzled layout: leading and stride
/// byte offsets `lbo`, `sbo` (see the file comment).
inline Value wgmmaDescriptor(Emit &e, Value addr, int64_t lbo, int64_t sbo) {
  Value d = e.shr(e.band(addr, e.i64(0x3FFFF)), e.i64(4));
  uint64_t hi = (uint64_t(lbo >> 4) << 16) | (uint64_t(sbo >> 4) << 32) | (1ull << 62);
  return e.bor(d, e.i64(int64_t(hi)));
}

/// The descriptor of the operand `bytes` (a multiple of 16) past shared-window
/// address `base` (+ `offset`): `base`'s descriptor plus bytes / 16 in its
/// start-address field. The sum cannot carry out of the field (shared-window
/// addresses stay under 2^18), so the steps of an operand share one computed
/// descriptor and each adds a constant (one add instead of an add, a shift,
/// a mask and an or per step).
inline Value wgmmaDescriptorAt(Emit &e, Value base, Value offset, int64_t bytes, int64_t lbo,
                               int64_t sbo) {
  Value d = wgmmaDescriptor(e, offset ? e.add(base, offset) : base, lbo, sbo);
  return bytes ? e.add(d, e.i64(bytes >> 4)) : d;
}

/// The descriptor of step kk (32 bytes of K) of a K-major staged tile of
/// `rows` rows ([rows, K] in 128-byte swizzled boxes, 128 bytes of K per
/// box) at `base`, from `rowBytes` (+ `offset`) into it (128 bytes a row).
inline Value wgmmaKMajorDescriptor(Emit &e, Value base, int64_t rows, int64_t kk,
                                   int64_t rowBytes = 0, Value offset = {}) {
  return wgmmaDescriptorAt(e, base, offset, rowBytes + (kk / 4) * (rows * 128) + (kk % 4) * 32,
                           16, 1024);
}

/// The descriptor of step kk (16 rows of K) of an MN-major staged tile of
/// 16-bit elements ([K, cols] rows, 64-column boxes of `kRows` rows) at
/// `base` (+ `offset`).
inline Value wgmmaMNMajorDescriptor(Emit &e, Value base, int64_t kRows, int64_t kk,
                                    Value offset = {}) {
  return wgmmaDescriptorAt(e, base, offset, kk * 16 * 128, kRows * 128, 1024);
}

/// The columns of each wgmma that multiplies an accumulator of `n` columns.
/// wgmma's N is at most 256: a wider tile (BN = 320, as cuBLAS's 128 x 320)
/// is multiplied by one wgmma per part, the first of whole 64-column boxes
/// up to 256 and about half, the second the rest (192 + 128).
inline SmallVector<int64_t> wgmmaParts(int64_t n) {
  if (n <= 256)
    return {n};
  int64_t first = std::min<int64_t>(256, llvm::alignTo(n / 2, 64));
  return {first, n - first};
}

/// The struct of `fields` f32 that a wgmma reads and writes as its
/// accumulator: a named type (`tile.wgmma.f32xN`), so that the LLVM IR
/// spells it once instead of in every one of the thousand extractvalues
/// and insertvalues around the wgmmas (90% of a matmul's IR text).
inline LLVM::LLVMStructType wgmmaAccType(MLIRContext *ctx, int64_t fields) {
  auto ty = LLVM::LLVMStructType::getIdentified(ctx, "tile.wgmma.f32x" + std::to_string(fields));
  if (!ty.isInitialized())
    (void)ty.setBody(SmallVector<Type>(fields, Float32Type::get(ctx)), /*isPacked=*/false);
  return ty;
}

/// The accumulator vector as wgmma structs: per 64-row block mb, one struct
/// per part of wgmma's N (`parts`: the f32 fields of each; one part, or two
/// where the tile is wider than a wgmma's 256 columns), struct mb *
/// parts.size() + p holding slots mb * (sum of parts) + (fields of the parts
/// before p) + f. The fragments of 8-column chunks come in column order, so
/// a part is a contiguous run of a block's slots. With `undefined`, structs
/// of undefined values (a first wgmma that does not read its accumulator).
inline SmallVector<Value> toWgmmaStructs(OpBuilder &b, Location loc, Value vec,
                                         int64_t mBlocks, ArrayRef<int64_t> parts,
                                         bool undefined = false) {
  int64_t total = std::accumulate(parts.begin(), parts.end(), int64_t(0));
  SmallVector<Value> accs;
  for (int64_t mb = 0; mb < mBlocks; ++mb)
    for (int64_t p = 0, first = 0; p < int64_t(parts.size()); first += parts[p++]) {
      Value st = LLVM::UndefOp::create(b, loc, wgmmaAccType(b.getContext(), parts[p]));
      if (!undefined)
        for (int64_t f = 0; f < parts[p]; ++f) {
          Value x = vector::ExtractOp::create(b, loc, vec,
                                              ArrayRef<int64_t>{mb * total + first + f});
          st = LLVM::InsertValueOp::create(b, loc, st, x, ArrayRef<int64_t>{f});
        }
      accs.push_back(st);
    }
  return accs;
}
inline SmallVector<Value> toWgmmaStructs(OpBuilder &b, Location loc, Value vec,
                                         int64_t mBlocks, int64_t fields, bool undefined = false) {
  return toWgmmaStructs(b, loc, vec, mBlocks, ArrayRef<int64_t>{fields}, undefined);
}
/// The inverse of toWgmmaStructs: a vector of type `ty`.
inline Value fromWgmmaStructs(OpBuilder &b, Location loc, ValueRange accs, VectorType ty,
                              ArrayRef<int64_t> parts) {
  int64_t total = std::accumulate(parts.begin(), parts.end(), int64_t(0));
  Value result = arith::ConstantOp::create(
      b, loc, ty, DenseElementsAttr::get(ty, b.getF32FloatAttr(0)));
  for (auto [i, acc] : llvm::enumerate(accs)) {
    int64_t mb = int64_t(i) / int64_t(parts.size()), p = int64_t(i) % int64_t(parts.size());
    int64_t first = std::accumulate(parts.begin(), parts.begin() + p, int64_t(0));
    for (int64_t f = 0; f < parts[p]; ++f) {
      Value x = LLVM::ExtractValueOp::create(b, loc, acc, ArrayRef<int64_t>{f});
      result = vector::InsertOp::create(b, loc, x, result,
                                        ArrayRef<int64_t>{mb * total + first + f});
    }
  }
  return result;
}
inline Value fromWgmmaStructs(OpBuilder &b, Location loc, ValueRange accs, VectorType ty,
                              int64_t fields) {
  return fromWgmmaStructs(b, loc, accs, ty, ArrayRef<int64_t>{fields});
}

/// What one staged operand needs.
struct Operand {
  tile::LoadOp load;
  tile::MakeViewOp view;
  Value tmap, tmapValid; // kernel parameters
  int64_t rows = 0, cols = 0;
  int64_t smemOffset = 0; // within a stage
  int64_t elemBytes = 2;
  /// Elements per 128-byte row of a swizzled box (a TMA box's width).
  int64_t boxCols() const { return 128 / elemBytes; }
  /// Whole boxes: a tile whose width is not a multiple of the box width
  /// (BN = 96) is staged in one more box, whose last columns are loaded
  /// (TMA copies whole boxes) but never read.
  int64_t boxes() const { return (cols + boxCols() - 1) / boxCols(); }
  int64_t bytes() const { return tile::stagedTileBytes(rows, cols, elemBytes); }
  /// The view's stride along dimension d: its make_view operand, or where
  /// a copy set `strides` (copyStageAsync in a loop), that value.
  SmallVector<Value> strides;
  Value stride(size_t d) { return strides.empty() ? view.getStrides()[d] : strides[d]; }
};

/// The K of one wgmma step of `elem` operands: 32 bytes (k16 of f16/bf16,
/// k32 of f8, k8 of tf32).
inline int64_t wgmmaKStep(Type elem) { return 32 / (elem.getIntOrFloatBitWidth() / 8); }

/// wgmma's type for operand elements of `t`: bf16, f16, e4m3, e5m2 or
/// (f32 operands of a tf32 mma) tf32.
inline NVVM::WGMMATypes wgmmaTypeOf(Type t) {
  return isa<Float8E4M3FNType>(t)  ? NVVM::WGMMATypes::e4m3
         : isa<Float8E5M2Type>(t) ? NVVM::WGMMATypes::e5m2
         : t.isBF16()             ? NVVM::WGMMATypes::bf16
         : t.isF32()              ? NVVM::WGMMATypes::tf32
                                  : NVVM::WGMMATypes::f16;
}

/// One wgmma with A from registers (four b32), which MLIR 22's
/// nvvm.wgmma.mma_async cannot take (A only as a descriptor): inline PTX
/// `wgmma.mma_async.sync.aligned.<shape> {acc}, {a}, descB, p, 1, 1[, tB]`
/// with the accumulator's `fields` registers tied in and out, p = scaleD != 0
/// (accumulate). `shape` is e.g. "m64n128k16.f32.bf16.bf16"; `transB` (f16 /
/// bf16 only) whether B is MN-major.
inline Value wgmmaRegisterA(OpBuilder &b, Location loc, Value acc, Type structTy, int64_t fields,
                            StringRef shape, ArrayRef<Value> a, Value descB, Value scaleD,
                            std::optional<bool> transB) {
  SmallVector<Value> operands;
  for (int64_t f = 0; f < fields; ++f)
    operands.push_back(LLVM::ExtractValueOp::create(b, loc, acc, ArrayRef<int64_t>{f}));
  operands.append(a.begin(), a.end());
  operands.push_back(descB);
  operands.push_back(scaleD);
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "{\n.reg .pred p;\nsetp.ne.b32 p, $" << 2 * fields + 5 << ", 0;\n"
     << "wgmma.mma_async.sync.aligned." << shape << " {";
  for (int64_t f = 0; f < fields; ++f)
    os << (f ? ", " : "") << "$" << f;
  os << "}, {";
  for (int64_t r = 0; r < 4; ++r)
    os << (r ? ", " : "") << "$" << 2 * fields + r;
  os << "}, $" << 2 * fields + 4 << ", p, 1, 1";
  if (transB)
    os << ", " << (*transB ? 1 : 0);
  os << ";\n}";
  std::string constraints;
  for (int64_t f = 0; f < fields; ++f)
    constraints += (f ? ",=f" : "=f");
  for (int64_t f = 0; f < fields; ++f)
    constraints += "," + std::to_string(f);
  constraints += ",r,r,r,r,l,r";
  return inlineAsm(b, loc, structTy, operands, text, constraints);
}

/// The warpgroup of this thread (0: the producer), uniform in each warp.
Value warpgroupIndex(Emit &e, Value tid);

/// Which share of a tile's rows consumer warpgroup `wg` (1 ..) holds in
/// `mma` (i32): wg - 1, or 0 where the consumers alternate over whole tiles
/// (each holds all of its tile, as the encoding's group bases say).
inline Value rowShareOf(Emit &e, tile::MmaEncodingAttr mma, Value wg) {
  return mma.getAlternate() ? e.i32(0) : e.sub(wg, e.i32(1));
}

/// The kernel's dynamic shared memory (sharedMemoryName), aligned up to
/// 1024 bytes as the swizzled layouts need: its pointer and its
/// shared-window address (i64).
struct SharedBase {
  Value ptr, addr;
};
inline SharedBase alignedSharedMemory(Emit &e, func::FuncOp func) {
  auto smemPtrTy = LLVM::LLVMPointerType::get(e.b.getContext(), 3);
  Value raw = LLVM::AddressOfOp::create(e.b, e.loc, smemPtrTy, sharedMemoryName(func.getName()));
  Value rawAddr = LLVM::PtrToIntOp::create(e.b, e.loc, e.b.getI64Type(), raw);
  Value pad = e.band(e.sub(e.i64(1024), e.band(rawAddr, e.i64(1023))), e.i64(1023));
  return {e.gep(raw, pad), e.add(rawAddr, pad)};
}

/// TMA descriptor `t` of the kernel (its entry t of tile.tma) and its
/// valid flag: tile-stage-shared appended them, two per entry, as the last
/// kernel arguments.
inline std::pair<Value, Value> tmaArguments(func::FuncOp func, int64_t t) {
  auto entries = func->getAttrOfType<ArrayAttr>(tile::kTmaAttrName);
  Block &entry = func.getBody().front();
  unsigned first = entry.getNumArguments() - 2 * entries.size();
  return {entry.getArgument(first + 2 * t), entry.getArgument(first + 2 * t + 1)};
}

/// A consumer warpgroup's rows of an accumulator-layout tile ([BM, N] in
/// `mma`'s wgmma or mma.sync layout) as boxes of 64 rows x 128 bytes,
/// 128-byte swizzled (TMA's layout, and wgmma's and ldmatrix's operand
/// layout): box i = mb * colBoxes + q holds the warpgroup's rows 64 mb ..
/// 64 mb + 63, columns q * boxCols ... Which of a thread's fragment groups
/// lie in which box is the same for every thread (read from the encoding
/// for the first consumer thread). The TMA-store epilogue and
/// tile.shared_copy write through it.
struct FragmentBoxes {
  /// With `stmatrix` (sm_90a), 16-bit elements in the wgmma fragments are
  /// written by stmatrix where the encoding allows (checked for every
  /// thread), else by st.shared per group. (ldmatrix, which reads the same
  /// fragments, needs only sm_75: reads may ask for it on sm_80 too.)
  FragmentBoxes(tile::MmaEncodingAttr mma, RankedTensorType tileTy, bool stmatrix);
  /// Writes box i of the thread's fragments `values` (its converted tile)
  /// at `box`; `tid` is the thread index (i32), `tid64` the same in i64.
  void write(Emit &e, Value values, Value tid, Value tid64, int64_t i, Value box) const;
  /// The reverse: reads box i at `box` into the thread's fragment groups
  /// (`groups[g]`, a vector of `width` elements each; ldmatrix where
  /// stmatrix would write, ld.shared per group otherwise).
  void read(Emit &e, Value tid, Value tid64, int64_t i, Value box,
            MutableArrayRef<Value> groups) const;
  /// The row of its warpgroup's boxes and the byte (0 or 16) that this
  /// lane addresses for an x4 stmatrix / ldmatrix (+ 16 j for column
  /// blocks j and j + 1; then swizzled).
  struct MatrixLane {
    Value row, half;
  };
  static MatrixLane matrixLane(Emit &e, Value tid);
  /// The byte offset in its box of the thread's fragment group g.
  Value groupOffset(Emit &e, Value tid64, int64_t g) const;

  tile::MmaEncodingAttr mma;
  RankedTensorType tileTy;
  int64_t N, elemBytes, boxCols, colBoxes, boxes, width;
  SmallVector<SmallVector<int64_t>> groupsOfBox;
  /// For stmatrix: pairs[i][j][h], the group of row half h, columns 8j..
  /// of box i; empty: st.shared.
  SmallVector<SmallVector<std::array<int64_t, 2>>> pairs;
};

/// tile.shared_copy: a computed mma operand written to its buffer; and a
/// staged tile read from its stage into registers (tile.convert_layout from
/// #tile.shared) (TmaStoreToNVVM.cpp).
void populateSharedCopyPatterns(const TypeConverter &converter, RewritePatternSet &patterns);

/// A store marked tile.tma_store, through shared memory by TMA
/// (TmaStoreToNVVM.cpp); `values` is the thread's converted tile.
void lowerTmaStore(OpBuilder &b, tile::StoreOp op, Value values, ValueRange indices);
/// Where the runtime could not describe the tensor to TMA: the warpgroup's
/// threads copy a box of the store from shared memory themselves.
void copyBoxByThreads(Emit &e, tile::MakeViewOp view, Value batch, Value row0, Value col0,
                      Value box, Value t, int64_t elemBytes);
/// Before a kernel with TMA stores returns: wait until they have read
/// shared memory, which is freed when the block exits.
void drainTmaStores(func::FuncOp func);

/// setmaxnreg: this warpgroup's registers per thread become `count`
/// (giving them back or taking them, as pipelineRegisters divides them).
inline void setMaxRegisters(OpBuilder &b, Location loc, int32_t count, bool increase) {
  NVVM::SetMaxRegisterOp::create(
      b, loc, b.getI32IntegerAttr(count),
      NVVM::SetMaxRegisterActionAttr::get(b.getContext(),
                                          increase ? NVVM::SetMaxRegisterAction::increase
                                                   : NVVM::SetMaxRegisterAction::decrease));
}
/// A cluster of two programs sharing one staged operand's tiles (the
/// matmul pipeline's plan "multicast"): `pair` (i1) is whether this launch
/// runs in clusters of two (the runtime launches without where the grid
/// does not split into pairs), `rank` (i32) this program's place in its
/// cluster.
struct Multicast {
  Operand *shared = nullptr;
  Value pair, rank;
};
/// The pair `shared` belongs to: whether the launch runs in clusters of two
/// (%cluster_nctarank == 2) and this program's rank in its cluster.
Multicast clusterPair(OpBuilder &b, Location loc, Operand *shared);
/// The arrivals that free a stage: `warps` releasing warps, twice that in a
/// pair (the other program's warps arrive too: releaseStage).
Value emptyArrivals(OpBuilder &b, Location loc, int64_t warps, const Multicast *mc);
/// A releasing warp's arrival on empty barrier `bar`, and in a pair on the
/// same barrier of the other program (mapa). Both release at CTA scope, as
/// CUTLASS's cluster barriers do: what they order are wgmma's reads of the
/// stage, which the warp has waited for. At cluster scope every release
/// fenced the warp's memory (bf16 4096^3 matmul 0.181 ms without clusters,
/// 0.254 ms with).
void releaseStage(OpBuilder &b, Location loc, Value bar, const Multicast *mc);
/// In a pair the other program's releasing warps arrive on this one's empty
/// barriers, so its producer may exit only after their last arrivals: the
/// waits of the ring's iterations `total` .. `total` + S - 1 see them.
/// `emptyBarrier` gives stage s's (i64) barrier.
void awaitPartnerReleases(OpBuilder &b, Location loc, const Multicast &mc, Value total, int64_t S,
                          function_ref<Value(Value)> emptyBarrier);
/// The staged operand's TMA copy of the tile at `origins` into `dst`,
/// completing on mbarrier `bar` (thread 0 issues it). With `mc` (a pair's
/// shared tile): where `mc->pair`, this program issues every other box,
/// from box `rank`, each multicast to the same place in both programs'
/// shared memory; otherwise all of them.
void issueTMA(OpBuilder &b, Location loc, Operand &o, ArrayRef<Value> origins, Value dst,
              Value bar, const Multicast *mc = nullptr);
/// The same tile copied by `threads` threads (from `tid`) with ordinary
/// loads into the swizzled layout TMA would give (a view TMA cannot take).
/// With `zeroAddress` (the sm_90a producer's copy) an element outside the
/// view is loaded from 16 zero bytes in global memory instead of skipped
/// by a branch: no branch per element, and the producer's loop keeps one
/// pointer per chunk live instead of one offset per element (ptxas spilled
/// those: mlp_wide 268 bytes, now 0). The sm_80 copy by every thread keeps
/// the branches: that way attention at D = 64 spilled 104 bytes, the
/// zero-address way 268 (though less over all examples: 3364 against 5504).
void copyByThreads(OpBuilder &b, Location loc, Operand &o, ArrayRef<Value> origins, Value dst,
                   Value tid, int64_t threads, bool zeroAddress = false);
/// Whether 16-byte cp.async can copy the operand's view (i1): unit
/// innermost stride, 16-byte aligned base and row (and batch) pitches.
Value asyncCopyable(OpBuilder &b, Location loc, Operand &o);
/// `threads` threads (from `tid`) copy the tiles `ops` of one stage (at
/// `origins`, each at its smemOffset from `base`) into the swizzled layout:
/// by 16-byte cp.async where `fast[k]` (asyncCopyable) holds, else by
/// guarded loads (copyByThreads). The caller commits the cp.async group.
/// `narrowBands`: whether a tile whose rows the threads do not cover whole
/// may be copied in bands of fewer than 8 chunks (copyAsyncRegular).
void copyStageAsync(OpBuilder &b, Location loc, ArrayRef<Operand *> ops,
                    ArrayRef<SmallVector<Value>> origins, ArrayRef<Value> fast, Value base,
                    Value tid, int64_t threads, bool narrowBands);
/// ldmatrix .x4 of 8x8 matrices of 16-bit elements (this lane's row address
/// `ptr`), transposed with `trans`; its four registers as mma.sync operands
/// of `elem`: bf16 pairs as i32, f16 pairs as vector<2xf16>, f32 (TF32:
/// rounded) as i32.
SmallVector<Value, 4> ldmatrixX4(OpBuilder &b, Location loc, Value ptr, bool trans, Type elem);
/// The same from the 32-bit shared-window address `addr32` (i32) plus the
/// constant `offset` (in the instruction): the address arithmetic of a loop
/// of ldmatrix stays in 32-bit registers (shared pointers are 64-bit in
/// NVPTX's default address model).
SmallVector<Value, 4> ldmatrixX4At(OpBuilder &b, Location loc, Value addr32, int64_t offset,
                                   bool trans, Type elem);
/// How the lanes of a warp address ldmatrix.x4 for mma.sync fragments in
/// the wgmma layout (warp `warp` of warpgroup `wg` holds rows
/// wg * rowsPerWG + 64 mb + 16 warp ...): lane t gives the row address of
/// matrix t / 8 (bits qLow, qHigh), row r = t % 8. A's matrices are (rows
/// 0-7 | 8-15) x (k 0-7 | 8-15): row wg * rowsPerWG + 64 mb + 16 warp + r +
/// 8 qLow, k chunk 2 kk + qHigh; aRowOff[mb] is that row's byte offset in a
/// box of 128-byte rows.
struct LdmatrixLanes {
  Value r, qLow, qHigh;
  SmallVector<Value> aRowOff;
};
inline LdmatrixLanes ldmatrixLanes(Emit &e, Value lane, Value wg, Value warp, int64_t rowsPerWG,
                                   int64_t mBlocks) {
  LdmatrixLanes l;
  Value q = e.divu(lane, e.i32(8));
  l.r = e.remu(lane, e.i32(8));
  l.qLow = e.remu(q, e.i32(2));
  l.qHigh = e.divu(q, e.i32(2));
  for (int64_t mb = 0; mb < mBlocks; ++mb) {
    Value row = e.add(e.add(e.mul(wg, e.i32(rowsPerWG)), e.mul(warp, e.i32(16))),
                      e.add(e.add(l.r, e.mul(l.qLow, e.i32(8))), e.i32(mb * 64)));
    l.aRowOff.push_back(e.mul(row, e.i32(128)));
  }
  return l;
}
/// c[0..3] += a * b: one mma.sync m16n8k16 (m16n8k8 for TF32) of a
/// warp's A fragment `a` (4 registers) and B fragment `bRegs` (2), f32
/// accumulators `c` (the fragment's c0..c3), updated in place.
void mmaSync(OpBuilder &b, Location loc, ValueRange a, ValueRange bRegs, MutableArrayRef<Value> c,
             Type elem);
/// The producer warpgroup's copy of the tiles `ops` of one stage (at
/// `origins`, each at its smemOffset from `base`), complete on mbarrier
/// `bar()`, initialized with kProducerArrivals: the tiles TMA cannot take
/// are copied by the 128 threads, each of which then arrives, and thread 0
/// expects the bytes of the others and issues their TMA. A tile of a part
/// of a tensor (narrow) goes by TMA only when it lies inside the part: the
/// descriptor's bounds are the parameter's, so past the part's end TMA
/// would read the rest of the tensor instead of zeros.
/// With `mc`, its shared operand goes by issueTMA's multicast (its bytes
/// still counted in full: the other program's half lands here too).
void copyStage(OpBuilder &b, Location loc, ArrayRef<Operand *> ops,
               ArrayRef<SmallVector<Value>> origins, Value base, function_ref<Value()> bar,
               Value tid, const Multicast *mc = nullptr);
/// WgmmaLowering and the shared-tile forwarding of the general pipeline.
void populateGeneralPipelinePatterns(const TypeConverter &converter, ThreadLayout layout,
                                     RewritePatternSet &patterns);

} // namespace tilec::mma

#endif // TILEC_CONVERSION_TILETONVVM_MMACOMMON_H
