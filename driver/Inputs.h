//===- Inputs.h - a model's inputs from the command line --------*- C++ -*-===//
//
// run, bench, profile and verify take a model's inputs the same way: each
// from a file (`--input NAME=@FILE`, whose shape binds symbolic dimensions),
// or all seeded random (`--random-inputs`). A model is never silently given
// random values for an input the user forgot: a mix needs --random-inputs.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_DRIVER_INPUTS_H
#define DLC_DRIVER_INPUTS_H

#include "driver/Commands.h"
#include "driver/ModuleRunner.h"
#include "oracle/kernels/Tensor.h"

#include <map>

namespace dlc {

/// Splits `NAME=@file` arguments of `--flag` into a map, reporting the first
/// bad one (exit 2).
ExitCode parseNamedFiles(mlir::MLIRContext &context, const std::vector<std::string> &arguments,
                         const char *flag, std::map<std::string, std::string> &out);

/// Reads every `--input` file, by input name.
ExitCode readInputFiles(mlir::MLIRContext &context, const InputOptions &options,
                        std::map<std::string, oracle::Tensor> &given);

/// The inputs in signature order: the given ones, checked against `specs`
/// (dtype, shape, no unknown name), the others seeded random when
/// `options.random` (or `randomByDefault` and no file is given at all: bench
/// and profile, whose times do not depend on the values); else exit 2
/// naming the inputs missing. `what` is "the module" or "the graph".
ExitCode assembleInputs(mlir::MLIRContext &context, const std::vector<ModuleTensorInfo> &specs,
                        const std::map<std::string, oracle::Tensor> &given,
                        const InputOptions &options, bool randomByDefault,
                        const std::string &what, std::vector<oracle::Tensor> &inputs);

/// A seeded random tensor: standard normal floats, integers in [0, 10),
/// booleans with probability 1/2; `stream` separates the inputs.
oracle::Tensor randomTensor(DType dtype, const std::vector<int64_t> &shape, uint64_t seed,
                            unsigned stream);

} // namespace dlc

#endif // DLC_DRIVER_INPUTS_H
