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

def TilePlanShared : Pass<"tile-plan-shared", "::mlir::ModuleOp"> {
  let summary = "plan every shared-memory buffer of each kernel in one place";
  let description = [{
    Runs after `tile-layout`, before `convert-tile-to-nvvm`. Collects every
    buffer a kernel keeps in shared memory: the mma pipeline's region
    (`tile.shared_bytes` from `tile-stage-shared`: stages, mbarriers, the
    buffers of column reductions and TMA stores), the slots of whole-tile
    reductions, the scans' buffer and the buffer through which transposes,
    takes, slices, axis reductions, CUDA-core mmas and broadcasts of
    computed tiles move data between threads. Each lives only while its op
    runs (every op synchronizes after its reads), except the slots of a
    reduction that runs once, a take whose write a later take reads, and the
    pipeline's region.

    Side by side when they fit, so that `tile-elide-barriers` may drop the
    barriers between ops on different buffers; otherwise all but the
    pipeline's region share one range (each op then keeps its barriers).
    The sum is checked against the architecture's limit (227 KiB on sm_90,
    163 KiB on sm_80) with an error at the op that needs the most. A kernel
    within 48 KiB and without a pipeline keeps static arrays; any other
    takes one dynamic array (`tile.shared_bytes`, which the runtime passes
    at launch), into which `tile-place-shared` puts the buffers after
    barrier elision. The plan is `tile.shared_buffers = {name = [offset,
    bytes], ...}` on the kernel.
  }];
  let options = [
    Option<"arch", "arch", "std::string", /*default=*/"\"sm_90a\"",
           "target architecture (sm_80, sm_90, sm_90a)">
  ];
}

def TilePlaceShared : Pass<"tile-place-shared", "::mlir::ModuleOp"> {
  let summary = "put a kernel's planned buffers into its dynamic shared memory";
  let description = [{
    Runs after `tile-elide-barriers` (which tells buffers apart by their
    globals and the plan's ranges). In each kernel whose plan
    (`tile.shared_buffers`, `tile.shared_bytes`) is one dynamic array, every
    address of a buffer's global becomes the array's address plus the
    buffer's offset, and the buffer's global goes.
  }];
}

#endif // TILEC_CONVERSION_PASSES_TD
