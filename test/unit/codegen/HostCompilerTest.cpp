#include "codegen/common/HostCompiler.h"
#include "test/unit/common/ScratchDir.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace dlc::codegen {
namespace {

namespace fs = std::filesystem;

HostCompileJob tinyJob(const std::string &cache, int value) {
  HostCompileJob job;
  job.compiler = "c++";
  job.flags = {"-shared", "-fPIC", "-O0"};
  job.sourceName = "tiny.cpp";
  job.source = "extern \"C\" int tiny() { return " + std::to_string(value) + "; }\n";
  job.cacheDirectory = cache;
  return job;
}

size_t filesIn(const fs::path &folder) {
  size_t n = 0;
  std::error_code ec;
  for (const auto &entry : fs::directory_iterator(folder, ec))
    n += entry.is_regular_file();
  return n;
}

TEST(HostCompiler, SecondCompileOfTheSameSourceIsTheCaches) {
  testing::ScratchDir dir("host_cache");
  const std::string cache = (dir.path() / "cpu").string();
  std::vector<uint8_t> first, second, other;
  uint64_t runs = hostCompilerRuns();
  ASSERT_TRUE(compileOnHost(tinyJob(cache, 1), &first).ok());
  EXPECT_EQ(hostCompilerRuns(), runs + 1);
  EXPECT_EQ(filesIn(cache), 1u);
  ASSERT_TRUE(compileOnHost(tinyJob(cache, 1), &second).ok());
  EXPECT_EQ(hostCompilerRuns(), runs + 1) << "the same job compiled again";
  EXPECT_EQ(first, second);
  // Another source, or other flags, are other entries.
  ASSERT_TRUE(compileOnHost(tinyJob(cache, 2), &other).ok());
  HostCompileJob flagged = tinyJob(cache, 1);
  flagged.flags.push_back("-DX=1");
  ASSERT_TRUE(compileOnHost(flagged, &other).ok());
  EXPECT_EQ(hostCompilerRuns(), runs + 3);
  EXPECT_EQ(filesIn(cache), 3u);
  // No cache folder: compiled every time.
  ASSERT_TRUE(compileOnHost(tinyJob("", 1), &other).ok());
  EXPECT_EQ(hostCompilerRuns(), runs + 4);
}

TEST(HostCompiler, PruningDropsTheLeastRecentlyUsedFirst) {
  testing::ScratchDir dir("host_prune");
  auto now = fs::file_time_type::clock::now();
  for (int i = 0; i < 4; ++i) {
    fs::path file = dir.path() / ("k" + std::to_string(i) + ".so");
    std::ofstream(file) << std::string(1000, 'x');
    fs::last_write_time(file, now - std::chrono::hours(4 - i)); // k0 oldest
  }
  pruneCache(dir.path().string(), 5000); // under the limit: nothing goes
  EXPECT_EQ(filesIn(dir.path()), 4u);
  pruneCache(dir.path().string(), 3000); // to 3/4 of it: 2 files stay
  EXPECT_EQ(filesIn(dir.path()), 2u);
  EXPECT_FALSE(fs::exists(dir.path() / "k0.so"));
  EXPECT_FALSE(fs::exists(dir.path() / "k1.so"));
  EXPECT_TRUE(fs::exists(dir.path() / "k3.so"));
}

TEST(HostCompiler, CacheFolderFollowsTheEnvironment) {
  setenv("DLC_CACHE_DIR", "/x/cache", 1);
  EXPECT_EQ(kernelCacheDirectory("cpu"), "/x/cache/cpu");
  unsetenv("DLC_CACHE_DIR");
  setenv("XDG_CACHE_HOME", "/x/xdg", 1);
  EXPECT_EQ(kernelCacheDirectory("emu"), "/x/xdg/dlc/emu");
  setenv("DLC_NO_CACHE", "1", 1);
  EXPECT_EQ(kernelCacheDirectory("cpu"), "");
  EXPECT_TRUE(kernelCacheDisabled());
  setenv("DLC_NO_CACHE", "0", 1);
  EXPECT_FALSE(kernelCacheDisabled());
  unsetenv("DLC_NO_CACHE");
  unsetenv("XDG_CACHE_HOME");
  setenv("DLC_CACHE_MAX_MB", "3", 1);
  EXPECT_EQ(kernelCacheLimitBytes(), 3u << 20);
  unsetenv("DLC_CACHE_MAX_MB");
  EXPECT_EQ(kernelCacheLimitBytes(), uint64_t(2048) << 20);
}

} // namespace
} // namespace dlc::codegen
