// RUN: dlc-opt %s --dlc-tile=target=cuda:sm_75 --verify-diagnostics

// expected-error @+1 {{dlc-tile: unknown CUDA architecture 'sm_75' (known: sm_80, sm_90)}}
func.func @unknown_architecture(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = dlc.tanh %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}
