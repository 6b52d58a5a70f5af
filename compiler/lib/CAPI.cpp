//===- CAPI.cpp - The tilec C API ------------------------------------------===//
//
// Implements tilec.h over the C++ compiler, cache and runtime. Every entry
// point converts C++ exceptions (the runtime reports errors by exception)
// into tilec_error objects.
//
//===----------------------------------------------------------------------===//

#include "tilec/tilec.h"
#include "tilec/Interpreter.h"

#include "tilec/Autotune.h"
#include "tilec/Cache.h"
#include "tilec/Compiler.h"
#include "tilec/Runtime/Runtime.h"

#include <map>
#include <memory>
#include <cstring>
#include <mutex>
#include <new>
#include <string>

struct tilec_error {
  std::string message;
  tilec_error_kind kind;
};

struct tilec_program {
  std::shared_ptr<const tilec::CompileResult> result;
  std::string arch;
  std::string fileName;
  std::map<std::string, std::string> cubins; ///< by arch
  /// Grid expressions as text, per kernel and dimension (kept for the
  /// lifetime of the program so that C strings stay valid).
  std::vector<std::vector<std::string>> grids;
};

struct tilec_module {
  tilec::Module module;
  std::vector<tilec::KernelSignature> signatures;
  std::map<std::string, std::unique_ptr<tilec_kernel>> kernels;
  int device = 0;
};

struct tilec_kernel {
  tilec::Kernel kernel;
  int device = 0; // its module's: made current for each launch
  /// The last launch's arguments (their bytes, the dtype strings apart) and
  /// its prepared launch: a launch with the same arguments (a hot loop)
  /// skips checking, grid evaluation and packing, which depend on nothing
  /// else. Bytes that differ only in padding are a miss, never a false hit.
  struct Last {
    std::mutex mutex;
    std::vector<tilec_arg> args;
    std::vector<std::string> dtypes;
    tilec::LaunchConfig config;
    bool valid = false;
  };
  std::unique_ptr<Last> last = std::make_unique<Last>();
};

/// An error of `kind`; most that the C API makes itself are misuse.
static tilec_error *makeError(std::string message,
                              tilec_error_kind kind = TILEC_ERROR_ARGUMENT) {
  return new (std::nothrow) tilec_error{std::move(message), kind};
}

template <typename Fn> static tilec_error *guard(Fn fn) {
  try {
    return fn();
  } catch (const tilec::ArgumentError &e) {
    return makeError(e.what(), TILEC_ERROR_ARGUMENT);
  } catch (const tilec::RuntimeError &e) {
    return makeError(e.what(), TILEC_ERROR_RUNTIME);
  } catch (const std::bad_alloc &) {
    return makeError("tilec: out of memory", TILEC_ERROR_INTERNAL);
  } catch (const std::exception &e) {
    return makeError(e.what(), TILEC_ERROR_INTERNAL);
  } catch (...) {
    return makeError("tilec: unknown error", TILEC_ERROR_INTERNAL);
  }
}

extern "C" {

const char *tilec_error_message(const tilec_error *error) {
  return error ? error->message.c_str() : "";
}

void tilec_error_destroy(tilec_error *error) { delete error; }

tilec_error_kind tilec_error_get_kind(const tilec_error *error) {
  return error ? error->kind : TILEC_ERROR_NONE;
}

void tilec_compile_options_init(tilec_compile_options *o) {
  if (!o)
    return;
  *o = tilec_compile_options{};
  o->opt_level = 3;
  o->use_cache = 1;
}

/// The C options as the C++ ones; an error names `fn` for a NULL define.
static tilec_error *toCompileOptions(const tilec_compile_options &o, const char *fn,
                                     tilec::CompileOptions &opts) {
  if (o.file_name)
    opts.fileName = o.file_name;
  if (o.arch)
    opts.arch = o.arch;
  if (o.kernel)
    opts.kernel = o.kernel;
  opts.optLevel = o.opt_level;
  opts.numWarps = o.num_warps;
  opts.minBlocksPerSM = o.min_blocks_per_sm;
  for (size_t i = 0; i < o.num_defines; ++i) {
    if (!o.define_names || !o.define_values || !o.define_names[i] || !o.define_values[i])
      return makeError(std::string(fn) + ": define " + std::to_string(i) + " is NULL");
    opts.defines[o.define_names[i]] = o.define_values[i];
  }
  return nullptr;
}

static char *copyString(const std::string &s) {
  char *copy = static_cast<char *>(std::malloc(s.size() + 1));
  if (copy)
    std::memcpy(copy, s.c_str(), s.size() + 1);
  return copy;
}

tilec_error *tilec_describe(const char *source, size_t size, const char *file_name,
                            char **json) {
  return guard([&]() -> tilec_error * {
    if (!json)
      return makeError("tilec_describe: json is NULL");
    *json = nullptr;
    if (!source)
      return makeError("tilec_describe: source is NULL");
    std::string out, diagnostics;
    if (!tilec::describeSource(std::string_view(source, size),
                               file_name ? file_name : "<source>", out, diagnostics))
      return makeError(diagnostics, TILEC_ERROR_COMPILE);
    if (!(*json = copyString(out)))
      return makeError("tilec_describe: out of memory", TILEC_ERROR_INTERNAL);
    return nullptr;
  });
}

void tilec_string_destroy(char *s) { std::free(s); }


tilec_error *tilec_cache_info(char **json) {
  return guard([&]() -> tilec_error * {
    if (!json)
      return makeError("tilec_cache_info: json is NULL");
    *json = nullptr;
    tilec::CompileCache &cache = tilec::CompileCache::global();
    uint64_t bytes = 0;
    std::vector<tilec::CompileCache::Entry> entries = cache.list(/*decode=*/false);
    for (const auto &e : entries)
      bytes += e.bytes;
    tilec::CompileCache::Stats st = cache.stats();
    std::string out = "{\"directory\": ";
    tilec::appendJsonString(out, cache.directory());
    out += ", \"max_bytes\": " +
                      std::to_string(cache.maxBytes()) + ", \"entries\": " +
                      std::to_string(entries.size()) + ", \"bytes\": " + std::to_string(bytes) +
                      ", \"memory_hits\": " + std::to_string(st.memoryHits) +
                      ", \"disk_hits\": " + std::to_string(st.diskHits) +
                      ", \"misses\": " + std::to_string(st.misses) +
                      ", \"corrupt\": " + std::to_string(st.corrupt) + "}";
    if (!(*json = copyString(out)))
      return makeError("tilec_cache_info: out of memory", TILEC_ERROR_INTERNAL);
    return nullptr;
  });
}

tilec_error *tilec_cache_clear(void) {
  return guard([&]() -> tilec_error * {
    tilec::CompileCache::global().clear();
    return nullptr;
  });
}

tilec_error *tilec_interpret(const char *source, size_t size,
                             const tilec_compile_options *options, const char *kernel,
                             const tilec_host_arg *args, size_t num_args) {
  return guard([&]() -> tilec_error * {
    if (!source && size)
      return makeError("tilec_interpret: source is NULL");
    if (!kernel)
      return makeError("tilec_interpret: kernel is NULL");
    if (!args && num_args)
      return makeError("tilec_interpret: args is NULL but num_args is " +
                       std::to_string(num_args));
    tilec_compile_options defaults;
    tilec_compile_options_init(&defaults);
    tilec::CompileOptions opts;
    if (tilec_error *e = toCompileOptions(options ? *options : defaults, "tilec_interpret", opts))
      return e;
    std::vector<tilec::HostArg> host;
    for (size_t i = 0; i < num_args; ++i) {
      const tilec_host_arg &a = args[i];
      std::string where = "tilec_interpret: argument " + std::to_string(i);
      switch (a.kind) {
      case TILEC_ARG_INT: host.push_back(tilec::HostArg::scalarInt(a.i)); break;
      case TILEC_ARG_FLOAT: host.push_back(tilec::HostArg::scalarFloat(a.f)); break;
      case TILEC_ARG_TENSOR:
        if (a.rank > 8)
          return makeError(where + " has rank " + std::to_string(a.rank) +
                           "; a tilec_host_arg tensor has at most 8 dimensions");
        host.push_back(tilec::HostArg::tensor(a.data, {a.sizes, a.sizes + a.rank},
                                              {a.strides, a.strides + a.rank}));
        break;
      default:
        return makeError(where + " has an unknown kind " +
                         std::to_string(static_cast<long long>(a.kind)));
      }
    }
    std::string error;
    tilec::InterpretFailure failure;
    if (!tilec::interpretKernel(std::string_view(source ? source : "", size), opts, kernel, host,
                                error, &failure))
      return makeError(error, failure == tilec::InterpretFailure::Compile ? TILEC_ERROR_COMPILE
                              : failure == tilec::InterpretFailure::Run ? TILEC_ERROR_RUNTIME
                                                                        : TILEC_ERROR_ARGUMENT);
    return nullptr;
  });
}

static std::unique_ptr<tilec_program>
newProgram(std::shared_ptr<const tilec::CompileResult> result, const tilec::CompileOptions &opts) {
  auto program = std::make_unique<tilec_program>();
  program->result = std::move(result);
  program->arch = opts.arch;
  program->fileName = opts.fileName;
  for (const tilec::KernelSignature &sig : program->result->kernels) {
    std::vector<std::string> dims;
    for (const tilec::GridExpr &g : sig.grid)
      dims.push_back(g.str(sig.params));
    program->grids.push_back(std::move(dims));
  }
  return program;
}

tilec_error *tilec_compile(const char *source, size_t size,
                           const tilec_compile_options *options,
                           tilec_program **out) {
  return guard([&]() -> tilec_error * {
    if (!out)
      return makeError("tilec_compile: out is NULL");
    *out = nullptr;
    if (!source && size)
      return makeError("tilec_compile: source is NULL");
    tilec_compile_options defaults;
    tilec_compile_options_init(&defaults);
    const tilec_compile_options &o = options ? *options : defaults;
    tilec::CompileOptions opts;
    if (tilec_error *e = toCompileOptions(o, "tilec_compile", opts))
      return e;
    std::string_view src(source ? source : "", size);
    std::shared_ptr<const tilec::CompileResult> result =
        o.use_cache ? tilec::compileCached(src, opts)
                    : std::make_shared<const tilec::CompileResult>(tilec::compile(src, opts));
    if (!result->ok)
      return makeError(result->diagnostics, TILEC_ERROR_COMPILE);
    *out = newProgram(std::move(result), opts).release();
    return nullptr;
  });
}

void tilec_program_destroy(tilec_program *program) { delete program; }

const char *tilec_program_ptx(const tilec_program *p, size_t *size) {
  if (!p) {
    if (size)
      *size = 0;
    return nullptr;
  }
  if (size)
    *size = p->result->ptx.size();
  return p->result->ptx.c_str();
}

tilec_error *tilec_program_cubin(tilec_program *p, const char *arch,
                                 const char **data, size_t *size) {
  return guard([&]() -> tilec_error * {
    if (data)
      *data = nullptr;
    if (size)
      *size = 0;
    if (!p)
      return makeError("tilec_program_cubin: program is NULL");
    if (!data || !size)
      return makeError(std::string("tilec_program_cubin: ") + (data ? "size" : "data") +
                       " is NULL");
    std::string a = arch ? arch : p->arch;
    auto it = p->cubins.find(a);
    if (it == p->cubins.end()) {
      std::string cubin, error;
      if (!tilec::assembleCubin(p->result->ptx, a, cubin, error))
        return makeError("tilec: " + error, TILEC_ERROR_TOOL);
      it = p->cubins.emplace(a, std::move(cubin)).first;
    }
    *data = it->second.data();
    *size = it->second.size();
    return nullptr;
  });
}

size_t tilec_program_num_kernels(const tilec_program *p) {
  return p ? p->result->kernels.size() : 0;
}

static const tilec::KernelSignature *sigAt(const tilec_program *p, size_t k) {
  return p && k < p->result->kernels.size() ? &p->result->kernels[k] : nullptr;
}

const char *tilec_program_kernel_name(const tilec_program *p, size_t k) {
  auto *s = sigAt(p, k);
  return s ? s->name.c_str() : nullptr;
}

unsigned tilec_program_kernel_threads(const tilec_program *p, size_t k) {
  auto *s = sigAt(p, k);
  return s ? s->numThreads : 0;
}

unsigned tilec_program_kernel_grid_dims(const tilec_program *p, size_t k) {
  auto *s = sigAt(p, k);
  return s ? static_cast<unsigned>(s->grid.size()) : 0;
}

const char *tilec_program_kernel_grid(const tilec_program *p, size_t k,
                                      unsigned dim) {
  if (!p || k >= p->grids.size() || dim >= p->grids[k].size())
    return nullptr;
  return p->grids[k][dim].c_str();
}

size_t tilec_program_kernel_num_params(const tilec_program *p, size_t k) {
  auto *s = sigAt(p, k);
  return s ? s->params.size() : 0;
}

void tilec_program_kernel_param(const tilec_program *p, size_t k, size_t param,
                                tilec_param_info *info) {
  if (!info)
    return;
  *info = tilec_param_info{};
  auto *s = sigAt(p, k);
  if (!s || param >= s->params.size())
    return;
  const tilec::ParamInfo &pi = s->params[param];
  info->name = pi.name.c_str();
  info->is_tensor = pi.isTensor;
  info->dtype = tilec::scalarTypeName(pi.dtype);
  info->rank = pi.rank;
}

int tilec_device_count(void) {
  try {
    return tilec::driverAvailable() ? tilec::deviceCount() : 0;
  } catch (...) {
    return 0;
  }
}

int tilec_c_api_version(void) { return TILEC_C_API_VERSION; }

tilec_error *tilec_module_load(const tilec_program *program, tilec_module **out) {
  return tilec_module_load_device(program, 0, out);
}

tilec_error *tilec_module_load_device(const tilec_program *program, int device,
                                      tilec_module **out) {
  return guard([&]() -> tilec_error * {
    if (!out)
      return makeError("tilec_module_load: out is NULL");
    *out = nullptr;
    if (!program)
      return makeError("tilec_module_load: program is NULL");
    tilec::Context::get(device);
    auto m = std::unique_ptr<tilec_module>(
        new tilec_module{tilec::Module::loadPTX(program->result->ptx),
                         program->result->kernels, {}, device});
    *out = m.release();
    return nullptr;
  });
}

void tilec_module_destroy(tilec_module *module) { delete module; }

tilec_error *tilec_module_get_kernel(tilec_module *module, const char *name,
                                     tilec_kernel **out) {
  return guard([&]() -> tilec_error * {
    if (!out)
      return makeError("tilec_module_get_kernel: out is NULL");
    *out = nullptr;
    if (!module)
      return makeError("tilec_module_get_kernel: module is NULL");
    if (!name)
      return makeError("tilec_module_get_kernel: name is NULL");
    std::string n = name;
    auto it = module->kernels.find(n);
    if (it != module->kernels.end()) {
      *out = it->second.get();
      return nullptr;
    }
    for (const tilec::KernelSignature &sig : module->signatures)
      if (sig.name == n) {
        auto k = std::unique_ptr<tilec_kernel>(
            new tilec_kernel{module->module.getKernel(sig), module->device});
        *out = k.get();
        module->kernels.emplace(n, std::move(k));
        return nullptr;
      }
    return makeError("tilec: the program has no kernel named '" + n + "'");
  });
}

tilec_arg tilec_arg_int(int64_t value) {
  tilec_arg a{};
  a.kind = TILEC_ARG_INT;
  a.i = value;
  return a;
}

tilec_arg tilec_arg_float(double value) {
  tilec_arg a{};
  a.kind = TILEC_ARG_FLOAT;
  a.f = value;
  return a;
}

tilec_arg tilec_arg_tensor(uint64_t ptr, unsigned rank, const int64_t *sizes) {
  tilec_arg a{};
  a.kind = TILEC_ARG_TENSOR;
  a.ptr = ptr;
  // A rank above 4 or NULL sizes cannot be represented; the argument keeps
  // the rank (or gets size -1) so that tilec_launch refuses it by name.
  a.rank = rank;
  if (rank > 4)
    return a;
  if (!sizes && rank) {
    for (unsigned d = 0; d < rank; ++d)
      a.sizes[d] = -1;
    return a;
  }
  int64_t stride = 1;
  for (int d = static_cast<int>(a.rank) - 1; d >= 0; --d) {
    a.sizes[d] = sizes[d];
    a.strides[d] = stride;
    stride *= sizes[d];
  }
  return a;
}

tilec_arg tilec_arg_tensor_typed(uint64_t ptr, unsigned rank, const int64_t *sizes,
                                 const int64_t *strides, const char *dtype) {
  tilec_arg a = tilec_arg_tensor(ptr, rank, sizes);
  if (strides && rank <= 4)
    for (unsigned d = 0; d < rank; ++d)
      a.strides[d] = strides[d];
  a.dtype = dtype;
  return a;
}

static std::mutex allocationsMutex;
static std::map<uint64_t, tilec::Buffer> &allocations() {
  static std::map<uint64_t, tilec::Buffer> a;
  return a;
}

tilec_error *tilec_malloc(size_t bytes, uint64_t *ptr) {
  return guard([&]() -> tilec_error * {
    if (!ptr)
      return makeError("tilec_malloc: ptr is NULL");
    *ptr = 0;
    tilec::Context::get();
    tilec::Buffer b(bytes);
    *ptr = b.ptr();
    std::lock_guard<std::mutex> lock(allocationsMutex);
    allocations().emplace(b.ptr(), std::move(b));
    return nullptr;
  });
}

tilec_error *tilec_free(uint64_t ptr) {
  return guard([&]() -> tilec_error * {
    std::lock_guard<std::mutex> lock(allocationsMutex);
    if (!allocations().erase(ptr))
      return makeError("tilec_free: not a pointer from tilec_malloc");
    return nullptr;
  });
}

tilec_error *tilec_memcpy_htod(uint64_t dst, const void *src, size_t bytes) {
  return guard([&]() -> tilec_error * {
    if (!src && bytes)
      return makeError("tilec_memcpy_htod: src is NULL");
    tilec::copyHostToDevice(dst, src, bytes);
    return nullptr;
  });
}

tilec_error *tilec_memcpy_dtoh(void *dst, uint64_t src, size_t bytes) {
  return guard([&]() -> tilec_error * {
    if (!dst && bytes)
      return makeError("tilec_memcpy_dtoh: dst is NULL");
    tilec::copyDeviceToHost(dst, src, bytes);
    return nullptr;
  });
}

tilec_error *tilec_synchronize(void) {
  return guard([&]() -> tilec_error * {
    tilec::Context::get().synchronize();
    return nullptr;
  });
}

/// The arguments' own well-formedness (`what`: the API function, for the
/// messages): tilec_arg holds at most 4 dimensions.
static tilec_error *checkArgs(const char *what, const tilec_arg *args, size_t num_args) {
  if (!args && num_args)
    return makeError(std::string(what) + ": args is NULL but num_args is " +
                     std::to_string(num_args));
  for (size_t i = 0; i < num_args; ++i) {
    const tilec_arg &a = args[i];
    auto where = [&] { return std::string(what) + ": argument " + std::to_string(i); };
    if (a.kind != TILEC_ARG_INT && a.kind != TILEC_ARG_FLOAT && a.kind != TILEC_ARG_TENSOR)
      return makeError(where() + " has an unknown kind " +
                       std::to_string(static_cast<long long>(a.kind)));
    if (a.kind != TILEC_ARG_TENSOR)
      continue;
    if (a.rank > 4)
      return makeError(where() + " has rank " + std::to_string(a.rank) +
                       "; a tilec_arg tensor has at most 4 dimensions");
    for (unsigned d = 0; d < a.rank; ++d)
      if (a.sizes[d] < 0)
        return makeError(where() + " has a negative size (" + std::to_string(a.sizes[d]) +
                         ") in dimension " + std::to_string(d) +
                         (a.sizes[d] == -1 ? " (were the sizes NULL?)" : ""));
    if (a.dtype && !tilec::parseScalarType(a.dtype))
      return makeError(where() + " has an unknown dtype '" + std::string(a.dtype) + "'");
  }
  return nullptr;
}

/// The arguments (checked by checkArgs) as the runtime's values for `sig`.
static tilec_error *toValues(const tilec::KernelSignature &sig, const tilec_arg *args,
                             size_t num_args, std::vector<tilec::ArgValue> &values) {
  if (num_args != sig.params.size())
    return makeError("tilec: kernel '" + sig.name + "' takes " +
                     std::to_string(sig.params.size()) + " arguments, got " +
                     std::to_string(num_args));
  values.reserve(num_args);
  for (size_t i = 0; i < num_args; ++i) {
    const tilec_arg &a = args[i];
    const tilec::ParamInfo &p = sig.params[i];
    switch (a.kind) {
    case TILEC_ARG_TENSOR: {
      tilec::TensorArg t;
      t.ptr = a.ptr;
      t.sizes.assign(a.sizes, a.sizes + a.rank);
      t.strides.assign(a.strides, a.strides + a.rank);
      if (a.dtype)
        t.dtype = tilec::parseScalarType(a.dtype);
      values.emplace_back(std::move(t));
      break;
    }
    case TILEC_ARG_INT:
      values.push_back(p.isTensor ? tilec::ArgValue(a.i) : tilec::ArgValue::scalar(p.dtype, a.i));
      break;
    case TILEC_ARG_FLOAT:
      values.push_back(p.isTensor ? tilec::ArgValue(a.f) : tilec::ArgValue::scalar(p.dtype, a.f));
      break;
    }
    if (values.size() != i + 1)
      return makeError("tilec: argument " + std::to_string(i) + " has an unknown kind");
  }
  return nullptr;
}

/// The checked arguments of a launch of `kernel`; the arguments are checked
/// before the kernel is looked at.
static tilec_error *argValues(const char *what, const tilec_kernel *kernel,
                              const tilec_arg *args, size_t num_args,
                              std::vector<tilec::ArgValue> &values) {
  if (tilec_error *e = checkArgs(what, args, num_args))
    return e;
  if (!kernel)
    return makeError(std::string(what) + ": kernel is NULL");
  return toValues(kernel->kernel.signature(), args, num_args, values);
}

/// Whether `args` are the ones of `last` (bytes and dtype strings).
static bool sameArgs(const tilec_kernel::Last &last, const tilec_arg *args, size_t num_args) {
  if (!last.valid || last.args.size() != num_args || !args)
    return false;
  for (size_t i = 0; i < num_args; ++i) {
    tilec_arg a = args[i], b = last.args[i];
    const char *dtype = a.dtype;
    a.dtype = b.dtype = nullptr;
    if (std::memcmp(&a, &b, sizeof a) != 0)
      return false;
    if ((dtype == nullptr) != last.dtypes[i].empty() || (dtype && last.dtypes[i] != dtype))
      return false;
  }
  return true;
}

tilec_error *tilec_launch(const tilec_kernel *kernel, const tilec_arg *args,
                          size_t num_args, void *stream) {
  return guard([&]() -> tilec_error * {
    if (kernel && num_args) {
      tilec_kernel::Last &last = *kernel->last;
      std::lock_guard<std::mutex> lock(last.mutex);
      if (sameArgs(last, args, num_args)) {
        tilec::Context::get(kernel->device);
        tilec::Stream borrowed = tilec::Stream::borrow(stream);
        kernel->kernel.launch(last.config, stream ? &borrowed : nullptr);
        return nullptr;
      }
    }
    std::vector<tilec::ArgValue> values;
    if (tilec_error *e = argValues("tilec_launch", kernel, args, num_args, values))
      return e;
    tilec::Context::get(kernel->device);
    tilec_kernel::Last &last = *kernel->last;
    std::lock_guard<std::mutex> lock(last.mutex);
    last.valid = false;
    // prepare() checks kinds and ranks against the signature and names any
    // mismatch (then nothing is remembered).
    kernel->kernel.prepare(values, last.config);
    tilec::Stream borrowed = tilec::Stream::borrow(stream);
    kernel->kernel.launch(last.config, stream ? &borrowed : nullptr);
    last.args.assign(args, args + num_args);
    last.dtypes.clear();
    for (size_t i = 0; i < num_args; ++i)
      last.dtypes.push_back(args[i].dtype ? args[i].dtype : "");
    last.valid = true;
    return nullptr;
  });
}

struct tilec_launch_plan {
  const tilec_kernel *kernel;
  tilec::LaunchConfig config;
};

tilec_error *tilec_launch_plan_create(const tilec_kernel *kernel, const tilec_arg *args,
                                      size_t num_args, tilec_launch_plan **out) {
  return guard([&]() -> tilec_error * {
    if (!out)
      return makeError("tilec_launch_plan_create: out is NULL");
    *out = nullptr;
    std::vector<tilec::ArgValue> values;
    if (tilec_error *e = argValues("tilec_launch_plan_create", kernel, args, num_args, values))
      return e;
    tilec::Context::get(kernel->device);
    auto plan = std::unique_ptr<tilec_launch_plan>(new tilec_launch_plan{kernel, {}});
    kernel->kernel.prepare(values, plan->config);
    *out = plan.release();
    return nullptr;
  });
}

tilec_error *tilec_launch_plan_run(const tilec_launch_plan *plan, void *stream) {
  return guard([&]() -> tilec_error * {
    if (!plan)
      return makeError("tilec_launch_plan_run: plan is NULL");
    tilec::Context::get(plan->kernel->device);
    tilec::Stream borrowed = tilec::Stream::borrow(stream);
    plan->kernel->kernel.launch(plan->config, stream ? &borrowed : nullptr);
    return nullptr;
  });
}

void tilec_launch_plan_destroy(tilec_launch_plan *plan) { delete plan; }

/// One autotuner per database path for the process (each loads its file
/// once and serializes its own updates).
static tilec::Autotuner &tunerFor(const std::string &path) {
  static std::mutex mutex;
  static auto *tuners = new std::map<std::string, std::unique_ptr<tilec::Autotuner>>;
  std::lock_guard<std::mutex> lock(mutex);
  std::unique_ptr<tilec::Autotuner> &t = (*tuners)[path];
  if (!t)
    t = std::make_unique<tilec::Autotuner>(path);
  return *t;
}

tilec_error *tilec_tune(const char *source, size_t size, const tilec_compile_options *options,
                        const char *kernel, const tilec_arg *args, size_t num_args, int device,
                        const char *database_path, tilec_program **out, char **choice_json) {
  return guard([&]() -> tilec_error * {
    if (!out)
      return makeError("tilec_tune: out is NULL");
    *out = nullptr;
    if (choice_json)
      *choice_json = nullptr;
    if (!source && size)
      return makeError("tilec_tune: source is NULL");
    if (!kernel)
      return makeError("tilec_tune: kernel is NULL");
    if (tilec_error *e = checkArgs("tilec_tune", args, num_args))
      return e;
    tilec_compile_options defaults;
    tilec_compile_options_init(&defaults);
    tilec::CompileOptions opts;
    if (tilec_error *e = toCompileOptions(options ? *options : defaults, "tilec_tune", opts))
      return e;
    opts.kernel = kernel;
    std::string_view src(source ? source : "", size);
    // The signature (scalar types, ranks) from the kernel compiled as given.
    std::shared_ptr<const tilec::CompileResult> declared = tilec::compileCached(src, opts);
    if (!declared->ok)
      return makeError(declared->diagnostics, TILEC_ERROR_COMPILE);
    if (declared->kernels.empty())
      return makeError(std::string("tilec_tune: the program has no kernel named '") + kernel +
                       "'");
    std::vector<tilec::ArgValue> values;
    if (tilec_error *e = toValues(declared->kernels[0], args, num_args, values))
      return e;
    tilec::Context::get(device);
    tilec::Autotuner &tuner = tunerFor(database_path ? database_path
                                                     : tilec::Autotuner::defaultDatabasePath());
    tilec::TuneChoice choice;
    std::shared_ptr<const tilec::CompileResult> chosen =
        tuner.select(src, opts, kernel, values, &choice);
    if (!chosen->ok)
      return makeError(chosen->diagnostics, TILEC_ERROR_COMPILE);
    tilec::CompileOptions chosenOpts = opts;
    for (const auto &[name, value] : choice.defines)
      chosenOpts.defines[name] = value;
    std::unique_ptr<tilec_program> program = newProgram(std::move(chosen), chosenOpts);
    if (choice_json) {
      std::string j = "{\"defines\": {";
      bool first = true;
      for (const auto &[name, value] : choice.defines) {
        j += first ? "" : ", ";
        first = false;
        tilec::appendJsonString(j, name);
        j += ": ";
        tilec::appendJsonString(j, value);
      }
      j += "}, \"microseconds\": " + std::to_string(choice.microseconds) +
           ", \"from_database\": " + (choice.fromDatabase ? "true" : "false") +
           ", \"database\": ";
      tilec::appendJsonString(j, tuner.databasePath());
      j += ", \"trials\": [";
      for (size_t t = 0; t < choice.trials.size(); ++t) {
        j += t ? ", {\"config\": " : "{\"config\": ";
        tilec::appendJsonString(j, choice.trials[t].first);
        j += ", \"microseconds\": " + std::to_string(choice.trials[t].second) + "}";
      }
      j += "]}";
      if (!(*choice_json = copyString(j)))
        return makeError("tilec_tune: out of memory", TILEC_ERROR_INTERNAL);
    }
    *out = program.release();
    return nullptr;
  });
}

tilec_error *tilec_program_header(const tilec_program *program, const char *namespace_name,
                                  const char *source_name, char **header) {
  return guard([&]() -> tilec_error * {
    if (!header)
      return makeError("tilec_program_header: header is NULL");
    *header = nullptr;
    if (!program)
      return makeError("tilec_program_header: program is NULL");
    std::string ns = namespace_name ? namespace_name
                                    : tilec::defaultHeaderNamespace(program->fileName);
    if (std::string why = tilec::checkHeaderNamespace(ns); !why.empty())
      return makeError("tilec_program_header: " + why);
    std::string text = tilec::generateHeader(*program->result, ns,
                                             source_name ? source_name : program->fileName);
    if (!(*header = copyString(text)))
      return makeError("tilec_program_header: out of memory", TILEC_ERROR_INTERNAL);
    return nullptr;
  });
}

void tilec_set_print_callback(tilec_print_callback callback, void *user) {
  if (!callback) {
    tilec::setInterpreterPrintSink({});
    return;
  }
  tilec::setInterpreterPrintSink(
      [callback, user](std::string_view text) { callback(text.data(), text.size(), user); });
}

} // extern "C"
