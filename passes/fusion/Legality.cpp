//===- Legality.cpp - which ops may share a kernel ------------------------===//
//
// regionKind walks the candidate ops in program order and gives every value
// computed inside a role in one of the kernel's iteration spaces (the
// anchor's result, or a row op's input and axes; attention has two), and
// rejects the set as soon as a value would be needed somewhere its kernel
// does not compute it.
//
//===----------------------------------------------------------------------===//

#include "passes/fusion/Legality.h"

#include "ir/DlcDialect.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"

using namespace mlir;

namespace dlc::fusion {

bool isFusible(Operation *op) {
  if (!isa<DlcDialect>(op->getDialect()))
    return false;
  KernelRole role = kernelRoleOf(op);
  return role != KernelRole::Source && role != KernelRole::Structure;
}

static ArrayRef<int64_t> shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

/// The kind of a kernel of one op.
static StringRef singleOpKind(Operation *op) {
  switch (kernelRoleOf(op)) {
  case KernelRole::Elementwise:
    return "elementwise";
  case KernelRole::Contraction:
    return "contraction";
  case KernelRole::Convolution:
    return "convolution";
  case KernelRole::Pooling:
  case KernelRole::Row:
  case KernelRole::Loss:
    return "reduction";
  case KernelRole::Collective:
    return "collective";
  default:
    return "data_movement";
  }
}

/// Roles that never share a kernel with another op (a collective is not a
/// kernel at all: the runtime's comm carries it out between kernels).
static bool standsAlone(KernelRole role) {
  return role == KernelRole::DataMovement || role == KernelRole::Loss ||
         role == KernelRole::Source || role == KernelRole::Structure ||
         role == KernelRole::Collective;
}

namespace {
/// An iteration space: the full shape every thread block walks, and for
/// row kernels the reduced axes (sorted) with the reduced shapes.
struct Space {
  SmallVector<int64_t> shape;
  bool hasAxes = false;
  SmallVector<int64_t> axes, keepShape, dropShape;

  bool isFull(ArrayRef<int64_t> s) const { return s == ArrayRef(shape); }
  bool isKept(ArrayRef<int64_t> s) const {
    return hasAxes && s == ArrayRef(keepShape);
  }
  bool isReduced(ArrayRef<int64_t> s) const {
    return hasAxes && (s == ArrayRef(keepShape) || s == ArrayRef(dropShape));
  }
};

/// The role of a value computed in the kernel.
struct Role {
  enum Kind { Input, Full, Reduced, Store } kind = Input;
  unsigned space = 0;
};
} // namespace

/// The input a row op reduces and its row axes, normalised and sorted.
static std::pair<Value, SmallVector<int64_t>> rowOf(Operation *op) {
  auto row = cast<RowOpInterface>(op);
  return {row.getRowInput(), row.getRowAxes()};
}

static Space rowSpace(Operation *op) {
  auto [x, axes] = rowOf(op);
  Space space;
  space.shape.assign(shapeOf(x).begin(), shapeOf(x).end());
  space.hasAxes = true;
  space.axes = axes;
  for (auto [i, dim] : llvm::enumerate(space.shape)) {
    bool reduced = llvm::is_contained(axes, static_cast<int64_t>(i));
    space.keepShape.push_back(reduced ? 1 : dim);
    if (!reduced)
      space.dropShape.push_back(dim);
  }
  return space;
}

Value skipCast(Value v) {
  if (auto cast = v.getDefiningOp<CastOp>())
    return cast.getX();
  return v;
}

/// The attention pattern over `anchors` (two matmuls in program order) and
/// `rows`: the second matmul's lhs is a softmax over the last axis of the
/// first one's result space (rows of scores), read untransposed, maybe cast
/// (--precision bf16/f16 casts the probabilities down).
static bool isAttention(ArrayRef<Operation *> anchors,
                        ArrayRef<Operation *> rows) {
  auto first = dyn_cast<MatmulOp>(anchors[0]);
  auto second = dyn_cast<MatmulOp>(anchors[1]);
  if (!first || !second || rows.size() != 1)
    return false;
  auto softmax = dyn_cast<SoftmaxOp>(rows[0]);
  if (!softmax || skipCast(second.getLhs()) != softmax.getResult() ||
      second.getTransposeA())
    return false;
  int64_t rank = softmax.getType().getRank();
  int64_t axis = softmax.getAxis();
  return (axis < 0 ? axis + rank : axis) == rank - 1 &&
         shapeOf(softmax.getX()) == shapeOf(first.getResult());
}

/// A convolution whose activations are pooled in the same kernel: `anchors`
/// are a conv2d and a pooling of its result space (through element-wise ops,
/// checked by the roles), with no row op. Both compute whole (image,
/// channel) planes, so each plane of the convolution is pooled while it is
/// still in the cache (CPU) or in shared memory (CUDA), and the activations
/// before pooling, four or nine times the pooled bytes, are never stored.
static bool isPooledConvolution(ArrayRef<Operation *> anchors,
                                ArrayRef<Operation *> rows) {
  // Channels-last ops split output rows, which a pooling does not share
  // with its convolution.
  return rows.empty() && isa<Conv2dOp>(anchors[0]) &&
         kernelRoleOf(anchors[1]) == KernelRole::Pooling &&
         !anchors[0]->hasAttr("channels_last") && !anchors[1]->hasAttr("channels_last");
}

std::optional<StringRef> regionKind(ArrayRef<Operation *> ops) {
  if (ops.size() == 1)
    return singleOpKind(ops.front());
  llvm::SmallPtrSet<Operation *, 16> members(ops.begin(), ops.end());

  // 1. The anchors decide the iteration spaces.
  SmallVector<Operation *> anchors, rows;
  Operation *firstElementwise = nullptr;
  for (Operation *op : ops) {
    KernelRole role = kernelRoleOf(op);
    if (standsAlone(role))
      return std::nullopt;
    if (role == KernelRole::Contraction || role == KernelRole::Convolution ||
        role == KernelRole::Pooling)
      anchors.push_back(op);
    else if (role == KernelRole::Row)
      rows.push_back(op);
    else if (role == KernelRole::Elementwise && !firstElementwise)
      firstElementwise = op;
  }
  SmallVector<Space, 2> spaces;
  bool attention = anchors.size() == 2 && isa<MatmulOp>(anchors[0]);
  bool pooled = anchors.size() == 2 && !attention;
  auto anchorSpace = [&](Operation *anchor) {
    spaces.emplace_back();
    spaces.back().shape.assign(shapeOf(anchor->getResult(0)).begin(),
                               shapeOf(anchor->getResult(0)).end());
  };
  if (attention) {
    if (!isAttention(anchors, rows))
      return std::nullopt;
    spaces.push_back(rowSpace(rows[0]));
    anchorSpace(anchors[1]);
  } else if (pooled) {
    if (!isPooledConvolution(anchors, rows))
      return std::nullopt;
    anchorSpace(anchors[0]);
    anchorSpace(anchors[1]);
  } else if (anchors.size() > 2 || (anchors.size() == 1 && !rows.empty())) {
    return std::nullopt;
  } else if (anchors.size() == 1) {
    anchorSpace(anchors[0]);
  } else if (!rows.empty()) {
    spaces.push_back(rowSpace(rows[0]));
    for (Operation *row : rows) {
      Space other = rowSpace(row);
      if (other.shape != spaces[0].shape || other.axes != spaces[0].axes)
        return std::nullopt;
    }
  } else if (firstElementwise) {
    spaces.emplace_back();
    spaces[0].shape.assign(shapeOf(firstElementwise->getResult(0)).begin(),
                           shapeOf(firstElementwise->getResult(0)).end());
  } else {
    // Layout ops only: every one is a load remap of the one before.
    return StringRef("data_movement");
  }

  // 2. Give each value computed inside a role, in program order.
  llvm::DenseMap<Value, Role> roles;
  auto roleOf = [&](Value v) {
    auto found = roles.find(v);
    return found == roles.end() ? Role{} : found->second;
  };
  for (Operation *op : ops) {
    Value result = op->getResult(0);
    switch (kernelRoleOf(op)) {
    case KernelRole::Layout: {
      // A load remap stays an input. A reduced value may switch between its
      // keepdims and dropped shapes (reshape) or be broadcast back over its
      // rows (broadcast_to of the keepdims shape): every element stays in
      // its row. Anything else is a store remap.
      Role in = roleOf(op->getOperand(0));
      ArrayRef<int64_t> shape = shapeOf(result);
      const Space *sp = in.kind == Role::Reduced ? &spaces[in.space] : nullptr;
      if (in.kind == Role::Input)
        roles[result] = Role{};
      else if (sp && isa<ReshapeOp>(op) && sp->isReduced(shape))
        roles[result] = in;
      else if (sp && isa<BroadcastToOp>(op) &&
               sp->isKept(shapeOf(op->getOperand(0))) && sp->isFull(shape))
        roles[result] = {Role::Full, in.space};
      else
        roles[result] = {Role::Store, in.space};
      break;
    }
    case KernelRole::Contraction:
    case KernelRole::Convolution:
    case KernelRole::Pooling: {
      unsigned space = anchors.size() == 2 && op == anchors[1] ? 1 : 0;
      for (Value operand : op->getOperands()) {
        Role in = roleOf(operand);
        // The second anchor reads the first one's space: attention's
        // probabilities, or the pooled convolution's activations.
        bool chained = space == 1 && operand == op->getOperand(0);
        if (chained ? in.kind != Role::Full || in.space != 0
                    : in.kind != Role::Input)
          return std::nullopt;
      }
      roles[result] = {Role::Full, space};
      break;
    }
    case KernelRole::Row: {
      auto [x, axes] = rowOf(op);
      Role in = roleOf(x);
      if (in.kind == Role::Input ? attention
                                 : in.kind != Role::Full || in.space != 0)
        return std::nullopt;
      for (Value operand : op->getOperands())
        if (operand != x && roleOf(operand).kind != Role::Input)
          return std::nullopt;
      bool reduces = cast<RowOpInterface>(op).reducesRows();
      roles[result] = {reduces ? Role::Reduced : Role::Full, 0};
      break;
    }
    case KernelRole::Elementwise: {
      // The space of the operands computed inside, or for an op reading only
      // inputs, the first space its result fits.
      ArrayRef<int64_t> shape = shapeOf(result);
      SmallVector<std::pair<Role, ArrayRef<int64_t>>> inside;
      for (Value operand : op->getOperands()) {
        Role in = roleOf(operand);
        if (in.kind == Role::Store)
          return std::nullopt;
        if (in.kind != Role::Input)
          inside.push_back({in, shapeOf(operand)});
      }
      std::optional<unsigned> space;
      for (auto &[in, inShape] : inside) {
        if (space && *space != in.space)
          return std::nullopt;
        space = in.space;
      }
      for (unsigned s = 0; !space && s < spaces.size(); ++s)
        if (spaces[s].isFull(shape) || spaces[s].isReduced(shape))
          space = s;
      if (!space)
        return std::nullopt;
      const Space &sp = spaces[*space];
      if (sp.isFull(shape)) {
        // A full value: reduced operands broadcast back along their rows
        // only in the keepdims form.
        for (auto &[in, inShape] : inside)
          if (in.kind == Role::Reduced && !sp.isKept(inShape))
            return std::nullopt;
        roles[result] = {Role::Full, *space};
      } else if (sp.isReduced(shape)) {
        for (auto &[in, inShape] : inside)
          if (in.kind != Role::Reduced || inShape != shape)
            return std::nullopt;
        roles[result] = {Role::Reduced, *space};
      } else {
        return std::nullopt;
      }
      break;
    }
    default: // standsAlone, rejected above
      return std::nullopt;
    }
  }

  // 3. Attention keeps the score matrix inside, a pooled convolution its
  //    activations before pooling: nothing of space 0 leaves.
  if (anchors.size() == 2)
    for (auto &[value, role] : roles)
      if (role.kind != Role::Input && role.space == 0)
        for (Operation *user : value.getUsers())
          if (!members.contains(user))
            return std::nullopt;

  if (attention)
    return StringRef("attention");
  if (!anchors.empty())
    return singleOpKind(anchors[0]);
  if (!rows.empty())
    return StringRef("reduction");
  return StringRef("elementwise");
}

} // namespace dlc::fusion
