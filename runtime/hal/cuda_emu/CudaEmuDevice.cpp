//===- CudaEmuDevice.cpp - CUDA kernels on the CPU ------------------------===//

#include "runtime/hal/cuda_emu/CudaEmuDevice.h"

#include "runtime/base/HostCores.h"
#include "runtime/base/Log.h"
#include "runtime/base/Memory.h"
#include "runtime/format/HostArch.h"
#include "runtime/hal/cpu/CpuDevice.h"
#include "runtime/hal/cuda_emu/EmuLibraryGemm.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstring>
#include <thread>

namespace dlc::rt::hal::cuda_emu {

using format::hostArchitecture;

namespace {

class EmuBuffer final : public Buffer {
public:
  explicit EmuBuffer(AlignedBuffer memory) : memory_(std::move(memory)) {}
  uint64_t size() const override { return memory_.size(); }
  uint8_t *hostData() override { return memory_.data(); }
  void *devicePointer() override { return memory_.data(); }

private:
  AlignedBuffer memory_;
};

class EmuExecutable final : public Executable {
public:
  ~EmuExecutable() override {
    for (size_t i = 0; i < handles_.size(); ++i)
      cpu::dlcloseBinary(handles_[i], fds_[i]);
  }
  uint32_t kernelCount() const override { return static_cast<uint32_t>(kernels_.size()); }

  struct Kernel {
    std::string name;
    dlc_emu_launch_stub_t stub;
    unsigned grid[3], block[3];
    uint32_t dynamicSharedMemory;
    uint32_t argCount;
    /// Run instead of the stub (DLC_GEMM_LIBRARY=on): the library GEMM.
    std::optional<LibraryGemmCall> library;
  };
  std::vector<void *> handles_;
  std::vector<int> fds_; ///< memfds of the loaded objects (cpu::dlopenBinary)
  std::vector<Kernel> kernels_;
};

class EmuEvent final : public Event {
public:
  Status wait() override { return okStatus(); }
};

class EmuStream final : public Stream {
public:
  explicit EmuStream(unsigned threads) : threads_(threads) {}

  Status dispatch(const Executable &executable, uint32_t kernel, void *const *args,
                  uint32_t argCount) override {
    const auto &exe = static_cast<const EmuExecutable &>(executable);
    if (kernel >= exe.kernels_.size())
      return internalError("kernel ", kernel, " is not in the executable");
    const EmuExecutable::Kernel &k = exe.kernels_[kernel];
    if (argCount != k.argCount)
      return internalError("kernel '", k.name, "' takes ", k.argCount, " buffers, got ",
                           argCount);
    if (k.library)
      return cuda_emu::emulateLibraryGemm(*k.library, args);
    // args[i] points at parameter i's value, as cuLaunchKernel's kernelParams.
    values_.assign(args, args + argCount);
    params_.resize(argCount);
    for (uint32_t a = 0; a < argCount; ++a)
      params_[a] = &values_[a];
    dlc_emu_launch_t launch{};
    std::memcpy(launch.grid, k.grid, sizeof launch.grid);
    std::memcpy(launch.block, k.block, sizeof launch.block);
    launch.dynamic_shared_bytes = k.dynamicSharedMemory;
    launch.threads = threads_;
    error_[0] = 0;
    launch.error = error_;
    launch.error_size = sizeof error_;
    k.stub(&launch, params_.data());
    if (error_[0])
      return internalError("cuda-emu: kernel '", k.name, "' failed: ", error_);
    return okStatus();
  }

  Status copy(void *dst, const void *src, uint64_t bytes) override {
    if (bytes)
      std::memcpy(dst, src, bytes);
    return okStatus();
  }
  Status record(Event &) override { return okStatus(); }
  Status waitEvent(Event &) override { return okStatus(); }
  Status synchronize() override { return okStatus(); }

private:
  unsigned threads_;
  std::vector<void *> values_;
  std::vector<void *> params_;
  char error_[1024];
};

class EmuDevice final : public Device {
public:
  EmuDevice(unsigned threads, uint64_t maxMemory, bool deviceMemory)
      : threads_(threads), deviceMemory_(deviceMemory) {
    limits_.maxAllocationBytes = maxMemory;
    limits_.concurrency = threads;
  }

  const std::string &name() const override { return name_; }
  const DeviceLimits &limits() const override { return limits_; }
  TargetKind targetKind() const override { return TargetKind::kCuda; }
  bool sharesHostMemory() const override { return !deviceMemory_; }
  bool acceptsBinary(BinaryFormat format, const std::string &arch) const override {
    return format == BinaryFormat::kSharedObject && arch == hostArchitecture();
  }

  Status allocate(uint64_t size, uint64_t alignment, std::unique_ptr<Buffer> *out) override {
    if (size > limits_.maxAllocationBytes)
      return resourceExhausted("cannot allocate ", size, " bytes on cuda-emu: the limit is ",
                               limits_.maxAllocationBytes, " bytes");
    AlignedBuffer memory;
    DLC_RETURN_IF_ERROR(AlignedBuffer::allocate(size, alignment, &memory));
    *out = std::make_unique<EmuBuffer>(std::move(memory));
    return okStatus();
  }

  Status loadExecutable(const ExecutableSpec &spec, std::unique_ptr<Executable> *out) override {
    auto exe = std::make_unique<EmuExecutable>();
    std::vector<void *> handleOf(spec.binaries.size(), nullptr);
    const bool emulateLibrary = gemmLibraryPolicy() == GemmLibraryPolicy::kOn;
    for (const KernelSpec &k : spec.kernels) {
      if (k.sourceOverridden)
        return unavailable("kernel '", k.name, "': DLC_KERNEL_OVERRIDE_DIR holds a source for "
                           "it, but cuda-emu runs the module's compiled shared object; "
                           "recompile the module to emulate an edited kernel");
      if (k.binary >= spec.binaries.size())
        return unavailable("kernel '", k.name,
                           "' has no shared object for cuda-emu (the module was compiled "
                           "without emulation binaries)");
      const BinarySpec &binary = spec.binaries[k.binary];
      if (!acceptsBinary(binary.format, binary.arch))
        return unavailable("kernel '", k.name, "': binary '", binary.name, "' for '",
                           binary.arch, "' cannot run on cuda-emu (", hostArchitecture(), ")");
      if (k.dynamicSharedMemory > kMaxDynamicSharedBytes)
        return resourceExhausted("kernel '", k.name, "' asks for ", k.dynamicSharedMemory,
                                 " bytes of dynamic shared memory; cuda-emu allows ",
                                 kMaxDynamicSharedBytes);
      if (!handleOf[k.binary]) {
        int fd = -1;
        DLC_RETURN_IF_ERROR(cpu::dlopenBinary(binary, &handleOf[k.binary], &fd));
        exe->handles_.push_back(handleOf[k.binary]);
        exe->fds_.push_back(fd);
      }
      const std::string symbol = kLaunchStubPrefix + k.entry;
      dlerror();
      void *address = dlsym(handleOf[k.binary], symbol.c_str());
      if (!address)
        return invalidModule("kernel '", k.name, "': launch stub '", symbol,
                             "' is not in binary '", binary.name, "'");
      EmuExecutable::Kernel kernel{k.name, nullptr, {}, {}, k.dynamicSharedMemory, k.argCount,
                                   std::nullopt};
      // cuda-emu is for checking the generated kernels: it computes the
      // library GEMM only when asked to.
      if (k.libraryGemm && emulateLibrary)
        kernel.library = k.libraryGemm;
      static_assert(sizeof(kernel.stub) == sizeof(address), "function and data pointers differ");
      std::memcpy(&kernel.stub, &address, sizeof address);
      std::memcpy(kernel.grid, k.grid, sizeof kernel.grid);
      std::memcpy(kernel.block, k.block, sizeof kernel.block);
      exe->kernels_.push_back(std::move(kernel));
    }
    *out = std::move(exe);
    return okStatus();
  }

  Status createStream(std::unique_ptr<Stream> *out) override {
    *out = std::make_unique<EmuStream>(threads_);
    return okStatus();
  }
  Status createEvent(std::unique_ptr<Event> *out) override {
    *out = std::make_unique<EmuEvent>();
    return okStatus();
  }

private:
  std::string name_ = "cuda-emu";
  unsigned threads_;
  bool deviceMemory_; ///< DeviceOptions::emulateDeviceMemory
  DeviceLimits limits_;
};

} // namespace

Status createCudaEmuDevice(const DeviceOptions &options, std::unique_ptr<Device> *out) {
  unsigned threads = options.numThreads;
  if (threads == 0)
    threads = static_cast<unsigned>(defaultDeviceThreads());
  if (threads > 1024)
    return invalidArgument("cuda-emu: ", threads, " threads is over the limit of 1024");
  uint64_t memory = options.maxMemoryBytes ? options.maxMemoryBytes : physicalMemoryBytes();
  if (memory == 0)
    memory = uint64_t(1) << 40;
  *out = std::make_unique<EmuDevice>(threads, memory, options.emulateDeviceMemory);
  if (logEnabled())
    log(LogLevel::kInfo, strCat("cuda-emu device: blocks on ", threads, " threads"));
  return okStatus();
}

} // namespace dlc::rt::hal::cuda_emu
