//===- AutoPlan.cpp - predict every mesh of N devices, choose one ---------===//

#include "driver/AutoPlan.h"

#include "driver/CompiledStep.h"
#include "driver/DriverSupport.h"
#include "driver/ModelLoader.h"
#include "driver/PipelineStep.h"
#include "driver/PlanReport.h"
#include "ir/DlcDialect.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <map>
#include <tuple>

using namespace mlir;

namespace dlc {

std::string PlanCandidate::mesh() const {
  std::string out;
  auto axis = [&](const char *name, int64_t size) {
    if (size > 1)
      out += (out.empty() ? "" : ",") + std::string(name) + "=" + std::to_string(size);
  };
  axis("data", data);
  axis("model", model);
  axis("pipe", pipe);
  return out.empty() ? "none" : out;
}

std::string PlanCandidate::parallel() const {
  std::string out;
  auto add = [&](bool on, const char *name) {
    if (on)
      out += (out.empty() ? "" : ",") + std::string(name);
  };
  add(data > 1, "data");
  add(model > 1, "tensor");
  add(pipe > 1, "pipeline");
  return out.empty() ? "none" : out;
}

namespace {

/// Whether a collective of `func` runs over mesh axis `axis`.
bool hasCollectiveOver(func::FuncOp func, StringRef axis) {
  bool found = false;
  func.walk([&](Operation *op) {
    if (kernelRoleOf(op) != KernelRole::Collective)
      return;
    if (auto axes = op->getAttrOfType<ArrayAttr>("mesh_axes"))
      for (Attribute a : axes)
        found |= cast<StringAttr>(a).getValue() == axis;
  });
  return found;
}

/// Compiles each (data, model, zero, pipe, batch) train step once; a
/// pipeline's micro-batch program carries the stages the ranks would cut
/// (dlc.stage on its forward ops, pipelineCut), which its prediction reads.
class Planner {
public:
  Planner(const CommonOptions &options, MLIRContext &context, llvm::SourceMgr &sourceMgr,
          const DeviceSpec &device, const LinkSpec &link, std::string batchDim)
      : options(options), context(context), sourceMgr(sourceMgr), device(device), link(link),
        batchDim(std::move(batchDim)) {}

  /// The planned train step for a (data, model) rank at global batch
  /// `batch`, or null with `error` set.
  func::FuncOp compiled(int64_t data, int64_t model, bool zero, int64_t pipe, int64_t batch,
                        std::string &error) {
    auto key = std::make_tuple(data, model, zero, pipe, batch);
    if (auto it = modules.find(key); it != modules.end()) {
      error = errors[key];
      return it->second ? entryGraph(*it->second) : nullptr;
    }
    OwningOpRef<ModuleOp> &slot = modules[key];
    // The partitioner's and compiler's diagnostics say why a mesh does not
    // apply (a dimension it does not divide): kept as the reason, not
    // printed as errors of the search.
    std::string message;
    ScopedDiagnosticHandler quiet(&context, [&](Diagnostic &d) {
      if (message.empty() && d.getSeverity() == DiagnosticSeverity::Error)
        message = d.str();
      return success();
    });
    dlg::BuildOptions build = buildOptionsFor(options);
    if (!batchDim.empty())
      build.dims[batchDim] = batch;
    build.defaultUnboundDimsToOne = true;
    build.buildTraining = true;
    ExitCode code;
    auto model_ = loadModel(options.modelPath, context, sourceMgr, build, code);
    if (!model_) {
      errors[key] = error = "cannot load the model: " + message;
      return nullptr;
    }
    OwningOpRef<ModuleOp> module = std::move(model_->built.module);
    if (pipe > 1) {
      // The cut the ranks make, on the loss graph before differentiation
      // (driver/PipelineStep.cpp does the same).
      func::FuncOp graph = entryGraph(*module);
      auto loss = module->lookupSymbol<func::FuncOp>(graph.getSymName().str() + "_train");
      if (!loss || failed(assignForwardStages(loss, pipelineCut(pipe)))) {
        errors[key] = error = "cannot cut the model into " + std::to_string(pipe) +
                              " stages: " + message;
        return nullptr;
      }
    }
    if (failed(trainingFunction(*module, entryGraph(*module), false))) {
      errors[key] = error = message;
      return nullptr;
    }
    if (data * model > 1) {
      PlanCandidate shape;
      shape.data = data;
      shape.model = model;
      MeshOptions mesh;
      mesh.mesh = shape.mesh();
      mesh.parallel = shape.parallel();
      mesh.zero = zero ? 1 : 0;
      if (partitionForMesh(context, entryGraph(*module), mesh, nullptr,
                           /*localArguments=*/true,
                           /*splitParameterState=*/true) != kExitSuccess) {
        errors[key] = error = message;
        return nullptr;
      }
      // The Megatron preset splits matmuls on parameters by columns; a
      // step with none only replicates on a model axis. Said, not
      // predicted as if it were tensor parallelism.
      if (model > 1 && !hasCollectiveOver(entryGraph(*module), "model")) {
        errors[key] = error = "tensor parallelism splits nothing in the train step (no "
                              "matmul on a parameter): not planned";
        return nullptr;
      }
    }
    if (failed(runCompilePipeline(*module))) {
      errors[key] = error = "the compile pipeline failed: " + message;
      return nullptr;
    }
    slot = std::move(module);
    return entryGraph(*slot);
  }

  bool predict(PlanCandidate &plan, int64_t globalBatch, std::string &error) {
    int64_t replicas = plan.data * plan.microbatches;
    if (!batchDim.empty() && globalBatch % replicas != 0) {
      error = "the batch " + std::to_string(globalBatch) + " does not split into " +
              std::to_string(plan.data) + " x " + std::to_string(plan.microbatches);
      return false;
    }
    // A pipeline's program is one micro-batch's; data ranks split it. Its
    // ZeRO variant is predicted from the plain one (PipelineCost.h): one
    // compile less per pipeline, the largest models' compiles taking
    // seconds.
    bool zeroProgram = plan.zero && plan.pipe == 1;
    func::FuncOp step = compiled(plan.data, plan.model, zeroProgram, plan.pipe,
                                 globalBatch / plan.microbatches, error);
    if (!step)
      return false;
    DeviceSpec device = this->device;
    // Ranks of one host share its cores: all of them at once on the SPMD
    // path; a pipeline's stage's ranks, the pipeline's cost scaling the
    // slots where more stages compute (PipelineCost.h).
    device.shareAmong(plan.pipe == 1 ? plan.devices() : plan.data * plan.model);
    if (plan.pipe == 1) {
      ProgramCost cost = estimateCost(step, device, link);
      PlanReport report = summarizePlan(step, 0);
      plan.stepSeconds = cost.stepSeconds;
      plan.computeSeconds = cost.computeSeconds;
      plan.communicationSeconds = cost.communicationSeconds;
      plan.exposedSeconds = cost.exposedSeconds();
      plan.memoryBytes =
          report.weightBytes + report.arenaBytes + report.inputBytes + report.stateBytes;
    } else {
      PipelineCost cost = estimatePipeline(step, plan.pipe, plan.microbatches, plan.gpipe,
                                           device, link, plan.zero ? plan.data : 1);
      plan.stepSeconds = cost.stepSeconds;
      plan.computeSeconds = cost.computeSeconds;
      double comm = 0;
      for (const StageCost &s : cost.perStage)
        comm = std::max(comm, plan.microbatches * s.microbatchCommSeconds +
                                  s.gradientSyncSeconds);
      plan.communicationSeconds = comm + (plan.microbatches + plan.pipe - 1) * cost.transferSeconds;
      plan.bubble = cost.bubbleFraction();
      plan.exposedSeconds = std::max(0.0, plan.stepSeconds - plan.computeSeconds -
                                              plan.bubble * plan.stepSeconds);
      plan.memoryBytes = cost.peakMemoryBytes();
      plan.pipeline = std::move(cost);
    }
    plan.fits = device.memoryBytes <= 0 || double(plan.memoryBytes) <= device.memoryBytes;
    return true;
  }

  /// The train steps compiled so far.
  size_t programs() const {
    return llvm::count_if(modules, [](const auto &entry) { return bool(entry.second); });
  }

  int64_t layers(int64_t globalBatch) {
    std::string error;
    func::FuncOp step = compiled(1, 1, false, 1, globalBatch, error);
    return step ? countLayers(step) : 0;
  }

private:
  const CommonOptions &options;
  MLIRContext &context;
  llvm::SourceMgr &sourceMgr;
  const DeviceSpec &device;
  const LinkSpec &link;
  std::string batchDim;
  std::map<std::tuple<int64_t, int64_t, bool, int64_t, int64_t>, OwningOpRef<ModuleOp>> modules;
  std::map<std::tuple<int64_t, int64_t, bool, int64_t, int64_t>, std::string> errors;
};

/// The device, link and batch of a request, checked.
ExitCode prepare(const CommonOptions &options, const AutoPlanRequest &request,
                 MLIRContext &context, llvm::SourceMgr &sourceMgr, AutoPlanResult &result) {
  std::string error;
  if (request.deviceSpec.empty())
    return fail(context, kExitBadInput,
                "--parallel auto predicts on a device: give --device-spec (h100, h200, a100, "
                "v100, cpu or a .json file)");
  if (!loadDeviceSpec(request.deviceSpec, result.device, error))
    return fail(context, kExitBadInput, "--device-spec: " + error);
  std::string linkName = request.link.empty() ? result.device.defaultLink : request.link;
  if (!loadLinkSpec(linkName, result.link, error))
    return fail(context, kExitBadInput, "--link: " + error);
  ExitCode code;
  std::optional<dlg::Module> ast = parseModelFile(options.modelPath, context, sourceMgr, code);
  if (!ast)
    return code;
  if (ast->trains.empty())
    return fail(context, kExitBadInput,
                "'" + options.modelPath +
                    "' has no train block: --parallel auto plans a train step (its loss "
                    "and optimizer)");
  result.batchDim = batchDimension(*ast);
  result.batchSize = request.batchSize;
  if (!result.batchDim.empty() && options.dims.count(result.batchDim)) {
    int64_t given = options.dims.at(result.batchDim);
    if (request.batchSize && given != request.batchSize)
      return fail(context, kExitBadInput,
                  "--dim " + result.batchDim + "=" + std::to_string(given) +
                      " disagrees with --batch-size " + std::to_string(request.batchSize));
    result.batchSize = given;
  }
  // Unset: one sample per device, the smallest batch every data-parallel
  // plan can split.
  if (result.batchSize <= 0)
    result.batchSize = result.batchDim.empty() ? 1 : request.devices;
  return kExitSuccess;
}

std::vector<int64_t> divisors(int64_t n) {
  std::vector<int64_t> out;
  for (int64_t d = 1; d <= n; ++d)
    if (n % d == 0)
      out.push_back(d);
  return out;
}

} // namespace

bool predictPlan(const CommonOptions &options, const AutoPlanRequest &request,
                 MLIRContext &context, llvm::SourceMgr &sourceMgr, PlanCandidate &plan,
                 std::string &error) {
  AutoPlanResult result;
  if (prepare(options, request, context, sourceMgr, result) != kExitSuccess) {
    error = "see above";
    return false;
  }
  Planner planner(options, context, sourceMgr, result.device, result.link, result.batchDim);
  return planner.predict(plan, result.batchSize, error);
}

ExitCode choosePlan(const CommonOptions &options, const AutoPlanRequest &request,
                    MLIRContext &context, llvm::SourceMgr &sourceMgr, AutoPlanResult &result) {
  if (request.devices < 1)
    return fail(context, kExitBadInput,
                "--parallel auto needs --devices N (at least 1): the devices to plan for");
  if (ExitCode c = prepare(options, request, context, sourceMgr, result))
    return c;
  Planner planner(options, context, sourceMgr, result.device, result.link, result.batchDim);
  std::string error;
  if (!planner.predict(result.single, result.batchSize, error))
    return fail(context, kExitBadInput, "the train step does not plan on one device: " + error);
  int64_t layers = planner.layers(result.batchSize);
  int64_t n = request.devices;

  for (int64_t pipe : divisors(n)) {
    if (pipe > 1 && pipe > layers)
      continue; // fewer layers than stages
    for (int64_t model : divisors(n / pipe)) {
      int64_t data = n / pipe / model;
      std::vector<int64_t> microbatches = {1};
      if (pipe > 1)
        microbatches = {1, 2, 4, 8, 16};
      // More micro-batches shrink the bubble and the activations in flight
      // but make every kernel smaller: once a plan that fits gets slower
      // with more of them, more will not help (and are not compiled).
      double bestFitting = 0;
      for (int64_t m : microbatches) {
        bool slower = false;
        for (bool zero : {false, true})
          for (bool gpipe : {false, true}) {
            if ((zero && data == 1) || (gpipe && (pipe == 1 || !request.gpipe)))
              continue;
            if (!result.batchDim.empty() && result.batchSize % (data * m) != 0)
              continue;
            PlanCandidate plan;
            plan.data = data;
            plan.model = model;
            plan.pipe = pipe;
            plan.microbatches = m;
            plan.zero = zero;
            plan.gpipe = gpipe;
            if (!planner.predict(plan, result.batchSize, error)) {
              std::string line = plan.mesh() + ": " + error;
              if (!llvm::is_contained(result.skipped, line))
                result.skipped.push_back(line);
              continue;
            }
            plan.efficiency = result.single.stepSeconds / (double(n) * plan.stepSeconds);
            if (pipe > 1 && !zero && !gpipe && plan.fits) {
              slower = bestFitting > 0 && plan.stepSeconds > bestFitting;
              bestFitting = bestFitting > 0 ? std::min(bestFitting, plan.stepSeconds)
                                            : plan.stepSeconds;
            }
            result.plans.push_back(std::move(plan));
          }
        if (slower)
          break;
      }
    }
  }
  result.programsCompiled = planner.programs();
  std::stable_sort(result.plans.begin(), result.plans.end(),
                   [](const PlanCandidate &a, const PlanCandidate &b) {
                     if (a.fits != b.fits)
                       return a.fits;
                     return a.stepSeconds < b.stepSeconds;
                   });
  if (!result.plans.empty() && result.plans.front().fits)
    result.chosen = result.plans.front();
  return kExitSuccess;
}

namespace {

/// Bytes in GB, or MB under one GB (small models' plans).
std::string gb(double bytes) {
  return bytes >= 1e9 ? llvm::formatv("{0:F1} GB", bytes / 1e9).str()
                      : llvm::formatv("{0:F1} MB", bytes / 1e6).str();
}
std::string ms(double seconds) { return llvm::formatv("{0:F2}", seconds * 1e3).str(); }
std::string percent(double x) { return llvm::formatv("{0:F0}%", x * 100).str(); }

/// The fastest plan of data parallelism alone (ZeRO or not).
const PlanCandidate *bestDataParallel(const AutoPlanResult &result, bool fitting) {
  for (const PlanCandidate &p : result.plans)
    if (p.model == 1 && p.pipe == 1 && (!fitting || p.fits))
      return &p;
  return nullptr;
}

} // namespace

void printAutoPlan(const AutoPlanResult &r, const std::string &modelPath, llvm::raw_ostream &os,
                   size_t rows) {
  int64_t n = r.plans.empty() ? 1 : r.plans.front().devices();
  size_t fitting = llvm::count_if(r.plans, [](const PlanCandidate &p) { return p.fits; });
  os << "auto plan for the train step of " << modelPath << " on " << n << " x " << r.device.name
     << ", " << r.link.name << "; global batch " << r.batchSize;
  if (!r.batchDim.empty())
    os << " (" << r.batchDim << ")";
  os << "\n"
     << "plans: " << r.plans.size() << " predicted (" << r.programsCompiled
     << " train steps compiled), " << fitting << " fit in "
     << gb(r.device.memoryBytes) << " a device";
  if (!r.skipped.empty())
    os << ", " << r.skipped.size() << (r.skipped.size() == 1 ? " mesh does" : " meshes do")
       << " not apply";
  os << "; the best " << std::min(rows, r.plans.size()) << ":\n";
  os << llvm::formatv("  {0,-22} {1,-22} {2,3} {3,-5} {4,4} {5,9} {6,9} {7,9} {8,6} {9,9} {10,5} "
                      "{11}\n",
                      "mesh", "parallel", "mb", "sched", "zero", "step ms", "compute", "exposed",
                      "bubble", "memory", "eff", "fits");
  for (size_t i = 0; i < std::min(rows, r.plans.size()); ++i) {
    const PlanCandidate &p = r.plans[i];
    bool chosen = i == 0 && r.chosen;
    os << llvm::formatv("{0} {1,-22} {2,-22} {3,3} {4,-5} {5,4} {6,9} {7,9} {8,9} {9,6} {10,9} "
                        "{11,5} {12}\n",
                        chosen ? "*" : " ", p.mesh(), p.parallel(), p.microbatches,
                        p.pipe > 1 ? (p.gpipe ? "gpipe" : "1f1b") : "-", p.zero ? 1 : 0,
                        ms(p.stepSeconds), ms(p.computeSeconds), ms(p.exposedSeconds),
                        p.pipe > 1 ? percent(p.bubble) : "-", gb(double(p.memoryBytes)),
                        percent(p.efficiency), p.fits ? "yes" : "no");
  }
  // One line per reason, naming its meshes.
  std::vector<std::pair<std::string, std::string>> reasons;
  for (const std::string &line : r.skipped) {
    auto [mesh, why] = llvm::StringRef(line).split(": ");
    auto it = llvm::find_if(reasons, [&](auto &p) { return p.second == why; });
    if (it == reasons.end())
      reasons.push_back({mesh.str(), why.str()});
    else
      it->first += "; " + mesh.str();
  }
  for (const auto &[meshes, why] : reasons)
    os << "  not applicable: " << meshes << ": " << why << "\n";

  const PlanCandidate &one = r.single;
  os << "one device: step " << ms(one.stepSeconds) << " ms, " << gb(double(one.memoryBytes))
     << ": " << (one.fits ? "fits" : "does not fit") << " one " << r.device.name << " ("
     << gb(r.device.memoryBytes) << ")\n";

  const PlanCandidate *dp = bestDataParallel(r, /*fitting=*/false);
  if (!r.chosen) {
    const PlanCandidate *least = nullptr;
    for (const PlanCandidate &p : r.plans)
      if (!least || p.memoryBytes < least->memoryBytes)
        least = &p;
    os << "chosen: none: no plan of " << n << " devices fits in " << gb(r.device.memoryBytes);
    if (least)
      os << " (the smallest, " << least->mesh() << ", needs " << gb(double(least->memoryBytes))
         << " a device)";
    os << "\n";
    return;
  }
  const PlanCandidate &c = *r.chosen;
  os << "chosen: --mesh " << c.mesh() << " --parallel " << c.parallel();
  if (c.pipe > 1)
    os << " --microbatches " << c.microbatches << " --schedule " << (c.gpipe ? "gpipe" : "1f1b");
  if (c.zero)
    os << " --zero 1";
  os << ": fits (" << gb(double(c.memoryBytes)) << " of " << gb(r.device.memoryBytes)
     << "), the fastest of the " << fitting << " plans that fit, step " << ms(c.stepSeconds)
     << " ms";
  if (!one.fits)
    os << "; the model does not fit one device";
  if (dp && !dp->fits && n > 1)
    os << "; pure data parallelism (" << dp->mesh() << ") does not fit: "
       << gb(double(dp->memoryBytes)) << " a device";
  else if (dp && dp != &r.plans.front() && n > 1)
    os << "; pure data parallelism (" << dp->mesh() << (dp->zero ? " --zero 1" : "")
       << ") is predicted " << ms(dp->stepSeconds) << " ms";
  os << "\n";
  if (dp && n > 1)
    os << "data parallelism: " << dp->mesh() << (dp->zero ? " --zero 1" : "")
       << " predicted efficiency " << percent(dp->efficiency)
       << " against perfect scaling, vs the ~87% (7x on 8 V100s) TF2+Horovod anchor and "
          "Horovod's ~90%"
       << (dp->fits ? "" : " (it does not fit)") << "\n";
}

} // namespace dlc
