//===- FakeStep.cpp - a hand-written train step, for tests ----------------===//
//
// The model and its gradient are computed in float, accumulating in double
// in a fixed order; the update follows the textbook formulas. Both classes
// share the forward pass (Model below); the evaluator keeps its own copy of
// the parameters, read from the step as the compiled evaluator does.
//
//===----------------------------------------------------------------------===//

#include "driver/train/FakeStep.h"

#include "support/Init.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>

namespace dlc::train {

bool parseFakeStepSpec(const std::string &spec, FakeStepOptions &options,
                       std::string &error) {
  auto number = [](const std::string &text, int64_t &out) {
    if (text.empty() || text.size() > 9 ||
        !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; }))
      return false;
    out = std::stoll(text);
    return out >= 1;
  };
  size_t colon = spec.find(':');
  std::string kind = spec.substr(0, colon);
  std::string sizes = colon == std::string::npos ? "" : spec.substr(colon + 1);
  bool ok = false;
  if (kind == "linear") {
    options.kind = FakeStepOptions::Kind::Linear;
    ok = number(sizes, options.features);
  } else if (kind == "softmax") {
    options.kind = FakeStepOptions::Kind::Softmax;
    size_t x = sizes.find('x');
    ok = x != std::string::npos && number(sizes.substr(0, x), options.features) &&
         number(sizes.substr(x + 1), options.classes);
  }
  if (!ok)
    error = "--fake-step expects linear:F or softmax:FxC (F features, C "
            "classes), got '" + spec + "'";
  return ok;
}

namespace {

using Kind = FakeStepOptions::Kind;

/// The parameters and the forward pass, shared by the step and the
/// evaluator.
class Model {
public:
  explicit Model(const FakeStepOptions &options) : options_(options) {
    int64_t f = options.features, c = options.classes;
    bool linear = options.kind == Kind::Linear;
    inputs_ = {{"x", DType::F32, {f}},
               linear ? TensorSpec{"y", DType::F32, {}}
                      : TensorSpec{"label", DType::I32, {}}};
    params_ = {{"w", DType::F32, linear ? std::vector<int64_t>{f} : std::vector<int64_t>{f, c}},
               {"b", DType::F32, linear ? std::vector<int64_t>{} : std::vector<int64_t>{c}}};
  }

  const std::vector<TensorSpec> &inputs() const { return inputs_; }
  const std::vector<TensorSpec> &params() const { return params_; }
  int64_t outputs() const { return options_.kind == Kind::Linear ? 1 : options_.classes; }

  /// Checks a batch against inputs(); returns its rows, or -1 with `error`.
  int64_t rows(const std::vector<HostTensor> &batch, std::string &error) const {
    if (batch.size() != inputs_.size()) {
      error = "the batch has " + std::to_string(batch.size()) + " tensors, the model " +
              std::to_string(inputs_.size()) + " inputs";
      return -1;
    }
    int64_t n = batch[0].rank() ? batch[0].shape()[0] : -1;
    for (size_t i = 0; i < batch.size(); ++i) {
      std::vector<int64_t> want = {n};
      want.insert(want.end(), inputs_[i].shape.begin(), inputs_[i].shape.end());
      if (batch[i].dtype() != inputs_[i].dtype || batch[i].shape() != want) {
        error = "input '" + inputs_[i].name + "' is " + dtypeName(batch[i].dtype()) +
                formatShape(batch[i].shape()) + ", expected " +
                data::describeBatched(inputs_[i]);
        return -1;
      }
    }
    return n;
  }

  /// Per-sample losses and d(mean loss)/d(outputs), [n, outputs()]; false
  /// (with `error`) for a label out of range.
  bool forward(const float *w, const float *b, const std::vector<HostTensor> &batch,
               int64_t n, std::vector<double> &losses, std::vector<float> &dOut,
               std::vector<int64_t> *predictions, std::string &error) const {
    int64_t f = options_.features, k = outputs();
    const float *x = reinterpret_cast<const float *>(batch[0].data());
    losses.assign(static_cast<size_t>(n), 0);
    dOut.assign(static_cast<size_t>(n * k), 0);
    if (predictions)
      predictions->assign(static_cast<size_t>(n), 0);
    std::vector<double> logits(static_cast<size_t>(k));
    for (int64_t r = 0; r < n; ++r) {
      for (int64_t j = 0; j < k; ++j) {
        double sum = b[j];
        for (int64_t i = 0; i < f; ++i)
          sum += static_cast<double>(x[r * f + i]) * w[i * k + j];
        logits[j] = static_cast<float>(sum);
      }
      if (options_.kind == Kind::Linear) {
        double y = reinterpret_cast<const float *>(batch[1].data())[r];
        double diff = logits[0] - y;
        losses[r] = diff * diff;
        dOut[r] = static_cast<float>(2 * diff / n);
        continue;
      }
      int64_t label = reinterpret_cast<const int32_t *>(batch[1].data())[r];
      if (label < 0 || label >= k) {
        error = "label " + std::to_string(label) + " of row " + std::to_string(r) +
                " is not in [0, " + std::to_string(k) + ")";
        return false;
      }
      double top = *std::max_element(logits.begin(), logits.end());
      double total = 0;
      for (double l : logits)
        total += std::exp(l - top);
      losses[r] = top + std::log(total) - logits[label];
      for (int64_t j = 0; j < k; ++j)
        dOut[r * k + j] = static_cast<float>(
            (std::exp(logits[j] - top) / total - (j == label ? 1 : 0)) / n);
      if (predictions)
        (*predictions)[r] = std::max_element(logits.begin(), logits.end()) - logits.begin();
    }
    return true;
  }

private:
  FakeStepOptions options_;
  std::vector<TensorSpec> inputs_, params_;
};

class FakeTrainStep : public TrainStep {
public:
  FakeTrainStep(const FakeStepOptions &options) : options_(options), model_(options) {
    for (const TensorSpec &p : model_.params()) {
      state_.push_back(p);
      if (options.optimizer == "sgd")
        state_.push_back({p.name + ".momentum", p.dtype, p.shape});
      else {
        state_.push_back({p.name + ".m", p.dtype, p.shape});
        state_.push_back({p.name + ".v", p.dtype, p.shape});
      }
    }
    state_.push_back({"step", DType::F32, {}});
    for (const TensorSpec &s : state_)
      values_[s.name] = s.name == "w"
                            ? initParam(InitKind::He, {0, 1, 0, 1, options.initSeed},
                                        s.dtype, s.shape)
                            : HostTensor(s.dtype, s.shape);
  }

  std::string modelName() const override { return options_.modelName; }
  std::string lossKind() const override {
    return options_.kind == Kind::Linear ? "mse" : "cross_entropy";
  }
  OptimizerInfo optimizer() const override {
    return {options_.optimizer, options_.learningRate};
  }
  const std::vector<TensorSpec> &inputs() const override { return model_.inputs(); }
  const std::vector<TensorSpec> &state() const override { return state_; }

  Status step(const std::vector<HostTensor> &batch, float lr, float &loss) override {
    std::string error;
    int64_t n = model_.rows(batch, error);
    if (n < 0)
      return Status::failure(kExitBadInput, error);
    std::vector<double> losses;
    std::vector<float> dOut;
    float *w = floats("w"), *b = floats("b");
    if (!model_.forward(w, b, batch, n, losses, dOut, nullptr, error))
      return Status::failure(kExitBadInput, error);
    double sum = 0;
    for (double l : losses)
      sum += l;
    loss = static_cast<float>(n ? sum / n : 0);

    // Gradients: dw[i, j] = sum_r x[r, i] dOut[r, j]; db[j] = sum_r dOut[r, j].
    int64_t f = options_.features, k = model_.outputs();
    const float *x = reinterpret_cast<const float *>(batch[0].data());
    std::vector<float> dw(static_cast<size_t>(f * k)), db(static_cast<size_t>(k));
    for (int64_t j = 0; j < k; ++j) {
      double s = 0;
      for (int64_t r = 0; r < n; ++r)
        s += dOut[r * k + j];
      db[j] = static_cast<float>(s);
    }
    for (int64_t i = 0; i < f; ++i)
      for (int64_t j = 0; j < k; ++j) {
        double s = 0;
        for (int64_t r = 0; r < n; ++r)
          s += static_cast<double>(x[r * f + i]) * dOut[r * k + j];
        dw[i * k + j] = static_cast<float>(s);
      }

    float &t = *floats("step");
    t += 1;
    update("w", dw, lr, t);
    update("b", db, lr, t);
    return Status::success();
  }

  Status readState(const std::string &name, HostTensor &out) override {
    auto it = values_.find(name);
    if (it == values_.end())
      return Status::failure(kExitBadInput, "no state tensor '" + name + "'");
    out = it->second;
    return Status::success();
  }
  Status writeState(const std::string &name, const HostTensor &value) override {
    auto it = values_.find(name);
    if (it == values_.end())
      return Status::failure(kExitBadInput, "no state tensor '" + name + "'");
    if (value.dtype() != it->second.dtype() || value.shape() != it->second.shape())
      return Status::failure(kExitBadInput, "state tensor '" + name + "' is " +
                                                dtypeName(it->second.dtype()) +
                                                formatShape(it->second.shape()));
    it->second = HostTensor(value.dtype(), value.shape(),
                            std::vector<uint8_t>(value.data(), value.data() + value.byteSize()));
    return Status::success();
  }

private:
  float *floats(const std::string &name) {
    return reinterpret_cast<float *>(values_.at(name).mutableData());
  }

  void update(const std::string &name, const std::vector<float> &g, float lr, float t) {
    float *p = floats(name);
    size_t size = g.size();
    if (options_.optimizer == "sgd") {
      float *v = floats(name + ".momentum");
      for (size_t i = 0; i < size; ++i) {
        v[i] = 0.9f * v[i] + g[i];
        p[i] -= lr * v[i];
      }
      return;
    }
    const float beta1 = 0.9f, beta2 = 0.999f, epsilon = 1e-8f, decay = 0.01f;
    float *m = floats(name + ".m"), *v = floats(name + ".v");
    float c1 = 1 - std::pow(beta1, t), c2 = 1 - std::pow(beta2, t);
    for (size_t i = 0; i < size; ++i) {
      if (options_.optimizer == "adamw")
        p[i] -= lr * decay * p[i];
      m[i] = beta1 * m[i] + (1 - beta1) * g[i];
      v[i] = beta2 * v[i] + (1 - beta2) * g[i] * g[i];
      p[i] -= lr * (m[i] / c1) / (std::sqrt(v[i] / c2) + epsilon);
    }
  }

  FakeStepOptions options_;
  Model model_;
  std::vector<TensorSpec> state_;
  std::map<std::string, HostTensor> values_;
};

class FakeEvaluator : public Evaluator {
public:
  explicit FakeEvaluator(const FakeStepOptions &options) : options_(options), model_(options) {}

  Status loadParameters(TrainStep &step) override {
    for (const TensorSpec &p : model_.params()) {
      Status status = step.readState(p.name, params_[p.name]);
      if (!status.ok())
        return status;
    }
    return Status::success();
  }

  Status evaluate(const std::vector<HostTensor> &batch, double &lossSum,
                  int64_t &correct, int64_t &labelled) override {
    std::string error;
    int64_t n = model_.rows(batch, error);
    if (n < 0)
      return Status::failure(kExitBadInput, error);
    if (!params_.count("w"))
      return Status::failure(kExitInternalError, "evaluate before loadParameters");
    std::vector<double> losses;
    std::vector<float> dOut;
    std::vector<int64_t> predictions;
    auto w = reinterpret_cast<const float *>(params_["w"].data());
    auto b = reinterpret_cast<const float *>(params_["b"].data());
    bool classify = options_.kind == Kind::Softmax;
    if (!model_.forward(w, b, batch, n, losses, dOut, classify ? &predictions : nullptr,
                        error))
      return Status::failure(kExitBadInput, error);
    lossSum = 0;
    correct = 0;
    labelled = classify ? n : 0;
    for (int64_t r = 0; r < n; ++r) {
      lossSum += losses[r];
      if (classify && predictions[r] == reinterpret_cast<const int32_t *>(batch[1].data())[r])
        ++correct;
    }
    return Status::success();
  }

private:
  FakeStepOptions options_;
  Model model_;
  std::map<std::string, HostTensor> params_;
};

} // namespace

std::unique_ptr<TrainStep> makeFakeTrainStep(const FakeStepOptions &options,
                                             std::string &error) {
  if (options.optimizer != "sgd" && options.optimizer != "adam" &&
      options.optimizer != "adamw") {
    error = "unknown optimizer '" + options.optimizer + "' (expected adam, adamw or sgd)";
    return nullptr;
  }
  return std::make_unique<FakeTrainStep>(options);
}

std::unique_ptr<Evaluator> makeFakeEvaluator(const FakeStepOptions &options) {
  return std::make_unique<FakeEvaluator>(options);
}

} // namespace dlc::train
