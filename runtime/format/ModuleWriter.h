//===- ModuleWriter.h - Build a .dlcm file ----------------------*- C++ -*-===//
//
// The builder the compiler (codegen/) uses to write a module: describe the
// signature, weights (their bytes), binaries, kernels and per-rank plans in
// plain C++ values, then serialize. The writer lays out the file (prelude,
// FlatBuffers header, 64-byte-aligned sections), computes every checksum and
// the collectives hash, and by default runs the reader's checks on the
// result, so a compiler bug is caught when the module is written rather than
// when it is run. No LLVM or MLIR here: the compiler links DlcRuntimeFormat.
//
// Example (an element-wise add on the CPU):
//
//   ModuleWriter w;
//   w.setName("add");
//   w.addInput({"a", DType::F32, {4}});
//   w.addInput({"b", DType::F32, {4}});
//   w.addOutput({"c", DType::F32, {4}});
//   uint32_t so = w.addBinary("kernels.so", fb::BinaryFormat::shared_object,
//                             "x86_64", soBytes);
//   KernelDesc k;
//   k.name = "add"; k.entry = "dlc_add"; k.binaries = {so};
//   k.args = {{"a", fb::Access::read, 16}, {"b", fb::Access::read, 16},
//             {"c", fb::Access::write, 16}};
//   k.parallelExtent = 4;
//   uint32_t add = w.addKernel(k);
//   PlanDesc plan;
//   plan.commands.push_back(LaunchDesc{add, {inputRef(0, 0, 16),
//       inputRef(1, 0, 16), outputRef(0, 0, 16)}});
//   w.addPlan(plan);
//   Status s = w.writeFile("add.dlcm");
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/base/Status.h"
#include "runtime/format/ModuleFormat.h"

#include <array>
#include <string>
#include <variant>
#include <vector>

namespace dlc::format {

using rt::Status;

struct TensorDesc {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  /// Format 1.3: the dynamic dimension (addDynamicDim) its outermost
  /// extent grows with, or -1.
  int32_t dynamicDim = -1;
};

struct KernelArgDesc {
  std::string name;
  fb::Access access = fb::Access::read;
  uint64_t bytes = 0; ///< the most the kernel touches through this argument
};

struct KernelDesc {
  std::string name;
  fb::Target target = fb::Target::cpu;
  std::string source;
  std::string entry;            ///< extern "C" symbol
  std::vector<uint32_t> binaries; ///< ids from ModuleWriter::addBinary
  std::vector<KernelArgDesc> args;
  // target cpu
  int64_t parallelExtent = 1;
  int64_t grain = 1;
  /// Format 1.3: the dynamic dimension its rows grow with, or -1.
  int32_t dynamicDim = -1;
  // target cuda
  std::array<uint32_t, 3> grid{1, 1, 1};
  std::array<uint32_t, 3> block{1, 1, 1};
  uint32_t dynamicSharedMemory = 0;
  /// Format 1.4: the library GEMM that may run in place of the kernel.
  std::optional<rt::LibraryGemmCall> libraryGemm;
};

/// BufferRef is the generated struct: fb::BufferRef(space, index, offset, bytes).
using BufferRef = fb::BufferRef;
inline BufferRef arenaRef(uint64_t offset, uint64_t bytes) {
  return BufferRef(fb::BufferSpace::arena, 0, offset, bytes);
}
inline BufferRef inputRef(uint32_t index, uint64_t offset, uint64_t bytes) {
  return BufferRef(fb::BufferSpace::input, index, offset, bytes);
}
inline BufferRef outputRef(uint32_t index, uint64_t offset, uint64_t bytes) {
  return BufferRef(fb::BufferSpace::output, index, offset, bytes);
}
inline BufferRef weightRef(uint32_t index, uint64_t offset, uint64_t bytes) {
  return BufferRef(fb::BufferSpace::weight, index, offset, bytes);
}
inline BufferRef stateRef(uint32_t index, uint64_t offset, uint64_t bytes) {
  return BufferRef(fb::BufferSpace::state, index, offset, bytes);
}

/// The status words (format 1.2), bound to the argument of a kernel that
/// makes data checks.
inline BufferRef statusRef() { return BufferRef(fb::BufferSpace::status, 0, 0, kStatusBytes); }

/// A data check (module.fbs Check).
struct CheckDesc {
  fb::CheckKind kind = fb::CheckKind::invalid;
  uint32_t kernel = 0;
  std::string op;
  std::string location;
  int64_t bound = 0;
  int64_t axis = 0;
};

/// A state tensor: zeros at first, the weight `initialWeight` (an id from
/// addWeight, of the same dtype and shape), or drawn by `draw` when a
/// session creates it (format 1.5; `draw` wins over a weight).
struct StateDesc {
  TensorDesc tensor;
  int64_t initialWeight = -1;
  std::optional<Draw> draw;
};

struct LaunchDesc {
  uint32_t kernel = 0;
  std::vector<BufferRef> args;
};
struct CopyDesc {
  BufferRef src;
  BufferRef dst;
  uint64_t bytes = 0;
};
struct LibraryCallDesc {
  std::string name;
  std::vector<BufferRef> args;
};
struct CollectiveCommandDesc {
  uint32_t sequence = 0;
  BufferRef send;
  BufferRef recv;
};
using CommandDesc = std::variant<LaunchDesc, CopyDesc, LibraryCallDesc, CollectiveCommandDesc>;

struct PlanDesc {
  uint64_t arenaSize = 0;
  uint32_t arenaAlignment = 64;
  std::vector<CommandDesc> commands;
};

/// A dimension chosen at run time (module.fbs DynamicDim).
struct DynamicDimDesc {
  std::string name;
  int64_t min = 1, max = 1;
};

struct MeshAxisDesc {
  std::string name;
  uint32_t size = 1;
};

class ModuleWriter {
public:
  void setName(std::string name) { name_ = std::move(name); }
  void setProducer(std::string producer) { producer_ = std::move(producer); }

  /// Each returns the new entry's index.
  uint32_t addInput(TensorDesc tensor);
  uint32_t addOutput(TensorDesc tensor);
  /// A tensor that persists across runs (module.fbs StateSpec).
  uint32_t addState(StateDesc state);
  /// `bytes` are the weight's contents, row-major (placed 64-aligned).
  uint32_t addWeight(TensorDesc tensor, std::vector<uint8_t> bytes);
  /// A weight the reader draws when it loads the module (format 1.5): no
  /// bytes in the file. `draw.kind` is not Zeros.
  uint32_t addDrawnWeight(TensorDesc tensor, Draw draw);
  /// Compiled code stored in its own section named `name`; returns the id a
  /// KernelDesc lists in `binaries`.
  uint32_t addBinary(std::string name, fb::BinaryFormat format, std::string arch,
                     std::vector<uint8_t> bytes);
  uint32_t addKernel(KernelDesc kernel);
  /// Plans are per rank, in rank order.
  uint32_t addPlan(PlanDesc plan);
  void setMesh(std::vector<MeshAxisDesc> mesh) { mesh_ = std::move(mesh); }
  uint32_t addCollective(CollectiveDesc collective);
  /// Checks are numbered in the order added: the index a kernel's source
  /// stores (plus 1) in the status words.
  uint32_t addCheck(CheckDesc check);
  /// A dimension each run chooses (format 1.3): tensors and CPU kernels
  /// name it by the returned index.
  uint32_t addDynamicDim(DynamicDimDesc dim);

  /// Lays out the file. With `verify`, runs verifyModuleBytes on the result
  /// and returns its error (INVALID_MODULE) for a module that would not load.
  Status serialize(std::vector<uint8_t> *out, bool verify = true) const;
  /// serialize, freeing each weight's and binary's bytes as soon as they
  /// are copied into `out` (the writer holds none afterwards): peak memory
  /// is the file and the largest weight, not the file and every weight.
  Status release(std::vector<uint8_t> *out, bool verify = true);
  /// serialize, then write to a temporary file beside `path` and rename it.
  Status writeFile(const std::string &path, bool verify = true) const;

  /// For tests that build hostile modules: overrides applied after layout.
  struct Overrides {
    bool setFormatMajor = false;
    uint16_t formatMajor = 0;
  };
  void setOverrides(Overrides overrides) { overrides_ = overrides; }

private:
  Status layOut(std::vector<uint8_t> *out, bool verify, bool releaseBytes);

  struct Weight {
    TensorDesc tensor;
    std::vector<uint8_t> bytes;
    std::optional<Draw> draw; ///< then `bytes` is empty
  };
  struct Binary {
    std::string name;
    fb::BinaryFormat format;
    std::string arch;
    std::vector<uint8_t> bytes;
  };
  std::string name_, producer_ = "dlc";
  std::vector<TensorDesc> inputs_, outputs_;
  std::vector<StateDesc> state_;
  std::vector<Weight> weights_;
  std::vector<Binary> binaries_;
  std::vector<KernelDesc> kernels_;
  std::vector<PlanDesc> plans_;
  std::vector<CheckDesc> checks_;
  std::vector<DynamicDimDesc> dynamicDims_;
  std::vector<MeshAxisDesc> mesh_;
  std::vector<CollectiveDesc> collectives_;
  Overrides overrides_;
};

} // namespace dlc::format
