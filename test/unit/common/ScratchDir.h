//===- ScratchDir.h - a fresh directory per unit test ------------*- C++ -*-===//
//
// Header-only, for GoogleTests that write files: a directory named after the
// process and the running test, created empty and removed afterwards.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_TEST_UNIT_COMMON_SCRATCHDIR_H
#define DLC_TEST_UNIT_COMMON_SCRATCHDIR_H

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <unistd.h>

namespace dlc::testing {

class ScratchDir {
public:
  /// <gtest temp dir>/<prefix>_<pid>_<test name>, empty.
  explicit ScratchDir(const std::string &prefix) {
    const auto *info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = std::filesystem::path(::testing::TempDir()) /
            (prefix + "_" + std::to_string(::getpid()) + "_" +
             (info ? info->name() : "global"));
    reset();
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir &) = delete;
  ScratchDir &operator=(const ScratchDir &) = delete;

  /// Empties the directory.
  void reset() {
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  const std::filesystem::path &path() const { return path_; }
  std::string str() const { return path_.string(); }
  /// The path of `name` inside it.
  std::string operator/(const std::string &name) const { return (path_ / name).string(); }

private:
  std::filesystem::path path_;
};

} // namespace dlc::testing

#endif // DLC_TEST_UNIT_COMMON_SCRATCHDIR_H
