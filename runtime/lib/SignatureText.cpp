//===- SignatureText.cpp - Text form of kernel signatures -----------------===//
//
// Kernel signatures travel outside the compiler in two places: compile-cache
// entries and generated AOT headers. Both use this line-oriented text form;
// grid expressions are written as S-expressions. The parser rejects anything
// malformed (a corrupt cache entry is rebuilt, not trusted).
//
//===----------------------------------------------------------------------===//

#include "tilec/Runtime/Signature.h"

#include <cctype>
#include <cstdlib>
#include <algorithm>
#include <sstream>

namespace tilec {

static const char *kindName(GridExpr::Kind k) {
  switch (k) {
  case GridExpr::Kind::Const: return "const";
  case GridExpr::Kind::Scalar: return "scalar";
  case GridExpr::Kind::Shape: return "shape";
  case GridExpr::Kind::Stride: return "stride";
  case GridExpr::Kind::Add: return "add";
  case GridExpr::Kind::Sub: return "sub";
  case GridExpr::Kind::Mul: return "mul";
  case GridExpr::Kind::Div: return "div";
  case GridExpr::Kind::Rem: return "rem";
  case GridExpr::Kind::CDiv: return "cdiv";
  case GridExpr::Kind::Min: return "min";
  case GridExpr::Kind::Max: return "max";
  case GridExpr::Kind::NumSMs: return "sms";
  case GridExpr::Kind::ResidentPrograms: return "resident";
  case GridExpr::Kind::Lt: return "lt";
  case GridExpr::Kind::Le: return "le";
  case GridExpr::Kind::Gt: return "gt";
  case GridExpr::Kind::Ge: return "ge";
  case GridExpr::Kind::Eq: return "eq";
  case GridExpr::Kind::Ne: return "ne";
  case GridExpr::Kind::And: return "and";
  case GridExpr::Kind::Or: return "or";
  case GridExpr::Kind::Where: return "where";
  }
  return "?";
}

static void writeExpr(std::ostream &os, const GridExpr &e) {
  os << "(" << kindName(e.kind);
  switch (e.kind) {
  case GridExpr::Kind::Const: os << " " << e.value; break;
  case GridExpr::Kind::Scalar: os << " " << e.param; break;
  case GridExpr::Kind::Shape:
  case GridExpr::Kind::Stride: os << " " << e.param << " " << e.dim; break;
  case GridExpr::Kind::NumSMs:
  case GridExpr::Kind::ResidentPrograms: break;
  default:
    for (const GridExpr &o : e.operands) {
      os << " ";
      writeExpr(os, o);
    }
  }
  os << ")";
}

std::string serializeSignatures(const std::vector<KernelSignature> &sigs) {
  std::ostringstream os;
  for (const KernelSignature &s : sigs) {
    os << "kernel " << s.name << " threads " << s.numThreads << " shared "
       << s.sharedBytes << "\n";
    for (const ParamInfo &p : s.params)
      os << "param " << p.name << " " << (p.isTensor ? "tensor" : "scalar")
         << " " << scalarTypeName(p.dtype) << " " << p.rank << "\n";
    for (const GridExpr &g : s.grid) {
      os << "grid ";
      writeExpr(os, g);
      os << "\n";
    }
    for (const auto &[name, values] : s.tuneSpace) {
      os << "tune " << name;
      for (int64_t v : values)
        os << " " << v;
      os << "\n";
    }
    for (const TmaOperand &t : s.tma)
      os << "tma " << t.param << " " << t.boxCols << " " << t.boxRows << "\n";
    if (s.cluster > 1)
      os << "cluster " << s.cluster << "\n";
    for (const Heuristic &h : s.heuristics) {
      os << "heuristic " << h.param << " ";
      writeExpr(os, h.value);
      os << "\n";
    }
    for (const Requirement &r : s.requirements) {
      os << "require ";
      writeExpr(os, r.cond);
      std::string message = r.message;
      std::replace(message.begin(), message.end(), '\n', ' ');
      os << " " << message << "\n";
    }
    os << "end\n";
  }
  return os.str();
}

namespace {
class ExprParser {
public:
  explicit ExprParser(std::string_view text) : text(text) {}

  bool parse(GridExpr &out, int depth = 0) {
    if (depth > 64 || !eat('('))
      return false;
    std::string kind = word();
    static const std::pair<const char *, GridExpr::Kind> kinds[] = {
        {"const", GridExpr::Kind::Const}, {"scalar", GridExpr::Kind::Scalar},
        {"shape", GridExpr::Kind::Shape}, {"stride", GridExpr::Kind::Stride},
        {"add", GridExpr::Kind::Add},     {"sub", GridExpr::Kind::Sub},
        {"mul", GridExpr::Kind::Mul},     {"div", GridExpr::Kind::Div},
        {"rem", GridExpr::Kind::Rem},     {"cdiv", GridExpr::Kind::CDiv},
        {"min", GridExpr::Kind::Min},     {"max", GridExpr::Kind::Max},
        {"sms", GridExpr::Kind::NumSMs},  {"resident", GridExpr::Kind::ResidentPrograms},
        {"lt", GridExpr::Kind::Lt},       {"le", GridExpr::Kind::Le},
        {"gt", GridExpr::Kind::Gt},       {"ge", GridExpr::Kind::Ge},
        {"eq", GridExpr::Kind::Eq},       {"ne", GridExpr::Kind::Ne},
        {"and", GridExpr::Kind::And},     {"or", GridExpr::Kind::Or},
        {"where", GridExpr::Kind::Where}};
    bool found = false;
    for (auto &[name, k] : kinds)
      if (kind == name) {
        out.kind = k;
        found = true;
      }
    if (!found)
      return false;
    long long a = 0, b = 0;
    switch (out.kind) {
    case GridExpr::Kind::Const:
      if (!number(a))
        return false;
      out.value = a;
      break;
    case GridExpr::Kind::Scalar:
      if (!number(a) || a < 0)
        return false;
      out.param = static_cast<unsigned>(a);
      break;
    case GridExpr::Kind::Shape:
    case GridExpr::Kind::Stride:
      if (!number(a) || !number(b) || a < 0 || b < 0)
        return false;
      out.param = static_cast<unsigned>(a);
      out.dim = static_cast<unsigned>(b);
      break;
    case GridExpr::Kind::NumSMs:
    case GridExpr::Kind::ResidentPrograms:
      break;
    default:
      out.operands.resize(out.kind == GridExpr::Kind::Where ? 3 : 2);
      for (GridExpr &o : out.operands)
        if (!parse(o, depth + 1))
          return false;
    }
    return eat(')');
  }
  bool atEnd() {
    skip();
    return pos == text.size();
  }
  /// The text after the expression (its leading space skipped).
  std::string_view rest() {
    skip();
    return text.substr(pos);
  }

private:
  void skip() {
    while (pos < text.size() && text[pos] == ' ')
      ++pos;
  }
  bool eat(char c) {
    skip();
    if (pos < text.size() && text[pos] == c) {
      ++pos;
      return true;
    }
    return false;
  }
  std::string word() {
    skip();
    size_t start = pos;
    while (pos < text.size() && std::isalpha(static_cast<unsigned char>(text[pos])))
      ++pos;
    return std::string(text.substr(start, pos - start));
  }
  bool number(long long &v) {
    skip();
    size_t start = pos;
    if (pos < text.size() && text[pos] == '-')
      ++pos;
    while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos])))
      ++pos;
    if (pos == start)
      return false;
    v = std::strtoll(std::string(text.substr(start, pos - start)).c_str(), nullptr, 10);
    return true;
  }
  std::string_view text;
  size_t pos = 0;
};
} // namespace

std::optional<std::vector<KernelSignature>>
parseSignatures(std::string_view text) {
  std::vector<KernelSignature> sigs;
  std::istringstream in{std::string(text)};
  std::string line;
  KernelSignature *cur = nullptr;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string tag;
    ls >> tag;
    if (tag.empty())
      continue;
    if (tag == "kernel") {
      if (cur)
        return std::nullopt;
      sigs.emplace_back();
      cur = &sigs.back();
      std::string t1, t2;
      if (!(ls >> cur->name >> t1 >> cur->numThreads >> t2 >> cur->sharedBytes) ||
          t1 != "threads" || t2 != "shared" || cur->numThreads == 0)
        return std::nullopt;
    } else if (tag == "param" && cur) {
      ParamInfo p;
      std::string kind, dtype;
      if (!(ls >> p.name >> kind >> dtype >> p.rank))
        return std::nullopt;
      auto t = parseScalarType(dtype);
      if (!t || (kind != "tensor" && kind != "scalar"))
        return std::nullopt;
      p.isTensor = kind == "tensor";
      p.dtype = *t;
      if (p.isTensor != (p.rank > 0) || p.rank > 4)
        return std::nullopt;
      cur->params.push_back(p);
    } else if (tag == "grid" && cur) {
      ExprParser ep(std::string_view(line).substr(5));
      GridExpr g;
      if (line.size() < 5 || !ep.parse(g) || !ep.atEnd())
        return std::nullopt;
      cur->grid.push_back(std::move(g));
    } else if (tag == "tune" && cur) {
      std::string name;
      if (!(ls >> name))
        return std::nullopt;
      std::vector<int64_t> values;
      long long v;
      while (ls >> v)
        values.push_back(v);
      if (values.empty() || !ls.eof())
        return std::nullopt;
      cur->tuneSpace.emplace_back(name, std::move(values));
    } else if (tag == "tma" && cur) {
      TmaOperand t;
      if (!(ls >> t.param >> t.boxCols >> t.boxRows) || t.boxCols == 0 ||
          t.boxCols > 256 || t.boxRows == 0 || t.boxRows > 256)
        return std::nullopt;
      cur->tma.push_back(t);
    } else if (tag == "cluster" && cur) {
      if (!(ls >> cur->cluster) || (cur->cluster != 1 && cur->cluster != 2))
        return std::nullopt;
    } else if (tag == "require" && cur) {
      ExprParser ep(std::string_view(line).substr(8));
      Requirement r;
      if (line.size() < 8 || !ep.parse(r.cond))
        return std::nullopt;
      r.message = std::string(ep.rest());
      cur->requirements.push_back(std::move(r));
    } else if (tag == "heuristic" && cur) {
      Heuristic h;
      if (!(ls >> h.param))
        return std::nullopt;
      size_t at = line.find(h.param, 9) + h.param.size();
      ExprParser ep(std::string_view(line).substr(at));
      if (!ep.parse(h.value) || !ep.atEnd())
        return std::nullopt;
      cur->heuristics.push_back(std::move(h));
    } else if (tag == "end" && cur) {
      if (cur->grid.empty() || cur->grid.size() > 3)
        return std::nullopt;
      for (const TmaOperand &t : cur->tma)
        if (t.param >= cur->params.size() || !cur->params[t.param].isTensor ||
            cur->params[t.param].rank < 2 || cur->params[t.param].rank > 3)
          return std::nullopt;
      cur = nullptr;
    } else {
      return std::nullopt;
    }
  }
  if (cur)
    return std::nullopt;
  return sigs;
}

} // namespace tilec
