// RUN: dlc-opt %s --split-input-file --verify-diagnostics

// What the CUDA code generator relies on is checked when a schedule is
// built or parsed: three launch dimensions of at least 1, and a matmul's
// tiles.

func.func @matmul_schedule_without_tiles(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{schedule tile needs 3 values of at least 1}}
  %0 = dlc.matmul %a, %a {dlc.schedule = #dlc.schedule<arch = "sm_90", strategy = matmul, implementation = generated, block = [256, 1, 1], grid = [1, 1, 1], vector = 1, smem = 0, registers = 32, blocks_per_sm = 1, flops = 1, bytes = 1, bound = "memory", estimate_ns = 1, reason = "">} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @block_with_two_dimensions(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{schedule block needs 3 values of at least 1}}
  %0 = dlc.tanh %a {dlc.schedule = #dlc.schedule<arch = "sm_90", strategy = elementwise, implementation = generated, block = [256, 1], grid = [1, 1, 1], vector = 1, smem = 0, registers = 32, blocks_per_sm = 1, flops = 1, bytes = 1, bound = "memory", estimate_ns = 1, reason = "">} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @grid_of_zero_blocks(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{schedule grid needs 3 values of at least 1}}
  %0 = dlc.tanh %a {dlc.schedule = #dlc.schedule<arch = "sm_90", strategy = elementwise, implementation = generated, block = [256, 1, 1], grid = [0, 1, 1], vector = 1, smem = 0, registers = 32, blocks_per_sm = 1, flops = 1, bytes = 1, bound = "memory", estimate_ns = 1, reason = "">} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @unknown_architecture(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{schedule arch 'gfx90a' is not sm_XY}}
  %0 = dlc.tanh %a {dlc.schedule = #dlc.schedule<arch = "gfx90a", strategy = elementwise, implementation = generated, block = [256, 1, 1], grid = [1, 1, 1], vector = 1, smem = 0, registers = 32, blocks_per_sm = 1, flops = 1, bytes = 1, bound = "memory", estimate_ns = 1, reason = "">} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tensor-core schedules: a known instruction, a warp tile of whole
// instructions dividing the block tile, 32 threads per warp tile.
func.func @unknown_mma(%a: tensor<32x32xbf16>) -> tensor<32x32xbf16> {
  // expected-error @+1 {{schedule mma 'm16n8k8.bf16' is not m16n8k8.tf32, m16n8k16.bf16 or m16n8k16.f16}}
  %0 = dlc.matmul %a, %a {dlc.schedule = #dlc.schedule<arch = "sm_90", strategy = matmul, implementation = generated, block = [128, 1, 1], grid = [1, 1, 1], vector = 1, smem = 0, registers = 32, blocks_per_sm = 1, flops = 1, bytes = 1, bound = "memory", estimate_ns = 1, reason = "", tile = [32, 32, 32], mma = "m16n8k8.bf16", warp_tile = [16, 16]>} : (tensor<32x32xbf16>, tensor<32x32xbf16>) -> tensor<32x32xbf16>
  return %0 : tensor<32x32xbf16>
}

// -----

func.func @warp_tile_not_whole_instructions(%a: tensor<32x32xbf16>) -> tensor<32x32xbf16> {
  // expected-error @+1 {{schedule warp_tile must be multiples of 16 x 8 dividing the tile, and the tile's depth a multiple of 16}}
  %0 = dlc.matmul %a, %a {dlc.schedule = #dlc.schedule<arch = "sm_90", strategy = matmul, implementation = generated, block = [128, 1, 1], grid = [1, 1, 1], vector = 1, smem = 0, registers = 32, blocks_per_sm = 1, flops = 1, bytes = 1, bound = "memory", estimate_ns = 1, reason = "", tile = [32, 32, 32], mma = "m16n8k16.bf16", warp_tile = [8, 16]>} : (tensor<32x32xbf16>, tensor<32x32xbf16>) -> tensor<32x32xbf16>
  return %0 : tensor<32x32xbf16>
}

// -----

func.func @mma_threads_not_warps(%a: tensor<32x32xbf16>) -> tensor<32x32xbf16> {
  // expected-error @+1 {{schedule block must be 32 threads per warp tile}}
  %0 = dlc.matmul %a, %a {dlc.schedule = #dlc.schedule<arch = "sm_90", strategy = matmul, implementation = generated, block = [256, 1, 1], grid = [1, 1, 1], vector = 1, smem = 0, registers = 32, blocks_per_sm = 1, flops = 1, bytes = 1, bound = "memory", estimate_ns = 1, reason = "", tile = [32, 32, 32], mma = "m16n8k16.bf16", warp_tile = [16, 16]>} : (tensor<32x32xbf16>, tensor<32x32xbf16>) -> tensor<32x32xbf16>
  return %0 : tensor<32x32xbf16>
}
