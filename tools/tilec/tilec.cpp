//===- tilec.cpp - The tilec command-line compiler ------------------------===//
//
//   tilec FILE [-o OUT] [--arch=sm_80|sm_90a] [-emit=ast|tile|llvm|ptx]
//         [-D NAME=VALUE]... [--kernel NAME] [--num-warps N] [-O0..3]
//
// Default output is PTX on stdout (or OUT). Errors go to stderr in the
// `file:line:col: error:` form with the source line and a caret; the exit
// status is 1 on any error.
//
//===----------------------------------------------------------------------===//

#include "tilec/Compiler.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

namespace cl = llvm::cl;

static cl::OptionCategory tilecCategory("tilec options");
static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<input .tile file>"),
                                      cl::Required, cl::cat(tilecCategory));
static cl::opt<std::string> outputFile("o", cl::desc("Output file (default: stdout)"),
                                       cl::value_desc("file"), cl::init("-"),
                                       cl::cat(tilecCategory));
static cl::opt<std::string> arch("arch", cl::desc("GPU architecture: sm_80, sm_90 or sm_90a"),
                                 cl::init("sm_90a"), cl::cat(tilecCategory));
static cl::opt<tilec::EmitKind> emit(
    "emit", cl::desc("What to emit"), cl::init(tilec::EmitKind::PTX),
    cl::values(clEnumValN(tilec::EmitKind::AST, "ast", "the syntax tree"),
               clEnumValN(tilec::EmitKind::Tile, "tile", "the tile dialect"),
               clEnumValN(tilec::EmitKind::LLVM, "llvm", "optimized LLVM IR"),
               clEnumValN(tilec::EmitKind::PTX, "ptx", "PTX assembly (default)")),
    cl::cat(tilecCategory));
static cl::list<std::string> defines("D", cl::desc("Set a compile-time parameter"),
                                     cl::value_desc("NAME=VALUE"), cl::Prefix,
                                     cl::cat(tilecCategory));
static cl::opt<std::string> kernel("kernel", cl::desc("Compile only this kernel"),
                                   cl::init(""), cl::cat(tilecCategory));
static cl::opt<unsigned> numWarps("num-warps", cl::desc("Warps per block (0: automatic)"),
                                  cl::init(0), cl::cat(tilecCategory));
static cl::opt<unsigned> optLevel("O", cl::desc("LLVM optimization level (0-3)"),
                                  cl::Prefix, cl::init(3), cl::cat(tilecCategory));
static cl::opt<bool> splitInputFile(
    "split-input-file",
    cl::desc("Compile each '// -----' separated chunk on its own (for tests)"),
    cl::init(false), cl::cat(tilecCategory));
static cl::opt<bool> printSignature("print-signature",
                                    cl::desc("Print each kernel's launch signature to stderr"),
                                    cl::init(false), cl::cat(tilecCategory));

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(tilecCategory);
  cl::ParseCommandLineOptions(argc, argv, "tilec: tile kernel compiler\n");

  auto buffer = llvm::MemoryBuffer::getFileOrSTDIN(inputFile, /*IsText=*/true);
  if (std::error_code ec = buffer.getError()) {
    llvm::errs() << "tilec: error: cannot read '" << inputFile << "': "
                 << ec.message() << "\n";
    return 1;
  }
  tilec::CompileOptions options;
  options.fileName = inputFile;
  options.arch = arch;
  options.emit = emit;
  options.kernel = kernel;
  options.numWarps = numWarps;
  options.optLevel = optLevel;
  for (const std::string &d : defines) {
    size_t eq = d.find('=');
    if (eq == std::string::npos || eq == 0) {
      llvm::errs() << "tilec: error: -D expects NAME=VALUE, got '" << d << "'\n";
      return 1;
    }
    options.defines[d.substr(0, eq)] = d.substr(eq + 1);
  }

  // With --split-input-file each chunk is compiled alone; the other chunks'
  // lines are blanked so that line numbers still match the file.
  std::vector<std::string> chunks;
  llvm::StringRef text = (*buffer)->getBuffer();
  if (splitInputFile) {
    llvm::SmallVector<llvm::StringRef> lines;
    text.split(lines, '\n');
    std::string padding, current;
    for (llvm::StringRef line : lines) {
      if (line.trim() == "// -----") {
        chunks.push_back(padding + current);
        padding += std::string(llvm::StringRef(current).count('\n') + 1, '\n');
        current.clear();
        continue;
      }
      current += line.str() + "\n";
    }
    chunks.push_back(padding + current);
  } else {
    chunks.push_back(text.str());
  }

  bool failed = false;
  std::string output;
  for (const std::string &chunk : chunks) {
    tilec::CompileResult result = tilec::compile(chunk, options);
    if (!result.ok) {
      llvm::errs() << result.diagnostics;
      failed = true;
      continue;
    }
    if (printSignature)
      for (const tilec::KernelSignature &sig : result.kernels) {
        llvm::errs() << "kernel " << sig.name << " threads=" << sig.numThreads
                     << " grid=(";
        for (size_t i = 0; i < sig.grid.size(); ++i)
          llvm::errs() << (i ? ", " : "") << sig.grid[i].str(sig.params);
        llvm::errs() << ")\n";
      }
    output += result.output;
  }
  if (failed && !splitInputFile)
    return 1;
  std::error_code ec;
  llvm::ToolOutputFile out(outputFile, ec, llvm::sys::fs::OF_Text);
  if (ec) {
    llvm::errs() << "tilec: error: cannot write '" << outputFile << "': "
                 << ec.message() << "\n";
    return 1;
  }
  out.os() << output;
  out.keep();
  return failed ? 1 : 0;
}
