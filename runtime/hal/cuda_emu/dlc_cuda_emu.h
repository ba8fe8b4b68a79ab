//===- dlc_cuda_emu.h - CUDA built-ins on the CPU, for cuda-emu -*- C++ -*-===//
//
// Lets the host compiler build the exact CUDA C++ source a GPU would get and
// run it on the CPU: each block runs on one OS thread, its threads as fibers
// (ucontext) that switch at __syncthreads() and at warp-collective calls.
// threadIdx and friends are thread-local variables the scheduler rewrites on
// every switch; __shared__ variables are thread-local statics, so each OS
// thread (one block at a time) has its own copy.
//
// Compile a kernel source for emulation exactly as codegen/cuda/EmuCompile
// does (docs/design/2026-11-22-cuda-device.md):
//   c++ -std=c++17 -O2 -shared -fPIC -fvisibility=hidden -fno-gnu-unique \
//       -DDLC_CUDA_EMU -pthread -I<this folder>/include -include dlc_cuda_emu.h \
//       -x c++ kernel.cu
// with `__CUDA_ARCH__` undefined; include/cuda_fp16.h and cuda_bf16.h are
// empty stand-ins, as this header defines those types.
//
// Kernels that declare dynamic shared memory use DLC_DYNAMIC_SHARED(name),
// which on a GPU is `extern __shared__ __align__(16) unsigned char name[]`.
// Tensor-core instructions (mma, wgmma) and inline PTX are not emulated:
// such kernels are GPU-only.
//
// Warp collectives take their mask seriously: a collective waits for the
// live lanes of its mask only, so a shuffle inside `if (lane < 16)` with mask
// 0xffff works while the other half-warp waits at __syncthreads(). Threads of
// a block that wait at barriers no release (a __syncthreads in divergent
// code, a full-mask shuffle that half the warp skips) stop the launch with an
// error message instead of hanging.
//
// Each kernel gets a launch stub, appended after the source:
//   DLC_EMU_LAUNCH_STUB(name)  defines
//   extern "C" void dlc_emu_launch_<name>(const dlc_emu_launch_t *launch,
//                                         void **args);
// where args[i] points at the value of the kernel's i-th parameter (as
// cuLaunchKernel's kernelParams); dlc_emu_launch.h, next to this header,
// defines dlc_emu_launch_t for both sides.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_CUDA_EMU_H
#define DLC_CUDA_EMU_H

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <tuple>
#include <type_traits>
#include <ucontext.h>
#include <utility>
#include <vector>

// The launch description, shared with the runtime's cuda-emu device.
#include "dlc_emu_launch.h"

#ifndef DLC_CUDA_EMU
#define DLC_CUDA_EMU 1
#endif

//===----------------------------------------------------------------------===//
// Qualifiers
//===----------------------------------------------------------------------===//

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __restrict__ __restrict
#define __launch_bounds__(...)
#define __align__(n) __attribute__((aligned(n)))
#define __shared__ static thread_local
#define __constant__
#define __grid_constant__

//===----------------------------------------------------------------------===//
// Vector types
//===----------------------------------------------------------------------===//

#define DLC_EMU_VECTOR_TYPES(T, name, align2, align4)                                   \
  struct name##1 { T x; };                                                               \
  struct alignas(align2) name##2 { T x, y; };                                            \
  struct name##3 { T x, y, z; };                                                         \
  struct alignas(align4) name##4 { T x, y, z, w; };                                      \
  inline name##1 make_##name##1(T x) { return {x}; }                                     \
  inline name##2 make_##name##2(T x, T y) { return {x, y}; }                             \
  inline name##3 make_##name##3(T x, T y, T z) { return {x, y, z}; }                    \
  inline name##4 make_##name##4(T x, T y, T z, T w) { return {x, y, z, w}; }
DLC_EMU_VECTOR_TYPES(float, float, 8, 16)
DLC_EMU_VECTOR_TYPES(double, double, 16, 16)
DLC_EMU_VECTOR_TYPES(int, int, 8, 16)
DLC_EMU_VECTOR_TYPES(unsigned, uint, 8, 16)
DLC_EMU_VECTOR_TYPES(signed char, char, 2, 4)
DLC_EMU_VECTOR_TYPES(unsigned char, uchar, 2, 4)
DLC_EMU_VECTOR_TYPES(short, short, 4, 8)
DLC_EMU_VECTOR_TYPES(unsigned short, ushort, 4, 8)
DLC_EMU_VECTOR_TYPES(long long, longlong, 16, 16)
DLC_EMU_VECTOR_TYPES(unsigned long long, ulonglong, 16, 16)
#undef DLC_EMU_VECTOR_TYPES

struct dim3 {
  unsigned x = 1, y = 1, z = 1;
  constexpr dim3(unsigned x = 1, unsigned y = 1, unsigned z = 1) : x(x), y(y), z(z) {}
  constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
  constexpr operator uint3() const { return {x, y, z}; }
};

//===----------------------------------------------------------------------===//
// The block scheduler
//===----------------------------------------------------------------------===//

namespace dlc_emu {

inline constexpr int kWarpSize = 32;
inline constexpr size_t kFiberStackBytes = 64 * 1024;
/// sm_90's opt-in maximum of shared memory per block (227 KB).
inline constexpr size_t kMaxDynamicShared = 227 * 1024;
inline constexpr unsigned kFullMask = 0xffffffffu;

/// One lane's operands of an mma.sync (A, B and C fragments as registers)
/// or the row address it gives an ldmatrix.
struct MmaFragments {
  unsigned a[4];
  unsigned b[2];
  float c[4];
  const unsigned char *row;
};

/// Where a fiber is: running (or ready to), waiting at __syncthreads, waiting
/// at a warp-level collective, or done.
enum class FiberState : uint8_t { Ready, AtBlockBarrier, AtWarpBarrier, Done };

/// Per-OS-thread state of the block being run.
struct BlockState {
  ucontext_t scheduler;
  std::vector<ucontext_t> contexts;
  std::unique_ptr<char[]> stacks;
  size_t stackCapacity = 0; ///< fibers the stacks have room for
  std::vector<FiberState> fibers;
  std::vector<unsigned> waitMask; ///< the mask of the collective a fiber waits at
  std::vector<dim3> threadIndex;
  int current = 0;
  int count = 0;
  /// Exchange slots for warp collectives and __syncthreads_count: 16 bytes
  /// per thread.
  std::vector<unsigned char> exchange;
  /// Each thread's fragments of the warp's mma.sync in flight.
  std::vector<MmaFragments> mmaFragments;
  const std::function<void()> *body = nullptr;
  alignas(16) unsigned char dynamicShared[kMaxDynamicShared];
};

/// The block state of the OS thread running blocks. A raw thread-local
/// pointer set for the duration of a launch: nothing thread-local has a
/// destructor, so the shared object can be unloaded (dlclose).
inline BlockState *&currentState() {
  static thread_local BlockState *s = nullptr;
  return s;
}
inline BlockState &state() { return *currentState(); }

} // namespace dlc_emu

inline thread_local dim3 threadIdx, blockIdx, blockDim, gridDim;
static constexpr int warpSize = dlc_emu::kWarpSize;

#define DLC_DYNAMIC_SHARED(name) unsigned char *name = dlc_emu::state().dynamicShared

namespace dlc_emu {

/// Parks the running fiber in `why` and switches back to the scheduler.
inline void wait(FiberState why, unsigned mask = kFullMask) {
  BlockState &s = state();
  s.fibers[s.current] = why;
  s.waitMask[s.current] = mask;
  swapcontext(&s.contexts[s.current], &s.scheduler);
}

/// __syncthreads: resumes once every live thread of the block waits here.
inline void barrier() { wait(FiberState::AtBlockBarrier); }
/// A warp collective: resumes once every live lane of `mask` waits at one.
inline void warpBarrier(unsigned mask) { wait(FiberState::AtWarpBarrier, mask); }

inline void fiberEntry(int index) {
  BlockState &s = state();
  (*s.body)();
  s.fibers[index] = FiberState::Done;
  // Returns to the scheduler through uc_link.
}

/// Lanes of the warp starting at thread `base` that exist and have not
/// exited, as a lane mask.
inline unsigned liveLanes(const BlockState &s, int base) {
  unsigned live = 0;
  for (int l = 0; l < kWarpSize && base + l < s.count; ++l)
    if (s.fibers[base + l] != FiberState::Done)
      live |= 1u << l;
  return live;
}

/// Runs one block: every fiber runs until it waits or finishes; then the
/// waits that are complete (every live lane of a collective's mask at a warp
/// collective, the whole block at __syncthreads) are released, until all
/// fibers are done. Returns false (and a message) when threads wait at
/// barriers that can never be released.
inline bool runBlock(dim3 block, const std::function<void()> &body, std::string *error) {
  BlockState &s = state();
  s.count = int(block.x * block.y * block.z);
  s.body = &body;
  s.contexts.resize(s.count);
  if (s.stackCapacity < size_t(s.count)) {
    s.stacks.reset(new char[size_t(s.count) * kFiberStackBytes]);
    s.stackCapacity = size_t(s.count);
  }
  s.fibers.assign(s.count, FiberState::Ready);
  s.waitMask.assign(s.count, kFullMask);
  s.threadIndex.resize(s.count);
  s.exchange.resize(size_t(s.count) * 16);
  s.mmaFragments.resize(size_t(s.count));
  for (int i = 0; i < s.count; ++i) {
    s.threadIndex[i] = dim3(i % block.x, (i / block.x) % block.y, i / (block.x * block.y));
    getcontext(&s.contexts[i]);
    s.contexts[i].uc_stack.ss_sp = &s.stacks[size_t(i) * kFiberStackBytes];
    s.contexts[i].uc_stack.ss_size = kFiberStackBytes;
    s.contexts[i].uc_link = &s.scheduler;
    makecontext(&s.contexts[i], (void (*)())fiberEntry, 1, i);
  }
  for (;;) {
    for (int i = 0; i < s.count; ++i) {
      if (s.fibers[i] != FiberState::Ready)
        continue;
      s.current = i;
      threadIdx = s.threadIndex[i];
      swapcontext(&s.scheduler, &s.contexts[i]);
    }
    // Every fiber now waits or is done. Release warp collectives whose
    // masks are complete, then __syncthreads when the whole block is there.
    bool released = false;
    for (int base = 0; base < s.count; base += kWarpSize) {
      unsigned live = liveLanes(s, base), waiting = 0;
      for (int l = 0; l < kWarpSize && base + l < s.count; ++l)
        if (s.fibers[base + l] == FiberState::AtWarpBarrier)
          waiting |= 1u << l;
      for (int l = 0; l < kWarpSize && base + l < s.count; ++l) {
        if (!(waiting >> l & 1u))
          continue;
        unsigned needed = (s.waitMask[base + l] | (1u << l)) & live;
        if ((needed & ~waiting) == 0) {
          s.fibers[base + l] = FiberState::Ready;
          released = true;
        }
      }
    }
    if (released)
      continue;
    bool allDone = true, blockComplete = true;
    for (int i = 0; i < s.count; ++i) {
      if (s.fibers[i] != FiberState::Done)
        allDone = false;
      if (s.fibers[i] == FiberState::AtWarpBarrier)
        blockComplete = false;
    }
    if (allDone)
      return true;
    if (!blockComplete) {
      // Abandon the block: its fibers' stacks are reused by the next one.
      char message[256];
      std::snprintf(message, sizeof message,
                    "block (%u, %u, %u): threads wait at barriers that can never be released "
                    "(__syncthreads or a warp collective in divergent code, or a collective "
                    "whose mask names lanes that do not take part)",
                    blockIdx.x, blockIdx.y, blockIdx.z);
      *error = message;
      return false;
    }
    for (int i = 0; i < s.count; ++i)
      if (s.fibers[i] == FiberState::AtBlockBarrier)
        s.fibers[i] = FiberState::Ready;
  }
}

/// Runs a grid: blocks spread over OS threads, each block's threads as
/// fibers. Returns false after writing the first error into launch.error.
inline bool launch(const dlc_emu_launch_t &launch, const std::function<void()> &kernel) {
  auto fail = [&](const std::string &message) {
    if (launch.error && launch.error_size) {
      size_t n = std::min<size_t>(message.size(), launch.error_size - 1);
      std::memcpy(launch.error, message.data(), n);
      launch.error[n] = 0;
    }
    return false;
  };
  if (launch.error && launch.error_size)
    launch.error[0] = 0;
  dim3 grid(launch.grid[0], launch.grid[1], launch.grid[2]);
  dim3 block(launch.block[0], launch.block[1], launch.block[2]);
  uint64_t threadsPerBlock = uint64_t(block.x) * block.y * block.z;
  if (!grid.x || !grid.y || !grid.z || !threadsPerBlock || threadsPerBlock > 1024)
    return fail("invalid launch dimensions (a block holds 1 to 1024 threads)");
  if (launch.dynamic_shared_bytes > kMaxDynamicShared)
    return fail("dynamic shared memory of " + std::to_string(launch.dynamic_shared_bytes) +
                " bytes is over the limit of " + std::to_string(kMaxDynamicShared));
  uint64_t blocks = uint64_t(grid.x) * grid.y * grid.z;
  unsigned workers =
      launch.threads ? launch.threads : std::max(1u, std::thread::hardware_concurrency());
  workers = unsigned(std::min<uint64_t>(workers, blocks));
  std::atomic<uint64_t> next{0};
  std::atomic<bool> failed{false};
  std::string firstError;
  std::atomic_flag errorTaken = ATOMIC_FLAG_INIT;
  auto work = [&] {
    // Default-initialised: the shared memory is not zero-filled here.
    std::unique_ptr<BlockState> blockState(new BlockState);
    BlockState *previous = currentState();
    currentState() = blockState.get();
    gridDim = grid;
    blockDim = block;
    std::string error;
    for (uint64_t b; !failed.load(std::memory_order_relaxed) && (b = next.fetch_add(1)) < blocks;) {
      blockIdx = dim3(unsigned(b % grid.x), unsigned((b / grid.x) % grid.y),
                      unsigned(b / (uint64_t(grid.x) * grid.y)));
      std::memset(state().dynamicShared, 0, launch.dynamic_shared_bytes);
      if (!runBlock(block, kernel, &error)) {
        if (!errorTaken.test_and_set())
          firstError = error;
        failed = true;
      }
    }
    currentState() = previous;
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < workers; ++t)
    pool.emplace_back(work);
  work();
  for (auto &t : pool)
    t.join();
  return failed ? fail(firstError) : true;
}

/// Calls `kernel` with the parameters args[i] point at, over the launch.
template <typename... Params, size_t... I>
void launchKernel(void (*kernel)(Params...), const dlc_emu_launch_t *l, void **args,
                  std::index_sequence<I...>) {
  std::tuple<std::decay_t<Params>...> values{
      *static_cast<std::decay_t<Params> *>(args[I])...};
  launch(*l, [&] { std::apply(kernel, values); });
}
template <typename... Params>
void launchKernel(void (*kernel)(Params...), const dlc_emu_launch_t *l, void **args) {
  launchKernel(kernel, l, args, std::index_sequence_for<Params...>{});
}

/// Index of the running thread within the block, and its lane.
inline int linearThread() { return state().current; }
inline int lane() { return linearThread() % kWarpSize; }

/// Exchanges a value within the warp: each lane of `mask` publishes
/// `value`, they synchronise, then each reads lane `source(lane)`.
template <typename T, typename SourceFn> T warpExchange(unsigned mask, T value, SourceFn source) {
  static_assert(sizeof(T) <= 16, "warp exchange of values up to 16 bytes");
  BlockState &s = state();
  int self = linearThread(), base = self - self % kWarpSize;
  std::memcpy(&s.exchange[size_t(self) * 16], &value, sizeof(T));
  warpBarrier(mask);
  int src = source(self % kWarpSize);
  T result = value;
  if (src >= 0 && src < kWarpSize && base + src < s.count)
    std::memcpy(&result, &s.exchange[size_t(base + src) * 16], sizeof(T));
  warpBarrier(mask);
  return result;
}

/// Every participating lane (live and in `mask`) publishes `value`; `fold`
/// sees each participant's value in lane order. Returns fold's result.
template <typename T, typename Fold> void warpGather(unsigned mask, T value, Fold fold) {
  BlockState &s = state();
  int self = linearThread(), base = self - self % kWarpSize;
  std::memcpy(&s.exchange[size_t(self) * 16], &value, sizeof(T));
  warpBarrier(mask);
  unsigned members = (mask | 1u << (self % kWarpSize)) & liveLanes(s, base);
  for (int l = 0; l < kWarpSize && base + l < s.count; ++l) {
    if (!(members >> l & 1u))
      continue;
    T v;
    std::memcpy(&v, &s.exchange[size_t(base + l) * 16], sizeof(T));
    fold(l, v);
  }
  warpBarrier(mask);
}

/// __syncthreads_count and friends: every thread publishes its predicate;
/// all read every thread's.
inline int blockCount(int predicate) {
  BlockState &s = state();
  int value = predicate != 0;
  std::memcpy(&s.exchange[size_t(linearThread()) * 16], &value, sizeof value);
  barrier();
  int count = 0;
  for (int i = 0; i < s.count; ++i) {
    int v;
    std::memcpy(&v, &s.exchange[size_t(i) * 16], sizeof v);
    count += v;
  }
  barrier();
  return count;
}

} // namespace dlc_emu

/// Defines dlc_emu_launch_<kernel> for an extern "C" kernel of this file.
#define DLC_EMU_LAUNCH_STUB(kernel)                                                          \
  extern "C" __attribute__((visibility("default"))) void dlc_emu_launch_##kernel(           \
      const dlc_emu_launch_t *launch, void **args) {                                         \
    dlc_emu::launchKernel(kernel, launch, args);                                             \
  }

//===----------------------------------------------------------------------===//
// Synchronisation, warp collectives, votes
//===----------------------------------------------------------------------===//

inline void __syncthreads() { dlc_emu::barrier(); }
inline int __syncthreads_count(int p) { return dlc_emu::blockCount(p); }
inline int __syncthreads_and(int p) {
  return dlc_emu::blockCount(p) == dlc_emu::state().count;
}
inline int __syncthreads_or(int p) { return dlc_emu::blockCount(p) != 0; }
inline void __syncwarp(unsigned mask = dlc_emu::kFullMask) { dlc_emu::warpBarrier(mask); }
inline void __threadfence() { std::atomic_thread_fence(std::memory_order_seq_cst); }
inline void __threadfence_block() { std::atomic_signal_fence(std::memory_order_seq_cst); }
inline unsigned __activemask() {
  const dlc_emu::BlockState &s = dlc_emu::state();
  int self = dlc_emu::linearThread();
  return dlc_emu::liveLanes(s, self - self % dlc_emu::kWarpSize);
}

template <typename T> T __shfl_sync(unsigned mask, T value, int srcLane, int width = warpSize) {
  return dlc_emu::warpExchange(mask, value, [&](int lane) {
    return (lane / width) * width + ((srcLane % width + width) % width);
  });
}
template <typename T>
T __shfl_down_sync(unsigned mask, T value, unsigned delta, int width = warpSize) {
  return dlc_emu::warpExchange(mask, value, [&](int lane) {
    int src = lane + int(delta);
    return src / width == lane / width ? src : lane;
  });
}
template <typename T>
T __shfl_up_sync(unsigned mask, T value, unsigned delta, int width = warpSize) {
  return dlc_emu::warpExchange(mask, value, [&](int lane) {
    int src = lane - int(delta);
    return src >= 0 && src / width == lane / width ? src : lane;
  });
}
template <typename T> T __shfl_xor_sync(unsigned mask, T value, int laneMask, int width = warpSize) {
  return dlc_emu::warpExchange(mask, value, [&](int lane) {
    int src = lane ^ laneMask;
    return src / width == lane / width ? src : lane;
  });
}

inline unsigned __ballot_sync(unsigned mask, int predicate) {
  unsigned bits = 0;
  dlc_emu::warpGather(mask, predicate ? 1 : 0, [&](int lane, int p) { bits |= unsigned(p) << lane; });
  return bits & mask;
}
inline int __any_sync(unsigned mask, int predicate) { return __ballot_sync(mask, predicate) != 0; }
inline int __all_sync(unsigned mask, int predicate) {
  return __ballot_sync(mask, !predicate) == 0;
}

// sm_80 warp reductions.
#define DLC_EMU_WARP_REDUCE(name, T, init, op)                                                \
  inline T name(unsigned mask, T value) {                                                    \
    T acc = init;                                                                            \
    dlc_emu::warpGather(mask, value, [&](int, T v) { acc = op; });                           \
    return acc;                                                                              \
  }
DLC_EMU_WARP_REDUCE(__reduce_add_sync, int, 0, acc + v)
DLC_EMU_WARP_REDUCE(__reduce_add_sync, unsigned, 0u, acc + v)
DLC_EMU_WARP_REDUCE(__reduce_min_sync, int, INT32_MAX, std::min(acc, v))
DLC_EMU_WARP_REDUCE(__reduce_min_sync, unsigned, UINT32_MAX, std::min(acc, v))
DLC_EMU_WARP_REDUCE(__reduce_max_sync, int, INT32_MIN, std::max(acc, v))
DLC_EMU_WARP_REDUCE(__reduce_max_sync, unsigned, 0u, std::max(acc, v))
DLC_EMU_WARP_REDUCE(__reduce_and_sync, unsigned, ~0u, acc & v)
DLC_EMU_WARP_REDUCE(__reduce_or_sync, unsigned, 0u, acc | v)
DLC_EMU_WARP_REDUCE(__reduce_xor_sync, unsigned, 0u, acc ^ v)
#undef DLC_EMU_WARP_REDUCE

//===----------------------------------------------------------------------===//
// Loads and timing
//===----------------------------------------------------------------------===//

template <typename T> inline T __ldg(const T *p) { return *p; }
template <typename T> inline T __ldcg(const T *p) { return *p; }
template <typename T> inline T __ldca(const T *p) { return *p; }
template <typename T> inline T __ldcs(const T *p) { return *p; }
template <typename T> inline T __ldlu(const T *p) { return *p; }
template <typename T> inline void __stcg(T *p, T v) { *p = v; }
template <typename T> inline void __stcs(T *p, T v) { *p = v; }
template <typename T> inline void __stwt(T *p, T v) { *p = v; }
inline long long clock64() {
  return std::chrono::steady_clock::now().time_since_epoch().count();
}
inline void __nanosleep(unsigned) {}

//===----------------------------------------------------------------------===//
// Integer and float intrinsics, min/max
//===----------------------------------------------------------------------===//

inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline int __clz(int x) { return x ? __builtin_clz(unsigned(x)) : 32; }
inline int __clzll(long long x) { return x ? __builtin_clzll((unsigned long long)x) : 64; }
inline int __ffs(int x) { return __builtin_ffs(x); }
inline int __ffsll(long long x) { return __builtin_ffsll(x); }
inline unsigned __brev(unsigned x) {
  unsigned r = 0;
  for (int i = 0; i < 32; ++i)
    r |= ((x >> i) & 1u) << (31 - i);
  return r;
}
inline unsigned __umulhi(unsigned a, unsigned b) { return unsigned((uint64_t(a) * b) >> 32); }
inline int __mulhi(int a, int b) { return int((int64_t(a) * b) >> 32); }
inline unsigned long long __umul64hi(unsigned long long a, unsigned long long b) {
  return (unsigned long long)(((unsigned __int128)a * b) >> 64);
}
inline int __mul24(int a, int b) { return a * b; }
inline unsigned __umul24(unsigned a, unsigned b) { return a * b; }

#define DLC_EMU_MINMAX(T)                                                                     \
  inline T min(T a, T b) { return b < a ? b : a; }                                           \
  inline T max(T a, T b) { return a < b ? b : a; }
DLC_EMU_MINMAX(int)
DLC_EMU_MINMAX(unsigned)
DLC_EMU_MINMAX(long)
DLC_EMU_MINMAX(unsigned long)
DLC_EMU_MINMAX(long long)
DLC_EMU_MINMAX(unsigned long long)
#undef DLC_EMU_MINMAX
inline float min(float a, float b) { return std::fmin(a, b); }
inline float max(float a, float b) { return std::fmax(a, b); }
inline double min(double a, double b) { return std::fmin(a, b); }
inline double max(double a, double b) { return std::fmax(a, b); }
inline float min(float a, int b) { return std::fmin(a, float(b)); }
inline float min(int a, float b) { return std::fmin(float(a), b); }
inline float max(float a, int b) { return std::fmax(a, float(b)); }
inline float max(int a, float b) { return std::fmax(float(a), b); }

// Math the host's libm lacks, or spells differently. The fast-math variants
// (__expf, ...) are computed exactly: results may differ from a GPU's in the
// last bits, within the documented ulp bounds of CUDA's intrinsics.
inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
inline double rsqrt(double x) { return 1.0 / std::sqrt(x); }
inline float __frsqrt_rn(float x) { return 1.0f / std::sqrt(x); }
inline float __fsqrt_rn(float x) { return std::sqrt(x); }
inline float __expf(float x) { return std::exp(x); }
inline float __exp10f(float x) { return std::pow(10.0f, x); }
inline float exp10f(float x) { return std::pow(10.0f, x); }
inline float __logf(float x) { return std::log(x); }
inline float __log2f(float x) { return std::log2(x); }
inline float __log10f(float x) { return std::log10(x); }
inline float __powf(float a, float b) { return std::pow(a, b); }
inline float __sinf(float x) { return std::sin(x); }
inline float __cosf(float x) { return std::cos(x); }
inline float __tanf(float x) { return std::tan(x); }
inline float __tanhf(float x) { return std::tanh(x); }
inline float __fdividef(float a, float b) { return a / b; }
inline float __fdiv_rn(float a, float b) { return a / b; }
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fsub_rn(float a, float b) { return a - b; }
inline float __fmul_rn(float a, float b) { return a * b; }
inline float __fmaf_rn(float a, float b, float c) { return std::fma(a, b, c); }
inline float __frcp_rn(float x) { return 1.0f / x; }
inline float __saturatef(float x) { return x < 0 ? 0.0f : (x > 1 ? 1.0f : x); }
inline float normcdff(float x) { return 0.5f * std::erfc(-x * 0.70710678118654752f); }
inline float rcbrtf(float x) { return 1.0f / std::cbrt(x); }
inline float __int_as_float(int x) { float f; std::memcpy(&f, &x, 4); return f; }
inline int __float_as_int(float x) { int i; std::memcpy(&i, &x, 4); return i; }
inline float __uint_as_float(unsigned x) { float f; std::memcpy(&f, &x, 4); return f; }
inline unsigned __float_as_uint(float x) { unsigned i; std::memcpy(&i, &x, 4); return i; }
inline double __longlong_as_double(long long x) { double d; std::memcpy(&d, &x, 8); return d; }
inline long long __double_as_longlong(double x) { long long i; std::memcpy(&i, &x, 8); return i; }
inline int __float2int_rn(float x) { return int(std::nearbyint(x)); }
inline int __float2int_rz(float x) { return int(x); }
inline int __float2int_rd(float x) { return int(std::floor(x)); }
inline int __float2int_ru(float x) { return int(std::ceil(x)); }
inline float __int2float_rn(int x) { return float(x); }

//===----------------------------------------------------------------------===//
// fp16 and bf16 (cuda_fp16.h, cuda_bf16.h): storage types whose arithmetic
// is done in float and rounded to nearest even, as sm_80+ does.
//===----------------------------------------------------------------------===//

struct __half {
  uint16_t bits = 0;
  __half() = default;
  __half(float f);
  __half(double f) : __half(float(f)) {}
  __half(int i) : __half(float(i)) {}
  operator float() const;
};
struct __nv_bfloat16 {
  uint16_t bits = 0;
  __nv_bfloat16() = default;
  __nv_bfloat16(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) {
      bits = uint16_t((u >> 16) | 0x40);
      return;
    }
    u += 0x7fffu + ((u >> 16) & 1u);
    bits = uint16_t(u >> 16);
  }
  __nv_bfloat16(double f) : __nv_bfloat16(float(f)) {}
  __nv_bfloat16(int i) : __nv_bfloat16(float(i)) {}
  operator float() const {
    uint32_t u = uint32_t(bits) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
};

inline __half::__half(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  uint32_t sign = (u >> 16) & 0x8000u;
  uint32_t exponent = (u >> 23) & 0xffu, mantissa = u & 0x7fffffu;
  if (exponent == 0xff) { // inf or NaN
    bits = uint16_t(sign | 0x7c00u | (mantissa ? 0x200u : 0));
    return;
  }
  int e = int(exponent) - 127 + 15;
  if (e >= 31) {
    bits = uint16_t(sign | 0x7c00u);
    return;
  }
  if (e <= 0) { // subnormal or zero
    if (e < -10) {
      bits = uint16_t(sign);
      return;
    }
    mantissa |= 0x800000u;
    int shift = 14 - e;
    uint32_t half = mantissa >> shift, rest = mantissa & ((1u << shift) - 1);
    uint32_t halfway = 1u << (shift - 1);
    if (rest > halfway || (rest == halfway && (half & 1)))
      ++half;
    bits = uint16_t(sign | half);
    return;
  }
  uint32_t half = (uint32_t(e) << 10) | (mantissa >> 13);
  uint32_t rest = mantissa & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1)))
    ++half; // may carry into the exponent: still correct
  bits = uint16_t(sign | half);
}

inline __half::operator float() const {
  uint32_t sign = uint32_t(bits & 0x8000u) << 16;
  uint32_t exponent = (bits >> 10) & 0x1fu, mantissa = bits & 0x3ffu;
  uint32_t u;
  if (exponent == 0x1f) {
    u = sign | 0x7f800000u | (mantissa << 13);
  } else if (exponent == 0) {
    if (mantissa == 0) {
      u = sign;
    } else { // normalise the subnormal
      int e = -1;
      do {
        ++e;
        mantissa <<= 1;
      } while (!(mantissa & 0x400u));
      u = sign | (uint32_t(127 - 15 - e) << 23) | ((mantissa & 0x3ffu) << 13);
    }
  } else {
    u = sign | ((exponent + 127 - 15) << 23) | (mantissa << 13);
  }
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

using half = __half;
using nv_bfloat16 = __nv_bfloat16;
using __bf16_storage_t = uint16_t;

struct alignas(4) __half2 {
  __half x, y;
};
struct alignas(4) __nv_bfloat162 {
  __nv_bfloat16 x, y;
};
using half2 = __half2;
using nv_bfloat162 = __nv_bfloat162;

// Operators between two halves (or two bf16s) return the same type, as in
// cuda_fp16.hpp; mixing with float converts the half, also as there.
#define DLC_EMU_HALF_OPS(H)                                                                   \
  inline H operator+(H a, H b) { return H(float(a) + float(b)); }                            \
  inline H operator-(H a, H b) { return H(float(a) - float(b)); }                            \
  inline H operator*(H a, H b) { return H(float(a) * float(b)); }                            \
  inline H operator/(H a, H b) { return H(float(a) / float(b)); }                            \
  inline H operator-(H a) { H r = a; r.bits ^= 0x8000u; return r; }                          \
  inline H &operator+=(H &a, H b) { return a = a + b; }                                      \
  inline H &operator-=(H &a, H b) { return a = a - b; }                                      \
  inline H &operator*=(H &a, H b) { return a = a * b; }                                      \
  inline H &operator/=(H &a, H b) { return a = a / b; }                                      \
  inline bool operator==(H a, H b) { return float(a) == float(b); }                          \
  inline bool operator!=(H a, H b) { return float(a) != float(b); }                          \
  inline bool operator<(H a, H b) { return float(a) < float(b); }                            \
  inline bool operator<=(H a, H b) { return float(a) <= float(b); }                          \
  inline bool operator>(H a, H b) { return float(a) > float(b); }                            \
  inline bool operator>=(H a, H b) { return float(a) >= float(b); }
DLC_EMU_HALF_OPS(__half)
DLC_EMU_HALF_OPS(__nv_bfloat16)
#undef DLC_EMU_HALF_OPS

// Conversions.
inline __half __float2half(float f) { return __half(f); }
inline __half __float2half_rn(float f) { return __half(f); }
inline float __half2float(__half h) { return float(h); }
inline __half __int2half_rn(int i) { return __half(float(i)); }
inline int __half2int_rn(__half h) { return int(std::nearbyint(float(h))); }
inline int __half2int_rz(__half h) { return int(float(h)); }
inline unsigned short __half_as_ushort(__half h) { return h.bits; }
inline short __half_as_short(__half h) { return short(h.bits); }
inline __half __ushort_as_half(unsigned short u) { __half h; h.bits = u; return h; }
inline __half __short_as_half(short u) { __half h; h.bits = uint16_t(u); return h; }
inline __nv_bfloat16 __float2bfloat16(float f) { return __nv_bfloat16(f); }
inline __nv_bfloat16 __float2bfloat16_rn(float f) { return __nv_bfloat16(f); }
inline float __bfloat162float(__nv_bfloat16 h) { return float(h); }
inline unsigned short __bfloat16_as_ushort(__nv_bfloat16 h) { return h.bits; }
inline __nv_bfloat16 __ushort_as_bfloat16(unsigned short u) {
  __nv_bfloat16 h;
  h.bits = u;
  return h;
}
inline __half2 __floats2half2_rn(float a, float b) { return {__half(a), __half(b)}; }
inline __half2 __float22half2_rn(float2 f) { return {__half(f.x), __half(f.y)}; }
inline __half2 __float2half2_rn(float f) { return {__half(f), __half(f)}; }
inline float2 __half22float2(__half2 h) { return {float(h.x), float(h.y)}; }
inline float __low2float(__half2 h) { return float(h.x); }
inline float __high2float(__half2 h) { return float(h.y); }
inline __half __low2half(__half2 h) { return h.x; }
inline __half __high2half(__half2 h) { return h.y; }
inline __half2 __halves2half2(__half a, __half b) { return {a, b}; }
inline __half2 __half2half2(__half a) { return {a, a}; }
inline __nv_bfloat162 __floats2bfloat162_rn(float a, float b) {
  return {__nv_bfloat16(a), __nv_bfloat16(b)};
}
inline __nv_bfloat162 __float22bfloat162_rn(float2 f) {
  return {__nv_bfloat16(f.x), __nv_bfloat16(f.y)};
}
inline float2 __bfloat1622float2(__nv_bfloat162 h) { return {float(h.x), float(h.y)}; }
inline float __low2float(__nv_bfloat162 h) { return float(h.x); }
inline float __high2float(__nv_bfloat162 h) { return float(h.y); }
inline __nv_bfloat162 __halves2bfloat162(__nv_bfloat16 a, __nv_bfloat16 b) { return {a, b}; }

// Arithmetic intrinsics, scalar and paired.
#define DLC_EMU_HALF_INTRINSICS(H, H2, suffix)                                                 \
  inline H __hadd##suffix(H a, H b) { return a + b; }                                         \
  inline H __hsub##suffix(H a, H b) { return a - b; }                                         \
  inline H __hmul##suffix(H a, H b) { return a * b; }                                         \
  inline H __hdiv##suffix(H a, H b) { return a / b; }                                         \
  inline H __hneg##suffix(H a) { return -a; }                                                 \
  inline H __habs##suffix(H a) { H r = a; r.bits &= 0x7fffu; return r; }                     \
  inline H __hfma##suffix(H a, H b, H c) { return H(std::fma(float(a), float(b), float(c))); } \
  inline H __hmax##suffix(H a, H b) { return H(std::fmax(float(a), float(b))); }              \
  inline H __hmin##suffix(H a, H b) { return H(std::fmin(float(a), float(b))); }              \
  inline bool __heq##suffix(H a, H b) { return a == b; }                                      \
  inline bool __hne##suffix(H a, H b) { return a != b; }                                      \
  inline bool __hlt##suffix(H a, H b) { return a < b; }                                       \
  inline bool __hle##suffix(H a, H b) { return a <= b; }                                      \
  inline bool __hgt##suffix(H a, H b) { return a > b; }                                       \
  inline bool __hge##suffix(H a, H b) { return a >= b; }                                      \
  inline bool __hisnan##suffix(H a) { return std::isnan(float(a)); }                          \
  inline H hexp##suffix(H a) { return H(std::exp(float(a))); }                                \
  inline H hlog##suffix(H a) { return H(std::log(float(a))); }                                \
  inline H hsqrt##suffix(H a) { return H(std::sqrt(float(a))); }                              \
  inline H hrsqrt##suffix(H a) { return H(1.0f / std::sqrt(float(a))); }                      \
  inline H htanh##suffix(H a) { return H(std::tanh(float(a))); }                              \
  inline H2 __hadd2##suffix(H2 a, H2 b) { return {a.x + b.x, a.y + b.y}; }                    \
  inline H2 __hsub2##suffix(H2 a, H2 b) { return {a.x - b.x, a.y - b.y}; }                    \
  inline H2 __hmul2##suffix(H2 a, H2 b) { return {a.x * b.x, a.y * b.y}; }                    \
  inline H2 __hfma2##suffix(H2 a, H2 b, H2 c) {                                               \
    return {__hfma##suffix(a.x, b.x, c.x), __hfma##suffix(a.y, b.y, c.y)};                    \
  }                                                                                          \
  inline H2 __hmax2##suffix(H2 a, H2 b) {                                                     \
    return {__hmax##suffix(a.x, b.x), __hmax##suffix(a.y, b.y)};                              \
  }                                                                                          \
  inline H2 operator+(H2 a, H2 b) { return __hadd2##suffix(a, b); }                          \
  inline H2 operator*(H2 a, H2 b) { return __hmul2##suffix(a, b); }                          \
  inline H2 operator-(H2 a, H2 b) { return __hsub2##suffix(a, b); }
DLC_EMU_HALF_INTRINSICS(__half, __half2, )
#undef DLC_EMU_HALF_INTRINSICS
// bf16 intrinsics share the __h names in cuda_bf16.h, as overloads.
inline __nv_bfloat16 __hadd(__nv_bfloat16 a, __nv_bfloat16 b) { return a + b; }
inline __nv_bfloat16 __hsub(__nv_bfloat16 a, __nv_bfloat16 b) { return a - b; }
inline __nv_bfloat16 __hmul(__nv_bfloat16 a, __nv_bfloat16 b) { return a * b; }
inline __nv_bfloat16 __hdiv(__nv_bfloat16 a, __nv_bfloat16 b) { return a / b; }
inline __nv_bfloat16 __hneg(__nv_bfloat16 a) { return -a; }
inline __nv_bfloat16 __hfma(__nv_bfloat16 a, __nv_bfloat16 b, __nv_bfloat16 c) {
  return __nv_bfloat16(std::fma(float(a), float(b), float(c)));
}
inline __nv_bfloat16 __hmax(__nv_bfloat16 a, __nv_bfloat16 b) {
  return __nv_bfloat16(std::fmax(float(a), float(b)));
}
inline __nv_bfloat16 __hmin(__nv_bfloat16 a, __nv_bfloat16 b) {
  return __nv_bfloat16(std::fmin(float(a), float(b)));
}
inline __nv_bfloat162 __hadd2(__nv_bfloat162 a, __nv_bfloat162 b) {
  return {a.x + b.x, a.y + b.y};
}
inline __nv_bfloat162 __hmul2(__nv_bfloat162 a, __nv_bfloat162 b) {
  return {a.x * b.x, a.y * b.y};
}
inline __nv_bfloat162 __hfma2(__nv_bfloat162 a, __nv_bfloat162 b, __nv_bfloat162 c) {
  return {__hfma(a.x, b.x, c.x), __hfma(a.y, b.y, c.y)};
}

// Tensor cores (mma.sync and the conversions that feed it): their own file.
#include "dlc_emu_mma.h"

//===----------------------------------------------------------------------===//
// Atomics (blocks run concurrently on OS threads, so these are real atomics)
//===----------------------------------------------------------------------===//

namespace dlc_emu {
/// A compare-and-swap loop over the bits of T (any trivially copyable type
/// of 2, 4 or 8 bytes): *address = op(old), returns old.
template <typename T, typename Op> T atomicUpdate(T *address, Op op) {
  using Bits = std::conditional_t<sizeof(T) == 2, uint16_t,
                                  std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>>;
  static_assert(sizeof(T) == sizeof(Bits), "atomics on 2, 4 or 8 bytes");
  Bits *bits = reinterpret_cast<Bits *>(address);
  Bits expected = __atomic_load_n(bits, __ATOMIC_RELAXED), desired;
  T old;
  do {
    std::memcpy(&old, &expected, sizeof(T));
    T updated = op(old);
    std::memcpy(&desired, &updated, sizeof(T));
  } while (!__atomic_compare_exchange_n(bits, &expected, desired, true, __ATOMIC_SEQ_CST,
                                        __ATOMIC_RELAXED));
  return old;
}
} // namespace dlc_emu

#define DLC_EMU_INT_ATOMICS(T)                                                                 \
  inline T atomicAdd(T *a, T v) { return __atomic_fetch_add(a, v, __ATOMIC_SEQ_CST); }        \
  inline T atomicSub(T *a, T v) { return __atomic_fetch_sub(a, v, __ATOMIC_SEQ_CST); }        \
  inline T atomicAnd(T *a, T v) { return __atomic_fetch_and(a, v, __ATOMIC_SEQ_CST); }        \
  inline T atomicOr(T *a, T v) { return __atomic_fetch_or(a, v, __ATOMIC_SEQ_CST); }          \
  inline T atomicXor(T *a, T v) { return __atomic_fetch_xor(a, v, __ATOMIC_SEQ_CST); }        \
  inline T atomicExch(T *a, T v) { return __atomic_exchange_n(a, v, __ATOMIC_SEQ_CST); }      \
  inline T atomicMax(T *a, T v) {                                                            \
    return dlc_emu::atomicUpdate(a, [v](T o) { return o < v ? v : o; });                     \
  }                                                                                          \
  inline T atomicMin(T *a, T v) {                                                            \
    return dlc_emu::atomicUpdate(a, [v](T o) { return v < o ? v : o; });                     \
  }                                                                                          \
  inline T atomicCAS(T *a, T compare, T v) {                                                 \
    __atomic_compare_exchange_n(a, &compare, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);  \
    return compare;                                                                          \
  }
DLC_EMU_INT_ATOMICS(int)
DLC_EMU_INT_ATOMICS(unsigned)
DLC_EMU_INT_ATOMICS(unsigned long long)
DLC_EMU_INT_ATOMICS(long long)
#undef DLC_EMU_INT_ATOMICS
inline unsigned atomicInc(unsigned *a, unsigned limit) {
  return dlc_emu::atomicUpdate(a, [limit](unsigned o) { return o >= limit ? 0u : o + 1; });
}
inline unsigned atomicDec(unsigned *a, unsigned limit) {
  return dlc_emu::atomicUpdate(
      a, [limit](unsigned o) { return (o == 0 || o > limit) ? limit : o - 1; });
}

#define DLC_EMU_FLOAT_ATOMICS(T)                                                               \
  inline T atomicAdd(T *a, T v) {                                                            \
    return dlc_emu::atomicUpdate(a, [v](T o) { return T(o + v); });                          \
  }                                                                                          \
  inline T atomicExch(T *a, T v) {                                                           \
    return dlc_emu::atomicUpdate(a, [v](T) { return v; });                                   \
  }
DLC_EMU_FLOAT_ATOMICS(float)
DLC_EMU_FLOAT_ATOMICS(double)
DLC_EMU_FLOAT_ATOMICS(__half)
DLC_EMU_FLOAT_ATOMICS(__nv_bfloat16)
#undef DLC_EMU_FLOAT_ATOMICS
inline __half2 atomicAdd(__half2 *a, __half2 v) {
  return dlc_emu::atomicUpdate(a, [v](__half2 o) { return o + v; });
}
inline __half atomicMax(__half *a, __half v) {
  return dlc_emu::atomicUpdate(a, [v](__half o) { return o < v ? v : o; });
}

#endif // DLC_CUDA_EMU_H
