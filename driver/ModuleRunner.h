//===- ModuleRunner.h - running a .dlcm through the runtime's API -*- C++ -*-===//
//
// `dlc run` on a compiled module: load it (from a file, or from the bytes
// `dlc run M.dlg` just compiled in memory) with the runtime's C API, the
// same way any embedder does, create a session on a device and run it on
// oracle tensors converted to and from the signature's dtypes.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_DRIVER_MODULERUNNER_H
#define DLC_DRIVER_MODULERUNNER_H

#include "driver/ExitCodes.h"
#include "oracle/kernels/Tensor.h"

#include <dlpack/dlpack.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dlc {

struct ModuleTensorInfo {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
  /// Dimension 0 grows with the module's dynamic dimension (format 1.3).
  bool dynamic = false;
};

class LoadedModule {
public:
  /// Loads and verifies; on failure `error` is set and the code returned.
  static ExitCode fromFile(const std::string &path, LoadedModule &out,
                           std::string &error);
  static ExitCode fromMemory(const std::vector<uint8_t> &bytes,
                             LoadedModule &out, std::string &error);
  LoadedModule() = default;
  LoadedModule(LoadedModule &&other) noexcept;
  LoadedModule &operator=(LoadedModule &&other) noexcept;
  ~LoadedModule();

  /// The module's name ("" when it has none).
  std::string name() const;
  /// The signature at the size of the dynamic dimension later runs use.
  std::vector<ModuleTensorInfo> inputs() const;
  std::vector<ModuleTensorInfo> outputs() const;
  /// A module compiled for a range of one dimension (`dlc compile --dim
  /// N=1..64`, module format 1.3): its name and range.
  struct DynamicDim {
    std::string name;
    int64_t min = 1, max = 1;
  };
  std::optional<DynamicDim> dynamicDim() const;
  /// The size of the dynamic dimension later runs use (its largest until
  /// set): inputs() and outputs() give the shapes at it.
  void setDynamicExtent(int64_t n) { dynamicExtent = n; }

  /// Runs once on `device` with inputs in signature order.
  ExitCode run(const std::string &device,
               const std::vector<oracle::Tensor> &inputs,
               std::vector<oracle::Tensor> &outputs, std::string &error) const;
  /// The same on tensors already in their dtypes' bytes (no conversion).
  ExitCode run(const std::string &device, const std::vector<HostTensor> &inputs,
               std::vector<HostTensor> &outputs, std::string &error) const;

  /// The rank of the mesh the last run's session ran (0 for a module
  /// without a mesh): a partitioned module's outputs are whole on every
  /// rank, and rank 0 reports them.
  int rank() const;

  /// Times every kernel launch of later runs (host devices: cpu,
  /// cuda-emu), for profiles and the cost model's calibration: the current
  /// session's from now on, and every later session's. False (with
  /// `error`) on a device that does not time its kernels.
  bool enableKernelTiming(std::string *error = nullptr);
  struct KernelTime {
    std::string name;
    uint64_t calls = 0;
    double seconds = 0;
  };
  /// The timed kernels of the current session, in the order of first
  /// launch (empty without timing or a run).
  std::vector<KernelTime> kernelTimes() const;
  /// The timed launches in order: kernelTimes()'s index, start and end
  /// (steady clock, nanoseconds).
  struct KernelEvent {
    uint32_t kernel;
    int64_t startNs, endNs;
  };
  std::vector<KernelEvent> kernelEvents() const;
  /// The current session's arena, weight and state bytes.
  struct Memory {
    uint64_t arena = 0, weights = 0, state = 0;
  };
  Memory memory() const;

  /// Repeated runs on the same tensors (bench, profile): binds `inputs`
  /// and `outputs` (sized here) once, so that runPrepared() allocates
  /// nothing and converts nothing. The tensors must outlive the runs.
  ExitCode prepare(const std::string &device, const std::vector<HostTensor> &inputs,
                   std::vector<HostTensor> &outputs, std::string &error);
  ExitCode runPrepared(std::string &error) const;

private:
  /// The session on `device`, created (and timed, if asked) when needed.
  ExitCode sessionOn(const std::string &device, std::string &error) const;

  bool timeKernels = false;
  int64_t dynamicExtent = 0; ///< 0: the dimension's largest size
  std::vector<DLTensor> prepared;
  std::vector<std::vector<int64_t>> preparedShapes;
  std::vector<const DLTensor *> preparedInputs, preparedOutputs;
  void *module = nullptr; ///< dlc_module_t
  /// dlc_session_t of the last run's device, reused by the next run there.
  mutable void *session = nullptr;
  mutable std::string sessionDevice;
};

} // namespace dlc

#endif // DLC_DRIVER_MODULERUNNER_H
