//===- Stack.h - Running the compiler on a stack of its own -----*- C++ -*-===//
//
// The frontend, the interpreter and MLIR/LLVM recurse over the program, so
// how deep an input may be depends on the stack they run on. `compile` and
// `interpretKernel` run on a thread with kCompilerStackBytes of stack,
// whatever the caller's thread has (a worker thread may have 512 KiB): the
// parser's and Sema's depth limits are sized for that stack.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_STACK_H
#define TILEC_STACK_H

#include "llvm/ADT/STLFunctionalExtras.h"

#include <cstddef>

namespace tilec {

constexpr size_t kCompilerStackBytes = size_t(64) << 20;

/// Runs `fn` to completion on a new thread with kCompilerStackBytes of
/// stack, or on the calling thread if no thread can be started.
void runOnCompilerStack(llvm::function_ref<void()> fn);

} // namespace tilec

#endif // TILEC_STACK_H
