// RUN: tile-opt %s -tile-layout -tile-plan-shared -convert-tile-to-nvvm | FileCheck %s
// RUN: tile-opt %s -tile-layout -tile-plan-shared -convert-tile-to-nvvm | grep -cE "arith.(divui|remui)" | FileCheck %s --check-prefix=DIVS
// A load and a store of a 128 x 256 tile in the wgmma accumulator layout of
// two consumer warpgroups: a thread holds 64 slots of 2 elements, each at
// the thread's first slot plus constants (TileAccess::planSlotCoordinates).
// The thread's coordinates are divided out of its index once per access,
// and each slot adds constants; rebuilding each slot's flat index and
// dividing it back took 4 divisions per slot and path (over 1,000 here).
// (1b62f81's compiler: 2,178; this one: 18.)
// DIVS: {{^(1[0-9]|[0-9])$}}
// CHECK-LABEL: llvm.func @copy(
// CHECK:         llvm.load
// CHECK:         llvm.store
func.func @copy(%xp: !llvm.ptr<1>, %n: i64, %s: i64, %cp: !llvm.ptr<1>, %i: i32)
    attributes {tile.kernel, tile.encoding = #tile.mma<kind = wgmma, consumers = 2>} {
  %x = tile.make_view %xp[%n, %n] strides[%s, %s] : !llvm.ptr<1> -> !tile.view<f32, 2>
  %c = tile.make_view %cp[%n, %n] strides[%s, %s] : !llvm.ptr<1> -> !tile.view<f32, 2>
  %y = tile.load %x[%i, %i] : !tile.view<f32, 2>, i32, i32 -> tensor<128x256xf32>
  tile.store %y, %c[%i, %i] : tensor<128x256xf32>, !tile.view<f32, 2>, i32, i32
  return
}
