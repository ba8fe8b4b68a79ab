//===- SessionCollectives.cpp - Ranks and collectives of a session ----------===//
//
// The communicator a partitioned module's plans need (MPI or another
// host transport, NCCL on cuda), the commands that wait for a collective's
// result, and running one collective.
//
//===----------------------------------------------------------------------===//

#include "runtime/executor/Session.h"

#include "runtime/comm/CommQueue.h"
#include "runtime/comm/CommRegistry.h"
#include "runtime/comm/NcclComm.h"

#include <cstring>

namespace dlc::rt {

namespace fb = dlc::fb;

void Session::findCollectiveWaits(const std::vector<std::vector<Access>> &accesses) {
  auto overlaps = [](const Access &a, const Access &b) {
    return a.ref.space == b.ref.space && a.ref.index == b.ref.index &&
           a.ref.offset < b.ref.offset + b.bytes && b.ref.offset < a.ref.offset + a.bytes;
  };
  for (uint32_t c = 0; c < steps_.size(); ++c) {
    if (steps_[c].kind != Step::kCollective)
      continue;
    steps_[c].waitBefore = static_cast<uint32_t>(steps_.size());
    // A later step that writes what the collective reads or writes, or
    // reads what it writes (collectives after it queue behind it anyway).
    for (uint32_t j = c + 1; j < steps_.size(); ++j) {
      if (steps_[j].kind == Step::kCollective)
        continue;
      bool conflict = false;
      for (const Access &later : accesses[j])
        for (const Access &mine : accesses[c])
          conflict = conflict || (overlaps(later, mine) && (later.writes || mine.writes));
      if (conflict) {
        steps_[c].waitBefore = j;
        break;
      }
    }
  }
}

double Session::collectiveSeconds() const {
  return commQueue_ ? commQueue_->busySeconds() : 0;
}

int Session::rank() const { return comm_ ? comm_->rank() : 0; }
int Session::worldSize() const { return comm_ ? comm_->size() : 1; }

Status Session::openCommunicator(uint32_t plans) {
  const fb::Module &root = module_->root();
  comm::LaunchInfo launch;
  DLC_RETURN_IF_ERROR(comm::readLaunchInfo({}, &launch));
  if (static_cast<uint32_t>(launch.worldSize) != plans)
    return invalidArgument("the module is partitioned for ", plans, plans == 1 ? " rank" : " ranks",
                           ", but this run has ", launch.worldSize, " (", launch.source,
                           "): start it with mpirun -np ", plans);
  DLC_RETURN_IF_ERROR(comm::createCommunicator("auto", launch, &hostComm_));
  comm_ = hostComm_.get();
  if (!device_->sharesHostMemory()) {
    // Device buffers: NCCL, bootstrapped over the host communicator, on a
    // stream of its own.
    std::unique_ptr<comm::NcclComm> nccl;
    DLC_RETURN_IF_ERROR(comm::NcclComm::create(*hostComm_, &nccl));
    DLC_RETURN_IF_ERROR(device_->createStream(&commStream_));
    nccl->setStream(commStream_->nativeHandle());
    deviceComm_ = std::move(nccl);
    comm_ = deviceComm_.get();
  }
  DLC_RETURN_IF_ERROR(comm_->checkSchedule(root.collectives_hash(), module_->label()));
  commQueue_ = std::make_unique<comm::CommQueue>();
  return okStatus();
}

Status Session::collective(uint32_t sequence, uint8_t *send, uint8_t *recv) {
  const fb::CollectiveInfo *info = module_->root().collectives()->Get(sequence);
  const DType dtype = *format::dtypeFromWire(info->dtype());
  const uint64_t count = static_cast<uint64_t>(info->count());
  auto reduceOp = [&] {
    switch (info->reduce()) {
    case fb::ReduceOp::max: return comm::ReduceOp::kMax;
    case fb::ReduceOp::min: return comm::ReduceOp::kMin;
    case fb::ReduceOp::avg: return comm::ReduceOp::kAvg;
    default: return comm::ReduceOp::kSum;
    }
  };
  // In place: the operand first goes where the result is (on a device, on
  // the communication stream, before the call queued there).
  if (send != recv && info->op() == fb::CollectiveOp::all_reduce && count) {
    if (commStream_)
      DLC_RETURN_IF_ERROR(commStream_->copy(recv, send, count * elementSize(dtype)));
    else
      std::memcpy(recv, send, count * elementSize(dtype));
  }
  // Strided blocks (a gather or scatter along an axis with larger
  // dimensions before it): rank r's block is `outer` pieces, each piece
  // r of a row of `world` pieces; the call moves them contiguous, through
  // the scratch buffer.
  const uint64_t outer = static_cast<uint64_t>(info->outer());
  const uint64_t world = static_cast<uint64_t>(comm_->size());
  const uint64_t piece = count / outer * elementSize(dtype);
  auto copyRows = [&](uint8_t *dst, uint64_t dstPitch, const uint8_t *src, uint64_t srcPitch) {
    for (uint64_t o = 0; o < outer; ++o) {
      if (commStream_)
        DLC_RETURN_IF_ERROR(commStream_->copy(dst + o * dstPitch, src + o * srcPitch, piece));
      else
        std::memcpy(dst + o * dstPitch, src + o * srcPitch, piece);
    }
    return okStatus();
  };
  uint8_t *scratch = scratch_ ? static_cast<uint8_t *>(scratch_->devicePointer()) : nullptr;
  switch (info->op()) {
  case fb::CollectiveOp::all_reduce:
    return comm_->allReduce(recv, count, dtype, reduceOp());
  case fb::CollectiveOp::all_gather:
    if (outer == 1)
      return comm_->allGather(send, recv, count, dtype);
    DLC_RETURN_IF_ERROR(comm_->allGather(send, scratch, count, dtype));
    for (uint64_t r = 0; r < world; ++r)
      DLC_RETURN_IF_ERROR(copyRows(recv + r * piece, world * piece,
                                   scratch + r * outer * piece, piece));
    return commStream_ ? commStream_->synchronize() : okStatus();
  case fb::CollectiveOp::reduce_scatter:
    if (outer == 1)
      return comm_->reduceScatter(send, recv, count, dtype, reduceOp());
    for (uint64_t r = 0; r < world; ++r)
      DLC_RETURN_IF_ERROR(copyRows(scratch + r * outer * piece, piece, send + r * piece,
                                   world * piece));
    return comm_->reduceScatter(scratch, recv, count, dtype, reduceOp());
  case fb::CollectiveOp::all_to_all:
    return comm_->allToAll(send, recv, count, dtype);
  default:
    return unimplemented("collective ", sequence, ": ", fb::EnumNameCollectiveOp(info->op()),
                         " is not executed by this runtime yet");
  }
}

} // namespace dlc::rt
