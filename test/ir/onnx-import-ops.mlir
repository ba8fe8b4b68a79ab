// RUN: dlc-opt %s --split-input-file | dlc-opt --split-input-file | FileCheck %s

// The ops and the parameter initialiser the ONNX importer added: the math
// functions (erf, floor, ceil, round, sin, cos, atan), reduce_prod, and
// `data` parameters, which survive printing and parsing back.

// CHECK-LABEL: func.func @math
func.func @math(%x: tensor<2x3xf32>) {
  // CHECK: dlc.erf %{{.+}} : tensor<2x3xf32>
  %0 = dlc.erf %x : tensor<2x3xf32>
  // CHECK: dlc.floor %{{.+}} : tensor<2x3xf32>
  %1 = dlc.floor %x : tensor<2x3xf32>
  // CHECK: dlc.ceil %{{.+}} : tensor<2x3xf32>
  %2 = dlc.ceil %x : tensor<2x3xf32>
  // CHECK: dlc.round %{{.+}} : tensor<2x3xf32>
  %3 = dlc.round %x : tensor<2x3xf32>
  // CHECK: dlc.sin %{{.+}} : tensor<2x3xf32>
  %4 = dlc.sin %x : tensor<2x3xf32>
  // CHECK: dlc.cos %{{.+}} : tensor<2x3xf32>
  %5 = dlc.cos %x : tensor<2x3xf32>
  // CHECK: dlc.atan %{{.+}} : tensor<2x3xf32>
  %6 = dlc.atan %x : tensor<2x3xf32>
  // CHECK: dlc.reduce_prod %{{.+}} {axes = array<i64: 1>} : tensor<2x3xf32> -> tensor<2xf32>
  %7 = dlc.reduce_prod %x {axes = array<i64: 1>} : tensor<2x3xf32> -> tensor<2xf32>
  return
}

// -----

// CHECK-LABEL: func.func @data_params
func.func @data_params() {
  // CHECK: dlc.param "b" {init = {kind = "data", value = dense<[5.000000e-01, -1.000000e+00]> : tensor<2xf32>}} : tensor<2xf32>
  %b = dlc.param "b" {init = {kind = "data", value = dense<[0.5, -1.0]> : tensor<2xf32>}} : tensor<2xf32>
  // CHECK: dlc.param "ids" {init = {kind = "data", value = dense<[1, 2, 3]> : tensor<3xi64>}} : tensor<3xi64>
  %i = dlc.param "ids" {init = {kind = "data", value = dense<[1, 2, 3]> : tensor<3xi64>}} : tensor<3xi64>
  return
}
