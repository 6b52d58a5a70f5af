//===- Cache.h - In-process and on-disk compile cache -----------*- C++ -*-===//
//
// compileCached() returns the PTX and signatures for (source, options) from
// an in-process table, else from the disk cache, else by compiling and
// storing the result in both. Keys are a 128-bit content hash of the source,
// every option that changes the output and the compiler version.
//
// The disk cache lives in $TILEC_CACHE_DIR, else $XDG_CACHE_HOME/tilec, else
// ~/.cache/tilec; TILEC_CACHE=0 turns it off. It is bounded by
// $TILEC_CACHE_MAX_BYTES (default 512 MiB; least recently used entries go
// first). Entries are written to a temporary file and renamed into place, so
// several processes can share the cache; an entry that fails its checksum is
// deleted and rebuilt.
//
// The bound counts the entries and the temporary files (of writers that are
// still writing, or died: those older than an hour are removed whenever the
// directory is scanned). A store does not list the directory: the process
// keeps the size of every entry it knows, from one scan at its first store,
// and updates it as it stores and evicts. It scans again when that total
// passes the bound (then it evicts by what is really there) or when its
// last scan is more than 30 seconds old, since other processes store and
// evict too; between scans the directory can exceed the bound by what the
// other processes stored meanwhile.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_CACHE_H
#define TILEC_CACHE_H

#include "tilec/Compiler.h"

#include <cstdint>
#include <ctime>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace tilec {

/// The cache key of compiling `source` with `options` with this build of
/// the compiler (32 hex digits).
std::string cacheKey(std::string_view source, const CompileOptions &options);

/// The key of `source` and `options` with the compiler's version but not
/// its build (32 hex digits): what outlives a rebuild, the autotuner's
/// database (shared by tilec tune, libtilec.so and every build).
std::string sourceKey(std::string_view source, const CompileOptions &options);

class CompileCache {
public:
  /// `directory` empty: in-process only.
  CompileCache(std::string directory, uint64_t maxBytes);

  /// The process-wide cache configured from the environment.
  static CompileCache &global();

  /// The in-process entry, else the disk entry (then kept in-process).
  std::shared_ptr<const CompileResult> lookup(const std::string &key);
  /// Stores a successful PTX result in-process and on disk.
  void store(const std::string &key, std::shared_ptr<const CompileResult> result);

  struct Entry {
    std::string key;
    uint64_t bytes = 0;
    std::time_t lastUse = 0;
    std::vector<std::string> kernels;
    bool valid = true;
  };
  /// Disk entries (regular files only), most recently used first; with
  /// `decode` each is read and checked (`valid`, `kernels`), else only
  /// stat'ed.
  std::vector<Entry> list(bool decode = true) const;
  /// Removes every disk entry, anything else named like one (a directory,
  /// FIFO or link, which would make its key miss forever) and every
  /// temporary file, and forgets the in-process entries. Returns how many
  /// things named like an entry it removed.
  size_t clear();
  void clearMemory();

  const std::string &directory() const { return dir; }
  uint64_t maxBytes() const { return limit; }
  /// The disk entries and their bytes (without decoding them).
  struct Usage {
    size_t entries = 0;
    uint64_t bytes = 0;
  };
  Usage usage() const;

  struct Stats {
    uint64_t memoryHits = 0, diskHits = 0, misses = 0, corrupt = 0;
    /// Listings of the directory by stores (the first, then past the bound
    /// or 30 seconds after the last).
    uint64_t scans = 0;
  };
  Stats stats() const;

private:
  std::shared_ptr<const CompileResult> readDisk(const std::string &key);
  void writeDisk(const std::string &key, const CompileResult &result);
  /// Removes least recently used `entries` (most recent first, as list()
  /// gives them) while `index` is past the bound.
  void evict(const std::vector<Entry> &entries);
  /// Rebuilds `index` from the directory (removing stale temporaries);
  /// returns the entries as list(false).
  std::vector<Entry> scanDisk();

  std::string dir;
  uint64_t limit;
  mutable std::mutex mutex;
  std::unordered_map<std::string, std::shared_ptr<const CompileResult>> memory;
  Stats counters;
  /// The disk as this process knows it (under `mutex`): each entry's bytes,
  /// their sum, and the bytes of other writers' temporaries at the last scan.
  struct DiskIndex {
    bool built = false;
    std::time_t scanned = 0;
    std::unordered_map<std::string, uint64_t> entries;
    uint64_t entryBytes = 0, tempBytes = 0;
    void set(const std::string &key, uint64_t bytes);
    void erase(const std::string &key);
  } index;
  /// The keys being compiled by compileCached, for threads that miss the
  /// same key meanwhile (single flight); lookups of a miss happen under
  /// flightMutex.
  std::mutex flightMutex;
  std::unordered_map<std::string, std::shared_future<std::shared_ptr<const CompileResult>>>
      flights;
  friend std::shared_ptr<const CompileResult>
  compileCached(std::string_view source, const CompileOptions &options, CompileCache &cache);
};

/// compile() through the cache. Only successful PTX compilations are cached.
std::shared_ptr<const CompileResult>
compileCached(std::string_view source, const CompileOptions &options,
              CompileCache &cache = CompileCache::global());

} // namespace tilec

#endif // TILEC_CACHE_H
