//===- Reduction.cpp - reductions, softmax, norms and losses on the CPU ---===//
//
// Everything here accumulates in double and rounds each result element once,
// as the oracle does (oracle/kernels/Reduction.cpp), so results match it to
// the last bit or close to it (the norms' and softmax's sums in lanes that
// vectorise: emitLaneSum).
//
//===----------------------------------------------------------------------===//

#include "codegen/cpu/MaskedAttention.h"
#include "codegen/cpu/Stages.h"

#include "ir/DlcDialect.h"

#include "mlir/IR/BuiltinTypes.h"

#include <algorithm>
#include <cstdio>

using namespace mlir;
using namespace dlc;
using namespace dlc::codegen;

static std::string str(int64_t v) { return std::to_string(v); }
static int64_t normalize(int64_t axis, int64_t rank) {
  return axis < 0 ? axis + rank : axis;
}

/// Declares `double <name>` = the fold over j in [0, n) of `term` (an
/// expression of j) by `update` (the statement that folds the double `v`
/// into `acc`), starting at `init`, in kLanes partial folds (lane l takes
/// the j = l mod kLanes), folded in lane order at the end. One running sum
/// is a chain of dependent adds the compiler may not reorder (no
/// -ffast-math), and a running max does not vectorise either: a 768-wide
/// layer norm took 2 µs a row. The lanes vectorise; a sum differs from the
/// oracle's sequential order by a few ulps of double, far below the f32
/// result's, and a max (NaN ignored, as the oracle's) not at all.
static constexpr int64_t kLanes = 16;
/// `type` is the lanes' and the result's type: "float" where the fold is
/// exact in float (a max of floats), which vectorises at twice the lanes.
/// The terms j in [from, n) (C expressions), each the expression `term()`
/// returns where the loop has declared j (it may declare temporaries).
static void emitLaneFold(CodeWriter &out, const std::string &name, const std::string &from,
                         const std::string &n, const std::function<std::string()> &term,
                         const std::string &init, const std::string &update,
                         const std::string &type) {
  std::string lanes = name + "Lanes";
  auto fold = [&](const std::string &acc, const std::string &value) {
    out.line("{");
    out.line("  " + type + " &acc = " + acc + ";");
    out.line("  const " + type + " v = " + value + ";");
    out.line("  " + update);
    out.line("}");
  };
  out.line(type + " " + lanes + "[" + str(kLanes) + "];");
  out.open("for (int64_t l = 0; l < " + str(kLanes) + "; ++l)");
  out.line(lanes + "[l] = " + init + ";");
  out.close();
  const std::string whole = out.fresh("whole");
  out.line("const int64_t " + whole + " = " + from + " + (" + n + " - " + from + ") / " +
           str(kLanes) + " * " + str(kLanes) + ";");
  out.open("for (int64_t jb = " + from + "; jb < " + whole + "; jb += " + str(kLanes) + ")");
  out.open("for (int64_t l = 0; l < " + str(kLanes) + "; ++l)");
  out.line("const int64_t j = jb + l;");
  fold(lanes + "[l]", term());
  out.close();
  out.close();
  out.open("for (int64_t j = " + whole + "; j < " + n + "; ++j)");
  fold(lanes + "[j - " + whole + "]", term());
  out.close();
  out.line(type + " " + name + " = " + init + ";");
  out.open("for (int64_t l = 0; l < " + str(kLanes) + "; ++l)");
  fold(name, lanes + "[l]");
  out.close();
}
static void emitLaneFold(CodeWriter &out, const std::string &name, int64_t n,
                         const std::string &term, const std::string &init,
                         const std::string &update, const std::string &type = "double") {
  emitLaneFold(
      out, name, "0", str(n), [&] { return term; }, init, update, type);
}

static void emitLaneSum(CodeWriter &out, const std::string &sum, int64_t n,
                        const std::string &term) {
  emitLaneFold(out, sum, n, term, "0", "acc += v;");
}

void dlc::codegen::emitReduce(Operation *op, StageContext &ctx) {
  std::vector<int64_t> x = shapeOf(op->getOperand(0)), y = shapeOf(op->getResult(0));
  int64_t rank = x.size();
  std::vector<bool> reduced(rank, false);
  for (int64_t a : op->getAttrOfType<DenseI64ArrayAttr>("axes").asArrayRef())
    reduced[normalize(a, rank)] = true;
  int64_t count = 1, outNumel = 1;
  for (int64_t d = 0; d < rank; ++d)
    if (reduced[d])
      count *= x[d];
  for (int64_t d : y)
    outNumel *= d;
  Buffer X = ctx.operand(op->getOperand(0));
  CodeWriter &out = ctx.out;
  ReduceKind reduceKind = cast<ReduceOpInterface>(op).getReduceKind();
  std::string init = "0", update = "acc += v;"; // Sum, Mean
  switch (reduceKind) {
  case ReduceKind::Max:
    init = "-INFINITY";
    update = "acc = v != v || acc != acc ? NAN : v > acc ? v : acc;";
    break;
  case ReduceKind::Min:
    init = "INFINITY";
    update = "acc = v != v || acc != acc ? NAN : v < acc ? v : acc;";
    break;
  case ReduceKind::Prod:
    init = "1";
    update = "acc *= v;";
    break;
  case ReduceKind::Sum:
  case ReduceKind::Mean:
    break;
  }

  out.open("for (int64_t o = " + ctx.rowsBegin(outNumel) + "; o < " +
           ctx.rowsEnd(outNumel) + "; ++o)");
  // The kept dimensions of the input, from the result's flat index (its
  // flat index equals that of the keepdims shape).
  std::vector<std::string> index(rank);
  int64_t stride = 1;
  for (int64_t d = rank; d-- > 0;) {
    if (reduced[d])
      continue;
    index[d] = "k" + str(d);
    out.line("const int64_t k" + str(d) + " = (o / " + str(stride) + ") % " +
             str(x[d]) + ";");
    stride *= x[d];
  }
  out.line("double acc = " + init + ";");
  int loops = 0;
  for (int64_t d = 0; d < rank; ++d)
    if (reduced[d]) {
      index[d] = "r" + str(d);
      out.open("for (int64_t r" + str(d) + " = 0; r" + str(d) + " < " + str(x[d]) +
               "; ++r" + str(d) + ")");
      ++loops;
    }
  out.line("const double v = " + loadAt(ctx.target, X, flatIndex(x, index)) + ";");
  out.line(update);
  for (int i = 0; i < loops; ++i)
    out.close();
  if (reduceKind == ReduceKind::Mean)
    out.line("acc /= " + str(count) + ";");
  out.line(storeAt(ctx.target, ctx.result, "o", "acc"));
  out.close();
}

/// outer x size x inner around `axis`.
static void splitAt(const std::vector<int64_t> &shape, int64_t axis,
                    int64_t &outer, int64_t &size, int64_t &inner) {
  outer = inner = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= shape[d];
  size = shape[axis];
  for (size_t d = axis + 1; d < shape.size(); ++d)
    inner *= shape[d];
}

/// Masked attention's softmax (MaskedAttention.h) over rows of `size`
/// keys, of which row o's tile attends [k0, k1): the max, exponentials and
/// sum over those only, the rest of the row 0 (exp(fill - max) is, see
/// MaskedKeys.h), with `e` the row's exponentials as emitSoftmax's.
static void emitMaskedSoftmax(StageContext &ctx, Value X, int64_t outer, int64_t Tq,
                              int64_t size, const std::string &e, const std::string &eType,
                              bool wide) {
  CodeWriter &out = ctx.out;
  // X read where it is used (twice per key), not packed whole by a loop
  // of its own first: the keys left out are never computed.
  const std::vector<int64_t> shape = shapeOf(X);
  auto element = [&](const std::string &key) {
    Index index(shape.size());
    std::string rest = "o";
    for (size_t d = shape.size() - 1; d-- > 0;) {
      index[d] = d == 0 ? rest : "(" + rest + ") % " + str(shape[d]);
      rest = "(" + rest + ") / " + str(shape[d]);
    }
    index.back() = key;
    return ctx.elementAt(X, index);
  };
  const KeyTiles &keys = *ctx.keyTiles;
  out.open("for (int64_t o = " + ctx.rowsBegin(outer) + "; o < " + ctx.rowsEnd(outer) +
           "; ++o)");
  emitTileKeys(out, keys, "o % " + str(Tq) + " / " + str(keys.tile), size);
  const std::string at = "o * " + str(size) + " + k";
  emitLaneFold(
      out, "maxValue", "k0", "k1", [&] { return "(" + eType + ")(" + element("j") + ")"; },
      "-INFINITY", "acc = v > acc ? v : acc;", eType);
  out.open("for (int64_t k = k0; k < k1; ++k)");
  if (wide)
    out.line(e + "[k] = dlc_exp((double)(" + element("k") + ") - maxValue);");
  else
    out.line(e + "[k] = dlc_expf((float)((double)(" + element("k") + ") - maxValue));");
  out.close();
  emitLaneFold(
      out, "sum", "k0", "k1", [&] { return "(double)" + e + "[j]"; }, "0", "acc += v;",
      "double");
  if (!wide)
    out.line("const double invSum = 1.0 / sum;");
  // Three loops, not one choosing per key: that one vectorised with masked
  // loads and 64-bit compares, a third of the softmax.
  out.open("for (int64_t k = 0; k < k0; ++k)");
  out.line(storeAt(ctx.target, ctx.result, at, "0.0"));
  out.close();
  out.open("for (int64_t k = k0; k < k1; ++k)");
  out.line(storeAt(ctx.target, ctx.result, at,
                   wide ? e + "[k] / sum" : "(double)" + e + "[k] * invSum"));
  out.close();
  out.open("for (int64_t k = k1; k < " + str(size) + "; ++k)");
  out.line(storeAt(ctx.target, ctx.result, at, "0.0"));
  out.close();
  out.close();
}

void dlc::codegen::emitSoftmax(Operation *op, StageContext &ctx) {
  bool logarithmic = isa<LogSoftmaxOp>(op);
  std::vector<int64_t> x = shapeOf(op->getOperand(0));
  auto axisAttr = op->getAttrOfType<IntegerAttr>("axis");
  int64_t axis = normalize(axisAttr ? axisAttr.getInt() : -1, x.size());
  int64_t outer, size, inner;
  splitAt(x, axis, outer, size, inner);
  CodeWriter &out = ctx.out;
  bool wide = cast<ShapedType>(op->getOperand(0).getType()).getElementType().isF64();
  std::string eType = wide ? "double" : "float";
  if (ctx.keyTiles && !logarithmic && inner == 1 && x.size() >= 2) {
    std::string e = out.fresh("e");
    out.line("DlcScratch " + e + "Memory(" + str(size) + " * sizeof(" + eType + "));");
    out.line(eType + " *" + e + " = (" + eType + " *)" + e + "Memory.data;");
    emitMaskedSoftmax(ctx, op->getOperand(0), outer, x[x.size() - 2], size, e, eType, wide);
    return;
  }
  Buffer X = ctx.operand(op->getOperand(0));
  std::string at = "(o * " + str(size) + " + k) * " + str(inner) + " + in";
  // exp(x - max) of a row into a buffer first (a loop the compiler
  // vectorises, dlc_exp being branch-free), then its sum (in lanes, in
  // double), then the normalised row: the values of the scalar form,
  // without its two libm calls per element. Below f64 the exponentials are
  // floats (dlc_expf, within 1e-8 of exp; x - max is rounded to float, a
  // relative error of |x - max| * 6e-8 on the smallest terms): twice the
  // lanes of double, which made softmax a third of an attention kernel.
  std::string e = out.fresh("e");
  out.line("DlcScratch " + e + "Memory(" + str(size) + " * sizeof(" + eType + "));");
  out.line(eType + " *" + e + " = (" + eType + " *)" + e + "Memory.data;");
  out.open("for (int64_t o = " + ctx.rowsBegin(outer) + "; o < " +
           ctx.rowsEnd(outer) + "; ++o)");
  out.open("for (int64_t in = 0; in < " + str(inner) + "; ++in)");
  {
    std::string atJ = "(o * " + str(size) + " + j) * " + str(inner) + " + in";
    // The max of floats is a float: folded in float lanes (exact).
    emitLaneFold(out, "maxValue", size, "(" + eType + ")" + loadAt(ctx.target, X, atJ),
                 "-INFINITY", "acc = v > acc ? v : acc;", eType);
  }
  out.open("for (int64_t k = 0; k < " + str(size) + "; ++k)");
  if (wide)
    out.line(e + "[k] = dlc_exp((double)" + loadAt(ctx.target, X, at) + " - maxValue);");
  else
    out.line(e + "[k] = dlc_expf((float)((double)" + loadAt(ctx.target, X, at) +
             " - maxValue));");
  out.close();
  emitLaneSum(out, "sum", size, "(double)" + e + "[j]");
  if (logarithmic)
    out.line("const double logSum = log(sum);");
  else if (!wide)
    out.line("const double invSum = 1.0 / sum;");
  out.open("for (int64_t k = 0; k < " + str(size) + "; ++k)");
  if (logarithmic) {
    out.line("const double shifted = (double)" + loadAt(ctx.target, X, at) + " - maxValue;");
    out.line(storeAt(ctx.target, ctx.result, at, "shifted - logSum"));
  } else {
    // Below f64, by the reciprocal (one more rounding in double, far
    // below the float result's; a division per element was a fifth of
    // the kernel).
    out.line(storeAt(ctx.target, ctx.result, at,
                     wide ? e + "[k] / sum" : "(double)" + e + "[k] * invSum"));
  }
  out.close();
  out.close();
  out.close();
}

void dlc::codegen::emitNorm(Operation *op, StageContext &ctx) {
  bool layer = isa<LayerNormOp>(op);
  std::vector<int64_t> x = shapeOf(op->getOperand(0));
  int64_t axis = normalize(op->getAttrOfType<IntegerAttr>("axis").getInt(), x.size());
  double epsilon = op->getAttrOfType<FloatAttr>("epsilon").getValueAsDouble();
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < (int64_t)x.size(); ++d)
    (d < axis ? outer : inner) *= x[d];
  Buffer X = ctx.operand(op->getOperand(0));
  Buffer scale = ctx.operand(op->getOperand(1));
  std::optional<Buffer> bias;
  if (layer && op->getNumOperands() > 2)
    bias = ctx.operand(op->getOperand(2));
  CodeWriter &out = ctx.out;
  std::string at = "o * " + str(inner) + " + j";
  char eps[64];
  snprintf(eps, sizeof eps, "%.17g", epsilon);
  out.open("for (int64_t o = " + ctx.rowsBegin(outer) + "; o < " +
           ctx.rowsEnd(outer) + "; ++o)");
  if (layer) {
    std::string x = "(double)" + loadAt(ctx.target, X, at);
    emitLaneSum(out, "mean", inner, x);
    out.line("mean /= " + str(inner) + ";");
    emitLaneSum(out, "var", inner, "(" + x + " - mean) * (" + x + " - mean)");
    out.line("var /= " + str(inner) + "; // biased, as the oracle");
    out.line("const double invStd = 1.0 / sqrt(var + " + std::string(eps) + ");");
    out.open("for (int64_t j = 0; j < " + str(inner) + "; ++j)");
    std::string v = "((double)" + loadAt(ctx.target, X, at) + " - mean) * invStd * (double)" +
                    loadAt(ctx.target, scale, "j");
    if (bias)
      v += " + (double)" + loadAt(ctx.target, *bias, "j");
    out.line(storeAt(ctx.target, ctx.result, at, v));
    out.close();
  } else {
    std::string x = "(double)" + loadAt(ctx.target, X, at);
    emitLaneSum(out, "meanSquare", inner, x + " * " + x);
    out.line("meanSquare /= " + str(inner) + ";");
    out.line("const double invRms = 1.0 / sqrt(meanSquare + " + std::string(eps) + ");");
    out.open("for (int64_t j = 0; j < " + str(inner) + "; ++j)");
    out.line(storeAt(ctx.target, ctx.result, at,
                     "(double)" + loadAt(ctx.target, X, at) + " * invRms * (double)" +
                         loadAt(ctx.target, scale, "j")));
    out.close();
  }
  out.close();
}

void dlc::codegen::emitLoss(Operation *op, StageContext &ctx) {
  CodeWriter &out = ctx.out;
  auto ce = dyn_cast<CrossEntropyOp>(op);
  LossReduction reduction =
      ce ? ce.getReduction() : cast<MseOp>(op).getReduction();
  std::vector<int64_t> first = shapeOf(op->getOperand(0));
  Buffer A = ctx.operand(op->getOperand(0)), B = ctx.operand(op->getOperand(1));
  int64_t positions = 1;
  // What a mean divides by: every position, or the counted ones.
  std::string count;
  if (reduction != LossReduction::none)
    out.line("double total = 0;");
  if (ce) {
    int64_t C = first.back();
    for (size_t d = 0; d + 1 < first.size(); ++d)
      positions *= first[d];
    int64_t ignored = ce.getIgnoreIndex();
    double smoothing = ce.getLabelSmoothing().convertToDouble();
    if (reduction == LossReduction::mean) {
      count = "counted";
      out.line("int64_t counted = 0; // the positions not ignored");
    }
    auto logit = [&](const std::string &c) {
      return loadAt(ctx.target, A, "p * " + str(C) + " + " + c);
    };
    out.open("for (int64_t p = 0; p < " + str(positions) + "; ++p)");
    out.line("const int64_t rawLabel = " + loadAt(ctx.target, B, "p") + ";");
    out.line("double loss = 0; // where the label is " + str(ignored) +
             " (ignore_index)");
    out.open("if (rawLabel != INT64_C(" + str(ignored) + "))");
    if (!count.empty())
      out.line("++counted;");
    out.line("const int64_t label = dlc_check_id(rawLabel, " + str(C) + ", " +
             ctx.checks->add(fb::CheckKind::label, op, C) +
             ", p); // out of range: fails its check, reads class 0");
    out.line(std::string("double maxValue = -INFINITY, sum = 0") +
             (smoothing != 0 ? ", rowSum = 0;" : ";"));
    out.open("for (int64_t c = 0; c < " + str(C) + "; ++c)");
    out.line("const double v = " + logit("c") + ";");
    out.line("maxValue = v > maxValue ? v : maxValue;");
    out.close();
    out.open("for (int64_t c = 0; c < " + str(C) + "; ++c)");
    out.line("sum += exp((double)" + logit("c") + " - maxValue);");
    if (smoothing != 0)
      out.line("rowSum += " + logit("c") + ";");
    out.close();
    out.line("const double logSumExp = log(sum) + maxValue;");
    out.line("loss = logSumExp - (double)" + logit("label") + ";");
    if (smoothing != 0) {
      char eps[64];
      snprintf(eps, sizeof eps, "%.17g", smoothing);
      out.line("// label_smoothing: (1 - e) loss + e mean_c(logSumExp - x[c])");
      out.line("loss = (1 - " + std::string(eps) + ") * loss + " + eps +
               " * (logSumExp - rowSum / " + str(C) + ");");
    }
    out.close();
  } else {
    for (int64_t d : first)
      positions *= d;
    out.open("for (int64_t p = 0; p < " + str(positions) + "; ++p)");
    out.line("const double d = (double)" + loadAt(ctx.target, A, "p") + " - (double)" +
             loadAt(ctx.target, B, "p") + ";");
    out.line("const double loss = d * d;");
  }
  if (reduction == LossReduction::none)
    out.line(storeAt(ctx.target, ctx.result, "p", "loss"));
  else
    out.line("total += loss;");
  out.close();
  if (reduction == LossReduction::mean)
    out.line(storeAt(ctx.target, ctx.result, "0",
                     "total / " + (count.empty() ? str(positions)
                                                 : "(double)" + count)));
  else if (reduction == LossReduction::sum)
    out.line(storeAt(ctx.target, ctx.result, "0", "total"));
}
