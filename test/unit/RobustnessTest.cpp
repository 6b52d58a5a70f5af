//===- RobustnessTest.cpp - mutated sources never crash the compiler ------===//
//
// A deterministic, cheap stand-in for fuzzing that runs in every test run:
// random edits (byte and token insertions, deletions, replacements) of the
// example kernels go through the whole compiler. Every input must either
// compile or produce a located error; a crash or abort fails the test binary.
//
//===----------------------------------------------------------------------===//

#include "tilec/Compiler.h"
#include "tilec/Frontend/Sema.h"

#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <sstream>

#ifndef TILEC_EXAMPLES_DIR
#error "TILEC_EXAMPLES_DIR must be defined"
#endif

using namespace tilec;

namespace {

std::string readExample(const char *name) {
  std::ifstream in(std::string(TILEC_EXAMPLES_DIR) + "/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

const char *kTokens[] = {"(", ")", "[", "]", "{", "}", "<", ">", ",", ";", ":",
                         ".", "..", "=", "==", "+", "-", "*", "/", "%", "&&",
                         "!", "let ", "var ", "kernel ", "grid", "load", "store",
                         "cast<f16>", "tensor<f32, 1>", "tensor<", "0", "-1",
                         "1e400", "0x", "BLOCK", "T", "x", "where", "exp", "\"",
                         "/*", "//", "\n", " ", "f64", "i1", "99999999999",
                         "for i in 0 .. 3 { }", "if true { }", "} else {",
                         "while false { }", "var ", "range(", "zeros<f32>([8])"};

std::string mutate(std::string s, std::mt19937 &rng) {
  int edits = 1 + rng() % 4;
  for (int e = 0; e < edits && !s.empty(); ++e) {
    size_t pos = rng() % (s.size() + 1);
    switch (rng() % 5) {
    case 0: // delete a span
      s.erase(std::min(pos, s.size() - 1), 1 + rng() % 8);
      break;
    case 1: // insert a token
      s.insert(pos, kTokens[rng() % (sizeof(kTokens) / sizeof(kTokens[0]))]);
      break;
    case 2: // replace a byte with anything, including non-ASCII
      if (pos < s.size())
        s[pos] = static_cast<char>(rng() % 256);
      break;
    case 3: // duplicate a span
      if (pos < s.size())
        s.insert(pos, s.substr(pos, 1 + rng() % 16));
      break;
    default: // truncate
      s.resize(pos);
      break;
    }
  }
  return s;
}

class RobustnessTest : public ::testing::TestWithParam<const char *> {};

TEST_P(RobustnessTest, MutatedSourcesGiveLocatedErrorsOrCompile) {
  std::string original = readExample(GetParam());
  ASSERT_FALSE(original.empty());
  std::mt19937 rng(1234);
  int compiled = 0, rejected = 0;
  for (int i = 0; i < 2000; ++i) {
    std::string src = mutate(original, rng);
    CompileOptions opts;
    opts.fileName = "m.tile";
    // Most inputs stop at the tile dialect; every 20th goes all the way to PTX.
    opts.emit = i % 20 == 0 ? EmitKind::PTX : EmitKind::Tile;
    CompileResult r = compile(src, opts);
    if (r.ok) {
      ++compiled;
      EXPECT_FALSE(r.output.empty());
    } else {
      ++rejected;
      EXPECT_NE(r.diagnostics.find("error: "), std::string::npos) << src;
      EXPECT_FALSE(r.internalError)
          << "input:\n" << src << "\ndiagnostics:\n" << r.diagnostics;
    }
  }
  EXPECT_GT(rejected, 0);
  EXPECT_GT(compiled, 0);
  std::printf("%s: %d compiled, %d rejected\n", GetParam(), compiled, rejected);
}

INSTANTIATE_TEST_SUITE_P(Examples, RobustnessTest,
                         ::testing::Values("vadd.tile", "saxpy.tile",
                                           "fused2d.tile", "mathmix.tile",
                                           "loops.tile", "softmax.tile",
                                           "layernorm.tile", "activations.tile",
                                           "bits.tile", "argmax.tile"));

// The f64 column of UnaryMath.def is the one rule of which elementwise
// functions take f64 (issue 17, item 1): each function of the table, given
// an f64 tile, either compiles to PTX or is Sema's located error, never the
// lowering's "failed to legalize operation" (sin and cos once were).
TEST(BuiltinTableTest, F64ColumnMatchesTheLowering) {
  for (const char *f : kUnaryMathNames) {
    std::string src = std::string("kernel k(x: tensor<f64, 1>, y: tensor<f64, 1>) grid(1) {\n"
                                  "    store(y, [0], ") +
                      f + "(load(x, [0], [64])));\n}\n";
    CompileOptions opts;
    opts.fileName = "f64.tile";
    CompileResult r = compile(src, opts);
    if (unaryMathSupportsF64(f)) {
      EXPECT_TRUE(r.ok) << f << ":\n" << r.diagnostics;
      EXPECT_NE(r.ptx.find(".f64"), std::string::npos) << f;
    } else {
      EXPECT_FALSE(r.ok) << f;
      EXPECT_NE(r.diagnostics.find("f64.tile:2:19: error: '" + std::string(f) +
                                   "' of f64 is not supported yet"),
                std::string::npos)
          << f << ":\n" << r.diagnostics;
    }
  }
}

} // namespace
