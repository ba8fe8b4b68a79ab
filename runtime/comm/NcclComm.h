//===- NcclComm.h - Collectives on GPU buffers through NCCL -----*- C++ -*-===//
//
// The runtime never links NCCL: libnccl.so.2 (or $DLC_NCCL_LIBRARY) is
// dlopen()ed on first use. A communicator is bootstrapped over a host
// communicator of the same world (MpiComm): every rank loads NCCL and the
// CUDA driver, the ranks agree that all of them could (one allreduce, so
// that one rank's failure is every rank's error instead of a hang), rank 0
// makes an ncclUniqueId and broadcasts it, and each rank calls
// ncclCommInitRank. The caller makes the rank's CUDA device current first
// (the CUDA device of hal/cuda does).
//
// Buffers are device pointers; calls are queued on the stream given by
// setStream (a CUstream / cudaStream_t, opaque here; null is the legacy
// default stream). Each call then waits for the stream until its deadline,
// polling cuStreamQuery and ncclCommGetAsyncError; on a timeout the NCCL
// communicator is aborted (ncclCommAbort) and the call fails like MpiComm's.
// checkSchedule and barrier go through the host communicator.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/comm/Communicator.h"

#include <memory>

namespace dlc::rt::comm {

struct NcclLibrary;

/// Loads libnccl once per process: UNAVAILABLE naming the library and
/// dlerror() when it cannot.
Status loadNcclLibrary(const NcclLibrary **out);

class NcclComm final : public Communicator {
public:
  /// `bootstrap` must outlive the communicator.
  static Status create(Communicator &bootstrap, std::unique_ptr<NcclComm> *out);
  ~NcclComm() override;

  const char *backend() const override { return "nccl"; }
  int rank() const override { return bootstrap_.rank(); }
  int size() const override { return bootstrap_.size(); }

  /// The CUDA stream later calls are queued on (opaque; null = default).
  void setStream(void *stream) { stream_ = stream; }
  void *stream() const { return stream_; }

  [[noreturn]] void abort(int exitCode) override;

protected:
  Status run(const Collective &call) override;
  Communicator &hostCommunicator() override { return bootstrap_; }
  bool reducible(DType dtype) const override;

private:
  struct Impl;
  NcclComm(Communicator &bootstrap, std::unique_ptr<Impl> impl);
  Status wait(const Collective &call);

  Communicator &bootstrap_;
  std::unique_ptr<Impl> impl_;
  void *stream_ = nullptr;
};

} // namespace dlc::rt::comm
