//===- NcclComm.cpp - Collectives on GPU buffers through NCCL -------------===//

#include "runtime/comm/NcclComm.h"

#include "runtime/base/Symbols.h"
#include "runtime/hal/cuda/CudaDriver.h"

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <thread>

namespace dlc::rt::comm {

// Copied from nccl.h (values are ABI, stable since NCCL 2.0; ncclAvg 2.10).
using ncclResult_t = int;
using ncclComm_t = struct ncclComm *;
using ncclDataType_t = int;
using ncclRedOp_t = int;
struct ncclUniqueId {
  char internal[128];
};

namespace {
constexpr ncclResult_t ncclSuccess = 0;
constexpr ncclResult_t ncclInProgress = 7;
constexpr ncclDataType_t ncclInt8 = 0, ncclUint8 = 1, ncclInt32 = 2, ncclInt64 = 4,
                         ncclFloat16 = 6, ncclFloat32 = 7, ncclFloat64 = 8, ncclBfloat16 = 9;
constexpr ncclRedOp_t ncclSum = 0, ncclMax = 2, ncclMin = 3, ncclAvg = 4;
constexpr int kCudaErrorNotReady = 600;
} // namespace

struct NcclLibrary {
  ncclResult_t (*GetVersion)(int *version);
  const char *(*GetErrorString)(ncclResult_t result);
  ncclResult_t (*GetUniqueId)(ncclUniqueId *id);
  ncclResult_t (*CommInitRank)(ncclComm_t *comm, int ranks, ncclUniqueId id, int rank);
  ncclResult_t (*CommDestroy)(ncclComm_t comm);
  ncclResult_t (*CommAbort)(ncclComm_t comm);
  ncclResult_t (*CommGetAsyncError)(ncclComm_t comm, ncclResult_t *error);
  ncclResult_t (*AllReduce)(const void *send, void *recv, size_t count, ncclDataType_t type,
                            ncclRedOp_t op, ncclComm_t comm, void *stream);
  ncclResult_t (*AllGather)(const void *send, void *recv, size_t count, ncclDataType_t type,
                            ncclComm_t comm, void *stream);
  ncclResult_t (*ReduceScatter)(const void *send, void *recv, size_t count, ncclDataType_t type,
                                ncclRedOp_t op, ncclComm_t comm, void *stream);
  ncclResult_t (*Broadcast)(const void *send, void *recv, size_t count, ncclDataType_t type,
                            int root, ncclComm_t comm, void *stream);
  ncclResult_t (*Send)(const void *data, size_t count, ncclDataType_t type, int peer,
                       ncclComm_t comm, void *stream);
  ncclResult_t (*Recv)(void *data, size_t count, ncclDataType_t type, int peer, ncclComm_t comm,
                       void *stream);
  ncclResult_t (*GroupStart)();
  ncclResult_t (*GroupEnd)();
  /// NCCL 2.28 and later; older ones get a group of sends and receives.
  ncclResult_t (*AlltoAll)(const void *send, void *recv, size_t count, ncclDataType_t type,
                           ncclComm_t comm, void *stream);
  /// From the CUDA driver (the HAL loads it; libcuda.so.1 or its override).
  int (*cuStreamQuery)(void *stream);
  std::string name;
  int version = 0;

  std::string describe(ncclResult_t r) const {
    const char *text = GetErrorString ? GetErrorString(r) : nullptr;
    return strCat(text ? text : "NCCL error", " (ncclResult_t ", r, ")");
  }
};

namespace {

struct LoadedNccl {
  NcclLibrary table{};
  Status status;
};

LoadedNccl *load() {
  auto *loaded = new LoadedNccl();
  const char *override = std::getenv("DLC_NCCL_LIBRARY");
  const char *name = override && *override ? override : "libnccl.so.2";
  NcclLibrary &n = loaded->table;
  n.name = name;
  dlerror();
  void *library = dlopen(name, RTLD_NOW | RTLD_LOCAL); // never closed
  if (!library) {
    const char *why = dlerror();
    loaded->status = unavailable("no NCCL: dlopen(", name, ") failed: ",
                                 why ? why : "unknown error",
                                 " (install NCCL 2, or set DLC_NCCL_LIBRARY)");
    return loaded;
  }
  auto bind = [&](auto &slot, const char *symbol) { return bindSymbol(library, symbol, slot); };
#define DLC_BIND(field, symbol)                                                                \
  if (!bind(n.field, symbol)) {                                                                \
    loaded->status = unavailable("no usable NCCL: ", name, " has no '", symbol,                \
                                 "' (dlc needs NCCL 2.10 or later)");                          \
    return loaded;                                                                             \
  }
  DLC_BIND(GetVersion, "ncclGetVersion")
  DLC_BIND(GetErrorString, "ncclGetErrorString")
  DLC_BIND(GetUniqueId, "ncclGetUniqueId")
  DLC_BIND(CommInitRank, "ncclCommInitRank")
  DLC_BIND(CommDestroy, "ncclCommDestroy")
  DLC_BIND(CommAbort, "ncclCommAbort")
  DLC_BIND(CommGetAsyncError, "ncclCommGetAsyncError")
  DLC_BIND(AllReduce, "ncclAllReduce")
  DLC_BIND(AllGather, "ncclAllGather")
  DLC_BIND(ReduceScatter, "ncclReduceScatter")
  DLC_BIND(Broadcast, "ncclBroadcast")
  DLC_BIND(Send, "ncclSend")
  DLC_BIND(Recv, "ncclRecv")
  DLC_BIND(GroupStart, "ncclGroupStart")
  DLC_BIND(GroupEnd, "ncclGroupEnd")
#undef DLC_BIND
  bind(n.AlltoAll, "ncclAlltoAll"); // optional
  n.GetVersion(&n.version);
  if (n.version < 21000)
    loaded->status = unavailable("no usable NCCL: ", name, " is version ", n.version,
                                 ", dlc needs 2.10 or later (ncclAvg)");
  return loaded;
}

LoadedNccl &loadedNccl() {
  static LoadedNccl *loaded = load();
  return *loaded;
}

/// cuStreamQuery from the driver the HAL loaded (loadCudaDriver succeeded).
Status bindStreamQuery(NcclLibrary *n) {
  if (n->cuStreamQuery)
    return okStatus();
  const char *override = std::getenv("DLC_CUDA_DRIVER_LIBRARY");
  const char *name = override && *override ? override : "libcuda.so.1";
  void *library = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (!library || !bindSymbol(library, "cuStreamQuery", n->cuStreamQuery))
    return unavailable("no usable CUDA driver: ", name, " has no 'cuStreamQuery'");
  return okStatus();
}

ncclDataType_t ncclType(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return ncclFloat32;
  case DType::F64:
    return ncclFloat64;
  case DType::F16:
    return ncclFloat16;
  case DType::BF16:
    return ncclBfloat16;
  case DType::I32:
    return ncclInt32;
  case DType::I64:
    return ncclInt64;
  case DType::I8:
    return ncclInt8;
  case DType::U8:
  case DType::I1:
    return ncclUint8;
  }
  return ncclUint8;
}

ncclRedOp_t ncclOp(ReduceOp op) {
  switch (op) {
  case ReduceOp::kSum:
    return ncclSum;
  case ReduceOp::kMax:
    return ncclMax;
  case ReduceOp::kMin:
    return ncclMin;
  case ReduceOp::kAvg:
    return ncclAvg;
  }
  return ncclSum;
}

} // namespace

Status loadNcclLibrary(const NcclLibrary **out) {
  LoadedNccl &loaded = loadedNccl();
  if (!loaded.status.ok())
    return loaded.status;
  *out = &loaded.table;
  return okStatus();
}

struct NcclComm::Impl {
  NcclLibrary *nccl = nullptr;
  ncclComm_t comm = nullptr;
  bool aborted = false;
};

NcclComm::NcclComm(Communicator &bootstrap, std::unique_ptr<Impl> impl)
    : bootstrap_(bootstrap), impl_(std::move(impl)) {}

NcclComm::~NcclComm() {
  if (impl_->comm && !impl_->aborted)
    impl_->nccl->CommDestroy(impl_->comm);
}

Status NcclComm::create(Communicator &bootstrap, std::unique_ptr<NcclComm> *out) {
  std::chrono::milliseconds timeout;
  DLC_RETURN_IF_ERROR(defaultCollectiveTimeout(&timeout));
  // Every rank tries; then all learn whether all could (no rank is left
  // waiting in the broadcast of an id that will never come).
  const NcclLibrary *loadedTable = nullptr;
  Status local = loadNcclLibrary(&loadedTable);
  NcclLibrary *n = local.ok() ? &loadedNccl().table : nullptr;
  if (local.ok()) {
    const hal::cuda::CudaDriver *driver = nullptr;
    local = hal::cuda::loadCudaDriver(&driver);
    if (!local.ok())
      local.prepend("NCCL needs a CUDA device");
  }
  if (local.ok())
    local = bindStreamQuery(n);
  ncclUniqueId id{};
  if (local.ok() && bootstrap.rank() == 0) {
    ncclResult_t r = n->GetUniqueId(&id);
    if (r != ncclSuccess)
      local = unavailable("NCCL error in ncclGetUniqueId: ", n->describe(r));
  }
  int failed = local.ok() ? 0 : 1;
  if (bootstrap.size() > 1) {
    DLC_RETURN_IF_ERROR(bootstrap.allReduce(&failed, 1, DType::I32, ReduceOp::kMax));
    if (failed && local.ok())
      return unavailable("rank ", bootstrap.rank(), " of ", bootstrap.size(),
                         ": NCCL could not start on another rank (its error says why)");
  }
  if (!local.ok())
    return local.prepend(strCat("rank ", bootstrap.rank(), " of ", bootstrap.size()));
  DLC_RETURN_IF_ERROR(bootstrap.broadcast(&id, sizeof id, DType::U8, 0));
  auto impl = std::make_unique<Impl>();
  impl->nccl = n;
  ncclResult_t r = n->CommInitRank(&impl->comm, bootstrap.size(), id, bootstrap.rank());
  if (r != ncclSuccess)
    return unavailable("rank ", bootstrap.rank(), " of ", bootstrap.size(),
                       ": NCCL error in ncclCommInitRank: ", n->describe(r));
  out->reset(new NcclComm(bootstrap, std::move(impl)));
  (*out)->setTimeout(timeout);
  return okStatus();
}

bool NcclComm::reducible(DType dtype) const {
  return dtype != DType::I1; // NCCL reduces every other dtype, f16 and bf16 too
}

void NcclComm::abort(int exitCode) {
  if (impl_->comm && !impl_->aborted) {
    impl_->nccl->CommAbort(impl_->comm);
    impl_->aborted = true;
  }
  bootstrap_.abort(exitCode);
  std::_Exit(exitCode); // not reached
}

Status NcclComm::wait(const Collective &call) {
  NcclLibrary &n = *impl_->nccl;
  return pollUntilDeadline(
      call,
      [&]() -> std::optional<Status> {
        int q = n.cuStreamQuery(stream_);
        if (q == 0)
          return okStatus();
        if (q != kCudaErrorNotReady)
          return unavailable("rank ", rank(), " of ", size(), ": ", call.describe(),
                             ": the stream failed (CUresult ", q, ")");
        ncclResult_t async = ncclSuccess;
        n.CommGetAsyncError(impl_->comm, &async);
        if (async != ncclSuccess && async != ncclInProgress)
          return unavailable("rank ", rank(), " of ", size(), ": ", call.describe(),
                             " failed: ", n.describe(async));
        return std::nullopt;
      },
      [&] {
        n.CommAbort(impl_->comm);
        impl_->aborted = true;
      });
}

Status NcclComm::run(const Collective &call) {
  NcclLibrary &n = *impl_->nccl;
  ncclComm_t c = impl_->comm;
  ncclDataType_t type = ncclType(call.dtype);
  size_t count = call.count;
  ncclResult_t r = ncclSuccess;
  const char *entry = "";
  switch (call.kind) {
  case CollectiveKind::kAllReduce:
    entry = "ncclAllReduce";
    r = n.AllReduce(call.recv, call.recv, count, type, ncclOp(call.op), c, stream_);
    break;
  case CollectiveKind::kAllGather:
    entry = "ncclAllGather";
    r = n.AllGather(call.send, call.recv, count, type, c, stream_);
    break;
  case CollectiveKind::kReduceScatter:
    entry = "ncclReduceScatter";
    r = n.ReduceScatter(call.send, call.recv, count, type, ncclOp(call.op), c, stream_);
    break;
  case CollectiveKind::kAllToAll:
    entry = "ncclAlltoAll";
    if (n.AlltoAll) {
      r = n.AlltoAll(call.send, call.recv, count, type, c, stream_);
    } else {
      // NCCL's documented all-to-all before 2.28: one group of every
      // send and receive.
      size_t block = count * elementSize(call.dtype);
      r = n.GroupStart();
      for (int p = 0; r == ncclSuccess && p < size(); ++p) {
        r = n.Send(static_cast<const char *>(call.send) + p * block, count, type, p, c, stream_);
        if (r == ncclSuccess)
          r = n.Recv(static_cast<char *>(call.recv) + p * block, count, type, p, c, stream_);
      }
      ncclResult_t end = n.GroupEnd();
      if (r == ncclSuccess)
        r = end;
    }
    break;
  case CollectiveKind::kBroadcast:
    entry = "ncclBroadcast";
    r = n.Broadcast(call.recv, call.recv, count, type, call.peer, c, stream_);
    break;
  case CollectiveKind::kSend:
    entry = "ncclSend";
    r = n.Send(call.send, count, type, call.peer, c, stream_);
    break;
  case CollectiveKind::kRecv:
    entry = "ncclRecv";
    r = n.Recv(call.recv, count, type, call.peer, c, stream_);
    break;
  case CollectiveKind::kBarrier:
    // The stream's work first, then the ranks meet on the host.
    DLC_RETURN_IF_ERROR(wait(call));
    return bootstrap_.barrier();
  }
  if (r != ncclSuccess)
    return unavailable("rank ", rank(), " of ", size(), ": ", call.describe(), ": ", entry,
                       " failed: ", n.describe(r));
  return wait(call);
}

} // namespace dlc::rt::comm
