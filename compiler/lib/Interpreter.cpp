//===- Interpreter.cpp - Reference execution of kernels on the CPU --------===//
//
// A direct interpreter over the checked AST. Values are tiles or scalars of
// one element type, stored as doubles (floats) or int64 (integers, booleans)
// and rounded to their type after every operation. The evaluation order
// mirrors MLIRGen: operands are converted to the type Sema chose, untyped
// literals are made directly in that type, scalars meeting tiles are
// broadcast.
//
//===----------------------------------------------------------------------===//

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

using namespace tilec;

namespace {

/// A scalar (one element) or a tile.
struct Val {
  SemaType type;
  std::vector<double> f;  ///< float elements
  std::vector<int64_t> i; ///< integer / boolean elements

  bool isFloat() const { return isFloatType(type.elem); }
  size_t size() const { return isFloat() ? f.size() : i.size(); }
};


int64_t wrapInt(ScalarType t, int64_t v) {
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

int64_t readInt(ScalarType t, const uint8_t *p) {
  int64_t v = 0;
  std::memcpy(&v, p, scalarTypeSize(t)); // little endian
  return wrapInt(t == ScalarType::U64 ? ScalarType::I64 : t, v);
}

void writeElem(ScalarType t, uint8_t *p, double f, int64_t i) {
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
        views[k.params[p].name] = p;
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
      const HostArg &a = args[views.at(e.args[0]->name)];
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
  Val irregular(const Expr &e) {
    const std::string &fn = e.name;
    const HostArg &view = args[views.at(e.args[0]->name)];
    ScalarType elem = inst.paramTypes[views.at(e.args[0]->name)].elem;
    bool isGather = fn == "gather", isCas = fn == "atomic_cas";
    size_t nvals = isGather ? 0 : (isCas ? 2 : 1);
    const std::vector<int64_t> &shape = e.elementShape;
    SemaType idxTy = SemaType::tile(ScalarType::I64, shape);
    std::vector<Val> idx;
    for (auto &ix : e.args[1]->args)
      idx.push_back(evalAs(*ix, idxTy));
    std::vector<Val> vals;
    for (size_t k = 0; k < nvals; ++k)
      vals.push_back(evalAs(*e.args[2 + k], SemaType::tile(elem, shape)));
    size_t next = 2 + nvals;
    std::optional<Val> mask;
    if (e.args.size() > next)
      mask = evalAs(*e.args[next++], SemaType::tile(ScalarType::I1, shape));
    double ff = 0;
    int64_t fi = 0;
    if (isGather && e.args.size() > next)
      literalValue(*e.args[next], ff, fi);
    Val r = filled(SemaType::tile(elem, shape), isGather ? ff : 0,
                   isGather && !isFloatType(elem) ? fi : 0);
    size_t eb = scalarTypeSize(elem);
    bool isF = isFloatType(elem), uns = isUnsignedIntType(elem);
    for (size_t k = 0; k < r.size(); ++k) {
      if (mask && !mask->i[k])
        continue;
      int64_t offset = 0;
      bool inside = true;
      for (size_t d = 0; d < idx.size(); ++d) {
        int64_t g = idx[d].i[k];
        inside &= g >= 0 && g < view.sizes[d];
        offset += g * view.strides[d];
      }
      if (!inside)
        continue;
      auto *p = static_cast<uint8_t *>(view.data) + offset * int64_t(eb);
      double oldF = isF ? loadFloatElement(elem, p) : 0;
      int64_t oldI = isF ? 0 : readInt(elem, p);
      if (fn == "scatter") {
        writeElem(elem, p, isF ? vals[0].f[k] : 0, isF ? 0 : vals[0].i[k]);
        continue;
      }
      if (isF)
        r.f[k] = oldF;
      else
        r.i[k] = oldI;
      if (isGather)
        continue;
      const Val &v = vals.back();
      if (fn == "atomic_add") {
        if (isF)
          writeElem(elem, p, roundToFloatType(elem, oldF + v.f[k]), 0);
        else
          writeElem(elem, p, 0, wrapInt(elem, int64_t(uint64_t(oldI) + uint64_t(v.i[k]))));
      } else if (fn == "atomic_min" || fn == "atomic_max") {
        bool less = uns ? uint64_t(v.i[k]) < uint64_t(oldI) : v.i[k] < oldI;
        bool take = fn == "atomic_min" ? less : (!less && v.i[k] != oldI);
        if (take)
          writeElem(elem, p, 0, v.i[k]);
      } else if (fn == "atomic_xchg") {
        writeElem(elem, p, isF ? v.f[k] : 0, isF ? 0 : v.i[k]);
      } else if (fn == "atomic_cas") {
        if (oldI == vals[0].i[k])
          writeElem(elem, p, 0, v.i[k]);
      }
    }
    if (fn == "scatter")
      return filled(SemaType::scalar(ScalarType::I32), 0, 0);
    return r;
  }

  Val call(const Expr &e) {
    const std::string &fn = e.name;
    if (fn == "block_id" || fn == "num_blocks") {
      size_t d = static_cast<size_t>(*e.args[0]->constInt);
      return filled(e.type, 0, fn == "block_id" ? pid[d] : grid[d]);
    }
    if (fn == "gather" || fn == "scatter" || llvm::StringRef(fn).starts_with("atomic_"))
      return irregular(e);
    if (fn == "load") {
      const HostArg &view = args[views.at(e.args[0]->name)];
      std::vector<int64_t> origin = indices(*e.args[1]);
      double pf = 0;
      int64_t pi = 0;
      if (e.args.size() == 4)
        literalValue(*e.args[3], pf, pi);
      Val r = filled(e.type, pf, isFloatType(e.type.elem) ? 0 : pi);
      ScalarType dt = e.type.elem;
      forTile(view, dt, origin, e.type.shape, [&](size_t k, const uint8_t *p) {
        if (!p)
          return;
        if (r.isFloat())
          r.f[k] = loadFloatElement(dt, p);
        else
          r.i[k] = readInt(dt, p);
      });
      return r;
    }
    if (fn == "store") {
      const HostArg &view = args[views.at(e.args[0]->name)];
      std::vector<int64_t> origin = indices(*e.args[1]);
      Val v = eval(*e.args[2]);
      forTile(view, v.type.elem, origin, v.type.shape, [&](size_t k, uint8_t *p) {
        if (p)
          writeElem(v.type.elem, p, v.isFloat() ? v.f[k] : 0, v.isFloat() ? 0 : v.i[k]);
      });
      return filled(SemaType::scalar(ScalarType::I32), 0, 0);
    }
    if (e.args.size() == 1 && isUnaryMathFunction(fn)) {
      Val x = evalAs(*e.args[0], e.type);
      if (x.isFloat()) {
        for (auto &v : x.f)
          v = roundToFloatType(x.type.elem, fn == "exp"     ? std::exp(v)
                                      : fn == "log"   ? std::log(v)
                                      : fn == "sqrt"  ? std::sqrt(v)
                                      : fn == "exp2"  ? std::exp2(v)
                                      : fn == "log2"  ? std::log2(v)
                                      : fn == "rsqrt" ? 1.0 / std::sqrt(v)
                                      : fn == "floor" ? std::floor(v)
                                      : fn == "ceil"  ? std::ceil(v)
                                      : fn == "tanh"  ? std::tanh(v)
                                      : fn == "sigmoid" ? 1.0 / (1.0 + std::exp(-v))
                                      : fn == "erf"     ? std::erf(v)
                                                        : std::fabs(v));
      } else {
        for (auto &v : x.i)
          v = wrapInt(x.type.elem, v < 0 ? -v : v);
      }
      return x;
    }
    if ((fn == "sum" || fn == "max" || fn == "min" || fn == "prod") && e.args.size() == 1) {
      // The whole tile, or (axis) each line along one dimension, combined
      // in order; floats in double then rounded (the GPU combines in f32).
      Val t = eval(*e.args[0]);
      Lines lines(t.type.shape, e.axis);
      size_t lineLen = lines.length, lineStride = lines.stride;
      Val r = filled(e.type, 0, 0);
      for (size_t o = 0; o < lines.count; ++o) {
        size_t first = lines.at(o, 0);
        if (t.isFloat()) {
          double acc = fn == "sum" ? 0 : fn == "prod" ? 1 : fn == "max" ? -INFINITY : INFINITY;
          for (size_t k = 0; k < lineLen; ++k) {
            double v = t.f[first + k * lineStride];
            if (std::isnan(v) && (fn == "max" || fn == "min")) {
              acc = NAN;
              break;
            }
            acc = fn == "sum"    ? acc + v
                  : fn == "prod" ? acc * v
                  : fn == "max"  ? std::max(acc, v)
                                 : std::min(acc, v);
          }
          r.f[o] = roundToFloatType(e.type.elem, acc);
        } else {
          int64_t acc = fn == "sum" ? 0 : fn == "prod" ? 1 : fn == "max" ? INT32_MIN : INT32_MAX;
          for (size_t k = 0; k < lineLen; ++k) {
            int64_t v = t.i[first + k * lineStride];
            acc = fn == "sum"    ? wrapInt(t.type.elem, acc + v)
                  : fn == "prod" ? wrapInt(t.type.elem, int64_t(uint64_t(acc) * uint64_t(v)))
                  : fn == "max"  ? std::max(acc, v)
                                 : std::min(acc, v);
          }
          r.i[o] = acc;
        }
      }
      return r;
    }
    if (fn == "argmax" || fn == "argmin") {
      // The first extreme element of the tile or of each line along the
      // axis; a NaN counts as the extreme.
      Val t = eval(*e.args[0]);
      bool isMax = fn == "argmax";
      Lines lines(t.type.shape, e.axis);
      Val r = filled(e.type, 0, 0);
      for (size_t o = 0; o < lines.count; ++o) {
        int64_t best = 0;
        for (size_t k = 1; k < lines.length; ++k) {
          size_t bi = lines.at(o, size_t(best)), ki = lines.at(o, k);
          if (t.isFloat()) {
            double a = t.f[bi], b = t.f[ki];
            if (std::isnan(a))
              break;
            if (std::isnan(b) || (isMax ? b > a : b < a))
              best = int64_t(k);
          } else if (isMax ? t.i[ki] > t.i[bi] : t.i[ki] < t.i[bi]) {
            best = int64_t(k);
          }
        }
        r.i[o] = best;
      }
      return r;
    }
    if (fn == "reduce" || fn == "scan") {
      // In order, left to right: f(...f(f(x0, x1), x2)..., xn).
      Val t = eval(*e.args[0]);
      SemaType elem = SemaType::scalar(t.type.elem);
      auto element = [&](size_t k) {
        Val v = filled(elem, 0, 0);
        if (t.isFloat())
          v.f[0] = t.f[k];
        else
          v.i[0] = t.i[k];
        return v;
      };
      auto combine = [&](const Val &a, const Val &b) {
        vars["combine#a"] = a;
        vars["combine#b"] = b;
        Val r = evalAs(*e.args[1], elem);
        vars.erase("combine#a");
        vars.erase("combine#b");
        return r;
      };
      auto put = [&](Val &r, size_t at, const Val &v) {
        if (r.isFloat())
          r.f[at] = v.f[0];
        else
          r.i[at] = v.i[0];
      };
      bool isScan = fn == "scan";
      Lines lines(t.type.shape, isScan ? std::optional<int64_t>(0) : e.axis);
      Val r = isScan ? t : filled(e.type, 0, 0);
      for (size_t o = 0; o < lines.count; ++o) {
        Val acc = element(lines.at(o, 0));
        for (size_t k = 1; k < lines.length; ++k) {
          acc = combine(acc, element(lines.at(o, k)));
          if (isScan)
            put(r, lines.at(o, k), acc);
        }
        if (!isScan)
          put(r, o, acc);
      }
      return r;
    }
    if (fn == "take") {
      // Out-of-range indices give 0.
      Val t = eval(*e.args[0]), idx = eval(*e.args[1]);
      Val r = filled(e.type, 0, 0);
      for (size_t k = 0; k < idx.size(); ++k) {
        int64_t i = idx.i[k];
        if (i < 0 || i >= int64_t(t.size()))
          continue;
        if (r.isFloat())
          r.f[k] = t.f[size_t(i)];
        else
          r.i[k] = t.i[size_t(i)];
      }
      return r;
    }
    if (fn == "min" || fn == "max") {
      Val a = evalAs(*e.args[0], e.type), b = evalAs(*e.args[1], e.type);
      bool isMin = fn == "min";
      bool uns = isUnsignedIntType(e.type.elem);
      return zipWith(
          a, b, e.type,
          [&](double x, double y) {
            if (std::isnan(x) || std::isnan(y))
              return double(NAN);
            return isMin ? std::min(x, y) : std::max(x, y);
          },
          [&](int64_t x, int64_t y, double, double) {
            bool less = uns ? uint64_t(x) < uint64_t(y) : x < y;
            return isMin ? (less ? x : y) : (less ? y : x);
          });
    }
    if (fn == "pow" || fn == "fma") {
      Val a = evalAs(*e.args[0], e.type), b = evalAs(*e.args[1], e.type);
      Val r = a;
      if (fn == "pow") {
        for (size_t k = 0; k < r.f.size(); ++k)
          r.f[k] = roundToFloatType(e.type.elem, a.f[k] < 0 ? NAN : std::pow(a.f[k], b.f[k]));
      } else {
        Val c = evalAs(*e.args[2], e.type);
        for (size_t k = 0; k < r.f.size(); ++k)
          r.f[k] = roundToFloatType(e.type.elem, std::fma(a.f[k], b.f[k], c.f[k]));
      }
      return r;
    }
    if (fn == "cdiv") {
      Val a = evalAs(*e.args[0], e.type), b = evalAs(*e.args[1], e.type);
      bool uns = isUnsignedIntType(e.type.elem);
      return zipWith(a, b, e.type, nullptr2, [uns](int64_t x, int64_t y, double, double) -> int64_t {
        // Defined where the host would trap: / 0 gives 0, MIN / -1 wraps.
        if (y == 0)
          return 0;
        if (uns) {
          uint64_t ux = uint64_t(x), uy = uint64_t(y);
          return int64_t(ux / uy + (ux % uy != 0));
        }
        if (x == INT64_MIN && y == -1)
          return x;
        return x / y + ((x % y != 0) && ((x < 0) == (y < 0)) ? 1 : 0);
      });
    }
    if (fn == "where") {
      SemaType condTy = e.type;
      condTy.elem = ScalarType::I1;
      Val c = e.args[0]->type.isTile() ? evalAs(*e.args[0], condTy) : eval(*e.args[0]);
      Val a = evalAs(*e.args[1], e.type), b = evalAs(*e.args[2], e.type);
      Val r = a;
      for (size_t k = 0; k < r.size(); ++k) {
        bool take = c.i[c.i.size() == 1 ? 0 : k] != 0;
        if (r.isFloat())
          r.f[k] = take ? a.f[k] : b.f[b.f.size() == 1 ? 0 : k];
        else
          r.i[k] = take ? a.i[k] : b.i[b.i.size() == 1 ? 0 : k];
      }
      return r;
    }
    if (fn == "cast")
      return convert(eval(*e.args[0]), e.type.elem);
    if (fn == "zeros")
      return filled(e.type, 0, 0);
    if (fn == "full")
      return broadcastTo(evalAs(*e.args[1], SemaType::scalar(e.type.elem)), e.type);
    if (fn == "range") {
      Val r = filled(e.type, 0, 0);
      for (size_t k = 0; k < r.i.size(); ++k)
        r.i[k] = int64_t(k);
      return r;
    }
    if (fn == "broadcast")
      return broadcastTo(eval(*e.args[0]), e.type);
    if (fn == "print" || fn == "assert") {
      bool isPrint = fn == "print";
      std::vector<Val> vals;
      const std::vector<int64_t> &shape = e.elementShape;
      bool anyTile = !shape.empty();
      size_t first = isPrint ? 1 : 0, last = isPrint ? e.args.size() : 1;
      for (size_t k = first; k < last; ++k)
        vals.push_back(evalAs(*e.args[k], atElementShape(e, e.args[k]->type)));
      size_t n = vals.empty() ? 1 : vals[0].size();
      std::string where = "pid (" + std::to_string(pid[0]) + ", " + std::to_string(pid[1]) +
                          ", " + std::to_string(pid[2]) + ")";
      for (size_t k = 0; k < n; ++k) {
        std::string idx;
        if (anyTile) {
          size_t rest = k;
          std::vector<size_t> c(shape.size());
          for (size_t d = shape.size(); d-- > 0;) {
            c[d] = rest % size_t(shape[d]);
            rest /= size_t(shape[d]);
          }
          idx = " idx (";
          for (size_t d = 0; d < c.size(); ++d)
            idx += (d ? ", " : "") + std::to_string(c[d]);
          idx += ")";
        }
        if (isPrint) {
          std::string line = where + idx + ": " + e.args[0]->name;
          for (const Val &v : vals) {
            char buf[64];
            if (v.isFloat())
              std::snprintf(buf, sizeof buf, " %f", v.f[k]);
            else if (isUnsignedIntType(v.type.elem))
              std::snprintf(buf, sizeof buf, " %llu", (unsigned long long)v.i[k]);
            else
              std::snprintf(buf, sizeof buf, " %lld", (long long)v.i[k]);
            line += buf;
          }
          std::printf("%s\n", line.c_str());
        } else if (!vals[0].i[k]) {
          std::string at;
          if (srcMgr) {
            auto [line, col] = srcMgr->getLineAndColumn(e.loc);
            at = fileName + ":" + std::to_string(line) + ":" + std::to_string(col) + ": ";
          }
          fail(at + "assertion failed at " + where + idx + ": " + e.args[1]->name);
          break;
        }
      }
      return filled(SemaType::scalar(ScalarType::I32), 0, 0);
    }
    if (fn == "cumsum") {
      // In order; floats accumulate in double and round each output (the
      // GPU sums in f32 in another order).
      Val r = eval(*e.args[0]);
      double accF = 0;
      int64_t accI = 0;
      for (size_t k = 0; k < r.size(); ++k) {
        if (r.isFloat()) {
          accF += r.f[k];
          r.f[k] = roundToFloatType(r.type.elem, accF);
        } else {
          accI = wrapInt(r.type.elem, accI + r.i[k]);
          r.i[k] = accI;
        }
      }
      return r;
    }
    if (fn == "transpose" || fn == "permute") {
      Val x = eval(*e.args[0]);
      Val r = x;
      r.type = e.type;
      const std::vector<int64_t> &from = x.type.shape, &to = e.type.shape;
      std::vector<int64_t> fromStride(from.size(), 1);
      for (size_t d = from.size(); d-- > 1;)
        fromStride[d - 1] = fromStride[d] * from[d];
      for (size_t k = 0; k < r.size(); ++k) {
        size_t rest = k, src = 0;
        for (size_t d = to.size(); d-- > 0;) {
          src += (rest % size_t(to[d])) * size_t(fromStride[size_t(e.permutation[d])]);
          rest /= size_t(to[d]);
        }
        if (r.isFloat())
          r.f[k] = x.f[src];
        else
          r.i[k] = x.i[src];
      }
      return r;
    }
    if (fn == "mma")
      return matmul(eval(*e.args[0]), eval(*e.args[1]), eval(*e.args[2]), e.tf32);
    if (fn == "slice") {
      Val x = eval(*e.args[0]);
      Val r = filled(e.type, 0, 0);
      const std::vector<int64_t> &from = x.type.shape, &to = e.type.shape;
      for (size_t k = 0; k < r.size(); ++k) {
        size_t rest = k, src = 0, stride = 1;
        for (size_t d = to.size(); d-- > 0;) {
          size_t c = rest % size_t(to[d]) + size_t(e.permutation[d]);
          rest /= size_t(to[d]);
          src += c * stride;
          stride *= size_t(from[d]);
        }
        if (r.isFloat())
          r.f[k] = x.f[src];
        else
          r.i[k] = x.i[src];
      }
      return r;
    }
    if (fn == "reshape" || fn == "expand_dims") {
      Val r = eval(*e.args[0]);
      r.type.shape = e.type.shape;
      return r;
    }
    fail("internal: unexpected call to '" + fn + "'");
    return filled(SemaType::scalar(ScalarType::I32), 0, 0);
  }

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
  std::map<std::string, size_t> views;
  std::string failed;
  uint64_t iterations = 0;
};

} // namespace

static bool interpretOnThisStack(std::string_view source, const CompileOptions &options,
                                 const std::string &kernel, const std::vector<HostArg> &args,
                                 std::string &error);

bool tilec::interpretKernel(std::string_view source, const CompileOptions &options,
                            const std::string &kernel, const std::vector<HostArg> &args,
                            std::string &error) {
  // On a stack of known size, like compile(): evaluation recurses as deep as
  // Sema did.
  bool ok = false;
  runOnCompilerStack([&] { ok = interpretOnThisStack(source, options, kernel, args, error); });
  return ok;
}

static bool interpretOnThisStack(std::string_view source, const CompileOptions &options,
                                 const std::string &kernel, const std::vector<HostArg> &args,
                                 std::string &error) {
  llvm::SourceMgr srcMgr;
  srcMgr.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(
                                llvm::StringRef(source.data(), source.size()),
                                options.fileName),
                            llvm::SMLoc());
  DiagEngine diags(srcMgr);
  std::unique_ptr<ModuleDecl> module = parseModule(diags);
  if (!module) {
    error = diags.text();
    return false;
  }
  KernelDecl *decl = nullptr;
  for (auto &k : module->kernels)
    if (k->name == kernel)
      decl = k.get();
  if (!decl) {
    error = "no kernel named '" + kernel + "'";
    return false;
  }
  KernelInstance inst;
  std::set<std::string> used;
  if (!checkKernel(*decl, options.defines, diags, inst, used)) {
    error = diags.text();
    return false;
  }
  const KernelSignature &sig = inst.signature;
  if (args.size() != sig.params.size()) {
    error = "kernel '" + kernel + "' takes " + std::to_string(sig.params.size()) +
            " arguments, got " + std::to_string(args.size());
    return false;
  }
  // The grid, evaluated exactly as the runtime does.
  std::vector<ArgValue> values;
  for (size_t p = 0; p < args.size(); ++p) {
    const HostArg &a = args[p];
    const ParamInfo &info = sig.params[p];
    if (a.isTensor != info.isTensor || (a.isTensor && (a.sizes.size() != info.rank ||
                                                       a.strides.size() != info.rank))) {
      error = "argument " + std::to_string(p + 1) + " ('" + info.name +
              "') does not match the parameter";
      return false;
    }
    if (a.isTensor && !a.data) {
      bool empty = false;
      for (int64_t n : a.sizes)
        empty |= n == 0;
      if (!empty) {
        error = "argument " + std::to_string(p + 1) + " ('" + info.name +
                "') is a tensor with a NULL data pointer";
        return false;
      }
    }
    if (a.isTensor)
      values.emplace_back(TensorArg{0, a.sizes, a.strides});
    else if (isFloatType(info.dtype))
      values.push_back(ArgValue::scalar(info.dtype, a.f));
    else
      values.push_back(ArgValue::scalar(info.dtype, a.i));
  }
  std::array<uint32_t, 3> grid;
  try {
    grid = evaluateGrid(sig, values,
                        {kInterpreterSMs, kInterpreterSMs * kInterpreterProgramsPerSM});
  } catch (const std::exception &e) {
    error = e.what();
    return false;
  }
  uint64_t programs = uint64_t(grid[0]) * grid[1] * grid[2];
  if (programs > kInterpreterMaxPrograms) {
    error = "the grid of kernel '" + kernel + "' is too large for the CPU interpreter: " +
            std::to_string(grid[0]) + " x " + std::to_string(grid[1]) + " x " +
            std::to_string(grid[2]) + " = " + std::to_string(programs) +
            " programs (at most " + std::to_string(kInterpreterMaxPrograms) + ")";
    return false;
  }
  Interp interp(inst, args, grid);
  interp.srcMgr = &srcMgr;
  interp.fileName = options.fileName;
  for (uint32_t z = 0; z < grid[2]; ++z)
    for (uint32_t y = 0; y < grid[1]; ++y)
      for (uint32_t x = 0; x < grid[0]; ++x)
        if (!interp.runProgram({x, y, z}, error))
          return false;
  return true;
}

float tilec::roundToTf32(float x) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  if ((u & 0x7f800000u) != 0x7f800000u) // inf and nan stay
    u = (u + 0x1000u) & 0xffffe000u;
  std::memcpy(&x, &u, 4);
  return x;
}
