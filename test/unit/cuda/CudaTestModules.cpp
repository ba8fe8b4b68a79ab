//===- CudaTestModules.cpp - Modules with CUDA kernels, for tests ---------===//

#include "test/unit/cuda/CudaTestModules.h"

#include "codegen/cuda/EmuCompile.h"
#include "codegen/cuda/Nvrtc.h"
#include "runtime/format/HostArch.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <sstream>

#ifndef DLC_TEST_CACHE
#define DLC_TEST_CACHE "/tmp/dlc-cuda-test-cache"
#endif

namespace dlc::testing::cuda {

using format::BufferRef;
using format::KernelArgDesc;
using format::KernelDesc;
using format::ModuleWriter;
using rt::strCat;

namespace {

std::vector<uint8_t> toBytes(const std::vector<float> &v) {
  std::vector<uint8_t> b(v.size() * 4);
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

/// Deterministic inputs in [-1, 1).
std::vector<float> pattern(size_t n, int seed) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = float((i * 7919 + size_t(seed) * 104729) % 2000) / 1000.0f - 1.0f;
  return v;
}

/// Which code a kernel carries besides its source and the emu object.
enum class Embed { kAll, kPtxOnly, kSourceOnly };

struct CudaKernel {
  std::string name, entry, source;
  std::vector<KernelArgDesc> args;
  std::array<uint32_t, 3> grid{1, 1, 1}, block{1, 1, 1};
  uint32_t dynamicShared = 0;
};

/// Compiles `k` (NVRTC for `archs`, the host compiler for cuda-emu), adds
/// its binaries and the kernel; returns the kernel's index.
Status addCudaKernel(const CudaKernel &k, Embed embed, const std::vector<std::string> &archs,
                     ModuleWriter *w, uint32_t *index) {
  KernelDesc desc;
  desc.name = k.name;
  desc.target = fb::Target::cuda;
  desc.entry = k.entry;
  desc.source = k.source;
  desc.args = k.args;
  desc.grid = k.grid;
  desc.block = k.block;
  desc.dynamicSharedMemory = k.dynamicShared;
  if (embed != Embed::kSourceOnly) {
    codegen::cuda::NvrtcOptions options;
    options.archs = embed == Embed::kPtxOnly ? std::vector<std::string>{"sm_80"} : archs;
    options.cacheDirectory = DLC_TEST_CACHE "/nvrtc";
    std::vector<codegen::cuda::NvrtcOutput> compiled;
    DLC_RETURN_IF_ERROR(codegen::cuda::compileWithNvrtc(k.name, k.source, options, &compiled));
    for (auto &c : compiled) {
      if (embed == Embed::kAll)
        desc.binaries.push_back(w->addBinary(strCat(k.name, ".", c.arch, ".cubin"),
                                             fb::BinaryFormat::cubin, c.arch, std::move(c.cubin)));
      desc.binaries.push_back(w->addBinary(strCat(k.name, ".", c.arch, ".ptx"),
                                           fb::BinaryFormat::ptx, c.arch,
                                           std::vector<uint8_t>(c.ptx.begin(), c.ptx.end())));
    }
  }
  codegen::cuda::EmuCompileOptions emu;
  emu.cacheDirectory = DLC_TEST_CACHE "/emu";
  std::vector<uint8_t> so;
  DLC_RETURN_IF_ERROR(codegen::cuda::compileForEmulation(k.name, k.source, {k.entry}, emu, &so));
  desc.binaries.push_back(w->addBinary(strCat(k.name, ".emu.so"), fb::BinaryFormat::shared_object,
                                       format::hostArchitecture(), std::move(so)));
  *index = w->addKernel(desc);
  return rt::okStatus();
}

//===----------------------------------------------------------------------===//
// The kernels, as the CUDA code generator would write them
//===----------------------------------------------------------------------===//

std::string addSource(int n) {
  std::ostringstream s;
  s << "// c = a + b over f32[" << n << "]: float4 loads, a grid-stride loop, a scalar tail.\n"
       "extern \"C\" __global__ void __launch_bounds__(128)\n"
       "dlc_add(const float *__restrict__ a, const float *__restrict__ b, float *__restrict__ c) {\n"
       "  constexpr int n = " << n << ", vectors = n / 4;\n"
       "  const int stride = gridDim.x * blockDim.x;\n"
       "  const int first = blockIdx.x * blockDim.x + threadIdx.x;\n"
       "  for (int i = first; i < vectors; i += stride) {\n"
       "    float4 x = reinterpret_cast<const float4 *>(a)[i];\n"
       "    float4 y = __ldg(reinterpret_cast<const float4 *>(b) + i);\n"
       "    reinterpret_cast<float4 *>(c)[i] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);\n"
       "  }\n"
       "  for (int i = vectors * 4 + first; i < n; i += stride)\n"
       "    c[i] = a[i] + b[i];\n"
       "}\n";
  return s.str();
}

std::string matmulSource(int m, int k, int n, int tile) {
  std::ostringstream s;
  s << codegen::cuda::cudaSourcePreamble() << "// h[" << m << ", " << n << "] = x[" << m << ", " << k << "] @ w[" << k << ", " << n
    << "]: " << tile << "x" << tile
    << " tiles of x and w staged in dynamic shared memory.\n"
       "extern \"C\" __global__ void dlc_matmul(const float *x, const float *w, float *h) {\n"
       "  constexpr int M = " << m << ", K = " << k << ", N = " << n << ", T = " << tile << ";\n"
       "  DLC_DYNAMIC_SHARED(smem);\n"
       "  float *xs = reinterpret_cast<float *>(smem);  // [T][T]\n"
       "  float *ws = xs + T * T;                        // [T][T]\n"
       "  const int row = blockIdx.y * T + threadIdx.y, col = blockIdx.x * T + threadIdx.x;\n"
       "  float acc = 0.0f;\n"
       "  for (int t = 0; t < K; t += T) {\n"
       "    xs[threadIdx.y * T + threadIdx.x] = row < M && t + threadIdx.x < K ? x[row * K + t + threadIdx.x] : 0.0f;\n"
       "    ws[threadIdx.y * T + threadIdx.x] = col < N && t + threadIdx.y < K ? w[(t + threadIdx.y) * N + col] : 0.0f;\n"
       "    __syncthreads();\n"
       "    for (int i = 0; i < T; ++i)\n"
       "      acc = fmaf(xs[threadIdx.y * T + i], ws[i * T + threadIdx.x], acc);\n"
       "    __syncthreads();\n"
       "  }\n"
       "  if (row < M && col < N)\n"
       "    h[row * N + col] = acc;\n"
       "}\n";
  return s.str();
}

std::string biasReluSource(int m, int n) {
  std::ostringstream s;
  s << "// y = max(h + b, 0) over f32[" << m << ", " << n << "].\n"
       "extern \"C\" __global__ void dlc_bias_relu(const float *h, const float *b, float *y) {\n"
       "  constexpr int M = " << m << ", N = " << n << ";\n"
       "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
       "  if (i < M * N)\n"
       "    y[i] = fmaxf(h[i] + b[i % N], 0.0f);\n"
       "}\n";
  return s.str();
}

std::string softmaxSource(int rows, int cols) {
  std::ostringstream s;
  s << "// y = softmax(x) along rows of f32[" << rows << ", " << cols
    << "]: one warp per row, max and sum by butterfly shuffles.\n"
       "__device__ __forceinline__ float warpMax(float v) {\n"
       "  for (int o = 16; o > 0; o /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));\n"
       "  return v;\n"
       "}\n"
       "__device__ __forceinline__ float warpSum(float v) {\n"
       "  for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);\n"
       "  return v;\n"
       "}\n"
       "extern \"C\" __global__ void dlc_softmax(const float *x, float *y) {\n"
       "  constexpr int R = " << rows << ", C = " << cols << ";\n"
       "  const int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, lane = threadIdx.x % 32;\n"
       "  if (row >= R) return;  // whole warps leave together\n"
       "  const float *in = x + row * C;\n"
       "  float m = -__int_as_float(0x7f800000);  // -inf\n"
       "  for (int c = lane; c < C; c += 32) m = fmaxf(m, in[c]);\n"
       "  m = warpMax(m);\n"
       "  float sum = 0.0f;\n"
       "  for (int c = lane; c < C; c += 32) sum += expf(in[c] - m);\n"
       "  const float inv = 1.0f / warpSum(sum);\n"
       "  for (int c = lane; c < C; c += 32) y[row * C + c] = expf(in[c] - m) * inv;\n"
       "}\n";
  return s.str();
}

Status buildAdd(const std::string &name, Embed embed, const std::vector<std::string> &archs,
                ModuleWriter *w, CudaTestCase *test) {
  const int n = 1000;
  const uint64_t bytes = n * 4;
  w->setName(name);
  w->addInput({"a", DType::F32, {n}});
  w->addInput({"b", DType::F32, {n}});
  w->addOutput({"c", DType::F32, {n}});
  CudaKernel k;
  k.name = "add";
  k.entry = "dlc_add";
  k.source = addSource(n);
  k.args = {{"a", fb::Access::read, bytes}, {"b", fb::Access::read, bytes},
            {"c", fb::Access::write, bytes}};
  k.grid = {2, 1, 1};
  k.block = {128, 1, 1};
  uint32_t add;
  DLC_RETURN_IF_ERROR(addCudaKernel(k, embed, archs, w, &add));
  format::PlanDesc plan;
  plan.commands.push_back(format::LaunchDesc{
      add, {format::inputRef(0, 0, bytes), format::inputRef(1, 0, bytes),
            format::outputRef(0, 0, bytes)}});
  w->addPlan(plan);
  test->inputs = {pattern(n, 1), pattern(n, 2)};
  std::vector<float> c(n);
  for (int i = 0; i < n; ++i)
    c[i] = test->inputs[0][i] + test->inputs[1][i];
  test->expected = {c};
  return rt::okStatus();
}

Status buildMlp(const std::vector<std::string> &archs, ModuleWriter *w, CudaTestCase *test) {
  const int m = 37, k = 70, n = 45, tile = 16;
  const uint64_t xBytes = m * k * 4, wBytes = k * n * 4, bBytes = n * 4, yBytes = m * n * 4;
  w->setName("cuda-mlp");
  w->addInput({"x", DType::F32, {m, k}});
  w->addOutput({"y", DType::F32, {m, n}});
  w->addOutput({"h", DType::F32, {m, n}});
  std::vector<float> weight = pattern(size_t(k) * n, 3), bias = pattern(n, 4);
  w->addWeight({"w", DType::F32, {k, n}}, toBytes(weight));
  w->addWeight({"b", DType::F32, {n}}, toBytes(bias));
  CudaKernel mm;
  mm.name = "matmul";
  mm.entry = "dlc_matmul";
  mm.source = matmulSource(m, k, n, tile);
  mm.args = {{"x", fb::Access::read, xBytes}, {"w", fb::Access::read, wBytes},
             {"h", fb::Access::write, yBytes}};
  mm.grid = {(n + tile - 1) / tile, (m + tile - 1) / tile, 1};
  mm.block = {tile, tile, 1};
  mm.dynamicShared = 2 * tile * tile * 4;
  uint32_t matmul, biasRelu;
  DLC_RETURN_IF_ERROR(addCudaKernel(mm, Embed::kAll, archs, w, &matmul));
  CudaKernel br;
  br.name = "bias_relu";
  br.entry = "dlc_bias_relu";
  br.source = biasReluSource(m, n);
  br.args = {{"h", fb::Access::read, yBytes}, {"b", fb::Access::read, bBytes},
             {"y", fb::Access::write, yBytes}};
  br.grid = {(m * n + 255) / 256, 1, 1};
  br.block = {256, 1, 1};
  DLC_RETURN_IF_ERROR(addCudaKernel(br, Embed::kAll, archs, w, &biasRelu));
  format::PlanDesc plan;
  plan.arenaSize = yBytes;
  plan.commands.push_back(format::LaunchDesc{
      matmul, {format::inputRef(0, 0, xBytes), BufferRef(fb::BufferSpace::weight, 0, 0, wBytes),
               format::arenaRef(0, yBytes)}});
  plan.commands.push_back(format::LaunchDesc{
      biasRelu, {format::arenaRef(0, yBytes), BufferRef(fb::BufferSpace::weight, 1, 0, bBytes),
                 format::outputRef(0, 0, yBytes)}});
  plan.commands.push_back(
      format::CopyDesc{format::arenaRef(0, yBytes), format::outputRef(1, 0, yBytes), yBytes});
  w->addPlan(plan);
  test->inputs = {pattern(size_t(m) * k, 5)};
  std::vector<float> h(size_t(m) * n), y(h.size());
  for (int r = 0; r < m; ++r)
    for (int c = 0; c < n; ++c) {
      double acc = 0;
      for (int i = 0; i < k; ++i)
        acc += double(test->inputs[0][r * k + i]) * weight[i * n + c];
      h[r * n + c] = float(acc);
      y[r * n + c] = std::max(0.0f, float(acc + bias[c]));
    }
  test->expected = {y, h};
  return rt::okStatus();
}

Status buildSoftmax(const std::vector<std::string> &archs, ModuleWriter *w, CudaTestCase *test) {
  const int rows = 33, cols = 300, warpsPerBlock = 4;
  const uint64_t bytes = rows * cols * 4;
  w->setName("cuda-softmax");
  w->addInput({"x", DType::F32, {rows, cols}});
  w->addOutput({"y", DType::F32, {rows, cols}});
  CudaKernel k;
  k.name = "softmax";
  k.entry = "dlc_softmax";
  k.source = softmaxSource(rows, cols);
  k.args = {{"x", fb::Access::read, bytes}, {"y", fb::Access::write, bytes}};
  k.grid = {(rows + warpsPerBlock - 1) / warpsPerBlock, 1, 1};
  k.block = {32 * warpsPerBlock, 1, 1};
  uint32_t softmax;
  DLC_RETURN_IF_ERROR(addCudaKernel(k, Embed::kAll, archs, w, &softmax));
  format::PlanDesc plan;
  plan.commands.push_back(
      format::LaunchDesc{softmax, {format::inputRef(0, 0, bytes), format::outputRef(0, 0, bytes)}});
  w->addPlan(plan);
  std::vector<float> x = pattern(size_t(rows) * cols, 6);
  for (float &v : x)
    v *= 8.0f;
  test->inputs = {x};
  std::vector<float> y(x.size());
  for (int r = 0; r < rows; ++r) {
    double mx = -INFINITY, sum = 0;
    for (int c = 0; c < cols; ++c)
      mx = std::max(mx, double(x[r * cols + c]));
    for (int c = 0; c < cols; ++c)
      sum += std::exp(double(x[r * cols + c]) - mx);
    for (int c = 0; c < cols; ++c)
      y[r * cols + c] = float(std::exp(double(x[r * cols + c]) - mx) / sum);
  }
  test->expected = {y};
  return rt::okStatus();
}

std::string halfAxpySource() {
  return "// y = a * x + y over f16[2048] as __half2 pairs, accumulated in fp16.\n"
         "#include <cuda_fp16.h>\n"
         "extern \"C\" __global__ void dlc_half_axpy(const __half2 *x, __half2 *y) {\n"
         "  const __half2 a = __floats2half2_rn(0.5f, 0.5f);\n"
         "  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < 1024; i += gridDim.x * blockDim.x)\n"
         "    y[i] = __hfma2(a, x[i], y[i]);\n"
         "}\n";
}

} // namespace

std::string cudaTestKernelSource(const std::string &which) {
  if (which == "add")
    return addSource(1000);
  if (which == "matmul")
    return matmulSource(37, 70, 45, 16);
  if (which == "bias_relu")
    return biasReluSource(37, 45);
  if (which == "softmax")
    return softmaxSource(33, 300);
  if (which == "half_axpy")
    return halfAxpySource();
  return "";
}

const std::vector<std::string> &cudaModuleNames() {
  static const std::vector<std::string> names = {"cuda-add", "cuda-mlp", "cuda-softmax",
                                                 "cuda-add-ptx", "cuda-add-source"};
  return names;
}

Status buildCudaModule(const std::string &name, ModuleWriter *w, CudaTestCase *test,
                       const std::vector<std::string> &archs) {
  if (name == "cuda-add")
    return buildAdd(name, Embed::kAll, archs, w, test);
  if (name == "cuda-add-ptx")
    return buildAdd(name, Embed::kPtxOnly, archs, w, test);
  if (name == "cuda-add-source")
    return buildAdd(name, Embed::kSourceOnly, archs, w, test);
  if (name == "cuda-mlp")
    return buildMlp(archs, w, test);
  if (name == "cuda-softmax")
    return buildSoftmax(archs, w, test);
  return rt::invalidArgument("unknown CUDA test module '", name, "'");
}

double worstError(const std::vector<float> &got, const std::vector<float> &want, double rtol,
                  double atol) {
  if (got.size() != want.size())
    return INFINITY;
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    double e = std::abs(double(got[i]) - want[i]) / (atol + rtol * std::abs(double(want[i])));
    if (!(e <= worst)) // NaN counts as the worst
      worst = std::isnan(e) ? INFINITY : e;
  }
  return worst;
}

} // namespace dlc::testing::cuda
