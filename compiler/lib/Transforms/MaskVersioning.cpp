//===- MaskVersioning.cpp - masks applied only where they mask ------------===//
//
// See MaskVersioning.h. The bounds of an index tile (its smallest and
// largest element) are built as scalars before the `where`; a compare is
// true at every element when the bounds say so (x < y everywhere if
// max(x) < min(y)). That is exact for the compares of masks, whose sides
// vary along different dimensions (columns against rows, columns against a
// length), and only conservative (the mask stays) elsewhere.
//
//===----------------------------------------------------------------------===//

#include "tilec/Transforms/MaskVersioning.h"

#include "tilec/Dialect/Tile/IR/TileDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <optional>

using namespace mlir;
using namespace tilec;

namespace {

/// The smallest and the largest element of an integer tile.
struct Bounds {
  Value lo, hi;
};

/// Builds the bounds of index tiles, and "every element true" of masks, as
/// scalar ops before one op.
class MaskBounds {
public:
  MaskBounds(OpBuilder &b, Location loc) : b(b), loc(loc) {}

  /// Each value's bounds are built once (a mask's columns feed two
  /// compares).
  std::optional<Bounds> bounds(Value v) {
    auto it = memo.find(v);
    if (it != memo.end())
      return it->second;
    std::optional<Bounds> r = build(v);
    memo[v] = r;
    return r;
  }

  /// A scalar that is true only where every element of the mask `c` is
  /// true (it may be false where they all are: the mask then stays).
  std::optional<Value> allTrue(Value c);

private:
  std::optional<Bounds> build(Value v) {
    auto ty = dyn_cast<RankedTensorType>(v.getType());
    if (!ty || !isa<IntegerType>(ty.getElementType()))
      return std::nullopt;
    Type elt = ty.getElementType();
    if (auto splat = v.getDefiningOp<tile::SplatOp>())
      return Bounds{splat.getOperand(), splat.getOperand()};
    SplatElementsAttr cst;
    if (matchPattern(v, m_Constant(&cst))) {
      Value c = arith::ConstantOp::create(b, loc, elt, cst.getSplatValue<TypedAttr>());
      return Bounds{c, c};
    }
    Operation *op = v.getDefiningOp();
    if (!op)
      return std::nullopt;
    if (auto range = dyn_cast<tile::RangeOp>(op)) {
      int64_t n = ty.getDimSize(range.getIndexDim());
      if (n < 1)
        return std::nullopt;
      return Bounds{constant(elt, 0), constant(elt, n - 1)};
    }
    if (isa<tile::ReshapeOp, tile::BroadcastOp>(op))
      return bounds(op->getOperand(0));
    if (auto ext = dyn_cast<arith::ExtSIOp>(op)) {
      auto x = bounds(ext.getIn());
      if (!x)
        return std::nullopt;
      return Bounds{arith::ExtSIOp::create(b, loc, elt, x->lo),
                    arith::ExtSIOp::create(b, loc, elt, x->hi)};
    }
    if (isa<arith::AddIOp, arith::SubIOp>(op)) {
      auto x = bounds(op->getOperand(0)), y = bounds(op->getOperand(1));
      if (!x || !y)
        return std::nullopt;
      if (isa<arith::AddIOp>(op))
        return Bounds{arith::AddIOp::create(b, loc, x->lo, y->lo),
                      arith::AddIOp::create(b, loc, x->hi, y->hi)};
      return Bounds{arith::SubIOp::create(b, loc, x->lo, y->hi),
                    arith::SubIOp::create(b, loc, x->hi, y->lo)};
    }
    if (auto mul = dyn_cast<arith::MulIOp>(op)) {
      // Only by a constant, whose sign says which bound is which.
      for (int i = 0; i < 2; ++i) {
        APInt c;
        if (!matchPattern(mul->getOperand(i), m_ConstantInt(&c)))
          continue;
        auto x = bounds(mul->getOperand(1 - i));
        if (!x)
          return std::nullopt;
        Value k = constant(elt, c.getSExtValue());
        Value lo = arith::MulIOp::create(b, loc, x->lo, k);
        Value hi = arith::MulIOp::create(b, loc, x->hi, k);
        return c.isNegative() ? Bounds{hi, lo} : Bounds{lo, hi};
      }
    }
    return std::nullopt;
  }

  Value constant(Type elt, int64_t v) {
    return arith::ConstantOp::create(b, loc, elt, b.getIntegerAttr(elt, v));
  }

  OpBuilder &b;
  Location loc;
  DenseMap<Value, std::optional<Bounds>> memo;
};

std::optional<Value> MaskBounds::allTrue(Value c) {
  if (auto splat = c.getDefiningOp<tile::SplatOp>())
    return splat.getOperand();
  Operation *op = c.getDefiningOp();
  if (!op)
    return std::nullopt;
  if (isa<tile::ReshapeOp, tile::BroadcastOp>(op))
    return allTrue(op->getOperand(0));
  if (isa<arith::AndIOp>(op)) {
    auto x = allTrue(op->getOperand(0)), y = allTrue(op->getOperand(1));
    if (!x || !y)
      return std::nullopt;
    return arith::AndIOp::create(b, loc, *x, *y).getResult();
  }
  if (isa<arith::OrIOp>(op)) {
    // Every element of x || y is true where every element of x is, or
    // of y.
    auto x = allTrue(op->getOperand(0)), y = allTrue(op->getOperand(1));
    if (x && y)
      return arith::OrIOp::create(b, loc, *x, *y).getResult();
    return x ? x : y;
  }
  auto cmp = dyn_cast<arith::CmpIOp>(op);
  if (!cmp)
    return std::nullopt;
  arith::CmpIPredicate pred = cmp.getPredicate();
  using P = arith::CmpIPredicate;
  if (pred != P::slt && pred != P::sle && pred != P::sgt && pred != P::sge)
    return std::nullopt;
  auto x = bounds(cmp.getLhs()), y = bounds(cmp.getRhs());
  if (!x || !y)
    return std::nullopt;
  // x < y everywhere: max(x) < min(y); x > y everywhere: min(x) > max(y).
  // (Written as max(x) + 1 <= min(y), the form of a hand-written
  // `(j + 1) * BN <= sk`, it was no faster: docs/performance.md, session 55.)
  bool below = pred == P::slt || pred == P::sle;
  return arith::CmpIOp::create(b, loc, pred, below ? x->hi : x->lo, below ? y->lo : y->hi)
      .getResult();
}

/// Whether `v` is computed from the loop's index within its body.
bool dependsOnIndex(Value v, scf::ForOp loop) {
  SmallVector<Value> work{v};
  DenseSet<Value> seen;
  while (!work.empty()) {
    Value x = work.pop_back_val();
    if (x == loop.getInductionVar())
      return true;
    Operation *op = x.getDefiningOp();
    if (!op || op->getParentOp() != loop || !seen.insert(x).second)
      continue;
    llvm::append_range(work, op->getOperands());
  }
  return false;
}

/// s = if (!all(cond)) { where(cond, a, x) } else { a }, with the ops only
/// the mask reads moved into its branch.
void versionSelect(arith::SelectOp select, scf::ForOp loop) {
  OpBuilder b(select);
  Location loc = select.getLoc();
  MaskBounds mb(b, loc);
  // A failed attempt leaves scalar ops behind; they are dead and pure and
  // the canonicalizer after the pipeline removes them, but keep the IR
  // clean: build into a scratch block first.
  Block scratch;
  b.setInsertionPointToStart(&scratch);
  std::optional<Value> all = mb.allTrue(select.getCondition());
  if (!all) {
    while (!scratch.empty())
      scratch.back().erase();
    return;
  }
  b.setInsertionPoint(select);
  for (Operation &op : llvm::make_early_inc_range(scratch))
    op.moveBefore(select);
  Value one = arith::ConstantOp::create(b, loc, b.getI1Type(), b.getBoolAttr(true));
  Value masks = arith::XOrIOp::create(b, loc, *all, one);
  auto ifOp = scf::IfOp::create(b, loc, TypeRange{select.getType()}, masks,
                                /*addThenBlock=*/true, /*addElseBlock=*/true);
  select.getResult().replaceAllUsesWith(ifOp.getResult(0));
  select->moveBefore(ifOp.thenBlock(), ifOp.thenBlock()->end());
  b.setInsertionPointToEnd(ifOp.thenBlock());
  scf::YieldOp::create(b, loc, select.getResult());
  b.setInsertionPointToEnd(ifOp.elseBlock());
  scf::YieldOp::create(b, loc, select.getTrueValue());
  // Sink what only the mask reads (its index arithmetic, compares, the
  // fill value) into its branch, last first so each op's users are there.
  // In program order, as a hand-written branch holds them: MLIR's
  // controlFlowSink moves the same ops but reorders them (the causal
  // obvious-form kernel's PTX then differs in 654 lines).
  Block *body = loop.getBody();
  SmallVector<Operation *> before;
  for (Operation &op : *body) {
    if (&op == ifOp)
      break;
    before.push_back(&op);
  }
  Region &then = ifOp.getThenRegion();
  for (Operation *op : llvm::reverse(before)) {
    if (op->getNumRegions() || !isPure(op) || op->use_empty())
      continue;
    if (llvm::all_of(op->getUsers(), [&](Operation *user) {
          return then.isAncestor(user->getParentRegion());
        }))
      op->moveBefore(&ifOp.thenBlock()->front());
  }
}

} // namespace

void tilec::versionMasks(func::FuncOp func) {
  SmallVector<std::pair<arith::SelectOp, scf::ForOp>> selects;
  func.walk([&](scf::ForOp loop) {
    bool hasMma = false;
    loop.getBody()->walk([&](tile::MmaOp) { hasMma = true; });
    if (!hasMma)
      return;
    for (Operation &op : *loop.getBody())
      if (auto select = dyn_cast<arith::SelectOp>(op))
        if (isa<RankedTensorType>(select.getCondition().getType()) &&
            dependsOnIndex(select.getCondition(), loop))
          selects.push_back({select, loop});
  });
  for (auto [select, loop] : selects)
    versionSelect(select, loop);
}
