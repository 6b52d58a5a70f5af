//===- AutotuneTest.cpp - @tune and the Autotuner (no GPU needed) ---------===//

#include "tilec/Autotune.h"

#include "llvm/Support/FileSystem.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include <spawn.h>
#include <sys/wait.h>

extern char **environ;

using namespace tilec;

namespace {

const char *kSrc = R"(
@tune(BLOCK in [256, 512, 1024], WARPS in [1, 2])
kernel vadd<BLOCK: int = 1024, WARPS: int = 1>(x: tensor<f32, 1>, z: tensor<f32, 1>)
    grid(cdiv(z.shape[0], BLOCK))
{
    let i = block_id(0);
    store(z, [i], load(x, [i], [BLOCK]) * WARPS);
}
)";

std::vector<ArgValue> argsFor(int64_t n) {
  return {TensorArg::contiguous(0x1000, {n}), TensorArg::contiguous(0x2000, {n})};
}

/// A fake timer: pretends BLOCK=512, WARPS=2 is fastest; counts calls.
struct FakeTimer {
  int calls = 0;
  TuneTimer timer() {
    return [this](const CompileResult &r, const KernelSignature &sig) {
      ++calls;
      // The PTX differs per configuration; recover BLOCK from the grid.
      (void)r;
      int64_t block = sig.grid[0].operands[1].value;
      return block == 512 ? 1.0 : 5.0 + double(block) / 1000;
    };
  }
};

TEST(AutotuneTest, TuneSpaceInSignature) {
  CompileResult r = compile(kSrc, CompileOptions());
  ASSERT_TRUE(r.ok) << r.diagnostics;
  ASSERT_EQ(r.kernels[0].tuneSpace.size(), 2u);
  EXPECT_EQ(r.kernels[0].tuneSpace[0].first, "BLOCK");
  EXPECT_EQ(r.kernels[0].tuneSpace[0].second, (std::vector<int64_t>{256, 512, 1024}));
  // -D fixes a parameter: it is no longer tuned.
  CompileOptions o;
  o.defines["BLOCK"] = "256";
  r = compile(kSrc, o);
  ASSERT_TRUE(r.ok);
  ASSERT_EQ(r.kernels[0].tuneSpace.size(), 1u);
  EXPECT_EQ(r.kernels[0].tuneSpace[0].first, "WARPS");
  // The tune space survives the signature text (cache, AOT headers).
  auto back = parseSignatures(serializeSignatures(r.kernels));
  ASSERT_TRUE(back);
  EXPECT_EQ((*back)[0].tuneSpace, r.kernels[0].tuneSpace);
}

TEST(AutotuneTest, PicksTheFastestAndRemembersIt) {
  llvm::SmallString<128> dir;
  llvm::sys::fs::createUniqueDirectory("tilec-tune-test", dir);
  std::string db = std::string(dir) + "/tuning.db";
  FakeTimer fake;
  TuneChoice choice;
  {
    Autotuner tuner(db);
    auto r = tuner.select(kSrc, CompileOptions(), "vadd", argsFor(5000), &choice,
                          fake.timer());
    ASSERT_TRUE(r->ok);
    EXPECT_EQ(fake.calls, 6); // 3 x 2 configurations
    EXPECT_EQ(choice.trials.size(), 6u);
    EXPECT_FALSE(choice.fromDatabase);
    EXPECT_EQ(choice.defines.at("BLOCK"), "512");
    EXPECT_NE(r->ptx.find(".entry vadd"), std::string::npos);
    EXPECT_EQ(r->kernels[0].grid[0].operands[1].value, 512);
  }
  // A new tuner (a new process) reads the database: no timing at all.
  {
    Autotuner tuner(db);
    TuneChoice again;
    auto r = tuner.select(kSrc, CompileOptions(), "vadd", argsFor(5000), &again,
                          fake.timer());
    EXPECT_EQ(fake.calls, 6);
    EXPECT_TRUE(again.fromDatabase);
    EXPECT_EQ(again.defines, choice.defines);
    // Another problem size is another key: tuned again.
    tuner.select(kSrc, CompileOptions(), "vadd", argsFor(77), &again, fake.timer());
    EXPECT_EQ(fake.calls, 12);
  }
  std::ifstream in(db);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_NE(text.str().find("BLOCK=512"), std::string::npos);
  EXPECT_NE(text.str().find(":vadd:[5000],[5000]"), std::string::npos) << text.str();
  llvm::sys::fs::remove_directories(dir);
}

TEST(AutotuneTest, KernelsWithoutTuneCompileAsUsual) {
  FakeTimer fake;
  Autotuner tuner("");
  auto r = tuner.select("kernel k(x: tensor<f32, 1>) { store(x, [0], load(x, [0], [64])); }",
                        CompileOptions(), "k", {TensorArg::contiguous(0, {64})}, nullptr,
                        fake.timer());
  EXPECT_TRUE(r->ok);
  EXPECT_EQ(fake.calls, 0);
}

TEST(AutotuneTest, FailedCandidatesAreSkipped) {
  Autotuner tuner("");
  TuneChoice choice;
  auto r = tuner.select(kSrc, CompileOptions(), "vadd", argsFor(100), &choice,
                        [](const CompileResult &, const KernelSignature &sig) {
                          return sig.grid[0].operands[1].value == 1024 ? 3.0 : -1.0;
                        });
  ASSERT_TRUE(r->ok);
  EXPECT_EQ(choice.defines.at("BLOCK"), "1024");
}

// A remembered choice outside the kernel's @tune space (a stale or
// hand-merged database: a value that is not a candidate, a parameter that
// is not tuned, such as a type) is ignored and the kernel retuned; it used
// to be applied as it was (T=f16 made the program take f16 tensors).
TEST(AutotuneTest, EntriesOutsideTheTuneSpaceAreRetuned) {
  llvm::SmallString<128> dir;
  llvm::sys::fs::createUniqueDirectory("tilec-tune-stale", dir);
  std::string db = std::string(dir) + "/tuning.db";
  std::string key = Autotuner::key(kSrc, CompileOptions(), "vadd", argsFor(5000));
  for (const char *bad : {"BLOCK=512,T=f16,WARPS=2", "BLOCK=333,WARPS=2", "BLOCK=512"}) {
    {
      std::ofstream out(db);
      out << key << "\t" << bad << "\t1.000\n";
    }
    FakeTimer fake;
    Autotuner tuner(db);
    TuneChoice choice;
    auto r = tuner.select(kSrc, CompileOptions(), "vadd", argsFor(5000), &choice, fake.timer());
    ASSERT_TRUE(r->ok);
    EXPECT_FALSE(choice.fromDatabase) << bad;
    EXPECT_EQ(fake.calls, 6) << bad;
    EXPECT_EQ(choice.defines.count("T"), 0u);
    EXPECT_EQ(choice.defines.at("BLOCK"), "512");
  }
  llvm::sys::fs::remove_directories(dir);
}

// Tuners writing one database at once (threads with a tuner each, as
// processes would have) keep every choice: the writes merge under a lock
// (before, 8 threads kept 18 of 32).
/// Compiles every configuration of kSrc's @tune space once (the compile
/// cache is shared), so that concurrent tuners only time and write.
void compileEveryConfiguration() {
  FakeTimer warm;
  Autotuner("").select(kSrc, CompileOptions(), "vadd", argsFor(1), nullptr, warm.timer());
}

/// The choices (non-comment lines) in the tuning database at `db`.
int choicesIn(const std::string &db) {
  std::ifstream in(db);
  std::string line;
  int entries = 0;
  while (std::getline(in, line))
    entries += !line.empty() && line[0] != '#';
  return entries;
}

TEST(AutotuneTest, ConcurrentWritersKeepEveryChoice) {
  llvm::SmallString<128> dir;
  llvm::sys::fs::createUniqueDirectory("tilec-tune-concurrent", dir);
  std::string db = std::string(dir) + "/tuning.db";
  compileEveryConfiguration();
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      FakeTimer fake;
      Autotuner tuner(db);
      for (int k = 0; k < 4; ++k)
        tuner.select(kSrc, CompileOptions(), "vadd", argsFor(1000 + 10 * t + k), nullptr,
                     fake.timer());
    });
  for (std::thread &t : threads)
    t.join();
  EXPECT_EQ(choicesIn(db), 32);
  llvm::sys::fs::remove_directories(dir);
}

// A writer process of the test below: tunes four sizes into the database
// $TILEC_TUNE_CHILD_DB as writer $TILEC_TUNE_CHILD (does nothing when run
// on its own).
TEST(AutotuneTest, ChildWriter) {
  const char *db = std::getenv("TILEC_TUNE_CHILD_DB");
  const char *id = std::getenv("TILEC_TUNE_CHILD");
  if (!db || !id)
    GTEST_SKIP() << "run by ConcurrentProcessesKeepEveryChoice";
  int t = std::atoi(id);
  FakeTimer fake;
  Autotuner tuner(db);
  for (int k = 0; k < 4; ++k)
    tuner.select(kSrc, CompileOptions(), "vadd", argsFor(2000 + 10 * t + k), nullptr,
                 fake.timer());
}

TEST(AutotuneTest, ConcurrentProcessesKeepEveryChoice) {
  // Eight processes (this test binary, running ChildWriter) tune into one
  // database at once: the flock and the merge keep all 32 choices (the
  // issue's probe kept 19 of 32 before).
  llvm::SmallString<128> dir;
  llvm::sys::fs::createUniqueDirectory("tilec-tune-processes", dir);
  std::string db = std::string(dir) + "/tuning.db";
  compileEveryConfiguration();
  std::vector<pid_t> children;
  for (int t = 0; t < 8; ++t) {
    std::vector<std::string> env;
    // Not lit's sharding (GTEST_SHARD_INDEX / GTEST_TOTAL_SHARDS) nor its
    // JSON report: a child in another shard than ChildWriter runs nothing.
    for (char **e = environ; *e; ++e) {
      llvm::StringRef var(*e);
      if (!var.starts_with("GTEST_SHARD_INDEX=") && !var.starts_with("GTEST_TOTAL_SHARDS=") &&
          !var.starts_with("GTEST_OUTPUT="))
        env.push_back(*e);
    }
    env.push_back("TILEC_TUNE_CHILD_DB=" + db);
    env.push_back("TILEC_TUNE_CHILD=" + std::to_string(t));
    std::vector<char *> envp;
    for (std::string &e : env)
      envp.push_back(e.data());
    envp.push_back(nullptr);
    std::string self = "/proc/self/exe", filter = "--gtest_filter=AutotuneTest.ChildWriter";
    char *argv[] = {self.data(), filter.data(), nullptr};
    pid_t pid;
    ASSERT_EQ(posix_spawn(&pid, "/proc/self/exe", nullptr, nullptr, argv, envp.data()), 0);
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  }
  EXPECT_EQ(choicesIn(db), 32);
  llvm::sys::fs::remove_directories(dir);
}

const char *kHeuristicSrc = R"(
@heuristic(ROWS = where(z.shape[0] <= 1000, 2, 4))
@tune(BLOCK in [256, 512])
kernel rows<BLOCK: int = 1024, ROWS: int = 1>(x: tensor<f32, 1>, z: tensor<f32, 1>)
    grid(cdiv(z.shape[0], BLOCK * ROWS))
{
    let i = block_id(0);
    store(z, [i], load(x, [i], [BLOCK * ROWS]));
}
)";

// Parameters outside the @tune space take what the kernel's @heuristic
// chooses for the arguments, and the kernel a plain launch runs (the
// heuristic's choice, BLOCK at its default) is timed beside the trials.
// A timer for kHeuristicSrc's kernels: records each one's grid divisor
// (BLOCK * ROWS, folded) in `divisors`; 1 us where it is `fast`, else `slow`.
TuneTimer divisorTimer(std::vector<int64_t> &divisors, int64_t fast, double slow) {
  return [&divisors, fast, slow](const CompileResult &, const KernelSignature &sig) {
    int64_t d = sig.grid[0].operands[1].value;
    divisors.push_back(d);
    return d == fast ? 1.0 : slow;
  };
}

TEST(AutotuneTest, TunesOnTopOfTheHeuristic) {
  std::vector<int64_t> divisors;
  TuneTimer timer = divisorTimer(divisors, 512 * 4, 2.0);
  TuneChoice choice;
  auto r = Autotuner("").select(kHeuristicSrc, CompileOptions(), "rows", argsFor(5000), &choice,
                                timer);
  ASSERT_TRUE(r->ok) << r->diagnostics;
  EXPECT_EQ(divisors, (std::vector<int64_t>{256 * 4, 512 * 4, 1024 * 4}));
  EXPECT_EQ(choice.defines.at("BLOCK"), "512");
  EXPECT_EQ(choice.defines.count("ROWS"), 0u); // not tuned: in the database by the key
  ASSERT_EQ(choice.heuristic.size(), 1u);
  EXPECT_EQ(choice.heuristic[0], (std::pair<std::string, int64_t>{"ROWS", 4}));
  EXPECT_EQ(choice.heuristicMicroseconds, 2.0);
  EXPECT_EQ(r->kernels[0].grid[0].operands[1].value, 512 * 4);
  divisors.clear();
  Autotuner("").select(kHeuristicSrc, CompileOptions(), "rows", argsFor(500), &choice, timer);
  EXPECT_EQ(divisors, (std::vector<int64_t>{256 * 2, 512 * 2, 1024 * 2}));
}

// Where the heuristic's values are a point of the space (BLOCK's default
// 1024 is a candidate), the plain launch is that candidate's kernel: it is
// not timed again, and its time is the candidate's.
TEST(AutotuneTest, PlainLaunchThatIsACandidateIsTimedOnce) {
  std::string src = kHeuristicSrc;
  size_t at = src.find("[256, 512]");
  ASSERT_NE(at, std::string::npos);
  src.replace(at, 10, "[256, 1024]");
  std::vector<int64_t> divisors;
  TuneTimer timer = divisorTimer(divisors, 256 * 4, 3.0);
  TuneChoice choice;
  auto r = Autotuner("").select(src, CompileOptions(), "rows", argsFor(5000), &choice, timer);
  ASSERT_TRUE(r->ok) << r->diagnostics;
  EXPECT_EQ(divisors, (std::vector<int64_t>{256 * 4, 1024 * 4}));
  EXPECT_EQ(choice.defines.at("BLOCK"), "256");
  EXPECT_EQ(choice.heuristicMicroseconds, 3.0);
}

} // namespace
