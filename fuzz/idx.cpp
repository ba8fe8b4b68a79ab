//===- idx.cpp - Fuzz target: MNIST-style IDX files and folders -----------===//
//
// readIdx on the bytes as a file (plain or gzip: zlib tells by the bytes);
// then the bytes split in two, the images and the labels of a training
// split, go through loadIdxDataset, and a batch is gathered from what
// loads. The images are the bytes their own IDX header says (when the
// first bytes are a plain IDX header), the labels the rest; so a seed is an
// images file followed by a labels file.

#include "driver/data/Idx.h"
#include "fuzz/FuzzSupport.h"

using namespace dlc;

/// The length of the plain IDX file at the start of `data`, as its header
/// tells (clamped to `size`), or `size` when it is not one.
static size_t idxLength(const uint8_t *data, size_t size) {
  if (size < 4 || data[0] != 0 || data[1] != 0)
    return size;
  size_t elem = data[2] == 0x08 || data[2] == 0x09 ? 1
                : data[2] == 0x0B                 ? 2
                : data[2] == 0x0C || data[2] == 0x0D ? 4
                : data[2] == 0x0E                 ? 8
                                                  : 0;
  size_t rank = data[3];
  if (!elem || size < 4 + 4 * rank)
    return size;
  uint64_t total = 4 + 4 * rank, count = 1;
  for (size_t i = 0; i < rank; ++i) {
    const uint8_t *d = data + 4 + 4 * i;
    uint64_t dim = uint64_t(d[0]) << 24 | uint64_t(d[1]) << 16 | uint64_t(d[2]) << 8 | d[3];
    count *= dim;
    if (count > size)
      return size;
  }
  total += count * elem;
  return total < size ? size_t(total) : size;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string path = fuzz::writeScratch("fuzz-idx3-ubyte", data, size);
  HostTensor tensor;
  std::string error;
  if (!data::readIdx(path, tensor, error)) {
    if (error.empty())
      fuzz::contractBroken("readIdx failed without a message");
  } else if (tensor.byteSize() != size_t(tensor.numel()) * elementSize(tensor.dtype())) {
    fuzz::contractBroken("readIdx: the tensor's size does not match its shape");
  }

  size_t imagesSize = idxLength(data, size);
  std::string dir = fuzz::scratchDir() + "/idx";
  mkdir(dir.c_str(), 0700);
  fuzz::writeScratch("idx/train-images-idx3-ubyte", data, imagesSize);
  fuzz::writeScratch("idx/train-labels-idx1-ubyte", data + imagesSize, size - imagesSize);
  data::TensorSpec images{"x", DType::F32, {4}};
  data::TensorSpec labels{"label", DType::I32, {}};
  data::Dataset dataset;
  error.clear();
  if (!data::loadIdxDataset(dir, data::IdxSplit::Train, images, labels, dataset, error)) {
    if (error.empty())
      fuzz::contractBroken("loadIdxDataset failed without a message");
    return 0;
  }
  if (dataset.numSamples > 0)
    (void)data::gatherBatch(dataset, {0, dataset.numSamples - 1});
  return 0;
}
