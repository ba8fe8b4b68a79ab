//===- Internal.h - shared by the weight file formats' sources ---*- C++ -*-===//
//
// Error formatting, bounds-checked file reading and the .npy image parser
// (which .npz entries use too). Not part of the library's interface.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_SUPPORT_WEIGHTS_INTERNAL_H
#define DLC_SUPPORT_WEIGHTS_INTERNAL_H

#include "support/weights/WeightFiles.h"

#include <cstdio>

namespace dlc::weights::detail {

/// "<name>: <part> at byte <offset>: <message>".
std::string formatError(const std::string &name, const std::string &part,
                        uint64_t offset, const std::string &message);
/// A shape as a Python tuple, as NumPy writes it: "(2, 3)", "(5,)", "()".
std::string tupleString(const std::vector<int64_t> &shape);
/// "the keys are: 'a', 'b', ... (N in total)".
std::string listKeys(const std::vector<std::string> &keys);

/// A file read at checked offsets.
class InputFile {
public:
  InputFile() = default;
  ~InputFile();
  InputFile(const InputFile &) = delete;
  InputFile &operator=(const InputFile &) = delete;
  /// "cannot open 'w.npy': No such file or directory".
  bool open(const std::string &path, std::string &error);
  uint64_t size() const { return size_; }
  const std::string &path() const { return path_; }
  /// Reads exactly n bytes at offset; a range past the end is an error.
  bool readAt(uint64_t offset, size_t n, void *dst, std::string &error);

private:
  std::FILE *file_ = nullptr;
  uint64_t size_ = 0;
  std::string path_;
};

/// "cannot create 'x': ..." / "cannot write 'x': ..." on failure.
bool writeWholeFile(const std::string &path, const std::vector<uint8_t> &bytes,
                    std::string &error);

// ---- .npy images -------------------------------------------------------------

struct NpyInfo {
  TensorHeader header;
  bool fortranOrder = false;
  bool bigEndian = false;
  uint64_t dataOffset = 0; // from the start of the image
  uint64_t dataBytes = 0;
};
/// From the image's first min(totalSize, 12) bytes: checks the magic and
/// version and returns the end of the header (the data offset), checked
/// against the image's `totalSize`.
bool npyHeaderEnd(const uint8_t *data, size_t avail, uint64_t totalSize,
                  const std::string &name, uint64_t &headerEnd,
                  std::string &error);
/// From the image's bytes up to the header end: parses the header dict and
/// checks that the image has exactly dataOffset + dataBytes bytes.
bool parseNpyHeader(const uint8_t *data, size_t avail, uint64_t totalSize,
                    const std::string &name, NpyInfo &info, std::string &error);
/// The data the header describes (byte-swapped, Fortran order transposed).
HostTensor decodeNpyData(const NpyInfo &info, const uint8_t *data);
/// The header of the .npy image of `tensor` (its data follows it).
bool encodeNpyHeader(const HostTensor &tensor, std::vector<uint8_t> &out,
                     std::string &error);

// ---- what readHeader and readArray dispatch to --------------------------------

bool readNpyHeader(const std::string &path, TensorHeader &out,
                   std::string &error);
bool readNpzEntry(const std::string &path, const std::string &key,
                  HostTensor &out, std::string &error);
bool readNpzHeader(const std::string &path, const std::string &key,
                   TensorHeader &out, std::string &error);
bool readSafetensorsTensor(const std::string &path, const std::string &key,
                           HostTensor &out, std::string &error);
bool readSafetensorsHeader(const std::string &path, const std::string &key,
                           TensorHeader &out, std::string &error);

} // namespace dlc::weights::detail

#endif // DLC_SUPPORT_WEIGHTS_INTERNAL_H
