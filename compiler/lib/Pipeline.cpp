//===- Pipeline.cpp - Pass pipelines and dialect registration -------------===//

#include "tilec/Pipeline.h"

#include "tilec/Conversion/Passes.h"
#include "tilec/Dialect/Tile/IR/TileDialect.h"
#include "tilec/Transforms/Passes.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Conversion/UBToLLVM/UBToLLVM.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVMPass.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Index/IR/IndexDialect.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void tilec::registerTilecDialects(DialectRegistry &registry) {
  registry.insert<tile::TileDialect, func::FuncDialect, arith::ArithDialect,
                  math::MathDialect, scf::SCFDialect, vector::VectorDialect,
                  cf::ControlFlowDialect, LLVM::LLVMDialect, NVVM::NVVMDialect,
                  index::IndexDialect, ub::UBDialect>();
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
}

void tilec::buildTileToLLVMPipeline(OpPassManager &pm,
                                    const PipelineOptions &options) {
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createTileFuse());
  TileStageSharedOptions stageOptions;
  stageOptions.arch = options.arch;
  stageOptions.numWarps = options.numWarps;
  pm.addPass(createTileStageShared(stageOptions));
  TileLayoutOptions layoutOptions;
  layoutOptions.numWarps = options.numWarps;
  layoutOptions.minBlocksPerSM = options.minBlocksPerSM;
  pm.addPass(createTileLayout(layoutOptions));
  TilePlanSharedOptions planOptions;
  planOptions.arch = options.arch;
  pm.addPass(createTilePlanShared(planOptions));
  pm.addPass(createConvertTileToNVVM());
  // After the lowering, region simplification (merging blocks, dropping
  // block arguments) finds nothing in any example kernel (their LLVM IR is
  // byte-identical without it) and costs 1-3.5 ms of a compile.
  GreedyRewriteConfig lowered;
  lowered.setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);
  pm.addPass(createCanonicalizerPass(lowered));
  // Without rollback the conversion does not record each op it moves when
  // it splits a block for an scf.if (a fused epilogue has over a hundred):
  // the same IR, matmul_scaled's conversion 65 -> 3 ms (docs/performance.md).
  SCFToControlFlowPassOptions scfOptions;
  scfOptions.allowPatternRollback = false;
  pm.addPass(createSCFToControlFlowPass(scfOptions));
  pm.addPass(createConvertVectorToLLVMPass());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createUBToLLVMConversionPass());
  pm.addPass(createConvertNVVMToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createTileElideBarriers());
  pm.addPass(createTilePlaceShared());
  pm.addPass(createCanonicalizerPass(lowered));
}

void tilec::registerTilecPasses() {
  registerTileTransformsPasses();
  registerTileConversionPasses();
  PassPipelineRegistration<>(
      "tile-to-llvm", "lower tile kernels to the LLVM dialect with NVVM ops",
      [](OpPassManager &pm) { buildTileToLLVMPipeline(pm, PipelineOptions()); });
}
