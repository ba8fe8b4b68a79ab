// RUN: dlc-opt %s --split-input-file --dlc-fuse | FileCheck %s

// matmul and conv2d with their epilogues ("contraction", "convolution"),
// pooling, and the attention pattern ("attention"). An expensive anchor is
// never duplicated and never shares a kernel with another, except the two
// matmuls of attention and a convolution with the pooling of its activations.

// Bias, activation, scale and residual add: one kernel.

// CHECK-LABEL: func.func @matmul_epilogue_is_one_kernel
//  CHECK-SAME:   (%[[X:[^:]+]]: tensor<8x16xf32>, %[[W:[^:]+]]: tensor<16x32xf32>, %[[B:[^:]+]]: tensor<32xf32>, %[[R:[^:]+]]: tensor<8x32xf32>)
//       CHECK:   %[[S:.+]] = dlc.constant
//       CHECK:   dlc.fusion %[[X]], %[[W]], %[[B]], %[[S]], %[[R]] {kind = "contraction"}
//  CHECK-NEXT:   ^bb0
//  CHECK-NEXT:     dlc.matmul
//  CHECK-NEXT:     dlc.add
//  CHECK-NEXT:     dlc.gelu
//  CHECK-NEXT:     dlc.mul
//  CHECK-NEXT:     dlc.add
//  CHECK-NEXT:     dlc.yield
//   CHECK-NOT:   dlc.fusion
func.func @matmul_epilogue_is_one_kernel(%x: tensor<8x16xf32>, %w: tensor<16x32xf32>, %b: tensor<32xf32>, %r: tensor<8x32xf32>) -> tensor<8x32xf32> {
  %s = dlc.constant dense<5.0e-01> : tensor<f32>
  %0 = dlc.matmul %x, %w : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %1 = dlc.add %0, %b : (tensor<8x32xf32>, tensor<32xf32>) -> tensor<8x32xf32>
  %2 = dlc.gelu %1 {approximation = #dlc<approximation tanh>} : tensor<8x32xf32>
  %3 = dlc.mul %2, %s : (tensor<8x32xf32>, tensor<f32>) -> tensor<8x32xf32>
  %4 = dlc.add %r, %3 : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
  return %4 : tensor<8x32xf32>
}

// -----

// CHECK-LABEL: func.func @two_matmuls_never_share_a_kernel
//       CHECK:   %[[H:.+]] = dlc.fusion %{{.+}}, %{{.+}} {kind = "contraction"}
//  CHECK-NEXT:   ^bb0
//  CHECK-NEXT:     dlc.matmul
//  CHECK-NEXT:     dlc.relu
//  CHECK-NEXT:     dlc.yield
//       CHECK:   dlc.fusion %[[H]], %{{.+}} {kind = "contraction"}
//  CHECK-NEXT:   ^bb0
//  CHECK-NEXT:     dlc.matmul
//  CHECK-NEXT:     dlc.yield
func.func @two_matmuls_never_share_a_kernel(%x: tensor<8x16xf32>, %w1: tensor<16x16xf32>, %w2: tensor<16x4xf32>) -> tensor<8x4xf32> {
  %0 = dlc.matmul %x, %w1 : (tensor<8x16xf32>, tensor<16x16xf32>) -> tensor<8x16xf32>
  %1 = dlc.relu %0 : tensor<8x16xf32>
  %2 = dlc.matmul %1, %w2 : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  return %2 : tensor<8x4xf32>
}

// -----

// Each element of x is read by 4 output columns: a tanh prologue would be
// computed 4 times. It is a kernel of its own.

// CHECK-LABEL: func.func @elementwise_prologue_stays_out_of_a_matmul
//       CHECK:   %[[T:.+]] = dlc.fusion %{{.+}} : (tensor<8x16xf32>) -> tensor<8x16xf32>
//  CHECK-NEXT:   ^bb0
//  CHECK-NEXT:     dlc.tanh
//  CHECK-NEXT:     dlc.yield
//       CHECK:   dlc.fusion %[[T]], %{{.+}} {kind = "contraction"}
//  CHECK-NEXT:   ^bb0
//  CHECK-NEXT:     dlc.matmul
//  CHECK-NEXT:     dlc.yield
func.func @elementwise_prologue_stays_out_of_a_matmul(%x: tensor<8x16xf32>, %w: tensor<16x4xf32>) -> tensor<8x4xf32> {
  %0 = dlc.tanh %x : tensor<8x16xf32>
  %1 = dlc.matmul %0, %w : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  return %1 : tensor<8x4xf32>
}

// -----

// A transposed weight is read in place: the transpose is a load remap.

// CHECK-LABEL: func.func @transposed_operand_is_a_load_remap
//  CHECK-SAME:   (%[[X:[^:]+]]: tensor<8x16xf32>, %[[W:[^:]+]]: tensor<4x16xf32>)
//       CHECK:   dlc.fusion %[[W]], %[[X]] {kind = "contraction"}
//  CHECK-NEXT:   ^bb0
//  CHECK-NEXT:     dlc.transpose
//  CHECK-NEXT:     dlc.matmul
//  CHECK-NEXT:     dlc.yield
//   CHECK-NOT:   dlc.fusion
func.func @transposed_operand_is_a_load_remap(%x: tensor<8x16xf32>, %w: tensor<4x16xf32>) -> tensor<8x4xf32> {
  %t = dlc.transpose %w {perm = array<i64: 1, 0>} : tensor<4x16xf32> -> tensor<16x4xf32>
  %0 = dlc.matmul %x, %t : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

// The residual add reads both matmuls. In the first one's kernel it would
// close a cycle (first → second → add), so it joins the second, and the
// first kernel also returns the matmul result it needs.

// CHECK-LABEL: func.func @residual_joins_the_matmul_that_closes_no_cycle
//       CHECK:   %[[A:.+]]:2 = dlc.fusion %{{.+}}, %{{.+}} {kind = "contraction"}
//  CHECK-NEXT:   ^bb0
//  CHECK-NEXT:     %[[M:.+]] = dlc.matmul
//  CHECK-NEXT:     %[[R:.+]] = dlc.relu %[[M]]
//  CHECK-NEXT:     dlc.yield %[[M]], %[[R]]
//       CHECK:   dlc.fusion %[[A]]#1, %{{.+}}, %[[A]]#0 {kind = "contraction"}
//  CHECK-NEXT:   ^bb0
//  CHECK-NEXT:     dlc.matmul
//  CHECK-NEXT:     dlc.add
//  CHECK-NEXT:     dlc.yield
func.func @residual_joins_the_matmul_that_closes_no_cycle(%x: tensor<8x16xf32>, %w1: tensor<16x16xf32>, %w2: tensor<16x16xf32>) -> tensor<8x16xf32> {
  %0 = dlc.matmul %x, %w1 : (tensor<8x16xf32>, tensor<16x16xf32>) -> tensor<8x16xf32>
  %1 = dlc.relu %0 : tensor<8x16xf32>
  %2 = dlc.matmul %1, %w2 : (tensor<8x16xf32>, tensor<16x16xf32>) -> tensor<8x16xf32>
  %3 = dlc.add %0, %2 : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  return %3 : tensor<8x16xf32>
}

// -----

// Convolution with bias and relu, then pooling with the flattening reshape
// as a store remap: one kernel, pooling each plane of activations as it is
// computed; the [1, 2, 8, 8] activations never leave it.

// CHECK-LABEL: func.func @conv_relu_pool_is_one_kernel
//       CHECK:   dlc.fusion %{{.+}}, %{{.+}}, %{{.+}} {kind = "convolution"} : ({{.+}}) -> tensor<1x32xf32>
//  CHECK-NEXT:   ^bb0
//  CHECK-NEXT:     dlc.conv2d
//  CHECK-NEXT:     dlc.relu
//  CHECK-NEXT:     dlc.max_pool2d
//  CHECK-NEXT:     dlc.reshape
//  CHECK-NEXT:     dlc.yield
//   CHECK-NOT:   dlc.fusion
func.func @conv_relu_pool_is_one_kernel(%x: tensor<1x1x8x8xf32>, %w: tensor<2x1x3x3xf32>, %b: tensor<2xf32>) -> tensor<1x32xf32> {
  %0 = dlc.conv2d %x, %w, %b {strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x1x8x8xf32>, tensor<2x1x3x3xf32>, tensor<2xf32>) -> tensor<1x2x8x8xf32>
  %1 = dlc.relu %0 : tensor<1x2x8x8xf32>
  %2 = dlc.max_pool2d %1 {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>} : tensor<1x2x8x8xf32> -> tensor<1x2x4x4xf32>
  %3 = dlc.reshape %2 : tensor<1x2x4x4xf32> -> tensor<1x32xf32>
  return %3 : tensor<1x32xf32>
}

// -----

// The activations are needed outside too (a train step keeps them for the
// backward pass): the convolution and the pooling stay two kernels.

// CHECK-LABEL: func.func @conv_relu_then_pool_when_activations_are_kept
//       CHECK:   %[[C:.+]] = dlc.fusion %{{.+}}, %{{.+}}, %{{.+}} {kind = "convolution"}
//  CHECK-NEXT:   ^bb0
//  CHECK-NEXT:     dlc.conv2d
//  CHECK-NEXT:     dlc.relu
//  CHECK-NEXT:     dlc.yield
//       CHECK:   dlc.fusion %[[C]] {kind = "reduction"}
//  CHECK-NEXT:   ^bb0
//  CHECK-NEXT:     dlc.max_pool2d
//  CHECK-NEXT:     dlc.yield
//   CHECK-NOT:   dlc.fusion
func.func @conv_relu_then_pool_when_activations_are_kept(%x: tensor<1x1x8x8xf32>, %w: tensor<2x1x3x3xf32>, %b: tensor<2xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x8x8xf32>) {
  %0 = dlc.conv2d %x, %w, %b {strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x1x8x8xf32>, tensor<2x1x3x3xf32>, tensor<2xf32>) -> tensor<1x2x8x8xf32>
  %1 = dlc.relu %0 : tensor<1x2x8x8xf32>
  %2 = dlc.max_pool2d %1 {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>} : tensor<1x2x8x8xf32> -> tensor<1x2x4x4xf32>
  return %2, %1 : tensor<1x2x4x4xf32>, tensor<1x2x8x8xf32>
}

// -----

// q·kᵀ, scale, causal mask, softmax, ·v and the heads merged back: one
// kernel; the [1, 2, 8, 8] scores never leave it.

// CHECK-LABEL: func.func @attention_is_one_kernel
//  CHECK-SAME:   (%[[Q:[^:]+]]: tensor<1x2x8x4xf32>, %[[K:[^:]+]]: tensor<1x2x8x4xf32>, %[[V:[^:]+]]: tensor<1x2x8x4xf32>, %[[MASK:[^:]+]]: tensor<8x8xi1>)
//   CHECK-DAG:   %[[SCALE:.+]] = dlc.constant dense<5.000000e-01>
//   CHECK-DAG:   %[[NEG:.+]] = dlc.constant dense<-1.000000e+09>
//       CHECK:   %[[F:.+]] = dlc.fusion %[[Q]], %[[K]], %[[SCALE]], %[[MASK]], %[[NEG]], %[[V]] {kind = "attention"} : ({{.+}}) -> tensor<1x8x8xf32>
//  CHECK-NEXT:   ^bb0
//  CHECK-NEXT:     dlc.matmul {{.+}} {transpose_b = true}
//  CHECK-NEXT:     dlc.mul
//  CHECK-NEXT:     dlc.select
//  CHECK-NEXT:     dlc.softmax
//  CHECK-NEXT:     dlc.matmul
//  CHECK-NEXT:     dlc.transpose
//  CHECK-NEXT:     dlc.reshape
//  CHECK-NEXT:     dlc.yield
//   CHECK-NOT:   dlc.fusion
//       CHECK:   return %[[F]]
func.func @attention_is_one_kernel(%q: tensor<1x2x8x4xf32>, %k: tensor<1x2x8x4xf32>, %v: tensor<1x2x8x4xf32>, %mask: tensor<8x8xi1>) -> tensor<1x8x8xf32> {
  %scale = dlc.constant dense<5.0e-01> : tensor<f32>
  %neg = dlc.constant dense<-1.0e+09> : tensor<f32>
  %0 = dlc.matmul %q, %k {transpose_b = true} : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x8x8xf32>
  %1 = dlc.mul %0, %scale : (tensor<1x2x8x8xf32>, tensor<f32>) -> tensor<1x2x8x8xf32>
  %2 = dlc.select %mask, %1, %neg : (tensor<8x8xi1>, tensor<1x2x8x8xf32>, tensor<f32>) -> tensor<1x2x8x8xf32>
  %3 = dlc.softmax %2 {axis = -1 : i64} : tensor<1x2x8x8xf32>
  %4 = dlc.matmul %3, %v : (tensor<1x2x8x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32>
  %5 = dlc.transpose %4 {perm = array<i64: 0, 2, 1, 3>} : tensor<1x2x8x4xf32> -> tensor<1x8x2x4xf32>
  %6 = dlc.reshape %5 : tensor<1x8x2x4xf32> -> tensor<1x8x8xf32>
  return %6 : tensor<1x8x8xf32>
}

// -----

// The probabilities are also returned: attention would have to write the
// whole score matrix, so the pattern splits into its usual kernels.

// CHECK-LABEL: func.func @attention_whose_probabilities_escape_is_three_kernels
//       CHECK:   %[[S:.+]] = dlc.fusion %{{.+}}, %{{.+}}, %{{.+}} {kind = "contraction"}
//  CHECK-NEXT:   ^bb0
//  CHECK-NEXT:     dlc.matmul
//  CHECK-NEXT:     dlc.mul
//  CHECK-NEXT:     dlc.yield
//       CHECK:   %[[P:.+]] = dlc.fusion %[[S]] {kind = "reduction"}
//  CHECK-NEXT:   ^bb0
//  CHECK-NEXT:     dlc.softmax
//  CHECK-NEXT:     dlc.yield
//       CHECK:   %[[O:.+]] = dlc.fusion %[[P]], %{{.+}} {kind = "contraction"}
//  CHECK-NEXT:   ^bb0
//  CHECK-NEXT:     dlc.matmul
//  CHECK-NEXT:     dlc.yield
//       CHECK:   return %[[O]], %[[P]]
func.func @attention_whose_probabilities_escape_is_three_kernels(%q: tensor<2x8x4xf32>, %k: tensor<2x8x4xf32>, %v: tensor<2x8x4xf32>) -> (tensor<2x8x4xf32>, tensor<2x8x8xf32>) {
  %scale = dlc.constant dense<5.0e-01> : tensor<f32>
  %0 = dlc.matmul %q, %k {transpose_b = true} : (tensor<2x8x4xf32>, tensor<2x8x4xf32>) -> tensor<2x8x8xf32>
  %1 = dlc.mul %0, %scale : (tensor<2x8x8xf32>, tensor<f32>) -> tensor<2x8x8xf32>
  %2 = dlc.softmax %1 {axis = -1 : i64} : tensor<2x8x8xf32>
  %3 = dlc.matmul %2, %v : (tensor<2x8x8xf32>, tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  return %3, %2 : tensor<2x8x4xf32>, tensor<2x8x8xf32>
}

// -----

// A softmax over the query axis does not give the rows the second matmul
// contracts: not attention.

// CHECK-LABEL: func.func @softmax_over_another_axis_is_not_attention
//   CHECK-NOT:   kind = "attention"
//       CHECK:   dlc.fusion {{.+}} {kind = "contraction"}
//       CHECK:   dlc.fusion {{.+}} {kind = "reduction"}
//       CHECK:   dlc.fusion {{.+}} {kind = "contraction"}
//   CHECK-NOT:   kind = "attention"
func.func @softmax_over_another_axis_is_not_attention(%q: tensor<2x8x4xf32>, %k: tensor<2x8x4xf32>, %v: tensor<2x8x4xf32>) -> tensor<2x8x4xf32> {
  %0 = dlc.matmul %q, %k {transpose_b = true} : (tensor<2x8x4xf32>, tensor<2x8x4xf32>) -> tensor<2x8x8xf32>
  %1 = dlc.softmax %0 {axis = 1 : i64} : tensor<2x8x8xf32>
  %2 = dlc.matmul %1, %v : (tensor<2x8x8xf32>, tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  return %2 : tensor<2x8x4xf32>
}
