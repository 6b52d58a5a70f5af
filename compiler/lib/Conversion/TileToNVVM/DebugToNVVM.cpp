//===- DebugToNVVM.cpp - print and assert ---------------------------------===//
//
// `tile.print` becomes calls of the device's `vprintf` (format string in
// global memory, arguments packed in a stack buffer): one line from thread 0
// for scalars, one line per element a thread holds for tiles, with the
// program id and the element's index. `tile.assert` calls `__assertfail`
// with the message and the `.tile` file and line for every element whose
// condition is false; the driver prints the assertion and the launch fails.
//
//===----------------------------------------------------------------------===//

#include "PatternsNVVM.h"

#include "tilec/Dialect/Tile/IR/TileDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace tilec;

namespace {

/// A NUL-terminated string constant in global memory, as a generic pointer.
Value globalString(OpBuilder &b, Location loc, ModuleOp module, StringRef prefix,
                   StringRef text) {
  std::string value = (text + llvm::StringRef("\0", 1)).str();
  std::string name;
  for (unsigned i = 0;; ++i) {
    name = (prefix + "_" + Twine(i)).str();
    auto existing = module.lookupSymbol<LLVM::GlobalOp>(name);
    if (!existing)
      break;
    if (auto v = dyn_cast_or_null<StringAttr>(existing.getValueOrNull()); v && v == value)
      break;
  }
  auto arrayTy = LLVM::LLVMArrayType::get(b.getI8Type(), value.size());
  if (!module.lookupSymbol(name)) {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(module.getBody());
    LLVM::GlobalOp::create(b, loc, arrayTy, /*isConstant=*/true, LLVM::Linkage::Internal, name,
                           b.getStringAttr(value), /*alignment=*/1, /*addrSpace=*/1);
  }
  Value p = LLVM::AddressOfOp::create(b, loc, LLVM::LLVMPointerType::get(b.getContext(), 1),
                                      name);
  return LLVM::AddrSpaceCastOp::create(b, loc, LLVM::LLVMPointerType::get(b.getContext()), p);
}

/// Declares an external device function once.
void declare(OpBuilder &b, ModuleOp module, StringRef name, Type result, ArrayRef<Type> args) {
  if (module.lookupSymbol(name))
    return;
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(module.getBody());
  LLVM::LLVMFuncOp::create(b, module.getLoc(), name,
                           LLVM::LLVMFunctionType::get(result, args));
}

/// Calls `fn(slot, flat)` for each element of `shape` this thread holds,
/// under the padding guard.
template <typename Fn>
void forEachSlot(OpBuilder &b, Location loc, RankedTensorType shape, Fn fn) {
  forEachThreadElement(b, loc, shape, [&](int64_t slot, Value e, bool mayPad) {
    if (!mayPad)
      return fn(slot, e);
    ifThen(b, loc, insideTile(b, loc, e, shape), [&] { fn(slot, e); });
  });
}

struct PrintLowering : LayoutPattern<tile::PrintOp> {
  using LayoutPattern::LayoutPattern;
  LogicalResult matchAndRewrite(tile::PrintOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto module = op->getParentOfType<ModuleOp>();
    auto func = op->getParentOfType<func::FuncOp>();
    MLIRContext *ctx = rewriter.getContext();
    auto ptrTy = LLVM::LLVMPointerType::get(ctx);
    declare(rewriter, module, "vprintf", rewriter.getI32Type(), {ptrTy, ptrTy});
    RankedTensorType shape;
    for (Value v : op.getValues())
      if (auto t = dyn_cast<RankedTensorType>(v.getType()))
        shape = t;
    // The format and the argument buffer's layout.
    std::string fmt = "pid (%d, %d, %d)";
    SmallVector<Type> fields(3, rewriter.getI32Type());
    if (shape) {
      fmt += " idx (";
      for (int64_t d = 0; d < shape.getRank(); ++d) {
        fmt += d ? ", %lld" : "%lld";
        fields.push_back(rewriter.getI64Type());
      }
      fmt += ")";
    }
    fmt += ": " + op.getText().str();
    ArrayRef<bool> unsignedValues;
    if (auto u = op.getUnsignedValuesAttr())
      unsignedValues = u.asArrayRef();
    for (auto [k, v] : llvm::enumerate(op.getValues())) {
      Type t = getElementTypeOrSelf(v.getType());
      bool uns = k < unsignedValues.size() && unsignedValues[k];
      fmt += isa<FloatType>(t) ? " %f" : (uns ? " %llu" : " %lld");
      fields.push_back(isa<FloatType>(t) ? Type(rewriter.getF64Type()) : rewriter.getI64Type());
    }
    fmt += "\n";
    auto structTy = LLVM::LLVMStructType::getLiteral(ctx, fields);
    // The buffer lives in the entry block (a fixed stack slot).
    Value buffer;
    {
      OpBuilder::InsertionGuard g(rewriter);
      rewriter.setInsertionPointToStart(&func.getBody().front());
      buffer = LLVM::AllocaOp::create(rewriter, loc, ptrTy, structTy,
                                      constI64(rewriter, loc, 1), /*alignment=*/8);
    }
    Value format = globalString(rewriter, loc, module, "__tile_fmt", fmt);
    SmallVector<Value> pid = {
        NVVM::BlockIdXOp::create(rewriter, loc, rewriter.getI32Type()),
        NVVM::BlockIdYOp::create(rewriter, loc, rewriter.getI32Type()),
        NVVM::BlockIdZOp::create(rewriter, loc, rewriter.getI32Type())};
    auto emit = [&](ArrayRef<Value> values) {
      for (auto [i, v] : llvm::enumerate(values)) {
        Value slot = LLVM::GEPOp::create(rewriter, loc, ptrTy, structTy, buffer,
                                         ArrayRef<LLVM::GEPArg>{0, int32_t(i)});
        LLVM::StoreOp::create(rewriter, loc, v, slot);
      }
      LLVM::CallOp::create(rewriter, loc, TypeRange{rewriter.getI32Type()}, "vprintf",
                           ValueRange{format, buffer});
    };
    auto widen = [&](Value x, size_t k) -> Value {
      Type t = x.getType();
      if (isa<FloatType>(t))
        return t.isF64() ? x : Value(arith::ExtFOp::create(rewriter, loc, rewriter.getF64Type(), x));
      if (t.isInteger(64))
        return x;
      bool uns = k < unsignedValues.size() && unsignedValues[k];
      if (t.isInteger(1) || uns)
        return arith::ExtUIOp::create(rewriter, loc, rewriter.getI64Type(), x);
      return arith::ExtSIOp::create(rewriter, loc, rewriter.getI64Type(), x);
    };
    if (!shape) {
      Value tid = NVVM::ThreadIdXOp::create(rewriter, loc, rewriter.getI32Type());
      Value first = arith::CmpIOp::create(
          rewriter, loc, arith::CmpIPredicate::eq, tid,
          arith::ConstantOp::create(rewriter, loc,
                                    rewriter.getI32IntegerAttr(int32_t(layout.getLeaderThread()))));
      auto ifOp = scf::IfOp::create(rewriter, loc, TypeRange{}, first, false);
      OpBuilder::InsertionGuard g(rewriter);
      rewriter.setInsertionPointToStart(&ifOp.getThenRegion().front());
      SmallVector<Value> values(pid);
      for (auto [k, v] : llvm::enumerate(adaptor.getValues()))
        values.push_back(widen(v, k));
      emit(values);
    } else {
      forEachSlot(rewriter, loc, shape, [&](int64_t slot, Value e) {
        SmallVector<Value> values(pid);
        for (Value c : tileCoords(rewriter, loc, e, shape.getShape()))
          values.push_back(c);
        for (auto [k, v] : llvm::enumerate(adaptor.getValues())) {
          Value x = isa<VectorType>(v.getType())
                        ? Value(vector::ExtractOp::create(rewriter, loc, v, ArrayRef<int64_t>{slot}))
                        : v;
          values.push_back(widen(x, k));
        }
        emit(values);
      });
    }
    rewriter.eraseOp(op);
    return success();
  }
};

struct AssertLowering : LayoutPattern<tile::AssertOp> {
  using LayoutPattern::LayoutPattern;
  LogicalResult matchAndRewrite(tile::AssertOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto module = op->getParentOfType<ModuleOp>();
    auto func = op->getParentOfType<func::FuncOp>();
    MLIRContext *ctx = rewriter.getContext();
    auto ptrTy = LLVM::LLVMPointerType::get(ctx);
    declare(rewriter, module, "__assertfail", LLVM::LLVMVoidType::get(ctx),
            {ptrTy, ptrTy, rewriter.getI32Type(), ptrTy, rewriter.getI64Type()});
    Value message = globalString(rewriter, loc, module, "__tile_assert_msg", op.getMessage());
    Value file = globalString(rewriter, loc, module, "__tile_assert_file", op.getFile());
    Value function = globalString(rewriter, loc, module, "__tile_assert_func", func.getName());
    Value line = arith::ConstantOp::create(rewriter, loc, rewriter.getI32IntegerAttr(op.getLine()));
    auto check = [&](Value ok) {
      Value one = arith::ConstantOp::create(rewriter, loc, rewriter.getBoolAttr(true));
      Value bad = arith::XOrIOp::create(rewriter, loc, ok, one);
      auto ifOp = scf::IfOp::create(rewriter, loc, TypeRange{}, bad, false);
      OpBuilder::InsertionGuard g(rewriter);
      rewriter.setInsertionPointToStart(&ifOp.getThenRegion().front());
      LLVM::CallOp::create(rewriter, loc, TypeRange{}, "__assertfail",
                           ValueRange{message, file, line, function, constI64(rewriter, loc, 1)});
    };
    Value cond = adaptor.getCond();
    if (auto shape = dyn_cast<RankedTensorType>(op.getCond().getType())) {
      forEachSlot(rewriter, loc, shape, [&](int64_t slot, Value) {
        check(vector::ExtractOp::create(rewriter, loc, cond, ArrayRef<int64_t>{slot}));
      });
    } else {
      check(cond);
    }
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

void tilec::populateDebugToNVVMPatterns(const TypeConverter &converter,
                                        ThreadLayout layout,
                                        RewritePatternSet &patterns) {
  patterns.add<PrintLowering, AssertLowering>(converter, patterns.getContext(), layout);
}
