//===- CpuDevice.cpp - The host CPU as a device ---------------------------===//

#include "runtime/hal/cpu/CpuDevice.h"

#include "runtime/base/HostCores.h"
#include "runtime/base/Log.h"
#include "runtime/base/Memory.h"
#include "runtime/format/HostArch.h"
#include "runtime/hal/cpu/Denormals.h"
#include "runtime/hal/cpu/ThreadPool.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace dlc::rt::hal::cpu {

using format::hostArchitecture;

//===----------------------------------------------------------------------===//
// Executables: shared objects loaded from memory
//===----------------------------------------------------------------------===//

/// Writes `bytes` to a file descriptor from start to end.
static bool writeAll(int fd, ByteSpan bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

/// dlopen()s a shared object held in memory: through an anonymous memfd
/// where the kernel has one, else a temporary file removed right after.
Status dlopenBinary(const BinarySpec &binary, void **handle, int *keptFd) {
  if (keptFd)
    *keptFd = -1;
  if (binary.bytes.size() < 4 || std::memcmp(binary.bytes.data(), "\x7f" "ELF", 4) != 0)
    return invalidModule("binary '", binary.name, "' is not an ELF shared object");
  std::string path;
  int fd = -1;
#ifdef MFD_CLOEXEC
  fd = memfd_create("dlc-kernels", MFD_CLOEXEC);
  if (fd >= 0)
    path = "/proc/self/fd/" + std::to_string(fd);
#endif
  bool temporary = false;
  if (fd < 0) {
    const char *dir = std::getenv("TMPDIR");
    path = std::string(dir && *dir ? dir : "/tmp") + "/dlc-kernels-XXXXXX";
    fd = mkstemp(path.data());
    if (fd < 0)
      return resourceExhausted("cannot create a temporary file for binary '", binary.name,
                               "': ", std::strerror(errno));
    temporary = true;
  }
  if (!writeAll(fd, binary.bytes)) {
    int err = errno;
    close(fd);
    if (temporary)
      unlink(path.c_str());
    return resourceExhausted("cannot write binary '", binary.name, "' (", binary.bytes.size(),
                             " bytes): ", std::strerror(err));
  }
  dlerror();
  *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  std::string message = *handle ? "" : dlerror();
  // glibc knows a loaded object by its path: while this one is loaded, its
  // memfd must stay open, or the next memfd gets the same /proc/self/fd/N
  // and dlopen returns this object again.
  if (*handle && keptFd && !temporary)
    *keptFd = fd;
  else
    close(fd);
  if (temporary)
    unlink(path.c_str());
  if (!*handle)
    return invalidModule("cannot load binary '", binary.name, "': ", message);
  // A binary whose set-up can fail (a library it loads itself: OpenBLAS,
  // CpuTarget::blasPrelude) says why through this optional entry.
  if (void *symbol = dlsym(*handle, "dlc_kernels_init_error")) {
    const char *(*initError)();
    static_assert(sizeof(initError) == sizeof(symbol), "function and data pointers differ");
    std::memcpy(&initError, &symbol, sizeof initError);
    if (const char *why = initError()) {
      std::string reason = why;
      dlcloseBinary(*handle, keptFd ? *keptFd : -1);
      *handle = nullptr;
      if (keptFd)
        *keptFd = -1;
      return unavailable("cannot set up binary '", binary.name, "': ", reason);
    }
  }
  return okStatus();
}

void dlcloseBinary(void *handle, int keptFd) {
  if (handle)
    dlclose(handle);
  if (keptFd < 0)
    return;
  // An object glibc could not unload (thread-local destructors, unique
  // symbols) stays known by its /proc/self/fd/N path: keep that fd open for
  // good, so that no later memfd gets the same path.
  const std::string path = "/proc/self/fd/" + std::to_string(keptFd);
  if (void *still = dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD)) {
    dlclose(still);
    return;
  }
  close(keptFd);
}

namespace {

class CpuBuffer final : public Buffer {
public:
  explicit CpuBuffer(AlignedBuffer memory) : memory_(std::move(memory)) {}
  uint64_t size() const override { return memory_.size(); }
  uint8_t *hostData() override { return memory_.data(); }
  void *devicePointer() override { return memory_.data(); }

private:
  AlignedBuffer memory_;
};

class CpuExecutable final : public Executable {
public:
  ~CpuExecutable() override {
    for (size_t i = 0; i < handles_.size(); ++i)
      dlcloseBinary(handles_[i], fds_[i]);
  }
  uint32_t kernelCount() const override { return static_cast<uint32_t>(kernels_.size()); }

  struct Kernel {
    KernelEntry entry;
    int64_t extent;
    int64_t grain;
    uint32_t argCount;
  };
  std::vector<void *> handles_;
  std::vector<int> fds_; ///< memfds of the loaded objects, closed after them
  std::vector<Kernel> kernels_;
};

//===----------------------------------------------------------------------===//
// Streams and events: synchronous
//===----------------------------------------------------------------------===//

class CpuEvent final : public Event {
public:
  Status wait() override { return okStatus(); }
};

class CpuStream final : public Stream {
public:
  explicit CpuStream(ThreadPool &pool) : pool_(pool) {}

  Status dispatch(const Executable &executable, uint32_t kernel, void *const *args,
                  uint32_t argCount) override {
    return dispatchRows(executable, kernel, args, argCount, -1);
  }

  /// `extent` -1: the kernel's whole parallel extent.
  Status dispatchRows(const Executable &executable, uint32_t kernel, void *const *args,
                      uint32_t argCount, int64_t extent) override {
    const auto &exe = static_cast<const CpuExecutable &>(executable);
    if (kernel >= exe.kernels_.size())
      return internalError("kernel ", kernel, " is not in the executable");
    const CpuExecutable::Kernel &k = exe.kernels_[kernel];
    if (argCount != k.argCount)
      return internalError("kernel ", kernel, " takes ", k.argCount, " buffers, got ", argCount);
    if (extent == -1)
      extent = k.extent;
    if (extent < 1 || extent > k.extent)
      return internalError("kernel ", kernel, ": ", extent, " rows of its extent ", k.extent);
    // The full launch's grain: the chunks a module compiled for this extent gets.
    KernelEntry entry = k.entry;
    pool_.parallelFor(extent, k.grain,
                      [entry, args](int64_t begin, int64_t end) { entry(args, begin, end); });
    return okStatus();
  }
  bool runsRowPrefixes() const override { return true; }

  Status copy(void *dst, const void *src, uint64_t bytes) override {
    if (bytes)
      std::memcpy(dst, src, bytes);
    return okStatus();
  }
  Status record(Event &) override { return okStatus(); }
  Status waitEvent(Event &) override { return okStatus(); }
  Status synchronize() override { return okStatus(); }

private:
  ThreadPool &pool_;
};

//===----------------------------------------------------------------------===//
// The device
//===----------------------------------------------------------------------===//

class CpuDevice final : public Device {
public:
  CpuDevice(uint32_t threads, uint64_t maxMemory)
      : pool_(threads, flushDenormalsByDefault(), fixedChunksByDefault()) {
    limits_.maxAllocationBytes = maxMemory;
    limits_.concurrency = pool_.threadCount();
  }

  const std::string &name() const override { return name_; }
  const DeviceLimits &limits() const override { return limits_; }
  TargetKind targetKind() const override { return TargetKind::kCpu; }

  bool acceptsBinary(BinaryFormat format, const std::string &arch) const override {
    return format == BinaryFormat::kSharedObject && arch == hostArchitecture();
  }

  Status allocate(uint64_t size, uint64_t alignment, std::unique_ptr<Buffer> *out) override {
    if (size > limits_.maxAllocationBytes)
      return resourceExhausted("cannot allocate ", size, " bytes on cpu: the limit is ",
                               limits_.maxAllocationBytes, " bytes");
    AlignedBuffer memory;
    DLC_RETURN_IF_ERROR(AlignedBuffer::allocate(size, alignment, &memory));
    *out = std::make_unique<CpuBuffer>(std::move(memory));
    return okStatus();
  }

  Status loadExecutable(const ExecutableSpec &spec, std::unique_ptr<Executable> *out) override {
    auto exe = std::make_unique<CpuExecutable>();
    // Load each binary a kernel uses, once.
    std::vector<void *> handleOf(spec.binaries.size(), nullptr);
    for (const KernelSpec &k : spec.kernels) {
      if (k.binary >= spec.binaries.size())
        return internalError("kernel '", k.name, "' names binary ", k.binary);
      const BinarySpec &binary = spec.binaries[k.binary];
      if (!acceptsBinary(binary.format, binary.arch))
        return unavailable("kernel '", k.name, "': binary '", binary.name, "' for '",
                           binary.arch, "' cannot run on cpu (", hostArchitecture(), ")");
      if (!handleOf[k.binary]) {
        int fd = -1;
        DLC_RETURN_IF_ERROR(dlopenBinary(binary, &handleOf[k.binary], &fd));
        exe->handles_.push_back(handleOf[k.binary]);
        exe->fds_.push_back(fd);
      }
      dlerror();
      void *symbol = dlsym(handleOf[k.binary], k.entry.c_str());
      if (!symbol)
        return invalidModule("kernel '", k.name, "': entry symbol '", k.entry,
                             "' is not in binary '", binary.name, "'");
      KernelEntry entry;
      static_assert(sizeof(entry) == sizeof(symbol), "function and data pointers differ");
      std::memcpy(&entry, &symbol, sizeof entry);
      exe->kernels_.push_back({entry, k.parallelExtent, k.grain, k.argCount});
    }
    *out = std::move(exe);
    return okStatus();
  }

  Status createStream(std::unique_ptr<Stream> *out) override {
    *out = std::make_unique<CpuStream>(pool_);
    return okStatus();
  }
  Status createEvent(std::unique_ptr<Event> *out) override {
    *out = std::make_unique<CpuEvent>();
    return okStatus();
  }

private:
  std::string name_ = "cpu";
  DeviceLimits limits_;
  ThreadPool pool_;
};

} // namespace

Status createCpuDevice(const DeviceOptions &options, std::unique_ptr<Device> *out) {
  uint32_t threads = options.numThreads;
  if (threads == 0)
    threads = static_cast<unsigned>(defaultDeviceThreads());
  if (threads > 1024)
    return invalidArgument("cpu: ", threads, " threads is over the limit of 1024");
  uint64_t memory = options.maxMemoryBytes ? options.maxMemoryBytes : physicalMemoryBytes();
  if (memory == 0)
    memory = uint64_t(1) << 40;
  *out = std::make_unique<CpuDevice>(threads, memory);
  if (logEnabled())
    log(LogLevel::kInfo, strCat("cpu device: ", threads, " threads, memory limit ", memory,
                                " bytes"));
  return okStatus();
}

} // namespace dlc::rt::hal::cpu
