//===- Device.h - The hardware abstraction layer's interfaces ---*- C++ -*-===//
//
// What the executor needs from a device, and nothing about modules: memory
// (Buffer), loaded code (Executable), ordered work (Stream) and completion
// (Event). The CPU device (hal/cpu) runs everything synchronously on the
// calling thread plus its thread pool; the CUDA device (hal/cuda) puts work
// on a stream and can capture it into a graph (Graph) to replay; cuda-emu
// (hal/cuda_emu) runs CUDA kernels on the CPU with host memory.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/base/LibraryGemm.h"
#include "runtime/base/Span.h"
#include "runtime/base/Status.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace dlc::rt::hal {

/// Device memory. Host-visible on the CPU (hostData() non-null).
class Buffer {
public:
  virtual ~Buffer() = default;
  virtual uint64_t size() const = 0;
  /// The memory as a host pointer, or nullptr when the host cannot touch it.
  virtual uint8_t *hostData() = 0;
  /// The address kernels are given (a host pointer on the CPU).
  virtual void *devicePointer() = 0;
};

enum class BinaryFormat { kSharedObject, kPtx, kCubin };

/// One kernel of an executable: where its code is and how to launch it.
struct KernelSpec {
  /// `binary` when the kernel has no binary the device loads: the device
  /// compiles `source` (Device::compilesSource()).
  static constexpr uint32_t kNoBinary = 0xffffffffu;

  std::string name;
  std::string entry;       ///< exported symbol
  uint32_t binary = 0;     ///< index into ExecutableSpec::binaries, or kNoBinary
  /// The kernel's source (module.fbs Kernel.source, or the file that
  /// DLC_KERNEL_OVERRIDE_DIR holds for it); may be empty.
  std::string source;
  /// True when `source` came from DLC_KERNEL_OVERRIDE_DIR: the device must
  /// compile it instead of loading `binary`.
  bool sourceOverridden = false;
  uint32_t argCount = 0;
  int64_t parallelExtent = 1; ///< CPU: the range split over the thread pool
  int64_t grain = 1;
  uint32_t grid[3] = {1, 1, 1}; ///< CUDA
  uint32_t block[3] = {1, 1, 1};
  uint32_t dynamicSharedMemory = 0;
  /// The library call that may run instead of the kernel's code (module
  /// format 1.4); the device decides, by gemmLibraryPolicy() and by whether
  /// it has the library, when it loads the executable.
  std::optional<LibraryGemmCall> libraryGemm;
};

struct BinarySpec {
  std::string name;
  BinaryFormat format = BinaryFormat::kSharedObject;
  std::string arch;
  ByteSpan bytes; ///< borrowed for the duration of loadExecutable
};

struct ExecutableSpec {
  std::vector<BinarySpec> binaries;
  std::vector<KernelSpec> kernels;
};

/// A set of loaded kernels, addressed by their index in ExecutableSpec.
class Executable {
public:
  virtual ~Executable() = default;
  virtual uint32_t kernelCount() const = 0;
};

/// Signalled when the work recorded before it on a stream has finished.
class Event {
public:
  virtual ~Event() = default;
  /// Blocks until signalled.
  virtual Status wait() = 0;
};

/// Work recorded from a stream (Stream::beginCapture/endCapture), replayed
/// as a whole; a CUDA Graph on CUDA.
class Graph {
public:
  virtual ~Graph() = default;
};

/// An ordered queue of work on one device. Pointers are device pointers,
/// except that copy() also takes host pointers on either side.
class Stream {
public:
  virtual ~Stream() = default;
  /// Runs kernel `kernel` of `executable` with `args` (argCount pointers).
  virtual Status dispatch(const Executable &executable, uint32_t kernel, void *const *args,
                          uint32_t argCount) = 0;
  /// Runs only the first `extent` iterations of a CPU kernel's parallel
  /// extent, in chunks of the kernel's grain (those of a kernel compiled
  /// with that extent): a dynamic dimension's rows at N < max (module
  /// format 1.3). Where runsRowPrefixes() is false, runs the whole launch,
  /// as dispatch().
  virtual Status dispatchRows(const Executable &executable, uint32_t kernel, void *const *args,
                              uint32_t argCount, int64_t extent) {
    (void)extent;
    return dispatch(executable, kernel, args, argCount);
  }
  /// Whether dispatchRows runs only the prefix it is given (the CPU); when
  /// false, every launch runs in full and reads and writes all max rows.
  virtual bool runsRowPrefixes() const { return false; }
  virtual Status copy(void *dst, const void *src, uint64_t bytes) = 0;
  virtual Status record(Event &event) = 0;
  /// Later work on this stream waits for `event`.
  virtual Status waitEvent(Event &event) = 0;
  /// Blocks until everything queued has finished; reports the first fault.
  virtual Status synchronize() = 0;
  /// The device API's handle (a CUstream), for libraries that queue work
  /// on it (NCCL); null where there is none.
  virtual void *nativeHandle() { return nullptr; }

  /// Whether beginCapture/endCapture/launchGraph work on this stream.
  virtual bool supportsGraphs() const { return false; }
  /// Work queued until endCapture is recorded into a graph, not run.
  virtual Status beginCapture() { return unimplemented("this stream cannot capture graphs"); }
  virtual Status endCapture(std::unique_ptr<Graph> *) {
    return unimplemented("this stream cannot capture graphs");
  }
  /// Queues every command of `graph` (with the pointers it was captured with).
  virtual Status launchGraph(Graph &) { return unimplemented("this stream cannot run graphs"); }
};

/// Which kernels a device runs (module.fbs: Kernel.target).
enum class TargetKind { kCpu, kCuda };

struct DeviceLimits {
  uint64_t maxAllocationBytes = 0; ///< the largest one arena may be
  uint32_t concurrency = 1;        ///< threads (CPU) or SMs (CUDA)
};

struct DeviceOptions {
  uint32_t numThreads = 0;         ///< CPU: 0 = defaultDeviceThreads() (base/HostCores.h)
  uint64_t maxMemoryBytes = 0;     ///< 0 = the device's memory
  /// TEST-ONLY, cuda-emu: report sharesHostMemory() false (its memory is
  /// still host memory), so that the executor's path for a device with
  /// memory of its own (weights uploaded, inputs and outputs staged) runs
  /// without a GPU.
  bool emulateDeviceMemory = false;
};

class Device {
public:
  virtual ~Device() = default;
  /// "cpu", "cuda:0", ...
  virtual const std::string &name() const = 0;
  virtual const DeviceLimits &limits() const = 0;
  virtual TargetKind targetKind() const = 0;
  /// Whether this device can run code in `format` built for `arch`.
  virtual bool acceptsBinary(BinaryFormat format, const std::string &arch) const = 0;
  /// Among binaries it accepts, which the device prefers: the highest rank
  /// wins (CUDA: the exact cubin, then the newest PTX); -1 = cannot load.
  virtual int binaryRank(BinaryFormat format, const std::string &arch) const {
    return acceptsBinary(format, arch) ? 0 : -1;
  }
  /// Whether the device compiles kernel sources at load time (CUDA: NVRTC).
  virtual bool compilesSource() const { return false; }
  /// Whether kernels use host memory directly (cpu, cuda-emu); when false,
  /// weights are uploaded and inputs/outputs staged through device buffers.
  virtual bool sharesHostMemory() const { return true; }

  virtual Status allocate(uint64_t size, uint64_t alignment, std::unique_ptr<Buffer> *out) = 0;
  virtual Status loadExecutable(const ExecutableSpec &spec, std::unique_ptr<Executable> *out) = 0;
  virtual Status createStream(std::unique_ptr<Stream> *out) = 0;
  virtual Status createEvent(std::unique_ptr<Event> *out) = 0;
};

} // namespace dlc::rt::hal
