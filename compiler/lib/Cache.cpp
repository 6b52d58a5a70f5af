//===- Cache.cpp - In-process and on-disk compile cache -------------------===//

#include "tilec/Cache.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utime.h>

using namespace tilec;

static constexpr llvm::StringLiteral kMagic = "TILEC-CACHE 1\n";
static constexpr llvm::StringLiteral kSuffix = ".tce";

static std::string hex128(llvm::StringRef data) {
  llvm::XXH128_hash_t h = llvm::xxh3_128bits(
      llvm::ArrayRef<uint8_t>(data.bytes_begin(), data.size()));
  return llvm::utohexstr(h.high64, /*LowerCase=*/true, 16) +
         llvm::utohexstr(h.low64, /*LowerCase=*/true, 16);
}

/// Which build of the compiler this is: the GNU build ID of the ELF object
/// its code was loaded from (libtilec.so, or the program it is linked into;
/// the linker hashes the object's contents into it), else that file's path,
/// size and modification time. The version string alone would let a
/// rebuilt or reinstalled compiler of the same version read the PTX of the
/// one before.
static const std::string &compilerBuild() {
  static const std::string id = [] {
    struct Search {
      uintptr_t address;
      std::string id;
    } search{reinterpret_cast<uintptr_t>(&compilerBuild), {}};
    dl_iterate_phdr(
        [](struct dl_phdr_info *info, size_t, void *data) {
          auto *s = static_cast<Search *>(data);
          bool mine = false;
          for (int i = 0; i < info->dlpi_phnum && !mine; ++i) {
            const ElfW(Phdr) &ph = info->dlpi_phdr[i];
            uintptr_t start = info->dlpi_addr + ph.p_vaddr;
            mine = ph.p_type == PT_LOAD && s->address >= start &&
                   s->address < start + ph.p_memsz;
          }
          if (!mine)
            return 0;
          for (int i = 0; i < info->dlpi_phnum; ++i) {
            const ElfW(Phdr) &ph = info->dlpi_phdr[i];
            if (ph.p_type != PT_NOTE)
              continue;
            auto *p = reinterpret_cast<const uint8_t *>(info->dlpi_addr + ph.p_vaddr);
            const uint8_t *end = p + ph.p_memsz;
            while (p + sizeof(ElfW(Nhdr)) <= end) {
              auto *note = reinterpret_cast<const ElfW(Nhdr) *>(p);
              const uint8_t *name = p + sizeof(ElfW(Nhdr));
              const uint8_t *desc = name + ((note->n_namesz + 3) & ~3u);
              if (desc + note->n_descsz > end)
                break;
              if (note->n_type == NT_GNU_BUILD_ID && note->n_namesz == 4 &&
                  std::memcmp(name, "GNU", 4) == 0) {
                s->id = "build-id " + llvm::toHex(llvm::ArrayRef<uint8_t>(desc, note->n_descsz),
                                                  /*LowerCase=*/true);
                return 1;
              }
              p = desc + ((note->n_descsz + 3) & ~3u);
            }
          }
          return 1;
        },
        &search);
    if (!search.id.empty())
      return search.id;
    Dl_info info{};
    struct stat st{};
    if (!dladdr(reinterpret_cast<void *>(&compilerBuild), &info) || !info.dli_fname ||
        stat(info.dli_fname, &st) != 0)
      return std::string("unknown");
    return std::string(info.dli_fname) + " " + std::to_string(st.st_size) + " " +
           std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec);
  }();
  return id;
}

/// The compile's inputs and the compiler's version, length-prefixed so
/// that no two option sets serialize alike.
static std::string keyMaterial(std::string_view source, const CompileOptions &options) {
  std::string material;
  llvm::raw_string_ostream os(material);
  auto field = [&](llvm::StringRef s) { os << s.size() << ':' << s << ';'; };
  field(compilerVersion());
  field(options.arch);
  field(options.kernel);
  field(std::to_string(options.optLevel));
  field(std::to_string(options.numWarps));
  field(std::to_string(options.minBlocksPerSM));
  field(std::to_string(static_cast<int>(options.emit)));
  for (auto &[name, value] : options.defines) { // std::map: sorted
    field(name);
    field(value);
  }
  // The file name appears in diagnostics only; successful results do not
  // depend on it, so it is not part of the key.
  field(llvm::StringRef(source.data(), source.size()));
  return material;
}

std::string tilec::sourceKey(std::string_view source, const CompileOptions &options) {
  return hex128(keyMaterial(source, options));
}

std::string tilec::cacheKey(std::string_view source, const CompileOptions &options) {
  return hex128(keyMaterial(source, options) + "build:" + compilerBuild());
}

static std::string defaultDirectory() {
  if (const char *off = std::getenv("TILEC_CACHE"))
    if (llvm::StringRef(off) == "0")
      return "";
  if (const char *d = std::getenv("TILEC_CACHE_DIR"); d && *d)
    return d;
  llvm::SmallString<256> path;
  if (const char *x = std::getenv("XDG_CACHE_HOME"); x && *x) {
    path = x;
  } else if (const char *home = std::getenv("HOME"); home && *home) {
    path = home;
    llvm::sys::path::append(path, ".cache");
  } else {
    return "";
  }
  llvm::sys::path::append(path, "tilec");
  return std::string(path);
}

CompileCache::CompileCache(std::string directory, uint64_t maxBytes)
    : dir(std::move(directory)), limit(maxBytes) {}

CompileCache &CompileCache::global() {
  static CompileCache cache = [] {
    uint64_t limit = 512ull << 20;
    if (const char *m = std::getenv("TILEC_CACHE_MAX_BYTES")) {
      unsigned long long v;
      if (!llvm::StringRef(m).getAsInteger(10, v))
        limit = v;
    }
    return CompileCache(defaultDirectory(), limit);
  }();
  return cache;
}

static std::string entryPath(const std::string &dir, const std::string &key) {
  return dir + "/" + key + std::string(kSuffix);
}

/// Entry layout: magic, a header of `name value` lines, a blank line, then
/// the PTX and the signature text. The checksum covers both payloads.
static std::string encodeEntry(const std::string &key, const CompileResult &r) {
  std::string sigs = serializeSignatures(r.kernels);
  std::string out(kMagic);
  out += "key " + key + "\n";
  out += "version " + std::string(compilerVersion()) + "\n";
  out += "ptx-bytes " + std::to_string(r.ptx.size()) + "\n";
  out += "sig-bytes " + std::to_string(sigs.size()) + "\n";
  out += "checksum " + hex128(r.ptx + sigs) + "\n\n";
  out += r.ptx;
  out += sigs;
  return out;
}

/// Parses an entry; nullptr when it is malformed or fails its checksum.
static std::shared_ptr<CompileResult>
decodeEntry(llvm::StringRef data, const std::string &key,
            std::vector<std::string> *kernelNames = nullptr) {
  if (!data.consume_front(kMagic))
    return nullptr;
  size_t headerEnd = data.find("\n\n");
  if (headerEnd == llvm::StringRef::npos)
    return nullptr;
  llvm::StringRef header = data.take_front(headerEnd);
  llvm::StringRef payload = data.drop_front(headerEnd + 2);
  std::string gotKey, checksum;
  uint64_t ptxBytes = ~0ull, sigBytes = ~0ull;
  llvm::SmallVector<llvm::StringRef> lines;
  header.split(lines, '\n');
  for (llvm::StringRef line : lines) {
    auto [name, value] = line.split(' ');
    if (name == "key")
      gotKey = value.str();
    else if (name == "checksum")
      checksum = value.str();
    else if (name == "ptx-bytes" && value.getAsInteger(10, ptxBytes))
      return nullptr;
    else if (name == "sig-bytes" && value.getAsInteger(10, sigBytes))
      return nullptr;
  }
  if ((!key.empty() && gotKey != key) || ptxBytes == ~0ull || sigBytes == ~0ull ||
      payload.size() != ptxBytes + sigBytes || hex128(payload) != checksum)
    return nullptr;
  auto result = std::make_shared<CompileResult>();
  result->ptx = payload.take_front(ptxBytes).str();
  auto sigs = parseSignatures(payload.drop_front(ptxBytes).str());
  if (!sigs)
    return nullptr;
  result->kernels = std::move(*sigs);
  result->output = result->ptx;
  result->ok = true;
  if (kernelNames)
    for (auto &s : result->kernels)
      kernelNames->push_back(s.name);
  return result;
}

/// Whether `path` is a regular file (not followed if a symbolic link): the
/// cache opens nothing else, so a FIFO, a device or a link to one named
/// like an entry cannot hang or abort a lookup.
static bool isRegularFile(const std::string &path, struct stat *st = nullptr) {
  struct stat local;
  struct stat &s = st ? *st : local;
  return ::lstat(path.c_str(), &s) == 0 && S_ISREG(s.st_mode);
}

/// Whether `path` is a directory (not followed if a symbolic link).
static bool isDirectory(const std::string &path) {
  struct stat s;
  return ::lstat(path.c_str(), &s) == 0 && S_ISDIR(s.st_mode);
}

/// A temporary file older than this belongs to a writer that died before
/// its rename.
static constexpr std::time_t kStaleTemporarySeconds = 3600;
/// A store lists the directory again when its last listing is older.
static constexpr std::time_t kRescanSeconds = 30;

/// Removes the temporary files of writers that died (older than an hour;
/// `all`: every one); returns the bytes of those that are left.
static uint64_t removeStaleTemporaries(const std::string &dir, bool all) {
  std::error_code ec;
  std::time_t now = std::time(nullptr);
  uint64_t left = 0;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec; it.increment(ec)) {
    llvm::StringRef name = llvm::sys::path::filename(it->path());
    struct stat st;
    if (!name.starts_with(".tmp-") || !isRegularFile(it->path(), &st))
      continue;
    if ((all || now - st.st_mtime > kStaleTemporarySeconds) &&
        !llvm::sys::fs::remove(it->path()))
      continue;
    left += st.st_size;
  }
  return left;
}

void CompileCache::DiskIndex::set(const std::string &key, uint64_t bytes) {
  auto [it, inserted] = entries.try_emplace(key, bytes);
  if (!inserted) {
    entryBytes -= it->second;
    it->second = bytes;
  }
  entryBytes += bytes;
}

void CompileCache::DiskIndex::erase(const std::string &key) {
  auto it = entries.find(key);
  if (it == entries.end())
    return;
  entryBytes -= it->second;
  entries.erase(it);
}

std::shared_ptr<const CompileResult> CompileCache::readDisk(const std::string &key) {
  if (dir.empty())
    return nullptr;
  std::string path = entryPath(dir, key);
  if (!isRegularFile(path))
    return nullptr;
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return nullptr;
  auto result = decodeEntry((*buffer)->getBuffer(), key);
  if (!result) {
    // Corrupt or truncated: drop it; the caller recompiles and rewrites it.
    ++counters.corrupt;
    llvm::sys::fs::remove(path);
    index.erase(key);
    return nullptr;
  }
  ::utime(path.c_str(), nullptr); // mark as recently used
  return result;
}

void CompileCache::writeDisk(const std::string &key, const CompileResult &r) {
  if (dir.empty() || llvm::sys::fs::create_directories(dir))
    return;
  static std::atomic<unsigned> counter{0};
  std::string tmp = dir + "/.tmp-" + key + "-" + std::to_string(::getpid()) +
                    "-" + std::to_string(counter++);
  std::string data = encodeEntry(key, r);
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(tmp, ec, llvm::sys::fs::OF_None);
    if (ec)
      return;
    os << data;
    os.close();
    if (os.has_error()) {
      os.clear_error();
      llvm::sys::fs::remove(tmp);
      return;
    }
  }
  // rename() is atomic: readers see the old entry, no entry or the new one.
  // It replaces a FIFO, device or link named like the entry, but not a
  // directory: that one is removed first, or its key would miss forever.
  std::string path = entryPath(dir, key);
  std::error_code ec = llvm::sys::fs::rename(tmp, path);
  if (ec && isDirectory(path) && !llvm::sys::fs::remove_directories(path, /*IgnoreErrors=*/false))
    ec = llvm::sys::fs::rename(tmp, path);
  if (ec) {
    llvm::sys::fs::remove(tmp);
    return;
  }
  // The running total, without listing the directory (a listing per store
  // under the lock every lookup takes stalled all threads).
  std::vector<Entry> listed;
  bool fresh = !index.built || std::time(nullptr) - index.scanned > kRescanSeconds;
  if (fresh)
    listed = scanDisk(); // counts the new entry too
  else
    index.set(key, data.size());
  if (index.entryBytes + index.tempBytes <= limit)
    return;
  // Past the bound by this process's count: evict by what is there now.
  if (!fresh)
    listed = scanDisk();
  evict(listed);
}

std::vector<CompileCache::Entry> CompileCache::scanDisk() {
  ++counters.scans;
  index = DiskIndex();
  index.built = true;
  index.scanned = std::time(nullptr);
  // Sizes and times only (a stat per entry): reading and decoding every
  // entry made a store at 1000 entries take 200 ms.
  std::vector<Entry> entries = list(/*decode=*/false);
  for (const Entry &e : entries)
    index.set(e.key, e.bytes);
  index.tempBytes = removeStaleTemporaries(dir, /*all=*/false);
  return entries;
}

void CompileCache::evict(const std::vector<Entry> &entries) {
  uint64_t total = index.entryBytes + index.tempBytes;
  if (total <= limit)
    return;
  // Most recent first: drop from the back down to 90% of the limit.
  for (auto it = entries.rbegin(); it != entries.rend() && total > limit * 9 / 10; ++it) {
    if (llvm::sys::fs::remove(entryPath(dir, it->key)))
      continue;
    total -= std::min(total, it->bytes);
    index.erase(it->key);
  }
}

std::shared_ptr<const CompileResult> CompileCache::lookup(const std::string &key) {
  std::lock_guard<std::mutex> lock(mutex);
  auto it = memory.find(key);
  if (it != memory.end()) {
    ++counters.memoryHits;
    return it->second;
  }
  auto r = readDisk(key);
  if (r) {
    ++counters.diskHits;
    memory.emplace(key, r);
    return r;
  }
  ++counters.misses;
  return nullptr;
}

void CompileCache::store(const std::string &key,
                         std::shared_ptr<const CompileResult> result) {
  if (!result || !result->ok || result->ptx.empty())
    return;
  std::lock_guard<std::mutex> lock(mutex);
  memory[key] = result;
  writeDisk(key, *result);
}

CompileCache::Usage CompileCache::usage() const {
  Usage u;
  for (const Entry &e : list(/*decode=*/false)) {
    ++u.entries;
    u.bytes += e.bytes;
  }
  return u;
}

std::vector<CompileCache::Entry> CompileCache::list(bool decode) const {
  std::vector<Entry> entries;
  if (dir.empty())
    return entries;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec;
       it.increment(ec)) {
    llvm::StringRef name = llvm::sys::path::filename(it->path());
    if (!name.ends_with(kSuffix))
      continue;
    struct stat st;
    if (!isRegularFile(it->path(), &st))
      continue; // a directory, FIFO, device or link named like an entry
    Entry e;
    e.key = name.drop_back(kSuffix.size()).str();
    e.bytes = st.st_size;
    e.lastUse = st.st_mtime;
    if (decode) {
      auto buffer = llvm::MemoryBuffer::getFile(it->path(), false, false);
      e.valid = buffer && decodeEntry((*buffer)->getBuffer(), e.key, &e.kernels);
    }
    entries.push_back(std::move(e));
  }
  std::sort(entries.begin(), entries.end(),
            [](const Entry &a, const Entry &b) { return a.lastUse > b.lastUse; });
  return entries;
}

void CompileCache::clearMemory() {
  std::lock_guard<std::mutex> lock(mutex);
  memory.clear();
}

size_t CompileCache::clear() {
  std::lock_guard<std::mutex> lock(mutex);
  memory.clear();
  index = DiskIndex();
  if (dir.empty())
    return 0;
  // Everything named like an entry, not only the regular files list()
  // shows: a directory there would make its key miss until removed.
  size_t removed = 0;
  std::error_code ec;
  std::vector<std::string> paths;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec; it.increment(ec))
    if (llvm::sys::path::filename(it->path()).ends_with(kSuffix))
      paths.push_back(it->path());
  for (const std::string &path : paths) {
    // unlink, not fs::remove, which refuses FIFOs and devices.
    if (isDirectory(path) ? !llvm::sys::fs::remove_directories(path, /*IgnoreErrors=*/false)
                          : ::unlink(path.c_str()) == 0)
      ++removed;
  }
  removeStaleTemporaries(dir, /*all=*/true);
  return removed;
}

CompileCache::Stats CompileCache::stats() const {
  std::lock_guard<std::mutex> lock(mutex);
  return counters;
}

