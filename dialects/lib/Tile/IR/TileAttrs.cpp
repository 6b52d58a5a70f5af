//===- TileAttrs.cpp - Layout encodings of the tile dialect ---------------===//
//
// Verifiers of the encodings and the distributed encodings' answer to
// "which elements does this thread hold": getGroupBase on the host and
// emitGroupBase as IR compute the same index, case by case.
//
//===----------------------------------------------------------------------===//

#include "tilec/Dialect/Tile/IR/TileDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace tilec::tile;

#include "tilec/Dialect/Tile/IR/TileEnums.cpp.inc"
#include "tilec/Dialect/Tile/IR/TileAttrInterfaces.cpp.inc"
#define GET_ATTRDEF_CLASSES
#include "tilec/Dialect/Tile/IR/TileAttrs.cpp.inc"

void TileDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "tilec/Dialect/Tile/IR/TileAttrs.cpp.inc"
      >();
}

static bool isPowerOf2(unsigned v) { return v && !(v & (v - 1)); }

//===----------------------------------------------------------------------===//
// blocked
//===----------------------------------------------------------------------===//

LogicalResult BlockedEncodingAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                          unsigned vec, unsigned warps) {
  if (!isPowerOf2(vec) || vec > 16)
    return emitError() << "#tile.blocked: vec must be a power of two up to 16, got " << vec;
  // tile-layout picks any count from 1 to 8 for its tiles (e.g. 7 warps for
  // 1000 elements); the blocked layout deals vectors to any number of
  // threads.
  if (warps < 1 || warps > 32)
    return emitError() << "#tile.blocked: warps must be 1 to 32, got " << warps;
  return success();
}

LogicalResult BlockedEncodingAttr::verifyEncoding(ArrayRef<int64_t> shape, Type,
                                                  function_ref<InFlightDiagnostic()> emitError) const {
  // A vector never straddles two rows.
  if (!shape.empty() && shape.back() % getVec() != 0)
    return emitError() << "#tile.blocked<vec = " << getVec() << ">: the innermost size "
                       << shape.back() << " of " << shapeText(shape)
                       << " is not a multiple of the vector width";
  return success();
}

unsigned BlockedEncodingAttr::getThreadsPerBlock() const { return 32 * getWarps(); }
unsigned BlockedEncodingAttr::getGroupWidth() const { return getVec(); }
unsigned BlockedEncodingAttr::getLeaderThread() const { return 0; }
bool BlockedEncodingAttr::isOwner(unsigned) const { return true; }
Value BlockedEncodingAttr::emitOwner(OpBuilder &, Location, function_ref<Value()>) const {
  return Value();
}

int64_t BlockedEncodingAttr::getGroups(ArrayRef<int64_t> shape) const {
  int64_t chunk = int64_t(getThreadsPerBlock()) * getVec();
  return (ShapedType::getNumElements(shape) + chunk - 1) / chunk;
}

bool BlockedEncodingAttr::groupMayPad(ArrayRef<int64_t> shape, int64_t group) const {
  return (group + 1) * int64_t(getThreadsPerBlock()) * getVec() >
         ShapedType::getNumElements(shape);
}

int64_t BlockedEncodingAttr::getGroupBase(ArrayRef<int64_t>, unsigned thread,
                                          int64_t group) const {
  return (group * getThreadsPerBlock() + thread) * int64_t(getVec());
}

Value BlockedEncodingAttr::emitGroupBase(OpBuilder &b, Location loc, Value tid,
                                         ArrayRef<int64_t>, int64_t group) const {
  auto c64 = [&](int64_t v) { return arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(v)); };
  return arith::AddIOp::create(b, loc, arith::MulIOp::create(b, loc, tid, c64(getVec())),
                               c64(group * int64_t(getThreadsPerBlock()) * getVec()));
}

//===----------------------------------------------------------------------===//
// mma accumulator
//===----------------------------------------------------------------------===//

LogicalResult MmaEncodingAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                      MmaKind kind, unsigned consumers, bool swapped,
                                      bool alternate) {
  if (consumers < 1 || consumers > 3 + (kind == MmaKind::mma_sync ? 1 : 0))
    return emitError() << "#tile.mma<kind = " << stringifyMmaKind(kind)
                       << ">: consumers must be 1 to " << (kind == MmaKind::mma_sync ? 4 : 3)
                       << " warpgroups, got " << consumers;
  if (swapped && kind != MmaKind::wgmma)
    return emitError() << "#tile.mma<kind = " << stringifyMmaKind(kind)
                       << ">: only a wgmma accumulator can be swapped";
  if (alternate && (kind != MmaKind::wgmma || swapped || consumers < 2))
    return emitError() << "#tile.mma<kind = " << stringifyMmaKind(kind)
                       << ">: alternate needs a wgmma accumulator, not swapped, and 2 or 3 "
                          "consumers to alternate between";
  return success();
}

/// Rows and columns of a [BM, BN] (or [1, ..., 1, BM, BN]) accumulator.
static std::pair<int64_t, int64_t> accShape(ArrayRef<int64_t> shape) {
  return {shape.end()[-2], shape.end()[-1]};
}

LogicalResult MmaEncodingAttr::verifyEncoding(ArrayRef<int64_t> shape, Type,
                                              function_ref<InFlightDiagnostic()> emitError) const {
  auto fail = [&](const Twine &what) {
    return emitError() << "#tile.mma<kind = " << stringifyMmaKind(getKind())
                       << ", consumers = " << getConsumers() << "> cannot hold a "
                       << shapeText(shape) << " tile: " << what;
  };
  if (shape.size() < 2 || !llvm::all_of(shape.drop_back(2), [](int64_t d) { return d == 1; }))
    return fail("an accumulator is [BM, BN] or [1, ..., 1, BM, BN]");
  auto [rows, cols] = accShape(shape);
  if (getKind() == MmaKind::fma) {
    if (cols % 64 != 0 || rows % (32 * int64_t(getShare())) != 0)
      return fail("BN must be a multiple of 64 and BM of 32 per consumer");
    return success();
  }
  if (getSwapped()) {
    if (rows % 8 != 0 || rows > 256 || cols % (64 * int64_t(getShare())) != 0)
      return fail("swapped, BM must be a multiple of 8 up to 256 and BN of 64 per consumer");
    return success();
  }
  if (cols % 8 != 0 || rows % (64 * int64_t(getShare())) != 0)
    return fail("BN must be a multiple of 8 and BM of 64 per consumer");
  return success();
}

unsigned MmaEncodingAttr::getThreadsPerBlock() const { return 32 * getWarps(); }
unsigned MmaEncodingAttr::getGroupWidth() const {
  return getKind() == MmaKind::fma ? 4 : getSwapped() ? 1 : 2;
}
// The producer warpgroup (threads 0-127) leaves after the loop.
unsigned MmaEncodingAttr::getLeaderThread() const { return hasProducer() ? 128 : 0; }
// A producer thread mirrors consumer 0 but never stores (it has left by the
// epilogue).
bool MmaEncodingAttr::isOwner(unsigned thread) const { return !hasProducer() || thread >= 128; }
Value MmaEncodingAttr::emitOwner(OpBuilder &, Location, function_ref<Value()>) const {
  return Value();
}

int64_t MmaEncodingAttr::getGroups(ArrayRef<int64_t> shape) const {
  return ShapedType::getNumElements(shape) / (128 * int64_t(getShare())) / getGroupWidth();
}

bool MmaEncodingAttr::groupMayPad(ArrayRef<int64_t>, int64_t) const { return false; }

// The row of the wgmma / mma.sync fragments that thread `tid` holds in
// 64-row block mb, half h (upper/lower 8 rows), of an accumulator with
// rowsPerWG rows per consumer: consumer * rowsPerWG + 16 * warp + lane / 4 +
// 64 * mb + 8 * h. Code before the mma loop also runs in the producer
// warpgroup (0): it takes consumer 0's positions, so its loads stay inside
// the tile (its values are never stored: side effects come after the loop).
// The mma and slice encodings share it, on the host and as IR.
static int64_t fragmentRow(MmaEncodingAttr mma, int64_t tid, int64_t rowsPerWG, int64_t mb,
                           int64_t h) {
  int64_t wg = tid / 128;
  int64_t consumer = mma.getAlternate() ? 0 : mma.hasProducer() ? std::max<int64_t>(wg, 1) - 1 : wg;
  int64_t warp = (tid / 32) % 4, lane = tid % 32;
  return consumer * rowsPerWG + warp * 16 + lane / 4 + mb * 64 + 8 * h;
}

/// fragmentRow as IR (i64); `lane` is set to the thread's lane.
static Value emitFragmentRow(OpBuilder &b, Location loc, MmaEncodingAttr mma, Value tid64,
                             int64_t rowsPerWG, int64_t mb, int64_t h, Value &lane) {
  auto c64 = [&](int64_t v) { return arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(v)); };
  Value wg = arith::DivUIOp::create(b, loc, tid64, c64(128));
  Value consumer = mma.getAlternate() ? c64(0)
                   : mma.hasProducer()
                       ? Value(arith::SubIOp::create(
                             b, loc, arith::MaxUIOp::create(b, loc, wg, c64(1)), c64(1)))
                       : wg;
  Value warp = arith::RemUIOp::create(b, loc, arith::DivUIOp::create(b, loc, tid64, c64(32)), c64(4));
  lane = arith::RemUIOp::create(b, loc, tid64, c64(32));
  return arith::AddIOp::create(
      b, loc,
      arith::AddIOp::create(b, loc, arith::MulIOp::create(b, loc, consumer, c64(rowsPerWG)),
                            arith::MulIOp::create(b, loc, warp, c64(16))),
      arith::AddIOp::create(b, loc, arith::DivUIOp::create(b, loc, lane, c64(4)),
                            c64(mb * 64 + 8 * h)));
}

int64_t MmaEncodingAttr::getGroupBase(ArrayRef<int64_t> shape, unsigned thread,
                                      int64_t g) const {
  auto [rows, cols] = accShape(shape);
  int64_t tid = thread;
  if (getKind() == MmaKind::fma) {
    int64_t colBlocks = cols / 64, rowStep = 32 * int64_t(getShare());
    int64_t cb = g % colBlocks, i = (g / colBlocks) % 4, rb = g / (colBlocks * 4);
    int64_t c = tid < 128 ? tid : tid - 128;
    int64_t tx = c % 16, ty = c / 16;
    return (ty + rowStep / 4 * i + rb * rowStep) * cols + 4 * tx + cb * 64;
  }
  if (getSwapped()) {
    // Register g of the [BN, BM] wgmma result: (mb, j, h, v).
    int64_t chunks = rows / 8;
    int64_t v = g % 2, h = (g / 2) % 2, j = (g / 4) % chunks, mb = g / (4 * chunks);
    int64_t col = fragmentRow(*this, tid, cols / getShare(), mb, h);
    return (8 * j + 2 * (tid % 32 % 4) + v) * cols + col;
  }
  int64_t chunks = cols / 8;
  int64_t mb = g / (chunks * 2), j = (g / 2) % chunks, h = g % 2;
  int64_t row = fragmentRow(*this, tid, rows / getShare(), mb, h);
  return row * cols + 2 * (tid % 32 % 4) + 8 * j;
}

Value MmaEncodingAttr::emitGroupBase(OpBuilder &b, Location loc, Value tid64,
                                     ArrayRef<int64_t> shape, int64_t g) const {
  auto c64 = [&](int64_t v) { return arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(v)); };
  auto [rows, cols] = accShape(shape);
  if (getKind() == MmaKind::fma) {
    // g = (rb, i, cb). The producer warpgroup (tid < 128) takes consumer
    // 0's positions.
    int64_t colBlocks = cols / 64, rowStep = 32 * int64_t(getShare());
    int64_t cb = g % colBlocks, i = (g / colBlocks) % 4, rb = g / (colBlocks * 4);
    Value c = arith::SelectOp::create(
        b, loc, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, tid64, c64(128)),
        tid64, arith::SubIOp::create(b, loc, tid64, c64(128)));
    Value tx = arith::RemUIOp::create(b, loc, c, c64(16));
    Value ty = arith::DivUIOp::create(b, loc, c, c64(16));
    Value row = arith::AddIOp::create(b, loc, ty, c64(rb * rowStep + rowStep / 4 * i));
    Value col = arith::AddIOp::create(b, loc, arith::MulIOp::create(b, loc, tx, c64(4)),
                                      c64(cb * 64));
    return arith::AddIOp::create(b, loc, arith::MulIOp::create(b, loc, row, c64(cols)), col);
  }
  if (getSwapped()) {
    int64_t chunks = rows / 8;
    int64_t v = g % 2, h = (g / 2) % 2, j = (g / 4) % chunks, mb = g / (4 * chunks);
    Value lane;
    Value col = emitFragmentRow(b, loc, *this, tid64, cols / getShare(), mb, h, lane);
    Value row = arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, arith::RemUIOp::create(b, loc, lane, c64(4)), c64(2)),
        c64(8 * j + v));
    return arith::AddIOp::create(b, loc, arith::MulIOp::create(b, loc, row, c64(cols)), col);
  }
  // g = (mb, j, h): 64-row block, 8-column chunk, upper/lower 8 rows.
  int64_t chunks = cols / 8;
  int64_t mb = g / (chunks * 2), j = (g / 2) % chunks, h = g % 2;
  Value lane;
  Value row = emitFragmentRow(b, loc, *this, tid64, rows / getShare(), mb, h, lane);
  Value col = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, arith::RemUIOp::create(b, loc, lane, c64(4)), c64(2)),
      c64(8 * j));
  return arith::AddIOp::create(b, loc, arith::MulIOp::create(b, loc, row, c64(cols)), col);
}

//===----------------------------------------------------------------------===//
// slice, dot operand, shared
//===----------------------------------------------------------------------===//

LogicalResult SliceEncodingAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                        unsigned dim, Attribute parent, int64_t size) {
  if (auto blocked = dyn_cast<BlockedEncodingAttr>(parent)) {
    if (dim != 1)
      return emitError() << "#tile.slice of " << parent
                         << ": only dim = 1 (a reduction over the rows' elements) is supported, "
                            "got dim = "
                         << dim;
    if (!rowLengthFits(blocked, size))
      return emitError() << "#tile.slice of " << parent
                         << ": size (the parent's row length) must be a power of two times vec, "
                            "got "
                         << size;
    if (!rowLanesFit(blocked, size))
      return emitError() << "#tile.slice of " << parent << ": a row of " << size
                         << " elements lies in " << size / blocked.getVec()
                         << " threads, which neither divides nor is a multiple of the block's "
                         << blocked.getThreadsPerBlock();
    return success();
  }
  auto mma = dyn_cast<MmaEncodingAttr>(parent);
  if (!mma || mma.getKind() == MmaKind::fma || mma.getSwapped())
    return emitError() << "#tile.slice: the parent must be a wgmma or mma_sync #tile.mma "
                          "encoding, not swapped, or a #tile.blocked one (other parents are not "
                          "supported yet), got "
                       << parent;
  if (size != 0)
    return emitError() << "#tile.slice: size is for a blocked parent; an accumulator's slice "
                          "has none, got size = "
                       << size;
  if (dim > 1)
    return emitError() << "#tile.slice: dim is 1 (a reduction over the accumulator's columns, "
                          "leaving its rows) or 0 (over its rows, leaving its columns), got dim = "
                       << dim;
  if (dim == 0 && mma.getAlternate())
    return emitError() << "#tile.slice: dim = 0 of an alternating accumulator (each consumer "
                          "holding its own tile) is not supported, got "
                       << parent;
  return success();
}

/// The elements of a #tile.slice tile: [N], [N, 1] or [1, N] (a row of
/// row values, to store into a row of a matrix, or a row of column
/// values); its flat index is the row (dim = 1) or column (dim = 0).
static int64_t sliceElements(ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

bool SliceEncodingAttr::rowLengthFits(BlockedEncodingAttr parent, int64_t size) {
  int64_t lanes = size / parent.getVec();
  return size > 0 && size % parent.getVec() == 0 && lanes <= (1 << 20) &&
         isPowerOf2(unsigned(lanes));
}

bool SliceEncodingAttr::rowLanesFit(BlockedEncodingAttr parent, int64_t size) {
  int64_t lanes = size / parent.getVec(), threads = parent.getThreadsPerBlock();
  return lanes > 0 && (lanes <= threads ? threads % lanes : lanes % threads) == 0;
}

unsigned SliceEncodingAttr::getRowLanes() const {
  auto blocked = cast<BlockedEncodingAttr>(getParent());
  int64_t lanes = getSize() / blocked.getVec();
  return unsigned(std::min<int64_t>(lanes, blocked.getThreadsPerBlock()));
}

int64_t SliceEncodingAttr::getRowRepeat() const {
  auto blocked = cast<BlockedEncodingAttr>(getParent());
  return std::max<int64_t>(1, getSize() / blocked.getVec() / blocked.getThreadsPerBlock());
}

LogicalResult SliceEncodingAttr::verifyEncoding(ArrayRef<int64_t> shape, Type,
                                                function_ref<InFlightDiagnostic()> emitError) const {
  bool rowsShape = !shape.empty() && shape.size() <= 2 &&
                   (shape.size() == 1 || shape[1] == 1 || shape[0] == 1);
  if (isa<BlockedEncodingAttr>(getParent())) {
    if (shape.empty() || shape.size() > 2 || (shape.size() == 2 && shape[1] != 1))
      return emitError() << "#tile.slice of " << getParent() << " holds [R] or [R, 1] tiles, not "
                         << shapeText(shape);
    return success();
  }
  auto mma = cast<MmaEncodingAttr>(getParent());
  if (getDim() == 0) {
    bool colsShape = shape.size() == 1 || (shape.size() == 2 && shape[0] == 1);
    if (!colsShape || sliceElements(shape) % 8 != 0)
      return emitError() << "#tile.slice<dim = 0> of " << mma
                         << " holds [BN] or [1, BN] tiles with BN a multiple of 8, not "
                         << shapeText(shape);
    return success();
  }
  if (!rowsShape || sliceElements(shape) % (64 * int64_t(mma.getShare())) != 0)
    return emitError() << "#tile.slice of " << mma << " holds [BM], [BM, 1] or [1, BM] tiles "
                       << "with BM a multiple of 64 per consumer, not " << shapeText(shape);
  return success();
}

unsigned SliceEncodingAttr::getThreadsPerBlock() const {
  return cast<DistributedEncodingAttr>(getParent()).getThreadsPerBlock();
}
// Rows: one per group; columns: the 2 of an 8-column chunk.
unsigned SliceEncodingAttr::getGroupWidth() const { return getDim() == 0 ? 2 : 1; }
unsigned SliceEncodingAttr::getLeaderThread() const {
  return cast<DistributedEncodingAttr>(getParent()).getLeaderThread();
}
int64_t SliceEncodingAttr::getGroups(ArrayRef<int64_t> shape) const {
  if (isa<BlockedEncodingAttr>(getParent())) {
    int64_t threads = getThreadsPerBlock();
    return (sliceElements(shape) * getRowLanes() + threads - 1) / threads;
  }
  auto mma = cast<MmaEncodingAttr>(getParent());
  if (getDim() == 0)
    return sliceElements(shape) / 8;
  return sliceElements(shape) / (64 * int64_t(mma.getShare())) * 2;
}
bool SliceEncodingAttr::groupMayPad(ArrayRef<int64_t> shape, int64_t g) const {
  if (isa<BlockedEncodingAttr>(getParent()))
    return (g + 1) * int64_t(getThreadsPerBlock()) > sliceElements(shape) * getRowLanes();
  return false;
}

// Rows ([BM], [BM, 1] or [1, BM]) in the parent's row distribution: thread
// t holds, for each 64-row block mb and half h, row
// consumer * rowsPerWG + 16 * warp + lane / 4 + 64 * mb + 8 * h. Columns
// ([BN] or [1, BN]): for each 8-column chunk j, columns 8 * j + 2 * (lane %
// 4) and the next. Rows of a blocked parent: (g * threads + t) / L.
int64_t SliceEncodingAttr::getGroupBase(ArrayRef<int64_t> shape, unsigned thread,
                                        int64_t g) const {
  if (isa<BlockedEncodingAttr>(getParent()))
    return (g * int64_t(getThreadsPerBlock()) + thread) / getRowLanes();
  auto mma = cast<MmaEncodingAttr>(getParent());
  if (getDim() == 0)
    return 8 * g + 2 * (thread % 32 % 4);
  return fragmentRow(mma, thread, sliceElements(shape) / mma.getShare(), g / 2, g % 2);
}

Value SliceEncodingAttr::emitGroupBase(OpBuilder &b, Location loc, Value tid64,
                                       ArrayRef<int64_t> shape, int64_t g) const {
  auto c64 = [&](int64_t v) { return arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(v)); };
  if (isa<BlockedEncodingAttr>(getParent()))
    return arith::DivUIOp::create(
        b, loc, arith::AddIOp::create(b, loc, tid64, c64(g * int64_t(getThreadsPerBlock()))),
        c64(getRowLanes()));
  auto mma = cast<MmaEncodingAttr>(getParent());
  if (getDim() == 0)
    return arith::AddIOp::create(
        b, loc,
        arith::MulIOp::create(b, loc, arith::RemUIOp::create(b, loc, tid64, c64(4)), c64(2)),
        c64(8 * g));
  Value lane;
  return emitFragmentRow(b, loc, mma, tid64, sliceElements(shape) / mma.getShare(), g / 2, g % 2,
                         lane);
}

// Rows: lane 0 of each quad. Columns: lanes 0-3 of the first consumer warp
// (the leader thread's warp). Rows of a blocked parent: the first of the L
// threads that hold the row.
bool SliceEncodingAttr::isOwner(unsigned thread) const {
  if (isa<BlockedEncodingAttr>(getParent()))
    return thread % getRowLanes() == 0;
  auto mma = cast<MmaEncodingAttr>(getParent());
  if (getDim() == 0)
    return thread >= getLeaderThread() && thread < getLeaderThread() + 4;
  return mma.isOwner(thread) && thread % 4 == 0;
}

Value SliceEncodingAttr::emitOwner(OpBuilder &b, Location loc, function_ref<Value()> tid) const {
  auto c64 = [&](int64_t v) { return arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(v)); };
  if (isa<BlockedEncodingAttr>(getParent())) {
    if (getRowLanes() == 1)
      return Value();
    Value lane = arith::AndIOp::create(b, loc, tid(), c64(getRowLanes() - 1));
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane, c64(0));
  }
  if (getDim() == 0)
    return arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::ult,
        arith::SubIOp::create(b, loc, tid(), c64(getLeaderThread())), c64(4));
  // Lane 0 of each quad; the producer warpgroup has left by the epilogue.
  Value quadLane = arith::AndIOp::create(b, loc, tid(), c64(3));
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, quadLane, c64(0));
}

LogicalResult DotOperandEncodingAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                             unsigned opIdx, Attribute parent, unsigned kWidth) {
  if (opIdx > 1)
    return emitError() << "#tile.dot_operand: opIdx is 0 (A) or 1 (B), got " << opIdx;
  if (!isa<MmaEncodingAttr>(parent))
    return emitError() << "#tile.dot_operand: the parent must be a #tile.mma encoding, got "
                       << parent;
  if (!isPowerOf2(kWidth) || kWidth > 16)
    return emitError() << "#tile.dot_operand: kWidth must be a power of two up to 16, got "
                       << kWidth;
  return success();
}

LogicalResult SharedEncodingAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                         unsigned swizzle, ArrayRef<unsigned> order) {
  if (swizzle != 0 && swizzle != 32 && swizzle != 64 && swizzle != 128)
    return emitError() << "#tile.shared: swizzle is 0, 32, 64 or 128 bytes, got " << swizzle;
  SmallVector<bool> seen(order.size(), false);
  for (unsigned d : order) {
    if (d >= order.size() || seen[d])
      return emitError() << "#tile.shared: order must be a permutation of 0.."
                         << order.size() - 1;
    seen[d] = true;
  }
  if (order.empty())
    return emitError() << "#tile.shared: order must name every dimension";
  return success();
}
