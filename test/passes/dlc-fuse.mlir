// RUN: dlc-opt %s --split-input-file --dlc-fuse | FileCheck %s

// Element-wise chains, layout ops, lone ops and what dlc-fuse never does
// (recompute, close a cycle). Reductions and contractions have their own
// files: dlc-fuse-reductions.mlir, dlc-fuse-contractions.mlir.
// `kind = "elementwise"` is the default and is not printed: a region printed
// without an attribute dictionary is an element-wise kernel.

// CHECK-LABEL: func.func @bias_relu_fuses_into_one_kernel
//  CHECK-SAME:   (%[[X:[^:]+]]: tensor<4x128xf32>, %[[B:[^:]+]]: tensor<128xf32>)
//       CHECK:   %[[F:.+]] = dlc.fusion %[[X]], %[[B]] : (tensor<4x128xf32>, tensor<128xf32>) -> tensor<4x128xf32> {
//  CHECK-NEXT:   ^bb0(%[[A:[^:]+]]: tensor<4x128xf32>, %[[C:[^:]+]]: tensor<128xf32>):
//  CHECK-NEXT:     %[[S:.+]] = dlc.add %[[A]], %[[C]]
//  CHECK-NEXT:     %[[R:.+]] = dlc.relu %[[S]]
//  CHECK-NEXT:     dlc.yield %[[R]] : tensor<4x128xf32>
//  CHECK-NEXT:   }
//  CHECK-NEXT:   return %[[F]]
func.func @bias_relu_fuses_into_one_kernel(%x: tensor<4x128xf32>, %b: tensor<128xf32>) -> tensor<4x128xf32> {
  %0 = dlc.add %x, %b : (tensor<4x128xf32>, tensor<128xf32>) -> tensor<4x128xf32>
  %1 = dlc.relu %0 : tensor<4x128xf32>
  return %1 : tensor<4x128xf32>
}

// -----

// Parameters and constants stay outside; the region reads them.

// CHECK-LABEL: func.func @params_and_constants_stay_outside
//  CHECK-SAME:   (%[[X:[^:]+]]: tensor<4xf32>)
//   CHECK-DAG:   %[[W:.+]] = dlc.param "w"
//   CHECK-DAG:   %[[H:.+]] = dlc.constant dense<5.000000e-01>
//       CHECK:   dlc.fusion %[[X]], %[[W]], %[[H]] : (tensor<4xf32>, tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
//       CHECK:     dlc.mul
//       CHECK:     dlc.mul
//   CHECK-NOT:   dlc.fusion
func.func @params_and_constants_stay_outside(%x: tensor<4xf32>) -> tensor<4xf32> {
  %w = dlc.param "w" {init = {kind = "ones"}} : tensor<4xf32>
  %half = dlc.constant dense<5.0e-01> : tensor<f32>
  %0 = dlc.mul %x, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = dlc.mul %0, %half : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

// Every op ends up in a region; an op that fuses with nothing is a kernel of
// its own.

// CHECK-LABEL: func.func @lone_op_is_a_one_op_kernel
//       CHECK:   dlc.fusion %{{.+}}, %{{.+}} {kind = "data_movement"}
//  CHECK-NEXT:   ^bb0
//  CHECK-NEXT:     dlc.gather
//  CHECK-NEXT:     dlc.yield
func.func @lone_op_is_a_one_op_kernel(%x: tensor<4x8xf32>, %i: tensor<3xi32>) -> tensor<4x3xf32> {
  %0 = dlc.gather %x, %i {axis = 1 : i64} : (tensor<4x8xf32>, tensor<3xi32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

// A value computed inside and needed outside is an extra result of the
// region (a multi-output kernel), never computed twice.

// CHECK-LABEL: func.func @value_needed_outside_is_an_extra_result
//       CHECK:   %[[F:.+]]:2 = dlc.fusion %{{.+}} : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
//       CHECK:     %[[E:.+]] = dlc.exp
//       CHECK:     %[[N:.+]] = dlc.neg %[[E]]
//       CHECK:     dlc.yield %[[E]], %[[N]]
//       CHECK:   return %[[F]]#0, %[[F]]#1
func.func @value_needed_outside_is_an_extra_result(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = dlc.exp %x : tensor<4xf32>
  %1 = dlc.neg %0 : tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// exp and add could share an element-wise kernel, but the add also reads
// the gather of exp's result: one region would both feed and read the
// gather's kernel. Three kernels.

// CHECK-LABEL: func.func @merge_that_would_close_a_cycle_is_refused
//       CHECK:   %[[E:.+]] = dlc.fusion
//  CHECK-NEXT:   ^bb0
//  CHECK-NEXT:     dlc.exp
//  CHECK-NEXT:     dlc.yield
//       CHECK:   %[[G:.+]] = dlc.fusion %[[E]], %{{.+}} {kind = "data_movement"}
//  CHECK-NEXT:   ^bb0
//  CHECK-NEXT:     dlc.gather
//  CHECK-NEXT:     dlc.yield
//       CHECK:   dlc.fusion %[[E]], %[[G]] :
//  CHECK-NEXT:   ^bb0
//  CHECK-NEXT:     dlc.add
//  CHECK-NEXT:     dlc.yield
func.func @merge_that_would_close_a_cycle_is_refused(%x: tensor<4x8xf32>, %i: tensor<8xi32>) -> tensor<4x8xf32> {
  %0 = dlc.exp %x : tensor<4x8xf32>
  %1 = dlc.gather %0, %i {axis = 1 : i64} : (tensor<4x8xf32>, tensor<8xi32>) -> tensor<4x8xf32>
  %2 = dlc.add %0, %1 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}

// -----

// The [4, 1] exp would be recomputed for each of the 8 columns of the
// [4, 8] kernel: element-wise ops of another shape are kernels of their own.

// CHECK-LABEL: func.func @elementwise_op_of_another_shape_is_not_recomputed
//       CHECK:   %[[E:.+]] = dlc.fusion %{{.+}} : (tensor<4x1xf32>) -> tensor<4x1xf32>
//  CHECK-NEXT:   ^bb0
//  CHECK-NEXT:     dlc.exp
//  CHECK-NEXT:     dlc.yield
//       CHECK:   dlc.fusion %{{.+}}, %[[E]] : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
//  CHECK-NEXT:   ^bb0
//  CHECK-NEXT:     dlc.mul
//  CHECK-NEXT:     dlc.tanh
//  CHECK-NEXT:     dlc.yield
func.func @elementwise_op_of_another_shape_is_not_recomputed(%x: tensor<4x8xf32>, %s: tensor<4x1xf32>) -> tensor<4x8xf32> {
  %0 = dlc.exp %s : tensor<4x1xf32>
  %1 = dlc.mul %x, %0 : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %2 = dlc.tanh %1 : tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}

// -----

// Layout ops join a kernel as index remappings: of a load (the transpose of
// an input) or of a store (reshapes of the result).

// CHECK-LABEL: func.func @layout_ops_remap_loads_and_stores
//       CHECK:   dlc.fusion
//  CHECK-NEXT:   ^bb0
//  CHECK-NEXT:     dlc.transpose
//  CHECK-NEXT:     dlc.add
//  CHECK-NEXT:     dlc.exp
//  CHECK-NEXT:     dlc.reshape
//  CHECK-NEXT:     dlc.reshape
//  CHECK-NEXT:     dlc.yield
//   CHECK-NOT:   dlc.fusion
func.func @layout_ops_remap_loads_and_stores(%x: tensor<4x8xf32>, %y: tensor<8x4xf32>) -> tensor<4x8xf32> {
  %t = dlc.transpose %x {perm = array<i64: 1, 0>} : tensor<4x8xf32> -> tensor<8x4xf32>
  %0 = dlc.add %t, %y : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
  %1 = dlc.exp %0 : tensor<8x4xf32>
  %2 = dlc.reshape %1 : tensor<8x4xf32> -> tensor<32xf32>
  %3 = dlc.reshape %2 : tensor<32xf32> -> tensor<4x8xf32>
  return %3 : tensor<4x8xf32>
}

// -----

// add reads exp's result at (i, j) and at (j, i): a thread computing one
// element would need another thread's value, so the add starts a new kernel.

// CHECK-LABEL: func.func @value_read_through_a_transpose_splits_the_chain
//       CHECK:   %[[F:.+]]:2 = dlc.fusion
//  CHECK-NEXT:   ^bb0
//  CHECK-NEXT:     %[[E:.+]] = dlc.exp
//  CHECK-NEXT:     %[[T:.+]] = dlc.transpose %[[E]]
//  CHECK-NEXT:     dlc.yield %[[E]], %[[T]]
//       CHECK:   dlc.fusion %[[F]]#0, %[[F]]#1 :
//  CHECK-NEXT:   ^bb0
//  CHECK-NEXT:     dlc.add
//  CHECK-NEXT:     dlc.yield
func.func @value_read_through_a_transpose_splits_the_chain(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %0 = dlc.exp %x : tensor<4x4xf32>
  %t = dlc.transpose %0 {perm = array<i64: 1, 0>} : tensor<4x4xf32> -> tensor<4x4xf32>
  %1 = dlc.add %0, %t : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %1 : tensor<4x4xf32>
}

// -----

// Regions come out in a topological order of the graph, one per kernel,
// whatever order the independent ops were written in.

// CHECK-LABEL: func.func @independent_chains_are_separate_kernels
//  CHECK-SAME:   (%[[X:[^:]+]]: tensor<4xf32>, %[[Y:[^:]+]]: tensor<8xf32>)
//       CHECK:   %[[A:.+]] = dlc.fusion %[[X]] :
//  CHECK-NEXT:   ^bb0
//  CHECK-NEXT:     dlc.exp
//  CHECK-NEXT:     dlc.log
//  CHECK-NEXT:     dlc.yield
//       CHECK:   %[[B:.+]] = dlc.fusion %[[Y]] :
//  CHECK-NEXT:   ^bb0
//  CHECK-NEXT:     dlc.sin
//  CHECK-NEXT:     dlc.cos
//  CHECK-NEXT:     dlc.yield
//       CHECK:   return %[[A]], %[[B]]
func.func @independent_chains_are_separate_kernels(%x: tensor<4xf32>, %y: tensor<8xf32>) -> (tensor<4xf32>, tensor<8xf32>) {
  %0 = dlc.exp %x : tensor<4xf32>
  %1 = dlc.sin %y : tensor<8xf32>
  %2 = dlc.log %0 : tensor<4xf32>
  %3 = dlc.cos %1 : tensor<8xf32>
  return %2, %3 : tensor<4xf32>, tensor<8xf32>
}

// -----

// Regions already formed are kernels: the pass leaves them as they are.

// CHECK-LABEL: func.func @existing_regions_stay
//       CHECK:   dlc.fusion %{{.+}} {kind = "reduction"}
//  CHECK-NEXT:   ^bb0
//  CHECK-NEXT:     dlc.exp
//  CHECK-NEXT:     dlc.yield
//   CHECK-NOT:   dlc.fusion
func.func @existing_regions_stay(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = dlc.fusion %x {kind = "reduction"} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %1 = dlc.exp %a : tensor<4xf32>
    dlc.yield %1 : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

// An op dlc-rematerialize recomputed for the backward pass never joins the
// kernel of the forward op it reads (the matmul's epilogue would compute it
// in the forward pass again, and keep it): it joins its reader's.

// CHECK-LABEL: func.func @recomputed_op_stays_out_of_its_producer
//       CHECK:   %[[F:.+]]:2 = dlc.fusion %{{.+}}, %{{.+}} {kind = "contraction"}
//       CHECK:     dlc.matmul
//  CHECK-NEXT:     dlc.exp
//   CHECK-NOT:     dlc.recompute
//       CHECK:   dlc.fusion %[[F]]#0, %{{.+}} :
//  CHECK-NEXT:   ^bb0
//  CHECK-NEXT:     dlc.exp %{{.+}} {dlc.recompute}
//  CHECK-NEXT:     dlc.mul
func.func @recomputed_op_stays_out_of_its_producer(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>, %g: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %a = dlc.matmul %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %e = dlc.exp %a : tensor<4x8xf32>
  %f = dlc.exp %a {dlc.recompute} : tensor<4x8xf32>
  %d = dlc.mul %g, %f : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %e, %d : tensor<4x8xf32>, tensor<4x8xf32>
}
