//===- EmuTest.cpp - dlc_cuda_emu.h against CPU references ----------------===//
//
// The kernels are in EmuKernels.cu (compiled with -include dlc_cuda_emu.h);
// this file launches them through their stubs, as the cuda-emu device does,
// and compares with plain C++ references.
//
//===----------------------------------------------------------------------===//

#include "runtime/hal/cuda_emu/CudaEmuDevice.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstring>
#include <random>
#include <string>
#include <vector>

extern "C" {
#define DLC_STUB(name) void dlc_emu_launch_##name(const dlc_emu_launch_t *, void **);
DLC_STUB(reduce_sum)
DLC_STUB(matmul_tiled)
DLC_STUB(divergent_shuffle)
DLC_STUB(reverse_dynamic)
DLC_STUB(atomics)
DLC_STUB(half_convert)
DLC_STUB(votes)
DLC_STUB(gelu_vec4)
DLC_STUB(divergent_barrier)
#undef DLC_STUB
unsigned long emu_launch_layout(unsigned long *offsets);
}

namespace {

/// A launch with an error buffer; `threads` OS threads (0: one per core).
struct Launch {
  dlc_emu_launch_t l{};
  char error[512] = {0};
  Launch(unsigned gx, unsigned bx, unsigned by = 1, uint64_t shared = 0, unsigned gy = 1) {
    l.grid[0] = gx, l.grid[1] = gy, l.grid[2] = 1;
    l.block[0] = bx, l.block[1] = by, l.block[2] = 1;
    l.dynamic_shared_bytes = shared;
    l.threads = 2;
    l.error = error;
    l.error_size = sizeof error;
  }
};

/// args[i] = &values[i], as cuLaunchKernel's kernelParams.
template <typename... T> std::vector<void *> params(T *...values) { return {values...}; }

std::vector<float> randomFloats(size_t n, unsigned seed, float lo = -1, float hi = 1) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (float &x : v)
    x = d(rng);
  return v;
}

// One definition (dlc_emu_launch.h), two compilations: the kernels' flags
// (EmuCompile's) and the runtime's must give it the same layout.
TEST(CudaEmu, LaunchLayoutIsTheSameInKernelsAndTheRuntime) {
  unsigned long offsets[6];
  EXPECT_EQ(emu_launch_layout(offsets), sizeof(dlc_emu_launch_t));
  EXPECT_EQ(offsets[0], offsetof(dlc_emu_launch_t, grid));
  EXPECT_EQ(offsets[1], offsetof(dlc_emu_launch_t, block));
  EXPECT_EQ(offsets[2], offsetof(dlc_emu_launch_t, dynamic_shared_bytes));
  EXPECT_EQ(offsets[3], offsetof(dlc_emu_launch_t, threads));
  EXPECT_EQ(offsets[4], offsetof(dlc_emu_launch_t, error));
  EXPECT_EQ(offsets[5], offsetof(dlc_emu_launch_t, error_size));
}

TEST(CudaEmu, WarpShuffleReduction) {
  const int n = 100003;
  std::vector<float> x = randomFloats(n, 1);
  double expected = 0;
  for (float v : x)
    expected += v;
  float out = 0;
  const float *xp = x.data();
  float *op = &out;
  int count = n;
  Launch launch(40, 256);
  auto args = params(&xp, &op, &count);
  dlc_emu_launch_reduce_sum(&launch.l, args.data());
  ASSERT_STREQ(launch.error, "");
  EXPECT_NEAR(out, expected, 1e-2);
}

TEST(CudaEmu, TiledMatmulWithStaticSharedMemory) {
  const int m = 70, n = 45, k = 50;
  std::vector<float> a = randomFloats(size_t(m) * k, 2), b = randomFloats(size_t(k) * n, 3);
  std::vector<float> c(size_t(m) * n, -1.0f);
  const float *ap = a.data(), *bp = b.data();
  float *cp = c.data();
  int mm = m, nn = n, kk = k;
  Launch launch((n + 15) / 16, 16, 16, 0, (m + 15) / 16);
  auto args = params(&ap, &bp, &cp, &mm, &nn, &kk);
  dlc_emu_launch_matmul_tiled(&launch.l, args.data());
  ASSERT_STREQ(launch.error, "");
  double worst = 0;
  for (int r = 0; r < m; ++r)
    for (int col = 0; col < n; ++col) {
      double ref = 0;
      for (int i = 0; i < k; ++i)
        ref += double(a[r * k + i]) * b[i * n + col];
      worst = std::max(worst, std::abs(ref - c[r * n + col]));
    }
  EXPECT_LT(worst, 1e-4);
}

TEST(CudaEmu, DivergentHalfWarpShuffleThenSyncthreads) {
  const int blocks = 5, threads = 128;
  std::vector<int> x(blocks * threads);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = int(i * 7 % 101);
  std::vector<int> out(blocks, -1);
  const int *xp = x.data();
  int *op = out.data();
  Launch launch(blocks, threads);
  auto args = params(&xp, &op);
  dlc_emu_launch_divergent_shuffle(&launch.l, args.data());
  ASSERT_STREQ(launch.error, "");
  for (int b = 0; b < blocks; ++b) {
    int expected = 0;
    for (int t = 0; t < threads; ++t)
      if (t % 32 < 16)
        expected += x[b * threads + t];
    EXPECT_EQ(out[b], expected) << "block " << b;
  }
}

TEST(CudaEmu, DynamicSharedMemory) {
  const int blocks = 6, threads = 200;
  std::vector<float> x = randomFloats(blocks * threads, 4), y(x.size());
  const float *xp = x.data();
  float *yp = y.data();
  Launch launch(blocks, threads, 1, threads * sizeof(float));
  auto args = params(&xp, &yp);
  dlc_emu_launch_reverse_dynamic(&launch.l, args.data());
  ASSERT_STREQ(launch.error, "");
  for (int b = 0; b < blocks; ++b)
    for (int t = 0; t < threads; ++t)
      ASSERT_EQ(y[b * threads + t], x[b * threads + threads - 1 - t]);
}

TEST(CudaEmu, DynamicSharedMemoryOverTheLimitIsAnError) {
  float dummy = 0;
  float *p = &dummy;
  Launch launch(1, 1, 1, 300 * 1024);
  auto args = params(&p, &p);
  dlc_emu_launch_reverse_dynamic(&launch.l, args.data());
  EXPECT_NE(std::string(launch.error).find("dynamic shared memory"), std::string::npos)
      << launch.error;
}

TEST(CudaEmu, AtomicsAcrossBlocks) {
  const int n = 5000;
  std::vector<int> values(n);
  for (int i = 0; i < n; ++i)
    values[i] = (i * 37) % 1000;
  std::vector<int> histogram(8, 0);
  float sum = 0;
  _Float16 halfSum = 0; // the kernel writes it as __half bits
  int maximum = -1;
  unsigned counter = 0;
  const int *vp = values.data();
  int nn = n;
  int *hp = histogram.data();
  float *sp = &sum;
  void *halfp = &halfSum;
  int *mp = &maximum;
  unsigned *cp = &counter;
  Launch launch(13, 96);
  launch.l.threads = 4; // more OS threads than cores: real contention
  auto args = params(&vp, &nn, &hp, &sp, &halfp, &mp, &cp);
  dlc_emu_launch_atomics(&launch.l, args.data());
  ASSERT_STREQ(launch.error, "");
  std::vector<int> expected(8, 0);
  for (int v : values)
    ++expected[v % 8];
  EXPECT_EQ(histogram, expected);
  EXPECT_EQ(sum, 0.5f * n);
  EXPECT_EQ(maximum, 999);
  EXPECT_EQ(counter, unsigned(n));
  // 2048 is where fp16 stops counting by one: x + 1 rounds to x (ties to even).
  EXPECT_EQ(float(halfSum), 2048.0f);
}

/// The nearest bf16 to `f`, ties to even, by search (independent of the
/// header's bit trick).
float nearestBf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  uint32_t down = u & 0xffff0000u, up = down + 0x10000u;
  float fd, fu;
  std::memcpy(&fd, &down, 4);
  std::memcpy(&fu, &up, 4);
  double dd = std::abs(double(f) - fd), du = std::abs(double(fu) - f);
  if (dd < du || (dd == du && !(down & 0x10000u)))
    return fd;
  return fu;
}

TEST(CudaEmu, HalfAndBf16Conversions) {
  // Edge values and random ones across many magnitudes, subnormals included.
  std::vector<float> x = {0.0f, -0.0f, 1.0f, -2.5f, 65504.0f, 65520.0f, 1e-8f, 6.1e-5f,
                          5.96e-8f, 2.98e-8f, 3e-8f, 0.1f, 1.0f / 3.0f, 1e30f, -1e-30f};
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> exponent(-30, 20), mantissa(-1, 1);
  for (int i = 0; i < 2000; ++i)
    x.push_back(mantissa(rng) * std::exp2(exponent(rng)));
  const int n = int(x.size());
  std::vector<uint16_t> h(n), b(n), hSum(n);
  std::vector<float> hBack(n), bBack(n);
  const float *xp = x.data();
  void *hp = h.data(), *bp = b.data(), *sp = hSum.data();
  float *hbp = hBack.data(), *bbp = bBack.data();
  int nn = n;
  Launch launch((n + 127) / 128, 128);
  auto args = params(&xp, &hp, &bp, &hbp, &bbp, &sp, &nn);
  dlc_emu_launch_half_convert(&launch.l, args.data());
  ASSERT_STREQ(launch.error, "");
  for (int i = 0; i < n; ++i) {
    // GCC's _Float16 (x86-64 SSE2) converts with round to nearest even.
    _Float16 ref = static_cast<_Float16>(x[i]);
    uint16_t refBits;
    std::memcpy(&refBits, &ref, 2);
    ASSERT_EQ(h[i], refBits) << "x = " << x[i];
    ASSERT_EQ(hBack[i], float(ref)) << "x = " << x[i];
    ASSERT_EQ(bBack[i], nearestBf16(x[i])) << "x = " << x[i];
    _Float16 sum = static_cast<_Float16>(float(ref) + float(static_cast<_Float16>(float(ref) * 2.0f)));
    uint16_t sumBits;
    std::memcpy(&sumBits, &sum, 2);
    if (!std::isnan(float(sum)))
      ASSERT_EQ(hSum[i], sumBits) << "x = " << x[i];
  }
}

TEST(CudaEmu, HalfRoundTripsEveryBitPattern) {
  std::vector<float> x(65536);
  for (uint32_t bits = 0; bits < 65536; ++bits) {
    _Float16 f;
    uint16_t b16 = uint16_t(bits);
    std::memcpy(&f, &b16, 2);
    x[bits] = float(f);
  }
  const int n = 65536;
  std::vector<uint16_t> h(n), b(n), hSum(n);
  std::vector<float> hBack(n), bBack(n);
  const float *xp = x.data();
  void *hp = h.data(), *bp = b.data(), *sp = hSum.data();
  float *hbp = hBack.data(), *bbp = bBack.data();
  int nn = n;
  Launch launch(n / 1024, 1024);
  auto args = params(&xp, &hp, &bp, &hbp, &bbp, &sp, &nn);
  dlc_emu_launch_half_convert(&launch.l, args.data());
  ASSERT_STREQ(launch.error, "");
  for (uint32_t bits = 0; bits < 65536; ++bits) {
    if (std::isnan(x[bits]))
      continue;
    ASSERT_EQ(h[bits], bits);
    ASSERT_EQ(std::memcmp(&hBack[bits], &x[bits], 4), 0) << bits;
  }
}

TEST(CudaEmu, VotesAndSyncthreadsCount) {
  const int blocks = 3, threads = 96;
  std::vector<int> x(blocks * threads);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = int(i * 13 % 97);
  std::vector<unsigned> ballots(x.size() / 32);
  std::vector<int> anyAll(2 * x.size() / 32), counts(blocks);
  const int *xp = x.data();
  unsigned *bp = ballots.data();
  int *ap = anyAll.data(), *cp = counts.data();
  Launch launch(blocks, threads);
  auto args = params(&xp, &bp, &ap, &cp);
  dlc_emu_launch_votes(&launch.l, args.data());
  ASSERT_STREQ(launch.error, "");
  for (size_t w = 0; w < ballots.size(); ++w) {
    unsigned ballot = 0;
    int any = 0, all = 1;
    for (int l = 0; l < 32; ++l) {
      int v = x[w * 32 + l];
      ballot |= unsigned(v & 1) << l;
      any |= v > 90;
      all &= v >= 0;
    }
    EXPECT_EQ(ballots[w], ballot) << "warp " << w;
    EXPECT_EQ(anyAll[2 * w], any);
    EXPECT_EQ(anyAll[2 * w + 1], all);
  }
  for (int b = 0; b < blocks; ++b) {
    int count = 0;
    for (int t = 0; t < threads; ++t)
      count += x[b * threads + t] > 50;
    EXPECT_EQ(counts[b], count);
  }
}

TEST(CudaEmu, VectorisedGridStrideMath) {
  const int vectors = 3001;
  std::vector<float> x = randomFloats(size_t(vectors) * 4, 6, -3, 3), y(x.size());
  const void *xp = x.data();
  void *yp = y.data();
  int nv = vectors;
  Launch launch(7, 32, 4);
  auto args = params(&xp, &yp, &nv);
  dlc_emu_launch_gelu_vec4(&launch.l, args.data());
  ASSERT_STREQ(launch.error, "");
  for (int i = 0; i < vectors; ++i) {
    auto gelu = [](double t) { return 0.5 * t * (1.0 + std::erf(t * 0.70710678)); };
    EXPECT_NEAR(y[4 * i], gelu(x[4 * i]), 1e-5);
    EXPECT_NEAR(y[4 * i + 1], gelu(x[4 * i + 1]), 1e-5);
    EXPECT_NEAR(y[4 * i + 2], std::tanh(double(x[4 * i + 2])), 1e-6);
    EXPECT_NEAR(y[4 * i + 3], std::max(x[4 * i + 3], 0.0f) * 0.5, 1e-6);
  }
}

TEST(CudaEmu, DivergentBarrierIsReportedNotHung) {
  std::vector<int> x(64, 0);
  int *xp = x.data();
  Launch launch(2, 64);
  auto args = params(&xp);
  dlc_emu_launch_divergent_barrier(&launch.l, args.data());
  EXPECT_NE(std::string(launch.error).find("barriers that can never be released"),
            std::string::npos)
      << launch.error;
}

} // namespace
