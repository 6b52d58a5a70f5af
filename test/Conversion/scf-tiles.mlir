// RUN: tile-opt %s -tile-layout -tile-plan-shared -convert-tile-to-nvvm | FileCheck %s
// Loops and ifs that carry tiles carry each thread's vector instead.

// CHECK-LABEL: llvm.func @carry(
// CHECK:         %[[INIT:.*]] = arith.constant dense<0.000000e+00> : vector<2xf32>
// CHECK:         %[[R:.*]] = scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %[[INIT]]) -> (vector<2xf32>) : i32 {
// CHECK:           %[[RANGE:.*]] = arith.addi %{{.*}}, %{{.*}} : vector<2xi32>
// CHECK:           arith.sitofp %[[RANGE]] : vector<2xi32> to vector<2xf32>
// CHECK:           scf.yield %{{.*}} : vector<2xf32>
// CHECK:         scf.if %{{.*}} -> (vector<2xf32>) {
// CHECK-NOT:     tensor<
func.func @carry(%n: i32, %c: i1) -> () attributes {tile.kernel, tile.encoding = #tile.blocked<vec = 2, warps = 1>} {
  %zero = arith.constant dense<0.0> : tensor<64xf32>
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (tensor<64xf32>) : i32 {
    %range = tile.range : tensor<64xi32>
    %f = arith.sitofp %range : tensor<64xi32> to tensor<64xf32>
    %s = arith.addf %acc, %f : tensor<64xf32>
    scf.yield %s : tensor<64xf32>
  }
  %x = scf.if %c -> (tensor<64xf32>) {
    scf.yield %r : tensor<64xf32>
  } else {
    scf.yield %zero : tensor<64xf32>
  }
  return
}
