//===- Session.h - Run a module's plan on a device --------------*- C++ -*-===//
//
// Creating a session checks the module against the device, before anything
// is allocated: one plan (multi-rank modules need a communicator, which this
// runtime does not have yet), the arena within the device's memory limit,
// every launched kernel targeting this device with a binary it can load,
// no command the runtime cannot execute yet. Then it allocates the one arena
// the plan is sized for, loads the kernels, and resolves the commands into a
// flat list that `run` walks without touching the FlatBuffers header again.
//
// Data checks (module format 1.2): kernels that check their data (an index
// in range, a divisor not 0) write the session's status words on the first
// failure; `run` reads them after the plan and returns DATA_ERROR naming
// the op, its source location, the kernel and the value (the oracle's
// wording). The words are zeroed again, so the next run starts clean.
//
// Dynamic dimensions (module format 1.3): a module written for N = max runs
// at any N in [min, max] (`run`'s last argument). Dynamic inputs and outputs
// then hold shape[0] / max * N rows. On a stream that runs row prefixes (the
// CPU), a launch whose rows grow with N runs over only the first N's rows,
// unless a later launch run in full reads its result in the arena; every
// other launch runs in full, over all max rows. So a dynamic tensor is
// bound in place (the caller's smaller buffer) only when every launch that
// binds it runs a prefix and no copy touches it; otherwise the session
// stages it in a buffer of max rows of its own: an input's rows beyond N are
// filled with copies of the given rows (a launch run in full reads valid
// data), and an output's first N rows are copied back. At N = max nothing
// is staged: a run is exactly that of a static module.
//
// A session is used by one thread at a time; any number of sessions may share
// one LoadedModule.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/base/Status.h"
#include "runtime/format/ModuleReader.h"
#include "runtime/hal/Device.h"

#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace dlc::rt {

namespace comm {
class Communicator;
class CommQueue;
} // namespace comm

struct SessionOptions {
  hal::DeviceOptions device;
};

class Session {
public:
  ~Session();

  static Status create(std::shared_ptr<const format::LoadedModule> module,
                       const std::string &device, const SessionOptions &options,
                       std::unique_ptr<Session> *out);

  const format::LoadedModule &module() const { return *module_; }
  hal::Device &device() { return *device_; }
  uint64_t arenaSize() const;

  /// Runs the plan. `inputs[i]` points at input i's bytes (module().inputs()[i].bytes
  /// of them), `outputs[i]` at room for output i's. The caller has checked the
  /// sizes and that outputs overlap nothing else (the C API does).
  ///
  /// On a device without host memory (cuda:N) pointers are host memory,
  /// copied through device staging buffers, unless `inputOnDevice[i]` /
  /// `outputOnDevice[i]` (either may be null: all host) says the tensor
  /// already is device memory. Repeated runs with the same device pointers
  /// replay a CUDA Graph of the plan, captured on the second such run
  /// (DLC_CUDA_GRAPHS=0 turns this off).
  ///
  /// `dynamicSize` is the run's N of the module's dynamic dimension (format
  /// 1.3), in [min, max]; 0 means max (and is the only value for a module
  /// without one). Dynamic inputs and outputs then hold
  /// module().inputs()[i].bytesAt(N, max) bytes; the caller has checked
  /// that their shapes agree on N (the C API does).
  Status run(const void *const *inputs, size_t inputCount, void *const *outputs,
             size_t outputCount, const bool *inputOnDevice = nullptr,
             const bool *outputOnDevice = nullptr, int64_t dynamicSize = 0);

  /// Format 1.3, for tests and logs: whether a run at N < max stages
  /// dynamic input (or output) `index` through a session buffer of max rows
  /// rather than binding the caller's memory in place. False for a static
  /// tensor.
  bool stagesDynamicTensor(bool output, uint32_t index) const;

  /// This process's rank of the module's mesh and the mesh's size (0 and 1
  /// for a module without one). A module partitioned for N ranks runs
  /// under a launch of N processes (mpirun, torchrun, DLC_*: comm/Launch.h);
  /// each runs plans[rank], its collectives through a communicator the
  /// session opens: NCCL on a CUDA device, else MPI (a world of one
  /// without a launch). The ranks check that their collective lists agree
  /// when the sessions are created.
  int rank() const;
  int worldSize() const;

  /// Runs of the plan that replayed a captured graph (for tests).
  uint64_t graphReplays() const { return graphReplays_; }

  /// State tensors (module().state()): the session owns one device buffer
  /// each, initialised when the session is created; runs read and write
  /// them in place. These copy one between the device and host memory
  /// (module().state()[i].bytes bytes) and wait for the copy.
  Status readState(uint32_t i, void *host);
  Status writeState(uint32_t i, const void *host);
  /// Every state tensor back to its initial value.
  Status resetState();

private:
  Session() = default;
  Status resolve();
  /// Queues the plan's commands on stream_ with the current base pointers.
  Status enqueuePlan();
  /// Uploads the weights and allocates staging for devices without host memory.
  Status prepareDeviceMemory();
  /// Allocates the state tensors (and resetState()s them).
  Status allocateState();
  /// The data checks (module format 1.2): zeroes the status words.
  Status clearStatus();
  /// After a run: a DATA_ERROR naming the first check that failed (and the
  /// words zeroed for the next run), else OK. One load on a host device,
  /// one 8-byte copy on CUDA.
  Status readStatus();
  std::string checkFailure(const int64_t *words) const;
  /// Fills bytes [given, total) of `base` with copies of [0, given) on the
  /// stream, doubling: the rows beyond N of a staged dynamic input.
  Status fillRows(uint8_t *base, uint64_t given, uint64_t total);

  /// A BufferRef with its space and index, ready to add to a base pointer.
  struct Ref {
    uint8_t space; ///< fb::BufferSpace
    uint32_t index;
    uint64_t offset;
  };
  /// Opens the communicator for a module with a mesh or collectives.
  Status openCommunicator(uint32_t plans);
  /// Carries out collective `sequence` from `send` into `recv` (on the
  /// communication thread; on a CUDA device queued on commStream_).
  Status collective(uint32_t sequence, uint8_t *send, uint8_t *recv);

  /// A byte range a step reads or writes.
  struct Access {
    Ref ref;
    uint64_t bytes;
    bool writes;
    bool reads;
  };
  struct Step {
    enum Kind : uint8_t { kLaunch, kCopy, kCollective } kind;
    uint32_t kernel = 0;   ///< index into the executable; kCollective: its sequence
    uint32_t waitBefore = 0; ///< kCollective: the step that waits for it
    uint32_t firstArg = 0; ///< into refs_
    uint32_t argCount = 0;
    Ref src{}, dst{};
    uint64_t bytes = 0;
    /// kLaunch of a kernel whose rows grow with the dynamic dimension, on a
    /// stream that runs row prefixes: its parallel extent per N (at N < max
    /// it runs [0, rowsPerN * N)); 0: it always runs in full.
    int64_t rowsPerN = 0;
  };

  /// For each collective step, the first later step that touches what it
  /// reads or writes (the plan waits for it there), so that the steps in
  /// between overlap it.
  void findCollectiveWaits(const std::vector<std::vector<Access>> &accesses);
  /// Format 1.3, after the steps are resolved (a launch's rowsPerN set
  /// where its rows grow with N and the stream runs row prefixes): runs in
  /// full every scaled launch that writes arena bytes a later step reads
  /// in full; decides, per dynamic input and output, whether a run at
  /// N < max binds it in place (every step that touches it runs a row
  /// prefix) or stages it; allocates the staging of host devices.
  Status prepareDynamicTensors(const std::vector<std::vector<Access>> &accesses);

  std::shared_ptr<const format::LoadedModule> module_;
  std::unique_ptr<hal::Device> device_;
  std::unique_ptr<hal::Stream> stream_;
  std::unique_ptr<hal::Executable> executable_;
  std::unique_ptr<hal::Buffer> arena_;
  std::vector<Step> steps_;
  std::vector<Ref> refs_;
  std::vector<void *> weightPointers_;
  // One buffer holds every state tensor (each at a multiple of 256 bytes).
  std::unique_ptr<hal::Buffer> state_;
  // The status words the kernels' data checks write (module.fbs Check),
  // when a launch binds them; `statusDirty_`: a run may have written them
  // and they were not read (a run that failed half way).
  std::unique_ptr<hal::Buffer> status_;
  bool statusDirty_ = false;
  std::vector<void *> statePointers_;
  // Devices without host memory: the weights, uploaded once, and one
  // staging buffer for every input and output (offsets into it).
  std::unique_ptr<hal::Buffer> deviceWeights_, staging_;
  std::vector<uint64_t> inputStaging_, outputStaging_;
  // Graph replay: the graph, the base pointers it was captured with, those
  // of the previous run.
  std::unique_ptr<hal::Graph> graph_;
  std::vector<const void *> graphKey_, lastKey_;
  int64_t graphN_ = 0, lastN_ = 0; ///< the N of the dynamic dimension they ran at
  bool graphsEnabled_ = false;
  uint64_t graphReplays_ = 0;
  // Format 1.3: the dynamic dimension's range (all 0 for a static module)
  // and the current run's N.
  int64_t dynamicMin_ = 0, dynamicMax_ = 0, runN_ = 0;
  // Per input and output: staged at N < max (stagesDynamicTensor).
  std::vector<bool> stagedDynamic_[2];
  // Host devices: the dynamic tensors staged at N < max, each at `offset`
  // of dynamicStaging_ (max rows; `rowBytes` bytes per N).
  struct HostStaged {
    bool output;
    uint32_t index;
    uint64_t rowBytes;
    uint64_t offset;
  };
  std::vector<HostStaged> hostStaged_;
  std::unique_ptr<hal::Buffer> dynamicStaging_;
  // Scratch for run(): base pointers per space, argument pointers per launch.
  std::vector<const void *> inputPointers_;
  std::vector<void *> outputPointers_, argPointers_;
  // The communicator (a host one; NCCL's bootstraps over it) and the one
  // the collectives go through.
  std::unique_ptr<comm::Communicator> hostComm_, deviceComm_;
  comm::Communicator *comm_ = nullptr;
  // Collectives run on their own thread, and on a CUDA device on their own
  // stream, after an event recorded on the compute stream (one per step).
  std::unique_ptr<comm::CommQueue> commQueue_;
  std::unique_ptr<hal::Stream> commStream_;
  std::vector<std::unique_ptr<hal::Event>> commEvents_;
  /// Where strided gathers and scatters are made contiguous.
  std::unique_ptr<hal::Buffer> scratch_;
  double collectiveWait_ = 0;

public:
  /// Seconds the collectives took on their thread, and seconds the plan
  /// waited for them (what did not overlap), over all runs.
  double collectiveSeconds() const;
  double collectiveWaitSeconds() const { return collectiveWait_; }

  /// Per-kernel wall time of the runs, for profiles and the cost model's
  /// calibration. Host devices only (their kernels have run when dispatch
  /// returns, so a clock around each is its time); UNIMPLEMENTED on a
  /// device with its own streams (those time with events). Off by
  /// default: two clock reads a launch.
  struct KernelTime {
    std::string name; ///< the module's kernel name
    uint64_t calls = 0;
    double seconds = 0;
  };
  Status enableKernelTiming();
  /// One entry per kernel, in the order of first launch.
  const std::vector<KernelTime> &kernelTimes() const { return kernelTimes_; }
  /// Each timed launch, in order (a trace): the kernel (an index of
  /// kernelTimes()) and its start and end on the steady clock, in
  /// nanoseconds. The first kMaxKernelEvents only.
  struct KernelEvent {
    uint32_t kernel;
    int64_t startNs, endNs;
  };
  static constexpr size_t kMaxKernelEvents = size_t(1) << 20;
  const std::vector<KernelEvent> &kernelEvents() const { return kernelEvents_; }

  /// The bytes of the module's weights (on the device, or mapped from the
  /// module on host devices).
  uint64_t weightBytes() const;

private:
  static int64_t nanosecondsOf(std::chrono::steady_clock::time_point t);
  /// TEST-ONLY (DLC_DEBUG_PERTURB_KERNEL=N on a host device): adds 1 to the
  /// first float of kernel N's first written argument after each launch.
  void perturbOutput(uint32_t kernel);

  bool timeKernels_ = false;
  /// Indexed by executable kernel index.
  std::vector<KernelTime> kernelTimes_;
  std::vector<KernelEvent> kernelEvents_;
  /// Per executable kernel: its first argument it writes (-1: none).
  std::vector<int> firstWrittenArg_;
  int64_t perturbKernel_ = -1;
};

} // namespace dlc::rt
