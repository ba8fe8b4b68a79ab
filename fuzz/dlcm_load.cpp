//===- dlcm_load.cpp - Fuzz target: loading and checking a .dlcm ----------===//
//
// The bytes as they are (prelude, identifier, version, CRCs), then resealed
// (DlcmReseal.h) so that mutations reach the FlatBuffers verifier and the
// semantic checks: readModuleMemory and verifyModuleBytes must agree, and a
// module that loads has signature and weights inside the file.

#include "fuzz/DlcmReseal.h"
#include "fuzz/FuzzSupport.h"
#include "runtime/format/ModuleReader.h"

using namespace dlc;

static void check(const std::vector<uint8_t> &bytes) {
  rt::ByteSpan span(bytes.data(), bytes.size());
  std::shared_ptr<const format::LoadedModule> module;
  rt::Status loaded = format::readModuleMemory(span, &module, "fuzz.dlcm");
  rt::Status verified = format::verifyModuleBytes(span, "fuzz.dlcm");
  if (loaded.ok() != verified.ok())
    fuzz::contractBroken("readModuleMemory and verifyModuleBytes disagree: " +
                         loaded.message() + " / " + verified.message());
  if (!loaded.ok()) {
    if (loaded.code() != rt::StatusCode::kInvalidModule || loaded.message().empty())
      fuzz::contractBroken("a bad module is not INVALID_MODULE with a message: " +
                           loaded.message());
    return;
  }
  // Every weight lies inside the module's own bytes, with its declared size.
  rt::ByteSpan file = module->fileBytes();
  for (uint32_t i = 0; i < module->weights().size(); ++i) {
    rt::ByteSpan w = module->weightData(i);
    if (w.size() != module->weights()[i].bytes || w.data() < file.data() ||
        w.data() + w.size() > file.data() + file.size())
      fuzz::contractBroken("weight " + std::to_string(i) + " is not inside the file");
  }
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::vector<uint8_t> bytes(data, data + size);
  check(bytes);
  fuzz::resealModule(bytes);
  // DLC_FUZZ_RESEALED=FILE writes the resealed bytes (for a regression
  // test that feeds a crash to the tools, which check the CRCs).
  if (const char *out = std::getenv("DLC_FUZZ_RESEALED"))
    fuzz::writeFile(out, bytes.data(), bytes.size());
  check(bytes);
  return 0;
}
