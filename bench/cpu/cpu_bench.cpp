//===- cpu_bench.cpp - timings for bench/cpu/bench_cpu.py -----------------===//
//
//   dlc-bench-cpu run M.dlcm [THREADS] [ITERATIONS]
//       a session on "cpu" with THREADS workers, random inputs, 10 warm-up
//       runs, then ITERATIONS timed runs: prints "median_ms p10_ms p90_ms".
//   dlc-bench-cpu gemm [THREADS]
//       single-precision GEMM GFLOP/s of OpenBLAS and oneDNN for the bench
//       models' shapes and a large square one (the machine's measured peak).
//
//===----------------------------------------------------------------------===//

#include "dlc/runtime.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include <dnnl.h>

extern "C" {
void cblas_sgemm(int, int, int, int, int, int, float, const float *, int,
                 const float *, int, float, float *, int);
void openblas_set_num_threads(int);
}

using Clock = std::chrono::steady_clock;

static double seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

static int runModule(const char *path, unsigned threads, int iterations) {
  dlc::Module module = dlc::Module::loadFile(path);
  dlc::Session session(module, "cpu", threads);
  std::vector<std::vector<uint8_t>> storage;
  std::vector<DLTensor> tensors;
  size_t n = module.inputCount() + module.outputCount();
  tensors.reserve(n);
  std::mt19937 rng(1);
  std::normal_distribution<float> normal;
  for (size_t i = 0; i < n; ++i) {
    bool input = i < module.inputCount();
    dlc_tensor_info_t info = input ? module.input(i) : module.output(i - module.inputCount());
    storage.emplace_back(std::max<uint64_t>(info.size_bytes, 4));
    if (input && info.dtype.code == kDLFloat && info.dtype.bits == 32) {
      float *f = reinterpret_cast<float *>(storage.back().data());
      for (uint64_t k = 0; k < info.size_bytes / 4; ++k)
        f[k] = normal(rng);
    }
    DLTensor t{};
    t.data = storage.back().data();
    t.device = {kDLCPU, 0};
    t.ndim = info.ndim;
    t.dtype = info.dtype;
    t.shape = const_cast<int64_t *>(info.shape);
    tensors.push_back(t);
  }
  std::vector<const DLTensor *> in, out;
  for (size_t i = 0; i < n; ++i)
    (i < module.inputCount() ? in : out).push_back(&tensors[i]);
  for (int i = 0; i < 10; ++i)
    session.run(in, out);
  std::vector<double> ms;
  for (int i = 0; i < iterations; ++i) {
    auto a = Clock::now();
    session.run(in, out);
    ms.push_back(1e3 * seconds(a, Clock::now()));
  }
  std::sort(ms.begin(), ms.end());
  std::printf("%.4f %.4f %.4f\n", ms[ms.size() / 2], ms[ms.size() / 10],
              ms[ms.size() * 9 / 10]);
  return 0;
}

/// Best GFLOP/s of `gemm` over a few repetitions of about 0.2 s.
template <typename F>
static double gflops(int m, int n, int k, F gemm) {
  gemm();
  double best = 0;
  for (int rep = 0; rep < 5; ++rep) {
    int calls = 0;
    auto a = Clock::now();
    double t = 0;
    while (t < 0.2) {
      gemm();
      ++calls;
      t = seconds(a, Clock::now());
    }
    best = std::max(best, 2.0 * m * n * k * calls / t / 1e9);
  }
  return best;
}

static int runGemm(int threads) {
  openblas_set_num_threads(threads);
  std::string env = std::to_string(threads);
  setenv("OMP_NUM_THREADS", env.c_str(), 1);
  struct Shape { const char *what; int m, n, k; };
  Shape shapes[] = {{"mlp fc1 (N=64)", 64, 128, 784},
                    {"gpt2 qkv/proj (T=128)", 128, 768, 768},
                    {"gpt2 fc (T=128)", 128, 3072, 768},
                    {"gpt2 proj (T=128)", 128, 768, 3072},
                    {"square 2048 (peak)", 2048, 2048, 2048}};
  std::printf("shape m n k openblas_gflops onednn_gflops\n");
  for (const Shape &s : shapes) {
    std::vector<float> a((size_t)s.m * s.k, 0.5f), b((size_t)s.k * s.n, 0.25f),
        c((size_t)s.m * s.n);
    double blas = gflops(s.m, s.n, s.k, [&] {
      cblas_sgemm(101, 111, 111, s.m, s.n, s.k, 1.0f, a.data(), s.k, b.data(),
                  s.n, 0.0f, c.data(), s.n);
    });
    double dnnl = gflops(s.m, s.n, s.k, [&] {
      dnnl_sgemm('N', 'N', s.m, s.n, s.k, 1.0f, a.data(), s.k, b.data(), s.n,
                 0.0f, c.data(), s.n);
    });
    std::printf("\"%s\" %d %d %d %.1f %.1f\n", s.what, s.m, s.n, s.k, blas, dnnl);
  }
  return 0;
}

int main(int argc, char **argv) {
  try {
    std::string what = argc > 1 ? argv[1] : "";
    if (what == "run" && argc >= 3)
      return runModule(argv[2], argc > 3 ? std::atoi(argv[3]) : 0,
                       argc > 4 ? std::atoi(argv[4]) : 100);
    if (what == "gemm")
      return runGemm(argc > 2 ? std::atoi(argv[2]) : 1);
  } catch (const dlc::Error &e) {
    std::fprintf(stderr, "dlc-bench-cpu: %s\n", e.what());
    return e.exitCode();
  }
  std::fprintf(stderr, "usage: dlc-bench-cpu run M.dlcm [THREADS] [ITERATIONS] | gemm [THREADS]\n");
  return 2;
}
