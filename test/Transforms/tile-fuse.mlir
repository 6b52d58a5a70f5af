// RUN: tile-opt %s -split-input-file -tile-fuse | FileCheck %s

// A broadcast of a loaded tile becomes one broadcast_load: the [128] tile is
// never materialized, each thread loads the elements it holds in [64, 128].
// CHECK-LABEL: func.func @bias
// CHECK-NOT:     tile.load
// CHECK:         %[[B:.*]] = tile.broadcast_load %{{.*}}[%{{.*}}] {src_shape = array<i64: 128>} : !tile.view<f32, 1>, i32 -> tensor<64x128xf32>
// CHECK-NOT:     tile.broadcast
// CHECK:         arith.addf %[[B]], %{{.*}} : tensor<64x128xf32>
func.func @bias(%v: !tile.view<f32, 1>, %o: !tile.view<f32, 2>, %i: i32) attributes {tile.kernel} {
  %b = tile.load %v[%i] : !tile.view<f32, 1>, i32 -> tensor<128xf32>
  %t = tile.broadcast %b : tensor<128xf32> -> tensor<64x128xf32>
  %z = arith.constant dense<1.0> : tensor<64x128xf32>
  %s = arith.addf %z, %t : tensor<64x128xf32>
  tile.store %s, %o[%i, %i] : tensor<64x128xf32>, !tile.view<f32, 2>, i32, i32
  return
}

// -----

// A load with other users stays; its broadcast still reads from memory.
// CHECK-LABEL: func.func @shared_load
// CHECK:         tile.load
// CHECK:         tile.broadcast_load
func.func @shared_load(%v: !tile.view<f32, 2>, %o: !tile.view<f32, 2>, %i: i32) attributes {tile.kernel} {
  %b = tile.load %v[%i, %i] : !tile.view<f32, 2>, i32, i32 -> tensor<1x128xf32>
  %t = tile.broadcast %b : tensor<1x128xf32> -> tensor<64x128xf32>
  tile.store %t, %o[%i, %i] : tensor<64x128xf32>, !tile.view<f32, 2>, i32, i32
  tile.store %b, %o[%i, %i] : tensor<1x128xf32>, !tile.view<f32, 2>, i32, i32
  return
}

// -----

// A broadcast of a computed tile is not a fusion candidate.
// CHECK-LABEL: func.func @computed
// CHECK:         tile.broadcast %{{.*}} : tensor<128xf32> -> tensor<4x128xf32>
func.func @computed(%v: !tile.view<f32, 1>, %o: !tile.view<f32, 2>, %i: i32) attributes {tile.kernel} {
  %b = tile.load %v[%i] : !tile.view<f32, 1>, i32 -> tensor<128xf32>
  %c = arith.addf %b, %b : tensor<128xf32>
  %t = tile.broadcast %c : tensor<128xf32> -> tensor<4x128xf32>
  tile.store %t, %o[%i, %i] : tensor<4x128xf32>, !tile.view<f32, 2>, i32, i32
  return
}

// -----

// Prologue: a per-row scale of A ([128, 1] broadcast along K) and a
// per-column scale of B ([128] broadcast along K) leave the loop; the loop
// multiplies the plain loads from a zero accumulator and the scales multiply
// the f32 result once.
// CHECK-LABEL: func.func @matmul_scaled
// CHECK-DAG:     %[[SA:.*]] = tile.broadcast_load %{{.*}} {src_shape = array<i64: 128, 1>} : !tile.view<bf16, 2>, i64, i64 -> tensor<128x128xbf16>
// CHECK-DAG:     %[[SAF:.*]] = arith.extf %[[SA]] : tensor<128x128xbf16> to tensor<128x128xf32>
// CHECK-DAG:     %[[SB:.*]] = tile.broadcast_load %{{.*}} {src_shape = array<i64: 128>} : !tile.view<bf16, 1>, i64 -> tensor<128x128xbf16>
// CHECK-DAG:     %[[SBF:.*]] = arith.extf %[[SB]] : tensor<128x128xbf16> to tensor<128x128xf32>
// CHECK:         %[[ACC:.*]] = scf.for
// CHECK-NOT:       arith.mulf
// CHECK:           %[[A:.*]] = tile.load %{{.*}} -> tensor<128x64xbf16>
// CHECK:           %[[B:.*]] = tile.load %{{.*}} -> tensor<64x128xbf16>
// CHECK:           tile.mma %[[A]], %[[B]], %{{.*}}
// CHECK:         %[[R1:.*]] = arith.mulf %[[ACC]], %[[SBF]]
// CHECK:         %[[R2:.*]] = arith.mulf %[[R1]], %[[SAF]]
// CHECK:         tile.store %[[R2]]
  func.func @matmul_scaled(%arg0: !llvm.ptr<1>, %arg1: i64, %arg2: i64, %arg3: i64, %arg4: i64, %arg5: !llvm.ptr<1>, %arg6: i64, %arg7: i64, %arg8: i64, %arg9: i64, %arg10: !llvm.ptr<1>, %arg11: i64, %arg12: i64, %arg13: i64, %arg14: i64, %arg15: !llvm.ptr<1>, %arg16: i64, %arg17: i64, %arg18: !llvm.ptr<1>, %arg19: i64, %arg20: i64, %arg21: i64, %arg22: i64) attributes {tile.kernel} {
    %0 = tile.make_view %arg0[%arg1, %arg2] strides[%arg3, %arg4] {tile.param = 0 : i32} : !llvm.ptr<1> -> !tile.view<bf16, 2>
    %1 = tile.make_view %arg5[%arg6, %arg7] strides[%arg8, %arg9] {tile.param = 1 : i32} : !llvm.ptr<1> -> !tile.view<bf16, 2>
    %2 = tile.make_view %arg10[%arg11, %arg12] strides[%arg13, %arg14] {tile.param = 2 : i32} : !llvm.ptr<1> -> !tile.view<bf16, 2>
    %3 = tile.make_view %arg15[%arg16] strides[%arg17] {tile.param = 3 : i32} : !llvm.ptr<1> -> !tile.view<bf16, 1>
    %4 = tile.make_view %arg18[%arg19, %arg20] strides[%arg21, %arg22] {tile.param = 4 : i32} : !llvm.ptr<1> -> !tile.view<f32, 2>
    %5 = tile.block_id 0 : i32
    %6 = tile.block_id 1 : i32
    %cst = arith.constant dense<0.000000e+00> : tensor<128x128xf32>
    %c0_i64 = arith.constant 0 : i64
    %7 = tile.view_dim %0[1] : !tile.view<bf16, 2>
    %c64_i64 = arith.constant 64 : i64
    %8 = arith.ceildivsi %7, %c64_i64 : i64
    %c1_i64 = arith.constant 1 : i64
    %9 = scf.for %arg23 = %c0_i64 to %8 step %c1_i64 iter_args(%arg24 = %cst) -> (tensor<128x128xf32>)  : i64 {
      %12 = arith.extsi %5 : i32 to i64
      %13 = tile.load %0[%12, %arg23] : !tile.view<bf16, 2>, i64, i64 -> tensor<128x64xbf16>
      %14 = arith.extsi %5 : i32 to i64
      %c0_i64_0 = arith.constant 0 : i64
      %15 = tile.load %2[%14, %c0_i64_0] : !tile.view<bf16, 2>, i64, i64 -> tensor<128x1xbf16>
      %16 = tile.broadcast %15 : tensor<128x1xbf16> -> tensor<128x64xbf16>
      %17 = arith.mulf %13, %16 : tensor<128x64xbf16>
      %18 = arith.extsi %6 : i32 to i64
      %19 = tile.load %1[%arg23, %18] : !tile.view<bf16, 2>, i64, i64 -> tensor<64x128xbf16>
      %20 = arith.extsi %6 : i32 to i64
      %21 = tile.load %3[%20] : !tile.view<bf16, 1>, i64 -> tensor<128xbf16>
      %22 = tile.broadcast %21 : tensor<128xbf16> -> tensor<64x128xbf16>
      %23 = arith.mulf %19, %22 : tensor<64x128xbf16>
      %24 = tile.mma %17, %23, %arg24 : tensor<128x64xbf16>, tensor<64x128xbf16>, tensor<128x128xf32>
      scf.yield %24 : tensor<128x128xf32>
    }
    %10 = arith.extsi %5 : i32 to i64
    %11 = arith.extsi %6 : i32 to i64
    tile.store %9, %4[%10, %11] : tensor<128x128xf32>, !tile.view<f32, 2>, i64, i64
    return
  }

// -----

// A cast of a loaded tile with several broadcast users (here one per branch
// of an if) sinks below each of them, so that every broadcast fuses with the
// load: LayerNorm's shift k = x[r, 0] is used that way.
// CHECK-LABEL: func.func @cast_two_broadcasts
// CHECK-NOT:     tile.load
// CHECK:         scf.if
// CHECK:           tile.broadcast_load {{.*}} -> tensor<1x256xbf16>
// CHECK:           arith.extf {{.*}} : tensor<1x256xbf16> to tensor<1x256xf32>
// CHECK:         else
// CHECK:           tile.broadcast_load {{.*}} -> tensor<1x256xbf16>
// CHECK-NOT:     tile.broadcast %
func.func @cast_two_broadcasts(%v: !tile.view<bf16, 2>, %o: !tile.view<f32, 2>, %i: i32, %c: i1) attributes {tile.kernel} {
  %k = tile.load %v[%i, %i] : !tile.view<bf16, 2>, i32, i32 -> tensor<1x1xbf16>
  %kf = arith.extf %k : tensor<1x1xbf16> to tensor<1x1xf32>
  scf.if %c {
    %t = tile.broadcast %kf : tensor<1x1xf32> -> tensor<1x256xf32>
    tile.store %t, %o[%i, %i] : tensor<1x256xf32>, !tile.view<f32, 2>, i32, i32
  } else {
    %t = tile.broadcast %kf : tensor<1x1xf32> -> tensor<1x256xf32>
    %u = arith.addf %t, %t : tensor<1x256xf32>
    tile.store %u, %o[%i, %i] : tensor<1x256xf32>, !tile.view<f32, 2>, i32, i32
  }
  return
}

// -----

// A store to memory between the load and its broadcast: the broadcast_load
// would read the new contents, so the load stays (the broadcast then goes
// through registers and shared memory).
// CHECK-LABEL: func.func @store_between
// CHECK:         tile.load
// CHECK:         tile.store
// CHECK:         tile.broadcast %
// CHECK-NOT:     tile.broadcast_load
func.func @store_between(%v: !tile.view<f32, 2>, %o: !tile.view<f32, 2>, %i: i32) attributes {tile.kernel} {
  %k = tile.load %v[%i, %i] : !tile.view<f32, 2>, i32, i32 -> tensor<1x1xf32>
  %z = arith.constant dense<0.0> : tensor<1x1xf32>
  tile.store %z, %v[%i, %i] : tensor<1x1xf32>, !tile.view<f32, 2>, i32, i32
  %t = tile.broadcast %k : tensor<1x1xf32> -> tensor<1x256xf32>
  tile.store %t, %o[%i, %i] : tensor<1x256xf32>, !tile.view<f32, 2>, i32, i32
  return
}

// -----

// A broadcast in a loop whose body stores after it: the next iteration's
// broadcast would see the store, so the load stays.
// CHECK-LABEL: func.func @store_in_loop
// CHECK:         tile.load
// CHECK:         scf.for
// CHECK:           tile.broadcast %
// CHECK-NOT:     tile.broadcast_load
func.func @store_in_loop(%v: !tile.view<f32, 2>, %i: i32, %n: index) attributes {tile.kernel} {
  %k = tile.load %v[%i, %i] : !tile.view<f32, 2>, i32, i32 -> tensor<1x1xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %j = %c0 to %n step %c1 {
    %t = tile.broadcast %k : tensor<1x1xf32> -> tensor<1x256xf32>
    tile.store %t, %v[%i, %i] : tensor<1x256xf32>, !tile.view<f32, 2>, i32, i32
  }
  return
}

// -----

// A broadcast of index arithmetic (the column index j * 128 + range(128) of
// a score tile, compared with a length) is computed at the broadcast's
// shape: a 2-D tile.range along dimension 1, so that each thread makes the
// indices of the elements it holds (no exchange through shared memory).
// CHECK-LABEL: func.func @index_mask
// CHECK-NOT:     tile.broadcast
// CHECK:         %[[R:.*]] = tile.range {dim = 1 : i64} : tensor<64x128xi32>
// CHECK:         %[[E:.*]] = arith.extsi %[[R]] : tensor<64x128xi32> to tensor<64x128xi64>
// CHECK:         %[[A:.*]] = arith.addi %{{.*}}, %[[E]] : tensor<64x128xi64>
// CHECK:         arith.cmpi slt, %[[A]], %{{.*}} : tensor<64x128xi64>
// CHECK-NOT:     tile.broadcast
func.func @index_mask(%j: i64, %n: i64, %s: tensor<64x128xf32>) -> tensor<64x128xf32> {
  %c128 = arith.constant 128 : i64
  %off = arith.muli %j, %c128 : i64
  %o = tile.splat %off : i64 -> tensor<128xi64>
  %r = tile.range : tensor<128xi32>
  %r64 = arith.extsi %r : tensor<128xi32> to tensor<128xi64>
  %cols = arith.addi %o, %r64 : tensor<128xi64>
  %row = tile.reshape %cols : tensor<128xi64> -> tensor<1x128xi64>
  %len = tile.splat %n : i64 -> tensor<1x128xi64>
  %ok = arith.cmpi slt, %row, %len : tensor<1x128xi64>
  %ok2 = tile.broadcast %ok : tensor<1x128xi1> -> tensor<64x128xi1>
  %neg = arith.constant dense<-3.0e38> : tensor<64x128xf32>
  %m = arith.select %ok2, %s, %neg : tensor<64x128xi1>, tensor<64x128xf32>
  return %m : tensor<64x128xf32>
}

// -----

// Rows broadcast along the columns: range along dimension 0.
// CHECK-LABEL: func.func @index_rows
// CHECK:         tile.range {dim = 0 : i64} : tensor<128x64xi32>
// CHECK-NOT:     tile.broadcast
func.func @index_rows() -> tensor<128x64xi32> {
  %r = tile.range : tensor<128xi32>
  %c = tile.reshape %r : tensor<128xi32> -> tensor<128x1xi32>
  %b = tile.broadcast %c : tensor<128x1xi32> -> tensor<128x64xi32>
  return %b : tensor<128x64xi32>
}

// -----

// An mma loop that starts from a loaded tile (C = A B + C) accumulates from
// zero, and the load of the start moves after the loop, where it is added.
// CHECK-LABEL: func.func @mma_from_loaded
// CHECK:         %[[Z:.*]] = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
// CHECK:         %[[R:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %[[Z]])
// CHECK:           tile.mma
// CHECK:         }
// CHECK:         %[[C:.*]] = tile.load %{{.*}}[%{{.*}}, %{{.*}}] : !tile.view<f32, 2>
// CHECK:         %[[S:.*]] = arith.addf %[[C]], %[[R]] : tensor<64x64xf32>
// CHECK:         tile.store %[[S]]
func.func @mma_from_loaded(%a: !tile.view<bf16, 2>, %b: !tile.view<bf16, 2>, %c: !tile.view<f32, 2>,
                           %m: i64, %n: i64, %kt: i64) {
  %c0 = arith.constant 0 : i64
  %c1 = arith.constant 1 : i64
  %init = tile.load %c[%m, %n] : !tile.view<f32, 2>, i64, i64 -> tensor<64x64xf32>
  %r = scf.for %k = %c0 to %kt step %c1 iter_args(%acc = %init) -> (tensor<64x64xf32>) : i64 {
    %x = tile.load %a[%m, %k] : !tile.view<bf16, 2>, i64, i64 -> tensor<64x64xbf16>
    %y = tile.load %b[%k, %n] : !tile.view<bf16, 2>, i64, i64 -> tensor<64x64xbf16>
    %p = tile.mma %x, %y, %acc : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32>
    scf.yield %p : tensor<64x64xf32>
  }
  tile.store %r, %c[%m, %n] : tensor<64x64xf32>, !tile.view<f32, 2>, i64, i64
  return
}

// -----

// A store inside the loop keeps the load where it is (it must read C before
// the loop writes), and then the loop keeps starting from it (a start added
// after the loop would be held in registers through it).
// CHECK-LABEL: func.func @mma_from_loaded_written
// CHECK:         %[[C:.*]] = tile.load %{{.*}} : !tile.view<f32, 2>
// CHECK:         scf.for {{.*}} iter_args(%{{.*}} = %[[C]])
// CHECK-NOT:     arith.addf
func.func @mma_from_loaded_written(%a: !tile.view<bf16, 2>, %b: !tile.view<bf16, 2>,
                                   %c: !tile.view<f32, 2>, %d: !tile.view<f32, 2>,
                                   %m: i64, %n: i64, %kt: i64) {
  %c0 = arith.constant 0 : i64
  %c1 = arith.constant 1 : i64
  %init = tile.load %c[%m, %n] : !tile.view<f32, 2>, i64, i64 -> tensor<64x64xf32>
  %r = scf.for %k = %c0 to %kt step %c1 iter_args(%acc = %init) -> (tensor<64x64xf32>) : i64 {
    %x = tile.load %a[%m, %k] : !tile.view<bf16, 2>, i64, i64 -> tensor<64x64xbf16>
    %y = tile.load %b[%k, %n] : !tile.view<bf16, 2>, i64, i64 -> tensor<64x64xbf16>
    %p = tile.mma %x, %y, %acc : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32>
    %z = arith.constant dense<1.0> : tensor<64x64xf32>
    tile.store %z, %d[%m, %k] : tensor<64x64xf32>, !tile.view<f32, 2>, i64, i64
    scf.yield %p : tensor<64x64xf32>
  }
  tile.store %r, %c[%m, %n] : tensor<64x64xf32>, !tile.view<f32, 2>, i64, i64
  return
}

// -----

// Another reader of the carried accumulator in the loop (here the mma's
// own operand, made from it) would see it without the start: the loop is
// left as it is.
// CHECK-LABEL: func.func @mma_acc_read_in_loop
// CHECK:         %[[C:.*]] = tile.load %{{.*}} : !tile.view<f32, 2>
// CHECK:         scf.for {{.*}} iter_args(%{{.*}} = %[[C]])
// CHECK-NOT:     arith.addf
func.func @mma_acc_read_in_loop(%a: !tile.view<bf16, 2>, %b: !tile.view<bf16, 2>,
                                %c: !tile.view<f32, 2>, %d: !tile.view<f32, 2>,
                                %m: i64, %n: i64, %kt: i64) {
  %c0 = arith.constant 0 : i64
  %c1 = arith.constant 1 : i64
  %init = tile.load %c[%m, %n] : !tile.view<f32, 2>, i64, i64 -> tensor<64x64xf32>
  %r = scf.for %k = %c0 to %kt step %c1 iter_args(%acc = %init) -> (tensor<64x64xf32>) : i64 {
    %x = arith.truncf %acc : tensor<64x64xf32> to tensor<64x64xbf16>
    %y = tile.load %b[%k, %n] : !tile.view<bf16, 2>, i64, i64 -> tensor<64x64xbf16>
    %p = tile.mma %x, %y, %acc : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32>
    scf.yield %p : tensor<64x64xf32>
  }
  tile.store %r, %c[%m, %n] : tensor<64x64xf32>, !tile.view<f32, 2>, i64, i64
  return
}
