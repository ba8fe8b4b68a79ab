// RUN: dlc-opt %s --split-input-file --dlc-fuse | FileCheck %s

// Reductions and normalisations (kind = "reduction"): a kernel walks the
// rows of one input shape S over one set of reduced axes A; element-wise
// ops of shape S or of the reduced shape join it as prologue or epilogue,
// and a reduced value joins a full one only in its keepdims form, so that
// every use stays in its row.

// CHECK-LABEL: func.func @layer_norm_takes_its_prologue_and_epilogue
//  CHECK-SAME:   (%[[X:[^:]+]]: tensor<2x8x16xf32>, %[[R:[^:]+]]: tensor<2x8x16xf32>, %[[G:[^:]+]]: tensor<16xf32>, %[[B:[^:]+]]: tensor<16xf32>)
//       CHECK:   %[[F:.+]]:2 = dlc.fusion %[[X]], %[[R]], %[[G]], %[[B]] {kind = "reduction"}
//  CHECK-NEXT:   ^bb0
//  CHECK-NEXT:     %[[S:.+]] = dlc.add
//  CHECK-NEXT:     %[[N:.+]] = dlc.layer_norm %[[S]]
//  CHECK-NEXT:     %[[Y:.+]] = dlc.silu %[[N]]
//  CHECK-NEXT:     dlc.yield %[[S]], %[[Y]]
//   CHECK-NOT:   dlc.fusion
//       CHECK:   return %[[F]]#0, %[[F]]#1
func.func @layer_norm_takes_its_prologue_and_epilogue(%x: tensor<2x8x16xf32>, %r: tensor<2x8x16xf32>, %g: tensor<16xf32>, %b: tensor<16xf32>) -> (tensor<2x8x16xf32>, tensor<2x8x16xf32>) {
  %0 = dlc.add %x, %r : (tensor<2x8x16xf32>, tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  %1 = dlc.layer_norm %0, %g, %b {axis = -1 : i64, epsilon = 1.0e-05 : f64} : (tensor<2x8x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<2x8x16xf32>
  %2 = dlc.silu %1 : tensor<2x8x16xf32>
  return %0, %2 : tensor<2x8x16xf32>, tensor<2x8x16xf32>
}

// -----

// CHECK-LABEL: func.func @softmax_and_log_softmax_are_reduction_kernels
//       CHECK:   dlc.fusion %{{.+}} {kind = "reduction"}
//  CHECK-NEXT:   ^bb0
//  CHECK-NEXT:     dlc.softmax
//       CHECK:   dlc.fusion %{{.+}} {kind = "reduction"}
//  CHECK-NEXT:   ^bb0
//  CHECK-NEXT:     dlc.log_softmax
func.func @softmax_and_log_softmax_are_reduction_kernels(%x: tensor<4x10xf32>) -> (tensor<4x10xf32>, tensor<4x10xf32>) {
  %s = dlc.softmax %x {axis = -1 : i64} : tensor<4x10xf32>
  %l = dlc.log_softmax %x {axis = 0 : i64} : tensor<4x10xf32>
  return %s, %l : tensor<4x10xf32>, tensor<4x10xf32>
}

// -----

// max, subtract, exp, sum, divide: two reductions over the same rows and
// the element-wise ops between them are one kernel.

// CHECK-LABEL: func.func @decomposed_softmax_is_one_kernel
//       CHECK:   dlc.fusion %{{.+}} {kind = "reduction"} : (tensor<4x10xf32>) -> tensor<4x10xf32>
//  CHECK-NEXT:   ^bb0
//  CHECK-NEXT:     dlc.reduce_max
//  CHECK-NEXT:     dlc.sub
//  CHECK-NEXT:     dlc.exp
//  CHECK-NEXT:     dlc.reduce_sum
//  CHECK-NEXT:     dlc.div
//  CHECK-NEXT:     dlc.yield
//   CHECK-NOT:   dlc.fusion
func.func @decomposed_softmax_is_one_kernel(%x: tensor<4x10xf32>) -> tensor<4x10xf32> {
  %0 = dlc.reduce_max %x {axes = array<i64: -1>, keepdims = true} : tensor<4x10xf32> -> tensor<4x1xf32>
  %1 = dlc.sub %x, %0 : (tensor<4x10xf32>, tensor<4x1xf32>) -> tensor<4x10xf32>
  %2 = dlc.exp %1 : tensor<4x10xf32>
  %3 = dlc.reduce_sum %2 {axes = array<i64: 1>, keepdims = true} : tensor<4x10xf32> -> tensor<4x1xf32>
  %4 = dlc.div %2, %3 : (tensor<4x10xf32>, tensor<4x1xf32>) -> tensor<4x10xf32>
  return %4 : tensor<4x10xf32>
}

// -----

// Element-wise ops on the reduced [4] values, and the reshape back to the
// keepdims form, stay in the row kernel.

// CHECK-LABEL: func.func @decomposed_rms_norm_is_one_kernel
//       CHECK:   dlc.fusion %{{.+}}, %{{.+}}, %{{.+}} {kind = "reduction"} : (tensor<4x16xf32>, tensor<f32>, tensor<16xf32>) -> tensor<4x16xf32>
//  CHECK-NEXT:   ^bb0
//  CHECK-NEXT:     dlc.mul
//  CHECK-NEXT:     dlc.reduce_mean
//  CHECK-NEXT:     dlc.add
//  CHECK-NEXT:     dlc.rsqrt
//  CHECK-NEXT:     dlc.reshape
//  CHECK-NEXT:     dlc.mul
//  CHECK-NEXT:     dlc.mul
//  CHECK-NEXT:     dlc.yield
//   CHECK-NOT:   dlc.fusion
func.func @decomposed_rms_norm_is_one_kernel(%x: tensor<4x16xf32>, %g: tensor<16xf32>) -> tensor<4x16xf32> {
  %eps = dlc.constant dense<1.0e-06> : tensor<f32>
  %0 = dlc.mul %x, %x : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %1 = dlc.reduce_mean %0 {axes = array<i64: 1>, keepdims = false} : tensor<4x16xf32> -> tensor<4xf32>
  %2 = dlc.add %1, %eps : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %3 = dlc.rsqrt %2 : tensor<4xf32>
  %4 = dlc.reshape %3 : tensor<4xf32> -> tensor<4x1xf32>
  %5 = dlc.mul %x, %4 : (tensor<4x16xf32>, tensor<4x1xf32>) -> tensor<4x16xf32>
  %6 = dlc.mul %5, %g : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  return %6 : tensor<4x16xf32>
}

// -----

// The second reduction sums over columns what the first computed per row:
// different axes, different kernels.

// CHECK-LABEL: func.func @reductions_over_different_axes_do_not_share_a_kernel
//       CHECK:   %[[C:.+]] = dlc.fusion %{{.+}} {kind = "reduction"}
//  CHECK-NEXT:   ^bb0
//  CHECK-NEXT:     dlc.reduce_mean
//  CHECK-NEXT:     dlc.sub
//  CHECK-NEXT:     dlc.yield
//       CHECK:   dlc.fusion %[[C]] {kind = "reduction"}
//  CHECK-NEXT:   ^bb0
//  CHECK-NEXT:     dlc.reduce_sum
//  CHECK-NEXT:     dlc.yield
func.func @reductions_over_different_axes_do_not_share_a_kernel(%x: tensor<4x8xf32>) -> tensor<1x8xf32> {
  %0 = dlc.reduce_mean %x {axes = array<i64: 1>, keepdims = true} : tensor<4x8xf32> -> tensor<4x1xf32>
  %1 = dlc.sub %x, %0 : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %2 = dlc.reduce_sum %1 {axes = array<i64: 0>, keepdims = true} : tensor<4x8xf32> -> tensor<1x8xf32>
  return %2 : tensor<1x8xf32>
}

// -----

// The row maxima [8] broadcast against [8, 8] along the rows, not the
// columns: element (i, j) needs row j's maximum, which another row's thread
// block computes. The subtraction is a kernel of its own.

// CHECK-LABEL: func.func @reduced_value_broadcast_across_rows_is_not_fused
//       CHECK:   %[[M:.+]] = dlc.fusion %{{.+}} {kind = "reduction"} : (tensor<8x8xf32>) -> tensor<8xf32>
//  CHECK-NEXT:   ^bb0
//  CHECK-NEXT:     dlc.reduce_max
//  CHECK-NEXT:     dlc.yield
//       CHECK:   dlc.fusion %{{.+}}, %[[M]] : (tensor<8x8xf32>, tensor<8xf32>) -> tensor<8x8xf32>
//  CHECK-NEXT:   ^bb0
//  CHECK-NEXT:     dlc.sub
//  CHECK-NEXT:     dlc.yield
func.func @reduced_value_broadcast_across_rows_is_not_fused(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %0 = dlc.reduce_max %x {axes = array<i64: 1>} : tensor<8x8xf32> -> tensor<8xf32>
  %1 = dlc.sub %x, %0 : (tensor<8x8xf32>, tensor<8xf32>) -> tensor<8x8xf32>
  return %1 : tensor<8x8xf32>
}

// -----

// The reduced [4, 1] is needed across a [2, 4, 8] tensor, larger than the
// rows it was reduced from: a separate kernel reads it.

// CHECK-LABEL: func.func @reduced_value_broadcast_to_a_larger_shape_is_not_fused
//       CHECK:   %[[S:.+]] = dlc.fusion %{{.+}} {kind = "reduction"} : (tensor<4x8xf32>) -> tensor<4x1xf32>
//  CHECK-NEXT:   ^bb0
//  CHECK-NEXT:     dlc.reduce_sum
//  CHECK-NEXT:     dlc.yield
//       CHECK:   dlc.fusion %{{.+}}, %[[S]] : (tensor<2x4x8xf32>, tensor<4x1xf32>) -> tensor<2x4x8xf32>
//  CHECK-NEXT:   ^bb0
//  CHECK-NEXT:     dlc.mul
//  CHECK-NEXT:     dlc.yield
func.func @reduced_value_broadcast_to_a_larger_shape_is_not_fused(%x: tensor<4x8xf32>, %z: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %0 = dlc.reduce_sum %x {axes = array<i64: 1>, keepdims = true} : tensor<4x8xf32> -> tensor<4x1xf32>
  %1 = dlc.mul %z, %0 : (tensor<2x4x8xf32>, tensor<4x1xf32>) -> tensor<2x4x8xf32>
  return %1 : tensor<2x4x8xf32>
}

// -----

// Two normalisations of the same rows in a chain: the second reads the
// first's result, which is full-shape, so both fit one row kernel.

// CHECK-LABEL: func.func @chained_row_ops_over_the_same_rows_share_a_kernel
//       CHECK:   dlc.fusion %{{.+}}, %{{.+}} {kind = "reduction"}
//  CHECK-NEXT:   ^bb0
//  CHECK-NEXT:     dlc.rms_norm
//  CHECK-NEXT:     dlc.softmax
//  CHECK-NEXT:     dlc.yield
//   CHECK-NOT:   dlc.fusion
func.func @chained_row_ops_over_the_same_rows_share_a_kernel(%x: tensor<4x16xf32>, %g: tensor<16xf32>) -> tensor<4x16xf32> {
  %0 = dlc.rms_norm %x, %g {axis = -1 : i64, epsilon = 1.0e-06 : f64} : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  %1 = dlc.softmax %0 {axis = -1 : i64} : tensor<4x16xf32>
  return %1 : tensor<4x16xf32>
}
