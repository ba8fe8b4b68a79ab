//===- Plan.cpp - dlc plan: kernels, arena and weights of the plan --------===//
//
// Runs the dlc-compile pipeline (the plan verifier included) and prints the
// plan report of driver/PlanReport.h; `dlc compile --stats` prints the same.
// `dlc plan --train` plans the train step instead: the train block's loss
// graph through dlc-differentiate, then dlc-compile (with
// dlc-rematerialize under `--memory-budget`).
//
//===----------------------------------------------------------------------===//

#include "driver/Commands.h"

#include "driver/AutoPlan.h"
#include "driver/DriverSupport.h"
#include "driver/ModelLoader.h"
#include "driver/PlanReport.h"
#include "ir/DlcDialect.h"
#include "passes/analysis/CostModel.h"
#include "passes/partition/Partition.h"
#include "support/Mesh.h"

#include "llvm/Support/FormatVariadic.h"

#include <cstdio>

#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace dlc {

/// `plan for <what> (<path>), one device, at N=64 (...)`.
static void printHeading(llvm::raw_ostream &os, const Twine &what,
                         const std::string &path, const LoadedModel &model) {
  os << "plan for " << what << " (" << path << "), one device";
  for (auto [i, dim] : llvm::enumerate(model.built.dims)) {
    os << (i ? ", " : ", at ") << dim.first << "=" << dim.second;
    if (llvm::is_contained(model.built.defaultedDims, dim.first))
      os << " (unbound, taken as 1)";
  }
  os << "\n";
}

/// The model, with its train blocks' loss graphs when `train`.
static std::optional<LoadedModel>
loadForPlan(const CommonOptions &options, bool defaultDims, bool train,
            MLIRContext &context, llvm::SourceMgr &sourceMgr, ExitCode &code) {
  dlg::BuildOptions build = buildOptionsFor(options);
  build.defaultUnboundDimsToOne = defaultDims;
  build.buildTraining = train;
  return loadModel(options.modelPath, context, sourceMgr, build, code);
}

ExitCode planAndReport(const CommonOptions &options, bool defaultDims,
                       MLIRContext &context, llvm::SourceMgr &sourceMgr,
                       llvm::raw_ostream &os) {
  ExitCode code;
  auto model = loadForPlan(options, defaultDims, /*train=*/false, context,
                           sourceMgr, code);
  if (!model)
    return code;
  ModuleOp module = *model->built.module;
  func::FuncOp func = entryGraph(module);
  int64_t kernelsBefore = countKernels(func);
  if (failed(runCompilePipeline(module)))
    return kExitInternalError;
  printHeading(os, "graph " + func.getSymName(), options.modelPath, *model);
  printPlanReport(summarizePlan(func, kernelsBefore), os);
  return kExitSuccess;
}

/// `--mesh`: the partitioned program's plan (every rank runs the same one)
/// and its collectives.
static ExitCode planOnMesh(const CommonOptions &options, const PlanOptions &plan,
                           MLIRContext &context, llvm::SourceMgr &sourceMgr,
                           llvm::raw_ostream &os) {
  ExitCode code;
  auto model = loadForPlan(options, /*defaultDims=*/true, plan.train, context,
                           sourceMgr, code);
  if (!model)
    return code;
  ModuleOp module = *model->built.module;
  // A train step is planned as a rank runs it: its data given split (each
  // rank's block of the global batch), its state whole but for --zero 1's
  // split moments.
  if (plan.train && failed(trainingFunction(module, entryGraph(module), false)))
    return kExitBadInput;
  func::FuncOp func = entryGraph(module);
  // The unpartitioned program, for the prediction's perfect scaling.
  OwningOpRef<ModuleOp> single;
  if (!plan.deviceSpec.empty())
    single = module.clone();
  Mesh mesh;
  if (ExitCode c = partitionForMesh(context, func, plan.mesh, &mesh,
                                    /*localArguments=*/plan.train,
                                    /*splitParameterState=*/plan.train))
    return c;
  int64_t kernelsBefore = countKernels(func);
  if (failed(runCompilePipeline(module)))
    return kExitInternalError;
  printHeading(os, std::string(plan.train ? "train step of " : "graph ") + func.getSymName() +
                       " on mesh " + plan.mesh.mesh + (plan.mesh.zero ? ", --zero 1" : "") +
                       ", per rank",
               options.modelPath, *model);
  PlanReport report = summarizePlan(func, kernelsBefore);
  printPlanReport(report, os);
  int64_t count = 0, traffic = 0;
  std::string lines;
  func.walk([&](Operation *op) {
    if (kernelRoleOf(op) != KernelRole::Collective)
      return;
    auto axes = op->getAttrOfType<ArrayAttr>("mesh_axes");
    std::string names;
    for (Attribute a : axes)
      names += (names.empty() ? "" : ",") + cast<StringAttr>(a).str();
    int64_t bytes = ringCost(op).bytes;
    ++count;
    traffic += bytes;
    lines += "  " + op->getName().stripDialect().str() + " over " + names + " (" +
             std::to_string(op->getAttrOfType<IntegerAttr>("group_size").getInt()) +
             " ranks): " + withCommas(tensorBytes(op->getOperand(0).getType())) +
             " bytes in, " + withCommas(bytes) + " bytes on the wire\n";
  });
  char hash[32];
  std::snprintf(hash, sizeof hash, "%016llx",
                static_cast<unsigned long long>(collectiveScheduleHash(func)));
  os << "collectives: " << count << ", " << withCommas(traffic)
     << " bytes sent per rank per run (ring algorithms); schedule hash " << hash
     << "\n"
     << lines;
  int64_t total = report.weightBytes + report.arenaBytes + report.inputBytes +
                  report.stateBytes;
  if (!plan.deviceSpec.empty()) {
    DeviceSpec device;
    LinkSpec link;
    std::string error;
    if (!loadDeviceSpec(plan.deviceSpec, device, error))
      return fail(context, kExitBadInput, "--device-spec: " + error);
    std::string linkName = plan.link.empty() ? device.defaultLink : plan.link;
    if (!loadLinkSpec(linkName, link, error))
      return fail(context, kExitBadInput, "--link: " + error);
    if (failed(runCompilePipeline(*single)))
      return kExitInternalError;
    device.shareAmong(1); // one rank alone on the host, as the mesh's are below
    ProgramCost one = estimateCost(entryGraph(*single), device, link);
    device.shareAmong(mesh.size());
    ProgramCost rank = estimateCost(func, device, link);
    auto ms = [](double s) { return llvm::formatv("{0:F3} ms", s * 1e3).str(); };
    double efficiency = one.stepSeconds / (static_cast<double>(mesh.size()) * rank.stepSeconds);
    os << "predicted on " << device.name << ", " << link.name << " (roofline, ring alpha-beta):\n"
       << "  compute " << ms(rank.computeSeconds) << " (" << rank.kernels << " kernels, "
       << rank.computeBoundKernels << " compute-bound), communication "
       << ms(rank.communicationSeconds) << ", exposed " << ms(rank.exposedSeconds())
       << ", step " << ms(rank.stepSeconds) << "\n"
       << "  one device: step " << ms(one.stepSeconds) << "; efficiency against perfect scaling "
       << llvm::formatv("{0:P0}", efficiency).str() << " on " << mesh.size() << " devices\n";
    if (device.cores > 0)
      os << "  CPU ranks' host path: " << rank.segments << " segments ("
         << withCommas(static_cast<int64_t>(rank.segmentBytes)) << " bytes out), "
         << rank.rankCollectives
         << " collectives between ranks; " << mesh.size() << " ranks on " << device.cores
         << " cores, a kernel takes " << llvm::formatv("{0:F2}", device.timeShare).str()
         << "x as long\n";
    if (!plan.deviceMemory && device.memoryBytes > 0)
      os << "fits on one " << device.name << " ("
         << withCommas(static_cast<int64_t>(device.memoryBytes)) << " bytes): "
         << (total <= device.memoryBytes ? "yes" : "no") << "\n";
  }
  if (plan.deviceMemory)
    os << "fits on a device of " << withCommas(*plan.deviceMemory)
       << " bytes: " << (total <= *plan.deviceMemory ? "yes" : "no") << " ("
       << withCommas(total) << " bytes a rank)\n";
  return kExitSuccess;
}

/// `--train`: the entry graph's train step, planned, and its report.
static ExitCode planTrainStep(const CommonOptions &options,
                              const PlanOptions &plan, MLIRContext &context,
                              llvm::SourceMgr &sourceMgr,
                              llvm::raw_ostream &os) {
  ExitCode code;
  auto model = loadForPlan(options, /*defaultDims=*/true, /*train=*/true,
                           context, sourceMgr, code);
  if (!model)
    return code;
  ModuleOp module = *model->built.module;
  std::string graph = entryGraph(module).getSymName().str();
  auto step = trainingFunction(module, entryGraph(module), false);
  if (failed(step))
    return kExitBadInput;
  int64_t kernelsBefore = countKernels(*step);
  if (failed(runCompilePipeline(module, plan.memoryBudget.value_or(0))))
    return kExitInternalError;
  printHeading(os, "the train step of graph " + graph, options.modelPath,
               *model);
  printPlanReport(summarizePlan(*step, kernelsBefore), os);
  printTrainReport(summarizeTrainStep(*step), os);
  return kExitSuccess;
}

/// `--parallel auto --devices N`: every mesh predicted, the chosen first
/// (driver/AutoPlan.h).
static ExitCode planAuto(const CommonOptions &options, const PlanOptions &plan,
                         MLIRContext &context, llvm::SourceMgr &sourceMgr,
                         llvm::raw_ostream &os) {
  if (!plan.train)
    return fail(context, kExitBadInput,
                "--parallel auto plans a train step: add --train");
  if (!plan.mesh.mesh.empty())
    return fail(context, kExitBadInput,
                "--parallel auto chooses the mesh: give --devices N instead of --mesh");
  AutoPlanRequest request;
  request.devices = plan.devices;
  request.batchSize = plan.batchSize.value_or(0);
  request.deviceSpec = plan.deviceSpec;
  request.link = plan.link;
  request.gpipe = plan.mesh.schedule == "gpipe";
  AutoPlanResult result;
  if (ExitCode c = choosePlan(options, request, context, sourceMgr, result))
    return c;
  printAutoPlan(result, options.modelPath, os);
  os.flush();
  if (!result.chosen)
    return fail(context, kExitCheckFailed,
                "no plan of " + std::to_string(plan.devices) + " devices fits in " +
                    withCommas(int64_t(result.device.memoryBytes)) + " bytes a device");
  return kExitSuccess;
}

/// A mesh with a `pipe` axis (`--parallel pipeline`, with data and tensor
/// parallelism on its other axes): the pipeline's predicted stages
/// (passes/analysis/PipelineCost.h).
static ExitCode planPipeline(const CommonOptions &options, const PlanOptions &plan,
                             MLIRContext &context, llvm::SourceMgr &sourceMgr,
                             llvm::raw_ostream &os) {
  Mesh mesh;
  std::string error;
  if (!Mesh::parse(plan.mesh.mesh, mesh, error))
    return fail(context, kExitBadInput, "--mesh: " + error);
  PlanCandidate candidate;
  for (const auto &[axis, size] : mesh.axes()) {
    if (axis == "data")
      candidate.data = size;
    else if (axis == "model")
      candidate.model = size;
    else if (axis == "pipe")
      candidate.pipe = size;
    else
      return fail(context, kExitBadInput,
                  "--parallel pipeline: the mesh's axes are data, model and pipe, not '" +
                      axis + "'");
  }
  if (candidate.pipe < 2)
    return fail(context, kExitBadInput,
                "--parallel pipeline needs a 'pipe' axis of 2 stages or more, e.g. --mesh pipe=2");
  if (!plan.train)
    return fail(context, kExitBadInput,
                "dlc plan predicts a pipeline's train step: add --train");
  if (plan.deviceSpec.empty())
    return fail(context, kExitBadInput,
                "dlc plan predicts a pipeline on a device: add --device-spec (h100, v100, "
                "cpu, ...)");
  if (plan.mesh.microbatches < 1)
    return fail(context, kExitBadInput, "--microbatches must be at least 1");
  if (plan.mesh.schedule != "1f1b" && plan.mesh.schedule != "gpipe")
    return fail(context, kExitBadInput,
                "--schedule must be 1f1b or gpipe, not '" + plan.mesh.schedule + "'");
  if (plan.mesh.zero && candidate.data == 1)
    return fail(context, kExitBadInput,
                "--zero 1 splits the optimizer state over the 'data' axis: add one to --mesh");
  candidate.microbatches = plan.mesh.microbatches;
  candidate.gpipe = plan.mesh.schedule == "gpipe";
  candidate.zero = plan.mesh.zero == 1;
  AutoPlanRequest request;
  request.devices = candidate.devices();
  // Unset (and no --dim): one sample per data rank and micro-batch.
  request.batchSize = plan.batchSize.value_or(0);
  if (!request.batchSize && options.dims.empty())
    request.batchSize = candidate.data * candidate.microbatches;
  request.deviceSpec = plan.deviceSpec;
  request.link = plan.link;
  std::string why;
  PlanCandidate one;
  if (!predictPlan(options, request, context, sourceMgr, one, why) ||
      !predictPlan(options, request, context, sourceMgr, candidate, why))
    return fail(context, kExitBadInput, "--mesh " + plan.mesh.mesh + ": " + why);
  DeviceSpec device;
  LinkSpec link;
  loadDeviceSpec(plan.deviceSpec, device, error);
  loadLinkSpec(plan.link.empty() ? device.defaultLink : plan.link, link, error);
  const PipelineCost &p = *candidate.pipeline;
  auto ms = [](double s) { return llvm::formatv("{0:F3} ms", s * 1e3).str(); };
  os << "pipeline plan for the train step of " << options.modelPath << ": mesh "
     << plan.mesh.mesh << ", " << p.stages << " stages, " << p.microbatches
     << " micro-batches, " << plan.mesh.schedule << (candidate.zero ? ", --zero 1" : "")
     << "; predicted on " << device.name << ", " << link.name << "\n";
  for (auto [s, stage] : llvm::enumerate(p.perStage))
    os << "  stage " << s << ": forward " << ms(stage.forwardSeconds) << ", backward "
       << ms(stage.backwardSeconds) << " a micro-batch, update " << ms(stage.updateSeconds)
       << ", sends " << withCommas(stage.sendBytes) << " bytes a micro-batch; memory "
       << withCommas(stage.memoryBytes()) << " bytes (state " << withCommas(stage.stateBytes)
       << ", gradients " << withCommas(stage.gradientBytes) << ", activations "
       << stage.inFlight << " x " << withCommas(stage.savedBytes) << ")\n";
  candidate.efficiency = one.stepSeconds / (double(candidate.devices()) * candidate.stepSeconds);
  os << "  slot " << ms(p.slotSeconds) << " (transfers " << ms(p.transferSeconds)
     << "), bubble (predicted) " << llvm::formatv("{0:P0}", p.bubbleFraction()).str()
     << " = (P-1)/(M+P-1), step " << ms(p.stepSeconds) << "\n"
     << "  one device: step " << ms(one.stepSeconds) << "; efficiency against perfect scaling "
     << llvm::formatv("{0:P0}", candidate.efficiency).str() << " on " << candidate.devices()
     << " devices\n"
     << "fits on one " << device.name << " ("
     << withCommas(static_cast<int64_t>(device.memoryBytes)) << " bytes): "
     << (candidate.fits ? "yes" : "no") << " (" << withCommas(candidate.memoryBytes)
     << " bytes on the largest stage)\n";
  return kExitSuccess;
}

ExitCode runPlan(const CommonOptions &options, const PlanOptions &plan,
                 MLIRContext &context, llvm::SourceMgr &sourceMgr,
                 llvm::raw_ostream &os) {
  if (plan.memoryBudget && *plan.memoryBudget <= 0)
    return fail(context, kExitBadInput,
                "--memory-budget expects a number of bytes, at least 1");
  if (plan.memoryBudget && !plan.train)
    return fail(context, kExitBadInput,
                "--memory-budget applies to a train step: add --train");
  if (plan.deviceMemory && *plan.deviceMemory <= 0)
    return fail(context, kExitBadInput,
                "--device-memory expects a number of bytes, at least 1");
  if (plan.mesh.parallel == "auto")
    return planAuto(options, plan, context, sourceMgr, os);
  if (plan.devices)
    return fail(context, kExitBadInput, "--devices goes with --parallel auto");
  if (llvm::StringRef(plan.mesh.parallel).contains("pipeline") ||
      llvm::StringRef(plan.mesh.mesh).contains("pipe="))
    return planPipeline(options, plan, context, sourceMgr, os);
  if (!plan.mesh.mesh.empty()) {
    if (plan.memoryBudget)
      return fail(context, kExitBadInput,
                  "--memory-budget does not apply to a partitioned train step yet");
    return planOnMesh(options, plan, context, sourceMgr, os);
  }
  if (plan.train)
    return planTrainStep(options, plan, context, sourceMgr, os);
  return planAndReport(options, /*defaultDims=*/true, context, sourceMgr, os);
}

} // namespace dlc
