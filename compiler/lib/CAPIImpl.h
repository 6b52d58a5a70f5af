//===- CAPIImpl.h - What the C API's two files share ------------*- C++ -*-===//
//
// The handles behind tilec.h's opaque types, error construction and the
// exception guard every entry point runs in, and the helpers CAPI.cpp and
// CAPILaunch.cpp both use.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_CAPIIMPL_H
#define TILEC_CAPIIMPL_H

#include "tilec/tilec.h"

#include "tilec/Cache.h"
#include "tilec/Compiler.h"
#include "tilec/Runtime/Runtime.h"

#include <map>
#include <memory>
#include <cstring>
#include <mutex>
#include <new>
#include <string>
#include <vector>

struct tilec_error {
  std::string message;
  tilec_error_kind kind;
};

struct tilec_program {
  std::shared_ptr<const tilec::CompileResult> result;
  std::string arch;
  std::string fileName;
  /// What it was compiled from, for the header's @heuristic variants.
  std::string source;
  tilec::CompileOptions options;
  bool useCache = true; ///< whether it was compiled through the cache
  std::map<std::string, std::string> cubins; ///< by arch
  std::mutex mutex; ///< guards cubins (threads may share a program)
  /// Grid expressions as text, per kernel and dimension (kept for the
  /// lifetime of the program so that C strings stay valid).
  std::vector<std::vector<std::string>> grids;
};

struct tilec_module {
  tilec::Module module;
  std::vector<tilec::KernelSignature> signatures;
  std::map<std::string, std::unique_ptr<tilec_kernel>> kernels;
  std::mutex mutex; ///< guards kernels (threads may share a module)
  int device = 0;
};

struct tilec_kernel {
  tilec::Kernel kernel;
  int device = 0; // its module's: made current for each launch
  /// The last launch's arguments (their bytes, the dtype strings apart) and
  /// its prepared launch: a launch with the same arguments (a hot loop)
  /// skips checking, grid evaluation and packing, which depend on nothing
  /// else. Bytes that differ only in padding are a miss, never a false hit.
  struct Last {
    std::mutex mutex;
    std::vector<tilec_arg> args;
    std::vector<std::string> dtypes;
    tilec::LaunchConfig config;
    bool valid = false;
  };
  std::unique_ptr<Last> last = std::make_unique<Last>();
};

/// An error of `kind`; most that the C API makes itself are misuse.
inline tilec_error *makeError(std::string message,
                              tilec_error_kind kind = TILEC_ERROR_ARGUMENT) {
  return new (std::nothrow) tilec_error{std::move(message), kind};
}

template <typename Fn> tilec_error *guard(Fn fn) {
  try {
    return fn();
  } catch (const tilec::ArgumentError &e) {
    return makeError(e.what(), TILEC_ERROR_ARGUMENT);
  } catch (const tilec::RuntimeError &e) {
    return makeError(e.what(), TILEC_ERROR_RUNTIME);
  } catch (const std::bad_alloc &) {
    return makeError("tilec: out of memory", TILEC_ERROR_INTERNAL);
  } catch (const std::exception &e) {
    return makeError(e.what(), TILEC_ERROR_INTERNAL);
  } catch (...) {
    return makeError("tilec: unknown error", TILEC_ERROR_INTERNAL);
  }
}

/// The kind field of a caller's argument as a number: a C caller may store
/// any value there, and loading an enum that holds no enumerator is
/// undefined in C++.
template <typename Arg> int rawKind(const Arg &a) {
  int kind;
  static_assert(sizeof a.kind == sizeof kind);
  std::memcpy(&kind, &a.kind, sizeof kind);
  return kind;
}

/// The C options as the C++ ones; an error names `fn` for a NULL define.
tilec_error *toCompileOptions(const tilec_compile_options &o, const char *fn,
                              tilec::CompileOptions &opts);
/// A malloc'ed copy (freed by tilec_string_destroy), NULL without memory.
char *copyString(const std::string &s);
/// A program around a compile result, its grids as text.
std::unique_ptr<tilec_program>
newProgram(std::shared_ptr<const tilec::CompileResult> result, const tilec::CompileOptions &opts);
/// The arguments' own well-formedness (`what`: the API function).
tilec_error *checkArgs(const char *what, const tilec_arg *args, size_t num_args);
/// The arguments (checked by checkArgs) as the runtime's values for `sig`.
tilec_error *toValues(const tilec::KernelSignature &sig, const tilec_arg *args,
                      size_t num_args, std::vector<tilec::ArgValue> &values);

#endif // TILEC_CAPIIMPL_H
