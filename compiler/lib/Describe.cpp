//===- Describe.cpp - a program's kernels as written, without compiling ----===//
//
// The parse-only signature bindings need before they compile: each kernel's
// compile-time parameters (kind, default as written) and its parameters with
// their declared types (a type parameter's name, not only what it resolves
// to), the @tune space and the grid as written. Built as JSON for the C API
// (tilec_describe) so that bindings read it with their standard library.
//
//===----------------------------------------------------------------------===//

#include "tilec/Compiler.h"
#include "tilec/Frontend/Parser.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

#include <cctype>

using namespace tilec;

static void jsonString(std::string &out, llvm::StringRef s) {
  out += '"';
  for (char c : s) {
    switch (c) {
    case '"': out += "\\\""; break;
    case '\\': out += "\\\\"; break;
    case '\n': out += "\\n"; break;
    case '\t': out += "\\t"; break;
    default:
      if (static_cast<unsigned char>(c) < 0x20) {
        char buf[8];
        snprintf(buf, sizeof(buf), "\\u%04x", c);
        out += buf;
      } else {
        out += c;
      }
    }
  }
  out += '"';
}

/// The first character of `e` in the source (an operator's location is
/// its operator's; the parser bounds the tree's height).
static const char *leftmost(const Expr &e) {
  const char *p = e.loc.getPointer();
  for (const ExprPtr &a : e.args)
    if (a)
      if (const char *q = leftmost(*a); q && (!p || q < p))
        p = q;
  return p;
}

/// The source text of `e`: from its first character (and the grouping
/// parentheses around it) up to the `,` or `>` / `)` / `]` that closes the
/// list it is in.
static std::string exprText(const llvm::SourceMgr &srcMgr, const Expr &e) {
  const llvm::MemoryBuffer *buf = srcMgr.getMemoryBuffer(srcMgr.getMainFileID());
  const char *begin = buf->getBufferStart(), *end = buf->getBufferEnd();
  const char *p = leftmost(e);
  if (!p || p < begin || p >= end)
    return "";
  auto isIdent = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (;;) {
    const char *q = p;
    while (q > begin && (q[-1] == ' ' || q[-1] == '\t'))
      --q;
    if (q == begin || q[-1] != '(')
      break;
    const char *r = q - 1; // a '(': grouping unless it opens a call
    while (r > begin && (r[-1] == ' ' || r[-1] == '\t'))
      --r;
    if (r > begin && isIdent(r[-1]))
      break;
    p = q - 1;
  }
  int depth = 0;
  const char *q = p;
  for (; q < end; ++q) {
    char c = *q;
    if (c == '(' || c == '[')
      ++depth;
    else if ((c == ')' || c == ']') && depth-- == 0)
      break;
    else if ((c == ',' || c == '>' || c == '\n') && depth == 0)
      break;
  }
  return llvm::StringRef(p, q - p).trim().str();
}

static std::string typeText(const TypeExpr &t) {
  switch (t.kind) {
  case TypeExpr::Kind::Scalar:
    return scalarTypeName(t.scalar);
  case TypeExpr::Kind::Named:
    return t.name;
  case TypeExpr::Kind::Tensor:
    return "tensor<" + typeText(*t.element) + ", " + std::to_string(t.rank) + ">";
  }
  return "";
}

bool tilec::describeSource(std::string_view source, const std::string &fileName,
                           std::string &json, std::string &diagnostics) {
  llvm::SourceMgr srcMgr;
  srcMgr.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(
                                llvm::StringRef(source.data(), source.size()), fileName),
                            llvm::SMLoc());
  DiagEngine diags(srcMgr);
  std::unique_ptr<ModuleDecl> ast = parseModule(diags);
  diagnostics = diags.text();
  if (!ast || diags.hadError())
    return false;
  json = "{\"version\": 1, \"kernels\": [";
  for (size_t k = 0; k < ast->kernels.size(); ++k) {
    const KernelDecl &kd = *ast->kernels[k];
    json += k ? ", {" : "{";
    json += "\"name\": ";
    jsonString(json, kd.name);
    json += ", \"compile_time\": [";
    for (size_t i = 0; i < kd.constParams.size(); ++i) {
      const ConstParam &c = kd.constParams[i];
      json += i ? ", {" : "{";
      json += "\"name\": ";
      jsonString(json, c.name);
      bool isType = c.kind == ConstParam::Kind::Type;
      json += std::string(", \"kind\": \"") + (isType ? "type" : "int") + "\", \"default\": ";
      if (isType && c.defaultType)
        jsonString(json, typeText(*c.defaultType));
      else if (!isType && c.defaultInt)
        jsonString(json, exprText(srcMgr, *c.defaultInt));
      else
        json += "null";
      json += "}";
    }
    json += "], \"params\": [";
    for (size_t i = 0; i < kd.params.size(); ++i) {
      const Param &p = kd.params[i];
      const TypeExpr &t = *p.type;
      const TypeExpr &elem = t.kind == TypeExpr::Kind::Tensor ? *t.element : t;
      json += i ? ", {" : "{";
      json += "\"name\": ";
      jsonString(json, p.name);
      json += ", \"type\": ";
      jsonString(json, typeText(t));
      json += std::string(", \"tensor\": ") + (t.kind == TypeExpr::Kind::Tensor ? "true" : "false");
      json += ", \"rank\": " + std::to_string(t.kind == TypeExpr::Kind::Tensor ? t.rank : 0);
      json += ", \"element\": ";
      jsonString(json, typeText(elem));
      json += std::string(", \"element_is_parameter\": ") +
              (elem.kind == TypeExpr::Kind::Named ? "true" : "false");
      json += "}";
    }
    json += "], \"tune\": [";
    for (size_t i = 0; i < kd.tune.size(); ++i) {
      const TuneParam &t = kd.tune[i];
      json += i ? ", {" : "{";
      json += "\"name\": ";
      jsonString(json, t.name);
      json += ", \"values\": [";
      for (size_t v = 0; v < t.values.size(); ++v) {
        if (v)
          json += ", ";
        jsonString(json, exprText(srcMgr, *t.values[v]));
      }
      json += "]}";
    }
    json += "], \"grid\": [";
    for (size_t g = 0; g < kd.grid.size(); ++g) {
      if (g)
        json += ", ";
      jsonString(json, exprText(srcMgr, *kd.grid[g]));
    }
    json += "]}";
  }
  json += "]}";
  return true;
}
