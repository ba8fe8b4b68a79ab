//===- Optimizers.cpp - the update a train step ends with -----------------===//

#include "passes/autodiff/Optimizers.h"

using namespace mlir;

namespace dlc {

FailureOr<OptimizerConfig> OptimizerConfig::read(DictionaryAttr dict,
                                                 Operation *op) {
  OptimizerConfig c;
  auto number = [&](StringRef key, double &out) {
    if (auto f = dict.getAs<FloatAttr>(key))
      out = f.getValueAsDouble();
  };
  if (auto kind = dict.getAs<StringAttr>("kind"))
    c.kind = kind.str();
  if (c.kind != "adam" && c.kind != "adamw" && c.kind != "sgd")
    return op->emitError("unknown optimizer '")
           << c.kind << "' (optimizers: adam, adamw, sgd)";
  // PyTorch's defaults where they differ from Adam's.
  if (c.kind == "sgd")
    c.lr = 1e-2;
  if (c.kind == "adamw")
    c.weightDecay = 1e-2;
  number("lr", c.lr);
  number("beta1", c.beta1);
  number("beta2", c.beta2);
  number("eps", c.eps);
  number("weight_decay", c.weightDecay);
  number("momentum", c.momentum);
  number("clip_norm", c.clipNorm);
  if (auto nesterov = dict.getAs<BoolAttr>("nesterov"))
    c.nesterov = nesterov.getValue();
  return c;
}

SmallVector<std::string> OptimizerConfig::momentNames() const {
  if (kind == "sgd")
    return momentum > 0 ? SmallVector<std::string>{"momentum"}
                        : SmallVector<std::string>{};
  return {"m", "v"};
}

Value sumToF32(VjpBuilder &b, Value x) {
  SmallVector<int64_t> all;
  for (int64_t d = 0; d < (int64_t)shapeOfValue(x).size(); ++d)
    all.push_back(d);
  return b.cast(b.reduceSum(x, all, false), b.builder().getF32Type());
}

void clipByGlobalNorm(VjpBuilder &b, MutableArrayRef<Value> grads,
                      double clipNorm) {
  Value total;
  for (Value g : grads) {
    if (!g)
      continue;
    Value sq = sumToF32(b, b.mul(g, g));
    total = total ? b.add(total, sq) : sq;
  }
  if (!total)
    return;
  Value norm = b.create<SqrtOp>({total});
  Value coef = b.div(b.like(norm, clipNorm), b.add(norm, b.like(norm, 1e-6)));
  Value scale = b.create<MinOp>({coef, b.like(coef, 1)});
  for (Value &g : grads)
    if (g)
      g = b.mul(g, b.cast(scale, cast<RankedTensorType>(g.getType())
                                     .getElementType()));
}

UpdateScalars buildUpdateScalars(VjpBuilder &b, const OptimizerConfig &config,
                                 Value lr, Value step) {
  UpdateScalars s{lr, {}, {}};
  if (config.kind == "sgd")
    return s;
  Value t = b.cast(step, lr.getType().cast<RankedTensorType>().getElementType());
  auto correction = [&](double beta) {
    return b.sub(b.like(t, 1), b.create<PowOp>({b.like(t, beta), t}));
  };
  s.biasCorrection1 = correction(config.beta1);
  s.biasCorrection2 = correction(config.beta2);
  return s;
}

SmallVector<Value> buildUpdate(VjpBuilder &b, const OptimizerConfig &c,
                               const UpdateScalars &s, Value p, Value g,
                               ArrayRef<Value> moments) {
  Type element = cast<RankedTensorType>(p.getType()).getElementType();
  auto scalar = [&](Value v) { return b.cast(v, element); };
  auto k = [&](double v) { return b.like(p, v); };
  Value lr = scalar(s.lr);
  if (c.kind == "sgd") {
    // torch.optim.SGD: g += wd p; buf = μ buf + g; g = nesterov ? g + μ buf
    // : buf; p -= lr g. (A zero buffer makes the first step's buf = g.)
    if (c.weightDecay > 0)
      g = b.add(g, b.mul(k(c.weightDecay), p));
    SmallVector<Value> result;
    if (c.momentum > 0) {
      Value buf = b.add(b.mul(k(c.momentum), moments[0]), g);
      g = c.nesterov ? b.add(g, b.mul(k(c.momentum), buf)) : buf;
      result = {b.sub(p, b.mul(lr, g)), buf};
    } else {
      result = {b.sub(p, b.mul(lr, g))};
    }
    return result;
  }
  // torch.optim.Adam (L2 weight decay into g) and AdamW (decoupled):
  // m = β1 m + (1-β1) g; v = β2 v + (1-β2) g²;
  // p -= lr (m / bc1) / (sqrt(v / bc2) + eps).
  if (c.kind == "adam" && c.weightDecay > 0)
    g = b.add(g, b.mul(k(c.weightDecay), p));
  Value m = b.add(b.mul(k(c.beta1), moments[0]), b.mul(k(1 - c.beta1), g));
  Value v = b.add(b.mul(k(c.beta2), moments[1]),
                  b.mul(k(1 - c.beta2), b.mul(g, g)));
  Value denom = b.add(b.create<SqrtOp>({b.div(v, scalar(s.biasCorrection2))}),
                      k(c.eps));
  Value step = b.div(b.div(m, scalar(s.biasCorrection1)), denom);
  Value base = p;
  if (c.kind == "adamw" && c.weightDecay > 0)
    base = b.mul(p, b.sub(k(1), b.mul(lr, k(c.weightDecay))));
  return {b.sub(base, b.mul(lr, step)), m, v};
}

} // namespace dlc
