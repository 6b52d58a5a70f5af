//===- InterpreterBuiltins.cpp - the interpreter's builtin calls ----------===//
//
// Part of the CPU interpreter (see InterpreterImpl.h).
//
//===----------------------------------------------------------------------===//

#include "InterpreterImpl.h"

#include "llvm/ADT/StringMap.h"

using namespace tilec;
using namespace tilec::interp;

/// gather / scatter / atomic_*: element-wise at index tiles. Programs run
/// one after another, so the atomics are plain read-modify-writes.
Val Interp::callIrregular(const Expr &e) {
  const std::string &fn = e.name;
  const HostArg &view = views.at(e.args[0]->name).arg;
  ScalarType elem = views.at(e.args[0]->name).elem;
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

Val Interp::call(const Expr &e) {
  if (e.args.size() == 1 && isUnaryMathFunction(e.name))
    return callUnaryMath(e);
  using Kernel = Val (Interp::*)(const Expr &);
  static const llvm::StringMap<Kernel> table = {
#define TILEC_BUILTIN(spelling, Rule, accepts) {spelling, &Interp::call##Rule},
#include "tilec/Frontend/Builtins.def"
  };
  auto it = table.find(e.name);
  if (it == table.end()) {
    fail("internal: unexpected call to '" + e.name + "'");
    return filled(SemaType::scalar(ScalarType::I32), 0, 0);
  }
  return (this->*it->second)(e);
}

/// load, store.
Val Interp::callMemory(const Expr &e) {
  const std::string &fn = e.name;
  if (fn == "load") {
    const HostArg &view = views.at(e.args[0]->name).arg;
    std::vector<int64_t> origin = indices(*e.args[1]);
    double pf = 0;
    int64_t pi = 0;
    if (e.args.size() == 4)
      literalValue(*e.args[3], pf, pi);
    Val r = filled(e.type, pf, isFloatType(e.type.elem) ? 0 : pi);
    ScalarType dt = e.type.elem;
    // One element by element index (no shape): the [1, ..., 1] tile there.
    std::vector<int64_t> shape =
        e.args.size() == 2 ? std::vector<int64_t>(origin.size(), 1) : e.type.shape;
    forTile(view, dt, origin, shape, [&](size_t k, const uint8_t *p) {
      if (!p)
        return;
      if (r.isFloat())
        r.f[k] = loadFloatElement(dt, p);
      else
        r.i[k] = readInt(dt, p);
    });
    return r;
  }
  const HostArg &view = views.at(e.args[0]->name).arg;
  std::vector<int64_t> origin = indices(*e.args[1]);
  Val v = eval(*e.args[2]);
  forTile(view, v.type.elem, origin, v.type.shape, [&](size_t k, uint8_t *p) {
    if (p)
      writeElem(v.type.elem, p, v.isFloat() ? v.f[k] : 0, v.isFloat() ? 0 : v.i[k]);
  });
  return filled(SemaType::scalar(ScalarType::I32), 0, 0);
}

/// narrow, as GPU code does it (MLIRGen's genNarrow): the part starts at
/// start clamped to [0, size] and is at most what is left long.
Interp::ViewRef Interp::narrowView(const Expr &e) {
  ViewRef r = views.at(e.args[0]->name);
  size_t d = size_t(*e.args[1]->constInt);
  SemaType i64 = SemaType::scalar(ScalarType::I64);
  int64_t size = r.arg.sizes[d];
  int64_t start = std::min(std::max<int64_t>(evalAs(*e.args[2], i64).i[0], 0), size);
  int64_t len = std::min(std::max<int64_t>(evalAs(*e.args[3], i64).i[0], 0), size - start);
  r.arg.data = static_cast<uint8_t *>(r.arg.data) +
               start * r.arg.strides[d] * int64_t(scalarTypeSize(r.elem));
  r.arg.sizes[d] = len;
  return r;
}

/// narrow outside a `let` (Sema refuses it).
Val Interp::callNarrow(const Expr &e) {
  fail("internal: narrow(...) outside a let");
  return filled(SemaType::scalar(ScalarType::I32), 0, 0);
}

/// block_id, num_blocks.
Val Interp::callProgramId(const Expr &e) {
  const std::string &fn = e.name;
  size_t d = static_cast<size_t>(*e.args[0]->constInt);
  return filled(e.type, 0, fn == "block_id" ? pid[d] : grid[d]);
}

/// num_sms, resident_programs.
Val Interp::callDeviceSize(const Expr &e) {
  fail("internal: num_sms() and resident_programs() are in grid(...) only");
  return filled(SemaType::scalar(ScalarType::I32), 0, 0);
}

/// arch(): folded by Sema.
Val Interp::callTarget(const Expr &e) {
  return filled(e.type, 0, *e.constInt);
}

/// zeros, full.
Val Interp::callFill(const Expr &e) {
  const std::string &fn = e.name;
  if (fn == "zeros")
    return filled(e.type, 0, 0);
  return broadcastTo(evalAs(*e.args[1], SemaType::scalar(e.type.elem)), e.type);
}

/// range.
Val Interp::callRange(const Expr &e) {
  Val r = filled(e.type, 0, 0);
  for (size_t k = 0; k < r.i.size(); ++k)
    r.i[k] = int64_t(k);
  return r;
}

/// reshape, expand_dims.
Val Interp::callReshape(const Expr &e) {
  Val r = eval(*e.args[0]);
  r.type.shape = e.type.shape;
  return r;
}

/// slice.
Val Interp::callSlice(const Expr &e) {
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

/// broadcast.
Val Interp::callBroadcast(const Expr &e) {
  return broadcastTo(eval(*e.args[0]), e.type);
}

/// transpose, permute.
Val Interp::callPermute(const Expr &e) {
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

/// take.
Val Interp::callTake(const Expr &e) {
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

/// sum, prod, min, max, argmax, argmin.
Val Interp::callReduction(const Expr &e) {
  const std::string &fn = e.name;
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

/// reduce, scan.
Val Interp::callCombine(const Expr &e) {
  const std::string &fn = e.name;
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

/// cumsum.
Val Interp::callCumsum(const Expr &e) {
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

/// mma.
Val Interp::callMma(const Expr &e) {
  return matmul(eval(*e.args[0]), eval(*e.args[1]), eval(*e.args[2]), e.tf32);
}

/// pow, fma.
Val Interp::callPowFma(const Expr &e) {
  const std::string &fn = e.name;
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

/// cdiv.
Val Interp::callCdiv(const Expr &e) {
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

/// where.
Val Interp::callWhere(const Expr &e) {
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

/// cast.
Val Interp::callCast(const Expr &e) {
  return convert(eval(*e.args[0]), e.type.elem);
}

/// print, assert.
Val Interp::callDebug(const Expr &e) {
  const std::string &fn = e.name;
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
      interpreterPrint(line + "\n");
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

/// The elementwise math of UnaryMath.def.
Val Interp::callUnaryMath(const Expr &e) {
  const std::string &fn = e.name;
  Val x = evalAs(*e.args[0], e.type);
  if (x.isFloat()) {
    double (*host)(double) = nullptr;
#define TILEC_UNARY_MATH(name, op, f64, expr)                                                \
  if (fn == #name)                                                                           \
  host = [](double v) -> double { return expr; };
#include "tilec/Frontend/UnaryMath.def"
    for (auto &v : x.f)
      v = roundToFloatType(x.type.elem, host(v));
  } else {
    for (auto &v : x.i)
      v = wrapInt(x.type.elem, v < 0 ? -v : v);
  }
  return x;
}
