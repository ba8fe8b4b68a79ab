//===- TensorFiles.h - `NAME=@file` arguments and tensor files --*- C++ -*-===//

#ifndef DLC_DRIVER_TENSORFILES_H
#define DLC_DRIVER_TENSORFILES_H

#include "support/HostTensor.h"

#include <map>
#include <string>

namespace dlc {

/// `x=@x.npy` split into name and path. Returns false with `error` set when
/// the argument has another form.
bool parseNamedFile(const std::string &argument, std::string &name,
                    std::string &path, std::string &error);

/// Reads a tensor from a .npy file, or from the entry `name` of a .npz or
/// .safetensors file. Any dtype dlc computes with is accepted as stored.
bool readTensorFile(const std::string &path, const std::string &name,
                    HostTensor &out, std::string &error);

/// Writes a tensor to .npy (or, for .npz/.safetensors, one entry `name`).
bool writeTensorFile(const std::string &path, const std::string &name,
                     const HostTensor &tensor, std::string &error);

/// Writes many named tensors to one .npz or .safetensors file.
bool writeTensorArchive(const std::string &path,
                        const std::map<std::string, HostTensor> &tensors,
                        std::string &error);

} // namespace dlc

#endif // DLC_DRIVER_TENSORFILES_H
