//===- CpuBackend.cpp - a planned function as a CPU module ----------------===//

#include "codegen/cpu/CpuBackend.h"

#include "codegen/common/HostCompiler.h"
#include "codegen/common/KernelDump.h"
#include "codegen/common/ModuleLowering.h"
#include "codegen/cpu/CpuTarget.h"
#include "codegen/cpu/KernelEmitter.h"
#include "runtime/format/HostArch.h"

#include "llvm/ADT/StringMap.h"

#include <cstdlib>

using namespace mlir;
using namespace dlc;
using namespace dlc::codegen;

namespace {
struct Emitted {
  std::string source;
  std::vector<EmittedKernel> kernels;
  bool usesBlas = false;
  bool usesDnnlConv = false;
  DataChecks checks{DataChecks::Numbering::InKernel};
  /// Distinct kernel bodies compiled (kernels.size() entries call them).
  size_t bodies = 0;
};
} // namespace

/// `definition` without its comments: two kernels whose code is the same
/// but whose comments name other buffers or source lines share a body.
static std::string codeOf(const std::string &definition) {
  std::string code;
  code.reserve(definition.size());
  llvm::SmallVector<llvm::StringRef> lines;
  llvm::StringRef(definition).split(lines, '\n');
  for (llvm::StringRef line : lines) {
    // The kernels hold no string literals; a line with a quote keeps its
    // comment rather than risk cutting code.
    size_t comment = line.contains('"') ? llvm::StringRef::npos : line.find("//");
    code += line.substr(0, comment).rtrim();
    code += '\n';
  }
  return code;
}

/// Every kernel's entry, `extern "C" dlc_kernel_<i>(buffers, begin, end)`,
/// calls a body: one per distinct definition (GPT-2's twelve layers compile
/// as one), each cloned per instruction set and given the module index of
/// the kernel's first data check.
static Emitted emitAll(const LoweredModule &m) {
  CpuTarget target;
  // Switches for comparisons (docs/design/2026-11-22-cpu-codegen.md):
  // $DLC_CPU_SGEMM=openblas keeps f32 GEMM on OpenBLAS; $DLC_CPU_LIBM=1
  // calls libm's expf/tanhf; $DLC_CPU_REMAP=0 turns off store remaps.
  if (const char *gemm = std::getenv("DLC_CPU_SGEMM"))
    target.sgemmDnnl = std::string(gemm) != "openblas";
  if (const char *libm = std::getenv("DLC_CPU_LIBM"))
    target.libm = std::string(libm) == "1";
  const char *remap = std::getenv("DLC_CPU_REMAP");
  target.remapStores = !remap || std::string(remap) != "0";
  // $DLC_CPU_CONV=dnnl|gemm: every f32 convolution with module weights on
  // oneDNN's primitive, or none (im2col + GEMM); unset: where it wins.
  if (const char *conv = std::getenv("DLC_CPU_CONV"))
    target.convLibrary = std::string(conv) == "dnnl"   ? CpuTarget::ConvLibrary::Dnnl
                         : std::string(conv) == "gemm" ? CpuTarget::ConvLibrary::Gemm
                                                       : CpuTarget::ConvLibrary::Auto;
  // $DLC_CPU_WINOGRAD=0: 3x3 convolutions on the direct kernels only; =2:
  // as Winograd wherever they can be, however small the batch's output.
  if (const char *winograd = std::getenv("DLC_CPU_WINOGRAD"))
    target.winograd = std::string(winograd) == "0"   ? CpuTarget::Winograd::Never
                      : std::string(winograd) == "2" ? CpuTarget::Winograd::Always
                                                     : CpuTarget::Winograd::Auto;
  // $DLC_CPU_PACKED_GEMM=0|1|2: matmuls by module weights and
  // channels-last convolutions on the packed GEMM never, where it wins (the
  // default), or on every AVX2 CPU.
  target.packedGemm = cpuPackedGemmFromEnv();
  Emitted e;
  llvm::StringMap<std::string> bodyOf; // code -> the body's name
  const std::string placeholder = std::string(kKernelBodyName) + "(";
  for (auto [i, k] : llvm::enumerate(m.kernels)) {
    const std::string entry = "dlc_kernel_" + std::to_string(i);
    EmittedKernel kernel = emitCpuKernel(target, k.view, entry, k.argNames, e.checks,
                                         static_cast<uint32_t>(i));
    auto [it, fresh] = bodyOf.try_emplace(codeOf(kernel.definition));
    e.source += "\n" + kernel.header;
    if (fresh) {
      it->second = "dlc_body_" + std::to_string(e.bodies++);
      std::string definition = kernel.definition;
      definition.replace(definition.find(placeholder), placeholder.size() - 1, it->second);
      e.source += definition;
    } else {
      e.source += "//  the body of an earlier kernel: " + it->second + "\n";
    }
    const std::string check = std::to_string(e.checks.firstCheck(static_cast<uint32_t>(i)));
    e.source += "extern \"C\" void " + entry + "(void *const *buffers, int64_t begin, int64_t end) {\n";
    if (kernel.rowBlock > 0) {
      // Blocks of rows at multiples of the block, so that a block of a
      // whole number of heads (or images) starts at one.
      const std::string block = std::to_string(kernel.rowBlock);
      e.source += "  for (int64_t b = begin; b < end;) {\n"
                  "    const int64_t e = (b / " + block + " + 1) * " + block +
                  ";\n    " + it->second + "(buffers, b, e < end ? e : end, " + check +
                  ");\n    b = e < end ? e : end;\n  }\n}\n";
    } else {
      e.source += "  " + it->second + "(buffers, begin, end, " + check + ");\n}\n";
    }
    e.usesBlas |= kernel.usesBlas;
    e.usesDnnlConv |= kernel.usesDnnlConv;
    e.kernels.push_back(std::move(kernel));
  }
  // Whether OpenBLAS must be loaded whatever the CPU (blasPrelude).
  std::string dgemm = e.source.find("dlc_dgemm(") != std::string::npos
                          ? "#define DLC_USES_DGEMM 1\n"
                          : "";
  const bool packed = e.source.find("dlc_sgemm_weights(") != std::string::npos ||
                      e.source.find("dlc_sgemv_weights(") != std::string::npos ||
                      e.source.find("dlc_conv_packed(") != std::string::npos;
  e.source = target.prelude() + (e.usesDnnlConv ? target.dnnlConvPrelude() : "") +
             (e.usesBlas ? dgemm + target.blasPrelude() : "") +
             (packed ? target.packedGemmPrelude() : "") + e.source;
  return e;
}

/// The module's shared object, built by `c++` (or $DLC_CXX) for the
/// baseline instruction set of the target: no -march=native, as the module
/// must run wherever the runtime runs (the prelude's DLC_KERNEL adds AVX2
/// and AVX-512 clones of each kernel, picked at load time). A kernel that
/// calls a GEMM or oneDNN's convolution links oneDNN (OpenBLAS is loaded by
/// the module itself, when it can call it: CpuTarget::blasPrelude).
static rt::Status compileKernels(const Emitted &e, std::vector<uint8_t> *so) {
  HostCompileJob job;
  const char *compiler = std::getenv("DLC_CXX");
  job.compiler = compiler && *compiler ? compiler : "c++";
  job.flags = {"-std=c++17",      "-O3",
               "-fPIC",           "-shared",
               "-fno-math-errno", "-fno-trapping-math",
               "-w"};
  job.sourceName = "kernels.cpp";
  job.source = e.source;
  // oneDNN for GEMMs and convolutions (OpenBLAS: dlopen'd when needed).
  if (e.usesBlas || e.usesDnnlConv)
    job.libraries = {"-ldnnl", "-lgomp"};
  // The same kernels (same source, flags and compiler) compile once per
  // machine: a second compile of a model is the cache's.
  job.cacheDirectory = kernelCacheDirectory("cpu");
  return compileOnHost(job, so);
}

FailureOr<std::string> dlc::codegen::emitCpuSource(func::FuncOp func) {
  auto lowered = lowerModule(func);
  if (failed(lowered))
    return failure();
  std::string source = emitAll(*lowered).source;
  dumpKernelSource(lowered->name + ".cpp", source);
  return source;
}

/// Per kernel, the dynamic dimension its launch may run the first rows of
/// (module.fbs CpuLaunch.dynamic_dim), or -1 to run it whole. A kernel
/// whose rows grow with the dimension runs a prefix when it splits its
/// rows with the dimension outermost. One that cannot runs whole, reading
/// rows beyond the run's N: the runtime fills an input's with valid rows,
/// but an intermediate's hold whatever the arena held. That is harmless
/// (those rows are discarded) unless the kernel checks its data, which
/// could then fail on garbage: then no launch of the module runs a prefix.
static std::vector<int32_t> rowScaling(const LoweredModule &m, const Emitted &emitted) {
  std::vector<int32_t> dims(m.kernels.size(), -1);
  if (!m.dynamicDim)
    return dims;
  for (auto [i, k] : llvm::enumerate(m.kernels)) {
    const EmittedKernel &e = emitted.kernels[i];
    if (!k.dynamicRows)
      continue;
    if (k.dynamicResults && e.outerRows > 0 && e.outerRows % m.dynamicDim->max == 0)
      dims[i] = 0;
    else if (e.checks)
      return std::vector<int32_t>(m.kernels.size(), -1);
  }
  return dims;
}

FailureOr<CpuModule> dlc::codegen::buildCpuModule(func::FuncOp func,
                                                  CpuFailure &failure,
                                                  std::string &message, bool keepParams) {
  failure = CpuFailure::BadInput;
  auto lowered = lowerModule(func, keepParams);
  if (mlir::failed(lowered))
    return mlir::failure();
  LoweredModule &m = *lowered;
  Emitted emitted = emitAll(m);
  dumpKernelSource(m.name + ".cpp", emitted.source);

  std::vector<uint8_t> so;
  rt::Status compiled = compileKernels(emitted, &so);
  if (!compiled.ok()) {
    failure = CpuFailure::Internal;
    message = "the host compiler failed on the generated kernels:\n" + compiled.message();
    return mlir::failure();
  }

  format::ModuleWriter w;
  describeModule(m, w);
  uint32_t binary = w.addBinary("kernels.so", fb::BinaryFormat::shared_object,
                                format::hostArchitecture(), std::move(so));
  std::vector<int32_t> dynamicDims = rowScaling(m, emitted);
  std::vector<format::LaunchDesc> launches;
  for (auto [i, k] : llvm::enumerate(m.kernels)) {
    const EmittedKernel &e = emitted.kernels[i];
    format::KernelDesc desc;
    desc.name = e.entry;
    desc.entry = e.entry;
    desc.binaries = {binary};
    desc.args = k.args;
    desc.parallelExtent = e.parallelExtent;
    desc.grain = e.grain;
    desc.dynamicDim = dynamicDims[i];
    std::vector<format::BufferRef> refs = k.refs;
    if (e.checks) {
      desc.args.push_back({"status", fb::Access::read_write, format::kStatusBytes});
      refs.push_back(format::statusRef());
    }
    uint32_t id = w.addKernel(desc);
    launches.push_back(format::LaunchDesc{id, std::move(refs)});
  }
  addPlans(m, launches, w);
  emitted.checks.write(w);

  CpuModule result;
  rt::Status status = w.release(&result.bytes);
  if (!status.ok()) {
    failure = CpuFailure::Internal;
    message = "the module written does not verify: " + status.message();
    return mlir::failure();
  }
  result.source = std::move(emitted.source);
  result.params = std::move(m.params);
  failure = CpuFailure::None;
  return result;
}
