/*===- dlc_emu_launch.h - how cuda-emu launches a kernel -----------*- C -*-===*
 *
 * The one definition of what the runtime's cuda-emu device (CudaEmuDevice)
 * passes to a kernel's launch stub and what the stub (dlc_cuda_emu.h's
 * DLC_EMU_LAUNCH_STUB, compiled into the kernel's shared object) reads: a
 * C struct, so that both sides of the dlopen boundary share one layout.
 * codegen/cuda/EmuCompile embeds this file next to dlc_cuda_emu.h.
 *
 *===----------------------------------------------------------------------===*/

#ifndef DLC_EMU_LAUNCH_H
#define DLC_EMU_LAUNCH_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dlc_emu_launch_t {
  unsigned grid[3];
  unsigned block[3];
  uint64_t dynamic_shared_bytes;
  /* OS threads to spread blocks over (0: hardware concurrency). */
  unsigned threads;
  /* Where a failed launch writes a NUL-terminated message (may be null);
     the first byte stays 0 on success. */
  char *error;
  uint64_t error_size;
} dlc_emu_launch_t;

/* A kernel's launch stub, `dlc_emu_launch_<entry>`: args[i] points at the
   value of the kernel's i-th parameter (as cuLaunchKernel's kernelParams). */
typedef void (*dlc_emu_launch_stub_t)(const dlc_emu_launch_t *launch, void **args);

#ifdef __cplusplus
}
#endif

#endif /* DLC_EMU_LAUNCH_H */
