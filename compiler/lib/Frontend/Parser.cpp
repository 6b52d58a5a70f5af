//===- Parser.cpp - Recursive-descent parser ------------------------------===//
//
// Grammar (informal):
//   module   := kernel*
//   kernel   := 'kernel' IDENT ('<' cparam (',' cparam)* '>')?
//               '(' (param (',' param)*)? ')' ('grid' '(' expr (',' expr)* ')')? block
//   cparam   := IDENT ':' ('int' ('=' additive)? | 'type' ('=' type)?)
//   param    := IDENT ':' type
//   type     := 'tensor' '<' type ',' INT '>' | IDENT
//   block    := '{' stmt* '}'
//   stmt     := ('let' | 'var') IDENT '=' expr ';' | IDENT '=' expr ';' | expr ';'
//   expr     := or ; or := and ('||' and)* ; and := cmp ('&&' cmp)*
//   cmp      := bitor (('<'|'<='|'>'|'>='|'=='|'!=') bitor)?
//   bitor    := bitxor ('|' bitxor)* ; bitxor := bitand ('^' bitand)*
//   bitand   := shift ('&' shift)* ; shift := additive (('<<'|'>>') additive)*
//   additive := mul (('+'|'-') mul)* ; mul := unary (('*'|'/'|'%') unary)*
//   unary    := ('-'|'!'|'~') unary | postfix
//   postfix  := primary ('.' ('shape'|'stride') '[' expr ']')*
//   primary  := INT | FLOAT | 'true' | 'false' | '(' expr ')' | '[' exprs ']'
//             | IDENT ('<' type '>')? ('(' exprs ')')?
//
//===----------------------------------------------------------------------===//

#include "tilec/Frontend/Parser.h"

#include "llvm/Support/MemoryBuffer.h"

using namespace tilec;

namespace {

class Parser {
public:
  Parser(DiagEngine &diags)
      : Parser(diags, diags.sourceMgr()
                          .getMemoryBuffer(diags.sourceMgr().getMainFileID())
                          ->getBuffer()) {}
  /// A parser of another buffer of the same SourceMgr (the prelude).
  Parser(DiagEngine &diags, llvm::StringRef buffer, bool needKernels = true)
      : diags(diags), lexer(buffer, diags) {
    this->needKernels = needKernels;
    tok = lexer.next();
  }

  std::unique_ptr<ModuleDecl> parseModule();

private:
  /// Expressions nested in expressions (parentheses, operands).
  static constexpr unsigned kMaxDepth = 256;
  /// Blocks nested in blocks (if / for / while bodies), counted apart from
  /// expressions, and the branches of one `else if` chain (parsed in a loop;
  /// later stages walk the chain as nested ifs).
  static constexpr unsigned kMaxBlockDepth = 256;
  static constexpr unsigned kMaxElseIfChain = 1024;

  void advance() { tok = lexer.next(); }
  bool is(Tok k) const { return tok.kind == k; }
  bool consumeIf(Tok k) {
    if (!is(k))
      return false;
    advance();
    return true;
  }
  bool fail(const llvm::Twine &msg) {
    // A lexical error was already reported; do not pile a syntax error on it.
    if (!is(Tok::Error))
      diags.error(tok.loc, msg);
    return false;
  }
  bool expect(Tok k, const char *context) {
    if (consumeIf(k))
      return true;
    return fail(llvm::Twine("expected ") + tokName(k) + " " + context +
                ", found " + describe());
  }
  std::string describe() const {
    if (is(Tok::Eof))
      return "end of file";
    return "'" + tok.text.str() + "'";
  }
  /// An identifier into `name` and `loc`, or "expected `what`, found ...".
  bool expectName(const llvm::Twine &what, std::string &name, llvm::SMLoc &loc) {
    if (!is(Tok::Ident))
      return fail("expected " + what + ", found " + describe());
    name = tok.text.str();
    loc = tok.loc;
    advance();
    return true;
  }

  std::unique_ptr<KernelDecl> parseKernel();
  std::unique_ptr<FnDecl> parseFn();
  bool parseParamNames(FnDecl &f, const std::string &what);
  bool parseHeader(const char *what, std::string &name, llvm::SMLoc &loc,
                   std::vector<ConstParam> &constParams);
  bool inFn = false;
  /// `@tune(...)` or `@launch(...)`; `name` is set to the attribute's name.
  bool parseAttribute(std::vector<TuneParam> &tune, std::vector<LaunchParam> &launch,
                      std::string &name);
  bool parseTune(std::vector<TuneParam> &tune);
  bool parseRequire();
  bool needKernels = true; ///< a file must hold a kernel (not the prelude)
  std::vector<RequireDecl> pendingRequires; ///< @require(...)s of the next kernel
  bool parseLaunch(std::vector<LaunchParam> &launch);
  bool parseConstParam(ConstParam &cp);
  std::unique_ptr<TypeExpr> parseType();
  bool parseBlock(std::vector<StmtPtr> &body, const char *what = "the kernel body");
  StmtPtr parseStmt();
  ExprPtr parseExpr();
  ExprPtr parseOr();
  ExprPtr parseAnd();
  ExprPtr parseCmp();
  ExprPtr parseBitOr();
  ExprPtr parseBitXor();
  ExprPtr parseBitAnd();
  ExprPtr parseShift();
  ExprPtr parseAdditive();
  ExprPtr parseMul();
  ExprPtr parseUnary();
  ExprPtr parsePostfix();
  ExprPtr parsePrimary();
  bool parseExprList(Tok close, std::vector<ExprPtr> &out, const char *what);
  ExprPtr binary(Expr::Op op, llvm::SMLoc loc, ExprPtr lhs, ExprPtr rhs) {
    auto e = std::make_unique<Expr>(Expr::Kind::Binary, loc);
    e->op = op;
    e->args.push_back(std::move(lhs));
    e->args.push_back(std::move(rhs));
    return sized(std::move(e));
  }
  /// Sets the height of `e` (complete with its operands); null, after an
  /// error at `e`, past kMaxExprHeight. The binary levels build chains in
  /// loops, not by recursion, so only this keeps `a + a + ... + a` from
  /// growing a tree that Sema, MLIRGen, the interpreter (and the
  /// destructors) would recurse through until the stack overflows.
  ExprPtr sized(ExprPtr e) {
    unsigned h = e->height - 1; // a combiner: its body's height
    for (const ExprPtr &a : e->args)
      h = std::max(h, a->height);
    e->height = h + 1;
    if (e->height > kMaxExprHeight) {
      diags.error(e->loc, "expression is too deep: more than " +
                              llvm::Twine(kMaxExprHeight) +
                              " nested operations (each operator of a chain like "
                              "a + b + c is one level); split it into 'let' bindings");
      return nullptr;
    }
    innerHeight = std::max(innerHeight, e->height);
    return e;
  }

  DiagEngine &diags;
  Lexer lexer;
  Token tok;
  unsigned depth = 0;
  unsigned blockDepth = 0;
  /// The tallest expression completed so far (in a combiner's body: in it).
  unsigned innerHeight = 0;
};

struct DepthGuard {
  unsigned &depth;
  explicit DepthGuard(unsigned &d) : depth(d) { ++depth; }
  ~DepthGuard() { --depth; }
};

} // namespace

std::unique_ptr<ModuleDecl> Parser::parseModule() {
  auto module = std::make_unique<ModuleDecl>();
  while (!is(Tok::Eof)) {
    std::vector<TuneParam> tune;
    std::vector<LaunchParam> launch;
    std::string lastAttr;
    while (is(Tok::At)) {
      if (!parseAttribute(tune, launch, lastAttr))
        return nullptr;
    }
    if (!lastAttr.empty() && !is(Tok::KwKernel)) {
      fail(is(Tok::KwFn) ? "@" + lastAttr + "(...) goes before a kernel, not a helper"
                         : "expected 'kernel' after the @" + lastAttr +
                               "(...) attribute, found " + describe());
      return nullptr;
    }
    if (is(Tok::KwKernel)) {
      auto k = parseKernel();
      if (!k)
        return nullptr;
      k->tune = std::move(tune);
      k->launch = std::move(launch);
      k->requires_ = std::move(pendingRequires);
      pendingRequires.clear();
      module->kernels.push_back(std::move(k));
      continue;
    }
    if (is(Tok::KwFn)) {
      auto f = parseFn();
      if (!f)
        return nullptr;
      module->fns.push_back(std::move(f));
      continue;
    }
    fail("expected 'kernel' at top level, found " + describe());
    return nullptr;
  }
  for (auto &k : module->kernels)
    k->fns = &module->fns;
  if (module->kernels.empty() && needKernels) {
    diags.error(tok.loc, "no kernels in this file; a file needs at least one "
                         "'kernel name(...) { ... }'");
    return nullptr;
  }
  return module;
}

bool Parser::parseAttribute(std::vector<TuneParam> &tune,
                            std::vector<LaunchParam> &launch, std::string &name) {
  advance(); // '@'
  if (!is(Tok::Ident) || (tok.text != "tune" && tok.text != "launch" && tok.text != "require"))
    return fail("unknown attribute " + describe() +
                "; the attributes are @tune(...), @launch(...) and @require(...)");
  name = tok.text.str();
  advance();
  if (name == "require")
    return parseRequire();
  return name == "tune" ? parseTune(tune) : parseLaunch(launch);
}

bool Parser::parseRequire() {
  if (!expect(Tok::LParen, "after '@require'"))
    return false;
  RequireDecl r;
  r.loc = tok.loc;
  r.cond = parseExpr();
  if (!r.cond)
    return false;
  if (!expect(Tok::Comma, "after the condition (write @require(x.shape[1] <= BN, \"why\"))"))
    return false;
  if (!is(Tok::String))
    return fail("expected the message of @require(...), a string, found " + describe());
  ExprPtr msg = parseExpr();
  if (!msg)
    return false;
  r.message = msg->name;
  pendingRequires.push_back(std::move(r));
  return expect(Tok::RParen, "to close @require(...)");
}

bool Parser::parseLaunch(std::vector<LaunchParam> &launch) {
  if (!expect(Tok::LParen, "after '@launch'"))
    return false;
  do {
    LaunchParam p;
    if (!expectName("a launch setting in @launch (num_warps or min_blocks_per_sm)", p.name,
                    p.loc))
      return false;
    if (!expect(Tok::Assign, "after the setting name (write num_warps = 4)"))
      return false;
    p.value = parseExpr();
    if (!p.value)
      return false;
    launch.push_back(std::move(p));
  } while (consumeIf(Tok::Comma));
  return expect(Tok::RParen, "to close @launch(...)");
}

bool Parser::parseTune(std::vector<TuneParam> &tune) {
  if (!expect(Tok::LParen, "after '@tune'"))
    return false;
  do {
    TuneParam t;
    if (!expectName("a compile-time parameter name in @tune", t.name, t.loc))
      return false;
    if (!expect(Tok::KwIn, "after the parameter name (write BLOCK in [256, 512])"))
      return false;
    if (!expect(Tok::LBracket, "to start the list of candidate values"))
      return false;
    if (!parseExprList(Tok::RBracket, t.values, "to close the list of candidate values"))
      return false;
    tune.push_back(std::move(t));
  } while (consumeIf(Tok::Comma));
  return expect(Tok::RParen, "to close @tune(...)");
}

/// `kernel`/`fn`, the name and the optional `<compile-time parameters>`.
bool Parser::parseHeader(const char *what, std::string &name, llvm::SMLoc &loc,
                         std::vector<ConstParam> &constParams) {
  std::string keyword = tok.text.str();
  advance();
  if (!expectName(llvm::Twine(what) + " name after '" + keyword + "'", name, loc))
    return false;
  if (consumeIf(Tok::Lt)) {
    do {
      ConstParam cp;
      if (!parseConstParam(cp))
        return false;
      constParams.push_back(std::move(cp));
    } while (consumeIf(Tok::Comma));
    if (!expect(Tok::Gt, "to close the compile-time parameters"))
      return false;
  }
  return true;
}

/// `(a, b, ...)`: the untyped parameters of a helper or a combiner.
bool Parser::parseParamNames(FnDecl &f, const std::string &what) {
  if (!expect(Tok::LParen, ("to start " + what).c_str()))
    return false;
  if (!is(Tok::RParen)) {
    do {
      if (!is(Tok::Ident)) {
        fail("expected a parameter name, found " + describe());
        return false;
      }
      f.params.push_back({tok.text.str(), tok.loc});
      advance();
      if (is(Tok::Colon)) {
        fail("a helper's parameters take the types of the arguments; write just the name");
        return false;
      }
    } while (consumeIf(Tok::Comma));
  }
  return expect(Tok::RParen, ("to close " + what).c_str());
}

std::unique_ptr<FnDecl> Parser::parseFn() {
  auto f = std::make_unique<FnDecl>();
  if (!parseHeader("a helper", f->name, f->loc, f->constParams))
    return nullptr;
  for (const ConstParam &cp : f->constParams)
    if (cp.kind != ConstParam::Kind::Int) {
      diags.error(cp.loc, "a helper's compile-time parameters are 'int'; types follow the arguments");
      return nullptr;
    }
  if (!parseParamNames(*f, "the helper's parameters"))
    return nullptr;
  inFn = true;
  bool ok = parseBlock(f->body, "the helper body");
  inFn = false;
  if (!ok)
    return nullptr;
  return f;
}

std::unique_ptr<KernelDecl> Parser::parseKernel() {
  auto k = std::make_unique<KernelDecl>();
  if (!parseHeader("a kernel", k->name, k->loc, k->constParams))
    return nullptr;
  if (!expect(Tok::LParen, "to start the kernel parameters"))
    return nullptr;
  if (!is(Tok::RParen)) {
    do {
      Param p;
      if (!expectName("a parameter name", p.name, p.loc))
        return nullptr;
      if (!expect(Tok::Colon, "after the parameter name"))
        return nullptr;
      p.type = parseType();
      if (!p.type)
        return nullptr;
      k->params.push_back(std::move(p));
    } while (consumeIf(Tok::Comma));
  }
  if (!expect(Tok::RParen, "to close the kernel parameters"))
    return nullptr;
  if (is(Tok::KwGrid)) {
    k->gridLoc = tok.loc;
    advance();
    if (!expect(Tok::LParen, "after 'grid'"))
      return nullptr;
    if (!parseExprList(Tok::RParen, k->grid, "in the grid clause"))
      return nullptr;
  }
  if (!parseBlock(k->body))
    return nullptr;
  return k;
}

bool Parser::parseConstParam(ConstParam &cp) {
  if (!expectName("a compile-time parameter name", cp.name, cp.loc))
    return false;
  if (!expect(Tok::Colon, "after the compile-time parameter name"))
    return false;
  if (is(Tok::Ident) && tok.text == "int") {
    cp.kind = ConstParam::Kind::Int;
    advance();
    if (consumeIf(Tok::Assign)) {
      cp.defaultInt = parseAdditive();
      if (!cp.defaultInt)
        return false;
    }
    return true;
  }
  if (is(Tok::Ident) && tok.text == "type") {
    cp.kind = ConstParam::Kind::Type;
    advance();
    if (consumeIf(Tok::Assign)) {
      cp.defaultType = parseType();
      if (!cp.defaultType)
        return false;
    }
    return true;
  }
  return fail("a compile-time parameter is 'int' or 'type', found " + describe());
}

std::unique_ptr<TypeExpr> Parser::parseType() {
  auto t = std::make_unique<TypeExpr>();
  t->loc = tok.loc;
  if (consumeIf(Tok::KwTensor)) {
    t->kind = TypeExpr::Kind::Tensor;
    if (!expect(Tok::Lt, "after 'tensor' (write tensor<f32, 2>)"))
      return nullptr;
    t->element = parseType();
    if (!t->element)
      return nullptr;
    if (!expect(Tok::Comma, "between the element type and the rank"))
      return nullptr;
    if (!is(Tok::Int)) {
      fail("expected the tensor rank (an integer from 1 to 4), found " + describe());
      return nullptr;
    }
    if (tok.intValue < 1 || tok.intValue > 4) {
      fail("tensor rank must be between 1 and 4, found " + describe());
      return nullptr;
    }
    t->rank = static_cast<unsigned>(tok.intValue);
    advance();
    if (!expect(Tok::Gt, "to close the tensor type"))
      return nullptr;
    return t;
  }
  if (!is(Tok::Ident)) {
    fail("expected a type, found " + describe());
    return nullptr;
  }
  if (auto s = parseScalarType(tok.text.str())) {
    t->kind = TypeExpr::Kind::Scalar;
    t->scalar = *s;
  } else {
    t->kind = TypeExpr::Kind::Named;
    t->name = tok.text.str();
  }
  advance();
  return t;
}

bool Parser::parseBlock(std::vector<StmtPtr> &body, const char *what) {
  if (!expect(Tok::LBrace, (std::string("to start ") + what).c_str()))
    return false;
  DepthGuard guard(blockDepth);
  if (blockDepth > kMaxBlockDepth)
    return fail("blocks are nested too deeply (more than 256 levels of if, for and while)");
  while (!is(Tok::RBrace)) {
    if (is(Tok::Eof))
      return fail("expected '}' to close the block, found end of file");
    auto s = parseStmt();
    if (!s)
      return false;
    body.push_back(std::move(s));
  }
  advance();
  return true;
}

StmtPtr Parser::parseStmt() {
  llvm::SMLoc loc = tok.loc;
  if (is(Tok::KwLet) || is(Tok::KwVar)) {
    auto s = std::make_unique<Stmt>(Stmt::Kind::Let, loc);
    s->isVar = is(Tok::KwVar);
    advance();
    if (!expectName(llvm::Twine("a name after '") + (s->isVar ? "var" : "let") + "'", s->name,
                    s->nameLoc))
      return nullptr;
    if (!expect(Tok::Assign, "after the name (every binding needs a value)"))
      return nullptr;
    s->value = parseExpr();
    if (!s->value || !expect(Tok::Semi, "after the statement"))
      return nullptr;
    return s;
  }
  if (is(Tok::KwFor)) {
    auto s = std::make_unique<Stmt>(Stmt::Kind::For, loc);
    advance();
    if (!expectName("a loop variable after 'for'", s->name, s->nameLoc))
      return nullptr;
    if (!expect(Tok::KwIn, "after the loop variable (write for i in 0 .. n { ... })"))
      return nullptr;
    // Bounds stop before comparisons so that `..` and `{` end them.
    s->lower = parseAdditive();
    if (!s->lower || !expect(Tok::DotDot, "between the loop bounds"))
      return nullptr;
    s->upper = parseAdditive();
    if (!s->upper)
      return nullptr;
    if (consumeIf(Tok::KwStep)) {
      s->step = parseAdditive();
      if (!s->step)
        return nullptr;
    }
    if (!parseBlock(s->body, "the loop body"))
      return nullptr;
    return s;
  }
  if (is(Tok::KwWhile)) {
    auto s = std::make_unique<Stmt>(Stmt::Kind::While, loc);
    advance();
    s->value = parseExpr();
    if (!s->value || !parseBlock(s->body, "the loop body"))
      return nullptr;
    return s;
  }
  if (is(Tok::KwIf)) {
    // if ... else if ... else if ...: each else-if is an if inside the
    // previous else branch, parsed in this loop (a chain of 255 branches
    // used to exhaust the nesting limit).
    auto s = std::make_unique<Stmt>(Stmt::Kind::If, loc);
    Stmt *current = s.get();
    for (unsigned branches = 1;; ++branches) {
      advance(); // 'if'
      current->value = parseExpr();
      if (!current->value || !parseBlock(current->body, "the 'if' branch"))
        return nullptr;
      if (!consumeIf(Tok::KwElse))
        break;
      if (!is(Tok::KwIf)) {
        if (!parseBlock(current->elseBody, "the 'else' branch"))
          return nullptr;
        break;
      }
      if (branches == kMaxElseIfChain) {
        fail("this 'else if' chain has more than 1024 branches; split it or look the "
             "value up (take, gather)");
        return nullptr;
      }
      auto next = std::make_unique<Stmt>(Stmt::Kind::If, tok.loc);
      Stmt *n = next.get();
      current->elseBody.push_back(std::move(next));
      current = n;
    }
    return s;
  }
  if (is(Tok::KwReturn)) {
    if (!inFn) {
      fail("'return' is only allowed in helper functions ('fn'); a kernel ends at its '}'");
      return nullptr;
    }
    auto s = std::make_unique<Stmt>(Stmt::Kind::Return, loc);
    advance();
    s->value = parseExpr();
    if (!s->value || !expect(Tok::Semi, "after the returned value"))
      return nullptr;
    return s;
  }
  auto value = parseExpr();
  if (!value)
    return nullptr;
  if (is(Tok::Assign)) {
    if (value->kind != Expr::Kind::Name) {
      fail("only a 'var' name can be assigned to");
      return nullptr;
    }
    auto s = std::make_unique<Stmt>(Stmt::Kind::Assign, loc);
    s->name = value->name;
    s->nameLoc = value->loc;
    advance();
    s->value = parseExpr();
    if (!s->value || !expect(Tok::Semi, "after the assignment"))
      return nullptr;
    return s;
  }
  auto s = std::make_unique<Stmt>(Stmt::Kind::ExprStmt, loc);
  s->value = std::move(value);
  if (!expect(Tok::Semi, "after the statement"))
    return nullptr;
  return s;
}

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
    // Only the type-taking builtins have `<T>`: elsewhere '<' is less-than.
    if (is(Tok::Lt) && (name == "cast" || name == "zeros" || name == "full")) {
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

/// Composite functions users expect, written in the language itself and
/// available in every program as helpers (a program's own `fn` of the same
/// name replaces one). docs/language.md lists them.
static const char kPrelude[] = R"tile(
fn gelu(x) { return 0.5 * x * (1.0 + erf(x * 0.7071067811865476)); }
fn gelu_tanh(x) { return 0.5 * x * (1.0 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x))); }
fn silu(x) { return x * sigmoid(x); }
fn softplus(x) { return max(x, 0.0) + log(1.0 + exp(-abs(x))); }
fn logsumexp(x) { let m = max(x); return m + log(sum(exp(x - m))); }
fn logsumexp_rows(x) {
    let m = max(x, axis = 1);
    return m + log(sum(exp(x - expand_dims(m, 1)), axis = 1));
}
)tile";

std::unique_ptr<ModuleDecl> tilec::parseModule(DiagEngine &diags) {
  Parser p(diags);
  auto m = p.parseModule();
  if (diags.hadError())
    return nullptr;
  llvm::SourceMgr &srcMgr = diags.sourceMgr();
  unsigned id = srcMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBuffer(llvm::StringRef(kPrelude, sizeof(kPrelude) - 1),
                                       "<prelude>"),
      llvm::SMLoc());
  Parser pp(diags, srcMgr.getMemoryBuffer(id)->getBuffer(), /*needKernels=*/false);
  auto prelude = pp.parseModule();
  if (!prelude || diags.hadError())
    return nullptr;
  for (auto &f : prelude->fns)
    if (llvm::none_of(m->fns, [&](const auto &g) { return g->name == f->name; }))
      m->fns.push_back(std::move(f));
  return m;
}

static std::unique_ptr<TypeExpr> cloneType(const TypeExpr *t) {
  if (!t)
    return nullptr;
  auto c = std::make_unique<TypeExpr>();
  c->kind = t->kind;
  c->loc = t->loc;
  c->scalar = t->scalar;
  c->name = t->name;
  c->element = cloneType(t->element.get());
  c->rank = t->rank;
  return c;
}

ExprPtr tilec::cloneExpr(const Expr &e) {
  auto c = std::make_unique<Expr>(e.kind, e.loc);
  c->op = e.op;
  c->intValue = e.intValue;
  c->floatValue = e.floatValue;
  c->name = e.name;
  c->typeArg = cloneType(e.typeArg.get());
  c->argName = e.argName;
  c->lambda = e.lambda;
  for (auto &a : e.args)
    c->args.push_back(cloneExpr(*a));
  for (auto &s : e.body)
    c->body.push_back(cloneStmt(*s));
  return c;
}

StmtPtr tilec::cloneStmt(const Stmt &s) {
  auto c = std::make_unique<Stmt>(s.kind, s.loc);
  c->isVar = s.isVar;
  c->name = s.name;
  c->nameLoc = s.nameLoc;
  if (s.value)
    c->value = cloneExpr(*s.value);
  if (s.lower)
    c->lower = cloneExpr(*s.lower);
  if (s.upper)
    c->upper = cloneExpr(*s.upper);
  if (s.step)
    c->step = cloneExpr(*s.step);
  for (auto &b : s.body)
    c->body.push_back(cloneStmt(*b));
  for (auto &b : s.elseBody)
    c->elseBody.push_back(cloneStmt(*b));
  return c;
}
