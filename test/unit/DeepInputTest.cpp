//===- DeepInputTest.cpp - deep inputs on small-stack threads -------------===//
//
// Inputs as deep as the language allows, and deeper, compiled and run from
// threads with a small stack (a host's worker thread may have 512 KiB):
// each must compile or be a located error, never overflow the stack. A
// flat chain `a + a + ... + a` is a left-deep tree as tall as it has
// operators, which once crashed Sema with 1 400 terms on such a thread.
//
//===----------------------------------------------------------------------===//

#include "tilec/Compiler.h"
#include "tilec/Interpreter.h"

#include <gtest/gtest.h>

#include <pthread.h>

#include <functional>
#include <string>
#include <vector>

using namespace tilec;

namespace {

/// Runs `fn` on a thread with `stackBytes` of stack.
void onSmallStack(size_t stackBytes, const std::function<void()> &fn) {
  pthread_attr_t attr;
  ASSERT_EQ(pthread_attr_init(&attr), 0);
  ASSERT_EQ(pthread_attr_setstacksize(&attr, stackBytes), 0);
  pthread_t thread;
  auto entry = [](void *p) -> void * {
    (*static_cast<const std::function<void()> *>(p))();
    return nullptr;
  };
  ASSERT_EQ(pthread_create(&thread, &attr, entry, const_cast<std::function<void()> *>(&fn)), 0);
  pthread_attr_destroy(&attr);
  pthread_join(thread, nullptr);
}

constexpr size_t k512K = 512 * 1024;

/// `let b = a OP a OP ... OP a;` with `terms` terms.
std::string chain(int terms, const char *op, bool boolean) {
  std::string s = "kernel k(x: tensor<f32, 1>) {\n    let a = load(x, [0], [16]) > 0.0;\n";
  if (!boolean)
    s = "kernel k(x: tensor<f32, 1>) {\n    let a = load(x, [0], [16]);\n";
  s += "    let b = a";
  for (int i = 1; i < terms; ++i)
    s += std::string(" ") + op + " a";
  s += ";\n";
  s += boolean ? "    store(x, [0], where(b, 1.0, 0.0));\n}\n" : "    store(x, [0], b);\n}\n";
  return s;
}

CompileResult compileOnSmallStack(const std::string &src, EmitKind emit) {
  CompileResult r;
  onSmallStack(k512K, [&] {
    CompileOptions opts;
    opts.fileName = "deep.tile";
    opts.emit = emit;
    r = compile(src, opts);
  });
  return r;
}

TEST(DeepInputTest, LongOperatorChainsAreALocatedError) {
  for (const char *op : {"+", "&&", "*", "|"}) {
    bool boolean = std::string(op) == "&&" || std::string(op) == "|";
    CompileResult r = compileOnSmallStack(chain(20000, op, boolean), EmitKind::Tile);
    EXPECT_FALSE(r.ok) << op;
    EXPECT_FALSE(r.internalError) << op;
    EXPECT_NE(r.diagnostics.find("deep.tile:3:"), std::string::npos) << r.diagnostics.substr(0, 300);
    EXPECT_NE(r.diagnostics.find("error: expression is too deep: more than 4096 nested "
                                 "operations"),
              std::string::npos)
        << r.diagnostics.substr(0, 300);
  }
}

TEST(DeepInputTest, ChainsUpToTheLimitCompileOnASmallStack) {
  // 1 400 terms overflowed a 512 KiB thread in Sema; 4096 is the limit.
  for (int terms : {1400, 4096}) {
    CompileResult r = compileOnSmallStack(chain(terms, "+", false), EmitKind::PTX);
    EXPECT_TRUE(r.ok) << terms << ": " << r.diagnostics.substr(0, 300);
    EXPECT_NE(r.ptx.find(".entry k"), std::string::npos) << terms;
  }
  CompileResult r = compileOnSmallStack(chain(4096, "&&", true), EmitKind::Tile);
  EXPECT_TRUE(r.ok) << r.diagnostics.substr(0, 300);
  // The AST dump and its destruction walk the tree too.
  r = compileOnSmallStack(chain(4096, "-", false), EmitKind::AST);
  EXPECT_TRUE(r.ok) << r.diagnostics.substr(0, 300);
}

TEST(DeepInputTest, NestedParenthesesAndUnaryOperators) {
  std::string deepParens = "kernel k(x: tensor<f32, 1>) { let b = " + std::string(250, '(') +
                           "load(x, [0], [16])" + std::string(250, ')') +
                           "; store(x, [0], b); }";
  CompileResult r = compileOnSmallStack(deepParens, EmitKind::PTX);
  EXPECT_TRUE(r.ok) << r.diagnostics.substr(0, 300);
  std::string negations = "kernel k(x: tensor<f32, 1>) { let a = load(x, [0], [16]); let b = ";
  for (int i = 0; i < 250; ++i)
    negations += "- ";
  negations += "a; store(x, [0], b); }";
  r = compileOnSmallStack(negations, EmitKind::PTX);
  EXPECT_TRUE(r.ok) << r.diagnostics.substr(0, 300);
  std::string tooDeep = "kernel k(x: tensor<f32, 1>) { let b = " + std::string(5000, '(') +
                        "1" + std::string(5000, ')') + "; }";
  r = compileOnSmallStack(tooDeep, EmitKind::Tile);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.diagnostics.find("nested too deeply"), std::string::npos)
      << r.diagnostics.substr(0, 300);
}

/// `depth` helpers, each returning the previous one's result plus `terms`
/// more terms: after inlining, one expression about depth * terms deep.
std::string helperTower(int depth, int terms) {
  std::string s = "fn h0(x) { return x; }\n";
  for (int i = 1; i <= depth; ++i) {
    s += "fn h" + std::to_string(i) + "(x) { return h" + std::to_string(i - 1) + "(x)";
    for (int t = 0; t < terms; ++t)
      s += " + x";
    s += "; }\n";
  }
  s += "kernel k(x: tensor<f32, 1>) { let a = load(x, [0], [16]); store(x, [0], h" +
       std::to_string(depth) + "(a)); }\n";
  return s;
}

TEST(DeepInputTest, DeepHelperExpansionsAreALocatedError) {
  // Each helper is within the parser's limit; inlined, they are not.
  CompileResult r = compileOnSmallStack(helperTower(5, 2000), EmitKind::Tile);
  EXPECT_FALSE(r.ok);
  EXPECT_FALSE(r.internalError);
  EXPECT_NE(r.diagnostics.find("error: expression is too deep after inlining helpers"),
            std::string::npos)
      << r.diagnostics.substr(0, 300);
  EXPECT_NE(r.diagnostics.find("deep.tile:"), std::string::npos);
  // Just inside the limit: compiles, on a small stack.
  r = compileOnSmallStack(helperTower(3, 2000), EmitKind::Tile);
  EXPECT_TRUE(r.ok) << r.diagnostics.substr(0, 300);
  // Many helpers nested in one another.
  r = compileOnSmallStack(helperTower(2000, 1), EmitKind::Tile);
  EXPECT_TRUE(r.ok) << r.diagnostics.substr(0, 300);
}

TEST(DeepInputTest, InterpreterOnASmallStack) {
  std::string src = "kernel k(x: tensor<f32, 1>) {\n    let a = load(x, [0], [4]);\n    let b = a";
  for (int i = 1; i < 4000; ++i)
    src += " + a";
  src += ";\n    store(x, [0], b);\n}\n";
  std::vector<float> x = {1, 2, 3, 4};
  bool ok = false;
  std::string error;
  onSmallStack(k512K, [&] {
    ok = interpretKernel(src, CompileOptions(), "k", {HostArg::tensor(x.data(), {4}, {1})},
                         error);
  });
  ASSERT_TRUE(ok) << error.substr(0, 300);
  EXPECT_EQ(x[0], 4000.0f);
  EXPECT_EQ(x[3], 16000.0f);
  onSmallStack(k512K, [&] {
    ok = interpretKernel(chain(20000, "+", false), CompileOptions(), "k",
                         {HostArg::tensor(x.data(), {4}, {1})}, error);
  });
  EXPECT_FALSE(ok);
  EXPECT_NE(error.find("expression is too deep"), std::string::npos) << error.substr(0, 300);
}

} // namespace

namespace {
TEST(DeepInputTest, KernelsAndInlinedBodiesHaveASizeBudget) {
  // 40 helpers each calling the previous twice: 2^40 copies once ran out of
  // memory; the expansion stops at the budget.
  std::string src = "fn h0(x) { return x * 2.0; }\n";
  for (int i = 1; i <= 40; ++i)
    src += "fn h" + std::to_string(i) + "(x) { return h" + std::to_string(i - 1) + "(x) + h" +
           std::to_string(i - 1) + "(x); }\n";
  src += "kernel k(x: tensor<f32, 1>) { let a = load(x, [0], [16]); store(x, [0], h40(a)); }\n";
  CompileResult r = compileOnSmallStack(src, EmitKind::PTX);
  EXPECT_FALSE(r.ok);
  EXPECT_FALSE(r.internalError);
  EXPECT_NE(r.diagnostics.find("deep.tile:42:73: error: inlined body too large: more than "
                               "100000 operations after inlining helpers, expanding kernel 'k' "
                               "calls 'h40' at line 42, 'h40' calls 'h39' at line 41"),
            std::string::npos)
      << r.diagnostics;
  // Without helpers: a kernel of more than 100000 operations.
  std::string big = "kernel k(x: tensor<f32, 1>) {\n    var a = load(x, [0], [16]);\n";
  for (int i = 0; i < 40000; ++i)
    big += "    a = a + a;\n";
  big += "    store(x, [0], a);\n}\n";
  r = compileOnSmallStack(big, EmitKind::Tile);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.diagnostics.find("error: kernel 'k' is too large: more than 100000 operations; "
                               "split it into several kernels"),
            std::string::npos)
      << r.diagnostics.substr(0, 300);
}
} // namespace

namespace {

/// `if i == 0 {..} else if i == 1 {..} ...` with `branches` branches.
std::string elseIfChain(int branches) {
  std::string s = "kernel k(x: tensor<f32, 1>) grid(1) { var a = load(x, [0], [16]); "
                  "let i = block_id(0); if i == 0 { a = a + 1.0; }";
  for (int j = 1; j < branches; ++j)
    s += " else if i == " + std::to_string(j) + " { a = a + " + std::to_string(j) + ".0; }";
  return s + " store(x, [0], a); }";
}

/// `depth` ifs nested in one another.
std::string nestedIfs(int depth) {
  std::string s = "kernel k(x: tensor<f32, 1>) grid(1) { var a = load(x, [0], [16]); "
                  "let i = block_id(0); ";
  for (int j = 0; j < depth; ++j)
    s += "if i < " + std::to_string(j + 1) + " { ";
  s += "a = a + 1.0;";
  s += std::string(size_t(depth), '}');
  return s + " store(x, [0], a); }";
}

// Statements and expressions are counted apart, and an else-if chain is
// parsed in a loop (issue 17, item 11): 128 nested ifs and a chain of 255
// branches used to fail with "expression is nested too deeply".
TEST(DeepInputTest, NestedIfsAndLongElseIfChains) {
  for (int n : {128, 255}) { // the kernel body is a block too
    CompileResult r = compileOnSmallStack(nestedIfs(n), EmitKind::Tile);
    EXPECT_TRUE(r.ok) << n << ": " << r.diagnostics.substr(0, 300);
  }
  CompileResult r = compileOnSmallStack(nestedIfs(300), EmitKind::Tile);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.diagnostics.find("blocks are nested too deeply"), std::string::npos)
      << r.diagnostics.substr(0, 300);
  for (int n : {255, 1024}) {
    r = compileOnSmallStack(elseIfChain(n), EmitKind::Tile);
    EXPECT_TRUE(r.ok) << n << ": " << r.diagnostics.substr(0, 300);
  }
  r = compileOnSmallStack(elseIfChain(300), EmitKind::PTX);
  EXPECT_TRUE(r.ok) << r.diagnostics.substr(0, 300);
  r = compileOnSmallStack(elseIfChain(1025), EmitKind::Tile);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.diagnostics.find("more than 1024 branches"), std::string::npos)
      << r.diagnostics.substr(0, 300);
}

} // namespace
