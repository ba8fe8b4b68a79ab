//===- Optimizers.h - the update a train step ends with ---------*- C++ -*-===//
//
// What dlc-differentiate appends after the gradients: global-norm clipping
// and the optimizer's update of each parameter and its moments, as plain
// element-wise dlc ops (fusion makes one in-place kernel per parameter).
// The formulas are PyTorch's (torch.optim.SGD, Adam, AdamW), so a model
// trains as it would there.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_PASSES_AUTODIFF_OPTIMIZERS_H
#define DLC_PASSES_AUTODIFF_OPTIMIZERS_H

#include "ir/Vjp.h"

#include "mlir/IR/BuiltinAttributes.h"

#include <string>

namespace dlc {

struct OptimizerConfig {
  std::string kind = "adam"; ///< adam, adamw or sgd
  double lr = 1e-3, beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
  double weightDecay = 0, momentum = 0, clipNorm = 0;
  bool nesterov = false;

  /// Reads the `dlc.optimizer` dictionary (frontend/text/TrainGraph.cpp
  /// writes it); an error at `op` for an unknown kind.
  static mlir::FailureOr<OptimizerConfig> read(mlir::DictionaryAttr dict,
                                               mlir::Operation *op);
  /// The state each parameter needs besides itself, as name suffixes:
  /// `m`, `v` (Adam), `momentum` (SGD with momentum).
  llvm::SmallVector<std::string> momentNames() const;
};

/// The sum of every element of `x`, as an f32 scalar.
mlir::Value sumToF32(VjpBuilder &b, mlir::Value x);

/// Scales every gradient by min(1, clipNorm / (‖g‖₂ + 1e-6)), ‖g‖₂ over all
/// of them together (torch.nn.utils.clip_grad_norm_).
void clipByGlobalNorm(VjpBuilder &b, llvm::MutableArrayRef<mlir::Value> grads,
                      double clipNorm);

/// Scalars every parameter's update shares: the learning rate of this step
/// and the Adam bias corrections 1 - β^t of step t.
struct UpdateScalars {
  mlir::Value lr, biasCorrection1, biasCorrection2;
};
UpdateScalars buildUpdateScalars(VjpBuilder &b, const OptimizerConfig &config,
                                 mlir::Value lr, mlir::Value step);

/// The new value of `param` and of its `moments` (in momentNames order)
/// after one step with gradient `grad`.
llvm::SmallVector<mlir::Value>
buildUpdate(VjpBuilder &b, const OptimizerConfig &config,
            const UpdateScalars &scalars, mlir::Value param, mlir::Value grad,
            llvm::ArrayRef<mlir::Value> moments);

} // namespace dlc

#endif // DLC_PASSES_AUTODIFF_OPTIMIZERS_H
