//===- Log.h - The runtime's log callback -----------------------*- C++ -*-===//
//
// The runtime never prints. Messages go to one process-wide callback set by
// the embedding program (dlc_set_log_callback); with none set they are
// dropped. The callback may be called from any runtime thread, and must not
// call back into the runtime.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>

namespace dlc::rt {

/// The C API's dlc_log_level_t, one for one.
enum class LogLevel : int { kError = 0, kWarning = 1, kInfo = 2, kDebug = 3 };

using LogCallback = void (*)(void *user, int level, const char *message);

/// Replaces the callback (nullptr turns logging off). Thread-safe.
void setLogCallback(LogCallback callback, void *user);

/// True when a callback is set (to skip building messages nobody reads).
bool logEnabled();

void log(LogLevel level, const std::string &message);

} // namespace dlc::rt
