//===- PackedGemmPrelude.cpp - dlc's own GEMM on module weights ----------===//
//
// The part of the CPU prelude a module includes when one of its f32
// matmuls multiplies by a module weight (Contraction.cpp decides):
// dlc_sgemm_weights, a GEMM whose B is packed once, on its first use, into
// the panels its micro-kernel reads, as ONNX Runtime's MLAS and oneDNN's
// matmul with "any" weights do. oneDNN's and OpenBLAS's sgemm pack B on
// every call, and each of the runtime's threads calls them for its own
// rows, so both threads packed all of a layer's weights each run: for
// BERT's 768 x 3072 layer, 9 MB read and written twice per call.
//
// dlc_conv_packed runs a channels-last convolution on the same packed
// panels and micro-kernel shape: an indirect GEMM, as XNNPACK's are. Its
// filters are packed once with k in (tap, channel) order, and the kernel
// reads A in place, a run of one tap's channels at a time from six
// pixels' addresses (a zero row in the padding), so nothing is copied per
// call. Without AVX-512, oneDNN 2.6 runs windows wider than 1x1 on nChw8c
// kernels, reordering NHWC activations in and out around each call. Its
// 3x3s of unit stride go first to dlc_conv_winograd, Winograd F(2x2, 3x3)
// or F(4x4, 3x3) on the same GEMM (oneDNN 2.6 has Winograd on AVX-512
// only). Both apply a kernel's tail (residual add, ReLU) as they store.
//
// Why here and only on AVX2: oneDNN's AVX-512 GEMM kernels (and its
// brgemm) are faster than this 6 x 16 AVX2 kernel, so a CPU with AVX-512
// keeps dlc_sgemm. The choice is made once per process from the CPU (or
// forced by $DLC_CPU_PACKED_GEMM at compile time, CpuTarget::packedGemm),
// so a machine always computes the same bits; the sum over k runs in
// order whatever the rows or the thread split, so the rows a call gets
// never change a result either.
//
// The packed weights live in a table keyed by the weights' address: a
// module's weights are immutable at one address for the life of the
// executable that loads the kernels (DnnlConvPrelude.cpp says why), and
// kernels sharing a body (GPT-2's layers) keep one entry per weight. The
// table is read without a lock (open addressing, entries published with
// release stores); a miss packs under the lock.
//
//===----------------------------------------------------------------------===//

#include "codegen/cpu/CpuTarget.h"

using namespace dlc::codegen;

std::string CpuTarget::packedGemmPrelude() const {
  return R"(
#include <pthread.h>
#ifndef DLC_PACKED_GEMM
#define DLC_PACKED_GEMM )" +
         std::to_string(int(packedGemm)) + R"(
#endif
namespace {
// GCC's vector types and builtins, not <immintrin.h>, <atomic> and <mutex>:
// parsing those took about a second of each module's host compile (GPT-2
// small's kernels: 1.9 s without them, 2.8 s with). FMAs are asked for by
// name, so the order of every sum is this code's, not the compiler's.
typedef float dlc_f8 __attribute__((vector_size(32), __may_alias__));
typedef float dlc_f8u __attribute__((vector_size(32), __may_alias__, aligned(4))); // unaligned
__attribute__((target("avx2,fma"), always_inline)) inline dlc_f8 dlc_fma8(dlc_f8 a, dlc_f8 b,
                                                                         dlc_f8 c) {
  return __builtin_ia32_vfmaddps256(a, b, c);
}
// *x in every lane: one vbroadcastss from memory (a vector built from a
// float lets GCC combine six of them into shuffles, spilling accumulators).
__attribute__((target("avx2,fma"), always_inline)) inline dlc_f8 dlc_bcast8(const float *x) {
  return __builtin_ia32_vbroadcastss256(x);
}
// Micro-kernel: 6 rows x 16 columns of C in 12 AVX registers; per k, one
// row of the B panel (two loads) and six broadcasts of A. B panels are KC
// x 16 floats (16 KiB: one stays in L1 while the rows' A panels pass);
// A is packed once per call, all of K for up to MC rows (at most 1 MiB);
// C is computed in column blocks of at most 128 KiB, all of K each, so it
// stays in L2 (column blocks across all k at once: 64 rows of BERT's 768 x
// 3072 layer, 768 KiB, went to L3 once per block of k).
constexpr int64_t DLC_MR = 6, DLC_NR = 16, DLC_KC = 256;
// B (K x N, or N x K transposed, rows ldb apart) as [K / KC][N / 16][kc][16],
// columns past N zero. A convolution's filters (OIHW: N x K transposed,
// K = C x taps) with more than one tap are packed with k in the order
// (tap, channel), the order in which channels-last activations hold a
// window (DlcConvRun). Negative taps: 3x3 filters (N x K x 3 x 3) as
// Winograd F(RxR, 3x3)'s -taps transformed K x N matrices, one after the
// other (dlc_conv_winograd; -16 for R = 2, -36 for R = 4).
struct DlcPackedB {
  const float *source;
  bool tb;
  int64_t K, N, ldb, taps, panels;
  float *data;
};
inline void dlc_pack_b_into(const DlcPackedB &p, float *d) {
  const int64_t C = p.K / p.taps;
  for (int64_t k0 = 0; k0 < p.K; k0 += DLC_KC) {
    const int64_t kc = p.K - k0 < DLC_KC ? p.K - k0 : DLC_KC;
    for (int64_t j = 0; j < p.panels; ++j) {
      const int64_t n0 = j * DLC_NR, nr = p.N - n0 < DLC_NR ? p.N - n0 : DLC_NR;
      for (int64_t k = k0; k < k0 + kc; ++k, d += DLC_NR) {
        const int64_t kk = p.taps == 1 ? k : k % C * p.taps + k / C;
        for (int64_t c = 0; c < DLC_NR; ++c)
          d[c] = c >= nr ? 0.0f : p.tb ? p.source[(n0 + c) * p.ldb + kk] : p.source[kk * p.ldb + n0 + c];
      }
    }
  }
}
// Winograd F(R, 3)'s transforms on one line of values (Lavin and Gray,
// 2015): u (R + 2) = G g of a filter line g (3, in double: the filters
// are transformed once), y (R + 2) = B^T x of an input line, y (R) = A^T
// x of a product line. R = 2: interpolation points 0, 1, -1, infinity; R =
// 4: 0, 1, -1, 2, -2, infinity.
inline void dlc_wino_filter(int R, const double *g, double *u) {
  if (R == 2) {
    u[0] = g[0], u[1] = 0.5 * (g[0] + g[1] + g[2]), u[2] = 0.5 * (g[0] - g[1] + g[2]), u[3] = g[2];
    return;
  }
  u[0] = g[0] / 4;
  u[1] = -(g[0] + g[1] + g[2]) / 6;
  u[2] = -(g[0] - g[1] + g[2]) / 6;
  u[3] = g[0] / 24 + g[1] / 12 + g[2] / 6;
  u[4] = g[0] / 24 - g[1] / 12 + g[2] / 6;
  u[5] = g[2];
}
template <int R>
__attribute__((target("avx2,fma"), always_inline)) inline void dlc_wino_in(const dlc_f8 *x,
                                                                          dlc_f8 *y) {
  if (R == 2) {
    y[0] = x[0] - x[2], y[1] = x[1] + x[2], y[2] = x[2] - x[1], y[3] = x[1] - x[3];
    return;
  }
  const dlc_f8 a = x[4] - 4.0f * x[2], b = x[3] - 4.0f * x[1], c = x[4] - x[2],
               d = 2.0f * (x[3] - x[1]);
  y[0] = 4.0f * x[0] - 5.0f * x[2] + x[4];
  y[1] = a + b, y[2] = a - b, y[3] = c + d, y[4] = c - d;
  y[5] = 4.0f * x[1] - 5.0f * x[3] + x[5];
}
template <int R>
__attribute__((target("avx2,fma"), always_inline)) inline void dlc_wino_out(const dlc_f8 *x,
                                                                           dlc_f8 *y) {
  if (R == 2) {
    y[0] = x[0] + x[1] + x[2], y[1] = x[1] - x[2] - x[3];
    return;
  }
  const dlc_f8 a = x[1] + x[2], b = x[1] - x[2], c = x[3] + x[4], d = x[3] - x[4];
  y[0] = x[0] + a + c;
  y[1] = b + 2.0f * d;
  y[2] = a + 4.0f * c;
  y[3] = b + 8.0f * d + x[5];
}
// Winograd F(RxR, 3x3)'s filters: U = G g G^T for each filter g (3 x 3,
// of output o and channel c); element (i, j) of every U is matrix (R + 2)
// i + j, K (channels) x N (outputs), packed.
inline bool dlc_pack_winograd_into(const DlcPackedB &p, float *d) {
  const int matrices = (int)-p.taps, A = matrices == 16 ? 4 : 6, R = A - 2;
  float *u = (float *)malloc((size_t)(matrices * p.N * p.K * 4)); // [A * A][N][K]
  if (!u)
    return false;
  for (int64_t o = 0; o < p.N; ++o)
    for (int64_t c = 0; c < p.K; ++c) {
      const float *g = p.source + (o * p.K + c) * 9;
      double t[6][3], col[3], line[6]; // t = G g
      for (int j = 0; j < 3; ++j) {
        for (int i = 0; i < 3; ++i)
          col[i] = g[3 * i + j];
        dlc_wino_filter(R, col, line);
        for (int i = 0; i < A; ++i)
          t[i][j] = line[i];
      }
      for (int i = 0; i < A; ++i) {
        dlc_wino_filter(R, t[i], line); // row i of t G^T
        for (int j = 0; j < A; ++j)
          u[((A * i + j) * p.N + o) * p.K + c] = (float)line[j];
      }
    }
  for (int m = 0; m < matrices; ++m)
    dlc_pack_b_into(DlcPackedB{u + m * p.N * p.K, true, p.K, p.N, p.K, 1, p.panels, nullptr},
                    d + m * p.K * p.panels * DLC_NR);
  free(u);
  return true;
}
inline float *dlc_pack_b(const DlcPackedB &p) {
  const int64_t matrices = p.taps < 0 ? -p.taps : 1;
  float *data = (float *)aligned_alloc(
      64, (size_t)((matrices * p.K * p.panels * DLC_NR * 4 + 63) / 64 * 64));
  if (!data)
    return nullptr;
  if (matrices == 1)
    dlc_pack_b_into(p, data);
  else if (!dlc_pack_winograd_into(p, data)) {
    free(data);
    return nullptr;
  }
  return data;
}
class DlcPackedWeights {
public:
  ~DlcPackedWeights() {
    for (DlcPackedB *p : slots_)
      if (p) {
        free(p->data);
        delete p;
      }
  }
  // The packed form of B, packed on first use; null when it cannot be
  // (out of memory, or the table is full): the caller uses dlc_sgemm.
  const DlcPackedB *get(const float *b, bool tb, int64_t K, int64_t N, int64_t ldb,
                        int64_t taps) {
    if (const DlcPackedB *p = find(b, tb, K, N, ldb, taps))
      return p;
    pthread_mutex_lock(&lock_);
    const DlcPackedB *found = find(b, tb, K, N, ldb, taps);
    for (size_t i = hash(b), n = 0; !found && n < kSlots; ++n, i = (i + 1) % kSlots) {
      if (slots_[i])
        continue;
      DlcPackedB *p = new DlcPackedB{b, tb, K, N, ldb, taps, (N + DLC_NR - 1) / DLC_NR, nullptr};
      p->data = dlc_pack_b(*p);
      if (!p->data) {
        delete p;
        break;
      }
      __atomic_store_n(&slots_[i], p, __ATOMIC_RELEASE);
      found = p;
    }
    pthread_mutex_unlock(&lock_);
    return found;
  }

private:
  static constexpr size_t kSlots = 4096;
  static size_t hash(const float *b) { return ((uintptr_t)b >> 6) * 0x9E3779B97F4A7C15ull >> 52; }
  const DlcPackedB *find(const float *b, bool tb, int64_t K, int64_t N, int64_t ldb,
                         int64_t taps) const {
    for (size_t i = hash(b), n = 0; n < kSlots; ++n, i = (i + 1) % kSlots) {
      const DlcPackedB *p = __atomic_load_n(&slots_[i], __ATOMIC_ACQUIRE);
      if (!p)
        return nullptr;
      if (p->source == b && p->tb == tb && p->K == K && p->N == N && p->ldb == ldb &&
          p->taps == taps)
        return p;
    }
    return nullptr;
  }
  DlcPackedB *slots_[kSlots] = {};
  pthread_mutex_t lock_ = PTHREAD_MUTEX_INITIALIZER;
} dlc_packed_weights;

// 16 floats of C at c = lo, hi (+ C where `add`).
__attribute__((target("avx2,fma"), always_inline)) inline void
dlc_store_x16(float *c, dlc_f8 lo, dlc_f8 hi, bool add) {
  if (add) {
    lo += *(const dlc_f8u *)c;
    hi += *(const dlc_f8u *)(c + 8);
  }
  *(dlc_f8u *)c = lo;
  *(dlc_f8u *)(c + 8) = hi;
}
// The memory a micro-kernel is about to use, fetched ahead. Measured on
// BERT's and GPT-2's products (128 rows, K 768 or 3072, weights larger than
// L3 in total; two threads, interleaved runs): fetching each tile's C
// before its k loop, 3-9% faster (the loads and stores of C after the loop,
// from L2 or L3 at every k block, were ~10% of a one-thread profile); the B
// panel two ahead fetched a share per row tile, a further 1-12% faster
// than the next panel fetched whole by the first tile (whose loads then
// waited behind its prefetches).
//
// The `rows` rows of 16 floats of C at c (ldc apart), into L1 for writing.
__attribute__((always_inline)) inline void dlc_prefetch_c(float *c, int64_t ldc, int64_t rows) {
  for (int64_t r = 0; r < rows; ++r, c += ldc) {
    __builtin_prefetch(c, 1, 3);
    __builtin_prefetch(c + 15, 1, 3);
  }
}
// Row tile i's share (of `tiles`) of a B panel (kc lines of 16 floats),
// into L2; nothing when panel is null.
__attribute__((always_inline)) inline void dlc_prefetch_panel(const float *panel, int64_t kc,
                                                              int64_t i, int64_t tiles) {
  const int64_t per = (kc + tiles - 1) / tiles, end = (i + 1) * per < kc ? (i + 1) * per : kc;
  for (int64_t l = i * per; panel && l < end; ++l)
    __builtin_prefetch(panel + l * DLC_NR, 0, 2);
}
// C (6 x 16, rows ldc apart) = (add ? C : 0) + A panel (kc x 6) x B panel
// (kc x 16).
__attribute__((target("avx2,fma"), always_inline)) inline void
dlc_gemm_6x16(int64_t kc, const float *a, const float *b, float *c, int64_t ldc, bool add) {
  dlc_f8 c00 = {}, c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00,
         c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;
  dlc_prefetch_c(c, ldc, DLC_MR);
#pragma GCC unroll 4
  for (int64_t k = 0; k < kc; ++k, a += DLC_MR, b += DLC_NR) {
    const dlc_f8 b0 = *(const dlc_f8 *)b, b1 = *(const dlc_f8 *)(b + 8);
    dlc_f8 x = dlc_bcast8(a), y = dlc_bcast8(a + 1);
    c00 = dlc_fma8(x, b0, c00), c01 = dlc_fma8(x, b1, c01);
    c10 = dlc_fma8(y, b0, c10), c11 = dlc_fma8(y, b1, c11);
    x = dlc_bcast8(a + 2), y = dlc_bcast8(a + 3);
    c20 = dlc_fma8(x, b0, c20), c21 = dlc_fma8(x, b1, c21);
    c30 = dlc_fma8(y, b0, c30), c31 = dlc_fma8(y, b1, c31);
    x = dlc_bcast8(a + 4), y = dlc_bcast8(a + 5);
    c40 = dlc_fma8(x, b0, c40), c41 = dlc_fma8(x, b1, c41);
    c50 = dlc_fma8(y, b0, c50), c51 = dlc_fma8(y, b1, c51);
  }
  const dlc_f8 row[6][2] = {{c00, c01}, {c10, c11}, {c20, c21},
                            {c30, c31}, {c40, c41}, {c50, c51}};
  for (int r = 0; r < DLC_MR; ++r, c += ldc)
    dlc_store_x16(c, row[r][0], row[r][1], add);
}
// The first `R` (1 to 5) rows of the 6 x 16 product: the last rows of a
// call. Each lane does the 6 x 16 kernel's operations in its order, so a
// row's bits do not depend on the rows computed with it.
template <int R>
__attribute__((target("avx2,fma"), always_inline)) inline void
dlc_gemm_rows_x16(int64_t kc, const float *a, const float *b, float *c, int64_t ldc, bool add) {
  dlc_f8 acc[R][2] = {};
  for (int64_t k = 0; k < kc; ++k, a += DLC_MR, b += DLC_NR) {
    const dlc_f8 b0 = *(const dlc_f8 *)b, b1 = *(const dlc_f8 *)(b + 8);
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r) {
      const dlc_f8 x = dlc_bcast8(a + r);
      acc[r][0] = dlc_fma8(x, b0, acc[r][0]);
      acc[r][1] = dlc_fma8(x, b1, acc[r][1]);
    }
  }
  // Unrolled, as the k loop's: a loop indexing acc makes GCC keep it in
  // memory and store every accumulator at every k (3 to 5 rows took 1.4
  // to 2.4 times a 6-row tile's time, bound by those stores).
#pragma GCC unroll 6
  for (int r = 0; r < R; ++r, c += ldc)
    dlc_store_x16(c, acc[r][0], acc[r][1], add);
}
__attribute__((target("avx2,fma"), always_inline)) inline void
dlc_gemm_tail_x16(int rows, int64_t kc, const float *a, const float *b, float *c, int64_t ldc,
                  bool add) {
  switch (rows) {
  case 1: dlc_gemm_rows_x16<1>(kc, a, b, c, ldc, add); break;
  case 2: dlc_gemm_rows_x16<2>(kc, a, b, c, ldc, add); break;
  case 3: dlc_gemm_rows_x16<3>(kc, a, b, c, ldc, add); break;
  case 4: dlc_gemm_rows_x16<4>(kc, a, b, c, ldc, add); break;
  case 5: dlc_gemm_rows_x16<5>(kc, a, b, c, ldc, add); break;
  default: dlc_gemm_6x16(kc, a, b, c, ldc, add); break;
  }
}
// One row of A times 4 panels of B (64 columns; panels kc x 16 apart):
// each lane does the 6 x 16 kernel's operations in its order, with 8
// chains of FMAs instead of 2 (a row's product is a chain of kc FMAs per
// lane; 2 chains leave the FMA units waiting on their latency).
__attribute__((target("avx2,fma"), always_inline)) inline void
dlc_gemv_4x16(int64_t kc, const float *a, const float *b, float *c, bool add) {
  dlc_f8 acc[8] = {};
  const int64_t panel = kc * DLC_NR;
  for (int64_t k = 0; k < kc; ++k, a += DLC_MR, b += DLC_NR) {
    const dlc_f8 x = dlc_bcast8(a);
#pragma GCC unroll 8
    for (int q = 0; q < 8; ++q)
      acc[q] = dlc_fma8(x, *(const dlc_f8 *)(b + (q / 2) * panel + (q % 2) * 8), acc[q]);
  }
  // Unrolled so that acc stays in registers (dlc_gemm_rows_x16 says why).
#pragma GCC unroll 8
  for (int q = 0; q < 8; ++q) {
    float *cq = c + q * 8;
    *(dlc_f8u *)cq = add ? acc[q] + *(const dlc_f8u *)cq : acc[q];
  }
}
// The rows of A one call packs: all of K for at most 1 MiB of them, 6 to
// 144 (a multiple of 6).
inline int64_t dlc_packed_gemm_mc(int64_t K) {
  const int64_t mc = (1 << 18) / K / DLC_MR * DLC_MR;
  return mc < DLC_MR ? DLC_MR : mc > 144 ? 144 : mc;
}
// Columns [first, last) of rows x N of C (rows ldc apart, c at column 0) =
// op(A) (rows x K; rows lda apart, or transposed: K x rows) x the packed
// B; apack holds dlc_packed_gemm_mc(K) x K floats. noipa: compiled once,
// not cloned per call site's constant arguments (that was ~1 s of GPT-2
// small's host compile).
__attribute__((target("avx2,fma"), noipa)) inline void
dlc_sgemm_packed(bool ta, int64_t rows, const float *a, int64_t lda, const DlcPackedB &p,
                 float *c, int64_t ldc, float *apack, int64_t first, int64_t last) {
  const int64_t K = p.K, MC = dlc_packed_gemm_mc(K);
  alignas(32) float tile[DLC_MR * DLC_NR];
  for (int64_t m0 = 0; m0 < rows; m0 += MC) {
    const int64_t mc = rows - m0 < MC ? rows - m0 : MC, mp = (mc + DLC_MR - 1) / DLC_MR;
    // A's rows [m0, m0 + mc) as [K / KC][mc / 6][kc][6], rows past `rows` zero.
    for (int64_t k0 = 0; k0 < K; k0 += DLC_KC) {
      const int64_t kc = K - k0 < DLC_KC ? K - k0 : DLC_KC;
      for (int64_t i = 0; i < mp; ++i) {
        float *d = apack + k0 * mp * DLC_MR + i * kc * DLC_MR;
        const int64_t r0 = m0 + i * DLC_MR, mr = rows - r0 < DLC_MR ? rows - r0 : DLC_MR;
        for (int64_t r = 0; r < DLC_MR; ++r) {
          if (r >= mr)
            for (int64_t k = 0; k < kc; ++k)
              d[k * DLC_MR + r] = 0.0f;
          else if (ta)
            for (int64_t k = 0; k < kc; ++k)
              d[k * DLC_MR + r] = a[(k0 + k) * lda + r0 + r];
          else
            for (int64_t k = 0; k < kc; ++k)
              d[k * DLC_MR + r] = a[(r0 + r) * lda + k0 + k];
        }
      }
    }
    // Column blocks of C of at most 128 KiB (a multiple of 16 columns).
    int64_t blockPanels = (1 << 15) / (mp * DLC_MR) / DLC_NR;
    blockPanels = blockPanels < 1 ? 1 : blockPanels;
    const int64_t panelEnd = (last + DLC_NR - 1) / DLC_NR;
    for (int64_t j0 = first / DLC_NR; j0 < panelEnd; j0 += blockPanels) {
      const int64_t j1 = j0 + blockPanels < panelEnd ? j0 + blockPanels : panelEnd;
      for (int64_t k0 = 0; k0 < K; k0 += DLC_KC) {
        const int64_t kc = K - k0 < DLC_KC ? K - k0 : DLC_KC;
        const float *ap = apack + k0 * mp * DLC_MR;
        const bool add = k0 > 0;
        for (int64_t j = j0; j < j1; ++j) {
          const float *bp = p.data + k0 * p.panels * DLC_NR + j * kc * DLC_NR;
          // A single row: 4 whole panels at a time where this call has them.
          if (rows == 1 && j + 4 <= j1 && j * DLC_NR >= first && (j + 4) * DLC_NR <= last) {
            dlc_gemv_4x16(kc, ap, bp, c + j * DLC_NR, add);
            j += 3;
            continue;
          }
          const float *ahead = j + 2 < j1 ? bp + 2 * kc * DLC_NR : nullptr;
          // This panel's columns [n0 + qa, n0 + qb) are C's to write.
          const int64_t n0 = j * DLC_NR, qa = first > n0 ? first - n0 : 0,
                        qb = last - n0 < DLC_NR ? last - n0 : DLC_NR;
          for (int64_t i = 0; i < mp; ++i) {
            const int64_t r0 = m0 + i * DLC_MR, mr = rows - r0 < DLC_MR ? rows - r0 : DLC_MR;
            float *cc = c + r0 * ldc + n0;
            const float *ai = ap + i * kc * DLC_MR;
            dlc_prefetch_panel(ahead, kc, i, mp);
            if (qa == 0 && qb == DLC_NR) {
              if (mr == DLC_MR)
                dlc_gemm_6x16(kc, ai, bp, cc, ldc, add);
              else
                dlc_gemm_tail_x16((int)mr, kc, ai, bp, cc, ldc, add);
              continue;
            }
            dlc_gemm_tail_x16((int)mr, kc, ai, bp, tile, DLC_NR, false);
            for (int64_t r = 0; r < mr; ++r)
              for (int64_t q = qa; q < qb; ++q)
                cc[r * ldc + q] = add ? tile[r * DLC_NR + q] + cc[r * ldc + q] : tile[r * DLC_NR + q];
          }
        }
      }
    }
  }
}
// Whether this process multiplies by packed weights: DLC_PACKED_GEMM 1
// (auto) on AVX2 CPUs without AVX-512, 2 (always) on every AVX2 CPU, 0
// never.
inline bool dlc_packed_gemm_on() {
  static const bool on = DLC_PACKED_GEMM != 0 && __builtin_cpu_supports("avx2") &&
                         __builtin_cpu_supports("fma") &&
                         (DLC_PACKED_GEMM == 2 || !__builtin_cpu_supports("avx512f"));
  return on;
}
// The calling thread's packed A for K (the blas prelude's scratch slot 3).
inline float *dlc_packed_gemm_scratch(int64_t K) {
  return dlc_gemm_scratch(3, dlc_packed_gemm_mc(K) * K);
}
// The packed B to multiply by, or null where this process does not pack
// (or cannot: out of memory).
inline const DlcPackedB *dlc_packed_weights_for(const float *b, bool tb, int64_t k, int64_t n,
                                                int64_t ldb, int64_t taps = 1) {
  return dlc_packed_gemm_on() ? dlc_packed_weights.get(b, tb, k, n, ldb, taps) : nullptr;
}
// C = op(A) op(B) where B is a module weight: the packed GEMM where it is
// on, else `fallback` (dlc_sgemm or dlc_sgemm_b_rows_2k).
template <typename Fallback>
inline void dlc_sgemm_weights(Fallback fallback, bool ta, bool tb, int64_t m, int64_t n,
                              int64_t k, const float *a, int64_t lda, const float *b,
                              int64_t ldb, float *c, int64_t ldc) {
  if (const DlcPackedB *p = dlc_packed_weights_for(b, tb, k, n, ldb))
    if (float *apack = dlc_packed_gemm_scratch(k)) {
      dlc_sgemm_packed(ta, m, a, lda, *p, c, ldc, apack, 0, n);
      return;
    }
  fallback(ta, tb, m, n, k, a, lda, b, ldb, c, ldc);
}
// Columns [first, last) of the single row c (1 x n) = a (1 x k) x B, B a
// module weight: the packed GEMM where it is on (the same bits as a row of
// dlc_sgemm_weights), else `fallback` on those columns.
template <typename Fallback>
inline void dlc_sgemv_weights(Fallback fallback, bool tb, int64_t n, int64_t k, const float *a,
                              const float *b, int64_t ldb, float *c, int64_t first,
                              int64_t last) {
  if (const DlcPackedB *p = dlc_packed_weights_for(b, tb, k, n, ldb))
    if (float *apack = dlc_packed_gemm_scratch(k)) {
      dlc_sgemm_packed(false, 1, a, k, *p, c, n, apack, first, last);
      return;
    }
  fallback(false, tb, 1, last - first, k, a, k, tb ? b + first * ldb : b + first, ldb, c + first,
           n);
}
// A convolution's A, read in place (an indirect GEMM): a k block of the
// im2col matrix is a few runs of one tap's channels, each given by the
// addresses of its six rows' (pixels') first channel. A row in the padding,
// or past the call's rows, reads dlc_conv_zeros.
struct DlcConvRun {
  const float *row[DLC_MR];
  int64_t len;
};
alignas(64) const float dlc_conv_zeros[DLC_KC] = {};
// What a convolution's packed kernel applies to its result as it stores it,
// in the order of the loop it replaces (conv + bias, + residual, ReLU):
// `residual` (the result's shape and layout, element `flat` at
// residual[flat]; it may be the result itself, each element read before it
// is written) added with the first k block, dlc.relu (NaN kept, -0 made +0)
// with the last.
struct DlcConvEpilogue {
  const float *residual;
  bool relu;
};
// dlc.relu on eight lanes: x where x > 0 or x is NaN, else +0.
__attribute__((target("avx2,fma"), always_inline)) inline dlc_f8 dlc_relu8(dlc_f8 x) {
  typedef int dlc_i8 __attribute__((vector_size(32)));
  const dlc_f8 zero = {};
  return (dlc_f8)(~(dlc_i8)(x <= zero) & (dlc_i8)x);
}
inline float dlc_relu1(float x) { return x > 0.0f || x != x ? x : 0.0f; }
// 16 floats of a convolution's C at c = lo, hi + (C where `add`, else the
// bias where given, then the residual's 16 floats at `res` where given),
// ReLU'd where `relu`.
__attribute__((target("avx2,fma"), always_inline)) inline void
dlc_conv_store_x16(float *c, dlc_f8 lo, dlc_f8 hi, bool add, const float *bias,
                   const float *res, bool relu) {
  if (add) {
    lo += *(const dlc_f8u *)c;
    hi += *(const dlc_f8u *)(c + 8);
  } else {
    if (bias) {
      lo += *(const dlc_f8u *)bias;
      hi += *(const dlc_f8u *)(bias + 8);
    }
    if (res) {
      lo += *(const dlc_f8u *)res;
      hi += *(const dlc_f8u *)(res + 8);
    }
  }
  if (relu) {
    lo = dlc_relu8(lo);
    hi = dlc_relu8(hi);
  }
  *(dlc_f8u *)c = lo;
  *(dlc_f8u *)(c + 8) = hi;
}
// The first `rows` rows of C (6 x 16, rows ldc apart) = (add ? C : bias +
// residual rows at res, ldc apart) + the runs' rows x the B panel (their
// lengths' sum x 16), ReLU'd where `relu`: the 6 x 16 kernel's operations
// in its order, each lane a chain of FMAs over k.
__attribute__((target("avx2,fma"), always_inline)) inline void
dlc_conv_6x16(const DlcConvRun *runs, int64_t nruns, const float *b, float *c, int64_t ldc,
              int64_t rows, bool add, const float *bias, const float *res, bool relu) {
  dlc_f8 c00 = {}, c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00,
         c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;
  dlc_prefetch_c(c, ldc, rows);
  for (int64_t q = 0; q < nruns; ++q) {
    const float *a0 = runs[q].row[0], *a1 = runs[q].row[1], *a2 = runs[q].row[2],
                *a3 = runs[q].row[3], *a4 = runs[q].row[4], *a5 = runs[q].row[5];
    const int64_t len = runs[q].len;
#pragma GCC unroll 4
    for (int64_t k = 0; k < len; ++k, b += DLC_NR) {
      const dlc_f8 b0 = *(const dlc_f8 *)b, b1 = *(const dlc_f8 *)(b + 8);
      dlc_f8 x = dlc_bcast8(a0 + k), y = dlc_bcast8(a1 + k);
      c00 = dlc_fma8(x, b0, c00), c01 = dlc_fma8(x, b1, c01);
      c10 = dlc_fma8(y, b0, c10), c11 = dlc_fma8(y, b1, c11);
      x = dlc_bcast8(a2 + k), y = dlc_bcast8(a3 + k);
      c20 = dlc_fma8(x, b0, c20), c21 = dlc_fma8(x, b1, c21);
      c30 = dlc_fma8(y, b0, c30), c31 = dlc_fma8(y, b1, c31);
      x = dlc_bcast8(a4 + k), y = dlc_bcast8(a5 + k);
      c40 = dlc_fma8(x, b0, c40), c41 = dlc_fma8(x, b1, c41);
      c50 = dlc_fma8(y, b0, c50), c51 = dlc_fma8(y, b1, c51);
    }
  }
  const dlc_f8 row[6][2] = {{c00, c01}, {c10, c11}, {c20, c21},
                            {c30, c31}, {c40, c41}, {c50, c51}};
  for (int r = 0; r < rows; ++r, c += ldc)
    dlc_conv_store_x16(c, row[r][0], row[r][1], add, bias, res ? res + r * ldc : nullptr, relu);
}
// The runs of k block [k0, k0 + kc) of a convolution's im2col rows [r0,
// r0 + 6) (those from `rows` on read zeros); row m is the output pixel m
// of the image x's output rows from oh0 on, column k channel k % C of tap
// k / C (taps (kh, kw) row by row). Returns the number of runs.
template <typename Shape>
inline int64_t dlc_conv_runs(DlcConvRun *runs, const Shape &s, const float *x, int64_t oh0,
                             int64_t rows, int64_t r0, int64_t k0, int64_t kc) {
  int64_t n = 0;
  for (int64_t k = k0; k < k0 + kc; ++n) {
    const int64_t tap = k / s.C, ch = k % s.C, kh = tap / s.KW, kw = tap % s.KW;
    const int64_t len = s.C - ch < k0 + kc - k ? s.C - ch : k0 + kc - k;
    for (int64_t r = 0; r < DLC_MR; ++r) {
      const int64_t m = r0 + r, oh = oh0 + m / s.OW, ow = m % s.OW;
      const int64_t ih = oh * s.sh - s.pt + kh * s.dh, iw = ow * s.sw - s.pl + kw * s.dw;
      runs[n].row[r] = m >= rows || ih < 0 || ih >= s.H || iw < 0 || iw >= s.W
                           ? dlc_conv_zeros
                           : x + (ih * s.W + iw) * s.C + ch;
    }
    runs[n].len = len;
    k += len;
  }
  return n;
}
// Winograd F(RxR, 3x3) (Lavin and Gray, 2015) of a channels-last 3x3
// convolution of stride and dilation 1, rows [first, last) as
// dlc_conv_packed: each R x R block of outputs, on the image's grid of
// rows and columns that are multiples of R (so a pixel's bits do not depend
// on how rows are split), is A^T [U . V] A, where V = B^T d B transforms
// the (R + 2) x (R + 2) input window d and U the filter
// (dlc_pack_winograd_into): (R + 2)^2 products of (blocks x C) by (C x O)
// on the packed GEMM, 2.25x (R = 2) or 4x (R = 4) fewer multiplications
// than the direct product. The transforms add and subtract (and scale by
// powers of two), so the error against the f64 oracle is a few times the
// direct product's, as for oneDNN's Winograd. Blocks go through in chunks
// of block rows whose V and M (the products) take about 1 MiB each. False,
// having written nothing, where this process does not pack or the
// channels are not whole vectors.
template <int R, typename Shape>
__attribute__((target("avx2,fma"))) bool
dlc_conv_winograd(const Shape &s, const float *x, const float *w, const float *bias, float *y,
                  int64_t yBase, int64_t first, int64_t last, DlcConvEpilogue e) {
  constexpr int A = R + 2, AA = A * A;
  const int64_t C = s.C, O = s.O;
  if (C % 8 || O % 8)
    return false;
  const DlcPackedB *p = dlc_packed_weights_for(w, true, C, O, C * 9, -AA);
  if (!p)
    return false;
  const int64_t tw = (s.OW + R - 1) / R, widest = C > O ? C : O,
                matrix = C * p->panels * DLC_NR; // floats of one packed U
  int64_t chunk = (1 << 18) / (AA * tw * widest); // block rows
  chunk = chunk < 1 ? 1 : chunk;
  float *V = dlc_gemm_scratch(0, AA * chunk * tw * C), *M = dlc_gemm_scratch(1, AA * chunk * tw * O),
        *apack = dlc_packed_gemm_scratch(C);
  if (!V || !M || !apack)
    return false;
  const dlc_f8 zero = {};
  while (first < last) {
    const int64_t n = first / s.OH, oh0 = first % s.OH,
                  oh1 = s.OH < oh0 + (last - first) ? s.OH : oh0 + (last - first);
    const float *image = x + n * s.H * s.W * C;
    float *yi = y + n * s.OH * s.OW * O - yBase;
    const float *ri = e.residual ? e.residual + n * s.OH * s.OW * O : nullptr;
    const int64_t tEnd = (oh1 + R - 1) / R;
    for (int64_t t0 = oh0 / R; t0 < tEnd; t0 += chunk) {
      const int64_t t1 = tEnd < t0 + chunk ? tEnd : t0 + chunk, T = (t1 - t0) * tw;
      // V = B^T d B, each matrix T x C.
      for (int64_t tile = 0; tile < T; ++tile) {
        const int64_t ih0 = R * (t0 + tile / tw) - s.pt, iw0 = R * (tile % tw) - s.pl;
        const float *at[A][A];
        for (int i = 0; i < A; ++i)
          for (int j = 0; j < A; ++j) {
            const int64_t ih = ih0 + i, iw = iw0 + j;
            at[i][j] = ih < 0 || ih >= s.H || iw < 0 || iw >= s.W ? nullptr
                                                                 : image + (ih * s.W + iw) * C;
          }
        for (int64_t c = 0; c < C; c += 8) {
          dlc_f8 t[A][A], line[A], out[A];
          for (int j = 0; j < A; ++j) {
            for (int i = 0; i < A; ++i)
              line[i] = at[i][j] ? *(const dlc_f8u *)(at[i][j] + c) : zero;
            dlc_wino_in<R>(line, out);
            for (int i = 0; i < A; ++i)
              t[i][j] = out[i];
          }
          for (int i = 0; i < A; ++i) {
            dlc_wino_in<R>(t[i], out);
            for (int j = 0; j < A; ++j)
              *(dlc_f8u *)(V + ((A * i + j) * T + tile) * C + c) = out[j];
          }
        }
      }
      for (int m = 0; m < AA; ++m) {
        DlcPackedB u = *p;
        u.data = p->data + m * matrix;
        u.K = C;
        dlc_sgemm_packed(false, T, V + m * T * C, C, u, M + m * T * O, O, apack, 0, O);
      }
      // Y = A^T M A; + bias, + residual, ReLU.
      for (int64_t tile = 0; tile < T; ++tile) {
        const int64_t oh = R * (t0 + tile / tw), ow = R * (tile % tw);
        for (int64_t o = 0; o < O; o += 8) {
          dlc_f8 r[R][A], line[A], out[R];
          for (int j = 0; j < A; ++j) {
            for (int i = 0; i < A; ++i)
              line[i] = *(const dlc_f8u *)(M + ((A * i + j) * T + tile) * O + o);
            dlc_wino_out<R>(line, out);
            for (int i = 0; i < R; ++i)
              r[i][j] = out[i];
          }
          for (int i = 0; i < R; ++i) {
            if (oh + i < oh0 || oh + i >= oh1)
              continue;
            dlc_wino_out<R>(r[i], out);
            for (int j = 0; j < R && ow + j < s.OW; ++j) {
              dlc_f8 v = out[j];
              const int64_t at = ((oh + i) * s.OW + ow + j) * O + o;
              if (bias)
                v += *(const dlc_f8u *)(bias + o);
              if (ri)
                v += *(const dlc_f8u *)(ri + at);
              *(dlc_f8u *)(yi + at) = e.relu ? dlc_relu8(v) : v;
            }
          }
        }
      }
    }
    first += oh1 - oh0;
  }
  return true;
}
// Rows [first, last) ((image, output row) pairs) of a channels-last
// convolution of one group whose filters are a module weight, on its
// packed filters, with the epilogue `e` applied: y holds element `flat` of
// the result at y[flat - yBase]. Only the output channels of panels
// [panelFirst, panelLast) (16 channels a panel, the last one maybe part;
// all by default) where a kernel splits its calls over channels too
// (Contraction.cpp convChannelSlices): then the implicit GEMM, not Winograd.
// The loops are dlc_sgemm_packed's (column blocks of C in L2, the B panel
// in L1 while the row panels pass), with A read in place; the last
// columns, a part of a panel, go through a tile.
// False, having written nothing, where this process does not pack (or
// cannot): the caller runs oneDNN's primitive (DnnlConvPrelude.cpp, which
// defines DlcConvShape: a template, as a module without convolutions has
// no such type).
template <typename Shape>
__attribute__((target("avx2,fma"))) bool
dlc_conv_packed(const Shape &s, const float *x, const float *w, const float *bias, float *y,
                int64_t yBase, int64_t first, int64_t last, DlcConvEpilogue e = {},
                int64_t panelFirst = 0, int64_t panelLast = INT64_MAX) {
  const int64_t taps = s.KH * s.KW, K = s.C * taps, N = s.O;
  const bool allChannels = panelFirst == 0 && panelLast >= (N + DLC_NR - 1) / DLC_NR;
  if (allChannels &&
      (s.winograd == 4 ? dlc_conv_winograd<4>(s, x, w, bias, y, yBase, first, last, e)
                       : s.winograd && dlc_conv_winograd<2>(s, x, w, bias, y, yBase, first, last, e)))
    return true;
  const DlcPackedB *p = dlc_packed_weights_for(w, true, K, N, K, taps);
  if (!p)
    return false;
  panelLast = panelLast < p->panels ? panelLast : p->panels;
  // The runs of every k block, for up to MC rows: at most one run more
  // than the taps a block spans.
  constexpr int64_t MC = 144, MP = MC / DLC_MR;
  const int64_t blocks = (K + DLC_KC - 1) / DLC_KC,
                perBlock = (DLC_KC + s.C - 1) / s.C + 1;
  DlcConvRun *runs = (DlcConvRun *)dlc_gemm_scratch(
      3, (int64_t)(MP * blocks * perBlock * sizeof(DlcConvRun) / sizeof(float)) + 1);
  if (!runs)
    return false;
  int64_t count[(1 << 16) / DLC_KC + 1]; // runs of each k block (K < 2^16)
  if (blocks > (int64_t)(sizeof(count) / sizeof(count[0])))
    return false;
  alignas(32) float tile[DLC_MR * DLC_NR];
  while (first < last) {
    const int64_t n = first / s.OH, oh0 = first % s.OH,
                  oh1 = s.OH < oh0 + (last - first) ? s.OH : oh0 + (last - first);
    const float *image = x + n * s.H * s.W * s.C;
    float *c = y + (n * s.OH + oh0) * s.OW * N - yBase;
    const float *res = e.residual ? e.residual + (n * s.OH + oh0) * s.OW * N : nullptr;
    const int64_t rows = (oh1 - oh0) * s.OW;
    for (int64_t m0 = 0; m0 < rows; m0 += MC) {
      const int64_t mc = rows - m0 < MC ? rows - m0 : MC, mp = (mc + DLC_MR - 1) / DLC_MR;
      // runs[(b * MP + i) * perBlock + q]: k block b, row panel i, run q.
      for (int64_t b = 0; b < blocks; ++b) {
        const int64_t k0 = b * DLC_KC, kc = K - k0 < DLC_KC ? K - k0 : DLC_KC;
        for (int64_t i = 0; i < mp; ++i)
          count[b] = dlc_conv_runs(runs + (b * MP + i) * perBlock, s, image, oh0, rows,
                                   m0 + i * DLC_MR, k0, kc);
      }
      int64_t blockPanels = (1 << 15) / (mp * DLC_MR) / DLC_NR;
      blockPanels = blockPanels < 1 ? 1 : blockPanels;
      for (int64_t j0 = panelFirst; j0 < panelLast; j0 += blockPanels) {
        const int64_t j1 = j0 + blockPanels < panelLast ? j0 + blockPanels : panelLast;
        for (int64_t b = 0; b < blocks; ++b) {
          const int64_t k0 = b * DLC_KC, kc = K - k0 < DLC_KC ? K - k0 : DLC_KC;
          const bool add = b > 0, relu = e.relu && b + 1 == blocks;
          for (int64_t j = j0; j < j1; ++j) {
            const float *bp = p->data + k0 * p->panels * DLC_NR + j * kc * DLC_NR;
            const int64_t n0 = j * DLC_NR, nr = N - n0 < DLC_NR ? N - n0 : DLC_NR;
            const float *bj = add || !bias ? nullptr : bias + n0;
            const float *ahead = j + 2 < j1 ? bp + 2 * kc * DLC_NR : nullptr;
            for (int64_t i = 0; i < mp; ++i) {
              const int64_t r0 = m0 + i * DLC_MR, mr = rows - r0 < DLC_MR ? rows - r0 : DLC_MR;
              const DlcConvRun *ri = runs + (b * MP + i) * perBlock;
              float *cc = c + r0 * N + n0;
              const float *rr = add || !res ? nullptr : res + r0 * N + n0;
              dlc_prefetch_panel(ahead, kc, i, mp);
              if (nr == DLC_NR) {
                dlc_conv_6x16(ri, count[b], bp, cc, N, mr, add, bj, rr, relu);
                continue;
              }
              dlc_conv_6x16(ri, count[b], bp, tile, DLC_NR, mr, false, nullptr, nullptr, false);
              for (int64_t r = 0; r < mr; ++r)
                for (int64_t q = 0; q < nr; ++q) {
                  float v = tile[r * DLC_NR + q];
                  if (add)
                    v += cc[r * N + q];
                  else {
                    if (bj)
                      v += bj[q];
                    if (rr)
                      v += rr[r * N + q];
                  }
                  cc[r * N + q] = relu ? dlc_relu1(v) : v;
                }
            }
          }
        }
      }
    }
    first += oh1 - oh0;
  }
  return true;
}
} // namespace
)";
}
