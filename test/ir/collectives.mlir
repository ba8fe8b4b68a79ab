// RUN: dlc-opt %s --split-input-file | dlc-opt --split-input-file | FileCheck %s

// The collectives print and parse back, and agree with the module's mesh.

// CHECK-LABEL: func.func @megatron_mlp
// CHECK: dlc.shard %{{.*}} {axis = 1 : i64, group_size = 2 : i64, mesh_axes = ["model"]} : tensor<16x12xf32> -> tensor<16x6xf32>
// CHECK: dlc.all_reduce %{{.*}} {group_size = 2 : i64, kind = #dlc<collective_reduction sum>, mesh_axes = ["model"]} : tensor<8x4xf32>
module attributes {dlc.mesh = "data=2,model=2"} {
  func.func @megatron_mlp(%x: tensor<8x16xf32>, %w1: tensor<16x12xf32>, %w2: tensor<12x4xf32>) -> tensor<8x4xf32> {
    %w1s = dlc.shard %w1 {axis = 1 : i64, mesh_axes = ["model"], group_size = 2 : i64} : tensor<16x12xf32> -> tensor<16x6xf32>
    %w2s = dlc.shard %w2 {axis = 0 : i64, mesh_axes = ["model"], group_size = 2 : i64} : tensor<12x4xf32> -> tensor<6x4xf32>
    %h = dlc.matmul %x, %w1s : (tensor<8x16xf32>, tensor<16x6xf32>) -> tensor<8x6xf32>
    %a = dlc.relu %h : tensor<8x6xf32>
    %p = dlc.matmul %a, %w2s : (tensor<8x6xf32>, tensor<6x4xf32>) -> tensor<8x4xf32>
    %y = dlc.all_reduce %p {kind = #dlc<collective_reduction sum>, mesh_axes = ["model"], group_size = 2 : i64} : tensor<8x4xf32>
    return %y : tensor<8x4xf32>
  }
}

// -----

// CHECK-LABEL: func.func @every_collective
// CHECK: dlc.all_gather
// CHECK: dlc.reduce_scatter
// CHECK: dlc.all_to_all
// CHECK: dlc.broadcast
module attributes {dlc.mesh = "data=4"} {
  func.func @every_collective(%x: tensor<8x4xf32>) -> (tensor<32x4xf32>, tensor<2x4xf32>, tensor<2x16xf32>, tensor<8x4xf32>) {
    %0 = dlc.all_gather %x {axis = 0 : i64, mesh_axes = ["data"], group_size = 4 : i64} : tensor<8x4xf32> -> tensor<32x4xf32>
    %1 = dlc.reduce_scatter %x {kind = #dlc<collective_reduction avg>, axis = 0 : i64, mesh_axes = ["data"], group_size = 4 : i64} : tensor<8x4xf32> -> tensor<2x4xf32>
    %2 = dlc.all_to_all %x {split_axis = 0 : i64, concat_axis = 1 : i64, mesh_axes = ["data"], group_size = 4 : i64} : tensor<8x4xf32> -> tensor<2x16xf32>
    %3 = dlc.broadcast %x {root = 3 : i64, mesh_axes = ["data"], group_size = 4 : i64} : tensor<8x4xf32>
    return %0, %1, %2, %3 : tensor<32x4xf32>, tensor<2x4xf32>, tensor<2x16xf32>, tensor<8x4xf32>
  }
}

// -----

// A pipeline hand-over: each stage sends to the next, receives from the one
// before (SPMD over 'pipe').
// CHECK-LABEL: func.func @pipeline_handover
// CHECK: dlc.send %{{.*}} {group_size = 4 : i64, mesh_axes = ["pipe"], shift = 1 : i64} : tensor<8x16xf32>
// CHECK: dlc.recv {group_size = 4 : i64, mesh_axes = ["pipe"], shift = 1 : i64} : tensor<8x16xf32>
func.func @pipeline_handover(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  dlc.send %x {shift = 1 : i64, mesh_axes = ["pipe"], group_size = 4 : i64} : tensor<8x16xf32>
  %0 = dlc.recv {shift = 1 : i64, mesh_axes = ["pipe"], group_size = 4 : i64} : tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}
