//===- AccumulatorColumns.cpp - which tiles hold an accumulator's columns -===//
//
// See AccumulatorColumns.h.
//
//===----------------------------------------------------------------------===//

#include "tilec/Transforms/AccumulatorColumns.h"

#include "tilec/Dialect/Tile/IR/TileDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <functional>

using namespace mlir;

tilec::EncodingClasses::EncodingClasses(func::FuncOp func,
                                 function_ref<bool(tile::ReshapeOp)> reshapeUnites) {
  auto uniteAll = [&](ValueRange values) {
    for (Value v : values)
      unite(values.front(), v);
  };
  func.walk([&](Operation *op) {
    if (auto reshape = dyn_cast<tile::ReshapeOp>(op)) {
      if (reshapeUnites(reshape))
        unite(reshape.getTile(), reshape.getResult());
      return;
    }
    if (isa<arith::ArithDialect, math::MathDialect>(op->getDialect())) {
      SmallVector<Value> tiles(op->getOperands());
      llvm::append_range(tiles, op->getResults());
      uniteAll(tiles);
      return;
    }
    if (auto loop = dyn_cast<scf::ForOp>(op)) {
      auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
      for (auto [i, init] : llvm::enumerate(loop.getInitArgs())) {
        unite(init, loop.getRegionIterArgs()[i]);
        unite(init, loop.getResult(i));
        unite(init, yield.getOperand(i));
      }
      return;
    }
    if (auto branch = dyn_cast<scf::IfOp>(op)) {
      for (Region *region : {&branch.getThenRegion(), &branch.getElseRegion()})
        if (!region->empty())
          for (auto [i, v] : llvm::enumerate(region->front().getTerminator()->getOperands()))
            unite(branch.getResult(i), v);
    }
  });
}

Value tilec::EncodingClasses::find(Value v) {
  auto it = parent.find(v);
  if (it == parent.end() || it->second == v)
    return v;
  Value root = find(it->second);
  parent[v] = root;
  return root;
}

void tilec::EncodingClasses::unite(Value a, Value b) {
  if (!isa<RankedTensorType>(a.getType()) || !isa<RankedTensorType>(b.getType()))
    return;
  parent.try_emplace(a, a);
  parent.try_emplace(b, b);
  Value ra = find(a), rb = find(b);
  if (ra != rb)
    parent[ra] = rb;
}

SmallVector<Value> tilec::EncodingClasses::members(Value root) {
  SmallVector<Value> keys, result;
  for (auto &entry : parent)
    keys.push_back(entry.first);
  for (Value v : keys)
    if (find(v) == root)
      result.push_back(v);
  if (result.empty())
    result.push_back(root);
  return result;
}

FailureOr<DenseSet<Value>> tilec::findAccumulatorColumns(func::FuncOp func, int64_t accRows) {
  auto columnShaped = [](RankedTensorType t) {
    return t.getRank() == 1 || (t.getRank() == 2 && t.getDimSize(0) == 1);
  };
  SmallVector<Value> reductions;
  SmallVector<tile::ReduceOp> rowReductions;
  func.walk([&](tile::ReduceOp reduce) {
    RankedTensorType from = reduce.getTile().getType();
    if (reduce.getAxis() && from.getRank() == 2 && from.getDimSize(0) == accRows) {
      if (*reduce.getAxis() == 0)
        reductions.push_back(reduce->getResult(0));
      else
        rowReductions.push_back(reduce);
    }
  });
  EncodingClasses classes(func, [&](tile::ReshapeOp reshape) {
    return columnShaped(reshape.getTile().getType()) && columnShaped(reshape.getType());
  });
  auto find = [&](Value v) { return classes.find(v); };
  DenseSet<Value> roots, columns;
  for (Value r : reductions)
    roots.insert(find(r));
  if (roots.empty())
    return columns;
  // Row values and column values live on different threads.
  for (tile::ReduceOp r : rowReductions)
    if (roots.contains(find(r.getResult()))) {
      tile::emitUserError(r)
             << "this reduction over the accumulator's columns (axis = 1) meets one over its "
                "rows (axis = 0) in elementwise work or a loop; combining row and column "
                "values of an accumulator is not supported";
      return failure();
    }
  // Column values stay column values: [N] and [1, N] only.
  WalkResult reshapes = func.walk([&](tile::ReshapeOp reshape) {
    if (!roots.contains(find(reshape.getTile())) || roots.contains(find(reshape.getResult())))
      return WalkResult::advance();
    tile::emitUserError(reshape)
        << "a tile of column values (a reduction over the accumulator's rows, axis = 0) can be "
           "reshaped to [1, N] (expand_dims(.., 0)) to store it or broadcast it over the rows, "
           "not to a tile of shape "
        << tile::shapeText(reshape.getType().getShape());
    return WalkResult::interrupt();
  });
  if (reshapes.wasInterrupted())
    return failure();
  for (Value root : roots)
    for (Value v : classes.members(root))
      columns.insert(v);
  return columns;
}
