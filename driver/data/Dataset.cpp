//===- Dataset.cpp - .npz datasets and batch gathering --------------------===//

#include "driver/data/Dataset.h"

#include "support/weights/WeightFiles.h"

#include <cstring>
#include <map>

namespace dlc::data {

std::string describeBatched(const TensorSpec &spec) {
  std::string s = std::string(dtypeName(spec.dtype)) + "[N";
  for (int64_t d : spec.shape)
    s += ", " + std::to_string(d);
  return s + "]";
}

static std::string describe(const HostTensor &t) {
  return std::string(dtypeName(t.dtype())) + formatShape(t.shape());
}

/// True if `array` is [n, spec.shape...] for some n.
static bool matchesPerSample(const HostTensor &array, const TensorSpec &spec) {
  if (array.rank() != static_cast<int64_t>(spec.shape.size()) + 1)
    return false;
  for (size_t i = 0; i < spec.shape.size(); ++i)
    if (array.shape()[i + 1] != spec.shape[i])
      return false;
  return true;
}

bool loadNpzDataset(const std::string &path,
                    const std::vector<TensorSpec> &specs, Dataset &out,
                    std::string &error) {
  std::map<std::string, HostTensor> arrays;
  if (!weights::readNpz(path, arrays, error))
    return false;
  std::vector<std::string> problems;
  Dataset dataset;
  dataset.source = path;
  for (const TensorSpec &spec : specs) {
    auto it = arrays.find(spec.name);
    if (it == arrays.end()) {
      std::string held;
      for (const auto &entry : arrays)
        held += (held.empty() ? "'" : ", '") + entry.first + "'";
      problems.push_back("no array '" + spec.name + "' (the model's input " +
                         spec.name + ": " + describeBatched(spec) +
                         "); the file holds " +
                         (held.empty() ? std::string("no arrays") : held));
      continue;
    }
    const HostTensor &array = it->second;
    if (array.dtype() != spec.dtype || !matchesPerSample(array, spec)) {
      problems.push_back("array '" + spec.name + "' is " + describe(array) +
                         ", the model expects " + describeBatched(spec));
      continue;
    }
    dataset.columns.push_back({spec, array, ColumnTransform::Copy});
  }
  if (problems.empty() && !dataset.columns.empty()) {
    const Column &first = dataset.columns.front();
    dataset.numSamples = first.data.shape()[0];
    for (const Column &column : dataset.columns)
      if (column.data.shape()[0] != dataset.numSamples) {
        std::string counts;
        for (const Column &c : dataset.columns)
          counts += (counts.empty() ? "'" : ", '") + c.spec.name + "' has " +
                    std::to_string(c.data.shape()[0]);
        problems.push_back("arrays disagree on the number of samples: " +
                           counts);
        break;
      }
    if (problems.empty() && dataset.numSamples == 0)
      problems.push_back("the arrays hold no samples");
  }
  if (specs.empty())
    problems.push_back("the model takes no inputs to read");
  if (!problems.empty()) {
    error.clear();
    for (const std::string &p : problems)
      error += (error.empty() ? "" : "\n") + path + ": " + p;
    return false;
  }
  out = std::move(dataset);
  return true;
}

/// Appends sample `index` of `column` as row `row` of `batch`.
static void copyRow(const Column &column, int64_t index, HostTensor &batch,
                    int64_t row) {
  int64_t perSample = batch.numel() / batch.shape()[0];
  if (column.transform == ColumnTransform::Copy) {
    size_t rowBytes = static_cast<size_t>(perSample) * elementSize(batch.dtype());
    std::memcpy(batch.mutableData() + row * rowBytes,
                column.data.data() + index * rowBytes, rowBytes);
    return;
  }
  const uint8_t *src = column.data.data() + index * perSample;
  if (batch.dtype() == DType::F32) {
    float *dst = reinterpret_cast<float *>(batch.mutableData()) + row * perSample;
    for (int64_t i = 0; i < perSample; ++i)
      dst[i] = static_cast<float>(src[i] / 255.0); // as setDouble rounds
    return;
  }
  for (int64_t i = 0; i < perSample; ++i)
    batch.setDouble(row * perSample + i, src[i] / 255.0);
}

std::vector<HostTensor> gatherBatch(const Dataset &dataset,
                                    const std::vector<int64_t> &indices) {
  std::vector<HostTensor> batch;
  batch.reserve(dataset.columns.size());
  for (const Column &column : dataset.columns) {
    std::vector<int64_t> shape = {static_cast<int64_t>(indices.size())};
    shape.insert(shape.end(), column.spec.shape.begin(), column.spec.shape.end());
    HostTensor tensor(column.spec.dtype, shape);
    if (!indices.empty())
      for (size_t row = 0; row < indices.size(); ++row)
        copyRow(column, indices[row], tensor, static_cast<int64_t>(row));
    batch.push_back(std::move(tensor));
  }
  return batch;
}

} // namespace dlc::data
