// RUN: dlc-opt %s --split-input-file --dlc-tile=target=cuda:sm_90 | FileCheck %s
// RUN: dlc-opt %s --split-input-file --dlc-tile=target=cuda:sm_80 | FileCheck %s --check-prefix=SM80
// RUN: dlc-opt %s --split-input-file --dlc-tile=target=cpu | FileCheck %s --check-prefix=CPU

// A GEMM with a fused bias: the tiled matmul, its grid covering M x N.
// CHECK-LABEL: func.func @gemm_bias
//       CHECK:   dlc.fusion
//  CHECK-SAME:     dlc.schedule = #dlc.schedule<arch = "sm_90", strategy = matmul, implementation = library
//  CHECK-SAME:     block = {{\[}}[[T:[0-9]+]], 1, 1]
//  CHECK-SAME:     grid = {{\[}}[[GX:[0-9]+]], [[GY:[0-9]+]], 1]
//  CHECK-SAME:     tile = {{\[}}
//  CHECK-SAME:     thread_tile = {{\[}}
//       SM80:     arch = "sm_80"
//   CPU-LABEL: func.func @gemm_bias
//   CPU-NOT:     dlc.schedule
func.func @gemm_bias(%x: tensor<512x768xf32>, %w: tensor<768x3072xf32>, %b: tensor<3072xf32>) -> tensor<512x3072xf32> {
  %0 = dlc.fusion %x, %w, %b {kind = "contraction"} : (tensor<512x768xf32>, tensor<768x3072xf32>, tensor<3072xf32>) -> tensor<512x3072xf32> {
  ^bb0(%a: tensor<512x768xf32>, %bw: tensor<768x3072xf32>, %bb: tensor<3072xf32>):
    %1 = dlc.matmul %a, %bw : (tensor<512x768xf32>, tensor<768x3072xf32>) -> tensor<512x3072xf32>
    %2 = dlc.add %1, %bb : (tensor<512x3072xf32>, tensor<3072xf32>) -> tensor<512x3072xf32>
    dlc.yield %2 : tensor<512x3072xf32>
  }
  return %0 : tensor<512x3072xf32>
}

// -----

// A large GEMM gets a large tile; a GEMM with 16 rows a small one.
// CHECK-LABEL: func.func @tile_follows_shape
//       CHECK:   dlc.matmul {{.*}}strategy = matmul{{.*}}tile = {{\[}}128, 128, 8], thread_tile = {{\[}}8, 8]
//       CHECK:   dlc.matmul {{.*}}strategy = matmul{{.*}}tile = {{\[}}32, 32, 8], thread_tile = {{\[}}4, 4]
func.func @tile_follows_shape(%a: tensor<4096x4096xf32>, %b: tensor<16x768xf32>, %w: tensor<768x768xf32>) -> (tensor<4096x4096xf32>, tensor<16x768xf32>) {
  %0 = dlc.matmul %a, %a : (tensor<4096x4096xf32>, tensor<4096x4096xf32>) -> tensor<4096x4096xf32>
  %1 = dlc.matmul %b, %w : (tensor<16x768xf32>, tensor<768x768xf32>) -> tensor<16x768xf32>
  return %0, %1 : tensor<4096x4096xf32>, tensor<16x768xf32>
}

// -----

// Element-wise: a grid-stride loop; 4 elements per thread once the tensor
// fills the machine 4 times over.
// CHECK-LABEL: func.func @elementwise
//       CHECK:   dlc.tanh {{.*}}strategy = elementwise{{.*}}vector = 1{{.*}}bound = "memory"
//       CHECK:   dlc.tanh {{.*}}strategy = elementwise{{.*}}vector = 4
func.func @elementwise(%x: tensor<1000xf32>, %y: tensor<4096x4096xf32>) -> (tensor<1000xf32>, tensor<4096x4096xf32>) {
  %0 = dlc.tanh %x : tensor<1000xf32>
  %1 = dlc.tanh %y : tensor<4096x4096xf32>
  return %0, %1 : tensor<1000xf32>, tensor<4096x4096xf32>
}

// -----

// Normalisation: one block per row, threads sized by the row (768 / 4 →
// 256); attention likewise, said so in the reason.
// CHECK-LABEL: func.func @rows
//       CHECK:   dlc.layer_norm {{.*}}strategy = rows{{.*}}block = {{\[}}256, 1, 1]{{.*}}staging = "shared"
//       CHECK:   dlc.fusion {{.*}}reason = "attention: one block per query row
func.func @rows(%x: tensor<8x768xf32>, %g: tensor<768xf32>, %q: tensor<1x2x16x8xf32>) -> (tensor<8x768xf32>, tensor<1x2x16x16xf32>) {
  %0 = dlc.layer_norm %x, %g : (tensor<8x768xf32>, tensor<768xf32>) -> tensor<8x768xf32>
  %1 = dlc.fusion %q {kind = "attention"} : (tensor<1x2x16x8xf32>) -> tensor<1x2x16x16xf32> {
  ^bb0(%a: tensor<1x2x16x8xf32>):
    %2 = dlc.matmul %a, %a {transpose_b = true} : (tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>) -> tensor<1x2x16x16xf32>
    %3 = dlc.softmax %2 : tensor<1x2x16x16xf32>
    dlc.yield %3 : tensor<1x2x16x16xf32>
  }
  return %0, %1 : tensor<8x768xf32>, tensor<1x2x16x16xf32>
}

// -----

// Tensor cores: bf16 and f16 operands take mma.sync m16n8k16, f32 operands
// that may round to TF32 m16n8k8; exact f32 keeps the SIMT GEMM. A tensor-
// core schedule has a warp tile instead of a thread tile, and 32 threads
// per warp tile.
// CHECK-LABEL: func.func @tensor_cores
//       CHECK:   dlc.matmul {{.*}}strategy = matmul{{.*}}tile = {{\[}}128, 128, 32]{{.*}}mma = "m16n8k16.bf16", warp_tile = {{\[}}64, 32]
//       CHECK:   dlc.matmul {{.*}}strategy = matmul{{.*}}mma = "m16n8k16.f16", warp_tile =
//       CHECK:   dlc.matmul {{.*}}block = {{\[}}[[T:[0-9]+]], 1, 1]{{.*}}reason = "cuBLASLt GEMM (no epilogue); fallback: tensor-core GEMM (mma.sync m16n8k8.tf32){{.*}}mma = "m16n8k8.tf32", warp_tile =
//       CHECK:   dlc.matmul {{.*}}thread_tile = {{\[}}8, 8]
//   CHECK-NOT:     mma =
//       SM80-LABEL: func.func @tensor_cores
//       SM80:   dlc.matmul {{.*}}arch = "sm_80"{{.*}}mma = "m16n8k16.bf16"
func.func @tensor_cores(%a: tensor<4096x4096xbf16>, %h: tensor<512x512xf16>, %f: tensor<4096x4096xf32>) -> (tensor<4096x4096xbf16>, tensor<512x512xf16>, tensor<4096x4096xf32>, tensor<4096x4096xf32>) {
  %0 = dlc.matmul %a, %a : (tensor<4096x4096xbf16>, tensor<4096x4096xbf16>) -> tensor<4096x4096xbf16>
  %1 = dlc.matmul %h, %h : (tensor<512x512xf16>, tensor<512x512xf16>) -> tensor<512x512xf16>
  %2 = dlc.matmul %f, %f {precision = #dlc<precision tensorfloat32>} : (tensor<4096x4096xf32>, tensor<4096x4096xf32>) -> tensor<4096x4096xf32>
  %3 = dlc.matmul %f, %f : (tensor<4096x4096xf32>, tensor<4096x4096xf32>) -> tensor<4096x4096xf32>
  return %0, %1, %2, %3 : tensor<4096x4096xbf16>, tensor<512x512xf16>, tensor<4096x4096xf32>, tensor<4096x4096xf32>
}

// -----

// Many short rows (softmax, norms, reductions; at most 1024 long, 4 warps
// x 4 x 132 SMs of them on sm_90): a warp per row. Long rows, or few, keep
// a block per row.
// CHECK-LABEL: func.func @warp_rows
//       CHECK:   dlc.softmax {{.*}}strategy = warp_rows{{.*}}block = {{\[}}128, 1, 1]{{.*}}reason = "a warp per row
//       CHECK:   dlc.layer_norm {{.*}}strategy = warp_rows
//       CHECK:   dlc.softmax {{.*}}strategy = rows
//       CHECK:   dlc.softmax {{.*}}strategy = rows
func.func @warp_rows(%x: tensor<4096x512xf32>, %y: tensor<16384x768xf32>, %g: tensor<768xf32>,
                     %z: tensor<4096x2048xf32>, %w: tensor<128x512xf32>)
    -> (tensor<4096x512xf32>, tensor<16384x768xf32>, tensor<4096x2048xf32>, tensor<128x512xf32>) {
  %0 = dlc.softmax %x {axis = -1 : i64} : tensor<4096x512xf32>
  %1 = dlc.layer_norm %y, %g : (tensor<16384x768xf32>, tensor<768xf32>) -> tensor<16384x768xf32>
  %2 = dlc.softmax %z {axis = -1 : i64} : tensor<4096x2048xf32>
  %3 = dlc.softmax %w {axis = -1 : i64} : tensor<128x512xf32>
  return %0, %1, %2, %3 : tensor<4096x512xf32>, tensor<16384x768xf32>, tensor<4096x2048xf32>, tensor<128x512xf32>
}

// -----

// A convolution with 64 output channels and enough tiles is an implicit
// GEMM (the matmul template); a depthwise one (a channel a group) keeps
// the rows kernel's direct loops.
// CHECK-LABEL: func.func @conv_implicit_gemm
//       CHECK:   dlc.conv2d {{.*}}strategy = matmul{{.*}}reason = "convolution as an implicit GEMM (tiled GEMM
//       CHECK:   dlc.conv2d {{.*}}strategy = rows
func.func @conv_implicit_gemm(%x: tensor<8x32x28x28xf32>, %w: tensor<64x32x3x3xf32>,
                              %dw: tensor<32x1x3x3xf32>) -> (tensor<8x64x28x28xf32>, tensor<8x32x28x28xf32>) {
  %0 = dlc.conv2d %x, %w {strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>,
      dilations = array<i64: 1, 1>, groups = 1 : i64}
      : (tensor<8x32x28x28xf32>, tensor<64x32x3x3xf32>) -> tensor<8x64x28x28xf32>
  %1 = dlc.conv2d %x, %dw {strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>,
      dilations = array<i64: 1, 1>, groups = 32 : i64}
      : (tensor<8x32x28x28xf32>, tensor<32x1x3x3xf32>) -> tensor<8x32x28x28xf32>
  return %0, %1 : tensor<8x64x28x28xf32>, tensor<8x32x28x28xf32>
}
