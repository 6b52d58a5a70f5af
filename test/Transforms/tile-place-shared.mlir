// RUN: tile-opt %s -tile-place-shared | FileCheck %s
// tile-place-shared: in a kernel whose plan is one dynamic array
// (tile.shared_bytes), each buffer's address becomes the array's plus the
// buffer's offset, and the buffers' globals go; a kernel of static arrays
// (no tile.shared_bytes) keeps them.

// CHECK-DAG: llvm.mlir.global external @__tile_smem_k() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<0 x i8>
// CHECK-DAG: llvm.mlir.global internal @s_scan()
// CHECK-NOT: @k_scan()
// CHECK-NOT: @k_relayout()
llvm.mlir.global internal @k_scan() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<512 x i8>
llvm.mlir.global internal @k_relayout() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<66048 x i8>
llvm.mlir.global internal @s_scan() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<512 x i8>

// CHECK-LABEL: llvm.func @k(
// CHECK:         %[[A:.*]] = llvm.mlir.addressof @__tile_smem_k : !llvm.ptr<3>
// CHECK:         llvm.store %{{.*}}, %[[A]]
// CHECK:         %[[B:.*]] = llvm.mlir.addressof @__tile_smem_k : !llvm.ptr<3>
// CHECK:         %[[R:.*]] = llvm.getelementptr %[[B]][512] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
// CHECK:         llvm.store %{{.*}}, %[[R]]
llvm.func @k(%v: i32) attributes {nvvm.kernel, tile.shared_buffers = {k_relayout = array<i64: 512, 66048>, k_scan = array<i64: 0, 512>}, tile.shared_bytes = 66560 : i32} {
  %ps = llvm.mlir.addressof @k_scan : !llvm.ptr<3>
  llvm.store %v, %ps : i32, !llvm.ptr<3>
  %pr = llvm.mlir.addressof @k_relayout : !llvm.ptr<3>
  llvm.store %v, %pr : i32, !llvm.ptr<3>
  llvm.return
}

// CHECK-LABEL: llvm.func @s(
// CHECK:         llvm.mlir.addressof @s_scan
llvm.func @s(%v: i32) attributes {nvvm.kernel, tile.shared_buffers = {s_scan = array<i64: 0, 512>}} {
  %ps = llvm.mlir.addressof @s_scan : !llvm.ptr<3>
  llvm.store %v, %ps : i32, !llvm.ptr<3>
  llvm.return
}
