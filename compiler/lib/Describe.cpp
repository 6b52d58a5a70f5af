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
#include <map>
#include <set>

using namespace tilec;

void tilec::appendJsonString(std::string &out, std::string_view s) {
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
/// parentheses around it) up to the `,`, `)` or `]` that closes the list it
/// is in, or, in a compile-time parameter list (`inAngles`), the `>`.
static std::string exprText(const llvm::SourceMgr &srcMgr, const Expr &e,
                            bool inAngles = false) {
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
    else if ((c == ',' || c == '\n' || (c == '>' && inAngles)) && depth == 0)
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

namespace {
/// Which parameters a kernel writes: the views that store, scatter or an
/// atomic takes as its first argument, through `let` aliases, parts
/// (`let p = narrow(x, ...)`) and `fn` helpers (a helper writes the
/// parameters its body writes).
struct WriteScan {
  const ModuleDecl &module;
  std::map<std::string, std::set<size_t>> helperWrites;
  std::set<std::string> inProgress;

  static bool writes(llvm::StringRef callee) {
    return callee == "store" || callee == "scatter" || callee.starts_with("atomic_");
  }

  const FnDecl *helper(llvm::StringRef name) const {
    for (const auto &f : module.fns)
      if (f->name == name)
        return f.get();
    return nullptr;
  }

  /// `env`: a name -> the index of the parameter it stands for.
  void expr(const Expr &e, const std::map<std::string, size_t> &env, std::set<size_t> &out) {
    if (e.kind == Expr::Kind::Call) {
      auto target = [&](const Expr *a) {
        if (a && a->kind == Expr::Kind::Name)
          if (auto it = env.find(a->name); it != env.end())
            out.insert(it->second);
      };
      if (writes(e.name) && !e.args.empty())
        target(e.args[0].get());
      else if (const FnDecl *f = helper(e.name))
        for (size_t i : written(*f))
          if (i < e.args.size())
            target(e.args[i].get());
    }
    for (const ExprPtr &a : e.args)
      if (a)
        expr(*a, env, out);
  }

  void stmts(const std::vector<StmtPtr> &body, std::map<std::string, size_t> env,
             std::set<size_t> &out) {
    for (const StmtPtr &st : body) {
      for (const ExprPtr *x : {&st->value, &st->lower, &st->upper, &st->step})
        if (*x)
          expr(**x, env, out);
      stmts(st->body, env, out);
      stmts(st->elseBody, env, out);
      if (st->kind == Stmt::Kind::Let) {
        env.erase(st->name);
        // An alias, or a part of a tensor (narrow) that writes go through.
        const Expr *of = st->value.get();
        if (of && of->kind == Expr::Kind::Call && of->name == "narrow" && !of->args.empty())
          of = of->args[0].get();
        if (of && of->kind == Expr::Kind::Name)
          if (auto it = env.find(of->name); it != env.end())
            env[st->name] = it->second;
      }
    }
  }

  const std::set<size_t> &written(const FnDecl &f) {
    if (auto it = helperWrites.find(f.name); it != helperWrites.end())
      return it->second;
    std::set<size_t> &out = helperWrites[f.name];
    if (!inProgress.insert(f.name).second)
      return out; // recursion (an error for Sema): stop here
    std::map<std::string, size_t> env;
    for (size_t i = 0; i < f.params.size(); ++i)
      env[f.params[i].first] = i;
    std::set<size_t> found;
    stmts(f.body, env, found);
    inProgress.erase(f.name);
    return helperWrites[f.name] = found;
  }
};
} // namespace

/// Appends `[item(0), item(1), ...]` for n items.

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
  json = "{\"version\": 1, \"kernels\": ";
  tilec::appendJsonList(json, ast->kernels.size(), [&](size_t k) {
    const KernelDecl &kd = *ast->kernels[k];
    auto str = [&](std::string_view v) { appendJsonString(json, v); };
    json += "{\"name\": ";
    str(kd.name);
    json += ", \"compile_time\": ";
    tilec::appendJsonList(json, kd.constParams.size(), [&](size_t i) {
      const ConstParam &c = kd.constParams[i];
      bool isType = c.kind == ConstParam::Kind::Type;
      json += "{\"name\": ";
      str(c.name);
      json += std::string(", \"kind\": \"") + (isType ? "type" : "int") + "\", \"default\": ";
      if (isType && c.defaultType)
        str(typeText(*c.defaultType));
      else if (!isType && c.defaultInt)
        str(exprText(srcMgr, *c.defaultInt, /*inAngles=*/true));
      else
        json += "null";
      json += "}";
    });
    json += ", \"params\": ";
    tilec::appendJsonList(json, kd.params.size(), [&](size_t i) {
      const Param &p = kd.params[i];
      const TypeExpr &t = *p.type;
      bool tensor = t.kind == TypeExpr::Kind::Tensor;
      const TypeExpr &elem = tensor ? *t.element : t;
      json += "{\"name\": ";
      str(p.name);
      json += ", \"type\": ";
      str(typeText(t));
      json += std::string(", \"tensor\": ") + (tensor ? "true" : "false");
      json += ", \"rank\": " + std::to_string(tensor ? t.rank : 0) + ", \"element\": ";
      str(typeText(elem));
      json += std::string(", \"element_is_parameter\": ") +
              (elem.kind == TypeExpr::Kind::Named ? "true" : "false") + "}";
    });
    json += ", \"writes\": ";
    WriteScan scan{*ast, {}, {}};
    std::map<std::string, size_t> env;
    for (size_t i = 0; i < kd.params.size(); ++i)
      env[kd.params[i].name] = i;
    std::set<size_t> written;
    scan.stmts(kd.body, env, written);
    std::vector<size_t> writes(written.begin(), written.end());
    tilec::appendJsonList(json, writes.size(), [&](size_t i) { str(kd.params[writes[i]].name); });
    json += ", \"requires\": ";
    tilec::appendJsonList(json, kd.requires_.size(), [&](size_t i) {
      json += "{\"condition\": ";
      str(exprText(srcMgr, *kd.requires_[i].cond));
      json += ", \"message\": ";
      str(kd.requires_[i].message);
      json += "}";
    });
    json += ", \"tune\": ";
    tilec::appendJsonList(json, kd.tune.size(), [&](size_t i) {
      const TuneParam &t = kd.tune[i];
      json += "{\"name\": ";
      str(t.name);
      json += ", \"values\": ";
      tilec::appendJsonList(json, t.values.size(), [&](size_t v) { str(exprText(srcMgr, *t.values[v])); });
      json += "}";
    });
    json += ", \"grid\": ";
    tilec::appendJsonList(json, kd.grid.size(), [&](size_t g) { str(exprText(srcMgr, *kd.grid[g])); });
    json += "}";
  });
  json += "}";
  return true;
}
