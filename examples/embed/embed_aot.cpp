// AOT embedding: saxpy.tile was compiled at build time by tilec_add_kernels()
// into saxpy.tile.h; this program links only the tilec runtime.
#include "saxpy.tile.h"

#include <cmath>
#include <cstdio>
#include <vector>

int main() {
  const auto &sig = saxpy_kernels::signatures()[0];
  std::printf("embedded kernel %s (%u threads per block, grid %s)\n", sig.name.c_str(),
              sig.numThreads, sig.grid[0].str(sig.params).c_str());
  if (!tilec::driverAvailable() || tilec::deviceCount() == 0) {
    std::printf("no GPU: skipping the run\n");
    return 0;
  }
  try {
    const int64_t n = 1 << 20;
    std::vector<float> x(n, 1.5f), y(n, 2.0f), out(n);
    tilec::Context::get();
    tilec::Buffer dx(n * 4), dy(n * 4);
    dx.copyFromHost(x.data(), n * 4);
    dy.copyFromHost(y.data(), n * 4);
    saxpy_kernels::saxpy(4.0f, tilec::TensorArg::contiguous(dx.ptr(), {n}),
                         tilec::TensorArg::contiguous(dy.ptr(), {n}));
    dy.copyToHost(out.data(), n * 4);
    for (int64_t i = 0; i < n; ++i)
      if (std::fabs(out[i] - 8.0f) > 1e-6f) {
        std::printf("mismatch at %lld: %f\n", (long long)i, out[i]);
        return 1;
      }
    std::printf("AOT saxpy matched the host reference\n");
  } catch (const tilec::RuntimeError &e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}
