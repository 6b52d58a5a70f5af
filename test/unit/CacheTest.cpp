//===- CacheTest.cpp - compile cache and signature text -------------------===//

#include "tilec/Cache.h"
#include "tilec/Runtime/Runtime.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <utime.h>
#include <ctime>

using namespace tilec;

namespace {

const char *kSrc = R"(
kernel vadd<BLOCK: int = 1024>(x: tensor<f32, 1>, y: tensor<f32, 1>, z: tensor<f32, 1>)
    grid(cdiv(z.shape[0], BLOCK), 1)
{
    let i = block_id(0);
    store(z, [i], load(x, [i], [BLOCK]) + load(y, [i], [BLOCK]));
}
)";

class TempDir {
public:
  TempDir() {
    llvm::SmallString<128> p;
    llvm::sys::fs::createUniqueDirectory("tilec-cache-test", p);
    path = std::string(p);
  }
  ~TempDir() { llvm::sys::fs::remove_directories(path); }
  std::string path;
};

TEST(SignatureTextTest, RoundTrip) {
  CompileResult r = compile(kSrc, CompileOptions());
  ASSERT_TRUE(r.ok) << r.diagnostics;
  std::string text = serializeSignatures(r.kernels);
  auto back = parseSignatures(text);
  ASSERT_TRUE(back);
  ASSERT_EQ(back->size(), 1u);
  EXPECT_EQ(serializeSignatures(*back), text);
  EXPECT_EQ((*back)[0].grid[0].str((*back)[0].params), "cdiv(z.shape[0], 1024)");
  EXPECT_EQ((*back)[0].numThreads, r.kernels[0].numThreads);
}

TEST(SignatureTextTest, DeviceLimitsRoundTrip) {
  const char *src = "kernel k<B: int = 256>(x: tensor<f32, 1>)\n"
                    "    grid(min(cdiv(x.shape[0], B), resident_programs()), num_sms() * 2) {\n"
                    "  store(x, [block_id(0)], zeros<f32>([B]));\n}\n";
  CompileResult r = compile(src, CompileOptions());
  ASSERT_TRUE(r.ok) << r.diagnostics;
  std::string text = serializeSignatures(r.kernels);
  EXPECT_NE(text.find("grid (min (cdiv (shape 0 0) (const 256)) (resident))"),
            std::string::npos) << text;
  auto back = parseSignatures(text);
  ASSERT_TRUE(back);
  EXPECT_EQ(serializeSignatures(*back), text);
  EXPECT_EQ((*back)[0].grid[0].str((*back)[0].params),
            "min(cdiv(x.shape[0], 256), resident_programs())");
  EXPECT_EQ((*back)[0].grid[1].str((*back)[0].params), "num_sms() * 2");
  EXPECT_FALSE(parseSignatures("kernel k threads 1 shared 0\ngrid (sms 1)\nend\n"));
}

TEST(SignatureTextTest, HeuristicsRoundTripAndEvaluate) {
  const char *src =
      "@heuristic(BM = where(C.shape[0] <= 128, 64, 128), BN = where(C.shape[0] <= 64, 128, 256))\n"
      "kernel k<BM: int = 128, BN: int = 256>(C: tensor<f32, 2>)\n"
      "    grid(cdiv(C.shape[0], BM), cdiv(C.shape[1], BN)) {\n"
      "  store(C, [block_id(0), block_id(1)], zeros<f32>([BM, BN]));\n}\n";
  CompileResult r = compile(src, CompileOptions());
  ASSERT_TRUE(r.ok) << r.diagnostics;
  const KernelSignature &sig = r.kernels[0];
  ASSERT_EQ(sig.heuristics.size(), 2u);
  EXPECT_EQ(sig.heuristics[0].param, "BM");
  EXPECT_EQ(sig.heuristics[0].value.str(sig.params), "where(C.shape[0] <= 128, 64, 128)");
  std::string text = serializeSignatures(r.kernels);
  EXPECT_NE(text.find("heuristic BM (where (le (shape 0 0) (const 128)) (const 64) (const 128))"),
            std::string::npos) << text;
  auto back = parseSignatures(text);
  ASSERT_TRUE(back);
  EXPECT_EQ(serializeSignatures(*back), text);
  auto at = [&](int64_t m) {
    return evaluateHeuristics((*back)[0], {TensorArg::contiguous(0, {m, 4096})});
  };
  using Chosen = std::vector<std::pair<std::string, int64_t>>;
  EXPECT_EQ(at(16), (Chosen{{"BM", 64}, {"BN", 128}}));
  EXPECT_EQ(at(128), (Chosen{{"BM", 64}, {"BN", 256}}));
  EXPECT_EQ(at(4096), (Chosen{{"BM", 128}, {"BN", 256}}));
  // A parameter the program fixes is not chosen.
  CompileOptions fixed;
  fixed.defines["BN"] = "128";
  CompileResult f = compile(src, fixed);
  ASSERT_TRUE(f.ok) << f.diagnostics;
  ASSERT_EQ(f.kernels[0].heuristics.size(), 1u);
  EXPECT_EQ(f.kernels[0].heuristics[0].param, "BM");
  EXPECT_FALSE(parseSignatures("kernel k threads 1 shared 0\ngrid (const 1)\n"
                               "heuristic B (where (const 1) (const 2))\nend\n"));
}

TEST(SignatureTextTest, ClusterRoundTrip) {
  // @launch(cluster = 2): the sm_90a matmul pipeline pairs programs along
  // grid dimension 0 (b's tiles follow block_id(1) only); without it, none.
  std::string body = "kernel mm(A: tensor<bf16, 2>, B: tensor<bf16, 2>, C: tensor<f32, 2>)\n"
                     "    grid(cdiv(C.shape[0], 128), cdiv(C.shape[1], 128)) {\n"
                     "  var acc = zeros<f32>([128, 128]);\n"
                     "  for k in 0 .. cdiv(A.shape[1], 64) {\n"
                     "    acc = mma(load(A, [block_id(0), k], [128, 64]),\n"
                     "              load(B, [k, block_id(1)], [64, 128]), acc);\n"
                     "  }\n"
                     "  store(C, [block_id(0), block_id(1)], acc);\n}\n";
  CompileResult r = compile("@launch(cluster = 2)\n" + body, CompileOptions());
  ASSERT_TRUE(r.ok) << r.diagnostics;
  EXPECT_EQ(r.kernels[0].cluster, 2u);
  std::string text = serializeSignatures(r.kernels);
  EXPECT_NE(text.find("\ncluster 2\n"), std::string::npos) << text;
  auto back = parseSignatures(text);
  ASSERT_TRUE(back);
  EXPECT_EQ((*back)[0].cluster, 2u);
  EXPECT_EQ(serializeSignatures(*back), text);
  CompileResult one = compile(body, CompileOptions());
  ASSERT_TRUE(one.ok) << one.diagnostics;
  EXPECT_EQ(one.kernels[0].cluster, 1u);
  EXPECT_EQ(serializeSignatures(one.kernels).find("cluster"), std::string::npos);
  EXPECT_FALSE(parseSignatures("kernel k threads 1 shared 0\ngrid (const 1)\ncluster 3\nend\n"));
}

TEST(SignatureTextTest, RejectsMalformedText) {
  std::string good = "kernel k threads 128 shared 0\nparam x tensor f32 1\ngrid (const 1)\nend\n";
  EXPECT_TRUE(parseSignatures(good));
  for (std::string bad :
       {std::string("kernel k threads 128 shared 0\n"),                 // no end
        std::string("kernel k threads 0 shared 0\ngrid (const 1)\nend\n"), // 0 threads
        std::string("kernel k threads 1 shared 0\nparam x tensor q32 1\ngrid (const 1)\nend\n"),
        std::string("kernel k threads 1 shared 0\ngrid (add (const 1))\nend\n"),
        std::string("kernel k threads 1 shared 0\ngrid (const 1) junk\nend\n"),
        std::string("kernel k threads 1 shared 0\nend\n"), // no grid
        std::string("param x tensor f32 1\n"), std::string("\x01\x02garbage")})
    EXPECT_FALSE(parseSignatures(bad)) << bad;
}

TEST(CacheTest, KeyCoversEveryOutputChangingOption) {
  CompileOptions base;
  std::string k = cacheKey(kSrc, base);
  EXPECT_EQ(k.size(), 32u);
  EXPECT_EQ(k, cacheKey(kSrc, base));
  CompileOptions o = base;
  o.arch = "sm_80";
  EXPECT_NE(k, cacheKey(kSrc, o));
  o = base;
  o.defines["BLOCK"] = "256";
  EXPECT_NE(k, cacheKey(kSrc, o));
  o = base;
  o.numWarps = 2;
  EXPECT_NE(k, cacheKey(kSrc, o));
  o = base;
  o.optLevel = 1;
  EXPECT_NE(k, cacheKey(kSrc, o));
  o = base;
  o.kernel = "vadd";
  EXPECT_NE(k, cacheKey(kSrc, o));
  EXPECT_NE(k, cacheKey(std::string(kSrc) + " ", base));
  o = base;
  o.fileName = "other.tile"; // diagnostics only
  EXPECT_EQ(k, cacheKey(kSrc, o));
}

TEST(CacheTest, MemoryThenDiskThenRebuild) {
  TempDir dir;
  CompileOptions opts;
  {
    CompileCache cache(dir.path, 1 << 20);
    auto a = compileCached(kSrc, opts, cache);
    ASSERT_TRUE(a->ok);
    auto b = compileCached(kSrc, opts, cache);
    EXPECT_EQ(a.get(), b.get()); // same in-process object
    EXPECT_EQ(cache.stats().memoryHits, 1u);
    EXPECT_EQ(cache.list().size(), 1u);
  }
  // A new cache object over the same directory: a disk hit, identical PTX.
  CompileCache fresh(dir.path, 1 << 20);
  auto c = compileCached(kSrc, opts, fresh);
  EXPECT_EQ(fresh.stats().diskHits, 1u);
  EXPECT_EQ(c->ptx, compile(kSrc, opts).ptx);
  ASSERT_EQ(c->kernels.size(), 1u);
  EXPECT_EQ(c->kernels[0].name, "vadd");

  // Corrupt the entry: it is detected, removed and rebuilt.
  std::string path = dir.path + "/" + cacheKey(kSrc, opts) + ".tce";
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(-10, std::ios::end);
    f.write("XXXX", 4);
  }
  CompileCache third(dir.path, 1 << 20);
  EXPECT_FALSE(third.list()[0].valid);
  auto d = compileCached(kSrc, opts, third);
  EXPECT_TRUE(d->ok);
  EXPECT_EQ(third.stats().corrupt, 1u);
  EXPECT_EQ(d->ptx, c->ptx);
  CompileCache fourth(dir.path, 1 << 20);
  compileCached(kSrc, opts, fourth);
  EXPECT_EQ(fourth.stats().diskHits, 1u); // rewritten and valid again
  EXPECT_TRUE(fourth.list()[0].valid);
}

TEST(CacheTest, SizeBoundEvictsLeastRecentlyUsed) {
  TempDir dir;
  CompileCache cache(dir.path, 20000); // about two entries
  for (int block : {128, 256, 512, 1024}) {
    CompileOptions o;
    o.defines["BLOCK"] = std::to_string(block);
    ASSERT_TRUE(compileCached(kSrc, o, cache)->ok);
    std::this_thread::sleep_for(std::chrono::milliseconds(1100)); // mtime granularity
  }
  auto entries = cache.list();
  uint64_t total = 0;
  for (auto &e : entries)
    total += e.bytes;
  EXPECT_LE(total, 20000u);
  ASSERT_FALSE(entries.empty());
  CompileOptions newest;
  newest.defines["BLOCK"] = "1024";
  EXPECT_EQ(entries[0].key, cacheKey(kSrc, newest));
}

TEST(CacheTest, ConcurrentProcessesShareTheCache) {
  TempDir dir;
  // Several processes compile and store the same and different keys at once;
  // every entry must be valid afterwards and no temporary file left behind.
  std::vector<pid_t> kids;
  for (int p = 0; p < 4; ++p) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      CompileCache cache(dir.path, 1 << 20);
      for (int block : {256, 512}) {
        CompileOptions o;
        o.defines["BLOCK"] = std::to_string(block);
        if (!compileCached(kSrc, o, cache)->ok)
          _exit(1);
      }
      _exit(0);
    }
    kids.push_back(pid);
  }
  for (pid_t pid : kids) {
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  CompileCache cache(dir.path, 1 << 20);
  auto entries = cache.list();
  EXPECT_EQ(entries.size(), 2u);
  for (auto &e : entries)
    EXPECT_TRUE(e.valid);
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(dir.path, ec), end; it != end && !ec;
       it.increment(ec))
    EXPECT_FALSE(llvm::sys::path::filename(it->path()).starts_with(".tmp"));
}

// Hostile directory contents (issue 17, item 10): a FIFO, a link to
// /dev/zero and a directory named like the entry are not opened (a FIFO
// hung the lookup, the link aborted it, the directory was reported corrupt
// forever); temporaries of writers that died are removed by clear() and,
// once an hour old, by the size bound.
TEST(CacheTest, OnlyRegularFilesAreEntries) {
  CompileOptions opts;
  std::string key = cacheKey(kSrc, opts);
  for (int kind = 0; kind < 3; ++kind) {
    TempDir dir;
    std::string path = dir.path + "/" + key + ".tce";
    if (kind == 0)
      ASSERT_EQ(::mkfifo(path.c_str(), 0644), 0);
    else if (kind == 1)
      ASSERT_EQ(::symlink("/dev/zero", path.c_str()), 0);
    else
      ASSERT_FALSE(llvm::sys::fs::create_directory(path));
    CompileCache cache(dir.path, 1 << 20);
    EXPECT_TRUE(cache.list().empty()) << kind;
    auto r = compileCached(kSrc, opts, cache);
    EXPECT_TRUE(r->ok) << kind;
    EXPECT_EQ(cache.stats().corrupt, 0u) << kind;
    EXPECT_EQ(cache.stats().misses, 1u) << kind;
  }
  TempDir dir;
  CompileCache cache(dir.path, 1 << 20);
  std::string fresh = dir.path + "/.tmp-" + key + "-1-0", old = dir.path + "/.tmp-" + key + "-2-0";
  std::ofstream(fresh) << "partial";
  std::ofstream(old) << "partial";
  struct utimbuf longAgo = {std::time(nullptr) - 7200, std::time(nullptr) - 7200};
  ASSERT_EQ(::utime(old.c_str(), &longAgo), 0);
  CompileCache tiny(dir.path, 1); // every store runs the size bound
  compileCached(kSrc, opts, tiny);
  EXPECT_FALSE(llvm::sys::fs::exists(old));
  EXPECT_TRUE(llvm::sys::fs::exists(fresh));
  cache.clear();
  EXPECT_FALSE(llvm::sys::fs::exists(fresh));
}

/// The path of the entry of kSrc compiled with BLOCK = `block` in `dir`.
std::string entryOf(const std::string &dir, int block) {
  CompileOptions o;
  o.defines["BLOCK"] = std::to_string(block);
  return dir + "/" + cacheKey(kSrc, o) + ".tce";
}

std::shared_ptr<const CompileResult> compileBlock(int block, CompileCache &cache) {
  CompileOptions o;
  o.defines["BLOCK"] = std::to_string(block);
  return compileCached(kSrc, o, cache);
}

/// Sets the last use of `path` to `age` seconds ago.
void ageFile(const std::string &path, std::time_t age) {
  struct utimbuf t = {std::time(nullptr) - age, std::time(nullptr) - age};
  ASSERT_EQ(::utime(path.c_str(), &t), 0) << path;
}

// A directory named like an entry made its key miss in every process and
// survived `tilec cache clear` ("removed 0 entries"); issue 17, item 10.
// clear() removes it (and any FIFO or link named like an entry), and a
// store replaces it.
TEST(CacheTest, ADirectoryNamedLikeAnEntryIsClearedOrReplaced) {
  {
    TempDir dir;
    std::string squatter = entryOf(dir.path, 1024);
    ASSERT_FALSE(llvm::sys::fs::create_directory(squatter));
    std::ofstream(squatter + "/inside") << "x";
    ASSERT_EQ(::mkfifo(entryOf(dir.path, 256).c_str(), 0644), 0);
    ASSERT_EQ(::symlink("/dev/zero", entryOf(dir.path, 512).c_str()), 0);
    CompileCache cache(dir.path, 1 << 20);
    EXPECT_EQ(cache.clear(), 3u);
    std::error_code ec;
    EXPECT_EQ(llvm::sys::fs::directory_iterator(dir.path, ec), llvm::sys::fs::directory_iterator());
    ASSERT_TRUE(compileBlock(1024, cache)->ok);
    CompileCache next(dir.path, 1 << 20);
    ASSERT_TRUE(compileBlock(1024, next)->ok);
    EXPECT_EQ(next.stats().diskHits, 1u);
  }
  TempDir dir;
  std::string squatter = entryOf(dir.path, 1024);
  ASSERT_FALSE(llvm::sys::fs::create_directory(squatter));
  std::ofstream(squatter + "/inside") << "x";
  CompileCache cache(dir.path, 1 << 20);
  ASSERT_TRUE(compileBlock(1024, cache)->ok);
  EXPECT_TRUE(llvm::sys::fs::is_regular_file(squatter));
  CompileCache next(dir.path, 1 << 20);
  ASSERT_TRUE(compileBlock(1024, next)->ok);
  EXPECT_EQ(next.stats().diskHits, 1u);
  EXPECT_EQ(next.clear(), 1u);
}

// Temporary files count toward the bound (issue 17, item 10): they were
// removed by clear() and, an hour old, by the bound, but their bytes were
// not counted, so a killed writer's could take the disk past the limit.
TEST(CacheTest, TemporariesCountTowardTheBound) {
  TempDir dir;
  uint64_t entry;
  {
    CompileCache probe(dir.path, 1 << 30);
    ASSERT_TRUE(compileBlock(512, probe)->ok);
    entry = probe.list()[0].bytes;
  }
  ageFile(entryOf(dir.path, 512), 100);
  std::string young = dir.path + "/.tmp-" + std::string(32, '0') + "-999999-0";
  std::ofstream(young) << std::string(2 * entry, 't');
  // Two entries (of about the same size) fit in 3.5; with the temporary of
  // two they do not: the least recently used entry goes (the young
  // temporary may be a live writer's, so it stays).
  CompileCache cache(dir.path, entry * 7 / 2);
  ASSERT_TRUE(compileBlock(1024, cache)->ok);
  auto entries = cache.list();
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(dir.path + "/" + entries[0].key + ".tce", entryOf(dir.path, 1024));
  EXPECT_TRUE(llvm::sys::fs::exists(young));
  cache.clear();
  EXPECT_FALSE(llvm::sys::fs::exists(young));
}

// A store keeps a running total instead of listing the directory under the
// lock that every lookup takes (issue 17, item 10): one listing at the
// process's first store, another when its total passes the bound, which
// then evicts by what is on disk, other processes' entries included.
TEST(CacheTest, StoresKeepARunningTotal) {
  uint64_t entry = 0;
  {
    TempDir dir;
    CompileCache cache(dir.path, 1 << 30);
    for (int block : {64, 128, 256, 512, 1024})
      ASSERT_TRUE(compileBlock(block, cache)->ok);
    EXPECT_EQ(cache.stats().scans, 1u);
    for (auto &e : cache.list())
      entry = std::max(entry, e.bytes);
    EXPECT_EQ(cache.list().size(), 5u);
  }
  TempDir dir;
  CompileCache small(dir.path, entry * 7 / 2); // three entries fit
  CompileCache other(dir.path, 1 << 30);       // another process
  ASSERT_TRUE(compileBlock(64, small)->ok);
  ageFile(entryOf(dir.path, 64), 60);
  ASSERT_TRUE(compileBlock(128, other)->ok);
  ageFile(entryOf(dir.path, 128), 50);
  ASSERT_TRUE(compileBlock(256, other)->ok);
  ageFile(entryOf(dir.path, 256), 40);
  // small counts its own two entries: under the bound, no listing.
  ASSERT_TRUE(compileBlock(512, small)->ok);
  ageFile(entryOf(dir.path, 512), 30);
  ASSERT_TRUE(compileBlock(1024, small)->ok);
  ageFile(entryOf(dir.path, 1024), 20);
  EXPECT_EQ(small.stats().scans, 1u);
  EXPECT_EQ(small.list().size(), 5u);
  // Its fourth entry passes the bound by its count: it lists the directory
  // and evicts the least recently used, whoever stored them.
  ASSERT_TRUE(compileBlock(2048, small)->ok);
  EXPECT_EQ(small.stats().scans, 2u);
  auto entries = small.list();
  uint64_t total = 0;
  for (auto &e : entries)
    total += e.bytes;
  EXPECT_LE(total, entry * 7 / 2);
  ASSERT_EQ(entries.size(), 3u);
  EXPECT_EQ(dir.path + "/" + entries[0].key + ".tce", entryOf(dir.path, 2048));
  EXPECT_FALSE(llvm::sys::fs::exists(entryOf(dir.path, 64)));
  EXPECT_FALSE(llvm::sys::fs::exists(entryOf(dir.path, 128)));
  EXPECT_FALSE(llvm::sys::fs::exists(entryOf(dir.path, 256)));
}

// Eight threads missing the same key at once: one compiles, the others
// wait for it and get the same result object (before, each compiled).
TEST(CacheTest, AMissIsSingleFlight) {
  TempDir dir;
  CompileCache cache(dir.path, 1 << 20);
  CompileOptions opts;
  opts.defines["BLOCK"] = "512";
  std::vector<std::shared_ptr<const CompileResult>> results(8);
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      ++ready;
      while (ready.load() < 8)
        std::this_thread::yield();
      results[t] = compileCached(kSrc, opts, cache);
    });
  for (std::thread &t : threads)
    t.join();
  for (int t = 0; t < 8; ++t) {
    ASSERT_TRUE(results[t] && results[t]->ok) << t;
    EXPECT_EQ(results[t].get(), results[0].get()) << t;
  }
  EXPECT_EQ(cache.list().size(), 1u);
}

TEST(CacheTest, ErrorsAreNotCached) {
  TempDir dir;
  CompileCache cache(dir.path, 1 << 20);
  auto r = compileCached("kernel k( {", CompileOptions(), cache);
  EXPECT_FALSE(r->ok);
  EXPECT_TRUE(cache.list().empty());
}

TEST(HeaderTest, GeneratedHeaderHasTypedLaunchers) {
  CompileOptions o;
  CompileResult r = compile(R"(
kernel scale(a: f16, n: i64, x: tensor<bf16, 2>) grid(cdiv(x.shape[0], 4)) {
  let t = load(x, [block_id(0), 0], [4, 64]);
  store(x, [block_id(0), 0], t * cast<bf16>(a));
})", o);
  ASSERT_TRUE(r.ok) << r.diagnostics;
  std::string h = generateHeader(r, "my_kernels", "scale.tile");
  EXPECT_NE(h.find("namespace my_kernels {"), std::string::npos);
  EXPECT_NE(h.find("inline void scale(float a, int64_t n, const tilec::TensorArg &x, "
                   "tilec::Stream *stream = nullptr)"),
            std::string::npos)
      << h;
  EXPECT_NE(h.find("tilec::ArgValue::scalar(tilec::ScalarType::F16, static_cast<double>(a))"),
            std::string::npos);
  EXPECT_NE(h.find("/// grid(cdiv(x.shape[0], 4))"), std::string::npos);
  EXPECT_NE(h.find(".entry scale"), std::string::npos);
}

} // namespace
