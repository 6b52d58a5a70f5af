// RUN: tile-opt %s -split-input-file -tile-layout | FileCheck %s
// RUN: tile-opt %s -split-input-file -tile-layout=num-warps=2 | FileCheck %s --check-prefix=WARPS

// f32 accesses: 16-byte vectors are 4 elements; 1024 elements over 4 warps
// gives each thread two vectors.
// CHECK-LABEL: func.func @f32_1024
// CHECK-SAME: tile.encoding = #tile.blocked<vec = 4, warps = 4>
// CHECK-SAME: tile.num_warps = 4 : i32
// WARPS-LABEL: func.func @f32_1024
// WARPS-SAME: tile.encoding = #tile.blocked<vec = 4, warps = 2>
// WARPS-SAME: tile.num_warps = 2 : i32
func.func @f32_1024(%v: !tile.view<f32, 1>, %i: i32) attributes {tile.kernel} {
  %t = tile.load %v[%i] : !tile.view<f32, 1>, i32 -> tensor<1024xf32>
  tile.store %t, %v[%i] : tensor<1024xf32>, !tile.view<f32, 1>, i32
  return
}

// -----

// Only 2-byte accesses: 8 elements make 16 bytes.
// CHECK-LABEL: func.func @f16_4096
// CHECK-SAME: tile.encoding = #tile.blocked<vec = 8, warps = 8>
// CHECK-SAME: tile.num_warps = 8 : i32
func.func @f16_4096(%v: !tile.view<f16, 1>, %i: i32) attributes {tile.kernel} {
  %t = tile.load %v[%i] : !tile.view<f16, 1>, i32 -> tensor<4096xf16>
  tile.store %t, %v[%i] : tensor<4096xf16>, !tile.view<f16, 1>, i32
  return
}

// -----

// The widest accessed type decides: an f16 load feeding an f32 store.
// CHECK-LABEL: func.func @mixed
// CHECK-SAME: tile.encoding = #tile.blocked<vec = 4, warps = 2>
func.func @mixed(%a: !tile.view<f16, 1>, %b: !tile.view<f32, 1>, %i: i32) attributes {tile.kernel} {
  %t = tile.load %a[%i] : !tile.view<f16, 1>, i32 -> tensor<512xf16>
  %u = arith.extf %t : tensor<512xf16> to tensor<512xf32>
  tile.store %u, %b[%i] : tensor<512xf32>, !tile.view<f32, 1>, i32
  return
}

// -----

// A vector never straddles two rows: an innermost size of 6 allows 2.
// A small tile gets one warp.
// CHECK-LABEL: func.func @odd_rows
// CHECK-SAME: tile.encoding = #tile.blocked<vec = 2, warps = 1>
// CHECK-SAME: tile.num_warps = 1 : i32
// CHECK: tile.load {{.*}} -> tensor<10x6xf32, #tile.blocked<vec = 2, warps = 1>>
func.func @odd_rows(%v: !tile.view<f32, 2>, %i: i32) attributes {tile.kernel} {
  %t = tile.load %v[%i, %i] : !tile.view<f32, 2>, i32, i32 -> tensor<10x6xf32>
  tile.store %t, %v[%i, %i] : tensor<10x6xf32>, !tile.view<f32, 2>, i32, i32
  return
}

// -----

// Functions that are not kernels are left alone.
// CHECK-LABEL: func.func @helper
// CHECK-NOT: tile.encoding
// CHECK-NOT: tile.num_warps
func.func @helper(%x: f32) -> f32 {
  return %x : f32
}

// -----

// Block-wide reductions: four vectors per thread (fewer warps to combine).
// CHECK-LABEL: func.func @reduces
// CHECK-SAME: tile.encoding = #tile.blocked<vec = 4, warps = 2>
// CHECK-SAME: tile.num_warps = 2 : i32
func.func @reduces(%v: !tile.view<f32, 2>, %i: i32) attributes {tile.kernel} {
  %t = tile.load %v[%i, %i] : !tile.view<f32, 2>, i32, i32 -> tensor<1x1024xf32>
  %m = tile.reduce "max" %t : tensor<1x1024xf32> -> f32
  tile.store %t, %v[%i, %i] : tensor<1x1024xf32>, !tile.view<f32, 2>, i32, i32
  return
}


// -----

// The kernel's encoding goes on every tile type: results, loop-carried
// values (block arguments) and dense constants.
// CHECK-LABEL: func.func @encoded
// CHECK: arith.constant dense<0.000000e+00> : tensor<256xf32, #tile.blocked<vec = 4, warps = 1>>
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}) -> (tensor<256xf32, #tile.blocked<vec = 4, warps = 1>>)
// CHECK: tile.load {{.*}} -> tensor<256xf32, #tile.blocked<vec = 4, warps = 1>>
// CHECK: arith.addf {{.*}} : tensor<256xf32, #tile.blocked<vec = 4, warps = 1>>
func.func @encoded(%v: !tile.view<f32, 1>, %n: i64) attributes {tile.kernel} {
  %zero = arith.constant dense<0.0> : tensor<256xf32>
  %c0 = arith.constant 0 : i64
  %c1 = arith.constant 1 : i64
  %s = scf.for %k = %c0 to %n step %c1 iter_args(%x = %zero) -> (tensor<256xf32>) : i64 {
    %t = tile.load %v[%k] : !tile.view<f32, 1>, i64 -> tensor<256xf32>
    %y = arith.addf %x, %t : tensor<256xf32>
    scf.yield %y : tensor<256xf32>
  }
  tile.store %s, %v[%c0] : tensor<256xf32>, !tile.view<f32, 1>, i64
  return
}

// -----

// A kernel with an mma pipeline keeps the #tile.mma encoding
// tile-stage-shared chose; the operands of the pipelined mma are staged in
// shared memory (#tile.shared), the accumulator is in the mma fragments.
// CHECK-LABEL: func.func @pipelined
// CHECK-SAME: tile.encoding = #tile.mma<kind = wgmma, consumers = 2>
// CHECK: arith.constant dense<0.000000e+00> : tensor<128x256xf32, #tile.mma<kind = wgmma, consumers = 2>>
// CHECK: tile.load {{.*}} -> tensor<128x64xbf16, #tile.shared<swizzle = 128, order = [1, 0]>>
// CHECK: tile.load {{.*}} -> tensor<64x256xbf16, #tile.shared<swizzle = 128, order = [1, 0]>>
// CHECK: tile.mma {{.*}} : tensor<128x64xbf16, #tile.shared<swizzle = 128, order = [1, 0]>>, tensor<64x256xbf16, #tile.shared<swizzle = 128, order = [1, 0]>>, tensor<128x256xf32, #tile.mma<kind = wgmma, consumers = 2>>
func.func @pipelined(%a: !tile.view<bf16, 2>, %n: i64) attributes {tile.kernel, tile.encoding = #tile.mma<kind = wgmma, consumers = 2>, tile.num_warps = 12 : i32} {
  %zero = arith.constant dense<0.0> : tensor<128x256xf32>
  %c0 = arith.constant 0 : i64
  %c1 = arith.constant 1 : i64
  %acc = scf.for %k = %c0 to %n step %c1 iter_args(%x = %zero) -> (tensor<128x256xf32>) : i64 {
    %ta = tile.load %a[%c0, %k] : !tile.view<bf16, 2>, i64, i64 -> tensor<128x64xbf16>
    %tb = tile.load %a[%k, %c0] : !tile.view<bf16, 2>, i64, i64 -> tensor<64x256xbf16>
    %y = tile.mma %ta, %tb, %x : tensor<128x64xbf16>, tensor<64x256xbf16>, tensor<128x256xf32>
    scf.yield %y : tensor<128x256xf32>
  } {tile.pipeline = {consumers = 2 : i32, stages = 4 : i32}}
  return
}

// -----

// A kernel that comes with a wider encoding than some of its tiles allow:
// each tile gets the widest width up to the kernel's that divides its
// innermost size, and a reshape between widths runs at the narrower one,
// with tile.convert_layout for the other.
// CHECK-LABEL: func.func @per_tile
// CHECK-SAME: tile.encoding = #tile.blocked<vec = 4, warps = 8>
// CHECK: tile.load {{.*}} -> tensor<1x1024xf32, #tile.blocked<vec = 4, warps = 8>>
// CHECK: tile.splat {{.*}} -> tensor<1xf32, #tile.blocked<vec = 1, warps = 8>>
// CHECK: %[[R:.*]] = tile.load {{.*}} -> tensor<64xf32, #tile.blocked<vec = 4, warps = 8>>
// CHECK: %[[C:.*]] = tile.convert_layout %[[R]] : tensor<64xf32, #tile.blocked<vec = 4, warps = 8>> -> tensor<64xf32, #tile.blocked<vec = 1, warps = 8>>
// CHECK: tile.reshape %[[C]] : tensor<64xf32, #tile.blocked<vec = 1, warps = 8>> -> tensor<64x1xf32, #tile.blocked<vec = 1, warps = 8>>
// CHECK: %[[B:.*]] = tile.reshape %{{.*}} : tensor<64x1xf32, #tile.blocked<vec = 1, warps = 8>> -> tensor<64xf32, #tile.blocked<vec = 1, warps = 8>>
// CHECK: %[[W:.*]] = tile.convert_layout %[[B]] : tensor<64xf32, #tile.blocked<vec = 1, warps = 8>> -> tensor<64xf32, #tile.blocked<vec = 4, warps = 8>>
// CHECK: tile.store %[[W]]
func.func @per_tile(%v: !tile.view<f32, 2>, %w: !tile.view<f32, 1>, %i: i32) attributes {tile.kernel, tile.encoding = #tile.blocked<vec = 4, warps = 8>} {
  %t = tile.load %v[%i, %i] : !tile.view<f32, 2>, i32, i32 -> tensor<1x1024xf32>
  %m = tile.reduce "max" %t : tensor<1x1024xf32> -> f32
  %s = tile.splat %m : f32 -> tensor<1xf32>
  tile.store %s, %w[%i] : tensor<1xf32>, !tile.view<f32, 1>, i32
  %r = tile.load %w[%i] : !tile.view<f32, 1>, i32 -> tensor<64xf32>
  %c = tile.reshape %r : tensor<64xf32> -> tensor<64x1xf32>
  %d = arith.addf %c, %c : tensor<64x1xf32>
  %b = tile.reshape %d : tensor<64x1xf32> -> tensor<64xf32>
  tile.store %b, %w[%i] : tensor<64xf32>, !tile.view<f32, 1>, i32
  return
}

// -----

// A class of tiles that meets the others only where data moves anyway
// (a one-element tile made by a splat and stored) takes a vector width of
// its own instead of narrowing the kernel's: the kernel stays at 4, the
// class gets 1. An [R] load reshaped to [R, 1] and broadcast over the rows
// of [R, 1024] takes the rows' slice (each thread loads the rows it holds;
// the broadcast picks registers), and no tile.convert_layout appears
// between its reshapes.
// CHECK-LABEL: func.func @own_width
// CHECK-SAME: tile.encoding = #tile.blocked<vec = 4, warps = 8>
// CHECK: tile.load {{.*}} -> tensor<4x1024xf32, #tile.blocked<vec = 4, warps = 8>>
// CHECK: tile.splat {{.*}} -> tensor<1xf32, #tile.blocked<vec = 1, warps = 8>>
// CHECK: tile.load {{.*}} -> tensor<4xf32, #tile.slice<dim = 1, parent = #tile.blocked<vec = 4, warps = 8>, size = 1024>>
// CHECK-NOT: tile.convert_layout
// CHECK: tile.reshape {{.*}} -> tensor<4x1xf32, #tile.slice<dim = 1, parent = #tile.blocked<vec = 4, warps = 8>, size = 1024>>
// CHECK: tile.broadcast {{.*}} : tensor<4x1xf32, #tile.slice<dim = 1, parent = #tile.blocked<vec = 4, warps = 8>, size = 1024>> -> tensor<4x1024xf32, #tile.blocked<vec = 4, warps = 8>>
func.func @own_width(%v: !tile.view<f32, 2>, %w: !tile.view<f32, 1>, %i: i32) attributes {tile.kernel} {
  %t = tile.load %v[%i, %i] : !tile.view<f32, 2>, i32, i32 -> tensor<4x1024xf32>
  %m = tile.reduce "max" %t : tensor<4x1024xf32> -> f32
  %s = tile.splat %m : f32 -> tensor<1xf32>
  tile.store %s, %w[%i] : tensor<1xf32>, !tile.view<f32, 1>, i32
  %r = tile.load %w[%i] : !tile.view<f32, 1>, i32 -> tensor<4xf32>
  %c = tile.reshape %r : tensor<4xf32> -> tensor<4x1xf32>
  %b = tile.broadcast %c : tensor<4x1xf32> -> tensor<4x1024xf32>
  %d = arith.addf %t, %b : tensor<4x1024xf32>
  tile.store %d, %v[%i, %i] : tensor<4x1024xf32>, !tile.view<f32, 2>, i32, i32
  return
}
