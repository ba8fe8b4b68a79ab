//===- memplan.cpp - memory plans of the model zoo ------------------------===//
//
// Compiles each model of the zoo with the dlc-compile pipeline (and, for
// comparison, the same pipeline without dlc-fuse), then prints per graph:
// the naive sum of its intermediates, TFLite's greedy-by-size packing of
// the same live ranges (implemented here from its description, as the
// baseline), dlc's arena, the lower bound, and their ratios, with the
// machine it ran on. Results: bench/results/memplan.md.
//
//   dlc-bench-memplan [--source DIR] [--only SUBSTRING]
//
//===----------------------------------------------------------------------===//

#include "driver/ModelLoader.h"
#include "passes/Passes.h"
#include "passes/analysis/Liveness.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

using namespace mlir;

namespace {

struct Model {
  const char *name;
  /// Relative to the source root.
  const char *path;
  std::map<std::string, int64_t> dims;
};

/// The zoo. MLP and LeNet are the examples; the rest come from
/// bench/models/generate.py.
const std::vector<Model> kZoo = {
    {"MLP (N=64)", "examples/mnist_mlp.dlg", {{"N", 64}}},
    {"LeNet (N=64)", "examples/lenet.dlg", {{"N", 64}}},
    {"ResNet-50 (N=1)", "bench/models/resnet50.dlg", {{"N", 1}}},
    {"ResNet-50 (N=32)", "bench/models/resnet50.dlg", {{"N", 32}}},
    {"BERT-base (T=128)", "bench/models/bert_base.dlg", {{"B", 1}}},
    {"GPT-2 small (T=1024)", "bench/models/gpt2_small.dlg", {{"B", 1}}},
};

/// A block of the arena to place: size and live range in steps.
struct Block {
  int64_t size, first, last;
};

/// TFLite's greedy-by-size offset calculation (the GPU delegate's
/// GreedyBySizeAssignment; Pisarchyk and Lee, "Efficient memory management
/// for deep neural net inference", 2020): take the blocks by decreasing
/// size; for each, walk the blocks already placed whose live ranges
/// intersect its own in order of offset, and put it into the smallest gap
/// between them that holds it, or above the highest of them when none
/// does. The arena is the highest top.
static int64_t greedyBySize(const std::vector<Block> &blocks) {
  std::vector<size_t> order(blocks.size());
  std::iota(order.begin(), order.end(), size_t(0));
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return blocks[a].size > blocks[b].size;
  });
  std::vector<int64_t> offset(blocks.size(), 0);
  std::vector<size_t> placed; // by increasing offset
  int64_t arena = 0;
  for (size_t i : order) {
    const Block &block = blocks[i];
    int64_t best = -1, bestGap = INT64_MAX, end = 0;
    for (size_t j : placed) {
      if (blocks[j].last < block.first || blocks[j].first > block.last)
        continue;
      if (offset[j] >= end) {
        int64_t gap = offset[j] - end;
        if (gap >= block.size && gap < bestGap) {
          bestGap = gap;
          best = end;
        }
      }
      end = std::max(end, offset[j] + blocks[j].size);
    }
    offset[i] = best >= 0 ? best : end;
    arena = std::max(arena, offset[i] + block.size);
    auto at = std::find_if(placed.begin(), placed.end(),
                           [&](size_t j) { return offset[j] > offset[i]; });
    placed.insert(at, i);
  }
  // The baseline must be a valid packing too.
  for (size_t a = 0; a < blocks.size(); ++a)
    for (size_t b = a + 1; b < blocks.size(); ++b)
      if (blocks[a].first <= blocks[b].last && blocks[b].first <= blocks[a].last &&
          offset[a] < offset[b] + blocks[b].size &&
          offset[b] < offset[a] + blocks[a].size && blocks[a].size &&
          blocks[b].size) {
        llvm::errs() << "greedy-by-size overlapped two blocks\n";
        std::exit(70);
      }
  return arena;
}

/// `dlc-compile`, or the same without dlc-fuse.
static void buildPipeline(PassManager &pm, bool fuse) {
  if (fuse)
    return dlc::buildCompilePipeline(pm);
  OpPassManager &graph = pm.nest<func::FuncOp>();
  graph.addPass(createCanonicalizerPass());
  graph.addPass(dlc::createDlcFoldConstants());
  graph.addPass(createCSEPass());
  graph.addPass(dlc::createDlcSchedule());
  graph.addPass(dlc::createDlcPlanMemory());
  graph.addPass(dlc::createDlcVerifyMemoryPlan());
}

struct Row {
  std::string graph;
  int64_t kernels = 0, blocks = 0;
  int64_t naive = 0, greedy = 0, dlc = 0, lowerBound = 0;
  double milliseconds = 0;
};

/// Compiles `model` and measures its plan; false after printing an error.
static bool measure(const Model &model, bool fuse, const std::string &source,
                    Row &row) {
  MLIRContext context;
  dlc::dlg::loadBuilderDialects(context);
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler handler(sourceMgr, &context);
  dlc::dlg::BuildOptions build;
  build.dims = model.dims;
  dlc::ExitCode code;
  auto loaded = dlc::loadModel(source + "/" + model.path, context, sourceMgr,
                               build, code);
  if (!loaded)
    return false;
  ModuleOp module = *loaded->built.module;
  PassManager pm(&context);
  buildPipeline(pm, fuse);
  auto start = std::chrono::steady_clock::now();
  if (failed(pm.run(module)))
    return false;
  row.milliseconds = std::chrono::duration<double, std::milli>(
                         std::chrono::steady_clock::now() - start)
                         .count();

  auto func = *module.getOps<func::FuncOp>().begin();
  // The live ranges dlc packed: liveness of the scheduled kernels with the
  // in-place reuses the plan declares.
  dlc::BufferLiveness liveness = dlc::analyzeBuffers(dlc::kernelsOf(func));
  llvm::SmallVector<std::pair<unsigned, unsigned>> inPlace;
  for (Operation *kernel : liveness.kernels) {
    auto declared = kernel->getAttrOfType<DenseI64ArrayAttr>("dlc.inplace");
    for (unsigned r = 0; declared && r < kernel->getNumResults(); ++r)
      if (declared[r] >= 0)
        inPlace.push_back(
            {unsigned(liveness.lookup(kernel->getOperand(declared[r]))),
             liveness.bufferOf.lookup(kernel->getResult(r))});
  }
  dlc::groupAllocations(liveness, inPlace);
  std::vector<Block> blocks;
  for (const dlc::Allocation &a : liveness.allocations)
    blocks.push_back({a.size, a.first, a.last});

  row.kernels = liveness.kernels.size();
  row.blocks = blocks.size();
  row.naive = liveness.naiveBytes;
  row.greedy = greedyBySize(blocks);
  row.dlc = func->getAttrOfType<IntegerAttr>("dlc.arena_size").getInt();
  row.lowerBound = liveness.peakBytes;
  return true;
}

/// "model name" of /proc/cpuinfo and the number of logical CPUs.
static std::string machine() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line, model = "unknown CPU";
  while (std::getline(cpuinfo, line))
    if (line.rfind("model name", 0) == 0) {
      model = line.substr(line.find(':') + 2);
      break;
    }
  return model + ", " + std::to_string(std::thread::hardware_concurrency()) +
         " logical CPUs";
}

static std::string mib(int64_t bytes) {
  return llvm::formatv("{0:F2}", double(bytes) / (1 << 20)).str();
}

static std::string ratio(int64_t a, int64_t b) {
  return b ? llvm::formatv("{0:F3}", double(a) / double(b)).str() : "-";
}

} // namespace

int main(int argc, char **argv) {
  std::string source = DLC_SOURCE_DIR, only;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if ((arg == "--source" || arg == "--only") && i + 1 < argc)
      (arg == "--source" ? source : only) = argv[++i];
    else {
      llvm::errs() << "usage: dlc-bench-memplan [--source DIR] [--only SUBSTRING]\n";
      return 2;
    }
  }

  std::vector<Row> rows;
  for (const Model &model : kZoo)
    for (bool fuse : {true, false}) {
      Row row;
      row.graph = std::string(model.name) + (fuse ? "" : ", unfused");
      if (row.graph.find(only) == std::string::npos)
        continue;
      if (!measure(model, fuse, source, row))
        return 70;
      rows.push_back(row);
    }

  llvm::outs() << "Machine: " << machine() << "\n\n"
               << "Sizes in MiB (2^20 bytes). greedy-by-size packs the same "
                  "live ranges as dlc (same schedule, same in-place reuse).\n\n"
               << "| graph | kernels | blocks | naive | greedy-by-size | dlc | "
                  "lower bound | dlc / LB | greedy / dlc | naive / dlc | "
                  "compile ms |\n"
               << "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  double logSum = 0;
  bool neverWorse = true;
  for (const Row &r : rows) {
    llvm::outs() << "| " << r.graph << " | " << r.kernels << " | " << r.blocks
                 << " | " << mib(r.naive) << " | " << mib(r.greedy) << " | "
                 << mib(r.dlc) << " | " << mib(r.lowerBound) << " | "
                 << ratio(r.dlc, r.lowerBound) << " | "
                 << ratio(r.greedy, r.dlc) << " | " << ratio(r.naive, r.dlc)
                 << " | " << llvm::formatv("{0:F0}", r.milliseconds) << " |\n";
    logSum += std::log(r.lowerBound ? double(r.dlc) / double(r.lowerBound) : 1);
    neverWorse &= r.dlc <= r.greedy;
  }
  llvm::outs() << "\ndlc / lower bound, geometric mean: "
               << llvm::formatv("{0:F4}", std::exp(logSum / std::max<size_t>(rows.size(), 1)))
               << "\ndlc <= greedy-by-size on every graph: "
               << (neverWorse ? "yes" : "NO") << "\n";
  return neverWorse ? 0 : 1;
}
