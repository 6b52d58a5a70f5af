//===- References.h - tilec-check's host references ----------*- C++ -*-===//
//
// The host reference of each example kernel (by name): what the kernel
// writes, how to make its inputs and how to compute the expected outputs,
// in double precision. tilec-check.cpp is the driver that compiles, runs
// and compares; References.cpp is the table.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_TOOLS_TILEC_CHECK_REFERENCES_H
#define TILEC_TOOLS_TILEC_CHECK_REFERENCES_H

#include "tilec/Runtime/Signature.h"

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace tilec::check {

/// Host copy of one tensor argument (f16, bf16 and f32 values are exact as
/// float; the references compute in double).
struct HostTensor {
  ScalarType dtype;
  std::vector<int64_t> sizes, strides;
  std::vector<float> values; ///< float tensors, by strided storage offset
  std::vector<int64_t> ints; ///< integer tensors, by strided storage offset
  int64_t storageElems = 0;
};

/// A host reference: computes the expected contents of all tensors.
struct Reference {
  std::vector<unsigned> written; ///< tensor params the kernel writes
  bool writtenAreRead = false;    ///< outputs are also inputs (y in SAXPY)
  /// The sizes of tensor `k` for a problem `shape`, when they are not the
  /// default (the problem shape; the columns for a vector in a 2-D problem).
  std::function<std::vector<int64_t>(const std::vector<int64_t> &, size_t)> shapeOf;
  std::function<void(std::vector<HostTensor *> &, const std::vector<double> &)> run;
  double rtolScale = 1; ///< extra tolerance for approximate math
  /// The least relative tolerance whatever the output type: the error of
  /// approximate math (e.g. tanh.approx.f32) that an f32 output shows.
  double rtolFloor = 0;
  /// Absolute tolerance for a problem shape (default: the relative one), for
  /// results that are sums of rounded terms.
  std::function<double(const std::vector<int64_t> &)> atolFor;
  /// Adjusts the generated inputs (e.g. valid CSR offsets).
  std::function<void(std::vector<HostTensor> &)> prepare;
  /// Tensors the kernel expects to be zero on entry: zeroed on the host, and
  /// before every timed launch (the memset counts in the time).
  std::vector<unsigned> zeroed;
  /// Tensors the reference reads or writes as integers (`ints`: any integer
  /// type or i1); the others are floating point (`values`). With
  /// anyElementType the reference handles both kinds for every tensor.
  /// Element types of the other kind (e.g. -D T=i32 for vadd) are refused.
  std::vector<unsigned> intTensors;
  bool anyElementType = false;
};

struct Rng {
  uint64_t s;
  uint64_t next() {
    s += 0x9E3779B97F4A7C15ull;
    uint64_t z = s;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double uniform() { // [-2, 2)
    return (next() >> 11) * (4.0 / 9007199254740992.0) - 2.0;
  }
};

/// References by kernel name (tensor parameters are numbered in order).
/// `defines` are the -D values the kernels are compiled with.
std::map<std::string, Reference> references(const std::map<std::string, std::string> &defines);

} // namespace tilec::check

#endif // TILEC_TOOLS_TILEC_CHECK_REFERENCES_H
