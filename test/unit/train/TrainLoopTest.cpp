//===- TrainLoopTest.cpp - the loop end to end through the fake step ------===//
//
// The loop with driver/train/FakeStep.h's hand-written models: it learns,
// evaluates, logs; a run stopped (--max-steps, an interrupt) and resumed
// ends bit for bit where an uninterrupted one does; a non-finite loss
// stops it without touching the checkpoints; a checkpoint of another model
// is refused with every mismatch listed.
//
//===----------------------------------------------------------------------===//

#include "driver/train/Checkpoint.h"
#include "driver/train/FakeStep.h"
#include "driver/train/TrainLoop.h"

#include "support/Init.h"
#include "test/unit/common/ScratchDir.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

using namespace dlc;
using namespace dlc::train;
namespace fs = std::filesystem;

namespace {

/// y = x . (1, -2, 0.5) + 0.25, x standard normal.
data::Dataset linearData(int64_t n, uint64_t seed) {
  SplitMix64 rng(seed);
  std::vector<double> x(static_cast<size_t>(n * 3)), y(static_cast<size_t>(n));
  for (int64_t r = 0; r < n; ++r) {
    for (int64_t i = 0; i < 3; ++i)
      x[r * 3 + i] = rng.normal();
    y[r] = x[r * 3] - 2 * x[r * 3 + 1] + 0.5 * x[r * 3 + 2] + 0.25;
  }
  data::Dataset d;
  d.source = "linear";
  d.numSamples = n;
  d.columns.push_back({{"x", DType::F32, {3}}, HostTensor::fromDoubles(DType::F32, {n, 3}, x),
                       data::ColumnTransform::Copy});
  d.columns.push_back({{"y", DType::F32, {}}, HostTensor::fromDoubles(DType::F32, {n}, y),
                       data::ColumnTransform::Copy});
  return d;
}

/// Two features; the label says whether the first is positive.
data::Dataset classData(int64_t n, uint64_t seed) {
  SplitMix64 rng(seed);
  std::vector<double> x(static_cast<size_t>(n * 2)), label(static_cast<size_t>(n));
  for (int64_t r = 0; r < n; ++r) {
    x[r * 2] = rng.normal();
    x[r * 2 + 1] = rng.normal();
    label[r] = x[r * 2] > 0;
  }
  data::Dataset d;
  d.source = "classes";
  d.numSamples = n;
  d.columns.push_back({{"x", DType::F32, {2}}, HostTensor::fromDoubles(DType::F32, {n, 2}, x),
                       data::ColumnTransform::Copy});
  d.columns.push_back({{"label", DType::I32, {}},
                       HostTensor::fromDoubles(DType::I32, {n}, label),
                       data::ColumnTransform::Copy});
  return d;
}

/// Delegates to a step, and can misbehave at a given step: set the
/// interrupt flag after it, or report a NaN loss.
class Wrapper : public TrainStep {
public:
  explicit Wrapper(std::unique_ptr<TrainStep> inner) : inner_(std::move(inner)) {}
  std::string modelName() const override { return inner_->modelName(); }
  std::string lossKind() const override { return inner_->lossKind(); }
  OptimizerInfo optimizer() const override { return inner_->optimizer(); }
  const std::vector<TensorSpec> &inputs() const override { return inner_->inputs(); }
  const std::vector<TensorSpec> &state() const override { return inner_->state(); }
  Status step(const std::vector<HostTensor> &batch, float lr, float &loss) override {
    ++steps;
    lrs.push_back(lr);
    Status status = inner_->step(batch, lr, loss);
    if (steps == interruptAfter)
      interrupt.store(true);
    if (steps == nanAt)
      loss = NAN;
    return status;
  }
  Status readState(const std::string &name, HostTensor &out) override {
    return inner_->readState(name, out);
  }
  Status writeState(const std::string &name, const HostTensor &value) override {
    return inner_->writeState(name, value);
  }

  int64_t steps = 0, interruptAfter = -1, nanAt = -1;
  std::vector<float> lrs;
  std::atomic<bool> interrupt{false};

private:
  std::unique_ptr<TrainStep> inner_;
};

struct RunResult {
  ExitCode code;
  std::string out, err;
  int64_t steps;
  std::vector<float> lrs;
};

class TrainLoopTest : public ::testing::Test {
protected:
  void SetUp() override {
    fake_.kind = FakeStepOptions::Kind::Linear;
    fake_.features = 3;
    fake_.modelName = "lin";
    fake_.optimizer = "adamw";
    fake_.learningRate = 0.05;
    options_.epochs = 3;
    options_.batchSize = 8;
    options_.seed = 11;
    options_.schedule.kind = LrScheduleKind::Cosine;
    options_.schedule.warmupSteps = 3;
  }
  std::string path(const std::string &name) const { return dir_ / name; }

  /// Runs the loop on a fresh step (as a new process would).
  RunResult run(const data::Dataset &train, const data::Dataset *eval,
                TrainLoopOptions options, int64_t interruptAfter = -1,
                int64_t nanAt = -1) {
    std::string error;
    auto inner = makeFakeTrainStep(fake_, error);
    EXPECT_TRUE(inner) << error;
    Wrapper step(std::move(inner));
    step.interruptAfter = interruptAfter;
    step.nanAt = nanAt;
    options.interrupt = &step.interrupt;
    auto evaluator = makeFakeEvaluator(fake_);
    std::ostringstream out, err;
    ExitCode code = runTrainLoop(step, evaluator.get(), train, eval, options, out, err);
    return {code, out.str(), err.str(), step.steps, step.lrs};
  }

  static std::vector<uint8_t> bytes(const std::string &p) {
    std::ifstream f(p, std::ios::binary);
    return std::vector<uint8_t>((std::istreambuf_iterator<char>(f)), {});
  }

  dlc::testing::ScratchDir dir_{"dlc_loop"};
  FakeStepOptions fake_;
  TrainLoopOptions options_;
};

TEST_F(TrainLoopTest, LearnsAndPrintsOneLinePerEpoch) {
  data::Dataset train = linearData(200, 1), eval = linearData(50, 2);
  options_.epochs = 4;
  options_.logJsonPath = path("log.jsonl");
  RunResult r = run(train, &eval, options_);
  ASSERT_EQ(r.code, kExitSuccess) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(r.steps, 4 * 25);
  std::regex line(R"(epoch ([1-4])/4: train_loss ([0-9.]+) eval_loss ([0-9.]+) )"
                  R"(\([0-9]+\.[0-9] s, [0-9]+ samples/s\))");
  std::istringstream lines(r.out);
  std::string text;
  std::vector<double> trainLoss;
  while (std::getline(lines, text)) {
    std::smatch m;
    ASSERT_TRUE(std::regex_match(text, m, line)) << text;
    EXPECT_EQ(std::stoi(m[1]), static_cast<int>(trainLoss.size()) + 1);
    trainLoss.push_back(std::stod(m[2]));
  }
  ASSERT_EQ(trainLoss.size(), 4u);
  EXPECT_LT(trainLoss.back(), trainLoss.front() / 10);
  // The JSON log: one object per epoch.
  std::ifstream log(path("log.jsonl"));
  int64_t records = 0;
  while (std::getline(log, text)) {
    nlohmann::json record = nlohmann::json::parse(text);
    ++records;
    EXPECT_EQ(record["epoch"], records);
    EXPECT_EQ(record["global_step"], records * 25);
    for (const char *key : {"train_loss", "eval_loss", "epoch_seconds", "samples_per_second"})
      EXPECT_TRUE(record[key].is_number()) << key;
    EXPECT_TRUE(record["eval_accuracy"].is_null()); // mse: no accuracy
    EXPECT_NEAR(record["train_loss"].get<double>(), trainLoss[records - 1], 1e-4);
  }
  EXPECT_EQ(records, 4);
  // The schedule: warm-up 1/3, 2/3, 1 of the rate, then a cosine to 0.
  ASSERT_EQ(r.lrs.size(), 100u);
  EXPECT_FLOAT_EQ(r.lrs[0], 0.05f / 3);
  EXPECT_FLOAT_EQ(r.lrs[2], 0.05f);
  EXPECT_LT(r.lrs[99], 0.0001f);
}

TEST_F(TrainLoopTest, ClassifierReportsAccuracy) {
  fake_.kind = FakeStepOptions::Kind::Softmax;
  fake_.features = 2;
  fake_.classes = 2;
  fake_.optimizer = "sgd";
  fake_.learningRate = 0.1;
  options_.schedule = {};
  data::Dataset train = classData(300, 3), eval = classData(100, 4);
  RunResult r = run(train, &eval, options_);
  ASSERT_EQ(r.code, kExitSuccess) << r.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.out, m, std::regex("epoch 3/3: .* eval_accuracy ([0-9.]+)")))
      << r.out;
  EXPECT_GT(std::stod(m[1]), 0.9);
}

TEST_F(TrainLoopTest, ProgressBarOnATerminal) {
  data::Dataset train = linearData(40, 1);
  std::ostringstream bar;
  options_.epochs = 1;
  options_.progress = &bar;
  RunResult r = run(train, nullptr, options_);
  ASSERT_EQ(r.code, kExitSuccess) << r.err;
  EXPECT_NE(bar.str().find("\repoch 1/1 [====================] 5/5 loss "), std::string::npos)
      << bar.str();
  EXPECT_NE(bar.str().find(" samples/s ETA 0:00\033[K"), std::string::npos);
  EXPECT_EQ(bar.str().substr(bar.str().size() - 4), "\r\033[K"); // cleared before the line
  EXPECT_EQ(r.out.rfind("epoch 1/1: train_loss ", 0), 0u) << r.out;
}

/// Stops and resumes in several ways; every final checkpoint equals the
/// uninterrupted run's, byte for byte (metadata included).
TEST_F(TrainLoopTest, ResumedRunsEndBitForBitWhereOneRunEnds) {
  data::Dataset train = linearData(50, 1), eval = linearData(20, 2); // 7 batches, the last of 2
  for (const char *optimizer : {"adamw", "adam", "sgd"}) {
    SCOPED_TRACE(optimizer);
    fake_.optimizer = optimizer;
    dir_.reset();
    TrainLoopOptions whole = options_;
    whole.checkpointDir = path("whole");
    whole.logJsonPath = path("whole.jsonl");
    RunResult a = run(train, &eval, whole);
    ASSERT_EQ(a.code, kExitSuccess) << a.err;
    std::vector<uint8_t> expected = bytes(path("whole/ckpt-21.safetensors"));
    ASSERT_FALSE(expected.empty());

    // --max-steps in the middle of an epoch, twice, then to the end.
    TrainLoopOptions parts = options_;
    parts.checkpointDir = path("parts");
    parts.logJsonPath = path("parts.jsonl");
    parts.maxSteps = 10;
    RunResult b = run(train, &eval, parts);
    ASSERT_EQ(b.code, kExitSuccess) << b.err;
    EXPECT_EQ(b.steps, 10);
    EXPECT_NE(b.err.find("--max-steps reached: stopped after step 10; checkpoint " +
                         path("parts/ckpt-10.safetensors")),
              std::string::npos)
        << b.err;
    parts.resume = true;
    parts.maxSteps = 12;
    b = run(train, &eval, parts);
    ASSERT_EQ(b.code, kExitSuccess) << b.err;
    EXPECT_EQ(b.steps, 2);
    EXPECT_NE(b.err.find("resuming from " + path("parts/ckpt-10.safetensors") +
                         " (step 10, epoch 2, batch 3 of 7 done)"),
              std::string::npos)
        << b.err;
    parts.maxSteps.reset();
    b = run(train, &eval, parts);
    ASSERT_EQ(b.code, kExitSuccess) << b.err;
    EXPECT_EQ(b.steps, 9);
    EXPECT_EQ(bytes(path("parts/ckpt-21.safetensors")), expected);
    // The logs agree on everything but the timings.
    std::ifstream la(path("whole.jsonl")), lb(path("parts.jsonl"));
    std::string ta, tb;
    int records = 0;
    while (std::getline(la, ta) && std::getline(lb, tb)) {
      nlohmann::json ja = nlohmann::json::parse(ta), jb = nlohmann::json::parse(tb);
      for (const char *key : {"epoch", "global_step", "train_loss", "eval_loss", "lr"})
        EXPECT_EQ(ja[key], jb[key]) << key;
      ++records;
    }
    EXPECT_EQ(records, 3);
    EXPECT_FALSE(std::getline(lb, tb));

    // An interrupt after step 4: a checkpoint, exit 130; then the rest.
    TrainLoopOptions stopped = options_;
    stopped.checkpointDir = path("stopped");
    RunResult c = run(train, &eval, stopped, /*interruptAfter=*/4);
    ASSERT_EQ(c.code, kExitInterrupted) << c.err;
    EXPECT_EQ(c.steps, 4);
    EXPECT_TRUE(fs::exists(path("stopped/ckpt-4.safetensors")));
    stopped.resume = true;
    c = run(train, &eval, stopped);
    ASSERT_EQ(c.code, kExitSuccess) << c.err;
    EXPECT_EQ(c.steps, 17);
    EXPECT_EQ(bytes(path("stopped/ckpt-21.safetensors")), expected);
    // Resuming a finished run does nothing.
    c = run(train, &eval, stopped);
    EXPECT_EQ(c.code, kExitSuccess);
    EXPECT_EQ(c.steps, 0);
    EXPECT_NE(c.err.find("nothing to do"), std::string::npos) << c.err;
  }
}

TEST_F(TrainLoopTest, NonFiniteLossStopsWithoutACheckpoint) {
  data::Dataset train = linearData(50, 1);
  options_.checkpointDir = path("ckpt");
  RunResult r = run(train, nullptr, options_, -1, /*nanAt=*/10);
  EXPECT_EQ(r.code, kExitRuntimeFault);
  EXPECT_EQ(r.err, "dlc: error: the loss is NaN at step 10 (epoch 2, batch 3 of 7): stopped "
                   "without writing a checkpoint; the last good one is " +
                       path("ckpt/ckpt-7.safetensors") + "\n");
  std::vector<CheckpointFile> files = listCheckpoints(path("ckpt"));
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0].globalStep, 7);
}

TEST_F(TrainLoopTest, CheckpointOfAnotherRunIsRefused) {
  data::Dataset train = linearData(50, 1);
  options_.checkpointDir = path("ckpt");
  options_.epochs = 1;
  ASSERT_EQ(run(train, nullptr, options_).code, kExitSuccess);
  // Without --resume, a directory of checkpoints is not overwritten.
  RunResult r = run(train, nullptr, options_);
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_NE(r.err.find("already holds checkpoints"), std::string::npos) << r.err;
  // Another model, optimizer, seed and state: all listed.
  fake_.modelName = "other";
  fake_.optimizer = "sgd";
  options_.resume = true;
  options_.seed = 12;
  r = run(train, nullptr, options_);
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_EQ(r.err, "dlc: error: cannot resume from " + path("ckpt/ckpt-7.safetensors") +
                       ":\n"
                       "  the model is 'lin', this run's 'other'\n"
                       "  the optimizer is adamw, this run's sgd\n"
                       "  --seed is 11, this run's 12\n"
                       "  its tensors do not match the model's state:\n"
                       "    missing 'w.momentum' (f32[3])\n"
                       "    missing 'b.momentum' (f32[])\n"
                       "    extra 'b.m' (f32[]), not in the model's state\n"
                       "    extra 'b.v' (f32[]), not in the model's state\n"
                       "    extra 'w.m' (f32[3]), not in the model's state\n"
                       "    extra 'w.v' (f32[3]), not in the model's state\n");
  EXPECT_EQ(r.steps, 0);
}

TEST_F(TrainLoopTest, BadOptionsAreBadInput) {
  data::Dataset train = linearData(5, 1);
  options_.dropLast = true;
  RunResult r = run(train, nullptr, options_);
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_EQ(r.err, "dlc: error: linear: 5 samples make no batch of 8 (the partial batch is "
                   "dropped)\n");
  options_.dropLast = false;
  options_.resume = true;
  r = run(train, nullptr, options_);
  EXPECT_EQ(r.err, "dlc: error: --resume needs --checkpoint-dir\n");
  options_.resume = false;
  options_.schedule.kind = LrScheduleKind::Step;
  r = run(train, nullptr, options_);
  EXPECT_EQ(r.err, "dlc: error: --lr-schedule step needs --lr-step-size of at least 1\n");
}

} // namespace
