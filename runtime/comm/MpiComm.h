//===- MpiComm.h - Collectives through Open MPI, loaded at run time -*- C++ -*-===//
//
// The runtime never links MPI: libmpi.so.40 (Open MPI 4/5's soname, or
// $DLC_MPI_LIBRARY) is dlopen()ed on first use and its entry points and
// predefined handles resolved into a table. Open MPI's handles are the
// addresses of its globals (MPI_COMM_WORLD is &ompi_mpi_comm_world, MPI_FLOAT
// &ompi_mpi_float, MPI_SUM &ompi_mpi_op_sum), so they are looked up with
// dlsym like the functions; the few constants are copied from Open MPI's
// mpi.h (MPI_IN_PLACE = (void *)1, MPI_STATUS_IGNORE = NULL,
// MPI_THREAD_SERIALIZED = 2). Another MPI (MPICH's libmpi.so.12) has other
// handles and is refused with a clear error.
//
// Every call is a non-blocking MPI collective (MPI_Iallreduce, ...,
// MPI_Isend/MPI_Irecv) polled with MPI_Test until it completes or its
// deadline passes; the communicator is a duplicate of MPI_COMM_WORLD with
// MPI_ERRORS_RETURN, so MPI errors come back as statuses.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/comm/Communicator.h"
#include "runtime/comm/Launch.h"

#include <memory>
#include <vector>

namespace dlc::rt::comm {

struct MpiLibrary;

/// Loads libmpi once per process: UNAVAILABLE (exit-code 3 class) naming
/// the library and dlerror() when it cannot.
Status loadMpiLibrary(const MpiLibrary **out);

class MpiComm final : public Communicator {
public:
  /// Initialises MPI (MPI_Init_thread, MPI_THREAD_SERIALIZED) unless the
  /// host program already has, and duplicates MPI_COMM_WORLD. MPI is
  /// finalised when the last MpiComm that initialised it goes, unless a
  /// call timed out (finalising would wait for the lost peer).
  ///
  /// With `launch` (one that names a world: not "single process"), every
  /// rank checks that MPI's rank and size are the launch's, and the ranks
  /// agree on the answer (one unnumbered allreduce) so that a mismatch on
  /// one rank is an INVALID_ARGUMENT on all, not a hang of the others.
  static Status create(std::unique_ptr<MpiComm> *out, const LaunchInfo *launch = nullptr);
  ~MpiComm() override;

  const char *backend() const override { return "mpi"; }
  int rank() const override { return rank_; }
  int size() const override { return size_; }

  /// Waits a moment (so that peers timing out at the same time can report
  /// too), then MPI_Abort(MPI_COMM_WORLD, exitCode): every rank ends.
  [[noreturn]] void abort(int exitCode) override;
  /// MPI_Comm_split of this communicator. Blocking (MPI has no
  /// non-blocking split): callers split once at start-up, after the ranks'
  /// schedules were checked to agree.
  Status split(int color, int key, std::unique_ptr<Communicator> *out) override;

protected:
  Status run(const Collective &call) override;
  Status post(const Collective &call) override;
  Status completePosted() override;

private:
  MpiComm(const MpiLibrary *mpi, void *comm, int rank, int size)
      : mpi_(mpi), comm_(comm), rank_(rank), size_(size) {}
  Status wait(const Collective &call, void *request);
  /// Sends started by post() (MPI_Isend), not yet known to be complete.
  std::vector<std::pair<Collective, void *>> posted_;
  /// Whether every rank passes `ok` (an MPI_Iallreduce of MAX, unnumbered).
  Status agree(bool ok, bool *all);

  const MpiLibrary *mpi_;
  void *comm_; ///< MPI_Comm, our duplicate of MPI_COMM_WORLD
  int rank_;
  int size_;
  bool timedOut_ = false;
};

} // namespace dlc::rt::comm
