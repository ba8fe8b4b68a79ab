//===- ScalarFunctions.cpp - element-wise ops as C expressions ------------===//
//
// One entry per scalar function. Floats follow the oracle: NaN propagates
// through max/min/relu; integers wrap in two's complement (the compute
// type is int64_t; the result is wrapped to i32 when stored).
//
//===----------------------------------------------------------------------===//

#include "codegen/common/ScalarFunctions.h"

#include "llvm/ADT/StringMap.h"

#include <cmath>
#include <functional>

using namespace dlc;
using namespace dlc::codegen;

namespace {

/// What an entry sees: the operands' expressions and dtype, and the target
/// for math function names and literals.
struct Call {
  const CTarget &target;
  llvm::ArrayRef<std::string> args;
  DType dtype;
  /// For a function that checks its operands: the trailing C arguments of
  /// its dlc_* call ("dlc_status, <check>, <position>").
  const std::string &check;

  const std::string &x() const { return args[0]; }
  const std::string &a() const { return args[0]; }
  const std::string &b() const { return args[1]; }
  bool isFloat() const { return dlc::isFloat(dtype); }
  std::string fn(const char *name, const std::string &arg) const {
    return target.math(name, dtype) + "(" + arg + ")";
  }
  std::string lit(double v) const { return target.literal(dtype, v); }
  std::string sigmoid() const {
    std::string one = lit(1);
    return "(" + x() + " >= " + lit(0) + " ? " + one + " / (" + one + " + " +
           fn("exp", "-" + x()) + ") : " + fn("exp", x()) + " / (" + one +
           " + " + fn("exp", x()) + "))";
  }
  /// Two's-complement wrapping of an integer operation.
  std::string wrap(const char *sign) const {
    return "(int64_t)((uint64_t)" + a() + " " + sign + " (uint64_t)" + b() + ")";
  }
  /// NaN when either operand is NaN, else `pick`.
  std::string nanOr(const std::string &pick) const {
    return "(" + a() + " != " + a() + " || " + b() + " != " + b() + " ? " +
           lit(NAN) + " : " + pick + ")";
  }
};

struct Entry {
  unsigned arity;
  std::function<std::string(const Call &)> expression;
};

std::string compare(const Call &c, const char *op) {
  return c.a() + " " + op + " " + c.b();
}

const llvm::StringMap<Entry> &table() {
  static const llvm::StringMap<Entry> entries = {
      // Unary.
      {"abs", {1, [](const Call &c) {
         return c.isFloat() ? c.fn("fabs", c.x())
                            : "(" + c.x() + " < 0 ? -" + c.x() + " : " + c.x() + ")";
       }}},
      {"atan", {1, [](const Call &c) { return c.fn("atan", c.x()); }}},
      {"ceil", {1, [](const Call &c) { return c.fn("ceil", c.x()); }}},
      {"cos", {1, [](const Call &c) { return c.fn("cos", c.x()); }}},
      {"erf", {1, [](const Call &c) { return c.fn("erf", c.x()); }}},
      {"exp", {1, [](const Call &c) { return c.fn("exp", c.x()); }}},
      {"floor", {1, [](const Call &c) { return c.fn("floor", c.x()); }}},
      {"gelu", {1, [](const Call &c) {
         // 0.5 x (1 + erf(x / sqrt 2)) as 0.5 x erfc(-x / sqrt 2), the
         // oracle's: 1 + erf cancels for x < -2 (in float no correct digit
         // below -5). The CPU has a function of its own (dlc_geluf).
         std::string whole = c.target.gelu(c.dtype);
         if (!whole.empty())
           return whole + "(" + c.x() + ")";
         return c.lit(0.5) + " * " + c.x() + " * " +
                c.fn("erfc", "-" + c.x() + " / " + c.lit(1.4142135623730951));
       }}},
      {"gelu_tanh", {1, [](const Call &c) {
         // 0.5 x (1 + tanh u) as x / (1 + exp(-2u)), u = k (x + a x^3):
         // the same function without 1 + tanh u cancelling for x < -2 (in
         // float the product kept no correct digit below x = -5; this form
         // is within 1e-5 relative down to x = -9), and one exp and a
         // division instead of tanh's (the CPU's GELU epilogue: 179 -> 121
         // us for 64 x 3072 on one thread).
         const std::string &x = c.x();
         std::string u = c.lit(0.7978845608028654) + " * (" + x + " + " + c.lit(0.044715) +
                         " * " + x + " * " + x + " * " + x + ")";
         return x + " / (" + c.lit(1) + " + " + c.fn("exp", c.lit(-2) + " * " + u) + ")";
       }}},
      {"log", {1, [](const Call &c) { return c.fn("log", c.x()); }}},
      {"neg", {1, [](const Call &c) { return "-" + c.x(); }}},
      {"relu", {1, [](const Call &c) {
         // NaN stays NaN, as in the oracle.
         const std::string &x = c.x();
         return c.isFloat() ? "(" + x + " > " + c.lit(0) + " || " + x + " != " +
                                  x + " ? " + x + " : " + c.lit(0) + ")"
                            : "(" + x + " > 0 ? " + x + " : 0)";
       }}},
      {"round", {1, [](const Call &c) { return c.fn("nearbyint", c.x()); }}},
      {"rsqrt", {1, [](const Call &c) {
         return c.lit(1) + " / " + c.fn("sqrt", c.x());
       }}},
      {"sigmoid", {1, [](const Call &c) { return c.sigmoid(); }}},
      {"silu", {1, [](const Call &c) { return c.x() + " * " + c.sigmoid(); }}},
      {"sin", {1, [](const Call &c) { return c.fn("sin", c.x()); }}},
      {"softplus", {1, [](const Call &c) {
         return "(" + c.x() + " > " + c.lit(0) + " ? " + c.x() + " : " + c.lit(0) +
                ") + " + c.fn("log1p", c.fn("exp", "-" + c.fn("fabs", c.x())));
       }}},
      {"sqrt", {1, [](const Call &c) { return c.fn("sqrt", c.x()); }}},
      {"tanh", {1, [](const Call &c) { return c.fn("tanh", c.x()); }}},
      // Binary.
      {"add", {2, [](const Call &c) {
         return c.isFloat() ? c.a() + " + " + c.b() : c.wrap("+");
       }}},
      {"sub", {2, [](const Call &c) {
         return c.isFloat() ? c.a() + " - " + c.b() : c.wrap("-");
       }}},
      {"mul", {2, [](const Call &c) {
         return c.isFloat() ? c.a() + " * " + c.b() : c.wrap("*");
       }}},
      {"div", {2, [](const Call &c) {
         return c.isFloat() ? c.a() + " / " + c.b()
                            : "dlc_idiv(" + c.a() + ", " + c.b() + ", " + c.check + ")";
       }}},
      {"pow", {2, [](const Call &c) {
         return c.isFloat() ? c.target.math("pow", c.dtype) + "(" + c.a() + ", " +
                                  c.b() + ")"
                            : "dlc_ipow(" + c.a() + ", " + c.b() + ", " + c.check + ")";
       }}},
      {"max", {2, [](const Call &c) {
         std::string pick = "(" + c.a() + " > " + c.b() + " ? " + c.a() + " : " + c.b() + ")";
         return c.isFloat() ? c.nanOr(pick) : pick;
       }}},
      {"min", {2, [](const Call &c) {
         std::string pick = "(" + c.a() + " < " + c.b() + " ? " + c.a() + " : " + c.b() + ")";
         return c.isFloat() ? c.nanOr(pick) : pick;
       }}},
      // Comparisons (compare's predicates).
      {"eq", {2, [](const Call &c) { return compare(c, "=="); }}},
      {"ne", {2, [](const Call &c) { return compare(c, "!="); }}},
      {"lt", {2, [](const Call &c) { return compare(c, "<"); }}},
      {"le", {2, [](const Call &c) { return compare(c, "<="); }}},
      {"gt", {2, [](const Call &c) { return compare(c, ">"); }}},
      {"ge", {2, [](const Call &c) { return compare(c, ">="); }}},
      // Choice: the condition is i1, the branches of the result's dtype.
      {"select", {3, [](const Call &c) {
         return c.args[0] + " ? " + c.args[1] + " : " + c.args[2];
       }}},
  };
  return entries;
}

} // namespace

std::optional<std::string>
dlc::codegen::scalarExpression(const CTarget &target, llvm::StringRef name,
                               llvm::ArrayRef<std::string> args, DType dtype,
                               const std::string &check) {
  auto found = table().find(name);
  if (found == table().end() || found->second.arity != args.size())
    return std::nullopt;
  return found->second.expression(Call{target, args, dtype, check});
}

fb::CheckKind dlc::codegen::scalarCheck(llvm::StringRef name, DType dtype) {
  if (isFloat(dtype))
    return fb::CheckKind::invalid;
  if (name == "div")
    return fb::CheckKind::division_by_zero;
  if (name == "pow")
    return fb::CheckKind::negative_exponent;
  return fb::CheckKind::invalid;
}
