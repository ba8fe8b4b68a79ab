//===- Progress.cpp - what a long compile is doing, on a terminal ---------===//

#include "driver/Progress.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace dlc {

CompileProgress::CompileProgress(const std::string &modelPath)
    : enabled(isatty(STDERR_FILENO) && !std::getenv("DLC_NO_PROGRESS")),
      started(std::chrono::steady_clock::now()) {
  size_t slash = modelPath.rfind('/');
  model = slash == std::string::npos ? modelPath : modelPath.substr(slash + 1);
}

void CompileProgress::stage(const std::string &what) {
  if (!enabled)
    return;
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  // \r and "erase line": the stage replaces the previous one in place.
  std::fprintf(stderr, "\r\033[Kdlc: %s: %s... (%.1f s)", model.c_str(), what.c_str(), seconds);
  std::fflush(stderr);
  shown = true;
}

CompileProgress::~CompileProgress() {
  if (shown) {
    std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
  }
}

} // namespace dlc
