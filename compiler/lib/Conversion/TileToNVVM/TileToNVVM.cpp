//===- TileToNVVM.cpp - the convert-tile-to-nvvm pass ---------------------===//
//
// Drives the conversion of each kernel from tiles to per-thread code. The
// type converter maps a tile (ranked tensor) to the vector of elements one
// thread owns under the kernel's ThreadLayout; the op-family files hold the
// patterns. Grid queries and views are handled here.
//
//===----------------------------------------------------------------------===//

#include "tilec/Conversion/Passes.h"

#include "MmaCommon.h"
#include "PatternsNVVM.h"
#include "tilec/Dialect/Tile/IR/TileDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Patterns.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/IR/BuiltinOps.h"

#define DEBUG_TYPE "convert-tile-to-nvvm"

namespace tilec {
#define GEN_PASS_DEF_CONVERTTILETONVVM
#include "tilec/Conversion/Passes.h.inc"
} // namespace tilec

using namespace mlir;
using namespace tilec;

bool tilec::needsNVVMLowering(Operation *op) {
  if (isa<tile::MakeViewOp>(op))
    return false;
  if (isa<tile::TileDialect>(op->getDialect()))
    return true;
  // Lowered here (fast GPU units), whether on tiles or scalars. An f32
  // exp2 on scalars or vectors is left to math-to-llvm (ex2.approx).
  if (hasApproxLowering(op))
    return true;
  // Tiles, and f8 scalars (bytes in registers).
  auto isTensor = [](Type t) {
    return isa<RankedTensorType>(t) || tile::isFloat8(t);
  };
  if (auto e2 = dyn_cast<math::Exp2Op>(op))
    if (!getElementTypeOrSelf(e2.getType()).isF32() || flushesSubnormals(op))
      return true;
  return llvm::any_of(op->getOperandTypes(), isTensor) ||
         llvm::any_of(op->getResultTypes(), isTensor);
}

bool tilec::flushesSubnormals(Operation *op) {
  auto func = op->getParentOfType<func::FuncOp>();
  return func && func->hasAttr(tile::kFtzAttrName);
}

Value tilec::groupBase(OpBuilder &b, Location loc, RankedTensorType t, int64_t g) {
  Value tid = NVVM::ThreadIdXOp::create(b, loc, b.getI32Type());
  Value tid64 = arith::ExtUIOp::create(b, loc, b.getI64Type(), tid);
  return encodingOf(t).emitGroupBase(b, loc, tid64, t.getShape(), g);
}

void tilec::forEachThreadElement(OpBuilder &b, Location loc, RankedTensorType tile,
                                 function_ref<void(int64_t, Value, bool)> fn) {
  ThreadLayout layout = encodingOf(tile);
  for (int64_t g = 0; g < layout.getGroups(tile.getShape()); ++g) {
    Value base = groupBase(b, loc, tile, g);
    for (unsigned v = 0; v < layout.getGroupWidth(); ++v) {
      Value e = v ? Value(arith::AddIOp::create(
                        b, loc, base, constI64(b, loc, v)))
                  : base;
      fn(g * layout.getGroupWidth() + v, e, layout.groupMayPad(tile.getShape(), g));
    }
  }
}

Value tilec::insideTile(OpBuilder &b, Location loc, Value flat, RankedTensorType tile) {
  return arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::ult, flat,
      constI64(b, loc, tile.getNumElements()));
}

void tilec::ifThen(OpBuilder &b, Location loc, Value cond, function_ref<void()> body) {
  auto ifOp = scf::IfOp::create(b, loc, TypeRange{}, cond, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  body();
}

Type tilec::memoryType(Type elem) {
  return elem.isInteger(1) ? IntegerType::get(elem.getContext(), 8) : elem;
}

Value tilec::toMemory(OpBuilder &b, Location loc, Value v) {
  Type elem = getElementTypeOrSelf(v.getType());
  if (!elem.isInteger(1))
    return v;
  Type to = memoryType(elem);
  if (auto vt = dyn_cast<VectorType>(v.getType()))
    to = VectorType::get(vt.getShape(), to);
  return arith::ExtUIOp::create(b, loc, to, v);
}

Value tilec::fromMemory(OpBuilder &b, Location loc, Value v, Type elem) {
  if (!elem.isInteger(1))
    return v;
  Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(v.getType()));
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, v, zero);
}

SmallVector<Value> tilec::tileCoords(OpBuilder &b, Location loc, Value flat,
                                     ArrayRef<int64_t> shape, bool wrapOutermost) {
  auto c64 = [&](int64_t v) { return constI64(b, loc, v); };
  SmallVector<Value> coords(shape.size());
  int64_t inner = 1;
  for (int64_t d = shape.size() - 1; d >= 0; --d) {
    Value c = flat;
    if (inner > 1)
      c = arith::DivUIOp::create(b, loc, c, c64(inner));
    if (d > 0 || wrapOutermost)
      c = arith::RemUIOp::create(b, loc, c, c64(shape[d]));
    inner *= shape[d];
    coords[d] = c;
  }
  return coords;
}

Value tilec::tileFlat(OpBuilder &b, Location loc, ArrayRef<Value> coords,
                      ArrayRef<int64_t> shape) {
  Value flat;
  int64_t stride = 1;
  for (int64_t d = shape.size() - 1; d >= 0; --d) {
    if (coords[d]) {
      Value term = stride == 1 ? coords[d]
                               : Value(arith::MulIOp::create(
                                     b, loc, coords[d],
                                     constI64(b, loc, stride)));
      flat = flat ? Value(arith::AddIOp::create(b, loc, flat, term)) : term;
    }
    stride *= shape[d];
  }
  return flat ? flat : constI64(b, loc, 0);
}

SmallVector<Value> tilec::broadcastSource(ArrayRef<Value> coords, ArrayRef<int64_t> from) {
  size_t lead = coords.size() - from.size();
  SmallVector<Value> src;
  for (size_t d = 0; d < from.size(); ++d)
    src.push_back(from[d] == 1 ? Value() : coords[d + lead]);
  return src;
}

Value tilec::threadFlatIndices(OpBuilder &b, Location loc, RankedTensorType tile) {
  ThreadLayout layout = encodingOf(tile);
  auto ty = VectorType::get({layout.getElemsPerThread(tile.getShape())}, b.getI32Type());
  if (isa<tile::BlockedEncodingAttr>(layout)) {
    // Slot (r, v) is (r * threads + tid) * vec + v: a constant plus a splat.
    Value tid = NVVM::ThreadIdXOp::create(b, loc, b.getI32Type());
    Value base = arith::MulIOp::create(
        b, loc, tid, constI32(b, loc, int32_t(layout.getGroupWidth())));
    SmallVector<int32_t> offsets;
    for (int64_t r = 0; r < layout.getGroups(tile.getShape()); ++r)
      for (unsigned v = 0; v < layout.getGroupWidth(); ++v)
        offsets.push_back(int32_t(r * layout.getThreadsPerBlock() * layout.getGroupWidth() + v));
    Value offs = arith::ConstantOp::create(
        b, loc, ty, DenseElementsAttr::get(ty, ArrayRef<int32_t>(offsets)));
    return arith::AddIOp::create(b, loc, vector::BroadcastOp::create(b, loc, ty, base), offs);
  }
  Value result = arith::ConstantOp::create(
      b, loc, ty, DenseElementsAttr::get(ty, b.getI32IntegerAttr(0)));
  forEachThreadElement(b, loc, tile, [&](int64_t slot, Value flat, bool) {
    Value e = arith::TruncIOp::create(b, loc, b.getI32Type(), flat);
    result = vector::InsertOp::create(b, loc, e, result, ArrayRef<int64_t>{slot});
  });
  return result;
}

/// A shared-memory global of the kernel's module (once per name).
void tilec::addSharedGlobal(Operation *kernel, StringRef name, Type type,
                            LLVM::Linkage linkage, uint64_t alignment) {
  auto module = kernel->getParentOfType<ModuleOp>();
  if (module.lookupSymbol(name))
    return;
  OpBuilder mb(kernel->getContext());
  mb.setInsertionPointToStart(module.getBody());
  LLVM::GlobalOp::create(mb, kernel->getLoc(), type, /*isConstant=*/false, linkage, name,
                         Attribute(), alignment, /*addrSpace=*/3);
}

namespace {

template <typename OpTy, typename XOp, typename YOp, typename ZOp>
struct GridQueryLowering : OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type i32 = rewriter.getI32Type();
    Value v;
    switch (op.getDim()) {
    case 0: v = XOp::create(rewriter, loc, i32); break;
    case 1: v = YOp::create(rewriter, loc, i32); break;
    default: v = ZOp::create(rewriter, loc, i32); break;
    }
    rewriter.replaceOp(op, v);
    return success();
  }
};
using BlockIdLowering =
    GridQueryLowering<tile::BlockIdOp, NVVM::BlockIdXOp, NVVM::BlockIdYOp,
                      NVVM::BlockIdZOp>;
using NumBlocksLowering =
    GridQueryLowering<tile::NumBlocksOp, NVVM::GridDimXOp, NVVM::GridDimYOp,
                      NVVM::GridDimZOp>;

/// `tile.view_dim` / `tile.view_stride` read the operands of the make_view.
template <typename OpTy, bool isSize>
struct ViewQueryLowering : OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto mk = op.getView().template getDefiningOp<tile::MakeViewOp>();
    if (!mk)
      return rewriter.notifyMatchFailure(op, "view is not made by tile.make_view");
    rewriter.replaceOp(op, isSize ? mk.getSizes()[op.getDim()]
                                  : mk.getStrides()[op.getDim()]);
    return success();
  }
};

struct SplatLowering : OpConversionPattern<tile::SplatOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(tile::SplatOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Type ty = getTypeConverter()->convertType(op.getType());
    rewriter.replaceOpWithNewOp<vector::BroadcastOp>(op, ty, adaptor.getValue());
    return success();
  }
};

/// `tile.reshape` keeps the row-major order, and the blocked layout assigns
/// elements by flat index: every thread already holds the right elements.

/// The index along `dim` of each element a thread holds of the n-D tile
/// `ty`, as one splat plus a constant vector, when the encoding allows
/// it: the index of slot s is the index of the thread's first element
/// plus an offset that is the same for every thread (true of the mma
/// fragments: a column is 2 * (lane % 4) + 8j + v). Null otherwise.
static Value indexAlongDim(OpBuilder &b, Location loc, RankedTensorType ty, int64_t dim) {
  ThreadLayout layout = encodingOf(ty);
  ArrayRef<int64_t> shape = ty.getShape();
  if (ty.getRank() < 2 || layout.mayPad(shape))
    return Value();
  int64_t inner = 1;
  for (int64_t k = dim + 1; k < ty.getRank(); ++k)
    inner *= shape[k];
  auto coord = [&](int64_t flat) { return (flat / inner) % shape[dim]; };
  int64_t groups = layout.getGroups(shape), width = layout.getGroupWidth();
  SmallVector<int32_t> offsets;
  bool seen = false;
  for (unsigned t = 0; t < layout.getThreadsPerBlock(); ++t) {
    if (!layout.isOwner(t)) // the producer warpgroup holds no tiles
      continue;
    int64_t first = coord(layout.getGroupBase(shape, t, 0));
    for (int64_t g = 0; g < groups; ++g)
      for (int64_t v = 0; v < width; ++v) {
        int64_t off = coord(layout.getGroupBase(shape, t, g) + v) - first;
        size_t slot = size_t(g * width + v);
        if (!seen)
          offsets.push_back(int32_t(off));
        else if (offsets[slot] != off)
          return Value();
      }
    seen = true;
  }
  auto vt = VectorType::get({int64_t(offsets.size())}, b.getI32Type());
  Value base = arith::TruncIOp::create(b, loc, b.getI32Type(), groupBase(b, loc, ty, 0));
  if (inner > 1)
    base = arith::DivUIOp::create(b, loc, base, constI32(b, loc, int32_t(inner)));
  if (dim > 0)
    base = arith::RemUIOp::create(b, loc, base, constI32(b, loc, int32_t(shape[dim])));
  Value offs = arith::ConstantOp::create(
      b, loc, vt, DenseElementsAttr::get(vt, ArrayRef<int32_t>(offsets)));
  return arith::AddIOp::create(b, loc, vector::BroadcastOp::create(b, loc, vt, base), offs);
}

/// `tile.range`: thread t's slot (r, v) holds flat index (r*threads + t)*vec + v,
/// which for a 1-D tile is the element's value.
struct RangeLowering : LayoutPattern<tile::RangeOp> {
  using LayoutPattern::LayoutPattern;
  LogicalResult
  matchAndRewrite(tile::RangeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RankedTensorType ty = op.getType();
    if (Value fast = indexAlongDim(rewriter, op.getLoc(), ty, op.getIndexDim())) {
      rewriter.replaceOp(op, fast);
      return success();
    }
    Value flat = threadFlatIndices(rewriter, op.getLoc(), ty);
    if (ty.getRank() > 1) {
      // The index along `dim`: (flat / inner) % size.
      int64_t d = op.getIndexDim(), inner = 1;
      for (int64_t k = d + 1; k < ty.getRank(); ++k)
        inner *= ty.getDimSize(k);
      auto vt = cast<VectorType>(flat.getType());
      auto splat = [&](int64_t v) {
        return arith::ConstantOp::create(rewriter, op.getLoc(), vt,
                                         DenseElementsAttr::get(vt, rewriter.getI32IntegerAttr(
                                                                        int32_t(v))));
      };
      if (inner > 1)
        flat = arith::DivUIOp::create(rewriter, op.getLoc(), flat, splat(inner));
      if (d > 0)
        flat = arith::RemUIOp::create(rewriter, op.getLoc(), flat, splat(ty.getDimSize(d)));
    }
    rewriter.replaceOp(op, flat);
    return success();
  }
};

/// Float-to-integer casts saturate (docs/language.md): NaN gives 0, values
/// outside the type's range its minimum or maximum. PTX's cvt.rzi does
/// that for 16 and 32 bits, but not for NaN to 64 bits (the H200 gives
/// INT64_MIN), and LLVM converts to 8 bits through 16 and truncates (300.0
/// to i8 would be 44): those become llvm.fpto[su]i.sat, which NVPTX clamps.
static void saturateFloatToInt(func::FuncOp func) {
  SmallVector<Operation *> casts;
  func.walk([&](Operation *op) {
    if (!isa<arith::FPToSIOp, arith::FPToUIOp>(op))
      return;
    unsigned bits = getElementTypeOrSelf(op->getResult(0).getType()).getIntOrFloatBitWidth();
    if (bits == 8 || bits == 64)
      casts.push_back(op);
  });
  for (Operation *op : casts) {
    OpBuilder b(op);
    StringRef name = isa<arith::FPToSIOp>(op) ? "llvm.fptosi.sat" : "llvm.fptoui.sat";
    auto call = LLVM::CallIntrinsicOp::create(b, op->getLoc(), op->getResult(0).getType(),
                                              b.getStringAttr(name), op->getOperands());
    op->getResult(0).replaceAllUsesWith(call.getResult(0));
    op->erase();
  }
}

struct ConvertTileToNVVMPass
    : tilec::impl::ConvertTileToNVVMBase<ConvertTileToNVVMPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (auto func : llvm::make_early_inc_range(module.getOps<func::FuncOp>())) {
      if (!func->hasAttr(tile::kKernelAttrName))
        continue;
      if (failed(convertKernel(func)))
        return signalPassFailure();
    }
    // erf has no NVPTX instruction or LLVM lowering: a polynomial in f32.
    SmallVector<Operation *> erfs;
    module.walk([&](math::ErfOp op) { erfs.push_back(op); });
    if (!erfs.empty()) {
      RewritePatternSet approx(&getContext());
      populatePolynomialApproximateErfPattern(approx);
      GreedyRewriteConfig config;
      config.setStrictness(GreedyRewriteStrictness::ExistingOps);
      (void)applyOpPatternsGreedily(erfs, std::move(approx), config);
    }
  }

  LogicalResult convertKernel(func::FuncOp func) {
    auto layout = func->getAttrOfType<ThreadLayout>(tile::kEncodingAttrName);
    if (!layout)
      return func.emitError("kernel has no thread layout; run tile-layout first");
    // General mma pipelines become producer code, mbarriers and operands in
    // shared memory (tile.shared_tile) first; the patterns lower the rest.
    if (failed(lowerGeneralPipelines(func)))
      return failure();
    // Every tile carries its encoding (tile-layout puts them on the types),
    // over the kernel's threads. Only the ops that move data between threads
    // (through shared memory) may take and give tiles in different
    // distributed encodings (and tile.wgmma_wait, which hands each tile
    // through as it is); every other op computes each element in the
    // thread that holds it.
    WalkResult encoded = func.walk([&](Operation *op) {
      bool movesData = isa<tile::BroadcastOp, tile::ConvertLayoutOp, tile::PermuteOp,
                           tile::SliceOp, tile::TakeOp, tile::ReduceOp, tile::MmaOp,
                           tile::BroadcastLoadOp, tile::WgmmaWaitOp>(op) ||
                       op->getNumRegions() > 0 || op->hasTrait<OpTrait::IsTerminator>();
      Attribute common;
      auto check = [&](Value v) -> LogicalResult {
        auto t = dyn_cast<RankedTensorType>(v.getType());
        if (!t)
          return success();
        if (!t.getEncoding())
          return op->emitError() << "tile " << t << " has no layout encoding; run tile-layout first";
        auto distributed = dyn_cast<ThreadLayout>(t.getEncoding());
        if (!distributed)
          return success();
        if (distributed.getThreadsPerBlock() != layout.getThreadsPerBlock())
          return op->emitError() << "tile " << t << " is spread over "
                                 << distributed.getThreadsPerBlock() << " threads, the kernel over "
                                 << layout.getThreadsPerBlock();
        // A tile of accumulator rows is held by the 4 lanes of a quad: only
        // work that treats each copy alike may take it.
        if (isa<tile::SliceEncodingAttr>(distributed) && llvm::is_contained(op->getOperands(), v) &&
            !isa<tile::ReshapeOp, tile::BroadcastOp, tile::StoreOp, tile::WgmmaWaitOp>(op) &&
            !isa<arith::ArithDialect, math::MathDialect, scf::SCFDialect>(op->getDialect()))
          return op->emitError() << "a tile of accumulator rows (a reduction over axis 1) can be "
                                    "used in elementwise work, broadcast back to the accumulator "
                                    "or stored; '"
                                 << op->getName() << "' on it is not supported yet";
        if (!movesData && common && common != distributed)
          return op->emitError() << "operands and results in different layouts " << common
                                 << " and " << distributed << " (insert tile.convert_layout)";
        common = distributed;
        return success();
      };
      for (Value v : op->getOperands())
        if (failed(check(v)))
          return WalkResult::interrupt();
      for (Value v : op->getResults())
        if (failed(check(v)))
          return WalkResult::interrupt();
      return WalkResult::advance();
    });
    if (encoded.wasInterrupted())
      return failure();

    MLIRContext *ctx = &getContext();
    // The buffers tile-plan-shared planned, as globals (one per buffer, so
    // that tile-elide-barriers tells them apart; tile-place-shared then puts
    // them into the kernel's dynamic array if it has one).
    auto plan = func->getAttrOfType<DictionaryAttr>(tile::kSharedBuffersAttrName);
    if (!plan)
      return func.emitError("kernel has no shared-memory plan; run tile-plan-shared first");
    auto plannedBytes = [&](StringRef name) -> int64_t {
      auto range = dyn_cast_or_null<DenseI64ArrayAttr>(plan.get(name));
      return range ? range.asArrayRef()[1] : 0;
    };
    auto bytesType = [&](int64_t n) -> Type {
      return LLVM::LLVMArrayType::get(IntegerType::get(ctx, 8), n);
    };
    if (int64_t bytes = plannedBytes(reduceScratchName(func.getName())))
      addSharedGlobal(func, reduceScratchName(func.getName()),
                      LLVM::LLVMArrayType::get(IntegerType::get(ctx, 32), bytes / 4));
    if (int64_t bytes = plannedBytes(scanScratchName(func.getName())))
      addSharedGlobal(func, scanScratchName(func.getName()), bytesType(bytes));
    if (int64_t bytes = plannedBytes(relayoutScratchName(func.getName())))
      addSharedGlobal(func, relayoutScratchName(func.getName()), bytesType(bytes));
    if (isPipelined(layout))
      addSharedGlobal(func, sharedMemoryName(func.getName()), bytesType(0),
                      LLVM::Linkage::External, /*alignment=*/1024);
    TypeConverter converter;
    converter.addConversion([](Type t) { return t; });
    // A scalar f8 is its byte (registerType).
    converter.addConversion([](FloatType t) { return registerType(t); });
    // A tile becomes the vector of elements one thread holds under its
    // encoding. Shared tiles (pipelined mma operands) have no register form:
    // the mma pipeline consumes them whole.
    converter.addConversion([ctx](RankedTensorType t) -> Type {
      if (auto encoding = dyn_cast_or_null<ThreadLayout>(t.getEncoding()))
        return perThreadType(t);
      // The register form of an mma's A operand: its parent's vector.
      if (auto dot = dyn_cast_or_null<tile::DotOperandEncodingAttr>(t.getEncoding()))
        return perThreadType(RankedTensorType::get(t.getShape(), t.getElementType(),
                                                   dot.getParent()));
      // A tile.shared_tile of a general pipeline is its address.
      if (isa_and_nonnull<tile::SharedEncodingAttr>(t.getEncoding()))
        return LLVM::LLVMPointerType::get(ctx, 3);
      return Type();
    });

    RewritePatternSet patterns(ctx);
    patterns.add<BlockIdLowering, NumBlocksLowering,
                 ViewQueryLowering<tile::ViewDimOp, true>,
                 ViewQueryLowering<tile::ViewStrideOp, false>, SplatLowering,
                 ForwardOperandLowering<tile::ReshapeOp>>(
        converter, ctx);
    patterns.add<RangeLowering>(converter, ctx, layout);
    populateReduceToNVVMPatterns(converter, layout, patterns);
    populateMmaToNVVMPatterns(converter, layout, patterns);
    populateRelayoutToNVVMPatterns(converter, layout, patterns);
    populateIrregularToNVVMPatterns(converter, layout, patterns);
    populateDebugToNVVMPatterns(converter, layout, patterns);
    populateLoadStoreToNVVMPatterns(converter, layout, patterns);
    populateElementwiseToNVVMPatterns(converter, patterns);

    ConversionTarget target(*ctx);
    target.markUnknownOpDynamicallyLegal(
        [](Operation *op) { return !needsNVVMLowering(op); });
    // Loops and ifs that carry tiles carry the per-thread vectors instead.
    scf::populateSCFStructuralTypeConversionsAndLegality(converter, patterns, target);
    markReadModifyWrites(func);
    mma::drainTmaStores(func);
    if (failed(applyPartialConversion(func, target, std::move(patterns))))
      return failure();
    saturateFloatToInt(func);

    // Views are fully consumed by now.
    // (Parts made by narrow may sit in loops and branches.)
    SmallVector<tile::MakeViewOp> views;
    func.walk([&](tile::MakeViewOp mk) { views.push_back(mk); });
    for (tile::MakeViewOp mk : views) {
      if (!mk->use_empty())
        return mk.emitError("view still in use after lowering");
      mk.erase();
    }
    // The kernel becomes an llvm.func entry point now; its body is lowered
    // to LLVM by the standard conversions that follow.
    OpBuilder b(func);
    auto fnTy = LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx),
                                            func.getArgumentTypes());
    auto llvmFunc = LLVM::LLVMFuncOp::create(b, func.getLoc(), func.getName(), fnTy);
    for (NamedAttribute attr : func->getDiscardableAttrs())
      llvmFunc->setAttr(attr.getName(), attr.getValue());
    llvmFunc->setAttr(NVVM::NVVMDialect::getKernelFuncAttrName(), b.getUnitAttr());
    llvmFunc->setAttr(NVVM::NVVMDialect::getMaxntidAttrName(),
                      b.getDenseI32ArrayAttr({int32_t(layout.getThreadsPerBlock()), 1, 1}));
    if (auto minBlocks = func->getAttrOfType<IntegerAttr>(tile::kMinBlocksAttrName)) {
      // An SM runs at most 2048 threads.
      if (minBlocks.getInt() * int64_t(layout.getThreadsPerBlock()) > 2048)
        return func.emitError() << "kernel '" << func.getName() << "' has " << layout.getThreadsPerBlock()
                                << " threads per block, so at most " << 2048 / layout.getThreadsPerBlock()
                                << " blocks fit on an SM, not the " << minBlocks.getInt()
                                << " that --min-blocks-per-sm or @launch asks for";
      // A warp-specialized mma pipeline with two or three consumer
      // warpgroups hands the SM's registers to them (setmaxnreg, which waits
      // for registers a second block would hold: a hang, or ptxas's
      // "insufficient registers" at the launch's smaller share).
      auto mmaLayout = dyn_cast<tile::MmaEncodingAttr>(layout);
      if (minBlocks.getInt() > 1 && mmaLayout && mmaLayout.hasProducer() &&
          mmaLayout.getConsumers() >= 2)
        return func.emitError() << "kernel '" << func.getName() << "' runs an mma pipeline whose "
                                << mmaLayout.getConsumers()
                                << " consumer warpgroups take the SM's registers, so one block "
                                   "fits on an SM, not the "
                                << minBlocks.getInt()
                                << " that --min-blocks-per-sm or @launch asks for";
      llvmFunc->setAttr(NVVM::NVVMDialect::getMinctasmAttrName(),
                        b.getI32IntegerAttr(int32_t(minBlocks.getInt())));
    }
    // By-value parameters (TMA descriptors) stay in the parameter space and
    // are read through their address: grid constants.
    for (unsigned i = 0; i < func.getNumArguments(); ++i)
      if (DictionaryAttr attrs = func.getArgAttrDict(i)) {
        llvmFunc.setArgAttrs(i, attrs.getValue());
        if (attrs.get(LLVM::LLVMDialect::getByValAttrName()))
          llvmFunc.setArgAttr(i, NVVM::NVVMDialect::getGridConstantAttrName(),
                              b.getUnitAttr());
      }
    llvmFunc.getBody().takeBody(func.getBody());
    llvmFunc.walk([&](func::ReturnOp ret) {
      OpBuilder rb(ret);
      LLVM::ReturnOp::create(rb, ret.getLoc(), ValueRange{});
      ret.erase();
    });
    func.erase();
    return success();
  }
};

} // namespace
