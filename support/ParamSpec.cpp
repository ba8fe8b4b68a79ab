//===- ParamSpec.cpp - where a parameter's value comes from ---------------===//

#include "support/ParamSpec.h"

#include "support/weights/WeightFiles.h"

namespace dlc {

bool materializeParam(const ParamSpec &spec, DType dtype,
                      const std::vector<int64_t> &shape, HostTensor &out,
                      std::string &error) {
  int64_t numel = 0;
  uint64_t numBytes = 0;
  if (!checkedSizes(dtype, shape, numel, numBytes)) {
    error = std::string("invalid parameter shape ") + dtypeName(dtype) +
            formatShape(shape);
    return false;
  }
  switch (spec.source) {
  case ParamSpec::Source::Initialiser:
    out = initParam(spec.init, spec.options, dtype, shape);
    return true;
  case ParamSpec::Source::Data:
    if (spec.data.size() != numBytes) {
      error = "parameter data holds " + std::to_string(spec.data.size()) +
              " bytes, " + std::to_string(numBytes) + " expected";
      return false;
    }
    out = HostTensor(dtype, shape, spec.data);
    return true;
  case ParamSpec::Source::File: {
    HostTensor value;
    if (!weights::readArray(spec.path, spec.key, value, error))
      return false;
    if (value.dtype() != dtype || value.shape() != shape) {
      error = "the file holds " + std::string(dtypeName(value.dtype())) +
              formatShape(value.shape()) + ", expected " + dtypeName(dtype) +
              formatShape(shape);
      return false;
    }
    out = std::move(value);
    return true;
  }
  }
  return false;
}

} // namespace dlc
