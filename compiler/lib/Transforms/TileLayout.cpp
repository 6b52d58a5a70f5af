//===- TileLayout.cpp - choose the thread distribution of tiles -----------===//
//
// Every tile of a kernel is spread over the block's threads in one
// distributed encoding, put on every tile type: #tile.mma for a kernel with
// an mma pipeline (chosen by tile-stage-shared), else the #tile.blocked
// layout chosen here: thread t owns, for each repetition r, the `vec`
// consecutive elements starting at flat index (r * threads + t) * vec. The
// vector width makes the widest element type's global accesses 16 bytes,
// narrowed until it divides every tile's innermost size so that a vector
// never straddles two rows.
//
//===----------------------------------------------------------------------===//

#include "tilec/Transforms/AccumulatorColumns.h"
#include "tilec/Transforms/Passes.h"

#include "tilec/Dialect/Tile/IR/TileDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"

#define DEBUG_TYPE "tile-layout"

namespace tilec {
#define GEN_PASS_DEF_TILELAYOUT
#include "tilec/Transforms/Passes.h.inc"
} // namespace tilec

using namespace mlir;
using namespace tilec;

namespace {

struct TileLayoutPass : tilec::impl::TileLayoutBase<TileLayoutPass> {
  using TileLayoutBase::TileLayoutBase;

  void runOnOperation() override {
    getOperation().walk([&](func::FuncOp func) {
      if (!func->hasAttr(tile::kKernelAttrName))
        return;
      // The option overrides the kernel's @launch(min_blocks_per_sm = ...).
      if (minBlocksPerSM)
        func->setAttr(tile::kMinBlocksAttrName,
                      Builder(func.getContext()).getI32IntegerAttr(int32_t(minBlocksPerSM)));
      // Kernels with an mma loop got their layout from tile-stage-shared
      // (and a kernel may come with one, e.g. in a test).
      rowSlices.clear();
      ownWidths.clear();
      if (!func->hasAttr(tile::kEncodingAttrName))
        assignLayout(func);
      if (failed(encodeTiles(func)))
        signalPassFailure();
    });
  }

  /// Puts an encoding on the type of every tile in the kernel's body:
  /// results, block arguments and dense constants. In an mma kernel that is
  /// the kernel's #tile.mma encoding, except for the operands of a
  /// pipelined mma (the loads, and the reshape of a batched load), which
  /// live in the pipeline's shared-memory stages: #tile.shared, 128-byte
  /// swizzle. Otherwise a tile is #tile.blocked with the kernel's warps and
  /// the widest vector up to the kernel's that divides the tile's innermost
  /// size (assignLayout's width divides every tile's, so today all tiles of
  /// a kernel get it; a kernel that comes with a wider encoding gets narrower
  /// tiles where they need it). Tiles of one shape share one encoding, so
  /// elementwise work never moves data; a reshape between shapes of
  /// different widths gets tile.convert_layout around it (encodeReshapes).
  LogicalResult encodeTiles(func::FuncOp func) {
    MLIRContext *ctx = func.getContext();
    auto kernelEncoding =
        func->getAttrOfType<tile::DistributedEncodingAttr>(tile::kEncodingAttrName);
    auto blocked = dyn_cast<tile::BlockedEncodingAttr>(kernelEncoding);
    // In an mma kernel (wgmma or mma.sync fragments), a [BM] or [BM, 1] tile
    // of rows (a reduction over the accumulator's columns and what is
    // computed from it) is the accumulator's row slice.
    int64_t accRows = 0;
    auto mma = dyn_cast<tile::MmaEncodingAttr>(kernelEncoding);
    if (mma && mma.getKind() != tile::MmaKind::fma && !mma.getSwapped())
      func.walk([&](tile::MmaOp op) { accRows = op.getAcc().getType().getShape().end()[-2]; });
    // Columns of the accumulator (a reduction over its rows and what is
    // computed from it) are its column slice, whatever their length.
    DenseSet<Value> columns;
    if (accRows) {
      FailureOr<DenseSet<Value>> found = findAccumulatorColumns(func, accRows);
      if (failed(found))
        return failure();
      columns = std::move(*found);
    }
    auto encodingFor = [&](Value value, RankedTensorType t) -> Attribute {
      ArrayRef<int64_t> shape = t.getShape();
      if (auto row = rowSlices.find(value); blocked && row != rowSlices.end())
        return tile::SliceEncodingAttr::get(ctx, 1, blocked, row->second);
      if (columns.contains(value))
        return tile::SliceEncodingAttr::get(ctx, 0, kernelEncoding);
      if (accRows && shape[0] == accRows &&
          (shape.size() == 1 || (shape.size() == 2 && shape[1] == 1)))
        return tile::SliceEncodingAttr::get(ctx, 1, kernelEncoding);
      // A [BM] tile of rows reshaped to [1, BM] (to store into a row of a
      // matrix) keeps the rows' slice.
      if (accRows && shape.size() == 2 && shape[0] == 1 && shape[1] == accRows) {
        if (auto reshape = value.getDefiningOp<tile::ReshapeOp>())
          if (reshape.getTile().getType().getShape().front() == accRows)
            return tile::SliceEncodingAttr::get(ctx, 1, kernelEncoding);
        // And a row of a matrix loaded to be the rows' values.
        if (value.getDefiningOp<tile::LoadOp>() && tile::reshapedToRows(value))
          return tile::SliceEncodingAttr::get(ctx, 1, kernelEncoding);
      }
      if (!blocked)
        return kernelEncoding;
      if (auto own = ownWidths.find(value); own != ownWidths.end())
        return tile::BlockedEncodingAttr::get(ctx, own->second, blocked.getWarps());
      unsigned v = blocked.getVec();
      while (v > 1 && t.getShape().back() % v != 0)
        v /= 2;
      return tile::BlockedEncodingAttr::get(ctx, v, blocked.getWarps());
    };
    auto shared = tile::SharedEncodingAttr::get(ctx, 128, {1, 0});
    // A transposed operand is the same shared tile read column-major.
    auto sharedT = tile::SharedEncodingAttr::get(ctx, 128, {0, 1});
    DenseMap<Value, Attribute> staged;
    func.walk([&](tile::MmaOp mma) {
      if (!pipelined(mma))
        return;
      for (Value operand : {mma.getA(), mma.getB()}) {
        tile::SharedOperand so = tile::getSharedOperand(operand);
        if (!so.load)
          continue; // held in registers (a computed tile)
        if (so.transpose) {
          staged[operand] = sharedT;
          operand = so.transpose.getTile();
        }
        staged[operand] = shared;
        if (auto reshape = operand.getDefiningOp<tile::ReshapeOp>())
          staged[reshape.getTile()] = shared;
      }
    });
    // Staged loads that other work reads too (tile.smem `registers`): in
    // the stage as the mmas' operands are.
    SmallVector<tile::LoadOp> readFromStage;
    func.walk([&](tile::LoadOp load) {
      auto smem = load->getAttrOfType<DictionaryAttr>(tile::kSmemAttrName);
      if (smem && smem.get("registers")) {
        staged[load.getResult()] = shared;
        readFromStage.push_back(load);
      }
    });
    auto encode = [&](Value v) {
      auto t = dyn_cast<RankedTensorType>(v.getType());
      if (!t || t.getEncoding())
        return;
      Attribute e = staged.count(v) ? staged.lookup(v) : encodingFor(v, t);
      v.setType(RankedTensorType::get(t.getShape(), t.getElementType(), e));
    };
    func.walk([&](Operation *op) {
      forEachValueOf(op, encode);
      if (auto cst = dyn_cast<arith::ConstantOp>(op))
        if (auto dense = dyn_cast<DenseElementsAttr>(cst.getValue());
            dense && dense.getType() != cst.getType())
          cst.setValueAttr(dense.reshape(cast<ShapedType>(cst.getType())));
    });
    if (blocked)
      encodeReshapes(func);
    encodeSharedCopies(func);
    encodeRegisterOperands(func);
    for (tile::LoadOp load : readFromStage)
      encodeStageReads(load, kernelEncoding);
    return success();
  }

  /// The work other than mmas that a staged load feeds reads the tile from
  /// its stage into the kernel's layout: one tile.convert_layout after the
  /// load, which the pipeline's lowering turns into reads of the stage.
  static void encodeStageReads(tile::LoadOp load, Attribute encoding) {
    Value v = load.getResult();
    SmallVector<OpOperand *> uses;
    for (OpOperand &use : v.getUses())
      if (tile::mmaOperandPlace(use) < 0)
        uses.push_back(&use);
    if (uses.empty())
      return;
    RankedTensorType t = load.getType();
    OpBuilder b(load->getContext());
    b.setInsertionPointAfter(load);
    auto read = tile::ConvertLayoutOp::create(
        b, load.getLoc(), RankedTensorType::get(t.getShape(), t.getElementType(), encoding), v);
    for (OpOperand *use : uses)
      use->set(read);
  }

  /// The values `op` defines: the arguments of its regions' blocks (a
  /// loop's carried tiles), then its results.
  static void forEachValueOf(Operation *op, function_ref<void(Value)> fn) {
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument arg : block.getArguments())
          fn(arg);
    for (Value result : op->getResults())
      fn(result);
  }

  /// Whether tile-stage-shared pipelined `mma`: it is in the mma loop
  /// (tile.pipeline), or chained after it (tile.chained).
  static bool pipelined(tile::MmaOp mma) {
    auto loop = mma->getParentOfType<scf::ForOp>();
    return (loop && loop->hasAttr(tile::kPipelineAttrName)) ||
           mma->hasAttr(tile::kChainedAttrName);
  }

  /// A computed operand that a pipelined mma reads from shared memory (b,
  /// or a transposed a or b; tile-stage-shared planned its buffer:
  /// tile.computed_smem) becomes a tile.shared_copy of the computed tile,
  /// which writes it there and gives the #tile.shared tile the mma reads
  /// (the transpose's result: the same bytes read column-major).
  void encodeSharedCopies(func::FuncOp func) {
    MLIRContext *ctx = func.getContext();
    SmallVector<tile::MmaOp> mmas;
    func.walk([&](tile::MmaOp mma) {
      if (mma->hasAttr(tile::kComputedSmemAttrName))
        mmas.push_back(mma);
    });
    for (tile::MmaOp mma : mmas) {
      auto offsets = mma->getAttrOfType<DenseI64ArrayAttr>(tile::kComputedSmemAttrName);
      for (int which = 0; which < 2; ++which) {
        int64_t offset = offsets[which];
        if (offset < 0)
          continue;
        OpOperand &use = which ? mma.getBMutable() : mma.getAMutable();
        tile::PermuteOp permute = tile::transposeOf(use.get());
        Value computed = permute ? permute.getTile() : use.get();
        auto t = cast<RankedTensorType>(use.get().getType());
        SmallVector<unsigned, 2> order = {permute ? 0u : 1u, permute ? 1u : 0u};
        OpBuilder b(mma);
        auto copy = tile::SharedCopyOp::create(
            b, mma.getLoc(),
            RankedTensorType::get(t.getShape(), t.getElementType(),
                                  tile::SharedEncodingAttr::get(ctx, 128, order)),
            computed, b.getI64IntegerAttr(offset));
        use.set(copy);
        if (permute && permute->use_empty())
          permute.erase();
      }
      mma->removeAttr(tile::kComputedSmemAttrName);
    }
  }

  /// A computed first operand of a pipelined mma (attention's P, the MLP's
  /// hidden block) is read from registers in the fragment order of the
  /// mma's A operand: #tile.dot_operand, reached from the accumulator
  /// layout by a tile.convert_layout that moves nothing for 16-bit types
  /// (tile::freeDotOperandA).
  void encodeRegisterOperands(func::FuncOp func) {
    func.walk([&](tile::MmaOp mma) {
      if (!pipelined(mma))
        return;
      RankedTensorType a = mma.getA().getType();
      auto dot = tile::freeDotOperandA(a);
      if (!dot)
        return;
      OpBuilder b(mma);
      auto converted = tile::ConvertLayoutOp::create(
          b, mma.getLoc(), RankedTensorType::get(a.getShape(), a.getElementType(), dot),
          mma.getA());
      mma.getAMutable().assign(converted);
    });
  }

  /// A reshape keeps every element in its thread only between blocked
  /// encodings of one vector width (elements are dealt by flat index): it
  /// runs at the narrower width of its source and result, with a
  /// tile.convert_layout before or after it for the other.
  void encodeReshapes(func::FuncOp func) {
    func.walk([&](tile::ReshapeOp reshape) {
      RankedTensorType from = reshape.getTile().getType(), to = reshape.getType();
      auto src = cast<tile::BlockedEncodingAttr>(from.getEncoding());
      auto res = cast<tile::BlockedEncodingAttr>(to.getEncoding());
      if (src == res)
        return;
      auto narrow = src.getVec() < res.getVec() ? src : res;
      OpBuilder b(reshape);
      if (src != narrow) {
        auto converted = tile::ConvertLayoutOp::create(
            b, reshape.getLoc(),
            RankedTensorType::get(from.getShape(), from.getElementType(), narrow),
            reshape.getTile());
        reshape.getTileMutable().assign(converted);
      }
      if (res != narrow) {
        reshape.getResult().setType(
            RankedTensorType::get(to.getShape(), to.getElementType(), narrow));
        b.setInsertionPointAfter(reshape);
        auto converted = tile::ConvertLayoutOp::create(b, reshape.getLoc(), to, reshape);
        reshape.getResult().replaceAllUsesExcept(converted, converted);
      }
    });
  }

  /// The tiles of a blocked kernel that hold row values: the classes of
  /// tiles that must share an encoding (EncodingClasses) which hold a
  /// reduction over axis 1 of an [R, N] tile or an [R, 1] tile broadcast
  /// to [R, N], with the N of their rows.
  /// A class qualifies when every tile in it is [R] or [R, 1], all its
  /// reductions have rows of one length N, and nothing in it or using it
  /// needs the elements laid out otherwise: it is made by those reductions,
  /// elementwise work, splats, ranges, loads (each thread loads the rows it
  /// holds), reshapes between [R] and [R, 1] and what loops and branches
  /// carry, and used by elementwise work, those
  /// reshapes, broadcasts to [R, N], stores, loops and branches.
  static DenseMap<Value, int64_t> rowSliceCandidates(func::FuncOp func) {
    auto rowsShaped = [](RankedTensorType t, int64_t rows) {
      return (t.getRank() == 1 || (t.getRank() == 2 && t.getDimSize(1) == 1)) &&
             t.getDimSize(0) == rows;
    };
    EncodingClasses classes(func, [&](tile::ReshapeOp reshape) {
      int64_t rows = reshape.getType().getDimSize(0);
      return rowsShaped(reshape.getTile().getType(), rows) && rowsShaped(reshape.getType(), rows);
    });
    // Per class: its rows' length and count, or -1 once it is disqualified.
    DenseMap<Value, std::pair<int64_t, int64_t>> rowShape;
    auto seed = [&](Value member, int64_t n, int64_t rows) {
      auto [it, inserted] = rowShape.try_emplace(classes.find(member), n, rows);
      if (!inserted && it->second != std::make_pair(n, rows))
        it->second = {-1, -1};
    };
    func.walk([&](tile::ReduceOp reduce) {
      RankedTensorType from = reduce.getTile().getType();
      if (reduce.getAxis() && *reduce.getAxis() == 1 && from.getRank() == 2)
        seed(reduce.getResult(), from.getDimSize(1), from.getDimSize(0));
    });
    // So is a class broadcast over the rows of an [R, N] tile (a loaded or
    // computed [R] of row values, e.g. the ids of an embedding's rows):
    // each thread then makes the rows it holds, and the broadcast picks
    // registers instead of going through shared memory.
    func.walk([&](tile::BroadcastOp broadcast) {
      RankedTensorType from = broadcast.getTile().getType(), to = broadcast.getType();
      if (from.getRank() == 2 && to.getRank() == 2 && from.getDimSize(1) == 1 &&
          from.getDimSize(0) == to.getDimSize(0))
        seed(broadcast.getTile(), to.getDimSize(1), to.getDimSize(0));
    });
    DenseMap<Value, int64_t> result;
    for (auto &entry : rowShape) {
      Value root = entry.first;
      int64_t n = entry.second.first, rows = entry.second.second;
      if (n < 0)
        continue;
      SmallVector<Value> members = classes.members(root);
      auto madeHere = [&](Value v) {
        if (!rowsShaped(cast<RankedTensorType>(v.getType()), rows))
          return false;
        if (auto arg = dyn_cast<BlockArgument>(v))
          return isa<scf::ForOp>(arg.getOwner()->getParentOp());
        Operation *def = v.getDefiningOp();
        if (auto reduce = dyn_cast<tile::ReduceOp>(def))
          return reduce.getAxis() && *reduce.getAxis() == 1 &&
                 reduce.getTile().getType().getRank() == 2 &&
                 reduce.getTile().getType().getDimSize(1) == n;
        return isa<arith::ArithDialect, math::MathDialect>(def->getDialect()) ||
               isa<tile::SplatOp, tile::RangeOp, tile::ReshapeOp, tile::LoadOp, scf::ForOp,
                   scf::IfOp>(def);
      };
      auto usedHere = [&](OpOperand &use) {
        Operation *user = use.getOwner();
        if (auto broadcast = dyn_cast<tile::BroadcastOp>(user)) {
          RankedTensorType to = broadcast.getType();
          return to.getRank() == 2 && to.getDimSize(0) == rows && to.getDimSize(1) == n &&
                 broadcast.getTile().getType().getRank() == 2;
        }
        if (auto store = dyn_cast<tile::StoreOp>(user))
          return use.get() == store.getValue();
        // A reshape keeps each element where it is only into another row
        // tile of the class ([R] <-> [R, 1]), not into a row of row values.
        if (auto reshape = dyn_cast<tile::ReshapeOp>(user))
          return classes.find(reshape.getResult()) == root;
        return isa<arith::ArithDialect, math::MathDialect>(user->getDialect()) ||
               isa<scf::YieldOp, scf::ForOp>(user);
      };
      bool fits = llvm::all_of(members, [&](Value v) {
        return madeHere(v) && llvm::all_of(v.getUses(), usedHere);
      });
      if (fits)
        for (Value v : members)
          result[v] = n;
    }
    return result;
  }

  /// The row slices assignLayout chose, with their rows' length.
  DenseMap<Value, int64_t> rowSlices;

  /// Tiles whose class takes its own vector width (ownWidthClasses), with
  /// that width.
  DenseMap<Value, unsigned> ownWidths;

  /// The classes of tiles that share one encoding (EncodingClasses, with
  /// every reshape joining its source and result) that meet the kernel's
  /// other tiles only where data moves anyway: made by loads, splats,
  /// constants, ranges and elementwise work, used by elementwise work,
  /// stores, whole-tile reductions and as the source of a broadcast (whose
  /// lowering writes the source by its encoding and reads the result by
  /// its own). Such a class can take a vector width of its own, the widest
  /// up to `vec` that divides the innermost size of each of its tiles,
  /// instead of narrowing the kernel's: a one-element tile (an argmax
  /// stored as full<i32>([1], ..)) or an [R, 1] column of ids no longer
  /// makes a kernel scalar. Returns each member of such a class with its
  /// width.
  static DenseMap<Value, unsigned> ownWidthClasses(func::FuncOp func, unsigned vec) {
    EncodingClasses classes(func, [](tile::ReshapeOp) { return true; });
    auto soleTile = [](Operation *op, Value v) {
      return llvm::all_of(op->getOperands(), [&](Value o) {
        return o == v || !isa<RankedTensorType>(o.getType());
      });
    };
    auto madeHere = [&](Value v) {
      if (auto arg = dyn_cast<BlockArgument>(v))
        return isa<scf::ForOp>(arg.getOwner()->getParentOp());
      Operation *def = v.getDefiningOp();
      if (auto load = dyn_cast<tile::LoadOp>(def))
        return soleTile(load, Value());
      return isa<arith::ArithDialect, math::MathDialect>(def->getDialect()) ||
             isa<tile::SplatOp, tile::RangeOp, tile::ReshapeOp, scf::ForOp, scf::IfOp>(def);
    };
    auto usedHere = [&](OpOperand &use) {
      Operation *user = use.getOwner();
      if (auto store = dyn_cast<tile::StoreOp>(user))
        return use.get() == store.getValue() && soleTile(store, use.get());
      if (auto broadcast = dyn_cast<tile::BroadcastOp>(user))
        return use.get() == broadcast.getTile();
      if (auto reduce = dyn_cast<tile::ReduceOp>(user))
        return !reduce.getAxis();
      return isa<arith::ArithDialect, math::MathDialect>(user->getDialect()) ||
             isa<tile::ReshapeOp, scf::YieldOp, scf::ForOp>(user);
    };
    DenseMap<Value, SmallVector<Value>> byRoot;
    func.walk([&](Operation *op) {
      forEachValueOf(op, [&](Value v) {
        if (isa<RankedTensorType>(v.getType()))
          byRoot[classes.find(v)].push_back(v);
      });
    });
    DenseMap<Value, unsigned> widths;
    for (auto &[root, members] : byRoot) {
      if (!llvm::all_of(members, [&](Value v) {
            return madeHere(v) && llvm::all_of(v.getUses(), usedHere);
          }))
        continue;
      unsigned v = vec;
      while (v > 1 && llvm::any_of(members, [&](Value m) {
               return cast<RankedTensorType>(m.getType()).getShape().back() % v != 0;
             }))
        v /= 2;
      for (Value m : members)
        widths[m] = v;
    }
    return widths;
  }

  /// The option, else the kernel's @launch(num_warps = ...), else chosen.
  unsigned chooseWarps(func::FuncOp func, unsigned vec, unsigned maxAccessBytes, int64_t maxNumel,
                       bool reduces) {
    unsigned warps = numWarps;
    if (auto requested = func->getAttrOfType<IntegerAttr>(tile::kNumWarpsAttrName);
        !warps && requested)
      warps = unsigned(requested.getInt());
    if (warps != 0)
      return warps;
    // Two vectors per thread keeps two 16-byte loads in flight per operand;
    // more warps than that only shortens the per-thread work. Kernels with
    // block-wide reductions want four: each reduction costs a round of
    // shuffles and barriers that more warps make slower (measured on the
    // H200: row softmax over 1000 columns, 2 warps 3064 GB/s vs 4 warps
    // 2682; over 8192 columns, 8 warps 3948 vs 16 warps 3781).
    // With 2-byte elements (f16/bf16 rows widened to f32 for the
    // statistics) eight vectors per thread: bf16 rows of 8192, RMSNorm 4
    // warps 0.270 ms vs 8 warps 0.343, one-pass LayerNorm 0.292 vs 0.370.
    int64_t vectorsPerThread = reduces ? (maxAccessBytes <= 2 ? 8 : 4) : 2;
    int64_t want = maxNumel / (int64_t(vec) * 32 * vectorsPerThread);
    return static_cast<unsigned>(std::clamp<int64_t>(want, 1, 8));
  }

  void assignLayout(func::FuncOp func) {
    unsigned maxAccessBytes = 1;
    int64_t maxNumel = 1;
    // The innermost size of every tile, by tile (a row slice's tiles do
    // not constrain the width).
    DenseMap<Value, int64_t> innerSizeOf;
    auto visit = [&](Value v) {
      auto tt = dyn_cast<RankedTensorType>(v.getType());
      if (!tt)
        return;
      maxNumel = std::max(maxNumel, tt.getNumElements());
      innerSizeOf[v] = tt.getShape().back();
    };
    func.walk([&](Operation *op) {
      forEachValueOf(op, visit);
      for (Value v : op->getOperands())
        visit(v);
      if (auto load = dyn_cast<tile::LoadOp>(op))
        maxAccessBytes = std::max<unsigned>(
            maxAccessBytes,
            load.getType().getElementType().getIntOrFloatBitWidth() / 8);
      if (auto store = dyn_cast<tile::StoreOp>(op))
        maxAccessBytes = std::max<unsigned>(
            maxAccessBytes,
            store.getValue().getType().getElementType().getIntOrFloatBitWidth() / 8);
    });
    // One width for the kernel: 16-byte accesses of the widest element
    // type, narrowed until it divides every tile's innermost size. Widths
    // chosen per tile (encodeTiles gives a tile the widest width up to the
    // kernel's that divides its innermost size) were measured slower on the
    // H200 (docs/performance.md, session 7): the reshapes between widths
    // cost a shared-memory round trip each (fold 2.0x slower) and the wider
    // guarded edge accesses lost 7-14% (rowargmax, embedding gather).
    //
    // Reductions over the rows' elements (axis = 1) leave one value per
    // row held by the threads that hold the row (#tile.slice of the
    // blocked layout): rowSliceCandidates finds the tiles that can take it,
    // and they leave the width alone ([R, 1] columns would make it 1). A
    // class whose rows then lie in a number of threads L that is not a
    // power of two, or that does not divide the block's threads (or is a
    // multiple of them), goes back to the blocked layout, and the width
    // and warps are chosen again.
    DenseMap<Value, int64_t> candidates = rowSliceCandidates(func);
    unsigned widest = std::max(1u, 16 / maxAccessBytes);
    ownWidths = ownWidthClasses(func, widest);
    bool reduces = false;
    func.walk([&](tile::ReduceOp) { reduces = true; });
    unsigned vec, warps;
    while (true) {
      vec = widest;
      auto divides = [&](unsigned v) {
        return llvm::all_of(innerSizeOf, [&](auto &entry) {
          return candidates.count(entry.first) || ownWidths.count(entry.first) ||
                 entry.second % v == 0;
        });
      };
      while (vec > 1 && !divides(vec))
        vec /= 2;
      // A kernel whose tiles all have widths of their own gets the widest.
      if (llvm::all_of(innerSizeOf, [&](auto &entry) {
            return candidates.count(entry.first) || ownWidths.count(entry.first);
          }) &&
          !ownWidths.empty()) {
        vec = 1;
        for (auto &entry : ownWidths)
          vec = std::max(vec, entry.second);
      }
      warps = chooseWarps(func, vec, maxAccessBytes, maxNumel, reduces);
      auto parent = tile::BlockedEncodingAttr::get(func.getContext(), vec, warps);
      SmallVector<Value> misfit;
      for (auto &entry : candidates)
        if (!tile::SliceEncodingAttr::rowLengthFits(parent, entry.second) ||
            !tile::SliceEncodingAttr::rowLanesFit(parent, entry.second))
          misfit.push_back(entry.first);
      if (misfit.empty())
        break;
      for (Value v : misfit)
        candidates.erase(v);
    }
    rowSlices = std::move(candidates);
    Builder b(func.getContext());
    func->setAttr(tile::kNumWarpsAttrName, b.getI32IntegerAttr(warps));
    func->setAttr(tile::kEncodingAttrName, tile::BlockedEncodingAttr::get(func.getContext(), vec, warps));
  }
};

} // namespace
