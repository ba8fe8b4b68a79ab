//===- TensorFiles.h - `NAME=@file` arguments and tensor files --*- C++ -*-===//

#ifndef DLC_DRIVER_TENSORFILES_H
#define DLC_DRIVER_TENSORFILES_H

#include "oracle/kernels/Tensor.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace dlc {

/// `x=@x.npy` split into name and path. Returns false with `error` set when
/// the argument has another form.
bool parseNamedFile(const std::string &argument, std::string &name,
                    std::string &path, std::string &error);

/// Reads a tensor from a .npy file, or from the entry `name` of a .npz or
/// .safetensors file. Any dtype dlc knows is accepted as stored.
bool readTensorFile(const std::string &path, const std::string &name,
                    oracle::Tensor &out, std::string &error);

/// Writes a tensor to .npy (or, for .npz/.safetensors, one entry `name`).
bool writeTensorFile(const std::string &path, const std::string &name,
                     const oracle::Tensor &tensor, std::string &error);

/// Writes many named tensors to one .npz or .safetensors file.
bool writeTensorArchive(const std::string &path,
                        const std::map<std::string, oracle::Tensor> &tensors,
                        std::string &error);

} // namespace dlc

#endif // DLC_DRIVER_TENSORFILES_H
