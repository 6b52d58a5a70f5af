//===- PlanShared.cpp - one plan for a kernel's shared memory -------------===//
//
// tile-plan-shared: every buffer a kernel keeps in shared memory, its size,
// its place and the check of the sum against the architecture's limit, in
// one pass (see Passes.td). tile-place-shared: after barrier elision, the
// buffers of a kernel with one dynamic array become offsets into it.
//
//===----------------------------------------------------------------------===//

#include "tilec/Conversion/Passes.h"

#include "PatternsNVVM.h"
#include "tilec/Dialect/Tile/IR/TileDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/LoopLikeInterface.h"

namespace tilec {
#define GEN_PASS_DEF_TILEPLANSHARED
#define GEN_PASS_DEF_TILEPLACESHARED
#include "tilec/Conversion/Passes.h.inc"
} // namespace tilec

using namespace mlir;
using namespace tilec;

namespace {

/// Whether `op` itself keeps data in the kernel's relayout buffer (an mma
/// only in the blocked layout; the mma pipeline has its own memory; scans
/// have a buffer of their own).
bool writesRelayoutBuffer(Operation *op, bool pipelined) {
  // In an mma pipeline kernel reductions and broadcasts work on the
  // accumulator's rows, in registers (tile-stage-shared allows no others).
  if (pipelined && isa<tile::ReduceOp, tile::BroadcastOp>(op))
    return false;
  // There the only transposes are of mma operands, staged K-major or
  // MN-major in the pipeline's own buffers (tile-stage-shared refuses
  // others).
  if (pipelined && isa<tile::PermuteOp>(op))
    return false;
  // The accumulator layout relabelled as an mma's A operand moves nothing.
  if (auto convert = dyn_cast<tile::ConvertLayoutOp>(op); convert && tile::isRelabelling(convert))
    return false;
  // A staged tile read into registers reads its stage.
  if (auto convert = dyn_cast<tile::ConvertLayoutOp>(op); convert && tile::readsStage(convert))
    return false;
  auto reduce = dyn_cast<tile::ReduceOp>(op);
  // A reduction into the rows of a blocked tile needs the buffer only for
  // rows wider than a warp.
  if (auto rows = reduce ? dyn_cast<RankedTensorType>(reduce.getType()) : RankedTensorType();
      rows && isa_and_nonnull<tile::SliceEncodingAttr>(rows.getEncoding()))
    return rowReduceScratchBytes(reduce) > 0;
  // Elements the thread's warp holds already (row values broadcast back
  // over their rows, whole columns of an accumulator-layout tile, a row
  // broadcast over a blocked tile of its length, relayouts by shuffles):
  // WarpRelayoutLowering.
  if (isa<tile::BroadcastOp, tile::ConvertLayoutOp, tile::PermuteOp, tile::SliceOp>(op) &&
      tile::warpRelayout(op))
    return false;
  return isa<tile::BroadcastOp, tile::ConvertLayoutOp, tile::PermuteOp, tile::SliceOp,
             tile::TakeOp>(op) ||
         (reduce && reduce.getAxis()) || (isa<tile::MmaOp>(op) && !pipelined);
}

/// Whether `op` or an op nested in it writes the relayout buffer.
bool usesRelayoutBuffer(Operation *op, bool pipelined) {
  bool uses = false;
  op->walk([&](Operation *inner) { uses |= writesRelayoutBuffer(inner, pipelined); });
  return uses;
}

/// A take from the same tile as an earlier take of the same block, with no
/// other user of the relayout buffer between them, reads the buffer the
/// earlier one wrote (kTakeReuseAttrName); the earlier one then leaves it
/// intact (kTakeKeepAttrName: no barrier after its reads).
void markSharedTakes(func::FuncOp func, bool pipelined) {
  func.walk([&](tile::TakeOp take) {
    if (take->hasAttr(kTakeReuseAttrName))
      return;
    Operation *last = take;
    for (Operation *op = take->getNextNode(); op; op = op->getNextNode()) {
      auto next = dyn_cast<tile::TakeOp>(op);
      if (next && next.getTile() == take.getTile()) {
        last->setAttr(kTakeKeepAttrName, UnitAttr::get(func.getContext()));
        next->setAttr(kTakeReuseAttrName, UnitAttr::get(func.getContext()));
        last = next;
        continue;
      }
      if (usesRelayoutBuffer(op, pipelined))
        break;
    }
  });
}

std::string tileText(RankedTensorType t) {
  std::string s = "tile<f32>[";
  for (auto [i, d] : llvm::enumerate(t.getShape()))
    s += (i ? ", " : "") + std::to_string(d);
  return s + "]";
}

/// One buffer of the plan: its global, bytes, the op that needs the most
/// of it (where an error points), and its offset once placed.
struct Buffer {
  std::string name;
  int64_t bytes = 0;
  Operation *largest = nullptr;
  int64_t offset = 0;
};

int64_t align16(int64_t n) { return (n + 15) / 16 * 16; }

struct TilePlanSharedPass : tilec::impl::TilePlanSharedBase<TilePlanSharedPass> {
  using Base::Base;

  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (func->hasAttr(tile::kKernelAttrName) && failed(plan(func)))
        return signalPassFailure();
  }

  LogicalResult plan(func::FuncOp func) {
    auto layout = func->getAttrOfType<ThreadLayout>(tile::kEncodingAttrName);
    if (!layout)
      return func.emitError("kernel has no thread layout; run tile-layout first");
    bool pipelined = isPipelined(layout);
    MLIRContext *ctx = func.getContext();
    Builder b(ctx);

    // Whole-tile reductions: each op has its own kReduceSlotsPerOp 32-bit
    // slots (its state per warp: a value, then an index for argmax/argmin),
    // so that one that runs once needs no barrier after reading its slots
    // (see ReduceToNVVM); at most kMaxReduceSlotSets sets (512 bytes
    // each): past that, reductions share sets and keep the barrier after
    // their reads.
    SmallVector<tile::ReduceOp> wholeTileReduces;
    func.walk([&](tile::ReduceOp r) {
      if (!r.getAxis())
        wholeTileReduces.push_back(r);
    });
    Buffer reduce{reduceScratchName(func.getName())};
    size_t sets = std::min<size_t>(wholeTileReduces.size(), kMaxReduceSlotSets);
    for (auto [i, r] : llvm::enumerate(wholeTileReduces)) {
      r->setAttr(kReduceSlotAttrName, b.getI32IntegerAttr(int32_t(i % sets)));
      if (wholeTileReduces.size() > sets || r->getParentOfType<LoopLikeOpInterface>())
        r->setAttr(kReduceBarrierAttrName, b.getUnitAttr());
      reduce.largest = r;
    }
    reduce.bytes = 4 * int64_t(kReduceSlotsPerOp) * int64_t(sets);

    // Scans have a buffer of their own, so that a scan needs no barrier
    // before the next relayout writes (tile-elide-barriers removes it).
    Buffer scan{scanScratchName(func.getName())};
    if (!pipelined)
      func.walk([&](tile::ScanOp op) {
        int64_t bytes = scanScratchBytes(op.getType());
        if (bytes > scan.bytes) {
          scan.bytes = bytes;
          scan.largest = op;
        }
      });

    // Broadcasts of computed tiles, transposes, slices, axis reductions,
    // takes and CUDA-core mmas share one buffer, as large as the largest
    // need.
    Buffer relayout{relayoutScratchName(func.getName())};
    func.walk([&](Operation *op) {
      if (!writesRelayoutBuffer(op, pipelined))
        return;
      int64_t bytes;
      if (auto mma = dyn_cast<tile::MmaOp>(op)) {
        // A CUDA-core mma keeps both operands in the buffer.
        bytes = mmaOperandOffset(mma.getA().getType()) + relayoutScratchBytes(mma.getB().getType());
      } else {
        auto r = dyn_cast<tile::ReduceOp>(op);
        int64_t rowBytes = r ? rowReduceScratchBytes(r) : 0;
        bytes = rowBytes > 0 ? rowBytes
                             : relayoutScratchBytes(cast<RankedTensorType>(op->getOperand(0).getType()));
      }
      if (bytes > relayout.bytes) {
        relayout.bytes = bytes;
        relayout.largest = op;
      }
    });

    // The mma pipeline's region comes first (its code aligns its start to
    // 1024 bytes within the slack tile-stage-shared counted).
    int64_t region = 0;
    if (auto smem = func->getAttrOfType<IntegerAttr>(tile::kSharedBytesAttrName); smem && pipelined)
      region = smem.getInt();
    SmallVector<Buffer *> buffers;
    for (Buffer *buf : {&reduce, &scan, &relayout})
      if (buf->bytes > 0)
        buffers.push_back(buf);

    // Side by side if they fit; else every op's buffer from the same
    // offset: each lives only while its op runs once the reductions keep
    // their barriers and takes do not leave the buffer to the next take.
    int64_t limit = tile::maxSharedBytes(arch);
    int64_t end = align16(region);
    for (Buffer *buf : buffers) {
      buf->offset = end;
      end = align16(end + buf->bytes);
    }
    bool overlapped = end > limit;
    if (overlapped) {
      end = align16(region);
      for (Buffer *buf : buffers) {
        buf->offset = align16(region);
        end = std::max(end, align16(region + buf->bytes));
      }
      for (tile::ReduceOp r : wholeTileReduces)
        r->setAttr(kReduceBarrierAttrName, b.getUnitAttr());
    } else {
      // Takes from one tile in a row share one write of it to the buffer.
      markSharedTakes(func, pipelined);
    }
    if (end > limit)
      return tooLarge(func, buffers, region, end, limit);

    NamedAttrList plan;
    if (region)
      plan.append(sharedMemoryName(func.getName()), b.getDenseI64ArrayAttr({0, region}));
    for (Buffer *buf : buffers)
      plan.append(buf->name, b.getDenseI64ArrayAttr({buf->offset, buf->bytes}));
    func->setAttr(tile::kSharedBuffersAttrName, plan.getDictionary(ctx));
    // Static arrays while they fit in 48 KiB (no launch setting), else one
    // dynamic array; the pipeline's region is dynamic already.
    if (region || end > tile::kMaxStaticSharedBytes)
      func->setAttr(tile::kSharedBytesAttrName, b.getI32IntegerAttr(int32_t(end)));
    return success();
  }

  /// The error for a kernel whose buffers exceed `limit` even when they
  /// share their bytes, at the op that needs the most.
  LogicalResult tooLarge(func::FuncOp func, ArrayRef<Buffer *> buffers, int64_t region,
                         int64_t end, int64_t limit) {
    Buffer *largest = *llvm::max_element(buffers, [](Buffer *x, Buffer *y) {
      return x->bytes < y->bytes;
    });
    int64_t available = limit - align16(region);
    InFlightDiagnostic diag = largest->largest->emitError();
    if (auto mma = dyn_cast<tile::MmaOp>(largest->largest))
      diag << "this mma of f32 tiles runs on the CUDA cores and keeps both operands ("
           << tileText(mma.getA().getType()) << " and " << tileText(mma.getB().getType())
           << ") in shared memory: " << largest->bytes << " bytes, more than the " << available
           << " available; use smaller tiles (e.g. BM = 64, BN = 64, BK = 32), or on "
              "sm_90a BM = 128, BN = 128, BK = 32 for the pipelined CUDA-core path";
    else if (isa<tile::ScanOp>(largest->largest))
      diag << "this scan keeps " << largest->bytes
           << " bytes of partial sums in shared memory, more than the " << available
           << " available; use a smaller tile";
    else if (largest->name == reduceScratchName(func.getName()))
      diag << "the whole-tile reductions of kernel '" << func.getName() << "' keep "
           << largest->bytes << " bytes in shared memory, more than the " << available
           << " available";
    else
      diag << "this moves a tile of " << largest->bytes
           << " bytes through shared memory (transpose, take, reduction over an axis, f32 mma, or "
              "broadcast of a computed tile), more than the "
           << available << " available; use a smaller tile";
    if (region)
      diag << " (kernel '" << func.getName() << "' needs " << end << " bytes of shared memory, "
           << region << " of them for its mma pipeline, and " << arch << " has " << limit << ")";
    return failure();
  }
};

struct TilePlaceSharedPass : tilec::impl::TilePlaceSharedBase<TilePlaceSharedPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (auto func : module.getOps<LLVM::LLVMFuncOp>()) {
      auto plan = func->getAttrOfType<DictionaryAttr>(tile::kSharedBuffersAttrName);
      if (!plan || !func->hasAttr(tile::kSharedBytesAttrName))
        continue;
      std::string regionName = sharedMemoryName(func.getName());
      addSharedGlobal(func, regionName,
                      LLVM::LLVMArrayType::get(IntegerType::get(&getContext(), 8), 0),
                      LLVM::Linkage::External);
      SmallVector<LLVM::AddressOfOp> addresses;
      func.walk([&](LLVM::AddressOfOp addr) {
        if (addr.getGlobalName() != regionName && plan.get(addr.getGlobalName()))
          addresses.push_back(addr);
      });
      for (LLVM::AddressOfOp addr : addresses) {
        int64_t offset =
            cast<DenseI64ArrayAttr>(plan.get(addr.getGlobalName())).asArrayRef().front();
        OpBuilder b(addr);
        Value base = LLVM::AddressOfOp::create(b, addr.getLoc(), addr.getType(), regionName);
        if (offset)
          base = LLVM::GEPOp::create(b, addr.getLoc(), addr.getType(), b.getI8Type(), base,
                                     ArrayRef<LLVM::GEPArg>{int32_t(offset)});
        addr.replaceAllUsesWith(base);
        addr.erase();
      }
      for (NamedAttribute buffer : plan)
        if (buffer.getName() != regionName)
          if (auto global = module.lookupSymbol<LLVM::GlobalOp>(buffer.getName());
              global && SymbolTable::symbolKnownUseEmpty(global, module))
            global.erase();
    }
  }
};

} // namespace
