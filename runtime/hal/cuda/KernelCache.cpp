//===- KernelCache.cpp - Compiled CUDA kernels on disk --------------------===//

#include "runtime/hal/cuda/KernelCache.h"

#include "runtime/base/Checksum.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>

namespace dlc::rt::hal::cuda {

namespace {

constexpr char kMagic[8] = {'D', 'L', 'C', 'K', 'E', 'R', 'N', '1'};

std::string hex64(uint64_t v) {
  char buffer[17];
  std::snprintf(buffer, sizeof buffer, "%016llx", static_cast<unsigned long long>(v));
  return buffer;
}

/// mkdir -p.
bool makeDirectories(const std::string &path) {
  if (path.empty())
    return false;
  for (size_t i = 1; i <= path.size(); ++i) {
    if (i != path.size() && path[i] != '/')
      continue;
    std::string prefix = path.substr(0, i);
    if (mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST)
      return false;
  }
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

const char *env(const char *name) {
  const char *v = std::getenv(name);
  return v && *v ? v : nullptr;
}

bool fileExists(const std::string &path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

} // namespace

std::string KernelCacheKey::canonical() const {
  return strCat("source=", hex64(fnv1a64(asBytes(source))), ":", source.size(), "\narch=", arch,
                "\ncompiler=", compilerVersion, "\nflags=", flags,
                "\nkind=", kind == CodeKind::kCubin ? "cubin" : "ptx", "\n");
}

std::string KernelCacheKey::fileName() const {
  return strCat(hex64(fnv1a64(asBytes(canonical()))), "-", arch,
                kind == CodeKind::kCubin ? ".cubin" : ".ptx");
}

std::vector<std::string> nvrtcFlags(const std::string &arch) {
  return {"--gpu-architecture=" + arch, "-default-device", "-std=c++17", "-lineinfo"};
}

std::string nvrtcFlagString(const std::string &arch) {
  std::string joined;
  for (const std::string &f : nvrtcFlags(arch))
    joined += (joined.empty() ? "" : " ") + f;
  return joined;
}

int smVersion(const std::string &arch) {
  if (arch.size() < 4 || arch.rfind("sm_", 0) != 0)
    return 0;
  int v = 0;
  for (size_t i = 3; i < arch.size(); ++i) {
    if (arch[i] < '0' || arch[i] > '9' || v > 100000)
      return 0;
    v = v * 10 + (arch[i] - '0');
  }
  return v;
}

std::string cudaIncludeDirectory() {
  std::vector<std::string> candidates;
  if (const char *d = env("DLC_CUDA_INCLUDE_DIR"))
    candidates.push_back(d);
  if (const char *d = env("CUDA_HOME"))
    candidates.push_back(std::string(d) + "/include");
  if (const char *d = env("CUDA_PATH"))
    candidates.push_back(std::string(d) + "/include");
  candidates.push_back("/usr/local/cuda/include");
  for (const std::string &c : candidates)
    if (fileExists(c + "/cuda_fp16.h"))
      return c;
  return "";
}

KernelCache::KernelCache(std::string directory) : directory_(std::move(directory)) {
  if (directory_.empty())
    directory_ = defaultDirectory();
}

std::string KernelCache::defaultDirectory() {
  if (const char *d = env("DLC_CACHE_DIR"))
    return d;
  if (const char *d = env("XDG_CACHE_HOME"))
    return std::string(d) + "/dlc/kernels";
  if (const char *d = env("HOME"))
    return std::string(d) + "/.cache/dlc/kernels";
  return "/tmp/dlc-kernels";
}

bool KernelCache::lookup(const KernelCacheKey &key, std::vector<uint8_t> *out) const {
  std::ifstream in(directory_ + "/" + key.fileName(), std::ios::binary);
  if (!in)
    return false;
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
  const std::string canonical = key.canonical();
  const size_t header = sizeof kMagic + sizeof(uint32_t) + canonical.size();
  if (bytes.size() <= header || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0)
    return false;
  uint32_t length;
  std::memcpy(&length, bytes.data() + sizeof kMagic, sizeof length);
  if (length != canonical.size() ||
      std::memcmp(bytes.data() + sizeof kMagic + sizeof length, canonical.data(), length) != 0)
    return false;
  out->assign(bytes.begin() + static_cast<ptrdiff_t>(header), bytes.end());
  return true;
}

Status KernelCache::store(const KernelCacheKey &key, ByteSpan bytes) const {
  if (!makeDirectories(directory_))
    return unavailable("kernel cache: cannot create '", directory_, "': ", std::strerror(errno));
  const std::string path = directory_ + "/" + key.fileName();
  const std::string temporary = strCat(path, ".tmp.", getpid());
  const std::string canonical = key.canonical();
  {
    std::ofstream f(temporary, std::ios::binary | std::ios::trunc);
    uint32_t length = static_cast<uint32_t>(canonical.size());
    f.write(kMagic, sizeof kMagic);
    f.write(reinterpret_cast<const char *>(&length), sizeof length);
    f.write(canonical.data(), static_cast<std::streamsize>(canonical.size()));
    f.write(reinterpret_cast<const char *>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    if (!f) {
      std::remove(temporary.c_str());
      return unavailable("kernel cache: cannot write '", temporary, "'");
    }
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    std::remove(temporary.c_str());
    return unavailable("kernel cache: cannot rename into '", path, "': ", std::strerror(errno));
  }
  return okStatus();
}

} // namespace dlc::rt::hal::cuda
