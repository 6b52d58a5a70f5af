//===- CAPI.cpp - The tilec C API: compiling, inspecting, tuning ---------===//
//
// Implements tilec.h over the C++ compiler, cache and runtime (CAPILaunch.cpp
// has the runtime half: modules, launches, memory). Every entry point
// converts C++ exceptions (the runtime reports errors by exception) into
// tilec_error objects.
//
//===----------------------------------------------------------------------===//

#include "CAPIImpl.h"

#include "tilec/Autotune.h"
#include "tilec/Interpreter.h"

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

} // extern "C"

/// The C options as the C++ ones; an error names `fn` for a NULL define.
tilec_error *toCompileOptions(const tilec_compile_options &o, const char *fn,
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


char *copyString(const std::string &s) {
  char *copy = static_cast<char *>(std::malloc(s.size() + 1));
  if (copy)
    std::memcpy(copy, s.c_str(), s.size() + 1);
  return copy;
}

extern "C" {

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
    tilec::CompileCache::Usage usage = cache.usage();
    tilec::CompileCache::Stats st = cache.stats();
    std::string out = "{\"directory\": ";
    tilec::appendJsonString(out, cache.directory());
    out += ", \"max_bytes\": " +
                      std::to_string(cache.maxBytes()) + ", \"entries\": " +
                      std::to_string(usage.entries) + ", \"bytes\": " + std::to_string(usage.bytes) +
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
      switch (rawKind(a)) {
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
                         std::to_string(rawKind(a)));
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

} // extern "C"

std::unique_ptr<tilec_program>
newProgram(std::shared_ptr<const tilec::CompileResult> result, const tilec::CompileOptions &opts,
           std::string_view source) {
  auto program = std::make_unique<tilec_program>();
  program->result = std::move(result);
  program->arch = opts.arch;
  program->fileName = opts.fileName;
  program->source = std::string(source);
  program->options = opts;
  for (const tilec::KernelSignature &sig : program->result->kernels) {
    std::vector<std::string> dims;
    for (const tilec::GridExpr &g : sig.grid)
      dims.push_back(g.str(sig.params));
    program->grids.push_back(std::move(dims));
  }
  return program;
}

extern "C" {

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
    *out = newProgram(std::move(result), opts, src).release();
    (*out)->useCache = o.use_cache;
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
    std::lock_guard<std::mutex> lock(p->mutex);
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

size_t tilec_program_kernel_num_heuristics(const tilec_program *p, size_t k) {
  auto *s = sigAt(p, k);
  return s ? s->heuristics.size() : 0;
}

const char *tilec_program_kernel_heuristic(const tilec_program *p, size_t k, size_t i) {
  auto *s = sigAt(p, k);
  return s && i < s->heuristics.size() ? s->heuristics[i].param.c_str() : nullptr;
}

tilec_error *tilec_program_kernel_choose(const tilec_program *p, size_t k,
                                         const tilec_arg *args, size_t num_args,
                                         int64_t *values) {
  return guard([&]() -> tilec_error * {
    auto *s = sigAt(p, k);
    if (!s)
      return makeError(p ? "tilec_program_kernel_choose: no kernel " + std::to_string(k)
                         : std::string("tilec_program_kernel_choose: program is NULL"));
    if (!values && !s->heuristics.empty())
      return makeError("tilec_program_kernel_choose: values is NULL");
    if (tilec_error *e = checkArgs("tilec_program_kernel_choose", args, num_args))
      return e;
    std::vector<tilec::ArgValue> argv;
    if (tilec_error *e = toValues(*s, args, num_args, argv))
      return e;
    auto chosen = tilec::evaluateHeuristics(*s, argv);
    for (size_t i = 0; i < chosen.size(); ++i)
      values[i] = chosen[i].second;
    return nullptr;
  });
}

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
    if (out)
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
    if (choice_json) {
      std::string j = "{\"defines\": ";
      tilec::appendJsonObject(j, choice.defines,
                              [&](const std::string &v) { tilec::appendJsonString(j, v); });
      j += ", \"microseconds\": " + std::to_string(choice.microseconds) +
           ", \"from_database\": " + (choice.fromDatabase ? "true" : "false") +
           ", \"database\": ";
      tilec::appendJsonString(j, tuner.databasePath());
      j += ", \"trials\": ";
      tilec::appendJsonList(j, choice.trials.size(), [&](size_t t) {
        j += "{\"config\": ";
        tilec::appendJsonString(j, choice.trials[t].first);
        j += ", \"microseconds\": " + std::to_string(choice.trials[t].second) + "}";
      });
      j += ", \"heuristic\": ";
      tilec::appendJsonObject(j, choice.heuristic, [&](int64_t v) { j += std::to_string(v); });
      j += ", \"heuristic_microseconds\": " + std::to_string(choice.heuristicMicroseconds) +
           "}";
      if (!(*choice_json = copyString(j)))
        return makeError("tilec_tune: out of memory", TILEC_ERROR_INTERNAL);
    }
    if (out)
      *out = newProgram(std::move(chosen), chosenOpts, src).release();
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
    std::string text = tilec::generateHeader(
        *program->result, ns, source_name ? source_name : program->fileName,
        tilec::compileHeuristicVariants(program->source, program->options, *program->result,
                                        program->useCache));
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
