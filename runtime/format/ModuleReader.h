//===- ModuleReader.h - Load and check a .dlcm file -------------*- C++ -*-===//
//
// Loading checks, in this order, before anything is allocated for running:
//
//   1. the prelude: identifier "DLCM", a size of at least 64 bytes, the
//      prelude's CRC, the format's major version, the header's position,
//      and the file size it records (a truncated file stops here);
//   2. the FlatBuffers header: identifier, then the FlatBuffers verifier
//      (every offset, vector and string inside the header's bytes);
//   3. checksums: the header's CRC, then the section table (each section
//      64-aligned, in order, inside the file), each section's CRC, and zero
//      padding between sections, so that every byte of the file is checked;
//   4. semantics: every index, offset, size, dtype and shape against the
//      file (ModuleReader.cpp: validateSemantics lists them all).
//
// Checks against a device (arena size against its memory, a binary for its
// architecture) come when a session is created (runtime/executor/Session.h).
// Every error is INVALID_MODULE with a message
//   "<file>: section '<name>' at byte <offset>: <what is wrong>".
// A module that passes holds code (kernel binaries) that will run in this
// process: the checks protect against corrupt files, not against trusting a
// module from an untrusted source.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/base/Memory.h"
#include "runtime/base/Span.h"
#include "runtime/base/Status.h"
#include "runtime/format/ModuleFormat.h"

#include <memory>
#include <string>
#include <vector>

namespace dlc::format {

using rt::Status;

/// A tensor of the signature or a weight, with its byte size computed.
/// `shape` and `bytes` are those at a dynamic dimension's max.
struct TensorInfo {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  uint64_t bytes = 0;
  /// Format 1.3, inputs and outputs: the index of the dynamic dimension
  /// (LoadedModule::dynamicDims) its outermost extent grows with, or -1.
  int32_t dynamicDim = -1;

  /// A dynamic tensor at N = n of a dimension whose largest size is `max`:
  /// shape[0] / max * n rows (the reader checked that shape[0] is a
  /// multiple of max), and their bytes. A static tensor's are its own.
  int64_t rowsAt(int64_t n, int64_t max) const {
    return dynamicDim >= 0 ? shape[0] / max * n : (shape.empty() ? 1 : shape[0]);
  }
  uint64_t bytesAt(int64_t n, int64_t max) const {
    return dynamicDim < 0 ? bytes : bytes / static_cast<uint64_t>(max) * static_cast<uint64_t>(n);
  }
};

/// A dimension each run chooses (format 1.3, module.fbs DynamicDim): the
/// module is written for N = max and runs at any N in [min, max].
struct DynamicDimInfo {
  std::string name;
  int64_t min = 1, max = 1;
};

/// A state tensor (format 1.1): its initial value is zeros, the weight
/// `initialWeight` (>= 0), or drawn by `draw` (format 1.5).
struct StateInfo : TensorInfo {
  int64_t initialWeight = -1;
  std::optional<Draw> draw;
};

/// A module that passed every check against its file. Immutable and
/// thread-safe to read; share it through shared_ptr.
class LoadedModule {
public:
  ~LoadedModule();
  LoadedModule(const LoadedModule &) = delete;
  LoadedModule &operator=(const LoadedModule &) = delete;

  /// The path it was read from, or "<memory>".
  const std::string &label() const { return label_; }
  ByteSpan fileBytes() const { return file_; }
  uint16_t minorVersion() const { return minor_; }
  const fb::Module &root() const { return *root_; }

  const std::vector<TensorInfo> &inputs() const { return inputs_; }
  const std::vector<TensorInfo> &outputs() const { return outputs_; }
  const std::vector<TensorInfo> &weights() const { return weights_; }
  const std::vector<StateInfo> &state() const { return state_; }
  /// Format 1.3: the dimensions a run chooses (at most one in this
  /// runtime); empty for a module of static shapes.
  const std::vector<DynamicDimInfo> &dynamicDims() const { return dynamicDims_; }
  /// The bytes of weight `i` (64-byte aligned in memory): in the file, or
  /// drawn when the module was loaded (format 1.5, Weight.draw).
  ByteSpan weightData(uint32_t i) const;
  /// The bytes of Module.sections[i].
  ByteSpan sectionData(uint32_t i) const;

private:
  friend Status readModuleFile(const std::string &, std::shared_ptr<const LoadedModule> *);
  friend Status readModuleMemory(ByteSpan, std::shared_ptr<const LoadedModule> *,
                                 const std::string &);
  LoadedModule() = default;
  Status init();

  std::string label_;
  ByteSpan file_;
  void *mapping_ = nullptr; ///< munmap'd on destruction when set
  size_t mappingSize_ = 0;
  rt::AlignedBuffer copy_;  ///< or the bytes are owned here
  uint16_t minor_ = 0;
  const fb::Module *root_ = nullptr;
  std::vector<TensorInfo> inputs_, outputs_, weights_;
  std::vector<StateInfo> state_;
  std::vector<DynamicDimInfo> dynamicDims_;
  ByteSpan weightSection_;
  /// Per weight, its drawn bytes (empty for a weight in the file).
  std::vector<rt::AlignedBuffer> drawnWeights_;
};

/// Maps the file read-only (weights are used in place) and checks it. The
/// file must not change while the module is loaded.
Status readModuleFile(const std::string &path, std::shared_ptr<const LoadedModule> *out);

/// Copies `bytes` into 64-byte-aligned memory and checks them.
Status readModuleMemory(ByteSpan bytes, std::shared_ptr<const LoadedModule> *out,
                        const std::string &label = "<memory>");

/// Runs every check on `bytes` in place (copying only when they are not
/// 8-byte aligned) and keeps nothing.
Status verifyModuleBytes(ByteSpan bytes, const std::string &label = "<memory>");

} // namespace dlc::format
