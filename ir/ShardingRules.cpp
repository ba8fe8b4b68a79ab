//===- ShardingRules.cpp - each op's sharding rule (ShardingRuleOpInterface) ===//
//
// One rule per op, by family. A dimension an op reads or writes at other
// positions than its own (a sliced, padded or concatenated one, a row a
// normalisation reads whole, a convolution's window) is whole: the
// partitioner gathers it before the op.
//
//===----------------------------------------------------------------------===//

#include "ir/DlcDialect.h"
#include "ir/ShapeUtils.h"
#include "ir/Vjp.h"

using namespace mlir;
using namespace dlc;

//===----------------------------------------------------------------------===//
// The rule and its common forms
//===----------------------------------------------------------------------===//

int64_t ShardingRule::addFactor(int64_t size, PartialKind reduction) {
  factorSizes.push_back(size);
  reductions.push_back(reduction);
  return numFactors() - 1;
}

static SmallVector<int64_t, 4> wholeDims(Value v) {
  return SmallVector<int64_t, 4>(shapeOfValue(v).size(), -1);
}

ShardingRule ShardingRule::whole(Operation *op) {
  ShardingRule rule;
  for (Value v : op->getOperands())
    rule.operands.push_back(wholeDims(v));
  for (Value v : op->getResults())
    rule.results.push_back(wholeDims(v));
  return rule;
}

ShardingRule dlc::elementwiseShardingRule(Operation *op) {
  ShardingRule rule;
  ArrayRef<int64_t> out = shapeOfValue(op->getResult(0));
  SmallVector<int64_t, 4> resultDims;
  for (int64_t size : out)
    resultDims.push_back(rule.addFactor(size));
  for (Value v : op->getOperands()) {
    ArrayRef<int64_t> in = shapeOfValue(v);
    SmallVector<int64_t, 4> dims(in.size(), -1);
    size_t skip = out.size() - in.size();
    for (size_t d = 0; d < in.size(); ++d)
      if (in[d] == out[d + skip])
        dims[d] = resultDims[d + skip];
    rule.operands.push_back(dims);
  }
  for (Value v : op->getResults())
    rule.results.push_back(v == op->getResult(0) ? resultDims : wholeDims(v));
  return rule;
}

ShardingRule dlc::passThroughShardingRule(Operation *op,
                                          ArrayRef<int64_t> resultToOperand) {
  ShardingRule rule = ShardingRule::whole(op);
  ArrayRef<int64_t> out = shapeOfValue(op->getResult(0));
  for (auto [d, from] : llvm::enumerate(resultToOperand)) {
    if (from < 0)
      continue;
    int64_t f = rule.addFactor(out[d]);
    rule.results[0][d] = f;
    rule.operands[0][from] = f;
  }
  return rule;
}

/// The dims of `rank` that are not in `axes`, in order.
static SmallVector<int64_t> otherDims(int64_t rank, ArrayRef<int64_t> axes) {
  SmallVector<int64_t> kept;
  for (int64_t d = 0; d < rank; ++d)
    if (!llvm::is_contained(axes, d))
      kept.push_back(d);
  return kept;
}

/// Result dim d is operand dim d, except `whole` ones.
static ShardingRule sameShapeExcept(Operation *op, ArrayRef<int64_t> whole) {
  SmallVector<int64_t> map;
  for (int64_t d = 0; d < (int64_t)shapeOfValue(op->getResult(0)).size(); ++d)
    map.push_back(llvm::is_contained(whole, d) ? -1 : d);
  return passThroughShardingRule(op, map);
}

//===----------------------------------------------------------------------===//
// Sources, structure and collectives: whole
//===----------------------------------------------------------------------===//

// A constant's and an iota's values depend on their global position, and a
// parameter is whole until the partitioner shards it (`dlc.shard`).
ShardingRule ConstantOp::getShardingRule() { return ShardingRule::whole(*this); }
ShardingRule IotaOp::getShardingRule() { return ShardingRule::whole(*this); }
ShardingRule ParamOp::getShardingRule() { return ShardingRule::whole(*this); }
// Partitioning runs before fusion, and never on a partitioned program.
ShardingRule FusionOp::getShardingRule() { return ShardingRule::whole(*this); }
ShardingRule YieldOp::getShardingRule() { return ShardingRule::whole(*this); }
ShardingRule AllReduceOp::getShardingRule() { return ShardingRule::whole(*this); }
ShardingRule AllGatherOp::getShardingRule() { return ShardingRule::whole(*this); }
ShardingRule ReduceScatterOp::getShardingRule() { return ShardingRule::whole(*this); }
ShardingRule AllToAllOp::getShardingRule() { return ShardingRule::whole(*this); }
ShardingRule BroadcastOp::getShardingRule() { return ShardingRule::whole(*this); }
ShardingRule SendOp::getShardingRule() { return ShardingRule::whole(*this); }
ShardingRule RecvOp::getShardingRule() { return ShardingRule::whole(*this); }
ShardingRule ShardOp::getShardingRule() { return ShardingRule::whole(*this); }

//===----------------------------------------------------------------------===//
// Contractions, convolution, pooling
//===----------------------------------------------------------------------===//

/// [..., M, K] x [..., K, N] -> [..., M, N]; K is a sum; batch dims
/// broadcast (a size-1 batch dim of one operand is whole).
ShardingRule MatmulOp::getShardingRule() {
  ShardingRule rule;
  ArrayRef<int64_t> a = shapeOfValue(getLhs()), b = shapeOfValue(getRhs()),
                    out = shapeOfValue(getResult());
  int64_t ra = a.size(), rb = b.size(), rr = out.size();
  SmallVector<int64_t, 4> lhs(ra, -1), rhs(rb, -1), result(rr, -1);
  for (int64_t d = 0; d < rr - 2; ++d) {
    int64_t f = rule.addFactor(out[d]);
    result[d] = f;
    int64_t da = d - (rr - ra), db = d - (rr - rb);
    if (da >= 0 && a[da] == out[d])
      lhs[da] = f;
    if (db >= 0 && b[db] == out[d])
      rhs[db] = f;
  }
  int64_t m = rule.addFactor(out[rr - 2]), n = rule.addFactor(out[rr - 1]);
  int64_t kSize = getTransposeA() ? a[ra - 2] : a[ra - 1];
  int64_t k = rule.addFactor(kSize, PartialKind::Sum);
  lhs[getTransposeA() ? ra - 1 : ra - 2] = m;
  lhs[getTransposeA() ? ra - 2 : ra - 1] = k;
  rhs[getTransposeB() ? rb - 1 : rb - 2] = k;
  rhs[getTransposeB() ? rb - 2 : rb - 1] = n;
  result[rr - 2] = m;
  result[rr - 1] = n;
  rule.operands = {lhs, rhs};
  rule.results = {result};
  return rule;
}

/// x [N, C, H, W], w [O, C/groups, KH, KW] -> [N, O, OH, OW]: the batch and
/// the output channels split; the input channels are a sum (one group);
/// the windows are whole.
ShardingRule Conv2dOp::getShardingRule() {
  ShardingRule rule = ShardingRule::whole(*this);
  // channels_last (the CPU's inference layout, made after partitioning):
  // whole.
  if (getChannelsLast())
    return rule;
  ArrayRef<int64_t> x = shapeOfValue(getX()), out = shapeOfValue(getResult());
  int64_t n = rule.addFactor(out[0]);
  rule.operands[0][0] = rule.results[0][0] = n;
  if (getGroups() == 1) {
    int64_t o = rule.addFactor(out[1]);
    rule.operands[1][0] = rule.results[0][1] = o;
    int64_t c = rule.addFactor(x[1], PartialKind::Sum);
    rule.operands[0][1] = rule.operands[1][1] = c;
  }
  return rule;
}

// channels_last (the CPU's layout, made after partitioning): [N, H, W, C].
ShardingRule MaxPool2dOp::getShardingRule() {
  if (getChannelsLast())
    return passThroughShardingRule(*this, {0, -1, -1, 3});
  return passThroughShardingRule(*this, {0, 1, -1, -1});
}
ShardingRule AvgPool2dOp::getShardingRule() {
  if (getChannelsLast())
    return passThroughShardingRule(*this, {0, -1, -1, 3});
  return passThroughShardingRule(*this, {0, 1, -1, -1});
}

//===----------------------------------------------------------------------===//
// Rows: reductions and normalisations
//===----------------------------------------------------------------------===//

/// The reduced dims are reductions of the op's kind (a mean: the average
/// of equal shards' means); kept ones pass through.
static ShardingRule reduceRule(Operation *op, PartialKind kind) {
  auto row = cast<RowOpInterface>(op);
  ShardingRule rule = ShardingRule::whole(op);
  SmallVector<int64_t> axes = row.getRowAxes();
  ArrayRef<int64_t> in = shapeOfValue(op->getOperand(0));
  bool keep = in.size() == shapeOfValue(op->getResult(0)).size();
  int64_t next = 0;
  for (int64_t d = 0; d < (int64_t)in.size(); ++d) {
    if (llvm::is_contained(axes, d)) {
      rule.operands[0][d] = rule.addFactor(in[d], kind);
      next += keep;
      continue;
    }
    int64_t f = rule.addFactor(in[d]);
    rule.operands[0][d] = f;
    rule.results[0][next++] = f;
  }
  return rule;
}

ShardingRule ReduceSumOp::getShardingRule() { return reduceRule(*this, PartialKind::Sum); }
ShardingRule ReduceMeanOp::getShardingRule() { return reduceRule(*this, PartialKind::Avg); }
ShardingRule ReduceMaxOp::getShardingRule() { return reduceRule(*this, PartialKind::Max); }
ShardingRule ReduceMinOp::getShardingRule() { return reduceRule(*this, PartialKind::Min); }
// A product of shards' products is the product, but no collective computes it.
ShardingRule ReduceProdOp::getShardingRule() { return reduceRule(*this, PartialKind::None); }

/// A normalisation reads each row whole; the other dims pass through, and
/// its scale and bias (of the row's shape) stay whole.
static ShardingRule normalizationRule(Operation *op) {
  return sameShapeExcept(op, cast<RowOpInterface>(op).getRowAxes());
}
ShardingRule SoftmaxOp::getShardingRule() { return normalizationRule(*this); }
ShardingRule LogSoftmaxOp::getShardingRule() { return normalizationRule(*this); }
ShardingRule LayerNormOp::getShardingRule() { return normalizationRule(*this); }
ShardingRule RmsNormOp::getShardingRule() { return normalizationRule(*this); }

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

ShardingRule BroadcastToOp::getShardingRule() { return elementwiseShardingRule(*this); }

ShardingRule TransposeOp::getShardingRule() {
  return passThroughShardingRule(*this, SmallVector<int64_t>(getPerm()));
}

/// Dims that keep their extent pass through; the others are whole.
ShardingRule SliceOp::getShardingRule() {
  ArrayRef<int64_t> in = shapeOfValue(getX());
  SmallVector<int64_t> whole;
  for (int64_t d = 0; d < (int64_t)in.size(); ++d)
    if (getStarts()[d] != 0 || getLimits()[d] != in[d] || getStrides()[d] != 1)
      whole.push_back(d);
  return sameShapeExcept(*this, whole);
}

ShardingRule PadOp::getShardingRule() {
  SmallVector<int64_t> whole;
  for (int64_t d = 0; d < (int64_t)getLow().size(); ++d)
    if (getLow()[d] != 0 || getHigh()[d] != 0)
      whole.push_back(d);
  return sameShapeExcept(*this, whole);
}

/// Every operand shares the dims other than the concatenated one.
ShardingRule ConcatOp::getShardingRule() {
  ShardingRule rule = ShardingRule::whole(*this);
  ArrayRef<int64_t> out = shapeOfValue(getResult());
  int64_t axis = static_cast<int64_t>(getAxis());
  if (axis < 0)
    axis += out.size();
  for (int64_t d = 0; d < (int64_t)out.size(); ++d) {
    if (d == axis)
      continue;
    int64_t f = rule.addFactor(out[d]);
    rule.results[0][d] = f;
    for (auto &dims : rule.operands)
      dims[d] = f;
  }
  return rule;
}

/// table [V, D], ids S -> S + [D]: the ids' dims and D split; V is whole.
ShardingRule EmbeddingOp::getShardingRule() {
  ShardingRule rule = ShardingRule::whole(*this);
  ArrayRef<int64_t> out = shapeOfValue(getResult());
  int64_t ids = shapeOfValue(getIds()).size();
  for (int64_t d = 0; d < ids; ++d) {
    int64_t f = rule.addFactor(out[d]);
    rule.operands[1][d] = rule.results[0][d] = f;
  }
  int64_t dim = rule.addFactor(out.back());
  rule.operands[0][1] = rule.results[0][ids] = dim;
  return rule;
}

/// x.shape[:axis] + indices.shape + x.shape[axis+1:]: all split but the
/// gathered axis.
ShardingRule GatherOp::getShardingRule() {
  ShardingRule rule = ShardingRule::whole(*this);
  ArrayRef<int64_t> x = shapeOfValue(getX()), out = shapeOfValue(getResult());
  int64_t axis = static_cast<int64_t>(getAxis());
  if (axis < 0)
    axis += x.size();
  int64_t idx = shapeOfValue(getIndices()).size();
  for (int64_t d = 0; d < (int64_t)out.size(); ++d) {
    int64_t f = rule.addFactor(out[d]);
    rule.results[0][d] = f;
    if (d < axis)
      rule.operands[0][d] = f;
    else if (d < axis + idx)
      rule.operands[1][d - axis] = f;
    else
      rule.operands[0][d - idx + 1] = f;
  }
  return rule;
}

/// Groups of dims whose products agree: a dim kept (same size) passes
/// through; a split or merge shares its major dim's factor (of the smaller
/// major size: [768] -> [12, 64] splits as [12]); other dims are whole.
ShardingRule ReshapeOp::getShardingRule() {
  ShardingRule rule = ShardingRule::whole(*this);
  ArrayRef<int64_t> in = shapeOfValue(getX()), out = shapeOfValue(getResult());
  size_t i = 0, o = 0;
  while (i < in.size() && o < out.size()) {
    size_t i0 = i, o0 = o;
    int64_t pi = in[i++], po = out[o++];
    while (pi != po) {
      if (pi < po && i < in.size())
        pi *= in[i++];
      else if (po < pi && o < out.size())
        po *= out[o++];
      else
        return rule; // no common boundary: all whole
    }
    // Size-1 dims join no group's factor.
    if (in[i0] == 1 || out[o0] == 1)
      continue;
    bool split = i - i0 == 1, merge = o - o0 == 1;
    if (!split && !merge)
      continue; // many to many: whole
    int64_t size = std::min(in[i0], out[o0]);
    if (std::max(in[i0], out[o0]) % size != 0)
      continue;
    int64_t f = rule.addFactor(size);
    rule.operands[0][i0] = rule.results[0][o0] = f;
  }
  return rule;
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

/// logits [..., C], labels [...]: the batch dims split (a mean is the
/// average of the shards' means, as data-parallel PyTorch computes it), C
/// is whole.
ShardingRule CrossEntropyOp::getShardingRule() {
  ShardingRule rule = ShardingRule::whole(*this);
  ArrayRef<int64_t> labels = shapeOfValue(getLabels());
  PartialKind kind = getReduction() == LossReduction::sum ? PartialKind::Sum
                                                           : PartialKind::Avg;
  for (int64_t d = 0; d < (int64_t)labels.size(); ++d) {
    bool none = getReduction() == LossReduction::none;
    int64_t f = rule.addFactor(labels[d], none ? PartialKind::None : kind);
    rule.operands[0][d] = rule.operands[1][d] = f;
    if (none)
      rule.results[0][d] = f;
  }
  return rule;
}

ShardingRule MseOp::getShardingRule() {
  ShardingRule rule = ShardingRule::whole(*this);
  ArrayRef<int64_t> shape = shapeOfValue(getPred());
  bool none = getReduction() == LossReduction::none;
  PartialKind kind = getReduction() == LossReduction::sum ? PartialKind::Sum
                                                           : PartialKind::Avg;
  for (int64_t d = 0; d < (int64_t)shape.size(); ++d) {
    int64_t f = rule.addFactor(shape[d], none ? PartialKind::None : kind);
    rule.operands[0][d] = rule.operands[1][d] = f;
    if (none)
      rule.results[0][d] = f;
  }
  return rule;
}
