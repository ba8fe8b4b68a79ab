//===- DataChecks.cpp - the checks kernels make on their data -------------===//

#include "codegen/common/DataChecks.h"

#include "mlir/IR/Location.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>

using namespace mlir;
using namespace dlc::codegen;

static std::string locationOf(Location loc) {
  if (auto file = dyn_cast<FileLineColLoc>(loc))
    return llvm::formatv("{0}:{1}:{2}", file.getFilename().getValue(), file.getLine(),
                         file.getColumn())
        .str();
  if (auto name = dyn_cast<NameLoc>(loc))
    return name.getName().str();
  if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location inner : fused.getLocations())
      if (std::string text = locationOf(inner); !text.empty())
        return text;
  return "";
}

std::string dlc::codegen::sourceLocation(Operation *op) { return locationOf(op->getLoc()); }

std::string DataChecks::add(fb::CheckKind kind, Operation *op, int64_t bound, int64_t axis) {
  auto name = [&](size_t i) {
    size_t number = numbering == Numbering::InKernel ? i - firstCheck(current) : i;
    return std::string(kCheckName) + ", " + std::to_string(number);
  };
  for (size_t i = 0; i < all.size(); ++i)
    if (ops[i] == op && all[i].kernel == current && all[i].kind == kind)
      return name(i);
  format::CheckDesc check;
  check.kind = kind;
  check.kernel = current;
  check.op = op->getName().getStringRef().str();
  check.location = sourceLocation(op);
  check.bound = bound;
  check.axis = axis;
  all.push_back(std::move(check));
  ops.push_back(op);
  return name(all.size() - 1);
}

uint32_t DataChecks::firstCheck(uint32_t kernel) const {
  for (size_t i = 0; i < all.size(); ++i)
    if (all[i].kernel == kernel)
      return static_cast<uint32_t>(i);
  return 0;
}

bool DataChecks::checks(uint32_t kernel) const {
  return std::any_of(all.begin(), all.end(),
                     [&](const format::CheckDesc &c) { return c.kernel == kernel; });
}

void DataChecks::write(format::ModuleWriter &writer) const {
  for (const format::CheckDesc &c : all)
    writer.addCheck(c);
}
