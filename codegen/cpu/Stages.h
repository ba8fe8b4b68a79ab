//===- Stages.h - the CPU emitters of the stage ops, by family --*- C++ -*-===//
//
// A stage computes its result for the kernel's rows [begin, end) into a
// buffer of exactly those rows (Buffer::base is the flat index of its first
// element), reading its operands from contiguous buffers the kernel
// emitter provides (an argument, another stage's rows, or a packed copy of
// an elemental value). Contraction.cpp: matmul, conv2d (dlc_sgemm/dlc_dgemm:
// oneDNN for f32, OpenBLAS for f64; loops accumulating in double otherwise); Pooling.cpp: max and
// average pools; Reduction.cpp: reductions, softmax, norms, losses.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_CODEGEN_CPU_STAGES_H
#define DLC_CODEGEN_CPU_STAGES_H

#include "codegen/common/CodeWriter.h"
#include "codegen/common/Elemental.h"
#include "codegen/common/KernelAnalysis.h"
#include "codegen/common/MaskedKeys.h"
#include "codegen/cpu/CpuTarget.h"

#include <functional>
#include <optional>

namespace dlc::codegen {

/// The element-wise tail of a kernel whose last stage is a convolution,
/// which dlc_conv_packed can apply as it stores (DlcConvEpilogue): the
/// kernel's one result is relu?(conv + residual?), the residual a kernel
/// argument of the result's shape.
struct ConvEpilogue {
  Buffer result;
  std::optional<Buffer> residual;
  bool relu = false;
  /// Set by the convolution's emitter when it opened `if
  /// (!dlc_conv_packed(..., epilogue))` around its other paths: the kernel
  /// emitter closes that block after the result loops, which run only
  /// where the packed kernel did not.
  bool taken = false;
};

struct StageContext {
  const CpuTarget &target;
  CodeWriter &out;
  const KernelAnalysis &analysis;
  /// A contiguous buffer holding (at least this call's rows of) `operand`.
  std::function<Buffer(mlir::Value)> operand;
  /// The same for a rank-4 operand of which the stage reads only the rows
  /// [first, last) (C expressions) of its two leading dims taken as one
  /// (the channels-last input rows a convolution's call reads): an
  /// elemental value is packed for those rows only, not whole by every
  /// call.
  std::function<Buffer(mlir::Value, const std::string &, const std::string &)> operandRows;
  /// The stage's result, this call's rows.
  Buffer result;
  /// The C expression of element `index` of an element-wise `value`,
  /// computed where the caller is: its temporaries are declared at the
  /// current line (valid to the end of the enclosing block).
  std::function<std::string(mlir::Value, const Index &)> elementAt;
  /// Set when the stage calls dlc_sgemm/dlc_dgemm (oneDNN, OpenBLAS).
  bool usesBlas = false;
  /// Set when the stage calls dlc_conv_dnnl (oneDNN's convolution).
  bool usesDnnlConv = false;
  /// True for a kernel operand that is a module weight (KernelView::
  /// constantArgs): immutable, at one address while the module runs.
  std::function<bool(mlir::Value)> isConstant;
  /// Where a stage registers the checks it makes on its data (labels).
  DataChecks *checks = nullptr;
  /// The kernel's top-level op (what a failed scratch allocation names).
  mlir::Operation *kernelOp = nullptr;
  /// The last stage's element-wise tail, where it is one a convolution can
  /// apply (ConvEpilogue).
  ConvEpilogue *epilogue = nullptr;
  /// Set for a convolution whose kernel splits its calls over slices of
  /// the output channels too (convChannelSlices): the call computes the
  /// panels [dlc_panel0, dlc_panel1) of rows [begin, end) of slice
  /// dlc_slice, and only slice 0's calls fall back to oneDNN (all channels).
  bool channelSliced = false;
  /// Set for the stages of masked attention (MaskedAttention.h): per tile
  /// of their rows, the keys [begin, end) to compute, as columns of the
  /// result (q·kᵀ: `keyColumns`), as the k of the sum (p·v) or as the
  /// softmax's terms.
  const KeyTiles *keyTiles = nullptr;
  bool keyColumns = false;

  /// The first and one-past-last row of the stage's own row space, where
  /// the stage has `unitRows` rows (e.g. batch x M for a matmul) and the
  /// kernel `analysis.rows`.
  std::string rowsBegin(int64_t unitRows) const;
  std::string rowsEnd(int64_t unitRows) const;
};

/// `ptr + (flat - base)`: the address of element `flat` of a buffer.
std::string addressOf(const Buffer &buffer, const std::string &flat);
/// The element `flat` of a buffer as its compute type.
std::string loadAt(const CTarget &target, const Buffer &buffer,
                   const std::string &flat);
/// A C expression of `value` (double) stored into element `flat`.
std::string storeAt(const CTarget &target, const Buffer &buffer,
                    const std::string &flat, const std::string &value);

/// After `DlcScratch <memory>(...)`: when the allocation failed, the
/// kernel reports check `check` (DataChecks::add's scratch_memory check,
/// the bytes asked for as its value) and returns.
void guardScratch(CodeWriter &out, const std::string &check, const std::string &memory);

/// Opens the loops over a window's rows `kh` and columns `kw` at output
/// position (`oh`, `ow`), skipping the positions outside the H x W image;
/// `ih` and `iw` are the input position. The caller closes two loops.
struct Window {
  int64_t KH, KW, sh, sw, pt, pl, dh, dw, H, W;
};
void openWindowLoops(CodeWriter &out, const Window &w);

/// The slices of output channels (1: none) a kernel whose one stage is
/// `conv`, its tail applied by dlc_conv_packed (ConvEpilogue), splits its
/// calls over besides the convolution's rows (Contraction.cpp).
int64_t convChannelSlices(mlir::Operation *conv, const CpuTarget &target);

void emitMatmul(mlir::Operation *op, StageContext &ctx);
void emitConv2d(mlir::Operation *op, StageContext &ctx);
void emitPool2d(mlir::Operation *op, StageContext &ctx);
void emitReduce(mlir::Operation *op, StageContext &ctx);
void emitSoftmax(mlir::Operation *op, StageContext &ctx);
void emitNorm(mlir::Operation *op, StageContext &ctx);
void emitLoss(mlir::Operation *op, StageContext &ctx);

} // namespace dlc::codegen

#endif // DLC_CODEGEN_CPU_STAGES_H
