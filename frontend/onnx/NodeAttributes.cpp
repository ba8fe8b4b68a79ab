//===- NodeAttributes.cpp - a node's attributes, read with checked kinds --===//
//
// Each reader returns the attribute's value, the fallback when the node
// does not have it, or nullopt with an error at the node when its kind is
// not the one asked for.
//
//===----------------------------------------------------------------------===//

#include "frontend/onnx/NodeImporter.h"

using namespace mlir;

namespace dlc::onnximport {

const ::onnx::AttributeProto *NodeImporter::attr(StringRef attrName) const {
  for (const auto &a : node.attribute())
    if (a.name() == attrName)
      return &a;
  return nullptr;
}

std::optional<int64_t> NodeImporter::intAttr(StringRef attrName,
                                             int64_t fallback) {
  const auto *a = attr(attrName);
  if (!a)
    return fallback;
  if (a->type() != ::onnx::AttributeProto::INT) {
    error() << "attribute '" << attrName << "' must be an integer";
    return std::nullopt;
  }
  return a->i();
}

std::optional<double> NodeImporter::floatAttr(StringRef attrName,
                                              double fallback) {
  const auto *a = attr(attrName);
  if (!a)
    return fallback;
  if (a->type() != ::onnx::AttributeProto::FLOAT) {
    error() << "attribute '" << attrName << "' must be a float";
    return std::nullopt;
  }
  return a->f();
}

std::optional<SmallVector<int64_t>>
NodeImporter::intsAttr(StringRef attrName, SmallVector<int64_t> fallback) {
  const auto *a = attr(attrName);
  if (!a)
    return fallback;
  if (a->type() != ::onnx::AttributeProto::INTS) {
    error() << "attribute '" << attrName << "' must be a list of integers";
    return std::nullopt;
  }
  return SmallVector<int64_t>(a->ints().begin(), a->ints().end());
}

std::optional<std::string> NodeImporter::stringAttr(StringRef attrName,
                                                    StringRef fallback) {
  const auto *a = attr(attrName);
  if (!a)
    return fallback.str();
  if (a->type() != ::onnx::AttributeProto::STRING) {
    error() << "attribute '" << attrName << "' must be a string";
    return std::nullopt;
  }
  return a->s();
}

LogicalResult NodeImporter::unsupported(StringRef attrName, const Twine &why) {
  error() << "attribute '" << attrName << "' is not supported: " << why;
  return failure();
}

} // namespace dlc::onnximport
