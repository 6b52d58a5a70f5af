//===- Passes.td - tile dialect conversions ---------------*- tablegen -*-===//

#ifndef TILEC_CONVERSION_PASSES_TD
#define TILEC_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertTileToNVVM : Pass<"convert-tile-to-nvvm", "::mlir::ModuleOp"> {
  let summary = "lower tile programs to per-thread code (vector, scf, llvm, nvvm)";
  let description = [{
    Rewrites each kernel (after `tile-layout`) from whole-tile values to the
    values one thread holds: a tile becomes a `vector<P x T>` of the P
    elements the thread owns, elementwise `arith`/`math` ops keep their
    meaning on those vectors, and `tile.load`/`tile.store` become global
    loads and stores. When a tile lies fully inside its view, the innermost
    stride is 1 and addresses are aligned, every access is a vector access
    (16 bytes for f32 x 4); otherwise each element is bounds-checked, padding
    is read and nothing is written out of bounds. The kernel is marked
    `nvvm.kernel` with `nvvm.maxntid`.

    ```mlir
    %t = tile.load %x[%i] : !tile.view<f32, 1>, i64 -> tensor<1024xf32>
    // becomes, per thread (4 warps, vector width 4):
    %v = scf.if %fast -> vector<8xf32> { llvm.load ... : vector<4xf32> ... }
         else { ... per-element guarded llvm.load ... }
    ```
  }];
  let dependentDialects = [
    "::mlir::LLVM::LLVMDialect", "::mlir::NVVM::NVVMDialect",
    "::mlir::scf::SCFDialect", "::mlir::vector::VectorDialect",
    "::mlir::arith::ArithDialect", "::mlir::math::MathDialect"
  ];
}

#endif // TILEC_CONVERSION_PASSES_TD
