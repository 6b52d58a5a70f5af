//===- ParserImpl.h - the parser's class, shared by its two files -*- C++ -*-===//
//
// The recursive-descent parser (grammar in Parser.cpp) along its seam:
// Parser.cpp parses declarations and statements, ParserExpr.cpp expressions.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_FRONTEND_PARSERIMPL_H
#define TILEC_FRONTEND_PARSERIMPL_H

#include "tilec/Frontend/Parser.h"

#include "llvm/Support/MemoryBuffer.h"

namespace tilec::parser {

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
  bool parseHeuristic();
  bool parseNamedExprs(const char *attr, const char *what, const char *hint,
                       std::vector<NamedExpr> &out);
  std::vector<HeuristicDecl> pendingHeuristics; ///< @heuristic(...)s of the next kernel
  bool parseTuned();
  std::vector<TunedTable> pendingTuned; ///< @tuned(...)s of the next kernel
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

} // namespace tilec::parser

#endif // TILEC_FRONTEND_PARSERIMPL_H
