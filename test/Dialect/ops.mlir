// RUN: tile-opt %s | tile-opt | FileCheck %s
// Round trip of every tile op through the printer and the parser (a masked
// gather, scatter or atomic did not parse back before their formats named
// the mask's type with `mask`).

// CHECK-LABEL: func.func @all_ops(
func.func @all_ops(%p: !llvm.ptr<1>, %n: i64, %m: i64, %s0: i64, %s1: i64, %a: f32) attributes {tile.kernel} {
  // CHECK: %[[V:.*]] = tile.make_view %{{.*}}[%{{.*}}, %{{.*}}] strides[%{{.*}}, %{{.*}}] : !llvm.ptr<1> -> !tile.view<f32, 2>
  %v = tile.make_view %p[%n, %m] strides[%s0, %s1] : !llvm.ptr<1> -> !tile.view<f32, 2>
  // A part of a view (narrow): its offsets in the parameter's view.
  // CHECK: tile.make_view %{{.*}}[%{{.*}}, %{{.*}}] strides[%{{.*}}, %{{.*}}] offsets[%{{.*}}, %{{.*}}] {tile.param = 0 : i32} : !llvm.ptr<1> -> !tile.view<f32, 2>
  %part = tile.make_view %p[%n, %m] strides[%s0, %s1] offsets[%n, %s1] {tile.param = 0 : i32} : !llvm.ptr<1> -> !tile.view<f32, 2>
  // CHECK: tile.load_scalar %{{.*}}[%{{.*}}, %{{.*}}] : !tile.view<f32, 2>, i64, i64 -> f32
  %elem = tile.load_scalar %part[%n, %m] : !tile.view<f32, 2>, i64, i64 -> f32
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

// The rest of the ops: data movement, mma, irregular accesses, scans, debug.
// CHECK-LABEL: func.func @more_ops(
func.func @more_ops(%p: !llvm.ptr<1>, %n: i64, %s: i64, %q: !llvm.ptr<1>, %m: i64, %t: i64,
                    %sh: !llvm.ptr<3>, %c: i1) attributes {tile.kernel} {
  %v1 = tile.make_view %p[%n] strides[%s] : !llvm.ptr<1> -> !tile.view<f32, 1>
  %v2 = tile.make_view %q[%n, %m] strides[%s, %t] : !llvm.ptr<1> -> !tile.view<bf16, 2>
  %vi = tile.make_view %p[%n] strides[%s] : !llvm.ptr<1> -> !tile.view<i32, 1>
  %b = tile.block_id 0 : i32
  // CHECK: tile.broadcast_load %{{.*}}[%{{.*}}] {src_shape = array<i64: 128>} : !tile.view<f32, 1>, i32 -> tensor<64x128xf32>
  %bl = tile.broadcast_load %v1[%b] {src_shape = array<i64: 128>} : !tile.view<f32, 1>, i32 -> tensor<64x128xf32>
  // CHECK: tile.reshape %{{.*}} : tensor<64x128xf32> -> tensor<8192xf32>
  %rs = tile.reshape %bl : tensor<64x128xf32> -> tensor<8192xf32>
  // CHECK: tile.permute %{{.*}} {permutation = array<i64: 1, 0>} : tensor<64x128xf32> -> tensor<128x64xf32>
  %pm = tile.permute %bl {permutation = array<i64: 1, 0>} : tensor<64x128xf32> -> tensor<128x64xf32>
  // CHECK: tile.slice %{{.*}} {offsets = array<i64: 0, 32>} : tensor<64x128xf32> -> tensor<64x32xf32>
  %sl = tile.slice %bl {offsets = array<i64: 0, 32>} : tensor<64x128xf32> -> tensor<64x32xf32>
  %vf = tile.make_view %p[%n, %m] strides[%s, %t] : !llvm.ptr<1> -> !tile.view<f32, 2>
  %row = tile.load %vf[%b, %b] : !tile.view<f32, 2>, i32, i32 -> tensor<1x128xf32>
  // CHECK: tile.broadcast %{{.*}} : tensor<1x128xf32> -> tensor<64x128xf32>
  %bc = tile.broadcast %row : tensor<1x128xf32> -> tensor<64x128xf32>
  %a = tile.load %v2[%b, %b] : !tile.view<bf16, 2>, i32, i32 -> tensor<128x64xbf16>
  %bb = tile.load %v2[%b, %b] : !tile.view<bf16, 2>, i32, i32 -> tensor<64x256xbf16>
  %acc = arith.constant dense<0.0> : tensor<128x256xf32>
  // CHECK: tile.mma %{{.*}}, %{{.*}}, %{{.*}} : tensor<128x64xbf16>, tensor<64x256xbf16>, tensor<128x256xf32>
  %mm = tile.mma %a, %bb, %acc : tensor<128x64xbf16>, tensor<64x256xbf16>, tensor<128x256xf32>
  // A predicated mma (tile-stage-shared's form of `if c { acc = mma(..) }`).
  %on = arith.cmpi slt, %b, %b : i32
  // CHECK: tile.mma %{{.*}}, %{{.*}}, %{{.*}} if %{{.*}} : tensor<128x64xbf16>, tensor<64x256xbf16>, tensor<128x256xf32>
  %mp = tile.mma %a, %bb, %mm if %on : tensor<128x64xbf16>, tensor<64x256xbf16>, tensor<128x256xf32>
  // CHECK: tile.shared_tile %{{.*}} : !llvm.ptr<3> -> tensor<64x256xbf16, #tile.shared<swizzle = 128, order = [1, 0]>>
  %st = tile.shared_tile %sh : !llvm.ptr<3> -> tensor<64x256xbf16, #tile.shared<swizzle = 128, order = [1, 0]>>
  // CHECK: tile.shared_copy %{{.*}} {offset = 2048 : i64} : tensor<128x64xbf16> -> tensor<64x128xbf16, #tile.shared<swizzle = 128, order = [0, 1]>>
  %scopy = tile.shared_copy %a {offset = 2048 : i64} : tensor<128x64xbf16> -> tensor<64x128xbf16, #tile.shared<swizzle = 128, order = [0, 1]>>
  // CHECK: tile.shared_copy %{{.*}} {offset = 0 : i64} : tensor<128x64xbf16> -> tensor<128x64xbf16, #tile.shared<swizzle = 128, order = [1, 0]>>
  %scopy2 = tile.shared_copy %a {offset = 0 : i64} : tensor<128x64xbf16> -> tensor<128x64xbf16, #tile.shared<swizzle = 128, order = [1, 0]>>
  // CHECK: tile.wgmma_wait %{{.*}}, %{{.*}} {pending = 1 : i64} : tensor<128x256xf32>, tensor<128x256xf32> -> tensor<128x256xf32>, tensor<128x256xf32>
  %ww:2 = tile.wgmma_wait %mm, %acc {pending = 1 : i64} : tensor<128x256xf32>, tensor<128x256xf32> -> tensor<128x256xf32>, tensor<128x256xf32>
  %idx = arith.constant dense<3> : tensor<1024xi64>
  %msk = arith.constant dense<true> : tensor<1024xi1>
  // CHECK: tile.gather %{{.*}}[%{{.*}}] mask %{{.*}} : !tile.view<f32, 1>, tensor<1024xi64> mask tensor<1024xi1> -> tensor<1024xf32>
  %g = tile.gather %v1[%idx] mask %msk : !tile.view<f32, 1>, tensor<1024xi64> mask tensor<1024xi1> -> tensor<1024xf32>
  // CHECK: tile.scatter %{{.*}}, %{{.*}}[%{{.*}}] mask %{{.*}} : tensor<1024xf32>, !tile.view<f32, 1>, tensor<1024xi64> mask tensor<1024xi1>
  tile.scatter %g, %v1[%idx] mask %msk : tensor<1024xf32>, !tile.view<f32, 1>, tensor<1024xi64> mask tensor<1024xi1>
  %ones = arith.constant dense<1> : tensor<1024xi32>
  // CHECK: tile.atomic "add" %{{.*}}, %{{.*}}[%{{.*}}] mask %{{.*}} : tensor<1024xi32>, !tile.view<i32, 1>, tensor<1024xi64> mask tensor<1024xi1> -> tensor<1024xi32>
  %old = tile.atomic "add" %ones, %vi[%idx] mask %msk : tensor<1024xi32>, !tile.view<i32, 1>, tensor<1024xi64> mask tensor<1024xi1> -> tensor<1024xi32>
  // CHECK: tile.atomic "cas" %{{.*}}, %{{.*}}[%{{.*}}] cmp %{{.*}} mask %{{.*}} : tensor<1024xi32>, !tile.view<i32, 1>, tensor<1024xi64> cmp tensor<1024xi32> mask tensor<1024xi1> -> tensor<1024xi32>
  %cas = tile.atomic "cas" %ones, %vi[%idx] cmp %old mask %msk : tensor<1024xi32>, !tile.view<i32, 1>, tensor<1024xi64> cmp tensor<1024xi32> mask tensor<1024xi1> -> tensor<1024xi32>
  %pos = arith.constant dense<7> : tensor<512xi32>
  // CHECK: tile.take %{{.*}}[%{{.*}}] : tensor<1024xi32>, tensor<512xi32> -> tensor<512xi32>
  %tk = tile.take %old[%pos] : tensor<1024xi32>, tensor<512xi32> -> tensor<512xi32>
  // CHECK: tile.scan %{{.*}} : tensor<1024xf32> {
  // CHECK: tile.yield %{{.*}} : f32
  %sc = tile.scan %g : tensor<1024xf32> {
  ^bb0(%x: f32, %y: f32):
    %mx = arith.maximumf %x, %y : f32
    tile.yield %mx : f32
  }
  // CHECK: tile.print %{{.*}}, %{{.*}} {text = "sum", unsigned_values = array<i1: false, false>} : tensor<1024xi32>, tensor<1024xf32>
  tile.print %old, %sc {text = "sum", unsigned_values = array<i1: false, false>} : tensor<1024xi32>, tensor<1024xf32>
  // CHECK: tile.assert %{{.*}} {file = "k.tile", line = 3 : i32, message = "x must be positive"} : i1
  tile.assert %c {file = "k.tile", line = 3 : i32, message = "x must be positive"} : i1
  return
}
