//===- SemaParams.cpp - compile-time parameters, @tune, @launch, the grid ---===//
//
// Part of Sema (see SemaChecker.h for how it is split).
//
//===----------------------------------------------------------------------===//

#include "SemaChecker.h"

#include <cmath>
#include <limits>
#include <optional>

using namespace tilec;
using namespace tilec::sema;

bool Checker::resolveType(const TypeExpr &t, SemaType &out, bool allowTensor) {
  switch (t.kind) {
  case TypeExpr::Kind::Scalar:
    out = SemaType::scalar(t.scalar);
    return true;
  case TypeExpr::Kind::Named: {
    auto it = inst.typeConsts.find(t.name);
    if (it == inst.typeConsts.end()) {
      if (inst.intConsts.count(t.name))
        return error(t.loc, "'" + t.name + "' is an integer parameter, not a type");
      return error(t.loc, "unknown type '" + t.name +
                              "'; types are i1 i8 i16 i32 i64 u8 u16 u32 u64 "
                              "f16 bf16 f32 f64 f8e4m3 f8e5m2, tensor<T, R> or a 'type' "
                              "parameter of the kernel");
    }
    out = SemaType::scalar(it->second);
    return true;
  }
  case TypeExpr::Kind::Tensor: {
    if (!allowTensor)
      return error(t.loc, "a tensor type is only allowed for kernel parameters");
    SemaType elem;
    if (!resolveType(*t.element, elem, /*allowTensor=*/false))
      return false;
    out.kind = SemaType::Kind::View;
    out.elem = elem.elem;
    out.rank = t.rank;
    return true;
  }
  }
  return false;
}

bool Checker::bindConstParams(const Defines &defines,
                              std::set<std::string> &used) {
  for (ConstParam &cp : kernel.constParams) {
    if (symbols.count(cp.name) || inst.typeConsts.count(cp.name))
      return error(cp.loc, "compile-time parameter '" + cp.name +
                               "' is declared twice");
    auto def = defines.find(cp.name);
    if (cp.kind == ConstParam::Kind::Int) {
      int64_t value = 0;
      if (def != defines.end()) {
        used.insert(cp.name);
        llvm::StringRef text(def->second);
        long long v;
        if (text.trim().getAsInteger(0, v))
          return error(cp.loc, "-D " + cp.name + "=" + def->second +
                                   ": '" + cp.name + "' of kernel '" +
                                   kernel.name +
                                   "' must be a compile-time integer");
        value = v;
      } else if (cp.defaultInt) {
        if (!requireConstInt(*cp.defaultInt, "the default of a compile-time parameter", value))
          return false;
      } else {
        return error(cp.loc, "compile-time parameter '" + cp.name +
                                 "' of kernel '" + kernel.name +
                                 "' has no default; give one or pass -D " +
                                 cp.name + "=<value>");
      }
      inst.intConsts[cp.name] = value;
      Symbol s;
      s.kind = Symbol::Kind::IntConst;
      s.type = SemaType::scalar(ScalarType::I64, true);
      s.intValue = value;
      s.loc = cp.loc;
      symbols[cp.name] = s;
    } else {
      ScalarType value;
      if (def != defines.end()) {
        used.insert(cp.name);
        auto t = parseScalarType(llvm::StringRef(def->second).trim().str());
        if (!t)
          return error(cp.loc, "-D " + cp.name + "=" + def->second + ": '" +
                                   def->second + "' is not a scalar type");
        value = *t;
      } else if (cp.defaultType) {
        SemaType t;
        if (!resolveType(*cp.defaultType, t, false))
          return false;
        value = t.elem;
      } else {
        return error(cp.loc, "type parameter '" + cp.name + "' of kernel '" +
                                 kernel.name +
                                 "' has no default; give one or pass -D " +
                                 cp.name + "=<type>");
      }
      inst.typeConsts[cp.name] = value;
      Symbol s;
      s.kind = Symbol::Kind::TypeConst;
      s.type = SemaType::scalar(value);
      s.loc = cp.loc;
      symbols[cp.name] = s;
    }
  }
  return true;
}

bool Checker::isIntConstParam(const std::string &name) const {
  return llvm::any_of(kernel.constParams, [&](const ConstParam &cp) {
    return cp.name == name && cp.kind == ConstParam::Kind::Int;
  });
}

bool Checker::checkTune(const Defines &defines) {
  std::set<std::string> seen;
  for (TuneParam &t : kernel.tune) {
    if (!isIntConstParam(t.name))
      return error(t.loc, "'" + t.name + "' in @tune is not an int compile-time "
                          "parameter of kernel '" + kernel.name + "'");
    if (!seen.insert(t.name).second)
      return error(t.loc, "'" + t.name + "' appears twice in @tune");
    if (t.values.empty())
      return error(t.loc, "@tune needs at least one candidate value for '" + t.name + "'");
    std::vector<int64_t> values;
    for (auto &v : t.values) {
      int64_t x;
      if (!requireConstInt(*v, "a @tune candidate", x))
        return false;
      if (llvm::is_contained(values, x))
        return error(v->loc, "candidate " + std::to_string(x) + " of '" + t.name +
                                 "' is listed twice");
      values.push_back(x);
    }
    // A -D value fixes the parameter: nothing left to tune.
    if (!defines.count(t.name))
      inst.signature.tuneSpace.emplace_back(t.name, std::move(values));
  }
  return true;
}

bool Checker::checkLaunch() {
  // Whether num_warps x min_blocks_per_sm fits an SM is checked where the
  // layout is final (TileToNVVM): options may override either value.
  static const char *const kSettings[] = {"num_warps", "min_blocks_per_sm", "cluster",
                                          "pingpong", "persistent", "group_rows",
                                          "pair_tiles", "ftz", "late_turn", "turns"};
  std::set<std::string> seen;
  for (LaunchParam &p : kernel.launch) {
    if (!llvm::is_contained(kSettings, llvm::StringRef(p.name))) {
      llvm::StringRef name(p.name);
      const char *near = kSettings[0];
      for (const char *s : kSettings)
        if (name.edit_distance(s) < name.edit_distance(near))
          near = s;
      return error(p.loc, "unknown launch setting '" + p.name +
                              "'; @launch takes num_warps, min_blocks_per_sm, cluster, pingpong, "
                              "persistent, group_rows, pair_tiles, ftz, late_turn and turns (did "
                              "you mean '" + near + "'?)");
    }
    if (!seen.insert(p.name).second)
      return error(p.loc, "'" + p.name + "' appears twice in @launch");
    int64_t v;
    if (!requireConstInt(*p.value, p.name.c_str(), v))
      return false;
    // A setting that is 0 or 1: what each means, for the error.
    auto flag = [&](const char *off, const char *on) {
      return v == 0 || v == 1 ||
             error(p.value->loc, p.name + " must be 0 (" + off + ") or 1 (" + on + "), got " +
                                     std::to_string(v));
    };
    if (p.name == "num_warps") {
      if (v < 1 || v > 32 || (v & (v - 1)))
        return error(p.value->loc, "num_warps must be a power of two from 1 to 32, got " +
                                       std::to_string(v));
      inst.numWarps = unsigned(v);
    } else if (p.name == "min_blocks_per_sm") {
      if (v < 1 || v > 32)
        return error(p.value->loc, "min_blocks_per_sm must be 1 to 32 (an SM holds at most "
                                   "32 blocks), got " + std::to_string(v));
      inst.minBlocksPerSM = unsigned(v);
    } else if (p.name == "pingpong") {
      if (!flag("the consumer warpgroups share each tile", "they take a persistent kernel's "
                                                           "tiles in turn"))
        return false;
      inst.pingpong = int(v);
    } else if (p.name == "persistent") {
      if (!flag("one program per grid entry",
                "one program per resident slot, looping over the grid"))
        return false;
      inst.persistent = v == 1;
    } else if (p.name == "group_rows") {
      if (v < 0 || v > 65535)
        return error(p.value->loc, "group_rows must be 0 (the launch order) to 65535 (how many "
                                   "values of grid dimension 0 run for each value of "
                                   "dimension 1), got " + std::to_string(v));
      inst.groupRows = unsigned(v);
    } else if (p.name == "pair_tiles") {
      if (!flag("a persistent program takes one of the grid's programs at a time",
                "two consecutive ones"))
        return false;
      inst.pairTiles = v == 1;
    } else if (p.name == "ftz") {
      if (!flag("exp, exp2, log and log2 keep subnormal values",
                "they flush them to zero, in fewer instructions"))
        return false;
      inst.ftz = v == 1;
    } else if (p.name == "late_turn") {
      if (v < 0 || v > 2)
        return error(p.value->loc,
                     "late_turn must be 0 (a consumer warpgroup's wait for its turn at the "
                     "tensor cores goes where ptxas puts it), 1 (it waits after computing the "
                     "register operand of the turn's first mma) or 2 (also after rescaling "
                     "the accumulator that mma adds to), got " + std::to_string(v));
      inst.lateTurn = unsigned(v);
    } else if (p.name == "turns") {
      if (!flag("the consumer warpgroups issue their mmas as each is ready",
                "two consumer warpgroups take turns at the tensor cores in an mma loop"))
        return false;
      inst.noTurns = v == 0;
    } else {
      if (v != 1 && v != 2)
        return error(p.value->loc, "cluster must be 1 (no clusters) or 2 (pairs of programs "
                                   "along grid dimension 0), got " + std::to_string(v));
      inst.cluster = unsigned(v);
    }
  }
  return true;
}

bool Checker::toGridExpr(const Expr &e, GridExpr &out) {
  if (e.constInt) {
    out = GridExpr::constant(*e.constInt);
    return true;
  }
  switch (e.kind) {
  case Expr::Kind::Name: {
    const Symbol &s = symbols.at(e.name);
    if (s.kind == Symbol::Kind::Param && s.type.isScalar() &&
        !isFloatType(s.type.elem)) {
      out.kind = GridExpr::Kind::Scalar;
      out.param = s.paramIndex;
      return true;
    }
    break;
  }
  case Expr::Kind::ViewField: {
    const Symbol &s = symbols.at(e.args[0]->name);
    out.kind = e.name == "shape" ? GridExpr::Kind::Shape : GridExpr::Kind::Stride;
    out.param = s.paramIndex;
    out.dim = static_cast<unsigned>(*e.args[1]->constInt);
    return true;
  }
  case Expr::Kind::Binary: {
    // A compile-time side of && or || decides it or leaves the other side
    // (`CAUSAL == 1 && K.shape[1] <= 4096` with CAUSAL = 0 is 0): the
    // runtime and an AOT header's enumeration of choices see what is left.
    if ((e.op == Expr::Op::And || e.op == Expr::Op::Or) &&
        (e.args[0]->constInt || e.args[1]->constInt)) {
      const Expr &fixed = e.args[0]->constInt ? *e.args[0] : *e.args[1];
      const Expr &other = e.args[0]->constInt ? *e.args[1] : *e.args[0];
      bool value = *fixed.constInt != 0;
      if (value == (e.op == Expr::Op::And))
        return toGridExpr(other, out);
      out = GridExpr::constant(value ? 1 : 0);
      return true;
    }
    GridExpr::Kind k;
    switch (e.op) {
    case Expr::Op::Add: k = GridExpr::Kind::Add; break;
    case Expr::Op::Sub: k = GridExpr::Kind::Sub; break;
    case Expr::Op::Mul: k = GridExpr::Kind::Mul; break;
    case Expr::Op::Div: k = GridExpr::Kind::Div; break;
    case Expr::Op::Rem: k = GridExpr::Kind::Rem; break;
    case Expr::Op::Lt: k = GridExpr::Kind::Lt; break;
    case Expr::Op::Le: k = GridExpr::Kind::Le; break;
    case Expr::Op::Gt: k = GridExpr::Kind::Gt; break;
    case Expr::Op::Ge: k = GridExpr::Kind::Ge; break;
    case Expr::Op::Eq: k = GridExpr::Kind::Eq; break;
    case Expr::Op::Ne: k = GridExpr::Kind::Ne; break;
    case Expr::Op::And: k = GridExpr::Kind::And; break;
    case Expr::Op::Or: k = GridExpr::Kind::Or; break;
    default:
      return error(e.loc, inRequire ? "a @require condition uses + - * / %, comparisons, && "
                                      "and ||; this operator is not allowed here"
                                    : "grid sizes are integers; comparisons are not allowed here");
    }
    if (!inRequire && k >= GridExpr::Kind::Lt)
      return error(e.loc, "grid sizes are integers; comparisons are not allowed here");
    if ((k == GridExpr::Kind::Div || k == GridExpr::Kind::Rem) && e.args[1]->constInt &&
        *e.args[1]->constInt == 0)
      return error(e.loc, "division by zero in the grid: it would fail at every launch");
    out.kind = k;
    out.operands.resize(2);
    return toGridExpr(*e.args[0], out.operands[0]) &&
           toGridExpr(*e.args[1], out.operands[1]);
  }
  case Expr::Kind::Call:
    if (e.name == "num_sms" || e.name == "resident_programs") {
      out.kind = e.name == "num_sms" ? GridExpr::Kind::NumSMs
                                     : GridExpr::Kind::ResidentPrograms;
      return true;
    }
    if (e.name == "where" && inRequire && e.args.size() == 3) {
      GridExpr cond;
      if (!toGridExpr(*e.args[0], cond))
        return false;
      if (std::optional<int64_t> c = evaluateConstant(cond)) // decided when compiling
        return toGridExpr(*e.args[*c ? 1 : 2], out);
      out.kind = GridExpr::Kind::Where;
      out.operands.resize(3);
      out.operands[0] = std::move(cond);
      return toGridExpr(*e.args[1], out.operands[1]) && toGridExpr(*e.args[2], out.operands[2]);
    }
    if (e.name == "cdiv" || e.name == "min" || e.name == "max") {
      if (e.name == "cdiv" && e.args[1]->constInt && *e.args[1]->constInt == 0)
        return error(e.loc, "division by zero in the grid: cdiv(..., 0) would fail at "
                            "every launch");
      out.kind = e.name == "cdiv"  ? GridExpr::Kind::CDiv
                 : e.name == "min" ? GridExpr::Kind::Min
                                   : GridExpr::Kind::Max;
      out.operands.resize(2);
      return toGridExpr(*e.args[0], out.operands[0]) &&
             toGridExpr(*e.args[1], out.operands[1]);
    }
    break;
  default:
    break;
  }
  if (inRequire)
    return error(e.loc, "a @require condition can only use integer parameters, tensor shapes "
                        "and strides, constants, + - * / %, comparisons, && ||, where, cdiv, "
                        "min, max, num_sms() and resident_programs() (it is checked on the "
                        "host before the launch; a float parameter is not available there)");
  return error(e.loc, "the grid can only use integer parameters, tensor shapes "
                      "and strides, constants, + - * / %, cdiv, min, max, "
                      "num_sms() and resident_programs()");
}

bool Checker::launchExpr(Expr &e, const char *mustBe, bool conditions, bool boolOk,
                         GridExpr &out) {
  inGrid = true;
  bool ok = check(e);
  inGrid = false;
  if (!ok)
    return false;
  if (!e.type.isScalar() || isFloatType(e.type.elem) ||
      (!boolOk && e.type.elem == ScalarType::I1))
    return error(e.loc, std::string(mustBe) + ", got " + e.type.str());
  inRequire = conditions;
  ok = toGridExpr(e, out);
  inRequire = false;
  return ok;
}

/// `@heuristic(NAME = expr, ...)`: NAME is an int compile-time parameter,
/// expr an integer over the launch arguments checked like a @require
/// condition (comparisons count 1 or 0). A parameter the program fixes (-D)
/// is not chosen; the others go into the signature, for the launch paths
/// to evaluate with the arguments and compile that variant.
bool Checker::checkHeuristics(const Defines &defines) {
  std::set<std::string> seen;
  for (HeuristicDecl &h : kernel.heuristics) {
    if (!isIntConstParam(h.name))
      return error(h.loc, "'" + h.name + "' in @heuristic is not an int compile-time "
                          "parameter of kernel '" + kernel.name + "'");
    if (!seen.insert(h.name).second)
      return error(h.loc, "'" + h.name + "' appears twice in @heuristic");
    Heuristic out;
    out.param = h.name;
    if (!launchExpr(*h.value, "a @heuristic value must be an integer", /*conditions=*/true,
                    /*boolOk=*/false, out.value))
      return false;
    if (!defines.count(h.name))
      inst.signature.heuristics.push_back(std::move(out));
  }
  return true;
}

/// A grid expression node of `kind` over `operands`.
static GridExpr gridNode(GridExpr::Kind kind, std::vector<GridExpr> operands) {
  GridExpr e;
  e.kind = kind;
  e.operands = std::move(operands);
  return e;
}

/// `@tuned(key = (...), (values) -> (NAME = c, ...), ...)`: folded into the
/// heuristics. Key elements that are compile-time (a type parameter, an
/// expression Sema folds, e.g. arch()) are compared now: rows that do not
/// match are dropped. The rest become `key == value` conditions, and each
/// parameter a row sets gets `where(row matches, c, <its heuristic, else its
/// value>)`, the first row outermost. A parameter the program fixes (-D) is
/// not chosen, as with @heuristic.
bool Checker::checkTuned(const Defines &defines) {
  if (kernel.tuned.empty())
    return true;
  if (kernel.tuned.size() > 1)
    return error(kernel.tuned[1].loc, "kernel '" + kernel.name +
                                          "' has a second @tuned(...); put every row in one table");
  TunedTable &table = kernel.tuned[0];
  // Per key element: a type parameter (its value now), else a launch
  // expression, constant when Sema folded it.
  struct KeyPart {
    std::optional<ScalarType> type;
    GridExpr expr;
    std::optional<int64_t> constant;
  };
  std::vector<KeyPart> parts;
  for (ExprPtr &k : table.key) {
    KeyPart part;
    if (k->kind == Expr::Kind::Name) {
      auto it = symbols.find(k->name);
      if (it != symbols.end() && it->second.kind == Symbol::Kind::TypeConst) {
        part.type = it->second.type.elem;
        parts.push_back(std::move(part));
        continue;
      }
    }
    if (!launchExpr(*k, "a key of @tuned must be a type parameter or an integer expression",
                    /*conditions=*/true, /*boolOk=*/true, part.expr))
      return false;
    part.constant = evaluateConstant(part.expr);
    parts.push_back(std::move(part));
  }
  struct Row {
    GridExpr cond; // 1 where it matches (Const 1: every launch)
    std::map<std::string, int64_t> values;
  };
  std::vector<Row> rows;
  std::map<std::vector<std::string>, llvm::SMLoc> seenKeys;
  std::vector<std::string> order; // parameters in the order rows name them
  for (TunedRow &r : table.rows) {
    if (r.key.size() != parts.size())
      return error(r.loc, "this row of @tuned has " + std::to_string(r.key.size()) +
                              " key value" + (r.key.size() == 1 ? "" : "s") + "; the key has " +
                              std::to_string(parts.size()));
    bool matches = true;
    std::vector<GridExpr> conds;
    std::vector<std::string> keyText;
    for (size_t i = 0; i < parts.size(); ++i) {
      Expr &v = *r.key[i];
      if (parts[i].type) {
        std::optional<ScalarType> t;
        if (v.kind == Expr::Kind::Name)
          t = parseScalarType(v.name);
        if (!t)
          return error(v.loc, "key value " + std::to_string(i + 1) +
                                  " of this row must be a type name (the key's '" +
                                  table.key[i]->name + "' is a type parameter)");
        matches &= *t == *parts[i].type;
        keyText.push_back(scalarTypeName(*t));
        continue;
      }
      int64_t c;
      if (!requireConstInt(v, "a key value of @tuned", c))
        return false;
      keyText.push_back(std::to_string(c));
      if (parts[i].constant) {
        matches &= *parts[i].constant == c;
        continue;
      }
      conds.push_back(gridNode(GridExpr::Kind::Eq, {parts[i].expr, GridExpr::constant(c)}));
    }
    auto [it, fresh] = seenKeys.emplace(keyText, r.loc);
    if (!fresh)
      return error(r.loc, "this row of @tuned has the same key values as the row at line " +
                              std::to_string(diags.lineCol(it->second).first));
    Row row;
    for (NamedExpr &n : r.values) {
      if (!isIntConstParam(n.name))
        return error(n.loc, "'" + n.name + "' in @tuned is not an int compile-time "
                            "parameter of kernel '" + kernel.name + "'");
      int64_t c;
      if (!requireConstInt(*n.value, "a value in @tuned", c))
        return false;
      if (!row.values.emplace(n.name, c).second)
        return error(n.loc, "'" + n.name + "' appears twice in this row of @tuned");
      if (!llvm::is_contained(order, n.name))
        order.push_back(n.name);
    }
    if (!matches)
      continue;
    row.cond = GridExpr::constant(1);
    for (GridExpr &c : conds)
      row.cond = row.cond.kind == GridExpr::Kind::Const
                     ? std::move(c)
                     : gridNode(GridExpr::Kind::And, {std::move(row.cond), std::move(c)});
    rows.push_back(std::move(row));
  }
  for (const std::string &name : order) {
    if (defines.count(name))
      continue;
    auto h = llvm::find_if(inst.signature.heuristics,
                           [&](const Heuristic &x) { return x.param == name; });
    GridExpr value = h != inst.signature.heuristics.end()
                         ? h->value
                         : GridExpr::constant(symbols.at(name).intValue);
    bool chosen = false;
    for (auto r = rows.rbegin(); r != rows.rend(); ++r) {
      auto v = r->values.find(name);
      if (v == r->values.end())
        continue;
      chosen = true;
      if (r->cond.kind == GridExpr::Kind::Const) { // matches every launch
        value = GridExpr::constant(v->second);
        continue;
      }
      value = gridNode(GridExpr::Kind::Where,
                       {r->cond, GridExpr::constant(v->second), std::move(value)});
    }
    if (!chosen)
      continue;
    if (h != inst.signature.heuristics.end())
      h->value = std::move(value);
    else
      inst.signature.heuristics.push_back({name, std::move(value)});
  }
  return true;
}

/// `@require(cond, "message")`: cond is checked like a grid expression
/// (integer parameters, shapes, strides, compile-time parameters) with
/// comparisons, && and || allowed; one that folds to a constant is decided now
/// (false: a compile error with the message), the others at every launch.
bool Checker::checkRequires() {
  for (RequireDecl &r : kernel.requires_) {
    // (A condition Sema folded becomes a constant expression: decided below.)
    Requirement req;
    if (!launchExpr(*r.cond, "a @require condition must be a comparison or an integer",
                    /*conditions=*/true, /*boolOk=*/true, req.cond))
      return false;
    if (std::optional<int64_t> v = evaluateConstant(req.cond)) {
      if (*v == 0)
        return error(r.loc, "@require(...) does not hold for these compile-time parameters: " +
                                r.message);
      continue;
    }
    req.message = r.message;
    inst.signature.requirements.push_back(std::move(req));
  }
  return true;
}
