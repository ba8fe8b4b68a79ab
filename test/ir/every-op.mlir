// RUN: dlc-opt %s | dlc-opt | FileCheck %s
//
// One function per op of the dialect, each using its op once on small
// shapes (the op is the function's name), and variants of some ops named
// `@<op>_<variant>`: the data-only dtypes i8 and u8, an attribute's other
// cases. test/unit/ir/OpFactsTest.cpp reads this file: every registered op
// must have a sample here, and every sample must declare its facts (role,
// FLOPs, scalar function) and give the same values on the oracle and the
// CPU code generator; test/unit/ir/VjpTest.cpp checks each derivative rule
// on its samples. Inputs are drawn by those tests: floats in [0.5, 1.5],
// integers in {0, 1}.
//
// CHECK-COUNT-74: func.func @

// ----- Sources

func.func @constant() -> tensor<2xf32> {
  %0 = dlc.constant dense<[1.5, -2.0]> : tensor<2xf32>
  return %0 : tensor<2xf32>
}
func.func @iota() -> tensor<2x3xi32> {
  %0 = dlc.iota 1 : tensor<2x3xi32>
  return %0 : tensor<2x3xi32>
}
func.func @param() -> tensor<3x2xf32> {
  %0 = dlc.param "w" {init = {kind = "normal", seed = 3 : i64, std = 1.0 : f64}} : tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// ----- Element-wise

func.func @abs(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = dlc.abs %x : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
func.func @atan(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = dlc.atan %x : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
func.func @ceil(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = dlc.ceil %x : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
func.func @cos(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = dlc.cos %x : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
func.func @erf(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = dlc.erf %x : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
func.func @exp(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = dlc.exp %x : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
func.func @floor(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = dlc.floor %x : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
func.func @gelu(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = dlc.gelu %x {approximation = #dlc<approximation tanh>} : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
func.func @log(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = dlc.log %x : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
func.func @neg(%x: tensor<2x3xi32>) -> tensor<2x3xi32> {
  %0 = dlc.neg %x : tensor<2x3xi32>
  return %0 : tensor<2x3xi32>
}
func.func @relu(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = dlc.relu %x : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
func.func @round(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = dlc.round %x : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
func.func @rsqrt(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = dlc.rsqrt %x : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
func.func @sigmoid(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = dlc.sigmoid %x : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
func.func @silu(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = dlc.silu %x : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
func.func @sin(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = dlc.sin %x : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
func.func @softplus(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = dlc.softplus %x : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
func.func @sqrt(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = dlc.sqrt %x : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
func.func @tanh(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = dlc.tanh %x : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
func.func @add(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
  %0 = dlc.add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
func.func @div(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = dlc.div %a, %b : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
func.func @max(%a: tensor<2x3xf32>, %b: tensor<2x1xf32>) -> tensor<2x3xf32> {
  %0 = dlc.max %a, %b : (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
func.func @min(%a: tensor<2x3xi64>, %b: tensor<2x3xi64>) -> tensor<2x3xi64> {
  %0 = dlc.min %a, %b : (tensor<2x3xi64>, tensor<2x3xi64>) -> tensor<2x3xi64>
  return %0 : tensor<2x3xi64>
}
func.func @mul(%a: tensor<2x3xf32>, %b: tensor<f32>) -> tensor<2x3xf32> {
  %0 = dlc.mul %a, %b : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
func.func @pow(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = dlc.pow %a, %b : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
func.func @sub(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = dlc.sub %a, %b : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
func.func @cast(%x: tensor<2x3xf32>) -> tensor<2x3xf16> {
  %0 = dlc.cast %x : tensor<2x3xf32> -> tensor<2x3xf16>
  return %0 : tensor<2x3xf16>
}
// The data-only dtypes: u8 to float is exact; float to i8 or u8 truncates
// and wraps modulo 256 (x * 170 is in [85, 255], x * -170 in [-255, -85]).
func.func @cast_from_u8(%x: tensor<2x3xui8>) -> tensor<2x3xf32> {
  %0 = dlc.cast %x : tensor<2x3xui8> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
func.func @cast_to_i8(%x: tensor<2x3xf32>) -> tensor<2x3xi8> {
  %c = dlc.constant dense<170.0> : tensor<f32>
  %s = dlc.mul %x, %c : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  %0 = dlc.cast %s : tensor<2x3xf32> -> tensor<2x3xi8>
  return %0 : tensor<2x3xi8>
}
func.func @cast_to_u8(%x: tensor<2x3xf32>) -> tensor<2x3xui8> {
  %c = dlc.constant dense<-170.0> : tensor<f32>
  %s = dlc.mul %x, %c : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  %0 = dlc.cast %s : tensor<2x3xf32> -> tensor<2x3xui8>
  return %0 : tensor<2x3xui8>
}
func.func @compare(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xi1> {
  %0 = dlc.compare lt, %a, %b : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
  return %0 : tensor<2x3xi1>
}
func.func @select(%c: tensor<2x3xi1>, %a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
  %0 = dlc.select %c, %a, %b : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
func.func @select_u8(%c: tensor<2x3xi1>, %a: tensor<2x3xui8>, %b: tensor<3xui8>) -> tensor<2x3xui8> {
  %0 = dlc.select %c, %a, %b : (tensor<2x3xi1>, tensor<2x3xui8>, tensor<3xui8>) -> tensor<2x3xui8>
  return %0 : tensor<2x3xui8>
}

// ----- Contraction, convolution, pooling

func.func @conv2d(%x: tensor<1x2x5x5xf32>, %w: tensor<3x2x3x3xf32>, %b: tensor<3xf32>) -> tensor<1x3x3x3xf32> {
  %0 = dlc.conv2d %x, %w, %b {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x2x5x5xf32>, tensor<3x2x3x3xf32>, tensor<3xf32>) -> tensor<1x3x3x3xf32>
  return %0 : tensor<1x3x3x3xf32>
}
func.func @matmul(%a: tensor<2x4x3xf32>, %b: tensor<5x3xf32>) -> tensor<2x4x5xf32> {
  %0 = dlc.matmul %a, %b {transpose_b = true} : (tensor<2x4x3xf32>, tensor<5x3xf32>) -> tensor<2x4x5xf32>
  return %0 : tensor<2x4x5xf32>
}
func.func @avg_pool2d(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32> {
  %0 = dlc.avg_pool2d %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>} : tensor<1x2x4x4xf32> -> tensor<1x2x2x2xf32>
  return %0 : tensor<1x2x2x2xf32>
}
func.func @max_pool2d_tiled(%x: tensor<2x2x4x6xf32>) -> tensor<2x2x2x3xf32> {
  %0 = dlc.max_pool2d %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>} : tensor<2x2x4x6xf32> -> tensor<2x2x2x3xf32>
  return %0 : tensor<2x2x2x3xf32>
}
func.func @max_pool2d(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x3x3xf32> {
  %0 = dlc.max_pool2d %x {kernel = array<i64: 2, 2>, strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>} : tensor<1x2x4x4xf32> -> tensor<1x2x3x3xf32>
  return %0 : tensor<1x2x3x3xf32>
}

// ----- Reductions and normalisation

func.func @reduce_max(%x: tensor<2x3x4xf32>) -> tensor<2x4xf32> {
  %0 = dlc.reduce_max %x {axes = array<i64: 1>} : tensor<2x3x4xf32> -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}
func.func @reduce_mean(%x: tensor<2x3x4xf32>) -> tensor<2x1x1xf32> {
  %0 = dlc.reduce_mean %x {axes = array<i64: 1, 2>, keepdims = true} : tensor<2x3x4xf32> -> tensor<2x1x1xf32>
  return %0 : tensor<2x1x1xf32>
}
func.func @reduce_min(%x: tensor<2x3x4xf32>) -> tensor<2x3xf32> {
  %0 = dlc.reduce_min %x {axes = array<i64: -1>} : tensor<2x3x4xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
func.func @reduce_prod(%x: tensor<2x3x4xf32>) -> tensor<3x4xf32> {
  %0 = dlc.reduce_prod %x {axes = array<i64: 0>} : tensor<2x3x4xf32> -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}
func.func @reduce_sum(%x: tensor<2x3x4xf32>) -> tensor<2x4xf32> {
  %0 = dlc.reduce_sum %x {axes = array<i64: 1>} : tensor<2x3x4xf32> -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}
func.func @layer_norm(%x: tensor<2x3x4xf32>, %g: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<2x3x4xf32> {
  %0 = dlc.layer_norm %x, %g, %b {axis = -1 : i64, epsilon = 1.0e-05 : f64} : (tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}
func.func @log_softmax(%x: tensor<2x5xf32>) -> tensor<2x5xf32> {
  %0 = dlc.log_softmax %x {axis = 1 : i64} : tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}
func.func @rms_norm(%x: tensor<2x3x4xf32>, %g: tensor<3x4xf32>) -> tensor<2x3x4xf32> {
  %0 = dlc.rms_norm %x, %g {axis = 1 : i64, epsilon = 1.0e-06 : f64} : (tensor<2x3x4xf32>, tensor<3x4xf32>) -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}
func.func @softmax(%x: tensor<2x5xf32>) -> tensor<2x5xf32> {
  %0 = dlc.softmax %x {axis = 0 : i64} : tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// ----- Collectives (a group of one rank: the identity; test/unit/oracle/
// SpmdTest.cpp runs them on meshes)

func.func @all_reduce(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = dlc.all_reduce %x {kind = #dlc<collective_reduction sum>, mesh_axes = ["data"], group_size = 1 : i64} : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
func.func @all_gather(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = dlc.all_gather %x {axis = 0 : i64, mesh_axes = ["data"], group_size = 1 : i64} : tensor<2x3xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
func.func @reduce_scatter(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = dlc.reduce_scatter %x {kind = #dlc<collective_reduction avg>, axis = 1 : i64, mesh_axes = ["data"], group_size = 1 : i64} : tensor<2x3xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
func.func @all_to_all(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = dlc.all_to_all %x {split_axis = 0 : i64, concat_axis = 1 : i64, mesh_axes = ["model"], group_size = 1 : i64} : tensor<2x3xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
func.func @broadcast(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = dlc.broadcast %x {root = 0 : i64, mesh_axes = ["data"], group_size = 1 : i64} : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
func.func @shard(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = dlc.shard %x {axis = 0 : i64, mesh_axes = ["data"], group_size = 1 : i64} : tensor<2x3xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
func.func @send(%x: tensor<2x3xf32>) {
  dlc.send %x {shift = 1 : i64, mesh_axes = ["pipe"], group_size = 2 : i64} : tensor<2x3xf32>
  return
}
func.func @recv() -> tensor<2x3xf32> {
  %0 = dlc.recv {shift = 1 : i64, mesh_axes = ["pipe"], group_size = 2 : i64} : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// ----- Data movement

func.func @broadcast_to(%x: tensor<3xf32>) -> tensor<2x3xf32> {
  %0 = dlc.broadcast_to %x : tensor<3xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
func.func @concat(%a: tensor<2x3xf32>, %b: tensor<2x1xf32>) -> tensor<2x4xf32> {
  %0 = dlc.concat %a, %b {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}
func.func @concat_i8(%a: tensor<2x3xi8>, %b: tensor<2x1xi8>) -> tensor<2x4xi8> {
  %0 = dlc.concat %a, %b {axis = 1 : i64} : (tensor<2x3xi8>, tensor<2x1xi8>) -> tensor<2x4xi8>
  return %0 : tensor<2x4xi8>
}
func.func @embedding(%t: tensor<4x3xf32>, %ids: tensor<2x2xi32>) -> tensor<2x2x3xf32> {
  %0 = dlc.embedding %t, %ids : (tensor<4x3xf32>, tensor<2x2xi32>) -> tensor<2x2x3xf32>
  return %0 : tensor<2x2x3xf32>
}
func.func @gather(%x: tensor<2x4xf32>, %i: tensor<3xi64>) -> tensor<2x3xf32> {
  %0 = dlc.gather %x, %i {axis = 1 : i64} : (tensor<2x4xf32>, tensor<3xi64>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
func.func @gather_u8(%x: tensor<2x4xui8>, %i: tensor<3xi64>) -> tensor<2x3xui8> {
  %0 = dlc.gather %x, %i {axis = 1 : i64} : (tensor<2x4xui8>, tensor<3xi64>) -> tensor<2x3xui8>
  return %0 : tensor<2x3xui8>
}
func.func @pad(%x: tensor<2x3xf32>) -> tensor<2x6xf32> {
  %0 = dlc.pad %x {low = array<i64: 0, 1>, high = array<i64: 0, 2>, value = 0.5 : f64} : tensor<2x3xf32> -> tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
}
func.func @pad_i8(%x: tensor<2x3xi8>) -> tensor<2x6xi8> {
  %0 = dlc.pad %x {low = array<i64: 0, 1>, high = array<i64: 0, 2>, value = -3.0 : f64} : tensor<2x3xi8> -> tensor<2x6xi8>
  return %0 : tensor<2x6xi8>
}
func.func @pad_u8(%x: tensor<2x3xui8>) -> tensor<3x3xui8> {
  %0 = dlc.pad %x {low = array<i64: 1, 0>, high = array<i64: 0, 0>, value = 200.0 : f64} : tensor<2x3xui8> -> tensor<3x3xui8>
  return %0 : tensor<3x3xui8>
}
func.func @reshape(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %0 = dlc.reshape %x : tensor<2x3xf32> -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}
func.func @slice(%x: tensor<4x8xf32>) -> tensor<4x3xf32> {
  %0 = dlc.slice %x {starts = array<i64: 0, 2>, limits = array<i64: 4, 8>, strides = array<i64: 1, 2>} : tensor<4x8xf32> -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}
func.func @transpose(%x: tensor<2x3x4xf32>) -> tensor<4x2x3xf32> {
  %0 = dlc.transpose %x {perm = array<i64: 2, 0, 1>} : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
  return %0 : tensor<4x2x3xf32>
}
func.func @transpose_u8(%x: tensor<2x3x4xui8>) -> tensor<4x2x3xui8> {
  %0 = dlc.transpose %x {perm = array<i64: 2, 0, 1>} : tensor<2x3x4xui8> -> tensor<4x2x3xui8>
  return %0 : tensor<4x2x3xui8>
}

// ----- Losses

func.func @cross_entropy(%logits: tensor<4x3xf32>, %labels: tensor<4xi32>) -> tensor<f32> {
  %0 = dlc.cross_entropy %logits, %labels : (tensor<4x3xf32>, tensor<4xi32>) -> tensor<f32>
  return %0 : tensor<f32>
}
// Label smoothing, and the positions labelled 1 ignored (not counted by
// the mean).
func.func @cross_entropy_smoothed(%logits: tensor<8x3xf32>, %labels: tensor<8xi32>) -> tensor<f32> {
  %0 = dlc.cross_entropy %logits, %labels {label_smoothing = 0.2 : f64, ignore_index = 1 : i64} : (tensor<8x3xf32>, tensor<8xi32>) -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @cross_entropy_smoothed_each(%logits: tensor<2x4x3xf32>, %labels: tensor<2x4xi64>) -> tensor<2x4xf32> {
  %0 = dlc.cross_entropy %logits, %labels {reduction = #dlc<reduction none>, label_smoothing = 0.2 : f64, ignore_index = 0 : i64} : (tensor<2x4x3xf32>, tensor<2x4xi64>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}
func.func @mse(%p: tensor<4x3xf32>, %t: tensor<4x3xf32>) -> tensor<f32> {
  %0 = dlc.mse %p, %t : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// ----- Kernels: a fusion region and its terminator

func.func @fusion(%x: tensor<4x3xf32>, %b: tensor<3xf32>) -> tensor<4x3xf32> {
  %0 = dlc.fusion %x, %b {kind = "elementwise"} : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32> {
  ^bb0(%a: tensor<4x3xf32>, %c: tensor<3xf32>):
    %1 = dlc.add %a, %c : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
    %2 = dlc.relu %1 : tensor<4x3xf32>
    dlc.yield %2 : tensor<4x3xf32>
  }
  return %0 : tensor<4x3xf32>
}
