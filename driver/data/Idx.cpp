//===- Idx.cpp - MNIST-style IDX files and folders ------------------------===//
//
// Files are read through zlib's gz* functions, which read uncompressed
// files as they are, so one path handles both. Data is read in chunks and
// the buffer grows as bytes arrive: a header announcing more data than the
// file holds is a truncation error, never a huge allocation.
//
//===----------------------------------------------------------------------===//

#include "driver/data/Idx.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <sys/stat.h>

namespace dlc::data {

namespace {

/// A gzip or plain file read in order, counting decompressed bytes.
class IdxReader {
public:
  explicit IdxReader(std::string path) : path_(std::move(path)) {}
  ~IdxReader() {
    if (file_)
      gzclose(file_);
  }
  IdxReader(const IdxReader &) = delete;
  IdxReader &operator=(const IdxReader &) = delete;

  bool open(std::string &error) {
    struct stat st;
    errno = 0;
    if (::stat(path_.c_str(), &st) != 0 || S_ISDIR(st.st_mode)) {
      error = "cannot open '" + path_ + "': " +
              (errno ? std::strerror(errno) : "is a directory");
      return false;
    }
    file_ = gzopen(path_.c_str(), "rb");
    if (!file_) {
      error = "cannot open '" + path_ + "': " +
              std::strerror(errno ? errno : EIO);
      return false;
    }
    gzbuffer(file_, 1 << 17);
    return true;
  }

  /// Reads up to n bytes; returns how many were read, -1 on a zlib error.
  int64_t read(void *dst, size_t n) {
    size_t done = 0;
    while (done < n) {
      unsigned chunk = static_cast<unsigned>(std::min<size_t>(n - done, 1u << 30));
      int got = gzread(file_, static_cast<uint8_t *>(dst) + done, chunk);
      if (got < 0)
        return -1;
      if (got == 0)
        break;
      done += static_cast<size_t>(got);
    }
    offset_ += done;
    return static_cast<int64_t>(done);
  }

  /// zlib's message after a failed or short read ("" at a clean end).
  std::string zlibMessage() {
    int code = Z_OK;
    const char *message = gzerror(file_, &code);
    return code == Z_OK || code == Z_STREAM_END || !message ? "" : message;
  }

  uint64_t offset() const { return offset_; }
  const std::string &path() const { return path_; }

private:
  std::string path_;
  gzFile file_ = nullptr;
  uint64_t offset_ = 0;
};

std::string at(const std::string &path, const char *part, uint64_t offset,
               const std::string &message) {
  return path + ": " + part + " at byte " + std::to_string(offset) + ": " +
         message;
}

struct IdxType {
  uint8_t code;
  DType dtype;
};
const IdxType kTypes[] = {{0x08, DType::U8},  {0x09, DType::I8},
                          {0x0C, DType::I32}, {0x0D, DType::F32},
                          {0x0E, DType::F64}};

/// The file names of a split's images or labels, without ".gz".
std::string idxFileName(IdxSplit split, bool images) {
  std::string prefix = split == IdxSplit::Train ? "train" : "t10k";
  return prefix + (images ? "-images-idx3-ubyte" : "-labels-idx1-ubyte");
}

bool isRegularFile(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

/// The path of a split's images or labels in `dir`: the plain file if it
/// exists, else the .gz one; empty if neither does.
std::string findIdxFile(const std::string &dir, IdxSplit split, bool images) {
  std::string base = dir + (dir.empty() || dir.back() == '/' ? "" : "/") +
                     idxFileName(split, images);
  if (isRegularFile(base))
    return base;
  if (isRegularFile(base + ".gz"))
    return base + ".gz";
  return "";
}

} // namespace

bool readIdx(const std::string &path, HostTensor &out, std::string &error) {
  IdxReader reader(path);
  if (!reader.open(error))
    return false;
  auto readFailed = [&](const char *part, uint64_t offset, uint64_t wanted,
                        int64_t got, const std::string &what) {
    std::string z = reader.zlibMessage();
    if (!z.empty())
      error = at(path, part, offset, "cannot decompress: " + z);
    else
      error = at(path, part, offset,
                 "truncated: expected " + std::to_string(wanted) + " bytes of " +
                     what + ", the file ends after " +
                     std::to_string(std::max<int64_t>(got, 0)));
    return false;
  };
  uint8_t magic[4];
  int64_t got = reader.read(magic, 4);
  if (got != 4)
    return readFailed("IDX header", 0, 4, got, "magic number");
  char hex[16];
  std::snprintf(hex, sizeof hex, "0x%02x%02x%02x%02x", magic[0], magic[1],
                magic[2], magic[3]);
  if (magic[0] != 0 || magic[1] != 0) {
    error = at(path, "IDX header", 0,
               std::string("bad magic number ") + hex +
                   ": an IDX file starts with two zero bytes, a type code "
                   "and the number of dimensions");
    return false;
  }
  const IdxType *type = nullptr;
  for (const IdxType &t : kTypes)
    if (t.code == magic[2])
      type = &t;
  if (!type) {
    error = at(path, "IDX header", 2,
               "type code " + std::string(hex + 6, 2) +
                   " is not supported (0x08 u8, 0x09 i8, 0x0c i32, 0x0d f32, "
                   "0x0e f64)");
    return false;
  }
  if (magic[3] == 0) {
    error = at(path, "IDX header", 3, "the number of dimensions is 0");
    return false;
  }
  std::vector<int64_t> shape(magic[3]);
  for (size_t i = 0; i < shape.size(); ++i) {
    uint8_t b[4];
    uint64_t offset = reader.offset();
    got = reader.read(b, 4);
    if (got != 4)
      return readFailed("IDX header", offset, 4, got,
                        "dimension " + std::to_string(i));
    shape[i] = (int64_t(b[0]) << 24) | (int64_t(b[1]) << 16) |
               (int64_t(b[2]) << 8) | int64_t(b[3]);
  }
  int64_t numel;
  uint64_t numBytes;
  if (!checkedSizes(type->dtype, shape, numel, numBytes)) {
    error = at(path, "IDX header", 4,
               "shape " + formatShape(shape) + " is too large");
    return false;
  }
  uint64_t dataStart = reader.offset();
  std::vector<uint8_t> bytes;
  // Chunks from 64 KiB, doubling up to 16 MiB: a short file that declares
  // a large shape costs a small allocation before it is found truncated.
  constexpr uint64_t kFirstChunk = 64u << 10, kMaxChunk = 16u << 20;
  while (bytes.size() < numBytes) {
    uint64_t chunk = std::min<uint64_t>(std::max<uint64_t>(kFirstChunk, bytes.size()), kMaxChunk);
    size_t n = static_cast<size_t>(std::min<uint64_t>(chunk, numBytes - bytes.size()));
    size_t old = bytes.size();
    bytes.resize(old + n);
    got = reader.read(bytes.data() + old, n);
    if (got != static_cast<int64_t>(n)) {
      int64_t total = got < 0 ? got : static_cast<int64_t>(old) + got;
      return readFailed("data", dataStart, numBytes, total,
                        std::string(dtypeName(type->dtype)) + formatShape(shape));
    }
  }
  uint8_t extra;
  uint64_t end = reader.offset();
  got = reader.read(&extra, 1);
  if (got < 0) {
    error = at(path, "data", end, "cannot decompress: " + reader.zlibMessage());
    return false;
  }
  if (got > 0) {
    error = at(path, "data", end,
               "the file goes on past the " + std::to_string(numBytes) +
                   " bytes of " + dtypeName(type->dtype) + formatShape(shape) +
                   " its header describes");
    return false;
  }
  size_t width = elementSize(type->dtype);
  if (width > 1)
    for (size_t i = 0; i < bytes.size(); i += width)
      std::reverse(bytes.begin() + i, bytes.begin() + i + width);
  out = HostTensor(type->dtype, shape, std::move(bytes));
  return true;
}

bool hasIdxSplit(const std::string &dir, IdxSplit split) {
  return !findIdxFile(dir, split, true).empty() &&
         !findIdxFile(dir, split, false).empty();
}

bool loadIdxDataset(const std::string &dir, IdxSplit split,
                    const TensorSpec &images, const TensorSpec &labels,
                    Dataset &out, std::string &error) {
  std::string imagesPath = findIdxFile(dir, split, true);
  std::string labelsPath = findIdxFile(dir, split, false);
  for (auto [path, isImages] : {std::pair{imagesPath, true}, {labelsPath, false}})
    if (path.empty()) {
      std::string name = idxFileName(split, isImages);
      error = "cannot open '" + dir + "/" + name + "' (or " + name +
              ".gz): No such file or directory";
      return false;
    }
  HostTensor imageData, labelData;
  if (!readIdx(imagesPath, imageData, error) ||
      !readIdx(labelsPath, labelData, error))
    return false;

  // Images: [n, ...] with the model's per-sample element count.
  if (imageData.rank() < 2) {
    error = at(imagesPath, "IDX header", 3,
               "images need at least 2 dimensions (count, pixels...), the "
               "file has " + std::to_string(imageData.rank()));
    return false;
  }
  int64_t n = imageData.shape()[0];
  if (n == 0) {
    error = at(imagesPath, "IDX header", 4, "the file holds no images");
    return false;
  }
  std::vector<int64_t> sample(imageData.shape().begin() + 1, imageData.shape().end());
  int64_t perImage = imageData.numel() / n, expected = 1;
  for (int64_t d : images.shape)
    expected *= d;
  if (perImage != expected) {
    error = imagesPath + ": images are " + dtypeName(imageData.dtype()) +
            formatShape(sample) + " (" + std::to_string(perImage) +
            " values), the model's input '" + images.name + "' takes " +
            describeBatched(images) + " (" + std::to_string(expected) +
            " per sample)";
    return false;
  }
  ColumnTransform transform = ColumnTransform::Copy;
  if (imageData.dtype() == DType::U8 && isFloat(images.dtype))
    transform = ColumnTransform::UnitScale;
  else if (imageData.dtype() != images.dtype) {
    error = imagesPath + ": images are " + dtypeName(imageData.dtype()) +
            ", the model's input '" + images.name + "' takes " +
            describeBatched(images) +
            " (u8 images feed a float input, scaled to [0, 1], or a u8 one)";
    return false;
  }

  // Labels: [n], converted to the model's integer dtype.
  int64_t labelNumel = 1;
  for (int64_t d : labels.shape)
    labelNumel *= d;
  if (!isInteger(labels.dtype) || labels.dtype == DType::I1 || labelNumel != 1) {
    error = "the model's input '" + labels.name + "' (" +
            describeBatched(labels) +
            ") cannot take the labels of an IDX folder: they need an integer "
            "input with one value per sample";
    return false;
  }
  if (labelData.rank() != 1) {
    error = at(labelsPath, "IDX header", 3,
               "labels need 1 dimension, the file has " +
                   std::to_string(labelData.rank()));
    return false;
  }
  if (labelData.shape()[0] != n) {
    error = at(labelsPath, "IDX header", 4,
               std::to_string(labelData.shape()[0]) + " labels, but " +
                   imagesPath + " holds " + std::to_string(n) +
                   " images (its byte 4)");
    return false;
  }
  if (!isInteger(labelData.dtype())) {
    error = labelsPath + ": labels are " + dtypeName(labelData.dtype()) +
            ", not integers";
    return false;
  }
  std::vector<int64_t> labelShape = {n};
  labelShape.insert(labelShape.end(), labels.shape.begin(), labels.shape.end());
  HostTensor converted(labels.dtype, labelShape);
  for (int64_t i = 0; i < n; ++i)
    converted.setInt64(i, labelData.getInt64(i));

  Dataset dataset;
  dataset.source = dir + (split == IdxSplit::Train ? " (train)" : " (t10k)");
  dataset.numSamples = n;
  dataset.columns.push_back({images, std::move(imageData), transform});
  dataset.columns.push_back({labels, std::move(converted), ColumnTransform::Copy});
  out = std::move(dataset);
  return true;
}

bool isDatasetFolder(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool loadTrainingData(const std::string &path, IdxSplit split,
                      const std::vector<TensorSpec> &inputs, Dataset &out,
                      std::string &error) {
  if (!isDatasetFolder(path))
    return loadNpzDataset(path, inputs, out, error);
  if (inputs.size() != 2) {
    std::string names;
    for (const TensorSpec &spec : inputs)
      names += (names.empty() ? "" : ", ") + spec.name;
    error = path + " is an IDX folder, which feeds a model of two inputs "
                   "(images, labels); this one takes " +
            std::to_string(inputs.size()) + ": " + names;
    return false;
  }
  return loadIdxDataset(path, split, inputs[0], inputs[1], out, error);
}

} // namespace dlc::data
