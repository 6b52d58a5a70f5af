//===- Interpreter.cpp - Reference execution of kernels on the CPU --------===//
//
// A direct interpreter over the checked AST. Values are tiles or scalars of
// one element type, stored as doubles (floats) or int64 (integers, booleans)
// and rounded to their type after every operation. The evaluation order
// mirrors MLIRGen: operands are converted to the type Sema chose, untyped
// literals are made directly in that type, scalars meeting tiles are
// broadcast.
//
//===----------------------------------------------------------------------===//

#include "InterpreterImpl.h"

#include <cstdio>
#include <mutex>

using namespace tilec;
using namespace tilec::interp;

static bool interpretOnThisStack(std::string_view source, const CompileOptions &options,
                                 const std::string &kernel, const std::vector<HostArg> &args,
                                 std::string &error, InterpretFailure &failure);

bool tilec::interpretKernel(std::string_view source, const CompileOptions &options,
                            const std::string &kernel, const std::vector<HostArg> &args,
                            std::string &error, InterpretFailure *failure) {
  // On a stack of known size, like compile(): evaluation recurses as deep as
  // Sema did.
  bool ok = false;
  InterpretFailure why = InterpretFailure::Argument;
  runOnCompilerStack(
      [&] { ok = interpretOnThisStack(source, options, kernel, args, error, why); });
  if (!ok && failure)
    *failure = why;
  return ok;
}

static std::mutex printMutex;
static PrintSink printSink;

void tilec::setInterpreterPrintSink(PrintSink sink) {
  std::lock_guard<std::mutex> lock(printMutex);
  printSink = std::move(sink);
}

void tilec::interpreterPrint(std::string_view text) {
  std::lock_guard<std::mutex> lock(printMutex);
  if (printSink) {
    printSink(text);
    return;
  }
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
}

static bool interpretOnThisStack(std::string_view source, const CompileOptions &options,
                                 const std::string &kernel, const std::vector<HostArg> &args,
                                 std::string &error, InterpretFailure &failure) {
  failure = InterpretFailure::Compile;
  llvm::SourceMgr srcMgr;
  srcMgr.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(
                                llvm::StringRef(source.data(), source.size()),
                                options.fileName),
                            llvm::SMLoc());
  DiagEngine diags(srcMgr);
  std::unique_ptr<ModuleDecl> module = parseModule(diags);
  if (!module) {
    error = diags.text();
    return false;
  }
  KernelDecl *decl = nullptr;
  for (auto &k : module->kernels)
    if (k->name == kernel)
      decl = k.get();
  if (!decl) {
    error = "no kernel named '" + kernel + "'";
    failure = InterpretFailure::Argument;
    return false;
  }
  KernelInstance inst;
  std::set<std::string> used;
  if (!checkKernel(*decl, options.defines, diags, inst, used, options.arch)) {
    error = diags.text();
    return false;
  }
  const KernelSignature &sig = inst.signature;
  failure = InterpretFailure::Argument;
  if (args.size() != sig.params.size()) {
    error = "kernel '" + kernel + "' takes " + std::to_string(sig.params.size()) +
            " arguments, got " + std::to_string(args.size());
    return false;
  }
  // The grid, evaluated exactly as the runtime does.
  std::vector<ArgValue> values;
  for (size_t p = 0; p < args.size(); ++p) {
    const HostArg &a = args[p];
    const ParamInfo &info = sig.params[p];
    if (a.isTensor != info.isTensor || (a.isTensor && (a.sizes.size() != info.rank ||
                                                       a.strides.size() != info.rank))) {
      error = "argument " + std::to_string(p + 1) + " ('" + info.name +
              "') does not match the parameter";
      return false;
    }
    if (a.isTensor && !a.data) {
      bool empty = false;
      for (int64_t n : a.sizes)
        empty |= n == 0;
      if (!empty) {
        error = "argument " + std::to_string(p + 1) + " ('" + info.name +
                "') is a tensor with a NULL data pointer";
        return false;
      }
    }
    if (a.isTensor)
      values.emplace_back(TensorArg{0, a.sizes, a.strides, std::nullopt});
    else if (isFloatType(info.dtype))
      values.push_back(ArgValue::scalar(info.dtype, a.f));
    else
      values.push_back(ArgValue::scalar(info.dtype, a.i));
  }
  std::array<uint32_t, 3> grid;
  try {
    grid = evaluateGrid(sig, values,
                        {kInterpreterSMs, kInterpreterSMs * kInterpreterProgramsPerSM});
  } catch (const std::exception &e) {
    error = e.what();
    return false;
  }
  uint64_t programs = uint64_t(grid[0]) * grid[1] * grid[2];
  if (programs > kInterpreterMaxPrograms) {
    error = "the grid of kernel '" + kernel + "' is too large for the CPU interpreter: " +
            std::to_string(grid[0]) + " x " + std::to_string(grid[1]) + " x " +
            std::to_string(grid[2]) + " = " + std::to_string(programs) +
            " programs (at most " + std::to_string(kInterpreterMaxPrograms) + ")";
    return false;
  }
  failure = InterpretFailure::Run;
  Interp interp(inst, args, grid);
  interp.srcMgr = &srcMgr;
  interp.fileName = options.fileName;
  for (uint32_t z = 0; z < grid[2]; ++z)
    for (uint32_t y = 0; y < grid[1]; ++y)
      for (uint32_t x = 0; x < grid[0]; ++x)
        if (!interp.runProgram({x, y, z}, error))
          return false;
  return true;
}

float tilec::roundToTf32(float x) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  if ((u & 0x7f800000u) != 0x7f800000u) // inf and nan stay
    u = (u + 0x1000u) & 0xffffe000u;
  std::memcpy(&x, &u, 4);
  return x;
}
