//===- RuntimeDeviceTest.cpp - the runtime's tests on a GPU ---------------===//
//
// The driver-backed parts of the runtime on machines with a GPU, where
// hand-written PTX kernels check launches end to end (contexts, buffers,
// streams, events, launches, where tensors live, grid limits, shared
// memory, errors, graph capture). They skip themselves when no driver or
// device is present.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestUtil.h"
#include "tilec/Runtime/Runtime.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

using namespace tilec;
using namespace tilec::runtime_test;

namespace {

//===----------------------------------------------------------------------===//
// On a GPU (hand-written PTX following the launch ABI)
//===----------------------------------------------------------------------===//

bool haveDevice() { return driverAvailable() && deviceCount() > 0; }

#define REQUIRE_DEVICE()                                                       \
  if (!haveDevice())                                                           \
  GTEST_SKIP() << "no CUDA device"

const char *ptxHeader = ".version 8.0\n.target sm_80\n.address_size 64\n";

// y[i*ys] = a * x[i*xs] + y[i*ys] for i < x.shape[0].
const char *saxpyPTX = R"(
.visible .entry saxpy(.param .f32 a, .param .u64 xp, .param .u64 xn,
                      .param .u64 xs, .param .u64 yp, .param .u64 yn,
                      .param .u64 ys)
{
  .reg .pred %p;
  .reg .b32 %r<4>;
  .reg .f32 %f<4>;
  .reg .b64 %rd<10>;
  ld.param.f32 %f1, [a];
  ld.param.u64 %rd1, [xp];
  ld.param.u64 %rd2, [xn];
  ld.param.u64 %rd3, [xs];
  ld.param.u64 %rd4, [yp];
  ld.param.u64 %rd5, [ys];
  mov.u32 %r1, %ctaid.x;
  mov.u32 %r2, %ntid.x;
  mov.u32 %r3, %tid.x;
  mul.wide.u32 %rd6, %r1, %r2;
  cvt.u64.u32 %rd7, %r3;
  add.s64 %rd6, %rd6, %rd7;
  setp.ge.s64 %p, %rd6, %rd2;
  @%p bra DONE;
  mul.lo.s64 %rd8, %rd6, %rd3;
  shl.b64 %rd8, %rd8, 2;
  add.s64 %rd8, %rd1, %rd8;
  ld.global.f32 %f2, [%rd8];
  mul.lo.s64 %rd9, %rd6, %rd5;
  shl.b64 %rd9, %rd9, 2;
  add.s64 %rd9, %rd4, %rd9;
  ld.global.f32 %f3, [%rd9];
  fma.rn.f32 %f3, %f1, %f2, %f3;
  st.global.f32 [%rd9], %f3;
DONE:
  ret;
}

// out[0..3] = (f64) a, b, c, n.
.visible .entry mixed(.param .s8 a, .param .f64 b, .param .b16 c,
                      .param .s32 n, .param .u64 op, .param .u64 on,
                      .param .u64 os)
{
  .reg .b16 %rs<3>;
  .reg .b32 %r<2>;
  .reg .f64 %fd<5>;
  .reg .b64 %rd<2>;
  ld.param.s8 %rs1, [a];
  ld.param.f64 %fd1, [b];
  ld.param.b16 %rs2, [c];
  ld.param.s32 %r1, [n];
  ld.param.u64 %rd1, [op];
  cvt.rn.f64.s16 %fd2, %rs1;
  cvt.f64.f16 %fd3, %rs2;
  cvt.rn.f64.s32 %fd4, %r1;
  st.global.f64 [%rd1], %fd2;
  st.global.f64 [%rd1+8], %fd1;
  st.global.f64 [%rd1+16], %fd3;
  st.global.f64 [%rd1+24], %fd4;
  ret;
}

// Writes through the last word of 64 KiB of dynamic shared memory.
.extern .shared .align 16 .b8 smem[];
.visible .entry bigshared(.param .u64 op, .param .u64 on, .param .u64 os)
{
  .reg .b32 %r<2>;
  .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [op];
  mov.u32 %r1, 42;
  st.shared.u32 [smem+65532], %r1;
  bar.sync 0;
  ld.shared.u32 %r1, [smem+65532];
  st.global.u32 [%rd1], %r1;
  ret;
}
)";

TEST(DeviceTest, ContextInfo) {
  REQUIRE_DEVICE();
  Context &ctx = Context::get();
  EXPECT_EQ(&ctx, &Context::get(0));
  EXPECT_FALSE(ctx.deviceName().empty());
  EXPECT_GE(ctx.computeCapability(), 50);
  EXPECT_GT(ctx.multiprocessorCount(), 0);
  ctx.synchronize();
  EXPECT_NE(errorOf([] { Context::get(deviceCount()); })
                .find("there is no CUDA device"),
            std::string::npos);
}

TEST(DeviceTest, BuffersStreamsEvents) {
  REQUIRE_DEVICE();
  std::vector<int32_t> host(1 << 20);
  for (size_t i = 0; i < host.size(); ++i)
    host[i] = int32_t(i * 7);
  size_t bytes = host.size() * 4;
  Buffer a(bytes), b(bytes);
  EXPECT_NE(a.ptr(), 0u);
  EXPECT_EQ(a.size(), bytes);
  a.copyFromHost(host.data(), bytes);
  Stream stream;
  Event start, end;
  start.record(stream);
  b.copyFrom(a, bytes, &stream);
  end.record(stream);
  end.synchronize();
  EXPECT_GE(Event::elapsedMs(start, end), 0.0f);
  std::vector<int32_t> back(host.size());
  b.copyToHost(back.data(), bytes);
  EXPECT_EQ(back, host);
  b.memsetZero();
  b.copyToHost(back.data(), bytes);
  EXPECT_EQ(back, std::vector<int32_t>(host.size(), 0));
  Buffer moved = std::move(a);
  EXPECT_EQ(a.ptr(), 0u);
  EXPECT_EQ(moved.size(), bytes);
  b.copyFrom(moved, 16); // Default stream.
  Stream::defaultStream().synchronize();
  stream.synchronize();
  EXPECT_NE(errorOf([&] { moved.copyToHost(back.data(), bytes + 4); })
                .find("exceeds a buffer of"),
            std::string::npos);
}

TEST(DeviceTest, SaxpyLaunch) {
  REQUIRE_DEVICE();
  Module module = Module::loadPTX(std::string(ptxHeader) + saxpyPTX);
  Kernel kernel = module.getKernel(saxpySignature(256));
  const int64_t n = 1000; // Not a multiple of the block.
  std::vector<float> x(2 * n), y(n + 1, 1.0f);
  for (int64_t i = 0; i < 2 * n; ++i)
    x[i] = float(i);
  Buffer xb(x.size() * 4), yb(y.size() * 4);
  xb.copyFromHost(x.data(), xb.size());
  yb.copyFromHost(y.data(), yb.size());
  // x is viewed with stride 2 to check that strides arrive.
  std::vector<ArgValue> args = {2.0f, TensorArg{xb.ptr(), {n}, {2}},
                                TensorArg::contiguous(yb.ptr(), {n})};
  EXPECT_EQ(kernel.gridFor(args), (std::array<uint32_t, 3>{4, 1, 1}));
  Stream stream;
  kernel.launch(args, &stream);
  stream.synchronize();
  yb.copyToHost(y.data(), yb.size());
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(y[i], 2.0f * float(2 * i) + 1.0f) << "i = " << i;
  EXPECT_EQ(y[n], 1.0f); // Past the end: untouched.
  // An empty grid launches nothing.
  kernel.launch({2.0f, TensorArg::contiguous(0, {0}),
                 TensorArg::contiguous(0, {0})});
  Context::get().synchronize();
}

// A tensor in memory the kernel's device cannot read is an ArgumentError
// naming the kernel and the parameter, found by asking the driver (issue
// 17, item 6: a host pointer reached the kernel). Where the device reads
// pageable host memory (HMM, ATS) a host pointer is valid instead.
TEST(DeviceTest, TensorMemoryIsChecked) {
  REQUIRE_DEVICE();
  Module module = Module::loadPTX(std::string(ptxHeader) + saxpyPTX);
  Kernel kernel = module.getKernel(saxpySignature(256));
  const int64_t n = 1000;
  std::vector<float> x(n, 1.0f), y(n, 1.0f);
  Buffer yb(n * 4);
  yb.copyFromHost(y.data(), yb.size());
  uint64_t hostPtr = reinterpret_cast<uintptr_t>(x.data());
  std::vector<ArgValue> args = {2.0f, TensorArg::contiguous(hostPtr, {n}),
                                TensorArg::contiguous(yb.ptr(), {n})};
  if (Context::get().pageableMemoryAccess()) {
    kernel.launch(args);
    Context::get().synchronize();
    yb.copyToHost(y.data(), yb.size());
    for (int64_t i = 0; i < n; ++i)
      ASSERT_EQ(y[i], 3.0f) << i;
    GTEST_SKIP() << "this device reads pageable host memory";
  }
  for (int prepared = 0; prepared < 2; ++prepared) {
    std::string msg;
    try {
      LaunchConfig config;
      if (prepared)
        kernel.prepare(args, config);
      else
        kernel.launch(args);
      ADD_FAILURE() << "expected an ArgumentError";
    } catch (const ArgumentError &e) {
      msg = e.what();
    }
    EXPECT_NE(msg.find("kernel 'saxpy': argument 2 ('x') at 0x"), std::string::npos) << msg;
    EXPECT_NE(msg.find("is not device memory (a host pointer?)"), std::string::npos) << msg;
  }
  // Device memory launches, twice (the second finds the allocation checked).
  Buffer xb(n * 4);
  xb.copyFromHost(x.data(), xb.size());
  args[1] = TensorArg::contiguous(xb.ptr(), {n});
  kernel.launch(args);
  kernel.launch(args);
  Context::get().synchronize();
  yb.copyToHost(y.data(), yb.size());
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(y[i], 5.0f) << i;
  // A part of a checked allocation is checked too; an empty tensor is not.
  args[1] = TensorArg::contiguous(xb.ptr() + 400, {n - 100});
  kernel.launch(args);
  kernel.launch({2.0f, TensorArg::contiguous(hostPtr, {0}), TensorArg::contiguous(yb.ptr(), {0})});
  Context::get().synchronize();
  if (deviceCount() > 1) {
    Context::get(1);
    {
      Buffer elsewhere(n * 4);
      Context::get(0);
      args[1] = TensorArg::contiguous(elsewhere.ptr(), {n});
      EXPECT_NE(errorOf([&] { kernel.launch(args); })
                    .find("kernel 'saxpy': argument 2 ('x') at 0x"),
                std::string::npos);
      EXPECT_NE(errorOf([&] { kernel.launch(args); })
                    .find("is memory of CUDA device 1, but the kernel's module is loaded on "
                          "device 0"),
                std::string::npos);
      Context::get(1);
    }
    Context::get(0);
  }
}

TEST(DeviceTest, GridLimitsFromTheDevice) {
  REQUIRE_DEVICE();
  Module module = Module::loadPTX(std::string(ptxHeader) + saxpyPTX);
  KernelSignature sig = saxpySignature(256);
  sig.grid = {leaf(K::ResidentPrograms, 0), leaf(K::NumSMs, 0)};
  Kernel kernel = module.getKernel(sig);
  const GridLimits &limits = kernel.gridLimits();
  EXPECT_EQ(limits.numSMs, Context::get().multiprocessorCount());
  // A tiny kernel of 256 threads: at least 4 fit on an SM of any GPU since
  // Kepler (2048 threads per SM on sm_80/sm_90, 1536 on some).
  EXPECT_GE(limits.residentPrograms, 4 * limits.numSMs);
  EXPECT_EQ(limits.residentPrograms % limits.numSMs, 0);
  std::vector<ArgValue> args = {2.0f, TensorArg::contiguous(0, {0}),
                                TensorArg::contiguous(0, {0})};
  EXPECT_EQ(kernel.gridFor(args),
            (std::array<uint32_t, 3>{uint32_t(limits.residentPrograms),
                                     uint32_t(limits.numSMs), 1}));
}

TEST(DeviceTest, MixedScalarLaunch) {
  REQUIRE_DEVICE();
  Module module = Module::loadPTX(std::string(ptxHeader) + saxpyPTX);
  KernelSignature sig;
  sig.name = "mixed";
  sig.params = mixedScalarParams();
  sig.params.push_back(tensorParam("out", ScalarType::F64, 1));
  sig.numThreads = 1;
  Kernel kernel = module.getKernel(sig);
  Buffer out(32);
  kernel.launch({-5, 2.25f, 0.5, int64_t(123456),
                 TensorArg::contiguous(out.ptr(), {4})});
  double result[4];
  out.copyToHost(result, 32);
  EXPECT_EQ(result[0], -5.0);
  EXPECT_EQ(result[1], 2.25);
  EXPECT_EQ(result[2], 0.5);
  EXPECT_EQ(result[3], 123456.0);
}

TEST(DeviceTest, LargeDynamicSharedMemory) {
  REQUIRE_DEVICE();
  Module module = Module::loadPTX(std::string(ptxHeader) + saxpyPTX);
  KernelSignature sig;
  sig.name = "bigshared";
  sig.params = {tensorParam("out", ScalarType::U32, 1)};
  sig.numThreads = 32;
  sig.sharedBytes = 64 * 1024;
  Kernel kernel = module.getKernel(sig);
  Buffer out(4);
  out.memsetZero();
  kernel.launch({TensorArg::contiguous(out.ptr(), {1})});
  uint32_t result = 0;
  out.copyToHost(&result, 4);
  EXPECT_EQ(result, 42u);
}

TEST(DeviceTest, Errors) {
  REQUIRE_DEVICE();
  std::string msg = errorOf([] {
    Module::loadPTX(std::string(ptxHeader) +
                    ".visible .entry broken() { bogus.instruction; }");
  });
  EXPECT_NE(msg.find("cuModuleLoadDataEx failed"), std::string::npos) << msg;
  EXPECT_NE(msg.find("CUDA_ERROR_INVALID_PTX"), std::string::npos) << msg;
  EXPECT_NE(msg.find("JIT error log:"), std::string::npos) << msg;
  EXPECT_NE(msg.find("bogus"), std::string::npos) << msg;

  Module module = Module::loadPTX(std::string(ptxHeader) + saxpyPTX);
  KernelSignature missing = saxpySignature();
  missing.name = "nope";
  msg = errorOf([&] { module.getKernel(missing); });
  EXPECT_NE(msg.find("cuModuleGetFunction failed for kernel 'nope': "
                     "CUDA_ERROR_NOT_FOUND"),
            std::string::npos)
      << msg;

  KernelSignature tooWide = saxpySignature(4096); // Over 1024 threads.
  Kernel kernel = module.getKernel(tooWide);
  Buffer xb(40), yb(40); // device memory: the launch checks where tensors are
  msg = errorOf([&] { kernel.launch(saxpyArgs(10, xb.ptr(), yb.ptr())); });
  EXPECT_NE(msg.find("cuLaunchKernel failed for kernel 'saxpy': "
                     "CUDA_ERROR_INVALID_VALUE"),
            std::string::npos)
      << msg;
}

} // namespace

namespace {
TEST(DeviceTest, GraphCaptureAndReplay) {
  REQUIRE_DEVICE();
  Module module = Module::loadPTX(std::string(ptxHeader) + saxpyPTX);
  Kernel kernel = module.getKernel(saxpySignature(256));
  const int64_t n = 4096;
  std::vector<float> x(n, 1.0f), y(n, 0.0f);
  Buffer xb(n * 4), yb(n * 4);
  xb.copyFromHost(x.data(), n * 4);
  yb.copyFromHost(y.data(), n * 4);
  std::vector<ArgValue> args = {1.0f, TensorArg::contiguous(xb.ptr(), {n}),
                                TensorArg::contiguous(yb.ptr(), {n})};
  Stream stream;
  stream.beginCapture();
  for (int i = 0; i < 10; ++i)
    kernel.launch(args, &stream); // recorded, not run
  Graph graph = stream.endCapture();
  stream.synchronize();
  yb.copyToHost(y.data(), n * 4);
  EXPECT_EQ(y[0], 0.0f); // nothing ran during capture
  graph.launch(stream);
  graph.launch(stream);
  stream.synchronize();
  yb.copyToHost(y.data(), n * 4);
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(y[i], 20.0f) << i; // two replays of ten y += x
  EXPECT_NE(errorOf([&] { Stream::defaultStream().beginCapture(); })
                .find("cannot capture the default stream"),
            std::string::npos);
}
} // namespace
