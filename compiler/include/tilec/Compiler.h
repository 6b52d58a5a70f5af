//===- Compiler.h - The embeddable compiler API -----------------*- C++ -*-===//
//
// Compiles `.tile` source text to PTX in-process. This is what `tilec` and
// every embedding program call; the runtime (tilec/Runtime/Runtime.h) then
// loads the PTX and launches kernels by their signatures.
//
//   tilec::CompileOptions opts;
//   opts.defines["BLOCK"] = "256";
//   tilec::CompileResult r = tilec::compile(source, opts);
//   if (!r.ok) { std::cerr << r.diagnostics; ... }
//   auto module = tilec::Module::loadPTX(r.ptx);
//   auto kernel = module.getKernel(r.kernels[0]);
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_COMPILER_H
#define TILEC_COMPILER_H

#include "tilec/Runtime/Signature.h"

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace tilec {

/// What `compile` produces as `output` (and where it stops).
enum class EmitKind { AST, Tile, LLVM, PTX };

struct CompileOptions {
  /// Name used in diagnostics and source locations.
  std::string fileName = "<source>";
  /// "sm_90a" (default) or "sm_80".
  std::string arch = "sm_90a";
  /// Compile-time parameter overrides: `-D NAME=VALUE`.
  std::map<std::string, std::string> defines;
  /// Compile only this kernel (all kernels when empty).
  std::string kernel;
  /// Warps per block; 0 lets tile-layout choose.
  unsigned numWarps = 0;
  /// Blocks per SM that the register allocation must allow (CUDA's
  /// __launch_bounds__ minBlocksPerMultiprocessor); 0: no limit.
  unsigned minBlocksPerSM = 0;
  /// LLVM optimization level, 0 to 3.
  unsigned optLevel = 3;
  EmitKind emit = EmitKind::PTX;
};

struct CompileResult {
  bool ok = false;
  /// Errors as the user sees them: `file:line:col: error: ...`, the source
  /// line and a caret. Empty on success.
  std::string diagnostics;
  /// The requested stage as text (AST dump, tile MLIR, LLVM IR or PTX).
  std::string output;
  /// PTX for all compiled kernels (set when emit == PTX).
  std::string ptx;
  /// One signature per compiled kernel, in source order.
  std::vector<KernelSignature> kernels;
  /// An error past the frontend's checks (a compiler bug, not a user error).
  bool internalError = false;
};

/// Compiles `source`. Never throws or aborts on bad input.
CompileResult compile(std::string_view source, const CompileOptions &options);

/// The kernels of `source` as written, parsed but not compiled: for each,
/// its compile-time parameters (kind, default as written), parameters with
/// their declared types, the @tune space and the grid, as JSON (see
/// tilec_describe in tilec.h). False with `diagnostics` on a syntax error.
bool describeSource(std::string_view source, const std::string &fileName,
                    std::string &json, std::string &diagnostics);

/// Appends `s` to `out` as a JSON string (quoted, escaped): the C API's JSON
/// answers are built with it.
void appendJsonString(std::string &out, std::string_view s);
/// Appends a JSON list of `n` items to `json`, item(i) appending each.
template <typename Fn> void appendJsonList(std::string &json, size_t n, Fn item) {
  json += '[';
  for (size_t i = 0; i < n; ++i) {
    if (i)
      json += ", ";
    item(i);
  }
  json += ']';
}
/// Appends a JSON object to `json` with a member per (name, value) of
/// `members`, value(v) appending each value.
template <typename Members, typename Fn>
void appendJsonObject(std::string &json, const Members &members, Fn value) {
  json += '{';
  bool first = true;
  for (const auto &[name, v] : members) {
    json += first ? "" : ", ";
    first = false;
    appendJsonString(json, name);
    json += ": ";
    value(v);
  }
  json += '}';
}

/// The compiler's version string (part of cache keys).
const char *compilerVersion();

/// Assembles PTX into a cubin for `arch` with ptxas from the CUDA toolkit
/// ($TILEC_PTXAS, else PATH, else /usr/local/cuda/bin/ptxas). Returns false
/// with a message in `error` when ptxas is missing or rejects the PTX.
bool assembleCubin(const std::string &ptx, const std::string &arch,
                   std::string &cubin, std::string &error);

/// One kernel compiled alone with values for the parameters its
/// @heuristic chooses (an AOT header's variant of that kernel).
struct HeuristicVariant {
  std::string kernel;
  std::vector<std::pair<std::string, int64_t>> values; ///< in heuristic order
  CompileResult result;
};

/// For each kernel of `result` whose @heuristic still chooses parameters:
/// every combination of the values its expressions can give (the constants
/// at the leaves of their `where`s), compiled alone with `options` plus
/// those values; combinations that do not compile are left out. A kernel
/// whose expressions give other values (arithmetic on the shapes) or more
/// than 64 combinations gets none, and so do combinations that no arguments
/// reach (conditions that cannot hold together). With `useCache` the
/// variants compile through the compile cache (compileCached).
std::vector<HeuristicVariant> compileHeuristicVariants(std::string_view source,
                                                       const CompileOptions &options,
                                                       const CompileResult &result,
                                                       bool useCache = true);

/// A self-contained C++ header for ahead-of-time use: the PTX embedded as a
/// string, each kernel's signature, and one typed launch function per kernel
/// (`namespace_::saxpy(a, x, y, stream)`) that needs only the runtime library.
/// With `variants` (compileHeuristicVariants), a kernel's launch function
/// evaluates its @heuristic on the arguments and launches the variant
/// compiled for those values (the kernel as compiled when there is none);
/// `namespace_::saxpy_choice(...)` returns the values.
std::string generateHeader(const CompileResult &result,
                           const std::string &namespaceName,
                           const std::string &sourceName,
                           const std::vector<HeuristicVariant> &variants = {});

/// The namespace a header for `fileName` gets by default ("saxpy.tile":
/// saxpy_kernels).
std::string defaultHeaderNamespace(const std::string &fileName);
/// Empty when `ns` can name a header's namespace ("a", "a::b", no C++
/// keyword), else the reason.
std::string checkHeaderNamespace(const std::string &ns);

} // namespace tilec

#endif // TILEC_COMPILER_H
