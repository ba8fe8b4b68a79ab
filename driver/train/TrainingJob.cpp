//===- TrainingJob.cpp - Train-step modules compiled ahead, in a folder ---===//

#include "driver/train/TrainingJob.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <iterator>

namespace dlc::train {

namespace fs = std::filesystem;

namespace {
constexpr const char *kFormat = "dlc-train-job";
constexpr int kVersion = 1;

bool writeFile(const fs::path &path, const void *data, size_t size,
               std::string &error) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(static_cast<const char *>(data), static_cast<std::streamsize>(size));
  out.close();
  if (!out) {
    error = "cannot write '" + path.string() + "'";
    return false;
  }
  return true;
}

bool readFile(const fs::path &path, std::vector<uint8_t> &out, std::string &error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = "cannot read '" + path.string() + "'";
    return false;
  }
  out.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return true;
}
} // namespace

bool writeTrainingJob(const std::string &dir, const ModuleStepInfo &info,
                      const std::map<int64_t, ModulePair> &modules,
                      std::string &error) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    error = "cannot create '" + dir + "': " + ec.message();
    return false;
  }
  nlohmann::json job = {
      {"format", kFormat},         {"version", kVersion},
      {"model", info.modelName},   {"loss", info.lossKind},
      {"loss_is_mean", info.lossIsMean},
      {"optimizer", info.optimizer.kind},
      {"lr", info.optimizer.learningRate},
      {"device", info.device},     {"batch_size", info.batchSize},
      {"mesh", info.mesh},         {"ranks", info.ranks},
      {"modules", nlohmann::json::array()}};
  for (const auto &[rows, pair] : modules) {
    std::string train = "train-" + std::to_string(rows) + ".dlcm";
    std::string eval = "eval-" + std::to_string(rows) + ".dlcm";
    if (!writeFile(fs::path(dir) / train, pair.train.data(), pair.train.size(), error) ||
        !writeFile(fs::path(dir) / eval, pair.eval.data(), pair.eval.size(), error))
      return false;
    job["modules"].push_back({{"rows", rows}, {"train", train}, {"eval", eval}});
  }
  std::string text = job.dump(2) + "\n";
  return writeFile(fs::path(dir) / "job.json", text.data(), text.size(), error);
}

bool readTrainingJob(const std::string &dir, ModuleStepInfo &info,
                     std::map<int64_t, ModulePair> &modules, std::string &error) {
  fs::path path = fs::path(dir) / "job.json";
  std::vector<uint8_t> text;
  if (!readFile(path, text, error))
    return false;
  try {
    nlohmann::json job = nlohmann::json::parse(text.begin(), text.end());
    if (job.value("format", "") != kFormat) {
      error = path.string() + ": not a dlc training job ('format' is not '" +
              std::string(kFormat) + "')";
      return false;
    }
    if (job.at("version").get<int>() != kVersion) {
      error = path.string() + ": job version " + job.at("version").dump() +
              " is not supported (this reads version " + std::to_string(kVersion) + ")";
      return false;
    }
    info.modelName = job.at("model").get<std::string>();
    info.lossKind = job.at("loss").get<std::string>();
    info.lossIsMean = job.at("loss_is_mean").get<bool>();
    info.optimizer.kind = job.at("optimizer").get<std::string>();
    info.optimizer.learningRate = job.at("lr").get<double>();
    info.device = job.at("device").get<std::string>();
    info.batchSize = job.at("batch_size").get<int64_t>();
    info.mesh = job.value("mesh", "");
    info.ranks = job.value("ranks", int64_t{1});
    for (const nlohmann::json &m : job.at("modules")) {
      ModulePair &pair = modules[m.at("rows").get<int64_t>()];
      if (!readFile(fs::path(dir) / m.at("train").get<std::string>(), pair.train, error) ||
          !readFile(fs::path(dir) / m.at("eval").get<std::string>(), pair.eval, error))
        return false;
    }
  } catch (const nlohmann::json::exception &e) {
    error = path.string() + ": " + e.what();
    return false;
  }
  if (!modules.count(info.batchSize)) {
    error = path.string() + ": no modules for its batch size " +
            std::to_string(info.batchSize);
    return false;
  }
  return true;
}

} // namespace dlc::train
