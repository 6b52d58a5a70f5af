//===- MLIRGen.cpp - AST to tile dialect ----------------------------------===//
//
// A direct walk over the checked AST. Operands are converted to the type Sema
// chose for each operation (untyped literals are emitted straight in that
// type), scalars meeting tiles are splatted, and `var` reassignment simply
// rebinds the name to a new SSA value.
//
//===----------------------------------------------------------------------===//

#include "MLIRGenImpl.h"

using namespace mlir;
using namespace tilec;
using namespace tilec::mlirgen;

mlir::Type tilec::toMLIRType(MLIRContext *ctx, ScalarType t) {
  switch (t) {
  case ScalarType::I1: return IntegerType::get(ctx, 1);
  case ScalarType::I8: case ScalarType::U8: return IntegerType::get(ctx, 8);
  case ScalarType::I16: case ScalarType::U16: return IntegerType::get(ctx, 16);
  case ScalarType::I32: case ScalarType::U32: return IntegerType::get(ctx, 32);
  case ScalarType::I64: case ScalarType::U64: return IntegerType::get(ctx, 64);
  case ScalarType::F16: return Float16Type::get(ctx);
  case ScalarType::BF16: return BFloat16Type::get(ctx);
  case ScalarType::F32: return Float32Type::get(ctx);
  case ScalarType::F64: return Float64Type::get(ctx);
  case ScalarType::F8E4M3: return Float8E4M3FNType::get(ctx);
  case ScalarType::F8E5M2: return Float8E5M2Type::get(ctx);
  }
  return {};
}


Value Gen::constant(const SemaType &t, double f, int64_t i, Location l) {
  Type elem = toMLIRType(ctx, t.elem);
  TypedAttr attr;
  if (isFloatType(t.elem))
    attr = b.getFloatAttr(elem, f);
  else
    attr = b.getIntegerAttr(elem, t.elem == ScalarType::I1 ? (i != 0) : i);
  if (t.isTile()) {
    auto ty = RankedTensorType::get(t.shape, elem);
    return arith::ConstantOp::create(b, l, ty, DenseElementsAttr::get(ty, attr));
  }
  return arith::ConstantOp::create(b, l, attr);
}

Value Gen::convert(Value v, const SemaType &from, ScalarType to, Location l) {
  ScalarType fe = from.elem;
  if (fe == to)
    return v;
  // f8 converts to and from f32 only (cvt on the GPU): anything else goes
  // through f32.
  if ((isFloat8Type(fe) && to != ScalarType::F32) ||
      (isFloat8Type(to) && fe != ScalarType::F32)) {
    SemaType mid = from;
    mid.elem = ScalarType::F32;
    return convert(convert(v, from, ScalarType::F32, l), mid, to, l);
  }
  SemaType toT = from;
  toT.elem = to;
  Type dst = mlirType(toT);
  bool fromF = isFloatType(fe), toF = isFloatType(to);
  unsigned fw = fe == ScalarType::I1 ? 1 : scalarTypeSize(fe) * 8;
  unsigned tw = to == ScalarType::I1 ? 1 : scalarTypeSize(to) * 8;
  if (to == ScalarType::I1) {
    // A number converts to a boolean by comparing with zero.
    Value zero = constant(from, 0, 0, l);
    if (fromF)
      return arith::CmpFOp::create(b, l, arith::CmpFPredicate::UNE, v, zero);
    return arith::CmpIOp::create(b, l, arith::CmpIPredicate::ne, v, zero);
  }
  bool fromSigned = isSignedIntType(fe);
  if (!fromF && !toF) {
    if (fw == tw)
      return v; // i32 <-> u32: same bits
    if (tw > fw)
      return fromSigned ? Value(arith::ExtSIOp::create(b, l, dst, v))
                        : Value(arith::ExtUIOp::create(b, l, dst, v));
    return arith::TruncIOp::create(b, l, dst, v);
  }
  if (!fromF && toF)
    return fromSigned ? Value(arith::SIToFPOp::create(b, l, dst, v))
                      : Value(arith::UIToFPOp::create(b, l, dst, v));
  if (fromF && !toF)
    return isSignedIntType(to) ? Value(arith::FPToSIOp::create(b, l, dst, v))
                               : Value(arith::FPToUIOp::create(b, l, dst, v));
  // float -> float. f16 <-> bf16 have the same width: go through f32.
  if (fw == tw) {
    SemaType mid = from;
    mid.elem = ScalarType::F32;
    Value wide = convert(v, from, ScalarType::F32, l);
    return convert(wide, mid, to, l);
  }
  if (tw > fw)
    return arith::ExtFOp::create(b, l, dst, v);
  return arith::TruncFOp::create(b, l, dst, v);
}

Value Gen::splatTo(Value v, const SemaType &from, const SemaType &target,
                   Location l) {
  if (!target.isTile() || (from.isTile() && from.shape == target.shape))
    return v;
  Type elem = getElementTypeOrSelf(v.getType());
  auto ty = RankedTensorType::get(target.shape, elem);
  if (from.isTile())
    return tile::BroadcastOp::create(b, l, ty, v);
  return tile::SplatOp::create(b, l, ty, v);
}

Value Gen::genAs(const Expr &e, const SemaType &target) {
  Location l = loc(e.loc);
  double f;
  int64_t i;
  if (literalValue(e, f, i)) {
    SemaType t = target;
    if (!isFloatType(t.elem) && e.kind == Expr::Kind::FloatLit)
      i = truncToInt64(f);
    return constant(t, f, i, l);
  }
  Value v = gen(e);
  v = convert(v, e.type, target.elem, l);
  SemaType converted = e.type;
  converted.elem = target.elem;
  return splatTo(v, converted, target, l);
}

static arith::CmpFPredicate cmpF(Expr::Op op) {
  switch (op) {
  case Expr::Op::Lt: return arith::CmpFPredicate::OLT;
  case Expr::Op::Le: return arith::CmpFPredicate::OLE;
  case Expr::Op::Gt: return arith::CmpFPredicate::OGT;
  case Expr::Op::Ge: return arith::CmpFPredicate::OGE;
  case Expr::Op::Eq: return arith::CmpFPredicate::OEQ;
  default: return arith::CmpFPredicate::UNE;
  }
}

static arith::CmpIPredicate cmpI(Expr::Op op, bool isSigned) {
  switch (op) {
  case Expr::Op::Lt: return isSigned ? arith::CmpIPredicate::slt : arith::CmpIPredicate::ult;
  case Expr::Op::Le: return isSigned ? arith::CmpIPredicate::sle : arith::CmpIPredicate::ule;
  case Expr::Op::Gt: return isSigned ? arith::CmpIPredicate::sgt : arith::CmpIPredicate::ugt;
  case Expr::Op::Ge: return isSigned ? arith::CmpIPredicate::sge : arith::CmpIPredicate::uge;
  case Expr::Op::Eq: return arith::CmpIPredicate::eq;
  default: return arith::CmpIPredicate::ne;
  }
}

Value Gen::gen(const Expr &e) {
  Location l = loc(e.loc);
  double f;
  int64_t i;
  if (literalValue(e, f, i) || e.kind == Expr::Kind::BoolLit) {
    if (e.kind == Expr::Kind::BoolLit)
      i = e.intValue;
    return constant(e.type, f, i, l);
  }
  switch (e.kind) {
  case Expr::Kind::Name:
    return scope.at(e.name).value;
  case Expr::Kind::Inline: {
    // A helper's body in a scope of its own.
    auto saved = scope;
    genBlock(e.body);
    Value r = gen(*e.args[0]);
    scope = std::move(saved);
    return r;
  }
  case Expr::Kind::Unary: {
    Value x = gen(*e.args[0]);
    if (e.op == Expr::Op::Not || e.op == Expr::Op::BitNot) {
      Value ones = constant(e.type, -1, -1, l); // all bits set (true for i1)
      return arith::XOrIOp::create(b, l, x, ones);
    }
    if (isFloatType(e.type.elem))
      return arith::NegFOp::create(b, l, x);
    Value zero = constant(e.type, 0, 0, l);
    return arith::SubIOp::create(b, l, zero, x);
  }
  case Expr::Kind::Binary: {
    Unified u = unifyOperands(e.args[0]->type, e.args[1]->type, "");
    Value x = genAs(*e.args[0], u.type);
    Value y = genAs(*e.args[1], u.type);
    ScalarType t = u.type.elem;
    bool fl = isFloatType(t);
    bool sg = isSignedIntType(t);
    switch (e.op) {
    case Expr::Op::Add:
      return fl ? Value(arith::AddFOp::create(b, l, x, y)) : Value(arith::AddIOp::create(b, l, x, y));
    case Expr::Op::Sub:
      return fl ? Value(arith::SubFOp::create(b, l, x, y)) : Value(arith::SubIOp::create(b, l, x, y));
    case Expr::Op::Mul:
      return fl ? Value(arith::MulFOp::create(b, l, x, y)) : Value(arith::MulIOp::create(b, l, x, y));
    case Expr::Op::Div:
      if (fl) return arith::DivFOp::create(b, l, x, y);
      return sg ? Value(arith::DivSIOp::create(b, l, x, y)) : Value(arith::DivUIOp::create(b, l, x, y));
    case Expr::Op::Rem:
      if (fl) return arith::RemFOp::create(b, l, x, y);
      return sg ? Value(arith::RemSIOp::create(b, l, x, y)) : Value(arith::RemUIOp::create(b, l, x, y));
    case Expr::Op::And:
    case Expr::Op::BitAnd:
      return arith::AndIOp::create(b, l, x, y);
    case Expr::Op::Or:
    case Expr::Op::BitOr:
      return arith::OrIOp::create(b, l, x, y);
    case Expr::Op::BitXor:
      return arith::XOrIOp::create(b, l, x, y);
    case Expr::Op::Shl:
    case Expr::Op::Shr: {
      // Amounts outside [0, width) are defined: << and unsigned >> give 0,
      // signed >> fills with the sign (PTX clamps; LLVM would make poison).
      unsigned width = scalarTypeSize(t) * 8;
      Value w = constant(u.type, width, width, l);
      Value inRange = arith::CmpIOp::create(b, l, arith::CmpIPredicate::ult, y, w);
      if (e.op == Expr::Op::Shr && sg) {
        Value last = constant(u.type, width - 1, width - 1, l);
        Value amt = arith::SelectOp::create(b, l, inRange, y, last);
        return arith::ShRSIOp::create(b, l, x, amt);
      }
      Value zero = constant(u.type, 0, 0, l);
      Value shifted = e.op == Expr::Op::Shl ? Value(arith::ShLIOp::create(b, l, x, y))
                                            : Value(arith::ShRUIOp::create(b, l, x, y));
      return arith::SelectOp::create(b, l, inRange, shifted, zero);
    }
    default:
      if (fl)
        return arith::CmpFOp::create(b, l, cmpF(e.op), x, y);
      return arith::CmpIOp::create(b, l, cmpI(e.op, sg || t == ScalarType::I1), x, y);
    }
  }
  case Expr::Kind::ViewField: {
    Value view = scope.at(e.args[0]->name).value;
    int32_t dim = static_cast<int32_t>(*e.args[1]->constInt);
    if (e.name == "shape")
      return tile::ViewDimOp::create(b, l, view, dim);
    return tile::ViewStrideOp::create(b, l, view, dim);
  }
  case Expr::Kind::Call:
    return genCall(e);
  default:
    break;
  }
  llvm_unreachable("expression kind rejected by Sema");
}


/// The names declared outside `body` that it assigns: the values a loop or
/// `if` must carry in and out.
static void collectAssigned(const std::vector<StmtPtr> &body,
                            std::set<std::string> declared,
                            std::set<std::string> &out) {
  for (auto &st : body) {
    switch (st->kind) {
    case Stmt::Kind::Let:
      declared.insert(st->name);
      break;
    case Stmt::Kind::Assign:
      if (!declared.count(st->name))
        out.insert(st->name);
      break;
    case Stmt::Kind::For: {
      auto inner = declared;
      inner.insert(st->name);
      collectAssigned(st->body, inner, out);
      break;
    }
    case Stmt::Kind::If:
      collectAssigned(st->body, declared, out);
      collectAssigned(st->elseBody, declared, out);
      break;
    case Stmt::Kind::While:
      collectAssigned(st->body, declared, out);
      break;
    case Stmt::Kind::ExprStmt:
    case Stmt::Kind::Return:
      break;
    }
  }
}

/// The outer names that `bodies` assign, in a fixed (name) order.
static std::vector<std::string>
carriedNames(std::initializer_list<const std::vector<StmtPtr> *> bodies,
             const std::set<std::string> &declared = {}) {
  std::set<std::string> assigned;
  for (const auto *body : bodies)
    collectAssigned(*body, declared, assigned);
  return {assigned.begin(), assigned.end()};
}

void Gen::genRegion(Block *block, const std::vector<std::string> &carried,
                    const std::function<void()> &fn) {
  OpBuilder::InsertionGuard guard(b);
  Operation *term = block->empty() ? nullptr : &block->back();
  if (term && term->hasTrait<OpTrait::IsTerminator>())
    b.setInsertionPoint(term);
  else
    b.setInsertionPointToEnd(block), term = nullptr;
  fn();
  SmallVector<Value> values;
  for (const std::string &n : carried)
    values.push_back(scope.at(n).value);
  Location l = b.getUnknownLoc();
  if (term) {
    l = term->getLoc();
    term->erase();
  }
  b.setInsertionPointToEnd(block);
  scf::YieldOp::create(b, l, values);
}

void Gen::genStmt(const Stmt &s) {
  switch (s.kind) {
  case Stmt::Kind::Return: // only a helper's last statement, consumed by Sema
    llvm_unreachable("return outside an inlined helper");
  case Stmt::Kind::For: {
    Location l = loc(s.loc);
    std::vector<std::string> carried = carriedNames({&s.body}, {s.name});
    SmallVector<Value> inits;
    for (const std::string &n : carried)
      inits.push_back(scope.at(n).value);
    Value lo = genAs(*s.lower, s.inductionType);
    Value hi = genAs(*s.upper, s.inductionType);
    Value step = s.step ? genAs(*s.step, s.inductionType)
                        : constant(s.inductionType, 1, 1, l);
    auto forOp = scf::ForOp::create(b, l, lo, hi, step, inits);
    auto saved = scope;
    scope[s.name] = Binding{forOp.getInductionVar(), s.inductionType};
    for (size_t i = 0; i < carried.size(); ++i)
      scope.at(carried[i]).value = forOp.getRegionIterArgs()[i];
    genRegion(forOp.getBody(), carried, [&] { genBlock(s.body); });
    scope = saved;
    for (size_t i = 0; i < carried.size(); ++i)
      scope.at(carried[i]).value = forOp.getResult(i);
    return;
  }
  case Stmt::Kind::If: {
    Location l = loc(s.loc);
    std::vector<std::string> carried = carriedNames({&s.body, &s.elseBody});
    SmallVector<Type> types;
    for (const std::string &n : carried)
      types.push_back(scope.at(n).value.getType());
    Value cond = gen(*s.value);
    auto ifOp = scf::IfOp::create(b, l, types, cond, /*addThenBlock=*/true,
                                  /*addElseBlock=*/true);
    auto saved = scope;
    genRegion(&ifOp.getThenRegion().front(), carried, [&] { genBlock(s.body); });
    scope = saved;
    genRegion(&ifOp.getElseRegion().front(), carried, [&] { genBlock(s.elseBody); });
    scope = saved;
    for (size_t i = 0; i < carried.size(); ++i)
      scope.at(carried[i]).value = ifOp.getResult(i);
    return;
  }
  case Stmt::Kind::While: {
    Location l = loc(s.loc);
    std::vector<std::string> carried = carriedNames({&s.body});
    SmallVector<Type> types;
    SmallVector<Value> inits;
    SmallVector<Location> locs;
    for (const std::string &n : carried) {
      inits.push_back(scope.at(n).value);
      types.push_back(inits.back().getType());
      locs.push_back(l);
    }
    auto whileOp = scf::WhileOp::create(b, l, types, inits);
    auto saved = scope;
    {
      OpBuilder::InsertionGuard guard(b);
      Block *before = b.createBlock(&whileOp.getBefore(), {}, types, locs);
      for (size_t i = 0; i < carried.size(); ++i)
        scope.at(carried[i]).value = before->getArgument(i);
      Value cond = gen(*s.value);
      scf::ConditionOp::create(b, l, cond, before->getArguments());
      Block *after = b.createBlock(&whileOp.getAfter(), {}, types, locs);
      for (size_t i = 0; i < carried.size(); ++i)
        scope.at(carried[i]).value = after->getArgument(i);
      genRegion(after, carried, [&] { genBlock(s.body); });
    }
    scope = saved;
    for (size_t i = 0; i < carried.size(); ++i)
      scope.at(carried[i]).value = whileOp.getResult(i);
    return;
  }
  case Stmt::Kind::Let: {
    SemaType t = s.value->type;
    t.weak = false;
    if (t.kind == SemaType::Kind::View) { // narrow(...)
      scope[s.name] = Binding{gen(*s.value), t};
      return;
    }
    scope[s.name] = Binding{genAs(*s.value, t), t};
    return;
  }
  case Stmt::Kind::Assign: {
    // Generating the value may add names to the scope (an inlined helper's
    // parameters and locals), which can move its entries: copy the type
    // first and look the binding up again after.
    SemaType t = scope.at(s.name).type;
    Value v = genAs(*s.value, t);
    scope.at(s.name).value = v;
    return;
  }
  case Stmt::Kind::ExprStmt:
    gen(*s.value);
    return;
  }
}

void Gen::run() {
  const KernelDecl &k = *inst.kernel;
  b.setInsertionPointToEnd(module.getBody());
  auto ptrTy = LLVM::LLVMPointerType::get(ctx, /*addressSpace=*/1);
  SmallVector<Type> argTypes;
  for (const SemaType &t : inst.paramTypes) {
    if (t.kind == SemaType::Kind::View) {
      argTypes.push_back(ptrTy);
      for (unsigned i = 0; i < 2 * t.rank; ++i)
        argTypes.push_back(b.getI64Type());
    } else {
      argTypes.push_back(mlirType(t));
    }
  }
  auto fnTy = b.getFunctionType(argTypes, {});
  auto func = func::FuncOp::create(b, loc(k.loc), k.name, fnTy);
  func->setAttr(tile::kKernelAttrName, b.getUnitAttr());
  // @launch: tile-layout keeps these unless options override them.
  if (inst.numWarps)
    func->setAttr(tile::kNumWarpsAttrName, b.getI32IntegerAttr(int32_t(inst.numWarps)));
  if (inst.minBlocksPerSM)
    func->setAttr(tile::kMinBlocksAttrName, b.getI32IntegerAttr(int32_t(inst.minBlocksPerSM)));
  if (inst.ftz)
    func->setAttr(tile::kFtzAttrName, b.getUnitAttr());
  if (inst.lateTurn)
    func->setAttr(tile::kLateTurnAttrName, b.getI32IntegerAttr(int32_t(inst.lateTurn)));
  if (inst.noTurns)
    func->setAttr(tile::kNoTurnsAttrName, b.getUnitAttr());
  if (inst.cluster)
    func->setAttr(tile::kClusterAttrName, b.getI32IntegerAttr(int32_t(inst.cluster)));
  if (inst.paddedGrid)
    func->setAttr(tile::kPaddedGridAttrName, b.getUnitAttr());
  if (inst.pingpong >= 0)
    func->setAttr(tile::kAlternateAttrName, b.getI32IntegerAttr(inst.pingpong));
  // A compile-time parameter named STAGES sets the depth of the mma
  // pipeline (tile-stage-shared picks one when it is absent or 0).
  if (auto it = inst.intConsts.find("STAGES"); it != inst.intConsts.end() && it->second != 0)
    func->setAttr(tile::kStagesAttrName, b.getI32IntegerAttr(int32_t(it->second)));
  Block *entry = func.addEntryBlock();
  b.setInsertionPointToStart(entry);
  unsigned argIdx = 0;
  for (unsigned p = 0; p < k.params.size(); ++p) {
    const SemaType &t = inst.paramTypes[p];
    Location l = loc(k.params[p].loc);
    if (t.kind == SemaType::Kind::View) {
      Value ptr = entry->getArgument(argIdx++);
      SmallVector<Value> sizes, strides;
      for (unsigned i = 0; i < t.rank; ++i)
        sizes.push_back(entry->getArgument(argIdx++));
      for (unsigned i = 0; i < t.rank; ++i)
        strides.push_back(entry->getArgument(argIdx++));
      auto viewTy = tile::ViewType::get(ctx, toMLIRType(ctx, t.elem), t.rank);
      auto mk = tile::MakeViewOp::create(b, l, viewTy, ptr, sizes, strides, ValueRange{});
      // The source parameter, for launch-ABI additions (TMA descriptors).
      mk->setAttr(tile::kParamIndexAttrName, b.getI32IntegerAttr(int32_t(p)));
      Value view = mk;
      scope[k.params[p].name] = Binding{view, t};
    } else {
      scope[k.params[p].name] = Binding{entry->getArgument(argIdx++), t};
    }
  }
  for (auto &s : k.body)
    genStmt(*s);
  func::ReturnOp::create(b, loc(k.loc));
}

void tilec::genKernel(ModuleOp module, const KernelInstance &inst,
                      DiagEngine &diags) {
  Gen(module, inst, diags).run();
}
