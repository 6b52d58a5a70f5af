//===- TileDialect.h - The tile dialect --------------------------*- C++ -*-===//
//
// Declares the tile dialect, its types and its operations.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_DIALECT_TILE_IR_TILEDIALECT_H
#define TILEC_DIALECT_TILE_IR_TILEDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/TensorEncoding.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseSet.h"

#include <array>
#include <string>

#include "tilec/Dialect/Tile/IR/TileOpsDialect.h.inc"

#include "tilec/Dialect/Tile/IR/TileEnums.h.inc"
#include "tilec/Dialect/Tile/IR/TileAttrInterfaces.h.inc"
#define GET_ATTRDEF_CLASSES
#include "tilec/Dialect/Tile/IR/TileAttrs.h.inc"

#define GET_TYPEDEF_CLASSES
#include "tilec/Dialect/Tile/IR/TileOpsTypes.h.inc"

#define GET_OP_CLASSES
#include "tilec/Dialect/Tile/IR/TileOps.h.inc"

namespace tilec::tile {
/// Name of the unit attribute that marks a `func.func` as a kernel entry.
inline constexpr llvm::StringLiteral kKernelAttrName = "tile.kernel";
/// Threads per block chosen by tile-layout (i32 attribute on the kernel).
inline constexpr llvm::StringLiteral kNumWarpsAttrName = "tile.num_warps";
/// Blocks per SM that register allocation must allow (nvvm.minctasm).
inline constexpr llvm::StringLiteral kMinBlocksAttrName = "tile.min_blocks_per_sm";
/// @launch(ftz = 1): the kernel's approximate exp, exp2, log and log2 flush
/// subnormal inputs and results to zero (ex2/lg2.approx.ftz.f32).
inline constexpr llvm::StringLiteral kFtzAttrName = "tile.ftz";
/// @launch(late_turn = 1): where two consumer warpgroups hand the tensor
/// cores to each other in an mma loop, each waits for its turn only after
/// it has computed the register operand of the turn's first mma (an i32:
/// 1, or 2 for also after the accumulator that mma adds to).
inline constexpr llvm::StringLiteral kLateTurnAttrName = "tile.late_turn";
/// On a kernel (@launch(turns = 0)): the consumer warpgroups of an mma loop
/// issue their wgmmas without taking turns at the tensor cores.
inline constexpr llvm::StringLiteral kNoTurnsAttrName = "tile.no_turns";
/// On `tile.make_view`: the index of the kernel parameter it views.
inline constexpr llvm::StringLiteral kParamIndexAttrName = "tile.param";
/// On a kernel: the requested depth of its mma pipeline (STAGES).
inline constexpr llvm::StringLiteral kStagesAttrName = "tile.stages";
/// On a kernel: programs launched together in clusters of this many along
/// grid dimension 0 (i32). Before tile-stage-shared it is what
/// `@launch(cluster = N)` asked for (absent: none); after, what the runtime
/// launches with where the grid allows (absent or 1: no clusters).
inline constexpr llvm::StringLiteral kClusterAttrName = "tile.cluster";
/// On a kernel: Sema rounded its grid's x up to even for clusters of two in
/// grouped order (@launch(group_rows, cluster = 2)): with an odd number of
/// rows of tiles, the last pairs' second program runs past the grid.
inline constexpr llvm::StringLiteral kPaddedGridAttrName = "tile.padded_grid";
/// @launch(pingpong = 0 | 1) on a kernel: whether a persistent kernel's
/// consumer warpgroups take its tiles in turn (absent: the compiler chooses).
inline constexpr llvm::StringLiteral kAlternateAttrName = "tile.pingpong_tiles";
/// On a kernel: the distributed encoding of its tiles (one per kernel):
/// #tile.blocked from tile-layout, or #tile.mma from tile-stage-shared for
/// a kernel with an mma pipeline.
inline constexpr llvm::StringLiteral kEncodingAttrName = "tile.encoding";
/// Whether `kernel` (a func.func or, after lowering, an llvm.func) runs an
/// mma pipeline (mbarriers, asynchronous copies, its own layout).
/// Whether `t` (or its element type) is one of the language's f8 types
/// (f8e4m3, f8e5m2): storage-only, converted through f32.
inline bool isFloat8(mlir::Type t) {
  return mlir::isa<mlir::Float8E4M3FNType, mlir::Float8E5M2Type>(mlir::getElementTypeOrSelf(t));
}

inline bool hasMmaPipeline(mlir::Operation *kernel) {
  return mlir::isa_and_nonnull<MmaEncodingAttr>(kernel->getAttr(kEncodingAttrName));
}
/// Whether `op` is a math op lowered to the GPU's approximate units
/// (MUFU) by convert-tile-to-nvvm (exp, log, log2, tanh, sin, cos), on
/// tiles or scalars; the lowering and the pipeline's cost estimates read it.
inline bool hasApproxLowering(mlir::Operation *op) {
  return mlir::isa<mlir::math::ExpOp, mlir::math::LogOp, mlir::math::Log2Op, mlir::math::TanhOp,
                   mlir::math::SinOp, mlir::math::CosOp>(op);
}
/// On a kernel: bytes of dynamic shared memory it needs (tile-plan-shared;
/// absent: its buffers are static arrays).
inline constexpr llvm::StringLiteral kSharedBytesAttrName = "tile.shared_bytes";
/// On a kernel (tile-plan-shared): its shared-memory buffers, each a
/// global's name with [offset, bytes] in the kernel's one dynamic array
/// (or, for a kernel without tile.shared_bytes, in no common array: each is
/// its own static array). Buffers whose ranges overlap alias.
inline constexpr llvm::StringLiteral kSharedBuffersAttrName = "tile.shared_buffers";
/// The most shared memory one block may use on `arch`: 227 KiB on sm_90,
/// 163 KiB on sm_80 (dynamic, after cuFuncSetAttribute); static arrays are
/// limited to 48 KiB.
inline int64_t maxSharedBytes(llvm::StringRef arch) {
  return arch == "sm_80" ? 166912 : 232448;
}
inline constexpr int64_t kMaxStaticSharedBytes = 48 * 1024;
/// On a kernel: the TMA descriptors appended to its parameters, as an array
/// of [param, box0, box1] (box innermost first).
inline constexpr llvm::StringLiteral kTmaAttrName = "tile.tma";
/// On an scf.for: the mma pipeline tile-stage-shared planned for it.
inline constexpr llvm::StringLiteral kPipelineAttrName = "tile.pipeline";
/// On a load that a general mma pipeline stages (tile-stage-shared): where
/// its tile lives in shared memory, {offset (bytes; in each stage of the
/// ring, or from the start for a tile loaded once before the loop),
/// resident (unit: loaded once), tma (its descriptor among tile.tma)}.
inline constexpr llvm::StringLiteral kSmemAttrName = "tile.smem";
/// On a store of an mma pipeline's [BM, N] result (tile-stage-shared): it
/// goes through shared memory and TMA, {tma (its descriptor among
/// tile.tma: boxes of 64 rows x 128 bytes), offset (bytes from the aligned
/// start of the kernel's dynamic shared memory), buffers (boxes per
/// consumer warpgroup that the store cycles through; 0: one per box of the
/// tile, in the matmul pipeline's ring, which is free after the loop)}.
inline constexpr llvm::StringLiteral kTmaStoreAttrName = "tile.tma_store";
/// On a reduction over the rows (axis = 0) of an mma kernel's accumulator
/// (tile-stage-shared): the offset (bytes from the aligned start of the
/// kernel's dynamic shared memory) of the buffer in which the consumer
/// warps combine their partial columns.
inline constexpr llvm::StringLiteral kColumnSmemAttrName = "tile.column_smem";
/// On a tile.mma of the general pipeline whose b, or transposed a or b, is
/// a computed tile (tile-stage-shared): for a and b, the offset (bytes
/// from the aligned start of the kernel's dynamic shared memory) of the
/// buffer tile-layout writes it to (tile.shared_copy), or -1.
inline constexpr llvm::StringLiteral kComputedSmemAttrName = "tile.computed_smem";
/// On a tile.mma that follows the general pipeline's mma loop in the block
/// around it (tile-stage-shared): a chained product, run once per
/// iteration of that block's loop (or once, at the kernel's top level).
inline constexpr llvm::StringLiteral kChainedAttrName = "tile.chained";
/// Rows of one TMA-store box: a consumer warpgroup's 64-row wgmma block.
inline constexpr int64_t kTmaStoreBoxRows = 64;
/// Boxes of shared memory each consumer warpgroup has for its TMA stores
/// in the general pipeline (every store of the kernel uses the same ones).
inline constexpr int64_t kTmaStoreBuffers = 2;

/// The chain of an mma operand that lives in shared memory: a load
/// (getStagedLoad: through the reshape of a batched load) and, for
/// `transpose(load(..))`, the transpose. Empty `load` when the operand is
/// another tile (held in registers).
struct SharedOperand {
  LoadOp load;
  PermuteOp transpose;
  /// The chain's ops from the load to the operand: the load, the batched
  /// load's reshape, the transpose (those present).
  llvm::SmallVector<mlir::Operation *, 3> ops() const;
  /// The loaded tile as the mmas take it, before a transpose: the load's
  /// result or the batched load's reshape.
  mlir::Value tile() const;
};
SharedOperand getSharedOperand(mlir::Value operand);

/// The tensor parameters (tile.param of their make_view) that `func` may
/// write: every use of a view other than a load, a scalar load, a gather or
/// a question about its sizes and strides.
llvm::DenseSet<int64_t> writtenParams(mlir::Operation *func);

/// The register form of the A operand of an mma whose accumulator layout
/// is `acc`'s encoding: #tile.dot_operand<opIdx = 0, parent, kWidth = 2>
/// for a 16-bit `acc` in a wgmma or mma.sync layout, whose fragments of
/// columns 16kk .. 16kk+15 already are the A registers of step kk; null
/// otherwise. Converting to it moves no data.
DotOperandEncodingAttr freeDotOperandA(mlir::RankedTensorType acc);
/// Whether `op` moves no data: an accumulator relabelled as the A operand
/// of its mma (freeDotOperandA).
bool isRelabelling(ConvertLayoutOp op);
/// Whether `op` reads a staged tile (#tile.shared, a stage of an mma
/// pipeline) into registers: no relayout buffer, the stage is the source.
bool readsStage(ConvertLayoutOp op);

/// The 2-D transpose (permutation [1, 0]) that defines `v`, or null.
PermuteOp transposeOf(mlir::Value v);
/// Which operand of an mma (0: a, 1: b) `use` is, directly or through a
/// transpose whose only use is that operand; -1 for any other use.
int mmaOperandPlace(mlir::OpOperand &use);
/// The mma of which `use` is an operand as mmaOperandPlace says, or null.
MmaOp mmaOfOperand(mlir::OpOperand &use);

/// Whether `op` takes whole columns of an mma kernel's [R, N] tile: all R
/// rows, a column offset and width that are multiples of 8 (one 8-column
/// chunk of the wgmma / mma.sync fragments per quad of lanes), so that in
/// the accumulator layout every thread already holds the part's elements.
bool slicesWholeColumns(SliceOp op);
/// How a broadcast, layout conversion, permute or slice between distributed
/// encodings runs in registers, within each warp, with no shared memory:
/// result register m of lane l is source register `reg[m] ^ R(l)` of lane
/// `lane[m] ^ L(l)`, where L and R are linear over GF(2) in the bits of l
/// (lane bit i flips `laneCols[i]` of the source lane and `regCols[i]` of
/// the source register). Register-local (every thread holds its result's
/// elements itself, at the same registers in every thread): L is the
/// identity, R and every lane[m] 0, and the op selects registers. A
/// padding register (no element in any thread) has reg[m] = -1.
struct WarpRelayout {
  llvm::SmallVector<int64_t> reg;
  llvm::SmallVector<int32_t> lane;
  std::array<int32_t, 5> laneCols{};
  std::array<int32_t, 5> regCols{};
  bool isRegisterLocal() const;
  /// The values of R(l) over the 32 lanes, ascending: the source registers
  /// `reg[m] ^ k` among which each result register chooses by R(l) == k.
  llvm::SmallVector<int32_t> regChoices() const;
};
/// The WarpRelayout of `op`, computed on the host from the encodings'
/// getGroupBase for every thread of the block (a source element held by
/// several lanes of a warp is read from the lowest); nullopt where some
/// thread needs an element that no lane of its warp holds, where the lanes
/// and registers read are not such a map, or where the shuffles would
/// outnumber the shared-memory path's stores and loads.
std::optional<WarpRelayout> warpRelayout(mlir::Operation *op);

/// Whether `tile` (a [1, R] tile) is used only by reshapes to [R] or
/// [R, 1]: a row of a matrix read as the rows' values of an mma kernel.
bool reshapedToRows(mlir::Value tile);

/// The load that feeds an mma operand: `load(...)` of a 2-D tile, or
/// `reshape(load(...))` of a [1, R, C] tile from a batched 3-D view (the
/// batch index picks the matrix). Null when `operand` is anything else.
LoadOp getStagedLoad(mlir::Value operand);

/// The first position in `loc` (fused, named and call-site locations hold
/// them inside) that lies in the user's source: not in a built-in buffer
/// such as "<prelude>", the helpers' (silu, gelu, ...); null if none.
mlir::FileLineColLoc sourcePosition(mlir::Location loc);
/// Where an error about `op` points the user: its location or, where that
/// holds no source position (a constant a fold merged), that of the first
/// op using it (recursively) that has one.
mlir::Location userLocation(mlir::Operation *op);
/// A tile shape as the language writes it: "[128, 256]".
inline std::string shapeText(llvm::ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}
/// An error about `op` at userLocation(op).
inline mlir::InFlightDiagnostic emitUserError(mlir::Operation *op) {
  return mlir::emitError(userLocation(op));
}

/// The view of the whole kernel parameter that `view` reads: `view`
/// itself, or for a part of it (narrow) the parameter's own make_view (the
/// one with the same tile.param and no offsets, in the kernel's entry
/// block), whose sizes bound the parameter's TMA descriptor.
MakeViewOp parameterView(MakeViewOp view);

/// Whether memory may be written after `from` and before `to` runs (`to`
/// is dominated by `from`): an op with a write effect (or unknown effects)
/// between them in program order (other branches of an `if` around `to`
/// excluded), or anywhere in a loop around `to` that is not around `from`
/// (its next iteration runs after the writes that follow `to` in the body).
bool mayWriteBetween(mlir::Operation *from, mlir::Operation *to);

/// Bytes a staged [rows, cols] operand tile of `elemBytes`-byte elements
/// takes in a pipeline stage: whole 128-byte swizzled boxes per row (a tile
/// 96 bf16 wide takes two boxes of 64). tile-stage-shared sizes the stages
/// with it and the lowering lays them out with it.
inline int64_t stagedTileBytes(int64_t rows, int64_t cols, int64_t elemBytes) {
  return rows * ((cols * elemBytes + 127) / 128) * 128;
}
} // namespace tilec::tile

#endif // TILEC_DIALECT_TILE_IR_TILEDIALECT_H
