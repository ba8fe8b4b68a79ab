//===- OnnxImporterTest.cpp - external data paths and the op table --------===//

#include "frontend/onnx/OnnxImporter.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <string>
#include <unistd.h>

using dlc::onnximport::resolveExternalDataPath;

namespace {

/// A fresh folder `<tmp>/model` with `weights.bin` in it, and a sibling
/// `<tmp>/outside/secret.bin`.
class ExternalDataTest : public ::testing::Test {
protected:
  void SetUp() override {
    char pattern[] = "/tmp/dlc-onnx-unit-XXXXXX";
    root = mkdtemp(pattern);
    model = root + "/model";
    ASSERT_EQ(system(("mkdir -p " + model + "/sub " + root + "/outside").c_str()), 0);
    std::ofstream(model + "/weights.bin") << "w";
    std::ofstream(model + "/sub/more.bin") << "m";
    std::ofstream(root + "/outside/secret.bin") << "s";
  }
  void TearDown() override {
    (void)system(("rm -rf " + root).c_str());
  }
  std::string root, model;
};

TEST_F(ExternalDataTest, AcceptsFilesInsideTheFolder) {
  std::string resolved, error;
  EXPECT_TRUE(resolveExternalDataPath(model, "weights.bin", resolved, error)) << error;
  EXPECT_TRUE(resolved.size() > 11 &&
              resolved.compare(resolved.size() - 11, 11, "weights.bin") == 0);
  EXPECT_TRUE(resolveExternalDataPath(model, "sub/more.bin", resolved, error)) << error;
  EXPECT_TRUE(resolveExternalDataPath(model, "./weights.bin", resolved, error)) << error;
}

TEST_F(ExternalDataTest, RejectsAbsolutePaths) {
  std::string resolved, error;
  EXPECT_FALSE(resolveExternalDataPath(model, model + "/weights.bin", resolved, error));
  EXPECT_NE(error.find("is an absolute path"), std::string::npos) << error;
}

TEST_F(ExternalDataTest, RejectsDotDotEvenWhenItComesBack) {
  std::string resolved, error;
  EXPECT_FALSE(resolveExternalDataPath(model, "../outside/secret.bin", resolved, error));
  EXPECT_NE(error.find("'..' component"), std::string::npos) << error;
  EXPECT_FALSE(resolveExternalDataPath(model, "sub/../weights.bin", resolved, error));
}

TEST_F(ExternalDataTest, RejectsLinksLeavingTheFolder) {
  ASSERT_EQ(symlink((root + "/outside/secret.bin").c_str(),
                    (model + "/link.bin").c_str()), 0);
  ASSERT_EQ(symlink((root + "/outside").c_str(), (model + "/dir").c_str()), 0);
  std::string resolved, error;
  EXPECT_FALSE(resolveExternalDataPath(model, "link.bin", resolved, error));
  EXPECT_NE(error.find("outside the model's folder"), std::string::npos) << error;
  EXPECT_FALSE(resolveExternalDataPath(model, "dir/secret.bin", resolved, error));
  // A link that stays inside is fine.
  ASSERT_EQ(symlink("weights.bin", (model + "/alias.bin").c_str()), 0);
  EXPECT_TRUE(resolveExternalDataPath(model, "alias.bin", resolved, error)) << error;
}

TEST_F(ExternalDataTest, RejectsMissingAndEmpty) {
  std::string resolved, error;
  EXPECT_FALSE(resolveExternalDataPath(model, "nothing.bin", resolved, error));
  EXPECT_NE(error.find("does not exist"), std::string::npos) << error;
  EXPECT_FALSE(resolveExternalDataPath(model, "", resolved, error));
}

TEST(OnnxOpTable, CoversWhatPyTorchExportsUse) {
  auto ops = dlc::onnximport::supportedOpTypes();
  for (const char *op :
       {"Conv", "Gemm", "MatMul", "BatchNormalization", "Relu", "Sigmoid",
        "Tanh", "Erf", "Softmax", "LayerNormalization", "Reshape", "Transpose",
        "Squeeze", "Unsqueeze", "Concat", "Slice", "Split", "Gather", "Expand",
        "Where", "Cast", "Pad", "ReduceMean", "ReduceSum", "MaxPool",
        "AveragePool", "GlobalAveragePool", "Flatten", "Pow", "Sqrt", "Div",
        "Shape", "ConstantOfShape", "Range", "Constant"})
    EXPECT_NE(std::find(ops.begin(), ops.end(), op), ops.end()) << op;
}

} // namespace
