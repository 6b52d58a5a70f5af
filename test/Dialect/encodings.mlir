// RUN: tile-opt %s | tile-opt | FileCheck %s
// Round trip of every layout encoding, on tile types and as attributes.

// CHECK-LABEL: func.func @on_types(
// CHECK-SAME: tensor<64x128xf32, #tile.blocked<vec = 4, warps = 4>>
// CHECK-SAME: tensor<128x256xf32, #tile.mma<kind = wgmma, consumers = 2>>
// CHECK-SAME: tensor<1x128x64xf32, #tile.mma<kind = mma_sync, consumers = 2>>
// CHECK-SAME: tensor<128x128xf32, #tile.mma<kind = fma, consumers = 2>>
// CHECK-SAME: tensor<16x128xf32, #tile.mma<kind = wgmma, consumers = 2, swapped = true>>
// CHECK-SAME: tensor<128x128xf32, #tile.mma<kind = wgmma, consumers = 2, alternate = true>>
// CHECK-SAME: tensor<128xf32, #tile.slice<dim = 1, parent = #tile.mma<kind = wgmma, consumers = 2, alternate = true>>>
// CHECK-SAME: tensor<128xf32, #tile.slice<dim = 1, parent = #tile.mma<kind = wgmma, consumers = 2>>>
// CHECK-SAME: tensor<128x1xf32, #tile.slice<dim = 1, parent = #tile.mma<kind = wgmma, consumers = 2>>>
// CHECK-SAME: tensor<256xf32, #tile.slice<dim = 0, parent = #tile.mma<kind = wgmma, consumers = 2>>>
// CHECK-SAME: tensor<1x136xbf16, #tile.slice<dim = 0, parent = #tile.mma<kind = mma_sync, consumers = 1>>>
// CHECK-SAME: tensor<4xf32, #tile.slice<dim = 1, parent = #tile.blocked<vec = 4, warps = 2>, size = 64>>
// CHECK-SAME: tensor<8x1xbf16, #tile.slice<dim = 1, parent = #tile.blocked<vec = 8, warps = 8>, size = 8192>>
func.func @on_types(%a: tensor<64x128xf32, #tile.blocked<vec = 4, warps = 4>>,
                    %b: tensor<128x256xf32, #tile.mma<kind = wgmma, consumers = 2>>,
                    %c: tensor<1x128x64xf32, #tile.mma<kind = mma_sync, consumers = 2>>,
                    %d: tensor<128x128xf32, #tile.mma<kind = fma, consumers = 2>>,
                    %g: tensor<16x128xf32, #tile.mma<kind = wgmma, consumers = 2, swapped = true>>,
                    %h: tensor<128x128xf32, #tile.mma<kind = wgmma, consumers = 2, alternate = true>>,
                    %i: tensor<128xf32, #tile.slice<dim = 1, parent = #tile.mma<kind = wgmma, consumers = 2, alternate = true>>>,
                    %e: tensor<128xf32, #tile.slice<dim = 1, parent = #tile.mma<kind = wgmma, consumers = 2>>>,
                    %f: tensor<128x1xf32, #tile.slice<dim = 1, parent = #tile.mma<kind = wgmma, consumers = 2>>>,
                    %j: tensor<256xf32, #tile.slice<dim = 0, parent = #tile.mma<kind = wgmma, consumers = 2>>>,
                    %k: tensor<1x136xbf16, #tile.slice<dim = 0, parent = #tile.mma<kind = mma_sync, consumers = 1>>>,
                    %l: tensor<4xf32, #tile.slice<dim = 1, parent = #tile.blocked<vec = 4, warps = 2>, size = 64>>,
                    %m: tensor<8x1xbf16, #tile.slice<dim = 1, parent = #tile.blocked<vec = 8, warps = 8>, size = 8192>>) {
  return
}

// CHECK-LABEL: func.func @as_attributes()
// CHECK-SAME: tile.blocked = #tile.blocked<vec = 1, warps = 32>
// CHECK-SAME: tile.dot = #tile.dot_operand<opIdx = 0, parent = #tile.mma<kind = wgmma, consumers = 1>, kWidth = 2>
// CHECK-SAME: tile.shared = #tile.shared<swizzle = 128, order = [1, 0]>
// CHECK-SAME: tile.slice = #tile.slice<dim = 1, parent = #tile.mma<kind = wgmma, consumers = 2>>
func.func @as_attributes() attributes {
    tile.blocked = #tile.blocked<vec = 1, warps = 32>,
    tile.slice = #tile.slice<dim = 1, parent = #tile.mma<kind = wgmma, consumers = 2>>,
    tile.dot = #tile.dot_operand<opIdx = 0, parent = #tile.mma<kind = wgmma, consumers = 1>, kWidth = 2>,
    tile.shared = #tile.shared<swizzle = 128, order = [1, 0]>} {
  return
}
