// RUN: tile-opt %s -split-input-file -tile-elide-barriers | FileCheck %s
// tile-elide-barriers removes a barrier when no shared-memory access before
// it (back to the previous barrier, on any path) conflicts with one after it
// (up to the next barrier): same buffer, at least one a write.

llvm.mlir.global internal @a() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<64 x i32>
llvm.mlir.global internal @b() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<64 x i32>

// A write of @a, a barrier, its reads, and a trailing barrier before the
// next buffer (@b) is written: only the trailing one goes.
// CHECK-LABEL: llvm.func @straight(
// CHECK:         llvm.store
// CHECK-NEXT:    nvvm.barrier0
// CHECK-NEXT:    llvm.load
// CHECK-NEXT:    llvm.store
// CHECK-NEXT:    nvvm.barrier0
// CHECK-NEXT:    llvm.load
// CHECK-NEXT:    llvm.return
llvm.func @straight(%v: i32) attributes {nvvm.kernel} {
  %pa = llvm.mlir.addressof @a : !llvm.ptr<3>
  %pb = llvm.mlir.addressof @b : !llvm.ptr<3>
  llvm.store %v, %pa : i32, !llvm.ptr<3>
  nvvm.barrier0
  %x = llvm.load %pa : !llvm.ptr<3> -> i32
  nvvm.barrier0
  llvm.store %x, %pb : i32, !llvm.ptr<3>
  nvvm.barrier0
  %y = llvm.load %pb : !llvm.ptr<3> -> i32
  llvm.return
}

// -----

llvm.mlir.global internal @a() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<64 x i32>

// In a loop, the next iteration writes the buffer that this one read: the
// trailing barrier stays (write after read around the back edge).
// CHECK-LABEL: llvm.func @loop(
// CHECK:       ^bb1
// CHECK:         llvm.store
// CHECK-NEXT:    nvvm.barrier0
// CHECK-NEXT:    llvm.load
// CHECK-NEXT:    nvvm.barrier0
llvm.func @loop(%v: i32, %n: i32) attributes {nvvm.kernel} {
  %c0 = llvm.mlir.constant(0 : i32) : i32
  %c1 = llvm.mlir.constant(1 : i32) : i32
  %pa = llvm.mlir.addressof @a : !llvm.ptr<3>
  llvm.br ^bb1(%c0 : i32)
^bb1(%i: i32):
  %g = llvm.getelementptr %pa[%i] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i32
  llvm.store %v, %g : i32, !llvm.ptr<3>
  nvvm.barrier0
  %x = llvm.load %pa : !llvm.ptr<3> -> i32
  nvvm.barrier0
  %j = llvm.add %i, %c1 : i32
  %more = llvm.icmp "slt" %j, %n : i32
  llvm.cond_br %more, ^bb1(%j : i32), ^bb2
^bb2:
  llvm.return
}

// -----

llvm.mlir.global internal @a() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<64 x i32>

// An address that does not lead to a shared global may be any buffer: both
// barriers around its write stay. Reads after reads need none.
// CHECK-LABEL: llvm.func @unknown(
// CHECK:         llvm.load
// CHECK-NEXT:    nvvm.barrier0
// CHECK-NEXT:    llvm.store
// CHECK-NEXT:    nvvm.barrier0
// CHECK-NEXT:    llvm.load
// CHECK-NEXT:    llvm.load
// CHECK-NEXT:    llvm.return
llvm.func @unknown(%p: !llvm.ptr<3>, %v: i32) attributes {nvvm.kernel} {
  %pa = llvm.mlir.addressof @a : !llvm.ptr<3>
  %x = llvm.load %pa : !llvm.ptr<3> -> i32
  nvvm.barrier0
  llvm.store %v, %p : i32, !llvm.ptr<3>
  nvvm.barrier0
  %y = llvm.load %pa : !llvm.ptr<3> -> i32
  nvvm.barrier0
  %z = llvm.load %pa : !llvm.ptr<3> -> i32
  llvm.return
}

// -----

llvm.mlir.global internal @a() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<64 x i32>

// Kernels of the mma pipeline (a #tile.mma encoding) are left alone.
// CHECK-LABEL: llvm.func @pipelined(
// CHECK:         nvvm.barrier0
llvm.func @pipelined(%v: i32) attributes {nvvm.kernel, tile.encoding = #tile.mma<kind = wgmma, consumers = 2>} {
  %pa = llvm.mlir.addressof @a : !llvm.ptr<3>
  %x = llvm.load %pa : !llvm.ptr<3> -> i32
  nvvm.barrier0
  %y = llvm.load %pa : !llvm.ptr<3> -> i32
  llvm.return
}

// -----

llvm.mlir.global internal @a() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<64 x i32>
llvm.mlir.global internal @b() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<64 x i32>

// Two globals whose ranges overlap in the kernel's plan (tile-plan-shared
// gave them one range) are one buffer: the trailing barrier stays. Where
// the ranges are apart (@apart), it goes.
// CHECK-LABEL: llvm.func @aliased(
// CHECK:         llvm.store
// CHECK-NEXT:    nvvm.barrier0
// CHECK-NEXT:    llvm.load
// CHECK-NEXT:    nvvm.barrier0
// CHECK-NEXT:    llvm.store
// CHECK-LABEL: llvm.func @apart(
// CHECK:         llvm.load
// CHECK-NEXT:    llvm.store
llvm.func @aliased(%v: i32) attributes {nvvm.kernel, tile.shared_buffers = {a = array<i64: 0, 256>, b = array<i64: 128, 256>}} {
  %pa = llvm.mlir.addressof @a : !llvm.ptr<3>
  %pb = llvm.mlir.addressof @b : !llvm.ptr<3>
  llvm.store %v, %pa : i32, !llvm.ptr<3>
  nvvm.barrier0
  %x = llvm.load %pa : !llvm.ptr<3> -> i32
  nvvm.barrier0
  llvm.store %x, %pb : i32, !llvm.ptr<3>
  nvvm.barrier0
  %y = llvm.load %pb : !llvm.ptr<3> -> i32
  llvm.return
}
llvm.func @apart(%v: i32) attributes {nvvm.kernel, tile.shared_buffers = {a = array<i64: 0, 256>, b = array<i64: 256, 256>}} {
  %pa = llvm.mlir.addressof @a : !llvm.ptr<3>
  %pb = llvm.mlir.addressof @b : !llvm.ptr<3>
  llvm.store %v, %pa : i32, !llvm.ptr<3>
  nvvm.barrier0
  %x = llvm.load %pa : !llvm.ptr<3> -> i32
  nvvm.barrier0
  llvm.store %x, %pb : i32, !llvm.ptr<3>
  nvvm.barrier0
  %y = llvm.load %pb : !llvm.ptr<3> -> i32
  llvm.return
}
