//===- Lexer.cpp - Tokens of the tile language ----------------------------===//

#include "tilec/Frontend/Lexer.h"

#include "llvm/ADT/StringSwitch.h"

#include <cerrno>
#include <cstdlib>

using namespace tilec;

const char *tilec::tokName(Tok kind) {
  switch (kind) {
  case Tok::Eof: return "end of file";
  case Tok::Error: return "invalid token";
  case Tok::Ident: return "identifier";
  case Tok::Int: return "integer";
  case Tok::Float: return "number";
  case Tok::String: return "string";
  case Tok::KwKernel: return "'kernel'";
  case Tok::KwFn: return "'fn'";
  case Tok::KwLet: return "'let'";
  case Tok::KwVar: return "'var'";
  case Tok::KwGrid: return "'grid'";
  case Tok::KwFor: return "'for'";
  case Tok::KwIn: return "'in'";
  case Tok::KwIf: return "'if'";
  case Tok::KwElse: return "'else'";
  case Tok::KwWhile: return "'while'";
  case Tok::KwReturn: return "'return'";
  case Tok::KwStep: return "'step'";
  case Tok::KwTrue: return "'true'";
  case Tok::KwFalse: return "'false'";
  case Tok::KwTensor: return "'tensor'";
  case Tok::LParen: return "'('";
  case Tok::RParen: return "')'";
  case Tok::LBracket: return "'['";
  case Tok::RBracket: return "']'";
  case Tok::LBrace: return "'{'";
  case Tok::RBrace: return "'}'";
  case Tok::Lt: return "'<'";
  case Tok::Gt: return "'>'";
  case Tok::Le: return "'<='";
  case Tok::Ge: return "'>='";
  case Tok::EqEq: return "'=='";
  case Tok::NotEq: return "'!='";
  case Tok::Assign: return "'='";
  case Tok::Plus: return "'+'";
  case Tok::Minus: return "'-'";
  case Tok::Star: return "'*'";
  case Tok::Slash: return "'/'";
  case Tok::Percent: return "'%'";
  case Tok::Comma: return "','";
  case Tok::Semi: return "';'";
  case Tok::Colon: return "':'";
  case Tok::Dot: return "'.'";
  case Tok::DotDot: return "'..'";
  case Tok::Bang: return "'!'";
  case Tok::AmpAmp: return "'&&'";
  case Tok::PipePipe: return "'||'";
  case Tok::Arrow: return "'->'";
  case Tok::At: return "'@'";
  case Tok::Amp: return "'&'";
  case Tok::Pipe: return "'|'";
  case Tok::Caret: return "'^'";
  case Tok::Tilde: return "'~'";
  case Tok::Shl: return "'<<'";
  case Tok::Shr: return "'>>'";
  }
  return "token";
}

bool Lexer::nextIsTypeArgument() const {
  DiagEngine quiet(diags.sourceMgr());
  Lexer ahead(buffer, quiet);
  ahead.cur = cur;
  return ahead.next().kind == Tok::Ident && ahead.next().kind == Tok::Gt;
}

Lexer::Lexer(llvm::StringRef buffer, DiagEngine &diags)
    : buffer(buffer), cur(buffer.begin()), diags(diags) {
  // A UTF-8 byte-order mark (editors on Windows write one) is not source.
  if (buffer.starts_with("\xEF\xBB\xBF"))
    cur += 3;
}

Token Lexer::make(Tok kind, const char *start) {
  Token t;
  t.kind = kind;
  t.text = llvm::StringRef(start, cur - start);
  t.loc = llvm::SMLoc::getFromPointer(start);
  return t;
}

Token Lexer::error(const char *at, const llvm::Twine &msg) {
  diags.error(llvm::SMLoc::getFromPointer(at), msg);
  return make(Tok::Error, at);
}

static bool isIdentStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
static bool isDigit(char c) { return c >= '0' && c <= '9'; }

Token Lexer::next() {
  const char *end = buffer.end();
  // Skip whitespace and comments.
  while (cur < end) {
    char c = *cur;
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++cur;
    } else if (c == '/' && cur + 1 < end && cur[1] == '/') {
      while (cur < end && *cur != '\n')
        ++cur;
    } else if (c == '/' && cur + 1 < end && cur[1] == '*') {
      const char *start = cur;
      cur += 2;
      while (cur + 1 < end && !(cur[0] == '*' && cur[1] == '/'))
        ++cur;
      if (cur + 1 >= end) {
        cur = end;
        return error(start, "unterminated block comment");
      }
      cur += 2;
    } else {
      break;
    }
  }
  const char *start = cur;
  if (cur >= end)
    return make(Tok::Eof, start);

  char c = *cur;
  if (isIdentStart(c)) {
    while (cur < end && (isIdentStart(*cur) || isDigit(*cur)))
      ++cur;
    llvm::StringRef word(start, cur - start);
    Tok kind = llvm::StringSwitch<Tok>(word)
                   .Case("kernel", Tok::KwKernel)
                   .Case("fn", Tok::KwFn)
                   .Case("let", Tok::KwLet)
                   .Case("var", Tok::KwVar)
                   .Case("grid", Tok::KwGrid)
                   .Case("for", Tok::KwFor)
                   .Case("in", Tok::KwIn)
                   .Case("if", Tok::KwIf)
                   .Case("else", Tok::KwElse)
                   .Case("while", Tok::KwWhile)
                   .Case("return", Tok::KwReturn)
                   .Case("step", Tok::KwStep)
                   .Case("true", Tok::KwTrue)
                   .Case("false", Tok::KwFalse)
                   .Case("tensor", Tok::KwTensor)
                   .Default(Tok::Ident);
    return make(kind, start);
  }
  if (isDigit(c))
    return lexNumber(start);
  if (c == '"')
    return lexString(start);

  ++cur;
  auto two = [&](char second, Tok yes, Tok no) {
    if (cur < end && *cur == second) {
      ++cur;
      return make(yes, start);
    }
    return make(no, start);
  };
  switch (c) {
  case '(': return make(Tok::LParen, start);
  case ')': return make(Tok::RParen, start);
  case '[': return make(Tok::LBracket, start);
  case ']': return make(Tok::RBracket, start);
  case '{': return make(Tok::LBrace, start);
  case '}': return make(Tok::RBrace, start);
  case '+': return make(Tok::Plus, start);
  case '*': return make(Tok::Star, start);
  case '/': return make(Tok::Slash, start);
  case '%': return make(Tok::Percent, start);
  case ',': return make(Tok::Comma, start);
  case ';': return make(Tok::Semi, start);
  case ':': return make(Tok::Colon, start);
  case '@': return make(Tok::At, start);
  case '-': return two('>', Tok::Arrow, Tok::Minus);
  case '<':
    if (cur < end && *cur == '<') {
      ++cur;
      return make(Tok::Shl, start);
    }
    return two('=', Tok::Le, Tok::Lt);
  case '>':
    if (cur < end && *cur == '>') {
      ++cur;
      return make(Tok::Shr, start);
    }
    return two('=', Tok::Ge, Tok::Gt);
  case '=': return two('=', Tok::EqEq, Tok::Assign);
  case '!': return two('=', Tok::NotEq, Tok::Bang);
  case '.': return two('.', Tok::DotDot, Tok::Dot);
  case '&': return two('&', Tok::AmpAmp, Tok::Amp);
  case '|': return two('|', Tok::PipePipe, Tok::Pipe);
  case '^': return make(Tok::Caret, start);
  case '~': return make(Tok::Tilde, start);
  default:
    break;
  }
  if (static_cast<unsigned char>(c) < 32 || static_cast<unsigned char>(c) >= 127)
    return error(start, "unexpected byte 0x" +
                            llvm::Twine::utohexstr(static_cast<unsigned char>(c)) +
                            " in source");
  return error(start, llvm::Twine("unexpected character '") + llvm::Twine(c) + "'");
}

Token Lexer::lexNumber(const char *start) {
  const char *end = buffer.end();
  bool isFloat = false;
  bool isHex = false;
  if (*cur == '0' && cur + 1 < end && (cur[1] == 'x' || cur[1] == 'X')) {
    isHex = true;
    cur += 2;
    while (cur < end && (isDigit(*cur) || (*cur >= 'a' && *cur <= 'f') ||
                         (*cur >= 'A' && *cur <= 'F') || *cur == '_'))
      ++cur;
  } else {
    while (cur < end && (isDigit(*cur) || *cur == '_'))
      ++cur;
    // A '.' followed by a digit makes a float; `0..n` is a range.
    if (cur + 1 < end && *cur == '.' && isDigit(cur[1])) {
      isFloat = true;
      ++cur;
      while (cur < end && (isDigit(*cur) || *cur == '_'))
        ++cur;
    } else if (cur + 1 < end && *cur == '.' && cur[1] != '.' &&
               !isIdentStart(cur[1])) {
      isFloat = true; // "1." is a float
      ++cur;
    }
    if (cur < end && (*cur == 'e' || *cur == 'E')) {
      const char *save = cur;
      ++cur;
      if (cur < end && (*cur == '+' || *cur == '-'))
        ++cur;
      if (cur < end && isDigit(*cur)) {
        isFloat = true;
        while (cur < end && isDigit(*cur))
          ++cur;
      } else {
        cur = save;
      }
    }
  }
  if (cur < end && (isIdentStart(*cur) || isDigit(*cur))) {
    while (cur < end && (isIdentStart(*cur) || isDigit(*cur)))
      ++cur;
    return error(start, "invalid number '" + llvm::StringRef(start, cur - start) + "'");
  }
  Token t = make(isFloat ? Tok::Float : Tok::Int, start);
  std::string digits;
  for (char ch : t.text)
    if (ch != '_')
      digits.push_back(ch);
  if (isHex && digits.size() <= 2)
    return error(start, "hexadecimal literal needs digits after '0x'");
  errno = 0;
  if (isFloat) {
    t.floatValue = std::strtod(digits.c_str(), nullptr);
    if (errno == ERANGE)
      return error(start, "floating-point literal '" + t.text + "' is out of range");
  } else {
    char *stop = nullptr;
    t.intValue = std::strtoull(digits.c_str(), &stop, isHex ? 16 : 10);
    if (errno == ERANGE || t.intValue > static_cast<uint64_t>(INT64_MAX))
      return error(start, "integer literal '" + t.text + "' does not fit in 64 bits");
  }
  return t;
}

Token Lexer::lexString(const char *start) {
  const char *end = buffer.end();
  ++cur;
  while (cur < end && *cur != '"' && *cur != '\n') {
    if (*cur == '\\' && cur + 1 < end)
      ++cur;
    ++cur;
  }
  if (cur >= end || *cur != '"')
    return error(start, "unterminated string literal");
  ++cur;
  return make(Tok::String, start);
}
