//===- AccumulatorColumns.h - which tiles hold an accumulator's columns -*- C++ -*-===//
//
// In an mma kernel, a reduction over the rows of an [accRows, N] tile
// (axis = 0) leaves one value per column, held where the accumulator's
// fragments hold that column (#tile.slice<dim = 0>). Every tile that must
// share an encoding with such a result holds column values too: the
// operands and results of elementwise work, what a loop or a branch
// carries, reshapes between [N] and [1, N]. tile-stage-shared checks the
// kernel's tiles against this set and tile-layout encodes it, so both read
// it from here.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_TRANSFORMS_ACCUMULATORCOLUMNS_H
#define TILEC_TRANSFORMS_ACCUMULATORCOLUMNS_H

#include "tilec/Dialect/Tile/IR/TileDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseSet.h"

namespace tilec {

/// The classes of tiles of a kernel that must share one encoding (so that
/// no op between them moves data): the operands and results of elementwise
/// work (arith, math), what a loop or a branch carries, and the reshapes
/// that `reshapeUnites` accepts. A tile in no class is one of its own.
class EncodingClasses {
public:
  EncodingClasses(mlir::func::FuncOp func,
                  llvm::function_ref<bool(tile::ReshapeOp)> reshapeUnites);
  /// The representative of `v`'s class.
  mlir::Value find(mlir::Value v);
  /// The tiles of the class whose representative is `root`.
  llvm::SmallVector<mlir::Value> members(mlir::Value root);

private:
  void unite(mlir::Value a, mlir::Value b);
  llvm::DenseMap<mlir::Value, mlir::Value> parent;
};

/// The tiles of `func` that hold columns of an accumulator of `accRows`
/// rows, found as the union-find classes of tiles that must share one
/// encoding which hold a reduction over such a tile's rows. Fails, with an
/// error at the user's line, where column values meet row values (a
/// reduction over axis 1) or are reshaped to anything but [N] / [1, N].
mlir::FailureOr<llvm::DenseSet<mlir::Value>> findAccumulatorColumns(mlir::func::FuncOp func,
                                                                    int64_t accRows);

} // namespace tilec

#endif // TILEC_TRANSFORMS_ACCUMULATORCOLUMNS_H
