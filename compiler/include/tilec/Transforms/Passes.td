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
           "warps per block (0: choose from the tile sizes)">,
    Option<"minBlocksPerSM", "min-blocks-per-sm", "unsigned", /*default=*/"0",
           "blocks per SM that register allocation must allow, recorded as "
           "`tile.min_blocks_per_sm` (0: no limit)">
  ];
}

def TileFuse : Pass<"tile-fuse", "::mlir::ModuleOp"> {
  let summary = "fuse tile producers into their consumers";
  let description = [{
    Folds a broadcast of a loaded tile into one `tile.broadcast_load`, so
    that an epilogue such as `acc + load(bias, [n], [BN])` reads each bias
    element straight into the registers of the accumulator layout instead of
    materializing the small tile and moving it between threads. Elementwise
    epilogues need no rewrite: after tile-layout they run on the
    accumulator in registers and are stored once.

    Before:
    ```mlir
    %b = tile.load %bias[%n] : !tile.view<f32, 1>, i64 -> tensor<128xf32>
    %t = tile.broadcast %b : tensor<128xf32> -> tensor<128x128xf32>
    ```
    After:
    ```mlir
    %t = tile.broadcast_load %bias[%n] {src_shape = array<i64: 128>} : !tile.view<f32, 1>, i64 -> tensor<128x128xf32>
    ```
  }];
}

def TileStageShared : Pass<"tile-stage-shared", "::mlir::ModuleOp"> {
  let summary = "plan shared-memory staging and the software pipeline of mma loops";
  let description = [{
    Finds each `scf.for` whose body multiplies two loaded tiles into a
    loop-carried accumulator (`acc = mma(load(A, ...), load(B, ...), acc)`)
    and plans how its operands are staged through shared memory: on sm_90a,
    TMA copies into 128-byte-swizzled buffers, STAGES deep, guarded by
    mbarriers, consumed by wgmma in consumer warpgroups while a producer
    warpgroup issues the copies. It checks the shared-memory and register
    budget and reports a configuration that cannot fit as an error that
    names the kernel, the bytes needed and available, and what to shrink.

    The plan is recorded as attributes that convert-tile-to-nvvm reads:
    `tile.pipeline = {stages, consumers}` on the loop; `tile.layout =
    "wgmma"`, `tile.num_warps`, `tile.shared_bytes` and `tile.tma` on the
    kernel, whose parameters gain one TMA descriptor (passed by value) and
    one i32 "descriptor valid" flag per staged operand.
  }];
  let options = [
    Option<"arch", "arch", "std::string", /*default=*/"\"sm_90a\"",
           "target architecture (sm_80, sm_90, sm_90a)">,
    Option<"numWarps", "num-warps", "unsigned", /*default=*/"0",
           "warps per block of the sm_80 general mma pipeline (4 per consumer "
           "warpgroup; 0: the kernel's @launch(num_warps), else chosen)">
  ];
  // It wraps an mma outside any loop in a loop of one iteration.
  let dependentDialects = ["::mlir::scf::SCFDialect", "::mlir::arith::ArithDialect"];
}

def TileElideBarriers : Pass<"tile-elide-barriers", "::mlir::ModuleOp"> {
  let summary = "remove block barriers that order no shared-memory accesses";
  let description = [{
    Runs on the LLVM dialect after lowering, when every kernel is an
    `llvm.func` with a control-flow graph. The lowering of each tile op that
    moves data through shared memory brackets its accesses with
    `nvvm.barrier0` (a barrier before the reads, and one after them so that
    the next op may overwrite the buffer). Many trailing barriers order
    nothing: the next op uses another buffer. A barrier is removed when no
    shared-memory access that can run before it (back to the previous
    barrier, on any path) conflicts with one that can run after it (up to
    the next barrier): same buffer, at least one of the two a write.
    Buffers are the shared globals (two of them alias where their ranges in
    the kernel's `tile.shared_buffers` plan overlap); an access whose
    address cannot be traced to one conflicts with every access. Barriers are removed one at a time,
    each decision seeing the ones already removed, so every conflicting pair
    on every path keeps a barrier between them. Kernels with the mma
    pipeline (mbarriers, asynchronous copies) are left alone.

    Global memory is not considered: as in Triton, the lowering orders
    global accesses of different threads of a program only through atomics.
  }];
}

#endif // TILEC_TRANSFORMS_PASSES_TD
