// RUN: tile-opt %s -split-input-file -verify-diagnostics

func.func @view_rank(%p: !llvm.ptr<1>, %n: i64) {
  // expected-error @+1 {{a view of rank 2 needs 2 sizes and 2 strides, got 1 and 1}}
  %v = tile.make_view %p[%n] strides[%n] : !llvm.ptr<1> -> !tile.view<f32, 2>
  return
}

// -----

func.func @part_offsets(%p: !llvm.ptr<1>, %n: i64) {
  // expected-error @+1 {{a part of a view of rank 2 needs 2 offsets, got 1}}
  %v = tile.make_view %p[%n, %n] strides[%n, %n] offsets[%n] : !llvm.ptr<1> -> !tile.view<f32, 2>
  return
}

// -----

func.func @load_scalar_type(%p: !llvm.ptr<1>, %n: i64) {
  %v = tile.make_view %p[%n] strides[%n] : !llvm.ptr<1> -> !tile.view<f32, 1>
  // expected-error @+1 {{result type 'i32' does not match the view's element type 'f32'}}
  %x = tile.load_scalar %v[%n] : !tile.view<f32, 1>, i64 -> i32
  return
}

// -----

func.func @load_scalar_rank(%p: !llvm.ptr<1>, %n: i64) {
  %v = tile.make_view %p[%n, %n] strides[%n, %n] : !llvm.ptr<1> -> !tile.view<f32, 2>
  // expected-error @+1 {{a view of rank 2 needs 2 indices, got 1}}
  %x = tile.load_scalar %v[%n] : !tile.view<f32, 2>, i64 -> f32
  return
}

// -----

// expected-error @+1 {{view rank must be between 1 and 4, got 5}}
func.func @view_type(%v: !tile.view<f32, 5>) {
  return
}

// -----

func.func @grid_dim() {
  // expected-error @+1 {{grid dimension must be 0, 1 or 2, got 3}}
  %b = tile.block_id 3 : i32
  return
}

// -----

func.func @view_dim(%v: !tile.view<f32, 1>) {
  // expected-error @+1 {{dimension 1 is out of range for a view of rank 1}}
  %d = tile.view_dim %v[1] : !tile.view<f32, 1>
  return
}

// -----

func.func @load_indices(%v: !tile.view<f32, 2>, %i: i32) {
  // expected-error @+1 {{needs 2 tile indices for a view of rank 2, got 1}}
  %t = tile.load %v[%i] : !tile.view<f32, 2>, i32 -> tensor<16x16xf32>
  return
}

// -----

func.func @load_rank(%v: !tile.view<f32, 1>, %i: i32) {
  // expected-error @+1 {{tile rank 2 does not match the view rank 1}}
  %t = tile.load %v[%i] : !tile.view<f32, 1>, i32 -> tensor<16x16xf32>
  return
}

// -----

func.func @load_elem(%v: !tile.view<f32, 1>, %i: i32) {
  // expected-error @+1 {{tile element type 'f16' does not match the view element type 'f32'}}
  %t = tile.load %v[%i] : !tile.view<f32, 1>, i32 -> tensor<16xf16>
  return
}

// -----

func.func @load_padding(%v: !tile.view<f32, 1>, %i: i32) {
  // expected-error @+1 {{padding of type 'i32' does not match the tile element type 'f32'}}
  %t = tile.load %v[%i] {padding = 0 : i32} : !tile.view<f32, 1>, i32 -> tensor<16xf32>
  return
}

// -----

func.func @store_elem(%v: !tile.view<f32, 1>, %i: i32, %t: tensor<16xi32>) {
  // expected-error @+1 {{tile element type 'i32' does not match the view element type 'f32'}}
  tile.store %t, %v[%i] : tensor<16xi32>, !tile.view<f32, 1>, i32
  return
}

// -----

func.func @splat(%a: f16) {
  // expected-error @+1 {{splat of 'f16' cannot produce a tile of 'f32'}}
  %t = tile.splat %a : f16 -> tensor<16xf32>
  return
}

// -----

func.func @reduce_kind(%t: tensor<16xf32>) {
  // expected-error @+1 {{kind must be sum, max, min, prod, argmax, argmin or fn, got 'mean'}}
  %r = tile.reduce "mean" %t : tensor<16xf32> -> f32
  return
}

// -----

func.func @reduce_type(%t: tensor<16xf32>) {
  // expected-error @+1 {{result type 'f16' does not match the tile element type 'f32'}}
  %r = tile.reduce "sum" %t : tensor<16xf32> -> f16
  return
}

// -----

func.func @range_shape() {
  // expected-error @+1 {{dim 2 is not a dimension of 'tensor<4x4xi32>'}}
  %r = tile.range {dim = 2 : i64} : tensor<4x4xi32>
  return
}

// -----

func.func @argmax_type(%t: tensor<16xf32>) {
  // expected-error @+1 {{argmax gives the i32 flat index, not 'f32'}}
  %r = tile.reduce "argmax" %t : tensor<16xf32> -> f32
  return
}

// -----

func.func @reduce_axis(%t: tensor<4x16xf32>) {
  // expected-error @+1 {{result must be the tile without dimension 1}}
  %r = tile.reduce "sum" %t {axis = 1 : i32} : tensor<4x16xf32> -> tensor<16xf32>
  return
}

// -----

func.func @reduce_axis_arg(%t: tensor<4x16xf32>) {
  // expected-error @+1 {{result must be the tile without dimension 0, of i32 indices}}
  %r = tile.reduce "argmax" %t {axis = 0 : i32} : tensor<4x16xf32> -> tensor<16xf32>
  return
}

// -----

func.func @reduce_fn_no_region(%t: tensor<16xf32>) {
  // expected-error @+1 {{a combiner region goes with kind "fn" only}}
  %r = tile.reduce "fn" %t : tensor<16xf32> -> f32
  return
}

// -----

func.func @reduce_fn_args(%t: tensor<16xf32>) {
  // expected-error @+1 {{the combiner takes two 'f32' arguments}}
  %r = tile.reduce "fn" %t : tensor<16xf32> -> f32 {
  ^bb0(%a: f32):
    tile.yield %a : f32
  }
  return
}

// -----

func.func @scan_fn_yield(%t: tensor<16xi32>) {
  // expected-error @+1 {{the combiner must yield a 'i32'}}
  %r = tile.scan %t : tensor<16xi32> {
  ^bb0(%a: i32, %b: i32):
    %c = arith.cmpi slt, %a, %b : i32
    tile.yield %c : i1
  }
  return
}

// -----

func.func @take_rank(%t: tensor<4x16xf32>, %i: tensor<8xi32>) {
  // expected-error @+1 {{takes from a 1-D tile}}
  %r = tile.take %t[%i] : tensor<4x16xf32>, tensor<8xi32> -> tensor<8xf32>
  return
}

// -----

func.func @take_shape(%t: tensor<16xf32>, %i: tensor<8xi32>) {
  // expected-error @+1 {{the result has the index's shape and the tile's element type}}
  %r = tile.take %t[%i] : tensor<16xf32>, tensor<8xi32> -> tensor<16xf32>
  return
}

// -----

func.func @convert_layout_shape(%a: tensor<64xf32>) {
  // expected-error @+1 {{changes only the encoding}}
  %b = tile.convert_layout %a : tensor<64xf32> -> tensor<32xf32>
  return
}

// -----

func.func @wgmma_wait_types(%a: tensor<64x64xf32>) {
  // expected-error @+1 {{is not its operand's}}
  %b = tile.wgmma_wait %a {pending = 0 : i64} : tensor<64x64xf32> -> tensor<64x32xf32>
  return
}

// -----

func.func @wgmma_wait_pending(%a: tensor<64x64xf32>) {
  // expected-error @+1 {{pending must be 0 or more}}
  %b = tile.wgmma_wait %a {pending = -1 : i64} : tensor<64x64xf32> -> tensor<64x64xf32>
  return
}

// -----

func.func @shared_copy_encoding(%a: tensor<64x64xbf16>) {
  // expected-error @+1 {{copies a 2-D tile to a 2-D tile in a #tile.shared encoding}}
  %b = tile.shared_copy %a {offset = 0 : i64} : tensor<64x64xbf16> -> tensor<64x64xbf16>
  return
}

// -----

func.func @shared_copy_transpose(%a: tensor<64x128xbf16>) {
  // expected-error @+1 {{is not the transpose of}}
  %b = tile.shared_copy %a {offset = 0 : i64} : tensor<64x128xbf16> -> tensor<64x128xbf16, #tile.shared<swizzle = 128, order = [0, 1]>>
  return
}

// -----

func.func @shared_copy_same(%a: tensor<64x128xbf16>) {
  // expected-error @+1 {{is not 'tensor<64x128xbf16>'}}
  %b = tile.shared_copy %a {offset = 0 : i64} : tensor<64x128xbf16> -> tensor<128x64xbf16, #tile.shared<swizzle = 128, order = [1, 0]>>
  return
}

// -----

func.func @shared_copy_offset(%a: tensor<64x64xbf16>) {
  // expected-error @+1 {{offset must be a non-negative multiple of 1024}}
  %b = tile.shared_copy %a {offset = 512 : i64} : tensor<64x64xbf16> -> tensor<64x64xbf16, #tile.shared<swizzle = 128, order = [1, 0]>>
  return
}

// -----

func.func @mma_pred_f32(%a: tensor<64x32xf32>, %b: tensor<32x64xf32>, %c: tensor<64x64xf32>, %on: i1) {
  // expected-error @+1 {{a predicated mma needs f16, bf16 or f8 operands (the tensor-core pipeline's)}}
  %d = tile.mma %a, %b, %c if %on : tensor<64x32xf32>, tensor<32x64xf32>, tensor<64x64xf32>
  return
}
