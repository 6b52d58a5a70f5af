// RUN: tile-opt %s -split-input-file -tile-layout -tile-plan-shared -convert-tile-to-nvvm | FileCheck %s
// Whole-tile reductions: per-thread combine, warp butterfly shuffles, then
// one 32-bit slot per warp in shared memory, a barrier, and every thread
// combines the warps' slots. Each reduction op has its own 128 slots; only one
// inside a loop needs a second barrier before its slots are written again.

// CHECK: llvm.mlir.global internal @__tile_reduce_scratch_rmax() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<128 x i32>
// CHECK-LABEL: llvm.func @rmax(
// 100 elements over 64 threads x 2: slots past the end take the identity.
// CHECK:         arith.cmpi slt, %{{.*}}, %{{.*}} : vector<2xi32>
// CHECK:         arith.select %{{.*}}, %{{.*}}, %{{.*}} : vector<2xi1>, vector<2xf32>
// CHECK-COUNT-5: nvvm.shfl.sync  bfly
// CHECK:         llvm.mlir.addressof @__tile_reduce_scratch_rmax : !llvm.ptr<3>
// CHECK:         scf.if
// CHECK:           llvm.store %{{.*}} : i32, !llvm.ptr<3>
// CHECK:         nvvm.barrier0
// CHECK-COUNT-2: llvm.load %{{.*}} : !llvm.ptr<3> -> i32
// CHECK-NOT:     nvvm.barrier0
// CHECK-NOT:     tile.
// CHECK:         llvm.return
func.func @rmax(%t: f32) attributes {tile.kernel, tile.encoding = #tile.blocked<vec = 2, warps = 2>} {
  %x = tile.splat %t : f32 -> tensor<100xf32>
  %m = tile.reduce "max" %x : tensor<100xf32> -> f32
  return
}

// -----

// One warp: no shared memory. f16 is reduced in f32.
// CHECK-LABEL: llvm.func @rsum16(
// CHECK:         arith.extf %{{.*}} : vector<2xf16> to vector<2xf32>
// CHECK-COUNT-5: nvvm.shfl.sync  bfly
// CHECK-NOT:     nvvm.barrier0
// CHECK:         arith.truncf %{{.*}} : f32 to f16
func.func @rsum16(%t: f16) attributes {tile.kernel, tile.encoding = #tile.blocked<vec = 2, warps = 1>} {
  %x = tile.splat %t : f16 -> tensor<64xf16>
  %m = tile.reduce "sum" %x : tensor<64xf16> -> f16
  return
}

// -----

// argmax carries (value, flat index): two shuffles per step, and per warp a
// value slot (w) and an index slot (32 + w).
// CHECK: llvm.mlir.global internal @__tile_reduce_scratch_amax() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<128 x i32>
// CHECK-LABEL: llvm.func @amax(
// CHECK:         arith.cmpf uno
// CHECK:         arith.cmpf ogt
// CHECK-COUNT-10: nvvm.shfl.sync  bfly
// CHECK:         llvm.store %{{.*}} : i32, !llvm.ptr<3>
// CHECK:         llvm.store %{{.*}} : i32, !llvm.ptr<3>
// CHECK:         nvvm.barrier0
// CHECK-COUNT-2: llvm.load %{{.*}} : !llvm.ptr<3> -> i32
// CHECK-NOT:     nvvm.barrier0
// CHECK:         llvm.return
func.func @amax(%t: f32) attributes {tile.kernel, tile.encoding = #tile.blocked<vec = 2, warps = 2>} {
  %x = tile.splat %t : f32 -> tensor<100xf32>
  %m = tile.reduce "argmax" %x : tensor<100xf32> -> i32
  return
}

// -----

// Two reductions get slots 0 and 128; the one in the loop keeps the barrier
// after its reads, the one outside does not.
// CHECK: llvm.mlir.global internal @__tile_reduce_scratch_two() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<256 x i32>
// CHECK-LABEL: llvm.func @two(
// CHECK:         llvm.getelementptr %{{.*}}[0] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i32
// CHECK:         nvvm.barrier0
// CHECK-COUNT-2: llvm.load %{{.*}} : !llvm.ptr<3> -> i32
// CHECK-NOT:     nvvm.barrier0
// CHECK:         scf.for
// CHECK:         llvm.getelementptr %{{.*}}[128] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i32
// CHECK:         nvvm.barrier0
// CHECK-COUNT-2: llvm.load %{{.*}} : !llvm.ptr<3> -> i32
// CHECK-NEXT:    arith.bitcast
// CHECK-NEXT:    arith.maximumf
// CHECK-NEXT:    nvvm.barrier0
func.func @two(%t: f32, %n: i32) attributes {tile.kernel, tile.encoding = #tile.blocked<vec = 2, warps = 2>} {
  %x = tile.splat %t : f32 -> tensor<128xf32>
  %a = tile.reduce "sum" %x : tensor<128xf32> -> f32
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  scf.for %i = %c0 to %n step %c1 : i32 {
    %b = tile.reduce "max" %x : tensor<128xf32> -> f32
  }
  return
}

// -----

// More than 8 reductions share 8 sets of slots (1024 words) and each keeps
// the barrier after its reads.
// CHECK: llvm.mlir.global internal @__tile_reduce_scratch_many() {{.*}} : !llvm.array<1024 x i32>
// CHECK-LABEL: llvm.func @many(
// CHECK-COUNT-18: nvvm.barrier0
// CHECK-NOT:     nvvm.barrier0
func.func @many(%t: f32) attributes {tile.kernel, tile.encoding = #tile.blocked<vec = 2, warps = 2>} {
  %x = tile.splat %t : f32 -> tensor<128xf32>
  %r0 = tile.reduce "sum" %x : tensor<128xf32> -> f32
  %r1 = tile.reduce "sum" %x : tensor<128xf32> -> f32
  %r2 = tile.reduce "sum" %x : tensor<128xf32> -> f32
  %r3 = tile.reduce "sum" %x : tensor<128xf32> -> f32
  %r4 = tile.reduce "sum" %x : tensor<128xf32> -> f32
  %r5 = tile.reduce "sum" %x : tensor<128xf32> -> f32
  %r6 = tile.reduce "sum" %x : tensor<128xf32> -> f32
  %r7 = tile.reduce "sum" %x : tensor<128xf32> -> f32
  %r8 = tile.reduce "sum" %x : tensor<128xf32> -> f32
  return
}
