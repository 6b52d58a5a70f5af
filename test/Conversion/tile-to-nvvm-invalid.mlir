// RUN: tile-opt %s -split-input-file -convert-tile-to-nvvm -verify-diagnostics

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

// One distributed encoding per kernel (until tile.convert_layout).
func.func @mixed(%a: f32) attributes {tile.kernel, tile.encoding = #tile.blocked<vec = 1, warps = 1>} {
  // expected-error @+1 {{tile 'tensor<32xf32, #tile.blocked<vec = 2, warps = 1>>' is not in the kernel's layout #tile.blocked<vec = 1, warps = 1> (one layout per kernel)}}
  %t = tile.splat %a : f32 -> tensor<32xf32, #tile.blocked<vec = 2, warps = 1>>
  return
}
