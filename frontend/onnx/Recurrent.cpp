//===- Recurrent.cpp - ONNX RNN, GRU and LSTM, unrolled -------------------===//
//
// A recurrent node becomes its time steps, unrolled (the sequence length is
// static): the input projection of every step is one matmul over the whole
// sequence, then each step adds the recurrent projection of the previous
// state and applies the gates with dlc's element-wise ops. Bidirectional
// nodes run the reverse direction over the steps in reverse and concatenate.
// `sequence_lens` masks the steps past a batch entry's length (its state
// holds, its outputs are zero), as ONNX specifies.
//
//===----------------------------------------------------------------------===//

#include "frontend/onnx/ShapeHelpers.h"

using namespace mlir;

namespace dlc::onnximport {

namespace {
enum class Cell { Rnn, Gru, Lstm };

/// One activation function of the node, with its alpha and beta.
struct Activation {
  std::string name;
  double alpha = 0, beta = 0;
};

/// Builds the steps of one node.
struct Recurrence {
  NodeImporter &n;
  Cell cell;
  int64_t hidden = 0, gates = 1, seq = 0, batch = 0;
  std::optional<double> clip;
  bool linearBeforeReset = false, inputForget = false;
  /// Activations of one direction: f (RNN); f, g (GRU); f, g, h (LSTM).
  SmallVector<Activation, 6> activations;
  Type element;
  /// [batch, 1] of i64, when sequence_lens is given.
  Value lengths;

  Value mm(Value x, Value w) {
    return n.create<MatmulOp>({x, w},
                              {n.named("transpose_b", n.b.getBoolAttr(true))});
  }
  Value add(Value a, Value b) { return n.create<AddOp>({a, b}); }
  Value mul(Value a, Value b) { return n.create<MulOp>({a, b}); }
  Value scalar(double v) { return n.scalar(v, element); }
  /// Columns [k * hidden, (k + 1) * hidden) of a [rows, c] value.
  Value gate(Value x, int64_t k) {
    auto shape = shapeOf(x);
    return slice(n, x, {0, k * hidden}, {shape[0], (k + 1) * hidden}, {1, 1});
  }
  Value clipped(Value x) {
    if (!clip)
      return x;
    return n.create<MinOp>({n.create<MaxOp>({x, scalar(-*clip)}), scalar(*clip)});
  }
  Value apply(const Activation &a, Value x);
  /// The steps of direction `d` (0 forward, 1 reverse); the outputs of
  /// every step at its time position, and the final states.
  LogicalResult run(Value x, Value w, Value r, Value bias, Value h0, Value c0,
                    Value peep, bool reverse, const SmallVector<Activation> &act,
                    SmallVector<Value> &ys, Value &hLast, Value &cLast);
};
} // namespace

Value Recurrence::apply(const Activation &a, Value x) {
  if (!x)
    return {};
  const std::string &f = a.name;
  if (f == "Sigmoid")
    return n.create<SigmoidOp>({x});
  if (f == "Tanh")
    return n.create<TanhOp>({x});
  if (f == "Relu")
    return n.create<ReluOp>({x});
  if (f == "Softplus")
    return n.create<SoftplusOp>({x});
  if (f == "Affine")
    return add(mul(x, scalar(a.alpha)), scalar(a.beta));
  if (f == "LeakyRelu")
    return n.create<MaxOp>({x, mul(x, scalar(a.alpha))});
  if (f == "ThresholdedRelu")
    return n.create<SelectOp>(
        {n.compare(ComparePredicate::gt, x, scalar(a.alpha)), x, scalar(0)});
  if (f == "ScaledTanh")
    return mul(n.create<TanhOp>({mul(x, scalar(a.beta))}), scalar(a.alpha));
  if (f == "HardSigmoid")
    return n.create<MinOp>(
        {n.create<MaxOp>({add(mul(x, scalar(a.alpha)), scalar(a.beta)),
                          scalar(0)}),
         scalar(1)});
  if (f == "Elu")
    return n.create<SelectOp>(
        {n.compare(ComparePredicate::lt, x, scalar(0)),
         mul(n.create<SubOp>({n.create<ExpOp>({x}), scalar(1)}),
             scalar(a.alpha)),
         x});
  if (f == "Softsign")
    return n.create<DivOp>({x, add(n.create<AbsOp>({x}), scalar(1))});
  n.error() << "activation '" << f << "' is not supported";
  return {};
}

LogicalResult Recurrence::run(Value x, Value w, Value r, Value bias, Value h0,
                              Value c0, Value peep, bool reverse,
                              const SmallVector<Activation> &act,
                              SmallVector<Value> &ys, Value &hLast,
                              Value &cLast) {
  // The input projection of every step at once: [seq, batch, gates*hidden].
  Value xw = mm(x, w);
  Value wb, rb;
  if (bias) {
    wb = slice(n, bias, {0}, {gates * hidden}, {1});
    rb = slice(n, bias, {gates * hidden}, {2 * gates * hidden}, {1});
    xw = add(xw, wb);
    if (cell != Cell::Gru)
      xw = add(xw, rb);
  }
  Value h = h0, c = c0;
  Value zero = n.broadcastTo(scalar(0), {batch, hidden});
  ys.assign(seq, Value());
  Value pi, po, pf;
  if (peep) {
    pi = slice(n, peep, {0}, {hidden}, {1});
    po = slice(n, peep, {hidden}, {2 * hidden}, {1});
    pf = slice(n, peep, {2 * hidden}, {3 * hidden}, {1});
  }
  for (int64_t step = 0; step < seq; ++step) {
    int64_t t = reverse ? seq - 1 - step : step;
    Value xt = n.reshape(slice(n, xw, {t, 0, 0}, {t + 1, batch, gates * hidden},
                               {1, 1, 1}),
                         {batch, gates * hidden});
    Value hNew, cNew;
    if (cell == Cell::Rnn) {
      hNew = apply(act[0], clipped(add(xt, mm(h, r))));
    } else if (cell == Cell::Lstm) {
      Value all = add(xt, mm(h, r));
      Value i = gate(all, 0), o = gate(all, 1), f = gate(all, 2),
            g = gate(all, 3);
      if (peep) {
        i = add(i, mul(pi, c));
        f = add(f, mul(pf, c));
      }
      i = apply(act[0], clipped(i));
      f = inputForget ? n.create<SubOp>({scalar(1), i})
                      : apply(act[0], clipped(f));
      g = apply(act[1], clipped(g));
      cNew = add(mul(f, c), mul(i, g));
      if (peep)
        o = add(o, mul(po, cNew));
      o = apply(act[0], clipped(o));
      hNew = mul(o, apply(act[2], cNew));
    } else {
      // GRU: z, r, h; the recurrent bias of h depends on linear_before_reset.
      Value rz = slice(n, r, {0, 0}, {2 * hidden, hidden}, {1, 1});
      Value rh = slice(n, r, {2 * hidden, 0}, {3 * hidden, hidden}, {1, 1});
      Value zr = add(slice(n, xt, {0, 0}, {batch, 2 * hidden}, {1, 1}),
                     mm(h, rz));
      Value rbh;
      if (bias) {
        zr = add(zr, slice(n, rb, {0}, {2 * hidden}, {1}));
        rbh = slice(n, rb, {2 * hidden}, {3 * hidden}, {1});
      }
      Value z = apply(act[0], clipped(gate(zr, 0)));
      Value reset = apply(act[0], clipped(gate(zr, 1)));
      Value recurrent;
      if (linearBeforeReset) {
        recurrent = mm(h, rh);
        if (rbh)
          recurrent = add(recurrent, rbh);
        recurrent = mul(reset, recurrent);
      } else {
        recurrent = mm(mul(reset, h), rh);
        if (rbh)
          recurrent = add(recurrent, rbh);
      }
      Value hh = apply(act[1], clipped(add(gate(xt, 2), recurrent)));
      hNew = add(mul(n.create<SubOp>({scalar(1), z}), hh), mul(z, h));
    }
    Value y = hNew;
    if (lengths) {
      // Steps at or past a batch entry's length keep its state.
      Value live = n.compare(ComparePredicate::gt, lengths,
                             n.scalar(t, n.i64()));
      hNew = n.create<SelectOp>({live, hNew, h});
      if (cNew)
        cNew = n.create<SelectOp>({live, cNew, c});
      y = n.create<SelectOp>({live, y, zero});
    }
    h = hNew;
    c = cNew;
    ys[t] = y;
    if (!h)
      return failure();
  }
  hLast = h;
  cLast = c;
  return success();
}

/// The ONNX default activations of each cell, per direction.
static SmallVector<StringRef> defaultActivations(Cell cell) {
  switch (cell) {
  case Cell::Rnn:
    return {"Tanh"};
  case Cell::Gru:
    return {"Sigmoid", "Tanh"};
  case Cell::Lstm:
    return {"Sigmoid", "Tanh", "Tanh"};
  }
  return {};
}

/// Whether activation `f` reads alpha / beta (in the order ONNX Runtime
/// consumes activation_alpha and activation_beta), and their defaults.
static void activationParams(StringRef f, bool &alpha, bool &beta,
                             double &alphaDefault, double &betaDefault) {
  alpha = llvm::is_contained({"Affine", "LeakyRelu", "ThresholdedRelu",
                              "ScaledTanh", "HardSigmoid", "Elu"},
                             f);
  beta = llvm::is_contained({"Affine", "ScaledTanh", "HardSigmoid"}, f);
  alphaDefault = f == "LeakyRelu" ? 0.01 : f == "HardSigmoid" ? 0.2 : 1.0;
  betaDefault = f == "HardSigmoid" ? 0.5 : f == "ScaledTanh" ? 1.0 : 0.0;
}

template <Cell kind> static LogicalResult importRecurrent(NodeImporter &n) {
  Recurrence rec{n, kind};
  rec.gates = kind == Cell::Rnn ? 1 : kind == Cell::Gru ? 3 : 4;
  Value x = n.input(0), w = n.input(1), r = n.input(2);
  auto hiddenAttr = n.intAttr("hidden_size", 0);
  auto direction = n.stringAttr("direction", "forward");
  auto layout = n.intAttr("layout", 0);
  if (!x || !w || !r || !hiddenAttr || !direction || !layout)
    return failure();
  auto xShape = shapeOf(x), wShape = shapeOf(w);
  rec.element = cast<RankedTensorType>(x.getType()).getElementType();
  if (!isa<FloatType>(rec.element))
    return n.error() << "X must be a float tensor";
  if (xShape.size() != 3 || wShape.size() != 3)
    return n.error() << "X and W must have rank 3";
  if (*layout)
    x = n.transpose(x, {1, 0, 2});
  xShape = shapeOf(x);
  rec.seq = xShape[0];
  rec.batch = xShape[1];
  int64_t dirs = *direction == "bidirectional" ? 2 : 1;
  if (*direction != "forward" && *direction != "reverse" &&
      *direction != "bidirectional")
    return n.unsupported("direction", "unknown value '" + *direction + "'");
  rec.hidden = *hiddenAttr ? *hiddenAttr : wShape[1] / rec.gates;
  int64_t hidden = rec.hidden, batch = rec.batch;
  if (wShape[0] != dirs || wShape[1] != rec.gates * hidden)
    return n.error() << "W has shape [" << wShape[0] << ", " << wShape[1]
                     << ", ...]; expected [" << dirs << ", "
                     << rec.gates * hidden << ", ...]";
  // Every other input's shape too, before any op is built: a mismatch
  // would otherwise make an op fail its shape inference halfway through
  // (R of rank 2 crashed on the null value; found by the onnx fuzz target).
  auto expectShape = [&](size_t i, const char *name,
                         ArrayRef<int64_t> expected) -> LogicalResult {
    if (!n.hasInput(i))
      return success();
    Value v = n.input(i);
    if (!v)
      return failure();
    // Every input but sequence_lens (integers) has X's element type; a
    // mismatch would fail inside the first matmul, halfway through the
    // steps (an i8 R crashed on the null value; the onnx fuzz target).
    Type got = cast<RankedTensorType>(v.getType()).getElementType();
    if (i == 4 && !isa<IntegerType>(got))
      return n.error() << name << " has element type " << got
                       << "; expected an integer type";
    if (i != 4 && got != rec.element)
      return n.error() << name << " has element type " << got
                       << "; expected X's, " << rec.element;
    auto shape = shapeOf(v);
    if (ArrayRef<int64_t>(shape) == expected)
      return success();
    auto print = [](ArrayRef<int64_t> dims) {
      std::string s = "[";
      for (auto [k, d] : llvm::enumerate(dims))
        s += (k ? ", " : "") + std::to_string(d);
      return s + "]";
    };
    return n.error() << name << " has shape " << print(shape) << "; expected "
                     << print(expected);
  };
  int64_t gh = rec.gates * hidden;
  // initial_h/initial_c are [batch, dirs, hidden] under layout 1.
  SmallVector<int64_t> stateShape =
      *layout ? SmallVector<int64_t>{batch, dirs, hidden}
              : SmallVector<int64_t>{dirs, batch, hidden};
  if (failed(expectShape(1, "W", {dirs, gh, xShape[2]})) ||
      failed(expectShape(2, "R", {dirs, gh, hidden})) ||
      failed(expectShape(3, "B", {dirs, 2 * gh})) ||
      failed(expectShape(4, "sequence_lens", {batch})) ||
      failed(expectShape(5, "initial_h", stateShape)) ||
      (kind == Cell::Lstm &&
       (failed(expectShape(6, "initial_c", stateShape)) ||
        failed(expectShape(7, "P", {dirs, 3 * hidden})))))
    return failure();
  if (n.hasAttr("clip")) {
    auto clip = n.floatAttr("clip", 0);
    if (!clip)
      return failure();
    rec.clip = *clip;
  }
  if (kind == Cell::Gru) {
    auto lbr = n.intAttr("linear_before_reset", 0);
    if (!lbr)
      return failure();
    rec.linearBeforeReset = *lbr != 0;
  }
  if (kind == Cell::Lstm) {
    auto coupled = n.intAttr("input_forget", 0);
    if (!coupled)
      return failure();
    rec.inputForget = *coupled != 0;
  }
  // Activations: one list for all directions, alpha/beta consumed in order.
  SmallVector<std::string> fs;
  if (const auto *a = n.attr("activations"))
    for (const std::string &s : a->strings())
      fs.push_back(s);
  auto defaults = defaultActivations(kind);
  if (fs.empty())
    for (int64_t d = 0; d < dirs; ++d)
      for (StringRef f : defaults)
        fs.push_back(f.str());
  if (fs.size() != defaults.size() * dirs)
    return n.error() << "activations lists " << fs.size() << " functions; "
                     << defaults.size() * dirs << " expected";
  SmallVector<float> alphas, betas;
  if (const auto *a = n.attr("activation_alpha"))
    alphas.assign(a->floats().begin(), a->floats().end());
  if (const auto *a = n.attr("activation_beta"))
    betas.assign(a->floats().begin(), a->floats().end());
  size_t ai = 0, bi = 0;
  SmallVector<SmallVector<Activation>> acts(dirs);
  for (auto [k, f] : llvm::enumerate(fs)) {
    Activation a{f};
    bool takesAlpha, takesBeta;
    activationParams(f, takesAlpha, takesBeta, a.alpha, a.beta);
    if (takesAlpha && ai < alphas.size())
      a.alpha = alphas[ai++];
    if (takesBeta && bi < betas.size())
      a.beta = betas[bi++];
    acts[k / defaults.size()].push_back(a);
  }
  // sequence_lens: [batch]; every length equal to seq needs no mask.
  if (n.hasInput(4)) {
    const Constant *lens = n.foldable(4);
    bool full = lens && llvm::all_of(lens->ints, [&](int64_t l) {
      return l == rec.seq;
    });
    if (!full) {
      if (*direction != "forward")
        return n.error() << "sequence_lens shorter than the sequence are "
                            "supported in the forward direction only";
      rec.lengths = n.reshape(n.cast(n.input(4), n.i64()), {batch, 1});
    }
  }
  // Input i's slice for direction d, without the direction dimension.
  auto perDirection = [&](size_t i, int64_t d) -> Value {
    if (!n.hasInput(i))
      return {};
    Value v = n.input(i);
    if (*layout && (i == 5 || i == 6))
      v = n.transpose(v, {1, 0, 2});
    auto shape = shapeOf(v);
    SmallVector<int64_t> starts(shape.size(), 0), limits(shape),
        strides(shape.size(), 1);
    starts[0] = d;
    limits[0] = d + 1;
    SmallVector<int64_t> rest(shape.begin() + 1, shape.end());
    return n.reshape(slice(n, v, starts, limits, strides), rest);
  };
  SmallVector<Value> ysAll, hs, cs;
  for (int64_t d = 0; d < dirs; ++d) {
    bool reverse = *direction == "reverse" || d == 1;
    Value wd = perDirection(1, d), rd = perDirection(2, d);
    Value bd = perDirection(3, d);
    Value h0 = n.hasInput(5) ? perDirection(5, d)
                             : n.broadcastTo(rec.scalar(0), {batch, hidden});
    Value c0 = kind != Cell::Lstm ? Value()
               : n.hasInput(6)
                   ? perDirection(6, d)
                   : n.broadcastTo(rec.scalar(0), {batch, hidden});
    Value peep = kind == Cell::Lstm ? perDirection(7, d) : Value();
    SmallVector<Value> ys;
    Value hLast, cLast;
    if (failed(rec.run(x, wd, rd, bd, h0, c0, peep, reverse, acts[d], ys,
                       hLast, cLast)))
      return failure();
    // Y of this direction: [seq, 1, batch, hidden].
    SmallVector<Value> steps;
    for (Value y : ys)
      steps.push_back(n.reshape(y, {1, 1, batch, hidden}));
    ysAll.push_back(steps.size() == 1
                        ? steps[0]
                        : n.create<ConcatOp>(steps, {n.i64("axis", 0)}));
    hs.push_back(n.reshape(hLast, {1, batch, hidden}));
    if (cLast)
      cs.push_back(n.reshape(cLast, {1, batch, hidden}));
  }
  auto join = [&](SmallVector<Value> &parts, int64_t axis) {
    return parts.size() == 1 ? parts[0]
                             : n.create<ConcatOp>(parts, {n.i64("axis", axis)});
  };
  Value y = join(ysAll, 1), yh = join(hs, 0);
  Value yc = kind == Cell::Lstm ? join(cs, 0) : Value();
  if (*layout) {
    y = n.transpose(y, {2, 0, 1, 3});
    yh = n.transpose(yh, {1, 0, 2});
    if (yc)
      yc = n.transpose(yc, {1, 0, 2});
  }
  if (n.wantsOutput(0) && failed(n.setOutput(0, y)))
    return failure();
  if (n.wantsOutput(1) && failed(n.setOutput(1, yh)))
    return failure();
  if (kind == Cell::Lstm && n.wantsOutput(2) && failed(n.setOutput(2, yc)))
    return failure();
  return success();
}

void addRecurrentOps(OpTable &t) {
  t["RNN"] = {{"activation_alpha", "activation_beta", "activations", "clip",
               "direction", "hidden_size", "layout"},
              importRecurrent<Cell::Rnn>};
  t["GRU"] = {{"activation_alpha", "activation_beta", "activations", "clip",
               "direction", "hidden_size", "layout", "linear_before_reset"},
              importRecurrent<Cell::Gru>};
  t["LSTM"] = {{"activation_alpha", "activation_beta", "activations", "clip",
                "direction", "hidden_size", "input_forget", "layout"},
               importRecurrent<Cell::Lstm>};
}

} // namespace dlc::onnximport
