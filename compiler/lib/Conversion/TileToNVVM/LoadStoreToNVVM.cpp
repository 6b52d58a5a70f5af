//===- LoadStoreToNVVM.cpp - tile loads and stores to global accesses -----===//
//
// A tile access touches the rectangle whose origin is index * shape in every
// dimension. Each thread handles its slots of the kernel's ThreadLayout.
// Two versions are generated and chosen by one block-uniform branch:
//  - fast: the rectangle lies inside the view, the innermost stride is 1 and
//    every vector is aligned; each slot is one vector access, no masks.
//  - guarded: each element is checked against the view bounds; loads read
//    the padding value and stores skip elements outside.
// The fast path covers every interior tile of a large tensor, so the guarded
// path only runs at the edges and for strided views.
//
//===----------------------------------------------------------------------===//

#include "MmaCommon.h"
#include "PatternsNVVM.h"

#include "tilec/Dialect/Tile/IR/TileDialect.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <map>
#include <optional>
#include <vector>

using namespace mlir;
using namespace tilec;

namespace {

/// A scalar in memory form (toMemory) as the integer register inline PTX
/// takes: its bits (`memBits`, 8 to 64), widened to 16 for a byte.
struct AsmScalar {
  Value reg;
  Type memTy;
  unsigned memBits, regBits;
  const char *constraint; ///< h, r or l
};
static AsmScalar toAsmScalar(OpBuilder &b, Location loc, Value v) {
  Value m = toMemory(b, loc, v);
  AsmScalar r{m, m.getType(), m.getType().getIntOrFloatBitWidth(), 0, nullptr};
  r.regBits = std::max(r.memBits, 16u);
  Type intTy = b.getIntegerType(r.memBits);
  if (r.memTy != intTy)
    r.reg = LLVM::BitcastOp::create(b, loc, intTy, r.reg);
  if (r.memBits < r.regBits)
    r.reg = arith::ExtUIOp::create(b, loc, b.getIntegerType(r.regBits), r.reg);
  r.constraint = r.regBits == 16 ? "h" : r.regBits == 32 ? "r" : "l";
  return r;
}

/// Index arithmetic shared by the load and store lowerings.
class TileAccess {
public:
  TileAccess(OpBuilder &b, Location loc, tile::MakeViewOp view,
             RankedTensorType tileTy, ValueRange indices,
             ThreadLayout layout)
      : b(b), loc(loc), layout(layout), shape(tileTy.getShape()),
        elemTy(registerType(tileTy.getElementType())), numel(tileTy.getNumElements()) {
    memTy = memoryType(elemTy);
    ptr = view.getPtr();
    sizes.assign(view.getSizes().begin(), view.getSizes().end());
    strides.assign(view.getStrides().begin(), view.getStrides().end());
    for (auto [d, idx] : llvm::enumerate(indices)) {
      Value i = idx;
      if (i.getType().getIntOrFloatBitWidth() < 64)
        i = arith::ExtSIOp::create(b, loc, b.getI64Type(), i);
      origins.push_back(arith::MulIOp::create(b, loc, i, c64(shape[d])));
    }
    tileTy_ = tileTy;
    if (isa<tile::BlockedEncodingAttr>(layout)) {
      Value tid = NVVM::ThreadIdXOp::create(b, loc, b.getI32Type());
      Value tid64 = arith::ExtUIOp::create(b, loc, b.getI64Type(), tid);
      tidBase = arith::MulIOp::create(b, loc, tid64, c64(layout.getGroupWidth()));
    }
  }

  Value c64(int64_t v) {
    return constI64(b, loc, v);
  }
  Value andI(Value a, Value c) {
    return a ? Value(arith::AndIOp::create(b, loc, a, c)) : c;
  }
  Value cmp(arith::CmpIPredicate p, Value x, Value y) {
    return arith::CmpIOp::create(b, loc, p, x, y);
  }
  unsigned elemBytes() const { return memTy.getIntOrFloatBitWidth() / 8; }
  /// A load of `ty` (elemTy or a vector of it) at `addr`, through memory.
  Value load(Type ty, Value addr, unsigned align) {
    Type mty = memTy;
    if (auto vt = dyn_cast<VectorType>(ty))
      mty = VectorType::get(vt.getShape(), memTy);
    return fromMemory(b, loc, LLVM::LoadOp::create(b, loc, mty, addr, align), elemTy);
  }
  /// The element at offset `off` where `inBounds` holds, zero elsewhere
  /// (an ordinary load under a branch: a broadcast's source, a scalar).
  Value loadOrZero(Value inBounds, Value off) {
    return guarded(
        inBounds, elemTy, [&]() -> Value { return load(elemTy, address(off), elemBytes()); },
        [&]() -> Value { return arith::ConstantOp::create(b, loc, b.getZeroAttr(elemTy)); });
  }
  /// The element at the tile's origin (a one-element tile), or zero.
  Value loadOriginOrZero() {
    Value inBounds;
    Value off = offsetOf(c64(0), false, &inBounds);
    return loadOrZero(inBounds, off);
  }
  void store(Value v, Value addr, unsigned align) {
    LLVM::StoreOp::create(b, loc, toMemory(b, loc, v), addr, align);
  }
  /// A scalar of `elemTy` loaded from `addr` where `cond` holds and `pad`
  /// elsewhere, as one predicated PTX load (tilec::predicatedLoad).
  Value loadIf(Value cond, Value addr, Value pad) {
    return predicatedLoad(b, loc, cond, addr, pad, elemTy);
  }
  /// A scalar store of `v` at `addr` where `cond` holds
  /// (tilec::predicatedStore).
  void storeIf(Value cond, Value v, Value addr) { predicatedStore(b, loc, cond, v, addr); }

  int64_t reps() const { return layout.getGroups(tileTy_.getShape()); }
  /// Whether slot r may hold tile padding (flat index >= numel).
  bool slotNeedsGuard(int64_t r) const { return layout.groupMayPad(tileTy_.getShape(), r); }
  /// Computes the slots' positions from an opaque copy of the thread index
  /// (tilec::opaqueCopy), so that they are computed where they are used and
  /// not hoisted out of a loop around the access.
  void positionsInPlace() {
    Value tid = NVVM::ThreadIdXOp::create(b, loc, b.getI32Type());
    opaqueTid64 = arith::ExtUIOp::create(b, loc, b.getI64Type(), opaqueCopy(b, loc, tid));
  }

  /// Whether every slot's coordinates are the thread's first slot's plus
  /// constants (slotDelta), the same for every thread: decided on the host
  /// from the encoding's getGroupBase. Then the thread's coordinates are
  /// computed once (threadCoords) and each slot adds its constants, instead
  /// of each slot rebuilding its flat index from the thread index and
  /// dividing it back into coordinates: hundreds of udiv / urem per access
  /// that the canonicalizer, the LLVM conversions and InstCombine then had
  /// to fold. Tiles that may hold padding keep the flat indices, and so do
  /// blocked tiles (the thread index times the width: little to fold):
  /// their coordinates computed once before the paths branch cost
  /// scan_offsets' serial loop two adds per iteration of its fast path
  /// (2.4-2.7% slower on the H200 and H100), and computed in each path its
  /// PTX still differed and stayed as slow. For the slot-by-slot accesses
  /// of a tile load or store, after positionsInPlace.
  void planSlotCoordinates() {
    slotDelta.clear();
    threadCoords.clear();
    if (layout.mayPad(shape) || isa<tile::BlockedEncodingAttr>(layout))
      return;
    int64_t groups = reps(), rank = shape.size();
    SmallVector<int64_t> tileStrides = computeStrides(shape);
    auto coordsOf = [&](int64_t e) { return delinearize(e, tileStrides); };
    SmallVector<SmallVector<int64_t>> delta(groups);
    SmallVector<int64_t> first = coordsOf(layout.getGroupBase(shape, 0, 0));
    for (int64_t g = 0; g < groups; ++g) {
      delta[g] = coordsOf(layout.getGroupBase(shape, 0, g));
      for (int64_t d = 0; d < rank; ++d)
        delta[g][d] -= first[d];
    }
    for (unsigned t = 1, n = layout.getThreadsPerBlock(); t < n; ++t) {
      SmallVector<int64_t> c0 = coordsOf(layout.getGroupBase(shape, t, 0));
      for (int64_t g = 1; g < groups; ++g) {
        SmallVector<int64_t> c = coordsOf(layout.getGroupBase(shape, t, g));
        for (int64_t d = 0; d < rank; ++d)
          if (c[d] - c0[d] != delta[g][d])
            return;
      }
    }
    slotDelta = std::move(delta);
    threadCoords = inView(coordinatesOf(slotBase(0), /*wrapOutermost=*/false));
  }

  /// The tile coordinates of flat tile index `e` (tilec::tileCoords).
  SmallVector<Value> coordinatesOf(Value e, bool wrapOutermost) {
    return tileCoords(b, loc, e, shape, wrapOutermost);
  }

  /// The view coordinates (tile origin plus coordinates in the tile) of
  /// the tile coordinates `coords`.
  SmallVector<Value> inView(SmallVector<Value> coords) {
    for (size_t d = 0; d < coords.size(); ++d)
      coords[d] = arith::AddIOp::create(b, loc, origins[d], coords[d]);
    return coords;
  }

  /// The view coordinates of slot r's first element: with planned slots
  /// the thread's (its tile origin added first, so that each slot's
  /// constant is added to a value of this tile) plus the slot's constants.
  SmallVector<Value> slotCoordinates(int64_t r, bool wrapOutermost) {
    if (slotDelta.empty())
      return inView(coordinatesOf(slotBase(r), wrapOutermost));
    SmallVector<Value> coords(threadCoords);
    for (size_t d = 0; d < coords.size(); ++d)
      if (slotDelta[r][d])
        coords[d] = arith::AddIOp::create(b, loc, coords[d], c64(slotDelta[r][d]));
    return coords;
  }

  /// Slot r's flat index where the fast path needs it (the slots have no
  /// planned coordinates, which includes every slot that may hold
  /// padding), else null; and the fast path's element offset of slot r
  /// from it (or from the slot's coordinates).
  Value fastSlotBase(int64_t r) { return slotDelta.empty() ? slotBase(r) : Value(); }
  Value fastSlotOffset(int64_t r, Value base) {
    return base ? offsetOf(base, unitInnerOnFastPath(), nullptr)
                : slotOffset(r, unitInnerOnFastPath(), nullptr);
  }

  /// Element offset of slot r's first element; see offsetAt.
  Value slotOffset(int64_t r, bool unitInner, Value *inBounds) {
    if (slotDelta.empty())
      return offsetOf(slotBase(r), unitInner, inBounds);
    return offsetAt(slotCoordinates(r, inBounds != nullptr), unitInner, inBounds, Value());
  }
  /// First flat tile index of this thread's slot r.
  Value slotBase(int64_t r) {
    if (opaqueTid64)
      return encodingOf(tileTy_).emitGroupBase(b, loc, opaqueTid64, shape, r);
    if (!isa<tile::BlockedEncodingAttr>(layout))
      return groupBase(b, loc, tileTy_, r);
    return arith::AddIOp::create(b, loc, tidBase,
                                 c64(r * int64_t(layout.getThreadsPerBlock()) * layout.getGroupWidth()));
  }

  /// Whether the fast path knows the innermost stride is 1: fastCondition
  /// checks it only for vectors (a group of one element is addressed
  /// through any stride, e.g. a [BM, 1] column of a column-major tensor).
  bool unitInnerOnFastPath() const { return layout.getGroupWidth() > 1; }

  /// The block-uniform condition for the fast path: the tile lies inside
  /// the view, and its vectors are contiguous and aligned.
  Value fastCondition() {
    Value cond;
    for (size_t d = 0; d < shape.size(); ++d) {
      Value end = arith::AddIOp::create(b, loc, origins[d], c64(shape[d]));
      cond = andI(cond, cmp(arith::CmpIPredicate::sle, end, sizes[d]));
      // A negative origin is outside too.
      cond = andI(cond, cmp(arith::CmpIPredicate::sge, origins[d], c64(0)));
    }
    if (layout.getGroupWidth() > 1)
      cond = andI(cond, vectorsAligned());
    return cond;
  }

  /// Whether each vector of a thread is contiguous in memory (innermost
  /// stride 1) and aligned to its size (the base and every outer stride).
  Value vectorsAligned() {
    unsigned vec = layout.getGroupWidth();
    Value cond = cmp(arith::CmpIPredicate::eq, strides.back(), c64(1));
    for (size_t d = 0; d + 1 < strides.size(); ++d) {
      Value rem = arith::RemSIOp::create(b, loc, strides[d], c64(vec));
      cond = andI(cond, cmp(arith::CmpIPredicate::eq, rem, c64(0)));
    }
    Value addr = LLVM::PtrToIntOp::create(b, loc, b.getI64Type(), ptr);
    Value mis = arith::RemUIOp::create(b, loc, addr, c64(vec * elemBytes()));
    return andI(cond, cmp(arith::CmpIPredicate::eq, mis, c64(0)));
  }

  /// Whether an edge tile of this encoding can be accessed a whole vector
  /// at a time: a blocked tile whose vectors are 4, 8 or 16 bytes (one to
  /// four 32-bit words of one predicated ld/st.global.v*).
  bool vectorGuardable() const {
    unsigned bytes = layout.getGroupWidth() * elemBytes();
    return isa<tile::BlockedEncodingAttr>(layout) && layout.getGroupWidth() > 1 &&
           (bytes == 4 || bytes == 8 || bytes == 16);
  }

  /// The block-uniform condition for the masked-vector path of an edge
  /// tile: the vectors are contiguous and aligned, and the view's
  /// innermost size is a multiple of the width. A vector starts at a
  /// multiple of the width (the width divides the tile's innermost size,
  /// so the origin too), so it then lies wholly inside the view or wholly
  /// outside: one predicate per vector (a row of 1000 floats in a tile of
  /// 1024 is 250 16-byte loads, not 1000 scalar ones whose addresses
  /// spread each warp's access over 4x the bytes).
  Value maskedVectorCondition() {
    unsigned vec = layout.getGroupWidth();
    Value rem = arith::RemSIOp::create(b, loc, sizes.back(), c64(vec));
    return andI(vectorsAligned(), cmp(arith::CmpIPredicate::eq, rem, c64(0)));
  }

  /// The element offset of slot r's first element (innermost stride 1)
  /// and, in `inBounds`, whether the slot's vector lies inside the view
  /// (see maskedVectorCondition).
  Value slotVector(int64_t r, Value *inBounds) {
    return slotOffset(r, /*unitInner=*/true, inBounds);
  }

  /// A vector of `vecTy` (the slot's width of elemTy) loaded from `addr`
  /// where `cond` holds and `pad` elsewhere, as one predicated PTX vector
  /// load of 32-bit words.
  Value loadVectorIf(Value cond, Value addr, Value pad, VectorType vecTy) {
    auto [words, wordTy] = memoryWords(vecTy);
    Value padWords = LLVM::BitcastOp::create(b, loc, wordTy, toMemory(b, loc, pad));
    SmallVector<Value> operands{LLVM::PtrToIntOp::create(b, loc, b.getI64Type(), addr), cond};
    for (int64_t w = 0; w < words; ++w)
      operands.push_back(vector::ExtractOp::create(b, loc, padWords, ArrayRef<int64_t>{w}));
    std::string text, constraints;
    llvm::raw_string_ostream os(text);
    for (int64_t w = 0; w < words; ++w)
      os << "mov.b32 $" << w << ", $" << words + 2 + w << ";\n";
    os << "@$" << words + 1 << " ld.global" << vectorSuffix(words) << ".b32 "
       << wordList(0, words) << ", [$" << words << "];";
    for (int64_t w = 0; w < words; ++w)
      constraints += std::string(w ? "," : "") + "=&r";
    constraints += ",l,b";
    for (int64_t w = 0; w < words; ++w)
      constraints += ",r";
    SmallVector<Type> fields(words, b.getI32Type());
    Type resultTy = words == 1 ? b.getI32Type()
                               : Type(LLVM::LLVMStructType::getLiteral(b.getContext(), fields));
    Value x = inlineAsm(b, loc, TypeRange{resultTy}, operands, text, constraints);
    Value loaded = LLVM::PoisonOp::create(b, loc, wordTy);
    for (int64_t w = 0; w < words; ++w) {
      Value word = words == 1 ? x : Value(LLVM::ExtractValueOp::create(b, loc, x, w));
      loaded = vector::InsertOp::create(b, loc, word, loaded, ArrayRef<int64_t>{w});
    }
    auto memVecTy = VectorType::get(vecTy.getShape(), memTy);
    return fromMemory(b, loc, LLVM::BitcastOp::create(b, loc, memVecTy, loaded), elemTy);
  }

  /// A store of the vector `v` at `addr` where `cond` holds, as one
  /// predicated PTX vector store of 32-bit words.
  void storeVectorIf(Value cond, Value v, Value addr) {
    auto [words, wordTy] = memoryWords(cast<VectorType>(v.getType()));
    Value asWords = LLVM::BitcastOp::create(b, loc, wordTy, toMemory(b, loc, v));
    SmallVector<Value> operands{LLVM::PtrToIntOp::create(b, loc, b.getI64Type(), addr), cond};
    for (int64_t w = 0; w < words; ++w)
      operands.push_back(vector::ExtractOp::create(b, loc, asWords, ArrayRef<int64_t>{w}));
    std::string text;
    llvm::raw_string_ostream os(text);
    os << "@$1 st.global" << vectorSuffix(words) << ".b32 [$0], " << wordList(2, words) << ";";
    std::string constraints = "l,b";
    for (int64_t w = 0; w < words; ++w)
      constraints += ",r";
    inlineAsm(b, loc, TypeRange{}, operands, text, constraints);
  }

  /// A vector of elemTy as 32-bit words in memory: their count and type.
  std::pair<int64_t, VectorType> memoryWords(VectorType vecTy) const {
    int64_t words = vecTy.getNumElements() * elemBytes() / 4;
    return {words, VectorType::get({words}, IntegerType::get(b.getContext(), 32))};
  }
  static std::string vectorSuffix(int64_t words) {
    return words == 1 ? "" : ".v" + std::to_string(words);
  }
  /// `$first` alone, or `{$first, ..., $(first + words - 1)}`.
  static std::string wordList(int64_t first, int64_t words) {
    if (words == 1)
      return "$" + std::to_string(first);
    std::string s = "{";
    for (int64_t w = 0; w < words; ++w)
      s += (w ? ", $" : "$") + std::to_string(first + w);
    return s + "}";
  }

  /// Element offset of flat tile index `e`; when `inBounds` is given it
  /// receives the bounds check of that element. `unitInner` substitutes the
  /// known innermost stride 1 on the fast path.
  Value offsetOf(Value e, bool unitInner, Value *inBounds) {
    return offsetAt(inView(coordinatesOf(e, inBounds != nullptr)), unitInner, inBounds, e);
  }

  /// Element offset of the element at view coordinates `coords`; when
  /// `inBounds` is given it receives its bounds check (and, where the tile
  /// may hold padding, that its flat index `e` is inside the tile).
  Value offsetAt(ArrayRef<Value> coords, bool unitInner, Value *inBounds, Value e) {
    Value offset;
    Value guard;
    for (int64_t d = shape.size() - 1; d >= 0; --d) {
      Value g = coords[d];
      if (inBounds)
        guard = andI(guard, cmp(arith::CmpIPredicate::ult, g, sizes[d]));
      bool unit = unitInner && d == int64_t(shape.size()) - 1;
      Value term = unit ? g : Value(arith::MulIOp::create(b, loc, g, strides[d]));
      offset = offset ? Value(arith::AddIOp::create(b, loc, offset, term)) : term;
    }
    if (inBounds) {
      if (layout.mayPad(shape))
        guard = andI(guard, cmp(arith::CmpIPredicate::ult, e, c64(numel)));
      *inBounds = guard;
    }
    return offset;
  }

  /// The element offsets and bounds checks of the W elements of slot r
  /// (flat indices base .. base + W - 1) for the guarded path. When W
  /// divides the innermost dimension they share every coordinate but the
  /// innermost one, so the coordinates are computed once per slot and
  /// each element adds v to the innermost (and v times its stride).
  void slotElements(int64_t r, unsigned width, SmallVectorImpl<Value> &offsets,
                    SmallVectorImpl<Value> &inBounds) {
    if (width == 1 && !slotDelta.empty()) {
      Value guard;
      offsets.push_back(slotOffset(r, false, &guard));
      inBounds.push_back(guard);
      return;
    }
    if (width == 1 || shape.back() % width != 0) {
      Value base = slotBase(r);
      for (unsigned v = 0; v < width; ++v) {
        Value e = v ? Value(arith::AddIOp::create(b, loc, base, c64(v))) : base;
        Value guard;
        offsets.push_back(offsetOf(e, false, &guard));
        inBounds.push_back(guard);
      }
      return;
    }
    Value outer, offset, innerG;
    int64_t last = shape.size() - 1;
    SmallVector<Value> coords = slotCoordinates(r, /*wrapOutermost=*/true);
    for (int64_t d = last; d >= 0; --d) {
      Value g = coords[d];
      if (d == last)
        innerG = g;
      else
        outer = andI(outer, cmp(arith::CmpIPredicate::ult, g, sizes[d]));
      Value term = arith::MulIOp::create(b, loc, g, strides[d]);
      offset = offset ? Value(arith::AddIOp::create(b, loc, offset, term)) : term;
    }
    bool pad = layout.mayPad(shape);
    Value base = pad ? slotBase(r) : Value();
    for (unsigned v = 0; v < width; ++v) {
      Value g = v ? Value(arith::AddIOp::create(b, loc, innerG, c64(v))) : innerG;
      Value guard = andI(outer, cmp(arith::CmpIPredicate::ult, g, sizes[last]));
      if (pad) {
        Value e = v ? Value(arith::AddIOp::create(b, loc, base, c64(v))) : base;
        guard = andI(guard, cmp(arith::CmpIPredicate::ult, e, c64(numel)));
      }
      inBounds.push_back(guard);
      offsets.push_back(v ? Value(arith::AddIOp::create(
                                b, loc, offset,
                                arith::MulIOp::create(b, loc, strides[last], c64(v))))
                          : offset);
    }
  }

  Value address(Value offset) {
    return LLVM::GEPOp::create(b, loc, ptr.getType(), memTy, ptr,
                               ValueRange{offset});
  }

  /// Yields `thenFn()` where `cond` holds and `elseFn()` elsewhere; each
  /// builds its code inside its own branch.
  template <typename ThenFn, typename ElseFn>
  Value guarded(Value cond, Type ty, ThenFn thenFn, ElseFn elseFn) {
    auto ifOp = scf::IfOp::create(b, loc, TypeRange{ty}, cond, true, true);
    {
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(&ifOp.getThenRegion().front());
      scf::YieldOp::create(b, loc, thenFn());
      b.setInsertionPointToStart(&ifOp.getElseRegion().front());
      scf::YieldOp::create(b, loc, elseFn());
    }
    return ifOp.getResult(0);
  }
  template <typename Fn>
  void guardedVoid(Value cond, Fn body) {
    auto ifOp = scf::IfOp::create(b, loc, TypeRange{}, cond, false);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    body();
  }

  OpBuilder &b;
  Location loc;
  ThreadLayout layout;
  ArrayRef<int64_t> shape;
  Type elemTy;
  Type memTy; ///< elemTy in memory (i8 for i1)
  int64_t numel;
  Value ptr;
  SmallVector<Value> sizes, strides, origins;
  RankedTensorType tileTy_;
  Value tidBase; ///< blocked layout: tid * vec
  Value opaqueTid64; ///< positionsInPlace: the opaque copy of the thread index, i64
  /// planSlotCoordinates: per slot, its coordinates minus the first slot's
  /// (empty where they are not the same for every thread), and the
  /// thread's first slot's coordinates.
  SmallVector<SmallVector<int64_t>> slotDelta;
  SmallVector<Value> threadCoords;
};

/// The concatenation of `parts` (1-D vectors of one element type), as a
/// balanced tree of vector.shuffle: each level joins neighbours.
static Value concatVectors(OpBuilder &b, Location loc, SmallVector<Value> parts) {
  while (parts.size() > 1) {
    SmallVector<Value> next;
    for (size_t i = 0; i + 1 < parts.size(); i += 2) {
      int64_t n = cast<VectorType>(parts[i].getType()).getNumElements() +
                  cast<VectorType>(parts[i + 1].getType()).getNumElements();
      next.push_back(vector::ShuffleOp::create(b, loc, parts[i], parts[i + 1],
                                               llvm::to_vector(llvm::seq<int64_t>(0, n))));
    }
    if (parts.size() % 2)
      next.push_back(parts.back());
    parts = std::move(next);
  }
  return parts.front();
}

static Value splatConst(OpBuilder &b, Location loc, VectorType ty, TypedAttr v) {
  return arith::ConstantOp::create(b, loc, ty, DenseElementsAttr::get(ty, v));
}

/// C = load(C) + X stored back where it was loaded (matmul_add's epilogue
/// once tile-fuse adds the start after the loop): the store reads, adds and
/// writes in chunks of slots (StoreLowering), so the loaded tile is never
/// held whole beside X (for a 128 x 256 f32 accumulator 128 more registers
/// per thread, which ptxas spilled: 1 KB). Only for an mma accumulator's
/// layout: elsewhere (saxpy's y = a x + y) loading every slot first keeps
/// more loads in flight. markReadModifyWrites decides the pairs once,
/// before the conversion (whose patterns insert ops, a pipeline's barrier
/// writes among them, between a load and its store): the load is marked,
/// and the store records which operand of its sum is the addend.
constexpr llvm::StringLiteral kReadModifyWriteLoadAttr = "tile.rmw_load";
constexpr llvm::StringLiteral kReadModifyWriteAddendAttr = "tile.rmw_addend";

/// Elements per thread of a read-modify-write's chunk (see StoreLowering)
/// on the fast path and on the guarded one (whose elements each hold an
/// address and a predicate).
constexpr int64_t kReadModifyWriteElems = 64, kReadModifyWriteGuardedElems = 4;

struct LoadLowering : LayoutPattern<tile::LoadOp> {
  using LayoutPattern::LayoutPattern;

  LogicalResult
  matchAndRewrite(tile::LoadOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto mk = op.getView().getDefiningOp<tile::MakeViewOp>();
    if (!mk)
      return rewriter.notifyMatchFailure(op, "view is not made by tile.make_view");
    Location loc = op.getLoc();
    RankedTensorType tileTy = op.getType();
    ThreadLayout encoding = encodingOf(tileTy);
    Type elemTy = registerType(tileTy.getElementType());
    VectorType resTy = perThreadType(tileTy);
    VectorType vecTy = VectorType::get({encoding.getGroupWidth()}, elemTy);
    TypedAttr padAttr = op.getPaddingAttr();
    if (!padAttr)
      padAttr = rewriter.getZeroAttr(elemTy);
    // The store that writes the sum back loads the tile itself, in chunks.
    if (op->hasAttr(kReadModifyWriteLoadAttr)) {
      rewriter.replaceOp(op, LLVM::PoisonOp::create(rewriter, loc, resTy));
      return success();
    }

    TileAccess acc(rewriter, loc, mk, tileTy, adaptor.getIndices(), encoding);
    // A [BM, N] tile loaded in an mma loop (the consumers' own load, e.g. the
    // operands of a computed b): its elements' positions are loop-invariant,
    // and LLVM kept a 64-bit offset per element live across the loop for
    // the guarded path (128 x 128 of dY and Z: 256 bytes of spills).
    if (auto mma = dyn_cast<tile::MmaEncodingAttr>(tileTy.getEncoding());
        mma && mma.getKind() != tile::MmaKind::fma && tileTy.getRank() == 2 &&
        op->getParentOfType<scf::ForOp>())
      acc.positionsInPlace();
    acc.planSlotCoordinates();
    Value padVec = splatConst(rewriter, loc, vecTy, padAttr);
    Value padScalar = arith::ConstantOp::create(rewriter, loc, padAttr);
    unsigned align = encoding.getGroupWidth() * acc.elemBytes();

    // The fast path's result is the slots' vectors concatenated by a
    // balanced tree of shuffles: inserting each as a strided slice (or its
    // elements one by one, which LLVM turns back into that) costs two
    // shufflevectors of the whole per-thread vector per slot, 128 of 128
    // floats for an accumulator: most of a matmul_add's IR.
    auto fastPath = [&]() -> Value {
      SmallVector<Value> parts;
      for (int64_t r = 0; r < acc.reps(); ++r) {
        Value base = acc.fastSlotBase(r);
        auto loadSlot = [&]() -> Value {
          Value addr = acc.address(acc.fastSlotOffset(r, base));
          return acc.load(vecTy, addr, align);
        };
        Value v = acc.slotNeedsGuard(r)
                      ? acc.guarded(acc.cmp(arith::CmpIPredicate::ult, base,
                                            acc.c64(acc.numel)),
                                    vecTy, loadSlot, [&] { return padVec; })
                      : loadSlot();
        parts.push_back(v);
      }
      return concatVectors(rewriter, loc, parts);
    };
    auto maskedVectorPath = [&]() -> Value {
      SmallVector<Value> parts;
      for (int64_t r = 0; r < acc.reps(); ++r) {
        Value inBounds;
        Value addr = acc.address(acc.slotVector(r, &inBounds));
        parts.push_back(acc.loadVectorIf(inBounds, addr, padVec, vecTy));
      }
      return concatVectors(rewriter, loc, parts);
    };
    auto guardedPath = [&]() -> Value {
      SmallVector<Value> elems;
      for (int64_t r = 0; r < acc.reps(); ++r) {
        SmallVector<Value> offsets, inBounds;
        acc.slotElements(r, encoding.getGroupWidth(), offsets, inBounds);
        for (unsigned v = 0; v < encoding.getGroupWidth(); ++v)
          elems.push_back(acc.loadIf(inBounds[v], acc.address(offsets[v]), padScalar));
      }
      return vector::FromElementsOp::create(rewriter, loc, resTy, elems);
    };
    // An edge tile: whole vectors under one predicate each where the
    // view allows it (TileAccess::maskedVectorCondition), else element by
    // element.
    auto edgePath = [&]() -> Value {
      if (!acc.vectorGuardable())
        return guardedPath();
      return acc.guarded(acc.maskedVectorCondition(), resTy, maskedVectorPath, guardedPath);
    };
    Value result = acc.guarded(acc.fastCondition(), resTy, fastPath, edgePath);
    rewriter.replaceOp(op, result);
    return success();
  }

};

struct StoreLowering : LayoutPattern<tile::StoreOp> {
  using LayoutPattern::LayoutPattern;

  LogicalResult
  matchAndRewrite(tile::StoreOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto mk = op.getView().getDefiningOp<tile::MakeViewOp>();
    if (!mk)
      return rewriter.notifyMatchFailure(op, "view is not made by tile.make_view");
    if (op->hasAttr(tile::kTmaStoreAttrName))
      mma::lowerTmaStore(rewriter, op, adaptor.getValue(), adaptor.getIndices());
    else if (failed(storeByThreads(op, adaptor, rewriter, mk)))
      return failure();
    rewriter.eraseOp(op);
    return success();
  }

  /// Each thread stores its elements (the fast and the guarded path).
  LogicalResult storeByThreads(tile::StoreOp op, OpAdaptor adaptor,
                               ConversionPatternRewriter &rewriter, tile::MakeViewOp mk) const {
    Location loc = op.getLoc();
    RankedTensorType tileTy = op.getValue().getType();
    ThreadLayout encoding = encodingOf(tileTy);
    Value values = adaptor.getValue();
    // A read-modify-write (markReadModifyWrites): `values` is the addend, and
    // each slot is loaded and added before it is stored.
    bool loadedFirst = false;
    Value addend;
    if (auto which = op->getAttrOfType<IntegerAttr>(kReadModifyWriteAddendAttr)) {
      auto add = op.getValue().getDefiningOp<arith::AddFOp>();
      if (!add)
        return rewriter.notifyMatchFailure(op, "a read-modify-write store lost its sum");
      addend = add->getOperand(which.getInt());
      loadedFirst = which.getInt() == 1;
      values = rewriter.getRemappedValue(addend);
      if (!values)
        return rewriter.notifyMatchFailure(op, "a read-modify-write's addend is not converted");
    }
    auto sum = [&](Value loaded, Value x) -> Value {
      return loadedFirst ? arith::AddFOp::create(rewriter, loc, loaded, x)
                         : arith::AddFOp::create(rewriter, loc, x, loaded);
    };
    // An encoding that holds an element in several threads (accumulator
    // rows: the 4 lanes of a quad) stores it from its owner only.
    OpBuilder::InsertionGuard ownerGuard(rewriter);
    auto tid = [&]() -> Value {
      Value t = NVVM::ThreadIdXOp::create(rewriter, loc, rewriter.getI32Type());
      return arith::ExtUIOp::create(rewriter, loc, rewriter.getI64Type(), t);
    };
    if (Value owner = encoding.emitOwner(rewriter, loc, tid)) {
      auto ownerIf = scf::IfOp::create(rewriter, loc, TypeRange{}, owner, /*withElseRegion=*/false);
      rewriter.setInsertionPointToStart(&ownerIf.getThenRegion().front());
    }
    TileAccess acc(rewriter, loc, mk, tileTy, adaptor.getIndices(), encoding);
    if (op->hasAttr(kPositionsInPlaceAttrName))
      acc.positionsInPlace();
    acc.planSlotCoordinates();
    unsigned align = encoding.getGroupWidth() * acc.elemBytes();

    auto ifOp = scf::IfOp::create(rewriter, loc, TypeRange{}, acc.fastCondition(),
                                  /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard g(rewriter);
      rewriter.setInsertionPointToStart(&ifOp.getThenRegion().front());
      // A read-modify-write goes in chunks of slots: the chunk's loads, then
      // its sums and stores, so that a chunk's loads are in flight together
      // (one slot at a time waited for every load in turn: 2x slower).
      int64_t width = encoding.getGroupWidth();
      int64_t chunk = addend ? std::max<int64_t>(1, kReadModifyWriteElems / width) : 1;
      for (int64_t r0 = 0; r0 < acc.reps(); r0 += chunk) {
        int64_t r1 = std::min(acc.reps(), r0 + chunk);
        SmallVector<Value> bases, addrs, loaded;
        for (int64_t r = r0; r < r1; ++r) {
          bases.push_back(acc.fastSlotBase(r));
          if (!addend)
            continue;
          addrs.push_back(acc.address(acc.fastSlotOffset(r, bases.back())));
          VectorType vecTy = VectorType::get({width}, registerType(tileTy.getElementType()));
          auto loadSlot = [&]() -> Value { return acc.load(vecTy, addrs.back(), align); };
          loaded.push_back(
              acc.slotNeedsGuard(r)
                  ? acc.guarded(acc.cmp(arith::CmpIPredicate::ult, bases.back(),
                                        acc.c64(acc.numel)),
                                vecTy, loadSlot,
                                [&] { return splatConst(rewriter, loc, vecTy,
                                                        rewriter.getZeroAttr(
                                                            registerType(tileTy.getElementType()))); })
                  : loadSlot());
        }
        for (int64_t r = r0; r < r1; ++r) {
          auto storeSlot = [&]() {
            Value v = vector::ExtractStridedSliceOp::create(
                rewriter, loc, values, ArrayRef<int64_t>{r * width}, ArrayRef<int64_t>{width},
                ArrayRef<int64_t>{1});
            Value addr = addend ? addrs[r - r0]
                                : acc.address(acc.fastSlotOffset(r, bases[r - r0]));
            if (addend)
              v = sum(loaded[r - r0], v);
            acc.store(v, addr, align);
          };
          if (acc.slotNeedsGuard(r))
            acc.guardedVoid(acc.cmp(arith::CmpIPredicate::ult, bases[r - r0],
                                    acc.c64(acc.numel)),
                            storeSlot);
          else
            storeSlot();
        }
      }
      rewriter.setInsertionPointToStart(&ifOp.getElseRegion().front());
      // An edge tile: whole vectors under one predicate each where the
      // view allows it (TileAccess::maskedVectorCondition).
      if (!addend && acc.vectorGuardable()) {
        auto masked = scf::IfOp::create(rewriter, loc, TypeRange{}, acc.maskedVectorCondition(),
                                        /*withElseRegion=*/true);
        rewriter.setInsertionPointToStart(&masked.getThenRegion().front());
        for (int64_t r = 0; r < acc.reps(); ++r) {
          Value inBounds;
          Value addr = acc.address(acc.slotVector(r, &inBounds));
          Value v = vector::ExtractStridedSliceOp::create(
              rewriter, loc, values, ArrayRef<int64_t>{r * width}, ArrayRef<int64_t>{width},
              ArrayRef<int64_t>{1});
          acc.storeVectorIf(inBounds, v, addr);
        }
        rewriter.setInsertionPointToStart(&masked.getElseRegion().front());
      }
      struct Element {
        Value inBounds, addr, x, loaded;
      };
      SmallVector<Element> pending;
      auto flush = [&] {
        for (Element &el : pending)
          if (addend) {
            Value zero = arith::ConstantOp::create(rewriter, loc,
                                                   rewriter.getZeroAttr(el.x.getType()));
            el.loaded = acc.loadIf(el.inBounds, el.addr, zero);
          }
        for (Element &el : pending)
          acc.storeIf(el.inBounds, addend ? sum(el.loaded, el.x) : el.x, el.addr);
        pending.clear();
      };
      for (int64_t r = 0; r < acc.reps(); ++r) {
        SmallVector<Value> offsets, inBounds;
        acc.slotElements(r, width, offsets, inBounds);
        for (int64_t v = 0; v < width; ++v) {
          Value x = vector::ExtractOp::create(rewriter, loc, values,
                                              ArrayRef<int64_t>{r * width + v});
          pending.push_back({inBounds[v], acc.address(offsets[v]), x, Value()});
          if (!addend || int64_t(pending.size()) == kReadModifyWriteGuardedElems)
            flush();
        }
      }
      flush();
    }
    return success();
  }
};

/// For each element a thread holds of `resTy` (slot g * width + v), the
/// first slot that reads the same element of a broadcast's source `from`
/// in every thread (itself when none does), decided on the host from the
/// encoding: a row vector broadcast over an accumulator's columns is read
/// once per row the thread holds (2 loads instead of 128 for a [128, 1]
/// scale over 128 x 256 wgmma fragments).
static SmallVector<int64_t> sharedSourceSlots(RankedTensorType resTy, ArrayRef<int64_t> from) {
  ThreadLayout layout = encodingOf(resTy);
  ArrayRef<int64_t> shape = resTy.getShape();
  int64_t numel = resTy.getNumElements(), width = layout.getGroupWidth();
  int64_t groups = layout.getGroups(shape);
  unsigned threads = layout.getThreadsPerBlock();
  size_t lead = shape.size() - from.size();
  auto sourceOf = [&](int64_t e) -> int64_t {
    if (e >= numel)
      return -1; // padding: reads nothing
    int64_t src = 0, stride = 1;
    for (int64_t d = shape.size() - 1; d >= int64_t(lead); --d) {
      int64_t c = e % shape[d];
      e /= shape[d];
      if (from[d - lead] != 1)
        src += c * stride;
      stride *= from[d - lead];
    }
    return src;
  };
  SmallVector<int64_t> first(groups * width);
  std::map<std::vector<int64_t>, int64_t> seen;
  for (int64_t g = 0; g < groups; ++g)
    for (int64_t v = 0; v < width; ++v) {
      std::vector<int64_t> sources(threads);
      for (unsigned t = 0; t < threads; ++t)
        sources[t] = sourceOf(layout.getGroupBase(shape, t, g) + v);
      first[g * width + v] = seen.try_emplace(std::move(sources), g * width + v).first->second;
    }
  return first;
}

/// `tile.broadcast_load`: every element this thread holds in the result
/// is read from the source tile position it broadcasts from (guarded; the
/// source is small and cached, so no vector path), once per distinct
/// position (sharedSourceSlots).
struct BroadcastLoadLowering : LayoutPattern<tile::BroadcastLoadOp> {
  using LayoutPattern::LayoutPattern;

  LogicalResult
  matchAndRewrite(tile::BroadcastLoadOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto mk = op.getView().getDefiningOp<tile::MakeViewOp>();
    if (!mk)
      return rewriter.notifyMatchFailure(op, "view is not made by tile.make_view");
    Location loc = op.getLoc();
    RankedTensorType resTy = op.getType();
    Type elemTy = registerType(resTy.getElementType());
    // The source is read straight from memory for each result element: it
    // has no register form of its own.
    auto srcTy = RankedTensorType::get(op.getSrcShape(), elemTy, resTy.getEncoding());
    TileAccess acc(rewriter, loc, mk, srcTy, adaptor.getIndices(), encodingOf(resTy));
    VectorType outTy = perThreadType(resTy);
    ArrayRef<int64_t> from = op.getSrcShape();
    if (srcTy.getNumElements() == 1) {
      // One element for every slot (a per-program scalar such as x[r, 0]):
      // one load per thread.
      rewriter.replaceOp(op, vector::BroadcastOp::create(rewriter, loc, outTy,
                                                         acc.loadOriginOrZero()));
      return success();
    }
    SmallVector<int64_t> first = sharedSourceSlots(resTy, from);
    SmallVector<Value> elems;
    forEachThreadElement(rewriter, loc, resTy, [&](int64_t slot, Value e, bool mayPad) {
      if (first[slot] != slot) {
        elems.push_back(elems[first[slot]]);
        return;
      }
      // Result coordinates -> source flat index.
      Value src = tileFlat(rewriter, loc,
                           broadcastSource(tileCoords(rewriter, loc, e, resTy.getShape()), from),
                           from);
      Value inBounds;
      Value off = acc.offsetOf(src, false, &inBounds);
      if (mayPad)
        inBounds = acc.andI(inBounds, insideTile(rewriter, loc, e, resTy));
      elems.push_back(acc.loadOrZero(inBounds, off));
    });
    rewriter.replaceOp(op, vector::FromElementsOp::create(rewriter, loc, outTy, elems));
    return success();
  }
};

/// `tile.load_scalar`: the element as a [1, ..., 1] tile at tile indices
/// equal to the element indices, read by one guarded load in every thread
/// (the same address, so one transaction per warp), as the one-element
/// source of a broadcast load is.
struct LoadScalarLowering : LayoutPattern<tile::LoadScalarOp> {
  using LayoutPattern::LayoutPattern;

  LogicalResult
  matchAndRewrite(tile::LoadScalarOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto mk = op.getView().getDefiningOp<tile::MakeViewOp>();
    if (!mk)
      return rewriter.notifyMatchFailure(op, "view is not made by tile.make_view");
    Location loc = op.getLoc();
    Type elemTy = op.getType();
    SmallVector<int64_t> ones(adaptor.getIndices().size(), 1);
    TileAccess acc(rewriter, loc, mk, RankedTensorType::get(ones, elemTy), adaptor.getIndices(),
                   layout);
    rewriter.replaceOp(op, acc.loadOriginOrZero());
    return success();
  }
};

} // namespace

/// A store of `load(V, I) + X` back to V at I, with nothing written
/// between the load and the store: the operand of the sum that is the load
/// (0 or 1), or nullopt.
static std::optional<unsigned> readModifyWriteLoad(tile::StoreOp store) {
  auto add = store.getValue().getDefiningOp<arith::AddFOp>();
  if (!add || !add->hasOneUse())
    return std::nullopt;
  for (unsigned k = 0; k < 2; ++k) {
    auto load = add->getOperand(k).getDefiningOp<tile::LoadOp>();
    if (!load || !load->hasOneUse() || store.getView() != load.getView() ||
        store.getIndices() != load.getIndices() ||
        store.getValue().getType() != load.getType() || load->getBlock() != store->getBlock())
      continue;
    if (tile::mayWriteBetween(load, store))
      continue;
    return k; // one load per sum (both operands may be loads of the tile)
  }
  return std::nullopt;
}

/// See kReadModifyWriteLoadAttr.
void tilec::markReadModifyWrites(func::FuncOp func) {
  func.walk([&](tile::StoreOp store) {
    if (!isPipelined(encodingOf(store.getValue().getType())))
      return;
    std::optional<unsigned> k = readModifyWriteLoad(store);
    if (!k)
      return;
    Builder b(func.getContext());
    auto add = store.getValue().getDefiningOp<arith::AddFOp>();
    add->getOperand(*k).getDefiningOp()->setAttr(kReadModifyWriteLoadAttr, b.getUnitAttr());
    store->setAttr(kReadModifyWriteAddendAttr, b.getI64IntegerAttr(1 - *k));
  });
}

void tilec::populateLoadStoreToNVVMPatterns(const TypeConverter &converter,
                                            ThreadLayout layout,
                                            RewritePatternSet &patterns) {
  patterns.add<LoadLowering, StoreLowering, BroadcastLoadLowering, LoadScalarLowering>(
      converter, patterns.getContext(), layout);
}

Value tilec::predicatedLoad(OpBuilder &b, Location loc, Value cond, Value addr, Value pad,
                            Type elemTy) {
  AsmScalar p = toAsmScalar(b, loc, pad);
  Value a = LLVM::PtrToIntOp::create(b, loc, b.getI64Type(), addr);
  std::string text = "mov.b" + std::to_string(p.regBits) + " $0, $3;\n@$2 ld.global.b" +
                     std::to_string(p.memBits) + " $0, [$1];";
  Value x = inlineAsm(b, loc, TypeRange{p.reg.getType()}, ValueRange{a, cond, p.reg}, text,
                      std::string("=&") + p.constraint + ",l,b," + p.constraint);
  Type intTy = b.getIntegerType(p.memBits);
  if (p.memBits < p.regBits)
    x = arith::TruncIOp::create(b, loc, intTy, x);
  if (p.memTy != intTy)
    x = LLVM::BitcastOp::create(b, loc, p.memTy, x);
  return fromMemory(b, loc, x, elemTy);
}

void tilec::predicatedStore(OpBuilder &b, Location loc, Value cond, Value v, Value addr) {
  AsmScalar p = toAsmScalar(b, loc, v);
  Value a = LLVM::PtrToIntOp::create(b, loc, b.getI64Type(), addr);
  inlineAsm(b, loc, TypeRange{}, ValueRange{a, p.reg, cond},
            "@$2 st.global.b" + std::to_string(p.memBits) + " [$0], $1;",
            std::string("l,") + p.constraint + ",b");
}
