// RUN: tile-opt %s -split-input-file -tile-stage-shared -verify-diagnostics | FileCheck %s
// RUN: not tile-opt %s -split-input-file -tile-stage-shared=arch=sm_80 2>/dev/null | FileCheck %s --check-prefix=SM80
// RUN: not tile-opt %s -split-input-file -tile-stage-shared=arch=sm_80 2>&1 >/dev/null | FileCheck %s --check-prefix=SM80ERR
// (not: @too_deep's 5 stages do not fit on sm_80 either.)

// 128x256x64 bf16: two consumer warpgroups (64 rows each, 128 accumulator
// registers per thread) plus the producer: 12 warps. A stage is
// (128*64 + 64*256) * 2 = 48 KiB, so 4 stages fit in 227 KiB. The kernel gets
// a TMA descriptor (by value) and a valid flag per operand, and one for the
// result, which is stored through shared memory by TMA in boxes of 64 rows
// x 32 f32 (128 bytes), reusing the ring (buffers = 0) once the loop is done.
// CHECK-LABEL: func.func @mm(
// CHECK-SAME:    %arg15: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>}, %arg16: i32,
// CHECK-SAME:    %arg17: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>}, %arg18: i32,
// CHECK-SAME:    %arg19: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>}, %arg20: i32)
// CHECK-SAME:    tile.encoding = #tile.mma<kind = wgmma, consumers = 2>
// CHECK-SAME:    tile.num_warps = 12 : i32
// CHECK-SAME:    tile.shared_bytes = 197888 : i32
// CHECK-SAME:    tile.tma = [array<i64: 0, 64, 128>, array<i64: 1, 64, 64>, array<i64: 2, 32, 64>]
// CHECK:         scf.for
// CHECK:         } {tile.pipeline = {consumers = 2 : i32, stages = 4 : i32}}
// CHECK:         tile.store {{.*}} {tile.tma_store = {buffers = 0 : i32, offset = 0 : i64, tma = 2 : i32}}
// On sm_80 the same loop is planned for cp.async + mma.sync: no producer
// warpgroup (8 warps), no TMA arguments, 3 stages in sm_80's 163 KiB.
// SM80-LABEL: func.func @mm(
// SM80-NOT:     llvm.byval
// SM80-SAME:    tile.encoding = #tile.mma<kind = mma_sync, consumers = 2>
// SM80-SAME:    tile.num_warps = 8 : i32
// SM80-SAME:    tile.shared_bytes = 148736 : i32
// SM80:         } {tile.pipeline = {consumers = 2 : i32, stages = 3 : i32}}
// SM80ERR: error: kernel 'too_deep' needs 247040 bytes of shared memory for STAGES=5 stages of tile<bf16>[128, 64] and tile<bf16>[64, 256] tiles, but 166912 are available per block on sm_80; use STAGES=3 or smaller tiles
func.func @mm(%ap: !llvm.ptr<1>, %am: i64, %ak: i64, %as0: i64, %as1: i64,
              %bp: !llvm.ptr<1>, %bk: i64, %bn: i64, %bs0: i64, %bs1: i64,
              %cp: !llvm.ptr<1>, %cm: i64, %cn: i64, %cs0: i64, %cs1: i64) attributes {tile.kernel} {
  %a = tile.make_view %ap[%am, %ak] strides[%as0, %as1] {tile.param = 0 : i32} : !llvm.ptr<1> -> !tile.view<bf16, 2>
  %b = tile.make_view %bp[%bk, %bn] strides[%bs0, %bs1] {tile.param = 1 : i32} : !llvm.ptr<1> -> !tile.view<bf16, 2>
  %c = tile.make_view %cp[%cm, %cn] strides[%cs0, %cs1] {tile.param = 2 : i32} : !llvm.ptr<1> -> !tile.view<f32, 2>
  %m = tile.block_id 0 : i32
  %n = tile.block_id 1 : i32
  %zero = arith.constant dense<0.0> : tensor<128x256xf32>
  %c0 = arith.constant 0 : i64
  %c1 = arith.constant 1 : i64
  %kt = arith.constant 16 : i64
  %acc = scf.for %k = %c0 to %kt step %c1 iter_args(%x = %zero) -> (tensor<128x256xf32>) : i64 {
    %m64 = arith.extsi %m : i32 to i64
    %ta = tile.load %a[%m64, %k] : !tile.view<bf16, 2>, i64, i64 -> tensor<128x64xbf16>
    %n64 = arith.extsi %n : i32 to i64
    %tb = tile.load %b[%k, %n64] : !tile.view<bf16, 2>, i64, i64 -> tensor<64x256xbf16>
    %y = tile.mma %ta, %tb, %x : tensor<128x64xbf16>, tensor<64x256xbf16>, tensor<128x256xf32>
    scf.yield %y : tensor<128x256xf32>
  }
  tile.store %acc, %c[%m, %n] : tensor<128x256xf32>, !tile.view<f32, 2>, i32, i32
  return
}

// -----

// STAGES from the kernel (tile.stages) is checked against the budget: 5 x
// 48 KiB does not fit.
func.func @too_deep(%ap: !llvm.ptr<1>, %am: i64, %ak: i64, %as0: i64, %as1: i64,
                    %bp: !llvm.ptr<1>, %bk: i64, %bn: i64, %bs0: i64, %bs1: i64) attributes {tile.kernel, tile.stages = 5 : i32} {
  %a = tile.make_view %ap[%am, %ak] strides[%as0, %as1] {tile.param = 0 : i32} : !llvm.ptr<1> -> !tile.view<bf16, 2>
  %b = tile.make_view %bp[%bk, %bn] strides[%bs0, %bs1] {tile.param = 1 : i32} : !llvm.ptr<1> -> !tile.view<bf16, 2>
  %zero = arith.constant dense<0.0> : tensor<128x256xf32>
  %c0 = arith.constant 0 : i64
  %c1 = arith.constant 1 : i64
  %acc = scf.for %k = %c0 to %ak step %c1 iter_args(%x = %zero) -> (tensor<128x256xf32>) : i64 {
    %ta = tile.load %a[%c0, %k] : !tile.view<bf16, 2>, i64, i64 -> tensor<128x64xbf16>
    %tb = tile.load %b[%k, %c0] : !tile.view<bf16, 2>, i64, i64 -> tensor<64x256xbf16>
    // expected-error @+1 {{kernel 'too_deep' needs 247040 bytes of shared memory for STAGES=5 stages of tile<bf16>[128, 64] and tile<bf16>[64, 256] tiles, but 232448 are available per block on sm_90a; use STAGES=4 or smaller tiles}}
    %y = tile.mma %ta, %tb, %x : tensor<128x64xbf16>, tensor<64x256xbf16>, tensor<128x256xf32>
    scf.yield %y : tensor<128x256xf32>
  }
  return
}

// -----

// f32 operands on sm_90a: the same TMA pipeline with CUDA-core (fma)
// consumers. 128x128x32: two consumer warpgroups of 8x8 accumulators per
// thread, 4-wide groups; a stage is (128*32 + 32*128) * 4 = 32 KiB, so 4
// stages; TMA boxes are 32 f32 (128 bytes) wide. On sm_80 f32 keeps the
// blocked layout (no error).
// CHECK-LABEL: func.func @f32(
// CHECK-SAME:    tile.encoding = #tile.mma<kind = fma, consumers = 2>
// CHECK-SAME:    tile.num_warps = 12 : i32
// CHECK-SAME:    tile.shared_bytes = 132352 : i32
// CHECK-SAME:    tile.tma = [array<i64: 0, 32, 128>, array<i64: 0, 32, 32>]
// CHECK:         tile.mma
// CHECK:         } {tile.pipeline = {consumers = 2 : i32, stages = 4 : i32}}
// SM80ERR-NOT:   error: {{.*}}f32
func.func @f32(%ap: !llvm.ptr<1>, %n: i64, %s: i64) attributes {tile.kernel} {
  %a = tile.make_view %ap[%n, %n] strides[%s, %s] {tile.param = 0 : i32} : !llvm.ptr<1> -> !tile.view<f32, 2>
  %zero = arith.constant dense<0.0> : tensor<128x128xf32>
  %c0 = arith.constant 0 : i64
  %c1 = arith.constant 1 : i64
  %acc = scf.for %k = %c0 to %n step %c1 iter_args(%x = %zero) -> (tensor<128x128xf32>) : i64 {
    %ta = tile.load %a[%c0, %k] : !tile.view<f32, 2>, i64, i64 -> tensor<128x32xf32>
    %tb = tile.load %a[%k, %c0] : !tile.view<f32, 2>, i64, i64 -> tensor<32x128xf32>
    %y = tile.mma %ta, %tb, %x : tensor<128x32xf32>, tensor<32x128xf32>, tensor<128x128xf32>
    scf.yield %y : tensor<128x128xf32>
  }
  return
}

// -----

// f32 tiles the pipeline cannot take (here BN = 32, not a multiple of 64)
// keep the ordinary blocked layout, where the lowering stages the operands
// itself: no plan, no layout, no extra arguments, and no error.
// CHECK-LABEL: func.func @f32_blocked(
// CHECK-NOT:     tile.pipeline
// CHECK-NOT:     #tile.mma
// CHECK:         tile.mma
// CHECK-NOT:     tile.pipeline
func.func @f32_blocked(%ap: !llvm.ptr<1>, %n: i64, %s: i64) attributes {tile.kernel} {
  %a = tile.make_view %ap[%n, %n] strides[%s, %s] {tile.param = 0 : i32} : !llvm.ptr<1> -> !tile.view<f32, 2>
  %zero = arith.constant dense<0.0> : tensor<64x32xf32>
  %c0 = arith.constant 0 : i64
  %c1 = arith.constant 1 : i64
  %acc = scf.for %k = %c0 to %n step %c1 iter_args(%x = %zero) -> (tensor<64x32xf32>) : i64 {
    %ta = tile.load %a[%c0, %k] : !tile.view<f32, 2>, i64, i64 -> tensor<64x32xf32>
    %tb = tile.load %a[%k, %c0] : !tile.view<f32, 2>, i64, i64 -> tensor<32x32xf32>
    %y = tile.mma %ta, %tb, %x : tensor<64x32xf32>, tensor<32x32xf32>, tensor<64x32xf32>
    scf.yield %y : tensor<64x32xf32>
  }
  return
}

// -----

// BN = 96: B is staged in two 64-column boxes (the second half used), so a
// stage is (128*64 + 64*128) * 2 = 32 KiB; the B descriptor's box is still
// 64 columns wide.
// CHECK-LABEL: func.func @bn96(
// CHECK-SAME:    tile.encoding = #tile.mma<kind = wgmma, consumers = 2>
// CHECK-SAME:    tile.shared_bytes = 132352 : i32
// CHECK-SAME:    tile.tma = [array<i64: 0, 64, 128>, array<i64: 0, 64, 64>]
// CHECK:         } {tile.pipeline = {consumers = 2 : i32, stages = 4 : i32}}
func.func @bn96(%ap: !llvm.ptr<1>, %n: i64, %s: i64) attributes {tile.kernel} {
  %a = tile.make_view %ap[%n, %n] strides[%s, %s] {tile.param = 0 : i32} : !llvm.ptr<1> -> !tile.view<f16, 2>
  %zero = arith.constant dense<0.0> : tensor<128x96xf32>
  %c0 = arith.constant 0 : i64
  %c1 = arith.constant 1 : i64
  %acc = scf.for %k = %c0 to %n step %c1 iter_args(%x = %zero) -> (tensor<128x96xf32>) : i64 {
    %ta = tile.load %a[%c0, %k] : !tile.view<f16, 2>, i64, i64 -> tensor<128x64xf16>
    %tb = tile.load %a[%k, %c0] : !tile.view<f16, 2>, i64, i64 -> tensor<64x96xf16>
    %y = tile.mma %ta, %tb, %x : tensor<128x64xf16>, tensor<64x96xf16>, tensor<128x96xf32>
    scf.yield %y : tensor<128x96xf32>
  }
  return
}

// -----

// f32 with tf32 and b as loaded: wgmma reads tf32 only K-major, so on
// sm_90a the tile is multiplied as B^T A^T (swapped: BN over wgmma's M, two
// consumers of 64 columns; B^T through registers), with TMA and a
// producer; 32-column boxes. (sm_80: mma.sync, the SM80 lines.)
// CHECK-LABEL: func.func @tf32(
// CHECK-SAME:    llvm.byval
// CHECK-SAME:    tile.encoding = #tile.mma<kind = wgmma, consumers = 2, swapped = true>
// CHECK-SAME:    tile.num_warps = 12 : i32
// CHECK-SAME:    tile.shared_bytes = 132352 : i32
// CHECK:         tile.mma {{.*}} {tf32}
// CHECK:         } {tile.pipeline = {consumers = 2 : i32, stages = 4 : i32, swapped}}
// SM80-LABEL: func.func @tf32(
// SM80-NOT:     llvm.byval
// SM80-SAME:    tile.encoding = #tile.mma<kind = mma_sync, consumers = 2>
// SM80-SAME:    tile.num_warps = 8 : i32
func.func @tf32(%ap: !llvm.ptr<1>, %n: i64, %s: i64) attributes {tile.kernel} {
  %a = tile.make_view %ap[%n, %n] strides[%s, %s] {tile.param = 0 : i32} : !llvm.ptr<1> -> !tile.view<f32, 2>
  %zero = arith.constant dense<0.0> : tensor<128x128xf32>
  %c0 = arith.constant 0 : i64
  %c1 = arith.constant 1 : i64
  %acc = scf.for %k = %c0 to %n step %c1 iter_args(%x = %zero) -> (tensor<128x128xf32>) : i64 {
    %ta = tile.load %a[%c0, %k] : !tile.view<f32, 2>, i64, i64 -> tensor<128x32xf32>
    %tb = tile.load %a[%k, %c0] : !tile.view<f32, 2>, i64, i64 -> tensor<32x128xf32>
    %y = tile.mma %ta, %tb, %x {tf32} : tensor<128x32xf32>, tensor<32x128xf32>, tensor<128x128xf32>
    scf.yield %y : tensor<128x128xf32>
  }
  return
}
