// RUN: tile-opt %s -tile-layout -tile-plan-shared -convert-tile-to-nvvm | FileCheck %s
// A view of i1 holds one byte per element (torch.bool): tiles are loaded as
// i8 vectors and compared with 0, and stored widened to i8 (on the guarded
// path by predicated byte accesses).
// CHECK-LABEL: llvm.func @bools(
// CHECK:         llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr<1> -> vector<4xi8>
// CHECK:         arith.cmpi ne, %{{.*}}, %{{.*}} : vector<4xi8>
// CHECK:         llvm.inline_asm has_side_effects {{.*}}"mov.b16 $0, $3;\0A@$2 ld.global.b8 $0, [$1];", "=&h,l,b,h"
// CHECK:         arith.extui %{{.*}} : vector<4xi1> to vector<4xi8>
// CHECK:         llvm.store %{{.*}}, %{{.*}} {alignment = 4 : i64} : vector<4xi8>, !llvm.ptr<1>
// CHECK:         arith.extui %{{.*}} : i1 to i8
// CHECK:         llvm.inline_asm has_side_effects {{.*}}"@$2 st.global.b8 [$0], $1;", "l,h,b"
func.func @bools(%mp: !llvm.ptr<1>, %n: i64, %s: i64, %i: i32)
    attributes {tile.kernel, tile.encoding = #tile.blocked<vec = 4, warps = 1>} {
  %m = tile.make_view %mp[%n] strides[%s] : !llvm.ptr<1> -> !tile.view<i1, 1>
  %b = tile.load %m[%i] : !tile.view<i1, 1>, i32 -> tensor<256xi1>
  %t = arith.xori %b, %b : tensor<256xi1>
  tile.store %t, %m[%i] : tensor<256xi1>, !tile.view<i1, 1>, i32
  return
}
