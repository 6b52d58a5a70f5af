//===- ReferencesMma.cpp - host references of the mma kernels ---------===//
//
// Matmuls (plain, grouped, persistent, fused epilogues, batched, tf32,
// softmax and scaled epilogues), attention and the MLP, in double.
//
//===----------------------------------------------------------------------===//

#include "ReferencesImpl.h"

#include <limits>

using namespace tilec;
using namespace tilec::check;

/// Scales Q (tensor 0, [BH, S, D]) by 1/sqrt(D), so that the attention
/// scores are O(1) and the softmax is not one-hot (attention and its
/// backward).
static void scaleQueries(std::vector<HostTensor> &ts) {
  HostTensor &q = ts[0];
  double f = 1.0 / std::sqrt(double(q.sizes[2]));
  for (float &v : q.values)
    v = static_cast<float>(roundToFloatType(q.dtype, v * f));
}

/// The dot product, in double, of row r of matrix b of x and row c of
/// matrix b of y (both [B, rows, D], or [rows, D] with b = 0): a score q.k,
/// dO.v, or x.w.
static double rowDot(const HostTensor &x, const HostTensor &y, int64_t b, int64_t r, int64_t c) {
  size_t o = x.sizes.size() - 2; // the batch dimension's count
  const float *xp = &x.values[(o ? b * x.strides[0] : 0) + r * x.strides[o]];
  const float *yp = &y.values[(o ? b * y.strides[0] : 0) + c * y.strides[o]];
  double acc = 0;
  for (int64_t d = 0; d < x.sizes[o + 1]; ++d)
    acc += double(xp[d * x.strides[o + 1]]) * yp[d * y.strides[o + 1]];
  return acc;
}

/// scaleQueries, then each query row's L (ts[4]) at the largest score the
/// row can reach (|q.k| times 1.5, the largest random scale), so that P =
/// exp(scale q.k - L) <= 1 as in a real backward pass. A random L let P
/// reach e^8 at D = 128, where dS's rounding to T of one large term (the
/// kernel's f32 and the reference's double on either side of a rounding
/// boundary) moved dQ by more than T's tolerance.
static void scaleQueriesBoundRows(std::vector<HostTensor> &ts) {
  scaleQueries(ts);
  HostTensor &q = ts[0], &k = ts[1], &l = ts[4];
  for (int64_t b = 0; b < q.sizes[0]; ++b)
    for (int64_t r = 0; r < q.sizes[1]; ++r) {
      double mx = 0;
      for (int64_t c = 0; c < k.sizes[1]; ++c)
        mx = std::max(mx, std::abs(rowDot(q, k, b, r, c)));
      l.values[b * l.strides[0] + r * l.strides[1]] = static_cast<float>(1.5 * mx);
    }
}

void tilec::check::addMmaReferences(std::map<std::string, Reference> &refs,
                                    const std::map<std::string, std::string> &defines) {
  {
    // C = A * B (+ bias, GELU in the tanh form): a problem MxNxK (MxN means
    // K = N); A is MxK (with `aKM` KxM: C = A^T B), B is KxN (with
    // `bKMajor` NxK: C = A B^T), bias has N entries. Batched: BxMxNxK, one
    // product per leading index.
    auto matmulRef = [](bool biasGelu, bool batched, bool accumulate = false,
                        bool tf32 = false, bool bKMajor = false, bool aKM = false) {
      Reference r;
      r.written = {biasGelu ? 3u : 2u};
      r.writtenAreRead = accumulate;
      // TF32: the reference rounds the operands as the GPU does, so only the
      // sums differ.
      r.rtolScale = biasGelu ? 2 : tf32 ? 200 : 1000;
      // TF32 operands: mma.sync (sm_80) rounds them (cvt.rna, as the
      // reference does), wgmma (sm_90a) truncates those it reads from
      // shared memory (the low 13 mantissa bits ignored). Each product is
      // then off by up to 2^-10 of its size with random signs over K
      // (inputs uniform in [-2, 2): a standard deviation of about 0.8 *
      // 2^-10 * sqrt(K)); allowed 5 of them, which also covers the tensor
      // cores' sums (not rounded to nearest: about 6e-4 at K = 4096 on the
      // H200). A wrong element is off by O(1).
      if (tf32)
        r.atolFor = [](const std::vector<int64_t> &shape) {
          return std::ldexp(1.0, -8) * std::sqrt(double(shape.size() > 2 ? shape[2] : shape[1]));
        };
      // GELU's tanh is tanh.approx.f32 (relative error up to about 2^-11),
      // which an f32 output shows.
      r.rtolFloor = biasGelu ? 1e-3 : 0;
      r.shapeOf = [biasGelu, batched, bKMajor, aKM](const std::vector<int64_t> &shape,
                                                    size_t k) {
        size_t o = batched ? 1 : 0;
        int64_t M = shape[o], N = shape[o + 1];
        int64_t K = shape.size() > o + 2 ? shape[o + 2] : N;
        std::vector<int64_t> dims;
        if (k == 0)
          dims = aKM ? std::vector<int64_t>{K, M} : std::vector<int64_t>{M, K};
        else if (k == 1)
          dims = bKMajor ? std::vector<int64_t>{N, K} : std::vector<int64_t>{K, N};
        else if (biasGelu && k == 2)
          return std::vector<int64_t>{N};
        else
          dims = {M, N};
        if (batched)
          dims.insert(dims.begin(), shape[0]);
        return dims;
      };
      r.run = [biasGelu, accumulate, tf32, bKMajor, aKM](std::vector<HostTensor *> &ts,
                                                         const std::vector<double> &) {
        HostTensor &a = *ts[0], &b = *ts[1], &c = *ts[biasGelu ? 3 : 2];
        size_t o = a.sizes.size() - 2; // 1 when batched
        int64_t batches = o ? a.sizes[0] : 1;
        // a's strides along M (as0) and K (as1), b's along K (bs0) and N
        // (bs1).
        int64_t M = a.sizes[aKM ? o + 1 : o], K = a.sizes[aKM ? o : o + 1],
                N = b.sizes[bKMajor ? o : o + 1];
        int64_t as0 = a.strides[aKM ? o + 1 : o], as1 = a.strides[aKM ? o : o + 1],
                bs0 = b.strides[bKMajor ? o + 1 : o], bs1 = b.strides[bKMajor ? o : o + 1],
                cs0 = c.strides[o], cs1 = c.strides[o + 1];
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
            auto operand = [tf32, bKMajor](float v) {
              if (!tf32)
                return v;
              if (!bKMajor)
                return tilec::roundToTf32(v);
              uint32_t u;
              std::memcpy(&u, &v, 4);
              u &= 0xffffe000u; // truncated
              std::memcpy(&v, &u, 4);
              return v;
            };
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
    // matmul_nt: C = A W^T, W stored N x K; matmul_tf32_nt the same in TF32.
    refs["matmul_nt"] = matmulRef(false, false, false, false, /*bKMajor=*/true);
    // matmul_tn: C = A^T B, A stored K x M (a weight gradient X^T dY).
    refs["matmul_tn"] = matmulRef(false, false, false, false, false, /*aKM=*/true);
    refs["matmul_tf32_nt"] = matmulRef(false, false, false, /*tf32=*/true, /*bKMajor=*/true);
    refs["matmul"] = matmulRef(false, false);
    refs["matmul_grouped"] = matmulRef(false, false);
    refs["matmul_persistent"] = matmulRef(false, false);
    // Split-K adds its partial products into a zeroed C (atomics in f32:
    // the order of the additions varies, within the sums' rounding).
    refs["matmul_splitk"] = matmulRef(false, false);
    refs["matmul_splitk"].zeroed = {2};
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
      // examples/matmul_stats.tile: Y = A * B rounded to T; matmul_colstats's
      // S and Q ([cdiv(M, BM), N]) the sums and sums of squares of the
      // products' columns over each block of BM rows; matmul_quant_cols's SY
      // the max |A B| of each block column over 448 (1 for a column of
      // zeros) and Y = A B / SY in f8e4m3. The tensor cores' f32 sums differ
      // from these in double by about 1e-6 of a product's size (sqrt(K) *
      // 4/3 for inputs uniform in [-2, 2)): 1e-3 relative and, for sums near
      // zero, 1e-3 of a block column sum's size absolute; a product near a
      // rounding boundary of e4m3 may round to the next value (e4m3's
      // 1.25e-1).
      int64_t BM = defineOr(defines, "BM", 128);
      auto blocksOf = [BM](int64_t M) { return (M + BM - 1) / BM; };
      auto shapeOf = [blocksOf](const std::vector<int64_t> &shape, size_t k) {
        int64_t M = shape[0], N = shape[1], K = shape.size() > 2 ? shape[2] : N;
        switch (k) {
        case 0: return std::vector<int64_t>{M, K};
        case 1: return std::vector<int64_t>{K, N};
        case 2: return std::vector<int64_t>{M, N};
        default: return std::vector<int64_t>{blocksOf(M), N};
        }
      };
      Reference stats;
      stats.written = {2, 3, 4};
      stats.rtolFloor = 1e-3;
      stats.atolFor = [BM](const std::vector<int64_t> &shape) {
        double K = double(shape.size() > 2 ? shape[2] : shape[1]);
        return 1e-3 * std::sqrt(K) * (4.0 / 3.0) * std::sqrt(double(BM));
      };
      stats.shapeOf = shapeOf;
      stats.run = [BM](std::vector<HostTensor *> &ts, const std::vector<double> &) {
        HostTensor &a = *ts[0], &b = *ts[1], &y = *ts[2], &s = *ts[3], &q = *ts[4];
        int64_t M = a.sizes[0], N = b.sizes[1];
        std::vector<double> row(static_cast<size_t>(N)), sum, sq;
        for (int64_t m = 0; m < M; ++m) {
          if (m % BM == 0) {
            sum.assign(static_cast<size_t>(N), 0.0);
            sq.assign(static_cast<size_t>(N), 0.0);
          }
          productRow(a, b, m, row);
          for (int64_t n = 0; n < N; ++n) {
            double v = row[size_t(n)];
            y.values[m * y.strides[0] + n * y.strides[1]] =
                static_cast<float>(roundToFloatType(y.dtype, v));
            sum[size_t(n)] += v;
            sq[size_t(n)] += v * v;
          }
          if (m % BM == BM - 1 || m == M - 1)
            for (int64_t n = 0; n < N; ++n) {
              s.values[(m / BM) * s.strides[0] + n * s.strides[1]] = static_cast<float>(sum[size_t(n)]);
              q.values[(m / BM) * q.strides[0] + n * q.strides[1]] = static_cast<float>(sq[size_t(n)]);
            }
        }
      };
      refs["matmul_colstats"] = stats;
      Reference quant;
      quant.written = {2, 3};
      quant.rtolFloor = 1e-5;
      quant.shapeOf = shapeOf;
      quant.run = [BM](std::vector<HostTensor *> &ts, const std::vector<double> &) {
        HostTensor &a = *ts[0], &b = *ts[1], &y = *ts[2], &sy = *ts[3];
        int64_t M = a.sizes[0], N = b.sizes[1];
        std::vector<double> row(static_cast<size_t>(N));
        for (int64_t m0 = 0; m0 < M; m0 += BM) {
          int64_t rows = std::min(BM, M - m0);
          std::vector<double> block(static_cast<size_t>(rows * N)), amax(static_cast<size_t>(N), 0.0);
          for (int64_t r = 0; r < rows; ++r) {
            productRow(a, b, m0 + r, row);
            for (int64_t n = 0; n < N; ++n) {
              block[size_t(r * N + n)] = row[size_t(n)];
              amax[size_t(n)] = std::max(amax[size_t(n)], std::fabs(row[size_t(n)]));
            }
          }
          for (int64_t n = 0; n < N; ++n) {
            float scale = amax[size_t(n)] > 0 ? float(amax[size_t(n)]) / 448.0f : 1.0f;
            sy.values[(m0 / BM) * sy.strides[0] + n * sy.strides[1]] = scale;
            for (int64_t r = 0; r < rows; ++r)
              y.values[(m0 + r) * y.strides[0] + n * y.strides[1]] = static_cast<float>(
                  roundToFloatType(y.dtype, float(block[size_t(r * N + n)]) / scale));
          }
        }
      };
      refs["matmul_quant_cols"] = quant;
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
    {
      // FP8 (examples/matmul_fp8.tile): C = (A B^T) scaled, A M x K, B N x K.
      // matmul_fp8: SCALE = 0 one scale each in SA and SB, 1 one per row of
      // A and per row of B; matmul_fp8_block: SA per row and 128 of K, SB
      // per 128 x 128 block of B, applied to each 128 of K's partial sum.
      // The products of f8 values are exact in f32, but wgmma's f8 sums keep
      // fewer bits than an f32 add (about 2^-13 of the running sum per
      // step, measured by DeepSeek-V3 on Hopper), so besides bf16's rounding
      // of C an absolute 6 sigma of a random walk of K steps of that size:
      // terms of RMS 16/9 (inputs uniform in [-2, 2)) times the scales.
      auto fp8Ref = [&defines](bool block) {
        int64_t scaleKind = defineOr(defines, "SCALE", 0);
        Reference r;
        r.written = {2};
        r.rtolScale = 2;
        r.atolFor = [](const std::vector<int64_t> &shape) {
          double K = double(shape.size() > 2 ? shape[2] : shape[1]);
          return 6.0 * std::sqrt(K) * (16.0 / 9.0) * 4.0 * std::ldexp(1.0, -13) * std::sqrt(K);
          // = 6 sigma of sqrt(K) steps of 2^-13 of a sum of RMS sqrt(K) 16/9,
          // times scales up to 2 x 2.
        };
        r.shapeOf = [block, scaleKind](const std::vector<int64_t> &shape, size_t k) {
          int64_t M = shape[0], N = shape[1], K = shape.size() > 2 ? shape[2] : N;
          int64_t KB = (K + 127) / 128;
          switch (k) {
          case 0: return std::vector<int64_t>{M, K};
          case 1: return std::vector<int64_t>{N, K};
          case 2: return std::vector<int64_t>{M, N};
          case 3: return block ? std::vector<int64_t>{M, KB}
                               : std::vector<int64_t>{scaleKind ? M : 1};
          default: return block ? std::vector<int64_t>{(N + 127) / 128, KB}
                                : std::vector<int64_t>{scaleKind ? N : 1};
          }
        };
        r.run = [block, scaleKind](std::vector<HostTensor *> &ts, const std::vector<double> &) {
          HostTensor &a = *ts[0], &b = *ts[1], &c = *ts[2], &sa = *ts[3], &sb = *ts[4];
          int64_t M = a.sizes[0], K = a.sizes[1], N = b.sizes[0];
          auto rowsFrom = [&](int64_t begin, int64_t end) {
            for (int64_t m = begin; m < end; ++m)
              for (int64_t n = 0; n < N; ++n) {
                double sum = 0;
                for (int64_t k0 = 0; k0 < K; k0 += 128) {
                  double part = 0;
                  for (int64_t k = k0; k < std::min(K, k0 + 128); ++k)
                    part += double(a.values[m * a.strides[0] + k * a.strides[1]]) *
                            double(b.values[n * b.strides[0] + k * b.strides[1]]);
                  if (block)
                    part *= double(sa.values[m * sa.strides[0] + (k0 / 128) * sa.strides[1]]) *
                            double(sb.values[(n / 128) * sb.strides[0] +
                                             (k0 / 128) * sb.strides[1]]);
                  sum += part;
                }
                if (!block)
                  sum *= double(sa.values[scaleKind ? m * sa.strides[0] : 0]) *
                         double(sb.values[scaleKind ? n * sb.strides[0] : 0]);
                c.values[m * c.strides[0] + n * c.strides[1]] =
                    static_cast<float>(roundToFloatType(c.dtype, sum));
              }
          };
          parallelRows(M, M * N * K, rowsFrom);
        };
        return r;
      };
      refs["matmul_fp8"] = fp8Ref(false);
      refs["matmul_fp8_block"] = fp8Ref(true);
      refs["matmul_fp8_block_pipelined"] = fp8Ref(true);
      // quantize_rows: S[r] = max |X[r, :]| / FMAX, Q = X / S in f8 (the
      // division and the rounding as the GPU does them: f32, then to F).
      Reference q;
      q.written = {1, 2};
      q.rtolScale = 1;
      q.shapeOf = [](const std::vector<int64_t> &shape, size_t k) {
        return k == 2 ? std::vector<int64_t>{shape[0]} : shape;
      };
      double fmax = double(defineOr(defines, "FMAX", 448));
      q.run = [fmax](std::vector<HostTensor *> &ts, const std::vector<double> &) {
        HostTensor &x = *ts[0], &qt = *ts[1], &s = *ts[2];
        int64_t M = x.sizes[0], K = x.sizes[1];
        for (int64_t r = 0; r < M; ++r) {
          float amax = 0;
          for (int64_t k = 0; k < K; ++k)
            amax = std::max(amax, std::fabs(x.values[r * x.strides[0] + k * x.strides[1]]));
          float sc = std::max(amax, 1.0e-30f) / float(fmax);
          s.values[r * s.strides[0]] = sc;
          for (int64_t k = 0; k < K; ++k)
            qt.values[r * qt.strides[0] + k * qt.strides[1]] = static_cast<float>(
                roundToFloatType(qt.dtype, x.values[r * x.strides[0] + k * x.strides[1]] / sc));
        }
      };
      refs["quantize_rows"] = q;
    }
  }
  {
    // Attention (examples/attention.tile): the problem shape is
    // BH x Sq x Sk x D; O = softmax(scale * Q K^T (masked)) V per head and
    // L = the rows' log-sum-exp, in double (causal aligned to the
    // bottom-right corner: with Sq > Sk the first rows see no key). Q is
    // scaled by 1/sqrt(D) on entry so that the scores are O(1) and the
    // softmax is not one-hot. The GPU rounds P to T before P V: O is within
    // T's tolerance, L (f32, from ex2/lg2.approx) within 2e-4.
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
    r.prepare = scaleQueries;
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
            s[c] = rowDot(q, k, b, r, c) * scale;
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
          // A row that sees no key (causal with Sq > Sk): zeros and -inf.
          for (int64_t d = 0; d < D; ++d)
            o.values[b * o.strides[0] + r * o.strides[1] + d * o.strides[2]] =
                last < 0 ? 0.0f : static_cast<float>(roundToFloatType(o.dtype, out[d] / sum));
          l.values[b * l.strides[0] + r * l.strides[1]] =
              last < 0 ? -std::numeric_limits<float>::infinity()
                       : static_cast<float>(mx + std::log(sum));
        }
      };
      parallelRows(BH * Sq, BH * Sq * Sk * D, rowsFrom);
    };
    refs["attention"] = r;
  }
  {
    // Attention backward (examples/attention_backward.tile): the problem
    // shape is BH x Sq x Sk x D as for attention. L bounds each row's
    // scores (scaleQueriesBoundRows: P <= 1; the kernels take P = exp(scale
    // * q.k - L) as given), Delta any row value. P and
    // dS = P (dP - Delta) are rounded to T as the kernels round them before
    // their mmas; dQ = scale dS K, dK = scale dS^T Q, dV = P^T dO, in double.
    // Tensors: Q, K, V, dO, L, Delta, then dQ or dK, dV (delta: O, dO,
    // Delta).
    bool causal = defineOr(defines, "CAUSAL", 0) != 0;
    auto shapeOf = [](const std::vector<int64_t> &shape, size_t k, bool keysAt) {
      int64_t BH = shape[0], Sq = shape[1], Sk = shape.size() > 2 ? shape[2] : Sq;
      int64_t D = shape.size() > 3 ? shape[3] : 64;
      if (k == 1 || k == 2 || keysAt)
        return std::vector<int64_t>{BH, Sk, D};
      if (k == 4 || k == 5)
        return std::vector<int64_t>{BH, Sq};
      return std::vector<int64_t>{BH, Sq, D};
    };
    // P and dS of query row r and key c of head b (0 where masked), rounded
    // to T.
    struct Scores {
      HostTensor &q, &k, &v, &dout, &l, &delta;
      double scale;
      bool causal;
      std::pair<double, double> at(int64_t b, int64_t r, int64_t c) const {
        int64_t Sq = q.sizes[1], Sk = k.sizes[1];
        if (causal && c > r + Sk - Sq)
          return {0.0, 0.0};
        double s = rowDot(q, k, b, r, c), dp = rowDot(dout, v, b, r, c);
        double p = std::exp(scale * s - l.values[b * l.strides[0] + r * l.strides[1]]);
        double ds = p * (dp - delta.values[b * delta.strides[0] + r * delta.strides[1]]);
        return {roundToFloatType(q.dtype, p), roundToFloatType(q.dtype, ds)};
      }
    };
    auto atolFor = [](const std::vector<int64_t> &shape) {
      return 0.05 * std::sqrt(double(shape.size() > 2 ? shape[2] : shape[1]));
    };
    Reference dq;
    dq.written = {6};
    dq.shapeOf = [shapeOf](const std::vector<int64_t> &shape, size_t k) {
      return shapeOf(shape, k, false);
    };
    dq.prepare = scaleQueriesBoundRows;
    dq.atolFor = atolFor;
    dq.run = [causal](std::vector<HostTensor *> &ts, const std::vector<double> &scalars) {
      Scores sc{*ts[0], *ts[1], *ts[2], *ts[3], *ts[4], *ts[5], scalars[0], causal};
      HostTensor &out = *ts[6], &k = *ts[1];
      int64_t Sq = sc.q.sizes[1], Sk = k.sizes[1], D = sc.q.sizes[2];
      parallelRows(sc.q.sizes[0] * Sq, sc.q.sizes[0] * Sq * Sk * D, [&](int64_t begin, int64_t end) {
        std::vector<double> acc(static_cast<size_t>(D));
        for (int64_t rr = begin; rr < end; ++rr) {
          int64_t b = rr / Sq, r = rr % Sq;
          std::fill(acc.begin(), acc.end(), 0.0);
          for (int64_t c = 0; c < Sk; ++c) {
            double ds = sc.at(b, r, c).second;
            for (int64_t d = 0; d < D && ds != 0; ++d)
              acc[d] += ds * k.values[b * k.strides[0] + c * k.strides[1] + d * k.strides[2]];
          }
          for (int64_t d = 0; d < D; ++d)
            out.values[b * out.strides[0] + r * out.strides[1] + d * out.strides[2]] =
                static_cast<float>(roundToFloatType(out.dtype, acc[d] * sc.scale));
        }
      });
    };
    refs["attention_bwd_dq"] = dq;
    Reference dkdv;
    dkdv.written = {6, 7};
    dkdv.shapeOf = [shapeOf](const std::vector<int64_t> &shape, size_t k) {
      return shapeOf(shape, k, k == 6 || k == 7);
    };
    dkdv.prepare = scaleQueriesBoundRows;
    dkdv.atolFor = atolFor;
    dkdv.run = [causal](std::vector<HostTensor *> &ts, const std::vector<double> &scalars) {
      Scores sc{*ts[0], *ts[1], *ts[2], *ts[3], *ts[4], *ts[5], scalars[0], causal};
      HostTensor &dk = *ts[6], &dv = *ts[7], &q = *ts[0], &dout = *ts[3];
      int64_t Sq = q.sizes[1], Sk = sc.k.sizes[1], D = q.sizes[2];
      parallelRows(q.sizes[0] * Sk, q.sizes[0] * Sq * Sk * D, [&](int64_t begin, int64_t end) {
        std::vector<double> ak(static_cast<size_t>(D)), av(static_cast<size_t>(D));
        for (int64_t cc = begin; cc < end; ++cc) {
          int64_t b = cc / Sk, c = cc % Sk;
          std::fill(ak.begin(), ak.end(), 0.0);
          std::fill(av.begin(), av.end(), 0.0);
          for (int64_t r = 0; r < Sq; ++r) {
            auto [p, ds] = sc.at(b, r, c);
            for (int64_t d = 0; d < D && (p != 0 || ds != 0); ++d) {
              ak[d] += ds * q.values[b * q.strides[0] + r * q.strides[1] + d * q.strides[2]];
              av[d] += p * dout.values[b * dout.strides[0] + r * dout.strides[1] + d * dout.strides[2]];
            }
          }
          for (int64_t d = 0; d < D; ++d) {
            dk.values[b * dk.strides[0] + c * dk.strides[1] + d * dk.strides[2]] =
                static_cast<float>(roundToFloatType(dk.dtype, ak[d] * sc.scale));
            dv.values[b * dv.strides[0] + c * dv.strides[1] + d * dv.strides[2]] =
                static_cast<float>(roundToFloatType(dv.dtype, av[d]));
          }
        }
      });
    };
    refs["attention_bwd_dkdv"] = dkdv;
    // Delta = rowsum(O * dO), for the same problem shape (Sk unused).
    Reference delta;
    delta.written = {2};
    delta.rtolFloor = 1e-5;
    delta.shapeOf = [](const std::vector<int64_t> &shape, size_t k) {
      int64_t D = shape.size() > 3 ? shape[3] : 64;
      return k == 2 ? std::vector<int64_t>{shape[0], shape[1]}
                    : std::vector<int64_t>{shape[0], shape[1], D};
    };
    delta.run = [](std::vector<HostTensor *> &ts, const std::vector<double> &) {
      HostTensor &o = *ts[0], &dout = *ts[1], &out = *ts[2];
      int64_t BH = o.sizes[0], S = o.sizes[1], D = o.sizes[2];
      for (int64_t b = 0; b < BH; ++b)
        for (int64_t r = 0; r < S; ++r) {
          double acc = 0;
          for (int64_t d = 0; d < D; ++d)
            acc += double(o.values[b * o.strides[0] + r * o.strides[1] + d * o.strides[2]]) *
                   dout.values[b * dout.strides[0] + r * dout.strides[1] + d * dout.strides[2]];
          out.values[b * out.strides[0] + r * out.strides[1]] = static_cast<float>(acc);
        }
    };
    refs["attention_bwd_delta"] = delta;
  }
  {
    // y = gelu(x W1 + b1) W2 (examples/mlp.tile): the problem shape is
    // M x Din x H x Dout. gelu is the tanh form; g is rounded to T before
    // the second product, as the kernel does (cast<T>(g)).
    Reference r;
    r.written = {4};
    r.rtolScale = 2;
    // The hidden values grow as sqrt(Din) (inputs in [-2, 2)), and so does
    // one step of T where the kernel's f32 sum of h and the double one
    // round g to neighbouring values of T (rare, but each moves an output
    // by a step times a W2 value): a sum over H of such steps near an
    // output of about 0 is what the absolute part must cover (mlp_wide at
    // Din = 1024 on the H200 missed it by up to 0.2 at 3 of 300,000
    // outputs; the one printed wanted 3.45 and got 2.69).
    r.atolFor = [](const std::vector<int64_t> &shape) {
      double din = double(shape.size() > 1 ? shape[1] : 64);
      return 0.02 * std::sqrt(double(shape.size() > 2 ? shape[2] : 64)) *
             std::max(1.0, std::sqrt(din / 128));
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
    refs["mlp_wide"] = r; // the same MLP for any input width
  }
  {
    // Y = X W^T + scale (X A^T) B^T (examples/lora.tile): the problem shape
    // is M x K x N x rank (16 when absent); W is N x K, A rank x K, B N x
    // rank. t = scale X A^T is rounded to T before the second product, as
    // the kernel does (cast<T>(t * scale)).
    Reference r;
    r.written = {4};
    r.rtolScale = 2;
    r.atolFor = [](const std::vector<int64_t> &shape) {
      return 0.02 * std::sqrt(double(shape.size() > 1 ? shape[1] : 64));
    };
    r.shapeOf = [](const std::vector<int64_t> &shape, size_t k) {
      int64_t M = shape[0], K = shape.size() > 1 ? shape[1] : 64,
              N = shape.size() > 2 ? shape[2] : 128, rank = shape.size() > 3 ? shape[3] : 16;
      switch (k) {
      case 0: return std::vector<int64_t>{M, K};
      case 1: return std::vector<int64_t>{N, K};
      case 2: return std::vector<int64_t>{rank, K};
      case 3: return std::vector<int64_t>{N, rank};
      default: return std::vector<int64_t>{M, N};
      }
    };
    r.run = [](std::vector<HostTensor *> &ts, const std::vector<double> &scalars) {
      HostTensor &x = *ts[0], &w = *ts[1], &a = *ts[2], &b = *ts[3], &y = *ts[4];
      int64_t M = x.sizes[0], K = x.sizes[1], N = w.sizes[0], rank = a.sizes[0];
      double scale = scalars[0];
      auto rowsFrom = [&](int64_t begin, int64_t end) {
        std::vector<double> t(static_cast<size_t>(rank));
        for (int64_t m = begin; m < end; ++m) {
          for (int64_t r = 0; r < rank; ++r)
            t[r] = roundToFloatType(x.dtype, float(float(rowDot(x, a, 0, m, r)) * scale));
          for (int64_t n = 0; n < N; ++n) {
            double out = rowDot(x, w, 0, m, n);
            for (int64_t r = 0; r < rank; ++r)
              out += t[r] * b.values[n * b.strides[0] + r * b.strides[1]];
            y.values[m * y.strides[0] + n * y.strides[1]] =
                static_cast<float>(roundToFloatType(y.dtype, out));
          }
        }
      };
      parallelRows(M, M * K * (N + rank), rowsFrom);
    };
    refs["lora"] = r;
  }
  {
    // H = silu(X Wg^T) * (X Wu^T) (examples/mlp.tile's swiglu): the problem
    // shape is M x K x N; Wg and Wu are N x K (torch.nn.Linear weights).
    Reference r;
    r.written = {3};
    r.rtolScale = 2;
    r.atolFor = [](const std::vector<int64_t> &shape) {
      return 0.02 * std::sqrt(double(shape.size() > 1 ? shape[1] : 64));
    };
    r.shapeOf = [](const std::vector<int64_t> &shape, size_t k) {
      int64_t M = shape[0], K = shape.size() > 1 ? shape[1] : 64,
              N = shape.size() > 2 ? shape[2] : 64;
      switch (k) {
      case 0: return std::vector<int64_t>{M, K};
      case 1: case 2: return std::vector<int64_t>{N, K};
      default: return std::vector<int64_t>{M, N};
      }
    };
    r.run = [](std::vector<HostTensor *> &ts, const std::vector<double> &) {
      HostTensor &x = *ts[0], &wg = *ts[1], &wu = *ts[2], &h = *ts[3];
      int64_t M = x.sizes[0], K = x.sizes[1], N = wg.sizes[0];
      auto rowsFrom = [&](int64_t begin, int64_t end) {
        for (int64_t m = begin; m < end; ++m)
          for (int64_t n = 0; n < N; ++n) {
            double g = 0, u = 0;
            for (int64_t k = 0; k < K; ++k) {
              double a = x.values[m * x.strides[0] + k * x.strides[1]];
              g += a * wg.values[n * wg.strides[0] + k * wg.strides[1]];
              u += a * wu.values[n * wu.strides[0] + k * wu.strides[1]];
            }
            h.values[m * h.strides[0] + n * h.strides[1]] =
                static_cast<float>(roundToFloatType(h.dtype, g / (1.0 + std::exp(-g)) * u));
          }
      };
      parallelRows(M, M * N * K, rowsFrom);
    };
    refs["swiglu"] = r;
  }
  {
    // Y = X (Wq * s[:, None])^T (examples/quantized.tile): the problem
    // shape is M x K x N; Wq is an N x K int8 tensor, s N scales.
    Reference r;
    r.written = {3};
    r.intTensors = {1};
    r.atolFor = [](const std::vector<int64_t> &shape) {
      return 0.5 * std::sqrt(double(shape.size() > 1 ? shape[1] : 64));
    };
    r.shapeOf = [](const std::vector<int64_t> &shape, size_t k) {
      int64_t M = shape[0], K = shape.size() > 1 ? shape[1] : 64,
              N = shape.size() > 2 ? shape[2] : 128;
      switch (k) {
      case 0: return std::vector<int64_t>{M, K};
      case 1: return std::vector<int64_t>{N, K};
      case 2: return std::vector<int64_t>{N};
      default: return std::vector<int64_t>{M, N};
      }
    };
    r.run = [](std::vector<HostTensor *> &ts, const std::vector<double> &) {
      HostTensor &x = *ts[0], &wq = *ts[1], &sc = *ts[2], &y = *ts[3];
      int64_t M = x.sizes[0], K = x.sizes[1], N = wq.sizes[0];
      auto rowsFrom = [&](int64_t begin, int64_t end) {
        for (int64_t m = begin; m < end; ++m)
          for (int64_t n = 0; n < N; ++n) {
            double out = 0;
            for (int64_t k = 0; k < K; ++k)
              out += double(x.values[m * x.strides[0] + k * x.strides[1]]) *
                     double(wq.ints[n * wq.strides[0] + k * wq.strides[1]]);
            y.values[m * y.strides[0] + n * y.strides[1]] = static_cast<float>(
                roundToFloatType(y.dtype, out * sc.values[n * sc.strides[0]]));
          }
      };
      parallelRows(M, M * N * K, rowsFrom);
    };
    refs["linear_w8a16"] = r;
  }
  for (bool folded : {false, true}) {
    // Y = rmsnorm(X) W^T (examples/norm_linear.tile): the problem shape is
    // M x K x N; W is N x K, g (rmsnorm_linear only) K. Each row's divisor
    // sqrt(mean(x^2) + eps) scales the product of the row; x * g is rounded
    // to T before it, as the kernel does (cast<T>(x * g)).
    Reference r;
    r.written = {folded ? 2u : 3u};
    r.rtolScale = 2;
    r.atolFor = [](const std::vector<int64_t> &shape) {
      return 0.02 * std::sqrt(double(shape.size() > 1 ? shape[1] : 64));
    };
    r.shapeOf = [folded](const std::vector<int64_t> &shape, size_t k) {
      int64_t M = shape[0], K = shape.size() > 1 ? shape[1] : 64,
              N = shape.size() > 2 ? shape[2] : 128;
      if (folded && k >= 1)
        ++k; // no g
      switch (k) {
      case 0: return std::vector<int64_t>{M, K};
      case 1: return std::vector<int64_t>{K};
      case 2: return std::vector<int64_t>{N, K};
      default: return std::vector<int64_t>{M, N};
      }
    };
    r.run = [folded](std::vector<HostTensor *> &ts, const std::vector<double> &scalars) {
      HostTensor &x = *ts[0], &w = *ts[folded ? 1 : 2], &y = *ts[folded ? 2 : 3];
      const HostTensor *g = folded ? nullptr : ts[1];
      int64_t M = x.sizes[0], K = x.sizes[1], N = w.sizes[0];
      double eps = scalars[0];
      auto rowsFrom = [&](int64_t begin, int64_t end) {
        std::vector<double> xg(static_cast<size_t>(K));
        for (int64_t m = begin; m < end; ++m) {
          double squares = 0;
          for (int64_t k = 0; k < K; ++k) {
            double v = x.values[m * x.strides[0] + k * x.strides[1]];
            squares += v * v;
            xg[k] = g ? roundToFloatType(x.dtype, float(float(v) * g->values[k * g->strides[0]]))
                      : v;
          }
          double scale = 1.0 / std::sqrt(squares / double(K) + eps);
          for (int64_t n = 0; n < N; ++n) {
            double out = 0;
            for (int64_t k = 0; k < K; ++k)
              out += xg[k] * w.values[n * w.strides[0] + k * w.strides[1]];
            y.values[m * y.strides[0] + n * y.strides[1]] =
                static_cast<float>(roundToFloatType(y.dtype, out * scale));
          }
        }
      };
      parallelRows(M, M * N * K, rowsFrom);
    };
    refs[folded ? "rmsnorm_linear_folded" : "rmsnorm_linear"] = r;
  }
}
