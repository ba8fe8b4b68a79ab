//===- Dataset.h - training data in host memory, by model input -*- C++ -*-===//
//
// A dataset is one column per model input, every column holding the same
// number of samples along its leading dimension. It comes from an `.npz`
// (arrays named after the inputs, their dtypes and per-sample shapes exactly
// the model's) or from an MNIST-style IDX folder (driver/data/Idx.h: images
// kept as u8 and scaled when a batch is built, labels converted when read).
// Plain C++17: no LLVM or MLIR.
//
// Loading checks everything against the specs the model gives and reports
// every mismatch at once, naming the file and the array:
//   "d.npz: array 'x' is f64[100, 4], the model expects f32[N, 4]"
//
//===----------------------------------------------------------------------===//

#ifndef DLC_DRIVER_DATA_DATASET_H
#define DLC_DRIVER_DATA_DATASET_H

#include "support/HostTensor.h"

#include <cstdint>
#include <string>
#include <vector>

namespace dlc::data {

/// A named tensor a model takes or keeps: an input of the loss graph (then
/// `shape` is per sample, without the leading batch dimension) or a state
/// tensor (then `shape` is the whole tensor's).
struct TensorSpec {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
};

/// "f32[N, 784]" for a per-sample spec (the batch dimension shown as N).
std::string describeBatched(const TensorSpec &spec);

/// How a column's stored elements become the model's when a batch is built.
enum class ColumnTransform {
  /// Stored as the model takes them: rows are copied.
  Copy,
  /// u8 stored, a float dtype taken: each value v becomes v / 255 (computed
  /// in double, then rounded to the dtype), so pixels lie in [0, 1].
  UnitScale,
};

/// One model input's samples.
struct Column {
  /// The model's input, shape per sample.
  TensorSpec spec;
  /// [samples, ...]: spec.shape's elements per sample, in `data`'s dtype
  /// (spec.dtype, or u8 under UnitScale); the shape after the leading
  /// dimension may differ from spec.shape (IDX images 28x28 feed 784).
  HostTensor data;
  ColumnTransform transform = ColumnTransform::Copy;
};

struct Dataset {
  /// Where it came from, for messages ("d.npz", "DIR (t10k)").
  std::string source;
  /// In the model's input order.
  std::vector<Column> columns;
  int64_t numSamples = 0;
};

/// Loads the arrays named after `specs` from an `.npz` file. Arrays the model
/// does not take are ignored. Every mismatch (missing array, dtype, shape,
/// sample counts that disagree) is reported in one message, one per line.
bool loadNpzDataset(const std::string &path,
                    const std::vector<TensorSpec> &specs, Dataset &out,
                    std::string &error);

/// Copies the listed samples, in order, into one new contiguous tensor per
/// column, of the column's spec.dtype and shape [indices.size(),
/// spec.shape...], applying the column's transform. Indices must be in
/// [0, numSamples).
std::vector<HostTensor> gatherBatch(const Dataset &dataset,
                                    const std::vector<int64_t> &indices);

} // namespace dlc::data

#endif // DLC_DRIVER_DATA_DATASET_H
