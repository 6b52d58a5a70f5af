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

/// Times a configuration on the GPU: three warm-up launches, then the median
/// of ten launches timed with CUDA events.
static TuneTimer gpuTimer(const std::vector<ArgValue> &args) {
  return [&args](const CompileResult &result, const KernelSignature &sig) -> double {
    try {
      // In the context current on this thread (the C API makes the
      // arguments' device current), else device 0's.
      Module module = Module::loadPTX(result.ptx);
      Kernel kernel = module.getKernel(sig);
      Stream stream;
      for (int i = 0; i < 3; ++i)
        kernel.launch(args, &stream);
      std::vector<float> ms;
      Event start, end;
      for (int i = 0; i < 10; ++i) {
        start.record(stream);
        kernel.launch(args, &stream);
        end.record(stream);
        end.synchronize();
        ms.push_back(Event::elapsedMs(start, end));
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
        if (choice) {
          choice->defines = it->second.defines;
          choice->microseconds = it->second.microseconds;
          choice->fromDatabase = true;
        }
        return chosen;
      }
    }
  }

  TuneTimer time = timer ? timer : gpuTimer(args);
  // Every combination of the candidate values (odometer order).
  std::vector<size_t> index(space.size(), 0);
  std::map<std::string, std::string> best;
  std::shared_ptr<const CompileResult> bestResult;
  double bestUs = -1;
  TuneChoice local;
  TuneChoice &c = choice ? *choice : local;
  c = TuneChoice();
  while (true) {
    std::map<std::string, std::string> defs;
    std::string label;
    for (size_t i = 0; i < space.size(); ++i) {
      defs[space[i].first] = std::to_string(space[i].second[index[i]]);
      label += (i ? "," : "") + space[i].first + "=" + defs[space[i].first];
    }
    auto candidate = withDefines(defs);
    double us = candidate->ok && !candidate->kernels.empty()
                    ? time(*candidate, candidate->kernels[0])
                    : -1;
    c.trials.emplace_back(label, us);
    if (us >= 0 && (bestUs < 0 || us < bestUs)) {
      bestUs = us;
      best = defs;
      bestResult = candidate;
    }
    size_t i = 0;
    while (i < space.size() && ++index[i] == space[i].second.size())
      index[i++] = 0;
    if (i == space.size())
      break;
  }
  if (!bestResult)
    return result; // nothing ran: fall back to the declared defaults
  c.defines = best;
  c.microseconds = bestUs;
  std::lock_guard<std::mutex> lock(mutex);
  save(k, Entry{best, bestUs});
  return bestResult;
}
