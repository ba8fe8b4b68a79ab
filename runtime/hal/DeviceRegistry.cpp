//===- DeviceRegistry.cpp - Device names to implementations ---------------===//

#include "runtime/hal/DeviceRegistry.h"

#include "runtime/hal/cpu/CpuDevice.h"
#include "runtime/hal/cuda/CudaDevice.h"
#include "runtime/hal/cuda_emu/CudaEmuDevice.h"

namespace dlc::rt::hal {

Status createDevice(const std::string &spec, const DeviceOptions &options,
                    std::unique_ptr<Device> *out) {
  if (spec == "cpu")
    return cpu::createCpuDevice(options, out);
  if (spec == "cuda-emu")
    return cuda_emu::createCudaEmuDevice(options, out);
  if (spec == "cuda" || spec.rfind("cuda:", 0) == 0)
    return cuda::createCudaDevice(spec, options, out);
  return invalidArgument("unknown device '", spec, "' (expected cpu, cuda, cuda:N or cuda-emu)");
}

} // namespace dlc::rt::hal
