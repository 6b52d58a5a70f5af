//===- tilec.cpp - The tilec command-line compiler ------------------------===//
//
//   tilec FILE [-o OUT] [--arch=sm_80|sm_90|sm_90a]
//         [-emit=ast|tile|llvm|ptx|header|cubin] [-D NAME=VALUE]...
//         [--kernel NAME] [--num-warps N] [--min-blocks-per-sm N] [-O0..3] [--use-cache]
//   tilec cache list|clear|info
//   tilec tune FILE [--size N | --shape RxC]... [--tuning-db FILE] [--table]
//
// Default output is PTX on stdout (or OUT). Errors go to stderr in the
// `file:line:col: error:` form with the source line and a caret; the exit
// status is 1 on any error.
//
//===----------------------------------------------------------------------===//

#include "tilec/Cache.h"
#include "tilec/Compiler.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <cctype>
#include <ctime>

namespace cl = llvm::cl;

namespace {
enum class Output { AST, Tile, LLVM, PTX, Header, Cubin };
}

static cl::OptionCategory tilecCategory("tilec options");
static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<input .tile file>"),
                                      cl::Required, cl::cat(tilecCategory));
static cl::opt<std::string> outputFile("o", cl::desc("Output file (default: stdout)"),
                                       cl::value_desc("file"), cl::init("-"),
                                       cl::cat(tilecCategory));
static cl::opt<std::string> arch("arch", cl::desc("GPU architecture: sm_80, sm_90 or sm_90a"),
                                 cl::init("sm_90a"), cl::cat(tilecCategory));
static cl::opt<Output> emit(
    "emit", cl::desc("What to emit"), cl::init(Output::PTX),
    cl::values(clEnumValN(Output::AST, "ast", "the syntax tree"),
               clEnumValN(Output::Tile, "tile", "the tile dialect"),
               clEnumValN(Output::LLVM, "llvm", "optimized LLVM IR"),
               clEnumValN(Output::PTX, "ptx", "PTX assembly (default)"),
               clEnumValN(Output::Header, "header",
                          "a C++ header with the PTX and typed launch functions"),
               clEnumValN(Output::Cubin, "cubin", "a cubin, assembled by ptxas")),
    cl::cat(tilecCategory));
static cl::list<std::string> defines("D", cl::desc("Set a compile-time parameter"),
                                     cl::value_desc("NAME=VALUE"), cl::Prefix,
                                     cl::cat(tilecCategory));
static cl::opt<std::string> kernel("kernel", cl::desc("Compile only this kernel"),
                                   cl::init(""), cl::cat(tilecCategory));
static cl::opt<unsigned> numWarps("num-warps", cl::desc("Warps per block (0: automatic)"),
                                  cl::init(0), cl::cat(tilecCategory));
static cl::opt<unsigned> minBlocksPerSM(
    "min-blocks-per-sm",
    cl::desc("Blocks per SM that register allocation must allow (0: no limit)"), cl::init(0),
    cl::cat(tilecCategory));
static cl::opt<unsigned> optLevel("O", cl::desc("LLVM optimization level (0-3)"),
                                  cl::Prefix, cl::init(3), cl::cat(tilecCategory));
static cl::opt<std::string> headerNamespace(
    "namespace", cl::desc("C++ namespace of -emit=header (default: the file name)"),
    cl::init(""), cl::cat(tilecCategory));
static cl::opt<bool> useCache("use-cache",
                              cl::desc("Go through the compile cache (PTX only)"),
                              cl::init(false), cl::cat(tilecCategory));
static cl::opt<bool> splitInputFile(
    "split-input-file",
    cl::desc("Compile each '// -----' separated chunk on its own (for tests)"),
    cl::init(false), cl::cat(tilecCategory));
static cl::opt<bool> printSignature("print-signature",
                                    cl::desc("Print each kernel's launch signature to stderr"),
                                    cl::init(false), cl::cat(tilecCategory));

/// `tilec cache list|clear|info`.
static int cacheMain(int argc, char **argv) {
  tilec::CompileCache &cache = tilec::CompileCache::global();
  std::string cmd = argc > 1 ? argv[1] : "";
  if (cache.directory().empty()) {
    llvm::errs() << "tilec: the disk cache is off (TILEC_CACHE=0, or no HOME)\n";
    return cmd == "info" ? 0 : 1;
  }
  if (cmd == "list") {
    for (const auto &e : cache.list()) {
      char when[32];
      std::strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", std::localtime(&e.lastUse));
      llvm::outs() << e.key << "  " << llvm::format_decimal(e.bytes, 9) << " B  "
                   << when << "  ";
      if (!e.valid)
        llvm::outs() << "(corrupt: rebuilt on next use)";
      for (size_t i = 0; i < e.kernels.size(); ++i)
        llvm::outs() << (i ? ", " : "") << e.kernels[i];
      llvm::outs() << "\n";
    }
    return 0;
  }
  if (cmd == "clear") {
    size_t n = cache.clear();
    llvm::outs() << "removed " << n << " entries from " << cache.directory() << "\n";
    return 0;
  }
  if (cmd == "info") {
    tilec::CompileCache::Usage u = cache.usage();
    llvm::outs() << "directory: " << cache.directory() << "\n"
                 << "entries:   " << u.entries << "\n"
                 << "size:      " << u.bytes << " bytes\n"
                 << "limit:     " << cache.maxBytes() << " bytes\n"
                 << "compiler:  " << tilec::compilerVersion() << "\n";
    return 0;
  }
  llvm::errs() << "usage: tilec cache list|clear|info\n";
  return 2;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  if (argc > 1 && llvm::StringRef(argv[1]) == "cache")
    return cacheMain(argc - 1, argv + 1);
  if (argc > 1 && llvm::StringRef(argv[1]) == "tune") {
    // Ahead-of-time tuning runs the kernels, so it lives in tilec-check (next
    // to this binary), which generates inputs: `tilec tune FILE --size N`.
    std::string self = llvm::sys::fs::getMainExecutable(argv[0], (void *)&main);
    llvm::SmallString<256> check(llvm::sys::path::parent_path(self));
    llvm::sys::path::append(check, "tilec-check");
    std::vector<llvm::StringRef> args = {check, "--tune"};
    for (int i = 2; i < argc; ++i)
      args.push_back(argv[i]);
    std::string msg;
    int rc = llvm::sys::ExecuteAndWait(check, args, std::nullopt, {}, 0, 0, &msg);
    if (rc < 0)
      llvm::errs() << "tilec: error: cannot run " << check << ": " << msg << "\n";
    return rc < 0 ? 1 : rc;
  }
  cl::HideUnrelatedOptions(tilecCategory);
  {
    // LLVM's messages ("tilec: for the --emit option: Cannot find option
    // named 'x'!") become tilec errors; a bad -emit lists the valid values.
    // Values LLVM would reject with its own message on stderr are checked
    // first: -emit against its values, the counts as unsigned integers.
    for (int i = 1; i < argc; ++i) {
      llvm::StringRef arg(argv[i]);
      if (arg == "--")
        break;
      if (!arg.consume_front("-"))
        continue;
      arg.consume_front("-");
      auto [name, value] = arg.split('=');
      bool hasValue = arg.contains('=');
      if (!hasValue && (name == "emit" || name == "num-warps" || name == "min-blocks-per-sm") &&
          i + 1 < argc)
        value = argv[i + 1], hasValue = true;
      if (!hasValue)
        continue;
      if (name == "emit") {
        bool known = false;
        for (unsigned j = 0, e = emit.getParser().getNumOptions(); j < e; ++j)
          known |= value == emit.getParser().getOption(j);
        if (!known) {
          llvm::errs() << "tilec: error: unknown -emit value '" << value << "'; the values are ";
          for (unsigned j = 0, e = emit.getParser().getNumOptions(); j < e; ++j)
            llvm::errs() << (j ? ", " : "") << emit.getParser().getOption(j);
          llvm::errs() << "\n";
          return 1;
        }
      } else if (name == "num-warps" || name == "min-blocks-per-sm") {
        unsigned n;
        if (value.getAsInteger(0, n)) {
          llvm::errs() << "tilec: error: -" << name << " needs a non-negative integer, not '"
                       << value << "'\n";
          return 1;
        }
      }
    }
    std::string parseErrors;
    llvm::raw_string_ostream errs(parseErrors);
    if (!cl::ParseCommandLineOptions(argc, argv, "tilec: tile kernel compiler\n", &errs)) {
      llvm::StringRef rest(parseErrors);
      bool first = true;
      while (!rest.empty()) {
        auto [line, tail] = rest.split('\n');
        rest = tail;
        line = line.trim();
        if (line.empty())
          continue;
        line.consume_front("tilec: ");
        if (line.starts_with("Must specify at least 1 positional"))
          continue;
        if (line.starts_with("Not enough positional"))
          line = "no input file (usage: tilec FILE.tile [options]; see tilec --help)";
        line.consume_back("!");
        llvm::errs() << (first ? "tilec: error: " : "tilec: note: ") << line;
        first = false;
        if (line.contains("-emit option")) {
          llvm::errs() << "; the values are ";
          for (unsigned i = 0, e = emit.getParser().getNumOptions(); i < e; ++i)
            llvm::errs() << (i ? ", " : "") << emit.getParser().getOption(i);
        }
        llvm::errs() << "\n";
      }
      if (first)
        llvm::errs() << "tilec: error: invalid command line (see tilec --help)\n";
      return 1;
    }
  }

  auto buffer = llvm::MemoryBuffer::getFileOrSTDIN(inputFile, /*IsText=*/true);
  if (std::error_code ec = buffer.getError()) {
    llvm::errs() << "tilec: error: cannot read '" << inputFile << "': "
                 << ec.message() << "\n";
    return 1;
  }
  tilec::CompileOptions options;
  options.fileName = inputFile;
  options.arch = arch;
  switch (emit) {
  case Output::AST: options.emit = tilec::EmitKind::AST; break;
  case Output::Tile: options.emit = tilec::EmitKind::Tile; break;
  case Output::LLVM: options.emit = tilec::EmitKind::LLVM; break;
  default: options.emit = tilec::EmitKind::PTX; break;
  }
  options.kernel = kernel;
  options.numWarps = numWarps;
  options.minBlocksPerSM = minBlocksPerSM;
  options.optLevel = optLevel;
  for (const std::string &d : defines) {
    size_t eq = d.find('=');
    if (eq == std::string::npos || eq == 0) {
      llvm::errs() << "tilec: error: -D expects NAME=VALUE, got '" << d << "'\n";
      return 1;
    }
    std::string name = d.substr(0, eq), value = d.substr(eq + 1);
    auto [it, inserted] = options.defines.emplace(name, value);
    if (!inserted && it->second != value) {
      llvm::errs() << "tilec: error: parameter '" << name << "' is defined twice, as -D "
                   << name << "=" << it->second << " and -D " << name << "=" << value
                   << "\n";
      return 1;
    }
  }
  // Like a C compiler, never overwrite the source with the output.
  if (outputFile != "-" && inputFile != "-") {
    bool same = false;
    if (llvm::sys::fs::equivalent(inputFile, outputFile, same) || !same) {
      llvm::SmallString<256> in(inputFile), out(outputFile);
      same = !llvm::sys::fs::make_absolute(in) && !llvm::sys::fs::make_absolute(out) &&
             in == out;
    }
    if (same) {
      llvm::errs() << "tilec: error: the output file '" << outputFile
                   << "' is the input file; refusing to overwrite the source\n";
      return 1;
    }
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
    std::shared_ptr<const tilec::CompileResult> result =
        useCache ? tilec::compileCached(chunk, options)
                 : std::make_shared<const tilec::CompileResult>(
                       tilec::compile(chunk, options));
    if (!result->ok) {
      llvm::errs() << result->diagnostics;
      failed = true;
      continue;
    }
    if (printSignature)
      for (const tilec::KernelSignature &sig : result->kernels) {
        llvm::errs() << "kernel " << sig.name << " threads=" << sig.numThreads
                     << " grid=(";
        for (size_t i = 0; i < sig.grid.size(); ++i)
          llvm::errs() << (i ? ", " : "") << sig.grid[i].str(sig.params);
        llvm::errs() << ")";
        if (sig.sharedBytes)
          llvm::errs() << " shared=" << sig.sharedBytes;
        for (const tilec::TmaOperand &t : sig.tma)
          llvm::errs() << " tma=" << sig.params[t.param].name << "[" << t.boxRows << "x"
                       << t.boxCols << "]";
        if (sig.cluster > 1)
          llvm::errs() << " cluster=" << sig.cluster;
        for (const tilec::Heuristic &h : sig.heuristics)
          llvm::errs() << " heuristic(" << h.param << " = " << h.value.str(sig.params) << ")";
        llvm::errs() << "\n";
      }
    if (emit == Output::Header) {
      std::string ns = headerNamespace.empty() ? tilec::defaultHeaderNamespace(inputFile)
                                               : std::string(headerNamespace);
      if (std::string why = tilec::checkHeaderNamespace(ns); !why.empty()) {
        llvm::errs() << "tilec: error: " << why << "\n";
        return 1;
      }
      // A kernel whose @heuristic still chooses parameters gets a variant
      // per combination of the values it can give.
      output += tilec::generateHeader(*result, ns, llvm::sys::path::filename(inputFile).str(),
                                      tilec::compileHeuristicVariants(chunk, options, *result,
                                                                      useCache));
    } else if (emit == Output::Cubin) {
      std::string cubin, error;
      if (!tilec::assembleCubin(result->ptx, arch, cubin, error)) {
        llvm::errs() << "tilec: error: " << error << "\n";
        return 1;
      }
      output += cubin;
    } else {
      output += result->output;
    }
  }
  if (failed && !splitInputFile)
    return 1;
  std::error_code ec;
  llvm::ToolOutputFile out(outputFile, ec,
                           emit == Output::Cubin ? llvm::sys::fs::OF_None
                                                 : llvm::sys::fs::OF_Text);
  if (ec) {
    llvm::errs() << "tilec: error: cannot write '" << outputFile << "': "
                 << ec.message() << "\n";
    return 1;
  }
  // A write error (e.g. a full disk) is an error naming the file, not the
  // stream's fatal "IO failure on output stream" at exit.
  out.os() << output;
  out.os().close();
  if (std::error_code wec = out.os().error()) {
    out.os().clear_error();
    if (outputFile == "-" || !llvm::sys::fs::is_regular_file(outputFile))
      out.keep(); // never remove a device such as /dev/full
    llvm::errs() << "tilec: error: cannot write '"
                 << (outputFile == "-" ? std::string("<stdout>") : std::string(outputFile))
                 << "': " << wec.message() << "\n";
    return 1;
  }
  out.keep();
  return failed ? 1 : 0;
}
