//===- Session.cpp - Run a module's plan on a device ----------------------===//

#include "runtime/executor/Session.h"

#include "runtime/base/Log.h"
#include "runtime/hal/DeviceRegistry.h"

namespace dlc::rt {

namespace fb = dlc::fb;

namespace {

hal::BinaryFormat halFormat(fb::BinaryFormat format) {
  switch (format) {
  case fb::BinaryFormat::ptx:
    return hal::BinaryFormat::kPtx;
  case fb::BinaryFormat::cubin:
    return hal::BinaryFormat::kCubin;
  default:
    return hal::BinaryFormat::kSharedObject;
  }
}

template <typename T> uint32_t sizeOf(const flatbuffers::Vector<T> *v) {
  return v ? v->size() : 0;
}

} // namespace

Session::~Session() {
  // The executable's code must outlive nothing that calls it; the stream
  // goes first, then the code, then the memory.
  stream_.reset();
  executable_.reset();
  arena_.reset();
}

uint64_t Session::arenaSize() const { return arena_ ? arena_->size() : 0; }

Status Session::create(std::shared_ptr<const format::LoadedModule> module,
                       const std::string &deviceName, const SessionOptions &options,
                       std::unique_ptr<Session> *out) {
  if (!module)
    return invalidArgument("no module");
  std::unique_ptr<Session> session(new Session());
  session->module_ = std::move(module);
  DLC_RETURN_IF_ERROR(hal::createDevice(deviceName, options.device, &session->device_));
  DLC_RETURN_IF_ERROR(session->resolve());
  *out = std::move(session);
  return okStatus();
}

Status Session::resolve() {
  const format::LoadedModule &m = *module_;
  const fb::Module &root = m.root();
  const std::string &label = m.label();
  const std::string &deviceName = device_->name();

  // 1. Checks against the device, before any allocation.
  if (sizeOf(root.plans()) != 1)
    return unimplemented(label, ": the module has ", sizeOf(root.plans()),
                         " ranks; running more than one needs a communicator, which this "
                         "runtime does not have yet");
  const fb::Plan *plan = root.plans()->Get(0);
  if (plan->arena_size() > device_->limits().maxAllocationBytes)
    return resourceExhausted(label, ": the plan's arena of ", plan->arena_size(),
                             " bytes is over the memory limit of device '", deviceName,
                             "' (", device_->limits().maxAllocationBytes, " bytes)");

  // Kernels the plan launches, in the order of first use, mapped to their
  // index in the executable.
  const uint32_t kernelCount = sizeOf(root.kernels());
  std::vector<int64_t> executableIndex(kernelCount, -1);
  hal::ExecutableSpec spec;
  std::vector<int64_t> binaryIndex(sizeOf(root.sections()), -1);
  const auto *types = plan->commands_type();
  const auto *commands = plan->commands();
  for (uint32_t c = 0; c < sizeOf(commands); ++c) {
    const fb::Command type = types->Get(c);
    if (type == fb::Command::LibraryCall || type == fb::Command::Collective)
      return unimplemented(label, ": plans[0].commands[", c, "] is a ",
                           fb::EnumNameCommand(type), ", which this runtime cannot execute yet");
    if (type != fb::Command::Launch)
      continue;
    uint32_t k = commands->GetAs<fb::Launch>(c)->kernel();
    if (executableIndex[k] >= 0)
      continue;
    const fb::Kernel *kernel = root.kernels()->Get(k);
    const hal::TargetKind wanted =
        kernel->target() == fb::Target::cpu ? hal::TargetKind::kCpu : hal::TargetKind::kCuda;
    if (wanted != device_->targetKind())
      return unavailable(label, ": kernel '", kernel->name()->str(), "' targets ",
                         fb::EnumNameTarget(kernel->target()), ", not device '", deviceName,
                         "'");
    // The first binary this device can load.
    const fb::KernelBinary *chosen = nullptr;
    for (uint32_t b = 0; b < sizeOf(kernel->binaries()) && !chosen; ++b) {
      const fb::KernelBinary *bin = kernel->binaries()->Get(b);
      if (device_->acceptsBinary(halFormat(bin->format()), bin->arch()->str()))
        chosen = bin;
    }
    if (!chosen)
      return unavailable(label, ": kernel '", kernel->name()->str(),
                         "' has no binary that device '", deviceName, "' can load");
    if (binaryIndex[chosen->section()] < 0) {
      binaryIndex[chosen->section()] = static_cast<int64_t>(spec.binaries.size());
      const fb::Section *section = root.sections()->Get(chosen->section());
      hal::BinarySpec binary;
      binary.name = section->name()->str();
      binary.format = halFormat(chosen->format());
      binary.arch = chosen->arch()->str();
      binary.bytes = m.sectionData(chosen->section());
      spec.binaries.push_back(std::move(binary));
    }
    hal::KernelSpec ks;
    ks.name = kernel->name()->str();
    ks.entry = kernel->entry()->str();
    ks.binary = static_cast<uint32_t>(binaryIndex[chosen->section()]);
    ks.argCount = sizeOf(kernel->args());
    if (const fb::CpuLaunch *launch = kernel->cpu()) {
      ks.parallelExtent = launch->parallel_extent();
      ks.grain = launch->grain();
    }
    executableIndex[k] = static_cast<int64_t>(spec.kernels.size());
    spec.kernels.push_back(std::move(ks));
  }

  // 2. Allocate and load.
  DLC_RETURN_IF_ERROR(
      device_->allocate(plan->arena_size(), plan->arena_alignment(), &arena_).prepend(label));
  DLC_RETURN_IF_ERROR(device_->loadExecutable(spec, &executable_).prepend(label));
  DLC_RETURN_IF_ERROR(device_->createStream(&stream_));

  // 3. Resolve the commands.
  auto ref = [](const fb::BufferRef *r) {
    return Ref{static_cast<uint8_t>(r->space()), r->index(), r->offset()};
  };
  for (uint32_t c = 0; c < sizeOf(commands); ++c) {
    Step step{};
    if (types->Get(c) == fb::Command::Launch) {
      const fb::Launch *launch = commands->GetAs<fb::Launch>(c);
      step.kind = Step::kLaunch;
      step.kernel = static_cast<uint32_t>(executableIndex[launch->kernel()]);
      step.firstArg = static_cast<uint32_t>(refs_.size());
      step.argCount = sizeOf(launch->args());
      for (uint32_t a = 0; a < step.argCount; ++a)
        refs_.push_back(ref(launch->args()->Get(a)));
    } else if (types->Get(c) == fb::Command::Copy) {
      const fb::Copy *copy = commands->GetAs<fb::Copy>(c);
      step.kind = Step::kCopy;
      step.src = ref(copy->src());
      step.dst = ref(copy->dst());
      step.bytes = copy->bytes();
    } else {
      continue;
    }
    steps_.push_back(step);
  }
  for (uint32_t w = 0; w < m.weights().size(); ++w)
    weightPointers_.push_back(const_cast<uint8_t *>(m.weightData(w).data()));
  if (logEnabled())
    log(LogLevel::kInfo, strCat("session on ", deviceName, ": arena ", plan->arena_size(),
                                " bytes, ", spec.kernels.size(), " kernels, ", steps_.size(),
                                " commands"));
  return okStatus();
}

Status Session::run(const void *const *inputs, size_t inputCount, void *const *outputs,
                    size_t outputCount) {
  const format::LoadedModule &m = *module_;
  if (inputCount != m.inputs().size() || outputCount != m.outputs().size())
    return invalidArgument("run: ", inputCount, " inputs and ", outputCount,
                           " outputs given, the module has ", m.inputs().size(), " and ",
                           m.outputs().size());
  inputPointers_.assign(inputs, inputs + inputCount);
  outputPointers_.assign(outputs, outputs + outputCount);
  uint8_t *arena = static_cast<uint8_t *>(arena_->devicePointer());
  auto address = [&](const Ref &r) -> uint8_t * {
    uint8_t *base = nullptr;
    switch (static_cast<fb::BufferSpace>(r.space)) {
    case fb::BufferSpace::arena:
      base = arena;
      break;
    case fb::BufferSpace::input:
      base = static_cast<uint8_t *>(const_cast<void *>(inputPointers_[r.index]));
      break;
    case fb::BufferSpace::output:
      base = static_cast<uint8_t *>(outputPointers_[r.index]);
      break;
    case fb::BufferSpace::weight:
      base = static_cast<uint8_t *>(weightPointers_[r.index]);
      break;
    }
    // A zero-byte tensor may come with a null pointer; nothing reads through it.
    return base ? base + r.offset : nullptr;
  };
  for (const Step &step : steps_) {
    if (step.kind == Step::kLaunch) {
      argPointers_.resize(step.argCount);
      for (uint32_t a = 0; a < step.argCount; ++a)
        argPointers_[a] = address(refs_[step.firstArg + a]);
      DLC_RETURN_IF_ERROR(
          stream_->dispatch(*executable_, step.kernel, argPointers_.data(), step.argCount));
    } else {
      if (step.bytes)
        DLC_RETURN_IF_ERROR(stream_->copy(address(step.dst), address(step.src), step.bytes));
    }
  }
  return stream_->synchronize();
}

} // namespace dlc::rt
