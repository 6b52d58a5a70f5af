// RUN: tile-opt %s -split-input-file -tile-layout -tile-plan-shared -convert-tile-to-nvvm | FileCheck %s
// Scans in registers, user combiners, take.

// cumsum of 256 f32 over 2 warps x 4 (one group per thread): each thread
// scans its 4 elements, a warp scan of the totals (5 shuffles up), lane 31
// stores each warp's total, one barrier, every thread adds the totals of
// the warps before its own, and a barrier before the buffer is reused.
// CHECK-LABEL: llvm.func @cumsum(
// CHECK-COUNT-3: arith.addf %{{.*}}, %{{.*}} : f32
// CHECK-COUNT-5: nvvm.shfl.sync  up
// CHECK:         nvvm.shfl.sync  up
// CHECK:         scf.if
// CHECK:           llvm.store %{{.*}} : i32, !llvm.ptr<3>
// CHECK:         nvvm.barrier0
// CHECK:         llvm.load %{{.*}} : !llvm.ptr<3> -> vector<2xi32>
// CHECK:         nvvm.barrier0
// CHECK-NOT:     nvvm.barrier0
// CHECK:         llvm.return
func.func @cumsum(%t: f32) attributes {tile.kernel, tile.encoding = #tile.blocked<vec = 4, warps = 2>} {
  %x = tile.splat %t : f32 -> tensor<256xf32>
  %c = tile.scan %x : tensor<256xf32>
  return
}

// -----

// cumsum of 2048 f32 over 2 warps x 4, four groups per thread: still one
// warp scan. The 4 group totals go to shared memory (value g * 64 + t),
// thread t reads values 4t .. 4t + 3 (one 16-byte load) and scans them,
// writes each one's prefix within its warp back (one 16-byte store) with
// the warp totals, then reads the prefix of each of its groups.
// CHECK-LABEL: llvm.func @cumsum_groups(
// CHECK-COUNT-4: llvm.store %{{.*}} : i32, !llvm.ptr<3>
// CHECK:         nvvm.barrier0
// CHECK:         llvm.load %{{.*}} : !llvm.ptr<3> -> vector<4xi32>
// CHECK-COUNT-5: nvvm.shfl.sync  up
// CHECK:         nvvm.shfl.sync  up
// CHECK-NOT:     nvvm.shfl.sync
// CHECK:         scf.if
// CHECK:         llvm.store %{{.*}} : vector<4xi32>, !llvm.ptr<3>
// CHECK:         nvvm.barrier0
// CHECK-COUNT-4: llvm.load %{{.*}} : !llvm.ptr<3> -> i32
// CHECK:         llvm.load %{{.*}} : !llvm.ptr<3> -> vector<2xi32>
// CHECK:         nvvm.barrier0
// CHECK-NOT:     nvvm.barrier0
// CHECK:         llvm.return
func.func @cumsum_groups(%t: f32) attributes {tile.kernel, tile.encoding = #tile.blocked<vec = 4, warps = 2>} {
  %x = tile.splat %t : f32 -> tensor<2048xf32>
  %c = tile.scan %x : tensor<2048xf32>
  return
}

// -----

// A user scan clones the combiner (here maxnumf) at every combination; no
// arith.addf of the built-in cumsum appears.
// CHECK-LABEL: llvm.func @userscan(
// CHECK-NOT:     arith.addf
// CHECK:         arith.maxnumf
// CHECK:         nvvm.shfl.sync  up
// CHECK-NOT:     arith.addf
// CHECK:         llvm.return
func.func @userscan(%t: f32) attributes {tile.kernel, tile.encoding = #tile.blocked<vec = 2, warps = 1>} {
  %x = tile.splat %t : f32 -> tensor<64xf32>
  %c = tile.scan %x : tensor<64xf32> {
  ^bb0(%a: f32, %b: f32):
    %m = arith.maxnumf %a, %b : f32
    tile.yield %m : f32
  }
  return
}

// -----

// A user reduction of a padded tile (100 elements over 64 x 2 slots) has no
// identity: each slot carries a validity flag (i1, shuffled as i32) and
// combinations keep the valid side.
// CHECK-LABEL: llvm.func @userreduce(
// CHECK:         arith.cmpi slt, %{{.*}}, %{{.*}} : vector<2xi32>
// CHECK:         arith.ori %{{.*}}, %{{.*}} : i32
// CHECK:         arith.extui %{{.*}} : i1 to i32
// CHECK:         nvvm.shfl.sync  bfly
// CHECK:         nvvm.barrier0
// CHECK:         llvm.return
func.func @userreduce(%t: i32) attributes {tile.kernel, tile.encoding = #tile.blocked<vec = 2, warps = 2>} {
  %x = tile.splat %t : i32 -> tensor<100xi32>
  %r = tile.reduce "fn" %x : tensor<100xi32> -> i32 {
  ^bb0(%a: i32, %b: i32):
    %o = arith.ori %a, %b : i32
    tile.yield %o : i32
  }
  return
}

// -----

// Two takes from one tile share its write to the buffer: one write, one
// barrier before the reads of both, one barrier after.
// CHECK-LABEL: llvm.func @takes(
// CHECK-COUNT-4: llvm.store %{{.*}} : f32, !llvm.ptr<3>
// CHECK-NOT:     llvm.store
// CHECK:         nvvm.barrier0
// CHECK-NOT:     nvvm.barrier0
// CHECK:         llvm.load %{{.*}} : !llvm.ptr<3> -> f32
// CHECK-NOT:     nvvm.barrier0
// CHECK:         llvm.load %{{.*}} : !llvm.ptr<3> -> f32
// CHECK:         nvvm.barrier0
// CHECK-NOT:     nvvm.barrier0
// CHECK:         llvm.return
func.func @takes(%t: f32, %i: i32) attributes {tile.kernel, tile.encoding = #tile.blocked<vec = 4, warps = 1>} {
  %x = tile.splat %t : f32 -> tensor<128xf32>
  %j = tile.splat %i : i32 -> tensor<32xi32>
  %a = tile.take %x[%j] : tensor<128xf32>, tensor<32xi32> -> tensor<32xf32>
  %b = tile.take %x[%j] : tensor<128xf32>, tensor<32xi32> -> tensor<32xf32>
  %s = arith.subf %a, %b : tensor<32xf32>
  return
}

// -----

// A broadcast load of a one-element tile (a per-program scalar such as
// x[r, 0]) is one load per thread, splat to all of the thread's slots.
// CHECK-LABEL: llvm.func @scalarbcast(
// CHECK:         llvm.load %{{.*}} : !llvm.ptr<1> -> f32
// CHECK-NOT:     llvm.load
// CHECK:         vector.broadcast %{{.*}} : f32 to vector<8xf32>
// CHECK-NOT:     llvm.load
// CHECK:         llvm.return
func.func @scalarbcast(%xp: !llvm.ptr<1>, %n: i64, %s: i64, %i: i32)
    attributes {tile.kernel, tile.encoding = #tile.blocked<vec = 4, warps = 1>} {
  %x = tile.make_view %xp[%n, %n] strides[%s, %s] : !llvm.ptr<1> -> !tile.view<f32, 2>
  %b = tile.broadcast_load %x[%i, %i] {src_shape = array<i64: 1, 1>} : !tile.view<f32, 2>, i32, i32 -> tensor<1x256xf32>
  return
}

// -----

// A take checks a 32-bit index in 32 bits (negative i32 and large u32
// indices are both >= 2^31 as u32), then widens it; a 64-bit one in 64.
// CHECK-LABEL: llvm.func @takebounds(
// CHECK-COUNT-4: arith.cmpi ult, %{{.*}}, %{{.*}} : i32
// CHECK-COUNT-4: arith.cmpi ult, %{{.*}}, %{{.*}} : i64
// CHECK:         llvm.return
func.func @takebounds(%t: f32, %i: i32, %k: i64) attributes {tile.kernel, tile.encoding = #tile.blocked<vec = 4, warps = 1>} {
  %x = tile.splat %t : f32 -> tensor<128xf32>
  %j = tile.splat %i : i32 -> tensor<32xi32>
  %a = tile.take %x[%j] : tensor<128xf32>, tensor<32xi32> -> tensor<32xf32>
  %jk = tile.splat %k : i64 -> tensor<32xi64>
  %b = tile.take %x[%jk] : tensor<128xf32>, tensor<32xi64> -> tensor<32xf32>
  %s = arith.subf %a, %b : tensor<32xf32>
  return
}
