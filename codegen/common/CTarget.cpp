//===- CTarget.cpp - the parts of a C-like target both targets share ------===//

#include "codegen/common/CTarget.h"

#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

using namespace dlc;
using namespace dlc::codegen;

CTarget::~CTarget() = default;

std::string CTarget::computeType(DType dtype) const {
  switch (dtype) {
  case DType::F64: return "double";
  case DType::F32: case DType::F16: case DType::BF16: return "float";
  case DType::I64: case DType::I32: case DType::I8: case DType::U8:
    return "int64_t";
  case DType::I1: return "bool";
  }
  llvm_unreachable("invalid dtype");
}

std::string CTarget::load(DType dtype, llvm::StringRef stored) const {
  switch (dtype) {
  case DType::F16: return ("(float)" + stored).str();
  case DType::BF16: return ("dlc_bf16_to_float(" + stored + ")").str();
  case DType::I32: case DType::I8: case DType::U8:
    return ("(int64_t)" + stored).str();
  case DType::I1: return ("(" + stored + " != 0)").str();
  default: return stored.str();
  }
}

std::string CTarget::store(DType dtype, llvm::StringRef value) const {
  switch (dtype) {
  case DType::F16: return ("(" + storageType(dtype) + ")(" + value + ")").str();
  case DType::BF16: return ("dlc_float_to_bf16(" + value + ")").str();
  // Integers wrap modulo 2^bits (the oracle's roundTo): through the
  // unsigned type of the width, then its two's-complement reading.
  case DType::I32: return ("(int32_t)(uint32_t)(uint64_t)(" + value + ")").str();
  case DType::I8: return ("(int8_t)(uint8_t)(uint64_t)(" + value + ")").str();
  case DType::U8: return ("(uint8_t)(uint64_t)(" + value + ")").str();
  case DType::I1: return ("(uint8_t)(" + value + ")").str();
  default: return value.str();
  }
}

std::string CTarget::round(DType dtype, llvm::StringRef value) const {
  switch (dtype) {
  case DType::F16:
  case DType::BF16:
  case DType::I32:
  case DType::I8:
  case DType::U8:
    return load(dtype, store(dtype, value));
  default:
    return value.str();
  }
}

std::string CTarget::math(llvm::StringRef function, DType dtype) const {
  // C's float variants (expf, tanhf, ...) for everything computed in float.
  if (computeType(dtype) == "float")
    return (function + "f").str();
  return function.str();
}

std::string CTarget::literal(DType dtype, double value) const {
  std::string type = computeType(dtype);
  if (dtype == DType::I1)
    return value != 0 ? "true" : "false";
  if (!isFloat(dtype))
    return llvm::formatv("INT64_C({0})", (int64_t)value).str();
  if (std::isnan(value))
    return "(" + type + ")NAN";
  if (std::isinf(value))
    return value > 0 ? "(" + type + ")INFINITY" : "-(" + type + ")INFINITY";
  // The shortest decimal that reads back as the same value of the type.
  char text[64];
  bool single = type == "float";
  for (int digits = 1; digits <= 17; ++digits) {
    snprintf(text, sizeof text, "%.*g", digits, value);
    double back = strtod(text, nullptr);
    if (single ? (float)back == (float)value : back == value)
      break;
  }
  std::string literal = text;
  if (literal.find_first_of(".e") == std::string::npos)
    literal += ".0";
  return single ? literal + "f" : literal;
}
