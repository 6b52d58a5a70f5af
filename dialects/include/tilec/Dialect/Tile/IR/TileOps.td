//===- TileOps.td - Operations of the tile dialect --------*- tablegen -*-===//

#ifndef TILEC_DIALECT_TILE_IR_TILEOPS_TD
#define TILEC_DIALECT_TILE_IR_TILEOPS_TD

include "tilec/Dialect/Tile/IR/TileDialect.td"
include "tilec/Dialect/Tile/IR/TileTypes.td"
include "tilec/Dialect/Tile/IR/TileAttrs.td"
include "mlir/IR/BuiltinAttributes.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Dialect/LLVMIR/LLVMTypes.td"

def Tile_Tile : RankedTensorOf<[AnySignlessInteger, AnyFloat]>;

def Tile_MakeViewOp : Tile_Op<"make_view", [Pure, AttrSizedOperandSegments]> {
  let summary = "makes a global tensor view from a pointer, sizes and strides";
  let description = [{
    Builds a view of `rank` dimensions over global memory at `ptr`. `sizes`
    and `strides` (in elements) are run-time `i64` values, one per dimension.
    Kernel parameters of type `tensor<T, R>` arrive as a pointer, R sizes and
    R strides and are turned into a view with this op (`tile.param` names
    the parameter).

    A part of a parameter's view (the language's `narrow`) is a make_view
    too: its pointer is the part's first element and `offsets` (one per
    dimension) say where that element sits in the parameter's view, which
    is what a TMA descriptor of the parameter is addressed by.

    ```mlir
    %x = tile.make_view %ptr[%n] strides [%c1] : !tile.view<f32, 1>
    %y = tile.make_view %p2[%len, %d] strides [%s0, %s1] offsets [%start, %c0] {tile.param = 0 : i32} : ...
    ```
  }];
  let arguments = (ins LLVM_AnyPointer:$ptr, Variadic<I64>:$sizes,
                       Variadic<I64>:$strides, Variadic<I64>:$offsets);
  let results = (outs Tile_ViewType:$result);
  let assemblyFormat = [{
    $ptr `[` $sizes `]` `strides` `[` $strides `]` (`offsets` `[` $offsets^ `]`)? attr-dict `:` qualified(type($ptr)) `->` qualified(type($result))
  }];
  let hasVerifier = 1;
}

def Tile_ViewDimOp : Tile_Op<"view_dim", [Pure]> {
  let summary = "the run-time size of one dimension of a view";
  let description = [{
    ```mlir
    %n = tile.view_dim %x[0] : !tile.view<f32, 1>
    ```
  }];
  let arguments = (ins Tile_ViewType:$view, I32Attr:$dim);
  let results = (outs I64:$result);
  let assemblyFormat = "$view `[` $dim `]` attr-dict `:` qualified(type($view))";
  let hasVerifier = 1;
}

def Tile_ViewStrideOp : Tile_Op<"view_stride", [Pure]> {
  let summary = "the run-time stride (in elements) of one dimension of a view";
  let description = [{
    ```mlir
    %s = tile.view_stride %x[0] : !tile.view<f32, 2>
    ```
  }];
  let arguments = (ins Tile_ViewType:$view, I32Attr:$dim);
  let results = (outs I64:$result);
  let assemblyFormat = "$view `[` $dim `]` attr-dict `:` qualified(type($view))";
  let hasVerifier = 1;
}

def Tile_BlockIdOp : Tile_Op<"block_id", [Pure]> {
  let summary = "the index of this tile program along a grid dimension";
  let description = [{
    ```mlir
    %i = tile.block_id 0 : i32
    ```
  }];
  let arguments = (ins I32Attr:$dim);
  let results = (outs I32:$result);
  let assemblyFormat = "$dim attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Tile_NumBlocksOp : Tile_Op<"num_blocks", [Pure]> {
  let summary = "the number of tile programs along a grid dimension";
  let description = [{
    ```mlir
    %n = tile.num_blocks 0 : i32
    ```
  }];
  let arguments = (ins I32Attr:$dim);
  let results = (outs I32:$result);
  let assemblyFormat = "$dim attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Tile_SplatOp : Tile_Op<"splat", [Pure]> {
  let summary = "broadcasts a scalar to every element of a tile";
  let description = [{
    ```mlir
    %t = tile.splat %a : f32 -> tensor<1024xf32>
    ```
  }];
  let arguments = (ins AnyTypeOf<[AnySignlessInteger, AnyFloat]>:$value);
  let results = (outs Tile_Tile:$result);
  let assemblyFormat = "$value attr-dict `:` type($value) `->` type($result)";
  let hasVerifier = 1;
}

def Tile_RangeOp : Tile_Op<"range", [Pure]> {
  let summary = "the tile [0, 1, ..., n-1], or each element's index along a dimension";
  let description = [{
    A 1-D tile holds 0, 1, ..., n-1. A tile of higher rank holds, at every
    element, its index along dimension `dim` (default 0): tile-fuse makes
    one from a broadcast of index arithmetic on a 1-D range (column
    indices of a `[BM, BN]` score tile), so that every thread computes the
    indices of the elements it holds instead of receiving them.

    ```mlir
    %r = tile.range : tensor<128xi32>
    %c = tile.range {dim = 1 : i64} : tensor<64x128xi32>
    ```
  }];
  let arguments = (ins OptionalAttr<I64Attr>:$dim);
  let results = (outs RankedTensorOf<[I32]>:$result);
  let extraClassDeclaration = [{
    /// The dimension whose index each element holds.
    int64_t getIndexDim() { return getDim() ? int64_t(*getDim()) : 0; }
  }];
  let assemblyFormat = "attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Tile_ReduceOp : Tile_Op<"reduce", [Pure]> {
  let summary = "reduces a tile to a scalar, or over one axis (sum, max, min, prod, argmax, argmin)";
  let description = [{
    Combines every element of `tile` with `kind` (`sum`, `max`, `min`), or
    finds the row-major flat index (i32) of the first largest / smallest
    element (`argmax`, `argmin`; a NaN counts as the extreme). Floats are
    combined in f32 (f16/bf16 inputs are widened first); max and min
    propagate NaN.

    With `axis`, only that dimension is reduced and the result is the tile
    without it (argmax/argmin give the i32 index along the axis).

    Kind "fn" combines with the `combiner` region: one block with two
    scalar arguments of the element type, ending in `tile.yield` of the
    combined value. The combiner must be associative and commutative; the
    order in which elements meet is unspecified.

    ```mlir
    %m = tile.reduce "max" %t : tensor<1x1024xf32> -> f32
    %s = tile.reduce "sum" %t {axis = 1 : i32} : tensor<8x1024xf32> -> tensor<8xf32>
    %o = tile.reduce "fn" %u : tensor<256xi32> -> i32 {
    ^bb0(%a: i32, %b: i32):
      %c = arith.ori %a, %b : i32
      tile.yield %c : i32
    }
    ```
  }];
  let arguments = (ins StrAttr:$kind, Tile_Tile:$tile, OptionalAttr<I32Attr>:$axis);
  let results = (outs AnyTypeOf<[AnySignlessInteger, AnyFloat, Tile_Tile]>:$result);
  let regions = (region AnyRegion:$combiner);
  let assemblyFormat = [{
    $kind $tile attr-dict `:` type($tile) `->` type($result) ($combiner^)?
  }];
  let hasVerifier = 1;
}

def Tile_SharedTileOp : Tile_Op<"shared_tile", [Pure]> {
  let summary = "a tile that lives in shared memory at an address";
  let description = [{
    The pipeline lowering of a general mma loop (TileToNVVM's
    PipelineLowering) replaces each staged mma operand (a load, the
    reshape of a batched load, a transpose) with the tile its copy put in
    shared memory: `ptr` is where the stage holds it, the result type's
    #tile.shared encoding says how (order [1, 0]: rows of 128-byte swizzled
    boxes as copied; order [0, 1]: the same bytes read as the transposed
    tile, a K-major operand). Only mma takes such a tile.

    ```mlir
    %k = tile.shared_tile %p : !llvm.ptr<3> -> tensor<64x128xbf16, #tile.shared<swizzle = 128, order = [0, 1]>>
    ```
  }];
  let arguments = (ins LLVM_PointerInAddressSpace<3>:$ptr);
  let results = (outs Tile_Tile:$result);
  let assemblyFormat = "$ptr attr-dict `:` qualified(type($ptr)) `->` type($result)";
  let hasVerifier = 1;
}

def Tile_SharedCopyOp : Tile_Op<"shared_copy", [MemoryEffects<[MemWrite]>]> {
  let summary = "a computed mma operand written to shared memory";
  let description = [{
    An mma of the general pipeline reads b, and a transposed a, from shared
    memory (wgmma's B descriptor, ldmatrix on sm_80). Where such an operand
    is a computed tile, tile-layout writes it there with this op: the tile,
    in the accumulator layout, goes to `offset` bytes from the aligned start
    of the kernel's dynamic shared memory (a buffer tile-stage-shared
    planned) as rows of 128-byte swizzled boxes, the layout the staged
    loads have, and the result is what the mma reads: the tile itself
    (#tile.shared order [1, 0]) or its transpose (order [0, 1], the shape
    reversed). The lowering keeps the buffer's readers apart: it waits for
    the warpgroup's wgmmas (the last iteration's readers) and for every
    consumer warp before writing, and fences and waits again before the mma.

    ```mlir
    %b = tile.shared_copy %g {offset = 66560 : i64} : tensor<128x128xbf16, #tile.mma<...>> -> tensor<128x128xbf16, #tile.shared<swizzle = 128, order = [1, 0]>>
    ```
  }];
  let arguments = (ins Tile_Tile:$tile, I64Attr:$offset);
  let results = (outs Tile_Tile:$result);
  let assemblyFormat = "$tile attr-dict `:` type($tile) `->` type($result)";
  let hasVerifier = 1;
}

def Tile_WgmmaWaitOp : Tile_Op<"wgmma_wait"> {
  let summary = "wait for the tensor cores' asynchronous mma results";
  let description = [{
    The pipeline lowering of a general mma loop issues some mmas without
    waiting for them (tile.wgmma_wait = -1 on the tile.mma) so that other
    work of the warpgroup runs while the tensor cores do; this op waits
    until at most `pending` of the warpgroup's most recent mma groups are
    still running (wgmma.wait_group) and gives its operands back, now
    complete: every use of an unwaited mma's result goes through it, so no
    read of the accumulator can be moved above the wait.

    ```mlir
    %s2 = tile.wgmma_wait %s {pending = 1 : i64} : tensor<128x128xf32, #mma> -> tensor<128x128xf32, #mma>
    ```
  }];
  let arguments = (ins Variadic<Tile_Tile>:$tiles, I64Attr:$pending);
  let results = (outs Variadic<Tile_Tile>:$results);
  let assemblyFormat = "$tiles attr-dict `:` type($tiles) `->` type($results)";
  let hasVerifier = 1;
  let builders = [OpBuilder<(ins "::mlir::ValueRange":$tiles, "int64_t":$pending), [{
    build($_builder, $_state, tiles.getTypes(), tiles, $_builder.getI64IntegerAttr(pending));
  }]>];
}

def Tile_ConvertLayoutOp : Tile_Op<"convert_layout", [Pure]> {
  let summary = "the same tile in another layout encoding";
  let description = [{
    Moves a tile's elements between threads (or between registers and
    shared memory) so that it is held in the result type's encoding; the
    values are unchanged. tile-layout inserts it where an op needs its
    operand in another encoding than the one it was produced in.

    ```mlir
    %r = tile.convert_layout %t : tensor<64xf32, #tile.blocked<vec = 4, warps = 2>>
                                -> tensor<64xf32, #tile.blocked<vec = 1, warps = 2>>
    ```

    Folds away when it converts to the encoding the tile already has, and a
    conversion of a conversion converts the original tile once (back to
    where it came from: not at all).
  }];
  let arguments = (ins Tile_Tile:$tile);
  let results = (outs Tile_Tile:$result);
  let assemblyFormat = "$tile attr-dict `:` type($tile) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Tile_ReshapeOp : Tile_Op<"reshape", [Pure]> {
  let summary = "the same elements in row-major order, with another shape";
  let description = [{
    ```mlir
    %r = tile.reshape %t : tensor<1024xf32> -> tensor<1x1024xf32>
    ```
  }];
  let arguments = (ins Tile_Tile:$tile);
  let results = (outs Tile_Tile:$result);
  let assemblyFormat = "$tile attr-dict `:` type($tile) `->` type($result)";
  let hasVerifier = 1;
}

def Tile_LoadOp : Tile_Op<"load", [MemoryEffects<[MemRead]>]> {
  let summary = "loads a rectangular tile from a view by tile index";
  let description = [{
    Loads the tile whose origin is `indices[d] * shape[d]` in every dimension
    `d` of `view`; the tile shape is the result shape. Elements outside the
    view read as `padding` (zero when absent).

    ```mlir
    %t = tile.load %x[%i] : !tile.view<f32, 1> -> tensor<1024xf32>
    %u = tile.load %y[%i, %j] {padding = -1.0 : f32} : !tile.view<f32, 2> -> tensor<32x64xf32>
    ```
  }];
  let arguments = (ins Tile_ViewType:$view, Variadic<AnySignlessInteger>:$indices,
                       OptionalAttr<TypedAttrInterface>:$padding);
  let results = (outs Tile_Tile:$result);
  let assemblyFormat = [{
    $view `[` $indices `]` attr-dict `:` qualified(type($view)) `,` type($indices) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tile_LoadScalarOp : Tile_Op<"load_scalar", [MemoryEffects<[MemRead]>]> {
  let summary = "loads one element of a view by element index";
  let description = [{
    The element at `indices` (element, not tile, indices), or zero when it
    lies outside the view; every thread reads it.

    ```mlir
    %s = tile.load_scalar %cu[%b] : !tile.view<i32, 1>, i64 -> i32
    ```
  }];
  let arguments = (ins Tile_ViewType:$view, Variadic<AnySignlessInteger>:$indices);
  let results = (outs AnyTypeOf<[AnySignlessInteger, AnyFloat]>:$result);
  let assemblyFormat = [{
    $view `[` $indices `]` attr-dict `:` qualified(type($view)) `,` type($indices) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tile_StoreOp : Tile_Op<"store", [MemoryEffects<[MemWrite]>]> {
  let summary = "stores a rectangular tile into a view by tile index";
  let description = [{
    Stores `value` at the tile whose origin is `indices[d] * shape[d]`;
    elements that fall outside the view are not written.

    ```mlir
    tile.store %t, %y[%i] : tensor<1024xf32>, !tile.view<f32, 1>, i32
    ```
  }];
  let arguments = (ins Tile_Tile:$value, Tile_ViewType:$view,
                       Variadic<AnySignlessInteger>:$indices);
  let assemblyFormat = [{
    $value `,` $view `[` $indices `]` attr-dict `:` type($value) `,` qualified(type($view)) `,` type($indices)
  }];
  let hasVerifier = 1;
}

def Tile_BroadcastOp : Tile_Op<"broadcast", [Pure]> {
  let summary = "repeats a tile along new leading or size-1 dimensions";
  let description = [{
    Numpy broadcasting: the shapes are aligned at the innermost dimension;
    every dimension of `tile` is either equal to the result's or 1, and
    missing leading dimensions are added.

    ```mlir
    %b = tile.broadcast %bias : tensor<128xf32> -> tensor<64x128xf32>
    ```
  }];
  let arguments = (ins Tile_Tile:$tile);
  let results = (outs Tile_Tile:$result);
  let assemblyFormat = "$tile attr-dict `:` type($tile) `->` type($result)";
  let hasVerifier = 1;
}

def Tile_MmaOp : Tile_Op<"mma", [Pure, AllTypesMatch<["acc", "result"]>]> {
  let summary = "matrix multiply-accumulate of tiles: a * b + acc";
  let description = [{
    `a` is MxK, `b` is KxN and `acc` is MxN. f16 and bf16 operands
    accumulate in f32; on sm_90a the product runs on the tensor cores
    (wgmma) after tile-stage-shared stages the operands in shared memory,
    on sm_80 with mma.sync. f32 operands run on the CUDA cores, or, with
    `tf32`, on the tensor cores with the operands rounded to TF32 (10-bit
    mantissa).

    With `if %pred` the product is taken only where `pred` holds (the
    result is `acc` otherwise): tile-fuse makes
    `if c { acc = mma(a, b, acc); }` one (a block-sparse loop skips the
    tensor-core work of its empty blocks), and the mma lowerings issue the
    product in a branch on `pred` as lane 0 of each warp holds it.

    ```mlir
    %d = tile.mma %a, %b, %c : tensor<128x64xbf16>, tensor<64x128xbf16>, tensor<128x128xf32>
    %e = tile.mma %x, %y, %c {tf32} : tensor<128x32xf32>, tensor<32x128xf32>, tensor<128x128xf32>
    %f = tile.mma %a, %b, %c if %nonzero : tensor<128x64xbf16>, tensor<64x128xbf16>, tensor<128x128xf32>
    ```
  }];
  let arguments = (ins Tile_Tile:$a, Tile_Tile:$b, Tile_Tile:$acc, Optional<I1>:$pred,
                       UnitAttr:$tf32);
  let results = (outs Tile_Tile:$result);
  let assemblyFormat = [{
    $a `,` $b `,` $acc (`if` $pred^)? attr-dict `:` type($a) `,` type($b) `,` type($acc)
  }];
  let hasVerifier = 1;
}

def Tile_BroadcastLoadOp : Tile_Op<"broadcast_load", [MemoryEffects<[MemRead]>]> {
  let summary = "loads a tile and broadcasts it, without materializing the small tile";
  let description = [{
    The fusion of `tile.broadcast(tile.load(...))` made by tile-fuse: loads
    the tile of shape `src_shape` at `indices` (as `tile.load` does, padding
    with zero) and broadcasts it to the result shape. Each thread reads the
    elements it holds in the result's layout directly.

    ```mlir
    %b = tile.broadcast_load %bias[%n] {src_shape = array<i64: 128>} : !tile.view<f32, 1>, i64 -> tensor<128x128xf32>
    ```
  }];
  let arguments = (ins Tile_ViewType:$view, Variadic<AnySignlessInteger>:$indices,
                       DenseI64ArrayAttr:$src_shape);
  let results = (outs Tile_Tile:$result);
  let assemblyFormat = [{
    $view `[` $indices `]` attr-dict `:` qualified(type($view)) `,` type($indices) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tile_GatherOp : Tile_Op<"gather", [MemoryEffects<[MemRead]>, AttrSizedOperandSegments]> {
  let summary = "loads the elements at index tiles (irregular access)";
  let description = [{
    Element `e` of the result reads `view[indices[0][e], indices[1][e], ...]`
    when every index is inside the view and `mask[e]` (when given) holds;
    otherwise it is `fill` (zero when absent). All index tiles and the mask
    have the result's shape (the frontend broadcasts them).

    ```mlir
    %g = tile.gather %x[%idx] mask %m {fill = -1.0 : f32} : !tile.view<f32, 1>, tensor<128xi64>, tensor<128xi1> -> tensor<128xf32>
    ```
  }];
  let arguments = (ins Tile_ViewType:$view, Variadic<Tile_Tile>:$indices,
                       Optional<Tile_Tile>:$mask, OptionalAttr<TypedAttrInterface>:$fill);
  let results = (outs Tile_Tile:$result);
  let assemblyFormat = [{
    $view `[` $indices `]` (`mask` $mask^)? attr-dict `:` qualified(type($view)) `,` type($indices) (`mask` type($mask)^)? `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tile_ScatterOp : Tile_Op<"scatter", [MemoryEffects<[MemWrite]>, AttrSizedOperandSegments]> {
  let summary = "stores elements at index tiles (irregular access)";
  let description = [{
    Writes `values[e]` to `view[indices[0][e], ...]` for every element whose
    indices are inside the view and whose `mask` (when given) holds. When
    two elements name the same location, one of them is written.

    ```mlir
    tile.scatter %v, %x[%idx] : tensor<128xf32>, !tile.view<f32, 1>, tensor<128xi64>
    ```
  }];
  let arguments = (ins Tile_Tile:$values, Tile_ViewType:$view, Variadic<Tile_Tile>:$indices,
                       Optional<Tile_Tile>:$mask);
  let assemblyFormat = [{
    $values `,` $view `[` $indices `]` (`mask` $mask^)? attr-dict `:` type($values) `,` qualified(type($view)) `,` type($indices) (`mask` type($mask)^)?
  }];
  let hasVerifier = 1;
}

def Tile_AtomicOp : Tile_Op<"atomic", [MemoryEffects<[MemRead, MemWrite]>, AttrSizedOperandSegments]> {
  let summary = "element-wise atomic read-modify-write at index tiles";
  let description = [{
    For every element whose indices are inside the view and whose `mask`
    (when given) holds, atomically combines `values[e]` into
    `view[indices...]` with `kind` (`add`, `min`, `max`, `umin`, `umax`
    (unsigned), `xchg`, or `cas`,
    which stores `values[e]` where the location equals `cmp[e]`) and
    returns the previous contents (zero for skipped elements). Relaxed
    ordering, device scope.

    ```mlir
    %old = tile.atomic "add" %v, %h[%bin] : tensor<4096xi32>, !tile.view<i32, 1>, tensor<4096xi64> -> tensor<4096xi32>
    ```
  }];
  let arguments = (ins StrAttr:$kind, Tile_Tile:$values, Tile_ViewType:$view,
                       Variadic<Tile_Tile>:$indices, Optional<Tile_Tile>:$cmp,
                       Optional<Tile_Tile>:$mask);
  let results = (outs Tile_Tile:$result);
  let assemblyFormat = [{
    $kind $values `,` $view `[` $indices `]` (`cmp` $cmp^)? (`mask` $mask^)? attr-dict `:` type($values) `,` qualified(type($view)) `,` type($indices) (`cmp` type($cmp)^)? (`mask` type($mask)^)? `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tile_PermuteOp : Tile_Op<"permute", [Pure]> {
  let summary = "reorders the dimensions of a tile (transpose)";
  let description = [{
    Result dimension `d` is dimension `permutation[d]` of `tile`: element
    `r[i_0, ..., i_n]` is `tile[j]` with `j[permutation[d]] = i_d`.

    ```mlir
    %t = tile.permute %x {permutation = array<i64: 1, 0>} : tensor<64x32xf32> -> tensor<32x64xf32>
    ```
  }];
  let arguments = (ins Tile_Tile:$tile, DenseI64ArrayAttr:$permutation);
  let results = (outs Tile_Tile:$result);
  let assemblyFormat = "$tile attr-dict `:` type($tile) `->` type($result)";
  let hasVerifier = 1;
}

def Tile_ScanOp : Tile_Op<"scan", [Pure, SameOperandsAndResultType]> {
  let summary = "inclusive prefix scan of a 1-D tile (cumsum, or a user combiner)";
  let description = [{
    Element `i` of the result combines elements `0..i` of `tile`: their sum
    (f16 and bf16 summed in f32), or, with a `combiner` region (two scalar
    arguments, `tile.yield` of the combined value; it must be associative),
    `f(...f(f(t0, t1), t2)..., ti)` in some association.

    ```mlir
    %c = tile.scan %t : tensor<1024xf32>
    %m = tile.scan %t : tensor<1024xf32> {
    ^bb0(%a: f32, %b: f32):
      %c = arith.maximumf %a, %b : f32
      tile.yield %c : f32
    }
    ```
  }];
  let arguments = (ins Tile_Tile:$tile);
  let results = (outs Tile_Tile:$result);
  let regions = (region AnyRegion:$combiner);
  let assemblyFormat = "$tile attr-dict `:` type($tile) ($combiner^)?";
  let hasVerifier = 1;
}

def Tile_PrintOp : Tile_Op<"print", [MemoryEffects<[MemWrite]>]> {
  let summary = "device printf of scalars and tiles";
  let description = [{
    Prints `text` and the values through the device's printf. With only
    scalars, thread 0 of the program prints one line
    `pid (x, y, z): text v...`; with tiles (all of one shape), every element
    is printed on its own line with its index:
    `pid (x, y, z) idx (i, j): text v...` (scalars repeat on every line).
    `unsigned_values` marks the integer values to print as unsigned.

    ```mlir
    tile.print %a, %t {text = "a, t ="} : f32, tensor<16xf32>
    ```
  }];
  let arguments = (ins StrAttr:$text, Variadic<AnyType>:$values,
                       OptionalAttr<DenseBoolArrayAttr>:$unsigned_values);
  let assemblyFormat = "$values attr-dict `:` type($values)";
  let hasVerifier = 1;
}

def Tile_AssertOp : Tile_Op<"assert", [MemoryEffects<[MemWrite]>]> {
  let summary = "stops the kernel when a condition is false";
  let description = [{
    When `cond` (an i1 scalar or tile) is false for an element, the kernel
    stops with a device-side assertion that reports `message` and the
    `.tile` source location `file`:`line`; the launch then fails.

    ```mlir
    tile.assert %ok {message = "i < n", file = "k.tile", line = 7 : i32} : tensor<128xi1>
    ```
  }];
  let arguments = (ins AnyType:$cond, StrAttr:$message, StrAttr:$file, I32Attr:$line);
  let assemblyFormat = "$cond attr-dict `:` type($cond)";
  let hasVerifier = 1;
}

def Tile_SliceOp : Tile_Op<"slice", [Pure]> {
  let summary = "a rectangular part of a tile at constant offsets";
  let description = [{
    Element `r[i...]` is `tile[i + offsets...]`; the result shape is the
    size of the part, which must lie inside the tile.

    ```mlir
    %s = tile.slice %t {offsets = array<i64: 0, 8>} : tensor<4x16xf32> -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Tile_Tile:$tile, DenseI64ArrayAttr:$offsets);
  let results = (outs Tile_Tile:$result);
  let assemblyFormat = "$tile attr-dict `:` type($tile) `->` type($result)";
  let hasVerifier = 1;
}

def Tile_YieldOp : Tile_Op<"yield", [Pure, Terminator,
                                     ParentOneOf<["ReduceOp", "ScanOp"]>]> {
  let summary = "the combined value of a reduce or scan combiner";
  let arguments = (ins AnyTypeOf<[AnySignlessInteger, AnyFloat]>:$value);
  let assemblyFormat = "$value attr-dict `:` type($value)";
}

def Tile_TakeOp : Tile_Op<"take", [Pure]> {
  let summary = "elements of a 1-D tile at an index tile";
  let description = [{
    Element `r[i...]` is `tile[index[i...]]`; an index outside the tile
    gives 0. The result has the index's shape and the tile's element type.

    ```mlir
    %r = tile.take %c[%i] : tensor<4096xf32>, tensor<256xi32> -> tensor<256xf32>
    ```
  }];
  let arguments = (ins Tile_Tile:$tile, Tile_Tile:$index);
  let results = (outs Tile_Tile:$result);
  let assemblyFormat = "$tile `[` $index `]` attr-dict `:` type($tile) `,` type($index) `->` type($result)";
  let hasVerifier = 1;
}

#endif // TILEC_DIALECT_TILE_IR_TILEOPS_TD
