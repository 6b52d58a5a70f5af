//===- tilec-check.cpp - compile, run and check example kernels -----------===//
//
// The end-to-end driver behind the README's main command and the GPU tests:
// compiles each `.tile` file in-process through the embedding API, and, when
// a GPU is present, runs every kernel that has a host reference on random
// inputs and compares all tensors with the reference computed in double
// precision. With --bench it also times the kernels and a device-to-device
// copy with CUDA events (median after warm-up).
//
//   tilec-check FILE... [-D NAME=VALUE]... [--size N]... [--shape RxC[xK]]...
//               [--ld-pad P] [--col-major T] [--arch sm_90a] [--compile-only]
//               [--bench ITERS [--bench-reps R]] [--kernel NAME] [--diff]
// --diff also runs the CPU interpreter on the same inputs and compares the
// GPU's results with it (differential testing).
// A matmul problem is MxNxK (BxMxNxK batched); --col-major T stores tensor
// parameter T (0-based among the tensors) column-major.
//
//===----------------------------------------------------------------------===//

#include "tilec/Autotune.h"
#include "tilec/Compiler.h"
#include "tilec/Interpreter.h"
#include "tilec/Runtime/Runtime.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <thread>
#include <sstream>
#include <string>
#include <vector>

using namespace tilec;

namespace {

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

/// Row m of the product of 2-D host tensors a and b (any strides), in double.
static void productRow(const HostTensor &a, const HostTensor &b, int64_t m,
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
template <typename Fn> static void parallelRows(int64_t rows, int64_t work, Fn fn) {
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
Reference elementwise(std::vector<unsigned> ins, unsigned out,
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

/// The value of compile-time parameter `name` given with -D, or `dflt`.
static int64_t defineOr(const std::map<std::string, std::string> &defines,
                        const std::string &name, int64_t dflt) {
  auto it = defines.find(name);
  return it == defines.end() ? dflt : std::stoll(it->second);
}

/// References by kernel name (tensor parameters are numbered in order).
/// `defines` are the -D values the kernels are compiled with.
std::map<std::string, Reference> references(const std::map<std::string, std::string> &defines) {
  std::map<std::string, Reference> refs;
  refs["vadd"] = elementwise({0, 1}, 2, [](auto &x, auto &) { return x[0] + x[1]; });
  refs["saxpy"] = elementwise({0, 1}, 1, [](auto &x, auto &s) {
    return s[0] * x[0] + x[1];
  });
  refs["saxpy"].writtenAreRead = true;
  refs["fused2d"] = elementwise({0, 1}, 2, [](auto &x, auto &) {
    return std::max(x[0] * x[1] + 1.0, 0.0);
  });
  {
    // z[i] = sum_{k<n} (x[i]/2)^k / 8 + i % 3
    Reference r;
    r.written = {1};
    r.rtolScale = 4;
    r.run = [](std::vector<HostTensor *> &ts, const std::vector<double> &s) {
      HostTensor &x = *ts[0], &z = *ts[1];
      int64_t n = static_cast<int64_t>(s[0]);
      forEachIndex(z, [&](int64_t off) {
        double v = x.values[off] * 0.5, term = 1, acc = 0;
        for (int64_t k = 0; k < n; ++k) {
          acc += term;
          term *= v;
        }
        z.values[off] = static_cast<float>(roundToFloatType(z.dtype, acc / 8 + double(off % 3)));
      });
    };
    refs["powsum"] = r;
  }
  {
    // Row softmax over the columns of a matrix.
    Reference r;
    r.written = {1};
    r.rtolScale = 16;
    r.run = [](std::vector<HostTensor *> &ts, const std::vector<double> &) {
      HostTensor &x = *ts[0], &y = *ts[1];
      int64_t rows = x.sizes[0], cols = x.sizes.size() > 1 ? x.sizes[1] : 1;
      for (int64_t i = 0; i < rows; ++i) {
        double m = -INFINITY, sum = 0;
        for (int64_t j = 0; j < cols; ++j)
          m = std::max(m, double(x.values[i * x.strides[0] + j * x.strides.back()]));
        for (int64_t j = 0; j < cols; ++j)
          sum += std::exp(double(x.values[i * x.strides[0] + j * x.strides.back()]) - m);
        for (int64_t j = 0; j < cols; ++j) {
          double e = std::exp(double(x.values[i * x.strides[0] + j * x.strides.back()]) - m);
          y.values[i * y.strides[0] + j * y.strides.back()] =
              static_cast<float>(roundToFloatType(y.dtype, e / sum));
        }
      }
    };
    refs["softmax"] = r;
  }
  {
    // Row LayerNorm and RMSNorm; tensors: x, w, [b,] y; scalar: eps.
    auto norm = [](bool layer) {
      Reference r;
      r.written = {layer ? 3u : 2u};
      r.rtolScale = 16;
      r.run = [layer](std::vector<HostTensor *> &ts, const std::vector<double> &s) {
        HostTensor &x = *ts[0], &w = *ts[1];
        HostTensor &y = *ts[layer ? 3 : 2];
        double eps = s[0];
        int64_t rows = x.sizes[0], cols = x.sizes[1];
        for (int64_t i = 0; i < rows; ++i) {
          auto at = [&](int64_t j) { return double(x.values[i * x.strides[0] + j]); };
          double mean = 0, var = 0;
          for (int64_t j = 0; j < cols; ++j)
            mean += at(j);
          mean /= cols;
          for (int64_t j = 0; j < cols; ++j) {
            double d = layer ? at(j) - mean : at(j);
            var += d * d;
          }
          double scale = 1.0 / std::sqrt(var / cols + eps);
          for (int64_t j = 0; j < cols; ++j) {
            double out = layer ? (at(j) - mean) * scale * w.values[j] + ts[2]->values[j]
                               : at(j) * scale * w.values[j];
            y.values[i * y.strides[0] + j] = static_cast<float>(roundToFloatType(y.dtype, out));
          }
        }
      };
      return r;
    };
    refs["layernorm"] = norm(true);
    refs["rmsnorm"] = norm(false);
  }
  refs["activations"] = elementwise(
      {0, 1}, 2,
      [](auto &x, auto &) {
        double a = x[0], b = x[1];
        double gelu = 0.5 * a * (1.0 + std::tanh(0.7978845608 * (a + 0.044715 * a * a * a)));
        return gelu + 1.0 / (1.0 + std::exp(-b)) + std::pow(std::abs(b) + 1.0, 1.5) * 0.1 +
               std::floor(a * 4.0) / 8.0 + 1.0 / std::sqrt(a * a + 1.0) +
               std::fma(a, b, std::exp2(-b * b)) - std::ceil(std::log2(std::abs(a) + 2.0));
      },
      /*rtolScale=*/400); // tanh.approx has about 2^-11 relative error
  {
    // z = ((x ^ 0x80000000) & 0xFFFF0000) | (~y >> 31) | (y << 40 == 0), in u32.
    Reference r;
    r.written = {2};
    r.run = [](std::vector<HostTensor *> &ts, const std::vector<double> &) {
      HostTensor &x = *ts[0], &y = *ts[1], &z = *ts[2];
      forEachIndex(z, [&](int64_t off) {
        uint32_t a = uint32_t(x.ints[off]), b = uint32_t(y.ints[off]);
        z.ints[off] = int64_t(((a ^ 0x80000000u) & 0xFFFF0000u) | (~b >> 31));
      });
    };
    r.intTensors = {0, 1, 2};
    refs["bits"] = r;
  }
  {
    // out[r] = the first column of the maximum of row r.
    Reference r;
    r.written = {1};
    r.shapeOf = [](const std::vector<int64_t> &shape, size_t k) {
      return k == 0 ? shape : std::vector<int64_t>{shape[0]};
    };
    r.run = [](std::vector<HostTensor *> &ts, const std::vector<double> &) {
      HostTensor &x = *ts[0], &out = *ts[1];
      for (int64_t i = 0; i < x.sizes[0]; ++i) {
        int64_t best = 0;
        for (int64_t j = 1; j < x.sizes[1]; ++j)
          if (x.values[i * x.strides[0] + j * x.strides[1]] >
              x.values[i * x.strides[0] + best * x.strides[1]])
            best = j;
        out.ints[i * out.strides[0]] = best;
      }
    };
    r.intTensors = {1};
    refs["rowargmax"] = r;
  }
  {
    // C = A * B (+ bias, GELU in the tanh form): a problem MxNxK (MxN means
    // K = N); A is MxK, B is KxN, bias has N entries. Batched: BxMxNxK, one
    // product per leading index.
    auto matmulRef = [](bool biasGelu, bool batched, bool accumulate = false,
                        bool tf32 = false) {
      Reference r;
      r.written = {biasGelu ? 3u : 2u};
      r.writtenAreRead = accumulate;
      // TF32: the reference rounds the operands as the GPU does, so only the
      // sums differ.
      r.rtolScale = biasGelu ? 2 : tf32 ? 200 : 1000;
      // The tensor cores' tf32 sums are not rounded to nearest: each of the
      // K/8 steps may lose about an f32 ulp of a partial sum of size
      // sqrt(K) * 16/9 (inputs uniform in [-2, 2)), and the losses add up
      // (measured on the H200: 6e-4 at K = 4096). Operands truncated instead
      // of rounded would be off by about 1e-3 of the result.
      if (tf32)
        r.atolFor = [](const std::vector<int64_t> &shape) {
          double K = double(shape.size() > 2 ? shape[2] : shape[1]);
          return std::ldexp(1.0, -23) * K * std::sqrt(K) * 16.0 / 9.0;
        };
      // GELU's tanh is tanh.approx.f32 (relative error up to about 2^-11),
      // which an f32 output shows.
      r.rtolFloor = biasGelu ? 1e-3 : 0;
      r.shapeOf = [biasGelu, batched](const std::vector<int64_t> &shape, size_t k) {
        size_t o = batched ? 1 : 0;
        int64_t M = shape[o], N = shape[o + 1];
        int64_t K = shape.size() > o + 2 ? shape[o + 2] : N;
        std::vector<int64_t> dims;
        if (k == 0)
          dims = {M, K};
        else if (k == 1)
          dims = {K, N};
        else if (biasGelu && k == 2)
          return std::vector<int64_t>{N};
        else
          dims = {M, N};
        if (batched)
          dims.insert(dims.begin(), shape[0]);
        return dims;
      };
      r.run = [biasGelu, accumulate, tf32](std::vector<HostTensor *> &ts,
                                           const std::vector<double> &) {
        HostTensor &a = *ts[0], &b = *ts[1], &c = *ts[biasGelu ? 3 : 2];
        size_t o = a.sizes.size() - 2; // 1 when batched
        int64_t batches = o ? a.sizes[0] : 1;
        int64_t M = a.sizes[o], K = a.sizes[o + 1], N = b.sizes[o + 1];
        int64_t as0 = a.strides[o], as1 = a.strides[o + 1], bs0 = b.strides[o],
                bs1 = b.strides[o + 1], cs0 = c.strides[o], cs1 = c.strides[o + 1];
        // Rows are independent: split them over the host's cores (a 4096^3
        // reference is 69 GFLOP in double).
        auto rowsFrom = [&](int64_t begin, int64_t end) {
          std::vector<double> row(static_cast<size_t>(N));
          for (int64_t mm = begin; mm < end; ++mm) {
            int64_t bi = mm / M, m = mm % M;
            int64_t ab = o ? bi * a.strides[0] : 0, bb = o ? bi * b.strides[0] : 0,
                    cb = o ? bi * c.strides[0] : 0;
            for (int64_t n = 0; n < N; ++n)
              row[n] = accumulate ? double(c.values[cb + m * cs0 + n * cs1]) : 0.0;
            // The operands as the tensor cores see them.
            auto operand = [tf32](float v) { return tf32 ? tilec::roundToTf32(v) : v; };
            for (int64_t k = 0; k < K; ++k) {
              double av = operand(a.values[ab + m * as0 + k * as1]);
              const float *bp = &b.values[bb + k * bs0];
              for (int64_t n = 0; n < N; ++n)
                row[n] += av * double(operand(bp[n * bs1]));
            }
            for (int64_t n = 0; n < N; ++n) {
              double x = row[n];
              if (biasGelu) {
                x += ts[2]->values[n * ts[2]->strides[0]];
                x = 0.5 * x * (1.0 + std::tanh(0.7978845608 * (x + 0.044715 * x * x * x)));
              }
              c.values[cb + m * cs0 + n * cs1] = static_cast<float>(roundToFloatType(c.dtype, x));
            }
          }
        };
        int64_t rows = batches * M;
        parallelRows(rows, rows * N * K, rowsFrom);
      };
      return r;
    };
    refs["matmul"] = matmulRef(false, false);
    refs["matmul_grouped"] = matmulRef(false, false);
    refs["matmul_persistent"] = matmulRef(false, false);
    refs["matmul_bias_gelu"] = matmulRef(true, false);
    refs["bmm"] = matmulRef(false, true);
    refs["matmul_add"] = matmulRef(false, false, /*accumulate=*/true);
    refs["matmul_tf32"] = matmulRef(false, false, false, /*tf32=*/true);
    {
      // P = the softmax over its columns of each [128, 128] block of A * B
      // (the kernel's default BN = 128; columns past N are zeros of the
      // block), L[r, c] = the log-sum-exp of row r of column block c.
      // Products in f32 on the GPU against double here, then exp/log
      // (ex2.approx, lg2.approx): 1e-3 relative, 1e-5 absolute.
      constexpr int64_t kBN = 128;
      Reference r;
      r.written = {2, 3};
      r.rtolScale = 1000;
      r.atolFor = [](const std::vector<int64_t> &) { return 1e-5; };
      r.shapeOf = [](const std::vector<int64_t> &shape, size_t k) {
        int64_t M = shape[0], N = shape[1], K = shape.size() > 2 ? shape[2] : N;
        switch (k) {
        case 0: return std::vector<int64_t>{M, K};
        case 1: return std::vector<int64_t>{K, N};
        case 2: return std::vector<int64_t>{M, N};
        default: return std::vector<int64_t>{M, (N + kBN - 1) / kBN};
        }
      };
      r.run = [](std::vector<HostTensor *> &ts, const std::vector<double> &) {
        HostTensor &a = *ts[0], &b = *ts[1], &p = *ts[2], &l = *ts[3];
        int64_t M = a.sizes[0], N = b.sizes[1];
        std::vector<double> row(static_cast<size_t>(N));
        for (int64_t m = 0; m < M; ++m) {
          productRow(a, b, m, row);
          for (int64_t c = 0; c * kBN < N; ++c) {
            int64_t end = std::min(N, (c + 1) * kBN);
            bool padded = end < (c + 1) * kBN;
            double mx = padded ? 0.0 : row[c * kBN];
            for (int64_t n = c * kBN; n < end; ++n)
              mx = std::max(mx, row[n]);
            double sum = double((c + 1) * kBN - end) * std::exp(-mx);
            for (int64_t n = c * kBN; n < end; ++n)
              sum += std::exp(row[n] - mx);
            for (int64_t n = c * kBN; n < end; ++n)
              p.values[m * p.strides[0] + n * p.strides[1]] =
                  static_cast<float>(std::exp(row[n] - mx) / sum);
            l.values[m * l.strides[0] + c * l.strides[1]] = static_cast<float>(mx + std::log(sum));
          }
        }
      };
      refs["matmul_softmax"] = r;
    }
    {
      // C = diag(sa) * A * B * diag(sb); sa is M x 1. The CPU interpreter
      // rounds the scaled operands to T before the product (the language's
      // semantics), the GPU scales the f32 accumulator (exact): each of the K
      // terms (RMS size 16/9 for inputs uniform in [-2, 2)) may differ by up
      // to 2^-8 of its size, a random walk of sqrt(K) steps; 1e-2 relative
      // plus an absolute 6 sigma.
      Reference r;
      r.written = {4};
      r.rtolScale = 5000;
      r.atolFor = [](const std::vector<int64_t> &shape) {
        double K = double(shape.size() > 2 ? shape[2] : shape[1]);
        return 6.0 * std::sqrt(K) * 2.0 / 256.0;
      };
      r.shapeOf = [](const std::vector<int64_t> &shape, size_t k) {
        int64_t M = shape[0], N = shape[1], K = shape.size() > 2 ? shape[2] : N;
        switch (k) {
        case 0: return std::vector<int64_t>{M, K};
        case 1: return std::vector<int64_t>{K, N};
        case 2: return std::vector<int64_t>{M, 1};
        case 3: return std::vector<int64_t>{N};
        default: return std::vector<int64_t>{M, N};
        }
      };
      r.run = [](std::vector<HostTensor *> &ts, const std::vector<double> &) {
        HostTensor &a = *ts[0], &b = *ts[1], &sa = *ts[2], &sb = *ts[3], &c = *ts[4];
        int64_t M = a.sizes[0], N = b.sizes[1];
        std::vector<double> row(static_cast<size_t>(N));
        for (int64_t m = 0; m < M; ++m) {
          productRow(a, b, m, row);
          for (int64_t n = 0; n < N; ++n)
            c.values[m * c.strides[0] + n * c.strides[1]] = static_cast<float>(
                row[n] * sa.values[m * sa.strides[0]] * sb.values[n * sb.strides[0]]);
        }
      };
      refs["matmul_scaled"] = r;
    }
  }
  {
    // Attention (examples/attention.tile): the problem shape is
    // BH x Sq x Sk x D; O = softmax(scale * Q K^T (masked)) V per head and
    // L = the rows' log-sum-exp, in double. Q is scaled by 1/sqrt(D) on
    // entry so that the scores are O(1) and the softmax is not one-hot. The
    // GPU rounds P to T before P V: O is within T's tolerance, L (f32, from
    // ex2/lg2.approx) within 2e-4.
    bool causal = defineOr(defines, "CAUSAL", 0) != 0;
    Reference r;
    r.written = {3, 4};
    r.rtolFloor = 2e-4;
    r.shapeOf = [](const std::vector<int64_t> &shape, size_t k) {
      int64_t BH = shape[0], Sq = shape[1], Sk = shape.size() > 2 ? shape[2] : Sq;
      int64_t D = shape.size() > 3 ? shape[3] : 64;
      switch (k) {
      case 1: case 2: return std::vector<int64_t>{BH, Sk, D};
      case 4: return std::vector<int64_t>{BH, Sq};
      default: return std::vector<int64_t>{BH, Sq, D};
      }
    };
    r.prepare = [](std::vector<HostTensor> &ts) {
      HostTensor &q = ts[0];
      double f = 1.0 / std::sqrt(double(q.sizes[2]));
      for (float &v : q.values)
        v = static_cast<float>(roundToFloatType(q.dtype, v * f));
    };
    r.run = [causal](std::vector<HostTensor *> &ts, const std::vector<double> &scalars) {
      HostTensor &q = *ts[0], &k = *ts[1], &v = *ts[2], &o = *ts[3], &l = *ts[4];
      int64_t BH = q.sizes[0], Sq = q.sizes[1], D = q.sizes[2], Sk = k.sizes[1];
      double scale = scalars[0];
      auto rowsFrom = [&](int64_t begin, int64_t end) {
        std::vector<double> s(static_cast<size_t>(Sk)), out(static_cast<size_t>(D));
        for (int64_t rr = begin; rr < end; ++rr) {
          int64_t b = rr / Sq, r = rr % Sq;
          int64_t last = causal ? std::min(Sk - 1, r + Sk - Sq) : Sk - 1;
          double mx = -1e300;
          for (int64_t c = 0; c <= last; ++c) {
            double acc = 0;
            for (int64_t d = 0; d < D; ++d)
              acc += double(q.values[b * q.strides[0] + r * q.strides[1] + d * q.strides[2]]) *
                     k.values[b * k.strides[0] + c * k.strides[1] + d * k.strides[2]];
            s[c] = acc * scale;
            mx = std::max(mx, s[c]);
          }
          double sum = 0;
          std::fill(out.begin(), out.end(), 0.0);
          for (int64_t c = 0; c <= last; ++c) {
            double p = std::exp(s[c] - mx);
            sum += p;
            for (int64_t d = 0; d < D; ++d)
              out[d] += p * v.values[b * v.strides[0] + c * v.strides[1] + d * v.strides[2]];
          }
          for (int64_t d = 0; d < D; ++d)
            o.values[b * o.strides[0] + r * o.strides[1] + d * o.strides[2]] =
                static_cast<float>(roundToFloatType(o.dtype, out[d] / sum));
          l.values[b * l.strides[0] + r * l.strides[1]] = static_cast<float>(mx + std::log(sum));
        }
      };
      parallelRows(BH * Sq, BH * Sq * Sk * D, rowsFrom);
    };
    refs["attention"] = r;
  }
  {
    // y = gelu(x W1 + b1) W2 (examples/mlp.tile): the problem shape is
    // M x Din x H x Dout. gelu is the tanh form; g is rounded to T before
    // the second product, as the kernel does (cast<T>(g)).
    Reference r;
    r.written = {4};
    r.rtolScale = 2;
    r.atolFor = [](const std::vector<int64_t> &shape) {
      return 0.02 * std::sqrt(double(shape.size() > 2 ? shape[2] : 64));
    };
    r.shapeOf = [](const std::vector<int64_t> &shape, size_t k) {
      int64_t M = shape[0], Din = shape[1], H = shape.size() > 2 ? shape[2] : 64,
              Dout = shape.size() > 3 ? shape[3] : 128;
      switch (k) {
      case 0: return std::vector<int64_t>{M, Din};
      case 1: return std::vector<int64_t>{Din, H};
      case 2: return std::vector<int64_t>{H};
      case 3: return std::vector<int64_t>{H, Dout};
      default: return std::vector<int64_t>{M, Dout};
      }
    };
    r.run = [](std::vector<HostTensor *> &ts, const std::vector<double> &) {
      HostTensor &x = *ts[0], &w1 = *ts[1], &b1 = *ts[2], &w2 = *ts[3], &y = *ts[4];
      int64_t M = x.sizes[0], Din = x.sizes[1], H = w1.sizes[1], Dout = w2.sizes[1];
      auto rowsFrom = [&](int64_t begin, int64_t end) {
        std::vector<double> g(static_cast<size_t>(H)), out(static_cast<size_t>(Dout));
        for (int64_t m = begin; m < end; ++m) {
          for (int64_t h = 0; h < H; ++h) {
            double a = 0;
            for (int64_t k = 0; k < Din; ++k)
              a += double(x.values[m * x.strides[0] + k * x.strides[1]]) *
                   w1.values[k * w1.strides[0] + h * w1.strides[1]];
            a += b1.values[h * b1.strides[0]];
            double v = 0.5 * a * (1.0 + std::tanh(0.7978845608 * (a + 0.044715 * a * a * a)));
            g[h] = roundToFloatType(x.dtype, v);
          }
          std::fill(out.begin(), out.end(), 0.0);
          for (int64_t h = 0; h < H; ++h)
            for (int64_t n = 0; n < Dout; ++n)
              out[n] += g[h] * w2.values[h * w2.strides[0] + n * w2.strides[1]];
          for (int64_t n = 0; n < Dout; ++n)
            y.values[m * y.strides[0] + n * y.strides[1]] =
                static_cast<float>(roundToFloatType(y.dtype, out[n]));
        }
      };
      parallelRows(M, M * H * (Din + Dout), rowsFrom);
    };
    refs["mlp"] = r;
  }
  {
    // y[r, j] = x[r, j] * sigmoid(w[j]).
    Reference r;
    r.written = {2};
    r.rtolScale = 8;
    r.run = [](std::vector<HostTensor *> &ts, const std::vector<double> &) {
      HostTensor &x = *ts[0], &w = *ts[1], &y = *ts[2];
      for (int64_t i = 0; i < x.sizes[0]; ++i)
        for (int64_t j = 0; j < x.sizes[1]; ++j) {
          double g = 1.0 / (1.0 + std::exp(-double(w.values[j * w.strides[0]])));
          y.values[i * y.strides[0] + j * y.strides[1]] = static_cast<float>(
              roundToFloatType(y.dtype, x.values[i * x.strides[0] + j * x.strides[1]] * g));
        }
    };
    refs["gate"] = r;
  }
  {
    // hist[v] += count of v in x (x: u8, hist: 256 bins, initial contents kept).
    Reference r;
    r.written = {1};
    r.writtenAreRead = true;
    r.shapeOf = [](const std::vector<int64_t> &shape, size_t k) {
      return k == 0 ? shape : std::vector<int64_t>{256};
    };
    r.run = [](std::vector<HostTensor *> &ts, const std::vector<double> &) {
      HostTensor &x = *ts[0], &h = *ts[1];
      for (int64_t i = 0; i < x.sizes[0]; ++i) {
        int64_t &bin = h.ints[x.ints[i * x.strides[0]] * h.strides[0]];
        bin = int64_t(int32_t(uint32_t(bin) + 1u));
      }
    };
    r.intTensors = {0, 1};
    refs["histogram"] = r;
  }
  {
    // out[r, :] = table[ids[r], :] (zeros when ids[r] >= 200, the table's
    // row count; ids are bytes).
    Reference r;
    r.written = {2};
    r.shapeOf = [](const std::vector<int64_t> &shape, size_t k) {
      if (k == 0)
        return std::vector<int64_t>{shape[0]};
      if (k == 1)
        return std::vector<int64_t>{200, shape[1]};
      return shape;
    };
    r.run = [](std::vector<HostTensor *> &ts, const std::vector<double> &) {
      HostTensor &ids = *ts[0], &table = *ts[1], &out = *ts[2];
      for (int64_t i = 0; i < out.sizes[0]; ++i) {
        int64_t id = ids.ints[i * ids.strides[0]];
        for (int64_t j = 0; j < out.sizes[1]; ++j)
          out.values[i * out.strides[0] + j * out.strides[1]] =
              id < table.sizes[0] ? table.values[id * table.strides[0] + j * table.strides[1]]
                                  : 0.0f;
      }
    };
    r.intTensors = {0};
    refs["embedding"] = r;
  }
  {
    // y[n - 1 - i] = x[i].
    Reference r;
    r.written = {1};
    r.run = [](std::vector<HostTensor *> &ts, const std::vector<double> &) {
      HostTensor &x = *ts[0], &y = *ts[1];
      int64_t n = x.sizes[0];
      for (int64_t i = 0; i < n; ++i)
        y.values[(n - 1 - i) * y.strides[0]] = x.values[i * x.strides[0]];
    };
    refs["reverse"] = r;
  }
  {
    // y = x^T (x is RxC, y is CxR).
    Reference r;
    r.written = {1};
    r.shapeOf = [](const std::vector<int64_t> &shape, size_t k) {
      return k == 0 ? shape : std::vector<int64_t>{shape[1], shape[0]};
    };
    r.run = [](std::vector<HostTensor *> &ts, const std::vector<double> &) {
      HostTensor &x = *ts[0], &y = *ts[1];
      for (int64_t i = 0; i < x.sizes[0]; ++i)
        for (int64_t j = 0; j < x.sizes[1]; ++j)
          y.values[j * y.strides[0] + i * y.strides[1]] =
              x.values[i * x.strides[0] + j * x.strides[1]];
    };
    refs["transpose"] = r;
  }
  refs["helpers"] = elementwise(
      {0, 1}, 2,
      [](auto &x, auto &) {
        double a = x[0], b = x[1];
        double g = 0.5 * a * (1.0 + std::tanh(0.7978845608 * (a + 0.044715 * a * a * a)));
        return g + b * b - b * b * b * 0.25;
      },
      /*rtolScale=*/8);
  refs["gelu_erf"] = elementwise(
      {0}, 1, [](auto &x, auto &) { return 0.5 * x[0] * (1.0 + std::erf(x[0] / std::sqrt(2.0))); },
      /*rtolScale=*/8);
  {
    // s[r] = sum of row r, m[r] = max of row r.
    Reference r;
    r.written = {1, 2};
    r.rtolScale = 64;
    r.shapeOf = [](const std::vector<int64_t> &shape, size_t k) {
      return k == 0 ? shape : std::vector<int64_t>{shape[0]};
    };
    r.run = [](std::vector<HostTensor *> &ts, const std::vector<double> &) {
      HostTensor &x = *ts[0], &s = *ts[1], &m = *ts[2];
      for (int64_t i = 0; i < x.sizes[0]; ++i) {
        double sum = 0, mx = -INFINITY;
        for (int64_t j = 0; j < x.sizes[1]; ++j) {
          double v = x.values[i * x.strides[0] + j * x.strides[1]];
          sum += v;
          mx = std::max(mx, v);
        }
        s.values[i * s.strides[0]] = static_cast<float>(roundToFloatType(s.dtype, sum));
        m.values[i * m.strides[0]] = static_cast<float>(roundToFloatType(m.dtype, mx));
      }
    };
    refs["rowstats"] = r;
  }
  {
    // examples/combine.tile: per-row results of a matrix (rowmax_abs,
    // rowargmax2), per-block OR (BLOCK = 1000) and running max (BLOCK =
    // 1024) of a vector.
    auto perRow = [](const std::vector<int64_t> &shape, size_t k) {
      return k == 0 ? shape : std::vector<int64_t>{shape[0]};
    };
    Reference absmax;
    absmax.written = {1};
    absmax.shapeOf = perRow;
    absmax.run = [](std::vector<HostTensor *> &ts, const std::vector<double> &) {
      HostTensor &x = *ts[0], &m = *ts[1];
      for (int64_t i = 0; i < x.sizes[0]; ++i) {
        double best = 0;
        for (int64_t j = 0; j < x.sizes[1]; ++j)
          best = std::max(best, std::abs(double(x.values[i * x.strides[0] + j * x.strides[1]])));
        m.values[i * m.strides[0]] = static_cast<float>(best);
      }
    };
    refs["rowmax_abs"] = absmax;
    // examples/combine.tile's rowargmax2 (a user combiner) computes what
    // examples/argmax.tile's rowargmax does.
    refs["rowargmax2"] = refs.at("rowargmax");
    Reference bor;
    bor.written = {1};
    bor.shapeOf = [](const std::vector<int64_t> &shape, size_t k) {
      return k == 0 ? shape : std::vector<int64_t>{(shape[0] + 999) / 1000};
    };
    bor.run = [](std::vector<HostTensor *> &ts, const std::vector<double> &) {
      HostTensor &x = *ts[0], &b = *ts[1];
      for (int64_t blk = 0; blk < b.sizes[0]; ++blk) {
        uint32_t acc = 0;
        for (int64_t i = blk * 1000; i < std::min(x.sizes[0], (blk + 1) * 1000); ++i)
          acc |= uint32_t(x.ints[i * x.strides[0]]);
        b.ints[blk * b.strides[0]] = int64_t(int32_t(acc));
      }
    };
    bor.intTensors = {0, 1};
    refs["block_or"] = bor;
    Reference rmax;
    rmax.written = {1};
    rmax.run = [](std::vector<HostTensor *> &ts, const std::vector<double> &) {
      HostTensor &x = *ts[0], &y = *ts[1];
      double m = 0;
      for (int64_t i = 0; i < x.sizes[0]; ++i) {
        double v = x.values[i * x.strides[0]];
        m = i % 1024 == 0 ? v : std::max(m, v);
        y.values[i * y.strides[0]] = static_cast<float>(m);
      }
    };
    refs["running_max"] = rmax;
  }
  {
    // examples/mask.tile: y = m ? x : 0, pos = x > 0 (booleans as bytes).
    Reference r;
    r.written = {2, 3};
    r.run = [](std::vector<HostTensor *> &ts, const std::vector<double> &) {
      HostTensor &x = *ts[0], &m = *ts[1], &y = *ts[2], &pos = *ts[3];
      for (int64_t i = 0; i < x.sizes[0]; ++i) {
        float v = x.values[i * x.strides[0]];
        y.values[i * y.strides[0]] = m.ints[i * m.strides[0]] ? v : 0.0f;
        pos.ints[i * pos.strides[0]] = v > 0.0f;
      }
    };
    r.intTensors = {1, 3};
    refs["masked_fill"] = r;
  }
  {
    // examples/segment_sum.tile: out[r] = sum of x[offsets[r] .. offsets[r+1]).
    // The offsets of a problem of n values are ragged: rows of 0 to 32 values
    // (mean 16, some empty) and, from n >= 4096 on, four rows of n/16 values
    // each at random places (a quarter of all values).
    auto csr = [](int64_t n) {
      std::vector<int64_t> off{0};
      Rng rng{0x5EEDull + uint64_t(n)};
      auto next = [&] { return rng.next(); };
      int64_t longLen = n >= 4096 ? n / 16 : 0, longLeft = longLen ? 4 : 0;
      int64_t pos = 0;
      while (pos < n) {
        int64_t rest = n - pos;
        int64_t len;
        if (longLeft && (next() % 4096 == 0 || rest <= longLeft * longLen + 32)) {
          len = longLen;
          --longLeft;
        } else {
          len = int64_t(next() % 33);
        }
        len = std::min(len, rest - (longLeft ? longLeft * longLen : 0));
        len = std::max<int64_t>(len, 0);
        pos += len;
        off.push_back(pos);
      }
      return off;
    };
    Reference r;
    r.written = {2};
    r.zeroed = {2};
    r.shapeOf = [csr](const std::vector<int64_t> &shape, size_t k) {
      if (k == 0)
        return shape;
      int64_t rows = int64_t(csr(shape[0]).size()) - 1;
      return std::vector<int64_t>{k == 1 ? rows + 1 : rows};
    };
    r.prepare = [csr](std::vector<HostTensor> &ts) {
      std::vector<int64_t> off = csr(ts[0].sizes[0]);
      for (size_t i = 0; i < off.size(); ++i)
        ts[1].ints[i] = off[i];
    };
    r.run = [](std::vector<HostTensor *> &ts, const std::vector<double> &) {
      HostTensor &x = *ts[0], &off = *ts[1], &out = *ts[2];
      for (int64_t row = 0; row < out.sizes[0]; ++row) {
        double sum = 0;
        for (int64_t i = off.ints[row]; i < off.ints[row + 1]; ++i)
          sum += x.values[i];
        out.values[row] = static_cast<float>(sum);
      }
    };
    // f32 partial sums of up to n/16 values.
    r.atolFor = [](const std::vector<int64_t> &shape) {
      return 2e-5 * std::sqrt(double(shape[0])) + 1e-4;
    };
    r.intTensors = {1};
    refs["segment_sum"] = r;
  }
  {
    // The passes of examples/prefix_sum.tile (default BLOCK = 4096): integer
    // tensors wrap like the GPU's i32 adds and are compared exactly.
    constexpr int64_t kBlock = 4096;
    auto sumAt = [](HostTensor &t, int64_t i) {
      return isFloatType(t.dtype) ? double(t.values[i * t.strides[0]])
                                  : double(t.ints[i * t.strides[0]]);
    };
    auto put = [](HostTensor &t, int64_t i, double f, int64_t v) {
      if (isFloatType(t.dtype))
        t.values[i * t.strides[0]] = static_cast<float>(roundToFloatType(t.dtype, f));
      else
        t.ints[i * t.strides[0]] = int64_t(int32_t(uint32_t(uint64_t(v))));
    };
    auto intAt = [](HostTensor &t, int64_t i) { return t.ints[i * t.strides[0]]; };
    Reference sums;
    sums.anyElementType = true;
    sums.written = {1};
    sums.rtolScale = 4096;
    sums.shapeOf = [](const std::vector<int64_t> &shape, size_t k) {
      return k == 0 ? shape : std::vector<int64_t>{(shape[0] + kBlock - 1) / kBlock};
    };
    sums.run = [=](std::vector<HostTensor *> &ts, const std::vector<double> &) {
      HostTensor &x = *ts[0], &s = *ts[1];
      for (int64_t b = 0; b < s.sizes[0]; ++b) {
        double f = 0;
        uint64_t v = 0;
        for (int64_t i = b * kBlock; i < std::min(x.sizes[0], (b + 1) * kBlock); ++i) {
          f += sumAt(x, i);
          v += isFloatType(x.dtype) ? 0 : uint64_t(intAt(x, i));
        }
        put(s, b, f, int64_t(v));
      }
    };
    refs["block_sums"] = sums;
    Reference offsets;
    offsets.anyElementType = true;
    offsets.written = {0};
    offsets.writtenAreRead = true;
    offsets.rtolScale = 4096;
    offsets.run = [=](std::vector<HostTensor *> &ts, const std::vector<double> &) {
      HostTensor &s = *ts[0];
      double f = 0;
      uint64_t v = 0;
      for (int64_t i = 0; i < s.sizes[0]; ++i) {
        double xf = sumAt(s, i);
        uint64_t xv = isFloatType(s.dtype) ? 0 : uint64_t(intAt(s, i));
        put(s, i, f, int64_t(v));
        f += xf;
        v += xv;
      }
    };
    refs["scan_offsets"] = offsets;
    Reference add;
    add.anyElementType = true;
    add.written = {2};
    add.rtolScale = 4096;
    add.shapeOf = [](const std::vector<int64_t> &shape, size_t k) {
      return k == 1 ? std::vector<int64_t>{(shape[0] + kBlock - 1) / kBlock} : shape;
    };
    add.run = [=](std::vector<HostTensor *> &ts, const std::vector<double> &) {
      HostTensor &x = *ts[0], &o = *ts[1], &y = *ts[2];
      double f = 0;
      uint64_t v = 0;
      for (int64_t i = 0; i < x.sizes[0]; ++i) {
        if (i % kBlock == 0) {
          f = 0;
          v = 0;
        }
        f += sumAt(x, i);
        v += isFloatType(x.dtype) ? 0 : uint64_t(intAt(x, i));
        int64_t b = i / kBlock;
        put(y, i, f + sumAt(o, b), int64_t(v + (isFloatType(o.dtype) ? 0 : uint64_t(intAt(o, b)))));
      }
    };
    refs["add_offsets"] = add;
  }
  {
    // y[r, j] = f[r, j] - max_j f[r, j], f[r, j] = x[r, j] + x[r, j + C/2].
    Reference r;
    r.written = {1};
    r.rtolScale = 8;
    r.shapeOf = [](const std::vector<int64_t> &shape, size_t k) {
      return k == 0 ? shape : std::vector<int64_t>{shape[0], shape[1] / 2};
    };
    r.run = [](std::vector<HostTensor *> &ts, const std::vector<double> &) {
      HostTensor &x = *ts[0], &y = *ts[1];
      int64_t h = y.sizes[1];
      for (int64_t i = 0; i < x.sizes[0]; ++i) {
        std::vector<double> f(static_cast<size_t>(h));
        double mx = -INFINITY;
        for (int64_t j = 0; j < h; ++j) {
          f[j] = double(x.values[i * x.strides[0] + j * x.strides[1]]) +
                 double(x.values[i * x.strides[0] + (j + h) * x.strides[1]]);
          mx = std::max(mx, f[j]);
        }
        for (int64_t j = 0; j < h; ++j)
          y.values[i * y.strides[0] + j * y.strides[1]] =
              static_cast<float>(roundToFloatType(y.dtype, f[j] - mx));
      }
    };
    refs["fold"] = r;
  }
  refs["mathmix"] = elementwise(
      {0, 1}, 2,
      [](auto &x, auto &) {
        double a = x[0], b = x[1];
        double pos = std::sqrt(std::abs(a)) + std::exp(b) - std::log(1.0 + b * b);
        double neg = -std::min(a * a, 4.0) / (1.0 + std::abs(b));
        return a > 0 ? pos : neg;
      },
      /*rtolScale=*/20);
  return refs;
}

// --- number formats --------------------------------------------------------


std::vector<uint8_t> encode(const HostTensor &t) {
  size_t eb = scalarTypeSize(t.dtype);
  std::vector<uint8_t> out(t.storageElems * eb);
  for (int64_t i = 0; i < t.storageElems; ++i) {
    uint8_t *p = out.data() + i * eb;
    if (!isFloatType(t.dtype)) {
      std::memcpy(p, &t.ints[i], eb); // little endian: the low bytes
      continue;
    }
    storeFloatElement(t.dtype, p, t.values[i]);
  }
  return out;
}

double decodeAt(const HostTensor &t, const std::vector<uint8_t> &raw, int64_t i) {
  return loadFloatElement(t.dtype, raw.data() + i * scalarTypeSize(t.dtype));
}

double relTol(ScalarType t) {
  switch (t) {
  case ScalarType::F16: return 2e-3;
  case ScalarType::BF16: return 1.6e-2;
  case ScalarType::F32: return 2e-6;
  default: return 1e-12;
  }
}

struct Options {
  std::vector<std::string> files;
  std::map<std::string, std::string> defines;
  std::vector<int64_t> sizes;
  std::vector<std::vector<int64_t>> shapes;
  int64_t ldPad = 0;
  std::vector<unsigned> colMajor; ///< tensor indices stored column-major
  std::string arch = "sm_90a";
  bool compileOnly = false;
  int benchIters = 0;
  int benchReps = 1; ///< launches per timed interval (their mean counts)
  unsigned numWarps = 0;
  unsigned minBlocksPerSM = 0;
  bool verify = true;
  bool tune = false;
  bool cpu = false;
  std::string tuningDb;
  std::string ptxDir;
  std::string kernel; ///< only this kernel (all when empty)
  bool diff = false;  ///< also compare the GPU with the CPU interpreter
};

bool gpuPresent() {
  try {
    return driverAvailable() && deviceCount() > 0;
  } catch (const RuntimeError &) {
    return false;
  }
}

/// Runs one kernel on one problem size; returns false on a mismatch.
/// The source and options a kernel came from (for --tune and --cpu).
struct TuneContext {
  Autotuner *tuner = nullptr;
  std::string source;
  CompileOptions options;
};

/// The name of the k-th tensor parameter.
std::string tensorName(const KernelSignature &sig, size_t k) {
  for (const ParamInfo &p : sig.params)
    if (p.isTensor && k-- == 0)
      return p.name;
  return "?";
}

/// Compares every element of every tensor's storage (`raws`, after the run)
/// with the host reference; prints PASS or FAIL.
bool compareWithReference(const KernelSignature &sig, const Reference &ref,
                          const std::vector<int64_t> &shape, const Options &opts,
                          std::vector<HostTensor> &host, const std::vector<double> &scalars,
                          const std::vector<std::vector<uint8_t>> &raws,
                          const std::vector<std::vector<uint8_t>> *against = nullptr) {
  std::vector<HostTensor> expected;
  if (opts.verify)
    expected = host;
  std::vector<HostTensor *> eptrs;
  for (auto &t : expected)
    eptrs.push_back(&t);
  if (opts.verify && !against)
    ref.run(eptrs, scalars);
  // Differential: the expected contents are another run's results.
  if (opts.verify && against)
    for (size_t k = 0; k < expected.size(); ++k)
      for (int64_t i = 0; i < expected[k].storageElems; ++i) {
        HostTensor &t = expected[k];
        if (isFloatType(t.dtype)) {
          t.values[i] = static_cast<float>(decodeAt(t, (*against)[k], i));
        } else {
          size_t eb = scalarTypeSize(t.dtype);
          int64_t v = 0;
          std::memcpy(&v, (*against)[k].data() + i * eb, eb);
          t.ints[i] = v;
        }
      }

  std::string shapeStr;
  for (size_t i = 0; i < shape.size(); ++i)
    shapeStr += (i ? "x" : "") + std::to_string(shape[i]);
  bool ok = true;
  double worst = 0;
  int64_t bad = 0, firstBad = -1;
  for (size_t k = 0; k < host.size() && opts.verify; ++k) {
    HostTensor &t = host[k];
    const std::vector<uint8_t> &raw = raws[k];
    double rtol = std::max(relTol(t.dtype) * ref.rtolScale, ref.rtolFloor);
    double atol = ref.atolFor ? ref.atolFor(shape) : rtol;
    // Every element of storage must match: outputs the reference, inputs and
    // the padding between rows their original values (nothing written there).
    if (!isFloatType(t.dtype)) {
      // Integers must match exactly.
      size_t eb = scalarTypeSize(t.dtype);
      for (int64_t i = 0; i < t.storageElems; ++i) {
        int64_t want = expected[k].ints[i];
        if (std::memcmp(raw.data() + i * eb, &want, eb) != 0) {
          if (firstBad < 0) {
            firstBad = i;
            int64_t got = 0;
            std::memcpy(&got, raw.data() + i * eb, eb);
            std::printf("  mismatch in tensor '%s' at storage index %lld: got 0x%llx, want 0x%llx\n",
                        tensorName(sig, k).c_str(), (long long)i, (unsigned long long)got,
                        (unsigned long long)(want & (eb == 8 ? ~0ull : ((1ull << (8 * eb)) - 1))));
          }
          ++bad;
        }
      }
      continue;
    }
    for (int64_t i = 0; i < t.storageElems; ++i) {
      double got = decodeAt(t, raw, i);
      double want = expected[k].values[i];
      double err = std::abs(got - want);
      if (!(err <= atol + rtol * std::abs(want))) {
        if (firstBad < 0) {
          firstBad = i;
          std::printf("  mismatch in tensor '%s' at storage index %lld: got %.9g, want %.9g\n",
                      tensorName(sig, k).c_str(), (long long)i, got, want);
        }
        ++bad;
      }
      if (std::abs(want) > 0)
        worst = std::max(worst, err / std::max(std::abs(want), 1.0));
    }
  }
  ok = bad == 0;
  if (opts.verify)
    std::printf("%s %s %s [%s]%s max_rel_err=%.3g%s\n", ok ? "PASS" : "FAIL",
              sig.name.c_str(), shapeStr.c_str(),
              scalarTypeName(host.empty() ? ScalarType::F32 : host[0].dtype),
              opts.cpu ? " on the CPU interpreter"
              : against ? " GPU vs the CPU interpreter (differential)" : "",
              worst,
              ok ? "" : (" (" + std::to_string(bad) + " wrong elements)").c_str());

  return ok;
}

/// Runs the kernel on the CPU reference interpreter over the tensors'
/// storage `raws` (updated in place) and the scalar arguments.
bool interpretOnHost(const KernelSignature &sig, const std::vector<HostTensor> &host,
                     const std::vector<double> &scalars,
                     std::vector<std::vector<uint8_t>> &raws, const TuneContext &tuning) {
  std::vector<HostArg> hostArgs;
  size_t ti = 0, si = 0;
  for (const ParamInfo &p : sig.params) {
    if (p.isTensor) {
      hostArgs.push_back(HostArg::tensor(raws[ti].data(), host[ti].sizes, host[ti].strides));
      ++ti;
    } else if (isFloatType(p.dtype)) {
      hostArgs.push_back(HostArg::scalarFloat(scalars[si++]));
    } else {
      hostArgs.push_back(HostArg::scalarInt(static_cast<int64_t>(scalars[si++])));
    }
  }
  std::string error;
  if (!interpretKernel(tuning.source, tuning.options, sig.name, hostArgs, error)) {
    std::printf("FAIL %s: the CPU interpreter stopped: %s\n", sig.name.c_str(), error.c_str());
    return false;
  }
  return true;
}

/// Runs one problem on the GPU (`declared`) or, with --cpu, on the CPU
/// reference interpreter, and compares every tensor with the host reference.
bool runCase(const Kernel *declared, const KernelSignature &sig, const Reference &ref,
             const std::vector<int64_t> &shape, const Options &opts,
             uint64_t seed, const TuneContext &tuning) {
  std::vector<HostTensor> host;
  std::vector<double> scalars;
  Rng rng{seed};
  for (const ParamInfo &p : sig.params) {
    if (!p.isTensor) {
      // Integer parameters are counts (5 to 8); floats are near 1.
      scalars.push_back(isFloatType(p.dtype)
                            ? roundToFloatType(p.dtype, 1.0 + rng.uniform() / 4)
                            : double(5 + seed % 4));
      continue;
    }
    HostTensor t;
    t.dtype = p.dtype;
    t.sizes = shape;
    // With a matrix problem, vectors (weights, biases) span the columns.
    if (p.rank == 1 && shape.size() == 2)
      t.sizes = {shape[1]};
    if (ref.shapeOf)
      t.sizes = ref.shapeOf(shape, host.size());
    if (t.sizes.size() == 1) {
      t.strides = {1};
      t.storageElems = t.sizes[0];
    } else if (t.sizes.size() == 3) {
      // Contiguous matrices with padded rows.
      int64_t ld = t.sizes[2] + opts.ldPad;
      t.strides = {t.sizes[1] * ld, ld, 1};
      t.storageElems = (t.sizes[0] * t.sizes[1] - 1) * ld + t.sizes[2];
    } else if (std::count(opts.colMajor.begin(), opts.colMajor.end(), unsigned(host.size()))) {
      int64_t ld = t.sizes[0] + opts.ldPad;
      t.strides = {1, ld};
      t.storageElems = (t.sizes[1] - 1) * ld + t.sizes[0];
    } else {
      int64_t ld = t.sizes[1] + opts.ldPad;
      t.strides = {ld, 1};
      t.storageElems = (t.sizes[0] - 1) * ld + t.sizes[1];
    }
    if (p.dtype == ScalarType::F64)
      throw RuntimeError(std::string("tilec-check: tensors of ") +
                         scalarTypeName(p.dtype) + " are not generated yet");
    if (p.dtype == ScalarType::I1) {
      // Booleans: bytes of 0 or 1 (torch.bool).
      t.ints.resize(t.storageElems);
      for (int64_t &v : t.ints)
        v = int64_t(rng.next() & 1);
    } else if (isFloatType(p.dtype)) {
      t.values.resize(t.storageElems);
      for (float &v : t.values)
        v = static_cast<float>(roundToFloatType(p.dtype, rng.uniform()));
    } else {
      // Any bit pattern of the type, stored sign- or zero-extended.
      unsigned bits = scalarTypeSize(p.dtype) * 8;
      t.ints.resize(t.storageElems);
      for (int64_t &v : t.ints) {
        uint64_t r = rng.next();
        if (bits < 64)
          r &= (1ull << bits) - 1;
        v = isSignedIntType(p.dtype) && bits < 64 && (r >> (bits - 1))
                ? int64_t(r | ~((1ull << bits) - 1))
                : int64_t(r);
      }
    }
    host.push_back(std::move(t));
  }
  if (ref.prepare)
    ref.prepare(host);
  for (unsigned k : ref.zeroed) {
    std::fill(host[k].values.begin(), host[k].values.end(), 0.0f);
    std::fill(host[k].ints.begin(), host[k].ints.end(), 0);
  }
  // The inputs as the kernel sees them (element bytes of each dtype).
  std::vector<std::vector<uint8_t>> raws;
  for (const HostTensor &t : host)
    raws.push_back(encode(t));
  if (opts.cpu) {
    if (!interpretOnHost(sig, host, scalars, raws, tuning))
      return false;
    return compareWithReference(sig, ref, shape, opts, host, scalars, raws);
  }
  // Device copies.
  std::vector<Buffer> buffers;
  std::vector<ArgValue> args;
  size_t ti = 0, si = 0;
  for (const ParamInfo &p : sig.params) {
    if (p.isTensor) {
      HostTensor &t = host[ti];
      std::vector<uint8_t> &raw = raws[ti++];
      buffers.emplace_back(std::max<size_t>(raw.size(), 1));
      buffers.back().copyFromHost(raw.data(), raw.size());
      TensorArg ta;
      ta.ptr = buffers.back().ptr();
      ta.sizes = t.sizes;
      ta.strides = t.strides;
      args.emplace_back(ta);
    } else {
      if (isFloatType(p.dtype))
        args.push_back(ArgValue::scalar(p.dtype, scalars[si++]));
      else
        args.push_back(ArgValue::scalar(p.dtype, static_cast<int64_t>(scalars[si++])));
    }
  }
  // With --tune, the autotuner picks the configuration (timing it on these
  // arguments, which it overwrites), then the inputs are restored and the
  // chosen kernel is checked like any other.
  std::optional<Module> tunedModule;
  std::optional<Kernel> tunedKernel;
  if (tuning.tuner && !sig.tuneSpace.empty()) {
    TuneChoice choice;
    auto chosen = tuning.tuner->select(tuning.source, tuning.options, sig.name, args,
                                       &choice);
    if (!chosen->ok) {
      std::printf("%s", chosen->diagnostics.c_str());
      return false;
    }
    std::string shapeText, picked;
    for (size_t i = 0; i < shape.size(); ++i)
      shapeText += (i ? "x" : "") + std::to_string(shape[i]);
    for (auto &[name, value] : choice.defines)
      picked += (picked.empty() ? "" : ",") + name + "=" + value;
    std::printf("TUNE %s %s: %s (%.2f us)%s", sig.name.c_str(), shapeText.c_str(),
                picked.c_str(), choice.microseconds,
                choice.fromDatabase ? " from the tuning database\n" : "; tried");
    for (auto &[label, us] : choice.trials)
      std::printf(" %s=%.2fus", label.c_str(), us);
    if (!choice.fromDatabase)
      std::printf("\n");
    tunedModule.emplace(Module::loadPTX(chosen->ptx));
    tunedKernel.emplace(tunedModule->getKernel(chosen->kernels[0]));
    for (size_t k = 0; k < raws.size(); ++k)
      buffers[k].copyFromHost(raws[k].data(), raws[k].size());
  }
  const Kernel &kernel = tunedKernel ? *tunedKernel : *declared;
  kernel.launch(args);
  Context::get().synchronize();
  for (size_t k = 0; k < raws.size(); ++k)
    buffers[k].copyToHost(raws[k].data(), raws[k].size());

  bool ok = compareWithReference(sig, ref, shape, opts, host, scalars, raws);
  if (opts.diff && opts.verify) {
    // The same inputs through the CPU interpreter, compared with the GPU's
    // results (tolerances of the host reference: approximate GPU math).
    std::vector<std::vector<uint8_t>> cpu;
    for (const HostTensor &t : host)
      cpu.push_back(encode(t));
    if (!interpretOnHost(sig, host, scalars, cpu, tuning))
      return false;
    ok &= compareWithReference(sig, ref, shape, opts, host, scalars, raws, &cpu);
  }
  std::string shapeStr;
  for (size_t i = 0; i < shape.size(); ++i)
    shapeStr += (i ? "x" : "") + std::to_string(shape[i]);
  if (ok && opts.benchIters > 0) {
    // Bytes that must move: every tensor read once, written tensors again.
    double bytes = 0;
    for (size_t k = 0; k < host.size(); ++k) {
      double tb = double(host[k].storageElems) * scalarTypeSize(host[k].dtype);
      bool written = std::count(ref.written.begin(), ref.written.end(), k) > 0;
      bool readToo = !written || ref.writtenAreRead;
      bytes += tb * ((written ? 1 : 0) + (readToo ? 1 : 0));
    }
    auto timeIt = [&](const std::function<void()> &fn) {
      for (int i = 0; i < 10; ++i)
        fn();
      std::vector<float> ms;
      Event start, end;
      for (int i = 0; i < opts.benchIters; ++i) {
        start.record();
        for (int r = 0; r < opts.benchReps; ++r)
          fn();
        end.record();
        end.synchronize();
        ms.push_back(Event::elapsedMs(start, end) / float(opts.benchReps));
      }
      std::sort(ms.begin(), ms.end());
      return ms[ms.size() / 2];
    };
    float kms = timeIt([&] {
      for (unsigned k : ref.zeroed)
        buffers[k].memsetZero();
      kernel.launch(args);
    });
    std::printf("BENCH tilec %s n=%s threads=%u %.4f ms %.1f GB/s\n", sig.name.c_str(),
                shapeStr.c_str(), sig.numThreads, kms, bytes / (kms * 1e-3) / 1e9);
    // A device-to-device copy of the largest tensor: read + write.
    size_t copyBytes = buffers[0].size();
    Buffer dst(copyBytes);
    float cms = timeIt([&] { dst.copyFrom(buffers[0], copyBytes); });
    std::printf("BENCH memcpy_d2d n=%s %.4f ms %.1f GB/s\n", shapeStr.c_str(), cms,
                2.0 * copyBytes / (cms * 1e-3) / 1e9);
  }
  return ok;
}

/// Whether the host reference handles the element type of every tensor of
/// `sig` (the references compute floating-point tensors through `values` and
/// integer ones through `ints`); prints why not.
bool referenceSupports(const KernelSignature &sig, const Reference &ref) {
  if (ref.anyElementType)
    return true;
  size_t k = 0;
  for (const ParamInfo &p : sig.params) {
    if (!p.isTensor)
      continue;
    bool wantInt = std::count(ref.intTensors.begin(), ref.intTensors.end(), unsigned(k));
    if (p.dtype != ScalarType::F64 && isFloatType(p.dtype) == wantInt) {
      std::fprintf(stderr,
                   "tilec-check: the host reference of '%s' supports only %s element types "
                   "for tensor '%s', not %s (check it with %s)\n",
                   sig.name.c_str(), wantInt ? "integer" : "floating-point", p.name.c_str(),
                   scalarTypeName(p.dtype),
                   wantInt ? "an integer type" : "f16, bf16 or f32");
      return false;
    }
    ++k;
  }
  return true;
}

int usage() {
  std::fprintf(stderr,
               "usage: tilec-check FILE... [-D NAME=VALUE]... [--size N]... "
               "[--shape RxC]... [--ld-pad P] [--arch ARCH] [--compile-only] "
               "[--bench ITERS] [--no-verify] [--num-warps N] [--min-blocks-per-sm N] [--ptx-dir DIR] "
               "[--tune [--tuning-db FILE]] [--cpu]\n");
  return 2;
}

/// The largest --size or --shape dimension (the host reference keeps every
/// tensor in memory).
constexpr int64_t kMaxExtent = int64_t(1) << 40;

/// Parses a whole decimal number in [lo, kMaxExtent].
bool parseExtent(const std::string &s, int64_t lo, int64_t &out) {
  if (s.empty() || s.size() > 18 || s.find_first_not_of("0123456789") != std::string::npos)
    return false;
  out = std::stoll(s);
  return out >= lo && out <= kMaxExtent;
}

} // namespace

int main(int argc, char **argv) {
  Options opts;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "tilec-check: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    try {
      if (a == "-D" || (a.rfind("-D", 0) == 0 && a.size() > 2)) {
        std::string d = a == "-D" ? next() : a.substr(2);
        size_t eq = d.find('=');
        if (eq == std::string::npos)
          return usage();
        std::string name = d.substr(0, eq), value = d.substr(eq + 1);
        auto [it, inserted] = opts.defines.emplace(name, value);
        if (!inserted && it->second != value) {
          std::fprintf(stderr, "tilec-check: parameter '%s' is defined twice, as -D %s=%s and -D %s=%s\n",
                       name.c_str(), name.c_str(), it->second.c_str(), name.c_str(),
                       value.c_str());
          return 2;
        }
      } else if (a == "--size") {
        std::string s = next();
        int64_t n;
        if (!parseExtent(s, 0, n)) {
          std::fprintf(stderr,
                       "tilec-check: --size needs a number of elements from 0 to %lld, "
                       "got '%s'\n",
                       (long long)kMaxExtent, s.c_str());
          return 2;
        }
        opts.sizes.push_back(n);
      } else if (a == "--shape") {
        std::string s = next();
        std::vector<int64_t> dims;
        for (size_t start = 0;;) {
          size_t x = s.find('x', start);
          int64_t d;
          if (!parseExtent(s.substr(start, x - start), 1, d)) {
            std::fprintf(stderr,
                         "tilec-check: --shape needs dimensions from 1 to %lld separated "
                         "by 'x' (e.g. 1000x3000), got '%s'\n",
                         (long long)kMaxExtent, s.c_str());
            return 2;
          }
          dims.push_back(d);
          if (x == std::string::npos)
            break;
          start = x + 1;
        }
        if (dims.size() < 2 || dims.size() > 4)
          return usage();
        opts.shapes.push_back(dims);
      } else if (a == "--col-major") {
        opts.colMajor.push_back(unsigned(std::stoul(next())));
      } else if (a == "--ld-pad") {
        opts.ldPad = std::stoll(next());
      } else if (a == "--arch") {
        opts.arch = next();
      } else if (a == "--compile-only") {
        opts.compileOnly = true;
      } else if (a == "--bench") {
        opts.benchIters = std::stoi(next());
      } else if (a == "--cpu") {
        opts.cpu = true;
      } else if (a == "--tune") {
        opts.tune = true;
      } else if (a == "--tuning-db") {
        opts.tuningDb = next();
      } else if (a == "--bench-reps") {
        opts.benchReps = std::max(1, std::stoi(next()));
      } else if (a == "--diff") {
        opts.diff = true;
      } else if (a == "--kernel") {
        opts.kernel = next();
      } else if (a == "--no-verify") {
        opts.verify = false;
      } else if (a == "--num-warps") {
        opts.numWarps = std::stoul(next());
      } else if (a == "--min-blocks-per-sm") {
        opts.minBlocksPerSM = std::stoul(next());
      } else if (a == "--ptx-dir") {
        opts.ptxDir = next();
      } else if (!a.empty() && a[0] == '-') {
        return usage();
      } else {
        opts.files.push_back(a);
      }
    } catch (const std::exception &) {
      return usage();
    }
  }
  if (opts.files.empty())
    return usage();
  if (opts.sizes.empty())
    opts.sizes = {1, 1000, 1000003};
  if (opts.shapes.empty())
    opts.shapes = {{1000, 3000}};

  bool gpu = !opts.compileOnly && !opts.cpu && gpuPresent();
  if (!opts.compileOnly && !opts.cpu && !gpu)
    std::printf("no GPU found: compiling only\n");
  auto refs = references(opts.defines);
  int failures = 0;
  uint64_t seed = 12345;
  for (const std::string &file : opts.files) {
    std::ifstream in(file);
    if (!in) {
      std::fprintf(stderr, "tilec-check: cannot read %s\n", file.c_str());
      return 1;
    }
    std::stringstream ss;
    ss << in.rdbuf();
    CompileOptions copts;
    copts.fileName = file;
    copts.arch = opts.arch;
    copts.defines = opts.defines;
    copts.numWarps = opts.numWarps;
    copts.minBlocksPerSM = opts.minBlocksPerSM;
    copts.kernel = opts.kernel;
    auto t0 = std::chrono::steady_clock::now();
    CompileResult result = compile(ss.str(), copts);
    double ms = std::chrono::duration<double, std::milli>(
                    std::chrono::steady_clock::now() - t0).count();
    if (!result.ok) {
      std::fprintf(stderr, "%s", result.diagnostics.c_str());
      ++failures;
      continue;
    }
    std::printf("compiled %s: %zu kernel(s), %zu bytes of PTX in %.0f ms\n",
                file.c_str(), result.kernels.size(), result.ptx.size(), ms);
    if (!opts.ptxDir.empty()) {
      std::string base = file.substr(file.find_last_of('/') + 1);
      base = base.substr(0, base.rfind('.'));
      std::ofstream(opts.ptxDir + "/" + base + ".ptx") << result.ptx;
    }
    if (!gpu && !opts.cpu)
      continue;
    std::optional<Autotuner> tuner;
    TuneContext tuning;
    tuning.source = ss.str();
    tuning.options = copts;
    if (opts.tune && !opts.cpu) {
      tuner.emplace(opts.tuningDb.empty() ? Autotuner::defaultDatabasePath()
                                          : opts.tuningDb);
      tuning.tuner = &*tuner;
    }
    try {
      std::optional<Module> module;
      if (gpu) {
        Context::get();
        module.emplace(Module::loadPTX(result.ptx));
      }
      for (const KernelSignature &sig : result.kernels) {
        auto it = refs.find(sig.name);
        if (it == refs.end()) {
          std::printf("SKIP %s: no host reference\n", sig.name.c_str());
          continue;
        }
        if (!referenceSupports(sig, it->second)) {
          ++failures;
          continue;
        }
        std::optional<Kernel> kernel;
        if (gpu)
          kernel.emplace(module->getKernel(sig));
        unsigned rank = 0; // the problem's rank: the largest tensor rank
        for (const ParamInfo &p : sig.params)
          if (p.isTensor)
            rank = std::max(rank, p.rank);
        if (rank == 1) {
          for (int64_t n : opts.sizes)
            failures += !runCase(kernel ? &*kernel : nullptr, sig, it->second, {n}, opts,
                                 seed++, tuning);
        } else {
          for (const std::vector<int64_t> &shape : opts.shapes)
            failures += !runCase(kernel ? &*kernel : nullptr, sig, it->second, shape, opts,
                                 seed++, tuning);
        }
      }
    } catch (const RuntimeError &e) {
      std::fprintf(stderr, "%s\n", e.what());
      ++failures;
    } catch (const std::bad_alloc &) {
      std::fprintf(stderr, "tilec-check: not enough host memory for the problem size\n");
      ++failures;
    }
  }
  if (failures) {
    std::printf("%d failure(s)\n", failures);
    return 1;
  }
  return 0;
}
