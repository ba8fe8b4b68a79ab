//===- ModuleFormat.h - Constants and layout of a .dlcm file ----*- C++ -*-===//
//
// What both the reader and the writer must agree on besides the schema
// (module.fbs): the prelude's byte layout, the alignments, how the wire's
// dtypes are the project's one DType (support/DType.h), and how the list
// of collectives is hashed. The whole layout is in
// docs/design/2026-11-22-module-format.md.
//
// File layout (all integers little-endian):
//
//   [0, 64)                 prelude (struct below), CRC-protected
//   [64, 64 + header_size)  FlatBuffers header, root type dlc.fb.Module,
//                           file identifier "DLCM" at bytes 68..72
//   zero padding to a multiple of 64
//   sections                Module.sections: 64-byte-aligned, increasing,
//                           zero padding between them, each CRC-protected
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/base/LibraryGemm.h"
#include "runtime/base/Span.h"
#include "runtime/base/Status.h"
#include "runtime/format/module_generated.h"
#include "support/DType.h"
#include "support/Init.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dlc::format {

using rt::ByteSpan;

/// Bytes 0..4 of the file, and the FlatBuffers file identifier.
constexpr char kMagic[4] = {'D', 'L', 'C', 'M'};
/// A reader accepts files whose major version equals its own, whatever the
/// minor version (minor additions are optional fields it may ignore).
constexpr uint16_t kFormatMajor = 1;
/// 1.1: state tensors; 1.2: data checks (Module.checks, BufferSpace status).
/// A 1.1 reader refuses a module that binds the status space (an unknown
/// buffer space), so no module runs without its checks being read.
/// 1.3: dynamic dimensions (Module.dynamic_dims): a 1.2 reader runs such a
/// module at the dimension's largest size only, which is correct.
/// 1.4: library GEMMs (Kernel.library_gemm): a 1.3 reader runs the
/// kernel's generated code, which computes the same.
/// 1.5: state tensors drawn at session creation (StateInit drawn): a 1.4
/// reader refuses such a module (an unknown initialiser), naming the state.
constexpr uint16_t kFormatMinor = 5;

constexpr uint64_t kPreludeSize = 64;
constexpr uint64_t kHeaderOffset = kPreludeSize;
/// Sections, weights inside the weights section, and arenas are aligned to this.
constexpr uint64_t kSectionAlignment = 64;
/// Format 1.5: the offset of a drawn weight (Weight.draw), which has no
/// place in the file; a 1.4 reader refuses it as misaligned.
constexpr uint64_t kDrawnWeightOffset = ~uint64_t(0);

/// Limits a valid module stays under (checked before anything is allocated).
constexpr uint64_t kMaxHeaderSize = uint64_t(1) << 31;  ///< FlatBuffers' own limit
constexpr uint64_t kMaxTensorBytes = uint64_t(1) << 48; ///< any one tensor or arena
constexpr uint32_t kMaxRank = 16;
constexpr uint32_t kMaxKernelArgs = 1024;
constexpr uint32_t kMaxArenaAlignment = 1u << 20;

/// The status words (BufferSpace status): kStatusWords int64 words, zero
/// while no check has failed. Word 0: the failed check's index in
/// Module.checks plus 1; word 1: the offending value; word 2: its
/// position; word 3: reserved (0). module.fbs Check has the protocol.
constexpr uint32_t kStatusWords = 4;
constexpr uint64_t kStatusBytes = kStatusWords * 8;

/// The prelude, bytes [0, 64) of the file.
struct Prelude {
  char magic[4];          ///< [0, 4)   "DLCM"
  uint16_t major;         ///< [4, 6)   kFormatMajor
  uint16_t minor;         ///< [6, 8)   kFormatMinor
  uint64_t headerOffset;  ///< [8, 16)  64
  uint64_t headerSize;    ///< [16, 24) bytes of the FlatBuffers header
  uint64_t fileSize;      ///< [24, 32) bytes of the whole file
  uint32_t headerCrc32;   ///< [32, 36) CRC-32 of the header's bytes
  uint32_t flags;         ///< [36, 40) 0 (reserved)
                          ///< [40, 60) zero (reserved)
  uint32_t preludeCrc32;  ///< [60, 64) CRC-32 of bytes [0, 60)
};

/// Encodes `p` into 64 bytes (the CRC field is computed, not taken from `p`).
void encodePrelude(const Prelude &p, uint8_t out[kPreludeSize]);
/// Decodes 64 bytes (no checks).
Prelude decodePrelude(const uint8_t in[kPreludeSize]);

/// The dtype a wire value names; nullopt for `invalid` and unknown values.
/// fb::DType is the on-disk enum only: the reader converts it here, the
/// writer back with wireDType, and everything between uses dlc::DType.
std::optional<DType> dtypeFromWire(fb::DType wire);
fb::DType wireDType(DType dtype);
/// Format 1.4: the library GEMM a (checked) kernel carries, if any.
std::optional<rt::LibraryGemmCall> libraryGemmOf(const fb::Kernel &kernel);
/// Format 1.5: a tensor's value drawn by the runtime (a state tensor's
/// initial value when a session creates it, a weight's when the module is
/// loaded): initParam(kind, options, the tensor's dtype and shape).
struct Draw {
  InitKind kind = InitKind::Normal;
  InitOptions options;
};
/// The draw a wire Draw names; nullopt for an unknown kind or a
/// non-finite option.
std::optional<Draw> drawFromWire(const fb::Draw &wire);
/// The wire kind of an initialiser other than Zeros (a zero state is
/// StateInit zeros, with no draw).
fb::DrawKind wireDrawKind(InitKind kind);
/// The `dtype` tensor of `shape` that `draw` gives, in `out`: the runtime's
/// side of a drawn weight or state tensor.
rt::Status drawTensor(const Draw &draw, DType dtype, const std::vector<int64_t> &shape,
                      HostTensor *out);

/// "[2, 3]".
std::string shapeString(const int64_t *dims, size_t rank);

/// A collective as the plan issues it (the neutral form of fb::CollectiveInfo
/// that both the writer and the reader hash).
struct CollectiveDesc {
  fb::CollectiveOp op = fb::CollectiveOp::all_reduce;
  fb::ReduceOp reduce = fb::ReduceOp::sum;
  DType dtype = DType::F32;
  int64_t count = 0;
  std::vector<std::string> axes;
  int32_t peer = -1;
  int64_t outer = 1;
};

/// FNV-1a 64 over, per collective in order: op, reduce, wire dtype (one
/// byte each), count (8 bytes LE), peer (4 bytes LE), then each axis name
/// followed by a 0 byte, then a 0xFF byte. The hash of an empty list is
/// kFnvOffset.
uint64_t collectivesHash(const std::vector<CollectiveDesc> &collectives);

} // namespace dlc::format
