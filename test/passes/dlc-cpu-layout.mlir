// RUN: env DLC_CPU_PACKED_GEMM=0 dlc-opt --dlc-cpu-layout %s | FileCheck %s
// RUN: env DLC_CPU_CONV=gemm dlc-opt --dlc-cpu-layout %s | FileCheck %s --check-prefix=GEMM
// RUN: env DLC_CPU_PACKED_GEMM=2 dlc-opt --dlc-cpu-layout %s | FileCheck %s --check-prefix=PACKED
//
// The CHECK lines are the rules where the CPU does not pack; where it
// does (AVX2 without AVX-512; DLC_CPU_PACKED_GEMM=2 on any AVX2
// CPU), a convolution the packed implicit GEMM runs (passes/CpuPackedGemm.h)
// is channels-last under 64 output pixels too (PACKED).

// Two convolutions with module weights become channels-last; the
// transposes sink below the relus, the residual add and the pooling and
// cancel between the convolutions: one transpose in (x), one out (after the
// pooling).
// CHECK-LABEL: func.func @chain
// CHECK:       %[[X:.*]] = dlc.transpose %arg0 {perm = array<i64: 0, 2, 3, 1>} : tensor<1x16x32x32xf32> -> tensor<1x32x32x16xf32>
// CHECK:       %[[C1:.*]] = dlc.conv2d %[[X]], %{{.*}}, %{{.*}} {channels_last, {{.*}}} : (tensor<1x32x32x16xf32>, tensor<32x16x3x3xf32>, tensor<32xf32>) -> tensor<1x32x32x32xf32>
// CHECK:       %[[R1:.*]] = dlc.relu %[[C1]] : tensor<1x32x32x32xf32>
// CHECK-NOT:   dlc.transpose
// CHECK:       %[[C2:.*]] = dlc.conv2d %[[R1]], %{{.*}} {channels_last, {{.*}}} : (tensor<1x32x32x32xf32>, tensor<32x32x3x3xf32>) -> tensor<1x32x32x32xf32>
// CHECK:       %[[A:.*]] = dlc.add %[[R1]], %[[C2]]
// CHECK:       %[[R2:.*]] = dlc.relu %[[A]]
// CHECK:       %[[P:.*]] = dlc.max_pool2d %[[R2]] {channels_last, {{.*}}} : tensor<1x32x32x32xf32> -> tensor<1x16x16x32xf32>
// CHECK:       dlc.transpose %[[P]] {perm = array<i64: 0, 3, 1, 2>}
// GEMM-LABEL:  func.func @chain
// GEMM-NOT:    channels_last
// GEMM-NOT:    dlc.transpose
func.func @chain(%arg0: tensor<1x16x32x32xf32>) -> tensor<1x32x16x16xf32> {
  %0 = dlc.param "w1" {init = {kind = "he", seed = 1 : i64}} : tensor<32x16x3x3xf32>
  %1 = dlc.param "b1" {init = {kind = "zeros"}} : tensor<32xf32>
  %2 = dlc.conv2d %arg0, %0, %1 {dilations = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x16x32x32xf32>, tensor<32x16x3x3xf32>, tensor<32xf32>) -> tensor<1x32x32x32xf32>
  %3 = dlc.relu %2 : tensor<1x32x32x32xf32>
  %4 = dlc.param "w2" {init = {kind = "he", seed = 2 : i64}} : tensor<32x32x3x3xf32>
  %5 = dlc.conv2d %3, %4 {dilations = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x32x32x32xf32>, tensor<32x32x3x3xf32>) -> tensor<1x32x32x32xf32>
  %6 = dlc.add %3, %5 : (tensor<1x32x32x32xf32>, tensor<1x32x32x32xf32>) -> tensor<1x32x32x32xf32>
  %7 = dlc.relu %6 : tensor<1x32x32x32xf32>
  %8 = dlc.max_pool2d %7 {kernel = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : tensor<1x32x32x32xf32> -> tensor<1x32x16x16xf32>
  return %8 : tensor<1x32x16x16xf32>
}

// Left alone: weights that are an input (a train step's, or a user's),
// under 0.4 MFLOP an image, under 64 output pixels an image (its
// calls split channels, not rows), under 27 products an output (one input
// channel, 5x5).
// CHECK-LABEL: func.func @unchanged
// CHECK-NOT:   channels_last
// CHECK-NOT:   dlc.transpose
func.func @unchanged(%x: tensor<1x16x32x32xf32>, %w: tensor<32x16x3x3xf32>, %s: tensor<1x64x7x7xf32>, %g: tensor<1x1x28x28xf32>) -> (tensor<1x32x32x32xf32>, tensor<1x32x32x32xf32>, tensor<1x4x32x32xf32>, tensor<1x64x7x7xf32>, tensor<1x16x28x28xf32>) {
  %0 = dlc.conv2d %x, %w {dilations = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x16x32x32xf32>, tensor<32x16x3x3xf32>) -> tensor<1x32x32x32xf32>
  %1 = dlc.param "b" {init = {kind = "zeros"}} : tensor<32xf32>
  %2 = dlc.conv2d %x, %w, %1 {dilations = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x16x32x32xf32>, tensor<32x16x3x3xf32>, tensor<32xf32>) -> tensor<1x32x32x32xf32>
  %3 = dlc.param "small" {init = {kind = "he", seed = 4 : i64}} : tensor<4x16x1x1xf32>
  %4 = dlc.conv2d %x, %3 {dilations = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x16x32x32xf32>, tensor<4x16x1x1xf32>) -> tensor<1x4x32x32xf32>
  %5 = dlc.param "late" {init = {kind = "he", seed = 5 : i64}} : tensor<64x64x3x3xf32>
  %6 = dlc.conv2d %s, %5 {dilations = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x64x7x7xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x7x7xf32>
  %7 = dlc.param "gray" {init = {kind = "he", seed = 6 : i64}} : tensor<16x1x5x5xf32>
  %8 = dlc.conv2d %g, %7 {dilations = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 2, 2, 2, 2>, strides = array<i64: 1, 1>} : (tensor<1x1x28x28xf32>, tensor<16x1x5x5xf32>) -> tensor<1x16x28x28xf32>
  return %0, %2, %4, %6, %8 : tensor<1x32x32x32xf32>, tensor<1x32x32x32xf32>, tensor<1x4x32x32xf32>, tensor<1x64x7x7xf32>, tensor<1x16x28x28xf32>
}

// In a module for a range of batch sizes (DynamicRows.h), the transposes
// carry the mark of the rows they move, so that the kernels yielding them
// run only the rows of the run's size.
// CHECK-LABEL: func.func @range
// CHECK:       dlc.transpose %arg0 {dlc.dynamic_rows, perm = array<i64: 0, 2, 3, 1>}
// CHECK:       dlc.conv2d {{.*}}channels_last{{.*}}dlc.dynamic_rows
// CHECK:       dlc.transpose %{{.*}} {dlc.dynamic_rows, perm = array<i64: 0, 3, 1, 2>}
func.func @range(%arg0: tensor<8x6x14x14xf32> {dlc.dynamic_rows}) -> (tensor<8x16x10x10xf32> {dlc.dynamic_rows}) {
  %0 = dlc.param "w" {init = {kind = "he", seed = 7 : i64}} : tensor<16x6x5x5xf32>
  %1 = dlc.conv2d %arg0, %0 {dilations = array<i64: 1, 1>, dlc.dynamic_rows, groups = 1 : i64, padding = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<8x6x14x14xf32>, tensor<16x6x5x5xf32>) -> tensor<8x16x10x10xf32>
  return %1 : tensor<8x16x10x10xf32>
}

// An RGB 3x3 stem (27 products an output) qualifies.
// CHECK-LABEL: func.func @rgb_stem
// CHECK:       dlc.transpose %arg0 {perm = array<i64: 0, 2, 3, 1>} : tensor<1x3x224x224xf32> -> tensor<1x224x224x3xf32>
// CHECK:       dlc.conv2d {{.*}}channels_last{{.*}} -> tensor<1x112x112x32xf32>
func.func @rgb_stem(%x: tensor<1x3x224x224xf32>) -> tensor<1x32x112x112xf32> {
  %0 = dlc.param "stem" {init = {kind = "he", seed = 9 : i64}} : tensor<32x3x3x3xf32>
  %1 = dlc.conv2d %x, %0 {dilations = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x3x224x224xf32>, tensor<32x3x3x3xf32>) -> tensor<1x32x112x112xf32>
  return %1 : tensor<1x32x112x112xf32>
}

// Grouped and depthwise convolutions qualify whatever their products per
// output (oneDNN has kernels for them; im2col + GEMM would run a GEMM per
// group): 9 products an output here.
// CHECK-LABEL: func.func @depthwise
// CHECK:       dlc.conv2d {{.*}}channels_last{{.*}}groups = 32
func.func @depthwise(%x: tensor<1x32x56x56xf32>) -> tensor<1x32x56x56xf32> {
  %0 = dlc.param "dw" {init = {kind = "he", seed = 8 : i64}} : tensor<32x1x3x3xf32>
  %1 = dlc.conv2d %x, %0 {dilations = array<i64: 1, 1>, groups = 32 : i64, padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x32x56x56xf32>, tensor<32x1x3x3xf32>) -> tensor<1x32x56x56xf32>
  return %1 : tensor<1x32x56x56xf32>
}

// Under 64 output pixels an image, a pointwise (1x1) and a depthwise
// convolution still become channels-last (their NCHW forms cost reorders,
// or a GEMM a channel) and the transposes between them cancel; the 3x3 of
// one group between them stays NCHW (@unchanged's "late").
// With the packed GEMM, the 3x3 is channels-last too: no transpose.
// PACKED-LABEL: func.func @seven_by_seven
// PACKED:       dlc.conv2d {{.*}}channels_last{{.*}} -> tensor<1x7x7x512xf32>
// PACKED:       dlc.conv2d {{.*}}channels_last{{.*}}groups = 512{{.*}} -> tensor<1x7x7x512xf32>
// PACKED-NOT:   dlc.transpose {{.*}} -> tensor<1x512x7x7xf32>
// PACKED:       dlc.conv2d {{.*}}channels_last{{.*}} -> tensor<1x7x7x64xf32>
// CHECK-LABEL: func.func @seven_by_seven
// CHECK:       dlc.conv2d {{.*}}channels_last{{.*}} -> tensor<1x7x7x512xf32>
// CHECK-NEXT:  dlc.relu
// CHECK-NEXT:  dlc.param "dw"
// CHECK-NEXT:  dlc.conv2d {{.*}}channels_last{{.*}}groups = 512{{.*}} -> tensor<1x7x7x512xf32>
// CHECK:       dlc.transpose {{.*}} -> tensor<1x512x7x7xf32>
// CHECK:       dlc.conv2d {{.*}} -> tensor<1x64x7x7xf32>
func.func @seven_by_seven(%x: tensor<1x128x7x7xf32>) -> tensor<1x64x7x7xf32> {
  %0 = dlc.param "pw" {init = {kind = "he", seed = 1 : i64}} : tensor<512x128x1x1xf32>
  %1 = dlc.conv2d %x, %0 {dilations = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x128x7x7xf32>, tensor<512x128x1x1xf32>) -> tensor<1x512x7x7xf32>
  %2 = dlc.relu %1 : tensor<1x512x7x7xf32>
  %3 = dlc.param "dw" {init = {kind = "he", seed = 2 : i64}} : tensor<512x1x3x3xf32>
  %4 = dlc.conv2d %2, %3 {dilations = array<i64: 1, 1>, groups = 512 : i64, padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x512x7x7xf32>, tensor<512x1x3x3xf32>) -> tensor<1x512x7x7xf32>
  %5 = dlc.param "full" {init = {kind = "he", seed = 3 : i64}} : tensor<64x512x3x3xf32>
  %6 = dlc.conv2d %4, %5 {dilations = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x512x7x7xf32>, tensor<64x512x3x3xf32>) -> tensor<1x64x7x7xf32>
  return %6 : tensor<1x64x7x7xf32>
}
