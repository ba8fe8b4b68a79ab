//===- npy.cpp - Fuzz target: NumPy .npy files ----------------------------===//
//
// readNpyBuffer on the bytes, readHeader and readArray on them as a file;
// what reads must agree with its header and survive a write and a re-read.

#include "fuzz/FuzzSupport.h"
#include "support/weights/WeightFiles.h"

#include <cstring>

using namespace dlc;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  HostTensor tensor;
  std::string error;
  bool ok = weights::readNpyBuffer(data, size, "fuzz.npy", tensor, error);
  if (!ok && error.empty())
    fuzz::contractBroken("readNpyBuffer failed without a message");
  std::string path = fuzz::writeScratch("fuzz.npy", data, size);
  weights::TensorHeader header;
  std::string headerError;
  bool headerOk = weights::readHeader(path, "", header, headerError);
  if (!headerOk && headerError.empty())
    fuzz::contractBroken("readHeader failed without a message");
  HostTensor fromFile;
  std::string fileError;
  bool fileOk = weights::readArray(path, "", fromFile, fileError);
  if (!fileOk && fileError.empty())
    fuzz::contractBroken("readArray failed without a message");
  if (ok != fileOk)
    fuzz::contractBroken("readNpyBuffer and readArray disagree: " + error + " / " + fileError);
  if (!ok)
    return 0;
  if (tensor.byteSize() != size_t(tensor.numel()) * elementSize(tensor.dtype()))
    fuzz::contractBroken("the tensor's size does not match its shape");
  if (!headerOk || header.dtype != tensor.dtype() || header.shape != tensor.shape())
    fuzz::contractBroken("readHeader disagrees with readNpyBuffer: " + headerError);
  if (fromFile.byteSize() != tensor.byteSize() ||
      !fuzz::sameBytes(fromFile.data(), tensor.data(), tensor.byteSize()))
    fuzz::contractBroken("readArray and readNpyBuffer read different values");
  // What was read writes and reads back the same (bf16 is not writable).
  std::vector<uint8_t> encoded;
  if (!weights::encodeNpy(tensor, encoded, error))
    return 0;
  HostTensor again;
  if (!weights::readNpyBuffer(encoded.data(), encoded.size(), "again.npy", again, error))
    fuzz::contractBroken("a written .npy does not read back: " + error);
  if (again.dtype() != tensor.dtype() || again.shape() != tensor.shape() ||
      !fuzz::sameBytes(again.data(), tensor.data(), tensor.byteSize()))
    fuzz::contractBroken("a written .npy reads back different");
  return 0;
}
