//===- SemaInline.cpp - fn helpers expanded at their calls ---===//
//
// Part of Sema (see SemaChecker.h for how it is split).
//
//===----------------------------------------------------------------------===//

#include "SemaChecker.h"

#include <cmath>
#include <limits>

using namespace tilec;
using namespace tilec::sema;

/// Calls `fn` on every statement of `body`, nested ones included.
static void forEachStmt(const std::vector<StmtPtr> &body,
                        llvm::function_ref<void(const Stmt &)> fn) {
  for (const StmtPtr &st : body) {
    fn(*st);
    forEachStmt(st->body, fn);
    forEachStmt(st->elseBody, fn);
  }
}

/// The first expression in `e` (its operands and, for an inlined helper,
/// its statements) whose type is a tile, or null.
const Expr *tilec::sema::findTileExpr(const Expr &e) {
  if (e.type.isTile())
    return &e;
  for (auto &a : e.args)
    if (const Expr *t = findTileExpr(*a))
      return t;
  const Expr *found = nullptr;
  forEachStmt(e.body, [&](const Stmt &st) {
    for (const Expr *x : {st.value.get(), st.lower.get(), st.upper.get(), st.step.get()})
      if (x && !found)
        found = findTileExpr(*x);
  });
  return found;
}

/// Whether `body` holds a `return` (at any depth).
static bool hasReturn(const std::vector<StmtPtr> &body) {
  bool found = false;
  forEachStmt(body, [&](const Stmt &st) { found |= st.kind == Stmt::Kind::Return; });
  return found;
}

/// `!done`.
static ExprPtr notDone(const std::string &done, llvm::SMLoc loc) {
  auto e = std::make_unique<Expr>(Expr::Kind::Unary, loc);
  e->op = Expr::Op::Not;
  auto name = std::make_unique<Expr>(Expr::Kind::Name, loc);
  name->name = done;
  e->args.push_back(std::move(name));
  return e;
}

/// An early `return e;` becomes `ret = e; done = true;`; the statements
/// after an `if` or loop that may have returned run under `if !done { ...
/// }`; a `for` body that may return runs under `if !done`, and a `while`
/// that may return also stops on `done`. `check` instead turns each return
/// into `let ret = e;` (to learn the returned types).
static std::vector<StmtPtr> lowerReturns(const std::vector<StmtPtr> &body,
                                         const std::string &ret, const std::string &done,
                                         bool check, unsigned &loops) {
  std::vector<StmtPtr> out;
  for (size_t i = 0; i < body.size(); ++i) {
    const Stmt &st = *body[i];
    if (st.kind == Stmt::Kind::Return) {
      auto set = std::make_unique<Stmt>(check ? Stmt::Kind::Let : Stmt::Kind::Assign, st.loc);
      set->name = ret;
      set->nameLoc = st.loc;
      set->value = cloneExpr(*st.value);
      out.push_back(std::move(set));
      if (!check) {
        auto flag = std::make_unique<Stmt>(Stmt::Kind::Assign, st.loc);
        flag->name = done;
        flag->value = std::make_unique<Expr>(Expr::Kind::BoolLit, st.loc);
        flag->value->intValue = 1;
        out.push_back(std::move(flag));
      }
      return out; // anything after it is unreachable
    }
    if (!hasReturn(st.body) && !hasReturn(st.elseBody)) {
      out.push_back(cloneStmt(st));
      continue;
    }
    StmtPtr branch = cloneStmt(st); // an if or a loop, with its bodies lowered
    branch->body = lowerReturns(st.body, ret, done, check, loops);
    branch->elseBody = lowerReturns(st.elseBody, ret, done, check, loops);
    if (!check && st.kind == Stmt::Kind::For) {
      // Later iterations do nothing once the body has returned.
      auto guard = std::make_unique<Stmt>(Stmt::Kind::If, st.loc);
      guard->value = notDone(done, st.loc);
      guard->body = std::move(branch->body);
      branch->body.clear();
      branch->body.push_back(std::move(guard));
    } else if (!check && st.kind == Stmt::Kind::While) {
      // `var go = cond; while go { body; go = !done && cond }`, with cond
      // evaluated only while the helper has not returned.
      std::string go = done + "#go" + std::to_string(loops++);
      auto decl = std::make_unique<Stmt>(Stmt::Kind::Let, st.loc);
      decl->isVar = true;
      decl->name = go;
      decl->nameLoc = st.loc;
      decl->value = cloneExpr(*st.value);
      out.push_back(std::move(decl));
      auto again = std::make_unique<Stmt>(Stmt::Kind::If, st.loc);
      again->value = notDone(done, st.loc);
      auto set = [&](ExprPtr v) {
        auto a = std::make_unique<Stmt>(Stmt::Kind::Assign, st.loc);
        a->name = go;
        a->nameLoc = st.loc;
        a->value = std::move(v);
        return a;
      };
      again->body.push_back(set(cloneExpr(*st.value)));
      auto no = std::make_unique<Expr>(Expr::Kind::BoolLit, st.loc);
      no->intValue = 0;
      again->elseBody.push_back(set(std::move(no)));
      branch->body.push_back(std::move(again));
      auto name = std::make_unique<Expr>(Expr::Kind::Name, st.loc);
      name->name = go;
      branch->value = std::move(name);
    }
    out.push_back(std::move(branch));
    if (check) // the rest stays in this scope: only the types matter
      continue;
    std::vector<StmtPtr> rest(body.size() - i - 1);
    for (size_t k = i + 1; k < body.size(); ++k)
      rest[k - i - 1] = cloneStmt(*body[k]);
    if (rest.empty())
      return out;
    auto guard = std::make_unique<Stmt>(Stmt::Kind::If, st.loc);
    guard->value = notDone(done, st.loc);
    guard->body = lowerReturns(rest, ret, done, check, loops);
    out.push_back(std::move(guard));
    return out;
  }
  return out;
}

/// `cast<T>(0)` or `zeros<T>([d...])` for a value of type `t`.
static ExprPtr zeroOf(const SemaType &t, llvm::SMLoc loc) {
  auto call = std::make_unique<Expr>(Expr::Kind::Call, loc);
  call->typeArg = std::make_unique<TypeExpr>();
  call->typeArg->kind = TypeExpr::Kind::Scalar;
  call->typeArg->scalar = t.elem;
  call->typeArg->loc = loc;
  if (t.isScalar()) {
    call->name = "cast";
    call->args.push_back(std::make_unique<Expr>(Expr::Kind::IntLit, loc));
    return call;
  }
  call->name = "zeros";
  auto dims = std::make_unique<Expr>(Expr::Kind::List, loc);
  for (int64_t d : t.shape) {
    auto lit = std::make_unique<Expr>(Expr::Kind::IntLit, loc);
    lit->intValue = d;
    dims->args.push_back(std::move(lit));
  }
  call->args.push_back(std::move(dims));
  return call;
}

/// A call of an `fn` helper: the arguments are checked here, then the
/// helper's body is checked in a scope that holds only its parameters (bound
/// to the arguments) and compile-time parameters, and the call becomes an
/// Inline expression (its statements, then the returned value).
bool Checker::inlineCall(Expr &e, const FnDecl &fn) {
  // Combiners (named "fn", a keyword) cannot recurse: they have no name.
  bool lambda = fn.name == "fn";
  if (!lambda && inlining.count(fn.name))
    return error(e.loc, "'" + fn.name + "' calls itself; helpers are inlined and cannot recurse");
  std::vector<ExprPtr> positional;
  std::map<std::string, int64_t> consts;
  for (auto &a : e.args) {
    if (a->argName.empty()) {
      positional.push_back(std::move(a));
      continue;
    }
    auto cp = llvm::find_if(fn.constParams, [&](const ConstParam &c) { return c.name == a->argName; });
    if (cp == fn.constParams.end())
      return error(a->loc, "'" + fn.name + "' has no compile-time parameter '" + a->argName + "'");
    int64_t v;
    if (!requireConstInt(*a, "a compile-time argument", v))
      return false;
    consts[a->argName] = v;
  }
  e.args.clear();
  if (positional.size() != fn.params.size())
    return error(e.loc, "'" + fn.name + "' takes " + std::to_string(fn.params.size()) +
                            " argument" + (fn.params.size() == 1 ? "" : "s") + ", got " +
                            std::to_string(positional.size()));
  for (auto &a : positional)
    if (!requireValue(*a, "an argument"))
      return false;
  if (fn.body.empty() || fn.body.back()->kind != Stmt::Kind::Return)
    return error(fn.loc, "helper '" + fn.name + "' must end with 'return <value>;'");
  // The body's scope: argument slots, then the parameters bound to them.
  auto saved = std::move(symbols);
  symbols.clear();
  if (!lambda)
    inlining.insert(fn.name);
  callStack.push_back({lambda ? std::string("a combiner") : fn.name, e.loc});
  auto finish = [&](bool ok) {
    symbols = std::move(saved);
    if (!lambda)
      inlining.erase(fn.name);
    callStack.pop_back();
    return ok;
  };
  for (const ConstParam &cp : fn.constParams) {
    Symbol sym;
    sym.kind = Symbol::Kind::IntConst;
    sym.type = SemaType::scalar(ScalarType::I32, /*weak=*/true);
    sym.loc = cp.loc;
    if (auto it = consts.find(cp.name); it != consts.end()) {
      sym.intValue = it->second;
    } else if (cp.defaultInt) {
      ExprPtr d = cloneExpr(*cp.defaultInt);
      if (!requireConstInt(*d, "the default", sym.intValue))
        return finish(false);
    } else {
      error(e.loc, "'" + fn.name + "' needs its compile-time parameter: " + fn.name + "(..., " +
                       cp.name + " = <value>)");
      return finish(false);
    }
    symbols[cp.name] = sym;
  }
  std::vector<StmtPtr> body;
  for (size_t i = 0; i < positional.size(); ++i) {
    std::string slot = "arg#" + std::to_string(i);
    Symbol sym;
    sym.type = positional[i]->type;
    sym.type.weak = false;
    sym.loc = positional[i]->loc;
    symbols[slot] = sym;
    auto bindSlot = std::make_unique<Stmt>(Stmt::Kind::Let, positional[i]->loc);
    bindSlot->name = slot;
    bindSlot->value = std::move(positional[i]);
    body.push_back(std::move(bindSlot));
  }
  size_t checkedFrom = body.size();
  for (size_t i = 0; i < fn.params.size(); ++i) {
    auto bind = std::make_unique<Stmt>(Stmt::Kind::Let, fn.params[i].second);
    bind->name = fn.params[i].first;
    bind->nameLoc = fn.params[i].second;
    bind->value = std::make_unique<Expr>(Expr::Kind::Name, fn.params[i].second);
    bind->value->name = "arg#" + std::to_string(i);
    body.push_back(std::move(bind));
  }
  std::vector<StmtPtr> lead; // the body before the final return
  for (size_t i = 0; i + 1 < fn.body.size(); ++i)
    lead.push_back(cloneStmt(*fn.body[i]));
  bool early = hasReturn(lead);
  std::string signature; // the key of earlyReturnTypes (top-level helpers)
  if (early && !lambda) {
    signature = fn.name;
    for (const ConstParam &cp : fn.constParams)
      signature += ";" + cp.name + "=" + std::to_string(symbols[cp.name].intValue);
    for (size_t i = 0; i < fn.params.size(); ++i)
      signature += ";" + symbols["arg#" + std::to_string(i)].type.str();
  }
  ExprPtr result;
  if (!early) {
    for (auto &st : lead)
      body.push_back(std::move(st));
    for (size_t i = checkedFrom; i < body.size(); ++i)
      if (!checkStmt(*body[i]))
        return finish(false);
    result = cloneExpr(*fn.body.back()->value);
    if (!requireValue(*result, "the returned value"))
      return finish(false);
  } else {
    // Early returns: learn the final return's type in a scratch copy (early
    // returns bound to throwaway names), then check the body with the
    // returns turned into assignments of a result variable.
    std::string ret = "ret#" + std::to_string(inlineCount), done = "done#" +
                                                                  std::to_string(inlineCount);
    ++inlineCount;
    unsigned loops = 0;
    SemaType type;
    if (auto known = earlyReturnTypes.find(signature);
        !signature.empty() && known != earlyReturnTypes.end()) {
      type = known->second;
    } else {
      auto scratchSymbols = symbols;
      std::vector<StmtPtr> scratch = lowerReturns(lead, ret, done, /*check=*/true, loops);
      bool ok = true;
      for (size_t i = checkedFrom; i < body.size() && ok; ++i) {
        StmtPtr bind = cloneStmt(*body[i]);
        ok = checkStmt(*bind);
      }
      for (size_t i = 0; i < scratch.size() && ok; ++i)
        ok = checkStmt(*scratch[i]);
      // The types of the early returns (the `let ret` bindings, now checked).
      std::vector<std::pair<const Stmt *, SemaType>> earlyTypes;
      if (ok)
        forEachStmt(scratch, [&](const Stmt &st) {
          if (st.kind == Stmt::Kind::Let && st.name == ret)
            earlyTypes.push_back({&st, st.value->type});
        });
      ExprPtr last = cloneExpr(*fn.body.back()->value);
      ok = ok && requireValue(*last, "the returned value");
      symbols = scratchSymbols;
      if (!ok)
        return finish(false);
      // The result type: that of the returns that are not bare literals (the
      // first of them, the final return first), or the literals' common type.
      std::vector<std::pair<const Expr *, SemaType>> all{{last.get(), last->type}};
      for (auto &[st, t] : earlyTypes)
        all.push_back({st->value.get(), t});
      bool found = false;
      for (auto &[x, t] : all)
        if (!t.weak && !found) {
          type = t;
          found = true;
        }
      if (!found) {
        type = all.front().second;
        for (auto &[x, t] : all)
          type = unifyOperands(type, t, "").type;
      }
      type.weak = false;
      // Every return must be assignable to it (a literal adapts).
      for (auto &[x, t] : all) {
        if (!assignable(type, t)) {
          error(x->loc, "'" + fn.name + "' returns " + describeOperand(type) +
                            " elsewhere, but this 'return' gives " + describeOperand(t));
          return finish(false);
        }
      }
      if (!signature.empty())
        earlyReturnTypes[signature] = type;
    }
    auto declare = [&](const std::string &name, ExprPtr init) {
      auto d = std::make_unique<Stmt>(Stmt::Kind::Let, fn.loc);
      d->isVar = true;
      d->name = name;
      d->nameLoc = fn.loc;
      d->value = std::move(init);
      body.push_back(std::move(d));
    };
    declare(ret, zeroOf(type, fn.loc));
    auto no = std::make_unique<Expr>(Expr::Kind::BoolLit, fn.loc);
    no->intValue = 0;
    declare(done, std::move(no));
    // The final return runs unless an early one did.
    auto final = std::make_unique<Stmt>(Stmt::Kind::Return, fn.body.back()->loc);
    final->value = cloneExpr(*fn.body.back()->value);
    std::vector<StmtPtr> whole;
    for (auto &st : lead)
      whole.push_back(std::move(st));
    whole.push_back(std::move(final));
    for (auto &st : lowerReturns(whole, ret, done, /*check=*/false, loops))
      body.push_back(std::move(st));
    for (size_t i = checkedFrom; i < body.size(); ++i)
      if (!checkStmt(*body[i]))
        return finish(false);
    result = std::make_unique<Expr>(Expr::Kind::Name, fn.body.back()->loc);
    result->name = ret;
    if (!requireValue(*result, "the returned value"))
      return finish(false);
  }
  e.kind = Expr::Kind::Inline;
  e.type = result->type;
  e.body = std::move(body);
  e.args.push_back(std::move(result));
  return finish(true);
}
