//===- CudaDevice.cpp - An NVIDIA GPU through the driver API --------------===//

#include "runtime/hal/cuda/CudaDevice.h"

#include "runtime/base/Log.h"
#include "runtime/hal/cuda/CublasLt.h"
#include "runtime/hal/cuda/CudaDriver.h"
#include "runtime/hal/cuda/NvrtcJit.h"

#include <cstdlib>
#include <cstring>

namespace dlc::rt::hal::cuda {

namespace {

/// Dynamic shared memory above this needs cuFuncSetAttribute first.
constexpr uint32_t kDefaultDynamicShared = 48 * 1024;

class CudaBuffer final : public Buffer {
public:
  CudaBuffer(const CudaDriver &driver, CUdeviceptr base, CUdeviceptr aligned, uint64_t size)
      : driver_(driver), base_(base), aligned_(aligned), size_(size) {}
  ~CudaBuffer() override {
    if (base_)
      driver_.cuMemFree(base_);
  }
  uint64_t size() const override { return size_; }
  uint8_t *hostData() override { return nullptr; }
  void *devicePointer() override { return reinterpret_cast<void *>(aligned_); }

private:
  const CudaDriver &driver_;
  CUdeviceptr base_, aligned_;
  uint64_t size_;
};

class CudaExecutable final : public Executable {
public:
  explicit CudaExecutable(const CudaDriver &driver) : driver_(driver) {}
  ~CudaExecutable() override {
    for (CUmodule m : modules_)
      driver_.cuModuleUnload(m);
    if (workspace_)
      driver_.cuMemFree(workspace_);
  }
  uint32_t kernelCount() const override { return static_cast<uint32_t>(kernels_.size()); }

  struct Kernel {
    std::string name;
    CUfunction function;
    uint32_t grid[3], block[3];
    uint32_t dynamicSharedMemory;
    uint32_t argCount;
    /// The kernel's library GEMM when cuBLASLt runs it (module format 1.4).
    std::unique_ptr<CublasLtGemm> library;
  };
  const CudaDriver &driver_;
  std::vector<CUmodule> modules_;
  std::vector<Kernel> kernels_;
  /// cuBLASLt's workspace for this executable's library GEMMs, which run in
  /// stream order (the executor queues one executable's kernels on one
  /// stream at a time).
  CUdeviceptr workspace_ = 0;
};

class CudaEvent final : public Event {
public:
  CudaEvent(const CudaDriver &driver, CUevent event) : driver_(driver), event_(event) {}
  ~CudaEvent() override { driver_.cuEventDestroy(event_); }
  Status wait() override {
    DLC_CU_RETURN_IF_ERROR(driver_, cuEventSynchronize(event_));
    return okStatus();
  }
  CUevent event() const { return event_; }

private:
  const CudaDriver &driver_;
  CUevent event_;
};

class CudaGraph final : public Graph {
public:
  CudaGraph(const CudaDriver &driver, CUgraph graph, CUgraphExec exec)
      : driver_(driver), graph_(graph), exec_(exec) {}
  ~CudaGraph() override {
    if (exec_)
      driver_.cuGraphExecDestroy(exec_);
    if (graph_)
      driver_.cuGraphDestroy(graph_);
  }
  CUgraphExec exec() const { return exec_; }

private:
  const CudaDriver &driver_;
  CUgraph graph_;
  CUgraphExec exec_;
};

class CudaStream final : public Stream {
public:
  CudaStream(const CudaDriver &driver, CUcontext context, CUstream stream)
      : driver_(driver), context_(context), stream_(stream) {}
  void *nativeHandle() override { return stream_; }
  ~CudaStream() override {
    driver_.cuCtxSetCurrent(context_);
    if (capturing_) {
      CUgraph graph = nullptr;
      driver_.cuStreamEndCapture(stream_, &graph);
      if (graph)
        driver_.cuGraphDestroy(graph);
    }
    driver_.cuStreamSynchronize(stream_);
    driver_.cuStreamDestroy(stream_);
  }

  Status dispatch(const Executable &executable, uint32_t kernel, void *const *args,
                  uint32_t argCount) override {
    const auto &exe = static_cast<const CudaExecutable &>(executable);
    if (kernel >= exe.kernels_.size())
      return internalError("kernel ", kernel, " is not in the executable");
    const CudaExecutable::Kernel &k = exe.kernels_[kernel];
    if (argCount != k.argCount)
      return internalError("kernel '", k.name, "' takes ", k.argCount, " buffers, got ",
                           argCount);
    if (k.library) {
      // cuBLASLt launches through the calling thread's current context.
      DLC_CU_RETURN_IF_ERROR(driver_, cuCtxSetCurrent(context_));
      bool ran = false;
      Status s = k.library->run(args, stream_, reinterpret_cast<void *>(exe.workspace_), &ran);
      if (!s.ok())
        return s.prepend(strCat("kernel '", k.name, "'"));
      if (ran)
        return okStatus();
    }
    // kernelParams[i] points at parameter i's value: a CUdeviceptr.
    values_.resize(argCount);
    params_.resize(argCount);
    for (uint32_t a = 0; a < argCount; ++a) {
      values_[a] = reinterpret_cast<CUdeviceptr>(args[a]);
      params_[a] = &values_[a];
    }
    CUresult r = driver_.cuLaunchKernel(k.function, k.grid[0], k.grid[1], k.grid[2], k.block[0],
                                        k.block[1], k.block[2], k.dynamicSharedMemory, stream_,
                                        params_.data(), nullptr);
    if (r != CUDA_SUCCESS)
      return cudaError(driver_, r, "cuLaunchKernel").prepend(strCat("kernel '", k.name, "'"));
    return okStatus();
  }

  Status copy(void *dst, const void *src, uint64_t bytes) override {
    if (!bytes)
      return okStatus();
    // Unified addressing: the driver tells host from device pointers.
    DLC_CU_RETURN_IF_ERROR(driver_, cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(dst),
                                                  reinterpret_cast<CUdeviceptr>(src), bytes,
                                                  stream_));
    return okStatus();
  }
  Status record(Event &event) override {
    DLC_CU_RETURN_IF_ERROR(driver_,
                           cuEventRecord(static_cast<CudaEvent &>(event).event(), stream_));
    return okStatus();
  }
  Status waitEvent(Event &event) override {
    DLC_CU_RETURN_IF_ERROR(driver_,
                           cuStreamWaitEvent(stream_, static_cast<CudaEvent &>(event).event(), 0));
    return okStatus();
  }
  Status synchronize() override {
    DLC_CU_RETURN_IF_ERROR(driver_, cuStreamSynchronize(stream_));
    return okStatus();
  }

  bool supportsGraphs() const override { return true; }
  Status beginCapture() override {
    DLC_CU_RETURN_IF_ERROR(driver_,
                           cuStreamBeginCapture(stream_, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
    capturing_ = true;
    return okStatus();
  }
  Status endCapture(std::unique_ptr<Graph> *out) override {
    capturing_ = false;
    CUgraph graph = nullptr;
    DLC_CU_RETURN_IF_ERROR(driver_, cuStreamEndCapture(stream_, &graph));
    CUgraphExec exec = nullptr;
    CUresult r = driver_.cuGraphInstantiate(&exec, graph, 0);
    if (r != CUDA_SUCCESS) {
      driver_.cuGraphDestroy(graph);
      return cudaError(driver_, r, "cuGraphInstantiate");
    }
    *out = std::make_unique<CudaGraph>(driver_, graph, exec);
    return okStatus();
  }
  Status launchGraph(Graph &graph) override {
    DLC_CU_RETURN_IF_ERROR(driver_,
                           cuGraphLaunch(static_cast<CudaGraph &>(graph).exec(), stream_));
    return okStatus();
  }

private:
  const CudaDriver &driver_;
  CUcontext context_;
  CUstream stream_;
  bool capturing_ = false;
  std::vector<CUdeviceptr> values_;
  std::vector<void *> params_;
};

//===----------------------------------------------------------------------===//
// The device
//===----------------------------------------------------------------------===//

class CudaDevice final : public Device {
public:
  CudaDevice(const CudaDriver &driver, CUdevice device, CUcontext context, std::string name)
      : driver_(driver), device_(device), context_(context), name_(std::move(name)) {}
  ~CudaDevice() override {
    cublasLt_.reset(); // before its context goes
    driver_.cuDevicePrimaryCtxRelease(device_);
  }

  Status initialize(const DeviceOptions &options) {
    int major = 0, minor = 0, sms = 0, optin = 0, unified = 0;
    DLC_CU_RETURN_IF_ERROR(
        driver_, cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device_));
    DLC_CU_RETURN_IF_ERROR(
        driver_, cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device_));
    DLC_CU_RETURN_IF_ERROR(
        driver_, cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device_));
    DLC_CU_RETURN_IF_ERROR(
        driver_,
        cuDeviceGetAttribute(&optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, device_));
    DLC_CU_RETURN_IF_ERROR(
        driver_, cuDeviceGetAttribute(&unified, CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING, device_));
    if (!unified)
      return unavailable(name_, ": the device lacks unified addressing, which dlc needs");
    size_t total = 0;
    DLC_CU_RETURN_IF_ERROR(driver_, cuDeviceTotalMem(&total, device_));
    char deviceName[256] = {0};
    driver_.cuDeviceGetName(deviceName, sizeof deviceName - 1, device_);
    computeCapability_ = major * 10 + minor;
    arch_ = strCat("sm_", computeCapability_);
    maxDynamicShared_ = static_cast<uint32_t>(optin);
    limits_.maxAllocationBytes = options.maxMemoryBytes ? options.maxMemoryBytes : total;
    limits_.concurrency = static_cast<uint32_t>(sms);
    if (logEnabled())
      log(LogLevel::kInfo, strCat(name_, ": ", deviceName, ", ", arch_, ", ", sms, " SMs, ",
                                  total >> 20, " MiB, kernel cache '", cache_.directory(), "'"));
    return okStatus();
  }

  const std::string &name() const override { return name_; }
  const DeviceLimits &limits() const override { return limits_; }
  TargetKind targetKind() const override { return TargetKind::kCuda; }

  bool acceptsBinary(BinaryFormat format, const std::string &arch) const override {
    return binaryRank(format, arch) >= 0;
  }
  int binaryRank(BinaryFormat format, const std::string &arch) const override {
    if (format == BinaryFormat::kCubin && arch == arch_)
      return 1 << 20;
    int sm = smVersion(arch);
    if (format == BinaryFormat::kPtx && sm > 0 && sm <= computeCapability_)
      return sm;
    return -1;
  }
  bool compilesSource() const override { return true; }
  bool sharesHostMemory() const override { return false; }

  Status allocate(uint64_t size, uint64_t alignment, std::unique_ptr<Buffer> *out) override {
    if (size > limits_.maxAllocationBytes)
      return resourceExhausted("cannot allocate ", size, " bytes on ", name_, ": the limit is ",
                               limits_.maxAllocationBytes, " bytes");
    DLC_CU_RETURN_IF_ERROR(driver_, cuCtxSetCurrent(context_));
    if (size == 0) {
      *out = std::make_unique<CudaBuffer>(driver_, 0, 0, 0);
      return okStatus();
    }
    // cuMemAlloc aligns to 256 bytes at least; ask for slack beyond that.
    const uint64_t slack = alignment > 256 ? alignment : 0;
    CUdeviceptr base = 0;
    CUresult r = driver_.cuMemAlloc(&base, size + slack);
    if (r != CUDA_SUCCESS) {
      size_t free = 0, total = 0;
      std::string available;
      if (driver_.cuMemGetInfo(&free, &total) == CUDA_SUCCESS)
        available = strCat(" (", free, " bytes available of ", total, ")");
      return cudaError(driver_, r, "cuMemAlloc")
          .prepend(strCat("cannot allocate ", size, " bytes on ", name_, available));
    }
    CUdeviceptr aligned = slack ? (base + alignment - 1) / alignment * alignment : base;
    auto buffer = std::make_unique<CudaBuffer>(driver_, base, aligned, size);
    // Zero-filled, as the executor promises for the arena.
    DLC_CU_RETURN_IF_ERROR(driver_, cuMemsetD8Async(aligned, 0, size, nullptr));
    DLC_CU_RETURN_IF_ERROR(driver_, cuStreamSynchronize(nullptr));
    *out = std::move(buffer);
    return okStatus();
  }

  Status loadExecutable(const ExecutableSpec &spec, std::unique_ptr<Executable> *out) override {
    DLC_CU_RETURN_IF_ERROR(driver_, cuCtxSetCurrent(context_));
    auto exe = std::make_unique<CudaExecutable>(driver_);
    std::vector<CUmodule> moduleOf(spec.binaries.size(), nullptr);
    const GemmLibraryPolicy policy = gemmLibraryPolicy();
    for (const KernelSpec &k : spec.kernels) {
      CUmodule module = nullptr;
      if (k.binary == KernelSpec::kNoBinary || k.sourceOverridden) {
        if (k.source.empty())
          return unavailable("kernel '", k.name, "' has no binary for ", arch_,
                             " and no source to compile");
        JitResult jit;
        DLC_RETURN_IF_ERROR(jitCompile(k.name, k.source, arch_, cache_, &jit));
        DLC_RETURN_IF_ERROR(loadModule(k.name, jit.image.data(), &module));
        exe->modules_.push_back(module);
      } else {
        if (k.binary >= spec.binaries.size())
          return internalError("kernel '", k.name, "' names binary ", k.binary);
        if (!moduleOf[k.binary]) {
          const BinarySpec &binary = spec.binaries[k.binary];
          if (!acceptsBinary(binary.format, binary.arch))
            return unavailable("kernel '", k.name, "': binary '", binary.name, "' for '",
                               binary.arch, "' cannot run on ", name_, " (", arch_, ")");
          // PTX must be NUL-terminated for the driver; sections need not be.
          std::vector<uint8_t> image(binary.bytes.begin(), binary.bytes.end());
          if (binary.format == BinaryFormat::kPtx)
            image.push_back(0);
          DLC_RETURN_IF_ERROR(loadModule(binary.name, image.data(), &moduleOf[k.binary]));
          exe->modules_.push_back(moduleOf[k.binary]);
          if (logEnabled())
            log(LogLevel::kInfo,
                strCat(name_, ": loaded ", binary.format == BinaryFormat::kPtx ? "PTX" : "cubin",
                       " '", binary.name, "' (", binary.arch, ")"));
        }
        module = moduleOf[k.binary];
      }
      CUfunction function = nullptr;
      CUresult r = driver_.cuModuleGetFunction(&function, module, k.entry.c_str());
      if (r != CUDA_SUCCESS)
        return invalidModule("kernel '", k.name, "': entry '", k.entry,
                             "' is not in its CUDA module (", driver_.describe(r), ")");
      if (k.dynamicSharedMemory > maxDynamicShared_)
        return resourceExhausted("kernel '", k.name, "' asks for ", k.dynamicSharedMemory,
                                 " bytes of dynamic shared memory; ", name_, " allows ",
                                 maxDynamicShared_);
      if (k.dynamicSharedMemory > kDefaultDynamicShared)
        DLC_CU_RETURN_IF_ERROR(driver_,
                               cuFuncSetAttribute(function,
                                                  CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                                  static_cast<int>(k.dynamicSharedMemory)));
      CudaExecutable::Kernel kernel{k.name, function, {}, {}, k.dynamicSharedMemory, k.argCount,
                                    nullptr};
      std::memcpy(kernel.grid, k.grid, sizeof kernel.grid);
      std::memcpy(kernel.block, k.block, sizeof kernel.block);
      if (k.libraryGemm && policy != GemmLibraryPolicy::kOff)
        DLC_RETURN_IF_ERROR(prepareLibraryGemm(k, policy, *exe, &kernel.library));
      exe->kernels_.push_back(std::move(kernel));
    }
    *out = std::move(exe);
    return okStatus();
  }

  Status createStream(std::unique_ptr<Stream> *out) override {
    DLC_CU_RETURN_IF_ERROR(driver_, cuCtxSetCurrent(context_));
    CUstream stream = nullptr;
    DLC_CU_RETURN_IF_ERROR(driver_, cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
    *out = std::make_unique<CudaStream>(driver_, context_, stream);
    return okStatus();
  }
  Status createEvent(std::unique_ptr<Event> *out) override {
    DLC_CU_RETURN_IF_ERROR(driver_, cuCtxSetCurrent(context_));
    CUevent event = nullptr;
    DLC_CU_RETURN_IF_ERROR(driver_, cuEventCreate(&event, CU_EVENT_DISABLE_TIMING));
    *out = std::make_unique<CudaEvent>(driver_, event);
    return okStatus();
  }

private:
  /// cuBLASLt's plan for kernel `k`'s library GEMM, or null (the kernel's
  /// code runs) when the library or an algorithm for it is missing.
  Status prepareLibraryGemm(const KernelSpec &k, GemmLibraryPolicy policy, CudaExecutable &exe,
                            std::unique_ptr<CublasLtGemm> *out) {
    std::string why;
    if (!cublasLtTried_) {
      cublasLtTried_ = true;
      cublasLt_ = CublasLtHandle::create(&cublasLtWhy_);
    }
    if (cublasLt_)
      *out = cublasLt_->prepare(*k.libraryGemm, &why);
    else
      why = cublasLtWhy_;
    if (!*out) {
      LogLevel level = policy == GemmLibraryPolicy::kOn ? LogLevel::kWarning : LogLevel::kInfo;
      if (logEnabled())
        log(level, strCat(name_, ": kernel '", k.name, "' runs its generated GEMM: ", why));
      return okStatus();
    }
    if (!exe.workspace_)
      DLC_CU_RETURN_IF_ERROR(driver_, cuMemAlloc(&exe.workspace_, kCublasLtWorkspaceBytes));
    if (logEnabled())
      log(LogLevel::kInfo, strCat(name_, ": kernel '", k.name, "' runs as a cuBLASLt GEMM"));
    return okStatus();
  }

  /// cuModuleLoadDataEx with the JIT's error log in the message.
  Status loadModule(const std::string &what, const void *image, CUmodule *module) {
    char errorLog[8192] = {0};
    int options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void *values[] = {errorLog, reinterpret_cast<void *>(uintptr_t(sizeof errorLog - 1))};
    CUresult r = driver_.cuModuleLoadDataEx(module, image, 2, options, values);
    if (r == CUDA_SUCCESS)
      return okStatus();
    Status s = cudaError(driver_, r, "cuModuleLoadDataEx");
    return Status(s.code(), strCat("cannot load '", what, "' on ", name_, " (", arch_, "): ",
                                   s.message(), errorLog[0] ? "\n" : "", errorLog));
  }

  const CudaDriver &driver_;
  CUdevice device_;
  CUcontext context_;
  std::string name_;
  std::string arch_;
  int computeCapability_ = 0;
  uint32_t maxDynamicShared_ = kDefaultDynamicShared;
  DeviceLimits limits_;
  KernelCache cache_;
  std::shared_ptr<CublasLtHandle> cublasLt_; ///< created at the first library GEMM
  std::string cublasLtWhy_;                  ///< why not, when it could not be
  bool cublasLtTried_ = false;
};

} // namespace

Status createCudaDevice(const std::string &spec, const DeviceOptions &options,
                        std::unique_ptr<Device> *out) {
  int ordinal = 0;
  if (spec != "cuda") {
    const std::string digits = spec.substr(5);
    if (digits.empty() || digits.size() > 4 ||
        digits.find_first_not_of("0123456789") != std::string::npos)
      return invalidArgument("device '", spec, "': expected cuda or cuda:N");
    ordinal = std::atoi(digits.c_str());
  }
  const CudaDriver *driver = nullptr;
  DLC_RETURN_IF_ERROR(loadCudaDriver(&driver));
  int count = 0;
  DLC_CU_RETURN_IF_ERROR(*driver, cuDeviceGetCount(&count));
  if (ordinal >= count)
    return unavailable("no CUDA device ", ordinal, ": the driver reports ", count,
                       count == 1 ? " device" : " devices");
  CUdevice device = 0;
  DLC_CU_RETURN_IF_ERROR(*driver, cuDeviceGet(&device, ordinal));
  CUcontext context = nullptr;
  DLC_CU_RETURN_IF_ERROR(*driver, cuDevicePrimaryCtxRetain(&context, device));
  auto d = std::make_unique<CudaDevice>(*driver, device, context, strCat("cuda:", ordinal));
  DLC_CU_RETURN_IF_ERROR(*driver, cuCtxSetCurrent(context));
  DLC_RETURN_IF_ERROR(d->initialize(options));
  *out = std::move(d);
  return okStatus();
}

} // namespace dlc::rt::hal::cuda
