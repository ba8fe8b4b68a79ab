//===- KernelEmitter.cpp - one kernel as a C++ function -------------------===//

#include "codegen/cpu/KernelEmitter.h"

#include "codegen/common/Elemental.h"
#include "codegen/cpu/MaskedAttention.h"
#include "codegen/cpu/Stages.h"

#include "ir/DlcDialect.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/TypeSwitch.h"

#include <algorithm>

using namespace mlir;
using namespace dlc;
using namespace dlc::codegen;

static int64_t numel(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}
static std::string str(int64_t v) { return std::to_string(v); }

/// The index of reshape(x) at which element `in` of x lands. Dimensions are
/// matched in groups of equal products, so splitting or merging dims gives
/// one division or multiply-add per dim instead of a whole flat index.
static Index reshapeForward(const std::vector<int64_t> &inShape,
                            const std::vector<int64_t> &outShape,
                            const Index &in) {
  Index out;
  size_t i = 0, o = 0;
  while (i < inShape.size() || o < outShape.size()) {
    size_t i0 = i, o0 = o;
    int64_t pi = 1, po = 1;
    if (i < inShape.size())
      pi *= inShape[i++];
    if (o < outShape.size())
      po *= outShape[o++];
    while (pi != po) {
      if (pi < po && i < inShape.size())
        pi *= inShape[i++];
      else if (o < outShape.size())
        po *= outShape[o++];
      else
        break;
    }
    // Trailing unit dims join the last group.
    if (i == inShape.size() || o == outShape.size()) {
      while (i < inShape.size())
        ++i;
      while (o < outShape.size())
        ++o;
    }
    std::vector<int64_t> gIn(inShape.begin() + i0, inShape.begin() + i);
    Index gIndex(in.begin() + i0, in.begin() + i);
    std::string flat = gIn.empty() ? "0" : flatIndex(gIn, gIndex);
    std::vector<std::string> tail;
    int64_t stride = 1;
    for (size_t d = o; d-- > o0;) {
      std::string e = stride == 1 ? flat : "(" + flat + ") / " + str(stride);
      if (d != o0)
        e = "(" + e + ") % " + str(outShape[d]);
      tail.push_back(outShape[d] == 1 ? "0" : e);
      stride *= outShape[d];
    }
    out.insert(out.end(), tail.rbegin(), tail.rend());
  }
  return out;
}

/// The index of `result` at which element `index` of `base` is stored,
/// `result` being a reshape/transpose chain of `base`.
static Index remapForward(Value result, Value base, Index index) {
  SmallVector<Operation *> chain;
  for (Value v = result; v != base; v = v.getDefiningOp()->getOperand(0))
    chain.push_back(v.getDefiningOp());
  for (Operation *op : llvm::reverse(chain)) {
    if (auto transpose = dyn_cast<TransposeOp>(op)) {
      Index out;
      for (int64_t p : transpose.getPerm())
        out.push_back(index[p]);
      index = out;
    } else {
      index = reshapeForward(shapeOf(op->getOperand(0)),
                             shapeOf(op->getResult(0)), index);
    }
  }
  return index;
}

void dlc::codegen::guardScratch(CodeWriter &out, const std::string &check,
                                const std::string &memory) {
  out.open("if (__builtin_expect(!" + memory + ".data, 0))");
  out.line("dlc_note(" + check + ", (int64_t)" + memory +
           ".bytes, 0); // out of memory: report, and stop");
  out.line("dlc_report(dlc_status, dlc_check, dlc_check_base);");
  out.line("return;");
  out.close();
}

namespace {

class CpuKernelEmitter {
public:
  CpuKernelEmitter(const CpuTarget &target, const KernelView &kernel,
                   DataChecks &checks, uint32_t index)
      : target(target), kernel(kernel),
        analysis(analyzeKernel(kernel, AnalysisOptions{target.remapStores,
                                                       /*splitSingleRowColumns=*/true})),
        checks(checks), index(index),
        elemental(target, body, buffers, statics, checks) {
    checks.beginKernel(index);
    maskedAttention = matchMaskedAttention(kernel, analysis);
    flat = isFlatElementwise();
    if (flat) {
      std::vector<int64_t> shape = shapeOf(kernel.results.front());
      analysis.parallelDims = static_cast<unsigned>(shape.size());
      analysis.rowShape.assign(shape.begin(), shape.end());
      analysis.rows = numel(shape);
      analysis.splitReason = "the elements: element-wise on one shape, one loop";
    }
  }

  EmittedKernel emit(const std::string &entry,
                     const std::vector<std::string> &argNames);

private:
  /// Opens the loops over this call's rows and the remaining dims of
  /// `shape` (rows: the kernel's split; whole: every dim); returns the
  /// index and the number of loops opened.
  unsigned openLoops(const std::vector<int64_t> &shape, bool rows, Index &index);
  /// Opens `for (i = from; i < to; ++i)` with a fresh name, which it
  /// returns; the innermost loop of a nest gets `#pragma GCC ivdep`.
  std::string openCountedLoop(const std::string &from, const std::string &to, bool innermost);
  /// Opens this call's row loop and names the row dims of `shape` in
  /// `index` (their positions, which must be there already).
  void openRowLoop(const std::vector<int64_t> &shape, Index &index);
  /// openLoops for a group stored through a transpose that makes dim
  /// `moved` of `shape` the result's innermost: the innermost dim in
  /// blocks of kTransposeTile, the `moved` loop inside the block loop.
  unsigned openTransposedLoops(const std::vector<int64_t> &shape, size_t moved,
                               Index &index);
  Buffer operand(Value value);
  Buffer operandRows(Value value, const std::string &first, const std::string &last);
  Buffer scratch(Value value, bool rows, const char *prefix);
  Buffer scratch(Value value, const std::string &count, const std::string &base,
                 const char *prefix);
  void emitStage(Operation *op);
  std::optional<unsigned> resultComputedInPlace(Operation *stage) const;
  std::optional<ConvEpilogue> convTail(Operation *stage) const;
  int64_t workPerRow() const;
  int64_t innermostStoreBlock(llvm::ArrayRef<unsigned> group,
                              llvm::ArrayRef<int64_t> shape) const;
  std::optional<size_t> transposedInnermost(llvm::ArrayRef<unsigned> group,
                                            const std::vector<int64_t> &shape) const;

  /// Element-wise ops only, on values of one shape (or scalars), whose
  /// innermost dimension is short: every buffer is read and written at the
  /// same flat index, so the loop runs over the elements, not over rows of
  /// a few (the MNIST input's rows of 28 left vectors a third empty and
  /// paid a tail on every row).
  bool isFlatElementwise() const;

  const CpuTarget &target;
  const KernelView &kernel;
  KernelAnalysis analysis;
  /// isFlatElementwise(): one loop, index (0, ..., 0, p).
  bool flat = false;
  CodeWriter body;
  std::string statics;
  llvm::DenseMap<Value, Buffer> buffers;
  /// The kernel's results (r0, r1, ...), whole tensors.
  std::vector<Buffer> results;
  /// The result the last stage computes in (resultComputedInPlace).
  std::optional<unsigned> stageResultInPlace;
  /// The last stage's tail, where a convolution applies it (convTail).
  std::optional<ConvEpilogue> epilogue;
  /// The slices of output channels the calls split over besides rows
  /// (convChannelSlices), and the panels of 16 channels in each.
  int64_t channelSlices = 1, slicePanels = 0;
  DataChecks &checks;
  uint32_t index;
  ElementalEmitter elemental;
  bool usesBlas = false;
  bool usesDnnlConv = false;
  /// The kernel's attention whose products skip masked keys, if any.
  std::optional<MaskedAttention> maskedAttention;
  /// Bytes of scratch the body takes per row of its call (scratch(v, true)).
  int64_t rowScratchBytes = 0;
};

} // namespace

bool CpuKernelEmitter::isFlatElementwise() const {
  if (!analysis.stages.empty() || kernel.results.empty() || analysis.resultGroups.size() != 1 ||
      analysis.stageResultsThroughScratch)
    return false;
  std::vector<int64_t> shape = shapeOf(kernel.results.front());
  // Rows of 256 elements and more vectorise as well as one loop.
  if (shape.size() < 2 || shape.back() >= 256 || numel(shape) == 0)
    return false;
  auto sameOrScalar = [&](Value v) {
    std::vector<int64_t> s = shapeOf(v);
    return s.empty() || s == shape;
  };
  // One result group: every result has `shape` (no store remap).
  if (kernel.results != analysis.iterated)
    return false;
  for (Operation *op : kernel.body) {
    if (!isa<ElementwiseOpInterface, CastOp>(op))
      return false;
    if (!llvm::all_of(op->getOperands(), sameOrScalar) ||
        !llvm::all_of(op->getResults(), sameOrScalar))
      return false;
  }
  return true;
}

unsigned CpuKernelEmitter::openLoops(const std::vector<int64_t> &shape,
                                     bool rows, Index &index) {
  if (flat && rows) {
    // Every buffer of the kernel has this shape (or is a scalar): element
    // p of each is at flat index p.
    body.line("#pragma GCC ivdep");
    body.open(target.parallelLoop("p", str(analysis.rows)));
    index.assign(shape.size() - 1, "0");
    index.push_back("p");
    return 1;
  }
  unsigned opened = 0;
  size_t first = 0;
  if (rows) {
    if (analysis.parallelDims == shape.size())
      body.line("#pragma GCC ivdep");
    index.resize(analysis.parallelDims);
    openRowLoop(shape, index);
    ++opened;
    first = analysis.parallelDims;
  }
  for (size_t d = first; d < shape.size(); ++d) {
    index.push_back(openCountedLoop("0", str(shape[d]), d + 1 == shape.size()));
    ++opened;
  }
  return opened;
}

std::string CpuKernelEmitter::openCountedLoop(const std::string &from, const std::string &to,
                                              bool innermost) {
  std::string name = body.fresh("i");
  // Every caller stores element `index` of a result or a scratch buffer
  // from elements of other buffers, or of the one it writes in place at
  // the same index (dlc.inplace): no iteration depends on another's
  // store. GCC cannot see that through the buffer pointers and, where
  // a kernel also reads a scalar (a learning rate, a bias-correction
  // factor), reloads it each iteration and keeps the loop scalar.
  if (innermost)
    body.line("#pragma GCC ivdep");
  body.open("for (int64_t " + name + " = " + from + "; " + name + " < " + to + "; ++" + name +
            ")");
  return name;
}

void CpuKernelEmitter::openRowLoop(const std::vector<int64_t> &shape, Index &index) {
  body.open(target.parallelLoop("p", str(analysis.rows)));
  int64_t stride = analysis.rows;
  for (size_t d = 0; d < analysis.parallelDims; ++d) {
    stride /= shape[d];
    std::string e = stride == 1 ? "p" : "p / " + str(stride);
    if (d)
      e = "(" + e + ") % " + str(shape[d]);
    std::string name = body.fresh("i");
    body.line("const int64_t " + name + " = " + e + ";");
    index[d] = name;
  }
}

/// The tile of a transposed store: 16 x 16 elements, the stores of a block
/// touching 16 lines that stay in L1 while the block's loads run along.
static constexpr int64_t kTransposeTile = 16;

unsigned CpuKernelEmitter::openTransposedLoops(const std::vector<int64_t> &shape,
                                               size_t moved, Index &index) {
  const size_t n = shape.size(), rowDims = analysis.parallelDims;
  const int64_t inner = shape.back();
  index.assign(n, "");
  unsigned opened = 0;
  auto openDim = [&](size_t d) {
    index[d] = openCountedLoop("0", str(shape[d]), false);
    ++opened;
  };
  // A moved row dim goes inside the block loop with the other rows.
  const bool movedIsRow = moved < rowDims;
  if (!movedIsRow) {
    openRowLoop(shape, index);
    ++opened;
  }
  for (size_t d = rowDims; d + 1 < n; ++d)
    if (d != moved)
      openDim(d);
  std::string blockStart = body.fresh("i");
  body.open("for (int64_t " + blockStart + " = 0; " + blockStart + " < " + str(inner) +
            "; " + blockStart + " += " + str(kTransposeTile) + ")");
  ++opened;
  if (movedIsRow) {
    openRowLoop(shape, index);
    ++opened;
  } else {
    openDim(moved);
  }
  // The block's end, cut at the dim's end where the tile does not divide it.
  std::string next = blockStart + " + " + str(kTransposeTile);
  std::string end = inner % kTransposeTile == 0
                        ? next
                        : "(" + next + " < " + str(inner) + " ? " + next + " : " + str(inner) + ")";
  index[n - 1] = openCountedLoop(blockStart, end, true);
  return opened + 1;
}

/// Scratch for `value`: this call's rows of it, or all of it.
Buffer CpuKernelEmitter::scratch(Value value, bool rows, const char *prefix) {
  if (rows && analysis.parallelDims > 0) {
    int64_t perRow = elementsPerRow(value, analysis);
    rowScratchBytes += perRow * static_cast<int64_t>(elementSize(elementDType(value)));
    return scratch(value, "(end - begin) * " + str(perRow), "begin * " + str(perRow), prefix);
  }
  return scratch(value, str(numel(shapeOf(value))), "", prefix);
}

/// Scratch for `count` elements of `value` (C expressions), the first of
/// them element `base` of the value (empty: all of it).
Buffer CpuKernelEmitter::scratch(Value value, const std::string &count, const std::string &base,
                                 const char *prefix) {
  Buffer b;
  b.dtype = elementDType(value);
  b.shape = shapeOf(value);
  b.base = base;
  std::string type = target.storageType(b.dtype);
  std::string name = body.fresh(prefix);
  body.line("DlcScratch " + name + "Memory(" + count + " * sizeof(" + type + "));");
  guardScratch(body, checks.add(fb::CheckKind::scratch_memory, kernel.op), name + "Memory");
  body.line(type + " *" + name + " = (" + type + " *)" + name + "Memory.data;");
  b.ptr = name;
  return b;
}

Buffer CpuKernelEmitter::operand(Value value) {
  auto found = buffers.find(value);
  if (found != buffers.end())
    return found->second;
  // A reshape of a buffer is the same buffer.
  if (auto reshape = value.getDefiningOp<ReshapeOp>()) {
    Value root = reshape.getX();
    while (auto inner = root.getDefiningOp<ReshapeOp>())
      root = inner.getX();
    auto rootBuffer = buffers.find(root);
    if (rootBuffer != buffers.end()) {
      Buffer b = rootBuffer->second;
      b.shape = shapeOf(value);
      return b;
    }
  }
  // Otherwise pack the elemental value: this call's rows of it when it
  // depends on a stage (only those exist), all of it otherwise.
  bool rows = analysis.afterStage.contains(value);
  body.line("// " + describeOp(value.getDefiningOp()) + ": packed for the next stage");
  Buffer b = scratch(value, rows, "copy");
  Index index;
  unsigned loops = openLoops(b.shape, rows, index);
  elemental.pushScope();
  std::string v = elemental.emit(value, index);
  body.line(elementAt(b, flatIndex(b.shape, index)) + " = " +
            target.store(b.dtype, v) + ";");
  elemental.popScope();
  for (unsigned i = 0; i < loops; ++i)
    body.close();
  buffers[value] = b;
  return b;
}

/// StageContext::operandRows: a buffer or a value packed per call as
/// operand() does it, else rows [first, last) of its leading dims (N x H)
/// packed, base their first element. Not kept in `buffers`: it holds those
/// rows only.
Buffer CpuKernelEmitter::operandRows(Value value, const std::string &first,
                                     const std::string &last) {
  std::vector<int64_t> shape = shapeOf(value);
  if (buffers.count(value) || value.getDefiningOp<ReshapeOp>() ||
      analysis.afterStage.contains(value) || shape.size() != 4)
    return operand(value);
  body.line("// " + describeOp(value.getDefiningOp()) +
            ": packed for the next stage, the rows of dims 0-1 it reads");
  const std::string from = body.fresh("rowsFirst"), to = body.fresh("rowsLast"),
                    perRow = str(shape[2] * shape[3]);
  body.line("const int64_t " + from + " = " + first + ", " + to + " = " + last + ";");
  Buffer b = scratch(value, "(" + to + " - " + from + ") * " + perRow, from + " * " + perRow,
                     "copy");
  std::string q = body.fresh("q");
  body.open("for (int64_t " + q + " = " + from + "; " + q + " < " + to + "; ++" + q + ")");
  Index index{q + " / " + str(shape[1]), q + " % " + str(shape[1])};
  index.push_back(openCountedLoop("0", str(shape[2]), false));
  index.push_back(openCountedLoop("0", str(shape[3]), true));
  elemental.pushScope();
  std::string v = elemental.emit(value, index);
  body.line(elementAt(b, flatIndex(b.shape, index)) + " = " + target.store(b.dtype, v) + ";");
  elemental.popScope();
  for (int i = 0; i < 3; ++i)
    body.close();
  return b;
}

/// The kernel result the last stage can write straight into: one whose
/// elements are an element-wise function of the stage's at the same index
/// (conv2d or matmul followed by bias, activation, residual add), so the
/// result loop reads each element of the stage and overwrites it. That
/// saves the stage's scratch and a pass of it through the caches.
std::optional<unsigned>
CpuKernelEmitter::resultComputedInPlace(Operation *stage) const {
  if (stage != analysis.stages.back() || analysis.stageResultsThroughScratch)
    return std::nullopt;
  Value value = stage->getResult(0);
  std::vector<int64_t> shape = shapeOf(value);
  // The values computed element-wise from the stage's, each of its shape.
  llvm::DenseSet<Value> cone{value};
  bool after = false;
  for (Operation *op : kernel.body) {
    if (op == stage) {
      after = true;
      continue;
    }
    bool reads = llvm::any_of(op->getOperands(),
                              [&](Value v) { return cone.contains(v); });
    if (!reads)
      continue;
    if (!after || kernelRoleOf(op) != KernelRole::Elementwise ||
        op->getNumResults() != 1 || shapeOf(op->getResult(0)) != shape)
      return std::nullopt;
    for (Value v : op->getOperands())
      if (cone.contains(v) && shapeOf(v) != shape)
        return std::nullopt;
    cone.insert(op->getResult(0));
  }
  std::optional<unsigned> found;
  for (auto [i, r] : llvm::enumerate(kernel.results)) {
    if (!cone.contains(r))
      continue;
    if (found || analysis.iterated[i] != r || kernel.inplace[i] >= 0 ||
        elementDType(r) != elementDType(value))
      return std::nullopt;
    found = i;
  }
  return found;
}

/// The tail of a kernel whose last stage is a channels-last f32
/// convolution, where it is one dlc_conv_packed can apply as it stores
/// (ResNet's conv + ReLU and conv + residual + ReLU): the kernel's one
/// result is relu?(conv + residual?) of the convolution's shape, stored
/// as it is iterated, the residual a kernel argument. A result in place of
/// an argument must be in place of the residual, read nowhere else: the
/// packed kernel writes it as the convolution's reads go on.
std::optional<ConvEpilogue> CpuKernelEmitter::convTail(Operation *stage) const {
  auto conv = dyn_cast<Conv2dOp>(stage);
  if (!conv || !conv.getChannelsLast() || stage != analysis.stages.back() ||
      analysis.stageResultsThroughScratch || kernel.results.size() != 1 ||
      analysis.iterated[0] != kernel.results[0] || elementDType(conv.getResult()) != DType::F32)
    return std::nullopt;
  ConvEpilogue tail;
  llvm::SmallVector<Operation *, 2> ops;
  Value v = kernel.results[0];
  if (auto relu = v.getDefiningOp<ReluOp>()) {
    tail.relu = true;
    ops.push_back(relu);
    v = relu.getX();
  }
  std::optional<unsigned> residualArg;
  if (auto add = v.getDefiningOp<AddOp>()) {
    Value other = add.getLhs() == conv.getResult() ? add.getRhs() : add.getLhs();
    auto arg = llvm::find(kernel.args, other);
    if (arg == kernel.args.end() || other.getType() != conv.getResult().getType())
      return std::nullopt;
    residualArg = arg - kernel.args.begin();
    ops.push_back(add);
    v = conv.getResult();
  }
  if (v != conv.getResult() || ops.empty())
    return std::nullopt;
  // Nothing else is computed after the convolution.
  bool after = false;
  for (Operation *op : kernel.body) {
    if (after && !llvm::is_contained(ops, op))
      return std::nullopt;
    after |= op == stage;
  }
  if (kernel.inplace[0] >= 0) {
    if (!residualArg || kernel.inplace[0] != int64_t(*residualArg))
      return std::nullopt;
    Value residual = kernel.args[*residualArg];
    for (Operation *user : residual.getUsers())
      if (user != ops.back() && llvm::is_contained(kernel.body, user))
        return std::nullopt;
  }
  tail.result = results[0];
  if (residualArg)
    tail.residual = buffers.lookup(kernel.args[*residualArg]);
  return tail;
}

void CpuKernelEmitter::emitStage(Operation *op) {
  Value result = op->getResult(0);
  body.line("// " + describeOp(op) + " -> " + dtypeName(elementDType(result)) +
            shapeText(shapeOf(result)));
  std::optional<unsigned> into = resultComputedInPlace(op);
  if (into) {
    stageResultInPlace = into;
    body.line("// (computed in " + results[*into].ptr +
              ", which the result loop overwrites element by element)");
  }
  Buffer out = into ? results[*into] : scratch(result, true, "s");
  StageContext ctx{target, body, analysis,
                   [this](Value v) { return operand(v); },
                   [this](Value v, const std::string &first, const std::string &last) {
                     return operandRows(v, first, last);
                   },
                   out};
  ctx.checks = &checks;
  ctx.kernelOp = kernel.op;
  ctx.elementAt = [this](Value v, const Index &index) {
    elemental.pushScope();
    std::string expression = elemental.emit(v, index);
    elemental.popScope();
    return expression;
  };
  epilogue = convTail(op);
  ctx.epilogue = epilogue ? &*epilogue : nullptr;
  ctx.channelSliced = channelSlices > 1;
  if (maskedAttention && (op == maskedAttention->qk || op == maskedAttention->pv ||
                          op == maskedAttention->softmax)) {
    ctx.keyTiles = &maskedAttention->keys;
    ctx.keyColumns = op == maskedAttention->qk;
  }
  ctx.isConstant = [this](Value v) {
    auto arg = llvm::find(kernel.args, v);
    return arg != kernel.args.end() && kernel.constantArgs[arg - kernel.args.begin()];
  };
  llvm::TypeSwitch<Operation *>(op)
      .Case([&](MatmulOp) { emitMatmul(op, ctx); })
      .Case([&](Conv2dOp) { emitConv2d(op, ctx); })
      .Case<MaxPool2dOp, AvgPool2dOp>([&](Operation *) { emitPool2d(op, ctx); })
      .Case([&](ReduceOpInterface) { emitReduce(op, ctx); })
      .Case<SoftmaxOp, LogSoftmaxOp>([&](Operation *) { emitSoftmax(op, ctx); })
      .Case<LayerNormOp, RmsNormOp>([&](Operation *) { emitNorm(op, ctx); })
      .Case<CrossEntropyOp, MseOp>([&](Operation *) { emitLoss(op, ctx); });
  usesBlas |= ctx.usesBlas;
  usesDnnlConv |= ctx.usesDnnlConv;
  buffers[result] = out;
}

/// For a result group stored through a remap: the extent of the blocks its
/// innermost iterated dimension is stored in (the innermost dimension of
/// the first remapped result, where it divides the iterated one and that
/// dimension is not a row dimension), else 1.
int64_t CpuKernelEmitter::innermostStoreBlock(ArrayRef<unsigned> group,
                                              ArrayRef<int64_t> shape) const {
  if (flat || shape.empty() || analysis.parallelDims >= shape.size())
    return 1;
  for (unsigned i : group) {
    Value result = kernel.results[i];
    if (result == analysis.iterated[i])
      continue;
    std::vector<int64_t> r = shapeOf(result);
    int64_t block = r.empty() ? 1 : r.back();
    if (block > 1 && block < shape.back() && shape.back() % block == 0)
      return block;
    return 1;
  }
  return 1;
}

/// For a result group stored through a transpose: the dim of the iterated
/// `shape` that is the innermost of its remapped results, where that is
/// not the iterated innermost (so a loop over the latter stores with a
/// stride: MobileNet's stem, NCHW rows stored NHWC, a line per element, 500
/// us for 1.6 MB) and is a moved dim a tile can hold (the last row dim, or
/// not a row dim); else none.
std::optional<size_t>
CpuKernelEmitter::transposedInnermost(ArrayRef<unsigned> group,
                                      const std::vector<int64_t> &shape) const {
  const size_t n = shape.size(), rowDims = analysis.parallelDims;
  if (flat || n < 2 || rowDims >= n || shape.back() < kTransposeTile)
    return std::nullopt;
  Index names;
  for (size_t d = 0; d < n; ++d)
    names.push_back("x" + str(d));
  std::optional<size_t> moved;
  for (unsigned i : group) {
    Value result = kernel.results[i];
    if (result == analysis.iterated[i])
      continue;
    Index to = remapForward(result, analysis.iterated[i], names);
    // A pure permutation moves the names as they are; anything else
    // (reshapes) leaves expressions, and the loops as they are.
    auto at = to.empty() ? names.end() : llvm::find(names, to.back());
    if (at == names.end())
      return std::nullopt;
    size_t d = at - names.begin();
    if (d == n - 1 || (moved && *moved != d) || (d < rowDims && d + 1 != rowDims) ||
        shape[d] < 2)
      return std::nullopt;
    moved = d;
  }
  return moved;
}

/// The rows of one body call for a kernel whose body takes `scratchPerRow`
/// bytes of scratch per row (0: no limit). Attention at GPT-2's 1024
/// positions holds 8-12 KiB per row (the scores, their masked copy, the
/// probabilities), so a thread's 6144 rows took 50-75 MB that every stage
/// wrote and the next read back from memory; calls of at most
/// kRowScratchBudget of it keep that in L2 (the time was within this
/// machine's noise; the memory a run needs is 100x less). A multiple of
/// the grain, and of the innermost row dimension (a head's queries) where
/// a block holds one.
static int64_t rowBlock(int64_t extent, int64_t grain, int64_t scratchPerRow,
                        int64_t innermostRows) {
  constexpr int64_t kRowScratchBudget = 512 << 10;
  if (extent <= 1 || scratchPerRow * extent <= kRowScratchBudget)
    return 0;
  int64_t block = std::max<int64_t>(1, kRowScratchBudget / scratchPerRow);
  if (block >= innermostRows && innermostRows > 1)
    block = block / innermostRows * innermostRows;
  block = std::max<int64_t>(grain, block / grain * grain);
  return block >= extent ? 0 : block;
}

/// A rough count of operations per row, to size the grain.
int64_t CpuKernelEmitter::workPerRow() const {
  int64_t work = 0;
  for (Operation *op : analysis.stages) {
    // FLOPs per result element (CostOpInterface), at least a few.
    int64_t flops = cast<CostOpInterface>(op).getFlops();
    int64_t cost = std::max<int64_t>(
        4, flops / std::max<int64_t>(1, numel(shapeOf(op->getResult(0)))));
    work += cost * elementsPerRow(op->getResult(0), analysis);
  }
  for (Value v : analysis.iterated)
    work += elementsPerRow(v, analysis);
  return std::max<int64_t>(work, 1);
}

EmittedKernel CpuKernelEmitter::emit(const std::string &entry,
                                     const std::vector<std::string> &argNames) {
  size_t numArgs = kernel.args.size();
  for (auto [i, arg] : llvm::enumerate(kernel.args)) {
    DType dtype = elementDType(arg);
    std::string type = target.storageType(dtype);
    std::string name = "a" + str(i);
    body.line("const " + type + " *" + name + " = (const " + type + " *)buffers[" +
              str(i) + "]; // " + argNames[i] + ": " + dtypeName(dtype) +
              shapeText(shapeOf(arg)));
    buffers[arg] = Buffer{name, dtype, shapeOf(arg), ""};
  }
  for (auto [i, v] : llvm::enumerate(kernel.results)) {
    DType dtype = elementDType(v);
    std::string type = target.storageType(dtype);
    std::string name = "r" + str(i);
    std::string note = kernel.inplace[i] >= 0
                           ? " (in place of a" + str(kernel.inplace[i]) + ")"
                           : "";
    body.line(type + " *" + name + " = (" + type + " *)buffers[" +
              str(numArgs + i) + "]; // " + argNames[numArgs + i] + ": " +
              dtypeName(dtype) + shapeText(shapeOf(v)) + note);
    results.push_back(Buffer{name, dtype, shapeOf(v), ""});
  }
  // The status words and the call's DlcCheck go here when the kernel
  // turns out to make checks.
  body.line("//@CHECKS@");

  // Scalar operands (a learning rate, a normalisation's constants, Adam's
  // bias corrections) are loaded once here, not in every iteration: GCC
  // cannot tell that no store of the loops writes them, and reloading them
  // halved an element-wise loop's rate (the MNIST MLP's input
  // normalisation: 41 against 21 us). Not an operand a result is computed
  // in place of.
  for (auto [i, arg] : llvm::enumerate(kernel.args))
    if (shapeOf(arg).empty() && !llvm::is_contained(kernel.inplace, int64_t(i)))
      (void)elemental.emit(arg, {});

  // A kernel that is one convolution with its tail stored by
  // dlc_conv_packed may split over slices of its output channels, then
  // rows: the call's [begin, end) of slices x rows is taken a slice at a
  // time, `begin` and `end` redeclared as the rows of it.
  if (analysis.stages.size() == 1 && analysis.parallelDims > 0 &&
      convTail(analysis.stages.front()))
    channelSlices = convChannelSlices(analysis.stages.front(), target);
  if (channelSlices > 1) {
    const int64_t panels = (shapeOf(analysis.stages.front()->getResult(0)).back() + 15) / 16;
    slicePanels = (panels + channelSlices - 1) / channelSlices;
    const std::string rows = str(analysis.rows);
    body.open("for (int64_t dlc_q = begin, dlc_qEnd = end; dlc_q < dlc_qEnd;)");
    body.line("const int64_t dlc_slice = dlc_q / " + rows + ", begin = dlc_q % " + rows +
              ", end = " + rows + " < begin + (dlc_qEnd - dlc_q) ? " + rows +
              " : begin + (dlc_qEnd - dlc_q);");
    body.line("const int64_t dlc_panel0 = dlc_slice * " + str(slicePanels) +
              ", dlc_panel1 = dlc_panel0 + " + str(slicePanels) + ";");
    body.line("dlc_q += end - begin;");
  }
  for (Operation *op : analysis.stages)
    emitStage(op);

  // The results, one loop nest per shape.
  std::vector<std::pair<Buffer, Buffer>> copies; // scratch -> result
  for (auto &whole : analysis.resultGroups) {
    // A result that is the stage computed in it needs no loop.
    std::vector<unsigned> group;
    for (unsigned i : whole)
      if (!(stageResultInPlace == i &&
            kernel.results[i] == analysis.stages.back()->getResult(0)))
        group.push_back(i);
    if (group.empty())
      continue;
    std::vector<int64_t> shape = shapeOf(analysis.iterated[group.front()]);
    // A store remap that cuts the innermost dimension into blocks (a
    // projection's [T, 768] stored as heads [12, T, 64]) indexes its result
    // by divisions of that dimension: a loop over it stores scattered and
    // stays scalar (BERT's Q, K, V projections: 100 us a kernel for 400
    // KB). Looping over the blocks, each block's stores are contiguous.
    int64_t block = innermostStoreBlock(group, shape);
    std::vector<int64_t> loopShape = shape;
    if (block > 1) {
      loopShape.back() /= block;
      loopShape.push_back(block);
    }
    std::vector<Buffer> targets;
    for (unsigned i : group) {
      if (analysis.stageResultsThroughScratch) {
        Buffer s = scratch(kernel.results[i], false, "t");
        copies.push_back({s, results[i]});
        targets.push_back(s);
      } else {
        targets.push_back(results[i]);
      }
    }
    // A transpose that makes another dim the result's innermost: tiles.
    std::optional<size_t> moved;
    if (block == 1)
      moved = transposedInnermost(group, shape);
    Index index;
    unsigned loops = moved ? openTransposedLoops(shape, *moved, index)
                           : openLoops(loopShape, true, index);
    if (block > 1) {
      std::string inner = index.back();
      index.pop_back();
      index.back() = "(" + index.back() + " * " + str(block) + " + " + inner + ")";
    }
    elemental.pushScope();
    for (auto [k, i] : llvm::enumerate(group)) {
      // With a store remap (KernelAnalysis::iterated), the element of the
      // iterated value at `index` lands at its image in the result.
      Value result = kernel.results[i], iterated = analysis.iterated[i];
      std::string v = elemental.emit(iterated, index);
      std::string flat =
          result == iterated
              ? flatIndex(shape, index)
              : flatIndex(shapeOf(result), remapForward(result, iterated, index));
      body.line(elementAt(targets[k], flat) + " = " +
                target.store(targets[k].dtype, v) + ";");
    }
    elemental.popScope();
    for (unsigned i = 0; i < loops; ++i)
      body.close();
  }
  for (auto &[from, to] : copies)
    body.line("memcpy(" + to.ptr + ", " + from.ptr + ", " +
              str(numel(from.shape) * elementSize(from.dtype)) + ");");
  if (epilogue && epilogue->taken)
    body.close(); // the block of the paths other than dlc_conv_packed's
  if (channelSlices > 1)
    body.close(); // the loop over the call's slices

  // Header comment: what the kernel computes and how it splits.
  CodeWriter head, text;
  std::string kind = "lone op";
  if (auto fusion = dyn_cast<FusionOp>(kernel.op))
    kind = "dlc.fusion \"" + fusion.getKind().str() + "\"";
  head.line("// " + entry + ": " + kind + ", " + describeOp(kernel.op));
  std::string ops;
  for (Operation *op : kernel.body)
    ops += " " + op->getName().getStringRef().str();
  head.line("//  ops:" + ops);
  if (channelSlices > 1)
    head.line("//  parallel over " + str(channelSlices) + " slices of the output channels (" +
              str(slicePanels * 16) + " each) x " + str(analysis.rows) + " rows " +
              shapeText(analysis.rowShape));
  else if (analysis.parallelDims > 0)
    head.line("//  parallel over " + str(analysis.rows) + " rows " +
              shapeText(analysis.rowShape) + " (limited by " +
              analysis.splitReason + ")");
  else
    head.line("//  one call (" + analysis.splitReason + ")");
  text.open(target.kernelSignature(kKernelBodyName));
  text.append(statics);
  const bool checking = checks.checks(index);
  llvm::SmallVector<llvm::StringRef> lines;
  llvm::StringRef(body.text()).split(lines, '\n', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef line : lines) {
    if (line == "//@CHECKS@") {
      if (checking) {
        text.line("int64_t *const dlc_status = (int64_t *)buffers[" +
                  str(kernel.args.size() + kernel.results.size()) +
                  "]; // the status words: checks on the data (DataChecks.h)");
        text.line(std::string("DlcCheck ") + DataChecks::kCheckName +
                  "; // this call's first failed check, reported at the end");
      }
      continue;
    }
    text.append("  " + line.str() + "\n");
  }
  if (checking)
    text.line(std::string("dlc_report(dlc_status, ") + DataChecks::kCheckName +
              ", dlc_check_base);");
  text.close();

  EmittedKernel emitted;
  emitted.entry = entry;
  emitted.header = head.text();
  emitted.definition = text.text();
  emitted.parallelExtent = analysis.rows * channelSlices;
  // Leading row dimensions of 1 leave the next one outermost in memory.
  // None where the calls split over channel slices first: a prefix of the
  // calls' range is not a prefix of the rows.
  for (int64_t extent : analysis.rowShape)
    if (extent != 1 && channelSlices == 1) {
      emitted.outerRows = extent;
      break;
    }
  emitted.grain = emitted.parallelExtent > 1
                      ? std::max<int64_t>(1, (1 << 16) * channelSlices / workPerRow())
                      : 1;
  emitted.rowBlock = rowBlock(emitted.parallelExtent, emitted.grain, rowScratchBytes,
                              analysis.rowShape.empty() ? 1 : analysis.rowShape.back());
  emitted.usesBlas = usesBlas;
  emitted.usesDnnlConv = usesDnnlConv;
  emitted.checks = checking;
  return emitted;
}

EmittedKernel dlc::codegen::emitCpuKernel(const CpuTarget &target,
                                          const KernelView &kernel,
                                          const std::string &entry,
                                          const std::vector<std::string> &argNames,
                                          DataChecks &checks, uint32_t index) {
  return CpuKernelEmitter(target, kernel, checks, index).emit(entry, argNames);
}
