//===- ModuleStep.cpp - A TrainStep and Evaluator over compiled modules ---===//

#include "driver/train/ModuleStep.h"

#include "dlc/runtime.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <thread>

namespace dlc::train {

namespace {

//===----------------------------------------------------------------------===//
// DLPack
//===----------------------------------------------------------------------===//

DLDataType dlpackOf(DType dtype) {
  switch (dtype) {
  case DType::F64: return {kDLFloat, 64, 1};
  case DType::F32: return {kDLFloat, 32, 1};
  case DType::F16: return {kDLFloat, 16, 1};
  case DType::BF16: return {kDLBfloat, 16, 1};
  case DType::I64: return {kDLInt, 64, 1};
  case DType::I32: return {kDLInt, 32, 1};
  case DType::I8: return {kDLInt, 8, 1};
  case DType::U8: return {kDLUInt, 8, 1};
  case DType::I1: return {DLC_DL_BOOL, 8, 1};
  }
  return {kDLFloat, 32, 1};
}

DType dtypeOfDLPack(DLDataType t) {
  switch (t.code) {
  case kDLFloat:
    return t.bits == 64 ? DType::F64 : t.bits == 32 ? DType::F32 : DType::F16;
  case kDLBfloat:
    return DType::BF16;
  case kDLInt:
    return t.bits == 64 ? DType::I64 : t.bits == 32 ? DType::I32 : DType::I8;
  case kDLUInt:
    return DType::U8;
  default:
    return DType::I1;
  }
}

/// A host tensor as a DLTensor viewing its bytes (which must outlive it).
struct View {
  DLTensor tensor{};
  std::vector<int64_t> shape;
  explicit View(const HostTensor &t) : shape(t.shape()) {
    tensor.data = const_cast<uint8_t *>(t.data());
    tensor.device = {kDLCPU, 0};
    tensor.ndim = static_cast<int32_t>(shape.size());
    tensor.dtype = dlpackOf(t.dtype());
    tensor.shape = shape.data();
  }
};

/// A runtime status as the loop's; consumes it.
Status statusOf(dlc_status_t status, const std::string &what) {
  if (!status)
    return Status::success();
  Status s = Status::failure(static_cast<ExitCode>(dlc_status_exit_code(status)),
                             what + ": " + dlc_status_message(status));
  dlc_status_free(status);
  return s;
}

/// A module's inputs, outputs and state tensors.
void readSpecs(const dlc_module_t *module, std::vector<TensorSpec> &inputs,
               std::vector<TensorSpec> &outputs, std::vector<TensorSpec> &state) {
  auto infos = [&](size_t n, auto query) {
    std::vector<TensorSpec> specs;
    for (size_t i = 0; i < n; ++i) {
      dlc_tensor_info_t info;
      dlc_status_free(query(module, i, &info));
      specs.push_back({info.name, dtypeOfDLPack(info.dtype),
                       std::vector<int64_t>(info.shape, info.shape + info.ndim)});
    }
    return specs;
  };
  inputs = infos(dlc_module_input_count(module), dlc_module_input_info);
  outputs = infos(dlc_module_output_count(module), dlc_module_output_info);
  state = infos(dlc_module_state_count(module), dlc_module_state_info);
}

/// readSpecs of a module's bytes, which need no device.
Status describeModule(const std::vector<uint8_t> &bytes, std::vector<TensorSpec> &inputs,
                      std::vector<TensorSpec> &outputs, std::vector<TensorSpec> &state) {
  dlc_module_t *module = nullptr;
  if (Status st = statusOf(dlc_module_load_memory(bytes.data(), bytes.size(), &module),
                           "the train module does not load");
      !st.ok())
    return st;
  readSpecs(module, inputs, outputs, state);
  dlc_module_release(module);
  return Status::success();
}

//===----------------------------------------------------------------------===//
// A compiled module in a session
//===----------------------------------------------------------------------===//

class Session {
public:
  ~Session() {
    dlc_session_destroy(session);
    dlc_module_release(module);
  }

  static Status open(const std::vector<uint8_t> &bytes, const std::string &device,
                     std::unique_ptr<Session> &out) {
    auto s = std::make_unique<Session>();
    if (Status st = statusOf(dlc_module_load_memory(bytes.data(), bytes.size(),
                                                    &s->module),
                             "the train module does not load");
        !st.ok())
      return st;
    if (Status st = statusOf(dlc_session_create(s->module, device.c_str(), nullptr,
                                                &s->session),
                             "device '" + device + "'");
        !st.ok())
      return st;
    readSpecs(s->module, s->inputs, s->outputs, s->state);
    for (size_t i = 0; i < s->state.size(); ++i)
      s->stateIndex[s->state[i].name] = i;
    out = std::move(s);
    return Status::success();
  }

  /// Runs on host tensors; allocates the outputs.
  Status run(const std::vector<const HostTensor *> &in, std::vector<HostTensor> &out) {
    std::vector<View> inViews, outViews;
    inViews.reserve(in.size());
    for (const HostTensor *t : in)
      inViews.emplace_back(*t);
    if (out.size() != outputs.size()) {
      out.clear();
      for (const TensorSpec &spec : outputs)
        out.emplace_back(spec.dtype, spec.shape);
    }
    for (size_t i = 0; i < out.size(); ++i)
      if (out[i].shape() != outputs[i].shape || out[i].dtype() != outputs[i].dtype)
        out[i] = HostTensor(outputs[i].dtype, outputs[i].shape);
    outViews.reserve(out.size());
    for (HostTensor &t : out)
      outViews.emplace_back(t);
    std::vector<const DLTensor *> inPtrs, outPtrs;
    for (View &v : inViews)
      inPtrs.push_back(&v.tensor);
    for (View &v : outViews)
      outPtrs.push_back(&v.tensor);
    return statusOf(dlc_session_run(session, inPtrs.data(), inPtrs.size(),
                                    outPtrs.data(), outPtrs.size()),
                    "running the train step");
  }

  Status readState(const std::string &name, HostTensor &out) {
    auto found = stateIndex.find(name);
    if (found == stateIndex.end())
      return Status::failure(kExitBadInput, "no state tensor '" + name + "'");
    const TensorSpec &spec = state[found->second];
    out = HostTensor(spec.dtype, spec.shape);
    View view(out);
    return statusOf(dlc_session_read_state(session, found->second, &view.tensor),
                    "reading state '" + name + "'");
  }

  Status writeState(const std::string &name, const HostTensor &value) {
    auto found = stateIndex.find(name);
    if (found == stateIndex.end())
      return Status::failure(kExitBadInput, "no state tensor '" + name + "'");
    View view(value);
    return statusOf(dlc_session_write_state(session, found->second, &view.tensor),
                    "writing state '" + name + "'");
  }

  /// Every state tensor of `from` that this session has too.
  Status copyStateFrom(Session &from) {
    for (const TensorSpec &spec : state) {
      HostTensor value;
      if (Status s = from.readState(spec.name, value); !s.ok())
        return s;
      if (Status s = writeState(spec.name, value); !s.ok())
        return s;
    }
    return Status::success();
  }

  dlc_module_t *module = nullptr;
  dlc_session_t *session = nullptr;
  std::vector<TensorSpec> inputs, outputs, state;
  std::map<std::string, size_t> stateIndex;
};

/// The sessions of one batch size.
struct Variant {
  std::unique_ptr<Session> train, eval;
};

/// Per-sample specs of a module's data inputs (all but `lr`).
std::vector<TensorSpec> dataInputs(const std::vector<TensorSpec> &inputs) {
  std::vector<TensorSpec> specs;
  for (const TensorSpec &spec : inputs) {
    if (spec.name == "lr")
      continue;
    TensorSpec perSample = spec;
    if (!perSample.shape.empty())
      perSample.shape.erase(perSample.shape.begin());
    specs.push_back(perSample);
  }
  return specs;
}

/// The rows of a batch (its tensors' leading dimension).
int64_t rowsOf(const std::vector<HostTensor> &batch) {
  return batch.empty() || batch[0].shape().empty() ? 0 : batch[0].shape()[0];
}

class ModuleStep : public TrainStep {
public:
  ModuleStep(ModuleStepInfo info, ModuleSource source)
      : info(std::move(info)), source(std::move(source)) {}
  ~ModuleStep() override {
    // Where a partitioned step's time went, for bench/scaling (rank 0).
    if (info.ranks > 1 && rank_ == 0 && std::getenv("DLC_SPMD_STATS") &&
        variants.count(info.batchSize)) {
      double busy = 0, waited = 0;
      dlc_status_free(dlc_session_collective_seconds(main().session, &busy, &waited));
      std::fprintf(stderr, "dlc: module collectives: %.3f s on the communication thread, "
                           "%.3f s waited\n", busy, waited);
    }
  }

  /// Opens the sessions of `pair` for `rows` rows.
  Status open(int64_t rows, const ModulePair &pair) {
    Variant v;
    // A partitioned job trains one global batch; its other variants only
    // evaluate (on rank 0), so their train sessions, whose start-up is a
    // collective, are not opened.
    bool train = info.ranks == 1 || rows == info.batchSize;
    for (auto [bytes, session] : {std::make_pair(&pair.train, &v.train),
                                  std::make_pair(&pair.eval, &v.eval)})
      if (session == &v.eval || train)
        if (Status s = Session::open(*bytes, info.device, *session); !s.ok())
          return s;
    variants.emplace(rows, std::move(v));
    return Status::success();
  }

  std::string modelName() const override { return info.modelName; }
  std::string lossKind() const override { return info.lossKind; }
  OptimizerInfo optimizer() const override { return info.optimizer; }
  std::string execution() const override {
    // The sessions are created with the runtime's default: one CPU thread
    // per core.
    if (info.device != "cpu")
      return info.device;
    return "cpu, " + std::to_string(std::max(1u, std::thread::hardware_concurrency())) +
           " threads";
  }
  const std::vector<TensorSpec> &inputs() const override { return specs; }
  const std::vector<TensorSpec> &state() const override { return main().state; }

  int rank() const override { return rank_; }
  int worldSize() const override { return worldSize_; }

  Status step(const std::vector<HostTensor> &data, float learningRate,
              float &loss) override {
    // A partitioned module takes this rank's block; its variants are known
    // by the global batch.
    int64_t rows = rowsOf(data) * info.ranks;
    Session *session = nullptr;
    if (Status s = sessionFor(rows, session); !s.ok())
      return s;
    // Another batch size runs on its own module: the state goes there and back.
    if (session != &main())
      if (Status s = session->copyStateFrom(main()); !s.ok())
        return s;
    lr.setDouble(0, learningRate);
    std::vector<const HostTensor *> in;
    size_t next = 0;
    for (const TensorSpec &spec : session->inputs)
      in.push_back(spec.name == "lr" ? &lr : &data[next++]);
    if (Status s = session->run(in, outputs); !s.ok())
      return s;
    loss = static_cast<float>(outputs[0].getDouble(0));
    if (session != &main())
      return main().copyStateFrom(*session);
    return Status::success();
  }

  Status readState(const std::string &name, HostTensor &out) override {
    return main().readState(name, out);
  }
  Status writeState(const std::string &name, const HostTensor &value) override {
    return main().writeState(name, value);
  }

  /// The sessions of `rows` rows, their modules asked for on first use.
  Status variantFor(int64_t rows, Variant *&out) {
    auto found = variants.find(rows);
    if (found == variants.end()) {
      ModulePair pair;
      if (Status s = source(rows, pair); !s.ok())
        return s;
      if (Status s = open(rows, pair); !s.ok())
        return s;
      found = variants.find(rows);
    }
    out = &found->second;
    return Status::success();
  }

  /// The train session of `rows` rows.
  Status sessionFor(int64_t rows, Session *&out) {
    Variant *variant = nullptr;
    if (Status s = variantFor(rows, variant); !s.ok())
      return s;
    out = variant->train.get();
    if (!out)
      return Status::failure(kExitBadInput,
                             "a batch of " + std::to_string(rows) +
                                 " rows: the partitioned job trains batches of " +
                                 std::to_string(info.batchSize) + " (train with --drop-last)");
    return Status::success();
  }

  Session &main() const { return *variants.at(info.batchSize).train; }

  ModuleStepInfo info;
  ModuleSource source;
  int rank_ = 0, worldSize_ = 1;
  std::map<int64_t, Variant> variants;
  std::vector<TensorSpec> specs;
  HostTensor lr{DType::F32, {}};
  std::vector<HostTensor> outputs;
};

class ModuleEvaluator : public Evaluator {
public:
  explicit ModuleEvaluator(ModuleStep &step) : step(step) {}

  Status loadParameters(TrainStep &) override {
    parametersLoaded.clear();
    return Status::success();
  }

  Status evaluate(const std::vector<HostTensor> &data, double &lossSum,
                  int64_t &correct, int64_t &labelled) override {
    int64_t rows = rowsOf(data);
    Variant *variant = nullptr;
    if (Status s = step.variantFor(rows, variant); !s.ok())
      return s;
    Session &eval = *variant->eval;
    // The parameters, from the train step's session, once per evaluation
    // and batch size.
    if (!parametersLoaded.count(rows)) {
      if (Status s = eval.copyStateFrom(step.main()); !s.ok())
        return s;
      parametersLoaded.insert(rows);
    }
    std::vector<const HostTensor *> in;
    for (const HostTensor &t : data)
      in.push_back(&t);
    if (Status s = eval.run(in, outputs); !s.ok())
      return s;
    double loss = outputs[0].getDouble(0);
    lossSum = step.info.lossIsMean ? loss * double(rows) : loss;
    auto count = [&](size_t i) {
      return outputs.size() > i ? static_cast<int64_t>(std::llround(outputs[i].getDouble(0)))
                                : 0;
    };
    correct = count(1);
    labelled = count(2);
    return Status::success();
  }

  ModuleStep &step;
  std::set<int64_t> parametersLoaded;
  std::vector<HostTensor> outputs;
};

} // namespace

Status openModuleTraining(const ModuleStepInfo &info, ModulePair first,
                          ModuleSource source, std::unique_ptr<TrainStep> &step,
                          std::unique_ptr<Evaluator> &evaluator) {
  auto opened = std::make_unique<ModuleStep>(info, std::move(source));
  if (Status s = opened->open(info.batchSize, first); !s.ok())
    return s;
  opened->specs = dataInputs(opened->main().inputs);
  int32_t rank = 0, world = 1;
  if (Status s = statusOf(dlc_session_rank(opened->main().session, &rank, &world),
                          "the train module's ranks");
      !s.ok())
    return s;
  if (world != info.ranks)
    return Status::failure(kExitBadInput, "the job is for " + std::to_string(info.ranks) +
                                              " ranks, its module runs on " +
                                              std::to_string(world));
  opened->rank_ = rank;
  opened->worldSize_ = world;
  evaluator = std::make_unique<ModuleEvaluator>(*opened);
  step = std::move(opened);
  return Status::success();
}

Status moduleDataInputs(const std::vector<uint8_t> &trainModule,
                        std::vector<TensorSpec> &out) {
  std::vector<TensorSpec> inputs, outputs, state;
  if (Status s = describeModule(trainModule, inputs, outputs, state); !s.ok())
    return s;
  out = dataInputs(inputs);
  return Status::success();
}

} // namespace dlc::train
