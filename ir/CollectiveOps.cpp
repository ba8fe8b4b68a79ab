//===- CollectiveOps.cpp - verifiers and folds of the collectives ---------===//
//
// Each collective states its group size; the verifier checks the shape rule
// against it, the axes against each other, and both against the module's
// mesh (`dlc.mesh = "data=2,model=2"` on the module) when it has one.
//
//===----------------------------------------------------------------------===//

#include "ir/DlcDialect.h"
#include "ir/ShapeUtils.h"
#include "support/Mesh.h"

#include "mlir/IR/BuiltinOps.h"

#include <set>

using namespace mlir;
using namespace dlc;

namespace {

/// The checks every collective shares: mesh axes named once each, a group
/// of at least one rank, and the module's mesh agreeing.
LogicalResult verifyGroup(Operation *op, ArrayAttr meshAxes, uint64_t groupSize) {
  if (meshAxes.empty())
    return op->emitOpError("needs at least one mesh axis in 'mesh_axes'");
  std::set<std::string> seen;
  std::vector<std::string> axes;
  for (Attribute a : meshAxes) {
    std::string name = cast<StringAttr>(a).str();
    if (!seen.insert(name).second)
      return op->emitOpError("names mesh axis '") << name << "' twice";
    axes.push_back(name);
  }
  if (static_cast<int64_t>(groupSize) < 1)
    return op->emitOpError("needs a group of at least 1 rank, got ")
           << static_cast<int64_t>(groupSize);
  auto module = op->getParentOfType<ModuleOp>();
  auto spec = module ? module->getAttrOfType<StringAttr>("dlc.mesh") : StringAttr();
  if (!spec)
    return success();
  Mesh mesh;
  std::string error;
  if (!Mesh::parse(spec.str(), mesh, error))
    return op->emitOpError("the module's dlc.mesh: ") << error;
  for (const std::string &name : axes)
    if (mesh.axisIndex(name) < 0)
      return op->emitOpError("names mesh axis '")
             << name << "', which the mesh " << mesh.str() << " does not have";
  if (mesh.groupSize(axes) != static_cast<int64_t>(groupSize))
    return op->emitOpError("has group_size ")
           << groupSize << ", but its axes span " << mesh.groupSize(axes)
           << " ranks of the mesh " << mesh.str();
  return success();
}

/// `axis` normalised against `type`'s rank, or an error.
FailureOr<int64_t> axisOf(Operation *op, StringRef what, int64_t axis,
                          RankedTensorType type) {
  int64_t rank = type.getRank();
  if (axis < -rank || axis >= rank || rank == 0)
    return op->emitOpError() << what << " " << axis << " is out of range for "
                             << type;
  return axis < 0 ? axis + rank : axis;
}

/// The operand's type with dimensions scaled in order: divided by the group
/// size (kind -1; it must divide) or multiplied by it (kind +1).
LogicalResult expectScaled(Operation *op, RankedTensorType in, RankedTensorType out,
                           ArrayRef<std::pair<int64_t, int64_t>> scaleByAxis,
                           int64_t groupSize) {
  SmallVector<int64_t> shape(in.getShape());
  for (auto [axis, kind] : scaleByAxis) {
    if (kind < 0) {
      if (shape[axis] % groupSize != 0)
        return op->emitOpError("splits dimension ")
               << axis << " of " << in << " into " << groupSize
               << " blocks, which does not divide it";
      shape[axis] /= groupSize;
    } else {
      shape[axis] *= groupSize;
    }
  }
  auto expected = RankedTensorType::get(shape, in.getElementType());
  if (out != expected)
    return op->emitOpError("result must be ")
           << expected << " for an operand " << in << " and a group of "
           << groupSize << ", got " << out;
  return success();
}

} // namespace

LogicalResult AllReduceOp::verify() {
  return verifyGroup(*this, getMeshAxes(), getGroupSize());
}

LogicalResult BroadcastOp::verify() {
  if (failed(verifyGroup(*this, getMeshAxes(), getGroupSize())))
    return failure();
  int64_t root = static_cast<int64_t>(getRoot());
  if (root < 0 || root >= static_cast<int64_t>(getGroupSize()))
    return emitOpError("root ") << root << " is not a rank of a group of "
                                << getGroupSize();
  return success();
}

/// A collective over one `axis` of its operand: the group's checks, the
/// axis in range, and dimension `axis` scaled by `kind` (+1 multiplied by
/// the group size, -1 divided).
static LogicalResult verifyOneAxis(Operation *op, ArrayAttr meshAxes, uint64_t groupSize,
                                   uint64_t axisAttr, int64_t kind) {
  if (failed(verifyGroup(op, meshAxes, groupSize)))
    return failure();
  auto in = cast<RankedTensorType>(op->getOperand(0).getType());
  auto axis = axisOf(op, "axis", static_cast<int64_t>(axisAttr), in);
  if (failed(axis))
    return failure();
  return expectScaled(op, in, cast<RankedTensorType>(op->getResult(0).getType()),
                      {{*axis, kind}}, groupSize);
}

LogicalResult AllGatherOp::verify() {
  return verifyOneAxis(*this, getMeshAxes(), getGroupSize(), getAxis(), +1);
}

LogicalResult ReduceScatterOp::verify() {
  return verifyOneAxis(*this, getMeshAxes(), getGroupSize(), getAxis(), -1);
}

LogicalResult ShardOp::verify() {
  return verifyOneAxis(*this, getMeshAxes(), getGroupSize(), getAxis(), -1);
}

/// send/recv: the group's checks and a shift that reaches another rank.
static LogicalResult verifyShift(Operation *op, ArrayAttr meshAxes, uint64_t groupSize,
                                 uint64_t shiftAttr) {
  if (failed(verifyGroup(op, meshAxes, groupSize)))
    return failure();
  int64_t shift = static_cast<int64_t>(shiftAttr), size = static_cast<int64_t>(groupSize);
  if (shift == 0 || shift <= -size || shift >= size)
    return op->emitOpError("shift ") << shift << " does not reach another rank of a group of "
                                     << size;
  return success();
}

LogicalResult SendOp::verify() {
  return verifyShift(*this, getMeshAxes(), getGroupSize(), getShift());
}

LogicalResult RecvOp::verify() {
  return verifyShift(*this, getMeshAxes(), getGroupSize(), getShift());
}

LogicalResult AllToAllOp::verify() {
  if (failed(verifyGroup(*this, getMeshAxes(), getGroupSize())))
    return failure();
  auto in = cast<RankedTensorType>(getX().getType());
  auto split = axisOf(*this, "split_axis", static_cast<int64_t>(getSplitAxis()), in);
  if (failed(split))
    return failure();
  auto concat = axisOf(*this, "concat_axis", static_cast<int64_t>(getConcatAxis()), in);
  if (failed(concat))
    return failure();
  // Divided, then multiplied: the same axis keeps its size but must split.
  return expectScaled(*this, in, cast<RankedTensorType>(getType()),
                      {{*split, -1}, {*concat, +1}}, getGroupSize());
}

Operation *dlc::collectiveInKernel(Operation *kernel) {
  if (kernelRoleOf(kernel) == KernelRole::Collective)
    return kernel;
  if (auto fusion = dyn_cast<FusionOp>(kernel))
    for (Operation &inner : fusion.getBody().front())
      if (kernelRoleOf(&inner) == KernelRole::Collective)
        return &inner;
  return nullptr;
}

//===----------------------------------------------------------------------===//
// Folds: over a group of one rank every collective is the identity (a sum,
// mean, max or min of one tensor, one block gathered or scattered, a
// broadcast from oneself, the whole as one's shard). A mesh axis of size 1
// (`--mesh data=1`) then costs no call, and the host path no segment cut.
//===----------------------------------------------------------------------===//

namespace {
OpFoldResult foldSingleRank(Operation *op, uint64_t groupSize) {
  Value x = op->getOperand(0);
  if (groupSize != 1 || x.getType() != op->getResult(0).getType())
    return {};
  return x;
}
} // namespace

OpFoldResult AllReduceOp::fold(FoldAdaptor) { return foldSingleRank(*this, getGroupSize()); }
OpFoldResult AllGatherOp::fold(FoldAdaptor) { return foldSingleRank(*this, getGroupSize()); }
OpFoldResult ReduceScatterOp::fold(FoldAdaptor) { return foldSingleRank(*this, getGroupSize()); }
OpFoldResult AllToAllOp::fold(FoldAdaptor) { return foldSingleRank(*this, getGroupSize()); }
OpFoldResult BroadcastOp::fold(FoldAdaptor) { return foldSingleRank(*this, getGroupSize()); }
OpFoldResult ShardOp::fold(FoldAdaptor) { return foldSingleRank(*this, getGroupSize()); }
