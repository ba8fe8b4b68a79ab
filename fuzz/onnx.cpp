//===- onnx.cpp - Fuzz target: ONNX import --------------------------------===//
//
// What `dlc check` does with an .onnx file: import it (protobuf parsing,
// opset checks, ONNX's checker and shape inference where the importer uses
// them, every node to dlc ops, constants folded by the oracle) with unbound
// dimensions taken as 1, then verify the result. The model is written to a
// folder of its own, so that external data can name only files in it.

#include "frontend/onnx/OnnxImporter.h"
#include "fuzz/CompilerFuzz.h"

using namespace dlc;

static fuzz::StageCounts counts("onnx", {"inputs", "imported"});

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  counts.hit(0);
  static const bool made = [] {
    return mkdir((fuzz::scratchDir() + "/onnx").c_str(), 0700) == 0;
  }();
  (void)made;
  std::string path = fuzz::writeScratch("onnx/model.onnx", data, size);
  fuzz::FuzzContext fc;
  onnximport::ImportOptions options;
  options.defaultUnboundDimsToOne = true;
  onnximport::ImportResult imported = onnximport::importModel(path, fc.context(), options);
  if (!imported.module) {
    if (fc.errors() == 0)
      fuzz::contractBroken("the import failed without an error");
    return 0;
  }
  fc.mustVerify(*imported.module);
  counts.hit(1);
  return 0;
}
