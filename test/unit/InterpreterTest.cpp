//===- InterpreterTest.cpp - the CPU reference interpreter ----------------===//

#include "tilec/Interpreter.h"

#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <vector>

using namespace tilec;

namespace {

TEST(InterpreterTest, IntegerSemanticsControlFlowAndEdges) {
  // Integer wrap-around (u8), truncating division, a loop-carried tile, an
  // if on a scalar and a partial last tile that must not be written past.
  const char *src = R"(
kernel k<B: int = 8>(n: i32, x: tensor<i32, 1>, y: tensor<u8, 1>) grid(cdiv(x.shape[0], B)) {
    let i = block_id(0);
    var acc = zeros<i32>([B]);
    for j in 0 .. n { acc = acc + load(x, [i], [B]) / 2; }
    if n > 2 { acc = -acc; }
    store(y, [i], cast<u8>(acc + range(B)));
}
)";
  const int64_t len = 13;
  std::vector<int32_t> x(len);
  for (int i = 0; i < len; ++i)
    x[i] = 7 * i - 20;
  std::vector<uint8_t> y(len + 3, 0xAB);
  std::vector<HostArg> args = {HostArg::scalarInt(3), HostArg::tensor(x.data(), {len}, {1}),
                               HostArg::tensor(y.data(), {len}, {1})};
  std::string error;
  ASSERT_TRUE(interpretKernel(src, CompileOptions(), "k", args, error)) << error;
  for (int i = 0; i < len; ++i) {
    int32_t acc = -(3 * (x[i] / 2)) + (i % 8);
    EXPECT_EQ(y[i], static_cast<uint8_t>(acc)) << i;
  }
  for (int i = len; i < len + 3; ++i)
    EXPECT_EQ(y[i], 0xAB) << "written past the end at " << i;
}

TEST(InterpreterTest, BadCallsAreErrors) {
  std::string error;
  EXPECT_FALSE(interpretKernel("kernel k(x: tensor<f32, 1>) { }", CompileOptions(), "nope",
                               {}, error));
  EXPECT_NE(error.find("no kernel named 'nope'"), std::string::npos);
  EXPECT_FALSE(interpretKernel("kernel k(x: tensor<f32, 1>) { }", CompileOptions(), "k", {},
                               error));
  EXPECT_NE(error.find("takes 1 arguments, got 0"), std::string::npos) << error;
  CompileOptions o;
  o.fileName = "e.tile";
  EXPECT_FALSE(interpretKernel("kernel k( {", o, "k", {}, error));
  EXPECT_NE(error.find("e.tile:1:"), std::string::npos) << error;
}

TEST(InterpreterTest, ScalarAtomicsUpdateOneElement) {
  // Scalar indices, values and mask: a [1] tile atomic per program (they
  // were refused with "needs at least one index tile").
  const char *src = R"(
kernel k(out: tensor<f32, 1>, cnt: tensor<i32, 1>, big: tensor<i64, 1>, s: f32) grid(4) {
    let p = block_id(0);
    atomic_add(out, [0], s);
    let old = atomic_add(cnt, [1], 1);
    atomic_max(cnt, [0], old);
    atomic_cas(big, [p], cast<i64>(0), cast<i64>(p) + 10, p < 2);
}
)";
  std::vector<float> out(2, 0.5f);
  std::vector<int32_t> cnt(2, 0);
  std::vector<int64_t> big(4, 0);
  std::string error;
  ASSERT_TRUE(interpretKernel(src, CompileOptions(), "k",
                              {HostArg::tensor(out.data(), {2}, {1}),
                               HostArg::tensor(cnt.data(), {2}, {1}),
                               HostArg::tensor(big.data(), {4}, {1}), HostArg::scalarFloat(0.25)},
                              error))
      << error;
  EXPECT_EQ(out[0], 1.5f); // 0.5 + 4 * 0.25
  EXPECT_EQ(out[1], 0.5f);
  EXPECT_EQ(cnt[1], 4);    // one add per program
  EXPECT_EQ(cnt[0], 3);    // the largest old value
  EXPECT_EQ(big[0], 10);
  EXPECT_EQ(big[1], 11);
  EXPECT_EQ(big[2], 0);    // masked off
  EXPECT_EQ(big[3], 0);
}

TEST(InterpreterTest, NullDataAndHugeGridsAreErrors) {
  // A tensor with a NULL data pointer once read as zeros (and a store
  // through it would have crashed); an empty one needs no storage.
  const char *src = "kernel k(x: tensor<f32, 1>, y: tensor<f32, 1>) grid(1) {\n"
                    "    store(y, [0], load(x, [0], [4]));\n}\n";
  std::vector<float> y(4, 1.0f);
  std::string error;
  EXPECT_FALSE(interpretKernel(src, CompileOptions(), "k",
                               {HostArg::tensor(nullptr, {4}, {1}),
                                HostArg::tensor(y.data(), {4}, {1})},
                               error));
  EXPECT_NE(error.find("argument 1 ('x') is a tensor with a NULL data pointer"),
            std::string::npos)
      << error;
  EXPECT_TRUE(interpretKernel(src, CompileOptions(), "k",
                              {HostArg::tensor(nullptr, {0}, {1}),
                               HostArg::tensor(y.data(), {4}, {1})},
                              error))
      << error;
  // The header promises an error for a grid that is too large: 2^31-1
  // programs once ran (for hours).
  const char *big = "kernel k(x: tensor<f32, 1>) grid(2147483647) { }";
  std::vector<float> x(4);
  EXPECT_FALSE(interpretKernel(big, CompileOptions(), "k",
                               {HostArg::tensor(x.data(), {4}, {1})}, error));
  EXPECT_NE(error.find("too large for the CPU interpreter"), std::string::npos) << error;
  const char *big2 = "kernel k(x: tensor<f32, 1>) grid(4097, 4096) { }";
  EXPECT_FALSE(interpretKernel(big2, CompileOptions(), "k",
                               {HostArg::tensor(x.data(), {4}, {1})}, error));
  EXPECT_NE(error.find("4097 x 4096 x 1 = 16781312 programs (at most 16777216)"),
            std::string::npos)
      << error;
}

} // namespace

namespace {
TEST(InterpreterTest, BitOperationsAndShifts) {
  const char *src = R"(
kernel b(x: tensor<u32, 1>, y: tensor<i32, 1>, z: tensor<u32, 1>, w: tensor<i32, 1>) grid(1) {
    let a = load(x, [0], [8]);
    let s = load(y, [0], [8]);
    store(z, [0], ((a ^ cast<u32>(0x80000000)) & cast<u32>(0xFFFF0000)) | (~a >> 31) | (a << 40));
    store(w, [0], (s >> 1) | (s >> cast<i32>(a)) + (s << 3));
}
)";
  std::vector<uint32_t> x = {0u, 1u, 0x3F800000u, 0xFFFFFFFFu, 0x12345678u, 7u, 31u, 32u};
  std::vector<int32_t> y = {-8, 5, -1, 1 << 30, -12345, 0, 100, -7};
  std::vector<uint32_t> z(8);
  std::vector<int32_t> w(8);
  std::vector<HostArg> args = {HostArg::tensor(x.data(), {8}, {1}),
                               HostArg::tensor(y.data(), {8}, {1}),
                               HostArg::tensor(z.data(), {8}, {1}),
                               HostArg::tensor(w.data(), {8}, {1})};
  std::string error;
  ASSERT_TRUE(interpretKernel(src, CompileOptions(), "b", args, error)) << error;
  for (int k = 0; k < 8; ++k) {
    // << 40 is past the width: 0. ~a >> 31 is a logical shift (u32).
    uint32_t want = ((x[k] ^ 0x80000000u) & 0xFFFF0000u) | (~x[k] >> 31);
    EXPECT_EQ(z[k], want) << k;
    // Signed >> is arithmetic; amounts >= 32 (or negative) fill with the sign.
    uint32_t amt = x[k];
    int32_t byA = amt < 32 ? (y[k] >> amt) : (y[k] < 0 ? -1 : 0);
    int32_t wantW = (y[k] >> 1) | int32_t(uint32_t(byA) + uint32_t(y[k]) * 8u);
    EXPECT_EQ(w[k], wantW) << k;
  }
}
} // namespace

namespace {
TEST(InterpreterTest, IntegerDivisionNeverTraps) {
  // INT64_MIN / -1 (and cdiv, %) trap on the host; x / 0 too. The
  // interpreter defines them: the quotient wraps, the remainder is 0, and a
  // zero divisor gives 0. cdiv(INT64_MIN, -1) on i64 tiles once hit SIGFPE.
  const char *src = R"(
kernel k(a: tensor<i64, 1>, b: tensor<i64, 1>, q: tensor<i64, 1>, r: tensor<i64, 1>,
         c: tensor<i64, 1>, w: tensor<i32, 1>) {
    let x = load(a, [0], [4]);
    let y = load(b, [0], [4]);
    store(q, [0], x / y);
    store(r, [0], x % y);
    store(c, [0], cdiv(x, y));
    store(w, [0], cdiv(cast<i32>(x / 4294967296), cast<i32>(y)));
}
)";
  const int64_t kMin = INT64_MIN;
  std::vector<int64_t> a = {kMin, kMin, 7, -7}, b = {-1, 0, 2, 2};
  std::vector<int64_t> q(4), r(4), c(4);
  std::vector<int32_t> w(4);
  std::vector<HostArg> args = {HostArg::tensor(a.data(), {4}, {1}), HostArg::tensor(b.data(), {4}, {1}),
                               HostArg::tensor(q.data(), {4}, {1}), HostArg::tensor(r.data(), {4}, {1}),
                               HostArg::tensor(c.data(), {4}, {1}), HostArg::tensor(w.data(), {4}, {1})};
  std::string error;
  ASSERT_TRUE(interpretKernel(src, CompileOptions(), "k", args, error)) << error;
  EXPECT_EQ(q, (std::vector<int64_t>{kMin, 0, 3, -3}));
  EXPECT_EQ(r, (std::vector<int64_t>{0, 0, 1, -1}));
  EXPECT_EQ(c, (std::vector<int64_t>{kMin, 0, 4, -3}));
  // i32: INT32_MIN / -1 wraps the same way.
  EXPECT_EQ(w, (std::vector<int32_t>{INT32_MIN, 0, 0, 0}));
}
} // namespace

namespace {

// Float-to-integer casts saturate as the GPU's cvt.rzi does (docs/
// language.md): toward zero, NaN to 0, out-of-range values to the type's
// minimum or maximum (measured on the H200 for i32 and u8: 1e30 ->
// 2147483647, -1e30 -> -2147483648, NaN -> 0, 3e9 -> 2147483647,
// cast<u8>(-1.0) -> 0; the interpreter used to wrap).
template <typename T> std::vector<T> castAll(const char *type, const std::vector<float> &x) {
  std::string src = std::string("kernel k(x: tensor<f32, 1>, y: tensor<") + type +
                    ", 1>) grid(1) { store(y, [0], cast<" + type + ">(load(x, [0], [16]))); }";
  std::vector<float> in(x);
  std::vector<T> out(x.size(), T(0x5A));
  int64_t n = int64_t(x.size());
  std::vector<HostArg> args = {HostArg::tensor(in.data(), {n}, {1}),
                               HostArg::tensor(out.data(), {n}, {1})};
  std::string error;
  EXPECT_TRUE(interpretKernel(src, CompileOptions(), "k", args, error)) << error;
  return out;
}

TEST(InterpreterTest, FloatToIntCastsSaturate) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> x = {1e30f, -1e30f, nan, 3e9f, inf, -inf, -1.0f, 300.0f, -300.0f, 2.7f, -2.7f};
  auto i32 = castAll<int32_t>("i32", x);
  std::vector<int32_t> wantI32 = {INT32_MAX, INT32_MIN, 0, INT32_MAX, INT32_MAX, INT32_MIN,
                                  -1,        300,       -300, 2,     -2};
  EXPECT_EQ(i32, wantI32);
  auto u8 = castAll<uint8_t>("u8", x);
  std::vector<uint8_t> wantU8 = {255, 0, 0, 255, 255, 0, 0, 255, 0, 2, 0};
  EXPECT_EQ(u8, wantU8);
  auto i8 = castAll<int8_t>("i8", x);
  std::vector<int8_t> wantI8 = {127, -128, 0, 127, 127, -128, -1, 127, -128, 2, -2};
  EXPECT_EQ(i8, wantI8);
  auto u32 = castAll<uint32_t>("u32", x);
  std::vector<uint32_t> wantU32 = {UINT32_MAX, 0, 0, 3000000000u, UINT32_MAX, 0, 0, 300, 0, 2, 0};
  EXPECT_EQ(u32, wantU32);
  auto i64 = castAll<int64_t>("i64", x);
  std::vector<int64_t> wantI64 = {INT64_MAX, INT64_MIN, 0, 3000000000, INT64_MAX, INT64_MIN,
                                  -1, 300, -300, 2, -2};
  EXPECT_EQ(i64, wantI64);
}

} // namespace
