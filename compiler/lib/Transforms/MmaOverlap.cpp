//===- MmaOverlap.cpp - overlap of an mma loop's work with its mmas -------===//
//
// The plan of FlashAttention-3's intra-warpgroup overlap (see the header):
// which ops of the loop body form the second stage (the last mma and what
// only it needs), which values cross from one stage to the other, and an
// estimate of the registers the overlap keeps live.
//
//===----------------------------------------------------------------------===//

#include "tilec/Transforms/MmaOverlap.h"

#include "tilec/Dialect/Tile/IR/TileDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace tilec;

namespace {

/// The ops of the staged operand chain (load, reshape, transpose) that
/// feeds `operand` from a load in `loop`; false for any other operand (a
/// computed tile, a tile loaded before the loop).
bool collectChain(Value operand, scf::ForOp loop, llvm::DenseSet<Operation *> &into) {
  tile::SharedOperand so = tile::getSharedOperand(operand);
  if (!so.load || so.load->getParentOp() != loop.getOperation())
    return false;
  for (Operation *op : so.ops())
    into.insert(op);
  return true;
}

} // namespace

std::optional<tilec::MmaOverlap> tilec::planMmaOverlap(scf::ForOp loop, int64_t threads) {
  Block *body = loop.getBody();
  SmallVector<tile::MmaOp> mmas;
  bool nested = false;
  loop.walk([&](tile::MmaOp mma) {
    if (mma->getBlock() == body)
      mmas.push_back(mma);
    else
      nested = true;
  });
  if (nested || mmas.size() != 2 || hasPredicatedMma(loop))
    return std::nullopt;
  // Stores, atomics, print and assert in the loop keep their iteration's
  // order (the rotated loop would run one iteration's work after the next
  // one's start).
  WalkResult effects = loop.walk([](Operation *op) {
    return isa<tile::StoreOp, tile::ScatterOp, tile::AtomicOp, tile::PrintOp, tile::AssertOp>(op)
               ? WalkResult::interrupt()
               : WalkResult::advance();
  });
  if (effects.wasInterrupted())
    return std::nullopt;
  tile::MmaOp first = mmas[0], second = mmas[1];
  // The first starts from zero in every iteration; the second's result
  // only goes to the next iteration (acc = mma(.., f(acc))).
  if (!matchPattern(first.getAcc(), m_AnyZeroFloat()) || !second->hasOneUse())
    return std::nullopt;
  OpOperand &use = *second->getUses().begin();
  if (!isa<scf::YieldOp>(use.getOwner()))
    return std::nullopt;
  MmaOverlap plan;
  plan.first = first;
  plan.second = second;
  plan.accIndex = use.getOperandNumber();
  Value accArg = loop.getRegionIterArg(plan.accIndex);

  llvm::DenseSet<Operation *> earlyChains;
  for (Value operand : {first.getA(), first.getB()})
    collectChain(operand, loop, earlyChains);
  for (Value operand : {second.getA(), second.getB()})
    collectChain(operand, loop, plan.lateChains);
  for (Operation *op : plan.lateChains)
    if (earlyChains.contains(op))
      return std::nullopt;

  // What the carried accumulator flows into (all of it must be late).
  llvm::DenseSet<Operation *> fromAcc;
  SmallVector<Value> work{accArg};
  while (!work.empty()) {
    Value v = work.pop_back_val();
    for (Operation *user : v.getUsers()) {
      if (user->getBlock() != body)
        return std::nullopt; // read in a nested region
      // Only the second mma's result may be carried on: a yield of the
      // accumulator (or of anything computed from it) at another position
      // would carry the value of iteration i - 2 in the rotated loop.
      if (isa<scf::YieldOp>(user)) {
        if (v != second->getResult(0))
          return std::nullopt;
        continue;
      }
      if (!fromAcc.insert(user).second)
        continue;
      for (Value r : user->getResults())
        work.push_back(r);
    }
  }
  if (fromAcc.contains(first))
    return std::nullopt;

  // The second stage, from the back: the second mma, the ops computing
  // from the accumulator (only the second stage may use them), and the
  // reshapes and broadcasts only the second stage uses.
  llvm::DenseSet<Operation *> late{second.getOperation()};
  auto onlyLateUsers = [&](Operation &op) {
    return !op.use_empty() && llvm::all_of(op.getUsers(), [&](Operation *u) {
      return late.contains(u) || plan.lateChains.contains(u);
    });
  };
  for (Operation &op : llvm::reverse(body->without_terminator())) {
    if (&op == second.getOperation() || plan.lateChains.contains(&op) ||
        earlyChains.contains(&op))
      continue;
    if (fromAcc.contains(&op)) {
      if (op.getNumRegions() || !onlyLateUsers(op))
        return std::nullopt;
      late.insert(&op);
      continue;
    }
    if (isa<tile::BroadcastOp, tile::ReshapeOp>(op) && onlyLateUsers(op))
      late.insert(&op);
  }

  // What the second stage reads from the first: recomputed when it is a
  // constant or a splat of a value from outside the loop, else carried.
  llvm::DenseSet<Operation *> remat;
  auto definedOutside = [&](Value v) {
    return !loop->isAncestor(v.getParentBlock()->getParentOp());
  };
  for (Operation &op : body->without_terminator()) {
    if (!late.contains(&op))
      continue;
    plan.late.push_back(&op);
    for (Value v : op.getOperands()) {
      if (v == accArg || definedOutside(v))
        continue;
      Operation *def = v.getDefiningOp();
      if (!def)
        return std::nullopt; // the induction variable or another carried value
      if (late.contains(def) || plan.lateChains.contains(def))
        continue;
      if (earlyChains.contains(def))
        return std::nullopt;
      bool recompute = def->getNumRegions() == 0 && isMemoryEffectFree(def) &&
                       llvm::all_of(def->getOperands(), definedOutside);
      if (recompute) {
        if (remat.insert(def).second)
          plan.remat.push_back(def);
        continue;
      }
      if (!llvm::is_contained(plan.cross, v))
        plan.cross.push_back(v);
    }
  }
  // The carried values twice: the new P is made while the previous
  // iteration's P V, which reads the old one, may still run.
  plan.registers = tileRegisters(first.getResult(), threads) +
                   tileRegisters(second.getResult(), threads);
  for (Value v : plan.cross)
    plan.registers += 2 * tileRegisters(v, threads);
  return plan;
}

bool tilec::readsUnwrittenParam(Value view, const llvm::DenseSet<int64_t> &written) {
  auto mk = view.getDefiningOp<tile::MakeViewOp>();
  auto p = mk ? mk->getAttrOfType<IntegerAttr>(tile::kParamIndexAttrName) : IntegerAttr();
  return p && !written.contains(p.getInt());
}

bool tilec::producerCanReplay(Operation *op, const llvm::DenseSet<int64_t> &written) {
  WalkResult walk = op->walk([&](Operation *inner) {
    if (isa<scf::IfOp, scf::ForOp, scf::WhileOp, scf::YieldOp, scf::ConditionOp>(inner))
      return WalkResult::advance();
    if (auto load = dyn_cast<tile::LoadScalarOp>(inner))
      return readsUnwrittenParam(load.getView(), written) ? WalkResult::advance()
                                                          : WalkResult::interrupt();
    return inner->getNumRegions() || !isMemoryEffectFree(inner) ? WalkResult::interrupt()
                                                                : WalkResult::advance();
  });
  return !walk.wasInterrupted();
}

int64_t tilec::tileRegisters(Value v, int64_t threads) {
  auto ty = dyn_cast<RankedTensorType>(v.getType());
  if (!ty)
    return 1;
  int64_t bits = ty.getNumElements() * ty.getElementType().getIntOrFloatBitWidth();
  return (bits + 32 * threads - 1) / (32 * threads);
}

PipelineRegisters tilec::pipelineRegisters(int64_t consumers, bool busyProducer) {
  // Two consumer warpgroups (384 threads, 168 registers each at launch):
  // the producer gives most of its own to them, 72 and 216 (128 * (72 + 2 *
  // 216) fits the 64K of an SM), as FlashAttention-3 does (24/240). A busy
  // producer (which GeneralPipelineToNVVM.cpp decides) spilled at 72 (a
  // persistent kernel's 64-bit tile divisions:
  // 2.1 M local requests in matmul_persistent at 4096^3, ncu; the matmul
  // pipeline's copy by threads: 92 bytes in ptxas; the general pipeline's
  // copies of more than two tiles per stage: 236-392 bytes) and keeps 104,
  // leaving 200. Three (512 threads, 128 at launch): 56 and 152 (128 * (56 + 3 *
  // 152) = 64K). One consumer keeps the 255 of a 256-thread block. The
  // split must not ask for more than the block got at launch (2 x 216 + 72
  // = 3 x 168): setmaxnreg.inc waits until the registers are free, and 80
  // and 216 hung on the H200 (session 32).
  if (consumers == 2)
    return busyProducer ? PipelineRegisters{104, 200} : PipelineRegisters{72, 216};
  if (consumers == 3)
    return {56, 152};
  return {255, 255};
}

int64_t tilec::overlapRegisterBudget(int64_t consumers) {
  // The rest of the loop (row statistics, addresses, the softmax's
  // temporaries) takes about 20: attention at D = 128 is estimated at 194
  // and ptxas allocates 186. (The overlap is not planned in persistent
  // kernels: built there with Q in one buffer and three stages, attention
  // at D = 128 spilled 84 bytes in ptxas and ran 2-7% slower on the H200
  // without the mask, 0.5-3% faster with it; docs/performance.md, session 32.)
  return pipelineRegisters(consumers, /*busyProducer=*/false).consumer - 20;
}

bool tilec::onlyAccumulates(scf::ForOp loop) {
  auto mmas = loop.getBody()->getOps<tile::MmaOp>();
  return !mmas.empty() && llvm::all_of(mmas, [&](tile::MmaOp mma) {
    auto arg = dyn_cast<BlockArgument>(mma.getAcc());
    // (A predicated one only from zeros: an accumulator the loop starts
    // from computed registers, passed on where the product is skipped,
    // made ptxas serialize the wgmmas, C7515.)
    return mma->hasOneUse() && isa<scf::YieldOp>(*mma->getUsers().begin()) && arg &&
           arg.getOwner() == loop.getBody() &&
           (!mma.getPred() ||
            matchPattern(loop.getInitArgs()[arg.getArgNumber() - 1], m_AnyZeroFloat()));
  });
}

bool tilec::readsOnlyLoadedOperands(scf::ForOp loop) {
  auto loaded = [&](Value operand) {
    return tile::getSharedOperand(operand).load || loop.isDefinedOutsideOfLoop(operand);
  };
  return llvm::all_of(loop.getBody()->getOps<tile::MmaOp>(), [&](tile::MmaOp mma) {
    return loaded(mma.getA()) && loaded(mma.getB());
  });
}

bool tilec::hasPredicatedMma(scf::ForOp loop) {
  return llvm::any_of(loop.getBody()->getOps<tile::MmaOp>(),
                      [](tile::MmaOp mma) { return bool(mma.getPred()); });
}

bool tilec::loopOfProducts(scf::ForOp loop) {
  auto mmas = loop.getBody()->getOps<tile::MmaOp>();
  return std::distance(mmas.begin(), mmas.end()) >= 2 && !hasPredicatedMma(loop) &&
         llvm::all_of(mmas, [](tile::MmaOp mma) {
           return matchPattern(mma.getAcc(), m_AnyZeroFloat());
         });
}

bool tilec::mmaBound(scf::ForOp loop) {
  double mmaCycles = 0, otherCycles = 0;
  for (Operation &op : loop.getBody()->without_terminator()) {
    if (auto mma = dyn_cast<tile::MmaOp>(op)) {
      auto aTy = mma.getA().getType(), bTy = mma.getB().getType();
      // f8 runs at twice the rate.
      double rate = aTy.getElementType().getIntOrFloatBitWidth() == 8 ? 8192 : 4096;
      mmaCycles += 2.0 * aTy.getDimSize(0) * aTy.getDimSize(1) * bTy.getDimSize(1) / rate;
      continue;
    }
    // Free (views, index and broadcast forms) or not tile work.
    if (isa<tile::LoadOp, tile::SharedTileOp, tile::ReshapeOp, tile::PermuteOp, tile::SplatOp,
            tile::BroadcastOp, tile::RangeOp, arith::ConstantOp>(op))
      continue;
    if (auto convert = dyn_cast<tile::ConvertLayoutOp>(op); convert && tile::isRelabelling(convert))
      continue;
    int64_t elements = 0;
    for (Type t : llvm::concat<const Type>(op.getOperandTypes(), op.getResultTypes()))
      if (auto ty = dyn_cast<RankedTensorType>(t))
        elements = std::max(elements, ty.getNumElements());
    bool mufu = tile::hasApproxLowering(&op) ||
                isa<math::Exp2Op, math::RsqrtOp, math::SqrtOp, arith::DivFOp>(op);
    otherCycles += double(elements) / (mufu ? 16 : 128);
  }
  return mmaCycles >= otherCycles;
}

// (predicateMmas: MmaOverlap.h.)
void tilec::predicateMmas(func::FuncOp func) {
  SmallVector<scf::IfOp> ifs;
  func.walk<WalkOrder::PostOrder>([&](scf::IfOp op) { ifs.push_back(op); });
  for (scf::IfOp ifOp : ifs) {
    if (ifOp.getNumResults() == 0 || !ifOp.elseBlock() ||
        ifOp.elseBlock()->getOperations().size() != 1)
      continue;
    Block *then = ifOp.thenBlock();
    auto outside = [&](Value v) { return !ifOp->isAncestor(v.getParentBlock()->getParentOp()); };
    // The 'if' only holds mmas and work without side effects (loads
    // included), and its 'else' yields values from outside.
    bool fits = !then->getOps<tile::MmaOp>().empty();
    for (Operation &op : then->without_terminator()) {
      if (auto mma = dyn_cast<tile::MmaOp>(op)) {
        Type elem = mma.getA().getType().getElementType();
        fits &= elem.isBF16() || elem.isF16() || tile::isFloat8(elem);
        continue;
      }
      // (A reduction's combiner is a region; an 'if' left in the 'if'
      // holds an mma this did not predicate.)
      auto effects = dyn_cast<MemoryEffectOpInterface>(op);
      bool nestedMma = op.getNumRegions() != 0 &&
                       op.walk([](tile::MmaOp) { return WalkResult::interrupt(); })
                           .wasInterrupted();
      fits &= !nestedMma && (isMemoryEffectFree(&op) ||
                             (effects && effects.onlyHasEffect<MemoryEffects::Read>()));
      // (A value kept under the condition may need a zero for a skipped
      // step.)
      for (Type ty : op.getResultTypes())
        fits &= bool(Builder(ifOp.getContext()).getZeroAttr(ty));
    }
    for (Value e : ifOp.elseYield().getOperands())
      fits &= outside(e);
    if (!fits)
      continue;
    Value cond = ifOp.getCondition();
    // The work that depends on a product of the 'if' (between its mmas and
    // after them: attention's softmax) stays under the condition, as one
    // 'if' per run of it between two mmas; the rest (the loads that feed
    // the mmas, what their positions are computed from) moves before it,
    // and every mma is predicated. A run's 'if' yields in its else what a
    // skipped step must leave: the value the outer 'else' yields where the
    // run's value is yielded, or is the accumulator of an mma whose product
    // is yielded (a skipped product is its accumulator); zeros where it
    // only feeds skipped work.
    DenseSet<Operation *> dependent;
    for (Operation &op : then->without_terminator()) {
      if (isa<tile::MmaOp>(op))
        continue;
      bool dep = false;
      op.walk([&](Operation *inner) {
        for (Value v : inner->getOperands())
          if (Operation *def = v.getDefiningOp();
              def && def->getBlock() == then && (dependent.contains(def) || isa<tile::MmaOp>(def)))
            dep = true;
      });
      if (dep)
        dependent.insert(&op);
    }
    auto thenYield = ifOp.thenYield();
    auto elseValues = ifOp.elseYield().getOperands();
    // What a skipped step leaves in place of `v` (null: nothing required).
    auto fallbackOf = [&](Value v) -> Value {
      Value found;
      bool clash = false;
      auto offer = [&](Value e) {
        clash |= found && found != e;
        found = e;
      };
      for (auto [t, e] : llvm::zip(thenYield.getOperands(), elseValues)) {
        if (t == v)
          offer(e);
        if (auto mma = t.getDefiningOp<tile::MmaOp>(); mma && mma.getAcc() == v)
          offer(e);
      }
      return clash ? Value() : found;
    };
    DenseMap<Value, Value> leaves; // a run's 'if' result -> its value when skipped
    SmallVector<Operation *> run;
    auto flush = [&] {
      if (run.empty())
        return;
      DenseSet<Operation *> inRun(run.begin(), run.end());
      SmallVector<Value> exported;
      for (Operation *op : run)
        for (Value r : op->getResults())
          if (llvm::any_of(r.getUsers(), [&](Operation *user) {
                return !inRun.contains(then->findAncestorOpInBlock(*user));
              }))
            exported.push_back(r);
      OpBuilder b(ifOp);
      SmallVector<Type> types;
      for (Value v : exported)
        types.push_back(v.getType());
      auto part = scf::IfOp::create(b, ifOp.getLoc(), types, cond, /*withElseRegion=*/true);
      OpBuilder tb = OpBuilder::atBlockEnd(part.thenBlock());
      for (Operation *op : run)
        op->moveBefore(part.thenBlock(), part.thenBlock()->end());
      scf::YieldOp::create(tb, ifOp.getLoc(), exported);
      OpBuilder eb = OpBuilder::atBlockEnd(part.elseBlock());
      SmallVector<Value> skipped;
      for (Value v : exported) {
        Value e = fallbackOf(v);
        skipped.push_back(e ? e
                            : arith::ConstantOp::create(eb, ifOp.getLoc(),
                                                        cast<TypedAttr>(eb.getZeroAttr(v.getType())))
                                  .getResult());
      }
      scf::YieldOp::create(eb, ifOp.getLoc(), skipped);
      for (auto [v, r, e] : llvm::zip(exported, part.getResults(), skipped)) {
        v.replaceUsesWithIf(r, [&](OpOperand &use) { return !part->isAncestor(use.getOwner()); });
        leaves[r] = e;
      }
      run.clear();
    };
    for (Operation &op : llvm::make_early_inc_range(then->without_terminator())) {
      if (dependent.contains(&op)) {
        run.push_back(&op);
        continue;
      }
      if (isa<tile::MmaOp>(op))
        flush();
      op.moveBefore(ifOp);
      if (auto mma = dyn_cast<tile::MmaOp>(op)) {
        Value pred = cond;
        if (Value inner = mma.getPred()) {
          OpBuilder b(mma);
          pred = arith::AndIOp::create(b, mma.getLoc(), cond, inner);
        }
        mma.getPredMutable().assign(pred);
      }
    }
    flush();
    OpBuilder b(ifOp);
    SmallVector<Value> results;
    for (auto [t, e] : llvm::zip(thenYield.getOperands(), elseValues)) {
      // Whether a skipped step leaves `v` as the else's value.
      auto skippedIsE = [&, e = e](Value v) { return v == e || leaves.lookup(v) == e; };
      auto mma = t.getDefiningOp<tile::MmaOp>();
      if (skippedIsE(t) || (mma && skippedIsE(mma.getAcc())))
        results.push_back(t);
      else
        results.push_back(arith::SelectOp::create(b, ifOp.getLoc(), cond, t, e));
    }
    ifOp.replaceAllUsesWith(results);
    ifOp.erase();
  }
}
