//===- CpuPackedGemm.cpp - where the CPU runs dlc's packed GEMM ----------===//

#include "passes/CpuPackedGemm.h"

#include <cstdlib>
#include <cstring>

namespace dlc {

CpuPackedGemm cpuPackedGemmFromEnv() {
  const char *packed = std::getenv("DLC_CPU_PACKED_GEMM");
  if (!packed)
    return CpuPackedGemm::Auto;
  return std::strcmp(packed, "0") == 0   ? CpuPackedGemm::Off
         : std::strcmp(packed, "2") == 0 ? CpuPackedGemm::Always
                                         : CpuPackedGemm::Auto;
}

bool hostCpuPacks(CpuPackedGemm mode) {
#if defined(__x86_64__) || defined(__i386__)
  if (mode == CpuPackedGemm::Off || !__builtin_cpu_supports("avx2") ||
      !__builtin_cpu_supports("fma"))
    return false;
  return mode == CpuPackedGemm::Always || !__builtin_cpu_supports("avx512f");
#else
  (void)mode;
  return false;
#endif
}

bool packedProduct(int64_t K, int64_t N, CpuPackedGemm mode) {
  return mode == CpuPackedGemm::Always || (mode == CpuPackedGemm::Auto && K * N >= (1 << 18));
}

bool packedConvolution(int64_t C, int64_t O, int64_t KH, int64_t KW, int64_t groups,
                       CpuPackedGemm mode) {
  if (mode == CpuPackedGemm::Off || groups != 1 || KH * KW < 2)
    return false;
  return mode == CpuPackedGemm::Always || (C >= 32 && C * O >= 2048);
}

} // namespace dlc
