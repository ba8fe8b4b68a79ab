//===- ParamSpec.h - where a parameter's value comes from --------*- C++ -*-===//
//
// A parameter's value is drawn by an initialiser (support/Init.h), read from
// a weight file (support/weights/WeightFiles.h) or given inline. ParamSpec
// says which, in plain C++ (ir/ParamSpec.h builds one from a dlc.param op),
// and materializeParam makes the value, checked against the declared dtype
// and shape, so that the oracle, codegen and the driver agree bit for bit.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_SUPPORT_PARAMSPEC_H
#define DLC_SUPPORT_PARAMSPEC_H

#include "support/HostTensor.h"
#include "support/Init.h"

#include <map>
#include <string>
#include <vector>

namespace dlc {

struct ParamSpec {
  enum class Source { Initialiser, File, Data };
  Source source = Source::Initialiser;
  /// Initialiser: which one, and its mean, std, low, high and seed.
  InitKind init = InitKind::Zeros;
  InitOptions options;
  /// File: its path, and the key of the array in an .npz or .safetensors
  /// archive (empty for .npy).
  std::string path, key;
  /// Data: the value's bytes, little-endian and row-major, in the
  /// parameter's dtype (i1 one byte per element).
  std::vector<uint8_t> data;
};

/// Parameter values by name.
using ParamStore = std::map<std::string, HostTensor>;

/// The value of a `dtype` parameter of `shape` given by `spec`. A weight
/// file must hold exactly that dtype and shape (dlc does not convert weights
/// silently), inline data exactly its bytes. Returns false with `error` set
/// otherwise, or when the file cannot be read.
bool materializeParam(const ParamSpec &spec, DType dtype,
                      const std::vector<int64_t> &shape, HostTensor &out,
                      std::string &error);

} // namespace dlc

#endif // DLC_SUPPORT_PARAMSPEC_H
