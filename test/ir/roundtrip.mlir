func.func @mlp(%x: tensor<4x784xf32>) -> tensor<4x10xf32> {
  %w1 = dlc.param "w1" {init = {kind = "he", seed = 1 : i64}} : tensor<784x128xf32>
  %b1 = dlc.param "b1" {init = {kind = "zeros"}} : tensor<128xf32>
  %0 = dlc.matmul %x, %w1 : (tensor<4x784xf32>, tensor<784x128xf32>) -> tensor<4x128xf32>
  %1 = dlc.add %0, %b1 : (tensor<4x128xf32>, tensor<128xf32>) -> tensor<4x128xf32>
  %2 = dlc.relu %1 : tensor<4x128xf32>
  %3 = dlc.gelu %2 {approximation = #dlc<approximation tanh>} : tensor<4x128xf32>
  %w2 = dlc.param "w2" {init = {kind = "he", seed = 2 : i64}} : tensor<128x10xf32>
  %4 = dlc.matmul %3, %w2 : (tensor<4x128xf32>, tensor<128x10xf32>) -> tensor<4x10xf32>
  %c = dlc.constant dense<0.5> : tensor<f32>
  %5 = dlc.mul %4, %c : (tensor<4x10xf32>, tensor<f32>) -> tensor<4x10xf32>
  %r = dlc.reduce_sum %5 {axes = array<i64: -1>, keepdims = true} : tensor<4x10xf32> -> tensor<4x1xf32>
  %i = dlc.iota 0 : tensor<4x4xi32>
  %m = dlc.compare ge, %i, %i : (tensor<4x4xi32>, tensor<4x4xi32>) -> tensor<4x4xi1>
  return %5 : tensor<4x10xf32>
}
// -----
func.func @bad(%x: tensor<4x784xf32>, %w: tensor<100x10xf32>) -> tensor<4x10xf32> {
  // expected-error @+1 {{'dlc.matmul' op contracting dimensions differ: 784 vs 100}}
  %0 = dlc.matmul %x, %w : (tensor<4x784xf32>, tensor<100x10xf32>) -> tensor<4x10xf32>
  return %0 : tensor<4x10xf32>
}
