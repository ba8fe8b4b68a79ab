// RUN: dlc-opt %s --split-input-file --verify-diagnostics --dlc-differentiate

// A gradient that reaches an op without a derivative is an error at that op.
func.func @through_a_fusion_region(%x: tensor<4xf32>) -> tensor<f32>
    attributes {dlc.optimizer = {kind = "sgd", lr = 1.0e-01 : f64}} {
  %w = dlc.param "w" {init = {kind = "ones"}} : tensor<4xf32>
  // expected-error @+1 {{'dlc.fusion' op has no derivative, but the loss depends on its result}}
  %0 = dlc.fusion %x, %w {kind = "elementwise"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>):
    %1 = dlc.mul %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    dlc.yield %1 : tensor<4xf32>
  }
  %2 = dlc.reduce_sum %0 {axes = array<i64: 0>} : tensor<4xf32> -> tensor<f32>
  return %2 : tensor<f32>
}

// -----

// expected-error @+1 {{dlc-differentiate: a loss graph returns one scalar float (the loss)}}
func.func @loss_is_not_a_scalar(%x: tensor<4xf32>) -> tensor<4xf32>
    attributes {dlc.optimizer = {kind = "sgd", lr = 1.0e-01 : f64}} {
  return %x : tensor<4xf32>
}

// -----

// expected-error @+1 {{unknown optimizer 'rmsprop' (optimizers: adam, adamw, sgd)}}
func.func @unknown_optimizer(%x: tensor<f32>) -> tensor<f32>
    attributes {dlc.optimizer = {kind = "rmsprop"}} {
  return %x : tensor<f32>
}
