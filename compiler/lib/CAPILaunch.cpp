//===- CAPILaunch.cpp - The tilec C API: devices, modules, launches ------===//
//
// The runtime half of tilec.h: devices, modules and kernels, launch
// arguments, launches (direct, repeated, prepared) and device memory.
//
//===----------------------------------------------------------------------===//

#include "CAPIImpl.h"

extern "C" {

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
                         program->result->kernels, {}, {}, device});
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
    std::lock_guard<std::mutex> lock(module->mutex);
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

} // extern "C"

/// The arguments' own well-formedness (`what`: the API function, for the
/// messages): tilec_arg holds at most 4 dimensions.
tilec_error *checkArgs(const char *what, const tilec_arg *args, size_t num_args) {
  if (!args && num_args)
    return makeError(std::string(what) + ": args is NULL but num_args is " +
                     std::to_string(num_args));
  for (size_t i = 0; i < num_args; ++i) {
    const tilec_arg &a = args[i];
    auto where = [&] { return std::string(what) + ": argument " + std::to_string(i); };
    int kind = rawKind(a);
    if (kind != TILEC_ARG_INT && kind != TILEC_ARG_FLOAT && kind != TILEC_ARG_TENSOR)
      return makeError(where() + " has an unknown kind " + std::to_string(kind));
    if (kind != TILEC_ARG_TENSOR)
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
tilec_error *toValues(const tilec::KernelSignature &sig, const tilec_arg *args,
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

extern "C" {

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

/// Enqueues a prepared launch of `kernel` on `stream` (NULL: the default
/// stream), in its device's context: every launch path ends here.
static void enqueue(const tilec_kernel &kernel, const tilec::LaunchConfig &config,
                    void *stream) {
  tilec::Context::get(kernel.device);
  tilec::Stream borrowed = tilec::Stream::borrow(stream);
  kernel.kernel.launch(config, stream ? &borrowed : nullptr);
}

tilec_error *tilec_launch(const tilec_kernel *kernel, const tilec_arg *args,
                          size_t num_args, void *stream) {
  return guard([&]() -> tilec_error * {
    if (kernel && num_args) {
      tilec_kernel::Last &last = *kernel->last;
      std::lock_guard<std::mutex> lock(last.mutex);
      if (sameArgs(last, args, num_args)) {
        enqueue(*kernel, last.config, stream);
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
    enqueue(*kernel, last.config, stream);
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
    enqueue(*plan->kernel, plan->config, stream);
    return nullptr;
  });
}

void tilec_launch_plan_destroy(tilec_launch_plan *plan) { delete plan; }

} // extern "C"
