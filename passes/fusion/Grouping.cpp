//===- Grouping.cpp - partition a graph's ops into kernels ----------------===//
//
// Greedy merging over a graph of groups, every op starting alone. A merge
// happens only when the union is a legal kernel (Legality.h), puts no op
// recomputed for the backward pass (dlc-rematerialize) in the kernel of a
// forward op it reads, and leaves the group graph acyclic; nothing is ever
// duplicated. Merges are tried in priority order: the attention pattern,
// then each expensive anchor grows its epilogue (matmul, conv2d, pooling, in
// program order), then each row op its prologue and epilogue, then what is
// left (element-wise and layout chains) grows in program order.
//
//===----------------------------------------------------------------------===//

#include "passes/fusion/Grouping.h"

#include "passes/analysis/TrainStep.h"
#include "passes/fusion/Legality.h"

#include "ir/DlcDialect.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"

using namespace mlir;

namespace dlc::fusion {

/// True when an op recomputed for the backward pass (dlc-rematerialize's
/// kRecomputeAttr) would share a kernel with a forward op it reads: the
/// kernel would compute it in the forward pass again, and keep it alive.
static bool recomputesInProducer(ArrayRef<Operation *> ops) {
  llvm::SmallPtrSet<Operation *, 16> members(ops.begin(), ops.end());
  return llvm::any_of(ops, [&](Operation *op) {
    return op->hasAttr(kRecomputeAttr) &&
           llvm::any_of(op->getOperands(), [&](Value v) {
             Operation *def = v.getDefiningOp();
             return members.contains(def) && !def->hasAttr(kRecomputeAttr);
           });
  });
}

namespace {

/// The fusible ops of a block partitioned into groups, with the edges
/// between groups given by the ops' use-def edges.
class GroupGraph {
public:
  explicit GroupGraph(Block &body) {
    for (Operation &op : body) {
      if (!isFusible(&op))
        continue;
      position[&op] = ops.size();
      ops.push_back(&op);
      groupOf[&op] = members.size();
      members.push_back({&op});
    }
  }

  /// The fusible ops in program order.
  ArrayRef<Operation *> allOps() const { return ops; }
  unsigned group(Operation *op) const { return groupOf.lookup(op); }

  /// Groups that read a result of `g` or produce an operand of it, ordered
  /// by their first op.
  SmallVector<unsigned> neighbours(unsigned g) const {
    llvm::SetVector<unsigned> found;
    forEachSuccessor(g, [&](unsigned s) { found.insert(s); });
    for (Operation *op : members[g])
      for (Value operand : op->getOperands())
        if (auto it = groupOf.find(operand.getDefiningOp());
            it != groupOf.end() && it->second != g)
          found.insert(it->second);
    SmallVector<unsigned> result(found.begin(), found.end());
    llvm::sort(result, [&](unsigned a, unsigned b) {
      return position.lookup(members[a].front()) <
             position.lookup(members[b].front());
    });
    return result;
  }

  /// Merges `ids` into one group when the union is a legal kernel and the
  /// group graph stays acyclic; returns the merged group's id.
  std::optional<unsigned> tryMerge(ArrayRef<unsigned> ids) {
    llvm::SetVector<unsigned> unique(ids.begin(), ids.end());
    SmallVector<Operation *> merged;
    for (unsigned g : unique)
      merged.append(members[g].begin(), members[g].end());
    llvm::sort(merged, [&](Operation *a, Operation *b) {
      return position.lookup(a) < position.lookup(b);
    });
    if (!regionKind(merged) || recomputesInProducer(merged) ||
        createsCycle(unique.getArrayRef()))
      return std::nullopt;
    unsigned target = unique[0];
    for (unsigned g : unique)
      members[g].clear();
    for (Operation *op : merged)
      groupOf[op] = target;
    members[target] = std::move(merged);
    return target;
  }

  /// The groups, ordered by their first op.
  std::vector<SmallVector<Operation *>> result() const {
    std::vector<SmallVector<Operation *>> groups;
    for (Operation *op : ops)
      if (members[group(op)].front() == op)
        groups.push_back(members[group(op)]);
    return groups;
  }

private:
  template <typename Fn> void forEachSuccessor(unsigned g, Fn fn) const {
    for (Operation *op : members[g])
      for (Operation *user : op->getUsers())
        if (auto it = groupOf.find(user);
            it != groupOf.end() && it->second != g)
          fn(it->second);
  }

  /// True when some path leaves the groups `ids` and comes back to them
  /// through another group: merging them would make a cycle. (The graph is
  /// acyclic before the merge, so only such paths can close one.)
  bool createsCycle(ArrayRef<unsigned> ids) const {
    llvm::DenseSet<unsigned> merging(ids.begin(), ids.end()), visited;
    SmallVector<unsigned> worklist;
    for (unsigned g : ids)
      forEachSuccessor(g, [&](unsigned s) {
        if (!merging.contains(s) && visited.insert(s).second)
          worklist.push_back(s);
      });
    bool cycle = false;
    while (!worklist.empty() && !cycle) {
      unsigned g = worklist.pop_back_val();
      forEachSuccessor(g, [&](unsigned s) {
        if (merging.contains(s))
          cycle = true;
        else if (visited.insert(s).second)
          worklist.push_back(s);
      });
    }
    return cycle;
  }

  SmallVector<Operation *> ops;
  llvm::DenseMap<Operation *, unsigned> position, groupOf;
  std::vector<SmallVector<Operation *>> members;
};

} // namespace

static ArrayRef<int64_t> shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

/// The matmul computing the scores that `v` is derived from through a chain
/// of element-wise ops of the scores' shape, each read only by the next
/// (scale, mask, bias); the chain's ops are appended to `chain`, first one
/// first.
static Operation *findScoresMatmul(Value v, ArrayRef<int64_t> scores,
                                   SmallVectorImpl<Operation *> &chain) {
  Operation *def = v.getDefiningOp();
  if (!def || !v.hasOneUse() || !isFusible(def))
    return nullptr;
  if (isa<MatmulOp>(def))
    return def;
  if (kernelRoleOf(def) != KernelRole::Elementwise || shapeOf(v) != scores)
    return nullptr;
  for (Value operand : def->getOperands()) {
    if (Operation *matmul = findScoresMatmul(operand, scores, chain)) {
      chain.push_back(def);
      return matmul;
    }
  }
  return nullptr;
}

/// The ops of an attention pattern ending at `softmax`: matmul →
/// element-wise chain → softmax → (cast →) matmul, every intermediate read
/// once.
static SmallVector<Operation *> matchAttention(SoftmaxOp softmax) {
  Value probs = softmax.getResult();
  if (!probs.hasOneUse())
    return {};
  Operation *user = *probs.getUsers().begin();
  CastOp probsCast = dyn_cast<CastOp>(user);
  if (probsCast) {
    if (!probsCast.getResult().hasOneUse())
      return {};
    user = *probsCast.getResult().getUsers().begin();
  }
  auto output = dyn_cast<MatmulOp>(user);
  if (!output || skipCast(output.getLhs()) != probs)
    return {};
  SmallVector<Operation *> chain;
  Operation *scores =
      findScoresMatmul(softmax.getX(), shapeOf(softmax.getX()), chain);
  if (!scores)
    return {};
  SmallVector<Operation *> ops{scores};
  ops.append(chain.begin(), chain.end());
  ops.push_back(softmax);
  if (probsCast)
    ops.push_back(probsCast);
  ops.push_back(output);
  return ops;
}

std::vector<SmallVector<Operation *>> formGroups(Block &body) {
  GroupGraph graph(body);
  SmallVector<Operation *> ops(graph.allOps());

  // 1. Attention: the whole pattern at once (its parts are not legal
  //    kernels on their own: a matmul may not take a softmax epilogue).
  for (Operation *op : ops)
    if (auto softmax = dyn_cast<SoftmaxOp>(op)) {
      SmallVector<unsigned> ids;
      for (Operation *member : matchAttention(softmax))
        ids.push_back(graph.group(member));
      if (!ids.empty())
        (void)graph.tryMerge(ids);
    }

  // 2.-4. Grow groups one neighbour at a time, seeds in priority order.
  auto grow = [&](unsigned g) {
    for (bool merged = true; merged;) {
      merged = false;
      for (unsigned n : graph.neighbours(g))
        if (auto into = graph.tryMerge({g, n})) {
          g = *into;
          merged = true;
          break;
        }
    }
  };
  for (Operation *op : ops)
    if (llvm::is_contained({KernelRole::Contraction, KernelRole::Convolution,
                            KernelRole::Pooling},
                           kernelRoleOf(op)))
      grow(graph.group(op));
  for (Operation *op : ops)
    if (kernelRoleOf(op) == KernelRole::Row)
      grow(graph.group(op));
  for (Operation *op : ops)
    grow(graph.group(op));
  return graph.result();
}

} // namespace dlc::fusion
