//===- TileTypes.td - Types of the tile dialect -----------*- tablegen -*-===//

#ifndef TILEC_DIALECT_TILE_IR_TILETYPES_TD
#define TILEC_DIALECT_TILE_IR_TILETYPES_TD

include "tilec/Dialect/Tile/IR/TileDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/BuiltinTypeInterfaces.td"

class Tile_Type<string name, string typeMnemonic, list<Trait> traits = []>
    : TypeDef<Tile_Dialect, name, traits> {
  let mnemonic = typeMnemonic;
}

def Tile_ViewType : Tile_Type<"View", "view"> {
  let summary = "a strided view of a tensor in global memory";
  let description = [{
    A view of `rank` dimensions over elements of `elementType` in global
    memory. Sizes and strides (in elements) are run-time values given when the
    view is made (`tile.make_view`).

    ```mlir
    !tile.view<f32, 2>
    ```
  }];
  let parameters = (ins "::mlir::Type":$elementType, "unsigned":$rank);
  let assemblyFormat = "`<` $elementType `,` $rank `>`";
  let genVerifyDecl = 1;
}

#endif // TILEC_DIALECT_TILE_IR_TILETYPES_TD
