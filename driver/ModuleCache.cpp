//===- ModuleCache.cpp - whole compiled modules, kept by content ----------===//

#include "driver/ModuleCache.h"

#include "codegen/common/HostCompiler.h"
#include "driver/Commands.h"

#include "mlir/IR/OperationSupport.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/BLAKE3.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <limits>
#include <link.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utime.h>

extern char **environ;

namespace dlc {

namespace {

/// A stream that hashes what is printed to it.
class HashStream final : public llvm::raw_ostream {
public:
  explicit HashStream(llvm::BLAKE3 &hash) : hash_(hash) { SetBufferSize(1 << 16); }
  ~HashStream() override { flush(); }

private:
  void write_impl(const char *data, size_t size) override {
    hash_.update(llvm::ArrayRef<uint8_t>(reinterpret_cast<const uint8_t *>(data), size));
    position_ += size;
  }
  uint64_t current_pos() const override { return position_; }

  llvm::BLAKE3 &hash_;
  uint64_t position_ = 0;
};

void field(llvm::BLAKE3 &hash, llvm::StringRef name, llvm::StringRef value) {
  // Lengths first: no two different field lists hash the same bytes.
  std::string head = name.str() + "=" + std::to_string(value.size()) + ":";
  hash.update(head);
  hash.update(value);
}

/// A file's identity without reading it: rebuilt or replaced, it differs.
std::string fileIdentity(const char *path) {
  struct stat st;
  if (::stat(path, &st) != 0)
    return std::string(path) + " (missing)";
  return std::string(path) + " " + std::to_string(st.st_size) + " " +
         std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec) + " " +
         std::to_string(st.st_ino);
}

int addLoadedObject(struct dl_phdr_info *info, size_t, void *data) {
  auto *names = static_cast<std::vector<std::string> *>(data);
  if (info->dlpi_name && *info->dlpi_name)
    names->push_back(fileIdentity(info->dlpi_name));
  return 0;
}

/// The executable and every shared object loaded into this process.
std::string compilerIdentity() {
  std::vector<std::string> objects;
  char exe[4096];
  ssize_t n = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0) {
    exe[n] = '\0';
    objects.push_back(fileIdentity(exe));
  }
  dl_iterate_phdr(addLoadedObject, &objects);
  std::sort(objects.begin() + (n > 0 ? 1 : 0), objects.end());
  std::string text;
  for (const std::string &o : objects)
    text += o + "\n";
  return text;
}

/// The DLC_* and CXX variables, sorted; those that only say where to
/// cache or how to report are left out.
std::string relevantEnvironment() {
  static const char *const kIgnored[] = {"DLC_CACHE_DIR", "DLC_CACHE_MAX_MB", "DLC_NO_PROGRESS",
                                         "DLC_NUM_THREADS"};
  std::vector<std::string> vars;
  for (char **e = environ; e && *e; ++e) {
    llvm::StringRef entry(*e);
    llvm::StringRef name = entry.split('=').first;
    if (!name.starts_with("DLC_") && name != "CXX")
      continue;
    if (llvm::is_contained(kIgnored, name))
      continue;
    vars.push_back(entry.str());
  }
  std::sort(vars.begin(), vars.end());
  std::string text;
  for (const std::string &v : vars)
    text += v + "\n";
  return text;
}

std::string entryPath(const std::string &directory, const std::string &key) {
  return directory + "/" + key + ".dlcm";
}

/// Copies `size` bytes from `in` to `out`, in the kernel where it can.
bool copyAll(int in, int out, uint64_t size) {
  uint64_t done = 0;
  while (done < size) {
    ssize_t n = ::copy_file_range(in, nullptr, out, nullptr, size - done, 0);
    if (n > 0) {
      done += static_cast<uint64_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR)
      continue;
    if (n == 0 || (errno != EXDEV && errno != ENOSYS && errno != EINVAL && errno != EOPNOTSUPP))
      return false;
    // Not between these files: through a buffer.
    std::vector<char> buffer(1 << 20);
    while (done < size) {
      ssize_t r = ::read(in, buffer.data(), buffer.size());
      if (r <= 0)
        return false;
      for (ssize_t w = 0; w < r;) {
        ssize_t k = ::write(out, buffer.data() + w, static_cast<size_t>(r - w));
        if (k < 0 && errno == EINTR)
          continue;
        if (k <= 0)
          return false;
        w += k;
      }
      done += static_cast<uint64_t>(r);
    }
  }
  return true;
}

} // namespace

std::string moduleCacheDirectory() {
  const char *dump = std::getenv("DLC_KERNEL_DUMP_DIR");
  if (dump && *dump)
    return "";
  return codegen::kernelCacheDirectory("modules");
}

std::string moduleCacheKey(mlir::ModuleOp model, const CompileOptions &compile) {
  llvm::BLAKE3 hash;
  field(hash, "cache", "dlc module cache 1");
  field(hash, "compiler", compilerIdentity());
  const char *cxx = std::getenv("DLC_CXX");
  std::string hostCompiler = cxx && *cxx ? cxx : "c++";
  field(hash, "host compiler", codegen::compilerVersion(hostCompiler));
  field(hash, "environment", relevantEnvironment());
  field(hash, "target", compile.target);
  field(hash, "train", compile.train ? "1" : "0");
  field(hash, "draw params", compile.drawParams ? "1" : "0");
  field(hash, "memory budget",
        compile.memoryBudget ? std::to_string(*compile.memoryBudget) : "none");
  field(hash, "mesh", compile.mesh.mesh);
  field(hash, "parallel", compile.mesh.parallel);
  field(hash, "zero", std::to_string(compile.mesh.zero));
  field(hash, "microbatches", std::to_string(compile.mesh.microbatches));
  field(hash, "schedule", compile.mesh.schedule);
  {
    HashStream stream(hash);
    stream << "model=";
    mlir::OpPrintingFlags flags;
    flags.enableDebugInfo(true, /*prettyForm=*/false)
        .elideLargeElementsAttrs(std::numeric_limits<int64_t>::max())
        .elideLargeResourceString(std::numeric_limits<int64_t>::max());
    model->print(stream, flags);
  }
  return llvm::toHex(hash.final(), /*LowerCase=*/true);
}

bool copyCachedModule(const std::string &directory, const std::string &key,
                      const std::string &output) {
  std::string path = entryPath(directory, key);
  int in = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0)
    return false;
  int fd = ::open(output.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) {
    ::close(in);
    return false;
  }
  // A module states its own size in its prelude (bytes 24..32, after the
  // magic): a damaged entry is dropped, never copied.
  struct stat st;
  unsigned char prelude[32];
  uint64_t recorded = 0;
  bool whole = ::fstat(in, &st) == 0 && ::pread(in, prelude, sizeof prelude, 0) == 32 &&
               std::memcmp(prelude, "DLCM", 4) == 0;
  if (whole) {
    for (int i = 7; i >= 0; --i)
      recorded = (recorded << 8) | prelude[24 + i];
    whole = recorded == static_cast<uint64_t>(st.st_size);
  }
  if (!whole) {
    ::close(in);
    ::close(fd);
    std::remove(path.c_str());
    return false;
  }
  bool copied = copyAll(in, fd, recorded);
  ::close(in);
  // Nothing half-written is left for the caller, which compiles instead.
  if (!copied && ::ftruncate(fd, 0) != 0)
    copied = false;
  if (::close(fd) != 0 || !copied)
    return false;
  ::utime(path.c_str(), nullptr); // a hit is a use: last to be pruned
  return true;
}

void storeCachedModule(const std::string &directory, const std::string &key,
                       const std::vector<uint8_t> &bytes) {
  if (directory.empty() || llvm::sys::fs::create_directories(directory))
    return;
  std::string path = entryPath(directory, key);
  std::string temporary = path + "." + std::to_string(::getpid()) + ".tmp";
  FILE *f = std::fopen(temporary.c_str(), "wb");
  if (!f)
    return;
  bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  ok = std::fclose(f) == 0 && ok;
  if (!ok || std::rename(temporary.c_str(), path.c_str()) != 0) {
    std::remove(temporary.c_str());
    return;
  }
  codegen::pruneCache(directory, codegen::kernelCacheLimitBytes());
}

} // namespace dlc
