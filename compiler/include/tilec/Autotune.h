//===- Autotune.h - Choosing @tune parameters by measurement ------*- C++ -*-===//
//
// A kernel may declare candidate values for its int compile-time parameters:
//
//   @tune(BLOCK in [512, 1024, 2048])
//   kernel vadd<BLOCK: int = 1024>(...)
//
// Autotuner::select compiles every combination, times each on the actual
// launch arguments, and returns the fastest compiled program. The choice is
// keyed by (source, kernel, arch, -D values, argument dtypes and shapes) and
// persisted in a tuning database (a small text file that can be committed and
// reused offline), so a later process or `tilec tune` result skips the search.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_AUTOTUNE_H
#define TILEC_AUTOTUNE_H

#include "tilec/Compiler.h"
#include "tilec/Runtime/Runtime.h"

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace tilec {

struct TuneChoice {
  /// The chosen values, as -D defines.
  std::map<std::string, std::string> defines;
  double microseconds = 0;   ///< measured time of the chosen configuration
  bool fromDatabase = false; ///< no measurement: the database had the answer
  /// Every configuration tried ("BLOCK=512") and its time (negative: failed).
  std::vector<std::pair<std::string, double>> trials;
  /// Where the kernel has @heuristic: what it chooses for these arguments
  /// (the parameters outside the @tune space are set so while tuning) and
  /// the time of the kernel a plain launch runs, timed beside the trials
  /// (negative: not measured, e.g. a choice from the database).
  std::vector<std::pair<std::string, int64_t>> heuristic;
  double heuristicMicroseconds = -1;
};

/// Times one compiled configuration on the launch arguments; microseconds,
/// or a negative value when it cannot run.
using TuneTimer = std::function<double(const CompileResult &result,
                                       const KernelSignature &kernel)>;

class Autotuner {
public:
  /// `databasePath` empty: choices are kept in memory only.
  explicit Autotuner(std::string databasePath = defaultDatabasePath());

  /// $TILEC_TUNING_DB, else tuning.db in the compile cache directory.
  static std::string defaultDatabasePath();

  /// The compiled program to launch `kernel` with `args`. Kernels without
  /// @tune compile as usual. Parameters outside the @tune space take the
  /// values the kernel's @heuristic chooses for `args` (else their
  /// defaults). Every candidate is compiled first, then timed in turn over
  /// rounds (3 with the GPU timer, 1 with a given `timer`; the median of a
  /// candidate's rounds counts), so the GPU stays busy while they are
  /// compared. `timer` defaults to timing on the GPU with CUDA events (the
  /// kernel runs repeatedly on `args`, so outputs are clobbered).
  std::shared_ptr<const CompileResult>
  select(std::string_view source, const CompileOptions &options,
         const std::string &kernel, const std::vector<ArgValue> &args,
         TuneChoice *choice = nullptr, const TuneTimer &timer = {});

  /// The database key of a launch (exposed for tests and `tilec tune`).
  static std::string key(std::string_view source, const CompileOptions &options,
                         const std::string &kernel,
                         const std::vector<ArgValue> &args);

  const std::string &databasePath() const { return path; }

private:
  struct Entry {
    std::map<std::string, std::string> defines;
    double microseconds = 0;
  };
  void load();
  void save(const std::string &key, const Entry &entry);

  std::string path;
  std::mutex mutex;
  std::map<std::string, Entry> entries;
};

} // namespace tilec

#endif // TILEC_AUTOTUNE_H
