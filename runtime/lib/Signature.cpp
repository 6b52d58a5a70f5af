//===- Signature.cpp - Scalar type helpers and grid expression printing ---===//
//
// The small helpers declared in Signature.h: sizes, spellings and classes of
// the language's scalar types, and the human-readable form of a `grid(...)`
// expression that runtime error messages quote back to the user.
//
//===----------------------------------------------------------------------===//

#include "tilec/Runtime/Signature.h"

namespace tilec {

namespace {
struct ScalarTypeInfo {
  ScalarType type;
  const char *name;
  size_t size;
};
} // namespace

static constexpr ScalarTypeInfo scalarTypes[] = {
    {ScalarType::I1, "i1", 1},     {ScalarType::I8, "i8", 1},
    {ScalarType::I16, "i16", 2},   {ScalarType::I32, "i32", 4},
    {ScalarType::I64, "i64", 8},   {ScalarType::U8, "u8", 1},
    {ScalarType::U16, "u16", 2},   {ScalarType::U32, "u32", 4},
    {ScalarType::U64, "u64", 8},   {ScalarType::F16, "f16", 2},
    {ScalarType::BF16, "bf16", 2}, {ScalarType::F32, "f32", 4},
    {ScalarType::F64, "f64", 8},   {ScalarType::F8E4M3, "f8e4m3", 1},
    {ScalarType::F8E5M2, "f8e5m2", 1},
};

static const ScalarTypeInfo &info(ScalarType t) {
  return scalarTypes[static_cast<size_t>(t)];
}

size_t scalarTypeSize(ScalarType t) { return info(t).size; }

const char *scalarTypeName(ScalarType t) { return info(t).name; }

std::optional<ScalarType> parseScalarType(std::string_view name) {
  for (const ScalarTypeInfo &i : scalarTypes)
    if (name == i.name)
      return i.type;
  return std::nullopt;
}

bool isFloatType(ScalarType t) {
  return t == ScalarType::F16 || t == ScalarType::BF16 ||
         t == ScalarType::F32 || t == ScalarType::F64 || isFloat8Type(t);
}

bool isFloat8Type(ScalarType t) {
  return t == ScalarType::F8E4M3 || t == ScalarType::F8E5M2;
}

bool isSignedIntType(ScalarType t) {
  return t == ScalarType::I8 || t == ScalarType::I16 || t == ScalarType::I32 ||
         t == ScalarType::I64;
}

bool isUnsignedIntType(ScalarType t) {
  return t == ScalarType::U8 || t == ScalarType::U16 || t == ScalarType::U32 ||
         t == ScalarType::U64;
}

/// Binding strength of the infix operators; calls and leaves bind tightest.
static int precedence(GridExpr::Kind kind) {
  switch (kind) {
  case GridExpr::Kind::Or:
    return -2;
  case GridExpr::Kind::And:
    return -1;
  case GridExpr::Kind::Lt:
  case GridExpr::Kind::Le:
  case GridExpr::Kind::Gt:
  case GridExpr::Kind::Ge:
  case GridExpr::Kind::Eq:
  case GridExpr::Kind::Ne:
    return 0;
  case GridExpr::Kind::Add:
  case GridExpr::Kind::Sub:
    return 1;
  case GridExpr::Kind::Mul:
  case GridExpr::Kind::Div:
  case GridExpr::Kind::Rem:
    return 2;
  default:
    return 3;
  }
}

static std::string paramName(const std::vector<ParamInfo> &params,
                             unsigned index) {
  if (index < params.size())
    return params[index].name;
  return "<param " + std::to_string(index) + ">";
}

std::string GridExpr::str(const std::vector<ParamInfo> &params) const {
  switch (kind) {
  case Kind::Const:
    return std::to_string(value);
  case Kind::Scalar:
    return paramName(params, param);
  case Kind::Shape:
    return paramName(params, param) + ".shape[" + std::to_string(dim) + "]";
  case Kind::Stride:
    return paramName(params, param) + ".stride[" + std::to_string(dim) + "]";
  case Kind::NumSMs:
    return "num_sms()";
  case Kind::ResidentPrograms:
    return "resident_programs()";
  case Kind::CDiv:
  case Kind::Min:
  case Kind::Max:
  case Kind::Where: {
    std::string s = kind == Kind::CDiv  ? "cdiv("
                    : kind == Kind::Min ? "min("
                    : kind == Kind::Max ? "max("
                                        : "where(";
    for (size_t i = 0; i < operands.size(); ++i)
      s += (i ? ", " : "") + operands[i].str(params);
    return s + ")";
  }
  default:
    break;
  }
  // Infix operators are left-associative: parenthesise a left operand that
  // binds more loosely and a right operand that binds no tighter.
  const char *op = kind == Kind::Add   ? " + "
                   : kind == Kind::Sub ? " - "
                   : kind == Kind::Mul ? " * "
                   : kind == Kind::Div ? " / "
                   : kind == Kind::Rem ? " % "
                   : kind == Kind::Lt  ? " < "
                   : kind == Kind::Le  ? " <= "
                   : kind == Kind::Gt  ? " > "
                   : kind == Kind::Ge  ? " >= "
                   : kind == Kind::Eq  ? " == "
                   : kind == Kind::Ne  ? " != "
                   : kind == Kind::Or  ? " || "
                                       : " && ";
  if (operands.size() != 2)
    return std::string("<malformed") + op + "with " +
           std::to_string(operands.size()) + " operands>";
  int prec = precedence(kind);
  std::string lhs = operands[0].str(params), rhs = operands[1].str(params);
  if (precedence(operands[0].kind) < prec)
    lhs = "(" + lhs + ")";
  if (precedence(operands[1].kind) <= prec)
    rhs = "(" + rhs + ")";
  return lhs + op + rhs;
}

} // namespace tilec
