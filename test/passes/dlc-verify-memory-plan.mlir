// RUN: dlc-opt %s --split-input-file --verify-diagnostics --dlc-verify-memory-plan
// RUN: dlc-opt %s --split-input-file --dlc-plan-memory --dlc-verify-memory-plan | FileCheck %s

// Every case is also planned afresh by dlc-plan-memory and then proved
// (second RUN line): the planner's own plans always pass.
// CHECK-LABEL: func.func @a_valid_plan_passes
// CHECK-LABEL: func.func @live_buffers_overlap
// CHECK-LABEL: func.func @offset_not_aligned

// A plan where add writes over the exp result (in place) and neg gets its
// own buffer.
func.func @a_valid_plan_passes(%x: tensor<64xf32>) -> tensor<64xf32>
    attributes {dlc.arena_size = 512 : i64, dlc.peak_live_bytes = 512 : i64} {
  %0 = dlc.exp %x {dlc.offsets = array<i64: 0>} : tensor<64xf32>
  %1 = dlc.neg %0 {dlc.offsets = array<i64: 256>} : tensor<64xf32>
  %2 = dlc.add %0, %1 {dlc.inplace = array<i64: 0>, dlc.offsets = array<i64: 0>} : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  return %2 : tensor<64xf32>
}

// -----

func.func @live_buffers_overlap(%x: tensor<64xf32>) -> tensor<64xf32>
    attributes {dlc.arena_size = 512 : i64} {
  // expected-note @+1 {{%0 (dlc.exp) is defined here}}
  %0 = dlc.exp %x {dlc.offsets = array<i64: 0>} : tensor<64xf32>
  // expected-error @+1 {{'dlc.neg' op buffer of %1 (dlc.neg) at [0, 256) overlaps the buffer of %0 (dlc.exp) at [0, 256) while both are live at step 1}}
  %1 = dlc.neg %0 {dlc.offsets = array<i64: 0>} : tensor<64xf32>
  %2 = dlc.add %0, %1 {dlc.offsets = array<i64: 256>} : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  return %2 : tensor<64xf32>
}

// -----

func.func @offset_not_aligned(%x: tensor<64xf32>) -> tensor<64xf32>
    attributes {dlc.arena_size = 512 : i64} {
  // expected-error @+1 {{'dlc.exp' op result #0 at offset 128 (256 bytes) is not 256-byte aligned inside the arena of 512 bytes}}
  %0 = dlc.exp %x {dlc.offsets = array<i64: 128>} : tensor<64xf32>
  return %0 : tensor<64xf32>
}

// -----

func.func @buffer_outside_the_arena(%x: tensor<64xf32>) -> tensor<64xf32>
    attributes {dlc.arena_size = 256 : i64} {
  // expected-error @+1 {{'dlc.exp' op result #0 at offset 256 (256 bytes) is not 256-byte aligned inside the arena of 256 bytes}}
  %0 = dlc.exp %x {dlc.offsets = array<i64: 256>} : tensor<64xf32>
  return %0 : tensor<64xf32>
}

// -----

// expected-error @+1 {{has no memory plan: 'dlc.arena_size' is missing (run --dlc-plan-memory first)}}
func.func @no_plan(%x: tensor<64xf32>) -> tensor<64xf32> {
  %0 = dlc.exp %x : tensor<64xf32>
  return %0 : tensor<64xf32>
}

// -----

func.func @kernel_without_offsets(%x: tensor<64xf32>) -> tensor<64xf32>
    attributes {dlc.arena_size = 256 : i64} {
  // expected-error @+1 {{'dlc.exp' op needs 'dlc.offsets' with one offset per result (1)}}
  %0 = dlc.exp %x : tensor<64xf32>
  return %0 : tensor<64xf32>
}

// -----

func.func @softmax_is_not_element_wise(%x: tensor<64xf32>) -> tensor<64xf32>
    attributes {dlc.arena_size = 256 : i64} {
  %0 = dlc.exp %x {dlc.offsets = array<i64: 0>} : tensor<64xf32>
  // expected-error @+1 {{'dlc.softmax' op result #0 cannot reuse operand #0 in place: the kernel is not element-wise from it to the result with equal element counts and byte sizes}}
  %1 = dlc.softmax %0 {dlc.inplace = array<i64: 0>, dlc.offsets = array<i64: 0>} : tensor<64xf32>
  return %1 : tensor<64xf32>
}

// -----

func.func @operand_read_after_the_kernel(%x: tensor<64xf32>) -> tensor<64xf32>
    attributes {dlc.arena_size = 512 : i64} {
  %0 = dlc.exp %x {dlc.offsets = array<i64: 0>} : tensor<64xf32>
  // expected-error @+1 {{'dlc.neg' op result #0 cannot reuse operand #0 in place: %0 (dlc.exp) is read after this kernel, at step 2}}
  %1 = dlc.neg %0 {dlc.inplace = array<i64: 0>, dlc.offsets = array<i64: 0>} : tensor<64xf32>
  %2 = dlc.add %0, %1 {dlc.offsets = array<i64: 256>} : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  return %2 : tensor<64xf32>
}

// -----

func.func @graph_output_written_over(%x: tensor<64xf32>) -> (tensor<64xf32>, tensor<64xf32>)
    attributes {dlc.arena_size = 512 : i64} {
  %0 = dlc.exp %x {dlc.offsets = array<i64: 0>} : tensor<64xf32>
  // expected-error @+1 {{'dlc.neg' op result #0 cannot reuse operand #0 in place: %0 (dlc.exp) is a graph output}}
  %1 = dlc.neg %0 {dlc.inplace = array<i64: 0>, dlc.offsets = array<i64: 0>} : tensor<64xf32>
  return %0, %1 : tensor<64xf32>, tensor<64xf32>
}

// -----

func.func @graph_input_is_not_in_the_arena(%x: tensor<64xf32>) -> tensor<64xf32>
    attributes {dlc.arena_size = 256 : i64} {
  // expected-error @+1 {{'dlc.exp' op result #0 cannot reuse operand #0 in place: %arg0 is not an arena buffer}}
  %0 = dlc.exp %x {dlc.inplace = array<i64: 0>, dlc.offsets = array<i64: 0>} : tensor<64xf32>
  return %0 : tensor<64xf32>
}

// -----

func.func @in_place_at_another_offset(%x: tensor<64xf32>) -> tensor<64xf32>
    attributes {dlc.arena_size = 512 : i64} {
  %0 = dlc.exp %x {dlc.offsets = array<i64: 0>} : tensor<64xf32>
  // expected-error @+1 {{'dlc.neg' op result #0 cannot reuse operand #0 in place: they are at different offsets (0 and 256)}}
  %1 = dlc.neg %0 {dlc.inplace = array<i64: 0>, dlc.offsets = array<i64: 256>} : tensor<64xf32>
  return %1 : tensor<64xf32>
}

// -----

// expected-error @+1 {{'dlc.peak_live_bytes' is 256 but the live bytes of the plan peak at 512}}
func.func @lower_bound_not_the_peak(%x: tensor<64xf32>) -> tensor<64xf32>
    attributes {dlc.arena_size = 512 : i64, dlc.peak_live_bytes = 256 : i64} {
  %0 = dlc.exp %x {dlc.offsets = array<i64: 0>} : tensor<64xf32>
  %1 = dlc.neg %0 {dlc.offsets = array<i64: 256>} : tensor<64xf32>
  return %1 : tensor<64xf32>
}
