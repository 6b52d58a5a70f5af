//===- TileElideBarriers.cpp - remove barriers that order nothing -------------===//
//
// See the pass description in Passes.td. For each `nvvm.barrier0`, the
// shared-memory accesses reachable backwards (to the previous barrier) and
// forwards (to the next one) over the control-flow graph are collected; the
// barrier goes when no pair of them touches the same buffer with a write.
//
//===----------------------------------------------------------------------===//

#include "tilec/Transforms/Passes.h"

#include "tilec/Dialect/Tile/IR/TileDialect.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseSet.h"

namespace tilec {
#define GEN_PASS_DEF_TILEELIDEBARRIERS
#include "tilec/Transforms/Passes.h.inc"
} // namespace tilec

#define DEBUG_TYPE "tile-elide-barriers"

using namespace mlir;

namespace {

/// One shared-memory access: the buffer (a shared global's name; empty:
/// unknown, conflicts with all) and whether it writes.
struct Access {
  StringRef buffer;
  bool write;
};

bool isShared(Type t) {
  auto p = dyn_cast<LLVM::LLVMPointerType>(t);
  // Address space 3 is shared; a generic pointer (0) may point there.
  return p && (p.getAddressSpace() == 3 || p.getAddressSpace() == 0);
}

/// The shared global that `ptr` points into, or "" when unknown.
StringRef bufferOf(Value ptr) {
  while (Operation *def = ptr.getDefiningOp()) {
    if (auto gep = dyn_cast<LLVM::GEPOp>(def)) {
      ptr = gep.getBase();
      continue;
    }
    if (auto cast = dyn_cast<LLVM::AddrSpaceCastOp>(def)) {
      ptr = cast.getArg();
      continue;
    }
    if (auto addr = dyn_cast<LLVM::AddressOfOp>(def))
      return addr.getGlobalName();
    break;
  }
  return "";
}

/// The shared-memory accesses of `op` (none for ops without pointer
/// operands into shared memory; any other op with one reads and writes).
void accessesOf(Operation *op, SmallVectorImpl<Access> &out) {
  if (auto load = dyn_cast<LLVM::LoadOp>(op)) {
    if (isShared(load.getAddr().getType()))
      out.push_back({bufferOf(load.getAddr()), false});
    return;
  }
  if (auto store = dyn_cast<LLVM::StoreOp>(op)) {
    if (isShared(store.getAddr().getType()))
      out.push_back({bufferOf(store.getAddr()), true});
    return;
  }
  // Address arithmetic (getelementptr, casts) touches no memory.
  if (isMemoryEffectFree(op))
    return;
  for (Value v : op->getOperands())
    if (isShared(v.getType()))
      out.push_back({bufferOf(v), true});
}

/// Whether two buffers may share bytes: the same global, or two whose
/// ranges in the kernel's shared-memory plan (tile.shared_buffers, from
/// tile-plan-shared) overlap.
bool alias(StringRef x, StringRef y, DictionaryAttr plan) {
  if (x == y)
    return true;
  auto range = [&](StringRef name) {
    return plan ? dyn_cast_or_null<DenseI64ArrayAttr>(plan.get(name)) : DenseI64ArrayAttr();
  };
  DenseI64ArrayAttr rx = range(x), ry = range(y);
  if (!rx || !ry)
    return false;
  return rx[0] < ry[0] + ry[1] && ry[0] < rx[0] + rx[1];
}

bool conflict(const Access &a, const Access &b, DictionaryAttr plan) {
  if (!a.write && !b.write)
    return false;
  return a.buffer.empty() || b.buffer.empty() || alias(a.buffer, b.buffer, plan);
}

struct TileElideBarriersPass : tilec::impl::TileElideBarriersBase<TileElideBarriersPass> {
  void runOnOperation() override {
    getOperation().walk([](LLVM::LLVMFuncOp func) {
      // The mma pipeline synchronizes through mbarriers and async copies.
      if (tilec::tile::hasMmaPipeline(func) || func.isExternal())
        return;
      SmallVector<NVVM::Barrier0Op> barriers;
      func.walk([&](NVVM::Barrier0Op b) { barriers.push_back(b); });
      for (NVVM::Barrier0Op b : barriers)
        if (!needed(b))
          b->erase();
    });
  }

  /// Collects the accesses from `start` (exclusive) in direction `forward`
  /// until a barrier, over all paths.
  static void collect(Operation *start, bool forward, SmallVectorImpl<Access> &out) {
    llvm::DenseSet<Block *> seen;
    SmallVector<Block *> work; // blocks to visit whole
    auto visitFrom = [&](Block *block, Operation *from) {
      // Walks `block` from `from` (inclusive; null: its first op in the
      // direction) and returns whether it stopped at a barrier.
      if (forward) {
        for (auto it = from ? Block::iterator(from) : block->begin(); it != block->end(); ++it) {
          if (isa<NVVM::Barrier0Op>(*it))
            return true;
          it->walk([&](Operation *inner) { accessesOf(inner, out); });
        }
      } else {
        Operation *op = from ? from : (block->empty() ? nullptr : &block->back());
        for (; op; op = op->getPrevNode()) {
          if (isa<NVVM::Barrier0Op>(op))
            return true;
          op->walk([&](Operation *inner) { accessesOf(inner, out); });
        }
      }
      return false;
    };
    auto next = [&](Block *block) {
      if (forward) {
        for (Block *s : block->getSuccessors())
          if (seen.insert(s).second)
            work.push_back(s);
      } else {
        for (Block *p : block->getPredecessors())
          if (seen.insert(p).second)
            work.push_back(p);
      }
    };
    Block *home = start->getBlock();
    Operation *first = forward ? start->getNextNode() : start->getPrevNode();
    bool stopped = first ? visitFrom(home, first) : false;
    if (!stopped)
      next(home);
    while (!work.empty()) {
      // The barrier's own block, reached again around a loop, is walked to
      // the barrier, which stops the walk.
      Block *block = work.pop_back_val();
      if (!visitFrom(block, nullptr))
        next(block);
    }
  }

  static bool needed(NVVM::Barrier0Op b) {
    // Barriers inside structured ops (not yet lowered to a CFG) are kept.
    if (!isa<LLVM::LLVMFuncOp>(b->getParentOp()))
      return true;
    SmallVector<Access> before, after;
    collect(b, /*forward=*/false, before);
    collect(b, /*forward=*/true, after);
    auto plan = b->getParentOp()->getAttrOfType<DictionaryAttr>(
        tilec::tile::kSharedBuffersAttrName);
    for (const Access &x : before)
      for (const Access &y : after)
        if (conflict(x, y, plan))
          return true;
    return false;
  }
};

} // namespace
