//===- Parser.h - Recursive-descent parser -----------------------*- C++ -*-===//
//
// Parses a whole `.tile` file into an AST. The parser stops at the first
// syntax error (after reporting it) and returns null; it never aborts on bad
// input, and it bounds nesting depth so that hostile input cannot overflow
// the stack.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_FRONTEND_PARSER_H
#define TILEC_FRONTEND_PARSER_H

#include "tilec/Frontend/AST.h"
#include "tilec/Frontend/Lexer.h"

namespace tilec {

/// Parses the main buffer of `diags`' source manager.
std::unique_ptr<ModuleDecl> parseModule(DiagEngine &diags);

} // namespace tilec

#endif // TILEC_FRONTEND_PARSER_H
