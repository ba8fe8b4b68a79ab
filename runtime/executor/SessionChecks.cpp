//===- SessionChecks.cpp - The status words of the kernels' data checks -----===//
//
// Kernels that check their data (indices in range, no division by zero,
// scratch allocated) write the first failure into the status words; after
// a run they are read back and turned into a located error.
//
//===----------------------------------------------------------------------===//

#include "runtime/executor/Session.h"
#include "runtime/executor/SessionInternal.h"

#include <cstring>

namespace dlc::rt {

namespace fb = dlc::fb;
using detail::sizeOf;

Status Session::clearStatus() {
  static const int64_t zeros[format::kStatusWords] = {};
  DLC_RETURN_IF_ERROR(stream_->copy(status_->devicePointer(), zeros, format::kStatusBytes));
  DLC_RETURN_IF_ERROR(stream_->synchronize());
  statusDirty_ = false;
  return okStatus();
}

Status Session::readStatus() {
  int64_t words[format::kStatusWords];
  if (const uint8_t *host = status_->hostData()) {
    // The kernels have finished (the stream is synchronised): word 0 is
    // the flag; the rest is read only after a failure.
    std::memcpy(words, host, sizeof words[0]);
    if (words[0] == 0) {
      statusDirty_ = false;
      return okStatus();
    }
    std::memcpy(words, host, sizeof words);
  } else {
    DLC_RETURN_IF_ERROR(stream_->copy(words, status_->devicePointer(), sizeof words[0]));
    DLC_RETURN_IF_ERROR(stream_->synchronize());
    if (words[0] == 0) {
      statusDirty_ = false;
      return okStatus();
    }
    DLC_RETURN_IF_ERROR(stream_->copy(words, status_->devicePointer(), sizeof words));
    DLC_RETURN_IF_ERROR(stream_->synchronize());
  }
  std::string message = checkFailure(words);
  DLC_RETURN_IF_ERROR(clearStatus());
  const fb::Module &root = module_->root();
  const uint64_t index = static_cast<uint64_t>(words[0]) - 1;
  if (index < sizeOf(root.checks()) &&
      root.checks()->Get(static_cast<uint32_t>(index))->kind() == fb::CheckKind::scratch_memory)
    return resourceExhausted(message);
  return dataError(message);
}

std::string Session::checkFailure(const int64_t *words) const {
  const fb::Module &root = module_->root();
  const uint64_t index = static_cast<uint64_t>(words[0]) - 1;
  if (index >= sizeOf(root.checks()))
    return strCat(module_->label(), ": a kernel reported data check ", index,
                  ", but the module has ", sizeOf(root.checks()),
                  " (its status words were overwritten)");
  const fb::Check *check = root.checks()->Get(static_cast<uint32_t>(index));
  const int64_t value = words[1], position = words[2], bound = check->bound();
  std::string what;
  switch (check->kind()) {
  case fb::CheckKind::gather_index:
    what = strCat("gather: index ", value, " out of range for axis ", check->axis(),
                  " of size ", bound);
    break;
  case fb::CheckKind::embedding_id:
    what = strCat("embedding: id ", value, " at position ", position, " out of range [0, ",
                  bound, ")");
    break;
  case fb::CheckKind::label:
    what = strCat("cross_entropy: label ", value, " at position ", position,
                  " out of range [0, ", bound, ")");
    break;
  case fb::CheckKind::division_by_zero:
    what = strCat("div: integer division by zero (", value, " / 0)");
    break;
  case fb::CheckKind::negative_exponent:
    what = strCat("pow: negative exponent ", value, " for an integer tensor");
    break;
  case fb::CheckKind::scratch_memory: {
    std::string available = availableMemoryText();
    what = strCat("out of memory: the kernel's scratch of ", value, " bytes could not be allocated",
                  available.empty() ? "" : ": " + available);
    break;
  }
  default:
    what = strCat("data check ", index, " failed (value ", value, ")");
  }
  // The oracle's wording, after where the op came from; then the kernel.
  const std::string location = check->location() ? check->location()->str() : "";
  const fb::Kernel *kernel = root.kernels()->Get(check->kernel());
  return strCat(location.empty() ? "" : location + ": ", what, " (", check->op()->str(),
                " in kernel '", kernel->name()->str(), "' on ", device_->name(), ")");
}

} // namespace dlc::rt
