//===- FuzzSupport.h - What the fuzz targets share --------------*- C++ -*-===//
//
// Readers that take a path get the fuzzed bytes through a file in a folder
// of this process's own under /dev/shm (or $TMPDIR when /dev/shm is not
// there), rewritten for every input; the folder is removed at exit.
// A reader that breaks its contract (crashes, leaks, aborts, says
// "internal error") fails the target; a bad input is an error status.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>

namespace dlc::fuzz {

/// This process's scratch folder, created on first use.
inline const std::string &scratchDir() {
  static const std::string dir = [] {
    struct stat st;
    std::string base = stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode)
                           ? "/dev/shm"
                           : (std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp");
    std::string d = base + "/dlc-fuzz-" + std::to_string(getpid());
    mkdir(d.c_str(), 0700);
    static std::string removeAtExit;
    removeAtExit = d;
    std::atexit([] {
      std::string cmd = "rm -rf '" + removeAtExit + "'";
      if (std::system(cmd.c_str()) != 0) {
      }
    });
    return d;
  }();
  return dir;
}

/// Writes `data` to `path`; aborts if it cannot.
inline void writeFile(const std::string &path, const uint8_t *data, size_t size) {
  FILE *f = std::fopen(path.c_str(), "wb");
  if (!f || (size && std::fwrite(data, 1, size, f) != size)) {
    std::perror(path.c_str());
    std::abort();
  }
  std::fclose(f);
}

/// Writes `data` to `name` in the scratch folder and returns its path.
inline std::string writeScratch(const std::string &name, const uint8_t *data, size_t size) {
  std::string path = scratchDir() + "/" + name;
  FILE *f = std::fopen(path.c_str(), "wb");
  if (!f) {
    std::perror(path.c_str());
    std::abort();
  }
  if (size && std::fwrite(data, 1, size, f) != size) {
    std::perror(path.c_str());
    std::abort();
  }
  std::fclose(f);
  return path;
}

/// Byte equality that allows empty (possibly null) buffers.
inline bool sameBytes(const void *a, const void *b, size_t size) {
  return size == 0 || std::memcmp(a, b, size) == 0;
}

/// Named counters printed at exit ("dlg: 1200 inputs, 300 parsed, ..."):
/// how far the inputs got, for bench/results/fuzz.md.
struct StageCounts {
  const char *target;
  std::vector<std::pair<const char *, unsigned long long>> stages;
  StageCounts(const char *t, std::initializer_list<const char *> names) : target(t) {
    for (const char *n : names)
      stages.emplace_back(n, 0);
  }
  void hit(size_t i) { ++stages[i].second; }
  ~StageCounts() {
    std::string line = std::string(target) + ":";
    for (size_t i = 0; i < stages.size(); ++i)
      line += (i ? ", " : " ") + std::to_string(stages[i].second) + " " + stages[i].first;
    std::fprintf(stderr, "%s\n", line.c_str());
  }
};

/// A broken contract: print why and abort, which libFuzzer records as a crash.
[[noreturn]] inline void contractBroken(const std::string &what) {
  std::fprintf(stderr, "dlc fuzz: %s\n", what.c_str());
  std::abort();
}

} // namespace dlc::fuzz
