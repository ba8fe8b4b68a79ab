//===- CudaBackend.cpp - a planned function as a CUDA module --------------===//

#include "codegen/cuda/CudaBackend.h"

#include "codegen/common/KernelDump.h"
#include "codegen/common/ModuleLowering.h"
#include "codegen/cuda/CudaCodegen.h"
#include "codegen/cuda/EmuCompile.h"
#include "codegen/cuda/Nvrtc.h"
#include "ir/DlcDialect.h"
#include "ir/ParamSpec.h"
#include "passes/LibraryGemm.h"
#include "runtime/format/HostArch.h"

#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace dlc;
using namespace dlc::codegen;

bool dlc::codegen::parseCudaTarget(const std::string &target,
                                   std::vector<std::string> &archs) {
  llvm::StringRef spec = target;
  if (spec == "cuda") {
    archs = {"sm_80", "sm_90"};
    return true;
  }
  if (!spec.consume_front("cuda:"))
    return false;
  archs.clear();
  llvm::SmallVector<llvm::StringRef> parts;
  spec.split(parts, ',');
  for (llvm::StringRef part : parts) {
    part = part.trim();
    unsigned version;
    if (!part.starts_with("sm_") || part.drop_front(3).getAsInteger(10, version))
      return false;
    archs.push_back(part.str());
  }
  return !archs.empty();
}

/// The library call of a kernel dlc-tile scheduled as `library` (module
/// format 1.4): the same match (passes/LibraryGemm.h), in the module's terms.
static std::optional<rt::LibraryGemmCall> libraryGemmCall(Operation *kernel) {
  auto schedule = kernel->getAttrOfType<ScheduleAttr>("dlc.schedule");
  if (!schedule || schedule.getImplementation() != KernelImpl::library)
    return std::nullopt;
  std::optional<LibraryGemm> g = matchLibraryGemm(kernel);
  if (!g)
    return std::nullopt;
  rt::LibraryGemmCall call;
  call.a = g->a, call.b = g->b, call.d = g->d;
  call.bias = g->bias, call.c = g->c;
  call.operandDtype = dtypeOf(g->operandType);
  call.resultDtype = dtypeOf(g->resultType);
  call.biasDtype = g->biasType ? dtypeOf(g->biasType) : call.resultDtype;
  call.transposeA = g->transposeA, call.transposeB = g->transposeB, call.tf32 = g->tf32;
  call.batch = g->batch, call.m = g->m, call.n = g->n, call.k = g->k;
  call.strideA = g->strideA, call.strideB = g->strideB;
  switch (g->activation) {
  case LibraryGemm::Activation::none:
    call.activation = rt::LibraryGemmCall::Activation::kNone;
    break;
  case LibraryGemm::Activation::relu:
    call.activation = rt::LibraryGemmCall::Activation::kRelu;
    break;
  case LibraryGemm::Activation::geluTanh:
    call.activation = rt::LibraryGemmCall::Activation::kGeluTanh;
    break;
  }
  return call;
}

FailureOr<std::string> dlc::codegen::emitCudaSource(func::FuncOp func) {
  CudaModuleSource module;
  if (failed(emitCudaModule(func, module)))
    return failure();
  return std::string(cuda::cudaSourcePreamble()) + module.source;
}

FailureOr<CudaModule> dlc::codegen::buildCudaModule(func::FuncOp func,
                                                    const CudaBuildOptions &options,
                                                    CudaFailure &failure,
                                                    std::string &message) {
  failure = CudaFailure::BadInput;
  auto lowered = lowerModule(func);
  if (failed(lowered))
    return mlir::failure();
  LoweredModule &m = *lowered;
  CudaModuleSource emitted;
  if (failed(emitCudaModule(func, emitted)))
    return mlir::failure();
  std::string source = std::string(cuda::cudaSourcePreamble()) + emitted.source;
  dumpKernelSource(m.name + ".cu", source);

  format::ModuleWriter w;
  describeModule(m, w);

  std::vector<uint32_t> binaries;
  failure = CudaFailure::Internal;
  if (!options.archs.empty()) {
    cuda::NvrtcOptions nvrtc;
    nvrtc.archs = options.archs;
    std::vector<cuda::NvrtcOutput> outputs;
    rt::Status status = cuda::compileWithNvrtc(m.name, source, nvrtc, &outputs);
    if (!status.ok()) {
      message = "NVRTC failed on the generated kernels: " + status.message();
      return mlir::failure();
    }
    for (cuda::NvrtcOutput &o : outputs) {
      binaries.push_back(w.addBinary("kernels." + o.arch + ".cubin",
                                     fb::BinaryFormat::cubin, o.arch,
                                     std::move(o.cubin)));
      std::vector<uint8_t> ptx(o.ptx.begin(), o.ptx.end());
      ptx.push_back(0);
      binaries.push_back(w.addBinary("kernels." + o.arch + ".ptx",
                                     fb::BinaryFormat::ptx, o.arch, std::move(ptx)));
    }
  }
  if (options.emulation) {
    std::vector<std::string> entries;
    for (auto &k : emitted.kernels)
      entries.push_back(k.entry);
    std::vector<uint8_t> so;
    rt::Status status = cuda::compileForEmulation(m.name, source, entries, {}, &so);
    if (!status.ok()) {
      message = "the host compiler failed on the generated CUDA (cuda-emu): " +
                status.message();
      return mlir::failure();
    }
    binaries.push_back(w.addBinary("kernels.emu.so", fb::BinaryFormat::shared_object,
                                   format::hostArchitecture(), std::move(so)));
  }

  std::vector<format::LaunchDesc> launches;
  if (emitted.kernels.size() != m.kernels.size()) {
    message = "CUDA codegen and module lowering disagree on the kernels";
    return mlir::failure();
  }
  for (auto [i, k] : llvm::enumerate(m.kernels)) {
    const CudaKernelInfo &e = emitted.kernels[i];
    if (e.op != k.view.op) {
      message = "CUDA codegen and module lowering order kernels differently";
      return mlir::failure();
    }
    format::KernelDesc desc;
    desc.name = e.entry;
    desc.target = fb::Target::cuda;
    // The module's one source, stored once (kernel 0's): the others' is
    // empty, and readers take kernel 0's (module.fbs Kernel.source). Kept
    // on each it made a module quadratic in its kernels (GPT-2 small in
    // bf16: 187 MB of its 250 were 300 copies of its source).
    if (i == 0)
      desc.source = source;
    desc.entry = e.entry;
    desc.binaries = binaries;
    desc.args = k.args;
    std::vector<format::BufferRef> refs = k.refs;
    if (e.checks) {
      desc.args.push_back({"status", fb::Access::read_write, format::kStatusBytes});
      refs.push_back(format::statusRef());
    }
    desc.grid = {e.grid[0], e.grid[1], e.grid[2]};
    desc.block = {e.block[0], e.block[1], e.block[2]};
    desc.dynamicSharedMemory = e.dynamicSharedBytes;
    desc.libraryGemm = libraryGemmCall(e.op);
    uint32_t id = w.addKernel(desc);
    launches.push_back(format::LaunchDesc{id, std::move(refs)});
  }
  addPlans(m, launches, w);
  emitted.checks.write(w);

  CudaModule result;
  rt::Status status = w.release(&result.bytes);
  if (!status.ok()) {
    message = "the module written does not verify: " + status.message();
    return mlir::failure();
  }
  result.source = std::move(source);
  result.params = std::move(m.params);
  failure = CudaFailure::None;
  return result;
}
