//===- TileDialect.td - The tile dialect ------------------*- tablegen -*-===//
//
// The `tile` dialect holds the tile-level program that the frontend produces:
// statically shaped tiles (builtin tensors) computed with arith/math ops, and
// the few operations that are specific to the language (tile-indexed global
// loads and stores, program ids, global tensor views).
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_DIALECT_TILE_IR_TILEDIALECT_TD
#define TILEC_DIALECT_TILE_IR_TILEDIALECT_TD

include "mlir/IR/OpBase.td"

def Tile_Dialect : Dialect {
  let name = "tile";
  let summary = "Tile-level GPU kernel programs";
  let description = [{
    Operations of tilec's kernel language. Tiles are ranked tensors with a
    static shape; elementwise work on them uses `arith` and `math`. Global
    memory is reached through `!tile.view` values, built from a pointer and
    run-time sizes and strides.
  }];
  let cppNamespace = "::tilec::tile";
  let useDefaultTypePrinterParser = 1;
  let useDefaultAttributePrinterParser = 1;
  let extraClassDeclaration = [{
    /// The layout encodings (TileAttrs.cpp).
    void registerAttributes();
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::math::MathDialect",
    "::mlir::LLVM::LLVMDialect"
  ];
}

class Tile_Op<string mnemonic, list<Trait> traits = []>
    : Op<Tile_Dialect, mnemonic, traits>;

#endif // TILEC_DIALECT_TILE_IR_TILEDIALECT_TD
