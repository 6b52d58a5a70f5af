//===- ASTClone.cpp - Deep copies of AST nodes -------------------------===//
//
// cloneExpr and cloneStmt (Parser.h): helper inlining copies a helper's
// body for each call.
//
//===----------------------------------------------------------------------===//

#include "tilec/Frontend/Parser.h"

using namespace tilec;

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
