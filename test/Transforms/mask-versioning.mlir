// RUN: tile-opt %s -split-input-file -tile-fuse | FileCheck %s

// A causal mask in an mma loop (attention's scores): the select runs only
// where some element is masked. Every element is kept where the last
// column j * 64 + 63 is below the length and at most the first row
// m0 * 64 + d; the mask's index arithmetic, compares and fill value move
// into the branch that masks.
// CHECK-LABEL: func.func @causal
// CHECK:         scf.for %[[J:[a-z0-9]+]] = {{.*}} iter_args
// CHECK:           %[[S:.*]] = tile.mma
// CHECK:           %[[JB:.*]] = arith.muli %[[J]], %{{.*}} : i64
// CHECK-NOT:       tile.range
// CHECK:           %[[LAST:.*]] = arith.addi %[[JB]], %{{.*}} : i64
// CHECK:           %[[INB:.*]] = arith.cmpi slt, %[[LAST]], %{{.*}} : i64
// CHECK:           %[[ROW0:.*]] = arith.extsi %{{.*}} : i32 to i64
// CHECK:           %[[LO:.*]] = arith.addi %[[ROW0]], %[[D:.*]] : i64
// CHECK:           %[[DIAG:.*]] = arith.cmpi sle, %[[LAST]], %[[LO]] : i64
// CHECK:           %[[ALL:.*]] = arith.andi %[[INB]], %[[DIAG]] : i1
// CHECK:           %[[V:.*]] = scf.if %[[ALL]] -> (tensor<64x64xf32>) {
// CHECK-NEXT:        scf.yield %[[S]] : tensor<64x64xf32>
// CHECK-NEXT:      } else {
// CHECK:             tile.range
// CHECK:             arith.cmpi slt, %{{.*}} : tensor<64x64xi64>
// CHECK:             arith.cmpi sle, %{{.*}} : tensor<64x64xi64>
// CHECK:             %[[M:.*]] = arith.select %{{.*}}, %[[S]], %{{.*}} : tensor<64x64xi1>, tensor<64x64xf32>
// CHECK-NEXT:        scf.yield %[[M]] : tensor<64x64xf32>
// CHECK-NEXT:      }
// CHECK:           arith.addf %{{.*}}, %[[V]] : tensor<64x64xf32>
func.func @causal(%q: !tile.view<bf16, 2>, %o: !tile.view<f32, 2>, %m0: i32, %sk: i64, %d: i64, %hi: i64) attributes {tile.kernel} {
  %c0 = arith.constant 0 : i64
  %c1 = arith.constant 1 : i64
  %c64 = arith.constant 64 : i64
  %c64i = arith.constant 64 : i32
  %a = tile.load %q[%c0, %c0] : !tile.view<bf16, 2>, i64, i64 -> tensor<64x16xbf16>
  %z = arith.constant dense<0.0> : tensor<64x64xf32>
  %ninf = arith.constant dense<0xFF800000> : tensor<64x64xf32>
  %m = arith.muli %m0, %c64i : i32
  %ms = tile.splat %m : i32 -> tensor<64xi32>
  %r = tile.range : tensor<64xi32>
  %rr = arith.addi %ms, %r : tensor<64xi32>
  %re = arith.extsi %rr : tensor<64xi32> to tensor<64xi64>
  %ds = tile.splat %d : i64 -> tensor<64xi64>
  %rows1 = arith.addi %re, %ds : tensor<64xi64>
  %rows = tile.reshape %rows1 : tensor<64xi64> -> tensor<64x1xi64>
  %res = scf.for %j = %c0 to %hi step %c1 iter_args(%acc = %z) -> (tensor<64x64xf32>) : i64 {
    %bt = tile.load %q[%j, %c0] : !tile.view<bf16, 2>, i64, i64 -> tensor<16x64xbf16>
    %s = tile.mma %a, %bt, %z : tensor<64x16xbf16>, tensor<16x64xbf16>, tensor<64x64xf32>
    %jb = arith.muli %j, %c64 : i64
    %js = tile.splat %jb : i64 -> tensor<64xi64>
    %cr = tile.range : tensor<64xi32>
    %ce = arith.extsi %cr : tensor<64xi32> to tensor<64xi64>
    %cols1 = arith.addi %js, %ce : tensor<64xi64>
    %cols = tile.reshape %cols1 : tensor<64xi64> -> tensor<1x64xi64>
    %sks = tile.splat %sk : i64 -> tensor<1x64xi64>
    %inb = arith.cmpi slt, %cols, %sks : tensor<1x64xi64>
    %inbb = tile.broadcast %inb : tensor<1x64xi1> -> tensor<64x64xi1>
    %cb = tile.broadcast %cols : tensor<1x64xi64> -> tensor<64x64xi64>
    %rb = tile.broadcast %rows : tensor<64x1xi64> -> tensor<64x64xi64>
    %causal = arith.cmpi sle, %cb, %rb : tensor<64x64xi64>
    %mask = arith.andi %inbb, %causal : tensor<64x64xi1>
    %sm = arith.select %mask, %s, %ninf : tensor<64x64xi1>, tensor<64x64xf32>
    %n = arith.addf %acc, %sm : tensor<64x64xf32>
    scf.yield %n : tensor<64x64xf32>
  }
  tile.store %res, %o[%c0, %c0] : tensor<64x64xf32>, !tile.view<f32, 2>, i64, i64
  return
}

// -----

// The other direction and a negative stride: keys at or after the query
// (sge, the backward pass's mask) counted down from the end: x >= y at
// every element where min(x) >= max(y); -2 * range(32) runs from -62 to 0.
// A compare bounds cannot decide (on floats) is left to the mask under
// `or`: every element of a || b is true where every element of a is.
// CHECK-LABEL: func.func @reversed
// CHECK:         scf.for %[[J:[a-z0-9]+]] =
// CHECK:           %[[J32:.*]] = arith.trunci %[[J]] : i64 to i32
// CHECK:           %[[MIN:.*]] = arith.addi %[[J32]], %c-62_i32 : i32
// CHECK:           %[[ALL:.*]] = arith.cmpi sge, %[[MIN]], %{{.*}} : i32
// CHECK:           scf.if %[[ALL]] -> (tensor<32x32xf32>) {
// CHECK:           } else {
// CHECK:             arith.ori
// CHECK:             arith.select
func.func @reversed(%q: !tile.view<bf16, 2>, %o: !tile.view<f32, 2>, %y: i32, %hi: i64) attributes {tile.kernel} {
  %c0 = arith.constant 0 : i64
  %c1 = arith.constant 1 : i64
  %a = tile.load %q[%c0, %c0] : !tile.view<bf16, 2>, i64, i64 -> tensor<32x16xbf16>
  %z = arith.constant dense<0.0> : tensor<32x32xf32>
  %m2 = arith.constant dense<-2> : tensor<32xi32>
  %res = scf.for %j = %c0 to %hi step %c1 iter_args(%acc = %z) -> (tensor<32x32xf32>) : i64 {
    %bt = tile.load %q[%j, %c0] : !tile.view<bf16, 2>, i64, i64 -> tensor<16x32xbf16>
    %s = tile.mma %a, %bt, %z : tensor<32x16xbf16>, tensor<16x32xbf16>, tensor<32x32xf32>
    %j32 = arith.trunci %j : i64 to i32
    %js = tile.splat %j32 : i32 -> tensor<32xi32>
    %r = tile.range : tensor<32xi32>
    %rn = arith.muli %r, %m2 : tensor<32xi32>
    %x = arith.addi %js, %rn : tensor<32xi32>
    %ys = tile.splat %y : i32 -> tensor<32xi32>
    %ge = arith.cmpi sge, %x, %ys : tensor<32xi32>
    %geb = tile.reshape %ge : tensor<32xi1> -> tensor<1x32xi1>
    %ge2 = tile.broadcast %geb : tensor<1x32xi1> -> tensor<32x32xi1>
    %pos = arith.cmpf ogt, %s, %z : tensor<32x32xf32>
    %mask = arith.ori %ge2, %pos : tensor<32x32xi1>
    %sm = arith.select %mask, %s, %z : tensor<32x32xi1>, tensor<32x32xf32>
    %n = arith.addf %acc, %sm : tensor<32x32xf32>
    scf.yield %n : tensor<32x32xf32>
  }
  tile.store %res, %o[%c0, %c0] : tensor<32x32xf32>, !tile.view<f32, 2>, i64, i64
  return
}

// -----

// Left alone: a mask that bounds cannot decide (an equality), one that
// does not change along the loop, and a loop without an mma (a row
// kernel's loop, whose masks stay as they are).
// CHECK-LABEL: func.func @kept
// CHECK-NOT:     scf.if
// CHECK:         return
func.func @kept(%q: !tile.view<bf16, 2>, %o: !tile.view<f32, 2>, %y: i32, %hi: i64) attributes {tile.kernel} {
  %c0 = arith.constant 0 : i64
  %c1 = arith.constant 1 : i64
  %a = tile.load %q[%c0, %c0] : !tile.view<bf16, 2>, i64, i64 -> tensor<32x16xbf16>
  %z = arith.constant dense<0.0> : tensor<32x32xf32>
  %r = tile.range : tensor<32xi32>
  %ys = tile.splat %y : i32 -> tensor<32xi32>
  %inv = arith.cmpi slt, %r, %ys : tensor<32xi32>
  %invb = tile.reshape %inv : tensor<32xi1> -> tensor<1x32xi1>
  %inv2 = tile.broadcast %invb : tensor<1x32xi1> -> tensor<32x32xi1>
  %res = scf.for %j = %c0 to %hi step %c1 iter_args(%acc = %z) -> (tensor<32x32xf32>) : i64 {
    %bt = tile.load %q[%j, %c0] : !tile.view<bf16, 2>, i64, i64 -> tensor<16x32xbf16>
    %s = tile.mma %a, %bt, %z : tensor<32x16xbf16>, tensor<16x32xbf16>, tensor<32x32xf32>
    %j32 = arith.trunci %j : i64 to i32
    %js = tile.splat %j32 : i32 -> tensor<32xi32>
    %x = arith.addi %js, %r : tensor<32xi32>
    %eq = arith.cmpi eq, %x, %ys : tensor<32xi32>
    %eqb = tile.reshape %eq : tensor<32xi1> -> tensor<1x32xi1>
    %eq2 = tile.broadcast %eqb : tensor<1x32xi1> -> tensor<32x32xi1>
    %s1 = arith.select %eq2, %s, %z : tensor<32x32xi1>, tensor<32x32xf32>
    %s2 = arith.select %inv2, %s1, %z : tensor<32x32xi1>, tensor<32x32xf32>
    %n = arith.addf %acc, %s2 : tensor<32x32xf32>
    scf.yield %n : tensor<32x32xf32>
  }
  %res2 = scf.for %j = %c0 to %hi step %c1 iter_args(%acc = %res) -> (tensor<32x32xf32>) : i64 {
    %j32 = arith.trunci %j : i64 to i32
    %js = tile.splat %j32 : i32 -> tensor<32xi32>
    %x = arith.addi %js, %r : tensor<32xi32>
    %lt = arith.cmpi slt, %x, %ys : tensor<32xi32>
    %ltb = tile.reshape %lt : tensor<32xi1> -> tensor<1x32xi1>
    %lt2 = tile.broadcast %ltb : tensor<1x32xi1> -> tensor<32x32xi1>
    %s = arith.select %lt2, %acc, %z : tensor<32x32xi1>, tensor<32x32xf32>
    scf.yield %s : tensor<32x32xf32>
  }
  tile.store %res2, %o[%c0, %c0] : tensor<32x32xf32>, !tile.view<f32, 2>, i64, i64
  return
}
