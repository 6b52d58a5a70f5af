//===- Passes.td - tile dialect transformations -----------*- tablegen -*-===//

#ifndef TILEC_TRANSFORMS_PASSES_TD
#define TILEC_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def TileLayout : Pass<"tile-layout", "::mlir::ModuleOp"> {
  let summary = "choose how each kernel's tiles are spread over threads";
  let description = [{
    Gives every kernel a blocked distribution of its tiles: the number of
    warps per block and the vector width (elements per thread per access)
    that makes global loads and stores 16 bytes wide where the element type
    and the innermost tile size allow. The choice is recorded on the kernel
    as `tile.num_warps` and `tile.vector_width` and read by
    `convert-tile-to-nvvm`.

    Before:
    ```mlir
    func.func @k(...) attributes {tile.kernel} { ... tensor<1024xf32> ... }
    ```
    After:
    ```mlir
    func.func @k(...) attributes {tile.kernel, tile.num_warps = 4 : i32,
                                  tile.vector_width = 4 : i32} { ... }
    ```
  }];
  let options = [
    Option<"numWarps", "num-warps", "unsigned", /*default=*/"0",
           "warps per block (0: choose from the tile sizes)">
  ];
}

#endif // TILEC_TRANSFORMS_PASSES_TD
