//===- Lexer.h - Tokens of the tile language --------------------*- C++ -*-===//
//
// Splits `.tile` source into tokens. Every token remembers where it starts
// (an llvm::SMLoc into the source buffer) so that errors point at it.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_FRONTEND_LEXER_H
#define TILEC_FRONTEND_LEXER_H

#include "tilec/Frontend/Diagnostics.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/SMLoc.h"

#include <cstdint>
#include <string>

namespace tilec {

enum class Tok {
  Eof, Error,
  Ident, Int, Float, String,
  // keywords
  KwKernel, KwFn, KwLet, KwVar, KwGrid, KwFor, KwIn, KwIf, KwElse, KwWhile,
  KwReturn, KwStep, KwTrue, KwFalse, KwTensor,
  // punctuation
  LParen, RParen, LBracket, RBracket, LBrace, RBrace, Lt, Gt, Le, Ge, EqEq,
  NotEq, Assign, Plus, Minus, Star, Slash, Percent, Comma, Semi, Colon, Dot,
  DotDot, Bang, AmpAmp, PipePipe, Arrow, At, Amp, Pipe, Caret, Tilde, Shl, Shr,
};

/// Spelling of a token kind for messages ("'('", "identifier").
const char *tokName(Tok kind);

struct Token {
  Tok kind = Tok::Eof;
  llvm::StringRef text;
  llvm::SMLoc loc;
  uint64_t intValue = 0;
  double floatValue = 0;
};

/// A hand-written lexer over one source buffer. Lexical errors are reported
/// through the diagnostic engine and produce a `Tok::Error` token.
class Lexer {
public:
  Lexer(llvm::StringRef buffer, DiagEngine &diags);
  Token next();
  /// Whether the next two tokens are a name and '>' (`f32>`, `T>`), read
  /// without consuming them or reporting their errors: after `bits <`,
  /// a type argument rather than a comparison with a variable named bits.
  bool nextIsTypeArgument() const;

private:
  Token make(Tok kind, const char *start);
  Token lexNumber(const char *start);
  Token lexString(const char *start);
  Token error(const char *at, const llvm::Twine &msg);

  llvm::StringRef buffer;
  const char *cur;
  DiagEngine &diags;
};

} // namespace tilec

#endif // TILEC_FRONTEND_LEXER_H
