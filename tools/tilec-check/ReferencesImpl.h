//===- ReferencesImpl.h - what the reference table's files share -*- C++ -*-===//
//
// Helpers of the host references (References.cpp: elementwise, row and
// irregular kernels; ReferencesMma.cpp: matmuls, attention, the MLP).
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_TOOLS_TILEC_CHECK_REFERENCESIMPL_H
#define TILEC_TOOLS_TILEC_CHECK_REFERENCESIMPL_H

#include "References.h"

#include "tilec/Interpreter.h"
#include "tilec/Runtime/Runtime.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <thread>

namespace tilec::check {

/// Row m of the product of 2-D host tensors a and b (any strides), in double.
inline void productRow(const HostTensor &a, const HostTensor &b, int64_t m,
                       std::vector<double> &row) {
  std::fill(row.begin(), row.end(), 0.0);
  for (int64_t k = 0; k < a.sizes[1]; ++k) {
    double av = a.values[m * a.strides[0] + k * a.strides[1]];
    for (int64_t n = 0; n < int64_t(row.size()); ++n)
      row[n] += av * b.values[k * b.strides[0] + n * b.strides[1]];
  }
}

/// Runs fn(begin, end) over the rows [0, rows) split across the host's
/// cores, one thread per 2^22 of `work` (the reference's inner steps).
template <typename Fn> void parallelRows(int64_t rows, int64_t work, Fn fn) {
  int64_t workers = std::clamp<int64_t>(std::thread::hardware_concurrency(), 1, 64);
  workers = std::min(workers, std::max<int64_t>(1, work / (1 << 22)));
  std::vector<std::thread> pool;
  for (int64_t w = 0; w < workers; ++w)
    pool.emplace_back(fn, rows * w / workers, rows * (w + 1) / workers);
  for (std::thread &t : pool)
    t.join();
}

template <typename Fn> void forEachIndex(const HostTensor &t, Fn fn) {
  if (t.sizes.size() == 1) {
    for (int64_t i = 0; i < t.sizes[0]; ++i)
      fn(i * t.strides[0]);
    return;
  }
  if (t.sizes.size() == 3) {
    for (int64_t b = 0; b < t.sizes[0]; ++b)
      for (int64_t i = 0; i < t.sizes[1]; ++i)
        for (int64_t j = 0; j < t.sizes[2]; ++j)
          fn(b * t.strides[0] + i * t.strides[1] + j * t.strides[2]);
    return;
  }
  for (int64_t i = 0; i < t.sizes[0]; ++i)
    for (int64_t j = 0; j < t.sizes[1]; ++j)
      fn(i * t.strides[0] + j * t.strides[1]);
}


/// Elementwise reference over tensors of identical shape: out = f(ins...).
inline Reference elementwise(std::vector<unsigned> ins, unsigned out,
                      std::function<double(const std::vector<double> &,
                                           const std::vector<double> &)> f,
                      double rtolScale = 1) {
  Reference r;
  r.written = {out};
  r.rtolScale = rtolScale;
  r.run = [ins, out, f](std::vector<HostTensor *> &ts,
                        const std::vector<double> &scalars) {
    HostTensor &o = *ts[out];
    std::vector<double> xs(ins.size());
    forEachIndex(o, [&](int64_t off) {
      for (size_t k = 0; k < ins.size(); ++k)
        xs[k] = ts[ins[k]]->values[off];
      o.values[off] = static_cast<float>(roundToFloatType(o.dtype, f(xs, scalars)));
    });
  };
  return r;
}

/// The value of compile-time parameter `name` given with -D, or `dflt`.
inline int64_t defineOr(const std::map<std::string, std::string> &defines,
                        const std::string &name, int64_t dflt) {
  auto it = defines.find(name);
  return it == defines.end() ? dflt : std::stoll(it->second);
}

/// Adds the references of the mma kernels (matmuls, attention, the MLP).
void addMmaReferences(std::map<std::string, Reference> &refs,
                      const std::map<std::string, std::string> &defines);

} // namespace tilec::check

#endif // TILEC_TOOLS_TILEC_CHECK_REFERENCESIMPL_H
