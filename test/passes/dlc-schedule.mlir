// RUN: dlc-opt %s --split-input-file --dlc-schedule | FileCheck %s
// RUN: dlc-opt %s --split-input-file --dlc-plan-memory | FileCheck %s --check-prefix=PROGRAM
// RUN: dlc-opt %s --split-input-file --dlc-schedule --dlc-plan-memory | FileCheck %s --check-prefix=SCHEDULED

// Two independent branches, each a large intermediate reduced to a scalar.
// In program order both large tensors are live at once; the schedule
// finishes one branch before it starts the other.

// CHECK-LABEL: func.func @branches_run_one_at_a_time
//       CHECK:   %[[A:.+]] = dlc.exp
//  CHECK-NEXT:   %[[SA:.+]] = dlc.reduce_sum %[[A]]
//  CHECK-NEXT:   %[[B:.+]] = dlc.tanh
//  CHECK-NEXT:   %[[SB:.+]] = dlc.reduce_sum %[[B]]
//  CHECK-NEXT:   dlc.add %[[SA]], %[[SB]]
// PROGRAM-LABEL: func.func @branches_run_one_at_a_time
//  PROGRAM-SAME:   dlc.peak_live_bytes = 8388864
// SCHEDULED-LABEL: func.func @branches_run_one_at_a_time
//  SCHEDULED-SAME:   dlc.peak_live_bytes = 4194816
func.func @branches_run_one_at_a_time(%x: tensor<1024x1024xf32>) -> tensor<f32> {
  %a = dlc.exp %x : tensor<1024x1024xf32>
  %b = dlc.tanh %x : tensor<1024x1024xf32>
  %sa = dlc.reduce_sum %a {axes = array<i64: 0, 1>} : tensor<1024x1024xf32> -> tensor<f32>
  %sb = dlc.reduce_sum %b {axes = array<i64: 0, 1>} : tensor<1024x1024xf32> -> tensor<f32>
  %y = dlc.add %sa, %sb : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %y : tensor<f32>
}

// -----

// A chain has one topological order: nothing moves.

// CHECK-LABEL: func.func @chain_keeps_its_order
//       CHECK:   dlc.exp
//  CHECK-NEXT:   dlc.softmax
//  CHECK-NEXT:   dlc.reduce_max
//  CHECK-NEXT:   return
func.func @chain_keeps_its_order(%x: tensor<8x8xf32>) -> tensor<8xf32> {
  %0 = dlc.exp %x : tensor<8x8xf32>
  %1 = dlc.softmax %0 : tensor<8x8xf32>
  %2 = dlc.reduce_max %1 {axes = array<i64: 1>} : tensor<8x8xf32> -> tensor<8xf32>
  return %2 : tensor<8xf32>
}

// -----

// Equal peaks keep the program order: the small branch first stays first.

// CHECK-LABEL: func.func @ties_keep_program_order
//       CHECK:   dlc.neg
//  CHECK-NEXT:   dlc.exp
//  CHECK-NEXT:   dlc.add
func.func @ties_keep_program_order(%x: tensor<64xf32>) -> tensor<64xf32> {
  %0 = dlc.neg %x : tensor<64xf32>
  %1 = dlc.exp %x : tensor<64xf32>
  %2 = dlc.add %0, %1 : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  return %2 : tensor<64xf32>
}

// -----

// After fusion the kernels are the dlc.fusion regions, which move whole;
// each parameter moves to just before its first reader.

// CHECK-LABEL: func.func @fused_kernels_move_with_their_parameters
//       CHECK:   %[[W1:.+]] = dlc.param "w1"
//  CHECK-NEXT:   %[[A:.+]] = dlc.fusion %{{.+}}, %[[W1]]
//       CHECK:     dlc.add
//       CHECK:   %[[SA:.+]] = dlc.fusion %[[A]]
//       CHECK:     dlc.reduce_sum
//       CHECK:   %[[W2:.+]] = dlc.param "w2"
//  CHECK-NEXT:   %[[B:.+]] = dlc.fusion %{{.+}}, %[[W2]]
//       CHECK:     dlc.mul
//       CHECK:   %[[SB:.+]] = dlc.fusion %[[B]]
//       CHECK:   dlc.add %[[SA]], %[[SB]]
func.func @fused_kernels_move_with_their_parameters(%x: tensor<256x1024xf32>) -> tensor<f32> {
  %w1 = dlc.param "w1" {init = {kind = "zeros"}} : tensor<1024xf32>
  %w2 = dlc.param "w2" {init = {kind = "zeros"}} : tensor<1024xf32>
  %a = dlc.fusion %x, %w1 {kind = "elementwise"} : (tensor<256x1024xf32>, tensor<1024xf32>) -> tensor<256x1024xf32> {
  ^bb0(%p: tensor<256x1024xf32>, %q: tensor<1024xf32>):
    %0 = dlc.add %p, %q : (tensor<256x1024xf32>, tensor<1024xf32>) -> tensor<256x1024xf32>
    dlc.yield %0 : tensor<256x1024xf32>
  }
  %b = dlc.fusion %x, %w2 {kind = "elementwise"} : (tensor<256x1024xf32>, tensor<1024xf32>) -> tensor<256x1024xf32> {
  ^bb0(%p: tensor<256x1024xf32>, %q: tensor<1024xf32>):
    %0 = dlc.mul %p, %q : (tensor<256x1024xf32>, tensor<1024xf32>) -> tensor<256x1024xf32>
    dlc.yield %0 : tensor<256x1024xf32>
  }
  %sa = dlc.fusion %a {kind = "reduction"} : (tensor<256x1024xf32>) -> tensor<f32> {
  ^bb0(%p: tensor<256x1024xf32>):
    %0 = dlc.reduce_sum %p {axes = array<i64: 0, 1>} : tensor<256x1024xf32> -> tensor<f32>
    dlc.yield %0 : tensor<f32>
  }
  %sb = dlc.fusion %b {kind = "reduction"} : (tensor<256x1024xf32>) -> tensor<f32> {
  ^bb0(%p: tensor<256x1024xf32>):
    %0 = dlc.reduce_sum %p {axes = array<i64: 0, 1>} : tensor<256x1024xf32> -> tensor<f32>
    dlc.yield %0 : tensor<f32>
  }
  %y = dlc.add %sa, %sb : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %y : tensor<f32>
}

// -----

// An iota has no inputs but takes memory: it waits until the exp branch has
// been reduced, and runs just before its reader.

// CHECK-LABEL: func.func @sources_of_memory_wait
//       CHECK:   %[[A:.+]] = dlc.exp
//  CHECK-NEXT:   dlc.reduce_sum %[[A]]
//  CHECK-NEXT:   %[[I:.+]] = dlc.iota
//  CHECK-NEXT:   dlc.cast %[[I]]
func.func @sources_of_memory_wait(%x: tensor<512x512xf32>) -> (tensor<f32>, tensor<f32>, tensor<512x512xf32>) {
  %i = dlc.iota 0 : tensor<512x512xi32>
  %s = dlc.reduce_sum %x {axes = array<i64: 0, 1>} : tensor<512x512xf32> -> tensor<f32>
  %a = dlc.exp %x : tensor<512x512xf32>
  %t = dlc.reduce_sum %a {axes = array<i64: 0, 1>} : tensor<512x512xf32> -> tensor<f32>
  %c = dlc.cast %i : tensor<512x512xi32> -> tensor<512x512xf32>
  return %s, %t, %c : tensor<f32>, tensor<f32>, tensor<512x512xf32>
}

// -----

// A kernel with two results read by one reader: the reader waits for the
// kernel once, and the order stays topological (the IR verifier checks it
// after the pass).

// CHECK-LABEL: func.func @multi_result_kernel
//       CHECK:   %[[M:.+]]:2 = dlc.fusion
//       CHECK:   dlc.add %[[M]]#0, %[[M]]#1
func.func @multi_result_kernel(%x: tensor<128x128xf32>) -> tensor<128x128xf32> {
  %e = dlc.exp %x : tensor<128x128xf32>
  %m:2 = dlc.fusion %e {kind = "elementwise"} : (tensor<128x128xf32>) -> (tensor<128x128xf32>, tensor<128x128xf32>) {
  ^bb0(%p: tensor<128x128xf32>):
    %0 = dlc.neg %p : tensor<128x128xf32>
    %1 = dlc.tanh %p : tensor<128x128xf32>
    dlc.yield %0, %1 : tensor<128x128xf32>, tensor<128x128xf32>
  }
  %t = dlc.tanh %x : tensor<128x128xf32>
  %s = dlc.add %m#0, %m#1 : (tensor<128x128xf32>, tensor<128x128xf32>) -> tensor<128x128xf32>
  %y = dlc.add %s, %t : (tensor<128x128xf32>, tensor<128x128xf32>) -> tensor<128x128xf32>
  return %y : tensor<128x128xf32>
}
