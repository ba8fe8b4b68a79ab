//===- CpuPackedGemm.h - where the CPU runs dlc's packed GEMM -*- C++ -*-===//
//
// The rules that decide which products run on dlc's own GEMM over packed
// module weights (codegen/cpu/PackedGemmPrelude.cpp) rather than on oneDNN,
// shared by the code generator, which emits the calls, and by
// `dlc-cpu-layout`, which makes a convolution channels-last where the
// packed implicit GEMM runs it well even at the few output rows that would
// leave oneDNN's channels-last kernels unbalanced.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_PASSES_CPUPACKEDGEMM_H
#define DLC_PASSES_CPUPACKEDGEMM_H

#include <cstdint>

namespace dlc {

/// Where the packed GEMM runs: never, on AVX2 CPUs without AVX-512 (where
/// it was measured to win; the module decides at load time), or on every
/// AVX2 CPU and for every module weight (tests).
enum class CpuPackedGemm { Off = 0, Auto = 1, Always = 2 };

/// $DLC_CPU_PACKED_GEMM: 0 Off, 2 Always, else (or unset) Auto.
CpuPackedGemm cpuPackedGemmFromEnv();

/// Whether the CPU this process runs on would pack under `mode` (the
/// module's own load-time test: AVX2 and FMA, and without AVX-512 for
/// Auto): what a compile-time choice of layout can assume of the CPU the
/// module will most likely run on, the one compiling it.
bool hostCpuPacks(CpuPackedGemm mode);

/// Whether an f32 product by a module weight B (K x N, one matrix for
/// every batch) runs on the packed GEMM where the CPU packs: under Auto,
/// weights of 1 MiB or more (smaller ones stay in L2, where oneDNN's GEMV
/// and small GEMMs are faster: the MNIST MLP's 784 x 128 layer at batch 1,
/// 6 against 9 us). B alone decides, never the rows, so that a module
/// compiled for a range of a dimension computes the bits of one compiled
/// for its size (test/e2e/dynamic_dim.py).
bool packedProduct(int64_t K, int64_t N, CpuPackedGemm mode);

/// Whether an f32 convolution of module filters (O x C x KH x KW, `groups`
/// groups) in channels-last layout runs as an implicit GEMM on its packed
/// filters where the CPU packs, before oneDNN's primitive: one group and a
/// window wider than 1x1 (oneDNN's 1x1 kernels beat it), and under Auto
/// enough channels on both sides that reading the windows' runs of
/// channels in place costs little beside the product (ResNet-50's 3x3 convolutions of 64 to
/// 512 channels, AVX2: 0.69-0.94x oneDNN's time, 32 to 32 channels 1.10x,
/// its 7x7 stem on RGB 2.2x).
bool packedConvolution(int64_t C, int64_t O, int64_t KH, int64_t KW, int64_t groups,
                       CpuPackedGemm mode);

} // namespace dlc

#endif // DLC_PASSES_CPUPACKEDGEMM_H
