// RUN: tile-opt %s -split-input-file -verify-diagnostics
// Every verifier of the layout encodings.

// expected-error @+1 {{#tile.blocked: vec must be a power of two up to 16, got 3}}
func.func @f() attributes {tile.e = #tile.blocked<vec = 3, warps = 4>} { return }

// -----

// expected-error @+1 {{#tile.blocked: warps must be 1 to 32, got 64}}
func.func @f() attributes {tile.e = #tile.blocked<vec = 4, warps = 64>} { return }

// -----

// expected-error @+1 {{#tile.blocked<vec = 4>: the innermost size 6 of [8, 6] is not a multiple of the vector width}}
func.func @f(%a: tensor<8x6xf32, #tile.blocked<vec = 4, warps = 4>>) { return }

// -----

// expected-error @+1 {{#tile.mma<kind = wgmma>: consumers must be 1 to 3 warpgroups, got 4}}
func.func @f() attributes {tile.e = #tile.mma<kind = wgmma, consumers = 4>} { return }

// -----

// expected-error @+1 {{cannot hold a [128, 100] tile: BN must be a multiple of 8 and BM of 64 per consumer}}
func.func @f(%a: tensor<128x100xf32, #tile.mma<kind = wgmma, consumers = 2>>) { return }

// -----

// expected-error @+1 {{#tile.mma<kind = mma_sync>: only a wgmma accumulator can be swapped}}
func.func @f() attributes {tile.e = #tile.mma<kind = mma_sync, consumers = 1, swapped = true>} { return }

// -----

// expected-error @+1 {{cannot hold a [12, 128] tile: swapped, BM must be a multiple of 8 up to 256 and BN of 64 per consumer}}
func.func @f(%a: tensor<12x128xf32, #tile.mma<kind = wgmma, consumers = 1, swapped = true>>) { return }

// -----

// expected-error @+1 {{cannot hold a [16, 64] tile: swapped, BM must be a multiple of 8 up to 256 and BN of 64 per consumer}}
func.func @f(%a: tensor<16x64xf32, #tile.mma<kind = wgmma, consumers = 2, swapped = true>>) { return }

// -----

// expected-error @+1 {{#tile.slice: the parent must be a wgmma or mma_sync #tile.mma encoding, not swapped, or a #tile.blocked one (other parents are not supported yet), got #tile.mma<kind = wgmma, consumers = 1, swapped = true>}}
func.func @f() attributes {tile.e = #tile.slice<dim = 1, parent = #tile.mma<kind = wgmma, consumers = 1, swapped = true>>} { return }

// -----

// expected-error @+1 {{cannot hold a [2, 128, 128] tile: an accumulator is [BM, BN] or [1, ..., 1, BM, BN]}}
func.func @f(%a: tensor<2x128x128xf32, #tile.mma<kind = wgmma, consumers = 1>>) { return }

// -----

// expected-error @+1 {{cannot hold a [128, 96] tile: BN must be a multiple of 64 and BM of 32 per consumer}}
func.func @f(%a: tensor<128x96xf32, #tile.mma<kind = fma, consumers = 2>>) { return }

// -----

// expected-error @+1 {{#tile.slice: the parent must be a wgmma or mma_sync #tile.mma encoding, not swapped, or a #tile.blocked one (other parents are not supported yet), got #tile.shared}}
func.func @f() attributes {tile.e = #tile.slice<dim = 0, parent = #tile.shared<swizzle = 0, order = [0]>>} { return }

// -----

// expected-error @+1 {{#tile.slice: dim is 1 (a reduction over the accumulator's columns, leaving its rows) or 0 (over its rows, leaving its columns), got dim = 2}}
func.func @f() attributes {tile.e = #tile.slice<dim = 2, parent = #tile.mma<kind = wgmma, consumers = 1>>} { return }

// -----

// expected-error @+1 {{#tile.slice: dim = 0 of an alternating accumulator (each consumer holding its own tile) is not supported, got #tile.mma<kind = wgmma, consumers = 2, alternate = true>}}
func.func @f() attributes {tile.e = #tile.slice<dim = 0, parent = #tile.mma<kind = wgmma, consumers = 2, alternate = true>>} { return }

// -----

// expected-error @+1 {{holds [BN] or [1, BN] tiles with BN a multiple of 8, not [256, 1]}}
func.func @f(%a: tensor<256x1xf32, #tile.slice<dim = 0, parent = #tile.mma<kind = wgmma, consumers = 2>>>) { return }

// -----

// expected-error @+1 {{holds [BN] or [1, BN] tiles with BN a multiple of 8, not [100]}}
func.func @f(%a: tensor<100xf32, #tile.slice<dim = 0, parent = #tile.mma<kind = wgmma, consumers = 2>>>) { return }

// -----

// expected-error @+1 {{#tile.slice: the parent must be a wgmma or mma_sync #tile.mma encoding, not swapped, or a #tile.blocked one (other parents are not supported yet), got #tile.mma<kind = fma, consumers = 1>}}
func.func @f() attributes {tile.e = #tile.slice<dim = 1, parent = #tile.mma<kind = fma, consumers = 1>>} { return }

// -----

// expected-error @+1 {{holds [BM], [BM, 1] or [1, BM] tiles with BM a multiple of 64 per consumer, not [128, 2]}}
func.func @f(%a: tensor<128x2xf32, #tile.slice<dim = 1, parent = #tile.mma<kind = wgmma, consumers = 2>>>) { return }

// -----

// expected-error @+1 {{#tile.dot_operand: opIdx is 0 (A) or 1 (B), got 2}}
func.func @f() attributes {tile.e = #tile.dot_operand<opIdx = 2, parent = #tile.mma<kind = wgmma, consumers = 1>, kWidth = 2>} { return }

// -----

// expected-error @+1 {{#tile.dot_operand: the parent must be a #tile.mma encoding, got #tile.blocked}}
func.func @f() attributes {tile.e = #tile.dot_operand<opIdx = 0, parent = #tile.blocked<vec = 2, warps = 4>, kWidth = 2>} { return }

// -----

// expected-error @+1 {{#tile.dot_operand: kWidth must be a power of two up to 16, got 3}}
func.func @f() attributes {tile.e = #tile.dot_operand<opIdx = 1, parent = #tile.mma<kind = wgmma, consumers = 1>, kWidth = 3>} { return }

// -----

// expected-error @+1 {{#tile.shared: swizzle is 0, 32, 64 or 128 bytes, got 16}}
func.func @f() attributes {tile.e = #tile.shared<swizzle = 16, order = [1, 0]>} { return }

// -----

// expected-error @+1 {{#tile.shared: order must be a permutation of 0..1}}
func.func @f() attributes {tile.e = #tile.shared<swizzle = 128, order = [1, 1]>} { return }

// -----

// expected-error @+2 {{expected integer value}}
// expected-error @+1 {{failed to parse Tile_SharedEncodingAttr parameter 'order'}}
func.func @f() attributes {tile.e = #tile.shared<swizzle = 128, order = []>} { return }

// -----

// expected-error @+1 {{#tile.mma<kind = wgmma>: alternate needs a wgmma accumulator, not swapped, and 2 or 3 consumers to alternate between}}
func.func @f() attributes {tile.e = #tile.mma<kind = wgmma, consumers = 1, alternate = true>} { return }

// -----

// expected-error @+1 {{#tile.mma<kind = mma_sync>: alternate needs a wgmma accumulator, not swapped, and 2 or 3 consumers to alternate between}}
func.func @f() attributes {tile.e = #tile.mma<kind = mma_sync, consumers = 2, alternate = true>} { return }

// -----

// Alternating warpgroups each hold the whole tile: 64 rows per warpgroup
// are not 64 rows per consumer of two.
// expected-error @+1 {{cannot hold a [96, 128] tile: BN must be a multiple of 8 and BM of 64 per consumer}}
func.func @f(%a: tensor<96x128xf32, #tile.mma<kind = wgmma, consumers = 2, alternate = true>>) { return }

// -----

// expected-error @+1 {{#tile.slice of #tile.blocked<vec = 4, warps = 2>: only dim = 1 (a reduction over the rows' elements) is supported, got dim = 0}}
func.func @f() attributes {tile.e = #tile.slice<dim = 0, parent = #tile.blocked<vec = 4, warps = 2>, size = 64>} { return }

// -----

// expected-error @+1 {{#tile.slice of #tile.blocked<vec = 4, warps = 2>: size (the parent's row length) must be a power of two times vec, got 0}}
func.func @f() attributes {tile.e = #tile.slice<dim = 1, parent = #tile.blocked<vec = 4, warps = 2>>} { return }

// -----

// expected-error @+1 {{size (the parent's row length) must be a power of two times vec, got 1000}}
func.func @f() attributes {tile.e = #tile.slice<dim = 1, parent = #tile.blocked<vec = 4, warps = 2>, size = 1000>} { return }

// -----

// A row of 64 vectors in a block of 224 threads (7 warps) would straddle warps.
// expected-error @+1 {{#tile.slice of #tile.blocked<vec = 1, warps = 7>: a row of 64 elements lies in 64 threads, which neither divides nor is a multiple of the block's 224}}
func.func @f() attributes {tile.e = #tile.slice<dim = 1, parent = #tile.blocked<vec = 1, warps = 7>, size = 64>} { return }

// -----

// expected-error @+1 {{#tile.slice: size is for a blocked parent; an accumulator's slice has none, got size = 64}}
func.func @f() attributes {tile.e = #tile.slice<dim = 1, parent = #tile.mma<kind = wgmma, consumers = 2>, size = 64>} { return }

// -----

// expected-error @+1 {{#tile.slice of #tile.blocked<vec = 4, warps = 2> holds [R] or [R, 1] tiles, not [1, 4]}}
func.func @f(%a: tensor<1x4xf32, #tile.slice<dim = 1, parent = #tile.blocked<vec = 4, warps = 2>, size = 64>>) { return }

// -----

// Row values broadcast back over the tile they were reduced from only.
func.func @f(%r: tensor<128x1xf32, #tile.slice<dim = 1, parent = #tile.mma<kind = wgmma, consumers = 2>>>) {
  // expected-error @+1 {{a tile of row (or column) values broadcasts to its slice's parent encoding only}}
  %b = tile.broadcast %r : tensor<128x1xf32, #tile.slice<dim = 1, parent = #tile.mma<kind = wgmma, consumers = 2>>> -> tensor<128x64xf32, #tile.blocked<vec = 4, warps = 4>>
  return
}

// -----

func.func @f(%r: tensor<16x1xf32, #tile.slice<dim = 1, parent = #tile.blocked<vec = 4, warps = 2>, size = 64>>) {
  // expected-error @+1 {{a column of row values broadcasts over rows of its slice's length 64 only}}
  %b = tile.broadcast %r : tensor<16x1xf32, #tile.slice<dim = 1, parent = #tile.blocked<vec = 4, warps = 2>, size = 64>> -> tensor<16x32xf32, #tile.blocked<vec = 4, warps = 2>>
  return
}
