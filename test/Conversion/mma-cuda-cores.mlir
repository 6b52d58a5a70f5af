// RUN: tile-opt %s -tile-layout -tile-plan-shared -convert-tile-to-nvvm | FileCheck %s
// An f32 mma in the blocked layout: a and b go to the relayout buffer (b at
// a 16-byte aligned offset after a: 16 rows of 33 words, 2112 bytes), a
// barrier, a loop over k with one fma per accumulator element this thread
// holds (16 x 16 over 64 threads: 4 each), and a barrier after the loop.
// CHECK: llvm.mlir.global internal @__tile_relayout_mm() {{.*}} : !llvm.array<4288 x i8>
// CHECK-LABEL: llvm.func @mm(
// CHECK:         llvm.getelementptr %{{.*}}[2112] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
// CHECK:         nvvm.barrier0
// CHECK:         nvvm.barrier0
// CHECK:         scf.for
// CHECK-COUNT-4:   math.fma
// CHECK:           scf.yield
// CHECK:         nvvm.barrier0
func.func @mm(%t: f32) attributes {tile.kernel, tile.encoding = #tile.blocked<vec = 2, warps = 2>} {
  %a = tile.splat %t : f32 -> tensor<16x32xf32>
  %b = tile.splat %t : f32 -> tensor<32x16xf32>
  %c = tile.splat %t : f32 -> tensor<16x16xf32>
  %r = tile.mma %a, %b, %c : tensor<16x32xf32>, tensor<32x16xf32>, tensor<16x16xf32>
  return
}
