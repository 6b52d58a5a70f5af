//===- CAPITest.cpp - the C API through libtilec.so -----------------------===//

#include "tilec/tilec.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

const char *kSrc = "kernel saxpy<BLOCK: int = 1024>(a: f32, x: tensor<f32, 1>, y: tensor<f32, 1>)\n"
                   "    grid(cdiv(x.shape[0], BLOCK))\n"
                   "{\n"
                   "    let i = block_id(0);\n"
                   "    store(y, [i], a * load(x, [i], [BLOCK]) + load(y, [i], [BLOCK]));\n"
                   "}\n";

TEST(CAPITest, CompileAndInspect) {
  tilec_compile_options o;
  tilec_compile_options_init(&o);
  o.use_cache = 0;
  const char *names[] = {"BLOCK"}, *values[] = {"256"};
  o.define_names = names;
  o.define_values = values;
  o.num_defines = 1;
  tilec_program *p = nullptr;
  tilec_error *e = tilec_compile(kSrc, std::strlen(kSrc), &o, &p);
  ASSERT_EQ(e, nullptr) << tilec_error_message(e);
  ASSERT_NE(p, nullptr);
  size_t size = 0;
  const char *ptx = tilec_program_ptx(p, &size);
  EXPECT_GT(size, 100u);
  EXPECT_NE(std::string(ptx, size).find(".entry saxpy"), std::string::npos);
  ASSERT_EQ(tilec_program_num_kernels(p), 1u);
  EXPECT_STREQ(tilec_program_kernel_name(p, 0), "saxpy");
  EXPECT_EQ(tilec_program_kernel_grid_dims(p, 0), 1u);
  EXPECT_STREQ(tilec_program_kernel_grid(p, 0, 0), "cdiv(x.shape[0], 256)");
  EXPECT_EQ(tilec_program_kernel_grid(p, 0, 1), nullptr);
  ASSERT_EQ(tilec_program_kernel_num_params(p, 0), 3u);
  tilec_param_info info;
  tilec_program_kernel_param(p, 0, 1, &info);
  EXPECT_STREQ(info.name, "x");
  EXPECT_TRUE(info.is_tensor);
  EXPECT_STREQ(info.dtype, "f32");
  EXPECT_EQ(info.rank, 1u);
  tilec_program_kernel_param(p, 7, 0, &info); // out of range: zeroed
  EXPECT_EQ(info.name, nullptr);
  // A cubin where ptxas exists; a clear error where it does not.
  const char *cubin = nullptr;
  size_t cubinSize = 0;
  tilec_error *ce = tilec_program_cubin(p, nullptr, &cubin, &cubinSize);
  if (ce) {
    EXPECT_NE(std::string(tilec_error_message(ce)).find("ptxas"), std::string::npos);
    tilec_error_destroy(ce);
  } else {
    ASSERT_GT(cubinSize, 4u);
    EXPECT_EQ(std::string(cubin + 1, 3), "ELF");
  }
  tilec_program_destroy(p);
}

TEST(CAPITest, MinBlocksPerSM) {
  tilec_compile_options o;
  tilec_compile_options_init(&o);
  EXPECT_EQ(o.min_blocks_per_sm, 0u);
  o.use_cache = 0;
  o.num_warps = 4;
  o.min_blocks_per_sm = 6;
  tilec_program *p = nullptr;
  tilec_error *e = tilec_compile(kSrc, std::strlen(kSrc), &o, &p);
  ASSERT_EQ(e, nullptr) << tilec_error_message(e);
  size_t size = 0;
  std::string ptx = tilec_program_ptx(p, &size);
  EXPECT_NE(ptx.find(".minnctapersm 6"), std::string::npos);
  tilec_program_destroy(p);
  o.min_blocks_per_sm = 40;
  e = tilec_compile(kSrc, std::strlen(kSrc), &o, &p);
  ASSERT_NE(e, nullptr);
  EXPECT_NE(std::string(tilec_error_message(e)).find("--min-blocks-per-sm must be 0 to 32"),
            std::string::npos);
  tilec_error_destroy(e);
}

TEST(CAPITest, ErrorsCarryTheDiagnostic) {
  tilec_compile_options o;
  tilec_compile_options_init(&o);
  o.file_name = "bad.tile";
  const char *src = "kernel k(x: tensor<f32, 1>) { let a = y; }";
  tilec_program *p = reinterpret_cast<tilec_program *>(1);
  tilec_error *e = tilec_compile(src, std::strlen(src), &o, &p);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(p, nullptr);
  std::string msg = tilec_error_message(e);
  EXPECT_NE(msg.find("bad.tile:1:39: error: unknown name 'y'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("^"), std::string::npos);
  tilec_error_destroy(e);
  // Bad arguments are errors too.
  e = tilec_compile(src, std::strlen(src), &o, nullptr);
  ASSERT_NE(e, nullptr);
  tilec_error_destroy(e);
  const char *names[] = {"BLOCK"};
  const char *values[] = {nullptr};
  o.define_names = names;
  o.define_values = values;
  o.num_defines = 1;
  e = tilec_compile(src, std::strlen(src), &o, &p);
  ASSERT_NE(e, nullptr);
  EXPECT_NE(std::string(tilec_error_message(e)).find("define 0 is NULL"), std::string::npos);
  tilec_error_destroy(e);
}

TEST(CAPITest, LongOperatorChainIsAnErrorNotACrash) {
  // 20 000 terms (80 KB) once overflowed the stack in Sema and killed the host.
  std::string src = "kernel k(x: tensor<f32, 1>) {\n    let a = load(x, [0], [16]);\n    let b = a";
  for (int i = 1; i < 20000; ++i)
    src += " + a";
  src += ";\n    store(x, [0], b);\n}\n";
  tilec_compile_options o;
  tilec_compile_options_init(&o);
  o.use_cache = 0;
  o.file_name = "chain.tile";
  tilec_program *p = nullptr;
  tilec_error *e = tilec_compile(src.data(), src.size(), &o, &p);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(p, nullptr);
  std::string msg = tilec_error_message(e);
  EXPECT_NE(msg.find("chain.tile:3:"), std::string::npos) << msg.substr(0, 300);
  EXPECT_NE(msg.find("error: expression is too deep"), std::string::npos) << msg.substr(0, 300);
  tilec_error_destroy(e);
}

TEST(CAPITest, ArgumentHelpers) {
  int64_t sizes[2] = {3, 5};
  tilec_arg t = tilec_arg_tensor(0x1000, 2, sizes);
  EXPECT_EQ(t.kind, TILEC_ARG_TENSOR);
  EXPECT_EQ(t.strides[0], 5);
  EXPECT_EQ(t.strides[1], 1);
  EXPECT_EQ(tilec_arg_int(7).i, 7);
  EXPECT_EQ(tilec_arg_float(2.5).f, 2.5);
}

// Every entry point with NULL handles and NULL out-pointers: an error object
// (or NULL/0 as documented in tilec.h), never a crash.
static void expectError(tilec_error *e, const char *text) {
  ASSERT_NE(e, nullptr) << text;
  EXPECT_NE(std::string(tilec_error_message(e)).find(text), std::string::npos)
      << tilec_error_message(e);
  tilec_error_destroy(e);
}

TEST(CAPITest, NullHandlesAreErrorsNotCrashes) {
  EXPECT_STREQ(tilec_error_message(nullptr), "");
  tilec_error_destroy(nullptr);
  tilec_compile_options_init(nullptr);
  tilec_program_destroy(nullptr);
  tilec_module_destroy(nullptr);

  size_t size = 7;
  EXPECT_EQ(tilec_program_ptx(nullptr, &size), nullptr);
  EXPECT_EQ(size, 0u);
  EXPECT_EQ(tilec_program_ptx(nullptr, nullptr), nullptr);
  const char *data = "x";
  size = 7;
  expectError(tilec_program_cubin(nullptr, nullptr, &data, &size), "program is NULL");
  EXPECT_EQ(data, nullptr);
  EXPECT_EQ(size, 0u);
  EXPECT_EQ(tilec_program_num_kernels(nullptr), 0u);
  EXPECT_EQ(tilec_program_kernel_name(nullptr, 0), nullptr);
  EXPECT_EQ(tilec_program_kernel_threads(nullptr, 0), 0u);
  EXPECT_EQ(tilec_program_kernel_grid(nullptr, 0, 0), nullptr);
  EXPECT_EQ(tilec_program_kernel_grid_dims(nullptr, 0), 0u);
  EXPECT_EQ(tilec_program_kernel_num_params(nullptr, 0), 0u);
  tilec_param_info info;
  info.name = "x";
  tilec_program_kernel_param(nullptr, 0, 0, &info);
  EXPECT_EQ(info.name, nullptr);

  tilec_program *p = nullptr;
  ASSERT_EQ(tilec_compile(kSrc, std::strlen(kSrc), nullptr, &p), nullptr);
  tilec_program_kernel_param(p, 0, 0, nullptr);
  expectError(tilec_program_cubin(p, nullptr, nullptr, &size), "data is NULL");
  expectError(tilec_program_cubin(p, nullptr, &data, nullptr), "size is NULL");

  // The module and kernel calls check their arguments before the driver.
  tilec_module *m = reinterpret_cast<tilec_module *>(1);
  expectError(tilec_module_load(nullptr, &m), "program is NULL");
  EXPECT_EQ(m, nullptr);
  expectError(tilec_module_load(p, nullptr), "out is NULL");
  tilec_kernel *k = reinterpret_cast<tilec_kernel *>(1);
  expectError(tilec_module_get_kernel(nullptr, "saxpy", &k), "module is NULL");
  EXPECT_EQ(k, nullptr);
  expectError(tilec_module_get_kernel(nullptr, "saxpy", nullptr), "out is NULL");
  if (tilec_device_count() > 0) {
    ASSERT_EQ(tilec_module_load(p, &m), nullptr);
    expectError(tilec_module_get_kernel(m, nullptr, &k), "name is NULL");
    tilec_module_destroy(m);
  }

  expectError(tilec_malloc(16, nullptr), "ptr is NULL");
  expectError(tilec_memcpy_htod(0x1000, nullptr, 16), "src is NULL");
  expectError(tilec_memcpy_dtoh(nullptr, 0x1000, 16), "dst is NULL");

  int64_t n = 16;
  tilec_arg args[3] = {tilec_arg_float(0.5), tilec_arg_tensor(0x1000, 1, &n),
                       tilec_arg_tensor(0x2000, 1, &n)};
  expectError(tilec_launch(nullptr, args, 3, nullptr), "kernel is NULL");
  expectError(tilec_launch(nullptr, nullptr, 3, nullptr), "args is NULL");
  tilec_launch_plan *plan = reinterpret_cast<tilec_launch_plan *>(1);
  expectError(tilec_launch_plan_create(nullptr, args, 3, &plan), "kernel is NULL");
  EXPECT_EQ(plan, nullptr);
  expectError(tilec_launch_plan_create(nullptr, args, 3, nullptr), "out is NULL");
  expectError(tilec_launch_plan_run(nullptr, nullptr), "plan is NULL");
  tilec_launch_plan_destroy(nullptr);
  expectError(tilec_module_load_device(p, 0, nullptr), "out is NULL");
  EXPECT_EQ(tilec_c_api_version(), TILEC_C_API_VERSION);
  tilec_program_destroy(p);
}

TEST(CAPITest, LaunchRefusesABadRankBeforeReadingPastTheArrays) {
  int64_t n = 16;
  tilec_arg args[3] = {tilec_arg_float(0.5), tilec_arg_tensor(0x1000, 1, &n),
                       tilec_arg_tensor(0x2000, 1, &n)};
  args[1].rank = 100000000; // once read 10^8 sizes past a 4-element array
  expectError(tilec_launch(nullptr, args, 3, nullptr),
              "argument 1 has rank 100000000; a tilec_arg tensor has at most 4 dimensions");
  args[1].rank = 5;
  expectError(tilec_launch(nullptr, args, 3, nullptr), "argument 1 has rank 5");
  // tilec_arg_tensor keeps a bad rank (it used to clamp it to 4 silently) and
  // marks NULL sizes, so that the launch refuses them.
  int64_t sizes[5] = {1, 2, 3, 4, 5};
  args[2] = tilec_arg_tensor(0x2000, 5, sizes);
  args[1] = tilec_arg_tensor(0x1000, 1, &n);
  EXPECT_EQ(args[2].rank, 5u);
  expectError(tilec_launch(nullptr, args, 3, nullptr), "argument 2 has rank 5");
  args[2] = tilec_arg_tensor(0x2000, 2, nullptr);
  expectError(tilec_launch(nullptr, args, 3, nullptr),
              "argument 2 has a negative size (-1) in dimension 0 (were the sizes NULL?)");
  args[2] = tilec_arg_tensor(0x2000, 1, &n);
  args[0].kind = static_cast<tilec_arg_kind>(9);
  expectError(tilec_launch(nullptr, args, 3, nullptr), "argument 0 has an unknown kind 9");
}

// tilec_arg_tensor_typed carries strides and a dtype; an unknown dtype is
// refused before the kernel is needed (the check against the parameter's
// type is the runtime's, tested in RuntimeTest's TensorDtypeIsChecked).
TEST(CAPITest, TypedTensorArguments) {
  int64_t sizes[2] = {3, 5}, strides[2] = {1, 3};
  tilec_arg a = tilec_arg_tensor_typed(0x1000, 2, sizes, strides, "bf16");
  EXPECT_EQ(a.kind, TILEC_ARG_TENSOR);
  EXPECT_EQ(a.strides[0], 1);
  EXPECT_EQ(a.strides[1], 3);
  EXPECT_STREQ(a.dtype, "bf16");
  tilec_arg c = tilec_arg_tensor_typed(0x1000, 2, sizes, nullptr, nullptr);
  EXPECT_EQ(c.strides[0], 5);
  EXPECT_EQ(c.dtype, nullptr);
  EXPECT_EQ(tilec_arg_tensor(0x1000, 2, sizes).dtype, nullptr);
  tilec_arg args[2] = {tilec_arg_float(1.0), tilec_arg_tensor_typed(0x1000, 2, sizes, strides, "f33")};
  expectError(tilec_launch(nullptr, args, 2, nullptr), "argument 1 has an unknown dtype 'f33'");
}

// The CPU interpreter through the C API (what the Python package runs
// numpy arrays on): host memory in, results in place; errors as messages.
TEST(CAPITest, InterpretsOnTheHost) {
  const char *src = "kernel saxpy<BLOCK: int = 64>(a: f32, x: tensor<f32, 1>, y: tensor<f32, 1>)\n"
                    "    grid(cdiv(x.shape[0], BLOCK)) {\n"
                    "  let i = block_id(0);\n"
                    "  store(y, [i], a * load(x, [i], [BLOCK]) + load(y, [i], [BLOCK]));\n}\n";
  std::vector<float> x(100), y(100, 1.0f);
  for (int i = 0; i < 100; ++i)
    x[i] = float(i);
  tilec_host_arg args[3] = {};
  args[0].kind = TILEC_ARG_FLOAT;
  args[0].f = 2.0;
  for (int k = 1; k < 3; ++k) {
    args[k].kind = TILEC_ARG_TENSOR;
    args[k].data = k == 1 ? x.data() : y.data();
    args[k].rank = 1;
    args[k].sizes[0] = 100;
    args[k].strides[0] = 1;
  }
  tilec_compile_options o;
  tilec_compile_options_init(&o);
  ASSERT_EQ(tilec_interpret(src, strlen(src), &o, "saxpy", args, 3), nullptr);
  for (int i = 0; i < 100; ++i)
    EXPECT_EQ(y[i], 2.0f * float(i) + 1.0f) << i;
  args[1].rank = 9;
  expectError(tilec_interpret(src, strlen(src), &o, "saxpy", args, 3),
              "argument 1 has rank 9; a tilec_host_arg tensor has at most 8 dimensions");
  args[1].rank = 1;
  expectError(tilec_interpret(src, strlen(src), &o, "saxpy", args, 2), "takes 3 arguments");
  expectError(tilec_interpret(src, strlen(src), &o, nullptr, args, 3), "kernel is NULL");
  o.file_name = "s.tile";
  const char *bad = "kernel k(x: tensor<f32, 1>) grid(1) { store(x, [0], q); }";
  expectError(tilec_interpret(bad, strlen(bad), &o, "k", args, 1), "s.tile:1:");
}

TEST(CAPITest, DescribesKernelsAsWritten) {
  const char *src = "kernel k<B: int = (2 + 3) * 4, T: type = f16>(x: tensor<T, 2>, s: i32)\n"
                    "    grid(cdiv(x.shape[0], B)) {\n}\n";
  char *json = nullptr;
  ASSERT_EQ(tilec_describe(src, std::strlen(src), "k.tile", &json), nullptr);
  std::string j = json;
  tilec_string_destroy(json);
  EXPECT_NE(j.find("{\"name\": \"B\", \"kind\": \"int\", \"default\": \"(2 + 3) * 4\"}"),
            std::string::npos) << j;
  EXPECT_NE(j.find("{\"name\": \"T\", \"kind\": \"type\", \"default\": \"f16\"}"),
            std::string::npos) << j;
  EXPECT_NE(j.find("\"type\": \"tensor<T, 2>\", \"tensor\": true, \"rank\": 2, \"element\": "
                   "\"T\", \"element_is_parameter\": true"),
            std::string::npos) << j;
  EXPECT_NE(j.find("\"grid\": [\"cdiv(x.shape[0], B)\"]"), std::string::npos) << j;
  // A syntax error is the located diagnostic; NULL arguments are errors.
  const char *bad = "kernel k(x: tensor<f32, 1>) grid(1) {\n  let = 1;\n}\n";
  json = reinterpret_cast<char *>(1);
  tilec_error *e = tilec_describe(bad, std::strlen(bad), "bad.tile", &json);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(json, nullptr);
  EXPECT_NE(std::string(tilec_error_message(e)).find("bad.tile:2:"), std::string::npos)
      << tilec_error_message(e);
  tilec_error_destroy(e);
  EXPECT_NE(j.find("\"writes\": []"), std::string::npos) << j;
  const char *w = "fn put(v, t) { store(v, [0], t); return 0; }\n"
                  "kernel k(x: tensor<f32, 1>, y: tensor<f32, 1>) grid(1) {\n"
                  "  let t = load(x, [0], [16]);\n  let z = y;\n  let r = put(z, t);\n}\n";
  ASSERT_EQ(tilec_describe(w, std::strlen(w), "w.tile", &json), nullptr);
  EXPECT_NE(std::string(json).find("\"writes\": [\"y\"]"), std::string::npos) << json;
  tilec_string_destroy(json);
  ASSERT_EQ(tilec_cache_info(&json), nullptr);
  EXPECT_NE(std::string(json).find("\"max_bytes\": "), std::string::npos) << json;
  tilec_string_destroy(json);
  expectError(tilec_cache_info(nullptr), "json is NULL");
  expectError(tilec_describe(nullptr, 0, nullptr, &json), "source is NULL");
  expectError(tilec_describe(src, std::strlen(src), nullptr, nullptr), "json is NULL");
  tilec_string_destroy(nullptr);
}

static tilec_error_kind kindOf(tilec_error *e) {
  tilec_error_kind k = tilec_error_get_kind(e);
  tilec_error_destroy(e);
  return k;
}

TEST(CAPITest, ErrorsHaveAKind) {
  EXPECT_EQ(tilec_error_get_kind(nullptr), TILEC_ERROR_NONE);
  tilec_program *p = nullptr;
  const char *bad = "kernel k() grid(1) { let a = ; }";
  EXPECT_EQ(kindOf(tilec_compile(bad, strlen(bad), nullptr, &p)), TILEC_ERROR_COMPILE);
  EXPECT_EQ(kindOf(tilec_compile(bad, strlen(bad), nullptr, nullptr)), TILEC_ERROR_ARGUMENT);
  char *json = nullptr;
  EXPECT_EQ(kindOf(tilec_describe(bad, strlen(bad), "b.tile", &json)), TILEC_ERROR_COMPILE);
  const char *src = "kernel k(x: tensor<f32, 1>) grid(1) {\n"
                    "  assert(load(x, [0], [4]) > 0.0, \"positive\");\n}\n";
  std::vector<float> x(4, 0.0f);
  tilec_host_arg a = {};
  a.kind = TILEC_ARG_TENSOR;
  a.data = x.data();
  a.rank = 1;
  a.sizes[0] = 4;
  a.strides[0] = 1;
  EXPECT_EQ(kindOf(tilec_interpret(src, strlen(src), nullptr, "k", &a, 1)), TILEC_ERROR_RUNTIME);
  EXPECT_EQ(kindOf(tilec_interpret(src, strlen(src), nullptr, "k", &a, 0)), TILEC_ERROR_ARGUMENT);
  EXPECT_EQ(kindOf(tilec_interpret(src, strlen(src), nullptr, "nope", &a, 1)),
            TILEC_ERROR_ARGUMENT);
  EXPECT_EQ(kindOf(tilec_interpret(bad, strlen(bad), nullptr, "k", &a, 1)), TILEC_ERROR_COMPILE);
  // Tuning checks its arguments before it needs a GPU.
  tilec_arg wrong = tilec_arg_float(1.0);
  EXPECT_EQ(kindOf(tilec_tune(kSrc, strlen(kSrc), nullptr, "saxpy", &wrong, 1, 0, "", &p,
                              nullptr)),
            TILEC_ERROR_ARGUMENT);
  expectError(tilec_tune(kSrc, strlen(kSrc), nullptr, "nope", &wrong, 1, 0, "", &p, nullptr),
              "no kernel named 'nope'");
  expectError(tilec_tune(kSrc, strlen(kSrc), nullptr, nullptr, &wrong, 1, 0, "", &p, nullptr),
              "kernel is NULL");
}

TEST(CAPITest, HeaderFromAProgram) {
  tilec_compile_options o;
  tilec_compile_options_init(&o);
  o.file_name = "dir/my-saxpy.tile";
  tilec_program *p = nullptr;
  ASSERT_EQ(tilec_compile(kSrc, strlen(kSrc), &o, &p), nullptr);
  char *h = nullptr;
  ASSERT_EQ(tilec_program_header(p, nullptr, nullptr, &h), nullptr);
  std::string header(h);
  tilec_string_destroy(h);
  EXPECT_NE(header.find("namespace my_saxpy_kernels {"), std::string::npos);
  EXPECT_NE(header.find("from dir/my-saxpy.tile"), std::string::npos);
  EXPECT_NE(header.find("saxpy("), std::string::npos);
  ASSERT_EQ(tilec_program_header(p, "a::b", "s.tile", &h), nullptr);
  EXPECT_NE(std::string(h).find("namespace a::b {"), std::string::npos);
  tilec_string_destroy(h);
  expectError(tilec_program_header(p, "int", nullptr, &h), "reserved C++ name 'int'");
  expectError(tilec_program_header(p, "a b", nullptr, &h), "not a C++ name");
  expectError(tilec_program_header(nullptr, nullptr, nullptr, &h), "program is NULL");
  expectError(tilec_program_header(p, nullptr, nullptr, nullptr), "header is NULL");
  tilec_program_destroy(p);
}

TEST(CAPITest, PrintGoesToTheCallback) {
  std::string out;
  tilec_set_print_callback(
      [](const char *text, size_t size, void *user) {
        static_cast<std::string *>(user)->append(text, size);
      },
      &out);
  const char *src = "kernel k() grid(2) { print(\"block\", block_id(0)); }";
  ASSERT_EQ(tilec_interpret(src, strlen(src), nullptr, "k", nullptr, 0), nullptr);
  tilec_set_print_callback(nullptr, nullptr);
  EXPECT_EQ(out, "pid (0, 0, 0): block 0\npid (1, 0, 0): block 1\n");
}

// The thread-safety promise of tilec.h: compiling (cached and not),
// describing, interpreting and the cache, from 8 threads at once, each
// getting its own correct answers.
TEST(CAPITest, ThreadsCompileDescribeAndInterpretAtOnce) {
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      for (int round = 0; round < 4; ++round) {
        std::string block = std::to_string(64 << ((t + round) % 4));
        const char *names[] = {"BLOCK"}, *values[] = {block.c_str()};
        tilec_compile_options o;
        tilec_compile_options_init(&o);
        o.define_names = names;
        o.define_values = values;
        o.num_defines = 1;
        o.use_cache = (t + round) % 2;
        tilec_program *p = nullptr;
        if (tilec_error *e = tilec_compile(kSrc, strlen(kSrc), &o, &p)) {
          tilec_error_destroy(e);
          ++failures;
          continue;
        }
        size_t size = 0;
        const char *ptx = tilec_program_ptx(p, &size);
        if (!ptx || std::string(ptx, size).find(".entry saxpy") == std::string::npos)
          ++failures;
        tilec_program_destroy(p);
        char *json = nullptr;
        if (tilec_error *e = tilec_describe(kSrc, strlen(kSrc), "s.tile", &json)) {
          tilec_error_destroy(e);
          ++failures;
        } else {
          failures += std::string(json).find("\"BLOCK\"") == std::string::npos;
          tilec_string_destroy(json);
        }
        std::vector<float> x(300), y(300, 1.0f);
        for (int i = 0; i < 300; ++i)
          x[i] = float(i + t);
        tilec_host_arg args[3] = {};
        args[0].kind = TILEC_ARG_FLOAT;
        args[0].f = 3.0;
        for (int k = 1; k < 3; ++k) {
          args[k].kind = TILEC_ARG_TENSOR;
          args[k].data = k == 1 ? x.data() : y.data();
          args[k].rank = 1;
          args[k].sizes[0] = 300;
          args[k].strides[0] = 1;
        }
        if (tilec_error *e = tilec_interpret(kSrc, strlen(kSrc), &o, "saxpy", args, 3)) {
          tilec_error_destroy(e);
          ++failures;
          continue;
        }
        for (int i = 0; i < 300; ++i)
          failures += y[i] != 3.0f * float(i + t) + 1.0f;
        char *info = nullptr;
        if (tilec_error *e = tilec_cache_info(&info))
          tilec_error_destroy(e), ++failures;
        else
          tilec_string_destroy(info);
      }
    });
  for (std::thread &t : threads)
    t.join();
  EXPECT_EQ(failures.load(), 0);
}

// A host pointer passed as a tensor is an argument error naming the kernel
// and the parameter (issue 17, item 6), from a launch and from a plan;
// where the device reads pageable host memory (HMM, ATS) it is valid.
TEST(CAPITest, AHostPointerIsAnArgumentError) {
  if (tilec_device_count() == 0)
    GTEST_SKIP() << "no GPU";
  tilec_program *p = nullptr;
  ASSERT_EQ(tilec_compile(kSrc, std::strlen(kSrc), nullptr, &p), nullptr);
  tilec_module *m = nullptr;
  ASSERT_EQ(tilec_module_load(p, &m), nullptr);
  tilec_kernel *k = nullptr;
  ASSERT_EQ(tilec_module_get_kernel(m, "saxpy", &k), nullptr);
  const int64_t n = 5000;
  std::vector<float> x(n, 2.0f), y(n, 1.0f);
  uint64_t dy;
  ASSERT_EQ(tilec_malloc(n * 4, &dy), nullptr);
  ASSERT_EQ(tilec_memcpy_htod(dy, y.data(), n * 4), nullptr);
  tilec_arg args[3] = {tilec_arg_float(0.5),
                       tilec_arg_tensor(reinterpret_cast<uintptr_t>(x.data()), 1, &n),
                       tilec_arg_tensor(dy, 1, &n)};
  tilec_error *e = tilec_launch(k, args, 3, nullptr);
  if (!e) {
    ASSERT_EQ(tilec_synchronize(), nullptr);
    ASSERT_EQ(tilec_memcpy_dtoh(y.data(), dy, n * 4), nullptr);
    for (int64_t i = 0; i < n; ++i)
      ASSERT_FLOAT_EQ(y[i], 2.0f) << i;
    tilec_free(dy);
    tilec_module_destroy(m);
    tilec_program_destroy(p);
    GTEST_SKIP() << "this device reads pageable host memory";
  }
  EXPECT_EQ(tilec_error_get_kind(e), TILEC_ERROR_ARGUMENT);
  std::string msg = tilec_error_message(e);
  EXPECT_NE(msg.find("kernel 'saxpy': argument 2 ('x') at 0x"), std::string::npos) << msg;
  EXPECT_NE(msg.find("is not device memory"), std::string::npos) << msg;
  tilec_error_destroy(e);
  // Refused again, not remembered as the last good launch.
  expectError(tilec_launch(k, args, 3, nullptr), "is not device memory");
  tilec_launch_plan *plan = nullptr;
  expectError(tilec_launch_plan_create(k, args, 3, &plan), "argument 2 ('x')");
  EXPECT_EQ(plan, nullptr);
  EXPECT_EQ(tilec_free(dy), nullptr);
  tilec_module_destroy(m);
  tilec_program_destroy(p);
}

TEST(CAPITest, RunsOnTheGPUOrSaysThereIsNone) {
  if (tilec_device_count() == 0) {
    // Without a driver every runtime call is an error object, not a crash.
    uint64_t ptr = 0;
    tilec_error *e = tilec_malloc(16, &ptr);
    ASSERT_NE(e, nullptr);
    EXPECT_NE(std::string(tilec_error_message(e)).find("libcuda.so.1"), std::string::npos)
        << tilec_error_message(e);
    tilec_error_destroy(e);
    GTEST_SKIP() << "no GPU";
  }
  tilec_program *p = nullptr;
  ASSERT_EQ(tilec_compile(kSrc, std::strlen(kSrc), nullptr, &p), nullptr);
  const int64_t n = 5000;
  std::vector<float> x(n, 2.0f), y(n, 1.0f), out(n);
  uint64_t dx, dy;
  ASSERT_EQ(tilec_malloc(n * 4, &dx), nullptr);
  ASSERT_EQ(tilec_malloc(n * 4, &dy), nullptr);
  ASSERT_EQ(tilec_memcpy_htod(dx, x.data(), n * 4), nullptr);
  ASSERT_EQ(tilec_memcpy_htod(dy, y.data(), n * 4), nullptr);
  tilec_module *m = nullptr;
  ASSERT_EQ(tilec_module_load(p, &m), nullptr);
  tilec_kernel *k = nullptr;
  ASSERT_EQ(tilec_module_get_kernel(m, "saxpy", &k), nullptr);
  tilec_kernel *missing = nullptr;
  tilec_error *e = tilec_module_get_kernel(m, "nope", &missing);
  ASSERT_NE(e, nullptr);
  tilec_error_destroy(e);
  tilec_arg args[3] = {tilec_arg_float(0.5), tilec_arg_tensor(dx, 1, &n),
                       tilec_arg_tensor(dy, 1, &n)};
  ASSERT_EQ(tilec_launch(k, args, 3, nullptr), nullptr);
  ASSERT_EQ(tilec_synchronize(), nullptr);
  ASSERT_EQ(tilec_memcpy_dtoh(out.data(), dy, n * 4), nullptr);
  for (int64_t i = 0; i < n; ++i)
    ASSERT_FLOAT_EQ(out[i], 2.0f) << i;
  // A prepared launch, run twice: y = 0.5 * 2 + y each time.
  tilec_launch_plan *plan = nullptr;
  ASSERT_EQ(tilec_launch_plan_create(k, args, 3, &plan), nullptr);
  ASSERT_EQ(tilec_launch_plan_run(plan, nullptr), nullptr);
  ASSERT_EQ(tilec_launch_plan_run(plan, nullptr), nullptr);
  ASSERT_EQ(tilec_synchronize(), nullptr);
  tilec_launch_plan_destroy(plan);
  ASSERT_EQ(tilec_memcpy_dtoh(out.data(), dy, n * 4), nullptr);
  for (int64_t i = 0; i < n; ++i)
    ASSERT_FLOAT_EQ(out[i], 4.0f) << i;
  // The same arguments again (the prepared launch is reused), then others
  // (a shorter y: only its elements change).
  ASSERT_EQ(tilec_launch(k, args, 3, nullptr), nullptr);
  const int64_t half = n / 2;
  tilec_arg shorter[3] = {tilec_arg_float(0.5), tilec_arg_tensor(dx, 1, &half),
                          tilec_arg_tensor(dy, 1, &half)};
  ASSERT_EQ(tilec_launch(k, shorter, 3, nullptr), nullptr);
  ASSERT_EQ(tilec_launch(k, args, 3, nullptr), nullptr);
  ASSERT_EQ(tilec_synchronize(), nullptr);
  ASSERT_EQ(tilec_memcpy_dtoh(out.data(), dy, n * 4), nullptr);
  for (int64_t i = 0; i < n; ++i)
    ASSERT_FLOAT_EQ(out[i], i < half ? 7.0f : 6.0f) << i;
  // A device that does not exist is an error, not a crash.
  tilec_module *elsewhere = nullptr;
  expectError(tilec_module_load_device(p, 4096, &elsewhere), "no CUDA device 4096");
  tilec_arg badRank[3] = {tilec_arg_float(0.5), tilec_arg_tensor(dx, 1, &n),
                          tilec_arg_tensor(dy, 1, &n)};
  badRank[2].rank = 100000000;
  e = tilec_launch(k, badRank, 3, nullptr);
  ASSERT_NE(e, nullptr);
  EXPECT_NE(std::string(tilec_error_message(e)).find("argument 2 has rank"), std::string::npos);
  tilec_error_destroy(e);
  expectError(tilec_module_get_kernel(m, nullptr, &missing), "name is NULL");
  // A scalar where a tensor belongs: an error naming the kernel and argument.
  tilec_arg wrong[3] = {tilec_arg_float(0.5), tilec_arg_float(1.0), tilec_arg_tensor(dy, 1, &n)};
  e = tilec_launch(k, wrong, 3, nullptr);
  ASSERT_NE(e, nullptr);
  EXPECT_NE(std::string(tilec_error_message(e)).find("saxpy"), std::string::npos);
  tilec_error_destroy(e);
  EXPECT_EQ(tilec_free(dx), nullptr);
  EXPECT_EQ(tilec_free(dy), nullptr);
  e = tilec_free(dy); // double free is reported
  ASSERT_NE(e, nullptr);
  tilec_error_destroy(e);
  tilec_module_destroy(m);
  tilec_program_destroy(p);
}

} // namespace
