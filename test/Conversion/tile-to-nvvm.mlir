// RUN: tile-opt %s -split-input-file -tile-layout -tile-plan-shared -convert-tile-to-nvvm | FileCheck %s
// Tiles become the vector of elements one thread owns; loads and stores get a
// vectorized fast path and a guarded per-element path (predicated PTX
// accesses, no branch per element).

// CHECK-LABEL: llvm.func @saxpy(
// CHECK-SAME:    nvvm.kernel, nvvm.maxntid = array<i32: 32, 1, 1>
// CHECK:         %[[BID:.*]] = nvvm.read.ptx.sreg.ctaid.x : i32
// CHECK:         nvvm.read.ptx.sreg.tid.x : i32
// The fast path needs the whole tile in bounds, unit stride, 16-byte alignment.
// CHECK:         arith.cmpi sle
// CHECK:         arith.cmpi eq, %{{.*}}, %{{.*}} : i64
// CHECK:         llvm.ptrtoint
// CHECK:         %[[X:.*]] = scf.if %{{.*}} -> (vector<8xf32>) {
// The slots' vectors are concatenated by shuffles (not inserted one by one).
// CHECK:           %[[L0:.*]] = llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// CHECK:           %[[L1:.*]] = llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// CHECK:           vector.shuffle %[[L0]], %[[L1]] [0, 1, 2, 3, 4, 5, 6, 7] : vector<4xf32>, vector<4xf32>
// CHECK:         } else {
// CHECK:           arith.cmpi ult
// CHECK:           llvm.inline_asm has_side_effects {{.*}}"mov.b32 $0, $3;\0A@$2 ld.global.b32 $0, [$1];", "=&r,l,b,r"
// CHECK:           vector.from_elements %{{.*}} : vector<8xf32>
// CHECK:         %[[A:.*]] = vector.broadcast %arg0 : f32 to vector<8xf32>
// CHECK:         %[[M:.*]] = arith.mulf %[[A]], %[[X]] : vector<8xf32>
// CHECK:         %[[R:.*]] = arith.addf %[[M]], %{{.*}} : vector<8xf32>
// CHECK:         scf.if
// CHECK:           vector.extract_strided_slice %[[R]] {offsets = [0], sizes = [4], strides = [1]}
// CHECK:           llvm.store %{{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<1>
// CHECK:         } else {
// CHECK:           vector.extract %[[R]][0] : f32 from vector<8xf32>
// CHECK:           llvm.inline_asm has_side_effects {{.*}}"@$2 st.global.b32 [$0], $1;", "l,r,b"
// CHECK:         llvm.return
// CHECK-NOT:     tile.
func.func @saxpy(%a: f32, %xp: !llvm.ptr<1>, %xn: i64, %xs: i64, %yp: !llvm.ptr<1>, %yn: i64, %ys: i64)
    attributes {tile.kernel, tile.encoding = #tile.blocked<vec = 4, warps = 1>} {
    %x = tile.make_view %xp[%xn] strides[%xs] : !llvm.ptr<1> -> !tile.view<f32, 1>
    %y = tile.make_view %yp[%yn] strides[%ys] : !llvm.ptr<1> -> !tile.view<f32, 1>
    %i = tile.block_id 0 : i32
    %tx = tile.load %x[%i] : !tile.view<f32, 1>, i32 -> tensor<256xf32>
    %ty = tile.load %y[%i] : !tile.view<f32, 1>, i32 -> tensor<256xf32>
    %as = tile.splat %a : f32 -> tensor<256xf32>
    %m = arith.mulf %as, %tx : tensor<256xf32>
    %r = arith.addf %m, %ty : tensor<256xf32>
    tile.store %r, %y[%i] : tensor<256xf32>, !tile.view<f32, 1>, i32
    return
}

// -----

// 10x6 = 60 elements over 32 threads x 2: the last slot of some threads is
// tile padding, so even the fast path checks the flat index; the padding
// value of the load fills it.
// CHECK-LABEL: llvm.func @padded_2d(
// CHECK:         arith.constant dense<-1.000000e+00> : vector<2xf32>
// CHECK:         scf.if %{{.*}} -> (vector<2xf32>) {
// CHECK:           arith.cmpi ult, %{{.*}}, %c60_i64
// CHECK:           scf.if %{{.*}} -> (vector<2xf32>) {
// CHECK:             llvm.load %{{.*}} {alignment = 8 : i64} : !llvm.ptr<1> -> vector<2xf32>
// CHECK:         math.exp2
// CHECK-NOT:     math.exp {{.*}}
// CHECK-NOT:     tile.
func.func @padded_2d(%p: !llvm.ptr<1>, %n: i64, %m: i64, %s0: i64, %s1: i64)
    attributes {tile.kernel, tile.encoding = #tile.blocked<vec = 2, warps = 1>} {
  %v = tile.make_view %p[%n, %m] strides[%s0, %s1] : !llvm.ptr<1> -> !tile.view<f32, 2>
  %i = tile.block_id 0 : i32
  %j = tile.block_id 1 : i32
  %t = tile.load %v[%i, %j] {padding = -1.0 : f32} : !tile.view<f32, 2>, i32, i32 -> tensor<10x6xf32>
  %e = math.exp %t : tensor<10x6xf32>
  tile.store %e, %v[%i, %j] : tensor<10x6xf32>, !tile.view<f32, 2>, i32, i32
  return
}


// -----

// A gather scales the view's strides to bytes once, then each element's
// address is a multiply-add per index and a byte GEP, read by one
// predicated load (no branch).
// CHECK-LABEL: llvm.func @gather2d(
// CHECK-DAG:     %[[C4A:.*]] = arith.constant 4 : i64
// CHECK-DAG:     %[[B0:.*]] = arith.muli %arg3, %[[C4A]] : i64
// CHECK-DAG:     %[[B1:.*]] = arith.muli %arg4, %{{.*}} : i64
// CHECK:         %[[T0:.*]] = arith.muli %{{.*}}, %[[B0]] : i64
// CHECK:         %[[T1:.*]] = arith.muli %{{.*}}, %[[B1]] : i64
// CHECK:         %[[OFF:.*]] = arith.addi %[[T0]], %[[T1]] : i64
// CHECK:         %[[P:.*]] = llvm.getelementptr %arg0[%[[OFF]]] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, i8
// CHECK-NOT:     scf.if
// CHECK:         %[[A:.*]] = llvm.ptrtoint %[[P]] : !llvm.ptr<1> to i64
// CHECK:         llvm.inline_asm has_side_effects {{.*}}"mov.b32 $0, $3;\0A@$2 ld.global.b32 $0, [$1];", "=&r,l,b,r" %[[A]]
func.func @gather2d(%xp: !llvm.ptr<1>, %n0: i64, %n1: i64, %s0: i64, %s1: i64, %i: i64) attributes {tile.kernel, tile.encoding = #tile.blocked<vec = 1, warps = 1>} {
  %x = tile.make_view %xp[%n0, %n1] strides[%s0, %s1] : !llvm.ptr<1> -> !tile.view<f32, 2>
  %r = tile.splat %i : i64 -> tensor<32xi64>
  %v = tile.gather %x[%r, %r] : !tile.view<f32, 2>, tensor<32xi64>, tensor<32xi64> -> tensor<32xf32>
  return
}
