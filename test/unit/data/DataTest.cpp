//===- DataTest.cpp - .npz datasets, IDX folders, the loader --------------===//
#include "driver/data/Dataset.h"
#include "driver/data/Idx.h"
#include "driver/data/Loader.h"

#include "support/weights/WeightFiles.h"
#include "test/unit/common/ScratchDir.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <fstream>
#include <numeric>
#include <set>

using namespace dlc;
using namespace dlc::data;

namespace {

using Bytes = std::vector<uint8_t>;

class DataTest : public ::testing::Test {
protected:
  std::string path(const std::string &name) const { return dir_ / name; }

  static void writeBytes(const std::string &p, const Bytes &b) {
    std::ofstream f(p, std::ios::binary | std::ios::trunc);
    f.write(reinterpret_cast<const char *>(b.data()), static_cast<std::streamsize>(b.size()));
  }
  static void writeGzip(const std::string &p, const Bytes &b) {
    gzFile f = gzopen(p.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    ASSERT_EQ(gzwrite(f, b.data(), static_cast<unsigned>(b.size())), static_cast<int>(b.size()));
    gzclose(f);
  }

  dlc::testing::ScratchDir dir_{"dlc_data"};
};

/// An IDX image: magic (0, 0, type, rank), big-endian dims, then `data`.
Bytes idx(uint8_t type, const std::vector<uint32_t> &dims, const Bytes &data) {
  Bytes b = {0, 0, type, static_cast<uint8_t>(dims.size())};
  for (uint32_t d : dims)
    for (int shift = 24; shift >= 0; shift -= 8)
      b.push_back(static_cast<uint8_t>(d >> shift));
  b.insert(b.end(), data.begin(), data.end());
  return b;
}

Bytes iota(size_t n, uint8_t start = 0) {
  Bytes b(n);
  std::iota(b.begin(), b.end(), start);
  return b;
}

TensorSpec spec(const std::string &name, DType dtype, std::vector<int64_t> shape) {
  return {name, dtype, std::move(shape)};
}

// ---- .npz datasets ------------------------------------------------------------

TEST_F(DataTest, NpzDatasetTakesTheModelsArraysInItsOrder) {
  std::string err;
  std::map<std::string, HostTensor> arrays = {
      {"x", HostTensor::fromDoubles(DType::F32, {3, 2}, {0, 1, 2, 3, 4, 5})},
      {"label", HostTensor::fromDoubles(DType::I32, {3}, {7, 8, 9})},
      {"unused", HostTensor::fromDoubles(DType::F64, {1}, {0})}};
  ASSERT_TRUE(weights::writeNpz(path("d.npz"), arrays, err)) << err;
  Dataset d;
  ASSERT_TRUE(loadNpzDataset(path("d.npz"),
                             {spec("label", DType::I32, {}), spec("x", DType::F32, {2})},
                             d, err))
      << err;
  EXPECT_EQ(d.numSamples, 3);
  ASSERT_EQ(d.columns.size(), 2u);
  EXPECT_EQ(d.columns[0].spec.name, "label");
  EXPECT_EQ(d.columns[1].spec.name, "x");
  std::vector<HostTensor> batch = gatherBatch(d, {2, 0});
  EXPECT_EQ(batch[0].shape(), (std::vector<int64_t>{2}));
  EXPECT_EQ(batch[0].toDoubles(), (std::vector<double>{9, 7}));
  EXPECT_EQ(batch[1].shape(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(batch[1].toDoubles(), (std::vector<double>{4, 5, 0, 1}));
}

TEST_F(DataTest, NpzDatasetReportsEveryMismatchAtOnce) {
  std::string err;
  std::map<std::string, HostTensor> arrays = {
      {"x", HostTensor(DType::F64, {100, 4})},
      {"y", HostTensor(DType::F32, {100, 3})},
      {"z", HostTensor(DType::F32, {100})}};
  ASSERT_TRUE(weights::writeNpz(path("d.npz"), arrays, err)) << err;
  Dataset d;
  EXPECT_FALSE(loadNpzDataset(path("d.npz"),
                              {spec("x", DType::F32, {4}), spec("y", DType::F32, {}),
                               spec("label", DType::I32, {})},
                              d, err));
  std::string p = path("d.npz");
  EXPECT_EQ(err, p + ": array 'x' is f64[100, 4], the model expects f32[N, 4]\n" + p +
                     ": array 'y' is f32[100, 3], the model expects f32[N]\n" + p +
                     ": no array 'label' (the model's input label: i32[N]); the file "
                     "holds 'x', 'y', 'z'");
}

TEST_F(DataTest, NpzDatasetSampleCountsMustAgree) {
  std::string err;
  std::map<std::string, HostTensor> arrays = {{"x", HostTensor(DType::F32, {5, 2})},
                                              {"y", HostTensor(DType::F32, {4})}};
  ASSERT_TRUE(weights::writeNpz(path("d.npz"), arrays, err)) << err;
  Dataset d;
  EXPECT_FALSE(loadNpzDataset(path("d.npz"),
                              {spec("x", DType::F32, {2}), spec("y", DType::F32, {})}, d, err));
  EXPECT_EQ(err, path("d.npz") +
                     ": arrays disagree on the number of samples: 'x' has 5, 'y' has 4");
  arrays = {{"x", HostTensor(DType::F32, {0, 2})}};
  ASSERT_TRUE(weights::writeNpz(path("e.npz"), arrays, err)) << err;
  EXPECT_FALSE(loadNpzDataset(path("e.npz"), {spec("x", DType::F32, {2})}, d, err));
  EXPECT_EQ(err, path("e.npz") + ": the arrays hold no samples");
  EXPECT_FALSE(loadNpzDataset(path("missing.npz"), {spec("x", DType::F32, {2})}, d, err));
  EXPECT_NE(err.find("missing.npz"), std::string::npos) << err;
}

// ---- IDX ------------------------------------------------------------------------

TEST_F(DataTest, IdxReadsEveryTypeBigEndian) {
  std::string err;
  HostTensor t;
  writeBytes(path("u8"), idx(0x08, {2, 3}, iota(6, 250)));
  ASSERT_TRUE(readIdx(path("u8"), t, err)) << err;
  EXPECT_EQ(t.dtype(), DType::U8);
  EXPECT_EQ(t.shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(t.toDoubles(), (std::vector<double>{250, 251, 252, 253, 254, 255}));
  writeBytes(path("i32"), idx(0x0C, {2}, {0, 0, 1, 2, 0xFF, 0xFF, 0xFF, 0xFE}));
  ASSERT_TRUE(readIdx(path("i32"), t, err)) << err;
  EXPECT_EQ(t.dtype(), DType::I32);
  EXPECT_EQ(t.toDoubles(), (std::vector<double>{258, -2}));
  writeBytes(path("f32"), idx(0x0D, {1}, {0x3F, 0xC0, 0, 0}));
  ASSERT_TRUE(readIdx(path("f32"), t, err)) << err;
  EXPECT_EQ(t.toDoubles(), (std::vector<double>{1.5}));
  writeGzip(path("g.gz"), idx(0x08, {3}, {1, 2, 3}));
  ASSERT_TRUE(readIdx(path("g.gz"), t, err)) << err;
  EXPECT_EQ(t.toDoubles(), (std::vector<double>{1, 2, 3}));
}

TEST_F(DataTest, IdxErrorsNameTheFileAndTheByte) {
  std::string err;
  HostTensor t;
  writeBytes(path("magic"), {'P', '5', 8, 1, 0, 0, 0, 1, 5});
  EXPECT_FALSE(readIdx(path("magic"), t, err));
  EXPECT_EQ(err, path("magic") + ": IDX header at byte 0: bad magic number 0x50350801: an "
                                 "IDX file starts with two zero bytes, a type code and the "
                                 "number of dimensions");
  // A file that starts as gzip does is decompressed; a broken one says so.
  writeBytes(path("broken.gz"), {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 0xff, 0xff, 0xff, 0xff});
  EXPECT_FALSE(readIdx(path("broken.gz"), t, err));
  EXPECT_EQ(err.rfind(path("broken.gz") + ": IDX header at byte 0: cannot decompress: ", 0),
            0u)
      << err;
  writeBytes(path("type"), idx(0x0B, {1}, {0, 1}));
  EXPECT_FALSE(readIdx(path("type"), t, err));
  EXPECT_EQ(err, path("type") + ": IDX header at byte 2: type code 0b is not supported "
                                "(0x08 u8, 0x09 i8, 0x0c i32, 0x0d f32, 0x0e f64)");
  writeBytes(path("header"), {0, 0, 8, 3, 0, 0, 0, 2, 0, 0});
  EXPECT_FALSE(readIdx(path("header"), t, err));
  EXPECT_EQ(err, path("header") + ": IDX header at byte 8: truncated: expected 4 bytes of "
                                  "dimension 1, the file ends after 2");
  writeBytes(path("data"), idx(0x08, {2, 2, 2}, iota(5)));
  EXPECT_FALSE(readIdx(path("data"), t, err));
  EXPECT_EQ(err, path("data") + ": data at byte 16: truncated: expected 8 bytes of "
                                "u8[2, 2, 2], the file ends after 5");
  writeGzip(path("data.gz"), idx(0x08, {2, 2, 2}, iota(5)));
  EXPECT_FALSE(readIdx(path("data.gz"), t, err));
  EXPECT_EQ(err, path("data.gz") + ": data at byte 16: truncated: expected 8 bytes of "
                                   "u8[2, 2, 2], the file ends after 5");
  writeBytes(path("long"), idx(0x08, {3}, iota(4)));
  EXPECT_FALSE(readIdx(path("long"), t, err));
  EXPECT_EQ(err, path("long") + ": data at byte 11: the file goes on past the 3 bytes of "
                                "u8[3] its header describes");
  // A cut gzip stream: zlib's message, or a truncation, never a crash.
  writeGzip(path("cut.gz"), idx(0x08, {4000}, Bytes(4000, 7)));
  Bytes whole;
  {
    std::ifstream f(path("cut.gz"), std::ios::binary);
    whole.assign(std::istreambuf_iterator<char>(f), {});
  }
  whole.resize(whole.size() / 2);
  writeBytes(path("cut.gz"), whole);
  EXPECT_FALSE(readIdx(path("cut.gz"), t, err));
  EXPECT_EQ(err.rfind(path("cut.gz") + ": ", 0), 0u) << err;
  EXPECT_FALSE(readIdx(path("absent"), t, err));
  EXPECT_EQ(err, "cannot open '" + path("absent") + "': No such file or directory");
}

TEST_F(DataTest, IdxFolderFeedsImagesAndLabels) {
  writeGzip(path("train-images-idx3-ubyte.gz"), idx(0x08, {3, 2, 2}, {0, 51, 102, 255, 1, 2, 3, 4, 5, 6, 7, 8}));
  writeBytes(path("train-labels-idx1-ubyte"), idx(0x08, {3}, {9, 0, 4}));
  EXPECT_TRUE(hasIdxSplit(dir_.str(), IdxSplit::Train));
  EXPECT_FALSE(hasIdxSplit(dir_.str(), IdxSplit::Test));
  std::string err;
  Dataset d;
  ASSERT_TRUE(loadIdxDataset(dir_.str(), IdxSplit::Train, spec("x", DType::F32, {4}),
                             spec("label", DType::I64, {}), d, err))
      << err;
  EXPECT_EQ(d.numSamples, 3);
  std::vector<HostTensor> batch = gatherBatch(d, {0, 2});
  EXPECT_EQ(batch[0].shape(), (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(batch[0].toDoubles(),
            (std::vector<double>{0, double(float(51 / 255.0)), double(float(102 / 255.0)), 1,
                                 double(float(5 / 255.0)), double(float(6 / 255.0)),
                                 double(float(7 / 255.0)), double(float(8 / 255.0))}));
  EXPECT_EQ(batch[1].dtype(), DType::I64);
  EXPECT_EQ(batch[1].toDoubles(), (std::vector<double>{9, 4}));
  // [1, 2, 2] and u8 as they are.
  ASSERT_TRUE(loadIdxDataset(dir_.str(), IdxSplit::Train, spec("x", DType::U8, {1, 2, 2}),
                             spec("label", DType::I32, {1}), d, err))
      << err;
  batch = gatherBatch(d, {1});
  EXPECT_EQ(batch[0].toDoubles(), (std::vector<double>{1, 2, 3, 4}));
  EXPECT_EQ(batch[1].shape(), (std::vector<int64_t>{1, 1}));
  // Mismatches.
  EXPECT_FALSE(loadIdxDataset(dir_.str(), IdxSplit::Train, spec("x", DType::F32, {5}),
                              spec("label", DType::I32, {}), d, err));
  EXPECT_EQ(err, path("train-images-idx3-ubyte.gz") +
                     ": images are u8[2, 2] (4 values), the model's input 'x' takes "
                     "f32[N, 5] (5 per sample)");
  EXPECT_FALSE(loadIdxDataset(dir_.str(), IdxSplit::Train, spec("x", DType::I32, {4}),
                              spec("label", DType::I32, {}), d, err));
  EXPECT_NE(err.find("images are u8, the model's input 'x' takes i32[N, 4]"), std::string::npos)
      << err;
  EXPECT_FALSE(loadIdxDataset(dir_.str(), IdxSplit::Train, spec("x", DType::F32, {4}),
                              spec("label", DType::F32, {}), d, err));
  EXPECT_EQ(err, "the model's input 'label' (f32[N]) cannot take the labels of an IDX "
                 "folder: they need an integer input with one value per sample");
  EXPECT_FALSE(loadIdxDataset(dir_.str(), IdxSplit::Test, spec("x", DType::F32, {4}),
                              spec("label", DType::I32, {}), d, err));
  EXPECT_EQ(err, "cannot open '" + dir_.str() +
                     "/t10k-images-idx3-ubyte' (or t10k-images-idx3-ubyte.gz): No such "
                     "file or directory");
  // Counts that disagree: the labels' count at byte 4.
  writeBytes(path("train-labels-idx1-ubyte"), idx(0x08, {2}, {9, 0}));
  EXPECT_FALSE(loadIdxDataset(dir_.str(), IdxSplit::Train, spec("x", DType::F32, {4}),
                              spec("label", DType::I32, {}), d, err));
  EXPECT_EQ(err, path("train-labels-idx1-ubyte") + ": IDX header at byte 4: 2 labels, but " +
                     path("train-images-idx3-ubyte.gz") + " holds 3 images (its byte 4)");
}

TEST_F(DataTest, FashionMnistFromDebian) {
  const std::string dir = "/usr/share/datasets/fashion-mnist";
  if (!hasIdxSplit(dir, IdxSplit::Train))
    GTEST_SKIP() << dir << " is missing (Debian's dataset-fashion-mnist)";
  std::string err;
  Dataset train, test;
  ASSERT_TRUE(loadIdxDataset(dir, IdxSplit::Train, spec("x", DType::F32, {784}),
                             spec("label", DType::I32, {}), train, err))
      << err;
  ASSERT_TRUE(loadIdxDataset(dir, IdxSplit::Test, spec("x", DType::F32, {784}),
                             spec("label", DType::I32, {}), test, err))
      << err;
  EXPECT_EQ(train.numSamples, 60000);
  EXPECT_EQ(test.numSamples, 10000);
  std::vector<int64_t> perClass(10);
  const HostTensor &labels = train.columns[1].data;
  for (int64_t i = 0; i < labels.numel(); ++i) {
    int64_t label = labels.getInt64(i);
    ASSERT_TRUE(label >= 0 && label < 10) << label;
    ++perClass[label];
  }
  EXPECT_EQ(perClass, std::vector<int64_t>(10, 6000));
}

// ---- the loader -------------------------------------------------------------------

TEST(LoaderTest, PermutationIsTheDocumentedAlgorithm) {
  // From a Python re-implementation of Loader.h's algorithm.
  EXPECT_EQ(epochPermutation(42, 3, 10), (std::vector<int64_t>{0, 3, 4, 6, 1, 5, 9, 2, 7, 8}));
  EXPECT_EQ(epochPermutation(42, 4, 10), (std::vector<int64_t>{5, 0, 6, 2, 7, 3, 4, 8, 9, 1}));
  EXPECT_EQ(epochPermutation(0, 0, 10), (std::vector<int64_t>{0, 1, 4, 6, 3, 9, 8, 7, 2, 5}));
  std::vector<int64_t> p = epochPermutation(7, 1, 1000);
  std::vector<int64_t> sorted = p;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int64_t> identity(1000);
  std::iota(identity.begin(), identity.end(), 0);
  EXPECT_EQ(sorted, identity);
  EXPECT_EQ(p, epochPermutation(7, 1, 1000));
  EXPECT_NE(p, epochPermutation(7, 2, 1000));
  EXPECT_NE(p, epochPermutation(8, 1, 1000));
  EXPECT_TRUE(epochPermutation(1, 1, 0).empty());
}

/// A dataset of `n` samples whose one column holds the sample's index.
Dataset indexDataset(int64_t n) {
  Dataset d;
  d.source = "indices";
  d.numSamples = n;
  std::vector<double> values(static_cast<size_t>(n));
  std::iota(values.begin(), values.end(), 0);
  d.columns.push_back({{"i", DType::I64, {}}, HostTensor::fromDoubles(DType::I64, {n}, values),
                       ColumnTransform::Copy});
  return d;
}

std::vector<int64_t> ints(const HostTensor &t) {
  std::vector<int64_t> v;
  for (int64_t i = 0; i < t.numel(); ++i)
    v.push_back(t.getInt64(i));
  return v;
}

TEST(LoaderTest, EpochsOfBatchesInThePermutation) {
  Dataset d = indexDataset(10);
  LoaderOptions options;
  options.batchSize = 4;
  options.seed = 5;
  Loader loader(d, options);
  EXPECT_EQ(loader.batchesPerEpoch(), 3);
  loader.start(0, 0, 2);
  Batch b;
  for (int64_t epoch = 0; epoch < 2; ++epoch) {
    std::vector<int64_t> seen;
    for (int64_t index = 0; index < 3; ++index) {
      ASSERT_TRUE(loader.next(b));
      EXPECT_EQ(b.epoch, epoch);
      EXPECT_EQ(b.index, index);
      EXPECT_EQ(b.globalSize, index < 2 ? 4 : 2);
      ASSERT_EQ(b.tensors.size(), 1u);
      std::vector<int64_t> v = ints(b.tensors[0]);
      seen.insert(seen.end(), v.begin(), v.end());
    }
    EXPECT_EQ(seen, epochPermutation(5, epoch, 10));
  }
  EXPECT_FALSE(loader.next(b));

  // --drop-last; a start in the middle replays the same batches.
  options.dropLast = true;
  Loader dropping(d, options);
  EXPECT_EQ(dropping.batchesPerEpoch(), 2);
  dropping.start(1, 1, 3);
  std::vector<std::pair<int64_t, int64_t>> positions;
  while (dropping.next(b)) {
    positions.push_back({b.epoch, b.index});
    std::vector<int64_t> p = epochPermutation(5, b.epoch, 10);
    EXPECT_EQ(ints(b.tensors[0]),
              std::vector<int64_t>(p.begin() + b.index * 4, p.begin() + b.index * 4 + 4));
  }
  EXPECT_EQ(positions, (std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {2, 0}, {2, 1}}));
}

TEST(LoaderTest, RanksReadContiguousShardsOfEachBatch) {
  Dataset d = indexDataset(11);
  std::vector<std::vector<int64_t>> global;
  LoaderOptions options;
  options.batchSize = 4;
  options.seed = 3;
  {
    Loader whole(d, options);
    whole.start(0, 0, 1);
    Batch b;
    while (whole.next(b))
      global.push_back(ints(b.tensors[0]));
  }
  ASSERT_EQ(global.size(), 3u);
  std::vector<std::vector<int64_t>> joined(3);
  options.worldSize = 2;
  for (options.rank = 0; options.rank < 2; ++options.rank) {
    Loader shard(d, options);
    shard.start(0, 0, 1);
    Batch b;
    for (size_t i = 0; shard.next(b); ++i) {
      std::vector<int64_t> v = ints(b.tensors[0]);
      EXPECT_EQ(v.size(), i < 2 ? 2u : (options.rank == 0 ? 1u : 2u));
      joined[i].insert(joined[i].end(), v.begin(), v.end());
    }
  }
  EXPECT_EQ(joined, global);
  options.rank = 1;
  options.batchSize = 5;
  EXPECT_EQ(checkLoaderOptions(options, 11), "the batch size 5 is not a multiple of the 2 ranks");
}

TEST(LoaderTest, OptionsThatMakeNoBatchAreRefused) {
  LoaderOptions options;
  options.batchSize = 0;
  EXPECT_EQ(checkLoaderOptions(options, 5), "the batch size must be at least 1, got 0");
  options.batchSize = 8;
  EXPECT_EQ(checkLoaderOptions(options, 5), "");
  options.dropLast = true;
  EXPECT_EQ(checkLoaderOptions(options, 5),
            "5 samples make no batch of 8 (the partial batch is dropped)");
}

TEST(LoaderTest, StoppingWithBatchesQueuedDoesNotHang) {
  Dataset d = indexDataset(1000);
  LoaderOptions options;
  options.batchSize = 1;
  options.prefetch = 3;
  Loader loader(d, options);
  loader.start(0, 0, 100);
  Batch b;
  ASSERT_TRUE(loader.next(b));
  loader.start(5, 7, 6); // restarts elsewhere
  ASSERT_TRUE(loader.next(b));
  EXPECT_EQ(b.epoch, 5);
  EXPECT_EQ(b.index, 7);
  // the destructor stops a producer blocked on a full queue
}

} // namespace
