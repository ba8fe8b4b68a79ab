//===- DeviceRegistry.h - Device names to implementations -------*- C++ -*-===//
#pragma once

#include "runtime/hal/Device.h"

namespace dlc::rt::hal {

/// Creates the device a string names: "cpu"; "cuda" (= "cuda:0") and
/// "cuda:N", UNAVAILABLE with "no CUDA driver: ..." or "no CUDA device ..."
/// on a machine without them; "cuda-emu"; anything else INVALID_ARGUMENT.
Status createDevice(const std::string &spec, const DeviceOptions &options,
                    std::unique_ptr<Device> *out);

} // namespace dlc::rt::hal
