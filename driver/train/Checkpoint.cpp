//===- Checkpoint.cpp - training state on disk, written atomically --------===//

#include "driver/train/Checkpoint.h"

#include "support/weights/WeightFiles.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <set>
#include <thread>
#include <type_traits>

#include <fcntl.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace dlc::train {

static const char *const kFormat = "dlc-checkpoint";
static const char *const kFormatVersion = "1";
static const char *const kDataOrder = "splitmix64-fisher-yates";
static const char *const kPrefix = "ckpt-";
static const char *const kSuffix = ".safetensors";
static const char *const kTemporarySuffix = ".safetensors.tmp";

std::string checkpointFileName(int64_t globalStep) {
  return kPrefix + std::to_string(globalStep) + kSuffix;
}

/// The step of a file named ckpt-<digits>.safetensors; -1 for other names.
static int64_t stepOfName(const std::string &name) {
  size_t prefix = std::strlen(kPrefix), suffix = std::strlen(kSuffix);
  if (name.size() <= prefix + suffix || name.compare(0, prefix, kPrefix) != 0 ||
      name.compare(name.size() - suffix, suffix, kSuffix) != 0)
    return -1;
  std::string digits = name.substr(prefix, name.size() - prefix - suffix);
  if (digits.size() > 18 ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return -1;
  return std::stoll(digits);
}

std::vector<CheckpointFile> listCheckpoints(const std::string &dir) {
  std::vector<CheckpointFile> files;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    int64_t step = stepOfName(it->path().filename().string());
    if (step >= 0 && it->is_regular_file(ec))
      files.push_back({step, it->path().string()});
  }
  std::sort(files.begin(), files.end(),
            [](const CheckpointFile &a, const CheckpointFile &b) {
              return a.globalStep < b.globalStep;
            });
  return files;
}

void removeStaleTemporaries(const std::string &dir) {
  std::error_code ec;
  std::vector<fs::path> stale;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    size_t suffix = std::strlen(kTemporarySuffix);
    if (name.size() > suffix + 1 && name[0] == '.' &&
        name.compare(name.size() - suffix, suffix, kTemporarySuffix) == 0 &&
        stepOfName(name.substr(1, name.size() - 5)) >= 0)
      stale.push_back(it->path());
  }
  for (const fs::path &p : stale)
    fs::remove(p, ec);
}

/// fsync of a file or directory by path.
static bool syncPath(const std::string &path, bool directory,
                     std::string &error) {
  int fd = ::open(path.c_str(), O_RDONLY | (directory ? O_DIRECTORY : 0));
  if (fd < 0 || ::fsync(fd) != 0) {
    error = "cannot sync '" + path + "': " + std::strerror(errno);
    if (fd >= 0)
      ::close(fd);
    return false;
  }
  ::close(fd);
  return true;
}

/// A C99 hex float: exact, and what strtod reads back.
static std::string hexDouble(double v) {
  char text[64];
  std::snprintf(text, sizeof text, "%a", v);
  return text;
}

bool writeCheckpoint(const std::string &dir, const CheckpointInfo &info,
                     const std::map<std::string, HostTensor> &tensors,
                     int64_t keep, std::string &path, std::string &error) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    error = "cannot create the checkpoint directory '" + dir + "': " + ec.message();
    return false;
  }
  weights::SafetensorsMetadata metadata = {
      {"format", kFormat},
      {"format_version", kFormatVersion},
      {"model", info.model},
      {"optimizer", info.optimizer},
      {"epoch", std::to_string(info.epoch)},
      {"batch_in_epoch", std::to_string(info.batchInEpoch)},
      {"global_step", std::to_string(info.globalStep)},
      {"seed", std::to_string(info.seed)},
      {"batch_size", std::to_string(info.batchSize)},
      {"drop_last", info.dropLast ? "true" : "false"},
      {"world_size", std::to_string(info.worldSize)},
      {"data_order", kDataOrder},
      {"epoch_loss_sum", hexDouble(info.epochLossSum)},
      {"epoch_samples", std::to_string(info.epochSamples)},
      {"execution", info.execution},
  };
  std::string name = checkpointFileName(info.globalStep);
  std::string finalPath = (fs::path(dir) / name).string();
  std::string temporary = (fs::path(dir) / ("." + name + ".tmp")).string();
  if (!weights::writeSafetensors(temporary, tensors, error, &metadata) ||
      !syncPath(temporary, false, error)) {
    fs::remove(temporary, ec);
    return false;
  }
  if (const char *pause = std::getenv("DLC_TEST_CHECKPOINT_PAUSE_MS"))
    std::this_thread::sleep_for(std::chrono::milliseconds(std::atoll(pause)));
  if (std::rename(temporary.c_str(), finalPath.c_str()) != 0) {
    error = "cannot rename '" + temporary + "' to '" + finalPath +
            "': " + std::strerror(errno);
    fs::remove(temporary, ec);
    return false;
  }
  if (!syncPath(dir, true, error))
    return false;
  path = finalPath;

  std::vector<CheckpointFile> files = listCheckpoints(dir);
  for (size_t i = 0; i + static_cast<size_t>(std::max<int64_t>(keep, 1)) < files.size(); ++i)
    if (files[i].path != finalPath)
      fs::remove(files[i].path, ec);
  return true;
}

bool readCheckpoint(const std::string &path, CheckpointInfo &info,
                    std::map<std::string, HostTensor> &tensors,
                    std::string &error) {
  weights::SafetensorsMetadata metadata;
  if (!weights::readSafetensors(path, tensors, error, &metadata))
    return false;
  auto field = [&](const char *key, std::string &out) {
    auto it = metadata.find(key);
    if (it == metadata.end()) {
      error = path + ": not a dlc checkpoint: its metadata has no '" + key + "'";
      return false;
    }
    out = it->second;
    return true;
  };
  auto integer = [&](const char *key, auto &out) {
    std::string text;
    if (!field(key, text))
      return false;
    char *end = nullptr;
    errno = 0;
    unsigned long long v = std::strtoull(text.c_str(), &end, 10);
    if (text.empty() || text[0] == '-' || *end || errno) {
      error = path + ": checkpoint metadata '" + key +
              "' is not a non-negative integer: '" + text + "'";
      return false;
    }
    out = static_cast<std::remove_reference_t<decltype(out)>>(v);
    return true;
  };
  std::string format, version, dropLast, order, lossSum;
  if (!field("format", format))
    return false;
  if (format != kFormat) {
    error = path + ": not a dlc checkpoint: its metadata 'format' is '" + format + "'";
    return false;
  }
  if (!field("format_version", version))
    return false;
  if (version != kFormatVersion) {
    error = path + ": checkpoint format version " + version +
            " is not supported (this dlc reads version " + kFormatVersion + ")";
    return false;
  }
  if (!field("model", info.model) || !field("optimizer", info.optimizer) ||
      !integer("epoch", info.epoch) || !integer("batch_in_epoch", info.batchInEpoch) ||
      !integer("global_step", info.globalStep) || !integer("seed", info.seed) ||
      !integer("batch_size", info.batchSize) || !field("drop_last", dropLast) ||
      !integer("world_size", info.worldSize) || !field("data_order", order) ||
      !field("epoch_loss_sum", lossSum) || !integer("epoch_samples", info.epochSamples))
    return false;
  info.dropLast = dropLast == "true";
  if (auto it = metadata.find("execution"); it != metadata.end())
    info.execution = it->second;
  if (order != kDataOrder) {
    error = path + ": checkpoint data order '" + order + "' is not " + kDataOrder;
    return false;
  }
  char *end = nullptr;
  info.epochLossSum = std::strtod(lossSum.c_str(), &end);
  if (lossSum.empty() || *end) {
    error = path + ": checkpoint metadata 'epoch_loss_sum' is not a number: '" +
            lossSum + "'";
    return false;
  }
  return true;
}

std::string checkState(const std::vector<data::TensorSpec> &expected,
                       const std::map<std::string, HostTensor> &tensors) {
  std::vector<std::string> problems;
  std::set<std::string> names;
  for (const data::TensorSpec &spec : expected) {
    names.insert(spec.name);
    auto it = tensors.find(spec.name);
    std::string want = std::string(dtypeName(spec.dtype)) + formatShape(spec.shape);
    if (it == tensors.end()) {
      problems.push_back("missing '" + spec.name + "' (" + want + ")");
      continue;
    }
    const HostTensor &t = it->second;
    if (t.dtype() != spec.dtype || t.shape() != spec.shape)
      problems.push_back("'" + spec.name + "' is " + dtypeName(t.dtype()) +
                         formatShape(t.shape()) + ", the model's is " + want);
  }
  for (const auto &[name, t] : tensors)
    if (!names.count(name))
      problems.push_back("extra '" + name + "' (" + dtypeName(t.dtype()) +
                         formatShape(t.shape()) + "), not in the model's state");
  std::string text;
  for (const std::string &p : problems)
    text += (text.empty() ? "" : "\n") + p;
  return text;
}

} // namespace dlc::train
