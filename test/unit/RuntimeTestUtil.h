//===- RuntimeTestUtil.h - helpers of the runtime's unit tests --*- C++ -*-===//
//
// Signatures, arguments and error capture shared by RuntimeTest.cpp (the
// driver-free parts) and RuntimeDeviceTest.cpp (launches on a GPU).
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_TEST_UNIT_RUNTIMETESTUTIL_H
#define TILEC_TEST_UNIT_RUNTIMETESTUTIL_H

#include "tilec/Runtime/Runtime.h"

#include <gtest/gtest.h>

#include <cstring>

namespace tilec::runtime_test {

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

inline ParamInfo scalarParam(std::string name, ScalarType type) {
  return {std::move(name), false, type, 0};
}

inline ParamInfo tensorParam(std::string name, ScalarType type, unsigned rank) {
  return {std::move(name), true, type, rank};
}

/// Scalars of every size and kind in a row (a: i8, b: f64, c: f16, n:
/// i32), as the `mixed` test kernel takes them: their packing must align
/// and convert each.
inline std::vector<ParamInfo> mixedScalarParams() {
  return {scalarParam("a", ScalarType::I8), scalarParam("b", ScalarType::F64),
          scalarParam("c", ScalarType::F16), scalarParam("n", ScalarType::I32)};
}

inline GridExpr leaf(GridExpr::Kind kind, unsigned param, unsigned dim = 0) {
  GridExpr e;
  e.kind = kind;
  e.param = param;
  e.dim = dim;
  return e;
}

inline GridExpr shape(unsigned param, unsigned dim) {
  return leaf(GridExpr::Kind::Shape, param, dim);
}

inline GridExpr scalarRef(unsigned param) {
  return leaf(GridExpr::Kind::Scalar, param);
}

inline GridExpr op(GridExpr::Kind kind, std::vector<GridExpr> operands) {
  GridExpr e;
  e.kind = kind;
  e.operands = std::move(operands);
  return e;
}

using K = GridExpr::Kind;

/// saxpy(a: f32, x: tensor<f32, 1>, y: tensor<f32, 1>)
///     grid(cdiv(x.shape[0], BLOCK))
inline KernelSignature saxpySignature(unsigned block = 1024) {
  KernelSignature sig;
  sig.name = "saxpy";
  sig.params = {scalarParam("a", ScalarType::F32),
                tensorParam("x", ScalarType::F32, 1),
                tensorParam("y", ScalarType::F32, 1)};
  sig.grid = {op(K::CDiv, {shape(1, 0), GridExpr::constant(block)})};
  sig.numThreads = block;
  return sig;
}

inline std::vector<ArgValue> saxpyArgs(int64_t n, uint64_t x = 0x1000,
                                uint64_t y = 0x2000) {
  return {2.0f, TensorArg::contiguous(x, {n}), TensorArg::contiguous(y, {n})};
}

/// Runs `fn`, expecting a RuntimeError; returns its message.
template <typename Fn> std::string errorOf(Fn fn) {
  try {
    fn();
  } catch (const RuntimeError &e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a RuntimeError";
  return "";
}

template <typename T> T readAt(const PackedArgs &p, size_t offset) {
  T v;
  std::memcpy(&v, p.bytes() + offset, sizeof(T));
  return v;
}


} // namespace tilec::runtime_test

#endif
