//===- Log.cpp - The runtime's log callback -------------------------------===//

#include "runtime/base/Log.h"

#include <atomic>
#include <mutex>

namespace dlc::rt {

namespace {
std::mutex &callbackMutex() {
  static std::mutex mutex;
  return mutex;
}
LogCallback gCallback = nullptr;
void *gUser = nullptr;
std::atomic<bool> gEnabled{false};
} // namespace

void setLogCallback(LogCallback callback, void *user) {
  std::lock_guard<std::mutex> lock(callbackMutex());
  gCallback = callback;
  gUser = user;
  gEnabled.store(callback != nullptr, std::memory_order_release);
}

bool logEnabled() { return gEnabled.load(std::memory_order_acquire); }

void log(LogLevel level, const std::string &message) {
  if (!logEnabled())
    return;
  // Held across the call so that a callback is never called after
  // setLogCallback replaced it (the embedder may free `user` then).
  std::lock_guard<std::mutex> lock(callbackMutex());
  if (gCallback)
    gCallback(gUser, static_cast<int>(level), message.c_str());
}

} // namespace dlc::rt
