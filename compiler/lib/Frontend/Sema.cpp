//===- Sema.cpp - Semantic checks of the tile language --------------------===//

#include "tilec/Frontend/Sema.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"

#include <cmath>
#include <limits>

using namespace tilec;

std::string SemaType::str() const {
  switch (kind) {
  case Kind::Invalid: return "<invalid>";
  case Kind::Void: return "nothing";
  case Kind::Scalar: return scalarTypeName(elem);
  case Kind::Tile: {
    std::string s = std::string("tile<") + scalarTypeName(elem) + ">[";
    for (size_t i = 0; i < shape.size(); ++i)
      s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + "]";
  }
  case Kind::View:
    return std::string("tensor<") + scalarTypeName(elem) + ", " +
           std::to_string(rank) + ">";
  case Kind::List: return "list";
  }
  return "?";
}

static std::string shapeText(const std::vector<int64_t> &dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i)
    s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

bool tilec::isUnaryMathFunction(llvm::StringRef f) {
  static const char *names[] = {"exp", "log", "sqrt", "abs", "exp2", "log2", "rsqrt",
                                "floor", "ceil", "tanh", "sigmoid", "erf"};
  return llvm::is_contained(names, f);
}

int64_t tilec::truncToInt64(double v) {
  if (!std::isfinite(v) || std::fabs(v) >= 9.2e18)
    return 0;
  return static_cast<int64_t>(v);
}

bool tilec::literalValue(const Expr &e, double &f, int64_t &i) {
  if (!e.type.weak)
    return false;
  if (e.constInt) {
    i = *e.constInt;
    f = static_cast<double>(i);
    return true;
  }
  if (e.kind == Expr::Kind::FloatLit) {
    f = e.floatValue;
    i = truncToInt64(f);
    return true;
  }
  if (e.kind == Expr::Kind::Unary && e.op == Expr::Op::Neg &&
      literalValue(*e.args[0], f, i)) {
    f = -f;
    i = i == std::numeric_limits<int64_t>::min() ? i : -i;
    return true;
  }
  return false;
}

const char *tilec::opVerb(Expr::Op op) {
  switch (op) {
  case Expr::Op::Add: return "add";
  case Expr::Op::Sub: return "subtract";
  case Expr::Op::Mul: return "multiply";
  case Expr::Op::Div: return "divide";
  case Expr::Op::Rem: return "take the remainder of";
  case Expr::Op::Lt: case Expr::Op::Le: case Expr::Op::Gt: case Expr::Op::Ge:
  case Expr::Op::Eq: case Expr::Op::Ne: return "compare";
  case Expr::Op::And: case Expr::Op::Or: return "combine";
  case Expr::Op::BitAnd: return "bitwise-and";
  case Expr::Op::BitOr: return "bitwise-or";
  case Expr::Op::BitXor: return "bitwise-xor";
  case Expr::Op::Shl: case Expr::Op::Shr: return "shift";
  default: return "combine";
  }
}

static unsigned bitWidth(ScalarType t) {
  return t == ScalarType::I1 ? 1 : scalarTypeSize(t) * 8;
}

/// The wider of two float types; f16 and bf16 meet at f32.
static ScalarType widerFloat(ScalarType a, ScalarType b) {
  if (a == b)
    return a;
  if ((a == ScalarType::F16 && b == ScalarType::BF16) ||
      (a == ScalarType::BF16 && b == ScalarType::F16))
    return ScalarType::F32;
  return bitWidth(a) >= bitWidth(b) ? a : b;
}

static std::string describeOperand(const SemaType &t) {
  if (t.weak)
    return isFloatType(t.elem) ? "a float literal" : "an integer literal";
  return t.str();
}

std::optional<std::vector<int64_t>>
tilec::broadcastShapes(const std::vector<int64_t> &a, const std::vector<int64_t> &b) {
  size_t rank = std::max(a.size(), b.size());
  std::vector<int64_t> out(rank);
  for (size_t k = 0; k < rank; ++k) {
    int64_t x = k < a.size() ? a[a.size() - 1 - k] : 1;
    int64_t y = k < b.size() ? b[b.size() - 1 - k] : 1;
    if (x != y && x != 1 && y != 1)
      return std::nullopt;
    out[rank - 1 - k] = x == 1 ? y : x;
  }
  return out;
}

SemaType tilec::atElementShape(const Expr &call, SemaType t) {
  t.weak = false;
  if (!call.elementShape.empty()) {
    t.kind = SemaType::Kind::Tile;
    t.shape = call.elementShape;
  }
  return t;
}

Unified tilec::unifyOperands(const SemaType &a, const SemaType &b,
                             const char *verb) {
  Unified u;
  auto fail = [&](const std::string &why) {
    u.error = std::string("cannot ") + verb + " " + describeOperand(a) +
              " and " + describeOperand(b) + why;
    return u;
  };
  std::vector<int64_t> shape = a.isTile() ? a.shape : b.shape;
  if (a.isTile() && b.isTile() && a.shape != b.shape) {
    std::optional<std::vector<int64_t>> s = broadcastShapes(a.shape, b.shape);
    if (!s)
      return fail(": the tile shapes differ and do not broadcast (each "
                  "dimension, aligned from the innermost, must be equal or 1)");
    shape = *s;
  }
  bool isTile = a.isTile() || b.isTile();
  ScalarType elem;
  bool weak = false;
  if (a.weak && b.weak) {
    elem = isFloatType(a.elem) || isFloatType(b.elem)
               ? ScalarType::F32
               : (bitWidth(a.elem) >= bitWidth(b.elem) ? a.elem : b.elem);
    weak = true;
  } else if (a.weak || b.weak) {
    const SemaType &lit = a.weak ? a : b;
    const SemaType &typed = a.weak ? b : a;
    if (isFloatType(lit.elem) && !isFloatType(typed.elem))
      return fail("; use an integer literal, or convert with cast<f32>(...)");
    if (typed.elem == ScalarType::I1 && lit.elem != ScalarType::I1)
      return fail("; booleans do not mix with numbers");
    elem = typed.elem;
  } else if (a.elem == b.elem) {
    elem = a.elem;
  } else if (isFloatType(a.elem) && isFloatType(b.elem)) {
    elem = widerFloat(a.elem, b.elem);
  } else if (a.elem == ScalarType::I1 || b.elem == ScalarType::I1) {
    return fail("; booleans do not mix with numbers");
  } else if (isFloatType(a.elem) || isFloatType(b.elem)) {
    ScalarType f = isFloatType(a.elem) ? a.elem : b.elem;
    return fail(std::string("; convert the integer with cast<") +
                scalarTypeName(f) + ">(...)");
  } else if (isSignedIntType(a.elem) == isSignedIntType(b.elem)) {
    elem = bitWidth(a.elem) >= bitWidth(b.elem) ? a.elem : b.elem;
  } else {
    return fail("; signed and unsigned integers do not mix, convert one with "
                "cast<...>(...)");
  }
  u.type = isTile ? SemaType::tile(elem, shape) : SemaType::scalar(elem, weak);
  return u;
}

namespace {


/// What a name refers to inside a kernel.
struct Symbol {
  enum class Kind { Local, Param, IntConst, TypeConst };
  Kind kind = Kind::Local;
  SemaType type;
  bool mutableVar = false;
  unsigned paramIndex = 0;
  int64_t intValue = 0;
  llvm::SMLoc loc;
};

class Checker {
public:
  Checker(KernelDecl &k, DiagEngine &diags, KernelInstance &inst)
      : kernel(k), diags(diags), inst(inst) {}

  bool run(const Defines &defines, std::set<std::string> &used);

private:
  bool error(llvm::SMLoc loc, const llvm::Twine &msg) {
    diags.error(loc, msg);
    return false;
  }
  bool bindConstParams(const Defines &defines, std::set<std::string> &used);
  bool checkTune(const Defines &defines);
  bool checkLaunch();
  bool resolveType(const TypeExpr &t, SemaType &out, bool allowTensor);
  bool check(Expr &e);
  bool checkNode(Expr &e);
  static constexpr int64_t kMaxTileElements = 1 << 16;
  bool checkTileSize(const Expr &e);
  bool checkCall(Expr &e);
  bool checkIrregular(Expr &e);
  bool joinElementShape(Expr &call, Expr &x, const char *others);
  bool requireTileArg(Expr &e, size_t lo, size_t hi);
  bool inlineCall(Expr &e, const FnDecl &fn);
  bool checkCombiner(ExprPtr &arg, ScalarType elem, const std::string &what);
  std::set<std::string> inlining; ///< helpers being expanded (no recursion)
  /// The calls being expanded, outermost first: the helper and the call.
  std::vector<std::pair<std::string, llvm::SMLoc>> callStack;
  /// Expressions checked in this kernel, helpers' copies included (each
  /// becomes MLIR), at most kMaxCheckedExprs.
  static constexpr uint64_t kMaxCheckedExprs = 100000;
  uint64_t checkedExprs = 0;
  bool tooLarge(llvm::SMLoc loc);
  unsigned inlineCount = 0;        ///< names the result slot of each expansion
  /// The result type of a helper with early returns, by helper, compile-time
  /// arguments and argument types (all its body can see): learning it takes
  /// a scratch check of the body, which nested helpers would otherwise
  /// repeat at every level (2^depth checks).
  std::map<std::string, SemaType> earlyReturnTypes;
  bool checkStmt(Stmt &s);
  bool checkBlock(std::vector<StmtPtr> &body);
  /// Sema, MLIRGen and the interpreter recurse through expressions and
  /// statements, helpers' bodies included; the parser bounds each tree
  /// (kMaxExprHeight) and this bounds them all nested in one another.
  static constexpr unsigned kMaxCheckDepth = 2 * kMaxExprHeight;
  unsigned depth = 0;
  bool tooDeep(llvm::SMLoc loc);
  bool requireValue(Expr &e, const char *what);
  /// checkArgCount, then requireValue on every argument.
  bool requireValues(Expr &e, size_t lo, size_t hi, const char *what);
  bool requireConstInt(Expr &e, const char *what, int64_t &value);
  /// `axis` (given at `loc`) must lie in [0, end) for a tile of type `t`.
  bool checkAxis(llvm::SMLoc loc, int64_t axis, int64_t end, const SemaType &t);
  bool requireIntScalar(Expr &e, const char *what);
  bool checkArgCount(Expr &e, size_t lo, size_t hi);
  bool checkShapeList(Expr &shape, std::vector<int64_t> &dims);
  bool toGridExpr(const Expr &e, GridExpr &out);
  bool inGrid = false; ///< checking the grid clause (num_sms() is allowed)
  std::string suggest(llvm::StringRef name) const;

  KernelDecl &kernel;
  DiagEngine &diags;
  KernelInstance &inst;
  std::map<std::string, Symbol> symbols;
};

} // namespace

/// Every builtin function name (for suggestions and helper-name checks).
static const char *const kBuiltins[] = {"load", "store", "block_id", "num_blocks",
                                   "zeros", "full", "range", "sum", "reshape",
                                   "exp2", "log2", "rsqrt", "floor", "ceil", "tanh",
                                   "sigmoid", "pow", "fma", "argmax", "argmin",
                                   "exp", "log", "sqrt", "abs", "min", "max",
                                   "where", "cast", "cdiv", "mma", "broadcast", "gather",
                                   "scatter", "atomic_add", "atomic_min", "atomic_max",
                                   "atomic_xchg", "atomic_cas", "transpose", "permute", "prod",
                                   "cumsum", "print", "assert", "expand_dims", "slice",
                                   "reduce", "scan", "take", "num_sms",
                                   "resident_programs"};

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
  if (best.empty())
    return "";
  return "; did you mean '" + best + "'?";
}

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
                              "f16 bf16 f32 f64, tensor<T, R> or a 'type' "
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

bool Checker::checkTune(const Defines &defines) {
  std::set<std::string> seen;
  for (TuneParam &t : kernel.tune) {
    bool isInt = llvm::any_of(kernel.constParams, [&](const ConstParam &cp) {
      return cp.name == t.name && cp.kind == ConstParam::Kind::Int;
    });
    if (!isInt)
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
  std::set<std::string> seen;
  for (LaunchParam &p : kernel.launch) {
    bool warps = p.name == "num_warps";
    if (!warps && p.name != "min_blocks_per_sm") {
      llvm::StringRef name(p.name);
      const char *near = name.edit_distance("num_warps") <= name.edit_distance("min_blocks_per_sm")
                             ? "num_warps"
                             : "min_blocks_per_sm";
      return error(p.loc, "unknown launch setting '" + p.name +
                              "'; @launch takes num_warps and min_blocks_per_sm (did you "
                              "mean '" + near + "'?)");
    }
    if (!seen.insert(p.name).second)
      return error(p.loc, "'" + p.name + "' appears twice in @launch");
    int64_t v;
    if (!requireConstInt(*p.value, warps ? "num_warps" : "min_blocks_per_sm", v))
      return false;
    if (warps && (v < 1 || v > 32 || (v & (v - 1))))
      return error(p.value->loc, "num_warps must be a power of two from 1 to 32, got " +
                                     std::to_string(v));
    if (!warps && (v < 1 || v > 32))
      return error(p.value->loc, "min_blocks_per_sm must be 1 to 32 (an SM holds at most "
                                 "32 blocks), got " + std::to_string(v));
    (warps ? inst.numWarps : inst.minBlocksPerSM) = unsigned(v);
  }
  return true;
}

bool Checker::requireValues(Expr &e, size_t lo, size_t hi, const char *what) {
  if (!checkArgCount(e, lo, hi))
    return false;
  for (auto &a : e.args)
    if (!requireValue(*a, what))
      return false;
  return true;
}

bool Checker::requireValue(Expr &e, const char *what) {
  if (!check(e))
    return false;
  if (!e.type.isValue())
    return error(e.loc, std::string(what) + " must be a scalar or a tile, not " +
                            (e.type.kind == SemaType::Kind::View
                                 ? "the tensor " + e.type.str()
                                 : e.type.str()));
  return true;
}

bool Checker::requireConstInt(Expr &e, const char *what, int64_t &value) {
  if (!check(e))
    return false;
  if (!e.constInt || !e.type.isScalar() || isFloatType(e.type.elem))
    return error(e.loc, std::string(what) + " must be a compile-time integer");
  value = *e.constInt;
  return true;
}

/// Whether a value of type `got` may be assigned to (or returned as) `want`:
/// the same type, or a literal whose value fits `want`'s element type.
static bool assignable(const SemaType &want, const SemaType &got) {
  if (got.elem == want.elem && got.kind == want.kind && got.shape == want.shape)
    return true;
  if (!got.weak || got.kind != want.kind)
    return false;
  Unified u = unifyOperands(want, got, "assign");
  return u.error.empty() && u.type.elem == want.elem;
}

bool Checker::checkAxis(llvm::SMLoc loc, int64_t axis, int64_t end, const SemaType &t) {
  if (axis >= 0 && axis < end)
    return true;
  return error(loc, "axis " + std::to_string(axis) + " is out of range for " + t.str() +
                        " (0 to " + std::to_string(end - 1) + ")");
}

bool Checker::requireIntScalar(Expr &e, const char *what) {
  if (!check(e))
    return false;
  if (!e.type.isScalar() || isFloatType(e.type.elem) ||
      e.type.elem == ScalarType::I1)
    return error(e.loc, std::string(what) + " must be an integer scalar, not " +
                            e.type.str());
  return true;
}

bool Checker::checkShapeList(Expr &shape, std::vector<int64_t> &dims) {
  if (shape.kind != Expr::Kind::List)
    return error(shape.loc, "a tile shape must be a list, e.g. [BLOCK] or [BM, BN]");
  if (shape.args.empty() || shape.args.size() > 4)
    return error(shape.loc, "tiles have 1 to 4 dimensions, got " +
                                std::to_string(shape.args.size()));
  int64_t numel = 1;
  for (auto &s : shape.args) {
    int64_t d;
    if (!requireConstInt(*s, "a tile size", d))
      return false;
    if (d <= 0)
      return error(s->loc, "tile sizes must be positive, got " + std::to_string(d));
    if (d > (1 << 20) || numel * d > (1 << 16))
      return error(s->loc, "tile of more than 65536 elements; use a smaller "
                           "tile and more blocks");
    numel *= d;
    dims.push_back(d);
  }
  return true;
}

bool Checker::checkArgCount(Expr &e, size_t lo, size_t hi) {
  size_t n = e.args.size();
  if (n >= lo && n <= hi)
    return true;
  std::string expected = lo == hi ? std::to_string(lo)
                                  : std::to_string(lo) + " or " + std::to_string(hi);
  return error(e.loc, "'" + e.name + "' takes " + expected + " argument" +
                          (hi == 1 ? "" : "s") + ", got " + std::to_string(n));
}

static std::optional<int64_t> foldInt(Expr::Op op, int64_t a, int64_t b,
                                      bool &divByZero) {
  divByZero = false;
  int64_t r;
  switch (op) {
  case Expr::Op::Add:
    if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
    return r;
  case Expr::Op::Sub:
    if (__builtin_sub_overflow(a, b, &r)) return std::nullopt;
    return r;
  case Expr::Op::Mul:
    if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
    return r;
  case Expr::Op::Div:
  case Expr::Op::Rem:
    if (b == 0) {
      divByZero = true;
      return std::nullopt;
    }
    if (a == std::numeric_limits<int64_t>::min() && b == -1)
      return op == Expr::Op::Div ? std::nullopt : std::optional<int64_t>(0); // C traps on both
    return op == Expr::Op::Div ? a / b : a % b;
  default:
    return std::nullopt;
  }
}

/// One level of Sema's recursion (an expression or a statement, helpers'
/// bodies included) while it lasts.
struct Nesting {
  unsigned &depth;
  explicit Nesting(unsigned &d) : depth(d) { ++depth; }
  ~Nesting() { --depth; }
};

bool Checker::tooDeep(llvm::SMLoc loc) {
  return error(loc, "expression is too deep after inlining helpers: more than " +
                        llvm::Twine(kMaxCheckDepth) +
                        " nested operations and statements; split it into 'let' "
                        "bindings or call fewer helpers inside one another");
}

/// The number of elements of `shape`, saturating at INT64_MAX.
static int64_t numElements(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    if (__builtin_mul_overflow(n, d, &n))
      return std::numeric_limits<int64_t>::max();
  return n;
}

bool Checker::check(Expr &e) {
  Nesting level(depth);
  if (depth > kMaxCheckDepth)
    return tooDeep(e.loc);
  if (++checkedExprs > kMaxCheckedExprs)
    return tooLarge(e.loc);
  return checkNode(e) && checkTileSize(e);
}

/// Every helper call is checked (and generated) as a copy of the helper's
/// body, so helpers that call others more than once grow exponentially (40
/// helpers each calling the previous twice ran out of memory). The error
/// is at the outermost call and names the chain of calls being expanded.
bool Checker::tooLarge(llvm::SMLoc loc) {
  std::string what = "kernel '" + kernel.name + "' is too large: more than " +
                     std::to_string(kMaxCheckedExprs) + " operations";
  if (callStack.empty())
    return error(loc, what + "; split it into several kernels");
  std::string chain;
  auto link = [&](size_t i) {
    const auto &[name, at] = callStack[i];
    std::string caller = i == 0 ? "kernel '" + kernel.name + "'" : "'" + callStack[i - 1].first + "'";
    return caller + " calls '" + name + "' at line " + std::to_string(diags.lineCol(at).first);
  };
  size_t n = callStack.size();
  for (size_t i = 0; i < n; ++i) {
    if (n > 5 && i == 3) {
      chain += ", ...";
      i = n - 2;
      continue;
    }
    chain += (i ? ", " : "") + link(i);
  }
  return error(callStack.front().second,
               "inlined body too large: more than " + std::to_string(kMaxCheckedExprs) +
                   " operations after inlining helpers, expanding " + chain +
                   " (every call copies the helper's body: a helper that calls another "
                   "twice is twice its size)");
}

/// Every tile a value or an operation makes, not only those whose shape is
/// written out: broadcasting ([300, 1] + [300]), gather/scatter index tiles
/// and where() can make larger ones.
bool Checker::checkTileSize(const Expr &e) {
  for (const std::vector<int64_t> *shape :
       {e.type.isTile() ? &e.type.shape : nullptr, &e.elementShape}) {
    if (!shape || shape->empty())
      continue;
    int64_t n = numElements(*shape);
    if (n > kMaxTileElements)
      return error(e.loc, "tile of more than 65536 elements: this makes " +
                              (shape == &e.type.shape ? e.type.str()
                                                      : "a tile of shape " + shapeText(*shape)) +
                              (n == std::numeric_limits<int64_t>::max()
                                   ? std::string()
                                   : ", " + std::to_string(n) + " elements") +
                              "; use a smaller tile and more blocks");
  }
  return true;
}

/// A compile-time integer is typed like a literal of its value: i32, or i64
/// when it does not fit (`2147483647 + 1` is 2147483648, an i64, as the
/// literal 2147483648 is; it used to stay i32 and wrap to -2147483648).
static void widenFoldedInt(Expr &e) {
  if (e.constInt && e.type.weak && e.type.elem == ScalarType::I32 &&
      (*e.constInt > INT32_MAX || *e.constInt < INT32_MIN))
    e.type.elem = ScalarType::I64;
}

bool Checker::checkNode(Expr &e) {
  switch (e.kind) {
  case Expr::Kind::IntLit:
    e.type = SemaType::scalar(e.intValue > INT32_MAX ? ScalarType::I64
                                                     : ScalarType::I32,
                              /*weak=*/true);
    e.constInt = e.intValue;
    return true;
  case Expr::Kind::FloatLit:
    e.type = SemaType::scalar(ScalarType::F32, /*weak=*/true);
    return true;
  case Expr::Kind::BoolLit:
    e.type = SemaType::scalar(ScalarType::I1);
    e.constInt = e.intValue;
    return true;
  case Expr::Kind::Name: {
    auto it = symbols.find(e.name);
    if (it == symbols.end())
      return error(e.loc, "unknown name '" + e.name + "'" + suggest(e.name));
    const Symbol &s = it->second;
    if (s.kind == Symbol::Kind::TypeConst)
      return error(e.loc, "'" + e.name + "' is a type, not a value");
    e.type = s.type;
    if (s.kind == Symbol::Kind::IntConst) {
      e.type = SemaType::scalar(s.intValue > INT32_MAX || s.intValue < INT32_MIN
                                    ? ScalarType::I64
                                    : ScalarType::I32,
                                true);
      e.constInt = s.intValue;
    }
    return true;
  }
  case Expr::Kind::Unary: {
    Expr &x = *e.args[0];
    if (!requireValue(x, "the operand"))
      return false;
    if (e.op == Expr::Op::Not) {
      if (x.type.elem != ScalarType::I1)
        return error(e.loc, "'!' needs a boolean, got " + x.type.str());
      e.type = x.type;
      return true;
    }
    if (e.op == Expr::Op::BitNot) {
      if (isFloatType(x.type.elem))
        return error(e.loc, "'~' needs an integer or a boolean, got " + describeOperand(x.type));
      e.type = x.type;
      if (x.constInt)
        e.constInt = ~*x.constInt;
      return true;
    }
    if (x.type.elem == ScalarType::I1 || isUnsignedIntType(x.type.elem))
      return error(e.loc, "cannot negate " + x.type.str());
    e.type = x.type;
    if (x.constInt && *x.constInt != std::numeric_limits<int64_t>::min())
      e.constInt = -*x.constInt;
    return true;
  }
  case Expr::Kind::Binary: {
    Expr &a = *e.args[0];
    Expr &b = *e.args[1];
    if (!requireValue(a, "the left operand") ||
        !requireValue(b, "the right operand"))
      return false;
    Unified u = unifyOperands(a.type, b.type, opVerb(e.op));
    if (!u.error.empty())
      return error(e.loc, u.error);
    switch (e.op) {
    case Expr::Op::And:
    case Expr::Op::Or:
      if (u.type.elem != ScalarType::I1)
        return error(e.loc, std::string("'") + (e.op == Expr::Op::And ? "&&" : "||") +
                                "' needs booleans, got " + a.type.str() +
                                " and " + b.type.str());
      e.type = u.type;
      return true;
    case Expr::Op::Lt: case Expr::Op::Le: case Expr::Op::Gt:
    case Expr::Op::Ge: case Expr::Op::Eq: case Expr::Op::Ne:
      e.type = u.type;
      e.type.elem = ScalarType::I1;
      e.type.weak = false;
      return true;
    case Expr::Op::BitAnd: case Expr::Op::BitOr: case Expr::Op::BitXor:
    case Expr::Op::Shl: case Expr::Op::Shr: {
      bool shift = e.op == Expr::Op::Shl || e.op == Expr::Op::Shr;
      if (isFloatType(u.type.elem) || (shift && u.type.elem == ScalarType::I1))
        return error(e.loc, std::string("cannot ") + opVerb(e.op) + " " +
                                describeOperand(a.type) + " and " + describeOperand(b.type) +
                                (shift ? ": shifts need integers" : ": bitwise operations need integers or booleans"));
      e.type = u.type;
      if (a.constInt && b.constInt) {
        int64_t x = *a.constInt, y = *b.constInt;
        switch (e.op) {
        case Expr::Op::BitAnd: e.constInt = x & y; break;
        case Expr::Op::BitOr: e.constInt = x | y; break;
        case Expr::Op::BitXor: e.constInt = x ^ y; break;
        default:
          if (y < 0 || y > 62)
            return error(e.loc, "shift amount " + std::to_string(y) +
                                    " is out of range in a compile-time expression");
          e.constInt = e.op == Expr::Op::Shl ? int64_t(uint64_t(x) << y) : (x >> y);
        }
        widenFoldedInt(e);
      }
      return true;
    }
    default:
      if (u.type.elem == ScalarType::I1)
        return error(e.loc, std::string("cannot ") + opVerb(e.op) +
                                " booleans; use '&&' or '||'");
      e.type = u.type;
      if (a.constInt && b.constInt && !isFloatType(u.type.elem)) {
        bool divByZero;
        e.constInt = foldInt(e.op, *a.constInt, *b.constInt, divByZero);
        if (divByZero)
          return error(e.loc, "division by zero in a compile-time expression");
        if (!e.constInt)
          return error(e.loc, "compile-time integer overflow");
        widenFoldedInt(e);
      }
      return true;
    }
  }
  case Expr::Kind::ViewField: {
    Expr &v = *e.args[0];
    if (!check(v))
      return false;
    if (v.type.kind != SemaType::Kind::View)
      return error(v.loc, "'." + e.name + "' needs a tensor parameter, got " +
                              v.type.str());
    int64_t dim;
    if (!requireConstInt(*e.args[1], "the dimension index", dim))
      return false;
    if (dim < 0 || dim >= v.type.rank)
      return error(e.args[1]->loc, "dimension " + std::to_string(dim) +
                                       " is out of range for " + v.type.str());
    e.type = SemaType::scalar(ScalarType::I64);
    return true;
  }
  case Expr::Kind::List:
    return error(e.loc, "a list '[...]' can only be the indices or the shape "
                        "of load/store");
  case Expr::Kind::StringLit:
    return error(e.loc, "a string can only be the text of print or the message of assert");
  case Expr::Kind::Inline:
    return true; // already expanded and checked
  case Expr::Kind::Lambda:
    return error(e.loc, "'fn(a, b) { ... }' is a combiner: it can only be the last argument "
                        "of reduce or scan");
  case Expr::Kind::Call:
    return checkCall(e);
  }
  return false;
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
  Expr &view = *e.args[0];
  if (!check(view))
    return false;
  if (view.type.kind != SemaType::Kind::View)
    return error(view.loc, "the first argument of '" + f +
                               "' must be a tensor parameter, got " + view.type.str());
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
static const Expr *findTileExpr(const Expr &e) {
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

bool Checker::checkCall(Expr &e) {
  const std::string &f = e.name;
  if (kernel.fns)
    for (auto &fn : *kernel.fns)
      if (fn->name == f)
        return inlineCall(e, *fn);
  if (e.typeArg && f != "cast" && f != "zeros" && f != "full")
    return error(e.loc, "'" + f + "' does not take a type argument");
  // Named arguments: only `axis = d` of a reduction.
  bool reduction = f == "sum" || f == "max" || f == "min" || f == "prod" || f == "argmax" ||
                   f == "argmin";
  bool argKind = f == "argmax" || f == "argmin";
  for (size_t k = 0; k < e.args.size(); ++k) {
    Expr &a = *e.args[k];
    if (a.argName.empty())
      continue;
    if (f == "mma" && a.argName == "tf32") { // checked with mma's arguments
      if (k != 3 || e.args.size() != 4)
        return error(a.loc, "'mma(a, b, acc, tf32 = true)' takes tf32 after the accumulator");
      continue;
    }
    if (a.argName != "axis" || !reduction)
      return error(a.loc, "'" + f + "' takes no argument named '" + a.argName + "'" +
                              (a.argName == "axis"
                                   ? "; axis = d goes with sum, max, min, prod, argmax and argmin"
                                   : ""));
    if (k != e.args.size() - 1 || e.args.size() != 2)
      return error(a.loc, "'" + f + "(tile, axis = d)' takes the tile and the axis");
    int64_t d;
    if (!requireConstInt(a, "the axis", d))
      return false;
    Expr &t = *e.args[0];
    if (!requireValue(t, "the argument"))
      return false;
    if (!t.type.isTile())
      return error(t.loc, "'" + f + "' over an axis needs a tile, got " + describeOperand(t.type));
    int64_t rank = int64_t(t.type.shape.size());
    if (!checkAxis(a.loc, d, rank, t.type))
      return false;
    if (t.type.elem != ScalarType::F32 && t.type.elem != ScalarType::F16 &&
        t.type.elem != ScalarType::BF16 && t.type.elem != ScalarType::I32)
      return error(t.loc, "reductions of " + t.type.str() + " are not supported yet; cast to f32 or i32");
    e.args.pop_back();
    ScalarType resultElem = argKind ? ScalarType::I32 : t.type.elem;
    if (rank == 1) { // the whole tile
      e.type = SemaType::scalar(resultElem);
      return true;
    }
    std::vector<int64_t> dims = t.type.shape;
    dims.erase(dims.begin() + d);
    e.axis = d;
    e.type = SemaType::tile(resultElem, dims);
    return true;
  }
  if (f == "zeros" || f == "full") {
    if (!e.typeArg)
      return error(e.loc, "'" + f + "' needs an element type: " + f + "<f32>([...])");
    if (!checkArgCount(e, f == "zeros" ? 1 : 2, f == "zeros" ? 1 : 2))
      return false;
    SemaType elem;
    if (!resolveType(*e.typeArg, elem, false))
      return false;
    std::vector<int64_t> dims;
    if (!checkShapeList(*e.args[0], dims))
      return false;
    if (f == "full") {
      Expr &v = *e.args[1];
      if (!requireValue(v, "the fill value"))
        return false;
      if (!v.type.isScalar())
        return error(v.loc, "the fill value must be a scalar, got " + v.type.str());
      Unified u = unifyOperands(SemaType::scalar(elem.elem), v.type, "fill a tile with");
      if (!u.error.empty() || u.type.elem != elem.elem)
        return error(v.loc, "cannot fill a tile<" + std::string(scalarTypeName(elem.elem)) +
                                "> with " + describeOperand(v.type) + "; convert with cast<" +
                                scalarTypeName(elem.elem) + ">(...)");
    }
    e.type = SemaType::tile(elem.elem, dims);
    return true;
  }
  if (f == "expand_dims") {
    if (!requireTileArg(e, 2, 2))
      return false;
    const SemaType &t = e.args[0]->type;
    int64_t axis;
    if (!requireConstInt(*e.args[1], "the axis", axis))
      return false;
    if (!checkAxis(e.args[1]->loc, axis, int64_t(t.shape.size()) + 1, t))
      return false;
    std::vector<int64_t> dims = t.shape;
    dims.insert(dims.begin() + axis, 1);
    e.type = SemaType::tile(t.elem, dims);
    return true;
  }
  if (f == "slice") {
    if (!requireTileArg(e, 3, 3))
      return false;
    const SemaType &t = e.args[0]->type;
    std::vector<int64_t> starts, sizes;
    if (e.args[1]->kind != Expr::Kind::List)
      return error(e.args[1]->loc, "the starts must be a list of compile-time integers, e.g. [0, 8]");
    for (auto &x : e.args[1]->args) {
      int64_t v;
      if (!requireConstInt(*x, "a start", v))
        return false;
      starts.push_back(v);
    }
    if (!checkShapeList(*e.args[2], sizes))
      return false;
    if (starts.size() != t.shape.size() || sizes.size() != t.shape.size())
      return error(e.loc, "'slice' of " + t.str() + " needs " + std::to_string(t.shape.size()) +
                              " starts and " + std::to_string(t.shape.size()) + " sizes");
    for (size_t d = 0; d < starts.size(); ++d)
      if (starts[d] < 0 || starts[d] + sizes[d] > t.shape[d])
        return error(e.args[1]->args[d]->loc,
                     "the slice [" + std::to_string(starts[d]) + ", " +
                         std::to_string(starts[d] + sizes[d]) + ") of dimension " +
                         std::to_string(d) + " is outside " + t.str());
    e.permutation = starts; // the offsets
    e.type = SemaType::tile(t.elem, sizes);
    return true;
  }
  if (f == "reshape") {
    if (!requireTileArg(e, 2, 2))
      return false;
    const SemaType &t = e.args[0]->type;
    std::vector<int64_t> dims;
    if (!checkShapeList(*e.args[1], dims))
      return false;
    int64_t from = 1, to = 1;
    for (int64_t d : t.shape)
      from *= d;
    for (int64_t d : dims)
      to *= d;
    if (from != to)
      return error(e.args[1]->loc, "cannot reshape " + t.str() + " (" + std::to_string(from) +
                                       " elements) into " + std::to_string(to) + " elements");
    e.type = SemaType::tile(t.elem, dims);
    return true;
  }
  if (f == "broadcast") {
    if (!checkArgCount(e, 2, 2) || !requireValue(*e.args[0], "the argument"))
      return false;
    const SemaType &t = e.args[0]->type;
    std::vector<int64_t> dims;
    if (!checkShapeList(*e.args[1], dims))
      return false;
    if (t.isTile()) {
      std::optional<std::vector<int64_t>> s = broadcastShapes(t.shape, dims);
      if (t.shape.size() > dims.size() || !s || *s != dims)
        return error(e.args[1]->loc, "cannot broadcast " + t.str() + " to shape " +
                                         shapeText(dims) +
                                         ": aligned from the innermost, each dimension "
                                         "must equal the target's or be 1");
    }
    e.type = SemaType::tile(t.elem, dims);
    return true;
  }
  if (f == "print" || f == "assert") {
    bool isPrint = f == "print";
    if (e.args.empty() || (!isPrint && e.args.size() != 2))
      return error(e.loc, isPrint ? std::string("'print' takes a text and values: print(\"x =\", x)")
                                  : std::string("'assert' takes a condition and a message: "
                                                "assert(i < n, \"i out of range\")"));
    Expr &text = *e.args[isPrint ? 0 : 1];
    if (text.kind != Expr::Kind::StringLit)
      return error(text.loc, std::string("the ") + (isPrint ? "text of 'print'" : "message of 'assert'") +
                                 " must be a string literal");
    if (text.name.find('%') != std::string::npos)
      return error(text.loc, "the text may not contain '%'; values are formatted by their type");
    e.elementShape.clear();
    for (size_t k = isPrint ? 1 : 0; k < (isPrint ? e.args.size() : 1); ++k) {
      Expr &v = *e.args[k];
      if (!requireValue(v, isPrint ? "a printed value" : "the condition"))
        return false;
      if (!isPrint && v.type.elem != ScalarType::I1)
        return error(v.loc, "the condition of 'assert' must be a boolean (a comparison), got " +
                                describeOperand(v.type));
      if (!joinElementShape(e, v, "values'"))
        return false;
    }
    if (isPrint && e.args.size() > 9)
      return error(e.args[9]->loc, "'print' takes at most 8 values");
    e.type.kind = SemaType::Kind::Void;
    return true;
  }
  if (f == "reduce" || f == "scan") {
    bool isScan = f == "scan";
    if (e.args.size() < 2 || e.args.size() > (isScan ? 2u : 3u))
      return error(e.loc, isScan ? std::string("'scan' takes a 1-D tile and a combiner: "
                                               "scan(t, fn(a, b) { return a + b; })")
                                 : std::string("'reduce' takes a tile, an optional axis and a "
                                               "combiner: reduce(t, 1, fn(a, b) { return a + "
                                               "b; })"));
    Expr &t = *e.args[0];
    if (!requireValue(t, "the argument"))
      return false;
    if (!t.type.isTile() || (isScan && t.type.shape.size() != 1))
      return error(t.loc, "'" + f + "' needs a " + (isScan ? "1-D " : "") + "tile, got " +
                              describeOperand(t.type));
    std::vector<int64_t> dims;
    if (e.args.size() == 3) {
      int64_t d;
      if (!requireConstInt(*e.args[1], "the axis", d))
        return false;
      int64_t rank = int64_t(t.type.shape.size());
      if (!checkAxis(e.args[1]->loc, d, rank, t.type))
        return false;
      if (rank > 1) {
        e.axis = d;
        dims = t.type.shape;
        dims.erase(dims.begin() + d);
      }
      e.args.erase(e.args.begin() + 1);
    }
    ScalarType elem = t.type.elem;
    if (!checkCombiner(e.args[1], elem, f))
      return false;
    if (isScan)
      e.type = SemaType::tile(elem, e.args[0]->type.shape);
    else
      e.type = e.axis ? SemaType::tile(elem, dims) : SemaType::scalar(elem);
    return true;
  }
  if (f == "take") {
    if (!checkArgCount(e, 2, 2) || !requireValue(*e.args[0], "the tile") ||
        !requireValue(*e.args[1], "the index"))
      return false;
    const SemaType &t = e.args[0]->type, &i = e.args[1]->type;
    if (!t.isTile() || t.shape.size() != 1)
      return error(e.args[0]->loc, "'take' reads from a 1-D tile, got " + describeOperand(t) +
                                       (t.isTile() ? "; reshape it to one dimension first" : ""));
    if (!i.isTile() || !(isSignedIntType(i.elem) || isUnsignedIntType(i.elem)))
      return error(e.args[1]->loc, "the index of 'take' must be an integer tile, got " +
                                       describeOperand(i));
    e.type = SemaType::tile(t.elem, i.shape);
    return true;
  }
  if (f == "cumsum") {
    if (!checkArgCount(e, 1, 1) || !requireValue(*e.args[0], "the argument"))
      return false;
    const SemaType &t = e.args[0]->type;
    if (!t.isTile() || t.shape.size() != 1)
      return error(e.args[0]->loc, "'cumsum' needs a 1-D tile, got " + describeOperand(t) +
                                       (t.isTile() ? "; reshape it to one dimension first" : ""));
    if (t.elem != ScalarType::F32 && t.elem != ScalarType::F16 &&
        t.elem != ScalarType::BF16 && t.elem != ScalarType::I32)
      return error(e.args[0]->loc, "'cumsum' of " + t.str() +
                                       " is not supported yet; cast to f32 or i32");
    e.type = t;
    e.type.weak = false;
    return true;
  }
  if (f == "transpose" || f == "permute") {
    bool isT = f == "transpose";
    if (!checkArgCount(e, isT ? 1 : 2, isT ? 1 : 2) || !requireValue(*e.args[0], "the argument"))
      return false;
    const SemaType &t = e.args[0]->type;
    if (!t.isTile() || (isT && t.shape.size() != 2))
      return error(e.args[0]->loc, "'" + f + "' needs a " + (isT ? "2-D " : "") + "tile, got " +
                                       describeOperand(t));
    std::vector<int64_t> perm;
    if (isT) {
      perm = {1, 0};
    } else {
      Expr &p = *e.args[1];
      if (p.kind != Expr::Kind::List)
        return error(p.loc, "the permutation must be a list of dimensions, e.g. [1, 0, 2]");
      for (auto &d : p.args) {
        int64_t v;
        if (!requireConstInt(*d, "a dimension", v))
          return false;
        perm.push_back(v);
      }
      std::vector<bool> seen(t.shape.size(), false);
      bool ok = perm.size() == t.shape.size();
      for (int64_t v : perm) {
        ok &= v >= 0 && v < int64_t(t.shape.size()) && !seen[size_t(v)];
        if (ok)
          seen[size_t(v)] = true;
      }
      if (!ok)
        return error(p.loc, "the permutation of a " + std::to_string(t.shape.size()) +
                                "-D tile must name each dimension 0.." +
                                std::to_string(t.shape.size() - 1) + " once");
    }
    std::vector<int64_t> dims;
    for (int64_t v : perm)
      dims.push_back(t.shape[size_t(v)]);
    e.type = SemaType::tile(t.elem, dims);
    e.permutation = perm;
    return true;
  }
  if (f == "mma") {
    bool named = e.args.size() == 4 && e.args[3]->argName == "tf32";
    if (named ? !requireValues(e, 4, 4, "an argument of 'mma'")
              : !requireValues(e, 3, 3, "an argument of 'mma'"))
      return false;
    if (named) {
      const Expr &t = *e.args[3];
      if (!t.constInt || !t.type.isScalar() || isFloatType(t.type.elem))
        return error(t.loc, "tf32 must be a compile-time true or false");
      e.tf32 = *t.constInt != 0;
    }
    const SemaType &a = e.args[0]->type, &b = e.args[1]->type, &c = e.args[2]->type;
    const char *names[3] = {"a", "b", "the accumulator"};
    for (int k = 0; k < 3; ++k) {
      const SemaType &t = e.args[k]->type;
      if (!t.isTile() || t.shape.size() != 2)
        return error(e.args[k]->loc, std::string("mma needs ") + names[k] +
                                         " to be a 2-D tile, got " + describeOperand(t));
    }
    if (a.elem != b.elem)
      return error(e.loc, "mma needs a and b of one element type, got " + a.str() +
                              " and " + b.str() + "; convert one with cast<...>(...)");
    if (a.elem != ScalarType::F16 && a.elem != ScalarType::BF16 && a.elem != ScalarType::F32)
      return error(e.args[0]->loc, std::string("mma takes f16, bf16 or f32 operands, got ") +
                                       a.str());
    if (e.tf32 && a.elem != ScalarType::F32)
      return error(e.args[3]->loc, "tf32 = true is for f32 operands; these are " + a.str() +
                                       " (f16 and bf16 always run on the tensor cores)");
    if (a.shape[1] != b.shape[0])
      return error(e.loc, "cannot multiply " + a.str() + " by " + b.str() +
                              ": a has " + std::to_string(a.shape[1]) +
                              " columns but b has " + std::to_string(b.shape[0]) + " rows");
    if (c.elem != ScalarType::F32)
      return error(e.args[2]->loc, "the accumulator of mma must be tile<f32>, got " +
                                       c.str() + "; start it with zeros<f32>([...])");
    if (c.shape[0] != a.shape[0] || c.shape[1] != b.shape[1])
      return error(e.args[2]->loc,
                   "the accumulator " + c.str() + " does not match the product shape " +
                       shapeText({a.shape[0], b.shape[1]}));
    e.type = c;
    e.type.weak = false;
    return true;
  }
  if (f == "range") {
    if (!checkArgCount(e, 1, 1))
      return false;
    int64_t n;
    if (!requireConstInt(*e.args[0], "the length of range", n))
      return false;
    if (n <= 0 || n > 65536)
      return error(e.args[0]->loc, "range needs a length from 1 to 65536, got " +
                                       std::to_string(n));
    e.type = SemaType::tile(ScalarType::I32, {n});
    return true;
  }
  if (f == "num_sms" || f == "resident_programs") {
    if (!inGrid)
      return error(e.loc, "'" + f + "()' is known when the kernel is launched: use "
                          "it in grid(...); inside the kernel, num_blocks(0) is the "
                          "grid size");
    if (!checkArgCount(e, 0, 0))
      return false;
    e.type = SemaType::scalar(ScalarType::I64);
    return true;
  }
  if (f == "block_id" || f == "num_blocks") {
    if (!checkArgCount(e, 1, 1))
      return false;
    int64_t d;
    if (!requireConstInt(*e.args[0], "the grid dimension", d))
      return false;
    if (d < 0 || d > 2)
      return error(e.args[0]->loc, "grid dimension must be 0, 1 or 2, got " +
                                       std::to_string(d));
    e.type = SemaType::scalar(ScalarType::I32);
    return true;
  }
  if (f == "gather" || f == "scatter" || llvm::StringRef(f).starts_with("atomic_"))
    return checkIrregular(e);
  if (f == "load" || f == "store") {
    bool isLoad = f == "load";
    if (!checkArgCount(e, 3, isLoad ? 4 : 3))
      return false;
    Expr &view = *e.args[0];
    if (!check(view))
      return false;
    if (view.type.kind != SemaType::Kind::View)
      return error(view.loc, "the first argument of '" + f +
                                 "' must be a tensor parameter, got " +
                                 view.type.str());
    unsigned rank = view.type.rank;
    Expr &idx = *e.args[1];
    if (idx.kind != Expr::Kind::List)
      return error(idx.loc, "the tile indices must be a list, e.g. [i] or [i, j]");
    if (idx.args.size() != rank)
      return error(idx.loc, "'" + view.name + "' has rank " +
                                std::to_string(rank) + ", so " + f + " needs " +
                                std::to_string(rank) + " tile ind" +
                                (rank == 1 ? "ex" : "ices") + ", got " +
                                std::to_string(idx.args.size()));
    for (auto &i : idx.args)
      if (!requireIntScalar(*i, "a tile index"))
        return false;
    if (!isLoad) {
      Expr &val = *e.args[2];
      if (!requireValue(val, "the stored value"))
        return false;
      if (!val.type.isTile())
        return error(val.loc, "store needs a tile, got the scalar " +
                                  val.type.str());
      if (val.type.shape.size() != rank)
        return error(val.loc, "cannot store " + val.type.str() + " into " +
                                  view.type.str() + ": the ranks differ");
      if (val.type.elem != view.type.elem)
        return error(val.loc, "cannot store " + val.type.str() + " into " +
                                  view.type.str() + "; convert with cast<" +
                                  scalarTypeName(view.type.elem) + ">(...)");
      e.type.kind = SemaType::Kind::Void;
      return true;
    }
    Expr &shape = *e.args[2];
    if (shape.kind != Expr::Kind::List)
      return error(shape.loc, "the tile shape must be a list, e.g. [BLOCK]");
    if (shape.args.size() != rank)
      return error(shape.loc, "'" + view.name + "' has rank " +
                                  std::to_string(rank) + ", so the tile shape needs " +
                                  std::to_string(rank) + " size" +
                                  (rank == 1 ? "" : "s") + ", got " +
                                  std::to_string(shape.args.size()));
    std::vector<int64_t> dims;
    if (!checkShapeList(shape, dims))
      return false;
    if (e.args.size() == 4) {
      Expr &pad = *e.args[3];
      if (!requireValue(pad, "the padding value"))
        return false;
      if (!pad.type.weak || !pad.type.isScalar() ||
          (pad.kind != Expr::Kind::IntLit && pad.kind != Expr::Kind::FloatLit &&
           !(pad.kind == Expr::Kind::Unary && pad.args[0]->type.weak)))
        return error(pad.loc, "the padding value must be a number literal");
      if (isFloatType(pad.type.elem) && !isFloatType(view.type.elem))
        return error(pad.loc, "a float padding value cannot pad " + view.type.str());
    }
    e.type = SemaType::tile(view.type.elem, dims);
    return true;
  }
  if (isUnaryMathFunction(f)) {
    if (!checkArgCount(e, 1, 1) || !requireValue(*e.args[0], "the argument"))
      return false;
    SemaType t = e.args[0]->type;
    if (f != "abs" && !isFloatType(t.elem))
      return error(e.args[0]->loc, "'" + f + "' needs a float argument, got " +
                                       describeOperand(t) + "; convert with cast<f32>(...)");
    bool approx = f == "exp" || f == "log" || f == "exp2" || f == "log2" ||
                  f == "tanh" || f == "sigmoid" || f == "erf";
    if (approx && t.elem == ScalarType::F64)
      return error(e.loc, "'" + f + "' of f64 is not supported yet; compute in "
                          "f32 with cast<f32>(...)");
    if (f == "abs" && (t.elem == ScalarType::I1 || isUnsignedIntType(t.elem)))
      return error(e.args[0]->loc, "'abs' needs a signed number, got " + t.str());
    if (t.weak) // exp(1.0) is an f32 computation
      t.weak = false;
    e.type = t;
    return true;
  }
  if (f == "pow" || f == "fma") {
    size_t n = f == "pow" ? 2 : 3;
    if (!requireValues(e, n, n, "an argument"))
      return false;
    SemaType t = e.args[0]->type;
    for (size_t k = 1; k < n; ++k) {
      Unified u = unifyOperands(t, e.args[k]->type, f == "pow" ? "raise" : "fma");
      if (!u.error.empty())
        return error(e.loc, u.error);
      t = u.type;
    }
    if (!isFloatType(t.elem))
      return error(e.loc, "'" + f + "' needs float arguments, got " + describeOperand(t) +
                              "; convert with cast<f32>(...)");
    if (f == "pow" && t.elem == ScalarType::F64)
      return error(e.loc, "'pow' of f64 is not supported yet; compute in f32 with cast<f32>(...)");
    t.weak = false;
    e.type = t;
    return true;
  }
  if ((f == "sum" || f == "min" || f == "max" || f == "prod") && e.args.size() != 2) {
    // One argument: a reduction of the whole tile to a scalar.
    if (e.args.size() != 1)
      return error(e.loc, "'" + f + "' takes a tile (reduction)" +
                              (f == "sum" || f == "prod" ? std::string("")
                                                         : " or two values (elementwise)") +
                              ", got " + std::to_string(e.args.size()) + " arguments");
    if (!requireValue(*e.args[0], "the argument"))
      return false;
    const SemaType &t = e.args[0]->type;
    if (!t.isTile())
      return error(e.args[0]->loc, "'" + f + "' of one argument reduces a tile, got " +
                                       describeOperand(t));
    if (t.elem != ScalarType::F32 && t.elem != ScalarType::F16 &&
        t.elem != ScalarType::BF16 && t.elem != ScalarType::I32)
      return error(e.args[0]->loc, "reductions of " + t.str() +
                                       " are not supported yet; cast to f32 or i32");
    e.type = SemaType::scalar(t.elem);
    return true;
  }
  if (f == "sum" || f == "prod")
    return error(e.loc, "'" + f + "' reduces one tile; over one axis write " + f +
                            "(t, axis = d)");
  if (f == "argmax" || f == "argmin") {
    if (!requireTileArg(e, 1, 1))
      return false;
    const SemaType &t = e.args[0]->type;
    if (t.elem != ScalarType::F32 && t.elem != ScalarType::F16 &&
        t.elem != ScalarType::BF16 && t.elem != ScalarType::I32)
      return error(e.args[0]->loc, "'" + f + "' of " + t.str() +
                                       " is not supported yet; cast to f32 or i32");
    e.type = SemaType::scalar(ScalarType::I32);
    return true;
  }
  if (f == "min" || f == "max") {
    if (!checkArgCount(e, 2, 2) || !requireValue(*e.args[0], "the argument") ||
        !requireValue(*e.args[1], "the argument"))
      return false;
    Unified u = unifyOperands(e.args[0]->type, e.args[1]->type,
                              f == "min" ? "take the min of" : "take the max of");
    if (!u.error.empty())
      return error(e.loc, u.error);
    if (u.type.elem == ScalarType::I1)
      return error(e.loc, "'" + f + "' needs numbers, not booleans");
    e.type = u.type;
    return true;
  }
  if (f == "cdiv") {
    if (!checkArgCount(e, 2, 2) || !requireValue(*e.args[0], "the argument") ||
        !requireValue(*e.args[1], "the argument"))
      return false;
    Unified u = unifyOperands(e.args[0]->type, e.args[1]->type, "cdiv");
    if (!u.error.empty())
      return error(e.loc, u.error);
    if (isFloatType(u.type.elem) || u.type.elem == ScalarType::I1)
      return error(e.loc, "'cdiv' needs integers, got " + u.type.str());
    e.type = u.type;
    if (e.args[0]->constInt && e.args[1]->constInt) {
      int64_t b = *e.args[1]->constInt;
      if (b == 0)
        return error(e.loc, "division by zero in a compile-time expression");
      int64_t a = *e.args[0]->constInt;
      // The one quotient that does not fit (and traps on the host).
      if (a == std::numeric_limits<int64_t>::min() && b == -1)
        return error(e.loc, "compile-time integer overflow: cdiv(" + std::to_string(a) +
                                ", -1) does not fit in 64 bits");
      e.constInt = a / b + ((a % b != 0) && ((a < 0) == (b < 0)) ? 1 : 0);
    }
    return true;
  }
  if (f == "where") {
    if (!requireValues(e, 3, 3, "an argument of 'where'"))
      return false;
    const SemaType &c = e.args[0]->type;
    if (c.elem != ScalarType::I1)
      return error(e.args[0]->loc, "the condition of 'where' must be a boolean "
                                   "(a comparison), got " + c.str());
    Unified u = unifyOperands(e.args[1]->type, e.args[2]->type, "select between");
    if (!u.error.empty())
      return error(e.loc, u.error);
    // The condition broadcasts with the values like a binary operator's
    // operands (numpy rules).
    if (c.isTile() && u.type.isTile() && c.shape != u.type.shape) {
      std::optional<std::vector<int64_t>> s = broadcastShapes(c.shape, u.type.shape);
      if (!s)
        return error(e.loc, "the condition " + c.str() + " and the values " +
                                u.type.str() + " of 'where' do not broadcast to one shape");
      u.type.shape = *s;
    }
    if (c.isTile() && !u.type.isTile()) {
      u.type.kind = SemaType::Kind::Tile;
      u.type.shape = c.shape;
      u.type.weak = false;
    }
    e.type = u.type;
    return true;
  }
  if (f == "cast") {
    if (!e.typeArg)
      return error(e.loc, "'cast' needs a target type: cast<f16>(x)");
    if (!checkArgCount(e, 1, 1) || !requireValue(*e.args[0], "the argument of 'cast'"))
      return false;
    SemaType target;
    if (!resolveType(*e.typeArg, target, false))
      return false;
    e.type = e.args[0]->type;
    e.type.elem = target.elem;
    e.type.weak = false;
    return true;
  }
  return error(e.loc, "unknown function '" + f + "'" + suggest(f));
}

bool Checker::checkStmt(Stmt &s) {
  Nesting level(depth);
  if (depth > kMaxCheckDepth)
    return tooDeep(s.loc);
  switch (s.kind) {
  case Stmt::Kind::Return:
    return error(s.loc, "a helper returns once, at the end of its body");
  case Stmt::Kind::Let: {
    if (!requireValue(*s.value, "the value of a binding"))
      return false;
    auto it = symbols.find(s.name);
    if (it != symbols.end() && it->second.kind != Symbol::Kind::Local)
      return error(s.nameLoc, "'" + s.name + "' shadows a kernel parameter; pick another name");
    Symbol sym;
    sym.type = s.value->type;
    // A binding has a definite type: `let n = 4` is an i32.
    sym.type.weak = false;
    sym.mutableVar = s.isVar;
    sym.loc = s.nameLoc;
    symbols[s.name] = sym;
    return true;
  }
  case Stmt::Kind::Assign: {
    auto it = symbols.find(s.name);
    if (it == symbols.end())
      return error(s.nameLoc, "unknown name '" + s.name + "'" + suggest(s.name));
    if (it->second.kind != Symbol::Kind::Local || !it->second.mutableVar) {
      diags.error(s.nameLoc, "cannot assign to '" + s.name +
                                 "': only 'var' bindings can change");
      if (it->second.kind == Symbol::Kind::Local)
        diags.note(it->second.loc, "declared here with 'let'; use 'var' to allow assignment");
      return false;
    }
    if (!requireValue(*s.value, "the assigned value"))
      return false;
    const SemaType &want = it->second.type;
    const SemaType &got = s.value->type;
    if (!assignable(want, got))
      return error(s.value->loc, "cannot assign " + describeOperand(got) +
                                     " to '" + s.name + "' of type " + want.str());
    return true;
  }
  case Stmt::Kind::ExprStmt:
    if (!check(*s.value))
      return false;
    if (s.value->kind != Expr::Kind::Call ||
        (s.value->name != "store" && s.value->name != "scatter" &&
         s.value->name != "print" && s.value->name != "assert" &&
         !llvm::StringRef(s.value->name).starts_with("atomic_")))
      return error(s.loc, "this expression's value is unused; bind it with 'let'");
    return true;
  case Stmt::Kind::For: {
    for (Expr *bound : {s.lower.get(), s.upper.get(), s.step.get()})
      if (bound && !requireIntScalar(*bound, "a loop bound"))
        return false;
    SemaType t = s.lower->type;
    for (Expr *bound : {s.upper.get(), s.step.get()}) {
      if (!bound)
        continue;
      Unified u = unifyOperands(t, bound->type, "use as loop bounds");
      if (!u.error.empty())
        return error(bound->loc, u.error);
      t = u.type;
    }
    t.weak = false;
    if (s.step && s.step->constInt && *s.step->constInt <= 0)
      return error(s.step->loc, "the loop step must be positive, got " +
                                    std::to_string(*s.step->constInt));
    s.inductionType = t;
    auto saved = symbols;
    if (symbols.count(s.name) && symbols[s.name].kind != Symbol::Kind::Local)
      return error(s.nameLoc, "'" + s.name + "' shadows a kernel parameter; pick another name");
    Symbol iv;
    iv.type = t;
    iv.loc = s.nameLoc;
    symbols[s.name] = iv;
    bool ok = checkBlock(s.body);
    symbols = saved;
    return ok;
  }
  case Stmt::Kind::If:
  case Stmt::Kind::While: {
    const char *what = s.kind == Stmt::Kind::If ? "if" : "while";
    if (!requireValue(*s.value, "the condition"))
      return false;
    if (!s.value->type.isScalar() || s.value->type.elem != ScalarType::I1)
      return error(s.value->loc,
                   std::string("the condition of '") + what +
                       "' must be a scalar boolean, got " + s.value->type.str() +
                       (s.value->type.isTile() ? "; for tiles use where(cond, a, b)" : ""));
    auto saved = symbols;
    bool ok = checkBlock(s.body);
    symbols = saved;
    if (ok && !s.elseBody.empty()) {
      ok = checkBlock(s.elseBody);
      symbols = saved;
    }
    return ok;
  }
  }
  return false;
}

bool Checker::checkBlock(std::vector<StmtPtr> &body) {
  for (auto &st : body)
    if (!checkStmt(*st))
      return false;
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
    GridExpr::Kind k;
    switch (e.op) {
    case Expr::Op::Add: k = GridExpr::Kind::Add; break;
    case Expr::Op::Sub: k = GridExpr::Kind::Sub; break;
    case Expr::Op::Mul: k = GridExpr::Kind::Mul; break;
    case Expr::Op::Div: k = GridExpr::Kind::Div; break;
    case Expr::Op::Rem: k = GridExpr::Kind::Rem; break;
    default: return error(e.loc, "grid sizes are integers; comparisons are not allowed here");
    }
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
  return error(e.loc, "the grid can only use integer parameters, tensor shapes "
                      "and strides, constants, + - * / %, cdiv, min, max, "
                      "num_sms() and resident_programs()");
}

bool Checker::run(const Defines &defines, std::set<std::string> &used) {
  inst.kernel = &kernel;
  if (kernel.fns) {
    std::set<std::string> names;
    for (auto &fn : *kernel.fns) {
      if (llvm::any_of(kBuiltins, [&](const char *b) { return fn->name == b; }) ||
          isUnaryMathFunction(fn->name))
        return error(fn->loc, "'" + fn->name + "' is a builtin function; name the helper differently");
      if (!names.insert(fn->name).second)
        return error(fn->loc, "helper '" + fn->name + "' is defined twice");
    }
  }
  inst.signature.name = kernel.name;
  if (!bindConstParams(defines, used))
    return false;
  if (!checkTune(defines))
    return false;
  for (unsigned i = 0; i < kernel.params.size(); ++i) {
    Param &p = kernel.params[i];
    SemaType t;
    if (!resolveType(*p.type, t, /*allowTensor=*/true))
      return false;
    if (symbols.count(p.name))
      return error(p.loc, "parameter '" + p.name + "' is declared twice");
    Symbol s;
    s.kind = Symbol::Kind::Param;
    s.type = t;
    s.paramIndex = i;
    s.loc = p.loc;
    symbols[p.name] = s;
    inst.paramTypes.push_back(t);
    ParamInfo info;
    info.name = p.name;
    info.isTensor = t.kind == SemaType::Kind::View;
    info.dtype = t.elem;
    info.rank = info.isTensor ? t.rank : 0;
    inst.signature.params.push_back(info);
  }
  if (!checkLaunch())
    return false;
  if (kernel.grid.size() > 3)
    return error(kernel.grid[3]->loc, "the grid has at most 3 dimensions");
  for (auto &g : kernel.grid) {
    inGrid = true;
    bool ok = check(*g);
    inGrid = false;
    if (!ok)
      return false;
    if (!g->type.isScalar() || isFloatType(g->type.elem) ||
        g->type.elem == ScalarType::I1)
      return error(g->loc, "a grid size must be an integer, got " + g->type.str());
    GridExpr ge;
    if (!toGridExpr(*g, ge))
      return false;
    inst.signature.grid.push_back(std::move(ge));
  }
  if (inst.signature.grid.empty())
    inst.signature.grid.push_back(GridExpr::constant(1));
  for (auto &s : kernel.body)
    if (!checkStmt(*s))
      return false;
  return true;
}

bool tilec::checkKernel(KernelDecl &kernel, const Defines &defines,
                        DiagEngine &diags, KernelInstance &out,
                        std::set<std::string> &usedDefines) {
  Checker c(kernel, diags, out);
  return c.run(defines, usedDefines);
}
