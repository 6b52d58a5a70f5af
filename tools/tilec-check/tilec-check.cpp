//===- tilec-check.cpp - compile, run and check example kernels -----------===//
//
// The end-to-end driver behind the README's main command and the GPU tests:
// compiles each `.tile` file in-process through the embedding API, and, when
// a GPU is present, runs every kernel that has a host reference on random
// inputs and compares all tensors with the reference computed in double
// precision. With --bench it also times the kernels and a device-to-device
// copy with CUDA events (median after warm-up).
//
//   tilec-check FILE... [-D NAME=VALUE]... [--size N]... [--shape RxC[xK]]...
//               [--ld-pad P] [--col-major T] [--arch sm_90a] [--compile-only]
//               [--bench ITERS [--bench-reps R]] [--kernel NAME] [--diff]
// --diff also runs the CPU interpreter on the same inputs and compares the
// GPU's results with it (differential testing). --heuristic runs each problem
// with the values the kernel's @heuristic gives for it, as a launch from
// Python, C or C++ does (without it: the kernel as compiled, its defaults and
// -D; --tune chooses on top of the heuristic itself).
// A matmul problem is MxNxK (BxMxNxK batched); --col-major T stores tensor
// parameter T (0-based among the tensors) column-major.
//
//===----------------------------------------------------------------------===//

#include "tilec/Autotune.h"
#include "tilec/Cache.h"
#include "tilec/Compiler.h"
#include "tilec/Frontend/Diagnostics.h"
#include "tilec/Frontend/Parser.h"
#include "tilec/Frontend/Sema.h"
#include "tilec/Interpreter.h"
#include "tilec/Runtime/Runtime.h"

#include "References.h"

#include "llvm/ADT/StringExtras.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <thread>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

using namespace tilec;
using namespace tilec::check;

namespace {

// --- number formats --------------------------------------------------------


std::vector<uint8_t> encode(const HostTensor &t) {
  size_t eb = scalarTypeSize(t.dtype);
  std::vector<uint8_t> out(t.storageElems * eb);
  for (int64_t i = 0; i < t.storageElems; ++i) {
    uint8_t *p = out.data() + i * eb;
    if (!isFloatType(t.dtype)) {
      std::memcpy(p, &t.ints[i], eb); // little endian: the low bytes
      continue;
    }
    storeFloatElement(t.dtype, p, t.values[i]);
  }
  return out;
}

double decodeAt(const HostTensor &t, const std::vector<uint8_t> &raw, int64_t i) {
  return loadFloatElement(t.dtype, raw.data() + i * scalarTypeSize(t.dtype));
}

double relTol(ScalarType t) {
  switch (t) {
  case ScalarType::F16: return 2e-3;
  case ScalarType::BF16: return 1.6e-2;
  case ScalarType::F8E4M3: return 1.25e-1;
  case ScalarType::F8E5M2: return 2.5e-1;
  case ScalarType::F32: return 2e-6;
  default: return 1e-12;
  }
}

struct Options {
  std::vector<std::string> files;
  std::map<std::string, std::string> defines;
  std::vector<int64_t> sizes;
  std::vector<std::vector<int64_t>> shapes;
  int64_t ldPad = 0;
  std::vector<unsigned> colMajor; ///< tensor indices stored column-major
  std::string arch = "sm_90a";
  bool compileOnly = false;
  int benchIters = 0;
  int benchReps = 1; ///< launches per timed interval (their mean counts)
  unsigned numWarps = 0;
  unsigned minBlocksPerSM = 0;
  bool verify = true;
  bool tune = false;
  /// With --tune: print the choices as a @tuned(...) table, a row where the
  /// best point beats the kernel's plain launch (its @heuristic) by
  /// tableMargin or more.
  bool table = false;
  double tableMargin = 0.02;
  bool cpu = false;
  std::string tuningDb;
  std::string ptxDir;
  std::string kernel; ///< only this kernel (all when empty)
  bool diff = false;  ///< also compare the GPU with the CPU interpreter
  /// Run each problem as a launch from Python, C or C++ does: the kernel
  /// compiled again with the values its @heuristic gives for the problem
  /// (without it, as compiled: its defaults and -D).
  bool heuristic = false;
};

bool gpuPresent() {
  try {
    return driverAvailable() && deviceCount() > 0;
  } catch (const RuntimeError &) {
    return false;
  }
}

/// The key of a @tuned table for `sig` (what `tilec tune --table` prints):
/// the type parameters that are tensor element types (their values: the
/// compiled parameters' element types), arch(), then every tensor dimension but
/// those a @require makes equal to an earlier one. `values` gives a row's
/// key values for `args`.
struct TableKey {
  std::vector<std::string> exprs;
  std::function<std::vector<std::string>(const std::vector<ArgValue> &)> values;
};

/// The source and options a kernel came from (for --tune and --cpu).
struct TuneContext {
  Autotuner *tuner = nullptr;
  std::string source;
  CompileOptions options;
  /// --table: the rows found so far ("(bf16, 90, 4096) -> (BN = 128)"),
  /// and each tuned kernel's key (by name; tableKey, once per file).
  std::vector<std::string> *rows = nullptr;
  const std::map<std::string, TableKey> *keys = nullptr;
};

/// "NAME=V" for each (name, value), values as given or as integers.
template <typename Pairs> std::vector<std::string> assignments(const Pairs &pairs) {
  std::vector<std::string> out;
  for (const auto &[name, value] : pairs) {
    if constexpr (std::is_convertible_v<decltype(value), std::string>)
      out.push_back(name + "=" + value);
    else
      out.push_back(name + "=" + std::to_string(value));
  }
  return out;
}

/// `sig`'s table key (its type parameters found in `source`, parsed again).
TableKey tableKey(const KernelSignature &sig, const std::string &source,
                  const std::string &arch) {
  TableKey key;
  // Type parameters: which tensor parameter's element each one is.
  std::vector<std::pair<std::string, size_t>> typeParams;
  {
    llvm::SourceMgr srcMgr;
    srcMgr.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(source, "<tune>"),
                              llvm::SMLoc());
    DiagEngine diags(srcMgr);
    std::unique_ptr<ModuleDecl> ast = parseModule(diags);
    for (size_t k = 0; ast && k < ast->kernels.size(); ++k) {
      const KernelDecl *kd = ast->kernels[k].get();
      if (kd->name != sig.name)
        continue;
      for (const ConstParam &c : kd->constParams) {
        if (c.kind != ConstParam::Kind::Type)
          continue;
        for (size_t i = 0; i < kd->params.size(); ++i) {
          const TypeExpr &t = *kd->params[i].type;
          const TypeExpr &elem = t.kind == TypeExpr::Kind::Tensor ? *t.element : t;
          if (elem.kind == TypeExpr::Kind::Named && elem.name == c.name) {
            typeParams.emplace_back(c.name, i);
            break;
          }
        }
      }
    }
  }
  for (const auto &[name, param] : typeParams)
    key.exprs.push_back(name);
  key.exprs.push_back("arch()");
  // Dimensions a @require makes equal (x.shape[i] == y.shape[j], under &&).
  std::map<std::pair<unsigned, unsigned>, std::pair<unsigned, unsigned>> same;
  std::function<void(const GridExpr &)> scan = [&](const GridExpr &e) {
    using K = GridExpr::Kind;
    if (e.kind == K::And)
      for (const GridExpr &o : e.operands)
        scan(o);
    if (e.kind == K::Eq && e.operands.size() == 2 && e.operands[0].kind == K::Shape &&
        e.operands[1].kind == K::Shape) {
      auto a = std::make_pair(e.operands[0].param, e.operands[0].dim);
      auto b = std::make_pair(e.operands[1].param, e.operands[1].dim);
      same[std::max(a, b)] = std::min(a, b);
    }
  };
  for (const Requirement &r : sig.requirements)
    scan(r.cond);
  std::vector<std::pair<unsigned, unsigned>> dims;
  for (unsigned p = 0; p < sig.params.size(); ++p)
    for (unsigned d = 0; sig.params[p].isTensor && d < sig.params[p].rank; ++d) {
      if (same.count({p, d}))
        continue;
      dims.emplace_back(p, d);
      GridExpr e;
      e.kind = GridExpr::Kind::Shape;
      e.param = p;
      e.dim = d;
      key.exprs.push_back(e.str(sig.params));
    }
  std::string archDigits = std::to_string(archVersion(arch));
  std::vector<std::string> types;
  for (const auto &[name, param] : typeParams)
    types.push_back(scalarTypeName(sig.params[param].dtype));
  key.values = [types, dims, archDigits](const std::vector<ArgValue> &args) {
    std::vector<std::string> v = types;
    v.push_back(archDigits);
    for (const auto &[p, d] : dims)
      v.push_back(std::to_string(args[p].tensor().sizes[d]));
    return v;
  };
  return key;
}

/// The name of the k-th tensor parameter.
std::string tensorName(const KernelSignature &sig, size_t k) {
  for (const ParamInfo &p : sig.params)
    if (p.isTensor && k-- == 0)
      return p.name;
  return "?";
}

/// Compares every element of every tensor's storage (`raws`, after the run)
/// with the host reference; prints PASS or FAIL.
bool compareWithReference(const KernelSignature &sig, const Reference &ref,
                          const std::vector<int64_t> &shape, const Options &opts,
                          std::vector<HostTensor> &host, const std::vector<double> &scalars,
                          const std::vector<std::vector<uint8_t>> &raws,
                          const std::vector<std::vector<uint8_t>> *against = nullptr) {
  std::vector<HostTensor> expected;
  if (opts.verify)
    expected = host;
  std::vector<HostTensor *> eptrs;
  for (auto &t : expected)
    eptrs.push_back(&t);
  if (opts.verify && !against)
    ref.run(eptrs, scalars);
  // Differential: the expected contents are another run's results.
  if (opts.verify && against)
    for (size_t k = 0; k < expected.size(); ++k)
      for (int64_t i = 0; i < expected[k].storageElems; ++i) {
        HostTensor &t = expected[k];
        if (isFloatType(t.dtype)) {
          t.values[i] = static_cast<float>(decodeAt(t, (*against)[k], i));
        } else {
          size_t eb = scalarTypeSize(t.dtype);
          int64_t v = 0;
          std::memcpy(&v, (*against)[k].data() + i * eb, eb);
          t.ints[i] = v;
        }
      }

  std::string shapeStr;
  for (size_t i = 0; i < shape.size(); ++i)
    shapeStr += (i ? "x" : "") + std::to_string(shape[i]);
  bool ok = true;
  double worst = 0;
  int64_t bad = 0, firstBad = -1;
  for (size_t k = 0; k < host.size() && opts.verify; ++k) {
    HostTensor &t = host[k];
    const std::vector<uint8_t> &raw = raws[k];
    double rtol = std::max(relTol(t.dtype) * ref.rtolScale, ref.rtolFloor);
    double atol = ref.atolFor ? ref.atolFor(shape) : rtol;
    // Every element of storage must match: outputs the reference, inputs and
    // the padding between rows their original values (nothing written there).
    if (!isFloatType(t.dtype)) {
      // Integers must match exactly.
      size_t eb = scalarTypeSize(t.dtype);
      for (int64_t i = 0; i < t.storageElems; ++i) {
        int64_t want = expected[k].ints[i];
        if (std::memcmp(raw.data() + i * eb, &want, eb) != 0) {
          if (firstBad < 0) {
            firstBad = i;
            int64_t got = 0;
            std::memcpy(&got, raw.data() + i * eb, eb);
            std::printf("  mismatch in tensor '%s' at storage index %lld: got 0x%llx, want 0x%llx\n",
                        tensorName(sig, k).c_str(), (long long)i, (unsigned long long)got,
                        (unsigned long long)(want & (eb == 8 ? ~0ull : ((1ull << (8 * eb)) - 1))));
          }
          ++bad;
        }
      }
      continue;
    }
    for (int64_t i = 0; i < t.storageElems; ++i) {
      double got = decodeAt(t, raw, i);
      double want = expected[k].values[i];
      // The same infinity, or NaN for NaN, is a match (their difference is NaN).
      if (got == want || (std::isnan(got) && std::isnan(want)))
        continue;
      double err = std::abs(got - want);
      if (!(err <= atol + rtol * std::abs(want))) {
        if (firstBad < 0) {
          firstBad = i;
          std::printf("  mismatch in tensor '%s' at storage index %lld: got %.9g, want %.9g\n",
                      tensorName(sig, k).c_str(), (long long)i, got, want);
        }
        ++bad;
      }
      if (std::abs(want) > 0)
        worst = std::max(worst, err / std::max(std::abs(want), 1.0));
    }
  }
  ok = bad == 0;
  if (opts.verify)
    std::printf("%s %s %s [%s]%s max_rel_err=%.3g%s\n", ok ? "PASS" : "FAIL",
              sig.name.c_str(), shapeStr.c_str(),
              scalarTypeName(host.empty() ? ScalarType::F32 : host[0].dtype),
              opts.cpu ? " on the CPU interpreter"
              : against ? " GPU vs the CPU interpreter (differential)" : "",
              worst,
              ok ? "" : (" (" + std::to_string(bad) + " wrong elements)").c_str());

  return ok;
}

/// Runs the kernel on the CPU reference interpreter over the tensors'
/// storage `raws` (updated in place) and the scalar arguments.
bool interpretOnHost(const KernelSignature &sig, const std::vector<HostTensor> &host,
                     const std::vector<double> &scalars,
                     std::vector<std::vector<uint8_t>> &raws, const TuneContext &tuning) {
  std::vector<HostArg> hostArgs;
  size_t ti = 0, si = 0;
  for (const ParamInfo &p : sig.params) {
    if (p.isTensor) {
      hostArgs.push_back(HostArg::tensor(raws[ti].data(), host[ti].sizes, host[ti].strides));
      ++ti;
    } else if (isFloatType(p.dtype)) {
      hostArgs.push_back(HostArg::scalarFloat(scalars[si++]));
    } else {
      hostArgs.push_back(HostArg::scalarInt(static_cast<int64_t>(scalars[si++])));
    }
  }
  std::string error;
  if (!interpretKernel(tuning.source, tuning.options, sig.name, hostArgs, error)) {
    std::printf("FAIL %s: the CPU interpreter stopped: %s\n", sig.name.c_str(), error.c_str());
    return false;
  }
  return true;
}

/// The launch arguments of one problem: the tensors of `host` (at the
/// device copies in `buffers`, or with pointers of 0 where none are given)
/// and the scalars.
std::vector<ArgValue> argValues(const KernelSignature &sig, const std::vector<HostTensor> &host,
                                const std::vector<double> &scalars,
                                const std::vector<Buffer> *buffers) {
  std::vector<ArgValue> args;
  size_t ti = 0, si = 0;
  for (const ParamInfo &p : sig.params) {
    if (p.isTensor) {
      TensorArg ta;
      ta.ptr = buffers ? (*buffers)[ti].ptr() : 0;
      ta.sizes = host[ti].sizes;
      ta.strides = host[ti].strides;
      args.emplace_back(ta);
      ++ti;
    } else if (isFloatType(p.dtype)) {
      args.push_back(ArgValue::scalar(p.dtype, scalars[si++]));
    } else {
      args.push_back(ArgValue::scalar(p.dtype, static_cast<int64_t>(scalars[si++])));
    }
  }
  return args;
}

/// --heuristic: the values `sig`'s @heuristic gives for the problem in
/// `host` and `scalars` (what a launch from Python, C or C++ compiles the
/// kernel with), set in the options `tuning` compiles with and printed
/// ("HEURISTIC kernel shape: NAME=V, ..."). False, with the reason printed,
/// where the heuristic cannot be evaluated for these arguments.
bool applyHeuristic(const KernelSignature &sig, const std::vector<HostTensor> &host,
                    const std::vector<double> &scalars, const std::string &shapeText,
                    const GridLimits &limits, TuneContext &tuning) {
  std::vector<std::pair<std::string, int64_t>> values;
  try {
    // (Sizes, strides and scalars: all a heuristic reads.)
    values = evaluateHeuristics(sig, argValues(sig, host, scalars, nullptr), limits);
  } catch (const RuntimeError &e) {
    std::printf("FAIL %s %s: @heuristic: %s\n", sig.name.c_str(), shapeText.c_str(), e.what());
    return false;
  }
  for (const auto &[name, value] : values)
    tuning.options.defines[name] = std::to_string(value);
  std::printf("HEURISTIC %s %s: %s\n", sig.name.c_str(), shapeText.c_str(),
              values.empty() ? "(every parameter fixed)"
                             : llvm::join(assignments(values), ", ").c_str());
  return true;
}

/// Runs one kernel on one problem size on the GPU (`declared`) or, with
/// --cpu, on the CPU reference interpreter, and compares every tensor with
/// the host reference; returns false on a mismatch.
bool runCase(const Kernel *declared, const KernelSignature &sig, const Reference &ref,
             const std::vector<int64_t> &shape, const Options &opts,
             uint64_t seed, const TuneContext &tuning) {
  std::vector<HostTensor> host;
  std::vector<double> scalars;
  Rng rng{seed};
  for (const ParamInfo &p : sig.params) {
    if (!p.isTensor) {
      // Integer parameters are counts (5 to 8); floats are near 1.
      scalars.push_back(isFloatType(p.dtype)
                            ? roundToFloatType(p.dtype, 1.0 + rng.uniform() / 4)
                            : double(5 + seed % 4));
      continue;
    }
    HostTensor t;
    t.dtype = p.dtype;
    t.sizes = shape;
    // With a matrix problem, vectors (weights, biases) span the columns.
    if (p.rank == 1 && shape.size() == 2)
      t.sizes = {shape[1]};
    if (ref.shapeOf)
      t.sizes = ref.shapeOf(shape, host.size());
    if (t.sizes.size() == 1) {
      t.strides = {1};
      t.storageElems = t.sizes[0];
    } else if (t.sizes.size() == 3) {
      // Contiguous matrices with padded rows.
      int64_t ld = t.sizes[2] + opts.ldPad;
      t.strides = {t.sizes[1] * ld, ld, 1};
      t.storageElems = (t.sizes[0] * t.sizes[1] - 1) * ld + t.sizes[2];
    } else if (std::count(opts.colMajor.begin(), opts.colMajor.end(), unsigned(host.size()))) {
      int64_t ld = t.sizes[0] + opts.ldPad;
      t.strides = {1, ld};
      t.storageElems = (t.sizes[1] - 1) * ld + t.sizes[0];
    } else {
      int64_t ld = t.sizes[1] + opts.ldPad;
      t.strides = {ld, 1};
      t.storageElems = (t.sizes[0] - 1) * ld + t.sizes[1];
    }
    if (p.dtype == ScalarType::F64)
      throw RuntimeError(std::string("tilec-check: tensors of ") +
                         scalarTypeName(p.dtype) + " are not generated yet");
    if (p.dtype == ScalarType::I1) {
      // Booleans: bytes of 0 or 1 (torch.bool).
      t.ints.resize(t.storageElems);
      for (int64_t &v : t.ints)
        v = int64_t(rng.next() & 1);
    } else if (isFloatType(p.dtype)) {
      t.values.resize(t.storageElems);
      for (float &v : t.values)
        v = static_cast<float>(roundToFloatType(p.dtype, rng.uniform()));
    } else {
      // Any bit pattern of the type, stored sign- or zero-extended.
      unsigned bits = scalarTypeSize(p.dtype) * 8;
      t.ints.resize(t.storageElems);
      for (int64_t &v : t.ints) {
        uint64_t r = rng.next();
        if (bits < 64)
          r &= (1ull << bits) - 1;
        v = isSignedIntType(p.dtype) && bits < 64 && (r >> (bits - 1))
                ? int64_t(r | ~((1ull << bits) - 1))
                : int64_t(r);
      }
    }
    host.push_back(std::move(t));
  }
  if (ref.prepare)
    ref.prepare(host);
  for (unsigned k : ref.zeroed) {
    std::fill(host[k].values.begin(), host[k].values.end(), 0.0f);
    std::fill(host[k].ints.begin(), host[k].ints.end(), 0);
  }
  // The inputs as the kernel sees them (element bytes of each dtype).
  std::vector<std::vector<uint8_t>> raws;
  for (const HostTensor &t : host)
    raws.push_back(encode(t));
  std::string shapeStr;
  for (size_t i = 0; i < shape.size(); ++i)
    shapeStr += (i ? "x" : "") + std::to_string(shape[i]);
  // --heuristic (not with --tune, whose choice starts from the heuristic's):
  // the variant a launch would run, for the interpreter or compiled below.
  TuneContext launchAs = tuning;
  bool heuristic = opts.heuristic && !tuning.tuner && !sig.heuristics.empty();
  if (heuristic && !applyHeuristic(sig, host, scalars, shapeStr,
                                   declared ? declared->gridLimits() : GridLimits(), launchAs))
    return false;
  if (opts.cpu) {
    if (!interpretOnHost(sig, host, scalars, raws, launchAs))
      return false;
    return compareWithReference(sig, ref, shape, opts, host, scalars, raws);
  }
  // Device copies.
  std::vector<Buffer> buffers;
  for (const std::vector<uint8_t> &raw : raws) {
    buffers.emplace_back(std::max<size_t>(raw.size(), 1));
    buffers.back().copyFromHost(raw.data(), raw.size());
  }
  std::vector<ArgValue> args = argValues(sig, host, scalars, &buffers);
  // With --tune, the autotuner picks the configuration (timing it on these
  // arguments, which it overwrites), then the inputs are restored and the
  // chosen kernel is checked like any other.
  std::optional<Module> tunedModule;
  std::optional<Kernel> tunedKernel;
  if (tuning.tuner && !sig.tuneSpace.empty()) {
    TuneChoice choice;
    auto chosen = tuning.tuner->select(tuning.source, tuning.options, sig.name, args,
                                       &choice);
    if (!chosen->ok) {
      std::printf("%s", chosen->diagnostics.c_str());
      return false;
    }
    std::string picked = llvm::join(assignments(choice.defines), ",");
    std::printf("TUNE %s %s: %s (%.2f us)%s", sig.name.c_str(), shapeStr.c_str(),
                picked.c_str(), choice.microseconds,
                choice.fromDatabase ? " from the tuning database\n" : "; tried");
    for (auto &[label, us] : choice.trials)
      std::printf(" %s=%.2fus", label.c_str(), us);
    if (choice.heuristicMicroseconds >= 0) {
      std::string h = llvm::join(assignments(choice.heuristic), ",");
      std::printf("; the plain launch (@heuristic %s) %.2fus", h.c_str(),
                  choice.heuristicMicroseconds);
    }
    if (!choice.fromDatabase)
      std::printf("\n");
    if (tuning.rows) {
      bool better = choice.heuristic.empty()
                        ? true
                        : choice.heuristicMicroseconds >= 0 &&
                              choice.microseconds <=
                                  (1 - opts.tableMargin) * choice.heuristicMicroseconds;
      if (better) {
        std::vector<std::string> sets;
        for (auto &[name, value] : choice.defines)
          sets.push_back(name + " = " + value);
        tuning.rows->push_back("(" + llvm::join(tuning.keys->at(sig.name).values(args), ", ") + ") -> (" +
                               llvm::join(sets, ", ") + ")");
      } else if (choice.fromDatabase) {
        std::printf("TUNE %s %s: no row (a choice from the tuning database comes without the "
                    "plain launch's time; tune with a fresh --tuning-db)\n",
                    sig.name.c_str(), shapeStr.c_str());
      } else {
        std::printf("TUNE %s %s: no row (the plain launch is within %.0f%% of the best)\n",
                    sig.name.c_str(), shapeStr.c_str(), opts.tableMargin * 100);
      }
    }
    tunedModule.emplace(Module::loadPTX(chosen->ptx));
    tunedKernel.emplace(tunedModule->getKernel(chosen->kernels[0]));
    for (size_t k = 0; k < raws.size(); ++k)
      buffers[k].copyFromHost(raws[k].data(), raws[k].size());
  }
  if (heuristic) {
    CompileOptions o = launchAs.options;
    o.kernel = sig.name;
    // Through the compile cache, so that problems that choose the same
    // values compile once (as in the Python package).
    std::shared_ptr<const CompileResult> compiled = compileCached(launchAs.source, o);
    const CompileResult &variant = *compiled;
    if (!variant.ok || variant.kernels.empty()) {
      std::printf("FAIL %s %s: the @heuristic's variant did not compile:\n%s", sig.name.c_str(),
                  shapeStr.c_str(), variant.diagnostics.c_str());
      return false;
    }
    tunedModule.emplace(Module::loadPTX(variant.ptx));
    tunedKernel.emplace(tunedModule->getKernel(variant.kernels[0]));
  }
  const Kernel &kernel = tunedKernel ? *tunedKernel : *declared;
  kernel.launch(args);
  Context::get().synchronize();
  for (size_t k = 0; k < raws.size(); ++k)
    buffers[k].copyToHost(raws[k].data(), raws[k].size());

  bool ok = compareWithReference(sig, ref, shape, opts, host, scalars, raws);
  if (opts.diff && opts.verify) {
    // The same inputs through the CPU interpreter, compared with the GPU's
    // results (tolerances of the host reference: approximate GPU math).
    std::vector<std::vector<uint8_t>> cpu;
    for (const HostTensor &t : host)
      cpu.push_back(encode(t));
    if (!interpretOnHost(sig, host, scalars, cpu, launchAs))
      return false;
    ok &= compareWithReference(sig, ref, shape, opts, host, scalars, raws, &cpu);
  }
  if (ok && opts.benchIters > 0) {
    // Bytes that must move: every tensor read once, written tensors again.
    double bytes = 0;
    for (size_t k = 0; k < host.size(); ++k) {
      double tb = double(host[k].storageElems) * scalarTypeSize(host[k].dtype);
      bool written = std::count(ref.written.begin(), ref.written.end(), k) > 0;
      bool readToo = !written || ref.writtenAreRead;
      bytes += tb * ((written ? 1 : 0) + (readToo ? 1 : 0));
    }
    auto timeIt = [&](const std::function<void()> &fn) {
      for (int i = 0; i < 10; ++i)
        fn();
      std::vector<float> ms;
      Event start, end;
      for (int i = 0; i < opts.benchIters; ++i) {
        start.record();
        for (int r = 0; r < opts.benchReps; ++r)
          fn();
        end.record();
        end.synchronize();
        ms.push_back(Event::elapsedMs(start, end) / float(opts.benchReps));
      }
      std::sort(ms.begin(), ms.end());
      return ms[ms.size() / 2];
    };
    float kms = timeIt([&] {
      for (unsigned k : ref.zeroed)
        buffers[k].memsetZero();
      kernel.launch(args);
    });
    std::printf("BENCH tilec %s n=%s threads=%u %.4f ms %.1f GB/s\n", sig.name.c_str(),
                shapeStr.c_str(), sig.numThreads, kms, bytes / (kms * 1e-3) / 1e9);
    // A device-to-device copy of the largest tensor: read + write.
    size_t copyBytes = buffers[0].size();
    Buffer dst(copyBytes);
    float cms = timeIt([&] { dst.copyFrom(buffers[0], copyBytes); });
    std::printf("BENCH memcpy_d2d n=%s %.4f ms %.1f GB/s\n", shapeStr.c_str(), cms,
                2.0 * copyBytes / (cms * 1e-3) / 1e9);
  }
  return ok;
}

/// Whether the host reference handles the element type of every tensor of
/// `sig` (the references compute floating-point tensors through `values` and
/// integer ones through `ints`); prints why not.
bool referenceSupports(const KernelSignature &sig, const Reference &ref) {
  if (ref.anyElementType)
    return true;
  size_t k = 0;
  for (const ParamInfo &p : sig.params) {
    if (!p.isTensor)
      continue;
    bool wantInt = std::count(ref.intTensors.begin(), ref.intTensors.end(), unsigned(k));
    if (p.dtype != ScalarType::F64 && isFloatType(p.dtype) == wantInt) {
      std::fprintf(stderr,
                   "tilec-check: the host reference of '%s' supports only %s element types "
                   "for tensor '%s', not %s (check it with %s)\n",
                   sig.name.c_str(), wantInt ? "integer" : "floating-point", p.name.c_str(),
                   scalarTypeName(p.dtype),
                   wantInt ? "an integer type" : "f16, bf16 or f32");
      return false;
    }
    ++k;
  }
  return true;
}

/// Prints "tilec-check: error: <why>" (when given) and the usage; returns
/// the exit status of a bad command line.
int usage(const std::string &why = "") {
  if (!why.empty())
    std::fprintf(stderr, "tilec-check: error: %s\n", why.c_str());
  std::fprintf(stderr,
               "usage: tilec-check FILE... [-D NAME=VALUE]... [--size N]... "
               "[--shape RxC]... [--ld-pad P] [--arch ARCH] [--compile-only] "
               "[--bench ITERS] [--no-verify] [--num-warps N] [--min-blocks-per-sm N] [--ptx-dir DIR] "
               "[--tune [--tuning-db FILE] [--table [--table-margin PERCENT]]] [--cpu] "
               "[--heuristic]\n");
  return 2;
}

/// The largest --size or --shape dimension (the host reference keeps every
/// tensor in memory).
constexpr int64_t kMaxExtent = int64_t(1) << 40;

/// Parses a whole decimal number in [lo, kMaxExtent].
bool parseExtent(const std::string &s, int64_t lo, int64_t &out) {
  if (s.empty() || s.size() > 18 || s.find_first_not_of("0123456789") != std::string::npos)
    return false;
  out = std::stoll(s);
  return out >= lo && out <= kMaxExtent;
}

} // namespace

int main(int argc, char **argv) {
  Options opts;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "tilec-check: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    try {
      if (a == "-D" || (a.rfind("-D", 0) == 0 && a.size() > 2)) {
        std::string d = a == "-D" ? next() : a.substr(2);
        size_t eq = d.find('=');
        if (eq == std::string::npos)
          return usage("-D needs NAME=VALUE, got '" + d + "'");
        std::string name = d.substr(0, eq), value = d.substr(eq + 1);
        auto [it, inserted] = opts.defines.emplace(name, value);
        if (!inserted && it->second != value) {
          std::fprintf(stderr, "tilec-check: parameter '%s' is defined twice, as -D %s=%s and -D %s=%s\n",
                       name.c_str(), name.c_str(), it->second.c_str(), name.c_str(),
                       value.c_str());
          return 2;
        }
      } else if (a == "--size") {
        std::string s = next();
        int64_t n;
        if (!parseExtent(s, 0, n)) {
          std::fprintf(stderr,
                       "tilec-check: --size needs a number of elements from 0 to %lld, "
                       "got '%s'\n",
                       (long long)kMaxExtent, s.c_str());
          return 2;
        }
        opts.sizes.push_back(n);
      } else if (a == "--shape") {
        std::string s = next();
        std::vector<int64_t> dims;
        for (size_t start = 0;;) {
          size_t x = s.find('x', start);
          int64_t d;
          if (!parseExtent(s.substr(start, x - start), 1, d)) {
            std::fprintf(stderr,
                         "tilec-check: --shape needs dimensions from 1 to %lld separated "
                         "by 'x' (e.g. 1000x3000), got '%s'\n",
                         (long long)kMaxExtent, s.c_str());
            return 2;
          }
          dims.push_back(d);
          if (x == std::string::npos)
            break;
          start = x + 1;
        }
        if (dims.size() < 2 || dims.size() > 4)
          return usage("--shape needs 2 to 4 dimensions (RxC, MxNxK or BxMxNxK), got '" + s +
                       "'");
        opts.shapes.push_back(dims);
      } else if (a == "--col-major") {
        opts.colMajor.push_back(unsigned(std::stoul(next())));
      } else if (a == "--ld-pad") {
        opts.ldPad = std::stoll(next());
      } else if (a == "--arch") {
        opts.arch = next();
      } else if (a == "--compile-only") {
        opts.compileOnly = true;
      } else if (a == "--bench") {
        opts.benchIters = std::stoi(next());
      } else if (a == "--cpu") {
        opts.cpu = true;
      } else if (a == "--tune") {
        opts.tune = true;
      } else if (a == "--table") {
        opts.table = true;
      } else if (a == "--table-margin") {
        opts.tableMargin = std::stod(next()) / 100;
      } else if (a == "--tuning-db") {
        opts.tuningDb = next();
      } else if (a == "--bench-reps") {
        opts.benchReps = std::max(1, std::stoi(next()));
      } else if (a == "--diff") {
        opts.diff = true;
      } else if (a == "--heuristic") {
        opts.heuristic = true;
      } else if (a == "--kernel") {
        opts.kernel = next();
      } else if (a == "--no-verify") {
        opts.verify = false;
      } else if (a == "--num-warps") {
        opts.numWarps = std::stoul(next());
      } else if (a == "--min-blocks-per-sm") {
        opts.minBlocksPerSM = std::stoul(next());
      } else if (a == "--ptx-dir") {
        opts.ptxDir = next();
      } else if (!a.empty() && a[0] == '-') {
        return usage("unknown option '" + a + "'");
      } else {
        opts.files.push_back(a);
      }
    } catch (const std::exception &) {
      return usage("bad value '" + std::string(argv[i]) + "' for " + a);
    }
  }
  if (opts.files.empty())
    return usage("no input file");
  if (opts.sizes.empty())
    opts.sizes = {1, 1000, 1000003};
  if (opts.shapes.empty())
    opts.shapes = {{1000, 3000}};

  bool gpu = !opts.compileOnly && !opts.cpu && gpuPresent();
  if (!opts.compileOnly && !opts.cpu && !gpu)
    std::printf("no GPU found: compiling only\n");
  auto refs = references(opts.defines);
  int failures = 0;
  uint64_t seed = 12345;
  for (const std::string &file : opts.files) {
    std::ifstream in(file);
    if (!in) {
      std::fprintf(stderr, "tilec-check: cannot read %s\n", file.c_str());
      return 1;
    }
    std::stringstream ss;
    ss << in.rdbuf();
    CompileOptions copts;
    copts.fileName = file;
    copts.arch = opts.arch;
    copts.defines = opts.defines;
    copts.numWarps = opts.numWarps;
    copts.minBlocksPerSM = opts.minBlocksPerSM;
    copts.kernel = opts.kernel;
    auto t0 = std::chrono::steady_clock::now();
    CompileResult result = compile(ss.str(), copts);
    double ms = std::chrono::duration<double, std::milli>(
                    std::chrono::steady_clock::now() - t0).count();
    if (!result.ok) {
      std::fprintf(stderr, "%s", result.diagnostics.c_str());
      ++failures;
      continue;
    }
    std::printf("compiled %s: %zu kernel(s), %zu bytes of PTX in %.0f ms\n",
                file.c_str(), result.kernels.size(), result.ptx.size(), ms);
    if (!opts.ptxDir.empty()) {
      std::string base = file.substr(file.find_last_of('/') + 1);
      base = base.substr(0, base.rfind('.'));
      std::ofstream(opts.ptxDir + "/" + base + ".ptx") << result.ptx;
    }
    std::map<std::string, TableKey> keys;
    if (opts.table)
      for (const KernelSignature &sig : result.kernels) {
        if (sig.tuneSpace.empty())
          continue;
        // The key its rows will have (printed before any tuning, so that it
        // can be checked without a GPU).
        const TableKey &key = keys[sig.name] = tableKey(sig, ss.str(), copts.arch);
        std::printf("TABLE KEY %s: (%s)\n", sig.name.c_str(), llvm::join(key.exprs, ", ").c_str());
      }
    if (!gpu && !opts.cpu)
      continue;
    std::optional<Autotuner> tuner;
    TuneContext tuning;
    tuning.source = ss.str();
    tuning.options = copts;
    if (opts.tune && !opts.cpu) {
      tuner.emplace(opts.tuningDb.empty() ? Autotuner::defaultDatabasePath()
                                          : opts.tuningDb);
      tuning.tuner = &*tuner;
    }
    std::vector<std::string> rows;
    if (opts.table && opts.tune) {
      tuning.rows = &rows;
      tuning.keys = &keys;
    }
    try {
      std::optional<Module> module;
      if (gpu) {
        Context::get();
        module.emplace(Module::loadPTX(result.ptx));
      }
      for (const KernelSignature &sig : result.kernels) {
        auto it = refs.find(sig.name);
        if (it == refs.end()) {
          std::printf("SKIP %s: no host reference\n", sig.name.c_str());
          continue;
        }
        if (!referenceSupports(sig, it->second)) {
          ++failures;
          continue;
        }
        std::optional<Kernel> kernel;
        if (gpu)
          kernel.emplace(module->getKernel(sig));
        unsigned rank = 0; // the problem's rank: the largest tensor rank
        for (const ParamInfo &p : sig.params)
          if (p.isTensor)
            rank = std::max(rank, p.rank);
        if (rank == 1) {
          for (int64_t n : opts.sizes)
            failures += !runCase(kernel ? &*kernel : nullptr, sig, it->second, {n}, opts,
                                 seed++, tuning);
        } else {
          for (const std::vector<int64_t> &shape : opts.shapes)
            failures += !runCase(kernel ? &*kernel : nullptr, sig, it->second, shape, opts,
                                 seed++, tuning);
        }
        if (tuning.rows && !sig.tuneSpace.empty()) {
          if (tuning.rows->empty()) {
            std::printf("TABLE %s: no row from %zu shape(s), so no table to add\n",
                        sig.name.c_str(), opts.shapes.size());
          } else {
            // The table to put before the kernel (merged with its rows).
            std::printf("TABLE %s (put before the kernel; rows from %zu shape(s)):\n"
                        "@tuned(key = (%s)",
                        sig.name.c_str(), opts.shapes.size(),
                        llvm::join(keys.at(sig.name).exprs, ", ").c_str());
            for (const std::string &row : *tuning.rows)
              std::printf(",\n       %s", row.c_str());
            std::printf(")\n");
            tuning.rows->clear();
          }
        }
      }
    } catch (const RuntimeError &e) {
      std::fprintf(stderr, "%s\n", e.what());
      ++failures;
    } catch (const std::bad_alloc &) {
      std::fprintf(stderr, "tilec-check: not enough host memory for the problem size\n");
      ++failures;
    }
  }
  if (failures) {
    std::printf("%d failure(s)\n", failures);
    return 1;
  }
  return 0;
}
