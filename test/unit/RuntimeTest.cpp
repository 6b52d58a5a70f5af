//===- RuntimeTest.cpp - Unit tests of the tilec runtime ------------------===//
//
// Tests the driver-free parts of the runtime everywhere (scalar type helpers,
// grid expressions, argument checking and packing, f16/bf16 conversion, the
// error for a missing driver), and the driver-backed parts on machines with a
// GPU, where hand-written PTX kernels check launches end to end. GPU tests
// skip themselves when no driver or device is present.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestUtil.h"
#include "tilec/Runtime/Runtime.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

using namespace tilec;
using namespace tilec::runtime_test;

namespace {

//===----------------------------------------------------------------------===//
// Signature helpers
//===----------------------------------------------------------------------===//

const ScalarType allTypes[] = {
    ScalarType::I1,  ScalarType::I8,  ScalarType::I16, ScalarType::I32,
    ScalarType::I64, ScalarType::U8,  ScalarType::U16, ScalarType::U32,
    ScalarType::U64, ScalarType::F16, ScalarType::BF16, ScalarType::F32,
    ScalarType::F64};

TEST(SignatureTest, ScalarTypeSizes) {
  const size_t sizes[] = {1, 1, 2, 4, 8, 1, 2, 4, 8, 2, 2, 4, 8};
  for (size_t i = 0; i < std::size(allTypes); ++i)
    EXPECT_EQ(scalarTypeSize(allTypes[i]), sizes[i])
        << scalarTypeName(allTypes[i]);
}

TEST(SignatureTest, NamesParseRoundTrip) {
  const char *names[] = {"i1",  "i8",  "i16", "i32",  "i64", "u8", "u16",
                         "u32", "u64", "f16", "bf16", "f32", "f64"};
  for (size_t i = 0; i < std::size(allTypes); ++i) {
    EXPECT_STREQ(scalarTypeName(allTypes[i]), names[i]);
    EXPECT_EQ(parseScalarType(names[i]), allTypes[i]);
  }
  EXPECT_EQ(parseScalarType("f128"), std::nullopt);
  EXPECT_EQ(parseScalarType("F32"), std::nullopt);
  EXPECT_EQ(parseScalarType(""), std::nullopt);
  EXPECT_EQ(parseScalarType("f32 "), std::nullopt);
}

TEST(SignatureTest, TypeClasses) {
  EXPECT_TRUE(isFloatType(ScalarType::BF16));
  EXPECT_TRUE(isFloatType(ScalarType::F64));
  EXPECT_FALSE(isFloatType(ScalarType::I32));
  EXPECT_TRUE(isSignedIntType(ScalarType::I8));
  EXPECT_FALSE(isSignedIntType(ScalarType::U8));
  EXPECT_FALSE(isSignedIntType(ScalarType::I1));
  EXPECT_TRUE(isUnsignedIntType(ScalarType::U64));
  EXPECT_FALSE(isUnsignedIntType(ScalarType::F16));
}

TEST(SignatureTest, GridExprStr) {
  std::vector<ParamInfo> params = {tensorParam("x", ScalarType::F32, 2),
                                   scalarParam("a", ScalarType::I32),
                                   scalarParam("b", ScalarType::I32)};
  GridExpr a = scalarRef(1), b = scalarRef(2), c = GridExpr::constant(3);
  EXPECT_EQ(op(K::CDiv, {shape(0, 0), GridExpr::constant(1024)}).str(params),
            "cdiv(x.shape[0], 1024)");
  EXPECT_EQ(leaf(K::Stride, 0, 1).str(params), "x.stride[1]");
  EXPECT_EQ(op(K::Add, {a, b}).str(params), "a + b");
  EXPECT_EQ(op(K::Mul, {op(K::Add, {a, b}), c}).str(params), "(a + b) * 3");
  EXPECT_EQ(op(K::Add, {op(K::Mul, {a, b}), c}).str(params), "a * b + 3");
  EXPECT_EQ(op(K::Sub, {a, op(K::Sub, {b, c})}).str(params), "a - (b - 3)");
  EXPECT_EQ(op(K::Sub, {op(K::Sub, {a, b}), c}).str(params), "a - b - 3");
  EXPECT_EQ(op(K::Rem, {a, op(K::Div, {b, c})}).str(params), "a % (b / 3)");
  EXPECT_EQ(op(K::Max, {a, b, GridExpr::constant(-1)}).str(params),
            "max(a, b, -1)");
  EXPECT_EQ(op(K::Min, {op(K::Add, {a, b}), c}).str(params), "min(a + b, 3)");
  EXPECT_EQ(scalarRef(7).str(params), "<param 7>");
  EXPECT_EQ(op(K::Min, {op(K::CDiv, {shape(0, 0), c}), leaf(K::ResidentPrograms, 0)})
                .str(params),
            "min(cdiv(x.shape[0], 3), resident_programs())");
  EXPECT_EQ(op(K::Mul, {leaf(K::NumSMs, 0), c}).str(params), "num_sms() * 3");
}

//===----------------------------------------------------------------------===//
// Grid evaluation
//===----------------------------------------------------------------------===//

TEST(GridTest, Saxpy) {
  KernelSignature sig = saxpySignature();
  EXPECT_EQ(evaluateGrid(sig, saxpyArgs(1000)),
            (std::array<uint32_t, 3>{1, 1, 1}));
  EXPECT_EQ(evaluateGrid(sig, saxpyArgs(5000)),
            (std::array<uint32_t, 3>{5, 1, 1}));
  EXPECT_EQ(evaluateGrid(sig, saxpyArgs(4096)),
            (std::array<uint32_t, 3>{4, 1, 1}));
  // An empty tensor launches nothing, and that is not an error.
  EXPECT_EQ(evaluateGrid(sig, saxpyArgs(0)),
            (std::array<uint32_t, 3>{0, 1, 1}));
}

// A tensor argument that says its element type is checked against the
// parameter's before anything is launched (issue 17, item 6: an f16 buffer
// passed for a tensor<f32, 1> used to be read as f32); one that does not
// say is not checked.
TEST(GridTest, TensorDtypeIsChecked) {
  KernelSignature sig = saxpySignature();
  std::vector<ArgValue> ok = {2.0f, TensorArg::contiguous(0x1000, {64}, ScalarType::F32),
                              TensorArg::contiguous(0x2000, {64})};
  EXPECT_EQ(evaluateGrid(sig, ok), (std::array<uint32_t, 3>{1, 1, 1}));
  std::vector<ArgValue> bad = {2.0f, TensorArg::contiguous(0x1000, {64}),
                               TensorArg::contiguous(0x2000, {64}, ScalarType::F16)};
  std::string e = errorOf([&] { evaluateGrid(sig, bad); });
  EXPECT_NE(e.find("'y'"), std::string::npos) << e;
  EXPECT_NE(e.find("got a tensor of f16"), std::string::npos) << e;
  EXPECT_NE(errorOf([&] { packArguments(sig, bad); }).find("got a tensor of f16"),
            std::string::npos);
}

TEST(GridTest, TwoDimensionsAndScalars) {
  KernelSignature sig;
  sig.name = "matmul";
  sig.params = {tensorParam("C", ScalarType::F32, 2),
                scalarParam("split", ScalarType::I32)};
  sig.grid = {op(K::CDiv, {shape(0, 0), GridExpr::constant(128)}),
              op(K::CDiv, {shape(0, 1), GridExpr::constant(64)}),
              op(K::Max, {scalarRef(1), GridExpr::constant(1)})};
  std::vector<ArgValue> args = {TensorArg::contiguous(0, {300, 64}),
                                int64_t(4)}; // Converted to i32.
  EXPECT_EQ(evaluateGrid(sig, args), (std::array<uint32_t, 3>{3, 1, 4}));
  sig.grid.pop_back(); // Missing dimensions are 1.
  EXPECT_EQ(evaluateGrid(sig, args), (std::array<uint32_t, 3>{3, 1, 1}));
  sig.grid.clear();
  EXPECT_EQ(evaluateGrid(sig, args), (std::array<uint32_t, 3>{1, 1, 1}));
  // Strides, arithmetic and C-style division.
  sig.grid = {op(K::Add, {op(K::Mul, {leaf(K::Stride, 0, 0),
                                      GridExpr::constant(2)}),
                          op(K::Rem, {GridExpr::constant(7), scalarRef(1)})}),
              op(K::Sub, {op(K::Div, {GridExpr::constant(-7),
                                      GridExpr::constant(2)}),
                          GridExpr::constant(-4)})};
  EXPECT_EQ(evaluateGrid(sig, args), (std::array<uint32_t, 3>{131, 1, 1}));
}

TEST(GridTest, DeviceLimits) {
  // A persistent grid: one program per resident block, fewer for small n.
  KernelSignature sig = saxpySignature();
  sig.grid = {op(K::Min, {op(K::CDiv, {shape(1, 0), GridExpr::constant(1024)}),
                          leaf(K::ResidentPrograms, 0)}),
              leaf(K::NumSMs, 0)};
  GridLimits h200{132, 660};
  EXPECT_EQ(evaluateGrid(sig, saxpyArgs(1 << 28), h200),
            (std::array<uint32_t, 3>{660, 132, 1}));
  EXPECT_EQ(evaluateGrid(sig, saxpyArgs(5000), h200),
            (std::array<uint32_t, 3>{5, 132, 1}));
  LaunchConfig config;
  prepareLaunch(sig, saxpyArgs(1 << 28), config, h200);
  EXPECT_EQ(config.grid, (std::array<uint32_t, 3>{660, 132, 1}));
  // Without a device the values are unknown: a clear error, not a guess.
  EXPECT_EQ(errorOf([&] { evaluateGrid(sig, saxpyArgs(5000)); }),
            "tilec runtime: kernel 'saxpy': grid dimension x = "
            "'min(cdiv(x.shape[0], 1024), resident_programs())': no device to "
            "ask (launch through a loaded Kernel) in 'resident_programs()'");
}

TEST(GridTest, DivisionByZero) {
  KernelSignature sig = saxpySignature();
  sig.params[0] = scalarParam("n", ScalarType::I32);
  sig.grid = {op(K::CDiv, {shape(1, 0), scalarRef(0)})};
  std::vector<ArgValue> args = {0, TensorArg::contiguous(0, {10}),
                                TensorArg::contiguous(0, {10})};
  EXPECT_EQ(errorOf([&] { evaluateGrid(sig, args); }),
            "tilec runtime: kernel 'saxpy': grid dimension x = "
            "'cdiv(x.shape[0], n)': division by zero in "
            "'cdiv(x.shape[0], n)'");
  sig.grid = {op(K::Add, {GridExpr::constant(1),
                          op(K::Rem, {shape(1, 0), scalarRef(0)})})};
  EXPECT_EQ(errorOf([&] { evaluateGrid(sig, args); }),
            "tilec runtime: kernel 'saxpy': grid dimension x = "
            "'1 + x.shape[0] % n': division by zero in 'x.shape[0] % n'");
}

TEST(GridTest, BadSizes) {
  KernelSignature sig = saxpySignature();
  sig.grid = {GridExpr::constant(1),
              op(K::Sub, {GridExpr::constant(1), shape(1, 0)})};
  EXPECT_EQ(errorOf([&] { evaluateGrid(sig, saxpyArgs(3)); }),
            "tilec runtime: kernel 'saxpy': grid dimension y = "
            "'1 - x.shape[0]' is -2, which is negative");
  sig.grid = {GridExpr::constant(1), shape(1, 0)};
  EXPECT_EQ(errorOf([&] { evaluateGrid(sig, saxpyArgs(70000)); }),
            "tilec runtime: kernel 'saxpy': grid dimension y = "
            "'x.shape[0]' is 70000, above the limit of 65535");
  sig.grid = {op(K::Mul, {shape(1, 0), GridExpr::constant(INT64_MAX)})};
  EXPECT_NE(errorOf([&] { evaluateGrid(sig, saxpyArgs(3)); })
                .find("integer overflow in 'x.shape[0] * 9223372036854775807'"),
            std::string::npos);
  sig.grid = {scalarRef(0)}; // `a` is an f32.
  EXPECT_NE(errorOf([&] { evaluateGrid(sig, saxpyArgs(3)); })
                .find("not an integer scalar parameter in 'a'"),
            std::string::npos);
  sig.grid = {shape(1, 1)}; // x has rank 1.
  EXPECT_NE(errorOf([&] { evaluateGrid(sig, saxpyArgs(3)); })
                .find("no such tensor dimension in 'x.shape[1]'"),
            std::string::npos);
}

//===----------------------------------------------------------------------===//
// Argument checking and packing
//===----------------------------------------------------------------------===//

TEST(PackTest, SaxpyLayout) {
  PackedArgs p = packArguments(saxpySignature(), saxpyArgs(1000));
  EXPECT_EQ(p.size, 56u);
  EXPECT_EQ(p.offsets, (std::vector<size_t>{0, 8, 16, 24, 32, 40, 48}));
  EXPECT_EQ(readAt<float>(p, 0), 2.0f);
  EXPECT_EQ(readAt<uint32_t>(p, 4), 0u); // Padding is zero.
  EXPECT_EQ(readAt<uint64_t>(p, 8), 0x1000u);
  EXPECT_EQ(readAt<int64_t>(p, 16), 1000);
  EXPECT_EQ(readAt<int64_t>(p, 24), 1);
  EXPECT_EQ(readAt<uint64_t>(p, 32), 0x2000u);
  EXPECT_EQ(readAt<int64_t>(p, 40), 1000);
  EXPECT_EQ(readAt<int64_t>(p, 48), 1);
  std::vector<void *> params = p.kernelParams();
  ASSERT_EQ(params.size(), 7u);
  for (size_t i = 0; i < params.size(); ++i)
    EXPECT_EQ(params[i], p.bytes() + p.offsets[i]);
}

TEST(PackTest, MixedScalarsAreAlignedAndConverted) {
  KernelSignature sig;
  sig.name = "mixed";
  sig.params = mixedScalarParams();
  sig.params.insert(sig.params.end(), {scalarParam("flag", ScalarType::U8),
                                       tensorParam("t", ScalarType::BF16, 2),
                                       scalarParam("s", ScalarType::BF16)});
  TensorArg t{0xdeadbeef000, {3, 5}, {10, 2}};
  std::vector<ArgValue> args = {-3, 1.5f, 1.0, int64_t(77), 1u, t, 1};
  PackedArgs p = packArguments(sig, args);
  EXPECT_EQ(p.offsets,
            (std::vector<size_t>{0, 8, 16, 20, 24, 32, 40, 48, 56, 64, 72}));
  EXPECT_EQ(p.size, 74u);
  EXPECT_EQ(p.storage.size(), 10u);
  const uint8_t expected[] = {
      0xfd, 0, 0, 0, 0, 0, 0, 0,                 // a: i8 -3
      0, 0, 0, 0, 0, 0, 0xf8, 0x3f,              // b: f64 1.5
      0x00, 0x3c, 0, 0, 77, 0, 0, 0,             // c: f16 1.0, n: i32 77
      1, 0, 0, 0, 0, 0, 0, 0,                    // flag: u8 1
      0x00, 0xf0, 0xee, 0xdb, 0xea, 0x0d, 0, 0,  // t.ptr
      3, 0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0,   // t.sizes
      10, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0,  // t.strides
      0x80, 0x3f};                                      // s: bf16 1.0
  ASSERT_EQ(sizeof(expected), p.size);
  for (size_t i = 0; i < p.size; ++i)
    EXPECT_EQ(p.bytes()[i], expected[i]) << "byte " << i;
}

TEST(PackTest, TmaL2PromotionFollowsRowAlignment) {
  // bf16 rows of 4096 elements (8192 bytes) on a 256-byte aligned base:
  // 256-byte promotion; 3000 (6000 bytes) or 3008 (6016 bytes): 128.
  EXPECT_EQ(tmaL2Promotion(TensorArg{0x10000, {64, 4096}, {4096, 1}}, 2), 3);
  EXPECT_EQ(tmaL2Promotion(TensorArg{0x10000, {64, 3000}, {3000, 1}}, 2), 2);
  EXPECT_EQ(tmaL2Promotion(TensorArg{0x10000, {64, 3008}, {3008, 1}}, 2), 2);
  // A base 16 but not 256 bytes aligned, and a batch pitch that is not.
  EXPECT_EQ(tmaL2Promotion(TensorArg{0x10010, {64, 4096}, {4096, 1}}, 2), 2);
  EXPECT_EQ(tmaL2Promotion(TensorArg{0x10000, {2, 64, 128}, {8200, 128, 1}}, 2), 2);
  EXPECT_EQ(tmaL2Promotion(TensorArg{0x10000, {2, 64, 128}, {8192, 128, 1}}, 2), 3);
}

TEST(PackTest, ArgumentKindErrors) {
  KernelSignature sig = saxpySignature();
  std::vector<ArgValue> args = saxpyArgs(10);
  args[1] = 3.0f;
  EXPECT_EQ(errorOf([&] { packArguments(sig, args); }),
            "tilec runtime: kernel 'saxpy': argument 2 ('x') must be a "
            "tensor<f32, 1>, got a scalar f32");
  args = saxpyArgs(10);
  args[0] = TensorArg::contiguous(0, {4});
  EXPECT_EQ(errorOf([&] { packArguments(sig, args); }),
            "tilec runtime: kernel 'saxpy': argument 1 ('a') must be a "
            "scalar f32, got a tensor");
  args = saxpyArgs(10);
  args[2] = TensorArg::contiguous(0, {4, 4});
  EXPECT_EQ(errorOf([&] { evaluateGrid(sig, args); }),
            "tilec runtime: kernel 'saxpy': argument 3 ('y') must be a "
            "tensor<f32, 1>, got a tensor with 2 sizes and 2 strides");
  args.pop_back();
  EXPECT_EQ(errorOf([&] { packArguments(sig, args); }),
            "tilec runtime: kernel 'saxpy' takes 3 arguments, got 2");
}

TEST(PackTest, ScalarConversionErrors) {
  KernelSignature sig;
  sig.name = "k";
  sig.params = {scalarParam("small", ScalarType::U8),
                scalarParam("count", ScalarType::I32)};
  EXPECT_EQ(errorOf([&] { packArguments(sig, {300, 1}); }),
            "tilec runtime: kernel 'k': argument 1 ('small') of type u8: 300 "
            "does not fit in u8");
  EXPECT_EQ(errorOf([&] { packArguments(sig, {1, 2.5}); }),
            "tilec runtime: kernel 'k': argument 2 ('count') of type i32: 2.5 "
            "is not an integer, so cannot be passed as i32");
  PackedArgs p = packArguments(sig, {uint32_t(255), 8.0});
  EXPECT_EQ(p.bytes()[0], 255);
  EXPECT_EQ(readAt<int32_t>(p, 4), 8);
}

//===----------------------------------------------------------------------===//
// Scalars and small floats
//===----------------------------------------------------------------------===//

TEST(ScalarTest, HalfAndBFloat16) {
  EXPECT_EQ(floatToHalfBits(1.0), 0x3C00);
  EXPECT_EQ(floatToHalfBits(-2.0), 0xC000);
  EXPECT_EQ(floatToHalfBits(0.0), 0x0000);
  EXPECT_EQ(floatToHalfBits(-0.0), 0x8000);
  EXPECT_EQ(floatToHalfBits(65504.0), 0x7BFF);
  EXPECT_EQ(floatToHalfBits(65519.0), 0x7BFF);  // Below the halfway point.
  EXPECT_EQ(floatToHalfBits(65520.0), 0x7C00);  // Halfway rounds to even: inf.
  EXPECT_EQ(floatToHalfBits(1e10), 0x7C00);
  EXPECT_EQ(floatToHalfBits(-INFINITY), 0xFC00);
  EXPECT_EQ(floatToHalfBits(NAN) & 0x7E00, 0x7E00);
  EXPECT_EQ(floatToHalfBits(1.0 + 0x1p-11), 0x3C00);     // Tie to even (down).
  EXPECT_EQ(floatToHalfBits(1.0 + 3 * 0x1p-11), 0x3C02); // Tie to even (up).
  EXPECT_EQ(floatToHalfBits(1.0 + 0x1p-11 + 0x1p-30), 0x3C01);
  EXPECT_EQ(floatToHalfBits(0x1p-24), 0x0001);  // Smallest subnormal.
  EXPECT_EQ(floatToHalfBits(0x1p-25), 0x0000);  // Tie to even: zero.
  EXPECT_EQ(floatToHalfBits(0x1.8p-25), 0x0001);
  EXPECT_EQ(floatToHalfBits(0x1p-14), 0x0400);  // Smallest normal.
  EXPECT_EQ(floatToHalfBits(0x1p-14 - 0x1p-26), 0x0400); // Rounds up to it.
  EXPECT_EQ(floatToHalfBits(0.1), 0x2E66);
  // Every half reads back to its bits (NaNs stay NaN).
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    double v = halfBitsToDouble(uint16_t(bits));
    if (std::isnan(v))
      EXPECT_EQ(bits & 0x7C00, 0x7C00u);
    else
      EXPECT_EQ(floatToHalfBits(v), bits) << v;
  }

  EXPECT_EQ(floatToBFloat16Bits(1.0), 0x3F80);
  EXPECT_EQ(floatToBFloat16Bits(-2.0), 0xC000);
  EXPECT_EQ(floatToBFloat16Bits(3.14159265), 0x4049);
  EXPECT_EQ(floatToBFloat16Bits(1.0 + 0x1p-8), 0x3F80);     // Tie, down.
  EXPECT_EQ(floatToBFloat16Bits(1.0 + 3 * 0x1p-8), 0x3F82); // Tie, up.
  EXPECT_EQ(floatToBFloat16Bits(65504.0), 0x4780);
  EXPECT_EQ(floatToBFloat16Bits(3.4e38), 0x7F80);  // Overflows to inf.
  EXPECT_EQ(floatToBFloat16Bits(0x1p-133), 0x0001); // Smallest subnormal.
}

TEST(ScalarTest, Float8) {
  const ScalarType e4m3 = ScalarType::F8E4M3, e5m2 = ScalarType::F8E5M2;
  EXPECT_EQ(floatToFloat8Bits(e4m3, 1.0), 0x38);
  EXPECT_EQ(floatToFloat8Bits(e4m3, -2.0), 0xC0);
  EXPECT_EQ(floatToFloat8Bits(e4m3, 448.0), 0x7E);   // Largest finite.
  EXPECT_EQ(floatToFloat8Bits(e4m3, 1e6), 0x7E);     // Saturates (satfinite).
  EXPECT_EQ(floatToFloat8Bits(e4m3, -INFINITY), 0xFE);
  EXPECT_EQ(floatToFloat8Bits(e4m3, NAN), 0x7F);
  EXPECT_EQ(floatToFloat8Bits(e4m3, 0x1p-9), 0x01);  // Smallest subnormal.
  EXPECT_EQ(floatToFloat8Bits(e4m3, 0x1p-10), 0x00); // Tie to even: zero.
  EXPECT_EQ(floatToFloat8Bits(e4m3, 0x1p-6), 0x08);  // Smallest normal.
  EXPECT_EQ(floatToFloat8Bits(e4m3, 1.0625), 0x38);  // Tie, down.
  EXPECT_EQ(floatToFloat8Bits(e4m3, 1.1875), 0x3A);  // Tie, up.
  EXPECT_EQ(floatToFloat8Bits(e5m2, 1.0), 0x3C);
  EXPECT_EQ(floatToFloat8Bits(e5m2, 57344.0), 0x7B);
  EXPECT_EQ(floatToFloat8Bits(e5m2, INFINITY), 0x7B);
  EXPECT_EQ(floatToFloat8Bits(e5m2, 0x1p-16), 0x01);
  EXPECT_TRUE(std::isnan(float8BitsToDouble(e4m3, 0xFF)));
  EXPECT_EQ(float8BitsToDouble(e4m3, 0x7E), 448.0);
  EXPECT_TRUE(std::isinf(float8BitsToDouble(e5m2, 0x7C)));
  for (ScalarType t : {e4m3, e5m2}) {
    // Every finite value reads back to its bits; every point halfway
    // between neighbours rounds to the one with an even mantissa.
    for (int bits = 0; bits < 0x80; ++bits) {
      double v = float8BitsToDouble(t, uint8_t(bits));
      if (!std::isfinite(v))
        continue;
      EXPECT_EQ(floatToFloat8Bits(t, v), bits) << scalarTypeName(t) << " " << v;
      EXPECT_EQ(floatToFloat8Bits(t, -v), bits | 0x80);
      double next = float8BitsToDouble(t, uint8_t(bits + 1));
      if (bits + 1 < 0x80 && std::isfinite(next))
        EXPECT_EQ(floatToFloat8Bits(t, (v + next) / 2), (bits % 2 == 0) ? bits : bits + 1)
            << scalarTypeName(t) << " between " << v << " and " << next;
    }
    EXPECT_EQ(scalarTypeSize(t), 1u);
    EXPECT_TRUE(isFloatType(t) && isFloat8Type(t));
    EXPECT_EQ(parseScalarType(scalarTypeName(t)), t);
  }
}

TEST(ScalarTest, ArgValues) {
  ArgValue h = ArgValue::scalar(ScalarType::F16, 1.0);
  EXPECT_EQ(h.type(), ScalarType::F16);
  EXPECT_EQ(h.bytes()[0], 0x00);
  EXPECT_EQ(h.bytes()[1], 0x3C);
  EXPECT_EQ(h.doubleValue(), 1.0);
  EXPECT_EQ(h.intValue(), std::nullopt);
  EXPECT_EQ(ArgValue::scalar(ScalarType::BF16, 2).doubleValue(), 2.0);
  EXPECT_EQ(ArgValue::scalar(ScalarType::F16, 0.1).doubleValue(),
            0.0999755859375);
  EXPECT_EQ(ArgValue::scalar(ScalarType::I16, -2).intValue(), -2);
  EXPECT_EQ(ArgValue::scalar(ScalarType::I16, -2).bytes()[1], 0xFF);
  EXPECT_EQ(ArgValue::scalar(ScalarType::U64, 0x1p63).intValue(),
            std::nullopt);
  EXPECT_EQ(ArgValue::scalar(ScalarType::U64, 0x1p63).doubleValue(), 0x1p63);
  EXPECT_EQ(ArgValue::scalar(ScalarType::I1, 1).intValue(), 1);
  EXPECT_EQ(ArgValue(uint32_t(4000000000u)).intValue(), 4000000000);
  EXPECT_EQ(ArgValue(int32_t(-1)).convertTo(ScalarType::F32).doubleValue(),
            -1.0);
  EXPECT_EQ(ArgValue(1.5).convertTo(ScalarType::BF16).doubleValue(), 1.5);
  EXPECT_EQ(errorOf([] { ArgValue::scalar(ScalarType::I1, 2); }),
            "tilec runtime: 2 does not fit in i1");
  EXPECT_EQ(errorOf([] { ArgValue::scalar(ScalarType::U32, -1); }),
            "tilec runtime: -1 does not fit in u32");
  EXPECT_EQ(errorOf([] { ArgValue::scalar(ScalarType::I64, 1e30); }),
            "tilec runtime: 1e+30 does not fit in i64");
  EXPECT_NE(errorOf([] { ArgValue::scalar(ScalarType::I32, NAN); })
                .find("is not an integer"),
            std::string::npos);
}

TEST(ScalarTest, ContiguousStrides) {
  TensorArg t = TensorArg::contiguous(0x10, {2, 3, 4});
  EXPECT_EQ(t.ptr, 0x10u);
  EXPECT_EQ(t.strides, (std::vector<int64_t>{12, 4, 1}));
  EXPECT_TRUE(TensorArg::contiguous(0, {}).strides.empty());
}

//===----------------------------------------------------------------------===//
// No driver
//===----------------------------------------------------------------------===//

TEST(NoDriverTest, ClearErrorWithoutCrash) {
  if (driverAvailable())
    GTEST_SKIP() << "a CUDA driver is present";
  std::string msg = errorOf([] { Context::get(); });
  EXPECT_NE(msg.find("cannot load the CUDA driver"), std::string::npos) << msg;
  EXPECT_NE(msg.find("is an NVIDIA driver installed?"), std::string::npos);
  if (!std::getenv("TILEC_CUDA_DRIVER")) {
    EXPECT_NE(msg.find("(libcuda.so.1)"), std::string::npos) << msg;
  }
  EXPECT_EQ(errorOf([] { deviceCount(); }), msg);
  EXPECT_EQ(errorOf([] { Buffer b(16); }), msg);
  EXPECT_EQ(errorOf([] { Module::loadPTX(""); }), msg);
  Buffer empty; // Needs no driver.
  EXPECT_EQ(empty.size(), 0u);
}

// The driver is loaded once per process, so the override is tested in a
// fresh process ("threadsafe" death tests re-execute the test binary).
TEST(DriverOverrideDeathTest, NonexistentPathGivesClearError) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        setenv("TILEC_CUDA_DRIVER", "/nonexistent/libcuda.so.1", 1);
        if (driverAvailable())
          std::_Exit(2);
        try {
          Context::get();
        } catch (const RuntimeError &e) {
          std::fprintf(stderr, "%s\n", e.what());
          std::_Exit(0);
        }
        std::_Exit(1);
      },
      testing::ExitedWithCode(0),
      "tilec runtime: cannot load the CUDA driver "
      "\\(/nonexistent/libcuda.so.1\\): .*is an NVIDIA driver installed\\?");
}


} // namespace

namespace {
TEST(PackTest, PrepareLaunchMatchesPackArguments) {
  KernelSignature sig = saxpySignature();
  std::vector<ArgValue> args = saxpyArgs(1000);
  PackedArgs p = packArguments(sig, args);
  LaunchConfig config;
  prepareLaunch(sig, args, config);
  EXPECT_EQ(config.grid, evaluateGrid(sig, args));
  ASSERT_EQ(config.numParams, p.offsets.size());
  auto *base = reinterpret_cast<const uint8_t *>(config.storage);
  for (size_t i = 0; i < config.numParams; ++i) {
    EXPECT_EQ(config.params[i], base + p.offsets[i]);
    size_t n = (i + 1 < p.offsets.size() ? p.offsets[i + 1] : p.size) - p.offsets[i];
    EXPECT_EQ(std::memcmp(config.params[i], p.bytes() + p.offsets[i], std::min<size_t>(n, 4)), 0);
  }
  // Bad arguments fail before anything is packed.
  args.pop_back();
  LaunchConfig bad;
  EXPECT_NE(errorOf([&] { prepareLaunch(sig, args, bad); }).find("takes 3 arguments"),
            std::string::npos);
}
} // namespace
