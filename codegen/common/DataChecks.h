//===- DataChecks.h - the checks kernels make on their data -----*- C++ -*-===//
//
// The kernels' error channel (module format 1.2, module.fbs Check): where
// the oracle stops with an error in the data (a gather index or embedding
// id out of range, a cross_entropy label outside [0, C), an integer
// division by zero, a negative integer exponent), a kernel checks the same
// condition, one compare per index read, and reports the first failure
// through the session's status words instead of clamping: it then uses 0
// in place of the bad value, so that it never reads out of bounds.
//
// The emitters register each check as they emit it (`add` returns the C
// arguments naming it to the prelude's dlc_check_* functions); a kernel
// that made any takes the status words as its last argument (kCheckName
// says how its body names them). The backend writes the checks into the module
// (Module.checks, in the order added) and binds the argument.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_CODEGEN_COMMON_DATACHECKS_H
#define DLC_CODEGEN_COMMON_DATACHECKS_H

#include "runtime/format/ModuleWriter.h"

#include "mlir/IR/Operation.h"

#include <string>
#include <vector>

namespace dlc::codegen {

class DataChecks {
public:
  /// How `add` numbers a check in the arguments it returns: by its index
  /// in the module (CUDA: the kernel stores it in the status words), or
  /// from 0 in each kernel (CPU: the kernel adds the base it is called
  /// with, so that kernels of identical text share one compiled body).
  enum class Numbering { InModule, InKernel };
  explicit DataChecks(Numbering numbering = Numbering::InModule) : numbering(numbering) {}

  /// What the prelude's dlc_check_* functions take inside a kernel that
  /// checks: on CUDA the status words (int64_t *), on the CPU the call's
  /// local DlcCheck, which the kernel reports to the status words at its
  /// end.
  static constexpr const char *kCheckName = "dlc_check";

  /// Later checks belong to module kernel `kernel`.
  void beginKernel(uint32_t kernel) { current = kernel; }
  /// Registers a check of the current kernel by `op` (once: an op read in
  /// several loops of a kernel has one check); returns the arguments that
  /// name it to the prelude's dlc_check_* functions ("dlc_check, <index>").
  std::string add(fb::CheckKind kind, mlir::Operation *op, int64_t bound = 0,
                  int64_t axis = 0);
  /// Whether kernel `kernel` registered any check.
  bool checks(uint32_t kernel) const;
  /// The module index of kernel `kernel`'s first check (with
  /// Numbering::InKernel, what its local numbers are added to); 0 when it
  /// has none.
  uint32_t firstCheck(uint32_t kernel) const;
  /// Adds every check to `writer`, in the order registered.
  void write(format::ModuleWriter &writer) const;

private:
  Numbering numbering;
  uint32_t current = 0;
  std::vector<format::CheckDesc> all;
  std::vector<mlir::Operation *> ops; ///< per check
};

/// Where `op` came from, as the oracle's diagnostics print it
/// ("model.dlg:3:7", an ONNX node's name), or "".
std::string sourceLocation(mlir::Operation *op);

} // namespace dlc::codegen

#endif // DLC_CODEGEN_COMMON_DATACHECKS_H
