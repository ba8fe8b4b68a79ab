//===- ScalarFunctions.h - element-wise ops as C expressions ----*- C++ -*-===//
//
// The code generators' side of ElementwiseOpInterface: the C expression of
// each scalar function, by the name the op gives (`exp`, `add`, `lt`,
// `gelu_tanh`, ...). The oracle's table (oracle/kernels/ScalarFunctions.cpp)
// has the same names; an element-wise op needs an entry in both.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_CODEGEN_COMMON_SCALARFUNCTIONS_H
#define DLC_CODEGEN_COMMON_SCALARFUNCTIONS_H

#include "codegen/common/CTarget.h"
#include "runtime/format/module_generated.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace dlc::codegen {

/// The C expression of scalar function `name` applied to `args` (C
/// expressions of the compute type of `dtype`, the operands' dtype),
/// in the compute type of the result, unrounded. Nullopt for a name the
/// table does not know or a wrong number of arguments. A function that
/// checks its operands (scalarCheck) takes `check`: the trailing arguments
/// of its call, DataChecks::add's result and the element's position.
std::optional<std::string> scalarExpression(const CTarget &target,
                                            llvm::StringRef name,
                                            llvm::ArrayRef<std::string> args,
                                            DType dtype,
                                            const std::string &check = "");

/// The check scalar function `name` makes on operands of `dtype` (integer
/// div: the divisor; integer pow: the exponent), or `invalid` for none.
fb::CheckKind scalarCheck(llvm::StringRef name, DType dtype);

} // namespace dlc::codegen

#endif // DLC_CODEGEN_COMMON_SCALARFUNCTIONS_H
