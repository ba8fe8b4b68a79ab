//===- WeightFiles.h - .npy, .npz and .safetensors files ---------*- C++ -*-===//
//
// Reading and writing the tensor files a user brings along with a model, and
// the checkpoints dlc writes: NumPy .npy, NumPy .npz (a ZIP archive of .npy
// files, through libzip: stored or deflated, as np.savez and
// np.savez_compressed write them) and .safetensors (its JSON header through
// nlohmann-json). No LLVM or MLIR: the runtime links this to write
// checkpoints.
//
// Every function returns false and sets `error` on failure. Messages name
// the file, the part of it (npy header, entry 'w1.npy', safetensors header,
// tensor 'h.0.w', ...) and, where the format tells, the byte offset:
//   "w.npz: entry 'w1.npy': npy header at byte 20: dtype '<c8' is not ..."
// Offsets inside an .npz entry count from the start of the entry's
// (uncompressed) data; errors libzip reports about the archive itself carry
// its message and no offset. Every size read from a file is checked before
// it is used, so a hostile or truncated file is an error, never a crash or
// a huge allocation.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_SUPPORT_WEIGHTS_WEIGHTFILES_H
#define DLC_SUPPORT_WEIGHTS_WEIGHTFILES_H

#include "support/HostTensor.h"

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace dlc::weights {

/// What a file says about an array without reading its data.
struct TensorHeader {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  int64_t numel() const;
};

// ---- .npy ------------------------------------------------------------------
/// Fortran-order and big-endian arrays are converted to row-major
/// little-endian.
bool readNpy(const std::string &path, HostTensor &out, std::string &error);
/// An in-memory .npy image; `name` stands for the file in error messages.
bool readNpyBuffer(const uint8_t *data, size_t size, const std::string &name,
                   HostTensor &out, std::string &error);
/// Writes npy v1.0 (v2.0 if the header would not fit in 64 KiB), as
/// np.save does; bf16 is rejected because NumPy has no bfloat16.
bool writeNpy(const std::string &path, const HostTensor &tensor,
              std::string &error);
/// The .npy image writeNpy writes.
bool encodeNpy(const HostTensor &tensor, std::vector<uint8_t> &out,
               std::string &error);

// ---- .npz ------------------------------------------------------------------
/// Keys are the entry names without ".npy".
bool readNpz(const std::string &path, std::map<std::string, HostTensor> &out,
             std::string &error);
/// Stored as np.savez writes entries, or deflated as np.savez_compressed.
enum class NpzCompression { Stored, Deflated };
bool writeNpz(const std::string &path,
              const std::map<std::string, HostTensor> &tensors,
              std::string &error,
              NpzCompression compression = NpzCompression::Stored);

// ---- .safetensors ----------------------------------------------------------
/// The header's "__metadata__" object: a map of strings to strings.
using SafetensorsMetadata = std::map<std::string, std::string>;

/// With `metadata`, also returns the header's "__metadata__" (empty when the
/// file has none).
bool readSafetensors(const std::string &path,
                     std::map<std::string, HostTensor> &out,
                     std::string &error,
                     SafetensorsMetadata *metadata = nullptr);
/// Keys sorted, tensors laid out in key order, header padded with spaces to
/// a multiple of 8 bytes (as the reference implementation does). A non-empty
/// `metadata` is written as "__metadata__", first in the header.
bool writeSafetensors(const std::string &path,
                      const std::map<std::string, HostTensor> &tensors,
                      std::string &error,
                      const SafetensorsMetadata *metadata = nullptr);

// ---- any of them, by extension -----------------------------------------------
/// The dtype and shape of one array, without reading its data (the file
/// must still be long enough to hold it). `key` names the array in an .npz
/// or .safetensors archive and must be empty for .npy.
bool readHeader(const std::string &path, const std::string &key,
                TensorHeader &out, std::string &error);
/// One array; from an archive, only the requested entry is read.
bool readArray(const std::string &path, const std::string &key,
               HostTensor &out, std::string &error);

} // namespace dlc::weights

#endif // DLC_SUPPORT_WEIGHTS_WEIGHTFILES_H
