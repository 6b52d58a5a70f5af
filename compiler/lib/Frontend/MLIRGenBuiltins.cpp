//===- MLIRGenBuiltins.cpp - calls of builtins to the tile dialect -------===//
//
// genCall dispatches through Builtins.def to one builder per rule (and to
// the elementwise math of UnaryMath.def).
//
//===----------------------------------------------------------------------===//

#include "MLIRGenImpl.h"

#include "llvm/ADT/StringMap.h"

using namespace mlir;
using namespace tilec;
using namespace tilec::mlirgen;

Value Gen::genCall(const Expr &e) {
  if (e.args.size() == 1 && isUnaryMathFunction(e.name))
    return genUnaryMath(e);
  using Builder = Value (Gen::*)(const Expr &);
  static const llvm::StringMap<Builder> table = {
#define TILEC_BUILTIN(spelling, Rule, accepts) {spelling, &Gen::gen##Rule},
#include "tilec/Frontend/Builtins.def"
  };
  auto it = table.find(e.name);
  if (it == table.end())
    llvm_unreachable("call rejected by Sema");
  return (this->*it->second)(e);
}

/// load, store.
Value Gen::genMemory(const Expr &e) {
  Location l = loc(e.loc);
  const std::string &fn = e.name;
  Value view = scope.at(e.args[0]->name).value;
  SmallVector<Value> indices;
  for (auto &ix : e.args[1]->args)
    indices.push_back(genAs(*ix, SemaType::scalar(ScalarType::I64)));
  if (fn == "store") {
    Value v = gen(*e.args[2]);
    tile::StoreOp::create(b, l, v, view, indices);
    return {};
  }
  if (e.args.size() == 2) // one element, by element index
    return tile::LoadScalarOp::create(b, l, mlirType(e.type), view, indices);
  auto ty = cast<RankedTensorType>(mlirType(e.type));
  TypedAttr pad;
  if (e.args.size() == 4) {
    double f = 0;
    int64_t i = 0;
    literalValue(*e.args[3], f, i);
    if (isFloatType(e.type.elem))
      pad = b.getFloatAttr(ty.getElementType(), f);
    else
      pad = b.getIntegerAttr(ty.getElementType(), i);
  }
  return tile::LoadOp::create(b, l, ty, view, indices, pad);
}

/// narrow: a make_view of the part, at its first element, with the part's
/// size along the dimension and its offsets in the parameter's view (for
/// TMA descriptors, which address the parameter). start is clamped to
/// [0, size] and the length to [0, size - start].
Value Gen::genNarrow(const Expr &e) {
  Location l = loc(e.loc);
  auto mk = scope.at(e.args[0]->name).value.getDefiningOp<tile::MakeViewOp>();
  unsigned d = unsigned(*e.args[1]->constInt);
  SemaType i64 = SemaType::scalar(ScalarType::I64);
  Value zero = arith::ConstantOp::create(b, l, b.getI64IntegerAttr(0));
  Value size = mk.getSizes()[d];
  Value start = arith::MinSIOp::create(
      b, l, arith::MaxSIOp::create(b, l, genAs(*e.args[2], i64), zero), size);
  Value left = arith::SubIOp::create(b, l, size, start);
  Value len = arith::MinSIOp::create(
      b, l, arith::MaxSIOp::create(b, l, genAs(*e.args[3], i64), zero), left);
  ScalarType elem = scope.at(e.args[0]->name).type.elem;
  Type memElem = elem == ScalarType::I1 ? b.getI8Type() : toMLIRType(ctx, elem);
  Value ptr = LLVM::GEPOp::create(b, l, mk.getPtr().getType(), memElem, mk.getPtr(),
                                  ValueRange{arith::MulIOp::create(b, l, start,
                                                                   mk.getStrides()[d])});
  SmallVector<Value> sizes(mk.getSizes()), offsets(mk.getOffsets());
  sizes[d] = len;
  if (offsets.empty())
    offsets.assign(sizes.size(), zero);
  offsets[d] = arith::AddIOp::create(b, l, offsets[d], start);
  auto part = tile::MakeViewOp::create(b, l, mk.getType(), ptr, sizes, mk.getStrides(), offsets);
  if (Attribute param = mk->getAttr(tile::kParamIndexAttrName))
    part->setAttr(tile::kParamIndexAttrName, param);
  return part;
}

/// gather, scatter, atomic_add, atomic_min, atomic_max, atomic_xchg, atomic_cas.
Value Gen::genIrregular(const Expr &e) {
  Location l = loc(e.loc);
  const std::string &fn = e.name;
  Value view = scope.at(e.args[0]->name).value;
  ScalarType elem = scope.at(e.args[0]->name).type.elem;
  const std::vector<int64_t> &shape = e.elementShape;
  bool isGather = fn == "gather", isCas = fn == "atomic_cas";
  size_t values = isGather ? 0 : (isCas ? 2 : 1);
  SmallVector<Value> indices;
  for (auto &ix : e.args[1]->args)
    indices.push_back(genAs(*ix, SemaType::tile(ScalarType::I64, shape)));
  SmallVector<Value> vals;
  for (size_t k = 0; k < values; ++k)
    vals.push_back(genAs(*e.args[2 + k], SemaType::tile(elem, shape)));
  size_t next = 2 + values;
  Value mask;
  if (e.args.size() > next)
    mask = genAs(*e.args[next++], SemaType::tile(ScalarType::I1, shape));
  if (isGather) {
    auto ty = cast<RankedTensorType>(mlirType(SemaType::tile(elem, shape)));
    TypedAttr fill;
    if (e.args.size() > next) {
      double f = 0;
      int64_t i = 0;
      literalValue(*e.args[next], f, i);
      fill = isFloatType(elem) ? TypedAttr(b.getFloatAttr(ty.getElementType(), f))
                               : TypedAttr(b.getIntegerAttr(ty.getElementType(), i));
    }
    return tile::GatherOp::create(b, l, ty, view, indices, mask, fill);
  }
  if (fn == "scatter") {
    tile::ScatterOp::create(b, l, vals[0], view, indices, mask);
    return {};
  }
  std::string kind = llvm::StringRef(fn).drop_front(7).str(); // after "atomic_"
  if ((kind == "min" || kind == "max") && isUnsignedIntType(elem))
    kind = "u" + kind;
  Value value = isCas ? vals[1] : vals[0];
  Value cmp = isCas ? vals[0] : Value();
  return tile::AtomicOp::create(b, l, value.getType(), b.getStringAttr(kind), value, view,
                                indices, cmp, mask);
}

/// block_id, num_blocks.
Value Gen::genProgramId(const Expr &e) {
  Location l = loc(e.loc);
  const std::string &fn = e.name;
  if (fn == "block_id")
    return tile::BlockIdOp::create(b, l, b.getI32Type(),
                                   static_cast<int32_t>(*e.args[0]->constInt));
  return tile::NumBlocksOp::create(b, l, b.getI32Type(),
                                   static_cast<int32_t>(*e.args[0]->constInt));
}

/// num_sms, resident_programs.
Value Gen::genDeviceSize(const Expr &e) {
  llvm_unreachable("num_sms() and resident_programs() are in grid(...) only");
}

/// arch(), bits<T>(): folded by Sema.
Value Gen::genTarget(const Expr &e) {
  return constant(e.type, 0, *e.constInt, loc(e.loc));
}

/// zeros, full.
Value Gen::genFill(const Expr &e) {
  Location l = loc(e.loc);
  const std::string &fn = e.name;
  if (fn == "zeros")
    return constant(e.type, 0, 0, l);
  SemaType scalarTy = SemaType::scalar(e.type.elem);
  double f = 0;
  int64_t i = 0;
  if (literalValue(*e.args[1], f, i))
    return constant(e.type, f, i, l);
  Value v = genAs(*e.args[1], scalarTy);
  return tile::SplatOp::create(b, l, cast<RankedTensorType>(mlirType(e.type)), v);
}

/// range.
Value Gen::genRange(const Expr &e) {
  Location l = loc(e.loc);
  return tile::RangeOp::create(b, l, cast<RankedTensorType>(mlirType(e.type)), IntegerAttr());
}

/// reshape, expand_dims.
Value Gen::genReshape(const Expr &e) {
  Location l = loc(e.loc);
  return tile::ReshapeOp::create(b, l, cast<RankedTensorType>(mlirType(e.type)),
                                 gen(*e.args[0]));
}

/// slice.
Value Gen::genSlice(const Expr &e) {
  Location l = loc(e.loc);
  return tile::SliceOp::create(b, l, cast<RankedTensorType>(mlirType(e.type)),
                               gen(*e.args[0]), b.getDenseI64ArrayAttr(e.permutation));
}

/// broadcast.
Value Gen::genBroadcast(const Expr &e) {
  Location l = loc(e.loc);
  return splatTo(gen(*e.args[0]), e.args[0]->type, e.type, l);
}

/// transpose, permute.
Value Gen::genPermute(const Expr &e) {
  Location l = loc(e.loc);
  return tile::PermuteOp::create(b, l, cast<RankedTensorType>(mlirType(e.type)),
                                 gen(*e.args[0]), b.getDenseI64ArrayAttr(e.permutation));
}

/// take.
Value Gen::genTake(const Expr &e) {
  Location l = loc(e.loc);
  // 32-bit indices as they are, others as i64 (unsigned ones zero-extended).
  ScalarType ie = e.args[1]->type.elem;
  bool keep = ie == ScalarType::I32 || ie == ScalarType::U32;
  return tile::TakeOp::create(
      b, l, cast<RankedTensorType>(mlirType(e.type)), gen(*e.args[0]),
      keep ? gen(*e.args[1])
           : genAs(*e.args[1], SemaType::tile(ScalarType::I64, e.args[1]->type.shape)));
}

/// sum, prod, min, max, argmax, argmin.
Value Gen::genReduction(const Expr &e) {
  Location l = loc(e.loc);
  const std::string &fn = e.name;
  if (((fn == "sum" || fn == "min" || fn == "max" || fn == "prod") && e.args.size() == 1) ||
      fn == "argmax" || fn == "argmin") {
    Value t = gen(*e.args[0]);
    IntegerAttr axis = e.axis ? b.getI32IntegerAttr(int32_t(*e.axis)) : IntegerAttr();
    return tile::ReduceOp::create(b, l, mlirType(e.type), b.getStringAttr(fn), t, axis);
  }
  Value x = genAs(*e.args[0], e.type);
  Value y = genAs(*e.args[1], e.type);
  bool isMin = fn == "min";
  if (isFloatType(e.type.elem))
    return isMin ? Value(arith::MinimumFOp::create(b, l, x, y))
                 : Value(arith::MaximumFOp::create(b, l, x, y));
  if (isSignedIntType(e.type.elem))
    return isMin ? Value(arith::MinSIOp::create(b, l, x, y))
                 : Value(arith::MaxSIOp::create(b, l, x, y));
  return isMin ? Value(arith::MinUIOp::create(b, l, x, y))
               : Value(arith::MaxUIOp::create(b, l, x, y));
}

/// reduce, scan.
Value Gen::genCombine(const Expr &e) {
  Location l = loc(e.loc);
  const std::string &fn = e.name;
  Value t = gen(*e.args[0]);
  Operation *op;
  if (fn == "scan") {
    op = tile::ScanOp::create(b, l, t);
  } else {
    IntegerAttr axis = e.axis ? b.getI32IntegerAttr(int32_t(*e.axis)) : IntegerAttr();
    op = tile::ReduceOp::create(b, l, mlirType(e.type), b.getStringAttr("fn"), t, axis);
  }
  // The combiner: a block of two element-typed scalars yielding one.
  SemaType elemTy = SemaType::scalar(e.args[0]->type.elem);
  Type elem = mlirType(elemTy);
  Region &region = op->getRegion(0);
  Block *block = b.createBlock(&region, {}, {elem, elem}, {l, l});
  auto saved = scope;
  scope["combine#a"] = Binding{block->getArgument(0), elemTy};
  scope["combine#b"] = Binding{block->getArgument(1), elemTy};
  tile::YieldOp::create(b, l, genAs(*e.args[1], elemTy));
  scope = std::move(saved);
  b.setInsertionPointAfter(op);
  return op->getResult(0);
}

/// cumsum.
Value Gen::genCumsum(const Expr &e) {
  Location l = loc(e.loc);
  return tile::ScanOp::create(b, l, gen(*e.args[0]));
}

/// mma.
Value Gen::genMma(const Expr &e) {
  Location l = loc(e.loc);
  return tile::MmaOp::create(b, l, gen(*e.args[0]), gen(*e.args[1]), gen(*e.args[2]),
                             /*pred=*/Value(), e.tf32);
}

/// pow, fma.
Value Gen::genPowFma(const Expr &e) {
  Location l = loc(e.loc);
  const std::string &fn = e.name;
  if (fn == "pow") {
    // x^y = exp2(y * log2(x)): NaN for negative x (as for a float exponent).
    Value x = genAs(*e.args[0], e.type), y = genAs(*e.args[1], e.type);
    Value lg = math::Log2Op::create(b, l, x);
    return math::Exp2Op::create(b, l, arith::MulFOp::create(b, l, y, lg));
  }
  Value x = genAs(*e.args[0], e.type), y = genAs(*e.args[1], e.type),
        z = genAs(*e.args[2], e.type);
  return math::FmaOp::create(b, l, x, y, z);
}

/// cdiv.
Value Gen::genCdiv(const Expr &e) {
  Location l = loc(e.loc);
  Value x = genAs(*e.args[0], e.type);
  Value y = genAs(*e.args[1], e.type);
  if (isSignedIntType(e.type.elem))
    return arith::CeilDivSIOp::create(b, l, x, y);
  return arith::CeilDivUIOp::create(b, l, x, y);
}

/// where.
Value Gen::genWhere(const Expr &e) {
  Location l = loc(e.loc);
  const Expr &c = *e.args[0];
  Value cond;
  if (c.type.isTile()) {
    SemaType condTy = e.type;
    condTy.elem = ScalarType::I1;
    cond = genAs(c, condTy);
  } else {
    cond = gen(c);
  }
  Value x = genAs(*e.args[1], e.type);
  Value y = genAs(*e.args[2], e.type);
  return arith::SelectOp::create(b, l, cond, x, y);
}

/// cast.
Value Gen::genCast(const Expr &e) {
  Location l = loc(e.loc);
  Value x = gen(*e.args[0]);
  return convert(x, e.args[0]->type, e.type.elem, l);
}

/// print, assert.
Value Gen::genDebug(const Expr &e) {
  Location l = loc(e.loc);
  const std::string &fn = e.name;
  bool isPrint = fn == "print";
  size_t first = isPrint ? 1 : 0, last = isPrint ? e.args.size() : 1;
  SmallVector<Value> values;
  for (size_t k = first; k < last; ++k)
    values.push_back(genAs(*e.args[k], atElementShape(e, e.args[k]->type)));
  if (isPrint) {
    SmallVector<bool> uns;
    for (size_t k = 1; k < e.args.size(); ++k)
      uns.push_back(isUnsignedIntType(e.args[k]->type.elem));
    tile::PrintOp::create(b, l, b.getStringAttr(e.args[0]->name), values,
                          b.getDenseBoolArrayAttr(uns));
  } else {
    auto fl = dyn_cast<FileLineColLoc>(l);
    tile::AssertOp::create(b, l, values[0], b.getStringAttr(e.args[1]->name),
                           fl ? fl.getFilename() : b.getStringAttr("<unknown>"),
                           b.getI32IntegerAttr(fl ? int32_t(fl.getLine()) : 0));
  }
  return {};
}

/// The elementwise math of UnaryMath.def.
Value Gen::genUnaryMath(const Expr &e) {
  Location l = loc(e.loc);
  const std::string &fn = e.name;
  Value x = genAs(*e.args[0], e.type);
#define TILEC_UNARY_MATH(name, op, f64, host)                                               \
  if (fn == #name)                                                                           \
  return op::create(b, l, x);
#define TILEC_UNARY_MATH_SPECIAL(name, f64, host)
#include "tilec/Frontend/UnaryMath.def"
  if (fn == "erf") {
    // A polynomial approximation in f32 (max error ~1e-7); f16 and bf16
    // are widened first.
    auto f32Ty = e.type;
    f32Ty.elem = ScalarType::F32;
    Value wide = convert(x, e.type, ScalarType::F32, l);
    Value r = math::ErfOp::create(b, l, wide);
    return convert(r, f32Ty, e.type.elem, l);
  }
  if (fn == "sigmoid") {
    // 1 / (1 + exp(-x))
    Value one = constant(e.type, 1, 1, l);
    Value ex = math::ExpOp::create(b, l, arith::NegFOp::create(b, l, x));
    return arith::DivFOp::create(b, l, one, arith::AddFOp::create(b, l, one, ex));
  }
  if (isFloatType(e.type.elem)) return math::AbsFOp::create(b, l, x);
  return math::AbsIOp::create(b, l, x);
}
