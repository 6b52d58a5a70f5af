// RUN: tile-opt %s -split-input-file -tile-fuse | FileCheck %s

// A broadcast of a loaded tile becomes one broadcast_load: the [128] tile is
// never materialized, each thread loads the elements it holds in [64, 128].
// CHECK-LABEL: func.func @bias
// CHECK-NOT:     tile.load
// CHECK:         %[[B:.*]] = tile.broadcast_load %{{.*}}[%{{.*}}] {src_shape = array<i64: 128>} : !tile.view<f32, 1>, i32 -> tensor<64x128xf32>
// CHECK-NOT:     tile.broadcast
// CHECK:         arith.addf %[[B]], %{{.*}} : tensor<64x128xf32>
func.func @bias(%v: !tile.view<f32, 1>, %o: !tile.view<f32, 2>, %i: i32) attributes {tile.kernel} {
  %b = tile.load %v[%i] : !tile.view<f32, 1>, i32 -> tensor<128xf32>
  %t = tile.broadcast %b : tensor<128xf32> -> tensor<64x128xf32>
  %z = arith.constant dense<1.0> : tensor<64x128xf32>
  %s = arith.addf %z, %t : tensor<64x128xf32>
  tile.store %s, %o[%i, %i] : tensor<64x128xf32>, !tile.view<f32, 2>, i32, i32
  return
}

// -----

// A load with other users stays; its broadcast still reads from memory.
// CHECK-LABEL: func.func @shared_load
// CHECK:         tile.load
// CHECK:         tile.broadcast_load
func.func @shared_load(%v: !tile.view<f32, 2>, %o: !tile.view<f32, 2>, %i: i32) attributes {tile.kernel} {
  %b = tile.load %v[%i, %i] : !tile.view<f32, 2>, i32, i32 -> tensor<1x128xf32>
  %t = tile.broadcast %b : tensor<1x128xf32> -> tensor<64x128xf32>
  tile.store %t, %o[%i, %i] : tensor<64x128xf32>, !tile.view<f32, 2>, i32, i32
  tile.store %b, %o[%i, %i] : tensor<1x128xf32>, !tile.view<f32, 2>, i32, i32
  return
}

// -----

// A broadcast of a computed tile is not a fusion candidate.
// CHECK-LABEL: func.func @computed
// CHECK:         tile.broadcast %{{.*}} : tensor<128xf32> -> tensor<4x128xf32>
func.func @computed(%v: !tile.view<f32, 1>, %o: !tile.view<f32, 2>, %i: i32) attributes {tile.kernel} {
  %b = tile.load %v[%i] : !tile.view<f32, 1>, i32 -> tensor<128xf32>
  %c = arith.addf %b, %b : tensor<128xf32>
  %t = tile.broadcast %c : tensor<128xf32> -> tensor<4x128xf32>
  tile.store %t, %o[%i, %i] : tensor<4x128xf32>, !tile.view<f32, 2>, i32, i32
  return
}
