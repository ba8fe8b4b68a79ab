//===- dlc/runtime.hpp - A thin C++ wrapper over dlc/runtime.h --*- C++ -*-===//
//
// Header-only RAII over the C API: Module (shared, copyable) and Session
// (move-only). Errors become dlc::Error exceptions thrown here, in the
// caller's code; no exception ever crosses the C boundary. The ownership and
// threading rules are those of dlc/runtime.h.
//
//   dlc::Module module = dlc::Module::loadFile("mlp.dlcm");
//   dlc::Session session(module, "cpu");
//   session.run({&x}, {&y});   // DLTensor pointers
//
//===----------------------------------------------------------------------===//
#ifndef DLC_RUNTIME_HPP
#define DLC_RUNTIME_HPP

#include "dlc/runtime.h"

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace dlc {

class Error : public std::runtime_error {
public:
  Error(dlc_status_code_t code, const std::string &message)
      : std::runtime_error(message), code_(code) {}
  dlc_status_code_t code() const { return code_; }
  int exitCode() const {
    switch (code_) {
    case DLC_INVALID_ARGUMENT:
    case DLC_INVALID_MODULE:
    case DLC_NOT_FOUND:
      return 2;
    case DLC_UNAVAILABLE:
    case DLC_RESOURCE_EXHAUSTED:
    case DLC_UNIMPLEMENTED:
      return 3;
    default:
      return 70;
    }
  }

private:
  dlc_status_code_t code_;
};

/// Throws dlc::Error for a non-NULL status, freeing it.
inline void check(dlc_status_t status) {
  if (!status)
    return;
  dlc_status_code_t code = dlc_status_code(status);
  std::string message = dlc_status_message(status);
  dlc_status_free(status);
  throw Error(code, message);
}

class Module {
public:
  static Module loadFile(const std::string &path) {
    dlc_module_t *m = nullptr;
    check(dlc_module_load_file(path.c_str(), &m));
    return Module(m);
  }
  static Module loadMemory(const void *data, size_t size) {
    dlc_module_t *m = nullptr;
    check(dlc_module_load_memory(data, size, &m));
    return Module(m);
  }

  Module(const Module &other) : module_(other.module_) { dlc_module_retain(module_); }
  Module(Module &&other) noexcept : module_(std::exchange(other.module_, nullptr)) {}
  Module &operator=(Module other) noexcept {
    std::swap(module_, other.module_);
    return *this;
  }
  ~Module() { dlc_module_release(module_); }

  dlc_module_t *get() const { return module_; }
  std::string name() const { return dlc_module_name(module_); }
  size_t inputCount() const { return dlc_module_input_count(module_); }
  size_t outputCount() const { return dlc_module_output_count(module_); }
  dlc_tensor_info_t input(size_t i) const {
    dlc_tensor_info_t info;
    check(dlc_module_input_info(module_, i, &info));
    return info;
  }
  dlc_tensor_info_t output(size_t i) const {
    dlc_tensor_info_t info;
    check(dlc_module_output_info(module_, i, &info));
    return info;
  }

  /// A dimension each run chooses (module format 1.3; dlc/runtime.h).
  struct DynamicDim {
    std::string name;
    int64_t min = 1, max = 1;
  };
  size_t dynamicDimCount() const { return dlc_module_dynamic_dim_count(module_); }
  DynamicDim dynamicDim(size_t i) const {
    const char *name = nullptr;
    DynamicDim d;
    check(dlc_module_dynamic_dim_info(module_, i, &name, &d.min, &d.max));
    d.name = name;
    return d;
  }
  /// The dynamic dimension input (output) i grows with, or -1.
  int32_t inputDynamicDim(size_t i) const { return dlc_module_input_dynamic_dim(module_, i); }
  int32_t outputDynamicDim(size_t i) const { return dlc_module_output_dynamic_dim(module_, i); }

private:
  explicit Module(dlc_module_t *m) : module_(m) {}
  dlc_module_t *module_;
};

class Session {
public:
  Session(const Module &module, const std::string &device, uint32_t numThreads = 0) {
    dlc_session_options_t options;
    dlc_session_options_init(&options);
    options.num_threads = numThreads;
    check(dlc_session_create(module.get(), device.c_str(), &options, &session_));
  }
  Session(Session &&other) noexcept : session_(std::exchange(other.session_, nullptr)) {}
  Session &operator=(Session &&other) noexcept {
    std::swap(session_, other.session_);
    return *this;
  }
  Session(const Session &) = delete;
  Session &operator=(const Session &) = delete;
  ~Session() { dlc_session_destroy(session_); }

  dlc_session_t *get() const { return session_; }

  void run(const std::vector<const DLTensor *> &inputs,
           const std::vector<const DLTensor *> &outputs) {
    check(dlc_session_run(session_, inputs.data(), inputs.size(), outputs.data(),
                          outputs.size()));
  }

private:
  dlc_session_t *session_ = nullptr;
};

} // namespace dlc

#endif // DLC_RUNTIME_HPP
