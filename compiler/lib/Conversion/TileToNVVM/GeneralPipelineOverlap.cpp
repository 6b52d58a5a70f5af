//===- GeneralPipelineOverlap.cpp - the rotated loop of the mma overlap ---===//
//
// FlashAttention-3's intra-warpgroup overlap (tilec/Transforms/MmaOverlap.h)
// built in the consumers of a general pipeline: the loop
//
//   for i in 0 .. n { wait stage i; s = mma(a, b_i, 0); work(s); acc = mma(p, v_i, f(acc));
//                     release stage i }
//
// becomes
//
//   if n > 0 { wait stage 0; s = mma(a, b_0, 0); work(s) }                    (prologue)
//   for i in 1 .. n {
//     wait stage i
//     s = mma(a, b_i, 0)                          no wait
//     acc = mma(p(i - 1), v_{i - 1}, f(acc))      no wait; the stage i - 1 tiles
//     s = wgmma_wait 1 (s)                        s is done, acc's mma runs on
//     work(s)                                     ... while this runs
//     acc = wgmma_wait 0 (acc); release stage i - 1
//   }
//   if n > 0 { acc = mma(p(n - 1), v_{n - 1}, f(acc)); release stage n - 1 }  (epilogue)
//
// where p(i - 1) and every other value of iteration i - 1's work that the
// last mma reads are carried by the loop. With ping-pong a turn at the
// tensor cores is the two mmas issued back to back.
//
//===----------------------------------------------------------------------===//

#include "GeneralPipeline.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace tilec;
using namespace tilec::mma;

void tilec::mma::buildOverlappedLoop(OpBuilder &b, scf::ForOp loop, const MmaOverlap &plan,
                                     const OverlapRing &ring) {
  Location loc = loop.getLoc();
  Emit e{b, loc};
  Block *body = loop.getBody();
  auto yield = cast<scf::YieldOp>(body->getTerminator());
  unsigned k = plan.accIndex;
  Value accArg = loop.getRegionIterArg(k);

  llvm::DenseSet<Operation *> chainOps, late(plan.late.begin(), plan.late.end());
  for (const OverlapRing::Chain &c : ring.chains)
    chainOps.insert(c.ops.begin(), c.ops.end());
  // The first stage's ops in program order, split after the first mma.
  SmallVector<Operation *> before, after;
  bool seenFirst = false;
  for (Operation &op : body->without_terminator()) {
    if (chainOps.contains(&op) || late.contains(&op))
      continue;
    (seenFirst ? after : before).push_back(&op);
    if (&op == plan.first)
      seenFirst = true;
  }
  // Staged tiles of iteration i's stage at `base`: the chains of one stage.
  auto mapChains = [&](IRMapping &map, Value base, bool lateOnes) {
    for (const OverlapRing::Chain &c : ring.chains) {
      if (plan.lateChains.contains(c.ops.front()) != lateOnes)
        continue;
      Operation *last = c.ops.back();
      Value tileV = tile::SharedTileOp::create(b, loc, last->getResult(0).getType(),
                                               e.gep(base, e.i64(c.offset)));
      map.map(last->getResult(0), tileV);
    }
  };
  auto cloneAll = [&](ArrayRef<Operation *> ops, IRMapping &map) {
    for (Operation *op : ops)
      b.clone(*op, map);
  };
  auto setAttr = [&](IRMapping &map, Operation *orig, StringRef name, Attribute value) {
    map.lookup(orig->getResult(0)).getDefiningOp()->setAttr(name, value);
  };
  // The second stage of iteration i - 1 from its carried inputs.
  auto cloneLate = [&](Value acc, ValueRange cross, Value base) {
    IRMapping map;
    map.map(accArg, acc);
    for (auto [v, c] : llvm::zip(plan.cross, cross))
      map.map(v, c);
    mapChains(map, base, /*lateOnes=*/true);
    cloneAll(plan.remat, map);
    cloneAll(plan.late, map);
    return map;
  };
  Value wg = ring.pingPongWarpgroup;
  Value own = wg ? e.sub(wg, e.i32(1)) : Value();
  // Ping-pong: warpgroup 1 takes the first turn (warpgroup 2 arrives on its
  // barrier), then each turn waits for its own barrier and arrives on the
  // other's. The prologue's turn is opened here; the epilogue's turn of
  // warpgroup 2 hands nothing back (warpgroup 1 has no turn left), and
  // without iterations warpgroup 1 closes the opening.
  if (wg) {
    e.ifThen(e.eq(own, e.i32(1)), [&] { pingPongArrive(e, wg); });
    pingPongSync(e, wg);
  }

  SmallVector<Type> carriedTypes(loop.getResultTypes());
  SmallVector<Type> crossTypes;
  for (Value v : plan.cross)
    crossTypes.push_back(v.getType());
  SmallVector<Type> stateTypes(carriedTypes);
  stateTypes.append(crossTypes);
  Value ran = e.cmp(arith::CmpIPredicate::sgt, ring.trips, e.i32(0));

  // ---- prologue: the first stage of iteration 0 ----
  auto prologue = scf::IfOp::create(b, loc, stateTypes, ran, /*addThenBlock=*/true,
                                    /*addElseBlock=*/true);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&prologue.getThenRegion().front());
    IRMapping map;
    Value zero = e.i32(0);
    map.map(loop.getInductionVar(), ring.ivAt(zero));
    for (auto [arg, init] : llvm::zip(loop.getRegionIterArgs(), loop.getInitArgs()))
      map.map(arg, init);
    mapChains(map, ring.waitStage(zero), /*lateOnes=*/false);
    cloneAll(before, map);
    if (wg)
      setAttr(map, plan.first, kPingPongAttrName, b.getI32IntegerAttr(kPingPongArrive));
    cloneAll(after, map);
    SmallVector<Value> state;
    for (auto [j, v] : llvm::enumerate(yield.getOperands()))
      state.push_back(j == k ? loop.getInitArgs()[k] : map.lookupOrDefault(v));
    for (Value v : plan.cross)
      state.push_back(map.lookupOrDefault(v));
    scf::YieldOp::create(b, loc, state);

    b.setInsertionPointToStart(&prologue.getElseRegion().front());
    SmallVector<Value> none(loop.getInitArgs());
    for (Type t : crossTypes)
      none.push_back(arith::ConstantOp::create(b, loc, cast<TypedAttr>(b.getZeroAttr(t))));
    scf::YieldOp::create(b, loc, none);
  }

  // ---- iterations 1 .. n - 1 ----
  auto rotated = scf::ForOp::create(b, loc, e.i32(1), ring.trips, e.i32(1),
                                    prologue.getResults());
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(rotated.getBody());
    Value i = rotated.getInductionVar();
    ValueRange state = rotated.getRegionIterArgs();
    ValueRange carried = state.take_front(carriedTypes.size());
    ValueRange cross = state.drop_front(carriedTypes.size());
    IRMapping map;
    map.map(loop.getInductionVar(), ring.ivAt(i));
    for (auto [arg, c] : llvm::zip(loop.getRegionIterArgs(), carried))
      map.map(arg, c);
    mapChains(map, ring.waitStage(i), /*lateOnes=*/false);
    Value prev = e.sub(i, e.i32(1));
    cloneAll(before, map);
    setAttr(map, plan.first, kWgmmaWaitAttrName, b.getI64IntegerAttr(-1));
    if (wg)
      setAttr(map, plan.first, kPingPongAttrName, b.getI32IntegerAttr(kPingPongSync));
    IRMapping lateMap = cloneLate(carried[k], cross, ring.stageBase(prev));
    setAttr(lateMap, plan.second, kWgmmaWaitAttrName, b.getI64IntegerAttr(-1));
    if (wg)
      setAttr(lateMap, plan.second, kPingPongAttrName, b.getI32IntegerAttr(kPingPongArrive));
    auto s = tile::WgmmaWaitOp::create(b, loc, ValueRange{map.lookup(plan.first->getResult(0))},
                                       /*pending=*/1);
    map.map(plan.first->getResult(0), s.getResult(0));
    cloneAll(after, map);
    auto acc = tile::WgmmaWaitOp::create(
        b, loc, ValueRange{lateMap.lookup(plan.second->getResult(0))}, /*pending=*/0);
    ring.release(prev);
    SmallVector<Value> next;
    for (auto [j, v] : llvm::enumerate(yield.getOperands()))
      next.push_back(j == k ? acc.getResult(0) : map.lookupOrDefault(v));
    for (Value v : plan.cross)
      next.push_back(map.lookupOrDefault(v));
    scf::YieldOp::create(b, loc, next);
  }

  // ---- epilogue: the second stage of iteration n - 1 ----
  ValueRange results = rotated.getResults();
  auto epilogue = scf::IfOp::create(b, loc, TypeRange{carriedTypes[k]}, ran,
                                    /*addThenBlock=*/true, /*addElseBlock=*/true);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&epilogue.getThenRegion().front());
    Value last = e.sub(ring.trips, e.i32(1));
    IRMapping lateMap = cloneLate(results[k], results.drop_front(carriedTypes.size()),
                                  ring.stageBase(last));
    if (wg) {
      setAttr(lateMap, plan.second, kPingPongAttrName, b.getI32IntegerAttr(kPingPongSync));
      e.ifThen(e.eq(own, e.i32(0)), [&] { pingPongArrive(e, wg); });
    }
    ring.release(last);
    scf::YieldOp::create(b, loc, ValueRange{lateMap.lookup(plan.second->getResult(0))});
    b.setInsertionPointToStart(&epilogue.getElseRegion().front());
    scf::YieldOp::create(b, loc, ValueRange{results[k]});
  }
  if (wg)
    e.ifThen(arith::AndIOp::create(b, loc, e.eq(own, e.i32(0)), e.eq(ring.trips, e.i32(0))),
             [&] { pingPongArrive(e, wg); });

  for (auto [j, r] : llvm::enumerate(loop.getResults()))
    r.replaceAllUsesWith(j == k ? epilogue.getResult(0) : results[j]);
  loop.erase();
}
