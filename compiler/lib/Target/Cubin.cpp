//===- Cubin.cpp - PTX to cubin through ptxas -----------------------------===//
//
// tilec emits PTX itself; a cubin (for loading without the driver's JIT, or
// for shipping) comes from the CUDA toolkit's ptxas, when it is installed.
//
//===----------------------------------------------------------------------===//

#include "tilec/Compiler.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>

bool tilec::assembleCubin(const std::string &ptx, const std::string &archName,
                          std::string &cubin, std::string &error) {
  std::string ptxas;
  if (const char *env = std::getenv("TILEC_PTXAS"); env && *env)
    ptxas = env;
  else if (auto found = llvm::sys::findProgramByName("ptxas"))
    ptxas = *found;
  else if (llvm::sys::fs::can_execute("/usr/local/cuda/bin/ptxas"))
    ptxas = "/usr/local/cuda/bin/ptxas";
  if (ptxas.empty()) {
    error = "-emit=cubin needs ptxas from the CUDA toolkit; put it on PATH or "
            "set TILEC_PTXAS";
    return false;
  }
  llvm::SmallString<128> in, out;
  int fd;
  if (llvm::sys::fs::createTemporaryFile("tilec", "ptx", fd, in) ||
      llvm::sys::fs::createTemporaryFile("tilec", "cubin", out)) {
    error = "cannot create temporary files for ptxas";
    return false;
  }
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << ptx;
  }
  std::string msg;
  int rc = llvm::sys::ExecuteAndWait(
      ptxas, {ptxas, "-arch=" + archName, std::string(in), "-o", std::string(out)},
      std::nullopt, {}, 0, 0, &msg);
  auto buffer = llvm::MemoryBuffer::getFile(out, false, false);
  llvm::sys::fs::remove(in);
  llvm::sys::fs::remove(out);
  if (rc != 0 || !buffer) {
    error = "ptxas failed" + (msg.empty() ? "" : ": " + msg);
    return false;
  }
  cubin = (*buffer)->getBuffer().str();
  return true;
}

