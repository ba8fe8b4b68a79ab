// RUN: dlc-opt %s --split-input-file --dlc-plan-memory --dlc-verify-memory-plan | FileCheck %s
// RUN: dlc-opt %s --split-input-file --dlc-plan-memory="packer=greedy-by-size" --dlc-verify-memory-plan | FileCheck %s --check-prefix=GREEDY
// RUN: dlc-opt %s --split-input-file --dlc-plan-memory="local-search=0" --dlc-verify-memory-plan | FileCheck %s --check-prefix=EXACT
// RUN: dlc-opt %s --split-input-file --dlc-plan-memory="in-place=false" --dlc-verify-memory-plan | FileCheck %s --check-prefix=NOINPLACE
// RUN: not dlc-opt %s --split-input-file --dlc-plan-memory="packer=tetris" 2>&1 | FileCheck %s --check-prefix=BADPACKER
// RUN: not dlc-opt %S/Inputs/dynamic-shape.mlir --dlc-plan-memory 2>&1 | FileCheck %s --check-prefix=BADSHAPE

// BADPACKER: error: unknown packer 'tetris' (expected best or greedy-by-size)
// BADSHAPE: error: 'dlc.exp' op has a result of type 'tensor<?xf32>': memory planning needs statically shaped tensors

// Parameters and graph inputs are not in the arena; add and relu write over
// the operand that dies at them, so the chain shares one buffer.

// CHECK-LABEL: func.func @chain_reuses_dying_operands_in_place
//  CHECK-SAME:   dlc.arena_size = 65536 : i64
//  CHECK-SAME:   dlc.peak_live_bytes = 65536 : i64
//       CHECK:   dlc.param "b"
//   CHECK-NOT:     dlc.offsets
//       CHECK:   dlc.matmul %{{.+}}, %{{.+}} {dlc.offsets = array<i64: 0>}
//       CHECK:   dlc.add %{{.+}}, %{{.+}} {dlc.inplace = array<i64: 0>, dlc.offsets = array<i64: 0>}
//       CHECK:   dlc.relu %{{.+}} {dlc.inplace = array<i64: 0>, dlc.offsets = array<i64: 0>}
//       CHECK:   dlc.matmul %{{.+}}, %{{.+}} {dlc.offsets = array<i64: 32768>}
// NOINPLACE-LABEL: func.func @chain_reuses_dying_operands_in_place
//  NOINPLACE-SAME:   dlc.arena_size = 65536 : i64
//   NOINPLACE-NOT:   dlc.inplace
func.func @chain_reuses_dying_operands_in_place(%x: tensor<64x128xf32>, %w: tensor<128x128xf32>) -> tensor<64x128xf32> {
  %b = dlc.param "b" {init = {kind = "zeros"}} : tensor<128xf32>
  %0 = dlc.matmul %x, %w : (tensor<64x128xf32>, tensor<128x128xf32>) -> tensor<64x128xf32>
  %1 = dlc.add %0, %b : (tensor<64x128xf32>, tensor<128xf32>) -> tensor<64x128xf32>
  %2 = dlc.relu %1 : tensor<64x128xf32>
  %3 = dlc.matmul %2, %w : (tensor<64x128xf32>, tensor<128x128xf32>) -> tensor<64x128xf32>
  return %3 : tensor<64x128xf32>
}

// -----

// A graph output lives to the end and is never written over.

// CHECK-LABEL: func.func @outputs_are_never_overwritten
//       CHECK:   dlc.exp %{{.+}} {dlc.offsets = array<i64: 0>}
//       CHECK:   dlc.neg %{{.+}} {dlc.offsets = array<i64: 256>}
func.func @outputs_are_never_overwritten(%x: tensor<64xf32>) -> (tensor<64xf32>, tensor<64xf32>) {
  %0 = dlc.exp %x : tensor<64xf32>
  %1 = dlc.neg %0 : tensor<64xf32>
  return %0, %1 : tensor<64xf32>, tensor<64xf32>
}

// -----

// %0 is read again after the neg, so only the add, its last reader, may
// write over it.

// CHECK-LABEL: func.func @only_the_last_reader_reuses_an_operand
//       CHECK:   dlc.neg %{{.+}} {dlc.offsets = array<i64: 256>}
//       CHECK:   dlc.add %{{.+}}, %{{.+}} {dlc.inplace = array<i64: 0>, dlc.offsets = array<i64: 0>}
func.func @only_the_last_reader_reuses_an_operand(%x: tensor<64xf32>) -> tensor<64xf32> {
  %0 = dlc.exp %x : tensor<64xf32>
  %1 = dlc.neg %0 : tensor<64xf32>
  %2 = dlc.add %0, %1 : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  return %2 : tensor<64xf32>
}

// -----

// A 40-byte buffer reserves 256 bytes; a softmax (not element-wise) and a
// cast to another element size do not write in place, but the last cast
// takes the softmax's buffer, dead by then.

// CHECK-LABEL: func.func @offsets_are_aligned_and_sizes_must_match
//  CHECK-SAME:   dlc.arena_size = 512 : i64
//       CHECK:   dlc.exp %{{.+}} {dlc.offsets = array<i64: 0>}
//       CHECK:   dlc.softmax %{{.+}} {dlc.offsets = array<i64: 256>}
//       CHECK:   dlc.cast %{{.+}} {dlc.offsets = array<i64: 0>}
//       CHECK:   dlc.cast %{{.+}} {dlc.offsets = array<i64: 256>}
func.func @offsets_are_aligned_and_sizes_must_match(%x: tensor<10xf32>) -> (tensor<10xf16>, tensor<10xi32>) {
  %0 = dlc.exp %x : tensor<10xf32>
  %1 = dlc.softmax %0 : tensor<10xf32>
  %2 = dlc.cast %1 : tensor<10xf32> -> tensor<10xf16>
  %3 = dlc.cast %2 : tensor<10xf16> -> tensor<10xi32>
  return %2, %3 : tensor<10xf16>, tensor<10xi32>
}

// -----

// In a fused kernel, an operand read only by the element-wise epilogue (the
// residual) may be written over; one read by the matmul may not.

// CHECK-LABEL: func.func @fused_epilogue_writes_over_the_residual
//       CHECK:   %[[R:.+]] = dlc.exp %{{.+}} {dlc.offsets = array<i64: 0>}
//       CHECK:   %[[H:.+]] = dlc.tanh %[[R]] {dlc.offsets = array<i64: 32768>}
//       CHECK:   dlc.fusion %[[H]], %{{.+}}, %[[R]] {dlc.inplace = array<i64: 2>, dlc.offsets = array<i64: 0>, kind = "contraction"}
func.func @fused_epilogue_writes_over_the_residual(%x: tensor<64x128xf32>, %w: tensor<128x128xf32>) -> tensor<64x128xf32> {
  %r = dlc.exp %x : tensor<64x128xf32>
  %h = dlc.tanh %r : tensor<64x128xf32>
  %y = dlc.fusion %h, %w, %r {kind = "contraction"} : (tensor<64x128xf32>, tensor<128x128xf32>, tensor<64x128xf32>) -> tensor<64x128xf32> {
  ^bb0(%a: tensor<64x128xf32>, %b: tensor<128x128xf32>, %c: tensor<64x128xf32>):
    %0 = dlc.matmul %a, %b : (tensor<64x128xf32>, tensor<128x128xf32>) -> tensor<64x128xf32>
    %1 = dlc.add %c, %0 : (tensor<64x128xf32>, tensor<64x128xf32>) -> tensor<64x128xf32>
    dlc.yield %1 : tensor<64x128xf32>
  }
  return %y : tensor<64x128xf32>
}

// -----

// A value passed twice to a fusion is read by a matmul through one of its
// arguments: neither argument may be written over.

// CHECK-LABEL: func.func @operand_passed_twice_is_checked_through_both
//   CHECK-NOT:   dlc.inplace
func.func @operand_passed_twice_is_checked_through_both(%x: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %r = dlc.exp %x : tensor<64x64xf32>
  %y = dlc.fusion %r, %r {kind = "contraction"} : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32> {
  ^bb0(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>):
    %0 = dlc.matmul %a, %a : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
    %1 = dlc.add %b, %0 : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
    dlc.yield %1 : tensor<64x64xf32>
  }
  return %y : tensor<64x64xf32>
}

// -----

// Blocks (in 256-byte units) a: 4 at steps 0-1, b: 4 at 1-2, c: 1 at 2-3,
// d: 4 at 3. Greedy-by-size places a, b, d, then finds no gap for c below
// 8; the best packer puts c under b and d above it: the lower bound.

// CHECK-LABEL: func.func @greedy_by_size_misses_the_bound
//  CHECK-SAME:   dlc.arena_size = 2048 : i64
//  CHECK-SAME:   dlc.peak_live_bytes = 2048 : i64
// GREEDY-LABEL: func.func @greedy_by_size_misses_the_bound
//  GREEDY-SAME:   dlc.arena_size = 2304 : i64, dlc.packer = "greedy-by-size", dlc.peak_live_bytes = 2048 : i64
func.func @greedy_by_size_misses_the_bound(%x: tensor<4x64xf32>) -> tensor<4x64xf32> {
  %a = dlc.exp %x : tensor<4x64xf32>
  %b = dlc.softmax %a : tensor<4x64xf32>
  %c = dlc.reduce_sum %b {axes = array<i64: 0>} : tensor<4x64xf32> -> tensor<64xf32>
  %d = dlc.broadcast_to %c : tensor<64xf32> -> tensor<4x64xf32>
  return %d : tensor<4x64xf32>
}

// -----

// Blocks (256-byte units) of 1, 3, 5, 2, 3, 5 with ranges 0-4, 1-4, 2-3,
// 3-5, 4-5, 5: every greedy order ends at 14 units or more; the exact search
// reaches the lower bound of 11.

// CHECK-LABEL: func.func @only_search_reaches_the_bound
//  CHECK-SAME:   dlc.arena_size = 2816 : i64
// GREEDY-LABEL: func.func @only_search_reaches_the_bound
//  GREEDY-SAME:   dlc.arena_size = 3584 : i64
// EXACT-LABEL: func.func @only_search_reaches_the_bound
//  EXACT-SAME:   dlc.arena_size = 2816 : i64, dlc.packer = "exact", dlc.peak_live_bytes = 2816 : i64
func.func @only_search_reaches_the_bound(%x: tensor<64xf32>, %y: tensor<192xf32>, %z: tensor<320xf32>) -> tensor<320xf32> {
  %b0 = dlc.exp %x : tensor<64xf32>
  %b1 = dlc.exp %y : tensor<192xf32>
  %b2 = dlc.exp %z : tensor<320xf32>
  %b3 = dlc.slice %b2 {starts = array<i64: 0>, limits = array<i64: 128>, strides = array<i64: 1>} : tensor<320xf32> -> tensor<128xf32>
  %b4 = dlc.fusion %b0, %b1 {kind = "reduction"} : (tensor<64xf32>, tensor<192xf32>) -> tensor<192xf32> {
  ^bb0(%p: tensor<64xf32>, %q: tensor<192xf32>):
    %s = dlc.reduce_sum %p {axes = array<i64: 0>} : tensor<64xf32> -> tensor<f32>
    %r = dlc.softmax %q : tensor<192xf32>
    %t = dlc.add %r, %s : (tensor<192xf32>, tensor<f32>) -> tensor<192xf32>
    dlc.yield %t : tensor<192xf32>
  }
  %b5 = dlc.concat %b3, %b4 {axis = 0 : i64} : (tensor<128xf32>, tensor<192xf32>) -> tensor<320xf32>
  return %b5 : tensor<320xf32>
}

