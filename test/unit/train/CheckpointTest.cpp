//===- CheckpointTest.cpp - atomic checkpoints, metadata, state checks -----===//
#include "driver/train/Checkpoint.h"

#include "support/weights/WeightFiles.h"
#include "test/unit/common/ScratchDir.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

using namespace dlc;
using namespace dlc::train;
namespace fs = std::filesystem;

namespace {

class CheckpointTest : public ::testing::Test {
protected:
  /// Where the checkpoints go (created by the first write).
  std::string dir() const { return scratch_ / "ckpt"; }
  std::vector<std::string> names() const {
    std::vector<std::string> n;
    for (const auto &entry : fs::directory_iterator(dir()))
      n.push_back(entry.path().filename().string());
    std::sort(n.begin(), n.end());
    return n;
  }

  dlc::testing::ScratchDir scratch_{"dlc_ckpt"};
};

CheckpointInfo sampleInfo(int64_t step) {
  CheckpointInfo info;
  info.model = "mnist_mlp";
  info.optimizer = "adamw";
  info.epoch = 2;
  info.batchInEpoch = 17;
  info.globalStep = step;
  info.seed = 18446744073709551615ull;
  info.batchSize = 64;
  info.dropLast = true;
  info.worldSize = 1;
  info.epochLossSum = 0.1 + 0.2; // not exact in decimal
  info.epochSamples = 1088;
  return info;
}

std::map<std::string, HostTensor> sampleState() {
  return {{"w", HostTensor::fromDoubles(DType::F32, {2, 2}, {1, 2, 3, 4})},
          {"w.m", HostTensor(DType::F32, {2, 2})},
          {"step", HostTensor::fromDoubles(DType::F32, {}, {7})}};
}

TEST_F(CheckpointTest, RoundTripKeepsStateAndPosition) {
  std::string path, err;
  ASSERT_TRUE(writeCheckpoint(dir(), sampleInfo(1234), sampleState(), 3, path, err)) << err;
  EXPECT_EQ(path, dir() + "/ckpt-1234.safetensors");
  EXPECT_EQ(names(), (std::vector<std::string>{"ckpt-1234.safetensors"})); // no temporary left
  CheckpointInfo info;
  std::map<std::string, HostTensor> state;
  ASSERT_TRUE(readCheckpoint(path, info, state, err)) << err;
  CheckpointInfo want = sampleInfo(1234);
  EXPECT_EQ(info.model, want.model);
  EXPECT_EQ(info.optimizer, want.optimizer);
  EXPECT_EQ(info.epoch, want.epoch);
  EXPECT_EQ(info.batchInEpoch, want.batchInEpoch);
  EXPECT_EQ(info.globalStep, want.globalStep);
  EXPECT_EQ(info.seed, want.seed);
  EXPECT_EQ(info.batchSize, want.batchSize);
  EXPECT_EQ(info.dropLast, want.dropLast);
  EXPECT_EQ(info.epochLossSum, want.epochLossSum); // bit for bit
  EXPECT_EQ(info.epochSamples, want.epochSamples);
  ASSERT_EQ(state.size(), 3u);
  EXPECT_EQ(state["w"].toDoubles(), (std::vector<double>{1, 2, 3, 4}));
  EXPECT_EQ(state["step"].toDoubles(), (std::vector<double>{7}));
  // The metadata is the documented string map.
  std::map<std::string, HostTensor> tensors;
  weights::SafetensorsMetadata metadata;
  ASSERT_TRUE(weights::readSafetensors(path, tensors, err, &metadata)) << err;
  EXPECT_EQ(metadata["format"], "dlc-checkpoint");
  EXPECT_EQ(metadata["format_version"], "1");
  EXPECT_EQ(metadata["global_step"], "1234");
  EXPECT_EQ(metadata["batch_in_epoch"], "17");
  EXPECT_EQ(metadata["data_order"], "splitmix64-fisher-yates");
}

TEST_F(CheckpointTest, KeepsTheNewestK) {
  std::string path, err;
  for (int64_t step : {5, 10, 9, 100, 20})
    ASSERT_TRUE(writeCheckpoint(dir(), sampleInfo(step), sampleState(), 2, path, err)) << err;
  // Sorted by step, not by name: ckpt-9 is older than ckpt-10.
  EXPECT_EQ(names(), (std::vector<std::string>{"ckpt-100.safetensors", "ckpt-20.safetensors"}));
  std::vector<CheckpointFile> files = listCheckpoints(dir());
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[0].globalStep, 20);
  EXPECT_EQ(files[1].globalStep, 100);
  EXPECT_TRUE(listCheckpoints(scratch_ / "absent").empty());
}

TEST_F(CheckpointTest, TemporariesAreIgnoredAndRemoved) {
  std::string path, err;
  ASSERT_TRUE(writeCheckpoint(dir(), sampleInfo(3), sampleState(), 3, path, err)) << err;
  std::ofstream(dir() + "/.ckpt-4.safetensors.tmp") << "half a file";
  std::ofstream(dir() + "/ckpt-x.safetensors") << "not ours";
  std::ofstream(dir() + "/notes.txt") << "kept";
  std::vector<CheckpointFile> files = listCheckpoints(dir());
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0].globalStep, 3);
  removeStaleTemporaries(dir());
  EXPECT_EQ(names(), (std::vector<std::string>{"ckpt-3.safetensors", "ckpt-x.safetensors",
                                               "notes.txt"}));
}

TEST_F(CheckpointTest, ForeignFilesAreNotCheckpoints) {
  std::string err;
  std::string plain = scratch_ / "plain.safetensors";
  ASSERT_TRUE(weights::writeSafetensors(plain, sampleState(), err)) << err;
  CheckpointInfo info;
  std::map<std::string, HostTensor> state;
  EXPECT_FALSE(readCheckpoint(plain, info, state, err));
  EXPECT_EQ(err, plain + ": not a dlc checkpoint: its metadata has no 'format'");
  weights::SafetensorsMetadata metadata = {{"format", "dlc-checkpoint"},
                                           {"format_version", "7"}};
  ASSERT_TRUE(weights::writeSafetensors(plain, sampleState(), err, &metadata)) << err;
  EXPECT_FALSE(readCheckpoint(plain, info, state, err));
  EXPECT_EQ(err, plain + ": checkpoint format version 7 is not supported (this dlc reads "
                         "version 1)");
}

TEST_F(CheckpointTest, StateCheckListsEveryMismatch) {
  std::vector<data::TensorSpec> expected = {{"w", DType::F32, {2, 2}},
                                            {"w.v", DType::F32, {2, 2}},
                                            {"step", DType::I64, {}},
                                            {"b", DType::F32, {3}}};
  std::map<std::string, HostTensor> state = sampleState();
  state["b"] = HostTensor(DType::F32, {4});
  EXPECT_EQ(checkState(expected, state),
            "missing 'w.v' (f32[2, 2])\n"
            "'step' is f32[], the model's is i64[]\n"
            "'b' is f32[4], the model's is f32[3]\n"
            "extra 'w.m' (f32[2, 2]), not in the model's state");
  EXPECT_EQ(checkState({{"w", DType::F32, {2, 2}}},
                       {{"w", HostTensor(DType::F32, {2, 2})}}),
            "");
}

} // namespace
