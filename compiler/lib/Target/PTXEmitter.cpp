//===- PTXEmitter.cpp - LLVM dialect to PTX --------------------------------===//
//
// Translates the lowered module to LLVM IR, optimizes it with the NVPTX
// target's standard O3 pipeline and prints PTX through LLVM's NVPTX backend.
//
//===----------------------------------------------------------------------===//

#include "tilec/Pipeline.h"

#include "tilec/Dialect/Tile/IR/TileDialect.h"

#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/InlineAsm.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PassTimingInfo.h"
#include "llvm/IR/Verifier.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Triple.h"
#include "llvm/Transforms/Utils/LoopUtils.h"

#include <chrono>
#include <cstdlib>
#include <mutex>
#include <string_view>

using namespace tilec;

bool tilec::timePassesRequested() {
  static const bool on = [] {
    const char *t = std::getenv("TILEC_TIME_PASSES");
    return t && *t && std::string_view(t) != "0";
  }();
  return on;
}

static double msSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

static void initNVPTX() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
  });
}

/// Instruction selection builds a block at a time: each extractvalue of a
/// struct phi (a wgmma accumulator of up to 128 f32 carried by a loop)
/// copies every field of the phi's registers again, 256 times in a matmul
/// (3.5-5.6% of its compile time). A freeze of the phi, right after the
/// block's phis, is one copy that the extractvalues then read; a phi of
/// these values is never poison, so the freeze is the identity and the PTX
/// is unchanged (scripts/ptx-snapshot.sh). Runs after the IR is printed.
static void readStructPhisOnce(llvm::Module &module) {
  for (llvm::Function &f : module)
    for (llvm::BasicBlock &bb : f) {
      llvm::SmallVector<llvm::PHINode *> phis;
      for (llvm::PHINode &phi : bb.phis())
        if (phi.getType()->isStructTy() &&
            llvm::any_of(phi.users(), [](llvm::User *u) { return llvm::isa<llvm::ExtractValueInst>(u); }))
          phis.push_back(&phi);
      for (llvm::PHINode *phi : phis) {
        auto *frozen = new llvm::FreezeInst(phi, phi->getName() + ".once");
        frozen->insertBefore(bb.getFirstInsertionPt());
        phi->replaceUsesWithIf(frozen, [](llvm::Use &use) {
          return llvm::isa<llvm::ExtractValueInst>(use.getUser());
        });
      }
    }
}

/// Marks every loop that issues wgmmas `llvm.loop.unroll.disable`. The
/// O3 pipeline's unroller otherwise peels the first iteration of the
/// matmul's consumer loop (to fold its `i != 0` stage release), a second
/// copy of the loop's wgmma batch and descriptors that adds about 6 KB of
/// PTX to every matmul kernel for one compare and branch per K step; such
/// loops are never unrolled fully (their trip counts are K / BK).
static void keepWgmmaLoopsWhole(llvm::Module &module) {
  auto issuesWgmma = [](const llvm::BasicBlock *block) {
    for (const llvm::Instruction &inst : *block)
      if (auto *call = llvm::dyn_cast<llvm::CallInst>(&inst))
        if (auto *asmCall = llvm::dyn_cast<llvm::InlineAsm>(call->getCalledOperand()))
          if (llvm::StringRef(asmCall->getAsmString()).contains("wgmma.mma_async"))
            return true;
    return false;
  };
  for (llvm::Function &f : module) {
    if (f.isDeclaration())
      continue;
    llvm::DominatorTree dt(f);
    llvm::LoopInfo loops(dt);
    for (llvm::Loop *loop : loops.getLoopsInPreorder())
      if (llvm::any_of(loop->blocks(), issuesWgmma))
        llvm::addStringMetadataToLoop(loop, "llvm.loop.unroll.disable", 1);
  }
}

bool tilec::emitPTX(mlir::ModuleOp module, const std::string &arch,
                    unsigned optLevel, std::string &ptx, std::string *llvmIR,
                    std::string &error) {
  initNVPTX();
  llvm::LLVMContext llvmCtx;
  std::unique_ptr<llvm::Module> llvmModule =
      mlir::translateModuleToLLVMIR(module, llvmCtx, "tilec");
  if (!llvmModule) {
    error = "internal error: translation to LLVM IR failed";
    return false;
  }
  llvm::Triple triple("nvptx64-nvidia-cuda");
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return false;
  llvm::TargetOptions targetOptions;
  llvm::CodeGenOptLevel cgLevel = optLevel == 0   ? llvm::CodeGenOptLevel::None
                                  : optLevel == 1 ? llvm::CodeGenOptLevel::Less
                                  : optLevel == 2 ? llvm::CodeGenOptLevel::Default
                                                  : llvm::CodeGenOptLevel::Aggressive;
  // 32-bit shared-memory addresses save a 64-bit add per shared access and
  // registers (the segmented sum: 96 -> 92 registers at 5 blocks per SM).
  // Kernels of the mma pipeline keep 64-bit ones (their speed was measured
  // so). NVPTX reads the choice from a global option when the target
  // machine is made, hence the lock.
  bool shortPointers = llvm::none_of(module.getBody()->getOperations(),
                                     [](mlir::Operation &op) { return tile::hasMmaPipeline(&op); });
  std::unique_ptr<llvm::TargetMachine> tm;
  {
    static std::mutex lock;
    std::lock_guard<std::mutex> guard(lock);
    auto &registered = llvm::cl::getRegisteredOptions();
    auto it = registered.find("nvptx-short-ptr");
    auto *opt = it != registered.end() ? static_cast<llvm::cl::opt<bool> *>(it->second) : nullptr;
    if (opt)
      opt->setValue(shortPointers);
    tm.reset(target->createTargetMachine(triple, arch, "+ptx80", targetOptions, std::nullopt,
                                         std::nullopt, cgLevel));
    if (opt)
      opt->setValue(false);
  }
  if (!tm) {
    error = "cannot create an NVPTX target machine for " + arch;
    return false;
  }
  llvmModule->setTargetTriple(triple);
  llvmModule->setDataLayout(tm->createDataLayout());

  if (optLevel > 0) {
    keepWgmmaLoopsWhole(*llvmModule);
    llvm::LoopAnalysisManager lam;
    llvm::FunctionAnalysisManager fam;
    llvm::CGSCCAnalysisManager cgam;
    llvm::ModuleAnalysisManager mam;
    llvm::PassBuilder pb(tm.get());
    pb.registerModuleAnalyses(mam);
    pb.registerCGSCCAnalyses(cgam);
    pb.registerFunctionAnalyses(fam);
    pb.registerLoopAnalyses(lam);
    pb.crossRegisterProxies(lam, fam, cgam, mam);
    llvm::OptimizationLevel level = optLevel == 1   ? llvm::OptimizationLevel::O1
                                    : optLevel == 2 ? llvm::OptimizationLevel::O2
                                                    : llvm::OptimizationLevel::O3;
    llvm::ModulePassManager mpm = pb.buildPerModuleDefaultPipeline(level);
    auto start = std::chrono::steady_clock::now();
    mpm.run(*llvmModule, mam);
    if (timePassesRequested())
      llvm::errs() << "tilec: LLVM -O" << optLevel << " pipeline: "
                   << llvm::format("%.1f", msSince(start)) << " ms\n";
  }
  if (llvm::verifyModule(*llvmModule, &llvm::errs())) {
    error = "internal error: invalid LLVM IR";
    return false;
  }
  if (llvmIR) {
    llvm::raw_string_ostream os(*llvmIR);
    llvmModule->print(os, nullptr);
  }
  readStructPhisOnce(*llvmModule);
  llvm::SmallString<0> buffer;
  llvm::raw_svector_ostream os(buffer);
  llvm::legacy::PassManager pm;
  if (tm->addPassesToEmitFile(pm, os, nullptr,
                              llvm::CodeGenFileType::AssemblyFile)) {
    error = "the NVPTX backend cannot emit assembly";
    return false;
  }
  auto start = std::chrono::steady_clock::now();
  if (timePassesRequested())
    llvm::TimePassesIsEnabled = true;
  pm.run(*llvmModule);
  if (timePassesRequested()) {
    llvm::reportAndResetTimings(&llvm::errs());
    llvm::errs() << "tilec: NVPTX code generation: " << llvm::format("%.1f", msSince(start))
                 << " ms\n";
  }
  ptx.assign(buffer.begin(), buffer.end());
  return true;
}
