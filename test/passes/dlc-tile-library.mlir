// Which GEMM kernels dlc-tile hands to cuBLASLt (passes/LibraryGemm.h): a
// matmul whose epilogue cuBLASLt applies itself, act(x + bias + C) with
// casts, becomes `implementation = library`, its generated schedule kept as
// the fallback; anything else stays generated.
// RUN: dlc-opt %s --split-input-file --dlc-tile=target=cuda:sm_90 | FileCheck %s
// RUN: dlc-opt %s --split-input-file --dlc-tile="target=cuda:sm_90 allow-library=false" | FileCheck %s --check-prefix=OFF

// CHECK-LABEL: func.func @bias_gelu_tanh
//       CHECK:   implementation = library
//  CHECK-SAME:   reason = "cuBLASLt GEMM (bias + GELU); fallback: tiled GEMM
//  CHECK-SAME:   tile = {{\[}}
//   OFF-LABEL: func.func @bias_gelu_tanh
//       OFF:   implementation = generated
func.func @bias_gelu_tanh(%x: tensor<512x768xf32>, %w: tensor<768x3072xf32>, %b: tensor<3072xf32>) -> tensor<512x3072xf32> {
  %0 = dlc.fusion %x, %w, %b {kind = "contraction"} : (tensor<512x768xf32>, tensor<768x3072xf32>, tensor<3072xf32>) -> tensor<512x3072xf32> {
  ^bb0(%a: tensor<512x768xf32>, %bw: tensor<768x3072xf32>, %bb: tensor<3072xf32>):
    %1 = dlc.matmul %a, %bw : (tensor<512x768xf32>, tensor<768x3072xf32>) -> tensor<512x3072xf32>
    %2 = dlc.add %1, %bb : (tensor<512x3072xf32>, tensor<3072xf32>) -> tensor<512x3072xf32>
    %3 = dlc.gelu %2 {approximation = #dlc<approximation tanh>} : tensor<512x3072xf32>
    dlc.yield %3 : tensor<512x3072xf32>
  }
  return %0 : tensor<512x3072xf32>
}

// -----

// cuBLASLt's GELU is the tanh form: the exact (erf) GELU stays generated.
// CHECK-LABEL: func.func @gelu_erf
//       CHECK:   implementation = generated
func.func @gelu_erf(%x: tensor<512x768xf32>, %w: tensor<768x3072xf32>) -> tensor<512x3072xf32> {
  %0 = dlc.fusion %x, %w {kind = "contraction"} : (tensor<512x768xf32>, tensor<768x3072xf32>) -> tensor<512x3072xf32> {
  ^bb0(%a: tensor<512x768xf32>, %bw: tensor<768x3072xf32>):
    %1 = dlc.matmul %a, %bw : (tensor<512x768xf32>, tensor<768x3072xf32>) -> tensor<512x3072xf32>
    %2 = dlc.gelu %1 : tensor<512x3072xf32>
    dlc.yield %2 : tensor<512x3072xf32>
  }
  return %0 : tensor<512x3072xf32>
}

// -----

// A residual then ReLU is act(x + C); ReLU then a residual is not.
// CHECK-LABEL: func.func @residual_relu
//       CHECK:   implementation = library
//  CHECK-SAME:   reason = "cuBLASLt GEMM (residual + ReLU)
// CHECK-LABEL: func.func @relu_residual
//       CHECK:   implementation = generated
func.func @residual_relu(%x: tensor<256x512xf32>, %w: tensor<512x512xf32>, %r: tensor<256x512xf32>) -> tensor<256x512xf32> {
  %0 = dlc.fusion %x, %w, %r {kind = "contraction"} : (tensor<256x512xf32>, tensor<512x512xf32>, tensor<256x512xf32>) -> tensor<256x512xf32> {
  ^bb0(%a: tensor<256x512xf32>, %bw: tensor<512x512xf32>, %br: tensor<256x512xf32>):
    %1 = dlc.matmul %a, %bw : (tensor<256x512xf32>, tensor<512x512xf32>) -> tensor<256x512xf32>
    %2 = dlc.add %br, %1 : (tensor<256x512xf32>, tensor<256x512xf32>) -> tensor<256x512xf32>
    %3 = dlc.relu %2 : tensor<256x512xf32>
    dlc.yield %3 : tensor<256x512xf32>
  }
  return %0 : tensor<256x512xf32>
}
func.func @relu_residual(%x: tensor<256x512xf32>, %w: tensor<512x512xf32>, %r: tensor<256x512xf32>) -> tensor<256x512xf32> {
  %0 = dlc.fusion %x, %w, %r {kind = "contraction"} : (tensor<256x512xf32>, tensor<512x512xf32>, tensor<256x512xf32>) -> tensor<256x512xf32> {
  ^bb0(%a: tensor<256x512xf32>, %bw: tensor<512x512xf32>, %br: tensor<256x512xf32>):
    %1 = dlc.matmul %a, %bw : (tensor<256x512xf32>, tensor<512x512xf32>) -> tensor<256x512xf32>
    %2 = dlc.relu %1 : tensor<256x512xf32>
    %3 = dlc.add %br, %2 : (tensor<256x512xf32>, tensor<256x512xf32>) -> tensor<256x512xf32>
    dlc.yield %3 : tensor<256x512xf32>
  }
  return %0 : tensor<256x512xf32>
}

// -----

// Batches equal on both sides are a strided batched GEMM; a layout tail
// (the heads' reshape and transpose) is not a GEMM's store.
// CHECK-LABEL: func.func @batched
//       CHECK:   implementation = library
//  CHECK-SAME:   reason = "cuBLASLt GEMM (no epilogue)
// CHECK-LABEL: func.func @heads_tail
//       CHECK:   implementation = generated
func.func @batched(%a: tensor<8x128x64xf32>, %b: tensor<8x64x96xf32>) -> tensor<8x128x96xf32> {
  %0 = dlc.matmul %a, %b : (tensor<8x128x64xf32>, tensor<8x64x96xf32>) -> tensor<8x128x96xf32>
  return %0 : tensor<8x128x96xf32>
}
func.func @heads_tail(%x: tensor<2x128x768xf32>, %w: tensor<768x768xf32>) -> tensor<2x12x128x64xf32> {
  %0 = dlc.fusion %x, %w {kind = "contraction"} : (tensor<2x128x768xf32>, tensor<768x768xf32>) -> tensor<2x12x128x64xf32> {
  ^bb0(%a: tensor<2x128x768xf32>, %bw: tensor<768x768xf32>):
    %1 = dlc.matmul %a, %bw : (tensor<2x128x768xf32>, tensor<768x768xf32>) -> tensor<2x128x768xf32>
    %2 = dlc.reshape %1 : tensor<2x128x768xf32> -> tensor<2x128x12x64xf32>
    %3 = dlc.transpose %2 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x128x12x64xf32> -> tensor<2x12x128x64xf32>
    dlc.yield %3 : tensor<2x12x128x64xf32>
  }
  return %0 : tensor<2x12x128x64xf32>
}

// -----

// A bf16 product widened to f32: the graph rounds it to bf16 on the way,
// which cuBLASLt (rounding once) would skip — generated, here.
// CHECK-LABEL: func.func @rounded_product
//       CHECK:   implementation = generated
func.func @rounded_product(%a: tensor<256x512xbf16>, %b: tensor<512x256xbf16>, %bias: tensor<256xf32>) -> tensor<256x256xf32> {
  %0 = dlc.fusion %a, %b, %bias {kind = "contraction"} : (tensor<256x512xbf16>, tensor<512x256xbf16>, tensor<256xf32>) -> tensor<256x256xf32> {
  ^bb0(%x: tensor<256x512xbf16>, %y: tensor<512x256xbf16>, %z: tensor<256xf32>):
    %1 = dlc.matmul %x, %y : (tensor<256x512xbf16>, tensor<512x256xbf16>) -> tensor<256x256xbf16>
    %2 = dlc.cast %1 : tensor<256x256xbf16> -> tensor<256x256xf32>
    %3 = dlc.add %2, %z : (tensor<256x256xf32>, tensor<256xf32>) -> tensor<256x256xf32>
    dlc.yield %3 : tensor<256x256xf32>
  }
  return %0 : tensor<256x256xf32>
}

// -----

// The same kernel made by --precision bf16 (the module says so): its
// contract is f32 accumulation, which cuBLASLt keeps.
// CHECK-LABEL: func.func @precision_product
//       CHECK:   implementation = library
//  CHECK-SAME:   reason = "cuBLASLt GEMM (bias); fallback: tensor-core GEMM
module attributes {dlc.precision = "bf16"} {
func.func @precision_product(%a: tensor<256x512xbf16>, %b: tensor<512x256xbf16>, %bias: tensor<256xf32>) -> tensor<256x256xf32> {
  %0 = dlc.fusion %a, %b, %bias {kind = "contraction"} : (tensor<256x512xbf16>, tensor<512x256xbf16>, tensor<256xf32>) -> tensor<256x256xf32> {
  ^bb0(%x: tensor<256x512xbf16>, %y: tensor<512x256xbf16>, %z: tensor<256xf32>):
    %1 = dlc.matmul %x, %y : (tensor<256x512xbf16>, tensor<512x256xbf16>) -> tensor<256x256xbf16>
    %2 = dlc.cast %1 : tensor<256x256xbf16> -> tensor<256x256xf32>
    %3 = dlc.add %2, %z : (tensor<256x256xf32>, tensor<256xf32>) -> tensor<256x256xf32>
    dlc.yield %3 : tensor<256x256xf32>
  }
  return %0 : tensor<256x256xf32>
}
}

// -----

// GPT-2's fc layer under --precision bf16: an f32 bias on a bf16 result,
// which cuBLASLt refuses (its C and bias take D's type): generated.
// CHECK-LABEL: func.func @f32_bias_bf16_result
//       CHECK:   implementation = generated
module attributes {dlc.precision = "bf16"} {
func.func @f32_bias_bf16_result(%a: tensor<256x512xbf16>, %b: tensor<512x256xbf16>, %bias: tensor<256xf32>) -> tensor<256x256xbf16> {
  %0 = dlc.fusion %a, %b, %bias {kind = "contraction"} : (tensor<256x512xbf16>, tensor<512x256xbf16>, tensor<256xf32>) -> tensor<256x256xbf16> {
  ^bb0(%x: tensor<256x512xbf16>, %y: tensor<512x256xbf16>, %z: tensor<256xf32>):
    %1 = dlc.matmul %x, %y : (tensor<256x512xbf16>, tensor<512x256xbf16>) -> tensor<256x256xbf16>
    %2 = dlc.cast %1 : tensor<256x256xbf16> -> tensor<256x256xf32>
    %3 = dlc.add %2, %z : (tensor<256x256xf32>, tensor<256xf32>) -> tensor<256x256xf32>
    %4 = dlc.gelu %3 {approximation = #dlc<approximation tanh>} : tensor<256x256xf32>
    %5 = dlc.cast %4 : tensor<256x256xf32> -> tensor<256x256xbf16>
    dlc.yield %5 : tensor<256x256xbf16>
  }
  return %0 : tensor<256x256xbf16>
}
}
