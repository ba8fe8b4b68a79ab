//===- TensorFiles.cpp - `NAME=@file` arguments and tensor files ----------===//

#include "driver/TensorFiles.h"

#include "support/weights/WeightFiles.h"

#include <cstdio>

namespace dlc {

static bool endsWith(const std::string &s, const std::string &suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool parseNamedFile(const std::string &argument, std::string &name,
                    std::string &path, std::string &error) {
  size_t eq = argument.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 >= argument.size() ||
      argument[eq + 1] != '@' || eq + 2 >= argument.size()) {
    error = "expected NAME=@FILE (e.g. x=@x.npy), got '" + argument + "'";
    return false;
  }
  name = argument.substr(0, eq);
  path = argument.substr(eq + 2);
  return true;
}

bool readTensorFile(const std::string &path, const std::string &name,
                    HostTensor &out, std::string &error) {
  std::string key = endsWith(path, ".npy") ? "" : name;
  if (!weights::readArray(path, key, out, error))
    return false;
  return true;
}

bool writeTensorFile(const std::string &path, const std::string &name,
                     const HostTensor &tensor, std::string &error) {
  if (endsWith(path, ".npy"))
    return weights::writeNpy(path, tensor, error);
  return writeTensorArchive(path, {{name, tensor}}, error);
}

bool writeTensorArchive(const std::string &path,
                        const std::map<std::string, HostTensor> &tensors,
                        std::string &error) {
  bool npz = endsWith(path, ".npz");
  if (!npz && !endsWith(path, ".safetensors")) {
    error = "cannot write '" + path + "': use a .npz or .safetensors file";
    return false;
  }
  for (const auto &[name, tensor] : tensors) {
    if (npz && tensor.dtype() == DType::BF16) {
      error = "cannot write '" + path + "': '" + name +
              "' is bf16, which .npz cannot hold (NumPy has no bfloat16); "
              "use a .safetensors file";
      return false;
    }
  }
  bool written = npz ? weights::writeNpz(path, tensors, error)
                     : weights::writeSafetensors(path, tensors, error);
  if (!written)
    std::remove(path.c_str()); // never leave a partial file behind
  return written;
}

} // namespace dlc
