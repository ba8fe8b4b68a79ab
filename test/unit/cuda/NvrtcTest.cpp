//===- NvrtcTest.cpp - NVRTC on both sides, and the kernel cache ----------===//
//
// No GPU needed: NVRTC compiles to PTX and cubin on any machine with the
// toolkit. The compiler side (codegen/cuda/Nvrtc) links libnvrtc; the
// runtime side (runtime/hal/cuda/NvrtcJit) dlopens it; both share the disk
// cache, and a warm start compiles nothing.
//
//===----------------------------------------------------------------------===//

#include "codegen/cuda/Nvrtc.h"
#include "runtime/hal/cuda/NvrtcJit.h"
#include "test/unit/cuda/CudaTestModules.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>

namespace {

using dlc::codegen::cuda::compileWithNvrtc;
using dlc::codegen::cuda::NvrtcOptions;
using dlc::codegen::cuda::NvrtcOutput;
namespace rtcuda = dlc::rt::hal::cuda;

std::string freshDirectory(const std::string &what) {
  char path[] = "/tmp/dlc-nvrtc-test-XXXXXX";
  EXPECT_NE(mkdtemp(path), nullptr);
  return std::string(path) + "/" + what;
}

bool isElf(const std::vector<uint8_t> &b) {
  return b.size() > 4 && std::memcmp(b.data(), "\x7f" "ELF", 4) == 0;
}

class NvrtcKernels : public ::testing::TestWithParam<const char *> {};

TEST_P(NvrtcKernels, CompileForSm80AndSm90) {
  const std::string which = GetParam();
  const std::string source = dlc::testing::cuda::cudaTestKernelSource(which);
  ASSERT_FALSE(source.empty());
  NvrtcOptions options;
  options.useCache = false;
  std::vector<NvrtcOutput> out;
  dlc::rt::Status s = compileWithNvrtc(which, source, options, &out);
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_EQ(out.size(), 2u);
  for (const NvrtcOutput &o : out) {
    EXPECT_TRUE(isElf(o.cubin)) << o.arch;
    EXPECT_NE(o.ptx.find(".target " + o.arch), std::string::npos) << o.arch;
    EXPECT_NE(o.ptx.find(".entry dlc_" + which), std::string::npos) << o.ptx.substr(0, 400);
  }
  EXPECT_EQ(out[0].arch, "sm_80");
  EXPECT_EQ(out[1].arch, "sm_90");
}

INSTANTIATE_TEST_SUITE_P(Representative, NvrtcKernels,
                         ::testing::Values("add", "matmul", "bias_relu", "softmax", "half_axpy"));

TEST(Nvrtc, FailureNamesTheKernelAndCarriesTheLog) {
  NvrtcOptions options;
  options.useCache = false;
  options.archs = {"sm_90"};
  std::vector<NvrtcOutput> out;
  dlc::rt::Status s = compileWithNvrtc(
      "broken_kernel", "extern \"C\" __global__ void k(float *x) { x[0] = undefined_name; }",
      options, &out);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("kernel 'broken_kernel'"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("sm_90"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("undefined_name"), std::string::npos) << s.message();
}

TEST(Nvrtc, BadArchitectureIsRefused) {
  NvrtcOptions options;
  options.archs = {"compute_90"};
  std::vector<NvrtcOutput> out;
  dlc::rt::Status s = compileWithNvrtc("k", "extern \"C\" __global__ void k() {}", options, &out);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("not a CUDA architecture"), std::string::npos) << s.message();
}

TEST(Nvrtc, CompilerCacheWarmStartCompilesNothing) {
  NvrtcOptions options;
  options.cacheDirectory = freshDirectory("nvrtc");
  const std::string source = dlc::testing::cuda::cudaTestKernelSource("softmax");
  std::vector<NvrtcOutput> cold, warm;
  const uint64_t before = dlc::codegen::cuda::nvrtcCompileCount();
  ASSERT_TRUE(compileWithNvrtc("softmax", source, options, &cold).ok());
  EXPECT_EQ(dlc::codegen::cuda::nvrtcCompileCount(), before + 2); // sm_80, sm_90
  ASSERT_TRUE(compileWithNvrtc("softmax", source, options, &warm).ok());
  EXPECT_EQ(dlc::codegen::cuda::nvrtcCompileCount(), before + 2);
  ASSERT_EQ(warm.size(), 2u);
  EXPECT_EQ(warm[1].cubin, cold[1].cubin);
  EXPECT_EQ(warm[1].ptx, cold[1].ptx);
  // A different source is a miss.
  ASSERT_TRUE(compileWithNvrtc("softmax", source + "\n// changed\n", options, &warm).ok());
  EXPECT_EQ(dlc::codegen::cuda::nvrtcCompileCount(), before + 4);
}

TEST(NvrtcJit, RuntimeJitThroughDlopenAndDiskCache) {
  std::string version;
  dlc::rt::Status loaded = rtcuda::loadNvrtc(&version);
  ASSERT_TRUE(loaded.ok()) << loaded.message();
  EXPECT_EQ(version.rfind("nvrtc ", 0), 0u);
  rtcuda::KernelCache cache(freshDirectory("jit"));
  const std::string source = dlc::testing::cuda::cudaTestKernelSource("add");
  const uint64_t before = rtcuda::jitCompileCount();
  rtcuda::JitResult cold;
  dlc::rt::Status s = rtcuda::jitCompile("add", source, "sm_86", cache, &cold);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_FALSE(cold.fromCache);
  EXPECT_TRUE(isElf(cold.image));
  EXPECT_EQ(rtcuda::jitCompileCount(), before + 1);
  // A warm start: a new cache object on the same folder, as a new process has.
  rtcuda::KernelCache again(cache.directory());
  rtcuda::JitResult warm;
  ASSERT_TRUE(rtcuda::jitCompile("add", source, "sm_86", again, &warm).ok());
  EXPECT_TRUE(warm.fromCache);
  EXPECT_EQ(warm.image, cold.image);
  EXPECT_EQ(rtcuda::jitCompileCount(), before + 1);
}

TEST(NvrtcJit, CompilerAndRuntimeShareTheCache) {
  NvrtcOptions options;
  options.cacheDirectory = freshDirectory("shared");
  options.archs = {"sm_90"};
  const std::string source = dlc::testing::cuda::cudaTestKernelSource("bias_relu");
  std::vector<NvrtcOutput> compiled;
  ASSERT_TRUE(compileWithNvrtc("bias_relu", source, options, &compiled).ok());
  const uint64_t before = rtcuda::jitCompileCount();
  rtcuda::JitResult jit;
  ASSERT_TRUE(rtcuda::jitCompile("bias_relu", source, "sm_90",
                                 rtcuda::KernelCache(options.cacheDirectory), &jit)
                  .ok());
  EXPECT_TRUE(jit.fromCache);
  EXPECT_EQ(jit.image, compiled[0].cubin);
  EXPECT_EQ(rtcuda::jitCompileCount(), before);
}

TEST(NvrtcJit, ErrorsNameTheKernel) {
  rtcuda::KernelCache cache(freshDirectory("bad"));
  rtcuda::JitResult jit;
  dlc::rt::Status s = rtcuda::jitCompile("oops", "__global__ void f( {", "sm_80", cache, &jit);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("kernel 'oops'"), std::string::npos) << s.message();
}

TEST(KernelCache, KeyCoversArchVersionFlagsAndKind) {
  rtcuda::KernelCacheKey a;
  a.source = "x";
  a.arch = "sm_80";
  a.compilerVersion = "nvrtc 13.0";
  a.flags = rtcuda::nvrtcFlagString("sm_80");
  auto differs = [&](auto change) {
    rtcuda::KernelCacheKey b = a;
    change(b);
    return b.fileName() != a.fileName();
  };
  EXPECT_TRUE(differs([](auto &k) { k.source = "y"; }));
  EXPECT_TRUE(differs([](auto &k) { k.arch = "sm_90"; }));
  EXPECT_TRUE(differs([](auto &k) { k.compilerVersion = "nvrtc 12.4"; }));
  EXPECT_TRUE(differs([](auto &k) { k.flags += " -G"; }));
  EXPECT_TRUE(differs([](auto &k) { k.kind = rtcuda::CodeKind::kPtx; }));
  EXPECT_FALSE(differs([](auto &) {}));
  EXPECT_EQ(rtcuda::smVersion("sm_90"), 90);
  EXPECT_EQ(rtcuda::smVersion("sm_100"), 100);
  EXPECT_EQ(rtcuda::smVersion("compute_90"), 0);
}

TEST(KernelCache, DefaultDirectoryFollowsTheEnvironment) {
  const char *home = std::getenv("HOME");
  const std::string savedHome = home ? home : "";
  setenv("DLC_CACHE_DIR", "/some/where", 1);
  EXPECT_EQ(rtcuda::KernelCache::defaultDirectory(), "/some/where");
  unsetenv("DLC_CACHE_DIR");
  setenv("HOME", "/home/u", 1);
  unsetenv("XDG_CACHE_HOME");
  EXPECT_EQ(rtcuda::KernelCache::defaultDirectory(), "/home/u/.cache/dlc/kernels");
  if (home)
    setenv("HOME", savedHome.c_str(), 1);
}

} // namespace
