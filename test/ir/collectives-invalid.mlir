// RUN: dlc-opt %s --split-input-file --verify-diagnostics

// The collectives' verifier rules: shape rules against the stated group
// size, the axes, and the module's mesh.

func.func @gather_result_shape(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{'dlc.all_gather' op result must be 'tensor<16x4xf32>' for an operand 'tensor<8x4xf32>' and a group of 2, got 'tensor<8x4xf32>'}}
  %0 = dlc.all_gather %x {axis = 0 : i64, mesh_axes = ["data"], group_size = 2 : i64} : tensor<8x4xf32> -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

func.func @scatter_does_not_divide(%x: tensor<6x4xf32>) -> tensor<1x4xf32> {
  // expected-error @+1 {{'dlc.reduce_scatter' op splits dimension 0 of 'tensor<6x4xf32>' into 4 blocks, which does not divide it}}
  %0 = dlc.reduce_scatter %x {kind = #dlc<collective_reduction sum>, axis = 0 : i64, mesh_axes = ["data"], group_size = 4 : i64} : tensor<6x4xf32> -> tensor<1x4xf32>
  return %0 : tensor<1x4xf32>
}

// -----

func.func @axis_out_of_range(%x: tensor<8x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'dlc.shard' op axis 2 is out of range for 'tensor<8x4xf32>'}}
  %0 = dlc.shard %x {axis = 2 : i64, mesh_axes = ["data"], group_size = 2 : i64} : tensor<8x4xf32> -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @root_outside_the_group(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'dlc.broadcast' op root 2 is not a rank of a group of 2}}
  %0 = dlc.broadcast %x {root = 2 : i64, mesh_axes = ["data"], group_size = 2 : i64} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @axis_named_twice(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'dlc.all_reduce' op names mesh axis 'data' twice}}
  %0 = dlc.all_reduce %x {kind = #dlc<collective_reduction max>, mesh_axes = ["data", "data"], group_size = 4 : i64} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

module attributes {dlc.mesh = "data=2,model=2"} {
  func.func @not_an_axis_of_the_mesh(%x: tensor<4xf32>) -> tensor<4xf32> {
    // expected-error @+1 {{'dlc.all_reduce' op names mesh axis 'pipe', which the mesh data=2,model=2 does not have}}
    %0 = dlc.all_reduce %x {kind = #dlc<collective_reduction sum>, mesh_axes = ["pipe"], group_size = 2 : i64} : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}

// -----

module attributes {dlc.mesh = "data=2,model=2"} {
  func.func @group_size_disagrees(%x: tensor<4xf32>) -> tensor<4xf32> {
    // expected-error @+1 {{'dlc.all_reduce' op has group_size 2, but its axes span 4 ranks of the mesh data=2,model=2}}
    %0 = dlc.all_reduce %x {kind = #dlc<collective_reduction sum>, mesh_axes = ["data", "model"], group_size = 2 : i64} : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}

// -----

func.func @all_to_all_split(%x: tensor<3x4xf32>) -> tensor<3x4xf32> {
  // expected-error @+1 {{'dlc.all_to_all' op splits dimension 0 of 'tensor<3x4xf32>' into 2 blocks, which does not divide it}}
  %0 = dlc.all_to_all %x {split_axis = 0 : i64, concat_axis = 0 : i64, mesh_axes = ["model"], group_size = 2 : i64} : tensor<3x4xf32> -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

func.func @send_shift_zero(%x: tensor<4xf32>) {
  // expected-error @+1 {{'dlc.send' op shift 0 does not reach another rank of a group of 4}}
  dlc.send %x {shift = 0 : i64, mesh_axes = ["pipe"], group_size = 4 : i64} : tensor<4xf32>
  return
}

// -----

func.func @recv_shift_past_group() -> tensor<4xf32> {
  // expected-error @+1 {{'dlc.recv' op shift -4 does not reach another rank of a group of 4}}
  %0 = dlc.recv {shift = -4 : i64, mesh_axes = ["pipe"], group_size = 4 : i64} : tensor<4xf32>
  return %0 : tensor<4xf32>
}
