//===- TestGen.cpp - Write the CUDA test modules for the GPU suite --------===//
//
// Usage: dlc-cuda-testgen OUTDIR [NAME...]
//
// Writes, for each module of CudaTestModules.h (all without NAMEs):
//   OUTDIR/NAME.dlcm             the module (PTX/cubin sm_80, sm_90; emu object; source)
//   OUTDIR/NAME.in<i>.bin        input i, raw little-endian f32
//   OUTDIR/NAME.out<i>.bin       the expected output i (the CPU reference)
// and first runs each module on cuda-emu and checks it against the
// reference, so that the suite's expectations are known good. Exit 1 when
// cuda-emu disagrees, 2 on a usage or build error.
//
//===----------------------------------------------------------------------===//

#include "runtime/executor/Session.h"
#include "test/unit/cuda/CudaTestModules.h"

#include <cstdio>
#include <fstream>

using namespace dlc;

static bool writeFloats(const std::string &path, const std::vector<float> &v) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char *>(v.data()), std::streamsize(v.size() * 4));
  return static_cast<bool>(f);
}

static int generate(const std::string &dir, const std::string &name) {
  format::ModuleWriter writer;
  testing::cuda::CudaTestCase test;
  rt::Status s = testing::cuda::buildCudaModule(name, &writer, &test);
  std::vector<uint8_t> bytes;
  if (s.ok())
    s = writer.serialize(&bytes);
  std::shared_ptr<const format::LoadedModule> module;
  if (s.ok())
    s = format::readModuleMemory(rt::ByteSpan(bytes.data(), bytes.size()), &module);
  std::unique_ptr<rt::Session> session;
  if (s.ok())
    s = rt::Session::create(module, "cuda-emu", rt::SessionOptions(), &session);
  if (!s.ok()) {
    std::fprintf(stderr, "dlc-cuda-testgen: %s: %s\n", name.c_str(), s.message().c_str());
    return 2;
  }
  std::vector<std::vector<float>> outputs;
  std::vector<const void *> in;
  std::vector<void *> out;
  for (auto &i : test.inputs)
    in.push_back(i.data());
  for (auto &e : test.expected)
    outputs.emplace_back(e.size());
  for (auto &o : outputs)
    out.push_back(o.data());
  s = session->run(in.data(), in.size(), out.data(), out.size());
  if (!s.ok()) {
    std::fprintf(stderr, "dlc-cuda-testgen: %s on cuda-emu: %s\n", name.c_str(),
                 s.message().c_str());
    return 2;
  }
  for (size_t o = 0; o < outputs.size(); ++o) {
    double e = testing::cuda::worstError(outputs[o], test.expected[o], 1e-4, 1e-5);
    if (e > 1) {
      std::fprintf(stderr, "dlc-cuda-testgen: %s: cuda-emu output %zu is off the reference "
                           "(error %.3g of the tolerance)\n", name.c_str(), o, e);
      return 1;
    }
  }
  const std::string base = dir + "/" + name;
  s = writer.writeFile(base + ".dlcm");
  bool ok = s.ok();
  for (size_t i = 0; i < test.inputs.size() && ok; ++i)
    ok = writeFloats(rt::strCat(base, ".in", i, ".bin"), test.inputs[i]);
  for (size_t o = 0; o < test.expected.size() && ok; ++o)
    ok = writeFloats(rt::strCat(base, ".out", o, ".bin"), test.expected[o]);
  if (!ok) {
    std::fprintf(stderr, "dlc-cuda-testgen: cannot write %s.*: %s\n", base.c_str(),
                 s.message().c_str());
    return 2;
  }
  std::printf("%s.dlcm: %zu bytes, cuda-emu matches the reference\n", base.c_str(), bytes.size());
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: dlc-cuda-testgen OUTDIR [NAME...]\n");
    return 2;
  }
  std::vector<std::string> names(argv + 2, argv + argc);
  if (names.empty())
    names = testing::cuda::cudaModuleNames();
  for (const std::string &name : names)
    if (int rc = generate(argv[1], name))
      return rc;
  return 0;
}
