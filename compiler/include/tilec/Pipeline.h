//===- Pipeline.h - Pass pipelines and dialect registration ------*- C++ -*-===//
//
// The lowering pipeline as a library function, shared by `tilec`, the
// embedding API and `tile-opt` (as the `tile-to-llvm` pipeline).
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_PIPELINE_H
#define TILEC_PIPELINE_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"

#include <string>

namespace tilec {

/// Dialects, interfaces and LLVM IR translations the compiler needs.
void registerTilecDialects(mlir::DialectRegistry &registry);

/// Registers tilec's passes and the `tile-to-llvm` pipeline with the global
/// pass registry (for tile-opt).
void registerTilecPasses();

struct PipelineOptions {
  unsigned numWarps = 0;
  unsigned minBlocksPerSM = 0;
  std::string arch = "sm_90a";
};

/// tile dialect -> LLVM dialect with NVVM ops, ready for translation.
void buildTileToLLVMPipeline(mlir::OpPassManager &pm,
                             const PipelineOptions &options);

/// TILEC_TIME_PASSES=1 (a developer's switch, read once): every compile
/// prints to stderr where its time went: MLIR's pass timing report, the
/// LLVM -O3 pipeline's time and LLVM's per-pass timing of the NVPTX code
/// generation. LLVM's pass timing is process-wide state: for one compile at
/// a time (tilec, tilec-bench compile), not concurrent ones.
bool timePassesRequested();

/// Translates an LLVM-dialect module to LLVM IR and runs the NVPTX backend.
/// Returns false and sets `error` on failure. `llvmIR` (optional) receives
/// the optimized LLVM IR.
bool emitPTX(mlir::ModuleOp module, const std::string &arch, unsigned optLevel,
             std::string &ptx, std::string *llvmIR, std::string &error);

} // namespace tilec

#endif // TILEC_PIPELINE_H
