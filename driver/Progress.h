//===- Progress.h - what a long compile is doing, on a terminal -*- C++ -*-===//
//
// One status line on standard error, rewritten at each stage of a compile
// ("dlc: gpt2_block.dlg: compiling 9 kernels (host compiler)...") and
// erased when the compile is done. Silent when standard error is not a
// terminal (logs, CI, tests) or DLC_NO_PROGRESS is set.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_DRIVER_PROGRESS_H
#define DLC_DRIVER_PROGRESS_H

#include <chrono>
#include <string>

namespace dlc {

class CompileProgress {
public:
  explicit CompileProgress(const std::string &modelPath);
  ~CompileProgress();
  CompileProgress(const CompileProgress &) = delete;
  CompileProgress &operator=(const CompileProgress &) = delete;

  /// Shows `what` as the current stage, with the seconds so far.
  void stage(const std::string &what);

private:
  bool shown = false;
  bool enabled = false;
  std::string model;
  std::chrono::steady_clock::time_point started;
};

} // namespace dlc

#endif // DLC_DRIVER_PROGRESS_H
