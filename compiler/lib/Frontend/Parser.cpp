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

#include "ParserImpl.h"

using namespace tilec;
using namespace tilec::parser;

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
      k->heuristics = std::move(pendingHeuristics);
      pendingHeuristics.clear();
      k->tuned = std::move(pendingTuned);
      pendingTuned.clear();
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
  if (!is(Tok::Ident) || (tok.text != "tune" && tok.text != "launch" && tok.text != "require" &&
                          tok.text != "heuristic" && tok.text != "tuned"))
    return fail("unknown attribute " + describe() +
                "; the attributes are @tune(...), @launch(...), @require(...), "
                "@heuristic(...) and @tuned(...)");
  name = tok.text.str();
  advance();
  if (name == "require")
    return parseRequire();
  if (name == "heuristic")
    return parseHeuristic();
  if (name == "tuned")
    return parseTuned();
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
  ExprPtr msg = parsePrimary(); // the string alone ("a" + x is not a message)
  if (!msg)
    return false;
  r.message = msg->name;
  pendingRequires.push_back(std::move(r));
  return expect(Tok::RParen, "to close @require(...)");
}

/// `(NAME = expr, ...)` of `@attr`, appended to `out`; `what` names a NAME
/// and `hint` shows one written out, for the errors.
bool Parser::parseNamedExprs(const char *attr, const char *what, const char *hint,
                             std::vector<NamedExpr> &out) {
  if (!expect(Tok::LParen, ("after '@" + std::string(attr) + "'").c_str()))
    return false;
  do {
    NamedExpr n;
    if (!expectName(what, n.name, n.loc))
      return false;
    if (!expect(Tok::Assign, hint))
      return false;
    n.value = parseExpr();
    if (!n.value)
      return false;
    out.push_back(std::move(n));
  } while (consumeIf(Tok::Comma));
  return expect(Tok::RParen, ("to close @" + std::string(attr) + "(...)").c_str());
}

bool Parser::parseHeuristic() {
  return parseNamedExprs("heuristic", "a compile-time parameter name in @heuristic",
                         "after the parameter name (write BM = where(C.shape[0] <= 64, 64, 128))",
                         pendingHeuristics);
}

/// `@tuned(key = (e, ...), (v, ...) -> (NAME = c, ...), ...)`.
bool Parser::parseTuned() {
  TunedTable t;
  t.loc = tok.loc;
  if (!expect(Tok::LParen, "after '@tuned'"))
    return false;
  if (!is(Tok::Ident) || tok.text != "key")
    return fail("expected 'key = (...)' first in @tuned(...), the expressions a row's values "
                "match (write @tuned(key = (C.shape[0], A.shape[1]), (4096, 512) -> (BN = 128)))");
  advance();
  if (!expect(Tok::Assign, "after 'key'") || !expect(Tok::LParen, "to start the key's expressions") ||
      !parseExprList(Tok::RParen, t.key, "to close the key's expressions"))
    return false;
  if (t.key.empty())
    return fail("the key of @tuned(...) needs at least one expression");
  while (consumeIf(Tok::Comma)) {
    TunedRow row;
    row.loc = tok.loc;
    if (!expect(Tok::LParen, "to start a row of @tuned(...): (the key's values) -> (NAME = value, ...)") ||
        !parseExprList(Tok::RParen, row.key, "to close the row's key values"))
      return false;
    if (!expect(Tok::Arrow, "after the row's key values (write (4096, 512) -> (BN = 128))") ||
        !expect(Tok::LParen, "after '->'"))
      return false;
    do {
      NamedExpr n;
      if (!expectName("a compile-time parameter name in a row of @tuned", n.name, n.loc) ||
          !expect(Tok::Assign, "after the parameter name (write BN = 128)"))
        return false;
      n.value = parseExpr();
      if (!n.value)
        return false;
      row.values.push_back(std::move(n));
    } while (consumeIf(Tok::Comma));
    if (!expect(Tok::RParen, "to close the row's parameters"))
      return false;
    t.rows.push_back(std::move(row));
  }
  pendingTuned.push_back(std::move(t));
  return expect(Tok::RParen, "to close @tuned(...)");
}

bool Parser::parseLaunch(std::vector<LaunchParam> &launch) {
  return parseNamedExprs("launch", "a launch setting in @launch (num_warps, min_blocks_per_sm, cluster, pingpong, persistent, group_rows, pair_tiles, ftz, late_turn or turns)",
                         "after the setting name (write num_warps = 4)", launch);
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
