//===- ExitCodes.h - what the dlc tools return ------------------*- C++ -*-===//
//
// DESIGN §7: scripts rely on these, so they never change meaning.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_DRIVER_EXITCODES_H
#define DLC_DRIVER_EXITCODES_H

namespace dlc {

enum ExitCode : int {
  kExitSuccess = 0,
  /// A check the user asked for failed (e.g. --expected-output mismatch).
  kExitCheckFailed = 1,
  /// Usage error or bad input file.
  kExitBadInput = 2,
  /// A fault while running: out of memory, device error, index out of range.
  kExitRuntimeFault = 3,
  /// A bug in dlc.
  kExitInternalError = 70,
  /// Stopped by SIGINT (Ctrl-C) after saving its work (`dlc train`), as
  /// shells report a process that SIGINT ended: 128 + 2.
  kExitInterrupted = 130,
};

} // namespace dlc

#endif // DLC_DRIVER_EXITCODES_H
