//===- Session.cpp - Run a module's plan on a device ----------------------===//
//
// Creating a session (resolving kernels, allocating the arena, weights,
// staging and state), enqueuing the plan and a run. The rest of Session's
// members: SessionDynamic.cpp (a module for a range of sizes),
// SessionCollectives.cpp (ranks and collectives), SessionChecks.cpp (the
// status words the kernels' data checks write).
//
//===----------------------------------------------------------------------===//

#include "runtime/executor/Session.h"
#include "runtime/executor/SessionInternal.h"

#include "runtime/comm/CommQueue.h"
#include "runtime/comm/CommRegistry.h"
#include "runtime/comm/NcclComm.h"

#include "runtime/base/Log.h"
#include "runtime/base/Memory.h"
#include "runtime/hal/DeviceRegistry.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <climits>
#include <cstring>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace dlc::rt {

namespace fb = dlc::fb;
using detail::allocateFor;
using detail::kStagingAlignment;
using detail::roundUp;
using detail::sizeOf;

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

const char *env(const char *name) {
  const char *v = std::getenv(name);
  return v && *v ? v : nullptr;
}

/// A kernel's file name in DLC_KERNEL_DUMP_DIR / DLC_KERNEL_OVERRIDE_DIR:
/// its name with anything but [A-Za-z0-9_.-] replaced by '_', then ".cu"
/// (target cuda) or ".cpp" (target cpu).
std::string kernelFileName(const fb::Kernel &kernel) {
  std::string name = kernel.name()->str();
  for (char &c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-'))
      c = '_';
  return name + (kernel.target() == fb::Target::cuda ? ".cu" : ".cpp");
}

/// The source `kernel` was compiled from: its own, or, where it has none,
/// the first kernel's of its target that has one (a module's kernels of a
/// target share one source, which the compiler stores once), or null.
const flatbuffers::String *sourceOf(const fb::Module &root, const fb::Kernel &kernel) {
  if (kernel.source() && kernel.source()->size() > 0)
    return kernel.source();
  for (uint32_t k = 0; k < sizeOf(root.kernels()); ++k) {
    const fb::Kernel *other = root.kernels()->Get(k);
    if (other->target() == kernel.target() && other->source() && other->source()->size() > 0)
      return other->source();
  }
  return nullptr;
}

/// Writes the kernel's source into DLC_KERNEL_DUMP_DIR when it is set.
void dumpSource(const fb::Kernel &kernel, const flatbuffers::String *source) {
  const char *dir = env("DLC_KERNEL_DUMP_DIR");
  if (!dir || !source)
    return;
  const std::string path = std::string(dir) + "/" + kernelFileName(kernel);
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(source->data(), source->size());
  if (!f && logEnabled())
    log(LogLevel::kWarning, strCat("DLC_KERNEL_DUMP_DIR: cannot write '", path, "'"));
}

/// The source DLC_KERNEL_OVERRIDE_DIR holds for a cuda kernel, if any.
bool overrideSource(const fb::Kernel &kernel, std::string *source) {
  const char *dir = env("DLC_KERNEL_OVERRIDE_DIR");
  if (!dir || kernel.target() != fb::Target::cuda)
    return false;
  const std::string path = std::string(dir) + "/" + kernelFileName(kernel);
  std::ifstream f(path, std::ios::binary);
  if (!f)
    return false;
  std::ostringstream text;
  text << f.rdbuf();
  *source = text.str();
  if (logEnabled())
    log(LogLevel::kWarning, strCat("kernel '", kernel.name()->str(), "': using '", path,
                                   "' (DLC_KERNEL_OVERRIDE_DIR) instead of the module's code"));
  return true;
}

} // namespace

Status detail::allocateFor(hal::Device &device, const char *what, uint64_t bytes,
                           uint64_t alignment, std::unique_ptr<hal::Buffer> *out) {
  Status s = device.allocate(bytes, alignment, out);
  if (s.ok())
    return s;
  return Status(s.code(), strCat("cannot allocate ", what, " (", bytes, " bytes) on device '",
                                 device.name(), "': ", s.message()));
}

Session::~Session() {
  // The communication thread first (it may still hold a call), then the
  // executable's code must outlive nothing that calls it; the stream
  // goes first (a graph before it), then the code, then the memory.
  commQueue_.reset();
  commEvents_.clear();
  commStream_.reset();
  scratch_.reset();
  graph_.reset();
  stream_.reset();
  executable_.reset();
  arena_.reset();
  state_.reset();
  status_.reset();
  deviceWeights_.reset();
  staging_.reset();
  dynamicStaging_.reset();
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
  // TEST-ONLY: `dlc verify`'s tests check that it finds a faulty kernel.
  if (const char *k = std::getenv("DLC_DEBUG_PERTURB_KERNEL");
      k && *k && session->device_->sharesHostMemory())
    session->perturbKernel_ = std::strtoll(k, nullptr, 10);
  *out = std::move(session);
  return okStatus();
}

Status Session::resolve() {
  const format::LoadedModule &m = *module_;
  const fb::Module &root = m.root();
  const std::string &label = m.label();
  const std::string &deviceName = device_->name();

  // 1. Checks against the device, before any allocation.
  if (sizeOf(root.plans()) > 1 || sizeOf(root.collectives()) > 0)
    DLC_RETURN_IF_ERROR(openCommunicator(sizeOf(root.plans())).prepend(label));
  const fb::Plan *plan = root.plans()->Get(comm_ ? comm_->rank() : 0);
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
    if (type == fb::Command::LibraryCall)
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
    // The binary this device prefers (the first of the best rank); else
    // the source, on a device that compiles sources.
    const fb::KernelBinary *chosen = nullptr;
    int chosenRank = -1;
    for (uint32_t b = 0; b < sizeOf(kernel->binaries()); ++b) {
      const fb::KernelBinary *bin = kernel->binaries()->Get(b);
      int rank = device_->binaryRank(halFormat(bin->format()), bin->arch()->str());
      if (rank > chosenRank) {
        chosen = bin;
        chosenRank = rank;
      }
    }
    const flatbuffers::String *source = sourceOf(root, *kernel);
    const bool hasSource = source != nullptr;
    if (!chosen && !(hasSource && device_->compilesSource()))
      return unavailable(label, ": kernel '", kernel->name()->str(),
                         "' has no binary that device '", deviceName, "' can load");
    dumpSource(*kernel, source);
    hal::KernelSpec ks;
    ks.name = kernel->name()->str();
    ks.entry = kernel->entry()->str();
    ks.binary = hal::KernelSpec::kNoBinary;
    if (hasSource)
      ks.source = source->str();
    ks.sourceOverridden = overrideSource(*kernel, &ks.source);
    ks.argCount = sizeOf(kernel->args());
    ks.libraryGemm = format::libraryGemmOf(*kernel);
    if (const fb::CpuLaunch *launch = kernel->cpu()) {
      ks.parallelExtent = launch->parallel_extent();
      ks.grain = launch->grain();
    }
    if (const fb::CudaLaunch *launch = kernel->cuda();
        launch && kernel->target() == fb::Target::cuda) {
      const fb::Dim3 *g = launch->grid(), *b = launch->block();
      ks.grid[0] = g->x(), ks.grid[1] = g->y(), ks.grid[2] = g->z();
      ks.block[0] = b->x(), ks.block[1] = b->y(), ks.block[2] = b->z();
      ks.dynamicSharedMemory = launch->dynamic_shared_memory();
    }
    executableIndex[k] = static_cast<int64_t>(spec.kernels.size());
    kernelTimes_.push_back({kernel->name() ? kernel->name()->str() : "", 0, 0.0});
    int firstWritten = -1;
    for (uint32_t a = 0; a < sizeOf(kernel->args()) && firstWritten < 0; ++a)
      if (kernel->args()->Get(a)->access() != fb::Access::read)
        firstWritten = static_cast<int>(a);
    firstWrittenArg_.push_back(firstWritten);
    if (!chosen) {
      spec.kernels.push_back(std::move(ks));
      continue;
    }
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
    ks.binary = static_cast<uint32_t>(binaryIndex[chosen->section()]);
    spec.kernels.push_back(std::move(ks));
  }

  // 2. Allocate and load.
  DLC_RETURN_IF_ERROR(
      allocateFor(*device_, "the arena", plan->arena_size(), plan->arena_alignment(), &arena_)
          .prepend(label));
  DLC_RETURN_IF_ERROR(device_->loadExecutable(spec, &executable_).prepend(label));
  DLC_RETURN_IF_ERROR(device_->createStream(&stream_));

  // 3. Resolve the commands.
  auto ref = [](const fb::BufferRef *r) {
    return Ref{static_cast<uint8_t>(r->space()), r->index(), r->offset()};
  };
  // What each step reads and writes, for the collectives' waits.
  std::vector<std::vector<Access>> accesses;
  bool usesStatus = false;
  auto access = [&](const fb::BufferRef *r, bool writes, bool reads) {
    return Access{ref(r), r->bytes(), writes, reads};
  };
  // Format 1.3: a launch whose rows grow with the dynamic dimension runs
  // only the first N's rows where the stream can (prepareDynamicTensors
  // may still run it in full).
  const std::vector<format::DynamicDimInfo> &dynamicDims = m.dynamicDims();
  const bool rowPrefixes = !dynamicDims.empty() && stream_->runsRowPrefixes();
  for (uint32_t c = 0; c < sizeOf(commands); ++c) {
    Step step{};
    std::vector<Access> touched;
    if (types->Get(c) == fb::Command::Launch) {
      const fb::Launch *launch = commands->GetAs<fb::Launch>(c);
      const fb::Kernel *kernel = root.kernels()->Get(launch->kernel());
      step.kind = Step::kLaunch;
      step.kernel = static_cast<uint32_t>(executableIndex[launch->kernel()]);
      step.firstArg = static_cast<uint32_t>(refs_.size());
      step.argCount = sizeOf(launch->args());
      const fb::CpuLaunch *cpu = kernel->cpu();
      if (rowPrefixes && kernel->target() == fb::Target::cpu && cpu && cpu->dynamic_dim() >= 0)
        step.rowsPerN = cpu->parallel_extent() / dynamicDims[cpu->dynamic_dim()].max;
      for (uint32_t a = 0; a < step.argCount; ++a) {
        usesStatus = usesStatus || launch->args()->Get(a)->space() == fb::BufferSpace::status;
        refs_.push_back(ref(launch->args()->Get(a)));
        const fb::Access how =
            a < sizeOf(kernel->args()) ? kernel->args()->Get(a)->access() : fb::Access::read_write;
        touched.push_back(access(launch->args()->Get(a), how != fb::Access::read,
                                 how != fb::Access::write));
      }
    } else if (types->Get(c) == fb::Command::Collective) {
      const fb::Collective *coll = commands->GetAs<fb::Collective>(c);
      step.kind = Step::kCollective;
      step.kernel = coll->sequence();
      step.src = ref(coll->send());
      step.dst = ref(coll->recv());
      // (An all_reduce reads what it writes.)
      touched = {access(coll->send(), false, true), access(coll->recv(), true, true)};
    } else if (types->Get(c) == fb::Command::Copy) {
      const fb::Copy *copy = commands->GetAs<fb::Copy>(c);
      step.kind = Step::kCopy;
      step.src = ref(copy->src());
      step.dst = ref(copy->dst());
      step.bytes = copy->bytes();
      touched = {access(copy->src(), false, true), access(copy->dst(), true, false)};
    } else {
      continue;
    }
    steps_.push_back(step);
    accesses.push_back(std::move(touched));
  }
  findCollectiveWaits(accesses);
  // Scratch for strided gathers and scatters: the largest whole tensor.
  uint64_t scratchBytes = 0;
  for (uint32_t i = 0; i < sizeOf(root.collectives()); ++i) {
    const fb::CollectiveInfo *c = root.collectives()->Get(i);
    if (c->outer() != 1 && comm_)
      scratchBytes = std::max<uint64_t>(
          scratchBytes, static_cast<uint64_t>(c->count()) * comm_->size() *
                            elementSize(*format::dtypeFromWire(c->dtype())));
  }
  if (scratchBytes)
    DLC_RETURN_IF_ERROR(allocateFor(*device_, "the collectives' scratch", scratchBytes,
                                    kStagingAlignment, &scratch_)
                            .prepend(label));
  if (commQueue_ && !device_->sharesHostMemory())
    for (const Step &step : steps_)
      if (step.kind == Step::kCollective) {
        commEvents_.emplace_back();
        DLC_RETURN_IF_ERROR(device_->createEvent(&commEvents_.back()).prepend(label));
      }
  for (uint32_t w = 0; w < m.weights().size(); ++w)
    weightPointers_.push_back(const_cast<uint8_t *>(m.weightData(w).data()));
  if (!device_->sharesHostMemory())
    DLC_RETURN_IF_ERROR(prepareDeviceMemory().prepend(label));
  DLC_RETURN_IF_ERROR(allocateState().prepend(label));
  DLC_RETURN_IF_ERROR(prepareDynamicTensors(accesses).prepend(label));
  if (usesStatus) {
    DLC_RETURN_IF_ERROR(allocateFor(*device_, "the status words", format::kStatusBytes,
                                    kStagingAlignment, &status_)
                            .prepend(label));
    DLC_RETURN_IF_ERROR(clearStatus().prepend(label));
  }
  const char *graphs = env("DLC_CUDA_GRAPHS");
  // A plan with collectives waits for its peers on the host between
  // kernels: it is not captured.
  graphsEnabled_ = stream_->supportsGraphs() && !(graphs && std::string(graphs) == "0") &&
                   sizeOf(root.collectives()) == 0;
  if (logEnabled())
    log(LogLevel::kInfo, strCat("session on ", deviceName, ": arena ", plan->arena_size(),
                                " bytes, ", spec.kernels.size(), " kernels, ", steps_.size(),
                                " commands"));
  return okStatus();
}

Status Session::prepareDeviceMemory() {
  const format::LoadedModule &m = *module_;
  // The weights: one buffer, each weight at a multiple of 256 bytes.
  uint64_t total = 0;
  std::vector<uint64_t> offsets;
  for (uint32_t w = 0; w < m.weights().size(); ++w) {
    offsets.push_back(total);
    total = roundUp(total + m.weightData(w).size(), kStagingAlignment);
  }
  DLC_RETURN_IF_ERROR(
      allocateFor(*device_, "the weights", total, kStagingAlignment, &deviceWeights_));
  uint8_t *base = static_cast<uint8_t *>(deviceWeights_->devicePointer());
  for (uint32_t w = 0; w < m.weights().size(); ++w) {
    weightPointers_[w] = base + offsets[w];
    DLC_RETURN_IF_ERROR(
        stream_->copy(weightPointers_[w], m.weightData(w).data(), m.weightData(w).size()));
  }
  DLC_RETURN_IF_ERROR(stream_->synchronize());
  // Staging for inputs and outputs given in host memory.
  total = 0;
  for (const auto &t : m.inputs()) {
    inputStaging_.push_back(total);
    total = roundUp(total + t.bytes, kStagingAlignment);
  }
  for (const auto &t : m.outputs()) {
    outputStaging_.push_back(total);
    total = roundUp(total + t.bytes, kStagingAlignment);
  }
  return allocateFor(*device_, "the inputs' and outputs' staging", total, kStagingAlignment,
                     &staging_);
}

Status Session::allocateState() {
  const auto &state = module_->state();
  if (state.empty())
    return okStatus();
  uint64_t total = 0;
  std::vector<uint64_t> offsets;
  for (const auto &s : state) {
    offsets.push_back(total);
    total = roundUp(total + s.bytes, kStagingAlignment);
  }
  DLC_RETURN_IF_ERROR(allocateFor(*device_, "the state tensors", std::max<uint64_t>(total, 1),
                                  kStagingAlignment, &state_));
  uint8_t *base = static_cast<uint8_t *>(state_->devicePointer());
  for (uint64_t offset : offsets)
    statePointers_.push_back(base + offset);
  return resetState();
}

Status Session::resetState() {
  const format::LoadedModule &m = *module_;
  std::vector<uint8_t> zeros;
  for (uint32_t i = 0; i < m.state().size(); ++i) {
    const auto &s = m.state()[i];
    const void *initial;
    HostTensor drawn;
    if (s.draw) {
      // The compiler's initialiser, run here instead of stored: the same bits.
      Status status = format::drawTensor(*s.draw, s.dtype, s.shape, &drawn);
      if (!status.ok())
        return internalError("state '", s.name, "': ", status.message());
      initial = drawn.data();
    } else if (s.initialWeight >= 0) {
      initial = m.weightData(static_cast<uint32_t>(s.initialWeight)).data();
    } else {
      if (zeros.size() < s.bytes)
        zeros.assign(s.bytes, 0);
      initial = zeros.data();
    }
    if (s.bytes)
      DLC_RETURN_IF_ERROR(stream_->copy(statePointers_[i], initial, s.bytes));
    // A device's copy may still read `drawn`, which this iteration frees.
    if (s.draw)
      DLC_RETURN_IF_ERROR(stream_->synchronize());
  }
  return stream_->synchronize();
}

Status Session::readState(uint32_t i, void *host) {
  if (i >= statePointers_.size())
    return invalidArgument("state index ", i, " is out of range (",
                           statePointers_.size(), " state tensors)");
  if (uint64_t bytes = module_->state()[i].bytes)
    DLC_RETURN_IF_ERROR(stream_->copy(host, statePointers_[i], bytes));
  return stream_->synchronize();
}

Status Session::writeState(uint32_t i, const void *host) {
  if (i >= statePointers_.size())
    return invalidArgument("state index ", i, " is out of range (",
                           statePointers_.size(), " state tensors)");
  if (uint64_t bytes = module_->state()[i].bytes)
    DLC_RETURN_IF_ERROR(stream_->copy(statePointers_[i], host, bytes));
  return stream_->synchronize();
}

Status Session::enqueuePlan() {
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
    case fb::BufferSpace::state:
      base = static_cast<uint8_t *>(statePointers_[r.index]);
      break;
    case fb::BufferSpace::status:
      base = static_cast<uint8_t *>(status_->devicePointer());
      break;
    }
    // A zero-byte tensor may come with a null pointer; nothing reads through it.
    return base ? base + r.offset : nullptr;
  };
  // Collectives in flight: (the step that waits for it, its ticket).
  std::vector<std::pair<uint32_t, uint64_t>> inFlight;
  auto waitFor = [&](uint32_t upTo) -> Status {
    uint64_t ticket = 0;
    for (auto it = inFlight.begin(); it != inFlight.end();) {
      if (it->first <= upTo) {
        ticket = std::max(ticket, it->second);
        it = inFlight.erase(it);
      } else {
        ++it;
      }
    }
    if (!ticket)
      return okStatus();
    auto started = std::chrono::steady_clock::now();
    Status s = commQueue_->wait(ticket);
    collectiveWait_ +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return s;
  };
  size_t event = 0;
  for (uint32_t i = 0; i < steps_.size(); ++i) {
    const Step &step = steps_[i];
    DLC_RETURN_IF_ERROR(waitFor(i));
    if (step.kind == Step::kLaunch) {
      argPointers_.resize(step.argCount);
      for (uint32_t a = 0; a < step.argCount; ++a)
        argPointers_[a] = address(refs_[step.firstArg + a]);
      auto started = timeKernels_ ? std::chrono::steady_clock::now()
                                  : std::chrono::steady_clock::time_point();
      if (step.rowsPerN && runN_ != dynamicMax_)
        DLC_RETURN_IF_ERROR(stream_->dispatchRows(*executable_, step.kernel, argPointers_.data(),
                                                  step.argCount, step.rowsPerN * runN_));
      else
        DLC_RETURN_IF_ERROR(
            stream_->dispatch(*executable_, step.kernel, argPointers_.data(), step.argCount));
      if (timeKernels_) {
        auto ended = std::chrono::steady_clock::now();
        KernelTime &t = kernelTimes_[step.kernel];
        ++t.calls;
        t.seconds += std::chrono::duration<double>(ended - started).count();
        if (kernelEvents_.size() < kMaxKernelEvents)
          kernelEvents_.push_back({step.kernel, nanosecondsOf(started), nanosecondsOf(ended)});
      }
      if (static_cast<int64_t>(step.kernel) == perturbKernel_)
        perturbOutput(step.kernel);
    } else if (step.kind == Step::kCollective) {
      // After the kernels before it: a device's compute stream signals an
      // event the communication stream waits for; a host device's kernels
      // have run when dispatch returns.
      if (commStream_) {
        DLC_RETURN_IF_ERROR(stream_->record(*commEvents_[event]));
        DLC_RETURN_IF_ERROR(commStream_->waitEvent(*commEvents_[event]));
        ++event;
      } else {
        DLC_RETURN_IF_ERROR(stream_->synchronize());
      }
      uint32_t sequence = step.kernel;
      uint8_t *send = address(step.src), *recv = address(step.dst);
      inFlight.push_back({step.waitBefore, commQueue_->submit([this, sequence, send, recv] {
                            return collective(sequence, send, recv);
                          })});
    } else {
      if (step.bytes)
        DLC_RETURN_IF_ERROR(stream_->copy(address(step.dst), address(step.src), step.bytes));
    }
  }
  return waitFor(UINT32_MAX);
}

Status Session::run(const void *const *inputs, size_t inputCount, void *const *outputs,
                    size_t outputCount, const bool *inputOnDevice, const bool *outputOnDevice,
                    int64_t dynamicSize) {
  const format::LoadedModule &m = *module_;
  if (inputCount != m.inputs().size() || outputCount != m.outputs().size())
    return invalidArgument("run: ", inputCount, " inputs and ", outputCount,
                           " outputs given, the module has ", m.inputs().size(), " and ",
                           m.outputs().size());
  // The run's N (format 1.3); a static module has none (0), like a run at
  // max. `partial`: dynamic tensors hold fewer rows than the plan's.
  const int64_t n = dynamicSize ? dynamicSize : dynamicMax_;
  if (dynamicMax_ == 0 && dynamicSize != 0)
    return invalidArgument("run: N = ", dynamicSize, " given, but the module has no dynamic "
                           "dimension");
  if (dynamicMax_ != 0 && (n < dynamicMin_ || n > dynamicMax_))
    return invalidArgument("run: N = ", n, " of dynamic dimension '", m.dynamicDims()[0].name,
                           "' is outside [", dynamicMin_, ", ", dynamicMax_, "]");
  runN_ = n;
  const bool partial = n != dynamicMax_;
  inputPointers_.assign(inputs, inputs + inputCount);
  outputPointers_.assign(outputs, outputs + outputCount);
  if (status_) {
    // A run that failed half way may have left a failure in the words.
    if (statusDirty_)
      DLC_RETURN_IF_ERROR(clearStatus());
    statusDirty_ = true;
  }
  // Devices without host memory: inputs in host memory go up first, and
  // outputs in host memory are written to staging, copied down at the end.
  // At N < max a dynamic tensor always goes through staging (the caller's
  // rows of N, device memory or not, the plan's rows of max), its rows
  // beyond N filled with copies of the given ones.
  const bool staged = !device_->sharesHostMemory();
  auto rowsOf = [&](const format::TensorInfo &t) { return partial && t.dynamicDim >= 0; };
  if (staged) {
    uint8_t *staging = static_cast<uint8_t *>(staging_->devicePointer());
    for (size_t i = 0; i < inputCount; ++i) {
      const format::TensorInfo &t = m.inputs()[i];
      if (inputOnDevice && inputOnDevice[i] && !rowsOf(t))
        continue;
      uint8_t *p = staging + inputStaging_[i];
      inputPointers_[i] = p;
      const uint64_t bytes = t.bytesAt(n, dynamicMax_);
      DLC_RETURN_IF_ERROR(stream_->copy(p, inputs[i], bytes));
      if (rowsOf(t))
        DLC_RETURN_IF_ERROR(fillRows(p, bytes, t.bytes));
    }
    for (size_t o = 0; o < outputCount; ++o)
      if (!(outputOnDevice && outputOnDevice[o]) || rowsOf(m.outputs()[o]))
        outputPointers_[o] = staging + outputStaging_[o];
  } else if (partial) {
    // Host memory: the tensors that a launch run in full or a copy touches
    // go through the session's max rows (prepareDynamicTensors).
    uint8_t *base = static_cast<uint8_t *>(dynamicStaging_ ? dynamicStaging_->devicePointer()
                                                           : nullptr);
    for (const HostStaged &d : hostStaged_) {
      uint8_t *p = base + d.offset;
      if (d.output) {
        outputPointers_[d.index] = p;
        continue;
      }
      inputPointers_[d.index] = p;
      const uint64_t bytes = d.rowBytes * static_cast<uint64_t>(n);
      DLC_RETURN_IF_ERROR(stream_->copy(p, inputs[d.index], bytes));
      DLC_RETURN_IF_ERROR(
          fillRows(p, bytes, d.rowBytes * static_cast<uint64_t>(dynamicMax_)));
    }
  }

  if (!graphsEnabled_) {
    DLC_RETURN_IF_ERROR(enqueuePlan());
  } else {
    // The plan's pointers and N: a graph replays only with the ones it
    // captured (N sets the extent of launches that run row prefixes).
    std::vector<const void *> key(inputPointers_.begin(), inputPointers_.end());
    key.insert(key.end(), outputPointers_.begin(), outputPointers_.end());
    if (graph_ && key == graphKey_ && n == graphN_) {
      DLC_RETURN_IF_ERROR(stream_->launchGraph(*graph_));
      ++graphReplays_;
      if (logEnabled())
        log(LogLevel::kDebug, strCat("session on ", device_->name(), ": replayed the CUDA graph"));
    } else if (key == lastKey_ && n == lastN_) {
      // The second run with these pointers: capture the plan, then replay it.
      graph_.reset();
      DLC_RETURN_IF_ERROR(stream_->beginCapture());
      Status queued = enqueuePlan();
      std::unique_ptr<hal::Graph> graph;
      Status captured = stream_->endCapture(&graph);
      DLC_RETURN_IF_ERROR(queued);
      if (captured.ok()) {
        graph_ = std::move(graph);
        graphKey_ = key;
        graphN_ = n;
        DLC_RETURN_IF_ERROR(stream_->launchGraph(*graph_));
        ++graphReplays_;
        if (logEnabled())
          log(LogLevel::kInfo, strCat("session on ", device_->name(), ": captured ",
                                      steps_.size(), " commands into a CUDA graph"));
      } else {
        graphsEnabled_ = false;
        if (logEnabled())
          log(LogLevel::kWarning, strCat("session on ", device_->name(),
                                         ": CUDA graph capture failed, running without: ",
                                         captured.message()));
        DLC_RETURN_IF_ERROR(enqueuePlan());
      }
    } else {
      DLC_RETURN_IF_ERROR(enqueuePlan());
    }
    lastKey_ = std::move(key);
    lastN_ = n;
  }

  if (staged) {
    for (size_t o = 0; o < outputCount; ++o) {
      const format::TensorInfo &t = m.outputs()[o];
      if (!(outputOnDevice && outputOnDevice[o]) || rowsOf(t))
        DLC_RETURN_IF_ERROR(
            stream_->copy(outputs[o], outputPointers_[o], t.bytesAt(n, dynamicMax_)));
    }
  } else if (partial) {
    for (const HostStaged &d : hostStaged_)
      if (d.output)
        DLC_RETURN_IF_ERROR(stream_->copy(outputs[d.index], outputPointers_[d.index],
                                          d.rowBytes * static_cast<uint64_t>(n)));
  }
  DLC_RETURN_IF_ERROR(stream_->synchronize());
  return status_ ? readStatus() : okStatus();
}

int64_t Session::nanosecondsOf(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

void Session::perturbOutput(uint32_t kernel) {
  int arg = firstWrittenArg_[kernel];
  if (arg < 0 || arg >= static_cast<int>(argPointers_.size()) || !argPointers_[arg])
    return;
  // The first element, read as a float: a fault a test can place.
  float value;
  std::memcpy(&value, argPointers_[arg], sizeof value);
  value += 1.0f;
  std::memcpy(argPointers_[arg], &value, sizeof value);
}

uint64_t Session::weightBytes() const {
  uint64_t total = 0;
  for (uint32_t i = 0; i < module_->weights().size(); ++i)
    total += module_->weightData(i).size();
  return total;
}

Status Session::enableKernelTiming() {
  if (!device_->sharesHostMemory() || commStream_)
    return unimplemented("per-kernel timing on device '", device_->name(),
                         "': only host devices time their kernels yet");
  timeKernels_ = true;
  return okStatus();
}

} // namespace dlc::rt
