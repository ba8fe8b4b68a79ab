// RUN: dlc-opt %s --split-input-file --verify-diagnostics --dlc-rematerialize=budget=1024

// Recomputation works on ops, before dlc-fuse groups them into kernels.
func.func @already_fused(%x: tensor<4xf32>, %w: tensor<4xf32> {dlc.state = "w"}) -> (tensor<f32>, tensor<4xf32>)
    attributes {dlc.train_step = {kind = "sgd", lr = 1.0e-01 : f64}} {
  // expected-error @+1 {{'dlc.fusion' op dlc-rematerialize expects a graph before dlc-fuse}}
  %0 = dlc.fusion %x, %w {kind = "elementwise"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>):
    %1 = dlc.mul %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    dlc.yield %1 : tensor<4xf32>
  }
  %2 = dlc.reduce_sum %0 {axes = array<i64: 0>} : tensor<4xf32> -> tensor<f32>
  return %2, %w : tensor<f32>, tensor<4xf32>
}
