// CUDA kernels for EmuTest.cpp, compiled by the host compiler with
// -include dlc_cuda_emu.h (test/unit/cuda/CMakeLists.txt), exactly as
// EmuCompile compiles a module's kernels. Each kernel is written as it
// would be for a GPU; the launch stubs are at the end.
#include <cuda_fp16.h>
#include <cuda_bf16.h>

/// Sum of x[0, n) into *out: grid-stride loads, a warp-shuffle reduction,
/// warp partials through shared memory, one atomicAdd per block.
extern "C" __global__ void __launch_bounds__(256)
reduce_sum(const float *__restrict__ x, float *__restrict__ out, int n) {
  __shared__ float partial[32];
  float sum = 0.0f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    sum += __ldg(&x[i]);
  for (int offset = warpSize / 2; offset > 0; offset /= 2)
    sum += __shfl_down_sync(0xffffffffu, sum, offset);
  const int lane = threadIdx.x % warpSize, warp = threadIdx.x / warpSize;
  if (lane == 0)
    partial[warp] = sum;
  __syncthreads();
  if (warp == 0) {
    const int warps = (blockDim.x + warpSize - 1) / warpSize;
    sum = lane < warps ? partial[lane] : 0.0f;
    for (int offset = warpSize / 2; offset > 0; offset /= 2)
      sum += __shfl_xor_sync(0xffffffffu, sum, offset);
    if (lane == 0)
      atomicAdd(out, sum);
  }
}

/// c[m, n] = a[m, k] @ b[k, n], 16x16 tiles staged through static shared memory.
#define TILE 16
extern "C" __global__ void matmul_tiled(const float *a, const float *b, float *c, int m, int n,
                                        int k) {
  __shared__ float as[TILE][TILE];
  __shared__ float bs[TILE][TILE + 1];
  const int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
  float acc = 0.0f;
  for (int t = 0; t < k; t += TILE) {
    as[threadIdx.y][threadIdx.x] =
        row < m && t + threadIdx.x < k ? a[row * k + t + threadIdx.x] : 0.0f;
    bs[threadIdx.y][threadIdx.x] =
        col < n && t + threadIdx.y < k ? b[(t + threadIdx.y) * n + col] : 0.0f;
    __syncthreads();
#pragma unroll
    for (int i = 0; i < TILE; ++i)
      acc = fmaf(as[threadIdx.y][i], bs[i][threadIdx.x], acc);
    __syncthreads();
  }
  if (row < m && col < n)
    c[row * n + col] = acc;
}

/// Lanes 0-15 of each warp reduce among themselves (mask 0xffff) while
/// lanes 16-31 skip ahead to __syncthreads; then thread 0 of the block sums
/// the half-warp results from shared memory.
extern "C" __global__ void divergent_shuffle(const int *x, int *out) {
  __shared__ int halfSums[32];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  int v = x[blockIdx.x * blockDim.x + threadIdx.x];
  if (lane < 16) {
    for (int offset = 8; offset > 0; offset /= 2)
      v += __shfl_down_sync(0x0000ffffu, v, offset, 16);
    if (lane == 0)
      halfSums[warp] = v;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    int total = 0;
    for (int w = 0; w < (int)blockDim.x / 32; ++w)
      total += halfSums[w];
    out[blockIdx.x] = total;
  }
}

/// Reverses each block's slice of x through dynamic shared memory.
extern "C" __global__ void reverse_dynamic(const float *x, float *y) {
  DLC_DYNAMIC_SHARED(smem);
  float *buffer = reinterpret_cast<float *>(smem);
  const int base = blockIdx.x * blockDim.x;
  buffer[threadIdx.x] = x[base + threadIdx.x];
  __syncthreads();
  y[base + threadIdx.x] = buffer[blockDim.x - 1 - threadIdx.x];
}

/// Atomics from every block: an int histogram, a float sum, a __half sum,
/// a max, and a bf16 add.
extern "C" __global__ void atomics(const int *values, int n, int *histogram, float *sum,
                                   __half *halfSum, int *maximum, unsigned *counter) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    atomicAdd(&histogram[values[i] % 8], 1);
    atomicAdd(sum, 0.5f);
    atomicAdd(halfSum, __float2half(1.0f));
    atomicMax(maximum, values[i]);
    atomicInc(counter, 0xffffffffu);
  }
}

/// Round trips and arithmetic through __half and __nv_bfloat16.
extern "C" __global__ void half_convert(const float *x, __half *h, __nv_bfloat16 *b, float *hBack,
                                        float *bBack, __half *hSum, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  h[i] = __float2half_rn(x[i]);
  b[i] = __float2bfloat16_rn(x[i]);
  hBack[i] = __half2float(h[i]);
  bBack[i] = __bfloat162float(b[i]);
  hSum[i] = __hadd(h[i], __hmul(h[i], __float2half(2.0f)));
}

/// Votes and block-wide counts: per warp the ballot of odd values, per
/// block the count of values over a threshold.
extern "C" __global__ void votes(const int *x, unsigned *ballots, int *anyAll, int *counts) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int v = x[i];
  unsigned ballot = __ballot_sync(0xffffffffu, v & 1);
  int any = __any_sync(0xffffffffu, v > 90);
  int all = __all_sync(0xffffffffu, v >= 0);
  int count = __syncthreads_count(v > 50);
  if (threadIdx.x % 32 == 0) {
    ballots[i / 32] = ballot;
    anyAll[2 * (i / 32)] = any;
    anyAll[2 * (i / 32) + 1] = all;
  }
  if (threadIdx.x == 0)
    counts[blockIdx.x] = count;
}

/// y = gelu(x) * scale over float4 vectors with a grid stride; 2-D blocks.
extern "C" __global__ void gelu_vec4(const float4 *x, float4 *y, int vectors) {
  const int thread = (threadIdx.y * blockDim.x + threadIdx.x) +
                     blockIdx.x * blockDim.x * blockDim.y;
  const int stride = gridDim.x * blockDim.x * blockDim.y;
  for (int i = thread; i < vectors; i += stride) {
    float4 v = x[i];
    auto gelu = [](float t) { return 0.5f * t * (1.0f + erff(t * 0.70710678f)); };
    y[i] = make_float4(gelu(v.x), gelu(v.y), tanhf(v.z), fmaxf(v.w, 0.0f) * rsqrtf(4.0f));
  }
}

/// Broken on purpose: a full-mask shuffle that lanes 7-31 never reach (they
/// wait at __syncthreads instead): a hang on a GPU, an error on cuda-emu.
extern "C" __global__ void divergent_barrier(int *x) {
  int v = x[threadIdx.x];
  if (threadIdx.x % 32 < 7)
    v = __shfl_sync(0xffffffffu, v, 0);
  __syncthreads();
  x[threadIdx.x] = v;
}

/// The launch description's layout, for the test against CudaEmuDevice.h.
extern "C" unsigned long emu_launch_layout(unsigned long *offsets) {
  offsets[0] = offsetof(dlc_emu_launch_t, grid);
  offsets[1] = offsetof(dlc_emu_launch_t, block);
  offsets[2] = offsetof(dlc_emu_launch_t, dynamic_shared_bytes);
  offsets[3] = offsetof(dlc_emu_launch_t, threads);
  offsets[4] = offsetof(dlc_emu_launch_t, error);
  offsets[5] = offsetof(dlc_emu_launch_t, error_size);
  return sizeof(dlc_emu_launch_t);
}

DLC_EMU_LAUNCH_STUB(reduce_sum)
DLC_EMU_LAUNCH_STUB(matmul_tiled)
DLC_EMU_LAUNCH_STUB(divergent_shuffle)
DLC_EMU_LAUNCH_STUB(reverse_dynamic)
DLC_EMU_LAUNCH_STUB(atomics)
DLC_EMU_LAUNCH_STUB(half_convert)
DLC_EMU_LAUNCH_STUB(votes)
DLC_EMU_LAUNCH_STUB(gelu_vec4)
DLC_EMU_LAUNCH_STUB(divergent_barrier)
