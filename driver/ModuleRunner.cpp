//===- ModuleRunner.cpp - running a .dlcm through the runtime's API -------===//

#include "driver/ModuleRunner.h"

#include "dlc/runtime.h"
#include "runtime/base/Memory.h"

#include <cstring>
#include <optional>
#include <utility>

using namespace dlc;

static dlc_module_t *handle(void *m) { return static_cast<dlc_module_t *>(m); }

/// The status's message and exit code; frees it.
static ExitCode takeStatus(dlc_status_t status, std::string &error) {
  error = dlc_status_message(status);
  int code = dlc_status_exit_code(status);
  dlc_status_free(status);
  return static_cast<ExitCode>(code);
}

ExitCode LoadedModule::fromFile(const std::string &path, LoadedModule &out,
                                std::string &error) {
  dlc_module_t *m = nullptr;
  if (dlc_status_t s = dlc_module_load_file(path.c_str(), &m))
    return takeStatus(s, error);
  out.module = m;
  return kExitSuccess;
}

ExitCode LoadedModule::fromMemory(const std::vector<uint8_t> &bytes,
                                  LoadedModule &out, std::string &error) {
  dlc_module_t *m = nullptr;
  if (dlc_status_t s = dlc_module_load_memory(bytes.data(), bytes.size(), &m))
    return takeStatus(s, error);
  out.module = m;
  return kExitSuccess;
}

LoadedModule::LoadedModule(LoadedModule &&other) noexcept
    : timeKernels(other.timeKernels), prepared(std::move(other.prepared)),
      preparedInputs(std::move(other.preparedInputs)),
      preparedOutputs(std::move(other.preparedOutputs)),
      module(std::exchange(other.module, nullptr)),
      session(std::exchange(other.session, nullptr)),
      sessionDevice(std::move(other.sessionDevice)) {}
LoadedModule &LoadedModule::operator=(LoadedModule &&other) noexcept {
  std::swap(timeKernels, other.timeKernels);
  std::swap(prepared, other.prepared);
  std::swap(preparedInputs, other.preparedInputs);
  std::swap(preparedOutputs, other.preparedOutputs);
  std::swap(module, other.module);
  std::swap(session, other.session);
  std::swap(sessionDevice, other.sessionDevice);
  return *this;
}
LoadedModule::~LoadedModule() {
  dlc_session_destroy(static_cast<dlc_session_t *>(session));
  dlc_module_release(handle(module));
}

static DType dtypeOf(DLDataType t) {
  if (t.code == kDLFloat)
    return t.bits == 64 ? DType::F64
           : t.bits == 32 ? DType::F32
                          : DType::F16;
  if (t.code == kDLBfloat)
    return DType::BF16;
  if (t.code == kDLInt)
    return t.bits == 64 ? DType::I64 : t.bits == 32 ? DType::I32 : DType::I8;
  if (t.code == kDLUInt)
    return DType::U8;
  return DType::I1;
}

/// The module's inputs or outputs, a dynamic tensor's outermost dimension
/// at `extent` of its dynamic dimension (0: the largest).
static std::vector<ModuleTensorInfo> infos(dlc_module_t *m, bool outputs, int64_t extent) {
  std::vector<ModuleTensorInfo> result;
  int64_t max = 0;
  if (dlc_module_dynamic_dim_count(m) > 0)
    dlc_status_free(dlc_module_dynamic_dim_info(m, 0, nullptr, nullptr, &max));
  size_t n = outputs ? dlc_module_output_count(m) : dlc_module_input_count(m);
  for (size_t i = 0; i < n; ++i) {
    dlc_tensor_info_t info;
    dlc_status_t s = outputs ? dlc_module_output_info(m, i, &info)
                             : dlc_module_input_info(m, i, &info);
    dlc_status_free(s);
    result.push_back({info.name, dtypeOf(info.dtype),
                      std::vector<int64_t>(info.shape, info.shape + info.ndim)});
    ModuleTensorInfo &t = result.back();
    t.dynamic = max > 0 && !t.shape.empty() &&
                (outputs ? dlc_module_output_dynamic_dim(m, i) : dlc_module_input_dynamic_dim(m, i)) >= 0;
    if (t.dynamic && extent > 0)
      t.shape[0] = t.shape[0] / max * extent;
  }
  return result;
}

std::string LoadedModule::name() const { return dlc_module_name(handle(module)); }

std::vector<ModuleTensorInfo> LoadedModule::inputs() const {
  return infos(handle(module), false, dynamicExtent);
}
std::vector<ModuleTensorInfo> LoadedModule::outputs() const {
  return infos(handle(module), true, dynamicExtent);
}

std::optional<LoadedModule::DynamicDim> LoadedModule::dynamicDim() const {
  if (dlc_module_dynamic_dim_count(handle(module)) == 0)
    return std::nullopt;
  const char *name = nullptr;
  DynamicDim d;
  dlc_status_free(dlc_module_dynamic_dim_info(handle(module), 0, &name, &d.min, &d.max));
  d.name = name ? name : "";
  return d;
}

ExitCode LoadedModule::run(const std::string &device,
                           const std::vector<oracle::Tensor> &inputs,
                           std::vector<oracle::Tensor> &outputs,
                           std::string &error) const {
  std::vector<HostTensor> in, out;
  for (const oracle::Tensor &t : inputs)
    in.push_back(t.toHost());
  if (ExitCode c = run(device, in, out, error))
    return c;
  outputs.clear();
  for (const HostTensor &t : out)
    outputs.push_back(oracle::Tensor::fromHost(t));
  return kExitSuccess;
}

int LoadedModule::rank() const {
  int32_t rank = 0;
  if (session)
    dlc_status_free(dlc_session_rank(static_cast<dlc_session_t *>(session), &rank, nullptr));
  return rank;
}

std::vector<LoadedModule::KernelTime> LoadedModule::kernelTimes() const {
  std::vector<KernelTime> times;
  size_t count = 0;
  auto *s = static_cast<dlc_session_t *>(session);
  if (!s)
    return times;
  if (dlc_status_t status = dlc_session_kernel_count(s, &count)) {
    dlc_status_free(status);
    return times;
  }
  for (size_t i = 0; i < count; ++i) {
    const char *name = nullptr;
    KernelTime t;
    if (dlc_status_t status = dlc_session_kernel_time(s, i, &name, &t.calls, &t.seconds)) {
      dlc_status_free(status);
      break;
    }
    t.name = name ? name : "";
    times.push_back(std::move(t));
  }
  return times;
}

bool LoadedModule::enableKernelTiming(std::string *error) {
  timeKernels = true;
  if (!session)
    return true;
  if (dlc_status_t s = dlc_session_enable_kernel_timing(static_cast<dlc_session_t *>(session))) {
    std::string message;
    takeStatus(s, message);
    if (error)
      *error = message;
    return false;
  }
  return true;
}

std::vector<LoadedModule::KernelEvent> LoadedModule::kernelEvents() const {
  std::vector<KernelEvent> result;
  const dlc_kernel_event_t *events = nullptr;
  size_t count = 0;
  if (!session)
    return result;
  if (dlc_status_t s =
          dlc_session_kernel_events(static_cast<dlc_session_t *>(session), &events, &count)) {
    dlc_status_free(s);
    return result;
  }
  for (size_t i = 0; i < count; ++i)
    result.push_back({events[i].kernel, events[i].start_ns, events[i].end_ns});
  return result;
}

LoadedModule::Memory LoadedModule::memory() const {
  Memory m;
  if (session)
    dlc_status_free(dlc_session_memory(static_cast<dlc_session_t *>(session), &m.arena,
                                       &m.weights, &m.state));
  return m;
}

ExitCode LoadedModule::sessionOn(const std::string &device, std::string &error) const {
  // One session per device, kept for later runs: a session starts a thread
  // pool and loads the weights, which a caller running the module once per
  // step (the SPMD segments of driver/SpmdRunner) must not pay each time.
  if (session && sessionDevice != device) {
    dlc_session_destroy(static_cast<dlc_session_t *>(session));
    session = nullptr;
  }
  if (session)
    return kExitSuccess;
  dlc_session_t *created = nullptr;
  if (dlc_status_t s = dlc_session_create(handle(module), device.c_str(), nullptr, &created))
    return takeStatus(s, error);
  session = created;
  sessionDevice = device;
  if (timeKernels)
    if (dlc_status_t s = dlc_session_enable_kernel_timing(created))
      return takeStatus(s, error);
  return kExitSuccess;
}

/// The DLTensors of a module's inputs then outputs, over `inputs` and
/// `outputs` (sized here from the signature at `extent` of its dynamic
/// dimension); `shapes` holds the shapes they point to.
static ExitCode describeTensors(dlc_module_t *m, int64_t extent,
                                const std::vector<HostTensor> &inputs,
                                std::vector<HostTensor> &outputs, std::vector<DLTensor> &tensors,
                                std::vector<std::vector<int64_t>> &shapes, std::string &error) {
  std::vector<ModuleTensorInfo> in = infos(m, false, extent), out = infos(m, true, extent);
  if (inputs.size() != in.size()) {
    error = "the module takes " + std::to_string(in.size()) + " inputs, " +
            std::to_string(inputs.size()) + " were given";
    return kExitBadInput;
  }
  shapes.clear();
  for (const ModuleTensorInfo &t : in)
    shapes.push_back(t.shape);
  for (const ModuleTensorInfo &t : out)
    shapes.push_back(t.shape);
  auto info = [&](size_t k) {
    dlc_tensor_info_t i;
    dlc_status_free(k < in.size() ? dlc_module_input_info(m, k, &i)
                                  : dlc_module_output_info(m, k - in.size(), &i));
    return i;
  };
  auto describe = [&](size_t k, void *data) {
    DLTensor t{};
    t.data = data;
    t.device = {kDLCPU, 0};
    t.ndim = static_cast<int32_t>(shapes[k].size());
    t.dtype = info(k).dtype;
    t.shape = shapes[k].data();
    return t;
  };
  // An output the process cannot hold is refused by name before anything
  // is allocated (a failed allocation would end dlc with no name). Asking
  // the kernel (/proc/meminfo) costs tens of microseconds, which a caller
  // running a small module every step (the SPMD segments) must not pay:
  // only outputs of 64 MiB and more are checked; a smaller one that cannot
  // be met ends dlc through the new-handler's out-of-memory message.
  constexpr uint64_t kCheckedOutputBytes = uint64_t(64) << 20;
  std::optional<rt::AvailableMemory> availableOnce;
  for (size_t o = 0; o < out.size(); ++o) {
    dlc_tensor_info_t i = info(in.size() + o);
    uint64_t bytes = (i.dtype.bits + 7) / 8;
    for (int64_t d : out[o].shape)
      bytes *= static_cast<uint64_t>(d);
    if (bytes < kCheckedOutputBytes)
      continue;
    if (!availableOnce)
      availableOnce = rt::availableMemory();
    const rt::AvailableMemory &available = *availableOnce;
    if (!available.source.empty() && bytes > available.bytes) {
      error = "out of memory: output '" + out[o].name + "' needs " + std::to_string(bytes) +
              " bytes, " + std::to_string(available.bytes) + " bytes available (" +
              available.source + ")";
      return kExitRuntimeFault;
    }
  }
  outputs.clear();
  for (const ModuleTensorInfo &t : out)
    outputs.emplace_back(t.dtype, t.shape);
  tensors.clear();
  tensors.reserve(in.size() + out.size());
  for (size_t i = 0; i < in.size(); ++i)
    tensors.push_back(describe(i, const_cast<uint8_t *>(inputs[i].data())));
  for (size_t o = 0; o < out.size(); ++o)
    tensors.push_back(describe(in.size() + o, outputs[o].mutableData()));
  return kExitSuccess;
}

ExitCode LoadedModule::run(const std::string &device, const std::vector<HostTensor> &inputs,
                           std::vector<HostTensor> &outputs, std::string &error) const {
  if (ExitCode c = sessionOn(device, error))
    return c;
  std::vector<DLTensor> tensors;
  std::vector<std::vector<int64_t>> shapes;
  if (ExitCode c = describeTensors(handle(module), dynamicExtent, inputs, outputs, tensors, shapes,
                                   error))
    return c;
  std::vector<const DLTensor *> in, out;
  for (size_t i = 0; i < tensors.size(); ++i)
    (i < inputs.size() ? in : out).push_back(&tensors[i]);
  if (dlc_status_t s = dlc_session_run(static_cast<dlc_session_t *>(session), in.data(),
                                       in.size(), out.data(), out.size()))
    return takeStatus(s, error);
  return kExitSuccess;
}

ExitCode LoadedModule::prepare(const std::string &device, const std::vector<HostTensor> &inputs,
                               std::vector<HostTensor> &outputs, std::string &error) {
  if (ExitCode c = sessionOn(device, error))
    return c;
  if (ExitCode c = describeTensors(handle(module), dynamicExtent, inputs, outputs, prepared,
                                   preparedShapes, error))
    return c;
  preparedInputs.clear();
  preparedOutputs.clear();
  for (size_t i = 0; i < prepared.size(); ++i)
    (i < inputs.size() ? preparedInputs : preparedOutputs).push_back(&prepared[i]);
  return kExitSuccess;
}

ExitCode LoadedModule::runPrepared(std::string &error) const {
  if (dlc_status_t s = dlc_session_run(static_cast<dlc_session_t *>(session),
                                       preparedInputs.data(), preparedInputs.size(),
                                       preparedOutputs.data(), preparedOutputs.size()))
    return takeStatus(s, error);
  return kExitSuccess;
}
