//===- References.cpp - tilec-check's host references ----------------------===//
//
// See References.h.
//
//===----------------------------------------------------------------------===//

#include "References.h"

#include "tilec/Interpreter.h"
#include "tilec/Runtime/Runtime.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <thread>

using namespace tilec;
using namespace tilec::check;

namespace {

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

} // namespace

/// The value of compile-time parameter `name` given with -D, or `dflt`.
static int64_t defineOr(const std::map<std::string, std::string> &defines,
                        const std::string &name, int64_t dflt) {
  auto it = defines.find(name);
  return it == defines.end() ? dflt : std::stoll(it->second);
}

std::map<std::string, Reference> tilec::check::references(const std::map<std::string, std::string> &defines) {
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
