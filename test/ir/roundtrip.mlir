// RUN: dlc-opt %s | dlc-opt | FileCheck %s
// RUN: dlc-opt %s --mlir-print-op-generic | dlc-opt | FileCheck %s

// Every op family in its custom form survives printing and parsing back,
// directly (first RUN) and through the generic form (second RUN). An
// attribute at its default value is elided from the printed form.
//
// softmax and log_softmax appear only with a non-default axis here: the
// custom form without `axis` does not parse back yet (see
// softmax-default-axis.mlir).

// CHECK-LABEL: func.func @sources()
func.func @sources() {
  // CHECK: %{{.+}} = dlc.param "w" {init = {kind = "he", seed = 1 : i64}} : tensor<784x128xf32>
  %w = dlc.param "w" {init = {kind = "he", seed = 1 : i64}} : tensor<784x128xf32>
  // CHECK: %{{.+}} = dlc.param "b" {init = {kind = "zeros"}} : tensor<128xf32>
  %b = dlc.param "b" {init = {kind = "zeros"}} : tensor<128xf32>
  // CHECK: %{{.+}} = dlc.param "steps" {init = {kind = "ones"}} : tensor<i64>
  %o = dlc.param "steps" {init = {kind = "ones"}} : tensor<i64>
  // CHECK: %{{.+}} = dlc.param "n" {init = {kind = "normal", mean = 0.000000e+00 : f64, seed = 7 : i64, std = 2.000000e-02 : f64}} : tensor<16x16xbf16>
  %n = dlc.param "n" {init = {kind = "normal", mean = 0.0 : f64, std = 2.0e-02 : f64, seed = 7 : i64}} : tensor<16x16xbf16>
  // CHECK: %{{.+}} = dlc.param "u" {init = {high = 1 : i64, kind = "uniform", low = -1 : i64}} : tensor<8xf16>
  %u = dlc.param "u" {init = {kind = "uniform", low = -1 : i64, high = 1 : i64}} : tensor<8xf16>
  // CHECK: %{{.+}} = dlc.param "x" {init = {kind = "xavier", seed = 3 : i64}} : tensor<8x8xf32>
  %x = dlc.param "x" {init = {kind = "xavier", seed = 3 : i64}} : tensor<8x8xf32>
  // CHECK: %{{.+}} = dlc.param "f" {init = {key = "fc1.weight", kind = "file", path = "weights.npz"}} : tensor<10x10xf64>
  %f = dlc.param "f" {init = {kind = "file", path = "weights.npz", key = "fc1.weight"}} : tensor<10x10xf64>
  // CHECK: %{{.+}} = dlc.constant dense<5.000000e-01> : tensor<f32>
  %c0 = dlc.constant dense<5.000000e-01> : tensor<f32>
  // CHECK: %{{.+}} = dlc.constant dense<[1, 2, 3]> : tensor<3xi32>
  %c1 = dlc.constant dense<[1, 2, 3]> : tensor<3xi32>
  // CHECK: %{{.+}} = dlc.constant dense<[true, false]> : tensor<2xi1>
  %c2 = dlc.constant dense<[true, false]> : tensor<2xi1>
  // CHECK: %{{.+}} = dlc.iota 0 : tensor<4x4xi32>
  %i0 = dlc.iota 0 : tensor<4x4xi32>
  // CHECK: %{{.+}} = dlc.iota -1 : tensor<4x8xf32>
  %i1 = dlc.iota -1 : tensor<4x8xf32>
  return
}

// CHECK-LABEL: func.func @unary
//  CHECK-SAME:   (%[[X:[^:]+]]: tensor<4x8xf32>, %[[N:[^:]+]]: tensor<4x8xi32>)
func.func @unary(%x: tensor<4x8xf32>, %n: tensor<4x8xi32>) -> (tensor<4x8xf32>, tensor<4x8xi32>) {
  // CHECK: %[[ABS:.+]] = dlc.abs %[[X]] : tensor<4x8xf32>
  // CHECK: %[[EXP:.+]] = dlc.exp %[[ABS]] : tensor<4x8xf32>
  // CHECK: %[[LOG:.+]] = dlc.log %[[EXP]] : tensor<4x8xf32>
  // CHECK: %[[NEG:.+]] = dlc.neg %[[LOG]] : tensor<4x8xf32>
  // CHECK: %[[RELU:.+]] = dlc.relu %[[NEG]] : tensor<4x8xf32>
  // CHECK: %[[RSQRT:.+]] = dlc.rsqrt %[[RELU]] : tensor<4x8xf32>
  // CHECK: %[[SIGMOID:.+]] = dlc.sigmoid %[[RSQRT]] : tensor<4x8xf32>
  // CHECK: %[[SILU:.+]] = dlc.silu %[[SIGMOID]] : tensor<4x8xf32>
  // CHECK: %[[SQRT:.+]] = dlc.sqrt %[[SILU]] : tensor<4x8xf32>
  // CHECK: %[[TANH:.+]] = dlc.tanh %[[SQRT]] : tensor<4x8xf32>
  %0 = dlc.abs %x : tensor<4x8xf32>
  %1 = dlc.exp %0 : tensor<4x8xf32>
  %2 = dlc.log %1 : tensor<4x8xf32>
  %3 = dlc.neg %2 : tensor<4x8xf32>
  %4 = dlc.relu %3 : tensor<4x8xf32>
  %5 = dlc.rsqrt %4 : tensor<4x8xf32>
  %6 = dlc.sigmoid %5 : tensor<4x8xf32>
  %7 = dlc.silu %6 : tensor<4x8xf32>
  %8 = dlc.sqrt %7 : tensor<4x8xf32>
  %9 = dlc.tanh %8 : tensor<4x8xf32>
  // CHECK: %[[IABS:.+]] = dlc.abs %[[N]] : tensor<4x8xi32>
  // CHECK: %[[INEG:.+]] = dlc.neg %[[IABS]] : tensor<4x8xi32>
  // CHECK: %[[IRELU:.+]] = dlc.relu %[[INEG]] : tensor<4x8xi32>
  %10 = dlc.abs %n : tensor<4x8xi32>
  %11 = dlc.neg %10 : tensor<4x8xi32>
  %12 = dlc.relu %11 : tensor<4x8xi32>
  // CHECK: return %[[TANH]], %[[IRELU]]
  return %9, %12 : tensor<4x8xf32>, tensor<4x8xi32>
}

// CHECK-LABEL: func.func @gelu
//  CHECK-SAME:   (%[[X:[^:]+]]: tensor<4x3072xbf16>)
func.func @gelu(%x: tensor<4x3072xbf16>) -> (tensor<4x3072xbf16>, tensor<4x3072xbf16>, tensor<4x3072xbf16>) {
  // The default approximation (none) is elided, whether given or not.
  // CHECK: %[[DEFAULT:.+]] = dlc.gelu %[[X]] : tensor<4x3072xbf16>
  // CHECK: %[[NONE:.+]] = dlc.gelu %[[X]] : tensor<4x3072xbf16>
  // CHECK: %[[TANH:.+]] = dlc.gelu %[[X]] {approximation = #dlc<approximation tanh>} : tensor<4x3072xbf16>
  %0 = dlc.gelu %x : tensor<4x3072xbf16>
  %1 = dlc.gelu %x {approximation = #dlc<approximation none>} : tensor<4x3072xbf16>
  %2 = dlc.gelu %x {approximation = #dlc<approximation tanh>} : tensor<4x3072xbf16>
  // CHECK: return %[[DEFAULT]], %[[NONE]], %[[TANH]]
  return %0, %1, %2 : tensor<4x3072xbf16>, tensor<4x3072xbf16>, tensor<4x3072xbf16>
}

// CHECK-LABEL: func.func @binary
//  CHECK-SAME:   (%[[A:[^:]+]]: tensor<64x128xf32>, %[[B:[^:]+]]: tensor<128xf32>, %[[C:[^:]+]]: tensor<64x1xf32>, %[[S:[^:]+]]: tensor<f32>, %[[I:[^:]+]]: tensor<2x1x3xi64>, %[[J:[^:]+]]: tensor<4x1xi64>)
func.func @binary(%a: tensor<64x128xf32>, %b: tensor<128xf32>, %c: tensor<64x1xf32>, %s: tensor<f32>, %i: tensor<2x1x3xi64>, %j: tensor<4x1xi64>) {
  // CHECK: dlc.add %[[A]], %[[B]] : (tensor<64x128xf32>, tensor<128xf32>) -> tensor<64x128xf32>
  %0 = dlc.add %a, %b : (tensor<64x128xf32>, tensor<128xf32>) -> tensor<64x128xf32>
  // CHECK: dlc.sub %[[C]], %[[B]] : (tensor<64x1xf32>, tensor<128xf32>) -> tensor<64x128xf32>
  %1 = dlc.sub %c, %b : (tensor<64x1xf32>, tensor<128xf32>) -> tensor<64x128xf32>
  // CHECK: dlc.mul %[[A]], %[[S]] : (tensor<64x128xf32>, tensor<f32>) -> tensor<64x128xf32>
  %2 = dlc.mul %a, %s : (tensor<64x128xf32>, tensor<f32>) -> tensor<64x128xf32>
  // CHECK: dlc.div %[[S]], %[[C]] : (tensor<f32>, tensor<64x1xf32>) -> tensor<64x1xf32>
  %3 = dlc.div %s, %c : (tensor<f32>, tensor<64x1xf32>) -> tensor<64x1xf32>
  // CHECK: dlc.max %[[A]], %[[C]] : (tensor<64x128xf32>, tensor<64x1xf32>) -> tensor<64x128xf32>
  %4 = dlc.max %a, %c : (tensor<64x128xf32>, tensor<64x1xf32>) -> tensor<64x128xf32>
  // CHECK: dlc.min %[[B]], %[[A]] : (tensor<128xf32>, tensor<64x128xf32>) -> tensor<64x128xf32>
  %5 = dlc.min %b, %a : (tensor<128xf32>, tensor<64x128xf32>) -> tensor<64x128xf32>
  // CHECK: dlc.pow %[[A]], %[[A]] : (tensor<64x128xf32>, tensor<64x128xf32>) -> tensor<64x128xf32>
  %6 = dlc.pow %a, %a : (tensor<64x128xf32>, tensor<64x128xf32>) -> tensor<64x128xf32>
  // CHECK: dlc.add %[[I]], %[[J]] : (tensor<2x1x3xi64>, tensor<4x1xi64>) -> tensor<2x4x3xi64>
  %7 = dlc.add %i, %j : (tensor<2x1x3xi64>, tensor<4x1xi64>) -> tensor<2x4x3xi64>
  return
}

// CHECK-LABEL: func.func @compare
//  CHECK-SAME:   (%[[A:[^:]+]]: tensor<8x1xi32>, %[[B:[^:]+]]: tensor<8xi32>, %[[F:[^:]+]]: tensor<3xf16>, %[[P:[^:]+]]: tensor<3xi1>)
func.func @compare(%a: tensor<8x1xi32>, %b: tensor<8xi32>, %f: tensor<3xf16>, %p: tensor<3xi1>) {
  // CHECK: dlc.compare eq, %[[A]], %[[B]] : (tensor<8x1xi32>, tensor<8xi32>) -> tensor<8x8xi1>
  %0 = dlc.compare eq, %a, %b : (tensor<8x1xi32>, tensor<8xi32>) -> tensor<8x8xi1>
  // CHECK: dlc.compare ne, %[[A]], %[[B]] : (tensor<8x1xi32>, tensor<8xi32>) -> tensor<8x8xi1>
  %1 = dlc.compare ne, %a, %b : (tensor<8x1xi32>, tensor<8xi32>) -> tensor<8x8xi1>
  // CHECK: dlc.compare lt, %[[F]], %[[F]] : (tensor<3xf16>, tensor<3xf16>) -> tensor<3xi1>
  %2 = dlc.compare lt, %f, %f : (tensor<3xf16>, tensor<3xf16>) -> tensor<3xi1>
  // CHECK: dlc.compare le, %[[F]], %[[F]] : (tensor<3xf16>, tensor<3xf16>) -> tensor<3xi1>
  %3 = dlc.compare le, %f, %f : (tensor<3xf16>, tensor<3xf16>) -> tensor<3xi1>
  // CHECK: dlc.compare gt, %[[B]], %[[A]] : (tensor<8xi32>, tensor<8x1xi32>) -> tensor<8x8xi1>
  %4 = dlc.compare gt, %b, %a : (tensor<8xi32>, tensor<8x1xi32>) -> tensor<8x8xi1>
  // CHECK: dlc.compare ge, %[[A]], %[[A]] : (tensor<8x1xi32>, tensor<8x1xi32>) -> tensor<8x1xi1>
  %5 = dlc.compare ge, %a, %a : (tensor<8x1xi32>, tensor<8x1xi32>) -> tensor<8x1xi1>
  // CHECK: dlc.compare eq, %[[P]], %[[P]] : (tensor<3xi1>, tensor<3xi1>) -> tensor<3xi1>
  %6 = dlc.compare eq, %p, %p : (tensor<3xi1>, tensor<3xi1>) -> tensor<3xi1>
  return
}

// CHECK-LABEL: func.func @select
//  CHECK-SAME:   (%[[M:[^:]+]]: tensor<8x8xi1>, %[[S:[^:]+]]: tensor<2x8x8xf32>, %[[Z:[^:]+]]: tensor<f32>)
func.func @select(%m: tensor<8x8xi1>, %s: tensor<2x8x8xf32>, %z: tensor<f32>) {
  // CHECK: dlc.select %[[M]], %[[S]], %[[Z]] : (tensor<8x8xi1>, tensor<2x8x8xf32>, tensor<f32>) -> tensor<2x8x8xf32>
  %0 = dlc.select %m, %s, %z : (tensor<8x8xi1>, tensor<2x8x8xf32>, tensor<f32>) -> tensor<2x8x8xf32>
  // CHECK: dlc.select %[[M]], %[[Z]], %[[Z]] : (tensor<8x8xi1>, tensor<f32>, tensor<f32>) -> tensor<8x8xf32>
  %1 = dlc.select %m, %z, %z : (tensor<8x8xi1>, tensor<f32>, tensor<f32>) -> tensor<8x8xf32>
  return
}

// CHECK-LABEL: func.func @cast
//  CHECK-SAME:   (%[[X:[^:]+]]: tensor<4xf32>, %[[I:[^:]+]]: tensor<2x3xi64>)
func.func @cast(%x: tensor<4xf32>, %i: tensor<2x3xi64>) {
  // CHECK: dlc.cast %[[X]] : tensor<4xf32> -> tensor<4xf16>
  %0 = dlc.cast %x : tensor<4xf32> -> tensor<4xf16>
  // CHECK: dlc.cast %[[X]] : tensor<4xf32> -> tensor<4xbf16>
  %1 = dlc.cast %x : tensor<4xf32> -> tensor<4xbf16>
  // CHECK: dlc.cast %[[X]] : tensor<4xf32> -> tensor<4xi32>
  %2 = dlc.cast %x : tensor<4xf32> -> tensor<4xi32>
  // CHECK: dlc.cast %[[I]] : tensor<2x3xi64> -> tensor<2x3xi1>
  %3 = dlc.cast %i : tensor<2x3xi64> -> tensor<2x3xi1>
  // CHECK: dlc.cast %[[I]] : tensor<2x3xi64> -> tensor<2x3xf64>
  %4 = dlc.cast %i : tensor<2x3xi64> -> tensor<2x3xf64>
  return
}

// CHECK-LABEL: func.func @matmul
//  CHECK-SAME:   (%[[X:[^:]+]]: tensor<4x784xf32>, %[[W:[^:]+]]: tensor<784x128xf32>, %[[WT:[^:]+]]: tensor<128x784xf32>, %[[XT:[^:]+]]: tensor<784x4xf32>, %[[Q:[^:]+]]: tensor<1x12x128x64xf32>, %[[K:[^:]+]]: tensor<1x12x128x64xf32>, %[[V:[^:]+]]: tensor<64x32xf32>, %[[B3:[^:]+]]: tensor<2x1x4x5xf16>, %[[C3:[^:]+]]: tensor<3x5x6xf16>, %[[I:[^:]+]]: tensor<2x3xi32>, %[[J:[^:]+]]: tensor<3x2xi32>)
func.func @matmul(%x: tensor<4x784xf32>, %w: tensor<784x128xf32>, %wt: tensor<128x784xf32>, %xt: tensor<784x4xf32>, %q: tensor<1x12x128x64xf32>, %k: tensor<1x12x128x64xf32>, %v: tensor<64x32xf32>, %b: tensor<2x1x4x5xf16>, %c: tensor<3x5x6xf16>, %i: tensor<2x3xi32>, %j: tensor<3x2xi32>) {
  // CHECK: dlc.matmul %[[X]], %[[W]] : (tensor<4x784xf32>, tensor<784x128xf32>) -> tensor<4x128xf32>
  %0 = dlc.matmul %x, %w : (tensor<4x784xf32>, tensor<784x128xf32>) -> tensor<4x128xf32>
  // CHECK: dlc.matmul %[[X]], %[[WT]] {transpose_b = true} : (tensor<4x784xf32>, tensor<128x784xf32>) -> tensor<4x128xf32>
  %1 = dlc.matmul %x, %wt {transpose_b = true} : (tensor<4x784xf32>, tensor<128x784xf32>) -> tensor<4x128xf32>
  // CHECK: dlc.matmul %[[XT]], %[[W]] {transpose_a = true} : (tensor<784x4xf32>, tensor<784x128xf32>) -> tensor<4x128xf32>
  %2 = dlc.matmul %xt, %w {transpose_a = true} : (tensor<784x4xf32>, tensor<784x128xf32>) -> tensor<4x128xf32>
  // CHECK: dlc.matmul %[[XT]], %[[WT]] {transpose_a = true, transpose_b = true} : (tensor<784x4xf32>, tensor<128x784xf32>) -> tensor<4x128xf32>
  %3 = dlc.matmul %xt, %wt {transpose_a = true, transpose_b = true} : (tensor<784x4xf32>, tensor<128x784xf32>) -> tensor<4x128xf32>
  // Explicit defaults are elided.
  // CHECK: dlc.matmul %[[X]], %[[W]] : (tensor<4x784xf32>, tensor<784x128xf32>) -> tensor<4x128xf32>
  %4 = dlc.matmul %x, %w {transpose_a = false, transpose_b = false} : (tensor<4x784xf32>, tensor<784x128xf32>) -> tensor<4x128xf32>
  // Batched, as attention scores q @ k^T.
  // CHECK: dlc.matmul %[[Q]], %[[K]] {transpose_b = true} : (tensor<1x12x128x64xf32>, tensor<1x12x128x64xf32>) -> tensor<1x12x128x128xf32>
  %5 = dlc.matmul %q, %k {transpose_b = true} : (tensor<1x12x128x64xf32>, tensor<1x12x128x64xf32>) -> tensor<1x12x128x128xf32>
  // Batch dimensions broadcast: [1, 12] with [], and [2, 1] with [3].
  // CHECK: dlc.matmul %[[Q]], %[[V]] : (tensor<1x12x128x64xf32>, tensor<64x32xf32>) -> tensor<1x12x128x32xf32>
  %6 = dlc.matmul %q, %v : (tensor<1x12x128x64xf32>, tensor<64x32xf32>) -> tensor<1x12x128x32xf32>
  // CHECK: dlc.matmul %[[B3]], %[[C3]] : (tensor<2x1x4x5xf16>, tensor<3x5x6xf16>) -> tensor<2x3x4x6xf16>
  %7 = dlc.matmul %b, %c : (tensor<2x1x4x5xf16>, tensor<3x5x6xf16>) -> tensor<2x3x4x6xf16>
  // CHECK: dlc.matmul %[[I]], %[[J]] : (tensor<2x3xi32>, tensor<3x2xi32>) -> tensor<2x2xi32>
  %8 = dlc.matmul %i, %j : (tensor<2x3xi32>, tensor<3x2xi32>) -> tensor<2x2xi32>
  return
}

// CHECK-LABEL: func.func @conv2d
//  CHECK-SAME:   (%[[X:[^:]+]]: tensor<1x1x28x28xf32>, %[[W:[^:]+]]: tensor<6x1x5x5xf32>, %[[B:[^:]+]]: tensor<6xf32>, %[[Y:[^:]+]]: tensor<2x8x16x16xf32>, %[[G:[^:]+]]: tensor<4x4x3x3xf32>, %[[D:[^:]+]]: tensor<8x1x3x3xf32>)
func.func @conv2d(%x: tensor<1x1x28x28xf32>, %w: tensor<6x1x5x5xf32>, %b: tensor<6xf32>, %y: tensor<2x8x16x16xf32>, %g: tensor<4x4x3x3xf32>, %d: tensor<8x1x3x3xf32>) {
  // CHECK: dlc.conv2d %[[X]], %[[W]] {dilations = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x1x28x28xf32>, tensor<6x1x5x5xf32>) -> tensor<1x6x24x24xf32>
  %0 = dlc.conv2d %x, %w {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x1x28x28xf32>, tensor<6x1x5x5xf32>) -> tensor<1x6x24x24xf32>
  // CHECK: dlc.conv2d %[[X]], %[[W]], %[[B]] {dilations = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 2, 2, 2, 2>, strides = array<i64: 1, 1>} : (tensor<1x1x28x28xf32>, tensor<6x1x5x5xf32>, tensor<6xf32>) -> tensor<1x6x28x28xf32>
  %1 = dlc.conv2d %x, %w, %b {strides = array<i64: 1, 1>, padding = array<i64: 2, 2, 2, 2>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x1x28x28xf32>, tensor<6x1x5x5xf32>, tensor<6xf32>) -> tensor<1x6x28x28xf32>
  // Two groups of 4 input channels, strided.
  // CHECK: dlc.conv2d %[[Y]], %[[G]] {dilations = array<i64: 1, 1>, groups = 2 : i64, padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<2x8x16x16xf32>, tensor<4x4x3x3xf32>) -> tensor<2x4x8x8xf32>
  %2 = dlc.conv2d %y, %g {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 2 : i64} : (tensor<2x8x16x16xf32>, tensor<4x4x3x3xf32>) -> tensor<2x4x8x8xf32>
  // Depthwise, dilated along H, padded along W only.
  // CHECK: dlc.conv2d %[[Y]], %[[D]] {dilations = array<i64: 2, 1>, groups = 8 : i64, padding = array<i64: 0, 1, 0, 1>, strides = array<i64: 1, 1>} : (tensor<2x8x16x16xf32>, tensor<8x1x3x3xf32>) -> tensor<2x8x12x16xf32>
  %3 = dlc.conv2d %y, %d {strides = array<i64: 1, 1>, padding = array<i64: 0, 1, 0, 1>, dilations = array<i64: 2, 1>, groups = 8 : i64} : (tensor<2x8x16x16xf32>, tensor<8x1x3x3xf32>) -> tensor<2x8x12x16xf32>
  return
}

// CHECK-LABEL: func.func @pool
//  CHECK-SAME:   (%[[X:[^:]+]]: tensor<1x6x28x28xf32>)
func.func @pool(%x: tensor<1x6x28x28xf32>) {
  // CHECK: dlc.max_pool2d %[[X]] {kernel = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : tensor<1x6x28x28xf32> -> tensor<1x6x14x14xf32>
  %0 = dlc.max_pool2d %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>} : tensor<1x6x28x28xf32> -> tensor<1x6x14x14xf32>
  // CHECK: dlc.max_pool2d %[[X]] {kernel = array<i64: 3, 3>, padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : tensor<1x6x28x28xf32> -> tensor<1x6x14x14xf32>
  %1 = dlc.max_pool2d %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : tensor<1x6x28x28xf32> -> tensor<1x6x14x14xf32>
  // CHECK: dlc.avg_pool2d %[[X]] {kernel = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : tensor<1x6x28x28xf32> -> tensor<1x6x14x14xf32>
  %2 = dlc.avg_pool2d %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>, count_include_pad = false} : tensor<1x6x28x28xf32> -> tensor<1x6x14x14xf32>
  // CHECK: dlc.avg_pool2d %[[X]] {count_include_pad = true, kernel = array<i64: 3, 2>, padding = array<i64: 1, 0, 1, 0>, strides = array<i64: 1, 1>} : tensor<1x6x28x28xf32> -> tensor<1x6x28x27xf32>
  %3 = dlc.avg_pool2d %x {kernel = array<i64: 3, 2>, strides = array<i64: 1, 1>, padding = array<i64: 1, 0, 1, 0>, count_include_pad = true} : tensor<1x6x28x28xf32> -> tensor<1x6x28x27xf32>
  return
}

// CHECK-LABEL: func.func @reductions
//  CHECK-SAME:   (%[[X:[^:]+]]: tensor<2x3x4xf32>, %[[I:[^:]+]]: tensor<5x6xi32>)
func.func @reductions(%x: tensor<2x3x4xf32>, %i: tensor<5x6xi32>) {
  // CHECK: dlc.reduce_sum %[[X]] {axes = array<i64: -1>, keepdims = true} : tensor<2x3x4xf32> -> tensor<2x3x1xf32>
  %0 = dlc.reduce_sum %x {axes = array<i64: -1>, keepdims = true} : tensor<2x3x4xf32> -> tensor<2x3x1xf32>
  // CHECK: dlc.reduce_mean %[[X]] {axes = array<i64: 0, -1>} : tensor<2x3x4xf32> -> tensor<3xf32>
  %1 = dlc.reduce_mean %x {axes = array<i64: 0, -1>, keepdims = false} : tensor<2x3x4xf32> -> tensor<3xf32>
  // CHECK: dlc.reduce_max %[[X]] {axes = array<i64: 2, 0, 1>} : tensor<2x3x4xf32> -> tensor<f32>
  %2 = dlc.reduce_max %x {axes = array<i64: 2, 0, 1>} : tensor<2x3x4xf32> -> tensor<f32>
  // No axes: nothing is reduced.
  // CHECK: dlc.reduce_min %[[X]] {axes = array<i64>} : tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  %3 = dlc.reduce_min %x {axes = array<i64>} : tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  // CHECK: dlc.reduce_sum %[[I]] {axes = array<i64: 1>} : tensor<5x6xi32> -> tensor<5xi32>
  %4 = dlc.reduce_sum %i {axes = array<i64: 1>} : tensor<5x6xi32> -> tensor<5xi32>
  // CHECK: dlc.reduce_mean %[[I]] {axes = array<i64: -2>, keepdims = true} : tensor<5x6xi32> -> tensor<1x6xi32>
  %5 = dlc.reduce_mean %i {axes = array<i64: -2>, keepdims = true} : tensor<5x6xi32> -> tensor<1x6xi32>
  // CHECK: dlc.reduce_min %[[I]] {axes = array<i64: 0, 1>, keepdims = true} : tensor<5x6xi32> -> tensor<1x1xi32>
  %6 = dlc.reduce_min %i {axes = array<i64: 0, 1>, keepdims = true} : tensor<5x6xi32> -> tensor<1x1xi32>
  return
}

// CHECK-LABEL: func.func @softmax
//  CHECK-SAME:   (%[[X:[^:]+]]: tensor<1x12x128x128xf32>)
func.func @softmax(%x: tensor<1x12x128x128xf32>) -> (tensor<1x12x128x128xf32>, tensor<1x12x128x128xf32>) {
  // CHECK: %[[P:.+]] = dlc.softmax %[[X]] {axis = 3 : i64} : tensor<1x12x128x128xf32>
  %0 = dlc.softmax %x {axis = 3 : i64} : tensor<1x12x128x128xf32>
  // CHECK: %[[LP:.+]] = dlc.log_softmax %[[P]] {axis = -2 : i64} : tensor<1x12x128x128xf32>
  %1 = dlc.log_softmax %0 {axis = -2 : i64} : tensor<1x12x128x128xf32>
  // CHECK: %[[Q:.+]] = dlc.softmax %[[LP]] {axis = 1 : i64} : tensor<1x12x128x128xf32>
  %2 = dlc.softmax %1 {axis = 1 : i64} : tensor<1x12x128x128xf32>
  // CHECK: %[[LQ:.+]] = dlc.log_softmax %[[Q]] {axis = 0 : i64} : tensor<1x12x128x128xf32>
  %3 = dlc.log_softmax %2 {axis = 0 : i64} : tensor<1x12x128x128xf32>
  // CHECK: return %[[Q]], %[[LQ]]
  return %2, %3 : tensor<1x12x128x128xf32>, tensor<1x12x128x128xf32>
}

// CHECK-LABEL: func.func @layer_norm
//  CHECK-SAME:   (%[[X:[^:]+]]: tensor<1x128x768xf32>, %[[G:[^:]+]]: tensor<768xf32>, %[[B:[^:]+]]: tensor<768xf32>, %[[G2:[^:]+]]: tensor<128x768xf32>)
func.func @layer_norm(%x: tensor<1x128x768xf32>, %g: tensor<768xf32>, %b: tensor<768xf32>, %g2: tensor<128x768xf32>) {
  // CHECK: dlc.layer_norm %[[X]], %[[G]], %[[B]] : (tensor<1x128x768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<1x128x768xf32>
  %0 = dlc.layer_norm %x, %g, %b {axis = -1 : i64, epsilon = 1.0e-05 : f64} : (tensor<1x128x768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<1x128x768xf32>
  // CHECK: dlc.layer_norm %[[X]], %[[G]] {epsilon = 9.9999999999999998E-13 : f64} : (tensor<1x128x768xf32>, tensor<768xf32>) -> tensor<1x128x768xf32>
  %1 = dlc.layer_norm %x, %g {epsilon = 1.0e-12 : f64} : (tensor<1x128x768xf32>, tensor<768xf32>) -> tensor<1x128x768xf32>
  // Normalised over the last two dimensions.
  // CHECK: dlc.layer_norm %[[X]], %[[G2]] {axis = 1 : i64} : (tensor<1x128x768xf32>, tensor<128x768xf32>) -> tensor<1x128x768xf32>
  %2 = dlc.layer_norm %x, %g2 {axis = 1 : i64} : (tensor<1x128x768xf32>, tensor<128x768xf32>) -> tensor<1x128x768xf32>
  return
}

// CHECK-LABEL: func.func @rms_norm
//  CHECK-SAME:   (%[[X:[^:]+]]: tensor<2x16x512xf16>, %[[G:[^:]+]]: tensor<512xf16>)
func.func @rms_norm(%x: tensor<2x16x512xf16>, %g: tensor<512xf16>) {
  // CHECK: dlc.rms_norm %[[X]], %[[G]] : (tensor<2x16x512xf16>, tensor<512xf16>) -> tensor<2x16x512xf16>
  %0 = dlc.rms_norm %x, %g : (tensor<2x16x512xf16>, tensor<512xf16>) -> tensor<2x16x512xf16>
  // CHECK: dlc.rms_norm %[[X]], %[[G]] {axis = 2 : i64, epsilon = 1.000000e-05 : f64} : (tensor<2x16x512xf16>, tensor<512xf16>) -> tensor<2x16x512xf16>
  %1 = dlc.rms_norm %x, %g {axis = 2 : i64, epsilon = 1.0e-05 : f64} : (tensor<2x16x512xf16>, tensor<512xf16>) -> tensor<2x16x512xf16>
  return
}

// CHECK-LABEL: func.func @reshape_transpose
//  CHECK-SAME:   (%[[X:[^:]+]]: tensor<1x128x768xf32>)
func.func @reshape_transpose(%x: tensor<1x128x768xf32>) -> tensor<1x12x64x128xf32> {
  // CHECK: %[[HEADS:.+]] = dlc.reshape %[[X]] : tensor<1x128x768xf32> -> tensor<1x128x12x64xf32>
  %0 = dlc.reshape %x : tensor<1x128x768xf32> -> tensor<1x128x12x64xf32>
  // CHECK: %[[T:.+]] = dlc.transpose %[[HEADS]] {perm = array<i64: 0, 2, 3, 1>} : tensor<1x128x12x64xf32> -> tensor<1x12x64x128xf32>
  %1 = dlc.transpose %0 {perm = array<i64: 0, 2, 3, 1>} : tensor<1x128x12x64xf32> -> tensor<1x12x64x128xf32>
  // CHECK: return %[[T]]
  return %1 : tensor<1x12x64x128xf32>
}

// CHECK-LABEL: func.func @broadcast_to
//  CHECK-SAME:   (%[[V:[^:]+]]: tensor<128xf32>, %[[C:[^:]+]]: tensor<2x1xi1>)
func.func @broadcast_to(%v: tensor<128xf32>, %c: tensor<2x1xi1>) {
  // CHECK: dlc.broadcast_to %[[V]] : tensor<128xf32> -> tensor<64x128xf32>
  %0 = dlc.broadcast_to %v : tensor<128xf32> -> tensor<64x128xf32>
  // CHECK: dlc.broadcast_to %[[C]] : tensor<2x1xi1> -> tensor<3x2x7xi1>
  %1 = dlc.broadcast_to %c : tensor<2x1xi1> -> tensor<3x2x7xi1>
  return
}

// CHECK-LABEL: func.func @concat
//  CHECK-SAME:   (%[[A:[^:]+]]: tensor<2x3xf32>, %[[B:[^:]+]]: tensor<2x5xf32>, %[[C:[^:]+]]: tensor<2x1xf32>)
func.func @concat(%a: tensor<2x3xf32>, %b: tensor<2x5xf32>, %c: tensor<2x1xf32>) {
  // CHECK: dlc.concat %[[A]], %[[B]], %[[C]] {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x5xf32>, tensor<2x1xf32>) -> tensor<2x9xf32>
  %0 = dlc.concat %a, %b, %c {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x5xf32>, tensor<2x1xf32>) -> tensor<2x9xf32>
  // CHECK: dlc.concat %[[A]], %[[A]], %[[A]] {axis = -2 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<6x3xf32>
  %1 = dlc.concat %a, %a, %a {axis = -2 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<6x3xf32>
  return
}

// CHECK-LABEL: func.func @slice
//  CHECK-SAME:   (%[[X:[^:]+]]: tensor<4x8xf32>)
func.func @slice(%x: tensor<4x8xf32>) {
  // CHECK: dlc.slice %[[X]] {limits = array<i64: 4, 8>, starts = array<i64: 0, 2>, strides = array<i64: 1, 2>} : tensor<4x8xf32> -> tensor<4x3xf32>
  %0 = dlc.slice %x {starts = array<i64: 0, 2>, limits = array<i64: 4, 8>, strides = array<i64: 1, 2>} : tensor<4x8xf32> -> tensor<4x3xf32>
  // An empty range gives a dimension of size 0.
  // CHECK: dlc.slice %[[X]] {limits = array<i64: 1, 8>, starts = array<i64: 1, 3>, strides = array<i64: 1, 5>} : tensor<4x8xf32> -> tensor<0x1xf32>
  %1 = dlc.slice %x {starts = array<i64: 1, 3>, limits = array<i64: 1, 8>, strides = array<i64: 1, 5>} : tensor<4x8xf32> -> tensor<0x1xf32>
  return
}

// CHECK-LABEL: func.func @gather
//  CHECK-SAME:   (%[[X:[^:]+]]: tensor<4x8xf32>, %[[I:[^:]+]]: tensor<3xi64>, %[[J:[^:]+]]: tensor<2x2xi32>, %[[K:[^:]+]]: tensor<i32>)
func.func @gather(%x: tensor<4x8xf32>, %i: tensor<3xi64>, %j: tensor<2x2xi32>, %k: tensor<i32>) {
  // CHECK: dlc.gather %[[X]], %[[I]] {axis = 1 : i64} : (tensor<4x8xf32>, tensor<3xi64>) -> tensor<4x3xf32>
  %0 = dlc.gather %x, %i {axis = 1 : i64} : (tensor<4x8xf32>, tensor<3xi64>) -> tensor<4x3xf32>
  // CHECK: dlc.gather %[[X]], %[[J]] {axis = -2 : i64} : (tensor<4x8xf32>, tensor<2x2xi32>) -> tensor<2x2x8xf32>
  %1 = dlc.gather %x, %j {axis = -2 : i64} : (tensor<4x8xf32>, tensor<2x2xi32>) -> tensor<2x2x8xf32>
  // CHECK: dlc.gather %[[X]], %[[K]] {axis = 0 : i64} : (tensor<4x8xf32>, tensor<i32>) -> tensor<8xf32>
  %2 = dlc.gather %x, %k {axis = 0 : i64} : (tensor<4x8xf32>, tensor<i32>) -> tensor<8xf32>
  return
}

// CHECK-LABEL: func.func @embedding
//  CHECK-SAME:   (%[[WTE:[^:]+]]: tensor<50257x768xf32>, %[[IDS:[^:]+]]: tensor<1x128xi32>, %[[ID:[^:]+]]: tensor<i64>)
func.func @embedding(%wte: tensor<50257x768xf32>, %ids: tensor<1x128xi32>, %id: tensor<i64>) {
  // CHECK: dlc.embedding %[[WTE]], %[[IDS]] : (tensor<50257x768xf32>, tensor<1x128xi32>) -> tensor<1x128x768xf32>
  %0 = dlc.embedding %wte, %ids : (tensor<50257x768xf32>, tensor<1x128xi32>) -> tensor<1x128x768xf32>
  // CHECK: dlc.embedding %[[WTE]], %[[ID]] : (tensor<50257x768xf32>, tensor<i64>) -> tensor<768xf32>
  %1 = dlc.embedding %wte, %id : (tensor<50257x768xf32>, tensor<i64>) -> tensor<768xf32>
  return
}

// CHECK-LABEL: func.func @pad
//  CHECK-SAME:   (%[[A:[^:]+]]: tensor<2x3xf32>, %[[N:[^:]+]]: tensor<2x3xi32>)
func.func @pad(%a: tensor<2x3xf32>, %n: tensor<2x3xi32>) {
  // CHECK: dlc.pad %[[A]] {high = array<i64: 0, 2>, low = array<i64: 0, 1>} : tensor<2x3xf32> -> tensor<2x6xf32>
  %0 = dlc.pad %a {low = array<i64: 0, 1>, high = array<i64: 0, 2>, value = 0.0 : f64} : tensor<2x3xf32> -> tensor<2x6xf32>
  // CHECK: dlc.pad %[[N]] {high = array<i64: 2, 0>, low = array<i64: 1, 0>, value = -1.000000e+00 : f64} : tensor<2x3xi32> -> tensor<5x3xi32>
  %1 = dlc.pad %n {low = array<i64: 1, 0>, high = array<i64: 2, 0>, value = -1.0 : f64} : tensor<2x3xi32> -> tensor<5x3xi32>
  return
}

// CHECK-LABEL: func.func @cross_entropy
//  CHECK-SAME:   (%[[LOGITS:[^:]+]]: tensor<64x10xf32>, %[[LABELS:[^:]+]]: tensor<64xi32>, %[[SEQ:[^:]+]]: tensor<2x16x100xbf16>, %[[TOK:[^:]+]]: tensor<2x16xi64>)
func.func @cross_entropy(%logits: tensor<64x10xf32>, %labels: tensor<64xi32>, %seq: tensor<2x16x100xbf16>, %tok: tensor<2x16xi64>) {
  // The default reduction (mean) is elided.
  // CHECK: dlc.cross_entropy %[[LOGITS]], %[[LABELS]] : (tensor<64x10xf32>, tensor<64xi32>) -> tensor<f32>
  %0 = dlc.cross_entropy %logits, %labels {reduction = #dlc<reduction mean>} : (tensor<64x10xf32>, tensor<64xi32>) -> tensor<f32>
  // CHECK: dlc.cross_entropy %[[SEQ]], %[[TOK]] {reduction = #dlc<reduction sum>} : (tensor<2x16x100xbf16>, tensor<2x16xi64>) -> tensor<bf16>
  %1 = dlc.cross_entropy %seq, %tok {reduction = #dlc<reduction sum>} : (tensor<2x16x100xbf16>, tensor<2x16xi64>) -> tensor<bf16>
  // CHECK: dlc.cross_entropy %[[SEQ]], %[[TOK]] {reduction = #dlc<reduction none>} : (tensor<2x16x100xbf16>, tensor<2x16xi64>) -> tensor<2x16xbf16>
  %2 = dlc.cross_entropy %seq, %tok {reduction = #dlc<reduction none>} : (tensor<2x16x100xbf16>, tensor<2x16xi64>) -> tensor<2x16xbf16>
  // The default label_smoothing (0.0) and ignore_index (-100) are elided.
  // CHECK: dlc.cross_entropy %[[LOGITS]], %[[LABELS]] : (tensor<64x10xf32>, tensor<64xi32>) -> tensor<f32>
  %3 = dlc.cross_entropy %logits, %labels {label_smoothing = 0.0 : f64, ignore_index = -100 : i64} : (tensor<64x10xf32>, tensor<64xi32>) -> tensor<f32>
  // CHECK: dlc.cross_entropy %[[LOGITS]], %[[LABELS]] {ignore_index = 0 : i64, label_smoothing = 1.000000e-01 : f64} : (tensor<64x10xf32>, tensor<64xi32>) -> tensor<f32>
  %4 = dlc.cross_entropy %logits, %labels {label_smoothing = 0.1 : f64, ignore_index = 0 : i64} : (tensor<64x10xf32>, tensor<64xi32>) -> tensor<f32>
  return
}

// CHECK-LABEL: func.func @mse
//  CHECK-SAME:   (%[[P:[^:]+]]: tensor<64x1xf32>, %[[T:[^:]+]]: tensor<64x1xf32>)
func.func @mse(%p: tensor<64x1xf32>, %t: tensor<64x1xf32>) {
  // CHECK: dlc.mse %[[P]], %[[T]] : (tensor<64x1xf32>, tensor<64x1xf32>) -> tensor<f32>
  %0 = dlc.mse %p, %t : (tensor<64x1xf32>, tensor<64x1xf32>) -> tensor<f32>
  // CHECK: dlc.mse %[[P]], %[[T]] {reduction = #dlc<reduction sum>} : (tensor<64x1xf32>, tensor<64x1xf32>) -> tensor<f32>
  %1 = dlc.mse %p, %t {reduction = #dlc<reduction sum>} : (tensor<64x1xf32>, tensor<64x1xf32>) -> tensor<f32>
  // CHECK: dlc.mse %[[P]], %[[T]] {reduction = #dlc<reduction none>} : (tensor<64x1xf32>, tensor<64x1xf32>) -> tensor<64x1xf32>
  %2 = dlc.mse %p, %t {reduction = #dlc<reduction none>} : (tensor<64x1xf32>, tensor<64x1xf32>) -> tensor<64x1xf32>
  return
}
