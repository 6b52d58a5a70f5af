// RUN: tile-opt %s -tile-layout -tile-plan-shared -convert-tile-to-nvvm | FileCheck %s
// A broadcast of a computed tile whose elements other warps hold: each
// thread writes its source elements to the kernel's relayout buffer (16 f32
// of [16] and a word of row padding), the block synchronizes, each thread
// reads the source elements of its result slots, and the block synchronizes
// again before the buffer can be reused. Over 2 warps, the rows of warp 1
// need the columns that lanes 0-3 of warp 0 hold.
// CHECK: llvm.mlir.global internal @__tile_relayout_k() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<68 x i8>
// CHECK-LABEL: llvm.func @k(
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 4 : i64} : f32, !llvm.ptr<3>
// CHECK: nvvm.barrier0
// CHECK: llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr<3> -> f32
// CHECK: nvvm.barrier0
// CHECK-NOT: tile.broadcast
func.func @k(%vp: !llvm.ptr<1>, %vn: i64, %vs: i64, %op: !llvm.ptr<1>, %on: i64, %os: i64, %i: i32)
    attributes {tile.kernel, tile.encoding = #tile.blocked<vec = 4, warps = 2>} {
  %v = tile.make_view %vp[%vn] strides[%vs] : !llvm.ptr<1> -> !tile.view<f32, 1>
  %o = tile.make_view %op[%on, %on] strides[%os, %os] : !llvm.ptr<1> -> !tile.view<f32, 2>
  %b = tile.load %v[%i] : !tile.view<f32, 1>, i32 -> tensor<16xf32>
  %c = arith.addf %b, %b : tensor<16xf32>
  %t = tile.broadcast %c : tensor<16xf32> -> tensor<32x16xf32>
  tile.store %t, %o[%i, %i] : tensor<32x16xf32>, !tile.view<f32, 2>, i32, i32
  return
}

// In one warp the same broadcast reads lanes of its own warp
// (tile::warpRelayout): lane l's row r takes columns 4 (l % 4) .. +3, held by
// lane l % 4 in registers 0-3, one shfl.sync.idx per register and no
// relayout buffer.
// CHECK-NOT: __tile_relayout_one_warp
// CHECK-LABEL: llvm.func @one_warp(
// CHECK-NOT: llvm.ptr<3>
// CHECK-COUNT-4: nvvm.shfl.sync idx
// CHECK-NOT: nvvm.shfl.sync
// CHECK-NOT: nvvm.barrier0
// CHECK: llvm.return
func.func @one_warp(%vp: !llvm.ptr<1>, %vn: i64, %vs: i64, %op: !llvm.ptr<1>, %on: i64, %os: i64, %i: i32)
    attributes {tile.kernel, tile.encoding = #tile.blocked<vec = 4, warps = 1>} {
  %v = tile.make_view %vp[%vn] strides[%vs] : !llvm.ptr<1> -> !tile.view<f32, 1>
  %o = tile.make_view %op[%on, %on] strides[%os, %os] : !llvm.ptr<1> -> !tile.view<f32, 2>
  %b = tile.load %v[%i] : !tile.view<f32, 1>, i32 -> tensor<16xf32>
  %c = arith.addf %b, %b : tensor<16xf32>
  %t = tile.broadcast %c : tensor<16xf32> -> tensor<8x16xf32>
  tile.store %t, %o[%i, %i] : tensor<8x16xf32>, !tile.view<f32, 2>, i32, i32
  return
}
