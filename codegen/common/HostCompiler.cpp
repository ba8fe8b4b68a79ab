//===- HostCompiler.cpp - a source to a shared object, by c++ -------------===//

#include "codegen/common/HostCompiler.h"

#include "runtime/base/Checksum.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

namespace fs = std::filesystem;

namespace dlc::codegen {

using rt::strCat;

namespace {

/// `word` as one shell word: unchanged when it holds nothing the shell
/// reads specially, else in single quotes.
std::string shellWord(const std::string &word) {
  if (!word.empty() && word.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                              "0123456789_+-=,./:@%") == std::string::npos)
    return word;
  std::string quoted = "'";
  for (char c : word)
    quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

/// The command line compiling `job` in `folder`, and the object it writes.
std::string commandLine(const HostCompileJob &job, const std::string &folder,
                        const std::string &output) {
  std::string command = job.compiler;
  for (const std::string &flag : job.flags)
    command += " " + shellWord(flag);
  if (!job.headers.empty())
    command += " -I" + shellWord(folder);
  for (const std::string &name : job.preincludes)
    command += " -include " + shellWord(folder + "/" + name);
  if (!job.language.empty())
    command += " -x " + shellWord(job.language);
  command += " " + shellWord(folder + "/" + job.sourceName) + " -o " + shellWord(output);
  for (const std::string &library : job.libraries)
    command += " " + shellWord(library);
  return command;
}

/// The cache's name for `job`: a hash of its command line (in a fixed
/// folder), the compiler's version, its source and its headers.
std::string cacheKey(const HostCompileJob &job) {
  uint64_t hash = rt::fnv1a64(rt::asBytes(commandLine(job, ".", "out.so")));
  hash = rt::fnv1a64(rt::asBytes(compilerVersion(job.compiler)), hash);
  hash = rt::fnv1a64(rt::asBytes(job.source), hash);
  for (const HostFile &header : job.headers) {
    hash = rt::fnv1a64(rt::asBytes(header.name), hash);
    hash = rt::fnv1a64(rt::asBytes(header.text), hash);
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash));
  return hex;
}

bool readFile(const std::string &path, std::vector<uint8_t> *out) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return false;
  out->assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return !out->empty();
}

bool writeFile(const std::string &path, const std::string &text) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << text;
  return static_cast<bool>(f);
}

/// Keeps `object` as `cached`, through a rename so that a concurrent
/// reader never sees half a file.
void keep(const std::string &object, const std::string &cached) {
  std::error_code ec;
  fs::create_directories(fs::path(cached).parent_path(), ec);
  const std::string temporary = strCat(cached, ".", getpid());
  if (fs::copy_file(object, temporary, fs::copy_options::overwrite_existing, ec))
    fs::rename(temporary, cached, ec);
  if (ec)
    fs::remove(temporary, ec);
}

/// A new private folder under the temporary directory ($TMPDIR, else /tmp).
bool makeFolder(std::string *folder) {
  std::error_code ec;
  fs::path base = fs::temp_directory_path(ec);
  *folder = (ec ? fs::path("/tmp") : base).string() + "/dlc-compile-XXXXXX";
  return mkdtemp(folder->data()) != nullptr;
}

std::atomic<uint64_t> gCompilerRuns{0};

const char *variable(const char *name) {
  const char *v = std::getenv(name);
  return v && *v ? v : nullptr;
}

} // namespace

std::string compilerVersion(const std::string &compiler) {
  static std::mutex mutex;
  static std::map<std::string, std::string> known;
  std::lock_guard<std::mutex> lock(mutex);
  auto [it, inserted] = known.try_emplace(compiler);
  if (!inserted)
    return it->second;
  if (FILE *pipe = popen((compiler + " --version 2>/dev/null").c_str(), "r")) {
    char buffer[256];
    while (size_t n = std::fread(buffer, 1, sizeof buffer, pipe))
      it->second.append(buffer, n);
    pclose(pipe);
  }
  return it->second;
}

uint64_t hostCompilerRuns() { return gCompilerRuns.load(); }

bool kernelCacheDisabled() {
  const char *off = variable("DLC_NO_CACHE");
  return off && std::strcmp(off, "0") != 0;
}

std::string kernelCacheDirectory(const std::string &kind) {
  if (kernelCacheDisabled())
    return "";
  if (const char *d = variable("DLC_CACHE_DIR"))
    return strCat(d, "/", kind);
  if (const char *d = variable("XDG_CACHE_HOME"))
    return strCat(d, "/dlc/", kind);
  if (const char *d = variable("HOME"))
    return strCat(d, "/.cache/dlc/", kind);
  return strCat("/tmp/dlc-cache-", getuid(), "/", kind);
}

uint64_t kernelCacheLimitBytes() {
  uint64_t megabytes = 2048;
  if (const char *v = variable("DLC_CACHE_MAX_MB")) {
    char *end = nullptr;
    unsigned long long parsed = std::strtoull(v, &end, 10);
    if (end && *end == '\0')
      megabytes = parsed;
  }
  return megabytes << 20;
}

void pruneCache(const std::string &folder, uint64_t limitBytes) {
  std::error_code ec;
  std::vector<std::pair<fs::file_time_type, fs::path>> files;
  uint64_t total = 0;
  for (const fs::directory_entry &entry : fs::directory_iterator(folder, ec)) {
    if (!entry.is_regular_file(ec))
      continue;
    total += entry.file_size(ec);
    files.push_back({entry.last_write_time(ec), entry.path()});
  }
  if (total <= limitBytes)
    return;
  std::sort(files.begin(), files.end());
  for (auto &[time, path] : files) {
    if (total <= limitBytes / 4 * 3)
      break;
    uint64_t size = fs::file_size(path, ec);
    if (fs::remove(path, ec))
      total -= size;
  }
}

rt::Status compileOnHost(const HostCompileJob &job, std::vector<uint8_t> *sharedObject) {
  std::string cached;
  if (!job.cacheDirectory.empty()) {
    cached = job.cacheDirectory + "/" + cacheKey(job) + ".so";
    if (readFile(cached, sharedObject)) {
      std::error_code ec; // used now: the last to be pruned
      fs::last_write_time(cached, fs::file_time_type::clock::now(), ec);
      return rt::okStatus();
    }
  }

  std::string folder;
  if (!makeFolder(&folder))
    return rt::internalError("cannot create a temporary folder: ", std::strerror(errno));
  struct Cleanup {
    const std::string &folder;
    ~Cleanup() {
      std::error_code ec;
      fs::remove_all(folder, ec);
    }
  } cleanup{folder};

  bool written = writeFile(folder + "/" + job.sourceName, job.source);
  for (const HostFile &header : job.headers)
    written = written && writeFile(folder + "/" + header.name, header.text);
  if (!written)
    return rt::internalError("cannot write into ", folder);

  const std::string stem = job.sourceName.substr(0, job.sourceName.rfind('.'));
  const std::string output = folder + "/" + stem + ".so";
  const std::string command = commandLine(job, folder, output);
  const std::string log = folder + "/compiler.log";
  ++gCompilerRuns;
  int rc = std::system((command + " > " + shellWord(log) + " 2>&1").c_str());
  if (rc != 0) {
    std::ifstream logFile(log);
    std::stringstream text;
    text << logFile.rdbuf();
    return rt::invalidArgument(command, "\nexited with ", WIFEXITED(rc) ? WEXITSTATUS(rc) : rc,
                               ":\n", text.str());
  }
  if (!readFile(output, sharedObject))
    return rt::internalError("no shared object from ", command);
  if (!cached.empty()) {
    keep(output, cached);
    pruneCache(job.cacheDirectory, kernelCacheLimitBytes());
  }
  return rt::okStatus();
}

} // namespace dlc::codegen
