//===- Sema.cpp - Semantic checks of the tile language --------------------===//

#include "SemaChecker.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"

#include <cmath>
#include <limits>

using namespace tilec;
using namespace tilec::sema;

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

std::string tilec::sema::shapeText(const std::vector<int64_t> &dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i)
    s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

bool tilec::isUnaryMathFunction(llvm::StringRef f) {
  return llvm::is_contained(kUnaryMathNames, f);
}

bool tilec::unaryMathSupportsF64(llvm::StringRef f) {
#define TILEC_UNARY_MATH(name, op, f64, host)                                                \
  if (f == #name)                                                                            \
    return f64;
#include "tilec/Frontend/UnaryMath.def"
  return false;
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

unsigned tilec::sema::bitWidth(ScalarType t) {
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

std::string tilec::sema::float8Rule(ScalarType t) {
  return std::string(scalarTypeName(t)) +
         " is a storage type: it is loaded, stored, converted with cast<...>(...) and "
         "multiplied by mma; compute with cast<f32>(...) of it";
}

std::string tilec::sema::describeOperand(const SemaType &t) {
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
  if (isFloat8Type(a.elem) || isFloat8Type(b.elem))
    return fail(std::string(": ") + float8Rule(isFloat8Type(a.elem) ? a.elem : b.elem));
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
bool tilec::sema::assignable(const SemaType &want, const SemaType &got) {
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
    if (isFloat8Type(x.type.elem))
      return error(e.loc, "cannot negate " + x.type.str() + ": " + float8Rule(x.type.elem));
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
      // Compile-time conditions (a default's where), and a compile-time
      // side that decides a scalar condition alone (0 && x, 1 || x).
      if (a.constInt && b.constInt) {
        e.constInt = e.op == Expr::Op::And ? (*a.constInt && *b.constInt)
                                           : (*a.constInt || *b.constInt);
      } else if (u.type.isScalar() && (a.constInt || b.constInt)) {
        bool value = *(a.constInt ? a.constInt : b.constInt) != 0;
        if (value == (e.op == Expr::Op::Or))
          e.constInt = value;
      }
      return true;
    case Expr::Op::Lt: case Expr::Op::Le: case Expr::Op::Gt:
    case Expr::Op::Ge: case Expr::Op::Eq: case Expr::Op::Ne:
      e.type = u.type;
      e.type.elem = ScalarType::I1;
      e.type.weak = false;
      if (a.constInt && b.constInt && !isFloatType(u.type.elem)) {
        int64_t x = *a.constInt, y = *b.constInt;
        switch (e.op) {
        case Expr::Op::Lt: e.constInt = x < y; break;
        case Expr::Op::Le: e.constInt = x <= y; break;
        case Expr::Op::Gt: e.constInt = x > y; break;
        case Expr::Op::Ge: e.constInt = x >= y; break;
        case Expr::Op::Eq: e.constInt = x == y; break;
        default: e.constInt = x != y; break;
        }
      }
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




bool Checker::checkStmt(Stmt &s) {
  Nesting level(depth);
  if (depth > kMaxCheckDepth)
    return tooDeep(s.loc);
  switch (s.kind) {
  case Stmt::Kind::Return:
    return error(s.loc, "a helper returns once, at the end of its body");
  case Stmt::Kind::Let: {
    bool view = s.value->kind == Expr::Kind::Call && s.value->name == "narrow";
    if (view && s.isVar)
      return error(s.nameLoc, "a part of a tensor is bound once: use 'let', not 'var'");
    letValue = view;
    bool ok = view ? check(*s.value) : requireValue(*s.value, "the value of a binding");
    letValue = false;
    if (!ok)
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
  if (!rewriteTileOrder())
    return false;
  if (kernel.grid.size() > 3)
    return error(kernel.grid[3]->loc, "the grid has at most 3 dimensions");
  for (auto &g : kernel.grid) {
    GridExpr ge;
    if (!launchExpr(*g, "a grid size must be an integer", /*conditions=*/false,
                    /*boolOk=*/false, ge))
      return false;
    inst.signature.grid.push_back(std::move(ge));
  }
  if (inst.signature.grid.empty())
    inst.signature.grid.push_back(GridExpr::constant(1));
  if (!checkRequires())
    return false;
  if (!checkHeuristics(defines))
    return false;
  if (!checkTuned(defines))
    return false;
  for (size_t i = 0; i < kernel.body.size(); ++i) {
    remapIds = i >= remapFrom;
    if (!checkStmt(*kernel.body[i]))
      return false;
  }
  return true;
}

int64_t tilec::archVersion(llvm::StringRef arch) {
  int64_t version = 90;
  llvm::StringRef digits = arch.drop_front(3).take_while(llvm::isDigit);
  if (arch.starts_with("sm_") && !digits.empty())
    digits.getAsInteger(10, version);
  return version;
}

bool tilec::checkKernel(KernelDecl &kernel, const Defines &defines,
                        DiagEngine &diags, KernelInstance &out,
                        std::set<std::string> &usedDefines, const std::string &arch) {
  out.archVersion = archVersion(arch);
  Checker c(kernel, diags, out);
  return c.run(defines, usedDefines);
}
