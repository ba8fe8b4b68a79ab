//===- PipelineProgram.cpp - one pipeline stage on this rank --------------===//

#include "driver/PipelineProgram.h"

#include "codegen/cpu/CpuBackend.h"
#include "driver/DriverSupport.h"
#include "driver/HostCollectives.h"
#include "driver/ModuleRunner.h"
#include "driver/PlanReport.h"
#include "ir/ParamSpec.h"
#include "runtime/comm/Communicator.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/Hashing.h"

#include <chrono>
#include <cstring>
#include <map>
#include <tuple>

using namespace mlir;

namespace dlc {

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// What one message carries: a state argument's current value (sent by
/// the stage that updates it to a stage that only reads it), a value of a
/// micro-batch, or a value sent once a step (summed gradients, update
/// results).
enum class Carries { State, PerMicrobatch, Once };
using Key = std::tuple<Carries, unsigned, int64_t>;

/// A message from one stage to another: what, and to which stage.
struct Message {
  int64_t to;
  Key key;
};

/// `to += from` elementwise (both one dtype and shape).
void accumulate(HostTensor &to, const HostTensor &from) {
  int64_t n = to.numel();
  bool typed = rt::comm::withReducibleType(to.dtype(), [&](auto zero) {
    using T = decltype(zero);
    auto *a = reinterpret_cast<T *>(to.mutableData());
    auto *b = reinterpret_cast<const T *>(from.data());
    for (int64_t i = 0; i < n; ++i)
      a[i] += b[i];
  });
  if (!typed)
    for (int64_t i = 0; i < n; ++i)
      to.setDouble(i, to.getDouble(i) + from.getDouble(i));
}

} // namespace

struct PipelineProgram::Impl {
  rt::comm::Communicator *comm = nullptr;
  Mesh mesh;
  int64_t stage = 0, stages = 1, dataIndex = 0, dataSize = 1, microbatches = 1;
  PipelineSchedule schedule = PipelineSchedule::OneForwardOneBackward;
  PipelineSplit split;
  bool hasBackward = false;
  /// This stage's compiled parts, by phase (empty where the part is).
  LoadedModule parts[3];
  bool present[3] = {false, false, false};
  OwningOpRef<ModuleOp> owner;
  /// Per value: the other stages whose forward or backward parts read it,
  /// and those whose update reads it.
  std::vector<std::vector<int64_t>> perMicrobatchTo, onceTo;
  /// Per argument: the stage it is refreshed from at each step (a state
  /// another stage updates), or -1.
  std::vector<int64_t> refreshFrom;
  std::vector<unsigned> resultOfArgument;
  std::vector<RankedTensorType> argumentTypes;
  /// Per stage: the messages it sends in a step, in order.
  std::vector<std::vector<Message>> sends;
  double compute = 0, waiting = 0, wall = 0;

  int64_t rankOf(int64_t otherStage, int64_t data) const {
    std::vector<int64_t> coords(mesh.axes().size(), 0);
    coords[mesh.axisIndex("pipe")] = otherStage;
    if (int64_t d = mesh.axisIndex("data"); d >= 0)
      coords[d] = data;
    return mesh.rankOf(coords);
  }
  const PipelinePart &part(int64_t s, PipelinePhase phase) const {
    return split.part(s, phase);
  }
  bool reads(int64_t s, PipelinePhase phase, PipelineInput::Kind kind, unsigned index) const {
    for (const PipelineInput &in : part(s, phase).inputs)
      if (in.kind == kind && in.index == index)
        return true;
    return false;
  }
  std::vector<Message> messagesOf(int64_t s) const;
  /// Whether stage `t` reads state argument `i` but another stage updates
  /// it (so it is sent `t` at the start of each step).
  bool needsRefresh(unsigned i, int64_t t) const {
    return refreshFrom[i] >= 0 && refreshFrom[i] != t &&
           llvm::is_contained(split.argumentReaders[i], t) &&
           !llvm::is_contained(split.resultStages[resultOfArgument[i]], t);
  }
  void analyse(func::FuncOp func);

  // One run's state.
  std::map<Key, std::shared_ptr<HostTensor>> held;
  std::vector<std::shared_ptr<HostTensor>> inFlight;
  /// Per peer stage: how many of its messages to this stage arrived.
  std::vector<size_t> received;
  std::vector<std::vector<Key>> expected;

  ExitCode post(const Message &message, const std::shared_ptr<HostTensor> &t,
                std::string &error);
  ExitCode fetch(int64_t from, const Key &key, std::shared_ptr<HostTensor> &out,
                 std::string &error);
};

void PipelineProgram::Impl::analyse(func::FuncOp func) {
  using P = PipelinePhase;
  for (int64_t s = 0; s < stages; ++s)
    hasBackward |= static_cast<bool>(part(s, P::Backward).func);
  perMicrobatchTo.assign(split.values.size(), {});
  onceTo.assign(split.values.size(), {});
  for (auto [v, value] : llvm::enumerate(split.values))
    for (int64_t s : value.remoteStages) {
      auto index = static_cast<unsigned>(v);
      if (reads(s, P::Forward, PipelineInput::Value, index) ||
          reads(s, P::Backward, PipelineInput::Value, index))
        perMicrobatchTo[v].push_back(s);
      if (reads(s, P::Update, PipelineInput::Value, index))
        onceTo[v].push_back(s);
    }
  // A state argument's result (same `dlc.state`), computed by other stages
  // than one reading it: refreshed from the first at each step.
  refreshFrom.assign(func.getNumArguments(), -1);
  resultOfArgument.assign(func.getNumArguments(), 0);
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    argumentTypes.push_back(cast<RankedTensorType>(func.getArgument(i).getType()));
    auto name = func.getArgAttrOfType<StringAttr>(i, "dlc.state");
    if (!name)
      continue;
    for (unsigned r = 0; r < func.getNumResults(); ++r)
      if (func.getResultAttrOfType<StringAttr>(r, "dlc.state") == name &&
          !split.resultStages[r].empty()) {
        refreshFrom[i] = split.resultStages[r].front();
        resultOfArgument[i] = r;
      }
  }
}

std::vector<Message> PipelineProgram::Impl::messagesOf(int64_t s) const {
  using P = PipelinePhase;
  std::vector<Message> out;
  // 1. State this stage updates that stages which only read it read.
  for (auto [i, from] : llvm::enumerate(refreshFrom))
    if (from == s)
      for (int64_t t : split.argumentReaders[i])
        if (needsRefresh(static_cast<unsigned>(i), t))
          out.push_back({t, {Carries::State, static_cast<unsigned>(i), -1}});
  // 2. Each part's values, as the schedule runs them.
  for (auto [phase, m] : pipelineOrder(schedule == PipelineSchedule::GPipe, s, stages, microbatches, hasBackward))
    for (int64_t v : part(s, phase).outputs)
      if (v >= 0)
        for (int64_t t : perMicrobatchTo[v])
          out.push_back({t, {Carries::PerMicrobatch, static_cast<unsigned>(v), m}});
  // 3. The summed gradients, then the update's values.
  for (P phase : {P::Backward, P::Update})
    for (int64_t v : part(s, phase).outputs)
      if (v >= 0)
        for (int64_t t : onceTo[v])
          out.push_back({t, {Carries::Once, static_cast<unsigned>(v), -1}});
  return out;
}

PipelineProgram::PipelineProgram() : impl(std::make_unique<Impl>()) {}
PipelineProgram::~PipelineProgram() = default;

int64_t PipelineProgram::stage() const { return impl->stage; }
int64_t PipelineProgram::stages() const { return impl->stages; }
int64_t PipelineProgram::dataIndex() const { return impl->dataIndex; }
int64_t PipelineProgram::dataSize() const { return impl->dataSize; }
const PipelineSplit &PipelineProgram::split() const { return impl->split; }
int64_t PipelineProgram::rankOf(int64_t stage, int64_t data) const {
  return impl->rankOf(stage, data);
}
double PipelineProgram::computeSeconds() const { return impl->compute; }
double PipelineProgram::waitSeconds() const { return impl->waiting; }

double PipelineProgram::idealBubble() const {
  double p = static_cast<double>(impl->stages), k = static_cast<double>(impl->microbatches);
  return (p - 1) / (k + p - 1);
}
double PipelineProgram::measuredBubble() const {
  return impl->wall > 0 ? std::max(0.0, 1 - impl->compute / impl->wall) : 0;
}

ExitCode PipelineProgram::build(MLIRContext &context, func::FuncOp func, const Mesh &mesh,
                                rt::comm::Communicator &comm, PipelineSchedule schedule,
                                int64_t microbatches) {
  Impl &p = *impl;
  p.comm = &comm;
  p.mesh = mesh;
  p.schedule = schedule;
  p.microbatches = microbatches;
  int64_t pipeAxis = mesh.axisIndex("pipe");
  int64_t dataAxis = mesh.axisIndex("data");
  if (pipeAxis < 0 || mesh.axes().size() != (dataAxis < 0 ? 1u : 2u))
    return fail(context, kExitBadInput,
                "--parallel pipeline runs on a mesh of 'pipe' and, optionally, 'data' "
                "(not '" + mesh.str() + "')");
  std::vector<int64_t> coords = mesh.coordinates(comm.rank());
  p.stages = mesh.axes()[pipeAxis].second;
  p.stage = coords[pipeAxis];
  if (dataAxis >= 0) {
    p.dataSize = mesh.axes()[dataAxis].second;
    p.dataIndex = coords[dataAxis];
  }
  if (microbatches < 1)
    return fail(context, kExitBadInput, "--microbatches must be at least 1");

  auto split = splitPipeline(func, p.stages);
  if (failed(split))
    return kExitBadInput;
  p.split = std::move(*split);
  p.analyse(func);
  p.sends.resize(p.stages);
  for (int64_t s = 0; s < p.stages; ++s)
    p.sends[s] = p.messagesOf(s);
  p.expected.assign(p.stages, {});
  for (int64_t s = 0; s < p.stages; ++s)
    for (const Message &m : p.sends[s])
      if (m.to == p.stage)
        p.expected[s].push_back(m.key);

  // Every rank must run the same cut and schedule: a hash of every stage's
  // messages, exchanged once.
  llvm::hash_code hash = llvm::hash_combine(p.stages, microbatches, static_cast<int>(schedule));
  for (const auto &list : p.sends)
    for (const Message &m : list)
      hash = llvm::hash_combine(hash, m.to, static_cast<int>(std::get<0>(m.key)),
                                std::get<1>(m.key), std::get<2>(m.key));
  if (rt::Status s = comm.checkSchedule(static_cast<uint64_t>(hash),
                                        func.getSymName().str() + " (pipeline)");
      !s.ok())
    return fail(context, kExitBadInput, s.message());

  // This stage's parts, compiled for the CPU in a module of their own.
  p.owner = ModuleOp::create(func.getLoc());
  std::vector<std::pair<int, func::FuncOp>> mine;
  for (PipelinePart &part : p.split.parts) {
    if (!part.func)
      continue;
    func::FuncOp f = part.func;
    part.func = nullptr;
    if (part.stage != p.stage) {
      f.erase();
      continue;
    }
    f->moveBefore(p.owner->getBody(), p.owner->getBody()->end());
    mine.push_back({static_cast<int>(part.phase), f});
    p.present[static_cast<int>(part.phase)] = true;
  }
  if (failed(runCompilePipeline(*p.owner)))
    return kExitInternalError;
  for (auto [phase, f] : mine) {
    codegen::CpuFailure why;
    std::string message;
    auto built = codegen::buildCpuModule(f, why, message);
    if (failed(built))
      return fail(context, kExitInternalError,
                  "pipeline stage " + std::to_string(p.stage) + " " +
                      phaseName(static_cast<PipelinePhase>(phase)) + ": " + message);
    std::string error;
    if (ExitCode c = LoadedModule::fromMemory(built->bytes, p.parts[phase], error))
      return fail(context, c, error);
  }
  // The stages start together, so that the waits measured are the
  // schedule's, not another stage's compilation.
  if (rt::Status s = comm.barrier(); !s.ok())
    return fail(context, kExitRuntimeFault, s.message());
  return kExitSuccess;
}

ExitCode PipelineProgram::Impl::post(const Message &message,
                                     const std::shared_ptr<HostTensor> &t, std::string &error) {
  int peer = static_cast<int>(rankOf(message.to, dataIndex));
  if (rt::Status s = comm->postSend(t->data(), static_cast<uint64_t>(t->numel()), t->dtype(), peer);
      !s.ok()) {
    error = s.message();
    return kExitRuntimeFault;
  }
  inFlight.push_back(t);
  return kExitSuccess;
}

ExitCode PipelineProgram::Impl::fetch(int64_t from, const Key &key,
                                      std::shared_ptr<HostTensor> &out, std::string &error) {
  auto found = held.find(key);
  if (found != held.end()) {
    out = found->second;
    return kExitSuccess;
  }
  // The peer's messages arrive in its order: receive up to this one.
  auto start = Clock::now();
  std::vector<Key> &list = expected[from];
  while (received[from] < list.size()) {
    const Key &next = list[received[from]++];
    auto [carries, index, m] = next;
    RankedTensorType type = carries == Carries::State ? argumentTypes[index]
                                                      : split.values[index].type;
    auto t = std::make_shared<HostTensor>(
        dtypeOf(type.getElementType()),
        std::vector<int64_t>(type.getShape().begin(), type.getShape().end()));
    int peer = static_cast<int>(rankOf(from, dataIndex));
    if (rt::Status s = comm->recv(t->mutableData(), static_cast<uint64_t>(t->numel()),
                                  t->dtype(), peer);
        !s.ok()) {
      error = s.message();
      return kExitRuntimeFault;
    }
    held[next] = t;
    if (next == key) {
      out = t;
      waiting += secondsSince(start);
      return kExitSuccess;
    }
  }
  error = "pipeline stage " + std::to_string(stage) + " waits for a value stage " +
          std::to_string(from) + " never sends (an internal error)";
  return kExitInternalError;
}

ExitCode PipelineProgram::run(const std::function<HostTensor(unsigned, int64_t)> &argument,
                              std::vector<std::vector<HostTensor>> &results,
                              std::string &error) {
  using P = PipelinePhase;
  Impl &p = *impl;
  auto stepStart = Clock::now();
  p.held.clear();
  p.inFlight.clear();
  p.received.assign(p.stages, 0);
  results.assign(p.split.resultStages.size(), {});
  const std::vector<Message> &sends = p.sends[p.stage];
  size_t nextSend = 0;
  // Sends the messages this stage owes up to (and including) those of `key`.
  auto sendFor = [&](Carries carries, unsigned index, int64_t m,
                     const std::shared_ptr<HostTensor> &t) -> ExitCode {
    while (nextSend < sends.size() && sends[nextSend].key == Key{carries, index, m}) {
      if (ExitCode c = p.post(sends[nextSend], t, error))
        return c;
      ++nextSend;
    }
    return kExitSuccess;
  };

  // 1. State this stage updates for the stages that read it, then the
  //    current value of state this stage reads and another updates.
  std::map<unsigned, std::shared_ptr<HostTensor>> arguments;
  while (nextSend < sends.size() && std::get<0>(sends[nextSend].key) == Carries::State) {
    unsigned i = std::get<1>(sends[nextSend].key);
    auto t = std::make_shared<HostTensor>(argument(i, -1));
    if (ExitCode c = sendFor(Carries::State, i, -1, t))
      return c;
  }
  for (unsigned i = 0; i < p.refreshFrom.size(); ++i) {
    if (!p.needsRefresh(i, p.stage))
      continue;
    std::shared_ptr<HostTensor> fresh;
    if (ExitCode c = p.fetch(p.refreshFrom[i], Key{Carries::State, i, -1}, fresh, error))
      return c;
    arguments[i] = fresh;
  }
  auto argumentFor = [&](unsigned i, int64_t m) -> HostTensor {
    if (auto found = arguments.find(i); found != arguments.end())
      return HostTensor::borrow(found->second->dtype(), found->second->shape(),
                                found->second->data(), found->second->byteSize());
    return argument(i, m);
  };

  // 2. The micro-batches, as the schedule orders them.
  std::map<unsigned, HostTensor> summed;
  auto runPart = [&](P phase, int64_t m) -> ExitCode {
    const PipelinePart &part = p.part(p.stage, phase);
    if (!p.present[static_cast<int>(phase)])
      return kExitSuccess;
    std::vector<HostTensor> inputs;
    std::vector<std::shared_ptr<HostTensor>> keep;
    for (const PipelineInput &in : part.inputs) {
      if (in.kind == PipelineInput::Argument) {
        inputs.push_back(argumentFor(in.index, m));
        continue;
      }
      const PipelineValue &value = p.split.values[in.index];
      std::shared_ptr<HostTensor> t;
      if (phase == P::Update && value.phase != P::Update) {
        if (value.stage == p.stage) {
          const HostTensor &sum = summed.at(in.index);
          inputs.push_back(HostTensor::borrow(sum.dtype(), sum.shape(), sum.data(), sum.byteSize()));
          continue;
        }
        if (ExitCode c = p.fetch(value.stage, Key{Carries::Once, in.index, -1}, t, error))
          return c;
      } else {
        Key key{phase == P::Update ? Carries::Once : Carries::PerMicrobatch, in.index,
                phase == P::Update ? -1 : m};
        if (value.stage == p.stage)
          t = p.held.at(key);
        else if (ExitCode c = p.fetch(value.stage, key, t, error))
          return c;
      }
      keep.push_back(t);
      inputs.push_back(HostTensor::borrow(t->dtype(), t->shape(), t->data(), t->byteSize()));
    }
    std::vector<HostTensor> outputs;
    auto start = Clock::now();
    if (ExitCode c = p.parts[static_cast<int>(phase)].run("cpu", inputs, outputs, error))
      return c;
    p.compute += secondsSince(start);
    for (auto [r, out] : part.trainResults)
      results[r].push_back(outputs[out]);
    for (auto [i, v] : llvm::enumerate(part.outputs)) {
      if (v < 0)
        continue;
      const PipelineValue &value = p.split.values[v];
      auto t = std::make_shared<HostTensor>(std::move(outputs[i]));
      auto index = static_cast<unsigned>(v);
      if (phase == P::Update) {
        p.held[Key{Carries::Once, index, -1}] = t;
        continue;
      }
      if (value.accumulated) {
        auto [it, first] = summed.try_emplace(index, *t);
        if (!first)
          accumulate(it->second, *t);
      }
      if (value.perMicrobatch) {
        p.held[Key{Carries::PerMicrobatch, index, m}] = t;
        if (ExitCode c = sendFor(Carries::PerMicrobatch, index, m, t))
          return c;
      }
    }
    return kExitSuccess;
  };
  for (auto [phase, m] : pipelineOrder(p.schedule == PipelineSchedule::GPipe, p.stage, p.stages, p.microbatches,
                                       p.hasBackward)) {
    if (ExitCode c = runPart(phase, m))
      return c;
    // A micro-batch's activations go once its backward has run.
    if (phase == P::Backward)
      for (auto it = p.held.begin(); it != p.held.end();)
        it = std::get<0>(it->first) == Carries::PerMicrobatch && std::get<2>(it->first) == m
                 ? p.held.erase(it)
                 : std::next(it);
  }

  // 3. Gradients: the mean over micro-batches, then over data replicas (in
  //    replica order, by the stage's first replica), then to the stages
  //    whose update reads them, and the update.
  for (auto &[index, sum] : summed) {
    rt::comm::divideInPlace(sum.mutableData(), static_cast<uint64_t>(sum.numel()), sum.dtype(),
                            static_cast<int>(p.microbatches));
    if (p.dataSize > 1) {
      int leader = static_cast<int>(p.rankOf(p.stage, 0));
      uint64_t count = static_cast<uint64_t>(sum.numel());
      rt::Status s;
      if (p.dataIndex == 0) {
        HostTensor other(sum.dtype(), sum.shape());
        for (int64_t d = 1; d < p.dataSize && s.ok(); ++d) {
          s = p.comm->recv(other.mutableData(), count, sum.dtype(),
                           static_cast<int>(p.rankOf(p.stage, d)));
          if (s.ok())
            accumulate(sum, other);
        }
        rt::comm::divideInPlace(sum.mutableData(), count, sum.dtype(),
                                static_cast<int>(p.dataSize));
        for (int64_t d = 1; d < p.dataSize && s.ok(); ++d)
          s = p.comm->send(sum.data(), count, sum.dtype(), static_cast<int>(p.rankOf(p.stage, d)));
      } else {
        s = p.comm->send(sum.data(), count, sum.dtype(), leader);
        if (s.ok())
          s = p.comm->recv(sum.mutableData(), count, sum.dtype(), leader);
      }
      if (!s.ok()) {
        error = s.message();
        return kExitRuntimeFault;
      }
    }
    auto t = std::make_shared<HostTensor>(sum);
    if (ExitCode c = sendFor(Carries::Once, index, -1, t))
      return c;
  }
  if (ExitCode c = runPart(P::Update, -1))
    return c;
  for (int64_t v : p.part(p.stage, P::Update).outputs)
    if (v >= 0)
      if (ExitCode c = sendFor(Carries::Once, static_cast<unsigned>(v), -1,
                               p.held.at(Key{Carries::Once, static_cast<unsigned>(v), -1})))
        return c;
  if (nextSend != sends.size()) {
    error = "pipeline stage " + std::to_string(p.stage) + " sent " + std::to_string(nextSend) +
            " of its " + std::to_string(sends.size()) + " messages (an internal error)";
    return kExitInternalError;
  }
  if (rt::Status s = p.comm->waitSends(); !s.ok()) {
    error = s.message();
    return kExitRuntimeFault;
  }
  p.inFlight.clear();
  p.held.clear();
  p.wall += secondsSince(stepStart);
  return kExitSuccess;
}

} // namespace dlc
