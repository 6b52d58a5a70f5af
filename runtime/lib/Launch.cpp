//===- Launch.cpp - Launch arguments, grid evaluation and packing ---------===//
//
// The driver-free half of the runtime: scalar arguments and their conversion
// to a parameter's type (f16/bf16 included), checking arguments against a
// kernel signature, evaluating the `grid(...)` clause, and laying out the
// launch ABI of Signature.h. All of it runs, and is tested, without a GPU.
//
//===----------------------------------------------------------------------===//

#include "tilec/Runtime/Runtime.h"

#include "CudaDriver.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>

namespace tilec {

static const std::string errorPrefix = "tilec runtime: ";

[[noreturn]] static void fail(const std::string &msg) {
  throw ArgumentError(errorPrefix + msg);
}

//===----------------------------------------------------------------------===//
// Small floats
//===----------------------------------------------------------------------===//

/// Rounds `x` (non-negative) to the nearest integer, ties to even,
/// independently of the floating-point environment.
static double roundHalfEven(double x) {
  double floor = std::floor(x), rest = x - floor;
  if (rest > 0.5 || (rest == 0.5 && std::fmod(floor, 2.0) != 0.0))
    floor += 1.0;
  return floor;
}

/// Encodes `v` in a binary format with `expBits` exponent bits and `manBits`
/// stored mantissa bits (IEEE layout, subnormals, infinities, quiet NaN).
/// With `finiteTop` the top exponent holds finite values too (f8e4m3): the
/// caller saturates what lies beyond them.
static uint16_t encodeSmallFloat(double v, int expBits, int manBits, bool finiteTop = false) {
  const uint32_t sign = std::signbit(v) ? 1u << (expBits + manBits) : 0;
  const uint32_t expMask = (1u << expBits) - 1;
  const uint32_t one = 1u << manBits;
  if (std::isnan(v))
    return sign | expMask << manBits | one >> 1;
  double a = std::fabs(v);
  if (std::isinf(a))
    return sign | expMask << manBits;
  const int bias = (1 << (expBits - 1)) - 1;
  int exp;
  std::frexp(a, &exp); // a = f * 2^exp, f in [0.5, 1)
  int e = std::max(exp - 1, 1 - bias); // Unbiased; clamped for subnormals.
  auto m = static_cast<uint32_t>(roundHalfEven(std::ldexp(a, manBits - e)));
  if (m >= 2 * one) { // Rounding carried into the next binade.
    m >>= 1;
    ++e;
  }
  if (m < one) // Zero or subnormal.
    return sign | m;
  uint32_t biased = e + bias;
  if (biased >= expMask + (finiteTop ? 1 : 0))
    return sign | expMask << manBits;
  return sign | biased << manBits | (m - one);
}

/// Decodes `h` of a format with `expBits` exponent and `manBits` mantissa
/// bits, IEEE layout; with `finiteTop` (f8e4m3) the top exponent holds
/// finite values and only the all-ones pattern is NaN.
static double decodeSmallFloat(uint32_t h, int expBits, int manBits, bool finiteTop = false) {
  const int expMask = (1 << expBits) - 1, bias = (1 << (expBits - 1)) - 1;
  int exp = (h >> manBits) & expMask, man = h & ((1 << manBits) - 1);
  double v;
  if (exp == expMask && (!finiteTop || man == (1 << manBits) - 1))
    v = man ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  else if (exp == 0)
    v = std::ldexp(man, 1 - bias - manBits);
  else
    v = std::ldexp(man + (1 << manBits), exp - bias - manBits);
  return (h >> (expBits + manBits)) & 1 ? -v : v;
}

/// The bits of `v` as f8e4m3 (torch's float8_e4m3fn) or f8e5m2, rounded to
/// nearest even and saturated to the largest finite value (448, 57344), as
/// PTX's cvt.rn.satfinite; NaN stays NaN (0x7f for e4m3, which has no
/// infinities, whose top exponent holds finite values up to mantissa 6).
uint8_t floatToFloat8Bits(ScalarType t, double v) {
  bool e4m3 = t == ScalarType::F8E4M3;
  uint8_t sign = std::signbit(v) ? 0x80 : 0;
  if (std::isnan(v))
    return e4m3 ? 0x7f : 0x7e;
  double maxFinite = e4m3 ? 448.0 : 57344.0;
  if (std::fabs(v) >= maxFinite)
    return sign | (e4m3 ? 0x7e : 0x7b);
  // Below the largest finite value the IEEE encoding rounds the same (a
  // value below it rounds at most to it), e4m3's top binade finite.
  return e4m3 ? uint8_t(encodeSmallFloat(v, 4, 3, /*finiteTop=*/true))
              : uint8_t(encodeSmallFloat(v, 5, 2));
}

double float8BitsToDouble(ScalarType t, uint8_t h) {
  return t == ScalarType::F8E4M3 ? decodeSmallFloat(h, 4, 3, /*finiteTop=*/true)
                                 : decodeSmallFloat(h, 5, 2);
}

uint16_t floatToHalfBits(double v) { return encodeSmallFloat(v, 5, 10); }
uint16_t floatToBFloat16Bits(double v) { return encodeSmallFloat(v, 8, 7); }

double halfBitsToDouble(uint16_t h) { return decodeSmallFloat(h, 5, 10); }

double bfloat16BitsToDouble(uint16_t h) {
  uint32_t bits = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

double roundToFloatType(ScalarType t, double v) {
  switch (t) {
  case ScalarType::F16: return halfBitsToDouble(floatToHalfBits(v));
  case ScalarType::BF16: return bfloat16BitsToDouble(floatToBFloat16Bits(v));
  case ScalarType::F32: return static_cast<float>(v);
  case ScalarType::F8E4M3:
  case ScalarType::F8E5M2: return float8BitsToDouble(t, floatToFloat8Bits(t, v));
  default: return v;
  }
}

double loadFloatElement(ScalarType t, const void *p) {
  switch (t) {
  case ScalarType::F16: { uint16_t h; std::memcpy(&h, p, 2); return halfBitsToDouble(h); }
  case ScalarType::BF16: { uint16_t h; std::memcpy(&h, p, 2); return bfloat16BitsToDouble(h); }
  case ScalarType::F32: { float f; std::memcpy(&f, p, 4); return f; }
  case ScalarType::F8E4M3:
  case ScalarType::F8E5M2: return float8BitsToDouble(t, *static_cast<const uint8_t *>(p));
  default: { double d; std::memcpy(&d, p, 8); return d; }
  }
}

void storeFloatElement(ScalarType t, void *p, double v) {
  switch (t) {
  case ScalarType::F16: { uint16_t h = floatToHalfBits(v); std::memcpy(p, &h, 2); return; }
  case ScalarType::BF16: { uint16_t h = floatToBFloat16Bits(v); std::memcpy(p, &h, 2); return; }
  case ScalarType::F32: { float f = static_cast<float>(v); std::memcpy(p, &f, 4); return; }
  case ScalarType::F8E4M3:
  case ScalarType::F8E5M2: *static_cast<uint8_t *>(p) = floatToFloat8Bits(t, v); return;
  default: std::memcpy(p, &v, 8); return;
  }
}

//===----------------------------------------------------------------------===//
// ArgValue
//===----------------------------------------------------------------------===//

TensorArg TensorArg::contiguous(uint64_t ptr, std::vector<int64_t> sizes) {
  std::vector<int64_t> strides(sizes.size());
  int64_t stride = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= sizes[i];
  }
  return {ptr, std::move(sizes), std::move(strides), std::nullopt};
}

ArgValue::ArgValue(TensorArg tensor) : tensorValue(std::move(tensor)) {}
ArgValue::ArgValue(int32_t v) : scalarType(ScalarType::I32) {
  std::memcpy(raw.data(), &v, sizeof(v));
}
ArgValue::ArgValue(int64_t v) : scalarType(ScalarType::I64) {
  std::memcpy(raw.data(), &v, sizeof(v));
}
ArgValue::ArgValue(uint32_t v) : scalarType(ScalarType::U32) {
  std::memcpy(raw.data(), &v, sizeof(v));
}
ArgValue::ArgValue(float v) : scalarType(ScalarType::F32) {
  std::memcpy(raw.data(), &v, sizeof(v));
}
ArgValue::ArgValue(double v) : scalarType(ScalarType::F64) {
  std::memcpy(raw.data(), &v, sizeof(v));
}

/// Inclusive range of an integer type, as int64 (u64's is capped).
static std::pair<int64_t, int64_t> intRange(ScalarType t) {
  switch (t) {
  case ScalarType::I1: return {0, 1};
  case ScalarType::I8: return {INT8_MIN, INT8_MAX};
  case ScalarType::I16: return {INT16_MIN, INT16_MAX};
  case ScalarType::I32: return {INT32_MIN, INT32_MAX};
  case ScalarType::U8: return {0, UINT8_MAX};
  case ScalarType::U16: return {0, UINT16_MAX};
  case ScalarType::U32: return {0, UINT32_MAX};
  case ScalarType::U64: return {0, INT64_MAX};
  default: return {INT64_MIN, INT64_MAX};
  }
}

ArgValue ArgValue::scalar(ScalarType type, int64_t value) {
  if (type == ScalarType::F32)
    return ArgValue(static_cast<float>(value));
  if (isFloatType(type))
    return scalar(type, static_cast<double>(value));
  auto [lo, hi] = intRange(type);
  if (value < lo || value > hi)
    fail(std::to_string(value) + " does not fit in " + scalarTypeName(type));
  ArgValue a;
  a.scalarType = type;
  std::memcpy(a.raw.data(), &value, 8); // Little-endian: low bytes first.
  return a;
}

ArgValue ArgValue::scalar(ScalarType type, double value) {
  ArgValue a;
  a.scalarType = type;
  switch (type) {
  case ScalarType::F64:
    return ArgValue(value);
  case ScalarType::F32:
    return ArgValue(static_cast<float>(value));
  case ScalarType::F16:
  case ScalarType::BF16: {
    uint16_t bits = type == ScalarType::F16 ? floatToHalfBits(value)
                                            : floatToBFloat16Bits(value);
    std::memcpy(a.raw.data(), &bits, 2);
    return a;
  }
  case ScalarType::F8E4M3:
  case ScalarType::F8E5M2:
    a.raw[0] = floatToFloat8Bits(type, value);
    return a;
  default:
    break;
  }
  // The shortest of %.15g and %.17g that reads back as `value`.
  char text[32];
  std::snprintf(text, sizeof(text), "%.15g", value);
  if (std::strtod(text, nullptr) != value)
    std::snprintf(text, sizeof(text), "%.17g", value);
  if (!std::isfinite(value) || value != std::trunc(value))
    fail(std::string(text) + " is not an integer, so cannot be passed as " +
         scalarTypeName(type));
  if (type == ScalarType::U64 && value >= 0x1p63 && value < 0x1p64) {
    auto u = static_cast<uint64_t>(value);
    std::memcpy(a.raw.data(), &u, 8);
    return a;
  }
  if (value < -0x1p63 || value >= 0x1p63)
    fail(std::string(text) + " does not fit in " + scalarTypeName(type));
  return scalar(type, static_cast<int64_t>(value));
}

std::optional<int64_t> ArgValue::intValue() const {
  if (isTensor() || isFloatType(scalarType))
    return std::nullopt;
  const uint8_t *p = raw.data();
  auto read = [p](auto v) {
    std::memcpy(&v, p, sizeof(v));
    return v;
  };
  switch (scalarType) {
  case ScalarType::I8: return read(int8_t());
  case ScalarType::I16: return read(int16_t());
  case ScalarType::I32: return read(int32_t());
  case ScalarType::I64: return read(int64_t());
  case ScalarType::U16: return read(uint16_t());
  case ScalarType::U32: return read(uint32_t());
  case ScalarType::U64: {
    uint64_t u = read(uint64_t());
    if (u > uint64_t(INT64_MAX))
      return std::nullopt;
    return int64_t(u);
  }
  default: // I1, U8.
    return read(uint8_t());
  }
}

double ArgValue::doubleValue() const {
  uint16_t half;
  std::memcpy(&half, raw.data(), 2);
  switch (scalarType) {
  case ScalarType::F16: return halfBitsToDouble(half);
  case ScalarType::BF16: return bfloat16BitsToDouble(half);
  case ScalarType::F8E4M3:
  case ScalarType::F8E5M2: return float8BitsToDouble(scalarType, raw[0]);
  case ScalarType::F32: {
    float f;
    std::memcpy(&f, raw.data(), 4);
    return f;
  }
  case ScalarType::F64: {
    double d;
    std::memcpy(&d, raw.data(), 8);
    return d;
  }
  case ScalarType::U64: {
    uint64_t u;
    std::memcpy(&u, raw.data(), 8);
    return static_cast<double>(u);
  }
  default:
    return static_cast<double>(*intValue());
  }
}

ArgValue ArgValue::convertTo(ScalarType target) const {
  if (isTensor())
    fail("a tensor cannot be converted to a scalar");
  if (target == scalarType)
    return *this;
  if (std::optional<int64_t> i = intValue())
    return scalar(target, *i);
  return scalar(target, doubleValue());
}

//===----------------------------------------------------------------------===//
// Checking, grid evaluation and packing
//===----------------------------------------------------------------------===//

static std::string describeParam(const ParamInfo &p) {
  if (p.isTensor)
    return std::string("a tensor<") + scalarTypeName(p.dtype) + ", " +
           std::to_string(p.rank) + ">";
  return std::string("a scalar ") + scalarTypeName(p.dtype);
}

static std::string argPrefix(const KernelSignature &sig, size_t i) {
  return "kernel '" + sig.name + "': argument " + std::to_string(i + 1) +
         " ('" + sig.params[i].name + "')";
}

/// `args[i]` converted to its parameter's scalar type, or an error that names
/// the kernel and the argument.
static ArgValue convertArg(const KernelSignature &sig,
                           const std::vector<ArgValue> &args, size_t i) {
  try {
    return args[i].convertTo(sig.params[i].dtype);
  } catch (const RuntimeError &e) {
    fail(argPrefix(sig, i) + " of type " + scalarTypeName(sig.params[i].dtype) +
         ": " + std::string(e.what()).substr(errorPrefix.size()));
  }
}

void checkArguments(const KernelSignature &sig,
                    const std::vector<ArgValue> &args) {
  if (args.size() != sig.params.size())
    fail("kernel '" + sig.name + "' takes " +
         std::to_string(sig.params.size()) + " arguments, got " +
         std::to_string(args.size()));
  for (size_t i = 0; i < args.size(); ++i) {
    const ParamInfo &p = sig.params[i];
    const ArgValue &a = args[i];
    if (p.isTensor != a.isTensor())
      fail(argPrefix(sig, i) + " must be " + describeParam(p) + ", got " +
           (a.isTensor() ? "a tensor"
                         : std::string("a scalar ") + scalarTypeName(a.type())));
    if (!a.isTensor()) {
      (void)convertArg(sig, args, i);
      continue;
    }
    const TensorArg &t = a.tensor();
    if (t.sizes.size() != p.rank || t.strides.size() != p.rank)
      fail(argPrefix(sig, i) + " must be " + describeParam(p) +
           ", got a tensor with " + std::to_string(t.sizes.size()) +
           " sizes and " + std::to_string(t.strides.size()) + " strides");
    if (t.dtype && *t.dtype != p.dtype)
      fail(argPrefix(sig, i) + " must be " + describeParam(p) + ", got a tensor of " +
           scalarTypeName(*t.dtype));
  }
}

namespace {
/// Evaluates grid expressions; an error message names the failing
/// subexpression and is prefixed by the caller.
struct GridEvaluator {
  const KernelSignature &sig;
  const std::vector<ArgValue> &args;
  const GridLimits &limits;
  std::string error;

  bool failAt(const GridExpr &e, const std::string &what) {
    error = what + " in '" + e.str(sig.params) + "'";
    return false;
  }

  bool eval(const GridExpr &e, int64_t &out) {
    using Kind = GridExpr::Kind;
    switch (e.kind) {
    case Kind::Const:
      out = e.value;
      return true;
    case Kind::Scalar: {
      if (e.param >= args.size() || sig.params[e.param].isTensor ||
          isFloatType(sig.params[e.param].dtype))
        return failAt(e, "not an integer scalar parameter");
      std::optional<int64_t> v =
          convertArg(sig, args, e.param).intValue();
      if (!v)
        return failAt(e, "value too large");
      out = *v;
      return true;
    }
    case Kind::Shape:
    case Kind::Stride: {
      if (e.param >= args.size() || !sig.params[e.param].isTensor ||
          e.dim >= sig.params[e.param].rank)
        return failAt(e, "no such tensor dimension");
      const TensorArg &t = args[e.param].tensor();
      out = e.kind == Kind::Shape ? t.sizes[e.dim] : t.strides[e.dim];
      return true;
    }
    case Kind::NumSMs:
    case Kind::ResidentPrograms:
      out = e.kind == Kind::NumSMs ? limits.numSMs : limits.residentPrograms;
      if (out <= 0)
        return failAt(e, "no device to ask (launch through a loaded Kernel)");
      return true;
    default:
      break;
    }
    if (e.kind == Kind::Where) {
      if (e.operands.size() != 3)
        return failAt(e, "wrong number of operands");
      int64_t c;
      return eval(e.operands[0], c) && eval(e.operands[c != 0 ? 1 : 2], out);
    }
    bool nary = e.kind == Kind::Min || e.kind == Kind::Max;
    if (nary ? e.operands.empty() : e.operands.size() != 2)
      return failAt(e, "wrong number of operands");
    if (nary) {
      for (size_t i = 0; i < e.operands.size(); ++i) {
        int64_t x;
        if (!eval(e.operands[i], x))
          return false;
        out = i == 0 ? x : e.kind == Kind::Min ? std::min(out, x) : std::max(out, x);
      }
      return true;
    }
    int64_t a, b;
    if (!eval(e.operands[0], a))
      return false;
    // && and || decide on their left operand when they can (so that
    // `n == 0 || m % n == 0` holds for n = 0).
    if ((e.kind == Kind::And && a == 0) || (e.kind == Kind::Or && a != 0)) {
      out = e.kind == Kind::Or;
      return true;
    }
    if (!eval(e.operands[1], b))
      return false;
    bool overflow = false;
    switch (e.kind) {
    case Kind::Lt: out = a < b; return true;
    case Kind::Le: out = a <= b; return true;
    case Kind::Gt: out = a > b; return true;
    case Kind::Ge: out = a >= b; return true;
    case Kind::Eq: out = a == b; return true;
    case Kind::Ne: out = a != b; return true;
    case Kind::And: out = a != 0 && b != 0; return true;
    case Kind::Or: out = a != 0 || b != 0; return true;
    case Kind::Add: overflow = __builtin_add_overflow(a, b, &out); break;
    case Kind::Sub: overflow = __builtin_sub_overflow(a, b, &out); break;
    case Kind::Mul: overflow = __builtin_mul_overflow(a, b, &out); break;
    default: // Div, Rem, CDiv: C's truncating division; cdiv rounds up.
      if (b == 0)
        return failAt(e, "division by zero");
      if (a == INT64_MIN && b == -1)
        overflow = true;
      else if (e.kind == Kind::Rem)
        out = a % b;
      else
        out = a / b + (e.kind == Kind::CDiv && a % b != 0 && (a < 0) == (b < 0));
      break;
    }
    if (overflow)
      return failAt(e, "integer overflow");
    return true;
  }
};
} // namespace

/// ": x.shape[1] = 3000" for the shapes, strides and scalars a failed
/// requirement reads (each once, in order).
static std::string requirementValues(const GridExpr &cond, GridEvaluator &ev) {
  std::vector<const GridExpr *> leaves;
  std::function<void(const GridExpr &)> collect = [&](const GridExpr &e) {
    using Kind = GridExpr::Kind;
    if (e.kind == Kind::Shape || e.kind == Kind::Stride || e.kind == Kind::Scalar) {
      for (const GridExpr *l : leaves)
        if (l->kind == e.kind && l->param == e.param && l->dim == e.dim)
          return;
      leaves.push_back(&e);
    }
    for (const GridExpr &o : e.operands)
      collect(o);
  };
  collect(cond);
  std::string out;
  for (const GridExpr *l : leaves) {
    int64_t v;
    if (ev.eval(*l, v))
      out += (out.empty() ? ": " : ", ") + l->str(ev.sig.params) + " = " + std::to_string(v);
  }
  return out;
}

/// evaluateGrid for arguments that checkArguments accepted.
static std::array<uint32_t, 3> gridOf(const KernelSignature &sig,
                                      const std::vector<ArgValue> &args,
                                      const GridLimits &limits) {
  if (sig.grid.size() > 3)
    fail("kernel '" + sig.name + "': the grid has " +
         std::to_string(sig.grid.size()) + " dimensions; at most 3 allowed");
  for (const Requirement &r : sig.requirements) {
    GridEvaluator evaluator{sig, args, limits, {}};
    int64_t holds;
    if (!evaluator.eval(r.cond, holds))
      fail("kernel '" + sig.name + "': @require(" + r.cond.str(sig.params) +
           "): " + evaluator.error);
    if (!holds)
      fail("kernel '" + sig.name + "': " + r.message + " (@require(" +
           r.cond.str(sig.params) + ") does not hold" + requirementValues(r.cond, evaluator) +
           ")");
  }
  static const int64_t maxDim[3] = {INT32_MAX, 65535, 65535};
  std::array<uint32_t, 3> grid = {1, 1, 1};
  for (size_t i = 0; i < sig.grid.size(); ++i) {
    const GridExpr &e = sig.grid[i];
    // Built only on failure: launches are on the hot path.
    auto where = [&] {
      return "kernel '" + sig.name + "': grid dimension " + "xyz"[i] + " = '" +
             e.str(sig.params) + "'";
    };
    GridEvaluator evaluator{sig, args, limits, {}};
    int64_t v;
    if (!evaluator.eval(e, v))
      fail(where() + ": " + evaluator.error);
    if (v < 0 || v > maxDim[i])
      fail(where() + " is " + std::to_string(v) +
           (v < 0 ? ", which is negative"
                  : ", above the limit of " + std::to_string(maxDim[i])));
    grid[i] = static_cast<uint32_t>(v);
  }
  return grid;
}

std::optional<int64_t> evaluateConstant(const GridExpr &e) {
  static const KernelSignature none;
  static const std::vector<ArgValue> noArgs;
  static const GridLimits noDevice; // num_sms() and the like: not constant
  GridEvaluator evaluator{none, noArgs, noDevice, {}};
  int64_t v;
  if (!evaluator.eval(e, v))
    return std::nullopt;
  return v;
}

std::array<uint32_t, 3> evaluateGrid(const KernelSignature &sig,
                                     const std::vector<ArgValue> &args,
                                     const GridLimits &limits) {
  checkArguments(sig, args);
  return gridOf(sig, args, limits);
}

std::vector<std::pair<std::string, int64_t>>
evaluateHeuristics(const KernelSignature &sig, const std::vector<ArgValue> &args,
                   const GridLimits &limits) {
  checkArguments(sig, args);
  GridEvaluator evaluator{sig, args, limits, {}};
  std::vector<std::pair<std::string, int64_t>> chosen;
  for (const Heuristic &h : sig.heuristics) {
    int64_t v;
    if (!evaluator.eval(h.value, v))
      fail("kernel '" + sig.name + "': @heuristic(" + h.param + " = " +
           h.value.str(sig.params) + "): " + evaluator.error);
    chosen.emplace_back(h.param, v);
  }
  return chosen;
}

std::vector<void *> PackedArgs::kernelParams() {
  std::vector<void *> params;
  auto *base = reinterpret_cast<uint8_t *>(storage.data());
  for (size_t offset : offsets)
    params.push_back(base + offset);
  return params;
}

int tmaL2Promotion(const TensorArg &t, size_t elemBytes) {
  // A box row is 128 bytes. Where rows start on 256-byte boundaries,
  // 256-byte promotion fetches the neighbouring box's half too (a head
  // dimension of 128 reads both); where they do not (a pitch of 6000
  // bytes), it fetches lines no box reads (H200, bf16 matmul 3000^3: 0.1188
  // ms with 256 bytes, 0.1069 with 128; attention D = 128 2.7% slower with
  // 128; docs/performance.md, session 14).
  bool rows256 = t.ptr % 256 == 0;
  for (size_t d = 0; d + 1 < t.strides.size(); ++d)
    rows256 &= (t.strides[d] * int64_t(elemBytes)) % 256 == 0;
  return rows256 ? 3 : 2; // CU_TENSOR_MAP_L2_PROMOTION_L2_256B : _L2_128B
}

/// Describes a row-major 2-D tensor to TMA (boxes of op.boxRows x
/// op.boxCols elements, 128-byte swizzle, zero fill out of bounds). False
/// when TMA cannot address it (innermost stride not 1, a row pitch or base
/// not 16-byte aligned, no driver support); the map is then zero.
static bool encodeTensorMap(ScalarType dtype, const TensorArg &t, const TmaOperand &op,
                            uint64_t *map) {
  std::memset(map, 0, 128);
  size_t elem = scalarTypeSize(dtype);
  size_t rank = t.sizes.size();
  if (rank < 2 || rank > 3 || t.strides[rank - 1] != 1 || t.ptr % 16 != 0)
    return false;
  for (size_t d = 0; d < rank; ++d) {
    // Tile coordinates are signed 32-bit in the kernel.
    if (t.sizes[d] <= 0 || t.sizes[d] > INT32_MAX)
      return false;
    if (d + 1 < rank && (t.strides[d] <= 0 || (t.strides[d] * int64_t(elem)) % 16 != 0 ||
                         t.strides[d] * int64_t(elem) >= (int64_t(1) << 40)))
      return false;
  }
  // CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, _FLOAT16, _FLOAT32, _UINT8 (f8, and
  // the 1-byte integers: a copy moves bytes), _UINT16, _UINT32, _INT32 (the
  // integer tiles a pipeline stages for its threads, e.g. int8 weights).
  int dataType = dtype == ScalarType::BF16                                ? 9
                 : dtype == ScalarType::F16                               ? 6
                 : dtype == ScalarType::F32                               ? 7
                 : isFloat8Type(dtype) || dtype == ScalarType::I8 ||
                         dtype == ScalarType::U8                          ? 0
                 : dtype == ScalarType::I16 || dtype == ScalarType::U16   ? 1
                 : dtype == ScalarType::U32                               ? 2
                 : dtype == ScalarType::I32                               ? 3
                                                                          : -1;
  if (dataType < 0)
    return false;
  std::string error;
  const cuda::Driver *d = cuda::tryLoadDriver(&error);
  if (!d || !d->cuTensorMapEncodeTiled)
    return false;
  // Innermost first; a batched (3-D) tensor takes one matrix per box.
  unsigned long long dims[3], strides[2];
  for (size_t d = 0; d < rank; ++d)
    dims[d] = static_cast<unsigned long long>(t.sizes[rank - 1 - d]);
  for (size_t d = 0; d + 1 < rank; ++d)
    strides[d] = static_cast<unsigned long long>(t.strides[rank - 2 - d]) * elem;
  unsigned box[3] = {op.boxCols, op.boxRows, 1};
  unsigned elementStrides[3] = {1, 1, 1};
  void *base = reinterpret_cast<void *>(static_cast<uintptr_t>(t.ptr));
  // interleave none, swizzle 128B (3), zero fill (0).
  cuda::CUresult r = d->cuTensorMapEncodeTiled(map, dataType, unsigned(rank), base, dims,
                                               strides, box, elementStrides, 0, 3,
                                               tmaL2Promotion(t, elem), 0);
  if (r != cuda::CUDA_SUCCESS) {
    std::memset(map, 0, 128);
    return false;
  }
  return true;
}

/// Lays out the launch ABI of `args` (already checked): each value aligned
/// to its own size. `put(offset, src, n)` receives every value.
template <typename Put>
static size_t layoutArguments(const KernelSignature &sig,
                              const std::vector<ArgValue> &args, Put put) {
  size_t size = 0;
  auto add = [&](const void *src, size_t n) {
    size_t offset = (size + n - 1) / n * n;
    put(offset, src, n);
    size = offset + n;
  };
  for (size_t i = 0; i < args.size(); ++i) {
    if (!args[i].isTensor()) {
      ArgValue v = convertArg(sig, args, i);
      add(v.bytes(), scalarTypeSize(v.type()));
      continue;
    }
    const TensorArg &t = args[i].tensor();
    add(&t.ptr, 8);
    for (int64_t size : t.sizes)
      add(&size, 8);
    for (int64_t stride : t.strides)
      add(&stride, 8);
  }
  for (const TmaOperand &op : sig.tma) {
    alignas(64) uint64_t map[16];
    int32_t valid = encodeTensorMap(sig.params[op.param].dtype, args[op.param].tensor(), op,
                                    map)
                        ? 1
                        : 0;
    add(map, 128);
    add(&valid, 4);
  }
  return size;
}

PackedArgs packArguments(const KernelSignature &sig,
                         const std::vector<ArgValue> &args) {
  checkArguments(sig, args);
  std::vector<uint8_t> bytes;
  PackedArgs packed;
  packed.size = layoutArguments(sig, args, [&](size_t offset, const void *src, size_t n) {
    bytes.resize(offset + n);
    std::memcpy(bytes.data() + offset, src, n);
    packed.offsets.push_back(offset);
  });
  packed.storage.resize((bytes.size() + 7) / 8);
  if (!bytes.empty())
    std::memcpy(packed.storage.data(), bytes.data(), bytes.size());
  return packed;
}

void prepareLaunch(const KernelSignature &sig, const std::vector<ArgValue> &args,
                   LaunchConfig &config, const GridLimits &limits) {
  checkArguments(sig, args);
  config.grid = gridOf(sig, args, limits);
  // The hot path: no heap allocation for up to kMaxParams parameters.
  size_t count = 0;
  bool overflow = false;
  layoutArguments(sig, args, [&](size_t offset, const void *src, size_t n) {
    if (count == LaunchConfig::kMaxParams ||
        offset + n > sizeof(config.storage)) {
      overflow = true;
      return;
    }
    auto *base = reinterpret_cast<uint8_t *>(config.storage);
    std::memcpy(base + offset, src, n);
    config.params[count++] = base + offset;
  });
  if (overflow)
    fail("kernel '" + sig.name + "' has too many parameters to launch (at most " +
         std::to_string(LaunchConfig::kMaxParams) + " launch-ABI values)");
  config.numParams = count;
}

} // namespace tilec
