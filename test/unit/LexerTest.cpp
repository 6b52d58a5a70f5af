//===- LexerTest.cpp - Unit tests of the tile language lexer --------------===//

#include "tilec/Frontend/Lexer.h"

#include "llvm/Support/MemoryBuffer.h"

#include <gtest/gtest.h>

using namespace tilec;

namespace {

struct Lexed {
  llvm::SourceMgr srcMgr;
  std::unique_ptr<DiagEngine> diags;
  std::vector<Token> tokens;
};

std::unique_ptr<Lexed> lex(llvm::StringRef text) {
  auto l = std::make_unique<Lexed>();
  l->srcMgr.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(text, "t.tile"),
                               llvm::SMLoc());
  l->diags = std::make_unique<DiagEngine>(l->srcMgr);
  Lexer lexer(l->srcMgr.getMemoryBuffer(1)->getBuffer(), *l->diags);
  for (int i = 0; i < 1000; ++i) {
    Token t = lexer.next();
    l->tokens.push_back(t);
    if (t.kind == Tok::Eof)
      break;
  }
  return l;
}

std::vector<Tok> kinds(const Lexed &l) {
  std::vector<Tok> ks;
  for (const Token &t : l.tokens)
    ks.push_back(t.kind);
  return ks;
}

TEST(LexerTest, KeywordsIdentifiersPunctuation) {
  auto l = lex("kernel k<B: int = 4>(x: tensor<f32, 1>) grid(cdiv(x.shape[0], B)) { let a = -1; }");
  std::vector<Tok> want = {
      Tok::KwKernel, Tok::Ident, Tok::Lt, Tok::Ident, Tok::Colon, Tok::Ident,
      Tok::Assign, Tok::Int, Tok::Gt, Tok::LParen, Tok::Ident, Tok::Colon,
      Tok::KwTensor, Tok::Lt, Tok::Ident, Tok::Comma, Tok::Int, Tok::Gt,
      Tok::RParen, Tok::KwGrid, Tok::LParen, Tok::Ident, Tok::LParen,
      Tok::Ident, Tok::Dot, Tok::Ident, Tok::LBracket, Tok::Int, Tok::RBracket,
      Tok::Comma, Tok::Ident, Tok::RParen, Tok::RParen, Tok::LBrace, Tok::KwLet,
      Tok::Ident, Tok::Assign, Tok::Minus, Tok::Int, Tok::Semi, Tok::RBrace,
      Tok::Eof};
  EXPECT_EQ(kinds(*l), want);
  EXPECT_FALSE(l->diags->hadError());
}

TEST(LexerTest, TwoCharacterOperators) {
  auto l = lex("<= >= == != && || -> .. < > = !");
  std::vector<Tok> want = {Tok::Le, Tok::Ge, Tok::EqEq, Tok::NotEq, Tok::AmpAmp,
                           Tok::PipePipe, Tok::Arrow, Tok::DotDot, Tok::Lt, Tok::Gt,
                           Tok::Assign, Tok::Bang, Tok::Eof};
  EXPECT_EQ(kinds(*l), want);
}

TEST(LexerTest, BitOperators) {
  auto l = lex("& | ^ ~ << >> && || < >");
  std::vector<Tok> want = {Tok::Amp, Tok::Pipe, Tok::Caret, Tok::Tilde, Tok::Shl, Tok::Shr,
                           Tok::AmpAmp, Tok::PipePipe, Tok::Lt, Tok::Gt, Tok::Eof};
  EXPECT_EQ(kinds(*l), want);
}

TEST(LexerTest, Numbers) {
  auto l = lex("0 42 1_000_003 0x1F 1.5 2e3 1.25e-2 3. 0..8");
  ASSERT_GE(l->tokens.size(), 11u);
  EXPECT_EQ(l->tokens[0].intValue, 0u);
  EXPECT_EQ(l->tokens[1].intValue, 42u);
  EXPECT_EQ(l->tokens[2].intValue, 1000003u);
  EXPECT_EQ(l->tokens[3].intValue, 31u);
  EXPECT_EQ(l->tokens[4].kind, Tok::Float);
  EXPECT_DOUBLE_EQ(l->tokens[4].floatValue, 1.5);
  EXPECT_DOUBLE_EQ(l->tokens[5].floatValue, 2000.0);
  EXPECT_DOUBLE_EQ(l->tokens[6].floatValue, 0.0125);
  EXPECT_EQ(l->tokens[7].kind, Tok::Float);
  // `0..8` is a range, not the float `0.`.
  EXPECT_EQ(l->tokens[8].kind, Tok::Int);
  EXPECT_EQ(l->tokens[9].kind, Tok::DotDot);
  EXPECT_EQ(l->tokens[10].kind, Tok::Int);
}

TEST(LexerTest, CommentsAreSkipped) {
  auto l = lex("a // line comment\n/* block\n comment */ b");
  EXPECT_EQ(kinds(*l), (std::vector<Tok>{Tok::Ident, Tok::Ident, Tok::Eof}));
  EXPECT_EQ(l->tokens[1].text, "b");
}

TEST(LexerTest, LocationsPointAtTokens) {
  auto l = lex("let\n  xs = 1;");
  auto [line, col] = l->diags->lineCol(l->tokens[1].loc);
  EXPECT_EQ(line, 2u);
  EXPECT_EQ(col, 3u);
}

TEST(LexerTest, ErrorsAreReportedWithCaret) {
  auto l = lex("let a = 3 $ 4;");
  EXPECT_TRUE(l->diags->hadError());
  EXPECT_NE(l->diags->text().find("t.tile:1:11: error: unexpected character '$'"),
            std::string::npos);
  EXPECT_NE(l->diags->text().find("          ^"), std::string::npos);
}

TEST(LexerTest, BadNumbersAndUnterminatedThings) {
  EXPECT_TRUE(lex("12abc")->diags->hadError());
  EXPECT_TRUE(lex("99999999999999999999999")->diags->hadError());
  EXPECT_TRUE(lex("/* never closed")->diags->hadError());
  EXPECT_TRUE(lex("\"no end")->diags->hadError());
  EXPECT_TRUE(lex("a $ b")->diags->hadError());
  EXPECT_TRUE(lex(llvm::StringRef("\x01\xff", 2))->diags->hadError());
}

} // namespace
