//===- gpu_bench.cpp - timings of prebuilt .dlcm modules on a device ------===//
//
//   dlc-bench-gpu M.dlcm DEVICE ITERATIONS [DIR]
//
// A session on DEVICE ("cuda:0", or "cuda-emu" to try it without a GPU);
// inputs read from DIR/<input name>.npy when that file exists (float32,
// little-endian, C order: the weights `dlc run --save-params` wrote), else
// drawn from a seeded normal distribution (f32, f16 or bf16 inputs). On CUDA the inputs and outputs
// live in device memory (cuMemAlloc through dlopen, in the runtime's
// primary context) so a run moves no data over PCIe. 5 warm-up runs, then
// ITERATIONS timed runs, each synchronised (dlc_session_run returns when
// the results are written); prints "median_ms p10_ms p90_ms" and, when
// DIR is given, writes DIR/<output name>.out.npy (the first output).
// Needs only the runtime (libdlc_runtime) and the driver: no LLVM.
//
//===----------------------------------------------------------------------===//

#include "dlc/runtime.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

using Clock = std::chrono::steady_clock;

namespace {

/// The few driver calls the runner needs, through dlopen.
struct Driver {
  using Init = int (*)(unsigned);
  using DeviceGet = int (*)(int *, int);
  using Retain = int (*)(void **, int);
  using SetCurrent = int (*)(void *);
  using Alloc = int (*)(unsigned long long *, size_t);
  using Copy = int (*)(unsigned long long, const void *, size_t);
  using CopyBack = int (*)(void *, unsigned long long, size_t);
  Alloc alloc = nullptr;
  Copy toDevice = nullptr;
  CopyBack toHost = nullptr;

  bool open(int ordinal) {
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib)
      return false;
    auto init = (Init)dlsym(lib, "cuInit");
    auto get = (DeviceGet)dlsym(lib, "cuDeviceGet");
    auto retain = (Retain)dlsym(lib, "cuDevicePrimaryCtxRetain");
    auto current = (SetCurrent)dlsym(lib, "cuCtxSetCurrent");
    alloc = (Alloc)dlsym(lib, "cuMemAlloc_v2");
    toDevice = (Copy)dlsym(lib, "cuMemcpyHtoD_v2");
    toHost = (CopyBack)dlsym(lib, "cuMemcpyDtoH_v2");
    int device = 0;
    void *context = nullptr;
    return init && get && retain && current && alloc && toDevice && toHost &&
           init(0) == 0 && get(&device, ordinal) == 0 &&
           retain(&context, device) == 0 && current(context) == 0;
  }
};

/// A float32 .npy (format 1.0/2.0, '<f4', C order) as raw bytes.
bool readNpy(const std::string &path, std::vector<uint8_t> &data) {
  std::ifstream f(path, std::ios::binary);
  if (!f)
    return false;
  std::string all((std::istreambuf_iterator<char>(f)), {});
  if (all.size() < 10 || all.compare(0, 6, "\x93NUMPY") != 0)
    return false;
  size_t headerLen = all[6] == 1 ? (uint8_t)all[8] | ((uint8_t)all[9] << 8) : 0;
  size_t start = 10 + headerLen;
  if (all[6] != 1) {
    headerLen = (uint8_t)all[8] | ((uint8_t)all[9] << 8) | ((uint8_t)all[10] << 16) |
                ((size_t)(uint8_t)all[11] << 24);
    start = 12 + headerLen;
  }
  std::string header = all.substr(0, start);
  if (header.find("'<f4'") == std::string::npos ||
      header.find("'fortran_order': False") == std::string::npos)
    return false;
  data.assign(all.begin() + start, all.end());
  return true;
}

void writeNpy(const std::string &path, const dlc_tensor_info_t &info,
              const std::vector<uint8_t> &data) {
  std::ostringstream shape;
  shape << "(";
  for (int i = 0; i < info.ndim; ++i)
    shape << info.shape[i] << (info.ndim == 1 || i + 1 < info.ndim ? "," : "");
  shape << ")";
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape.str() + ", }";
  while ((10 + header.size() + 1) % 64)
    header += ' ';
  header += '\n';
  std::ofstream f(path, std::ios::binary);
  f.write("\x93NUMPY\x01\x00", 8);
  uint16_t len = (uint16_t)header.size();
  f.write(reinterpret_cast<const char *>(&len), 2);
  f << header;
  f.write(reinterpret_cast<const char *>(data.data()), data.size());
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s M.dlcm DEVICE ITERATIONS [DIR]\n", argv[0]);
    return 2;
  }
  std::string device = argv[2];
  int iterations = std::atoi(argv[3]);
  std::string dir = argc > 4 ? argv[4] : "";
  try {
    dlc::Module module = dlc::Module::loadFile(argv[1]);
    dlc::Session session(module, device.c_str(), 0);
    bool gpu = device.rfind("cuda:", 0) == 0 || device == "cuda";
    Driver driver;
    if (gpu && !driver.open(device == "cuda" ? 0 : std::atoi(device.c_str() + 5))) {
      std::fprintf(stderr, "no CUDA driver for device memory\n");
      return 3;
    }
    size_t n = module.inputCount() + module.outputCount();
    std::vector<std::vector<uint8_t>> host(n);
    std::vector<DLTensor> tensors(n);
    std::mt19937 rng(1);
    std::normal_distribution<float> normal;
    for (size_t i = 0; i < n; ++i) {
      bool input = i < module.inputCount();
      dlc_tensor_info_t info = input ? module.input(i) : module.output(i - module.inputCount());
      host[i].resize(std::max<uint64_t>(info.size_bytes, 4));
      bool loaded = input && !dir.empty() &&
                    readNpy(dir + "/" + info.name + ".npy", host[i]) &&
                    host[i].size() == info.size_bytes;
      if (input && !loaded && info.dtype.code == kDLFloat && info.dtype.bits == 32) {
        host[i].resize(std::max<uint64_t>(info.size_bytes, 4));
        float *f = reinterpret_cast<float *>(host[i].data());
        for (uint64_t k = 0; k < info.size_bytes / 4; ++k)
          f[k] = normal(rng);
      } else if (input && !loaded && info.dtype.bits == 16 &&
                 (info.dtype.code == kDLFloat || info.dtype.code == kDLBfloat)) {
        // f16 and bf16 inputs (--precision, or 16-bit graphs), rounded to
        // nearest even.
        uint16_t *h = reinterpret_cast<uint16_t *>(host[i].data());
        for (uint64_t k = 0; k < info.size_bytes / 2; ++k) {
          float x = normal(rng);
          if (info.dtype.code == kDLFloat) {
            _Float16 v = (_Float16)x;
            std::memcpy(&h[k], &v, 2);
          } else {
            uint32_t u;
            std::memcpy(&u, &x, 4);
            h[k] = uint16_t((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
          }
        }
      }
      DLTensor &t = tensors[i];
      t.data = host[i].data();
      t.device = {kDLCPU, 0};
      if (gpu) {
        unsigned long long ptr = 0;
        if (driver.alloc(&ptr, host[i].size()) != 0 ||
            driver.toDevice(ptr, host[i].data(), host[i].size()) != 0) {
          std::fprintf(stderr, "cuMemAlloc/cuMemcpyHtoD failed\n");
          return 3;
        }
        t.data = reinterpret_cast<void *>(ptr);
        t.device = {kDLCUDA, device == "cuda" ? 0 : std::atoi(device.c_str() + 5)};
      }
      t.ndim = info.ndim;
      t.dtype = info.dtype;
      t.shape = const_cast<int64_t *>(info.shape);
    }
    std::vector<const DLTensor *> in, out;
    for (size_t i = 0; i < n; ++i)
      (i < module.inputCount() ? in : out).push_back(&tensors[i]);
    for (int i = 0; i < 5; ++i)
      session.run(in, out);
    std::vector<double> ms;
    for (int i = 0; i < iterations; ++i) {
      auto start = Clock::now();
      session.run(in, out);
      ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
    }
    std::sort(ms.begin(), ms.end());
    std::printf("%.4f %.4f %.4f\n", ms[ms.size() / 2], ms[ms.size() / 10],
                ms[ms.size() * 9 / 10]);
    if (!dir.empty() && module.outputCount()) {
      size_t o = module.inputCount();
      dlc_tensor_info_t info = module.output(0);
      if (gpu)
        driver.toHost(host[o].data(), reinterpret_cast<unsigned long long>(tensors[o].data),
                      info.size_bytes);
      host[o].resize(info.size_bytes);
      writeNpy(dir + "/" + info.name + ".out.npy", info, host[o]);
    }
  } catch (const std::exception &e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 3;
  }
  return 0;
}
