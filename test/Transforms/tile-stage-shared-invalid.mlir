// RUN: tile-opt %s -split-input-file -tile-stage-shared -verify-diagnostics

// The accumulator of a 256x256 tile does not fit in the registers.
func.func @regs(%ap: !llvm.ptr<1>, %n: i64, %s: i64) attributes {tile.kernel} {
  %a = tile.make_view %ap[%n, %n] strides[%s, %s] {tile.param = 0 : i32} : !llvm.ptr<1> -> !tile.view<bf16, 2>
  %zero = arith.constant dense<0.0> : tensor<256x256xf32>
  %c0 = arith.constant 0 : i64
  %c1 = arith.constant 1 : i64
  %acc = scf.for %k = %c0 to %n step %c1 iter_args(%x = %zero) -> (tensor<256x256xf32>) : i64 {
    %ta = tile.load %a[%c0, %k] : !tile.view<bf16, 2>, i64, i64 -> tensor<256x64xbf16>
    %tb = tile.load %a[%k, %c0] : !tile.view<bf16, 2>, i64, i64 -> tensor<64x256xbf16>
    // expected-error @+1 {{kernel 'regs': the 256x256 f32 accumulator needs 256 registers per thread in each of the 2 consumer warpgroups, but at most 160 leave room for the rest (255 per thread); use a smaller BM or BN}}
    %y = tile.mma %ta, %tb, %x : tensor<256x64xbf16>, tensor<64x256xbf16>, tensor<256x256xf32>
    scf.yield %y : tensor<256x256xf32>
  }
  return
}

// -----

// BN = 84 is not a multiple of 8 (wgmma's N).
func.func @bn84(%ap: !llvm.ptr<1>, %n: i64, %s: i64) attributes {tile.kernel} {
  %a = tile.make_view %ap[%n, %n] strides[%s, %s] {tile.param = 0 : i32} : !llvm.ptr<1> -> !tile.view<f16, 2>
  %zero = arith.constant dense<0.0> : tensor<64x84xf32>
  %c0 = arith.constant 0 : i64
  %c1 = arith.constant 1 : i64
  %acc = scf.for %k = %c0 to %n step %c1 iter_args(%x = %zero) -> (tensor<64x84xf32>) : i64 {
    %ta = tile.load %a[%c0, %k] : !tile.view<f16, 2>, i64, i64 -> tensor<64x64xf16>
    %tb = tile.load %a[%k, %c0] : !tile.view<f16, 2>, i64, i64 -> tensor<64x84xf16>
    // expected-error @+1 {{kernel 'bn84': the number of columns of b (BN) must be a multiple of 8 up to 256 (e.g. 64, 96, 128, 192, 208, 256) or of 64 up to 512 (e.g. 320) (mma of tile<f16>[64, 64] and tile<f16>[64, 84])}}
    %y = tile.mma %ta, %tb, %x : tensor<64x64xf16>, tensor<64x84xf16>, tensor<64x84xf32>
    scf.yield %y : tensor<64x84xf32>
  }
  return
}

// -----

// An mma in an 'if' (outside a loop over K) is not pipelined. (One at the
// kernel's top level is a loop of one iteration:
// tile-stage-shared-single.test.)
func.func @in_if(%ap: !llvm.ptr<1>, %n: i64, %s: i64, %c: i1) attributes {tile.kernel} {
  %a = tile.make_view %ap[%n, %n] strides[%s, %s] {tile.param = 0 : i32} : !llvm.ptr<1> -> !tile.view<bf16, 2>
  %zero = arith.constant dense<0.0> : tensor<128x128xf32>
  %c0 = arith.constant 0 : i64
  %ta = tile.load %a[%c0, %c0] : !tile.view<bf16, 2>, i64, i64 -> tensor<128x64xbf16>
  %tb = tile.load %a[%c0, %c0] : !tile.view<bf16, 2>, i64, i64 -> tensor<64x128xbf16>
  scf.if %c {
    // expected-error @+1 {{kernel 'in_if': an mma must be in a 'for' loop (the loop over K), at its top level or in an 'if' there whose mmas are skipped where it fails}}
    %y = tile.mma %ta, %tb, %zero : tensor<128x64xbf16>, tensor<64x128xbf16>, tensor<128x128xf32>
  }
  return
}

// -----

// A computed second operand is written to shared memory as a [BM, N] tile
// (the accumulator's rows): a [64, 128] b beside a 128-row accumulator
// has no place there.
func.func @prologue(%ap: !llvm.ptr<1>, %n: i64, %s: i64) attributes {tile.kernel} {
  %a = tile.make_view %ap[%n, %n] strides[%s, %s] {tile.param = 0 : i32} : !llvm.ptr<1> -> !tile.view<bf16, 2>
  %zero = arith.constant dense<0.0> : tensor<128x128xf32>
  %c0 = arith.constant 0 : i64
  %c1 = arith.constant 1 : i64
  %acc = scf.for %k = %c0 to %n step %c1 iter_args(%x = %zero) -> (tensor<128x128xf32>) : i64 {
    %ta = tile.load %a[%c0, %k] : !tile.view<bf16, 2>, i64, i64 -> tensor<128x64xbf16>
    %tb = tile.load %a[%k, %c0] : !tile.view<bf16, 2>, i64, i64 -> tensor<64x128xbf16>
    %t2 = arith.addf %tb, %tb : tensor<64x128xbf16>
    // expected-error @+1 {{a computed second operand of mma is read from shared memory, written there as a [128, N] tile with N a multiple of 64 (whole 128-byte rows); this one is tile<bf16>[64, 128]}}
    %y = tile.mma %ta, %t2, %x : tensor<128x64xbf16>, tensor<64x128xbf16>, tensor<128x128xf32>
    scf.yield %y : tensor<128x128xf32>
  }
  return
}

// -----

// Tiles after the loop must have the accumulator's shape (or be its rows).
func.func @epilogue_shape(%ap: !llvm.ptr<1>, %n: i64, %s: i64) attributes {tile.kernel} {
  %a = tile.make_view %ap[%n, %n] strides[%s, %s] {tile.param = 0 : i32} : !llvm.ptr<1> -> !tile.view<bf16, 2>
  %zero = arith.constant dense<0.0> : tensor<128x128xf32>
  %c0 = arith.constant 0 : i64
  %c1 = arith.constant 1 : i64
  %acc = scf.for %k = %c0 to %n step %c1 iter_args(%x = %zero) -> (tensor<128x128xf32>) : i64 {
    %ta = tile.load %a[%c0, %k] : !tile.view<bf16, 2>, i64, i64 -> tensor<128x64xbf16>
    %tb = tile.load %a[%k, %c0] : !tile.view<bf16, 2>, i64, i64 -> tensor<64x128xbf16>
    %y = tile.mma %ta, %tb, %x : tensor<128x64xbf16>, tensor<64x128xbf16>, tensor<128x128xf32>
    scf.yield %y : tensor<128x128xf32>
  }
  // expected-error @+1 {{in a kernel with mma, every tile outside the mma loop must have the accumulator's shape [128, 128] or be a [BM] / [BM, 1] tile of row values (or [1, BM] reshaped from them to be stored in a row) or a [BN] / [1, BN] tile of column values (a reduction over axis 0); this one is tile<f32>[16384] (a loaded tile may be broadcast to it)}}
  %r = tile.reshape %acc : tensor<128x128xf32> -> tensor<16384xf32>
  return
}


// -----

// One stage cannot pipeline: the producer would wait for the buffer the
// consumers release only after its next fill.
func.func @one_stage(%ap: !llvm.ptr<1>, %n: i64, %s: i64) attributes {tile.kernel, tile.stages = 1 : i32} {
  %a = tile.make_view %ap[%n, %n] strides[%s, %s] {tile.param = 0 : i32} : !llvm.ptr<1> -> !tile.view<bf16, 2>
  %zero = arith.constant dense<0.0> : tensor<128x128xf32>
  %c0 = arith.constant 0 : i64
  %c1 = arith.constant 1 : i64
  %acc = scf.for %k = %c0 to %n step %c1 iter_args(%x = %zero) -> (tensor<128x128xf32>) : i64 {
    %ta = tile.load %a[%c0, %k] : !tile.view<bf16, 2>, i64, i64 -> tensor<128x64xbf16>
    %tb = tile.load %a[%k, %c0] : !tile.view<bf16, 2>, i64, i64 -> tensor<64x128xbf16>
    // expected-error @+1 {{kernel 'one_stage': STAGES must be 2 to 16, got 1}}
    %y = tile.mma %ta, %tb, %x : tensor<128x64xbf16>, tensor<64x128xbf16>, tensor<128x128xf32>
    scf.yield %y : tensor<128x128xf32>
  }
  return
}

// -----

// An mma loop in an outer loop (a persistent kernel) may run a number of
// iterations that changes with the outer one (the ring counts on across
// the runs), but not with alternating consumers, whose ring numbering
// needs the same count for every tile.
func.func @nested(%ap: !llvm.ptr<1>, %n: i64, %s: i64) attributes {tile.kernel, tile.pingpong_tiles = 1 : i32} {
  %a = tile.make_view %ap[%n, %n] strides[%s, %s] {tile.param = 0 : i32} : !llvm.ptr<1> -> !tile.view<bf16, 2>
  %zero = arith.constant dense<0.0> : tensor<128x128xf32>
  %c0 = arith.constant 0 : i64
  %c1 = arith.constant 1 : i64
  scf.for %t = %c0 to %n step %c1 : i64 {
    %acc = scf.for %k = %c0 to %t step %c1 iter_args(%x = %zero) -> (tensor<128x128xf32>) : i64 {
      %ta = tile.load %a[%t, %k] : !tile.view<bf16, 2>, i64, i64 -> tensor<128x64xbf16>
      %tb = tile.load %a[%k, %c0] : !tile.view<bf16, 2>, i64, i64 -> tensor<64x128xbf16>
      // expected-error @+1 {{kernel 'nested': @launch(pingpong = 1) needs the mma loop's bounds fixed across the outer loop and every operand loaded in the mma loop}}
      %y = tile.mma %ta, %tb, %x : tensor<128x64xbf16>, tensor<64x128xbf16>, tensor<128x128xf32>
      scf.yield %y : tensor<128x128xf32>
    }
  }
  return
}

// -----

// Before the loop every warpgroup runs the code: no side effects there.
func.func @store_before(%ap: !llvm.ptr<1>, %n: i64, %s: i64) attributes {tile.kernel} {
  %a = tile.make_view %ap[%n, %n] strides[%s, %s] {tile.param = 0 : i32} : !llvm.ptr<1> -> !tile.view<bf16, 2>
  %o = tile.make_view %ap[%n, %n] strides[%s, %s] {tile.param = 1 : i32} : !llvm.ptr<1> -> !tile.view<f32, 2>
  %zero = arith.constant dense<0.0> : tensor<128x128xf32>
  %c0 = arith.constant 0 : i64
  %c1 = arith.constant 1 : i64
  // expected-error @+1 {{in a kernel with mma, stores, atomics, print and assert may not come before the mma loop (every warpgroup runs the code before it, the producer's too); put them in the loop or after it}}
  tile.store %zero, %o[%c0, %c0] : tensor<128x128xf32>, !tile.view<f32, 2>, i64, i64
  %acc = scf.for %k = %c0 to %n step %c1 iter_args(%x = %zero) -> (tensor<128x128xf32>) : i64 {
    %ta = tile.load %a[%c0, %k] : !tile.view<bf16, 2>, i64, i64 -> tensor<128x64xbf16>
    %tb = tile.load %a[%k, %c0] : !tile.view<bf16, 2>, i64, i64 -> tensor<64x128xbf16>
    %y = tile.mma %ta, %tb, %x : tensor<128x64xbf16>, tensor<64x128xbf16>, tensor<128x128xf32>
    scf.yield %y : tensor<128x128xf32>
  }
  return
}

// -----

// Reductions over the accumulator's columns (axis = 1) and rows (axis = 0)
// are supported after the mma loop; before it the producer warpgroup runs
// the code too, so a reduction over a tile's rows there is refused.
func.func @column_reduce_before_the_loop(%ap: !llvm.ptr<1>, %n: i64, %s: i64) attributes {tile.kernel} {
  %a = tile.make_view %ap[%n, %n] strides[%s, %s] {tile.param = 0 : i32} : !llvm.ptr<1> -> !tile.view<bf16, 2>
  %zero = arith.constant dense<0.0> : tensor<128x128xf32>
  %c0 = arith.constant 0 : i64
  %c1 = arith.constant 1 : i64
  %t = tile.load %a[%c0, %c0] : !tile.view<bf16, 2>, i64, i64 -> tensor<128x128xbf16>
  // expected-error @+1 {{in a kernel with mma, a reduction over the rows of a tile (axis = 0) must come after the mma loop}}
  %m = tile.reduce "max" %t {axis = 0 : i32} : tensor<128x128xbf16> -> tensor<128xbf16>
  %acc = scf.for %k = %c0 to %n step %c1 iter_args(%x = %zero) -> (tensor<128x128xf32>) : i64 {
    %ta = tile.load %a[%c0, %k] : !tile.view<bf16, 2>, i64, i64 -> tensor<128x64xbf16>
    %tb = tile.load %a[%k, %c0] : !tile.view<bf16, 2>, i64, i64 -> tensor<64x128xbf16>
    %y = tile.mma %ta, %tb, %x : tensor<128x64xbf16>, tensor<64x128xbf16>, tensor<128x128xf32>
    scf.yield %y : tensor<128x128xf32>
  }
  return
}

// -----

// argmax and argmin over the columns (axis = 1) run in registers; over the
// rows (axis = 0) they are refused.
func.func @argmax_rows(%ap: !llvm.ptr<1>, %n: i64, %s: i64) attributes {tile.kernel} {
  %a = tile.make_view %ap[%n, %n] strides[%s, %s] {tile.param = 0 : i32} : !llvm.ptr<1> -> !tile.view<bf16, 2>
  %zero = arith.constant dense<0.0> : tensor<128x128xf32>
  %c0 = arith.constant 0 : i64
  %c1 = arith.constant 1 : i64
  %acc = scf.for %k = %c0 to %n step %c1 iter_args(%x = %zero) -> (tensor<128x128xf32>) : i64 {
    %ta = tile.load %a[%c0, %k] : !tile.view<bf16, 2>, i64, i64 -> tensor<128x64xbf16>
    %tb = tile.load %a[%k, %c0] : !tile.view<bf16, 2>, i64, i64 -> tensor<64x128xbf16>
    %y = tile.mma %ta, %tb, %x : tensor<128x64xbf16>, tensor<64x128xbf16>, tensor<128x128xf32>
    scf.yield %y : tensor<128x128xf32>
  }
  // expected-error @+1 {{a reduction must run over the columns (axis = 1) or the rows (axis = 0) of the [128, 128] accumulator (sum, max, min, prod or a combiner; argmax and argmin over the columns only)}}
  %m = tile.reduce "argmax" %acc {axis = 0 : i32} : tensor<128x128xf32> -> tensor<128xi32>
  return
}

// -----

// Only [BM, 1] columns of row values, [1, BN] rows of column values (and
// loaded tiles) broadcast.
func.func @computed_row(%ap: !llvm.ptr<1>, %n: i64, %s: i64) attributes {tile.kernel} {
  %a = tile.make_view %ap[%n, %n] strides[%s, %s] {tile.param = 0 : i32} : !llvm.ptr<1> -> !tile.view<bf16, 2>
  %zero = arith.constant dense<0.0> : tensor<128x128xf32>
  %c0 = arith.constant 0 : i64
  %c1 = arith.constant 1 : i64
  %acc = scf.for %k = %c0 to %n step %c1 iter_args(%x = %zero) -> (tensor<128x128xf32>) : i64 {
    %ta = tile.load %a[%c0, %k] : !tile.view<bf16, 2>, i64, i64 -> tensor<128x64xbf16>
    %tb = tile.load %a[%k, %c0] : !tile.view<bf16, 2>, i64, i64 -> tensor<64x128xbf16>
    %y = tile.mma %ta, %tb, %x : tensor<128x64xbf16>, tensor<64x128xbf16>, tensor<128x128xf32>
    scf.yield %y : tensor<128x128xf32>
  }
  %c = tile.reshape %acc : tensor<128x128xf32> -> tensor<128x128xf32>
  %z = arith.constant dense<1.0> : tensor<128xf32>
  // expected-error @+1 {{in a kernel with mma, only loaded tiles, [BM, 1] columns of row values and [1, BN] rows of column values can be broadcast (e.g. acc + load(bias, [n], [BN]), acc - expand_dims(max(acc, axis = 1), 1)); this one is tile<f32>[128]}}
  %b = tile.broadcast %z : tensor<128xf32> -> tensor<128x128xf32>
  return
}

// -----

// Wider than one wgmma: above 256, BN must be whole 64-column boxes, at
// most 512, with at most 160 accumulator registers, and b as loaded (a
// K-major box has at most 256 rows).

func.func @bn352(%ap: !llvm.ptr<1>, %n: i64, %s: i64) attributes {tile.kernel} {
  %a = tile.make_view %ap[%n, %n] strides[%s, %s] {tile.param = 0 : i32} : !llvm.ptr<1> -> !tile.view<bf16, 2>
  %zero = arith.constant dense<0.0> : tensor<64x352xf32>
  %c0 = arith.constant 0 : i64
  %c1 = arith.constant 1 : i64
  %acc = scf.for %k = %c0 to %n step %c1 iter_args(%x = %zero) -> (tensor<64x352xf32>) : i64 {
    %ta = tile.load %a[%c0, %k] : !tile.view<bf16, 2>, i64, i64 -> tensor<64x64xbf16>
    %tb = tile.load %a[%k, %c0] : !tile.view<bf16, 2>, i64, i64 -> tensor<64x352xbf16>
    // expected-error @+1 {{kernel 'bn352': the number of columns of b (BN) must be a multiple of 8 up to 256 (e.g. 64, 96, 128, 192, 208, 256) or of 64 up to 512 (e.g. 320) (mma of tile<bf16>[64, 64] and tile<bf16>[64, 352])}}
    %y = tile.mma %ta, %tb, %x : tensor<64x64xbf16>, tensor<64x352xbf16>, tensor<64x352xf32>
    scf.yield %y : tensor<64x352xf32>
  }
  return
}

// -----

func.func @bn576(%ap: !llvm.ptr<1>, %n: i64, %s: i64) attributes {tile.kernel} {
  %a = tile.make_view %ap[%n, %n] strides[%s, %s] {tile.param = 0 : i32} : !llvm.ptr<1> -> !tile.view<bf16, 2>
  %zero = arith.constant dense<0.0> : tensor<64x576xf32>
  %c0 = arith.constant 0 : i64
  %c1 = arith.constant 1 : i64
  %acc = scf.for %k = %c0 to %n step %c1 iter_args(%x = %zero) -> (tensor<64x576xf32>) : i64 {
    %ta = tile.load %a[%c0, %k] : !tile.view<bf16, 2>, i64, i64 -> tensor<64x64xbf16>
    %tb = tile.load %a[%k, %c0] : !tile.view<bf16, 2>, i64, i64 -> tensor<64x576xbf16>
    // expected-error @+1 {{kernel 'bn576': the number of columns of b (BN) must be a multiple of 8 up to 256 (e.g. 64, 96, 128, 192, 208, 256) or of 64 up to 512 (e.g. 320) (mma of tile<bf16>[64, 64] and tile<bf16>[64, 576])}}
    %y = tile.mma %ta, %tb, %x : tensor<64x64xbf16>, tensor<64x576xbf16>, tensor<64x576xf32>
    scf.yield %y : tensor<64x576xf32>
  }
  return
}

// -----

func.func @bn384(%ap: !llvm.ptr<1>, %n: i64, %s: i64) attributes {tile.kernel} {
  %a = tile.make_view %ap[%n, %n] strides[%s, %s] {tile.param = 0 : i32} : !llvm.ptr<1> -> !tile.view<bf16, 2>
  %zero = arith.constant dense<0.0> : tensor<128x384xf32>
  %c0 = arith.constant 0 : i64
  %c1 = arith.constant 1 : i64
  %acc = scf.for %k = %c0 to %n step %c1 iter_args(%x = %zero) -> (tensor<128x384xf32>) : i64 {
    %ta = tile.load %a[%c0, %k] : !tile.view<bf16, 2>, i64, i64 -> tensor<128x64xbf16>
    %tb = tile.load %a[%k, %c0] : !tile.view<bf16, 2>, i64, i64 -> tensor<64x384xbf16>
    // expected-error @+1 {{kernel 'bn384': the 128x384 f32 accumulator needs 192 registers per thread in each of the 2 consumer warpgroups, but at most 160 leave room for the rest (255 per thread); use a smaller BM or BN}}
    %y = tile.mma %ta, %tb, %x : tensor<128x64xbf16>, tensor<64x384xbf16>, tensor<128x384xf32>
    scf.yield %y : tensor<128x384xf32>
  }
  return
}

// -----

func.func @bn320nt(%ap: !llvm.ptr<1>, %n: i64, %s: i64) attributes {tile.kernel} {
  %a = tile.make_view %ap[%n, %n] strides[%s, %s] {tile.param = 0 : i32} : !llvm.ptr<1> -> !tile.view<bf16, 2>
  %zero = arith.constant dense<0.0> : tensor<128x320xf32>
  %c0 = arith.constant 0 : i64
  %c1 = arith.constant 1 : i64
  %acc = scf.for %k = %c0 to %n step %c1 iter_args(%x = %zero) -> (tensor<128x320xf32>) : i64 {
    %ta = tile.load %a[%c0, %k] : !tile.view<bf16, 2>, i64, i64 -> tensor<128x64xbf16>
    %tw = tile.load %a[%c0, %k] : !tile.view<bf16, 2>, i64, i64 -> tensor<320x64xbf16>
    %tb = tile.permute %tw {permutation = array<i64: 1, 0>} : tensor<320x64xbf16> -> tensor<64x320xbf16>
    // expected-error @+1 {{kernel 'bn320nt': with b transposed (K-major) the number of columns of b (BN) can be at most 256 (a TMA box has at most 256 rows); a wider BN (e.g. 320) needs b as loaded (mma of tile<bf16>[128, 64] and tile<bf16>[64, 320])}}
    %y = tile.mma %ta, %tb, %x : tensor<128x64xbf16>, tensor<64x320xbf16>, tensor<128x320xf32>
    scf.yield %y : tensor<128x320xf32>
  }
  return
}

// -----

// Three consumer warpgroups (BM = 192) have 152 registers each: at most 96
// accumulators (192 x 192).
func.func @bm192(%ap: !llvm.ptr<1>, %n: i64, %s: i64) attributes {tile.kernel} {
  %a = tile.make_view %ap[%n, %n] strides[%s, %s] {tile.param = 0 : i32} : !llvm.ptr<1> -> !tile.view<bf16, 2>
  %zero = arith.constant dense<0.0> : tensor<192x256xf32>
  %c0 = arith.constant 0 : i64
  %c1 = arith.constant 1 : i64
  %acc = scf.for %k = %c0 to %n step %c1 iter_args(%x = %zero) -> (tensor<192x256xf32>) : i64 {
    %ta = tile.load %a[%c0, %k] : !tile.view<bf16, 2>, i64, i64 -> tensor<192x64xbf16>
    %tb = tile.load %a[%k, %c0] : !tile.view<bf16, 2>, i64, i64 -> tensor<64x256xbf16>
    // expected-error @+1 {{kernel 'bm192': the 192x256 f32 accumulator needs 128 registers per thread in each of the 3 consumer warpgroups, but at most 96 leave room for the rest (255 per thread); use a smaller BM or BN}}
    %y = tile.mma %ta, %tb, %x : tensor<192x64xbf16>, tensor<64x256xbf16>, tensor<192x256xf32>
    scf.yield %y : tensor<192x256xf32>
  }
  return
}
