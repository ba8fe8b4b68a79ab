// RUN: dlc-opt %s | dlc-opt | FileCheck %s

// Regression: shape inference runs while the custom form is parsed, before
// default-valued attributes exist, so it must read `axis` through
// getAxisAttr() with the default -1 (the printer elides `axis = -1`).

// CHECK-LABEL: func.func @softmax_default_axis
//  CHECK-SAME:   (%[[X:[^:]+]]: tensor<4x8xf32>)
//       CHECK:   %[[P:.+]] = dlc.softmax %[[X]] : tensor<4x8xf32>
//       CHECK:   %[[Q:.+]] = dlc.softmax %[[P]] : tensor<4x8xf32>
//       CHECK:   return %[[Q]]
func.func @softmax_default_axis(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = dlc.softmax %x : tensor<4x8xf32>
  %1 = dlc.softmax %0 {axis = -1 : i64} : tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @log_softmax_default_axis
//  CHECK-SAME:   (%[[X:[^:]+]]: tensor<4x8xf32>)
//       CHECK:   %[[L:.+]] = dlc.log_softmax %[[X]] : tensor<4x8xf32>
//       CHECK:   return %[[L]]
func.func @log_softmax_default_axis(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = dlc.log_softmax %x {axis = -1 : i64} : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}
