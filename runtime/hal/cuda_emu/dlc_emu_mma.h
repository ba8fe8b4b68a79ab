//===- dlc_emu_mma.h - cuda-emu's tensor-core instructions ------*- C++ -*-===//
//
// The PTX instructions dlc's tensor-core kernels use (sm_80+), with the
// fragment layouts of the PTX ISA (warp-level matrix fragments of
// mma.m16n8k8 and mma.m16n8k16, and ldmatrix's): the prelude of generated code calls these
// under cuda-emu and the instructions themselves under NVRTC. Included by
// dlc_cuda_emu.h, after the block scheduler (warp barriers, the lanes'
// MmaFragments slots) and the 16-bit float types it needs.
//
//===----------------------------------------------------------------------===//
#pragma once
#ifndef DLC_CUDA_EMU_H
#error "cuda-emu: include dlc_cuda_emu.h, which includes this"
#endif

namespace dlc_emu {

/// cvt.rna.tf32.f32: f32 rounded to TF32 (10 mantissa bits), to nearest with
/// ties away from zero; NaN and infinities unchanged. The low 13 bits are 0.
inline unsigned roundToTf32(float x) {
  unsigned u;
  std::memcpy(&u, &x, 4);
  if ((u & 0x7fffffffu) >= 0x7f800000u)
    return u;
  return (u + 0x1000u) & 0xffffe000u;
}

/// The value of an operand element: a TF32 register (its low 13 bits
/// ignored, as the tensor core reads only TF32's fields), or one half of a
/// register of two bf16 or f16 (the lower half holds the lower index).
enum class MmaType { Tf32, Bf16, F16 };
inline float mmaElement(MmaType type, unsigned reg, int half) {
  if (type == MmaType::Tf32)
    return __uint_as_float(reg & 0xffffe000u);
  uint16_t bits = uint16_t(half ? reg >> 16 : reg & 0xffffu);
  if (type == MmaType::Bf16) {
    __nv_bfloat16 b;
    b.bits = bits;
    return float(b);
  }
  __half h;
  h.bits = bits;
  return float(h);
}

/// mma.sync.aligned.m16n8k{8,16}.row.col.f32.{tf32,bf16,f16}.f32, D = A·B + C
/// with D in place of C: every lane of the warp publishes its fragments, the
/// warp synchronises, each lane computes its four elements of D from the
/// whole of A (16 x K, row-major) and B (K x 8, column-major). Products and
/// sums in float, k in order (the hardware's summation order and internal
/// precision are unspecified; the tolerances of dlc's tests allow for it).
inline void mmaSync(MmaType type, float *d, const unsigned *a, const unsigned *b) {
  BlockState &s = state();
  int self = linearThread(), base = self - self % kWarpSize;
  MmaFragments &mine = s.mmaFragments[size_t(self)];
  std::memcpy(mine.a, a, sizeof mine.a);
  std::memcpy(mine.b, b, sizeof mine.b);
  std::memcpy(mine.c, d, sizeof mine.c);
  warpBarrier(kFullMask);
  const int K = type == MmaType::Tf32 ? 8 : 16;
  auto A = [&](int row, int k) {
    if (type == MmaType::Tf32) // a0 (g, t), a1 (g+8, t), a2 (g, t+4), a3 (g+8, t+4)
      return mmaElement(type,
                        s.mmaFragments[size_t(base + (row % 8) * 4 + k % 4)]
                            .a[(row >= 8 ? 1 : 0) + (k >= 4 ? 2 : 0)],
                        0);
    // a0 (g, 2t..2t+1), a1 (g+8, 2t..), a2 (g, 2t+8..), a3 (g+8, 2t+8..)
    return mmaElement(type,
                      s.mmaFragments[size_t(base + (row % 8) * 4 + (k % 8) / 2)]
                          .a[(row >= 8 ? 1 : 0) + (k >= 8 ? 2 : 0)],
                      k % 2);
  };
  auto B = [&](int k, int col) {
    if (type == MmaType::Tf32) // b0 (t, g), b1 (t+4, g)
      return mmaElement(type, s.mmaFragments[size_t(base + col * 4 + k % 4)].b[k >= 4 ? 1 : 0],
                        0);
    // b0 (2t..2t+1, g), b1 (2t+8.., g)
    return mmaElement(type,
                      s.mmaFragments[size_t(base + col * 4 + (k % 8) / 2)].b[k >= 8 ? 1 : 0],
                      k % 2);
  };
  // This lane's D: d0 (g, 2t), d1 (g, 2t+1), d2 (g+8, 2t), d3 (g+8, 2t+1).
  int g = (self % kWarpSize) / 4, t = (self % kWarpSize) % 4;
  for (int i = 0; i < 4; ++i) {
    int row = g + (i >= 2 ? 8 : 0), col = 2 * t + (i & 1);
    float acc = mine.c[i];
    for (int k = 0; k < K; ++k)
      acc = std::fma(A(row, k), B(k, col), acc);
    d[i] = acc;
  }
  warpBarrier(kFullMask);
}

/// ldmatrix.sync.aligned.m8n8.x{count}[.trans].shared.b16: lanes 8q..8q+7
/// give the addresses of matrix q's eight rows of 16 bytes (eight 16-bit
/// elements); lane l receives in r[q] the elements (l/4, 2(l%4)) and
/// (l/4, 2(l%4)+1) of matrix q, or with `trans` the elements (2(l%4), l/4)
/// and (2(l%4)+1, l/4), the lower one in the lower half.
inline void ldmatrix(int count, bool trans, unsigned *r, const void *rowAddress) {
  BlockState &s = state();
  int self = linearThread(), base = self - self % kWarpSize, l = self % kWarpSize;
  s.mmaFragments[size_t(self)].row = static_cast<const unsigned char *>(rowAddress);
  warpBarrier(kFullMask);
  auto element = [&](int q, int row, int col) {
    uint16_t v;
    std::memcpy(&v, s.mmaFragments[size_t(base + q * 8 + row)].row + 2 * col, 2);
    return unsigned(v);
  };
  for (int q = 0; q < count; ++q) {
    int g = l / 4, t = l % 4;
    r[q] = trans ? element(q, 2 * t, g) | element(q, 2 * t + 1, g) << 16
                 : element(q, g, 2 * t) | element(q, g, 2 * t + 1) << 16;
  }
  warpBarrier(kFullMask);
}

} // namespace dlc_emu
