//===- Autotune.cpp - Choosing @tune parameters by measurement ------------===//

#include "tilec/Autotune.h"

#include "tilec/Cache.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

using namespace tilec;

std::string Autotuner::defaultDatabasePath() {
  if (const char *p = std::getenv("TILEC_TUNING_DB"); p && *p)
    return p;
  const std::string &dir = CompileCache::global().directory();
  return dir.empty() ? "" : dir + "/tuning.db";
}

Autotuner::Autotuner(std::string databasePath) : path(std::move(databasePath)) {
  load();
}

std::string Autotuner::key(std::string_view source, const CompileOptions &options,
                           const std::string &kernel,
                           const std::vector<ArgValue> &args) {
  // Source, arch, defines and the compiler's version (not its build: a
  // database written by `tilec tune` serves the library and later builds).
  CompileOptions o = options;
  o.kernel = kernel;
  std::string k = sourceKey(source, o) + ":" + kernel + ":";
  for (size_t i = 0; i < args.size(); ++i) {
    const ArgValue &a = args[i];
    k += i ? "," : "";
    if (!a.isTensor()) {
      k += scalarTypeName(a.type());
      continue;
    }
    k += "[";
    const TensorArg &t = a.tensor();
    for (size_t d = 0; d < t.sizes.size(); ++d)
      k += (d ? "x" : "") + std::to_string(t.sizes[d]);
    // Contiguity changes which code path runs; the exact strides do not.
    bool unit = !t.strides.empty() && t.strides.back() == 1;
    k += unit ? "]" : "]s";
  }
  return k;
}

void Autotuner::load() {
  if (path.empty())
    return;
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer)
    return;
  llvm::SmallVector<llvm::StringRef> lines;
  (*buffer)->getBuffer().split(lines, '\n');
  for (llvm::StringRef line : lines) {
    if (line.empty() || line.starts_with("#"))
      continue;
    llvm::SmallVector<llvm::StringRef, 3> fields;
    line.split(fields, '\t');
    if (fields.size() != 3)
      continue; // tolerate damage: an unreadable line is just retuned
    Entry e;
    llvm::SmallVector<llvm::StringRef> defs;
    fields[1].split(defs, ',', -1, false);
    bool ok = true;
    for (llvm::StringRef d : defs) {
      auto [name, value] = d.split('=');
      ok &= !name.empty() && !value.empty();
      e.defines[name.str()] = value.str();
    }
    if (!ok || fields[2].getAsDouble(e.microseconds))
      continue;
    entries[fields[0].str()] = std::move(e);
  }
}

namespace {
/// An exclusive lock on `path`.lock for as long as it lives (flock: other
/// processes, and other open files of this one, wait for it).
struct DatabaseLock {
  int fd = -1;
  explicit DatabaseLock(const std::string &path) {
    fd = ::open((path + ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd >= 0)
      while (::flock(fd, LOCK_EX) != 0 && errno == EINTR) {
      }
  }
  ~DatabaseLock() {
    if (fd >= 0)
      ::close(fd); // releases the lock
  }
};
} // namespace

/// Whether a remembered choice is one of `space`'s points: it sets every
/// tuned parameter, no other, to one of its candidates. Anything else (a
/// stale or hand-edited line, a type parameter) is ignored and retuned.
static bool inTuneSpace(const std::map<std::string, std::string> &defines,
                        const std::vector<std::pair<std::string, std::vector<int64_t>>> &space) {
  if (defines.size() != space.size())
    return false;
  for (const auto &[name, values] : space) {
    auto it = defines.find(name);
    if (it == defines.end() ||
        llvm::none_of(values, [&](int64_t v) { return it->second == std::to_string(v); }))
      return false;
  }
  return true;
}

void Autotuner::save(const std::string &key, const Entry &entry) {
  entries[key] = entry;
  if (path.empty())
    return;
  llvm::sys::fs::create_directories(llvm::sys::path::parent_path(path));
  // Under the lock, re-read first so that choices written by other
  // processes (or other tuners of this one) survive, then replace the file.
  DatabaseLock lock(path);
  std::map<std::string, Entry> mine = entries;
  entries.clear();
  load();
  for (auto &[k, e] : mine)
    entries[k] = e;
  std::string tmp = path + ".tmp-" + std::to_string(::getpid());
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(tmp, ec, llvm::sys::fs::OF_Text);
    if (ec)
      return;
    os << "# tilec tuning database: key <TAB> chosen -D values <TAB> microseconds\n";
    for (auto &[k, e] : entries) {
      os << k << "\t";
      bool first = true;
      for (auto &[name, value] : e.defines) {
        os << (first ? "" : ",") << name << "=" << value;
        first = false;
      }
      os << "\t" << llvm::format("%.3f", e.microseconds) << "\n";
    }
  }
  if (llvm::sys::fs::rename(tmp, path))
    llvm::sys::fs::remove(tmp);
}

/// Times a configuration on the GPU as the benchmarks do: five warm-up
/// launches, then the median of ten intervals of ten back-to-back launches
/// (CUDA events around each interval), per launch. Back to back, because
/// that is the clock a stream of launches holds: a kernel that draws more
/// power is slowed by the power cap as it would be in use, where launches
/// timed one at a time with a synchronization between them each start on
/// a GPU that has had a pause (session 47: timed one at a time, the FP8
/// block kernel's 128-row persistent tile was 1.21x faster than the
/// heuristic's at 8192^3; bench_fp8.py's back-to-back loop had it 0.94x).
static TuneTimer gpuTimer(const std::vector<ArgValue> &args) {
  return [&args](const CompileResult &result, const KernelSignature &sig) -> double {
    try {
      // In the context current on this thread (the C API makes the
      // arguments' device current), else device 0's.
      Module module = Module::loadPTX(result.ptx);
      Kernel kernel = module.getKernel(sig);
      Stream stream;
      for (int i = 0; i < 5; ++i)
        kernel.launch(args, &stream);
      constexpr int intervals = 10, launches = 10;
      std::vector<float> ms;
      Event start, end;
      for (int i = 0; i < intervals; ++i) {
        start.record(stream);
        for (int j = 0; j < launches; ++j)
          kernel.launch(args, &stream);
        end.record(stream);
        end.synchronize();
        ms.push_back(Event::elapsedMs(start, end) / launches);
      }
      std::sort(ms.begin(), ms.end());
      return ms[ms.size() / 2] * 1000.0;
    } catch (const RuntimeError &) {
      return -1;
    }
  };
}

std::shared_ptr<const CompileResult>
Autotuner::select(std::string_view source, const CompileOptions &options,
                  const std::string &kernel, const std::vector<ArgValue> &args,
                  TuneChoice *choice, const TuneTimer &timer) {
  CompileOptions base = options;
  base.kernel = kernel;
  auto result = compileCached(source, base);
  if (!result->ok || result->kernels.empty() || result->kernels[0].tuneSpace.empty())
    return result;
  const auto &space = result->kernels[0].tuneSpace;
  TuneChoice local;
  TuneChoice &c = choice ? *choice : local;
  c = TuneChoice();
  // The parameters outside the space as the kernel's @heuristic chooses
  // them for these arguments (what a plain launch would run).
  CompileOptions heuristicOptions = base;
  try {
    c.heuristic = evaluateHeuristics(result->kernels[0], args);
  } catch (const RuntimeError &) {
    c.heuristic.clear(); // (e.g. num_sms() without a device): the defaults
  }
  for (const auto &h : c.heuristic) {
    heuristicOptions.defines[h.first] = std::to_string(h.second);
    if (llvm::none_of(space, [&](const auto &s) { return s.first == h.first; }))
      base.defines[h.first] = std::to_string(h.second);
  }

  std::string k = key(source, options, kernel, args);
  auto withDefines = [&](const std::map<std::string, std::string> &defs) {
    CompileOptions o = base;
    for (auto &[name, value] : defs)
      o.defines[name] = value;
    return compileCached(source, o);
  };
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = entries.find(k);
    if (it != entries.end() && inTuneSpace(it->second.defines, space)) {
      auto chosen = withDefines(it->second.defines);
      if (chosen->ok) {
        c.defines = it->second.defines;
        c.microseconds = it->second.microseconds;
        c.fromDatabase = true;
        return chosen;
      }
    }
  }

  // Every combination of the candidate values (odometer order), compiled.
  struct Candidate {
    std::map<std::string, std::string> defines;
    std::string label;
    std::shared_ptr<const CompileResult> result;
    std::vector<double> us;
  };
  std::vector<Candidate> candidates;
  std::vector<size_t> index(space.size(), 0);
  while (true) {
    Candidate cand;
    for (size_t i = 0; i < space.size(); ++i) {
      cand.defines[space[i].first] = std::to_string(space[i].second[index[i]]);
      cand.label += (i ? "," : "") + space[i].first + "=" + cand.defines[space[i].first];
    }
    cand.result = withDefines(cand.defines);
    candidates.push_back(std::move(cand));
    size_t i = 0;
    while (i < space.size() && ++index[i] == space[i].second.size())
      index[i++] = 0;
    if (i == space.size())
      break;
  }
  // The kernel a plain launch runs, timed beside them.
  std::shared_ptr<const CompileResult> plain;
  if (!c.heuristic.empty())
    plain = compileCached(source, heuristicOptions);
  std::vector<double> plainUs;

  // Where the plain launch's values are a point of the space (its PTX is a
  // candidate's), it is that candidate and takes its timings: the same
  // kernel timed twice read 9% apart in session 47, enough to make a row.
  const Candidate *plainCandidate = nullptr;
  if (plain && plain->ok)
    for (const Candidate &cand : candidates)
      if (cand.result->ok && cand.result->ptx == plain->ptx) {
        plainCandidate = &cand;
        break;
      }

  TuneTimer time = timer ? timer : gpuTimer(args);
  int rounds = timer ? 1 : 3;
  auto timeOne = [&](const std::shared_ptr<const CompileResult> &r) {
    return r->ok && !r->kernels.empty() ? time(*r, r->kernels[0]) : -1.0;
  };
  // Each round starts at another place of the list (round r at r * n /
  // rounds), so that no kernel is always timed last, after the others have
  // warmed the GPU.
  std::vector<std::pair<std::shared_ptr<const CompileResult>, std::vector<double> *>> order;
  for (Candidate &cand : candidates)
    order.emplace_back(cand.result, &cand.us);
  if (plain && !plainCandidate)
    order.emplace_back(plain, &plainUs);
  size_t n = order.size();
  for (int round = 0; round < rounds; ++round)
    for (size_t j = 0; j < n; ++j) {
      auto &[compiled, us] = order[(j + round * n / rounds) % n];
      if (us->empty() || us->back() >= 0) // a failure is not retried
        us->push_back(timeOne(compiled));
    }
  auto median = [](std::vector<double> v) {
    if (v.empty() || v.back() < 0)
      return -1.0;
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  c.heuristicMicroseconds = median(plainCandidate ? plainCandidate->us : plainUs);
  const Candidate *best = nullptr;
  double bestUs = -1;
  for (const Candidate &cand : candidates) {
    double us = median(cand.us);
    c.trials.emplace_back(cand.label, us);
    if (us >= 0 && (bestUs < 0 || us < bestUs)) {
      bestUs = us;
      best = &cand;
    }
  }
  if (!best)
    return result; // nothing ran: fall back to the declared defaults
  c.defines = best->defines;
  c.microseconds = bestUs;
  std::lock_guard<std::mutex> lock(mutex);
  save(k, Entry{best->defines, bestUs});
  return best->result;
}
