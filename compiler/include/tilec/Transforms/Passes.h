//===- Passes.h - tile dialect transformations -------------------*- C++ -*-===//

#ifndef TILEC_TRANSFORMS_PASSES_H
#define TILEC_TRANSFORMS_PASSES_H

#include "mlir/Pass/Pass.h"

namespace tilec {
#define GEN_PASS_DECL
#include "tilec/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tilec/Transforms/Passes.h.inc"
} // namespace tilec

#endif // TILEC_TRANSFORMS_PASSES_H
