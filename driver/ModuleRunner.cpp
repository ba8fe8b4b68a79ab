//===- ModuleRunner.cpp - running a .dlcm through the runtime's API -------===//

#include "driver/ModuleRunner.h"

#include "dlc/runtime.h"

#include <cstring>
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
    : module(std::exchange(other.module, nullptr)),
      session(std::exchange(other.session, nullptr)),
      sessionDevice(std::move(other.sessionDevice)) {}
LoadedModule &LoadedModule::operator=(LoadedModule &&other) noexcept {
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

static std::vector<ModuleTensorInfo> infos(dlc_module_t *m, bool outputs) {
  std::vector<ModuleTensorInfo> result;
  size_t n = outputs ? dlc_module_output_count(m) : dlc_module_input_count(m);
  for (size_t i = 0; i < n; ++i) {
    dlc_tensor_info_t info;
    dlc_status_t s = outputs ? dlc_module_output_info(m, i, &info)
                             : dlc_module_input_info(m, i, &info);
    dlc_status_free(s);
    result.push_back({info.name, dtypeOf(info.dtype),
                      std::vector<int64_t>(info.shape, info.shape + info.ndim)});
  }
  return result;
}

std::vector<ModuleTensorInfo> LoadedModule::inputs() const {
  return infos(handle(module), false);
}
std::vector<ModuleTensorInfo> LoadedModule::outputs() const {
  return infos(handle(module), true);
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

ExitCode LoadedModule::run(const std::string &device, const std::vector<HostTensor> &inputs,
                           std::vector<HostTensor> &outputs, std::string &error) const {
  dlc_module_t *m = handle(module);
  // One session per device, kept for later runs: a session starts a thread
  // pool and loads the weights, which a caller running the module once per
  // step (the SPMD segments of driver/SpmdRunner) must not pay each time.
  if (session && sessionDevice != device) {
    dlc_session_destroy(static_cast<dlc_session_t *>(session));
    session = nullptr;
  }
  if (!session) {
    dlc_session_t *created = nullptr;
    if (dlc_status_t s = dlc_session_create(m, device.c_str(), nullptr, &created))
      return takeStatus(s, error);
    session = created;
    sessionDevice = device;
    if (timeKernels)
      if (dlc_status_t s = dlc_session_enable_kernel_timing(created))
        return takeStatus(s, error);
  }
  std::vector<ModuleTensorInfo> outInfo = this->outputs();
  size_t numIn = dlc_module_input_count(m), numOut = outInfo.size();
  if (inputs.size() != numIn) {
    error = "the module takes " + std::to_string(numIn) + " inputs, " +
            std::to_string(inputs.size()) + " were given";
    return kExitBadInput;
  }
  outputs.clear();
  for (size_t i = 0; i < numOut; ++i)
    outputs.emplace_back(outInfo[i].dtype, outInfo[i].shape);
  std::vector<DLTensor> tensors;
  tensors.reserve(numIn + numOut);
  auto describe = [&](const dlc_tensor_info_t &info, void *data) {
    DLTensor t{};
    t.data = data;
    t.device = {kDLCPU, 0};
    t.ndim = info.ndim;
    t.dtype = info.dtype;
    t.shape = const_cast<int64_t *>(info.shape);
    return t;
  };
  for (size_t i = 0; i < numIn; ++i) {
    dlc_tensor_info_t info;
    dlc_status_free(dlc_module_input_info(m, i, &info));
    tensors.push_back(describe(info, const_cast<uint8_t *>(inputs[i].data())));
  }
  for (size_t i = 0; i < numOut; ++i) {
    dlc_tensor_info_t info;
    dlc_status_free(dlc_module_output_info(m, i, &info));
    tensors.push_back(describe(info, outputs[i].mutableData()));
  }
  std::vector<const DLTensor *> in, out;
  for (size_t i = 0; i < numIn; ++i)
    in.push_back(&tensors[i]);
  for (size_t i = 0; i < numOut; ++i)
    out.push_back(&tensors[numIn + i]);
  if (dlc_status_t s = dlc_session_run(static_cast<dlc_session_t *>(session), in.data(),
                                       in.size(), out.data(), out.size()))
    return takeStatus(s, error);
  return kExitSuccess;
}
