// RUN: dlc-opt %s --split-input-file | dlc-opt --split-input-file | FileCheck %s

// The typed kernel schedule (#dlc.schedule) prints and parses back; an
// optional field at its default (no tiles, no staging) is left out.

// CHECK-LABEL: func.func @matmul_schedule
//       CHECK:   #dlc.schedule<arch = "sm_90", strategy = matmul, implementation = generated, block = [256, 1, 1], grid = [24, 4, 1], vector = 1, smem = 8192, registers = 110, blocks_per_sm = 2, flops = 100, bytes = 200, bound = "compute", estimate_ns = 3, reason = "tiled GEMM", tile = [128, 128, 8], thread_tile = [8, 8], staging = "shared">
func.func @matmul_schedule(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %0 = dlc.matmul %a, %a {dlc.schedule = #dlc.schedule<arch = "sm_90", strategy = matmul, implementation = generated, block = [256, 1, 1], grid = [24, 4, 1], vector = 1, smem = 8192, registers = 110, blocks_per_sm = 2, flops = 100, bytes = 200, bound = "compute", estimate_ns = 3, reason = "tiled GEMM", tile = [128, 128, 8], thread_tile = [8, 8], staging = "shared">} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

// CHECK-LABEL: func.func @elementwise_schedule
//       CHECK:   #dlc.schedule<arch = "sm_80", strategy = elementwise, implementation = generated, block = [256, 1, 1], grid = [1, 1, 1], vector = 4, smem = 0, registers = 32, blocks_per_sm = 8, flops = 4, bytes = 32, bound = "memory", estimate_ns = 1, reason = "">}
func.func @elementwise_schedule(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = dlc.tanh %a {dlc.schedule = #dlc.schedule<arch = "sm_80", strategy = elementwise, implementation = generated, block = [256, 1, 1], grid = [1, 1, 1], vector = 4, smem = 0, registers = 32, blocks_per_sm = 8, flops = 4, bytes = 32, bound = "memory", estimate_ns = 1, reason = "">} : tensor<4xf32>
  return %0 : tensor<4xf32>
}
