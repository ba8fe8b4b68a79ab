//===- ArrayFile.h - .npy / .npz / .safetensors reading and writing -------===//
//
// A small, dependency-free (C++17 + zlib) library for the tensor file formats
// a deep-learning user brings along with a model: NumPy .npy, NumPy .npz (a
// ZIP archive of .npy files, stored or deflated, ZIP64 aware) and
// .safetensors.
//
// All data is held little-endian in C (row-major) order. Every function
// returns false and fills `error` on failure; messages name the file, the
// part of the file (npy header, zip central directory, entry 'w1.npy',
// safetensors header, tensor 'h.0.w', ...) and the byte offset of the
// problem. Every offset/size read from a file is checked against the file
// size before it is used, and all size arithmetic is overflow checked, so a
// hostile or truncated file yields an error, never a crash or a huge
// allocation.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

namespace dlc::weights {

enum class ElementType { F64, F32, F16, BF16, I64, I32, I8, U8, Bool }; // Bool is 1 byte

/// "f64","f32","f16","bf16","i64","i32","i8","u8","bool".
const char *elementTypeName(ElementType type);
/// Parses the names produced by elementTypeName.
bool parseElementTypeName(const std::string &name, ElementType &out);
size_t elementSize(ElementType type);

/// Exact half/bfloat16 decoding and round-to-nearest-even encoding (NaN stays
/// NaN, overflow becomes +-inf, underflow goes through the subnormals to +-0).
double halfBitsToDouble(uint16_t bits);
uint16_t doubleToHalfBits(double value);
double bf16BitsToDouble(uint16_t bits);
uint16_t doubleToBf16Bits(double value);

struct ArrayHeader {
  ElementType type = ElementType::F32;
  std::vector<int64_t> shape;
  int64_t numel() const;
};

struct Array {
  ElementType type = ElementType::F32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes; // little-endian, C order, numel*elementSize bytes

  int64_t numel() const; // product of shape (1 for 0-d)
  ArrayHeader header() const { return ArrayHeader{type, shape}; }
  /// f16/bf16 decoded exactly; i64 beyond 2^53 is rounded; bool is 0/1.
  std::vector<double> toDoubles() const;
  /// f32: nearest float; f16/bf16: round-to-nearest-even; integers: rounded
  /// to nearest, saturated to the type's range, NaN -> 0; bool: value != 0.
  /// Throws std::invalid_argument if values.size() != numel of `shape`
  /// (or the shape is invalid).
  static Array fromDoubles(ElementType type, std::vector<int64_t> shape,
                           const std::vector<double> &values);
};

// ---- .npy ------------------------------------------------------------------
bool readNpy(const std::string &path, Array &out, std::string &error);
/// `name` is used in error messages in place of a file name.
bool readNpyBuffer(const uint8_t *data, size_t size, const std::string &name, Array &out,
                   std::string &error);
/// Writes npy v1.0 (v2.0 if the header would not fit in 64 KiB); bf16 is
/// rejected because npy has no bf16 dtype.
bool writeNpy(const std::string &path, const Array &array, std::string &error);
/// Serializes to an in-memory .npy image.
bool encodeNpy(const Array &array, std::vector<uint8_t> &out, std::string &error);

// ---- .npz ------------------------------------------------------------------
/// Keys are the entry names without ".npy".
bool readNpz(const std::string &path, std::map<std::string, Array> &out, std::string &error);
/// Entries are stored (no compression) with CRC32; ZIP64 is used when needed.
bool writeNpz(const std::string &path, const std::map<std::string, Array> &arrays,
              std::string &error);

// ---- .safetensors ----------------------------------------------------------
bool readSafetensors(const std::string &path, std::map<std::string, Array> &out,
                     std::string &error);
/// Keys sorted, tensors laid out in key order, header padded with spaces to a
/// multiple of 8 bytes (as the reference implementation does).
bool writeSafetensors(const std::string &path, const std::map<std::string, Array> &arrays,
                      std::string &error);

// ---- generic ---------------------------------------------------------------
/// Metadata only, without reading the tensor data (still validates that the
/// file is long enough to hold it). `key` must be empty for .npy.
bool readHeader(const std::string &path, const std::string &key, ArrayHeader &out,
                std::string &error);
/// Reads one array; dispatches on the extension (.npy, .npz, .safetensors).
/// For .npz/.safetensors only the requested entry is read.
bool readArray(const std::string &path, const std::string &key, Array &out, std::string &error);

// ---- internals shared between the implementation files (and tests) --------
namespace detail {

/// "<name>: <part> at byte <offset>: <message>".
std::string formatError(const std::string &name, const std::string &part, uint64_t offset,
                        const std::string &message);
std::string shapeToString(const std::vector<int64_t> &shape);
/// Checked numel and byte count; false on negative dims or overflow.
bool checkedSizes(const std::vector<int64_t> &shape, ElementType type, int64_t &numel,
                  uint64_t &numBytes);
/// Error text "the keys are: 'a', 'b', ... (N in total)".
std::string listKeys(const std::vector<std::string> &keys);
/// True if the file name ends with `suffix` (case-sensitive).
bool endsWith(const std::string &s, const std::string &suffix);

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
  /// Reads exactly n bytes at offset; the range must have been checked
  /// against size() by the caller (it is re-checked here).
  bool readAt(uint64_t offset, size_t n, void *dst, std::string &error);

private:
  std::FILE *file_ = nullptr;
  uint64_t size_ = 0;
  std::string path_;
};

bool writeWholeFile(const std::string &path, const std::vector<uint8_t> &bytes,
                    std::string &error);

/// Parsed npy preamble + header.
struct NpyInfo {
  ArrayHeader header;
  bool fortranOrder = false;
  bool bigEndian = false;
  uint64_t dataOffset = 0; // relative to the start of the npy image
  uint64_t dataBytes = 0;
};
/// Needs min(totalSize, 12) bytes; validates magic and version and returns the
/// end of the header (= data offset), checked against totalSize.
bool npyHeaderEnd(const uint8_t *data, size_t avail, uint64_t totalSize, const std::string &name,
                  uint64_t base, uint64_t &headerEnd, std::string &error);
/// Needs the bytes up to headerEnd; parses the dict and checks that the image
/// has exactly dataOffset + dataBytes bytes. `base` is added to reported
/// offsets (position of the npy image inside the file).
bool parseNpyHeader(const uint8_t *data, size_t avail, uint64_t totalSize, const std::string &name,
                    uint64_t base, NpyInfo &info, std::string &error);
/// Converts the raw npy data (byte swap, Fortran -> C order) into `out`.
void decodeNpyData(const NpyInfo &info, const uint8_t *data, Array &out);
/// readNpyBuffer with reported offsets shifted by `base`.
bool readNpyBufferAt(const uint8_t *data, size_t size, const std::string &name, uint64_t base,
                     Array &out, std::string &error);

bool readNpzEntry(const std::string &path, const std::string &key, Array &out,
                  std::string &error);
bool readNpzHeader(const std::string &path, const std::string &key, ArrayHeader &out,
                   std::string &error);
/// Like writeNpz; forceZip64 writes ZIP64 extra fields and the ZIP64 end of
/// central directory records even when not needed (for testing).
bool writeNpzImpl(const std::string &path, const std::map<std::string, Array> &arrays,
                  bool forceZip64, std::string &error);

bool readSafetensorsTensor(const std::string &path, const std::string &key, Array &out,
                           std::string &error);
bool readSafetensorsHeader(const std::string &path, const std::string &key, ArrayHeader &out,
                           std::string &error);

} // namespace detail
} // namespace dlc::weights
