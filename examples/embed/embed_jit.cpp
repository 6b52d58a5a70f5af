// JIT embedding in C++: compile SAXPY from source at run time (through the
// in-process and on-disk compile cache), then run it if a GPU is present.
#include "tilec/Cache.h"
#include "tilec/Compiler.h"
#include "tilec/Runtime/Runtime.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <vector>

int main(int argc, char **argv) {
  std::ifstream in(argc > 1 ? argv[1] : SAXPY_TILE);
  std::stringstream source;
  source << in.rdbuf();

  tilec::CompileOptions options;
  options.fileName = "saxpy.tile";
  options.defines["BLOCK"] = "1024";
  auto t0 = std::chrono::steady_clock::now();
  auto result = tilec::compileCached(source.str(), options);
  double ms = std::chrono::duration<double, std::milli>(
                  std::chrono::steady_clock::now() - t0).count();
  if (!result->ok) {
    std::fprintf(stderr, "%s", result->diagnostics.c_str());
    return 1;
  }
  auto stats = tilec::CompileCache::global().stats();
  std::printf("compiled %zu kernel(s) in %.3f ms (%s)\n", result->kernels.size(), ms,
              stats.diskHits ? "disk cache hit" : "compiled");

  if (!tilec::driverAvailable() || tilec::deviceCount() == 0) {
    std::printf("no GPU: skipping the run\n");
    return 0;
  }
  try {
    const int64_t n = 1000003;
    std::vector<float> x(n), y(n);
    for (int64_t i = 0; i < n; ++i) {
      x[i] = float(i % 17) * 0.25f;
      y[i] = float(i % 5);
    }
    tilec::Context::get();
    tilec::Buffer dx(n * 4), dy(n * 4);
    dx.copyFromHost(x.data(), n * 4);
    dy.copyFromHost(y.data(), n * 4);
    tilec::Module module = tilec::Module::loadPTX(result->ptx);
    tilec::Kernel saxpy = module.getKernel(result->kernels[0]);
    saxpy.launch({2.0f, tilec::TensorArg::contiguous(dx.ptr(), {n}),
                  tilec::TensorArg::contiguous(dy.ptr(), {n})});
    std::vector<float> out(n);
    dy.copyToHost(out.data(), n * 4);
    for (int64_t i = 0; i < n; ++i)
      if (std::fabs(out[i] - (2.0f * x[i] + y[i])) > 1e-5f) {
        std::printf("mismatch at %lld\n", (long long)i);
        return 1;
      }
    std::printf("saxpy over %lld elements matched the host reference\n", (long long)n);
  } catch (const tilec::RuntimeError &e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}
