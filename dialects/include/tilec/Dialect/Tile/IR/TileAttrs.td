//===- TileAttrs.td - Layout encodings of the tile dialect -*- tablegen -*-===//
//
// How a tile's elements are spread over the threads of a block (distributed
// encodings: blocked, mma) or laid out in shared memory (shared), and the
// derived forms an mma operand or a reduction result takes (dot_operand,
// slice). Learned from Triton's TritonGPU encodings and TileLang's fragment
// layouts; see docs/architecture.md, "Layouts".
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_DIALECT_TILE_IR_TILEATTRS_TD
#define TILEC_DIALECT_TILE_IR_TILEATTRS_TD

include "tilec/Dialect/Tile/IR/TileDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/IR/TensorEncoding.td"
include "mlir/IR/EnumAttr.td"

//===----------------------------------------------------------------------===//
// The one question every distributed encoding answers
//===----------------------------------------------------------------------===//

def Tile_DistributedEncodingInterface : AttrInterface<"DistributedEncodingAttr"> {
  let cppNamespace = "::tilec::tile";
  let description = [{
    Which elements of a tile each thread holds, and in which registers. A
    thread holds its elements of a tile as one vector of
    `getGroups(shape) * getGroupWidth()` registers: `getGroups(shape)`
    groups of `getGroupWidth()` elements that are consecutive in the
    row-major tile. Register `g * width + v` of thread `t` holds flat
    row-major index `getGroupBase(shape, t, g) + v`; a group for which
    `groupMayPad` is true may lie past the tile's end (padding registers,
    never read from or written to memory). `emitGroupBase` builds the same
    index as IR for the lowering; `getGroupBase` is its host-side twin
    (tests check that every element is held exactly once).
  }];
  let methods = [
    InterfaceMethod<"Threads of the block the tile is spread over.",
      "unsigned", "getThreadsPerBlock">,
    InterfaceMethod<"Elements per group (consecutive in the row-major tile).",
      "unsigned", "getGroupWidth">,
    InterfaceMethod<"Groups each thread holds of a tile of this shape.",
      "int64_t", "getGroups", (ins "::llvm::ArrayRef<int64_t>":$shape)>,
    InterfaceMethod<"Whether group `group` may lie past the tile's end.",
      "bool", "groupMayPad", (ins "::llvm::ArrayRef<int64_t>":$shape, "int64_t":$group)>,
    InterfaceMethod<"The flat row-major index of the first element of group "
                    "`group` of thread `thread`.",
      "int64_t", "getGroupBase",
      (ins "::llvm::ArrayRef<int64_t>":$shape, "unsigned":$thread, "int64_t":$group)>,
    InterfaceMethod<"getGroupBase as IR: `tid` is the thread id as an i64; "
                    "the result is an i64.",
      "::mlir::Value", "emitGroupBase",
      (ins "::mlir::OpBuilder &":$b, "::mlir::Location":$loc, "::mlir::Value":$tid,
           "::llvm::ArrayRef<int64_t>":$shape, "int64_t":$group)>,
    InterfaceMethod<"A thread that runs the whole kernel (for work done once "
                    "per program).",
      "unsigned", "getLeaderThread">,
    InterfaceMethod<"Whether thread `thread` is the one that writes its "
                    "elements to memory (an encoding that holds an element "
                    "in several threads names one of them).",
      "bool", "isOwner", (ins "unsigned":$thread)>,
    InterfaceMethod<"isOwner as IR (an i1; `tid` builds the i64 thread id "
                    "when it is needed), or a null Value when every thread "
                    "that runs the code owns its elements.",
      "::mlir::Value", "emitOwner",
      (ins "::mlir::OpBuilder &":$b, "::mlir::Location":$loc,
           "::llvm::function_ref<::mlir::Value()>":$tid)>,
  ];
  let extraClassDeclaration = [{
    /// Registers (elements) each thread holds of a tile of this shape.
    int64_t getElemsPerThread(::llvm::ArrayRef<int64_t> shape) const {
      return getGroups(shape) * getGroupWidth();
    }
    /// Whether any group of a tile of this shape may be padding.
    bool mayPad(::llvm::ArrayRef<int64_t> shape) const {
      int64_t groups = getGroups(shape);
      return groups > 0 && groupMayPad(shape, groups - 1);
    }
  }];
}

class Tile_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Tile_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

//===----------------------------------------------------------------------===//
// blocked
//===----------------------------------------------------------------------===//

def Tile_BlockedEncodingAttr : Tile_Attr<"BlockedEncoding", "blocked",
    [DeclareAttrInterfaceMethods<Tile_DistributedEncodingInterface>,
     DeclareAttrInterfaceMethods<VerifiableTensorEncoding>]> {
  let summary = "vectors of consecutive elements dealt round-robin to the threads";
  let description = [{
    The tile is cut, in row-major order, into vectors of `vec` consecutive
    elements; thread t of the `warps * 32` holds vectors t, t + threads,
    t + 2 * threads, ...: its group r starts at flat index
    (r * threads + t) * vec. A tile whose size is not a multiple of
    threads * vec leaves padding in the last group. Elementwise work on two
    tiles of one blocked encoding never moves data between threads, and a
    load or store moves `vec` elements per access.

    ```mlir
    tensor<64x128xf32, #tile.blocked<vec = 4, warps = 4>>
    ```
  }];
  let parameters = (ins "unsigned":$vec, "unsigned":$warps);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

//===----------------------------------------------------------------------===//
// mma accumulator
//===----------------------------------------------------------------------===//

def Tile_MmaKind : I32EnumAttr<"MmaKind", "the instruction family of an mma", [
    I32EnumAttrCase<"wgmma", 0>,
    I32EnumAttrCase<"mma_sync", 1>,
    I32EnumAttrCase<"fma", 2>]> {
  let cppNamespace = "::tilec::tile";
  let genSpecializedAttr = 0;
}

def Tile_MmaEncodingAttr : Tile_Attr<"MmaEncoding", "mma",
    [DeclareAttrInterfaceMethods<Tile_DistributedEncodingInterface>,
     DeclareAttrInterfaceMethods<VerifiableTensorEncoding>]> {
  let summary = "the accumulator fragments of an mma pipeline";
  let description = [{
    An [BM, BN] accumulator (or [1, ..., 1, BM, BN], a batched result) as
    the mma instructions leave it in registers, spread over `consumers`
    consumer warpgroups; consumer c holds rows [c * BM / consumers,
    (c + 1) * BM / consumers).

    - `wgmma` (sm_90a): a producer warpgroup (warpgroup 0, which only
      issues TMA copies) comes first, consumer c is warpgroup c + 1. In each
      64-row block, warp w of a consumer holds rows 16w + lane/4 (+8) and
      columns 8j + 2 * (lane % 4) (+1), in the order of the wgmma result
      registers: groups of 2. A row lives in the 4 lanes of a quad.
    - `mma_sync` (sm_80): the same fragments (mma.sync m16n8 is laid out
      like wgmma), without a producer: warpgroup c is consumer c.
    - `fma` (CUDA-core consumers, after a producer): consumer thread
      c = 16 * ty + tx holds, for each group g = (rb * 4 + i) * (BN / 64) + cb,
      the 4 columns from cb * 64 + 4 * tx of row rb * 32 * consumers + ty +
      8 * consumers * i (a thread's rows are all ty modulo 8: the staged
      operands' swizzled chunk offsets are the same for all of them).

    A producer thread takes consumer 0's positions (it runs the code before
    the mma loop; its values are never stored).

    `swapped = true` (wgmma only): the instructions computed the transposed
    product, B^T A^T, so that a skinny BM (8 to 56 rows, wgmma's N) need not
    fill wgmma's 64-row M, which runs over the accumulator's columns
    instead. The registers are those of the [BN, BM] wgmma result: consumer
    c holds columns [c * BN / consumers, (c + 1) * BN / consumers); in each
    64-column block, warp w holds columns 16w + lane/4 (+8) of rows
    8j + 2 * (lane % 4) (+1). Two registers of a pair lie in two rows, so
    the groups are single elements.

    `alternate = true` (wgmma only, a persistent kernel's tiles): the
    consumer warpgroups take the outer loop's iterations in turn, each
    holding the whole tile (as consumer 0 of a `consumers = 1` encoding
    does), so that one's epilogue runs while another's wgmmas do
    (CUTLASS's ping-pong schedule). `getShare()` is the number of
    warpgroups a tile is spread over: 1 here, `consumers` otherwise.

    ```mlir
    tensor<128x256xf32, #tile.mma<kind = wgmma, consumers = 2>>
    tensor<16x128xf32, #tile.mma<kind = wgmma, consumers = 2, swapped = true>>
    tensor<128x128xf32, #tile.mma<kind = wgmma, consumers = 2, alternate = true>>
    ```
  }];
  let parameters = (ins EnumParameter<Tile_MmaKind>:$kind, "unsigned":$consumers,
                        DefaultValuedParameter<"bool", "false">:$swapped,
                        DefaultValuedParameter<"bool", "false">:$alternate);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let skipDefaultBuilders = 1;
  let builders = [
    AttrBuilder<(ins "MmaKind":$kind, "unsigned":$consumers,
                     CArg<"bool", "false">:$swapped, CArg<"bool", "false">:$alternate), [{
      return $_get($_ctxt, kind, consumers, swapped, alternate);
    }]>
  ];
  let extraClassDeclaration = [{
    /// Whether warpgroup 0 is a producer that only copies (wgmma, fma).
    bool hasProducer() const { return getKind() != MmaKind::mma_sync; }
    unsigned getWarps() const { return 4 * (getConsumers() + (hasProducer() ? 1 : 0)); }
    /// The warpgroups one tile is spread over (alternating ones each hold
    /// all of it).
    unsigned getShare() const { return getAlternate() ? 1 : getConsumers(); }
    /// wgmma / mma.sync fragments of a tile `chunks` 8-column chunks wide:
    /// the group (of 2 registers) for 64-row block mb, chunk j, half h.
    static int64_t fragmentGroup(int64_t mb, int64_t j, int64_t h, int64_t chunks) {
      return (mb * chunks + j) * 2 + h;
    }
  }];
}

//===----------------------------------------------------------------------===//
// slice, dot operand, shared
//===----------------------------------------------------------------------===//

def Tile_SliceEncodingAttr : Tile_Attr<"SliceEncoding", "slice",
    [DeclareAttrInterfaceMethods<Tile_DistributedEncodingInterface>,
     DeclareAttrInterfaceMethods<VerifiableTensorEncoding>]> {
  let summary = "a parent encoding with one dimension reduced away";
  let description = [{
    The encoding of the result of a reduction over dimension `dim` of a tile
    in encoding `parent`: element i is held by the threads that held row
    (or column) i of the parent, so the reduced value stays with the
    threads that will use it (e.g. a row maximum of a wgmma accumulator
    lives in the quad that holds the row).

    Supported: a `wgmma` or `mma_sync` accumulator (not swapped, not
    alternating), and

    - `dim = 1` (a reduction over the columns, leaving the rows) on `[BM]`,
      `[BM, 1]` and `[1, BM]` tiles: each thread holds the rows its
      accumulator fragments cover, one register per row (the 4 lanes of a
      quad hold the same rows; lane 0 of the quad owns them);
    - `dim = 0` (a reduction over the rows, leaving the columns) on `[BN]`
      and `[1, BN]` tiles: each thread holds the columns its fragments
      cover, 2 of each 8-column chunk (every lane with the same lane % 4, in
      every warp, holds the same columns; lanes 0-3 of the first consumer
      warp own them).

    A `blocked` parent (`dim = 1` only) needs `size`, the parent tile's
    row length N, since which threads share a row depends on it: a row of
    an [R, N] blocked tile is `N / vec` consecutive vectors, so it lies in
    L = N / vec consecutive threads (a power of two). With L <= threads, the
    L threads of each aligned run hold the row's value: group g of thread t
    holds row (g * threads + t) / L, and the first thread of the run owns it.
    With L > threads a row covers L / threads groups of every thread: group
    g of every thread holds row g, and thread 0 owns it. Either way the
    rows a thread holds are those of its parent groups, so broadcasting a
    `[R, 1]` column back to `[R, N]` moves nothing, and the reduction is
    thread-local work, L' = min(L, 32) lanes of shuffles and, for rows
    wider than a warp, one exchange of per-warp values in shared memory.

    ```mlir
    #tile.slice<dim = 1, parent = #tile.mma<kind = wgmma, consumers = 2>>
    #tile.slice<dim = 0, parent = #tile.mma<kind = wgmma, consumers = 2>>
    #tile.slice<dim = 1, parent = #tile.blocked<vec = 4, warps = 2>, size = 64>
    ```
  }];
  let parameters = (ins "unsigned":$dim, "::mlir::Attribute":$parent,
                        DefaultValuedParameter<"int64_t", "0">:$size);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let skipDefaultBuilders = 1;
  let builders = [
    AttrBuilder<(ins "unsigned":$dim, "::mlir::Attribute":$parent,
                     CArg<"int64_t", "0">:$size), [{
      return $_get($_ctxt, dim, parent, size);
    }]>
  ];
  let extraClassDeclaration = [{
    /// For a blocked parent: the threads that hold one row (L, at most the
    /// block's) and how many parent groups of a thread one row covers.
    unsigned getRowLanes() const;
    int64_t getRowRepeat() const;
    /// Whether rows of `size` elements of a `parent` tile can take the
    /// slice: they are a power of two of vectors (rowLengthFits), and the
    /// threads of a row divide the block's or are a multiple of them
    /// (rowLanesFit). The verifier and tile-layout's choice share them.
    static bool rowLengthFits(BlockedEncodingAttr parent, int64_t size);
    static bool rowLanesFit(BlockedEncodingAttr parent, int64_t size);
  }];
}

def Tile_DotOperandEncodingAttr : Tile_Attr<"DotOperandEncoding", "dot_operand"> {
  let summary = "the register form of an mma operand";
  let description = [{
    Operand `opIdx` (0: A, 1: B) of an mma whose accumulator has encoding
    `parent`, held in registers in the fragment order that instruction
    reads, `kWidth` consecutive K elements per register pair (2 for 16-bit
    types). For 16-bit types the accumulator of one mma, cast, is the A
    operand of the next with no data movement.

    ```mlir
    #tile.dot_operand<opIdx = 0, parent = #tile.mma<kind = wgmma, consumers = 2>, kWidth = 2>
    ```
  }];
  let parameters = (ins "unsigned":$opIdx, "::mlir::Attribute":$parent, "unsigned":$kWidth);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Tile_SharedEncodingAttr : Tile_Attr<"SharedEncoding", "shared"> {
  let summary = "a tile in shared memory";
  let description = [{
    A tile kept in shared memory with its dimensions laid out in `order`
    (fastest first) and `swizzle` bytes of swizzling (0, 32, 64 or 128, as
    TMA and wgmma's descriptors name them).

    ```mlir
    #tile.shared<swizzle = 128, order = [1, 0]>
    ```
  }];
  let parameters = (ins "unsigned":$swizzle, ArrayRefParameter<"unsigned">:$order);
  let assemblyFormat = "`<` `swizzle` `=` $swizzle `,` `order` `=` `[` $order `]` `>`";
  let genVerifyDecl = 1;
}

#endif // TILEC_DIALECT_TILE_IR_TILEATTRS_TD
