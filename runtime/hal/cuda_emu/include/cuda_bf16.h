// cuda-emu stand-in for <cuda_bf16.h>: dlc_cuda_emu.h (included first, with
// -include) defines what kernels use from it.
#pragma once
#ifndef DLC_CUDA_EMU_H
#error "cuda-emu: compile with -include dlc_cuda_emu.h"
#endif
