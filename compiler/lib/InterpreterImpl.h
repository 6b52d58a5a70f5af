//===- InterpreterImpl.h - the CPU interpreter's evaluator -----*- C++ -*-===//
//
// The interpreter along its seams: this header (values, the evaluator's
// core: expressions, elementwise work, statements), InterpreterBuiltins.cpp
// (calls of builtins, gather/scatter/atomics) and Interpreter.cpp (the entry
// points: parse, check, run every program of the grid).
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_INTERPRETERIMPL_H
#define TILEC_INTERPRETERIMPL_H

#include "tilec/Interpreter.h"

#include "tilec/Frontend/Parser.h"
#include "tilec/Frontend/Sema.h"
#include "tilec/Runtime/Runtime.h"
#include "tilec/Stack.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

#include <array>
#include <cmath>
#include <limits>
#include <set>
#include <cstring>
#include <map>
#include <optional>

namespace tilec::interp {
using namespace tilec;

/// A scalar (one element) or a tile.
struct Val {
  SemaType type;
  std::vector<double> f;  ///< float elements
  std::vector<int64_t> i; ///< integer / boolean elements

  bool isFloat() const { return isFloatType(type.elem); }
  size_t size() const { return isFloat() ? f.size() : i.size(); }
};


inline int64_t wrapInt(ScalarType t, int64_t v) {
  switch (t) {
  case ScalarType::I1: return v != 0;
  case ScalarType::I8: return static_cast<int8_t>(v);
  case ScalarType::I16: return static_cast<int16_t>(v);
  case ScalarType::I32: return static_cast<int32_t>(v);
  case ScalarType::U8: return static_cast<uint8_t>(v);
  case ScalarType::U16: return static_cast<uint16_t>(v);
  case ScalarType::U32: return static_cast<uint32_t>(v);
  default: return v;
  }
}

inline int64_t readInt(ScalarType t, const uint8_t *p) {
  int64_t v = 0;
  std::memcpy(&v, p, scalarTypeSize(t)); // little endian
  return wrapInt(t == ScalarType::U64 ? ScalarType::I64 : t, v);
}

inline void writeElem(ScalarType t, uint8_t *p, double f, int64_t i) {
  if (isFloatType(t))
    storeFloatElement(t, p, f);
  else
    std::memcpy(p, &i, scalarTypeSize(t)); // little endian: the low bytes
}

/// The lines of a tile along one axis (or the whole tile as one line, in
/// row-major order): element k of line o is at flat index at(o, k).
struct Lines {
  size_t length = 1, stride = 1, count = 1;
  Lines(const std::vector<int64_t> &shape, std::optional<int64_t> axis) {
    size_t n = 1;
    for (int64_t d : shape)
      n *= size_t(d);
    if (!axis) {
      length = n;
      return;
    }
    length = size_t(shape[size_t(*axis)]);
    for (size_t d = size_t(*axis) + 1; d < shape.size(); ++d)
      stride *= size_t(shape[d]);
    count = n / length;
  }
  size_t at(size_t o, size_t k) const { return (o / stride) * stride * length + o % stride + k * stride; }
};

class Interp {
public:
  Interp(const KernelInstance &inst, const std::vector<HostArg> &args,
         std::array<uint32_t, 3> grid)
      : inst(inst), args(args), grid(grid) {}

  bool runProgram(std::array<uint32_t, 3> pid, std::string &error) {
    this->pid = pid;
    vars.clear();
    const KernelDecl &k = *inst.kernel;
    for (size_t p = 0; p < k.params.size(); ++p) {
      const SemaType &t = inst.paramTypes[p];
      if (t.kind == SemaType::Kind::View) {
        views[k.params[p].name] = ViewRef{args[p], t.elem};
        continue;
      }
      Val v;
      v.type = t;
      if (isFloatType(t.elem))
        v.f = {roundToFloatType(t.elem, args[p].f)};
      else
        v.i = {wrapInt(t.elem, args[p].i)};
      vars[k.params[p].name] = v;
    }
    failed.clear();
    execBlock(k.body);
    error = failed;
    return failed.empty();
  }

private:
  // --- values -----------------------------------------------------------
  static Val filled(const SemaType &t, double f, int64_t i) {
    Val v;
    v.type = t;
    size_t n = 1;
    if (t.isTile())
      for (int64_t d : t.shape)
        n *= d;
    if (isFloatType(t.elem))
      v.f.assign(n, roundToFloatType(t.elem, f));
    else
      v.i.assign(n, wrapInt(t.elem, i));
    return v;
  }

  /// Float to integer as the GPU's cvt.rzi (docs/language.md): toward
  /// zero, NaN gives 0, out-of-range values the type's minimum or maximum.
  static int64_t saturatingToInt(ScalarType to, double x) {
    if (std::isnan(x))
      return 0;
    x = std::trunc(x);
    unsigned bits = unsigned(scalarTypeSize(to) * 8);
    if (isUnsignedIntType(to)) {
      if (x <= 0)
        return 0;
      if (bits == 64)
        return x >= 18446744073709551616.0 ? int64_t(-1) : int64_t(uint64_t(x));
      double hi = double((uint64_t(1) << bits) - 1);
      return int64_t(x >= hi ? hi : x);
    }
    if (bits == 64) {
      if (x >= 9223372036854775808.0)
        return std::numeric_limits<int64_t>::max();
      if (x <= -9223372036854775808.0)
        return std::numeric_limits<int64_t>::min();
      return int64_t(x);
    }
    double hi = double((int64_t(1) << (bits - 1)) - 1), lo = -hi - 1;
    return int64_t(x >= hi ? hi : x <= lo ? lo : x);
  }

  static Val convert(const Val &v, ScalarType to) {
    if (v.type.elem == to)
      return v;
    Val r;
    r.type = v.type;
    r.type.elem = to;
    r.type.weak = false;
    size_t n = v.size();
    bool fromF = v.isFloat(), toF = isFloatType(to);
    if (toF)
      r.f.resize(n);
    else
      r.i.resize(n);
    for (size_t k = 0; k < n; ++k) {
      if (to == ScalarType::I1)
        r.i[k] = fromF ? (v.f[k] != 0) : (v.i[k] != 0);
      else if (toF)
        r.f[k] = roundToFloatType(to, fromF ? v.f[k]
                                      : (isUnsignedIntType(v.type.elem)
                                             ? double(uint64_t(v.i[k]))
                                             : double(v.i[k])));
      else if (fromF) {
        r.i[k] = saturatingToInt(to, v.f[k]);
      } else
        r.i[k] = wrapInt(to, v.i[k]);
    }
    return r;
  }

  /// A scalar splat to a tile, or numpy broadcasting of a tile.
  static Val broadcastTo(const Val &v, const SemaType &target) {
    if (!target.isTile() || (v.type.isTile() && v.type.shape == target.shape))
      return v;
    Val r = v;
    r.type.kind = SemaType::Kind::Tile;
    r.type.shape = target.shape;
    size_t n = 1;
    for (int64_t d : target.shape)
      n *= d;
    if (!v.type.isTile()) {
      if (r.isFloat())
        r.f.assign(n, v.f[0]);
      else
        r.i.assign(n, v.i[0]);
      return r;
    }
    const std::vector<int64_t> &from = v.type.shape, &to = target.shape;
    size_t lead = to.size() - from.size();
    r.f.assign(r.isFloat() ? n : 0, 0.0);
    r.i.assign(r.isFloat() ? 0 : n, 0);
    for (size_t k = 0; k < n; ++k) {
      // Source flat index of target element k.
      size_t rem = k, src = 0, srcStride = 1;
      for (size_t d = to.size(); d-- > 0;) {
        size_t c = rem % to[d];
        rem /= to[d];
        if (d >= lead) {
          int64_t fd = from[d - lead];
          src += (fd == 1 ? 0 : c) * srcStride;
          srcStride *= fd;
        }
      }
      if (r.isFloat())
        r.f[k] = v.f[src];
      else
        r.i[k] = v.i[src];
    }
    return r;
  }

  /// a (MxK) * b (KxN) + acc (MxN), products and sums in f32 like the
  /// tensor cores (exact products of f16/bf16 inputs, f32 accumulation).
  static Val matmul(const Val &a, const Val &b, const Val &acc, bool tf32) {
    int64_t M = a.type.shape[0], K = a.type.shape[1], N = b.type.shape[1];
    Val r = acc;
    auto operand = [tf32](double v) { return tf32 ? roundToTf32(float(v)) : float(v); };
    std::vector<float> bt(size_t(K * N));
    for (int64_t k = 0; k < K; ++k)
      for (int64_t n = 0; n < N; ++n)
        bt[size_t(n * K + k)] = operand(b.f[size_t(k * N + n)]);
    std::vector<float> ar(static_cast<size_t>(K));
    for (int64_t m = 0; m < M; ++m) {
      for (int64_t k = 0; k < K; ++k)
        ar[size_t(k)] = operand(a.f[size_t(m * K + k)]);
      for (int64_t n = 0; n < N; ++n) {
        float s = 0;
        const float *bc = &bt[size_t(n * K)];
        for (int64_t k = 0; k < K; ++k)
          s += ar[size_t(k)] * bc[k];
        r.f[size_t(m * N + n)] = double(float(acc.f[size_t(m * N + n)]) + s);
      }
    }
    return r;
  }

  Val evalAs(const Expr &e, const SemaType &target) {
    double f;
    int64_t i;
    if (literalValue(e, f, i))
      return filled(target, f, (!isFloatType(target.elem) && e.kind == Expr::Kind::FloatLit)
                                   ? truncToInt64(f)
                                   : i);
    Val v = convert(eval(e), target.elem);
    return broadcastTo(v, target);
  }

  template <typename FF, typename FI>
  static Val zipWith(const Val &a, const Val &b, const SemaType &rt, FF ff, FI fi) {
    Val r;
    r.type = rt;
    size_t n = std::max(a.size(), b.size());
    if (isFloatType(rt.elem)) {
      r.f.resize(n);
      for (size_t k = 0; k < n; ++k)
        r.f[k] = roundToFloatType(rt.elem, ff(a.f[a.f.size() == 1 ? 0 : k], b.f[b.f.size() == 1 ? 0 : k]));
    } else if (a.isFloat()) { // float comparison producing i1
      r.i.resize(n);
      for (size_t k = 0; k < n; ++k)
        r.i[k] = fi(0, 0, a.f[a.f.size() == 1 ? 0 : k], b.f[b.f.size() == 1 ? 0 : k]);
    } else {
      r.i.resize(n);
      for (size_t k = 0; k < n; ++k)
        r.i[k] = wrapInt(rt.elem, fi(a.i[a.i.size() == 1 ? 0 : k], b.i[b.i.size() == 1 ? 0 : k], 0, 0));
    }
    return r;
  }

  // --- expressions ------------------------------------------------------
  Val eval(const Expr &e) {
    double f;
    int64_t i;
    if (e.kind == Expr::Kind::BoolLit)
      return filled(e.type, 0, e.intValue);
    if (literalValue(e, f, i))
      return filled(e.type, f, i);
    if (e.kind == Expr::Kind::Inline) {
      // A helper's body in a scope of its own: its names (the argument
      // bindings first) end with it, like a block's.
      Val r = filled(e.type, 0, 0);
      execBlock(e.body, [&] { r = eval(*e.args[0]); });
      return r;
    }
    switch (e.kind) {
    case Expr::Kind::Name:
      return vars.at(e.name);
    case Expr::Kind::Unary: {
      Val x = eval(*e.args[0]);
      if (e.op == Expr::Op::Not) {
        for (auto &v : x.i)
          v = !v;
        return x;
      }
      if (e.op == Expr::Op::BitNot) {
        for (auto &v : x.i)
          v = wrapInt(x.type.elem, ~v);
        return x;
      }
      if (x.isFloat())
        for (auto &v : x.f)
          v = -v;
      else
        for (auto &v : x.i)
          v = wrapInt(x.type.elem, -v);
      return x;
    }
    case Expr::Kind::Binary:
      return binary(e);
    case Expr::Kind::ViewField: {
      const HostArg &a = views.at(e.args[0]->name).arg;
      size_t d = static_cast<size_t>(*e.args[1]->constInt);
      return filled(e.type, 0, e.name == "shape" ? a.sizes[d] : a.strides[d]);
    }
    case Expr::Kind::Call:
      return call(e);
    default:
      break;
    }
    fail("internal: unexpected expression");
    return filled(SemaType::scalar(ScalarType::I32), 0, 0);
  }

  Val binary(const Expr &e) {
    Unified u = unifyOperands(e.args[0]->type, e.args[1]->type, "");
    Val a = evalAs(*e.args[0], u.type), b = evalAs(*e.args[1], u.type);
    bool uns = isUnsignedIntType(u.type.elem);
    SemaType rt = e.type;
    auto idiv = [&](int64_t x, int64_t y, bool rem) -> int64_t {
      if (y == 0)
        return 0;
      if (uns) {
        uint64_t ux = uint64_t(x), uy = uint64_t(y);
        return int64_t(rem ? ux % uy : ux / uy);
      }
      if (x == INT64_MIN && y == -1)
        return rem ? 0 : x;
      return rem ? x % y : x / y;
    };
    auto cmp = [&](auto x, auto y) -> int64_t {
      switch (e.op) {
      case Expr::Op::Lt: return x < y;
      case Expr::Op::Le: return x <= y;
      case Expr::Op::Gt: return x > y;
      case Expr::Op::Ge: return x >= y;
      case Expr::Op::Eq: return x == y;
      default: return x != y;
      }
    };
    switch (e.op) {
    case Expr::Op::Add: return zipWith(a, b, rt, [](double x, double y) { return x + y; }, [](int64_t x, int64_t y, double, double) { return int64_t(uint64_t(x) + uint64_t(y)); });
    case Expr::Op::Sub: return zipWith(a, b, rt, [](double x, double y) { return x - y; }, [](int64_t x, int64_t y, double, double) { return int64_t(uint64_t(x) - uint64_t(y)); });
    case Expr::Op::Mul: return zipWith(a, b, rt, [](double x, double y) { return x * y; }, [](int64_t x, int64_t y, double, double) { return int64_t(uint64_t(x) * uint64_t(y)); });
    case Expr::Op::Div: return zipWith(a, b, rt, [](double x, double y) { return x / y; }, [&](int64_t x, int64_t y, double, double) { return idiv(x, y, false); });
    case Expr::Op::Rem: return zipWith(a, b, rt, [](double x, double y) { return std::fmod(x, y); }, [&](int64_t x, int64_t y, double, double) { return idiv(x, y, true); });
    case Expr::Op::And: return zipWith(a, b, rt, nullptr2, [](int64_t x, int64_t y, double, double) { return int64_t(x && y); });
    case Expr::Op::BitAnd: return zipWith(a, b, rt, nullptr2, [](int64_t x, int64_t y, double, double) { return x & y; });
    case Expr::Op::BitOr: return zipWith(a, b, rt, nullptr2, [](int64_t x, int64_t y, double, double) { return x | y; });
    case Expr::Op::BitXor: return zipWith(a, b, rt, nullptr2, [](int64_t x, int64_t y, double, double) { return x ^ y; });
    case Expr::Op::Shl:
    case Expr::Op::Shr: {
      int64_t width = int64_t(scalarTypeSize(u.type.elem)) * 8;
      bool left = e.op == Expr::Op::Shl;
      bool sg = isSignedIntType(u.type.elem);
      return zipWith(a, b, rt, nullptr2, [=](int64_t x, int64_t y, double, double) -> int64_t {
        uint64_t amount = uint64_t(y) & (width == 64 ? ~0ull : ((1ull << width) - 1));
        bool inRange = amount < uint64_t(width);
        if (left)
          return inRange ? int64_t(uint64_t(x) << amount) : 0;
        if (sg)
          return x >> (inRange ? amount : uint64_t(width - 1));
        uint64_t ux = uint64_t(x) & (width == 64 ? ~0ull : ((1ull << width) - 1));
        return inRange ? int64_t(ux >> amount) : 0;
      });
    }
    case Expr::Op::Or: return zipWith(a, b, rt, nullptr2, [](int64_t x, int64_t y, double, double) { return int64_t(x || y); });
    default:
      if (a.isFloat())
        return zipWith(a, b, rt, nullptr2, [&](int64_t, int64_t, double x, double y) { return cmp(x, y); });
      if (uns)
        return zipWith(a, b, rt, nullptr2, [&](int64_t x, int64_t y, double, double) { return cmp(uint64_t(x), uint64_t(y)); });
      return zipWith(a, b, rt, nullptr2, [&](int64_t x, int64_t y, double, double) { return cmp(x, y); });
    }
  }
  static double nullptr2(double, double) { return 0; }

  std::vector<int64_t> indices(const Expr &list) {
    std::vector<int64_t> out;
    for (auto &x : list.args)
      out.push_back(evalAs(*x, SemaType::scalar(ScalarType::I64)).i[0]);
    return out;
  }

  /// Visits every element of a tile at `origin` in `view`: flat index, byte
  /// pointer (null when outside the view).
  template <typename Fn>
  void forTile(const HostArg &view, ScalarType dtype, const std::vector<int64_t> &origin,
               const std::vector<int64_t> &shape, Fn fn) {
    size_t n = 1;
    for (int64_t d : shape)
      n *= d;
    size_t eb = scalarTypeSize(dtype);
    for (size_t flat = 0; flat < n; ++flat) {
      size_t rest = flat;
      int64_t offset = 0;
      bool inside = true;
      for (int64_t d = int64_t(shape.size()) - 1; d >= 0; --d) {
        int64_t c = int64_t(rest % shape[d]);
        rest /= shape[d];
        int64_t g = origin[d] * shape[d] + c;
        inside &= g >= 0 && g < view.sizes[d];
        offset += g * view.strides[d];
      }
      fn(flat, inside ? static_cast<uint8_t *>(view.data) + offset * int64_t(eb) : nullptr);
    }
  }

  /// gather / scatter / atomic_*: element-wise at index tiles. Programs run
  /// one after another, so the atomics are plain read-modify-writes.
  /// The interpreter kernels of Builtins.def, one per group of builtins,
  /// and of UnaryMath.def (InterpreterBuiltins.cpp).
#define TILEC_BUILTIN_RULE(Rule) Val call##Rule(const Expr &e);
#include "tilec/Frontend/Builtins.def"
  Val callUnaryMath(const Expr &e);

  /// A call of a builtin (InterpreterBuiltins.cpp).
  Val call(const Expr &e);

  // --- statements -------------------------------------------------------
  /// Runs `body`; `atEnd` (if any) runs after it while its names are still
  /// visible, unless an assertion failed.
  void execBlock(const std::vector<StmtPtr> &body,
                 llvm::function_ref<void()> atEnd = nullptr) {
    // `let`s end with their block; assignments to outer names persist.
    std::vector<std::pair<std::string, std::optional<Val>>> shadowed;
    for (auto &s : body) {
      if (!failed.empty())
        break;
      if (s->kind == Stmt::Kind::Let) {
        auto it = vars.find(s->name);
        shadowed.emplace_back(s->name, it == vars.end() ? std::nullopt
                                                        : std::optional<Val>(it->second));
      }
      exec(*s);
    }
    if (atEnd && failed.empty())
      atEnd();
    for (auto it = shadowed.rbegin(); it != shadowed.rend(); ++it) {
      if (it->second)
        vars[it->first] = *it->second;
      else
        vars.erase(it->first);
    }
  }

  void exec(const Stmt &s) {
    switch (s.kind) {
    case Stmt::Kind::Return: // only a helper's last statement, consumed by Sema
      fail("internal: unexpected return");
      return;
    case Stmt::Kind::Let: {
      SemaType t = s.value->type;
      t.weak = false;
      if (t.kind == SemaType::Kind::View) { // narrow(...)
        views[s.name] = narrowView(*s.value);
        return;
      }
      vars[s.name] = evalAs(*s.value, t);
      return;
    }
    case Stmt::Kind::Assign: {
      SemaType type = vars.at(s.name).type;
      Val v = evalAs(*s.value, type);
      vars.at(s.name) = std::move(v);
      return;
    }
    case Stmt::Kind::ExprStmt:
      eval(*s.value);
      return;
    case Stmt::Kind::For: {
      const SemaType &t = s.inductionType;
      int64_t lo = evalAs(*s.lower, t).i[0], hi = evalAs(*s.upper, t).i[0];
      int64_t step = s.step ? evalAs(*s.step, t).i[0] : 1;
      if (step <= 0)
        return fail("a loop step must be positive, got " + std::to_string(step));
      std::optional<Val> outer;
      if (auto it = vars.find(s.name); it != vars.end())
        outer = it->second;
      for (int64_t k = lo; k < hi && failed.empty(); k += step) {
        vars[s.name] = filled(t, 0, k);
        execBlock(s.body);
        if (++iterations > kMaxIterations)
          return fail("more than 10^9 loop iterations");
      }
      if (outer)
        vars[s.name] = *outer;
      else
        vars.erase(s.name);
      return;
    }
    case Stmt::Kind::If:
      if (eval(*s.value).i[0])
        execBlock(s.body);
      else
        execBlock(s.elseBody);
      return;
    case Stmt::Kind::While:
      while (failed.empty() && eval(*s.value).i[0]) {
        execBlock(s.body);
        if (++iterations > kMaxIterations)
          return fail("more than 10^9 loop iterations");
      }
      return;
    }
  }

public:
  const llvm::SourceMgr *srcMgr = nullptr; ///< for assert locations
  std::string fileName;

private:
  void fail(const std::string &msg) {
    if (failed.empty())
      failed = msg;
  }

  static constexpr uint64_t kMaxIterations = 1000000000;
  const KernelInstance &inst;
  const std::vector<HostArg> &args;
  std::array<uint32_t, 3> grid;
  std::array<uint32_t, 3> pid{};
  std::map<std::string, Val> vars;
  /// The tensors by name: the parameters and the parts (narrow) bound by
  /// `let`.
  struct ViewRef {
    HostArg arg;
    ScalarType elem;
  };
  ViewRef narrowView(const Expr &e);
  std::map<std::string, ViewRef> views;
  std::string failed;
  uint64_t iterations = 0;
};

} // namespace tilec::interp

#endif // TILEC_INTERPRETERIMPL_H
