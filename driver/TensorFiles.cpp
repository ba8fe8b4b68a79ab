//===- TensorFiles.cpp - `NAME=@file` arguments and tensor files ----------===//

#include "driver/TensorFiles.h"

#include "frontend/weights/ArrayFile.h"
#include "oracle/kernels/Kernels.h"

#include <cstdio>

namespace dlc {

using oracle::Tensor;

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

/// The dlc dtype of a file element type, if any.
static bool dtypeOf(weights::ElementType type, oracle::DType &out) {
  switch (type) {
  case weights::ElementType::F64: out = oracle::DType::F64; return true;
  case weights::ElementType::F32: out = oracle::DType::F32; return true;
  case weights::ElementType::F16: out = oracle::DType::F16; return true;
  case weights::ElementType::BF16: out = oracle::DType::BF16; return true;
  case weights::ElementType::I64: out = oracle::DType::I64; return true;
  case weights::ElementType::I32: out = oracle::DType::I32; return true;
  case weights::ElementType::Bool: out = oracle::DType::I1; return true;
  default: return false;
  }
}

static weights::ElementType fileType(oracle::DType dtype) {
  switch (dtype) {
  case oracle::DType::F64: return weights::ElementType::F64;
  case oracle::DType::F32: return weights::ElementType::F32;
  case oracle::DType::F16: return weights::ElementType::F16;
  case oracle::DType::BF16: return weights::ElementType::BF16;
  case oracle::DType::I64: return weights::ElementType::I64;
  case oracle::DType::I32: return weights::ElementType::I32;
  case oracle::DType::I1: return weights::ElementType::Bool;
  }
  return weights::ElementType::F32;
}

bool readTensorFile(const std::string &path, const std::string &name,
                    Tensor &out, std::string &error) {
  weights::Array array;
  std::string key = endsWith(path, ".npy") ? "" : name;
  if (!weights::readArray(path, key, array, error))
    return false;
  oracle::DType dtype;
  if (!dtypeOf(array.type, dtype)) {
    error = path + ": element type " + weights::elementTypeName(array.type) +
            " is not one dlc computes with (f64, f32, f16, bf16, i64, i32, bool)";
    return false;
  }
  out = Tensor::fromValues(dtype, array.shape, array.toDoubles());
  return true;
}

static weights::Array toArray(const Tensor &tensor) {
  return weights::Array::fromDoubles(fileType(tensor.dtype), tensor.shape,
                                     tensor.data);
}

bool writeTensorFile(const std::string &path, const std::string &name,
                     const Tensor &tensor, std::string &error) {
  if (endsWith(path, ".npy"))
    return weights::writeNpy(path, toArray(tensor), error);
  return writeTensorArchive(path, {{name, tensor}}, error);
}

bool writeTensorArchive(const std::string &path,
                        const std::map<std::string, Tensor> &tensors,
                        std::string &error) {
  bool npz = endsWith(path, ".npz");
  if (!npz && !endsWith(path, ".safetensors")) {
    error = "cannot write '" + path + "': use a .npz or .safetensors file";
    return false;
  }
  std::map<std::string, weights::Array> arrays;
  for (const auto &[name, tensor] : tensors) {
    if (npz && tensor.dtype == oracle::DType::BF16) {
      error = "cannot write '" + path + "': '" + name +
              "' is bf16, which .npz cannot hold (NumPy has no bfloat16); "
              "use a .safetensors file";
      return false;
    }
    arrays.emplace(name, toArray(tensor));
  }
  bool written = npz ? weights::writeNpz(path, arrays, error)
                     : weights::writeSafetensors(path, arrays, error);
  if (!written)
    std::remove(path.c_str()); // never leave a partial file behind
  return written;
}

} // namespace dlc
