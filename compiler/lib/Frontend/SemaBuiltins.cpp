//===- SemaBuiltins.cpp - calls of builtins, irregular accesses, combiners ---===//
//
// Part of Sema (see SemaChecker.h for how it is split).
//
//===----------------------------------------------------------------------===//

#include "SemaChecker.h"

#include "llvm/ADT/StringMap.h"

#include <cmath>
#include <limits>

using namespace tilec;
using namespace tilec::sema;


std::string Checker::suggest(llvm::StringRef name) const {
    std::string best;
  unsigned bestDist = 3;
  auto consider = [&](llvm::StringRef cand) {
    unsigned d = name.edit_distance(cand, true, bestDist);
    if (d < bestDist) {
      bestDist = d;
      best = cand.str();
    }
  };
  for (auto &kv : symbols)
    consider(kv.first);
  for (const char *b : kBuiltins)
    consider(b);
  for (const char *b : kUnaryMathNames)
    consider(b);
  if (best.empty())
    return "";
  return "; did you mean '" + best + "'?";
}

/// A call whose first argument must be a tile: argument count, then
/// "'f' needs a tile, got ...".
bool Checker::requireTileArg(Expr &e, size_t lo, size_t hi) {
  if (!checkArgCount(e, lo, hi) || !requireValue(*e.args[0], "the argument"))
    return false;
  if (!e.args[0]->type.isTile())
    return error(e.args[0]->loc,
                 "'" + e.name + "' needs a tile, got " + describeOperand(e.args[0]->type));
  return true;
}

bool Checker::requireView(Expr &e) {
  Expr &view = *e.args[0];
  if (!check(view))
    return false;
  if (view.type.kind != SemaType::Kind::View)
    return error(view.loc, "the first argument of '" + e.name +
                               "' must be a tensor parameter, got " + view.type.str());
  return true;
}

/// Broadcasts the element shape of `call` (gather, scatter, atomics, print,
/// assert; empty while every operand seen is a scalar) with operand `x`.
bool Checker::joinElementShape(Expr &call, Expr &x, const char *others) {
  if (!x.type.isTile())
    return true;
  std::vector<int64_t> &shape = call.elementShape;
  if (shape.empty()) {
    shape = x.type.shape;
    return true;
  }
  auto b = broadcastShapes(shape, x.type.shape);
  if (!b)
    return error(x.loc, "'" + call.name + "': " + x.type.str() + " does not broadcast with the other " +
                            others + " shape " + shapeText(shape));
  shape = *b;
  return true;
}

/// gather(x, [i, ...], mask?, fill?), scatter(x, [i, ...], values, mask?),
/// atomic_<op>(x, [i, ...], values, mask?), atomic_cas(x, [i, ...], cmp,
/// values, mask?): element-wise access at index tiles (numpy-broadcast
/// together with the values and the mask).
bool Checker::checkIrregular(Expr &e) {
  const std::string &f = e.name;
  bool isGather = f == "gather", isScatter = f == "scatter", isCas = f == "atomic_cas";
  bool isAtomic = !isGather && !isScatter;
  if (isAtomic && f != "atomic_add" && f != "atomic_min" && f != "atomic_max" &&
      f != "atomic_xchg" && !isCas)
    return error(e.loc, "unknown atomic '" + f +
                            "'; there are atomic_add, atomic_min, atomic_max, atomic_xchg "
                            "and atomic_cas");
  size_t values = isGather ? 0 : (isCas ? 2 : 1); // value operands after the indices
  size_t minArgs = 2 + values, maxArgs = minArgs + (isGather ? 2 : 1);
  if (!checkArgCount(e, minArgs, maxArgs))
    return false;
  if (!requireView(e))
    return false;
  Expr &view = *e.args[0];
  Expr &idx = *e.args[1];
  if (idx.kind != Expr::Kind::List)
    return error(idx.loc, "the element indices must be a list of index tiles, e.g. [i] or [r, c]");
  if (idx.args.size() != view.type.rank)
    return error(idx.loc, "'" + view.name + "' has rank " + std::to_string(view.type.rank) +
                              ", so '" + f + "' needs " + std::to_string(view.type.rank) +
                              " index tile" + (view.type.rank == 1 ? "" : "s") + ", got " +
                              std::to_string(idx.args.size()));
  e.elementShape.clear();
  auto join = [&](Expr &x) { return joinElementShape(e, x, "operands'"); };
  for (auto &i : idx.args) {
    if (!requireValue(*i, "an index") )
      return false;
    if (isFloatType(i->type.elem) || i->type.elem == ScalarType::I1)
      return error(i->loc, "an index must be an integer tile or scalar, got " +
                               describeOperand(i->type));
    if (!join(*i))
      return false;
  }
  ScalarType elem = view.type.elem;
  for (size_t k = 0; k < values; ++k) {
    Expr &v = *e.args[2 + k];
    if (!requireValue(v, "the values"))
      return false;
    if (!(v.type.weak || v.type.elem == elem))
      return error(v.loc, "'" + f + "' into " + view.type.str() + " needs values of " +
                              scalarTypeName(elem) + ", got " + describeOperand(v.type) +
                              "; convert with cast<" + scalarTypeName(elem) + ">(...)");
    if (v.type.weak && isFloatType(v.type.elem) && !isFloatType(elem))
      return error(v.loc, "a float literal cannot be stored into " + view.type.str());
    if (!join(v))
      return false;
  }
  size_t next = 2 + values;
  if (e.args.size() > next) {
    Expr &m = *e.args[next];
    if (!requireValue(m, "the mask"))
      return false;
    if (m.type.elem != ScalarType::I1)
      return error(m.loc, "the mask of '" + f + "' must be a boolean (a comparison), got " +
                              describeOperand(m.type));
    if (!join(m))
      return false;
    ++next;
  }
  if (isGather && e.args.size() > next) {
    Expr &fill = *e.args[next];
    if (!requireValue(fill, "the fill value"))
      return false;
    if (!fill.type.weak || !fill.type.isScalar())
      return error(fill.loc, "the fill value must be a number literal");
    if (isFloatType(fill.type.elem) && !isFloatType(elem))
      return error(fill.loc, "a float fill value cannot fill " + view.type.str());
  }
  // A scalar atomic (scalar indices, values and mask) updates one element: it
  // is a [1] tile operation and returns the old value as a [1] tile.
  if (isAtomic && e.elementShape.empty())
    e.elementShape = {1};
  const std::vector<int64_t> &shape = e.elementShape;
  if (shape.empty())
    return error(idx.loc, "'" + f + "' needs at least one index tile (range(...) gives one)");
  if (isAtomic) {
    bool intOk = elem == ScalarType::I32 || elem == ScalarType::U32 ||
                 elem == ScalarType::I64 || elem == ScalarType::U64;
    bool ok = f == "atomic_add" ? (intOk || elem == ScalarType::F32 || elem == ScalarType::F16 ||
                                   elem == ScalarType::BF16)
              : f == "atomic_xchg" ? (intOk || elem == ScalarType::F32)
                                   : intOk;
    if (!ok)
      return error(e.loc, "'" + f + "' is not available for " + view.type.str() +
                              (f == "atomic_add" ? "; it works on f32, f16, bf16, i32, u32, i64 and u64"
                               : f == "atomic_xchg" ? "; it works on f32, i32, u32, i64 and u64"
                                                    : "; it works on i32, u32, i64 and u64"));
  }
  if (isScatter)
    e.type.kind = SemaType::Kind::Void;
  else
    e.type = SemaType::tile(elem, shape);
  return true;
}

/// The combiner of reduce/scan (`fn(a, b) { ... }` or the name of a
/// helper) is checked as a call with two scalars of type `elem`; `arg`
/// becomes that Inline call, reading its operands from the names
/// `combine#a` and `combine#b`.
bool Checker::checkCombiner(ExprPtr &arg, ScalarType elem, const std::string &what) {
  const FnDecl *fn = nullptr;
  if (arg->kind == Expr::Kind::Lambda)
    fn = arg->lambda.get();
  else if (arg->kind == Expr::Kind::Name && kernel.fns)
    for (auto &h : *kernel.fns)
      if (h->name == arg->name)
        fn = h.get();
  if (!fn)
    return error(arg->loc, "the last argument of '" + what +
                               "' is the combiner: fn(a, b) { return ...; } or the name of a "
                               "helper taking two values");
  if (fn->params.size() != 2)
    return error(arg->loc, "the combiner of '" + what + "' takes two values (a, b), not " +
                               std::to_string(fn->params.size()));
  auto call = std::make_unique<Expr>(Expr::Kind::Call, arg->loc);
  call->name = fn->name;
  for (const char *n : {"combine#a", "combine#b"}) {
    auto x = std::make_unique<Expr>(Expr::Kind::Name, arg->loc);
    x->name = n;
    call->args.push_back(std::move(x));
    Symbol sym;
    sym.type = SemaType::scalar(elem);
    sym.loc = arg->loc;
    symbols[n] = sym;
  }
  bool ok = inlineCall(*call, *fn);
  symbols.erase("combine#a");
  symbols.erase("combine#b");
  if (!ok)
    return false;
  // The combiner runs on scalars, inside the reduction's lowering: no tiles.
  if (const Expr *t = findTileExpr(*call))
    return error(t->loc, "a combiner of '" + what + "' works on two scalars; it cannot use "
                         "tiles (this is " + describeOperand(t->type) + ")");
  Unified u = unifyOperands(SemaType::scalar(elem), call->type, "");
  if (!call->type.isScalar() || !u.error.empty() || u.type.elem != elem)
    return error(arg->loc, "the combiner of '" + what + "' must return a " +
                               scalarTypeName(elem) + " (the element type), got " +
                               describeOperand(call->type));
  arg = std::move(call);
  return true;
}

namespace {
/// What a builtin accepts besides positional arguments (Builtins.def).
enum class Accepts { Plain, Type, Axis, Tf32 };
struct BuiltinEntry {
  bool (Checker::*check)(Expr &);
  Accepts accepts;
};
} // namespace

/// The type rule of builtin `name` (Builtins.def), or null.
static const BuiltinEntry *findBuiltin(llvm::StringRef name) {
#define TILEC_ACCEPTS_PLAIN Accepts::Plain
#define TILEC_ACCEPTS_TYPE Accepts::Type
#define TILEC_ACCEPTS_AXIS Accepts::Axis
#define TILEC_ACCEPTS_TF32 Accepts::Tf32
  static const llvm::StringMap<BuiltinEntry> table = {
#define TILEC_BUILTIN(spelling, Rule, accepts) {spelling, {&Checker::check##Rule, accepts}},
#include "tilec/Frontend/Builtins.def"
  };
#undef TILEC_ACCEPTS_PLAIN
#undef TILEC_ACCEPTS_TYPE
#undef TILEC_ACCEPTS_AXIS
#undef TILEC_ACCEPTS_TF32
  auto it = table.find(name);
  return it == table.end() ? nullptr : &it->second;
}

bool Checker::checkCall(Expr &e) {
  const std::string &f = e.name;
  if (kernel.fns)
    for (auto &fn : *kernel.fns)
      if (fn->name == f)
        return inlineCall(e, *fn);
  const BuiltinEntry *builtin = findBuiltin(f);
  if (e.typeArg && !(builtin && builtin->accepts == Accepts::Type))
    return error(e.loc, "'" + f + "' does not take a type argument");
  // Named arguments: only `axis = d` of a reduction.
  bool reduction = builtin && builtin->accepts == Accepts::Axis;
  for (size_t k = 0; k < e.args.size(); ++k) {
    Expr &a = *e.args[k];
    if (a.argName.empty())
      continue;
    // tf32 = b of mma: checked with mma's arguments.
    if (builtin && builtin->accepts == Accepts::Tf32 && a.argName == "tf32") {
      if (k != 3 || e.args.size() != 4)
        return error(a.loc, "'mma(a, b, acc, tf32 = true)' takes tf32 after the accumulator");
      continue;
    }
    if (a.argName != "axis" || !reduction)
      return error(a.loc, "'" + f + "' takes no argument named '" + a.argName + "'" +
                              (a.argName == "axis"
                                   ? "; axis = d goes with sum, max, min, prod, argmax and argmin"
                                   : ""));
    return checkReductionOverAxis(e, a, k);
  }
  if (isUnaryMathFunction(f))
    return checkUnaryMath(e);
  if (builtin)
    return (this->*builtin->check)(e);
  if (llvm::StringRef(f).starts_with("atomic_")) // names the atomics there are
    return checkIrregular(e);
  return error(e.loc, "unknown function '" + f + "'" + suggest(f));
}
