//===- ParserExpr.cpp - Parsing expressions ----------------------------===//
//
// The expression half of the parser (grammar in Parser.cpp): precedence
// levels from `||` down to primaries, with the depth guard that bounds
// nesting.
//
//===----------------------------------------------------------------------===//

#include "ParserImpl.h"

using namespace tilec;
using namespace tilec::parser;

ExprPtr Parser::parseExpr() {
  DepthGuard guard(depth);
  if (depth > kMaxDepth) {
    fail("expression is nested too deeply (more than 256 levels)");
    return nullptr;
  }
  return parseOr();
}

ExprPtr Parser::parseOr() {
  auto lhs = parseAnd();
  while (lhs && is(Tok::PipePipe)) {
    llvm::SMLoc loc = tok.loc;
    advance();
    auto rhs = parseAnd();
    if (!rhs)
      return nullptr;
    lhs = binary(Expr::Op::Or, loc, std::move(lhs), std::move(rhs));
  }
  return lhs;
}

ExprPtr Parser::parseAnd() {
  auto lhs = parseCmp();
  while (lhs && is(Tok::AmpAmp)) {
    llvm::SMLoc loc = tok.loc;
    advance();
    auto rhs = parseCmp();
    if (!rhs)
      return nullptr;
    lhs = binary(Expr::Op::And, loc, std::move(lhs), std::move(rhs));
  }
  return lhs;
}

/// Whether builtin `name` takes a type argument (`cast<T>(...)`; Builtins.def).
static bool takesTypeArgument(llvm::StringRef name) {
#define TILEC_ACCEPTS_PLAIN false
#define TILEC_ACCEPTS_TYPE true
#define TILEC_ACCEPTS_AXIS false
#define TILEC_ACCEPTS_TF32 false
#define TILEC_BUILTIN(spelling, Rule, accepts)                                                    \
  if (name == spelling)                                                                            \
    return accepts;
#include "tilec/Frontend/Builtins.def"
#undef TILEC_ACCEPTS_PLAIN
#undef TILEC_ACCEPTS_TYPE
#undef TILEC_ACCEPTS_AXIS
#undef TILEC_ACCEPTS_TF32
  return false;
}

static std::optional<Expr::Op> cmpOp(Tok k) {
  switch (k) {
  case Tok::Lt: return Expr::Op::Lt;
  case Tok::Le: return Expr::Op::Le;
  case Tok::Gt: return Expr::Op::Gt;
  case Tok::Ge: return Expr::Op::Ge;
  case Tok::EqEq: return Expr::Op::Eq;
  case Tok::NotEq: return Expr::Op::Ne;
  default: return std::nullopt;
  }
}

ExprPtr Parser::parseCmp() {
  auto lhs = parseBitOr();
  if (!lhs)
    return nullptr;
  if (auto op = cmpOp(tok.kind)) {
    llvm::SMLoc loc = tok.loc;
    advance();
    auto rhs = parseBitOr();
    if (!rhs)
      return nullptr;
    if (cmpOp(tok.kind)) {
      fail("comparisons cannot be chained; combine them with '&&'");
      return nullptr;
    }
    return binary(*op, loc, std::move(lhs), std::move(rhs));
  }
  return lhs;
}

/// Left-associative binary levels: `next` parses the operands.
#define TILEC_BINARY_LEVEL(NAME, NEXT, CASES)                                   \
  ExprPtr Parser::NAME() {                                                     \
    auto lhs = NEXT();                                                         \
    while (lhs) {                                                              \
      Expr::Op op;                                                             \
      switch (tok.kind) {                                                      \
        CASES                                                                  \
      default:                                                                 \
        return lhs;                                                            \
      }                                                                        \
      llvm::SMLoc loc = tok.loc;                                               \
      advance();                                                               \
      auto rhs = NEXT();                                                       \
      if (!rhs)                                                                \
        return nullptr;                                                        \
      lhs = binary(op, loc, std::move(lhs), std::move(rhs));                   \
    }                                                                          \
    return lhs;                                                                \
  }
TILEC_BINARY_LEVEL(parseBitOr, parseBitXor, case Tok::Pipe: op = Expr::Op::BitOr; break;)
TILEC_BINARY_LEVEL(parseBitXor, parseBitAnd, case Tok::Caret: op = Expr::Op::BitXor; break;)
TILEC_BINARY_LEVEL(parseBitAnd, parseShift, case Tok::Amp: op = Expr::Op::BitAnd; break;)
TILEC_BINARY_LEVEL(parseShift, parseAdditive,
                   case Tok::Shl: op = Expr::Op::Shl; break;
                   case Tok::Shr: op = Expr::Op::Shr; break;)
#undef TILEC_BINARY_LEVEL

ExprPtr Parser::parseAdditive() {
  auto lhs = parseMul();
  while (lhs && (is(Tok::Plus) || is(Tok::Minus))) {
    Expr::Op op = is(Tok::Plus) ? Expr::Op::Add : Expr::Op::Sub;
    llvm::SMLoc loc = tok.loc;
    advance();
    auto rhs = parseMul();
    if (!rhs)
      return nullptr;
    lhs = binary(op, loc, std::move(lhs), std::move(rhs));
  }
  return lhs;
}

ExprPtr Parser::parseMul() {
  auto lhs = parseUnary();
  while (lhs && (is(Tok::Star) || is(Tok::Slash) || is(Tok::Percent))) {
    Expr::Op op = is(Tok::Star)    ? Expr::Op::Mul
                  : is(Tok::Slash) ? Expr::Op::Div
                                   : Expr::Op::Rem;
    llvm::SMLoc loc = tok.loc;
    advance();
    auto rhs = parseUnary();
    if (!rhs)
      return nullptr;
    lhs = binary(op, loc, std::move(lhs), std::move(rhs));
  }
  return lhs;
}

ExprPtr Parser::parseUnary() {
  if (is(Tok::Minus) || is(Tok::Bang) || is(Tok::Tilde)) {
    DepthGuard guard(depth);
    if (depth > kMaxDepth) {
      fail("expression is nested too deeply (more than 256 levels)");
      return nullptr;
    }
    auto e = std::make_unique<Expr>(Expr::Kind::Unary, tok.loc);
    e->op = is(Tok::Minus) ? Expr::Op::Neg : is(Tok::Bang) ? Expr::Op::Not : Expr::Op::BitNot;
    advance();
    auto operand = parseUnary();
    if (!operand)
      return nullptr;
    e->args.push_back(std::move(operand));
    return sized(std::move(e));
  }
  return parsePostfix();
}

ExprPtr Parser::parsePostfix() {
  auto e = parsePrimary();
  while (e && is(Tok::Dot)) {
    advance();
    if (!is(Tok::Ident) || (tok.text != "shape" && tok.text != "stride")) {
      fail("expected 'shape' or 'stride' after '.', found " + describe());
      return nullptr;
    }
    auto field = std::make_unique<Expr>(Expr::Kind::ViewField, tok.loc);
    field->name = tok.text.str();
    advance();
    if (!expect(Tok::LBracket, ("after '." + field->name + "' (write x." +
                                field->name + "[0])").c_str()))
      return nullptr;
    auto dim = parseExpr();
    if (!dim || !expect(Tok::RBracket, "to close the dimension index"))
      return nullptr;
    field->args.push_back(std::move(e));
    field->args.push_back(std::move(dim));
    e = sized(std::move(field));
  }
  return e;
}

bool Parser::parseExprList(Tok close, std::vector<ExprPtr> &out,
                           const char *what) {
  if (consumeIf(close))
    return true;
  do {
    auto e = parseExpr();
    if (!e)
      return false;
    // A named call argument: `axis = 1`.
    if (close == Tok::RParen && e->kind == Expr::Kind::Name && is(Tok::Assign)) {
      std::string argName = e->name;
      advance();
      e = parseExpr();
      if (!e)
        return false;
      e->argName = argName;
    }
    out.push_back(std::move(e));
  } while (consumeIf(Tok::Comma));
  return expect(close, what);
}

ExprPtr Parser::parsePrimary() {
  llvm::SMLoc loc = tok.loc;
  switch (tok.kind) {
  case Tok::Int: {
    auto e = std::make_unique<Expr>(Expr::Kind::IntLit, loc);
    e->intValue = static_cast<int64_t>(tok.intValue);
    advance();
    return e;
  }
  case Tok::Float: {
    auto e = std::make_unique<Expr>(Expr::Kind::FloatLit, loc);
    e->floatValue = tok.floatValue;
    advance();
    return e;
  }
  case Tok::String: {
    // The text between the quotes, with \n, \t, \" and \\ unescaped.
    auto e = std::make_unique<Expr>(Expr::Kind::StringLit, loc);
    llvm::StringRef raw = tok.text.drop_front().drop_back();
    for (size_t i = 0; i < raw.size(); ++i) {
      char c = raw[i];
      if (c == '\\' && i + 1 < raw.size()) {
        char n = raw[++i];
        c = n == 'n' ? '\n' : n == 't' ? '\t' : n;
      }
      e->name.push_back(c);
    }
    advance();
    return e;
  }
  case Tok::KwFn: {
    // `fn(a, b) { ...; return v; }`: an anonymous helper (a combiner).
    advance();
    auto f = std::make_shared<FnDecl>();
    f->name = "fn";
    f->loc = loc;
    if (!parseParamNames(*f, "the parameters of 'fn'"))
      return nullptr;
    bool wasInFn = inFn;
    inFn = true;
    unsigned outerHeight = innerHeight;
    innerHeight = 0;
    bool ok = parseBlock(f->body, "the body of 'fn'");
    inFn = wasInFn;
    if (!ok)
      return nullptr;
    auto e = std::make_unique<Expr>(Expr::Kind::Lambda, loc);
    e->lambda = std::move(f);
    // As tall as its body's tallest expression: the lambda is inlined (and
    // destroyed) through the expression it is an argument of.
    e->height = innerHeight + 1;
    innerHeight = outerHeight;
    return sized(std::move(e));
  }
  case Tok::KwTrue:
  case Tok::KwFalse: {
    auto e = std::make_unique<Expr>(Expr::Kind::BoolLit, loc);
    e->intValue = is(Tok::KwTrue);
    advance();
    return e;
  }
  case Tok::LParen: {
    advance();
    auto e = parseExpr();
    if (!e || !expect(Tok::RParen, "to close the parenthesis"))
      return nullptr;
    return e;
  }
  case Tok::LBracket: {
    advance();
    auto e = std::make_unique<Expr>(Expr::Kind::List, loc);
    if (!parseExprList(Tok::RBracket, e->args, "to close the list"))
      return nullptr;
    return sized(std::move(e));
  }
  case Tok::Ident: {
    std::string name = tok.text.str();
    advance();
    std::unique_ptr<TypeExpr> typeArg;
    // Only the type-taking builtins have `<T>`: elsewhere '<' is less-than
    // (and after a variable named bits, unless a name and '>' follow).
    if (is(Tok::Lt) && takesTypeArgument(name) &&
        (name != "bits" || lexer.nextIsTypeArgument())) {
      advance();
      typeArg = parseType();
      if (!typeArg || !expect(Tok::Gt, "to close the type argument"))
        return nullptr;
      if (!is(Tok::LParen)) {
        fail("expected '(' after '" + name + "<...>', found " + describe());
        return nullptr;
      }
    }
    if (is(Tok::LParen)) {
      advance();
      auto e = std::make_unique<Expr>(Expr::Kind::Call, loc);
      e->name = name;
      e->typeArg = std::move(typeArg);
      if (!parseExprList(Tok::RParen, e->args, "to close the call"))
        return nullptr;
      return sized(std::move(e));
    }
    auto e = std::make_unique<Expr>(Expr::Kind::Name, loc);
    e->name = name;
    return e;
  }
  default:
    fail("expected an expression, found " + describe());
    return nullptr;
  }
}
