// RUN: tile-opt %s -tile-plan-shared -convert-tile-to-nvvm | FileCheck %s
// tile.convert_layout between blocked encodings of different widths goes
// through the relayout buffer: each thread stores its 4-wide groups, the
// block synchronizes, each thread loads its elements one by one (64 f32 and a
// word of row padding), and the block synchronizes before the buffer's reuse.
// CHECK: llvm.mlir.global internal @__tile_relayout_k() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<260 x i8>
// CHECK-LABEL: llvm.func @k(
// CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 4 : i64} : f32, !llvm.ptr<3>
// CHECK: nvvm.barrier0
// CHECK: llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr<3> -> f32
// CHECK: nvvm.barrier0
// CHECK-NOT: tile.convert_layout
func.func @k(%vp: !llvm.ptr<1>, %vn: i64, %vs: i64, %i: i32)
    attributes {tile.kernel, tile.encoding = #tile.blocked<vec = 4, warps = 1>} {
  %v = tile.make_view %vp[%vn] strides[%vs] : !llvm.ptr<1> -> !tile.view<f32, 1>
  %a = tile.load %v[%i] : !tile.view<f32, 1>, i32 -> tensor<64xf32, #tile.blocked<vec = 4, warps = 1>>
  %b = tile.convert_layout %a : tensor<64xf32, #tile.blocked<vec = 4, warps = 1>> -> tensor<64xf32, #tile.blocked<vec = 1, warps = 1>>
  tile.store %b, %v[%i] : tensor<64xf32, #tile.blocked<vec = 1, warps = 1>>, !tile.view<f32, 1>, i32
  return
}
