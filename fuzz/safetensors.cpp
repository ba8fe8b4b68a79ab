//===- safetensors.cpp - Fuzz target: .safetensors files ------------------===//
//
// readSafetensors (with its metadata) on the bytes as a file; readHeader
// and readArray of each key must agree with it, and what it read writes
// and reads back.

#include "fuzz/FuzzSupport.h"
#include "support/weights/WeightFiles.h"

#include <cstring>

using namespace dlc;

static bool sameTensor(const HostTensor &a, const HostTensor &b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() && a.byteSize() == b.byteSize() &&
         fuzz::sameBytes(a.data(), b.data(), a.byteSize());
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string path = fuzz::writeScratch("fuzz.safetensors", data, size);
  std::map<std::string, HostTensor> tensors;
  weights::SafetensorsMetadata metadata;
  std::string error;
  if (!weights::readSafetensors(path, tensors, error, &metadata)) {
    if (error.empty())
      fuzz::contractBroken("readSafetensors failed without a message");
    // The header alone may still be asked for by key.
    weights::TensorHeader header;
    std::string headerError;
    if (!weights::readHeader(path, "w", header, headerError) && headerError.empty())
      fuzz::contractBroken("readHeader failed without a message");
    return 0;
  }
  for (const auto &[key, tensor] : tensors) {
    if (tensor.byteSize() != size_t(tensor.numel()) * elementSize(tensor.dtype()))
      fuzz::contractBroken("tensor '" + key + "': size does not match its shape");
    weights::TensorHeader header;
    if (!weights::readHeader(path, key, header, error))
      fuzz::contractBroken("readHeader('" + key + "') fails where readSafetensors read it: " +
                           error);
    if (header.dtype != tensor.dtype() || header.shape != tensor.shape())
      fuzz::contractBroken("readHeader('" + key + "') disagrees with readSafetensors");
    HostTensor one;
    if (!weights::readArray(path, key, one, error))
      fuzz::contractBroken("readArray('" + key + "') fails where readSafetensors read it: " +
                           error);
    if (!sameTensor(one, tensor))
      fuzz::contractBroken("readArray('" + key + "') disagrees with readSafetensors");
  }
  std::string out = fuzz::scratchDir() + "/again.safetensors";
  if (!weights::writeSafetensors(out, tensors, error, &metadata))
    return 0;
  std::map<std::string, HostTensor> again;
  weights::SafetensorsMetadata againMetadata;
  if (!weights::readSafetensors(out, again, error, &againMetadata))
    fuzz::contractBroken("a written .safetensors does not read back: " + error);
  if (again.size() != tensors.size() || againMetadata != metadata)
    fuzz::contractBroken("a written .safetensors reads back different");
  for (const auto &[key, tensor] : tensors)
    if (!again.count(key) || !sameTensor(again.at(key), tensor))
      fuzz::contractBroken("a written .safetensors reads back '" + key + "' different");
  return 0;
}
