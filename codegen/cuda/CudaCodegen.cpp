//===- CudaCodegen.cpp - one CUDA source for a planned graph --------------===//
//
// Walks the kernels of a function in block order, sets up each kernel's
// arguments and results as buffers for the elemental emitter, and hands it
// to the emitter of its scheduled strategy. Element-wise kernels (no
// stages) are emitted here: a grid-stride loop over each result's elements,
// `vector` independent elements per thread and iteration.
//
//===----------------------------------------------------------------------===//

#include "codegen/cuda/CudaCodegen.h"
#include "codegen/cuda/Kernels.h"

#include "ir/DlcDialect.h"
#include "passes/analysis/Liveness.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace dlc;
using namespace dlc::codegen;
using namespace dlc::codegen::cuda;

int64_t cuda::product(ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}
std::string cuda::accumulatorType(DType dtype) {
  return isFloat(dtype) ? "double" : "long long";
}

Index cuda::indexThroughLayoutTail(CodeWriter &out, ArrayRef<Operation *> tail,
                                   Index index, std::vector<int64_t> &shape) {
  for (Operation *op : llvm::reverse(tail)) {
    std::vector<int64_t> next = shapeOf(op->getResult(0));
    if (auto transpose = dyn_cast<TransposeOp>(op)) {
      Index permuted(index.size());
      for (auto [i, p] : llvm::enumerate(transpose.getPerm()))
        permuted[i] = index[p];
      index = permuted;
    } else {
      std::string flat = out.fresh("f");
      out.line("const int64_t " + flat + " = " + flatIndex(shape, index) + ";");
      index = decompose(out, flat, next);
    }
    shape = next;
  }
  return index;
}

SplitScratch cuda::declareSplitScratch(KernelContext &ctx, const std::string &type,
                                       int64_t partials, int64_t counters) {
  SplitScratch s{ctx.info.entry + "_partials", ctx.info.entry + "_arrivals"};
  ctx.globals += llvm::formatv("__device__ {0} {1}[{2}];  // the blocks' partial results\n"
                               "__device__ unsigned {3}[{4}] = {{};  // blocks arrived, reset "
                               "by the last\n",
                               type, s.partials, partials, s.arrivals, counters)
                     .str();
  return s;
}

void cuda::emitLastArrival(CodeWriter &out, const std::string &counter, int64_t blocks) {
  out.line("__threadfence();  // this block's partials before its arrival");
  out.line("__shared__ bool lastBlock;");
  out.line("__syncthreads();");
  out.line(llvm::formatv("if (threadIdx.x == 0) lastBlock = atomicAdd(&{0}, 1u) == {1};", counter,
                         blocks - 1)
               .str());
  out.line("__syncthreads();");
  out.line("if (!lastBlock) return;");
  out.line("__threadfence();  // the other blocks' partials after their arrivals");
}

Index cuda::decompose(CodeWriter &out, const std::string &flat,
                      ArrayRef<int64_t> shape) {
  Index index(shape.size(), "0");
  int64_t stride = 1;
  for (int64_t d = (int64_t)shape.size() - 1; d >= 0; --d) {
    if (shape[d] != 1) {
      std::string name = out.fresh("i");
      std::string expr = stride == 1 ? flat : "(" + flat + ") / " + std::to_string(stride);
      if (d > 0)
        expr = "(" + expr + ") % " + std::to_string(shape[d]);
      out.line("const int64_t " + name + " = " + expr + ";");
      index[d] = name;
    }
    stride *= shape[d];
  }
  return index;
}

//===----------------------------------------------------------------------===//
// Element-wise kernels
//===----------------------------------------------------------------------===//

void cuda::emitElementwiseKernel(KernelContext &ctx) {
  CodeWriter &out = ctx.out;
  ElementalEmitter elemental(ctx.target, out, ctx.buffers, ctx.statics, *ctx.checks);
  int64_t vector = std::max<int64_t>(1, ctx.schedule.getVector());
  out.line("const int64_t stride = (int64_t)gridDim.x * blockDim.x;");
  // A result written over an operand's buffer (dlc.inplace) must be stored
  // after every read of that operand: a second loop would read what the
  // first one stored. Such an operand is read only at the flat position of
  // the element being computed, by values of its element count
  // (inPlaceCandidates), so the results of that count, whatever their
  // shapes (reshapes keep the flat order), are computed in one loop over
  // the flat index, each at its own decomposition of it; every value of an
  // iteration is loaded and computed before it stores.
  std::vector<llvm::SmallVector<unsigned>> groups = ctx.analysis.resultGroups;
  if (ctx.analysis.stageResultsThroughScratch) {
    groups.clear();
    for (const auto &group : ctx.analysis.resultGroups) {
      int64_t n = product(ctx.results[group.front()].shape);
      auto same = llvm::find_if(groups, [&](const auto &g) {
        return product(ctx.results[g.front()].shape) == n;
      });
      if (same == groups.end())
        groups.push_back(group);
      else
        same->append(group.begin(), group.end());
    }
  }
  for (const auto &group : groups) {
    std::vector<int64_t> shape = ctx.results[group.front()].shape;
    int64_t n = product(shape);
    out.line(llvm::formatv("// {0} element(s) of shape {1}, {2} per thread and "
                           "iteration",
                           n, shapeText(shape), vector)
                 .str());
    if (vector > 1) {
      out.open(llvm::formatv("for (int64_t p0 = (int64_t)blockIdx.x * "
                             "blockDim.x + threadIdx.x; p0 < {0}; p0 += {1} * stride)",
                             n, vector)
                   .str());
      out.line("#pragma unroll");
      out.open(llvm::formatv("for (int u = 0; u < {0}; ++u)", vector).str());
      out.line("const int64_t p = p0 + u * stride;");
      out.line(llvm::formatv("if (p >= {0}) break;", n).str());
    } else {
      out.open(llvm::formatv("for (int64_t p = (int64_t)blockIdx.x * blockDim.x "
                             "+ threadIdx.x; p < {0}; p += stride)",
                             n)
                   .str());
    }
    elemental.pushScope();
    Index index = decompose(out, "p", shape);
    std::vector<std::string> values;
    for (unsigned r : group) {
      const std::vector<int64_t> &own = ctx.results[r].shape;
      values.push_back(elemental.emit(
          ctx.view.results[r], own == shape ? index : decompose(out, "p", own)));
    }
    for (auto [i, r] : llvm::enumerate(group)) {
      const Buffer &buffer = ctx.results[r];
      out.line(buffer.ptr + "[p] = " + ctx.target.store(buffer.dtype, values[i]) +
               ";");
    }
    elemental.popScope();
    out.close();
    if (vector > 1)
      out.close();
  }
}

//===----------------------------------------------------------------------===//
// The module
//===----------------------------------------------------------------------===//

/// A short name for the kernel's symbol: its fusion kind or its op.
static std::string kernelLabel(Operation *op) {
  if (auto fusion = dyn_cast<FusionOp>(op))
    return fusion.getKind().str();
  std::string name = op->getName().stripDialect().str();
  return name;
}

LogicalResult dlc::codegen::emitCudaModule(func::FuncOp func,
                                           CudaModuleSource &module) {
  // The CPU's layout pass alone makes channels-last convolutions.
  WalkResult cpuLayout = func.walk([](Operation *op) {
    if (!op->hasAttr("channels_last"))
      return WalkResult::advance();
    op->emitOpError("channels_last is the CPU's layout: no CUDA kernel computes it");
    return WalkResult::interrupt();
  });
  if (cpuLayout.wasInterrupted())
    return failure();
  CudaTarget target;
  module.source = target.prelude();
  unsigned index = 0;
  for (Operation &op : func.getBody().front()) {
    if (!isKernel(&op) || collectiveInKernel(&op))
      continue;
    auto schedule = op.getAttrOfType<ScheduleAttr>("dlc.schedule");
    if (!schedule)
      return op.emitError("CUDA codegen: kernel has no dlc.schedule (run "
                          "--dlc-tile=target=cuda:sm_XY)");

    CudaKernelInfo info;
    info.op = &op;
    info.entry = llvm::formatv("k{0}_{1}", index++, kernelLabel(&op)).str();
    info.strategy = stringifyKernelStrategy(schedule.getStrategy()).str();
    KernelView view = viewKernel(&op);
    KernelAnalysis analysis = analyzeKernel(view);
    CodeWriter body;
    KernelContext ctx{target, body, view, analysis, schedule, info, {}, {}, {}, {}};
    const uint32_t kernelIndex = static_cast<uint32_t>(module.kernels.size());
    module.checks.beginKernel(kernelIndex);
    ctx.checks = &module.checks;

    // Parameters: operands, then results; an in-place pair aliases, so
    // neither gets __restrict__.
    llvm::SmallDenseSet<int64_t> aliased;
    for (int64_t operand : view.inplace)
      if (operand >= 0)
        aliased.insert(operand);
    std::vector<std::string> params;
    for (auto [i, arg] : llvm::enumerate(view.args)) {
      DType dtype = elementDType(arg);
      std::string ptr = "a" + std::to_string(i);
      params.push_back("const " + target.storageType(dtype) +
                       (aliased.contains(i) ? " *" : " *__restrict__ ") + ptr);
      ctx.buffers[arg] = Buffer{ptr, dtype, shapeOf(arg), ""};
      info.args.push_back({"in" + std::to_string(i), false,
                           (uint64_t)(product(shapeOf(arg)) * elementSize(dtype))});
    }
    for (auto [i, result] : llvm::enumerate(view.results)) {
      DType dtype = elementDType(result);
      std::string ptr = "r" + std::to_string(i);
      params.push_back(target.storageType(dtype) +
                       (view.inplace[i] >= 0 ? " *" : " *__restrict__ ") + ptr);
      ctx.results.push_back(Buffer{ptr, dtype, shapeOf(result), ""});
      info.args.push_back({"out" + std::to_string(i), true,
                           (uint64_t)(product(shapeOf(result)) * elementSize(dtype))});
    }

    ArrayRef<int64_t> block = schedule.getBlock().asArrayRef();
    ArrayRef<int64_t> grid = schedule.getGrid().asArrayRef();
    for (int d = 0; d < 3; ++d) {
      info.block[d] = d < (int)block.size() ? (unsigned)block[d] : 1;
      info.grid[d] = d < (int)grid.size() ? (unsigned)std::max<int64_t>(1, grid[d]) : 1;
    }

    body.line("//@STATICS@");
    switch (schedule.getStrategy()) {
    case KernelStrategy::elementwise:
      emitElementwiseKernel(ctx);
      break;
    case KernelStrategy::matmul:
      if (schedule.getMma().empty())
        emitMatmulKernel(ctx);
      else
        emitMmaMatmulKernel(ctx);
      break;
    case KernelStrategy::rows:
    case KernelStrategy::warp_rows:
      emitRowsKernel(ctx);
      break;
    }

    // A kernel that checks its data takes the status words last.
    info.checks = module.checks.checks(kernelIndex);
    if (info.checks)
      params.push_back(std::string("int64_t *__restrict__ ") + DataChecks::kCheckName);

    // Assemble: a comment naming the graph's ops, globals, the signature.
    std::string text = "\n//===-- " + info.entry + " --===//\n";
    text += "// " + describeOp(&op) + ": " + info.strategy + " schedule";
    if (!schedule.getReason().empty())
      text += " (" + schedule.getReason().str() + ")";
    text += "\n";
    for (Operation *inner : view.body)
      text += "//   " + describeOp(inner) + " -> " +
              shapeText(shapeOf(inner->getResult(0))) + "\n";
    text += llvm::formatv("// launch: grid ({0}, {1}, {2}), block ({3}, {4}, "
                          "{5}), {6} bytes of dynamic shared memory\n",
                          info.grid[0], info.grid[1], info.grid[2],
                          info.block[0], info.block[1], info.block[2],
                          info.dynamicSharedBytes)
                .str();
    std::string code = body.text();
    size_t marker = code.find("//@STATICS@\n");
    // Constant tables go to device global memory at file scope (a static
    // array in the kernel would be rebuilt in every thread's local memory),
    // in a namespace of their own so that their names stay the kernel's.
    std::string uses;
    if (!ctx.statics.empty()) {
      std::string tables = ctx.statics;
      for (size_t at = 0; (at = tables.find("  static const ", at)) != std::string::npos;)
        tables.replace(at, 15, "__device__ const ");
      text += "namespace " + info.entry + "_constants {\n" + tables + "}\n";
      uses = "using namespace " + info.entry + "_constants;\n";
    }
    code.replace(marker, 12, uses);
    text += ctx.globals;
    text += target.kernelSignature(info.entry);
    text += "(";
    for (auto [i, p] : llvm::enumerate(params))
      text += (i ? ",\n    " : "\n    ") + p;
    text += ") {\n";
    // The body was written at depth 0: indent it one level.
    std::string indented;
    size_t start = 0;
    while (start < code.size()) {
      size_t end = code.find('\n', start);
      if (end == std::string::npos)
        end = code.size();
      std::string line = code.substr(start, end - start);
      if (!line.empty() && line.rfind("  static const", 0) != 0)
        indented += "  ";
      indented += line + "\n";
      start = end + 1;
    }
    text += indented + "}\n";
    module.source += text;
    module.kernels.push_back(std::move(info));
  }
  return success();
}
