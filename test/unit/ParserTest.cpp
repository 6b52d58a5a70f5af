//===- ParserTest.cpp - Unit tests of the parser and Sema -----------------===//

#include "tilec/Compiler.h"
#include "tilec/Frontend/Parser.h"
#include "tilec/Frontend/Sema.h"

#include "llvm/Support/MemoryBuffer.h"

#include <gtest/gtest.h>

using namespace tilec;

namespace {

struct Parsed {
  llvm::SourceMgr srcMgr;
  std::unique_ptr<DiagEngine> diags;
  std::unique_ptr<ModuleDecl> module;
};

std::unique_ptr<Parsed> parse(const std::string &text) {
  auto p = std::make_unique<Parsed>();
  p->srcMgr.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(text, "p.tile"),
                               llvm::SMLoc());
  p->diags = std::make_unique<DiagEngine>(p->srcMgr);
  p->module = parseModule(*p->diags);
  return p;
}

const char *kSaxpy = R"(
kernel saxpy<BLOCK: int = 1024>(a: f32, x: tensor<f32, 1>, y: tensor<f32, 1>)
    grid(cdiv(x.shape[0], BLOCK))
{
    let i = block_id(0);
    store(y, [i], a * load(x, [i], [BLOCK]) + load(y, [i], [BLOCK]));
}
)";

TEST(ParserTest, KernelStructure) {
  auto p = parse(kSaxpy);
  ASSERT_TRUE(p->module) << p->diags->text();
  ASSERT_EQ(p->module->kernels.size(), 1u);
  const KernelDecl &k = *p->module->kernels[0];
  EXPECT_EQ(k.name, "saxpy");
  ASSERT_EQ(k.constParams.size(), 1u);
  EXPECT_EQ(k.constParams[0].name, "BLOCK");
  ASSERT_EQ(k.params.size(), 3u);
  EXPECT_EQ(k.params[1].type->kind, TypeExpr::Kind::Tensor);
  EXPECT_EQ(k.params[1].type->rank, 1u);
  ASSERT_EQ(k.grid.size(), 1u);
  EXPECT_EQ(k.grid[0]->kind, Expr::Kind::Call);
  ASSERT_EQ(k.body.size(), 2u);
  EXPECT_EQ(k.body[0]->kind, Stmt::Kind::Let);
}

TEST(ParserTest, PrecedenceAndAssociativity) {
  auto p = parse("kernel k() { let a = 1 + 2 * 3 - 4; }");
  ASSERT_TRUE(p->module) << p->diags->text();
  const Expr &e = *p->module->kernels[0]->body[0]->value;
  // (1 + (2 * 3)) - 4
  EXPECT_EQ(e.op, Expr::Op::Sub);
  EXPECT_EQ(e.args[0]->op, Expr::Op::Add);
  EXPECT_EQ(e.args[0]->args[1]->op, Expr::Op::Mul);
}

TEST(ParserTest, CastTakesATypeArgument) {
  auto p = parse("kernel k(x: f32) { let a = cast<f16>(x) < 1; }");
  ASSERT_TRUE(p->module) << p->diags->text();
  const Expr &e = *p->module->kernels[0]->body[0]->value;
  EXPECT_EQ(e.op, Expr::Op::Lt);
  EXPECT_EQ(e.args[0]->name, "cast");
  ASSERT_TRUE(e.args[0]->typeArg);
  EXPECT_EQ(e.args[0]->typeArg->scalar, ScalarType::F16);
}

TEST(ParserTest, SyntaxErrorsStopWithOneMessage) {
  auto p = parse("kernel k( { }");
  EXPECT_FALSE(p->module);
  EXPECT_EQ(p->diags->errorCount(), 1u);
  EXPECT_NE(p->diags->text().find("p.tile:1:11: error: expected a parameter name"),
            std::string::npos)
      << p->diags->text();
}

TEST(ParserTest, DeepNestingIsAnErrorNotACrash) {
  std::string src = "kernel k() { let a = " + std::string(100000, '(') + "1" +
                    std::string(100000, ')') + "; }";
  auto p = parse(src);
  EXPECT_FALSE(p->module);
  EXPECT_NE(p->diags->text().find("nested too deeply"), std::string::npos);
  std::string neg = "kernel k() { let a = " + std::string(100000, '-') + "1; }";
  EXPECT_FALSE(parse(neg)->module);
}

TEST(ParserTest, EveryPrefixOfAValidKernelIsHandled) {
  // Truncated input must produce an error, never a crash.
  std::string src = kSaxpy;
  for (size_t n = 0; n < src.size(); ++n) {
    CompileOptions opts;
    opts.emit = EmitKind::Tile;
    CompileResult r = compile(src.substr(0, n), opts);
    if (!r.ok)
      EXPECT_NE(r.diagnostics.find("error:"), std::string::npos) << n;
  }
}

TEST(CompilerTest, CompilesToPTXWithSignature) {
  CompileOptions opts;
  opts.defines["BLOCK"] = "256";
  CompileResult r = compile(kSaxpy, opts);
  ASSERT_TRUE(r.ok) << r.diagnostics;
  EXPECT_NE(r.ptx.find(".entry saxpy"), std::string::npos);
  ASSERT_EQ(r.kernels.size(), 1u);
  const KernelSignature &sig = r.kernels[0];
  EXPECT_EQ(sig.name, "saxpy");
  ASSERT_EQ(sig.params.size(), 3u);
  EXPECT_FALSE(sig.params[0].isTensor);
  EXPECT_TRUE(sig.params[1].isTensor);
  EXPECT_EQ(sig.params[1].rank, 1u);
  ASSERT_EQ(sig.grid.size(), 1u);
  EXPECT_EQ(sig.grid[0].str(sig.params), "cdiv(x.shape[0], 256)");
  EXPECT_GE(sig.numThreads, 32u);
}

TEST(CompilerTest, ErrorsAreReturnedNotPrinted) {
  CompileOptions opts;
  opts.fileName = "bad.tile";
  CompileResult r = compile("kernel k(x: tensor<f32, 1>) { store(x, [0], 1.0); }", opts);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.diagnostics.find("bad.tile:1:"), std::string::npos);
  EXPECT_NE(r.diagnostics.find("store needs a tile"), std::string::npos) << r.diagnostics;
  EXPECT_TRUE(r.ptx.empty());
}

TEST(CompilerTest, UnknownDefineIsAnError) {
  CompileOptions opts;
  opts.defines["NOPE"] = "1";
  CompileResult r = compile(kSaxpy, opts);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.diagnostics.find("no compiled kernel has a compile-time parameter 'NOPE'"),
            std::string::npos)
      << r.diagnostics;
}

} // namespace
