//===- Idx.h - MNIST-style IDX files and folders ----------------*- C++ -*-===//
//
// The IDX format of MNIST and Fashion-MNIST: two zero bytes, a type code
// (0x08 u8, 0x09 i8, 0x0C i32, 0x0D f32, 0x0E f64; 0x0B i16 has no dlc
// dtype), the number of dimensions, each dimension as a big-endian u32,
// then the elements, big-endian, row-major. A file may be gzip-compressed
// (`.gz`, read through zlib); byte offsets in messages then count in the
// decompressed data.
//
// A folder holds a training set, `train-images-idx3-ubyte` and
// `train-labels-idx1-ubyte`, and an evaluation set, `t10k-images-idx3-ubyte`
// and `t10k-labels-idx1-ubyte`, each file with or without `.gz`.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_DRIVER_DATA_IDX_H
#define DLC_DRIVER_DATA_IDX_H

#include "driver/data/Dataset.h"

namespace dlc::data {

/// One IDX file, as a tensor of its own dtype and shape. Errors name the
/// file and the byte offset: a bad magic number, an unsupported type code,
/// a truncated file, bytes past the data the header describes.
bool readIdx(const std::string &path, HostTensor &out, std::string &error);

enum class IdxSplit {
  /// train-images/train-labels
  Train,
  /// t10k-images/t10k-labels
  Test,
};

/// Whether `dir` holds both files of `split` (each with or without .gz).
bool hasIdxSplit(const std::string &dir, IdxSplit split);

/// The images and labels of `split` in `dir` as a dataset of two columns:
/// `images` first, `labels` second, whatever the order of the specs is in the
/// model. Images keep their file's u8 values and are reshaped per sample to
/// `images.shape` when the element counts agree (28x28 feeds 784 or
/// [1, 28, 28]); a float input takes each pixel as v / 255, a u8 input as it
/// is. Labels are converted to `labels.dtype`, which must be an integer
/// dtype with one value per sample (shape [] or [1]). The image and label
/// counts must agree.
bool loadIdxDataset(const std::string &dir, IdxSplit split,
                    const TensorSpec &images, const TensorSpec &labels,
                    Dataset &out, std::string &error);

/// `--data`/`--eval` as dlc train reads them: an IDX folder's `split` (for a
/// model of two inputs: images, labels) or an .npz file.
bool loadTrainingData(const std::string &path, IdxSplit split,
                      const std::vector<TensorSpec> &inputs, Dataset &out,
                      std::string &error);

/// Whether `path` is a folder (an IDX dataset) rather than a file.
bool isDatasetFolder(const std::string &path);

} // namespace dlc::data

#endif // DLC_DRIVER_DATA_IDX_H
