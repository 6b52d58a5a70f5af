// RUN: tile-opt %s -split-input-file -convert-tile-to-nvvm -verify-diagnostics

// expected-error @+1 {{kernel has no thread layout; run tile-layout first}}
func.func @no_layout(%p: !llvm.ptr<1>) attributes {tile.kernel} {
  return
}
