//===- DType.h - the element types of dlc and their encodings ---*- C++ -*-===//
//
// The one enum of element types: the dtypes of the IR, of weight files, of
// host tensors, of the oracle, of code generation and of the runtime (whose
// schema keeps a wire enum, fb::DType, converted where a module is read or
// written: runtime/format/ModuleFormat.h). With it the one f16/bf16 codec
// and `roundTo`, the value a double takes once stored in a dtype.
//
// Plain C++17 and libc, so that the runtime can link it.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_SUPPORT_DTYPE_H
#define DLC_SUPPORT_DTYPE_H

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace dlc {

/// i8 and u8 are data only (weights, images as stored): the IR moves and
/// casts them and computes with the others.
enum class DType { F64, F32, F16, BF16, I64, I32, I8, U8, I1 };

/// "f64", "f32", "f16", "bf16", "i64", "i32", "i8", "u8", "i1".
const char *dtypeName(DType dtype);
/// The names dtypeName gives, and "bool" (NumPy's name for i1).
std::optional<DType> parseDType(std::string_view name);
/// Bytes per element, in memory and in files; an i1 takes a whole byte.
size_t elementSize(DType dtype);
bool isFloat(DType dtype);
/// True for every integer dtype, i1 included.
bool isInteger(DType dtype);

/// IEEE binary16 and bfloat16, decoded exactly and encoded with
/// round-to-nearest-even directly from the double (no intermediate float,
/// so no double rounding): subnormals are kept, overflow becomes +-inf, NaN
/// stays NaN and the sign of zero is kept.
uint16_t toF16Bits(double value);
double fromF16Bits(uint16_t bits);
uint16_t toBF16Bits(double value);
double fromBF16Bits(uint16_t bits);

/// Converts a double to int64: NaN -> 0, truncation toward zero, saturating
/// at the int64 limits. Never has undefined behaviour.
int64_t toInt64(double value);

/// The value of `v` after conversion to `dtype`, as every result of the
/// oracle is rounded:
///  - F64: identity.  F32: (double)(float)v.
///  - F16: fromF16Bits(toF16Bits(v)); magnitudes >= 65520 become +-inf.
///  - BF16: v is rounded to float32 first, then to bfloat16 (both
///         round-to-nearest-even). Generated code computes bf16 ops in
///         float and converts the float, so the reference does the same;
///         this is the one place where that double rounding is wanted.
///  - I64, I32, I8, U8: toInt64(v), then (I32, I8, U8) wrapped modulo
///         2^32 or 2^8 to two's complement (U8: to [0, 255]). I64 results
///         beyond 2^53 are not exact as doubles.
///  - I1: v != 0 ? 1 : 0 (NaN counts as nonzero, i.e. true).
/// NaN stays NaN (the same double) for every float dtype.
double roundTo(DType dtype, double v);

} // namespace dlc

#endif // DLC_SUPPORT_DTYPE_H
