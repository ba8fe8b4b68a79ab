//===- KernelAnalysis.cpp - stages and the parallel split of a kernel -----===//

#include "codegen/common/KernelAnalysis.h"

#include "ir/DlcDialect.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"

#include <algorithm>

using namespace mlir;
using namespace dlc;
using namespace dlc::codegen;

static ArrayRef<int64_t> shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}


KernelView dlc::codegen::viewKernel(Operation *op) {
  KernelView view;
  view.op = op;
  if (auto fusion = dyn_cast<FusionOp>(op)) {
    Block &block = fusion.getBody().front();
    view.args.assign(block.getArguments().begin(), block.getArguments().end());
    for (Operation &inner : block.without_terminator())
      view.body.push_back(&inner);
    Operation *yield = block.getTerminator();
    view.results.assign(yield->getOperands().begin(),
                        yield->getOperands().end());
  } else {
    view.args.assign(op->getOperands().begin(), op->getOperands().end());
    view.body.push_back(op);
    view.results.assign(op->getResults().begin(), op->getResults().end());
  }
  view.inplace.assign(view.results.size(), -1);
  for (Value operand : op->getOperands())
    view.constantArgs.push_back(isa_and_nonnull<ParamOp, ConstantOp>(operand.getDefiningOp()));
  if (auto attr = op->getAttrOfType<DenseI64ArrayAttr>("dlc.inplace"))
    for (auto [i, operand] : llvm::enumerate(attr.asArrayRef()))
      if (i < view.inplace.size())
        view.inplace[i] = operand;
  return view;
}

bool dlc::codegen::isStage(Operation *op) {
  return isStageRole(kernelRoleOf(op));
}

/// An operand a stage reads row by row: row r of its result reads only
/// row r of the operand's first `aligned` dimensions.
struct RowwiseOperand {
  Value value;
  unsigned aligned;
};

/// The largest split a stage allows on its result (the rows it computes
/// independently), which of its operands must be whole (read across rows:
/// those may not depend on another stage of a split kernel), and which it
/// reads row by row.
static unsigned stageLimit(Operation *op, SmallVectorImpl<Value> &whole,
                           SmallVectorImpl<RowwiseOperand> &rowwise) {
  int64_t rank = shapeOf(op->getResult(0)).size();
  switch (kernelRoleOf(op)) {
  case KernelRole::Contraction: {
    // Row m of the result reads row m of lhs (column m when it is
    // transposed, or all of a broadcast lhs) and all of rhs, per batch:
    // rows split either way, with lhs whole unless its rows align.
    auto matmul = cast<MatmulOp>(op);
    whole.push_back(matmul.getRhs());
    bool lhsAligned = shapeOf(matmul.getLhs()).size() == (size_t)rank &&
                      !matmul.getTransposeA();
    if (lhsAligned)
      rowwise.push_back({matmul.getLhs(), unsigned(rank - 1)});
    else
      whole.push_back(matmul.getLhs());
    return rank - 1;
  }
  case KernelRole::Convolution:
    // Rows are (image, output channel): each reads its whole image, so a
    // batch of one still splits (over output channels); weights and bias
    // are read by every row. Channels-last: (image, output row).
    rowwise.push_back({op->getOperand(0), 1});
    for (Value v : op->getOperands().drop_front())
      whole.push_back(v);
    return 2;
  case KernelRole::Pooling:
    // NCHW: (image, channel) planes; channels-last: (image, output row),
    // each reading its image's rows around it.
    rowwise.push_back({op->getOperand(0), op->hasAttr("channels_last") ? 1u : 2u});
    return 2;
  case KernelRole::Row: {
    // Rows split up to the first row axis; the other operands (scale,
    // bias) are read by every row.
    auto row = cast<RowOpInterface>(op);
    SmallVector<int64_t> axes = row.getRowAxes();
    int64_t first = std::min<int64_t>(axes.empty() ? rank : axes.front(), rank);
    rowwise.push_back({row.getRowInput(), unsigned(first)});
    for (Value v : op->getOperands())
      if (v != row.getRowInput())
        whole.push_back(v);
    return first;
  }
  default:
    for (Value v : op->getOperands())
      whole.push_back(v);
    return 0; // losses: one call
  }
}

/// The number of leading dimensions on which `a` and `b` agree.
static unsigned commonPrefix(ArrayRef<int64_t> a, ArrayRef<int64_t> b) {
  unsigned n = 0;
  while (n < a.size() && n < b.size() && a[n] == b[n])
    ++n;
  return n;
}

/// The largest split under which elemental op `op` reads its
/// stage-dependent operands within the row it computes.
static unsigned elementalLimit(Operation *op,
                               const llvm::DenseSet<Value> &afterStage) {
  ArrayRef<int64_t> out = shapeOf(op->getResult(0));
  unsigned limit = out.size();
  for (Value operand : op->getOperands()) {
    if (!afterStage.contains(operand))
      continue;
    ArrayRef<int64_t> in = shapeOf(operand);
    if (auto transpose = dyn_cast<TransposeOp>(op)) {
      unsigned fixed = 0;
      while (fixed < transpose.getPerm().size() &&
             transpose.getPerm()[fixed] == (int64_t)fixed)
        ++fixed;
      limit = std::min(limit, fixed);
    } else if (isa<ReshapeOp>(op)) {
      limit = std::min(limit, commonPrefix(in, out));
    } else if (kernelRoleOf(op) == KernelRole::DataMovement) {
      return 0;
    } else {
      // Element-wise and broadcast_to: an operand of the result's rank
      // whose leading dims are not broadcast.
      if (in.size() != out.size())
        return 0;
      limit = std::min(limit, commonPrefix(in, out));
    }
  }
  return limit;
}

int64_t dlc::codegen::elementsPerRow(Value value,
                                     const KernelAnalysis &analysis) {
  ArrayRef<int64_t> shape = shapeOf(value);
  int64_t n = 1;
  for (size_t d = analysis.parallelDims; d < shape.size(); ++d)
    n *= shape[d];
  return n;
}

/// The analysis with the result loops iterating `iterated` (one value per
/// result) and the ops in `remapOps` left out of the split's checks.
static KernelAnalysis analyzeWith(const KernelView &kernel,
                                  ArrayRef<Value> iterated,
                                  const llvm::DenseSet<Operation *> &remapOps) {
  KernelAnalysis a;
  a.iterated.assign(iterated.begin(), iterated.end());
  a.remapOps = remapOps;
  for (Operation *op : kernel.body) {
    bool stage = isStage(op);
    if (stage)
      a.stages.push_back(op);
    bool after = stage || llvm::any_of(op->getOperands(), [&](Value v) {
                   return a.afterStage.contains(v);
                 });
    if (after)
      for (Value r : op->getResults())
        a.afterStage.insert(r);
  }

  // Results grouped by shape, in order of first appearance.
  for (auto [i, v] : llvm::enumerate(iterated)) {
    auto group = llvm::find_if(a.resultGroups, [&](auto &g) {
      return shapeOf(iterated[g.front()]) == shapeOf(v);
    });
    if (group == a.resultGroups.end())
      a.resultGroups.push_back({(unsigned)i});
    else
      group->push_back(i);
  }
  bool anyInplace = llvm::any_of(kernel.inplace, [](int64_t k) { return k >= 0; });
  a.stageResultsThroughScratch = anyInplace && a.resultGroups.size() > 1;

  // The split: every result and stage agrees on the leading dims, and each
  // op allows it.
  ArrayRef<int64_t> anchor = iterated.empty()
                                 ? ArrayRef<int64_t>()
                                 : shapeOf(iterated.front());
  unsigned limit = anchor.size();
  a.splitReason = "the results' rank";
  auto bound = [&](unsigned value, const std::string &why) {
    if (value < limit) {
      limit = value;
      a.splitReason = why;
    }
  };
  if (!anchor.empty())
    bound(anchor.size() - 1, "the innermost dimension, a loop in each row");
  for (Value r : iterated)
    bound(commonPrefix(anchor, shapeOf(r)), "results of different shapes");
  if (a.stageResultsThroughScratch)
    bound(0, "in-place results computed in more than one loop");
  for (Operation *op : kernel.body) {
    if (remapOps.contains(op))
      continue;
    std::string name = op->getName().getStringRef().str();
    if (isStage(op)) {
      bound(commonPrefix(anchor, shapeOf(op->getResult(0))),
            name + " of another shape than the results");
      SmallVector<Value> whole;
      SmallVector<RowwiseOperand> rowwise;
      bound(stageLimit(op, whole, rowwise), name + " rows");
      for (Value v : whole)
        if (a.afterStage.contains(v))
          bound(0, name + " reads a whole stage result");
      for (RowwiseOperand r : rowwise)
        if (a.afterStage.contains(r.value))
          bound(std::min(r.aligned, commonPrefix(anchor, shapeOf(r.value))),
                name + " reads a stage result of another shape");
    } else if (llvm::any_of(op->getResults(), [&](Value r) {
                 return a.afterStage.contains(r);
               })) {
      bound(elementalLimit(op, a.afterStage), name + " moves stage results across rows");
    }
  }
  a.parallelDims = limit;
  a.rowShape.assign(anchor.begin(), anchor.begin() + limit);
  for (int64_t d : a.rowShape)
    a.rows *= d;
  if (a.rows == 0) { // an empty tensor: one call that does nothing
    a.parallelDims = 0;
    a.rowShape.clear();
    a.rows = 1;
  }
  return a;
}

/// AnalysisOptions::splitSingleRowColumns: `a` (a kernel of one row) split
/// over its columns instead, where the product is large enough for two
/// threads' worth of weights (a 1 MB matrix; the MNIST MLP's 784x128 at
/// batch 1 runs faster in one call).
static void splitColumns(const KernelView &kernel, KernelAnalysis &a) {
  if (a.rows != 1 || a.stages.size() != 1 || a.iterated.size() != kernel.results.size())
    return;
  auto matmul = dyn_cast<MatmulOp>(a.stages.front());
  if (!matmul || matmul.getTransposeA())
    return;
  auto c = cast<RankedTensorType>(matmul.getType());
  if (!(c.getElementType().isF32() || c.getElementType().isF64()) ||
      matmul.getLhs().getType().getElementType() != c.getElementType() ||
      matmul.getRhs().getType().getElementType() != c.getElementType())
    return;
  int64_t n = c.getShape().back(), k = shapeOf(matmul.getRhs()).end()[matmul.getTransposeB() ? -1 : -2];
  if (c.getNumElements() != n || n * k < (1 << 18))
    return;
  for (Value r : a.iterated)
    if (shapeOf(r) != c.getShape())
      return;
  for (Operation *op : kernel.body)
    if (op != matmul && kernelRoleOf(op) != KernelRole::Elementwise)
      return;
  a.parallelDims = c.getRank();
  a.rowShape.assign(c.getShape().begin(), c.getShape().end());
  a.rows = n;
  a.splitReason = "the columns of a single-row product";
}

KernelAnalysis dlc::codegen::analyzeKernel(const KernelView &kernel,
                                           AnalysisOptions options) {
  KernelAnalysis plain = analyzeWith(kernel, kernel.results, {});
  if (options.splitSingleRowColumns)
    splitColumns(kernel, plain);
  if (!options.remapStores || !isa<FusionOp>(kernel.op) ||
      llvm::any_of(kernel.inplace, [](int64_t k) { return k >= 0; }))
    return plain;
  // Each result with its trailing reshape/transpose chain peeled off, when
  // the chain's values are used by nothing else (the yield, the next op).
  SmallVector<Value> bases;
  llvm::DenseSet<Operation *> ops;
  bool any = false;
  for (Value r : kernel.results) {
    Value v = r;
    SmallVector<Operation *> chain;
    while (Operation *def = v.getDefiningOp()) {
      if (!isa<ReshapeOp, TransposeOp>(def) || !v.hasOneUse())
        break;
      chain.push_back(def);
      v = def->getOperand(0);
    }
    if (chain.empty() || !plain.afterStage.contains(v) ||
        llvm::count(kernel.results, r) > 1) {
      bases.push_back(r);
      continue;
    }
    any = true;
    bases.push_back(v);
    ops.insert(chain.begin(), chain.end());
  }
  if (!any)
    return plain;
  KernelAnalysis remapped = analyzeWith(kernel, bases, ops);
  if (remapped.rows <= plain.rows)
    return plain;
  remapped.remapped = true;
  remapped.splitReason += ", stores remapped through reshape/transpose";
  return remapped;
}
