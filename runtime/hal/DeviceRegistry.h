//===- DeviceRegistry.h - Device names to implementations -------*- C++ -*-===//
#pragma once

#include "runtime/hal/Device.h"

namespace dlc::rt::hal {

/// Creates the device a string names: "cpu"; "cuda", "cuda:N" and
/// "cuda-emu" are UNAVAILABLE in this build; anything else INVALID_ARGUMENT.
Status createDevice(const std::string &spec, const DeviceOptions &options,
                    std::unique_ptr<Device> *out);

} // namespace dlc::rt::hal
