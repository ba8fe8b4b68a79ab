//===- DeviceRegistry.cpp - Device names to implementations ---------------===//

#include "runtime/hal/DeviceRegistry.h"

#include "runtime/hal/cpu/CpuDevice.h"

namespace dlc::rt::hal {

Status createDevice(const std::string &spec, const DeviceOptions &options,
                    std::unique_ptr<Device> *out) {
  if (spec == "cpu")
    return cpu::createCpuDevice(options, out);
  if (spec == "cuda" || spec.rfind("cuda:", 0) == 0)
    return unavailable("device '", spec,
                       "' is not available: this runtime has no CUDA backend yet");
  if (spec == "cuda-emu")
    return unavailable("device 'cuda-emu' is not available: this runtime has no CUDA "
                       "emulation backend yet");
  return invalidArgument("unknown device '", spec, "' (expected cpu, cuda:N or cuda-emu)");
}

} // namespace dlc::rt::hal
