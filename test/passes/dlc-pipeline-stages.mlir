// RUN: dlc-opt %s --split-input-file --dlc-pipeline-stages=stages=2 --dlc-differentiate --dlc-pipeline-stages=stages=2 | FileCheck %s
// RUN: dlc-opt %s --split-input-file --verify-diagnostics --dlc-pipeline-stages=stages=5

// Two layers cut into two stages: the first matmul and its ReLU weigh less
// than the second matmul (whose weight is 64 times larger, and whose
// update reads and writes it), so each layer is a stage. Each op's backward
// runs in its forward op's stage: the ReLU's mask and dW1 in stage 0, dW2
// and the loss's gradient in stage 1; the update of a parameter in the
// stage of its gradient; the step counter (which reads no staged value) in
// every stage (-1).
// CHECK-LABEL: func.func @two_layers_train
// CHECK: dlc.matmul %arg0, %arg3 {dlc.stage = 0 : i64}
// CHECK: dlc.relu %{{.*}} {dlc.stage = 0 : i64}
// CHECK: dlc.matmul %{{.*}}, %arg4 {dlc.stage = 1 : i64}
// CHECK: dlc.mse %{{.*}}, %arg1 {dlc.stage = 1 : i64}
// CHECK: dlc.matmul %{{.*}}, %{{.*}} {dlc.stage = 1 : i64, transpose_a = true} : (tensor<8x16xf32>, tensor<8x256xf32>) -> tensor<16x256xf32>
// CHECK: dlc.compare {{ *}}gt, %{{.*}} {dlc.stage = 0 : i64}
// CHECK: dlc.matmul %arg0, %{{.*}} {dlc.stage = 0 : i64, transpose_a = true} : (tensor<8x4xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
// CHECK: dlc.add %arg5, %{{.*}} {dlc.stage = -1 : i64} : (tensor<i64>, tensor<i64>)
// CHECK: %[[U1:.*]] = dlc.sub %arg3, %{{.*}} {dlc.stage = 0 : i64} : (tensor<4x16xf32>
// CHECK: %[[U2:.*]] = dlc.sub %arg4, %{{.*}} {dlc.stage = 1 : i64} : (tensor<16x256xf32>
// expected-error @+1 {{'two_layers_train' has 4 ops: too few to cut into 5 pipeline stages}}
func.func @two_layers_train(%x: tensor<8x4xf32>, %t: tensor<8x256xf32>) -> tensor<f32>
    attributes {dlc.optimizer = {kind = "sgd", lr = 1.0e-01 : f64}} {
  %w1 = dlc.param "w1" {init = {kind = "ones"}} : tensor<4x16xf32>
  %w2 = dlc.param "w2" {init = {kind = "ones"}} : tensor<16x256xf32>
  %h = dlc.matmul %x, %w1 : (tensor<8x4xf32>, tensor<4x16xf32>) -> tensor<8x16xf32>
  %r = dlc.relu %h : tensor<8x16xf32>
  %y = dlc.matmul %r, %w2 : (tensor<8x16xf32>, tensor<16x256xf32>) -> tensor<8x256xf32>
  %l = dlc.mse %y, %t : (tensor<8x256xf32>, tensor<8x256xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Marks (from `@stage` lines) are kept; an op without one is in the stage
// of the op before it.
// CHECK-LABEL: func.func @marked_train
// CHECK: dlc.matmul %arg0, %arg3 {dlc.stage = 0 : i64}
// CHECK: dlc.relu %{{.*}} {dlc.stage = 0 : i64}
// CHECK: dlc.matmul %{{.*}}, %arg4 {dlc.stage = 0 : i64}
// CHECK: dlc.mse %{{.*}}, %arg1 {dlc.stage = 1 : i64}
// expected-error @+1 {{the model's @stage lines make 2 stages, but the pipeline has 5}}
func.func @marked_train(%x: tensor<8x4xf32>, %t: tensor<8x2xf32>) -> tensor<f32>
    attributes {dlc.optimizer = {kind = "sgd", lr = 1.0e-01 : f64}} {
  %w1 = dlc.param "w1" {init = {kind = "ones"}} : tensor<4x16xf32>
  %w2 = dlc.param "w2" {init = {kind = "ones"}} : tensor<16x2xf32>
  %h = dlc.matmul %x, %w1 : (tensor<8x4xf32>, tensor<4x16xf32>) -> tensor<8x16xf32>
  %r = dlc.relu %h : tensor<8x16xf32>
  %y = dlc.matmul %r, %w2 : (tensor<8x16xf32>, tensor<16x2xf32>) -> tensor<8x2xf32>
  %l = dlc.mse %y, %t {dlc.stage = 1 : i64} : (tensor<8x2xf32>, tensor<8x2xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
