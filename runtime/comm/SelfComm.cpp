//===- SelfComm.cpp - A world of one process ------------------------------===//

#include "runtime/comm/SelfComm.h"

#include <cstring>

namespace dlc::rt::comm {

Status SelfComm::run(const Collective &call) {
  uint64_t bytes = call.count * elementSize(call.dtype);
  switch (call.kind) {
  case CollectiveKind::kAllReduce: // sum, max, min, avg of one value: itself
  case CollectiveKind::kBroadcast: // root 0 is this rank (checked)
  case CollectiveKind::kBarrier:
    return okStatus();
  case CollectiveKind::kAllGather:
  case CollectiveKind::kReduceScatter:
  case CollectiveKind::kAllToAll:
    if (bytes && call.send != call.recv)
      std::memmove(call.recv, call.send, bytes);
    return okStatus();
  case CollectiveKind::kSend:
  case CollectiveKind::kRecv:
    break; // no peer in a world of one (rejected before run)
  }
  return internalError(call.describe(), ": no peer in a world of one");
}

} // namespace dlc::rt::comm
