//===- CTarget.cpp - the parts of a C-like target both targets share ------===//

#include "codegen/common/CTarget.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

using namespace dlc::codegen;

ElemKind dlc::codegen::elemKindOf(mlir::Type type) {
  if (type.isF64()) return ElemKind::F64;
  if (type.isF32()) return ElemKind::F32;
  if (type.isF16()) return ElemKind::F16;
  if (type.isBF16()) return ElemKind::BF16;
  if (type.isInteger(64)) return ElemKind::I64;
  if (type.isInteger(32)) return ElemKind::I32;
  if (type.isInteger(1)) return ElemKind::I1;
  llvm::report_fatal_error("codegen: unsupported element type");
}

bool dlc::codegen::isFloatKind(ElemKind kind) {
  return kind == ElemKind::F64 || kind == ElemKind::F32 ||
         kind == ElemKind::F16 || kind == ElemKind::BF16;
}

int64_t dlc::codegen::elemBytes(ElemKind kind) {
  switch (kind) {
  case ElemKind::F64: case ElemKind::I64: return 8;
  case ElemKind::F32: case ElemKind::I32: return 4;
  case ElemKind::F16: case ElemKind::BF16: return 2;
  case ElemKind::I1: return 1;
  }
  llvm_unreachable("bad kind");
}

const char *dlc::codegen::elemKindName(ElemKind kind) {
  switch (kind) {
  case ElemKind::F64: return "f64";
  case ElemKind::F32: return "f32";
  case ElemKind::F16: return "f16";
  case ElemKind::BF16: return "bf16";
  case ElemKind::I64: return "i64";
  case ElemKind::I32: return "i32";
  case ElemKind::I1: return "i1";
  }
  llvm_unreachable("bad kind");
}

CTarget::~CTarget() = default;

std::string CTarget::computeType(ElemKind kind) const {
  switch (kind) {
  case ElemKind::F64: return "double";
  case ElemKind::F32: case ElemKind::F16: case ElemKind::BF16: return "float";
  case ElemKind::I64: case ElemKind::I32: return "int64_t";
  case ElemKind::I1: return "bool";
  }
  llvm_unreachable("bad kind");
}

std::string CTarget::load(ElemKind kind, llvm::StringRef stored) const {
  switch (kind) {
  case ElemKind::F16: return ("(float)" + stored).str();
  case ElemKind::BF16: return ("dlc_bf16_to_float(" + stored + ")").str();
  case ElemKind::I32: return ("(int64_t)" + stored).str();
  case ElemKind::I1: return ("(" + stored + " != 0)").str();
  default: return stored.str();
  }
}

std::string CTarget::store(ElemKind kind, llvm::StringRef value) const {
  switch (kind) {
  case ElemKind::F16: return ("(" + storageType(kind) + ")(" + value + ")").str();
  case ElemKind::BF16: return ("dlc_float_to_bf16(" + value + ")").str();
  case ElemKind::I32: return ("(int32_t)(uint32_t)(uint64_t)(" + value + ")").str();
  case ElemKind::I1: return ("(uint8_t)(" + value + ")").str();
  default: return value.str();
  }
}

std::string CTarget::round(ElemKind kind, llvm::StringRef value) const {
  switch (kind) {
  case ElemKind::F16:
  case ElemKind::BF16:
  case ElemKind::I32:
    return load(kind, store(kind, value));
  default:
    return value.str();
  }
}

std::string CTarget::math(llvm::StringRef function, ElemKind kind) const {
  // C's float variants (expf, tanhf, ...) for everything computed in float.
  if (computeType(kind) == "float")
    return (function + "f").str();
  return function.str();
}

std::string CTarget::literal(ElemKind kind, double value) const {
  std::string type = computeType(kind);
  if (kind == ElemKind::I1)
    return value != 0 ? "true" : "false";
  if (!isFloatKind(kind))
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
