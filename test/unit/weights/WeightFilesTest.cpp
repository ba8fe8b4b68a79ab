//===- WeightFilesTest.cpp - .npy / .npz / .safetensors files -------------===//
#include "support/weights/WeightFiles.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <unistd.h>

using namespace dlc;
using namespace dlc::weights;
namespace fs = std::filesystem;

namespace {

// np.savez_compressed(f, a=np.arange(6, dtype=np.float32).reshape(2, 3),
//                     b=np.array([1, -2, 3], dtype=np.int64))  (numpy 2.x)
const uint8_t kNumpyCompressedNpz[] = {
    0x50, 0x4b, 0x03, 0x04, 0x2d, 0x00, 0x00, 0x00, 0x08, 0x00, 0x00, 0x00, 0x21, 0x00, 0x4f, 0xe9,
    0x00, 0x2a, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x05, 0x00, 0x14, 0x00, 0x61, 0x2e,
    0x6e, 0x70, 0x79, 0x01, 0x00, 0x10, 0x00, 0x98, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x55,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x9b, 0xec, 0x17, 0xea, 0x1b, 0x10, 0xc9, 0xc8, 0x50,
    0xc6, 0x50, 0xad, 0x9e, 0x92, 0x5a, 0x9c, 0x5c, 0xa4, 0x6e, 0xa5, 0xa0, 0x6e, 0x93, 0x66, 0xa2,
    0xae, 0xa3, 0xa0, 0x9e, 0x96, 0x5f, 0x54, 0x52, 0x94, 0x98, 0x17, 0x9f, 0x5f, 0x94, 0x92, 0x0a,
    0x12, 0x77, 0x4b, 0xcc, 0x29, 0x4e, 0x05, 0x8a, 0x17, 0x67, 0x24, 0x16, 0xa4, 0x02, 0xf9, 0x1a,
    0x46, 0x3a, 0x0a, 0xc6, 0x9a, 0x3a, 0x0a, 0xb5, 0x0a, 0x64, 0x03, 0x2e, 0x06, 0x30, 0x68, 0xb0,
    0x07, 0x12, 0x0e, 0x40, 0x04, 0xc4, 0x0d, 0x40, 0xbc, 0xc0, 0x01, 0x00, 0x50, 0x4b, 0x03, 0x04,
    0x2d, 0x00, 0x00, 0x00, 0x08, 0x00, 0x00, 0x00, 0x21, 0x00, 0x74, 0xa8, 0xf3, 0x30, 0xff, 0xff,
    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x05, 0x00, 0x14, 0x00, 0x62, 0x2e, 0x6e, 0x70, 0x79, 0x01,
    0x00, 0x10, 0x00, 0x98, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x4e, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x9b, 0xec, 0x17, 0xea, 0x1b, 0x10, 0xc9, 0xc8, 0x50, 0xc6, 0x50, 0xad, 0x9e,
    0x92, 0x5a, 0x9c, 0x5c, 0xa4, 0x6e, 0xa5, 0xa0, 0x6e, 0x93, 0x69, 0xa1, 0xae, 0xa3, 0xa0, 0x9e,
    0x96, 0x5f, 0x54, 0x52, 0x94, 0x98, 0x17, 0x9f, 0x5f, 0x94, 0x92, 0x0a, 0x12, 0x77, 0x4b, 0xcc,
    0x29, 0x4e, 0x05, 0x8a, 0x17, 0x67, 0x24, 0x16, 0xa4, 0x02, 0xf9, 0x1a, 0xc6, 0x3a, 0x9a, 0x3a,
    0x0a, 0xb5, 0x0a, 0x14, 0x00, 0x2e, 0x46, 0x06, 0x08, 0xf8, 0xf7, 0x1f, 0x02, 0x98, 0xa1, 0x7c,
    0x00, 0x50, 0x4b, 0x01, 0x02, 0x2d, 0x03, 0x2d, 0x00, 0x00, 0x00, 0x08, 0x00, 0x00, 0x00, 0x21,
    0x00, 0x4f, 0xe9, 0x00, 0x2a, 0x55, 0x00, 0x00, 0x00, 0x98, 0x00, 0x00, 0x00, 0x05, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80, 0x01, 0x00, 0x00, 0x00, 0x00, 0x61,
    0x2e, 0x6e, 0x70, 0x79, 0x50, 0x4b, 0x01, 0x02, 0x2d, 0x03, 0x2d, 0x00, 0x00, 0x00, 0x08, 0x00,
    0x00, 0x00, 0x21, 0x00, 0x74, 0xa8, 0xf3, 0x30, 0x4e, 0x00, 0x00, 0x00, 0x98, 0x00, 0x00, 0x00,
    0x05, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80, 0x01, 0x8c, 0x00,
    0x00, 0x00, 0x62, 0x2e, 0x6e, 0x70, 0x79, 0x50, 0x4b, 0x05, 0x06, 0x00, 0x00, 0x00, 0x00, 0x02,
    0x00, 0x02, 0x00, 0x66, 0x00, 0x00, 0x00, 0x11, 0x01, 0x00, 0x00, 0x00, 0x00};

// np.savez(f, x=np.array([[1, 2], [3, 4]], dtype=np.int32))  -- local headers carry ZIP64 extras
const uint8_t kNumpyStoredNpz[] = {
    0x50, 0x4b, 0x03, 0x04, 0x2d, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x21, 0x00, 0x7b, 0xc8,
    0x61, 0x7c, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x05, 0x00, 0x14, 0x00, 0x78, 0x2e,
    0x6e, 0x70, 0x79, 0x01, 0x00, 0x10, 0x00, 0x90, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x90,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 0x01, 0x00, 0x76,
    0x00, 0x7b, 0x27, 0x64, 0x65, 0x73, 0x63, 0x72, 0x27, 0x3a, 0x20, 0x27, 0x3c, 0x69, 0x34, 0x27,
    0x2c, 0x20, 0x27, 0x66, 0x6f, 0x72, 0x74, 0x72, 0x61, 0x6e, 0x5f, 0x6f, 0x72, 0x64, 0x65, 0x72,
    0x27, 0x3a, 0x20, 0x46, 0x61, 0x6c, 0x73, 0x65, 0x2c, 0x20, 0x27, 0x73, 0x68, 0x61, 0x70, 0x65,
    0x27, 0x3a, 0x20, 0x28, 0x32, 0x2c, 0x20, 0x32, 0x29, 0x2c, 0x20, 0x7d, 0x20, 0x20, 0x20, 0x20,
    0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
    0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
    0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
    0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x0a, 0x01, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x03,
    0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x50, 0x4b, 0x01, 0x02, 0x2d, 0x03, 0x2d, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x21, 0x00, 0x7b, 0xc8, 0x61, 0x7c, 0x90, 0x00, 0x00, 0x00, 0x90,
    0x00, 0x00, 0x00, 0x05, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80,
    0x01, 0x00, 0x00, 0x00, 0x00, 0x78, 0x2e, 0x6e, 0x70, 0x79, 0x50, 0x4b, 0x05, 0x06, 0x00, 0x00,
    0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x33, 0x00, 0x00, 0x00, 0xc7, 0x00, 0x00, 0x00, 0x00, 0x00};

using Bytes = std::vector<uint8_t>;

const DType kAllTypes[] = {DType::F64, DType::F32, DType::F16,
                                 DType::BF16, DType::I64, DType::I32,
                                 DType::I8,  DType::U8,  DType::I1};

class WeightsTest : public ::testing::Test {
protected:
  void SetUp() override {
    const auto *info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::path(::testing::TempDir()) /
           ("dlc_weights_" + std::to_string(::getpid()) + "_" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string path(const std::string &name) const { return (dir_ / name).string(); }

  static void writeBytes(const std::string &p, const Bytes &b) {
    std::ofstream f(p, std::ios::binary | std::ios::trunc);
    f.write(reinterpret_cast<const char *>(b.data()), static_cast<std::streamsize>(b.size()));
  }
  static Bytes readBytes(const std::string &p) {
    std::ifstream f(p, std::ios::binary);
    return Bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  }

  fs::path dir_;
};

// Values that are exactly representable in every type (including bool: 0/1
// and u8: non-negative small integers).
std::vector<double> sampleValues(DType t, size_t n) {
  std::vector<double> v(n);
  for (size_t i = 0; i < n; ++i) {
    switch (t) {
    case DType::I1: v[i] = (i % 3) == 1; break;
    case DType::U8: v[i] = static_cast<double>((i * 37) % 256); break;
    case DType::I8: v[i] = static_cast<double>(static_cast<int>((i * 37) % 256) - 128); break;
    case DType::I32:
    case DType::I64: v[i] = (i % 2 ? -1.0 : 1.0) * static_cast<double>(i * 1000 + 7); break;
    default: v[i] = (i % 2 ? -0.5 : 1.25) * static_cast<double>(i) + 0.125; break;
    }
  }
  return v;
}

HostTensor sampleArray(DType t, std::vector<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return HostTensor::fromDoubles(t, std::move(shape), sampleValues(t, static_cast<size_t>(n)));
}

Bytes bytesOf(const HostTensor &t) { return Bytes(t.data(), t.data() + t.byteSize()); }

void expectSame(const HostTensor &a, const HostTensor &b) {
  EXPECT_EQ(a.dtype(), b.dtype());
  EXPECT_EQ(a.shape(), b.shape());
  EXPECT_EQ(bytesOf(a), bytesOf(b));
}

// Builds an npy image by hand: dict text is padded to a 64-byte boundary.
Bytes makeNpy(const std::string &dict, const Bytes &data, int major = 1) {
  size_t pre = major == 1 ? 10 : 12;
  std::string h = dict;
  size_t total = pre + h.size() + 1;
  h.append((64 - total % 64) % 64, ' ');
  h += '\n';
  Bytes out = {0x93, 'N', 'U', 'M', 'P', 'Y', static_cast<uint8_t>(major), 0};
  uint32_t hl = static_cast<uint32_t>(h.size());
  for (size_t i = 0; i < pre - 8; ++i)
    out.push_back(static_cast<uint8_t>(hl >> (8 * i)));
  out.insert(out.end(), h.begin(), h.end());
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

template <typename T> Bytes leBytes(const std::vector<T> &v) {
  Bytes b(v.size() * sizeof(T));
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}
template <typename T> Bytes beBytes(const std::vector<T> &v) {
  Bytes b = leBytes(v);
  for (size_t i = 0; i < v.size(); ++i)
    std::reverse(b.begin() + i * sizeof(T), b.begin() + (i + 1) * sizeof(T));
  return b;
}

Bytes safetensorsBytes(const std::string &json, const Bytes &data) {
  Bytes out(8 + json.size() + data.size());
  uint64_t n = json.size();
  for (int i = 0; i < 8; ++i)
    out[i] = static_cast<uint8_t>(n >> (8 * i));
  std::copy(json.begin(), json.end(), out.begin() + 8);
  std::copy(data.begin(), data.end(), out.begin() + 8 + static_cast<std::ptrdiff_t>(json.size()));
  return out;
}

// CRC-32 (bitwise), independent of the code under test.
uint32_t crc32Of(const Bytes &data) {
  uint32_t crc = 0xFFFFFFFFu;
  for (uint8_t c : data) {
    crc ^= c;
    for (int k = 0; k < 8; ++k)
      crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1)));
  }
  return crc ^ 0xFFFFFFFFu;
}

void put16(Bytes &v, uint64_t x) {
  v.push_back(x & 0xFF);
  v.push_back((x >> 8) & 0xFF);
}
void put32(Bytes &v, uint64_t x) {
  put16(v, x & 0xFFFF);
  put16(v, (x >> 16) & 0xFFFF);
}
void put64(Bytes &v, uint64_t x) {
  put32(v, x & 0xFFFFFFFF);
  put32(v, x >> 32);
}

// A ZIP archive of stored entries, built by hand; with `zip64` every entry
// has ZIP64 extra fields and the archive ends with the ZIP64 end of central
// directory record and locator, as writers do for archives over 4 GiB.
Bytes handMadeZip(const std::vector<std::pair<std::string, Bytes>> &entries, bool zip64) {
  Bytes zip, cd;
  const uint64_t big = 0xFFFFFFFF;
  for (const auto &[name, data] : entries) {
    uint64_t offset = zip.size();
    uint32_t crc = crc32Of(data);
    put32(zip, 0x04034b50);
    put16(zip, zip64 ? 45 : 20);
    put16(zip, 0);    // flags
    put16(zip, 0);    // stored
    put16(zip, 0);    // time
    put16(zip, 0x21); // 1980-01-01
    put32(zip, crc);
    put32(zip, zip64 ? big : data.size());
    put32(zip, zip64 ? big : data.size());
    put16(zip, name.size());
    put16(zip, zip64 ? 20 : 0);
    zip.insert(zip.end(), name.begin(), name.end());
    if (zip64) {
      put16(zip, 0x0001);
      put16(zip, 16);
      put64(zip, data.size());
      put64(zip, data.size());
    }
    zip.insert(zip.end(), data.begin(), data.end());

    put32(cd, 0x02014b50);
    put16(cd, (3 << 8) | (zip64 ? 45 : 20)); // made by: unix
    put16(cd, zip64 ? 45 : 20);
    put16(cd, 0);
    put16(cd, 0);
    put16(cd, 0);
    put16(cd, 0x21);
    put32(cd, crc);
    put32(cd, zip64 ? big : data.size());
    put32(cd, zip64 ? big : data.size());
    put16(cd, name.size());
    put16(cd, zip64 ? 28 : 0);
    put16(cd, 0); // comment
    put16(cd, 0); // disk
    put16(cd, 0); // internal attributes
    put32(cd, 0100644u << 16);
    put32(cd, zip64 ? big : offset);
    cd.insert(cd.end(), name.begin(), name.end());
    if (zip64) {
      put16(cd, 0x0001);
      put16(cd, 24);
      put64(cd, data.size());
      put64(cd, data.size());
      put64(cd, offset);
    }
  }
  uint64_t cdOffset = zip.size(), count = entries.size();
  zip.insert(zip.end(), cd.begin(), cd.end());
  if (zip64) {
    uint64_t recordAt = zip.size();
    put32(zip, 0x06064b50);
    put64(zip, 44);
    put16(zip, (3 << 8) | 45);
    put16(zip, 45);
    put32(zip, 0);
    put32(zip, 0);
    put64(zip, count);
    put64(zip, count);
    put64(zip, cd.size());
    put64(zip, cdOffset);
    put32(zip, 0x07064b50);
    put32(zip, 0);
    put64(zip, recordAt);
    put32(zip, 1);
  }
  put32(zip, 0x06054b50);
  put16(zip, 0);
  put16(zip, 0);
  put16(zip, zip64 ? 0xFFFF : count);
  put16(zip, zip64 ? 0xFFFF : count);
  put32(zip, zip64 ? big : cd.size());
  put32(zip, zip64 ? big : cdOffset);
  put16(zip, 0);
  return zip;
}

// The .npy images of `tensors`, named as np.savez names them.
std::vector<std::pair<std::string, Bytes>>
npyEntries(const std::map<std::string, HostTensor> &tensors) {
  std::vector<std::pair<std::string, Bytes>> entries;
  for (const auto &[key, tensor] : tensors) {
    Bytes npy;
    std::string err;
    EXPECT_TRUE(encodeNpy(tensor, npy, err)) << err;
    entries.emplace_back(key + ".npy", npy);
  }
  return entries;
}

bool contains(const std::string &haystack, const std::string &needle) {
  return haystack.find(needle) != std::string::npos;
}

} // namespace

// ---- .npy ----------------------------------------------------------------------------

TEST_F(WeightsTest, NpyRoundTripEveryType) {
  for (DType t : kAllTypes) {
    HostTensor a = sampleArray(t, {3, 5});
    std::string p = path(std::string("a_") + dtypeName(t) + ".npy");
    std::string err;
    if (t == DType::BF16) {
      EXPECT_FALSE(writeNpy(p, a, err));
      EXPECT_TRUE(contains(err, "bf16")) << err;
      continue;
    }
    ASSERT_TRUE(writeNpy(p, a, err)) << err;
    HostTensor b;
    ASSERT_TRUE(readNpy(p, b, err)) << err;
    expectSame(a, b);
    EXPECT_EQ(b.toDoubles(), sampleValues(t, 15)) << dtypeName(t);
  }
}

TEST_F(WeightsTest, NpyWriterMatchesNumpyLayout) {
  std::string err;
  std::string p = path("w.npy");
  ASSERT_TRUE(writeNpy(p, HostTensor::fromDoubles(DType::F32, {2, 3}, {0, 0, 0, 0, 0, 0}), err));
  Bytes b = readBytes(p);
  // numpy 2.x: np.save(f, np.zeros((2, 3), np.float32))
  std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  Bytes expected = makeNpy(dict, Bytes(24, 0));
  EXPECT_EQ(b, expected);
  ASSERT_EQ(b.size(), 128u + 24u);
  EXPECT_EQ(b[8] | (b[9] << 8), 118);
  EXPECT_EQ(b[127], '\n');
  // shapes (5,) and ()
  ASSERT_TRUE(writeNpy(p, HostTensor::fromDoubles(DType::I64, {5}, {1, 2, 3, 4, 5}), err));
  b = readBytes(p);
  std::string text(b.begin() + 10, b.begin() + 128);
  EXPECT_TRUE(contains(text, "'shape': (5,), }")) << text;
  ASSERT_TRUE(writeNpy(p, HostTensor::fromDoubles(DType::U8, {}, {7}), err));
  b = readBytes(p);
  EXPECT_EQ(b.size() % 64, 1u);
  EXPECT_TRUE(contains(std::string(b.begin(), b.end()), "'descr': '|u1', 'fortran_order': False, 'shape': (), }"));
}

TEST_F(WeightsTest, NpyZeroDimAndZeroSize) {
  std::string err;
  HostTensor scalar = HostTensor::fromDoubles(DType::F64, {}, {3.5});
  EXPECT_EQ(scalar.numel(), 1);
  ASSERT_TRUE(writeNpy(path("s.npy"), scalar, err)) << err;
  HostTensor r;
  ASSERT_TRUE(readNpy(path("s.npy"), r, err)) << err;
  expectSame(scalar, r);
  EXPECT_TRUE(r.shape().empty());
  EXPECT_EQ(r.toDoubles(), std::vector<double>{3.5});

  HostTensor empty = HostTensor::fromDoubles(DType::I32, {0, 3}, {});
  ASSERT_TRUE(writeNpy(path("e.npy"), empty, err)) << err;
  ASSERT_TRUE(readNpy(path("e.npy"), r, err)) << err;
  expectSame(empty, r);
  EXPECT_EQ(r.numel(), 0);
  // zero-size with otherwise huge dims must not be treated as overflow
  Bytes huge = makeNpy("{'descr': '<f8', 'fortran_order': True, 'shape': (0, 9223372036854775807, 4), }", {});
  ASSERT_TRUE(readNpyBuffer(huge.data(), huge.size(), "h.npy", r, err)) << err;
  EXPECT_EQ(r.numel(), 0);
}

TEST_F(WeightsTest, NpyFortranOrderIsTransposed) {
  // C-order values 0..23 for shape (2, 3, 4); Fortran layout stores index
  // (i, j, k) at i + 2*j + 6*k.
  std::vector<int32_t> fortran(24);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k)
        fortran[i + 2 * j + 6 * k] = i * 12 + j * 4 + k;
  Bytes f = makeNpy("{'descr': '<i4', 'fortran_order': True, 'shape': (2, 3, 4), }", leBytes(fortran));
  HostTensor a;
  std::string err;
  ASSERT_TRUE(readNpyBuffer(f.data(), f.size(), "f.npy", a, err)) << err;
  std::vector<double> expect(24);
  for (int i = 0; i < 24; ++i)
    expect[i] = i;
  EXPECT_EQ(a.toDoubles(), expect);
  // 2-D, big-endian and Fortran at once
  std::vector<double> f2 = {1, 4, 2, 5, 3, 6}; // [[1,2,3],[4,5,6]] in F order
  Bytes g = makeNpy("{'descr': '>f8', 'fortran_order': True, 'shape': (2, 3), }", beBytes(f2));
  writeBytes(path("g.npy"), g);
  ASSERT_TRUE(readNpy(path("g.npy"), a, err)) << err;
  EXPECT_EQ(a.toDoubles(), (std::vector<double>{1, 2, 3, 4, 5, 6}));
}

TEST_F(WeightsTest, NpyBigEndianVariants) {
  std::string err;
  HostTensor a;
  Bytes f4 = makeNpy("{'descr': '>f4', 'fortran_order': False, 'shape': (3,), }",
                     beBytes(std::vector<float>{1.5f, -2.0f, 1e-3f}));
  ASSERT_TRUE(readNpyBuffer(f4.data(), f4.size(), "x", a, err)) << err;
  EXPECT_EQ(a.dtype(), DType::F32);
  EXPECT_EQ(a.toDoubles(), (std::vector<double>{1.5, -2.0, static_cast<double>(1e-3f)}));
  Bytes i8 = makeNpy("{'descr': '>i8', 'fortran_order': False, 'shape': (2,), }",
                     beBytes(std::vector<int64_t>{-5, 1LL << 40}));
  ASSERT_TRUE(readNpyBuffer(i8.data(), i8.size(), "x", a, err)) << err;
  EXPECT_EQ(a.toDoubles(), (std::vector<double>{-5, std::ldexp(1.0, 40)}));
  Bytes f2 = makeNpy("{'descr': '>f2', 'fortran_order': False, 'shape': (2,), }",
                     beBytes(std::vector<uint16_t>{0x3C00, 0xC100}));
  ASSERT_TRUE(readNpyBuffer(f2.data(), f2.size(), "x", a, err)) << err;
  EXPECT_EQ(a.toDoubles(), (std::vector<double>{1.0, -2.5}));
  Bytes i4 = makeNpy("{'descr': '=i4', 'fortran_order': False, 'shape': (1,), }",
                     leBytes(std::vector<int32_t>{-7}));
  ASSERT_TRUE(readNpyBuffer(i4.data(), i4.size(), "x", a, err)) << err;
  EXPECT_EQ(a.toDoubles(), std::vector<double>{-7});
  Bytes b1 = makeNpy("{'descr': '|b1', 'fortran_order': False, 'shape': (2,), }", Bytes{1, 0});
  ASSERT_TRUE(readNpyBuffer(b1.data(), b1.size(), "x", a, err)) << err;
  EXPECT_EQ(a.dtype(), DType::I1);
  Bytes bad = makeNpy("{'descr': '|f4', 'fortran_order': False, 'shape': (1,), }", Bytes(4, 0));
  EXPECT_FALSE(readNpyBuffer(bad.data(), bad.size(), "x", a, err));
  EXPECT_TRUE(contains(err, "byte order")) << err;
}

TEST_F(WeightsTest, NpyHeaderParsingIsRobust) {
  const char *dicts[] = {
      "{'shape': (2, 2), 'fortran_order': False, 'descr': '<i4'}",
      "{ \"descr\" : \"<i4\" ,\"fortran_order\":False,'shape':(2,2)}",
      "{'descr': '<i4', 'fortran_order': False, 'shape': (2L, 2L), }",
      "{'descr':'<i4','fortran_order':False,'shape':( 2 , 2 , ),}",
      "{'descr': '<i4', 'fortran_order': False, 'shape': [2, 2], }",
  };
  std::string err;
  for (const char *d : dicts) {
    Bytes b = makeNpy(d, leBytes(std::vector<int32_t>{1, 2, 3, 4}));
    HostTensor a;
    ASSERT_TRUE(readNpyBuffer(b.data(), b.size(), "x.npy", a, err)) << d << ": " << err;
    EXPECT_EQ(a.shape(), (std::vector<int64_t>{2, 2}));
    EXPECT_EQ(a.toDoubles(), (std::vector<double>{1, 2, 3, 4}));
  }
  HostTensor a;
  Bytes one = makeNpy("{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }",
                      leBytes(std::vector<double>{2}));
  ASSERT_TRUE(readNpyBuffer(one.data(), one.size(), "x", a, err)) << err;
  EXPECT_EQ(a.shape(), std::vector<int64_t>{1});
  const char *bad[] = {
      "{'descr': '<i4', 'fortran_order': False}",
      "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 2), 'extra': 1}",
      "{'descr': '<i4', 'descr': '<i4', 'fortran_order': False, 'shape': (2, 2)}",
      "{'descr': '<i4', 'fortran_order': Maybe, 'shape': (2, 2)}",
      "{'descr': '<i4', 'fortran_order': False, 'shape': (2, -2)}",
      "{'descr': '<i4', 'fortran_order': False, 'shape': (2 2)}",
      "{'descr': [('a', '<i4')], 'fortran_order': False, 'shape': (2,)}",
      "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 2)} junk",
      "{'descr': '<i4, 'fortran_order': False, 'shape': (2, 2)}",
  };
  for (const char *d : bad) {
    Bytes b = makeNpy(d, Bytes(16, 0));
    EXPECT_FALSE(readNpyBuffer(b.data(), b.size(), "x.npy", a, err)) << d;
    EXPECT_TRUE(contains(err, "x.npy: npy header at byte ")) << err;
  }
}

TEST_F(WeightsTest, NpyVersions2And3) {
  std::string err;
  HostTensor a;
  for (int major : {2, 3}) {
    Bytes b = makeNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }",
                      leBytes(std::vector<float>{1, 2}), major);
    ASSERT_TRUE(readNpyBuffer(b.data(), b.size(), "x", a, err)) << err;
    EXPECT_EQ(a.toDoubles(), (std::vector<double>{1, 2}));
  }
  Bytes v4 = makeNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", Bytes(8, 0));
  v4[6] = 4;
  EXPECT_FALSE(readNpyBuffer(v4.data(), v4.size(), "x", a, err));
  EXPECT_TRUE(contains(err, "x: npy header at byte 6: unsupported npy format version 4.0")) << err;
}

TEST_F(WeightsTest, NpyBadMagic) {
  Bytes b = makeNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", Bytes(8, 0));
  b[1] = 'X';
  writeBytes(path("w.npy"), b);
  HostTensor a;
  std::string err;
  EXPECT_FALSE(readNpy(path("w.npy"), a, err));
  EXPECT_TRUE(contains(err, "w.npy: npy header at byte 0: bad magic")) << err;
}

TEST_F(WeightsTest, NpyUnsupportedDtype) {
  Bytes b = makeNpy("{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }", Bytes(16, 0));
  HostTensor a;
  std::string err;
  EXPECT_FALSE(readNpyBuffer(b.data(), b.size(), "w.npy", a, err));
  EXPECT_EQ(err, "w.npy: npy header at byte 20: dtype '<c8' is not supported (expected one of "
                 "f8,f4,f2,i8,i4,i1,u1,b1, bf16 not in npy)");
  for (const char *d : {"<i2", "<u4", "<U10", "O", "<f16"}) {
    Bytes c = makeNpy(std::string("{'descr': '") + d + "', 'fortran_order': False, 'shape': (2,), }", Bytes(16, 0));
    EXPECT_FALSE(readNpyBuffer(c.data(), c.size(), "w.npy", a, err)) << d;
    EXPECT_TRUE(contains(err, "is not supported")) << err;
  }
}

TEST_F(WeightsTest, NpyHostileShapesOverflow) {
  HostTensor a;
  std::string err;
  const char *shapes[] = {"(1099511627776, 1099511627776)", "(9223372036854775807,)",
                          "(4611686018427387904, 2)", "(99999999999999999999,)"};
  for (const char *s : shapes) {
    Bytes b = makeNpy(std::string("{'descr': '<f8', 'fortran_order': False, 'shape': ") + s + ", }", Bytes(8, 0));
    writeBytes(path("h.npy"), b);
    EXPECT_FALSE(readNpy(path("h.npy"), a, err)) << s;
    EXPECT_TRUE(contains(err, "h.npy: npy header at byte")) << err;
    TensorHeader h;
    EXPECT_FALSE(readHeader(path("h.npy"), "", h, err));
  }
  // fits in 64 bits but far larger than the file: a truncation error, no allocation
  Bytes big = makeNpy("{'descr': '<f8', 'fortran_order': False, 'shape': (1048576, 1048576), }", Bytes(8, 0));
  writeBytes(path("big.npy"), big);
  EXPECT_FALSE(readNpy(path("big.npy"), a, err));
  EXPECT_TRUE(contains(err, "truncated: data needs 8796093022208 bytes at byte 128")) << err;
}

TEST_F(WeightsTest, NpyHeaderLengthPastEnd) {
  Bytes b = makeNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", Bytes(8, 0));
  b[8] = 0xFF;
  b[9] = 0xFF;
  HostTensor a;
  std::string err;
  EXPECT_FALSE(readNpyBuffer(b.data(), b.size(), "w.npy", a, err));
  EXPECT_TRUE(contains(err, "w.npy: npy header at byte 8: truncated: header length 65535")) << err;
  Bytes v2 = makeNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", Bytes(8, 0), 2);
  v2[11] = 0x80; // ~2 GiB header
  EXPECT_FALSE(readNpyBuffer(v2.data(), v2.size(), "w.npy", a, err));
  EXPECT_TRUE(contains(err, "extends past the end")) << err;
}

TEST_F(WeightsTest, NpyTruncatedAndTrailingData) {
  std::vector<float> v(100352, 1.0f); // 401408 bytes
  Bytes full = makeNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (784, 128), }", leBytes(v));
  Bytes cut(full.begin(), full.begin() + 1000);
  writeBytes(path("w.npy"), cut);
  HostTensor a;
  std::string err;
  EXPECT_FALSE(readNpy(path("w.npy"), a, err));
  EXPECT_EQ(err, path("w.npy") + ": truncated: data needs 401408 bytes at byte 128 (up to byte 401536), but only 872 are there (the file has 1000 bytes)");
  Bytes extra = makeNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", Bytes(12, 0));
  EXPECT_FALSE(readNpyBuffer(extra.data(), extra.size(), "w.npy", a, err));
  EXPECT_EQ(err, "w.npy: npy data at byte 136: 4 unexpected trailing bytes after the 8 bytes of "
                 "data for shape (2,) f32");
}

TEST_F(WeightsTest, NpyTruncationAtEveryOffset) {
  std::string err;
  HostTensor src = sampleArray(DType::F32, {2, 3});
  ASSERT_TRUE(writeNpy(path("full.npy"), src, err)) << err;
  Bytes full = readBytes(path("full.npy"));
  for (size_t k = 0; k < full.size(); ++k) {
    Bytes cut(full.begin(), full.begin() + k);
    HostTensor a;
    err.clear();
    ASSERT_FALSE(readNpyBuffer(cut.data(), cut.size(), "c.npy", a, err)) << k;
    ASSERT_TRUE(contains(err, "c.npy: ")) << err;
    writeBytes(path("c.npy"), cut);
    err.clear();
    ASSERT_FALSE(readNpy(path("c.npy"), a, err)) << k;
    ASSERT_FALSE(err.empty());
    TensorHeader h;
    ASSERT_FALSE(readHeader(path("c.npy"), "", h, err)) << k;
  }
}

TEST_F(WeightsTest, MissingFile) {
  HostTensor a;
  std::string err;
  EXPECT_FALSE(readNpy(path("nope.npy"), a, err));
  EXPECT_EQ(err, "cannot open '" + path("nope.npy") + "': No such file or directory");
  std::map<std::string, HostTensor> m;
  EXPECT_FALSE(readNpz(path("nope.npz"), m, err));
  EXPECT_EQ(err, "cannot open '" + path("nope.npz") + "': No such file or directory");
  EXPECT_FALSE(readSafetensors(path("nope.safetensors"), m, err));
  EXPECT_EQ(err, "cannot open '" + path("nope.safetensors") + "': No such file or directory");
  EXPECT_FALSE(writeNpy(path("no/such/dir.npy"), sampleArray(DType::F32, {1}), err));
  EXPECT_TRUE(contains(err, "No such file or directory")) << err;
}

TEST_F(WeightsTest, WritersRejectBf16WhereNumpyHasNone) {
  std::string err;
  HostTensor bf16 = sampleArray(DType::BF16, {2});
  EXPECT_FALSE(writeNpy(path("x.npy"), bf16, err));
  EXPECT_TRUE(contains(err, "bf16")) << err;
  EXPECT_FALSE(writeNpz(path("x.npz"), {{"a", bf16}}, err));
  EXPECT_EQ(err, path("x.npz") + ": entry 'a.npy': npy: element type bf16 cannot be stored in "
                                 ".npy (numpy has no bfloat16 dtype); use .safetensors or convert to f32");
  EXPECT_FALSE(fs::exists(path("x.npz")));
}

// ---- .npz ----------------------------------------------------------------------------

std::map<std::string, HostTensor> sampleMap(bool includeBf16) {
  std::map<std::string, HostTensor> m;
  for (DType t : kAllTypes) {
    if (t == DType::BF16 && !includeBf16)
      continue;
    m[std::string("w_") + dtypeName(t)] = sampleArray(t, {2, 3});
  }
  m["scalar"] = HostTensor::fromDoubles(DType::F64, {}, {42});
  m["empty"] = HostTensor::fromDoubles(DType::F32, {0, 7}, {});
  m["layer.0/bias"] = sampleArray(DType::F16, {4});
  return m;
}

TEST_F(WeightsTest, NpzRoundTripSeveralKeys) {
  auto m = sampleMap(false);
  std::string err;
  ASSERT_TRUE(writeNpz(path("w.npz"), m, err)) << err;
  std::map<std::string, HostTensor> r;
  ASSERT_TRUE(readNpz(path("w.npz"), r, err)) << err;
  ASSERT_EQ(r.size(), m.size());
  for (const auto &kv : m)
    expectSame(kv.second, r.at(kv.first));
  Bytes b = readBytes(path("w.npz"));
  EXPECT_EQ(b[0], 'P');
  EXPECT_EQ(b[8], 0); // stored
  // single entry via readArray / readHeader
  HostTensor a;
  ASSERT_TRUE(readArray(path("w.npz"), "w_i32", a, err)) << err;
  expectSame(m["w_i32"], a);
  TensorHeader h;
  ASSERT_TRUE(readHeader(path("w.npz"), "layer.0/bias", h, err)) << err;
  EXPECT_EQ(h.dtype, DType::F16);
  EXPECT_EQ(h.shape, std::vector<int64_t>{4});
  // bf16 is not representable in npz either
  EXPECT_FALSE(writeNpz(path("b.npz"), sampleMap(true), err));
  EXPECT_TRUE(contains(err, "bf16")) << err;
}

TEST_F(WeightsTest, NpzZip64Archive) {
  auto m = sampleMap(false);
  writeBytes(path("z.npz"), handMadeZip(npyEntries(m), /*zip64=*/true));
  std::map<std::string, HostTensor> r;
  std::string err;
  ASSERT_TRUE(readNpz(path("z.npz"), r, err)) << err;
  ASSERT_EQ(r.size(), m.size());
  for (const auto &kv : m)
    expectSame(kv.second, r.at(kv.first));
  TensorHeader h;
  ASSERT_TRUE(readHeader(path("z.npz"), "w_u8", h, err)) << err;
  EXPECT_EQ(h.dtype, DType::U8);
}

TEST_F(WeightsTest, NpzDeflatedRoundTrip) {
  auto m = sampleMap(false);
  std::string err;
  ASSERT_TRUE(writeNpz(path("d.npz"), m, err, NpzCompression::Deflated)) << err;
  Bytes b = readBytes(path("d.npz"));
  EXPECT_EQ(b[8], 8); // deflated
  std::map<std::string, HostTensor> r;
  ASSERT_TRUE(readNpz(path("d.npz"), r, err)) << err;
  ASSERT_EQ(r.size(), m.size());
  for (const auto &kv : m)
    expectSame(kv.second, r.at(kv.first));
  // the same tensors make the same file
  ASSERT_TRUE(writeNpz(path("e.npz"), m, err, NpzCompression::Deflated)) << err;
  EXPECT_EQ(readBytes(path("e.npz")), b);
}

TEST_F(WeightsTest, NpzEmptyArchive) {
  std::string err;
  ASSERT_TRUE(writeNpz(path("e.npz"), {}, err)) << err;
  EXPECT_EQ(readBytes(path("e.npz")).size(), 22u);
  std::map<std::string, HostTensor> r = {{"stale", sampleArray(DType::F32, {1})}};
  ASSERT_TRUE(readNpz(path("e.npz"), r, err)) << err;
  EXPECT_TRUE(r.empty());
  HostTensor a;
  EXPECT_FALSE(readArray(path("e.npz"), "w", a, err));
  EXPECT_TRUE(contains(err, "the file contains no arrays")) << err;
}

TEST_F(WeightsTest, NpzFromNumpySavez) {
  writeBytes(path("s.npz"), Bytes(std::begin(kNumpyStoredNpz), std::end(kNumpyStoredNpz)));
  std::map<std::string, HostTensor> r;
  std::string err;
  ASSERT_TRUE(readNpz(path("s.npz"), r, err)) << err;
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r["x"].dtype(), DType::I32);
  EXPECT_EQ(r["x"].shape(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(r["x"].toDoubles(), (std::vector<double>{1, 2, 3, 4}));
}

TEST_F(WeightsTest, NpzFromNumpySavezCompressed) {
  writeBytes(path("c.npz"), Bytes(std::begin(kNumpyCompressedNpz), std::end(kNumpyCompressedNpz)));
  std::map<std::string, HostTensor> r;
  std::string err;
  ASSERT_TRUE(readNpz(path("c.npz"), r, err)) << err;
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r["a"].dtype(), DType::F32);
  EXPECT_EQ(r["a"].shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(r["a"].toDoubles(), (std::vector<double>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(r["b"].dtype(), DType::I64);
  EXPECT_EQ(r["b"].toDoubles(), (std::vector<double>{1, -2, 3}));
  TensorHeader h;
  ASSERT_TRUE(readHeader(path("c.npz"), "b", h, err)) << err;
  EXPECT_EQ(h.dtype, DType::I64);
  EXPECT_EQ(h.shape, std::vector<int64_t>{3});
  HostTensor a;
  ASSERT_TRUE(readArray(path("c.npz"), "a", a, err)) << err;
  expectSame(r["a"], a);
}

TEST_F(WeightsTest, NpzCorruptDeflateData) {
  Bytes base(std::begin(kNumpyCompressedNpz), std::end(kNumpyCompressedNpz));
  // flip every byte of the first entry's compressed data in turn
  size_t dataStart = 30 + 5 + 20;
  size_t failures = 0;
  for (size_t i = dataStart; i < dataStart + 40; ++i) {
    Bytes b = base;
    b[i] ^= 0x5A;
    writeBytes(path("c.npz"), b);
    std::map<std::string, HostTensor> r;
    std::string err;
    if (!readNpz(path("c.npz"), r, err)) {
      ++failures;
      EXPECT_TRUE(contains(err, "entry 'a.npy'")) << err;
    }
  }
  EXPECT_EQ(failures, 40u); // CRC32 catches what inflate does not
}

TEST_F(WeightsTest, NpzBadCrc) {
  std::string err;
  ASSERT_TRUE(writeNpz(path("w.npz"), {{"a", sampleArray(DType::F32, {4})}}, err)) << err;
  Bytes b = readBytes(path("w.npz"));
  b[30 + 5 + 128 + 1] ^= 0x01; // a data byte of entry a.npy
  writeBytes(path("w.npz"), b);
  std::map<std::string, HostTensor> r;
  EXPECT_FALSE(readNpz(path("w.npz"), r, err));
  EXPECT_EQ(err, path("w.npz") + ": entry 'a.npy': CRC error");
}

TEST_F(WeightsTest, NpzMissingKeyListsKeys) {
  std::string err;
  std::map<std::string, HostTensor> m;
  for (int i = 0; i < 12; ++i)
    m["k" + std::to_string(10 + i)] = sampleArray(DType::I8, {1});
  ASSERT_TRUE(writeNpz(path("w.npz"), m, err)) << err;
  HostTensor a;
  EXPECT_FALSE(readArray(path("w.npz"), "w1", a, err));
  EXPECT_TRUE(contains(err, "no array 'w1'")) << err;
  EXPECT_TRUE(contains(err, "'k10', 'k11'")) << err;
  EXPECT_TRUE(contains(err, "(12 in total)")) << err;
  EXPECT_FALSE(contains(err, "'k21'")) << err;
  TensorHeader h;
  EXPECT_FALSE(readHeader(path("w.npz"), "w1", h, err));
  EXPECT_TRUE(contains(err, "'k10'")) << err;
}

TEST_F(WeightsTest, NpzWithArchiveComment) {
  std::string err;
  ASSERT_TRUE(writeNpz(path("w.npz"), {{"a", sampleArray(DType::I32, {3})}}, err)) << err;
  Bytes b = readBytes(path("w.npz"));
  std::string comment = "made by hand; PK\x05\x06 inside a comment";
  b[b.size() - 2] = static_cast<uint8_t>(comment.size());
  b.insert(b.end(), comment.begin(), comment.end());
  writeBytes(path("w.npz"), b);
  std::map<std::string, HostTensor> r;
  ASSERT_TRUE(readNpz(path("w.npz"), r, err)) << err;
  expectSame(r["a"], sampleArray(DType::I32, {3}));
}

TEST_F(WeightsTest, NpzStructuralCorruption) {
  std::string err;
  ASSERT_TRUE(writeNpz(path("w.npz"), {{"a", sampleArray(DType::I32, {3})}}, err)) << err;
  const Bytes good = readBytes(path("w.npz"));
  size_t eocd = good.size() - 22;
  size_t cd = good[eocd + 16] | (good[eocd + 17] << 8);
  auto expectFail = [&](Bytes b, const std::string &message) {
    writeBytes(path("bad.npz"), b);
    std::map<std::string, HostTensor> r;
    std::string e;
    EXPECT_FALSE(readNpz(path("bad.npz"), r, e)) << message;
    EXPECT_TRUE(contains(e, path("bad.npz") + ": " + message)) << e;
    HostTensor a;
    EXPECT_FALSE(readArray(path("bad.npz"), "a", a, e)) << message;
  };
  // What libzip finds wrong with the archive itself.
  expectFail(Bytes(100, 'x'), "zip archive: Not a zip archive");
  { // central directory offset past the end
    Bytes b = good;
    b[eocd + 16] = 0xF0;
    b[eocd + 19] = 0x7F;
    expectFail(b, "zip archive: ");
  }
  { // huge entry count
    Bytes b = good;
    b[eocd + 8] = b[eocd + 10] = 0xFF;
    b[eocd + 9] = b[eocd + 11] = 0xFE;
    expectFail(b, "zip archive: ");
  }
  { // bad central directory signature
    Bytes b = good;
    b[cd] = 'Q';
    expectFail(b, "zip archive: ");
  }
  { // local header offset past the end
    Bytes b = good;
    b[cd + 45] = 0x70;
    expectFail(b, "zip archive: ");
  }
  { // local header broken
    Bytes b = good;
    b[0] = 'X';
    expectFail(b, "zip archive: ");
  }
  { // local header and central directory disagree on the method
    Bytes b = good;
    b[cd + 10] = 8;
    expectFail(b, "zip archive: Zip archive inconsistent");
  }
  // What dlc refuses in an entry (both headers agreeing).
  { // unsupported compression method
    Bytes b = good;
    b[8] = b[cd + 10] = 77;
    expectFail(b, "entry 'a.npy': compression method 77 is not supported");
  }
  { // encrypted
    Bytes b = good;
    b[6] = b[cd + 8] = 1;
    expectFail(b, "entry 'a.npy': entry is encrypted (not supported)");
  }
  { // a deflated entry declaring an impossible uncompressed size
    Bytes b = good;
    b[8] = b[cd + 10] = 8;
    for (size_t at : {size_t(22), cd + 24}) {
      b[at] = b[at + 1] = b[at + 2] = 0xFF;
      b[at + 3] = 0x7F;
    }
    expectFail(b, "entry 'a.npy': declared uncompressed size 2147483647 is impossible for 140 "
                  "bytes of deflate data");
  }
  { // npy inside the zip is broken: the CRC is verified first
    Bytes b = good;
    b[35 + 1] = 'X'; // magic of the npy image (data starts at byte 35)
    expectFail(b, "entry 'a.npy': CRC error");
  }
  { // bad ZIP64 locator target
    Bytes b = handMadeZip(npyEntries({{"a", sampleArray(DType::I32, {3})}}), true);
    b[b.size() - 22 - 20 + 8] ^= 0x40; // zip64 EOCD record offset
    expectFail(b, "zip archive: ");
  }
}

TEST_F(WeightsTest, NpzInnerNpyErrorsNameEntryAndOffset) {
  // An npy with an unsupported dtype in a stored zip (CRC correct): the error
  // names the entry, and the offset counts from the start of the entry.
  Bytes npy = makeNpy("{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }", Bytes(8, 0));
  writeBytes(path("h.npz"), handMadeZip({{"w1.npy", npy}}, false));
  std::map<std::string, HostTensor> r;
  std::string err;
  EXPECT_FALSE(readNpz(path("h.npz"), r, err));
  EXPECT_EQ(err, path("h.npz") + ": entry 'w1.npy': npy header at byte 20: dtype '<c8' is not "
                                 "supported (expected one of f8,f4,f2,i8,i4,i1,u1,b1, bf16 not in npy)");
  TensorHeader h;
  EXPECT_FALSE(readHeader(path("h.npz"), "w1", h, err));
  EXPECT_TRUE(contains(err, "dtype '<c8'")) << err;
}

TEST_F(WeightsTest, NpzNonNpyEntry) {
  writeBytes(path("c.npz"), Bytes(std::begin(kNumpyStoredNpz), std::end(kNumpyStoredNpz)));
  Bytes b = readBytes(path("c.npz"));
  // rename x.npy -> x.txt in both headers
  for (size_t i = 0; i + 5 <= b.size(); ++i)
    if (std::memcmp(&b[i], "x.npy", 5) == 0)
      std::memcpy(&b[i + 2], "txt", 3);
  writeBytes(path("t.npz"), b);
  std::map<std::string, HostTensor> r;
  std::string err;
  EXPECT_FALSE(readNpz(path("t.npz"), r, err));
  EXPECT_TRUE(contains(err, "entry 'x.txt'")) << err;
  EXPECT_TRUE(contains(err, "not a .npy file")) << err;
}

TEST_F(WeightsTest, NpzTruncationAtEveryOffset) {
  std::string err;
  std::map<std::string, HostTensor> m = {{"a", sampleArray(DType::F32, {3})},
                                    {"b", sampleArray(DType::I8, {2, 2})}};
  ASSERT_TRUE(writeNpz(path("full.npz"), m, err)) << err;
  std::vector<Bytes> sources = {readBytes(path("full.npz")),
                                Bytes(std::begin(kNumpyCompressedNpz), std::end(kNumpyCompressedNpz))};
  sources.push_back(handMadeZip(npyEntries(m), /*zip64=*/true));
  for (const Bytes &full : sources) {
    for (size_t k = 0; k < full.size(); ++k) {
      writeBytes(path("c.npz"), Bytes(full.begin(), full.begin() + k));
      std::map<std::string, HostTensor> r;
      err.clear();
      ASSERT_FALSE(readNpz(path("c.npz"), r, err)) << k;
      ASSERT_TRUE(contains(err, path("c.npz") + ": ")) << err;
      HostTensor a;
      ASSERT_FALSE(readArray(path("c.npz"), "a", a, err)) << k;
      TensorHeader h;
      ASSERT_FALSE(readHeader(path("c.npz"), "a", h, err)) << k;
    }
  }
}

TEST_F(WeightsTest, NpzRandomCorruptionNeverCrashes) {
  std::string err;
  std::map<std::string, HostTensor> m = {{"a", sampleArray(DType::F64, {2, 2})},
                                    {"b", sampleArray(DType::U8, {3})}};
  ASSERT_TRUE(writeNpz(path("full.npz"), m, err, NpzCompression::Deflated)) << err;
  std::vector<Bytes> sources = {readBytes(path("full.npz")), handMadeZip(npyEntries(m), true),
                                Bytes(std::begin(kNumpyCompressedNpz), std::end(kNumpyCompressedNpz))};
  std::mt19937 rng(1234);
  for (const Bytes &full : sources) {
    for (int iter = 0; iter < 600; ++iter) {
      Bytes b = full;
      int flips = 1 + static_cast<int>(rng() % 3);
      for (int f = 0; f < flips; ++f)
        b[rng() % b.size()] = static_cast<uint8_t>(rng());
      writeBytes(path("r.npz"), b);
      std::map<std::string, HostTensor> r;
      err.clear();
      if (!readNpz(path("r.npz"), r, err)) {
        ASSERT_FALSE(err.empty());
      }
      TensorHeader h;
      readHeader(path("r.npz"), "b", h, err);
    }
  }
}

// ---- .safetensors -------------------------------------------------------------------

TEST_F(WeightsTest, SafetensorsRoundTripEveryType) {
  auto m = sampleMap(true);
  std::string err;
  ASSERT_TRUE(writeSafetensors(path("m.safetensors"), m, err)) << err;
  std::map<std::string, HostTensor> r;
  ASSERT_TRUE(readSafetensors(path("m.safetensors"), r, err)) << err;
  ASSERT_EQ(r.size(), m.size());
  for (const auto &kv : m)
    expectSame(kv.second, r.at(kv.first));
  EXPECT_EQ(r["w_bf16"].toDoubles(), sampleValues(DType::BF16, 6));
  HostTensor a;
  ASSERT_TRUE(readArray(path("m.safetensors"), "w_bf16", a, err)) << err;
  expectSame(m["w_bf16"], a);
  TensorHeader h;
  ASSERT_TRUE(readHeader(path("m.safetensors"), "empty", h, err)) << err;
  EXPECT_EQ(h.dtype, DType::F32);
  EXPECT_EQ(h.shape, (std::vector<int64_t>{0, 7}));
}

TEST_F(WeightsTest, SafetensorsWriterLayout) {
  std::string err;
  std::map<std::string, HostTensor> m = {{"b", HostTensor::fromDoubles(DType::F32, {2}, {1, 2})},
                                    {"a", HostTensor::fromDoubles(DType::BF16, {1}, {1})}};
  ASSERT_TRUE(writeSafetensors(path("w.safetensors"), m, err)) << err;
  Bytes b = readBytes(path("w.safetensors"));
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i)
    n = (n << 8) | b[i];
  EXPECT_EQ(n % 8, 0u);
  std::string json(b.begin() + 8, b.begin() + 8 + n);
  std::string expected = "{\"a\":{\"dtype\":\"BF16\",\"shape\":[1],\"data_offsets\":[0,2]},"
                         "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[2,10]}}";
  ASSERT_GE(json.size(), expected.size());
  EXPECT_EQ(json.substr(0, expected.size()), expected);
  EXPECT_EQ(json.substr(expected.size()), std::string(json.size() - expected.size(), ' '));
  EXPECT_EQ(b.size(), 8 + n + 10);
  // empty file
  ASSERT_TRUE(writeSafetensors(path("e.safetensors"), {}, err)) << err;
  std::map<std::string, HostTensor> r;
  ASSERT_TRUE(readSafetensors(path("e.safetensors"), r, err)) << err;
  EXPECT_TRUE(r.empty());
}

TEST_F(WeightsTest, SafetensorsHandWritten) {
  std::vector<float> w = {1, 2, 3, 4, 5, 6};
  Bytes data = leBytes(w);
  Bytes bias = leBytes(std::vector<uint16_t>{0x3F80, 0xC000}); // bf16 1, -2
  data.insert(data.end(), bias.begin(), bias.end());
  std::string json =
      "{\n  \"__metadata__\": {\"format\": \"pt\", \"note\": \"tab\\there \\u00e9\"},\n"
      "  \"h.0.w\": {\"shape\": [2, 3], \"data_offsets\": [0, 24], \"extra\": {\"x\": [1.5e3, null, true]}, \"dtype\": \"F32\"},\n"
      "  \"h.0.\\u0062\\ud83d\\ude00\": {\"dtype\":\"BF16\",\"shape\":[2],\"data_offsets\":[24,28]}\n}  ";
  writeBytes(path("h.safetensors"), safetensorsBytes(json, data));
  std::map<std::string, HostTensor> r;
  std::string err;
  ASSERT_TRUE(readSafetensors(path("h.safetensors"), r, err)) << err;
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r["h.0.w"].shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(r["h.0.w"].toDoubles(), (std::vector<double>{1, 2, 3, 4, 5, 6}));
  std::string emojiKey = "h.0.b\xF0\x9F\x98\x80";
  ASSERT_TRUE(r.count(emojiKey));
  EXPECT_EQ(r[emojiKey].dtype(), DType::BF16);
  EXPECT_EQ(r[emojiKey].toDoubles(), (std::vector<double>{1, -2}));
  // round trip through our writer keeps the odd name
  ASSERT_TRUE(writeSafetensors(path("o.safetensors"), r, err)) << err;
  std::map<std::string, HostTensor> r2;
  ASSERT_TRUE(readSafetensors(path("o.safetensors"), r2, err)) << err;
  expectSame(r[emojiKey], r2[emojiKey]);
}

TEST_F(WeightsTest, SafetensorsMetadataRoundTrip) {
  std::string err;
  std::map<std::string, HostTensor> m = {{"w", HostTensor::fromDoubles(DType::F32, {2}, {1, 2})}};
  SafetensorsMetadata meta = {{"model", "mnist_mlp"}, {"epoch", "3"}, {"note", "tab\there"}};
  ASSERT_TRUE(writeSafetensors(path("m.safetensors"), m, err, &meta)) << err;
  Bytes b = readBytes(path("m.safetensors"));
  std::string json(b.begin() + 8, b.end());
  // First in the header, keys sorted, as the reference writer does.
  EXPECT_EQ(json.rfind("{\"__metadata__\":{\"epoch\":\"3\",\"model\":\"mnist_mlp\"", 0), 0u)
      << json;
  std::map<std::string, HostTensor> r;
  SafetensorsMetadata readBack = {{"stale", "x"}};
  ASSERT_TRUE(readSafetensors(path("m.safetensors"), r, err, &readBack)) << err;
  EXPECT_EQ(readBack, meta);
  expectSame(m["w"], r["w"]);
  // Other readers skip it; a file without metadata reads back an empty map.
  HostTensor a;
  ASSERT_TRUE(readArray(path("m.safetensors"), "w", a, err)) << err;
  ASSERT_TRUE(writeSafetensors(path("n.safetensors"), m, err)) << err;
  ASSERT_TRUE(readSafetensors(path("n.safetensors"), r, err, &readBack)) << err;
  EXPECT_TRUE(readBack.empty());
  // A duplicate metadata key is an error at its byte offset, as elsewhere.
  std::string dup = "{\"__metadata__\":{\"a\":\"1\",\"a\":\"2\"}}";
  writeBytes(path("d.safetensors"), safetensorsBytes(dup, Bytes{}));
  EXPECT_FALSE(readSafetensors(path("d.safetensors"), r, err, &readBack));
  EXPECT_EQ(err, path("d.safetensors") +
                     ": safetensors header at byte 33: malformed JSON: duplicate key \"a\"");
}

TEST_F(WeightsTest, SafetensorsUnsupportedDtypeNamesTensor) {
  std::string json = "{\"h.0.w\":{\"dtype\":\"I16\",\"shape\":[2],\"data_offsets\":[0,4]},"
                     "\"ok\":{\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":[4,6]}}";
  writeBytes(path("t.safetensors"), safetensorsBytes(json, Bytes{1, 0, 2, 0, 7, 8}));
  std::map<std::string, HostTensor> r;
  std::string err;
  EXPECT_FALSE(readSafetensors(path("t.safetensors"), r, err));
  EXPECT_EQ(err, path("t.safetensors") + ": tensor 'h.0.w' at byte 26: dtype 'I16' is not "
                                          "supported (expected one of F64,F32,F16,BF16,I64,I32,I8,U8,BOOL)");
  HostTensor a;
  ASSERT_TRUE(readArray(path("t.safetensors"), "ok", a, err)) << err; // other tensors still usable
  EXPECT_EQ(bytesOf(a), (Bytes{7, 8}));
  TensorHeader h;
  EXPECT_FALSE(readHeader(path("t.safetensors"), "h.0.w", h, err));
  EXPECT_TRUE(contains(err, "I16")) << err;
}

TEST_F(WeightsTest, SafetensorsDataOffsetsValidation) {
  auto expectFail = [&](const std::string &json, size_t dataLen, const std::string &needle) {
    writeBytes(path("t.safetensors"), safetensorsBytes(json, Bytes(dataLen, 0)));
    std::map<std::string, HostTensor> r;
    std::string err;
    EXPECT_FALSE(readSafetensors(path("t.safetensors"), r, err)) << json;
    EXPECT_TRUE(contains(err, needle)) << err;
    TensorHeader h;
    EXPECT_FALSE(readHeader(path("t.safetensors"), "x", h, err)) << json;
  };
  expectFail("{\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 4,
             "tensor 'x' at byte 55: data_offsets [0, 8] extend past the end of the data section");
  expectFail("{\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,12]}}", 12,
             "data_offsets [0, 12] span 12 bytes but shape (2,) of F32 needs 8");
  expectFail("{\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,0]}}", 8, "end is before begin");
  expectFail("{\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0]}}", 8, "array of two integers");
  expectFail("{\"x\":{\"dtype\":\"F32\",\"shape\":[-2],\"data_offsets\":[0,8]}}", 8, "non-negative");
  expectFail("{\"x\":{\"dtype\":\"F32\",\"shape\":[2.5],\"data_offsets\":[0,8]}}", 8, "non-negative");
  expectFail("{\"x\":{\"dtype\":\"F32\",\"shape\":[1099511627776,1099511627776,1099511627776],"
             "\"data_offsets\":[0,8]}}",
             8, "too large");
  expectFail("{\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,18446744073709551615]}}", 8,
             "extend past the end");
  expectFail("{\"x\":{\"dtype\":\"F32\",\"shape\":[2]}}", 8, "missing \"data_offsets\"");
  // The tensors must tile the data section: no overlap, no gap, nothing after.
  expectFail("{\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
             "\"y\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}",
             12, "tensor 'y' at byte 120: its data_offsets [4, 12] overlap tensor 'x' (which ends at 8)");
  expectFail("{\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
             "\"y\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[12,16]}}",
             16, "bytes [8, 12) of the data section belong to no tensor");
  expectFail("{\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 12,
             "safetensors data section at byte 70: bytes [8, 12) of the data section belong to no tensor");
  std::string manyDims = "[";
  for (int i = 0; i < 2000; ++i)
    manyDims += i ? ",1" : "1";
  expectFail("{\"x\":{\"dtype\":\"F32\",\"shape\":" + manyDims + "],\"data_offsets\":[0,4]}}", 8,
             "more than 1024 dimensions");
  expectFail("{\"x\":[1,2]}", 8, "tensor 'x' at byte 13: expected an object");
  expectFail("{\"__metadata__\":[],\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 8,
             "__metadata__ must be an object");
  expectFail("{\"__metadata__\":{\"a\":1},\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 8,
             "__metadata__ value");
}

TEST_F(WeightsTest, SafetensorsHeaderLength) {
  std::string err;
  std::map<std::string, HostTensor> r;
  Bytes b = safetensorsBytes("{}", {});
  b[0] = 200; // header length 200 > file size - 8
  writeBytes(path("t.safetensors"), b);
  EXPECT_FALSE(readSafetensors(path("t.safetensors"), r, err));
  EXPECT_TRUE(contains(err, "safetensors header at byte 0: truncated: header length 200 extends past the end")) << err;
  b[7] = 0xFF; // ~2^63
  writeBytes(path("t.safetensors"), b);
  EXPECT_FALSE(readSafetensors(path("t.safetensors"), r, err));
  EXPECT_TRUE(contains(err, "extends past the end")) << err;
  // > 100 MB header in a (sparse) file that really is that long
  {
    Bytes hdr(8, 0);
    uint64_t n = 150ull << 20;
    for (int i = 0; i < 8; ++i)
      hdr[i] = static_cast<uint8_t>(n >> (8 * i));
    writeBytes(path("big.safetensors"), hdr);
    fs::resize_file(path("big.safetensors"), 8 + n);
    EXPECT_FALSE(readSafetensors(path("big.safetensors"), r, err));
    EXPECT_TRUE(contains(err, "exceeds the 104857600-byte limit")) << err;
  }
  writeBytes(path("s.safetensors"), Bytes{1, 2, 3});
  EXPECT_FALSE(readSafetensors(path("s.safetensors"), r, err));
  EXPECT_TRUE(contains(err, "needs at least 8")) << err;
}

TEST_F(WeightsTest, SafetensorsMalformedJson) {
  const char *bad[] = {
      "",  "{",  "[]", "{\"a\":}", "{\"a\" 1}", "{\"a\":1,}", "{'a':1}", "{\"a\":01}",
      "{\"a\":tru}", "{\"a\":\"\\x\"}", "{\"a\":\"\\ud800\"}", "{\"a\":\"unterminated}",
      "{\"a\":1} x", "{\"a\":1,\"a\":2}", "{\"a\":\"tab\there\"}", "{\"a\":-}", "{\"a\":1.}",
      "{\"a\":1e}", "{\"a\":[1,2}", "nul",
  };
  for (const char *j : bad) {
    std::string json = j;
    writeBytes(path("t.safetensors"), safetensorsBytes(json, {}));
    std::map<std::string, HostTensor> r;
    std::string err;
    EXPECT_FALSE(readSafetensors(path("t.safetensors"), r, err)) << json;
    EXPECT_TRUE(contains(err, "safetensors header")) << json << " -> " << err;
  }
  // deep nesting fails cleanly instead of overflowing the stack
  std::string deep = "{\"__metadata__\":" + std::string(100000, '[') + std::string(100000, ']') + "}";
  writeBytes(path("d.safetensors"), safetensorsBytes(deep, {}));
  std::map<std::string, HostTensor> r;
  std::string err;
  EXPECT_FALSE(readSafetensors(path("d.safetensors"), r, err));
  EXPECT_TRUE(contains(err, "nested deeper")) << err;
  // error offset points into the JSON (8 + position)
  writeBytes(path("p.safetensors"), safetensorsBytes("{\"a\":?}", {}));
  EXPECT_FALSE(readSafetensors(path("p.safetensors"), r, err));
  EXPECT_TRUE(contains(err, "safetensors header at byte 13: malformed JSON")) << err;
}

TEST_F(WeightsTest, SafetensorsMissingKeyListsKeys) {
  std::string err;
  ASSERT_TRUE(writeSafetensors(path("m.safetensors"), sampleMap(true), err)) << err;
  HostTensor a;
  EXPECT_FALSE(readArray(path("m.safetensors"), "h.0.w", a, err));
  EXPECT_TRUE(contains(err, "no tensor 'h.0.w'")) << err;
  EXPECT_TRUE(contains(err, "'empty', 'layer.0/bias', 'scalar'")) << err;
  EXPECT_TRUE(contains(err, "(12 in total)")) << err;
}

TEST_F(WeightsTest, SafetensorsTruncationAtEveryOffset) {
  std::string err;
  std::map<std::string, HostTensor> m = {{"a", sampleArray(DType::F16, {3})},
                                    {"b", sampleArray(DType::I64, {2})}};
  ASSERT_TRUE(writeSafetensors(path("full.safetensors"), m, err)) << err;
  Bytes full = readBytes(path("full.safetensors"));
  for (size_t k = 0; k < full.size(); ++k) {
    writeBytes(path("c.safetensors"), Bytes(full.begin(), full.begin() + k));
    std::map<std::string, HostTensor> r;
    err.clear();
    ASSERT_FALSE(readSafetensors(path("c.safetensors"), r, err)) << k;
    ASSERT_TRUE(contains(err, path("c.safetensors") + ": ")) << err;
    TensorHeader h;
    ASSERT_FALSE(readHeader(path("c.safetensors"), "b", h, err)) << k;
  }
}

TEST_F(WeightsTest, SafetensorsRandomCorruptionNeverCrashes) {
  std::string err;
  ASSERT_TRUE(writeSafetensors(path("full.safetensors"), sampleMap(true), err)) << err;
  Bytes full = readBytes(path("full.safetensors"));
  std::mt19937 rng(99);
  for (int iter = 0; iter < 1500; ++iter) {
    Bytes b = full;
    size_t limit = std::min<size_t>(b.size(), 8 + 600); // mostly hit the header
    b[rng() % limit] = static_cast<uint8_t>(rng());
    writeBytes(path("r.safetensors"), b);
    std::map<std::string, HostTensor> r;
    err.clear();
    if (!readSafetensors(path("r.safetensors"), r, err)) {
      ASSERT_FALSE(err.empty());
    }
  }
}

// ---- dispatch --------------------------------------------------------------------------

TEST_F(WeightsTest, ReadArrayAndHeaderDispatch) {
  std::string err;
  HostTensor src = sampleArray(DType::I64, {2, 2});
  ASSERT_TRUE(writeNpy(path("w.npy"), src, err)) << err;
  HostTensor a;
  ASSERT_TRUE(readArray(path("w.npy"), "", a, err)) << err;
  expectSame(src, a);
  EXPECT_FALSE(readArray(path("w.npy"), "x", a, err));
  EXPECT_TRUE(contains(err, "must be empty")) << err;
  TensorHeader h;
  ASSERT_TRUE(readHeader(path("w.npy"), "", h, err)) << err;
  EXPECT_EQ(h.dtype, DType::I64);
  EXPECT_EQ(h.shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(h.numel(), 4);
  EXPECT_FALSE(readArray(path("w.pt"), "", a, err));
  EXPECT_EQ(err, path("w.pt") + ": unknown weight file extension '.pt' (expected .npy, .npz or .safetensors)");
  EXPECT_FALSE(readHeader(path("weights"), "", h, err));
  EXPECT_TRUE(contains(err, "extension (none)")) << err;
  // readHeader notices a file too short for its data without reading it
  Bytes b = readBytes(path("w.npy"));
  b.pop_back();
  writeBytes(path("short.npy"), b);
  EXPECT_FALSE(readHeader(path("short.npy"), "", h, err));
  EXPECT_TRUE(contains(err, "truncated: data needs 32 bytes")) << err;
}
