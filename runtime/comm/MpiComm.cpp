//===- MpiComm.cpp - Collectives through Open MPI, loaded at run time -----===//

#include "runtime/comm/MpiComm.h"

#include "runtime/base/Symbols.h"

#include <dlfcn.h>

#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>

namespace dlc::rt::comm {

// Open MPI's types are pointers to its structs; here they are opaque.
using MPI_Comm = void *;
using MPI_Datatype = void *;
using MPI_Op = void *;
using MPI_Request = void *;
using MPI_Errhandler = void *;
using MPI_Status = void; // only ever MPI_STATUS_IGNORE

namespace {
constexpr int MPI_SUCCESS = 0;
constexpr int MPI_THREAD_SERIALIZED = 2;
constexpr int MPI_MAX_ERROR_STRING = 256;
void *const MPI_IN_PLACE = reinterpret_cast<void *>(1);
MPI_Status *const MPI_STATUS_IGNORE = nullptr;
/// The tag of every send/recv: MPI keeps messages between two ranks in order.
constexpr int kTag = 7321;
} // namespace

struct MpiLibrary {
  int (*Initialized)(int *flag);
  int (*Finalized)(int *flag);
  int (*Init_thread)(int *argc, char ***argv, int required, int *provided);
  int (*Finalize)();
  int (*Abort)(MPI_Comm comm, int code);
  int (*Comm_rank)(MPI_Comm comm, int *rank);
  int (*Comm_size)(MPI_Comm comm, int *size);
  int (*Comm_dup)(MPI_Comm comm, MPI_Comm *out);
  int (*Comm_free)(MPI_Comm *comm);
  int (*Comm_split)(MPI_Comm comm, int color, int key, MPI_Comm *out);
  int (*Comm_set_errhandler)(MPI_Comm comm, MPI_Errhandler handler);
  int (*Error_string)(int code, char *text, int *length);
  int (*Get_library_version)(char *text, int *length);
  int (*Iallreduce)(const void *send, void *recv, int count, MPI_Datatype type, MPI_Op op,
                    MPI_Comm comm, MPI_Request *request);
  int (*Iallgather)(const void *send, int sendCount, MPI_Datatype sendType, void *recv,
                    int recvCount, MPI_Datatype recvType, MPI_Comm comm, MPI_Request *request);
  int (*Ireduce_scatter_block)(const void *send, void *recv, int recvCount, MPI_Datatype type,
                               MPI_Op op, MPI_Comm comm, MPI_Request *request);
  int (*Ialltoall)(const void *send, int sendCount, MPI_Datatype sendType, void *recv,
                   int recvCount, MPI_Datatype recvType, MPI_Comm comm, MPI_Request *request);
  int (*Ibcast)(void *data, int count, MPI_Datatype type, int root, MPI_Comm comm,
                MPI_Request *request);
  int (*Ibarrier)(MPI_Comm comm, MPI_Request *request);
  int (*Isend)(const void *data, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
               MPI_Request *request);
  int (*Irecv)(void *data, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
               MPI_Request *request);
  int (*Test)(MPI_Request *request, int *flag, MPI_Status *status);

  // Predefined handles: addresses of Open MPI's globals.
  MPI_Comm commWorld;
  MPI_Errhandler errorsReturn;
  MPI_Datatype f32, f64, i32, i64, i8, u8, u16;
  MPI_Op sum, max, min;

  std::string name;

  std::string describe(int code) const {
    char text[MPI_MAX_ERROR_STRING + 1] = {0};
    int length = 0;
    if (Error_string(code, text, &length) != MPI_SUCCESS)
      return strCat("MPI error ", code);
    return strCat(std::string(text, static_cast<size_t>(std::max(0, length))), " (MPI error ",
                  code, ")");
  }
};

namespace {

struct LoadedMpi {
  MpiLibrary table{};
  Status status;
  bool initializedHere = false;
  int communicators = 0;
  std::mutex mutex;
};

Status resolve(void *library, const char *name, MpiLibrary *m) {
  auto bind = [&](auto &slot, const char *symbol) { return bindSymbol(library, symbol, slot); };
  auto &handle = bind; // MPI's predefined handles are data symbols
#define DLC_BIND(field, symbol)                                                                \
  if (!bind(m->field, symbol))                                                                 \
    return unavailable("no usable MPI: ", name, " has no '", symbol,                           \
                       "' (dlc needs an MPI 3 library)");
#define DLC_HANDLE(field, symbol)                                                              \
  if (!handle(m->field, symbol))                                                               \
    return unavailable("no usable MPI: ", name, " has no '", symbol,                           \
                       "' (dlc needs Open MPI: its handles are these globals)");
  DLC_BIND(Initialized, "MPI_Initialized")
  DLC_BIND(Finalized, "MPI_Finalized")
  DLC_BIND(Init_thread, "MPI_Init_thread")
  DLC_BIND(Finalize, "MPI_Finalize")
  DLC_BIND(Abort, "MPI_Abort")
  DLC_BIND(Comm_rank, "MPI_Comm_rank")
  DLC_BIND(Comm_size, "MPI_Comm_size")
  DLC_BIND(Comm_dup, "MPI_Comm_dup")
  DLC_BIND(Comm_free, "MPI_Comm_free")
  DLC_BIND(Comm_split, "MPI_Comm_split")
  DLC_BIND(Comm_set_errhandler, "MPI_Comm_set_errhandler")
  DLC_BIND(Error_string, "MPI_Error_string")
  DLC_BIND(Get_library_version, "MPI_Get_library_version")
  DLC_BIND(Iallreduce, "MPI_Iallreduce")
  DLC_BIND(Iallgather, "MPI_Iallgather")
  DLC_BIND(Ireduce_scatter_block, "MPI_Ireduce_scatter_block")
  DLC_BIND(Ialltoall, "MPI_Ialltoall")
  DLC_BIND(Ibcast, "MPI_Ibcast")
  DLC_BIND(Ibarrier, "MPI_Ibarrier")
  DLC_BIND(Isend, "MPI_Isend")
  DLC_BIND(Irecv, "MPI_Irecv")
  DLC_BIND(Test, "MPI_Test")
  DLC_HANDLE(commWorld, "ompi_mpi_comm_world")
  DLC_HANDLE(errorsReturn, "ompi_mpi_errors_return")
  DLC_HANDLE(f32, "ompi_mpi_float")
  DLC_HANDLE(f64, "ompi_mpi_double")
  DLC_HANDLE(i32, "ompi_mpi_int32_t")
  DLC_HANDLE(i64, "ompi_mpi_int64_t")
  DLC_HANDLE(i8, "ompi_mpi_int8_t")
  DLC_HANDLE(u8, "ompi_mpi_uint8_t")
  DLC_HANDLE(u16, "ompi_mpi_uint16_t")
  DLC_HANDLE(sum, "ompi_mpi_op_sum")
  DLC_HANDLE(max, "ompi_mpi_op_max")
  DLC_HANDLE(min, "ompi_mpi_op_min")
#undef DLC_BIND
#undef DLC_HANDLE
  return okStatus();
}

LoadedMpi *load() {
  auto *loaded = new LoadedMpi();
  const char *override = std::getenv("DLC_MPI_LIBRARY");
  const char *name = override && *override ? override : "libmpi.so.40";
  loaded->table.name = name;
  dlerror();
  // Never closed. RTLD_GLOBAL: Open MPI's own plugins (mca_*.so), which it
  // dlopen()s in MPI_Init, resolve libmpi's symbols through the global scope.
  void *library = dlopen(name, RTLD_NOW | RTLD_GLOBAL);
  if (!library) {
    const char *why = dlerror();
    loaded->status = unavailable("no MPI: dlopen(", name, ") failed: ",
                                 why ? why : "unknown error",
                                 " (install Open MPI, e.g. Debian's libopenmpi3, or set "
                                 "DLC_MPI_LIBRARY)");
    return loaded;
  }
  loaded->status = resolve(library, name, &loaded->table);
  return loaded;
}

LoadedMpi &loadedMpi() {
  static LoadedMpi *loaded = load();
  return *loaded;
}

MPI_Datatype datatype(const MpiLibrary &m, DType dtype) {
  switch (dtype) {
  case DType::F32:
    return m.f32;
  case DType::F64:
    return m.f64;
  case DType::I32:
    return m.i32;
  case DType::I64:
    return m.i64;
  case DType::I8:
    return m.i8;
  case DType::U8:
  case DType::I1:
    return m.u8;
  case DType::F16:
  case DType::BF16:
    return m.u16; // moved, never reduced (Communicator::reducible)
  }
  return m.u8;
}

MPI_Op reduction(const MpiLibrary &m, ReduceOp op) {
  switch (op) {
  case ReduceOp::kMax:
    return m.max;
  case ReduceOp::kMin:
    return m.min;
  case ReduceOp::kSum:
  case ReduceOp::kAvg: // a sum, then divideInPlace
    break;
  }
  return m.sum;
}

} // namespace

Status loadMpiLibrary(const MpiLibrary **out) {
  LoadedMpi &loaded = loadedMpi();
  if (!loaded.status.ok())
    return loaded.status;
  *out = &loaded.table;
  return okStatus();
}

Status MpiComm::create(std::unique_ptr<MpiComm> *out, const LaunchInfo *launch) {
  std::chrono::milliseconds timeout;
  DLC_RETURN_IF_ERROR(defaultCollectiveTimeout(&timeout));
  const MpiLibrary *m = nullptr;
  DLC_RETURN_IF_ERROR(loadMpiLibrary(&m));
  LoadedMpi &loaded = loadedMpi();
  std::unique_lock<std::mutex> lock(loaded.mutex);
  auto check = [&](int code, const char *call) -> Status {
    if (code == MPI_SUCCESS)
      return okStatus();
    return unavailable("MPI error in ", call, ": ", m->describe(code));
  };
  int finalized = 0, initialized = 0;
  DLC_RETURN_IF_ERROR(check(m->Finalized(&finalized), "MPI_Finalized"));
  if (finalized)
    return unavailable("MPI was already finalised in this process: no MPI communicator can start");
  DLC_RETURN_IF_ERROR(check(m->Initialized(&initialized), "MPI_Initialized"));
  if (!initialized) {
    int provided = 0;
    DLC_RETURN_IF_ERROR(
        check(m->Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided), "MPI_Init_thread"));
    loaded.initializedHere = true;
  }
  MPI_Comm comm = nullptr;
  DLC_RETURN_IF_ERROR(check(m->Comm_dup(m->commWorld, &comm), "MPI_Comm_dup"));
  DLC_RETURN_IF_ERROR(check(m->Comm_set_errhandler(comm, m->errorsReturn), "MPI_Comm_set_errhandler"));
  int rank = 0, size = 0;
  DLC_RETURN_IF_ERROR(check(m->Comm_rank(comm, &rank), "MPI_Comm_rank"));
  DLC_RETURN_IF_ERROR(check(m->Comm_size(comm, &size), "MPI_Comm_size"));
  ++loaded.communicators;
  std::unique_ptr<MpiComm> mpi(new MpiComm(m, comm, rank, size));
  mpi->setTimeout(timeout);
  lock.unlock(); // ~MpiComm takes it
  if (launch && launch->source != "single process") {
    bool same = launch->rank == rank && launch->worldSize == size;
    bool all = false;
    DLC_RETURN_IF_ERROR(mpi->agree(same, &all));
    if (!same)
      return invalidArgument("MPI says rank ", rank, " of ", size, " but the launch (",
                             launch->source, ") says rank ", launch->rank, " of ",
                             launch->worldSize);
    if (!all)
      return invalidArgument("rank ", rank, " of ", size,
                             ": another rank's launch disagrees with MPI (its error says how)");
  }
  *out = std::move(mpi);
  return okStatus();
}

Status MpiComm::agree(bool ok, bool *all) {
  int bad = ok ? 0 : 1;
  Collective call;
  call.kind = CollectiveKind::kAllReduce;
  call.count = 1;
  call.dtype = DType::I32;
  call.op = ReduceOp::kMax;
  call.purpose = "the start-up check of the launch";
  call.deadline = std::chrono::steady_clock::now() + timeout();
  MPI_Request request = nullptr;
  int code = mpi_->Iallreduce(MPI_IN_PLACE, &bad, 1, mpi_->i32, mpi_->max, comm_, &request);
  if (code != MPI_SUCCESS)
    return unavailable("MPI error in MPI_Iallreduce: ", mpi_->describe(code));
  DLC_RETURN_IF_ERROR(wait(call, request));
  *all = bad == 0;
  return okStatus();
}

Status MpiComm::split(int color, int key, std::unique_ptr<Communicator> *out) {
  if (color < 0)
    return invalidArgument("a communicator's split colour must not be negative (", color, ")");
  LoadedMpi &loaded = loadedMpi();
  MPI_Comm comm = nullptr;
  if (int code = mpi_->Comm_split(comm_, color, key, &comm); code != MPI_SUCCESS)
    return unavailable("MPI error in MPI_Comm_split: ", mpi_->describe(code));
  int rank = 0, size = 0;
  mpi_->Comm_set_errhandler(comm, mpi_->errorsReturn);
  mpi_->Comm_rank(comm, &rank);
  mpi_->Comm_size(comm, &size);
  {
    std::lock_guard<std::mutex> lock(loaded.mutex);
    ++loaded.communicators;
  }
  std::unique_ptr<MpiComm> group(new MpiComm(mpi_, comm, rank, size));
  group->setTimeout(timeout());
  *out = std::move(group);
  return okStatus();
}

MpiComm::~MpiComm() {
  // After a timeout MPI may still be writing into the caller's buffers and
  // any collective would wait for the lost peer: leave everything as it is.
  if (timedOut_)
    return;
  LoadedMpi &loaded = loadedMpi();
  std::lock_guard<std::mutex> lock(loaded.mutex);
  mpi_->Comm_free(&comm_);
  if (--loaded.communicators == 0 && loaded.initializedHere) {
    int finalized = 0;
    mpi_->Finalized(&finalized);
    if (!finalized)
      mpi_->Finalize();
  }
}

void MpiComm::abort(int exitCode) {
  std::fflush(stdout);
  std::fflush(stderr);
  // The peers that time out on the same collective do so within a few
  // milliseconds of each other: give them the time to say so.
  std::this_thread::sleep_for(std::chrono::seconds(1));
  mpi_->Abort(mpi_->commWorld, exitCode);
  std::_Exit(exitCode); // MPI_Abort returned: end this rank at least
}

Status MpiComm::wait(const Collective &call, void *request) {
  // MPI_Test drives MPI's progress.
  return pollUntilDeadline(
      call,
      [&]() -> std::optional<Status> {
        int done = 0;
        int code = mpi_->Test(&request, &done, MPI_STATUS_IGNORE);
        if (code != MPI_SUCCESS)
          return unavailable("rank ", rank_, " of ", size_, ": ", call.describe(), " failed: ",
                             mpi_->describe(code));
        if (done)
          return okStatus();
        return std::nullopt;
      },
      [&] { timedOut_ = true; });
}

Status MpiComm::post(const Collective &call) {
  const MpiLibrary &m = *mpi_;
  if (call.count > static_cast<uint64_t>(INT_MAX))
    return unimplemented("rank ", rank_, " of ", size_, ": ", call.describe(),
                         ": MPI counts are limited to 2^31-1 elements per call and block");
  MPI_Request request = nullptr;
  int code = m.Isend(call.send, static_cast<int>(call.count), datatype(m, call.dtype), call.peer,
                     kTag, comm_, &request);
  if (code != MPI_SUCCESS)
    return unavailable("rank ", rank_, " of ", size_, ": ", call.describe(),
                       ": MPI_Isend failed: ", m.describe(code));
  posted_.push_back({call, request});
  return okStatus();
}

Status MpiComm::completePosted() {
  Status first;
  for (auto &[call, request] : posted_) {
    Status s = wait(call, request);
    if (first.ok() && !s.ok())
      first = s;
  }
  posted_.clear();
  return first;
}

Status MpiComm::run(const Collective &call) {
  const MpiLibrary &m = *mpi_;
  // MPI counts are ints: per-rank blocks above 2^31-1 elements are refused.
  if (call.count > static_cast<uint64_t>(INT_MAX))
    return unimplemented("rank ", rank_, " of ", size_, ": ", call.describe(),
                         ": MPI counts are limited to 2^31-1 elements per call and block");
  int count = static_cast<int>(call.count);
  MPI_Datatype type = datatype(m, call.dtype);
  MPI_Request request = nullptr;
  int code = MPI_SUCCESS;
  const char *entry = "";
  switch (call.kind) {
  case CollectiveKind::kAllReduce:
    entry = "MPI_Iallreduce";
    code = m.Iallreduce(MPI_IN_PLACE, call.recv, count, type, reduction(m, call.op), comm_,
                        &request);
    break;
  case CollectiveKind::kAllGather:
    entry = "MPI_Iallgather";
    code = m.Iallgather(call.send, count, type, call.recv, count, type, comm_, &request);
    break;
  case CollectiveKind::kReduceScatter:
    entry = "MPI_Ireduce_scatter_block";
    code = m.Ireduce_scatter_block(call.send, call.recv, count, type, reduction(m, call.op),
                                   comm_, &request);
    break;
  case CollectiveKind::kAllToAll:
    entry = "MPI_Ialltoall";
    code = m.Ialltoall(call.send, count, type, call.recv, count, type, comm_, &request);
    break;
  case CollectiveKind::kBroadcast:
    entry = "MPI_Ibcast";
    code = m.Ibcast(call.recv, count, type, call.peer, comm_, &request);
    break;
  case CollectiveKind::kSend:
    entry = "MPI_Isend";
    code = m.Isend(call.send, count, type, call.peer, kTag, comm_, &request);
    break;
  case CollectiveKind::kRecv:
    entry = "MPI_Irecv";
    code = m.Irecv(call.recv, count, type, call.peer, kTag, comm_, &request);
    break;
  case CollectiveKind::kBarrier:
    entry = "MPI_Ibarrier";
    code = m.Ibarrier(comm_, &request);
    break;
  }
  if (code != MPI_SUCCESS)
    return unavailable("rank ", rank_, " of ", size_, ": ", call.describe(), ": ", entry,
                       " failed: ", m.describe(code));
  DLC_RETURN_IF_ERROR(wait(call, request));
  if (call.op == ReduceOp::kAvg && (call.kind == CollectiveKind::kAllReduce ||
                                    call.kind == CollectiveKind::kReduceScatter))
    divideInPlace(call.recv, call.count, call.dtype, size_);
  return okStatus();
}

} // namespace dlc::rt::comm
