// RUN: dlc-opt %s --split-input-file --dlc-differentiate --canonicalize | FileCheck %s
// RUN: dlc-opt %s --split-input-file --dlc-differentiate=gradients-only --canonicalize | FileCheck %s --check-prefix=GRAD

// A linear layer with an MSE loss and SGD: the parameter becomes a state
// argument and result; its gradient is xᵀ·dy as a matmul with
// transpose_a (no transpose op); the update is p - lr·g.
// CHECK-LABEL: func.func @linear_train
//  CHECK-SAME:   %[[X:[^:]+]]: tensor<4x3xf32>, %{{[^:]+}}: tensor<4x2xf32>,
//  CHECK-SAME:   %[[LR:[^:]+]]: tensor<f32> {dlc.name = "lr"},
//  CHECK-SAME:   %[[W:[^:]+]]: tensor<3x2xf32> {dlc.init = {kind = "he", seed = 1 : i64}, dlc.state = "w"},
//  CHECK-SAME:   %[[STEP:[^:]+]]: tensor<i64> {dlc.init = {kind = "zeros"}, dlc.state = "step"})
//  CHECK-SAME:   -> (tensor<f32> {dlc.name = "loss"}, tensor<3x2xf32> {dlc.state = "w"}, tensor<i64> {dlc.state = "step"})
//   CHECK-NOT:   dlc.param
//   CHECK-NOT:   dlc.transpose
//       CHECK:   %[[DW:.+]] = dlc.matmul %[[X]], %{{.+}} {transpose_a = true}
//       CHECK:   %[[STEP1:.+]] = dlc.add %[[STEP]]
//       CHECK:   %[[U:.+]] = dlc.mul %[[LR]], %[[DW]]
//       CHECK:   %[[W1:.+]] = dlc.sub %[[W]], %[[U]]
//       CHECK:   return %{{.+}}, %[[W1]], %[[STEP1]]
// GRAD-LABEL: func.func @linear_train
//  GRAD-SAME:   -> (tensor<f32> {dlc.name = "loss"}, tensor<3x2xf32> {dlc.name = "grad.w"})
//       GRAD:   dlc.param "w"
//       GRAD:   %[[DW:.+]] = dlc.matmul %{{.+}}, %{{.+}} {transpose_a = true}
//       GRAD:   return %{{.+}}, %[[DW]]
func.func @linear_train(%x: tensor<4x3xf32>, %t: tensor<4x2xf32>) -> tensor<f32>
    attributes {dlc.optimizer = {kind = "sgd", lr = 1.0e-01 : f64}} {
  %w = dlc.param "w" {init = {kind = "he", seed = 1 : i64}} : tensor<3x2xf32>
  %y = dlc.matmul %x, %w : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
  %l = dlc.mse %y, %t : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Adam keeps two moments per parameter, named after it, in that order
// after the parameters; a function without dlc.optimizer is left alone.
// CHECK-LABEL: func.func @two_params_train
//  CHECK-SAME:   {dlc.init = {kind = "zeros"}, dlc.state = "a.m"}
//  CHECK-SAME:   {dlc.init = {kind = "zeros"}, dlc.state = "a.v"}
//  CHECK-SAME:   {dlc.init = {kind = "zeros"}, dlc.state = "b.m"}
//  CHECK-SAME:   {dlc.init = {kind = "zeros"}, dlc.state = "b.v"}
//       CHECK:   dlc.sqrt
// CHECK-LABEL: func.func @inference
//  CHECK-NEXT:   dlc.param "a"
func.func @two_params_train(%x: tensor<4xf32>) -> tensor<f32>
    attributes {dlc.optimizer = {kind = "adam", lr = 1.0e-03 : f64}} {
  %a = dlc.param "a" {init = {kind = "ones"}} : tensor<4xf32>
  %b = dlc.param "b" {init = {kind = "ones"}} : tensor<4xf32>
  %0 = dlc.mul %x, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = dlc.add %0, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %2 = dlc.reduce_sum %1 {axes = array<i64: 0>} : tensor<4xf32> -> tensor<f32>
  return %2 : tensor<f32>
}
func.func @inference(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = dlc.param "a" {init = {kind = "ones"}} : tensor<4xf32>
  %0 = dlc.mul %x, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// f16 training (the module's dlc.precision): dynamic loss scaling. The
// backward pass is seeded with the loss scale (state, 2^16 to start), the
// gradient unscaled, and every state's new value kept unless the gradients
// are finite; the scale halves on an overflow and doubles after 2000 clean
// steps.
// CHECK-LABEL: func.func @scaled_train
//  CHECK-SAME:   %[[STEP:[^:]+]]: tensor<i64> {dlc.init = {kind = "zeros"}, dlc.state = "step"},
//  CHECK-SAME:   %[[S:[^:]+]]: tensor<f32> {dlc.init = {kind = "data", value = dense<6.553600e+04> : tensor<f32>}, dlc.state = "loss_scale"},
//  CHECK-SAME:   %[[C:[^:]+]]: tensor<i64> {dlc.init = {kind = "zeros"}, dlc.state = "loss_scale.clean_steps"})
//  CHECK-SAME:   -> (tensor<f32> {dlc.name = "loss"}, tensor<3x2xf32> {dlc.state = "w"}, tensor<i64> {dlc.state = "step"}, tensor<f32> {dlc.state = "loss_scale"}, tensor<i64> {dlc.state = "loss_scale.clean_steps"})
//       CHECK:   %[[FINITE:.+]] = dlc.compare {{ *}}eq
//       CHECK:   %[[W1:.+]] = dlc.select %[[FINITE]], %{{.+}}, %arg3
//       CHECK:   %[[STEP1:.+]] = dlc.select %[[FINITE]], %{{.+}}, %[[STEP]]
//       CHECK:   %[[GROW:.+]] = dlc.compare {{ *}}ge
//       CHECK:   %[[S1:.+]] = dlc.select %[[FINITE]]
//       CHECK:   %[[C1:.+]] = dlc.select %[[GROW]]
//       CHECK:   return %{{.+}}, %[[W1]], %[[STEP1]], %[[S1]], %[[C1]]
module attributes {dlc.precision = "f16"} {
func.func @scaled_train(%x: tensor<4x3xf32>, %t: tensor<4x2xf32>) -> tensor<f32>
    attributes {dlc.optimizer = {kind = "sgd", lr = 1.0e-01 : f64}} {
  %w = dlc.param "w" {init = {kind = "he", seed = 1 : i64}} : tensor<3x2xf32>
  %y = dlc.matmul %x, %w : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
  %l = dlc.mse %y, %t : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
}
