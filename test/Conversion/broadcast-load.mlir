// RUN: tile-opt %s -tile-layout -tile-plan-shared -convert-tile-to-nvvm | FileCheck %s
// RUN: tile-opt %s -tile-layout -tile-plan-shared -convert-tile-to-nvvm | grep -c "llvm.load" | FileCheck %s --check-prefix=COUNT
// A broadcast load reads each source element a thread needs once: over the
// 128 x 256 wgmma fragments of two consumer warpgroups a thread holds 2
// rows and 64 columns (128 elements), so a [128, 1] row scale costs 2 loads
// and a [1, 256] column scale 64, not 128 each.
// COUNT: 66
// CHECK-LABEL: llvm.func @rowscale(
// CHECK:         vector.from_elements {{.*}} : vector<128xf32>
// CHECK:         vector.from_elements {{.*}} : vector<128xf32>
// CHECK:         arith.mulf {{.*}} : vector<128xf32>
func.func @rowscale(%xp: !llvm.ptr<1>, %n: i64, %s: i64, %cp: !llvm.ptr<1>, %i: i32)
    attributes {tile.kernel, tile.encoding = #tile.mma<kind = wgmma, consumers = 2>} {
  %x = tile.make_view %xp[%n, %n] strides[%s, %s] : !llvm.ptr<1> -> !tile.view<f32, 2>
  %c = tile.make_view %cp[%n, %n] strides[%s, %s] : !llvm.ptr<1> -> !tile.view<f32, 2>
  %r = tile.broadcast_load %x[%i, %i] {src_shape = array<i64: 128, 1>} : !tile.view<f32, 2>, i32, i32 -> tensor<128x256xf32>
  %k = tile.broadcast_load %x[%i, %i] {src_shape = array<i64: 1, 256>} : !tile.view<f32, 2>, i32, i32 -> tensor<128x256xf32>
  %y = arith.mulf %r, %k : tensor<128x256xf32>
  tile.store %y, %c[%i, %i] : tensor<128x256xf32>, !tile.view<f32, 2>, i32, i32
  return
}
