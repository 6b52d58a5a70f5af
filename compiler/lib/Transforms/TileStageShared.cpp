//===- TileStageShared.cpp - plan shared-memory staging of mma loops ------===//
//
// A kernel's mma loop
//
//   for k in lb .. ub { acc = mma(load(A, [..]), load(B, [..]), acc) }
//
// is planned here as a producer/consumer pipeline (sm_90a):
//  - STAGES shared-memory buffers per operand, each filled by TMA in the
//    128-byte swizzled layout that wgmma reads (or, when the runtime cannot
//    describe a view to TMA, by the producer warpgroup with ordinary loads
//    into the same layout);
//  - a `full` and an `empty` mbarrier per stage;
//  - warpgroup 0 produces, warpgroups 1..C consume with wgmma m64nBNk16 and
//    keep the accumulator in registers (the "wgmma" thread layout, which
//    every other tile of the kernel then uses, so epilogues run in
//    registers).
// On sm_80 (and sm_90 without the "a" features) the same loop becomes an
// all-warps pipeline ("mma_sync" layout): every thread copies its share of
// the next stages with cp.async (16-byte chunks, zero-filled at the edges)
// into the same swizzled layout, and every warp multiplies with ldmatrix +
// mma.sync m16n8k16; the accumulator fragments are laid out as wgmma's, so
// the epilogue code is shared. f32 operands get the fma consumers on sm_90a
// ("fma" layout) and the blocked layout elsewhere.
// The shared-memory and register budgets are checked here, so a
// configuration that cannot run is a compile error with a suggestion.
//
//===----------------------------------------------------------------------===//

#include "tilec/Transforms/AccumulatorColumns.h"
#include "tilec/Transforms/MmaOverlap.h"
#include "tilec/Transforms/Passes.h"

#include "tilec/Dialect/Tile/IR/TileDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <string>

namespace tilec {
#define GEN_PASS_DEF_TILESTAGESHARED
#include "tilec/Transforms/Passes.h.inc"
} // namespace tilec

#define DEBUG_TYPE "tile-stage-shared"

using namespace mlir;
using namespace tilec;

static bool isRowOfBM(RankedTensorType tt, int64_t BM) {
  return tt.getRank() == 2 && tt.getDimSize(0) == 1 && tt.getDimSize(1) == BM;
}

/// A [1, BM] tile of row values reshaped from [BM] rows, to be stored in a
/// row (both pipelines).
static bool rowOfRowsToStore(Operation *op, RankedTensorType tt, int64_t BM) {
  auto reshape = dyn_cast<tile::ReshapeOp>(op);
  return reshape && isRowOfBM(tt, BM) && reshape.getTile().getType().getDimSize(0) == BM;
}

/// That, or a [1, BM] row loaded from a matrix, to be reshaped to [BM] /
/// [BM, 1] rows (a backward pass's log-sum-exp per query row; the general
/// pipeline only).
static bool rowOfRows(Operation *op, RankedTensorType tt, int64_t BM) {
  return rowOfRowsToStore(op, tt, BM) ||
         (isa<tile::LoadOp>(op) && isRowOfBM(tt, BM) && tile::reshapedToRows(op->getResult(0)));
}

namespace {

/// Alignment slack (the swizzled buffers need 1024-byte alignment) plus
/// room for the mbarriers.
constexpr int64_t kAlignmentSlack = 1024, kBarrierBytes = 256;
constexpr int64_t kSharedOverhead = kAlignmentSlack + kBarrierBytes;
/// f32 mma results per thread of the sm_80 general pipeline (mma.sync, no
/// producer warpgroup): 192 leave the rest of 255 for the operands' and the
/// softmax's registers (FlashAttention-2's 128 x 64 tiles at D = 128 on 4
/// warps hold the same).
constexpr int64_t kMaxAccRegsMmaSync = 192;

struct TileStageSharedPass
    : tilec::impl::TileStageSharedBase<TileStageSharedPass> {
  using TileStageSharedBase::TileStageSharedBase;

  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (!func->hasAttr(tile::kKernelAttrName))
        continue;
      // f8 <-> f32 conversions are cvt with e4m3x2 / e5m2x2 (sm_89 on).
      if (arch == "sm_80") {
        WalkResult cvt = func.walk([&](Operation *op) {
          if (!isa<arith::ExtFOp, arith::TruncFOp>(op))
            return WalkResult::advance();
          Type from = getElementTypeOrSelf(op->getOperand(0).getType());
          Type to = getElementTypeOrSelf(op->getResult(0).getType());
          if (!tile::isFloat8(from) && !tile::isFloat8(to))
            return WalkResult::advance();
          op->emitError() << "kernel '" << func.getName()
                          << "': converting to or from f8 needs sm_89 or later (cvt with "
                             "e4m3x2 / e5m2x2); this target is "
                          << arch;
          return WalkResult::interrupt();
        });
        if (cvt.wasInterrupted())
          return signalPassFailure();
      }
      loopStandaloneMma(func);
      SmallVector<tile::MmaOp> mmas;
      func.walk([&](tile::MmaOp op) { mmas.push_back(op); });
      if (mmas.empty()) {
        if (clusterRequested(func)) {
          func.emitError() << "kernel '" << func.getName()
                           << "': @launch(cluster = 2) pairs the programs of an mma loop "
                              "to share its loads; this kernel has no mma";
          return signalPassFailure();
        }
        continue;
      }
      // A padded grid's extra programs run the body past the grid: their
      // tiles read zeros and store nothing, but an atomic at a fixed
      // place (a counter) would run in them too.
      if (func->hasAttr(tile::kPaddedGridAttrName)) {
        WalkResult atomics = func.walk([&](tile::AtomicOp op) {
          op.emitError() << "kernel '" << func.getName()
                         << "': @launch(group_rows) with cluster = 2 cannot be combined with "
                            "atomics (with an odd number of rows of tiles the grid gets one "
                            "more row of programs, whose tiles lie past the grid); use "
                            "cluster = 1 or persistent = 0 without group_rows";
          return WalkResult::interrupt();
        });
        if (atomics.wasInterrupted())
          return signalPassFailure();
      }
      storeTransposesThroughViews(func);
      if (failed(plan(func, mmas)))
        return signalPassFailure();
      // What the runtime launches with: pairs only where a plan shares an
      // operand (an f32 kernel that kept the blocked layout has none).
      bool paired = false;
      func.walk([&](scf::ForOp loop) {
        if (auto p = loop->getAttrOfType<DictionaryAttr>(tile::kPipelineAttrName))
          paired |= bool(p.get("multicast"));
      });
      func->setAttr(tile::kClusterAttrName,
                    Builder(func.getContext()).getI32IntegerAttr(paired ? 2 : 1));
    }
  }

  /// Largest dynamic shared memory per block on the target.
  int64_t maxSharedBytes() const {
    return tile::maxSharedBytes(arch);
  }

  static std::string shapeStr(RankedTensorType t) {
    std::string s;
    llvm::raw_string_ostream os(s);
    // The language's spelling of the f8 types.
    Type elem = t.getElementType();
    if (isa<Float8E4M3FNType>(elem))
      os << "tile<f8e4m3>[";
    else if (isa<Float8E5M2Type>(elem))
      os << "tile<f8e5m2>[";
    else
      os << "tile<" << elem << ">[";
    llvm::interleaveComma(t.getShape(), os);
    os << "]";
    return s;
  }

  /// In a kernel with mma, `store(C, [i, j], transpose(t))` of a 2-D tile
  /// becomes `store(C^T, [j, i], t)`, C^T a view of C's memory with the
  /// sizes and strides exchanged (no TMA: its stores go element by
  /// element through the strides): the tiles of such a kernel keep the
  /// accumulator's layout, which a [BN, BM] transpose has no place in
  /// (examples/matmul.tile's C^T = B^T A^T written from the accumulator).
  static void storeTransposesThroughViews(func::FuncOp func) {
    SmallVector<tile::StoreOp> stores;
    func.walk([&](tile::StoreOp store) { stores.push_back(store); });
    for (tile::StoreOp store : stores) {
      tile::PermuteOp permute = tile::transposeOf(store.getValue());
      auto view = store.getView().getDefiningOp<tile::MakeViewOp>();
      if (!permute || !view || !permute->hasOneUse() || store.getIndices().size() != 2)
        continue;
      OpBuilder b(store);
      Location loc = store.getLoc();
      Value sizes[] = {view.getSizes()[1], view.getSizes()[0]};
      Value strides[] = {view.getStrides()[1], view.getStrides()[0]};
      auto transposed = tile::MakeViewOp::create(b, loc, view.getType(), view.getPtr(), sizes,
                                                 strides, ValueRange{});
      Value indices[] = {store.getIndices()[1], store.getIndices()[0]};
      tile::StoreOp::create(b, loc, permute.getTile(), transposed, indices);
      store.erase();
      permute.erase();
    }
  }

  /// The make_view a staged operand reads, or an error. `loop` is the mma
  /// loop: the producer addresses the view ahead of it, so a part of a
  /// tensor (narrow) must be made before it, or in a persistent kernel's
  /// outer loop `outer`, directly in its body (the producer makes it
  /// again from the body's scalar code, as it does the load positions).
  FailureOr<tile::MakeViewOp> stagedView(tile::LoadOp load, const char *which,
                                         Operation *loop, Operation *outer = nullptr) {
    std::string why;
    FailureOr<tile::MakeViewOp> mk = stageableView(load, loop, outer, &why);
    if (failed(mk))
      load.emitError() << "the " << which << " operand of mma " << why;
    return mk;
  }
  /// The same question without an error: `why` (if given) says what is
  /// wrong, as the end of a sentence about the load.
  static FailureOr<tile::MakeViewOp> stageableView(tile::LoadOp load, Operation *loop,
                                                   Operation *outer, std::string *why) {
    auto refuse = [&](const char *what) -> FailureOr<tile::MakeViewOp> {
      if (why)
        *why = what;
      return failure();
    };
    auto mk = load.getView().getDefiningOp<tile::MakeViewOp>();
    if (!mk || !mk->hasAttr(tile::kParamIndexAttrName))
      return refuse("must be loaded from a tensor parameter");
    if (loop->isAncestor(mk))
      return refuse("is loaded from a part of a tensor (narrow) made inside the mma loop; make "
                    "it before the loop");
    if (outer && outer->isAncestor(mk) && mk->getParentOp() != outer)
      return refuse("is loaded from a part of a tensor (narrow) made in an 'if' or loop inside "
                    "the outer loop; make it directly in the outer loop's body");
    if (load.getPaddingAttr())
      return refuse("is padded with zeros; a padding value is not supported");
    return mk;
  }

  /// The tensor parameter a staged load reads (stageableView checked that
  /// its view is one).
  static int64_t paramOf(tile::LoadOp load) {
    return load.getView().getDefiningOp()->getAttrOfType<IntegerAttr>(tile::kParamIndexAttrName)
        .getInt();
  }

  /// Whether a tile loaded in the mma loop can also be read by the
  /// consumers from its stage into the accumulator layout (tile.smem
  /// `registers`): a [BM, N] tile of 1-, 2- or 4-byte elements that the
  /// ring can hold (whole 32-byte parts of rows, 128-byte swizzled boxes).
  static bool readableFromStage(Value tile, int64_t BM) {
    auto t = dyn_cast<RankedTensorType>(tile.getType());
    if (!t || t.getRank() != 2 || t.getDimSize(0) != BM || t.getDimSize(1) % 8 != 0 ||
        !t.getElementType().isIntOrFloat())
      return false;
    unsigned bits = t.getElementType().getIntOrFloatBitWidth();
    return (bits == 8 || bits == 16 || bits == 32) && (t.getDimSize(1) * bits / 8) % 32 == 0;
  }

  /// Whether `op` runs before the mma loop `forOp` starts (in every
  /// warpgroup, the producer's too).
  static bool runsBeforeLoop(func::FuncOp func, Operation *op, scf::ForOp forOp) {
    Block *top = &func.getBody().front();
    Operation *a = top->findAncestorOpInBlock(*op);
    Operation *b = top->findAncestorOpInBlock(*forOp);
    if (a == b)
      return op->getBlock() == forOp->getBlock() && op->isBeforeInBlock(forOp);
    return a->isBeforeInBlock(b);
  }

  /// acc = mma(load(A), load(B), acc) in a loop that carries only acc:
  /// the matmul pipeline (planPipeline).
  /// With `kMajorB` b may also be transpose(load(B, ...)) (sm_90a's wgmma
  /// reads it K-major).
  static bool isMatmulForm(tile::MmaOp mma, bool kMajorB) {
    auto forOp = dyn_cast<scf::ForOp>(mma->getParentOp());
    auto accArg = dyn_cast<BlockArgument>(mma.getAcc());
    if (!forOp || !accArg || accArg.getOwner() != forOp.getBody() || mma.getPred() ||
        forOp.getNumRegionIterArgs() != 1 || !mma->hasOneUse() ||
        !isa<scf::YieldOp>(*mma->getUsers().begin()))
      return false;
    tile::SharedOperand sb = tile::getSharedOperand(mma.getB());
    tile::LoadOp a = tile::getStagedLoad(mma.getA());
    tile::LoadOp b = sb.transpose && !kMajorB ? tile::LoadOp() : sb.load;
    // One tile as both (a Gram matrix, X X^T) is the general pipeline's.
    if (!a || !b || a == b || a->getParentOp() != forOp || b->getParentOp() != forOp)
      return false;
    // In an outer loop (a persistent kernel) it is the general pipeline's.
    return !isa<scf::ForOp>(forOp->getParentOp());
  }

  LogicalResult plan(func::FuncOp func, ArrayRef<tile::MmaOp> mmas) {
    StringRef name = func.getName();
    tile::MmaOp first = mmas.front();
    Type elem0 = first.getA().getType().getElementType();
    bool f8 = tile::isFloat8(elem0);
    bool tensorCores = (elem0.isBF16() || elem0.isF16());
    // One mma loop of the plain form takes the matmul pipeline (on sm_90a
    // with b K-major too: an NT product, every f8 product); the rest the
    // general one, which also says why an f8 product cannot run.
    bool kMajorB = arch == "sm_90a";
    bool matmulForm = mmas.size() == 1 && isMatmulForm(first, kMajorB) &&
                      (!f8 || tile::getSharedOperand(first.getB()).transpose);
    if ((f8 || tensorCores) && !matmulForm)
      return planGeneral(func, mmas);
    // Several mmas per kernel (and mmas outside the matmul loop form) take
    // the general pipeline, which multiplies on the tensor cores only.
    if (mmas.size() > 1) {
      std::string elemName;
      llvm::raw_string_ostream(elemName) << elem0;
      return mmas[1]->emitError()
             << "kernel '" << name << "' has more than one mma of " << elemName
             << " tiles; several mmas per kernel need bf16, f16 or f8 operands (f32 operands, "
                "on the CUDA cores or with tf32 = true, allow one mma loop per kernel): cast "
                "them, e.g. cast<bf16>(...)";
    }
    tile::MmaOp mma = mmas.front();
    if (auto asked = func->getAttrOfType<IntegerAttr>(tile::kAlternateAttrName);
        arch == "sm_90a" && asked && asked.getInt() == 1)
      return mma.emitError() << "kernel '" << name
                             << "': @launch(pingpong = 1) applies to persistent kernels (an mma "
                                "loop in an outer 'for' over tiles); this kernel has one tile "
                                "per program";
    // One stage would make the copies wait for a buffer that is released
    // only after the next fill. At most 16: the mbarriers' room
    // (kBarrierBytes, two per stage); a skinny tile streaming B wants more
    // than 8 loads in flight.
    if (auto s = func->getAttrOfType<IntegerAttr>(tile::kStagesAttrName);
        s && (s.getInt() < 2 || s.getInt() > 16))
      return mma.emitError() << "kernel '" << name << "': STAGES must be 2 to 16, got "
                             << s.getInt();
    // f32 operands run on the CUDA cores. On sm_90a a kernel of the
    // matmul form gets the same TMA pipeline with fma consumers; any other
    // (another arch, another loop form, other tile shapes) keeps the
    // blocked layout, where the lowering stages the operands itself. The
    // reasons a plan fails are not errors then, so they are dropped.
    if (mma.getA().getType().getElementType().isF32() && !mma.getTf32()) {
      if (arch != "sm_90a")
        return success();
      ScopedDiagnosticHandler quiet(func.getContext(), [](Diagnostic &) { return success(); });
      (void)planPipeline(func, mma);
      return success();
    }
    return planPipeline(func, mma);
  }

  /// Whether the kernel stores a tile of `rows` rows after `loop` (one the
  /// TMA-store epilogue may take).
  static bool storesTile(func::FuncOp func, ArrayRef<scf::ForOp> loops, int64_t rows) {
    bool found = false;
    func.walk([&](tile::StoreOp store) {
      ArrayRef<int64_t> shape = store.getValue().getType().getShape();
      found |= llvm::none_of(loops, [&](scf::ForOp l) { return l->isAncestor(store); }) &&
               shape.size() >= 2 && shape.end()[-2] == rows;
    });
    return found;
  }

  /// Whether `roots` (a load's view and indices, a loop's bounds) are the
  /// same in both programs of a cluster (programs 2c and 2c + 1 along grid
  /// dimension 0): computed from values the two share. Sema's persistent
  /// rewrite in clusters of two gives the pair cluster index
  /// block_id(0) / 2 and rank block_id(0) % 2; only the rank (any other use
  /// of block_id(0)) differs between them. Loop variables are shared where
  /// their bounds are; values a loop carries are not.
  static bool pairUniform(ValueRange roots) {
    auto stripCasts = [](Value v) {
      while (Operation *def = v.getDefiningOp()) {
        if (!isa<arith::ExtSIOp, arith::ExtUIOp, arith::TruncIOp, arith::IndexCastOp>(def))
          break;
        v = def->getOperand(0);
      }
      return v;
    };
    SmallVector<Value> work(roots.begin(), roots.end());
    DenseSet<Value> seen;
    while (!work.empty()) {
      Value v = work.pop_back_val();
      if (!seen.insert(v).second)
        continue;
      if (auto arg = dyn_cast<BlockArgument>(v)) {
        Operation *owner = arg.getOwner()->getParentOp();
        if (isa<func::FuncOp>(owner))
          continue;
        auto loop = dyn_cast<scf::ForOp>(owner);
        if (!loop || arg != loop.getInductionVar())
          return false;
        work.append({loop.getLowerBound(), loop.getUpperBound(), loop.getStep()});
        continue;
      }
      Operation *def = v.getDefiningOp();
      if (auto id = dyn_cast<tile::BlockIdOp>(def); id && id.getDim() == 0)
        return false;
      // The cluster's index: block_id(0) / 2.
      APInt divisor;
      if (isa<arith::DivSIOp, arith::DivUIOp>(def) &&
          matchPattern(def->getOperand(1), m_ConstantInt(&divisor)) && divisor == 2)
        if (auto id = stripCasts(def->getOperand(0)).getDefiningOp<tile::BlockIdOp>();
            id && id.getDim() == 0)
          continue;
      if (def->getNumRegions() != 0)
        return false;
      work.append(def->operand_begin(), def->operand_end());
    }
    return true;
  }

  /// Whether the kernel asked for clusters of 2 (@launch(cluster = 2)).
  static bool clusterRequested(func::FuncOp func) {
    auto c = func->getAttrOfType<IntegerAttr>(tile::kClusterAttrName);
    return c && c.getInt() == 2;
  }

  /// An mma on the tensor cores outside any loop over K (K fits one tile:
  /// `c = mma(load(A, [m, 0], [BM, K]), load(B, [0, n], [K, BN]), zeros)`,
  /// at the kernel's top level or in a persistent kernel's loop over tiles)
  /// becomes a loop of one iteration that carries the accumulator, with the
  /// operands' work that only it uses moved in (their loads, casts,
  /// transposes): the form the pipelines take (the matmul pipeline at the
  /// top level). A loop over tiles is one whose body stores and whose mma
  /// starts from a value the loop does not carry (a loop that carries the
  /// accumulator is a loop over K). Only where it is
  /// the one mma of its block and no loop beside it holds an mma (there it
  /// is chained after that loop), or, at the kernel's top level, where an
  /// mma loop follows it (it becomes the first of loops one after the
  /// other); an mma on f32 tiles without tf32 is the CUDA cores' and needs
  /// no pipeline.
  static void loopStandaloneMma(func::FuncOp func) {
    SmallVector<tile::MmaOp> alone;
    func.walk([&](tile::MmaOp mma) {
      Block *block = mma->getBlock();
      Operation *parent = mma->getParentOp();
      auto overTiles = [&] {
        auto arg = dyn_cast<BlockArgument>(mma.getAcc());
        if (arg && arg.getOwner() == block)
          return false;
        WalkResult found = parent->walk([](Operation *op) {
          return isa<tile::StoreOp, tile::ScatterOp, tile::AtomicOp>(op) ? WalkResult::interrupt()
                                                                         : WalkResult::advance();
        });
        return found.wasInterrupted();
      };
      if (!(isa<func::FuncOp>(parent) || (isa<scf::ForOp>(parent) && overTiles())) ||
          (mma.getA().getType().getElementType().isF32() && !mma.getTf32()))
        return;
      bool other = false, loopAfter = false;
      for (Operation &op : *block)
        if (&op != mma.getOperation()) {
          op.walk([&](tile::MmaOp) { other = true; });
          auto loop = dyn_cast<scf::ForOp>(op);
          loopAfter |= loop && mma->isBeforeInBlock(loop) &&
                       !loop.getBody()->getOps<tile::MmaOp>().empty();
        }
      if (!other || (isa<func::FuncOp>(parent) && loopAfter))
        alone.push_back(mma);
    });
    for (tile::MmaOp mma : alone) {
      OpBuilder b(mma);
      Location loc = mma.getLoc();
      Block *block = mma->getBlock();
      Value zero = arith::ConstantIntOp::create(b, loc, 0, 64);
      Value one = arith::ConstantIntOp::create(b, loc, 1, 64);
      auto loop = scf::ForOp::create(
          b, loc, zero, one, one, ValueRange{mma.getAcc()},
          [&](OpBuilder &nb, Location l, Value, ValueRange args) {
            scf::YieldOp::create(nb, l, args);
          });
      mma.getResult().replaceAllUsesWith(loop.getResult(0));
      Block *body = loop.getBody();
      mma->moveBefore(body->getTerminator());
      mma.getAccMutable().assign(loop.getRegionIterArgs().front());
      body->getTerminator()->setOperands(mma.getResult());
      // Moves the tiles of `v` that only the mma uses (through tiles that
      // only they use) into the loop, operands first.
      std::function<void(Value)> moveIn = [&](Value v) {
        Operation *def = v.getDefiningOp();
        if (!def || !isa<RankedTensorType>(v.getType()) || def->getBlock() != block ||
            !def->hasOneUse() || def->getNumRegions() ||
            !(isMemoryEffectFree(def) || isa<tile::LoadOp>(def)))
          return;
        for (Value operand : def->getOperands())
          moveIn(operand);
        def->moveBefore(mma);
      };
      moveIn(mma.getA());
      moveIn(mma.getB());
    }
  }

  /// At most the stages a loop of a constant trip count fills (at least
  /// two): a loop of one iteration (a wrapped mma) needs no ring of four.
  static int64_t stagesUsed(scf::ForOp loop) {
    std::optional<int64_t> lb = getConstantIntValue(loop.getLowerBound()),
                           ub = getConstantIntValue(loop.getUpperBound()),
                           step = getConstantIntValue(loop.getStep());
    if (!lb || !ub || !step || *step <= 0)
      return std::numeric_limits<int64_t>::max();
    return std::max<int64_t>(2, (*ub - *lb + *step - 1) / *step);
  }

  /// Whether `v` is available at `point`: defined in a block around it,
  /// before it.
  static bool dominates(Value v, Operation *point) {
    Operation *at = v.getParentBlock()->findAncestorOpInBlock(*point);
    Operation *def = v.getDefiningOp();
    return at && (!def || def->isBeforeInBlock(at));
  }

  /// Whether every value `op` uses (its regions' included) that is made
  /// outside it satisfies `known`.
  static bool usesOnly(Operation *op, llvm::function_ref<bool(Value)> known) {
    WalkResult walk = op->walk([&](Operation *inner) {
      for (Value operand : inner->getOperands())
        if (!op->isAncestor(operand.getParentBlock()->getParentOp()) && !known(operand))
          return WalkResult::interrupt();
      return WalkResult::advance();
    });
    return !walk.wasInterrupted();
  }

  /// Whether `v` is available at `point`, after moving the side-effect
  /// free ops that compute it in front of it: a bound the body computes
  /// from the kernel's arguments, such as cdiv(A.shape[1], BK) in a loop
  /// that Sema's @launch(persistent = 1) wrapped around the body, moves out
  /// of that loop; the position of a chained mma's operand, in front of
  /// the mma loop.
  static bool hoistAbove(Value v, Operation *point) {
    if (dominates(v, point))
      return true;
    Operation *def = v.getDefiningOp();
    if (!def || def->getNumRegions() != 0 || !isMemoryEffectFree(def))
      return false;
    for (Value operand : def->getOperands())
      if (!hoistAbove(operand, point))
        return false;
    def->moveBefore(point);
    return true;
  }

  /// The general pipeline (f16/bf16): any number of mmas in one
  /// loop, e.g. attention's
  ///   s = mma(q, transpose(load(K, [.., j, ..])), zeros)
  ///   ... softmax of s in registers ...
  ///   acc = mma(cast<bf16>(p), load(V, [.., j, ..]), acc * alpha)
  /// An mma operand is one of
  ///  - a load in the loop (through the reshape of a batched load, and
  ///    for b optionally a transpose): staged by TMA into a STAGES-deep ring
  ///    (one stage holds every such tile of an iteration);
  ///  - a load before the loop (a): loaded once by TMA, read by every
  ///    iteration (in an outer loop once per outer iteration);
  ///  - for a chained mma after the loop (tile.chained), a or b loaded in
  ///    the block around the loop: loaded the same way, before the loop;
  ///  - (a only) any other tile, e.g. P: its register fragments are wgmma's
  ///    A operand directly (the accumulator's layout is the A fragment's);
  ///  - (b, and transposed a or b) any other [BM, N] tile: written each
  ///    iteration into a buffer of its own after the ring (tile.computed_smem
  ///    on the mma; tile-layout makes the tile.shared_copy) and read there.
  /// The loop may carry any tiles and scalars; everything in it runs in the
  /// consumer warpgroups, with every tile in the accumulators' layout
  /// (#tile.mma over [BM, N] tiles, #tile.slice for [BM] rows). The plan
  /// is recorded as attributes: tile.pipeline on the loop (general),
  /// tile.smem on each staged load; tile-pipeline-lowering (in
  /// convert-tile-to-nvvm) builds the producer, the barriers and the ring.
  /// On sm_90a the ring is filled by TMA from a producer warpgroup and the
  /// mmas are wgmmas; elsewhere (sm_80) every thread copies with cp.async
  /// and the mmas are mma.sync in the same accumulator layout (kind
  /// mma_sync), as FlashAttention-2 does.
  LogicalResult planGeneral(func::FuncOp func, ArrayRef<tile::MmaOp> mmaList) {
    StringRef name = func.getName();
    SmallVector<tile::MmaOp> mmas(mmaList.begin(), mmaList.end());
    MLIRContext *ctx = func.getContext();
    bool tma = arch == "sm_90a";
    int64_t maxShared = maxSharedBytes();
    // The mma loop: the innermost loop with an mma. Other mmas may follow
    // it directly in the block around it: the body of the loop around it (a
    // chained product, h = x W1[:, j] over K, then y += f(h) W2[j], once per
    // outer iteration), or the kernel's body (once: a LoRA layer's (x A) B
    // after x W and x A).
    scf::ForOp forOp;
    for (tile::MmaOp mma : mmas)
      if (auto parent = dyn_cast<scf::ForOp>(mma->getParentOp());
          parent && (!forOp || forOp->isProperAncestor(parent)))
        forOp = parent;
    if (!forOp)
      return mmas.front().emitError()
             << "kernel '" << name
             << "': an mma must be in a 'for' loop (the loop over K), at its top level or in "
                "an 'if' there whose mmas are skipped where it fails (if c { acc = mma(a, b, "
                "acc); }: no store, atomic or print and no else in that 'if')";
    auto outer = dyn_cast<scf::ForOp>(forOp->getParentOp());
    Operation *around = forOp->getParentOp();
    // At the kernel's top level several mma loops may follow one another
    // (C = A1 B1 over K1, then D = A2 B2 over K2): one ring runs through
    // them in turn (`loops`, in program order; forOp is the last, what
    // follows it may be chained; the first is where the producer starts).
    SmallVector<scf::ForOp> loops;
    for (tile::MmaOp mma : mmas)
      if (auto parent = dyn_cast<scf::ForOp>(mma->getParentOp());
          parent && parent->getBlock() == forOp->getBlock() && !llvm::is_contained(loops, parent))
        loops.push_back(parent);
    llvm::sort(loops, [](scf::ForOp a, scf::ForOp b) { return a->isBeforeInBlock(b); });
    // Directly in an outer loop's body (a persistent kernel) too: the ring
    // then runs the loops' iterations in turn, outer iteration after outer
    // iteration (their bounds may change with it).
    if (loops.size() > 1 && !isa<func::FuncOp>(around) && around != outer.getOperation()) {
      FileLineColLoc first = tile::sourcePosition(loops.front().getLoc());
      return loops[1].emitError()
             << "kernel '" << name << "': a second mma loop beside the one"
             << (first ? " at line " + std::to_string(first.getLine()) : std::string())
             << " inside an outer loop is not supported; put the products in one loop (each "
                "with its own accumulator), or the loops directly in the outer loop's body or "
                "at the kernel's top level";
    }
    forOp = loops.back();
    scf::ForOp firstLoop = loops.front();
    auto loopOf = [&](Operation *op) -> scf::ForOp {
      for (scf::ForOp loop : loops)
        if (loop->isAncestor(op))
          return loop;
      return scf::ForOp();
    };
    // The mmas after the mma loop in the block around it.
    DenseSet<Operation *> chained;
    for (tile::MmaOp mma : mmas) {
      if (llvm::is_contained(loops, mma->getParentOp()))
        continue;
      if (mma->getParentOp() != around || !(outer || isa<func::FuncOp>(around)) ||
          !forOp->isBeforeInBlock(mma))
        return mma.emitError()
               << "kernel '" << name
               << "': the mmas of a kernel must be in one loop (or, at the kernel's top "
                  "level, in loops one after the other), at its top level or in an 'if' whose "
                  "mmas are skipped where it fails (if c { acc = mma(a, b, acc); }), or follow "
                  "the last such loop directly in the block around it (a chained product)";
      chained.insert(mma);
      mma->setAttr(tile::kChainedAttrName, UnitAttr::get(ctx));
    }
    // A persistent kernel: the mma loop directly in one outer 'for' (over
    // output tiles), whose trip count does not depend on the outer loop.
    for (Operation *p = forOp->getParentOp(); p && !isa<func::FuncOp>(p); p = p->getParentOp()) {
      if (p == outer.getOperation())
        continue;
      if (isa<scf::ForOp, scf::WhileOp>(p) || (isa<scf::IfOp>(p) && outer))
        return mmas.front().emitError()
               << "kernel '" << name
               << "': an mma loop may sit directly in one outer 'for' loop (a persistent "
                  "kernel), not deeper or in a 'while'";
    }
    // The bounds may change with the outer loop (a causal attention's key
    // blocks per query block): the TMA ring counts on across the runs of
    // the loops, the cp.async ring of sm_80 is filled and drained per run.
    bool varyingBounds = false;
    if (outer)
      for (scf::ForOp loop : loops)
        for (Value bound : {loop.getLowerBound(), loop.getUpperBound(), loop.getStep()})
          varyingBounds |= !hoistAbove(bound, outer);
    // (STAGES = 1 on sm_80: one buffer per tile, in FlashAttention-2's order;
    // the lowering checks that the loop reads its tiles in two turns.)
    if (auto s = func->getAttrOfType<IntegerAttr>(tile::kStagesAttrName);
        s && s.getInt() != 0 && (s.getInt() < (tma ? 2 : 1) || s.getInt() > 8))
      return mmas.front().emitError()
             << "kernel '" << name << "': STAGES must be " << (tma ? 2 : 1) << " to 8, got "
             << s.getInt();
    int64_t BM = mmas.front().getAcc().getType().getDimSize(0);
    Type elem = mmas.front().getA().getType().getElementType();
    // f8 runs on wgmma only (k32), which reads both operands K-major from
    // shared memory.
    bool f8 = tile::isFloat8(elem);
    if (f8 && !tma)
      return mmas.front().emitError()
             << "kernel '" << name << "': mma on f8 tiles needs sm_90a (wgmma); this target is "
             << arch;
    auto shapeError = [&](tile::MmaOp mma, const Twine &what) {
      return mma.emitError() << "kernel '" << name << "': " << what << " (mma of "
                             << shapeStr(mma.getA().getType()) << " and "
                             << shapeStr(mma.getB().getType()) << ")";
    };
    if (BM != 64 && BM != 128 && BM != 192)
      return shapeError(mmas.front(),
                        "with several mmas in a loop, a computed or transposed first operand "
                        "or an outer loop, the rows of a (BM) must be 64, 128 or 192 (one "
                        "64-row block per consumer warpgroup)");
    unsigned consumers = unsigned(BM / 64);
    struct Staged {
      tile::LoadOp load;
      bool resident;
    };
    SmallVector<Staged> staged;
    // Computed operands read from shared memory: the mma, which operand,
    // the bytes of its buffer.
    struct ViaShared {
      tile::MmaOp mma;
      int which;
      int64_t bytes;
    };
    SmallVector<ViaShared> viaShared;
    // Whether a staged tile feeds mmas both as loaded and transposed (the
    // intra-warpgroup overlap's rotated loop stages one form per load).
    bool bothForms = false;
    // Staged loads that the consumers also read into registers.
    DenseSet<Operation *> readFromStage;
    DenseSet<Operation *> chain; // the ops of staged operands
    int64_t accElems = 0; // of every mma's result, over the consumers' threads
    for (tile::MmaOp mma : mmas) {
      auto aTy = mma.getA().getType(), bTy = mma.getB().getType();
      if (aTy.getElementType() != elem &&
          !(f8 && tile::isFloat8(aTy.getElementType())))
        return shapeError(mma, "all mmas of a kernel must multiply the same element type");
      if (f8 && aTy.getDimSize(1) % 32 != 0)
        return shapeError(mma, "with f8 operands the shared dimension must be a multiple of 32");
      if (mma.getAcc().getType().getDimSize(0) != BM)
        return shapeError(mma, "all mmas of a kernel must have the same number of rows (BM)");
      int64_t K = aTy.getDimSize(1), N = bTy.getDimSize(1);
      if (K % 16 != 0)
        return shapeError(mma, "the shared dimension must be a multiple of 16");
      // wgmma's N is at most 256; a wider b as loaded is multiplied in two
      // parts of whole 64-column boxes (wgmmaParts).
      bool bLoaded = !tile::getSharedOperand(mma.getB()).transpose;
      if (N % 8 != 0 || (N > 256 && !(tma && bLoaded && N % 64 == 0 && N <= 512)))
        return shapeError(mma, tma ? "the columns of b must be a multiple of 8 up to 256, or (b "
                                     "as loaded, not transposed) of 64 up to 512"
                                   : "the columns of b must be a multiple of 8, at most 256");
      // mma.sync's B fragments are read by ldmatrix in pairs of n8 blocks.
      if (!tma && N % 16 != 0)
        return shapeError(mma, "on " + arch + " the columns of b must be a multiple of 16");
      // (A chained mma that adds into what an mma of the loop accumulated,
      // as LoRA's into x W^T, holds no registers of its own.)
      auto accResult = dyn_cast<OpResult>(mma.getAcc());
      auto accLoop = accResult ? dyn_cast<scf::ForOp>(accResult.getOwner()) : scf::ForOp();
      bool addsToLoop = chained.contains(mma) && accLoop && llvm::is_contained(loops, accLoop) &&
                        accLoop.getBody()->getTerminator()->getOperand(accResult.getResultNumber())
                            .getDefiningOp<tile::MmaOp>();
      if (!addsToLoop)
        accElems += BM * N;
      for (int which = 0; which < 2; ++which) {
        Value operand = which ? mma.getB() : mma.getA();
        tile::SharedOperand so = tile::getSharedOperand(operand);
        if (!so.load) {
          // A reshape that reorders a loaded tile is not what the copy stages.
          if (auto reshape = operand.getDefiningOp<tile::ReshapeOp>();
              reshape && reshape.getTile().getDefiningOp<tile::LoadOp>())
            return mma.emitError()
                   << "the operands of mma must be tiles loaded in the same loop "
                      "(mma(load(A, ...), load(B, ...), acc), or reshape(load(X, [b, i, j], "
                      "[1, R, C]), [R, C]) from a batched tensor); this reshape reorders the "
                      "loaded tile";
          // b, and a transposed a, are read from shared memory: a computed
          // one is written to a buffer of its own (tile.shared_copy), as
          // [BM, N] rows of 128-byte swizzled boxes, the staged loads'
          // layout.
          tile::PermuteOp permute = tile::transposeOf(operand);
          if (which == 1 || permute) {
            const char *place = which ? "second" : "first";
            if (f8)
              return mma.emitError() << "a computed " << place << " operand of an mma on f8 "
                                        "tiles is not supported (wgmma reads f8 only as loaded "
                                        "tiles here)";
            Value computed = permute ? permute.getTile() : operand;
            RankedTensorType ct = cast<RankedTensorType>(computed.getType());
            int64_t elemBytes = elem.getIntOrFloatBitWidth() / 8;
            if (ct.getRank() != 2 || ct.getDimSize(0) != BM ||
                (ct.getDimSize(1) * elemBytes) % 128 != 0)
              return mma.emitError()
                     << "a computed " << place << " operand of mma"
                     << (permute ? " (transposed)" : "")
                     << " is read from shared memory, written there as a [" << BM
                     << ", N] tile with N a multiple of " << 128 / elemBytes
                     << " (whole 128-byte rows); this one is " << shapeStr(ct)
                     << (permute ? " before the transpose" : "");
            if (permute && !permute->hasOneUse())
              return mma.emitError() << "a transposed computed operand of mma may feed only "
                                        "that mma; transpose it again for other uses";
            if (permute)
              chain.insert(permute);
            viaShared.push_back({mma, which, tile::stagedTileBytes(BM, ct.getDimSize(1),
                                                                   elemBytes)});
            continue;
          }
          if (f8)
            return mma.emitError() << "the first operand of an mma on f8 tiles must be a tile "
                                      "loaded in the loop (wgmma reads f8 from shared memory "
                                      "only); a computed tile is not supported";
          // A chained mma's a: computed after the mma loop (before it, at the
          // kernel's top level, the producer warpgroup would run it too).
          auto computedAfterLoop = [&] {
            Operation *def = operand.getDefiningOp();
            Operation *at = def ? forOp->getBlock()->findAncestorOpInBlock(*def) : nullptr;
            return at && forOp->isBeforeInBlock(at);
          };
          if (chained.contains(mma)
                  ? !computedAfterLoop()
                  : !mma->getParentOp()->isAncestor(operand.getParentBlock()->getParentOp()))
            return mma.emitError()
                   << (chained.contains(mma)
                           ? "a computed first operand of an mma after the mma loop must be "
                             "computed after that loop, in the block around it (it is held in "
                             "registers)"
                           : "a computed first operand of mma must be computed in the loop (it "
                             "is held in registers)");
          continue;
        }
        // transpose(load(A, [k, m], [BK, BM])): the staged [BK, BM] tile
        // read as an MN-major A (A^T B, a weight gradient X^T dY) by wgmma,
        // or by ldmatrix.trans for mma.sync; wgmma reads f8 K-major only.
        if (which == 0 && so.transpose && f8)
          return mma.emitError()
                 << "a transposed first operand of an mma on f8 tiles is not supported (wgmma "
                    "reads f8 K-major only): store A transposed (K contiguous) and load it as is";
        if (which == 1 && f8 && !so.transpose)
          return mma.emitError()
                 << "an mma on f8 tiles reads b K-major (wgmma has no transposed f8 form): "
                    "store B as N x K (torch's column-major second operand, B.t()) and write "
                    "mma(a, transpose(load(B, [n, k], [BN, BK])), acc)";
        // (A chained mma's loop is the last mma loop.)
        Operation *mmaLoop = chained.contains(mma) ? forOp.getOperation() : mma->getParentOp();
        FailureOr<tile::MakeViewOp> view =
            stagedView(so.load, which ? "second" : "first", mmaLoop,
                       outer ? outer.getOperation() : nullptr);
        if (failed(view))
          return failure();
        bool inLoop = so.load->getParentOp() == mmaLoop;
        bool before = !inLoop && so.load->getBlock() == forOp->getBlock() &&
                      so.load->isBeforeInBlock(mmaLoop);
        // A chained mma's operands are loaded in the block around the mma
        // loop (in an outer loop once per outer iteration, as a's before the
        // mma loop are).
        if (chained.contains(mma) ? so.load->getBlock() != forOp->getBlock()
                                  : !inLoop && !(before && which == 0))
          return mma.emitError()
                 << (chained.contains(mma)
                         ? "the operands of an mma after the mma loop must be loaded in the "
                           "block around that loop"
                         : "the operands of mma must be loaded in the loop (or, for the first, "
                           "just before it)");
        // In a persistent kernel a first operand loaded before the mma loop
        // (attention's Q) is loaded once per outer iteration (on sm_90a into
        // one of two buffers where they fit: the producer loads the next
        // tile's while the consumers finish this one's).
        // A tile may feed several mmas in the same place (x in a fused
        // gate and up projection, mma(x, wg, g) and mma(x, wu, u)): it is
        // staged once and each reads it there.
        // It may also feed an mma as loaded and another transposed
        // (an attention backward's dO: dV += P^T dO, dP^T = V dO^T): the
        // staged bytes read as they are or column-major.
        // A tile loaded in the loop may also be the a of one mma and the b
        // of another, or both of one (X X^T: a as loaded, b transposed);
        // one loaded before the loop is an a only.
        // A tile loaded in the loop may also feed other work (a norm's sum
        // of squares over the rows of x in mma(x, w, acc)): the consumers
        // read it from its stage (`registers`).
        Value loaded = so.tile();
        bool otherWork = false;
        for (OpOperand &use : loaded.getUses()) {
          int place = tile::mmaOperandPlace(use);
          if (place < 0)
            otherWork = true;
          else if (place != which && !inLoop)
            return so.load.emitError()
                   << "a tile loaded for an mma before the mma loop may feed mmas only as "
                      "their first operand";
        }
        if (otherWork && !inLoop)
          return so.load.emitError()
                 << "a tile loaded for an mma before the mma loop may feed only mmas; load it "
                    "again for other work";
        if (otherWork && !readableFromStage(loaded, BM))
          return so.load.emitError()
                 << "a tile loaded for an mma that also feeds other work is read from its "
                    "shared-memory stage by the accumulators' threads, which needs a ["
                 << BM << ", N] tile (N a multiple of 8, whole 32-byte parts of rows); this one "
                 << "is " << shapeStr(cast<RankedTensorType>(loaded.getType()));
        if (otherWork)
          readFromStage.insert(so.load);
        if (!loaded.hasOneUse() &&
            llvm::any_of(loaded.getUsers(), [](Operation *u) { return isa<tile::PermuteOp>(u); }))
          bothForms = true;
        for (Operation *op : so.ops())
          chain.insert(op);
        if (llvm::any_of(staged, [&](const Staged &st) { return st.load == so.load; }))
          continue;
        RankedTensorType lt = so.load.getType();
        int64_t cols = lt.getShape().back(), rows = lt.getShape().end()[-2];
        int64_t elemBytes = elem.getIntOrFloatBitWidth() / 8;
        // Whole 128-byte boxes are staged; a width that is not a multiple
        // of one (a head dimension of 96 or 160) leaves the last box's
        // columns past it unread. wgmma reads K in steps of 32 bytes and N
        // in multiples of 8, so a tile whose columns are only ever N (b as
        // loaded, not transposed) may have any multiple of 8.
        bool onlyN = llvm::all_of(loaded.getUses(), [](OpOperand &use) {
          return isa<tile::MmaOp>(use.getOwner()) && use.getOperandNumber() == 1;
        });
        int64_t colBytes = onlyN ? 16 : 32;
        if ((cols * elemBytes) % colBytes != 0 || rows > 256 || rows % 8 != 0)
          return so.load.emitError()
                 << "a tile staged for an mma needs a multiple of " << colBytes / elemBytes
                 << " columns and a multiple of 8 rows up to 256 (staged in 128-byte swizzled "
                    "TMA boxes); this one is " << shapeStr(lt);
        staged.push_back({so.load, !inLoop});
      }
    }
    // sm_80: mma.sync's warps need no producer, and a warp may hold several
    // 16-row blocks (64 rows apart). One warpgroup whose warps hold two
    // (FlashAttention-2's 128-row tiles on 4 warps) reads each B fragment
    // once for two mma.syncs, which halves the ldmatrix traffic that bounds
    // the loop; it is the default where its results fit the registers,
    // and @launch(num_warps = 4 * C) chooses C consumer warpgroups.
    int64_t maxAccRegs = tma ? 160 : kMaxAccRegsMmaSync;
    if (!tma) {
      // The option (--num-warps), else the kernel's @launch(num_warps).
      int64_t requested = numWarps;
      if (auto attr = func->getAttrOfType<IntegerAttr>(tile::kNumWarpsAttrName); attr && !numWarps)
        requested = attr.getInt();
      int64_t want = requested / 4;
      if (requested && (requested % 4 != 0 || want < 1 || BM % (64 * want) != 0))
        return mmas.front().emitError()
               << "kernel '" << name << "': on " << arch << " an mma loop of " << BM
               << " rows runs on 4 warps" << (BM > 64 ? " or " + std::to_string(BM / 16) : "")
               << " (whole 64-row blocks per warpgroup of 4); num_warps = " << requested
               << " is neither";
      if (want) {
        func->setAttr(tile::kNumWarpsAttrName, Builder(ctx).getI32IntegerAttr(int32_t(requested)));
        consumers = unsigned(want);
      } else if (accElems / 128 <= (chained.empty() ? maxAccRegs : maxAccRegs / 2)) {
        // A chained mma holds both products and its b's fragments at once:
        // mlp_wide's 192 accumulators on one warpgroup spilled 1.9 KB in
        // ptxas, 152 bytes on two.
        consumers = 1;
      }
    }
    bool pureAccumulation = llvm::all_of(loops, [](scf::ForOp l) { return onlyAccumulates(l); });
    // Alternating consumers (CUTLASS's ping-pong schedule): in a persistent
    // kernel whose loop only accumulates, two consumer warpgroups take the
    // outer loop's iterations in turn, each holding the whole tile, so one's
    // epilogue (and the start of its next tile) runs while the other's
    // wgmmas do. @launch(pingpong = 0 | 1) decides; the default is off.
    // Other arches have no warpgroups to alternate: the setting is ignored.
    bool alternate = false;
    if (auto asked = func->getAttrOfType<IntegerAttr>(tile::kAlternateAttrName);
        tma && asked && asked.getInt() == 1) {
      bool predicated = llvm::any_of(loops, hasPredicatedMma);
      bool computed = !llvm::all_of(loops, readsOnlyLoadedOperands);
      if (!outer || !pureAccumulation || computed || !chained.empty() ||
          (BM != 64 && BM != 128) || accElems / 128 > 128 || predicated)
        return mmas.front().emitError()
               << "kernel '" << name << "': @launch(pingpong = 1) needs a persistent kernel "
                  "(the mma loop in an outer 'for') whose loop only accumulates (acc = mma(a, "
                  "b, acc)) into a tile of 64 or 128 rows that one warpgroup's registers hold "
                  "(BM x BN <= 16384 f32); this one has "
               << (!outer ? std::string("no outer loop")
                   : !pureAccumulation ? std::string("other work on the mma results in the loop")
                   : computed          ? std::string("an mma operand computed in the loop")
                   : predicated        ? std::string("an mma in an 'if'")
                   : !chained.empty()  ? std::string("an mma after the mma loop")
                                       : "a " + std::to_string(BM) + " x " +
                                             std::to_string(accElems / BM) + " tile");
      alternate = true;
      consumers = 2;
    }
    bool anyResident = llvm::any_of(staged, [](const Staged &st) { return st.resident; });
    if (outer && loops.size() > 1 && alternate)
      return loops[1].emitError()
             << "kernel '" << name << "': mma loops one after the other in an outer loop "
             << "cannot alternate their consumers (@launch(pingpong = 1))";
    if (alternate && (varyingBounds || (outer && anyResident)))
      return mmas.front().emitError()
             << "kernel '" << name << "': @launch(pingpong = 1) needs the mma loop's bounds "
                "fixed across the outer loop and every operand loaded in the mma loop";
    if (alternate && !viaShared.empty())
      return viaShared.front().mma.emitError()
             << "kernel '" << name << "': @launch(pingpong = 1) with a computed operand read "
                "from shared memory (b, or a transposed a) is not supported; use pingpong = 0";
    unsigned share = alternate ? 1 : consumers;
    // fma consumers would also need a and b fragments; with wgmma the
    // accumulators and the loop's other tiles share 255 registers, of which
    // pipelineRegisters gives two consumer warpgroups 200 each and three 152
    // (attention at 192 x 128, D = 64: 96 accumulators, 16 bytes spilled;
    // 192 x 256's 160 make ptxas fail).
    if (tma && consumers == 3)
      maxAccRegs = 96;
    int64_t accRegs = accElems / (128 * share);
    if (accRegs > maxAccRegs)
      return mmas.front().emitError()
             << "kernel '" << name << "': the mma results need " << accRegs
             << " f32 registers per thread in each of the " << consumers
             << " consumer warpgroups" << (alternate ? " (each holding the whole tile)" : "")
             << "; at most " << maxAccRegs
             << " leave room for the rest (255 per thread); use smaller tiles";

    // Every other tile has [BM, N] or [BM] / [BM, 1] shape; stores come
    // after the loop (the producer warpgroup runs the code before it).
    auto runsBefore = [&](Operation *op) { return runsBeforeLoop(func, op, firstLoop); };
    auto rowsShaped = [&](RankedTensorType tt) {
      ArrayRef<int64_t> s = tt.getShape();
      return !s.empty() && s[0] == BM && (s.size() == 1 || (s.size() == 2 && s[1] == 1));
    };
    auto accShaped = [&](RankedTensorType tt) {
      ArrayRef<int64_t> s = tt.getShape();
      if (s.size() < 2 || s.end()[-2] != BM || s.end()[-1] % 8 != 0)
        return false;
      return llvm::all_of(s.drop_back(2), [](int64_t d) { return d == 1; });
    };
    // [N] or [1, N] column values (a reduction over the rows of a [BM, N]
    // tile, after the loop, and what is computed from it).
    FailureOr<DenseSet<Value>> columns = findAccumulatorColumns(func, BM);
    if (failed(columns))
      return failure();
    // How the errors below name the kernel's form.
    std::string form = mmas.size() > 1 ? "in a kernel with several mmas"
                       : outer         ? "in a persistent kernel (an mma loop in an outer loop)"
                                       : "in a kernel whose mma loop does more than accumulate";
    WalkResult walk = func.walk([&](Operation *op) -> WalkResult {
      if (chain.contains(op))
        return WalkResult::advance();
      if (isa<tile::StoreOp, tile::ScatterOp, tile::AtomicOp, tile::PrintOp, tile::AssertOp>(op) &&
          runsBefore(op)) {
        tile::emitUserError(op) << form
                                << ", stores, atomics, print and assert may not come before "
                                   "the mma loop (every warpgroup runs the code before it, "
                                   "the producer's too); put them in the loop or after it";
        return WalkResult::interrupt();
      }
      // Whole columns of a tile are registers its threads hold already.
      if (auto slice = dyn_cast<tile::SliceOp>(op); slice && !tile::slicesWholeColumns(slice)) {
        tile::emitUserError(op) << form << ", a slice must take whole columns of a [" << BM
                                << ", N] tile (all rows, a column offset and width that are "
                                   "multiples of 8)";
        return WalkResult::interrupt();
      }
      if (isa<tile::PermuteOp, tile::TakeOp, tile::ScanOp, tile::GatherOp>(op)) {
        tile::emitUserError(op) << "'" << op->getName().stripDialect() << "' " << form
                                << " is not supported yet";
        return WalkResult::interrupt();
      }
      if (auto reduce = dyn_cast<tile::ReduceOp>(op)) {
        RankedTensorType from = reduce.getTile().getType();
        if (!reduce.getAxis() || *reduce.getAxis() > 1 || from.getRank() != 2 ||
            (*reduce.getAxis() == 0 && !accShaped(from)) || reduce.getKind() == "argmax" ||
            reduce.getKind() == "argmin") {
          tile::emitUserError(op) << "in a kernel with mma, a reduction must run over the columns "
                                     "(axis = 1) or the rows (axis = 0) of a ["
                                  << BM
                                  << ", N] tile (sum, max, min, prod or a "
                                     "combiner); other reductions are not supported yet";
          return WalkResult::interrupt();
        }
        if (*reduce.getAxis() == 0 && (loopOf(op) || runsBefore(op))) {
          tile::emitUserError(op) << "in a kernel with mma, a reduction over the rows of a tile "
                                     "(axis = 0) must come after the mma loop";
          return WalkResult::interrupt();
        }
        if (*reduce.getAxis() == 0 && alternate) {
          tile::emitUserError(op) << "a reduction over the rows of a tile (axis = 0) in a kernel "
                                     "with @launch(pingpong = 1) is not supported; use pingpong = 0";
          return WalkResult::interrupt();
        }
      }
      if (auto broadcast = dyn_cast<tile::BroadcastOp>(op)) {
        RankedTensorType from = broadcast.getTile().getType();
        if (!((rowsShaped(from) || columns->contains(broadcast.getTile())) &&
              from.getRank() == 2)) {
          tile::emitUserError(op)
              << form
              << ", only [BM, 1] columns of row "
                 "values and [1, N] rows of column values can be broadcast (e.g. "
                 "expand_dims(max(s, axis = 1), 1)); this one is "
              << shapeStr(from);
          return WalkResult::interrupt();
        }
      }
      for (Value result : op->getResults())
        if (auto tt = dyn_cast<RankedTensorType>(result.getType());
            tt && !accShaped(tt) && !rowsShaped(tt) && !rowOfRows(op, tt, BM) &&
            !columns->contains(result)) {
          tile::emitUserError(op) << form << ", every tile must have " << BM
                                  << " rows and a multiple of 8 columns, or be a [" << BM << "] / ["
                                  << BM << ", 1] tile of row values or an [N] / [1, N] tile of "
                                  "column values (a reduction over axis 0 after the loop); this "
                                  "one is " << shapeStr(tt);
          return WalkResult::interrupt();
        }
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return failure();

    // @launch(cluster = 2): a persistent kernel whose two programs of a
    // cluster take the tiles of a pair (Sema's rewrite) and load the same
    // tiles of one operand, which each copies half of into both.
    // Elsewhere (sm_80) pairs have no effect.
    int multicast = -1;
    if (clusterRequested(func) && tma) {
      auto refuse = [&](const Twine &why) {
        return mmas.front().emitError()
               << "kernel '" << name << "': @launch(cluster = 2) " << why << "; use cluster = 1";
      };
      if (!outer)
        return refuse("pairs the programs of a persistent kernel (persistent = 1), or of one "
                      "mma loop at the kernel's top level (acc = mma(load(A, ...), load(B, ...), "
                      "acc)); this kernel is neither");
      if (varyingBounds || anyResident)
        return refuse("needs an mma loop whose bounds do not change with the outer loop and "
                      "operands loaded in it");
      if (loops.size() > 1)
        return refuse("pairs the programs of one mma loop in the outer loop, not of several "
                      "one after the other");
      bool atomics = false;
      func.walk([&](tile::AtomicOp) { atomics = true; });
      if (atomics)
        return refuse("cannot be combined with atomics in a persistent kernel (with an odd "
                      "number of rows of tiles, a pair's second program computes an empty tile "
                      "past the grid)");
      for (auto [i, st] : llvm::enumerate(staged))
        if (pairUniform(st.load->getOperands())) {
          multicast = int(i);
          break;
        }
      if (multicast < 0)
        return refuse("shares the tiles of an operand that both programs of a cluster load; "
                      "here every operand's position depends on the program's row of tiles");
    }

    // Reductions over the rows (axis = 0) combine the consumer warps'
    // partial columns in shared memory after the ring.
    int64_t columnBytes = columnReductionBytes(func, BM, consumers);
    // The computed operands' buffers come after the barriers and the
    // column reductions' buffer, from the next multiple of 1024 (the
    // swizzle's period; each buffer is a multiple of it). `afterRing`: the
    // bytes past the barriers, the padding included.
    int64_t viaSharedBytes = 0;
    for (const ViaShared &v : viaShared)
      viaSharedBytes += v.bytes;
    auto viaSharedStart = [&](int64_t ringEnd) { // ringEnd: resident + stages
      return ringEnd + (kBarrierBytes + columnBytes + 1023) / 1024 * 1024;
    };
    int64_t afterRing = viaSharedBytes ? viaSharedStart(0) - kBarrierBytes + viaSharedBytes
                                       : columnBytes;
    auto bytesOf = [](tile::LoadOp load) {
      RankedTensorType lt = load.getType();
      return tile::stagedTileBytes(lt.getShape().end()[-2], lt.getShape().back(),
                                   lt.getElementTypeBitWidth() / 8);
    };
    // A [BM, N] tile loaded in the mma loop for other work only (x in
    // mma(cast<T>(x * g), w, acc), a norm's scale applied before the
    // product; the tiles a computed operand is made of) is staged too: the
    // producer copies it ahead with the operands, and the consumers read it
    // from the stage instead of waiting for global memory. Only where such
    // tiles at most double a stage and two stages still fit: larger ones
    // (wgrad_relu's two [128, 128] tiles beside one operand) would cut the
    // operands' ring from four stages to two and leave no room for the TMA
    // store, so they stay loads. So do tiles of tensors the kernel writes
    // (the copy would run ahead of the writes) and tiles whose position the
    // producer cannot compute (from what the loop carries, or from memory
    // the kernel writes).
    {
      SmallVector<tile::LoadOp> extra;
      int64_t residentBytes = 0, operandBytes = 0, extraBytes = 0;
      for (const Staged &st : staged)
        (st.resident ? residentBytes : operandBytes) += bytesOf(st.load);
      DenseSet<int64_t> written = tile::writtenParams(func);
      auto producerKnows = [&](tile::LoadOp load, scf::ForOp loop) {
        // (The producer computes again what the loop, or the loop around it,
        // computes; the rest must be known before the first loop.)
        Operation *scope = outer ? outer.getOperation() : loop.getOperation();
        std::function<bool(Value)> known = [&](Value v) {
          if (!scope->isAncestor(v.getParentBlock()->getParentOp()))
            return dominates(v, firstLoop.getOperation());
          Operation *def = v.getDefiningOp();
          if (!def)
            return v == loop.getInductionVar() || (outer && v == outer.getInductionVar());
          return producerCanReplay(def, written) && usesOnly(def, known);
        };
        return readsUnwrittenParam(load.getView(), written) &&
               llvm::all_of(load->getOperands(), known);
      };
      for (scf::ForOp loop : loops)
        for (tile::LoadOp load : loop.getBody()->getOps<tile::LoadOp>())
          if (!chain.contains(load) && readableFromStage(load.getResult(), BM) &&
              succeeded(stageableView(load, loop, outer ? outer.getOperation() : nullptr,
                                      nullptr)) &&
              producerKnows(load, loop)) {
            extra.push_back(load);
            extraBytes += bytesOf(load);
          }
      // Two stages, or as many as STAGES says.
      int64_t ring = 2;
      if (auto s = func->getAttrOfType<IntegerAttr>(tile::kStagesAttrName); s && s.getInt() != 0)
        ring = s.getInt();
      if (!extra.empty() && extraBytes <= operandBytes &&
          residentBytes + ring * (operandBytes + extraBytes) + kSharedOverhead + afterRing <=
              maxShared)
        for (tile::LoadOp load : extra) {
          readFromStage.insert(load);
          staged.push_back({load, /*resident=*/false});
        }
    }

    // Shared memory: the resident tiles, then the ring. Loops one after
    // the other each fill a stage from its start: a stage is the largest.
    int64_t residentBytes = 0, stageBytes = 0;
    DenseMap<Operation *, int64_t> loopStageBytes;
    SmallVector<int64_t> offsets;
    for (Staged &st : staged) {
      int64_t &at = st.resident ? residentBytes : loopStageBytes[loopOf(st.load)];
      offsets.push_back(at);
      at += bytesOf(st.load);
      if (!st.resident)
        stageBytes = std::max(stageBytes, at);
    }
    // In an outer loop the tiles loaded before the mma loop are loaded
    // again for each outer iteration: into two buffers where they fit with
    // two stages (the producer loads the next tile's while the consumers
    // finish this one's; slot 1 residentBytes / 2 after slot 0), else one.
    int64_t residentSlots = 1;
    if (outer && residentBytes) {
      residentSlots =
          tma && 2 * residentBytes + 2 * stageBytes + kSharedOverhead + afterRing <= maxShared
              ? 2
              : 1;
      residentBytes *= residentSlots;
    }
    int64_t maxStages =
        stageBytes ? (maxShared - kSharedOverhead - residentBytes - afterRing) / stageBytes : 8;
    // The intra-warpgroup overlap (MmaOverlap.h) holds a stage one
    // iteration longer, so it needs a third to keep the copies an
    // iteration ahead, and registers for a second score tile in flight.
    std::optional<MmaOverlap> overlap;
    // (Not with computed operands in shared memory: their writes wait for
    // the wgmmas that the overlap leaves running.)
    if (!outer && tma && viaShared.empty() && !bothForms && readFromStage.empty() &&
        loops.size() == 1)
      overlap = planMmaOverlap(forOp, 128 * consumers);
    bool overlapFits = overlap && overlap->registers <= overlapRegisterBudget(consumers) &&
                       mmaBound(forOp);
    // Unless STAGES says: as many stages as fit, at most 4 (as the matmul
    // pipeline), where a stage is released one iteration late (a pure
    // accumulation, the overlap); two where it is released in its own
    // iteration (more measured slower on the H200: attention at D = 64
    // 0.7107 ms with 2, 0.7219 with 3).
    int64_t stages = std::clamp<int64_t>(maxStages, 2, pureAccumulation || overlapFits ? 4 : 2);
    // (A persistent kernel's TMA ring runs on across the tiles; sm_80's is
    // filled and drained per run.)
    // (Loops one after the other: the TMA ring runs on through them, sm_80
    // fills and drains its ring per loop.)
    if (!outer || !tma) {
      int64_t used = 0, most = std::numeric_limits<int64_t>::max() / 2;
      for (scf::ForOp loop : loops)
        used = tma ? std::min(most, used + std::min(most, stagesUsed(loop)))
                   : std::max(used, stagesUsed(loop));
      stages = std::min(stages, used);
    }
    // A fourth stage that leaves no room for the TMA store's buffers
    // (planTmaStores) costs more than it gives: 128 x 320 stored from
    // registers spilled 860 bytes and takes 240 guarded stores per thread.
    int64_t storeBytes = int64_t(consumers) * tile::kTmaStoreBuffers * tile::kTmaStoreBoxRows * 128;
    if (tma && stages == 4 && storesTile(func, loops, BM) &&
        residentBytes + 4 * stageBytes + kSharedOverhead + afterRing + storeBytes > maxShared)
      stages = 3;
    if (auto s = func->getAttrOfType<IntegerAttr>(tile::kStagesAttrName); s && s.getInt() != 0)
      stages = s.getInt();
    int64_t need = residentBytes + stages * stageBytes + kSharedOverhead + afterRing;
    if (need > maxShared)
      return mmas.front().emitError()
             << "kernel '" << name << "' needs " << need << " bytes of shared memory for "
             << residentBytes << " bytes of tiles loaded once and STAGES=" << stages
             << " stages of " << stageBytes << " bytes"
             << (columnBytes ? " and " + std::to_string(columnBytes) +
                                   " for the reductions over a tile's rows"
                             : std::string())
             << (viaSharedBytes ? " and " + std::to_string(viaSharedBytes) +
                                      " for the computed mma operands read from shared memory"
                                : std::string())
             << ", but " << maxShared
             << " are available per block on " << arch << "; use "
             << (maxStages >= 2 ? "STAGES=" + std::to_string(maxStages) + " or "
                                : std::string())
             << "smaller tiles"
             << (!tma && stages >= 2 && need - (stages - 1) * stageBytes <= maxShared
                     ? " (or STAGES=1, one buffer per tile, where the loop reads its tiles in "
                       "two turns as attention reads K, then V)"
                     : "");

    Builder b(ctx);
    auto encoding = tile::MmaEncodingAttr::get(
        ctx, tma ? tile::MmaKind::wgmma : tile::MmaKind::mma_sync, consumers,
        /*swapped=*/false, alternate);
    int32_t warps = int32_t(encoding.getWarps());
    if (auto requested = func->getAttrOfType<IntegerAttr>(tile::kNumWarpsAttrName);
        requested && requested.getInt() != warps)
      return func.emitError() << "kernel '" << name << "' runs its mma loop as a pipeline of "
                              << warps << " warps; @launch(num_warps = " << requested.getInt()
                              << ") cannot change that: remove it";
    NamedAttrList plan;
    plan.append("stages", b.getI32IntegerAttr(stages));
    plan.append("consumers", b.getI32IntegerAttr(consumers));
    plan.append("general", b.getUnitAttr());
    plan.append("resident_bytes", b.getI64IntegerAttr(residentBytes));
    plan.append("stage_bytes", b.getI64IntegerAttr(stageBytes));
    if (outer && residentBytes)
      plan.append("resident_slots", b.getI32IntegerAttr(int32_t(residentSlots)));
    if (overlapFits && stages >= 3)
      plan.append("overlap", b.getUnitAttr());
    if (alternate)
      plan.append("alternate", b.getUnitAttr());
    if (multicast >= 0)
      plan.append("multicast", b.getI32IntegerAttr(multicast));
    // The lowering's producer and ring read this instead of deciding again.
    if (varyingBounds)
      plan.append("varying_bounds", b.getUnitAttr());
    for (scf::ForOp loop : loops)
      loop->setAttr(tile::kPipelineAttrName, plan.getDictionary(ctx));
    func->setAttr(tile::kEncodingAttrName, encoding);
    func->setAttr(tile::kNumWarpsAttrName, b.getI32IntegerAttr(warps));
    SmallVector<Attribute> tmaOps;
    // A chained mma's operand loaded after the mma loop is loaded in front
    // of it, as an a loaded before the loop is (the producer copies every
    // staged tile ahead of its use anyway); so is an a loaded before a
    // later loop of several.
    DenseSet<int64_t> written = tile::writtenParams(func);
    for (Staged &st : staged) {
      if (!st.resident || !firstLoop->isBeforeInBlock(st.load))
        continue;
      if (written.contains(paramOf(st.load)))
        return st.load.emitError()
               << "a tile loaded for an mma after the mma loop is loaded while the loop runs, "
                  "but this kernel also writes that tensor; load it from a tensor the kernel "
                  "does not write";
      for (Value v : st.load->getOperands())
        if (!hoistAbove(v, firstLoop))
          return st.load.emitError()
                 << "the position of a tile loaded for an mma after the (first) mma loop must "
                    "be computed from scalars that do not depend on the mma loop (it is loaded "
                    "while the loop runs)";
      st.load->moveBefore(firstLoop);
    }
    // The producer runs every loop's copies from where the first starts:
    // the later loops' bounds, views and the values their loads' positions
    // are computed from outside the loop must be known there.
    for (scf::ForOp loop : llvm::drop_begin(loops)) {
      // (What an op in the loop computes from, its regions' uses included,
      // as the producer's copy of it reads them.)
      std::function<bool(Value)> known = [&](Value v) {
        Operation *def = v.getDefiningOp();
        if (!loop->isAncestor(v.getParentBlock()->getParentOp()))
          return hoistAbove(v, firstLoop);
        if (!def)
          return true;
        return producerCanReplay(def, written) && usesOnly(def, known);
      };
      for (Value bound : {loop.getLowerBound(), loop.getUpperBound(), loop.getStep()})
        if (!hoistAbove(bound, firstLoop))
          return loop.emitError()
                 << "kernel '" << name << "': the bounds of an mma loop after another must be "
                    "computed from scalars known before the first (its copies start while the "
                    "first runs)";
      for (Staged &st : staged)
        if (!st.resident && loop->isAncestor(st.load) &&
            !llvm::all_of(st.load->getOperands(), known))
          return st.load.emitError()
                 << "the position of a tile loaded for an mma in a loop after another must be "
                    "computed from the loop variable and scalars known before the first loop "
                    "(its copies start while the first runs)";
    }
    // The producer copies ahead of the consumers: a tensor the kernel
    // writes in or between its mma loops (a store in the loop, or the first
    // product stored for the second loop to read) is not staged from.
    DenseSet<int64_t> writtenEarly;
    auto betweenLoops = [&](Operation *op) {
      Operation *at = forOp->getBlock()->findAncestorOpInBlock(*op);
      return at && firstLoop->isBeforeInBlock(at) && at->isBeforeInBlock(forOp);
    };
    func.walk([&](Operation *op) {
      Value view;
      if (auto store = dyn_cast<tile::StoreOp>(op))
        view = store.getView();
      else if (auto scatter = dyn_cast<tile::ScatterOp>(op))
        view = scatter.getView();
      else if (auto atomic = dyn_cast<tile::AtomicOp>(op))
        view = atomic.getView();
      if (!view || !(loopOf(op) || betweenLoops(op)))
        return;
      auto mk = view.getDefiningOp<tile::MakeViewOp>();
      if (auto p = mk ? mk->getAttrOfType<IntegerAttr>(tile::kParamIndexAttrName) : IntegerAttr())
        writtenEarly.insert(p.getInt());
    });
    for (Staged &st : staged) {
      if (writtenEarly.contains(paramOf(st.load)))
        return st.load.emitError()
               << "a tile loaded for an mma is copied ahead of its use, but this kernel writes "
                  "that tensor in or between its mma loops; write it in another kernel (or "
                  "after the last mma loop)";
    }
    for (auto [i, st] : llvm::enumerate(staged)) {
      NamedAttrList smem;
      smem.append("offset", b.getI64IntegerAttr(offsets[i]));
      if (tma) {
        int64_t boxCols = 128 / (st.load.getType().getElementTypeBitWidth() / 8);
        if (failed(addTmaOperand(func, st.load, boxCols, tmaOps)))
          return failure();
        smem.append("tma", b.getI32IntegerAttr(int32_t(i)));
      }
      if (st.resident)
        smem.append("resident", b.getUnitAttr());
      if (readFromStage.contains(st.load))
        smem.append("registers", b.getUnitAttr());
      if (int(i) == multicast)
        smem.append("multicast", b.getUnitAttr());
      st.load->setAttr(tile::kSmemAttrName, smem.getDictionary(ctx));
    }
    if (columnBytes)
      placeColumnReductions(func, BM, residentBytes + stages * stageBytes + kBarrierBytes);
    int64_t viaOffset = viaSharedStart(residentBytes + stages * stageBytes);
    for (const ViaShared &v : viaShared) {
      auto offsets = v.mma->getAttrOfType<DenseI64ArrayAttr>(tile::kComputedSmemAttrName);
      SmallVector<int64_t, 2> both =
          offsets ? SmallVector<int64_t, 2>(offsets.asArrayRef()) : SmallVector<int64_t, 2>{-1, -1};
      both[v.which] = viaOffset;
      v.mma->setAttr(tile::kComputedSmemAttrName, b.getDenseI64ArrayAttr(both));
      viaOffset += v.bytes;
    }
    need = planTmaStores(func, forOp, BM, encoding, /*ringBytes=*/0, need, tmaOps);
    func->setAttr(tile::kSharedBytesAttrName, b.getI32IntegerAttr(int32_t(need)));
    if (tma)
      func->setAttr(tile::kTmaAttrName, b.getArrayAttr(tmaOps));
    return success();
  }

  /// A reduction over the rows (axis = 0) of a [BM, N] tile of an mma
  /// kernel (the accumulator's shape): each consumer warp combines its rows
  /// of each column in registers and by shuffles, and the consumer warps
  /// combine their partial columns through a buffer in the kernel's shared
  /// memory (tile.column_smem: its offset).
  static bool reducesColumns(tile::ReduceOp r, int64_t BM) {
    RankedTensorType from = r.getTile().getType();
    return r.getAxis() && *r.getAxis() == 0 && from.getRank() == 2 && from.getDimSize(0) == BM;
  }

  /// The bytes of that buffer (the largest the kernel's column reductions
  /// need): a value per consumer warp and column, then the columns' totals,
  /// in 32-bit words (f16 and bf16 are combined in f32, 64-bit types take
  /// two words).
  static int64_t columnReductionBytes(func::FuncOp func, int64_t BM, int64_t consumers) {
    int64_t bytes = 0;
    func.walk([&](tile::ReduceOp r) {
      if (!reducesColumns(r, BM))
        return;
      RankedTensorType from = r.getTile().getType();
      int64_t words = from.getElementType().getIntOrFloatBitWidth() > 32 ? 2 : 1;
      bytes = std::max(bytes, 4 * words * (4 * consumers + 1) * from.getDimSize(1));
    });
    return (bytes + 15) / 16 * 16;
  }

  /// Places the column reductions' buffer at `offset` (16-aligned, after
  /// the rest of the plan).
  static void placeColumnReductions(func::FuncOp func, int64_t BM, int64_t offset) {
    Builder b(func.getContext());
    func.walk([&](tile::ReduceOp r) {
      if (reducesColumns(r, BM))
        r->setAttr(tile::kColumnSmemAttrName, b.getI64IntegerAttr((offset + 15) / 16 * 16));
    });
  }

  LogicalResult planPipeline(func::FuncOp func, tile::MmaOp mma) {
    StringRef name = func.getName();
    bool tf32 = mma.getTf32();
    bool fma = mma.getA().getType().getElementType().isF32() && !tf32;
    // sm_90a: TMA + wgmma with a producer warpgroup. Other arches (sm_80,
    // sm_90): every warp copies with cp.async and multiplies with mma.sync.
    // TF32 takes wgmma too: wgmma reads tf32 K-major only, so b is either
    // transposed (K-major, transpose(load(W, [n, k], ...))) or, as loaded,
    // multiplied as B^T A^T with B^T's fragments read into registers where
    // that tile fits (below; else mma.sync).
    bool tma = arch == "sm_90a";
    bool mmaSync = !tma && !fma;
    if (fma && !tma)
      return mma.emitError() << "internal: the fma pipeline needs sm_90a";
    int64_t kMaxSharedBytes = maxSharedBytes();
    auto aTy = mma.getA().getType(), bTy = mma.getB().getType();
    Type elem = aTy.getElementType();

    // acc = mma(load(A), load(B), acc) inside a for loop.
    auto forOp = dyn_cast<scf::ForOp>(mma->getParentOp());
    auto accArg = dyn_cast<BlockArgument>(mma.getAcc());
    if (!forOp || !accArg || accArg.getOwner() != forOp.getBody() || mma.getPred() ||
        forOp.getNumRegionIterArgs() != 1 || !mma->hasOneUse() ||
        !isa<scf::YieldOp>(*mma->getUsers().begin()))
      return mma.emitError()
             << "mma must accumulate in a 'for' loop that carries only the "
                "accumulator: acc = mma(load(A, ...), load(B, ...), acc)";
    // The producer warpgroup leaves the kernel after the loop: the loop
    // must run once per program.
    for (Operation *p = forOp->getParentOp(); p && !isa<func::FuncOp>(p); p = p->getParentOp())
      if (isa<scf::ForOp, scf::WhileOp>(p))
        return mma.emitError()
               << "kernel '" << name
               << "': the mma loop cannot be inside another loop yet; use one program "
                  "per output tile (the grid)";
    tile::LoadOp aLoad = tile::getStagedLoad(mma.getA());
    // b as loaded ([BK, BN], MN-major for wgmma) or, with wgmma,
    // transpose(load(B, ...)) of a [BN, BK] tile (K-major).
    tile::SharedOperand bOperand = tile::getSharedOperand(mma.getB());
    bool bKMajor = bool(bOperand.transpose);
    // b K-major: wgmma (sm_90a), or with tf32 mma.sync's scalar reads.
    tile::LoadOp bLoad = bKMajor && (fma || (!tma && !tf32)) ? tile::LoadOp() : bOperand.load;
    if (!aLoad && tile::getSharedOperand(mma.getA()).transpose)
      return mma.emitError() << "a transposed first operand of mma (A^T B) needs bf16 or f16 "
                                "tiles (read MN-major by wgmma or ldmatrix.trans); with "
                             << elem << " store A transposed (K contiguous) and load it as is";
    if (!aLoad || !bLoad || aLoad->getParentOp() != forOp ||
        bLoad->getParentOp() != forOp || !aLoad->hasOneUse() ||
        !bLoad->hasOneUse())
      return mma.emitError()
             << "the operands of mma must be tiles loaded in the same loop "
                "(mma(load(A, ...), load(B, ...), acc)); computing on them "
                "before the mma is not supported yet";
    FailureOr<tile::MakeViewOp> aView = stagedView(aLoad, "first", forOp);
    FailureOr<tile::MakeViewOp> bView = stagedView(bLoad, "second", forOp);
    if (failed(aView) || failed(bView))
      return failure();
    // Everything else in the loop must be scalar index arithmetic.
    for (Operation &op : forOp.getBody()->without_terminator()) {
      if (&op == mma.getOperation() || &op == aLoad.getOperation() ||
          &op == bLoad.getOperation() || &op == mma.getA().getDefiningOp() ||
          &op == mma.getB().getDefiningOp())
        continue;
      bool scalar = llvm::none_of(op.getResultTypes(), [](Type t) {
        return isa<RankedTensorType, tile::ViewType>(t);
      });
      if (!scalar || op.getNumRegions() != 0 || !isMemoryEffectFree(&op))
        return op.emitError()
               << "the mma loop may only load the operands and multiply them; "
                  "move other work before or after the loop";
    }

    int64_t BM = aTy.getDimSize(0), BK = aTy.getDimSize(1), BN = bTy.getDimSize(1);
    auto shapeError = [&](const Twine &what) {
      return mma.emitError() << "kernel '" << name << "': " << what
                             << " (mma of " << shapeStr(aTy) << " and "
                             << shapeStr(bTy) << ")";
    };
    int64_t elemBytes = elem.getIntOrFloatBitWidth() / 8;
    // Elements per 128-byte row of a swizzled box (one TMA box's width).
    int64_t boxCols = 128 / elemBytes;
    unsigned consumers;
    // A skinny tile (BM of 8 to 56 rows) on wgmma: the instructions compute
    // the transposed product B^T A^T, so BN runs over wgmma's 64-row M and
    // BM over its N (n8 .. n56) instead of filling 64 rows of which most
    // are padding; the tile of b (the weights a decode streams) then takes
    // most of each stage, so more stages fit. The accumulator's registers
    // are the transposed fragments (#tile.mma<..., swapped = true>). As M
    // operand, b may be MN-major only with 16-bit elements (wgmma
    // transposes no other).
    // TF32 with b as loaded (MN-major, which wgmma cannot read as tf32) is
    // multiplied so too, at any BM up to 256, with B^T as wgmma's A from
    // registers (each thread reads its fragments from the stage and rounds
    // them to tf32).
    bool tf32RegisterB = tma && tf32 && !bKMajor;
    // B^T A^T needs BN in 64-column blocks over one or two consumers and
    // BM up to wgmma's N of 256 with the accumulator in 128 registers; a
    // tf32 tile outside that keeps mma.sync (e.g. BN = 192).
    if (tf32RegisterB &&
        (BN % 64 != 0 || BN > 256 || BM % 8 != 0 || BM > 256 ||
         BM * BN / (128 * (BN % 128 == 0 ? 2 : 1)) > 128)) {
      tf32RegisterB = false;
      tma = false;
      mmaSync = true;
    }
    bool swapped = tma && !fma && (BM < 64 || tf32RegisterB) && (bKMajor || elemBytes == 2 || tf32RegisterB);
    if (swapped) {
      if (BM % 8 != 0 || BM > 256)
        return shapeError(tf32RegisterB
                              ? "with tf32 and b as loaded (multiplied as B^T A^T), the number "
                                "of rows of a (BM) must be a multiple of 8 up to 256"
                              : "the number of rows of a (BM) must be a multiple of 8 below 64 "
                                "(the skinny tile, multiplied as B^T A^T) or of 64");
      if (BN % 64 != 0 || BN > 256)
        return shapeError(Twine(tf32RegisterB ? "with tf32 and b as loaded"
                                              : "with fewer than 64 rows of a (BM)") +
                          ", the number of columns of b (BN) must be a multiple of 64 up to 256 "
                          "(wgmma's M of B^T A^T)");
      consumers = BN % 128 == 0 ? 2 : 1;
    } else if (fma) {
      // 8 x 16 consumer threads per warpgroup, each with 4x4 blocks.
      consumers = (BM >= 128 && BM % 64 == 0) ? 2 : 1;
      if (BM % (32 * consumers) != 0)
        return shapeError("the number of rows of a (BM) must be a multiple of 32");
      if (BN % 64 != 0)
        return shapeError("the number of columns of b (BN) must be a multiple of 64");
    } else {
      if (BM % 64 != 0)
        return shapeError("the number of rows of a (BM) must be a multiple of 64 for the tensor cores");
      // Wider than one wgmma (256 columns): two wgmmas per step, each of
      // whole 64-column boxes of b as loaded (a K-major box has at most 256
      // rows).
      bool wide = tma && !bKMajor && BN > 256;
      if (tma && bKMajor && BN > 256 && BN % 64 == 0 && BN <= 512)
        return shapeError("with b transposed (K-major) the number of columns of b (BN) can be "
                          "at most 256 (a TMA box has at most 256 rows); a wider BN (e.g. 320) "
                          "needs b as loaded");
      // wgmma's N is any multiple of 8: b as loaded is staged in whole
      // 64-column boxes (the last one's columns past BN copied, never
      // read), b transposed in BN rows. mma.sync's B fragments come by
      // ldmatrix in 32-column steps.
      if (BN % (tma ? 8 : 32) != 0 || BN > (tma && !bKMajor ? 512 : 256) ||
          (wide && BN % 64 != 0))
        return shapeError(Twine("the number of columns of b (BN) must be a multiple of ") +
                          (tma ? "8 up to 256 (e.g. 64, 96, 128, 192, 208, 256)"
                               : "32 up to 256 (e.g. 64, 96, 128, 192, 256)") +
                          (tma && !bKMajor ? " or of 64 up to 512 (e.g. 320)" : ""));
      // BM = 192 on wgmma: three consumer warpgroups of 64 rows (cuBLAS's
      // and ThunderKittens' 192 x 192 tiles), 152 registers each.
      consumers = tma && BM == 192 ? 3 : (BM >= 128 && (BM / 2) % 64 == 0) ? 2 : 1;
    }
    if (tma && (BM > 256 || BK > 256))
      return shapeError("BM and BK can be at most 256 (a TMA box has at most 256 rows)");
    if (BK % boxCols != 0)
      return shapeError("the shared dimension (BK) must be a multiple of " +
                        Twine(boxCols) + " for the 128-byte swizzled staging");
    int64_t accRegs = BM * BN / (128 * consumers);
    // fma consumers also keep a and b fragments and addresses: 64
    // accumulators (8x8 per thread) is what fits next to them. Two wgmma
    // consumer warpgroups get 200 registers each (pipelineRegisters): 160
    // accumulators (128 x 320, as cuBLAS's tile for 8192^3) fit beside the
    // loop's addresses; three get 152, of which 96 accumulators (192 x 192)
    // leave enough (192 x 256's 128 do not: ptxas fails).
    int64_t maxAccRegs = fma                                 ? 64
                         : tma && !swapped && consumers == 2 ? 160
                         : tma && !swapped && consumers == 3 ? 96
                                                             : 128;
    if (accRegs > maxAccRegs)
      return mma.emitError()
             << "kernel '" << name << "': the " << BM << "x" << BN
             << " f32 accumulator needs " << accRegs
             << " registers per thread in each of the " << consumers
             << " consumer warpgroups, but at most " << maxAccRegs
             << " leave room for the rest (255 per thread); use a smaller BM or BN";
    int64_t stageBytes = tile::stagedTileBytes(BM, BK, elemBytes) +
                         (bKMajor ? tile::stagedTileBytes(BN, BK, elemBytes)
                                  : tile::stagedTileBytes(BK, BN, elemBytes));
    // Reductions over the accumulator's rows (axis = 0) combine the
    // consumer warps' partial columns in shared memory after the ring.
    int64_t columnBytes = fma || swapped ? 0 : columnReductionBytes(func, BM, consumers);
    int64_t maxStages = (kMaxSharedBytes - kSharedOverhead - columnBytes) / stageBytes;
    int64_t stages;
    if (auto s = func->getAttrOfType<IntegerAttr>(tile::kStagesAttrName)) {
      stages = s.getInt(); // 2 to 16 (checked in plan)
      int64_t need = stages * stageBytes + kSharedOverhead + columnBytes;
      if (need > kMaxSharedBytes)
        return mma.emitError()
               << "kernel '" << name << "' needs " << need
               << " bytes of shared memory for STAGES=" << stages << " stages of "
               << shapeStr(aTy) << " and " << shapeStr(bTy) << " tiles"
               << (columnBytes ? " and " + std::to_string(columnBytes) +
                                     " for the reductions over the accumulator's rows"
                               : std::string())
               << ", but "
               << kMaxSharedBytes << " are available per block on " << arch << "; use "
               << (maxStages >= 1 ? "STAGES=" + std::to_string(maxStages) + " or "
                                  : std::string())
               << "smaller tiles";
    } else {
      // On sm_90a a tile of at most 64 rows is the skinny-M form, whose few
      // programs stream B and are bound by the loads in flight: as many
      // stages as fit, up to 16 (H200, bf16 64x8192x8192 with BN = 128: 0.0500
      // ms with 4, 0.0393 with 8, session 14; 64 x 64 tiles with 14 stages
      // 0.0385, 16 x 64 (swapped) with 16 at 16x8192x8192 0.0371 against
      // 0.0435 for 64 x 128 with 8, session 18; docs/performance.md).
      // Otherwise at most 4: more do not help a tensor-core-bound tile.
      bool skinny = tma && !fma && BM <= 64;
      stages = std::min<int64_t>(skinny ? 16 : 4, maxStages);
      stages = std::min(stages, stagesUsed(forOp));
      if (stages < 2)
        return mma.emitError()
               << "kernel '" << name << "': one pipeline stage of " << shapeStr(aTy)
               << " and " << shapeStr(bTy) << " tiles takes " << stageBytes
               << " bytes of shared memory; at least two must fit in "
               << kMaxSharedBytes << "; use smaller tiles";
    }

    // The accumulator layout covers [BM, BN] tiles only: the rest of the
    // kernel (its epilogue) must work on tiles of that shape.
    // Before the loop every warpgroup runs the code (the producer too).
    auto runsBefore = [&](Operation *op) { return runsBeforeLoop(func, op, forOp); };
    // [BM, BN] or, for a batched result, [1, ..., 1, BM, BN]; with the
    // wgmma / mma.sync fragments also [BM, N] for N a multiple of 8 (whole
    // columns of the accumulator: a slice of it, and what is computed
    // from that).
    bool columnParts = !fma && !swapped;
    auto accShaped = [&](RankedTensorType tt) {
      ArrayRef<int64_t> s = tt.getShape();
      if (s.size() < 2 || s.end()[-2] != BM ||
          (s.end()[-1] != BN && !(columnParts && s.end()[-1] % 8 == 0)))
        return false;
      return llvm::all_of(s.drop_back(2), [](int64_t d) { return d == 1; });
    };
    // With the wgmma / mma.sync fragments, a [BM] or [BM, 1] tile of rows
    // (a reduction over the accumulator's columns, #tile.slice) stays in the
    // registers of the threads that hold the rows.
    auto rowsShaped = [&](RankedTensorType tt) {
      ArrayRef<int64_t> s = tt.getShape();
      return !fma && !swapped && !s.empty() && s[0] == BM &&
             (s.size() == 1 || (s.size() == 2 && s[1] == 1));
    };
    // And a [BN] or [1, BN] tile of columns (a reduction over its rows and
    // what is computed from it).
    DenseSet<Value> columns;
    if (!fma && !swapped) {
      FailureOr<DenseSet<Value>> found = findAccumulatorColumns(func, BM);
      if (failed(found))
        return failure();
      columns = std::move(*found);
    }
    WalkResult walk = func.walk([&](Operation *op) -> WalkResult {
      if (forOp->isAncestor(op))
        return WalkResult::advance();
      if (auto reduce = dyn_cast<tile::ReduceOp>(op);
          reduce && !fma && !swapped && reducesColumns(reduce, BM) && runsBefore(op)) {
        tile::emitUserError(op) << "in a kernel with mma, a reduction over the rows of a tile "
                                   "(axis = 0) must come after the mma loop";
        return WalkResult::interrupt();
      }
      if (swapped && isa<tile::ReduceOp>(op)) {
        tile::emitUserError(op) << "a reduction over the accumulator needs at least 64 rows of a "
                                   "(BM = "
                                << BM
                                << " is multiplied as B^T A^T, whose rows are "
                                   "spread over the warps); use BM = 64";
        return WalkResult::interrupt();
      }
      if (auto reduce = dyn_cast<tile::ReduceOp>(op)) {
        StringRef kind = reduce.getKind();
        RankedTensorType from = reduce.getTile().getType();
        if (fma || !reduce.getAxis() || from.getRank() != 2 || !accShaped(from) ||
            ((kind == "argmax" || kind == "argmin") && *reduce.getAxis() != 1)) {
          tile::emitUserError(op) << "in a kernel with mma, a reduction must run over the columns "
                                     "(axis = 1) or the rows (axis = 0) of the ["
                                  << BM << ", " << BN
                                  << "] accumulator (sum, max, min, prod or a combiner; argmax "
                                     "and argmin over the columns only"
                                  << (fma ? ", with bf16/f16 operands" : "")
                                  << "); other reductions are not supported yet";
          return WalkResult::interrupt();
        }
      }
      if (isa<tile::StoreOp, tile::ScatterOp, tile::AtomicOp, tile::PrintOp, tile::AssertOp>(op) &&
          runsBefore(op)) {
        tile::emitUserError(op) << "in a kernel with mma, stores, atomics, print and assert "
                                   "may not come before the mma loop (every warpgroup runs the "
                                   "code before it, the producer's too); put them in the loop "
                                   "or after it";
        return WalkResult::interrupt();
      }
      if (auto slice = dyn_cast<tile::SliceOp>(op);
          slice && columnParts && tile::slicesWholeColumns(slice))
        return WalkResult::advance();
      if (isa<tile::PermuteOp, tile::SliceOp, tile::TakeOp, tile::ScanOp>(op)) {
        tile::emitUserError(op)
            << "transposes, slices (other than of whole columns: all rows, a column offset "
               "and width that are multiples of 8, with bf16/f16 operands), take and scans "
               "in a kernel with mma are not supported yet";
        return WalkResult::interrupt();
      }
      if (auto broadcast = dyn_cast<tile::BroadcastOp>(op)) {
        RankedTensorType from = broadcast.getTile().getType();
        if (!((rowsShaped(from) || columns.contains(broadcast.getTile())) && from.getRank() == 2 &&
              accShaped(broadcast.getType()))) {
          tile::emitUserError(op) << "in a kernel with mma, only loaded tiles"
                                  << (fma || swapped ? ""
                                                     : ", [BM, 1] columns of row values and [1, "
                                                       "BN] rows of column values")
                                  << " can be broadcast (e.g. acc + load(bias, [n], [BN])"
                                  << (fma || swapped ? ""
                                                     : ", acc - expand_dims(max(acc, axis = 1), 1)")
                                  << "); this one is " << shapeStr(from)
                                  << (swapped ? "; columns of row values need BM = 64 or more"
                                              : "");
          return WalkResult::interrupt();
        }
      }
      for (Value result : op->getResults())
        if (auto tt = dyn_cast<RankedTensorType>(result.getType());
            tt && !accShaped(tt) && !rowsShaped(tt) && !columns.contains(result) &&
            !(!fma && !swapped && rowOfRowsToStore(op, tt, BM))) {
          tile::emitUserError(op)
              << "in a kernel with mma, every tile outside the mma "
                 "loop must have the accumulator's shape ["
              << BM << ", " << BN << "]"
              << (fma || swapped ? ""
                                 : " or be a [BM] / [BM, 1] tile of row values (or [1, BM] "
                                   "reshaped from them to be stored in a row) or a [BN] / [1, "
                                   "BN] tile of column values (a reduction over axis 0)")
              << "; this one is " << shapeStr(tt) << " (a loaded tile may be broadcast to it"
              << (swapped ? "; with BM < 64, tiles of row values are not supported: "
                            "use BM = 64"
                          : "")
              << ")";
          return WalkResult::interrupt();
        }
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return failure();

    // @launch(cluster = 2), sm_90a, wgmma: clusters of two programs along
    // grid dimension 0 that load the same tiles of one operand, each
    // copying half of them by TMA multicast into both (halving that
    // operand's L2 traffic). Not the default: on the H200 it pays where
    // rows do not start on 128-byte boundaries (bf16 3000^3, BN = 192:
    // 0.1130 -> 0.0903 ms) and costs up to a fifth on short back-to-back
    // launches elsewhere (2048^3: 0.0309 -> 0.0377 ms; docs/performance.md,
    // session 15), so the program asks for it (examples/matmul.tile's
    // @heuristic does from the strides).
    int multicast = -1;
    bool requested = clusterRequested(func);
    if (tma && !fma && requested) {
      multicast = sharedOperand(forOp, aLoad, bLoad);
      if (multicast < 0)
        return mma.emitError()
               << "kernel '" << name << "': @launch(cluster = 2) pairs programs along grid "
                  "dimension 0 that load the same tiles of b (or of a), but here both "
                  "operands' tiles (or the loop's bounds) depend on block_id(0); use "
                  "cluster = 1";
    }
    Builder b(func.getContext());

    // Record the plan.
    SmallVector<NamedAttribute> planAttrs = {
        b.getNamedAttr("stages", b.getI32IntegerAttr(stages)),
        b.getNamedAttr("consumers", b.getI32IntegerAttr(consumers))};
    if (swapped)
      planAttrs.push_back(b.getNamedAttr("swapped", b.getUnitAttr()));
    if (multicast >= 0)
      planAttrs.push_back(b.getNamedAttr("multicast", b.getI32IntegerAttr(multicast)));
    forOp->setAttr(tile::kPipelineAttrName, b.getDictionaryAttr(planAttrs));
    auto encoding = tile::MmaEncodingAttr::get(
        func.getContext(),
        fma ? tile::MmaKind::fma : mmaSync ? tile::MmaKind::mma_sync : tile::MmaKind::wgmma,
        unsigned(consumers), swapped);
    func->setAttr(tile::kEncodingAttrName, encoding);
    int32_t warps = int32_t(encoding.getWarps());
    // A tile.num_warps here came from the kernel's @launch(num_warps = ...).
    if (auto requested = func->getAttrOfType<IntegerAttr>(tile::kNumWarpsAttrName);
        requested && requested.getInt() != warps)
      return func.emitError() << "kernel '" << func.getName() << "' runs its mma loop as a "
                              << "pipeline of " << warps << " warps (" << consumers
                              << " consumer warpgroup(s)" << (mmaSync ? "" : " and a producer")
                              << " for a " << BM << "x" << BN << " tile); @launch(num_warps = "
                              << requested.getInt() << ") cannot change that: remove it";
    func->setAttr(tile::kNumWarpsAttrName, b.getI32IntegerAttr(warps));
    func->setAttr(tile::kSharedBytesAttrName,
                  b.getI32IntegerAttr(int32_t(stages * stageBytes + kSharedOverhead + columnBytes)));
    if (columnBytes)
      placeColumnReductions(func, BM, stages * stageBytes + kBarrierBytes);
    if (mmaSync)
      return success();
    // One TMA descriptor (by value, 64-byte aligned) and a valid flag per
    // operand, appended to the kernel parameters.
    SmallVector<Attribute> tmaOps;
    for (tile::LoadOp load : {aLoad, bLoad})
      if (failed(addTmaOperand(func, load, boxCols, tmaOps)))
        return failure();
    // The TMA-store epilogue writes row fragments; a swapped accumulator
    // (a few rows of output) is stored from its registers.
    if (!fma && !swapped)
      (void)planTmaStores(func, forOp, BM, encoding, stages * stageBytes, /*need=*/0, tmaOps);
    func->setAttr(tile::kTmaAttrName, b.getArrayAttr(tmaOps));
    return success();
  }

  /// The operand (1: b, else 0: a, -1: neither) whose tiles every program
  /// of a column of the grid (the same block_id(1), block_id(2)) loads
  /// alike, iteration by iteration: the loop is at the kernel's top level,
  /// and its bounds and the operand's load (view, indices) read nothing
  /// that depends on block_id(0).
  static int sharedOperand(scf::ForOp forOp, tile::LoadOp aLoad, tile::LoadOp bLoad) {
    if (!isa<func::FuncOp>(forOp->getParentOp()))
      return -1;
    if (!pairUniform({forOp.getLowerBound(), forOp.getUpperBound(), forOp.getStep()}))
      return -1;
    if (pairUniform(bLoad->getOperands()))
      return 1;
    if (pairUniform(aLoad->getOperands()))
      return 0;
    return -1;
  }

  /// Appends a TMA descriptor (by value, 64-byte aligned) and its valid flag
  /// for the view `load` reads to the kernel's parameters, and its entry
  /// [param, box columns, box rows] to `tmaOps` (the runtime encodes it).
  static LogicalResult addTmaOperand(func::FuncOp func, tile::LoadOp load, int64_t boxCols,
                                     SmallVectorImpl<Attribute> &tmaOps) {
    return addTmaOperand(func, load.getView().getDefiningOp<tile::MakeViewOp>(), boxCols,
                         load.getType().getShape().end()[-2], tmaOps);
  }
  static LogicalResult addTmaOperand(func::FuncOp func, tile::MakeViewOp mk, int64_t boxCols,
                                     int64_t boxRows, SmallVectorImpl<Attribute> &tmaOps) {
    MLIRContext *ctx = func.getContext();
    Builder b(ctx);
    int32_t param = mk->getAttrOfType<IntegerAttr>(tile::kParamIndexAttrName).getInt();
    tmaOps.push_back(b.getDenseI64ArrayAttr({param, boxCols, boxRows}));
    NamedAttrList attrs;
    attrs.append(LLVM::LLVMDialect::getByValAttrName(),
                 TypeAttr::get(LLVM::LLVMArrayType::get(b.getI8Type(), 128)));
    attrs.append(LLVM::LLVMDialect::getAlignAttrName(), b.getI64IntegerAttr(64));
    unsigned n = func.getNumArguments();
    if (failed(func.insertArgument(n, LLVM::LLVMPointerType::get(ctx), attrs.getDictionary(ctx),
                                   func.getLoc())) ||
        failed(func.insertArgument(n + 1, b.getI32Type(), DictionaryAttr(), func.getLoc())))
      return func.emitError("internal: cannot add the TMA parameters");
    return success();
  }

  /// The stores of mma results after the loop `loop` that go through
  /// shared memory and TMA (tile.tma_store; lowered by TmaStoreToNVVM.cpp):
  /// a [BM, N] (or [1, BM, N]) tile of bf16, f16 or f32 whose rows are
  /// whole 128-byte boxes, to a whole tensor parameter of its rank (a part,
  /// narrow, ends where the descriptor's bounds do not) that the kernel
  /// only writes (not C of a read-modify-write, C = load(C) + ...). The matmul
  /// pipeline's store reuses the ring (`ringBytes`), free once the loop is
  /// done, when it holds the whole tile; in the general pipeline
  /// (`ringBytes` 0), whose producer may run ahead into the next tile's
  /// loads, each consumer warpgroup cycles through kTmaStoreBuffers boxes
  /// of its own after the `need` bytes planned so far, if they fit (a
  /// store is not worth a stage). Not for a loop the producer might not
  /// leave at (in an 'if') nor a result the kernel also reads. Returns the
  /// bytes of shared memory needed then.
  int64_t planTmaStores(func::FuncOp func, scf::ForOp loop, int64_t BM,
                        tile::MmaEncodingAttr encoding, int64_t ringBytes, int64_t need,
                        SmallVectorImpl<Attribute> &tmaOps) {
    // Each consumer warpgroup stores its share of the rows (all of them
    // where the consumers alternate over tiles) from boxes of its own.
    int64_t consumers = encoding.getConsumers(), share = encoding.getShare();
    if (arch != "sm_90a")
      return need;
    // The producer warpgroup leaves where the loop (or the persistent
    // kernel's outer loop) starts; in an 'if' it may not, and would run
    // the store too.
    Operation *top = isa<scf::ForOp>(loop->getParentOp()) ? loop->getParentOp() : loop;
    if (top->getBlock() != &func.getBody().front())
      return need;
    // A result the kernel also reads (a read-modify-write's C among them)
    // would be read while its TMA store is in flight: only parameters the
    // kernel just writes (and asks the shape of).
    auto onlyWritten = [&](int32_t param) {
      WalkResult walk = func.walk([&](tile::MakeViewOp mk) {
        auto p = mk->getAttrOfType<IntegerAttr>(tile::kParamIndexAttrName);
        if (!p || p.getInt() != param)
          return WalkResult::advance();
        for (Operation *user : mk->getUsers())
          if (!isa<tile::StoreOp, tile::ViewDimOp, tile::ViewStrideOp>(user))
            return WalkResult::interrupt();
        return WalkResult::advance();
      });
      return !walk.wasInterrupted();
    };
    MLIRContext *ctx = func.getContext();
    Builder b(ctx);
    // The general pipeline's buffers: after the mbarriers, 1024-aligned
    // (`need` is the planned bytes, the barriers' included, plus the slack).
    int64_t bufferOffset = (need - kAlignmentSlack + 1023) / 1024 * 1024;
    int64_t newNeed = need;
    func.walk([&](tile::StoreOp store) {
      // (Not a store in an mma loop: every loop with a plan.)
      if (loop->isAncestor(store))
        return;
      for (Operation *p = store->getParentOp(); p != func.getOperation(); p = p->getParentOp())
        if (p->hasAttr(tile::kPipelineAttrName))
          return;
      RankedTensorType tt = store.getValue().getType();
      ArrayRef<int64_t> shape = tt.getShape();
      if (shape.size() < 2 || shape.size() > 3 || shape.end()[-2] != BM ||
          (shape.size() == 3 && shape[0] != 1))
        return;
      Type elem = tt.getElementType();
      if (!elem.isBF16() && !elem.isF16() && !elem.isF32() && !tile::isFloat8(elem))
        return;
      int64_t elemBytes = elem.getIntOrFloatBitWidth() / 8;
      int64_t rowBytes = shape.back() * elemBytes;
      if (rowBytes % 128 != 0 || (BM / share) % tile::kTmaStoreBoxRows != 0)
        return;
      auto mk = store.getView().getDefiningOp<tile::MakeViewOp>();
      if (!mk || !mk->hasAttr(tile::kParamIndexAttrName) || !mk.getOffsets().empty() ||
          mk.getType().getRank() != int64_t(shape.size()) ||
          !onlyWritten(mk->getAttrOfType<IntegerAttr>(tile::kParamIndexAttrName).getInt()))
        return;
      int64_t boxBytes = tile::kTmaStoreBoxRows * 128;
      int64_t boxesPerWG = (BM / share / tile::kTmaStoreBoxRows) * (rowBytes / 128);
      int64_t offset = 0, buffers = 0;
      if (ringBytes) {
        if (BM * rowBytes > ringBytes)
          return;
      } else {
        buffers = std::min(tile::kTmaStoreBuffers, boxesPerWG);
        int64_t end = bufferOffset + consumers * tile::kTmaStoreBuffers * boxBytes +
                      kAlignmentSlack;
        if (end > maxSharedBytes())
          return;
        offset = bufferOffset;
        newNeed = std::max(newNeed, end);
      }
      NamedAttrList plan;
      plan.append("tma", b.getI32IntegerAttr(int32_t(tmaOps.size())));
      plan.append("offset", b.getI64IntegerAttr(offset));
      plan.append("buffers", b.getI32IntegerAttr(int32_t(buffers)));
      if (failed(addTmaOperand(func, mk, 128 / elemBytes, tile::kTmaStoreBoxRows, tmaOps)))
        return;
      store->setAttr(tile::kTmaStoreAttrName, plan.getDictionary(ctx));
    });
    return newNeed;
  }
};

} // namespace
