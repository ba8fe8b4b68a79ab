//===- npz.cpp - Fuzz target: NumPy .npz archives -------------------------===//
//
// readNpz on the bytes as a file; for what it reads, readHeader and
// readArray of each key must agree, and the archive writes and reads back.
// Also loadNpzDataset with a model of two inputs, x and y.

#include "driver/data/Dataset.h"
#include "fuzz/FuzzSupport.h"
#include "support/weights/WeightFiles.h"

#include <cstring>

using namespace dlc;

static bool sameTensor(const HostTensor &a, const HostTensor &b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() && a.byteSize() == b.byteSize() &&
         fuzz::sameBytes(a.data(), b.data(), a.byteSize());
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string path = fuzz::writeScratch("fuzz.npz", data, size);
  std::map<std::string, HostTensor> tensors;
  std::string error;
  bool ok = weights::readNpz(path, tensors, error);
  if (!ok && error.empty())
    fuzz::contractBroken("readNpz failed without a message");

  data::Dataset dataset;
  std::string datasetError;
  std::vector<data::TensorSpec> specs = {{"x", DType::F32, {2}}, {"y", DType::I32, {}}};
  if (!data::loadNpzDataset(path, specs, dataset, datasetError) && datasetError.empty())
    fuzz::contractBroken("loadNpzDataset failed without a message");
  if (!dataset.columns.empty() && dataset.numSamples > 0)
    (void)data::gatherBatch(dataset, {0, dataset.numSamples - 1});

  if (!ok)
    return 0;
  for (const auto &[key, tensor] : tensors) {
    if (tensor.byteSize() != size_t(tensor.numel()) * elementSize(tensor.dtype()))
      fuzz::contractBroken("tensor '" + key + "': size does not match its shape");
    weights::TensorHeader header;
    if (!weights::readHeader(path, key, header, error))
      fuzz::contractBroken("readHeader('" + key + "') fails where readNpz read it: " + error);
    if (header.dtype != tensor.dtype() || header.shape != tensor.shape())
      fuzz::contractBroken("readHeader('" + key + "') disagrees with readNpz");
    HostTensor one;
    if (!weights::readArray(path, key, one, error))
      fuzz::contractBroken("readArray('" + key + "') fails where readNpz read it: " + error);
    if (!sameTensor(one, tensor))
      fuzz::contractBroken("readArray('" + key + "') disagrees with readNpz");
  }
  // Write and read back (bf16 has no .npy form: then writing fails).
  std::string out = fuzz::scratchDir() + "/again.npz";
  if (!weights::writeNpz(out, tensors, error, weights::NpzCompression::Deflated))
    return 0;
  std::map<std::string, HostTensor> again;
  if (!weights::readNpz(out, again, error))
    fuzz::contractBroken("a written .npz does not read back: " + error);
  if (again.size() != tensors.size())
    fuzz::contractBroken("a written .npz reads back a different number of arrays");
  for (const auto &[key, tensor] : tensors)
    if (!again.count(key) || !sameTensor(again.at(key), tensor))
      fuzz::contractBroken("a written .npz reads back '" + key + "' different");
  return 0;
}
