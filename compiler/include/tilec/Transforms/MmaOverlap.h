//===- MmaOverlap.h - overlap of an mma loop's work with its mmas -*- C++ -*-===//
//
// FlashAttention-3's intra-warpgroup overlap, planned for a general mma
// loop of the form
//
//   for i { s = mma(a, b(i), 0); ... work on s ...; acc = mma(p, v(i), f(acc)) }
//
// (the first mma's result feeds the loop's work; the last only accumulates
// into a tile the loop carries). Rotated, iteration i issues s(i), then
// the last mma of iteration i - 1, and runs the work on s(i) while that
// mma runs on the tensor cores:
//
//   prologue: s(0); work(0)
//   for i in 1 ..: issue s(i); issue acc = mma(p(i-1), v(i-1), f(acc));
//                  wait for s(i); work(i); wait for acc
//   epilogue: acc = mma(p(n-1), v(n-1), f(acc))
//
// tile-stage-shared decides it (a register estimate, a third stage: the
// stage of iteration i - 1 is held one iteration longer); the pipeline
// lowering builds it. Both read the same plan from planMmaOverlap.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_TRANSFORMS_MMAOVERLAP_H
#define TILEC_TRANSFORMS_MMAOVERLAP_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>

namespace tilec {

struct MmaOverlap {
  mlir::Operation *first = nullptr;  // s = mma(a, b, 0)
  mlir::Operation *second = nullptr; // acc = mma(p, v, f(acc))
  /// The loop-carried accumulator the second mma yields.
  unsigned accIndex = 0;
  /// The second stage, in program order: the second mma, the ops that
  /// compute its accumulator from the carried one, and the reshapes and
  /// broadcasts only they use. Its operands' staged loads (load, reshape,
  /// transpose) are in `lateChains`, not here.
  llvm::SmallVector<mlir::Operation *> late;
  /// Ops of the first stage that the second reads and that are recomputed
  /// rather than carried (constants, splats of values from outside the loop).
  llvm::SmallVector<mlir::Operation *> remat;
  /// The ops of the staged operand chains of the second mma.
  llvm::DenseSet<mlir::Operation *> lateChains;
  /// Values of the first stage that the second reads: carried from
  /// iteration i - 1 to i (p and the rescale factor in attention).
  llvm::SmallVector<mlir::Value> cross;
  /// Estimated 32-bit registers per consumer thread for the tiles live
  /// across the overlap (s, the accumulator, the carried values of two
  /// iterations).
  int64_t registers = 0;
};

/// The overlap plan of a general mma loop whose tiles are spread over
/// `threads` consumer threads, or nullopt where the loop does not have
/// the form above.
std::optional<MmaOverlap> planMmaOverlap(mlir::scf::ForOp loop, int64_t threads);

/// An `if` around tensor-core mmas, `if c { acc = mma(a, b, acc); }` or a
/// whole step of block-sparse attention, becomes mmas predicated on c
/// (tile.mma ... if %c) at the `if`'s place, so that tile-fuse and the
/// pipeline planner see them in their loop: where the `if`'s then-block
/// has no effect but reads and its else yields values from outside it.
/// The work that depends on a product (attention's softmax between its
/// mmas) stays under c, one `if` per run of it between two mmas, whose else
/// yields what a skipped step leaves (the outer else's values; zeros where
/// only skipped work reads it); the rest (the operands' loads, staged every
/// iteration, padded outside their tensors) runs whatever c is. A result
/// that is neither is chosen by c (arith.select). An `if` in an `if` gives
/// the conjunction. Other forms keep their `if` (and the planner's error),
/// and so do f32 products on the CUDA cores. tile-fuse runs it, before
/// tile-stage-shared plans.
void predicateMmas(mlir::func::FuncOp func);

/// Whether the mmas of `loop` take at least as long as its other tile work,
/// estimated per iteration and SM: wgmma at 4096 flops a cycle (bf16/f16
/// dense), other tile work at 128 elements a cycle, transcendentals (MUFU)
/// at 16; the ops in nested regions (the masked iterations' `if`) are left
/// out as rare. Only then does other work hide under the mmas: ping-pong of
/// two consumer warpgroups (measured on the H200, docs/performance.md:
/// attention at D = 128, ratio 1.07, gains 3-5%; at D = 64, 0.55, loses
/// 1-2%; the MLP, 0.89, a third) and the intra-warpgroup overlap (D = 64 at
/// BN = 128 measured 8% slower with it, D = 128 causal 3% faster).
bool mmaBound(mlir::scf::ForOp loop);

/// Whether every mma of `loop` only accumulates into what the loop carries
/// (acc = mma(a, b, acc), the matmul form), and there is one: the pipeline
/// then keeps a batch of wgmmas in flight across iterations, releases a
/// stage one iteration late, and may alternate warpgroups over tiles. So
/// does a predicated mma (`if c { acc = mma(..) }`); an iteration that
/// skips its product commits no group and waits for all (WgmmaLowering),
/// so the stage before it may still be released one iteration late.
bool onlyAccumulates(mlir::scf::ForOp loop);

/// Whether every mma operand of `loop`'s body is a loaded tile (staged, or
/// a load's tile through transpose) or a value from outside the loop. A
/// wgmma left in flight across iterations needs that: an operand computed
/// in the loop (x * g in registers) is rewritten by the next iteration
/// while the wgmma may still read it, which the PTX ISA leaves undefined
/// (rmsnorm_linear returned wrong values under compute-sanitizer's timing).
bool readsOnlyLoadedOperands(mlir::scf::ForOp loop);

/// Whether an mma of `loop`'s body has a predicate (tile.mma ... if %c):
/// such a product is issued in its branch, with no wait moved, ping-pong
/// turn, alternation of warpgroups or overlap around it.
bool hasPredicatedMma(mlir::scf::ForOp loop);

/// Whether `loop`'s body holds two or more mmas, none predicated, each a
/// product from zeros (FP8 block scales over two 128-column halves: p0 =
/// mma(a, b0, zeros), acc0 += p0 * s0, p1 = mma(a, b1, zeros), ...): the
/// general pipeline waits for each where it is issued, keeps the work
/// between two of them before the second, and lets each take the
/// registers of the product before it (kSharedProductAttrName).
bool loopOfProducts(mlir::scf::ForOp loop);

/// A warp-specialized pipeline's registers per thread (setmaxnreg) for its
/// producer warpgroup and for each of its `consumers` warpgroups. A
/// producer with more to do than issue copies gets more: a persistent
/// kernel's (the outer loop's tile arithmetic) and the matmul pipeline's
/// (its copy by threads where TMA cannot address an operand).
struct PipelineRegisters {
  int32_t producer, consumer;
};
PipelineRegisters pipelineRegisters(int64_t consumers, bool busyProducer);

/// Whether `view` is a view of a tensor parameter (tile.param) that the
/// kernel does not write (`written`: tile::writtenParams), which the
/// producer may read ahead of the consumers.
bool readsUnwrittenParam(mlir::Value view, const llvm::DenseSet<int64_t> &written);

/// Whether the producer warpgroup of an mma pipeline can run `op` again,
/// ahead of the consumers, to compute where a staged tile is: scalar code
/// without memory effects, scalar loads from tensors the kernel does not
/// write (`written`: tile::writtenParams), and the ifs and loops around
/// such code. tile-stage-shared plans with it; the pipeline's lowering
/// replays what it accepts.
bool producerCanReplay(mlir::Operation *op, const llvm::DenseSet<int64_t> &written);

/// 32-bit registers per thread that `v` takes when spread over `threads`.
int64_t tileRegisters(mlir::Value v, int64_t threads);

/// Registers per consumer thread that the overlap may plan for: what the
/// consumers get (setmaxnreg) less what the loop's other values, addresses
/// and the softmax's temporaries take.
int64_t overlapRegisterBudget(int64_t consumers);

} // namespace tilec

#endif
