//===- ASTDump.cpp - Printing the syntax tree -----------------------------===//
//
// `tilec -emit=ast` output: one node per line, indented, with `@line:col` so
// that tests can check source locations.
//
//===----------------------------------------------------------------------===//

#include "tilec/Frontend/AST.h"
#include "tilec/Frontend/Diagnostics.h"

using namespace tilec;

namespace {
struct Dumper {
  DiagEngine &diags;
  llvm::raw_ostream &os;

  void at(llvm::SMLoc loc) {
    auto [line, col] = diags.lineCol(loc);
    os << " @" << line << ":" << col << "\n";
  }
  void indent(unsigned n) { os.indent(2 * n); }

  void type(const TypeExpr &t) {
    switch (t.kind) {
    case TypeExpr::Kind::Scalar: os << scalarTypeName(t.scalar); break;
    case TypeExpr::Kind::Named: os << t.name; break;
    case TypeExpr::Kind::Tensor:
      os << "tensor<";
      type(*t.element);
      os << ", " << t.rank << ">";
      break;
    }
  }

  static const char *opName(Expr::Op op) {
    switch (op) {
    case Expr::Op::Neg: return "-";
    case Expr::Op::Not: return "!";
    case Expr::Op::Add: return "+";
    case Expr::Op::Sub: return "-";
    case Expr::Op::Mul: return "*";
    case Expr::Op::Div: return "/";
    case Expr::Op::Rem: return "%";
    case Expr::Op::Lt: return "<";
    case Expr::Op::Le: return "<=";
    case Expr::Op::Gt: return ">";
    case Expr::Op::Ge: return ">=";
    case Expr::Op::Eq: return "==";
    case Expr::Op::Ne: return "!=";
    case Expr::Op::And: return "&&";
    case Expr::Op::Or: return "||";
    case Expr::Op::BitNot: return "~";
    case Expr::Op::BitAnd: return "&";
    case Expr::Op::BitOr: return "|";
    case Expr::Op::BitXor: return "^";
    case Expr::Op::Shl: return "<<";
    case Expr::Op::Shr: return ">>";
    case Expr::Op::None: return "?";
    }
    return "?";
  }

  void expr(const Expr &e, unsigned d) {
    indent(d);
    switch (e.kind) {
    case Expr::Kind::IntLit: os << "Int " << e.intValue; break;
    case Expr::Kind::FloatLit: os << "Float " << e.floatValue; break;
    case Expr::Kind::BoolLit: os << "Bool " << (e.intValue ? "true" : "false"); break;
    case Expr::Kind::Name: os << "Name " << e.name; break;
    case Expr::Kind::Unary: os << "Unary " << opName(e.op); break;
    case Expr::Kind::Binary: os << "Binary " << opName(e.op); break;
    case Expr::Kind::Call:
      os << "Call " << e.name;
      if (e.typeArg) {
        os << "<";
        type(*e.typeArg);
        os << ">";
      }
      break;
    case Expr::Kind::ViewField: os << "Field " << e.name; break;
    case Expr::Kind::List: os << "List"; break;
    case Expr::Kind::StringLit: os << "String \"" << e.name << "\""; break;
    case Expr::Kind::Inline: os << "Inline " << e.name; break;
    case Expr::Kind::Lambda: os << "Lambda"; break;
    }
    at(e.loc);
    for (auto &a : e.args)
      expr(*a, d + 1);
    if (e.lambda) {
      for (auto &[name, loc] : e.lambda->params) {
        indent(d + 1);
        os << "Param " << name;
        at(loc);
      }
      for (auto &s : e.lambda->body)
        stmt(*s, d + 1);
    }
  }

  void stmt(const Stmt &s, unsigned d) {
    indent(d);
    switch (s.kind) {
    case Stmt::Kind::Let: os << (s.isVar ? "Var " : "Let ") << s.name; break;
    case Stmt::Kind::Assign: os << "Assign " << s.name; break;
    case Stmt::Kind::ExprStmt: os << "ExprStmt"; break;
    case Stmt::Kind::Return: os << "Return"; break;
    case Stmt::Kind::For: os << "For " << s.name; break;
    case Stmt::Kind::If: os << "If"; break;
    case Stmt::Kind::While: os << "While"; break;
    }
    at(s.loc);
    for (const Expr *x : {s.value.get(), s.lower.get(), s.upper.get(), s.step.get()})
      if (x)
        expr(*x, d + 1);
    for (auto &b : s.body)
      stmt(*b, d + 1);
    if (!s.elseBody.empty()) {
      indent(d);
      os << "Else\n";
      for (auto &b : s.elseBody)
        stmt(*b, d + 1);
    }
  }

  void fn(const FnDecl &f) {
    os << "Fn " << f.name;
    at(f.loc);
    for (auto &cp : f.constParams) {
      indent(1);
      os << "ConstParam " << cp.name << ": int";
      at(cp.loc);
      if (cp.defaultInt)
        expr(*cp.defaultInt, 2);
    }
    for (auto &[name, loc] : f.params) {
      indent(1);
      os << "Param " << name;
      at(loc);
    }
    for (auto &s : f.body)
      stmt(*s, 1);
  }

  void kernel(const KernelDecl &k) {
    os << "Kernel " << k.name;
    at(k.loc);
    for (auto &t : k.tune) {
      indent(1);
      os << "Tune " << t.name;
      at(t.loc);
      for (auto &v : t.values)
        expr(*v, 2);
    }
    for (auto &cp : k.constParams) {
      indent(1);
      os << "ConstParam " << cp.name << ": "
         << (cp.kind == ConstParam::Kind::Int ? "int" : "type");
      at(cp.loc);
      if (cp.defaultInt)
        expr(*cp.defaultInt, 2);
      if (cp.defaultType) {
        indent(2);
        os << "Default ";
        type(*cp.defaultType);
        at(cp.defaultType->loc);
      }
    }
    for (auto &p : k.params) {
      indent(1);
      os << "Param " << p.name << ": ";
      type(*p.type);
      at(p.loc);
    }
    if (!k.grid.empty()) {
      indent(1);
      os << "Grid";
      at(k.gridLoc);
      for (auto &g : k.grid)
        expr(*g, 2);
    }
    for (auto &s : k.body)
      stmt(*s, 1);
  }
};
} // namespace

void tilec::dumpAST(const ModuleDecl &module, DiagEngine &diags,
                    llvm::raw_ostream &os) {
  Dumper d{diags, os};
  for (auto &f : module.fns)
    d.fn(*f);
  for (auto &k : module.kernels)
    d.kernel(*k);
}
