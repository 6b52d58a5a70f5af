//===- HeaderEmitter.cpp - AOT C++ headers with embedded PTX --------------===//
//
// `tilec -emit=header` and the `tilec_add_kernels` CMake function produce a
// header that a program compiles against the runtime library alone: no LLVM
// or MLIR at run time. The module is loaded on the first launch of any of its
// kernels (the driver JIT-compiles the PTX for the device at hand).
//
//===----------------------------------------------------------------------===//

#include "tilec/Compiler.h"

#include <cctype>
#include <set>
#include <sstream>

using namespace tilec;

// The version lives in the lowest layer that reports it (the generated
// headers' banner); the driver's cache keys use it too.
const char *tilec::compilerVersion() { return "tilec 0.1.0 (LLVM 22)"; }

/// The C++ parameter type of a scalar kernel parameter.
static const char *cppType(ScalarType t) {
  switch (t) {
  case ScalarType::I1: return "bool";
  case ScalarType::I8: return "int8_t";
  case ScalarType::I16: return "int16_t";
  case ScalarType::I32: return "int32_t";
  case ScalarType::I64: return "int64_t";
  case ScalarType::U8: return "uint8_t";
  case ScalarType::U16: return "uint16_t";
  case ScalarType::U32: return "uint32_t";
  case ScalarType::U64: return "uint64_t";
  case ScalarType::F16:
  case ScalarType::BF16:
  case ScalarType::F8E4M3:
  case ScalarType::F8E5M2:
  case ScalarType::F32: return "float";
  case ScalarType::F64: return "double";
  }
  return "double";
}

static const char *enumName(ScalarType t) {
  switch (t) {
  case ScalarType::I1: return "I1";
  case ScalarType::I8: return "I8";
  case ScalarType::I16: return "I16";
  case ScalarType::I32: return "I32";
  case ScalarType::I64: return "I64";
  case ScalarType::U8: return "U8";
  case ScalarType::U16: return "U16";
  case ScalarType::U32: return "U32";
  case ScalarType::U64: return "U64";
  case ScalarType::F16: return "F16";
  case ScalarType::BF16: return "BF16";
  case ScalarType::F32: return "F32";
  case ScalarType::F64: return "F64";
  case ScalarType::F8E4M3: return "F8E4M3";
  case ScalarType::F8E5M2: return "F8E5M2";
  }
  return "F32";
}

/// Splits `text` into raw-string chunks that stay below compilers' literal
/// length limits and never contain the delimiter.
static void writeRawString(std::ostream &os, const std::string &text) {
  const size_t chunk = 8000;
  for (size_t i = 0; i < text.size() || i == 0; i += chunk) {
    os << "    R\"tilec(" << text.substr(i, chunk) << ")tilec\"\n";
    if (text.empty())
      break;
  }
}

/// C++ keywords, alternative tokens, names the header uses unqualified or
/// that <cstdint> and the C library may define as macros or types: a kernel
/// or parameter with one of these names gets a trailing underscore.
static bool isReservedCppName(const std::string &name) {
  static const std::set<std::string> names = {
      // Keywords (C++20) and alternative tokens.
      "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor",
      "bool", "break", "case", "catch", "char", "char8_t", "char16_t",
      "char32_t", "class", "compl", "concept", "const", "consteval",
      "constexpr", "constinit", "const_cast", "continue", "co_await",
      "co_return", "co_yield", "decltype", "default", "delete", "do",
      "double", "dynamic_cast", "else", "enum", "explicit", "export",
      "extern", "false", "float", "for", "friend", "goto", "if", "inline",
      "int", "long", "mutable", "namespace", "new", "noexcept", "not",
      "not_eq", "nullptr", "operator", "or", "or_eq", "private", "protected",
      "public", "register", "reinterpret_cast", "requires", "return",
      "short", "signed", "sizeof", "static", "static_assert", "static_cast",
      "struct", "switch", "template", "this", "thread_local", "throw",
      "true", "try", "typedef", "typeid", "typename", "union", "unsigned",
      "using", "virtual", "void", "volatile", "wchar_t", "while", "xor",
      "xor_eq", "final", "override", "import", "module",
      // Names the generated code uses.
      "stream", "kernel", "ptx", "signatures", "tilec",
      "std", "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t",
      "uint16_t", "uint32_t", "uint64_t", "size_t",
      // Common C library macros.
      "NULL", "EOF", "assert", "errno", "stdin", "stdout", "stderr",
      "offsetof", "INT8_MAX", "INT16_MAX", "INT32_MAX", "INT64_MAX",
      "UINT8_MAX", "UINT16_MAX", "UINT32_MAX", "UINT64_MAX", "SIZE_MAX",
      "INT8_MIN", "INT16_MIN", "INT32_MIN", "INT64_MIN"};
  return names.count(name) != 0;
}

/// The C++ spelling of `name`: unchanged unless it is reserved, then with
/// trailing underscores until it is neither reserved nor in `taken`.
static std::string cppName(const std::string &name,
                           const std::set<std::string> &taken) {
  if (!isReservedCppName(name))
    return name;
  std::string out = name + "_";
  while (isReservedCppName(out) || taken.count(out))
    out += "_";
  return out;
}

/// C++ names for `names`, in order: reserved names are mangled and a
/// mangled name never collides with another (original or mangled) one.
static std::vector<std::string> cppNames(const std::vector<std::string> &names) {
  std::set<std::string> taken(names.begin(), names.end());
  std::vector<std::string> out;
  for (const std::string &n : names) {
    std::string c = cppName(n, taken);
    taken.insert(c);
    out.push_back(c);
  }
  return out;
}

std::string tilec::defaultHeaderNamespace(const std::string &fileName) {
  std::string stem = fileName.substr(fileName.find_last_of('/') + 1);
  stem = stem.substr(0, stem.find_last_of('.'));
  std::string ns;
  for (char c : stem)
    ns += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (ns.empty() || std::isdigit(static_cast<unsigned char>(ns[0])))
    ns = "k_" + ns;
  return ns + "_kernels";
}

std::string tilec::checkHeaderNamespace(const std::string &ns) {
  size_t start = 0;
  while (true) {
    size_t end = ns.find("::", start);
    std::string part = ns.substr(start, end == std::string::npos ? std::string::npos
                                                                 : end - start);
    bool ok = !part.empty() && !std::isdigit(static_cast<unsigned char>(part[0]));
    for (char c : part)
      ok &= std::isalnum(static_cast<unsigned char>(c)) || c == '_';
    if (!ok)
      return "the header namespace '" + ns +
             "' is not a C++ name (letters, digits and '_', parts joined by '::')";
    if (isReservedCppName(part))
      return "the header namespace '" + ns + "' uses the reserved C++ name '" + part + "'";
    if (end == std::string::npos)
      return {};
    start = end + 2;
  }
}

/// The braced list of launch arguments for kernel `sig` (parameter names
/// `names`): tensors as they are, scalars as ArgValues of their type.
static std::string argumentList(const KernelSignature &sig,
                                const std::vector<std::string> &names) {
  std::ostringstream os;
  os << "{";
  for (size_t i = 0; i < sig.params.size(); ++i) {
    const ParamInfo &p = sig.params[i];
    os << (i ? ", " : "");
    if (p.isTensor)
      os << names[i];
    else if (isFloatType(p.dtype))
      os << "tilec::ArgValue::scalar(tilec::ScalarType::" << enumName(p.dtype)
         << ", static_cast<double>(" << names[i] << "))";
    else
      os << "tilec::ArgValue::scalar(tilec::ScalarType::" << enumName(p.dtype)
         << ", static_cast<int64_t>(" << names[i] << "))";
  }
  os << "}";
  return os.str();
}

/// `base`, with underscores appended until it is not in `taken`; added.
static std::string uniqueName(std::string base, std::set<std::string> &taken) {
  while (taken.count(base) || isReservedCppName(base))
    base += "_";
  taken.insert(base);
  return base;
}

std::string tilec::generateHeader(const CompileResult &result,
                                  const std::string &ns,
                                  const std::string &sourceName,
                                  const std::vector<HeuristicVariant> &variants) {
  std::ostringstream os;
  os << "// Generated by " << compilerVersion() << " from " << sourceName
     << ". Do not edit.\n"
     << "// Kernels: ";
  for (size_t i = 0; i < result.kernels.size(); ++i)
    os << (i ? ", " : "") << result.kernels[i].name;
  os << "\n#pragma once\n\n#include \"tilec/Runtime/Runtime.h\"\n\n"
     << "#include <cstdint>\n\nnamespace " << ns << " {\n\n"
     << "inline const char *ptx() {\n  static const char text[] =\n";
  writeRawString(os, result.ptx);
  os << "    ;\n  return text;\n}\n\n"
     << "inline const std::vector<tilec::KernelSignature> &signatures() {\n"
     << "  static const std::vector<tilec::KernelSignature> sigs =\n"
     << "      *tilec::parseSignatures(\n";
  writeRawString(os, serializeSignatures(result.kernels));
  os << "      );\n  return sigs;\n}\n\n"
     << "/// The module, loaded on first use in the current context.\n"
     << "inline tilec::Module &module() {\n"
     << "  static tilec::Module m = (tilec::Context::get(), "
        "tilec::Module::loadPTX(ptx()));\n"
     << "  return m;\n}\n\n";
  std::vector<std::string> kernelNames;
  for (const KernelSignature &sig : result.kernels)
    kernelNames.push_back(sig.name);
  kernelNames = cppNames(kernelNames);
  std::set<std::string> taken(kernelNames.begin(), kernelNames.end());
  for (size_t k = 0; k < result.kernels.size(); ++k) {
    const KernelSignature &sig = result.kernels[k];
    std::vector<std::string> paramNames;
    for (const ParamInfo &p : sig.params)
      paramNames.push_back(p.name);
    paramNames = cppNames(paramNames);
    std::vector<const HeuristicVariant *> mine;
    for (const HeuristicVariant &v : variants)
      if (v.kernel == sig.name && !sig.heuristics.empty())
        mine.push_back(&v);
    std::string params;
    for (size_t i = 0; i < sig.params.size(); ++i) {
      const ParamInfo &p = sig.params[i];
      params += (i ? ", " : "") +
                (p.isTensor ? "const tilec::TensorArg &" : std::string(cppType(p.dtype)) + " ") +
                paramNames[i];
    }
    std::string detail, choice;
    if (!mine.empty()) {
      // Each variant: its own PTX module, loaded on its first launch.
      detail = uniqueName(kernelNames[k] + "_variants", taken);
      choice = uniqueName(kernelNames[k] + "_choice", taken);
      os << "/// Kernel " << sig.name << " compiled for the values its @heuristic can give.\n"
         << "namespace " << detail << " {\n\n";
      for (size_t j = 0; j < mine.size(); ++j) {
        os << "/// ";
        for (size_t i = 0; i < mine[j]->values.size(); ++i)
          os << (i ? ", " : "") << mine[j]->values[i].first << " = " << mine[j]->values[i].second;
        os << "\ninline const char *ptx_" << j << "() {\n  static const char text[] =\n";
        writeRawString(os, mine[j]->result.ptx);
        os << "    ;\n  return text;\n}\n\n"
           << "inline const std::vector<tilec::KernelSignature> &signatures_" << j << "() {\n"
           << "  static const std::vector<tilec::KernelSignature> sigs =\n"
           << "      *tilec::parseSignatures(\n";
        writeRawString(os, serializeSignatures(mine[j]->result.kernels));
        os << "      );\n  return sigs;\n}\n\n"
           << "inline tilec::Module &module_" << j << "() {\n"
           << "  static tilec::Module m = (tilec::Context::get(), tilec::Module::loadPTX(ptx_" << j
           << "()));\n  return m;\n}\n\n";
      }
      os << "} // namespace " << detail << "\n\n"
         << "/// The values kernel " << sig.name << "'s @heuristic gives for these arguments\n"
         << "/// (the variant its launch function runs).\n"
         << "inline std::vector<std::pair<std::string, int64_t>> " << choice << "(" << params
         << ") {\n  return tilec::evaluateHeuristics(signatures()[" << k << "], "
         << argumentList(sig, paramNames) << ");\n}\n\n";
    }
    os << "/// kernel " << sig.name << "(";
    for (size_t i = 0; i < sig.params.size(); ++i) {
      const ParamInfo &p = sig.params[i];
      os << (i ? ", " : "") << p.name << ": ";
      if (p.isTensor)
        os << "tensor<" << scalarTypeName(p.dtype) << ", " << p.rank << ">";
      else
        os << scalarTypeName(p.dtype);
    }
    os << ")\n/// grid(";
    for (size_t i = 0; i < sig.grid.size(); ++i)
      os << (i ? ", " : "") << sig.grid[i].str(sig.params);
    os << "), " << sig.numThreads << " threads per block\n";
    if (!mine.empty())
      os << "/// Launches the variant compiled for the values of " << choice << "(...);\n"
         << "/// the kernel as compiled here where no variant compiled for them.\n";
    os << "inline void " << kernelNames[k] << "(" << params << (sig.params.empty() ? "" : ", ")
       << "tilec::Stream *stream = nullptr) {\n";
    if (mine.empty()) {
      os << "  static const tilec::Kernel kernel = module().getKernel(signatures()[" << k
         << "]);\n"
         << "  kernel.launch(" << argumentList(sig, paramNames) << ", stream);\n}\n\n";
      continue;
    }
    os << "  const std::vector<tilec::ArgValue> args = " << argumentList(sig, paramNames)
       << ";\n"
       << "  const std::vector<std::pair<std::string, int64_t>> chosen =\n"
       << "      tilec::evaluateHeuristics(signatures()[" << k << "], args);\n";
    for (size_t j = 0; j < mine.size(); ++j) {
      os << "  if (chosen == std::vector<std::pair<std::string, int64_t>>{";
      for (size_t i = 0; i < mine[j]->values.size(); ++i)
        os << (i ? ", " : "") << "{\"" << mine[j]->values[i].first << "\", "
           << mine[j]->values[i].second << "}";
      os << "}) {\n"
         << "    static const tilec::Kernel kernel = " << detail << "::module_" << j
         << "().getKernel(" << detail << "::signatures_" << j << "()[0]);\n"
         << "    return kernel.launch(args, stream);\n  }\n";
    }
    os << "  static const tilec::Kernel kernel = module().getKernel(signatures()[" << k
       << "]);\n"
       << "  kernel.launch(args, stream);\n}\n\n";
  }
  os << "} // namespace " << ns << "\n";
  return os.str();
}
