//===- InterpreterTest.cpp - the CPU reference interpreter ----------------===//

#include "tilec/Interpreter.h"

#include <gtest/gtest.h>

#include <cstring>
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

} // namespace
