//===- dlcm_run.cpp - Fuzz target: loading and running a .dlcm on the CPU -===//
//
// The bytes, resealed (DlcmReseal.h), are loaded; a module that loads gets
// a CPU session and one run on zero inputs, as `dlc run` would. Errors must
// come back as statuses, and none may be INTERNAL.
//
// A module's kernels are code that runs in this process: the format's
// checks protect against corrupt files, not hostile code (ModuleReader.h).
// So a module runs only when each of its kernels is one of the runtime's
// test kernels (test/unit/runtime/TestModules.h, compiled at start-up by
// the host compiler through the same kernel cache as dlc-runtime-testgen)
// with the same shared object, entry point, parallel extent and argument
// sizes; everything else (plan, commands, buffer references, arena,
// signature, weights, state, grain) is the fuzzer's. Seeds: the modules
// `dlc-runtime-testgen` writes (scripts/test.sh adds them to the corpus).

#include "fuzz/DlcmReseal.h"
#include "fuzz/FuzzSupport.h"
#include "runtime/executor/Session.h"
#include "runtime/format/ModuleReader.h"
#include "test/unit/runtime/TestModules.h"

#include <algorithm>
#include <cstring>
#include <set>

using namespace dlc;

namespace {

/// What must match a trusted kernel: entry, extent, argument sizes and the
/// bytes of every binary.
std::string kernelSignature(const format::LoadedModule &module, const fb::Kernel *k,
                            bool *ok) {
  std::string sig = k->entry()->str();
  sig += '\0';
  sig += std::to_string(static_cast<int>(k->target()));
  sig += '\0';
  sig += std::to_string(k->cpu() ? k->cpu()->parallel_extent() : 1);
  for (uint32_t a = 0; k->args() && a < k->args()->size(); ++a) {
    sig += '\0';
    sig += std::to_string(k->args()->Get(a)->bytes());
  }
  if (k->target() != fb::Target::cpu)
    *ok = false;
  for (uint32_t b = 0; k->binaries() && b < k->binaries()->size(); ++b) {
    const fb::KernelBinary *bin = k->binaries()->Get(b);
    rt::ByteSpan bytes = module.sectionData(bin->section());
    sig += '\1';
    sig += std::to_string(static_cast<int>(bin->format()));
    sig += bin->arch()->str();
    sig += '\1';
    sig.append(reinterpret_cast<const char *>(bytes.data()), bytes.size());
  }
  return sig;
}

std::set<std::string> &trusted() {
  static std::set<std::string> kernels;
  return kernels;
}

/// How far inputs got, printed at exit (bench/results/fuzz.md).
struct Counts {
  uint64_t inputs = 0, loaded = 0, trusted = 0, sessions = 0, runs = 0;
  ~Counts() {
    std::fprintf(stderr,
                 "dlcm_run: %llu inputs, %llu loaded, %llu with trusted kernels, "
                 "%llu sessions, %llu runs ok\n",
                 (unsigned long long)inputs, (unsigned long long)loaded,
                 (unsigned long long)trusted, (unsigned long long)sessions,
                 (unsigned long long)runs);
  }
};
Counts counts;

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  for (const char *name : {"add", "mlp"}) {
    testing::Bytes bytes;
    rt::Status s = testing::buildVariant(name, &bytes);
    std::shared_ptr<const format::LoadedModule> module;
    if (s.ok())
      s = format::readModuleMemory(rt::ByteSpan(bytes.data(), bytes.size()), &module);
    if (!s.ok())
      fuzz::contractBroken(std::string("cannot build the trusted module '") + name +
                           "': " + s.message());
    const auto *kernels = module->root().kernels();
    for (uint32_t k = 0; kernels && k < kernels->size(); ++k) {
      bool ok = true;
      trusted().insert(kernelSignature(*module, kernels->Get(k), &ok));
    }
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  ++counts.inputs;
  std::vector<uint8_t> bytes(data, data + size);
  fuzz::resealModule(bytes);
  std::shared_ptr<const format::LoadedModule> module;
  rt::Status s =
      format::readModuleMemory(rt::ByteSpan(bytes.data(), bytes.size()), &module, "fuzz.dlcm");
  if (!s.ok()) {
    if (s.code() != rt::StatusCode::kInvalidModule)
      fuzz::contractBroken("a bad module is not INVALID_MODULE: " + s.message());
    return 0;
  }
  ++counts.loaded;
  // Only trusted code runs.
  const auto *kernels = module->root().kernels();
  for (uint32_t k = 0; kernels && k < kernels->size(); ++k) {
    bool ok = true;
    std::string sig = kernelSignature(*module, kernels->Get(k), &ok);
    if (!ok || !trusted().count(sig))
      return 0;
  }
  ++counts.trusted;
  // Inputs and outputs of at most 64 MiB in all (the arena is bounded by
  // the device's memory limit below).
  uint64_t ioBytes = 0;
  for (const auto &t : module->inputs())
    ioBytes += t.bytes;
  for (const auto &t : module->outputs())
    ioBytes += t.bytes;
  if (ioBytes > (uint64_t(64) << 20))
    return 0;

  rt::SessionOptions options;
  options.device.numThreads = 2;
  options.device.maxMemoryBytes = uint64_t(256) << 20;
  std::unique_ptr<rt::Session> session;
  s = rt::Session::create(module, "cpu", options, &session);
  if (!s.ok()) {
    if (s.code() == rt::StatusCode::kInternal || s.message().empty())
      fuzz::contractBroken("session: " + s.message());
    return 0;
  }
  ++counts.sessions;
  std::vector<std::vector<uint8_t>> in, out;
  std::vector<const void *> inPtr;
  std::vector<void *> outPtr;
  for (const auto &t : module->inputs()) {
    in.emplace_back(std::max<uint64_t>(t.bytes, 1), uint8_t(0));
    inPtr.push_back(in.back().data());
  }
  for (const auto &t : module->outputs()) {
    out.emplace_back(std::max<uint64_t>(t.bytes, 1), uint8_t(0));
    outPtr.push_back(out.back().data());
  }
  s = session->run(inPtr.data(), inPtr.size(), outPtr.data(), outPtr.size());
  if (!s.ok() && (s.code() == rt::StatusCode::kInternal || s.message().empty()))
    fuzz::contractBroken("run: " + s.message());
  counts.runs += s.ok();
  return 0;
}
