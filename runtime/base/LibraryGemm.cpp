//===- LibraryGemm.cpp - $DLC_GEMM_LIBRARY --------------------------------===//

#include "runtime/base/LibraryGemm.h"

#include "runtime/base/Log.h"

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <string>

using namespace dlc::rt;

GemmLibraryPolicy dlc::rt::gemmLibraryPolicy() {
  const char *value = std::getenv("DLC_GEMM_LIBRARY");
  if (!value || !*value || std::strcmp(value, "auto") == 0)
    return GemmLibraryPolicy::kAuto;
  if (std::strcmp(value, "off") == 0)
    return GemmLibraryPolicy::kOff;
  if (std::strcmp(value, "on") == 0)
    return GemmLibraryPolicy::kOn;
  // Read once per kernel: warn once per value, not once per kernel.
  static std::mutex mutex;
  static std::set<std::string> warned;
  std::lock_guard<std::mutex> lock(mutex);
  if (warned.insert(value).second)
    log(LogLevel::kWarning, std::string("DLC_GEMM_LIBRARY='") + value +
                                "' is not auto, on or off: taken as auto");
  return GemmLibraryPolicy::kAuto;
}
