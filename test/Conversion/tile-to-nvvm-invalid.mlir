// RUN: tile-opt %s -split-input-file -tile-plan-shared -convert-tile-to-nvvm -verify-diagnostics

// expected-error @+1 {{kernel has no thread layout; run tile-layout first}}
func.func @no_layout(%p: !llvm.ptr<1>) attributes {tile.kernel} {
  return
}

// -----

// The kernel has a layout but its tiles do not carry it.
func.func @untyped(%a: f32) attributes {tile.kernel, tile.encoding = #tile.blocked<vec = 1, warps = 1>} {
  // expected-error @+1 {{tile 'tensor<32xf32>' has no layout encoding; run tile-layout first}}
  %t = tile.splat %a : f32 -> tensor<32xf32>
  return
}

// -----

// Elementwise work computes each element where it is held: operands and
// results in one layout.
func.func @mixed(%a: tensor<32xf32, #tile.blocked<vec = 2, warps = 1>>, %b: tensor<32xf32, #tile.blocked<vec = 1, warps = 1>>) attributes {tile.kernel, tile.encoding = #tile.blocked<vec = 1, warps = 1>} {
  // expected-error @+1 {{operands and results in different layouts #tile.blocked<vec = 2, warps = 1> and #tile.blocked<vec = 1, warps = 1> (insert tile.convert_layout)}}
  %t = "tile.reshape"(%a) : (tensor<32xf32, #tile.blocked<vec = 2, warps = 1>>) -> tensor<32xf32, #tile.blocked<vec = 1, warps = 1>>
  return
}

// -----

// Every tile is spread over the kernel's threads.
func.func @threads(%a: f32) attributes {tile.kernel, tile.encoding = #tile.blocked<vec = 1, warps = 1>} {
  // expected-error @+1 {{tile 'tensor<64xf32, #tile.blocked<vec = 1, warps = 2>>' is spread over 64 threads, the kernel over 32}}
  %t = tile.splat %a : f32 -> tensor<64xf32, #tile.blocked<vec = 1, warps = 2>>
  return
}
