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

