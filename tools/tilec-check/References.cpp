//===- References.cpp - tilec-check's host references ----------------------===//
//
// See References.h; the mma kernels' references are in ReferencesMma.cpp.
//
//===----------------------------------------------------------------------===//

#include "ReferencesImpl.h"

using namespace tilec;
using namespace tilec::check;

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
  addMmaReferences(refs, defines);
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
  {
    // Saturating float-to-integer casts (docs/language.md) of edge values:
    // x cycles through them; a..f are x cast to i32, u8, i64, u32, i8, u16.
    // Truncated toward zero; NaN gives 0; outside the range, its bound.
    Reference r;
    r.written = {1, 2, 3, 4, 5, 6};
    r.intTensors = {1, 2, 3, 4, 5, 6};
    r.prepare = [](std::vector<HostTensor> &host) {
      const float inf = INFINITY;
      static const float edges[] = {
          1e30f, -1e30f, NAN, 3e9f, inf, -inf, -1.0f, 300.0f, -300.0f, 2.7f, -2.7f,
          0.0f, -0.0f, 0.99f, -0.99f, 1e-30f, 127.5f, -128.5f, 255.9f, 256.0f, 65535.5f,
          65536.0f, 2147483520.0f, 2147483648.0f, -2147483648.0f, -2147483904.0f,
          4294967040.0f, 4294967296.0f, 9.2233715e18f, 9.3e18f, -9.3e18f, -NAN};
      HostTensor &x = host[0];
      for (int64_t i = 0; i < x.storageElems; ++i)
        x.values[i] = edges[i % (sizeof(edges) / sizeof(edges[0]))];
    };
    r.run = [](std::vector<HostTensor *> &ts, const std::vector<double> &) {
      // Written out here rather than shared with the interpreter, so that
      // the two are independent.
      auto saturate = [](double v, double lo, double hi) -> int64_t {
        if (std::isnan(v))
          return 0;
        if (v <= lo)
          return static_cast<int64_t>(lo);
        if (v >= hi)
          return hi >= 9.2e18 ? INT64_MAX : static_cast<int64_t>(hi);
        return static_cast<int64_t>(std::trunc(v));
      };
      const double bounds[6][2] = {{-2147483648.0, 2147483647.0},
                                   {0, 255},
                                   {-9223372036854775808.0, 9223372036854775808.0},
                                   {0, 4294967295.0},
                                   {-128, 127},
                                   {0, 65535}};
      HostTensor &x = *ts[0];
      for (int k = 0; k < 6; ++k) {
        HostTensor &out = *ts[k + 1];
        for (int64_t i = 0; i < x.sizes[0]; ++i)
          out.ints[i * out.strides[0]] =
              saturate(x.values[i * x.strides[0]], bounds[k][0], bounds[k][1]);
      }
    };
    refs["cast_edges"] = r;
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
