//===- TileDialect.cpp - The tile dialect ---------------------------------===//
//
// Registration of the tile dialect and the verifiers of its types and ops.
// Verifier messages are written for people reading `tile-opt` output; the
// frontend checks user programs before any of these can fire.
//
//===----------------------------------------------------------------------===//

#include "tilec/Dialect/Tile/IR/TileDialect.h"

#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace tilec::tile;

#include "tilec/Dialect/Tile/IR/TileOpsDialect.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "tilec/Dialect/Tile/IR/TileOpsTypes.cpp.inc"

#define GET_OP_CLASSES
#include "tilec/Dialect/Tile/IR/TileOps.cpp.inc"

void TileDialect::initialize() {
  registerAttributes();
  addTypes<
#define GET_TYPEDEF_LIST
#include "tilec/Dialect/Tile/IR/TileOpsTypes.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "tilec/Dialect/Tile/IR/TileOps.cpp.inc"
      >();
}

LogicalResult ViewType::verify(function_ref<InFlightDiagnostic()> emitError,
                               Type elementType, unsigned rank) {
  if (!elementType.isIntOrFloat())
    return emitError() << "view element type must be an integer or float, got "
                       << elementType;
  if (rank < 1 || rank > 4)
    return emitError() << "view rank must be between 1 and 4, got " << rank;
  return success();
}

static LogicalResult verifyGridDim(Operation *op, int32_t dim) {
  if (dim < 0 || dim > 2)
    return op->emitOpError() << "grid dimension must be 0, 1 or 2, got " << dim;
  return success();
}

LogicalResult BlockIdOp::verify() { return verifyGridDim(*this, getDim()); }
LogicalResult NumBlocksOp::verify() { return verifyGridDim(*this, getDim()); }

LogicalResult MakeViewOp::verify() {
  unsigned rank = getType().getRank();
  if (getSizes().size() != rank || getStrides().size() != rank)
    return emitOpError() << "a view of rank " << rank << " needs " << rank
                         << " sizes and " << rank << " strides, got "
                         << getSizes().size() << " and "
                         << getStrides().size();
  if (!getOffsets().empty() && getOffsets().size() != rank)
    return emitOpError() << "a part of a view of rank " << rank << " needs " << rank
                         << " offsets, got " << getOffsets().size();
  return success();
}

static LogicalResult verifyViewDim(Operation *op, ViewType view, int32_t dim) {
  if (dim < 0 || static_cast<unsigned>(dim) >= view.getRank())
    return op->emitOpError() << "dimension " << dim
                             << " is out of range for a view of rank "
                             << view.getRank();
  return success();
}

LogicalResult ViewDimOp::verify() {
  return verifyViewDim(*this, getView().getType(), getDim());
}

LogicalResult ViewStrideOp::verify() {
  return verifyViewDim(*this, getView().getType(), getDim());
}

LogicalResult SplatOp::verify() {
  if (getValue().getType() != getType().getElementType())
    return emitOpError() << "splat of " << getValue().getType()
                         << " cannot produce a tile of "
                         << getType().getElementType();
  return success();
}

/// Checks what load and store share: one index per view dimension, a tile of
/// the view's rank and element type, and a static, non-empty tile shape.
static LogicalResult verifyTileAccess(Operation *op, ViewType view,
                                      size_t numIndices, RankedTensorType tile) {
  if (numIndices != view.getRank())
    return op->emitOpError() << "needs " << view.getRank()
                             << " tile indices for a view of rank "
                             << view.getRank() << ", got " << numIndices;
  if (tile.getRank() != static_cast<int64_t>(view.getRank()))
    return op->emitOpError() << "tile rank " << tile.getRank()
                             << " does not match the view rank "
                             << view.getRank();
  if (tile.getElementType() != view.getElementType())
    return op->emitOpError() << "tile element type " << tile.getElementType()
                             << " does not match the view element type "
                             << view.getElementType();
  for (int64_t d : tile.getShape())
    if (ShapedType::isDynamic(d) || d <= 0)
      return op->emitOpError() << "tile shape must be static and positive";
  return success();
}

LogicalResult LoadOp::verify() {
  if (failed(verifyTileAccess(*this, getView().getType(), getIndices().size(),
                              getType())))
    return failure();
  if (auto pad = getPaddingAttr())
    if (pad.getType() != getType().getElementType())
      return emitOpError() << "padding of type " << pad.getType()
                           << " does not match the tile element type "
                           << getType().getElementType();
  return success();
}

LogicalResult LoadScalarOp::verify() {
  ViewType view = getView().getType();
  if (getIndices().size() != view.getRank())
    return emitOpError() << "a view of rank " << view.getRank() << " needs " << view.getRank()
                         << " indices, got " << getIndices().size();
  if (getType() != view.getElementType())
    return emitOpError() << "result type " << getType() << " does not match the view's element type "
                         << view.getElementType();
  return success();
}

LogicalResult StoreOp::verify() {
  return verifyTileAccess(*this, getView().getType(), getIndices().size(),
                          getValue().getType());
}

LogicalResult RangeOp::verify() {
  if (!getType().hasStaticShape() || getType().getNumElements() <= 0)
    return emitOpError() << "needs a static, non-empty shape";
  if (getIndexDim() < 0 || getIndexDim() >= getType().getRank())
    return emitOpError() << "dim " << getIndexDim() << " is not a dimension of "
                         << getType();
  return success();
}

/// A combiner region: one block of two `elem` arguments ending in a
/// tile.yield of an `elem` value.
static LogicalResult verifyCombiner(Operation *op, Region &region, Type elem) {
  if (!region.hasOneBlock())
    return op->emitOpError() << "the combiner must be one block";
  Block &block = region.front();
  if (block.getNumArguments() != 2 || block.getArgument(0).getType() != elem ||
      block.getArgument(1).getType() != elem)
    return op->emitOpError() << "the combiner takes two " << elem << " arguments";
  auto yield = dyn_cast<YieldOp>(block.getTerminator());
  if (!yield || yield.getValue().getType() != elem)
    return op->emitOpError() << "the combiner must yield a " << elem;
  return success();
}

LogicalResult ReduceOp::verify() {
  StringRef kind = getKind();
  bool arg = kind == "argmax" || kind == "argmin";
  bool user = kind == "fn";
  if (kind != "sum" && kind != "max" && kind != "min" && kind != "prod" && !arg && !user)
    return emitOpError() << "kind must be sum, max, min, prod, argmax, argmin or fn, got '"
                         << kind << "'";
  Type elem = getTile().getType().getElementType();
  if (user != !getCombiner().empty())
    return emitOpError() << "a combiner region goes with kind \"fn\" only";
  if (user && failed(verifyCombiner(*this, getCombiner(), elem)))
    return failure();
  bool supported = user || elem.isF32() || elem.isF16() || elem.isBF16() || elem.isInteger(32);
  if (auto axis = getAxis()) {
    auto from = getTile().getType();
    if (*axis < 0 || int64_t(*axis) >= from.getRank())
      return emitOpError() << "axis " << *axis << " out of range";
    SmallVector<int64_t> dims(from.getShape());
    dims.erase(dims.begin() + *axis);
    auto result = dyn_cast<RankedTensorType>(getType());
    if (!result || result.getShape() != ArrayRef<int64_t>(dims) ||
        result.getElementType() != (arg ? IntegerType::get(getContext(), 32) : elem))
      return emitOpError() << "result must be the tile without dimension " << *axis
                           << (arg ? ", of i32 indices" : "");
    if (!supported)
      return emitOpError() << "reductions of " << elem << " are not supported";
    return success();
  }
  if (isa<RankedTensorType>(getType()))
    return emitOpError() << "a reduction of the whole tile gives a scalar";
  if (arg && !getType().isInteger(32))
    return emitOpError() << kind << " gives the i32 flat index, not " << getType();
  if (!arg && getType() != elem)
    return emitOpError() << "result type " << getType()
                         << " does not match the tile element type " << elem;
  if (!supported)
    return emitOpError() << "reductions of " << elem << " are not supported";
  return success();
}

LogicalResult SharedTileOp::verify() {
  auto t = getType();
  if (!isa_and_nonnull<SharedEncodingAttr>(t.getEncoding()) || t.getRank() != 2)
    return emitOpError() << "gives a 2-D tile in a #tile.shared encoding, not " << t;
  return success();
}

LogicalResult SharedCopyOp::verify() {
  RankedTensorType from = getTile().getType(), to = getType();
  auto shared = dyn_cast_or_null<SharedEncodingAttr>(to.getEncoding());
  if (!shared || from.getRank() != 2 || to.getRank() != 2)
    return emitOpError() << "copies a 2-D tile to a 2-D tile in a #tile.shared encoding, not "
                         << from << " to " << to;
  bool transposed = shared.getOrder()[0] == 0;
  ArrayRef<int64_t> f = from.getShape(), t = to.getShape();
  if (from.getElementType() != to.getElementType() ||
      (transposed ? (f[0] != t[1] || f[1] != t[0]) : f != t))
    return emitOpError() << "result " << to << " is not " << (transposed ? "the transpose of " : "")
                         << from;
  if (getOffset() < 0 || getOffset() % 1024 != 0)
    return emitOpError() << "offset must be a non-negative multiple of 1024 (the swizzle's "
                            "period), got "
                         << getOffset();
  return success();
}

LogicalResult WgmmaWaitOp::verify() {
  if (getPendingAttr().getInt() < 0)
    return emitOpError() << "pending must be 0 or more, got " << getPendingAttr().getInt();
  if (getTiles().empty())
    return emitOpError() << "waits for at least one tile";
  for (auto [in, out] : llvm::zip(getTiles(), getResults()))
    if (in.getType() != out.getType())
      return emitOpError() << "result type " << out.getType() << " is not its operand's "
                           << in.getType();
  return success();
}

LogicalResult ConvertLayoutOp::verify() {
  auto from = getTile().getType();
  auto to = getType();
  if (from.getShape() != to.getShape() || from.getElementType() != to.getElementType())
    return emitOpError() << "changes only the encoding: " << from << " and " << to
                         << " differ in shape or element type";
  return success();
}

OpFoldResult ConvertLayoutOp::fold(FoldAdaptor) {
  // convert(convert(x)) converts x once: a chain of conversions collapses,
  // and one back to x's own encoding disappears.
  bool changed = false;
  while (auto inner = getTile().getDefiningOp<ConvertLayoutOp>()) {
    getTileMutable().assign(inner.getTile());
    changed = true;
  }
  if (getTile().getType() == getType())
    return getTile();
  return changed ? getResult() : OpFoldResult();
}

LogicalResult ReshapeOp::verify() {
  auto from = getTile().getType();
  auto to = getType();
  if (from.getElementType() != to.getElementType())
    return emitOpError() << "cannot change the element type";
  if (from.getNumElements() != to.getNumElements())
    return emitOpError() << "cannot reshape " << from.getNumElements()
                         << " elements into " << to.getNumElements();
  return success();
}

/// numpy broadcasting of `from` to `to`, shared by broadcast and
/// broadcast_load.
static LogicalResult verifyBroadcastShape(Operation *op, RankedTensorType from,
                                          RankedTensorType to) {
  if (from.getRank() > to.getRank())
    return op->emitOpError() << "cannot broadcast rank " << from.getRank()
                             << " to the lower rank " << to.getRank();
  int64_t lead = to.getRank() - from.getRank();
  for (int64_t d = 0; d < from.getRank(); ++d) {
    int64_t f = from.getDimSize(d), t = to.getDimSize(d + lead);
    if (f != t && f != 1)
      return op->emitOpError() << "dimension " << d << " of size " << f
                               << " cannot broadcast to " << t;
  }
  return success();
}

LogicalResult BroadcastOp::verify() {
  if (getTile().getType().getElementType() != getType().getElementType())
    return emitOpError() << "cannot change the element type";
  // Row (or column) values broadcast back over the tile they were reduced
  // from: to the slice's parent, over rows of the slice's length.
  if (auto slice = dyn_cast_or_null<SliceEncodingAttr>(getTile().getType().getEncoding());
      slice && getType().getEncoding()) {
    if (getType().getEncoding() != slice.getParent())
      return emitOpError() << "a tile of row (or column) values broadcasts to its slice's "
                              "parent encoding only";
    if (isa<BlockedEncodingAttr>(slice.getParent()) &&
        getType().getShape().back() != slice.getSize())
      return emitOpError() << "a column of row values broadcasts over rows of its slice's "
                              "length "
                           << slice.getSize() << " only";
  }
  return verifyBroadcastShape(*this, getTile().getType(), getType());
}

LogicalResult MmaOp::verify() {
  auto a = getA().getType(), b = getB().getType(), c = getAcc().getType();
  if (a.getRank() != 2 || b.getRank() != 2 || c.getRank() != 2)
    return emitOpError() << "operands must be 2-D tiles";
  if (a.getDimSize(1) != b.getDimSize(0))
    return emitOpError() << "inner dimensions differ: " << a.getDimSize(1)
                         << " vs " << b.getDimSize(0);
  if (c.getDimSize(0) != a.getDimSize(0) || c.getDimSize(1) != b.getDimSize(1))
    return emitOpError() << "accumulator shape does not match the product";
  if (a.getElementType() != b.getElementType() &&
      !(isFloat8(a.getElementType()) && isFloat8(b.getElementType())))
    return emitOpError() << "a and b must have the same element type (or both be f8)";
  Type e = a.getElementType();
  if (!(e.isF16() || e.isBF16() || e.isF32() || isFloat8(e)))
    return emitOpError() << "operands must be f16, bf16, f32, f8E4M3FN or f8E5M2";
  if (!c.getElementType().isF32())
    return emitOpError() << "the accumulator must be f32";
  if (getTf32() && !e.isF32())
    return emitOpError() << "tf32 needs f32 operands";
  if (getPred() && e.isF32())
    return emitOpError() << "a predicated mma needs f16, bf16 or f8 operands (the tensor-core "
                            "pipeline's)";
  if (getType() != c)
    return emitOpError() << "result type must be the accumulator type";
  return success();
}

LogicalResult BroadcastLoadOp::verify() {
  auto src = RankedTensorType::get(getSrcShape(), getType().getElementType());
  if (failed(verifyTileAccess(*this, getView().getType(), getIndices().size(), src)))
    return failure();
  return verifyBroadcastShape(*this, src, getType());
}

DotOperandEncodingAttr tilec::tile::freeDotOperandA(RankedTensorType acc) {
  auto mma = dyn_cast_or_null<MmaEncodingAttr>(acc.getEncoding());
  if (!mma || mma.getKind() == MmaKind::fma || acc.getRank() != 2 ||
      acc.getElementType().getIntOrFloatBitWidth() != 16)
    return {};
  return DotOperandEncodingAttr::get(acc.getContext(), 0, mma, 2);
}

bool tilec::tile::isRelabelling(ConvertLayoutOp op) {
  auto dot = freeDotOperandA(op.getTile().getType());
  return dot && dot == op.getType().getEncoding();
}

bool tilec::tile::readsStage(ConvertLayoutOp op) {
  return isa_and_nonnull<SharedEncodingAttr>(op.getTile().getType().getEncoding());
}

FileLineColLoc tilec::tile::sourcePosition(Location loc) {
  FileLineColLoc found;
  loc->walk([&](Location inner) {
    if (auto fl = dyn_cast<FileLineColLoc>(inner); fl && !fl.getFilename().getValue().starts_with("<"))
      found = fl;
    return found ? WalkResult::interrupt() : WalkResult::advance();
  });
  return found;
}

Location tilec::tile::userLocation(Operation *op) {
  SmallVector<Operation *> work{op};
  DenseSet<Operation *> seen;
  while (!work.empty()) {
    Operation *o = work.pop_back_val();
    if (!seen.insert(o).second)
      continue;
    if (sourcePosition(o->getLoc()))
      return o->getLoc();
    for (Operation *user : o->getUsers())
      work.push_back(user);
  }
  return op->getLoc();
}

MakeViewOp tilec::tile::parameterView(MakeViewOp view) {
  auto param = view->getAttrOfType<IntegerAttr>(kParamIndexAttrName);
  if (view.getOffsets().empty() || !param)
    return view;
  auto func = view->getParentOfType<FunctionOpInterface>();
  if (!func)
    return MakeViewOp();
  for (auto mk : func.getFunctionBody().front().getOps<MakeViewOp>())
    if (mk.getOffsets().empty() && mk->getAttr(kParamIndexAttrName) == param)
      return mk;
  return MakeViewOp();
}

bool tilec::tile::slicesWholeColumns(SliceOp op) {
  RankedTensorType from = op.getTile().getType(), to = op.getType();
  ArrayRef<int64_t> offsets = op.getOffsets();
  return from.getRank() == 2 && to.getDimSize(0) == from.getDimSize(0) && offsets[0] == 0 &&
         offsets[1] % 8 == 0 && to.getDimSize(1) % 8 == 0;
}

bool tilec::tile::WarpRelayout::isRegisterLocal() const {
  for (int i = 0; i < 5; ++i)
    if (laneCols[i] != 1 << i || regCols[i])
      return false;
  return llvm::all_of(lane, [](int32_t l) { return l == 0; });
}

SmallVector<int32_t> tilec::tile::WarpRelayout::regChoices() const {
  SmallVector<int32_t> choices;
  for (int32_t l = 0; l < 32; ++l) {
    int32_t k = 0;
    for (int i = 0; i < 5; ++i)
      if (l >> i & 1)
        k ^= regCols[i];
    choices.push_back(k);
  }
  llvm::sort(choices);
  choices.erase(std::unique(choices.begin(), choices.end()), choices.end());
  return choices;
}

namespace {
/// Fits `out = c ^ (XOR of col_i over the set bits i of lane)` over GF(2) to
/// the (lane, out) pairs added; lanes that add nothing are free (their bits
/// evaluate as 0).
class LaneAffineFit {
public:
  /// Adds a pair; false if it contradicts the earlier ones.
  bool add(unsigned lane, int64_t out) {
    unsigned in = lane | 32u; // bit 5: the constant term
    for (int bit = 5; bit >= 0; --bit) {
      if (!(in >> bit & 1))
        continue;
      if (!basis[bit]) {
        basis[bit] = {in, out};
        return true;
      }
      in ^= basis[bit]->first;
      out ^= basis[bit]->second;
    }
    return out == 0;
  }
  bool empty() const {
    return llvm::none_of(basis, [](auto &b) { return b.has_value(); });
  }
  /// c (lane = -1) or col_i (lane = i).
  int64_t term(int lane) const {
    int64_t c = eval(32u);
    return lane < 0 ? c : eval(32u | 1u << lane) ^ c;
  }

private:
  int64_t eval(unsigned in) const {
    int64_t out = 0;
    for (int bit = 5; bit >= 0; --bit) {
      if (!(in >> bit & 1))
        continue;
      if (basis[bit]) {
        in ^= basis[bit]->first;
        out ^= basis[bit]->second;
      } else {
        in ^= 1u << bit;
      }
    }
    return out;
  }
  std::array<std::optional<std::pair<unsigned, int64_t>>, 6> basis;
};
} // namespace

std::optional<WarpRelayout> tilec::tile::warpRelayout(Operation *op) {
  if (!isa<BroadcastOp, ConvertLayoutOp, PermuteOp, SliceOp>(op))
    return std::nullopt;
  auto fromTy = cast<RankedTensorType>(op->getOperand(0).getType());
  auto toTy = cast<RankedTensorType>(op->getResult(0).getType());
  auto src = dyn_cast_or_null<DistributedEncodingAttr>(fromTy.getEncoding());
  auto dst = dyn_cast_or_null<DistributedEncodingAttr>(toTy.getEncoding());
  if (!src || !dst || src.getThreadsPerBlock() != dst.getThreadsPerBlock())
    return std::nullopt;
  ArrayRef<int64_t> from = fromTy.getShape(), to = toTy.getShape();
  int64_t fromNumel = fromTy.getNumElements(), toNumel = toTy.getNumElements();
  // The source's flat index of the result's flat index `flat`.
  SmallVector<int64_t> toStrides = computeStrides(to), fromStrides = computeStrides(from);
  SmallVector<int64_t> sc(from.size());
  auto sourceFlat = [&](int64_t flat) {
    SmallVector<int64_t> c = delinearize(flat, toStrides);
    if (isa<BroadcastOp>(op)) {
      // Source dimensions align at the innermost; size 1 broadcasts.
      size_t lead = to.size() - from.size();
      for (size_t d = 0; d < from.size(); ++d)
        sc[d] = from[d] == 1 ? 0 : c[d + lead];
    } else if (auto permute = dyn_cast<PermuteOp>(op)) {
      for (auto [d, p] : llvm::enumerate(permute.getPermutation()))
        sc[size_t(p)] = c[d];
    } else if (auto slice = dyn_cast<SliceOp>(op)) {
      for (auto [d, o] : llvm::enumerate(slice.getOffsets()))
        sc[d] = c[d] + o;
    } else {
      sc.assign(c.begin(), c.end());
    }
    return linearize(sc, fromStrides);
  };
  unsigned threads = src.getThreadsPerBlock();
  int64_t srcWidth = src.getGroupWidth(), dstWidth = dst.getGroupWidth();
  int64_t srcGroups = src.getGroups(from), dstGroups = dst.getGroups(to);
  int64_t srcRegs = srcGroups * srcWidth, dstRegs = dstGroups * dstWidth;
  // Calls fn(source flat index, register) for every element thread t holds.
  auto forEachSource = [&](unsigned t, llvm::function_ref<void(int64_t, int64_t)> fn) {
    for (int64_t g = 0; g < srcGroups; ++g) {
      int64_t base = src.getGroupBase(from, t, g);
      for (int64_t v = 0; v < srcWidth; ++v)
        if (base + v < fromNumel)
          fn(base + v, g * srcWidth + v);
    }
  };
  // Calls fn(t, m, source flat index) for every element of every thread's
  // result, stopping at the first false.
  auto forEachResult = [&](llvm::function_ref<bool(unsigned, int64_t, int64_t)> fn) {
    for (unsigned t = 0; t < threads; ++t)
      for (int64_t g = 0; g < dstGroups; ++g) {
        int64_t base = dst.getGroupBase(to, t, g);
        for (int64_t v = 0; v < dstWidth; ++v)
          if (base + v < toNumel && !fn(t, g * dstWidth + v, sourceFlat(base + v)))
            return false;
      }
    return true;
  };

  // Register-local: every thread holds its result's elements, at the same
  // registers in every thread.
  WarpRelayout plan;
  plan.reg.assign(dstRegs, -1);
  plan.lane.assign(dstRegs, 0);
  for (int i = 0; i < 5; ++i)
    plan.laneCols[i] = 1 << i;
  DenseMap<int64_t, int64_t> held; // source flat index -> this thread's register
  unsigned heldBy = threads;
  bool local = forEachResult([&](unsigned t, int64_t m, int64_t flat) {
    if (heldBy != t) {
      held.clear();
      forEachSource(t, [&](int64_t flat, int64_t reg) { held.try_emplace(flat, reg); });
      heldBy = t;
    }
    auto it = held.find(flat);
    if (it == held.end() || (plan.reg[m] >= 0 && plan.reg[m] != it->second))
      return false;
    plan.reg[m] = it->second;
    return true;
  });
  if (local)
    return plan;

  // Within warps: the lowest lane of the thread's warp that holds the
  // element, fitted per result register as a GF(2)-affine map of the lane.
  if (threads % 32)
    return std::nullopt;
  unsigned warps = threads / 32;
  std::vector<int64_t> holder(size_t(fromNumel) * warps, -1); // lane << 32 | register
  for (unsigned t = 0; t < threads; ++t)
    forEachSource(t, [&](int64_t flat, int64_t reg) {
      int64_t &h = holder[size_t(flat) * warps + t / 32];
      if (h < 0)
        h = int64_t(t % 32) << 32 | reg;
    });
  SmallVector<LaneAffineFit> fits(dstRegs);
  bool fitted = forEachResult([&](unsigned t, int64_t m, int64_t flat) {
    int64_t h = holder[size_t(flat) * warps + t / 32];
    // The source register above the lane's 5 bits.
    return h >= 0 && fits[m].add(t % 32, (h & 0xffffffff) << 5 | h >> 32);
  });
  if (!fitted)
    return std::nullopt;
  std::optional<std::array<int64_t, 5>> cols;
  for (int64_t m = 0; m < dstRegs; ++m) {
    if (fits[m].empty()) {
      plan.reg[m] = -1;
      continue;
    }
    std::array<int64_t, 5> mine;
    for (int i = 0; i < 5; ++i)
      mine[i] = fits[m].term(i);
    // One map of the lanes for every register.
    if (cols && *cols != mine)
      return std::nullopt;
    cols = mine;
    int64_t c0 = fits[m].term(-1);
    plan.lane[m] = int32_t(c0 & 31);
    plan.reg[m] = c0 >> 5;
  }
  if (!cols)
    return std::nullopt;
  for (int i = 0; i < 5; ++i) {
    plan.laneCols[i] = int32_t((*cols)[i] & 31);
    plan.regCols[i] = int32_t((*cols)[i] >> 5);
  }
  int64_t used = llvm::count_if(plan.reg, [](int64_t r) { return r >= 0; });
  if (used * int64_t(plan.regChoices().size()) > srcRegs + dstRegs)
    return std::nullopt;
  for (int64_t m = 0; m < dstRegs; ++m)
    if (plan.reg[m] >= srcRegs)
      return std::nullopt;
  return plan;
}

bool tilec::tile::reshapedToRows(Value tile) {
  auto t = cast<RankedTensorType>(tile.getType());
  int64_t rows = t.getShape().back();
  return !tile.use_empty() && llvm::all_of(tile.getUsers(), [&](Operation *user) {
    auto reshape = dyn_cast<ReshapeOp>(user);
    ArrayRef<int64_t> to = reshape ? reshape.getType().getShape() : ArrayRef<int64_t>();
    return reshape && !to.empty() && to[0] == rows && (to.size() == 1 || (to.size() == 2 && to[1] == 1));
  });
}

PermuteOp tilec::tile::transposeOf(Value v) {
  auto permute = v.getDefiningOp<PermuteOp>();
  ArrayRef<int64_t> perm = permute ? permute.getPermutation() : ArrayRef<int64_t>();
  return perm.size() == 2 && perm[0] == 1 && perm[1] == 0 ? permute : PermuteOp();
}

/// The a or b operand of an mma that `use` is, directly or through a
/// transpose whose only use it is; null for any other use (the
/// accumulator among them).
static OpOperand *mmaOperandUse(OpOperand &use) {
  OpOperand *at = &use;
  if (Operation *user = use.getOwner(); isa<PermuteOp>(user) && user->hasOneUse())
    at = &*user->getUses().begin();
  return isa<MmaOp>(at->getOwner()) && at->getOperandNumber() < 2 ? at : nullptr;
}

int tilec::tile::mmaOperandPlace(OpOperand &use) {
  OpOperand *at = mmaOperandUse(use);
  return at ? int(at->getOperandNumber()) : -1;
}

MmaOp tilec::tile::mmaOfOperand(OpOperand &use) {
  OpOperand *at = mmaOperandUse(use);
  return at ? cast<MmaOp>(at->getOwner()) : MmaOp();
}

/// Whether every use of `tile` is an mma operand, directly or through a
/// transpose that feeds only an mma.
static bool feedsOnlyMmas(Value tile) {
  return llvm::all_of(tile.getUses(), [](OpOperand &use) { return mmaOperandPlace(use) >= 0; });
}

LoadOp tilec::tile::getStagedLoad(Value operand) {
  if (auto load = operand.getDefiningOp<LoadOp>())
    return load.getType().getRank() == 2 ? load : LoadOp();
  auto reshape = operand.getDefiningOp<ReshapeOp>();
  if (!reshape || !(reshape->hasOneUse() || feedsOnlyMmas(reshape)) ||
      reshape.getType().getRank() != 2)
    return LoadOp();
  auto load = reshape.getTile().getDefiningOp<LoadOp>();
  // [1, R, C] -> [R, C] only: the pipeline stages the loaded tile as is.
  if (!load || load.getType().getRank() != 3 || load.getType().getDimSize(0) != 1 ||
      reshape.getType().getShape() != load.getType().getShape().drop_front())
    return LoadOp();
  return load;
}

llvm::DenseSet<int64_t> tilec::tile::writtenParams(Operation *func) {
  llvm::DenseSet<int64_t> params;
  func->walk([&](Operation *op) {
    if (isa<LoadOp, LoadScalarOp, GatherOp, MakeViewOp, ViewDimOp, ViewStrideOp>(op))
      return;
    for (Value operand : op->getOperands())
      if (auto mk = operand.getDefiningOp<MakeViewOp>())
        if (auto p = mk->getAttrOfType<IntegerAttr>(kParamIndexAttrName))
          params.insert(p.getInt());
  });
  return params;
}

SharedOperand tilec::tile::getSharedOperand(Value operand) {
  SharedOperand r;
  if (operand.getDefiningOp<PermuteOp>()) {
    PermuteOp permute = transposeOf(operand);
    if (!permute || !permute->hasOneUse())
      return r;
    operand = permute.getTile();
    // The loaded tile may also feed mmas as it is, or through other
    // transposes (tile-stage-shared checks that it feeds nothing else).
    if (!operand.hasOneUse() && !feedsOnlyMmas(operand))
      return r;
    r.transpose = permute;
  }
  r.load = getStagedLoad(operand);
  if (!r.load)
    r.transpose = PermuteOp();
  return r;
}

Value SharedOperand::tile() const {
  if (load->hasOneUse())
    if (auto reshape = dyn_cast<ReshapeOp>(*load->getUsers().begin()))
      return reshape.getResult();
  return load->getResult(0);
}

SmallVector<Operation *, 3> SharedOperand::ops() const {
  SmallVector<Operation *, 3> chain;
  if (!load)
    return chain;
  chain.push_back(load);
  if (load->hasOneUse())
    if (auto reshape = dyn_cast<ReshapeOp>(*load->getUsers().begin()))
      chain.push_back(reshape);
  if (transpose)
    chain.push_back(transpose);
  return chain;
}

/// What gather, scatter and atomic share: one index tile per view dimension,
/// index tiles of integers, and every tile of the result's shape.
static LogicalResult verifyIrregular(Operation *op, ViewType view, ValueRange indices,
                                     RankedTensorType shaped, Value mask) {
  if (indices.size() != view.getRank())
    return op->emitOpError() << "needs " << view.getRank() << " index tiles, got "
                             << indices.size();
  for (Value i : indices) {
    auto t = cast<RankedTensorType>(i.getType());
    if (!t.getElementType().isSignlessInteger() || t.getShape() != shaped.getShape())
      return op->emitOpError() << "index tiles must be integer tiles of shape of the values";
  }
  if (mask) {
    auto m = cast<RankedTensorType>(mask.getType());
    if (!m.getElementType().isInteger(1) || m.getShape() != shaped.getShape())
      return op->emitOpError() << "the mask must be an i1 tile of the values' shape";
  }
  if (shaped.getElementType() != view.getElementType())
    return op->emitOpError() << "element type " << shaped.getElementType()
                             << " does not match the view's " << view.getElementType();
  return success();
}

LogicalResult GatherOp::verify() {
  if (auto fill = getFillAttr())
    if (fill.getType() != getType().getElementType())
      return emitOpError() << "fill of type " << fill.getType()
                           << " does not match the element type";
  return verifyIrregular(*this, getView().getType(), getIndices(), getType(), getMask());
}

LogicalResult ScatterOp::verify() {
  return verifyIrregular(*this, getView().getType(), getIndices(), getValues().getType(),
                         getMask());
}

LogicalResult AtomicOp::verify() {
  StringRef k = getKind();
  if (k != "add" && k != "min" && k != "max" && k != "umin" && k != "umax" && k != "xchg" &&
      k != "cas")
    return emitOpError() << "kind must be add, min, max, umin, umax, xchg or cas, got '" << k
                         << "'";
  if ((k == "cas") != bool(getCmp()))
    return emitOpError() << "cas, and only cas, takes a cmp tile";
  if (getType() != getValues().getType())
    return emitOpError() << "the result must have the values' type";
  return verifyIrregular(*this, getView().getType(), getIndices(), getValues().getType(),
                         getMask());
}

LogicalResult PermuteOp::verify() {
  auto from = getTile().getType();
  auto to = getType();
  ArrayRef<int64_t> perm = getPermutation();
  if (from.getElementType() != to.getElementType())
    return emitOpError() << "cannot change the element type";
  if (int64_t(perm.size()) != from.getRank() || to.getRank() != from.getRank())
    return emitOpError() << "the permutation must name every dimension once";
  SmallVector<bool> seen(perm.size(), false);
  for (auto [d, p] : llvm::enumerate(perm)) {
    if (p < 0 || p >= int64_t(perm.size()) || seen[p])
      return emitOpError() << "the permutation must name every dimension once";
    seen[p] = true;
    if (to.getDimSize(d) != from.getDimSize(p))
      return emitOpError() << "result dimension " << d << " must have size "
                           << from.getDimSize(p);
  }
  return success();
}

LogicalResult ScanOp::verify() {
  auto t = getTile().getType();
  Type e = t.getElementType();
  if (t.getRank() != 1)
    return emitOpError() << "scans 1-D tiles";
  if (!getCombiner().empty())
    return verifyCombiner(*this, getCombiner(), e);
  if (!(e.isF32() || e.isF16() || e.isBF16() || e.isInteger(32)))
    return emitOpError() << "scans of " << e << " are not supported";
  return success();
}

LogicalResult TakeOp::verify() {
  if (getTile().getType().getRank() != 1)
    return emitOpError() << "takes from a 1-D tile";
  if (!isa<IntegerType>(getIndex().getType().getElementType()))
    return emitOpError() << "the index must be an integer tile";
  if (getType().getShape() != getIndex().getType().getShape() ||
      getType().getElementType() != getTile().getType().getElementType())
    return emitOpError() << "the result has the index's shape and the tile's element type";
  return success();
}

LogicalResult PrintOp::verify() {
  ArrayRef<int64_t> shape;
  for (Value v : getValues()) {
    Type t = v.getType();
    if (auto tt = dyn_cast<RankedTensorType>(t)) {
      if (!shape.empty() && tt.getShape() != shape)
        return emitOpError() << "printed tiles must have one shape";
      shape = tt.getShape();
      t = tt.getElementType();
    }
    if (!t.isIntOrFloat())
      return emitOpError() << "prints numbers only, got " << v.getType();
  }
  return success();
}

LogicalResult AssertOp::verify() {
  if (!getElementTypeOrSelf(getCond().getType()).isInteger(1))
    return emitOpError() << "the condition must be i1";
  return success();
}

LogicalResult SliceOp::verify() {
  auto from = getTile().getType();
  auto to = getType();
  ArrayRef<int64_t> off = getOffsets();
  if (from.getElementType() != to.getElementType() || from.getRank() != to.getRank() ||
      int64_t(off.size()) != from.getRank())
    return emitOpError() << "needs one offset per dimension and the same element type";
  for (int64_t d = 0; d < from.getRank(); ++d)
    if (off[d] < 0 || off[d] + to.getDimSize(d) > from.getDimSize(d))
      return emitOpError() << "the part lies outside the tile in dimension " << d;
  return success();
}

bool tilec::tile::mayWriteBetween(Operation *from, Operation *to) {
  auto writes = [](Operation *op) {
    if (op->hasTrait<OpTrait::HasRecursiveMemoryEffects>())
      return false; // its nested ops are visited on their own
    auto iface = dyn_cast<MemoryEffectOpInterface>(op);
    return iface ? iface.hasEffect<MemoryEffects::Write>() : !isPure(op);
  };
  for (Operation *p = to->getParentOp(); p && !p->isAncestor(from); p = p->getParentOp())
    if (isa<LoopLikeOpInterface>(p)) {
      bool any = false;
      p->walk([&](Operation *op) { any |= writes(op); });
      if (any)
        return true;
    }
  bool between = false, found = false;
  from->getParentWithTrait<OpTrait::IsIsolatedFromAbove>()->walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (op == to)
      return WalkResult::interrupt();
    if (op == from) {
      between = true;
      return WalkResult::advance();
    }
    if (!between)
      return WalkResult::advance();
    // Another branch of an `if` around `to` does not run on the way to it.
    Region *r = op->getParentRegion();
    Operation *owner = r->getParentOp();
    if (owner->isAncestor(to) && !r->isAncestor(to->getParentRegion()) &&
        !isa<LoopLikeOpInterface>(owner))
      return WalkResult::skip();
    if (!op->isAncestor(to) && writes(op)) {
      found = true;
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return found;
}
