//===- ModuleTest.cpp - CUDA modules end to end, without a GPU ------------===//
//
// Modules with CUDA kernels (CudaTestModules.h: source, PTX and cubin for
// sm_80/sm_90, a cuda-emu shared object) through the C API on cuda-emu,
// against CPU references; and cuda:0 on a machine without a driver.
//
//===----------------------------------------------------------------------===//

#include "test/unit/cuda/CudaTestModules.h"

#include <dlc/runtime.h>
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>

namespace {

using dlc::testing::cuda::buildCudaModule;
using dlc::testing::cuda::CudaTestCase;

struct StatusDeleter {
  void operator()(dlc_status_s *s) const { dlc_status_free(s); }
};
using StatusPtr = std::unique_ptr<dlc_status_s, StatusDeleter>;

/// Builds `name` and loads it through the C API.
dlc_module_t *load(const std::string &name, CudaTestCase *test) {
  dlc::format::ModuleWriter writer;
  dlc::rt::Status s = buildCudaModule(name, &writer, test);
  EXPECT_TRUE(s.ok()) << s.message();
  std::vector<uint8_t> bytes;
  s = writer.serialize(&bytes);
  EXPECT_TRUE(s.ok()) << s.message();
  dlc_module_t *module = nullptr;
  StatusPtr loaded(dlc_module_load_memory(bytes.data(), bytes.size(), &module));
  EXPECT_EQ(loaded, nullptr) << dlc_status_message(loaded.get());
  return module;
}

/// Runs `session` on the test's inputs; returns the outputs.
std::vector<std::vector<float>> run(dlc_session_t *session, dlc_module_t *module,
                                    CudaTestCase &test) {
  std::vector<DLTensor> tensors;
  std::vector<std::vector<int64_t>> shapes;
  std::vector<std::vector<float>> outputs;
  const size_t ni = dlc_module_input_count(module), no = dlc_module_output_count(module);
  tensors.reserve(ni + no);
  outputs.reserve(no);
  auto add = [&](const dlc_tensor_info_t &info, float *data) {
    DLTensor t{};
    t.data = data;
    t.device = {kDLCPU, 0};
    t.ndim = info.ndim;
    t.dtype = info.dtype;
    t.shape = const_cast<int64_t *>(info.shape);
    tensors.push_back(t);
  };
  for (size_t i = 0; i < ni; ++i) {
    dlc_tensor_info_t info;
    dlc_module_input_info(module, i, &info);
    add(info, test.inputs[i].data());
  }
  for (size_t o = 0; o < no; ++o) {
    dlc_tensor_info_t info;
    dlc_module_output_info(module, o, &info);
    outputs.emplace_back(info.size_bytes / 4, -12345.0f);
    add(info, outputs.back().data());
  }
  std::vector<const DLTensor *> in, out;
  for (size_t i = 0; i < ni; ++i)
    in.push_back(&tensors[i]);
  for (size_t o = 0; o < no; ++o)
    out.push_back(&tensors[ni + o]);
  StatusPtr s(dlc_session_run(session, in.data(), ni, out.data(), no));
  EXPECT_EQ(s, nullptr) << dlc_status_message(s.get());
  return outputs;
}

class CudaEmuModules : public ::testing::TestWithParam<std::string> {};

TEST_P(CudaEmuModules, MatchTheCpuReference) {
  CudaTestCase test;
  dlc_module_t *module = load(GetParam(), &test);
  ASSERT_NE(module, nullptr);
  dlc_session_options_t options;
  dlc_session_options_init(&options);
  options.num_threads = 2;
  dlc_session_t *session = nullptr;
  StatusPtr s(dlc_session_create(module, "cuda-emu", &options, &session));
  ASSERT_EQ(s, nullptr) << dlc_status_message(s.get());
  for (int repeat = 0; repeat < 2; ++repeat) {
    std::vector<std::vector<float>> got = run(session, module, test);
    ASSERT_EQ(got.size(), test.expected.size());
    for (size_t o = 0; o < got.size(); ++o)
      EXPECT_LE(dlc::testing::cuda::worstError(got[o], test.expected[o], 1e-4, 1e-5), 1.0)
          << GetParam() << " output " << o << " run " << repeat;
  }
  dlc_session_destroy(session);
  dlc_module_release(module);
}

INSTANTIATE_TEST_SUITE_P(All, CudaEmuModules,
                         ::testing::ValuesIn(dlc::testing::cuda::cudaModuleNames()),
                         [](const auto &info) {
                           std::string n = info.param;
                           for (char &c : n)
                             if (c == '-')
                               c = '_';
                           return n;
                         });

TEST(CudaDevice, NoDriverIsAClearUnavailableStatus) {
  if (std::getenv("DLC_CUDA_DRIVER_LIBRARY"))
    GTEST_SKIP() << "DLC_CUDA_DRIVER_LIBRARY is set";
  struct stat st;
  if (stat("/dev/nvidia0", &st) == 0)
    GTEST_SKIP() << "this machine has a GPU";
  CudaTestCase test;
  dlc_module_t *module = load("cuda-add", &test);
  ASSERT_NE(module, nullptr);
  for (const char *device : {"cuda:0", "cuda"}) {
    dlc_session_t *session = nullptr;
    StatusPtr s(dlc_session_create(module, device, nullptr, &session));
    ASSERT_NE(s, nullptr) << device;
    EXPECT_EQ(dlc_status_code(s.get()), DLC_UNAVAILABLE);
    EXPECT_EQ(dlc_status_exit_code(s.get()), 3);
    const std::string message = dlc_status_message(s.get());
    // Either no libcuda at all, or one that finds no device.
    EXPECT_TRUE(message.rfind("no CUDA driver: dlopen(libcuda.so.1) failed: ", 0) == 0 ||
                message.rfind("no CUDA device", 0) == 0)
        << message;
  }
  dlc_module_release(module);
}

TEST(CudaDevice, BadOrdinalIsAnInvalidArgument) {
  CudaTestCase test;
  dlc_module_t *module = load("cuda-add", &test);
  dlc_session_t *session = nullptr;
  StatusPtr s(dlc_session_create(module, "cuda:x", nullptr, &session));
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(dlc_status_code(s.get()), DLC_INVALID_ARGUMENT) << dlc_status_message(s.get());
  dlc_module_release(module);
}

TEST(CudaEmu, CudaModuleOnCpuIsRefused) {
  CudaTestCase test;
  dlc_module_t *module = load("cuda-add", &test);
  dlc_session_t *session = nullptr;
  StatusPtr s(dlc_session_create(module, "cpu", nullptr, &session));
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(dlc_status_code(s.get()), DLC_UNAVAILABLE);
  EXPECT_NE(std::string(dlc_status_message(s.get())).find("targets cuda, not device 'cpu'"),
            std::string::npos)
      << dlc_status_message(s.get());
  dlc_module_release(module);
}

TEST(CudaEmu, SourceOnlyKernelNeedsAnEmuBinary) {
  // cuda-add-source carries an emu object; a module with none cannot run on cuda-emu.
  dlc::format::ModuleWriter w;
  w.setName("no-emu");
  w.addInput({"a", dlc::DType::F32, {4}});
  w.addOutput({"c", dlc::DType::F32, {4}});
  dlc::format::KernelDesc k;
  k.name = "copy";
  k.target = dlc::fb::Target::cuda;
  k.entry = "dlc_copy";
  k.source = "extern \"C\" __global__ void dlc_copy(const float *a, float *c) { c[threadIdx.x] = a[threadIdx.x]; }";
  k.args = {{"a", dlc::fb::Access::read, 16}, {"c", dlc::fb::Access::write, 16}};
  k.block = {4, 1, 1};
  uint32_t kernel = w.addKernel(k);
  dlc::format::PlanDesc plan;
  plan.commands.push_back(dlc::format::LaunchDesc{
      kernel, {dlc::format::inputRef(0, 0, 16), dlc::format::outputRef(0, 0, 16)}});
  w.addPlan(plan);
  std::vector<uint8_t> bytes;
  ASSERT_TRUE(w.serialize(&bytes).ok());
  dlc_module_t *module = nullptr;
  StatusPtr loaded(dlc_module_load_memory(bytes.data(), bytes.size(), &module));
  ASSERT_EQ(loaded, nullptr) << dlc_status_message(loaded.get());
  dlc_session_t *session = nullptr;
  StatusPtr s(dlc_session_create(module, "cuda-emu", nullptr, &session));
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(dlc_status_code(s.get()), DLC_UNAVAILABLE);
  EXPECT_NE(std::string(dlc_status_message(s.get())).find("no binary that device 'cuda-emu'"),
            std::string::npos)
      << dlc_status_message(s.get());
  dlc_module_release(module);
}

TEST(CudaEmu, KernelDumpDirGetsEverySource) {
  char dir[] = "/tmp/dlc-dump-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  setenv("DLC_KERNEL_DUMP_DIR", dir, 1);
  CudaTestCase test;
  dlc_module_t *module = load("cuda-mlp", &test);
  dlc_session_t *session = nullptr;
  StatusPtr s(dlc_session_create(module, "cuda-emu", nullptr, &session));
  unsetenv("DLC_KERNEL_DUMP_DIR");
  ASSERT_EQ(s, nullptr) << dlc_status_message(s.get());
  for (const char *kernel : {"matmul", "bias_relu"}) {
    std::ifstream f(std::string(dir) + "/" + kernel + ".cu");
    std::stringstream text;
    text << f.rdbuf();
    EXPECT_EQ(text.str(), dlc::testing::cuda::cudaTestKernelSource(kernel)) << kernel;
  }
  dlc_session_destroy(session);
  dlc_module_release(module);
}

TEST(CudaEmu, KernelOverrideIsRefusedWithAReason) {
  char dir[] = "/tmp/dlc-override-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  std::ofstream(std::string(dir) + "/add.cu") << "// edited\n";
  setenv("DLC_KERNEL_OVERRIDE_DIR", dir, 1);
  CudaTestCase test;
  dlc_module_t *module = load("cuda-add", &test);
  dlc_session_t *session = nullptr;
  StatusPtr s(dlc_session_create(module, "cuda-emu", nullptr, &session));
  unsetenv("DLC_KERNEL_OVERRIDE_DIR");
  ASSERT_NE(s, nullptr);
  EXPECT_NE(std::string(dlc_status_message(s.get())).find("DLC_KERNEL_OVERRIDE_DIR"),
            std::string::npos)
      << dlc_status_message(s.get());
  dlc_module_release(module);
}

} // namespace
