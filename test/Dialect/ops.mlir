// RUN: tile-opt %s | tile-opt | FileCheck %s
// Round trip of every tile op through the printer and the parser.

// CHECK-LABEL: func.func @all_ops(
func.func @all_ops(%p: !llvm.ptr<1>, %n: i64, %m: i64, %s0: i64, %s1: i64, %a: f32) attributes {tile.kernel} {
  // CHECK: %[[V:.*]] = tile.make_view %{{.*}}[%{{.*}}, %{{.*}}] strides[%{{.*}}, %{{.*}}] : !llvm.ptr<1> -> !tile.view<f32, 2>
  %v = tile.make_view %p[%n, %m] strides[%s0, %s1] : !llvm.ptr<1> -> !tile.view<f32, 2>
  // CHECK: tile.view_dim %[[V]][1] : !tile.view<f32, 2>
  %d = tile.view_dim %v[1] : !tile.view<f32, 2>
  // CHECK: tile.view_stride %[[V]][0] : !tile.view<f32, 2>
  %st = tile.view_stride %v[0] : !tile.view<f32, 2>
  // CHECK: %[[B:.*]] = tile.block_id 1 : i32
  %b = tile.block_id 1 : i32
  // CHECK: tile.num_blocks 2 : i32
  %nb = tile.num_blocks 2 : i32
  // CHECK: %[[T:.*]] = tile.load %[[V]][%[[B]], %[[B]]] : !tile.view<f32, 2>, i32, i32 -> tensor<16x64xf32>
  %t = tile.load %v[%b, %b] : !tile.view<f32, 2>, i32, i32 -> tensor<16x64xf32>
  // CHECK: tile.load %[[V]][%[[B]], %[[B]]] {padding = -1.000000e+00 : f32}
  %t2 = tile.load %v[%b, %b] {padding = -1.0 : f32} : !tile.view<f32, 2>, i32, i32 -> tensor<16x64xf32>
  // CHECK: %[[S:.*]] = tile.splat %{{.*}} : f32 -> tensor<16x64xf32>
  %sp = tile.splat %a : f32 -> tensor<16x64xf32>
  %sum = arith.addf %t, %sp : tensor<16x64xf32>
  // CHECK: tile.reduce "max" %{{.*}} : tensor<16x64xf32> -> f32
  %mx = tile.reduce "max" %sum : tensor<16x64xf32> -> f32
  // CHECK: tile.range : tensor<64xi32>
  %r = tile.range : tensor<64xi32>
  // CHECK: tile.store %{{.*}}, %[[V]][%[[B]], %[[B]]] : tensor<16x64xf32>, !tile.view<f32, 2>, i32, i32
  tile.store %sum, %v[%b, %b] : tensor<16x64xf32>, !tile.view<f32, 2>, i32, i32
  return
}

// CHECK-LABEL: func.func @convert_layout(
// CHECK: tile.convert_layout %{{.*}} : tensor<64xf32, #tile.blocked<vec = 4, warps = 2>> -> tensor<64xf32, #tile.blocked<vec = 1, warps = 2>>
func.func @convert_layout(%a: tensor<64xf32, #tile.blocked<vec = 4, warps = 2>>) -> tensor<64xf32, #tile.blocked<vec = 1, warps = 2>> {
  %b = tile.convert_layout %a : tensor<64xf32, #tile.blocked<vec = 4, warps = 2>> -> tensor<64xf32, #tile.blocked<vec = 1, warps = 2>>
  return %b : tensor<64xf32, #tile.blocked<vec = 1, warps = 2>>
}
