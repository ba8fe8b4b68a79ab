//===- cpu_bench.cpp - timings for bench/cpu/bench_cpu.py -----------------===//
//
//   dlc-bench-cpu run M.dlcm [THREADS] [ITERATIONS] [N]
//       a session on "cpu" with THREADS workers, random inputs, warm-up
//       runs (10, and 0.3 s at least: a fresh process's first ~0.1 s runs
//       slower, as the VM's second core wakes up and libraries' threads
//       settle, which is start-up, not the latency a serving process
//       sees), then ITERATIONS timed runs: prints "median_ms p10_ms p90_ms"
//       (a module compiled for a range of N at N, default its largest).
//   dlc-bench-cpu gemm [THREADS]
//       single-precision GEMM GFLOP/s of OpenBLAS and oneDNN for the bench
//       models' shapes and a large square one: each library with THREADS
//       threads of its own, and each single-threaded on THREADS spinning
//       threads that split M in contiguous row blocks (what a dlc kernel
//       does), or N in column blocks.
//   dlc-bench-cpu peak [THREADS]
//       the machine's f32 FMA peak: a tight loop of independent AVX-512 (and
//       AVX2) FMAs on THREADS threads, GFLOP/s.
//
//===----------------------------------------------------------------------===//

#include "dlc/runtime.hpp"

#include <algorithm>
#include <atomic>
#include <functional>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <dlfcn.h>
#include <dnnl.h>
#include <immintrin.h>

extern "C" {
// libgomp, oneDNN's threading: OMP_NUM_THREADS is read when the library
// loads, so a setenv in main is too late; the thread count is set per thread.
void omp_set_num_threads(int);
}

using Clock = std::chrono::steady_clock;

/// OpenBLAS, loaded by the GEMM table only, as generated modules load it:
/// linked, its constructor's threads spin for ~0.1 s at start-up and slowed
/// the first runs `run` measures.
struct OpenBlas {
  void (*sgemm)(int, int, int, int, int, int, float, const float *, int, const float *, int,
                float, float *, int);
  void (*setThreads)(int);
  OpenBlas() {
    void *lib = dlopen("libopenblas.so.0", RTLD_NOW);
    if (!lib)
      throw std::runtime_error(std::string("cannot load OpenBLAS: ") + dlerror());
    sgemm = reinterpret_cast<decltype(sgemm)>(dlsym(lib, "cblas_sgemm"));
    setThreads = reinterpret_cast<decltype(setThreads)>(dlsym(lib, "openblas_set_num_threads"));
    if (!sgemm || !setThreads)
      throw std::runtime_error("OpenBLAS has no cblas_sgemm or openblas_set_num_threads");
  }
};

static double seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

static int runModule(const char *path, unsigned threads, int iterations, int64_t extent) {
  dlc::Module module = dlc::Module::loadFile(path);
  dlc::Session session(module, "cpu", threads);
  // A module for a range of sizes (dlc compile --dim N=1..64) runs at
  // `extent`: its dynamic tensors' dimension 0 scaled from the largest N.
  const int64_t max = module.dynamicDimCount() ? module.dynamicDim(0).max : 0;
  std::vector<std::vector<uint8_t>> storage;
  std::vector<std::vector<int64_t>> shapes;
  std::vector<DLTensor> tensors;
  size_t n = module.inputCount() + module.outputCount();
  tensors.reserve(n);
  std::mt19937 rng(1);
  std::normal_distribution<float> normal;
  for (size_t i = 0; i < n; ++i) {
    bool input = i < module.inputCount();
    dlc_tensor_info_t info = input ? module.input(i) : module.output(i - module.inputCount());
    shapes.emplace_back(info.shape, info.shape + info.ndim);
    int32_t dynamic = input ? module.inputDynamicDim(i)
                            : module.outputDynamicDim(i - module.inputCount());
    if (dynamic >= 0 && extent > 0 && max > 0) {
      info.size_bytes = info.size_bytes / static_cast<uint64_t>(max) * extent;
      shapes.back()[0] = shapes.back()[0] / max * extent;
    }
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
    tensors.push_back(t);
  }
  for (size_t i = 0; i < n; ++i)
    tensors[i].shape = shapes[i].data();
  std::vector<const DLTensor *> in, out;
  for (size_t i = 0; i < n; ++i)
    (i < module.inputCount() ? in : out).push_back(&tensors[i]);
  const auto warmUpStart = Clock::now();
  for (int i = 0; i < 10 || seconds(warmUpStart, Clock::now()) < 0.3; ++i)
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

/// Threads that stay up between calls and spin for work, as the runtime's
/// pool does while kernels follow each other (runtime/hal/cpu/
/// ThreadPool.cpp): a call costs a store and a spin, not a thread's start.
class SpinTeam {
public:
  explicit SpinTeam(int threads) : threads_(threads) {
    for (int t = 1; t < threads; ++t)
      workers_.emplace_back([this, t] {
        omp_set_num_threads(1);
        uint64_t seen = 0;
        for (;;) {
          uint64_t g;
          while ((g = generation_.load(std::memory_order_acquire)) == seen)
            _mm_pause();
          seen = g;
          if (stop_)
            return;
          (*fn_)(t);
          done_.fetch_add(1, std::memory_order_acq_rel);
        }
      });
  }
  ~SpinTeam() {
    stop_ = true;
    generation_.fetch_add(1, std::memory_order_acq_rel);
    for (std::thread &t : workers_)
      t.join();
  }
  /// fn(t) on every thread t in [0, threads), the caller being thread 0.
  template <typename F>
  void run(F &&fn) {
    std::function<void(int)> f = fn;
    fn_ = &f;
    done_.store(0, std::memory_order_relaxed);
    generation_.fetch_add(1, std::memory_order_acq_rel);
    f(0);
    while (done_.load(std::memory_order_acquire) != threads_ - 1)
      _mm_pause();
  }

private:
  int threads_;
  std::vector<std::thread> workers_;
  std::atomic<uint64_t> generation_{0};
  std::atomic<int> done_{0};
  std::atomic<bool> stop_{false};
  const std::function<void(int)> *fn_ = nullptr;
};

/// `fn(begin, end)` over [0, extent) in `team`'s contiguous blocks (whole
/// multiples of `unit`), each thread running its library single-threaded.
template <typename F>
static void split(SpinTeam &team, int threads, int extent, int unit, F fn) {
  int units = (extent + unit - 1) / unit;
  int chunk = (units + threads - 1) / threads * unit;
  team.run([&](int t) {
    int b = std::min(extent, t * chunk), e = std::min(extent, b + chunk);
    if (b < e)
      fn(b, e);
  });
}

static int runGemm(int threads) {
  struct Shape { const char *what; int m, n, k; };
  Shape shapes[] = {{"mlp fc1 (N=64)", 64, 128, 784},
                    {"gpt2 qkv/proj (T=128)", 128, 768, 768},
                    {"gpt2 fc (T=128)", 128, 3072, 768},
                    {"gpt2 proj (T=128)", 128, 768, 3072},
                    {"gpt2 scores (per head)", 128, 128, 64},
                    // Power-of-two leading dimensions (GPT-2 medium's d = 1024,
                    // its 4d up-projection): rows 4 KiB apart alias in the cache.
                    {"d=1024 qkv/proj (T=256)", 256, 1024, 1024},
                    {"d=1024 fc (T=256)", 256, 4096, 1024},
                    {"d=1024 proj (T=256)", 256, 1024, 4096},
                    {"square 2048", 2048, 2048, 2048}};
  const OpenBlas openblas;
  std::printf("shape m n k openblas onednn openblas_split onednn_split openblas_split_n "
              "onednn_split_n\n");
  for (const Shape &s : shapes) {
    std::vector<float> a((size_t)s.m * s.k, 0.5f), b((size_t)s.k * s.n, 0.25f),
        c((size_t)s.m * s.n);
    auto blasRows = [&](int r0, int r1) {
      openblas.sgemm(101, 111, 111, r1 - r0, s.n, s.k, 1.0f, a.data() + (size_t)r0 * s.k,
                  s.k, b.data(), s.n, 0.0f, c.data() + (size_t)r0 * s.n, s.n);
    };
    auto dnnlRows = [&](int r0, int r1) {
      dnnl_sgemm('N', 'N', r1 - r0, s.n, s.k, 1.0f, a.data() + (size_t)r0 * s.k, s.k,
                 b.data(), s.n, 0.0f, c.data() + (size_t)r0 * s.n, s.n);
    };
    // Columns [n0, n1) of C from the same columns of B (B and C keep
    // their row strides): each thread packs only its part of B.
    auto blasCols = [&](int n0, int n1) {
      openblas.sgemm(101, 111, 111, s.m, n1 - n0, s.k, 1.0f, a.data(), s.k, b.data() + n0, s.n,
                  0.0f, c.data() + n0, s.n);
    };
    auto dnnlCols = [&](int n0, int n1) {
      dnnl_sgemm('N', 'N', s.m, n1 - n0, s.k, 1.0f, a.data(), s.k, b.data() + n0, s.n, 0.0f,
                 c.data() + n0, s.n);
    };
    openblas.setThreads(threads);
    omp_set_num_threads(threads);
    double blas = gflops(s.m, s.n, s.k, [&] { blasRows(0, s.m); });
    double dnnl = gflops(s.m, s.n, s.k, [&] { dnnlRows(0, s.m); });
    openblas.setThreads(1);
    omp_set_num_threads(1);
    // Up only for the split columns: its spinning threads would take the
    // cores from the libraries' own threads above.
    SpinTeam team(threads);
    auto rows = [&](auto fn) { return gflops(s.m, s.n, s.k, [&] { split(team, threads, s.m, 1, fn); }); };
    // Column blocks of 16 floats (whole vectors, 64-byte lines).
    auto cols = [&](auto fn) { return gflops(s.m, s.n, s.k, [&] { split(team, threads, s.n, 16, fn); }); };
    double blasSplit = rows(blasRows), dnnlSplit = rows(dnnlRows);
    double blasSplitN = cols(blasCols), dnnlSplitN = cols(dnnlCols);
    std::printf("\"%s\" %d %d %d %.1f %.1f %.1f %.1f %.1f %.1f\n", s.what, s.m, s.n, s.k, blas,
                dnnl, blasSplit, dnnlSplit, blasSplitN, dnnlSplitN);
  }
  return 0;
}

// GFLOP/s of one thread's tight loop of 12 independent FMA chains of VEC
// (8 or 16 floats; FMA and SET1 its intrinsics). A macro, not a template of
// lambdas: the intrinsics must be inlined into a function compiled for the
// width's target, which a lambda's call operator is not.
#define DLC_FMA_LOOP(VEC, SET1, FMA, STORE)                                    \
  VEC acc[12], x = SET1(0.999999f), y = SET1(1e-7f);                           \
  for (int i = 0; i < 12; ++i)                                                 \
    acc[i] = SET1(i * 1e-3f);                                                  \
  long iterations = 0;                                                         \
  auto a = Clock::now();                                                       \
  double t = 0;                                                                \
  while (t < secs) {                                                           \
    for (int r = 0; r < 100000; ++r)                                           \
      for (int i = 0; i < 12; ++i)                                             \
        acc[i] = FMA(acc[i], x, y);                                            \
    iterations += 100000;                                                      \
    t = seconds(a, Clock::now());                                              \
  }                                                                            \
  float lanes[sizeof(VEC) / 4], total = 0;                                     \
  for (int i = 0; i < 12; ++i) {                                               \
    STORE(lanes, acc[i]);                                                      \
    total += lanes[0];                                                         \
  }                                                                            \
  if (total == 12345.0f) /* keeps the chains alive */                          \
    std::printf(" ");                                                          \
  return iterations * 12.0 * (sizeof(VEC) / 4) * 2 / t / 1e9;

__attribute__((target("avx512f,fma"))) static double fmaLoop512(double secs) {
  DLC_FMA_LOOP(__m512, _mm512_set1_ps, _mm512_fmadd_ps, _mm512_storeu_ps)
}

__attribute__((target("avx2,fma"))) static double fmaLoop256(double secs) {
  DLC_FMA_LOOP(__m256, _mm256_set1_ps, _mm256_fmadd_ps, _mm256_storeu_ps)
}
#undef DLC_FMA_LOOP

/// The best of 5 rounds of every thread's FMA loop at each vector width the
/// CPU has: "fma512 G" (only with AVX-512) and "fma256 G", GFLOP/s summed
/// over the threads.
static int runPeak(int threads) {
  for (int bits : {512, 256}) {
    if (bits == 512 && !__builtin_cpu_supports("avx512f"))
      continue;
    double best = 0;
    for (int rep = 0; rep < 5; ++rep) {
      std::vector<double> r(threads);
      std::vector<std::thread> pool;
      for (int i = 0; i < threads; ++i)
        pool.emplace_back([&, i] { r[i] = bits == 512 ? fmaLoop512(0.2) : fmaLoop256(0.2); });
      for (std::thread &t : pool)
        t.join();
      double sum = 0;
      for (double v : r)
        sum += v;
      best = std::max(best, sum);
    }
    std::printf("fma%d %.1f\n", bits, best);
  }
  return 0;
}

int main(int argc, char **argv) {
  try {
    std::string what = argc > 1 ? argv[1] : "";
    if (what == "run" && argc >= 3)
      return runModule(argv[2], argc > 3 ? std::atoi(argv[3]) : 0,
                       argc > 4 ? std::atoi(argv[4]) : 100, argc > 5 ? std::atoll(argv[5]) : 0);
    if (what == "gemm")
      return runGemm(argc > 2 ? std::atoi(argv[2]) : 1);
    if (what == "peak")
      return runPeak(argc > 2 ? std::atoi(argv[2]) : 1);
  } catch (const dlc::Error &e) {
    std::fprintf(stderr, "dlc-bench-cpu: %s\n", e.what());
    return e.exitCode();
  } catch (const std::exception &e) {
    std::fprintf(stderr, "dlc-bench-cpu: %s\n", e.what());
    return 1;
  }
  std::fprintf(stderr, "usage: dlc-bench-cpu run M.dlcm [THREADS] [ITERATIONS] [N] | gemm [THREADS] | peak [THREADS]\n");
  return 2;
}
