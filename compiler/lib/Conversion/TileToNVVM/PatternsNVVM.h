//===- PatternsNVVM.h - shared pieces of convert-tile-to-nvvm ----*- C++ -*-===//
//
// The thread layout of one kernel and the pattern sets of each op family.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_LIB_CONVERSION_TILETONVVM_PATTERNSNVVM_H
#define TILEC_LIB_CONVERSION_TILETONVVM_PATTERNSNVVM_H

#include "tilec/Dialect/Tile/IR/TileDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/DialectConversion.h"

#include <string>

namespace tilec {

/// How a kernel's tiles are spread over its threads: the kernel's one
/// distributed encoding (#tile.blocked from tile-layout, #tile.mma from
/// tile-stage-shared; see TileAttrs.td), which answers which elements each
/// thread holds and in which registers.
using ThreadLayout = tile::DistributedEncodingAttr;

/// Whether the kernel's tiles sit in an mma pipeline's accumulator layout
/// (wgmma, mma_sync or fma fragments) rather than the blocked one.
inline bool isPipelined(ThreadLayout layout) { return mlir::isa<tile::MmaEncodingAttr>(layout); }
/// The distributed encoding of a tile (tile-layout puts one on every tile
/// type; the conversion checks it before any pattern runs).
inline ThreadLayout encodingOf(mlir::RankedTensorType t) {
  return mlir::cast<ThreadLayout>(t.getEncoding());
}
/// The type an element of `elem` has in registers: f8 values are their
/// bytes (i8; LLVM has no f8 type), converted by cvt where cast asks.
inline mlir::Type registerType(mlir::Type elem) {
  if (tile::isFloat8(elem))
    return mlir::IntegerType::get(elem.getContext(), 8);
  return elem;
}
/// The vector of elements one thread holds of `t` under its encoding.
inline mlir::VectorType perThreadType(mlir::RankedTensorType t) {
  return mlir::VectorType::get({encodingOf(t).getElemsPerThread(t.getShape())},
                               registerType(t.getElementType()));
}
/// The flat tile index (i64) of the first element of this thread's group g
/// of `t`, under its encoding.
mlir::Value groupBase(mlir::OpBuilder &b, mlir::Location loc, mlir::RankedTensorType t,
                      int64_t g);

/// A conversion pattern that needs the kernel's thread layout (its thread
/// count, its leader thread, whether it is an mma pipeline): the tiles' own
/// encodings come from their types.
template <typename OpTy>
struct LayoutPattern : mlir::OpConversionPattern<OpTy> {
  LayoutPattern(const mlir::TypeConverter &tc, mlir::MLIRContext *ctx,
                ThreadLayout layout)
      : mlir::OpConversionPattern<OpTy>(tc, ctx), layout(layout) {}
  ThreadLayout layout;
};

/// An op whose lowering is its converted operand: a reshape keeps every
/// element in the thread and register it was in, a tile.shared_tile is its
/// address.
template <typename OpTy>
struct ForwardOperandLowering : mlir::OpConversionPattern<OpTy> {
  using mlir::OpConversionPattern<OpTy>::OpConversionPattern;
  mlir::LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  mlir::ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, adaptor.getOperands()[0]);
    return mlir::success();
  }
};

/// Booleans are one byte each in memory, global or shared (like
/// torch.bool): `memoryType` is the type an element is kept as (i8 for i1);
/// `toMemory` widens an i1 value (scalar or vector) to it, `fromMemory`
/// reads a loaded byte as nonzero. Other types pass through unchanged.
mlir::Type memoryType(mlir::Type elem);
mlir::Value toMemory(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v);
mlir::Value fromMemory(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v, mlir::Type elem);

/// An i32 / i64 arith.constant.
inline mlir::Value constI32(mlir::OpBuilder &b, mlir::Location loc, int32_t v) {
  return mlir::arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(v));
}
inline mlir::Value constI64(mlir::OpBuilder &b, mlir::Location loc, int64_t v) {
  return mlir::arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(v));
}

/// Calls `fn(slot, flat, mayPad)` for every element of `tile` this thread
/// holds: `slot` is its index in the thread's vector, `flat` its row-major
/// index in the tile (i64), and `mayPad` whether `flat` may lie past the
/// tile's end (padding slots of the blocked layout).
void forEachThreadElement(
    mlir::OpBuilder &b, mlir::Location loc, mlir::RankedTensorType tile,
    llvm::function_ref<void(int64_t slot, mlir::Value flat, bool mayPad)> fn);
/// Whether flat index `flat` lies inside `tile` (not padding), as an i1.
mlir::Value insideTile(mlir::OpBuilder &b, mlir::Location loc, mlir::Value flat,
                       mlir::RankedTensorType tile);
/// Emits `body` under `if (cond)` (no results).
void ifThen(mlir::OpBuilder &b, mlir::Location loc, mlir::Value cond,
            llvm::function_ref<void()> body);

/// The coordinates (i64, outermost first) of row-major flat index `flat` in
/// `shape` (the outermost one modulo its size only with `wrapOutermost`,
/// for a flat index that may lie beyond the shape), and back; a null
/// coordinate in `tileFlat` counts as 0.
llvm::SmallVector<mlir::Value> tileCoords(mlir::OpBuilder &b, mlir::Location loc,
                                          mlir::Value flat, llvm::ArrayRef<int64_t> shape,
                                          bool wrapOutermost = false);
mlir::Value tileFlat(mlir::OpBuilder &b, mlir::Location loc, llvm::ArrayRef<mlir::Value> coords,
                     llvm::ArrayRef<int64_t> shape);
/// The source coordinates a numpy broadcast from `from` reads for result
/// coordinates `coords` (aligned at the innermost; null where `from` has 1).
llvm::SmallVector<mlir::Value> broadcastSource(llvm::ArrayRef<mlir::Value> coords,
                                               llvm::ArrayRef<int64_t> from);

/// The flat tile index of every element this thread holds, as a vector<P x
/// i32>: slot (r, v) is (r * threads + tid) * vec + v.
mlir::Value threadFlatIndices(mlir::OpBuilder &b, mlir::Location loc,
                              mlir::RankedTensorType tile);

/// Marks the tile.load / tile.store pairs whose store writes load + X back
/// where the load read (an mma accumulator's layout), before the
/// conversion: the load then lowers to nothing and the store reads, adds
/// and writes (LoadStoreToNVVM.cpp).
void markReadModifyWrites(mlir::func::FuncOp func);

void populateLoadStoreToNVVMPatterns(const mlir::TypeConverter &converter,
                                     ThreadLayout layout,
                                     mlir::RewritePatternSet &patterns);
void populateReduceToNVVMPatterns(const mlir::TypeConverter &converter,
                                  ThreadLayout layout,
                                  mlir::RewritePatternSet &patterns);
/// The shared memory a reduction over the rows of a blocked tile needs for
/// the warps' values of rows wider than a warp (0: the rows' lanes are in
/// one warp and it needs none).
int64_t rowReduceScratchBytes(tile::ReduceOp op);
/// The identity (f32 or i32) and the combination of a reduction kind (sum,
/// prod, max, min), shared by whole-tile and axis reductions.
mlir::TypedAttr reductionIdentity(mlir::Builder &b, llvm::StringRef kind, bool isFloat);
mlir::Value combineReduction(mlir::OpBuilder &b, mlir::Location loc, llvm::StringRef kind,
                             bool isFloat, mlir::Value x, mlir::Value y);
/// The value of a reduce/scan combiner region for operands x and y (its ops
/// cloned at the builder's insertion point).
mlir::Value inlineCombiner(mlir::OpBuilder &b, mlir::Region &combiner, mlir::Value x,
                           mlir::Value y);
/// argmax/argmin: the (value, index) pair of x and y that wins (the more
/// extreme value, a NaN first, the smaller index on ties).
llvm::SmallVector<mlir::Value, 2> combineArgExtreme(mlir::OpBuilder &b, mlir::Location loc,
                                                    bool maxLike, mlir::ValueRange x,
                                                    mlir::ValueRange y);
/// A scalar of up to 64 bits as 32-bit words (for shuffles and shared
/// memory), and back; wordCount is how many words a type takes.
unsigned wordCount(mlir::Type t);
llvm::SmallVector<mlir::Value, 2> toWords(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v);
mlir::Value fromWords(mlir::OpBuilder &b, mlir::Location loc, mlir::Type t,
                      mlir::ValueRange words);
/// A warp shuffle of a scalar of any type up to 64 bits (all lanes take part).
mlir::Value shuffleValue(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v,
                         mlir::Value offset, mlir::NVVM::ShflKind kind);
/// The shared-memory buffer of a kernel's whole-tile reductions: each
/// reduction op owns kReduceSlotsPerOp 32-bit slots, starting at slot
/// kReduceSlotsPerOp * (its kReduceSlotAttrName attribute).
std::string reduceScratchName(llvm::StringRef kernel);
inline constexpr unsigned kReduceSlotsPerOp = 128;
inline constexpr llvm::StringLiteral kReduceSlotAttrName = "tile.reduce_slot";
/// Reductions beyond kMaxReduceSlotSets share slots. A reduction whose
/// slots may be written again before every thread has read them (shared
/// slots, or a reduction in a loop) keeps a barrier after its reads
/// (kReduceBarrierAttrName, set when the slots are assigned).
inline constexpr unsigned kMaxReduceSlotSets = 8;
inline constexpr llvm::StringLiteral kReduceBarrierAttrName = "tile.reduce_barrier";
/// take: the relayout buffer already holds the source (an earlier take of
/// the same tile wrote it) / a later take reads it, so keep it intact.
inline constexpr llvm::StringLiteral kTakeReuseAttrName = "tile.take_reuse";
inline constexpr llvm::StringLiteral kTakeKeepAttrName = "tile.take_keep";
/// A store in an mma pipeline's loop (set by the pipeline's lowering): its
/// elements' positions are computed where it stores, from an opaque copy of
/// the thread index, not hoisted out of the loop (a 64-bit offset per
/// element kept live across the loop spilled).
inline constexpr llvm::StringLiteral kPositionsInPlaceAttrName = "tile.positions_in_place";
/// print (vprintf) and assert (__assertfail).
void populateDebugToNVVMPatterns(const mlir::TypeConverter &converter,
                                 ThreadLayout layout,
                                 mlir::RewritePatternSet &patterns);
/// gather, scatter and atomics: element by element.
void populateIrregularToNVVMPatterns(const mlir::TypeConverter &converter,
                                     ThreadLayout layout,
                                     mlir::RewritePatternSet &patterns);
/// Broadcasts of computed tiles, through a shared-memory buffer.
void populateRelayoutToNVVMPatterns(const mlir::TypeConverter &converter,
                                    ThreadLayout layout,
                                    mlir::RewritePatternSet &patterns);
/// The shared-memory buffer of a kernel's relayouts, and the bytes one
/// relayout of `src` needs in it.
std::string relayoutScratchName(llvm::StringRef kernel);
/// The relayout buffer of the kernel `op` is in (null before it is planned).
mlir::LLVM::GlobalOp relayoutGlobal(mlir::Operation *op);
/// Where b starts in the relayout buffer of a CUDA-core mma (after a).
int64_t mmaOperandOffset(mlir::RankedTensorType a);
int64_t relayoutScratchBytes(mlir::RankedTensorType src);
/// The shared-memory buffer of a kernel's scans, and the bytes a scan of
/// `src` needs in it: a total per (group, thread) when a thread holds more
/// than one group, and one per warp.
std::string scanScratchName(llvm::StringRef kernel);
int64_t scanScratchBytes(mlir::RankedTensorType src);
/// The pipelined mma loops planned by tile-stage-shared (sm_90a).
/// Builds the general mma pipelines of `func` (loops tile-stage-shared
/// planned with `general`) as producer code, mbarriers and tile.shared_tile
/// operands, before the conversion patterns run (GeneralPipelineToNVVM.cpp).
mlir::LogicalResult lowerGeneralPipelines(mlir::func::FuncOp func);
void populateMmaToNVVMPatterns(const mlir::TypeConverter &converter,
                               ThreadLayout layout,
                               mlir::RewritePatternSet &patterns);
/// The dynamic shared-memory buffer of a kernel with an mma pipeline.
std::string sharedMemoryName(llvm::StringRef kernel);
/// A shared-memory global `name` in `kernel`'s module (once per name).
void addSharedGlobal(mlir::Operation *kernel, llvm::StringRef name, mlir::Type type,
                     mlir::LLVM::Linkage linkage = mlir::LLVM::Linkage::Internal,
                     uint64_t alignment = 16);
using tile::hasApproxLowering;
void populateElementwiseToNVVMPatterns(const mlir::TypeConverter &converter,
                                       mlir::RewritePatternSet &patterns);

/// Whether `op` is in a kernel whose approximate exp/exp2/log/log2 flush
/// subnormal inputs and results to zero (@launch(ftz = 1), tile.ftz).
bool flushesSubnormals(mlir::Operation *op);

/// True for the ops that convert-tile-to-nvvm must rewrite.
bool needsNVVMLowering(mlir::Operation *op);

/// A scalar of `elemTy` loaded from global `addr` where `cond` holds and
/// `pad` elsewhere, as one predicated PTX load (`mov pad; @p ld.global.bN`)
/// instead of a branch around it.
mlir::Value predicatedLoad(mlir::OpBuilder &b, mlir::Location loc, mlir::Value cond,
                           mlir::Value addr, mlir::Value pad, mlir::Type elemTy);
/// A scalar store of `v` at global `addr` where `cond` holds, as one
/// predicated PTX store (`@p st.global.bN`) instead of a branch around it:
/// the guarded path of a tile store and a scatter are one such store per
/// element, and as branches they made most of a matmul's compile time.
void predicatedStore(mlir::OpBuilder &b, mlir::Location loc, mlir::Value cond, mlir::Value v,
                     mlir::Value addr);

/// Inline PTX with side effects (the predicated accesses, wgmma with A in
/// registers): `results` empty or one type (a struct for several).
inline mlir::Value inlineAsm(mlir::OpBuilder &b, mlir::Location loc, mlir::TypeRange results,
                             mlir::ValueRange operands, llvm::StringRef text,
                             llvm::StringRef constraints) {
  auto op = mlir::LLVM::InlineAsmOp::create(
      b, loc, results, operands, text, constraints, /*has_side_effects=*/true,
      /*is_align_stack=*/false, mlir::LLVM::tailcallkind::TailCallKind::None,
      mlir::LLVM::AsmDialectAttr::get(b.getContext(), mlir::LLVM::AsmDialect::AD_ATT),
      mlir::ArrayAttr());
  return results.empty() ? mlir::Value() : op.getResult(0);
}

/// `v` (an i32 or i64) through a move LLVM cannot see through: what is
/// computed from the copy stays where it is used instead of being hoisted
/// out of the loop around it (and kept live in registers across it).
inline mlir::Value opaqueCopy(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v) {
  bool wide = v.getType().isInteger(64);
  return inlineAsm(b, loc, v.getType(), v, wide ? "mov.b64 $0, $1;" : "mov.b32 $0, $1;",
                   wide ? "=l,l" : "=r,r");
}

} // namespace tilec

#endif
