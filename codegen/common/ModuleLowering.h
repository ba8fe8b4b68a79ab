//===- ModuleLowering.h - a planned function as module contents -*- C++ -*-===//
//
// What every target's module writer needs from a function that went through
// the dlc-compile pipeline (docs/design/2026-11-22-memory-planning.md): its
// signature, its weights (every dlc.param's value as ir/ParamSpec.h makes
// it, the reference's too, and every dlc.constant's elements, written as
// their host tensors' bytes), its kernels in order with the buffer
// each argument is bound to, and the copies that complete the outputs.
//
// Binding: graph inputs are `input` buffers, parameters and constants
// `weight` buffers, kernel results `arena` buffers at their dlc.offsets,
// except a kernel result that is a graph output, which the kernel writes
// straight into the `output` buffer (the first output that returns it).
// An output that returns an input, a weight, or a value already bound to an
// earlier output is filled by a Copy after the last launch.
//
// State (docs/design/2026-11-25-training.md): arguments marked `dlc.state`
// are `state` buffers; the kernel computing a state's new value writes it
// into that buffer when passes/analysis/State.h says it may (else a Copy
// after the last launch does); its initial value, unless zeros, is a weight.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_CODEGEN_COMMON_MODULELOWERING_H
#define DLC_CODEGEN_COMMON_MODULELOWERING_H

#include "codegen/common/KernelAnalysis.h"
#include "runtime/format/ModuleWriter.h"
#include "support/ParamSpec.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <string>
#include <vector>

namespace dlc::codegen {

struct LoweredKernel {
  KernelView view;
  /// One per operand, then one per result.
  std::vector<format::BufferRef> refs;
  std::vector<format::KernelArgDesc> args;
  /// For comments: "x (input)", "w1 (param)", "%3 (kernel 2)".
  std::vector<std::string> argNames;
  /// It reads a value whose rows grow with the module's dynamic dimension
  /// (passes/analysis/DynamicRows.h), so its results do too.
  bool dynamicRows = false;
  /// Every result it yields is an op marked as growing with the
  /// dimension: its rows may run as a prefix (if it splits them so).
  bool dynamicResults = false;
};

/// A collective of a partitioned function, executed by the runtime
/// between kernels through the session's communicator (module.fbs
/// Collective), or, for `dlc.shard`, a copy of this rank's block.
struct LoweredCollective {
  /// Runs after this many kernels (m.kernels[0 .. afterKernels)).
  size_t afterKernels = 0;
  format::CollectiveDesc desc;
  /// `dlc.shard`: rank r copies its block of `send`, `shardOuter` pieces of
  /// `shardBytes` (piece o at (o * shardGroup + r) * shardBytes), one
  /// after another into `recv` (no communication; desc unused).
  bool shard = false;
  uint64_t shardBytes = 0, shardOuter = 1, shardGroup = 1;
  format::BufferRef send, recv;
};

/// A module attribute (`dlc compile --draw-params`): each parameter drawn
/// by an initialiser other than zeros becomes a drawn weight (format 1.5),
/// recorded as its initialiser instead of its values.
constexpr llvm::StringLiteral kDrawParamsAttr = "dlc.draw_params";

struct LoweredModule {
  std::string name;
  std::vector<format::TensorDesc> inputs, outputs;
  std::vector<format::TensorDesc> weights;
  /// Tensors that persist across runs (a train step's parameters, moments,
  /// step counter): arguments and results marked `dlc.state`.
  std::vector<format::StateDesc> state;
  std::vector<std::vector<uint8_t>> weightBytes;
  /// Per weight: its initialiser when the runtime draws it (kDrawParamsAttr;
  /// its `weightBytes` are then empty).
  std::vector<std::optional<format::Draw>> weightDraws;
  std::vector<LoweredKernel> kernels;
  std::vector<format::CopyDesc> copies;
  /// In program order; with `mesh`, the module has one plan per rank.
  std::vector<LoweredCollective> collectives;
  std::vector<format::MeshAxisDesc> mesh;
  uint64_t arenaSize = 0;
  /// What every arena offset is a multiple of: the memory planner's
  /// kArenaAlignment (passes/analysis/Liveness.h).
  uint32_t arenaAlignment = 0;
  /// Every parameter's value, by name (for `--save-params`); a drawn state
  /// or weight (format 1.5) has none here.
  ParamStore params;
  /// `dlc compile --dim N=MIN..MAX`: the dimension each run chooses; the
  /// inputs, outputs and kernels whose rows grow with it say so.
  std::optional<format::DynamicDimDesc> dynamicDim;
};

/// Fails (with an error emitted at the op) for a function the pipeline did
/// not plan, or a parameter whose value cannot be read. Without
/// `keepParams`, `params` stays empty: the values are only in the weights'
/// bytes (a compile that writes the module and keeps nothing else: one
/// copy of the weights fewer at its peak).
mlir::FailureOr<LoweredModule> lowerModule(mlir::func::FuncOp func, bool keepParams = true);

/// Gives `writer` what every target's module has of `m`: its name,
/// signature, weights (their bytes moved out of `m`), state and dynamic
/// dimension (kernels and the plan are the target's).
void describeModule(LoweredModule &m, format::ModuleWriter &writer);

/// Adds the module's plans: per rank of its mesh (one without a mesh), the
/// kernels launched as `launches` (one per m.kernels entry) with the
/// collectives between them, then the copies; and its mesh and collectives.
void addPlans(const LoweredModule &m, const std::vector<format::LaunchDesc> &launches,
              format::ModuleWriter &writer);

} // namespace dlc::codegen

#endif // DLC_CODEGEN_COMMON_MODULELOWERING_H
