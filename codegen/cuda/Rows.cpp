//===- Rows.cpp - one block per row: reductions, norms, softmax, attention ===//
//
// The `rows` strategy of dlc-tile. The kernel's parallel split (common/
// KernelAnalysis) gives independent rows; a block computes one row at a
// time (grid-stride over rows), or under `warp_rows` (short rows of
// softmax, norms and reductions) each warp of the block its own row, with
// shuffle-only reductions (dlc_warp_*) and __syncwarp between stages. Each
// stage of the row is computed by the row's threads together into shared
// memory (global scratch when a row's stages outgrow 48 KB), with a barrier
// between stages, then the results are computed element by element from the stages and the
// arguments. Softmax, layer_norm, rms_norm and reductions with few outputs
// per row reduce cooperatively (warp shuffles, then one partial per warp in
// shared memory: dlc_block_* in the prelude); the rest give each thread
// whole outputs. An attention region is such a kernel: per query row, the
// scores, the softmax and the weighted sum of values never leave the SM.
// RowEmitter.h holds the kernel's state; convolution and pooling stages are
// in Windows.cpp.
//
//===----------------------------------------------------------------------===//

#include "codegen/cuda/RowEmitter.h"

#include "ir/DlcDialect.h"

#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"

#include <cstdio>

using namespace mlir;
using namespace dlc;
using namespace dlc::codegen;
using namespace dlc::codegen::cuda;

static int64_t normalizeAxis(int64_t axis, int64_t rank) {
  return axis < 0 ? axis + rank : axis;
}

/// The type softmax and norm statistics accumulate in: float for f32 and
/// 16-bit rows (as PyTorch's CUDA kernels; one pass, no division or double
/// exp per element), double for f64.
static std::string rowAccumulator(DType dtype) {
  return dtype == DType::F64 ? "double" : "float";
}

void RowEmitter::matmul(MatmulOp op) {
  Value result = op.getResult();
  std::vector<int64_t> shape = shapeOf(result);
  std::vector<int64_t> lhs = shapeOf(op.getLhs());
  int64_t K = op.getTransposeA() ? lhs[lhs.size() - 2] : lhs.back();
  DType dtype = elementDType(result);
  std::string acc = dtype == DType::F64 ? "double"
                    : isFloat(dtype)      ? "float"
                                          : "long long";
  out.line("// " + describeOp(op) + ": a thread per output element");
  openStrided("e", perRow(result));
  Index index = rowElement(result, "e");
  Index batch(index.begin(), index.end() - 2);
  std::string m = index[index.size() - 2], n = index.back();
  out.line(acc + " sum = 0;");
  openSerial("k", "0", K);
  auto operand = [&](Value v, bool transposed, const std::string &r,
                     const std::string &c) {
    return read(v, matmulOperandIndex(v, batch, transposed, r, c));
  };
  std::string a = operand(op.getLhs(), op.getTransposeA(), m, "k");
  std::string b = operand(op.getRhs(), op.getTransposeB(), "k", n);
  out.line("sum += (" + acc + ")" + a + " * (" + acc + ")" + b + ";");
  close();
  write(result, index, "sum");
  close();
}

void RowEmitter::softmax(Operation *op, bool log) {
  Value x = op->getOperand(0), result = op->getResult(0);
  std::vector<int64_t> shape = shapeOf(x);
  int64_t rank = shape.size();
  int64_t axis = normalizeAxis(op->getAttrOfType<IntegerAttr>("axis").getInt(), rank);
  int64_t L = shape[axis];
  DType dtype = elementDType(result);
  std::string ct = target().computeType(dtype);
  std::string acc = rowAccumulator(dtype);
  auto finish = [&](const std::string &xv) {
    return log ? "(" + ct + ")((" + acc + ")" + xv + " - mx - log(sum))"
               : "(" + ct + ")(dlc_exp((" + acc + ")" + xv + " - mx) / sum)";
  };
  if (axis == rank - 1) {
    int64_t sub = perRow(x) / L;
    out.line("// " + describeOp(op) + ": the " + std::string(rowGroup()) + " reduces each of " +
             std::to_string(sub) + " row(s) of " + std::to_string(L));
    openSerial("s", "0", sub);
    // One pass for the max and the sum (online softmax), one to write.
    out.line(acc + " mx = -INFINITY, sum = 0;");
    openStrided("j", L);
    std::string v = read(x, rowElement(x, "s * " + std::to_string(L) + " + j"));
    out.line("dlc_softmax_add(mx, sum, (" + acc + ")" + v + ");");
    close();
    out.line("const dlc_pair<" + acc + "> stats = " + rowReduction("softmax") + "(mx, sum);");
    out.line("mx = stats.a, sum = stats.b;");
    openStrided("j", L);
    Index index = rowElement(x, "s * " + std::to_string(L) + " + j");
    v = read(x, index);
    write(result, index, finish(v));
    close();
    close();
    return;
  }
  // Softmax along an inner axis: a thread per column, serially.
  std::vector<int64_t> columns = suffixOf(x);
  int64_t inRow = axis - parallelDims;
  columns.erase(columns.begin() + inRow);
  out.line("// " + describeOp(op) + ": a thread per column of " + std::to_string(L));
  openStrided("c", product(columns));
  Index rest = decompose(out, "c", columns);
  auto at = [&](const std::string &j) {
    Index index = rowIndex;
    Index r = rest;
    r.insert(r.begin() + inRow, j);
    index.insert(index.end(), r.begin(), r.end());
    return index;
  };
  out.line(acc + " mx = -INFINITY, sum = 0;");
  openSerial("j", "0", L);
  out.line("mx = fmax(mx, (" + acc + ")" + read(x, at("j")) + ");");
  close();
  openSerial("j", "0", L);
  out.line("sum += dlc_exp((" + acc + ")" + read(x, at("j")) + " - mx);");
  close();
  openSerial("j", "0", L);
  write(result, at("j"), finish(read(x, at("j"))));
  close();
  close();
}

void RowEmitter::norm(Operation *op, bool rms) {
  Value x = op->getOperand(0), scale = op->getOperand(1), result = op->getResult(0);
  Value bias = !rms && op->getNumOperands() > 2 ? op->getOperand(2) : Value();
  std::vector<int64_t> shape = shapeOf(x);
  int64_t rank = shape.size();
  int64_t axis = normalizeAxis(op->getAttrOfType<IntegerAttr>("axis").getInt(), rank);
  double eps = op->getAttrOfType<FloatAttr>("epsilon").getValueAsDouble();
  int64_t L = product(ArrayRef<int64_t>(shape).drop_front(axis));
  int64_t sub = perRow(x) / L;
  std::string Ls = std::to_string(L);
  out.line("// " + describeOp(op) + ": the " + std::string(rowGroup()) + " reduces each of " +
           std::to_string(sub) + " row(s) of " + Ls);
  openSerial("s", "0", sub);
  std::string e = "s * " + Ls + " + j";
  std::string acc = rowAccumulator(elementDType(result));
  std::string epsilon = llvm::formatv("{0:e17}", eps).str();
  if (!rms) {
    // One pass for the mean and variance: sums of the elements shifted by
    // the row's first one (which keeps their cancellation small), summed
    // over the block.
    out.line("const " + acc + " shift = (" + acc + ")" + read(x, rowElement(x, "s * " + Ls)) +
             ";");
    out.line(acc + " s1 = 0, s2 = 0;");
    openStrided("j", L);
    out.line("const " + acc + " d = (" + acc + ")" + read(x, rowElement(x, e)) + " - shift;");
    out.line("s1 += d;");
    out.line("s2 += d * d;");
    close();
    out.line("const dlc_pair<" + acc + "> sums = " + rowReduction("sum2") + "(s1, s2);");
    out.line("const " + acc + " mean = shift + sums.a / " + Ls + ", m2 = sums.b - sums.a * (sums.a / " +
             Ls + ");");
    out.line("const " + acc + " inv = (" + acc + ")(1.0 / sqrt((double)(m2 > 0 ? m2 : 0) / " + Ls +
             " + " + epsilon + "));");
  } else {
    out.line(acc + " sq = 0;");
    openStrided("j", L);
    out.line("const " + acc + " v = (" + acc + ")" + read(x, rowElement(x, e)) + ";");
    out.line("sq += v * v;");
    close();
    std::string sum = rowReduction(acc == "double" ? "sum" : "sumf");
    out.line("const " + acc + " inv = (" + acc + ")(1.0 / sqrt((double)" + sum + "(sq) / " + Ls +
             " + " + epsilon + "));");
  }
  openStrided("j", L);
  Index index = rowElement(x, e);
  Index inner(index.begin() + axis, index.end());
  std::string v = read(x, index);
  std::string g = read(scale, inner);
  std::string y = rms ? "(" + acc + ")" + v + " * inv * (" + acc + ")" + g
                      : "((" + acc + ")" + v + " - mean) * inv * (" + acc + ")" + g;
  if (bias)
    y += " + (" + acc + ")" + read(bias, inner);
  write(result, index, "(" + target().computeType(elementDType(result)) + ")(" + y + ")");
  close();
  close();
}

ReductionCode cuda::reductionCode(Operation *op) {
  Value x = op->getOperand(0);
  std::vector<int64_t> shape = shapeOf(x);
  int64_t rank = shape.size();
  ReductionCode c;
  c.keep = op->getAttrOfType<BoolAttr>("keepdims") &&
           op->getAttrOfType<BoolAttr>("keepdims").getValue();
  c.reduced.assign(rank, false);
  for (int64_t a : op->getAttrOfType<DenseI64ArrayAttr>("axes").asArrayRef())
    c.reduced[normalizeAxis(a, rank)] = true;
  for (int64_t d = 0; d < rank; ++d)
    if (c.reduced[d])
      c.reducedShape.push_back(shape[d]);
  c.R = product(c.reducedShape);
  DType dtype = elementDType(x);
  bool floating = isFloat(dtype);
  c.acc = accumulatorType(dtype);
  ReduceKind reduceKind = cast<ReduceOpInterface>(op).getReduceKind();
  switch (reduceKind) {
  case ReduceKind::Sum:
  case ReduceKind::Mean:
    c.init = "0", c.combine = "a += v;", c.collective = floating ? "sum" : "isum";
    break;
  case ReduceKind::Prod:
    c.init = "1", c.collective = floating ? "prod" : "iprod";
    c.combine = floating ? "a *= v;" : "a = (long long)((unsigned long long)a * (unsigned long long)v);";
    break;
  case ReduceKind::Max:
    c.init = floating ? "-INFINITY" : "(-9223372036854775807LL - 1)";
    c.combine = floating ? "a = (v > a || v != v) && a == a ? v : a;" : "a = v > a ? v : a;";
    c.collective = floating ? "max" : "imax";
    break;
  case ReduceKind::Min:
    c.init = floating ? "INFINITY" : "9223372036854775807LL";
    c.combine = floating ? "a = (v < a || v != v) && a == a ? v : a;" : "a = v < a ? v : a;";
    c.collective = floating ? "min" : "imin";
    break;
  }
  c.finish = reduceKind == ReduceKind::Mean ? "(double)a / " + std::to_string(c.R) : "a";
  return c;
}

Index ReductionCode::inputIndex(CodeWriter &out, const Index &outIndex,
                                const std::string &r) const {
  Index red = decompose(out, r, reducedShape);
  Index index(reduced.size(), "0");
  size_t o = 0, q = 0;
  for (size_t d = 0; d < reduced.size(); ++d) {
    if (reduced[d]) {
      index[d] = red[q++];
      if (keep)
        ++o;
    } else {
      index[d] = outIndex[o++];
    }
  }
  return index;
}

void RowEmitter::reduce(Operation *op) {
  Value x = op->getOperand(0), result = op->getResult(0);
  ReductionCode code = reductionCode(op);
  int64_t R = code.R, O = perRow(result);
  bool cooperative = O < threads;
  out.line("// " + describeOp(op) + ": " + std::to_string(O) +
           " output(s) per row, each over " + std::to_string(R) + " element(s)" +
           (cooperative ? ", reduced by the " + std::string(rowGroup()) : ", a thread per output"));
  if (cooperative)
    openSerial("o", "0", O);
  else
    openStrided("o", O);
  Index outIndex = rowElement(result, "o");
  out.line(code.acc + " a = " + code.init + ";");
  if (cooperative)
    openStrided("r", R);
  else
    openSerial("r", "0", R);
  out.line("const " + code.acc + " v = (" + code.acc + ")" +
           read(x, code.inputIndex(out, outIndex, "r")) + ";");
  out.line(code.combine);
  close();
  if (cooperative) {
    out.line("a = " + rowReduction(code.collective) + "(a);");
    out.open("if (" + rowThread() + " == 0)");
  }
  write(result, outIndex,
        "(" + target().computeType(elementDType(result)) + ")(" + code.finish + ")");
  if (cooperative)
    out.close();
  close();
}

void RowEmitter::loss(Operation *op) {
  Value result = op->getResult(0);
  Value a = op->getOperand(0), b = op->getOperand(1);
  auto ce = dyn_cast<CrossEntropyOp>(op);
  std::string reduction = stringifyLossReduction(
      ce ? ce.getReduction() : cast<MseOp>(op).getReduction()).str();
  std::vector<int64_t> positions = shapeOf(b);
  int64_t C = ce ? shapeOf(a).back() : 1;
  int64_t P = product(positions);
  // A cross_entropy mean divides by the positions whose label is counted.
  bool counts = ce && reduction == "mean";
  out.line("// " + describeOp(op) + ": a thread per position, reduction " + reduction);
  if (reduction != "none")
    out.line("double total = 0;");
  if (counts)
    out.line("double counted = 0;");
  openStrided("p", P);
  Index pi = decompose(out, "p", positions);
  out.line("double l = 0;");
  if (ce) {
    int64_t ignored = ce.getIgnoreIndex();
    double smoothing = ce.getLabelSmoothing().convertToDouble();
    auto at = [&](const std::string &c) {
      Index index = pi;
      index.push_back(c);
      return index;
    };
    out.line("const int64_t raw = (int64_t)" + read(b, pi) + ";");
    out.line("// ignore_index " + std::to_string(ignored) + ": loss 0" +
             (counts ? ", not counted" : ""));
    out.open("if (raw != INT64_C(" + std::to_string(ignored) + "))");
    elemental.pushScope();
    if (counts)
      out.line("counted += 1;");
    out.line(std::string("double mx = -INFINITY, sum = 0") +
             (smoothing != 0 ? ", rowSum = 0;" : ";"));
    openSerial("c", "0", C);
    out.line("mx = fmax(mx, (double)" + read(a, at("c")) + ");");
    close();
    openSerial("c", "0", C);
    out.line("sum += exp((double)" + read(a, at("c")) + " - mx);");
    if (smoothing != 0)
      out.line("rowSum += (double)" + read(a, at("c")) + ";");
    close();
    out.line("const int64_t lab = dlc_check_id(raw, " + std::to_string(C) + ", " +
             ctx.checks->add(fb::CheckKind::label, op, C) + ", p);");
    out.line("const double lse = log(sum) + mx;");
    out.open("");
    elemental.pushScope();
    out.line("l = lse - (double)" + read(a, at("lab")) + ";");
    elemental.popScope();
    out.close();
    if (smoothing != 0) {
      char eps[64];
      snprintf(eps, sizeof eps, "%.17g", smoothing);
      out.line("// label_smoothing: (1 - e) l + e mean_c(lse - x[c])");
      out.line("l = (1 - " + std::string(eps) + ") * l + " + eps +
               " * (lse - rowSum / " + std::to_string(C) + ");");
    }
    elemental.popScope();
    out.close();
  } else {
    out.line("const double d = (double)" + read(a, pi) + " - (double)" + read(b, pi) + ";");
    out.line("l = d * d;");
  }
  std::string ct = target().computeType(elementDType(result));
  if (reduction == "none")
    write(result, pi, "(" + ct + ")l");
  else
    out.line("total += l;");
  close();
  if (reduction != "none") {
    out.line("total = dlc_block_sum(total);");
    if (counts)
      out.line("counted = dlc_block_sum(counted);");
    out.open("if (threadIdx.x == 0)");
    std::string divisor = counts ? " / counted"
                          : reduction == "mean" ? " / " + std::to_string(P)
                                                : "";
    write(result, {}, "(" + ct + ")(total" + divisor + ")");
    out.close();
  }
}

/// For a kernel whose results are all reshapes/transposes of its last
/// stage (attention: the heads merged back; a convolution's weight
/// gradient), the split over the leading dimensions every stage shares
/// (batch, head, query): finer than the analysis's, which splits only where
/// the results themselves do. Returns 0 when that does not apply.
static unsigned layoutTailSplit(const KernelContext &ctx, Value &pre) {
  const auto &stages = ctx.analysis.stages;
  if (stages.empty())
    return 0;
  pre = stages.back()->getResult(0);
  std::vector<int64_t> last = shapeOf(pre);
  unsigned dims = last.size() - 1;
  for (Operation *stage : stages) {
    std::vector<int64_t> s = shapeOf(stage->getResult(0));
    if (s.size() <= dims || !std::equal(last.begin(), last.begin() + dims, s.begin()))
      return 0;
    // Stages must read each other only within a row: matmuls and
    // softmaxes over the last axis do.
    if (auto sm = dyn_cast<SoftmaxOp>(stage))
      if (normalizeAxis(sm.getAxis(), s.size()) != (int64_t)s.size() - 1)
        return 0;
    if (auto mm = dyn_cast<MatmulOp>(stage))
      if (mm.getTransposeA())
        return 0;
    // A lone convolution reads only the kernel's arguments, so any split of
    // its outputs works; taken where the results' own split leaves the GPU
    // idle (a weight gradient, its result transposed: one row).
    bool loneConvolution = isa<Conv2dOp>(stage) && stages.size() == 1 &&
                           ctx.analysis.rows < kFewRows;
    if (!isa<MatmulOp, SoftmaxOp>(stage) && !loneConvolution)
      return 0;
  }
  for (Value result : ctx.view.results) {
    Value v = result;
    while (Operation *def = v.getDefiningOp()) {
      if (!isa<ReshapeOp, TransposeOp>(def))
        break;
      v = def->getOperand(0);
    }
    if (v != pre)
      return 0;
  }
  return dims > ctx.analysis.parallelDims ? dims : 0;
}

void cuda::emitRowsKernel(KernelContext &ctx) {
  KernelAnalysis analysis = ctx.analysis;
  CodeWriter &out = ctx.out;
  RowEmitter rows(ctx);
  Value pre;
  unsigned split = layoutTailSplit(ctx, pre);
  // An attention region (q·kᵀ, softmax, p·v, results through the layout
  // tail) goes to the flash-style kernel (Attention.cpp:
  // query tiles, K/V tiles in shared memory, online softmax in float).
  // What that kernel does not support (non-f32, head dim > 128, scores read
  // at another index, ...) falls back to the per-row kernel below: one
  // block per query row, scores recomputed per row from global K/V.
  if (emitFlashAttention(ctx))
    return;
  // A lone reduction with few rows (a bias gradient) is spread over blocks
  // by SplitReduction.cpp.
  if (emitSplitReduction(ctx))
    return;
  if (split) {
    std::vector<int64_t> s = shapeOf(pre);
    analysis.parallelDims = rows.parallelDims = split;
    analysis.rowShape.assign(s.begin(), s.begin() + split);
    analysis.rows = product(analysis.rowShape);
    analysis.splitReason = isa<Conv2dOp>(analysis.stages.back())
                               ? "rows of the convolution: results through their layout"
                               : "query rows of the attention: results through their layout";
  }
  // warp_rows: each of the block's warps takes its own rows.
  int64_t warps = rows.warpRows ? std::max<int64_t>(1, ctx.schedule.getBlock()[0] / 32) : 1;
  int64_t cap = std::max<int64_t>(1, ctx.schedule.getGrid()[0]);
  ctx.info.grid[0] =
      (unsigned)std::max<int64_t>(1, std::min((analysis.rows + warps - 1) / warps, cap));
  // dlc-tile sizes the block by the widest reduction, but a window stage
  // (conv2d, pooling) gives a thread (or a warp) each output element of the
  // row: a convolution's weight gradient (one row of 2400 outputs, each a
  // sum of 6400 products, in the Fashion-MNIST CNN's train step) ran on 32
  // threads.
  for (Operation *stage : analysis.stages)
    if (isa<Conv2dOp, MaxPool2dOp, AvgPool2dOp>(stage))
      ctx.info.block[0] = std::max<unsigned>(ctx.info.block[0], (unsigned)rows.windowThreads(stage));

  // Stage results: this row's elements in shared memory (a row per warp
  // under warp_rows), or the whole tensor in global scratch when they need
  // more than 48 KB.
  int64_t smem = 0;
  for (Operation *stage : analysis.stages) {
    Value v = stage->getResult(0);
    smem += (warps * rows.perRow(v) * elementSize(elementDType(v)) + 15) / 16 * 16;
  }
  bool shared = smem <= 48 * 1024;
  out.line(llvm::formatv("// {0} row(s) of shape {1} ({2}); stages in {3}",
                         analysis.rows, shapeText(analysis.rowShape),
                         analysis.splitReason.empty() ? "the split"
                                                      : analysis.splitReason,
                         shared ? "shared memory" : "global scratch")
               .str());
  if (shared && smem) {
    ctx.info.dynamicSharedBytes = (uint32_t)smem;
    out.line("DLC_DYNAMIC_SHARED(dlc_smem);");
  }
  if (rows.warpRows) {
    out.line("const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;");
    out.open(llvm::formatv("for (int64_t row = (int64_t)blockIdx.x * {1} + warp; row < {0}; "
                           "row += (int64_t)gridDim.x * {1})",
                           analysis.rows, warps)
                 .str());
  } else {
    out.open(llvm::formatv("for (int64_t row = blockIdx.x; row < {0}; row += gridDim.x)",
                           analysis.rows)
                 .str());
  }
  rows.rowIndex = decompose(out, "row", analysis.rowShape);
  int64_t offset = 0;
  for (auto [s, stage] : llvm::enumerate(analysis.stages)) {
    Value v = stage->getResult(0);
    DType dtype = elementDType(v);
    std::string type = ctx.target.storageType(dtype);
    if (shared) {
      std::string base = "rb" + std::to_string(s);
      out.line(llvm::formatv("const int64_t {0} = row * {1};", base, rows.perRow(v)).str());
      std::string ptr = llvm::formatv("(({0} *)(dlc_smem + {1}))", type, offset).str();
      if (rows.warpRows)
        ptr = llvm::formatv("({0} + warp * {1})", ptr, rows.perRow(v)).str();
      ctx.buffers[v] = Buffer{ptr, dtype, shapeOf(v), base};
      offset += (warps * rows.perRow(v) * elementSize(dtype) + 15) / 16 * 16;
    } else {
      std::string name = ctx.info.entry + "_stage" + std::to_string(s);
      ctx.globals += llvm::formatv("__device__ {0} {1}[{2}];  // {3}\n", type, name,
                                   std::max<int64_t>(1, product(shapeOf(v))),
                                   describeOp(stage))
                         .str();
      ctx.buffers[v] = Buffer{name, dtype, shapeOf(v), ""};
    }
    llvm::TypeSwitch<Operation *>(stage)
        .Case([&](MatmulOp op) { rows.matmul(op); })
        .Case([&](SoftmaxOp op) { rows.softmax(op, false); })
        .Case([&](LogSoftmaxOp op) { rows.softmax(op, true); })
        .Case([&](LayerNormOp op) { rows.norm(op, false); })
        .Case([&](RmsNormOp op) { rows.norm(op, true); })
        .Case([&](ReduceOpInterface op) { rows.reduce(op); })
        .Case([&](Conv2dOp op) { rows.conv2d(op); })
        .Case([&](MaxPool2dOp op) { rows.pool(op, true); })
        .Case([&](AvgPool2dOp op) { rows.pool(op, false); })
        .Case<CrossEntropyOp, MseOp>([&](Operation *op) { rows.loss(op); });
    out.line(rows.rowBarrier());
  }
  // The results, a thread per element of the row, results of one shape
  // together; with the attention split, each through its layout tail.
  if (split) {
    rows.openStrided("e", rows.perRow(pre));
    Index preIndex = rows.rowElement(pre, "e");
    std::string value = rows.read(pre, preIndex);
    for (auto [r, result] : llvm::enumerate(ctx.view.results)) {
      SmallVector<Operation *> tail;
      for (Value v = result; v != pre; v = v.getDefiningOp()->getOperand(0))
        tail.push_back(v.getDefiningOp());
      std::vector<int64_t> shape = shapeOf(pre);
      Index index = indexThroughLayoutTail(out, tail, preIndex, shape);
      const Buffer &buffer = ctx.results[r];
      out.line(buffer.ptr + "[" + flatIndex(shape, index) + "] = " +
               ctx.target.store(buffer.dtype, value) + ";");
    }
    rows.close();
  }
  for (const auto &group : analysis.resultGroups) {
    if (split)
      break;
    Value first = ctx.view.results[group.front()];
    int64_t n = rows.perRow(first);
    out.line("// result(s) " + shapeText(shapeOf(first)));
    rows.openStrided("e", n);
    Index index = rows.rowElement(first, "e");
    std::vector<std::string> values;
    for (unsigned r : group)
      values.push_back(rows.read(ctx.view.results[r], index));
    for (auto [i, r] : llvm::enumerate(group)) {
      const Buffer &buffer = ctx.results[r];
      out.line(buffer.ptr + "[row * " + std::to_string(n) + " + e] = " +
               ctx.target.store(buffer.dtype, values[i]) + ";");
    }
    rows.close();
  }
  out.line(rows.rowBarrier());
  out.close();
}
