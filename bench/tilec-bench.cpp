//===- tilec-bench.cpp - compile-time and launch-overhead measurements ----===//
//
//   tilec-bench compile FILE[:KERNEL]...  cold compile, in-process cache
//                                 hit and disk-cache hit in a new process
//                                 (of KERNEL alone when given)
//   tilec-bench once FILE[:KERNEL] (helper) one cached compile, prints its time
//   tilec-bench launch            CPU cost of one launch and CUDA-graph
//                                 replay vs individual launches (GPU)
//
// Medians throughout. See docs/performance.md for recorded figures.
//
//===----------------------------------------------------------------------===//

#include "tilec/Cache.h"
#include "tilec/Compiler.h"
#include "tilec/Runtime/Runtime.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Program.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

using namespace tilec;
using Clock = std::chrono::steady_clock;

static double msSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

static std::string readFile(const std::string &path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// Options for FILE or FILE:KERNEL (that kernel alone).
static CompileOptions optionsFor(const std::string &target) {
  CompileOptions opts;
  opts.fileName = target;
  if (auto colon = target.rfind(':'); colon != std::string::npos) {
    opts.fileName = target.substr(0, colon);
    opts.kernel = target.substr(colon + 1);
  }
  return opts;
}

static int compileBench(int argc, char **argv, const char *self) {
  for (int i = 0; i < argc; ++i) {
    std::string target = argv[i];
    CompileOptions opts = optionsFor(target);
    std::string file = opts.fileName;
    std::string src = readFile(file);
    // Cold: the first compile in this process, then the median of 10 more
    // (each builds a fresh MLIR context; nothing is cached).
    auto t0 = Clock::now();
    CompileResult first = compile(src, opts);
    double firstMs = msSince(t0);
    if (!first.ok) {
      std::fprintf(stderr, "%s", first.diagnostics.c_str());
      return 1;
    }
    std::vector<double> cold;
    for (int r = 0; r < 10; ++r) {
      t0 = Clock::now();
      compile(src, opts);
      cold.push_back(msSince(t0));
    }
    // In-process hit.
    CompileCache memoryOnly("", 1 << 30);
    compileCached(src, opts, memoryOnly);
    std::vector<double> hits;
    for (int r = 0; r < 2000; ++r) {
      t0 = Clock::now();
      auto hit = compileCached(src, opts, memoryOnly);
      hits.push_back(msSince(t0) * 1000.0);
      if (!hit->ok)
        return 1;
    }
    // Disk hit in a new process: `tilec-bench once` against a warm cache.
    llvm::SmallString<128> dir;
    llvm::sys::fs::createUniqueDirectory("tilec-bench-cache", dir);
    setenv("TILEC_CACHE_DIR", dir.c_str(), 1);
    std::vector<double> procMs, inCallMs;
    for (int r = 0; r < 11; ++r) {
      llvm::SmallString<128> out;
      llvm::sys::fs::createTemporaryFile("tilec-bench", "txt", out);
      t0 = Clock::now();
      std::optional<llvm::StringRef> redirects[] = {std::nullopt, llvm::StringRef(out),
                                                    std::nullopt};
      int rc = llvm::sys::ExecuteAndWait(self, {self, "once", target}, std::nullopt,
                                         redirects);
      double wall = msSince(t0);
      double inCall = std::atof(readFile(std::string(out)).c_str());
      llvm::sys::fs::remove(out);
      if (rc != 0)
        return 1;
      if (r > 0) { // the first run fills the cache
        procMs.push_back(wall);
        inCallMs.push_back(inCall);
      }
    }
    llvm::sys::fs::remove_directories(dir);
    std::printf("COMPILE %s: cold first %.1f ms, cold median %.1f ms, in-process hit "
                "%.2f us, disk hit in a new process %.2f ms in the call (%.1f ms "
                "whole process)\n",
                target.c_str(), firstMs, median(cold), median(hits), median(inCallMs),
                median(procMs));
  }
  return 0;
}

static int once(const char *target) {
  CompileOptions opts = optionsFor(target);
  std::string src = readFile(opts.fileName);
  auto t0 = Clock::now();
  auto r = compileCached(src, opts);
  std::printf("%.4f\n", msSince(t0));
  return r->ok ? 0 : 1;
}

static const char *kTiny = R"(
kernel vadd<BLOCK: int = 1024>(x: tensor<f32, 1>, y: tensor<f32, 1>, z: tensor<f32, 1>)
    grid(cdiv(z.shape[0], BLOCK))
{
    let i = block_id(0);
    store(z, [i], load(x, [i], [BLOCK]) + load(y, [i], [BLOCK]));
}
)";

static int launchBench() {
  if (!driverAvailable() || deviceCount() == 0) {
    std::printf("no GPU\n");
    return 0;
  }
  CompileResult r = compile(kTiny, CompileOptions());
  if (!r.ok)
    return 1;
  Context::get();
  Module module = Module::loadPTX(r.ptx);
  Kernel kernel = module.getKernel(r.kernels[0]);
  const int64_t n = 1024;
  Buffer x(n * 4), y(n * 4), z(n * 4);
  std::vector<ArgValue> args = {TensorArg::contiguous(x.ptr(), {n}),
                                TensorArg::contiguous(y.ptr(), {n}),
                                TensorArg::contiguous(z.ptr(), {n})};
  Stream stream;
  for (int i = 0; i < 100; ++i)
    kernel.launch(args, &stream);
  stream.synchronize();

  // CPU cost of launch(): batches of 200 asynchronous launches, on a
  // blocking stream (the default) and on a non-blocking one.
  auto launchCost = [&](Stream &s) {
    std::vector<double> perLaunchUs;
    for (int b = 0; b < 30; ++b) {
      auto t0 = Clock::now();
      for (int i = 0; i < 200; ++i)
        kernel.launch(args, &s);
      perLaunchUs.push_back(msSince(t0) * 1000.0 / 200);
      s.synchronize();
    }
    return median(perLaunchUs);
  };
  double blockingUs = launchCost(stream);
  Stream fast = Stream::nonBlocking();
  double nonBlockingUs = launchCost(fast);
  // The same without tilec's argument handling: what the driver itself costs.
  std::vector<double> rawUs;
  for (int b = 0; b < 30; ++b) {
    auto t0 = Clock::now();
    for (int i = 0; i < 200; ++i) {
      LaunchConfig c;
      prepareLaunch(kernel.signature(), args, c, kernel.gridLimits());
    }
    rawUs.push_back(msSince(t0) * 1000.0 / 200);
  }

  // 100 launches one by one vs one replay of a graph holding the same 100.
  stream.beginCapture();
  for (int i = 0; i < 100; ++i)
    kernel.launch(args, &stream);
  Graph graph = stream.endCapture();
  Event start, end;
  std::vector<double> single, replay, replayCpuUs;
  for (int rep = 0; rep < 30; ++rep) {
    start.record(stream);
    for (int i = 0; i < 100; ++i)
      kernel.launch(args, &stream);
    end.record(stream);
    end.synchronize();
    single.push_back(Event::elapsedMs(start, end));
    start.record(stream);
    auto t0 = Clock::now();
    graph.launch(stream);
    replayCpuUs.push_back(msSince(t0) * 1000.0);
    end.record(stream);
    end.synchronize();
    replay.push_back(Event::elapsedMs(start, end));
  }
  std::printf("LAUNCH %s: launch() CPU cost %.2f us median on a blocking stream, "
              "%.2f us on a non-blocking stream (one 1024-element vadd, "
              "asynchronous); of which argument checking and packing %.3f us\n",
              Context::get().deviceName().c_str(), blockingUs, nonBlockingUs,
              median(rawUs));
  std::printf("GRAPH 100 launches one by one %.1f us, one graph replay %.1f us "
              "(%.1fx faster; replay call %.1f us CPU)\n",
              median(single) * 1000, median(replay) * 1000,
              median(single) / median(replay), median(replayCpuUs));
  return 0;
}

int main(int argc, char **argv) {
  std::string cmd = argc > 1 ? argv[1] : "";
  try {
    if (cmd == "compile" && argc > 2) {
      std::string self = llvm::sys::fs::getMainExecutable(argv[0], (void *)&main);
      return compileBench(argc - 2, argv + 2, self.c_str());
    }
    if (cmd == "once" && argc == 3)
      return once(argv[2]);
    if (cmd == "launch")
      return launchBench();
  } catch (const RuntimeError &e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  std::fprintf(stderr, "usage: tilec-bench compile FILE[:KERNEL]... | launch\n");
  return 2;
}
