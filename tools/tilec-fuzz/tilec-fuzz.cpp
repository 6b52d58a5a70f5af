//===- tilec-fuzz.cpp - libFuzzer target over the whole frontend ----------===//
//
// Every input goes through lexer -> parser -> Sema -> MLIR generation ->
// the MLIR verifier (compile() to the tile dialect). Any crash, assertion,
// sanitizer report or an "internal error" diagnostic is a bug: the frontend
// must answer every input with either a module or a located error.
//
//   cmake -S . -B build-fuzz -DTILEC_ENABLE_FUZZER=ON ...   (clang only)
//   build-fuzz/bin/tilec-fuzz -runs=1000000 corpus/ examples/
//
//===----------------------------------------------------------------------===//

#include "tilec/Compiler.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string source(reinterpret_cast<const char *>(data), size);
  tilec::CompileOptions options;
  options.fileName = "fuzz.tile";
  options.emit = tilec::EmitKind::Tile;
  tilec::CompileResult result = tilec::compile(source, options);
  if (result.internalError ||
      (!result.ok && result.diagnostics.find("error: ") == std::string::npos)) {
    std::fprintf(stderr, "bad diagnostics for a rejected input:\n%s\n",
                 result.diagnostics.c_str());
    std::abort();
  }
  return 0;
}
