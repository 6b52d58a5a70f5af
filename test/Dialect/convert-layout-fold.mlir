// tile.convert_layout folds (canonicalize): to the encoding the tile
// already has it is the tile itself, a chain converts the original once,
// and a round trip disappears.
// RUN: tile-opt %s -canonicalize | FileCheck %s

// CHECK-LABEL: func.func @same(
// CHECK-NEXT: return %arg0
func.func @same(%a: tensor<64xf32, #tile.blocked<vec = 4, warps = 2>>) -> tensor<64xf32, #tile.blocked<vec = 4, warps = 2>> {
  %b = tile.convert_layout %a : tensor<64xf32, #tile.blocked<vec = 4, warps = 2>> -> tensor<64xf32, #tile.blocked<vec = 4, warps = 2>>
  return %b : tensor<64xf32, #tile.blocked<vec = 4, warps = 2>>
}

// CHECK-LABEL: func.func @round_trip(
// CHECK-NEXT: return %arg0
func.func @round_trip(%a: tensor<64xf32, #tile.blocked<vec = 4, warps = 2>>) -> tensor<64xf32, #tile.blocked<vec = 4, warps = 2>> {
  %b = tile.convert_layout %a : tensor<64xf32, #tile.blocked<vec = 4, warps = 2>> -> tensor<64xf32, #tile.blocked<vec = 1, warps = 2>>
  %c = tile.convert_layout %b : tensor<64xf32, #tile.blocked<vec = 1, warps = 2>> -> tensor<64xf32, #tile.blocked<vec = 4, warps = 2>>
  return %c : tensor<64xf32, #tile.blocked<vec = 4, warps = 2>>
}

// CHECK-LABEL: func.func @chain(
// CHECK-NEXT: %[[C:.*]] = tile.convert_layout %arg0 : tensor<64xf32, #tile.blocked<vec = 4, warps = 2>> -> tensor<64xf32, #tile.blocked<vec = 2, warps = 2>>
// CHECK-NEXT: return %[[C]]
func.func @chain(%a: tensor<64xf32, #tile.blocked<vec = 4, warps = 2>>) -> tensor<64xf32, #tile.blocked<vec = 2, warps = 2>> {
  %b = tile.convert_layout %a : tensor<64xf32, #tile.blocked<vec = 4, warps = 2>> -> tensor<64xf32, #tile.blocked<vec = 1, warps = 2>>
  %c = tile.convert_layout %b : tensor<64xf32, #tile.blocked<vec = 1, warps = 2>> -> tensor<64xf32, #tile.blocked<vec = 2, warps = 2>>
  return %c : tensor<64xf32, #tile.blocked<vec = 2, warps = 2>>
}

// A conversion that changes the encoding stays.
// CHECK-LABEL: func.func @kept(
// CHECK-NEXT: tile.convert_layout %arg0
func.func @kept(%a: tensor<64xf32, #tile.blocked<vec = 4, warps = 2>>) -> tensor<64xf32, #tile.blocked<vec = 1, warps = 2>> {
  %b = tile.convert_layout %a : tensor<64xf32, #tile.blocked<vec = 4, warps = 2>> -> tensor<64xf32, #tile.blocked<vec = 1, warps = 2>>
  return %b : tensor<64xf32, #tile.blocked<vec = 1, warps = 2>>
}
