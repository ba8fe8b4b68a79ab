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
