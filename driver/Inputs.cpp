//===- Inputs.cpp - a model's inputs from the command line ----------------===//

#include "driver/Inputs.h"

#include "driver/DriverSupport.h"
#include "driver/TensorFiles.h"
#include "support/HostTensor.h"
#include "support/Init.h"

#include "llvm/ADT/STLExtras.h"

#include <unistd.h>

#include <cmath>

namespace dlc {

ExitCode parseNamedFiles(mlir::MLIRContext &context, const std::vector<std::string> &arguments,
                         const char *flag, std::map<std::string, std::string> &out) {
  for (const std::string &argument : arguments) {
    std::string name, path, error;
    if (!parseNamedFile(argument, name, path, error))
      return fail(context, kExitBadInput, std::string("--") + flag + ": " + error);
    if (!out.emplace(name, path).second)
      return fail(context, kExitBadInput,
                  std::string("--") + flag + " " + name + " is given twice");
  }
  return kExitSuccess;
}

ExitCode readInputFiles(mlir::MLIRContext &context, const InputOptions &options,
                        std::map<std::string, oracle::Tensor> &given) {
  std::map<std::string, std::string> files;
  if (ExitCode code = parseNamedFiles(context, options.files, "input", files))
    return code;
  for (auto &[name, path] : files) {
    HostTensor tensor;
    std::string error;
    if (!readTensorFile(path, name, tensor, error))
      return fail(context, kExitBadInput, "--input " + name + ": " + error);
    given.emplace(name, oracle::Tensor::fromHost(tensor));
  }
  return kExitSuccess;
}

oracle::Tensor randomTensor(DType dtype, const std::vector<int64_t> &shape, uint64_t seed,
                            unsigned stream) {
  SplitMix64 rng(seed * 1000003ull + stream);
  std::vector<double> values(oracle::shapeNumel(shape));
  for (double &v : values) {
    if (isFloat(dtype))
      v = rng.normal();
    else if (dtype == DType::I1)
      v = rng.uniform() < 0.5 ? 0 : 1;
    else
      v = std::floor(rng.uniform() * 10);
  }
  return oracle::Tensor::fromValues(dtype, shape, std::move(values));
}

ExitCode assembleInputs(mlir::MLIRContext &context, const std::vector<ModuleTensorInfo> &specs,
                        const std::map<std::string, oracle::Tensor> &given,
                        const InputOptions &options, bool randomByDefault,
                        const std::string &what, std::vector<oracle::Tensor> &inputs) {
  for (auto &[name, tensor] : given)
    if (llvm::none_of(specs, [&](const ModuleTensorInfo &s) { return s.name == name; })) {
      std::string names;
      for (const ModuleTensorInfo &s : specs)
        names += (names.empty() ? "" : ", ") + s.name;
      return fail(context, kExitBadInput,
                  "--input " + name + ": " + what + " has no input named '" + name +
                      "' (its inputs: " + (names.empty() ? "none" : names) + ")");
    }
  bool random = options.random || (randomByDefault && given.empty());
  std::string missing;
  for (const ModuleTensorInfo &spec : specs)
    if (!given.count(spec.name))
      missing += (missing.empty() ? "" : ", ") + spec.name + " (" + dtypeName(spec.dtype) +
                 formatShape(spec.shape) + ")";
  if (!missing.empty() && !random)
    return fail(context, kExitBadInput,
                given.empty()
                    ? "no inputs given; " + what + " takes " + missing +
                          ": give each with --input NAME=@FILE, or --random-inputs "
                          "for seeded random values (--seed S)"
                    : "--input does not give " + missing +
                          ": give every input, or add --random-inputs to generate the "
                          "ones not given");
  // Generated values are held as doubles first: a size the machine cannot
  // hold is refused, naming the input, before anything is allocated.
  const double memory = double(sysconf(_SC_PHYS_PAGES)) * double(sysconf(_SC_PAGE_SIZE));
  for (const ModuleTensorInfo &spec : specs) {
    if (given.count(spec.name))
      continue;
    double bytes = 8;
    for (int64_t d : spec.shape)
      bytes *= double(d);
    if (memory > 0 && bytes > memory)
      return fail(context, kExitRuntimeFault,
                  "input " + spec.name + " (" + dtypeName(spec.dtype) + formatShape(spec.shape) +
                      ") would need " + std::to_string(uint64_t(bytes)) +
                      " bytes to generate, more than this machine's " +
                      std::to_string(uint64_t(memory)) + " bytes of memory");
  }
  inputs.clear();
  for (auto [i, spec] : llvm::enumerate(specs)) {
    auto found = given.find(spec.name);
    if (found == given.end()) {
      inputs.push_back(randomTensor(spec.dtype, spec.shape, options.seed, i));
      continue;
    }
    if (found->second.dtype != spec.dtype || found->second.shape != spec.shape)
      return fail(context, kExitBadInput,
                  "--input " + spec.name + ": the file holds " + dtypeName(found->second.dtype) +
                      formatShape(found->second.shape) + ", " + what + " expects " +
                      dtypeName(spec.dtype) + formatShape(spec.shape));
    inputs.push_back(found->second);
  }
  return kExitSuccess;
}

} // namespace dlc
